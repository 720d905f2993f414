//! Per-port shaper: a token bucket at the port speed, like quinn's `Pacer`.
//!
//! Contract: credit is kept exactly, in units of bit·10⁹ (one nanosecond of
//! refill at `rate_bps` adds `rate_bps` units; one bit costs 10⁹ units), so
//! the long-run rate has no rounding drift. A frame may *start* whenever
//! credit ≥ 0; sending it subtracts its full cost, possibly going negative
//! (the port is then busy serialising: a frame already started completes).
//! Credit refills up to `burst_bytes`, and never less than one nanosecond of
//! refill, so that waking at whole nanoseconds loses no fractional credit.
//! [`Shaper::ready_at`] says when credit reaches 0 again. An earlier `now`
//! than the last one is treated as no time passing. No allocation, no
//! panics.
//!
//! Units fit 64 bits: the bucket holds at most `i64::MAX` units (a burst of
//! about 1.15 GB; larger bursts are clamped there), and refill and charge
//! saturate, so every value the bucket can take is exact and the per-packet
//! arithmetic needs no 128-bit multiplications.

use crate::time::{Duration, Instant, NANOS_PER_SEC};

/// Token bucket for one port.
#[derive(Clone, Copy, Debug)]
pub struct Shaper {
    rate_bps: u64,
    cap_units: i64,
    credit_units: i64,
    last: Instant,
}

impl Shaper {
    /// A full bucket at `now`.
    pub fn new(rate_bps: u64, burst_bytes: u32, now: Instant) -> Self {
        let cap_units = cap_units(rate_bps, burst_bytes);
        Shaper {
            rate_bps,
            cap_units,
            credit_units: byte_units(u64::from(burst_bytes)).min(cap_units),
            last: now,
        }
    }

    /// Change rate and burst, keeping the current credit (clamped).
    pub fn reconfigure(&mut self, rate_bps: u64, burst_bytes: u32) {
        self.rate_bps = rate_bps;
        self.cap_units = cap_units(rate_bps, burst_bytes);
        self.credit_units = self.credit_units.min(self.cap_units);
    }

    #[inline]
    fn refill(&mut self, now: Instant) {
        if now <= self.last {
            return;
        }
        let elapsed = (now - self.last).as_nanos();
        let refill = i64::try_from(elapsed.saturating_mul(self.rate_bps)).unwrap_or(i64::MAX);
        self.credit_units = self.credit_units.saturating_add(refill).min(self.cap_units);
        self.last = now;
    }

    /// `true` if a frame may start at `now`.
    #[inline]
    pub fn is_ready(&mut self, now: Instant) -> bool {
        self.refill(now);
        self.credit_units >= 0
    }

    /// Charge a frame of `bytes` started at `now`.
    #[inline]
    pub fn consume(&mut self, bytes: u64, now: Instant) {
        self.refill(now);
        self.credit_units = self.credit_units.saturating_sub(byte_units(bytes));
    }

    /// Earliest instant at which a frame may start (≤ the last `now` if ready).
    #[inline]
    pub fn ready_at(&self) -> Instant {
        if self.credit_units >= 0 {
            return self.last;
        }
        if self.rate_bps == 0 {
            return Instant::MAX;
        }
        let deficit = self.credit_units.unsigned_abs();
        self.last + Duration::from_nanos(deficit.div_ceil(self.rate_bps))
    }
}

/// What `bytes` cost: 8 × 10⁹ units a byte, saturating at `i64::MAX`.
#[inline]
fn byte_units(bytes: u64) -> i64 {
    i64::try_from(bytes.saturating_mul(8 * NANOS_PER_SEC)).unwrap_or(i64::MAX)
}

fn cap_units(rate_bps: u64, burst_bytes: u32) -> i64 {
    byte_units(u64::from(burst_bytes)).max(i64::try_from(rate_bps).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_to_back_frames_are_spaced_by_serialisation_time() {
        let t0 = Instant::ZERO;
        let mut s = Shaper::new(100_000_000_000, 0, t0);
        assert!(s.is_ready(t0));
        s.consume(1500, t0);
        assert_eq!(s.ready_at(), Instant::from_nanos(120));
        assert!(!s.is_ready(Instant::from_nanos(119)));
        assert!(s.is_ready(Instant::from_nanos(120)));
    }

    #[test]
    fn burst_allows_a_second_frame_immediately_and_then_paces() {
        let t0 = Instant::ZERO;
        let mut s = Shaper::new(10_000_000_000, 1500, t0);
        s.consume(1500, t0);
        assert!(
            s.is_ready(t0),
            "credit exactly 0 after one burst-sized frame"
        );
        s.consume(1500, t0);
        assert_eq!(s.ready_at(), Instant::from_nanos(1_200));
    }

    #[test]
    fn a_long_idle_spell_refills_to_the_cap_without_overflow() {
        let mut s = Shaper::new(400_000_000_000, 9_000, Instant::ZERO);
        s.consume(9_000, Instant::ZERO);
        s.consume(9_000, Instant::ZERO);
        // A day at 400 Gb/s is far more than 64 bits of units: refill saturates.
        let later = Instant::from_nanos(86_400 * NANOS_PER_SEC);
        assert!(s.is_ready(later));
        s.consume(9_000, later);
        assert!(s.is_ready(later), "the full 9,000-byte burst came back");
        s.consume(1, later);
        assert_eq!(
            s.ready_at(),
            Instant::from_nanos(86_400 * NANOS_PER_SEC + 1)
        );
    }

    #[test]
    fn fractional_nanoseconds_do_not_drift() {
        // 64-byte frames at 100 Gb/s take 5.12 ns; a million of them take 5.12 ms exactly.
        let mut s = Shaper::new(100_000_000_000, 0, Instant::ZERO);
        let mut now = Instant::ZERO;
        for _ in 0..1_000_000 {
            now = now.max(s.ready_at());
            assert!(s.is_ready(now));
            s.consume(64, now);
        }
        let done = s.ready_at();
        assert!(done.as_nanos().abs_diff(5_120_000) <= 1, "{done:?}");
    }
}
