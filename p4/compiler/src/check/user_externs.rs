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
//! Still refused, each with a `P4E1060` diagnostic naming the extern:
//! generic extern types, methods and functions; abstract methods; more than
//! one constructor; parameter types other than scalars, headers and structs;
//! return types other than scalars; calls from parsers and functions.

use super::{BodyKind, Checker, ParamSpec, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Builtin, Call, ConstValue, Expr, ExprKind, Ty};

impl Checker {
    /// Records a user extern object type (its signature was name-checked
    /// by the caller), or why it cannot be taken.
    pub(super) fn user_extern_decl(&mut self, e: &ast::ExternDecl) {
        let before = self.diags.len();
        let r = self.user_extern_sig(e);
        if let Some(u) = self.settle_decl(&e.name.name, before, r) {
            self.prog.user_externs.push(u);
        }
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

    fn user_extern_sig(&mut self, e: &ast::ExternDecl) -> Result<ir::UserExtern, String> {
        let name = &e.name.name;
        if !e.type_params.is_empty() {
            return Err(format!("generic extern types (`{name}`)"));
        }
        let mut ctor: Option<Vec<ir::UserParam>> = None;
        let mut methods = Vec::new();
        for m in &e.members {
            match m {
                ast::ExternMember::Constructor { params, .. } => {
                    if ctor.is_some() {
                        return Err(format!(
                            "extern types with more than one constructor (`{name}`)"
                        ));
                    }
                    ctor = Some(self.user_params(name, params, true)?);
                }
                ast::ExternMember::Method(f) => {
                    let what = format!("{name}.{}", f.name.name);
                    if f.is_abstract {
                        return Err(format!("abstract methods (`{what}`)"));
                    }
                    methods.push(self.user_fn(&what, f)?);
                }
            }
        }
        Ok(ir::UserExtern {
            name: name.clone(),
            ctor: ctor.unwrap_or_default(),
            methods,
            used: false,
            span: e.span,
        })
    }

    /// Records a user extern function (an overload when the name is taken),
    /// or why it cannot be taken.
    pub(super) fn user_function_decl(&mut self, f: &ast::FunctionPrototype) {
        let before = self.diags.len();
        let r = self.user_fn(&f.name.name, f);
        if let Some(u) = self.settle_decl(&f.name.name, before, r) {
            self.prog.user_functions.push(u);
        }
    }

    fn user_fn(&mut self, what: &str, f: &ast::FunctionPrototype) -> Result<ir::UserFn, String> {
        if !f.type_params.is_empty() {
            return Err(format!("generic extern functions and methods (`{what}`)"));
        }
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
            // An `int` constructor parameter: the value comes as an i128.
            let ty = if ctor && matches!(p.ty.kind, ast::TypeKind::Int) {
                Ty::Int(128)
            } else {
                self.ty(&p.ty).ok_or_else(String::new)?
            };
            let ok = if ctor {
                matches!(ty, Ty::Bool | Ty::Bit(_) | Ty::Int(_))
            } else {
                Self::user_scalar(&ty)
                    || matches!(ty, Ty::Composite(c) if self.prog.composites[c].kind != ir::CompositeKind::Union)
            };
            if !ok {
                let allowed = if ctor {
                    "extern constructor parameters other than bit<W>, int<W>, int and bool"
                } else {
                    "extern parameters other than scalars, headers and structs"
                };
                return Err(format!("{allowed} (`{what}`)"));
            }
            let dir = match p.direction {
                ast::Direction::Out => ir::Direction::Out,
                ast::Direction::InOut => ir::Direction::InOut,
                ast::Direction::In | ast::Direction::None => ir::Direction::In,
            };
            if ctor && dir != ir::Direction::In {
                return Err(format!(
                    "extern constructor parameters with a direction (`{what}`)"
                ));
            }
            out.push(ir::UserParam {
                name: p.name.name.clone(),
                dir,
                ty,
            });
        }
        Ok(out)
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

    /// The user extern object type called `name`.
    pub(crate) fn user_extern_index(&self, name: &str) -> Option<u32> {
        self.prog
            .user_externs
            .iter()
            .position(|u| u.name == name)
            .map(|i| i as u32)
    }

    /// An instance of user extern type `decl` with (bound) constructor
    /// arguments `args`.
    pub(crate) fn user_instance(
        &mut self,
        decl: u32,
        targs: usize,
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<ir::ExternKind> {
        let u = self.prog.user_externs[decl as usize].clone();
        if targs != 0 {
            self.error(
                codes::ARG_COUNT,
                span,
                format!("extern `{}` takes no type arguments", u.name),
            );
            return None;
        }
        if args.len() != u.ctor.len() {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "extern `{}` takes {} constructor argument{}, {} given",
                    u.name,
                    u.ctor.len(),
                    if u.ctor.len() == 1 { "" } else { "s" },
                    args.len()
                ),
                "wrong number of arguments",
            );
            return None;
        }
        let mut values = Vec::new();
        for (p, a) in u.ctor.iter().zip(args) {
            let x = self.expr(a, Some(&p.ty))?;
            let x = super::fold::fold(x, &self.prog);
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
                _ => {
                    self.error(
                        codes::NOT_CONSTANT,
                        a.span,
                        format!(
                            "constructor argument `{}` of extern `{}` must be a compile-time constant",
                            p.name, u.name
                        ),
                    );
                    return None;
                }
            };
            values.push(v);
        }
        self.prog.user_externs[decl as usize].used = true;
        Some(ir::ExternKind::User { decl, args: values })
    }

    /// The parameters a call of method `m` of user extern `decl` with
    /// `n_args` arguments binds to (overloads by arity).
    pub(crate) fn user_method_params(
        &self,
        decl: u32,
        m: &str,
        n_args: usize,
    ) -> Option<Vec<ParamSpec>> {
        let u = &self.prog.user_externs[decl as usize];
        let cands: Vec<&ir::UserFn> = u.methods.iter().filter(|f| f.name == m).collect();
        let f = cands
            .iter()
            .find(|f| f.params.len() == n_args)
            .or(cands.first())?;
        Some(ParamSpec::named(f.params.iter().map(|p| p.name.clone())))
    }

    /// The parameters of user extern function `name` with `n_args` arguments.
    pub(crate) fn user_function_params(&self, name: &str, n_args: usize) -> Option<Vec<ParamSpec>> {
        let cands: Vec<&ir::UserFn> = self
            .prog
            .user_functions
            .iter()
            .filter(|f| f.name == name)
            .collect();
        let f = cands
            .iter()
            .find(|f| f.params.len() == n_args)
            .or(cands.first())?;
        Some(ParamSpec::named(f.params.iter().map(|p| p.name.clone())))
    }

    /// Whether user externs may be called here (controls' apply blocks and
    /// actions, where the generated code has the extern objects at hand).
    fn user_call_allowed(&mut self, what: &str, span: Span) -> bool {
        match self.body.as_ref().map(|b| b.kind) {
            Some(BodyKind::Apply | BodyKind::Action) => true,
            _ => {
                self.unsupported(
                    span,
                    &format!("calls of user extern `{what}` outside controls and actions"),
                );
                false
            }
        }
    }

    /// `inst.m(args)` on an instance of a user extern object type.
    pub(crate) fn user_method_call(
        &mut self,
        inst: u32,
        inst_name: &str,
        decl: u32,
        m: &str,
        mspan: Span,
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let u = self.prog.user_externs[decl as usize].clone();
        let what = format!("{}.{m}", u.name);
        let cands: Vec<(usize, &ir::UserFn)> = u
            .methods
            .iter()
            .enumerate()
            .filter(|(_, f)| f.name == m)
            .collect();
        if cands.is_empty() {
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
        let Some(&(mi, f)) = cands.iter().find(|(_, f)| f.params.len() == args.len()) else {
            let arities: Vec<String> = cands
                .iter()
                .map(|(_, f)| f.params.len().to_string())
                .collect();
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "method `{what}` takes {} argument(s), {} given",
                    arities.join(" or "),
                    args.len()
                ),
                "wrong number of arguments",
            );
            return None;
        };
        if !self.user_call_allowed(&what, span) {
            return None;
        }
        let v = self.user_args(f, args)?;
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

    /// A call of user extern function `name`.
    pub(crate) fn user_function_call(
        &mut self,
        name: &str,
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let cands: Vec<(usize, ir::UserFn)> = self
            .prog
            .user_functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.name == name)
            .map(|(i, f)| (i, f.clone()))
            .collect();
        if cands.is_empty() {
            self.refused_user_extern(name, &format!("the extern function `{name}`"), span);
            return None;
        }
        if !type_args.is_empty() {
            self.error(
                codes::ARG_COUNT,
                span,
                format!("extern function `{name}` takes no type arguments"),
            );
            return None;
        }
        let Some((fi, f)) = cands.iter().find(|(_, f)| f.params.len() == args.len()) else {
            let arities: Vec<String> = cands
                .iter()
                .map(|(_, f)| f.params.len().to_string())
                .collect();
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "extern function `{name}` takes {} argument(s), {} given",
                    arities.join(" or "),
                    args.len()
                ),
                "wrong number of arguments",
            );
            return None;
        };
        if !self.user_call_allowed(name, span) {
            return None;
        }
        let v = self.user_args(f, args)?;
        self.prog.user_functions[*fi].used = true;
        Some(Expr {
            kind: ExprKind::Call(Box::new(Call::Builtin(Box::new(Builtin::UserFunction {
                func: *fi as u32,
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
