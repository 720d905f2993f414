//! Parsers, controls, actions, tables and extern instances (P4_16 spec §12
//! parsers and `select`, §13 controls, §14 tables, v1model externs).
//!
//! Contract: each declaration is turned into its IR form and registered in
//! the enclosing scope; per-table facts that only P4Info needs (size,
//! default action, entries, direct resources) go into
//! [`super::program_info::Facts`]. Parser graphs are checked: `start` must
//! exist, every transition names a declared state, `accept` or `reject`.

use super::program_info::{EntryFacts, NameSpec, TableFacts};
use super::{Body, BodyKind, Checker, Sym, codes, fold};
use crate::diag::{Diagnostic, Span};
use crate::front::ast;
use crate::ir::{self, Handle, Ty};
use p4_target::info::{ActionScope, CounterUnit, MatchKind};
use p4_target::runtime::FieldMatch;

/// `@name` handling: `@name(".x")` is absolute, `@name("x")` replaces the local name.
pub(crate) fn name_spec(annotations: &[ast::Annotation], local: &str) -> NameSpec {
    let id = explicit_id(annotations);
    match ast::find_annotation(annotations, "name").and_then(|a| a.string_arg()) {
        Some(n) if n.starts_with('.') => NameSpec {
            absolute: true,
            name: n[1..].to_string(),
            id,
        },
        Some(n) => NameSpec {
            absolute: false,
            name: n.to_string(),
            id,
        },
        None => NameSpec {
            absolute: false,
            name: local.to_string(),
            id,
        },
    }
}

/// `@id(n)`, if present and a 32-bit number.
pub(crate) fn explicit_id(annotations: &[ast::Annotation]) -> Option<u32> {
    ast::find_annotation(annotations, "id")
        .and_then(|a| a.int_arg())
        .and_then(|i| u32::try_from(i.value).ok())
}

/// Source text of a key expression as p4c names match fields.
pub(crate) fn expr_text(e: &ast::Expr) -> String {
    match &e.kind {
        ast::ExprKind::Name(p) => format!("{}{}", if p.top_level { "." } else { "" }, p.ident.name),
        ast::ExprKind::Member { base, member } => format!("{}.{}", expr_text(base), member.name),
        ast::ExprKind::Index { base, index } => {
            format!("{}[{}]", expr_text(base), expr_text(index))
        }
        ast::ExprKind::Slice { base, hi, lo, .. } => {
            format!("{}[{}:{}]", expr_text(base), expr_text(hi), expr_text(lo))
        }
        ast::ExprKind::Int(i) => i.raw.clone(),
        ast::ExprKind::Call { callee, args, .. } => {
            let a: Vec<String> = args.iter().map(|a| expr_text(&a.value)).collect();
            format!("{}({})", expr_text(callee), a.join(", "))
        }
        _ => "key".to_string(),
    }
}

/// Whether p4c can name a key expression without `@name` (its
/// KeyNameGenerator): a name, a field, a stack element at a nameable index, a slice, a
/// constant, `isValid()` of a nameable header, and a nameable value masked
/// with a constant (`x & 0xff`). Any other key needs `@name`.
pub(crate) fn key_is_nameable(e: &ast::Expr) -> bool {
    let constant = |e: &ast::Expr| matches!(e.kind, ast::ExprKind::Int(_));
    match &e.kind {
        // A boolean constant is taken too: refusing a key p4c may name
        // would cost valid programs.
        ast::ExprKind::Name(_) | ast::ExprKind::Int(_) | ast::ExprKind::Bool(_) => true,
        ast::ExprKind::Member { base, .. } => key_is_nameable(base),
        ast::ExprKind::Index { base, index } => key_is_nameable(base) && key_is_nameable(index),
        ast::ExprKind::Slice { base, .. } => key_is_nameable(base),
        ast::ExprKind::Call { callee, args, .. } => {
            args.is_empty()
                && matches!(&callee.kind, ast::ExprKind::Member { base, member }
                    if member.name == "isValid" && key_is_nameable(base))
        }
        ast::ExprKind::Binary {
            op: ast::BinaryOp::BitAnd,
            lhs,
            rhs,
        } => (constant(rhs) && key_is_nameable(lhs)) || (constant(lhs) && key_is_nameable(rhs)),
        _ => false,
    }
}

/// The cache key of a block instantiated with type arguments and
/// constructor argument values.
fn ctor_key(
    name: &str,
    tys: &[Ty],
    values: &[(ast::Ident, Sym)],
    passed: &[(ast::Ident, Handle<ir::Control>, u32)],
) -> (String, Vec<String>) {
    (
        name.to_string(),
        tys.iter()
            .map(|t| format!("{t:?}"))
            .chain(values.iter().map(|(_, v)| match v {
                Sym::Const(x, _) => format!("{:?}", x.kind),
                Sym::IntConst(i) => format!("int {i}"),
                other => format!("{other:?}"),
            }))
            .chain(
                passed
                    .iter()
                    .map(|(_, c, _)| format!("control {}", c.index())),
            )
            .collect(),
    )
}

/// Constructor arguments: constant values by parameter (a
/// [`Sym::Const`], or a [`Sym::IntConst`] for an `int` parameter), and the
/// instances passed to control-typed parameters (parameter, the instance's
/// control, its index among the instantiating control's instances).
type CtorArgs = (
    Vec<(ast::Ident, Sym)>,
    Vec<(ast::Ident, Handle<ir::Control>, u32)>,
);

/// Bits a register cell of type `ty` takes: a scalar whose value is its
/// bits, or a struct of such (nested structs too); `None` for anything else.
pub(super) fn register_cell_width(ty: &Ty, prog: &ir::Program) -> Option<u32> {
    match ty {
        Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_) => ty.scalar_width(prog),
        Ty::Composite(c) if prog.composites[*c].kind == ir::CompositeKind::Struct => prog
            .composites[*c]
            .fields
            .iter()
            .map(|f| register_cell_width(&f.ty, prog))
            .sum(),
        _ => None,
    }
}

fn direction(d: ast::Direction) -> ir::Direction {
    match d {
        ast::Direction::Out => ir::Direction::Out,
        ast::Direction::InOut => ir::Direction::InOut,
        _ => ir::Direction::In,
    }
}

impl Checker {
    fn block_params(&mut self, params: &[ast::Param], packet_type: &str) -> Vec<ir::BlockParam> {
        let mut out = Vec::new();
        for (i, p) in params.iter().enumerate() {
            if let ast::TypeKind::Named { name, .. } = &p.ty.kind
                && (name.ident.name == "packet_in" || name.ident.name == "packet_out")
            {
                if name.ident.name != packet_type {
                    self.error(
                        codes::TYPE_MISMATCH,
                        p.ty.span,
                        format!(
                            "`{}` is not allowed here; expected `{packet_type}`",
                            name.ident.name
                        ),
                    );
                }
                out.push(ir::BlockParam {
                    name: p.name.name.clone(),
                    ty: None,
                    dir: ir::Direction::In,
                    default: None,
                });
                self.declare(&p.name, Sym::Packet(name.ident.name == "packet_out"));
                continue;
            }
            let ty = self.ty(&p.ty);
            let dir = direction(p.direction);
            if let Some(ty) = &ty {
                self.declare(
                    &p.name,
                    Sym::Var(
                        ir::VarRef::BlockParam(i as u32),
                        ty.clone(),
                        dir != ir::Direction::In,
                        Some(self.nominal_of_type(&p.ty)),
                        self.tuple_nominals(&p.ty),
                    ),
                );
            }
            // Only `in` and directionless parameters keep a default
            // (`check_param_defaults` reports the others).
            let default = match (&p.default, &ty) {
                (Some(d), Some(t)) if dir == ir::Direction::In => self.default_value(d, t),
                _ => None,
            };
            out.push(ir::BlockParam {
                name: p.name.name.clone(),
                ty: Some(ty.unwrap_or(Ty::Void)),
                dir,
                default,
            });
        }
        out
    }

    // --------------------------------------------------------------- parser

    pub(crate) fn parser_decl(&mut self, p: &ast::ParserDecl) {
        // Directionless `int` apply parameters, as for controls
        // ([`Self::control_decl`]): `P.apply(pkt, 3, ..)` in a state.
        if p.ctor_params.is_empty()
            && let Some((positions, ctor, params)) = split_int_params(&p.signature.params)
        {
            let mut moved = p.clone();
            moved.ctor_params = ctor;
            moved.signature.params = params;
            self.apply_int_params
                .insert(p.signature.name.name.clone(), positions);
            return self.parser_decl(&moved);
        }
        if !p.signature.type_params.is_empty() || !p.ctor_params.is_empty() {
            // As for controls: checked once per distinct set of type and
            // constructor arguments, at each instantiation, and once here.
            let name = p.signature.name.name.clone();
            self.ctor_parsers.insert(name.clone(), p.clone());
            self.declare(&p.signature.name, Sym::CtorParser(name.clone()));
            self.trial_ctor(
                &name,
                &p.signature.type_params,
                &p.ctor_params,
                |c, tys, values| {
                    c.ctor_parser_body(p, tys, values);
                },
            );
            return;
        }
        if let Some(h) = self.parser_body(p) {
            self.declare(&p.signature.name, Sym::Parser(h));
        }
    }

    /// Instantiates a parser with constructor parameters (see
    /// [`Self::instantiate_ctor_control`]).
    pub(crate) fn instantiate_ctor_parser(
        &mut self,
        name: &str,
        tys: &[Ty],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Handle<ir::Parser>> {
        self.ctor_used.insert(name.to_string());
        let decl = self.ctor_parsers.get(name)?.clone();
        self.type_arg_count("parser", name, &decl.signature.type_params, tys, span)?;
        let generic = (decl.signature.type_params.as_slice(), tys);
        let (values, passed) =
            self.ctor_values("parser", name, generic, &decl.ctor_params, args, span)?;
        let externs = std::mem::take(&mut self.extern_params.parser_ctor_args);
        if !passed.is_empty() {
            self.unsupported(span, "parser constructor parameters of control type");
            return None;
        }
        if !externs.is_empty() {
            // Bound to the instances passed: a parser of its own, as a
            // parser's extern objects are one per declaration
            // (`check::extern_params`).
            let locals: Vec<u32> = externs
                .iter()
                .filter_map(|a| match a {
                    super::extern_params::ParserArg::Local(e) => Some(*e),
                    super::extern_params::ParserArg::Global(..) => None,
                })
                .collect();
            self.extern_params.parser_ctor_args = externs;
            let h = self.ctor_parser_body(&decl, tys, values);
            self.extern_params.parser_ctor_args.clear();
            let h = h?;
            let slots: Vec<u32> = self
                .extern_params
                .parsers
                .get(&h.index())
                .map(|v| v.iter().filter(|s| s.ctor).map(|s| s.inst).collect())
                .unwrap_or_default();
            for (inst, passed) in slots.into_iter().zip(locals) {
                self.extern_params
                    .parser_pending
                    .push(super::extern_params::ParserBind {
                        callee: h,
                        inst,
                        passed,
                        span,
                    });
            }
            return Some(h);
        }
        let key = ctor_key(name, tys, &values, &[]);
        if let Some(h) = self.ctor_parser_cache.get(&key) {
            return Some(*h);
        }
        let h = self.ctor_parser_body(&decl, tys, values);
        if let Some(h) = h {
            self.ctor_parser_cache.insert(key, h);
        }
        h
    }

    /// Checks parser `decl` with its type parameters bound to `tys` and
    /// its constructor parameters bound to `values`, in the top-level scope.
    fn ctor_parser_body(
        &mut self,
        decl: &ast::ParserDecl,
        tys: &[Ty],
        values: Vec<(ast::Ident, Sym)>,
    ) -> Option<Handle<ir::Parser>> {
        self.in_top_scope_with(&decl.signature.type_params, tys, values, |c| {
            c.parser_body(decl)
        })
    }

    /// Runs `check` in the top-level scope (a block's declaration does not
    /// see the scope it is instantiated from) with `type_params` bound to
    /// `tys` and constructor parameters bound to `values`, then restores
    /// the scope and block being checked.
    fn in_top_scope_with<T>(
        &mut self,
        type_params: &[ast::Ident],
        tys: &[Ty],
        values: Vec<(ast::Ident, Sym)>,
        check: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let top = self.scopes[0].clone();
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![top]);
        let saved_body = self.body.take();
        let saved_name = self.block_name.take();
        self.push_scope();
        for (t, ty) in type_params.iter().zip(tys) {
            self.declare(t, Sym::Type(ty.clone()));
        }
        for (n, v) in values {
            self.declare(&n, v);
        }
        let out = check(self);
        self.scopes = saved_scopes;
        self.body = saved_body;
        self.block_name = saved_name;
        out
    }

    /// Checks a parser's locals and states into a new IR parser.
    fn parser_body(&mut self, p: &ast::ParserDecl) -> Option<Handle<ir::Parser>> {
        self.push_scope();
        self.block_name = Some(p.signature.name.name.clone());
        // Extern parameters are extern instances of the parser bound to
        // its caller's (`check::extern_params`). The instances passed to
        // its constructor, and the bindings its states make, are kept
        // apart from those of a parser being checked around it.
        let (plain, externs) = self.split_extern_params(&p.signature.params);
        let ctor_args = std::mem::take(&mut self.extern_params.parser_ctor_args);
        let outer_pending = std::mem::take(&mut self.extern_params.parser_pending);
        let params = self.block_params(&plain, "packet_in");
        self.body = Some(Body {
            kind: BodyKind::Parser,
            vars: Vec::new(),
            ret: Ty::Void,
            control: None,
            loops: 0,
            externs: Vec::new(),
        });
        let mut extern_slots = self.declare_extern_params(None, &externs, false);
        extern_slots.extend(self.declare_parser_ctor_externs(p, ctor_args));
        let mut local_inits = Vec::new();
        for d in &p.locals {
            match d {
                ast::Decl::Const(c) => {
                    self.const_decl(c);
                }
                ast::Decl::Var(v) => {
                    let Some((ty, init)) = self.block_local(v) else {
                        continue;
                    };
                    let nominal = self.nominal_of_type(&v.ty);
                    if let Some(init) = &init {
                        self.check_declared_nominal(&v.ty, init, v.span);
                    }
                    let i = self.new_local(&v.name, ty, Some(nominal));
                    self.note_tuple_nominals(&v.name, &v.ty);
                    if let Some(i) = i
                        && let Some(init) = init
                    {
                        local_inits.push((i, init));
                    }
                }
                ast::Decl::ValueSet(vs) => {
                    let Some(ty) = self.ty(&vs.elem_type) else {
                        continue;
                    };
                    let parts = self.value_set_parts(&ty, "");
                    let widths: Option<Vec<u32>> = parts
                        .iter()
                        .map(|(_, t)| match t {
                            Ty::Bit(w) => Some(*w),
                            _ => None,
                        })
                        .collect();
                    // Members of 0 bits (`value_set<bit<0>>`, P4_16 §7.1.6.2) hold
                    // their only value, 0; an empty struct gives no parts at all.
                    let Some(w) = widths
                        .filter(|v| !v.is_empty())
                        .map(|v| v.iter().sum::<u32>())
                        .filter(|w| *w <= 128)
                    else {
                        self.unsupported(vs.elem_type.span, "value sets whose members are not bit strings (at most 128 bits in all)");
                        continue;
                    };
                    let Some(size) = self.const_u32(&vs.size, "value set size") else {
                        continue;
                    };
                    let spec = name_spec(&vs.annotations, &vs.name.name);
                    let full = if spec.absolute {
                        spec.name
                    } else {
                        format!("{}.{}", p.signature.name.name, spec.name)
                    };
                    let idx = self.facts.value_sets.len() as u32;
                    // A struct element is one P4Info match field per leaf
                    // (as p4c writes it); a bit<W> or tuple element (p4c
                    // rejects tuples) one field over the whole member.
                    let leaves = if !matches!(ty, Ty::Composite(_)) {
                        Vec::new()
                    } else {
                        parts
                            .iter()
                            .map(|(n, t)| {
                                (n.clone(), t.scalar_width(&self.prog).unwrap_or(0), false)
                            })
                            .collect()
                    };
                    self.facts.value_sets.push((full, w, size, leaves));
                    self.prog.value_set_index.push(idx);
                    self.declare(&vs.name, Sym::ValueSet(idx, ty));
                }
                ast::Decl::Instantiation(i) => {
                    let sym = match &i.ty.kind {
                        ast::TypeKind::Named { name, .. } => self.lookup(name).cloned(),
                        _ => None,
                    };
                    match sym {
                        Some(Sym::Parser(h)) if i.args.is_empty() => {
                            self.declare(&i.name, Sym::SubParser(h))
                        }
                        Some(Sym::Parser(_)) => self.error(
                            codes::ARG_COUNT,
                            i.span,
                            "this parser takes no constructor arguments",
                        ),
                        Some(Sym::CtorParser(n))
                            if self.apply_int_params.contains_key(n.as_str()) =>
                        {
                            self.unsupported(
                                i.span,
                                &format!(
                                    "instances of a parser with directionless `int` apply \
                                     parameters (`{n}`); apply it directly, `{n}.apply(..)`"
                                ),
                            );
                        }
                        Some(Sym::CtorParser(_)) => {
                            if let Some(h) = self.ctor_parser_instance(i) {
                                self.declare(&i.name, Sym::SubParser(h));
                            }
                        }
                        Some(Sym::Control(_) | Sym::CtorControl(_)) => self.error_label(
                            codes::NOT_ALLOWED_HERE,
                            i.span,
                            format!(
                                "`{}`: a control cannot be instantiated in a parser",
                                i.name.name
                            ),
                            "control instance",
                        ),
                        // An extern object (register, counter, meter, a
                        // user extern) of the parser's own.
                        _ => self.block_instantiation(i, None),
                    }
                }
                other => self.error(
                    codes::NOT_ALLOWED_HERE,
                    other.span(),
                    "this declaration is not allowed in a parser",
                ),
            }
        }
        // State names first: transitions may go forward.
        let mut order: Vec<&ast::ParserState> = Vec::new();
        match p.states.iter().find(|s| s.name.name == "start") {
            Some(s) => order.push(s),
            None => {
                self.error_label(
                    codes::BAD_STATE,
                    p.signature.name.span,
                    format!("parser `{}` has no `start` state", p.signature.name.name),
                    "declared here",
                );
            }
        }
        for (i, s) in p.states.iter().enumerate() {
            if p.states[..i].iter().any(|o| o.name.name == s.name.name) {
                self.error(
                    codes::DUPLICATE,
                    s.name.span,
                    format!("state `{}` declared twice", s.name.name),
                );
                continue;
            }
            if s.name.name != "start" {
                if s.name.name == "accept" || s.name.name == "reject" {
                    self.error(
                        codes::BAD_STATE,
                        s.name.span,
                        format!(
                            "`{}` is a built-in state and cannot be declared",
                            s.name.name
                        ),
                    );
                    continue;
                }
                if order.iter().any(|o| o.name.name == s.name.name) {
                    self.error(
                        codes::DUPLICATE,
                        s.name.span,
                        format!("state `{}` is declared twice", s.name.name),
                    );
                    continue;
                }
                order.push(s);
            }
        }
        let names: Vec<String> = order.iter().map(|s| s.name.name.clone()).collect();
        let target = |c: &mut Checker, id: &ast::Ident| -> Option<ir::Target> {
            match id.name.as_str() {
                "accept" => Some(ir::Target::Accept),
                "reject" => Some(ir::Target::Reject),
                n => match names.iter().position(|x| x == n) {
                    Some(i) => Some(ir::Target::State(i as u32)),
                    None => {
                        c.error_label(
                            codes::BAD_STATE,
                            id.span,
                            format!("unknown parser state `{n}`"),
                            "no such state",
                        );
                        None
                    }
                },
            }
        };
        let mut states = Vec::new();
        for s in &order {
            self.push_scope();
            let mut body = self.stmts(&s.stmts);
            let transition = match &s.transition {
                None => ir::Transition::Goto(ir::Target::Reject),
                Some(ast::Transition::Direct { target: t, .. }) => {
                    ir::Transition::Goto(target(self, t).unwrap_or(ir::Target::Reject))
                }
                Some(ast::Transition::Select { exprs, cases, .. }) => {
                    let mut keys = Vec::new();
                    let mut shapes = Vec::new();
                    for e in exprs {
                        let shape = self
                            .expr(e, None)
                            .and_then(|x| self.select_key(x, e.span, &mut keys));
                        shapes.push(shape);
                    }
                    // Keysets are checked against keys that checked (after
                    // an error in a key, a case keeps only its target).
                    let shapes: Option<Vec<_>> = shapes.into_iter().collect();
                    let mut ir_cases = Vec::new();
                    for c in cases {
                        let t = target(self, &c.next);
                        let ks = match &shapes {
                            Some(shapes) => self.select_keyset(&c.keyset, &keys, shapes),
                            None => Some(Vec::new()),
                        };
                        if let (Some(t), Some(ks)) = (t, ks) {
                            ir_cases.push(ir::SelectCase {
                                keys: ks,
                                target: t,
                            });
                        }
                    }
                    ir::Transition::Select(keys, ir_cases)
                }
            };
            // `_` arguments of calls in the select expression: their
            // hidden locals are declared at the end of the state's body.
            body.append(&mut self.pending_decls);
            self.pop_scope();
            states.push(ir::State {
                name: s.name.name.clone(),
                body,
                transition,
            });
        }
        // States nothing transitions to are dead code: say so.
        let mut reached = vec![false; states.len()];
        // Whether some state reached from `start` may end the parser: goes
        // to `accept` or `reject`, selects (a select that matches no case
        // rejects) or calls something (an extract or a verify may reject).
        let mut ends = false;
        let mut todo = vec![0usize];
        while let Some(i) = todo.pop() {
            if i >= states.len() || reached[i] {
                continue;
            }
            reached[i] = true;
            if order[i]
                .stmts
                .iter()
                .any(|st| matches!(st.kind, ast::StmtKind::Call(_)))
            {
                ends = true;
            }
            let targets: Vec<ir::Target> = match &states[i].transition {
                ir::Transition::Goto(t) => vec![*t],
                ir::Transition::Select(_, cases) => {
                    ends = true;
                    cases.iter().map(|c| c.target).collect()
                }
            };
            for t in targets {
                match t {
                    ir::Target::State(n) => todo.push(n as usize),
                    ir::Target::Accept | ir::Target::Reject => ends = true,
                }
            }
        }
        // p4c: "Parser never reaches accept or reject state" (issue2373);
        // such a parser loops forever on every packet.
        if !ends && names.first().is_some_and(|n| n == "start") {
            self.error_label(
                codes::BAD_STATE,
                p.signature.name.span,
                format!(
                    "parser `{}` never reaches `accept` or `reject`: its states from `start` only go round in a loop",
                    p.signature.name.name
                ),
                "declared here",
            );
        }
        for (i, st) in order.iter().enumerate() {
            if !reached.get(i).copied().unwrap_or(true) {
                self.warn(
                    codes::IGNORED,
                    st.name.span,
                    format!(
                        "parser state `{}` is unreachable from `start`",
                        st.name.name
                    ),
                );
            }
        }
        let pending = std::mem::replace(&mut self.extern_params.parser_pending, outer_pending);
        let Some(body) = self.body.take() else {
            self.bug(p.span, "parser body state lost");
            self.pop_scope();
            return None;
        };
        self.pop_scope();
        self.block_name = None;
        let (externs, names): (Vec<_>, Vec<_>) =
            body.externs.into_iter().map(|e| (e.inst, e.name)).unzip();
        let h = self.prog.parsers.append(
            ir::Parser {
                name: p.signature.name.name.clone(),
                params,
                locals: body.vars,
                local_inits,
                states,
                value_sets: Vec::new(),
                externs,
            },
            p.span,
        );
        for (i, n) in names.into_iter().enumerate() {
            self.facts
                .parser_extern_names
                .insert((h.index(), i as u32), n);
        }
        if !extern_slots.is_empty() {
            self.extern_params.parsers.insert(h.index(), extern_slots);
        }
        self.bind_parser_externs(h, pending);
        Some(h)
    }

    /// A sub-parser instantiation `P(args) name;` of a parser with
    /// constructor parameters; `None` (after a diagnostic) otherwise.
    fn ctor_parser_instance(&mut self, i: &ast::Instantiation) -> Option<Handle<ir::Parser>> {
        let (n, targs) = match &i.ty.kind {
            ast::TypeKind::Named { name, args } => match self.lookup(name).cloned() {
                Some(Sym::CtorParser(n)) => (n, args),
                _ => {
                    self.bug(i.span, "not a parser with constructor parameters");
                    return None;
                }
            },
            _ => {
                self.bug(i.span, "not a parser with constructor parameters");
                return None;
            }
        };
        let params = self
            .ctor_parsers
            .get(&n)
            .map(|d| super::ParamSpec::of(&d.ctor_params))
            .unwrap_or_default();
        let bound = self.bind_args(&format!("`{n}`"), &params, &i.args, i.span)?;
        let args: Vec<&ast::Expr> = bound.iter().collect();
        let tys: Option<Vec<Ty>> = targs.iter().map(|t| self.ty(t)).collect();
        self.instantiate_ctor_parser(&n, &tys?, &args, i.span)
    }

    fn keyset_value(&mut self, e: &ast::Expr, ty: &Ty) -> Option<u128> {
        let x = match ty {
            // A serializable enum key also takes values of its underlying
            // type (`(bit<16>)E.A &&& 0xff00`, p4c's
            // table-entries-ser-enum-bmv2 sample).
            Ty::SerEnum(en) => {
                let repr = self.prog.enums[*en].repr.clone()?;
                match self.expr_any(e)? {
                    super::expr::TE::Typed(x) if x.ty == *ty => x,
                    other => self.coerce(other, &repr, e.span)?,
                }
            }
            _ => self.expr(e, Some(ty))?,
        };
        match &x.kind {
            ir::ExprKind::EnumMember(_, i) => Some(*i as u128),
            _ => match fold::const_int(&x) {
                Some(v) => Some(v),
                None => {
                    self.error_label(
                        codes::NOT_CONSTANT,
                        e.span,
                        "keyset values must be constants",
                        "not constant",
                    );
                    None
                }
            },
        }
    }

    /// The keyset of one select case element `el` for a scalar key of type
    /// `ty`; `None` after a diagnostic.
    pub(super) fn scalar_keyset(&mut self, el: &ast::KeysetElem, ty: &Ty) -> Option<ir::KeySet> {
        Some(match el {
            ast::KeysetElem::Default(_) | ast::KeysetElem::DontCare(_) => ir::KeySet::Any,
            ast::KeysetElem::Expr(e) => {
                if let ast::ExprKind::Name(p) = &e.kind
                    && let Some(Sym::ValueSet(i, vty)) = self.lookup(p).cloned()
                {
                    if &vty != ty {
                        self.error(
                            codes::TYPE_MISMATCH,
                            e.span,
                            format!(
                                "value set of {} used for a key of {}",
                                self.ty_name(&vty),
                                self.ty_name(ty)
                            ),
                        );
                        return None;
                    }
                    return Some(ir::KeySet::ValueSet(i));
                }
                ir::KeySet::Value(self.keyset_value(e, ty)?)
            }
            ast::KeysetElem::Mask { value, mask, .. } => {
                let v = self.keyset_value(value, ty)?;
                let m = self.keyset_value(mask, ty)?;
                ir::KeySet::Mask(v, m)
            }
            ast::KeysetElem::Range { lo, hi, .. } => {
                let l = self.keyset_value(lo, ty)?;
                let h = self.keyset_value(hi, ty)?;
                // BMv2 turns a select range into masks and refuses one
                // whose end is below its start (p4c: "Range end is
                // less than start", issue-2123_e). On an int<W> key the
                // range holds the x with l <= x <= h as signed values
                // (P4_16 §8.15.3), so `-5 .. 5` is in order.
                let signed = ty
                    .is_signed(&self.prog)
                    .then(|| ty.scalar_width(&self.prog).unwrap_or(0));
                if !self.range_in_order(codes::BAD_SELECT, el_span(el), l, h, signed) {
                    return None;
                }
                ir::KeySet::Range(l, h)
            }
        })
    }

    /// Whether the range `l .. h` (values masked to the key's width) is in
    /// order; if not, reports it under `code` (a select case or a table
    /// entry) and says false. `signed` is the width of an int<W> key,
    /// whose bounds are compared (and reported) as signed values.
    fn range_in_order(
        &mut self,
        code: &'static str,
        span: Span,
        l: u128,
        h: u128,
        signed: Option<u32>,
    ) -> bool {
        let (in_order, shown) = match signed {
            Some(w) => {
                let (sl, sh) = (p4_target::bits::sext(l, w), p4_target::bits::sext(h, w));
                (sh >= sl, (sl.to_string(), sh.to_string()))
            }
            None => (h >= l, (l.to_string(), h.to_string())),
        };
        if in_order {
            return true;
        }
        self.error_label(
            code,
            span,
            format!("range end {} is less than its start {}", shown.1, shown.0),
            "empty range",
        );
        false
    }

    // -------------------------------------------------------------- control

    pub(crate) fn control_decl(&mut self, c: &ast::ControlDecl) {
        // Directionless `int` apply parameters take compile-time values at
        // each apply (P4_16 §6.8: directionless parameters of a control are
        // compile-time known; p4c's issue3394): the control is checked as
        // if they were constructor parameters, once per list of values,
        // and `C.apply(3, r)` applies the copy for 3 ([`Self::apply_int_args`]).
        if c.ctor_params.is_empty()
            && let Some((positions, ctor, params)) = split_int_params(&c.signature.params)
        {
            let mut moved = c.clone();
            moved.ctor_params = ctor;
            moved.signature.params = params;
            self.apply_int_params
                .insert(c.signature.name.name.clone(), positions);
            return self.control_decl(&moved);
        }
        if !c.signature.type_params.is_empty() || !c.ctor_params.is_empty() {
            // Checked once per distinct set of type and constructor
            // arguments, at each instantiation, and once here for a
            // control that is never instantiated.
            self.ctor_controls
                .insert(c.signature.name.name.clone(), c.clone());
            self.declare(
                &c.signature.name,
                Sym::CtorControl(c.signature.name.name.clone()),
            );
            self.trial_ctor(
                &c.signature.name.name,
                &c.signature.type_params,
                &c.ctor_params,
                |k, tys, values| {
                    k.ctor_control_body(c, tys, values);
                },
            );
            return;
        }
        if let Some(h) = self.control_body(c) {
            self.plain_controls
                .insert(c.signature.name.name.clone(), c.clone());
            self.declare(&c.signature.name, Sym::Control(h));
        }
    }

    /// Whether a control's instances need copies of their own: p4c names
    /// the actions of a control by its instance's path (`ingress.c1.a`),
    /// one P4Info action per instance, and our actions are one IR action
    /// per declaration, so each instance of a control that declares
    /// actions (or holds instances that may) is checked into an IR control
    /// of its own.
    fn needs_own_copy(&self, h: Handle<ir::Control>) -> bool {
        let c = &self.prog.controls[h];
        self.instantiated_controls.contains(&h.index())
            && (!c.actions.is_empty() || !c.instances.is_empty())
    }

    /// The control an instance of plain control `h` (declared as `name`)
    /// stands for: `h` itself for its first instance, a fresh check of its
    /// declaration for the later ones when they need copies of their own.
    pub(crate) fn instance_copy(&mut self, h: Handle<ir::Control>) -> Handle<ir::Control> {
        let name = self.prog.controls[h].name.clone();
        let copy = if self.needs_own_copy(h) {
            let before = self.diags.len();
            let copy = self.plain_controls.get(&name).cloned().and_then(|decl| {
                self.in_top_scope_with(&[], &[], Vec::new(), |c| c.control_body(&decl))
            });
            // The declaration's own check already reported these.
            let fresh: Vec<Diagnostic> = self
                .diags
                .split_off(before)
                .into_iter()
                .filter(|d| !self.diags.contains(d))
                .collect();
            self.diags.extend(fresh);
            copy
        } else {
            None
        };
        let h = copy.unwrap_or(h);
        self.instantiated_controls.insert(h.index());
        h
    }

    /// Instantiates a control with constructor parameters: the declaration
    /// is checked with the parameters bound to the (constant) arguments, in
    /// the top-level scope.
    pub(crate) fn instantiate_ctor_control(
        &mut self,
        name: &str,
        tys: &[Ty],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Handle<ir::Control>> {
        self.ctor_used.insert(name.to_string());
        let decl = self.ctor_controls.get(name)?.clone();
        self.type_arg_count("control", name, &decl.signature.type_params, tys, span)?;
        let generic = (decl.signature.type_params.as_slice(), tys);
        let (values, passed) =
            self.ctor_values("control", name, generic, &decl.ctor_params, args, span)?;
        let externs = std::mem::take(&mut self.extern_params.ctor_args);
        let globals = std::mem::take(&mut self.extern_params.ctor_global_args);
        let mut key = ctor_key(name, tys, &values, &passed);
        key.1
            .extend(globals.iter().map(|(_, g, _)| format!("top-level {g}")));
        let instance_args: Vec<u32> = passed.iter().map(|p| p.2).collect();
        if let Some(h) = self.ctor_cache.get(&key).copied()
            && !self.needs_own_copy(h)
        {
            self.pending_instance_args = instance_args;
            self.extern_params.pending_ctor = externs;
            self.instantiated_controls.insert(h.index());
            return Some(h);
        }
        self.pending_aliases = passed.into_iter().map(|(n, c, _)| (n, c)).collect();
        self.extern_params.pending_global_ctor = globals;
        let h = self.ctor_control_body(&decl, tys, values);
        self.pending_aliases.clear();
        self.extern_params.pending_global_ctor.clear();
        if let Some(h) = h {
            self.ctor_cache.entry(key).or_insert(h);
            self.pending_instance_args = instance_args;
            self.extern_params.pending_ctor = externs;
            self.instantiated_controls.insert(h.index());
        }
        h
    }

    /// Checks control `decl` with its type parameters bound to `tys` and
    /// its constructor parameters bound to `values`, in the top-level scope.
    fn ctor_control_body(
        &mut self,
        decl: &ast::ControlDecl,
        tys: &[Ty],
        values: Vec<(ast::Ident, Sym)>,
    ) -> Option<Handle<ir::Control>> {
        self.in_top_scope_with(&decl.signature.type_params, tys, values, |c| {
            c.control_body(decl)
        })
    }

    /// Type-checks control or parser `name` (which has type parameters
    /// `type_params` and constructor parameters `ctor_params`) with
    /// `check`, at its declaration, as p4c does, with each type parameter
    /// opaque ([`Checker::opaque_types`]) and each constructor parameter
    /// bound to a placeholder of its declared type (1, `false`, an enum's
    /// first member). The IR built is thrown away; the diagnostics wait in
    /// `ctor_trials` and are reported only if the block is never
    /// instantiated (an instance is checked with its real arguments, which
    /// a placeholder cannot stand for, e.g. in a bounds check).
    fn trial_ctor(
        &mut self,
        name: &str,
        type_params: &[ast::Ident],
        ctor_params: &[ast::Param],
        check: impl FnOnce(&mut Checker, &[Ty], Vec<(ast::Ident, Sym)>),
    ) {
        let before = self.diags.len();
        if type_params.is_empty() {
            // Default arguments are checked once, here, used or not.
            self.ctor_defaults(ctor_params);
            let before = self.diags.len();
            if let Some(values) = self.ctor_placeholders(ctor_params) {
                self.discarding_changes(|c| check(c, &[], values));
            }
            let diags = self.diags.split_off(before);
            self.ctor_trials.push((name.to_string(), diags));
            return;
        }
        // The signature's types name the type parameters: they are
        // resolved with the opaque types in scope, and so are the
        // defaults, which wait with the body's diagnostics.
        self.discarding_changes(|c| {
            c.push_scope();
            let tys = c.declare_opaque_types(type_params);
            c.ctor_defaults(ctor_params);
            let values = c.ctor_placeholders(ctor_params);
            c.pop_scope();
            if let Some(values) = values {
                check(c, &tys, values);
            }
        });
        self.keep_trial(name, before);
    }

    /// Checks the default arguments of constructor parameters `ctor_params`.
    pub(super) fn ctor_defaults(&mut self, ctor_params: &[ast::Param]) {
        for p in ctor_params {
            if let Some(d) = &p.default {
                if matches!(p.ty.kind, ast::TypeKind::Int) {
                    self.int_ctor_arg(p, d);
                } else if let Some(ty) = self.ty(&p.ty) {
                    self.default_value(d, &ty);
                }
            }
        }
    }

    /// A placeholder value for each of `ctor_params`, for a trial check
    /// ([`Self::trial_ctor`]); `None` if one has no value to stand for it
    /// (an instance, a struct: the block is left to its instantiations, no
    /// diagnostic) or its type does not resolve (reported).
    fn ctor_placeholders(&mut self, ctor_params: &[ast::Param]) -> Option<Vec<(ast::Ident, Sym)>> {
        let before = self.diags.len();
        let mut values = Vec::new();
        for p in ctor_params {
            if self.is_control_type(&p.ty) || self.names_extern_object(p) {
                return None;
            }
            if matches!(p.ty.kind, ast::TypeKind::Int) {
                values.push((p.name.clone(), Sym::IntConst(1)));
                continue;
            }
            let Some(ty) = self.ty(&p.ty) else { continue };
            let kind = match &ty {
                Ty::Bit(_) | Ty::Int(_) => ir::ExprKind::Int(1),
                Ty::Bool => ir::ExprKind::Bool(false),
                Ty::Enum(e) | Ty::SerEnum(e) if !self.prog.enums[*e].members.is_empty() => {
                    ir::ExprKind::EnumMember(*e, 0)
                }
                _ => {
                    self.diags.truncate(before);
                    return None;
                }
            };
            let x = ir::Expr {
                kind,
                ty,
                span: p.name.span,
            };
            values.push((p.name.clone(), Sym::Const(x, None)));
        }
        // A parameter whose type does not resolve is reported, and the
        // body is not checked.
        (self.diags.len() == before).then_some(values)
    }

    /// Checks that `tys` gives one type argument per type parameter.
    fn type_arg_count(
        &mut self,
        kind: &str,
        name: &str,
        type_params: &[ast::Ident],
        tys: &[Ty],
        span: Span,
    ) -> Option<()> {
        if tys.len() == type_params.len() {
            return Some(());
        }
        self.error_label(
            codes::ARG_COUNT,
            span,
            format!(
                "{kind} `{name}` takes {} type argument(s), {} given",
                type_params.len(),
                tys.len()
            ),
            "wrong number of type arguments",
        );
        None
    }

    /// The constant values of constructor arguments `args` for `params`
    /// of the `kind` (control or parser) `name`, whose type parameters
    /// `generic.0` are bound to `generic.1` (a parameter may be of type `T`).
    fn ctor_values(
        &mut self,
        kind: &str,
        name: &str,
        generic: (&[ast::Ident], &[Ty]),
        params: &[ast::Param],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<CtorArgs> {
        if args.len() != params.len() {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "{kind} `{name}` takes {} constructor argument(s), {} given",
                    params.len(),
                    args.len()
                ),
                "wrong number of arguments",
            );
            return None;
        }
        let mut values = Vec::new();
        let mut passed = Vec::new();
        let mut externs = Vec::new();
        let mut parser_externs = Vec::new();
        let mut globals = Vec::new();
        for (p, a) in params.iter().zip(args) {
            if self.is_control_type(&p.ty) {
                passed.push(self.passed_instance(p, a)?);
                continue;
            }
            if self.names_extern_object(p) {
                // Bound to the instance passed where the block is
                // instantiated (`check::extern_params`); its type may name
                // the block's type parameters (`widget<T> w`). A control in
                // `V1Switch(..)` (outside any block) takes a top-level one.
                if kind == "control"
                    && self.body.is_none()
                    && let ast::ExprKind::Name(n) = &a.kind
                    && matches!(self.lookup(n), Some(Sym::GlobalExtern))
                {
                    globals.push((p.clone(), n.ident.name.clone(), a.span));
                } else if kind == "control" {
                    let e = self.with_type_args(generic, |c| c.extern_ctor_arg(name, p, a));
                    externs.push(e?);
                } else {
                    let e = self.with_type_args(generic, |c| c.parser_ctor_arg(name, p, a));
                    parser_externs.push(e?);
                }
                continue;
            }
            if matches!(p.ty.kind, ast::TypeKind::Int) {
                // An infinite-precision parameter (P4_16 §7.1.6.5, §14.1):
                // the block sees it as an `int` constant.
                values.push((p.name.clone(), Sym::IntConst(self.int_ctor_arg(p, a)?)));
                continue;
            }
            let ty = self.with_type_args(generic, |c| c.ty(&p.ty));
            let x = self.expr(a, Some(&ty?))?;
            if fold::const_int(&x).is_none() && !matches!(x.kind, ir::ExprKind::EnumMember(..)) {
                self.error(
                    codes::NOT_CONSTANT,
                    a.span,
                    "constructor arguments must be constants",
                );
                return None;
            }
            values.push((p.name.clone(), Sym::Const(x, None)));
        }
        // Set last: an instantiation among the arguments checks its own.
        self.extern_params.ctor_args = externs;
        self.extern_params.parser_ctor_args = parser_externs;
        self.extern_params.ctor_global_args = globals;
        Some((values, passed))
    }

    /// Runs `check` in a scope of its own where each of the type
    /// parameters `generic.0` names its type argument in `generic.1`.
    fn with_type_args<T>(
        &mut self,
        generic: (&[ast::Ident], &[Ty]),
        check: impl FnOnce(&mut Self) -> T,
    ) -> T {
        self.push_scope();
        for (t, ty) in generic.0.iter().zip(generic.1) {
            self.declare(t, Sym::Type(ty.clone()));
        }
        let out = check(self);
        self.pop_scope();
        out
    }

    /// The value of argument `a` for the `int` constructor parameter `p`: a
    /// compile-time integer without a width (a typed value would need a
    /// cast to `int`, which P4_16 does not have).
    fn int_ctor_arg(&mut self, p: &ast::Param, a: &ast::Expr) -> Option<i128> {
        let before = self.diags.len();
        match self.expr_any(a)? {
            super::expr::TE::Inf(v) => Some(v),
            super::expr::TE::Typed(x) => {
                if self.diags.len() == before {
                    self.error_label(
                        codes::TYPE_MISMATCH,
                        a.span,
                        format!(
                            "constructor parameter `{}` is an `int`: its argument must be an \
                             integer without a width, not {}",
                            p.name.name,
                            self.ty_name(&x.ty)
                        ),
                        "not an `int`",
                    );
                }
                None
            }
        }
    }

    /// Whether `t` names a control type (a control type declaration or a
    /// control): such a constructor parameter takes an instance.
    fn is_control_type(&self, t: &ast::Type) -> bool {
        match &t.kind {
            ast::TypeKind::Named { name, .. } => matches!(
                self.lookup(name),
                Some(Sym::BlockType | Sym::Control(_) | Sym::CtorControl(_))
            ),
            _ => false,
        }
    }

    /// The instance `a` passed to control-typed constructor parameter `p`:
    /// a sub-control instance of the control being checked.
    fn passed_instance(
        &mut self,
        p: &ast::Param,
        a: &ast::Expr,
    ) -> Option<(ast::Ident, Handle<ir::Control>, u32)> {
        let here = self.body.as_ref().and_then(|b| b.control);
        // An instantiation (`C(Inc()) c;`): as in p4c, which specializes `C`
        // with a local instance named after the parameter, the instance is
        // `c.s` (its tables are `c.s.t` in P4Info). It is declared in the
        // control being checked, under that dotted name no source name
        // can take.
        if let (
            ast::ExprKind::Call {
                callee,
                type_args,
                args,
            },
            Some(ctl),
        ) = (&a.kind, here)
            && let ast::ExprKind::Name(n) = &callee.kind
            && matches!(self.lookup(n), Some(Sym::Control(_) | Sym::CtorControl(_)))
        {
            let owner = self.instantiating.clone().unwrap_or_default();
            let inst = ast::Instantiation {
                annotations: Vec::new(),
                ty: ast::Type {
                    kind: ast::TypeKind::Named {
                        name: n.clone(),
                        args: type_args.clone(),
                    },
                    span: callee.span,
                },
                args: args.clone(),
                name: ast::Ident {
                    name: format!("{owner}.{}", p.name.name),
                    span: a.span,
                },
                initializer: None,
                span: a.span,
            };
            let before = self.prog.controls[ctl].instances.len();
            self.control_instantiation(&inst, ctl);
            let sub = self.prog.controls[ctl].instances.get(before)?.1;
            return Some((p.name.clone(), sub, before as u32));
        }
        if let (ast::ExprKind::Name(n), Some(ctl)) = (&a.kind, here)
            && let Some(Sym::SubControl(i)) = self.lookup(n).cloned()
        {
            let sub = self.prog.controls[ctl].instances.get(i as usize)?.1;
            return Some((p.name.clone(), sub, i));
        }
        if here.is_none() {
            // `V1Switch(.., C(Inc()), ..)`: the top-level instance tree has
            // no control for the instance passed to live in.
            self.unsupported(
                a.span,
                "passing control instances to controls instantiated in V1Switch",
            );
            return None;
        }
        if let ast::ExprKind::Name(n) = &a.kind {
            self.error_label(
                codes::TYPE_MISMATCH,
                a.span,
                format!(
                    "`{}` is not a control instance; `{}` takes one",
                    n.ident.name, p.name.name
                ),
                "expected an instance declared before",
            );
            return None;
        }
        self.unsupported(
            a.span,
            "control-typed constructor arguments other than an instance declared before or an instantiation",
        );
        None
    }

    /// Checks a control's locals and apply block into a new IR control.
    fn control_body(&mut self, c: &ast::ControlDecl) -> Option<Handle<ir::Control>> {
        let aliases = std::mem::take(&mut self.pending_aliases);
        let global_ctor = std::mem::take(&mut self.extern_params.pending_global_ctor);
        let h = self.prog.controls.append(
            ir::Control {
                name: c.signature.name.name.clone(),
                params: Vec::new(),
                locals: Vec::new(),
                local_inits: Vec::new(),
                externs: Vec::new(),
                instances: Vec::new(),
                tables: Vec::new(),
                actions: Vec::new(),
                apply: Vec::new(),
                apply_vars: Vec::new(),
            },
            c.span,
        );
        self.push_scope();
        self.block_name = Some(c.signature.name.name.clone());
        // Extern instances passed as directionless apply parameters are
        // instances of this control bound at each apply (`check::extern_params`).
        let (plain, externs) = self.split_extern_params(&c.signature.params);
        let params = self.block_params(&plain, "packet_out");
        self.prog.controls[h].params = params;
        self.declare_control_extern_params(h, &externs, false);
        // Extern constructor parameters: bound where the control is
        // instantiated (`ExternParamState::ctor_bindings`).
        let mut ctor_externs = self.extern_ctor_params(&c.ctor_params);
        ctor_externs.retain(|(_, p)| !global_ctor.iter().any(|(g, ..)| g.name == p.name));
        self.declare_control_extern_params(h, &ctor_externs, true);
        // Control-typed constructor parameters: instances of this control
        // that the instance tree points at the instances passed.
        for (k, (n, sub)) in aliases.into_iter().enumerate() {
            let instances = &mut self.prog.controls[h].instances;
            let idx = instances.len() as u32;
            instances.push((n.name.clone(), sub));
            self.instance_aliases.insert((h.index(), idx), k);
            self.declare(&n, Sym::SubControl(idx));
        }
        self.body = Some(Body {
            kind: BodyKind::Apply,
            vars: Vec::new(),
            ret: Ty::Void,
            control: Some(h),
            loops: 0,
            externs: Vec::new(),
        });
        for g in self.global_externs.clone() {
            self.global_extern(&g, h);
        }
        for (p, g, arg) in global_ctor {
            self.global_ctor_param(h, &p, &g, arg);
        }
        for d in &c.locals {
            match d {
                ast::Decl::Const(k) => {
                    self.const_decl(k);
                }
                ast::Decl::Var(v) => {
                    let Some((ty, init)) = self.block_local(v) else {
                        continue;
                    };
                    let nominal = self.nominal_of_type(&v.ty);
                    if let Some(init) = &init {
                        self.check_declared_nominal(&v.ty, init, v.span);
                    }
                    let ctl = &mut self.prog.controls[h];
                    let i = ctl.locals.len() as u32;
                    ctl.locals.push(ir::Var {
                        name: v.name.name.clone(),
                        ty: ty.clone(),
                        param: None,
                    });
                    if let Some(init) = init {
                        ctl.local_inits.push((i, init));
                    }
                    self.declare(
                        &v.name,
                        Sym::Var(
                            ir::VarRef::BlockLocal(i),
                            ty,
                            true,
                            Some(nominal),
                            self.tuple_nominals(&v.ty),
                        ),
                    );
                }
                ast::Decl::Action(a) => {
                    if let Some(ah) = self.action_decl(a, Some(h)) {
                        self.prog.controls[h].actions.push(ah);
                        self.declare(&a.name, Sym::Action(ah));
                    }
                }
                ast::Decl::Table(t) => self.table_decl(t, h),
                ast::Decl::Instantiation(i) => self.control_instantiation(i, h),
                ast::Decl::Function(f) => {
                    let saved = self.body.take();
                    self.function_decl(f);
                    self.body = saved;
                }
                other => self.error(
                    codes::NOT_ALLOWED_HERE,
                    other.span(),
                    "this declaration is not allowed in a control",
                ),
            }
        }
        self.check_meter_reads_owned(h);
        self.check_direct_uses_owned(h);
        // The apply block gets fresh locals.
        if let Some(b) = self.body.as_mut() {
            b.vars.clear();
        }
        let apply = self.block(&c.apply);
        let Some(body) = self.body.take() else {
            self.bug(c.span, "control body state lost");
            self.pop_scope();
            return None;
        };
        self.prog.controls[h].apply = apply;
        self.prog.controls[h].apply_vars = body.vars;
        self.check_extern_params_bound(h);
        self.pop_scope();
        self.block_name = None;
        Some(h)
    }

    /// Declares top-level extern instance `g` in control `h`, named as p4c
    /// names it: its `@name`, or its own name, never prefixed by the control.
    fn global_extern(&mut self, g: &ast::Instantiation, h: Handle<ir::Control>) {
        let local = global_copy(g);
        let before = self.diags.len();
        self.control_instantiation(&local, h);
        // Report a bad global instance once, not once per control.
        if self.diags.len() > before && self.prog.controls.len() > 1 {
            self.diags.truncate(before);
        }
    }

    /// Extern constructor parameter `p` of control `h` in `V1Switch(..)`,
    /// given top-level instance `global` (the argument at `arg`): declared
    /// as another copy of it in `h` (named `.global` for the control plane,
    /// so one object), and checked against the parameter's type.
    fn global_ctor_param(
        &mut self,
        h: Handle<ir::Control>,
        p: &ast::Param,
        global: &str,
        arg: Span,
    ) {
        let Some(g) = self.global_externs.iter().find(|g| g.name.name == global) else {
            self.bug(p.span, "top-level extern instance not found");
            return;
        };
        let mut local = global_copy(g);
        local.name = p.name.clone();
        let before = self.prog.controls[h].externs.len();
        self.control_instantiation(&local, h);
        let (Some(got), Some(want)) = (
            self.prog.controls[h].externs.get(before).cloned(),
            self.extern_param_kind(p),
        ) else {
            return;
        };
        let role = ("constructor parameter", p.name.name.as_str());
        let callee = self.prog.controls[h].name.clone();
        self.extern_arg_fits(&got, (&want, p.span), arg, role, &callee);
    }

    /// Top-level extern instance `name` used in the parser, function or
    /// top-level action being checked: its index in the body's instances,
    /// where it is declared at its first use (as each control declares all
    /// of them).
    pub(crate) fn global_in_body(&mut self, name: &str, span: Span) -> GlobalUse {
        let Some(body) = self.body.as_ref() else {
            return GlobalUse::NotHere;
        };
        if !matches!(
            (body.kind, body.control),
            (BodyKind::Parser | BodyKind::Function, _) | (BodyKind::Action, None)
        ) {
            return GlobalUse::NotHere;
        }
        if let Some(i) = body
            .externs
            .iter()
            .position(|e| e.global.as_deref() == Some(name))
        {
            return GlobalUse::Index(i as u32);
        }
        let Some(g) = self.global_externs.iter().find(|g| g.name.name == name) else {
            return GlobalUse::NotHere;
        };
        let g = g.clone();
        if let ast::TypeKind::Named { name: ty, .. } = &g.ty.kind
            && let Some(
                kind @ ("direct_counter" | "direct_meter" | "action_profile" | "action_selector"),
            ) = crate::v1model::object(&ty.ident.name).map(|o| o.name)
        {
            self.error_label(
                codes::NOT_ALLOWED_HERE,
                span,
                format!(
                    "`{name}` is {} {kind}: it belongs to a table, and its methods run only \
                     in that table's control",
                    article(kind)
                ),
                "used outside a control",
            );
            return GlobalUse::Reported;
        }
        let local = global_copy(&g);
        let before = self.diags.len();
        self.push_scope();
        self.block_instantiation(&local, None);
        self.pop_scope();
        if self.diags.len() > before {
            // The controls, which declare every top-level instance,
            // report what is wrong with it.
            self.diags.truncate(before);
            return GlobalUse::Reported;
        }
        let Some(last) = self.body.as_mut().and_then(|b| b.externs.last_mut()) else {
            self.bug(span, "top-level extern instance not declared");
            return GlobalUse::Reported;
        };
        last.global = Some(name.to_string());
        GlobalUse::Index(self.body.as_ref().map_or(0, |b| b.externs.len() as u32 - 1))
    }
}

/// "a" or "an" before `word`.
pub(super) fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// What [`Checker::global_in_body`] found.
pub(crate) enum GlobalUse {
    /// The instance's index in the body's extern instances.
    Index(u32),
    /// An error is reported (here, or by the controls).
    Reported,
    /// Not in a parser, function or top-level action body (a control's
    /// declares every top-level instance as its own): a constant's
    /// initialiser or a declaration's argument.
    NotHere,
}

/// A top-level extern instance as a block declares it: named as p4c names
/// it, its `@name` or its own name, never prefixed by the block.
fn global_copy(g: &ast::Instantiation) -> ast::Instantiation {
    let spec = name_spec(&g.annotations, &g.name.name);
    let absolute = format!(".{}", spec.name);
    let name_annotation = ast::Annotation {
        name: ast::Ident {
            name: "name".into(),
            span: g.span,
        },
        body: ast::AnnotationBody::Unstructured {
            raw: format!("{absolute:?}"),
            exprs: Some(vec![ast::Expr {
                kind: ast::ExprKind::Str(absolute),
                span: g.span,
            }]),
        },
        span: g.span,
    };
    let mut local = g.clone();
    local.annotations.retain(|a| a.name.name != "name");
    local.annotations.push(name_annotation);
    local
}

impl Checker {
    /// An initializer block (`= { ... }`) implements the abstract methods of
    /// an extern (P4_16 §11.3.1); p4c refuses one on an instance of a
    /// control, parser or package (its decl-instantiation-init-non-extern).
    pub(crate) fn initializer_not_extern(&mut self, i: &ast::Instantiation) {
        let Some(init) = &i.initializer else { return };
        let span = init.first().map(|d| d.span()).unwrap_or(i.span);
        self.error_label(
            codes::NOT_ALLOWED_HERE,
            span,
            format!(
                "`{}` is not an extern instance: only an extern's instance takes an initializer \
                 block implementing its abstract methods",
                i.name.name
            ),
            "initializer block",
        );
    }

    /// An extern instance's initializer block may only implement the
    /// extern's abstract methods (P4_16 §11.3.1): p4c refuses a block on an
    /// extern that has none ("instance initializers for extern without
    /// abstract methods", issue3307's error cuts) and a function naming no
    /// abstract method of it.
    pub(crate) fn initializer_of_extern(&mut self, i: &ast::Instantiation, ext: &str) {
        let Some(init) = &i.initializer else { return };
        let abstracts: Vec<String> = self
            .user_extern_asts
            .get(ext)
            .map(|(e, _)| {
                e.members
                    .iter()
                    .filter_map(|m| match m {
                        ast::ExternMember::Method(f) if f.is_abstract => Some(f.name.name.clone()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        if abstracts.is_empty() {
            let span = init.first().map(|d| d.span()).unwrap_or(i.span);
            self.error_label(
                codes::NOT_ALLOWED_HERE,
                span,
                format!(
                    "extern `{ext}` has no abstract methods, so its instance `{}` takes no \
                     initializer block",
                    i.name.name
                ),
                "initializer block",
            );
            return;
        }
        for d in init {
            let Some(n) = d.name() else { continue };
            if !abstracts.contains(&n.name) {
                self.error_label(
                    codes::NOT_ALLOWED_HERE,
                    n.span,
                    format!("`{}` is not an abstract method of extern `{ext}`", n.name),
                    "not abstract in the extern",
                );
            }
        }
    }

    /// An instantiation that declares no name in scope.
    fn control_instantiation_anon(&mut self, i: &ast::Instantiation, h: Handle<ir::Control>) {
        self.push_scope();
        self.control_instantiation(i, h);
        self.pop_scope();
    }

    pub(crate) fn control_instantiation(&mut self, i: &ast::Instantiation, h: Handle<ir::Control>) {
        self.block_instantiation(i, Some(h));
    }

    /// An instantiation in control `owner`, or (`None`) an extern instance
    /// of the parser or function body being checked.
    fn block_instantiation(&mut self, i: &ast::Instantiation, owner: Option<Handle<ir::Control>>) {
        // Instantiations in its constructor arguments are named after it.
        let outer = self.instantiating.replace(i.name.name.clone());
        self.control_instantiation_named(i, owner);
        self.instantiating = outer;
    }

    fn control_instantiation_named(
        &mut self,
        i: &ast::Instantiation,
        owner: Option<Handle<ir::Control>>,
    ) {
        let ast::TypeKind::Named { name, args: targs } = &i.ty.kind else {
            self.unsupported(i.span, "this instantiation");
            return;
        };
        let sym = self.lookup(name).cloned();
        match &sym {
            Some(Sym::ExternDecl(ext)) => self.initializer_of_extern(i, ext),
            _ => self.initializer_not_extern(i),
        }
        if let Some(Sym::ExternDecl(ext)) = &sym
            && self.ctorless_externs.contains(ext)
        {
            self.error_label(
                codes::WRONG_KIND,
                i.ty.span,
                format!("extern `{ext}` declares no constructor, so it cannot be instantiated"),
                "no constructor",
            );
            return;
        }
        // Constructor arguments in parameter order, defaults filled in.
        let params = match &sym {
            Some(Sym::CtorControl(n)) => self
                .ctor_controls
                .get(n)
                .map(|d| super::ParamSpec::of(&d.ctor_params)),
            _ => crate::v1model::object(&name.ident.name)
                .map(|o| super::ParamSpec::named(o.ctor.iter().map(|p| p.name.to_string())))
                .or_else(|| self.user_ctor_params(&name.ident.name, i.args.len())),
        };
        let bound: Vec<ast::Expr> = match params {
            Some(params) => {
                let what = format!("`{}`", name.ident.name);
                match self.bind_args(&what, &params, &i.args, i.span) {
                    Some(b) => b,
                    None => return,
                }
            }
            None => i.args.iter().map(|a| a.value.clone()).collect(),
        };
        let args: Vec<&ast::Expr> = bound.iter().collect();
        let sub = match &sym {
            Some(Sym::Control(sub)) => {
                if !args.is_empty() {
                    self.error(
                        codes::ARG_COUNT,
                        i.span,
                        format!(
                            "control `{}` takes no constructor arguments",
                            name.ident.name
                        ),
                    );
                    return;
                }
                Some(self.instance_copy(*sub))
            }
            Some(Sym::CtorControl(n)) if self.apply_int_params.contains_key(n.as_str()) => {
                self.unsupported(
                    i.span,
                    &format!(
                        "instances of a control with directionless `int` apply parameters \
                         (`{n}`); apply it directly, `{n}.apply(..)`"
                    ),
                );
                return;
            }
            Some(Sym::CtorControl(n)) => {
                let tys: Option<Vec<Ty>> = targs.iter().map(|t| self.ty(t)).collect();
                let Some(tys) = tys else { return };
                match self.instantiate_ctor_control(&n.clone(), &tys, &args, i.span) {
                    Some(s) => Some(s),
                    None => return,
                }
            }
            _ => None,
        };
        if let Some(sub) = sub {
            let Some(h) = owner else {
                self.bug(i.span, "a control instance outside a control");
                return;
            };
            let ctl = &mut self.prog.controls[h];
            let idx = ctl.instances.len() as u32;
            ctl.instances.push((i.name.name.clone(), sub));
            self.extern_params
                .instance_spans
                .insert((h.index(), idx), i.span);
            let externs = std::mem::take(&mut self.extern_params.pending_ctor);
            if !externs.is_empty() {
                self.extern_params
                    .ctor_bindings
                    .insert((h.index(), idx), externs);
            }
            let passed = std::mem::take(&mut self.pending_instance_args);
            if !passed.is_empty() {
                self.instance_args.insert((h.index(), idx), passed);
            }
            self.declare(&i.name, Sym::SubControl(idx));
            return;
        }
        let kind_name = name.ident.name.as_str();
        let unit = |c: &mut Checker, e: &ast::Expr| -> Option<CounterUnit> {
            let x = c.expr(e, None)?;
            let ir::ExprKind::EnumMember(eh, m) = x.kind else {
                c.error(
                    codes::TYPE_MISMATCH,
                    e.span,
                    "expected a CounterType or MeterType member",
                );
                return None;
            };
            Some(match c.prog.enums[eh].members[m as usize].0.as_str() {
                "packets" => CounterUnit::Packets,
                "bytes" => CounterUnit::Bytes,
                _ => CounterUnit::Both,
            })
        };
        let want = |c: &mut Checker, n: usize| -> bool {
            if args.len() != n {
                c.error_label(
                    codes::ARG_COUNT,
                    i.span,
                    format!(
                        "`{kind_name}` takes {n} constructor argument{}, {} given",
                        if n == 1 { "" } else { "s" },
                        args.len()
                    ),
                    "wrong number of arguments",
                );
                return false;
            }
            true
        };
        if let Some(Sym::ExternDecl(_)) = &sym
            && crate::v1model::object(kind_name).is_none()
        {
            use super::user_externs::UserType;
            match self.user_extern_type(kind_name, targs, &args, i.span) {
                UserType::Found(u) => {
                    if let Some(kind) = self.user_instance(u, &args, i.span) {
                        self.add_extern(owner, i, kind);
                    }
                    return;
                }
                UserType::Reported => return,
                UserType::NotUser => {}
            }
        }
        if !self.v1model_type_args(kind_name, targs, i.span) {
            return;
        }
        let kind = match kind_name {
            "register" => {
                if !want(self, 1) {
                    return;
                }
                let Some(t) = targs.first() else {
                    self.error(
                        codes::ARG_COUNT,
                        i.ty.span,
                        "register needs a cell type: `register<bit<32>>`",
                    );
                    return;
                };
                let Some(ty) = self.ty(t) else { return };
                // Cells are stored as bit strings: any scalar whose value
                // is its bits (bmv2 registers hold bit strings too).
                // A struct of such scalars (nested structs too) is held as
                // its fields concatenated, the first in the high bits.
                // A lone bit<W>/int<W> may be wider than 128 bits (cells of
                // u64 limbs).
                let lone_wide = matches!(ty, Ty::Bit(w) | Ty::Int(w) if w > 128);
                // A lone bit<0>/int<0> cell holds its only value, 0 (P4_16
                // §7.1.6.2); a struct of no bits stays refused.
                let lone_zero = matches!(ty, Ty::Bit(0) | Ty::Int(0));
                let width = register_cell_width(&ty, &self.prog)
                    .filter(|w| (1..=128).contains(w) || lone_wide || lone_zero);
                let Some(width) = width else {
                    self.unsupported(
                        t.span,
                        "registers whose cells are not bit<W>, int<W>, bool, a serializable enum or a struct of these (at most 128 bits in all, or a single bit<W>/int<W> of any width)",
                    );
                    return;
                };
                let Some(size) = self.const_u32(args[0], "register size") else {
                    return;
                };
                ir::ExternKind::Register {
                    cell: ty,
                    width,
                    size,
                }
            }
            "counter" => {
                if !want(self, 2) {
                    return;
                }
                let Some(size) = self.const_u32(args[0], "counter size") else {
                    return;
                };
                let Some(u) = unit(self, args[1]) else { return };
                ir::ExternKind::Counter { size, unit: u }
            }
            "direct_counter" => {
                if !want(self, 1) {
                    return;
                }
                let Some(u) = unit(self, args[0]) else { return };
                ir::ExternKind::DirectCounter(u)
            }
            "meter" => {
                if !want(self, 2) {
                    return;
                }
                let Some(size) = self.const_u32(args[0], "meter size") else {
                    return;
                };
                let Some(u) = unit(self, args[1]) else { return };
                ir::ExternKind::Meter { size, unit: u }
            }
            "direct_meter" => {
                if !want(self, 1) {
                    return;
                }
                let Some(u) = unit(self, args[0]) else { return };
                ir::ExternKind::DirectMeter(u)
            }
            "action_profile" => {
                if !want(self, 1) {
                    return;
                }
                let Some(size) = self.const_u32(args[0], "action profile size") else {
                    return;
                };
                ir::ExternKind::ActionProfile(size)
            }
            "action_selector" => {
                if !want(self, 3) {
                    return;
                }
                let Some(algo) = self.hash_algo(args[0]) else {
                    return;
                };
                let Some(size) = self.const_u32(args[1], "selector size") else {
                    return;
                };
                let Some(w) = self.const_u32(args[2], "selector output width") else {
                    return;
                };
                ir::ExternKind::ActionSelector(algo, size, w)
            }
            _ => {
                match sym {
                    Some(Sym::ExternDecl(_)) => {
                        let what = format!("the extern `{kind_name}`");
                        self.refused_user_extern(kind_name, &what, i.span)
                    }
                    Some(_) => self.error(
                        codes::WRONG_KIND,
                        name.span,
                        format!("`{kind_name}` cannot be instantiated"),
                    ),
                    None => self.error_label(
                        codes::UNKNOWN_NAME,
                        name.span,
                        format!("cannot find `{kind_name}` in this scope"),
                        "not declared",
                    ),
                }
                return;
            }
        };
        self.add_extern(owner, i, kind);
    }

    /// Checks the type arguments of an instance of v1model's `counter`,
    /// `meter` or `register` against the declaration of the version the
    /// program picked (`crate::v1model::Object::type_params`), and records
    /// the index type `I` of the versions that have one. False when refused.
    pub(super) fn v1model_type_args(
        &mut self,
        kind_name: &str,
        targs: &[ast::Type],
        span: Span,
    ) -> bool {
        if !matches!(kind_name, "counter" | "meter" | "register") {
            return true;
        }
        let Some(obj) = crate::v1model::object(kind_name) else {
            return true;
        };
        // `register` without any is reported where its cell type is read.
        if kind_name == "register" {
            let Some(cell) = targs.first() else {
                return true;
            };
            let nominal = self.nominal_of_type(cell);
            self.register_cell_nominal.insert(span, nominal);
        }
        let version = self.v1model_version;
        let params = obj.type_params(version);
        if targs.len() != params.len() {
            let declared = if params.is_empty() {
                kind_name.to_string()
            } else {
                format!("{kind_name}<{}>", params.join(", "))
            };
            let since = crate::v1model::INDEX_TYPE_PARAM_SINCE;
            let why = if params.len() > targs.len() {
                format!(
                    "the index type `I` came with v1model {since}, and a generic extern needs all its type arguments (p4c: \"Type parameters must be supplied for constructor\")"
                )
            } else {
                format!(
                    "the index type argument `I` came with v1model {since}: `#define V1MODEL_VERSION {since}` before `#include <v1model.p4>` picks it"
                )
            };
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "`{kind_name}` takes {} type argument{} in v1model {version}, {} given; {why}",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    targs.len()
                ),
                format!("declared `{declared}`"),
            );
            return false;
        }
        if let Some(crate::v1model::IndexTy::TypeArg(k)) = obj.index_ty(version) {
            let Some(ty) = self.ty(&targs[k]) else {
                return false;
            };
            // The runtime indexes its arrays with the index's value: a
            // bit string (p4c's BMv2 back end takes only those too).
            if !matches!(ty, Ty::Bit(_)) {
                let msg = format!("`{kind_name}` index types other than bit<W>");
                self.unsupported(targs[k].span, &msg);
                return false;
            }
            self.extern_index_ty.insert(span, ty);
        }
        true
    }

    /// Adds extern instance `i` of `kind` to control `owner`, or (`None`)
    /// to the parser or function body being checked, and declares it.
    fn add_extern(
        &mut self,
        owner: Option<Handle<ir::Control>>,
        i: &ast::Instantiation,
        kind: ir::ExternKind,
    ) {
        if owner.is_none()
            && matches!(
                kind,
                ir::ExternKind::DirectCounter(_)
                    | ir::ExternKind::DirectMeter(_)
                    | ir::ExternKind::ActionProfile(_)
                    | ir::ExternKind::ActionSelector(..)
            )
        {
            self.error_label(
                codes::NOT_ALLOWED_HERE,
                i.span,
                format!(
                    "`{}`: {} {} belongs to a table, and tables are only in controls",
                    i.name.name,
                    article(kind.type_name()),
                    kind.type_name()
                ),
                "not in a control",
            );
            return;
        }
        let inst = ir::ExternInst {
            name: i.name.name.clone(),
            kind,
            span: i.span,
        };
        let name = name_spec(&i.annotations, &i.name.name);
        self.push_extern(owner, &i.name, inst, name);
    }

    /// Adds `inst` to the extern instances of control `owner`, or (`None`)
    /// of the parser or function body being checked, with its P4Info name
    /// `name`, and declares it as `id`: an instance declared there or an
    /// extern parameter (`check::extern_params`). Its index there.
    pub(crate) fn push_extern(
        &mut self,
        owner: Option<Handle<ir::Control>>,
        id: &ast::Ident,
        inst: ir::ExternInst,
        name: NameSpec,
    ) -> Option<u32> {
        let idx = match owner {
            Some(h) => {
                let ctl = &mut self.prog.controls[h];
                let idx = ctl.externs.len() as u32;
                ctl.externs.push(inst);
                self.facts.extern_names.insert((h.index(), idx), name);
                idx
            }
            None => {
                let Some(body) = self.body.as_mut() else {
                    self.bug(id.span, "an extern instance outside a block");
                    return None;
                };
                let idx = body.externs.len() as u32;
                body.externs.push(super::BodyExtern {
                    inst,
                    name,
                    global: None,
                });
                idx
            }
        };
        self.declare(id, Sym::Extern(idx));
        Some(idx)
    }

    // --------------------------------------------------------------- action

    /// Checks an action; `control` is the enclosing control.
    pub(crate) fn action_decl(
        &mut self,
        a: &ast::ActionDecl,
        control: Option<Handle<ir::Control>>,
    ) -> Option<Handle<ir::Action>> {
        self.check_param_defaults(&a.params);
        self.push_scope();
        let mut vars = Vec::new();
        let mut n_directional = 0;
        let mut seen_data = false;
        for (i, p) in a.params.iter().enumerate() {
            if self.names_extern_object(p) {
                // p4c: "Action parameters cannot have extern types".
                self.error_label(
                    codes::TYPE_MISMATCH,
                    p.ty.span,
                    format!(
                        "action parameter `{}` cannot have an extern type: a control's or \
                         parser's directionless parameter takes an instance",
                        p.name.name
                    ),
                    "an extern type",
                );
                continue;
            }
            let Some(ty) = self.storable_ty(&p.ty, "an action parameter") else {
                continue;
            };
            // A default value is checked here, used or not (p4c).
            if let Some(d) = &p.default {
                self.default_value(d, &ty);
            }
            let directional = p.direction != ast::Direction::None;
            if directional {
                if seen_data {
                    self.error(
                        codes::TYPE_MISMATCH,
                        p.span,
                        "directional action parameters must come before action data parameters",
                    );
                }
                n_directional += 1;
            } else {
                seen_data = true;
                if !matches!(ty, Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_)) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        p.ty.span,
                        "action data parameters must be bit strings or bool",
                    );
                }
            }
            let dir = direction(p.direction);
            vars.push(ir::Var {
                name: p.name.name.clone(),
                ty: ty.clone(),
                param: Some(dir),
            });
            self.declare(
                &p.name,
                Sym::Var(
                    ir::VarRef::Local(i as u32),
                    ty,
                    dir != ir::Direction::In,
                    Some(self.nominal_of_type(&p.ty)),
                    self.tuple_nominals(&p.ty),
                ),
            );
        }
        let n_params = vars.len() as u32;
        let saved = self.body.replace(Body {
            kind: BodyKind::Action,
            vars,
            ret: Ty::Void,
            control,
            loops: 0,
            externs: Vec::new(),
        });
        let outer_implicit = std::mem::replace(&mut self.uses_implicit_std_meta, false);
        let outer_reads = std::mem::take(&mut self.facts.pending_meter_reads);
        let outer_counts = std::mem::take(&mut self.facts.pending_counter_counts);
        let body = self.block(&a.body);
        let implicit = std::mem::replace(&mut self.uses_implicit_std_meta, outer_implicit);
        let meter_reads = std::mem::replace(&mut self.facts.pending_meter_reads, outer_reads);
        let counter_counts =
            std::mem::replace(&mut self.facts.pending_counter_counts, outer_counts);
        let b = std::mem::replace(&mut self.body, saved)?;
        self.pop_scope();
        let (externs, extern_names): (Vec<_>, Vec<_>) =
            b.externs.into_iter().map(|e| (e.inst, e.name)).unzip();
        let spec = name_spec(&a.annotations, &a.name.name);
        let local_name = (self.block_name.is_some() && !spec.absolute).then(|| spec.name.clone());
        let p4_name = match (&self.block_name, spec.absolute) {
            (Some(bn), false) => format!("{bn}.{}", spec.name),
            _ => spec.name,
        };
        let explicit = explicit_id(&a.annotations);
        let h = self.prog.actions.append(
            ir::Action {
                name: a.name.name.clone(),
                p4_name,
                local_name,
                control,
                vars: b.vars,
                n_params,
                n_directional,
                body,
                externs,
                span: a.span,
            },
            a.span,
        );
        for (i, n) in extern_names.into_iter().enumerate() {
            self.facts
                .action_extern_names
                .insert((h.index(), i as u32), n);
        }
        if let Some(id) = explicit {
            self.facts.action_explicit_ids.insert(h.index(), id);
        }
        if implicit {
            self.facts.implicit_std_meta_actions.insert(h.index());
        }
        if !meter_reads.is_empty() {
            self.facts.meter_reads.insert(h.index(), meter_reads);
        }
        if !counter_counts.is_empty() {
            self.facts.counter_counts.insert(h.index(), counter_counts);
        }
        let params = self.param_specs(&a.params);
        self.action_params.insert(h.index(), params);
        Some(h)
    }

    // ---------------------------------------------------------------- table

    fn table_decl(&mut self, t: &ast::TableDecl, ctl: Handle<ir::Control>) {
        let mut keys = Vec::new();
        let mut actions: Vec<Handle<ir::Action>> = Vec::new();
        let mut bound: Vec<Vec<ir::Expr>> = Vec::new();
        let mut scopes = Vec::new();
        let mut facts = TableFacts {
            name: name_spec(&t.annotations, &t.name.name),
            size: 1024,
            ..Default::default()
        };
        let mut default_prop = None;
        let mut entries_prop = None;
        // P4_16 v1.2.4 §14.2.1.4.1 entry priorities.
        let mut largest_wins = true;
        let mut priority_delta: i64 = 1;
        let mut implementation = None;
        for (i, p) in t.properties.iter().enumerate() {
            let twice = !matches!(p.kind, ast::TablePropertyKind::Custom { .. })
                && t.properties[..i]
                    .iter()
                    .any(|o| std::mem::discriminant(&o.kind) == std::mem::discriminant(&p.kind));
            if twice {
                self.error_label(
                    codes::BAD_TABLE_PROPERTY,
                    p.span,
                    "this table property is given twice",
                    "second time",
                );
                continue;
            }
            match &p.kind {
                ast::TablePropertyKind::Key(ks) => {
                    for k in ks {
                        let Some(x) = self.expr(&k.expr, None) else {
                            continue;
                        };
                        if !matches!(
                            x.ty,
                            Ty::Bit(_)
                                | Ty::Int(_)
                                | Ty::Bool
                                | Ty::SerEnum(_)
                                | Ty::Error
                                | Ty::Enum(_)
                        ) {
                            self.error(
                                codes::TYPE_MISMATCH,
                                k.expr.span,
                                format!("a key cannot be {}", self.ty_name(&x.ty)),
                            );
                            continue;
                        }
                        let mk = k.match_kind.name.as_str();
                        if !self.match_kinds.iter().any(|m| m == mk) {
                            self.error_label(
                                codes::BAD_MATCH_KIND,
                                k.match_kind.span,
                                format!("unknown match kind `{mk}`"),
                                "expected exact, ternary, lpm, range, optional or selector",
                            );
                            continue;
                        }
                        let kind = match mk {
                            "exact" => ir::KeyKind::Match(MatchKind::Exact),
                            "lpm" => ir::KeyKind::Match(MatchKind::Lpm),
                            "ternary" => ir::KeyKind::Match(MatchKind::Ternary),
                            "range" => ir::KeyKind::Match(MatchKind::Range),
                            "optional" => ir::KeyKind::Match(MatchKind::Optional),
                            "selector" => ir::KeyKind::Selector,
                            other => {
                                self.error(
                                    codes::BAD_MATCH_KIND,
                                    k.match_kind.span,
                                    format!("match kind `{other}` is not supported by v1model"),
                                );
                                continue;
                            }
                        };
                        let name = match ast::find_annotation(&k.annotations, "name")
                            .and_then(|a| a.string_arg())
                        {
                            Some(n) => n.to_string(),
                            None => {
                                // P4_16 §14.2.1.1 leaves key names to the
                                // compiler; p4c names only simple keys.
                                if !key_is_nameable(&k.expr) {
                                    self.error_label(
                                        codes::BAD_TABLE_PROPERTY,
                                        k.expr.span,
                                        "this key expression needs a @name annotation",
                                        "p4c names only fields, slices, stack elements, masks and isValid()",
                                    );
                                }
                                expr_text(&k.expr)
                            }
                        };
                        keys.push(ir::Key {
                            expr: x,
                            kind,
                            name,
                        });
                    }
                    let lpm = keys
                        .iter()
                        .filter(|k| k.kind == ir::KeyKind::Match(MatchKind::Lpm))
                        .count();
                    if lpm > 1 {
                        self.error(
                            codes::BAD_MATCH_KIND,
                            p.span,
                            "a table may have at most one lpm key",
                        );
                    }
                }
                ast::TablePropertyKind::Actions(refs) => {
                    for r in refs {
                        match self.lookup(&r.name).cloned() {
                            Some(Sym::Action(a)) => {
                                self.check_action_use(a, Some(ctl), r.span);
                                // Arguments bound in the list go to the
                                // directional parameters.
                                let act = self.prog.actions[a].clone();
                                let given: Vec<&ast::Expr> =
                                    r.args.iter().flatten().map(|x| &x.value).collect();
                                if given.len() != act.n_directional as usize {
                                    self.error_label(
                                        codes::ARG_COUNT,
                                        r.span,
                                        format!(
                                            "action `{}` has {} directional parameter(s); the actions list must bind exactly those",
                                            act.name, act.n_directional
                                        ),
                                        "wrong number of bound arguments",
                                    );
                                    continue;
                                }
                                // p4c: "table invocation in action
                                // argument" (issue2835): a bound argument
                                // is evaluated when the table runs the
                                // action, and may not run a table itself.
                                let mut ok = true;
                                for e in &given {
                                    if let Some(sp) = self.table_apply_in(e) {
                                        self.error_label(
                                            codes::NOT_ALLOWED_HERE,
                                            sp,
                                            "a table may not be applied in an argument of the actions list",
                                            "table invocation in an action argument",
                                        );
                                        ok = false;
                                    }
                                }
                                if !ok {
                                    continue;
                                }
                                let mut bound_args = Vec::new();
                                for (prm, e) in act.vars.iter().zip(&given) {
                                    let x = if prm.param == Some(ir::Direction::In) {
                                        self.expr(e, Some(&prm.ty))
                                    } else {
                                        self.lvalue(e).and_then(|l| {
                                            self.coerce(super::expr::TE::Typed(l), &prm.ty, e.span)
                                        })
                                    };
                                    match x {
                                        Some(x) => bound_args.push(x),
                                        None => ok = false,
                                    }
                                }
                                if !ok {
                                    continue;
                                }
                                if actions.contains(&a) {
                                    self.error(
                                        codes::DUPLICATE,
                                        r.span,
                                        "this action is listed twice",
                                    );
                                    continue;
                                }
                                let scope = if ast::find_annotation(&r.annotations, "defaultonly")
                                    .is_some()
                                {
                                    ActionScope::DefaultOnly
                                } else if ast::find_annotation(&r.annotations, "tableonly")
                                    .is_some()
                                {
                                    ActionScope::TableOnly
                                } else {
                                    ActionScope::TableAndDefault
                                };
                                actions.push(a);
                                bound.push(bound_args);
                                scopes.push(scope);
                            }
                            Some(_) => self.error(
                                codes::BAD_ACTION_REF,
                                r.name.span,
                                format!("`{}` is not an action", r.name.ident.name),
                            ),
                            None => self.error_label(
                                codes::UNKNOWN_NAME,
                                r.name.span,
                                format!("cannot find action `{}`", r.name.ident.name),
                                "not declared",
                            ),
                        }
                    }
                }
                ast::TablePropertyKind::DefaultAction(e) => {
                    default_prop = Some((e, p.is_const));
                }
                ast::TablePropertyKind::Size(e) => {
                    if let Some(s) = self.const_u32(e, "table size") {
                        facts.size = s;
                    }
                }
                ast::TablePropertyKind::Entries(es) => entries_prop = Some((es, p.is_const)),
                ast::TablePropertyKind::Implementation(e)
                | ast::TablePropertyKind::Counters(e)
                | ast::TablePropertyKind::Meters(e) => {
                    let which = match &p.kind {
                        ast::TablePropertyKind::Implementation(_) => 0,
                        ast::TablePropertyKind::Counters(_) => 1,
                        _ => 2,
                    };
                    let idx = match &e.kind {
                        ast::ExprKind::Name(pn) => match self.lookup(pn).cloned() {
                            Some(Sym::Extern(i)) => Some(i),
                            _ => None,
                        },
                        // `implementation = action_selector(...)`: an
                        // anonymous instance named after the table, as p4c does.
                        ast::ExprKind::Call {
                            callee,
                            type_args,
                            args,
                        } => {
                            let before = self.prog.controls[ctl].externs.len();
                            let inst = ast::Instantiation {
                                annotations: t.annotations.clone(),
                                ty: ast::Type {
                                    kind: ast::TypeKind::Named {
                                        name: match &callee.kind {
                                            ast::ExprKind::Name(p) => p.clone(),
                                            _ => {
                                                self.error(
                                                    codes::BAD_TABLE_PROPERTY,
                                                    e.span,
                                                    "expected an extern instantiation",
                                                );
                                                continue;
                                            }
                                        },
                                        args: type_args.clone(),
                                    },
                                    span: callee.span,
                                },
                                args: args.clone(),
                                name: t.name.clone(),
                                initializer: None,
                                span: e.span,
                            };
                            self.control_instantiation_anon(&inst, ctl);
                            (self.prog.controls[ctl].externs.len() > before)
                                .then_some(before as u32)
                        }
                        _ => None,
                    };
                    let Some(idx) = idx else {
                        self.error(
                            codes::BAD_TABLE_PROPERTY,
                            e.span,
                            "expected the name of an extern instance declared in this control",
                        );
                        continue;
                    };
                    let kind = self.prog.controls[ctl].externs[idx as usize].kind.clone();
                    match (which, kind) {
                        (
                            0,
                            ir::ExternKind::ActionProfile(_) | ir::ExternKind::ActionSelector(..),
                        ) => implementation = Some(idx),
                        (1, ir::ExternKind::DirectCounter(_)) => facts.direct_counter = Some(idx),
                        (2, ir::ExternKind::DirectMeter(_)) => facts.direct_meter = Some(idx),
                        _ => self.error(
                            codes::BAD_TABLE_PROPERTY,
                            e.span,
                            match which {
                                0 => "`implementation` needs an action_profile or action_selector",
                                1 => "`counters` needs a direct_counter",
                                _ => "`meters` needs a direct_meter",
                            },
                        ),
                    }
                }
                ast::TablePropertyKind::SupportTimeout(e) => {
                    if let Some(x) = self.expr(e, Some(&Ty::Bool)) {
                        facts.idle_timeout = matches!(x.kind, ir::ExprKind::Bool(true));
                    }
                }
                ast::TablePropertyKind::Custom { name, value }
                    if name.name == "largest_priority_wins" =>
                {
                    if let Some(x) = self.expr(value, Some(&Ty::Bool)) {
                        match x.kind {
                            ir::ExprKind::Bool(b) => largest_wins = b,
                            _ => self.error(
                                codes::NOT_CONSTANT,
                                value.span,
                                "`largest_priority_wins` must be a constant boolean",
                            ),
                        }
                    }
                }
                ast::TablePropertyKind::Custom { name, value } if name.name == "priority_delta" => {
                    // A number: `true` is no delta (p4c's
                    // table-custom-property-priority_delta-unsupported-type).
                    match self.const_number(value, "`priority_delta`") {
                        Some(d) if d > 0 && d <= i32::MAX as i128 => priority_delta = d as i64,
                        Some(_) => self.error(
                            codes::BAD_TABLE_PROPERTY,
                            value.span,
                            "`priority_delta` must be a positive integer",
                        ),
                        None => {}
                    }
                }
                ast::TablePropertyKind::Custom { name, .. } => {
                    self.warn(
                        codes::IGNORED,
                        name.span,
                        format!("table property `{}` is ignored", name.name),
                    );
                }
            }
        }
        self.table_property_order(t);
        let has_selector = keys.iter().any(|k| k.kind == ir::KeyKind::Selector);
        if has_selector {
            let is_sel = implementation.map(|i| {
                matches!(
                    self.prog.controls[ctl].externs[i as usize].kind,
                    ir::ExternKind::ActionSelector(..)
                )
            });
            match is_sel {
                Some(true) => {}
                // p4c accepts a table with `selector` keys and no
                // implementation (its issue1560 sample) and leaves the keys
                // out: the table matches on the others alone.
                None => {
                    self.warn(
                        codes::IGNORED,
                        t.span,
                        "`selector` keys without `implementation = <an action_selector>` are ignored",
                    );
                    keys.retain(|k| k.kind != ir::KeyKind::Selector);
                }
                Some(false) => self.error(
                    codes::BAD_MATCH_KIND,
                    t.span,
                    "`selector` keys need `implementation = <an action_selector>`, not an action_profile",
                ),
            }
        }
        // Default action.
        match default_prop {
            Some((e, is_const)) => {
                let (name, args) = match &e.kind {
                    ast::ExprKind::Name(p) => (Some(p), Vec::new()),
                    ast::ExprKind::Call { callee, args, .. } => match &callee.kind {
                        ast::ExprKind::Name(p) => (Some(p), args.clone()),
                        _ => (None, Vec::new()),
                    },
                    _ => (None, Vec::new()),
                };
                let Some(name) = name else {
                    self.error(codes::BAD_DEFAULT_ACTION, e.span, "expected an action call");
                    return;
                };
                match self.lookup(name).cloned() {
                    Some(Sym::Action(a)) => {
                        match actions.iter().position(|x| *x == a) {
                            Some(i) if scopes[i] == ActionScope::TableOnly => self.error(
                                codes::BAD_DEFAULT_ACTION,
                                e.span,
                                format!(
                                    "`{}` is @tableonly and cannot be the default action",
                                    name.ident.name
                                ),
                            ),
                            Some(i) => self.check_bound_args(a, &args, &bound[i], "default action"),
                            None => self.error_label(
                                codes::BAD_DEFAULT_ACTION,
                                e.span,
                                format!(
                                    "default action `{}` is not in the table's actions",
                                    name.ident.name
                                ),
                                "not listed in `actions`",
                            ),
                        }
                        if let Some(params) = self.const_action_args(a, &args, e.span) {
                            facts.default = Some((a, params));
                            facts.default_is_const = is_const;
                        }
                    }
                    _ => self.error_label(
                        codes::BAD_DEFAULT_ACTION,
                        name.span,
                        format!("`{}` is not an action", name.ident.name),
                        "not an action",
                    ),
                }
            }
            None => {
                // p4c: the default is NoAction, added as @defaultonly if not listed.
                if let Some(Sym::Action(na)) = self.scopes[0].get("NoAction").cloned() {
                    if !actions.contains(&na) {
                        actions.push(na);
                        bound.push(Vec::new());
                        scopes.push(ActionScope::DefaultOnly);
                    }
                    facts.default = Some((na, Vec::new()));
                }
            }
        }
        // Entries.
        if let Some((es, is_const)) = entries_prop {
            facts.is_const = is_const;
            let match_keys: Vec<(ir::KeyKind, Ty)> = keys
                .iter()
                .filter(|k| k.kind != ir::KeyKind::Selector)
                .map(|k| (k.kind, k.expr.ty.clone()))
                .collect();
            if match_keys.is_empty() && !es.is_empty() {
                self.error(
                    codes::BAD_ENTRY,
                    t.name.span,
                    format!(
                        "table `{}` has entries but no key to match them on",
                        t.name.name
                    ),
                );
            }
            let needs_priority = match_keys.iter().any(|(k, _)| {
                matches!(
                    k,
                    ir::KeyKind::Match(MatchKind::Ternary | MatchKind::Range | MatchKind::Optional)
                )
            });
            let mut explicit = Vec::new();
            let mut annotated = Vec::new();
            for en in es.iter() {
                if let Some((ef, p)) = self.entry(en, &match_keys, &actions, &bound, &scopes) {
                    facts.entries.push(ef);
                    if is_const && let Some(e) = &en.priority {
                        // p4c: "Table with 'const' entries cannot have
                        // priorities" (its EntryPriorities pass).
                        self.error_label(
                            codes::BAD_ENTRY,
                            e.span,
                            "a table with `const entries` cannot give its entries priorities",
                            "write `entries = { .. }` to use `priority =`",
                        );
                    }
                    let annotation = ast::find_annotation(&en.annotations, "priority")
                        .and_then(|a| a.int_arg())
                        .map(|i| i64::try_from(i.value).unwrap_or(i64::MAX));
                    annotated.push(annotation);
                    explicit.push((p, en.span));
                }
            }
            if !needs_priority
                && !is_const
                && let Some(e) = es.iter().find_map(|en| en.priority.as_ref())
            {
                // P4_16 §14.2.1.4: priorities order entries whose keysets
                // can overlap, which only ternary, range and optional keys
                // allow (p4c: "match type does not require priorities").
                self.error_label(
                    codes::BAD_ENTRY,
                    e.span,
                    format!(
                        "table `{}` has only exact and lpm keys, so its entries take no priority",
                        t.name.name
                    ),
                    "remove `priority =`",
                );
            }
            if !needs_priority {
                // Without priorities an entry is known by its key alone
                // (P4Runtime), so two entries with one key cannot both be
                // installed; p4c: "Duplicate entry keys" (its
                // table-entries-error).
                let mut seen: std::collections::HashMap<
                    &[Option<p4_target::runtime::FieldMatch>],
                    crate::diag::Span,
                > = std::collections::HashMap::new();
                let mut dups = Vec::new();
                for (ef, (_, span)) in facts.entries.iter().zip(&explicit) {
                    if let Some(first) = seen.insert(ef.matches.as_slice(), *span) {
                        dups.push((*span, first));
                    }
                }
                for (span, first) in dups {
                    self.diags.push(
                        Diagnostic::error(
                            codes::BAD_ENTRY,
                            format!("table `{}` has two entries with the same key", t.name.name),
                        )
                        .with_primary(span, "duplicate entry key")
                        .with_secondary(first, "first entry with this key"),
                    );
                }
            }
            let prios = if !needs_priority {
                None
            } else if is_const && annotated.iter().any(Option::is_some) {
                Some(Self::annotated_priorities(&annotated))
            } else {
                self.entry_priorities(&explicit, largest_wins, priority_delta)
            };
            if let Some(prios) = prios {
                for (ef, p) in facts.entries.iter_mut().zip(prios) {
                    ef.priority = p;
                }
            }
        }
        facts.scopes = scopes;
        self.check_direct_resources(t, ctl, &facts, &actions);
        let th = self.prog.tables.append(
            ir::Table {
                name: t.name.name.clone(),
                control: ctl,
                keys,
                actions,
                bound,
                implementation,
                direct_meter: facts.direct_meter,
                span: t.span,
            },
            t.span,
        );
        self.facts.tables.insert(th.index(), facts);
        self.prog.controls[ctl].tables.push(th);
        self.declare(&t.name, Sym::Table(th));
    }

    /// The rules for a table's direct counter and meter (v1model.p4: a
    /// direct resource is owned by the one table that names it; BMv2, as
    /// p4c enforces: a table with a direct meter needs an action that reads
    /// it, as the read is what says where the colour goes).
    fn check_direct_resources(
        &mut self,
        t: &ast::TableDecl,
        ctl: Handle<ir::Control>,
        facts: &TableFacts,
        actions: &[Handle<ir::Action>],
    ) {
        let mine = [
            ("direct_counter", facts.direct_counter),
            ("direct_meter", facts.direct_meter),
        ];
        for (kind, idx) in mine {
            let Some(idx) = idx else { continue };
            let other = self.prog.controls[ctl].tables.iter().find(|o| {
                let f = self.facts.tables.get(&o.index());
                f.is_some_and(|f| match kind {
                    "direct_counter" => f.direct_counter == Some(idx),
                    _ => f.direct_meter == Some(idx),
                })
            });
            if let Some(o) = other {
                let o = &self.prog.tables[*o];
                let name = &self.prog.controls[ctl].externs[idx as usize].name;
                self.diags.push(
                    Diagnostic::error(
                        codes::BAD_TABLE_PROPERTY,
                        format!(
                            "{kind} `{name}` is attached to tables `{}` and `{}`: a direct \
                             resource belongs to one table",
                            o.name, t.name.name
                        ),
                    )
                    .with_primary(t.name.span, "second table")
                    .with_secondary(o.span, "first table"),
                );
            }
        }
        if let Some(m) = facts.direct_meter {
            let read = actions.iter().any(|a| {
                self.facts
                    .meter_reads
                    .get(&a.index())
                    .is_some_and(|r| r.iter().any(|(i, _)| *i == m))
            });
            if !read {
                let name = &self.prog.controls[ctl].externs[m as usize].name;
                self.error_label(
                    codes::BAD_TABLE_PROPERTY,
                    t.name.span,
                    format!(
                        "table `{}` has direct meter `{name}` but none of its actions calls \
                         `{name}.read(...)`: BMv2 needs the read to know where the colour goes",
                        t.name.name
                    ),
                    "no action reads the meter",
                );
            }
        }
    }

    /// An action of a table of control `h` may count only that table's
    /// direct counter and read only its direct meter: the cell used is that
    /// of the entry the table hit, which another table's counter or meter
    /// does not have (p4c's DPDK back end: "can only be invoked from within
    /// action of ownertable"; BMv2 drops such a `count()` and colours only
    /// when the owner table is applied). Run once every table is known, so
    /// a meter no table owns is left to `check_meter_reads_owned`.
    fn check_direct_uses_owned(&mut self, h: Handle<ir::Control>) {
        let ctl = &self.prog.controls[h];
        let owned_meters: Vec<u32> = ctl
            .tables
            .iter()
            .filter_map(|t| self.prog.tables[*t].direct_meter)
            .collect();
        let mut bad = Vec::new();
        for th in &ctl.tables {
            let table = &self.prog.tables[*th];
            let Some(facts) = self.facts.tables.get(&th.index()) else {
                continue;
            };
            for a in &table.actions {
                let uses = [
                    (
                        "direct_counter",
                        "count",
                        "counters",
                        facts.direct_counter,
                        &self.facts.counter_counts,
                    ),
                    (
                        "direct_meter",
                        "read",
                        "meters",
                        facts.direct_meter,
                        &self.facts.meter_reads,
                    ),
                ];
                for (kind, method, prop, own, map) in uses {
                    for (inst, span) in map.get(&a.index()).into_iter().flatten() {
                        let unowned_meter = kind == "direct_meter" && !owned_meters.contains(inst);
                        if own != Some(*inst) && !unowned_meter {
                            bad.push((kind, method, prop, *inst, *span, *a, *th));
                        }
                    }
                }
            }
        }
        // An action called by two listed actions is reported once a table.
        bad.sort_by_key(|b| (b.4.start, b.4.end, b.6.index(), b.3));
        bad.dedup_by_key(|b| (b.4.start, b.4.end, b.6.index(), b.3));
        for (kind, method, prop, inst, span, a, th) in bad {
            let name = &self.prog.controls[h].externs[inst as usize].name;
            let action = &self.prog.actions[a].name;
            let table = &self.prog.tables[th];
            let d = Diagnostic::error(
                codes::NOT_ALLOWED_HERE,
                format!(
                    "{kind} `{name}`'s {method}() is called from action `{action}` of table \
                     `{}`, which does not have `{prop} = {name}`: it can only be called from an \
                     action of its owner table",
                    table.name
                ),
            )
            .with_primary(span, "not the owner table's resource")
            .with_secondary(table.span, "table applying the action");
            self.diags.push(d);
        }
    }

    /// Every `direct_meter.read` in control `h`'s actions reads a meter some
    /// table of `h` owns (`meters = m`): the colour is that of the entry the
    /// table hit, so a meter no table owns has none to give.
    fn check_meter_reads_owned(&mut self, h: Handle<ir::Control>) {
        let ctl = &self.prog.controls[h];
        let owned: Vec<u32> = ctl
            .tables
            .iter()
            .filter_map(|t| self.prog.tables[*t].direct_meter)
            .collect();
        let mut unowned: Vec<(u32, Span)> = ctl
            .actions
            .iter()
            .filter_map(|a| self.facts.meter_reads.get(&a.index()))
            .flatten()
            .filter(|(m, _)| !owned.contains(m))
            .copied()
            .collect();
        unowned.sort_by_key(|(_, s)| (s.start, s.end));
        unowned.dedup();
        for (m, span) in unowned {
            let name = self.prog.controls[h].externs[m as usize].name.clone();
            self.error_label(
                codes::NOT_ALLOWED_HERE,
                span,
                format!(
                    "direct meter `{name}` is read here, but no table has `meters = {name}`: \
                     the colour read is that of the entry its table hit"
                ),
                "meter of no table",
            );
        }
    }

    /// A default action or an entry's action (`what`) written with its
    /// directional arguments (`a(hdr.x, 5)`) repeats the ones the `actions`
    /// list binds (`actions = { a(hdr.x); }`): it is the same bound action,
    /// and p4c refuses another argument ("argument does not match
    /// declaration in actions list").
    fn check_bound_args(
        &mut self,
        a: Handle<ir::Action>,
        args: &[ast::Argument],
        listed: &[ir::Expr],
        what: &str,
    ) {
        let act = &self.prog.actions[a];
        let n = act.n_directional as usize;
        if n == 0 || args.len() != act.n_params as usize || listed.len() != n {
            return;
        }
        if args.iter().any(|x| x.name.is_some()) {
            return;
        }
        let tys: Vec<Ty> = act.vars[..n].iter().map(|v| v.ty.clone()).collect();
        for ((arg, ty), want) in args.iter().zip(tys).zip(listed) {
            let Some(got) = self.expr(&arg.value, Some(&ty)) else {
                return;
            };
            if !same_place(&got, want) {
                self.diags.push(
                    Diagnostic::error(
                        codes::BAD_DEFAULT_ACTION,
                        format!(
                            "the {what}'s argument differs from the one the `actions` list binds"
                        ),
                    )
                    .with_primary(arg.value.span, "this argument")
                    .with_secondary(want.span, "bound here"),
                );
            }
        }
    }

    /// Constant arguments for an action's data parameters.
    fn const_action_args(
        &mut self,
        a: Handle<ir::Action>,
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Vec<u128>> {
        let act = self.prog.actions[a].clone();
        let data = act.data_params().to_vec();
        let bound: Vec<ast::Expr> = if args.iter().any(|x| x.name.is_some()) {
            // Named arguments name the action data parameters.
            let all = self
                .action_params
                .get(&a.index())
                .cloned()
                .unwrap_or_default();
            let params = all
                .get(act.n_directional as usize..)
                .unwrap_or(&[])
                .to_vec();
            self.bind_args(&format!("action `{}`", act.name), &params, args, span)?
        } else {
            args.iter().map(|x| x.value.clone()).collect()
        };
        let args: Vec<&ast::Expr> = bound.iter().collect();
        let args = args.as_slice();
        // `a(bound.., data..)` in default_action/entries: the directional
        // arguments repeat the ones bound in the actions list.
        let args = if args.len() == act.n_params as usize && act.n_directional > 0 {
            &args[act.n_directional as usize..]
        } else {
            args
        };
        if data.len() != args.len() {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "action `{}` takes {} argument{}, {} given",
                    act.name,
                    data.len(),
                    if data.len() == 1 { "" } else { "s" },
                    args.len()
                ),
                "wrong number of arguments",
            );
            return None;
        }
        let mut out = Vec::new();
        for (p, e) in data.iter().zip(args) {
            let x = self.expr(e, Some(&p.ty))?;
            match fold::const_int(&x) {
                Some(v) => out.push(v),
                None => {
                    self.error(
                        codes::NOT_CONSTANT,
                        e.span,
                        "action arguments here must be constants",
                    );
                    return None;
                }
            }
        }
        Some(out)
    }

    /// The runtime priorities (larger wins, at least 1) of `const entries`
    /// with p4c's `@priority(N)` annotations, as p4c gives them to BMv2: an
    /// entry's priority is its annotation, or else its position (1, 2, ..),
    /// and the smallest wins (p4c's table-entries-priority-bmv2 sample).
    fn annotated_priorities(annotated: &[Option<i64>]) -> Vec<i32> {
        let bmv2: Vec<i64> = annotated
            .iter()
            .enumerate()
            .map(|(i, a)| a.unwrap_or(i as i64 + 1).max(0))
            .collect();
        let max = bmv2.iter().copied().max().unwrap_or(0);
        bmv2.iter()
            .map(|&p| i32::try_from(max - p + 1).unwrap_or(i32::MAX))
            .collect()
    }

    /// The runtime priorities (larger wins, at least 1) of a table's
    /// entries, from their explicit priorities (`priority = N:` or
    /// `@priority(N)`) by the rules of P4_16 v1.2.4 §14.2.1.4.1: without any
    /// explicit priority, entries are numbered so that the first wins;
    /// otherwise the first entry must have one and each entry without one
    /// takes the previous entry's priority, one `priority_delta` weaker.
    fn entry_priorities(
        &mut self,
        explicit: &[(Option<i64>, Span)],
        largest_wins: bool,
        delta: i64,
    ) -> Option<Vec<i32>> {
        let n = explicit.len() as i64;
        let mut prio: Vec<i64> = Vec::with_capacity(explicit.len());
        if explicit.iter().all(|(p, _)| p.is_none()) {
            for j in 0..n {
                prio.push(if largest_wins {
                    1 + (n - 1 - j) * delta
                } else {
                    1 + j * delta
                });
            }
        } else {
            let Some((Some(first), _)) = explicit.first() else {
                let span = explicit.first().map(|e| e.1).unwrap_or_default();
                self.error_label(
                    codes::BAD_ENTRY,
                    span,
                    "the first entry needs an explicit priority when other entries have one",
                    "no `priority = N:`",
                );
                return None;
            };
            let mut p = *first;
            for (e, _) in explicit {
                p = match e {
                    Some(v) => *v,
                    None if largest_wins => p - delta,
                    None => p + delta,
                };
                prio.push(p);
            }
        }
        for (p, (_, span)) in prio.iter().zip(explicit) {
            if *p < 0 || *p > i32::MAX as i64 {
                self.error_label(
                    codes::BAD_ENTRY,
                    *span,
                    format!("entry priority {p} is out of range"),
                    "this entry",
                );
                return None;
            }
        }
        // The runtime lets the larger priority win and wants priorities > 0.
        let max = prio.iter().copied().max().unwrap_or(0);
        let min = prio.iter().copied().min().unwrap_or(1);
        let runtime = prio
            .iter()
            .map(|&p| {
                let r = if largest_wins {
                    p - min.min(1) + 1
                } else {
                    max - p + 1
                };
                i32::try_from(r).unwrap_or(i32::MAX)
            })
            .collect();
        Some(runtime)
    }

    /// The scalars a value set's element type matches, in key order: the
    /// type itself, a tuple's elements, or a struct's fields with nested
    /// structs flattened (p4c's pvs-nested-struct sample); a type that is
    /// none of these gives no parts.
    /// The leaves of a value set's element type, in order, each with its
    /// dotted path below `prefix` (a tuple's items are named by index).
    pub(super) fn value_set_parts(&self, ty: &Ty, prefix: &str) -> Vec<(String, Ty)> {
        let join = |n: &str| {
            if prefix.is_empty() {
                n.to_string()
            } else {
                format!("{prefix}.{n}")
            }
        };
        match ty {
            Ty::Tuple(items) => items
                .iter()
                .enumerate()
                .flat_map(|(i, t)| self.value_set_parts(t, &join(&i.to_string())))
                .collect(),
            Ty::Composite(c) if self.prog.composites[*c].kind == ir::CompositeKind::Struct => {
                self.prog.composites[*c]
                    .fields
                    .iter()
                    .flat_map(|f| self.value_set_parts(&f.ty, &join(&f.name)))
                    .collect()
            }
            Ty::Composite(_) => vec![],
            t => vec![(prefix.to_string(), t.clone())],
        }
    }

    /// One table entry, with its explicit priority if it has one.
    fn entry(
        &mut self,
        en: &ast::TableEntry,
        keys: &[(ir::KeyKind, Ty)],
        actions: &[Handle<ir::Action>],
        bound: &[Vec<ir::Expr>],
        scopes: &[ActionScope],
    ) -> Option<(EntryFacts, Option<i64>)> {
        // A list expression `{ a, b }` as an entry's whole key set is the
        // tuple of the table's key values, each element one key's value
        // (p4c types the key set against the tuple of the keys; its
        // action-two-params writes `{ e }` for a one-key table).
        let listed: Vec<ast::KeysetElem>;
        let elems: &[ast::KeysetElem] = match en.keyset.elems.as_slice() {
            [
                ast::KeysetElem::Expr(ast::Expr {
                    kind: ast::ExprKind::List(items),
                    ..
                }),
            ] if !en.keyset.is_tuple => {
                listed = items.iter().cloned().map(ast::KeysetElem::Expr).collect();
                &listed
            }
            elems => elems,
        };
        let all_default = elems.len() == 1
            && matches!(
                elems[0],
                ast::KeysetElem::Default(_) | ast::KeysetElem::DontCare(_)
            );
        if !all_default && elems.len() != keys.len() {
            self.error_label(
                codes::BAD_ENTRY,
                en.keyset.span,
                format!(
                    "this entry has {} key value{} but the table has {} key{}",
                    elems.len(),
                    if elems.len() == 1 { "" } else { "s" },
                    keys.len(),
                    if keys.len() == 1 { "" } else { "s" }
                ),
                "wrong number of values",
            );
            return None;
        }
        let mut matches = Vec::new();
        for (k, (kind, ty)) in keys.iter().enumerate() {
            let el = if all_default { &elems[0] } else { &elems[k] };
            let w = ty.scalar_width(&self.prog).unwrap_or(32);
            let full = p4_target::bits::mask(w);
            let m = match (kind, el) {
                (_, ast::KeysetElem::Default(_) | ast::KeysetElem::DontCare(_)) => {
                    if *kind == ir::KeyKind::Match(MatchKind::Exact) {
                        self.error(codes::BAD_ENTRY, el_span(el), "an exact key needs a value");
                        return None;
                    }
                    None
                }
                (ir::KeyKind::Match(mk), ast::KeysetElem::Expr(e)) => {
                    let v = self.keyset_value(e, ty)?;
                    Some(match mk {
                        MatchKind::Exact => FieldMatch::Exact(v),
                        MatchKind::Lpm => FieldMatch::Lpm {
                            value: v,
                            prefix_len: w,
                        },
                        MatchKind::Ternary => FieldMatch::Ternary {
                            value: v,
                            mask: full,
                        },
                        MatchKind::Range => FieldMatch::Range { low: v, high: v },
                        MatchKind::Optional => FieldMatch::Optional(v),
                    })
                }
                (
                    ir::KeyKind::Match(mk @ (MatchKind::Ternary | MatchKind::Lpm)),
                    ast::KeysetElem::Mask { value, mask, .. },
                ) => {
                    let v = self.keyset_value(value, ty)?;
                    let m = self.keyset_value(mask, ty)?;
                    if *mk == MatchKind::Lpm {
                        let len = m.count_ones();
                        if m != (full ^ p4_target::bits::mask(w - len.min(w))) {
                            self.error(
                                codes::BAD_ENTRY,
                                el_span(el),
                                "an lpm mask must be a prefix",
                            );
                            return None;
                        }
                        Some(FieldMatch::Lpm {
                            value: v & m,
                            prefix_len: len,
                        })
                    } else {
                        Some(FieldMatch::Ternary {
                            value: v & m,
                            mask: m,
                        })
                    }
                }
                (ir::KeyKind::Match(MatchKind::Range), ast::KeysetElem::Range { lo, hi, .. }) => {
                    let l = self.keyset_value(lo, ty)?;
                    let h = self.keyset_value(hi, ty)?;
                    // P4Runtime's match format refuses a range entry whose low is
                    // above its high, so such a const entry could not be
                    // read back or installed; refused as a select range is.
                    let signed = ty
                        .is_signed(&self.prog)
                        .then(|| ty.scalar_width(&self.prog).unwrap_or(0));
                    if !self.range_in_order(codes::BAD_ENTRY, el_span(el), l, h, signed) {
                        return None;
                    }
                    // Table ranges compare the key's bits as unsigned
                    // numbers, as BMv2 compares P4Runtime's two's complement
                    // bytestrings; on an int<W> key a range across 0 would
                    // be empty that way, so it is refused with its reason.
                    if let Some(w) = signed
                        && p4_target::bits::sext(l, w) < 0
                        && p4_target::bits::sext(h, w) >= 0
                    {
                        self.error_label(
                            codes::BAD_ENTRY,
                            el_span(el),
                            format!(
                                "range {} .. {} of an {} key crosses 0",
                                p4_target::bits::sext(l, w),
                                p4_target::bits::sext(h, w),
                                self.ty_name(ty)
                            ),
                            "table ranges compare two's complement bits unsigned",
                        );
                        return None;
                    }
                    Some(FieldMatch::Range { low: l, high: h })
                }
                _ => {
                    self.error(
                        codes::BAD_ENTRY,
                        el_span(el),
                        "this keyset form does not fit the key's match kind",
                    );
                    return None;
                }
            };
            matches.push(m);
        }
        let (name, args) = (&en.action.name, en.action.args.clone().unwrap_or_default());
        let Some(Sym::Action(a)) = self.lookup(name).cloned() else {
            self.error(
                codes::BAD_ACTION_REF,
                name.span,
                format!("`{}` is not an action", name.ident.name),
            );
            return None;
        };
        let Some(i) = actions.iter().position(|x| *x == a) else {
            self.error_label(
                codes::BAD_ACTION_REF,
                name.span,
                format!("`{}` is not in the table's actions", name.ident.name),
                "not listed in `actions`",
            );
            return None;
        };
        // P4_16 §14.2.1.2: a `@defaultonly` action may only be the
        // default action, never the action of an entry.
        if scopes.get(i) == Some(&ActionScope::DefaultOnly) {
            self.error(
                codes::BAD_ENTRY,
                name.span,
                format!(
                    "`{}` is @defaultonly and cannot be the action of an entry",
                    name.ident.name
                ),
            );
            return None;
        }
        if let Some(listed) = bound.get(i) {
            self.check_bound_args(a, &args, listed, "entry");
        }
        let params = self.const_action_args(a, &args, en.action.span)?;
        let explicit = match &en.priority {
            Some(p) => Some(self.const_value(p)? as i64),
            None => ast::find_annotation(&en.annotations, "priority")
                .and_then(|a| a.int_arg())
                .map(|i| i64::try_from(i.value).unwrap_or(i64::MAX)),
        };
        Some((
            EntryFacts {
                matches,
                priority: 0,
                action: a,
                params,
            },
            explicit,
        ))
    }

    /// p4c reads a table's properties in order and needs `actions`
    /// (missing_actions: "does not have an `actions' property"; issue2033:
    /// "has no action list, so it cannot invoke"; table-entries-decl-order):
    /// `default_action` and `entries` name actions of a list declared
    /// before them, and `entries` match a `key` declared before them.
    fn table_property_order(&mut self, t: &ast::TableDecl) {
        use ast::TablePropertyKind as K;
        let at = |f: fn(&K) -> bool| t.properties.iter().position(|p| f(&p.kind));
        let actions = at(|k| matches!(k, K::Actions(_)));
        let key = at(|k| matches!(k, K::Key(_)));
        if actions.is_none() {
            self.error_label(
                codes::BAD_TABLE_PROPERTY,
                t.name.span,
                format!("table `{}` has no `actions` property", t.name.name),
                "every table lists its actions",
            );
        }
        for (i, p) in t.properties.iter().enumerate() {
            let (what, needs) = match p.kind {
                K::DefaultAction(_) => ("`default_action`", [actions, None]),
                K::Entries(_) => ("`entries`", [actions, key]),
                _ => continue,
            };
            let names = ["`actions`", "`key`"];
            for (before, name) in needs.iter().zip(names) {
                if before.is_some_and(|b| b > i) {
                    self.error_label(
                        codes::BAD_TABLE_PROPERTY,
                        p.span,
                        format!("{what} must come after {name} in the table (p4c reads properties in order)"),
                        format!("before {name}"),
                    );
                }
            }
        }
    }

    /// The span of a `t.apply()` of a table somewhere inside `e`, if any.
    fn table_apply_in(&self, e: &ast::Expr) -> Option<Span> {
        use ast::ExprKind as K;
        match &e.kind {
            K::Call { callee, args, .. } => {
                if let K::Member { base, member } = &callee.kind
                    && member.name == "apply"
                    && let K::Name(p) = &base.kind
                    && let Some(Sym::Table(_)) = self.lookup(p)
                {
                    return Some(e.span);
                }
                self.table_apply_in(callee)
                    .or_else(|| args.iter().find_map(|a| self.table_apply_in(&a.value)))
            }
            K::Member { base, .. } => self.table_apply_in(base),
            K::Index { base, index } => self
                .table_apply_in(base)
                .or_else(|| self.table_apply_in(index)),
            K::Slice { base, hi, lo, .. } => self
                .table_apply_in(base)
                .or_else(|| self.table_apply_in(hi))
                .or_else(|| self.table_apply_in(lo)),
            K::Unary { operand, .. } => self.table_apply_in(operand),
            K::Binary { lhs, rhs, .. } => self
                .table_apply_in(lhs)
                .or_else(|| self.table_apply_in(rhs)),
            K::Ternary {
                cond,
                then_expr,
                else_expr,
            } => self
                .table_apply_in(cond)
                .or_else(|| self.table_apply_in(then_expr))
                .or_else(|| self.table_apply_in(else_expr)),
            K::Cast { expr, .. } => self.table_apply_in(expr),
            K::StructInit(items) => items.iter().find_map(|i| self.table_apply_in(&i.value)),
            K::List(items) => items.iter().find_map(|i| self.table_apply_in(i)),
            _ => None,
        }
    }
}

pub(super) fn el_span(el: &ast::KeysetElem) -> Span {
    match el {
        ast::KeysetElem::Expr(e) => e.span,
        ast::KeysetElem::Mask { span, .. } | ast::KeysetElem::Range { span, .. } => *span,
        ast::KeysetElem::Default(s) | ast::KeysetElem::DontCare(s) => *s,
    }
}

/// Whether two checked arguments name the same place or value: variables,
/// fields, constant indices and slices, constants. Forms it does not know
/// count as the same, so a doubt never refuses a program.
fn same_place(a: &ir::Expr, b: &ir::Expr) -> bool {
    use ir::ExprKind as K;
    match (&a.kind, &b.kind) {
        (K::Var(x), K::Var(y)) => x == y,
        (K::Member(x, i), K::Member(y, j)) => i == j && same_place(x, y),
        (K::Index(x, i), K::Index(y, j)) => same_place(x, y) && same_place(i, j),
        (K::Slice(x, h1, l1), K::Slice(y, h2, l2)) => h1 == h2 && l1 == l2 && same_place(x, y),
        (K::Int(x), K::Int(y)) => x == y,
        (K::Bool(x), K::Bool(y)) => x == y,
        // Struct-valued and list arguments (in field order) match member by
        // member, calls by what they call and their arguments (p4c's
        // issue3671-2: `a1({f0 = ext1(), f1 = ext2()})` bound, the fields
        // swapped in `default_action`).
        (K::List(xs), K::List(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_place(x, y))
        }
        (K::Call(x), K::Call(y)) => match (callee(x), callee(y)) {
            (Some((f, xs)), Some((g, ys))) => {
                f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_place(x, y))
            }
            _ => true,
        },
        // Two known forms of different kinds differ; anything else is a doubt.
        (x, y) => !(known(x) && known(y)),
    }
}

/// The forms [`same_place`] compares.
fn known(kind: &ir::ExprKind) -> bool {
    use ir::ExprKind as K;
    matches!(
        kind,
        K::Var(_)
            | K::Member(..)
            | K::Index(..)
            | K::Slice(..)
            | K::Int(_)
            | K::Bool(_)
            | K::List(_)
            | K::Call(_)
    )
}

/// What a call calls: a kind tag (function, user extern function, user
/// extern method) and its indices.
type CalleeId = (u8, u32, u32);

/// What a function or user extern call calls and its arguments, for
/// [`same_place`]; `None` for other calls.
fn callee(c: &ir::Call) -> Option<(CalleeId, &[ir::Expr])> {
    match c {
        ir::Call::Function(f, args) => Some(((0, f.index() as u32, 0), args)),
        ir::Call::Builtin(b) => match b.as_ref() {
            ir::Builtin::UserFunction { func, args } => Some(((1, *func, 0), args)),
            ir::Builtin::UserMethod { inst, method, args } => Some(((2, *inst, *method), args)),
            _ => None,
        },
        _ => None,
    }
}

/// The directionless `int` parameters among a parser's or control's apply
/// parameters: their positions, themselves, and the other parameters;
/// `None` when there are none.
fn split_int_params(
    params: &[ast::Param],
) -> Option<(Vec<usize>, Vec<ast::Param>, Vec<ast::Param>)> {
    let is_int = |p: &ast::Param| {
        p.direction == ast::Direction::None && matches!(p.ty.kind, ast::TypeKind::Int)
    };
    let positions: Vec<usize> = (0..params.len()).filter(|i| is_int(&params[*i])).collect();
    if positions.is_empty() {
        return None;
    }
    let (ints, rest): (Vec<ast::Param>, Vec<ast::Param>) =
        params.iter().cloned().partition(|p| is_int(p));
    Some((positions, ints, rest))
}
