//! Programs p4c refuses, written here from the rule each breaks (P4_16
//! spec sections, v1model.p4, and what p4c's BMv2 back end adds), with the
//! diagnostic each gets pinned in `tests/out/errors/NAME.txt`
//! (`P4C_BLESS=1` rewrites them).

mod common;

use common::{TEMPLATE, check_compiles, check_errors, program};

/// The template with one piece of text replaced (it must be there).
fn edited(from: &str, to: &str) -> String {
    assert!(TEMPLATE.contains(from), "template has no `{from}`");
    program(&[]).replace(from, to)
}

// ---------------------------------------------------------------- V1Switch

#[test]
fn block_parameter_direction_differs_from_v1model() {
    // v1model.p4: control VerifyChecksum<H, M>(inout H hdr, inout M meta).
    check_errors(
        "v1switch_direction",
        &edited("control VC(inout headers hdr", "control VC(in headers hdr"),
    );
}

#[test]
fn block_metadata_type_differs_from_the_parser() {
    check_errors(
        "v1switch_meta_type",
        &edited(
            "control CC(inout headers hdr, inout meta_t meta)",
            "struct other_t { bit<8> x; }\ncontrol CC(inout headers hdr, inout other_t meta)",
        ),
    );
}

#[test]
fn headers_must_be_a_struct_of_headers() {
    // BMv2: "the type should be a struct of headers, stacks, or unions".
    check_errors(
        "v1switch_headers_field",
        &edited(
            "struct headers { h_t h; }",
            "struct headers { h_t h; bit<8> count; }",
        ),
    );
}

#[test]
fn headers_must_not_be_a_header() {
    let src = program(&[])
        .replace("out headers hdr", "out h_t hdr")
        .replace("inout headers hdr", "inout h_t hdr")
        .replace("in headers hdr", "in h_t hdr")
        .replace("extract(hdr.h)", "extract(hdr)")
        .replace("emit(hdr.h)", "emit(hdr)");
    check_errors("v1switch_headers_header", &src);
}

// ------------------------------------------------------------ declarations

#[test]
fn instance_inside_an_apply_block() {
    // p4c: "instances cannot be in a control 'apply' block".
    check_errors(
        "instance_in_apply",
        &program(&[
            ("DECLS", "control Sub(inout headers h) { apply { } }"),
            ("APPLY", "Sub() s; s.apply(hdr);"),
        ]),
    );
}

// ------------------------------------------------------- direct resources

#[test]
fn direct_counter_shared_by_two_tables() {
    // v1model.p4: a direct_counter belongs to the one table whose
    // `counters` names it.
    check_errors(
        "direct_counter_two_tables",
        &program(&[
            (
                "LOCALS",
                "direct_counter(CounterType.packets) hits;\n    \
                 table fwd { key = { hdr.h.a: exact; } actions = { set; } counters = hits; }\n    \
                 table acl { key = { hdr.h.c: exact; } actions = { set; } counters = hits; }",
            ),
            ("APPLY", "fwd.apply(); acl.apply();"),
        ]),
    );
}

#[test]
fn direct_meter_no_action_reads() {
    // BMv2 learns where a direct meter's colour goes from the read call.
    check_errors(
        "direct_meter_unread",
        &program(&[
            (
                "LOCALS",
                "direct_meter<bit<2>>(MeterType.bytes) police;\n    \
                 table fwd { key = { hdr.h.a: exact; } actions = { set; } meters = police; }",
            ),
            ("APPLY", "fwd.apply();"),
        ]),
    );
}

#[test]
fn direct_meter_read_without_a_table() {
    check_errors(
        "direct_meter_no_table",
        &program(&[
            (
                "LOCALS",
                "direct_meter<bit<2>>(MeterType.bytes) police;\n    \
                 action colour() { police.read(meta.m[1:0]); }\n    \
                 table fwd { key = { hdr.h.a: exact; } actions = { colour; } }",
            ),
            ("APPLY", "fwd.apply();"),
        ]),
    );
}

// ------------------------------------------------------------ overloading

#[test]
fn extern_methods_with_the_same_name_and_arity() {
    // Methods overload by their number of parameters or their parameter
    // names (P4_16 §7.2.12): these two have both alike, so no call could
    // tell them apart (over29: `add(n)` beside `add(wide)` is legal).
    check_errors(
        "extern_method_ambiguous",
        &program(&[(
            "DECLS",
            "extern Tally { Tally(); void add(in bit<8> n); void add(in bit<16> n); void add(); }",
        )]),
    );
}

#[test]
fn match_kind_declared_again() {
    // `lpm` is core.p4's already.
    check_errors(
        "match_kind_twice",
        &program(&[("DECLS", "match_kind { lpm, prefix_set }")]),
    );
}

// ------------------------------------------------------------- expressions

#[test]
fn divisor_known_only_at_run_time() {
    // A constant divisor is fine (`% 64`, `/ 3`); one read from the packet
    // or an action's data is not.
    check_errors(
        "divisor_not_constant",
        &program(&[
            (
                "LOCALS",
                "action scale(bit<8> d) { hdr.h.a = hdr.h.a / d; }",
            ),
            (
                "APPLY",
                "hdr.h.b = hdr.h.b % 16w64; hdr.h.a = hdr.h.a % hdr.h.c; scale(2);",
            ),
        ]),
    );
}

#[test]
fn zero_dividend_and_a_run_time_divisor() {
    // p4c's strength reduction makes `0 / e` and `0 % e` zero (its
    // issue2287-bmv2), so a constant zero dividend, folded or written,
    // takes any divisor; any other dividend still needs a constant one
    // (its div3).
    check_errors(
        "divisor_not_constant_nonzero_dividend",
        &program(&[("APPLY", "hdr.h.a = 8w1 / hdr.h.c;")]),
    );
    check_compiles(
        "divisor_run_time_zero_dividend_ok",
        &program(&[(
            "APPLY",
            "hdr.h.a = 8w0 / hdr.h.c; hdr.h.b = 0 % hdr.h.b; hdr.h.c = (8w2 - 2) % hdr.h.a;",
        )]),
    );
}

// ------------------------------------------------------------------ tables

#[test]
fn default_action_rebinds_a_directional_argument() {
    // The default action is the listed action with its bound argument:
    // `hdr.h.c` is not the `hdr.h.a` the list binds.
    check_errors(
        "default_action_other_bound_argument",
        &program(&[
            (
                "LOCALS",
                "action put(inout bit<8> dst, bit<8> v) { dst = v; }\n    \
                 table t { key = { hdr.h.b: exact; } actions = { put(hdr.h.a); } \
                 default_action = put(hdr.h.c, 7); }",
            ),
            ("APPLY", "t.apply();"),
        ]),
    );
}

// -------------------------------------------------------------- parameters

#[test]
fn one_name_for_two_parameters() {
    // A block's type parameters, parameters and constructor parameters
    // share one scope, and so do a prototype's.
    check_errors(
        "duplicate_parameter_names",
        &program(&[(
            "DECLS",
            "control Sub<T>(inout T x)(bit<8> x) { apply { } }\n\
             control Stage(inout headers hdr, in meta_t hdr);\n\
             extern void mix<W>(out W W, in bit<8> y);",
        )]),
    );
}

#[test]
fn default_values_only_for_values_read() {
    // A default stands in for an argument that is read: not for `out`, and
    // not for an `@optional` parameter, which has none when left out.
    check_errors(
        "default_value_not_in",
        &program(&[
            ("DECLS", "extern void probe(@optional in bit<8> level = 1);"),
            ("LOCALS", "action fill(out bit<8> v = 3) { v = 4; }"),
            ("APPLY", "fill(hdr.h.a);"),
        ]),
    );
}

#[test]
fn apply_leaves_out_an_argument_without_a_default() {
    // Only trailing parameters with a default value may be left out of a
    // control's or parser's `apply` (P4_16 §6.8.3); `s` has none.
    check_errors(
        "apply_argument_left_out_no_default",
        &program(&[
            (
                "DECLS",
                "control Shift(inout bit<8> v, in bit<8> s, in bit<8> t = 1) { apply { v = v >> s + t; } }",
            ),
            ("APPLY", "Shift.apply(hdr.h.a);"),
        ]),
    );
    check_compiles(
        "apply_argument_left_out_default_ok",
        &program(&[
            (
                "DECLS",
                "control Shift(inout bit<8> v, in bit<8> s, in bit<8> t = 1) { apply { v = v >> s + t; } }",
            ),
            ("APPLY", "Shift.apply(hdr.h.a, 2);"),
        ]),
    );
}

#[test]
fn hash_base_and_max_without_a_width() {
    // `base` and `max` are typed by hash's own type parameters, which an
    // integer without a width does not fix.
    check_errors(
        "hash_widthless_arguments",
        &program(&[(
            "APPLY",
            "hash(hdr.h.a, HashAlgorithm.crc16, 0, { hdr.h.b }, 8w16); \
             hash(hdr.h.c, HashAlgorithm.crc16, 8w0, { hdr.h.b }, 256);",
        )]),
    );
}

// ------------------------------------------------------ declarations again

#[test]
fn initializer_block_on_a_control_instance() {
    // `= { ... }` implements an extern's abstract methods; a control has none.
    check_errors(
        "initializer_not_extern",
        &program(&[
            ("DECLS", "control Sub(inout headers h) { apply { } }"),
            ("LOCALS", "Sub() s = { void hook() { } };"),
            ("APPLY", "s.apply(hdr);"),
        ]),
    );
}

#[test]
fn generic_header_union_of_a_tuple() {
    // Checked where declared, whatever the type arguments would be.
    check_errors(
        "generic_union_tuple",
        &program(&[(
            "DECLS",
            "header_union Pick<T> { tuple<T, T> both; h_t one; }",
        )]),
    );
}

#[test]
fn hash_algorithm_not_from_v1model() {
    // The program declares v1model's names itself instead of including
    // v1model.p4: p4c's BMv2 back end takes only v1model.p4's
    // HashAlgorithm (its own enum becomes a plain number).
    let src = r#"#include <core.p4>
struct standard_metadata_t { bit<9> egress_spec; }
enum HashAlgorithm { crc16 }
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);
parser Parser<H, M>(packet_in b, out H parsedHdr, inout M meta, inout standard_metadata_t sm);
control VerifyChecksum<H, M>(inout H hdr, inout M meta);
control Ingress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t sm);
control Egress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t sm);
control ComputeChecksum<H, M>(inout H hdr, inout M meta);
control Deparser<H>(packet_out b, in H hdr);
package V1Switch<H, M>(Parser<H, M> p, VerifyChecksum<H, M> vr, Ingress<H, M> ig,
                       Egress<H, M> eg, ComputeChecksum<H, M> ck, Deparser<H> dep);
struct headers { }
struct meta_t { bit<16> r; bit<16> x; }
parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control VC(inout headers hdr, inout meta_t meta) { apply { } }
control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { hash(meta.r, HashAlgorithm.crc16, 16w0, { meta.x }, 16w8); }
}
control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"#;
    check_errors("hash_algorithm_own_enum", src);
}

#[test]
fn field_list_struct_holding_a_header() {
    // BMv2 carries only metadata across resubmit, recirculate and clone3:
    // a struct passed whole may not hold a header (p4c's issue 1653).
    check_errors(
        "field_list_with_header",
        &program(&[
            ("DECLS", "struct carry_t { h_t h; bit<8> n; }"),
            ("LOCALS", "carry_t keep;"),
            ("APPLY", "keep.n = 1; recirculate(keep);"),
        ]),
    );
}

#[test]
fn new_type_mixed_with_its_underlying_type_in_locals() {
    // P4_16 §7.6: `type` declares a new type; locals, parameters and
    // fields of it take values of another type only through a cast.
    check_errors(
        "new_type_locals",
        &program(&[
            ("DECLS", "type bit<9> Port_t;"),
            (
                "LOCALS",
                "action fwd(Port_t p) { sm.egress_spec = p; }\n    \
                 action ok(Port_t p) { sm.egress_spec = (bit<9>)p; }",
            ),
            (
                "APPLY",
                "Port_t here = sm.ingress_port;\n        \
                 Port_t cast = (Port_t)sm.ingress_port;\n        \
                 bit<9> back = cast;\n        \
                 if (cast == sm.ingress_port) { fwd(cast); ok(here); }",
            ),
        ]),
    );
}

#[test]
fn new_type_operands_need_a_cast() {
    // P4_16 §7.6: no operator but `==` and `!=` is defined on a value of a
    // `type`-declared type; arithmetic goes through its underlying type
    // (`(T)((bit<W>)x + 1)`), and an operator's result is of a plain type.
    check_errors(
        "new_type_operators",
        &program(&[
            ("DECLS", "type bit<9> Port_t;"),
            (
                "APPLY",
                "Port_t p = (Port_t)sm.ingress_port;\n        \
                 sm.egress_spec = p + 1;\n        \
                 sm.egress_spec = sm.ingress_port & p;\n        \
                 sm.egress_spec = ~p;\n        \
                 hdr.h.a = p[7:0];\n        \
                 p = sm.ingress_port + 1;\n        \
                 if (p < (Port_t)3) { p = (Port_t)((bit<9>)p + 1); }",
            ),
        ]),
    );
}

#[test]
fn new_type_arguments_and_results_need_a_cast() {
    // P4_16 §7.6: an argument for a parameter of a `type`-declared type
    // is of that type, and a function's result is of its declared type.
    check_errors(
        "new_type_calls",
        &program(&[
            (
                "DECLS",
                "type bit<9> Port_t;\n\
                 bit<9> plain(in bit<9> x) { return x; }\n\
                 Port_t named(in Port_t x) { return x; }\n\
                 bit<9> unwrap(in Port_t x) { return x; }",
            ),
            (
                "LOCALS",
                "action to(Port_t p) { sm.egress_spec = (bit<9>)p; }",
            ),
            (
                "APPLY",
                "Port_t p = (Port_t)sm.ingress_port;\n        \
                 sm.egress_spec = plain(p);\n        \
                 p = named(sm.ingress_port);\n        \
                 sm.egress_spec = named(p);\n        \
                 p = plain((bit<9>)p);\n        \
                 to(sm.ingress_port);\n        \
                 to(named(p));",
            ),
        ]),
    );
}

#[test]
fn new_type_values_with_casts_compile() {
    // The counterpart of the two above: the same uses with the casts
    // P4_16 §7.6 asks for are accepted.
    let src = program(&[
        (
            "DECLS",
            "type bit<9> Port_t;\n\
             bit<9> plain(in bit<9> x) { return x; }\n\
             Port_t named(in Port_t x) { return x; }",
        ),
        (
            "LOCALS",
            "action to(Port_t p) { sm.egress_spec = (bit<9>)p; }",
        ),
        (
            "APPLY",
            "Port_t p = (Port_t)sm.ingress_port;\n        \
             p = (Port_t)((bit<9>)p + 1);\n        \
             sm.egress_spec = plain((bit<9>)p) & sm.ingress_port;\n        \
             p = named((Port_t)(sm.ingress_port + 1));\n        \
             sm.egress_spec = (bit<9>)named(p);\n        \
             if (p == named(p)) { to(p); }\n        \
             to((Port_t)plain(sm.ingress_port));",
        ),
    ]);
    common::check_compiles("new_type_casts_ok", &src);
}

#[test]
fn new_type_constants_need_a_cast() {
    // P4_16 §7.6: a constant declared with a `type` is of that type: it is
    // initialised from a value of another type, and used as one, only
    // through a cast. A plain `bit<9>` constant is a `bit<9>` value.
    check_errors(
        "new_type_constants",
        &program(&[
            (
                "DECLS",
                "type bit<9> Port_t;\n\
                 const bit<9> PLAIN = 3;\n\
                 const Port_t CPU = (Port_t)64;\n\
                 const Port_t FROM_PLAIN = PLAIN;",
            ),
            (
                "APPLY",
                "sm.egress_spec = CPU;\n        \
                 Port_t p = PLAIN;\n        \
                 if (p == CPU) { sm.egress_spec = (bit<9>)p; }",
            ),
        ]),
    );
}

#[test]
fn new_type_initialisers_need_a_cast() {
    // P4_16 §7.6 with §8.13 and §8.26: a struct, header or tuple
    // initialiser gives each field or element a value of its declared type,
    // so a `type`-declared one takes another type's value only through a
    // cast, as an assignment to the field would.
    check_errors(
        "new_type_initialisers",
        &program(&[
            (
                "DECLS",
                "type bit<9> Port_t;\n\
                 type bit<8> Tag_t;\n\
                 struct pair_t { Port_t port; bit<8> tag; }\n\
                 struct plain_t { bit<9> port; bit<8> tag; }\n\
                 header tagged_t { Tag_t tag; }",
            ),
            (
                "APPLY",
                "pair_t a = { sm.ingress_port, 1 };\n        \
                 pair_t b = { port = sm.ingress_port, tag = 1 };\n        \
                 a = { sm.egress_spec, 2 };\n        \
                 plain_t c = { (Port_t)sm.ingress_port, 1 };\n        \
                 tagged_t t = { hdr.h.a };\n        \
                 tuple<Port_t, bit<8>> u = { sm.ingress_port, 1 };\n        \
                 sm.egress_spec = (bit<9>)a.port + (bit<9>)b.port + c.port;\n        \
                 hdr.h.a = (bit<8>)t.tag;",
            ),
        ]),
    );
}

#[test]
fn new_type_generic_results_need_a_cast() {
    // A generic function's type argument inferred from a value of a
    // `type`-declared type is that type (P4_16 §7.6, §16.1): its result is
    // one, and goes to a plain `bit<9>` only through a cast.
    check_errors(
        "new_type_generic_calls",
        &program(&[
            (
                "DECLS",
                "type bit<9> Port_t;\n\
                 T same<T>(in T x) { return x; }",
            ),
            (
                "APPLY",
                "Port_t p = (Port_t)sm.ingress_port;\n        \
                 bit<9> b = same(p);\n        \
                 Port_t q = same(sm.ingress_port);\n        \
                 sm.egress_spec = same<Port_t>(p);\n        \
                 if (q == p) { sm.egress_spec = b; }",
            ),
        ]),
    );
}

#[test]
fn new_type_constants_initialisers_and_generics_with_casts_compile() {
    // The counterpart of the three above: the same uses with the types
    // kept, or the casts P4_16 §7.6 asks for, are accepted. An integer
    // literal is taken without a cast (an `int` converts implicitly, §8.11.2;
    // kept permissive, as refusing would cost programs p4c may accept).
    let src = program(&[
        (
            "DECLS",
            "type bit<9> Port_t;\n\
             const Port_t CPU = (Port_t)64;\n\
             const Port_t SPARE = 65;\n\
             const Port_t ALSO_CPU = CPU;\n\
             struct pair_t { Port_t port; bit<8> tag; }\n\
             T same<T>(in T x) { return x; }\n\
             void swap<T>(inout T a, inout T b) { T t = a; a = b; b = t; }",
        ),
        (
            "APPLY",
            "Port_t p = (Port_t)sm.ingress_port;\n        \
             Port_t q = same(p);\n        \
             bit<9> b = same(sm.ingress_port);\n        \
             Port_t r = same<Port_t>(CPU);\n        \
             pair_t a = { p, 1 };\n        \
             pair_t c = { port = CPU, tag = 2 };\n        \
             pair_t d = { 7, 3 };\n        \
             tuple<Port_t, bit<8>> u = { q, 1 };\n        \
             Port_t lit = 5;\n        \
             swap(p, lit);\n        \
             if (a.port == CPU || c.port == ALSO_CPU || r == SPARE || d.port == lit) {\n            \
                 sm.egress_spec = (bit<9>)u[0] + b;\n        \
             }",
        ),
    ]);
    common::check_compiles("new_type_kept_or_cast_ok", &src);
}

#[test]
fn computed_key_needs_a_name() {
    // P4_16 §14.2.1.1 leaves a key's control-plane name to the compiler;
    // p4c derives one only from fields, slices, stack elements, masks with
    // a constant and isValid(), and asks for @name on anything else.
    check_errors(
        "key_needs_name",
        &program(&[(
            "LOCALS",
            "table sum { key = { hdr.h.a + hdr.h.c : exact; } actions = { set; } }\n    \
             table named { key = { hdr.h.a + hdr.h.c : exact @name(\"sum\"); \
             hdr.h.b & 0xff : ternary; hdr.h.isValid() : exact; hdr.h.b[3:0] : exact; } \
             actions = { set; } }",
        )]),
    );
}

#[test]
fn entry_repeats_the_arguments_the_actions_list_binds() {
    // P4_16 §14.2.1.2: an action in the `actions` list may bind its
    // directional arguments; an entry naming it repeats them (p4c:
    // "argument does not match declaration in actions list").
    check_errors(
        "entry_bound_args",
        &program(&[
            (
                "LOCALS",
                "action fan(in bit<8> g, bit<9> port) { sm.egress_spec = port; hdr.h.c = g; }\n    \
                 table t { key = { hdr.h.a : exact; } actions = { fan(1); }\n        \
                 const entries = { 1 : fan(2, 3); 2 : fan(1, 4); } }",
            ),
            ("APPLY", "t.apply();"),
        ]),
    );
}

#[test]
fn method_type_parameter_reuses_the_extern_one() {
    // An extern's type parameters are in scope in its methods; a method's
    // own type parameter of the same name would hide it (p4c refuses).
    check_errors(
        "extern_method_type_param",
        &program(&[(
            "DECLS",
            "extern Tally<T> { Tally(); void add<T>(in T v); void put<U>(in U v); }",
        )]),
    );
}

#[test]
fn error_in_a_control_instantiated_twice_is_reported_once() {
    // Each instance of a control with actions is checked on its own (its
    // actions are named by the instance path); its errors are the
    // declaration's, reported once.
    check_errors(
        "control_twice_error",
        &program(&[
            (
                "DECLS",
                "control Sub(inout headers h) { action a() { h.h.zz = 1; } apply { a(); } }",
            ),
            ("LOCALS", "Sub() one; Sub() two;"),
            ("APPLY", "one.apply(hdr); two.apply(hdr);"),
        ]),
    );
}

#[test]
fn control_takes_a_parser_as_constructor_parameter() {
    // A constructor parameter is instantiated in the block, and a control
    // may not hold a parser instance (p4c: "instantiation of parser in
    // control"); refused at the declaration, instantiated or not.
    check_errors(
        "control_ctor_param_parser",
        &program(&[(
            "DECLS",
            "parser Sub(packet_in pkt);\n\
             control Wrap(inout headers h)(Sub s) { apply { } }",
        )]),
    );
}

#[test]
fn parser_takes_a_control_as_constructor_parameter() {
    check_errors(
        "parser_ctor_param_control",
        &program(&[(
            "DECLS",
            "control Step(inout bit<8> x);\n\
             parser Walk(packet_in pkt)(Step s) { state start { transition accept; } }",
        )]),
    );
}

#[test]
fn generic_struct_takes_itself_as_type_argument() {
    // p4c: "contains self as type argument", however deep the instance.
    check_errors(
        "generic_struct_self_argument",
        &program(&[(
            "DECLS",
            "struct pair_t<T> { T first; T second; }\n\
             typedef pair_t<bit<8>> p8_t;\n\
             typedef pair_t<tuple<p8_t, bit<4>>> nested_t;",
        )]),
    );
}

#[test]
fn package_argument_differs_from_the_parameter_type() {
    // A package's arguments unify with its parameters' types: the control
    // passed for `Filter x` has an `in` parameter where Filter has `out`.
    let src = format!(
        "{}control Filter(out bool f);\npackage Other(Filter x);\n\
         control Mine(in bool f) {{ apply {{ }} }}\nOther(Mine()) other;\n",
        program(&[])
    );
    check_errors("package_argument_direction", &src);
}

// ------------------------------------------------------------------ i12rej

#[test]
fn switch_inside_an_action() {
    // p4c and BMv2: "switch statements not supported in actions"; an
    // action is one primitive list in BMv2, where only `if` is predicated.
    check_errors(
        "switch_in_action",
        &program(&[
            (
                "LOCALS",
                "action pick() { switch (hdr.h.a) { 1: { meta.m = 2; } default: { } } }",
            ),
            ("APPLY", "pick();"),
        ]),
    );
}

#[test]
fn switch_in_the_apply_block_compiles() {
    common::check_compiles(
        "switch_in_apply_ok",
        &program(&[
            (
                "LOCALS",
                "action pick() { if (hdr.h.a == 1) { meta.m = 2; } }",
            ),
            (
                "APPLY",
                "pick(); switch (hdr.h.c) { 1: { meta.m = 3; } default: { } }",
            ),
        ]),
    );
}

#[test]
fn table_applied_in_an_action_list_argument() {
    // p4c: "table invocation in action argument": a bound argument is
    // evaluated when the table runs the action and may not run a table.
    check_errors(
        "table_apply_in_action_argument",
        &program(&[
            (
                "LOCALS",
                "action add(in bit<8> v) { hdr.h.c = hdr.h.c + v; }\n    \
                 table inner { key = { hdr.h.a: exact; } actions = { set; } }\n    \
                 table outer { key = { hdr.h.c: exact; } actions = { add(inner.apply().hit ? 8w1 : 8w2); } }",
            ),
            ("APPLY", "outer.apply();"),
        ]),
    );
}

#[test]
fn parser_that_never_ends() {
    // p4c: "Parser never reaches accept or reject state": every path from
    // `start` goes round a loop of plain transitions (a state that calls
    // something, an extract or a verify, may reject, so it counts as an end).
    let src = program(&[(
        "PARSER",
        "transition one; }\n    state one { transition two; }\n    state two { transition one;",
    )])
    .replace("pkt.extract(hdr.h);", "meta.m = 0;");
    check_errors("parser_never_ends", &src);
}

#[test]
fn p4runtime_translation_to_an_unsupported_type() {
    // p4c's grammar takes `bit<W>` (literal W) or `string` as the
    // controller's type of a translated `type`.
    check_errors(
        "p4rt_translation_type",
        &program(&[(
            "DECLS",
            "@p4runtime_translation(\"example.org/Port_t\", bool)\ntype bit<9> Port_t;\n\
             @p4runtime_translation(\"example.org/Queue_t\", bit<4 + 4>)\ntype bit<5> Queue_t;\n\
             @p4runtime_translation(\"example.org/Vrf_t\", bit<32>)\ntype bit<12> Vrf_t;\n\
             @p4runtime_translation(\"example.org/Name_t\", string)\ntype bit<16> Name_t;",
        )]),
    );
}

#[test]
fn table_without_actions() {
    // p4c: "Table t does not have an `actions' property".
    check_errors(
        "table_no_actions",
        &program(&[
            ("LOCALS", "table fwd { key = { hdr.h.a: exact; } }"),
            ("APPLY", "fwd.apply();"),
        ]),
    );
}

#[test]
fn table_properties_out_of_order() {
    // p4c reads a table's properties in order: `default_action` names an
    // action of a list declared before it, `entries` match a key declared
    // before them.
    check_errors(
        "table_property_order",
        &program(&[
            (
                "LOCALS",
                "table fwd {\n        default_action = set(1);\n        \
                 const entries = { 7: set(2); }\n        \
                 key = { hdr.h.a: exact; }\n        actions = { set; }\n    }",
            ),
            ("APPLY", "fwd.apply();"),
        ]),
    );
}

#[test]
fn match_annotation_names_no_match_kind() {
    // A value set's struct field takes `@match(kind)`; p4c: "value must be
    // a match_kind".
    check_errors(
        "match_annotation_value",
        &program(&[(
            "DECLS",
            "struct vs_key_t { @match(ternary) bit<8> a; @match(2) bit<16> b; }",
        )]),
    );
}

#[test]
fn structured_annotation_given_twice_or_holding_a_list() {
    // P4_16 §18.2: one structured annotation of a name per element, and
    // not beside an unstructured one of that name; values are literals.
    check_errors(
        "structured_annotation",
        &program(&[(
            "DECLS",
            "@size[4] @size[8] const bit<8> K_A = 1;\n\
             @tag(\"x\") @tag[\"y\"] const bit<8> K_B = 2;\n\
             @ranges[lo = { 1, 2 }] const bit<8> K_C = 3;\n\
             @tag(\"x\") @tag(\"z\") @ok[k = 1, j = \"s\"] const bit<8> OK = 4;",
        )]),
    );
}

#[test]
fn extern_method_returning_int() {
    // p4c: "int: illegal return type for method".
    check_errors(
        "extern_method_returns_int",
        &program(&[(
            "DECLS",
            "extern Gauge { Gauge(); int level(); }\nextern int depth();",
        )]),
    );
}

#[test]
fn new_type_cast_from_another_width() {
    // P4_16 §8.11: a `type` converts to and from its underlying type only
    // (p4c's issue3221); an integer literal or a value of the underlying
    // type converts directly.
    check_errors(
        "new_type_cast_width",
        &program(&[
            ("DECLS", "type bit<9> Port_t;"),
            (
                "APPLY",
                "Port_t p = (Port_t)hdr.h.b;\n        \
                 Port_t q = (Port_t)(bit<9>)hdr.h.b;\n        \
                 Port_t r = (Port_t)5;\n        \
                 sm.egress_spec = (bit<9>)q + (bit<9>)r + (bit<9>)p;",
            ),
        ]),
    );
}

#[test]
fn integer_label_on_a_serializable_enum_switch() {
    // P4_16 §8.3: no implicit cast from an integer to a serializable enum;
    // p4c's issue3623-3. A member or a cast label compiles.
    check_errors(
        "switch_enum_integer_label",
        &program(&[
            ("DECLS", "enum bit<8> Kind_t { A = 1, B = 2 }"),
            (
                "APPLY",
                "Kind_t k = (Kind_t)hdr.h.a;\n        \
                 switch (k) { Kind_t.A: { meta.m = 1; } (Kind_t)2: { meta.m = 2; } 3: { } default: { } }",
            ),
        ]),
    );
}

// ------------------------------------------------------ packet_in.length()

#[test]
fn packet_length_is_bit32() {
    // core.p4: `bit<32> length();` no implicit narrowing to bit<16>.
    check_errors(
        "packet_length_width",
        &program(&[(
            "PARSER",
            "bit<16> n = pkt.length();\n        meta.m = (bit<8>)n;\n        transition accept;",
        )]),
    );
}

#[test]
fn packet_out_has_no_length() {
    // core.p4 declares `length()` on packet_in only.
    check_errors(
        "packet_out_length",
        &edited(
            "apply { pkt.emit(hdr.h); }",
            "apply { if (pkt.length() == 0) { pkt.emit(hdr.h); } }",
        ),
    );
}

// ------------------------------------------------ extern instances in parsers

#[test]
fn direct_counter_in_a_parser() {
    // v1model.p4: a direct_counter is a table's (`counters = dc`), and
    // tables are only in controls.
    check_errors(
        "parser_direct_counter",
        &edited(
            "    state start {",
            "    direct_counter(CounterType.packets) dc;\n    state start {",
        ),
    );
}

#[test]
fn control_instance_in_a_parser() {
    // P4_16 §12.3: a parser instantiates parsers and externs, not controls.
    check_errors(
        "parser_control_instance",
        &program(&[("DECLS", "control Sub(inout headers h) { apply { } }")])
            .replace("    state start {", "    Sub() s;\n    state start {"),
    );
}

#[test]
fn parser_register_is_not_seen_by_a_control() {
    // An instance declared in a parser is local to it (P4_16 §12.13).
    check_errors(
        "parser_register_in_control",
        &program(&[("APPLY", "r.write(0, 1);")]).replace(
            "    state start {",
            "    register<bit<8>>(4) r;\n    state start {",
        ),
    );
}

#[test]
fn parser_register_read_arity() {
    // v1model.p4: `void read(out T result, in I index)`.
    check_errors(
        "parser_register_read_arity",
        &program(&[("PARSER", "r.read(meta.m);\n        transition accept;")]).replace(
            "    state start {",
            "    register<bit<8>>(4) r;\n    state start {",
        ),
    );
}

#[test]
fn top_level_selector_used_in_a_parser() {
    // A top-level action_selector is a table's; a parser cannot call it.
    check_errors(
        "parser_top_level_selector",
        &program(&[
            (
                "DECLS",
                "action_selector(HashAlgorithm.crc16, 32w16, 32w10) sel;",
            ),
            ("PARSER", "sel.read();\n        transition accept;"),
        ]),
    );
}

#[test]
fn top_level_register_read_in_a_function_takes_its_cell_type() {
    // v1model.p4: `register<T>.read(out T result, ..)`; a function reading a
    // bit<8> register into a bit<16> is a type error, as in a control.
    check_errors(
        "function_register_cell_type",
        &program(&[
            (
                "DECLS",
                "register<bit<8>>(4) g;\nbit<16> rd() { bit<16> v; g.read(v, 0); return v; }",
            ),
            ("APPLY", "hdr.h.b = rd();"),
        ]),
    );
}

// ------------------------------------------------------ digests of scalars

#[test]
fn scalar_digest_type_argument_must_match_the_data() {
    // v1model.p4: `digest<T>(in bit<32> receiver, in T data)`.
    check_errors(
        "digest_scalar_width",
        &program(&[("APPLY", "digest<bit<16>>(1, hdr.h.a);")]),
    );
}

#[test]
fn digest_of_an_error_value() {
    // An `error` is not a bit string: P4Info has no type spec for it alone.
    check_errors(
        "digest_of_error",
        &program(&[("APPLY", "digest(1, error.NoError);")]),
    );
}

#[test]
fn function_in_a_control_uses_its_register() {
    // P4_16 §10: functions are declared at the top level; ours also takes
    // one in a control, which cannot reach the control's instances.
    check_errors(
        "function_in_control_extern",
        &program(&[
            (
                "LOCALS",
                "register<bit<8>>(4) r;\n    bit<8> rd() { bit<8> v; r.read(v, 0); return v; }",
            ),
            ("APPLY", "meta.m = rd();"),
        ]),
    );
}

#[test]
fn top_level_extern_method_in_a_constant() {
    // A constant is a compile-time value (P4_16 §7.1.6); an extern method
    // runs per packet.
    check_errors(
        "global_extern_in_constant",
        &program(&[
            (
                "DECLS",
                "extern Acc { Acc(bit<16> s); bit<16> add(in bit<16> v); }\n\
                 Acc(1) acc;\nconst bit<16> K = acc.add(1);",
            ),
            ("APPLY", "hdr.h.b = K;"),
        ]),
    );
}

// ----------------------------------------------------------------- i12rej2

#[test]
fn entry_priority_on_a_table_without_ternary_keys() {
    // P4_16 §14.2.1.4: a priority orders entries whose keysets may overlap;
    // with only exact and lpm keys none can (p4c's init-entries-error1-bmv2,
    // "match type does not require priorities"). The same entries on a
    // ternary key compile (`entry_priority_on_a_ternary_key_ok`).
    check_errors(
        "entry_priority_exact_lpm",
        &program(&[(
            "LOCALS",
            "table route {\n        \
             key = { hdr.h.a : exact; hdr.h.b : lpm; }\n        \
             actions = { set; }\n        \
             entries = { priority = 5: (1, 0x100 &&& 0xff00) : set(1);\n                     \
             (2, 0x200 &&& 0xff00) : set(2); }\n    }",
        )]),
    );
}

#[test]
fn entry_priority_on_a_ternary_key_ok() {
    check_compiles(
        "entry_priority_ternary_ok",
        &program(&[
            (
                "LOCALS",
                "table route {\n        \
                 key = { hdr.h.a : exact; hdr.h.b : ternary; }\n        \
                 actions = { set; }\n        \
                 entries = { priority = 5: (1, 0x100 &&& 0xff00) : set(1);\n                     \
                 (2, 0x200 &&& 0xff00) : set(2); }\n    }",
            ),
            ("APPLY", "route.apply();"),
        ]),
    );
}

#[test]
fn unary_plus_on_a_bool() {
    // P4_16 §8.6/§8.7: unary `+` is defined on integers (p4c's issue3153).
    check_errors(
        "unary_plus_bool",
        &program(&[(
            "APPLY",
            "bool b = +hdr.h.isValid();\n        \
             bit<8> x = +hdr.h.a;\n        \
             if (b) { meta.m = x + +8w1; }",
        )]),
    );
}

#[test]
fn default_action_struct_argument_differs_from_the_bound_one() {
    // A default action repeats the arguments its `actions` list binds; a
    // struct-valued argument matches field by field and a call by what it
    // calls (p4c's issue3671-2). Repeating it exactly compiles.
    let table = |default: &str| {
        program(&[
            (
                "DECLS",
                "struct pair_t { bit<8> x; bit<8> y; }\nbit<8> low(in bit<16> v) { return v[7:0]; }",
            ),
            (
                "LOCALS",
                &format!(
                    "action take(in pair_t p) {{ meta.m = p.x + p.y; }}\n    \
                     table t {{\n        \
                     actions = {{ take({{x = low(hdr.h.b), y = hdr.h.a}}); }}\n        \
                     default_action = {default};\n    }}"
                ),
            ),
            ("APPLY", "t.apply();"),
        ])
    };
    check_errors(
        "default_action_struct_argument",
        &table("take({x = hdr.h.a, y = low(hdr.h.b)})"),
    );
    check_compiles(
        "default_action_struct_argument_ok",
        &table("take({x = low(hdr.h.b), y = hdr.h.a})"),
    );
}

#[test]
fn object_parameter_with_a_direction() {
    // P4_16 §6.8: a parameter of an extern, parser or control type is an
    // object and has no direction; checked on declarations without a body
    // too (p4c's issue3787), even when nothing uses them.
    check_errors(
        "object_parameter_direction",
        &program(&[(
            "DECLS",
            "extern Tally { Tally(); void add(in bit<8> v); }\n\
             control Use(in Tally t, inout headers h);\n\
             extern void feed(inout counter c, in bit<32> i);",
        )]),
    );
}

#[test]
fn generic_struct_without_type_arguments_in_a_signature() {
    // A generic struct names a type only with its type arguments, in an
    // extern function's signature as anywhere (p4c's issue3293), used or not.
    check_errors(
        "generic_struct_in_signature",
        &program(&[(
            "DECLS",
            "struct pair_t<T> { T x; T y; }\n\
             extern pair_t make_pair(in bit<8> v);\n\
             extern pair_t<bit<8>> make_typed(in bit<8> v);",
        )]),
    );
}

#[test]
fn type_arguments_to_something_not_generic() {
    // P4_16 §8.18: a call gives as many type arguments as the callee has
    // type parameters; an action, a table's `apply`, a header's methods and
    // v1model's `mark_to_drop` have none (p4c's issue3656 calls `a<bit>()`).
    check_errors(
        "type_arguments_not_generic",
        &program(&[
            ("LOCALS", "table fwd { actions = { set; } }"),
            (
                "APPLY",
                "set<bit<9>>(1);\n        \
                 fwd.apply<bit<8>>();\n        \
                 if (hdr.h.isValid<bit<8>>()) { mark_to_drop<bit<8>>(sm); }",
            ),
        ]),
    );
}

#[test]
fn default_value_that_is_not_a_constant() {
    // P4_16 §6.8.3: a parameter's default value is known at compile time;
    // p4c's issue3316 gives a function call. Constants, casts of them and
    // struct values of constants compile (`default_value_constants_ok`).
    check_errors(
        "default_value_not_constant",
        &program(&[
            (
                "DECLS",
                "bit<8> twice(in bit<8> v) { return v + v; }\n\
                 bit<8> pick(in bit<8> a = twice(3), in bit<8> b) { return a ^ b; }",
            ),
            ("LOCALS", "action mark(bit<8> m = hdr.h.a) { meta.m = m; }"),
            ("APPLY", "meta.m = pick(b = 1); mark();"),
        ]),
    );
}

#[test]
fn default_value_constants_ok() {
    check_compiles(
        "default_value_constants_ok",
        &program(&[
            (
                "DECLS",
                "const bit<8> BASE = 7;\n\
                 struct pair_t { bit<8> x; bit<8> y; }\n\
                 bit<8> pick(in bit<8> a = BASE + 1, in bit<8> b = (bit<8>)16w3, \
                 in pair_t p = {x = 1, y = BASE}) { return a ^ b ^ p.x ^ p.y; }",
            ),
            ("APPLY", "meta.m = pick();"),
        ]),
    );
}

#[test]
fn extern_method_taking_its_own_extern() {
    // A method of extern `E` that takes an `E` makes a self-referencing
    // type, which p4c does not support (issue2544_self_ref); refused on the
    // declaration, used or not.
    check_errors(
        "extern_self_reference",
        &program(&[(
            "DECLS",
            "extern Chain { Chain(); void link(Chain next); bit<8> value(); }",
        )]),
    );
}

#[test]
fn serializable_enum_over_a_new_type_or_out_of_range() {
    // P4_16 §8.3: a serializable enum's underlying type is bit<W> or int<W>,
    // not a `type` over one (p4c's serenum-type and serenum-typedef), and
    // each member's value fits it. A typed value wraps as usual.
    check_errors(
        "serializable_enum_type_and_values",
        &program(&[(
            "DECLS",
            "type bit<8> Proto_t;\n\
             typedef Proto_t ProtoAlias_t;\n\
             enum ProtoAlias_t Proto { TCP = 6 }\n\
             enum bit<4> Nibble { LOW = 0, HIGH = 15, OVER = 16, NEG = -1 }\n\
             enum int<8> Signed { MIN = -128, MAX = 127, WRAPPED = (int<8>)4 * 4 * 4 * 4 }",
        )]),
    );
}

#[test]
fn new_type_over_something_not_a_base_type() {
    // P4_16 §7.6: `type` gives a new name to bool, bit<W> or int<W> (or to
    // a type over one); p4c's typedef-and-type-definitions and
    // tuple-newtype give it headers, structs, enums, varbits and tuples.
    check_errors(
        "new_type_not_base",
        &program(&[(
            "DECLS",
            "type h_t Wrapped_t;\n\
             type varbit<16> Blob_t;\n\
             type tuple<bit<8>> One_t;\n\
             typedef bit<8> Byte_t;\n\
             type Byte_t Octet_t;\n\
             type Octet_t Again_t;\n\
             type bool Flag_t;",
        )]),
    );
}

// ---- i12rej20

#[test]
fn initializer_block_on_an_extern_without_abstract_methods() {
    // P4_16 §11.3.1: an instance's initializer block implements the
    // extern's abstract methods; p4c refuses one on an extern that has none
    // ("instance initializers for extern without abstract methods", its
    // equate-type-extern-and-non-object, cut from issue3307).
    check_errors(
        "initializer_block_without_abstract_methods",
        &program(&[
            ("DECLS", "extern Plain { Plain(); }"),
            (
                "LOCALS",
                "Plain() p = {\n        bit<8> f(in bit<8> x) { return x; }\n    };",
            ),
        ]),
    );
    // With abstract methods, each function of the block must name one.
    check_errors(
        "initializer_block_names_no_abstract_method",
        &program(&[
            (
                "DECLS",
                "extern Hooked { Hooked(); abstract bit<8> hook(in bit<8> x); }",
            ),
            (
                "LOCALS",
                "Hooked() hk = {\n        bit<8> other(in bit<8> x) { return x; }\n    };",
            ),
        ]),
    );
}

#[test]
fn method_type_arguments_are_checked() {
    // P4_16 §8.18: a call gives as many type arguments as the method has
    // type parameters. `counter.count` and a user extern's non-generic
    // method have none; `meter.execute_meter<T>` has one, and its `out T`
    // argument must be exactly T.
    check_errors(
        "method_type_arguments",
        &program(&[
            (
                "DECLS",
                "extern Box { Box(); bit<8> get(); T echo<T>(in T x); }",
            ),
            (
                "LOCALS",
                "counter(4, CounterType.packets) c;\n    \
                 meter(4, MeterType.packets) m;\n    \
                 Box() bx;",
            ),
            (
                "APPLY",
                "c.count<bit<32>>(0);\n        \
                 m.execute_meter<bit<2>>(0, meta.m);\n        \
                 m.execute_meter<bit<8>, bit<8>>(0, meta.m);\n        \
                 meta.m = bx.get<bit<8>>();\n        \
                 meta.m = bx.echo<bit<8>, bool>(meta.m);",
            ),
        ]),
    );
}

#[test]
fn method_type_arguments_that_fit_compile() {
    // The accepted counterpart: the right number of type arguments, and
    // none where inferred.
    check_compiles(
        "method_type_arguments_ok",
        &program(&[
            ("DECLS", "extern Box { Box(); T echo<T>(in T x); }"),
            ("LOCALS", "meter(4, MeterType.packets) m;\n    Box() bx;"),
            (
                "APPLY",
                "m.execute_meter<bit<8>>(0, meta.m);\n        \
                 meta.m = bx.echo<bit<8>>(meta.m);\n        \
                 meta.m = bx.echo(meta.m);",
            ),
        ]),
    );
}

#[test]
fn typedef_of_a_derived_type_declaration() {
    // P4_16's grammar: `typedef` (and `type`) may declare the type it names
    // inline; the header, struct or enum is declared as if on its own.
    check_compiles(
        "typedef_derived_type",
        &edited(
            "struct meta_t { bit<8> m; }",
            "typedef struct meta_s { bit<8> m; } meta_t;\n\
             typedef header extra_h { bit<8> x; } Extra_t;\n\
             typedef enum bit<8> Kind_e { A = 1, B = 2 } Kind_t;",
        )
        .replace(
            "//APPLY",
            "Extra_t e = { 1 }; extra_h e2 = e; meta_s s = meta;\n        \
             if (s.m == (bit<8>)Kind_t.B) { meta.m = e2.x; }",
        ),
    );
    // The inline type is declared once: a second declaration of its name
    // is a duplicate, and `type` over a header is still refused (§7.6).
    check_errors(
        "typedef_derived_type_errors",
        &program(&[(
            "DECLS",
            "typedef header extra_h { bit<8> x; } Extra_t;\n\
             header extra_h { bit<8> y; }\n\
             type header wrapped_h { bit<8> z; } Wrapped_t;",
        )]),
    );
}

#[test]
fn packet_method_type_arguments_are_checked() {
    // core.p4: `extract<T>(out T hdr)` and `emit<T>(in T hdr)`; a type
    // argument given must be the argument's type (p4c's issue2795 error
    // cuts give `emit<int>` a header).
    check_errors(
        "packet_method_type_arguments",
        &edited("pkt.extract(hdr.h);", "pkt.extract<other_h>(hdr.h);")
            .replace("//DECLS", "header other_h { bit<8> x; }")
            .replace("pkt.emit(hdr.h);", "pkt.emit<other_h>(hdr.h);"),
    );
    check_compiles(
        "packet_method_type_arguments_ok",
        &edited("pkt.extract(hdr.h);", "pkt.extract<h_t>(hdr.h);")
            .replace("pkt.emit(hdr.h);", "pkt.emit<h_t>(hdr.h);"),
    );
}

// ---- gaps21

#[test]
fn int_constructor_parameter_takes_an_untyped_integer() {
    // P4_16 §7.1.6.5: `int` is infinite precision, and no cast makes a
    // `bit<W>` value one; a constructor argument for it is an integer
    // without a width (p4c: "cannot unify bit<8> to int").
    check_errors(
        "ctor_int_param_typed_argument",
        &program(&[
            (
                "DECLS",
                "control Add(inout bit<8> v)(int k) { apply { v = v + (bit<8>)k; } }",
            ),
            ("LOCALS", "Add(8w3) typed; Add(true) flag;"),
            ("APPLY", "typed.apply(hdr.h.a); flag.apply(hdr.h.c);"),
        ]),
    );
    // The parameter is a constant, and a default value is an `int` too.
    check_errors(
        "ctor_int_param_misuse",
        &program(&[(
            "DECLS",
            "control Set(inout bit<8> v)(int k) { apply { k = 1; v = (bit<8>)k; } }\n\
             control Def(inout bit<8> v)(int k = 4w2) { apply { v = (bit<8>)k; } }",
        )]),
    );
    check_compiles(
        "ctor_int_param_ok",
        &program(&[
            (
                "DECLS",
                "control Add(inout bit<8> v)(int k, int w = 4) {\n\
                 bit<w> low = 0;\n\
                 apply { low = (bit<w>)v; v = v + k + (bit<8>)low; } }",
            ),
            (
                "LOCALS",
                "Add(3) three; Add(-1, 2) less; Add(1 << 10) wraps;",
            ),
            (
                "APPLY",
                "three.apply(hdr.h.a); less.apply(hdr.h.c); wraps.apply(meta.m);",
            ),
        ]),
    );
}

#[test]
fn stack_initialiser_needs_one_header_per_element() {
    // P4_16 §8.18: a stack initialiser lists one header (or union) per
    // element of the stack, each an initialiser of the element type.
    check_errors(
        "stack_initialiser_errors",
        &program(&[(
            "APPLY",
            "h_t[2] short = { {1, 2, 3} };\n\
             h_t[2] wrong = (h_t[2]){ {1, 2, 3}, {1, 2} };\n\
             h_t[2] scalars = { 8w1, 8w2 };\n        \
             hdr.h.a = K[hdr.h.a].a; hdr.h.c = K[8w2].c;",
        )])
        .replace(
            "control I(",
            "const h_t[2] K = { {1, 2, 3}, (h_t){#} };\ncontrol I(",
        ),
    );
    check_compiles(
        "stack_initialiser_ok",
        &program(&[
            ("DECLS", "header G<T> { bit<8> b; T t; }"),
            (
                "APPLY",
                "h_t[2] s = { {1, 2, 3}, (h_t){#} };\n\
                 G<bit<16>>[2] g = (G<bit<16>>[2]){ {1, 2}, {3, 4} };\n\
                 s = (h_t[2]){ hdr.h, s[0] };\n\
                 if (s == { {1, 2, 3}, (h_t){#} }) { hdr.h.a = g[1].b; }",
            ),
        ]),
    );
}

#[test]
fn zero_width_bit_strings() {
    // P4_16 §7.1.6.2: `bit<0>` and `int<0>` hold only 0, and a slice of
    // one has no bits to take. Registers of them work (since ext24,
    // `tests/stf/bit_zero_externs`); a register of a struct with no bits at
    // all is not supported.
    check_errors(
        "bit_zero_width_errors",
        &program(&[
            ("DECLS", "struct none_t { }"),
            ("LOCALS", "bit<0> z = 0; register<none_t>(4) r;"),
            ("APPLY", "hdr.h.a = (bit<8>)z[0:0];"),
        ]),
    );
    check_compiles(
        "bit_zero_width_ok",
        &program(&[
            ("DECLS", "header z_t { bit<0> a; int<0> b; bit<8> c; }"),
            (
                "LOCALS",
                "action zero(bit<0> q) { hdr.h.a = (bit<8>)q; }\n    \
                 bit<0> zk = 0;\n    \
                 table t { key = { hdr.h.a: exact; zk: exact; } \
                 actions = { zero; } }",
            ),
            (
                "APPLY",
                "bit<0> z = 1; int<0> s = -1; z_t h = { 0, 0, 1 };\n        \
                 hdr.h.a = hdr.h.a ++ z; hdr.h.c = (bit<8>)(int<8>)s + (bit<8>)h.a;\n        \
                 if (z == 0 && s == 0) { t.apply(); }",
            ),
        ]),
    );
}

#[test]
fn list_types_outside_a_cast() {
    // P4_16 §7.2.10: only a list expression casts to `list<T>`, each
    // element a `T`, and a list given to an extern constructor's `list<T>`
    // (p4c's list samples; since gaps22) is a list of that T. A list-typed
    // local or constant (since ext24) takes its length from its
    // initialiser, so it needs one, of its element type; a list parameter
    // of anything but an extern constructor is not supported yet.
    check_errors(
        "list_type_errors",
        &program(&[
            (
                "DECLS",
                "extern Table8 { Table8(list<bit<8>> data); void run(); }",
            ),
            (
                "LOCALS",
                "Table8((list<bit<16>>){1, 2}) t16; Table8({1, hdr.h.a}) runtime;",
            ),
            (
                "APPLY",
                "list<bit<8>> l;\n        \
                 list<bit<8>> m = {1, hdr.h.a};\n        \
                 list<bit<16>> wide = m;\n        \
                 list<list<bit<8>>> ll = { {1}, hdr.h.a };\n        \
                 hash(hdr.h.b, HashAlgorithm.crc16, 16w0, (list<bit<8>>)hdr.h.a, 17w4);\n        \
                 hash(hdr.h.b, HashAlgorithm.crc16, 16w0, (list<bit<8>>){hdr.h.a, true}, 17w4);",
            ),
        ]),
    );
    check_errors(
        "list_parameter",
        &program(&[("DECLS", "action a(list<bit<8>> l) { }")]),
    );
    check_compiles(
        "list_locals_ok",
        &program(&[
            ("DECLS", "const list<list<bit<8>>> LL = { {1, 2}, {3} };"),
            (
                "APPLY",
                "list<bit<8>> l = {1, hdr.h.a};\n        \
                 list<bit<8>> m = l;\n        \
                 if (m == {8w1, 8w2}) { hdr.h.c = LL[1][0] + l[1]; }",
            ),
        ]),
    );
    // `list` still names a declaration of a program older than v1.2.4.
    check_compiles(
        "list_named_value_ok",
        &program(&[(
            "APPLY",
            "bit<8> list = 3; hdr.h.a = (list < 4) ? list : 8w0;\n        \
             hash(hdr.h.b, HashAlgorithm.crc16, 16w0, (list<bit<8>>){hdr.h.a, 7}, 17w4);",
        )]),
    );
}

// ---- s21

#[test]
fn optional_parameters_left_out() {
    // A call may leave out an `@optional` parameter of an extern; here
    // only trailing ones, so the call binds to the signature without them.
    // A parameter that is not `@optional` is still needed, and one left out
    // before a parameter the call gives is refused.
    let decls = "extern Bump { Bump(); bit<8> bump(in bit<8> x, @optional in bit<8> by, @optional in bool wrap); }\n\
                 extern bit<8> twice(in bit<8> x, @optional in bit<8> plus);";
    check_compiles(
        "optional_parameters_left_out_ok",
        &program(&[
            ("DECLS", decls),
            ("LOCALS", "Bump() b;"),
            (
                "APPLY",
                "hdr.h.a = b.bump(hdr.h.a); hdr.h.c = b.bump(x = hdr.h.c, by = 2);\n        \
                 hdr.h.a = twice(hdr.h.a); hdr.h.c = twice(hdr.h.c, 1);",
            ),
        ]),
    );
    check_errors(
        "optional_parameters_left_out",
        &program(&[
            ("DECLS", decls),
            ("LOCALS", "Bump() b;"),
            (
                "APPLY",
                "hdr.h.a = b.bump(x = hdr.h.a, wrap = true);\n        hdr.h.c = twice();",
            ),
        ]),
    );
}

#[test]
fn extern_constructor_takes_enums_and_errors() {
    // Constructor arguments of enum and `error` type are compile-time
    // constants like bit strings (p4c's issue1193 passes
    // `CounterType.packets`); a value known only at run time is not.
    let decls = "enum Colour { Red, Blue }\n\
                 extern Painter { Painter(Colour c, CounterType k, error e); void paint(); }";
    check_compiles(
        "extern_constructor_enum_ok",
        &program(&[
            ("DECLS", decls),
            (
                "LOCALS",
                "Painter(Colour.Blue, CounterType.packets, error.NoMatch) p;",
            ),
            ("APPLY", "p.paint();"),
        ]),
    );
    check_errors(
        "extern_constructor_enum_not_constant",
        &program(&[
            ("DECLS", decls),
            (
                "LOCALS",
                "Painter(Colour.Blue, CounterType.packets, sm.parser_error) p;",
            ),
            ("APPLY", "p.paint();"),
        ]),
    );
}

// ---- gaps22

#[test]
fn match_kind_values_are_their_own_type() {
    // P4_16 §7.1.3: a match kind is a constant of type `match_kind`, which
    // no operator but `==` and `!=` takes and no cast turns into a number.
    check_errors(
        "match_kind_value_errors",
        &program(&[(
            "APPLY",
            "match_kind m = exact;\n        \
             hdr.h.a = m;\n        \
             match_kind n = 8w1;\n        \
             if (m + 1 == lpm) { hdr.h.c = (bit<8>)m; }",
        )]),
    );
    check_compiles(
        "match_kind_value_ok",
        &program(&[(
            "APPLY",
            "match_kind m = hdr.h.a == 1 ? lpm : ternary;\n        \
             tuple<match_kind, bit<8>> t = {exact, 2};\n        \
             if (m != t[0] && m == .lpm) { hdr.h.c = t[1]; }",
        )]),
    );
}

#[test]
fn user_extern_constructors_overload_by_arity() {
    // P4_16 §7.2.12: an extern's constructors are overloaded by their
    // number of parameters; an instantiation must match one, and a tuple
    // argument must be a constant like any constructor argument.
    let decls = "extern Kinds<M> { Kinds(M kinds, bit<8> base); Kinds(M kinds); bit<8> get(); }";
    check_errors(
        "user_extern_ctor_errors",
        &program(&[
            ("DECLS", decls),
            (
                "LOCALS",
                "Kinds<tuple<match_kind>>({exact}, 8w1, 8w2) three;\n    \
                 Kinds<tuple<bit<8>>>({hdr.h.a}) runtime;",
            ),
            ("APPLY", "hdr.h.a = three.get() + runtime.get();"),
        ]),
    );
    // Two of one arity told apart by their names are legal (since ext30;
    // `extern_constructors_told_apart_by_names` below).
    check_compiles(
        "user_extern_ctor_same_arity",
        &program(&[(
            "DECLS",
            "extern Twice { Twice(bit<8> a); Twice(bool b); bit<8> get(); }",
        )]),
    );
    check_compiles(
        "user_extern_ctor_ok",
        &program(&[
            ("DECLS", decls),
            (
                "LOCALS",
                "Kinds<tuple<match_kind, bit<4>>>({lpm, 3}, 8w1) two;\n    \
                 Kinds<tuple<match_kind, bit<4>>>({exact, 4w1}) one;",
            ),
            ("APPLY", "hdr.h.a = two.get() + one.get();"),
        ]),
    );
}

#[test]
fn zero_width_literal() {
    // `0w0` is bit<0>'s only value (P4_16 §7.1.6.2), and like any bit<0>
    // it needs a cast to meet a wider type (p4c's issue1986: "Cannot unify
    // type 'bit<0>' with type 'bit<1>'").
    check_errors(
        "zero_width_literal_errors",
        &program(&[
            ("PARSER", "transition select(1w0) { {0w0}: accept; }"),
            ("APPLY", "hdr.h.a = 0w0;"),
        ]),
    );
    check_compiles(
        "zero_width_literal_ok",
        &program(&[(
            "APPLY",
            "bit<0> z = 0w0; hdr.h.a = (hdr.h.a ++ 0w0) + (bit<8>)(z |+| 0w0);",
        )]),
    );
}

#[test]
fn list_constructor_parameters() {
    // A `list<T>` constructor parameter (P4_16 §7.2.10) takes any number
    // of T, here structs and tuples; a method's list parameter is not
    // supported yet, reported where the extern is used.
    check_compiles(
        "list_ctor_param_ok",
        &program(&[
            (
                "DECLS",
                "struct S { bit<32> a; bool b; }\n\
                 extern Rows<T> { Rows(list<S> s, list<tuple<T, T>> t); bit<8> get(); }",
            ),
            (
                "LOCALS",
                "Rows<bit<4>>((list<S>){ {1, true}, {2, false} }, {}) r;",
            ),
            ("APPLY", "hdr.h.a = r.get();"),
        ]),
    );
    check_errors(
        "list_method_param_errors",
        &program(&[
            (
                "DECLS",
                "extern Load { Load(); void load(list<bit<8>> d); }",
            ),
            ("LOCALS", "Load() l;"),
            ("APPLY", "l.load({1, 2});"),
        ]),
    );
}

#[test]
fn lookahead_of_nested_structs_and_tuples() {
    // P4_16 §12.8.3: `lookahead<T>` reads T as `extract` would lay it out;
    // nested structs and tuples of scalars, fixed headers and stacks of
    // them work (since s24 also over 128 bits in all, read member by
    // member); a scalar over 128 bits or a varbit header is not supported
    // yet.
    check_errors(
        "lookahead_nested_errors",
        &program(&[
            (
                "DECLS",
                "struct big_t { bit<8> a; bit<136> b; }\n\
                 header v_t { varbit<16> v; }\n\
                 struct with_v_t { bit<8> a; v_t v; }",
            ),
            (
                "PARSER",
                "big_t w = pkt.lookahead<big_t>();\n        \
                 with_v_t x = pkt.lookahead<with_v_t>();\n        \
                 transition accept;",
            ),
        ]),
    );
    check_compiles(
        "lookahead_nested_wide_and_headers_ok",
        &program(&[
            (
                "DECLS",
                "struct wide_t { bit<64> a; tuple<bit<64>, bit<8>> b; }\n\
                 struct with_h_t { bit<8> a; h_t h; h_t[2] s; }",
            ),
            (
                "PARSER",
                "wide_t w = pkt.lookahead<wide_t>();\n        \
                 with_h_t x = pkt.lookahead<with_h_t>();\n        \
                 transition accept;",
            ),
        ]),
    );
    check_compiles(
        "lookahead_nested_ok",
        &program(&[
            (
                "DECLS",
                "struct in_t { bit<4> a; bool b; bit<3> c; }\n\
                 struct out_t { bit<8> k; in_t i; tuple<bit<8>, in_t> t; }",
            ),
            (
                "PARSER",
                "out_t o = pkt.lookahead<out_t>();\n        \
                 transition select(o.i.b, o.t[1].c) { (true, 1): accept; default: accept; }",
            ),
        ]),
    );
}

#[test]
fn directionless_int_apply_parameters() {
    // A directionless `int` apply parameter takes a compile-time value at
    // each apply (P4_16 §6.8; p4c's issue3394): an integer without a
    // width, a constant. Applying such a control or parser through an
    // instance is not supported yet.
    let decls = "control Add(int k, inout bit<8> v) { apply { v = v + k; } }";
    check_errors(
        "apply_int_param_errors",
        &program(&[
            ("DECLS", decls),
            ("LOCALS", "Add() inst;"),
            (
                "APPLY",
                "Add.apply(8w1, hdr.h.a);\n        \
                 Add.apply(hdr.h.c, hdr.h.a);\n        \
                 Add.apply(2);",
            ),
        ]),
    );
    check_compiles(
        "apply_int_param_ok",
        &program(&[
            ("DECLS", decls),
            (
                "APPLY",
                "Add.apply(1, hdr.h.a); Add.apply(-3, hdr.h.c); Add.apply(1 << 4, meta.m);",
            ),
        ]),
    );
    // The same for a parser, applied in a state.
    let sub = "parser Sub(packet_in p, int k, inout h_t h) { state start { h.a = h.a + k; transition accept; } }";
    check_errors(
        "apply_int_param_parser_errors",
        &program(&[
            ("DECLS", sub),
            (
                "PARSER",
                "Sub.apply(pkt, 4w1, hdr.h); Sub.apply(pkt, hdr.h); transition accept;",
            ),
        ]),
    );
    check_compiles(
        "apply_int_param_parser_ok",
        &program(&[
            ("DECLS", sub),
            (
                "PARSER",
                "Sub.apply(pkt, 1, hdr.h); Sub.apply(pkt, 7, hdr.h); transition accept;",
            ),
        ]),
    );
}

#[test]
fn dont_care_type_arguments() {
    // `_` type arguments are inferred from the call's arguments; a mix of
    // given types and `_` is not supported yet, and `_` cannot stand where
    // nothing gives the type (a local's type, a lookahead).
    let decls = "T pick<T>(in T a, in T b) { return a; }\n\
                 T2 second<T1, T2>(in T1 a, in T2 b) { return b; }";
    check_errors(
        "dont_care_type_arg_errors",
        &program(&[
            ("DECLS", decls),
            (
                "PARSER",
                "bit<8> x = pkt.lookahead<_>(); transition accept;",
            ),
            (
                "APPLY",
                "hdr.h.a = second<bit<8>, _>(hdr.h.a, hdr.h.c);\n        \
                 hdr.h.c = pick<_>(1, 2);",
            ),
        ]),
    );
    check_compiles(
        "dont_care_type_arg_ok",
        &program(&[
            ("DECLS", decls),
            (
                "APPLY",
                "hdr.h.a = second<_, _>(hdr.h.b, hdr.h.c); hdr.h.b = pick<_>(hdr.h.b, 16w1);",
            ),
        ]),
    );
}

// ---- rej22

#[test]
fn absolute_action_name_in_two_controls() {
    // p4c's duplicate control-plane name check (its multicast-bmv2): two
    // actions of ingress and egress both named `@name(".drop_it")` clash
    // even with the same parameters, while one name relative to each
    // control (`@name("drop_it")`) gives two names.
    let table = |ctl: &str| {
        format!(
            "@name(\"{ctl}drop_it\") action d() {{ mark_to_drop(sm); }}\n    \
             table t {{ key = {{ hdr.h.a: exact; }} actions = {{ d; }} }}"
        )
    };
    let src = |prefix: &str| {
        program(&[("LOCALS", &table(prefix)), ("APPLY", "t.apply();")]).replace(
            "control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }",
            &format!(
                "control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {{\n    {}\n    apply {{ t.apply(); }}\n}}",
                table(prefix)
            ),
        )
    };
    check_errors("absolute_action_name_two_controls", &src("."));
    check_compiles("relative_action_name_two_controls_ok", &src(""));
}

#[test]
fn select_range_end_below_start() {
    // BMv2 refuses a parser select range whose end is below its start
    // (p4c's issue-2123_e, "Range end is less than start").
    let parser = |range: &str| {
        program(&[(
            "PARSER",
            &format!("transition select(hdr.h.b) {{ {range}: reject; default: accept; }}"),
        )])
    };
    check_errors("select_range_reversed", &parser("0x0806 .. 0x0800"));
    check_compiles("select_range_one_value_ok", &parser("0x0800 .. 0x0800"));
}

#[test]
fn v1switch_named_arguments() {
    // P4_16 §6.8.2: arguments may be named, in any order; each name is one
    // of V1Switch's parameters (p, vr, ig, eg, ck, dep).
    let main = |args: &str| {
        program(&[]).replace(
            "V1Switch(P(), VC(), I(), E(), CC(), D()) main;",
            &format!("V1Switch({args}) main;"),
        )
    };
    check_compiles(
        "v1switch_named_args_ok",
        &main("p = P(), ig = I(), vr = VC(), eg = E(), ck = CC(), dep = D()"),
    );
    check_errors(
        "v1switch_named_args_unknown",
        &main("p = P(), ig = I(), verify = VC(), eg = E(), ck = CC(), dep = D()"),
    );
    check_errors(
        "v1switch_named_args_mixed",
        &main("P(), ig = I(), vr = VC(), eg = E(), ck = CC(), dep = D()"),
    );
}

#[test]
fn emit_struct_of_bit_fields() {
    // A struct is emitted field by field, so it must hold headers, stacks
    // or unions (P4_16 §15.1; BMv2 refuses the rest, p4c's
    // emit-struct-bmv2). This stopped with an internal error before.
    let src = program(&[])
        .replace(
            "struct headers { h_t h; }",
            "struct pair_t { bit<8> x; bit<8> y; }\nheader wrap_t { pair_t p; }\nstruct headers { h_t h; wrap_t w; }",
        )
        .replace("pkt.emit(hdr.h);", "pkt.emit(hdr.h); pkt.emit(hdr.w.p);");
    check_errors("emit_struct_of_bits", &src);
}

#[test]
fn duplicate_entry_keys_without_priorities() {
    // Entries of a table with only exact and lpm keys are known by their
    // key (P4Runtime), so one key may not appear twice (p4c's
    // table-entries-error, "Duplicate entry keys"); a ternary table orders
    // equal keys by priority instead.
    let table = |kind: &str| {
        program(&[
            (
                "LOCALS",
                &format!(
                    "table t {{ key = {{ hdr.h.a: exact; hdr.h.b: {kind}; }} actions = {{ set; }}\n    \
                     const entries = {{ (1, 2) : set(1); (1, 3) : set(2); (8w1, 16w2) : set(3); }} }}"
                ),
            ),
            ("APPLY", "t.apply();"),
        ])
    };
    check_errors("duplicate_entry_keys", &table("exact"));
    check_compiles("duplicate_entry_keys_ternary_ok", &table("ternary"));
}

#[test]
fn unknown_v1model_version() {
    // `#define V1MODEL_VERSION` picks v1model.p4's declarations; p4c knows
    // 20180101 to 20200408 and refuses others (its issue5296).
    let with = |v: &str| {
        program(&[]).replace(
            "#include <v1model.p4>",
            &format!("#define V1MODEL_VERSION {v}\n#include <v1model.p4>"),
        )
    };
    check_errors("v1model_version_unknown", &with("20000101"));
    check_compiles("v1model_version_first_ok", &with("20180101"));
}

#[test]
fn name_annotation_takes_a_string() {
    // P4_16 §18.3.3: `@name("x")` names an object for the control plane;
    // a number is no name (p4c's spec-issue1297-string-cat-err-2-anno).
    let table = |anno: &str| {
        program(&[
            (
                "LOCALS",
                &format!("{anno} table t {{ key = {{ hdr.h.a: exact; }} actions = {{ set; }} }}"),
            ),
            ("APPLY", "t.apply();"),
        ])
    };
    check_errors("name_annotation_number", &table("@name(4)"));
    check_compiles("name_annotation_string_ok", &table("@name(\"tt\")"));
}

#[test]
fn parameter_of_a_control_declaration_type() {
    // A parameter's type is a control type (declared without a body); a
    // control declaration is not one (p4c's spec-issue563, "parameter
    // cannot have type control A").
    let decls = |param_ty: &str| {
        program(&[(
            "DECLS",
            &format!(
                "control Inner(); control A() {{ apply {{ }} }}\n\
                 control Outer()({param_ty} a) {{ apply {{ a.apply(); }} }}"
            ),
        )])
    };
    check_errors("param_type_control_declaration", &decls("A"));
    check_compiles("param_type_control_type_ok", &decls("Inner"));
}

#[test]
fn deprecated_annotation_takes_a_string() {
    // `@deprecated("msg")`: one string, literals joined by `++` included
    // (p4c's spec-issue1297-string-cat-err-3-anno, `"a" | "b"`).
    let action = |anno: &str| {
        program(&[
            ("LOCALS", &format!("{anno} action old() {{ }}")),
            ("APPLY", "old();"),
        ])
    };
    check_errors(
        "deprecated_annotation_or",
        &action("@deprecated(\"a\" | \"b\")"),
    );
    check_compiles(
        "deprecated_annotation_concat_ok",
        &action("@deprecated(\"a\" ++ \"b\")"),
    );
}

// ---- ext23

#[test]
fn generic_extern_type_arguments_from_the_constructor() {
    // P4_16 §7.2.12: an instance of a generic extern may leave out type
    // arguments its constructor's arguments give (p4c's
    // generic-extern-inference); one no argument gives, or an integer
    // without a width, cannot be inferred (generic-extern-inference_e), and
    // the arguments must agree with what was inferred or written.
    let with = |decls: &str, local: &str| {
        program(&[
            ("DECLS", decls),
            ("LOCALS", local),
            ("APPLY", "hdr.h.b = p.get();"),
        ])
    };
    let one = "extern Parametrized<T> { Parametrized(T v); T get(); }";
    check_compiles(
        "extern_infer_from_ctor_ok",
        &with(one, "Parametrized(16w1) p;"),
    );
    check_errors(
        "extern_infer_second_unknown",
        &with("extern Two<A, B> { Two(A a); B get(); }", "Two(16w1) p;"),
    );
    check_errors("extern_infer_no_width", &with(one, "Parametrized(1) p;"));
    check_errors(
        "extern_infer_conflicting_args",
        &with(
            "extern Pair<T> { Pair(T a, T b); T get(); }",
            "Pair(16w1, 8w2) p;",
        ),
    );
    check_errors(
        "extern_infer_written_disagrees",
        &with(one, "Parametrized<bit<8>>(16w1) p;"),
    );
    check_errors(
        "extern_infer_wrong_arity",
        &with(one, "Parametrized(16w1, 16w2) p;"),
    );
}

#[test]
fn typedef_of_a_user_extern_type() {
    // A typedef may name a user extern type, generic with its arguments
    // given or not generic; the alias takes no type arguments of its own
    // then (p4c's generic-extern-inference-typedef_e), nor does an alias of
    // a non-generic extern.
    let with = |decls: &str, local: &str| {
        program(&[
            ("DECLS", decls),
            ("LOCALS", local),
            ("APPLY", "hdr.h.b = p.get();"),
        ])
    };
    let generic = "extern Parametrized<T> { Parametrized(T v); T get(); }\n\
                   typedef Parametrized<bit<16>> P16;";
    let plain = "extern Tally { Tally(bit<16> v); bit<16> get(); }\n\
                 typedef Tally T2;";
    check_compiles("extern_typedef_generic_ok", &with(generic, "P16(16w1) p;"));
    check_compiles("extern_typedef_plain_ok", &with(plain, "T2(16w1) p;"));
    check_errors(
        "extern_typedef_type_args_twice",
        &with(generic, "P16<bit<16>>(16w1) p;"),
    );
    check_errors(
        "extern_typedef_type_args_on_plain",
        &with(plain, "T2<bit<16>>(16w1) p;"),
    );
}

// ---- rej23

#[test]
fn table_entry_range_end_below_start() {
    // A const entry's range is refused as a select range is: P4Runtime
    // takes no range entry whose low is above its high, so the
    // entry could be neither installed nor read back.
    let table = |range: &str| {
        program(&[
            (
                "LOCALS",
                &format!(
                    "table t {{ key = {{ hdr.h.b: range; }} actions = {{ set; }}\n    \
                     const entries = {{ {range} : set(1); }} }}"
                ),
            ),
            ("APPLY", "t.apply();"),
        ])
    };
    check_errors("entry_range_reversed", &table("0x0806 .. 0x0800"));
    check_compiles("entry_range_one_value_ok", &table("0x0800 .. 0x0800"));
}

#[test]
fn direct_resources_used_by_another_tables_action() {
    // A direct counter or meter has one cell per entry of its owner table,
    // so only that table's actions may count or read it (p4c's DPDK back
    // end: "can only be invoked from within action of ownertable"; BMv2
    // drops such a `count()` and never colours from such a `read`).
    let tables = |counted: &str, metered: &str| {
        program(&[
            (
                "LOCALS",
                &format!(
                    "direct_counter(CounterType.packets) hits;\n    \
                     direct_meter<bit<2>>(MeterType.bytes) police;\n    \
                     action count_it() {{ hits.count(); }}\n    \
                     action colour() {{ police.read(meta.m[1:0]); }}\n    \
                     table fwd {{ key = {{ hdr.h.a: exact; }} actions = {{ {counted} }} counters = hits; }}\n    \
                     table acl {{ key = {{ hdr.h.c: exact; }} actions = {{ {metered} }} meters = police; }}\n    \
                     table other {{ key = {{ hdr.h.b: exact; }} actions = {{ set; }} }}"
                ),
            ),
            ("APPLY", "fwd.apply(); acl.apply(); other.apply();"),
        ])
    };
    check_compiles(
        "direct_resources_owner_actions_ok",
        &tables("count_it; set;", "colour; set;"),
    );
    // Each action listed by the table that does not own what it uses.
    check_errors(
        "direct_resources_other_table",
        &tables("count_it; colour;", "colour; count_it;"),
    );
}

#[test]
fn lookahead_without_a_type() {
    // `lookahead` has no argument to infer its type from, so `_` names
    // nothing to read; this was reported as a wrong argument count.
    let parser = |call: &str| {
        program(&[(
            "PARSER",
            &format!(
                "bit<16> v = pkt.{call};\n        \
                 transition select(v) {{ 1: reject; default: accept; }}"
            ),
        )])
    };
    check_errors("lookahead_dont_care_type", &parser("lookahead<_>()"));
    check_compiles("lookahead_written_type_ok", &parser("lookahead<bit<16>>()"));
}

// ---- ext24

#[test]
fn conditional_of_two_untyped_integers() {
    // P4_16 §8.5.1: `c ? 1 : 0` needs a width for one branch unless `c` is
    // a compile-time constant (then the untaken branch is dropped); p4c:
    // "Width must be specified for at least one of ..".
    check_errors(
        "conditional_two_int_branches",
        &program(&[("APPLY", "hdr.h.a = (hdr.h.c == 1) ? 1 : 0;")]),
    );
    check_compiles(
        "conditional_two_int_branches_ok",
        &program(&[
            ("DECLS", "const bool WIDE = false;"),
            (
                "APPLY",
                "hdr.h.a = WIDE ? 1 : 0;\n        \
                 hdr.h.c = (hdr.h.c == 1) ? 8w1 : 0;",
            ),
        ]),
    );
}

#[test]
fn division_of_signed_values() {
    // P4_16 §8.7 lists no `/` or `%` for int<W>; p4c refuses both on signed
    // operands, constants included ("Cannot operate on signed values"), and
    // on negative `int` constants ("not defined on negative numbers").
    check_errors(
        "signed_division",
        &program(&[(
            "APPLY",
            "int<8> s = (int<8>)hdr.h.a;\n        \
             s = s / 2;\n        \
             s = 8s6 % 8s4;\n        \
             hdr.h.c = (bit<8>)(-7 / 2);",
        )]),
    );
    check_compiles(
        "unsigned_division_ok",
        &program(&[(
            "APPLY",
            "hdr.h.a = hdr.h.a / 3 + hdr.h.c % 8;\n        \
             int<8> s = (int<8>)(7 / 2);\n        \
             hdr.h.c = (bit<8>)s;",
        )]),
    );
}

#[test]
fn header_union_initialiser() {
    // P4_16 §8.13: a structure-valued expression is of a struct or header
    // type, so a union takes none; `{#}` (§8.26) and a member's assignment
    // are how a union is set.
    let decls = "header g_t { bit<16> x; }\nheader_union u_t { h_t h; g_t g; }";
    check_errors(
        "header_union_initialiser",
        &program(&[
            ("DECLS", decls),
            ("APPLY", "u_t u = { h = hdr.h, g = (g_t){#} };"),
        ]),
    );
    check_compiles(
        "header_union_invalid_ok",
        &program(&[
            ("DECLS", decls),
            (
                "APPLY",
                "u_t u = {#};\n        \
                 u.h = hdr.h;\n        \
                 if (u.h.isValid()) { u = (u_t){#}; }",
            ),
        ]),
    );
}

#[test]
fn signed_range_keys() {
    // A select range over an int<W> key holds signed values (P4_16
    // §8.15.3), so `-5 .. 5` is in order and `5 .. -5` is reversed; a
    // table range compares the key's bits unsigned, as BMv2 compares
    // P4Runtime's two's complement bytestrings, so one across 0 is refused.
    let decls = "header s_t { int<8> v; }";
    let parser = |range: &str| {
        program(&[
            ("DECLS", decls),
            (
                "PARSER",
                &format!(
                    "int<8> v = (int<8>)hdr.h.a;\n        \
                     transition select(v) {{ {range}: accept; default: reject; }}"
                ),
            ),
        ])
    };
    check_compiles("signed_select_range_ok", &parser("-5 .. 5"));
    check_errors("signed_select_range_reversed", &parser("5 .. -5"));
    let table = |range: &str| {
        program(&[
            (
                "LOCALS",
                &format!(
                    "int<8> k = 0;\n    \
                     table t {{ key = {{ k: range; }} actions = {{ set; }} \
                     const entries = {{ {range} : set(1); }} }}"
                ),
            ),
            ("APPLY", "k = (int<8>)hdr.h.a; t.apply();"),
        ])
    };
    check_compiles("signed_entry_range_ok", &table("-8 .. -2"));
    check_errors("signed_entry_range_across_zero", &table("-5 .. 5"));
    check_errors("signed_entry_range_reversed", &table("5 .. -5"));
}

// ---- rej25

#[test]
fn string_variables_and_fields() {
    // P4_16 §7.1.5: a string is a compile-time argument only; a variable
    // or struct field of that type stopped in the back end with
    // `P4E0999 internal: value of no storable type` (p4c's string-e1).
    check_errors(
        "string_local",
        &program(&[("APPLY", "string s = \"abc\";")]),
    );
    check_errors("string_control_local", &program(&[("LOCALS", "string s;")]));
    check_errors(
        "string_struct_field",
        &program(&[("DECLS", "struct named_t { string name; bit<8> v; }")]),
    );
    // `log_msg` still takes one.
    check_compiles(
        "string_log_msg_ok",
        &program(&[("APPLY", "log_msg(\"a = {}\", {hdr.h.a});")]),
    );
}

#[test]
fn division_by_a_negative_integer() {
    // P4_16 §8.8; p4c folds the untyped operand's sign before giving it
    // the other side's width: "not defined on negative numbers" (div1).
    for (name, e) in [
        ("div_negative_divisor", "hdr.h.a / -2"),
        ("mod_negative_divisor", "hdr.h.a % -2"),
        ("div_negative_dividend", "-6 / hdr.h.a"),
    ] {
        check_errors(name, &program(&[("APPLY", &format!("hdr.h.c = {e};"))]));
    }
    check_compiles(
        "div_positive_ok",
        &program(&[("APPLY", "hdr.h.c = hdr.h.a / 2 + hdr.h.a % 8w3;")]),
    );
}

#[test]
fn cast_changing_width_and_sign() {
    // P4_16 §8.11.1 lists bit<W> -> int<W>, int<W> -> bit<W> and width
    // changes of one signedness; p4c refuses the two at once.
    check_errors(
        "cast_bit16_to_int8",
        &program(&[("APPLY", "int<8> s = (int<8>)hdr.h.b; hdr.h.a = (bit<8>)s;")]),
    );
    check_errors(
        "cast_int8_to_bit16",
        &program(&[("APPLY", "int<8> s = -1; hdr.h.b = (bit<16>)s;")]),
    );
    check_compiles(
        "cast_in_two_steps_ok",
        &program(&[(
            "APPLY",
            "int<8> s = (int<8>)(bit<8>)hdr.h.b; hdr.h.b = (bit<16>)(bit<8>)s; \
             hdr.h.a = (bit<8>)(int<8>)hdr.h.c;",
        )]),
    );
}

#[test]
fn priority_delta_is_a_number() {
    // p4c's table-custom-property-priority_delta-unsupported-type: `true`
    // was read as a delta of 1.
    let table = |delta: &str| {
        program(&[
            (
                "LOCALS",
                &format!(
                    "table t {{ key = {{ hdr.h.a: ternary; }} actions = {{ set; }} \
                     priority_delta = {delta}; }}"
                ),
            ),
            ("APPLY", "t.apply();"),
        ])
    };
    check_errors("priority_delta_bool", &table("true"));
    check_compiles("priority_delta_number_ok", &table("10"));
}

#[test]
fn default_initialiser_of_a_varbit() {
    // A varbit has no default length: p4c's default-initializer-err,
    // "Structs, headers and tuples containing varbit fields cannot be
    // initialized using ...".
    let decls = "header v_t { bit<8> len; varbit<32> opts; }\n\
                 struct holder_t { bit<8> x; v_t v; }";
    check_errors(
        "dots_header_with_varbit",
        &program(&[("DECLS", decls), ("APPLY", "v_t v = { len = 1, ... };")]),
    );
    check_errors(
        "dots_struct_holding_varbit",
        &program(&[("DECLS", decls), ("APPLY", "holder_t s = { x = 1, ... };")]),
    );
    check_compiles(
        "dots_without_varbit_ok",
        &program(&[("APPLY", "h_t h = { a = 1, ... }; hdr.h.b = h.b;")]),
    );
}

// ---- ext25

/// A sub-control taking a `register<bit<8>>` as a directionless apply
/// parameter (P4_16 §6.8), with `apply` text for control I.
fn extern_param_program(locals: &str, apply: &str) -> String {
    program(&[
        (
            "DECLS",
            "control Sub(inout h_t h, register<bit<8>> r) {\n    \
             apply { r.write(0, h.a); }\n}",
        ),
        ("LOCALS", locals),
        ("APPLY", apply),
    ])
}

#[test]
fn extern_apply_parameters() {
    // The accepted forms: an instance of the control, a top-level one, a
    // `meter` and a user extern object (the STF program
    // `tests/stf/extern_apply_params` runs registers and counters).
    check_compiles(
        "extern_param_ok",
        &extern_param_program(
            "register<bit<8>>(4) r1; Sub() s;",
            "s.apply(hdr.h, r1); s.apply(hdr.h, r1);",
        ),
    );
    check_compiles(
        "extern_param_meter_user_ok",
        &program(&[
            (
                "DECLS",
                "extern Tally { Tally(bit<8> start); bit<8> add(in bit<8> x); }\n\
                 control M(inout h_t h, meter m, Tally t) {\n    \
                 apply { m.execute_meter(32w1, h.c); h.a = t.add(h.a); }\n}",
            ),
            (
                "LOCALS",
                "meter(4, MeterType.packets) m1; Tally(8w3) t1; M() mm;",
            ),
            ("APPLY", "mm.apply(hdr.h, m1, t1);"),
        ]),
    );
    // p4c: "a parameter with type register cannot have a direction".
    check_errors(
        "extern_param_direction",
        &program(&[(
            "DECLS",
            "control Sub(inout h_t h, in register<bit<8>> r) { apply { } }",
        )]),
    );
    check_errors(
        "extern_param_wrong_type",
        &extern_param_program(
            "counter(4, CounterType.packets) c; register<bit<16>>(4) r16; Sub() s1; Sub() s2;",
            "s1.apply(hdr.h, c); s2.apply(hdr.h, r16);",
        ),
    );
    check_errors(
        "extern_param_not_an_instance",
        &extern_param_program(
            "Sub() s1; Sub() s2;",
            "s1.apply(hdr.h, hdr.h.a); s2.apply(hdr.h, 5);",
        ),
    );
    check_errors(
        "extern_param_missing",
        &extern_param_program("Sub() s;", "s.apply(hdr.h);"),
    );
    // One instance's objects are fixed: its parameter is bound once.
    check_errors(
        "extern_param_bound_twice",
        &extern_param_program(
            "register<bit<8>>(4) r1; register<bit<8>>(4) r2; Sub() s;",
            "s.apply(hdr.h, r1); s.apply(hdr.h, r2);",
        ),
    );
    check_errors(
        "extern_param_never_applied",
        &extern_param_program("Sub() s;", ""),
    );
    // A table's extern is bound to its table by a property, not passed.
    check_errors(
        "extern_param_table_extern",
        &program(&[(
            "DECLS",
            "control Sub(inout h_t h, action_selector sel) { apply { } }",
        )]),
    );
    // A parser's extern parameters are bound where it is applied: one
    // never applied is refused (its code would reach no object).
    check_errors(
        "extern_param_parser",
        &program(&[(
            "DECLS",
            "parser Sub(packet_in pkt, inout h_t h, register<bit<8>> r) {\n    \
             state start { transition accept; }\n}",
        )]),
    );
    // A constructor parameter is bound where the instance is declared.
    let ctor = |locals: &str| {
        program(&[
            (
                "DECLS",
                "control Sub(inout h_t h)(register<bit<8>> r) {\n    \
                 apply { r.write(0, h.a); }\n}",
            ),
            ("LOCALS", locals),
            ("APPLY", "s.apply(hdr.h);"),
        ])
    };
    check_compiles(
        "extern_ctor_param_ok",
        &ctor("register<bit<8>>(4) r1; Sub(r1) s;"),
    );
    check_errors(
        "extern_ctor_param_wrong_type",
        &ctor("counter(4, CounterType.packets) c; Sub(c) s;"),
    );
    check_errors("extern_ctor_param_not_an_instance", &ctor("Sub(8w1) s;"));
    // A parser's, since ext26: here a top-level instance passed by a
    // parser's own instantiation.
    check_compiles(
        "extern_ctor_param_parser",
        &program(&[(
            "DECLS",
            "parser Sub(packet_in pkt, inout h_t h)(register<bit<8>> r) {\n    \
             state start { transition accept; }\n}\n\
             register<bit<8>>(4) g;\n\
             parser Top(packet_in pkt, inout h_t h) {\n    \
             Sub(g) s;\n    state start { s.apply(pkt, h); transition accept; }\n}",
        )]),
    );
    // p4c: "Action parameters cannot have extern types".
    check_errors(
        "extern_param_action",
        &program(&[("LOCALS", "action a(register<bit<8>> r) { r.write(0, 1); }")]),
    );
    check_errors(
        "extern_type_as_value_type",
        &program(&[("DECLS", "bit<8> f(register<bit<8>> r) { return 0; }")]),
    );
}

// ---- ext26

/// A sub-parser `Sub` taking a `register<bit<8>>` as a directionless apply
/// parameter (P4_16 §6.8), with the main parser's start state ending in
/// `state` and top-level declarations `decls`.
fn parser_extern_program(decls: &str, state: &str) -> String {
    program(&[
        (
            "DECLS",
            &format!(
                "{decls}\n\
                 parser Sub(packet_in pkt, inout h_t h, register<bit<8>> r) {{\n    \
                 state start {{ r.write(0, h.a); transition accept; }}\n}}"
            ),
        ),
        ("PARSER", &format!("{state}\n        transition accept;")),
    ])
}

#[test]
fn parser_extern_parameters() {
    // The accepted forms (the STF program `tests/stf/parser_extern_params`
    // runs them): a top-level instance, the same one applied twice, and an
    // instance declared in the calling parser passed to a constructor.
    check_compiles(
        "parser_extern_param_ok",
        &parser_extern_program(
            "register<bit<8>>(4) g;",
            "Sub.apply(pkt, hdr.h, g); Sub.apply(pkt, hdr.h, g);",
        ),
    );
    check_compiles(
        "parser_extern_ctor_param_ok",
        &program(&[(
            "DECLS",
            "parser Sub(packet_in pkt, inout h_t h)(counter c) {\n    \
             state start { c.count(0); transition accept; }\n}\n\
             parser Top(packet_in pkt, inout h_t h) {\n    \
             counter(4, CounterType.packets) hits;\n    Sub(hits) s;\n    \
             state start { s.apply(pkt, h); transition accept; }\n}",
        )]),
    );
    // A meter and a user extern object, top-level ones here.
    check_compiles(
        "parser_extern_param_meter_user_ok",
        &program(&[
            (
                "DECLS",
                "extern Tally { Tally(bit<8> start); bit<8> add(in bit<8> x); }\n\
                 meter(4, MeterType.packets) m1; Tally(8w3) t1;\n\
                 parser M(packet_in pkt, inout h_t h, meter m, Tally t) {\n    \
                 state start { m.execute_meter(32w1, h.c); h.a = t.add(h.a); \
                 transition accept; }\n}",
            ),
            (
                "PARSER",
                "M.apply(pkt, hdr.h, m1, t1);\n        transition accept;",
            ),
        ]),
    );
    check_errors(
        "parser_extern_param_direction",
        &program(&[(
            "DECLS",
            "parser Sub(packet_in pkt, inout h_t h, inout register<bit<8>> r) {\n    \
             state start { transition accept; }\n}",
        )]),
    );
    check_errors(
        "parser_extern_param_wrong_type",
        &parser_extern_program(
            "counter(4, CounterType.packets) c;",
            "Sub.apply(pkt, hdr.h, c);",
        ),
    );
    check_errors(
        "parser_extern_param_not_an_instance",
        &parser_extern_program("", "Sub.apply(pkt, hdr.h, hdr.h.a);"),
    );
    check_errors(
        "parser_extern_param_missing",
        &parser_extern_program("", "Sub.apply(pkt, hdr.h);"),
    );
    // A parser's extern objects are one per declaration: each parameter is
    // bound once.
    check_errors(
        "parser_extern_param_bound_twice",
        &parser_extern_program(
            "register<bit<8>>(4) g1; register<bit<8>>(4) g2;",
            "Sub.apply(pkt, hdr.h, g1); Sub.apply(pkt, hdr.h, g2);",
        ),
    );
    let ctor = |decls: &str, arg: &str| {
        program(&[(
            "DECLS",
            &format!(
                "{decls}\n\
                 parser Sub(packet_in pkt, inout h_t h)(register<bit<8>> r) {{\n    \
                 state start {{ transition accept; }}\n}}\n\
                 parser Top(packet_in pkt, inout h_t h) {{\n    \
                 Sub({arg}) s;\n    state start {{ s.apply(pkt, h); transition accept; }}\n}}"
            ),
        )])
    };
    check_errors(
        "parser_extern_ctor_param_wrong_type",
        &ctor("counter(4, CounterType.packets) c;", "c"),
    );
    check_errors("parser_extern_ctor_param_not_an_instance", &ctor("", "8w1"));
    // v1model's blocks take no extern parameters (it was a P4E0999 bug for
    // a control before ext26).
    let top = program(&[("DECLS", "register<bit<8>>(4) g;")]);
    check_errors(
        "v1switch_parser_extern_param",
        &top.replace(
            "inout standard_metadata_t sm) {\n    state",
            "inout standard_metadata_t sm, register<bit<8>> r) {\n    state",
        ),
    );
    check_errors(
        "v1switch_control_extern_param",
        &top.replace(
            "control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm)",
            "control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm, \
             register<bit<8>> r)",
        ),
    );
    // A constructor parameter of the parser in V1Switch takes a top-level
    // instance.
    check_errors(
        "v1switch_parser_extern_ctor_not_an_instance",
        &program(&[])
            .replace(
                "inout standard_metadata_t sm) {\n    state",
                "inout standard_metadata_t sm)(register<bit<8>> r) {\n    state",
            )
            .replace("V1Switch(P()", "V1Switch(P(8w1)"),
    );
    // A trial check of a control with constructor parameters left its
    // extern parameters to the next control checked, `O` here (`apply
    // takes 2 arguments, 1 given` before ext26).
    check_compiles(
        "extern_param_trial_check_forgotten",
        &program(&[
            (
                "DECLS",
                "control Sub(inout h_t h, register<bit<8>> r)(bit<8> k) {\n    \
                 apply { r.write(0, h.a + k); }\n}\n\
                 control O(inout h_t h) { apply { h.a = 1; } }",
            ),
            ("LOCALS", "register<bit<8>>(4) seen; Sub(3) s; O() o;"),
            ("APPLY", "s.apply(hdr.h, seen); o.apply(hdr.h);"),
        ]),
    );
}

/// A typedef of an extern type as a parameter's type (P4_16 §7.5) is the
/// extern type (the STF program `tests/stf/extern_typedef_params` runs it
/// in a parser and a control); its misuses get the extern type's errors.
#[test]
fn typedef_of_extern_as_parameter_type() {
    let with = |decls: &str, locals: &str, apply: &str| {
        program(&[
            (
                "DECLS",
                &format!("typedef register<bit<8>> R;\ntypedef register Plain;\n{decls}"),
            ),
            ("LOCALS", locals),
            ("APPLY", apply),
        ])
    };
    check_compiles(
        "typedef_extern_param_ok",
        &with(
            "control Sub(inout h_t h, R r)(Plain<bit<8>> q) {\n    \
             apply { r.write(0, h.a); q.write(1, h.a); }\n}",
            "register<bit<8>>(4) r1; Sub(r1) s;",
            "s.apply(hdr.h, r1);",
        ),
    );
    // The alias gives the type arguments already.
    check_errors(
        "typedef_extern_param_type_args_twice",
        &with(
            "control Sub(inout h_t h, R<bit<8>> r) { apply { } }",
            "",
            "",
        ),
    );
    // p4c: "Action parameters cannot have extern types".
    check_errors(
        "typedef_extern_param_action",
        &with("", "action a(R r) { r.write(0, 1); }", ""),
    );
}

// ---- rej26

/// The template under `#define V1MODEL_VERSION 20200408`, which gives
/// `counter<I>`, `meter<I>` and `register<T, I>` an index type parameter.
fn v1model_2020(parts: &[(&str, &str)]) -> String {
    program(parts).replace(
        "#include <v1model.p4>",
        "#define V1MODEL_VERSION 20200408\n#include <v1model.p4>",
    )
}

#[test]
fn extern_index_is_bit32_before_20200408() {
    // v1model.p4 (20180101): `count(in bit<32> index)`, `read(out T result,
    // in bit<32> index)`, `write(in bit<32> index, ..)`,
    // `execute_meter<T>(in bit<32> index, ..)`; P4_16 §8.11.2 converts only
    // untyped integers implicitly, so p4c cannot unify a bit<8> with it.
    // Ours took any width here.
    let locals = "counter(4, CounterType.packets) c; register<bit<8>>(4) r; \
                  meter(4, MeterType.packets) mt;";
    for (name, call) in [
        ("counter_index_bit8", "c.count(hdr.h.a);"),
        ("register_read_index_bit8", "r.read(hdr.h.c, hdr.h.a);"),
        ("register_write_index_bit16", "r.write(hdr.h.b, hdr.h.a);"),
        ("meter_index_bit8", "mt.execute_meter(hdr.h.a, meta.m);"),
    ] {
        check_errors(name, &program(&[("LOCALS", locals), ("APPLY", call)]));
    }
    // Integers without a width, bit<32> values, casts and a serializable
    // enum over bit<32> still fit.
    check_compiles(
        "extern_index_bit32_ok",
        &program(&[
            ("DECLS", "enum bit<32> slot_t { A = 1, B = 2 }"),
            ("LOCALS", locals),
            (
                "APPLY",
                "bit<32> i = (bit<32>)hdr.h.a; c.count(i); c.count(2); c.count(slot_t.B); \
                 r.read(hdr.h.c, 3); r.write((bit<32>)hdr.h.a, hdr.h.c); \
                 mt.execute_meter(i, meta.m);",
            ),
        ]),
    );
}

#[test]
fn extern_index_type_argument_from_20200408() {
    // v1model.p4 (20200408): `extern counter<I>`, `register<T, I>`,
    // `meter<I>`, whose methods take `in I index`.
    let locals = "counter<bit<8>>(4, CounterType.packets) c; register<bit<8>, bit<16>>(4) r; \
                  meter<bit<8>>(4, MeterType.packets) mt;";
    check_compiles(
        "extern_index_type_arg_ok",
        &v1model_2020(&[
            ("LOCALS", locals),
            (
                "APPLY",
                "c.count(hdr.h.a); c.count(1); r.read(hdr.h.c, hdr.h.b); \
                 r.write(7, hdr.h.a); mt.execute_meter(hdr.h.c, meta.m);",
            ),
        ]),
    );
    check_errors(
        "counter_index_not_its_type_arg",
        &v1model_2020(&[("LOCALS", locals), ("APPLY", "bit<32> i = 1; c.count(i);")]),
    );
    check_errors(
        "register_index_not_its_type_arg",
        &v1model_2020(&[("LOCALS", locals), ("APPLY", "r.read(hdr.h.c, hdr.h.a);")]),
    );
}

#[test]
fn extern_type_arguments_follow_the_v1model_version() {
    // p4c: "Type parameters must be supplied for constructor" for a generic
    // extern instantiated without them; a non-generic one specialised is
    // refused too.
    check_errors(
        "counter_type_arg_in_20180101",
        &program(&[("LOCALS", "counter<bit<32>>(4, CounterType.packets) c;")]),
    );
    check_errors(
        "register_index_type_arg_in_20180101",
        &program(&[("LOCALS", "register<bit<8>, bit<32>>(4) r;")]),
    );
    check_errors(
        "counter_without_type_arg_in_20200408",
        &v1model_2020(&[("LOCALS", "counter(4, CounterType.packets) c;")]),
    );
    check_errors(
        "register_without_index_type_in_20200408",
        &v1model_2020(&[("LOCALS", "register<bit<8>>(4) r;")]),
    );
}

#[test]
fn switch_in_a_parser_state() {
    // p4c's grammar lists no `switch` among parser statements; ours
    // generated one as in a control.
    check_errors(
        "switch_in_parser",
        &program(&[(
            "PARSER",
            "switch (hdr.h.a) { 1: { hdr.h.c = 2; } default: { } } transition accept;",
        )]),
    );
}

#[test]
fn generic_extern_function_type_arguments() {
    // v1model.p4: `hash<O, T, D, M>`, `random<T>`, `update_checksum<T, O>`,
    // `digest<T>`, `log_msg<T>(msg, data)` beside `log_msg(msg)`. A call
    // gives all type arguments or none, and those given type the
    // arguments; ours read none of them but digest's.
    let locals = "bit<16> r16; bit<32> r32;";
    for (name, call) in [
        (
            "hash_one_type_arg",
            "hash<bit<16>>(r16, HashAlgorithm.crc16, 16w0, {hdr.h.a}, 32w16);",
        ),
        (
            "hash_base_not_its_type_arg",
            "hash<bit<16>, bit<16>, tuple<bit<8>>, bit<32>>(r16, HashAlgorithm.crc16, \
             8w0, {hdr.h.a}, 32w16);",
        ),
        (
            "random_result_not_its_type_arg",
            "random<bit<8>>(r16, 0, 255);",
        ),
        (
            "update_checksum_checksum_not_its_type_arg",
            "update_checksum<tuple<bit<8>>, bit<32>>(true, {hdr.h.a}, hdr.h.b, \
             HashAlgorithm.csum16);",
        ),
        ("log_msg_plain_with_type_arg", "log_msg<bit<8>>(\"x\");"),
    ] {
        check_errors(name, &program(&[("LOCALS", locals), ("APPLY", call)]));
    }
    check_compiles(
        "generic_extern_type_args_ok",
        &program(&[
            ("LOCALS", locals),
            (
                "APPLY",
                "hash<bit<16>, bit<16>, tuple<bit<8>>, bit<32>>(r16, HashAlgorithm.crc16, 0, \
                 {hdr.h.a}, 16); random<bit<32>>(r32, 0, 255); \
                 update_checksum<tuple<bit<8>>, bit<16>>(true, {hdr.h.a}, hdr.h.b, \
                 HashAlgorithm.csum16); log_msg<bit<8>>(\"a = {}\", hdr.h.a); \
                 hdr.h.b = r16 + (bit<16>)r32;",
            ),
        ]),
    );
}

#[test]
fn underscore_is_not_a_name() {
    // `_` is p4c's don't-care token: declaring something named `_` is a
    // syntax error there (p4c's underscore_e, underscore1_e..3_e); ours took
    // it as an identifier.
    check_errors(
        "underscore_local",
        &program(&[("APPLY", "bit<8> _ = 1; hdr.h.a = 2;")]),
    );
    check_errors(
        "underscore_field",
        &program(&[("DECLS", "struct s_t { bit<8> _; }")]),
    );
    // As a don't-care it stays: a keyset, a type argument, an out argument.
    check_compiles(
        "underscore_dont_care_ok",
        &program(&[
            (
                "DECLS",
                "action take(out bit<8> x) { x = 1; }\nT same<T>(in T v) { return v; }",
            ),
            (
                "PARSER",
                "transition select(hdr.h.a) { 1: accept; _: accept; }",
            ),
            ("APPLY", "take(_); hdr.h.c = same<_>(hdr.h.a);"),
        ]),
    );
}

// ---- bmv27

#[test]
fn extern_without_constructor_cannot_be_instantiated() {
    // Instantiations are for types with constructors (P4_16 §11.3); p4c's
    // packet_in-bmv2: "type packet_in has no matching constructor". Ours said
    // "not supported yet: the extern `packet_in`", and gave a user extern
    // declaring no constructor one without parameters.
    check_errors(
        "ctorless_packet_in",
        &program(&[("LOCALS", "packet_in() p;")]),
    );
    let tally = "extern Tally { bit<8> next(); }";
    check_errors(
        "ctorless_user_extern",
        &program(&[
            ("DECLS", tally),
            ("LOCALS", "Tally() t;"),
            ("APPLY", "hdr.h.a = t.next();"),
        ]),
    );
    check_errors(
        "ctorless_user_extern_global",
        &program(&[("DECLS", &format!("{tally}\nTally() t;"))]),
    );
    // A declared constructor, even one without parameters, makes it one.
    check_compiles(
        "nullary_constructor_ok",
        &program(&[
            (
                "DECLS",
                "extern Tally { Tally(); bit<8> next(); }\nTally() g;",
            ),
            ("LOCALS", "Tally() t;"),
            ("APPLY", "hdr.h.a = t.next() + g.next();"),
        ]),
    );
}

// ---- rejA (session 21, p4c's p4_16_errors a–h)

#[test]
fn zero_width_cast_changing_the_sign_too() {
    // P4_16 §8.11.1 has no exception for width 0: `(int<2>)` of a `bit<0>`
    // changes the width and the sign at once (p4c's
    // explicit-cast-to-bit-from-int-of-different-width).
    check_errors(
        "cast_bit0_to_int2",
        &program(&[(
            "APPLY",
            "bit<0> z; int<2> s = (int<2>)z; hdr.h.a = (bit<8>)(bit<2>)s;",
        )]),
    );
    check_compiles(
        "cast_zero_width_in_two_steps_ok",
        &program(&[(
            "APPLY",
            "int<0> s; hdr.h.a = (bit<8>)(bit<0>)s; int<0> t = (int<0>)(bit<0>)hdr.h.c;",
        )]),
    );
}

#[test]
fn slice_bound_is_a_number() {
    // A string literal as a slice bound was read as 0 (p4c's
    // expr-bitslice-high-unsupported-type).
    check_errors(
        "slice_bound_string",
        &program(&[("APPLY", "hdr.h.a = hdr.h.b[\"hi\":0] ++ hdr.h.b[6:0];")]),
    );
}

#[test]
fn extern_member_named_after_the_extern_is_a_constructor() {
    // P4_16 §7.2.12.2: the constructor is the member named after the extern
    // and has no return type (p4c's constructor_e); nor can it be abstract.
    check_errors(
        "extern_constructor_with_return_type",
        &program(&[("DECLS", "extern Gadget { void Gadget(); void poke(); }")]),
    );
    check_errors(
        "extern_abstract_constructor",
        &program(&[(
            "DECLS",
            "extern Gizmo { Gizmo(); abstract bit<8> Gizmo(in bit<8> v); }",
        )]),
    );
}

#[test]
fn struct_instantiated_at_the_top_level() {
    // A struct has no constructor at the top level either (p4c's
    // functors3_e); it was taken for a package other than V1Switch.
    check_errors(
        "struct_instance_top_level",
        &program(&[("DECLS", "struct pair_t { bit<8> x; }\npair_t() p;")]),
    );
}

#[test]
fn variable_at_the_top_level() {
    // The grammar's top-level declarations hold no variable (p4c's
    // globalVar_e); this was reported as not supported yet.
    check_errors(
        "variable_top_level",
        &program(&[("DECLS", "bit<8> counter_value;")]),
    );
}

#[test]
fn values_of_no_storable_type() {
    // A `string` or `void` brought in by a type argument or nested in a
    // tuple stopped with P4E0999 in the back end (p4c's
    // call-on-function-illformed-after-specialization and
    // decl-constant-with-illformed-type-after-specialization).
    check_errors(
        "string_function_parameter_by_type_argument",
        &program(&[
            ("DECLS", "void show<T>(in T x) {}"),
            ("APPLY", "show<string>(\"abc\");"),
        ]),
    );
    check_errors(
        "void_field_by_type_argument",
        &program(&[
            ("DECLS", "struct box_t<T> { T t; }"),
            ("APPLY", "box_t<void> b;"),
        ]),
    );
    check_errors(
        "void_in_a_tuple_variable",
        &program(&[("APPLY", "tuple<bit<8>, void> t;")]),
    );
    check_errors(
        "string_action_parameter",
        &program(&[("LOCALS", "action note(inout string s) { }")]),
    );
    check_errors(
        "string_function_result",
        &program(&[("DECLS", "string name_of() { return \"a\"; }")]),
    );
}

#[test]
fn generic_control_constructor_argument_of_its_type_parameter() {
    // `control Add<T>(inout T x)(T amount)`: T was unknown in the
    // constructor parameters (p4c's factory-err2 is cut from such a control),
    // so every instance was refused; the argument is now checked as a T.
    let add = "control Add<T>(inout T x)(T amount) { apply { x = x + amount; } }";
    check_errors(
        "generic_ctor_argument_of_another_type",
        &program(&[
            ("DECLS", add),
            ("LOCALS", "Add<bit<8>>(16w3) add8;"),
            ("APPLY", "add8.apply(hdr.h.a);"),
        ]),
    );
    check_compiles(
        "generic_ctor_argument_ok",
        &program(&[
            ("DECLS", add),
            ("LOCALS", "Add<bit<8>>(8w3) add8; Add<bit<16>>(16w9) add16;"),
            ("APPLY", "add8.apply(hdr.h.a); add16.apply(hdr.h.b);"),
        ]),
    );
}

#[test]
fn void_inside_a_declared_signature() {
    // `void` is a whole return type only; inside a tuple, or as a
    // parameter's type, it is refused on the declaration even when nothing
    // calls it (p4c's extern-abstract-method-return-type-has-dont-care).
    check_errors(
        "void_in_an_extern_method_result",
        &program(&[(
            "DECLS",
            "extern Probe { Probe(); tuple<bit<8>, void> read(); }",
        )]),
    );
    check_errors(
        "void_in_an_extern_function_parameter",
        &program(&[("DECLS", "extern void tick(in tuple<bit<8>, void> x);")]),
    );
}

// ---- rejB

#[test]
fn defaultonly_action_in_an_entry() {
    // P4_16 §14.2.1.2: an action annotated `@defaultonly` in a table's
    // `actions` may only be its default action (p4c's issue1580); ours
    // checked `@tableonly` against the default action only.
    let table = |entry: &str| {
        format!(
            "action other() {{ hdr.h.c = 1; }}\n\
             table t {{ key = {{ hdr.h.a: exact; }} actions = {{ set; @defaultonly other; }} \
             const entries = {{ {entry} }} default_action = other(); }}"
        )
    };
    check_errors(
        "defaultonly_action_in_entry",
        &program(&[("LOCALS", &table("1 : other();")), ("APPLY", "t.apply();")]),
    );
    check_compiles(
        "defaultonly_action_as_default_ok",
        &program(&[("LOCALS", &table("1 : set(2);")), ("APPLY", "t.apply();")]),
    );
}

#[test]
fn cast_of_a_struct_or_header_value() {
    // P4_16 §8.11.1 lists no cast between struct, header or header union
    // values; `(S)` before an initialiser types it (§8.13). p4c refuses
    // `(s)(s){ .. }` and `(s)v` (its issue3233); ours let them through as
    // no-op casts.
    let decls = "struct pair_t { bit<8> x; bit<8> y; }";
    for (name, apply) in [
        (
            "struct_cast_of_a_value",
            "pair_t p = { 1, 2 }; pair_t q = (pair_t)p; hdr.h.a = q.x;",
        ),
        (
            "struct_cast_of_a_cast",
            "pair_t q = (pair_t)(pair_t){ 1, 2 }; hdr.h.a = q.x;",
        ),
        ("header_cast_of_a_value", "hdr.h = (h_t)hdr.h;"),
    ] {
        check_errors(name, &program(&[("DECLS", decls), ("APPLY", apply)]));
    }
    check_compiles(
        "struct_cast_of_an_initialiser_ok",
        &program(&[
            ("DECLS", decls),
            (
                "APPLY",
                "pair_t p = (pair_t){ 1, 2 }; pair_t q = (pair_t){ x = 3, y = 4 }; \
                 hdr.h = (h_t){#}; hdr.h.a = p.x + q.y;",
            ),
        ]),
    );
}

#[test]
fn extern_parameter_index_type_from_20200408() {
    // v1model 20200408: `register<T, I>`, `counter<I>`; an instance passed
    // as a control's apply parameter is one of the parameter's type, so
    // its methods take `in I index` of the parameter's I and the instance
    // passed must have that I (P4_16 §6.8, §7.2.12). Ours kept no I for a
    // parameter, so any bit string indexed it.
    let sub = |apply: &str| {
        format!(
            "control Sub(inout h_t h, register<bit<8>, bit<8>> r, counter<bit<8>> c) {{\n    \
             apply {{ {apply} }}\n}}"
        )
    };
    let locals = "register<bit<8>, bit<8>>(4) r1; counter<bit<8>>(4, CounterType.packets) c1; \
                  Sub() s;";
    let with = |decls: &str, locals: &str| {
        v1model_2020(&[
            ("DECLS", decls),
            ("LOCALS", locals),
            ("APPLY", "s.apply(hdr.h, r1, c1);"),
        ])
    };
    check_errors(
        "extern_param_register_index_not_i",
        &with(&sub("bit<32> i = 1; r.read(h.c, i);"), locals),
    );
    check_errors(
        "extern_param_counter_index_not_i",
        &with(&sub("c.count(h.b);"), locals),
    );
    check_errors(
        "extern_param_index_type_differs",
        &with(
            &sub("r.write(h.a, h.c);"),
            "register<bit<8>, bit<16>>(4) r1; counter<bit<8>>(4, CounterType.packets) c1; Sub() s;",
        ),
    );
    check_errors(
        "extern_param_without_index_type",
        &with(
            "control Sub(inout h_t h, register<bit<8>> r, counter c) { apply { } }",
            locals,
        ),
    );
    check_compiles(
        "extern_param_index_type_ok",
        &with(
            &sub("r.read(h.c, h.a); r.write(3, h.c); c.count(h.a);"),
            locals,
        ),
    );
}

#[test]
fn generic_function_data_of_its_type_argument() {
    // v1model.p4: `hash<O, T, D, M>(.., in D data, ..)`,
    // `update_checksum<T, O>(in bool condition, in T data, ..)`,
    // `log_msg<T>(string msg, in T data)`: type arguments given to the call
    // type its `data` (P4_16 §8.18), as they type the other arguments.
    let locals = "bit<16> r16;";
    for (name, call) in [
        (
            "hash_data_not_its_type_arg",
            "hash<bit<16>, bit<16>, tuple<bit<8>>, bit<32>>(r16, HashAlgorithm.crc16, 0, \
             {hdr.h.a, hdr.h.c}, 16);",
        ),
        (
            "update_checksum_data_not_its_type_arg",
            "update_checksum<tuple<bit<8>>, bit<16>>(true, {hdr.h.a, hdr.h.c}, hdr.h.b, \
             HashAlgorithm.csum16);",
        ),
        (
            "log_msg_data_not_its_type_arg",
            "log_msg<bit<8>>(\"b = {}\", hdr.h.b);",
        ),
    ] {
        check_errors(name, &program(&[("LOCALS", locals), ("APPLY", call)]));
    }
    check_compiles(
        "generic_function_data_ok",
        &program(&[
            ("LOCALS", locals),
            (
                "APPLY",
                "hash<bit<16>, bit<16>, tuple<bit<8>, bit<8>>, bit<32>>(r16, HashAlgorithm.crc16, \
                 0, {hdr.h.a, 3}, 16); \
                 update_checksum<tuple<bit<8>, bit<8>>, bit<16>>(true, {hdr.h.a, hdr.h.c}, \
                 hdr.h.b, HashAlgorithm.csum16); log_msg<bit<16>>(\"b = {}\", hdr.h.b); \
                 hdr.h.b = r16;",
            ),
        ]),
    );
}

#[test]
fn assignment_to_a_stack_property() {
    // A stack's `size`, `lastIndex` and `nextIndex` read values (P4_16
    // §8.18), they name no storage (p4c's stack2: "not a left-value"); ours
    // stopped with `P4E0999 internal: not an l-value`.
    let decls = "struct st_t { h_t[2] s; }";
    for (name, apply) in [
        ("assign_stack_size", "st_t v; v.s.size = 3; hdr.h.a = 1;"),
        (
            "assign_stack_last_index",
            "st_t v; v.s.lastIndex = 1; hdr.h.a = 1;",
        ),
    ] {
        check_errors(name, &program(&[("DECLS", decls), ("APPLY", apply)]));
    }
}

// ---------------------------------------------------------------- pub28

#[test]
fn plus_slice_with_a_run_time_low_bit() {
    // `e[lo +: w]` (P4_16 v1.2.5 §8.6) takes a run-time `lo`, as p4c does;
    // the width stays a compile-time number from 1 to the value's width, and
    // `lo`, like a shift amount (§8.5), is unsigned.
    for (name, apply) in [
        (
            "plus_slice_signed_low_bit",
            "int<8> k = 2; hdr.h.a = hdr.h.b[k +: 8];",
        ),
        ("plus_slice_too_wide", "hdr.h.b = hdr.h.c[hdr.h.a +: 16];"),
        (
            "plus_slice_run_time_width",
            "hdr.h.a = hdr.h.b[hdr.h.a +: hdr.h.c];",
        ),
    ] {
        check_errors(name, &program(&[("APPLY", apply)]));
    }
    // Written, `lo` is read twice (mask and value), so it may not call
    // anything; read, it is read once.
    let next = "bit<8> next(inout bit<8> k) { k = k + 1; return k; }";
    check_errors(
        "plus_slice_store_low_bit_calls",
        &program(&[
            ("DECLS", next),
            ("APPLY", "hdr.h.b[next(hdr.h.a) +: 4] = 4w3;"),
        ]),
    );
    check_compiles(
        "plus_slice_read_low_bit_calls_ok",
        &program(&[
            ("DECLS", next),
            ("APPLY", "hdr.h.c = hdr.h.b[next(hdr.h.a) +: 8];"),
        ]),
    );
    check_compiles(
        "plus_slice_run_time_low_bit_ok",
        &program(&[(
            "APPLY",
            "hdr.h.a = hdr.h.b[hdr.h.c +: 8]; hdr.h.b[hdr.h.a +: 4] = 4w3; \
             hdr.h.c = hdr.h.b[2 +: 8];",
        )]),
    );
}

// ---- gapA

#[test]
fn error_inside_a_generic_block_nothing_instantiates() {
    // p4c type-checks a generic parser or control at its declaration with
    // its type parameters as types of their own (typecheck_e: "Cannot unify
    // T to int<32>"; issue345: "'int' type can only be unified with 'int',
    // 'bit<>', or 'signed<>' types, not with 'H'"); ours checked only the
    // signature of one never instantiated.
    for (name, decls) in [
        (
            "generic_control_passes_t_as_int32",
            "extern void f(in int<32> d);\ncontrol p<T>(in T x) { apply { f(x); } }",
        ),
        (
            "generic_control_int_as_t",
            "control C<H2>() { apply { H2 h = 0; } }",
        ),
        (
            "generic_parser_type_as_value",
            "parser pars<H2>(in bit<16> buf, out H2 hdrs) {\n    bool v;\n    \
             state start { v = buf > H2; transition accept; }\n}",
        ),
        (
            "generic_parser_ctor_default_as_t",
            "parser Q<T>(in bit<8> b)(T t = 1) { state start { transition accept; } }",
        ),
    ] {
        check_errors(name, &program(&[("DECLS", decls)]));
    }
}

#[test]
fn generic_blocks_nothing_instantiates_that_only_move_their_t() {
    // What any type allows passes with T opaque: copying, comparing,
    // passing on to a generic block or function; what only our target
    // refuses of an opaque T (a `register<T>`) is left to instantiations.
    let decls = "control Dg<T>(inout T x) { apply { } }\n\
                 T pass<T>(in T a) { return a; }\n\
                 control Cp<T>(inout T x, in T y) {\n    T z;\n    Dg<T>() d;\n    \
                 apply { z = y; if (x == z) { x = pass(y); } d.apply(x); }\n}\n\
                 control R<T>(inout T x) { register<T>(4) r; apply { r.read(x, 0); } }\n\
                 control K<T>(inout bit<8> x)(T init, bit<8> k) { apply { x = x + k; } }";
    check_compiles("generic_blocks_unused_ok", &program(&[("DECLS", decls)]));
}

#[test]
fn extern_declaration_nothing_instantiates() {
    // p4c checks every extern declaration: a string parameter takes no
    // direction (extern-abstract-method-parameter-type-unsupported: "a
    // parameter with type string cannot have a direction"), a tuple holds
    // no string (constructor-parameter-type-illformed: "Field 'f0' of
    // 'struct tuple_0' cannot have type 'string'"), and a default value is
    // of its parameter's type. Ours checked them only once used.
    for (name, decls) in [
        (
            "extern_abstract_out_string",
            "typedef bit<1> t;\nextern e { e(); abstract t f(out string e); }",
        ),
        (
            "extern_ctor_tuple_of_string",
            "extern Et { Et(tuple<string> x = 0); }",
        ),
        (
            "extern_ctor_default_of_another_type",
            "extern E2 { E2(bit<8> x = true); void m(); }",
        ),
        (
            "extern_method_default_of_another_type",
            "extern E3 { E3(); void m(in bit<8> x = true); }",
        ),
        (
            "extern_function_in_string",
            "extern void note(in string s);",
        ),
    ] {
        check_errors(name, &program(&[("DECLS", decls)]));
    }
    // Defaults of their types, and a generic extern's, are fine unused.
    check_compiles(
        "extern_declarations_unused_ok",
        &program(&[(
            "DECLS",
            "extern E4 { E4(bit<8> x = 3, bool b = true); void m(in bit<8> y = 1); }\n\
             extern E5<T> { E5(T x); void put(in T v); }\n\
             extern void log_it(string s);",
        )]),
    );
}

#[test]
fn action_called_directly_with_a_variable_for_a_directionless_parameter() {
    // P4_16 §6.8: called directly, an action's directionless parameters
    // behave like `in` parameters, and today's p4c takes any value there
    // (only a table's `default_action` and entries need constants). p4c's
    // old direct-action error test ("x: must be a compile-time constant")
    // predates that; the program is kept as a valid one.
    check_compiles(
        "direct_action_variable_ok",
        &program(&[
            (
                "LOCALS",
                "bit<32> x = 7;\n    action a(bit<32> arg) { hdr.h.b = (bit<16>)arg; }",
            ),
            ("APPLY", "a(x); a((bit<32>)hdr.h.a);"),
        ]),
    );
}

#[test]
fn generic_extern_of_a_control_type_parameter_as_constructor_parameter() {
    // `control c<T>(..)(widget<T> w)`: the constructor parameter's type
    // names the control's type parameter, bound where it is instantiated;
    // ours looked T up in the instantiating scope (`unknown type T`).
    let decls = "extern widget<T> { widget(); T get(); }\n\
                 control Cw<T>(inout T x)(widget<T> w) { apply { x = w.get(); } }";
    check_compiles(
        "generic_extern_ctor_param_ok",
        &program(&[
            ("DECLS", decls),
            ("LOCALS", "widget<bit<8>>() w;\n    Cw<bit<8>>(w) cw;"),
            ("APPLY", "cw.apply(hdr.h.a);"),
        ]),
    );
    check_errors(
        "generic_extern_ctor_param_other_t",
        &program(&[
            ("DECLS", decls),
            ("LOCALS", "widget<bit<16>>() w;\n    Cw<bit<8>>(w) cw;"),
            ("APPLY", "cw.apply(hdr.h.a);"),
        ]),
    );
}

#[test]
fn register_of_a_new_type_reads_and_writes_that_type() {
    // P4_16 §7.6: `register<Port_t>` holds Port_t values; a bit<9> read
    // into from it or written to it needs a cast, as p4c checks.
    let decls = "type bit<9> Port_t;";
    let locals = "register<Port_t>(4) r;\n    bit<9> raw;\n    Port_t p;";
    for (name, apply) in [
        ("register_new_type_read_into_underlying", "r.read(raw, 0);"),
        (
            "register_new_type_write_underlying",
            "r.write(0, sm.ingress_port);",
        ),
    ] {
        check_errors(
            name,
            &program(&[("DECLS", decls), ("LOCALS", locals), ("APPLY", apply)]),
        );
    }
    check_compiles(
        "register_new_type_ok",
        &program(&[
            ("DECLS", decls),
            ("LOCALS", locals),
            (
                "APPLY",
                "r.read(p, 0); r.write(1, p); r.write(2, (Port_t)sm.ingress_port); \
                 r.read(p, 1); sm.egress_spec = (bit<9>)p;",
            ),
        ]),
    );
}

#[test]
fn top_level_register_of_another_index_type_given_to_a_v1switch_parser() {
    // v1model 20200408: `register<T, I>`'s index type is part of its type;
    // p4c refuses a `register<bit<8>, bit<32>>` where the parser declares
    // `register<bit<8>, bit<16>>`. Ours compared only the cell type here.
    let with_param = |global: &str| {
        v1model_2020(&[("DECLS", global)])
            .replace(
                "inout standard_metadata_t sm) {\n    state start",
                "inout standard_metadata_t sm)(register<bit<8>, bit<16>> r) {\n    state start",
            )
            .replace(
                "pkt.extract(hdr.h);",
                "pkt.extract(hdr.h); r.write(0, hdr.h.a);",
            )
            .replace("V1Switch(P()", "V1Switch(P(g)")
    };
    check_errors(
        "v1switch_parser_register_index_type",
        &with_param("register<bit<8>, bit<32>>(4) g;"),
    );
    check_compiles(
        "v1switch_parser_register_index_type_ok",
        &with_param("register<bit<8>, bit<16>>(4) g;"),
    );
}

#[test]
fn tuple_element_of_a_new_type_is_that_type() {
    // P4_16 §7.6: `t[0]` of a `tuple<Port_t, bit<8>>` is a Port_t; p4c
    // refuses assigning it to a bit<9> without a cast.
    let decls = "type bit<9> Port_t;";
    for (name, apply) in [
        (
            "tuple_new_type_element_to_underlying",
            "tuple<Port_t, bit<8>> t = { (Port_t)1, 2 }; sm.egress_spec = t[0];",
        ),
        (
            "tuple_plain_element_to_new_type",
            "tuple<bit<9>, bit<8>> t = { 1, 2 }; Port_t p = t[0];",
        ),
    ] {
        check_errors(name, &program(&[("DECLS", decls), ("APPLY", apply)]));
    }
    check_compiles(
        "tuple_new_type_element_ok",
        &program(&[
            ("DECLS", decls),
            (
                "APPLY",
                "tuple<Port_t, bit<8>> t = { (Port_t)1, 2 }; Port_t p = t[0]; \
                 sm.egress_spec = (bit<9>)t[0]; hdr.h.a = t[1]; \
                 if (p == t[0]) { hdr.h.c = 1; }",
            ),
        ]),
    );
}

// ---------------------------------------------------------------- gapB

#[test]
fn select_keys_of_tuple_and_struct_types() {
    // P4_16 §13.6, §8.15: a tuple or struct key is matched by a list of as
    // many values (nested as the key is), by `default`/`_` as a whole, or,
    // as the only key, by a tuple keyset of its components.
    let decls = "struct pair_t { bit<8> x; bit<8> y; } \
                 struct with_header_t { h_t h; bit<8> x; } \
                 pair_t pair_of(bit<8> v) { return {v, v}; }";
    for (name, parser) in [
        (
            "select_list_key_list_length",
            "transition select(hdr.h.a, {hdr.h.a, hdr.h.c}) { (1, {2, 3, 4}): accept; \
             default: reject; }",
        ),
        (
            "select_struct_key_scalar_keyset",
            "pair_t p = {hdr.h.a, hdr.h.c}; transition select(p) { 5: accept; default: reject; }",
        ),
        (
            "select_tuple_key_keyset_length",
            "tuple<bit<8>, bit<8>> t = {hdr.h.a, hdr.h.c}; \
             transition select(t) { (1, 2, 3): accept; default: reject; }",
        ),
        (
            "select_struct_key_with_header",
            "with_header_t w = {hdr.h, 1}; transition select(w) { {_, 1}: accept; \
             default: reject; }",
        ),
        (
            "select_struct_key_calls",
            "transition select(pair_of(hdr.h.a)) { {1, 1}: accept; default: reject; }",
        ),
    ] {
        check_errors(name, &program(&[("DECLS", decls), ("PARSER", parser)]));
    }
    check_compiles(
        "select_tuple_keys_ok",
        &program(&[
            ("DECLS", decls),
            (
                "PARSER",
                "pair_t p = pair_of(hdr.h.a); transition select(hdr.h.c, {hdr.h.a, p}) { \
                 (1, {2, {3, _}}): accept; (2, {_, default}): accept; (3, _): accept; \
                 default: reject; }",
            ),
        ]),
    );
}

#[test]
fn own_extern_function_named_like_v1models() {
    // P4_16 overloads functions by arity: a program's `random` of one
    // parameter is its own beside v1model's of three (`tests/stf/own_random`
    // runs both); a call of another arity matches neither.
    let decls = "extern bit<32> random(in bit<5> logRange);";
    check_errors(
        "own_random_call_arity",
        &program(&[
            ("DECLS", decls),
            ("APPLY", "hdr.h.a = (bit<8>)random(3, 4);"),
        ]),
    );
}

#[test]
fn v1switch_control_constructor_arguments() {
    // A control in V1Switch(..) takes top-level extern instances for its
    // extern constructor parameters (`tests/stf/v1switch_extern_ctor_args`
    // runs one), checked against the parameter's type; a control instance
    // passed there has no control to live in yet.
    let with_param = |param: &str, arg: &str, decls: &str| {
        program(&[("DECLS", decls)])
            .replace(
                "control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {",
                &format!(
                    "control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t \
                     sm)({param}) {{"
                ),
            )
            .replace("VC(), I(), E()", &format!("VC(), I({arg}), E()"))
    };
    check_errors(
        "v1switch_extern_ctor_arg_type",
        &with_param(
            "register<bit<8>> r",
            "cnt",
            "counter(4, CounterType.packets) cnt;",
        ),
    );
    check_errors(
        "v1switch_control_ctor_arg",
        &with_param(
            "step_t s",
            "Inc()",
            "control step_t(inout bit<8> x); control Inc(inout bit<8> x) { apply { x = x + 1; } }",
        ),
    );
    check_compiles(
        "v1switch_extern_ctor_arg_ok",
        &with_param("register<bit<8>> r", "seen", "register<bit<8>>(4) seen;"),
    );
}

// ---------------------------------------------------------------- over29

/// Two functions of one name for the `DECLS` hole.
const TWO_SCALES: &str = "bit<8> scale(in bit<8> v, in bit<8> times) { return v * times; }\n\
                          bit<8> scale(in bit<8> v, in bit<8> shift) { return v << shift; }";

#[test]
fn function_overloads_resolved_by_arity_then_names() {
    // P4_16 §7.2.12: functions overload by number of parameters or by
    // parameter names, never by types (`tests/stf/function_overloads` runs
    // the accepted forms). A positional call cannot choose between two of
    // one arity, a call of no declared arity matches none, and two
    // declarations with the same parameter names are one declared twice.
    check_errors(
        "function_overload_ambiguous",
        &program(&[
            ("DECLS", TWO_SCALES),
            ("APPLY", "hdr.h.a = scale(hdr.h.a, 2);"),
        ]),
    );
    check_errors(
        "function_overload_no_match",
        &program(&[
            ("DECLS", TWO_SCALES),
            ("APPLY", "hdr.h.a = scale(hdr.h.a, 2, 3);"),
        ]),
    );
    check_errors(
        "function_overload_unknown_name",
        &program(&[
            ("DECLS", TWO_SCALES),
            ("APPLY", "hdr.h.a = scale(v = hdr.h.a, by = 2);"),
        ]),
    );
    check_errors(
        "function_declared_twice",
        &program(&[(
            "DECLS",
            "bit<8> pick(in bit<8> x, in bit<8> y) { return x; }\n\
             bit<8> pick(in bit<8> y, in bit<8> x) { return y; }",
        )]),
    );
    check_compiles(
        "function_overload_named",
        &program(&[
            ("DECLS", TWO_SCALES),
            ("APPLY", "hdr.h.a = scale(v = hdr.h.a, shift = 2);"),
        ]),
    );
}

#[test]
fn actions_and_blocks_do_not_overload() {
    // Only functions and methods overload: a second action (p4c: duplicate
    // declaration) or control of one name is refused whatever its arity.
    check_errors(
        "action_declared_twice",
        &program(&[(
            "LOCALS",
            "action set(bit<9> port, bit<8> tag) { sm.egress_spec = port; }",
        )]),
    );
}

#[test]
fn extern_methods_told_apart_by_names() {
    // p4c's issue5253_legal_overloads: methods of one arity whose parameter
    // names differ are legal, and a call naming its arguments picks one; a
    // positional call is ambiguous. Constructors and extern functions too
    // since ext30 (below).
    let decls = "extern Pair { Pair(); void f(in bit<8> a); void f(in bit<8> b); \
                 bit<8> g(in bit<8> a, in bit<16> b); bit<8> g(in bit<8> a, in bit<16> c); }";
    let with = |apply: &str| {
        program(&[
            ("DECLS", decls),
            ("LOCALS", "Pair() pair;"),
            ("APPLY", apply),
        ])
    };
    check_compiles(
        "extern_method_by_names",
        &with("pair.f(b = hdr.h.a); hdr.h.c = pair.g(c = 1, a = 2) + pair.g(a = 3, b = 4);"),
    );
    check_errors(
        "extern_method_positional_ambiguous",
        &with("pair.f(hdr.h.a);"),
    );
}

#[test]
fn size_methods_of_what_has_no_size() {
    // P4_16 has minSizeInBits/minSizeInBytes/maxSizeInBits/maxSizeInBytes
    // (`tests/stf/size_methods_types`), defined for serializable types;
    // `sizeInBits` is not P4_16, and an `error` has no size.
    check_errors(
        "size_in_bits_is_not_p4",
        &program(&[("APPLY", "hdr.h.a = (bit<8>)hdr.h.sizeInBits();")]),
    );
    check_errors(
        "size_of_an_error",
        &program(&[(
            "APPLY",
            "error e = error.NoError; hdr.h.a = (bit<8>)e.minSizeInBits();",
        )]),
    );
}

#[test]
fn structured_annotation_values_are_constants() {
    // P4_16 §18.2: a structured annotation's values are compile-time known
    // strings, integers or booleans; p4c's type-in-expr names a type
    // parameter of the annotated control (`H: Type cannot be used here`),
    // issue3363 compares two extern instances.
    check_errors(
        "structured_annotation_type_in_expr",
        &program(&[(
            "DECLS",
            "@foo[bar=4<H] control Gen<H>(in H x, out bool flag) { apply { flag = true; } }",
        )]),
    );
    check_errors(
        "structured_annotation_not_constant",
        &program(&[(
            "DECLS",
            "extern Ex { Ex(); } Ex() one; Ex() two; @pair[one == two] const bit<8> K = 1;",
        )]),
    );
    check_compiles(
        "structured_annotation_constants",
        &program(&[(
            "DECLS",
            "const bit<8> K = 3; @kv[label=\"x\", flag=true, n=K+1, w=8w3] @list[1, \"t\", 1==2] \
             const bit<8> L = K;",
        )]),
    );
}

// ------------------------------------------------------------------ list29

#[test]
fn list29_list_parameters() {
    // A function's `list<T>` parameter takes its length from its argument
    // (`tests/stf/list_params`): a list expression of T's, or a list value
    // of them for `inout`/`out`. An action's is refused: action data is set
    // by the control plane, which P4Info cannot describe a list to, and a
    // directional one would need an action per length.
    let f = "bit<8> total(in list<bit<8>> l) { bit<8> s = 0; for (bit<8> x in l) { s = s + x; } \
             return s; }\n\
             void twice(inout list<bit<8>> l) { l[0] = l[0] << 1; }";
    check_errors(
        "list29_list_arguments",
        &program(&[
            ("DECLS", f),
            (
                "APPLY",
                "hdr.h.a = total({ hdr.h.a, true });\n        \
                 list<bit<16>> wide = { hdr.h.b };\n        \
                 twice(wide);\n        \
                 twice(hdr.h.a);\n        \
                 tuple<bit<8>, bool> t = { 1, true };\n        \
                 for (bit<8> x in t) { hdr.h.c = x; }",
            ),
        ]),
    );
    check_errors(
        "list29_list_action_parameter",
        &program(&[(
            "DECLS",
            "action first(in list<bit<8>> l, inout bit<8> x) { x = 1; }",
        )]),
    );
    check_compiles(
        "list29_list_arguments_ok",
        &program(&[
            ("DECLS", f),
            (
                "APPLY",
                "list<bit<8>> l = { hdr.h.a, hdr.h.c };\n        \
                 twice(l);\n        \
                 hdr.h.a = total(l) + total({ 1, 2, 3 });",
            ),
        ]),
    );
}

#[test]
fn list29_run_time_array_indices() {
    // A run-time index into an array of scalars reads through a choice of
    // its elements and writes through one `if` per element
    // (`tests/stf/array_runtime_index`); any other write through one (an
    // `out` argument, a slice of the element) is not supported yet, and
    // the index is an integer.
    let with = |apply: &str| {
        program(&[
            ("DECLS", "void put(out bit<8> x) { x = 1; }"),
            ("APPLY", apply),
        ])
        .replace(
            "struct meta_t { bit<8> m; }",
            "struct arr_t { bit<8>[4] a; }\nstruct meta_t { bit<8> m; arr_t arr; }",
        )
    };
    check_errors(
        "list29_array_index_errors",
        &with(
            "put(meta.arr.a[hdr.h.a]);\n        \
             meta.arr.a[hdr.h.c][3:0] = 1;\n        \
             hdr.h.a = meta.arr.a[true];\n        \
             meta.arr.a[hdr.h.b] = true;",
        ),
    );
    check_compiles(
        "list29_array_index_ok",
        &with(
            "meta.arr.a[hdr.h.a] = meta.arr.a[hdr.h.c] + 1;\n        \
             meta.arr.a[hdr.h.b] |= 2;\n        \
             hdr.h.c = meta.arr.a[hdr.h.a][7:4] ++ meta.arr.a[2][3:0];",
        ),
    );
}

// ------------------------------------------------------------------ samp29

#[test]
fn varbit_wider_than_a_jumbo_frame() {
    // A varbit's bytes live inline in its header: at most a 9216-byte
    // jumbo frame (`tests/stf/varbit_wide` runs a `varbit<8032>`).
    check_errors(
        "varbit_too_wide",
        &program(&[("DECLS", "header big_t { varbit<73736> data; }")]),
    );
}

#[test]
fn function_int_parameter_takes_an_integer_without_a_width() {
    // P4_16 §6.8: an `int` parameter of a function is directionless, and
    // each call passes a compile-time known value
    // (`tests/stf/function_int_param` runs one); a typed value, or a
    // direction, is refused.
    let add = "void add(int n, inout bit<8> x) { x = x + n; }";
    check_errors(
        "function_int_param_typed_arg",
        &program(&[("DECLS", add), ("APPLY", "add(hdr.h.a, hdr.h.c);")]),
    );
    check_errors(
        "function_int_param_direction",
        &program(&[
            ("DECLS", "void add(in int n, inout bit<8> x) { x = x + n; }"),
            ("APPLY", "add(1, hdr.h.c);"),
        ]),
    );
    check_compiles(
        "function_int_param_ok",
        &program(&[
            ("DECLS", add),
            ("APPLY", "add(3, hdr.h.c); add(4, hdr.h.a);"),
        ]),
    );
}

// -------------------------------------------------------------------- lead

#[test]
fn function_in_a_control_uses_the_controls_variables() {
    // A function declared among a control's locals is a function (P4_16
    // §10): only actions share the enclosing control's variables and
    // parameters. Reading or writing one was a back-end panic.
    check_errors(
        "function_uses_control_local",
        &program(&[
            (
                "LOCALS",
                "bit<8> calls = 0;\n    \
                 bit<8> counted(in bit<8> v) { calls = calls + 1; return v; }",
            ),
            ("APPLY", "hdr.h.a = counted(hdr.h.a);"),
        ]),
    );
    check_errors(
        "function_uses_control_parameter",
        &program(&[
            ("LOCALS", "bit<8> first() { return hdr.h.a; }"),
            ("APPLY", "hdr.h.a = first();"),
        ]),
    );
    check_compiles(
        "function_in_a_control_with_arguments",
        &program(&[
            ("LOCALS", "bit<8> twice(in bit<8> v) { return v + v; }"),
            ("APPLY", "hdr.h.a = twice(hdr.h.a);"),
        ]),
    );
}

// ------------------------------------------------------------------ ext30

#[test]
fn extern_constructors_told_apart_by_names() {
    // P4_16 §7.2.12.2: a constructor is looked up as a method named like its
    // extern (p4c's lookupConstructor), so constructors of one arity whose
    // parameter names differ are legal, an instantiation naming its
    // arguments picks one (`tests/stf/extern_overloads` runs it), and a
    // positional one is ambiguous.
    let decls = "extern Twice { Twice(bit<8> low); Twice(bit<8> high); bit<8> get(); }";
    let with = |locals: &str| {
        program(&[
            ("DECLS", decls),
            ("LOCALS", locals),
            ("APPLY", "hdr.h.a = t.get();"),
        ])
    };
    check_compiles("extern_ctor_by_names", &with("Twice(high = 3) t;"));
    check_errors("extern_ctor_positional_ambiguous", &with("Twice(3) t;"));
}

#[test]
fn extern_functions_told_apart_by_names() {
    // Extern functions overload as functions do: by arity, then by the
    // names of the arguments; a positional call of two of one arity is
    // ambiguous, and two with the same names are one declared twice.
    let decls = "extern bit<8> pick(in bit<8> first); extern bit<8> pick(in bit<8> second);";
    let with = |decls: &str, apply: &str| program(&[("DECLS", decls), ("APPLY", apply)]);
    check_compiles(
        "extern_function_by_names",
        &with(decls, "hdr.h.a = pick(second = hdr.h.a) + pick(first = 1);"),
    );
    check_errors(
        "extern_function_positional_ambiguous",
        &with(decls, "hdr.h.a = pick(hdr.h.a);"),
    );
    check_errors(
        "extern_function_declared_twice",
        &with(
            "extern bit<8> pick(in bit<8> x, in bit<8> y); \
             extern bit<8> pick(in bit<8> y, in bit<8> x);",
            "",
        ),
    );
}

#[test]
fn size_method_receiver_is_type_checked() {
    // A size method's receiver is not evaluated, but it is type-checked as
    // p4c does (its ArrayIndex check runs before the method is known to be
    // `minSizeInBits`): a constant stack index out of range is refused
    // there too (p4c: "Array index 7 larger or equal to array size 4").
    check_errors(
        "size_method_receiver_index_out_of_range",
        &program(&[(
            "APPLY",
            "h_t[4] s; hdr.h.b = (bit<16>)s[7].minSizeInBits();",
        )]),
    );
}

// ------------------------------------------------------------------- gap30

#[test]
fn gap30_structured_annotations_of_inner_elements() {
    // P4_16 §18.2 holds for every annotated element, not only top-level
    // declarations: a field's, a parameter's, a table's and its
    // properties', keys' and action references', a parser state's
    // structured annotations hold compile-time known strings, integers or
    // booleans, one of a name per element.
    check_errors(
        "structured_annotation_inner",
        &program(&[
            ("DECLS", "header g_t { @width[bits = { 8 }] bit<8> x; }"),
            (
                "LOCALS",
                "action fwd(@doc[from = meta.m] bit<9> port) { sm.egress_spec = port; }\n    \
                 table t {\n        \
                 key = { hdr.h.a : exact @k[n = 1] @k[n = 2]; }\n        \
                 actions = { @r[v = hdr.h.b] fwd; NoAction; }\n        \
                 @p[size = { 1, 2 }] default_action = NoAction();\n    \
                 }",
            ),
            ("APPLY", "t.apply();"),
            (
                "PARSER",
                "transition next; }\n    @s[k = hdr.h.a] state next { transition accept;",
            ),
        ]),
    );
    // A block's constants declared before the element may be named.
    check_compiles(
        "structured_annotation_inner_constants",
        &program(&[
            (
                "DECLS",
                "header g_t { @width[bits = 8, label = \"x\"] bit<8> x; }",
            ),
            (
                "LOCALS",
                "const bit<8> LIMIT = 7;\n    \
                 @doc[\"forward\"] action fwd(@doc[bits = 9] bit<9> port) { sm.egress_spec = port; }\n    \
                 @doc[limit = LIMIT, label = \"t\"] table t {\n        \
                 key = { hdr.h.a : exact @k[n = LIMIT + 1]; }\n        \
                 actions = { @r[only = true] fwd; set; NoAction; }\n        \
                 @p[v = 1] default_action = NoAction();\n    \
                 }",
            ),
            ("APPLY", "t.apply();"),
        ]),
    );
}

#[test]
fn gap30_extern_constructor_list_of_lists() {
    // p4c's list8 passes a list of lists to an extern constructor (in a
    // program for its test package, not v1model); a program's own extern
    // gets its constructor's list as a slice, which has no nested form
    // yet, and says so at the instance.
    check_errors(
        "extern_ctor_list_of_lists",
        &program(&[
            (
                "DECLS",
                "extern Rows { Rows(list<list<bit<8>>> data); bit<8> first(); }",
            ),
            (
                "LOCALS",
                "Rows((list<list<bit<8>>>){ (list<bit<8>>){10, 6, 3}, (list<bit<8>>){5, 2} }) rows;",
            ),
        ]),
    );
}

#[test]
fn gap30_meter_colour_destinations() {
    // A meter writes its colour code into a bit<W>, a serializable enum
    // over bit<W> or a plain enum (as p4c's v1model back end, which holds
    // enums as bit<32>; `tests/stf/meter_colour_plain_enum`); anything
    // else, a bool or an int<W>, is still refused (whether p4c's BMv2
    // back end writes a colour there was not settled).
    check_errors(
        "meter_colour_into_bool",
        &program(&[
            ("DECLS", "struct flags_t { bool red; }"),
            (
                "LOCALS",
                "meter(4, MeterType.packets) m;\n    flags_t f;\n    \
                 direct_meter<int<8>>(MeterType.bytes) dm;\n    int<8> level;\n    \
                 action read_dm() { dm.read(level); }\n    \
                 table t { key = { hdr.h.a : exact; } actions = { read_dm; } meters = dm; }",
            ),
            ("APPLY", "m.execute_meter(0, f.red); t.apply();"),
        ]),
    );
    check_compiles(
        "meter_colour_into_plain_enum",
        &program(&[
            ("DECLS", "enum light_t { GREEN, RED, YELLOW }"),
            ("LOCALS", "meter(4, MeterType.packets) m;\n    light_t l;"),
            (
                "APPLY",
                "m.execute_meter(0, l); if (l == light_t.RED) { hdr.h.a = 1; }",
            ),
        ]),
    );
}

// ------------------------------------------------------------------ rej30

#[test]
fn generic_type_with_a_type_parameter_named_twice() {
    // A declaration's type parameters share one scope (P4_16 §6.5), as a
    // function's already did here; a generic struct, header, header union
    // or extern repeating one was accepted (p4c's
    // name-duplicate-type-parameter-names-2: `struct S<T, T>`).
    for (name, decls) in [
        (
            "struct_type_parameter_twice",
            "struct pair_t<T, T> { T x; }",
        ),
        (
            "header_type_parameter_twice",
            "header wrap_t<T, T> { T x; }",
        ),
        (
            "extern_type_parameter_twice",
            "extern Box<T, T> { Box(); void put(in T v); }",
        ),
    ] {
        check_errors(name, &program(&[("DECLS", decls)]));
    }
    check_compiles(
        "generic_struct_two_type_parameters_ok",
        &program(&[
            ("DECLS", "struct pair_t<T, U> { T x; U y; }"),
            (
                "APPLY",
                "pair_t<bit<8>, bit<16>> p = { hdr.h.a, hdr.h.b }; hdr.h.c = p.x;",
            ),
        ]),
    );
}

#[test]
fn dots_where_no_type_is_expected() {
    // `...` is the default value of the type its place expects (P4_16
    // §8.26); a switch's subject expects none (p4c's
    // stmt-switch-on-unsupported-type). Ours called it "not supported yet".
    check_errors(
        "dots_as_switch_subject",
        &program(&[("APPLY", "switch (...) { default: { } }")]),
    );
}

#[test]
fn remainder_of_booleans() {
    // P4_16 §8.6 and §8.7 define `/` and `%` on integers only; a `bool`
    // divisor was refused as "not a compile-time constant" although `true`
    // is one (p4c's table-entry-lpm-with-priority: `false % true`).
    check_errors(
        "remainder_of_booleans",
        &program(&[("APPLY", "bool b = false % true; if (b) { hdr.h.a = 1; }")]),
    );
}

#[test]
fn packet_parameters_of_a_package_that_is_not_v1model() {
    // A parser passed to a package of the program's own is compared with
    // the package's parser type parameter by parameter; the packet is an
    // extern object, and comparing it as a type of values reported
    // "`packet_in` is not a type" twice (p4c's issue5703, issue1331 and 9
    // more of its error tests). Only the architecture is refused now.
    let src = r#"#include <core.p4>
header h_t { bit<8> a; }
parser Prs(packet_in b, out h_t h);
package Top(Prs p);
parser MyParser(packet_in b, out h_t h) {
    state start { b.extract(h); transition accept; }
}
Top(MyParser()) main;
"#;
    check_errors("packet_parameter_of_own_package", src);
}

#[test]
fn specialization_in_an_extern_signature() {
    // A header union's members are headers (P4_16 §7.2.4), and so are a
    // generic union's once specialized; a specialization written only in
    // an extern's signature was not checked, used or not (p4c's
    // type-list-of-illformed-type: `list<U<bit<32>>>`).
    check_errors(
        "specialization_in_extern_signature",
        &program(&[(
            "DECLS",
            "header_union U<T> { T t; }\nextern Ext { Ext(list<U<bit<32>>> data); }",
        )]),
    );
    check_compiles(
        "specialization_in_extern_signature_ok",
        &program(&[(
            "DECLS",
            "struct pair_t<T> { T x; }\n\
             extern void keep<T>(in pair_t<T> p);\n\
             extern void keep8(in pair_t<bit<8>> p);\n\
             extern Box { Box(list<pair_t<bit<8>>> data); }",
        )]),
    );
}

// ------------------------------------------------------------------- lead24

#[test]
fn structured_annotations_of_block_statements() {
    // P4_16 §18.2 holds for a block statement's structured annotations, as
    // for every other element: compile-time known strings, integers or
    // booleans, one of a name; a constant declared before may be named.
    check_errors(
        "structured_annotation_block",
        &program(&[(
            "APPLY",
            "@doc[v = hdr.h.b] { hdr.h.a = 1; }\n        @n[k = 1] @n[k = 2] { hdr.h.a = 2; }",
        )]),
    );
    check_compiles(
        "structured_annotation_block_constants",
        &program(&[
            ("LOCALS", "const bit<8> LIMIT = 7;"),
            (
                "APPLY",
                "@doc[limit = LIMIT, label = \"b\", on = true] { hdr.h.a = LIMIT; }",
            ),
        ]),
    );
}
