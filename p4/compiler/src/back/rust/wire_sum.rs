//! Checksum field lists summed from the bytes a header was extracted from
//! (`p4_target::externs::csum16_wire_sum`) instead of from its fields.
//!
//! A field such a sum alone reads need not be decoded by `extract`
//! ([`Gen::wire_unsummed`]). The sum's fallback, which adds the fields,
//! runs only when the header has no byte-aligned bytes in the packet as
//! parsed: when `extract` was not at a whole byte, and then it decoded
//! every field, or did not fill this header, and then it decoded none
//! either way.

use super::externs::Csum16List;
use super::*;

/// Fields `first..end` of a field list summed from a header's wire bytes,
/// except those `written` (indices in the list) since it was extracted:
/// `call` is the `csum16_wire_sum` that does it (see [`Gen::wire_runs`]).
pub(super) struct WireRun {
    pub(super) first: usize,
    pub(super) end: usize,
    pub(super) written: Vec<usize>,
    pub(super) call: String,
}

/// A [`WireRun`] before its call is written: the header it sums is
/// `header`, of type `ty`, and `keep` masks its bytes, 8 at a time.
struct WireSpan<'e> {
    first: usize,
    end: usize,
    written: Vec<usize>,
    header: &'e Expr,
    ty: Handle<Composite>,
    keep: Vec<u64>,
}

impl Gen<'_> {
    /// Runs of `flat` (a field list of scalars, its varbit left out) that
    /// `csum16` may sum from the bytes a header was extracted from instead
    /// of from its fields (`p4_target::externs::csum16_wire_sum`), in the
    /// body `ctx` is for; see [`Self::wire_spans`].
    pub(super) fn wire_runs(
        &self,
        ctx: &Ctx<'_>,
        flat: &[Expr],
    ) -> Result<Vec<WireRun>, BackError> {
        let mut runs = Vec::new();
        for span in self.wire_spans(ctx.kind, ctx.inst, flat) {
            let bytes = self.prog.composites[span.ty].header_bits(self.prog) as usize / 8;
            let words: Vec<String> = span
                .keep
                .iter()
                .map(|k| {
                    let hex = format!("{k:016x}");
                    let groups: Vec<&str> = (0..4).map(|g| &hex[4 * g..4 * g + 4]).collect();
                    format!("0x{}", groups.join("_"))
                })
                .collect();
            runs.push(WireRun {
                first: span.first,
                end: span.end,
                written: span.written,
                call: format!(
                    "::p4_target::externs::csum16_wire_sum::<{bytes}, {}>(env.data, {}.wire__, &[{}])",
                    words.len(),
                    self.place(ctx, span.header)?,
                    words.join(", ")
                ),
            });
        }
        Ok(runs)
    }

    /// Of checksum `b` in the apply block of control instance `inst`, the
    /// members of its field list not summed from wire bytes; `None` when it
    /// sums none from them (every member is read as written).
    pub(super) fn wire_unsummed(&self, inst: usize, b: &Builtin) -> Option<Vec<Expr>> {
        let (Builtin::VerifyChecksum {
            data,
            algo,
            with_payload,
            ..
        }
        | Builtin::UpdateChecksum {
            data,
            algo,
            with_payload,
            ..
        }) = b
        else {
            return None;
        };
        let list: Csum16List = self.csum16_list(*algo, *with_payload, data)?;
        if !list.sums_in_u64() {
            return None;
        }
        let spans = self.wire_spans(BodyKind::Control, Some(inst), &list.scalars);
        if spans.is_empty() {
            return None;
        }
        let from_wire = |k: usize| {
            spans
                .iter()
                .any(|s| (s.first..s.end).contains(&k) && !s.written.contains(&k))
        };
        let mut rest: Vec<Expr> = (0..list.scalars.len())
            .filter(|k| !from_wire(*k))
            .map(|k| list.scalars[k].clone())
            .collect();
        rest.extend(list.varbit);
        Some(rest)
    }

    /// The runs [`Self::wire_runs`] writes, where `env.data` is the packet
    /// as parsed and the header's fields other than those the run's
    /// `written` names still hold the values of its bytes:
    /// - in the top-level `verifyChecksum` control, a header of a type no
    ///   statement before it writes ([`super::written::written_before_verify`]);
    /// - in the top-level `computeChecksum` control, a header of a type kept
    ///   on the wire, whose fields statements write are the `patched` ones
    ///   (the in-place deparse relies on the same); those fields are left
    ///   out of the bytes and summed from their values.
    ///
    /// Only for two or more fields summed from the bytes, of one header in
    /// its field order, each at the same bit offset modulo 16 in the list as
    /// in the header (so fields the list leaves out between them are
    /// multiples of 16 bits, like IPv4's checksum).
    fn wire_spans<'e>(
        &self,
        kind: BodyKind,
        inst: Option<usize>,
        flat: &'e [Expr],
    ) -> Vec<WireSpan<'e>> {
        let top_level = |k: usize, control: Option<Handle<Control>>| {
            kind == BodyKind::Control
                && inst == Some(k)
                && control.is_some()
                && self.prog.instances.get(k).map(|i| i.control) == control
        };
        let main = self.prog.main.as_ref();
        let no_whole = std::collections::BTreeSet::new();
        // (types written as a whole, fields written by type)
        let (whole, written) = if top_level(0, main.map(|m| m.verify)) {
            match &self.before_verify {
                Some(before) => (&before.whole, &before.fields),
                None => return Vec::new(),
            }
        } else if top_level(3, main.map(|m| m.compute)) {
            (&no_whole, &self.patched)
        } else {
            return Vec::new();
        };
        // (header, its type, field index, bit offset, width) of each member
        // of the list that is a field of a kept header at the same offset
        // modulo 16 there as in the list.
        let mut end = 0u32;
        let mut members = Vec::new();
        for d in flat {
            let w = d.ty.scalar_width(self.prog).unwrap_or(0);
            end += w;
            members.push(match &d.kind {
                ExprKind::Member(base, f) => match &base.ty {
                    Ty::Composite(h)
                        if self.wire_kept.contains(&h.index()) && plain_place(self.prog, base) =>
                    {
                        let c = &self.prog.composites[*h];
                        let offset: Option<u32> = c.fields[..*f as usize]
                            .iter()
                            .map(|f| f.ty.serial_width(self.prog))
                            .sum();
                        match offset {
                            Some(o) if (o + w).abs_diff(end).is_multiple_of(16) => {
                                Some((&**base, *h, *f, o, w))
                            }
                            _ => None,
                        }
                    }
                    _ => None,
                },
                _ => None,
            });
        }
        let mut spans = Vec::new();
        let mut i = 0;
        while i < members.len() {
            let Some((header, h, f, ..)) = members[i] else {
                i += 1;
                continue;
            };
            let mut j = i + 1;
            let mut last = f;
            while let Some(Some((p, h2, f2, ..))) = members.get(j) {
                if !same_place(p, header) || *h2 != h || *f2 <= last {
                    break;
                }
                last = *f2;
                j += 1;
            }
            let written_in_run: Vec<usize> = (i..j)
                .filter(|k| {
                    let (_, _, f, ..) = members[*k].expect("a run's members are fields");
                    written.get(&h.index()).is_some_and(|w| w.contains(&f))
                })
                .collect();
            if !whole.contains(&h.index()) && j - i - written_in_run.len() >= 2 {
                let bytes = self.prog.composites[h].header_bits(self.prog) as usize / 8;
                let mut keep = vec![0u8; bytes.div_ceil(8) * 8];
                let kept = (i..j).filter(|k| !written_in_run.contains(k));
                for (_, _, _, o, w) in kept.filter_map(|k| members[k]) {
                    for b in o..o + w {
                        keep[b as usize / 8] |= 0x80 >> (b % 8);
                    }
                }
                spans.push(WireSpan {
                    first: i,
                    end: j,
                    written: written_in_run,
                    header,
                    ty: h,
                    keep: keep
                        .chunks(8)
                        .map(|c| u64::from_be_bytes(c.try_into().expect("8 bytes")))
                        .collect(),
                });
            }
            i = j;
        }
        spans
    }
}

/// `e` is a header reached from a variable through struct fields only: not
/// a stack element or a union member, whose validity other headers change.
fn plain_place(prog: &Program, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(_) => true,
        ExprKind::Member(base, _) => {
            matches!(&base.ty, Ty::Composite(c) if prog.composites[*c].kind == CompositeKind::Struct)
                && plain_place(prog, base)
        }
        _ => false,
    }
}

/// `a` and `b`, both [`plain_place`]s, are the same place.
fn same_place(a: &Expr, b: &Expr) -> bool {
    match (&a.kind, &b.kind) {
        (ExprKind::Var(x), ExprKind::Var(y)) => x == y,
        (ExprKind::Member(x, i), ExprKind::Member(y, j)) => i == j && same_place(x, y),
        _ => false,
    }
}
