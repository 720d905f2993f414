//! Calls: arguments bound by position, name or default, `out`/`inout`
//! arguments that must be writable, function and action calls (P4_16 spec §6.8).

use super::{TE, mk};
use crate::check::{BodyKind, Checker, ParamSpec, Sym, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Call, Expr, ExprKind, Ty};

impl Checker {
    /// Splits the arguments of `C.apply(..)` for control `name`, whose
    /// directionless `int` parameters sit at `positions`: those values pick
    /// (or check) the copy of C for them; the others are applied to it.
    pub(super) fn apply_int_args<'a>(
        &mut self,
        name: &str,
        positions: &[usize],
        args: &[&'a ast::Expr],
        span: Span,
    ) -> Option<(ir::Handle<ir::Control>, Vec<&'a ast::Expr>)> {
        let declared = self
            .ctor_controls
            .get(name)
            .map_or(0, |d| d.signature.params.len());
        self.split_apply_int_args(declared, positions, args, span, |c, values| {
            c.instantiate_ctor_control(name, &[], values, span)
        })
    }

    /// [`Self::apply_int_args`] for parser `name` applied in a state.
    pub(super) fn apply_int_parser_args<'a>(
        &mut self,
        name: &str,
        positions: &[usize],
        args: &[&'a ast::Expr],
        span: Span,
    ) -> Option<(ir::Handle<ir::Parser>, Vec<&'a ast::Expr>)> {
        let declared = self
            .ctor_parsers
            .get(name)
            .map_or(0, |d| d.signature.params.len());
        self.split_apply_int_args(declared, positions, args, span, |c, values| {
            c.instantiate_ctor_parser(name, &[], values, span)
        })
    }

    /// The part of [`Self::apply_int_args`] controls and parsers share:
    /// `declared` apply parameters besides the `int` ones at `positions`;
    /// `instantiate` makes the copy for the `int` values.
    fn split_apply_int_args<'a, H>(
        &mut self,
        declared: usize,
        positions: &[usize],
        args: &[&'a ast::Expr],
        span: Span,
        instantiate: impl FnOnce(&mut Self, &[&ast::Expr]) -> Option<H>,
    ) -> Option<(H, Vec<&'a ast::Expr>)> {
        if !self.arg_count(span, "apply", declared + positions.len(), args.len()) {
            return None;
        }
        let values: Vec<&ast::Expr> = positions.iter().map(|i| args[*i]).collect();
        let others = args
            .iter()
            .enumerate()
            .filter(|(i, _)| !positions.contains(i))
            .map(|(_, a)| *a)
            .collect();
        let before = self.diags.len();
        let sub = instantiate(self, &values);
        // The values are checked as the constructor arguments they became;
        // the messages name the parameters as the program declares them.
        for d in &mut self.diags[before..] {
            d.message = d
                .message
                .replace("constructor parameter", "directionless apply parameter");
        }
        Some((sub?, others))
    }

    /// Checks that `e` can be assigned to and returns it.
    pub(crate) fn lvalue(&mut self, e: &ast::Expr) -> Option<Expr> {
        if !self.writable(e) {
            return None;
        }
        let x = self.expr(e, None)?;
        // A stack's `size`, `lastIndex` and `nextIndex` are members that
        // read a value, not storage (P4_16 §8.18); p4c's stack2: "not a
        // left-value".
        if !names_storage(&x) {
            if let Some(index) = self.run_time_array_index(e) {
                self.unsupported(
                    index,
                    "run-time indices into arrays of scalars other than in reads and in `=` \
                     and `op=` assignments to the element",
                );
                return None;
            }
            self.error_label(
                codes::NOT_LVALUE,
                e.span,
                "this expression cannot be assigned to: it reads a value, it names no storage",
                "not an l-value",
            );
            return None;
        }
        Some(x)
    }

    /// The argument of an `out` (`is_out`) or `inout` parameter of type
    /// `ty`: `_` only for `out`.
    pub(crate) fn directed_arg(&mut self, e: &ast::Expr, is_out: bool, ty: &Ty) -> Option<Expr> {
        if is_out {
            self.out_arg(e, Some(ty))
        } else if matches!(e.kind, ast::ExprKind::DontCare) {
            self.error_label(
                codes::NOT_LVALUE,
                e.span,
                "`_` may only be passed to an `out` parameter",
                "an `inout` parameter",
            );
            None
        } else {
            self.lvalue(e)
        }
    }

    /// The argument of an `out` parameter of type `ty` (`None` when the
    /// parameter's type comes from the argument): an l-value, or `_`
    /// (P4_16 §6.8.3, "don't care"), which is bound to a fresh hidden local
    /// whose value is dropped after the call. The local's declaration goes
    /// to `pending_decls`, for the statement checker to put before the
    /// statement that makes the call.
    pub(crate) fn out_arg(&mut self, e: &ast::Expr, ty: Option<&Ty>) -> Option<Expr> {
        if !matches!(e.kind, ast::ExprKind::DontCare) {
            return self.lvalue(e);
        }
        let Some(ty) = ty else {
            self.error_label(
                codes::TYPE_MISMATCH,
                e.span,
                "cannot infer the type of `_` here",
                "give the call a type argument",
            );
            return None;
        };
        let Some(body) = self.body.as_mut() else {
            self.unsupported(
                e.span,
                "`_` arguments outside parser states, actions and apply blocks",
            );
            return None;
        };
        let idx = body.vars.len() as u32;
        body.vars.push(ir::Var {
            name: "dont_care".into(),
            ty: ty.clone(),
            param: None,
        });
        self.pending_decls.push(ir::Stmt::Decl(idx, None));
        Some(mk(
            ExprKind::Var(ir::VarRef::Local(idx)),
            ty.clone(),
            e.span,
        ))
    }

    pub(crate) fn writable(&mut self, e: &ast::Expr) -> bool {
        match &e.kind {
            ast::ExprKind::Name(p) => match self.lookup(p).cloned() {
                Some(Sym::Var(_, _, true, ..)) => true,
                Some(Sym::Var(_, _, false, ..)) => {
                    self.error_label(
                        codes::NOT_LVALUE,
                        e.span,
                        format!(
                            "cannot assign to `{}`: it is an `in` parameter",
                            p.ident.name
                        ),
                        "read-only",
                    );
                    false
                }
                Some(Sym::Const(..) | Sym::IntConst(_)) => {
                    self.error_label(
                        codes::NOT_LVALUE,
                        e.span,
                        format!("cannot assign to constant `{}`", p.ident.name),
                        "constant",
                    );
                    false
                }
                None => {
                    self.error_label(
                        codes::UNKNOWN_NAME,
                        e.span,
                        format!("cannot find `{}` in this scope", p.ident.name),
                        "not declared",
                    );
                    false
                }
                Some(_) => {
                    self.error(
                        codes::NOT_LVALUE,
                        e.span,
                        format!("cannot assign to `{}`", p.ident.name),
                    );
                    false
                }
            },
            ast::ExprKind::Member { base, .. }
            | ast::ExprKind::Index { base, .. }
            | ast::ExprKind::Slice { base, .. } => self.writable(base),
            _ => {
                self.error_label(
                    codes::NOT_LVALUE,
                    e.span,
                    "this expression cannot be assigned to",
                    "not an l-value",
                );
                false
            }
        }
    }

    // ----------------------------------------------------------------- calls
    /// Puts `args` in parameter order (P4_16 §6.8.2: all named or all
    /// positional) and fills parameters left out from their defaults
    /// (§6.8.3). A count mismatch it cannot resolve is left for the caller
    /// to report with its own message; `None` after a reported error.
    pub(crate) fn bind_args(
        &mut self,
        what: &str,
        params: &[ParamSpec],
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Vec<ast::Expr>> {
        let named = args.iter().filter(|a| a.name.is_some()).count();
        if named == 0 {
            let mut out: Vec<ast::Expr> = args.iter().map(|a| a.value.clone()).collect();
            if out.len() < params.len() && params[out.len()..].iter().all(|p| p.default.is_some()) {
                out.extend(params[out.len()..].iter().filter_map(|p| p.default.clone()));
            }
            return Some(out);
        }
        if named != args.len() {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!("the arguments of {what} must be all named or all positional"),
                "mixed arguments",
            );
            return None;
        }
        let mut slots: Vec<Option<ast::Expr>> = vec![None; params.len()];
        for a in args {
            let Some(n) = &a.name else { continue };
            match params.iter().position(|p| p.name == n.name) {
                Some(i) if slots[i].is_none() => slots[i] = Some(a.value.clone()),
                Some(_) => {
                    self.error_label(
                        codes::ARG_COUNT,
                        n.span,
                        format!("argument `{}` is given twice", n.name),
                        "again here",
                    );
                    return None;
                }
                None => {
                    self.error_label(
                        codes::ARG_COUNT,
                        n.span,
                        format!("{what} has no parameter `{}`", n.name),
                        "no such parameter",
                    );
                    return None;
                }
            }
        }
        // `@optional` parameters left out after the last one given: the
        // call binds to the shorter signature (see `user_externs`).
        let given = slots
            .iter()
            .zip(params)
            .rposition(|(s, p)| s.is_some() || p.default.is_some())
            .map_or(0, |i| i + 1);
        let mut out = Vec::new();
        for (i, (p, slot)) in params.iter().zip(slots).enumerate() {
            if i >= given && p.optional {
                continue;
            }
            match slot.or_else(|| p.default.clone()) {
                Some(e) => out.push(e),
                None => {
                    self.error_label(
                        codes::ARG_COUNT,
                        span,
                        format!("{what} needs an argument for `{}`", p.name),
                        "argument missing",
                    );
                    return None;
                }
            }
        }
        Some(out)
    }

    /// The parameters a call of `callee` binds its arguments to, when known.
    /// `callee_sym` is what the callee's name resolved to, an overload
    /// already picked ([`Checker::pick_overload`]).
    fn callee_params(
        &self,
        callee: &ast::Expr,
        callee_sym: Option<&Sym>,
        args: &[ast::Argument],
    ) -> Option<Vec<ParamSpec>> {
        let names: Vec<Option<&str>> = args
            .iter()
            .map(|a| a.name.as_ref().map(|n| n.name.as_str()))
            .collect();
        let from_sig = |s: &crate::v1model::Signature| {
            ParamSpec::named(s.params.iter().map(|p| p.name.to_string()))
        };
        match &callee.kind {
            ast::ExprKind::Name(_) => match callee_sym? {
                Sym::Action(a) => self.action_params.get(&a.index()).cloned(),
                Sym::Function(f) => self.function_params.get(&f.index()).cloned(),
                Sym::GenericFunction(n) => self
                    .generic_fns
                    .get(n)
                    .map(|(d, _)| ParamSpec::of(&d.params)),
                Sym::ExternDecl(name) => {
                    crate::v1model::overload(crate::v1model::functions(name), args.len(), &names)
                        .map(from_sig)
                        .or_else(|| self.user_function_params(name, args))
                }
                _ => None,
            },
            ast::ExprKind::Member { base, member } => {
                let ast::ExprKind::Name(p) = &base.kind else {
                    return None;
                };
                let object = match self.lookup(p)? {
                    Sym::Packet(false) => "packet_in",
                    Sym::Packet(true) => "packet_out",
                    Sym::Extern(i) => {
                        let kind = self.body_extern(*i)?.kind;
                        if let ir::ExternKind::User { decl, .. } = kind {
                            return self.user_method_params(decl, &member.name, args);
                        }
                        kind.type_name()
                    }
                    // A top-level instance used in a parser or function
                    // (declared there at the call): a v1model object's
                    // parameter names; a user extern's arguments bind by
                    // position until its instance is declared.
                    Sym::GlobalExtern => {
                        let g = self
                            .global_externs
                            .iter()
                            .find(|g| g.name.name == p.ident.name)?;
                        let ast::TypeKind::Named { name, .. } = &g.ty.kind else {
                            return None;
                        };
                        crate::v1model::object(&name.ident.name)?.name
                    }
                    Sym::SubControl(i) if member.name == "apply" => {
                        let ctl = self.body.as_ref()?.control?;
                        let sub = self.prog.controls[ctl].instances.get(*i as usize)?.1;
                        return Some(ParamSpec::named(
                            self.prog.controls[sub]
                                .params
                                .iter()
                                .map(|p| p.name.clone()),
                        ));
                    }
                    Sym::SubParser(h) if member.name == "apply" => {
                        return Some(ParamSpec::named(
                            self.prog.parsers[*h].params.iter().map(|p| p.name.clone()),
                        ));
                    }
                    _ => return None,
                };
                crate::v1model::overload(
                    crate::v1model::methods(object, &member.name),
                    args.len(),
                    &names,
                )
                .map(from_sig)
            }
            _ => None,
        }
    }

    /// An `apply` of a parser or control with `params` given `got`
    /// positional arguments: the parameters left out at the end must all
    /// have a default value (P4_16 §6.8.3).
    pub(super) fn apply_arg_count(
        &mut self,
        span: Span,
        params: &[ir::BlockParam],
        got: usize,
    ) -> bool {
        if got < params.len() && params[got..].iter().all(|p| p.default.is_some()) {
            return true;
        }
        self.arg_count(span, "apply", params.len(), got)
    }

    pub(crate) fn arg_count(&mut self, span: Span, what: &str, want: usize, got: usize) -> bool {
        if want != got {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "{what} takes {want} argument{}, {got} given",
                    if want == 1 { "" } else { "s" }
                ),
                "wrong number of arguments",
            );
            return false;
        }
        true
    }

    pub(super) fn void_call(c: Call, span: Span) -> Expr {
        mk(ExprKind::Call(Box::new(c)), Ty::Void, span)
    }

    pub(crate) fn call(
        &mut self,
        callee: &ast::Expr,
        type_args: &[ast::Type],
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Expr> {
        // Type arguments that are all don't-care (`f<_, _>(x)`) leave every
        // one to inference from the arguments, as if none were written; a
        // mix of given and `_` is not supported yet (`Checker::ty`).
        let type_args = match type_args {
            [_, ..]
                if type_args
                    .iter()
                    .all(|t| matches!(t.kind, ast::TypeKind::DontCare)) =>
            {
                &[]
            }
            _ => type_args,
        };
        // The symbol a called name stands for, its overload picked first
        // (by the number and names of the arguments).
        let callee_sym = match &callee.kind {
            ast::ExprKind::Name(p) => match self.lookup(p).cloned() {
                Some(Sym::Overloaded(candidates)) => {
                    Some(self.pick_overload(&p.ident.name, &candidates, args, span)?)
                }
                other => other,
            },
            _ => None,
        };
        let bound;
        let args: Vec<&ast::Expr> = match self.callee_params(callee, callee_sym.as_ref(), args) {
            Some(params) => {
                let what = format!("`{}`", crate::check::blocks::expr_text(callee));
                bound = self.bind_args(&what, &params, args, span)?;
                self.bound_param_names = args
                    .iter()
                    .any(|a| a.name.is_some())
                    .then(|| params.iter().map(|p| p.name.clone()).collect());
                bound.iter().collect()
            }
            None => {
                if let Some(n) = args.iter().find_map(|a| a.name.as_ref()) {
                    self.error_label(
                        codes::ARG_COUNT,
                        n.span,
                        "this call does not take named arguments",
                        "named argument",
                    );
                    return None;
                }
                self.bound_param_names = None;
                args.iter().map(|a| &a.value).collect()
            }
        };
        match &callee.kind {
            ast::ExprKind::Name(p) => match callee_sym {
                Some(Sym::Action(a)) => {
                    // Actions are never generic (P4_16 §14.1; p4c's issue3656).
                    let what = format!("action `{}`", p.ident.name);
                    if !self.no_type_args(type_args, &what, span) {
                        return None;
                    }
                    self.action_call(a, &args, span)
                }
                Some(Sym::GenericFunction(n)) => {
                    let f = self.instantiate_generic_fn(&n, type_args, &args, span)?;
                    // The values for directionless `int` parameters picked
                    // the instance; the other arguments are passed to it.
                    let positions = self
                        .generic_fns
                        .get(&n)
                        .and_then(|(d, _)| crate::check::blocks::split_int_params(&d.params))
                        .map_or_else(Vec::new, |(positions, ..)| positions);
                    let passed: Vec<&ast::Expr> = args
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !positions.contains(i))
                        .map(|(_, a)| *a)
                        .collect();
                    self.function_call(f, &passed, span)
                }
                Some(Sym::Function(f)) => {
                    if !type_args.is_empty() {
                        self.error(
                            codes::ARG_COUNT,
                            span,
                            format!("function `{}` takes no type arguments", p.ident.name),
                        );
                        return None;
                    }
                    self.function_call(f, &args, span)
                }
                Some(Sym::ExternDecl(name)) => self.extern_fn(&name, type_args, &args, span),
                Some(_) => {
                    self.error(
                        codes::WRONG_KIND,
                        callee.span,
                        format!("`{}` cannot be called", p.ident.name),
                    );
                    None
                }
                None => {
                    self.error_label(
                        codes::UNKNOWN_NAME,
                        callee.span,
                        format!("cannot find `{}` in this scope", p.ident.name),
                        "not declared",
                    );
                    None
                }
            },
            ast::ExprKind::Member { base, member } => {
                self.method(base, member, type_args, &args, span)
            }
            _ => {
                self.error(codes::WRONG_KIND, callee.span, "this cannot be called");
                None
            }
        }
    }

    /// A call of (non-generic or instantiated) function `f`.
    fn function_call(
        &mut self,
        f: ir::Handle<ir::Function>,
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let func = self.prog.functions[f].clone();
        if !self.arg_count(
            span,
            &format!("function `{}`", func.name),
            func.n_params as usize,
            args.len(),
        ) {
            return None;
        }
        let specs = self.function_params.get(&f.index()).cloned();
        let mut v = Vec::new();
        for (i, (prm, a)) in func.vars.iter().zip(args).enumerate() {
            let x = if prm.param != Some(ir::Direction::In) {
                let l = self.directed_arg(a, prm.param == Some(ir::Direction::Out), &prm.ty)?;
                self.coerce(TE::Typed(l), &prm.ty, a.span)?
            } else {
                self.expr(a, Some(&prm.ty))?
            };
            self.check_arg_nominal(specs.as_deref(), i, &x, a.span);
            v.push(x);
        }
        if let Some(n) = self.function_ret_nominal.get(&f.index()).cloned() {
            self.expr_nominal.insert(span, n);
        }
        Some(mk(
            ExprKind::Call(Box::new(Call::Function(f, v))),
            func.ret.clone(),
            span,
        ))
    }

    fn action_call(
        &mut self,
        a: ir::Handle<ir::Action>,
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        self.facts.called_actions.insert(a.index());
        // The callee's meter reads count as the caller's (p4c inlines it).
        if let Some(reads) = self.facts.meter_reads.get(&a.index()).cloned() {
            self.facts.pending_meter_reads.extend(reads);
        }
        if let Some(counts) = self.facts.counter_counts.get(&a.index()).cloned() {
            self.facts.pending_counter_counts.extend(counts);
        }
        let ctl = self.body.as_ref().and_then(|b| b.control);
        self.check_action_use(a, ctl, span);
        match self.body.as_ref().map(|b| b.kind) {
            Some(BodyKind::Apply | BodyKind::Action) => {}
            _ => {
                self.error(
                    codes::NOT_ALLOWED_HERE,
                    span,
                    "actions may only be called from controls and actions",
                );
                return None;
            }
        }
        let act = self.prog.actions[a].clone();
        if !self.arg_count(
            span,
            &format!("action `{}`", act.name),
            act.n_params as usize,
            args.len(),
        ) {
            return None;
        }
        let specs = self.action_params.get(&a.index()).cloned();
        let mut v = Vec::new();
        for (i, (prm, a)) in act.vars.iter().zip(args).enumerate() {
            let x = if matches!(prm.param, Some(ir::Direction::Out | ir::Direction::InOut)) {
                let l = self.directed_arg(a, prm.param == Some(ir::Direction::Out), &prm.ty)?;
                self.coerce(TE::Typed(l), &prm.ty, a.span)?
            } else {
                self.expr(a, Some(&prm.ty))?
            };
            self.check_arg_nominal(specs.as_deref(), i, &x, a.span);
            v.push(x);
        }
        Some(Self::void_call(Call::Action(a, v), span))
    }

    /// P4_16 §7.6: an argument for a parameter of a `type`-declared type
    /// is of that type, and a value of one is not passed to a parameter of
    /// another (its underlying type included) without a cast.
    fn check_arg_nominal(&mut self, specs: Option<&[ParamSpec]>, i: usize, x: &Expr, span: Span) {
        if let Some(Some(n)) = specs.and_then(|s| s.get(i)).map(|p| p.nominal.clone()) {
            self.check_nominal_against(&n, x, span, "pass");
        }
    }
}

/// Whether `e` names storage an assignment can write: a variable, and
/// fields, elements and slices of one.
pub(super) fn names_storage(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(_) => true,
        ExprKind::Member(b, _)
        | ExprKind::Index(b, _)
        | ExprKind::Slice(b, ..)
        | ExprKind::StackLast(b)
        | ExprKind::StackNext(b) => names_storage(b),
        _ => false,
    }
}
