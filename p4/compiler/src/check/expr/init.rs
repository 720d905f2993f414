//! List, tuple, struct and stack initialisers, and the types of locals
//! declared with them.

use super::{TE, mk};
use crate::check::{Checker, codes, fold};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Expr, ExprKind, Ty};

impl Checker {
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
    pub(super) fn tuple_as_struct(&mut self, data: Expr) -> Option<Expr> {
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

    pub(super) fn composite_init(
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
    pub(super) fn stack_init(
        &mut self,
        span: Span,
        elem: &Ty,
        n: u32,
        items: &[ast::Expr],
    ) -> Option<Expr> {
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
    pub(super) fn list_cast(
        &mut self,
        elem: &ast::Type,
        e: &ast::Expr,
        span: Span,
    ) -> Option<Expr> {
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
    pub(crate) fn is_list_of(&mut self, elem: &ast::Type, ty: &Ty) -> bool {
        let Ty::Tuple(items) = ty else { return false };
        if let ast::TypeKind::List(inner) = &elem.kind {
            return items.iter().all(|t| self.is_list_of(inner, t));
        }
        let Some(e) = self.ty(elem) else { return false };
        items.iter().all(|t| *t == e)
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
