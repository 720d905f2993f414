//! Priority-match engine for tables with ternary, range or optional keys
//! (and LPM mixed with those): tuple space search.
//!
//! Entries are grouped by their *mask vector* (Srinivasan, Suri, Varghese,
//! "Packet classification using tuple space search", 1999): per field a
//! mask (exact and optional-present → all ones, LPM → prefix mask, ternary →
//! its mask, wildcard → zero, a one-value range → all ones) or "range" for
//! a proper range. Inside a group, entries sit in hash buckets keyed by the
//! hash of their masked values over the non-range fields; a bucket lists
//! its entries best first (priority descending, then insertion order), and
//! proper ranges are checked by scanning that bucket.
//!
//! Lookup visits groups in order of their highest priority and stops as
//! soon as the next group's highest priority is below the best match so
//! far. Each visited group costs one hash of the masked key and one bucket
//! probe, so the cost grows with the number of distinct mask vectors, not
//! the number of entries.
//!
//! Contract: larger priority wins; among equal priorities the entry
//! inserted first wins (its insertion sequence number is smaller). Lookup
//! does not allocate. Every bucket candidate is re-checked field by field,
//! so hash collisions cannot produce false matches.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::bits::mask;
use crate::runtime::FieldMatch;

/// How a group treats one key field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum GroupField {
    /// Hashed under this mask.
    Mask(u128),
    /// A proper range: not hashed, checked per entry.
    Range,
}

#[derive(Debug)]
struct Group {
    sig: Box<[GroupField]>,
    buckets: FxHashMap<u64, Vec<u32>>,
    /// Multiset of the priorities in the group.
    priorities: BTreeMap<i32, u32>,
}

impl Group {
    fn max_priority(&self) -> Option<i32> {
        self.priorities.keys().next_back().copied()
    }
}

#[derive(Debug)]
struct PEntry {
    priority: i32,
    seq: u64,
    matches: Box<[Option<FieldMatch>]>,
    group: usize,
    bucket: u64,
}

/// Tuple-space-search engine.
#[derive(Debug)]
pub(crate) struct PriorityEngine {
    widths: Box<[u32]>,
    groups: Vec<Group>,
    group_of_sig: FxHashMap<Box<[GroupField]>, usize>,
    /// Non-empty groups, highest max priority first, with that priority.
    order: Vec<(i32, usize)>,
    entries: FxHashMap<u32, PEntry>,
}

const K: u64 = 0x517c_c1b7_2722_0a95;

#[inline]
fn mix(h: u64, v: u128) -> u64 {
    let folded = (v as u64) ^ ((v >> 64) as u64).rotate_left(17);
    (h.rotate_left(5) ^ folded).wrapping_mul(K)
}

/// Whether `candidate` (priority, seq) beats `best`.
#[inline]
fn beats(priority: i32, seq: u64, best: Option<(i32, u64, u32)>) -> bool {
    match best {
        None => true,
        Some((bp, bs, _)) => priority > bp || (priority == bp && seq < bs),
    }
}

impl PriorityEngine {
    pub(crate) fn new(widths: &[u32]) -> Self {
        PriorityEngine {
            widths: widths.into(),
            groups: Vec::new(),
            group_of_sig: FxHashMap::default(),
            order: Vec::new(),
            entries: FxHashMap::default(),
        }
    }

    /// Group signature and masked values of an entry.
    fn classify(&self, matches: &[Option<FieldMatch>]) -> (Box<[GroupField]>, u64) {
        let mut sig = Vec::with_capacity(matches.len());
        let mut h = 0u64;
        for (m, &w) in matches.iter().zip(self.widths.iter()) {
            let full = mask(w);
            let (field, value) = match *m {
                None => (GroupField::Mask(0), 0),
                Some(FieldMatch::Exact(v)) | Some(FieldMatch::Optional(v)) => {
                    (GroupField::Mask(full), v)
                }
                Some(FieldMatch::Lpm { value, prefix_len }) => {
                    (GroupField::Mask(full ^ mask(w - prefix_len.min(w))), value)
                }
                Some(FieldMatch::Ternary { value, mask }) => (GroupField::Mask(mask), value & mask),
                Some(FieldMatch::Range { low, high }) if low == high => {
                    (GroupField::Mask(full), low)
                }
                Some(FieldMatch::Range { .. }) => (GroupField::Range, 0),
            };
            if let GroupField::Mask(fm) = field {
                h = mix(h, value & fm);
            }
            sig.push(field);
        }
        (sig.into(), h)
    }

    fn rebuild_order(&mut self) {
        self.order = self
            .groups
            .iter()
            .enumerate()
            .filter_map(|(i, g)| g.max_priority().map(|p| (p, i)))
            .collect();
        self.order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    }

    pub(crate) fn insert(
        &mut self,
        id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
        seq: u64,
    ) {
        let (sig, bucket) = self.classify(matches);
        let group = match self.group_of_sig.get(&sig) {
            Some(&g) => g,
            None => {
                self.groups.push(Group {
                    sig: sig.clone(),
                    buckets: FxHashMap::default(),
                    priorities: BTreeMap::new(),
                });
                let g = self.groups.len() - 1;
                self.group_of_sig.insert(sig, g);
                g
            }
        };
        let entries = &self.entries;
        let grp = &mut self.groups[group];
        let list = grp.buckets.entry(bucket).or_default();
        let pos = list.partition_point(|other| {
            let o = &entries[other];
            o.priority > priority || (o.priority == priority && o.seq < seq)
        });
        list.insert(pos, id);
        *grp.priorities.entry(priority).or_insert(0) += 1;
        self.entries.insert(
            id,
            PEntry {
                priority,
                seq,
                matches: matches.into(),
                group,
                bucket,
            },
        );
        self.rebuild_order();
    }

    pub(crate) fn remove(&mut self, id: u32) {
        let Some(e) = self.entries.remove(&id) else {
            return;
        };
        let grp = &mut self.groups[e.group];
        if let Some(list) = grp.buckets.get_mut(&e.bucket) {
            list.retain(|&x| x != id);
            if list.is_empty() {
                grp.buckets.remove(&e.bucket);
            }
        }
        if let Some(n) = grp.priorities.get_mut(&e.priority) {
            *n -= 1;
            if *n == 0 {
                grp.priorities.remove(&e.priority);
            }
        }
        self.rebuild_order();
    }

    #[inline]
    pub(crate) fn lookup(&self, key: &[u128]) -> Option<u32> {
        let mut best: Option<(i32, u64, u32)> = None;
        for &(max_priority, g) in &self.order {
            if let Some((bp, _, _)) = best {
                if max_priority < bp {
                    break;
                }
            }
            let grp = &self.groups[g];
            let mut h = 0u64;
            for (f, &k) in grp.sig.iter().zip(key) {
                if let GroupField::Mask(m) = *f {
                    h = mix(h, k & m);
                }
            }
            let Some(list) = grp.buckets.get(&h) else {
                continue;
            };
            for &id in list {
                let e = &self.entries[&id];
                if !beats(e.priority, e.seq, best) {
                    break;
                }
                let hit = e
                    .matches
                    .iter()
                    .zip(key)
                    .zip(self.widths.iter())
                    .all(|((m, &k), &w)| m.is_none_or(|m| m.matches(k, w)));
                if hit {
                    best = Some((e.priority, e.seq, id));
                    break;
                }
            }
        }
        best.map(|b| b.2)
    }

    /// Number of distinct mask vectors in use.
    #[cfg(test)]
    pub(crate) fn group_count(&self) -> usize {
        self.order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(value: u128, mask: u128) -> Option<FieldMatch> {
        Some(FieldMatch::Ternary { value, mask })
    }

    #[test]
    fn priority_then_insertion_order() {
        let mut e = PriorityEngine::new(&[8, 16]);
        let r = |low, high| Some(FieldMatch::Range { low, high });
        e.insert(0, &[t(0x10, 0xf0), None], 10, 0);
        e.insert(1, &[t(0x12, 0xff), r(100, 200)], 20, 1);
        e.insert(2, &[None, r(150, 160)], 20, 2);
        e.insert(3, &[t(0x12, 0xff), r(0, 1000)], 5, 3);
        assert_eq!(e.group_count(), 3);
        assert_eq!(e.lookup(&[0x12, 150]), Some(1), "tie at 20: first inserted");
        assert_eq!(e.lookup(&[0x12, 250]), Some(0));
        assert_eq!(e.lookup(&[0x22, 155]), Some(2));
        assert_eq!(e.lookup(&[0x12, 999]), Some(0));
        assert_eq!(e.lookup(&[0x22, 999]), None);
        e.remove(1);
        assert_eq!(e.lookup(&[0x12, 150]), Some(2));
        e.remove(2);
        e.remove(0);
        assert_eq!(e.lookup(&[0x12, 150]), Some(3));
        e.remove(3);
        assert_eq!(e.group_count(), 0);
        assert_eq!(e.lookup(&[0x12, 150]), None);
    }
}
