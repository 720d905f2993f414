//! Exact-match engine: a hash map from the key values to the entry.
//!
//! Contract: one hash probe per lookup whatever the table size, no
//! allocation. When the key's widths add up to at most 128 bits (the usual
//! case: ports, MACs, IPv4 and IPv6 addresses, small metadata), the fields
//! are concatenated into one `u128` map key, each masked to its width so
//! that an over-wide value cannot alias another key; the map then holds its
//! keys inline and a probe chases no pointer. Wider keys are stored as
//! boxed slices and looked up with the `&[u128]` key slice in place. Hash:
//! FxHash. Keys of at most [`DIRECT_MAX_BITS`] bits in all (a DSCP, a port
//! and a priority, a 16-bit next-hop id) index an array of entry ids
//! instead: one load, no hashing; the array (4 bytes × 2^bits, at most
//! 256 KiB) is allocated with the first entry.

use rustc_hash::FxHashMap;

use crate::bits::mask;
use crate::runtime::FieldMatch;

/// Widest packed key that indexes an array instead of a hash map.
pub(crate) const DIRECT_MAX_BITS: u32 = 16;

/// Empty slot of a direct array.
const NONE: u32 = u32::MAX;

#[derive(Debug)]
enum Map {
    /// Concatenated key of at most [`DIRECT_MAX_BITS`] bits as an index:
    /// entry id or [`NONE`]; empty until the first insert.
    Direct(Box<[u32]>),
    /// Concatenated key of at most 128 bits.
    Packed(FxHashMap<u128, u32>),
    /// One value per field.
    Wide(FxHashMap<Box<[u128]>, u32>),
}

/// Hash map engine for tables whose keys are all `exact`.
#[derive(Debug)]
pub(crate) struct ExactEngine {
    widths: Box<[u32]>,
    map: Map,
}

fn values(matches: &[Option<FieldMatch>]) -> impl Iterator<Item = u128> + '_ {
    matches.iter().map(|m| match m {
        Some(FieldMatch::Exact(v)) => *v,
        // Validation lets only exact values into an all-exact table.
        _ => 0,
    })
}

impl ExactEngine {
    pub(crate) fn new(widths: &[u32]) -> Self {
        let total: u32 = widths.iter().sum();
        ExactEngine {
            widths: widths.into(),
            map: if total <= DIRECT_MAX_BITS {
                Map::Direct(Box::new([]))
            } else if total <= 128 {
                Map::Packed(FxHashMap::default())
            } else {
                Map::Wide(FxHashMap::default())
            },
        }
    }

    #[inline]
    fn pack(&self, values: impl Iterator<Item = u128>) -> u128 {
        let mut acc = 0u128;
        for (v, &w) in values.zip(self.widths.iter()) {
            acc = if w >= 128 {
                v
            } else {
                (acc << w) | (v & mask(w))
            };
        }
        acc
    }

    pub(crate) fn insert(&mut self, id: u32, matches: &[Option<FieldMatch>]) {
        let packed = self.pack(values(matches));
        let total: u32 = self.widths.iter().sum();
        match &mut self.map {
            Map::Direct(a) => {
                if a.is_empty() {
                    *a = vec![NONE; 1 << total].into_boxed_slice();
                }
                a[packed as usize] = id;
            }
            Map::Packed(m) => {
                m.insert(packed, id);
            }
            Map::Wide(m) => {
                m.insert(values(matches).collect(), id);
            }
        }
    }

    pub(crate) fn remove(&mut self, matches: &[Option<FieldMatch>]) {
        let packed = self.pack(values(matches));
        match &mut self.map {
            Map::Direct(a) => {
                if let Some(slot) = a.get_mut(packed as usize) {
                    *slot = NONE;
                }
            }
            Map::Packed(m) => {
                m.remove(&packed);
            }
            Map::Wide(m) => {
                m.remove(&values(matches).collect::<Box<[u128]>>());
            }
        }
    }

    /// The entry with exactly these matches.
    pub(crate) fn find(&self, matches: &[Option<FieldMatch>]) -> Option<u32> {
        match &self.map {
            Map::Direct(a) => direct(a, self.pack(values(matches))),
            Map::Packed(m) => m.get(&self.pack(values(matches))).copied(),
            Map::Wide(m) => m.get(&values(matches).collect::<Box<[u128]>>()).copied(),
        }
    }

    /// Heap bytes held (capacity).
    pub(crate) fn memory_bytes(&self) -> usize {
        match &self.map {
            Map::Direct(a) => a.len() * 4,
            Map::Packed(m) => m.capacity() * 33,
            Map::Wide(m) => m.capacity() * 25 + m.keys().map(|k| k.len() * 16).sum::<usize>(),
        }
    }

    #[inline]
    pub(crate) fn lookup(&self, key: &[u128]) -> Option<u32> {
        match &self.map {
            Map::Direct(a) => {
                let packed = match (&*self.widths, key) {
                    ([w], [v]) => v & mask(*w),
                    _ => self.pack(key.iter().copied()),
                };
                direct(a, packed)
            }
            // One field (most exact tables): the packed key is the value
            // masked to its width, without the general loop's shifts.
            Map::Packed(m) if m.is_empty() => None,
            Map::Packed(m) => {
                let packed = match (&*self.widths, key) {
                    ([w], [v]) => v & mask(*w),
                    _ => self.pack(key.iter().copied()),
                };
                m.get(&packed).copied()
            }
            Map::Wide(m) => m.get(key).copied(),
        }
    }
}

impl ExactEngine {
    /// [`Self::lookup`] for a key the caller packed as [`Self::pack`] does
    /// (fields in key order, each masked to its width, the first highest);
    /// at most 128 bits in all, so never a [`Map::Wide`] key (such a table
    /// misses).
    #[inline(always)]
    pub(crate) fn lookup_packed(&self, packed: u128) -> Option<u32> {
        match &self.map {
            Map::Direct(a) => direct(a, packed),
            Map::Packed(m) if m.is_empty() => None,
            Map::Packed(m) => m.get(&packed).copied(),
            Map::Wide(_) => None,
        }
    }
}

/// The entry id in slot `packed` of a direct array (empty before the
/// first insert).
#[inline]
fn direct(a: &[u32], packed: u128) -> Option<u32> {
    match a.get(packed as usize) {
        Some(&id) if id != NONE => Some(id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(v: u128) -> Option<FieldMatch> {
        Some(FieldMatch::Exact(v))
    }

    #[test]
    fn finds_exactly_the_inserted_keys() {
        // Direct array, hash map of packed keys, hash map of key slices.
        for widths in [[8u32, 4], [60, 4], [100, 100]] {
            let mut t = ExactEngine::new(&widths);
            t.insert(7, &[e(1), e(2)]);
            t.insert(8, &[e(2), e(1)]);
            assert_eq!(t.lookup(&[1, 2]), Some(7));
            assert_eq!(t.lookup(&[2, 1]), Some(8));
            assert_eq!(t.lookup(&[1, 1]), None);
            t.remove(&[e(1), e(2)]);
            assert_eq!(t.lookup(&[1, 2]), None);
            assert_eq!(t.lookup(&[2, 1]), Some(8));
        }
    }

    #[test]
    fn over_wide_key_values_do_not_alias() {
        // Two 4-bit fields: (0, 0x22) must not find (2, 2) by letting the
        // second value's high bits bleed into the first field's place.
        for widths in [[4u32, 4], [4, 60]] {
            let mut t = ExactEngine::new(&widths);
            t.insert(1, &[e(2), e(2)]);
            assert_eq!(t.lookup(&[2, 2]), Some(1));
            assert_eq!(t.lookup(&[0, 0x22]), None);
            // Values are taken modulo their width, as P4 values are.
            assert_eq!(t.lookup(&[0x12, 2]), Some(1));
            assert_eq!(t.find(&[e(2), e(2)]), Some(1));
        }
    }

    #[test]
    fn a_direct_table_holds_every_key_of_its_width() {
        let mut t = ExactEngine::new(&[16]);
        assert_eq!(t.lookup(&[0]), None);
        t.insert(0, &[e(0)]);
        t.insert(9, &[e(0xffff)]);
        assert_eq!(t.lookup(&[0]), Some(0));
        assert_eq!(t.lookup(&[0xffff]), Some(9));
        assert_eq!(t.lookup(&[0x1_ffff]), Some(9));
        assert_eq!(t.lookup(&[1]), None);
        t.remove(&[e(0)]);
        assert_eq!(t.lookup(&[0]), None);
        assert_eq!(t.find(&[e(0xffff)]), Some(9));
    }
}
