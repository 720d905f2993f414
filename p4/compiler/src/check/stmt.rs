//! Statement checking (P4_16 spec §11): assignments, conditionals,
//! switches, calls, `exit`/`return`, local declarations.
//!
//! Contract: statements that fail to check are dropped after their
//! diagnostics are reported, so checking goes on and every error is found.
//! A slice assignment `x[h:l] = v` becomes `x = (x & ~m) | ((v << l) & m)`.

mod assign;
mod loops;
mod slices;
mod switch;

use super::{BodyKind, Checker, Sym, codes};
use crate::front::ast;
use crate::ir::{self, ExprKind, Stmt, Ty};

impl Checker {
    /// Checks a block in a new scope.
    pub(crate) fn block(&mut self, b: &ast::Block) -> ir::Block {
        // A block statement is an element too (P4_16 §18.2): its structured
        // annotations hold compile-time known values, in the outer scope.
        self.structured_annotations(&b.annotations, &[]);
        self.push_scope();
        let out = self.stmts(&b.stmts);
        self.pop_scope();
        out
    }

    /// Checks statements in the current scope.
    pub(crate) fn stmts(&mut self, stmts: &[ast::Stmt]) -> ir::Block {
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(s, &mut out);
        }
        out
    }

    fn stmt_as_block(&mut self, s: &ast::Stmt) -> ir::Block {
        match &s.kind {
            ast::StmtKind::Block(b) => self.block(b),
            _ => {
                self.push_scope();
                let mut out = Vec::new();
                self.stmt(s, &mut out);
                self.pop_scope();
                out
            }
        }
    }

    /// Declares a local of the current body and returns its index.
    /// `nominal` is the type it was declared with for the nominal checks
    /// (see [`Sym::Var`]).
    pub(crate) fn new_local(
        &mut self,
        name: &ast::Ident,
        ty: Ty,
        nominal: Option<Option<String>>,
    ) -> Option<u32> {
        let body = self.body.as_mut()?;
        let idx = body.vars.len() as u32;
        body.vars.push(ir::Var {
            name: name.name.clone(),
            ty: ty.clone(),
            param: None,
        });
        self.declare(
            name,
            Sym::Var(ir::VarRef::Local(idx), ty, true, nominal, Vec::new()),
        );
        Some(idx)
    }

    fn stmt(&mut self, s: &ast::Stmt, out: &mut ir::Block) {
        // Hidden locals for `_` arguments of the calls in this statement
        // (not in the statements nested in it) are declared just before it.
        let outer = std::mem::take(&mut self.pending_decls);
        let start = out.len();
        self.stmt_inner(s, out);
        let mine = std::mem::replace(&mut self.pending_decls, outer);
        out.splice(start..start, mine);
    }

    fn stmt_inner(&mut self, s: &ast::Stmt, out: &mut ir::Block) {
        use ast::StmtKind as K;
        match &s.kind {
            K::Assign { lhs, rhs } => {
                if let ast::ExprKind::Slice {
                    base,
                    lo,
                    width: Some(width),
                    ..
                } = &lhs.kind
                {
                    match self.run_time_low_bit(lo, true) {
                        None => return,
                        Some(Some(low)) => {
                            return self.plus_slice_assign(base, low, width, rhs, s.span, out);
                        }
                        Some(None) => {}
                    }
                }
                // Slice assignment.
                if let ast::ExprKind::Slice { base, .. } = &lhs.kind {
                    let Some(target) = self.lvalue(lhs) else {
                        return;
                    };
                    let ExprKind::Slice(_, hi, lo) = target.kind else {
                        // Folded away: cannot happen for an l-value.
                        self.bug(lhs.span, "slice l-value folded");
                        return;
                    };
                    let Some(mut whole) = self.expr(base, None) else {
                        return;
                    };
                    self.hoist_called_indices(&mut whole, out);
                    let Some(v) = self.expr(rhs, Some(&Ty::Bit(hi - lo + 1))) else {
                        return;
                    };
                    // `x[h1:l1][h2:l2] = v` writes `x[h1:l1]` with the outer
                    // slice replaced: peel slices until the target is storage.
                    let (mut whole, mut v, mut hi, mut lo) = (whole, v, hi, lo);
                    loop {
                        let Some(new) = Self::slice_store(&whole, v, hi, lo, s.span) else {
                            return;
                        };
                        match whole.kind {
                            ExprKind::Slice(inner, h, l) => {
                                (whole, v, hi, lo) = (*inner, new, h, l);
                            }
                            _ => {
                                out.push(Stmt::Assign(whole, new, s.span));
                                return;
                            }
                        }
                    }
                }
                if let ast::ExprKind::Index { base, index } = &lhs.kind
                    && self.run_time_array_assign(base, index, rhs, s.span, out)
                {
                    return;
                }
                let Some(mut l) = self.lvalue(lhs) else {
                    let _ = self.expr_any(rhs);
                    return;
                };
                self.hoist_called_indices(&mut l, out);
                let ty = l.ty.clone();
                if let Some(r) = self.assigned_value(rhs, &ty) {
                    self.check_nominal(&l, &r, s.span, "assign");
                    out.push(Stmt::Assign(l, r, s.span));
                }
            }
            K::Call(e) => {
                let ast::ExprKind::Call {
                    callee,
                    type_args,
                    args,
                } = &e.kind
                else {
                    self.error(codes::WRONG_KIND, e.span, "expected a call");
                    return;
                };
                let Some(x) = self.call(callee, type_args, args, e.span) else {
                    return;
                };
                match x.kind {
                    ExprKind::Call(c) => out.push(Stmt::Call(*c, s.span)),
                    // `pkt.lookahead<T>()` with its value unused still fails
                    // with PacketTooShort when fewer bits than T's remain
                    // (P4_16 §12.8.3; p4c keeps the call): read it into a
                    // hidden local so the check runs.
                    ExprKind::Lookahead => {
                        if let Some(body) = self.body.as_mut() {
                            let idx = body.vars.len() as u32;
                            body.vars.push(ir::Var {
                                name: "lookahead".into(),
                                ty: x.ty.clone(),
                                param: None,
                            });
                            out.push(Stmt::Decl(idx, Some(x)));
                        }
                    }
                    _ => {
                        // isValid() etc. as a statement: no effect.
                        self.warn(codes::IGNORED, s.span, "this call has no effect");
                    }
                }
            }
            K::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let c = self.expr(cond, Some(&Ty::Bool));
                let t = self.stmt_as_block(then_branch);
                let e = else_branch.as_ref().map(|b| self.stmt_as_block(b));
                if let Some(c) = c {
                    match c.kind {
                        ExprKind::Bool(true) => out.push(Stmt::Block(t)),
                        ExprKind::Bool(false) => {
                            if let Some(e) = e {
                                out.push(Stmt::Block(e))
                            }
                        }
                        _ => out.push(Stmt::If(c, t, e)),
                    }
                }
            }
            K::Block(b) => {
                let b = self.block(b);
                out.push(Stmt::Block(b));
            }
            K::Switch { expr, cases } => self.switch(expr, cases, s, out),
            K::Exit => match self.body.as_ref().map(|b| b.kind) {
                Some(BodyKind::Apply | BodyKind::Action) => out.push(Stmt::Exit),
                _ => self.error(
                    codes::NOT_ALLOWED_HERE,
                    s.span,
                    "`exit` may only be used in controls and actions",
                ),
            },
            K::Return(v) => {
                let kind = self.body.as_ref().map(|b| b.kind);
                let ret = self
                    .body
                    .as_ref()
                    .map(|b| b.ret.clone())
                    .unwrap_or(Ty::Void);
                match (kind, v) {
                    (Some(BodyKind::Parser), _) => self.error(
                        codes::NOT_ALLOWED_HERE,
                        s.span,
                        "`return` may not be used in parsers",
                    ),
                    (_, None) if ret == Ty::Void => out.push(Stmt::Return(None)),
                    (_, None) => self.error(
                        codes::TYPE_MISMATCH,
                        s.span,
                        format!("this function must return {}", self.ty_name(&ret)),
                    ),
                    (_, Some(e)) if ret == Ty::Void => self.error(
                        codes::TYPE_MISMATCH,
                        e.span,
                        "this block does not return a value",
                    ),
                    (_, Some(e)) => {
                        if let Some(x) = self.expr(e, Some(&ret)) {
                            if let Some(n) = self.return_nominal.clone() {
                                self.check_nominal_against(&n, &x, e.span, "return");
                            }
                            out.push(Stmt::Return(Some(x)));
                        }
                    }
                }
            }
            K::Var(v) => {
                if let ast::TypeKind::List(elem) = &v.ty.kind {
                    let Some((ty, init)) = self.list_decl(elem, v.init.as_ref(), v.span) else {
                        return;
                    };
                    if let Some(i) = self.new_local(&v.name, ty, Some(None)) {
                        out.push(Stmt::Decl(i, Some(init)));
                    }
                    return;
                }
                let Some(ty) = self.local_ty(&v.ty) else {
                    return;
                };
                let init = match &v.init {
                    Some(e) => match self.assigned_value(e, &ty) {
                        Some(x) => Some(x),
                        None => {
                            // Declared all the same, so later uses do not
                            // add "cannot find" errors.
                            self.new_local(&v.name, ty, None);
                            return;
                        }
                    },
                    None => None,
                };
                let nominal = self.nominal_of_type(&v.ty);
                if let Some(init) = &init {
                    self.check_declared_nominal(&v.ty, init, v.span);
                }
                let i = self.new_local(&v.name, ty, Some(nominal));
                self.note_tuple_nominals(&v.name, &v.ty);
                if let Some(i) = i {
                    out.push(Stmt::Decl(i, init));
                }
            }
            K::Const(c) => {
                self.const_decl(c);
            }
            // p4c refuses instances inside blocks ("instances cannot be in a
            // control 'apply' block"): an instance is an object of the
            // control or parser, declared with its locals. In an apply
            // block it is still declared, so its uses check without
            // follow-on errors.
            K::Instantiation(i) => {
                self.error(
                    codes::NOT_ALLOWED_HERE,
                    i.span,
                    format!(
                        "`{}` is an instance: instances are declared among a control's or \
                         parser's locals, not inside a block",
                        i.name.name
                    ),
                );
                if let Some((BodyKind::Apply, Some(h))) =
                    self.body.as_ref().map(|b| (b.kind, b.control))
                {
                    self.control_instantiation(i, h);
                }
            }
            K::Empty => {}
            K::CompoundAssign { op, lhs, rhs } => {
                // `lhs op= rhs` is `lhs = lhs op rhs` (P4_16 v1.2.5 §12.4),
                // `lhs` evaluated once.
                let mut lhs = lhs.clone();
                self.bind_called_indices(&mut lhs, out);
                let lhs = &lhs;
                let value = ast::Expr {
                    kind: ast::ExprKind::Binary {
                        op: *op,
                        lhs: Box::new(lhs.clone()),
                        rhs: Box::new(rhs.clone()),
                    },
                    span: s.span,
                };
                let assign = ast::Stmt {
                    kind: K::Assign {
                        lhs: lhs.clone(),
                        rhs: value,
                    },
                    span: s.span,
                };
                self.stmt(&assign, out);
            }
            K::Break | K::Continue => {
                if self.body.as_ref().is_none_or(|b| b.loops == 0) {
                    let what = if matches!(s.kind, K::Break) {
                        "break"
                    } else {
                        "continue"
                    };
                    self.error_label(
                        codes::NOT_ALLOWED_HERE,
                        s.span,
                        format!("`{what}` may only be used inside a `for` loop"),
                        "not in a loop",
                    );
                } else if matches!(s.kind, K::Break) {
                    out.push(Stmt::Break);
                } else {
                    out.push(Stmt::Continue);
                }
            }
            K::For {
                init,
                cond,
                update,
                body,
            } => {
                self.push_scope();
                let mut block = self.stmts(init);
                let cond = cond.as_ref().and_then(|c| self.expr(c, Some(&Ty::Bool)));
                let body = self.loop_body(body);
                let update = self.stmts(update);
                self.pop_scope();
                block.push(Stmt::For { cond, update, body });
                out.push(Stmt::Block(block));
            }
            K::ForIn {
                ty,
                name,
                collection,
                range_end,
                body,
            } => self.for_in(ty.as_ref(), name, collection, range_end.as_ref(), body, out),
        }
    }
}
