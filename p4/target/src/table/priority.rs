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

/// A bucket item: what the best-first scan needs without touching the entry.
#[derive(Clone, Copy, Debug)]
struct Item {
    priority: i32,
    seq: u64,
    id: u32,
}

#[derive(Debug)]
struct Group {
    /// Per-field hash mask (0 for range fields).
    masks: Box<[u128]>,
    buckets: FxHashMap<u64, Vec<Item>>,
    /// Multiset of the priorities in the group.
    priorities: BTreeMap<i32, u32>,
}

impl Group {
    fn max_priority(&self) -> Option<i32> {
        self.priorities.keys().next_back().copied()
    }
}

/// One field test of an entry: `lo <= key & mask <= hi` (a masked value
/// has `lo == hi`, a range has an all-ones mask, a wildcard a zero mask).
#[derive(Clone, Copy, Debug)]
struct FieldTest {
    mask: u128,
    lo: u128,
    hi: u128,
}

#[derive(Debug)]
struct PEntry {
    tests: Box<[FieldTest]>,
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
    /// Entries by id (ids are the table's dense slot numbers).
    entries: Vec<Option<PEntry>>,
}

const K: u64 = 0x517c_c1b7_2722_0a95;

#[inline]
fn mix(h: u64, v: u128) -> u64 {
    let folded = (v as u64) ^ ((v >> 64) as u64).rotate_left(17);
    (h.rotate_left(5) ^ folded).wrapping_mul(K)
}

/// Whether `candidate` (priority, seq) beats `best`.
#[inline]
fn beats(item: &Item, best: Option<Item>) -> bool {
    match best {
        None => true,
        Some(b) => item.priority > b.priority || (item.priority == b.priority && item.seq < b.seq),
    }
}

/// The test a field match stands for.
fn field_test(m: &Option<FieldMatch>, width: u32) -> FieldTest {
    let full = mask(width);
    match *m {
        None => FieldTest {
            mask: 0,
            lo: 0,
            hi: 0,
        },
        Some(FieldMatch::Exact(v)) | Some(FieldMatch::Optional(v)) => FieldTest {
            mask: full,
            lo: v,
            hi: v,
        },
        Some(FieldMatch::Lpm { value, prefix_len }) => {
            let m = full ^ mask(width - prefix_len.min(width));
            FieldTest {
                mask: m,
                lo: value & m,
                hi: value & m,
            }
        }
        Some(FieldMatch::Ternary { value, mask }) => FieldTest {
            mask,
            lo: value & mask,
            hi: value & mask,
        },
        Some(FieldMatch::Range { low, high }) => FieldTest {
            mask: full,
            lo: low,
            hi: high,
        },
    }
}

impl PriorityEngine {
    pub(crate) fn new(widths: &[u32]) -> Self {
        PriorityEngine {
            widths: widths.into(),
            groups: Vec::new(),
            group_of_sig: FxHashMap::default(),
            order: Vec::new(),
            entries: Vec::new(),
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
            // Range fields hash as 0 under a zero mask, as in `lookup`.
            let fm = match field {
                GroupField::Mask(m) => m,
                GroupField::Range => 0,
            };
            h = mix(h, value & fm);
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
                let masks = sig
                    .iter()
                    .map(|f| match f {
                        GroupField::Mask(m) => *m,
                        GroupField::Range => 0,
                    })
                    .collect();
                self.groups.push(Group {
                    masks,
                    buckets: FxHashMap::default(),
                    priorities: BTreeMap::new(),
                });
                let g = self.groups.len() - 1;
                self.group_of_sig.insert(sig, g);
                g
            }
        };
        let grp = &mut self.groups[group];
        let list = grp.buckets.entry(bucket).or_default();
        let pos = list
            .partition_point(|o| o.priority > priority || (o.priority == priority && o.seq < seq));
        list.insert(pos, Item { priority, seq, id });
        *grp.priorities.entry(priority).or_insert(0) += 1;
        let tests = matches
            .iter()
            .zip(self.widths.iter())
            .map(|(m, &w)| field_test(m, w))
            .collect();
        if self.entries.len() <= id as usize {
            self.entries.resize_with(id as usize + 1, || None);
        }
        self.entries[id as usize] = Some(PEntry {
            tests,
            group,
            bucket,
        });
        self.rebuild_order();
    }

    pub(crate) fn remove(&mut self, id: u32) {
        let Some(e) = self.entries.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        let grp = &mut self.groups[e.group];
        let mut priority = None;
        if let Some(list) = grp.buckets.get_mut(&e.bucket) {
            if let Some(pos) = list.iter().position(|x| x.id == id) {
                priority = Some(list.remove(pos).priority);
            }
            if list.is_empty() {
                grp.buckets.remove(&e.bucket);
            }
        }
        if let Some(p) = priority {
            if let Some(n) = grp.priorities.get_mut(&p) {
                *n -= 1;
                if *n == 0 {
                    grp.priorities.remove(&p);
                }
            }
        }
        self.rebuild_order();
    }

    #[inline]
    pub(crate) fn lookup(&self, key: &[u128]) -> Option<u32> {
        let mut best: Option<Item> = None;
        for &(max_priority, g) in &self.order {
            if best.is_some_and(|b| max_priority < b.priority) {
                break;
            }
            let grp = &self.groups[g];
            let mut h = 0u64;
            for (&m, &k) in grp.masks.iter().zip(key) {
                h = mix(h, k & m);
            }
            let Some(list) = grp.buckets.get(&h) else {
                continue;
            };
            for item in list {
                if !beats(item, best) {
                    break;
                }
                let Some(Some(e)) = self.entries.get(item.id as usize) else {
                    continue;
                };
                let hit = e.tests.iter().zip(key).all(|(t, &k)| {
                    let v = k & t.mask;
                    t.lo <= v && v <= t.hi
                });
                if hit {
                    best = Some(*item);
                    break;
                }
            }
        }
        best.map(|b| b.id)
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
