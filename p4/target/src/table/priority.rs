//! Priority-match engine for tables with ternary, range or optional keys
//! (and LPM mixed with those): tuple space search with tuple merging,
//! laid out so that probing a tuple costs about one cache line.
//!
//! Entries live in *groups* that share a per-field hash mask (Srinivasan,
//! Suri, Varghese, "Packet classification using tuple space search", 1999).
//! Inside a group, entries sit in buckets keyed by the hash of their
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
//! exists already. The limit trades groups against bucket length: at
//! 10,000 entries (`benches/tables.rs`) 3 was fastest (8: long buckets
//! scanned entry by entry; 1: more groups and slower small tables).
//!
//! Lookup visits groups in order of their highest priority and stops as
//! soon as the next group's highest priority is below the best match so
//! far (the early exit of Open vSwitch's priority-sorted subtables). The
//! lookup side is laid out for few dependent cache misses. Each group has
//! an open-addressed slot array (linear probing, at most half full, 24
//! bytes a slot) holding, per bucket, its hash, its best entry's priority
//! and id, its second entry's priority and the bucket's index in the
//! group's bucket pool; one probe
//! either rejects the group or names the candidate and says whether it can
//! beat the best match so far. Groups are taken 8 at a time: first every
//! group's hash and home slot and the matching heads' test records are
//! loaded, none depending on another, so their misses overlap; then the
//! groups whose home slot holds a bucket (a bit mask built without a
//! branch a group, since which groups hold the key's bucket changes from
//! key to key) are judged in order. When the key's fields fit in 128 bits
//! together (an IPv4 5-tuple does), the key is packed into one `u128` once
//! a lookup, so a group's bucket hash is one AND of the packed key with the
//! group's packed masks and two multiplies (a loop over the fields with a
//! branch a field cost about half the lookup's instructions), and a head's
//! record is the packed mask and value of its masked fields and the bounds
//! of its range fields (64 bytes for the ACL of `benches/tables.rs`),
//! tested with one branch. Wider keys keep a loop over the fields and a
//! record of two words a field. Only when a bucket's head fails, the
//! bucket holds more entries and its second entry (whose priority the slot
//! keeps) can still win is the bucket read, its items and their tests
//! each in one array; that read waits until the chunk's later heads are
//! judged unless the second entry outranks all of their groups, so that a
//! match among them cuts it short (in the 10,000-entry random ACL the
//! match is nearly always a catch-all head judged last, and every
//! bucket read before it was wasted). The winner's insertion sequence
//! number is read only on a priority tie. The control plane finds buckets by hash in a map,
//! and keeps the slots in step on every change (deletion by backward
//! shift, so no tombstones build up).
//!
//! Before the groups comes the *band*, when there is one. An entry that
//! matches every key (no masked bit, every range full: a wildcard) makes
//! every entry ranked below it unreachable. When at most [`BAND_LIMIT`]
//! entries rank down to the best wildcard (it included), their head
//! records are copied, in rank order, into one array, and a lookup scans
//! it, takes the first that passes, and touches no group: the wildcard
//! at the end always passes. In the 10,000-entry random ACL of
//! `benches/tables.rs` a wildcard ranks 21st and every lookup ended at
//! it after hashing 8 groups. The band is read off a map of all entries
//! by rank (packed keys only), and rebuilt (at most [`BAND_LIMIT`]
//! entries) only when a change ranks at or above the last entry it was
//! built from.
//!
//! After the band, in a table of at most `STAGE_LIMIT` (1,024) entries
//! with a packed key, a bit-vector stage answers instead of the groups
//! (`bitstage.rs`): per byte of the packed key, bitmaps over the entries
//! in rank order, ANDed a word at a time, the first candidate whose record
//! passes winning. The 1,000-entry random ACL of `benches/tables.rs` probed
//! all of its ~10 groups (their best priorities all near the top, the
//! answer's median rank 165), 111 ns; the stage reads a few words a byte.
//! The groups are kept up to date regardless, and answer once the table
//! outgrows the stage (built again when it has shrunk to half the limit).
//!
//! In front of the groups sits one bucket filter for the whole engine
//! (a Bloom filter with one hash function): a bit per (group, bucket
//! hash) pair, 16 to 32 bits a bucket, so 32 KB for the 10,000-entry
//! ACL of `benches/tables.rs`, which stays in L2 while the groups' slot
//! arrays do not. A lookup hashes the key for every group of a batch,
//! tests the group's bit, and loads the home slot only of the groups
//! whose bit is set: those that hold a bucket for the key plus one in 16
//! to 32 of the others. In a 10,000-entry random ACL the key has a bucket in a few of
//! the ~15 groups, so most slot loads, the lookup's cache misses, are
//! skipped. A filter bit is never wrong in the other direction, so the
//! filter changes no result. Buckets that empty leave their bit set
//! (a false positive costs one slot load); when the table has lost as many
//! buckets as it holds since the filter was built, or outgrows it, the
//! filter is rebuilt from the buckets (amortised O(1) per change).
//!
//! A field test is `key & mask == value` for ternary, LPM, exact and
//! optional fields and `low <= key <= high` for range fields (which field
//! is which comes from the table's key; `validate.rs` makes every match
//! agree with its field's kind).
//!
//! Contract: larger priority wins; among equal priorities the entry
//! inserted first wins (its insertion sequence number is smaller). Lookup
//! does not allocate and takes no lock (the table's owner applies writes
//! between lookups). Hash collisions cannot produce false matches. Entry
//! ids must be below 2^31 (they are the table's dense slot numbers).

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::hash::Hash;

use rustc_hash::FxHashMap;

use super::bitstage::{BitStage, STAGE_LIMIT};
use crate::bits::mask;
use crate::runtime::FieldMatch;

/// A bucket longer than this makes a new entry look for another group.
pub(crate) const BUCKET_LIMIT: usize = 3;

/// The word a field's tests are stored in.
trait Word:
    Copy
    + Eq
    + Ord
    + Hash
    + std::fmt::Debug
    + Default
    + std::ops::BitAnd<Output = Self>
    + std::ops::BitXor<Output = Self>
{
    /// The low bits of `v` (callers pass values that fit).
    fn from_u128(v: u128) -> Self;
    fn to_u128(self) -> u128;
}

impl Word for u64 {
    #[inline]
    fn from_u128(v: u128) -> Self {
        v as u64
    }
    #[inline]
    fn to_u128(self) -> u128 {
        self as u128
    }
}

impl Word for u128 {
    #[inline]
    fn from_u128(v: u128) -> Self {
        v
    }
    #[inline]
    fn to_u128(self) -> u128 {
        self
    }
}

/// A bucket item: what the best-first scan needs without touching the entry.
#[derive(Clone, Copy, Debug)]
struct Item {
    priority: i32,
    seq: u64,
    id: u32,
}

/// One slot of a group's lookup array: a bucket's hash and its best entry.
#[derive(Clone, Copy, Debug)]
struct Slot {
    hash: u64,
    priority: i32,
    /// The best entry's id, [`MORE`] set when the bucket holds others;
    /// [`EMPTY`] for a free slot.
    head: u32,
    /// The bucket's index in the group's pool.
    bucket: u32,
    /// The priority of the bucket's second entry, if [`MORE`] is set.
    next: i32,
}

const EMPTY: u32 = u32::MAX;
const MORE: u32 = 1 << 31;
const FREE_SLOT: Slot = Slot {
    hash: 0,
    priority: 0,
    head: EMPTY,
    bucket: 0,
    next: 0,
};
/// Smallest slot array: 2^3 slots.
const MIN_BITS: u32 = 3;

/// A bucket's entries, best first, and their field tests in the same
/// order (`n` a entry), so that scanning a long bucket reads memory in
/// sequence.
#[derive(Debug)]
struct Bucket<W> {
    items: Vec<Item>,
    /// `n` a entry, when the key is not packed.
    tests: Vec<(W, W)>,
    /// Head records ([`Packing::stride`] words a entry), when it is.
    records: Vec<u128>,
}

#[derive(Debug)]
struct Group<W> {
    /// Per-field hash masks.
    masks: Box<[W]>,
    /// The same masks packed as the key is (see [`Packing`]); zero when
    /// the table's key is not packed.
    packed_mask: u128,
    /// Mixed into bucket hashes for the filter, so that groups whose
    /// buckets share a hash (the catch-all group hashes nothing) set
    /// different bits.
    salt: u64,
    /// Buckets by hash, each best first (the control plane's copy).
    buckets: FxHashMap<u64, u32>,
    /// The buckets, by the index `buckets` and the slots give.
    pool: Vec<Bucket<W>>,
    free: Vec<u32>,
    /// The lookup's copy: one slot per bucket, at most half full, a
    /// bucket's home slot is the top `64 - shift` bits of its hash.
    slots: Box<[Slot]>,
    shift: u32,
    /// Multiset of the priorities in the group.
    priorities: BTreeMap<i32, u32>,
}

impl<W> Default for Bucket<W> {
    fn default() -> Self {
        Bucket {
            items: Vec::new(),
            tests: Vec::new(),
            records: Vec::new(),
        }
    }
}

impl<W: Word> Group<W> {
    fn new(masks: Box<[W]>, packed_mask: u128, salt: u64) -> Self {
        Group {
            masks,
            packed_mask,
            salt,
            buckets: FxHashMap::default(),
            pool: Vec::new(),
            free: Vec::new(),
            slots: vec![FREE_SLOT; 1 << MIN_BITS].into_boxed_slice(),
            shift: 64 - MIN_BITS,
            priorities: BTreeMap::new(),
        }
    }

    fn bucket(&self, hash: u64) -> Option<&Bucket<W>> {
        self.buckets.get(&hash).map(|&i| &self.pool[i as usize])
    }

    /// The bucket with this hash, made empty if there was none.
    fn bucket_or_new(&mut self, hash: u64) -> &mut Bucket<W> {
        let index = match self.buckets.get(&hash) {
            Some(&i) => i,
            None => {
                let i = match self.free.pop() {
                    Some(i) => i,
                    None => {
                        self.pool.push(Bucket::default());
                        (self.pool.len() - 1) as u32
                    }
                };
                self.buckets.insert(hash, i);
                i
            }
        };
        &mut self.pool[index as usize]
    }

    fn max_priority(&self) -> Option<i32> {
        self.priorities.keys().next_back().copied()
    }

    #[inline]
    fn home(&self, hash: u64) -> usize {
        (hash >> self.shift) as usize
    }

    /// The slot of the bucket with this hash, if any.
    #[inline]
    fn find_slot(&self, hash: u64) -> Option<usize> {
        let wrap = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            let s = &self.slots[i];
            if s.head == EMPTY {
                return None;
            }
            if s.hash == hash {
                return Some(i);
            }
            i = (i + 1) & wrap;
        }
    }

    /// Resizes the slot array to `bits` bits and refills it from the buckets.
    fn resize(&mut self, bits: u32) {
        self.slots = vec![FREE_SLOT; 1 << bits].into_boxed_slice();
        self.shift = 64 - bits;
        let hashes: Vec<u64> = self.buckets.keys().copied().collect();
        for h in hashes {
            self.sync_slot(h);
        }
    }

    /// Makes the slot of bucket `hash` agree with the bucket (creating,
    /// updating or deleting it).
    fn sync_slot(&mut self, hash: u64) {
        let head = self.buckets.get(&hash).and_then(|&index| {
            let b = &self.pool[index as usize];
            let first = b.items.first()?;
            let (more, next) = match b.items.get(1) {
                Some(second) => (MORE, second.priority),
                None => (0, 0),
            };
            Some(Slot {
                hash,
                priority: first.priority,
                head: first.id | more,
                bucket: index,
                next,
            })
        });
        match (self.find_slot(hash), head) {
            (Some(i), Some(slot)) => self.slots[i] = slot,
            (Some(i), None) => self.delete_slot(i),
            (None, Some(slot)) => {
                let wrap = self.slots.len() - 1;
                let mut i = self.home(hash);
                while self.slots[i].head != EMPTY {
                    i = (i + 1) & wrap;
                }
                self.slots[i] = slot;
            }
            (None, None) => {}
        }
        let bits = 64 - self.shift;
        let n = self.buckets.len();
        if n * 2 > self.slots.len() {
            self.resize(bits + 1);
        } else if bits > MIN_BITS && n * 8 < self.slots.len() {
            self.resize(bits - 1);
        }
    }

    /// Frees slot `i`, moving later slots of the probe run back so that
    /// every remaining bucket stays reachable from its home slot.
    fn delete_slot(&mut self, mut i: usize) {
        let wrap = self.slots.len() - 1;
        let mut j = i;
        loop {
            j = (j + 1) & wrap;
            if self.slots[j].head == EMPTY {
                break;
            }
            let home = self.home(self.slots[j].hash);
            // Slot j may stay if its home lies cyclically in (i, j].
            let stays = if i <= j {
                i < home && home <= j
            } else {
                i < home || home <= j
            };
            if !stays {
                self.slots[i] = self.slots[j];
                i = j;
            }
        }
        self.slots[i] = FREE_SLOT;
    }
}

/// Where an entry sits, for removal.
#[derive(Clone, Copy, Debug)]
struct Placement {
    group: usize,
    bucket: u64,
}

/// The engine for one word size.
#[derive(Debug)]
struct Tss<W> {
    /// Per field: tested as a range (else under a mask).
    ranged: Box<[bool]>,
    /// Per field: all ones over its width.
    full: Box<[W]>,
    widths: Box<[u32]>,
    groups: Vec<Group<W>>,
    group_of_masks: FxHashMap<Box<[W]>, usize>,
    /// Non-empty groups, highest max priority first, with that priority.
    order: Vec<(i32, usize)>,
    /// Entries' placement by id (ids are the table's dense slot numbers).
    entries: Vec<Option<Placement>>,
    /// Entries' insertion sequence numbers by id, for ties.
    seqs: Vec<u64>,
    /// Entries' field tests, flat, `widths.len()` per id: `(mask, value)`
    /// or `(low, high)`; kept only when the key is not packed.
    tests: Vec<(W, W)>,
    /// How the key packs into one `u128`, if it fits.
    packing: Option<Packing>,
    /// Entries' head records by id when the key is packed,
    /// [`Packing::stride`] words each: the packed mask and value of the
    /// masked fields, then `(low, high)` of each range field.
    heads: Vec<u128>,
    /// Entries by rank (priority descending, then insertion order), kept
    /// only when the key is packed: the band is read off its start.
    ranked: BTreeMap<Rank, u32>,
    band: Band,
    filter: Filter,
    /// The bytes of the packed key the bit-vector stage filters on (those
    /// holding masked fields); empty when the key is not packed.
    stage_shifts: Box<[u32]>,
    /// The bit-vector stage ([`super::bitstage`]), while the table is
    /// small: it answers lookups instead of the groups.
    small: Option<Box<BitStage>>,
}

/// An entry's place in the lookup's order: earlier wins.
type Rank = super::bitstage::Rank;

/// Most entries a band holds, its wildcard included.
const BAND_LIMIT: usize = 24;

/// The entries ranked up to and including the best entry that matches
/// every key (a *wildcard*: no masked bit, every range full), when there
/// are at most [`BAND_LIMIT`] of them. Nothing ranked below that wildcard
/// can win a lookup, so a lookup scans these head records in rank order
/// and takes the first that passes, without hashing a group.
#[derive(Debug, Default)]
struct Band {
    /// Head records, [`Packing::stride`] words each, in rank order; empty
    /// when there is no band.
    records: Vec<u128>,
    ids: Vec<u32>,
    /// The last rank the band was built from (its wildcard's, or the
    /// rank of the last entry looked at when none was found): a change
    /// ranked after it cannot change the band. `None`: the table held
    /// fewer entries than the band looks at, so every change may.
    edge: Option<Rank>,
}

/// A key whose fields fit in 128 bits together is packed into one `u128`
/// (field `i` at bit `offsets[i]`), once per lookup: a group's bucket hash
/// is then one AND and two multiplies, and a head's masked fields are
/// tested by one compare, instead of a loop over the fields.
#[derive(Debug)]
struct Packing {
    offsets: Box<[u32]>,
    /// The range fields, tested one by one.
    ranged: Box<[usize]>,
    /// Words of a head record: 2 + 2 a range field.
    stride: usize,
}

impl Packing {
    fn new(widths: &[u32], ranged: &[bool]) -> Option<Self> {
        let total: u32 = widths.iter().sum();
        if total > 128 {
            return None;
        }
        let offsets = widths
            .iter()
            .scan(0, |at, &w| {
                let o = *at;
                *at += w;
                Some(o)
            })
            .collect();
        let ranged: Box<[usize]> = (0..widths.len()).filter(|&i| ranged[i]).collect();
        Some(Packing {
            offsets,
            stride: 2 + 2 * ranged.len(),
            ranged,
        })
    }

    /// The fields packed (each already masked to its width).
    #[inline]
    fn pack<W: Word>(&self, values: impl Iterator<Item = W>) -> u128 {
        let mut p = 0u128;
        for (v, &o) in values.zip(self.offsets.iter()) {
            p |= v.to_u128() << o;
        }
        p
    }
}

/// The bucket filter in front of the groups (see the module doc): one bit
/// per (group salt, bucket hash), set for every live bucket, possibly set
/// for buckets that have gone.
#[derive(Debug)]
struct Filter {
    bits: Box<[u64]>,
    /// `64 - log2(bit count)`.
    shift: u32,
    /// Live buckets over all groups.
    buckets: usize,
    /// Buckets removed since the last rebuild (their bits may be stale).
    removed: usize,
}

/// Filter bits per live bucket, at least: a false positive rate of about
/// 1/16 to 1/32 per group probed.
const FILTER_BITS_PER_BUCKET: usize = 16;
/// Smallest filter: 2^9 bits.
const FILTER_MIN_BITS: u32 = 9;
const K2: u64 = 0x9e37_79b9_7f4a_7c15;

impl Filter {
    fn new() -> Self {
        Filter {
            bits: vec![0; 1 << (FILTER_MIN_BITS - 6)].into_boxed_slice(),
            shift: 64 - FILTER_MIN_BITS,
            buckets: 0,
            removed: 0,
        }
    }

    #[inline]
    fn index(&self, salt: u64, hash: u64) -> usize {
        ((hash ^ salt).wrapping_mul(K2) >> self.shift) as usize
    }

    #[inline]
    fn may_hold(&self, salt: u64, hash: u64) -> bool {
        let i = self.index(salt, hash);
        self.bits[i >> 6] & (1 << (i & 63)) != 0
    }

    fn set(&mut self, salt: u64, hash: u64) {
        let i = self.index(salt, hash);
        self.bits[i >> 6] |= 1 << (i & 63);
    }

    /// Whether the filter should be rebuilt: too small for its buckets,
    /// or as many removed as live since it was built.
    fn needs_rebuild(&self) -> bool {
        let len = self.bits.len() * 64;
        self.buckets * FILTER_BITS_PER_BUCKET > len
            || (self.removed > self.buckets && len > 1 << FILTER_MIN_BITS)
    }

    /// An empty filter sized for `buckets` live buckets.
    fn sized_for(buckets: usize) -> Self {
        let want = (buckets * FILTER_BITS_PER_BUCKET).max(1 << FILTER_MIN_BITS);
        let bits = want.next_power_of_two().trailing_zeros();
        Filter {
            bits: vec![0; 1 << (bits - 6)].into_boxed_slice(),
            shift: 64 - bits,
            buckets,
            removed: 0,
        }
    }
}

/// Tuple-space-search engine.
#[derive(Debug)]
pub(crate) struct PriorityEngine(Words);

/// The engine in the word size of the table's fields.
#[derive(Debug)]
enum Words {
    /// Every field at most 64 bits wide.
    Narrow(Tss<u64>),
    Wide(Tss<u128>),
}

const K: u64 = 0x517c_c1b7_2722_0a95;

#[inline]
fn mix(h: u64, v: u128) -> u64 {
    let folded = (v as u64) ^ ((v >> 64) as u64).rotate_left(17);
    (h.rotate_left(5) ^ folded).wrapping_mul(K)
}

/// Bucket hash of field values under group masks.
#[inline]
fn bucket_hash<W: Word>(masks: &[W], values: impl Iterator<Item = W>) -> u64 {
    let mut h = 0u64;
    for (&m, v) in masks.iter().zip(values) {
        if m != W::default() {
            h = mix(h, (v & m).to_u128());
        }
    }
    // The home slot is taken from the top bits, which the multiply mixes.
    h
}

/// Bucket hash of a packed key under a group's packed mask (zero for a
/// group that hashes no field, as [`bucket_hash`] gives).
#[inline]
fn packed_hash(masked: u128) -> u64 {
    let h = (masked as u64).wrapping_mul(K);
    (h.rotate_left(5) ^ (masked >> 64) as u64).wrapping_mul(K)
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

impl<W: Word> Tss<W> {
    fn new(widths: &[u32], ranged: &[bool]) -> Self {
        let packing = Packing::new(widths, ranged);
        // Every byte of the packed key that holds a masked field's bits.
        let stage_shifts: Box<[u32]> = match &packing {
            Some(p) => {
                let mut bytes: Vec<u32> = (0..widths.len())
                    .filter(|&i| !ranged[i] && widths[i] > 0)
                    .flat_map(|i| p.offsets[i] / 8..=(p.offsets[i] + widths[i] - 1) / 8)
                    .collect();
                bytes.sort_unstable();
                bytes.dedup();
                bytes.into_iter().map(|b| b * 8).collect()
            }
            None => Box::default(),
        };
        let small = match &packing {
            Some(p) if !stage_shifts.is_empty() => {
                Some(Box::new(BitStage::new(stage_shifts.clone(), p.stride)))
            }
            _ => None,
        };
        Tss {
            ranged: ranged.into(),
            full: widths.iter().map(|&w| W::from_u128(mask(w))).collect(),
            widths: widths.into(),
            groups: Vec::new(),
            group_of_masks: FxHashMap::default(),
            order: Vec::new(),
            entries: Vec::new(),
            seqs: Vec::new(),
            tests: Vec::new(),
            packing,
            heads: Vec::new(),
            ranked: BTreeMap::new(),
            band: Band::default(),
            filter: Filter::new(),
            stage_shifts,
            small,
        }
    }

    /// Rebuilds the filter from the live buckets if it is too small or
    /// holds too many stale bits.
    fn maintain_filter(&mut self) {
        if !self.filter.needs_rebuild() {
            return;
        }
        let mut f = Filter::sized_for(self.filter.buckets);
        for g in &self.groups {
            for &h in g.buckets.keys() {
                f.set(g.salt, h);
            }
        }
        self.filter = f;
    }

    /// The stored test of field `i` for a match.
    fn field_test(&self, i: usize, m: &Option<FieldMatch>) -> (W, W) {
        let width = self.widths[i];
        let full = mask(width);
        let (mask_, lo, hi) = match *m {
            None => (0, 0, full),
            Some(FieldMatch::Exact(v)) | Some(FieldMatch::Optional(v)) => (full, v, v),
            Some(FieldMatch::Lpm { value, prefix_len }) => {
                let m = full ^ mask(width - prefix_len.min(width));
                (m, value & m, value & m)
            }
            Some(FieldMatch::Ternary { value, mask }) => (mask, value & mask, value & mask),
            Some(FieldMatch::Range { low, high }) => (full, low, high),
        };
        let (a, b) = if self.ranged[i] {
            // A masked match on a range field (validate.rs allows none)
            // still tests exactly when its mask is full.
            if mask_ == full { (lo, hi) } else { (0, full) }
        } else {
            (mask_, lo)
        };
        (W::from_u128(a), W::from_u128(b))
    }

    /// The bits a group may hash field `i` of a stored test on, and the
    /// value it hashes.
    fn hashable(&self, i: usize, t: (W, W)) -> (W, W) {
        if self.ranged[i] {
            if t.0 == t.1 {
                (self.full[i], t.0)
            } else {
                (W::default(), W::default())
            }
        } else {
            t
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

    fn group_for(&mut self, masks: Box<[W]>) -> usize {
        if let Some(&g) = self.group_of_masks.get(&masks) {
            return g;
        }
        let salt = (self.groups.len() as u64 + 1).wrapping_mul(K);
        let packed_mask = self
            .packing
            .as_ref()
            .map_or(0, |p| p.pack(masks.iter().copied()));
        self.groups
            .push(Group::new(masks.clone(), packed_mask, salt));
        self.group_of_masks.insert(masks, self.groups.len() - 1);
        self.groups.len() - 1
    }

    /// Picks (group, bucket) for an entry with these tests.
    fn place(&mut self, tests: &[(W, W)]) -> (usize, u64) {
        let (own, values): (Vec<W>, Vec<W>) = tests
            .iter()
            .enumerate()
            .map(|(i, &t)| self.hashable(i, t))
            .unzip();
        let fits = |g: &Group<W>| g.masks.iter().zip(&own).all(|(&gm, &em)| gm & em == gm);
        let packed = self
            .packing
            .as_ref()
            .map(|p| p.pack(values.iter().copied()));
        let bucket_of = |g: &Group<W>| match packed {
            Some(p) => packed_hash(p & g.packed_mask),
            None => bucket_hash(&g.masks, values.iter().copied()),
        };
        let mut best: Option<(u32, usize, u64)> = None;
        for (i, g) in self.groups.iter().enumerate() {
            if !fits(g) {
                continue;
            }
            let b = bucket_of(g);
            if g.bucket(b).is_some_and(|l| l.items.len() >= BUCKET_LIMIT) {
                continue;
            }
            let bits: u32 = g.masks.iter().map(|m| m.to_u128().count_ones()).sum();
            if best.is_none_or(|(bb, _, _)| bits > bb) {
                best = Some((bits, i, b));
            }
        }
        if let Some((_, g, b)) = best {
            return (g, b);
        }
        let relaxed_masks: Box<[W]> = own
            .iter()
            .zip(self.widths.iter())
            .map(|(&m, &w)| W::from_u128(relaxed(m.to_u128(), w)))
            .collect();
        let masks = if self.group_of_masks.contains_key(&relaxed_masks) {
            own.into()
        } else {
            relaxed_masks
        };
        let g = self.group_for(masks);
        let grp = &self.groups[g];
        let b = match &self.packing {
            Some(p) => packed_hash(p.pack(values.iter().copied()) & grp.packed_mask),
            None => bucket_hash(&grp.masks, values.iter().copied()),
        };
        (g, b)
    }

    fn insert(&mut self, id: u32, matches: &[Option<FieldMatch>], priority: i32, seq: u64) {
        assert!(id < MORE, "entry id {id} out of the engine's range");
        let tests: Vec<(W, W)> = matches
            .iter()
            .enumerate()
            .map(|(i, m)| self.field_test(i, m))
            .collect();
        let n = self.widths.len();
        let record: Vec<u128> = match &self.packing {
            Some(p) => {
                let masked = |j: usize| {
                    if self.ranged[j] {
                        (W::default(), W::default())
                    } else {
                        tests[j]
                    }
                };
                let mut r = vec![
                    p.pack((0..n).map(|j| masked(j).0)),
                    p.pack((0..n).map(|j| masked(j).1)),
                ];
                for &j in p.ranged.iter() {
                    r.push(tests[j].0.to_u128());
                    r.push(tests[j].1.to_u128());
                }
                r
            }
            None => Vec::new(),
        };
        let (group, bucket) = self.place(&tests);
        let grp = &mut self.groups[group];
        let old_max = grp.max_priority();
        if !grp.buckets.contains_key(&bucket) {
            self.filter.set(grp.salt, bucket);
            self.filter.buckets += 1;
        }
        let b = grp.bucket_or_new(bucket);
        let pos = b
            .items
            .partition_point(|o| o.priority > priority || (o.priority == priority && o.seq < seq));
        b.items.insert(pos, Item { priority, seq, id });
        if record.is_empty() {
            b.tests.splice(pos * n..pos * n, tests.iter().copied());
        } else {
            let s = record.len();
            b.records.splice(pos * s..pos * s, record.iter().copied());
        }
        *grp.priorities.entry(priority).or_insert(0) += 1;
        grp.sync_slot(bucket);
        let i = id as usize;
        if self.entries.len() <= i {
            self.entries.resize(i + 1, None);
            self.seqs.resize(i + 1, 0);
        }
        self.entries[i] = Some(Placement { group, bucket });
        self.seqs[i] = seq;
        match &self.packing {
            Some(p) => {
                if self.heads.len() < (i + 1) * p.stride {
                    self.heads.resize((i + 1) * p.stride, 0);
                }
                self.heads[i * p.stride..(i + 1) * p.stride].copy_from_slice(&record);
                let rank = (Reverse(priority), seq);
                self.ranked.insert(rank, id);
                self.on_rank_change(rank);
                if let Some(stage) = &mut self.small {
                    if stage.len() >= STAGE_LIMIT {
                        // Too big for the stage: the groups answer.
                        self.small = None;
                    } else {
                        stage.insert(rank, id, &record);
                    }
                }
            }
            None => {
                if self.tests.len() < (i + 1) * n {
                    self.tests.resize((i + 1) * n, (W::default(), W::default()));
                }
                self.tests[i * n..(i + 1) * n].copy_from_slice(&tests);
            }
        }
        // The order only changes when the group's best priority does.
        if self.groups[group].max_priority() != old_max {
            self.rebuild_order();
        }
        self.maintain_filter();
    }

    fn remove(&mut self, id: u32) {
        let Some(e) = self.entries.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        let n = self.widths.len();
        let grp = &mut self.groups[e.group];
        let old_max = grp.max_priority();
        let mut priority = None;
        if let Some(&index) = grp.buckets.get(&e.bucket) {
            let b = &mut grp.pool[index as usize];
            if let Some(pos) = b.items.iter().position(|x| x.id == id) {
                priority = Some(b.items.remove(pos).priority);
                match &self.packing {
                    Some(p) => drop(b.records.drain(pos * p.stride..(pos + 1) * p.stride)),
                    None => drop(b.tests.drain(pos * n..(pos + 1) * n)),
                }
            }
            if b.items.is_empty() {
                *b = Bucket::default();
                grp.buckets.remove(&e.bucket);
                grp.free.push(index);
                self.filter.buckets -= 1;
                self.filter.removed += 1;
            }
        }
        grp.sync_slot(e.bucket);
        if let Some(p) = priority
            && let Some(n) = grp.priorities.get_mut(&p)
        {
            *n -= 1;
            if *n == 0 {
                grp.priorities.remove(&p);
            }
        }
        if let Some(p) = priority
            && self.packing.is_some()
        {
            let rank = (Reverse(p), self.seq(id));
            self.ranked.remove(&rank);
            self.on_rank_change(rank);
            match &mut self.small {
                Some(stage) => stage.remove(rank, id),
                None => self.maybe_build_stage(),
            }
        }
        if self.groups[e.group].max_priority() != old_max {
            self.rebuild_order();
        }
        self.maintain_filter();
    }

    /// Builds the bit-vector stage again once a table that outgrew it has
    /// shrunk to half its limit (not at once, so that a table hovering at
    /// the limit does not rebuild it on every change).
    fn maybe_build_stage(&mut self) {
        let Some(p) = &self.packing else {
            return;
        };
        if self.stage_shifts.is_empty() || self.ranked.len() > STAGE_LIMIT / 2 {
            return;
        }
        let heads = &self.heads;
        let stride = p.stride;
        self.small = Some(Box::new(BitStage::from_ranked(
            self.stage_shifts.clone(),
            stride,
            self.ranked.iter().map(|(&rank, &id)| {
                let i = id as usize * stride;
                (rank, id, &heads[i..i + stride])
            }),
        )));
    }

    /// Rebuilds the band if an entry of this rank came or went where it
    /// could change it.
    fn on_rank_change(&mut self, rank: Rank) {
        if self.band.edge.is_none_or(|edge| rank <= edge) {
            self.rebuild_band();
        }
    }

    /// Whether a packed head record matches every key.
    fn is_wildcard(&self, p: &Packing, record: &[u128]) -> bool {
        record[0] == 0
            && record[2..]
                .chunks_exact(2)
                .zip(p.ranged.iter())
                .all(|(r, &j)| r[0] == 0 && r[1] == self.full[j].to_u128())
    }

    /// Reads the band off the start of the ranking (see [`Band`]).
    fn rebuild_band(&mut self) {
        let Some(p) = &self.packing else {
            return;
        };
        let mut band = Band::default();
        let mut wildcard = false;
        for (&rank, &id) in self.ranked.iter().take(BAND_LIMIT) {
            let i = id as usize * p.stride;
            let record = &self.heads[i..i + p.stride];
            band.records.extend_from_slice(record);
            band.ids.push(id);
            band.edge = Some(rank);
            if self.is_wildcard(p, record) {
                wildcard = true;
                break;
            }
        }
        if !wildcard {
            band.records.clear();
            band.ids.clear();
            if self.ranked.len() < BAND_LIMIT {
                band.edge = None;
            }
        }
        self.band = band;
    }

    fn memory_bytes(&self) -> usize {
        self.groups
            .iter()
            .map(|g| {
                g.masks.len() * size_of::<W>()
                    + g.buckets.capacity() * 33
                    + g.pool.capacity() * size_of::<Bucket<W>>()
                    + g.free.capacity() * 4
                    + g.pool
                        .iter()
                        .map(|b| {
                            b.items.capacity() * 24
                                + b.tests.capacity() * size_of::<(W, W)>()
                                + b.records.capacity() * 16
                        })
                        .sum::<usize>()
                    + g.slots.len() * size_of::<Slot>()
                    + g.priorities.len() * 16
            })
            .sum::<usize>()
            + self.entries.capacity() * size_of::<Option<Placement>>()
            + self.seqs.capacity() * 8
            + self.tests.capacity() * size_of::<(W, W)>()
            + self.heads.capacity() * 16
            + self.ranked.len() * 40
            + self.band.records.capacity() * 16
            + self.band.ids.capacity() * 4
            + self.order.capacity() * 16
            + self.filter.bits.len() * 8
            + self.small.as_ref().map_or(0, |s| s.memory_bytes())
    }

    /// Whether entry `id`'s tests all pass on `key`.
    #[inline]
    fn hit(&self, id: u32, key: &[W]) -> bool {
        let n = self.widths.len();
        let i = id as usize;
        self.tests
            .get(i * n..(i + 1) * n)
            .is_some_and(|tests| self.passes(tests, key))
    }

    /// Whether every field test passes on `key`.
    #[inline]
    fn passes(&self, tests: &[(W, W)], key: &[W]) -> bool {
        tests
            .iter()
            .zip(key)
            .zip(self.ranged.iter())
            .all(
                |((&(a, b), &k), &ranged)| {
                    if ranged { a <= k && k <= b } else { k & a == b }
                },
            )
    }

    /// Whether entry `id`'s head record passes on the packed key (and
    /// `key`, for the range fields).
    #[inline]
    fn hit_packed(&self, p: &Packing, packed: u128, id: u32, key: &[W]) -> bool {
        let i = id as usize * p.stride;
        self.heads
            .get(i..i + p.stride)
            .is_some_and(|r| self.record_passes(p, r, packed, key))
    }

    /// Whether a packed head record passes on the packed key (and `key`,
    /// for the range fields).
    #[inline]
    fn record_passes(&self, p: &Packing, r: &[u128], packed: u128, key: &[W]) -> bool {
        // One branch for the whole test: its outcome is unpredictable.
        r[2..]
            .chunks_exact(2)
            .zip(p.ranged.iter())
            .fold(packed & r[0] == r[1], |ok, (r, &j)| {
                let k = key.get(j).map_or(0, |k| k.to_u128());
                ok & (r[0] <= k) & (k <= r[1])
            })
    }

    #[inline]
    fn lookup(&self, key: &[W]) -> Option<u32> {
        match &self.packing {
            Some(p) => {
                let packed = p.pack(key.iter().copied());
                // The band's last entry matches every key.
                if !self.band.ids.is_empty() {
                    let records = self.band.records.chunks_exact(p.stride);
                    for (r, &id) in records.zip(&self.band.ids) {
                        if self.record_passes(p, r, packed, key) {
                            return Some(id);
                        }
                    }
                }
                // An empty table has nothing to find: its bitmaps, cold in
                // a program with many empty tables, are not read.
                if let Some(stage) = &self.small
                    && stage.len() > 0
                {
                    return stage.lookup(packed, |r| self.record_passes(p, r, packed, key));
                }
                let s = p.stride;
                self.lookup_with(
                    |g| packed_hash(packed & g.packed_mask),
                    |id| {
                        self.heads
                            .get(id as usize * p.stride)
                            .map_or(0, |&w| w as u64)
                    },
                    |id| self.hit_packed(p, packed, id, key),
                    |b, k| {
                        b.records
                            .get(k * s..(k + 1) * s)
                            .is_some_and(|r| self.record_passes(p, r, packed, key))
                    },
                )
            }
            None => self.lookup_with(
                |g| bucket_hash(&g.masks, key.iter().copied()),
                |id| {
                    self.tests
                        .get(id as usize * self.widths.len())
                        .map_or(0, |t| t.0.to_u128() as u64)
                },
                |id| self.hit(id, key),
                |b, k| {
                    let n = self.widths.len();
                    b.tests
                        .get(k * n..(k + 1) * n)
                        .is_some_and(|t| self.passes(t, key))
                },
            ),
        }
    }

    /// The lookup, given how to hash the key for a group, how to touch an
    /// entry's head record (to start its load early), how to test it, and
    /// how to test a bucket's `k`-th entry.
    #[inline(always)]
    fn lookup_with(
        &self,
        hash: impl Fn(&Group<W>) -> u64,
        touch: impl Fn(u32) -> u64,
        hit: impl Fn(u32) -> bool,
        passes: impl Fn(&Bucket<W>, usize) -> bool,
    ) -> Option<u32> {
        // (priority, id) of the best match so far; its sequence number is
        // read only on a tie.
        let mut best: Option<(i32, u32)> = None;
        for chunk in self.order.chunks(CHUNK) {
            if best.is_some_and(|b| chunk[0].0 < b.0) {
                break;
            }
            // First the loads of every group of the chunk, none depending
            // on another's result, so their cache misses overlap: the home
            // slot of each group, then the record of each head whose hash
            // matches.
            let mut hashes = [0u64; CHUNK];
            let mut homes: [&Slot; CHUNK] = [&FREE_SLOT; CHUNK];
            for ((&(_, g), h), home) in chunk.iter().zip(&mut hashes).zip(&mut homes) {
                let grp = &self.groups[g];
                *h = hash(grp);
                // A group the filter rules out reads the free slot (judged
                // as holding no bucket for the key): a select, not a
                // branch, so a mispredicted filter bit does not hold up
                // the loads of the groups after it.
                let slot = &grp.slots[grp.home(*h) & (grp.slots.len() - 1)];
                *home = std::hint::select_unpredictable(
                    self.filter.may_hold(grp.salt, *h),
                    slot,
                    &FREE_SLOT,
                );
            }
            // Which groups have a bucket in their home slot (a bit a
            // group), found without a branch a group: whether a given
            // group holds the key's bucket changes from key to key, and a
            // branch on it was mispredicted about once a group.
            let mut touched = 0u64;
            let mut live = 0u32;
            for (i, (home, &h)) in homes.iter().zip(&hashes).enumerate() {
                let id = std::hint::select_unpredictable(home.hash == h, home.head & !MORE, 0);
                touched ^= touch(id);
                live |= u32::from(home.head != EMPTY) << i;
            }
            // Kept only so that the compiler does not drop the loads.
            std::hint::black_box(touched);
            let mut deferred = 0u32;
            while live != 0 {
                let i = live.trailing_zeros() as usize;
                live &= live - 1;
                let (max_priority, g) = chunk[i];
                let h = hashes[i];
                let home = &mut homes[i];
                if best.is_some_and(|b| max_priority < b.0) {
                    break;
                }
                let grp = &self.groups[g];
                let slot: &Slot = if home.hash == h {
                    home
                } else {
                    match grp.find_slot(h) {
                        Some(s) => &grp.slots[s],
                        None => continue,
                    }
                };
                let id = slot.head & !MORE;
                // A bucket's other entries rank below its head: if the
                // head cannot win, neither can they.
                if !self.beats(slot.priority, || self.seq(id), best) {
                    continue;
                }
                if hit(id) {
                    best = Some((slot.priority, id));
                } else if slot.head & MORE != 0 {
                    // The rest of the bucket is scanned now if it ranks
                    // above every later group of the chunk, else after
                    // their heads, which may cut it short.
                    let later = chunk.get(i + 1).map_or(i32::MIN, |c| c.0);
                    if slot.next >= later {
                        self.scan_tail(grp, *slot, &passes, &mut best);
                    } else {
                        *home = slot;
                        deferred |= 1 << i;
                    }
                }
            }
            while deferred != 0 {
                let i = deferred.trailing_zeros() as usize;
                deferred &= deferred - 1;
                self.scan_tail(&self.groups[chunk[i].1], *homes[i], &passes, &mut best);
            }
        }
        best.map(|b| b.1)
    }

    /// Entry `id`'s insertion sequence number.
    #[inline]
    fn seq(&self, id: u32) -> u64 {
        self.seqs.get(id as usize).copied().unwrap_or(u64::MAX)
    }

    /// Whether an entry of this priority beats `best` (`seq` gives its
    /// sequence number, needed only on a tie).
    #[inline]
    fn beats(&self, priority: i32, seq: impl FnOnce() -> u64, best: Option<(i32, u32)>) -> bool {
        match best {
            None => true,
            Some((bp, bid)) => priority > bp || (priority == bp && seq() < self.seq(bid)),
        }
    }

    /// Looks for a better match than `best` among the entries after the
    /// head of the bucket behind `slot`.
    #[inline]
    fn scan_tail(
        &self,
        grp: &Group<W>,
        slot: Slot,
        passes: impl Fn(&Bucket<W>, usize) -> bool,
        best: &mut Option<(i32, u32)>,
    ) {
        // The slot says whether the rest can win before the bucket is read.
        if best.is_some_and(|b| slot.next < b.0) {
            return;
        }
        let Some(b) = grp.pool.get(slot.bucket as usize) else {
            return;
        };
        for (k, item) in b.items.iter().enumerate().skip(1) {
            if !self.beats(item.priority, || item.seq, *best) {
                return;
            }
            if passes(b, k) {
                *best = Some((item.priority, item.id));
                return;
            }
        }
    }
}

/// Groups whose slots a lookup loads together before it looks at any.
const CHUNK: usize = 8;

/// The narrow engine converts the key on the stack: keys with more fields
/// use the wide one.
const INLINE_FIELDS: usize = 16;

impl PriorityEngine {
    /// An engine for fields of these widths; `ranged[i]` says field `i` is
    /// a range field.
    pub(crate) fn new(widths: &[u32], ranged: &[bool]) -> Self {
        if widths.iter().all(|&w| w <= 64) && widths.len() <= INLINE_FIELDS {
            PriorityEngine(Words::Narrow(Tss::new(widths, ranged)))
        } else {
            PriorityEngine(Words::Wide(Tss::new(widths, ranged)))
        }
    }

    pub(crate) fn insert(
        &mut self,
        id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
        seq: u64,
    ) {
        match &mut self.0 {
            Words::Narrow(t) => t.insert(id, matches, priority, seq),
            Words::Wide(t) => t.insert(id, matches, priority, seq),
        }
    }

    pub(crate) fn remove(&mut self, id: u32) {
        match &mut self.0 {
            Words::Narrow(t) => t.remove(id),
            Words::Wide(t) => t.remove(id),
        }
    }

    /// Heap bytes held (capacity, approximately for the hash maps).
    pub(crate) fn memory_bytes(&self) -> usize {
        match &self.0 {
            Words::Narrow(t) => t.memory_bytes(),
            Words::Wide(t) => t.memory_bytes(),
        }
    }

    /// The best entry matching `key` (one value per field, masked to its
    /// width; a key of another length matches nothing).
    #[inline]
    pub(crate) fn lookup(&self, key: &[u128]) -> Option<u32> {
        match &self.0 {
            Words::Narrow(t) => {
                if key.len() != t.widths.len() {
                    return None;
                }
                let mut narrow = [0u64; INLINE_FIELDS];
                for (n, &k) in narrow.iter_mut().zip(key) {
                    *n = k as u64;
                }
                t.lookup(&narrow[..key.len()])
            }
            Words::Wide(t) => {
                if key.len() != t.widths.len() {
                    return None;
                }
                t.lookup(key)
            }
        }
    }

    /// Number of groups holding entries.
    #[cfg(test)]
    pub(crate) fn group_count(&self) -> usize {
        match &self.0 {
            Words::Narrow(t) => t.order.len(),
            Words::Wide(t) => t.order.len(),
        }
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
        let mut e = PriorityEngine::new(&[8, 16], &[false, true]);
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

    /// The filter grows with the buckets, shrinks after mass deletion,
    /// and never hides a live bucket meanwhile.
    #[test]
    fn filter_follows_growth_and_mass_deletion() {
        let mut e = Tss::<u64>::new(&[16, 16], &[false, false]);
        let mut x = 0x2545_f491u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u128 & 0xffff
        };
        let entries: Vec<[u128; 2]> = (0..4000).map(|_| [next(), next()]).collect();
        let exact = |v: u128| t(v, 0xffff);
        for (id, k) in entries.iter().enumerate() {
            e.insert(id as u32, &[exact(k[0]), exact(k[1])], 1, id as u64);
        }
        let grown = e.filter.bits.len() * 64;
        assert!(
            grown >= e.filter.buckets * FILTER_BITS_PER_BUCKET,
            "{grown} bits"
        );
        for id in 0..3990u32 {
            e.remove(id);
        }
        assert!(
            e.filter.bits.len() * 64 < grown / 8,
            "filter not rebuilt smaller"
        );
        for (id, k) in entries.iter().enumerate() {
            let want = (id >= 3990).then_some(id as u32);
            let got = e.lookup(&[k[0] as u64, k[1] as u64]);
            // Another live entry with the same key may win (inserted first).
            if got != want {
                let w = got.expect("a live entry was hidden");
                assert_eq!(entries[w as usize], *k);
            }
        }
    }

    /// The band holds the entries ranked down to the best wildcard when
    /// there are few enough, follows inserts, deletes and ties, and goes
    /// when the wildcard goes.
    #[test]
    fn band_follows_the_best_wildcard() {
        let mut e = Tss::<u64>::new(&[8, 8], &[false, true]);
        let r = |low, high| Some(FieldMatch::Range { low, high });
        for id in 0..100u32 {
            e.insert(id, &[t(id as u128, 0xff), r(0, 10)], id as i32, id as u64);
        }
        assert!(e.band.ids.is_empty());
        // A wildcard at 89 ranks 12th (entry 89 ties and came first): the
        // band is the eleven above it and itself.
        e.insert(100, &[None, None], 89, 100);
        assert_eq!(e.band.ids.len(), 12);
        assert_eq!(e.lookup(&[99, 5]), Some(99));
        assert_eq!(e.lookup(&[89, 5]), Some(89));
        assert_eq!(e.lookup(&[99, 11]), Some(100));
        assert_eq!(e.lookup(&[3, 5]), Some(100));
        // A tie inserted later ranks below the wildcard and never wins.
        e.insert(101, &[t(3, 0xff), None], 89, 101);
        assert_eq!(e.band.ids.len(), 12);
        assert_eq!(e.lookup(&[3, 5]), Some(100));
        // A full range is a wildcard too; ranked higher, it shrinks the band.
        e.insert(102, &[None, r(0, 0xff)], 95, 102);
        assert_eq!(e.band.ids.len(), 6);
        assert_eq!(e.lookup(&[3, 5]), Some(102));
        e.remove(102);
        e.remove(100);
        // No wildcard left: the groups answer again.
        assert!(e.band.ids.is_empty());
        assert_eq!(e.lookup(&[3, 5]), Some(101));
        // A wildcard ranked below the band's reach makes no band.
        e.insert(103, &[None, None], 10, 103);
        assert!(e.band.ids.is_empty());
        assert_eq!(e.lookup(&[200, 5]), Some(103));
        // Deletions above it bring it within reach.
        for id in 11..100 {
            e.remove(id);
        }
        assert_eq!(e.band.ids, [101, 10, 103]);
        assert_eq!(e.lookup(&[3, 5]), Some(101));
        assert_eq!(e.lookup(&[10, 5]), Some(10));
        assert_eq!(e.lookup(&[4, 5]), Some(103));
        e.remove(103);
        assert!(e.band.ids.is_empty());
        assert_eq!(e.lookup(&[4, 5]), Some(4));
    }

    #[test]
    fn entries_with_different_masks_share_groups() {
        // 512 entries over 32-bit fields with /8../32 prefixes on two fields:
        // 16 mask combinations, merged into a handful of groups.
        let mut e = PriorityEngine::new(&[32, 32], &[false, false]);
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
