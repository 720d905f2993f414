//! Longest-prefix-match engine: a poptrie (Asai & Ohara, "Poptrie: a
//! compressed trie with population count for fast and scalable software IP
//! routing table lookup", SIGCOMM 2015) with a direct-pointing root.
//!
//! The trie runs over the concatenated key: the table's exact fields first,
//! each at full width, in key order, then the LPM field. An entry with an
//! LPM prefix of `p` bits is therefore a prefix of `exact_bits + p` bits of
//! that string, and "longest prefix wins" over the string is exactly "same
//! exact values, longest LPM prefix wins". Concatenated keys are limited to
//! [`MAX_KEY_BITS`]; `Table::new` uses the priority engine beyond that.
//!
//! Lookup structure. The root is an array of `2^s0` slots indexed by the
//! first `s0 = min(16, key_bits)` bits (direct pointing; 18 in tables of
//! keys up to 64 bits declared with 65,536 entries or more); a slot holds
//! an entry (id + 1, 0 for none), a node or a tail. Every node below covers the next
//! `min(6, bits left)` bits, so it has up to 64 positions, and is 24 bytes:
//! a `vector` bitmap of the positions that lead to a child node, a
//! `leafvec` bitmap marking where a run of equal leaves starts, and the
//! indices of its first child and first leaf. A node's children are
//! contiguous, as are its leaves, so the n-th child or leaf is found by a
//! population count of the bitmap below the position. Leaves are pushed:
//! every position holds the best entry covering it, so a lookup never
//! backtracks and reads one node per level plus one leaf.
//!
//! Tails. A sparse long route, such as an IPv6 /48 alone under its /32,
//! would otherwise cost a chain of 6-bit nodes of its own, and an IPv4 /28
//! alone under its root slot a node of 24 or more bytes. Instead a root
//! slot or a node's leaf position with few routes below it names a tail:
//! the routes below that position (at most [`TAIL_ROUTES`], or
//! [`NARROW_TAIL_ROUTES`] for keys of at most 64 bits, each at most
//! [`TAIL_BITS`] bits past the position), longest first, each as its bits
//! past the position in a `u64` (a 1 bit marks its end) and its id, then a
//! last entry that matches every key and holds the fallback, what the
//! position shows without the tail. A lookup that reaches a tail takes the
//! first entry covering the key: the longest route below the position that
//! matches, else the fallback. So a tail compresses the path (the skipped
//! bits are compared, not walked) and its leaves (12 bytes a route, no
//! node). A route that does not fit (the tail is full, or the route is too
//! long for it) turns the tail into a node at that position, and the tail's
//! routes are added again below it; a delete that empties a tail gives the
//! position its fallback back, a node left with no prefix, child or tail is
//! freed, and one left with no child and at most half a tail of routes
//! folds back into a tail.
//!
//! Control structure (no second trie): a route of `L <= s0` bits lives in
//! `root_prefixes`; a longer one in the node where its last bit falls, as a
//! bit of the node's 126-bit prefix bitmap (relative length `r` in 1..=6
//! and the `r` bits below the node) with its entry id in a contiguous run
//! of `ids`; a route in a tail lives only there. Each node also remembers
//! the value pushed into it from above (`inherited`), as a tail's last
//! entry does. An update touches only the positions its prefix covers
//! in the node it ends in: those that showed the value it replaces (the
//! longest shorter cover on insertion, the prefix itself on removal) take
//! the new one, children and tails there that inherited it are updated the same way,
//! and the node's leaves are re-encoded from its decoded positions; no
//! other child is read, so an insert costs one chain of nodes, not a
//! node's whole fan-out. Nodes are created on the way down and freed on
//! the way up when they hold no prefix, child or tail.
//!
//! Contract:
//! - Lookup reads at most `1 + ceil((key_bits - s0) / 6)` nodes and one
//!   leaf, then at most one tail of `TAIL_ROUTES + 1` entries,
//!   independent of the number of entries; no allocation, no panic.
//! - Memory: a `4 × 2^s0`-byte root (256 KiB, 1 MiB in large tables) and,
//!   once a route of at most `s0` bits exists, a byte a slot; 48 bytes a
//!   node (lookup and control halves), 4 bytes a leaf and 4 per route id
//!   in a node, 12 bytes per route in a tail and 12 per tail; segments are
//!   reused through per-size free lists.
//! - Entry ids must be below 2^30.

use rustc_hash::FxHashMap;

use crate::runtime::FieldMatch;

/// Longest concatenated key (exact fields + LPM field) this engine handles.
pub(crate) const MAX_KEY_BITS: u32 = 512;
/// Packed key buffer: the key plus 9 bytes of padding for [`bits64`].
const KEY_BYTES: usize = (MAX_KEY_BITS / 8) as usize + 9;
/// Root stride of tables declared with fewer than [`LARGE_TABLE`] entries.
const ROOT_BITS: u32 = 16;
/// Root stride of large tables: IPv4 /24 routes, the bulk of a full
/// table, then end in the first node instead of creating a second.
const LARGE_ROOT_BITS: u32 = 18;
/// Declared size from which a table gets the wider root (1 MiB).
pub(crate) const LARGE_TABLE: u32 = 1 << 16;
/// Stride of the nodes below the root.
const STRIDE: u32 = 6;

/// Root slot encoding: `CHILD | node`, `TAIL | tail`, else entry id + 1
/// (0 = nothing).
const CHILD: u32 = 1 << 31;
/// Root slot or leaf naming a tail (entry ids are below 2^30).
const TAIL: u32 = 1 << 30;
/// Longest route a tail holds, in bits past its position.
const TAIL_BITS: u32 = 63;
/// Routes a tail holds before the next one turns it into a node.
const TAIL_ROUTES: usize = 24;
/// The same for keys of at most 64 bits (IPv4): their root slots hold
/// many routes (a BGP table's /24s crowd their /16), which a node's
/// pushed leaves resolve in one step where a long tail is scanned.
const NARROW_TAIL_ROUTES: usize = 8;
/// Key of a tail's last entry, which every key matches (length 0).
const TAIL_END: u64 = 1 << 63;
/// `root_len` of a slot no root route covers.
const NO_ROUTE: u8 = u8::MAX;

/// Lookup half of a node.
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    /// Positions that lead to a child node.
    vector: u64,
    /// Positions (not in `vector`) where a run of equal leaves starts.
    leafvec: u64,
    /// First leaf in `leaves`.
    base0: u32,
    /// First child in `nodes`.
    base1: u32,
}

/// Control half of a node (same index as its [`Node`]).
#[derive(Clone, Copy, Debug, Default)]
struct Meta {
    /// Best entry (id + 1) covering the node from above.
    inherited: u32,
    /// First of this node's route ids in `ids`.
    ids: u32,
    /// Prefixes ending in this node: bit `2^r - 2 + q` for relative length
    /// `r` and relative bits `q` (two words, to keep the record 8-aligned).
    prefixes: [u64; 2],
}

impl Meta {
    fn has(&self, b: u32) -> bool {
        self.prefixes[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    fn count(&self) -> u32 {
        self.prefixes[0].count_ones() + self.prefixes[1].count_ones()
    }

    /// Number of prefix bits below `b`.
    fn rank(&self, b: u32) -> u32 {
        if b < 64 {
            (self.prefixes[0] & ((1u64 << b) - 1)).count_ones()
        } else {
            self.prefixes[0].count_ones()
                + (self.prefixes[1] & ((1u64 << (b - 64)) - 1)).count_ones()
        }
    }

    fn flip(&mut self, b: u32) {
        self.prefixes[(b / 64) as usize] ^= 1 << (b % 64);
    }
}

/// One entry of a tail: a route's bits past the tail's position, as a
/// left-aligned `u64` with a 1 right after its last bit (so the length is
/// `63 - trailing_zeros`), and its id + 1. Three `u32`s, so that an entry
/// takes 12 bytes.
#[derive(Clone, Copy, Debug, Default)]
struct TailEntry {
    key: [u32; 2],
    val: u32,
}

impl TailEntry {
    fn new(key: u64, val: u32) -> Self {
        TailEntry {
            key: [(key >> 32) as u32, key as u32],
            val,
        }
    }

    #[inline(always)]
    fn key(&self) -> u64 {
        (u64::from(self.key[0]) << 32) | u64::from(self.key[1])
    }

    /// Route length past the tail's position (0 for the last entry).
    fn len(&self) -> u32 {
        63 - self.key().trailing_zeros()
    }
}

/// Whether tail key `key` covers the 64 key bits `x`.
#[inline(always)]
fn tail_matches(x: u64, key: u64) -> bool {
    (x ^ key) >> key.trailing_zeros() <= 1
}

/// Tail key of the `l` (1..=63) leading bits of `x`.
fn tail_key(x: u64, l: u32) -> u64 {
    (x & !(u64::MAX >> l)) | (1 << (63 - l))
}

/// What [`LpmEngine::tail_remove`] did.
enum TailRemoved {
    /// The route was not in the tail.
    Absent,
    /// The tail moved to a new index.
    Moved(u32),
    /// The tail held only this route and is gone; its position shows the
    /// fallback value.
    Emptied(u32),
}

/// Population of `bits` at and below position `c`.
#[inline]
fn rank_incl(bits: u64, c: u32) -> u32 {
    (bits & (u64::MAX >> (63 - c))).count_ones()
}

/// Resizes `v` to `len`, growing its capacity by half at a time rather
/// than doubling: large tables keep at most a third of their arrays
/// unused, and a growing table copies each element about twice.
pub(crate) fn grow<T: Clone>(v: &mut Vec<T>, len: usize, fill: T) {
    if len > v.capacity() {
        let more = (len - v.len()).max(v.capacity() / 2).max(16);
        v.reserve_exact(more);
    }
    v.resize(len, fill);
}

/// Vectors carved into runs of 1..=`max` items, with a free list per size.
#[derive(Debug)]
struct Segments<T> {
    data: Vec<T>,
    free: Vec<Vec<u32>>,
}

impl<T: Copy + Default> Segments<T> {
    fn new(max: usize) -> Self {
        Segments {
            data: Vec::new(),
            free: vec![Vec::new(); max + 1],
        }
    }

    fn alloc(&mut self, n: usize) -> u32 {
        if n == 0 {
            return 0;
        }
        if let Some(s) = self.free[n].pop() {
            return s;
        }
        let s = self.data.len();
        grow(&mut self.data, s + n, T::default());
        s as u32
    }

    fn release(&mut self, start: u32, n: usize) {
        if n > 0 {
            self.free[n].push(start);
        }
    }

    /// Replaces the run `start..start + n` by a copy with `item` inserted at `at`.
    fn insert(&mut self, start: u32, n: usize, at: usize, item: T) -> u32 {
        let new = self.alloc(n + 1) as usize;
        let s = start as usize;
        for k in 0..at {
            self.data[new + k] = self.data[s + k];
        }
        self.data[new + at] = item;
        for k in at..n {
            self.data[new + k + 1] = self.data[s + k];
        }
        self.release(start, n);
        new as u32
    }

    /// Replaces the run `start..start + n` by a copy without item `at`.
    fn remove(&mut self, start: u32, n: usize, at: usize) -> u32 {
        let new = self.alloc(n - 1) as usize;
        let s = start as usize;
        for k in 0..at {
            self.data[new + k] = self.data[s + k];
        }
        for k in at + 1..n {
            self.data[new + k - 1] = self.data[s + k];
        }
        self.release(start, n);
        new as u32
    }

    fn bytes(&self) -> usize {
        self.data.capacity() * std::mem::size_of::<T>()
            + self
                .free
                .iter()
                .map(|f| f.capacity() * 4 + std::mem::size_of::<Vec<u32>>())
                .sum::<usize>()
    }
}

/// The bits `pos..pos + n` (n <= 24) of a packed key, as an integer.
#[inline]
fn chunk(buf: &[u8; KEY_BYTES], pos: u32, n: u32) -> u32 {
    let i = (pos / 8) as usize;
    let w = u32::from_be_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
    (w << (pos % 8)) >> (32 - n)
}

/// The 64 bits from `pos` of a packed key (zero past its end).
#[inline]
fn bits64(buf: &[u8; KEY_BYTES], pos: u32) -> u64 {
    let i = (pos / 8) as usize;
    let mut b = [0u8; 16];
    b[..9].copy_from_slice(&buf[i..i + 9]);
    ((u128::from_be_bytes(b) << (pos % 8)) >> 64) as u64
}

/// Writes `width` bits of `value` at bit `pos` of `buf` (MSB first; `buf` zeroed).
fn put_bits(buf: &mut [u8], mut pos: usize, value: u128, width: u32) {
    let mut remaining = width;
    while remaining > 0 {
        let used = (pos % 8) as u32;
        let free = 8 - used;
        let n = free.min(remaining);
        let chunk = ((value >> (remaining - n)) as u8) & (((1u16 << n) - 1) as u8);
        buf[pos / 8] |= chunk << (free - n);
        pos += n as usize;
        remaining -= n;
    }
}

/// Poptrie over `exact fields ++ lpm field`.
#[derive(Debug)]
pub(crate) struct LpmEngine {
    /// Key field indices in trie order: exact fields, then the LPM field.
    order: Box<[usize]>,
    /// Widths in the same order.
    widths: Box<[u32]>,
    /// Sum of `widths`.
    total_bits: u32,
    /// Bits taken by the exact fields.
    exact_bits: u32,
    /// Root stride `s0`.
    root_bits: u32,
    root: Box<[u32]>,
    /// Length of the root route each root slot resolves to ([`NO_ROUTE`]:
    /// none), so a root insert compares instead of searching.
    /// (Allocated with the first root route: tables of long routes only,
    /// such as IPv6 ones, never need it.)
    root_len: Vec<u8>,
    /// Routes of at most `s0` bits: `len << 24 | bits` → id + 1.
    root_prefixes: FxHashMap<u32, u32>,
    /// Number of root routes of each length `0..=s0`.
    root_lengths: [u32; LARGE_ROOT_BITS as usize + 1],
    nodes: Segments<Node>,
    /// Parallel to `nodes.data`.
    meta: Vec<Meta>,
    leaves: Segments<u32>,
    ids: Segments<u32>,
    /// Tails: runs of [`TailEntry`], routes longest first, then the
    /// fallback (the value the position shows without the tail).
    tails: Segments<TailEntry>,
    /// Routes a tail holds: [`TAIL_ROUTES`] or [`NARROW_TAIL_ROUTES`].
    tail_routes: usize,
    live_nodes: usize,
}

impl LpmEngine {
    /// An empty trie for a key whose field `lpm_index` is the LPM field and
    /// the others are exact. `widths` are the key's field widths in key
    /// order; `capacity` is the table's declared size.
    pub(crate) fn new(widths: &[u32], lpm_index: usize, capacity: u32) -> Self {
        let mut order: Vec<usize> = (0..widths.len()).filter(|&i| i != lpm_index).collect();
        order.push(lpm_index);
        let ordered: Box<[u32]> = order.iter().map(|&i| widths[i]).collect();
        let total_bits: u32 = ordered.iter().sum();
        // The wide root is for IPv4 /24s; wider keys put their sparse
        // routes into tails below a 16-bit root, which costs less: 100k
        // IPv6 routes took 59.5 B a route and 28 ns a lookup, against
        // 66.5-67 B and 23-26 ns with 18 bits.
        let root_bits = total_bits.min(if capacity >= LARGE_TABLE && total_bits <= 64 {
            LARGE_ROOT_BITS
        } else {
            ROOT_BITS
        });
        LpmEngine {
            exact_bits: total_bits - widths[lpm_index],
            order: order.into(),
            widths: ordered,
            total_bits,
            root_bits,
            root: vec![0; 1 << root_bits].into_boxed_slice(),
            root_len: Vec::new(),
            root_prefixes: FxHashMap::default(),
            root_lengths: [0; LARGE_ROOT_BITS as usize + 1],
            nodes: Segments::new(1 << STRIDE),
            meta: Vec::new(),
            leaves: Segments::new(1 << STRIDE),
            ids: Segments::new(126),
            tails: Segments::new(TAIL_ROUTES + 1),
            tail_routes: if total_bits > 64 {
                TAIL_ROUTES
            } else {
                NARROW_TAIL_ROUTES
            },
            live_nodes: 0,
        }
    }

    /// Stride of the node whose bits start at `pos`.
    fn stride(&self, pos: u32) -> u32 {
        STRIDE.min(self.total_bits - pos)
    }

    /// For keys of at most 128 bits: the concatenation, left-aligned.
    #[inline]
    fn aligned(&self, values: impl Fn(usize) -> u128) -> u128 {
        let mut acc = 0u128;
        for (&i, &w) in self.order.iter().zip(self.widths.iter()) {
            acc = if w >= 128 {
                values(i)
            } else {
                (acc << w) | (values(i) & crate::bits::mask(w))
            };
        }
        acc << (128 - self.total_bits)
    }

    /// [`Self::aligned`] for keys of at most 64 bits.
    #[inline]
    fn aligned64(&self, key: &[u128]) -> u64 {
        let mut acc = 0u64;
        for (&i, &w) in self.order.iter().zip(self.widths.iter()) {
            let v = key[i] as u64;
            acc = if w >= 64 {
                v
            } else {
                (acc << w) | (v & ((1u64 << w) - 1))
            };
        }
        acc << (64 - self.total_bits)
    }

    /// Concatenates the key values into bytes (zero-padded).
    fn pack(&self, values: impl Fn(usize) -> u128, buf: &mut [u8; KEY_BYTES]) {
        if self.total_bits <= 128 {
            buf[..16].copy_from_slice(&self.aligned(values).to_be_bytes());
        } else {
            let mut pos = 0usize;
            for (&i, &w) in self.order.iter().zip(self.widths.iter()) {
                put_bits(buf, pos, values(i), w);
                pos += w as usize;
            }
        }
    }

    /// The walk below the root, given a chunk reader and a reader of the
    /// 64 key bits from a position (for tails).
    #[inline(always)]
    fn walk(
        &self,
        slot: u32,
        chunk: impl Fn(u32, u32) -> u32,
        bits: impl Fn(u32) -> u64,
    ) -> Option<u32> {
        if slot & CHILD == 0 {
            if slot & TAIL != 0 {
                return self.tail_lookup(slot & !TAIL, bits(self.root_bits));
            }
            return slot.checked_sub(1);
        }
        let mut n = (slot & !CHILD) as usize;
        let mut pos = self.root_bits;
        let nodes = &self.nodes.data;
        loop {
            let node = nodes.get(n)?;
            let c = chunk(pos, STRIDE.min(self.total_bits - pos));
            if node.vector & (1 << c) != 0 {
                n = node.base1 as usize + rank_incl(node.vector, c) as usize - 1;
                pos += STRIDE;
            } else {
                let leaf = node.base0 as usize + rank_incl(node.leafvec, c) as usize - 1;
                let v = *self.leaves.data.get(leaf)?;
                if v & TAIL != 0 {
                    return self.tail_lookup(v & !TAIL, bits(pos + STRIDE));
                }
                return v.checked_sub(1);
            }
        }
    }

    /// The first route of tail `t` (longest first) covering the key bits
    /// `x` past its position, else its fallback.
    #[inline(always)]
    fn tail_lookup(&self, t: u32, x: u64) -> Option<u32> {
        let mut i = t as usize;
        loop {
            let e = self.tails.data.get(i)?;
            if tail_matches(x, e.key()) {
                return e.val.checked_sub(1);
            }
            i += 1;
        }
    }

    /// Longest matching entry for `key` (one value per key field, key order).
    #[inline]
    pub(crate) fn lookup(&self, key: &[u128]) -> Option<u32> {
        if self.total_bits <= 64 {
            // IPv4, port ++ IPv4: one 64-bit register, whose shifts are
            // single instructions (a u128 shift by a variable is several).
            return self.walk64(self.aligned64(key));
        }
        if self.total_bits <= 128 {
            // IPv6 and other keys of one register; take each level's
            // index by shifting, no buffer.
            return self.walk128(self.aligned(|i| key[i]));
        }
        let mut buf = [0u8; KEY_BYTES];
        self.pack(|i| key[i], &mut buf);
        let slot = self.root[chunk(&buf, 0, self.root_bits) as usize];
        self.walk(slot, |pos, n| chunk(&buf, pos, n), |pos| bits64(&buf, pos))
    }

    /// [`Self::lookup`] for a key of at most 128 bits packed into one
    /// integer in key order (see `Table::lookup_packed`). When the LPM
    /// field is the last key field (the usual `dst_addr` key), key order is
    /// trie order and the packed value only needs aligning. A key of more
    /// than 128 bits cannot be packed: it misses.
    #[inline(always)]
    pub(crate) fn lookup_packed(&self, packed: u128) -> Option<u32> {
        if self.total_bits > 128 {
            return None;
        }
        let lpm_last = self.order.last() == Some(&(self.order.len() - 1));
        let trie = if lpm_last {
            packed
        } else {
            self.trie_order(packed)
        };
        if self.total_bits <= 64 {
            return self.walk64((trie as u64) << (64 - self.total_bits));
        }
        self.walk128(trie << (128 - self.total_bits))
    }

    /// The walk for a key of at most 64 bits in trie order, aligned to the
    /// top of `a`: each level's index by shifting one register (a u64
    /// shift by a variable is one instruction, a u128 one several).
    #[inline(always)]
    fn walk64(&self, a: u64) -> Option<u32> {
        let slot = self.root[(a >> (64 - self.root_bits)) as usize];
        self.walk(
            slot,
            |pos, n| ((a << pos) >> (64 - n)) as u32,
            |pos| a << pos,
        )
    }

    /// The walk for a key of 65 to 128 bits in trie order, aligned to the
    /// top of `a`, no buffer.
    #[inline(always)]
    fn walk128(&self, a: u128) -> Option<u32> {
        let slot = self.root[(a >> (128 - self.root_bits)) as usize];
        self.walk(
            slot,
            |pos, n| ((a << pos) >> (128 - n)) as u32,
            |pos| ((a << pos) >> 64) as u64,
        )
    }

    /// A packed key (key order, at most 128 bits) in trie order: the LPM
    /// field's bits moved from their place to the end.
    #[cold]
    #[inline(never)]
    fn trie_order(&self, packed: u128) -> u128 {
        let n = self.order.len();
        let lpm = self.order[n - 1];
        let lpm_bits = self.widths[n - 1];
        // Bits of the key fields after the LPM field.
        let low: u32 = (0..n - 1)
            .filter(|&j| self.order[j] > lpm)
            .map(|j| self.widths[j])
            .sum();
        let shr = |v: u128, s: u32| if s >= 128 { 0 } else { v >> s };
        let shl = |v: u128, s: u32| if s >= 128 { 0 } else { v << s };
        let value = shr(packed, low) & crate::bits::mask(lpm_bits);
        let before = shr(packed, low + lpm_bits);
        let after = packed & crate::bits::mask(low);
        shl(shl(before, low) | after, lpm_bits) | value
    }

    /// Prefix bits and length of an entry's match list (key order).
    fn prefix_of(&self, matches: &[Option<FieldMatch>]) -> ([u8; KEY_BYTES], u32) {
        let mut buf = [0u8; KEY_BYTES];
        let lpm_index = *self.order.last().unwrap_or(&0);
        self.pack(
            |i| match matches.get(i).copied().flatten() {
                Some(FieldMatch::Exact(v)) => v,
                Some(FieldMatch::Lpm { value, .. }) => value,
                _ => 0,
            },
            &mut buf,
        );
        let lpm_len = match matches.get(lpm_index) {
            Some(Some(FieldMatch::Lpm { prefix_len, .. })) => *prefix_len,
            _ => 0,
        };
        (buf, self.exact_bits + lpm_len)
    }

    // ----- root --------------------------------------------------------

    fn root_key(len: u32, bits: u32) -> u32 {
        (len << 24) | bits
    }

    /// Best root route covering root slot `s`: (id + 1, length), or
    /// (0, [`NO_ROUTE`]).
    fn root_best(&self, s: u32) -> (u32, u8) {
        for len in (0..=self.root_bits).rev() {
            if self.root_lengths[len as usize] == 0 {
                continue;
            }
            let key = Self::root_key(len, s >> (self.root_bits - len));
            if let Some(&v) = self.root_prefixes.get(&key) {
                return (v, len as u8);
            }
        }
        (0, NO_ROUTE)
    }

    /// Sets what root slot `s` resolves to without a child: into the slot,
    /// or pushed into its child.
    fn set_root_value(&mut self, s: u32, v: u32) {
        let cur = self.root[s as usize];
        if cur & CHILD != 0 {
            self.push_down(cur & !CHILD, v, self.root_bits);
        } else if cur & TAIL != 0 {
            self.set_tail_fallback(cur & !TAIL, v);
        } else {
            self.root[s as usize] = v;
        }
    }

    fn root_insert(&mut self, bits: u32, len: u32, val: u32) {
        self.root_prefixes.insert(Self::root_key(len, bits), val);
        self.root_lengths[len as usize] += 1;
        if self.root_len.is_empty() {
            self.root_len = vec![NO_ROUTE; self.root.len()];
        }
        let span = 1u32 << (self.root_bits - len);
        for s in bits * span..(bits + 1) * span {
            // Longer routes keep their slots.
            let cur = self.root_len[s as usize];
            if cur == NO_ROUTE || u32::from(cur) < len {
                self.root_len[s as usize] = len as u8;
                self.set_root_value(s, val);
            }
        }
    }

    fn root_remove(&mut self, bits: u32, len: u32, val: u32) {
        let key = Self::root_key(len, bits);
        if self.root_prefixes.get(&key) != Some(&val) {
            return;
        }
        self.root_prefixes.remove(&key);
        self.root_lengths[len as usize] -= 1;
        let span = 1u32 << (self.root_bits - len);
        for s in bits * span..(bits + 1) * span {
            // Only the slots the route won fall back to a shorter one.
            if u32::from(self.root_len[s as usize]) != len {
                continue;
            }
            let (v, l) = self.root_best(s);
            self.root_len[s as usize] = l;
            self.set_root_value(s, v);
        }
    }

    // ----- nodes -------------------------------------------------------

    /// A new node segment of one leaf-only node inheriting `inherited`.
    fn new_node(&mut self, inherited: u32) -> (Node, Meta) {
        let base0 = self.leaves.alloc(1);
        self.leaves.data[base0 as usize] = inherited;
        self.live_nodes += 1;
        (
            Node {
                vector: 0,
                leafvec: 1,
                base0,
                base1: 0,
            },
            Meta {
                inherited,
                ..Meta::default()
            },
        )
    }

    fn sync_meta_len(&mut self) {
        if self.meta.len() < self.nodes.data.len() {
            grow(&mut self.meta, self.nodes.data.len(), Meta::default());
        }
    }

    /// Releases the leaf segment of node `n` (the node itself is its
    /// parent's to release).
    fn drop_node(&mut self, n: usize) {
        let node = self.nodes.data[n];
        self.leaves
            .release(node.base0, node.leafvec.count_ones() as usize);
        self.ids
            .release(self.meta[n].ids, self.meta[n].count() as usize);
        self.live_nodes -= 1;
    }

    /// Gives node `n` (bits from `pos`) a new inherited value: the
    /// positions that showed the old one (no prefix of the node covers
    /// them) show the new one.
    fn push_down(&mut self, n: u32, v: u32, pos: u32) {
        let old = self.meta[n as usize].inherited;
        if old == v {
            return;
        }
        self.meta[n as usize].inherited = v;
        let width = 1u32 << self.stride(pos);
        self.repaint(n as usize, pos, 0..width, old, v);
    }

    /// Node `n`'s value at every non-child position, read back from its
    /// leaves (child positions hold the run before them: never used).
    fn values(&self, n: usize, width: usize) -> [u32; 64] {
        let node = self.nodes.data[n];
        let mut vals = [0u32; 64];
        let mut k = node.base0 as usize;
        let mut cur = self.leaves.data.get(k).copied().unwrap_or(0);
        for (c, v) in vals.iter_mut().enumerate().take(width) {
            if node.leafvec & (1 << c) != 0 {
                cur = self.leaves.data[k];
                k += 1;
            }
            *v = cur;
        }
        vals
    }

    /// Writes `vals` (one value per position) as node `n`'s leaves: one
    /// leaf per run of equal values among the positions without a child.
    fn store(&mut self, n: usize, width: usize, vals: &[u32; 64]) {
        let node = self.nodes.data[n];
        let mut leafvec = 0u64;
        let mut leaves = [0u32; 64];
        let mut count = 0usize;
        let mut prev = None;
        for (c, &v) in vals.iter().enumerate().take(width) {
            if node.vector & (1 << c) == 0 && prev != Some(v) {
                leafvec |= 1 << c;
                leaves[count] = v;
                count += 1;
                prev = Some(v);
            }
        }
        let old = node.leafvec.count_ones() as usize;
        let base0 = if old == count {
            node.base0
        } else {
            self.leaves.release(node.base0, old);
            self.leaves.alloc(count)
        };
        self.leaves.data[base0 as usize..base0 as usize + count].copy_from_slice(&leaves[..count]);
        let node = &mut self.nodes.data[n];
        node.leafvec = leafvec;
        node.base0 = base0;
    }

    /// Replaces value `from` by `to` at positions `span` of node `n` (bits
    /// from `pos`): in its leaves, and in the children there that
    /// inherited `from`. An update changes only what the prefix it adds
    /// or removes covers and touches no other child; prefix ids are
    /// distinct from each other and from what a node inherits, so a
    /// position shows `from` exactly when `from` is its longest cover.
    fn repaint(&mut self, n: usize, pos: u32, span: std::ops::Range<u32>, from: u32, to: u32) {
        let width = 1usize << self.stride(pos);
        let mut vals = self.values(n, width);
        let node = self.nodes.data[n];
        for c in span {
            if node.vector & (1 << c) != 0 {
                let child = node.base1 + rank_incl(node.vector, c) - 1;
                if self.meta[child as usize].inherited == from {
                    self.push_down(child, to, pos + STRIDE);
                }
            } else if vals[c as usize] == from {
                vals[c as usize] = to;
            } else if vals[c as usize] & TAIL != 0 {
                let t = vals[c as usize] & !TAIL;
                if self.tail_fallback(t) == from {
                    self.set_tail_fallback(t, to);
                }
            }
        }
        self.store(n, width, &vals);
    }

    /// The value covering the positions of prefix bit `b` in node `n` from
    /// outside it: the longest shorter prefix of the node, or what the node
    /// inherited.
    fn cover_of(&self, n: usize, b: u32) -> u32 {
        let meta = self.meta[n];
        let r = 31 - (b + 2).leading_zeros();
        let q = b + 2 - (1 << r);
        for shorter in (1..r).rev() {
            let b2 = (1 << shorter) - 2 + (q >> (r - shorter));
            if meta.has(b2) {
                return self.ids.data[(meta.ids + meta.rank(b2)) as usize];
            }
        }
        meta.inherited
    }

    /// The positions prefix bit `b` covers in a node of `st` bits.
    fn span_of(b: u32, st: u32) -> std::ops::Range<u32> {
        let r = 31 - (b + 2).leading_zeros();
        let q = b + 2 - (1 << r);
        let span = 1 << (st - r);
        q * span..(q + 1) * span
    }

    /// The value position `c` of node `n` resolves to without a child.
    fn value_at(&self, n: usize, c: u32) -> u32 {
        let node = self.nodes.data[n];
        let leaves = (node.leafvec & (u64::MAX >> (63 - c))).count_ones();
        if leaves == 0 {
            // Only child positions below `c`: no leaf run has started yet,
            // so the position's value is whatever the first run holds.
            return self.leaves.data[node.base0 as usize];
        }
        self.leaves.data[(node.base0 + leaves - 1) as usize]
    }

    /// The child of node `n` at position `c`, created if missing.
    fn child(&mut self, n: usize, c: u32, pos: u32) -> usize {
        let node = self.nodes.data[n];
        let at = rank_incl(node.vector, c) as usize;
        if node.vector & (1 << c) != 0 {
            return node.base1 as usize + at - 1;
        }
        let inherited = self.value_at(n, c);
        let (new_node, new_meta) = self.new_node(inherited);
        let count = node.vector.count_ones() as usize;
        let old_base = node.base1;
        let base1 = self.nodes.insert(old_base, count, at, new_node);
        self.sync_meta_len();
        // Move the control halves with their nodes (disjoint runs).
        for k in 0..count {
            let to = base1 as usize + if k < at { k } else { k + 1 };
            self.meta[to] = self.meta[old_base as usize + k];
        }
        self.meta[base1 as usize + at] = new_meta;
        let width = 1usize << self.stride(pos);
        let vals = self.values(n, width);
        let node = &mut self.nodes.data[n];
        node.vector |= 1 << c;
        node.base1 = base1;
        self.store(n, width, &vals);
        base1 as usize + at
    }

    /// Removes the (empty) child of node `n` at position `c`.
    fn remove_child(&mut self, n: usize, c: u32, pos: u32) {
        let node = self.nodes.data[n];
        let at = rank_incl(node.vector, c) as usize - 1;
        let count = node.vector.count_ones() as usize;
        let old_base = node.base1;
        // The position shows again what the node pushed into the child.
        let width = 1usize << self.stride(pos);
        let mut vals = self.values(n, width);
        vals[c as usize] = self.meta[old_base as usize + at].inherited;
        self.drop_node(old_base as usize + at);
        let base1 = self.nodes.remove(old_base, count, at);
        self.sync_meta_len();
        // The new run may reuse freed space but never overlaps the old one.
        for k in (0..count).filter(|&k| k != at) {
            let to = base1 as usize + if k < at { k } else { k - 1 };
            self.meta[to] = self.meta[old_base as usize + k];
        }
        let node = &mut self.nodes.data[n];
        node.vector &= !(1 << c);
        node.base1 = base1;
        self.store(n, width, &vals);
    }

    // ----- tails -------------------------------------------------------

    /// Index of the last entry (the fallback) of tail `t`.
    fn tail_end(&self, t: u32) -> usize {
        let mut i = t as usize;
        while self.tails.data[i].key() != TAIL_END {
            i += 1;
        }
        i
    }

    fn tail_fallback(&self, t: u32) -> u32 {
        self.tails.data[self.tail_end(t)].val
    }

    fn set_tail_fallback(&mut self, t: u32, v: u32) {
        let i = self.tail_end(t);
        self.tails.data[i].val = v;
    }

    /// A new tail holding one route over `fallback`.
    fn tail_new(&mut self, fallback: u32, key: u64, val: u32) -> u32 {
        let t = self.tails.alloc(2);
        self.tails.data[t as usize] = TailEntry::new(key, val);
        self.tails.data[t as usize + 1] = TailEntry::new(TAIL_END, fallback);
        t
    }

    /// Tail `t` with the route added (its new index), or `None` when it is
    /// full.
    fn tail_add(&mut self, t: u32, key: u64, val: u32) -> Option<u32> {
        let end = self.tail_end(t) - t as usize;
        if end >= self.tail_routes {
            return None;
        }
        let len = TailEntry::new(key, 0).len();
        let run = &self.tails.data[t as usize..t as usize + end];
        let at = run.iter().position(|e| e.len() < len).unwrap_or(end);
        Some(self.tails.insert(t, end + 1, at, TailEntry::new(key, val)))
    }

    /// Removes route `key` with value `val` from tail `t`.
    fn tail_remove(&mut self, t: u32, key: u64, val: u32) -> TailRemoved {
        let end = self.tail_end(t);
        let run = &self.tails.data[t as usize..end];
        let Some(at) = run.iter().position(|e| e.key() == key && e.val == val) else {
            return TailRemoved::Absent;
        };
        let n = end - t as usize;
        if n == 1 {
            let fallback = self.tails.data[end].val;
            self.tails.release(t, 2);
            return TailRemoved::Emptied(fallback);
        }
        TailRemoved::Moved(self.tails.remove(t, n + 1, at))
    }

    /// Frees tail `t`; returns its fallback and its routes.
    fn tail_take(&mut self, t: u32) -> (u32, Vec<TailEntry>) {
        let end = self.tail_end(t);
        let routes = self.tails.data[t as usize..end].to_vec();
        let fallback = self.tails.data[end].val;
        self.tails.release(t, end - t as usize + 1);
        (fallback, routes)
    }

    /// The tail key of a route of `len` bits at position `q`, if a tail can
    /// hold it.
    fn key_at(&self, buf: &[u8; KEY_BYTES], q: u32, len: u32) -> Option<u64> {
        (len - q <= TAIL_BITS).then(|| tail_key(bits64(buf, q), len - q))
    }

    /// The full prefix of tail route `e` at position `q` under `buf`'s
    /// first `q` bits.
    fn route_at(buf: &[u8; KEY_BYTES], q: u32, e: &TailEntry) -> ([u8; KEY_BYTES], u32) {
        let mut out = *buf;
        let i = (q / 8) as usize;
        out[i] &= !(0xffu8 >> (q % 8));
        out[i + 1..].fill(0);
        let l = e.len();
        put_bits(&mut out, q as usize, u128::from(e.key() >> (64 - l)), l);
        (out, q + l)
    }

    /// Points leaf position `c` of node `n` (a tail: a run of its own) at
    /// tail `t`.
    fn set_tail_leaf(&mut self, n: usize, c: u32, t: u32) {
        let node = self.nodes.data[n];
        let leaf = node.base0 + rank_incl(node.leafvec, c) - 1;
        self.leaves.data[leaf as usize] = TAIL | t;
    }

    /// Sets what leaf position `c` of node `n` (bits from `pos`) shows.
    fn set_position(&mut self, n: usize, pos: u32, c: u32, v: u32) {
        let width = 1usize << self.stride(pos);
        let mut vals = self.values(n, width);
        vals[c as usize] = v;
        self.store(n, width, &vals);
    }

    /// Whether node `n` holds a tail.
    fn has_tails(&self, n: usize) -> bool {
        let node = self.nodes.data[n];
        let k = node.base0 as usize;
        self.leaves.data[k..k + node.leafvec.count_ones() as usize]
            .iter()
            .any(|&v| v & TAIL != 0)
    }

    // ----- updates -----------------------------------------------------

    /// Makes a node (inheriting `inherited`) the child of root slot `s`.
    fn new_root_child(&mut self, s: usize, inherited: u32) -> usize {
        let (node, meta) = self.new_node(inherited);
        let n = self.nodes.alloc(1) as usize;
        self.sync_meta_len();
        self.nodes.data[n] = node;
        self.meta[n] = meta;
        self.root[s] = CHILD | n as u32;
        n
    }

    /// Adds a route of `len > s0` bits: into a tail where one is, or can
    /// be, at the position it falls into, else into the node it ends in
    /// (creating the nodes on the way). A full tail becomes a node, and
    /// its routes are added again below it.
    fn insert_deep(&mut self, buf: &[u8; KEY_BYTES], len: u32, val: u32) {
        let s = chunk(buf, 0, self.root_bits) as usize;
        let slot = self.root[s];
        let mut n = if slot & CHILD != 0 {
            (slot & !CHILD) as usize
        } else {
            let q = self.root_bits;
            let key = self.key_at(buf, q, len);
            if slot & TAIL != 0 {
                let t = slot & !TAIL;
                if let Some(t) = key.and_then(|key| self.tail_add(t, key, val)) {
                    self.root[s] = TAIL | t;
                    return;
                }
                let (fallback, routes) = self.tail_take(t);
                self.new_root_child(s, fallback);
                self.reinsert(buf, q, &routes);
                return self.insert_deep(buf, len, val);
            }
            if let Some(key) = key {
                self.root[s] = TAIL | self.tail_new(slot, key, val);
                return;
            }
            self.new_root_child(s, slot)
        };
        let mut pos = self.root_bits;
        loop {
            if len <= pos + self.stride(pos) {
                return self.node_insert(n, pos, buf, len, val);
            }
            let c = chunk(buf, pos, STRIDE);
            if self.nodes.data[n].vector & (1 << c) == 0 {
                let q = pos + STRIDE;
                let key = self.key_at(buf, q, len);
                let v = self.value_at(n, c);
                if v & TAIL != 0 {
                    let t = v & !TAIL;
                    if let Some(t) = key.and_then(|key| self.tail_add(t, key, val)) {
                        return self.set_tail_leaf(n, c, t);
                    }
                    let (fallback, routes) = self.tail_take(t);
                    self.set_position(n, pos, c, fallback);
                    self.child(n, c, pos);
                    self.reinsert(buf, q, &routes);
                    return self.insert_deep(buf, len, val);
                }
                if let Some(key) = key {
                    let t = self.tail_new(v, key, val);
                    return self.set_position(n, pos, c, TAIL | t);
                }
            }
            n = self.child(n, c, pos);
            pos += STRIDE;
        }
    }

    /// Adds again the routes of a tail that was at position `q` of `buf`.
    fn reinsert(&mut self, buf: &[u8; KEY_BYTES], q: u32, routes: &[TailEntry]) {
        for e in routes {
            let (rbuf, rlen) = Self::route_at(buf, q, e);
            self.insert_deep(&rbuf, rlen, e.val);
        }
    }

    /// Adds a route of `len` bits ending in node `n` (bits from `pos`).
    fn node_insert(&mut self, n: usize, pos: u32, buf: &[u8; KEY_BYTES], len: u32, val: u32) {
        let b = self.prefix_bit(buf, len, pos);
        let meta = self.meta[n];
        if meta.has(b) {
            return;
        }
        let at = meta.rank(b) as usize;
        let cover = self.cover_of(n, b);
        let ids = self.ids.insert(meta.ids, meta.count() as usize, at, val);
        let meta = &mut self.meta[n];
        meta.ids = ids;
        meta.flip(b);
        let span = Self::span_of(b, self.stride(pos));
        self.repaint(n, pos, span, cover, val);
    }

    /// Prefix bit of a route of `len` bits ending in the node at `pos`.
    fn prefix_bit(&self, buf: &[u8; KEY_BYTES], len: u32, pos: u32) -> u32 {
        let r = len - pos;
        (1 << r) - 2 + chunk(buf, pos, r)
    }

    /// Adds entry `id` for `matches` (replacing nothing: the entry store
    /// guarantees each prefix is present once).
    pub(crate) fn insert(&mut self, id: u32, matches: &[Option<FieldMatch>]) {
        let (buf, len) = self.prefix_of(matches);
        let val = id + 1;
        if len <= self.root_bits {
            let bits = if len == 0 { 0 } else { chunk(&buf, 0, len) };
            self.root_insert(bits, len, val);
            return;
        }
        self.insert_deep(&buf, len, val);
    }

    /// Removes entry `id` for `matches`.
    pub(crate) fn remove(&mut self, id: u32, matches: &[Option<FieldMatch>]) {
        let (buf, len) = self.prefix_of(matches);
        let val = id + 1;
        if len <= self.root_bits {
            let bits = if len == 0 { 0 } else { chunk(&buf, 0, len) };
            self.root_remove(bits, len, val);
            return;
        }
        let s = chunk(&buf, 0, self.root_bits) as usize;
        let slot = self.root[s];
        if slot & CHILD == 0 {
            if slot & TAIL != 0
                && let Some(key) = self.key_at(&buf, self.root_bits, len)
            {
                match self.tail_remove(slot & !TAIL, key, val) {
                    TailRemoved::Absent => {}
                    TailRemoved::Moved(t) => self.root[s] = TAIL | t,
                    TailRemoved::Emptied(fallback) => self.root[s] = fallback,
                }
            }
            return;
        }
        let mut path = Vec::new();
        let mut n = (slot & !CHILD) as usize;
        let mut pos = self.root_bits;
        loop {
            if len <= pos + self.stride(pos) {
                if !self.node_remove(n, pos, &buf, len, val) {
                    return;
                }
                break;
            }
            let c = chunk(&buf, pos, STRIDE);
            let node = self.nodes.data[n];
            if node.vector & (1 << c) != 0 {
                path.push((n, c, pos));
                n = node.base1 as usize + rank_incl(node.vector, c) as usize - 1;
                pos += STRIDE;
                continue;
            }
            let v = self.value_at(n, c);
            let Some(key) = self.key_at(&buf, pos + STRIDE, len) else {
                return;
            };
            if v & TAIL == 0 {
                return;
            }
            match self.tail_remove(v & !TAIL, key, val) {
                TailRemoved::Absent => return,
                TailRemoved::Moved(t) => self.set_tail_leaf(n, c, t),
                TailRemoved::Emptied(fallback) => self.set_position(n, pos, c, fallback),
            }
            break;
        }
        // Bottom-up: free nodes left without prefixes, children and tails,
        // and fold those with few routes left back into a tail.
        loop {
            let empty =
                self.meta[n].count() == 0 && self.nodes.data[n].vector == 0 && !self.has_tails(n);
            let folded = if empty { None } else { self.fold(n) };
            if !empty && folded.is_none() {
                return;
            }
            let inherited = self.meta[n].inherited;
            let tail = folded.map(|routes| TAIL | self.tail_of(&routes, inherited));
            match path.pop() {
                Some((parent, c, ppos)) => {
                    self.remove_child(parent, c, ppos);
                    if let Some(tail) = tail {
                        self.set_position(parent, ppos, c, tail);
                    }
                    n = parent;
                }
                None => {
                    self.drop_node(n);
                    self.nodes.release(n as u32, 1);
                    self.root[s] = tail.unwrap_or_else(|| self.root_best(s as u32).0);
                    return;
                }
            }
        }
    }

    /// If node `n` has no child and at most half a tail of routes, each at
    /// most [`TAIL_BITS`] past the node's first bit: its routes as tail
    /// entries relative to that bit, longest first, with its tails freed
    /// (the node itself is the caller's to free). Else `None`, changing
    /// nothing.
    fn fold(&mut self, n: usize) -> Option<Vec<TailEntry>> {
        let node = self.nodes.data[n];
        if node.vector != 0 {
            return None;
        }
        let meta = self.meta[n];
        let k = node.base0 as usize;
        let tails: Vec<(u32, u32)> = (0..64u32)
            .filter(|&c| node.leafvec & (1 << c) != 0)
            .zip(&self.leaves.data[k..k + node.leafvec.count_ones() as usize])
            .filter(|&(_, &v)| v & TAIL != 0)
            .map(|(c, &v)| (c, v & !TAIL))
            .collect();
        let mut count = meta.count() as usize;
        for &(_, t) in &tails {
            let run = &self.tails.data[t as usize..self.tail_end(t)];
            if run.iter().any(|e| STRIDE + e.len() > TAIL_BITS) {
                return None;
            }
            count += run.len();
        }
        if count > self.tail_routes / 2 {
            return None;
        }
        let mut routes = Vec::with_capacity(count);
        for b in 0..126u32 {
            if meta.has(b) {
                let r = 31 - (b + 2).leading_zeros();
                let q = u64::from(b + 2 - (1 << r));
                let val = self.ids.data[(meta.ids + meta.rank(b)) as usize];
                routes.push(TailEntry::new(tail_key(q << (64 - r), r), val));
            }
        }
        for (c, t) in tails {
            let (_, entries) = self.tail_take(t);
            let above = u64::from(c) << (64 - STRIDE);
            routes.extend(
                entries
                    .iter()
                    .map(|e| TailEntry::new(above | e.key() >> STRIDE, e.val)),
            );
        }
        routes.sort_by_key(|e| std::cmp::Reverse(e.len()));
        Some(routes)
    }

    /// A new tail of `routes` (longest first) over `fallback`.
    fn tail_of(&mut self, routes: &[TailEntry], fallback: u32) -> u32 {
        let t = self.tails.alloc(routes.len() + 1) as usize;
        self.tails.data[t..t + routes.len()].copy_from_slice(routes);
        self.tails.data[t + routes.len()] = TailEntry::new(TAIL_END, fallback);
        t as u32
    }

    /// Removes a route of `len` bits ending in node `n` (bits from `pos`);
    /// false if it is not there.
    fn node_remove(
        &mut self,
        n: usize,
        pos: u32,
        buf: &[u8; KEY_BYTES],
        len: u32,
        val: u32,
    ) -> bool {
        let b = self.prefix_bit(buf, len, pos);
        let meta = self.meta[n];
        if !meta.has(b) || self.ids.data[(meta.ids + meta.rank(b)) as usize] != val {
            return false;
        }
        let ids = self
            .ids
            .remove(meta.ids, meta.count() as usize, meta.rank(b) as usize);
        let meta = &mut self.meta[n];
        meta.ids = ids;
        meta.flip(b);
        let cover = self.cover_of(n, b);
        let span = Self::span_of(b, self.stride(pos));
        self.repaint(n, pos, span, val, cover);
        true
    }

    /// The entry with exactly these matches, if present.
    pub(crate) fn find(&self, matches: &[Option<FieldMatch>]) -> Option<u32> {
        let (buf, len) = self.prefix_of(matches);
        if len <= self.root_bits {
            let bits = if len == 0 { 0 } else { chunk(&buf, 0, len) };
            return self
                .root_prefixes
                .get(&Self::root_key(len, bits))
                .map(|v| v - 1);
        }
        let slot = self.root[chunk(&buf, 0, self.root_bits) as usize];
        let (mut n, mut pos) = if slot & CHILD != 0 {
            ((slot & !CHILD) as usize, self.root_bits)
        } else if slot & TAIL != 0 {
            return self.tail_find(slot & !TAIL, self.key_at(&buf, self.root_bits, len)?);
        } else {
            return None;
        };
        loop {
            if len <= pos + self.stride(pos) {
                let b = self.prefix_bit(&buf, len, pos);
                let meta = self.meta[n];
                return meta
                    .has(b)
                    .then(|| self.ids.data[(meta.ids + meta.rank(b)) as usize] - 1);
            }
            let c = chunk(&buf, pos, STRIDE);
            let node = self.nodes.data[n];
            if node.vector & (1 << c) != 0 {
                n = node.base1 as usize + rank_incl(node.vector, c) as usize - 1;
                pos += STRIDE;
                continue;
            }
            let v = self.value_at(n, c);
            if v & TAIL == 0 {
                return None;
            }
            return self.tail_find(v & !TAIL, self.key_at(&buf, pos + STRIDE, len)?);
        }
    }

    /// The entry of tail `t` whose route is `key`.
    fn tail_find(&self, t: u32, key: u64) -> Option<u32> {
        self.tails.data[t as usize..self.tail_end(t)]
            .iter()
            .find(|e| e.key() == key)
            .map(|e| e.val - 1)
    }

    /// Heap bytes held (capacity, free lists included).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.root.len() * 4
            + self.root_len.capacity()
            + self.root_prefixes.capacity() * 9
            + self.nodes.bytes()
            + self.meta.capacity() * std::mem::size_of::<Meta>()
            + self.leaves.bytes()
            + self.ids.bytes()
            + self.tails.bytes()
    }

    /// Bytes by part: (root, nodes, meta, leaves, ids, tails) and live
    /// node count.
    #[cfg(test)]
    pub(crate) fn breakdown(&self) -> ([usize; 6], usize) {
        (
            [
                self.root.len() * 4 + self.root_len.capacity(),
                self.nodes.bytes(),
                self.meta.capacity() * std::mem::size_of::<Meta>(),
                self.leaves.bytes(),
                self.ids.bytes(),
                self.tails.bytes(),
            ],
            self.live_nodes,
        )
    }

    /// Number of live trie nodes below the root.
    #[cfg(test)]
    pub(crate) fn node_count(&self) -> usize {
        self.live_nodes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lpm(value: u128, prefix_len: u32) -> Option<FieldMatch> {
        if prefix_len == 0 {
            None
        } else {
            Some(FieldMatch::Lpm { value, prefix_len })
        }
    }

    #[test]
    fn longest_prefix_wins_and_delete_restores_the_covering_one() {
        let mut t = LpmEngine::new(&[32], 0, 1024);
        t.insert(0, &[lpm(0x0a00_0000, 8)]);
        t.insert(1, &[lpm(0x0a01_0000, 16)]);
        t.insert(2, &[lpm(0x0a01_0100, 24)]);
        t.insert(3, &[lpm(0, 0)]);
        t.insert(4, &[lpm(0x0a01_0105, 32)]);
        assert_eq!(t.lookup(&[0x0a01_0105]), Some(4));
        assert_eq!(t.lookup(&[0x0a01_0106]), Some(2));
        assert_eq!(t.lookup(&[0x0a01_0206]), Some(1));
        assert_eq!(t.lookup(&[0x0a02_0206]), Some(0));
        assert_eq!(t.lookup(&[0x0b02_0206]), Some(3));
        assert_eq!(t.find(&[lpm(0x0a01_0100, 24)]), Some(2));
        assert_eq!(t.find(&[lpm(0x0a01_0100, 25)]), None);
        t.remove(2, &[lpm(0x0a01_0100, 24)]);
        assert_eq!(t.lookup(&[0x0a01_0106]), Some(1));
        assert_eq!(t.lookup(&[0x0a01_0105]), Some(4));
        t.remove(1, &[lpm(0x0a01_0000, 16)]);
        assert_eq!(t.lookup(&[0x0a01_0106]), Some(0));
        t.remove(3, &[lpm(0, 0)]);
        assert_eq!(t.lookup(&[0x0b02_0206]), None);
        t.remove(4, &[lpm(0x0a01_0105, 32)]);
        t.remove(0, &[lpm(0x0a00_0000, 8)]);
        assert_eq!(t.lookup(&[0x0a01_0105]), None);
        assert_eq!(t.node_count(), 0, "empty nodes are freed");
    }

    #[test]
    fn odd_widths_and_exact_fields_first() {
        // key: lpm field of 12 bits at index 0, exact 9-bit port at index 1.
        let mut t = LpmEngine::new(&[12, 9], 0, 1024);
        let e = |p| Some(FieldMatch::Exact(p));
        t.insert(0, &[lpm(0xa00, 4), e(5)]);
        t.insert(1, &[lpm(0xab0, 8), e(5)]);
        t.insert(2, &[lpm(0xabc, 12), e(6)]);
        t.insert(3, &[None, e(6)]);
        assert_eq!(t.lookup(&[0xabc, 5]), Some(1));
        assert_eq!(t.lookup(&[0xa1c, 5]), Some(0));
        assert_eq!(t.lookup(&[0xb1c, 5]), None);
        assert_eq!(t.lookup(&[0xabc, 6]), Some(2));
        assert_eq!(t.lookup(&[0xabd, 6]), Some(3));
        assert_eq!(t.lookup(&[0xabc, 7]), None);
    }

    #[test]
    fn wide_keys_use_the_byte_packer() {
        // 128-bit exact + 128-bit lpm = 256 bits.
        let mut t = LpmEngine::new(&[128, 128], 1, 1024);
        let a = u128::MAX - 5;
        t.insert(0, &[Some(FieldMatch::Exact(a)), lpm(0xfe80u128 << 112, 10)]);
        t.insert(1, &[Some(FieldMatch::Exact(a)), lpm(0, 0)]);
        t.insert(2, &[Some(FieldMatch::Exact(a)), lpm(u128::MAX, 128)]);
        assert_eq!(t.lookup(&[a, (0xfe80u128 << 112) | 1]), Some(0));
        assert_eq!(t.lookup(&[a, 1]), Some(1));
        assert_eq!(t.lookup(&[a, u128::MAX]), Some(2));
        assert_eq!(t.lookup(&[a - 1, 1]), None);
        assert_eq!(t.find(&[Some(FieldMatch::Exact(a)), lpm(0, 0)]), Some(1));
    }

    #[test]
    fn ten_thousand_routes_then_none_frees_every_node() {
        let mut rng = crate::externs::Rng::new(11);
        let mut t = LpmEngine::new(&[32], 0, 1024);
        let mut routes = std::collections::BTreeMap::new();
        while routes.len() < 10_000 {
            let len = 8 + (rng.next_u64() % 25) as u32;
            let v = (rng.next_u64() as u128 & mask32()) & (mask32() ^ (mask32() >> len));
            let next_id = routes.len() as u32;
            routes.entry((v, len)).or_insert(next_id);
        }
        for (&(v, len), &id) in &routes {
            t.insert(id, &[lpm(v, len)]);
        }
        let nodes = t.node_count();
        // Each route adds at most 3 nodes below the root.
        assert!(nodes <= 3 * routes.len(), "{nodes} nodes");
        // A route's own network address matches it or a longer route.
        let len_of: std::collections::BTreeMap<u32, u32> =
            routes.iter().map(|(k, &i)| (i, k.1)).collect();
        for (&(v, len), &id) in &routes {
            let hit = t.lookup(&[v]).expect("covered");
            assert!(len_of[&hit] >= len);
            assert_eq!(t.find(&[lpm(v, len)]), Some(id));
        }
        for (&(v, len), &id) in &routes {
            t.remove(id, &[lpm(v, len)]);
        }
        assert_eq!(t.node_count(), 0);
        assert_eq!(t.lookup(&[0x0a00_0001]), None);
    }

    /// Where the bytes of the bench's million BGP-shaped routes go (run with
    /// `--ignored --nocapture`).
    #[test]
    #[ignore = "a measurement, not a check: prints where a million routes' bytes go"]
    fn memory_breakdown_of_a_million_routes() {
        let mut rng = crate::externs::Rng::new(5);
        let mut t = LpmEngine::new(&[32], 0, 1 << 20);
        let routes = crate::table::route_sets::bgp_ipv4(1_000_000, &mut rng);
        for (i, &(v, len)) in routes.iter().enumerate() {
            t.insert(i as u32, &[lpm(v, len)]);
        }
        let (parts, nodes) = t.breakdown();
        println!(
            "root, nodes, meta, leaves, ids, tails: {parts:?}; {nodes} nodes; total {} B a route",
            t.memory_bytes() / 1_000_000
        );
    }

    /// Checks `t` against a linear reference over `routes` (value, length,
    /// id) at `keys` and at every route's first and last address.
    fn check_against(t: &LpmEngine, routes: &[(u128, u32, u32)], keys: &[u128]) {
        let covers = |v: u128, len: u32, k: u128| len == 0 || (k ^ v) >> (128 - len) == 0;
        let extra = routes
            .iter()
            .flat_map(|&(v, len, _)| [v, v | u128::MAX.checked_shr(len).unwrap_or(0)]);
        for k in keys.iter().copied().chain(extra) {
            let want = routes
                .iter()
                .filter(|&&(v, len, _)| covers(v, len, k))
                .max_by_key(|r| r.1)
                .map(|r| r.2);
            assert_eq!(t.lookup(&[k]), want, "key {k:032x}");
        }
        for &(v, len, id) in routes {
            assert_eq!(t.find(&[lpm(v, len)]), Some(id), "route {v:032x}/{len}");
        }
    }

    /// Tail entries in use (not in a free run).
    fn live_tail_entries(t: &LpmEngine) -> usize {
        let free: usize = t
            .tails
            .free
            .iter()
            .enumerate()
            .map(|(n, f)| n * f.len())
            .sum();
        t.tails.data.len() - free
    }

    #[test]
    fn a_full_tail_becomes_a_node_and_deletes_empty_it_again() {
        let mut t = LpmEngine::new(&[128], 0, 1 << 20);
        let block = 0x2001_0db8u128 << 96;
        let mut routes = Vec::new();
        // One route alone under the root slot: a tail, no node.
        routes.push((block | (0xabcd << 64), 48, 0));
        t.insert(0, &[lpm(routes[0].0, 48)]);
        assert_eq!(t.node_count(), 0);
        assert_eq!(live_tail_entries(&t), 2);
        // Fill past a tail's size: /48s spread and nested under the /32,
        // a /32 itself and a /33 (ending in the first node).
        let mut rng = crate::externs::Rng::new(3);
        for id in 1..60u32 {
            let len = [48, 56, 64, 40, 47][(id % 5) as usize];
            let v = (block | (rng.next_u64() as u128 >> 32) << 64) & !(u128::MAX >> len);
            if routes.iter().all(|r| (r.0, r.1) != (v, len)) {
                routes.push((v, len, id));
                t.insert(id, &[lpm(v, len)]);
            }
        }
        for (v, len, id) in [(block, 32, 100), (block, 33, 101)] {
            routes.push((v, len, id));
            t.insert(id, &[lpm(v, len)]);
        }
        assert!(t.node_count() > 0, "a full tail becomes a node");
        let keys: Vec<u128> = (0..2000)
            .map(|i| {
                let r = ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128;
                let (v, len, _) = routes[i % routes.len()];
                // Inside a route, or near it: flip one bit past bit 16.
                let k = v | (r & (u128::MAX >> len));
                if i % 3 == 0 {
                    k ^ (1u128 << (111 - (r % 60) as u32))
                } else {
                    k
                }
            })
            .collect();
        check_against(&t, &routes, &keys);
        // Delete in a shuffled order, checking as we go.
        while !routes.is_empty() {
            let i = (rng.next_u64() % routes.len() as u64) as usize;
            let (v, len, id) = routes.swap_remove(i);
            t.remove(id, &[lpm(v, len)]);
            assert_eq!(t.find(&[lpm(v, len)]), None);
            if routes.len() % 7 == 0 {
                check_against(&t, &routes, &keys);
            }
        }
        assert_eq!(t.node_count(), 0, "empty nodes are freed");
        assert_eq!(live_tail_entries(&t), 0, "empty tails are freed");
        assert_eq!(t.lookup(&[block]), None);
    }

    #[test]
    fn a_chain_of_nodes_folds_back_into_a_tail_when_routes_are_deleted() {
        let mut t = LpmEngine::new(&[128], 0, 1024);
        // 25 /48s under one /40: one more than a tail holds, so the root
        // tail turns into a chain of nodes down to bit 40.
        let block = 0x2001_0db8_ab00u128 << 80;
        let mut routes: Vec<(u128, u32, u32)> = (0..25u32)
            .map(|i| (block | u128::from(i * 7 % 256) << 80, 48, i))
            .collect();
        for &(v, len, id) in &routes {
            t.insert(id, &[lpm(v, len)]);
        }
        assert_eq!(t.node_count(), 5, "nodes at bits 16, 22, 28, 34 and 40");
        let keys: Vec<u128> = routes.iter().map(|r| r.0 ^ 1 << 70).collect();
        check_against(&t, &routes, &keys);
        while routes.len() > TAIL_ROUTES / 2 {
            let (v, len, id) = routes.pop().unwrap();
            t.remove(id, &[lpm(v, len)]);
            check_against(&t, &routes, &keys);
        }
        assert_eq!(t.node_count(), 0, "the chain folded into the root tail");
        assert_eq!(live_tail_entries(&t), routes.len() + 1);
        while let Some((v, len, id)) = routes.pop() {
            t.remove(id, &[lpm(v, len)]);
            check_against(&t, &routes, &keys);
        }
        assert_eq!(live_tail_entries(&t), 0);
    }

    #[test]
    fn routes_too_long_for_a_tail_take_nodes_and_root_routes_reach_tails() {
        let mut t = LpmEngine::new(&[128], 0, 1024);
        let a = 0x2001_0db8_0000_0001_0000_0000_0000_0001u128;
        let mut routes = vec![
            // 16 + 63 bits: the longest a root tail holds; the /128 after it
            // turns that tail into a node.
            (a & !(u128::MAX >> 79), 79, 0),
            (a, 128, 1),
            (a & !(u128::MAX >> 100), 100, 2),
            (a & !(u128::MAX >> 80), 80, 3),
        ];
        for &(v, len, id) in &routes {
            t.insert(id, &[lpm(v, len)]);
        }
        // A tail beside the nodes, and routes of the root over both.
        let b = 0x2001_0db9u128 << 96;
        for (v, len, id) in [
            (b | 1 << 70, 57, 4),
            (0, 0, 5),
            (a & !(u128::MAX >> 8), 8, 6),
        ] {
            routes.push((v, len, id));
            t.insert(id, &[lpm(v, len)]);
        }
        let keys = [
            a,
            a ^ 1,
            a ^ (1 << 30),
            a ^ (1 << 48),
            a ^ (1 << 49),
            b,
            b | 1 << 70,
            !a,
        ];
        check_against(&t, &routes, &keys);
        for k in [5, 6, 0, 1, 4] {
            let i = routes.iter().position(|r| r.2 == k).unwrap();
            let (v, len, id) = routes.remove(i);
            t.remove(id, &[lpm(v, len)]);
            check_against(&t, &routes, &keys);
        }
        for (v, len, id) in routes.drain(..) {
            t.remove(id, &[lpm(v, len)]);
        }
        assert_eq!(t.node_count(), 0);
        assert_eq!(live_tail_entries(&t), 0);
    }

    /// Where 100,000 IPv6 routes' bytes go (run with `--ignored --nocapture`).
    #[test]
    #[ignore = "a measurement, not a check: prints where 100,000 IPv6 routes' bytes go"]
    fn memory_breakdown_of_100k_ipv6_routes() {
        let mut rng = crate::externs::Rng::new(5);
        let routes = crate::table::route_sets::bgp_ipv6(100_000, &mut rng);
        let mut t = LpmEngine::new(&[128], 0, 1 << 21);
        for (i, &(v, len)) in routes.iter().enumerate() {
            t.insert(i as u32, &[lpm(v, len)]);
        }
        let (parts, nodes) = t.breakdown();
        println!(
            "root, nodes, meta, leaves, ids, tails: {parts:?}; {nodes} nodes; total {} B a route",
            t.memory_bytes() / routes.len()
        );
        let free = t.tails.data.len() - live_tail_entries(&t);
        let tails = t
            .root
            .iter()
            .filter(|&&v| v & CHILD == 0 && v & TAIL != 0)
            .count();
        println!(
            "tail entries: {} used of {} allocated ({} free in runs), {tails} root tails",
            t.tails.data.len() - free,
            t.tails.data.capacity(),
            free
        );
    }

    fn mask32() -> u128 {
        0xffff_ffff
    }
}
