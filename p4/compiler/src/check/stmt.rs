//! Statement checking (P4_16 spec §11): assignments, conditionals,
//! switches, calls, `exit`/`return`, local declarations.
//!
//! Contract: statements that fail to check are dropped after their
//! diagnostics are reported, so checking goes on and every error is found.
//! A slice assignment `x[h:l] = v` becomes `x = (x & ~m) | ((v << l) & m)`.

use super::expr::{ArrayIndex, TE, index_is, reachable_positions};
use super::{BodyKind, Checker, Sym, codes, fold};
use crate::front::ast;
use crate::ir::visit::has_call;
use crate::ir::{self, BinOp, Expr, ExprKind, Stmt, Ty};

impl Checker {
    /// Checks a block in a new scope.
    pub(crate) fn block(&mut self, b: &ast::Block) -> ir::Block {
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

    /// The value `e` assigned to (or initialising) a place of type `ty`.
    /// An integer constant does not convert implicitly to a serializable
    /// enum here (P4_16 §8.3; p4c's enumCast error sample), though it does
    /// in select cases and comparisons.
    fn assigned_value(&mut self, e: &ast::Expr, ty: &Ty) -> Option<ir::Expr> {
        if let Ty::SerEnum(_) = ty {
            let te = self.expr_any(e)?;
            if let super::expr::TE::Inf(_) = te {
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

    /// `s.a[i] = v` where `a` is an array of scalars and `i` a run-time
    /// index: `if (i == 0) s.a[0] = v; else if (i == 1) ..`, so an index
    /// out of range writes nothing (as a header stack's write does, P4_16
    /// §8.18). `i` and then `v` are evaluated first, once each (P4_16
    /// §12.1). `false` when `base[index]` is no such element (a
    /// compile-time index is a plain field); `true` once handled,
    /// errors included.
    fn run_time_array_assign(
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
    fn hoist_called_indices(&mut self, e: &mut Expr, out: &mut ir::Block) {
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
    fn bind_called_indices(&mut self, e: &mut ast::Expr, out: &mut ir::Block) {
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

    /// The value `whole` takes when its bits `hi..=lo` become `v`:
    /// `(whole & !field) | ((v as whole) << lo & field)` (P4_16 bit
    /// slices: assigning a slice changes only those bits). `None` when `whole` is
    /// not a bit string (an error was reported for it already).
    fn slice_store(whole: &Expr, v: Expr, hi: u32, lo: u32, sp: crate::diag::Span) -> Option<Expr> {
        let w = match whole.ty {
            Ty::Bit(w) | Ty::Int(w) => w,
            _ => return None,
        };
        let wt = whole.ty.clone();
        let bin = |op, a: Expr, b: Expr| Expr {
            kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
            ty: wt.clone(),
            span: sp,
        };
        let widened = Expr {
            kind: ExprKind::Cast(Box::new(v)),
            ty: wt.clone(),
            span: sp,
        };
        let shifted = bin(
            BinOp::Shl,
            widened,
            Expr {
                kind: ExprKind::Int(lo as u128),
                ty: Ty::Bit(32),
                span: sp,
            },
        );
        let (keep, field) = if w > 128 {
            use super::fold::{Wide, wide_kind};
            let field = Wide::ones(hi + 1).xor(Wide::ones(lo));
            (wide_kind(field.not(w), w), wide_kind(field, w))
        } else {
            let mask = p4_target::bits::mask(hi - lo + 1) << lo;
            (
                ExprKind::Int(!mask & p4_target::bits::mask(w)),
                ExprKind::Int(mask),
            )
        };
        let konst = |kind| Expr {
            kind,
            ty: wt.clone(),
            span: sp,
        };
        let kept = bin(BinOp::BitAnd, whole.clone(), konst(keep));
        Some(bin(
            BinOp::BitOr,
            kept,
            bin(BinOp::BitAnd, shifted, konst(field)),
        ))
    }

    /// [`Self::slice_store`] for `whole[low +: width] = v` with a run-time
    /// `low`: the field mask is shifted into place at run time, and bits of
    /// `v` shifted past the top of `whole` are dropped (P4_16 v1.2.5 §8.6).
    fn slice_store_at(whole: &Expr, v: Expr, width: u32, low: Expr, sp: crate::diag::Span) -> Expr {
        let (w, wt) = match whole.ty {
            Ty::Bit(w) | Ty::Int(w) => (w, whole.ty.clone()),
            _ => unreachable!("only bit strings are sliced"),
        };
        let bin = |op, a: Expr, b: Expr| Expr {
            kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
            ty: wt.clone(),
            span: sp,
        };
        let konst = |kind| Expr {
            kind,
            ty: wt.clone(),
            span: sp,
        };
        let (all, field) = if w > 128 {
            use super::fold::{Wide, wide_kind};
            (wide_kind(Wide::ones(w), w), wide_kind(Wide::ones(width), w))
        } else {
            (
                ExprKind::Int(p4_target::bits::mask(w)),
                ExprKind::Int(p4_target::bits::mask(width)),
            )
        };
        let field_at = bin(BinOp::Shl, konst(field), low.clone());
        let keep = bin(BinOp::BitXor, field_at.clone(), konst(all));
        let widened = Expr {
            kind: ExprKind::Cast(Box::new(v)),
            ty: wt.clone(),
            span: sp,
        };
        let value_at = bin(BinOp::Shl, widened, low);
        bin(
            BinOp::BitOr,
            bin(BinOp::BitAnd, whole.clone(), keep),
            bin(BinOp::BitAnd, value_at, field_at),
        )
    }

    /// `base[low +: width] = rhs` with a run-time `low`.
    fn plus_slice_assign(
        &mut self,
        base: &ast::Expr,
        low: Expr,
        width: &ast::Expr,
        rhs: &ast::Expr,
        sp: crate::diag::Span,
        out: &mut ir::Block,
    ) {
        let Some(mut whole) = self.lvalue(base) else {
            return;
        };
        let w = match whole.ty {
            Ty::Bit(w) | Ty::Int(w) if !matches!(whole.kind, ExprKind::Slice(..)) => w,
            Ty::Bit(_) | Ty::Int(_) => {
                self.unsupported(
                    base.span,
                    "`+:` with a run-time low bit inside another slice",
                );
                return;
            }
            _ => {
                let ty = self.ty_name(&whole.ty);
                self.error(
                    codes::TYPE_MISMATCH,
                    base.span,
                    format!("{ty} cannot be sliced"),
                );
                return;
            }
        };
        self.hoist_called_indices(&mut whole, out);
        let Some(width) = self.plus_slice_width(width, w, sp) else {
            return;
        };
        let Some(v) = self.expr(rhs, Some(&Ty::Bit(width))) else {
            return;
        };
        let new = Self::slice_store_at(&whole, v, width, low, sp);
        out.push(Stmt::Assign(whole, new, sp));
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

    /// A loop body: one more enclosing loop for `break`/`continue`.
    fn loop_body(&mut self, body: &ast::Stmt) -> ir::Block {
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
    fn for_in(
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

    fn switch(
        &mut self,
        expr: &ast::Expr,
        cases: &[ast::SwitchCase],
        s: &ast::Stmt,
        out: &mut ir::Block,
    ) {
        // p4c's front end and BMv2: "switch statements not supported in
        // actions" (issue3299); an action body is one straight-line
        // primitive list in BMv2's JSON, where `if` is predicated but a
        // `switch` has no form.
        if self.body.as_ref().map(|b| b.kind) == Some(BodyKind::Action) {
            self.error_label(
                codes::NOT_ALLOWED_HERE,
                expr.span,
                "`switch` statements are not allowed in actions (p4c and BMv2 refuse them); use `if`, or switch in the apply block",
                "switch inside an action",
            );
        }
        // p4c's grammar has no `switch` among parser statements (a parser
        // state chooses with `transition select`); its BMv2 back end has
        // no form for one there either. Ours took it as in a control.
        if self.body.as_ref().map(|b| b.kind) == Some(BodyKind::Parser) {
            self.error_label(
                codes::NOT_ALLOWED_HERE,
                expr.span,
                "`switch` statements are not allowed in parsers (p4c's grammar has none there); use `transition select`, or `if`",
                "switch inside a parser state",
            );
        }
        // P4_16 §12.7.3: `default` comes last (p4c rejects it elsewhere).
        for c in cases.iter().take(cases.len().saturating_sub(1)) {
            if let ast::SwitchLabel::Default(sp) = &c.label {
                self.error_label(
                    codes::BAD_SELECT,
                    *sp,
                    "`default` must be the last switch label",
                    "not last",
                );
            }
        }
        // `switch (t.apply().action_run)`.
        if let ast::ExprKind::Member { base, member } = &expr.kind
            && member.name == "action_run"
            && let ast::ExprKind::Call { callee, args, .. } = &base.kind
            && let ast::ExprKind::Member {
                base: tb,
                member: m,
            } = &callee.kind
            && let (ast::ExprKind::Name(p), "apply", true) =
                (&tb.kind, m.name.as_str(), args.is_empty())
            && let Some(Sym::Table(t)) = self.lookup(p).cloned()
        {
            if self.body.as_ref().map(|b| b.kind) != Some(BodyKind::Apply) {
                self.error(
                    codes::NOT_ALLOWED_HERE,
                    expr.span,
                    "tables may only be applied in a control's apply block",
                );
                return;
            }
            let allowed = self.prog.tables[t].actions.clone();
            let mut ir_cases = Vec::new();
            for c in cases {
                let body = c.body.as_ref().map(|b| self.block(b));
                match &c.label {
                    ast::SwitchLabel::Default(_) => ir_cases.push(ir::ActionCase {
                        actions: vec![],
                        is_default: true,
                        body,
                    }),
                    ast::SwitchLabel::Expr(e) => {
                        let ast::ExprKind::Name(an) = &e.kind else {
                            self.error(codes::BAD_ACTION_REF, e.span, "expected an action name");
                            continue;
                        };
                        match self.lookup(an).cloned() {
                            Some(Sym::Action(a))
                                if ir_cases
                                    .iter()
                                    .any(|c: &ir::ActionCase| c.actions.contains(&a)) =>
                            {
                                self.duplicate_label(e.span)
                            }
                            Some(Sym::Action(a)) if allowed.contains(&a) => {
                                ir_cases.push(ir::ActionCase {
                                    actions: vec![a],
                                    is_default: false,
                                    body,
                                })
                            }
                            _ => self.error_label(
                                codes::BAD_ACTION_REF,
                                e.span,
                                format!(
                                    "`{}` is not an action of table `{}`",
                                    an.ident.name, self.prog.tables[t].name
                                ),
                                "not in the table's actions",
                            ),
                        }
                    }
                }
            }
            out.push(Stmt::SwitchAction(t, ir_cases));
            return;
        }
        let Some(v) = self.expr(expr, None) else {
            return;
        };
        if !matches!(
            v.ty,
            Ty::Bit(_) | Ty::Int(_) | Ty::Enum(_) | Ty::SerEnum(_) | Ty::Error
        ) {
            self.error(
                codes::TYPE_MISMATCH,
                expr.span,
                format!("cannot switch on {}", self.ty_name(&v.ty)),
            );
            return;
        }
        let ty = v.ty.clone();
        let mut ir_cases = Vec::new();
        for c in cases {
            let body = c.body.as_ref().map(|b| self.block(b));
            match &c.label {
                ast::SwitchLabel::Default(_) => ir_cases.push(ir::SwitchCase {
                    labels: vec![],
                    is_default: true,
                    body,
                }),
                ast::SwitchLabel::Expr(e) => {
                    // An integer is not a value of a serializable enum
                    // without a cast (P4_16 §8.3; p4c's issue3623-3).
                    if let (Ty::SerEnum(_), ast::ExprKind::Int(_)) = (&ty, &e.kind) {
                        self.error_label(
                            codes::TYPE_MISMATCH,
                            e.span,
                            format!(
                                "a switch on {} takes members as labels: an integer needs a cast",
                                self.ty_name(&ty)
                            ),
                            "an integer",
                        );
                        continue;
                    }
                    let Some(l) = self.expr(e, Some(&ty)) else {
                        continue;
                    };
                    if fold::const_int(&l).is_none() && !matches!(l.kind, ExprKind::EnumMember(..))
                    {
                        self.error(
                            codes::NOT_CONSTANT,
                            e.span,
                            "switch labels must be constants",
                        );
                        continue;
                    }
                    let same = |a: &ir::Expr, b: &ir::Expr| match (&a.kind, &b.kind) {
                        (ExprKind::EnumMember(x, i), ExprKind::EnumMember(y, j)) => {
                            x == y && i == j
                        }
                        _ => {
                            fold::const_int(a).is_some() && fold::const_int(a) == fold::const_int(b)
                        }
                    };
                    if ir_cases
                        .iter()
                        .any(|c: &ir::SwitchCase| c.labels.iter().any(|x| same(x, &l)))
                    {
                        self.duplicate_label(e.span);
                        continue;
                    }
                    ir_cases.push(ir::SwitchCase {
                        labels: vec![l],
                        is_default: false,
                        body,
                    });
                }
            }
        }
        let _ = s;
        out.push(Stmt::Switch(v, ir_cases));
    }

    fn duplicate_label(&mut self, span: crate::diag::Span) {
        self.error_label(
            codes::DUPLICATE,
            span,
            "this switch label appears twice",
            "duplicate label",
        );
    }
}
