//! Arrays of scalars in structs and headers (`bit<8>[4] a`, laid out as
//! fields `a[0]`..`a[3]`): their elements by compile-time index, and reads
//! through a run-time index (writes are `Checker::run_time_array_assign`).

use super::{TE, mk};
use crate::check::{Checker, Sym, codes, fold};
use crate::diag::Span;
use crate::front::ast;
use crate::ir::visit::has_call;
use crate::ir::{BinOp, Expr, ExprKind, Ty};

impl Checker {
    /// `s.a[i]` where `a` is an array of scalars of struct or header `s`:
    /// the field `a[K]` for a compile-time `i` (the checker lays arrays out
    /// as their elements), else [`Self::select_by_index`] over them, which
    /// reads the last element for an index out of range (as a header
    /// stack's read does; P4_16 §8.18 leaves the value unspecified).
    /// `None` when `base` does not name such an array; `Some(None)` after
    /// an error.
    pub(super) fn array_element(
        &mut self,
        base: &ast::Expr,
        index: &ast::Expr,
        span: Span,
    ) -> Option<Option<TE>> {
        let elems = match self.array_of_scalars(base)? {
            Some(a) => a,
            None => return Some(None),
        };
        let x = match self.array_index(index, elems.len()) {
            Some(ArrayIndex::Const(k)) => elems.into_iter().nth(k)?,
            Some(ArrayIndex::RunTime(i)) => {
                if has_call(&i) {
                    // Each comparison would call again.
                    self.unsupported(
                        index.span,
                        "run-time indices into arrays of scalars that call something, in a read",
                    );
                    return Some(None);
                }
                self.select_by_index(&i, elems, span)?
            }
            None => return Some(None),
        };
        Some(Some(TE::Typed(x)))
    }

    /// The span of the run-time index into an array of scalars that l-value
    /// `e` (`s.a[i]`, `s.a[i][3:0]`, ..) goes through, if any. Reports
    /// nothing.
    pub(super) fn run_time_array_index(&mut self, e: &ast::Expr) -> Option<Span> {
        match &e.kind {
            ast::ExprKind::Index { base, index } => {
                let before = self.diags.len();
                let found = match self.array_of_scalars(base) {
                    Some(Some(elems)) => {
                        matches!(
                            self.array_index(index, elems.len()),
                            Some(ArrayIndex::RunTime(_))
                        )
                    }
                    _ => false,
                };
                self.diags.truncate(before);
                if found {
                    Some(index.span)
                } else {
                    self.run_time_array_index(base)
                }
            }
            ast::ExprKind::Member { base, .. } | ast::ExprKind::Slice { base, .. } => {
                self.run_time_array_index(base)
            }
            _ => None,
        }
    }

    /// The elements of array of scalars `base` (`s.a`, laid out as fields
    /// `a[0]`, `a[1]`, .. of struct or header `s`), each as the member it
    /// is. `None` when `base` names no such array; `Some(None)` after an
    /// error.
    pub(crate) fn array_of_scalars(&mut self, base: &ast::Expr) -> Option<Option<Vec<Expr>>> {
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
        let prefix = format!("{}[", member.name);
        let elems = comp.fields[start..]
            .iter()
            .take_while(|f| f.name.starts_with(&prefix))
            .enumerate()
            .map(|(k, f)| {
                mk(
                    ExprKind::Member(Box::new(sbx.clone()), (start + k) as u32),
                    f.ty.clone(),
                    base.span,
                )
            })
            .collect();
        Some(Some(elems))
    }

    /// Index `index` into an array of `len` scalars: a compile-time one
    /// must be in range; a run-time one is any integer. `None` after an
    /// error.
    pub(crate) fn array_index(&mut self, index: &ast::Expr, len: usize) -> Option<ArrayIndex> {
        let k = match self.expr_any(index)? {
            TE::Inf(v) => v,
            TE::Typed(x) if !matches!(x.ty, Ty::Bit(_) | Ty::Int(_)) => {
                self.error(
                    codes::TYPE_MISMATCH,
                    index.span,
                    "an array index must be an integer",
                );
                return None;
            }
            TE::Typed(x) => match fold::const_int(&x) {
                Some(v) => v as i128,
                None => return Some(ArrayIndex::RunTime(x)),
            },
        };
        if !(0..len as i128).contains(&k) {
            self.error(
                codes::OVERFLOW,
                index.span,
                format!("index {k} is out of bounds for an array of {len}"),
            );
            return None;
        }
        Some(ArrayIndex::Const(k as usize))
    }

    /// `index == 0 ? values[0] : (index == 1 ? values[1] : .. last)`: the
    /// value `index` (a `bit<W>` or `int<W>`, evaluated once per
    /// comparison) picks, the last for any other index. Values at
    /// positions `index`'s type cannot hold are left out. `None` for no
    /// values.
    pub(crate) fn select_by_index(
        &self,
        index: &Expr,
        mut values: Vec<Expr>,
        span: Span,
    ) -> Option<Expr> {
        values.truncate(reachable_positions(&index.ty, values.len()).max(1));
        let mut chosen = values.pop()?;
        for (k, v) in values.into_iter().enumerate().rev() {
            let ty = chosen.ty.clone();
            chosen = mk(
                ExprKind::Mux(
                    Box::new(index_is(index, k, span)),
                    Box::new(v),
                    Box::new(chosen),
                ),
                ty,
                span,
            );
        }
        Some(chosen)
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
}

/// An index into an array of scalars: known at compile time (and in
/// range), or a run-time value.
pub(crate) enum ArrayIndex {
    Const(usize),
    RunTime(Expr),
}

/// `index == k`, `k` in `index`'s type.
pub(crate) fn index_is(index: &Expr, k: usize, span: Span) -> Expr {
    mk(
        ExprKind::Binary(
            BinOp::Eq,
            Box::new(index.clone()),
            Box::new(mk(ExprKind::Int(k as u128), index.ty.clone(), span)),
        ),
        Ty::Bool,
        span,
    )
}

/// How many of the first `len` positions an index of type `ty` can name:
/// all of them, or the non-negative values of a narrow `bit<W>`/`int<W>`.
pub(crate) fn reachable_positions(ty: &Ty, len: usize) -> usize {
    let values = match ty {
        Ty::Bit(w) => 1u128.checked_shl(*w),
        Ty::Int(w) => 1u128.checked_shl(w.saturating_sub(1)),
        _ => None,
    };
    values.map_or(len, |v| len.min(usize::try_from(v).unwrap_or(usize::MAX)))
}
