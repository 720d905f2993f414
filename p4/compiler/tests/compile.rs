//! Compiler tests: snapshots of generated Rust (`tests/in/*.p4` →
//! `tests/out/*.rs`), end-to-end runs of generated programs (the snapshot
//! files are `include!`d below, after a test checks they are current), and
//! pinned diagnostics for programs with type errors.
//!
//! Set `P4C_BLESS=1` to rewrite the snapshots.

use std::path::Path;

mod common;

use common::{check_errors, dir, program};
use p4_compiler::{CompileOptions, compile_with_sources, render};
use p4_target::pipeline::Pipeline;

/// Compiles `tests/in/NAME.p4` and compares with `tests/out/NAME.rs`.
fn snapshot(name: &str) {
    let input = dir().join("in").join(format!("{name}.p4"));
    let (res, sources) = compile_with_sources(&input, &CompileOptions::default());
    let out = match res {
        Ok(o) => o,
        Err(d) => panic!("{name} failed to compile:\n{}", render(&d, &sources)),
    };
    for (ext, text) in [("rs", &out.rust), ("p4info.txt", &out.p4info_text)] {
        let path = dir().join("out").join(format!("{name}.{ext}"));
        if std::env::var_os("P4C_BLESS").is_some() {
            std::fs::write(&path, text).unwrap();
            continue;
        }
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            &old == text,
            "snapshot {} is out of date; rerun with P4C_BLESS=1",
            path.display()
        );
    }
}

mod ipv4_router {
    include!("out/ipv4_router.rs");
}

mod parser_features {
    include!("out/parser_features.rs");
}

mod control_features {
    include!("out/control_features.rs");
}

mod block_features {
    include!("out/block_features.rs");
}

mod deprecated_externs {
    include!("out/deprecated_externs.rs");
}

mod typed_keys {
    include!("out/typed_keys.rs");
}

mod name_clashes {
    include!("out/name_clashes.rs");
}

/// Snapshot check, then the program's STF script (`tests/in/NAME.stf`).
fn stf<P: Pipeline>(name: &str, prog: P) {
    snapshot(name);
    let text = std::fs::read_to_string(dir().join("in").join(format!("{name}.stf"))).unwrap();
    let report = dataplane::stf::run(prog, &text);
    assert!(
        report.passed,
        "{name}.stf failed:\n{}",
        report.failures.join("\n")
    );
}

#[test]
fn block_features_stf() {
    stf("block_features", block_features::Program::new());
}

#[test]
fn block_features_names_follow_instances_and_annotations() {
    let info = block_features::Program::new().info();
    let names: Vec<(&str, u32)> = info.counters.iter().map(|c| (c.name, c.size)).collect();
    assert_eq!(names, [("I.small.c", 8), ("I.big.c", 256)]);
    assert!(
        info.table_by_name("I.renamed").is_some(),
        "@name(\"renamed\") is local"
    );
    let set_out = info.action_by_name("set_out").unwrap();
    assert_eq!(set_out.name, "set_out", "@name(\".set_out\") is absolute");
    assert_eq!(set_out.id, 0x0100abcd, "@id is honoured");
    assert_eq!(info.tables[0].keys[0].name, "kind");
    assert_eq!(info.value_sets[0].name, "P.special");
    assert_eq!(info.value_sets[0].bitwidth, 16);
}

#[test]
fn deprecated_externs_preserve_the_fields_they_name() {
    use deprecated_externs::Program as Prog;
    snapshot("deprecated_externs");
    let mut prog = Prog::new();
    let data = [0u8; 14];
    let mut first = prog.parse(&data, StandardMetadata::arriving(1, 14, 0));
    prog.ingress(&mut first);
    let list = Prog::meta(&first).resubmit.expect("resubmit requested");
    assert_eq!(Prog::meta(&first).egress_spec, 3);

    // The resubmitted copy starts from scratch and gets only `count` back,
    // before its parser runs (which then sets `other`).
    let meta = StandardMetadata::arriving(1, 14, 0);
    let mut again = prog.parse_preserving(&data, meta, &first, list);
    assert_eq!((again.meta.count, again.meta.other), (1, 0x42));
    prog.ingress(&mut again);
    assert_eq!(
        Prog::meta(&again).egress_spec,
        p4_target::v1model::DROP_PORT,
        "mark_to_drop() with no argument drops"
    );

    prog.egress(&mut first);
    let req = Prog::meta(&first).clone_request.expect("clone requested");
    assert_eq!(req.session, 5);
    assert_eq!(req.kind, p4_target::v1model::CloneType::EgressToEgress);
    // An E2E clone keeps the headers, and of the user metadata only the
    // field list.
    let mut copy = first.clone();
    Prog::reset_user_metadata(&mut copy);
    Prog::preserve_fields(&first, &mut copy, req.field_list.expect("a field list"));
    assert_eq!((copy.meta.tag, copy.meta.count, copy.meta.other), (7, 0, 0));
    assert_eq!(copy.hdr.eth, first.hdr.eth);
}

#[test]
fn name_clashes_stf() {
    stf("name_clashes", name_clashes::Program::new());
}

#[test]
fn constants_and_object_indices_are_named() {
    use control_features::{counters, registers, tables};
    assert_eq!(name_clashes::CAMEL_STEP, 4u8);
    assert_eq!(name_clashes::NEG, -2i8);
    const { assert!(name_clashes::ON) };
    assert_eq!(name_clashes::BIG, 300i64);
    let info = &control_features::PROGRAM_INFO;
    assert_eq!(info.tables[tables::I_ACL].name, "I.acl");
    assert_eq!(info.tables[tables::I_ACL].id, tables::I_ACL_ID);
    assert_eq!(info.counters[counters::I_PER_OP].name, "I.per_op");
    assert_eq!(
        info.registers[registers::I_LAST_A].id,
        registers::I_LAST_A_ID
    );
    let set_port = info.action_by_name("I.set_port").unwrap();
    assert_eq!(set_port.id, control_features::actions::I_SET_PORT_ID);
}

#[test]
fn typed_keys_stf() {
    stf("typed_keys", typed_keys::Program::new());
}

#[test]
fn control_features_stf() {
    stf("control_features", control_features::Program::new());
}

#[test]
fn parser_features_stf() {
    stf("parser_features", parser_features::Program::new());
}

use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeApi, TableEntry};
use p4_target::v1model::StandardMetadata;

/// Ones' complement checksum of an IPv4 header with its checksum field zeroed.
fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum = 0u32;
    for (i, w) in h.chunks(2).enumerate() {
        if i == 5 {
            continue;
        }
        sum += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Ethernet + IPv4 (TTL `ttl`, to `dst`) + 4 payload bytes, valid checksum.
fn ipv4_packet(dst: [u8; 4], ttl: u8) -> Vec<u8> {
    let mut p = vec![
        0x00, 0x00, 0x00, 0x00, 0x00, 0x01, // dst mac
        0x00, 0x00, 0x00, 0x00, 0x00, 0x02, // src mac
        0x08, 0x00, // IPv4
        0x45, 0x00, 0x00, 0x18, 0x00, 0x01, 0x00, 0x00, ttl, 0x11, 0x00, 0x00, // ..checksum
        10, 0, 0, 1, // src
    ];
    p.extend_from_slice(&dst);
    p.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    let c = ipv4_checksum(&p[14..34]);
    p[24..26].copy_from_slice(&c.to_be_bytes());
    p
}

/// Runs parse → ingress → egress → deparse, as a v1model switch would for
/// a unicast packet, and returns (egress_spec, output bytes).
fn run<P: Pipeline>(prog: &mut P, data: &[u8], port: u16) -> (u16, Vec<u8>) {
    let mut pkt = prog.parse(data, StandardMetadata::arriving(port, data.len() as u32, 0));
    prog.ingress(&mut pkt);
    let spec = P::meta(&pkt).egress_spec;
    P::meta_mut(&mut pkt).egress_port = spec;
    prog.egress(&mut pkt);
    let mut out = Vec::new();
    prog.deparse(&mut pkt, data, &mut out);
    (spec, out)
}

#[test]
fn ipv4_router_snapshot_is_current() {
    snapshot("ipv4_router");
}

#[test]
fn ipv4_router_ids_match_p4c() {
    // The ids p4c gives the P4 tutorials' basic.p4, which this program mirrors.
    let info = ipv4_router::Program::new().info();
    assert_eq!(
        info.table_by_name("MyIngress.ipv4_lpm").unwrap().id,
        37375156
    );
    assert_eq!(
        info.action_by_name("MyIngress.ipv4_forward").unwrap().id,
        28792405
    );
    assert_eq!(info.action_by_name("MyIngress.drop").unwrap().id, 25652968);
    assert_eq!(info.action_by_name("NoAction").unwrap().id, 21257015);
    assert!(info.p4info_text.contains("name: \"MyIngress.ipv4_lpm\""));
}

#[test]
fn ipv4_router_forwards_by_longest_prefix_and_rewrites() {
    let mut prog = ipv4_router::Program::new();
    let info = prog.info();
    let table = info.table_by_name("MyIngress.ipv4_lpm").expect("table").id;
    let fwd = info
        .action_by_name("MyIngress.ipv4_forward")
        .expect("action")
        .id;
    let rt = prog.runtime_mut();
    for (prefix, len, port) in [([10u8, 0, 0, 0], 8u32, 1u128), ([10, 1, 0, 0], 16, 2)] {
        rt.table_insert(
            table,
            TableEntry {
                matches: vec![Some(FieldMatch::Lpm {
                    value: u32::from_be_bytes(prefix) as u128,
                    prefix_len: len,
                })],
                priority: 0,
                action: EntryAction::Direct(ActionCall::new(fwd, &[0x0000_0000_00aa, port])),
                metadata: vec![],
            },
        )
        .unwrap();
    }
    let input = ipv4_packet([10, 1, 2, 3], 64);
    let (port, out) = run(&mut prog, &input, 0);
    assert_eq!(port, 2, "the /16 wins over the /8");
    assert_eq!(out.len(), input.len());
    assert_eq!(
        &out[0..6],
        &[0, 0, 0, 0, 0, 0xaa],
        "dst mac from the action"
    );
    assert_eq!(
        &out[6..12],
        &[0, 0, 0, 0, 0, 1],
        "src mac is the old dst mac"
    );
    assert_eq!(out[22], 63, "ttl decremented");
    assert_eq!(
        u16::from_be_bytes([out[24], out[25]]),
        ipv4_checksum(&out[14..34]),
        "checksum updated"
    );
    assert_eq!(&out[34..], &[0xde, 0xad, 0xbe, 0xef], "payload kept");

    let (port, _) = run(&mut prog, &ipv4_packet([10, 9, 9, 9], 64), 0);
    assert_eq!(port, 1, "only the /8 matches");
    let (port, _) = run(&mut prog, &ipv4_packet([192, 168, 0, 1], 64), 0);
    assert_eq!(
        port,
        p4_target::v1model::DROP_PORT,
        "miss runs the default drop()"
    );
    let (port, _) = run(&mut prog, &ipv4_packet([10, 1, 2, 3], 1), 0);
    assert_eq!(port, p4_target::v1model::DROP_PORT, "ttl 1 is dropped");
}

#[test]
fn ipv4_router_reports_bad_checksums_and_short_packets() {
    let mut prog = ipv4_router::Program::new();
    let mut bad = ipv4_packet([10, 1, 2, 3], 64);
    bad[24] ^= 0xff;
    let pkt = prog.parse(&bad, StandardMetadata::arriving(0, bad.len() as u32, 0));
    assert_eq!(ipv4_router::Program::meta(&pkt).checksum_error, 1);
    let good = ipv4_packet([10, 1, 2, 3], 64);
    let pkt = prog.parse(&good, StandardMetadata::arriving(0, good.len() as u32, 0));
    assert_eq!(ipv4_router::Program::meta(&pkt).checksum_error, 0);
    assert_eq!(ipv4_router::Program::meta(&pkt).parser_error, 0);
    let short = &good[..20];
    let pkt = prog.parse(short, StandardMetadata::arriving(0, 20, 0));
    assert_eq!(
        ipv4_router::Program::meta(&pkt).parser_error,
        p4_target::v1model::error_code::PACKET_TOO_SHORT
    );
    assert!(pkt.hdr.ethernet.valid && !pkt.hdr.ipv4.valid);
    assert_eq!(pkt.payload_offset, 14);
}

// ---------------------------------------------------------------------------
// Pinned diagnostics
// ---------------------------------------------------------------------------

#[test]
fn error_unknown_name() {
    check_errors(
        "unknown_name",
        &program(&[("APPLY", "meta.m = undefined_thing;")]),
    );
}

#[test]
fn error_width_mismatch() {
    check_errors(
        "width_mismatch",
        &program(&[("APPLY", "hdr.h.b = hdr.h.a + hdr.h.b;")]),
    );
}

#[test]
fn error_wrong_argument_count() {
    check_errors("wrong_argument_count", &program(&[("APPLY", "set(1, 2);")]));
}

#[test]
fn error_bad_match_kind() {
    check_errors(
        "bad_match_kind",
        &program(&[(
            "LOCALS",
            "table t { key = { hdr.h.a: fuzzy; } actions = { set; } }",
        )]),
    );
}

#[test]
fn error_assign_to_const() {
    check_errors(
        "assign_to_const",
        &program(&[
            ("DECLS", "const bit<8> LIMIT = 10;"),
            ("APPLY", "LIMIT = 3;"),
        ]),
    );
}

#[test]
fn error_assign_to_in_param() {
    check_errors(
        "assign_to_in_param",
        &program(&[
            ("LOCALS", "action a(in bit<8> x) { x = 1; }"),
            ("APPLY", "a(hdr.h.a);"),
        ]),
    );
}

#[test]
fn error_unknown_field() {
    check_errors("unknown_field", &program(&[("APPLY", "hdr.h.nope = 1;")]));
}

#[test]
fn error_unknown_state() {
    check_errors(
        "unknown_state",
        &program(&[("PARSER", "transition parse_nothing;")]),
    );
}

#[test]
fn error_default_action_not_listed() {
    check_errors(
        "default_action_not_listed",
        &program(&[(
            "LOCALS",
            "action other() { } table t { key = { hdr.h.a: exact; } actions = { set; } default_action = other(); }",
        )]),
    );
}

#[test]
fn error_width_too_large() {
    check_errors(
        "width_too_large",
        &program(&[("DECLS", "header big_t { bit<4096> x; }")]),
    );
}

#[test]
fn error_wide_literal_too_wide() {
    check_errors(
        "wide_literal_too_wide",
        &program(&[("APPLY", "bit<8> x = (bit<8>)4000w1;")]),
    );
}

#[test]
fn error_wide_concat_too_wide() {
    check_errors(
        "wide_concat_too_wide",
        &program(&[(
            "APPLY",
            "bit<2000> x = 0; bit<100> y = 0; hdr.h.a = (bit<8>)(x ++ y);",
        )]),
    );
}

#[test]
fn error_wide_table_key() {
    check_errors(
        "wide_table_key",
        &program(&[
            (
                "LOCALS",
                "table t { key = { (bit<336>)hdr.h.b: exact @name(\"wide\"); } actions = { set; } }",
            ),
            ("APPLY", "t.apply();"),
        ]),
    );
}

#[test]
fn error_wide_action_parameter_from_the_control_plane() {
    check_errors(
        "wide_action_parameter",
        &program(&[
            (
                "LOCALS",
                "action w(bit<200> v) { hdr.h.a = v[7:0]; } table t { key = { hdr.h.a: exact; } actions = { w; } }",
            ),
            ("APPLY", "t.apply();"),
        ]),
    );
}

#[test]
fn error_unknown_method() {
    check_errors(
        "unknown_method",
        &program(&[("APPLY", "hdr.h.makeValid();")]),
    );
}

#[test]
fn error_mark_to_drop_needs_standard_metadata() {
    check_errors(
        "mark_to_drop_argument",
        &program(&[("APPLY", "hdr.h.setInvalid(); mark_to_drop(meta);")]),
    );
}

#[test]
fn error_condition_not_bool() {
    check_errors(
        "condition_not_bool",
        &program(&[("APPLY", "if (hdr.h.a) { meta.m = 1; }")]),
    );
}

#[test]
fn error_cannot_infer_width() {
    check_errors(
        "cannot_infer_width",
        &program(&[("APPLY", "meta.m = (bit<8>)(1 ++ 2);")]),
    );
}

#[test]
fn error_entry_key_count() {
    check_errors(
        "entry_key_count",
        &program(&[(
            "LOCALS",
            "table t { key = { hdr.h.a: exact; hdr.h.b: exact; } actions = { set; } const entries = { 1 : set(3); } }",
        )]),
    );
}

/// Compiles `src` (saved as `NAME.p4`) and returns its warnings, rendered.
fn warnings_of(name: &str, src: &str) -> String {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("p4-warnings");
    std::fs::create_dir_all(&tmp).unwrap();
    let file = tmp.join(format!("{name}.p4"));
    std::fs::write(&file, src).unwrap();
    let (res, sources) = compile_with_sources(&file, &CompileOptions::default());
    match res {
        Ok(out) => render(&out.warnings, &sources).replace(&format!("{}/", tmp.display()), ""),
        Err(d) => panic!("{name} does not compile:\n{}", render(&d, &sources)),
    }
}

#[test]
fn literals_that_do_not_fit_wrap_with_a_warning() {
    let text = warnings_of(
        "literal_wraps",
        &program(&[("APPLY", "meta.m = 300; hdr.h.a = -1;")]),
    );
    assert!(
        text.contains("warning[P4E1014]: 300 does not fit in bit<8>; it becomes 44"),
        "{text}"
    );
    assert!(
        text.contains("warning[P4E1014]: -1 does not fit in bit<8>; it becomes 255"),
        "{text}"
    );
}

#[test]
fn error_unsupported_feature_is_named() {
    check_errors(
        "unsupported_user_extern",
        &program(&[
            (
                "DECLS",
                "extern Widget { Widget(); void spin(in varbit<8> x); }",
            ),
            ("LOCALS", "Widget() w;"),
        ]),
    );
}

#[test]
fn error_static_assert() {
    check_errors(
        "static_assert",
        &program(&[(
            "DECLS",
            "const bit<8> W = 4;\nconst bool ok = static_assert(W == 4, \"W is 4\");\nconst bool bad = static_assert(W > 8, \"W must exceed 8\");",
        )]),
    );
}

#[test]
fn unreachable_parser_states_are_warnings() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("p4-warnings");
    std::fs::create_dir_all(&tmp).unwrap();
    let file = tmp.join("unreachable.p4");
    let src = program(&[(
        "PARSER",
        "transition accept; } state orphan { transition accept;",
    )]);
    std::fs::write(&file, src).unwrap();
    let out = p4_compiler::compile(&file, &CompileOptions::default()).expect("compiles");
    let msgs: Vec<&str> = out.warnings.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(msgs, ["parser state `orphan` is unreachable from `start`"]);
    assert_eq!(out.warnings[0].code, "P4E1070");
}

#[test]
fn error_every_error_is_reported() {
    check_errors(
        "several_errors",
        &program(&[("APPLY", "meta.m = nope1; hdr.h.zz = 1; set(1, 2, 3);")]),
    );
}

#[test]
fn error_break_outside_a_loop() {
    check_errors(
        "break_outside_loop",
        &program(&[("APPLY", "if (hdr.h.a == 1) { break; }")]),
    );
}

#[test]
fn error_loop_variable_without_a_type() {
    check_errors(
        "loop_range_without_type",
        &program(&[("APPLY", "for (i in 1 .. 3) { meta.m = meta.m + 1; }")]),
    );
}

#[test]
fn error_named_argument_misuse() {
    check_errors(
        "named_argument_unknown",
        &program(&[("APPLY", "set(prt = 1);")]),
    );
    check_errors(
        "named_argument_mixed",
        &program(&[
            (
                "LOCALS",
                "action two(bit<8> x, bit<8> y) { meta.m = x + y; }",
            ),
            ("APPLY", "two(1, y = 2);"),
        ]),
    );
    check_errors(
        "named_argument_missing",
        &program(&[
            (
                "LOCALS",
                "action two(bit<8> x, bit<8> y) { meta.m = x + y; }",
            ),
            ("APPLY", "two(y = 2);"),
        ]),
    );
}

#[test]
fn error_first_entry_without_priority() {
    check_errors(
        "entry_priority_first_missing",
        &program(&[(
            "LOCALS",
            "table t { key = { hdr.h.a: ternary; } actions = { set; } entries = { 1 &&& 1 : set(1); priority = 3: 2 &&& 2 : set(2); } }",
        )]),
    );
}

#[test]
fn error_register_of_header_or_wide_struct() {
    check_errors(
        "register_of_header",
        &program(&[
            ("DECLS", "struct wide_t { bit<100> a; bit<29> b; }"),
            ("LOCALS", "register<h_t>(4) r; register<wide_t>(4) w;"),
        ]),
    );
}

#[test]
fn error_register_read_into_wrong_type() {
    check_errors(
        "register_read_wrong_type",
        &program(&[
            ("LOCALS", "register<int<8>>(4) r;"),
            ("APPLY", "r.read(meta.m, 0);"),
        ]),
    );
}

#[test]
fn error_sub_control_without_packet() {
    check_errors(
        "sub_control_without_packet",
        &program(&[
            (
                "DECLS",
                "control Sub(packet_out p, in h_t h) { apply { p.emit(h); } }",
            ),
            ("LOCALS", "Sub() sub;"),
            ("APPLY", "sub.apply(hdr.h, hdr.h);"),
        ]),
    );
}

#[test]
fn error_checksum_with_payload_not_csum16() {
    check_errors(
        "checksum_payload_crc32",
        &program(&[(
            "APPLY",
            "update_checksum_with_payload(true, { hdr.h.a }, hdr.h.b, HashAlgorithm.crc16);",
        )]),
    );
}

#[test]
fn error_lookahead_of_nested_struct() {
    // Nested structs of scalars are read since gaps22, and structs holding
    // headers and stacks since s24; one that holds a header union is not
    // supported yet.
    check_errors(
        "lookahead_nested_struct",
        &program(&[
            (
                "DECLS",
                "header_union u_t { h_t h; } struct in_t { bit<8> x; u_t u; } struct outer_t { in_t i; }",
            ),
            (
                "PARSER",
                "outer_t o = pkt.lookahead<outer_t>(); transition accept;",
            ),
        ]),
    );
}

// p4c type-checks every declaration, used or not; these programs were
// accepted while the offending declaration was never used.

#[test]
fn error_in_uninstantiated_control_with_constructor_parameters() {
    check_errors(
        "ctor_control_unused",
        &program(&[(
            "DECLS",
            "control C(inout headers hdr)(bit<8> k) { apply { hdr.h.b = hdr.h.a + k; } }",
        )]),
    );
}

#[test]
fn error_in_uninstantiated_parser_with_constructor_parameters() {
    check_errors(
        "ctor_parser_unused",
        &program(&[(
            "DECLS",
            "parser Q(packet_in pkt, out h_t x)(bit<8> k) { state start { x.b = k; transition accept; } }",
        )]),
    );
}

#[test]
fn error_parser_constructor_arguments() {
    check_errors(
        "ctor_parser_args",
        &program(&[(
            "DECLS",
            "parser Q(packet_in pkt, out h_t x)(bit<8> k) { state start { transition accept; } } \
             parser R(packet_in pkt, out h_t x) { Q(1, 2) q; state start { q.apply(pkt, x); transition accept; } } \
             parser S(packet_in pkt, out h_t x)(bit<8> k) { Q(k + 1) q; state start { q.apply(pkt, x); transition accept; } } \
             parser T(packet_in pkt, out h_t x) { R(1) r; state start { transition accept; } }",
        )]),
    );
}

#[test]
fn error_generic_function_calls() {
    check_errors(
        "generic_function_calls",
        &program(&[
            (
                "DECLS",
                "T first<T>(in T x, in T y) { return x; } \
                 T make<T>() { T t; return t; } \
                 T add<T>(in T x) { return x + 1; } \
                 void needs<T>(in T x, in undefined_t y) { }",
            ),
            (
                "APPLY",
                "meta.m = first(1, 2); meta.m = make(); meta.m = first<bit<8>, bit<8>>(meta.m, meta.m); \
                 hdr.h.b = first(meta.m, meta.m); bool b = add(true);",
            ),
        ]),
    );
}

#[test]
fn error_generic_block_type_arguments() {
    check_errors(
        "generic_block_type_args",
        &program(&[
            (
                "DECLS",
                "control G<T>(inout T x) { apply { x = x + 1; } } \
                 parser GP<T>(packet_in pkt, out T x) { state start { pkt.extract(x); transition accept; } }",
            ),
            (
                "LOCALS",
                "G() g0; G<bit<8>, bit<8>>() g2; G<bool>() gb; G<bit<8>>(1) g1;",
            ),
        ]),
    );
}

#[test]
fn error_unknown_type_in_unused_signatures() {
    check_errors(
        "unknown_type_in_signatures",
        &program(&[(
            "DECLS",
            "extern void f(in undefined_t x); extern X<T> { X(); T get(in missing_t m); } \
             control CT<T>(inout T x, in other_t y); package PK(unknown_t x);",
        )]),
    );
}

#[test]
fn error_unknown_type_in_unused_generic_struct() {
    check_errors(
        "unknown_type_in_generic_struct",
        &program(&[("DECLS", "struct G<T> { T x; undefined_t s; }")]),
    );
}

#[test]
fn error_unused_register_sized_by_a_bool() {
    check_errors(
        "register_size_bool",
        &program(&[("LOCALS", "register<bit<32>>(true) r;")]),
    );
}

#[test]
fn error_function_without_return_on_every_path() {
    check_errors(
        "missing_return",
        &program(&[(
            "DECLS",
            "bit<8> f(in bit<8> x) { if (x == 1) { return 1; } } \
             bit<8> g(in bit<8> x) { switch (x) { 1: { return 1; } 2: { return 2; } } } \
             bit<8> ok(in bit<8> x) { if (x == 1) { return 1; } else { switch (x) { 2: \
             default: { return 3; } } } }",
        )]),
    );
}

#[test]
fn error_bad_default_of_an_unused_constructor_parameter() {
    check_errors(
        "ctor_default_bad",
        &program(&[(
            "DECLS",
            "control C(inout headers hdr)(bit<8> k = true) { apply { } }",
        )]),
    );
}

#[test]
fn error_header_field_struct_holding_a_header() {
    check_errors(
        "header_field_struct_of_header",
        &program(&[(
            "DECLS",
            "struct ok_t { bit<4> a; bool b; bit<3> c; } struct bad_t { h_t h; } \
             header s_t { ok_t ok; bad_t bad; }",
        )]),
    );
}

#[test]
fn error_switch_labels_twice_or_default_not_last() {
    check_errors(
        "switch_labels",
        &program(&[
            (
                "LOCALS",
                "action a() {} action b() {} table t { actions = { a; b; } default_action = a; }",
            ),
            (
                "APPLY",
                "switch (hdr.h.a) { 0: {} 1: {} 1: {} } switch (hdr.h.a) { default: {} 1: {} } \
                 switch (t.apply().action_run) { a: {} a: {} }",
            ),
        ]),
    );
}

#[test]
fn error_duplicate_enum_member_and_parser_state() {
    check_errors(
        "duplicate_member_and_state",
        &program(&[
            ("DECLS", "enum E2 { A, A }"),
            (
                "PARSER",
                "transition next; } state next { transition accept; } state next { transition accept;",
            ),
        ]),
    );
}

#[test]
fn error_division_by_zero() {
    check_errors(
        "division_by_zero",
        &program(&[("APPLY", "hdr.h.a = hdr.h.a / 0; meta.m = meta.m % 8w0;")]),
    );
}

#[test]
fn error_table_property_twice_and_keyless_entries() {
    check_errors(
        "table_properties",
        &program(&[(
            "LOCALS",
            "table t2 { key = { hdr.h.a: exact; } key = { hdr.h.b: exact; } actions = { set; } } \
             action a() {} table t3 { actions = { a; } default_action = a; entries = { _ : a(); } }",
        )]),
    );
}

#[test]
fn error_two_actions_with_one_control_plane_name() {
    check_errors(
        "duplicate_control_plane_names",
        &program(&[
            (
                "LOCALS",
                "@name(\"foo\") action a() {} @name(\"foo\") action b() {} \
                 table t { key = { hdr.h.a: exact; } actions = { a; b; } }",
            ),
            ("APPLY", "t.apply();"),
        ]),
    );
}

#[test]
fn error_two_used_actions_with_one_name_and_different_parameters() {
    check_errors(
        "shared_action_name_other_params",
        &program(&[
            (
                "LOCALS",
                "@name(\"foo\") action a(bit<8> x) {} @name(\"foo\") action b(bit<16> x) {} \
                 @name(\"foo\") action unused_c() {} \
                 table t { key = { hdr.h.a: exact; } actions = { a; } } \
                 table u { key = { hdr.h.a: exact; } actions = { b; } }",
            ),
            ("APPLY", "t.apply(); u.apply();"),
        ]),
    );
}

#[test]
fn error_direct_invocation_twice_of_a_control_with_tables() {
    check_errors(
        "direct_invocation_twice",
        &program(&[
            (
                "DECLS",
                "control T(inout bit<8> x) { action a() { x = 1; } \
                 table t { key = { x: exact; } actions = { a; } } apply { t.apply(); } }",
            ),
            ("APPLY", "T.apply(meta.m); T.apply(meta.m);"),
        ]),
    );
}

#[test]
fn error_control_typed_constructor_arguments() {
    check_errors(
        "ctor_instance_args",
        &program(&[
            (
                "DECLS",
                "control step_t(inout bit<8> x); \
                 control Inc(inout bit<8> x) { apply { x = x + 1; } } \
                 control Via(inout bit<8> x)(step_t s) { apply { s.apply(x); } }",
            ),
            ("LOCALS", "Via(Inc()) v; Via(meta) w;"),
        ]),
    );
}

#[test]
fn error_in_a_generic_function_never_called() {
    check_errors(
        "generic_function_unused",
        &program(&[(
            "DECLS",
            "T bad<T>(in T a) { return a + 1; } T fine<T>(in T a) { T b = a; return b; }",
        )]),
    );
}

#[test]
fn error_stack_next_and_last_outside_a_parser() {
    check_errors(
        "stack_next_outside_parser",
        &program(&[
            ("DECLS", "struct hs_t { h_t[2] s; }"),
            ("LOCALS", "hs_t x;"),
            ("APPLY", "x.s.next.setValid(); x.s.last.setValid();"),
        ]),
    );
}

#[test]
fn error_package_instantiated_twice() {
    let src = program(&[]) + "V1Switch(P(), VC(), I(), E(), CC(), D()) main;\n";
    check_errors("two_mains", &src);
}

#[test]
fn error_bad_default_of_unused_parameters() {
    check_errors(
        "param_default_bad",
        &program(&[
            ("DECLS", "bit<8> f(in bit<8> x = true) { return x; }"),
            ("LOCALS", "action a(bit<8> x = 16w1) {}"),
        ]),
    );
}

#[test]
fn error_log_msg_without_a_string() {
    check_errors("log_msg_not_string", &program(&[("APPLY", "log_msg(5);")]));
}

#[test]
fn error_parser_locals_after_states() {
    check_errors(
        "parser_local_after_states",
        &program(&[(
            "PARSER",
            "transition next; } bit<8> late; state next { transition accept;",
        )]),
    );
}

#[test]
fn error_two_tables_with_one_control_plane_name() {
    // p4c's p4_16_errors/issue1803_same_table_name.p4: an absolute
    // `@name(".t0")` in a control instantiated twice; and two tables of
    // one control given one name.
    check_errors(
        "duplicate_table_names",
        &program(&[
            (
                "DECLS",
                "control T(inout bit<8> x) { action a() { x = 1; } \
                 @name(\".t0\") table t { key = { x: exact; } actions = { a; } } \
                 apply { t.apply(); } }",
            ),
            (
                "LOCALS",
                "T() t1; T() t2; \
                 @name(\"u\") table u1 { key = { hdr.h.a: exact; } actions = { set; } } \
                 @name(\"u\") table u2 { key = { hdr.h.a: exact; } actions = { set; } }",
            ),
            (
                "APPLY",
                "t1.apply(meta.m); t2.apply(meta.m); u1.apply(); u2.apply();",
            ),
        ]),
    );
}

#[test]
fn error_dont_care_arguments() {
    // `_` only stands for an `out` argument whose type is known.
    check_errors(
        "dont_care_arguments",
        &program(&[
            ("DECLS", "void inc(inout bit<8> x) { x = x + 1; }"),
            ("APPLY", "inc(_);"),
            ("PARSER", "pkt.extract(_); transition accept;"),
        ]),
    );
}

#[test]
fn error_digest_of_a_struct_with_a_varbit_field() {
    check_errors(
        "digest_varbit",
        &program(&[
            ("DECLS", "struct d_t { bit<8> a; varbit<16> v; }"),
            ("LOCALS", "d_t d;"),
            ("APPLY", "digest<d_t>(1, d);"),
        ]),
    );
}

#[test]
fn error_integer_assigned_to_a_serializable_enum() {
    // p4c's p4_16_errors/enumCast.p4: no implicit cast from an integer to
    // a serializable enum in an assignment or initialiser.
    check_errors(
        "enum_from_integer",
        &program(&[
            ("DECLS", "enum bit<8> X { Zero = 0, One = 1 }"),
            ("APPLY", "X y = 1; y = X.One; y = 0;"),
        ]),
    );
}

#[test]
fn error_serializable_enum_to_another_type() {
    // P4_16 §8.11.2 converts a serializable enum implicitly to its own
    // underlying type only: not to a wider one, and a value of that type
    // never becomes the enum without a cast.
    check_errors(
        "enum_to_another_type",
        &program(&[
            ("DECLS", "enum bit<8> X { Zero = 0, One = 1 }"),
            ("APPLY", "hdr.h.a = X.One; hdr.h.b = X.One; X y = hdr.h.a;"),
        ]),
    );
}

#[test]
fn error_array_of_scalars_index() {
    // An array of scalars is indexed by a compile-time value within its
    // size, or by a run-time one (`tests/stf/array_runtime_index`).
    check_errors(
        "array_of_scalars_index",
        &program(&[
            ("DECLS", "header arr_t { bit<8> v[2]; }"),
            (
                "APPLY",
                "arr_t x; x.v[2] = 1; x.v[hdr.h.a] = 1; x.v[1] = 1;",
            ),
        ]),
    );
}

#[test]
fn error_tuple_index_and_bool_cast() {
    // A tuple is indexed by a compile-time value within its length; only
    // the integers 0 and 1 cast to bool.
    check_errors(
        "tuple_index_and_bool_cast",
        &program(&[(
            "APPLY",
            "tuple<bit<8>, bit<8>> t = { 1, 2 }; hdr.h.a = t[2]; hdr.h.a = t[hdr.h.c]; bool b = (bool)2;",
        )]),
    );
}

#[test]
fn error_invalid_header_needs_a_header_type() {
    // `{#}` is an invalid header or header union: it needs that type from
    // the assignment or a cast, and is no other type's value.
    check_errors(
        "invalid_header_expression",
        &program(&[
            ("DECLS", "struct s_t { bit<8> a; }"),
            ("APPLY", "s_t s = {#}; hdr.h.a = 1; if ({#} == hdr.h) { }"),
        ]),
    );
}

#[test]
fn error_new_type_fields_need_casts() {
    // P4_16 §7.6: `type` declares a new type; fields of it and of its
    // underlying type (or another new type) are not assigned or compared
    // without a cast. With casts, or through a typedef, they are.
    check_errors(
        "new_type_fields_need_casts",
        &program(&[
            (
                "DECLS",
                "type bit<8> Id_t; typedef Id_t IdAlias_t; type bit<8> Other_t; \
                 header ids_t { Id_t id; IdAlias_t alias; Other_t other; bit<8> raw; }",
            ),
            (
                "APPLY",
                "ids_t x; x.id = x.raw; x.raw = x.id; x.other = x.id; if (x.id == x.raw) { } \
                 x.id = x.alias; x.id = (Id_t)x.raw; x.raw = (bit<8>)x.id; if (x.id == x.alias) { }",
            ),
        ]),
    );
}

#[test]
fn error_priorities_in_const_entries() {
    // p4c: "Table with 'const' entries cannot have priorities".
    check_errors(
        "const_entries_priority",
        &program(&[(
            "LOCALS",
            "table t { key = { hdr.h.a: ternary; } actions = { set; } const entries = { priority = 3: 1 &&& 1 : set(1); } }",
        )]),
    );
}

#[test]
fn error_top_level_mark_to_drop_in_a_control_without_standard_metadata() {
    // A top-level action calling the deprecated `mark_to_drop()` needs the
    // standard metadata of the control that runs it.
    check_errors(
        "implicit_std_meta",
        &program(&[
            (
                "DECLS",
                "action my_drop() { mark_to_drop(); } action via() { my_drop(); } \
                 control Sub(inout headers h) { table t { key = { h.h.a: exact; } actions = { my_drop; } } \
                 apply { t.apply(); via(); } }",
            ),
            ("LOCALS", "Sub() sub;"),
            ("APPLY", "sub.apply(hdr); my_drop();"),
        ]),
    );
}

/// `text` with every run of white space one space: generated code is laid
/// out by prettyplease, and what a test looks for is the tokens.
fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `--no-trace-points` removes exactly the trace points: the untraced code
/// is the traced code without its trace blocks, for programs with
/// parser states, extracts into stacks, tables, externs and deparsers.
#[test]
fn without_trace_points_only_the_trace_lines_go() {
    for name in [
        "ipv4_router",
        "parser_features",
        "control_features",
        "block_features",
    ] {
        let input = dir().join("in").join(format!("{name}.p4"));
        let compile = |without_trace_points| {
            let opts = CompileOptions {
                without_trace_points,
                ..CompileOptions::default()
            };
            compile_with_sources(&input, &opts).0.unwrap().rust
        };
        let (traced, untraced) = (compile(false), compile(true));
        assert!(traced.contains("rt.trace"), "{name} has trace points");
        assert!(
            !untraced.contains("rt.trace") && !untraced.contains("TRACE"),
            "{name} without trace points"
        );
        assert_eq!(
            without_trace_points(&traced),
            tokens(&unbrace_arms(&tokens(&untraced))),
            "{name}"
        );
    }
}

/// `code` as its tokens run together: no white space, no trailing comma
/// before a closing bracket. Generated code is laid out by prettyplease,
/// whose line breaks (and the commas that come with them) depend on how
/// long a line would be; the comparisons below are of tokens.
fn tokens(code: &str) -> String {
    let mut s: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    for close in [")", ">", "]", "}"] {
        s = s.replace(&format!(",{close}"), close);
    }
    s
}

/// The end of the brace-delimited block opening at `open` (a `{`) in `s`.
fn block_end(s: &str, open: usize) -> usize {
    let mut depth = 0;
    for (k, c) in s[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + k + 1;
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced block at {open}");
}

/// What the traced build of a program is without its trace points, as
/// [`tokens`]: each `if TRACE { .. }` block, each stage entry point's
/// choice between the traced and the untraced instance (`fn X` dispatching
/// to `fn X_as::<TRACE>`), and the `const TRACE: bool` parameter and its
/// arguments taken away.
fn without_trace_points(traced: &str) -> String {
    let mut s = tokens(traced);
    while let Some(at) = s.find("ifTRACE{") {
        let end = block_end(&s, at + "ifTRACE".len());
        s.replace_range(at..end, "");
    }
    while let Some(at) = s.find("ifself.rt.trace.on{") {
        let start = s[..at].rfind("fn").expect("a dispatching fn");
        let name = &s[start + 2..start + s[start..].find('(').unwrap()];
        let instance = format!("fn{name}_as<constTRACE:bool>(");
        let end = start + s[start..].find(&instance).expect("the traced instance") + instance.len();
        let plain = format!("fn{name}(");
        s.replace_range(start..end, &plain);
    }
    let s = s
        .replace("<constTRACE:bool>", "")
        .replace(",constTRACE:bool>", ">")
        .replace("::<TRACE>", "")
        .replace("::<_,TRACE>", "");
    tokens(&unbrace_arms(&s))
}

/// Match arms whose block holds one expression as `=> expr,`: prettyplease
/// drops such braces unless the expression is too long for a line, so the
/// traced and untraced builds of one arm can differ in them alone.
fn unbrace_arms(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("=>{") {
        let open = at + 2;
        let end = block_end(rest, open);
        let inner = &rest[open + 1..end - 1];
        out.push_str(&rest[..open]);
        let single = !inner.is_empty() && !inner.contains(';') && !inner.contains('{');
        if single {
            out.push_str(inner);
            out.push(',');
        } else {
            out.push('{');
            out.push_str(&unbrace_arms(inner));
            out.push('}');
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------------------
// User-defined externs: misuse is named
// ---------------------------------------------------------------------------

/// An extern object type and two extern functions for the tests below.
const USER_EXTERNS: &str = "extern Tally { Tally(bit<32> start); bit<32> add(in bit<8> step); \
                            bit<32> add(); void peek(out bit<32> sum); }\n\
                            extern bit<16> mix16(in bit<32> a, in bit<16> b);\n\
                            extern void swap_bytes(inout bit<16> v);";

#[test]
fn error_user_extern_method_arity() {
    check_errors(
        "user_extern_method_arity",
        &program(&[
            ("DECLS", USER_EXTERNS),
            ("LOCALS", "Tally(1) t;"),
            ("APPLY", "t.add(1, 2);"),
        ]),
    );
}

#[test]
fn error_user_extern_unknown_method() {
    check_errors(
        "user_extern_unknown_method",
        &program(&[
            ("DECLS", USER_EXTERNS),
            ("LOCALS", "Tally(1) t;"),
            ("APPLY", "t.reset();"),
        ]),
    );
}

#[test]
fn error_user_extern_called_without_instance() {
    check_errors(
        "user_extern_without_instance",
        &program(&[("DECLS", USER_EXTERNS), ("APPLY", "Tally.add();")]),
    );
}

#[test]
fn error_user_extern_constructor_arity() {
    check_errors(
        "user_extern_constructor_arity",
        &program(&[("DECLS", USER_EXTERNS), ("LOCALS", "Tally() t;")]),
    );
}

#[test]
fn error_user_extern_constructor_not_constant() {
    check_errors(
        "user_extern_constructor_not_constant",
        &program(&[
            ("DECLS", USER_EXTERNS),
            ("LOCALS", "Tally((bit<32>)hdr.h.a) t;"),
        ]),
    );
}

#[test]
fn error_user_extern_function_arity() {
    check_errors(
        "user_extern_function_arity",
        &program(&[("DECLS", USER_EXTERNS), ("APPLY", "hdr.h.b = mix16(1);")]),
    );
}

#[test]
fn error_user_extern_argument_types() {
    check_errors(
        "user_extern_argument_types",
        &program(&[
            ("DECLS", USER_EXTERNS),
            ("LOCALS", "Tally(1) t;"),
            ("APPLY", "t.peek(hdr.h.b);"),
        ]),
    );
}

#[test]
fn error_user_extern_inout_needs_an_lvalue() {
    check_errors(
        "user_extern_inout_lvalue",
        &program(&[("DECLS", USER_EXTERNS), ("APPLY", "swap_bytes(16w1);")]),
    );
}

#[test]
fn user_extern_called_in_a_function_compiles() {
    // Functions take the extern objects as the blocks that call them do
    // (`tests/stf/function_externs` runs such calls).
    common::check_compiles(
        "user_extern_in_function",
        &program(&[
            (
                "DECLS",
                &format!(
                    "{USER_EXTERNS}\nTally(3) total;\n\
                     bit<16> g(in bit<16> x) {{ bit<16> y = x; swap_bytes(y); return mix16(total.add(), y); }}"
                ),
            ),
            ("APPLY", "hdr.h.b = g(hdr.h.b);"),
        ]),
    );
}

#[test]
fn error_user_extern_called_in_a_constant() {
    // A constant's initialiser runs at compile time; no block holds the
    // extern objects there.
    check_errors(
        "user_extern_in_constant",
        &program(&[(
            "DECLS",
            &format!("{USER_EXTERNS}\nconst bit<16> K = mix16(1, 2);"),
        )]),
    );
}

#[test]
fn error_user_extern_abstract_method() {
    check_errors(
        "user_extern_abstract_method",
        &program(&[
            (
                "DECLS",
                "extern Hook { Hook(); abstract bit<8> run(in bit<8> x); }",
            ),
            ("LOCALS", "Hook() h;"),
        ]),
    );
}

#[test]
fn user_externs_compile_and_are_listed_for_the_implementation() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("p4-user-externs");
    std::fs::create_dir_all(&tmp).unwrap();
    let file = tmp.join("user_externs_ok.p4");
    let src = program(&[
        ("DECLS", USER_EXTERNS),
        ("LOCALS", "Tally(5) t;"),
        (
            "APPLY",
            "bit<32> s = t.add(hdr.h.a); t.peek(s); hdr.h.b = mix16(s, hdr.h.b); swap_bytes(hdr.h.b);",
        ),
    ]);
    std::fs::write(&file, src).unwrap();
    let (res, sources) = compile_with_sources(&file, &CompileOptions::default());
    let out = res.unwrap_or_else(|d| panic!("{}", render(&d, &sources)));
    let listed: Vec<&str> = out.user_externs.iter().map(|r| r.p4.as_str()).collect();
    assert_eq!(
        listed,
        [
            "extern object type `Tally`",
            "extern function `mix16`",
            "extern function `swap_bytes`"
        ]
    );
    for item in [
        "pub trait Tally: Send + 'static {",
        "fn new(start: u32) -> Self where Self: Sized;",
        "fn add(&mut self, step: &u8) -> u32;",
        "fn add_0(&mut self) -> u32;",
        "fn peek(&mut self, sum: &mut u32);",
        "pub trait Externs: Default + Send + 'static {",
        "type Tally: Tally;",
        "fn mix16(&mut self, a: &u32, b: &u16) -> u16;",
        "fn swap_bytes(&mut self, v: &mut u16);",
        "pub struct Program<X__: Externs> {",
        "I_t: <X__::Tally as Tally>::new(0x5u32),",
        // Calls show in the packet trace, with the object and the result.
        "rt.trace.call(\"Tally.add\", Some(\"I.t\"), None, Some((t__) as u128));",
        "rt.trace.call(\"swap_bytes\", None, None, None);",
    ] {
        assert!(
            squash(&out.rust).contains(&squash(item)),
            "missing `{item}` in:\n{}",
            out.rust
        );
    }
}

#[test]
fn unused_user_externs_need_no_implementation() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("p4-user-externs");
    std::fs::create_dir_all(&tmp).unwrap();
    let file = tmp.join("user_externs_unused.p4");
    std::fs::write(&file, program(&[("DECLS", USER_EXTERNS)])).unwrap();
    let (res, sources) = compile_with_sources(&file, &CompileOptions::default());
    let out = res.unwrap_or_else(|d| panic!("{}", render(&d, &sources)));
    assert!(out.user_externs.is_empty());
    assert!(out.rust.contains("pub struct Program {"), "{}", out.rust);
}

/// README.md's "User-defined externs" stays true: its P4 is the test
/// program's, its traits are what the compiler generates for it, and its
/// implementation is the file the STF corpus runs.
#[test]
fn readme_user_externs_section_is_the_tested_example() {
    let root = dir().join("../../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme
        .find("## User-defined externs")
        .expect("the section exists");
    let end = start + readme[start..].find("\n## Compiler limitations").unwrap();
    let section = &readme[start..end];
    let blocks = |lang: &str| -> Vec<String> {
        let fence = format!("```{lang}\n");
        section
            .split(fence.as_str())
            .skip(1)
            .map(|b| b[..b.find("```").unwrap()].to_string())
            .collect()
    };
    let p4_path = root.join("tests/stf/user_externs.p4");
    let p4 = std::fs::read_to_string(&p4_path).unwrap();
    let p4_blocks = blocks("p4");
    assert_eq!(p4_blocks.len(), 1);
    assert!(
        p4.contains(&p4_blocks[0]),
        "README's P4 is not in {}",
        p4_path.display()
    );
    let (res, sources) = compile_with_sources(&p4_path, &CompileOptions::default());
    let out = res.unwrap_or_else(|d| panic!("{}", render(&d, &sources)));
    let generated = squash(&out.rust);
    let rust = blocks("rust");
    assert_eq!(rust.len(), 3, "two generated traits and the implementation");
    for b in &rust[..2] {
        assert!(generated.contains(&squash(b)), "not generated:\n{b}");
    }
    let implementation =
        std::fs::read_to_string(root.join("tests/stf/user_externs.externs.rs")).unwrap();
    assert_eq!(rust[2], implementation);
}

#[test]
fn error_user_extern_generic_type_needs_type_arguments() {
    check_errors(
        "user_extern_generic_type_arguments",
        &program(&[
            (
                "DECLS",
                "extern Fifo<T> { Fifo(bit<32> n); void push(in T v); }",
            ),
            ("LOCALS", "Fifo(4) f;"),
        ]),
    );
}

#[test]
fn error_user_extern_generic_function_cannot_infer() {
    check_errors(
        "user_extern_generic_cannot_infer",
        &program(&[
            ("DECLS", "extern T pick<T>();"),
            ("APPLY", "hdr.h.a = pick();"),
        ]),
    );
}

/// How the generated `h_t` is emitted in place.
#[derive(Debug, PartialEq)]
enum Wire {
    /// From all its fields (some statement writes the header as a whole).
    Packed,
    /// Left where it was extracted (nothing writes it).
    Kept,
    /// Some fields' bits patched over its wire bytes.
    Patched,
}

/// How the generated `h_t` is emitted in place for the template program
/// with `apply` as the ingress body and `decls` before the parser.
fn h_wire(decls: &str, apply: &str) -> Wire {
    let rust = h_rust(decls, apply);
    let start = rust.find("pub struct h_t {").unwrap();
    let body = &rust[start..start + rust[start..].find('}').unwrap()];
    let imp = rust.find("impl h_t {").unwrap() + 1;
    let imp = &rust[imp..imp + rust[imp..].find("impl ").unwrap()];
    match (
        body.contains("wire__"),
        imp.contains("if let Some(d) = out.wire::<{ Self::BYTES }>(self.wire__"),
    ) {
        (false, _) => Wire::Packed,
        (true, false) => Wire::Kept,
        (true, true) => Wire::Patched,
    }
}

/// The fields of `h_t` its byte-aligned `extract` decodes, for the
/// template program as in [`h_wire`].
fn h_decoded(decls: &str, apply: &str) -> String {
    decoded_fields(&h_rust(decls, apply))
}

/// The fields of `h_t` its byte-aligned `extract` decodes in `rust`.
fn decoded_fields(rust: &str) -> String {
    let imp = rust.find("impl h_t {").unwrap();
    let imp = &rust[imp..];
    let aligned = &imp[..imp.find("return true;").unwrap()];
    ["a", "b", "c"]
        .into_iter()
        .filter(|f| aligned.contains(&format!("self.{f} =")))
        .collect()
}

/// The generated Rust of the template program as in [`h_wire`].
fn h_rust(decls: &str, apply: &str) -> String {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("p4-wire");
    std::fs::create_dir_all(&tmp).unwrap();
    let file = tmp.join(format!("w{:x}.p4", {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (decls, apply).hash(&mut h);
        h.finish()
    }));
    std::fs::write(&file, program(&[("DECLS", decls), ("APPLY", apply)])).unwrap();
    let (res, sources) = compile_with_sources(&file, &CompileOptions::default());
    match res {
        Ok(o) => o.rust,
        Err(d) => panic!("{apply}: {}", render(&d, &sources)),
    }
}

#[test]
fn fields_no_statement_reads_or_writes_are_left_undecoded() {
    for (apply, decoded) in [
        // Validity only: no field.
        ("if (hdr.h.isValid()) { sm.egress_spec = 2; }", ""),
        ("if (hdr.h.a == 1) { sm.egress_spec = 2; }", "a"),
        (
            "hash(meta.m, HashAlgorithm.crc32, 8w0, { hdr.h.a, hdr.h.b }, 8w255);",
            "ab",
        ),
        // Written: patched from its value, so decoded.
        ("hdr.h.c = hdr.h.c + 1;", "c"),
        ("hdr.h.b[3:0] = 1;", "b"),
        // The header's value as a whole: every field.
        ("h_t t = hdr.h; t.a = 1;", "abc"),
        ("if (hdr.h == hdr.h) { sm.egress_spec = 2; }", "abc"),
        ("digest<h_t>(1, hdr.h);", "abc"),
        // Written as a whole: not kept, so every field.
        ("hdr.h.setValid();", "abc"),
    ] {
        assert_eq!(h_decoded("", apply), decoded, "{apply}");
    }
    // Through a call, an argument is read whole.
    assert_eq!(h_decoded("void look(in h_t h) { }", "look(hdr.h);"), "abc");
}

#[test]
fn only_headers_no_statement_writes_keep_their_wire_bytes() {
    // Read only: kept.
    assert_eq!(
        h_wire("", "if (hdr.h.a == 1) { sm.egress_spec = 2; }"),
        Wire::Kept
    );
    assert_eq!(
        h_wire(
            "",
            "hash(meta.m, HashAlgorithm.crc32, 8w0, { hdr.h.a, hdr.h.b }, 8w255);"
        ),
        Wire::Kept
    );
    // Every way of writing a field: only that field patched.
    for apply in [
        "hdr.h.c = 1;",
        "hdr.h.b[3:0] = 1;",
        "random(hdr.h.a, 0, 7);",
        "hash(hdr.h.a, HashAlgorithm.crc32, 8w0, { meta.m }, 8w255);",
        // A local copy keeps the wire offset it was copied with, and its
        // other fields are still those bytes.
        "h_t t = hdr.h; t.a = 1;",
    ] {
        assert_eq!(h_wire("", apply), Wire::Patched, "{apply}");
    }
    // Every way of writing the whole header: packed.
    for apply in [
        "hdr.h.setInvalid();",
        "hdr.h.setValid();",
        "hdr.h = { 1, 2, 3 };",
        "hdr = { { 1, 2, 3 } };",
    ] {
        assert_eq!(h_wire("", apply), Wire::Packed, "{apply}");
    }
    // Through calls: an inout field argument, an inout struct of headers.
    assert_eq!(
        h_wire("void bump(inout bit<8> x) { x = x + 1; }", "bump(hdr.h.a);"),
        Wire::Patched
    );
    assert_eq!(
        h_wire("void touch(inout headers h) { }", "touch(hdr);"),
        Wire::Packed
    );
}

/// Whether a checksum is summed from the wire bytes of `h` in the template
/// program with `parts` filled and `verify` as the body of its verify
/// control.
fn verify_sums_wire(parts: &[(&str, &str)], verify: &str) -> bool {
    sums_wire(parts, "VC", verify)
}

/// As [`verify_sums_wire`], with `body` in control `control` (`VC`, `CC`).
fn sums_wire(parts: &[(&str, &str)], control: &str, body: &str) -> bool {
    control_rust(parts, control, body).contains("csum16_wire_sum")
}

/// The generated Rust of the template program with `parts` filled and
/// `body` in control `control` (`VC`, `CC`).
fn control_rust(parts: &[(&str, &str)], control: &str, body: &str) -> String {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("p4-verify-wire");
    std::fs::create_dir_all(&tmp).unwrap();
    let src = program(parts).replace(
        &format!("control {control}(inout headers hdr, inout meta_t meta) {{ apply {{ }} }}"),
        &format!(
            "control {control}(inout headers hdr, inout meta_t meta) {{ apply {{ {body} }} }}"
        ),
    );
    assert!(src.contains(body), "{control} is in the template");
    let file = tmp.join(format!("v{:x}.p4", {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        src.hash(&mut h);
        h.finish()
    }));
    std::fs::write(&file, &src).unwrap();
    let (res, sources) = compile_with_sources(&file, &CompileOptions::default());
    match res {
        Ok(o) => o.rust,
        Err(d) => panic!("{body}: {}", render(&d, &sources)),
    }
}

#[test]
fn verify_checksum_sums_wire_bytes_only_where_nothing_before_it_writes_the_fields() {
    let all =
        "verify_checksum(true, { hdr.h.a, hdr.h.b, hdr.h.c }, hdr.h.b, HashAlgorithm.csum16);";
    // `b` left out (16 bits, so `c` keeps its offset modulo 16): masked.
    let ac = "verify_checksum(true, { hdr.h.a, hdr.h.c }, hdr.h.b, HashAlgorithm.csum16);";
    assert!(verify_sums_wire(&[], all));
    assert!(verify_sums_wire(&[], ac));
    // Writes after verifyChecksum do not count, nor those of fields the
    // list leaves out.
    assert!(verify_sums_wire(&[("APPLY", "hdr.h.a = 1;")], all));
    assert!(verify_sums_wire(
        &[("PARSER", "hdr.h.b = 1; transition accept;")],
        ac
    ));
    // A field in the list written by the parser or by the verify control
    // itself: summed from its value, left out of the bytes' mask.
    let parser_a = ("PARSER", "hdr.h.a = 1; transition accept;");
    let rust = control_rust(&[parser_a], "VC", all);
    assert!(rust.contains("&[0x00ff_ffff_0000_0000]"), "{rust}");
    let rust = control_rust(&[], "VC", &format!("hdr.h.c = 2; {all}"));
    assert!(rust.contains("&[0xffff_ff00_0000_0000]"), "{rust}");
    // One field left from the bytes is not a run.
    assert!(!verify_sums_wire(&[parser_a], ac));
    // The header as a whole written anywhere, so not kept with its offset.
    assert!(!verify_sums_wire(&[("APPLY", "hdr.h.setInvalid();")], all));
    // Fields at other offsets modulo 16 in the list than in the header.
    assert!(!verify_sums_wire(
        &[],
        "verify_checksum(true, { meta.m, hdr.h.a, hdr.h.b }, hdr.h.b, HashAlgorithm.csum16);"
    ));
    // Not in a top-level checksum control: the fields may have changed.
    assert!(!sums_wire(
        &[(
            "DECLS",
            "control Sub(inout headers hdr) { apply { update_checksum(true, { hdr.h.a, hdr.h.c }, hdr.h.b, HashAlgorithm.csum16); } }"
        )],
        "CC",
        "Sub.apply(hdr);"
    ));
}

#[test]
fn update_checksum_sums_wire_bytes_with_written_fields_from_their_values() {
    let ac = "update_checksum(true, { hdr.h.a, hdr.h.c }, hdr.h.b, HashAlgorithm.csum16);";
    assert!(sums_wire(&[], "CC", ac));
    // One field written: the other alone is not a run.
    assert!(!sums_wire(&[("APPLY", "hdr.h.a = 1;")], "CC", ac));
    let all =
        "update_checksum(true, { hdr.h.a, hdr.h.b, hdr.h.c }, hdr.h.b, HashAlgorithm.csum16);";
    let rust = control_rust(&[], "CC", all);
    // `b`, the checksum, is written: masked out of the bytes, added as a term.
    assert!(rust.contains("&[0xff00_00ff_0000_0000]"), "{rust}");
    assert!(!sums_wire(&[("APPLY", "hdr.h.setValid();")], "CC", all));
}

#[test]
fn fields_only_wire_summed_checksums_read_are_left_undecoded() {
    let verify =
        "verify_checksum(true, { hdr.h.a, hdr.h.b, hdr.h.c }, hdr.h.b, HashAlgorithm.csum16);";
    let update =
        "update_checksum(true, { hdr.h.a, hdr.h.b, hdr.h.c }, hdr.h.b, HashAlgorithm.csum16);";
    // `b` is the checksum, compared or written.
    assert_eq!(decoded_fields(&control_rust(&[], "VC", verify)), "b");
    assert_eq!(decoded_fields(&control_rust(&[], "CC", update)), "b");
    // Read elsewhere too.
    let read_a = ("APPLY", "if (hdr.h.a == 1) { sm.egress_spec = 2; }");
    assert_eq!(decoded_fields(&control_rust(&[read_a], "VC", verify)), "ab");
    // Written before verifyChecksum: summed from its value.
    let parser_a = ("PARSER", "hdr.h.a = 1; transition accept;");
    assert_eq!(
        decoded_fields(&control_rust(&[parser_a], "VC", verify)),
        "ab"
    );
    // Not summed from the wire: every field read.
    assert_eq!(h_decoded("", update), "abc");
    let sub = "control Sub(inout headers hdr) { apply { verify_checksum(true, { hdr.h.a, hdr.h.b, hdr.h.c }, hdr.h.b, HashAlgorithm.csum16); } }";
    assert_eq!(
        decoded_fields(&control_rust(&[("DECLS", sub)], "VC", "Sub.apply(hdr);")),
        "abc"
    );
}

/// How `parse_into` resets `hdr.h` in the template program with `parts`
/// filled: `true` if only when it is valid.
fn h_reset_if_valid(parts: &[(&str, &str)]) -> bool {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("p4-reset");
    std::fs::create_dir_all(&tmp).unwrap();
    let src = program(parts);
    let file = tmp.join(format!("r{:x}.p4", {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        src.hash(&mut h);
        h.finish()
    }));
    std::fs::write(&file, &src).unwrap();
    let (res, sources) = compile_with_sources(&file, &CompileOptions::default());
    let rust = match res {
        Ok(o) => o.rust,
        Err(d) => panic!("{parts:?}: {}", render(&d, &sources)),
    };
    let start = rust.find("fn parse_into(").unwrap();
    let body = &rust[start..start + rust[start..].find("run_parser").unwrap()];
    let guarded = body.contains("if pkt.hdr.h.valid {");
    assert_ne!(
        guarded,
        body.contains("pkt.hdr = Default::default();"),
        "either h alone is guarded or the headers are reset as a whole"
    );
    guarded
}

#[test]
fn parse_into_resets_headers_only_extract_fills_only_if_valid() {
    assert!(h_reset_if_valid(&[]));
    assert!(h_reset_if_valid(&[(
        "APPLY",
        "if (hdr.h.a == 1) { sm.egress_spec = 2; }"
    )]));
    // Any write, of a field or of the whole header, anywhere: an invalid
    // header may hold something else than zero.
    for apply in [
        "hdr.h.a = 1;",
        "hdr.h.setInvalid();",
        "hdr.h.setValid();",
        "hdr = { { 1, 2, 3 } };",
    ] {
        assert!(!h_reset_if_valid(&[("APPLY", apply)]), "{apply}");
    }
    assert!(!h_reset_if_valid(&[(
        "PARSER",
        "hdr.h.b = 1; transition accept;"
    )]));
}

/// Generated code reads like code (#12): laid out by prettyplease, one
/// `#[allow]` for the whole file, no line over 120 characters, for the
/// snapshot programs and the repository's own programs.
#[test]
fn generated_code_is_laid_out_with_one_allow_and_short_lines() {
    let programs = std::fs::read_dir(dir().join("in"))
        .unwrap()
        .chain(std::fs::read_dir(dir().join("../../programs")).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "p4"));
    let mut seen = 0;
    for path in programs {
        let (res, _) = compile_with_sources(&path, &CompileOptions::default());
        let Ok(out) = res else { continue };
        seen += 1;
        assert_eq!(
            out.rust.matches("#[allow(").count(),
            1,
            "{}",
            path.display()
        );
        if let Some((n, l)) = out.rust.lines().enumerate().find(|(_, l)| l.len() > 120) {
            panic!("{} line {}: {l}", path.display(), n + 1);
        }
        assert!(
            !out.rust.contains("\n\n\n"),
            "{}: no runs of blank lines",
            path.display()
        );
    }
    assert!(seen >= 8, "only {seen} programs compiled");
}
