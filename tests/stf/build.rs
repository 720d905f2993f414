//! Compiles every `NAME.p4` of this folder with `p4_compiler::compile`
//! into `$OUT_DIR/NAME.rs` and writes `$OUT_DIR/registry.rs`, which lists
//! one case per program. A program the compiler rejects (or that makes the
//! compiler panic) becomes a case whose failure is the rendered
//! diagnostics; the build itself does not fail for it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs};

fn main() {
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed={}", dir.display());
    println!(
        "cargo:rerun-if-changed={}",
        dir.join("KNOWN_FAILURES").display()
    );
    // Programs here may #include the switch program and the architecture.
    for included in ["../../p4/programs", "../../p4/include"] {
        println!("cargo:rerun-if-changed={}", dir.join(included).display());
    }

    let mut programs: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("read the corpus folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    programs.sort();

    let mut modules = String::new();
    let mut cases = String::new();
    for p4 in &programs {
        let name = p4
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let stf = p4.with_extension("stf");
        println!("cargo:rerun-if-changed={}", p4.display());
        println!("cargo:rerun-if-changed={}", stf.display());
        let stf_lit = format!("{:?}", stf.display().to_string());
        let stf_expr = if stf.exists() {
            format!("include_str!({stf_lit})")
        } else {
            "\"\"".to_string()
        };
        // A program with user-defined externs takes their implementation
        // from `NAME.externs.rs`, a module inside the program's module.
        let externs_rs = p4.with_extension("externs.rs");
        println!("cargo:rerun-if-changed={}", externs_rs.display());
        match compile(p4, &externs_rs) {
            Ok((rust, with_externs)) => {
                let file = out.join(format!("{name}.rs"));
                fs::write(&file, rust).expect("write generated Rust");
                let (externs_mod, program) = if with_externs {
                    (
                        format!(
                            "\n    pub mod externs {{\n        include!({:?});\n    }}",
                            externs_rs.display().to_string()
                        ),
                        format!("p4_{name}::Program::<p4_{name}::externs::UserExterns>::new()"),
                    )
                } else {
                    (String::new(), format!("p4_{name}::Program::new()"))
                };
                let _ = writeln!(
                    modules,
                    "#[allow(warnings, clippy::all, missing_docs, unreachable_pub)]\npub mod p4_{name} {{\n    include!({:?});{externs_mod}\n}}",
                    file.display().to_string()
                );
                let _ = writeln!(
                    modules,
                    "fn run_{name}(stf: &str) -> dataplane::stf::StfReport {{\n    dataplane::stf::run({program}, stf)\n}}"
                );
                let _ = writeln!(
                    cases,
                    "    Case {{ name: {name:?}, stf: {stf_expr}, program: Ok(run_{name} as fn(&str) -> dataplane::stf::StfReport) }},"
                );
            }
            Err(diagnostics) => {
                let file = out.join(format!("{name}.diagnostics.txt"));
                fs::write(&file, diagnostics).expect("write diagnostics");
                let _ = writeln!(
                    cases,
                    "    Case {{ name: {name:?}, stf: {stf_expr}, program: Err(include_str!({:?})) }},",
                    file.display().to_string()
                );
            }
        }
    }
    let registry = format!(
        "{modules}\n/// Every corpus case, in name order.\npub static CASES: &[Case] = &[\n{cases}];\n"
    );
    fs::write(out.join("registry.rs"), registry).expect("write registry");
}

/// The generated Rust, or the rendered diagnostics.
/// The generated Rust, and whether it needs the user externs of
/// `externs_rs` (a program that uses some without that file fails here,
/// naming each one).
fn compile(p4: &Path, externs_rs: &Path) -> Result<(String, bool), String> {
    let opts = p4_compiler::CompileOptions::default();
    let result = std::panic::catch_unwind(|| p4_compiler::compile_with_sources(p4, &opts));
    match result {
        Ok((Ok(out), _)) if out.user_externs.is_empty() => Ok((out.rust, false)),
        Ok((Ok(out), _)) if externs_rs.exists() => Ok((out.rust, true)),
        Ok((Ok(out), _)) => Err(p4_compiler::back::rust::missing_externs_message(
            &p4.display().to_string(),
            &out.user_externs,
            &format!("write it in {}", externs_rs.display()),
        )),
        Ok((Err(diags), sources)) => Err(p4_compiler::render(&diags, &sources)),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "(no message)".into());
            Err(format!("the compiler panicked: {msg}"))
        }
    }
}
