//! Values of `type`-declared types: which expressions have one, and the
//! checks that they are not mixed with their underlying type (P4_16 spec §7.6).

use super::{Checker, ParamSpec, Sym, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Ty};

impl Checker {
    /// For a field of a header or struct, the `type`-declared type it was
    /// declared with (`Some(None)` for any other type); `None` for other
    /// expressions.
    pub(crate) fn nominal_field(&self, e: &ir::Expr) -> Option<Option<String>> {
        match &e.kind {
            ir::ExprKind::Var(_) => self.var_nominal.get(&e.span).cloned(),
            ir::ExprKind::Member(base, i) if matches!(base.ty, Ty::Composite(_)) => {
                let Ty::Composite(h) = &base.ty else {
                    return None;
                };
                Some(self.field_nominal.get(&(h.index(), *i)).cloned())
            }
            // A cast or a call says its type; an operator's result is of a
            // plain type (no operator but `==`/`!=` takes a `type`).
            _ if self.expr_nominal.contains_key(&e.span) => {
                Some(self.expr_nominal[&e.span].clone())
            }
            ir::ExprKind::Binary(..) | ir::ExprKind::Unary(..) | ir::ExprKind::Slice(..) => {
                Some(None)
            }
            _ => None,
        }
    }

    /// The parameters of an action or function with their declared types
    /// for the nominal checks of arguments.
    pub(crate) fn param_specs(&self, params: &[ast::Param]) -> Vec<ParamSpec> {
        let mut specs = ParamSpec::of(params);
        for (s, p) in specs.iter_mut().zip(params) {
            s.nominal = Some(self.nominal_of_type(&p.ty));
        }
        specs
    }

    /// The `type`-declared type an AST type names, if any.
    pub(crate) fn nominal_of_type(&self, t: &ast::Type) -> Option<String> {
        match &t.kind {
            ast::TypeKind::Named { name, args } if args.is_empty() => {
                self.nominal_types.get(&name.ident.name).cloned()
            }
            _ => None,
        }
    }

    /// For a `tuple<..>` as written, each element's `type`-declared type
    /// (`None` for a plain one); empty for other types. Reading an element
    /// (`t[0]`) gives a value of its element's type (P4_16 §7.6).
    pub(crate) fn tuple_nominals(&self, t: &ast::Type) -> Vec<Option<String>> {
        match &t.kind {
            ast::TypeKind::Tuple(items) => items.iter().map(|i| self.nominal_of_type(i)).collect(),
            _ => Vec::new(),
        }
    }

    /// Records the element types of local `name`, just declared with type
    /// `t`, for the nominal checks of its elements ([`Self::tuple_nominals`]).
    pub(crate) fn note_tuple_nominals(&mut self, name: &ast::Ident, t: &ast::Type) {
        let elems = self.tuple_nominals(t);
        if elems.is_empty() {
            return;
        }
        if let Some(Sym::Var(.., e)) = self.scopes.last_mut().and_then(|s| s.get_mut(&name.name)) {
            *e = elems;
        }
    }

    /// P4_16 §7.6: a type introduced by `type` is a new type; a value of it
    /// and a value of another type (its underlying one included) are not
    /// assigned or compared without a cast. Checked where both sides are
    /// fields of headers or structs, whose declared types are known: a
    /// field of type `T` is `Some("T")`, of a plain type `None`.
    pub(crate) fn check_nominal(&mut self, a: &ir::Expr, b: &ir::Expr, span: Span, what: &str) {
        let x = self.nominal_field(a);
        self.check_nominal_with(x, a, b, span, what);
    }

    /// The nominal check of a declaration `T x = init;` with `T` as
    /// written: a `tuple<..>` initialised with a list is checked element by
    /// element (`tuple<Port_t, bit<8>> t = { p, 1 }`).
    pub(crate) fn check_declared_nominal(&mut self, ty: &ast::Type, init: &ir::Expr, span: Span) {
        if let (ast::TypeKind::Tuple(tys), ir::ExprKind::List(items)) = (&ty.kind, &init.kind)
            && tys.len() == items.len()
        {
            for (t, x) in tys.iter().zip(items) {
                self.check_declared_nominal(t, x, x.span);
            }
            return;
        }
        let declared = self.nominal_of_type(ty);
        self.check_nominal_against(&declared, init, span, "assign");
    }

    /// The nominal check of a value against a declared type: an
    /// initializer (`what` "assign") or an argument ("pass").
    pub(crate) fn check_nominal_against(
        &mut self,
        declared: &Option<String>,
        value: &ir::Expr,
        span: Span,
        what: &str,
    ) {
        let decl = ir::Expr {
            kind: ir::ExprKind::Bool(false),
            ty: value.ty.clone(),
            span,
        };
        self.check_nominal_with(Some(declared.clone()), &decl, value, span, what);
    }

    fn check_nominal_with(
        &mut self,
        x: Option<Option<String>>,
        a: &ir::Expr,
        b: &ir::Expr,
        span: Span,
        what: &str,
    ) {
        if let (Some(x), Some(y)) = (x, self.nominal_field(b))
            && x != y
        {
            let name = |n: &Option<String>, e: &ir::Expr, c: &Checker| match n {
                Some(n) => n.clone(),
                None => c.ty_name(&e.ty),
            };
            let (xn, yn) = (name(&x, a, self), name(&y, b, self));
            let msg = match what {
                "assign" => format!("cannot assign {yn} to {xn} without a cast"),
                "pass" => format!("cannot pass {yn} as {xn} without a cast"),
                "return" => format!("cannot return {yn} as {xn} without a cast"),
                _ => format!("cannot {what} {xn} with {yn} without a cast"),
            };
            self.error_label(
                codes::TYPE_MISMATCH,
                span,
                format!("{msg}: `type` declares a new type"),
                "cast one side, e.g. `(T)x`",
            );
        }
    }
}
