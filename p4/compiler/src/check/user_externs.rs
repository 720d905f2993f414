//! User-defined extern object types and extern functions (P4_16 §7.2.12):
//! declarations, instances and calls, checked like v1model's own externs.
//!
//! A user extern is any `extern` declaration that `crate::v1model` does not
//! know. Its signature becomes an [`ir::UserExtern`] / [`ir::UserFn`]; an
//! instance becomes an [`ir::ExternKind::User`] with its constructor
//! arguments folded; a method or function call becomes a
//! [`Builtin::UserMethod`] / [`Builtin::UserFunction`] whose arguments are
//! checked against the declared types and directions (`out`/`inout` take
//! l-values, copied in and out as for functions, §6.8). The behaviour is
//! supplied by the target: the Rust back end emits one trait per object
//! type and one for the functions (`back::rust::user_externs`).
//!
//! Generic externs are monomorphised: a generic extern type once per list
//! of type arguments it is instantiated with (`Stack<bit<8>>(4) s;`), a
//! generic function or method once per list of type arguments a call gives
//! or infers from its arguments; each copy is a separate [`ir::UserExtern`]
//! / [`ir::UserFn`] carrying its `type_args`.
//!
//! A call may leave out trailing `@optional` parameters:
//! it binds to a copy of the method or function without them, which the
//! back end names like an overload by arity. A list argument `{a, b}` to a
//! generic `in T` parameter makes T the list's tuple type, passed as the
//! struct made up for it (`tuple_N`, as digest data). Constructor
//! arguments are compile-time constants of a scalar type, enums, `error`
//! and `match_kind` included (as the codes methods see), tuples of those
//! (as their made-up struct), and lists (`list<T>` of scalars, tuples of
//! scalars or structs of scalars, a slice on the Rust side). Constructors,
//! methods and functions overload by arity, then by parameter names
//! (`check::overloads`; constructors are `new`, then `new_N`).
//!
//! Still refused, each with a `P4E1060` diagnostic naming the extern where
//! it is used (an unused declaration is accepted, as p4c does): abstract
//! methods; parameter types other than scalars, headers, structs and
//! tuples of those (and constructor parameters other than the above);
//! return types other than scalars.

use super::{Checker, ParamSpec, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Builtin, Call, ConstValue, Expr, ExprKind, Ty};

/// What [`Checker::user_extern_type`] found.
pub(crate) enum UserType {
    /// Index into `Program::user_externs`.
    Found(u32),
    /// Not a user extern type the compiler takes (the caller reports it).
    NotUser,
    /// An error was reported.
    Reported,
}

impl Checker {
    /// Records a user extern object type (its signature was name-checked
    /// by the caller), or why it cannot be taken.
    pub(super) fn user_extern_decl(&mut self, e: &ast::ExternDecl) {
        self.user_extern_asts
            .insert(e.name.name.clone(), (e.clone(), self.scopes.clone()));
        self.trial_extern_defaults(e);
        if !e.type_params.is_empty() {
            // Checked per list of type arguments, where instantiated.
            return;
        }
        let before = self.diags.len();
        let r = self.user_extern_sig(e, &[]);
        if let Some(u) = self.settle_decl(&e.name.name, before, r) {
            self.prog.user_externs.push(u);
        }
    }

    /// Checks the default values of `e`'s constructor and method
    /// parameters at its declaration, as p4c does, with its type
    /// parameters (and its methods') opaque ([`Checker::opaque_types`]).
    /// The diagnostics wait in `ctor_trials`: they are reported only if
    /// nothing instantiates `e`, as an instance binds a default where it
    /// is used and checks it there.
    fn trial_extern_defaults(&mut self, e: &ast::ExternDecl) {
        let params = |m: &ast::ExternMember| match m {
            ast::ExternMember::Constructor { params, .. } => params.clone(),
            ast::ExternMember::Method(f) => f.params.clone(),
        };
        if !e
            .members
            .iter()
            .any(|m| params(m).iter().any(|p| p.default.is_some()))
        {
            return;
        }
        let before = self.diags.len();
        self.discarding_changes(|c| {
            c.push_scope();
            c.declare_opaque_types(&e.type_params);
            for m in &e.members {
                c.push_scope();
                if let ast::ExternMember::Method(f) = m {
                    c.declare_opaque_types(&f.type_params);
                }
                c.ctor_defaults(&params(m));
                c.pop_scope();
            }
            c.pop_scope();
        });
        self.keep_trial(&e.name.name, before);
    }

    /// Keeps a declaration's result: problems in its signature are not
    /// reported here (unknown type names were by the caller) but where the
    /// extern is used, with what went wrong.
    fn settle_decl<T>(&mut self, name: &str, before: usize, r: Result<T, String>) -> Option<T> {
        let first = self.diags.get(before).map(|d| d.message.clone());
        self.diags.truncate(before);
        let why = match (r, first) {
            (Ok(t), None) => return Some(t),
            (Err(why), _) if !why.is_empty() => why,
            (_, first) => format!(
                "the extern `{name}` ({})",
                first.unwrap_or_else(|| "its signature".into())
            ),
        };
        self.refused_user_externs.insert(name.to_string(), why);
        None
    }

    /// The signature of extern type `e` (its type parameters, if any,
    /// bound to `type_args` in scope); generic methods are left for their
    /// calls.
    fn user_extern_sig(
        &mut self,
        e: &ast::ExternDecl,
        type_args: &[Ty],
    ) -> Result<ir::UserExtern, String> {
        let name = &e.name.name;
        let mut ctors: Vec<Vec<ir::UserParam>> = Vec::new();
        let mut methods = Vec::new();
        for m in &e.members {
            match m {
                ast::ExternMember::Constructor { params, .. } => {
                    // Constructors overload by arity (as methods do; the
                    // checker refused two of one arity at the declaration).
                    ctors.push(self.user_params(name, params, true)?);
                }
                ast::ExternMember::Method(f) => {
                    let what = format!("{name}.{}", f.name.name);
                    if f.is_abstract {
                        return Err(format!("abstract methods (`{what}`)"));
                    }
                    if f.type_params.is_empty() {
                        methods.push(self.user_fn(&what, f, Vec::new())?);
                    }
                }
            }
        }
        Ok(ir::UserExtern {
            name: name.clone(),
            type_args: type_args.to_vec(),
            ctors,
            methods,
            used: false,
            span: e.span,
        })
    }

    /// Records a user extern function (an overload when the name is taken),
    /// or why it cannot be taken.
    pub(super) fn user_function_decl(&mut self, f: &ast::FunctionPrototype) {
        if !f.type_params.is_empty() {
            // Checked per list of type arguments, where called.
            let scopes = self.scopes.clone();
            self.generic_user_fns
                .entry(f.name.name.clone())
                .or_default()
                .push((f.clone(), scopes));
            return;
        }
        let before = self.diags.len();
        let r = self.user_fn(&f.name.name, f, Vec::new());
        if let Some(u) = self.settle_decl(&f.name.name, before, r) {
            self.prog.user_functions.push(u);
        }
    }

    /// The signature of function or method `f` (type parameters bound in
    /// scope to `type_args`).
    fn user_fn(
        &mut self,
        what: &str,
        f: &ast::FunctionPrototype,
        type_args: Vec<Ty>,
    ) -> Result<ir::UserFn, String> {
        let ret = match &f.return_type.kind {
            ast::TypeKind::Void => Ty::Void,
            _ => {
                let t = self.ty(&f.return_type).ok_or_else(String::new)?;
                if !Self::user_scalar(&t) {
                    return Err(format!(
                        "extern return types other than bit<W>, int<W>, bool, enums and error (`{what}`)"
                    ));
                }
                t
            }
        };
        let params = self.user_params(what, &f.params, false)?;
        Ok(ir::UserFn {
            name: f.name.name.clone(),
            type_args,
            params,
            ret,
            used: false,
            span: f.span,
        })
    }

    /// Scalars the Rust side receives as native integers or `bool`.
    fn user_scalar(t: &Ty) -> bool {
        matches!(
            t,
            Ty::Bool | Ty::Bit(_) | Ty::Int(_) | Ty::SerEnum(_) | Ty::Enum(_) | Ty::Error
        )
    }

    fn user_params(
        &mut self,
        what: &str,
        params: &[ast::Param],
        ctor: bool,
    ) -> Result<Vec<ir::UserParam>, String> {
        let mut out = Vec::new();
        for p in params {
            // A constructor's `list<T>` (p4c's list samples) takes a list of
            // T whose length is the argument's.
            let list = match &p.ty.kind {
                ast::TypeKind::List(elem) if ctor => Some(elem),
                ast::TypeKind::List(_) => {
                    return Err(format!("extern parameters of list types (`{what}`)"));
                }
                _ => None,
            };
            if list.is_some_and(|e| matches!(e.kind, ast::TypeKind::List(_))) {
                // p4c's list8 (not a v1model program): the Rust constructor
                // takes a list as a slice of values, and has no nested form.
                return Err(format!(
                    "extern constructor parameters that are lists of lists (`{what}`)"
                ));
            }
            // An `int` constructor parameter: the value comes as an i128.
            let ty = if ctor && matches!(p.ty.kind, ast::TypeKind::Int) {
                Ty::Int(128)
            } else {
                self.ty(list.map_or(&p.ty, |e| &**e))
                    .ok_or_else(String::new)?
            };
            // A tuple (`in T data` given `{a, b}`) travels as the struct
            // made up for its type, as digest data does; so does a
            // constructor's tuple of scalars (p4c's issue3091 gives one a
            // `tuple<match_kind>`).
            let ty = match ty {
                Ty::Tuple(elems)
                    if elems.iter().all(|t| {
                        Self::user_scalar(t) || (!ctor && matches!(t, Ty::Composite(_)))
                    }) =>
                {
                    Ty::Composite(self.tuple_struct(&elems, p.span))
                }
                ty => ty,
            };
            let ok = if ctor {
                // Every scalar the methods take: enums and `error` come as
                // the same `u32` codes (a serializable enum as its value);
                // a list's elements may be structs of scalars too.
                Self::user_scalar(&ty)
                    || self.made_up_tuple(&ty).is_some()
                    || (list.is_some() && self.struct_of_scalars(&ty))
            } else {
                Self::user_scalar(&ty)
                    || matches!(ty, Ty::Composite(c) if self.prog.composites[c].kind != ir::CompositeKind::Union)
            };
            if !ok {
                let allowed = if ctor {
                    "extern constructor parameters other than bit<W>, int<W>, int, bool, enums, error, \
                     match_kind, tuples of those and lists of those or of structs of those"
                } else {
                    "extern parameters other than scalars, headers and structs"
                };
                return Err(format!("{allowed} (`{what}`)"));
            }
            let dir = super::blocks::direction(p.direction);
            if ctor && dir != ir::Direction::In {
                return Err(format!(
                    "extern constructor parameters with a direction (`{what}`)"
                ));
            }
            out.push(ir::UserParam {
                name: p.name.name.clone(),
                dir,
                ty,
                optional: ast::find_annotation(&p.annotations, "optional").is_some(),
                list: list.is_some(),
            });
        }
        Ok(out)
    }

    /// Whether `ty` is a struct whose fields are all scalars.
    fn struct_of_scalars(&self, ty: &Ty) -> bool {
        matches!(ty, Ty::Composite(c)
            if self.prog.composites[*c].kind == ir::CompositeKind::Struct
                && self.prog.composites[*c].fields.iter().all(|f| Self::user_scalar(&f.ty)))
    }

    /// Reports that extern `name` cannot be used, with the reason recorded
    /// at its declaration.
    pub(crate) fn refused_user_extern(&mut self, name: &str, fallback: &str, span: Span) {
        let why = self
            .refused_user_externs
            .get(name)
            .cloned()
            .unwrap_or_else(|| fallback.to_string());
        self.unsupported(span, &why);
    }

    /// Whether the program declares an extern function `name` of its own
    /// (usable or not).
    pub(crate) fn is_user_function(&self, name: &str) -> bool {
        self.prog.user_functions.iter().any(|f| f.name == name)
            || self.generic_user_fns.contains_key(name)
            || self.refused_user_externs.contains_key(name)
    }

    /// Whether `name` is a user extern object type (usable or not).
    pub(crate) fn is_user_extern_type(&self, name: &str) -> bool {
        self.user_extern_asts.contains_key(name)
    }

    /// The constructor of user extern type `name` an instantiation with
    /// `args` calls ([`Checker::pick_constructor`]): its index among the
    /// extern's constructors and its parameters, for binding named
    /// arguments and defaults. `None` if `name` is no user extern type with
    /// a constructor, `Some(None)` after an error.
    pub(crate) fn user_ctor(
        &mut self,
        name: &str,
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Option<(usize, Vec<ParamSpec>)>> {
        let (e, _) = self.user_extern_asts.get(name)?;
        let ctors: Vec<Vec<ParamSpec>> = constructors(e).map(|p| ParamSpec::of(p)).collect();
        if ctors.is_empty() {
            return None;
        }
        let Some(i) = self.pick_constructor(name, &ctors, args, span) else {
            return Some(None);
        };
        Some(ctors.into_iter().nth(i).map(|params| (i, params)))
    }

    /// The element types of a struct made up for a tuple type
    /// ([`Checker::tuple_struct`]), if `ty` is one.
    fn made_up_tuple(&self, ty: &Ty) -> Option<Vec<Ty>> {
        let Ty::Composite(h) = ty else { return None };
        self.tuple_structs
            .iter()
            .find(|(_, c)| c == h)
            .map(|(t, _)| t.clone())
    }

    /// Runs `f` with the scopes of a declaration plus type parameters bound.
    fn with_type_params<T>(
        &mut self,
        scopes: Vec<std::collections::HashMap<String, super::Sym>>,
        bound: &[(&ast::Ident, &Ty)],
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let saved = std::mem::replace(&mut self.scopes, scopes);
        self.push_scope();
        for (id, ty) in bound {
            self.declare(id, super::Sym::Type((*ty).clone()));
        }
        let r = f(self);
        self.scopes = saved;
        r
    }

    /// The user extern type `name` with type arguments `targs` (a generic
    /// one is checked once per list of type arguments). With none written,
    /// a generic one's are inferred from the arguments `args` of its
    /// constructor `ctor` (an index among its constructors).
    pub(crate) fn user_extern_type(
        &mut self,
        name: &str,
        targs: &[ast::Type],
        args: &[&ast::Expr],
        ctor: usize,
        span: Span,
    ) -> UserType {
        let Some((e, scopes)) = self.user_extern_asts.get(name).cloned() else {
            return UserType::NotUser;
        };
        // Instantiated: its declaration's trial is not reported.
        self.ctor_used.insert(name.to_string());
        if self.refused_user_externs.contains_key(name) {
            return UserType::NotUser;
        }
        if targs.is_empty() && !e.type_params.is_empty() {
            return match self.inferred_user_type_args(&e, args, ctor, span) {
                Some(tys) => self.user_extern_of(name, &e, scopes, tys, span),
                None => UserType::Reported,
            };
        }
        if e.type_params.len() != targs.len() {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "extern `{name}` takes {} type argument(s), {} given",
                    e.type_params.len(),
                    targs.len()
                ),
                "wrong number of type arguments",
            );
            return UserType::Reported;
        }
        let tys: Option<Vec<Ty>> = targs.iter().map(|t| self.ty(t)).collect();
        let Some(tys) = tys else {
            return UserType::Reported;
        };
        self.user_extern_of(name, &e, scopes, tys, span)
    }

    /// The type arguments of generic user extern `e` instantiated without
    /// any written (P4_16 §7.2.12 lets a constructor's arguments give them:
    /// `Parametrized(16w1) p;`), each taken from the first argument passed
    /// to a parameter of exactly that type in constructor `ctor`.
    fn inferred_user_type_args(
        &mut self,
        e: &ast::ExternDecl,
        args: &[&ast::Expr],
        ctor: usize,
        span: Span,
    ) -> Option<Vec<Ty>> {
        let name = &e.name.name;
        // With no constructor at all, infer from nothing.
        let no_params = Vec::new();
        let params = constructors(e).nth(ctor).unwrap_or(&no_params);
        self.type_args_of_call(
            &format!("extern `{name}`"),
            name,
            &e.type_params,
            params,
            &[],
            args,
            span,
        )
    }

    /// The user extern type `name` (declared as `e` in `scopes`) with type
    /// arguments `tys`, checked and recorded on first use.
    fn user_extern_of(
        &mut self,
        name: &str,
        e: &ast::ExternDecl,
        scopes: Vec<std::collections::HashMap<String, super::Sym>>,
        tys: Vec<Ty>,
        span: Span,
    ) -> UserType {
        if let Some(i) = self
            .prog
            .user_externs
            .iter()
            .position(|u| u.name == name && u.type_args == tys)
        {
            return UserType::Found(i as u32);
        }
        if tys.is_empty() {
            return UserType::NotUser;
        }
        let bound: Vec<(&ast::Ident, &Ty)> = e.type_params.iter().zip(&tys).collect();
        let r = self.with_type_params(scopes, &bound, |c| c.user_extern_sig(e, &tys));
        match r {
            Ok(u) => {
                self.prog.user_externs.push(u);
                UserType::Found(self.prog.user_externs.len() as u32 - 1)
            }
            Err(why) => {
                if !why.is_empty() {
                    self.unsupported(span, &why);
                }
                UserType::Reported
            }
        }
    }

    /// An instance of user extern type `decl` made by its constructor
    /// `ctor` (an index among its constructors) with (bound) arguments
    /// `args`.
    pub(crate) fn user_instance(
        &mut self,
        decl: u32,
        ctor: usize,
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<ir::ExternKind> {
        let u = self.prog.user_externs[decl as usize].clone();
        if u.ctors.get(ctor).is_none_or(|c| c.len() != args.len()) {
            let mut counts: Vec<String> = Vec::new();
            for c in &u.ctors {
                let n = c.len().to_string();
                if !counts.contains(&n) {
                    counts.push(n);
                }
            }
            let one = counts == ["1"];
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "extern `{}` takes {} constructor argument{}, {} given",
                    u.name,
                    counts.join(" or "),
                    if one { "" } else { "s" },
                    args.len()
                ),
                "wrong number of arguments",
            );
            return None;
        }
        let mut values = Vec::new();
        for (p, a) in u.ctors[ctor].iter().zip(args) {
            values.extend(self.ctor_value(&u.name, p, a)?);
        }
        self.prog.user_externs[decl as usize].used = true;
        Some(ir::ExternKind::User {
            decl,
            ctor: ctor as u32,
            args: values,
        })
    }

    /// The folded value of constructor argument `a` for parameter `p` of
    /// user extern `ext`; a tuple parameter (held as the struct made up for
    /// it) takes a tuple of constants, one value per element.
    fn ctor_value(
        &mut self,
        ext: &str,
        p: &ir::UserParam,
        a: &ast::Expr,
    ) -> Option<Vec<ConstValue>> {
        // The type the P4 source gives an element: a tuple, where the
        // parameter holds the struct made up for it.
        let elem = match self.made_up_tuple(&p.ty) {
            Some(tys) => Ty::Tuple(tys),
            None => p.ty.clone(),
        };
        if p.list {
            // `{a, b}` checks each element as a T; a cast `(list<T>){..}`
            // did so itself, and must name this T.
            let items = match &a.kind {
                ast::ExprKind::List(items) => self.elements_as(items, &elem)?,
                _ => {
                    let x = self.expr(a, None)?;
                    match x.kind {
                        ExprKind::List(items) if items.iter().all(|i| i.ty == elem) => items,
                        _ => {
                            let want = self.ty_name(&elem);
                            let found = self.ty_name(&x.ty);
                            self.error_label(
                                codes::TYPE_MISMATCH,
                                a.span,
                                format!(
                                    "constructor argument `{}` of extern `{ext}` is a list<{want}>, not {found}",
                                    p.name
                                ),
                                "not a list of that type",
                            );
                            return None;
                        }
                    }
                }
            };
            let mut values = vec![ConstValue::Integer(items.len() as i128)];
            for item in items {
                let item = super::fold::fold(item, &self.prog);
                values.extend(self.const_leaves(ext, p, item, a.span)?);
            }
            return Some(values);
        }
        if let Some(tys) = self.made_up_tuple(&p.ty) {
            let x = self.expr(a, Some(&Ty::Tuple(tys.clone())))?;
            let x = super::fold::fold(x, &self.prog);
            let ExprKind::List(items) = &x.kind else {
                self.error(
                    codes::NOT_CONSTANT,
                    a.span,
                    format!(
                        "constructor argument `{}` of extern `{ext}` must be a compile-time constant",
                        p.name
                    ),
                );
                return None;
            };
            let mut fields = Vec::new();
            for item in items {
                fields.push(self.const_arg(ext, p, item.clone(), a.span)?);
            }
            return Some(fields);
        }
        let x = self.expr(a, Some(&p.ty))?;
        let x = super::fold::fold(x, &self.prog);
        Some(vec![self.const_arg(ext, p, x, a.span)?])
    }

    /// The scalar constants of a checked (folded) constructor argument
    /// `x`, field by field for a struct or tuple value.
    fn const_leaves(
        &mut self,
        ext: &str,
        p: &ir::UserParam,
        x: Expr,
        span: Span,
    ) -> Option<Vec<ConstValue>> {
        match x.kind {
            ExprKind::List(items) => {
                let mut out = Vec::new();
                for i in items {
                    out.extend(self.const_leaves(ext, p, i, span)?);
                }
                Some(out)
            }
            _ => Some(vec![self.const_arg(ext, p, x, span)?]),
        }
    }

    /// A checked constructor argument `x` for scalar parameter `p` as a
    /// constant, or an error if it is not one.
    fn const_arg(
        &mut self,
        ext: &str,
        p: &ir::UserParam,
        x: Expr,
        span: Span,
    ) -> Option<ConstValue> {
        let v = match (&x.kind, &x.ty) {
            (ExprKind::Bool(b), _) => ConstValue::Bool(*b),
            (ExprKind::Int(v), Ty::Int(w)) => ConstValue::Int {
                width: *w,
                value: p4_target::bits::sext(*v, *w),
            },
            (ExprKind::Int(v), Ty::Bit(w)) => ConstValue::Bit {
                width: *w,
                value: *v,
            },
            // An enum or `error` constant: the code methods see too (a
            // member's index, an error's code, a serializable enum's
            // value), as a `u32` or the enum's underlying width.
            (ExprKind::EnumMember(h, i), _) => {
                let en = &self.prog.enums[*h];
                match (&en.repr, x.ty.scalar_width(&self.prog)) {
                    (Some(_), Some(width)) if width <= 128 => ConstValue::Bit {
                        width,
                        value: en.members[*i as usize].1,
                    },
                    (Some(_), _) => {
                        self.unsupported(
                            span,
                            "serializable enums wider than 128 bits as extern constructor arguments",
                        );
                        return None;
                    }
                    (None, _) => ConstValue::Bit {
                        width: 32,
                        value: u128::from(*i),
                    },
                }
            }
            (ExprKind::ErrorCode(c), _) => ConstValue::Bit {
                width: 32,
                value: u128::from(*c),
            },
            _ => {
                self.error(
                    codes::NOT_CONSTANT,
                    span,
                    format!(
                        "constructor argument `{}` of extern `{ext}` must be a compile-time constant",
                        p.name
                    ),
                );
                return None;
            }
        };
        Some(v)
    }

    /// The parameters a call of method `m` of user extern `decl` with
    /// `args` binds to: overloads of one name are told apart by arity,
    /// then by the names of the arguments (P4_16 §7.2.12.2).
    pub(crate) fn user_method_params(
        &self,
        decl: u32,
        m: &str,
        args: &[ast::Argument],
    ) -> Option<Vec<ParamSpec>> {
        let u = &self.prog.user_externs[decl as usize];
        let (e, _) = self.user_extern_asts.get(&u.name)?;
        let specs: Vec<Vec<ParamSpec>> = e
            .members
            .iter()
            .filter_map(|x| match x {
                ast::ExternMember::Method(f) if f.name.name == m => Some(ParamSpec::of(&f.params)),
                _ => None,
            })
            .collect();
        params_for_call(specs, args)
    }

    /// The parameters a call of user extern function `name` with `args`
    /// binds to, told apart as methods' are.
    pub(crate) fn user_function_params(
        &self,
        name: &str,
        args: &[ast::Argument],
    ) -> Option<Vec<ParamSpec>> {
        let concrete = self.prog.user_functions.iter().filter(|f| f.name == name);
        let mut specs: Vec<Vec<ParamSpec>> = concrete
            .map(|f| ParamSpec::named(f.params.iter().map(|p| p.name.clone())))
            .collect();
        for (f, _) in self.generic_user_fns.get(name).into_iter().flatten() {
            specs.push(ParamSpec::of(&f.params));
        }
        params_for_call(specs, args)
    }

    /// Whether user externs may be called here: in a block (controls'
    /// apply blocks, actions, parser states and functions, which the
    /// generated code passes the extern objects), not in a constant's
    /// initialiser or a declaration's argument.
    fn user_call_allowed(&mut self, what: &str, span: Span) -> bool {
        if self.body.is_some() {
            return true;
        }
        self.error_label(
            codes::NOT_ALLOWED_HERE,
            span,
            format!("user extern `{what}` is called outside a control, parser, action or function"),
            "not in a block",
        );
        false
    }

    /// `inst.m(args)` on an instance of a user extern object type.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn user_method_call(
        &mut self,
        inst: u32,
        inst_name: &str,
        decl: u32,
        m: &str,
        mspan: Span,
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let u = self.prog.user_externs[decl as usize].clone();
        let what = format!("{}.{m}", u.name);
        let (e, scopes) = self.user_extern_asts.get(&u.name)?.clone();
        let concrete: Vec<(usize, &ir::UserFn)> = u
            .methods
            .iter()
            .enumerate()
            .filter(|(_, f)| f.name == m && f.type_args.is_empty())
            .collect();
        let generic: Vec<&ast::FunctionPrototype> = e
            .members
            .iter()
            .filter_map(|x| match x {
                ast::ExternMember::Method(f) if f.name.name == m && !f.type_params.is_empty() => {
                    Some(f)
                }
                _ => None,
            })
            .collect();
        if concrete.is_empty() && generic.is_empty() {
            self.error_label(
                codes::UNKNOWN_METHOD,
                mspan,
                format!(
                    "extern `{}` (instance `{inst_name}`) has no method `{m}`",
                    u.name
                ),
                "unknown method",
            );
            return None;
        }
        // A call leaving out trailing `@optional` parameters binds to a
        // copy of the method without them (named like an overload).
        let shortened = concrete
            .iter()
            .filter(|(_, f)| f.params.len() != args.len())
            .find_map(|(_, f)| Self::without_optional(f, args.len()));
        let generic_shortened: Vec<ast::FunctionPrototype> = generic
            .iter()
            .filter_map(|f| Self::proto_without_optional(f, args.len()))
            .collect();
        let generic: Vec<&ast::FunctionPrototype> =
            if generic.iter().any(|f| f.params.len() == args.len()) {
                generic
            } else {
                generic
                    .into_iter()
                    .chain(generic_shortened.iter())
                    .collect()
            };
        // Methods of one arity differ in their parameter names: a call
        // naming its arguments was bound to one of them (`call`), a
        // positional one cannot choose. A non-generic method's place among
        // the non-generic ones is its index in `methods`.
        let mut same_arity: Vec<(Option<usize>, &ast::FunctionPrototype)> = Vec::new();
        let mut concrete_index = 0;
        for x in &e.members {
            let ast::ExternMember::Method(f) = x else {
                continue;
            };
            let index = f.type_params.is_empty().then_some(concrete_index);
            if f.name.name == m && f.params.len() == args.len() {
                same_arity.push((index, f));
            }
            concrete_index += usize::from(index.is_some());
        }
        let names: Vec<Vec<&str>> = same_arity
            .iter()
            .map(|(_, f)| f.params.iter().map(|p| p.name.name.as_str()).collect())
            .collect();
        let Ok(picked) = self.pick_by_bound_names(&what, m, &names, span) else {
            return None;
        };
        let chosen = picked.map(|i| same_arity[i]);
        let chosen_generic = chosen.filter(|(i, _)| i.is_none()).map(|(_, f)| f);
        let mi = if let Some(mi) = chosen.and_then(|(i, _)| i) {
            if !self.user_call_allowed(&what, span) {
                return None;
            }
            if !type_args.is_empty() {
                self.error(
                    codes::ARG_COUNT,
                    span,
                    format!("method `{what}` takes no type arguments"),
                );
                return None;
            }
            mi
        } else if let (Some(f), true) = (shortened, type_args.is_empty()) {
            if !self.user_call_allowed(&what, span) {
                return None;
            }
            let methods = &mut self.prog.user_externs[decl as usize].methods;
            methods.push(f);
            methods.len() - 1
        } else if let Some(proto) = chosen_generic.or_else(|| {
            generic
                .iter()
                .find(|f| f.params.len() == args.len())
                .copied()
        }) {
            if !self.user_call_allowed(&what, span) {
                return None;
            }
            let tys = self.type_args_of_call(
                &format!("method `{what}`"),
                m,
                &proto.type_params,
                &proto.params,
                type_args,
                args,
                span,
            )?;
            let tys = self.tuples_as_structs(tys, span);
            let methods = &self.prog.user_externs[decl as usize].methods;
            match methods
                .iter()
                .position(|f| f.name == m && f.type_args == tys && f.params.len() == args.len())
            {
                Some(i) => i,
                None => {
                    let bound: Vec<(&ast::Ident, &Ty)> = e
                        .type_params
                        .iter()
                        .zip(&u.type_args)
                        .chain(proto.type_params.iter().zip(&tys))
                        .collect();
                    let r = self
                        .with_type_params(scopes, &bound, |c| c.user_fn(&what, proto, tys.clone()));
                    let f = match r {
                        Ok(f) => f,
                        Err(why) => {
                            if !why.is_empty() {
                                self.unsupported(span, &why);
                            }
                            return None;
                        }
                    };
                    let methods = &mut self.prog.user_externs[decl as usize].methods;
                    methods.push(f);
                    methods.len() - 1
                }
            }
        } else {
            let arities = concrete
                .iter()
                .map(|(_, f)| f.params.len())
                .chain(generic.iter().map(|f| f.params.len()));
            self.arity_error(&format!("method `{what}`"), arities, args.len(), span);
            return None;
        };
        let f = self.prog.user_externs[decl as usize].methods[mi].clone();
        let v = self.user_args(&f, args)?;
        Some(Expr {
            kind: ExprKind::Call(Box::new(Call::Builtin(Box::new(Builtin::UserMethod {
                inst,
                method: mi as u32,
                args: v,
            })))),
            ty: f.ret.clone(),
            span,
        })
    }

    /// Type arguments with each tuple type (inferred from a list argument
    /// `{a, b}`) replaced by the struct made up for it, so the copy of a
    /// generic is named after that struct (`sum_tuple_0`) and its
    /// parameter travels as one.
    fn tuples_as_structs(&mut self, tys: Vec<Ty>, span: Span) -> Vec<Ty> {
        tys.into_iter()
            .map(|t| match t {
                Ty::Tuple(elems) => Ty::Composite(self.tuple_struct(&elems, span)),
                t => t,
            })
            .collect()
    }

    /// `f` with its trailing `@optional` parameters cut to `n` (a call
    /// that leaves them out), when that is what they are.
    fn without_optional(f: &ir::UserFn, n: usize) -> Option<ir::UserFn> {
        if n >= f.params.len() || !f.params[n..].iter().all(|p| p.optional) {
            return None;
        }
        let mut g = f.clone();
        g.params.truncate(n);
        g.used = false;
        Some(g)
    }

    /// The prototype `f` with its trailing `@optional` parameters cut to
    /// `n`, as [`Self::without_optional`] for a generic one.
    fn proto_without_optional(
        f: &ast::FunctionPrototype,
        n: usize,
    ) -> Option<ast::FunctionPrototype> {
        let optional = |p: &ast::Param| ast::find_annotation(&p.annotations, "optional").is_some();
        if n >= f.params.len() || !f.params[n..].iter().all(optional) {
            return None;
        }
        let mut g = f.clone();
        g.params.truncate(n);
        Some(g)
    }

    fn arity_error(
        &mut self,
        what: &str,
        arities: impl Iterator<Item = usize>,
        given: usize,
        span: Span,
    ) {
        let mut arities: Vec<usize> = arities.collect();
        arities.dedup();
        let arities: Vec<String> = arities.iter().map(|n| n.to_string()).collect();
        self.error_label(
            codes::ARG_COUNT,
            span,
            format!(
                "{what} takes {} argument(s), {given} given",
                arities.join(" or ")
            ),
            "wrong number of arguments",
        );
    }

    /// A call of user extern function `name`.
    pub(crate) fn user_function_call(
        &mut self,
        name: &str,
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let concrete: Vec<(usize, ir::UserFn)> = self
            .prog
            .user_functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.name == name && f.type_args.is_empty())
            .map(|(i, f)| (i, f.clone()))
            .collect();
        let generic = self.generic_user_fns.get(name).cloned().unwrap_or_default();
        if concrete.is_empty() && generic.is_empty() {
            self.refused_user_extern(name, &format!("the extern function `{name}`"), span);
            return None;
        }
        let what = format!("extern function `{name}`");
        // Functions of one arity differ in their parameter names, as
        // methods do; the generic ones follow the others in `names`.
        let same_arity: Vec<&(usize, ir::UserFn)> = concrete
            .iter()
            .filter(|(_, f)| f.params.len() == args.len())
            .collect();
        let generic_same_arity: Vec<&(ast::FunctionPrototype, _)> = generic
            .iter()
            .filter(|(f, _)| f.params.len() == args.len())
            .collect();
        let names: Vec<Vec<&str>> = same_arity
            .iter()
            .map(|(_, f)| f.params.iter().map(|p| p.name.as_str()).collect())
            .chain(
                generic_same_arity
                    .iter()
                    .map(|(f, _)| f.params.iter().map(|p| p.name.name.as_str()).collect()),
            )
            .collect();
        let Ok(picked) = self.pick_by_bound_names(name, name, &names, span) else {
            return None;
        };
        let mut concrete_fit = picked.and_then(|i| same_arity.get(i)).map(|&c| c.clone());
        let generic_fit = picked
            .and_then(|i| generic_same_arity.get(i.checked_sub(same_arity.len())?))
            .map(|&g| g.clone());
        if picked.is_none() {
            // Trailing `@optional` parameters left out: a copy of the
            // function without them (named like an overload).
            if let Some(f) = concrete
                .iter()
                .find_map(|(_, f)| Self::without_optional(f, args.len()))
            {
                self.prog.user_functions.push(f.clone());
                concrete_fit = Some((self.prog.user_functions.len() - 1, f));
            }
        }
        let generic: Vec<(ast::FunctionPrototype, _)> =
            if generic.iter().any(|(f, _)| f.params.len() == args.len()) {
                generic
            } else {
                let shortened: Vec<_> = generic
                    .iter()
                    .filter_map(|(f, sc)| {
                        Some((Self::proto_without_optional(f, args.len())?, sc.clone()))
                    })
                    .collect();
                generic.into_iter().chain(shortened).collect()
            };
        let concrete_fit = concrete_fit.as_ref();
        let fi =
            if let (Some((fi, _)), true) = (concrete_fit, type_args.is_empty()) {
                if !self.user_call_allowed(name, span) {
                    return None;
                }
                *fi
            } else if let Some((proto, scopes)) = generic_fit
                .as_ref()
                .or_else(|| generic.iter().find(|(f, _)| f.params.len() == args.len()))
            {
                if !self.user_call_allowed(name, span) {
                    return None;
                }
                let tys = self.type_args_of_call(
                    &what,
                    name,
                    &proto.type_params,
                    &proto.params,
                    type_args,
                    args,
                    span,
                )?;
                let tys = self.tuples_as_structs(tys, span);
                match self.prog.user_functions.iter().position(|f| {
                    f.name == name && f.type_args == tys && f.params.len() == args.len()
                }) {
                    Some(i) => i,
                    None => {
                        let bound: Vec<(&ast::Ident, &Ty)> =
                            proto.type_params.iter().zip(&tys).collect();
                        let r = self.with_type_params(scopes.clone(), &bound, |c| {
                            c.user_fn(name, proto, tys.clone())
                        });
                        match r {
                            Ok(f) => {
                                self.prog.user_functions.push(f);
                                self.prog.user_functions.len() - 1
                            }
                            Err(why) => {
                                if !why.is_empty() {
                                    self.unsupported(span, &why);
                                }
                                return None;
                            }
                        }
                    }
                }
            } else if concrete_fit.is_some() {
                self.error(
                    codes::ARG_COUNT,
                    span,
                    format!("{what} takes no type arguments"),
                );
                return None;
            } else {
                // v1model's overloads of the name count too (`random`).
                let arities = concrete
                    .iter()
                    .map(|(_, f)| f.params.len())
                    .chain(generic.iter().map(|(f, _)| f.params.len()))
                    .chain(crate::v1model::functions(name).map(|s| s.params.len()));
                self.arity_error(&what, arities, args.len(), span);
                return None;
            };
        let f = self.prog.user_functions[fi].clone();
        let v = self.user_args(&f, args)?;
        self.prog.user_functions[fi].used = true;
        Some(Expr {
            kind: ExprKind::Call(Box::new(Call::Builtin(Box::new(Builtin::UserFunction {
                func: fi as u32,
                args: v,
            })))),
            ty: f.ret.clone(),
            span,
        })
    }

    fn user_args(&mut self, f: &ir::UserFn, args: &[&ast::Expr]) -> Option<Vec<Expr>> {
        let mut v = Vec::new();
        for (p, a) in f.params.iter().zip(args) {
            let x = if p.dir == ir::Direction::In {
                self.expr(a, Some(&p.ty))?
            } else {
                let l = self.directed_arg(a, p.dir == ir::Direction::Out, &p.ty)?;
                self.coerce(super::expr::TE::Typed(l), &p.ty, a.span)?
            };
            v.push(x);
        }
        Some(v)
    }
}

/// The parameter lists of extern `e`'s constructors, in declaration order.
fn constructors(e: &ast::ExternDecl) -> impl Iterator<Item = &Vec<ast::Param>> {
    e.members.iter().filter_map(|m| match m {
        ast::ExternMember::Constructor { params, .. } => Some(params),
        ast::ExternMember::Method(_) => None,
    })
}

/// Of the overloads `specs` of a method or function, the parameters a call
/// with `args` binds to ([`super::overloads::fitting`]; a call that several
/// fit binds as the first, and is reported ambiguous where it is resolved).
/// With none fitting, the first of the call's arity, else the first, so
/// that binding reports what is wrong.
fn params_for_call(specs: Vec<Vec<ParamSpec>>, args: &[ast::Argument]) -> Option<Vec<ParamSpec>> {
    let i = super::overloads::fitting(&specs, args)
        .first()
        .copied()
        .or_else(|| specs.iter().position(|s| s.len() == args.len()))
        .unwrap_or(0);
    specs.into_iter().nth(i)
}
