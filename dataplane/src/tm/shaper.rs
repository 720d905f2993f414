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
//! Catch-up: while its owner says the port is backlogged
//! ([`Shaper::set_backlogged`]), credit may pile up to a deeper bucket
//! ([`Shaper::with_catch_up`]): time a late caller missed while frames
//! waited is made up, as a port that never stops would have sent them. An
//! idle port banks only the plain bucket, so arrivals after idle are not
//! waved through faster than the port's speed. The owner calls
//! [`Shaper::settle`] before a change of backlog, so each stretch of time
//! refills by the state it had.
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
    /// The bucket's depth while backlogged (≥ `cap_units`).
    catch_up_units: i64,
    backlogged: bool,
    /// The depth refills fill to now: `catch_up_units` while backlogged,
    /// else `cap_units` (chosen when the backlog changes, not per refill).
    depth_units: i64,
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
            catch_up_units: cap_units,
            backlogged: false,
            depth_units: cap_units,
            credit_units: byte_units(u64::from(burst_bytes)).min(cap_units),
            last: now,
        }
    }

    /// The same shaper whose bucket, while backlogged, holds `extra_bytes`
    /// more (see "Catch-up" in the module doc).
    pub fn with_catch_up(mut self, extra_bytes: u64) -> Self {
        self.catch_up_units = self.cap_units.saturating_add(byte_units(extra_bytes));
        self.set_backlogged(self.backlogged);
        self
    }

    /// Change rate, burst and catch-up, keeping the current credit (clamped).
    pub fn reconfigure(&mut self, rate_bps: u64, burst_bytes: u32, extra_bytes: u64) {
        self.rate_bps = rate_bps;
        self.cap_units = cap_units(rate_bps, burst_bytes);
        self.catch_up_units = self.cap_units.saturating_add(byte_units(extra_bytes));
        self.set_backlogged(self.backlogged);
        self.credit_units = self.credit_units.min(self.cap_units);
    }

    /// Refills up to `now` by the backlog state so far; call it before
    /// [`Shaper::set_backlogged`] changes that state.
    #[inline]
    pub fn settle(&mut self, now: Instant) {
        self.refill(now);
    }

    /// From the last refill on, the port has frames it could send (or
    /// has none).
    #[inline]
    pub fn set_backlogged(&mut self, backlogged: bool) {
        self.backlogged = backlogged;
        self.depth_units = if backlogged {
            self.catch_up_units
        } else {
            self.cap_units
        };
    }

    /// What [`Shaper::set_backlogged`] last said.
    pub fn is_backlogged(&self) -> bool {
        self.backlogged
    }

    #[inline]
    fn refill(&mut self, now: Instant) {
        if now <= self.last {
            return;
        }
        let elapsed = (now - self.last).as_nanos();
        let refill = i64::try_from(elapsed.saturating_mul(self.rate_bps)).unwrap_or(i64::MAX);
        // Catch-up credit left when the backlog ends is dropped: it was
        // for frames that waited, not for the next arrivals.
        self.credit_units = self
            .credit_units
            .saturating_add(refill)
            .min(self.depth_units);
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
    #[inline(always)]
    pub fn ready_at(&self) -> Instant {
        // The ready case inline: only a deficit needs the division.
        if self.credit_units >= 0 {
            return self.last;
        }
        self.ready_at_with(0)
    }

    /// Like [`Shaper::ready_at`] while a frame may start (credit ≥ 0);
    /// otherwise the instant the credit has refilled to `spare_bytes`
    /// (capped at the bucket's depth, so the instant comes), when a train
    /// of that many bytes beyond the first frame may leave at once. A
    /// caller that wakes then and sends what the credit allows ends each
    /// train no later than per-frame wake-ups would, in fewer wake-ups.
    #[inline]
    pub fn ready_at_with(&self, spare_bytes: u64) -> Instant {
        if self.credit_units >= 0 {
            return self.last;
        }
        if self.rate_bps == 0 {
            return Instant::MAX;
        }
        let want = byte_units(spare_bytes).min(self.cap_units.max(self.catch_up_units));
        let deficit = self.credit_units.unsigned_abs() + want.unsigned_abs();
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
    fn a_train_waits_for_its_spare_credit_but_never_beyond_the_cap() {
        // 1 Gb/s, a 12,500-byte bucket (100 µs): one byte is 8 ns.
        let t0 = Instant::ZERO;
        let mut s = Shaper::new(1_000_000_000, 12_500, t0);
        assert_eq!(s.ready_at_with(4_000), t0, "ready now: no waiting");
        s.consume(12_500 + 4_000, t0);
        assert_eq!(s.ready_at(), Instant::from_nanos(32_000));
        // Room for 6,000 more bytes once the deficit is repaid.
        assert_eq!(s.ready_at_with(6_000), Instant::from_nanos(80_000));
        // More than the bucket holds would never come: capped at it.
        assert_eq!(s.ready_at_with(1 << 40), Instant::from_nanos(132_000));
        assert!(s.is_ready(Instant::from_nanos(80_000)));
        s.consume(6_000, Instant::from_nanos(80_000));
        assert!(
            s.is_ready(Instant::from_nanos(80_000)),
            "the train's last frame starts too"
        );
    }

    #[test]
    fn only_a_backlogged_port_makes_up_the_time_it_missed() {
        // 1 Gb/s (8 ns a byte), a 12,500-byte bucket and 250,000 more to
        // catch up with.
        let t0 = Instant::ZERO;
        let mut s = Shaper::new(1_000_000_000, 12_500, t0).with_catch_up(250_000);
        s.consume(12_500, t0);
        // Idle for 1 ms: only the plain bucket comes back.
        s.settle(Instant::from_nanos(1_000_000));
        s.consume(12_500, Instant::from_nanos(1_000_000));
        s.set_backlogged(true);
        // Backlogged and 1 ms late: all of it may leave at once.
        let late = Instant::from_nanos(2_000_000);
        s.consume(125_000, late);
        assert!(s.is_ready(late), "the missed millisecond is made up");
        s.consume(12_500, late);
        assert!(!s.is_ready(late));
        // At most the deeper bucket: 10 ms late makes up 2.1 ms.
        let later = Instant::from_nanos(12_000_000);
        s.consume(262_500, later);
        assert!(s.is_ready(later));
        s.consume(1, later);
        assert!(!s.is_ready(later));
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
