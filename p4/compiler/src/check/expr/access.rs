//! Member access, the compile-time sizes of headers and structs
//! (`minSizeInBits` and kin, P4_16 spec §8.9.2) and bit slices.

use super::{TE, mk};
use crate::check::{BodyKind, Checker, Sym, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, BinOp, Expr, ExprKind, Ty};

impl Checker {
    pub(super) fn member(
        &mut self,
        base: &ast::Expr,
        member: &ast::Ident,
        span: Span,
    ) -> Option<TE> {
        // `error.X`, `Enum.X`.
        if let ast::ExprKind::Name(p) = &base.kind {
            if p.ident.name == "error" && self.lookup(p).is_none() {
                return match self.prog.errors.iter().position(|e| *e == member.name) {
                    Some(i) => Some(TE::Typed(mk(
                        ExprKind::ErrorCode(i as u32),
                        Ty::Error,
                        span,
                    ))),
                    None => {
                        self.error(
                            codes::UNKNOWN_NAME,
                            member.span,
                            format!("unknown error `{}`", member.name),
                        );
                        None
                    }
                };
            }
            if let Some(Sym::Type(ty @ (Ty::Enum(_) | Ty::SerEnum(_)))) = self.lookup(p).cloned() {
                let (Ty::Enum(h) | Ty::SerEnum(h)) = ty else {
                    return None;
                };
                let en = &self.prog.enums[h];
                return match en.members.iter().position(|(n, _)| *n == member.name) {
                    Some(i) => {
                        let kind = match &en.repr {
                            Some(_) => ExprKind::Int(en.members[i].1),
                            None => ExprKind::EnumMember(h, i as u32),
                        };
                        Some(TE::Typed(mk(kind, ty, span)))
                    }
                    None => {
                        let name = en.name.clone();
                        self.error(
                            codes::UNKNOWN_FIELD,
                            member.span,
                            format!("enum `{name}` has no member `{}`", member.name),
                        );
                        None
                    }
                };
            }
        }
        // `t.apply().hit` / `.miss`.
        if let ast::ExprKind::Call { callee, args, .. } = &base.kind
            && let ast::ExprKind::Member {
                base: tb,
                member: m,
            } = &callee.kind
            && m.name == "apply"
            && args.is_empty()
            && let ast::ExprKind::Name(p) = &tb.kind
            && let Some(Sym::Table(th)) = self.lookup(p).cloned()
        {
            return match member.name.as_str() {
                "hit" | "miss" => {
                    if !self.in_control_apply(span) {
                        return None;
                    }
                    Some(TE::Typed(mk(
                        ExprKind::TableHit(th, member.name == "hit"),
                        Ty::Bool,
                        span,
                    )))
                }
                "action_run" => {
                    self.error(
                        codes::NOT_ALLOWED_HERE,
                        span,
                        "`action_run` may only be used as a switch expression",
                    );
                    None
                }
                _ => {
                    self.error(
                        codes::UNKNOWN_FIELD,
                        member.span,
                        format!("a table apply result has no `{}`", member.name),
                    );
                    None
                }
            };
        }
        let b = self.expr(base, None)?;
        match &b.ty {
            Ty::Composite(c) => {
                let comp = &self.prog.composites[*c];
                match comp.fields.iter().position(|f| f.name == member.name) {
                    Some(i) => {
                        let ty = comp.fields[i].ty.clone();
                        Some(TE::Typed(mk(
                            ExprKind::Member(Box::new(b), i as u32),
                            ty,
                            span,
                        )))
                    }
                    None => {
                        let name = comp.name.clone();
                        self.error_label(
                            codes::UNKNOWN_FIELD,
                            member.span,
                            format!("`{name}` has no field `{}`", member.name),
                            "unknown field",
                        );
                        None
                    }
                }
            }
            Ty::Stack(elem, n) => {
                let elem = (**elem).clone();
                let n = *n;
                let in_parser = self.body.as_ref().map(|b| b.kind) == Some(BodyKind::Parser);
                if matches!(member.name.as_str(), "next" | "last") && !in_parser {
                    self.error_label(
                        codes::NOT_ALLOWED_HERE,
                        member.span,
                        format!(
                            "`{}` of a header stack may only be used in a parser",
                            member.name
                        ),
                        "not in a parser",
                    );
                    return None;
                }
                match member.name.as_str() {
                    "next" => Some(TE::Typed(mk(ExprKind::StackNext(Box::new(b)), elem, span))),
                    "last" => Some(TE::Typed(mk(ExprKind::StackLast(Box::new(b)), elem, span))),
                    "lastIndex" => Some(TE::Typed(mk(
                        ExprKind::StackLastIndex(Box::new(b)),
                        Ty::Bit(32),
                        span,
                    ))),
                    "nextIndex" => Some(TE::Typed(mk(
                        ExprKind::StackNextIndex(Box::new(b)),
                        Ty::Bit(32),
                        span,
                    ))),
                    "size" => Some(TE::Typed(mk(ExprKind::Int(n as u128), Ty::Bit(32), span))),
                    _ => {
                        self.error(
                            codes::UNKNOWN_FIELD,
                            member.span,
                            format!("a header stack has no `{}`", member.name),
                        );
                        None
                    }
                }
            }
            _ => {
                self.error_label(
                    codes::UNKNOWN_FIELD,
                    member.span,
                    format!("{} has no field `{}`", self.ty_name(&b.ty), member.name),
                    "unknown field",
                );
                None
            }
        }
    }

    /// `x.minSizeInBits()`, `minSizeInBytes`, `maxSizeInBits`,
    /// `maxSizeInBytes` of a value or a type name (a typedef, a `type`, a
    /// header...): compile-time integers (P4_16 §8.23, "Compile-time size
    /// determination"), defined for every serializable type. `None` when
    /// `name` is not one of these or `base` is no value or type (an extern
    /// instance with a method of that name); `sizeInBits`/`sizeInBytes`,
    /// which P4_16 does not have, are refused naming the ones it has.
    /// `Some(None)` when it is one and an error was reported.
    pub(super) fn size_method(
        &mut self,
        base: &ast::Expr,
        name: &str,
        span: Span,
    ) -> Option<Option<i128>> {
        let kind = match name {
            "minSizeInBits" => Some((false, false)),
            "minSizeInBytes" => Some((false, true)),
            "maxSizeInBits" => Some((true, false)),
            "maxSizeInBytes" => Some((true, true)),
            "sizeInBits" | "sizeInBytes" => None,
            _ => return None,
        };
        let named = match &base.kind {
            ast::ExprKind::Name(p) => match self.lookup(p).cloned() {
                Some(Sym::Type(t) | Sym::Var(_, t, ..)) => Some(t),
                Some(Sym::Const(..) | Sym::IntConst(_)) | None => None,
                // An extern instance or a block: its own method, if any.
                Some(_) => return None,
            },
            _ => None,
        };
        let Some((max, bytes)) = kind else {
            let upper = format!("S{}", &name[1..]);
            self.error_label(
                codes::UNKNOWN_METHOD,
                span,
                format!(
                    "P4_16 has no `{name}`: use `min{upper}` or `max{upper}` (the same for a type \
                     without varbit fields)"
                ),
                "not a P4_16 method",
            );
            return Some(None);
        };
        let ty = match named {
            Some(t) => t,
            None => match self.expr(base, None) {
                Some(x) => x.ty,
                None => return Some(None),
            },
        };
        let Some(bits) = self.size_in_bits(&ty, max) else {
            let ty = self.ty_name(&ty);
            self.error_label(
                codes::UNKNOWN_METHOD,
                span,
                format!("`{name}` is defined for serializable types only, not {ty}"),
                "no compile-time size",
            );
            return Some(None);
        };
        Some(Some(i128::from(if bytes {
            bits.div_ceil(8)
        } else {
            bits
        })))
    }

    /// The least (`max` false) or greatest number of bits a value of `ty`
    /// takes (P4_16 §8.23's table): a varbit counts 0 or its maximum, a
    /// union its largest member for both, as the spec has it.
    fn size_in_bits(&self, ty: &Ty, max: bool) -> Option<u32> {
        match ty {
            Ty::Composite(c) => {
                let comp = &self.prog.composites[*c];
                match comp.kind {
                    ir::CompositeKind::Header if max => {
                        Some(comp.header_bits(&self.prog) - comp.padding_bits())
                    }
                    ir::CompositeKind::Header => {
                        Some(comp.fixed_bits(&self.prog) - comp.padding_bits())
                    }
                    ir::CompositeKind::Union => {
                        let sizes = comp.fields.iter().map(|f| self.size_in_bits(&f.ty, max));
                        let sizes: Option<Vec<u32>> = sizes.collect();
                        Some(sizes?.into_iter().max().unwrap_or(0))
                    }
                    ir::CompositeKind::Struct if self.opaque_composites.contains(&c.index()) => {
                        None
                    }
                    ir::CompositeKind::Struct => {
                        let sizes = comp.fields.iter().map(|f| self.size_in_bits(&f.ty, max));
                        sizes.sum()
                    }
                }
            }
            Ty::Stack(elem, n) => self.size_in_bits(elem, max).map(|b| b * n),
            Ty::Tuple(items) => items.iter().map(|t| self.size_in_bits(t, max)).sum(),
            Ty::Varbit(w) => Some(if max { *w } else { 0 }),
            _ => ty.scalar_width(&self.prog),
        }
    }

    /// The value a slice is taken of, and its width: a `bit<W>` or `int<W>`
    /// (a serializable enum as its representation).
    pub(super) fn sliced(&mut self, base: &ast::Expr) -> Option<(Expr, u32)> {
        let b = self.expr(base, None)?;
        if self.refuse_nominal_operand(&b, base.span, "a slice") {
            return None;
        }
        let b = self.enum_to_repr(b);
        match b.ty {
            Ty::Bit(w) | Ty::Int(w) => Some((b, w)),
            _ => {
                self.error(
                    codes::TYPE_MISMATCH,
                    base.span,
                    format!("{} cannot be sliced", self.ty_name(&b.ty)),
                );
                None
            }
        }
    }

    /// The low bit of `e[lo +: w]` when it is known only at run time (P4_16
    /// v1.2.5 §8.6; p4c takes any unsigned `lo` there): `Some(None)` for a
    /// compile-time `lo`, which makes an ordinary slice, `None` after an error.
    /// A `lo` that is `written` to is read twice, so it may not call anything.
    pub(crate) fn run_time_low_bit(
        &mut self,
        lo: &ast::Expr,
        written: bool,
    ) -> Option<Option<Expr>> {
        let low = match self.expr_any(lo)? {
            TE::Inf(_) => return Some(None),
            TE::Typed(x) if matches!(x.kind, ExprKind::Int(_)) => return Some(None),
            TE::Typed(x) => x,
        };
        if !matches!(low.ty, Ty::Bit(_)) {
            self.error(
                codes::TYPE_MISMATCH,
                lo.span,
                format!(
                    "the low bit of `+:` must be unsigned, not {}",
                    self.ty_name(&low.ty)
                ),
            );
            return None;
        }
        if written && crate::ir::visit::has_call(&low) {
            self.unsupported(
                lo.span,
                "writing through `+:` whose low bit calls something (it is read twice)",
            );
            return None;
        }
        Some(Some(low))
    }

    /// The width `w` of `e[lo +: w]` over a `value_width`-bit value: a
    /// compile-time number from 1 to `value_width`.
    pub(crate) fn plus_slice_width(
        &mut self,
        width: &ast::Expr,
        value_width: u32,
        span: Span,
    ) -> Option<u32> {
        let w = self.const_u32(width, "slice width")?;
        if w == 0 || w > value_width {
            self.error_label(
                codes::OVERFLOW,
                span,
                format!("a slice of {w} bits does not fit in a value of {value_width} bits"),
                "bad slice",
            );
            return None;
        }
        Some(w)
    }

    /// `b[low +: width]` for a run-time `low`: `(bit<width>)(b >> low)` over
    /// `b`'s bits, so bits past the top of `b` read as 0 and an `int<W>`
    /// brings no sign bits in.
    pub(crate) fn bits_from(b: Expr, low: Expr, width: u32, span: Span) -> Expr {
        let bits_ty = match b.ty {
            Ty::Int(w) | Ty::Bit(w) => Ty::Bit(w),
            _ => unreachable!("only bit strings are sliced"),
        };
        let bits = if b.ty == bits_ty {
            b
        } else {
            mk(ExprKind::Cast(Box::new(b)), bits_ty.clone(), span)
        };
        let shifted = mk(
            ExprKind::Binary(BinOp::Shr, Box::new(bits), Box::new(low)),
            bits_ty,
            span,
        );
        mk(ExprKind::Cast(Box::new(shifted)), Ty::Bit(width), span)
    }
}
