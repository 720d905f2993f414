//! Assignments: the value a place of a given type takes, writes through a
//! run-time index into an array of scalars, and the hidden locals that
//! keep the left side evaluated first and once (P4_16 spec §12.1, §12.4).

use crate::check::expr::{ArrayIndex, TE, index_is, reachable_positions};
use crate::check::{Checker, Sym, codes};
use crate::front::ast;
use crate::ir::visit::has_call;
use crate::ir::{self, Expr, ExprKind, Stmt, Ty};

impl Checker {
    /// The value `e` assigned to (or initialising) a place of type `ty`.
    /// An integer constant does not convert implicitly to a serializable
    /// enum here (P4_16 §8.3; p4c's enumCast error sample), though it does
    /// in select cases and comparisons.
    pub(super) fn assigned_value(&mut self, e: &ast::Expr, ty: &Ty) -> Option<ir::Expr> {
        if let Ty::SerEnum(_) = ty {
            let te = self.expr_any(e)?;
            if let TE::Inf(_) = te {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    e.span,
                    format!(
                        "an integer cannot be assigned to {} without a cast",
                        self.ty_name(ty)
                    ),
                    "integer here",
                );
                return None;
            }
            return self.coerce(te, ty, e.span);
        }
        self.expr(e, Some(ty))
    }

    /// `s.a[i] = v` where `a` is an array of scalars and `i` a run-time
    /// index: `if (i == 0) s.a[0] = v; else if (i == 1) ..`, so an index
    /// out of range writes nothing (as a header stack's write does, P4_16
    /// §8.18). `i` and then `v` are evaluated first, once each (P4_16
    /// §12.1). `false` when `base[index]` is no such element (a
    /// compile-time index is a plain field); `true` once handled,
    /// errors included.
    pub(super) fn run_time_array_assign(
        &mut self,
        base: &ast::Expr,
        index: &ast::Expr,
        rhs: &ast::Expr,
        span: crate::diag::Span,
        out: &mut ir::Block,
    ) -> bool {
        let Some(elems) = self.array_of_scalars(base) else {
            return false;
        };
        let Some(elems) = elems else {
            return true;
        };
        let before = self.diags.len();
        let i = match self.array_index(index, elems.len()) {
            Some(ArrayIndex::RunTime(i)) => i,
            // A compile-time index: an error, or the plain field the
            // general assignment writes (and checks again).
            Some(ArrayIndex::Const(_)) => return false,
            None => {
                self.diags.truncate(before);
                return false;
            }
        };
        let Some(elem_ty) = elems.first().map(|e| e.ty.clone()) else {
            return true;
        };
        if !self.writable(base) {
            return true;
        }
        let i = self.evaluated_once(i, "index", out);
        let Some(v) = self.assigned_value(rhs, &elem_ty) else {
            return true;
        };
        // Bound once, not written out in every branch.
        let v = self.bound_to_local(v, "value", out);
        // Positions the index's type cannot hold are never written.
        let reachable = reachable_positions(&i.ty, elems.len());
        let mut chain: Option<ir::Block> = None;
        for (k, e) in elems.into_iter().take(reachable).enumerate().rev() {
            let write = vec![Stmt::Assign(e, v.clone(), span)];
            chain = Some(vec![Stmt::If(index_is(&i, k, span), write, chain)]);
        }
        out.extend(chain.unwrap_or_default());
        true
    }

    /// `x`, or when it calls something, a hidden local (named `what`)
    /// declared in `out` with it as its value: for a value read more than
    /// once, or maybe not at all, that must be evaluated exactly once.
    fn evaluated_once(&mut self, x: Expr, what: &str, out: &mut ir::Block) -> Expr {
        if !has_call(&x) {
            return x;
        }
        self.bound_to_local(x, what, out)
    }

    /// A hidden local (named `what`) declared in `out` with `x` as its
    /// value; `x` itself outside a body.
    fn bound_to_local(&mut self, x: Expr, what: &str, out: &mut ir::Block) -> Expr {
        let Some(body) = self.body.as_mut() else {
            return x;
        };
        let idx = body.vars.len() as u32;
        body.vars.push(ir::Var {
            name: what.into(),
            ty: x.ty.clone(),
            param: None,
        });
        let local = Expr {
            kind: ExprKind::Var(ir::VarRef::Local(idx)),
            ty: x.ty.clone(),
            span: x.span,
        };
        out.push(Stmt::Decl(idx, Some(x)));
        local
    }

    /// Evaluates the stack indices of l-value `e` that call something into
    /// hidden locals declared in `out` before the assignment: P4_16 (§8,
    /// §12.1) evaluates the left side of `=` before the right (p4c and BMv2
    /// agree), and the generated `place = value` would run the right side
    /// first.
    pub(super) fn hoist_called_indices(&mut self, e: &mut Expr, out: &mut ir::Block) {
        match &mut e.kind {
            ExprKind::Index(b, i) => {
                self.hoist_called_indices(b, out);
                let placeholder = Expr {
                    kind: ExprKind::Int(0),
                    ty: i.ty.clone(),
                    span: i.span,
                };
                let value = std::mem::replace(&mut **i, placeholder);
                **i = self.evaluated_once(value, "index", out);
            }
            ExprKind::Member(b, _)
            | ExprKind::StackNext(b)
            | ExprKind::StackLast(b)
            | ExprKind::Slice(b, ..) => self.hoist_called_indices(b, out),
            _ => {}
        }
    }

    /// Evaluates the stack indices of compound-assignment target `e` that
    /// call something into hidden locals declared in `out`, and makes `e`
    /// read those: `lhs op= rhs` evaluates `lhs` once (P4_16 v1.2.5
    /// §12.4; p4c's opassign2-bmv2, `a[f(i)].x |= v`), where `lhs = lhs op
    /// rhs` would call `f` twice. The locals' names cannot be written in
    /// P4, so nothing else sees them.
    pub(super) fn bind_called_indices(&mut self, e: &mut ast::Expr, out: &mut ir::Block) {
        match &mut e.kind {
            ast::ExprKind::Index { base, index } => {
                self.bind_called_indices(base, out);
                // A bad index is reported when the assignment checks it.
                let before = self.diags.len();
                let Some(TE::Typed(x)) = self.expr_any(index) else {
                    self.diags.truncate(before);
                    return;
                };
                if !has_call(&x) {
                    return;
                }
                let Some(body) = self.body.as_mut() else {
                    return;
                };
                let idx = body.vars.len() as u32;
                body.vars.push(ir::Var {
                    name: "index".into(),
                    ty: x.ty.clone(),
                    param: None,
                });
                let ty = x.ty.clone();
                out.push(Stmt::Decl(idx, Some(x)));
                let span = index.span;
                let name = ast::Ident {
                    name: format!("index#{idx}"),
                    span,
                };
                self.declare(
                    &name,
                    Sym::Var(ir::VarRef::Local(idx), ty, false, None, Vec::new()),
                );
                **index = ast::Expr {
                    kind: ast::ExprKind::Name(ast::PathName {
                        top_level: false,
                        ident: name,
                        span,
                    }),
                    span,
                };
            }
            ast::ExprKind::Member { base, .. } | ast::ExprKind::Slice { base, .. } => {
                self.bind_called_indices(base, out)
            }
            _ => {}
        }
    }
}
