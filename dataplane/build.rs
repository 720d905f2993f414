//! With the `roce-program` feature (on by default): compiles
//! `p4/programs/roce_switch.p4`, the switch's forwarding program, into Rust
//! with our own compiler; `src/roce.rs` includes the result. The programs
//! under `tests/programs/` are compiled the same way for the integration
//! tests (each includes `$OUT_DIR/NAME.rs` itself). Without the feature it
//! does nothing, so crates that only need the switch core do not build the
//! compiler.

#[cfg(feature = "roce-program")]
use std::path::{Path, PathBuf};

#[cfg(not(feature = "roce-program"))]
fn main() {}

#[cfg(feature = "roce-program")]
fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    println!(
        "cargo:rerun-if-changed={}",
        manifest.join("../p4/include").display()
    );
    compile(
        &manifest.join("../p4/programs/roce_switch.p4"),
        &out_dir,
        true,
    );
    compile(
        &manifest.join("tests/programs/l2_learn.p4"),
        &out_dir,
        false,
    );
}

/// Writes `NAME.rs` (and, with `p4info`, `NAME.p4info.txtpb` / `.bin`).
#[cfg(feature = "roce-program")]
fn compile(program: &Path, out_dir: &Path, p4info: bool) {
    println!("cargo:rerun-if-changed={}", program.display());
    let stem = program
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("program file name");
    let opts = p4_compiler::CompileOptions::default();
    let (result, sources) = p4_compiler::compile_with_sources(program, &opts);
    let out = match result {
        Ok(out) => out,
        Err(diagnostics) => {
            // Cargo shows a build script's stderr when it fails.
            eprintln!("{}", p4_compiler::render(&diagnostics, &sources));
            panic!("{stem}.p4 does not compile");
        }
    };
    std::fs::write(out_dir.join(format!("{stem}.rs")), out.rust).expect("write generated Rust");
    if p4info {
        std::fs::write(
            out_dir.join(format!("{stem}.p4info.txtpb")),
            out.p4info_text,
        )
        .expect("write P4Info");
        std::fs::write(
            out_dir.join(format!("{stem}.p4info.bin")),
            out.p4info_binary,
        )
        .expect("write P4Info");
    }
}
