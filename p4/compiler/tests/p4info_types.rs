//! P4Info type specs and value-set match fields of compiled programs
//! (P4Runtime §6: `P4DataTypeSpec`, `ValueSet.match`): an `int<W>`
//! register cell or digest member is an `int` bitstring, a value set over a
//! struct has one EXACT match field per member, named by its path.

mod common;

use common::program;
use p4_compiler::{CompileOptions, compile_with_sources, render};
use std::path::Path;

fn p4info_of_file(path: &Path) -> String {
    let (res, sources) = compile_with_sources(path, &CompileOptions::default());
    match res {
        Ok(o) => o.p4info_text,
        Err(d) => panic!(
            "{} failed to compile:\n{}",
            path.display(),
            render(&d, &sources)
        ),
    }
}

fn p4info_of(name: &str, src: &str) -> String {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("p4info-types");
    std::fs::create_dir_all(&tmp).unwrap();
    let file = tmp.join(format!("{name}.p4"));
    std::fs::write(&file, src).unwrap();
    p4info_of_file(&file)
}

/// The text of the P4Info object whose preamble names `name`.
fn object<'a>(text: &'a str, name: &str) -> &'a str {
    let at = text
        .find(&format!("name: \"{name}\""))
        .unwrap_or_else(|| panic!("{name} not in\n{text}"));
    let start = text[..at].rfind("\n}").map_or(0, |i| i + 2);
    let end = text[at..].find("\n}").map_or(text.len(), |i| at + i);
    &text[start..end]
}

fn stf_program(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/stf/{name}.p4"))
}

#[test]
fn signed_register_cells_are_int_and_others_bit() {
    let text = p4info_of_file(&stf_program("registers_typed"));
    let acc = object(&text, "MyIngress.acc");
    assert!(
        acc.contains("bitstring {\n      int {\n        bitwidth: 8\n"),
        "{acc}"
    );
    let seen = object(&text, "MyIngress.seen");
    assert!(
        seen.contains("bitstring {\n      bit {\n        bitwidth: 1\n"),
        "{seen}"
    );
}

#[test]
fn signed_digest_members_are_int_in_type_info() {
    let src = program(&[
        ("DECLS", "struct learn_t { bit<8> a; int<16> delta; }"),
        (
            "APPLY",
            "digest<learn_t>(1, { hdr.h.a, (int<16>)hdr.h.b });",
        ),
    ]);
    let text = p4info_of("signed_digest", &src);
    let types = &text[text.find("type_info {").expect("type_info")..];
    let delta = &types[types.find("name: \"delta\"").expect("delta")..];
    assert!(delta.starts_with("name: \"delta\"\n        type_spec {\n          bitstring {\n            int {\n              bitwidth: 16\n"), "{types}");
    let a = &types[types.find("name: \"a\"").expect("a")..];
    assert!(a.contains("bit {\n              bitwidth: 8\n"), "{types}");
}

#[test]
fn struct_value_sets_have_one_match_field_per_member() {
    let text = p4info_of_file(&stf_program("value_set_nested"));
    let set = object(&text, "P.special");
    let fields: Vec<&str> = set.split("match {").skip(1).collect();
    assert_eq!(fields.len(), 2, "{set}");
    assert!(
        fields[0].contains("id: 1\n    name: \"kind\"\n    bitwidth: 8\n    match_type: EXACT"),
        "{set}"
    );
    assert!(
        fields[1]
            .contains("id: 2\n    name: \"inner.sub\"\n    bitwidth: 8\n    match_type: EXACT"),
        "{set}"
    );
    assert!(set.contains("size: 4"), "{set}");
}

#[test]
fn bit_value_sets_keep_one_unnamed_field() {
    let text = p4info_of_file(&stf_program("value_set"));
    let at = text.find("value_sets {").expect("value set");
    let set = &text[at..at + text[at..].find("\n}").unwrap()];
    assert_eq!(set.matches("match {").count(), 1, "{set}");
    assert!(set.contains("match {\n    id: 1\n    bitwidth:"), "{set}");
}

#[test]
fn scalar_digests_are_bitstrings_named_as_p4c_names_them() {
    // p4c: a digest of a bit string is a `bitstring` type spec with no
    // `type_info` struct; named after a `typedef` type argument, else
    // `digest_N` per call.
    let text = p4info_of_file(&stf_program("digest_scalar"));
    for (name, width) in [("digest_0", 32), ("value_t", 16), ("digest_1", 8)] {
        let d = object(&text, name);
        assert!(
            d.contains(&format!(
                "type_spec {{\n    bitstring {{\n      bit {{\n        bitwidth: {width}\n"
            )),
            "{d}"
        );
    }
    assert!(!text.contains("key: \"digest_0\""), "{text}");
}

#[test]
fn parser_and_top_level_externs_are_named_as_p4c_names_them() {
    // An instance in parser `P` is `P.seen`; a top-level one keeps its name.
    let text = p4info_of_file(&stf_program("parser_externs"));
    assert!(object(&text, "P.seen").contains("bitwidth: 32"), "{text}");
    assert!(object(&text, "P.parsed").contains("size: 4"), "{text}");
    assert!(object(&text, "last_kind").contains("bitwidth: 8"), "{text}");
    assert_eq!(text.matches("name: \"last_kind\"").count(), 1, "{text}");
}
