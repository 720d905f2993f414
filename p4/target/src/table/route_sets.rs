//! Seeded route sets shaped like real routing tables, for the table
//! benchmarks, the P4Runtime benchmarks and the engines' measurements.
//!
//! One place defines what "BGP-shaped" means, so a figure measured by
//! `benches/tables.rs` and one measured over P4Runtime describe the same
//! table. Every set is a list of distinct `(value, prefix length)` pairs,
//! the value already masked to its prefix, in the low 32 bits for IPv4
//! and all 128 for IPv6, and depends only on the generator's seed.

use std::collections::HashSet;

use crate::externs::Rng;

/// The IPv4 mask of a `/len` prefix (`len` ≤ 32).
pub fn ipv4_prefix_mask(len: u32) -> u128 {
    0xffff_ffffu128 ^ (0xffff_ffffu128 >> len)
}

/// `n` distinct random IPv4 routes, prefix lengths uniform in /8..=/32:
/// the worst case for a trie (no clustering at all).
pub fn random_ipv4(n: usize, rng: &mut Rng) -> Vec<(u128, u32)> {
    distinct(n, || {
        let len = 8 + (rng.next_u64() % 25) as u32;
        let value = (rng.next_u64() as u128 & 0xffff_ffff) & ipv4_prefix_mask(len);
        (value, len)
    })
}

/// `n` distinct IPv4 routes shaped like a full BGP table: lengths in the
/// proportions of the public table (/24 about 60 %, /22–/23 about 20 %,
/// a few shorter than /16 or longer than /24), 90 % of them inside 20,000
/// allocated /16 blocks.
pub fn bgp_ipv4(n: usize, rng: &mut Rng) -> Vec<(u128, u32)> {
    const LENGTHS: [(u32, u32); 17] = [
        (8, 1),
        (12, 2),
        (14, 4),
        (15, 4),
        (16, 130),
        (17, 60),
        (18, 110),
        (19, 290),
        (20, 450),
        (21, 500),
        (22, 1100),
        (23, 950),
        (24, 5950),
        (25, 5),
        (26, 5),
        (28, 2),
        (32, 10),
    ];
    let blocks: Vec<u128> = (0..20_000)
        .map(|_| (rng.next_u64() as u128 & 0xffff) << 16)
        .collect();
    distinct(n, || {
        let len = weighted(rng, &LENGTHS);
        let base = if rng.next_u64().is_multiple_of(10) {
            rng.next_u64() as u128 & 0xffff_ffff
        } else {
            blocks[(rng.next_u64() % blocks.len() as u64) as usize]
                | (rng.next_u64() as u128 & 0xffff)
        };
        (base & ipv4_prefix_mask(len), len)
    })
}

/// `n` distinct IPv6 routes shaped like the public IPv6 table: mostly /48
/// and /32 (with /29–/64 around them), inside 2000::/3, 80 % of them under
/// 10,000 allocated /32s.
pub fn bgp_ipv6(n: usize, rng: &mut Rng) -> Vec<(u128, u32)> {
    const LENGTHS: [(u32, u32); 12] = [
        (29, 5),
        (32, 17),
        (33, 2),
        (36, 4),
        (40, 6),
        (44, 8),
        (45, 2),
        (46, 3),
        (47, 3),
        (48, 46),
        (56, 2),
        (64, 2),
    ];
    let blocks: Vec<u128> = (0..10_000)
        .map(|_| (0x2000_0000u128 | (rng.next_u64() as u128 & 0x1fff_ffff)) << 96)
        .collect();
    let random = |rng: &mut Rng| ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128;
    distinct(n, || {
        let len = weighted(rng, &LENGTHS);
        let base = if rng.next_u64().is_multiple_of(5) {
            (0x2u128 << 124) | (random(rng) >> 3)
        } else {
            blocks[(rng.next_u64() % blocks.len() as u64) as usize] | (random(rng) >> 32)
        };
        (base & !(u128::MAX >> len), len)
    })
}

/// Picks a value from (value, weight) pairs.
pub fn weighted(rng: &mut Rng, table: &[(u32, u32)]) -> u32 {
    let total: u32 = table.iter().map(|t| t.1).sum();
    let mut x = (rng.next_u64() % total as u64) as u32;
    for &(value, w) in table {
        if x < w {
            return value;
        }
        x -= w;
    }
    table[0].0
}

/// The first `n` distinct routes `next` draws.
fn distinct(n: usize, mut next: impl FnMut() -> (u128, u32)) -> Vec<(u128, u32)> {
    let mut seen = HashSet::with_capacity(n);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let route = next();
        if seen.insert(route) {
            out.push(route);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_are_distinct_masked_and_shaped() {
        let mut rng = Rng::new(7);
        let v4 = bgp_ipv4(20_000, &mut rng);
        let v6 = bgp_ipv6(20_000, &mut rng);
        let random = random_ipv4(1_000, &mut rng);
        for set in [&v4, &v6, &random] {
            let unique: HashSet<_> = set.iter().collect();
            assert_eq!(unique.len(), set.len());
        }
        for &(v, len) in v4.iter().chain(&random) {
            assert_eq!(v & !ipv4_prefix_mask(len), 0, "{v:#x}/{len} has host bits");
        }
        for &(v, len) in &v6 {
            assert_eq!(v & (u128::MAX >> len), 0, "{v:#x}/{len} has host bits");
            assert_eq!(v >> 125, 1, "{v:#x}/{len} is outside 2000::/3");
        }
        let share = |set: &[(u128, u32)], len| {
            set.iter().filter(|r| r.1 == len).count() as f64 / set.len() as f64
        };
        assert!(
            (0.55..0.65).contains(&share(&v4, 24)),
            "/24 share {}",
            share(&v4, 24)
        );
        assert!(
            (0.40..0.52).contains(&share(&v6, 48)),
            "/48 share {}",
            share(&v6, 48)
        );
    }

    #[test]
    fn a_seed_gives_the_same_set() {
        assert_eq!(
            bgp_ipv6(500, &mut Rng::new(3)),
            bgp_ipv6(500, &mut Rng::new(3))
        );
        assert_ne!(
            bgp_ipv6(500, &mut Rng::new(3)),
            bgp_ipv6(500, &mut Rng::new(4))
        );
    }
}
