//! Front-end integration tests: the example programs parse from disk with
//! `parse_program`, and no input — random text, token soup or a mutated
//! valid program — makes the front end panic.

use std::path::{Path, PathBuf};

use p4_compiler::front::{parse_program, parse_source};
use proptest::prelude::*;

const MISC: &str = include_str!("../src/front/testdata/misc.p4");
const ECMP: &str = include_str!("../src/front/testdata/ecmp.p4");

fn p4_files(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "p4"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn test_programs_parse_from_disk() {
    let files = p4_files("src/front/testdata");
    assert!(files.len() >= 6);
    for f in files {
        if let Err(diags) = parse_program(&f, &[]) {
            panic!("{}: {diags:?}", f.display());
        }
    }
}

#[test]
fn project_programs_parse() {
    // The switch program and examples in p4/programs must stay parseable.
    let files = p4_files("../programs");
    assert!(!files.is_empty(), "p4/programs has no .p4 files");
    for f in files {
        if let Err(diags) = parse_program(&f, &[PathBuf::from("../include")]) {
            panic!("{}: {diags:?}", f.display());
        }
    }
}

#[test]
fn include_dirs_are_searched_in_order() {
    let dir = std::env::temp_dir().join(format!("p4-incdirs-{}", std::process::id()));
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&a).expect("mkdir");
    std::fs::create_dir_all(&b).expect("mkdir");
    std::fs::write(a.join("defs.p4"), "const bit<8> FROM_A = 1;\n").expect("write");
    std::fs::write(b.join("defs.p4"), "const bit<8> FROM_B = 1;\n").expect("write");
    let main = dir.join("main.p4");
    std::fs::write(&main, "#include <defs.p4>\n").expect("write");
    let (prog, sources) = parse_program(&main, &[b.clone(), a.clone()]).expect("parses");
    assert_eq!(
        prog.decls[0].name().map(|n| n.name.as_str()),
        Some("FROM_B")
    );
    assert!(
        sources
            .file_name(prog.decls[0].span().file)
            .ends_with("b/defs.p4")
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Parses and checks the result is coherent: errors ⇔ no program, and
/// every diagnostic renders.
fn parse_never_panics(src: &str) {
    let parsed = parse_source("fuzz.p4", src);
    assert_eq!(parsed.program.is_none(), parsed.has_errors());
    let _ = parsed.render();
}

const TOKENS: &[&str] = &[
    "header",
    "struct",
    "control",
    "parser",
    "state",
    "transition",
    "select",
    "apply",
    "table",
    "key",
    "actions",
    "entries",
    "action",
    "const",
    "extern",
    "enum",
    "bit",
    "int",
    "varbit",
    "<",
    ">",
    ">>",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ":",
    ",",
    ".",
    "=",
    "&&&",
    "..",
    "++",
    "|+|",
    "@name",
    "@",
    "\"s\"",
    "8w5",
    "16s-3",
    "0x1F",
    "x",
    "T",
    "_",
    "default",
    "if",
    "else",
    "switch",
    "return",
    "exit",
    "#include <v1model.p4>\n",
    "#define M x\n",
    "#if 1\n",
    "#endif\n",
    "#else\n",
    "\n",
    "/*",
    "*/",
    "//",
    "\\\n",
    "?",
    "!",
    "-",
    "~",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(src in "\\PC{0,400}") {
        parse_never_panics(&src);
    }

    #[test]
    fn token_soup_never_panics(toks in proptest::collection::vec(0..TOKENS.len(), 0..200)) {
        let src: String = toks.iter().map(|&i| TOKENS[i]).collect::<Vec<_>>().join(" ");
        parse_never_panics(&src);
    }

    #[test]
    fn mutated_programs_never_panic(
        which in 0..2usize,
        edits in proptest::collection::vec((0..3u8, any::<prop::sample::Index>(), 0..40usize, 0..TOKENS.len()), 1..6),
    ) {
        let mut src = [MISC, ECMP][which].to_owned();
        for (kind, at, len, tok) in edits {
            let pos = at.index(src.len() + 1);
            match kind {
                0 => {
                    let end = (pos + len).min(src.len());
                    src.replace_range(pos..end, "");
                }
                1 => src.insert_str(pos, TOKENS[tok]),
                _ => {
                    let end = (pos + len).min(src.len());
                    let dup = src[pos..end].to_owned();
                    src.insert_str(end, &dup);
                }
            }
        }
        parse_never_panics(&src);
    }
}

#[test]
fn the_unmutated_programs_are_valid() {
    // So the mutation test starts from programs that parse.
    for src in [MISC, ECMP] {
        let p = parse_source("ok.p4", src);
        assert!(!p.has_errors(), "{}", p.render());
    }
    assert!(Path::new("src/front/testdata/misc.p4").exists());
}
