//! Bit-slice assignments: `x[h:l] = v` becomes
//! `x = (x & ~m) | ((v << l) & m)`, and `x[low +: w] = v` with a run-time
//! `low` shifts the mask at run time (P4_16 spec §8.6).

use crate::check::{Checker, codes};
use crate::front::ast;
use crate::ir::{self, BinOp, Expr, ExprKind, Stmt, Ty};

impl Checker {
    /// The value `whole` takes when its bits `hi..=lo` become `v`:
    /// `(whole & !field) | ((v as whole) << lo & field)` (P4_16 bit
    /// slices: assigning a slice changes only those bits). `None` when `whole` is
    /// not a bit string (an error was reported for it already).
    pub(super) fn slice_store(
        whole: &Expr,
        v: Expr,
        hi: u32,
        lo: u32,
        sp: crate::diag::Span,
    ) -> Option<Expr> {
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
            use crate::check::fold::{Wide, wide_kind};
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
            use crate::check::fold::{Wide, wide_kind};
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
    pub(super) fn plus_slice_assign(
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
}
