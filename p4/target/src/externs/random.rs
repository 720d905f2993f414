//! The pseudo-random source behind v1model `random(lo, hi)` and the
//! `HashAlgorithm.random` selector hash.
//!
//! Contract: deterministic for a given seed (tests and the simulator replay
//! exactly), fast (one xorshift-multiply step per draw), not cryptographic.
//! The generator is SplitMix64 (Steele, Lea, Flood: "Fast splittable
//! pseudorandom number generators", 2014), which has no bad seeds.

/// SplitMix64 state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

/// Seed used by [`Rng::default`].
const DEFAULT_SEED: u64 = 0x005e_ed0f_20c3_5e71;

impl Default for Rng {
    fn default() -> Self {
        Rng::new(DEFAULT_SEED)
    }
}

impl Rng {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// Restarts the sequence from `seed`.
    pub fn set_seed(&mut self, seed: u64) {
        self.state = seed;
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.state)
    }

    /// A value in `0..n` (0 when `n` is 0); the slight modulo bias does not
    /// matter for picking test traffic.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64().checked_rem(n).unwrap_or(0)
    }

    /// The offset in `0..=span` that [`Rng::range`] makes of its one draw
    /// `r` when the range has at most 2^64 values: a mask where the range
    /// is a power of two (no division; with constant bounds it folds to
    /// one AND), the remainder otherwise.
    #[inline(always)]
    pub fn pick(span: u64, r: u64) -> u64 {
        match span.checked_add(1) {
            None => r,
            Some(n) if n.is_power_of_two() => r & span,
            Some(n) => r % n,
        }
    }

    /// A value in `lo..=hi` (v1model `random`); `lo` when `hi <= lo`. One
    /// draw when the range has at most 2^64 values (RED's `random(r, 0,
    /// 65535)` runs for every packet between Kmin and Kmax), two otherwise.
    #[inline]
    pub fn range(&mut self, lo: u128, hi: u128) -> u128 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo;
        if let Ok(span) = u64::try_from(span) {
            return lo + u128::from(Self::pick(span, self.next_u64()));
        }
        if span == u128::MAX {
            return ((self.next_u64() as u128) << 64) | self.next_u64() as u128;
        }
        let r = ((self.next_u64() as u128) << 64) | self.next_u64() as u128;
        lo + r % (span + 1)
    }
}

/// SplitMix64's output function.
#[inline]
pub(crate) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_per_seed_and_in_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let xs: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        let mut c = Rng::new(8);
        assert_ne!(xs[0], c.next_u64());
        let mut seen = [false; 6];
        for _ in 0..1000 {
            let v = a.range(10, 15);
            assert!((10..=15).contains(&v));
            seen[(v - 10) as usize] = true;
        }
        assert!(
            seen.iter().all(|&s| s),
            "every value of a small range shows up"
        );
        assert_eq!(a.range(5, 5), 5);
        assert_eq!(a.range(9, 3), 9);
    }

    #[test]
    fn ranges_up_to_2_to_the_64_take_one_draw() {
        let wide = u128::from(u64::MAX) + 5;
        for (lo, hi) in [
            (0u128, 65_535u128),
            (3, 4),
            (100, 227),
            (10, 15),
            (7, 7 + wide - 5),
        ] {
            let mut a = Rng::new(11);
            let mut b = a.clone();
            for _ in 0..100 {
                let n = hi - lo + 1;
                let want = lo + u128::from(b.next_u64()) % n;
                assert_eq!(a.range(lo, hi), want, "{lo}..={hi}");
            }
            // In step: the same number of draws.
            assert_eq!(a.next_u64(), b.next_u64());
        }
        // Wider ranges draw 128 bits.
        let mut a = Rng::new(3);
        let mut b = a.clone();
        let r = (u128::from(b.next_u64()) << 64) | u128::from(b.next_u64());
        assert_eq!(a.range(1, 1 + wide), 1 + r % (wide + 1));
        assert_eq!(a.next_u64(), b.next_u64());
    }
}
