//! Compiles `p4/programs/basic_router.p4` with our compiler at build time,
//! twice: as every build gets it, and without packet-trace points, so the
//! bench can measure what the points cost an untraced packet.

use std::path::{Path, PathBuf};

fn compile(program: &Path, without_trace_points: bool, out: &Path) {
    let opts = p4_compiler::CompileOptions {
        without_trace_points,
        ..Default::default()
    };
    let (result, sources) = p4_compiler::compile_with_sources(program, &opts);
    let compiled = result.unwrap_or_else(|d| {
        eprintln!("{}", p4_compiler::render(&d, &sources));
        panic!("basic_router.p4 does not compile");
    });
    std::fs::write(out, compiled.rust).expect("write generated Rust");
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let program = manifest.join("../programs/basic_router.p4");
    println!("cargo:rerun-if-changed={}", program.display());
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    compile(&program, false, &out_dir.join("basic_router.rs"));
    compile(&program, true, &out_dir.join("basic_router_untraced.rs"));
}
