//! Longest-prefix-match engine: a multibit trie with a 16-bit root stride
//! and 8-bit strides below, controlled prefix expansion and leaf pushing.
//!
//! The trie runs over the concatenated key: the table's exact fields first,
//! each at full width, in key order, then the LPM field. An entry with an
//! LPM prefix of `p` bits is therefore a prefix of `exact_bits + p` bits of
//! that string, and "longest prefix wins" over the string is exactly "same
//! exact values, longest LPM prefix wins". Concatenated keys are limited to
//! [`MAX_KEY_BITS`]; `Table::new` uses the priority engine beyond that.
//!
//! Structure (Srinivasan & Varghese, "Faster IP lookups using controlled
//! prefix expansion", 1999): the root is an array of `2^s0` slots indexed
//! by the first `s0 = min(16, key_bits)` bits of the key; every other node
//! is an array of 256 slots indexed by the next 8 bits. A prefix ends in
//! the node at the depth where its last bit falls and is expanded over the
//! slots it covers there (a prefix of `r` bits in a node of stride `s`
//! covers `2^(s-r)` slots; length 0 covers the whole root). A slot holds a
//! child node, an entry or nothing. With leaf pushing, a slot that holds a
//! child passes the best prefix covering it down as the child's
//! `inherited` value, so a lookup never backtracks: it reads one slot per
//! level and stops at the first slot that is not a child. The wide root
//! makes IPv4 routes up to /16 one read, up to /24 two, longer three, and
//! keeps the depth of a lookup from growing as a table fills with nested
//! routes.
//!
//! Contract:
//! - Lookup cost is at most `1 + ceil((key_bits - s0) / 8)` slot reads,
//!   independent of the number of entries; no allocation, no panic.
//! - Insert and delete keep the expansion exact: every node remembers the
//!   prefixes that end in it; deleting a prefix recomputes the slots it
//!   covered from the remaining, shorter prefixes of the node, falling back
//!   to the inherited value, and pushes the result down into children.
//!   Empty nodes are freed.
//! - Memory: a 256 KiB root (less for keys under 16 bits) plus 1 KiB per
//!   node and each node's prefix list. A route longer than 16 + 8k bits
//!   that shares no node with others adds up to k + 1 nodes: 10,000 random
//!   /8–/32 IPv4 routes take about 9,800 nodes (10 MB).
//! - Entry ids must be below 2^31.

use std::collections::BTreeMap;

/// Longest concatenated key (exact fields + LPM field) this engine handles.
pub(crate) const MAX_KEY_BITS: u32 = 512;
const MAX_KEY_BYTES: usize = (MAX_KEY_BITS / 8) as usize;
/// Widest root stride.
const ROOT_BITS: u32 = 16;

/// Slot encoding: 0 = nothing, `CHILD | node` = child node, else entry id + 1.
const CHILD: u32 = 1 << 31;

#[derive(Debug)]
struct NodeMeta {
    /// Prefixes ending in this node: (first slot, length within the node)
    /// → entry id + 1. Ordered, so the prefixes inside a slot range are one
    /// range query and the ones covering it are `stride + 1` point queries.
    prefixes: BTreeMap<(u32, u8), u32>,
    /// Best prefix from above, pushed down by the parent slot.
    inherited: u32,
    /// Number of child slots.
    children: u32,
    /// Whether this node is on the free list.
    free: bool,
}

impl NodeMeta {
    fn new(inherited: u32) -> Self {
        NodeMeta {
            prefixes: BTreeMap::new(),
            inherited,
            children: 0,
            free: false,
        }
    }
}

/// Multibit trie over `exact fields ++ lpm field`.
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
    /// Root slots (`2^s0`); node 0 is the root.
    root: Box<[u32]>,
    /// Slot arrays of the other nodes, by node index (index 0 unused).
    slots: Vec<[u32; 256]>,
    nodes: Vec<NodeMeta>,
    free_nodes: Vec<u32>,
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

/// Own-prefix table of a slot range: (entry id + 1, length + 1), or (0, 0).
type Own = Vec<(u32, u8)>;

impl LpmEngine {
    /// An empty trie for a key whose field `lpm_index` is the LPM field and
    /// the others are exact. `widths` are the key's field widths in key order.
    pub(crate) fn new(widths: &[u32], lpm_index: usize) -> Self {
        let mut order: Vec<usize> = (0..widths.len()).filter(|&i| i != lpm_index).collect();
        order.push(lpm_index);
        let ordered: Box<[u32]> = order.iter().map(|&i| widths[i]).collect();
        let total_bits: u32 = ordered.iter().sum();
        let root_bits = total_bits.min(ROOT_BITS);
        LpmEngine {
            exact_bits: total_bits - widths[lpm_index],
            order: order.into(),
            widths: ordered,
            total_bits,
            root_bits,
            root: vec![0; 1 << root_bits].into_boxed_slice(),
            slots: vec![[0; 256]],
            nodes: vec![NodeMeta::new(0)],
            free_nodes: Vec::new(),
        }
    }

    /// Stride of a node.
    fn stride(&self, node: usize) -> u32 {
        if node == 0 { self.root_bits } else { 8 }
    }

    fn slot(&self, node: usize, s: usize) -> u32 {
        if node == 0 {
            self.root[s]
        } else {
            self.slots[node][s]
        }
    }

    fn set_slot(&mut self, node: usize, s: usize, v: u32) {
        if node == 0 {
            self.root[s] = v;
        } else {
            self.slots[node][s] = v;
        }
    }

    /// Concatenates the key values into bytes (the last byte zero-padded).
    #[inline]
    fn pack(&self, values: impl Fn(usize) -> u128, buf: &mut [u8; MAX_KEY_BYTES]) {
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

    /// Number of levels below the root.
    fn depth_below_root(&self) -> usize {
        (self.total_bits - self.root_bits).div_ceil(8) as usize
    }

    /// Slot index at `level` of a packed key (`level` 0 is the root).
    fn index(&self, bytes: &[u8; MAX_KEY_BYTES], level: usize) -> usize {
        if level == 0 {
            let top = ((bytes[0] as usize) << 8) | bytes[1] as usize;
            top >> (16 - self.root_bits)
        } else {
            // Only reached when the root takes exactly 16 bits.
            bytes[1 + level] as usize
        }
    }

    /// Longest matching entry for `key` (one value per key field, key order).
    #[inline]
    pub(crate) fn lookup(&self, key: &[u128]) -> Option<u32> {
        let below = self.depth_below_root();
        if self.total_bits <= 128 {
            // Common case (IPv4, port ++ IPv4, IPv6): the key fits one
            // register; take each level's index by shifting, no buffer.
            let aligned = self.aligned(|i| key[i]);
            let mut s = self.root[(aligned >> (128 - self.root_bits)) as usize];
            let mut shift = 128 - self.root_bits;
            for _ in 0..below {
                if s & CHILD == 0 {
                    break;
                }
                shift -= 8;
                s = self.slots[(s & !CHILD) as usize][((aligned >> shift) & 0xff) as usize];
            }
            return if s & CHILD != 0 {
                None
            } else {
                s.checked_sub(1)
            };
        }
        let mut buf = [0u8; MAX_KEY_BYTES];
        self.pack(|i| key[i], &mut buf);
        let mut s = self.root[self.index(&buf, 0)];
        for level in 1..=below {
            if s & CHILD == 0 {
                break;
            }
            s = self.slots[(s & !CHILD) as usize][self.index(&buf, level)];
        }
        if s & CHILD != 0 {
            None
        } else {
            s.checked_sub(1)
        }
    }

    /// Prefix bytes and length in bits of an entry's match list (key order).
    fn prefix_of(
        &self,
        matches: &[Option<crate::runtime::FieldMatch>],
    ) -> ([u8; MAX_KEY_BYTES], u32) {
        use crate::runtime::FieldMatch;
        let mut buf = [0u8; MAX_KEY_BYTES];
        let lpm_index = *self.order.last().unwrap_or(&0);
        let mut lpm_len = 0;
        self.pack(
            |i| match matches.get(i).copied().flatten() {
                Some(FieldMatch::Exact(v)) => v,
                Some(FieldMatch::Lpm { value, .. }) => value,
                _ => 0,
            },
            &mut buf,
        );
        if let Some(Some(FieldMatch::Lpm { prefix_len, .. })) = matches.get(lpm_index) {
            lpm_len = *prefix_len;
        }
        (buf, self.exact_bits + lpm_len)
    }

    fn alloc_node(&mut self, inherited: u32) -> u32 {
        if let Some(n) = self.free_nodes.pop() {
            self.slots[n as usize] = [inherited; 256];
            self.nodes[n as usize] = NodeMeta::new(inherited);
            n
        } else {
            self.slots.push([inherited; 256]);
            self.nodes.push(NodeMeta::new(inherited));
            (self.slots.len() - 1) as u32
        }
    }

    /// Best own prefix of each slot in `first..first + count` of `node`,
    /// from the node's prefix list (control plane only).
    fn own_range(&self, node: usize, first: usize, count: usize) -> Own {
        let stride = self.stride(node);
        let prefixes = &self.nodes[node].prefixes;
        let mut own = vec![(0u32, 0u8); count];
        let end = first + count;
        let mut apply = |pfirst: usize, rel: u8, val: u32| {
            let pend = pfirst + (1usize << (stride - rel as u32));
            let (lo, hi) = (pfirst.max(first), pend.min(end));
            for o in own
                .iter_mut()
                .take(hi.saturating_sub(first))
                .skip(lo.saturating_sub(first))
            {
                if o.1 < rel + 1 {
                    *o = (val, rel + 1);
                }
            }
        };
        // Prefixes starting before the range that cover it: for each length,
        // the one aligned block containing `first`.
        for rel in 0..=stride as u8 {
            let span = 1usize << (stride - rel as u32);
            let base = first & !(span - 1);
            if base < first
                && let Some(&val) = prefixes.get(&(base as u32, rel))
            {
                apply(base, rel, val);
            }
        }
        // Prefixes starting inside the range.
        for (&(pfirst, rel), &val) in prefixes.range((first as u32, 0)..(end as u32, 0)) {
            apply(pfirst as usize, rel, val);
        }
        own
    }

    /// Re-derives slot `s` of `node` from its own best (`own`: (value, len + 1))
    /// or the inherited value, pushing the result into a child.
    fn refresh_slot(&mut self, node: usize, s: usize, own: (u32, u8)) {
        let val = if own.1 > 0 {
            own.0
        } else {
            self.nodes[node].inherited
        };
        let cur = self.slot(node, s);
        if cur & CHILD != 0 {
            self.push_down((cur & !CHILD) as usize, val);
        } else {
            self.set_slot(node, s, val);
        }
    }

    /// Gives `child` a new inherited value and refreshes the slots that use it.
    fn push_down(&mut self, child: usize, val: u32) {
        if self.nodes[child].inherited == val {
            return;
        }
        self.nodes[child].inherited = val;
        let own = self.own_range(child, 0, 256);
        for (t, &o) in own.iter().enumerate() {
            if o.1 == 0 {
                self.refresh_slot(child, t, o);
            }
        }
    }

    /// Where a prefix of `len` bits ends: (depth, length within that node).
    fn split(&self, len: u32) -> (usize, u8) {
        if len <= self.root_bits {
            (0, len as u8)
        } else {
            let below = len - self.root_bits;
            let depth = 1 + (below - 1) / 8;
            (depth as usize, (below - 8 * (depth - 1)) as u8)
        }
    }

    /// Slots covered by a prefix of `rel` bits at index `idx` of a node of `stride`.
    fn range(idx: usize, rel: u8, stride: u32) -> (usize, usize) {
        let span = 1usize << (stride - rel as u32);
        (idx & !(span - 1), span)
    }

    /// Adds entry `id` for `matches` (replacing nothing: the entry store
    /// guarantees each prefix is present once).
    pub(crate) fn insert(&mut self, id: u32, matches: &[Option<crate::runtime::FieldMatch>]) {
        let (bytes, len) = self.prefix_of(matches);
        let (depth, rel) = self.split(len);
        let mut node = 0usize;
        for level in 0..depth {
            let idx = self.index(&bytes, level);
            let cur = self.slot(node, idx);
            node = if cur & CHILD != 0 {
                (cur & !CHILD) as usize
            } else {
                let child = self.alloc_node(cur);
                self.set_slot(node, idx, CHILD | child);
                self.nodes[node].children += 1;
                child as usize
            };
        }
        let stride = self.stride(node);
        let (first, count) = Self::range(self.index(&bytes, depth), rel, stride);
        let val = id + 1;
        self.nodes[node].prefixes.insert((first as u32, rel), val);
        let own = self.own_range(node, first, count);
        for (k, &o) in own.iter().enumerate() {
            if o.0 == val {
                self.refresh_slot(node, first + k, o);
            }
        }
    }

    /// Removes entry `id` for `matches`.
    pub(crate) fn remove(&mut self, id: u32, matches: &[Option<crate::runtime::FieldMatch>]) {
        let (bytes, len) = self.prefix_of(matches);
        let (depth, rel) = self.split(len);
        let mut path: Vec<(usize, usize)> = Vec::with_capacity(depth);
        let mut node = 0usize;
        for level in 0..depth {
            let idx = self.index(&bytes, level);
            let cur = self.slot(node, idx);
            if cur & CHILD == 0 {
                return;
            }
            path.push((node, idx));
            node = (cur & !CHILD) as usize;
        }
        let stride = self.stride(node);
        let (first, count) = Self::range(self.index(&bytes, depth), rel, stride);
        let meta = &mut self.nodes[node];
        if meta.prefixes.get(&(first as u32, rel)) != Some(&(id + 1)) {
            return;
        }
        meta.prefixes.remove(&(first as u32, rel));
        // Slots the prefix covered fall back to the longest remaining own
        // prefix (necessarily shorter) or the inherited value.
        let own = self.own_range(node, first, count);
        for (k, &o) in own.iter().enumerate() {
            self.refresh_slot(node, first + k, o);
        }
        // Free nodes left without prefixes and children, bottom-up.
        while let Some((parent, idx)) = path.pop() {
            let meta = &self.nodes[node];
            if !meta.prefixes.is_empty() || meta.children > 0 {
                break;
            }
            self.nodes[node].free = true;
            self.free_nodes.push(node as u32);
            self.nodes[parent].children -= 1;
            let own = self.own_range(parent, idx, 1)[0];
            let v = if own.1 > 0 {
                own.0
            } else {
                self.nodes[parent].inherited
            };
            self.set_slot(parent, idx, v);
            node = parent;
        }
    }

    /// Number of live trie nodes (for tests and memory accounting).
    #[cfg(test)]
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.iter().filter(|n| !n.free).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::FieldMatch;

    fn lpm(value: u128, prefix_len: u32) -> Option<FieldMatch> {
        if prefix_len == 0 {
            None
        } else {
            Some(FieldMatch::Lpm { value, prefix_len })
        }
    }

    #[test]
    fn longest_prefix_wins_and_delete_restores_the_covering_one() {
        let mut t = LpmEngine::new(&[32], 0);
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
        assert_eq!(t.node_count(), 1, "empty nodes are freed");
    }

    #[test]
    fn odd_widths_and_exact_fields_first() {
        // key: lpm field of 12 bits at index 0, exact 9-bit port at index 1.
        let mut t = LpmEngine::new(&[12, 9], 0);
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
        let mut t = LpmEngine::new(&[128, 128], 1);
        let a = u128::MAX - 5;
        t.insert(0, &[Some(FieldMatch::Exact(a)), lpm(0xfe80u128 << 112, 10)]);
        t.insert(1, &[Some(FieldMatch::Exact(a)), lpm(0, 0)]);
        assert_eq!(t.lookup(&[a, (0xfe80u128 << 112) | 1]), Some(0));
        assert_eq!(t.lookup(&[a, 1]), Some(1));
        assert_eq!(t.lookup(&[a - 1, 1]), None);
    }

    #[test]
    fn ten_thousand_routes_then_none_frees_every_node() {
        let mut rng = crate::externs::Rng::new(11);
        let mut t = LpmEngine::new(&[32], 0);
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
        assert!(nodes <= 1 + 3 * routes.len(), "{nodes} nodes");
        // A route's own network address matches it or a longer route.
        let len_of: std::collections::BTreeMap<u32, u32> =
            routes.iter().map(|(k, &i)| (i, k.1)).collect();
        for &(v, len) in routes.keys() {
            let hit = t.lookup(&[v]).expect("covered");
            assert!(len_of[&hit] >= len);
        }
        for (&(v, len), &id) in &routes {
            t.remove(id, &[lpm(v, len)]);
        }
        assert_eq!(t.node_count(), 1);
        assert_eq!(t.lookup(&[0x0a00_0001]), None);
    }

    fn mask32() -> u128 {
        0xffff_ffff
    }
}
