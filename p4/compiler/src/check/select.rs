//! `select` keys and keysets (P4_16 §13.6, §8.15): a key may be a tuple —
//! a list expression `{a, b}`, a tuple or struct value — matched by a list
//! keyset `{1, _}` (nested as the key is), by `default`/`_` as a whole, or,
//! when it is the only key, by a tuple keyset `(1, 2)` of its components.
//!
//! In: the checked key expressions and the AST keysets. Out: the IR's flat
//! form, one scalar key per leaf in order (a struct's fields in declaration
//! order, a tuple's elements in order) and one `KeySet` per leaf, so the
//! back end and value sets over the key tuple see scalars only (as p4c's
//! `UnnestSelectList` and `SimplifySelectList` leave them).

use super::{Checker, Sym, codes};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::{self, Ty};

/// The shape of one `select` key.
#[derive(Clone, Debug)]
pub(super) enum KeyShape {
    /// A scalar: its index among the flat keys.
    Scalar(usize),
    /// A tuple or struct: its components in order.
    Tuple(Vec<KeyShape>),
}

impl Checker {
    /// Adds the scalar leaves of the checked key `x` to `keys` and returns
    /// its shape; `None` after a diagnostic (a key that is not a scalar,
    /// a tuple or a struct of those).
    pub(super) fn select_key(
        &mut self,
        x: ir::Expr,
        span: Span,
        keys: &mut Vec<ir::Expr>,
    ) -> Option<KeyShape> {
        let parts: Vec<ir::Expr> = match (&x.kind, &x.ty) {
            (_, Ty::Bit(_) | Ty::Int(_) | Ty::Bool | Ty::Error | Ty::Enum(_) | Ty::SerEnum(_)) => {
                keys.push(x);
                return Some(KeyShape::Scalar(keys.len() - 1));
            }
            (ir::ExprKind::List(items), Ty::Tuple(_)) => items.clone(),
            (ir::ExprKind::List(items), Ty::Composite(c))
                if self.prog.composites[*c].kind == ir::CompositeKind::Struct =>
            {
                items.clone()
            }
            (_, Ty::Tuple(tys)) => Self::key_members(&x, tys.clone()),
            (_, Ty::Composite(c)) if self.prog.composites[*c].kind == ir::CompositeKind::Struct => {
                let tys = self.prog.composites[*c]
                    .fields
                    .iter()
                    .map(|f| f.ty.clone())
                    .collect();
                Self::key_members(&x, tys)
            }
            _ => {
                self.error(
                    codes::TYPE_MISMATCH,
                    span,
                    format!("cannot select on {}", self.ty_name(&x.ty)),
                );
                return None;
            }
        };
        // Each component is read from the key, so a key that calls
        // something would call it once per component.
        if !matches!(x.kind, ir::ExprKind::List(_)) && ir::visit::has_call(&x) {
            self.unsupported(
                span,
                "a select key of a tuple or struct type that calls something (give it a local first)",
            );
            return None;
        }
        let shapes = parts
            .into_iter()
            .map(|p| {
                let s = p.span;
                self.select_key(p, s, keys)
            })
            .collect::<Option<Vec<_>>>()?;
        Some(KeyShape::Tuple(shapes))
    }

    /// The components of a tuple or struct value `x` whose component types
    /// are `tys`.
    fn key_members(x: &ir::Expr, tys: Vec<Ty>) -> Vec<ir::Expr> {
        tys.into_iter()
            .enumerate()
            .map(|(i, ty)| ir::Expr {
                kind: ir::ExprKind::Member(Box::new(x.clone()), i as u32),
                ty,
                span: x.span,
            })
            .collect()
    }

    /// The keysets of one select case, one per flat key; `None` after a
    /// diagnostic.
    pub(super) fn select_keyset(
        &mut self,
        ks: &ast::Keyset,
        keys: &[ir::Expr],
        shapes: &[KeyShape],
    ) -> Option<Vec<ir::KeySet>> {
        if let [ast::KeysetElem::Default(_) | ast::KeysetElem::DontCare(_)] = ks.elems.as_slice() {
            return Some(vec![ir::KeySet::Any; keys.len()]);
        }
        // A value set over the whole key tuple: a struct's (or tuple's)
        // fields line up with the keys, for one key too (P4_16 "Parser
        // Value Sets": `value_set<S>` whose S has one field, on one key).
        if let [ast::KeysetElem::Expr(e)] = ks.elems.as_slice()
            && let ast::ExprKind::Name(p) = &e.kind
            && let Some(Sym::ValueSet(i, vty)) = self.lookup(p).cloned()
            && (keys.len() > 1 || matches!(vty, Ty::Tuple(_) | Ty::Composite(_)))
        {
            let parts: Vec<Ty> = self
                .value_set_parts(&vty, "")
                .into_iter()
                .map(|(_, t)| t)
                .collect();
            let key_tys: Vec<Ty> = keys.iter().map(|k| k.ty.clone()).collect();
            if parts != key_tys {
                self.error(
                    codes::TYPE_MISMATCH,
                    e.span,
                    "the value set's element type does not match the select keys",
                );
                return None;
            }
            let mut out = vec![ir::KeySet::ValueSetAll(i)];
            out.extend(std::iter::repeat_n(ir::KeySet::Any, keys.len() - 1));
            return Some(out);
        }
        // `(1, 2)` for the one tuple key `select(t)`: its components.
        let shapes = match shapes {
            [KeyShape::Tuple(parts)] if ks.is_tuple && ks.elems.len() == parts.len() => parts,
            _ => shapes,
        };
        if ks.elems.len() != shapes.len() {
            self.error_label(
                codes::BAD_SELECT,
                ks.span,
                format!(
                    "this case has {} values but the select has {} keys",
                    ks.elems.len(),
                    shapes.len()
                ),
                "wrong number of values",
            );
            return None;
        }
        let mut out = vec![ir::KeySet::Any; keys.len()];
        for (el, shape) in ks.elems.iter().zip(shapes) {
            self.keyset_part(el, shape, keys, &mut out)?;
        }
        Some(out)
    }

    /// Fills `out` (one keyset per flat key) for the keyset element `el`
    /// matched against a key of shape `shape`.
    fn keyset_part(
        &mut self,
        el: &ast::KeysetElem,
        shape: &KeyShape,
        keys: &[ir::Expr],
        out: &mut [ir::KeySet],
    ) -> Option<()> {
        let parts = match shape {
            KeyShape::Scalar(i) => {
                out[*i] = self.scalar_keyset(el, &keys[*i].ty)?;
                return Some(());
            }
            KeyShape::Tuple(parts) => parts,
        };
        let items = match el {
            ast::KeysetElem::Default(_) | ast::KeysetElem::DontCare(_) => return Some(()),
            ast::KeysetElem::Expr(ast::Expr {
                kind: ast::ExprKind::List(items),
                ..
            }) => items,
            _ => {
                self.error_label(
                    codes::BAD_SELECT,
                    super::blocks::el_span(el),
                    "a key of a tuple or struct type is matched by a list `{..}`, `default` or `_`",
                    "not a list",
                );
                return None;
            }
        };
        if items.len() != parts.len() {
            self.error_label(
                codes::BAD_SELECT,
                super::blocks::el_span(el),
                format!(
                    "this list has {} values but its key has {} components",
                    items.len(),
                    parts.len()
                ),
                "wrong number of values",
            );
            return None;
        }
        for (item, part) in items.iter().zip(parts) {
            let el = match item.kind {
                ast::ExprKind::Default => ast::KeysetElem::Default(item.span),
                ast::ExprKind::DontCare => ast::KeysetElem::DontCare(item.span),
                _ => ast::KeysetElem::Expr(item.clone()),
            };
            self.keyset_part(&el, part, keys, out)?;
        }
        Some(())
    }
}
