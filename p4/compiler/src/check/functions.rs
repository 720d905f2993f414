//! Functions: declarations, bodies and whether they always return, generic
//! functions and `list<T>` parameters instantiated per call (P4_16 spec §10).

use super::{Body, BodyKind, Checker, Sym, blocks, codes, expr};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Handle, Ty};

impl Checker {
    pub(crate) fn function_decl(&mut self, f: &ast::FunctionDecl) {
        let has_list_params = f.params.iter().any(|p| is_list_type(&p.ty));
        let has_int_params = blocks::split_int_params(&f.params).is_some();
        if !f.type_params.is_empty() || has_list_params || has_int_params {
            // Monomorphised: checked once per distinct list of type
            // arguments and of values for its directionless `int`
            // parameters (P4_16 §6.8: each call passes a compile-time known
            // value), at the calls ([`Self::instantiate_generic_fn`]), in
            // the scopes of its declaration. A `list<T>` parameter takes
            // its length from its argument (P4_16 §7.2.10), so a function
            // with one is instantiated per list of lengths too.
            let before = self.diags.len();
            self.check_param_types(&f.params, Some(&f.return_type), &[&f.type_params]);
            // An overload of a generic function of the same name is kept
            // under a key of its own (its arity tells them apart).
            let mut key = f.name.name.clone();
            if self.generic_fns.contains_key(&key) {
                key = format!("{key}/{}", f.params.len());
            }
            self.generic_fns
                .insert(key.clone(), (f.clone(), self.scopes.clone()));
            // A list parameter's length, unknown before a call, is no
            // type a trial could stand in for (`l[2]` is valid or not by
            // it): such a function is checked at its calls only.
            if self.diags.len() == before && !has_list_params {
                self.trial_generic_fn(f, &key);
            }
            self.declare(&f.name, Sym::GenericFunction(key));
            return;
        }
        if let Some(h) = self.function_body(f) {
            self.declare(&f.name, Sym::Function(h));
        }
    }

    /// Type-checks generic function `f` at its declaration, as p4c does,
    /// with each type parameter bound to an opaque type (an empty struct of
    /// its name): only what any type allows (copying, passing on) checks.
    /// The IR is thrown away; the diagnostics are reported only if the
    /// function is never called (a call checks it with its real types).
    fn trial_generic_fn(&mut self, f: &ast::FunctionDecl, key: &str) {
        let before = self.diags.len();
        self.discarding_changes(|c| {
            c.push_scope();
            c.declare_opaque_types(&f.type_params);
            // Each `int` parameter a placeholder value, as a block's
            // constructor parameter gets in its trial.
            let placeholders = blocks::split_int_params(&f.params)
                .map_or_else(Vec::new, |(_, ints, _)| vec![1; ints.len()]);
            let f = c.bind_int_params(f, &placeholders);
            c.function_body(&f);
            c.pop_scope();
        });
        let diags = self.diags.split_off(before);
        self.ctor_trials.push((key.to_string(), diags));
    }

    /// Function `f` without its directionless `int` parameters, each
    /// declared in the innermost scope as the `int` constant `values` gives
    /// it, in order: the body reads it as one (`bit<k>`, `x + n`).
    fn bind_int_params(&mut self, f: &ast::FunctionDecl, values: &[i128]) -> ast::FunctionDecl {
        let mut f = f.clone();
        if let Some((_, ints, rest)) = blocks::split_int_params(&f.params) {
            for (p, v) in ints.iter().zip(values) {
                self.declare(&p.name, Sym::IntConst(*v));
            }
            f.params = rest;
        }
        f
    }

    /// The instance of generic function `name` for the type arguments of a
    /// call: `type_args` if given, else inferred from the arguments passed
    /// to parameters whose type is a bare type parameter (`in T x`).
    pub(crate) fn instantiate_generic_fn(
        &mut self,
        name: &str,
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Handle<ir::Function>> {
        self.ctor_used.insert(name.to_string());
        let (decl, scopes) = self.generic_fns.get(name)?.clone();
        let what = format!("function `{}`", decl.name.name);
        let (tys, nominals) = self.type_args_and_nominals_of_call(
            &what,
            &decl.name.name,
            &decl.type_params,
            &decl.params,
            type_args,
            args,
            span,
        )?;
        let lists = self.list_args_of_call(&decl, &tys, args)?;
        let mut int_values = Vec::new();
        if let Some((positions, ints, _)) = blocks::split_int_params(&decl.params) {
            if !self.arg_count(span, &what, decl.params.len(), args.len()) {
                return None;
            }
            for (i, p) in positions.iter().zip(&ints) {
                int_values.push(self.int_arg(p, args[*i], "parameter")?);
            }
        }
        let mut key = (
            name.to_string(),
            tys.clone(),
            nominals.clone(),
            int_values.clone(),
        );
        key.1.extend(lists.iter().map(|(_, ty)| ty.clone()));
        key.2.extend(lists.iter().map(|_| None));
        if let Some(h) = self.generic_fn_cache.get(&key) {
            return Some(*h);
        }
        let decl = with_list_params_named(decl);
        let saved_scopes = std::mem::replace(&mut self.scopes, scopes);
        self.push_scope();
        for (t, ty) in decl.type_params.iter().zip(tys) {
            self.declare(t, Sym::Type(ty));
        }
        for (t, ty) in lists {
            self.declare(&t, Sym::Type(ty));
        }
        let decl = self.bind_int_params(&decl, &int_values);
        // P4_16 §7.6: a type parameter bound to a `type`-declared type
        // stands for that type in the signature and the body (`T id<T>(in
        // T x)` called with a `Port_t` takes and returns a `Port_t`); the
        // parameter's name hides any `type` of the same name meanwhile.
        let mut hidden = Vec::new();
        for (t, n) in decl.type_params.iter().zip(&nominals) {
            let old = match n {
                Some(n) => self.nominal_types.insert(t.name.clone(), n.clone()),
                None => self.nominal_types.remove(&t.name),
            };
            hidden.push((t.name.clone(), old));
        }
        let h = self.function_body(&decl);
        for (t, old) in hidden.into_iter().rev() {
            match old {
                Some(n) => self.nominal_types.insert(t, n),
                None => self.nominal_types.remove(&t),
            };
        }
        self.scopes = saved_scopes;
        if let Some(h) = h {
            self.generic_fn_cache.insert(key, h);
        }
        h
    }

    /// The tuple type each `list<T>` parameter of function `decl` takes
    /// at a call (its argument's: a list expression of `T`s, or a list
    /// value), with the name [`with_list_params_named`] gives that type;
    /// `tys` are the call's type arguments, which `T` may name. `None`
    /// after an error.
    fn list_args_of_call(
        &mut self,
        decl: &ast::FunctionDecl,
        tys: &[Ty],
        args: &[&ast::Expr],
    ) -> Option<Vec<(ast::Ident, Ty)>> {
        let mut lists = Vec::new();
        self.push_scope();
        for (t, ty) in decl.type_params.iter().zip(tys) {
            self.declare(t, Sym::Type(ty.clone()));
        }
        for (p, a) in decl.params.iter().zip(args) {
            let ast::TypeKind::List(elem) = &p.ty.kind else {
                continue;
            };
            let ty = match p.direction {
                ast::Direction::Out | ast::Direction::InOut => {
                    let Some(x) = self.lvalue(a) else { break };
                    if !self.is_list_of(elem, &x.ty) {
                        let found = self.ty_name(&x.ty);
                        self.error_label(
                            codes::TYPE_MISMATCH,
                            a.span,
                            format!(
                                "this {found} is not a list of the element type of `{}`",
                                p.name.name
                            ),
                            "wrong element type",
                        );
                        break;
                    }
                    x.ty
                }
                _ => match self.list_decl(elem, Some(a), a.span) {
                    Some((ty, _)) => ty,
                    None => break,
                },
            };
            lists.push((list_param_type_name(&p.name), ty));
        }
        self.pop_scope();
        let n = decl.params.iter().filter(|p| is_list_type(&p.ty)).count();
        (lists.len() == n).then_some(lists)
    }

    /// The type of the first typed element of list argument `a` (a list
    /// expression or a list value), which a `list<T>` parameter takes as
    /// its `T`.
    fn list_element_type(&mut self, a: &ast::Expr) -> Option<Ty> {
        if let ast::ExprKind::List(items) = &a.kind {
            return items.iter().find_map(|i| match self.expr_any(i)? {
                expr::TE::Typed(x) => Some(x.ty),
                expr::TE::Inf(_) => None,
            });
        }
        match self.expr(a, None)?.ty {
            Ty::Tuple(items) => items.first().cloned(),
            _ => None,
        }
    }

    /// The type arguments of a call of a generic function or extern
    /// (`what`, called as `name`): the ones given, or each inferred from the
    /// first argument passed to a parameter of exactly that type.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn type_args_of_call(
        &mut self,
        what: &str,
        name: &str,
        type_params: &[ast::Ident],
        params: &[ast::Param],
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Vec<Ty>> {
        self.type_args_and_nominals_of_call(what, name, type_params, params, type_args, args, span)
            .map(|(tys, _)| tys)
    }

    /// [`Self::type_args_of_call`], with the `type`-declared type each type
    /// argument is (written, or that of the argument it was inferred from).
    #[allow(clippy::too_many_arguments)]
    fn type_args_and_nominals_of_call(
        &mut self,
        what: &str,
        name: &str,
        type_params: &[ast::Ident],
        params: &[ast::Param],
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<(Vec<Ty>, Vec<Option<String>>)> {
        let n = type_params.len();
        if !type_args.is_empty() {
            if type_args.len() != n {
                self.error_label(
                    codes::ARG_COUNT,
                    span,
                    format!(
                        "{what} takes {n} type argument(s), {} given",
                        type_args.len()
                    ),
                    "wrong number of type arguments",
                );
                return None;
            }
            let nominals = type_args.iter().map(|t| self.nominal_of_type(t)).collect();
            let tys = type_args
                .iter()
                .map(|t| self.ty(t))
                .collect::<Option<_>>()?;
            return Some((tys, nominals));
        }
        let mut inferred: Vec<Option<Ty>> = vec![None; n];
        let mut nominals: Vec<Option<String>> = vec![None; n];
        for (p, a) in params.iter().zip(args) {
            // `list<T> l`: T is the type of the list's elements.
            let (ty, in_list) = match &p.ty.kind {
                ast::TypeKind::List(elem) => (&**elem, true),
                _ => (&p.ty, false),
            };
            let ast::TypeKind::Named {
                name: tn,
                args: targs,
            } = &ty.kind
            else {
                continue;
            };
            let Some(k) = type_params.iter().position(|t| t.name == tn.ident.name) else {
                continue;
            };
            if !targs.is_empty() || tn.top_level || inferred[k].is_some() {
                continue;
            }
            if in_list {
                inferred[k] = self.list_element_type(a);
                continue;
            }
            let x = match p.direction {
                ast::Direction::Out | ast::Direction::InOut => self.lvalue(a)?,
                _ => self.expr(a, None)?,
            };
            nominals[k] = self.nominal_field(&x).flatten();
            inferred[k] = Some(x.ty);
        }
        let mut tys = Vec::new();
        for (t, ty) in type_params.iter().zip(inferred) {
            match ty {
                Some(ty) => tys.push(ty),
                None => {
                    // The example gives as many type arguments as it takes.
                    let example = vec!["bit<8>"; n].join(", ");
                    self.error_label(
                        codes::TYPE_MISMATCH,
                        span,
                        format!(
                            "cannot infer type argument `{}` of {what}; give it, e.g. `{name}<{example}>(...)`",
                            t.name
                        ),
                        "type arguments needed",
                    );
                    return None;
                }
            }
        }
        Some((tys, nominals))
    }

    /// Checks function `f` (type parameters, if any, already bound) into a
    /// new IR function.
    fn function_body(&mut self, f: &ast::FunctionDecl) -> Option<Handle<ir::Function>> {
        let ret = match &f.return_type.kind {
            ast::TypeKind::Void => Ty::Void,
            _ => self.storable_ty(&f.return_type, "a function's result")?,
        };
        self.push_scope();
        let mut vars = Vec::new();
        for p in &f.params {
            if matches!(p.ty.kind, ast::TypeKind::Int) {
                // Directionless ones are bound per call before the body is
                // checked ([`Self::bind_int_params`]).
                self.error_label(
                    codes::TYPE_MISMATCH,
                    p.span,
                    format!(
                        "parameter `{}` is an `int`: it must be directionless, and each call \
                         passes a compile-time known value (P4_16 §6.8)",
                        p.name.name
                    ),
                    "remove the direction",
                );
                continue;
            }
            let Some(ty) = self.storable_ty(&p.ty, "a function parameter") else {
                continue;
            };
            if let Some(d) = &p.default {
                self.default_value(d, &ty);
            }
            self.declare_param_var(&mut vars, p, ty);
        }
        let n_params = vars.len() as u32;
        let saved = self.body.replace(Body {
            kind: BodyKind::Function,
            vars,
            ret: ret.clone(),
            control: None,
            loops: 0,
            externs: Vec::new(),
        });
        let ret_nominal = Some(self.nominal_of_type(&f.return_type));
        let saved_nominal = std::mem::replace(&mut self.return_nominal, ret_nominal);
        let body = self.block(&f.body);
        self.return_nominal = saved_nominal;
        let b = std::mem::replace(&mut self.body, saved).expect("body set above");
        self.pop_scope();
        if ret != Ty::Void && !always_leaves(&body, &self.prog) {
            self.error_label(
                codes::MISSING_RETURN,
                f.name.span,
                format!(
                    "function `{}` does not return a value on all paths",
                    f.name.name
                ),
                "may end without `return`",
            );
        }
        let (externs, names): (Vec<_>, Vec<_>) =
            b.externs.into_iter().map(|e| (e.inst, e.name)).unzip();
        let h = self.prog.functions.append(
            ir::Function {
                name: f.name.name.clone(),
                ret,
                vars: b.vars,
                n_params,
                body,
                externs,
            },
            f.span,
        );
        for (i, n) in names.into_iter().enumerate() {
            self.facts
                .function_extern_names
                .insert((h.index(), i as u32), n);
        }
        let params = self.param_specs(&f.params);
        self.function_params.insert(h.index(), params);
        let ret_nominal = self.nominal_of_type(&f.return_type);
        self.function_ret_nominal.insert(h.index(), ret_nominal);
        Some(h)
    }
}

/// Whether every path through `b` ends in `return` or `exit` (p4c rejects a
/// function with a result that may fall off its end). Conservative in the
/// accepting direction: loops never count, a `switch` counts when it has a
/// `default` or names every member of a plain enum.
fn always_leaves(b: &ir::Block, prog: &ir::Program) -> bool {
    b.iter().any(|s| match s {
        ir::Stmt::Return(_) | ir::Stmt::Exit => true,
        ir::Stmt::Block(b) => always_leaves(b, prog),
        ir::Stmt::If(c, t, e) => match c.kind {
            ir::ExprKind::Bool(true) => always_leaves(t, prog),
            ir::ExprKind::Bool(false) => e.as_ref().is_some_and(|e| always_leaves(e, prog)),
            _ => always_leaves(t, prog) && e.as_ref().is_some_and(|e| always_leaves(e, prog)),
        },
        ir::Stmt::Switch(x, cases) => {
            let complete = cases.iter().any(|c| c.is_default)
                || match &x.ty {
                    Ty::Enum(e) => {
                        let labels: usize = cases.iter().map(|c| c.labels.len()).sum();
                        labels >= prog.enums[*e].members.len()
                    }
                    _ => false,
                };
            complete
                && cases
                    .iter()
                    .filter_map(|c| c.body.as_ref())
                    .all(|b| always_leaves(b, prog))
        }
        _ => false,
    })
}

/// Whether `t` is a `list<..>` type.
fn is_list_type(t: &ast::Type) -> bool {
    matches!(t.kind, ast::TypeKind::List(_))
}

/// The name a `list<T>` parameter's type has in an instance of its
/// function: not a P4 identifier (`#`), so no program name clashes.
fn list_param_type_name(param: &ast::Ident) -> ast::Ident {
    ast::Ident {
        name: format!("list#{}", param.name),
        span: param.span,
    }
}

/// `decl` with each `list<T>` parameter's type replaced by the name
/// [`list_param_type_name`] gives it, which an instance binds to the tuple
/// its call passes.
fn with_list_params_named(mut decl: ast::FunctionDecl) -> ast::FunctionDecl {
    for p in &mut decl.params {
        if is_list_type(&p.ty) {
            let ident = list_param_type_name(&p.name);
            p.ty.kind = ast::TypeKind::Named {
                name: ast::PathName {
                    top_level: false,
                    span: ident.span,
                    ident,
                },
                args: Vec::new(),
            };
        }
    }
    decl
}
