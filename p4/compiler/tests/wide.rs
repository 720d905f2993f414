//! Never-panic property for bit strings wider than 128 bits: random
//! expressions over wide and narrow fields and constants (slices with any
//! bounds, shifts by any amount, casts to widths on both sides of 128 and
//! of the 2048-bit limit) go through the checker, the constant folder and
//! the Rust back end. Each either compiles or is rejected with diagnostics
//! that render; none makes the compiler panic.

use p4_compiler::{CompileOptions, compile_with_sources, render};
use proptest::prelude::*;

const PROGRAM: &str = r#"#include <core.p4>
#include <v1model.p4>
header h_t { bit<4> t; bit<336> w; int<200> s; bit<8> n; bit<4> u; }
struct headers { h_t h; }
struct meta_t { bit<8> m; }
const bit<336> C = CONST_EXPR;
parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout meta_t meta) { apply { } }
control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.w = (bit<336>)(EXPR);
        if (EXPR == EXPR) { hdr.h.n = 1; }
        hdr.h.w[SLICE] = (bit<5>)(EXPR);
        hdr.h.s = (int<200>)(bit<200>)(EXPR);
    }
}
control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"#;

/// Widths for casts: narrow, around 128, wide, the limit.
const WIDTHS: &[u32] = &[1, 8, 64, 127, 128, 129, 200, 336, 2048];

/// A `bit<336>` leaf: a constant, or (`constant == false`) also a field.
fn leaf(constant: bool) -> BoxedStrategy<String> {
    let consts = prop_oneof![
        any::<u64>().prop_map(|v| format!("336w{v}")),
        Just("336w0x8000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0000_0005".to_string()),
        (0usize..WIDTHS.len(), any::<u64>())
            .prop_map(|(w, v)| format!("((bit<336>)(bit<{}>){v})", WIDTHS[w])),
        (0u32..400).prop_map(|k| format!("((bit<336>)1 << {k})")),
        any::<i32>().prop_map(|v| format!("((bit<336>)(int<336>){v})")),
    ];
    if constant {
        consts.boxed()
    } else {
        prop_oneof![
            consts,
            Just("hdr.h.w".to_string()),
            Just("C".to_string()),
            Just("((bit<336>)(bit<200>)hdr.h.s)".to_string()),
            Just("((bit<336>)hdr.h.n)".to_string()),
        ]
        .boxed()
    }
}

/// A `bit<336>` expression (so that most programs type-check and reach
/// the folder and the back end).
fn expr(constant: bool) -> impl Strategy<Value = String> {
    leaf(constant).prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                inner.clone(),
                prop::sample::select(vec![
                    "+", "-", "*", "&", "|", "^", "<<", ">>", "+", "-", "/", "|+|"
                ])
            )
                .prop_map(|(a, b, op)| format!("({a} {op} {b})")),
            (inner.clone(), 0u32..336, 0u32..336).prop_map(|(a, h, l)| {
                let (h, l) = (h.max(l), h.min(l));
                format!("((bit<336>)({a})[{h}:{l}])")
            }),
            (inner.clone(), inner.clone(), 1u32..336).prop_map(|(a, b, k)| {
                format!("((bit<336>)(({a})[{}:0] ++ ({b})[{}:0]))", 335 - k, k - 1)
            }),
            (inner.clone(), 0usize..WIDTHS.len()).prop_map(|(a, w)| {
                let w = WIDTHS[w];
                format!("((bit<336>)(int<336>)(int<{w}>)(bit<{w}>)({a}))")
            }),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| format!("((bit<336>)((int<336>)({a}) >> {b}))")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("(({a} < {b}) ? {a} : {b})")),
            (inner.clone(), inner)
                .prop_map(|(a, b)| format!("(((int<336>)({a}) <= (int<336>)({b})) ? ~{a} : -{b})")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn wide_expressions_never_panic(
        c in expr(true),
        e in expr(false),
        lo in 0u32..332,
    ) {
        let src = PROGRAM
            .replace("CONST_EXPR", &c)
            .replace("EXPR", &e)
            .replace("SLICE", &format!("{}:{lo}", lo + 4));
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("p4-wide");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("wide.p4");
        std::fs::write(&file, &src).unwrap();
        let (res, sources) = compile_with_sources(&file, &CompileOptions::default());
        if let Err(diags) = res {
            prop_assert!(!diags.is_empty());
            let _ = render(&diags, &sources);
        }
    }
}
