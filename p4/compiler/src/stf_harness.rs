//! `p4-to-rust stf DIR`: runs every `NAME.p4` + `NAME.stf` pair of any
//! folder through the compiler and the STF runner (`dataplane::stf::run`,
//! which drives the daemon's switch core), for users' own test suites.
//!
//! How: every program is compiled (a progress bar shows it) into one
//! generated cargo crate under `target/p4-stf-harness/` of this workspace,
//! which depends on `p4-target` and on `dataplane` (without its default
//! `roce-program` feature, so the harness does not build this compiler) by
//! absolute path and is its own cargo workspace. It is built once with `cargo build` (its own target folder,
//! so the outer build's lock is not needed) and run; the harness binary
//! reads each `.stf` at run time, prints one line per case (and the
//! report of each failure) and finally `N passed, N failed`, which
//! [`run_dir`] returns. A program the compiler rejects is a failed case
//! whose report is the rendered diagnostics. Files are only rewritten when
//! their content changes, so a second run rebuilds only what changed.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};

use crate::CompileOptions;

/// One `NAME.p4` / `NAME.stf` pair.
#[derive(Clone, Debug)]
struct Case {
    name: String,
    p4: PathBuf,
    stf: PathBuf,
}

/// The pairs in `dir` whose name contains `filter`, sorted by name.
fn find_cases(dir: &Path, filter: Option<&str>) -> anyhow::Result<Vec<Case>> {
    let mut cases = Vec::new();
    let entries = fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let p4 = entry?.path();
        if p4.extension().is_none_or(|e| e != "p4") {
            continue;
        }
        let stf = p4.with_extension("stf");
        let Some(name) = p4.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if !stf.exists() || filter.is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let p4 = p4
            .canonicalize()
            .with_context(|| format!("resolving {}", p4.display()))?;
        let stf = stf
            .canonicalize()
            .with_context(|| format!("resolving {}", stf.display()))?;
        cases.push(Case {
            name: name.to_string(),
            p4,
            stf,
        });
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(cases)
}

/// A Rust identifier made from a file stem.
fn ident(name: &str) -> String {
    format!("p4_{}", crate::proc::namer::lower_snake(name))
}

/// Writes `text` to `path` unless it already holds exactly that.
fn write_if_changed(path: &Path, text: &str) -> anyhow::Result<()> {
    if fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// Compiles one program: the generated Rust, or the rendered diagnostics
/// (a compiler panic is reported as such, not propagated).
/// The generated Rust and, for a program with user-defined externs, the
/// implementation `NAME.externs.rs` next to it (without one the case fails,
/// naming each extern).
fn compile_case(p4: &Path, opts: &CompileOptions) -> Result<(String, Option<PathBuf>), String> {
    let externs_rs = p4.with_extension("externs.rs");
    match std::panic::catch_unwind(|| crate::compile_with_sources(p4, opts)) {
        Ok((Ok(out), _)) if out.user_externs.is_empty() => Ok((out.rust, None)),
        Ok((Ok(out), _)) if externs_rs.exists() => Ok((out.rust, Some(externs_rs))),
        Ok((Ok(out), _)) => Err(crate::back::rust::missing_externs_message(
            &p4.display().to_string(),
            &out.user_externs,
            &format!("write it in {}", externs_rs.display()),
        )),
        Ok((Err(diags), sources)) => Err(crate::render(&diags, &sources)),
        Err(panic) => Err(format!(
            "the compiler panicked: {}",
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        )),
    }
}

/// The harness crate's folder: `target/p4-stf-harness` of this workspace.
fn harness_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/p4-stf-harness")
}

/// Takes the harness folder for this run: two runs at once would each
/// rewrite the other's cases between its generation and its build, and one
/// would print the other's results. A second run waits, saying so.
fn lock_harness(crate_dir: &Path) -> anyhow::Result<fs::File> {
    let path = crate_dir.join(".lock");
    let file = fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => return Ok(file),
        Err(fs::TryLockError::WouldBlock) => eprintln!(
            "waiting for another `p4-to-rust stf` run using {}...",
            crate_dir.display()
        ),
        Err(fs::TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("locking {}", path.display()));
        }
    }
    file.lock()
        .with_context(|| format!("locking {}", path.display()))?;
    Ok(file)
}

/// A crate of this workspace, by its folder relative to the compiler's.
fn workspace_crate_dir(rel: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    dir.canonicalize().unwrap_or(dir)
}

const MAIN_PRELUDE: &str = r#"//! Generated by `p4-to-rust stf`. Do not edit.
use dataplane::stf::StfReport;

type Run = Result<fn(&str, bool) -> StfReport, &'static str>;

fn main() {
    let (mut passed, mut failed) = (0usize, 0usize);
    // `p4-to-rust stf --trace CASE`: print the packet traces of matching cases.
    let trace = std::env::var("P4_STF_TRACE").ok();
    for (name, stf_path, program) in CASES {
        let traced = trace.as_deref().is_some_and(|t| name.contains(t));
        let outcome = match program {
            Err(diagnostics) => Err(format!("does not compile:\n{diagnostics}")),
            Ok(run) => match std::fs::read_to_string(stf_path) {
                Err(e) => Err(format!("cannot read {stf_path}: {e}")),
                Ok(stf) => match std::panic::catch_unwind(move || run(&stf, traced)) {
                    Ok(report) => {
                        for t in &report.traces {
                            println!("      trace of {name}:");
                            for line in t.lines() {
                                println!("        {line}");
                            }
                        }
                        if report.passed { Ok(()) } else { Err(report.to_string()) }
                    }
                    Err(panic) => Err(format!(
                        "the program panicked: {}",
                        panic
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default()
                    )),
                },
            },
        };
        match outcome {
            Ok(()) => {
                passed += 1;
                println!("PASS  {name}");
            }
            Err(why) => {
                failed += 1;
                println!("FAIL  {name}");
                for line in why.lines() {
                    println!("      {line}");
                }
            }
        }
    }
    println!("{passed} passed, {failed} failed");
}
"#;

/// Compiles and runs every STF pair in `dir` (those whose name contains
/// `filter`), printing one line per case and `N passed, N failed`;
/// returns `(passed, failed)`.
pub fn run_dir(
    dir: &Path,
    opts: &CompileOptions,
    filter: Option<&str>,
) -> anyhow::Result<(usize, usize)> {
    run_dir_traced(dir, opts, filter, None)
}

/// [`run_dir`], also printing the packet traces of every case whose name
/// contains `trace` (under its PASS/FAIL line).
pub fn run_dir_traced(
    dir: &Path,
    opts: &CompileOptions,
    filter: Option<&str>,
    trace: Option<&str>,
) -> anyhow::Result<(usize, usize)> {
    let cases = find_cases(dir, filter)?;
    if cases.is_empty() {
        bail!("no NAME.p4 with a NAME.stf in {}", dir.display());
    }
    let crate_dir = harness_dir();
    let src = crate_dir.join("src");
    fs::create_dir_all(&src).with_context(|| format!("creating {}", src.display()))?;
    // Held until this run has printed its results (dropped on return).
    let _harness = lock_harness(&crate_dir)?;

    let bar = ProgressBar::new(cases.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("compiling P4 {bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut modules = String::new();
    let mut table = String::from("static CASES: &[(&str, &str, Run)] = &[\n");
    for case in &cases {
        bar.set_message(case.name.clone());
        let id = ident(&case.name);
        let stf = case.stf.display().to_string();
        match compile_case(&case.p4, opts) {
            Ok((rust, externs)) => {
                write_if_changed(&src.join(format!("{id}.rs")), &rust)?;
                let (externs_mod, program) = match externs {
                    Some(path) => {
                        let code = fs::read_to_string(&path)
                            .with_context(|| format!("reading {}", path.display()))?;
                        write_if_changed(&src.join(format!("{id}.externs.rs")), &code)?;
                        (
                            format!(
                                "\n    pub mod externs {{\n        include!(\"{id}.externs.rs\");\n    }}"
                            ),
                            format!("{id}::Program::<{id}::externs::UserExterns>::new()"),
                        )
                    }
                    None => (String::new(), format!("{id}::Program::new()")),
                };
                let _ = writeln!(
                    modules,
                    "#[allow(warnings, clippy::all)]\nmod {id} {{\n    include!(\"{id}.rs\");{externs_mod}\n}}\nfn run_{id}(stf: &str, trace: bool) -> StfReport {{\n    if trace {{ dataplane::stf::run_traced({program}, stf) }} else {{ dataplane::stf::run({program}, stf) }}\n}}"
                );
                let _ = writeln!(table, "    ({:?}, {stf:?}, Ok(run_{id})),", case.name);
            }
            Err(diagnostics) => {
                let _ = writeln!(
                    table,
                    "    ({:?}, {stf:?}, Err({diagnostics:?})),",
                    case.name
                );
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    table.push_str("];\n");
    write_if_changed(
        &src.join("main.rs"),
        &format!("{MAIN_PRELUDE}\n{modules}\n{table}"),
    )?;
    let target = workspace_crate_dir("../target");
    let dataplane = workspace_crate_dir("../../dataplane");
    write_if_changed(
        &crate_dir.join("Cargo.toml"),
        &format!(
            "# Generated by `p4-to-rust stf`. Do not edit.\n[package]\nname = \"p4-stf-harness\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\np4-target = {{ path = {:?} }}\ndataplane = {{ path = {:?}, default-features = false }}\n\n[workspace]\n",
            target.display().to_string(),
            dataplane.display().to_string()
        ),
    )?;

    eprintln!("building the harness for {} programs...", cases.len());
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = Command::new(&cargo)
        .arg("build")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(crate_dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", crate_dir.join("target"))
        .status()
        .with_context(|| format!("running {cargo}"))?;
    if !build.success() {
        bail!(
            "the generated harness in {} did not build",
            crate_dir.display()
        );
    }
    let exe = crate_dir.join("target/debug/p4-stf-harness");
    let mut run = Command::new(&exe);
    if let Some(t) = trace {
        run.env("P4_STF_TRACE", t);
    }
    let out = run
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    if !out.status.success() {
        bail!("the harness exited with {}", out.status);
    }
    parse_summary(&stdout)
        .with_context(|| "the harness printed no `N passed, N failed` line".to_string())
}

/// Reads the final `N passed, N failed` line.
fn parse_summary(stdout: &str) -> Option<(usize, usize)> {
    let last = stdout.lines().rev().find(|l| l.ends_with(" failed"))?;
    let (p, f) = last.split_once(" passed, ")?;
    Some((
        p.trim().parse().ok()?,
        f.strip_suffix(" failed")?.trim().parse().ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_line_is_parsed() {
        assert_eq!(
            parse_summary("PASS  a\nFAIL  b\n1 passed, 1 failed\n"),
            Some((1, 1))
        );
        assert_eq!(parse_summary("nothing"), None);
    }

    #[test]
    fn identifiers_are_safe() {
        assert_eq!(ident("my-test.v2"), "p4_my_test_v2");
        assert_eq!(ident("Clone"), "p4_clone");
    }

    #[test]
    fn cases_need_both_files_and_match_the_filter() {
        let dir = std::env::temp_dir().join(format!("stf-harness-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        for f in ["a.p4", "a.stf", "b.p4", "c.stf", "ab.p4", "ab.stf"] {
            fs::write(dir.join(f), "").unwrap();
        }
        let names = |filter| {
            find_cases(&dir, filter)
                .unwrap()
                .into_iter()
                .map(|c| c.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(names(None), ["a", "ab"]);
        assert_eq!(names(Some("b")), ["ab"]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
