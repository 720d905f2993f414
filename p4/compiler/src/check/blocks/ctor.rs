//! Constructor and type arguments of parsers and controls: trial checks at
//! the declaration, values by parameter, instances passed to control-typed parameters.

use crate::check::{Checker, Sym, codes, fold};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Handle, Ty};

/// The cache key of a block instantiated with type arguments and
/// constructor argument values.
pub(super) fn ctor_key(
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

impl Checker {
    /// Type-checks control or parser `name` (which has type parameters
    /// `type_params` and constructor parameters `ctor_params`) with
    /// `check`, at its declaration, as p4c does, with each type parameter
    /// opaque ([`Checker::opaque_types`]) and each constructor parameter
    /// bound to a placeholder of its declared type (1, `false`, an enum's
    /// first member). The IR built is thrown away; the diagnostics wait in
    /// `ctor_trials` and are reported only if the block is never
    /// instantiated (an instance is checked with its real arguments, which
    /// a placeholder cannot stand for, e.g. in a bounds check).
    pub(super) fn trial_ctor(
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
    pub(crate) fn ctor_defaults(&mut self, ctor_params: &[ast::Param]) {
        for p in ctor_params {
            if let Some(d) = &p.default {
                if matches!(p.ty.kind, ast::TypeKind::Int) {
                    self.int_arg(p, d, "constructor parameter");
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
    pub(super) fn type_arg_count(
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
    pub(super) fn ctor_values(
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
                values.push((
                    p.name.clone(),
                    Sym::IntConst(self.int_arg(p, a, "constructor parameter")?),
                ));
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

    /// The value of argument `a` for the `int` parameter `p` (`what`: a
    /// "constructor parameter", or a function's "parameter"): a
    /// compile-time integer without a width (a typed value would need a
    /// cast to `int`, which P4_16 does not have).
    pub(crate) fn int_arg(&mut self, p: &ast::Param, a: &ast::Expr, what: &str) -> Option<i128> {
        let before = self.diags.len();
        match self.expr_any(a)? {
            crate::check::expr::TE::Inf(v) => Some(v),
            crate::check::expr::TE::Typed(x) => {
                if self.diags.len() == before {
                    self.error_label(
                        codes::TYPE_MISMATCH,
                        a.span,
                        format!(
                            "{what} `{}` is an `int`: its argument must be an integer without \
                             a width, not {}",
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
}
