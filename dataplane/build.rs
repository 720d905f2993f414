//! Compiles `p4/programs/roce_switch.p4`, the switch's forwarding program,
//! into Rust with our own compiler; `src/roce.rs` includes the result.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let program = manifest.join("../p4/programs/roce_switch.p4");
    println!("cargo:rerun-if-changed={}", program.display());
    println!(
        "cargo:rerun-if-changed={}",
        manifest.join("../p4/include").display()
    );

    let opts = p4_compiler::CompileOptions::default();
    let (result, sources) = p4_compiler::compile_with_sources(&program, &opts);
    let out = match result {
        Ok(out) => out,
        Err(diagnostics) => {
            // Cargo shows a build script's stderr when it fails.
            eprintln!("{}", p4_compiler::render(&diagnostics, &sources));
            panic!("roce_switch.p4 does not compile");
        }
    };
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out_dir.join("roce_switch.rs"), out.rust).expect("write generated Rust");
    std::fs::write(out_dir.join("roce_switch.p4info.txtpb"), out.p4info_text)
        .expect("write P4Info");
    std::fs::write(out_dir.join("roce_switch.p4info.bin"), out.p4info_binary)
        .expect("write P4Info");
}
