//! Expression checking: names, members, operators, casts, calls (P4_16
//! spec §8, §8.9 width inference of integer literals, §6.8 calls).
//!
//! Contract: [`Checker::expr`] returns a typed, folded IR expression or
//! `None` after reporting at least one diagnostic. Integer literals and
//! `int` constants without a width are carried as [`TE::Inf`] until an
//! operand or the context gives them a type.

mod access;
mod arrays;
mod calls;
mod extern_fns;
mod init;
mod methods;
mod ops;
mod packet;

pub(crate) use arrays::{ArrayIndex, index_is, reachable_positions};

use super::{BodyKind, Checker, Sym, codes, fold};
use crate::diag::Diagnostic;
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Expr, ExprKind, Ty, UnOp};

/// A checked expression, or an integer constant still without a type.
#[derive(Clone, Debug)]
pub(crate) enum TE {
    /// Typed.
    Typed(Expr),
    /// Infinite-precision integer constant.
    Inf(i128),
}

fn mk(kind: ExprKind, ty: Ty, span: Span) -> Expr {
    Expr { kind, ty, span }
}

impl Checker {
    /// Checks `e`; with `expected`, literals take that type and a mismatch is
    /// reported.
    pub(crate) fn expr(&mut self, e: &ast::Expr, expected: Option<&Ty>) -> Option<Expr> {
        // List/struct initialisers need the expected type.
        if let (Some(Ty::Tuple(tys)), ast::ExprKind::List(items)) = (expected, &e.kind) {
            if tys.len() != items.len() {
                self.error_label(
                    codes::ARG_COUNT,
                    e.span,
                    format!("expected {} values, found {}", tys.len(), items.len()),
                    "wrong number of values",
                );
                return None;
            }
            let mut v = Vec::new();
            for (t, i) in tys.iter().zip(items) {
                v.push(self.expr(i, Some(t))?);
            }
            return Some(mk(ExprKind::List(v), Ty::Tuple(tys.clone()), e.span));
        }
        if let (Some(Ty::Stack(elem, n)), ast::ExprKind::List(items)) = (expected, &e.kind) {
            return self.stack_init(e.span, elem, *n, items);
        }
        if let (Some(ty), ast::ExprKind::List(items)) = (expected, &e.kind)
            && let Ty::Composite(_) = ty
        {
            return self.composite_init(e.span, ty, items.iter().map(|x| (None, x)).collect());
        }
        if let (Some(ty), ast::ExprKind::StructInit(items)) = (expected, &e.kind)
            && let Ty::Composite(_) = ty
        {
            return self.composite_init(
                e.span,
                ty,
                items
                    .iter()
                    .map(|x| match x.value.kind {
                        ast::ExprKind::DotDotDot => (None, &x.value),
                        _ => (Some(&x.name), &x.value),
                    })
                    .collect(),
            );
        }
        if let (Some(ty), ast::ExprKind::Invalid) = (expected, &e.kind) {
            return match ty {
                Ty::Composite(c)
                    if matches!(
                        self.prog.composites[*c].kind,
                        ir::CompositeKind::Header | ir::CompositeKind::Union
                    ) =>
                {
                    Some(mk(ExprKind::Default, ty.clone(), e.span))
                }
                _ => {
                    self.error_label(
                        codes::TYPE_MISMATCH,
                        e.span,
                        format!(
                            "`{{#}}` is an invalid header or header union, not {}",
                            self.ty_name(ty)
                        ),
                        "here",
                    );
                    None
                }
            };
        }
        if expected.is_some() && matches!(e.kind, ast::ExprKind::DotDotDot) {
            // P4_16 §8.26: a lone `...` is the default value of the type its
            // place expects (`bit<8> x = ...;`); only a last `...` in an
            // initialiser of a struct or header is supported.
            self.unsupported(e.span, "`...` standing for a whole value");
            return None;
        }
        let te = self.expr_any(e)?;
        match expected {
            Some(t) => self.coerce(te, t, e.span),
            None => match te {
                TE::Typed(x) => Some(x),
                TE::Inf(_) => {
                    self.error_label(
                        codes::WIDTH_MISMATCH,
                        e.span,
                        "cannot infer the width of this integer",
                        "give it a width, e.g. `8w1`, or cast it",
                    );
                    None
                }
            },
        }
    }

    /// Converts `te` to type `ty`, reporting a mismatch.
    pub(crate) fn coerce(&mut self, te: TE, ty: &Ty, span: Span) -> Option<Expr> {
        match te {
            TE::Inf(v) => {
                // An integer constant where a serializable enum is expected
                // takes the enum's underlying type (p4c accepts this in
                // select cases and comparisons).
                if let Ty::SerEnum(e) = ty {
                    let repr = self.prog.enums[*e].repr.clone()?;
                    let mut x = self.coerce(TE::Inf(v), &repr, span)?;
                    x.ty = ty.clone();
                    return Some(x);
                }
                let w = match ty {
                    Ty::Bit(w) | Ty::Int(w) => *w,
                    _ => {
                        self.error_label(
                            codes::TYPE_MISMATCH,
                            span,
                            format!("an integer cannot be used as {}", self.ty_name(ty)),
                            "integer here",
                        );
                        return None;
                    }
                };
                let fits = match ty {
                    Ty::Bit(_) => v >= 0 && (w >= 128 || (v as u128) <= p4_target::bits::mask(w)),
                    // `int<0>` holds only 0.
                    _ if w == 0 => v == 0,
                    _ => {
                        w >= 128 || {
                            let max = (1i128 << (w - 1)) - 1;
                            v >= -max - 1 && v <= max
                        }
                    }
                };
                if !fits {
                    // P4_16 §8.9.2: an integer converted to `bit<W>`/`int<W>`
                    // keeps its value modulo 2^W (`bit<8> x = -1` is 255),
                    // as p4c does, with a warning.
                    self.diags.push(
                        Diagnostic::warning(
                            codes::OVERFLOW,
                            format!(
                                "{v} does not fit in {}; it becomes {}",
                                self.ty_name(ty),
                                self.wrapped_text(v, ty)
                            ),
                        )
                        .with_primary(span, "reduced modulo 2^W"),
                    );
                }
                Some(mk(super::fold::int_kind(v, w), ty.clone(), span))
            }
            TE::Typed(x) => {
                if &x.ty == ty {
                    return Some(x);
                }
                // P4_16 §8.11.2: a serializable enum converts implicitly to
                // its underlying type.
                if let Ty::SerEnum(e) = x.ty
                    && self.prog.enums[e].repr.as_ref() == Some(ty)
                {
                    return Some(self.enum_to_repr(x));
                }
                let code = match (&x.ty, ty) {
                    (Ty::Bit(_), Ty::Bit(_)) | (Ty::Int(_), Ty::Int(_)) => codes::WIDTH_MISMATCH,
                    _ => codes::TYPE_MISMATCH,
                };
                let msg = format!(
                    "expected {}, found {}",
                    self.ty_name(ty),
                    self.ty_name(&x.ty)
                );
                let label = format!("this is {}", self.ty_name(&x.ty));
                self.error_label(code, span, msg, label);
                None
            }
        }
    }

    /// A value of a serializable enum as its underlying type (a cast),
    /// where P4_16 §8.11.2 converts implicitly: operands of arithmetic,
    /// shifts, `++`, slices, stack indices, and comparisons or assignments
    /// with the underlying type. Other values are returned unchanged.
    pub(crate) fn enum_to_repr(&self, x: Expr) -> Expr {
        match x.ty {
            Ty::SerEnum(e) => match self.prog.enums[e].repr.clone() {
                Some(repr) => {
                    let span = x.span;
                    fold::fold(mk(ExprKind::Cast(Box::new(x)), repr, span), &self.prog)
                }
                None => x,
            },
            _ => x,
        }
    }

    /// [`Self::enum_to_repr`] of a typed operand; integer constants stay.
    fn te_to_repr(&self, te: TE) -> TE {
        match te {
            TE::Typed(x) => TE::Typed(self.enum_to_repr(x)),
            te => te,
        }
    }

    /// `v` reduced to type `ty` (a `bit<W>` or `int<W>`), as P4 prints it.
    fn wrapped_text(&self, v: i128, ty: &Ty) -> String {
        let w = ty.scalar_width(&self.prog).unwrap_or(128);
        if w > 128 {
            // Only a negative value wraps here: 2^w + v, in hex.
            return format!(
                "{:?}",
                super::fold::Wide::cast_from_u128(v as u128, 128, true, w)
            );
        }
        let bits = p4_target::bits::wrap(v as u128, w);
        if ty.is_signed(&self.prog) {
            p4_target::bits::sext(bits, w).to_string()
        } else {
            bits.to_string()
        }
    }

    /// Checks an expression without an expected type.
    pub(crate) fn expr_any(&mut self, e: &ast::Expr) -> Option<TE> {
        use ast::ExprKind as K;
        let span = e.span;
        let t = |x: Expr| Some(TE::Typed(x));
        match &e.kind {
            K::Int(lit) => {
                let v = lit.value;
                match lit.width {
                    None => {
                        if v > i128::MAX as u128 {
                            self.error(codes::OVERFLOW, span, "integer literal too large");
                            return None;
                        }
                        Some(TE::Inf(if lit.negative {
                            -(v as i128)
                        } else {
                            v as i128
                        }))
                    }
                    Some((w, signed)) => {
                        // `0w0` is the `bit<0>` literal (P4_16 §7.1.6.2; p4c
                        // types it so, issue1986); the lexer keeps signed
                        // literals at 2 bits or more.
                        if w > super::MAX_WIDTH {
                            self.error_label(
                                codes::BAD_WIDTH,
                                span,
                                format!(
                                    "width {w} is not supported: widths must be 0..={} bits",
                                    super::MAX_WIDTH
                                ),
                                "this literal",
                            );
                            return None;
                        }
                        let ty = if signed { Ty::Int(w) } else { Ty::Bit(w) };
                        let val = if lit.negative {
                            0u128.wrapping_sub(v)
                        } else {
                            v
                        };
                        // Above 128 bits the lexer checked the magnitude.
                        let fits = if w > 128 {
                            true
                        } else if signed {
                            let max = if w >= 128 {
                                i128::MAX as u128
                            } else {
                                (1u128 << (w - 1)) - 1
                            };
                            if lit.negative { v <= max + 1 } else { v <= max }
                        } else {
                            !lit.negative && v <= p4_target::bits::mask(w)
                        };
                        if !fits {
                            self.warn(
                                codes::OVERFLOW,
                                span,
                                format!(
                                    "literal `{}` does not fit in {}; it is truncated",
                                    lit.raw,
                                    self.ty_name(&ty)
                                ),
                            );
                        }
                        let kind = if w > 128 {
                            // `-336w1`: negate at the full width.
                            let v = match &lit.wide {
                                Some(limbs) => super::fold::Wide::from_limbs(limbs),
                                None => super::fold::Wide::from_u128(v),
                            };
                            super::fold::wide_kind(if lit.negative { v.neg(w) } else { v }, w)
                        } else {
                            ExprKind::Int(p4_target::bits::wrap(val, w))
                        };
                        t(mk(kind, ty, span))
                    }
                }
            }
            K::Bool(b) => t(mk(ExprKind::Bool(*b), Ty::Bool, span)),
            K::Str(_) => t(mk(ExprKind::Int(0), Ty::Str, span)),
            K::Name(p) => self.name_expr(p),
            K::Member { base, member } => self.member(base, member, span),
            K::Index { base, index } => {
                if let Some(x) = self.array_element(base, index, span) {
                    return x;
                }
                let b = self.expr(base, None)?;
                // `t[K]` of a tuple: its K-th element (P4_16 §8.12), K a
                // compile-time index.
                if let Ty::Tuple(tys) = &b.ty {
                    let tys = tys.clone();
                    let k = match self.expr_any(index)? {
                        TE::Inf(v) => v,
                        TE::Typed(x) => match fold::const_int(&x) {
                            Some(v) => v as i128,
                            None => {
                                self.error(
                                    codes::NOT_CONSTANT,
                                    index.span,
                                    "a tuple index must be a compile-time constant",
                                );
                                return None;
                            }
                        },
                    };
                    if !(0..tys.len() as i128).contains(&k) {
                        self.error(
                            codes::OVERFLOW,
                            index.span,
                            format!("index {k} is out of bounds for a tuple of {}", tys.len()),
                        );
                        return None;
                    }
                    let ty = tys[k as usize].clone();
                    // An element of a tuple variable is of its element's
                    // declared type (`t[0]` of a `tuple<Port_t, ..>`).
                    if let ExprKind::Var(_) = b.kind
                        && let Some(n) = self
                            .var_tuple_nominals
                            .get(&b.span)
                            .and_then(|e| e.get(k as usize))
                    {
                        self.expr_nominal.insert(span, n.clone());
                    }
                    return t(mk(ExprKind::Member(Box::new(b), k as u32), ty, span));
                }
                let Ty::Stack(elem, n) = &b.ty else {
                    self.error(
                        codes::TYPE_MISMATCH,
                        base.span,
                        format!("{} cannot be indexed", self.ty_name(&b.ty)),
                    );
                    return None;
                };
                let (elem, n) = ((**elem).clone(), *n);
                let it = self.expr_any(index)?;
                let it = self.te_to_repr(it);
                let i = match it {
                    TE::Inf(v) => {
                        if v < 0 || v >= n as i128 {
                            self.error(
                                codes::OVERFLOW,
                                index.span,
                                format!("index {v} is out of bounds for a stack of {n}"),
                            );
                            return None;
                        }
                        mk(ExprKind::Int(v as u128), Ty::Bit(32), index.span)
                    }
                    // Any integer type indexes a stack; a negative `int<W>` is
                    // out of range like any index not below the size.
                    TE::Typed(x) => match x.ty {
                        Ty::Bit(_) | Ty::Int(_) => x,
                        _ => {
                            self.error(
                                codes::TYPE_MISMATCH,
                                index.span,
                                "a stack index must be an integer",
                            );
                            return None;
                        }
                    },
                };
                // A stack value that is not a variable (a constant's or an
                // initialiser's elements): a constant index picks the element.
                if let ExprKind::List(items) = &b.kind {
                    let Some(k) = fold::const_int(&i) else {
                        self.unsupported(
                            index.span,
                            "run-time indices into a stack constant or initialiser",
                        );
                        return None;
                    };
                    let Some(x) = items.get(k as usize) else {
                        self.error(
                            codes::OVERFLOW,
                            index.span,
                            format!("index {k} is out of bounds for a stack of {n}"),
                        );
                        return None;
                    };
                    return t(x.clone());
                }
                t(mk(ExprKind::Index(Box::new(b), Box::new(i)), elem, span))
            }
            K::Slice {
                base,
                hi,
                lo,
                width,
            } => {
                if let Some(width) = width
                    && let Some(low) = self.run_time_low_bit(lo, false)?
                {
                    let (b, w) = self.sliced(base)?;
                    let width = self.plus_slice_width(width, w, span)?;
                    return t(Self::bits_from(b, low, width, span));
                }
                let (b, w) = self.sliced(base)?;
                let h = self.const_u32(hi, "slice bound")?;
                let l = self.const_u32(lo, "slice bound")?;
                if h < l || h >= w {
                    self.error_label(
                        codes::OVERFLOW,
                        span,
                        format!("slice [{h}:{l}] is outside a {w}-bit value"),
                        "bad slice",
                    );
                    return None;
                }
                let x = mk(ExprKind::Slice(Box::new(b), h, l), Ty::Bit(h - l + 1), span);
                t(fold::fold(x, &self.prog))
            }
            K::Call {
                callee,
                type_args,
                args,
            } => {
                if let ast::ExprKind::Member { base, member } = &callee.kind
                    && args.is_empty()
                    && type_args.is_empty()
                    && let Some(size) = self.size_method(base, &member.name, member.span)
                {
                    return size.map(TE::Inf);
                }
                let x = self.call(callee, type_args, args, span)?;
                if x.ty == Ty::Void {
                    // A void call used as a value is caught by the caller's
                    // type expectations; statements unwrap it.
                }
                t(x)
            }
            K::Unary { op, operand } => {
                let a = self.expr_any(operand)?;
                if let TE::Typed(x) = &a
                    && *op != ast::UnaryOp::Plus
                    && self.refuse_nominal_operand(
                        x,
                        operand.span,
                        match op {
                            ast::UnaryOp::Not => "`!`",
                            ast::UnaryOp::Complement => "`~`",
                            _ => "`-`",
                        },
                    )
                {
                    return None;
                }
                let a = match op {
                    ast::UnaryOp::Neg | ast::UnaryOp::Complement => self.te_to_repr(a),
                    _ => a,
                };
                match (op, a) {
                    // P4_16 §8.6/§8.7: unary `+` is an arithmetic operator,
                    // defined on integers only (p4c's issue3153: `+false`).
                    (ast::UnaryOp::Plus, TE::Typed(x))
                        if !matches!(x.ty, Ty::Bit(_) | Ty::Int(_) | Ty::SerEnum(_)) =>
                    {
                        self.error_label(
                            codes::TYPE_MISMATCH,
                            span,
                            format!("`+` cannot be applied to {}", self.ty_name(&x.ty)),
                            "not an integer",
                        );
                        None
                    }
                    (ast::UnaryOp::Plus, a) => Some(a),
                    (ast::UnaryOp::Neg, TE::Inf(v)) => match v.checked_neg() {
                        Some(n) => Some(TE::Inf(n)),
                        None => {
                            self.error(codes::OVERFLOW, span, "integer constant out of range");
                            None
                        }
                    },
                    (ast::UnaryOp::Complement, TE::Inf(_)) => {
                        self.error(
                            codes::WIDTH_MISMATCH,
                            span,
                            "`~` needs a width; give the integer one (e.g. `8w0`)",
                        );
                        None
                    }
                    (ast::UnaryOp::Not, TE::Inf(_)) => {
                        self.error(codes::TYPE_MISMATCH, span, "`!` needs a bool");
                        None
                    }
                    (op, TE::Typed(x)) => {
                        let (uop, ok) = match op {
                            ast::UnaryOp::Not => (UnOp::Not, x.ty == Ty::Bool),
                            ast::UnaryOp::Complement => {
                                (UnOp::BitNot, matches!(x.ty, Ty::Bit(_) | Ty::Int(_)))
                            }
                            _ => (UnOp::Neg, matches!(x.ty, Ty::Bit(_) | Ty::Int(_))),
                        };
                        if !ok {
                            self.error_label(
                                codes::TYPE_MISMATCH,
                                span,
                                format!(
                                    "this operator cannot be applied to {}",
                                    self.ty_name(&x.ty)
                                ),
                                "bad operand",
                            );
                            return None;
                        }
                        let ty = x.ty.clone();
                        t(fold::fold(
                            mk(ExprKind::Unary(uop, Box::new(x)), ty, span),
                            &self.prog,
                        ))
                    }
                }
            }
            K::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, span),
            K::Ternary {
                cond,
                then_expr,
                else_expr,
            } => {
                let c = self.expr(cond, Some(&Ty::Bool))?;
                let a = self.expr_any(then_expr)?;
                let b = self.expr_any(else_expr)?;
                let (a, b) = match (a, b) {
                    (TE::Inf(x), TE::Inf(y)) => {
                        if let ExprKind::Bool(cv) = c.kind {
                            return Some(TE::Inf(if cv { x } else { y }));
                        }
                        // P4_16 §8.5.1: the branches may both be `int` only when
                        // the condition is known at compile time (folded above);
                        // p4c: "Width must be specified for at least one of ..".
                        self.diags.push(
                            crate::diag::Diagnostic::error(
                                codes::WIDTH_MISMATCH,
                                "cannot infer the width of `?:`; give one branch a width",
                            )
                            .with_primary(span, "the condition is known only at run time")
                            .with_note(
                                "P4_16 §8.5.1: both branches may be integers without a width only \
                                 when the condition is a compile-time constant",
                            ),
                        );
                        return None;
                    }
                    (TE::Typed(a), b) => {
                        let ty = a.ty.clone();
                        let b = self.coerce(b, &ty, else_expr.span)?;
                        (a, b)
                    }
                    (a, TE::Typed(b)) => {
                        let ty = b.ty.clone();
                        let a = self.coerce(a, &ty, then_expr.span)?;
                        (a, b)
                    }
                };
                let ty = a.ty.clone();
                t(fold::fold(
                    mk(
                        ExprKind::Mux(Box::new(c), Box::new(a), Box::new(b)),
                        ty,
                        span,
                    ),
                    &self.prog,
                ))
            }
            K::Cast { ty, expr } => {
                if let ast::TypeKind::List(elem) = &ty.kind {
                    return t(self.list_cast(elem, expr, span)?);
                }
                let to = self.ty(ty)?;
                if let (
                    Ty::Composite(_),
                    ast::ExprKind::StructInit(_) | ast::ExprKind::List(_) | ast::ExprKind::Invalid,
                )
                | (Ty::Stack(..), ast::ExprKind::List(_)) = (&to, &expr.kind)
                {
                    return t(self.expr(expr, Some(&to))?);
                }
                // P4_16 §8.11.1 lists no cast between struct, header or
                // header union values: such a cast only types an
                // initialiser (p4c's issue3233: `(s)(s){t, t1}`, `(s)v`).
                if let Ty::Composite(_) = to {
                    let a = self.expr_any(expr)?;
                    let from = match &a {
                        TE::Typed(x) => self.ty_name(&x.ty),
                        TE::Inf(_) => "an integer".to_string(),
                    };
                    self.error_label(
                        codes::TYPE_MISMATCH,
                        span,
                        format!(
                            "cannot cast {from} to {}: a cast to a struct or header takes a list \
                             or structure-valued expression `{{ .. }}`",
                            self.ty_name(&to)
                        ),
                        "not an initialiser",
                    );
                    return None;
                }
                let a = self.expr_any(expr)?;
                // P4_16 §8.11: a `type` converts to and from its underlying
                // type only; from another width it needs a cast to that
                // type first (p4c's issue3221: "Illegal cast").
                if let (Some(n), TE::Typed(x)) = (self.nominal_of_type(ty), &a)
                    && x.ty != to
                    && matches!(to, Ty::Bit(_) | Ty::Int(_))
                    && matches!(x.ty, Ty::Bit(_) | Ty::Int(_))
                {
                    let (from, under) = (self.ty_name(&x.ty), self.ty_name(&to));
                    self.error_label(
                        codes::TYPE_MISMATCH,
                        span,
                        format!(
                            "cannot cast {from} to `{n}`, a `type` over {under}: cast to {under} first"
                        ),
                        "not the underlying type",
                    );
                    return None;
                }
                let named = self.nominal_of_type(ty).is_some()
                    || matches!(&a, TE::Typed(x) if self.nominal_field(x).is_some_and(|n| n.is_some()));
                let x = self.cast(a, &to, span)?;
                // A cast between a `type` and its underlying type changes no
                // bits but stays in the tree, so the nominal check sees it.
                let x = if named && matches!(x.kind, ExprKind::Member(..) | ExprKind::Var(_)) {
                    mk(ExprKind::Cast(Box::new(x)), to, span)
                } else {
                    x
                };
                if named {
                    let n = self.nominal_of_type(ty);
                    self.expr_nominal.insert(x.span, n);
                }
                t(x)
            }
            K::Invalid => {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    span,
                    "the type of `{#}` is not known here",
                    "use a cast like `(H){#}`",
                );
                None
            }
            K::StructInit(_) | K::List(_) => {
                if let K::List(items) = &e.kind {
                    // A tuple, for extern arguments (hash data, field lists).
                    let mut v = Vec::new();
                    let mut tys = Vec::new();
                    for i in items {
                        let x = self.expr(i, None)?;
                        tys.push(x.ty.clone());
                        v.push(x);
                    }
                    return t(mk(ExprKind::List(v), Ty::Tuple(tys), span));
                }
                self.error(
                    codes::TYPE_MISMATCH,
                    span,
                    "the type of this initialiser is not known here; use a cast like `(S){ .. }`",
                );
                None
            }
            K::DotDotDot => {
                // `...` is the default value of the type its place expects
                // (P4_16 §8.26); here no type is expected (p4c's
                // stmt-switch-on-unsupported-type: `switch (...)`).
                self.error_label(
                    codes::TYPE_MISMATCH,
                    span,
                    "the type of `...` is not known here",
                    "`...` stands for the default value of an expected type",
                );
                None
            }
            K::This | K::Default | K::DontCare => {
                self.unsupported(span, "this expression form here");
                None
            }
        }
    }

    fn name_expr(&mut self, p: &ast::PathName) -> Option<TE> {
        let span = p.span;
        match self.lookup(p).cloned() {
            Some(Sym::Const(mut e, nominal)) => {
                e.span = span;
                if let Some(n) = nominal {
                    self.expr_nominal.insert(span, n);
                }
                Some(TE::Typed(e))
            }
            Some(Sym::IntConst(v)) => Some(TE::Inf(v)),
            Some(Sym::Var(r, ty, _, nominal, elems)) => {
                let enclosing = matches!(r, ir::VarRef::BlockLocal(_) | ir::VarRef::BlockParam(_));
                let in_function = self
                    .body
                    .as_ref()
                    .is_some_and(|b| b.kind == BodyKind::Function);
                if enclosing && in_function {
                    // A function declared among a control's or parser's
                    // locals is a function like a top-level one (P4_16
                    // §10): it sees its parameters and constants, not the
                    // block's variables, which only actions share.
                    self.error_label(
                        codes::NOT_ALLOWED_HERE,
                        span,
                        format!(
                            "a function cannot use `{}` of the enclosing block; pass it as an \
                             argument",
                            p.ident.name
                        ),
                        "a variable of the enclosing block",
                    );
                    return None;
                }
                if let Some(n) = nominal {
                    self.var_nominal.insert(span, n);
                }
                if !elems.is_empty() {
                    self.var_tuple_nominals.insert(span, elems);
                }
                Some(TE::Typed(mk(ExprKind::Var(r), ty, span)))
            }
            Some(_) => {
                self.error_label(
                    codes::WRONG_KIND,
                    span,
                    format!("`{}` is not a value", p.ident.name),
                    "used as a value here",
                );
                None
            }
            // A match kind's name is a value of type `match_kind` (P4_16
            // §7.1.3; p4c's issue3091 passes `ternary` to an extern).
            None if self.match_kinds.contains(&p.ident.name) => {
                let i = self.match_kinds.iter().position(|m| *m == p.ident.name)?;
                let h = self.match_kind_enum(span);
                Some(TE::Typed(mk(
                    ExprKind::EnumMember(h, i as u32),
                    Ty::Enum(h),
                    span,
                )))
            }
            None => {
                self.error_label(
                    codes::UNKNOWN_NAME,
                    span,
                    format!("cannot find `{}` in this scope", p.ident.name),
                    "not declared",
                );
                None
            }
        }
    }

    fn in_control_apply(&mut self, span: Span) -> bool {
        match self.body.as_ref().map(|b| b.kind) {
            Some(BodyKind::Apply) => true,
            _ => {
                self.error(
                    codes::NOT_ALLOWED_HERE,
                    span,
                    "tables may only be applied in a control's apply block",
                );
                false
            }
        }
    }

    /// Whether a value of type `ty` holds a varbit anywhere (a varbit
    /// field of it, or of a struct, header, stack or tuple inside it).
    pub(crate) fn has_varbit(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Varbit(_) => true,
            Ty::Tuple(ts) => ts.iter().any(|t| self.has_varbit(t)),
            Ty::Composite(c) => self.prog.composites[*c]
                .fields
                .iter()
                .any(|f| self.has_varbit(&f.ty)),
            Ty::Stack(t, _) => self.has_varbit(t),
            _ => false,
        }
    }

    /// Like `coerce` but accepts any bit width for typed values (extern
    /// arguments with generic types).
    fn coerce_loose(&mut self, te: TE, ty: &Ty, span: Span) -> Option<Expr> {
        match te {
            TE::Typed(x) if matches!(x.ty, Ty::Bit(_) | Ty::Int(_)) => Some(x),
            te => self.coerce(te, ty, span),
        }
    }
}
