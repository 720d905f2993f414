//! Helpers shared by the compiler's integration tests: where the test
//! files are, a small v1model program with holes, and pinned diagnostics
//! (`tests/out/errors/NAME.txt`, rewritten with `P4C_BLESS=1`).

#![allow(dead_code)] // each test crate uses its own subset

use std::path::{Path, PathBuf};

use p4_compiler::{CompileOptions, compile_with_sources, render};

/// `p4/compiler/tests`.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// A small v1model program with holes for the parts a test changes.
pub const TEMPLATE: &str = r#"#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; bit<8> c; }
struct headers { h_t h; }
struct meta_t { bit<8> m; }
//DECLS
parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        //PARSER
    }
}
control VC(inout headers hdr, inout meta_t meta) { apply { } }
control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<9> port) { sm.egress_spec = port; }
    //LOCALS
    apply {
        //APPLY
    }
}
control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"#;

/// Fills the template: `parts` are (hole, text) pairs; the parser
/// transition defaults to `transition accept;`.
pub fn program(parts: &[(&str, &str)]) -> String {
    let mut s = TEMPLATE.to_string();
    if !parts.iter().any(|(h, _)| *h == "PARSER") {
        s = s.replace("//PARSER", "transition accept;");
    }
    for (hole, text) in parts {
        s = s.replace(&format!("//{hole}"), text);
    }
    s
}

/// Compiles `src` (saved as `NAME.p4`) and compares the rendered
/// diagnostics with `tests/out/errors/NAME.txt`.
pub fn check_errors(name: &str, src: &str) {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("p4-errors");
    std::fs::create_dir_all(&tmp).unwrap();
    let file = tmp.join(format!("{name}.p4"));
    std::fs::write(&file, src).unwrap();
    let (res, sources) = compile_with_sources(&file, &CompileOptions::default());
    let diags = match res {
        Ok(_) => panic!("{name}: expected errors, the program compiled"),
        Err(d) => d,
    };
    let text = render(&diags, &sources).replace(&format!("{}/", tmp.display()), "");
    let path = dir().join("out").join("errors").join(format!("{name}.txt"));
    if std::env::var_os("P4C_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        text, want,
        "{name}: diagnostics changed; rerun with P4C_BLESS=1"
    );
}

/// Compiles `src` (saved as `NAME.p4`), which must compile without errors:
/// the accepted counterpart of a [`check_errors`] case.
pub fn check_compiles(name: &str, src: &str) {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("p4-errors");
    std::fs::create_dir_all(&tmp).unwrap();
    let file = tmp.join(format!("{name}.p4"));
    std::fs::write(&file, src).unwrap();
    let (res, sources) = compile_with_sources(&file, &CompileOptions::default());
    if let Err(d) = res {
        panic!("{name}: expected to compile:\n{}", render(&d, &sources));
    }
}
