//! Constant folding of typed IR expressions (P4_16 spec §8: compile-time
//! evaluation uses the same wrap-around arithmetic as run time).
//!
//! Contract: [`fold`] rewrites an expression whose operands are all
//! constants into an [`ExprKind::Int`]/[`ExprKind::Bool`] of the same type
//! and leaves anything else unchanged; it never panics (division by zero is
//! left unfolded). [`const_int`] reads back a folded integer.
//!
//! Expressions that involve a type wider than 128 bits fold on [`Wide`]
//! values (exactly, up to [`MAX_WIDTH`] bits) into an [`ExprKind::Int`]
//! when the result fits in 128 bits, an [`ExprKind::WideInt`] otherwise.

use super::MAX_WIDTH;
use crate::ir::*;
use p4_target::bits;

/// A constant of up to [`MAX_WIDTH`] bits, for folding wide expressions.
pub type Wide = p4_target::wide::Bits<{ (MAX_WIDTH / 64) as usize }>;

/// The value of an integer constant of any width.
pub fn const_wide(e: &Expr) -> Option<Wide> {
    match &e.kind {
        ExprKind::WideInt(limbs) => Some(Wide::from_limbs(limbs)),
        _ => const_int(e).map(Wide::from_u128),
    }
}

/// The constant `value` of a `width`-bit type: [`ExprKind::Int`] when the
/// (wrapped) value fits in 128 bits, else [`ExprKind::WideInt`].
pub fn wide_kind(value: Wide, width: u32) -> ExprKind {
    let v = value.wrap(width);
    if v.0[2..].iter().all(|&l| l == 0) {
        ExprKind::Int(v.low_u128())
    } else {
        let n = (width.div_ceil(64) as usize).min(v.0.len());
        ExprKind::WideInt(v.0[..n].into())
    }
}

/// A compile-time integer (`-5`, `1 << 200` folded) converted to a
/// `width`-bit type: its value modulo 2^width (P4_16 §8.9.2), also for
/// negative values and widths above 128 bits.
pub fn int_kind(v: i128, width: u32) -> ExprKind {
    wide_kind(Wide::cast_from_u128(v as u128, 128, true, width), width)
}

fn is_wide(ty: &Ty, prog: &Program) -> bool {
    width_signed(ty, prog).is_some_and(|(w, _)| w > 128)
}

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
    let wide = is_wide(&ty, prog)
        || match &e.kind {
            ExprKind::Unary(_, a) | ExprKind::Slice(a, ..) | ExprKind::Cast(a) => {
                is_wide(&a.ty, prog)
            }
            ExprKind::Binary(_, a, b) => is_wide(&a.ty, prog) || is_wide(&b.ty, prog),
            _ => false,
        };
    if wide {
        return fold_wide(e, prog);
    }
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

/// [`fold`] for expressions that involve a type wider than 128 bits.
fn fold_wide(e: Expr, prog: &Program) -> Expr {
    let span = e.span;
    let ty = e.ty.clone();
    let int = |v: Wide, w: u32| Expr {
        kind: wide_kind(v, w),
        ty: ty.clone(),
        span,
    };
    let boolean = |b: bool| Expr {
        kind: ExprKind::Bool(b),
        ty: Ty::Bool,
        span,
    };
    let out_width = width_signed(&ty, prog).map(|p| p.0);
    match &e.kind {
        ExprKind::Unary(op, a) => match (op, const_wide(a), out_width) {
            (UnOp::BitNot, Some(v), Some(w)) => int(v.not(w), w),
            (UnOp::Neg, Some(v), Some(w)) => int(v.neg(w), w),
            _ => e,
        },
        ExprKind::Binary(op, a, b) => {
            let (Some(x), Some(y)) = (const_wide(a), const_wide(b)) else {
                return e;
            };
            let Some((aw, signed)) = width_signed(&a.ty, prog) else {
                return e;
            };
            let w = out_width.unwrap_or(aw);
            // A shift amount above 2^128 shifts everything out all the same.
            let amount = if y.0[2..].iter().all(|&l| l == 0) {
                y.low_u128()
            } else {
                u128::MAX
            };
            match op {
                BinOp::Add => int(x.add(y, w), w),
                BinOp::Sub => int(x.sub(y, w), w),
                BinOp::Mul => int(x.mul(y, w), w),
                BinOp::Div if !y.is_zero() => int(x.div_rem(y).0, w),
                BinOp::Mod if !y.is_zero() => int(x.div_rem(y).1, w),
                BinOp::SatAdd if signed => int(x.sat_add_s(y, w), w),
                BinOp::SatAdd => int(x.sat_add_u(y, w), w),
                BinOp::SatSub if signed => int(x.sat_sub_s(y, w), w),
                BinOp::SatSub => int(x.sat_sub_u(y, w), w),
                BinOp::BitAnd => int(x.and(y), w),
                BinOp::BitOr => int(x.or(y), w),
                BinOp::BitXor => int(x.xor(y), w),
                BinOp::Shl => int(x.shl(amount, w), w),
                BinOp::Shr if signed => int(x.shr_s(amount, w), w),
                BinOp::Shr => int(x.shr_u(amount, w), w),
                BinOp::Eq => boolean(x == y),
                BinOp::Ne => boolean(x != y),
                BinOp::Lt if signed => boolean(x.lt_s(&y, aw)),
                BinOp::Le if signed => boolean(!y.lt_s(&x, aw)),
                BinOp::Gt if signed => boolean(y.lt_s(&x, aw)),
                BinOp::Ge if signed => boolean(!x.lt_s(&y, aw)),
                BinOp::Lt => boolean(x.lt_u(&y)),
                BinOp::Le => boolean(!y.lt_u(&x)),
                BinOp::Gt => boolean(y.lt_u(&x)),
                BinOp::Ge => boolean(!x.lt_u(&y)),
                BinOp::Concat => match width_signed(&b.ty, prog) {
                    Some((bw, _)) => int(Wide::concat(x, y, bw, w), w),
                    None => e,
                },
                _ => e,
            }
        }
        ExprKind::Slice(a, hi, lo) => match const_wide(a) {
            Some(v) if hi >= lo => int(v.slice(*hi, *lo), hi - lo + 1),
            _ => e,
        },
        ExprKind::Cast(a) => match (const_wide(a), width_signed(&a.ty, prog), out_width) {
            (Some(v), Some((fw, fs)), Some(tw)) => int(Wide::cast_from(v, fw, fs, tw), tw),
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

    fn typed(kind: ExprKind, ty: Ty) -> Expr {
        Expr {
            kind,
            ty,
            span: Span::default(),
        }
    }

    fn bin(op: BinOp, a: Expr, b: Expr, ty: Ty) -> Expr {
        let prog = Program::default();
        fold(
            typed(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty),
            &prog,
        )
    }

    /// `(bit<336>)1 << 200` is 2^200: one bit in limb 3, no truncation to
    /// 128 bits; adding 2^200 - 1 (built as (1 << 200) - 1) gives 2^201 - 1,
    /// and the slice [207:192] of that is 0x1ff (bits 192..=200 set).
    #[test]
    fn folds_wide_constants_above_2_pow_128() {
        let prog = Program::default();
        let w = Ty::Bit(336);
        let one = typed(ExprKind::Int(1), w.clone());
        let p200 = bin(BinOp::Shl, one.clone(), int(200, 32), w.clone());
        let ExprKind::WideInt(limbs) = &p200.kind else {
            panic!("2^200 folded to {:?}", p200.kind);
        };
        assert_eq!(&limbs[..], &[0, 0, 0, 1 << 8, 0, 0]);
        let below = bin(BinOp::Sub, p200.clone(), one.clone(), w.clone());
        let sum = bin(BinOp::Add, p200.clone(), below, w.clone());
        assert_eq!(
            const_wide(&sum),
            Some(Wide::ones(201)),
            "2^200 + (2^200 - 1) = 2^201 - 1"
        );
        let slice = fold(
            typed(ExprKind::Slice(Box::new(sum), 207, 192), Ty::Bit(16)),
            &prog,
        );
        assert_eq!(const_int(&slice), Some(0x1ff));
        // Wrap-around at the width: 2^335 + 2^335 = 0 in bit<336>.
        let top = bin(BinOp::Shl, one.clone(), int(335, 32), w.clone());
        assert_eq!(
            const_int(&bin(BinOp::Add, top.clone(), top.clone(), w.clone())),
            Some(0)
        );
        // Comparison of wide constants.
        let lt = bin(BinOp::Lt, p200.clone(), top, Ty::Bool);
        assert!(matches!(lt.kind, ExprKind::Bool(true)));
    }

    /// -1 converted to int<320> is 320 one bits; >> 300 (arithmetic) stays
    /// -1; cast to bit<8> gives 0xff.
    #[test]
    fn folds_wide_signed_values() {
        let prog = Program::default();
        let ty = Ty::Int(320);
        let minus_one = typed(int_kind(-1, 320), ty.clone());
        assert_eq!(const_wide(&minus_one), Some(Wide::ones(320)));
        let shifted = bin(BinOp::Shr, minus_one.clone(), int(300, 32), ty.clone());
        assert_eq!(const_wide(&shifted), Some(Wide::ones(320)));
        let cast = fold(typed(ExprKind::Cast(Box::new(shifted)), Ty::Bit(8)), &prog);
        assert_eq!(const_int(&cast), Some(0xff));
        // Narrow values keep their narrow form.
        assert!(matches!(int_kind(-1, 8), ExprKind::Int(0xff)));
    }
}
