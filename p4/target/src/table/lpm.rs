//! Longest-prefix-match engine: a multibit trie with stride 8, controlled
//! prefix expansion and leaf pushing.
//!
//! The trie runs over the concatenated key: the table's exact fields first,
//! each at full width, in key order, then the LPM field. An entry with an
//! LPM prefix of `p` bits is therefore a prefix of `exact_bits + p` bits of
//! that string, and "longest prefix wins" over the string is exactly "same
//! exact values, longest LPM prefix wins". Concatenated keys are limited to
//! [`MAX_KEY_BITS`]; `Table::new` uses the priority engine beyond that.
//!
//! Structure (Srinivasan & Varghese, "Faster IP lookups using controlled
//! prefix expansion", 1999): every node is an array of 256 slots indexed by
//! the next key byte. A prefix of length `8d + r` (`1 <= r <= 8`) lives in
//! the node at depth `d` and is expanded over the `2^(8-r)` slots it covers
//! (length 0 covers the root's 256). A slot holds a child node, an entry or
//! nothing. With leaf pushing, a slot that holds a child passes the best
//! prefix covering it down as the child's `inherited` value, so a lookup
//! never backtracks: it reads one slot per key byte and stops at the first
//! slot that is not a child.
//!
//! Contract:
//! - Lookup cost is at most `ceil(key_bits / 8)` slot reads, independent of
//!   the number of entries; no allocation, no panic.
//! - Insert and delete keep the expansion exact: every node remembers the
//!   prefixes that end in it; deleting a prefix recomputes the slots it
//!   covered from the remaining, shorter prefixes of the node, falling back
//!   to the inherited value, and pushes the result down into children.
//!   Empty nodes are freed. Memory: one 1 KiB slot array per node plus the
//!   node's prefix list; 10,000 random /8–/32 IPv4 routes take about 10,000
//!   nodes.
//! - Entry ids must be below 2^31.

/// Longest concatenated key (exact fields + LPM field) this engine handles.
pub(crate) const MAX_KEY_BITS: u32 = 512;
const MAX_KEY_BYTES: usize = (MAX_KEY_BITS / 8) as usize;

/// Slot encoding: 0 = nothing, `CHILD | node` = child node, else entry id + 1.
const CHILD: u32 = 1 << 31;

#[derive(Debug)]
struct NodeMeta {
    /// Prefixes ending in this node: (first slot, length within the node 0..=8, entry value).
    prefixes: Vec<(u8, u8, u32)>,
    /// Best prefix from above, pushed down by the parent slot.
    inherited: u32,
    /// Number of child slots.
    children: u16,
    /// Whether this node is on the free list.
    free: bool,
}

impl NodeMeta {
    fn new(inherited: u32) -> Self {
        NodeMeta {
            prefixes: Vec::new(),
            inherited,
            children: 0,
            free: false,
        }
    }
}

/// Stride-8 multibit trie over `exact fields ++ lpm field`.
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
    /// Slot arrays, one per node; node 0 is the root.
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

impl LpmEngine {
    /// An empty trie for a key whose field `lpm_index` is the LPM field and
    /// the others are exact. `widths` are the key's field widths in key order.
    pub(crate) fn new(widths: &[u32], lpm_index: usize) -> Self {
        let mut order: Vec<usize> = (0..widths.len()).filter(|&i| i != lpm_index).collect();
        order.push(lpm_index);
        let ordered: Box<[u32]> = order.iter().map(|&i| widths[i]).collect();
        let total_bits = ordered.iter().sum();
        LpmEngine {
            exact_bits: total_bits - widths[lpm_index],
            order: order.into(),
            widths: ordered,
            total_bits,
            slots: vec![[0; 256]],
            nodes: vec![NodeMeta::new(0)],
            free_nodes: Vec::new(),
        }
    }

    /// Concatenates the key values into bytes (the last byte zero-padded).
    #[inline]
    fn pack(&self, values: impl Fn(usize) -> u128, buf: &mut [u8; MAX_KEY_BYTES]) {
        if self.total_bits <= 128 {
            let mut acc = 0u128;
            for (&i, &w) in self.order.iter().zip(self.widths.iter()) {
                acc = if w >= 128 {
                    values(i)
                } else {
                    (acc << w) | (values(i) & crate::bits::mask(w))
                };
            }
            let aligned = acc << (128 - self.total_bits);
            buf[..16].copy_from_slice(&aligned.to_be_bytes());
        } else {
            let mut pos = 0usize;
            for (&i, &w) in self.order.iter().zip(self.widths.iter()) {
                put_bits(buf, pos, values(i), w);
                pos += w as usize;
            }
        }
    }

    /// Longest matching entry for `key` (one value per key field, key order).
    #[inline]
    pub(crate) fn lookup(&self, key: &[u128]) -> Option<u32> {
        let levels = self.total_bits.div_ceil(8) as usize;
        if self.total_bits <= 128 {
            // Common case (IPv4, port ++ IPv4, IPv6): the key fits one
            // register; take each level's byte by shifting, no buffer.
            let mut acc = 0u128;
            for (&i, &w) in self.order.iter().zip(self.widths.iter()) {
                acc = if w >= 128 {
                    key[i]
                } else {
                    (acc << w) | (key[i] & crate::bits::mask(w))
                };
            }
            let aligned = acc << (128 - self.total_bits);
            let mut node = 0usize;
            for level in 0..levels {
                let byte = (aligned >> (120 - 8 * level)) as u8;
                let s = self.slots[node][byte as usize];
                if s & CHILD != 0 {
                    node = (s & !CHILD) as usize;
                } else {
                    return s.checked_sub(1);
                }
            }
            return None;
        }
        let mut buf = [0u8; MAX_KEY_BYTES];
        self.pack(|i| key[i], &mut buf);
        let mut node = 0usize;
        for &byte in &buf[..levels] {
            let s = self.slots[node][byte as usize];
            if s & CHILD != 0 {
                node = (s & !CHILD) as usize;
            } else {
                return s.checked_sub(1);
            }
        }
        None
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

    /// Each slot's best own prefix of `node`: (entry id + 1, its length
    /// within the node + 1), `(0, 0)` where no own prefix covers the slot.
    /// Computed from the node's prefix list (control plane only), which
    /// keeps a node at its 1 KiB slot array plus that short list.
    fn own_table(&self, node: usize) -> [(u32, u8); 256] {
        let mut own = [(0u32, 0u8); 256];
        for &(first, rel, val) in &self.nodes[node].prefixes {
            let first = first as usize;
            for o in &mut own[first..first + (1usize << (8 - rel as u32))] {
                if o.1 < rel + 1 {
                    *o = (val, rel + 1);
                }
            }
        }
        own
    }

    /// The value slot `s` of `node` resolves to, given its own table.
    fn best(&self, node: usize, s: usize, own: &[(u32, u8); 256]) -> u32 {
        if own[s].1 > 0 {
            own[s].0
        } else {
            self.nodes[node].inherited
        }
    }

    /// Re-derives slot `s` of `node`, pushing the value into a child.
    fn refresh_slot(&mut self, node: usize, s: usize, own: &[(u32, u8); 256]) {
        let val = self.best(node, s, own);
        let cur = self.slots[node][s];
        if cur & CHILD != 0 {
            self.push_down((cur & !CHILD) as usize, val);
        } else {
            self.slots[node][s] = val;
        }
    }

    /// Gives `child` a new inherited value and refreshes the slots that use it.
    fn push_down(&mut self, child: usize, val: u32) {
        if self.nodes[child].inherited == val {
            return;
        }
        self.nodes[child].inherited = val;
        let own = self.own_table(child);
        for t in 0..256 {
            if own[t].1 == 0 {
                self.refresh_slot(child, t, &own);
            }
        }
    }

    /// Where a prefix of `len` bits ends: (depth, length within that node).
    fn split(len: u32) -> (usize, u8) {
        if len == 0 {
            (0, 0)
        } else {
            (((len - 1) / 8) as usize, (len - 8 * ((len - 1) / 8)) as u8)
        }
    }

    /// Adds entry `id` for `matches` (replacing nothing: the entry store
    /// guarantees each prefix is present once).
    pub(crate) fn insert(&mut self, id: u32, matches: &[Option<crate::runtime::FieldMatch>]) {
        let (bytes, len) = self.prefix_of(matches);
        let (depth, rel) = Self::split(len);
        let mut node = 0usize;
        for &b in &bytes[..depth] {
            let cur = self.slots[node][b as usize];
            node = if cur & CHILD != 0 {
                (cur & !CHILD) as usize
            } else {
                let child = self.alloc_node(cur);
                self.slots[node][b as usize] = CHILD | child;
                self.nodes[node].children += 1;
                child as usize
            };
        }
        let (first, count) = Self::range(bytes[depth], rel);
        let val = id + 1;
        self.nodes[node].prefixes.push((first as u8, rel, val));
        let own = self.own_table(node);
        for s in first..first + count {
            if own[s].0 == val {
                self.refresh_slot(node, s, &own);
            }
        }
    }

    /// Slots covered by a prefix of `rel` bits whose node byte is `byte`.
    fn range(byte: u8, rel: u8) -> (usize, usize) {
        let span = 1usize << (8 - rel as u32);
        let first = if rel == 0 {
            0
        } else {
            (byte as usize) & !(span - 1)
        };
        (first, span)
    }

    /// Removes entry `id` for `matches`.
    pub(crate) fn remove(&mut self, id: u32, matches: &[Option<crate::runtime::FieldMatch>]) {
        let (bytes, len) = self.prefix_of(matches);
        let (depth, rel) = Self::split(len);
        let mut path: Vec<(usize, u8)> = Vec::with_capacity(depth);
        let mut node = 0usize;
        for &b in &bytes[..depth] {
            let cur = self.slots[node][b as usize];
            if cur & CHILD == 0 {
                return;
            }
            path.push((node, b));
            node = (cur & !CHILD) as usize;
        }
        let val = id + 1;
        let meta = &mut self.nodes[node];
        let Some(pos) = meta.prefixes.iter().position(|p| p.2 == val) else {
            return;
        };
        meta.prefixes.swap_remove(pos);
        let (first, count) = Self::range(bytes[depth], rel);
        // Slots the prefix covered fall back to the longest remaining own
        // prefix (necessarily shorter) or the inherited value.
        let own = self.own_table(node);
        for s in first..first + count {
            self.refresh_slot(node, s, &own);
        }
        // Free nodes left without prefixes and children, bottom-up.
        while let Some((parent, b)) = path.pop() {
            let meta = &self.nodes[node];
            if !meta.prefixes.is_empty() || meta.children > 0 {
                break;
            }
            self.nodes[node].free = true;
            self.free_nodes.push(node as u32);
            self.nodes[parent].children -= 1;
            let own = self.own_table(parent);
            self.slots[parent][b as usize] = self.best(parent, b as usize, &own);
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
