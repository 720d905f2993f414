//! Malformed programs and the diagnostics they must produce.
//!
//! Each `tests/errors/*.p4` starts with two pinned lines:
//!
//! ```text
//! // expect-at: tests/errors/NAME.p4:LINE:COL
//! // expect: error[P4E0xxx]: message
//! ```
//!
//! The test parses the file from disk (so `#include "..."` resolves next to
//! it), renders the diagnostics with colour off and checks that the first
//! one has exactly that header, points at exactly that `file:line:column`,
//! and shows the source line with a caret. Run with `P4_BLESS=1` to rewrite
//! the pinned lines from the current output (then review the diff).

use std::path::{Path, PathBuf};

use p4_compiler::front::parse_file;

fn error_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("tests/errors")
        .expect("tests/errors exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "p4"))
        .collect();
    files.sort();
    files
}

struct Outcome {
    at: String,
    header: String,
    rendered: String,
}

fn run(path: &Path) -> Outcome {
    let parsed = parse_file(path, &[]);
    assert!(
        parsed.program.is_none(),
        "{} must be rejected",
        path.display()
    );
    let first = parsed
        .diagnostics
        .iter()
        .find(|d| d.is_error())
        .unwrap_or_else(|| panic!("{}: no error diagnostic", path.display()));
    let rendered = first.render(&parsed.sources, false);
    let header = rendered.lines().next().unwrap_or("").to_owned();
    let at = first
        .primary_span()
        .map(|s| parsed.sources.location(s))
        .unwrap_or_default();
    Outcome {
        at,
        header,
        rendered,
    }
}

fn pinned(text: &str, key: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .map(|s| s.trim().to_owned())
}

#[test]
fn malformed_programs_give_pinned_diagnostics() {
    let bless = std::env::var_os("P4_BLESS").is_some();
    let files = error_files();
    assert!(files.len() >= 22, "only {} error programs", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable");
        let out = run(path);
        if bless {
            // Twice: inserting the pinned lines moves the error down.
            for _ in 0..2 {
                let text = std::fs::read_to_string(path).expect("readable");
                let out = run(path);
                let body: Vec<&str> = text
                    .lines()
                    .filter(|l| !l.starts_with("// expect"))
                    .collect();
                let mut new = format!("{}\n", body.first().copied().unwrap_or(""));
                new.push_str(&format!(
                    "// expect-at: {}\n// expect: {}\n",
                    out.at, out.header
                ));
                for l in body.iter().skip(1) {
                    new.push_str(l);
                    new.push('\n');
                }
                std::fs::write(path, new).expect("writable");
            }
            continue;
        }
        let (Some(at), Some(header)) =
            (pinned(&text, "// expect-at:"), pinned(&text, "// expect:"))
        else {
            failures.push(format!(
                "{}: no pinned expectation; got\n{}",
                path.display(),
                out.rendered
            ));
            continue;
        };
        if out.at != at || out.header != header {
            failures.push(format!(
                "{}:\n  expected {at}: {header}\n  got      {}: {}\n{}",
                path.display(),
                out.at,
                out.header,
                out.rendered
            ));
            continue;
        }
        // The snippet must show `file:line:column`, the line and a caret.
        if !out.rendered.contains(&format!("┌─ {at}")) || !out.rendered.contains('^') {
            failures.push(format!(
                "{}: snippet missing\n{}",
                path.display(),
                out.rendered
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn error_inside_an_include_names_the_included_file_and_line() {
    let out = run(Path::new("tests/errors/error_in_included_file.p4"));
    assert_eq!(out.at, "tests/errors/include/bad_header.p4:4:13");
    assert!(
        out.rendered.contains("4 │     bit<48> src"),
        "{}",
        out.rendered
    );
}

#[test]
fn a_valid_program_next_to_them_parses() {
    // Guards against the error files failing for a reason unrelated to
    // their content (e.g. includes not found at all).
    let dir = std::env::temp_dir().join(format!("p4-errors-ok-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let ok = dir.join("ok.p4");
    std::fs::write(
        &ok,
        "#include <core.p4>\n#include <v1model.p4>\nconst bit<8> A = 1;\n",
    )
    .expect("write");
    let parsed = parse_file(&ok, &[]);
    assert!(parsed.program.is_some(), "{}", parsed.render());
    std::fs::remove_dir_all(&dir).ok();
}
