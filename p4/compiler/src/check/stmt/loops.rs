//! `for` loops over a range, a list, a list value or a header stack, and
//! the loop depth that `break` and `continue` need (P4_16 spec §12.8).

use crate::check::expr::TE;
use crate::check::{Checker, codes};
use crate::front::ast;
use crate::ir::visit::has_call;
use crate::ir::{self, Expr, ExprKind, Stmt, Ty};

impl Checker {
    /// A loop body: one more enclosing loop for `break`/`continue`.
    pub(super) fn loop_body(&mut self, body: &ast::Stmt) -> ir::Block {
        if let Some(b) = self.body.as_mut() {
            b.loops += 1;
        }
        let block = self.stmt_as_block(body);
        if let Some(b) = self.body.as_mut() {
            b.loops = b.loops.saturating_sub(1);
        }
        block
    }

    /// `for (T v in lo .. hi)`, `for (T v in {a, b})` and `for (T v in stack)`.
    pub(super) fn for_in(
        &mut self,
        ty: Option<&ast::Type>,
        name: &ast::Ident,
        collection: &ast::Expr,
        range_end: Option<&ast::Expr>,
        body: &ast::Stmt,
        out: &mut ir::Block,
    ) {
        let declared = match ty {
            Some(t) => match self.ty(t) {
                Some(t) => Some(t),
                None => return,
            },
            None => None,
        };
        self.push_scope();
        let mut block = Vec::new();
        if let Some(hi) = range_end {
            // The bounds take the declared type, or each other's.
            let bounds = match &declared {
                Some(t) => self.expr(collection, Some(t)).zip(self.expr(hi, Some(t))),
                None => match (self.expr_any(collection), self.expr_any(hi)) {
                    (Some(TE::Typed(lo)), Some(h)) => {
                        let t = lo.ty.clone();
                        self.coerce(h, &t, hi.span).map(|h| (lo, h))
                    }
                    (Some(lo), Some(TE::Typed(h))) => {
                        let t = h.ty.clone();
                        self.coerce(lo, &t, collection.span).map(|lo| (lo, h))
                    }
                    (Some(TE::Inf(_)), Some(TE::Inf(_))) => {
                        self.error_label(
                            codes::WIDTH_MISMATCH,
                            collection.span,
                            "cannot infer the type of the loop variable",
                            "give it a type, e.g. `for (bit<8> i in 0 .. 3)`",
                        );
                        None
                    }
                    _ => None,
                },
            };
            let Some((lo, hi_x)) = bounds else {
                self.pop_scope();
                return;
            };
            if !matches!(lo.ty, Ty::Bit(_) | Ty::Int(_)) {
                self.error(
                    codes::TYPE_MISMATCH,
                    collection.span,
                    format!("a range needs integers, not {}", self.ty_name(&lo.ty)),
                );
                self.pop_scope();
                return;
            }
            let Some(var) = self.new_local(name, lo.ty.clone(), None) else {
                self.pop_scope();
                return;
            };
            block.push(Stmt::Decl(var, None));
            let body = self.loop_body(body);
            block.push(Stmt::ForRange {
                var,
                lo,
                hi: hi_x,
                body,
            });
        } else if let ast::ExprKind::List(items) = &collection.kind {
            self.for_in_list(declared, name, items, collection.span, body, &mut block);
        } else {
            let Some(stack) = self.expr(collection, None) else {
                self.pop_scope();
                return;
            };
            if let Ty::Tuple(items) = &stack.ty {
                self.for_in_tuple(
                    declared,
                    name,
                    stack.clone(),
                    items.clone(),
                    body,
                    &mut block,
                );
                self.pop_scope();
                out.push(Stmt::Block(block));
                return;
            }
            let Ty::Stack(elem, _) = &stack.ty else {
                self.unsupported(
                    collection.span,
                    "`for .. in` over anything but a range, a list or a header stack",
                );
                self.pop_scope();
                return;
            };
            let elem = (**elem).clone();
            if let Some(d) = &declared
                && *d != elem
            {
                let msg = format!(
                    "the loop variable is {}, the stack holds {}",
                    self.ty_name(d),
                    self.ty_name(&elem)
                );
                self.error(codes::TYPE_MISMATCH, name.span, msg);
                self.pop_scope();
                return;
            }
            let Some(var) = self.new_local(name, elem, None) else {
                self.pop_scope();
                return;
            };
            block.push(Stmt::Decl(var, None));
            let body = self.loop_body(body);
            block.push(Stmt::ForStack { var, stack, body });
        }
        self.pop_scope();
        out.push(Stmt::Block(block));
    }

    /// `for (T v in {a, b, c}) body` (P4_16 v1.2.5 §12.8): `v` takes each
    /// element in turn. Generated as a loop over a hidden index
    /// `0 .. n - 1` whose body first sets `v` to the element the index
    /// names, so `break` and `continue` keep their meaning.
    fn for_in_list(
        &mut self,
        declared: Option<Ty>,
        name: &ast::Ident,
        items: &[ast::Expr],
        span: crate::diag::Span,
        body: &ast::Stmt,
        block: &mut ir::Block,
    ) {
        // The element type: the declared one, or the first typed element's.
        let mut checked = Vec::new();
        let mut elem = declared;
        for it in items {
            let Some(te) = self.expr_any(it) else { return };
            if elem.is_none()
                && let TE::Typed(x) = &te
            {
                elem = Some(x.ty.clone());
            }
            checked.push((te, it.span));
        }
        let Some(elem) = elem else {
            self.error_label(
                codes::WIDTH_MISMATCH,
                span,
                "cannot infer the type of the loop variable",
                "give it a type, e.g. `for (bit<8> v in {1, 2})`",
            );
            return;
        };
        let mut values = Vec::new();
        for (te, sp) in checked {
            let Some(x) = self.coerce(te, &elem, sp) else {
                return;
            };
            values.push(x);
        }
        self.for_in_values(name, elem, values, span, body, block);
    }

    /// `for (T v in l) body` over a list value `l` (a `list<T>` variable
    /// or parameter: a tuple whose elements are all one type), as
    /// [`Self::for_in_list`] over its elements `l[0]`, `l[1]`, ...
    fn for_in_tuple(
        &mut self,
        declared: Option<Ty>,
        name: &ast::Ident,
        list: Expr,
        items: Vec<Ty>,
        body: &ast::Stmt,
        block: &mut ir::Block,
    ) {
        let span = list.span;
        if has_call(&list) {
            // Each pass reads its element from `list`, which would call
            // again.
            self.unsupported(span, "`for .. in` over a list returned by a call");
            return;
        }
        let Some(elem) = declared.or_else(|| items.first().cloned()) else {
            return; // `{}`: no passes
        };
        if let Some(other) = items.iter().find(|t| **t != elem) {
            let msg = format!(
                "the loop variable is {}, the list holds {}",
                self.ty_name(&elem),
                self.ty_name(other)
            );
            self.error(codes::TYPE_MISMATCH, name.span, msg);
            return;
        }
        let values = (0..items.len() as u32)
            .map(|i| Expr {
                kind: ExprKind::Member(Box::new(list.clone()), i),
                ty: elem.clone(),
                span,
            })
            .collect();
        self.for_in_values(name, elem, values, span, body, block);
    }

    /// The loop of [`Self::for_in_list`]: `v`, of type `elem`, takes each
    /// of `values` in turn.
    fn for_in_values(
        &mut self,
        name: &ast::Ident,
        elem: Ty,
        values: Vec<Expr>,
        span: crate::diag::Span,
        body: &ast::Stmt,
        block: &mut ir::Block,
    ) {
        let n = values.len();
        if n == 0 {
            return; // `{}`: no passes
        }
        let Some(var) = self.new_local(name, elem.clone(), None) else {
            return;
        };
        let index_name = ast::Ident {
            // Not a P4 identifier (`#`), so no program name can clash.
            name: format!("for#{}", self.body.as_ref().map_or(0, |b| b.vars.len())),
            span,
        };
        let Some(index) = self.new_local(&index_name, Ty::Bit(32), None) else {
            return;
        };
        block.push(Stmt::Decl(var, None));
        block.push(Stmt::Decl(index, None));
        let int = |v: u128| Expr {
            kind: ExprKind::Int(v),
            ty: Ty::Bit(32),
            span,
        };
        let index_var = Expr {
            kind: ExprKind::Var(ir::VarRef::Local(index)),
            ty: Ty::Bit(32),
            span,
        };
        let Some(chosen) = self.select_by_index(&index_var, values, span) else {
            return;
        };
        let mut inner = vec![Stmt::Assign(
            Expr {
                kind: ExprKind::Var(ir::VarRef::Local(var)),
                ty: elem,
                span,
            },
            chosen,
            span,
        )];
        inner.extend(self.loop_body(body));
        block.push(Stmt::ForRange {
            var: index,
            lo: int(0),
            hi: int(n as u128 - 1),
            body: inner,
        });
    }
}
