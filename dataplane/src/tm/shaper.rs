//! Per-port shaper: a token bucket at the port speed, like quinn's `Pacer`.
//!
//! Contract: credit is kept exactly, in units of bit·10⁹ (one nanosecond of
//! refill at `rate_bps` adds `rate_bps` units; one bit costs 10⁹ units), so
//! the long-run rate has no rounding drift. A frame may *start* whenever
//! credit ≥ 0; sending it subtracts its full cost, possibly going negative
//! (the port is then busy serialising: a frame already started completes).
//! Credit refills up to `burst_bytes`, and never less than one nanosecond of
//! refill, so that waking at whole nanoseconds loses no fractional credit. [`Shaper::ready_at`] says when credit
//! reaches 0 again. An earlier `now` than the last one is treated as no time
//! passing. No allocation, no panics.

use crate::time::{Duration, Instant, NANOS_PER_SEC};

/// Token bucket for one port.
#[derive(Clone, Copy, Debug)]
pub struct Shaper {
    rate_bps: u64,
    cap_units: i128,
    credit_units: i128,
    last: Instant,
}

impl Shaper {
    /// A full bucket at `now`.
    pub fn new(rate_bps: u64, burst_bytes: u32, now: Instant) -> Self {
        let cap_units = cap_units(rate_bps, burst_bytes);
        let burst_units = i128::from(burst_bytes) * 8 * i128::from(NANOS_PER_SEC);
        Shaper {
            rate_bps,
            cap_units,
            credit_units: burst_units,
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
        let elapsed = i128::from((now - self.last).as_nanos());
        self.credit_units =
            (self.credit_units + elapsed * i128::from(self.rate_bps)).min(self.cap_units);
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
        self.credit_units -= i128::from(bytes) * 8 * i128::from(NANOS_PER_SEC);
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
        let deficit = -self.credit_units;
        // A deficit is at most a few frames' cost (≪ 2⁶⁴ units): divide in
        // 64 bits, which is several times cheaper than a 128-bit division
        // on the per-packet path (this runs after every enqueue).
        let ns = match u64::try_from(deficit) {
            Ok(d) => d.div_ceil(self.rate_bps),
            Err(_) => {
                let rate = i128::from(self.rate_bps);
                u64::try_from((deficit + rate - 1) / rate).unwrap_or(u64::MAX)
            }
        };
        self.last + Duration::from_nanos(ns)
    }
}

fn cap_units(rate_bps: u64, burst_bytes: u32) -> i128 {
    (i128::from(burst_bytes) * 8 * i128::from(NANOS_PER_SEC)).max(i128::from(rate_bps))
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
