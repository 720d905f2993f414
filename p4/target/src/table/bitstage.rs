//! The bit-vector stage of the priority engine for small tables with a
//! packed key (see `priority.rs`): every entry in rank order (priority
//! descending, then insertion order), and per byte of the packed key a
//! table of 256 bitmaps over those ranks, bit `r` of byte `b`'s bitmap for
//! value `c` set when the `r`-th entry's masked fields allow `c` in that
//! byte (`c & mask_byte == value_byte`). A lookup ANDs the bitmaps its
//! key's bytes select, a 64-rank word at a time from the top, and tests the
//! set bits' records in order: the first that passes is the answer, since
//! nothing ranked after it can win. This is the bit-vector scheme of
//! Lakshman and Stiliadis ("High-speed policy-based packet forwarding
//! using efficient multi-dimensional range matching", 1998) cut along
//! bytes instead of elementary intervals, which is exact for masked
//! fields, so only range fields (not filtered here) and the bytes left
//! out make candidates that fail their test.
//!
//! Why: a table of about 1,000 random ACL entries spreads over ~10 tuple
//! groups whose best priorities are all near the top, so the groups'
//! early exit never cuts and every lookup probed all of them (~111 ns in
//! `benches/tables.rs`); here it reads a few words per byte instead.
//!
//! Contract: the stage holds at most [`STAGE_LIMIT`] entries and is kept
//! in step on every change. Its bitmaps are `bytes × 256` words per 64
//! positions, ~18 KB a plane for the 9 masked bytes of an IPv4 ACL key,
//! ~400 KB at 1,024 entries (the groups are kept as well, so a table past
//! the limit loses nothing). Positions follow rank order with free ones
//! left in every word, so an insert moves only the entries between its
//! place and the next free position (rewriting one to [`CASCADE`] planes),
//! a delete clears its bits, and the stage is laid out afresh only when no
//! free position is near or it has shrunk to a quarter of its positions.

use std::cmp::Reverse;
use std::collections::BTreeMap;

/// Most entries the stage holds; a table that grows past it drops the
/// stage, and builds it again once it has shrunk to half of it.
pub(crate) const STAGE_LIMIT: usize = 1024;

/// Entries a word of ranks gets when the stage is laid out afresh: the
/// other 16 positions are left free, so that an insert moves at most the
/// entries between its place and the next free position of its word.
const FILL: usize = 48;

/// Most words an insert shifts entries through to reach a free
/// position; past that the stage is laid out afresh (amortised: that
/// leaves 16 free positions in every word).
const CASCADE: usize = 4;

/// An entry's place in rank order: earlier wins.
pub(crate) type Rank = (Reverse<i32>, u64);

/// See the module doc.
#[derive(Debug)]
pub(crate) struct BitStage {
    /// Bit offsets in the packed key of the bytes it filters on.
    shifts: Box<[u32]>,
    /// `shifts.len() × 256` bitmaps over the positions, stored by word
    /// (a *plane* per 64 positions), then byte, then value: an insert
    /// rewrites one plane, a lookup reads one word a byte from a plane.
    cells: Vec<u64>,
    /// Per bitmap, which of its words are non-zero (a bit a plane; at most
    /// 22 planes): a lookup ANDs these first and reads only the planes
    /// every byte has a candidate in, so a key that matches nothing (the
    /// router bench's UDP packets against a TCP ACL) costs one word a
    /// byte, not one a byte and plane.
    summary: Vec<u64>,
    /// Positions in use, a bit each. Positions follow rank order, with
    /// free ones between (see [`FILL`]); a free position's bit is clear in
    /// every bitmap.
    used: Vec<u64>,
    /// Per position: the entry's id and head record (`stride` words).
    ids: Vec<u32>,
    records: Vec<u128>,
    stride: usize,
    /// Entries by rank, with their positions.
    by_rank: BTreeMap<Rank, u32>,
}

impl BitStage {
    /// An empty stage filtering on the packed key's bytes at `shifts`, for
    /// head records of `stride` words (mask then value first).
    pub(crate) fn new(shifts: Box<[u32]>, stride: usize) -> Self {
        let mut stage = BitStage {
            shifts,
            cells: Vec::new(),
            summary: Vec::new(),
            used: Vec::new(),
            ids: Vec::new(),
            records: Vec::new(),
            stride,
            by_rank: BTreeMap::new(),
        };
        stage.lay_out(Vec::new());
        stage
    }

    /// A stage holding `entries` (rank, id, head record).
    pub(crate) fn from_ranked<'a>(
        shifts: Box<[u32]>,
        stride: usize,
        entries: impl Iterator<Item = (Rank, u32, &'a [u128])>,
    ) -> Self {
        let mut stage = Self::new(shifts, stride);
        let all = entries.map(|(r, id, rec)| (r, id, rec.to_vec())).collect();
        stage.lay_out(all);
        stage
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.by_rank.len()
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.cells.capacity() * 8
            + self.summary.capacity() * 8
            + self.used.capacity() * 8
            + self.ids.capacity() * 4
            + self.records.capacity() * 16
            + self.by_rank.len() * 40
    }

    /// Bitmaps a plane: one word of each, for 64 positions.
    fn plane(&self) -> usize {
        self.shifts.len() * 256
    }

    /// Lays the stage out afresh for `entries` (any order): [`FILL`] a
    /// word in rank order.
    fn lay_out(&mut self, mut entries: Vec<(Rank, u32, Vec<u128>)>) {
        entries.sort_unstable_by_key(|e| e.0);
        let words = entries.len().div_ceil(FILL).max(1);
        debug_assert!(words <= 64, "the summary has a bit a plane");
        let plane = self.plane();
        self.cells.clear();
        self.cells.resize(plane * words, 0);
        self.summary.clear();
        self.summary.resize(plane, 0);
        self.used.clear();
        self.used.resize(words, 0);
        self.ids.clear();
        self.ids.resize(words * 64, u32::MAX);
        self.records.clear();
        self.records.resize(words * 64 * self.stride, 0);
        self.by_rank.clear();
        for (j, (rank, id, record)) in entries.into_iter().enumerate() {
            let pos = j / FILL * 64 + j % FILL;
            self.put(pos, rank, id, &record);
        }
    }

    /// Puts an entry at free position `pos`.
    fn put(&mut self, pos: usize, rank: Rank, id: u32, record: &[u128]) {
        self.used[pos / 64] |= 1 << (pos % 64);
        self.ids[pos] = id;
        let s = self.stride;
        self.records[pos * s..(pos + 1) * s].copy_from_slice(record);
        self.by_rank.insert(rank, pos as u32);
        self.mark(pos, record, true);
    }

    /// The entries held, in rank order.
    fn entries(&self) -> Vec<(Rank, u32, Vec<u128>)> {
        let s = self.stride;
        self.by_rank
            .iter()
            .map(|(&rank, &pos)| {
                let pos = pos as usize;
                (
                    rank,
                    self.ids[pos],
                    self.records[pos * s..(pos + 1) * s].to_vec(),
                )
            })
            .collect()
    }

    /// Sets (or clears) bit `pos` in the bitmaps of every value `record`
    /// allows.
    fn mark(&mut self, pos: usize, record: &[u128], on: bool) {
        let plane = self.plane();
        let (w, bit) = (pos / 64, 1u64 << (pos % 64));
        let at = &mut self.cells[w * plane..(w + 1) * plane];
        for (k, &shift) in self.shifts.iter().enumerate() {
            let m = (record[0] >> shift) as u64 & 0xff;
            let v = (record[1] >> shift) as u64 & 0xff;
            // The values allowed: `v` with any of the bits `m` leaves
            // free (every submask of `!m`).
            let free = !m & 0xff;
            let mut x = free;
            loop {
                let c = k * 256 + (v | x) as usize;
                let cell = &mut at[c];
                *cell = if on { *cell | bit } else { *cell & !bit };
                let sum = &mut self.summary[c];
                *sum = (*sum & !(1 << w)) | (u64::from(*cell != 0) << w);
                if x == 0 {
                    break;
                }
                x = (x - 1) & free;
            }
        }
    }

    /// Adds entry `id` of this rank with its head record.
    pub(crate) fn insert(&mut self, rank: Rank, id: u32, record: &[u128]) {
        debug_assert_eq!(record.len(), self.stride);
        // Right after the entry ranked just before it.
        let target = self
            .by_rank
            .range(..rank)
            .next_back()
            .map_or(0, |(_, &p)| p as usize + 1);
        let (w, b) = (target / 64, target % 64);
        let low = (1u64 << b) - 1;
        // The first free position from `target` on, within CASCADE words;
        // none: lay out afresh, leaving free positions in every word.
        let found = (w..self.used.len().min(w + CASCADE)).find_map(|j| {
            let free = !self.used[j] & if j == w { !low } else { !0 };
            (free != 0).then(|| (j, free.trailing_zeros() as usize))
        });
        let Some((j, hole)) = found else {
            let mut all = self.entries();
            all.push((rank, id, record.to_vec()));
            self.lay_out(all);
            return;
        };
        // The entries from `target` up to that free position move up one,
        // in every bitmap and in the arrays: word `j` first, taking the
        // top bit of the word below (not yet moved) into its bit 0, down
        // to word `w`, whose bits below `target` stay.
        let plane = self.plane();
        for i in (w..=j).rev() {
            let keep_low = if i == w { low } else { 0 };
            let moved = if i == j { (1u64 << hole) - 1 } else { !0 } & !keep_low;
            let (below, from) = self.cells.split_at_mut(i * plane);
            let cur = &mut from[..plane];
            if i > w {
                let prev = &below[(i - 1) * plane..];
                for (x, &p) in cur.iter_mut().zip(prev) {
                    *x = (*x & !moved) | ((*x & moved) << 1) | (p >> 63);
                }
            } else {
                for x in cur.iter_mut() {
                    *x = (*x & !moved) | ((*x & moved) << 1);
                }
            }
            for (sum, x) in self.summary.iter_mut().zip(&self.cells[i * plane..]) {
                *sum = (*sum & !(1 << i)) | (u64::from(*x != 0) << i);
            }
            let carry = if i > w { self.used[i - 1] >> 63 } else { 0 };
            let u = self.used[i];
            self.used[i] = (u & !moved) | ((u & moved) << 1) | carry;
        }
        let s = self.stride;
        let (first, last) = (target, j * 64 + hole);
        for pos in (first..last).rev() {
            self.ids[pos + 1] = self.ids[pos];
            self.records
                .copy_within(pos * s..(pos + 1) * s, (pos + 1) * s);
        }
        // Their positions in the rank map: they rank right after `rank`.
        for (_, p) in self.by_rank.range_mut(rank..).take(last - first) {
            *p += 1;
        }
        self.put(target, rank, id, record);
    }

    /// Removes entry `id` of this rank, if held.
    pub(crate) fn remove(&mut self, rank: Rank, id: u32) {
        let Some(&pos) = self.by_rank.get(&rank) else {
            return;
        };
        let pos = pos as usize;
        if self.ids[pos] != id {
            return;
        }
        self.by_rank.remove(&rank);
        let s = self.stride;
        let record = self.records[pos * s..(pos + 1) * s].to_vec();
        self.mark(pos, &record, false);
        self.used[pos / 64] &= !(1 << (pos % 64));
        self.ids[pos] = u32::MAX;
        // Shrunk to a quarter of its positions: lay out smaller.
        if self.used.len() > 1 && self.len() * 4 < self.used.len() * 64 {
            let all = self.entries();
            self.lay_out(all);
        }
    }

    /// The id of the first entry, in rank order, that the key's bytes
    /// allow and whose record `passes`.
    #[inline]
    pub(crate) fn lookup(&self, packed: u128, passes: impl Fn(&[u128]) -> bool) -> Option<u32> {
        const MAX_BYTES: usize = 16;
        let plane = self.plane();
        let mut bases = [0usize; MAX_BYTES];
        for (k, (&shift, base)) in self.shifts.iter().zip(&mut bases).enumerate() {
            let c = (packed >> shift) as usize & 0xff;
            *base = k * 256 + c;
        }
        let bases = &bases[..self.shifts.len().min(MAX_BYTES)];
        let s = self.stride;
        let mut planes = !0u64;
        for &base in bases {
            planes &= self.summary.get(base).copied().unwrap_or(0);
        }
        while planes != 0 {
            let w = planes.trailing_zeros() as usize;
            planes &= planes - 1;
            let Some(at) = self.cells.get(w * plane..(w + 1) * plane) else {
                break;
            };
            let mut m = !0u64;
            for &base in bases {
                m &= at.get(base).copied().unwrap_or(0);
            }
            while m != 0 {
                let pos = w * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                if let Some(r) = self.records.get(pos * s..(pos + 1) * s)
                    && passes(r)
                {
                    return self.ids.get(pos).copied();
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stage on one byte at bit 0, records of (mask, value).
    fn stage() -> BitStage {
        BitStage::new(vec![0].into_boxed_slice(), 2)
    }

    fn rank(p: i32, seq: u64) -> Rank {
        (Reverse(p), seq)
    }

    /// The first entry in rank order whose (mask, value) allows `key`,
    /// computed directly.
    fn reference(entries: &[(Rank, u32, u128, u128)], key: u128) -> Option<u32> {
        let mut best: Option<&(Rank, u32, u128, u128)> = None;
        for e in entries {
            if key & e.2 == e.3 && best.is_none_or(|b| e.0 < b.0) {
                best = Some(e);
            }
        }
        best.map(|e| e.1)
    }

    #[test]
    fn follows_inserts_and_deletes_across_word_growth() {
        let mut s = stage();
        let mut live: Vec<(Rank, u32, u128, u128)> = Vec::new();
        // Priorities out of order so that inserts land mid-bitmap, and
        // enough entries for the bitmaps to widen twice.
        for id in 0..200u32 {
            let p = ((id * 37) % 101) as i32;
            let m = [0xffu128, 0xf0, 0x0f, 0][id as usize % 4];
            let v = u128::from(id * 13) & m;
            s.insert(rank(p, u64::from(id)), id, &[m, v]);
            live.push((rank(p, u64::from(id)), id, m, v));
        }
        for key in 0..256u128 {
            let got = s.lookup(key, |r| key & r[0] == r[1]);
            assert_eq!(got, reference(&live, key), "key {key}");
        }
        for n in (0..200).step_by(3) {
            let (r, id, ..) = live[n];
            s.remove(r, id);
        }
        let mut n = 0;
        live.retain(|_| {
            n += 1;
            (n - 1) % 3 != 0
        });
        assert_eq!(s.len(), live.len());
        for key in 0..256u128 {
            let got = s.lookup(key, |r| key & r[0] == r[1]);
            assert_eq!(got, reference(&live, key), "key {key} after deletes");
        }
    }
}
