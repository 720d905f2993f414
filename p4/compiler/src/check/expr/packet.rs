//! `packet_in`/`packet_out` methods: extract, lookahead, advance, length
//! and emit.

use super::mk;
use crate::check::{Checker, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Builtin, Call, Expr, ExprKind, Ty};

impl Checker {
    /// The bits of a struct or tuple whose leaves are all scalars, as
    /// `lookahead` reads it; `None` for anything else.
    fn lookahead_bits(&self, ty: &Ty) -> Option<u32> {
        match ty {
            Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_) => ty.scalar_width(&self.prog),
            Ty::Composite(c) if self.prog.composites[*c].kind == ir::CompositeKind::Struct => {
                self.prog.composites[*c]
                    .fields
                    .iter()
                    .map(|f| self.lookahead_bits(&f.ty))
                    .sum()
            }
            Ty::Tuple(items) => items.iter().map(|t| self.lookahead_bits(t)).sum(),
            _ => None,
        }
    }

    /// Whether `lookahead` can read a value of `ty` member by member: a
    /// scalar of at most 128 bits, a header without a varbit field, a
    /// stack of such headers, or a struct or tuple of these.
    fn lookahead_by_member(&self, ty: &Ty) -> bool {
        let fixed_header = |t: &Ty| {
            matches!(t, Ty::Composite(c)
                if self.prog.composites[*c].kind == ir::CompositeKind::Header
                    && self.prog.composites[*c].varbit().is_none())
        };
        match ty {
            Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_) => {
                ty.scalar_width(&self.prog).is_some_and(|w| w <= 128)
            }
            Ty::Composite(c) => match self.prog.composites[*c].kind {
                ir::CompositeKind::Header => fixed_header(ty),
                ir::CompositeKind::Struct => self.prog.composites[*c]
                    .fields
                    .iter()
                    .all(|f| self.lookahead_by_member(&f.ty)),
                _ => false,
            },
            Ty::Tuple(items) => items.iter().all(|t| self.lookahead_by_member(t)),
            Ty::Stack(elem, _) => fixed_header(elem),
            _ => false,
        }
    }

    /// A packet method given `got` type arguments where it has `want` type
    /// parameters (P4_16 §8.18).
    fn packet_type_arg_count(&mut self, what: &str, want: usize, got: usize, span: Span) {
        self.error(
            codes::ARG_COUNT,
            span,
            format!("`{what}` takes {want} type argument, {got} given"),
        );
    }

    /// The argument of `extract<T>` or `emit<T>` is not of the type given.
    fn type_arg_mismatch(&mut self, what: &str, want: &Ty, got: &Ty, span: Span) {
        let msg = format!(
            "`{what}<{}>` takes a {}, not {}",
            self.ty_name(want),
            self.ty_name(want),
            self.ty_name(got)
        );
        self.error(codes::TYPE_MISMATCH, span, msg);
    }

    pub(super) fn packet_method(
        &mut self,
        out: bool,
        m: &str,
        mspan: Span,
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let b = match (out, m) {
            (false, "extract") => {
                if args.is_empty() || args.len() > 2 {
                    self.arg_count(span, "extract", 1, args.len());
                    return None;
                }
                // `extract<H>(_)` skips a header of type H.
                let skipped = match type_args {
                    [] => None,
                    [t] => Some(self.ty(t)?),
                    _ => {
                        self.packet_type_arg_count("extract", 1, type_args.len(), span);
                        return None;
                    }
                };
                let h = self.out_arg(args[0], skipped.as_ref())?;
                // `extract<T>(out T hdr)`: a header given with its type
                // argument is of exactly that type.
                if let Some(t) = &skipped
                    && *t != h.ty
                {
                    self.type_arg_mismatch("extract", t, &h.ty, args[0].span);
                    return None;
                }
                let var = match &h.ty {
                    Ty::Composite(c)
                        if self.prog.composites[*c].kind == ir::CompositeKind::Header =>
                    {
                        self.prog.composites[*c].varbit().is_some()
                    }
                    // A generic parser's `out T hdr` (checked with T
                    // opaque): only its instantiations say what T is.
                    Ty::Composite(c) if self.opaque_composites.contains(&c.index()) => false,
                    _ => {
                        self.error(
                            codes::TYPE_MISMATCH,
                            args[0].span,
                            format!("extract needs a header, not {}", self.ty_name(&h.ty)),
                        );
                        return None;
                    }
                };
                match (var, args.len()) {
                    (true, 2) => {
                        let len = self.expr(args[1], Some(&Ty::Bit(32)))?;
                        Builtin::Extract(h, Some(len))
                    }
                    (false, 1) => Builtin::Extract(h, None),
                    (true, _) => {
                        self.error(codes::ARG_COUNT, span, "a header with a varbit field needs the two-argument extract(hdr, bits)");
                        return None;
                    }
                    (false, _) => {
                        self.error(
                            codes::ARG_COUNT,
                            span,
                            "the two-argument extract needs a header with a varbit field",
                        );
                        return None;
                    }
                }
            }
            (false, "lookahead") => {
                // `lookahead` has no argument to infer its type from, so
                // `lookahead<_>()` and `lookahead()` name nothing to read.
                if args.is_empty()
                    && type_args
                        .iter()
                        .all(|t| matches!(t.kind, ast::TypeKind::DontCare))
                {
                    self.error_label(
                        codes::ARG_COUNT,
                        span,
                        "lookahead cannot infer the type to read: write it, as in \
                         `lookahead<bit<16>>()`",
                        "no type given",
                    );
                    return None;
                }
                if type_args.len() != 1 || !args.is_empty() {
                    self.error(
                        codes::ARG_COUNT,
                        span,
                        "lookahead takes one type argument and no arguments",
                    );
                    return None;
                }
                let ty = self.ty(&type_args[0])?;
                let fixed_header = matches!(&ty, Ty::Composite(c)
                    if self.prog.composites[*c].kind == ir::CompositeKind::Header
                        && self.prog.composites[*c].varbit().is_none());
                // A struct or tuple of scalars (nested structs and tuples
                // too) is read as one bit string of at most 128 bits and
                // split into its leaves, first field first (P4_16 §12.8.3:
                // as `extract` would lay it out).
                let flat_struct = matches!(&ty, Ty::Composite(c)
                        if self.prog.composites[*c].kind == ir::CompositeKind::Struct)
                    || matches!(&ty, Ty::Tuple(_));
                let flat_struct = flat_struct
                    && self
                        .lookahead_bits(&ty)
                        .is_some_and(|b| (1..=128).contains(&b));
                // Any other struct or tuple of scalars of at most 128 bits
                // each, fixed headers and stacks of them is read member by
                // member, as `extract` would (p4c's issue2465-bmv2:
                // `lookahead<S>()` of a struct holding a header stack).
                let by_member = (matches!(&ty, Ty::Composite(c)
                        if self.prog.composites[*c].kind == ir::CompositeKind::Struct)
                    || matches!(&ty, Ty::Tuple(_)))
                    && self.lookahead_by_member(&ty);
                if !matches!(ty, Ty::Bit(_) | Ty::Int(_) | Ty::Bool)
                    && !fixed_header
                    && !flat_struct
                    && !by_member
                {
                    self.unsupported(span, "lookahead of this type");
                    return None;
                }
                return Some(mk(ExprKind::Lookahead, ty, span));
            }
            (false, "length") => {
                if !self.arg_count(span, "length", 0, args.len())
                    || !self.no_type_args(type_args, "`length`", span)
                {
                    return None;
                }
                return Some(mk(ExprKind::PacketLength, Ty::Bit(32), span));
            }
            (false, "advance") => {
                if !self.arg_count(span, "advance", 1, args.len())
                    || !self.no_type_args(type_args, "`advance`", span)
                {
                    return None;
                }
                Builtin::Advance(self.expr(args[0], Some(&Ty::Bit(32)))?)
            }
            (true, "emit") => {
                if !self.arg_count(span, "emit", 1, args.len()) {
                    return None;
                }
                if type_args.len() > 1 {
                    self.packet_type_arg_count("emit", 1, type_args.len(), span);
                    return None;
                }
                let want = match type_args.first() {
                    Some(t) => Some(self.ty(t)?),
                    None => None,
                };
                let h = self.expr(args[0], want.as_ref())?;
                // `emit<T>(in T hdr)`: what is emitted is of type T.
                if let Some(t) = &want
                    && *t != h.ty
                {
                    self.type_arg_mismatch("emit", t, &h.ty, args[0].span);
                    return None;
                }
                if !matches!(h.ty, Ty::Composite(_) | Ty::Stack(..)) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[0].span,
                        format!("emit needs a header, not {}", self.ty_name(&h.ty)),
                    );
                    return None;
                }
                // A struct is emitted field by field, so each field must be
                // emittable in turn (P4_16 §15.1: headers, stacks, unions
                // and structs of them; BMv2 refuses anything else, p4c's
                // emit-struct-bmv2).
                if let Some(bad) = self.not_emittable(&h.ty) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[0].span,
                        format!(
                            "emit takes a header, header stack, header union or a struct of these; {} holds {}",
                            self.ty_name(&h.ty),
                            self.ty_name(&bad)
                        ),
                    );
                    return None;
                }
                Builtin::Emit(h)
            }
            _ => {
                self.error_label(
                    codes::UNKNOWN_METHOD,
                    mspan,
                    format!(
                        "{} has no method `{m}`",
                        if out { "packet_out" } else { "packet_in" }
                    ),
                    "unknown method",
                );
                return None;
            }
        };
        Some(Self::void_call(Call::Builtin(Box::new(b)), span))
    }

    /// The first type inside `ty` that `emit` cannot write: `None` for a
    /// header, header union or stack, and for a struct whose fields are all
    /// emittable.
    fn not_emittable(&self, ty: &Ty) -> Option<Ty> {
        match ty {
            Ty::Stack(..) => None,
            Ty::Composite(c) => {
                let comp = &self.prog.composites[*c];
                match comp.kind {
                    ir::CompositeKind::Header | ir::CompositeKind::Union => None,
                    ir::CompositeKind::Struct => {
                        comp.fields.iter().find_map(|f| self.not_emittable(&f.ty))
                    }
                }
            }
            other => Some(other.clone()),
        }
    }
}
