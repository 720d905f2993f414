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
//! Contract: the stage holds at most [`STAGE_LIMIT`] entries (its bitmaps
//! cost `bytes × 256 × ⌈n/64⌉` words, 288 KB for 1,024 entries over the 9
//! masked bytes of an IPv4 ACL key) and is kept in step on every change:
//! an insert or delete shifts each bitmap by one bit from the entry's rank
//! on (O(bytes × 256 × n/64) word operations, ~10 µs at 1,000 entries).

use std::cmp::Reverse;

/// Most entries the stage holds; a table that grows past it drops the
/// stage, and builds it again once it has shrunk to half of it.
pub(crate) const STAGE_LIMIT: usize = 1024;

/// An entry's place in rank order: earlier wins.
pub(crate) type Rank = (Reverse<i32>, u64);

/// See the module doc.
#[derive(Debug)]
pub(crate) struct BitStage {
    /// Bit offsets in the packed key of the bytes it filters on.
    shifts: Box<[u32]>,
    /// Words per bitmap (a power of two, enough for every entry).
    words: usize,
    /// `shifts.len() × 256` bitmaps of `words` words: byte-major, then
    /// value, then word.
    cells: Vec<u64>,
    /// The entries in rank order: their ranks, ids and head records
    /// (`stride` words each).
    ranks: Vec<Rank>,
    ids: Vec<u32>,
    records: Vec<u128>,
    stride: usize,
}

impl BitStage {
    /// An empty stage filtering on the packed key's bytes at `shifts`, for
    /// head records of `stride` words (mask then value first).
    pub(crate) fn new(shifts: Box<[u32]>, stride: usize) -> Self {
        let words = 1;
        BitStage {
            cells: vec![0; shifts.len() * 256 * words],
            shifts,
            words,
            ranks: Vec::new(),
            ids: Vec::new(),
            records: Vec::new(),
            stride,
        }
    }

    /// A stage holding `entries` (rank, id, head record), given in rank
    /// order.
    pub(crate) fn from_ranked<'a>(
        shifts: Box<[u32]>,
        stride: usize,
        entries: impl Iterator<Item = (Rank, u32, &'a [u128])>,
    ) -> Self {
        let mut stage = Self::new(shifts, stride);
        for (rank, id, record) in entries {
            debug_assert!(stage.ranks.last().is_none_or(|&r| r < rank));
            stage.ranks.push(rank);
            stage.ids.push(id);
            stage.records.extend_from_slice(record);
        }
        stage.words = stage.ids.len().div_ceil(64).next_power_of_two();
        stage.rebuild();
        stage
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.cells.capacity() * 8
            + self.ranks.capacity() * size_of::<Rank>()
            + self.ids.capacity() * 4
            + self.records.capacity() * 16
    }

    /// Whether a record allows value `c` in the byte at bit `shift`.
    #[inline]
    fn allows(record: &[u128], shift: u32, c: u64) -> bool {
        let m = (record[0] >> shift) as u64 & 0xff;
        let v = (record[1] >> shift) as u64 & 0xff;
        c & m == v
    }

    /// Adds entry `id` of this rank with its head record.
    pub(crate) fn insert(&mut self, rank: Rank, id: u32, record: &[u128]) {
        debug_assert_eq!(record.len(), self.stride);
        let pos = self.ranks.partition_point(|r| *r < rank);
        self.ranks.insert(pos, rank);
        self.ids.insert(pos, id);
        let s = self.stride;
        self.records.splice(pos * s..pos * s, record.iter().copied());
        if self.ids.len() > self.words * 64 {
            // Grown past the bitmaps: rebuild them twice as wide.
            self.words *= 2;
            self.rebuild();
            return;
        }
        let (w, b) = (pos / 64, pos % 64);
        let words = self.words;
        for (k, &shift) in self.shifts.iter().enumerate() {
            for c in 0..256u64 {
                let at = (k * 256 + c as usize) * words;
                let bm = &mut self.cells[at..at + words];
                for i in (w + 1..words).rev() {
                    bm[i] = (bm[i] << 1) | (bm[i - 1] >> 63);
                }
                let low = (1u64 << b) - 1;
                let x = bm[w];
                let bit = u64::from(Self::allows(record, shift, c)) << b;
                bm[w] = (x & low) | ((x & !low) << 1) | bit;
            }
        }
    }

    /// Removes entry `id` of this rank, if held.
    pub(crate) fn remove(&mut self, rank: Rank, id: u32) {
        let pos = self.ranks.partition_point(|r| *r < rank);
        if self.ids.get(pos) != Some(&id) {
            return;
        }
        self.ranks.remove(pos);
        self.ids.remove(pos);
        let s = self.stride;
        self.records.drain(pos * s..(pos + 1) * s);
        let (w, b) = (pos / 64, pos % 64);
        let words = self.words;
        for bm in self.cells.chunks_exact_mut(words) {
            let low = (1u64 << b) - 1;
            let x = bm[w];
            // Bit 63 of word `w` is refilled from the next word below.
            bm[w] = (x & low) | ((x >> 1) & !low & !(1 << 63));
            for i in w..words {
                let carry = bm.get(i + 1).map_or(0, |n| n & 1);
                if i > w {
                    bm[i] >>= 1;
                }
                bm[i] |= carry << 63;
            }
        }
    }

    /// Sets every bitmap from the entries.
    fn rebuild(&mut self) {
        let words = self.words;
        self.cells.clear();
        self.cells.resize(self.shifts.len() * 256 * words, 0);
        for (pos, record) in self.records.chunks_exact(self.stride).enumerate() {
            let (w, bit) = (pos / 64, 1u64 << (pos % 64));
            for (k, &shift) in self.shifts.iter().enumerate() {
                let m = (record[0] >> shift) as u64 & 0xff;
                let v = (record[1] >> shift) as u64 & 0xff;
                // The values allowed: `v` with any of the bits `m` leaves
                // free (every submask of `!m`).
                let free = !m & 0xff;
                let mut x = free;
                loop {
                    let c = (v | x) as usize;
                    self.cells[(k * 256 + c) * words + w] |= bit;
                    if x == 0 {
                        break;
                    }
                    x = (x - 1) & free;
                }
            }
        }
    }

    /// The id of the first entry, in rank order, that the key's bytes
    /// allow and whose record `passes`.
    #[inline]
    pub(crate) fn lookup(&self, packed: u128, passes: impl Fn(&[u128]) -> bool) -> Option<u32> {
        const MAX_BYTES: usize = 16;
        let words = self.words;
        let mut bases = [0usize; MAX_BYTES];
        for (k, (&shift, base)) in self.shifts.iter().zip(&mut bases).enumerate() {
            let c = (packed >> shift) as usize & 0xff;
            *base = (k * 256 + c) * words;
        }
        let bases = &bases[..self.shifts.len().min(MAX_BYTES)];
        let used = self.ids.len().div_ceil(64);
        for w in 0..used {
            let mut m = !0u64;
            for &base in bases {
                m &= self.cells.get(base + w).copied().unwrap_or(0);
            }
            while m != 0 {
                let pos = w * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                let s = self.stride;
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
