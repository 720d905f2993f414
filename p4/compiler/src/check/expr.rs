//! Expression checking: names, members, operators, casts, calls (P4_16
//! spec §8, §8.9 width inference of integer literals, §6.8 calls).
//!
//! Contract: [`Checker::expr`] returns a typed, folded IR expression or
//! `None` after reporting at least one diagnostic. Integer literals and
//! `int` constants without a width are carried as [`TE::Inf`] until an
//! operand or the context gives them a type.

use super::{BodyKind, Checker, ParamSpec, Sym, codes, fold};
use crate::diag::Diagnostic;
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, BinOp, Builtin, Call, Expr, ExprKind, Ty, UnOp};
use p4_target::info::HashAlgorithm;

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

    /// `s.a[K]` where `a` is an array of scalars of struct or header `s`:
    /// the field `a[K]` (the checker lays arrays out as their elements).
    /// `None` when `base` does not name such an array; `Some(None)` after
    /// an error.
    fn array_element(
        &mut self,
        base: &ast::Expr,
        index: &ast::Expr,
        span: Span,
    ) -> Option<Option<TE>> {
        let ast::ExprKind::Member { base: sb, member } = &base.kind else {
            return None;
        };
        if !self.names_storage(sb) {
            return None;
        }
        // Only a composite with fields `a[0]`.. has an array `a`.
        let first = format!("{}[0]", member.name);
        let declared = self
            .prog
            .composites
            .iter()
            .any(|(_, c)| c.fields.iter().any(|f| f.name == first));
        if !declared {
            return None;
        }
        let sbx = match self.expr(sb, None) {
            Some(x) => x,
            None => return Some(None),
        };
        let Ty::Composite(c) = &sbx.ty else {
            return None;
        };
        let comp = &self.prog.composites[*c];
        let start = comp.fields.iter().position(|f| f.name == first)?;
        let len = comp.fields[start..]
            .iter()
            .take_while(|f| f.name.starts_with(&format!("{}[", member.name)))
            .count() as i128;
        let k = match self.expr_any(index) {
            Some(TE::Inf(v)) => v,
            Some(TE::Typed(x)) => match fold::const_int(&x) {
                Some(v) => v as i128,
                None => {
                    self.unsupported(index.span, "run-time indices into arrays of scalars");
                    return Some(None);
                }
            },
            None => return Some(None),
        };
        if !(0..len).contains(&k) {
            self.error(
                codes::OVERFLOW,
                index.span,
                format!("index {k} is out of bounds for an array of {len}"),
            );
            return Some(None);
        }
        let i = start + k as usize;
        let ty = self.prog.composites[*c].fields[i].ty.clone();
        Some(Some(TE::Typed(mk(
            ExprKind::Member(Box::new(sbx), i as u32),
            ty,
            span,
        ))))
    }

    /// Whether `e` is a variable, or a member or element of one.
    fn names_storage(&self, e: &ast::Expr) -> bool {
        match &e.kind {
            ast::ExprKind::Name(p) => matches!(self.lookup(p), Some(Sym::Var(..))),
            ast::ExprKind::Member { base, .. } | ast::ExprKind::Index { base, .. } => {
                self.names_storage(base)
            }
            _ => false,
        }
    }

    /// The struct made up for tuple type `tys` (`tuple_N`, fields `f0`,
    /// `f1`, ..; one per tuple type).
    pub(crate) fn tuple_struct(&mut self, tys: &[Ty], span: Span) -> ir::Handle<ir::Composite> {
        if let Some((_, h)) = self.tuple_structs.iter().find(|(t, _)| t == tys) {
            return *h;
        }
        let name = format!("tuple_{}", self.tuple_structs.len());
        let fields = tys
            .iter()
            .enumerate()
            .map(|(i, t)| ir::Field {
                name: format!("f{i}"),
                ty: t.clone(),
                field_lists: Vec::new(),
                span,
            })
            .collect();
        let h = self.prog.composites.append(
            ir::Composite {
                name,
                kind: ir::CompositeKind::Struct,
                fields,
                controller_header: None,
                padded: false,
            },
            span,
        );
        self.tuple_structs.push((tys.to_vec(), h));
        h
    }

    /// A tuple value (`{a, b}` as digest data) as a struct made up for it,
    /// `tuple_N` with fields `f0`, `f1`, .. of the element types, so that
    /// it is learned like a struct (one struct per tuple type).
    fn tuple_as_struct(&mut self, data: Expr) -> Option<Expr> {
        let Ty::Tuple(tys) = &data.ty else {
            return Some(data);
        };
        let tys = tys.clone();
        let h = self.tuple_struct(&tys, data.span);
        let span = data.span;
        let items = match data.kind {
            ExprKind::List(items) => items,
            _ => (0..tys.len())
                .map(|i| {
                    mk(
                        ExprKind::Member(Box::new(data.clone()), i as u32),
                        tys[i].clone(),
                        span,
                    )
                })
                .collect(),
        };
        Some(mk(ExprKind::List(items), Ty::Composite(h), span))
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

    fn composite_init(
        &mut self,
        span: Span,
        ty: &Ty,
        items: Vec<(Option<&ast::Ident>, &ast::Expr)>,
    ) -> Option<Expr> {
        let Ty::Composite(c) = ty else { return None };
        let comp = self.prog.composites[*c].clone();
        if comp.kind == ir::CompositeKind::Union {
            // P4_16 §8.13 gives structure-valued expressions struct and
            // header types only; a union is made valid through one member
            // (`u.h = ..`, `u.h.setValid()`) or invalid with `{#}`.
            self.diags.push(
                crate::diag::Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    format!(
                        "header union `{}` takes no `{{ .. }}` initialiser",
                        comp.name
                    ),
                )
                .with_primary(span, "")
                .with_note(
                    "P4_16 §8.13: a structure-valued expression is of a struct or header type; \
                     assign one member (`u.h = ..`) or `{#}` for a union with no valid member",
                ),
            );
            return None;
        }
        let declared = comp.declared_fields();
        // A last `...` gives every field not named its default value
        // (P4_16 §8.26): zero, false, the first enum member or error, an
        // invalid header.
        let mut items = items;
        let rest_default = items
            .last()
            .is_some_and(|(n, e)| n.is_none() && matches!(e.kind, ast::ExprKind::DotDotDot));
        if rest_default {
            items.pop();
            // p4c: "Structs, headers and tuples containing varbit fields
            // cannot be initialized using ..." (its default-initializer-err):
            // a varbit has no default length to give.
            if comp.fields.iter().any(|f| self.has_varbit(&f.ty)) {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    span,
                    format!(
                        "`{}` holds a varbit field, so `...` cannot give it default values",
                        comp.name
                    ),
                    "`...` here",
                );
                return None;
            }
        }
        if items.len() > declared.len() || (!rest_default && items.len() != declared.len()) {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "`{}` has {} fields, the initialiser gives {}",
                    comp.name,
                    declared.len(),
                    items.len()
                ),
                "wrong number of values",
            );
            return None;
        }
        let mut out: Vec<Option<Expr>> = vec![None; comp.fields.len()];
        if comp.padded
            && let Some(pad) = comp.fields.last()
        {
            // The padding the checker added is zero.
            out[comp.fields.len() - 1] = Some(mk(ExprKind::Int(0), pad.ty.clone(), span));
        }
        let mut ok = true;
        for (k, (name, e)) in items.iter().enumerate() {
            let idx = match name {
                Some(n) => match declared.iter().position(|f| f.name == n.name) {
                    Some(i) => i,
                    None => {
                        self.error(
                            codes::UNKNOWN_FIELD,
                            n.span,
                            format!("`{}` has no field `{}`", comp.name, n.name),
                        );
                        ok = false;
                        continue;
                    }
                },
                None => k,
            };
            let fty = comp.fields[idx].ty.clone();
            match self.expr(e, Some(&fty)) {
                Some(x) => {
                    // P4_16 §7.6: a field of a `type`-declared type takes a
                    // value of another type only through a cast, here too.
                    let declared = self.field_nominal.get(&(c.index(), idx as u32)).cloned();
                    self.check_nominal_against(&declared, &x, e.span, "assign");
                    out[idx] = Some(x);
                }
                None => ok = false,
            }
        }
        if !ok {
            return None;
        }
        if rest_default {
            for (i, slot) in out.iter_mut().enumerate() {
                if slot.is_none() {
                    *slot = Some(self.default_of(&comp.fields[i].ty, span));
                }
            }
        }
        let items: Option<Vec<Expr>> = out.into_iter().collect();
        let Some(items) = items else {
            self.error(
                codes::ARG_COUNT,
                span,
                "a field is missing from the initialiser",
            );
            return None;
        };
        Some(mk(ExprKind::List(items), ty.clone(), span))
    }

    /// A header stack initialiser `{e0, e1, ..}` for a stack `elem[n]`
    /// (P4_16 §8.18: a list expression of as many headers, or header
    /// unions, as the stack holds; each element checked as an initialiser
    /// of `elem`, so `{1, 2}` and `(H){#}` work as for a single header).
    fn stack_init(&mut self, span: Span, elem: &Ty, n: u32, items: &[ast::Expr]) -> Option<Expr> {
        if items.len() != n as usize {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "a stack of {n} {} takes {n} elements, the initialiser gives {}",
                    self.ty_name(elem),
                    items.len()
                ),
                "wrong number of elements",
            );
            return None;
        }
        let v = self.elements_as(items, elem)?;
        Some(mk(
            ExprKind::List(v),
            Ty::Stack(Box::new(elem.clone()), n),
            span,
        ))
    }

    /// `(list<T>){e0, e1, ..}` (P4_16 §7.2.10, §8.12): each element is a
    /// `T`, and the value is a tuple of as many `T`s, usable wherever a
    /// tuple of that type is (extern arguments such as a hash's field list,
    /// comparisons). Only a list expression casts to a list type.
    fn list_cast(&mut self, elem: &ast::Type, e: &ast::Expr, span: Span) -> Option<Expr> {
        // A list of lists (P4_16 §7.2.10 lets T be any type, p4c's list8):
        // each element a list expression cast to the inner list type, of
        // its own length.
        if let ast::TypeKind::List(inner) = &elem.kind {
            let ast::ExprKind::List(items) = &e.kind else {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    e.span,
                    "only a list expression `{..}` can be cast to a list of lists",
                    "not a list expression",
                );
                return None;
            };
            let v = items
                .iter()
                .map(|i| self.list_cast(inner, i, i.span))
                .collect::<Option<Vec<_>>>()?;
            let ty = Ty::Tuple(v.iter().map(|x| x.ty.clone()).collect());
            return Some(mk(ExprKind::List(v), ty, span));
        }
        let elem = self.ty(elem)?;
        let ast::ExprKind::List(items) = &e.kind else {
            self.error_label(
                codes::TYPE_MISMATCH,
                e.span,
                format!(
                    "only a list expression `{{..}}` can be cast to list<{}>",
                    self.ty_name(&elem)
                ),
                "not a list expression",
            );
            return None;
        };
        let v = self.elements_as(items, &elem)?;
        let ty = Ty::Tuple(vec![elem; v.len()]);
        Some(mk(ExprKind::List(v), ty, span))
    }

    /// The type and checked initialiser of a parser's or control's local
    /// variable (a `list<T>` one through [`Self::list_decl`]). `None` after
    /// an error in its type.
    pub(crate) fn block_local(&mut self, v: &ast::VarDecl) -> Option<(Ty, Option<Expr>)> {
        if let ast::TypeKind::List(elem) = &v.ty.kind {
            let (ty, init) = self.list_decl(elem, v.init.as_ref(), v.span)?;
            return Some((ty, Some(init)));
        }
        let ty = self.local_ty(&v.ty)?;
        let init = v.init.as_ref().and_then(|e| self.expr(e, Some(&ty)));
        Some((ty, init))
    }

    /// The type of a variable: any type but `string` (P4_16 §7.1.5: "one
    /// cannot declare variables with a string type"; p4c's string-e1) or
    /// `void`, nor a tuple or stack holding one. The back end has no
    /// storage for either, so this stops it early.
    pub(crate) fn local_ty(&mut self, t: &ast::Type) -> Option<Ty> {
        self.storable_ty(t, "a variable")
    }

    /// The type `t` of a value that is stored (`what`: a variable, a
    /// function parameter), refused as [`Self::local_ty`] says; a type
    /// argument can bring the `void` or `string` in (p4c's
    /// call-on-function-illformed-after-specialization, `foo<string>(..)`).
    pub(crate) fn storable_ty(&mut self, t: &ast::Type, what: &str) -> Option<Ty> {
        let ty = self.ty(t)?;
        let Some(bad) = unstorable_part(&ty) else {
            return Some(ty);
        };
        let why = match bad {
            Ty::Str => "strings are only compile-time arguments",
            _ => "`void` is only the return type of a function returning nothing",
        };
        let msg = if *bad == ty {
            format!("{what} cannot have type `{}`: {why}", self.ty_name(bad))
        } else {
            format!(
                "{what} cannot have type `{}`, which holds a `{}`: {why}",
                self.ty_name(&ty),
                self.ty_name(bad)
            )
        };
        self.error(codes::TYPE_MISMATCH, t.span, msg);
        None
    }

    /// A local or constant declared `list<T>` (P4_16 §7.2.10): its length
    /// is its initialiser's, so it is a tuple of that many `T`, and it needs
    /// an initialiser: a list expression (each element checked as a `T`) or
    /// a value of such a tuple type (another list). `None` after an error.
    pub(crate) fn list_decl(
        &mut self,
        elem: &ast::Type,
        init: Option<&ast::Expr>,
        span: Span,
    ) -> Option<(Ty, Expr)> {
        let Some(init) = init else {
            self.error_label(
                codes::TYPE_MISMATCH,
                span,
                "a `list<..>` variable takes its length from its initialiser; give it one",
                "no initialiser",
            );
            return None;
        };
        let e = if matches!(init.kind, ast::ExprKind::List(_)) {
            self.list_cast(elem, init, init.span)?
        } else {
            let TE::Typed(x) = self.expr_any(init)? else {
                self.error_label(
                    codes::TYPE_MISMATCH,
                    init.span,
                    "a `list<..>` variable is initialised with a list",
                    "not a list",
                );
                return None;
            };
            if !self.is_list_of(elem, &x.ty) {
                let found = self.ty_name(&x.ty);
                self.error_label(
                    codes::TYPE_MISMATCH,
                    init.span,
                    format!("this {found} is not a list of the declared element type"),
                    "wrong element type",
                );
                return None;
            }
            x
        };
        Some((e.ty.clone(), e))
    }

    /// Whether `ty` is the tuple a `list<elem>` value is made of.
    fn is_list_of(&mut self, elem: &ast::Type, ty: &Ty) -> bool {
        let Ty::Tuple(items) = ty else { return false };
        if let ast::TypeKind::List(inner) = &elem.kind {
            return items.iter().all(|t| self.is_list_of(inner, t));
        }
        let Some(e) = self.ty(elem) else { return false };
        items.iter().all(|t| *t == e)
    }

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

    /// Splits the arguments of `C.apply(..)` for control `name`, whose
    /// directionless `int` parameters sit at `positions`: those values pick
    /// (or check) the copy of C for them; the others are applied to it.
    fn apply_int_args<'a>(
        &mut self,
        name: &str,
        positions: &[usize],
        args: &[&'a ast::Expr],
        span: Span,
    ) -> Option<(ir::Handle<ir::Control>, Vec<&'a ast::Expr>)> {
        let declared = self
            .ctor_controls
            .get(name)
            .map_or(0, |d| d.signature.params.len());
        self.split_apply_int_args(declared, positions, args, span, |c, values| {
            c.instantiate_ctor_control(name, &[], values, span)
        })
    }

    /// [`Self::apply_int_args`] for parser `name` applied in a state.
    fn apply_int_parser_args<'a>(
        &mut self,
        name: &str,
        positions: &[usize],
        args: &[&'a ast::Expr],
        span: Span,
    ) -> Option<(ir::Handle<ir::Parser>, Vec<&'a ast::Expr>)> {
        let declared = self
            .ctor_parsers
            .get(name)
            .map_or(0, |d| d.signature.params.len());
        self.split_apply_int_args(declared, positions, args, span, |c, values| {
            c.instantiate_ctor_parser(name, &[], values, span)
        })
    }

    /// The part of [`Self::apply_int_args`] controls and parsers share:
    /// `declared` apply parameters besides the `int` ones at `positions`;
    /// `instantiate` makes the copy for the `int` values.
    fn split_apply_int_args<'a, H>(
        &mut self,
        declared: usize,
        positions: &[usize],
        args: &[&'a ast::Expr],
        span: Span,
        instantiate: impl FnOnce(&mut Self, &[&ast::Expr]) -> Option<H>,
    ) -> Option<(H, Vec<&'a ast::Expr>)> {
        if !self.arg_count(span, "apply", declared + positions.len(), args.len()) {
            return None;
        }
        let values: Vec<&ast::Expr> = positions.iter().map(|i| args[*i]).collect();
        let others = args
            .iter()
            .enumerate()
            .filter(|(i, _)| !positions.contains(i))
            .map(|(_, a)| *a)
            .collect();
        let before = self.diags.len();
        let sub = instantiate(self, &values);
        // The values are checked as the constructor arguments they became;
        // the messages name the parameters as the program declares them.
        for d in &mut self.diags[before..] {
            d.message = d
                .message
                .replace("constructor parameter", "directionless apply parameter");
        }
        Some((sub?, others))
    }

    /// Each of `items` checked as an `elem`; every bad one is reported
    /// before the initialiser is refused.
    pub(crate) fn elements_as(&mut self, items: &[ast::Expr], elem: &Ty) -> Option<Vec<Expr>> {
        let checked: Vec<Option<Expr>> = items.iter().map(|i| self.expr(i, Some(elem))).collect();
        checked.into_iter().collect()
    }

    /// The default value of `ty` (P4_16 §8.26) as an expression.
    pub(crate) fn default_of(&self, ty: &Ty, span: Span) -> Expr {
        let kind = match ty {
            Ty::Bool => ExprKind::Bool(false),
            Ty::Bit(w) | Ty::Int(w) => fold::int_kind(0, *w),
            Ty::SerEnum(_) => ExprKind::Int(0),
            Ty::Error => ExprKind::ErrorCode(0),
            Ty::Enum(h) => ExprKind::EnumMember(*h, 0),
            _ => ExprKind::Default,
        };
        mk(kind, ty.clone(), span)
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
                    && let Some(v) = self.size_method(base, &member.name)
                {
                    return Some(TE::Inf(v));
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
            K::This | K::Default | K::DontCare | K::DotDotDot => {
                self.unsupported(span, "this expression form here");
                None
            }
        }
    }

    fn cast(&mut self, a: TE, to: &Ty, span: Span) -> Option<Expr> {
        let x = match a {
            TE::Inf(v) => {
                return match to {
                    Ty::Bit(w) | Ty::Int(w) => {
                        Some(mk(super::fold::int_kind(v, *w), to.clone(), span))
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

    fn member(&mut self, base: &ast::Expr, member: &ast::Ident, span: Span) -> Option<TE> {
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

    fn binary(
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
        // and the code generated gives zero, `e` still evaluated.
        let zero_dividend = match &a {
            TE::Inf(v) => *v == 0,
            TE::Typed(x) => matches!(x.kind, ExprKind::Int(0)),
        };
        if let TE::Typed(y) = &b
            && matches!(op, A::Div | A::Mod)
            && !zero_dividend
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
                if xw + yw > super::MAX_WIDTH {
                    self.error(
                        codes::BAD_WIDTH,
                        span,
                        format!(
                            "`++` result would be {} bits; at most {} are supported",
                            xw + yw,
                            super::MAX_WIDTH
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

    /// Checks that `e` can be assigned to and returns it.
    pub(crate) fn lvalue(&mut self, e: &ast::Expr) -> Option<Expr> {
        if !self.writable(e) {
            return None;
        }
        let x = self.expr(e, None)?;
        // A stack's `size`, `lastIndex` and `nextIndex` are members that
        // read a value, not storage (P4_16 §8.18); p4c's stack2: "not a
        // left-value".
        if !names_storage(&x) {
            self.error_label(
                codes::NOT_LVALUE,
                e.span,
                "this expression cannot be assigned to: it reads a value, it names no storage",
                "not an l-value",
            );
            return None;
        }
        Some(x)
    }

    /// The argument of an `out` (`is_out`) or `inout` parameter of type
    /// `ty`: `_` only for `out`.
    pub(crate) fn directed_arg(&mut self, e: &ast::Expr, is_out: bool, ty: &Ty) -> Option<Expr> {
        if is_out {
            self.out_arg(e, Some(ty))
        } else if matches!(e.kind, ast::ExprKind::DontCare) {
            self.error_label(
                codes::NOT_LVALUE,
                e.span,
                "`_` may only be passed to an `out` parameter",
                "an `inout` parameter",
            );
            None
        } else {
            self.lvalue(e)
        }
    }

    /// The argument of an `out` parameter of type `ty` (`None` when the
    /// parameter's type comes from the argument): an l-value, or `_`
    /// (P4_16 §6.8.3, "don't care"), which is bound to a fresh hidden local
    /// whose value is dropped after the call. The local's declaration goes
    /// to `pending_decls`, for the statement checker to put before the
    /// statement that makes the call.
    pub(crate) fn out_arg(&mut self, e: &ast::Expr, ty: Option<&Ty>) -> Option<Expr> {
        if !matches!(e.kind, ast::ExprKind::DontCare) {
            return self.lvalue(e);
        }
        let Some(ty) = ty else {
            self.error_label(
                codes::TYPE_MISMATCH,
                e.span,
                "cannot infer the type of `_` here",
                "give the call a type argument",
            );
            return None;
        };
        let Some(body) = self.body.as_mut() else {
            self.unsupported(
                e.span,
                "`_` arguments outside parser states, actions and apply blocks",
            );
            return None;
        };
        let idx = body.vars.len() as u32;
        body.vars.push(ir::Var {
            name: "dont_care".into(),
            ty: ty.clone(),
            param: None,
        });
        self.pending_decls.push(ir::Stmt::Decl(idx, None));
        Some(mk(
            ExprKind::Var(ir::VarRef::Local(idx)),
            ty.clone(),
            e.span,
        ))
    }

    fn writable(&mut self, e: &ast::Expr) -> bool {
        match &e.kind {
            ast::ExprKind::Name(p) => match self.lookup(p).cloned() {
                Some(Sym::Var(_, _, true, ..)) => true,
                Some(Sym::Var(_, _, false, ..)) => {
                    self.error_label(
                        codes::NOT_LVALUE,
                        e.span,
                        format!(
                            "cannot assign to `{}`: it is an `in` parameter",
                            p.ident.name
                        ),
                        "read-only",
                    );
                    false
                }
                Some(Sym::Const(..) | Sym::IntConst(_)) => {
                    self.error_label(
                        codes::NOT_LVALUE,
                        e.span,
                        format!("cannot assign to constant `{}`", p.ident.name),
                        "constant",
                    );
                    false
                }
                None => {
                    self.error_label(
                        codes::UNKNOWN_NAME,
                        e.span,
                        format!("cannot find `{}` in this scope", p.ident.name),
                        "not declared",
                    );
                    false
                }
                Some(_) => {
                    self.error(
                        codes::NOT_LVALUE,
                        e.span,
                        format!("cannot assign to `{}`", p.ident.name),
                    );
                    false
                }
            },
            ast::ExprKind::Member { base, .. }
            | ast::ExprKind::Index { base, .. }
            | ast::ExprKind::Slice { base, .. } => self.writable(base),
            _ => {
                self.error_label(
                    codes::NOT_LVALUE,
                    e.span,
                    "this expression cannot be assigned to",
                    "not an l-value",
                );
                false
            }
        }
    }

    // ----------------------------------------------------------------- calls

    /// Puts `args` in parameter order (P4_16 §6.8.2: all named or all
    /// positional) and fills parameters left out from their defaults
    /// (§6.8.3). A count mismatch it cannot resolve is left for the caller
    /// to report with its own message; `None` after a reported error.
    pub(crate) fn bind_args(
        &mut self,
        what: &str,
        params: &[ParamSpec],
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Vec<ast::Expr>> {
        let named = args.iter().filter(|a| a.name.is_some()).count();
        if named == 0 {
            let mut out: Vec<ast::Expr> = args.iter().map(|a| a.value.clone()).collect();
            if out.len() < params.len() && params[out.len()..].iter().all(|p| p.default.is_some()) {
                out.extend(params[out.len()..].iter().filter_map(|p| p.default.clone()));
            }
            return Some(out);
        }
        if named != args.len() {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!("the arguments of {what} must be all named or all positional"),
                "mixed arguments",
            );
            return None;
        }
        let mut slots: Vec<Option<ast::Expr>> = vec![None; params.len()];
        for a in args {
            let Some(n) = &a.name else { continue };
            match params.iter().position(|p| p.name == n.name) {
                Some(i) if slots[i].is_none() => slots[i] = Some(a.value.clone()),
                Some(_) => {
                    self.error_label(
                        codes::ARG_COUNT,
                        n.span,
                        format!("argument `{}` is given twice", n.name),
                        "again here",
                    );
                    return None;
                }
                None => {
                    self.error_label(
                        codes::ARG_COUNT,
                        n.span,
                        format!("{what} has no parameter `{}`", n.name),
                        "no such parameter",
                    );
                    return None;
                }
            }
        }
        // `@optional` parameters left out after the last one given: the
        // call binds to the shorter signature (see `user_externs`).
        let given = slots
            .iter()
            .zip(params)
            .rposition(|(s, p)| s.is_some() || p.default.is_some())
            .map_or(0, |i| i + 1);
        let mut out = Vec::new();
        for (i, (p, slot)) in params.iter().zip(slots).enumerate() {
            if i >= given && p.optional {
                continue;
            }
            match slot.or_else(|| p.default.clone()) {
                Some(e) => out.push(e),
                None => {
                    self.error_label(
                        codes::ARG_COUNT,
                        span,
                        format!("{what} needs an argument for `{}`", p.name),
                        "argument missing",
                    );
                    return None;
                }
            }
        }
        Some(out)
    }

    /// The parameters a call of `callee` binds its arguments to, when known.
    fn callee_params(&self, callee: &ast::Expr, args: &[ast::Argument]) -> Option<Vec<ParamSpec>> {
        let names: Vec<Option<&str>> = args
            .iter()
            .map(|a| a.name.as_ref().map(|n| n.name.as_str()))
            .collect();
        let from_sig = |s: &crate::v1model::Signature| {
            ParamSpec::named(s.params.iter().map(|p| p.name.to_string()))
        };
        match &callee.kind {
            ast::ExprKind::Name(p) => match self.lookup(p)? {
                Sym::Action(a) => self.action_params.get(&a.index()).cloned(),
                Sym::Function(f) => self.function_params.get(&f.index()).cloned(),
                Sym::GenericFunction(n) => self
                    .generic_fns
                    .get(n)
                    .map(|(d, _)| ParamSpec::of(&d.params)),
                Sym::ExternDecl(name) => {
                    crate::v1model::overload(crate::v1model::functions(name), args.len(), &names)
                        .map(from_sig)
                        .or_else(|| self.user_function_params(name, args.len()))
                }
                _ => None,
            },
            ast::ExprKind::Member { base, member } => {
                let ast::ExprKind::Name(p) = &base.kind else {
                    return None;
                };
                let object = match self.lookup(p)? {
                    Sym::Packet(false) => "packet_in",
                    Sym::Packet(true) => "packet_out",
                    Sym::Extern(i) => {
                        let kind = self.body_extern(*i)?.kind;
                        if let ir::ExternKind::User { decl, .. } = kind {
                            return self.user_method_params(decl, &member.name, args.len());
                        }
                        kind.type_name()
                    }
                    // A top-level instance used in a parser or function
                    // (declared there at the call): a v1model object's
                    // parameter names; a user extern's arguments bind by
                    // position until its instance is declared.
                    Sym::GlobalExtern => {
                        let g = self
                            .global_externs
                            .iter()
                            .find(|g| g.name.name == p.ident.name)?;
                        let ast::TypeKind::Named { name, .. } = &g.ty.kind else {
                            return None;
                        };
                        crate::v1model::object(&name.ident.name)?.name
                    }
                    Sym::SubControl(i) if member.name == "apply" => {
                        let ctl = self.body.as_ref()?.control?;
                        let sub = self.prog.controls[ctl].instances.get(*i as usize)?.1;
                        return Some(ParamSpec::named(
                            self.prog.controls[sub]
                                .params
                                .iter()
                                .map(|p| p.name.clone()),
                        ));
                    }
                    Sym::SubParser(h) if member.name == "apply" => {
                        return Some(ParamSpec::named(
                            self.prog.parsers[*h].params.iter().map(|p| p.name.clone()),
                        ));
                    }
                    _ => return None,
                };
                crate::v1model::overload(
                    crate::v1model::methods(object, &member.name),
                    args.len(),
                    &names,
                )
                .map(from_sig)
            }
            _ => None,
        }
    }

    /// An `apply` of a parser or control with `params` given `got`
    /// positional arguments: the parameters left out at the end must all
    /// have a default value (P4_16 §6.8.3).
    fn apply_arg_count(&mut self, span: Span, params: &[ir::BlockParam], got: usize) -> bool {
        if got < params.len() && params[got..].iter().all(|p| p.default.is_some()) {
            return true;
        }
        self.arg_count(span, "apply", params.len(), got)
    }

    fn arg_count(&mut self, span: Span, what: &str, want: usize, got: usize) -> bool {
        if want != got {
            self.error_label(
                codes::ARG_COUNT,
                span,
                format!(
                    "{what} takes {want} argument{}, {got} given",
                    if want == 1 { "" } else { "s" }
                ),
                "wrong number of arguments",
            );
            return false;
        }
        true
    }

    fn void_call(c: Call, span: Span) -> Expr {
        mk(ExprKind::Call(Box::new(c)), Ty::Void, span)
    }

    /// Checks a call; void calls come back with type `Void`.
    /// `x.minSizeInBits()`, `minSizeInBytes`, `maxSizeInBits`,
    /// `maxSizeInBytes` of a header, header stack, header union or struct
    /// of bit strings (or of such a type by name): compile-time integers
    /// (P4_16 §8.9.2). `None` when `base.name()` is not one of these.
    fn size_method(&mut self, base: &ast::Expr, name: &str) -> Option<i128> {
        let (max, bytes) = match name {
            "minSizeInBits" => (false, false),
            "minSizeInBytes" => (false, true),
            "maxSizeInBits" => (true, false),
            "maxSizeInBytes" => (true, true),
            _ => return None,
        };
        let ty = match &base.kind {
            ast::ExprKind::Name(p) => match self.lookup(p).cloned() {
                Some(Sym::Type(t)) => t,
                Some(Sym::Var(_, t, ..)) => t,
                _ => self.expr(base, None)?.ty,
            },
            _ => self.expr(base, None)?.ty,
        };
        let bits = self.size_in_bits(&ty, max)?;
        Some(i128::from(if bytes { bits.div_ceil(8) } else { bits }))
    }

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
                        let sizes = sizes?;
                        if max {
                            sizes.into_iter().max()
                        } else {
                            sizes.into_iter().min()
                        }
                        .or(Some(0))
                    }
                    ir::CompositeKind::Struct => ty.serial_width(&self.prog),
                }
            }
            Ty::Stack(elem, n) => self.size_in_bits(elem, max).map(|b| b * n),
            _ => None,
        }
    }

    pub(crate) fn call(
        &mut self,
        callee: &ast::Expr,
        type_args: &[ast::Type],
        args: &[ast::Argument],
        span: Span,
    ) -> Option<Expr> {
        // Type arguments that are all don't-care (`f<_, _>(x)`) leave every
        // one to inference from the arguments, as if none were written; a
        // mix of given and `_` is not supported yet (`Checker::ty`).
        let type_args = match type_args {
            [_, ..]
                if type_args
                    .iter()
                    .all(|t| matches!(t.kind, ast::TypeKind::DontCare)) =>
            {
                &[]
            }
            _ => type_args,
        };
        let bound;
        let args: Vec<&ast::Expr> = match self.callee_params(callee, args) {
            Some(params) => {
                let what = format!("`{}`", super::blocks::expr_text(callee));
                bound = self.bind_args(&what, &params, args, span)?;
                bound.iter().collect()
            }
            None => {
                if let Some(n) = args.iter().find_map(|a| a.name.as_ref()) {
                    self.error_label(
                        codes::ARG_COUNT,
                        n.span,
                        "this call does not take named arguments",
                        "named argument",
                    );
                    return None;
                }
                args.iter().map(|a| &a.value).collect()
            }
        };
        match &callee.kind {
            ast::ExprKind::Name(p) => match self.lookup(p).cloned() {
                Some(Sym::Action(a)) => {
                    // Actions are never generic (P4_16 §14.1; p4c's issue3656).
                    let what = format!("action `{}`", p.ident.name);
                    if !self.no_type_args(type_args, &what, span) {
                        return None;
                    }
                    self.action_call(a, &args, span)
                }
                Some(Sym::GenericFunction(n)) => {
                    let f = self.instantiate_generic_fn(&n, type_args, &args, span)?;
                    self.function_call(f, &args, span)
                }
                Some(Sym::Function(f)) => {
                    if !type_args.is_empty() {
                        self.error(
                            codes::ARG_COUNT,
                            span,
                            format!("function `{}` takes no type arguments", p.ident.name),
                        );
                        return None;
                    }
                    self.function_call(f, &args, span)
                }
                Some(Sym::ExternDecl(name)) => self.extern_fn(&name, type_args, &args, span),
                Some(_) => {
                    self.error(
                        codes::WRONG_KIND,
                        callee.span,
                        format!("`{}` cannot be called", p.ident.name),
                    );
                    None
                }
                None => {
                    self.error_label(
                        codes::UNKNOWN_NAME,
                        callee.span,
                        format!("cannot find `{}` in this scope", p.ident.name),
                        "not declared",
                    );
                    None
                }
            },
            ast::ExprKind::Member { base, member } => {
                self.method(base, member, type_args, &args, span)
            }
            _ => {
                self.error(codes::WRONG_KIND, callee.span, "this cannot be called");
                None
            }
        }
    }

    /// A call of (non-generic or instantiated) function `f`.
    fn function_call(
        &mut self,
        f: ir::Handle<ir::Function>,
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let func = self.prog.functions[f].clone();
        if !self.arg_count(
            span,
            &format!("function `{}`", func.name),
            func.n_params as usize,
            args.len(),
        ) {
            return None;
        }
        let specs = self.function_params.get(&f.index()).cloned();
        let mut v = Vec::new();
        for (i, (prm, a)) in func.vars.iter().zip(args).enumerate() {
            let x = if prm.param != Some(ir::Direction::In) {
                let l = self.directed_arg(a, prm.param == Some(ir::Direction::Out), &prm.ty)?;
                self.coerce(TE::Typed(l), &prm.ty, a.span)?
            } else {
                self.expr(a, Some(&prm.ty))?
            };
            self.check_arg_nominal(specs.as_deref(), i, &x, a.span);
            v.push(x);
        }
        if let Some(n) = self.function_ret_nominal.get(&f.index()).cloned() {
            self.expr_nominal.insert(span, n);
        }
        Some(mk(
            ExprKind::Call(Box::new(Call::Function(f, v))),
            func.ret.clone(),
            span,
        ))
    }

    fn action_call(
        &mut self,
        a: ir::Handle<ir::Action>,
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        self.facts.called_actions.insert(a.index());
        // The callee's meter reads count as the caller's (p4c inlines it).
        if let Some(reads) = self.facts.meter_reads.get(&a.index()).cloned() {
            self.facts.pending_meter_reads.extend(reads);
        }
        if let Some(counts) = self.facts.counter_counts.get(&a.index()).cloned() {
            self.facts.pending_counter_counts.extend(counts);
        }
        let ctl = self.body.as_ref().and_then(|b| b.control);
        self.check_action_use(a, ctl, span);
        match self.body.as_ref().map(|b| b.kind) {
            Some(BodyKind::Apply | BodyKind::Action) => {}
            _ => {
                self.error(
                    codes::NOT_ALLOWED_HERE,
                    span,
                    "actions may only be called from controls and actions",
                );
                return None;
            }
        }
        let act = self.prog.actions[a].clone();
        if !self.arg_count(
            span,
            &format!("action `{}`", act.name),
            act.n_params as usize,
            args.len(),
        ) {
            return None;
        }
        let specs = self.action_params.get(&a.index()).cloned();
        let mut v = Vec::new();
        for (i, (prm, a)) in act.vars.iter().zip(args).enumerate() {
            let x = if matches!(prm.param, Some(ir::Direction::Out | ir::Direction::InOut)) {
                let l = self.directed_arg(a, prm.param == Some(ir::Direction::Out), &prm.ty)?;
                self.coerce(TE::Typed(l), &prm.ty, a.span)?
            } else {
                self.expr(a, Some(&prm.ty))?
            };
            self.check_arg_nominal(specs.as_deref(), i, &x, a.span);
            v.push(x);
        }
        Some(Self::void_call(Call::Action(a, v), span))
    }

    /// P4_16 §7.6: an argument for a parameter of a `type`-declared type
    /// is of that type, and a value of one is not passed to a parameter of
    /// another (its underlying type included) without a cast.
    fn check_arg_nominal(&mut self, specs: Option<&[ParamSpec]>, i: usize, x: &Expr, span: Span) {
        if let Some(Some(n)) = specs.and_then(|s| s.get(i)).map(|p| p.nominal.clone()) {
            self.check_nominal_against(&n, x, span, "pass");
        }
    }

    /// P4_16 §7.6: no operator but `==` and `!=` is defined on a value of a
    /// `type`-declared type (`(U32)((bit<32>)x + 1)`: "casts needed for
    /// arithmetic"); p4c refuses it. `what` names the operator.
    /// The value a slice is taken of, and its width: a `bit<W>` or `int<W>`
    /// (a serializable enum as its representation).
    fn sliced(&mut self, base: &ast::Expr) -> Option<(Expr, u32)> {
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

    fn refuse_nominal_operand(&mut self, x: &Expr, span: Span, what: &str) -> bool {
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

    /// A hash algorithm argument: a member of v1model's `HashAlgorithm`.
    /// p4c's BMv2 back end takes only the enum declared in `v1model.p4`
    /// (a program's own `enum HashAlgorithm` is refused: "expected a
    /// HashAlgorithm member. Are you using an up-to-date v1model.p4?").
    pub(crate) fn hash_algo(&mut self, e: &ast::Expr) -> Option<HashAlgorithm> {
        let x = self.expr(e, None)?;
        let member = match x.kind {
            ExprKind::EnumMember(h, i)
                if self.prog.enums[h].name == "HashAlgorithm"
                    && self.model_files.contains(&self.prog.enums.span(h).file) =>
            {
                Some((h, i))
            }
            _ => None,
        };
        let Some((h, i)) = member else {
            self.error(
                codes::TYPE_MISMATCH,
                e.span,
                "expected a member of v1model.p4's HashAlgorithm such as `HashAlgorithm.crc16`",
            );
            return None;
        };
        let en = &self.prog.enums[h];
        let name = en.members[i as usize].0.as_str();
        Some(match name {
            "crc32" => HashAlgorithm::Crc32,
            "crc32_custom" => HashAlgorithm::Crc32Custom,
            "crc16" => HashAlgorithm::Crc16,
            "crc16_custom" => HashAlgorithm::Crc16Custom,
            "random" => HashAlgorithm::Random,
            "identity" => HashAlgorithm::Identity,
            "csum16" => HashAlgorithm::Csum16,
            "xor16" => HashAlgorithm::Xor16,
            _ => {
                self.error(
                    codes::TYPE_MISMATCH,
                    e.span,
                    format!("`{name}` is not a hash algorithm"),
                );
                return None;
            }
        })
    }

    /// A field list argument: a list, struct or header; flattened by the back
    /// end. The call's type argument (`hash<O, T, D, M>`'s D,
    /// `update_checksum<T, O>`'s T), when given, is its type.
    fn data_arg(&mut self, e: &ast::Expr, want: Option<&Ty>) -> Option<Vec<Expr>> {
        let x = self.expr(e, want)?;
        let ok = |t: &Ty| !matches!(t, Ty::Stack(..) | Ty::Varbit(_) | Ty::Str | Ty::Void);
        if !ok(&x.ty) {
            self.error(
                codes::TYPE_MISMATCH,
                e.span,
                format!("{} cannot be used as a field list", self.ty_name(&x.ty)),
            );
            return None;
        }
        Some(vec![x])
    }

    fn const_u8(&mut self, e: &ast::Expr) -> Option<u8> {
        let v = self.const_value(e)?;
        if !(0..=255).contains(&v) {
            self.error(
                codes::OVERFLOW,
                e.span,
                "a field list index must be 0..=255",
            );
            return None;
        }
        Some(v as u8)
    }

    fn in_control(&mut self, span: Span, what: &str) -> bool {
        match self.body.as_ref().map(|b| b.kind) {
            Some(BodyKind::Apply | BodyKind::Action) => true,
            _ => {
                self.error(
                    codes::NOT_ALLOWED_HERE,
                    span,
                    format!("`{what}` may only be called in controls and actions"),
                );
                false
            }
        }
    }

    fn extern_fn(
        &mut self,
        name: &str,
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        // The extern functions of core.p4 and v1model.p4 that have no type
        // parameters.
        const PLAIN: &[&str] = &[
            "mark_to_drop",
            "verify",
            "static_assert",
            "clone",
            "truncate",
            "assert",
            "assume",
            "clone_preserving_field_list",
            "resubmit_preserving_field_list",
            "recirculate_preserving_field_list",
        ];
        // The program's own overload of a v1model name (another arity).
        if !crate::v1model::functions(name).any(|s| s.params.len() == args.len())
            && self.is_user_function(name)
        {
            return self.user_function_call(name, type_args, args, span);
        }
        if PLAIN.contains(&name)
            && crate::v1model::functions(name).next().is_some()
            && !self.no_type_args(type_args, &format!("`{name}`"), span)
        {
            return None;
        }
        let explicit = self.explicit_type_args(name, type_args, args.len(), span)?;
        let b = match name {
            "mark_to_drop" => {
                if args.is_empty() {
                    // Deprecated form: the enclosing control's standard metadata.
                    let ctl = self.body.as_ref().and_then(|b| b.control);
                    if ctl.is_none() && self.body.as_ref().map(|b| b.kind) == Some(BodyKind::Action)
                    {
                        // A top-level action: the control that runs it.
                        self.uses_implicit_std_meta = true;
                        return Some(Self::void_call(
                            Call::Builtin(Box::new(Builtin::MarkToDropImplicit)),
                            span,
                        ));
                    }
                    let found = ctl.and_then(|c| self.std_meta_param(c));
                    let (Some(c), Some(i)) = (ctl, found) else {
                        self.error(
                            codes::NOT_ALLOWED_HERE,
                            span,
                            "`mark_to_drop()` needs a control with a standard_metadata_t parameter",
                        );
                        return None;
                    };
                    let ty = self.prog.controls[c].params[i]
                        .ty
                        .clone()
                        .unwrap_or(Ty::Void);
                    let sm = mk(ExprKind::Var(ir::VarRef::BlockParam(i as u32)), ty, span);
                    return Some(Self::void_call(
                        Call::Builtin(Box::new(Builtin::MarkToDrop(sm))),
                        span,
                    ));
                }
                if !self.arg_count(span, "mark_to_drop", 1, args.len()) {
                    return None;
                }
                let sm = self.lvalue(args[0])?;
                match &sm.ty {
                    Ty::Composite(c) if self.prog.composites[*c].name == "standard_metadata_t" => {}
                    _ => {
                        self.error(
                            codes::TYPE_MISMATCH,
                            args[0].span,
                            "mark_to_drop needs the standard metadata",
                        );
                        return None;
                    }
                }
                Builtin::MarkToDrop(sm)
            }
            "hash" => {
                if !self.arg_count(span, "hash", 5, args.len()) {
                    return None;
                }
                let out = self.lvalue(args[0])?;
                if !matches!(out.ty, Ty::Bit(_)) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[0].span,
                        "the hash result must be a bit<W>",
                    );
                    return None;
                }
                if let Some(o) = explicit.first()
                    && !self.same_as_type_arg("hash", "O", o, &out.ty, args[0].span)
                {
                    return None;
                }
                let algo = self.hash_algo(args[1])?;
                let base_te = self.expr_any(args[2])?;
                let max_te = self.expr_any(args[4])?;
                // Given type arguments T and M type `base` and `max`.
                let given = explicit.get(1).zip(explicit.get(3));
                // Without them, `base` and `max` have type parameters of
                // their own (T, M in v1model.p4): an integer without a width
                // gives them none, and p4c refuses it ("could not infer a
                // width").
                let mut widthless = false;
                for (te, a) in [(&base_te, args[2]), (&max_te, args[4])] {
                    if given.is_none() && matches!(te, TE::Inf(_)) {
                        self.error_label(
                            codes::TYPE_MISMATCH,
                            a.span,
                            "cannot infer the width of this hash argument: its type is a type \
                             parameter of `hash`; give the integer one (`16w0`, `(bit<32>)1024`)",
                            "no width",
                        );
                        widthless = true;
                    }
                }
                if widthless {
                    return None;
                }
                let base = match given {
                    Some((t, _)) => self.typed_by_arg("hash", "T", t, base_te, args[2].span)?,
                    None => self.coerce_loose(base_te, &out.ty, args[2].span)?,
                };
                let data = self.data_arg(args[3], explicit.get(2))?;
                let max = match given {
                    Some((_, m)) => self.typed_by_arg("hash", "M", m, max_te, args[4].span)?,
                    None => self.coerce_loose(max_te, &Ty::Bit(64), args[4].span)?,
                };
                Builtin::Hash {
                    out,
                    algo,
                    base,
                    data,
                    max,
                }
            }
            "random" => {
                if !self.arg_count(span, "random", 3, args.len()) {
                    return None;
                }
                let out = self.lvalue(args[0])?;
                if !matches!(out.ty, Ty::Bit(_)) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[0].span,
                        "random needs a bit<W> result",
                    );
                    return None;
                }
                if let Some(t) = explicit.first()
                    && !self.same_as_type_arg("random", "T", t, &out.ty, args[0].span)
                {
                    return None;
                }
                let ty = out.ty.clone();
                let lo = self.expr(args[1], Some(&ty))?;
                let hi = self.expr(args[2], Some(&ty))?;
                Builtin::Random { out, lo, hi }
            }
            "verify_checksum"
            | "update_checksum"
            | "verify_checksum_with_payload"
            | "update_checksum_with_payload" => {
                if !self.arg_count(span, name, 4, args.len()) {
                    return None;
                }
                let cond = self.expr(args[0], Some(&Ty::Bool))?;
                let data = self.data_arg(args[1], explicit.first())?;
                let with_payload = name.ends_with("payload");
                let algo = self.hash_algo(args[3])?;
                if with_payload && algo != HashAlgorithm::Csum16 {
                    self.unsupported(args[3].span, "checksums with payload other than csum16");
                    return None;
                }
                let verify = name.starts_with("verify");
                let checksum = if verify {
                    self.expr(args[2], None)?
                } else {
                    self.lvalue(args[2])?
                };
                if let Some(o) = explicit.get(1)
                    && !self.same_as_type_arg(name, "O", o, &checksum.ty, args[2].span)
                {
                    return None;
                }
                if verify {
                    Builtin::VerifyChecksum {
                        cond,
                        data,
                        checksum,
                        algo,
                        with_payload,
                    }
                } else {
                    Builtin::UpdateChecksum {
                        cond,
                        data,
                        checksum,
                        algo,
                        with_payload,
                    }
                }
            }
            "clone" | "clone3" | "clone_preserving_field_list" => {
                let want = if name == "clone" { 2 } else { 3 };
                if !self.in_control(span, name) || !self.arg_count(span, name, want, args.len()) {
                    return None;
                }
                let kind = self.expr(args[0], None)?;
                if !matches!(&kind.ty, Ty::Enum(e) if self.prog.enums[*e].name == "CloneType") {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[0].span,
                        "expected `CloneType.I2E` or `CloneType.E2E`",
                    );
                    return None;
                }
                let session = self.expr(args[1], Some(&Ty::Bit(32)))?;
                let field_list = match name {
                    "clone_preserving_field_list" => Some(self.const_u8(args[2])?),
                    "clone3" => {
                        let data = self.expr(args[2], explicit.first())?;
                        Some(self.synth_field_list(&data, args[2].span, name)?)
                    }
                    _ => None,
                };
                Builtin::Clone {
                    kind,
                    session,
                    field_list,
                }
            }
            "resubmit_preserving_field_list" | "recirculate_preserving_field_list" => {
                if !self.in_control(span, name) || !self.arg_count(span, name, 1, args.len()) {
                    return None;
                }
                let n = self.const_u8(args[0])?;
                if name.starts_with("resubmit") {
                    Builtin::Resubmit(n)
                } else {
                    Builtin::Recirculate(n)
                }
            }
            "resubmit" | "recirculate" => {
                // Deprecated form: the fields named in `data` travel with
                // the packet, through a field list made up for them.
                if !self.in_control(span, name) || !self.arg_count(span, name, 1, args.len()) {
                    return None;
                }
                let data = self.expr(args[0], explicit.first())?;
                let n = self.synth_field_list(&data, args[0].span, name)?;
                if name == "resubmit" {
                    Builtin::Resubmit(n)
                } else {
                    Builtin::Recirculate(n)
                }
            }
            "digest" => {
                if !self.in_control(span, name) || !self.arg_count(span, "digest", 2, args.len()) {
                    return None;
                }
                let _receiver = self.expr(args[0], Some(&Ty::Bit(32)))?;
                let want = match type_args.first() {
                    Some(t) => Some(self.ty(t)?),
                    None => None,
                };
                let data = self.expr(args[1], want.as_ref())?;
                let data = match &data.ty {
                    Ty::Tuple(_) => self.tuple_as_struct(data)?,
                    _ => data,
                };
                // A bit string (p4c: P4Info `type_spec.bitstring`), named
                // after its `typedef` when the type argument names one.
                if matches!(data.ty, Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::SerEnum(_)) {
                    if data.ty.scalar_width(&self.prog).unwrap_or(0) > 128 {
                        self.unsupported(
                            args[1].span,
                            "digests of a bit string wider than 128 bits",
                        );
                        return None;
                    }
                    let named = type_args.first().and_then(|t| match &t.kind {
                        ast::TypeKind::Named { name, args } if args.is_empty() => {
                            Some(name.ident.name.clone())
                        }
                        _ => None,
                    });
                    let digest = self.facts.scalar_digest_index(named, data.ty.clone(), span);
                    return Some(Self::void_call(
                        Call::Builtin(Box::new(Builtin::Digest {
                            digest,
                            data: vec![data],
                        })),
                        span,
                    ));
                }
                let Ty::Composite(c) = data.ty else {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[1].span,
                        "digest data must be a struct, a header, a tuple or a bit string",
                    );
                    return None;
                };
                if self.has_varbit(&data.ty) {
                    self.unsupported(args[1].span, "digests of data with varbit fields");
                    return None;
                }
                let digest = self.facts.digest_index(c);
                Builtin::Digest {
                    digest,
                    data: vec![data],
                }
            }
            "truncate" => {
                if !self.in_control(span, name) || !self.arg_count(span, "truncate", 1, args.len())
                {
                    return None;
                }
                Builtin::Truncate(self.expr(args[0], Some(&Ty::Bit(32)))?)
            }
            "assert" | "assume" => {
                if !self.in_control(span, name) || !self.arg_count(span, name, 1, args.len()) {
                    return None;
                }
                Builtin::Assert(self.expr(args[0], Some(&Ty::Bool))?)
            }
            "log_msg" => {
                // `log_msg(string msg)` and `log_msg<T>(string msg, in T data)`.
                if args.is_empty() || args.len() > 2 {
                    self.arg_count(span, "log_msg", 1, args.len());
                    return None;
                }
                if !matches!(args[0].kind, ast::ExprKind::Str(_)) {
                    self.error_label(
                        codes::TYPE_MISMATCH,
                        args[0].span,
                        "the message of `log_msg` must be a string literal",
                        "not a string",
                    );
                    return None;
                }
                if let Some(data) = args.get(1) {
                    if let Some(t) = explicit.first() {
                        self.expr(data, Some(t))?;
                    } else {
                        self.expr_any(data)?;
                    }
                }
                Builtin::LogMsg
            }
            "verify" => {
                if self.body.as_ref().map(|b| b.kind) != Some(BodyKind::Parser) {
                    self.error(
                        codes::NOT_ALLOWED_HERE,
                        span,
                        "`verify` may only be called in parsers",
                    );
                    return None;
                }
                if !self.arg_count(span, "verify", 2, args.len()) {
                    return None;
                }
                let c = self.expr(args[0], Some(&Ty::Bool))?;
                let e = self.expr(args[1], Some(&Ty::Error))?;
                Builtin::Verify(c, e)
            }
            "static_assert" => {
                if args.is_empty() || args.len() > 2 {
                    self.arg_count(span, "static_assert", 1, args.len());
                    return None;
                }
                let c = self.expr(args[0], Some(&Ty::Bool))?;
                match c.kind {
                    ExprKind::Bool(true) => {}
                    ExprKind::Bool(false) => {
                        let msg = match args.get(1).map(|a| &a.kind) {
                            Some(ast::ExprKind::Str(m)) => m.clone(),
                            _ => "static assertion failed".to_string(),
                        };
                        self.error_label(codes::STATIC_ASSERT, span, msg, "this is false");
                        return None;
                    }
                    _ => {
                        self.error(
                            codes::NOT_CONSTANT,
                            args[0].span,
                            "static_assert needs a compile-time condition",
                        );
                        return None;
                    }
                }
                return Some(mk(ExprKind::Bool(true), Ty::Bool, span));
            }
            other => return self.user_function_call(other, type_args, args, span),
        };
        Some(Self::void_call(Call::Builtin(Box::new(b)), span))
    }

    /// A made-up field list (index 255 down) for the deprecated
    /// `resubmit(data)` / `recirculate(data)` / `clone3(.., data)`: the
    /// top-level fields of the structs that `data` names.
    fn synth_field_list(&mut self, data: &Expr, span: Span, what: &str) -> Option<u8> {
        // p4c's BMv2 back end (its issue 1653): a struct passed whole may
        // not hold a header; its fields travel as metadata.
        if let Ty::Composite(c) = &data.ty
            && self.prog.composites[*c].kind == ir::CompositeKind::Struct
            && let Some(f) = self.prog.composites[*c].fields.iter().find(|f| {
                matches!(&f.ty, Ty::Composite(h)
                    if self.prog.composites[*h].kind == ir::CompositeKind::Header)
            })
        {
            let msg = format!(
                "v1model does not support header `{}` inside the struct passed to `{what}`",
                f.name
            );
            self.error_label(
                codes::TYPE_MISMATCH,
                span,
                msg,
                "pass metadata fields, e.g. `{ meta.a }`",
            );
            return None;
        }
        let mut fields = Vec::new();
        let mut items = Vec::new();
        match &data.kind {
            ExprKind::List(v) => items.extend(v.iter().cloned()),
            _ => items.push(data.clone()),
        }
        for it in &items {
            // Walk to the root variable; remember the first member taken.
            let mut e = it;
            let mut first = None;
            while let ExprKind::Member(b, i) = &e.kind {
                first = Some(*i);
                e = b;
            }
            match (&e.kind, first, &e.ty) {
                (ExprKind::Var(_), Some(i), root) => fields.push((root.clone(), i)),
                (ExprKind::Var(_), None, Ty::Composite(c)) => {
                    for i in 0..self.prog.composites[*c].fields.len() {
                        fields.push((e.ty.clone(), i as u32));
                    }
                }
                _ => {
                    self.error(
                        codes::TYPE_MISMATCH,
                        span,
                        "expected metadata fields, e.g. `{ meta.a, meta.b }`",
                    );
                    return None;
                }
            }
        }
        let k = self.prog.synth_field_lists.len();
        if k >= 64 {
            self.unsupported(span, "more than 64 deprecated field-list calls");
            return None;
        }
        let n = 255 - k as u8;
        self.prog.synth_field_lists.push((n, fields));
        Some(n)
    }

    /// Like `coerce` but accepts any bit width for typed values (extern
    /// arguments with generic types).
    fn coerce_loose(&mut self, te: TE, ty: &Ty, span: Span) -> Option<Expr> {
        match te {
            TE::Typed(x) if matches!(x.ty, Ty::Bit(_) | Ty::Int(_)) => Some(x),
            te => self.coerce(te, ty, span),
        }
    }

    fn method(
        &mut self,
        base: &ast::Expr,
        member: &ast::Ident,
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let m = member.name.as_str();
        if let ast::ExprKind::Name(p) = &base.kind {
            let mut sym = self.lookup(p).cloned();
            // A control with directionless `int` apply parameters, applied
            // directly: the copy checked for the values given, applied
            // with the other arguments.
            let rest: Vec<&ast::Expr>;
            let mut args = args;
            let body_kind = self.body.as_ref().map(|b| b.kind);
            if m == "apply"
                && let Some(Sym::CtorControl(n) | Sym::CtorParser(n)) = &sym
                && let Some(positions) = self.apply_int_params.get(n).cloned()
            {
                let parser = matches!(sym, Some(Sym::CtorParser(_)));
                if body_kind == Some(BodyKind::Apply) && !parser {
                    let (sub, others) = self.apply_int_args(n, &positions, args, span)?;
                    rest = others;
                    args = &rest;
                    sym = Some(Sym::Control(sub));
                } else if body_kind == Some(BodyKind::Parser) && parser {
                    let (sub, others) = self.apply_int_parser_args(n, &positions, args, span)?;
                    rest = others;
                    args = &rest;
                    sym = Some(Sym::SubParser(sub));
                }
            }
            // Direct type invocation (P4_16 §15.1): `C.apply(..)` applies a
            // fresh instance of C named like the type; `P.apply(..)` in a
            // parser state applies parser P.
            if m == "apply" {
                match sym {
                    Some(Sym::Control(sub)) => {
                        if let Some(ctl) = self
                            .body
                            .as_ref()
                            .filter(|b| b.kind == BodyKind::Apply)
                            .and_then(|b| b.control)
                        {
                            let name = self.prog.controls[sub].name.clone();
                            let c = &self.prog.controls[sub];
                            let has_objects = !c.tables.is_empty()
                                || !c.externs.is_empty()
                                || !c.instances.is_empty();
                            let twice = self.prog.controls[ctl]
                                .instances
                                .iter()
                                .any(|(n, _)| *n == name);
                            if has_objects && twice {
                                // Both instances would have one
                                // control-plane name (p4c names them
                                // after the type too).
                                self.error(
                                    codes::DUPLICATE,
                                    span,
                                    format!(
                                        "`{name}` is applied directly twice here and its tables or externs would share one control-plane name; instantiate it instead"
                                    ),
                                );
                                return None;
                            }
                            let sub = self.instance_copy(sub);
                            let instances = &mut self.prog.controls[ctl].instances;
                            sym = Some(Sym::SubControl(instances.len() as u32));
                            instances.push((name, sub));
                        }
                    }
                    Some(Sym::Parser(ph)) => sym = Some(Sym::SubParser(ph)),
                    _ => {}
                }
            }
            match sym {
                Some(Sym::Table(t)) => {
                    if !self.no_type_args(type_args, "a table's `apply`", span) {
                        return None;
                    }
                    if m != "apply" {
                        self.error(
                            codes::UNKNOWN_METHOD,
                            member.span,
                            format!("tables have no method `{m}`"),
                        );
                        return None;
                    }
                    if !self.in_control_apply(span) || !self.arg_count(span, "apply", 0, args.len())
                    {
                        return None;
                    }
                    return Some(Self::void_call(Call::TableApply(t), span));
                }
                Some(Sym::SubParser(ph)) => {
                    if m != "apply" {
                        self.error(
                            codes::UNKNOWN_METHOD,
                            member.span,
                            format!("parsers have no method `{m}`"),
                        );
                        return None;
                    }
                    if self.body.as_ref().map(|b| b.kind) != Some(BodyKind::Parser) {
                        self.error(
                            codes::NOT_ALLOWED_HERE,
                            span,
                            "sub-parsers may only be applied in parser states",
                        );
                        return None;
                    }
                    let without_externs = self.parser_apply_extern_args(ph, args, span)?;
                    let args = &without_externs[..];
                    let params = self.prog.parsers[ph].params.clone();
                    if !self.apply_arg_count(span, &params, args.len()) {
                        return None;
                    }
                    let mut v = Vec::new();
                    for (prm, a) in params.iter().zip(args) {
                        let Some(ty) = &prm.ty else {
                            let is_packet = matches!(&a.kind, ast::ExprKind::Name(p)
                                if matches!(self.lookup(p), Some(Sym::Packet(false))));
                            if !is_packet {
                                self.error(
                                    codes::TYPE_MISMATCH,
                                    a.span,
                                    "expected the packet_in parameter",
                                );
                                return None;
                            }
                            continue;
                        };
                        let x = if prm.dir == ir::Direction::In {
                            self.expr(a, Some(ty))?
                        } else {
                            let l = self.directed_arg(a, prm.dir == ir::Direction::Out, ty)?;
                            self.coerce(TE::Typed(l), ty, a.span)?
                        };
                        v.push(x);
                    }
                    v.extend(
                        params[args.len()..]
                            .iter()
                            .filter_map(|p| p.default.clone()),
                    );
                    return Some(Self::void_call(Call::ParserApply(ph, v), span));
                }
                Some(Sym::SubControl(i)) => {
                    if m != "apply" {
                        self.error(
                            codes::UNKNOWN_METHOD,
                            member.span,
                            format!("controls have no method `{m}`"),
                        );
                        return None;
                    }
                    if self.body.as_ref().map(|b| b.kind) != Some(BodyKind::Apply) {
                        self.error(
                            codes::NOT_ALLOWED_HERE,
                            span,
                            "controls may only be applied in an apply block",
                        );
                        return None;
                    }
                    let ctl = self.body.as_ref().and_then(|b| b.control)?;
                    let sub = self.prog.controls[ctl].instances[i as usize].1;
                    let without_externs = self.apply_extern_args(ctl, i, sub, args, span)?;
                    let args = &without_externs[..];
                    let params = self.prog.controls[sub].params.clone();
                    if !self.apply_arg_count(span, &params, args.len()) {
                        return None;
                    }
                    let mut v = Vec::new();
                    for (prm, a) in params.iter().zip(args) {
                        let Some(ty) = &prm.ty else {
                            // The only packet a control has is its own
                            // `packet_out`; the IR leaves it implicit.
                            let is_packet = matches!(&a.kind, ast::ExprKind::Name(p)
                                if matches!(self.lookup(p), Some(Sym::Packet(true))));
                            if !is_packet {
                                self.error(
                                    codes::TYPE_MISMATCH,
                                    a.span,
                                    "expected the packet_out parameter",
                                );
                                return None;
                            }
                            continue;
                        };
                        let x = if prm.dir == ir::Direction::In {
                            self.expr(a, Some(ty))?
                        } else {
                            let l = self.directed_arg(a, prm.dir == ir::Direction::Out, ty)?;
                            self.coerce(TE::Typed(l), ty, a.span)?
                        };
                        v.push(x);
                    }
                    v.extend(
                        params[args.len()..]
                            .iter()
                            .filter_map(|p| p.default.clone()),
                    );
                    return Some(Self::void_call(Call::ControlApply(i, v), span));
                }
                // A function sees no block's instances but the top-level
                // ones (P4_16 §10 declares functions at the top level; one
                // declared in a control sees that control's scope).
                Some(Sym::Extern(_))
                    if self.body.as_ref().map(|b| b.kind) == Some(BodyKind::Function) =>
                {
                    self.error_label(
                        codes::NOT_ALLOWED_HERE,
                        p.span,
                        format!(
                            "`{}` is an extern instance of the enclosing control: a function \
                             declared in a control cannot use its instances",
                            p.ident.name
                        ),
                        "declare the function at the top level, or pass what it needs",
                    );
                    return None;
                }
                Some(Sym::Extern(i)) => {
                    return self.extern_method(i, m, member.span, type_args, args, span);
                }
                // A top-level instance used in a parser or a function.
                Some(Sym::GlobalExtern) => {
                    let name = p.ident.name.clone();
                    return match self.global_in_body(&name, p.span) {
                        super::blocks::GlobalUse::Index(i) => {
                            self.extern_method(i, m, member.span, type_args, args, span)
                        }
                        super::blocks::GlobalUse::Reported => None,
                        super::blocks::GlobalUse::NotHere => {
                            // A constant's initialiser or a declaration's
                            // argument: extern methods run per packet.
                            self.error_label(
                                codes::NOT_ALLOWED_HERE,
                                p.span,
                                format!(
                                    "`{name}`'s methods are called outside a control, parser, \
                                     action or function"
                                ),
                                "not in a block",
                            );
                            None
                        }
                    };
                }
                Some(Sym::ExternDecl(n)) if self.is_user_extern_type(&n) => {
                    self.error_label(
                        codes::WRONG_KIND,
                        base.span,
                        format!(
                            "`{n}` is an extern type: call `{m}` on an instance of it (`{n}(..) name;`)"
                        ),
                        "not an instance",
                    );
                    return None;
                }
                Some(Sym::Packet(out)) => {
                    return self.packet_method(out, m, member.span, type_args, args, span);
                }
                _ => {}
            }
        }
        let b = self.expr(base, None)?;
        if matches!(b.ty, Ty::Composite(_) | Ty::Stack(..))
            && matches!(
                m,
                "isValid" | "setValid" | "setInvalid" | "push_front" | "pop_front"
            )
            && !self.no_type_args(type_args, &format!("`{m}`"), span)
        {
            return None;
        }
        let builtin = match (&b.ty, m) {
            (Ty::Composite(c), "isValid")
                if self.prog.composites[*c].kind != ir::CompositeKind::Struct =>
            {
                if !self.arg_count(span, "isValid", 0, args.len()) {
                    return None;
                }
                return Some(mk(ExprKind::IsValid(Box::new(b)), Ty::Bool, span));
            }
            (Ty::Composite(c), "setValid" | "setInvalid")
                if self.prog.composites[*c].kind == ir::CompositeKind::Header =>
            {
                if !self.arg_count(span, m, 0, args.len()) || !self.writable(base) {
                    return None;
                }
                if m == "setValid" {
                    Builtin::SetValid(b)
                } else {
                    Builtin::SetInvalid(b)
                }
            }
            (Ty::Stack(..), "push_front" | "pop_front") => {
                if !self.arg_count(span, m, 1, args.len()) || !self.writable(base) {
                    return None;
                }
                let n = self.const_u32(args[0], "count")?;
                if m == "push_front" {
                    Builtin::PushFront(b, n)
                } else {
                    Builtin::PopFront(b, n)
                }
            }
            (ty, _) => {
                self.error_label(
                    codes::UNKNOWN_METHOD,
                    member.span,
                    format!("{} has no method `{m}`", self.ty_name(ty)),
                    "unknown method",
                );
                return None;
            }
        };
        Some(Self::void_call(Call::Builtin(Box::new(builtin)), span))
    }

    /// Extern instance `i` of the block being checked: a control's (in its
    /// apply block or actions), or a parser's or function's own list.
    pub(crate) fn body_extern(&self, i: u32) -> Option<ir::ExternInst> {
        let body = self.body.as_ref()?;
        match (body.kind, body.control) {
            (BodyKind::Apply | BodyKind::Action, Some(ctl)) => {
                self.prog.controls[ctl].externs.get(i as usize).cloned()
            }
            (BodyKind::Parser | BodyKind::Function, _) | (BodyKind::Action, None) => {
                body.externs.get(i as usize).map(|e| e.inst.clone())
            }
            _ => None,
        }
    }

    /// Type arguments given to something that has no type parameters
    /// (P4_16 §8.18: their number must match; p4c's issue3656 gives an
    /// action some). Reports them and returns false.
    fn no_type_args(&mut self, type_args: &[ast::Type], what: &str, span: Span) -> bool {
        if type_args.is_empty() {
            return true;
        }
        self.error(
            codes::ARG_COUNT,
            span,
            format!("{what} takes no type arguments"),
        );
        false
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

    fn extern_method(
        &mut self,
        i: u32,
        m: &str,
        mspan: Span,
        type_args: &[ast::Type],
        args: &[&ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let Some(inst) = self.body_extern(i) else {
            self.error(
                codes::NOT_ALLOWED_HERE,
                span,
                "extern objects may only be used in controls, parsers and functions",
            );
            return None;
        };
        if let ir::ExternKind::User { decl, .. } = inst.kind {
            return self.user_method_call(i, &inst.name, decl, m, mspan, type_args, args, span);
        }
        // Of v1model's methods only `meter.execute_meter<T>` has a type
        // parameter (the colour's type); the others take no type arguments
        // (P4_16 §8.18: their number must match the declaration's).
        if m == "execute_meter" && matches!(inst.kind, ir::ExternKind::Meter { .. }) {
            if type_args.len() > 1 {
                self.error(
                    codes::ARG_COUNT,
                    span,
                    format!(
                        "`execute_meter` takes 1 type argument, {} given",
                        type_args.len()
                    ),
                );
                return None;
            }
        } else if !self.no_type_args(type_args, &format!("`{}.{m}`", inst.name), span) {
            return None;
        }
        let b = match (&inst.kind, m) {
            (ir::ExternKind::Register { cell, .. }, "read") => {
                if !self.arg_count(span, "read", 2, args.len()) {
                    return None;
                }
                let out = self.out_arg(args[0], Some(cell))?;
                let out = self.coerce(TE::Typed(out), cell, args[0].span)?;
                self.check_register_cell_nominal(&inst, &out, args[0].span);
                let index = self.extern_index(&inst, args[1])?;
                Builtin::RegisterRead {
                    inst: i,
                    out,
                    index,
                }
            }
            (ir::ExternKind::Register { cell, .. }, "write") => {
                if !self.arg_count(span, "write", 2, args.len()) {
                    return None;
                }
                let index = self.extern_index(&inst, args[0])?;
                let value = self.expr(args[1], Some(cell))?;
                self.check_register_cell_nominal(&inst, &value, args[1].span);
                Builtin::RegisterWrite {
                    inst: i,
                    index,
                    value,
                }
            }
            (ir::ExternKind::Counter { .. }, "count") => {
                if !self.arg_count(span, "count", 1, args.len()) {
                    return None;
                }
                let index = self.extern_index(&inst, args[0])?;
                Builtin::CounterCount { inst: i, index }
            }
            (ir::ExternKind::DirectCounter(_), "count") => {
                if !self.arg_count(span, "count", 0, args.len()) {
                    return None;
                }
                self.facts.pending_counter_counts.push((i, span));
                Builtin::DirectCount
            }
            (ir::ExternKind::Meter { .. }, "execute_meter") => {
                if !self.arg_count(span, "execute_meter", 2, args.len()) {
                    return None;
                }
                let index = self.extern_index(&inst, args[0])?;
                let out = self.lvalue(args[1])?;
                if !self.holds_meter_colour(&out.ty) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[1].span,
                        "a meter colour must go into a bit<W> or an enum bit<W>",
                    );
                    return None;
                }
                // An `out T` argument is exactly T.
                if let Some(t) = type_args.first() {
                    let want = self.ty(t)?;
                    if want != out.ty {
                        self.error(
                            codes::TYPE_MISMATCH,
                            args[1].span,
                            format!(
                                "`execute_meter<{}>` writes a {}: this argument is {}",
                                self.ty_name(&want),
                                self.ty_name(&want),
                                self.ty_name(&out.ty)
                            ),
                        );
                        return None;
                    }
                }
                Builtin::MeterExecute {
                    inst: i,
                    index,
                    out,
                }
            }
            (ir::ExternKind::DirectMeter(_), "read") => {
                if !self.arg_count(span, "read", 1, args.len()) {
                    return None;
                }
                if self.body.as_ref().map(|b| b.kind) != Some(BodyKind::Action) {
                    self.error(codes::NOT_ALLOWED_HERE, span, "direct_meter.read may only be called in an action of the table that owns the meter");
                    return None;
                }
                let out = self.lvalue(args[0])?;
                if !self.holds_meter_colour(&out.ty) {
                    self.error(
                        codes::TYPE_MISMATCH,
                        args[0].span,
                        "a meter colour must go into a bit<W> or an enum bit<W>",
                    );
                    return None;
                }
                self.facts.pending_meter_reads.push((i, span));
                Builtin::DirectMeterRead { inst: i, out }
            }
            _ => {
                self.error_label(
                    codes::UNKNOWN_METHOD,
                    mspan,
                    format!("`{}` has no method `{m}`", inst.name),
                    "unknown method",
                );
                return None;
            }
        };
        Some(Self::void_call(Call::Builtin(Box::new(b)), span))
    }

    /// Whether a meter may write its colour (0 green, 1 yellow, 2 red) into
    /// `ty`: a `bit<W>`, or a serializable `enum bit<W>`, which is held as
    /// its `bit<W>` (P4_16 §8.3; PINS declares `direct_meter<MeterColor_t>`
    /// with `enum bit<2> MeterColor_t`, and p4c takes it).
    fn holds_meter_colour(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Bit(_) => true,
            Ty::SerEnum(e) => matches!(self.prog.enums[*e].repr, Some(Ty::Bit(_))),
            _ => false,
        }
    }

    /// The type arguments given to a call of v1model extern function
    /// `name`: all of its generic overload's or none
    /// (`crate::v1model::GENERIC_FUNCTIONS`), checked in count and
    /// returned as types (empty when none are given). `None` after an error.
    fn explicit_type_args(
        &mut self,
        name: &str,
        type_args: &[ast::Type],
        n_args: usize,
        span: Span,
    ) -> Option<Vec<Ty>> {
        if type_args.is_empty() {
            return Some(Vec::new());
        }
        let Some(g) = crate::v1model::generic(name, n_args) else {
            // `log_msg(msg)`, the overload without type parameters.
            if crate::v1model::GENERIC_FUNCTIONS
                .iter()
                .any(|g| g.name == name)
            {
                self.no_type_args(
                    type_args,
                    &format!("`{name}` with {n_args} argument(s)"),
                    span,
                );
                return None;
            }
            return Some(Vec::new());
        };
        if type_args.len() != g.type_params.len() {
            self.error(
                codes::ARG_COUNT,
                span,
                format!(
                    "`{name}` takes {} type argument{} (`{name}<{}>`), {} given; give all or none",
                    g.type_params.len(),
                    if g.type_params.len() == 1 { "" } else { "s" },
                    g.type_params.join(", "),
                    type_args.len()
                ),
            );
            return None;
        }
        type_args.iter().map(|t| self.ty(t)).collect()
    }

    /// An `out`/`inout` argument (or an `in` one whose type is already
    /// fixed) of type `got` where the call's type argument `tp` is `want`:
    /// exactly that type. Reports and returns false otherwise.
    fn same_as_type_arg(&mut self, f: &str, tp: &str, want: &Ty, got: &Ty, span: Span) -> bool {
        if want == got {
            return true;
        }
        let msg = format!(
            "`{f}` was given {tp} = {}, but this argument is {}",
            self.ty_name(want),
            self.ty_name(got)
        );
        let label = format!("this is {}", self.ty_name(got));
        self.error_label(codes::TYPE_MISMATCH, span, msg, label);
        false
    }

    /// An `in` argument typed by the call's type argument `tp` = `want`: an
    /// integer without a width takes it, a typed value must have it.
    fn typed_by_arg(&mut self, f: &str, tp: &str, want: &Ty, te: TE, span: Span) -> Option<Expr> {
        if let TE::Typed(x) = &te
            && !self.same_as_type_arg(f, tp, want, &x.ty, span)
        {
            return None;
        }
        self.coerce(te, want, span)
    }

    /// P4_16 §7.6: a `register<T>`'s `read` and `write` take a `T` as
    /// written: of a `type`-declared T, a value of that type and no other
    /// (`register<Port_t>` into a `bit<9>` needs a cast), as p4c checks.
    fn check_register_cell_nominal(&mut self, inst: &ir::ExternInst, x: &Expr, span: Span) {
        if let Some(cell) = self.register_cell_nominal.get(&inst.span).cloned() {
            self.check_nominal_against(&cell, x, span, "pass");
        }
    }

    /// The `index` argument of a v1model `register`, `counter` or `meter`
    /// method, of the type the version declares
    /// (`crate::v1model::Object::index_ty`): `bit<32>` before 20200408, to
    /// which P4_16 converts only untyped integers (§8.11.2), then the
    /// instance's type argument `I` (an extern parameter's, for an instance
    /// passed to a control or parser).
    fn extern_index(&mut self, inst: &ir::ExternInst, arg: &ast::Expr) -> Option<Expr> {
        use crate::v1model::IndexTy;
        let it = self.expr_any(arg)?;
        let version = self.v1model_version;
        let declared =
            crate::v1model::object(inst.kind.type_name()).and_then(|o| o.index_ty(version));
        let want = match declared {
            Some(IndexTy::Bit32) => Ty::Bit(32),
            Some(IndexTy::TypeArg(_)) => match self.extern_index_ty.get(&inst.span) {
                Some(t) => t.clone(),
                None => return self.coerce_loose(it, &Ty::Bit(32), arg.span),
            },
            None => return self.coerce_loose(it, &Ty::Bit(32), arg.span),
        };
        if let TE::Typed(x) = &it
            && matches!(x.ty, Ty::Bit(_) | Ty::Int(_))
            && x.ty != want
        {
            let decl = match declared {
                Some(IndexTy::Bit32) => format!("`in bit<32> index` in v1model {version}"),
                _ => format!(
                    "`in I index`, and `{}` has I = {}",
                    inst.name,
                    self.ty_name(&want)
                ),
            };
            let msg = format!(
                "the index of `{}` must be {}, found {}: its methods declare {decl}; only integers without a width convert implicitly (P4_16 §8.11.2)",
                inst.name,
                self.ty_name(&want),
                self.ty_name(&x.ty)
            );
            let label = format!("cast it: `({})`", self.ty_name(&want));
            self.error_label(codes::WIDTH_MISMATCH, arg.span, msg, label);
            return None;
        }
        self.coerce(it, &want, arg.span)
    }

    fn packet_method(
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
}

impl Checker {
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

/// The `string` or `void` in `ty`, itself or an element of a tuple or stack:
/// no value of it can be stored.
fn unstorable_part(ty: &Ty) -> Option<&Ty> {
    match ty {
        Ty::Str | Ty::Void => Some(ty),
        Ty::Tuple(items) => items.iter().find_map(unstorable_part),
        Ty::Stack(elem, _) => unstorable_part(elem),
        _ => None,
    }
}

/// Whether `e` names storage an assignment can write: a variable, and
/// fields, elements and slices of one.
fn names_storage(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(_) => true,
        ExprKind::Member(b, _)
        | ExprKind::Index(b, _)
        | ExprKind::Slice(b, ..)
        | ExprKind::StackLast(b)
        | ExprKind::StackNext(b) => names_storage(b),
        _ => false,
    }
}
