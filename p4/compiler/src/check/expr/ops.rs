//! Binary operators and casts: operand types, the width an integer
//! literal takes from the other operand (P4_16 spec §8).

use super::{TE, mk};
use crate::check::{Checker, codes, fold};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{BinOp, Expr, ExprKind, Ty};

impl Checker {
    pub(super) fn cast(&mut self, a: TE, to: &Ty, span: Span) -> Option<Expr> {
        let x = match a {
            TE::Inf(v) => {
                return match to {
                    Ty::Bit(w) | Ty::Int(w) => {
                        Some(mk(crate::check::fold::int_kind(v, *w), to.clone(), span))
                    }
                    // P4_16 §8.11.1: an integer casts to bool when it is 0 or 1.
                    Ty::Bool if v == 0 || v == 1 => {
                        Some(mk(ExprKind::Bool(v == 1), Ty::Bool, span))
                    }
                    Ty::SerEnum(e) => {
                        let repr = self.prog.enums[*e].repr.clone()?;
                        let w = repr.scalar_width(&self.prog)?;
                        Some(mk(
                            ExprKind::Int(p4_target::bits::wrap(v as u128, w)),
                            to.clone(),
                            span,
                        ))
                    }
                    Ty::Bool => {
                        self.error(
                            codes::TYPE_MISMATCH,
                            span,
                            format!("only the integers 0 and 1 cast to bool, not {v}"),
                        );
                        None
                    }
                    _ => {
                        self.error(
                            codes::TYPE_MISMATCH,
                            span,
                            format!("an integer cannot be cast to {}", self.ty_name(to)),
                        );
                        None
                    }
                };
            }
            TE::Typed(x) => x,
        };
        if &x.ty == to {
            return Some(x);
        }
        let ok = match (&x.ty, to) {
            // P4_16 §8.11.1 lists casts that change a bit string's width or
            // its signedness, never both at once: `(int<8>)x` of a
            // `bit<16> x` needs `(int<8>)(bit<8>)x` (p4c: "Illegal cast").
            // Zero widths are no exception: p4c refuses `(int<2>)` of a
            // `bit<0>` (explicit-cast-to-bit-from-int-of-different-width).
            (Ty::Bit(a), Ty::Int(b)) | (Ty::Int(a), Ty::Bit(b)) if a != b => {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    span,
                    format!(
                        "cannot cast {} to {} in one step: a cast changes the width or the sign, \
                         not both (P4_16 §8.11.1); cast to {} first",
                        self.ty_name(&x.ty),
                        self.ty_name(to),
                        self.ty_name(&match to {
                            Ty::Int(_) => Ty::Bit(*b),
                            _ => Ty::Int(*b),
                        })
                    ),
                    "width and sign both change",
                );
                return None;
            }
            (Ty::Bit(_) | Ty::Int(_), Ty::Bit(_) | Ty::Int(_)) => true,
            (Ty::Bool, Ty::Bit(1)) | (Ty::Bit(1), Ty::Bool) => true,
            (Ty::SerEnum(e), t) | (t, Ty::SerEnum(e)) => {
                self.prog.enums[*e]
                    .repr
                    .as_ref()
                    .map(|r| r == t)
                    .unwrap_or(false)
                    || matches!(t, Ty::Bit(_) | Ty::Int(_))
            }
            _ => false,
        };
        if !ok {
            self.error_label(
                codes::TYPE_MISMATCH,
                span,
                format!(
                    "cannot cast {} to {}",
                    self.ty_name(&x.ty),
                    self.ty_name(to)
                ),
                "bad cast",
            );
            return None;
        }
        Some(fold::fold(
            mk(ExprKind::Cast(Box::new(x)), to.clone(), span),
            &self.prog,
        ))
    }

    pub(super) fn binary(
        &mut self,
        op: ast::BinaryOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
    ) -> Option<TE> {
        use ast::BinaryOp as A;
        // A list or struct-valued expression compared with a value takes
        // that value's type (P4_16 §8.12, §8.13: `s == {a = 1, b = 2}`,
        // `t == {4, 5}`); the operands are still evaluated left to right.
        let is_init = |e: &ast::Expr| {
            matches!(
                e.kind,
                ast::ExprKind::StructInit(_) | ast::ExprKind::List(_)
            )
        };
        let typed_by = |this: &mut Self, other: &TE, init: &ast::Expr| match other {
            TE::Typed(x) => Some(TE::Typed(this.expr(init, Some(&x.ty.clone()))?)),
            TE::Inf(_) => this.expr_any(init),
        };
        let (a, b) = match op {
            A::Eq | A::Ne if is_init(rhs) && !is_init(lhs) => {
                let a = self.expr_any(lhs)?;
                let b = typed_by(self, &a, rhs)?;
                (a, b)
            }
            A::Eq | A::Ne if is_init(lhs) && !is_init(rhs) => {
                let b = self.expr_any(rhs)?;
                let a = typed_by(self, &b, lhs)?;
                (a, b)
            }
            _ => (self.expr_any(lhs)?, self.expr_any(rhs)?),
        };
        if !matches!(op, A::Eq | A::Ne | A::And | A::Or) {
            for (te, side) in [(&a, lhs), (&b, rhs)] {
                if let TE::Typed(x) = te
                    && self.refuse_nominal_operand(x, side.span, &format!("`{}`", op.as_str()))
                {
                    return None;
                }
            }
        }
        // Serializable enums take their underlying type in arithmetic,
        // shifts and `++`, and where compared with a value of that type;
        // two values of one enum compare as the enum.
        let (a, b) = match (op, &a, &b) {
            (A::And | A::Or, ..) => (a, b),
            (A::Eq | A::Ne, TE::Typed(x), TE::Typed(y)) if x.ty == y.ty => (a, b),
            (A::Eq | A::Ne, TE::Inf(_), _) | (A::Eq | A::Ne, _, TE::Inf(_)) => (a, b),
            _ => (self.te_to_repr(a), self.te_to_repr(b)),
        };
        // p4c rejects a division by a constant zero, typed or not.
        let zero = match &b {
            TE::Inf(v) => *v == 0,
            TE::Typed(y) => matches!(y.kind, ExprKind::Int(0)),
        };
        if zero && matches!(op, A::Div | A::Mod) {
            self.error_label(
                codes::OVERFLOW,
                rhs.span,
                "division by zero",
                "this is zero",
            );
            return None;
        }
        // An integer without a width takes the other side's type, but p4c
        // folds its sign first: `x / -1` and `-5 % x` are refused for a
        // `bit<8> x` ("not defined on negative numbers", its div1), as
        // between two integers below (P4_16 §8.8).
        if matches!(op, A::Div | A::Mod)
            && let Some((neg, side)) = match (&a, &b) {
                (TE::Inf(v), TE::Typed(_)) if *v < 0 => Some((*v, lhs)),
                (TE::Typed(_), TE::Inf(v)) if *v < 0 => Some((*v, rhs)),
                _ => None,
            }
        {
            self.error_label(
                codes::OVERFLOW,
                side.span,
                format!(
                    "`{}` is not defined on negative integers (P4_16 §8.8), and {neg} is one",
                    op.as_str()
                ),
                "negative",
            );
            return None;
        }
        // p4c evaluates `/` and `%` by a value known only at run time
        // nowhere (its div3 error test: "could not evaluate at compilation
        // time"); a constant divisor is fine (`x % 64`, `x / 3`), and so is
        // a constant zero dividend: p4c's strength reduction makes `0 / e`
        // and `0 % e` zero once `e`'s calls are taken out (issue2287-bmv2),
        // and the code generated gives zero, `e` still evaluated. A divisor
        // that is no integer is refused below for its type (`false % true`,
        // p4c's table-entry-lpm-with-priority).
        let zero_dividend = match &a {
            TE::Inf(v) => *v == 0,
            TE::Typed(x) => matches!(x.kind, ExprKind::Int(0)),
        };
        if let TE::Typed(y) = &b
            && matches!(op, A::Div | A::Mod)
            && !zero_dividend
            && matches!(y.ty, Ty::Bit(_) | Ty::Int(_))
            && !matches!(y.kind, ExprKind::Int(_) | ExprKind::WideInt(_))
        {
            self.error_label(
                codes::NOT_CONSTANT,
                rhs.span,
                format!(
                    "the divisor of `{}` must be a compile-time constant",
                    if op == A::Div { "/" } else { "%" }
                ),
                "known only at run time",
            );
            return None;
        }
        // Both untyped: fold as infinite precision.
        if let (TE::Inf(x), TE::Inf(y)) = (&a, &b) {
            let (x, y) = (*x, *y);
            // P4_16 §8.8: integer `/` and `%` are between positive values
            // (p4c: "Division is not defined for negative numbers").
            if matches!(op, A::Div | A::Mod) && (x < 0 || y < 0) {
                self.error_label(
                    codes::OVERFLOW,
                    span,
                    format!(
                        "`{}` is not defined on negative integers (P4_16 §8.8)",
                        op.as_str()
                    ),
                    "an operand is negative",
                );
                return None;
            }
            let v = match op {
                A::Add => x.checked_add(y),
                A::Sub => x.checked_sub(y),
                A::Mul => x.checked_mul(y),
                A::Div if y > 0 && x >= 0 => Some(x / y),
                A::Mod if y > 0 && x >= 0 => Some(x % y),
                A::Shl if (0..127).contains(&y) => x.checked_shl(y as u32),
                A::Shr if (0..127).contains(&y) => Some(x >> y),
                A::BitAnd => Some(x & y),
                A::BitOr => Some(x | y),
                A::BitXor => Some(x ^ y),
                A::Concat => {
                    self.error_label(
                        codes::WIDTH_MISMATCH,
                        span,
                        "cannot infer the widths of `++` operands",
                        "give both sides a width, e.g. `8w1 ++ 8w2`",
                    );
                    return None;
                }
                A::Eq | A::Ne | A::Lt | A::Le | A::Gt | A::Ge => {
                    let r = match op {
                        A::Eq => x == y,
                        A::Ne => x != y,
                        A::Lt => x < y,
                        A::Le => x <= y,
                        A::Gt => x > y,
                        _ => x >= y,
                    };
                    return Some(TE::Typed(mk(ExprKind::Bool(r), Ty::Bool, span)));
                }
                _ => None,
            };
            return match v {
                Some(v) => Some(TE::Inf(v)),
                None => {
                    self.error(
                        codes::OVERFLOW,
                        span,
                        format!(
                            "cannot evaluate `{}` on these integer constants",
                            op.as_str()
                        ),
                    );
                    None
                }
            };
        }
        let iop = match op {
            A::Mul => BinOp::Mul,
            A::Div => BinOp::Div,
            A::Mod => BinOp::Mod,
            A::Add => BinOp::Add,
            A::Sub => BinOp::Sub,
            A::AddSat => BinOp::SatAdd,
            A::SubSat => BinOp::SatSub,
            A::Shl => BinOp::Shl,
            A::Shr => BinOp::Shr,
            A::Le => BinOp::Le,
            A::Ge => BinOp::Ge,
            A::Lt => BinOp::Lt,
            A::Gt => BinOp::Gt,
            A::Eq => BinOp::Eq,
            A::Ne => BinOp::Ne,
            A::BitAnd => BinOp::BitAnd,
            A::BitXor => BinOp::BitXor,
            A::BitOr => BinOp::BitOr,
            A::Concat => BinOp::Concat,
            A::And => BinOp::And,
            A::Or => BinOp::Or,
        };
        let done = |c: &Checker, x: Expr| Some(TE::Typed(fold::fold(x, &c.prog)));
        match iop {
            BinOp::And | BinOp::Or => {
                let x = self.coerce(a, &Ty::Bool, lhs.span)?;
                let y = self.coerce(b, &Ty::Bool, rhs.span)?;
                done(
                    self,
                    mk(
                        ExprKind::Binary(iop, Box::new(x), Box::new(y)),
                        Ty::Bool,
                        span,
                    ),
                )
            }
            BinOp::Shl | BinOp::Shr => {
                let x = match a {
                    TE::Typed(x) => x,
                    TE::Inf(_) => {
                        self.error(
                            codes::WIDTH_MISMATCH,
                            lhs.span,
                            "cannot infer the width of the shifted value; give it a width",
                        );
                        return None;
                    }
                };
                if !matches!(x.ty, Ty::Bit(_) | Ty::Int(_)) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        lhs.span,
                        format!("cannot shift {}", self.ty_name(&x.ty)),
                    );
                    return None;
                }
                let y = match b {
                    TE::Inf(v) if v >= 0 => mk(ExprKind::Int(v as u128), Ty::Bit(32), rhs.span),
                    TE::Inf(_) => {
                        self.error(
                            codes::TYPE_MISMATCH,
                            rhs.span,
                            "shift amounts must not be negative",
                        );
                        return None;
                    }
                    TE::Typed(y) if matches!(y.ty, Ty::Bit(_)) => y,
                    TE::Typed(y) => {
                        self.error(
                            codes::TYPE_MISMATCH,
                            rhs.span,
                            format!(
                                "a shift amount must be unsigned, not {}",
                                self.ty_name(&y.ty)
                            ),
                        );
                        return None;
                    }
                };
                let ty = x.ty.clone();
                done(
                    self,
                    mk(ExprKind::Binary(iop, Box::new(x), Box::new(y)), ty, span),
                )
            }
            BinOp::Concat => {
                let (x, y) = match (a, b) {
                    (TE::Typed(x), TE::Typed(y)) => (x, y),
                    _ => {
                        self.error(
                            codes::WIDTH_MISMATCH,
                            span,
                            "both sides of `++` need a width",
                        );
                        return None;
                    }
                };
                let (xw, yw) = match (x.ty.scalar_width(&self.prog), y.ty.scalar_width(&self.prog))
                {
                    (Some(a), Some(b))
                        if matches!(x.ty, Ty::Bit(_) | Ty::Int(_))
                            && matches!(y.ty, Ty::Bit(_) | Ty::Int(_)) =>
                    {
                        (a, b)
                    }
                    _ => {
                        self.error(codes::TYPE_MISMATCH, span, "`++` needs bit strings");
                        return None;
                    }
                };
                if xw + yw > crate::check::MAX_WIDTH {
                    self.error(
                        codes::BAD_WIDTH,
                        span,
                        format!(
                            "`++` result would be {} bits; at most {} are supported",
                            xw + yw,
                            crate::check::MAX_WIDTH
                        ),
                    );
                    return None;
                }
                let ty = if matches!(x.ty, Ty::Int(_)) {
                    Ty::Int(xw + yw)
                } else {
                    Ty::Bit(xw + yw)
                };
                done(
                    self,
                    mk(ExprKind::Binary(iop, Box::new(x), Box::new(y)), ty, span),
                )
            }
            _ => {
                let (x, y) = match (a, b) {
                    (TE::Typed(x), b) => {
                        let ty = x.ty.clone();
                        let y = match b {
                            TE::Typed(y) if y.ty != ty => {
                                let code = match (&x.ty, &y.ty) {
                                    (Ty::Bit(_), Ty::Bit(_)) | (Ty::Int(_), Ty::Int(_)) => {
                                        codes::WIDTH_MISMATCH
                                    }
                                    _ => codes::TYPE_MISMATCH,
                                };
                                self.diags.push(
                                    crate::diag::Diagnostic::error(
                                        code,
                                        format!(
                                            "`{}` operands differ: {} and {}",
                                            op.as_str(),
                                            self.ty_name(&x.ty),
                                            self.ty_name(&y.ty)
                                        ),
                                    )
                                    .with_primary(span, "")
                                    .with_secondary(lhs.span, self.ty_name(&x.ty).to_string())
                                    .with_secondary(rhs.span, self.ty_name(&y.ty).to_string())
                                    .with_note("P4 does not widen implicitly; cast one side"),
                                );
                                return None;
                            }
                            b => self.coerce(b, &ty, rhs.span)?,
                        };
                        (x, y)
                    }
                    (a, TE::Typed(y)) => {
                        let ty = y.ty.clone();
                        (self.coerce(a, &ty, lhs.span)?, y)
                    }
                    _ => return None,
                };
                if matches!(iop, BinOp::Eq | BinOp::Ne) {
                    self.check_nominal(&x, &y, span, "compare");
                }
                let is_cmp = matches!(
                    iop,
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
                );
                let numeric = matches!(x.ty, Ty::Bit(_) | Ty::Int(_));
                let ok = match iop {
                    BinOp::Eq | BinOp::Ne => !matches!(x.ty, Ty::Str | Ty::Void),
                    BinOp::Div | BinOp::Mod => matches!(x.ty, Ty::Bit(_)),
                    _ => numeric,
                };
                if !ok {
                    let mut d = crate::diag::Diagnostic::error(
                        codes::TYPE_MISMATCH,
                        format!(
                            "`{}` cannot be applied to {}",
                            op.as_str(),
                            self.ty_name(&x.ty)
                        ),
                    )
                    .with_primary(span, "bad operands");
                    if matches!(iop, BinOp::Div | BinOp::Mod) && matches!(x.ty, Ty::Int(_)) {
                        // p4c types `/` and `%` as unsigned-only operators
                        // ("Cannot operate on signed values"), constants too.
                        d = d.with_note(
                            "P4_16 §8.7 defines no `/` or `%` on int<W>, and p4c refuses \
                             them on signed values; cast to bit<W>, or divide integers \
                             without a width",
                        );
                    }
                    self.diags.push(d);
                    return None;
                }
                let ty = if is_cmp { Ty::Bool } else { x.ty.clone() };
                done(
                    self,
                    mk(ExprKind::Binary(iop, Box::new(x), Box::new(y)), ty, span),
                )
            }
        }
    }

    /// P4_16 §7.6: no operator but `==` and `!=` is defined on a value of a
    /// `type`-declared type (`(U32)((bit<32>)x + 1)`: "casts needed for
    /// arithmetic"); p4c refuses it. `what` names the operator.
    pub(super) fn refuse_nominal_operand(&mut self, x: &Expr, span: Span, what: &str) -> bool {
        if let Some(Some(n)) = self.nominal_field(x) {
            self.error_label(
                codes::TYPE_MISMATCH,
                span,
                format!("{what} is not defined on {n}: `type` declares a new type"),
                format!("cast it to {} first", self.ty_name(&x.ty)),
            );
            return true;
        }
        false
    }
}
