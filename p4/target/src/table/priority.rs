//! Priority-match engine for tables with ternary, range or optional keys
//! (and LPM mixed with those): tuple space search with tuple merging.
//!
//! Entries live in *groups* that share a per-field hash mask (Srinivasan,
//! Suri, Varghese, "Packet classification using tuple space search", 1999).
//! Inside a group, entries sit in hash buckets keyed by the hash of their
//! values under the group's masks; a bucket lists its entries best first
//! (priority descending, then insertion order).
//!
//! As in TupleMerge (Daly, Torng, 2017) an entry may join any group whose
//! masks are a subset of its own (a proper range counts as a zero mask), so
//! entries with different masks share a group and a lookup probes few
//! groups. The entry's own masks and ranges are checked on every bucket
//! candidate, so merging only costs bucket length, never correctness. An
//! entry joins the most specific compatible group whose bucket has fewer
//! than [`BUCKET_LIMIT`] entries; otherwise it founds a group with a
//! relaxed mask (per field, the first 8 bits of its leading run of ones, or
//! nothing when the run is shorter), or with its exact masks if that group
//! exists already.
//!
//! Lookup visits groups in order of their highest priority and stops as
//! soon as the next group's highest priority is below the best match so
//! far. Each visited group costs one hash of the masked key and one bucket
//! probe, so the cost grows with the number of groups, not of entries.
//!
//! Contract: larger priority wins; among equal priorities the entry
//! inserted first wins (its insertion sequence number is smaller). Lookup
//! does not allocate. Hash collisions cannot produce false matches.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::bits::mask;
use crate::runtime::FieldMatch;

/// A bucket longer than this makes a new entry look for another group.
pub(crate) const BUCKET_LIMIT: usize = 8;

/// A bucket item: what the best-first scan needs without touching the entry.
#[derive(Clone, Copy, Debug)]
struct Item {
    priority: i32,
    seq: u64,
    id: u32,
}

#[derive(Debug)]
struct Group {
    /// Per-field hash masks.
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

impl FieldTest {
    /// The bits a group may hash this field on.
    fn hashable(&self) -> u128 {
        if self.lo == self.hi { self.mask } else { 0 }
    }
}

/// Where an entry sits, for removal.
#[derive(Clone, Copy, Debug)]
struct Placement {
    group: usize,
    bucket: u64,
}

/// Tuple-space-search engine.
#[derive(Debug)]
pub(crate) struct PriorityEngine {
    widths: Box<[u32]>,
    groups: Vec<Group>,
    group_of_masks: FxHashMap<Box<[u128]>, usize>,
    /// Non-empty groups, highest max priority first, with that priority.
    order: Vec<(i32, usize)>,
    /// Entries' placement by id (ids are the table's dense slot numbers).
    entries: Vec<Option<Placement>>,
    /// Entries' field tests, `widths.len()` per id, flat so that checking a
    /// candidate is one indexed read.
    tests: Vec<FieldTest>,
}

const K: u64 = 0x517c_c1b7_2722_0a95;

#[inline]
fn mix(h: u64, v: u128) -> u64 {
    let folded = (v as u64) ^ ((v >> 64) as u64).rotate_left(17);
    (h.rotate_left(5) ^ folded).wrapping_mul(K)
}

/// Bucket hash of field values under group masks.
#[inline]
fn bucket_hash(masks: &[u128], values: impl Iterator<Item = u128>) -> u64 {
    let mut h = 0u64;
    for (&m, v) in masks.iter().zip(values) {
        if m != 0 {
            h = mix(h, v & m);
        }
    }
    h
}

/// Whether `item` beats `best`.
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

/// A relaxed mask: at most the first 8 bits of the leading run of ones of
/// `m` (within `width` bits), and nothing if that run is shorter than 8.
/// Coarse masks let later entries with longer masks join the group; the
/// bucket limit sends an entry elsewhere when 8 bits do not spread enough.
fn relaxed(m: u128, width: u32) -> u128 {
    if width == 0 || width > 128 {
        return 0;
    }
    let top = m << (128 - width);
    let run = top.leading_ones().min(width);
    let run = if run >= 8 { 8 } else { 0 };
    mask(width) ^ mask(width - run)
}

impl PriorityEngine {
    pub(crate) fn new(widths: &[u32]) -> Self {
        PriorityEngine {
            widths: widths.into(),
            groups: Vec::new(),
            group_of_masks: FxHashMap::default(),
            order: Vec::new(),
            entries: Vec::new(),
            tests: Vec::new(),
        }
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

    fn group_for(&mut self, masks: Box<[u128]>) -> usize {
        if let Some(&g) = self.group_of_masks.get(&masks) {
            return g;
        }
        self.groups.push(Group {
            masks: masks.clone(),
            buckets: FxHashMap::default(),
            priorities: BTreeMap::new(),
        });
        self.group_of_masks.insert(masks, self.groups.len() - 1);
        self.groups.len() - 1
    }

    /// Picks (group, bucket) for an entry with these tests.
    fn place(&mut self, tests: &[FieldTest]) -> (usize, u64) {
        let own: Vec<u128> = tests.iter().map(FieldTest::hashable).collect();
        let fits = |g: &Group| g.masks.iter().zip(&own).all(|(&gm, &em)| gm & !em == 0);
        let bucket_of = |g: &Group| bucket_hash(&g.masks, tests.iter().map(|t| t.lo));
        let mut best: Option<(u32, usize, u64)> = None;
        for (i, g) in self.groups.iter().enumerate() {
            if !fits(g) {
                continue;
            }
            let b = bucket_of(g);
            if g.buckets.get(&b).is_some_and(|l| l.len() >= BUCKET_LIMIT) {
                continue;
            }
            let bits: u32 = g.masks.iter().map(|m| m.count_ones()).sum();
            if best.is_none_or(|(bb, _, _)| bits > bb) {
                best = Some((bits, i, b));
            }
        }
        if let Some((_, g, b)) = best {
            return (g, b);
        }
        let relaxed_masks: Box<[u128]> = own
            .iter()
            .zip(self.widths.iter())
            .map(|(&m, &w)| relaxed(m, w))
            .collect();
        let masks = if self.group_of_masks.contains_key(&relaxed_masks) {
            own.into()
        } else {
            relaxed_masks
        };
        let g = self.group_for(masks);
        let b = bucket_of(&self.groups[g]);
        (g, b)
    }

    pub(crate) fn insert(
        &mut self,
        id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
        seq: u64,
    ) {
        let tests: Box<[FieldTest]> = matches
            .iter()
            .zip(self.widths.iter())
            .map(|(m, &w)| field_test(m, w))
            .collect();
        let (group, bucket) = self.place(&tests);
        let grp = &mut self.groups[group];
        let list = grp.buckets.entry(bucket).or_default();
        let pos = list
            .partition_point(|o| o.priority > priority || (o.priority == priority && o.seq < seq));
        list.insert(pos, Item { priority, seq, id });
        *grp.priorities.entry(priority).or_insert(0) += 1;
        let n = self.widths.len();
        if self.entries.len() <= id as usize {
            self.entries.resize(id as usize + 1, None);
            self.tests.resize(
                (id as usize + 1) * n,
                FieldTest {
                    mask: 0,
                    lo: 0,
                    hi: 0,
                },
            );
        }
        self.entries[id as usize] = Some(Placement { group, bucket });
        self.tests[id as usize * n..(id as usize + 1) * n].copy_from_slice(&tests);
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
        if let Some(p) = priority
            && let Some(n) = grp.priorities.get_mut(&p)
        {
            *n -= 1;
            if *n == 0 {
                grp.priorities.remove(&p);
            }
        }
        self.rebuild_order();
    }

    /// Heap bytes held (capacity, approximately for the hash maps).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.groups
            .iter()
            .map(|g| {
                g.masks.len() * 16
                    + g.buckets.capacity() * 33
                    + g.buckets.values().map(|l| l.capacity() * 24).sum::<usize>()
                    + g.priorities.len() * 16
            })
            .sum::<usize>()
            + self.entries.capacity() * std::mem::size_of::<Option<Placement>>()
            + self.tests.capacity() * std::mem::size_of::<FieldTest>()
            + self.order.capacity() * 16
    }

    #[inline]
    pub(crate) fn lookup(&self, key: &[u128]) -> Option<u32> {
        let mut best: Option<Item> = None;
        for &(max_priority, g) in &self.order {
            if best.is_some_and(|b| max_priority < b.priority) {
                break;
            }
            let grp = &self.groups[g];
            let h = bucket_hash(&grp.masks, key.iter().copied());
            let Some(list) = grp.buckets.get(&h) else {
                continue;
            };
            for item in list {
                if !beats(item, best) {
                    break;
                }
                let n = self.widths.len();
                let Some(tests) = self
                    .tests
                    .get(item.id as usize * n..(item.id as usize + 1) * n)
                else {
                    continue;
                };
                let hit = tests.iter().zip(key).all(|(t, &k)| {
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

    /// Number of groups holding entries.
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
        assert!(e.group_count() >= 1);
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

    #[test]
    fn entries_with_different_masks_share_groups() {
        // 512 entries over 32-bit fields with /8../32 prefixes on two fields:
        // 16 mask combinations, merged into a handful of groups.
        let mut e = PriorityEngine::new(&[32, 32]);
        let pfx = |v: u128, len: u32| {
            let m = mask(32) ^ mask(32 - len);
            t(v & m, m)
        };
        let mut x = 0x1234_5678u128;
        let mut next = || {
            x = (x * 1_103_515_245 + 12_345) & mask(32);
            x
        };
        let lens = [8, 16, 24, 32];
        for id in 0..512u32 {
            let (a, b) = (lens[(id % 4) as usize], lens[((id / 4) % 4) as usize]);
            e.insert(
                id,
                &[pfx(next(), a), pfx(next(), b)],
                1 + id as i32,
                id as u64,
            );
        }
        assert!(e.group_count() <= 4, "{} groups", e.group_count());
    }
}
