//! Parsers: declarations, sub-parsers with constructor arguments, states,
//! transitions and `select` keysets (P4_16 spec §12).

use super::ctor::ctor_key;
use super::{el_span, name_spec, split_int_params};
use crate::check::{Body, BodyKind, Checker, Sym, codes, fold};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Handle, Ty};

impl Checker {
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
                    crate::check::extern_params::ParserArg::Local(e) => Some(*e),
                    crate::check::extern_params::ParserArg::Global(..) => None,
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
                    .push(crate::check::extern_params::ParserBind {
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
            self.local_structured_annotations(d);
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
            self.structured_annotations(&s.annotations, &[]);
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
            .map(|d| crate::check::ParamSpec::of(&d.ctor_params))
            .unwrap_or_default();
        let bound = self.bind_args(&format!("`{n}`"), &params, &i.args, i.span)?;
        let args: Vec<&ast::Expr> = bound.iter().collect();
        let tys: Option<Vec<Ty>> = targs.iter().map(|t| self.ty(t)).collect();
        self.instantiate_ctor_parser(&n, &tys?, &args, i.span)
    }

    pub(super) fn keyset_value(&mut self, e: &ast::Expr, ty: &Ty) -> Option<u128> {
        let x = match ty {
            // A serializable enum key also takes values of its underlying
            // type (`(bit<16>)E.A &&& 0xff00`, p4c's
            // table-entries-ser-enum-bmv2 sample).
            Ty::SerEnum(en) => {
                let repr = self.prog.enums[*en].repr.clone()?;
                match self.expr_any(e)? {
                    crate::check::expr::TE::Typed(x) if x.ty == *ty => x,
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
    pub(crate) fn scalar_keyset(&mut self, el: &ast::KeysetElem, ty: &Ty) -> Option<ir::KeySet> {
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
    pub(super) fn range_in_order(
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
}
