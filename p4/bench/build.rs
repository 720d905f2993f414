//! Compiles `p4/programs/basic_router.p4` with our compiler at build time.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let program = manifest.join("../programs/basic_router.p4");
    println!("cargo:rerun-if-changed={}", program.display());
    let (result, sources) =
        p4_compiler::compile_with_sources(&program, &p4_compiler::CompileOptions::default());
    let out = result.unwrap_or_else(|d| {
        eprintln!("{}", p4_compiler::render(&d, &sources));
        panic!("basic_router.p4 does not compile");
    });
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out_dir.join("basic_router.rs"), out.rust).expect("write generated Rust");
}
