//! Parser tests on real-program-shaped inputs (`testdata/*.p4`) and on
//! small snippets whose AST shape matters to the checker.
use super::*;
use ast::*;

const BASIC: &str = include_str!("testdata/basic.p4");
const CALC: &str = include_str!("testdata/calc.p4");
const TUNNEL: &str = include_str!("testdata/tunnel.p4");
const ECMP: &str = include_str!("testdata/ecmp.p4");
const ENTRIES: &str = include_str!("testdata/entries.p4");
const MISC: &str = include_str!("testdata/misc.p4");

fn parse_ok(name: &str, src: &str) -> (Program, SourceMap) {
    let p = parse_source(name, src);
    assert!(!p.has_errors(), "{}", p.render());
    (p.program.expect("program"), p.sources)
}

/// The user's declarations (after the includes).
fn user_decls<'a>(prog: &'a Program, sources: &SourceMap, file: &str) -> Vec<&'a Decl> {
    prog.decls
        .iter()
        .filter(|d| sources.file_name(d.span().file) == file)
        .collect()
}

fn control<'a>(prog: &'a Program, name: &str) -> &'a ControlDecl {
    prog.decls
        .iter()
        .find_map(|d| match d {
            Decl::Control(c) if c.signature.name.name == name => Some(c),
            _ => None,
        })
        .expect("control exists")
}

fn parser_decl<'a>(prog: &'a Program, name: &str) -> &'a ParserDecl {
    prog.decls
        .iter()
        .find_map(|d| match d {
            Decl::Parser(p) if p.signature.name.name == name => Some(p),
            _ => None,
        })
        .expect("parser exists")
}

fn table<'a>(c: &'a ControlDecl, name: &str) -> &'a TableDecl {
    c.locals
        .iter()
        .find_map(|d| match d {
            Decl::Table(t) if t.name.name == name => Some(t),
            _ => None,
        })
        .expect("table exists")
}

fn entries(t: &TableDecl) -> (&[TableEntry], bool) {
    t.properties
        .iter()
        .find_map(|p| match &p.kind {
            TablePropertyKind::Entries(e) => Some((e.as_slice(), p.is_const)),
            _ => None,
        })
        .expect("entries")
}

fn parse_expr(src: &str) -> Expr {
    let text = format!("header H {{ bit<8> f; }}\nconst bit<8> x = {src};\n");
    let (prog, _) = parse_ok("e.p4", &text);
    match prog.decls.last() {
        Some(Decl::Const(c)) => c.value.clone(),
        other => panic!("unexpected {other:?}"),
    }
}

/// Renders an expression with full parentheses, to check precedence.
fn show(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(i) => i.raw.clone(),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Name(n) => format!("{}{}", if n.top_level { "." } else { "" }, n.ident.name),
        ExprKind::Member { base, member } => format!("{}.{}", show(base), member.name),
        ExprKind::Index { base, index } => format!("{}[{}]", show(base), show(index)),
        ExprKind::Slice { base, hi, lo, .. } => {
            format!("{}[{}:{}]", show(base), show(hi), show(lo))
        }
        ExprKind::Call {
            callee,
            type_args,
            args,
        } => format!(
            "{}{}({})",
            show(callee),
            if type_args.is_empty() {
                String::new()
            } else {
                format!("<{}>", type_args.len())
            },
            args.iter()
                .map(|a| show(&a.value))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ExprKind::Unary { op, operand } => format!("({op:?} {})", show(operand)),
        ExprKind::Binary { op, lhs, rhs } => {
            format!("({} {} {})", show(lhs), op.as_str(), show(rhs))
        }
        ExprKind::Ternary {
            cond,
            then_expr,
            else_expr,
        } => {
            format!(
                "({} ? {} : {})",
                show(cond),
                show(then_expr),
                show(else_expr)
            )
        }
        ExprKind::Cast { expr, .. } => format!("(cast {})", show(expr)),
        ExprKind::StructInit(f) => format!(
            "{{{}}}",
            f.iter()
                .map(|f| format!("{}={}", f.name.name, show(&f.value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ExprKind::List(l) => format!("[{}]", l.iter().map(show).collect::<Vec<_>>().join(", ")),
        ExprKind::This => "this".into(),
        ExprKind::Default => "default".into(),
        ExprKind::DontCare => "_".into(),
        ExprKind::DotDotDot => "...".into(),
        ExprKind::Invalid => "{#}".into(),
    }
}

#[test]
fn v1model_include_parses_and_declares_the_architecture() {
    let (prog, sources) = parse_ok("t.p4", "#include <v1model.p4>\n");
    let names: Vec<&str> = prog
        .decls
        .iter()
        .filter_map(|d| d.name())
        .map(|n| n.name.as_str())
        .collect();
    for expected in [
        "packet_in",
        "packet_out",
        "verify",
        "NoAction",
        "static_assert",
        "__v1model_version",
        "standard_metadata_t",
        "CounterType",
        "MeterType",
        "counter",
        "direct_counter",
        "meter",
        "direct_meter",
        "register",
        "action_profile",
        "random",
        "digest",
        "HashAlgorithm",
        "mark_to_drop",
        "hash",
        "action_selector",
        "CloneType",
        "verify_checksum",
        "update_checksum",
        "verify_checksum_with_payload",
        "update_checksum_with_payload",
        "resubmit",
        "resubmit_preserving_field_list",
        "recirculate",
        "recirculate_preserving_field_list",
        "clone",
        "clone3",
        "clone_preserving_field_list",
        "truncate",
        "assert",
        "assume",
        "log_msg",
        "Parser",
        "VerifyChecksum",
        "Ingress",
        "Egress",
        "ComputeChecksum",
        "Deparser",
        "V1Switch",
    ] {
        assert!(names.contains(&expected), "v1model lacks {expected}");
    }
    // Both forms of mark_to_drop and log_msg; both extract overloads.
    assert_eq!(names.iter().filter(|n| **n == "mark_to_drop").count(), 2);
    assert_eq!(names.iter().filter(|n| **n == "log_msg").count(), 2);
    let errors: Vec<&str> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Error(e) => Some(e.members.iter().map(|m| m.name.as_str())),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(
        errors,
        [
            "NoError",
            "PacketTooShort",
            "NoMatch",
            "StackOutOfBounds",
            "HeaderTooShort",
            "ParserTimeout",
            "ParserInvalidArgument"
        ]
    );
    let kinds: Vec<&str> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::MatchKind(e) => Some(e.members.iter().map(|m| m.name.as_str())),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(
        kinds,
        ["exact", "ternary", "lpm", "range", "optional", "selector"]
    );
    let sm = prog
        .decls
        .iter()
        .find_map(|d| match d {
            Decl::Struct(s) if s.name.name == "standard_metadata_t" => Some(s),
            _ => None,
        })
        .expect("standard_metadata_t");
    let fields: Vec<&str> = sm.fields.iter().map(|f| f.name.name.as_str()).collect();
    assert_eq!(fields.len(), 18);
    assert_eq!(&fields[16..], ["enq_qdepth_bytes", "deq_qdepth_bytes"]);
    assert!(
        matches!(&sm.fields[0].ty.kind, TypeKind::Bit(w) if matches!(&w.kind, ExprKind::Int(i) if i.value == 9))
    );
    assert_eq!(sources.file_name(sm.span.file), "<builtin>/v1model.p4");
}

#[test]
fn basic_router_parses() {
    let (prog, sources) = parse_ok("basic.p4", BASIC);
    let user = user_decls(&prog, &sources, "basic.p4");
    assert_eq!(
        user.len(),
        15,
        "const, 3 typedefs, 4 types, parser, 5 controls, main"
    );
    let ingress = control(&prog, "MyIngress");
    let t = table(ingress, "ipv4_lpm");
    let key = t
        .properties
        .iter()
        .find_map(|p| match &p.kind {
            TablePropertyKind::Key(k) => Some(k),
            _ => None,
        })
        .expect("key");
    assert_eq!(show(&key[0].expr), "hdr.ipv4.dstAddr");
    assert_eq!(key[0].match_kind.name, "lpm");
    assert!(
        t.properties
            .iter()
            .any(|p| matches!(&p.kind, TablePropertyKind::DefaultAction(e) if show(e) == "drop()"))
    );
    let Some(Decl::Instantiation(main)) = user.last().copied() else {
        panic!("main")
    };
    assert_eq!(main.name.name, "main");
    assert_eq!(main.args.len(), 6);
    assert_eq!(sources.location(main.span), "basic.p4:135:1");
}

#[test]
fn calc_lookahead_select_and_const_entries() {
    let (prog, _) = parse_ok("calc.p4", CALC);
    let p = parser_decl(&prog, "MyParser");
    let Some(Transition::Select { exprs, cases, .. }) = &p.states[1].transition else {
        panic!()
    };
    assert_eq!(
        show(&exprs[0]),
        "pkt.lookahead<1>().p".replace("pkt", "packet")
    );
    assert!(cases[0].keyset.is_tuple);
    assert_eq!(cases[0].keyset.elems.len(), 3);
    assert!(matches!(cases[1].keyset.elems[0], KeysetElem::Default(_)));
    let t = table(control(&prog, "MyIngress"), "calculate");
    let (e, is_const) = entries(t);
    assert!(is_const);
    assert_eq!(e.len(), 5);
    assert_eq!(e[0].action.name.ident.name, "operation_add");
    assert!(
        t.properties
            .iter()
            .any(|p| p.is_const && matches!(p.kind, TablePropertyKind::DefaultAction(_)))
    );
}

#[test]
fn tunnel_header_stacks_and_macros() {
    let (prog, _) = parse_ok("tunnel.p4", TUNNEL);
    let hs = prog
        .decls
        .iter()
        .find_map(|d| match d {
            Decl::Struct(s) if s.name.name == "headers" => Some(s),
            _ => None,
        })
        .expect("headers");
    assert!(matches!(&hs.fields[1].ty.kind, TypeKind::Stack { size, .. } if show(size) == "2"));
    assert!(matches!(&hs.fields[2].ty.kind, TypeKind::Stack { size, .. } if show(size) == "4"));
    let p = parser_decl(&prog, "TunnelParser");
    let Some(Transition::Select { cases, .. }) = &p.states[0].transition else {
        panic!()
    };
    assert!(
        matches!(&cases[0].keyset.elems[0], KeysetElem::Mask { value, mask, .. }
        if show(value) == "0x8100" && show(mask) == "0xEFFF")
    );
    let Some(Transition::Select { cases, .. }) = &p.states[1].transition else {
        panic!()
    };
    assert!(matches!(cases[2].keyset.elems[0], KeysetElem::DontCare(_)));
    let ing = control(&prog, "TunnelIngress");
    let StmtKind::Assign { rhs, .. } = &ing.apply.stmts[2].kind else {
        panic!()
    };
    assert_eq!(
        show(rhs),
        "(hdr.mpls[0].isValid() ? 16w0x8847 : hdr.ethernet.etherType)"
    );
}

#[test]
fn ecmp_selector_and_stateful_externs() {
    let (prog, _) = parse_ok("ecmp.p4", ECMP);
    let ing = control(&prog, "Ing");
    let insts: Vec<(&str, usize)> = ing
        .locals
        .iter()
        .filter_map(|d| match d {
            Decl::Instantiation(i) => Some((
                i.name.name.as_str(),
                match &i.ty.kind {
                    TypeKind::Named { args, .. } => args.len(),
                    _ => 99,
                },
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        insts,
        [
            ("port_counter", 0),
            ("route_hits", 0),
            ("port_meter", 0),
            ("acl_meter", 1),
            ("flow_seen", 1),
            ("last_seen", 2),
            ("ecmp_selector", 0),
            ("nh_profile", 0)
        ]
    );
    let t = table(ing, "ecmp_group");
    let actions = t
        .properties
        .iter()
        .find_map(|p| match &p.kind {
            TablePropertyKind::Actions(a) => Some(a),
            _ => None,
        })
        .expect("actions");
    assert_eq!(actions[1].annotations[0].name.name, "defaultonly");
    assert!(t.properties.iter().any(
        |p| matches!(&p.kind, TablePropertyKind::Implementation(e) if show(e) == "ecmp_selector")
    ));
    assert!(
        t.properties
            .iter()
            .any(|p| matches!(&p.kind, TablePropertyKind::Counters(_)))
    );
    let acl = table(ing, "acl");
    let TablePropertyKind::Key(k) = &acl.properties[0].kind else {
        panic!()
    };
    assert_eq!(k[0].annotations[0].string_arg(), Some("src_ip"));
    assert_eq!(k[3].match_kind.name, "optional");
    assert!(
        acl.properties
            .iter()
            .any(|p| matches!(&p.kind, TablePropertyKind::SupportTimeout(_)))
    );
    assert!(
        acl.properties
            .iter()
            .any(|p| matches!(&p.kind, TablePropertyKind::Meters(_)))
    );
    // `return;` inside `if (!acl.apply().hit)`.
    let ifs = ing
        .apply
        .stmts
        .iter()
        .find(|s| matches!(s.kind, StmtKind::If { .. }))
        .expect("if");
    let StmtKind::If { cond, .. } = &ifs.kind else {
        panic!()
    };
    assert_eq!(show(cond), "(Not acl.apply().hit)");
}

#[test]
fn const_entries_with_priorities_ranges_and_masks() {
    let (prog, _) = parse_ok("entries.p4", ENTRIES);
    let ig = control(&prog, "Ig");
    let t = table(ig, "classify");
    let (e, is_const) = entries(t);
    assert!(is_const);
    assert_eq!(e.len(), 5);
    assert!(
        matches!(&e[0].keyset.elems[1], KeysetElem::Range { lo, hi, .. } if show(lo) == "1" && show(hi) == "100")
    );
    assert!(matches!(&e[0].keyset.elems[2], KeysetElem::Mask { .. }));
    assert_eq!(e[1].priority.as_ref().map(show), Some("5".into()));
    assert!(matches!(e[1].keyset.elems[0], KeysetElem::DontCare(_)));
    assert_eq!(e[2].annotations[0].int_arg().map(|i| i.value), Some(7));
    assert!(
        e[3].keyset
            .elems
            .iter()
            .all(|k| matches!(k, KeysetElem::Default(_)))
    );
    assert_eq!(
        show(&Expr {
            kind: ExprKind::List(
                e[2].action
                    .args
                    .clone()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|a| a.value)
                    .collect()
            ),
            span: Span::default()
        }),
        "[3]"
    );
    assert!(t.properties.iter().any(|p| matches!(&p.kind, TablePropertyKind::Custom { name, .. } if name.name == "largest_priority_wins")));
    let (e, is_const) = entries(table(ig, "exact_entries"));
    assert!(!is_const);
    assert!(e[0].is_const && !e[1].is_const);
    assert_eq!(e[2].priority.as_ref().map(show), Some("(1 + 2)".into()));
}

#[test]
fn misc_grammar_corners() {
    let (prog, sources) = parse_ok("misc.p4", MISC);
    // Serializable enum.
    let et = prog
        .decls
        .iter()
        .find_map(|d| match d {
            Decl::Enum(e) if e.name.name == "EtherType" => Some(e),
            _ => None,
        })
        .expect("enum");
    assert!(matches!(
        &et.underlying,
        Some(Type {
            kind: TypeKind::Bit(_),
            ..
        })
    ));
    assert_eq!(
        et.members[1].value.as_ref().map(show),
        Some("0x0806".into())
    );
    // `type` vs `typedef`, header union, generic struct, controller header.
    assert!(
        prog.decls
            .iter()
            .any(|d| matches!(d, Decl::Typedef(t) if t.is_new_type && t.name.name == "FlowId_t"))
    );
    assert!(prog.decls.iter().any(|d| matches!(d, Decl::Typedef(t) if !t.is_new_type && matches!(t.ty.kind, TypeKind::Tuple(ref v) if v.len() == 2))));
    assert!(
        prog.decls
            .iter()
            .any(|d| matches!(d, Decl::HeaderUnion(u) if u.fields.len() == 2))
    );
    assert!(
        prog.decls
            .iter()
            .any(|d| matches!(d, Decl::Struct(s) if s.type_params.len() == 1))
    );
    let pin = prog
        .decls
        .iter()
        .find_map(|d| match d {
            Decl::Header(h) if h.name.name == "packet_in_header_t" => Some(h),
            _ => None,
        })
        .expect("packet_in header");
    assert_eq!(pin.annotations[0].string_arg(), Some("packet_in"));
    assert_eq!(pin.fields[1].annotations[0].name.name, "padding");
    // Extern with abstract method, extern function with @optional param.
    let hasher = prog
        .decls
        .iter()
        .find_map(|d| match d {
            Decl::Extern(e) if e.name.name == "Hasher" => Some(e),
            _ => None,
        })
        .expect("Hasher");
    assert!(matches!(&hasher.members[2], ExternMember::Method(m) if m.is_abstract));
    assert!(matches!(
        &hasher.members[0],
        ExternMember::Constructor { .. }
    ));
    // Value sets and a varbit extract.
    let p = parser_decl(&prog, "MainParser");
    let vs: Vec<&ValueSetDecl> = p
        .locals
        .iter()
        .filter_map(|d| match d {
            Decl::ValueSet(v) => Some(v),
            _ => None,
        })
        .collect();
    assert_eq!(vs.len(), 2);
    assert_eq!(vs[0].annotations[0].string_arg(), Some(".custom_ports"));
    assert!(matches!(vs[1].elem_type.kind, TypeKind::Tuple(_)));
    let opts = p
        .states
        .iter()
        .find(|s| s.name.name == "parse_options")
        .expect("state");
    let StmtKind::Call(call) = &opts.stmts[0].kind else {
        panic!()
    };
    assert_eq!(show(call), "pkt.extract(hdr.options, optlen)");
    let v6 = p
        .states
        .iter()
        .find(|s| s.name.name == "parse_ipv6")
        .expect("state");
    let Some(Transition::Select { cases, .. }) = &v6.transition else {
        panic!()
    };
    assert!(!cases[0].keyset.is_tuple);
    assert!(matches!(
        &cases[2].keyset.elems[1],
        KeysetElem::Range { .. }
    ));
    // The macro CPU_PORT maps to its use site.
    let start = p
        .states
        .iter()
        .find(|s| s.name.name == "start")
        .expect("start");
    let Some(Transition::Select { cases, .. }) = &start.transition else {
        panic!()
    };
    assert_eq!(sources.snippet(cases[0].keyset.span), "CPU_PORT");
    // Nested control with constructor params, instantiated and applied.
    let counting = control(&prog, "Counting");
    assert_eq!(counting.ctor_params.len(), 1);
    let ing = control(&prog, "MainIngress");
    let Decl::Instantiation(hasher_inst) = &ing.locals[1] else {
        panic!()
    };
    assert!(
        matches!(hasher_inst.initializer.as_deref(), Some([Decl::Function(f)]) if f.name.name == "on_hash")
    );
    // Annotations on actions and params.
    let fwd = ing
        .locals
        .iter()
        .find_map(|d| match d {
            Decl::Action(a) if a.name.name == "fwd" => Some(a),
            _ => None,
        })
        .expect("fwd");
    assert_eq!(fwd.annotations[0].string_arg(), Some("forward"));
    assert_eq!(
        fwd.annotations[1].int_arg().map(|i| i.value),
        Some(0x0100_0010)
    );
    assert_eq!(fwd.params[0].annotations[0].string_arg(), Some("port"));
    // Custom table property with an annotation.
    let route = table(ing, "route");
    assert!(
        matches!(&route.properties[3], TableProperty { kind: TablePropertyKind::Custom { name, .. }, annotations, .. }
        if name.name == "my_property" && annotations[0].name.name == "my_custom_prop")
    );
    // Switch with a fall-through label and default.
    let sw = ing
        .apply
        .stmts
        .iter()
        .find(|s| matches!(s.kind, StmtKind::Switch { .. }))
        .expect("switch");
    let StmtKind::Switch { expr, cases } = &sw.kind else {
        panic!()
    };
    assert_eq!(show(expr), "route.apply().action_run");
    assert_eq!(cases.len(), 4);
    assert!(cases[0].body.is_none() && cases[1].body.is_some());
    assert!(matches!(cases[3].label, SwitchLabel::Default(_)));
    // Literals and operators.
    let vars: Vec<&VarDecl> = ing
        .apply
        .stmts
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Var(v) => Some(v),
            _ => None,
        })
        .collect();
    assert!(matches!(vars[0].ty.kind, TypeKind::Named { .. }));
    assert_eq!(
        show(vars[1].init.as_ref().expect("init")),
        "(16w1 ++ scratch)"
    );
    assert_eq!(show(vars[2].init.as_ref().expect("init")), "wide[7:0]");
    assert_eq!(show(vars[4].init.as_ref().expect("init")), "(Neg 8s5)");
    assert_eq!(
        show(vars[5].init.as_ref().expect("init")),
        "(((Not (s < 0)) && ((nib != 0) || (low >= 8w3))) && ((cast s) > LIMIT))"
    );
    let scratch = ing
        .locals
        .iter()
        .find_map(|d| match d {
            Decl::Var(v) => Some(v),
            _ => None,
        })
        .expect("scratch");
    let init = scratch.init.as_ref().expect("init");
    let ExprKind::Ternary { cond, .. } = &init.kind else {
        panic!()
    };
    let ExprKind::Binary { lhs, .. } = &cond.kind else {
        panic!()
    };
    assert!(
        matches!(&lhs.kind, ExprKind::Int(i) if i.negative && i.width == Some((16, true)) && i.value == 3)
    );
    // Dot-prefixed call, named arguments, struct initialiser.
    assert!(ing.apply.stmts.iter().any(
        |s| matches!(&s.kind, StmtKind::Call(Expr { kind: ExprKind::Call { callee, .. }, .. })
        if matches!(&callee.kind, ExprKind::Name(n) if n.top_level))
    ));
    assert!(ing.apply.stmts.iter().any(
        |s| matches!(&s.kind, StmtKind::Call(Expr { kind: ExprKind::Call { args, .. }, .. })
        if args.len() == 2 && args[0].name.as_ref().is_some_and(|n| n.name == "data"))
    ));
    // Package instantiation with type arguments and a kv-style annotation.
    let Some(Decl::Instantiation(main)) = prog.decls.last() else {
        panic!()
    };
    assert!(matches!(&main.ty.kind, TypeKind::Named { args, .. } if args.len() == 2));
    assert!(
        matches!(&main.annotations[0].body, AnnotationBody::Unstructured { raw, exprs: None } if raw == "name = \"misc\", version = \"1.0\"")
    );
}

#[test]
fn precedence_follows_p4_not_c() {
    // In P4 `&`, `^`, `|` bind tighter than comparisons.
    assert_eq!(show(&parse_expr("a & b == c")), "((a & b) == c)");
    assert_eq!(show(&parse_expr("a | b ^ c & d")), "(a | (b ^ (c & d)))");
    assert_eq!(show(&parse_expr("a + b * c - d")), "((a + (b * c)) - d)");
    assert_eq!(show(&parse_expr("a << 2 + 1")), "(a << (2 + 1))");
    assert_eq!(show(&parse_expr("a >> 2 > 1")), "((a >> 2) > 1)");
    assert_eq!(show(&parse_expr("a ++ b + c")), "((a ++ b) + c)");
    assert_eq!(show(&parse_expr("a || b && c")), "(a || (b && c))");
    assert_eq!(
        show(&parse_expr("a ? b : c ? d : e")),
        "(a ? b : (c ? d : e))"
    );
    assert_eq!(
        show(&parse_expr("-a[3:0] |+| b |-| c")),
        "(((Neg a[3:0]) |+| b) |-| c)"
    );
    assert_eq!(show(&parse_expr("(bit<8>) a + 1")), "((cast a) + 1)");
    assert_eq!(show(&parse_expr("(H) a")), "(cast a)");
    // `e[lo +: w]` is `e[lo + w - 1 : lo]`; `+` followed by `:` ends `lo`.
    assert_eq!(show(&parse_expr("a[4 +: 8]")), "a[((4 + 8) - 1):4]");
    assert_eq!(
        show(&parse_expr("a[i + 1 +: 2]")),
        "a[(((i + 1) + 2) - 1):(i + 1)]"
    );
    assert_eq!(show(&parse_expr("(H){#}")), "(cast {#})");
    assert_eq!(show(&parse_expr("{ a = 1, ... }")), "{a=1, ...=...}");
    assert_eq!(show(&parse_expr("(a) + 1")), "(a + 1)");
    assert_eq!(show(&parse_expr("a < b")), "(a < b)");
    assert_eq!(show(&parse_expr("f<H>(a)")), "f<1>(a)");
    assert_eq!(show(&parse_expr("f<bit<8>, bit<16>>(a)")), "f<2>(a)");
    assert_eq!(show(&parse_expr("a < b && c > d")), "((a < b) && (c > d))");
    assert_eq!(
        show(&parse_expr("{ a = 1, b = { 2, 3 } }")),
        "{a=1, b=[2, 3]}"
    );
    assert_eq!(
        show(&parse_expr("(bit<(4 + 4)>) 8w0x0_f")),
        "(cast 8w0x0_f)"
    );
}

#[test]
fn contextual_keywords_are_names_where_allowed() {
    let src = "header h { bit<8> key; bit<8> type; bit<8> apply; bit<8> entries; bit<8> state; bit<8> actions; }\n\
               struct s { h hdr; }\n\
               control c(inout s x) { apply { x.hdr.key = x.hdr.type + x.hdr.apply; } }\n";
    parse_ok("k.p4", src);
    let p = parse_source("k.p4", "const bit<8> if = 1;\n");
    assert!(p.has_errors());
    assert!(p.render().contains("found keyword `if`"), "{}", p.render());
}

#[test]
fn spans_point_into_the_right_file() {
    let p = parse_sources(
        "main.p4",
        "#include \"lib.p4\"\nconst bit<8> y = x;\n",
        &[("lib.p4", "// lib\nconst bit<8> x = 1;\n")],
    );
    assert!(!p.has_errors(), "{}", p.render());
    let prog = p.program.as_ref().expect("program");
    let x = prog
        .decls
        .iter()
        .find(|d| d.name().is_some_and(|n| n.name == "x"))
        .expect("x");
    assert_eq!(p.sources.location(x.span()), "lib.p4:2:1");
    assert_eq!(p.sources.snippet(x.name().expect("name").span), "x");
    let y = prog
        .decls
        .iter()
        .find(|d| d.name().is_some_and(|n| n.name == "y"))
        .expect("y");
    assert_eq!(p.sources.location(y.span()), "main.p4:2:1");
    assert_eq!(p.sources.snippet(y.span()), "const bit<8> y = x;");
}

#[test]
fn errors_are_recovered_and_all_reported() {
    let src = "const bit<8> a = 1\nconst bit<8> b = 2;\ncontrol c() { apply { x = ; y = 1; z(; } }\nconst bit<8> d = 3;\n";
    let p = parse_source("r.p4", src);
    assert!(p.program.is_none());
    let locs: Vec<String> = p
        .diagnostics
        .iter()
        .map(|d| p.sources.location(d.primary_span().expect("span")))
        .collect();
    assert_eq!(
        locs,
        ["r.p4:1:18", "r.p4:3:27", "r.p4:3:38"],
        "{}",
        p.render()
    );
}

#[test]
fn nesting_up_to_the_limit_parses_even_from_a_small_stack() {
    // 200 levels of parentheses and of else-if, parsed from a thread with a
    // 256 KiB stack: the parser runs on its own big stack.
    let src = format!(
        "const bit<8> a = {}1{};\ncontrol c(inout bit<8> x) {{ apply {{ {} x = 1; }} }}\n",
        "(".repeat(200),
        ")".repeat(200),
        "if (x == 0) { } else ".repeat(200)
    );
    let handle = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || parse_source("deep.p4", &src).has_errors())
        .expect("spawn");
    assert!(!handle.join().expect("no stack overflow"));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let src = format!(
        "const bit<8> a = {}1{};\n",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let p = parse_source("d.p4", &src);
    assert!(
        p.diagnostics
            .iter()
            .any(|d| d.code == crate::diag::codes::TOO_DEEP),
        "{}",
        p.render()
    );
    let src = format!(
        "control c() {{ apply {{ {} }} }}\n",
        "if (true) {".repeat(3000)
    );
    let p = parse_source("d.p4", &src);
    assert!(p.has_errors());
    let src = format!("const bit<8> a = {}1;\n", "!-~".repeat(3000));
    assert!(parse_source("d.p4", &src).has_errors());
}

#[test]
fn values_shadow_type_names_in_their_scope() {
    // `hdr` is a header type at top level, but a parameter inside the
    // control: `hdr.f = 1;` is then an assignment, not a declaration.
    let src = "header hdr { bit<8> f; }\n\
               control c(inout hdr h2, inout hdr hdr) { apply { hdr.f = 1; hdr x; } }\n\
               control d(inout hdr h) { apply { hdr y; y.f = h.f; } }\n";
    let p = parse_source("s.p4", src);
    assert!(
        p.has_errors(),
        "`hdr x;` after the shadowing is not a declaration"
    );
    let src = "header hdr { bit<8> f; }\n\
               control c(inout hdr hdr) { apply { hdr.f = 1; } }\n\
               control d(inout hdr h) { apply { hdr y; y.f = h.f; } }\n";
    let (prog, _) = parse_ok("s.p4", src);
    assert!(matches!(
        control(&prog, "c").apply.stmts[0].kind,
        StmtKind::Assign { .. }
    ));
    assert!(matches!(
        control(&prog, "d").apply.stmts[0].kind,
        StmtKind::Var(_)
    ));
}

#[test]
fn annotation_bodies_are_kept_raw_and_parsed_when_possible() {
    let src = "@pragma my_pragma a b 3\n\
               @a[k = 1, j = \"x\"] @b[1, 2] @c() @d(a + + +) @e(\"s\", 7)\n\
               const bit<8> X = 1;\n";
    let (prog, _) = parse_ok("a.p4", src);
    let anns = prog.decls[0].annotations();
    let names: Vec<&str> = anns.iter().map(|a| a.name.name.as_str()).collect();
    assert_eq!(names, ["pragma", "a", "b", "c", "d", "e"]);
    assert!(
        matches!(&anns[0].body, AnnotationBody::Unstructured { raw, exprs: None } if raw == "my_pragma a b 3")
    );
    assert!(
        matches!(&anns[1].body, AnnotationBody::Structured { exprs, kvs, .. } if exprs.is_empty() && kvs.len() == 2 && kvs[1].name.name == "j")
    );
    assert!(
        matches!(&anns[2].body, AnnotationBody::Structured { exprs, kvs, .. } if exprs.len() == 2 && kvs.is_empty())
    );
    assert!(
        matches!(&anns[3].body, AnnotationBody::Unstructured { raw, exprs: Some(e) } if raw.is_empty() && e.is_empty())
    );
    assert!(
        matches!(&anns[4].body, AnnotationBody::Unstructured { raw, exprs: None } if raw == "a + + +")
    );
    assert!(
        matches!(&anns[5].body, AnnotationBody::Unstructured { exprs: Some(e), .. } if e.len() == 2)
    );
    // Mixing the two structured forms is an error.
    assert!(parse_source("m.p4", "@a[k = 1, 2] const bit<8> X = 1;\n").has_errors());
}

#[test]
fn a_byte_order_mark_is_ignored() {
    let p = parse_source("bom.p4", "\u{feff}const bit<8> X = 1;\n");
    assert!(!p.has_errors(), "{}", p.render());
    let p = parse_sources(
        "m.p4",
        "#include \"b.p4\"\n",
        &[("b.p4", "\u{feff}const bit<8> Y = 1;\n")],
    );
    assert!(!p.has_errors(), "{}", p.render());
}

#[test]
fn every_token_maps_back_to_its_own_text() {
    // The source map must give each token a span whose text is the token
    // itself (in whichever file it came from); tokens produced by a macro
    // map to the macro's name at the use site.
    for (name, src) in [
        ("basic.p4", BASIC),
        ("calc.p4", CALC),
        ("ecmp.p4", ECMP),
        ("entries.p4", ENTRIES),
    ] {
        let mut sources = SourceMap::new();
        let root = sources.add(name, src);
        let expanded =
            preprocess::preprocess(&mut sources, root, &mut preprocess::MemLoader::default())
                .expect("preprocesses");
        let (tokens, diags) = lexer::lex(&expanded);
        assert!(diags.is_empty());
        assert!(tokens.len() > 500);
        for t in &tokens[..tokens.len() - 1] {
            let written = sources.snippet(t.span);
            let expanded_text = &expanded.text[t.lo..t.hi];
            assert!(
                written == expanded_text || written == "V1MODEL_VERSION",
                "{name}: token `{expanded_text}` maps to `{written}` at {}",
                sources.location(t.span)
            );
        }
        // Tokens of the included files point into them.
        assert!(
            tokens
                .iter()
                .any(|t| sources.file_name(t.span.file) == "<builtin>/v1model.p4")
        );
        assert!(
            tokens
                .iter()
                .any(|t| sources.file_name(t.span.file) == name)
        );
    }
}
