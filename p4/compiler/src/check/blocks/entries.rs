//! Constant table entries: keysets by match kind, priorities, and the
//! fields of value sets (P4_16 spec §14).

use super::el_span;
use super::tables::ActionList;
use crate::check::program_info::{EntryFacts, TableFacts};
use crate::check::{Checker, Sym, codes};
use crate::diag::{Diagnostic, Span};
use crate::front::ast;
use crate::ir::{self, Handle, Ty};
use p4_target::info::{ActionScope, MatchKind};
use p4_target::runtime::FieldMatch;

/// How a table numbers entries without a `priority`: the
/// `largest_priority_wins` and `priority_delta` properties (P4_16 v1.2.4
/// §14.2.1.4.1).
#[derive(Clone, Copy)]
pub(super) struct PriorityOrder {
    pub(super) largest_wins: bool,
    pub(super) delta: i64,
}

impl Checker {
    /// A table's `entries` (`const` when `facts.is_const`): each checked
    /// against the keys and actions, no priorities where the keys cannot
    /// overlap and no key twice, then numbered by `order` (P4_16 §14.2.1.4).
    pub(super) fn table_entries(
        &mut self,
        t: &ast::TableDecl,
        es: &[ast::TableEntry],
        keys: &[ir::Key],
        list: &ActionList,
        facts: &mut TableFacts,
        order: PriorityOrder,
    ) {
        let is_const = facts.is_const;
        let match_keys: Vec<(ir::KeyKind, Ty)> = keys
            .iter()
            .filter(|k| k.kind != ir::KeyKind::Selector)
            .map(|k| (k.kind, k.expr.ty.clone()))
            .collect();
        if match_keys.is_empty() && !es.is_empty() {
            self.error(
                codes::BAD_ENTRY,
                t.name.span,
                format!(
                    "table `{}` has entries but no key to match them on",
                    t.name.name
                ),
            );
        }
        let needs_priority = match_keys.iter().any(|(k, _)| {
            matches!(
                k,
                ir::KeyKind::Match(MatchKind::Ternary | MatchKind::Range | MatchKind::Optional)
            )
        });
        let mut explicit = Vec::new();
        let mut annotated = Vec::new();
        for en in es.iter() {
            if let Some((ef, p)) =
                self.entry(en, &match_keys, &list.actions, &list.bound, &list.scopes)
            {
                facts.entries.push(ef);
                if is_const && let Some(e) = &en.priority {
                    // p4c: "Table with 'const' entries cannot have
                    // priorities" (its EntryPriorities pass).
                    self.error_label(
                        codes::BAD_ENTRY,
                        e.span,
                        "a table with `const entries` cannot give its entries priorities",
                        "write `entries = { .. }` to use `priority =`",
                    );
                }
                let annotation = ast::find_annotation(&en.annotations, "priority")
                    .and_then(|a| a.int_arg())
                    .map(|i| i64::try_from(i.value).unwrap_or(i64::MAX));
                annotated.push(annotation);
                explicit.push((p, en.span));
            }
        }
        if !needs_priority
            && !is_const
            && let Some(e) = es.iter().find_map(|en| en.priority.as_ref())
        {
            // P4_16 §14.2.1.4: priorities order entries whose keysets
            // can overlap, which only ternary, range and optional keys
            // allow (p4c: "match type does not require priorities").
            self.error_label(
                codes::BAD_ENTRY,
                e.span,
                format!(
                    "table `{}` has only exact and lpm keys, so its entries take no priority",
                    t.name.name
                ),
                "remove `priority =`",
            );
        }
        if !needs_priority {
            // Without priorities an entry is known by its key alone
            // (P4Runtime), so two entries with one key cannot both be
            // installed; p4c: "Duplicate entry keys" (its
            // table-entries-error).
            let mut seen: std::collections::HashMap<
                &[Option<p4_target::runtime::FieldMatch>],
                crate::diag::Span,
            > = std::collections::HashMap::new();
            let mut dups = Vec::new();
            for (ef, (_, span)) in facts.entries.iter().zip(&explicit) {
                if let Some(first) = seen.insert(ef.matches.as_slice(), *span) {
                    dups.push((*span, first));
                }
            }
            for (span, first) in dups {
                self.diags.push(
                    Diagnostic::error(
                        codes::BAD_ENTRY,
                        format!("table `{}` has two entries with the same key", t.name.name),
                    )
                    .with_primary(span, "duplicate entry key")
                    .with_secondary(first, "first entry with this key"),
                );
            }
        }
        let prios = if !needs_priority {
            None
        } else if is_const && annotated.iter().any(Option::is_some) {
            Some(Self::annotated_priorities(&annotated))
        } else {
            self.entry_priorities(&explicit, order.largest_wins, order.delta)
        };
        if let Some(prios) = prios {
            for (ef, p) in facts.entries.iter_mut().zip(prios) {
                ef.priority = p;
            }
        }
    }

    /// The runtime priorities (larger wins, at least 1) of `const entries`
    /// with p4c's `@priority(N)` annotations, as p4c gives them to BMv2: an
    /// entry's priority is its annotation, or else its position (1, 2, ..),
    /// and the smallest wins (p4c's table-entries-priority-bmv2 sample).
    pub(super) fn annotated_priorities(annotated: &[Option<i64>]) -> Vec<i32> {
        let bmv2: Vec<i64> = annotated
            .iter()
            .enumerate()
            .map(|(i, a)| a.unwrap_or(i as i64 + 1).max(0))
            .collect();
        let max = bmv2.iter().copied().max().unwrap_or(0);
        bmv2.iter()
            .map(|&p| i32::try_from(max - p + 1).unwrap_or(i32::MAX))
            .collect()
    }

    /// The runtime priorities (larger wins, at least 1) of a table's
    /// entries, from their explicit priorities (`priority = N:` or
    /// `@priority(N)`) by the rules of P4_16 v1.2.4 §14.2.1.4.1: without any
    /// explicit priority, entries are numbered so that the first wins;
    /// otherwise the first entry must have one and each entry without one
    /// takes the previous entry's priority, one `priority_delta` weaker.
    pub(super) fn entry_priorities(
        &mut self,
        explicit: &[(Option<i64>, Span)],
        largest_wins: bool,
        delta: i64,
    ) -> Option<Vec<i32>> {
        let n = explicit.len() as i64;
        let mut prio: Vec<i64> = Vec::with_capacity(explicit.len());
        if explicit.iter().all(|(p, _)| p.is_none()) {
            for j in 0..n {
                prio.push(if largest_wins {
                    1 + (n - 1 - j) * delta
                } else {
                    1 + j * delta
                });
            }
        } else {
            let Some((Some(first), _)) = explicit.first() else {
                let span = explicit.first().map(|e| e.1).unwrap_or_default();
                self.error_label(
                    codes::BAD_ENTRY,
                    span,
                    "the first entry needs an explicit priority when other entries have one",
                    "no `priority = N:`",
                );
                return None;
            };
            let mut p = *first;
            for (e, _) in explicit {
                p = match e {
                    Some(v) => *v,
                    None if largest_wins => p - delta,
                    None => p + delta,
                };
                prio.push(p);
            }
        }
        for (p, (_, span)) in prio.iter().zip(explicit) {
            if *p < 0 || *p > i32::MAX as i64 {
                self.error_label(
                    codes::BAD_ENTRY,
                    *span,
                    format!("entry priority {p} is out of range"),
                    "this entry",
                );
                return None;
            }
        }
        // The runtime lets the larger priority win and wants priorities > 0.
        let max = prio.iter().copied().max().unwrap_or(0);
        let min = prio.iter().copied().min().unwrap_or(1);
        let runtime = prio
            .iter()
            .map(|&p| {
                let r = if largest_wins {
                    p - min.min(1) + 1
                } else {
                    max - p + 1
                };
                i32::try_from(r).unwrap_or(i32::MAX)
            })
            .collect();
        Some(runtime)
    }

    /// The scalars a value set's element type matches, in key order: the
    /// type itself, a tuple's elements, or a struct's fields with nested
    /// structs flattened (p4c's pvs-nested-struct sample); a type that is
    /// none of these gives no parts.
    /// The leaves of a value set's element type, in order, each with its
    /// dotted path below `prefix` (a tuple's items are named by index).
    pub(crate) fn value_set_parts(&self, ty: &Ty, prefix: &str) -> Vec<(String, Ty)> {
        let join = |n: &str| {
            if prefix.is_empty() {
                n.to_string()
            } else {
                format!("{prefix}.{n}")
            }
        };
        match ty {
            Ty::Tuple(items) => items
                .iter()
                .enumerate()
                .flat_map(|(i, t)| self.value_set_parts(t, &join(&i.to_string())))
                .collect(),
            Ty::Composite(c) if self.prog.composites[*c].kind == ir::CompositeKind::Struct => {
                self.prog.composites[*c]
                    .fields
                    .iter()
                    .flat_map(|f| self.value_set_parts(&f.ty, &join(&f.name)))
                    .collect()
            }
            Ty::Composite(_) => vec![],
            t => vec![(prefix.to_string(), t.clone())],
        }
    }

    /// One table entry, with its explicit priority if it has one.
    pub(super) fn entry(
        &mut self,
        en: &ast::TableEntry,
        keys: &[(ir::KeyKind, Ty)],
        actions: &[Handle<ir::Action>],
        bound: &[Vec<ir::Expr>],
        scopes: &[ActionScope],
    ) -> Option<(EntryFacts, Option<i64>)> {
        // A list expression `{ a, b }` as an entry's whole key set is the
        // tuple of the table's key values, each element one key's value
        // (p4c types the key set against the tuple of the keys; its
        // action-two-params writes `{ e }` for a one-key table).
        let listed: Vec<ast::KeysetElem>;
        let elems: &[ast::KeysetElem] = match en.keyset.elems.as_slice() {
            [
                ast::KeysetElem::Expr(ast::Expr {
                    kind: ast::ExprKind::List(items),
                    ..
                }),
            ] if !en.keyset.is_tuple => {
                listed = items.iter().cloned().map(ast::KeysetElem::Expr).collect();
                &listed
            }
            elems => elems,
        };
        let all_default = elems.len() == 1
            && matches!(
                elems[0],
                ast::KeysetElem::Default(_) | ast::KeysetElem::DontCare(_)
            );
        if !all_default && elems.len() != keys.len() {
            self.error_label(
                codes::BAD_ENTRY,
                en.keyset.span,
                format!(
                    "this entry has {} key value{} but the table has {} key{}",
                    elems.len(),
                    if elems.len() == 1 { "" } else { "s" },
                    keys.len(),
                    if keys.len() == 1 { "" } else { "s" }
                ),
                "wrong number of values",
            );
            return None;
        }
        let mut matches = Vec::new();
        for (k, (kind, ty)) in keys.iter().enumerate() {
            let el = if all_default { &elems[0] } else { &elems[k] };
            let w = ty.scalar_width(&self.prog).unwrap_or(32);
            let full = p4_target::bits::mask(w);
            let m = match (kind, el) {
                (_, ast::KeysetElem::Default(_) | ast::KeysetElem::DontCare(_)) => {
                    if *kind == ir::KeyKind::Match(MatchKind::Exact) {
                        self.error(codes::BAD_ENTRY, el_span(el), "an exact key needs a value");
                        return None;
                    }
                    None
                }
                (ir::KeyKind::Match(mk), ast::KeysetElem::Expr(e)) => {
                    let v = self.keyset_value(e, ty)?;
                    Some(match mk {
                        MatchKind::Exact => FieldMatch::Exact(v),
                        MatchKind::Lpm => FieldMatch::Lpm {
                            value: v,
                            prefix_len: w,
                        },
                        MatchKind::Ternary => FieldMatch::Ternary {
                            value: v,
                            mask: full,
                        },
                        MatchKind::Range => FieldMatch::Range { low: v, high: v },
                        MatchKind::Optional => FieldMatch::Optional(v),
                    })
                }
                (
                    ir::KeyKind::Match(mk @ (MatchKind::Ternary | MatchKind::Lpm)),
                    ast::KeysetElem::Mask { value, mask, .. },
                ) => {
                    let v = self.keyset_value(value, ty)?;
                    let m = self.keyset_value(mask, ty)?;
                    if *mk == MatchKind::Lpm {
                        let len = m.count_ones();
                        if m != (full ^ p4_target::bits::mask(w - len.min(w))) {
                            self.error(
                                codes::BAD_ENTRY,
                                el_span(el),
                                "an lpm mask must be a prefix",
                            );
                            return None;
                        }
                        Some(FieldMatch::Lpm {
                            value: v & m,
                            prefix_len: len,
                        })
                    } else {
                        Some(FieldMatch::Ternary {
                            value: v & m,
                            mask: m,
                        })
                    }
                }
                (ir::KeyKind::Match(MatchKind::Range), ast::KeysetElem::Range { lo, hi, .. }) => {
                    let l = self.keyset_value(lo, ty)?;
                    let h = self.keyset_value(hi, ty)?;
                    // P4Runtime's match format refuses a range entry whose low is
                    // above its high, so such a const entry could not be
                    // read back or installed; refused as a select range is.
                    let signed = ty
                        .is_signed(&self.prog)
                        .then(|| ty.scalar_width(&self.prog).unwrap_or(0));
                    if !self.range_in_order(codes::BAD_ENTRY, el_span(el), l, h, signed) {
                        return None;
                    }
                    // Table ranges compare the key's bits as unsigned
                    // numbers, as BMv2 compares P4Runtime's two's complement
                    // bytestrings; on an int<W> key a range across 0 would
                    // be empty that way, so it is refused with its reason.
                    if let Some(w) = signed
                        && p4_target::bits::sext(l, w) < 0
                        && p4_target::bits::sext(h, w) >= 0
                    {
                        self.error_label(
                            codes::BAD_ENTRY,
                            el_span(el),
                            format!(
                                "range {} .. {} of an {} key crosses 0",
                                p4_target::bits::sext(l, w),
                                p4_target::bits::sext(h, w),
                                self.ty_name(ty)
                            ),
                            "table ranges compare two's complement bits unsigned",
                        );
                        return None;
                    }
                    Some(FieldMatch::Range { low: l, high: h })
                }
                _ => {
                    self.error(
                        codes::BAD_ENTRY,
                        el_span(el),
                        "this keyset form does not fit the key's match kind",
                    );
                    return None;
                }
            };
            matches.push(m);
        }
        let (name, args) = (&en.action.name, en.action.args.clone().unwrap_or_default());
        let Some(Sym::Action(a)) = self.lookup(name).cloned() else {
            self.error(
                codes::BAD_ACTION_REF,
                name.span,
                format!("`{}` is not an action", name.ident.name),
            );
            return None;
        };
        let Some(i) = actions.iter().position(|x| *x == a) else {
            self.error_label(
                codes::BAD_ACTION_REF,
                name.span,
                format!("`{}` is not in the table's actions", name.ident.name),
                "not listed in `actions`",
            );
            return None;
        };
        // P4_16 §14.2.1.2: a `@defaultonly` action may only be the
        // default action, never the action of an entry.
        if scopes.get(i) == Some(&ActionScope::DefaultOnly) {
            self.error(
                codes::BAD_ENTRY,
                name.span,
                format!(
                    "`{}` is @defaultonly and cannot be the action of an entry",
                    name.ident.name
                ),
            );
            return None;
        }
        if let Some(listed) = bound.get(i) {
            self.check_bound_args(a, &args, listed, "entry");
        }
        let params = self.const_action_args(a, &args, en.action.span)?;
        let explicit = match &en.priority {
            Some(p) => Some(self.const_value(p)? as i64),
            None => ast::find_annotation(&en.annotations, "priority")
                .and_then(|a| a.int_arg())
                .map(|i| i64::try_from(i.value).unwrap_or(i64::MAX)),
        };
        Some((
            EntryFacts {
                matches,
                priority: 0,
                action: a,
                params,
            },
            explicit,
        ))
    }
}
