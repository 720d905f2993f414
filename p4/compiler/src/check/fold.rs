//! Constant folding of typed IR expressions (P4_16 spec §8: compile-time
//! evaluation uses the same wrap-around arithmetic as run time).
//!
//! Contract: [`fold`] rewrites an expression whose operands are all
//! constants into an [`ExprKind::Int`]/[`ExprKind::Bool`] of the same type
//! and leaves anything else unchanged; it never panics (division by zero is
//! left unfolded). [`const_int`] reads back a folded integer.

use crate::ir::*;
use p4_target::bits;

/// The value of a folded integer-like constant (bit, int, serializable enum
/// member, error code, plain enum index).
pub fn const_int(e: &Expr) -> Option<u128> {
    match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Bool(b) => Some(*b as u128),
        ExprKind::ErrorCode(c) => Some(*c as u128),
        _ => None,
    }
}

fn width_signed(ty: &Ty, prog: &Program) -> Option<(u32, bool)> {
    match ty {
        Ty::Bit(w) => Some((*w, false)),
        Ty::Int(w) => Some((*w, true)),
        Ty::SerEnum(_) => ty.scalar_width(prog).map(|w| (w, ty.is_signed(prog))),
        _ => None,
    }
}

/// Folds one node whose children are already folded.
pub fn fold(e: Expr, prog: &Program) -> Expr {
    let span = e.span;
    let ty = e.ty.clone();
    let int = |v: u128| Expr {
        kind: ExprKind::Int(v),
        ty: ty.clone(),
        span,
    };
    let boolean = |b: bool| Expr {
        kind: ExprKind::Bool(b),
        ty: Ty::Bool,
        span,
    };
    match &e.kind {
        ExprKind::Unary(op, a) => match (op, &a.kind) {
            (UnOp::Not, ExprKind::Bool(b)) => boolean(!b),
            (UnOp::BitNot, ExprKind::Int(v)) => match width_signed(&ty, prog) {
                Some((w, _)) => int(bits::wrap(!v, w)),
                None => e,
            },
            (UnOp::Neg, ExprKind::Int(v)) => match width_signed(&ty, prog) {
                Some((w, _)) => int(bits::wrap(0u128.wrapping_sub(*v), w)),
                None => e,
            },
            _ => e,
        },
        ExprKind::Binary(op, a, b) => {
            if let (ExprKind::Bool(x), ExprKind::Bool(y)) = (&a.kind, &b.kind) {
                return match op {
                    BinOp::And => boolean(*x && *y),
                    BinOp::Or => boolean(*x || *y),
                    BinOp::Eq => boolean(x == y),
                    BinOp::Ne => boolean(x != y),
                    _ => e,
                };
            }
            let (x, y) = match (&a.kind, &b.kind) {
                (ExprKind::Int(x), ExprKind::Int(y)) => (*x, *y),
                _ => return e,
            };
            let (aw, signed) = match width_signed(&a.ty, prog) {
                Some(ws) => ws,
                None => return e,
            };
            let w = width_signed(&ty, prog).map(|p| p.0).unwrap_or(aw);
            match op {
                BinOp::Add => int(bits::wrap(x.wrapping_add(y), w)),
                BinOp::Sub => int(bits::wrap(x.wrapping_sub(y), w)),
                BinOp::Mul => int(bits::wrap(x.wrapping_mul(y), w)),
                BinOp::Div if y != 0 => int(x / y),
                BinOp::Mod if y != 0 => int(x % y),
                BinOp::SatAdd if signed => int(bits::sat_add_s(x, y, w)),
                BinOp::SatAdd => int(bits::sat_add_u(x, y, w)),
                BinOp::SatSub if signed => int(bits::sat_sub_s(x, y, w)),
                BinOp::SatSub => int(bits::sat_sub_u(x, y)),
                BinOp::BitAnd => int(x & y),
                BinOp::BitOr => int(x | y),
                BinOp::BitXor => int(x ^ y),
                BinOp::Shl => int(bits::shl(x, y, w)),
                BinOp::Shr if signed => int(bits::shr_s(x, y, w)),
                BinOp::Shr => int(bits::shr_u(x, y, w)),
                BinOp::Eq => boolean(x == y),
                BinOp::Ne => boolean(x != y),
                BinOp::Lt if signed => boolean(bits::lt_s(x, y, aw)),
                BinOp::Le if signed => boolean(!bits::lt_s(y, x, aw)),
                BinOp::Gt if signed => boolean(bits::lt_s(y, x, aw)),
                BinOp::Ge if signed => boolean(!bits::lt_s(x, y, aw)),
                BinOp::Lt => boolean(x < y),
                BinOp::Le => boolean(x <= y),
                BinOp::Gt => boolean(x > y),
                BinOp::Ge => boolean(x >= y),
                BinOp::Concat => match width_signed(&b.ty, prog) {
                    Some((bw, _)) => int(bits::concat(x, y, bw)),
                    None => e,
                },
                _ => e,
            }
        }
        ExprKind::Slice(a, hi, lo) => match &a.kind {
            ExprKind::Int(v) if hi >= lo => int(bits::slice(*v, *hi, *lo)),
            _ => e,
        },
        ExprKind::Cast(a) => match (&a.kind, width_signed(&a.ty, prog), width_signed(&ty, prog)) {
            (ExprKind::Int(v), Some((fw, fs)), Some((tw, _))) => int(bits::cast(*v, fw, fs, tw)),
            (ExprKind::Bool(b), None, Some(_)) => int(*b as u128),
            (ExprKind::Int(v), Some(_), None) if ty == Ty::Bool => boolean(*v != 0),
            _ => e,
        },
        ExprKind::Mux(c, a, b) => match &c.kind {
            ExprKind::Bool(true) => (**a).clone(),
            ExprKind::Bool(false) => (**b).clone(),
            _ => e,
        },
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: u128, w: u32) -> Expr {
        Expr {
            kind: ExprKind::Int(v),
            ty: Ty::Bit(w),
            span: Span::default(),
        }
    }

    #[test]
    fn folds_wrapping_arithmetic() {
        let prog = Program::default();
        let e = Expr {
            kind: ExprKind::Binary(BinOp::Add, Box::new(int(250, 8)), Box::new(int(10, 8))),
            ty: Ty::Bit(8),
            span: Span::default(),
        };
        assert_eq!(const_int(&fold(e, &prog)), Some(4));
    }

    #[test]
    fn leaves_division_by_zero_alone() {
        let prog = Program::default();
        let e = Expr {
            kind: ExprKind::Binary(BinOp::Div, Box::new(int(1, 8)), Box::new(int(0, 8))),
            ty: Ty::Bit(8),
            span: Span::default(),
        };
        assert_eq!(const_int(&fold(e, &prog)), None);
    }
}
