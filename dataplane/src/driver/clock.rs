//! The driver's clock seam: [`Clock`], read once per port batch and once
//! per turn, with two implementations.
//!
//! - [`MonotonicClock`] (the daemon's): `CLOCK_MONOTONIC` through
//!   [`std::time::Instant`], counted from the driver's start, so a
//!   wall-clock jump (NTP, `date -s`) changes nothing.
//! - [`ManualClock`] (tests'): time stands still until the test moves it,
//!   so a test can run the real driver over in-memory ports at chosen
//!   instants and get the same outputs every run (see
//!   [`super::Driver::advance_to`]). Clones share one time.
//!
//! Contract: `now` never goes backwards; reading it does not allocate or
//! block. Time is [`crate::time::Instant`] nanoseconds since the epoch.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::time::{Duration, Instant};

/// Where the driver reads the time; see the module doc.
pub trait Clock {
    /// The current time; never earlier than a previous answer.
    fn now(&self) -> Instant;
}

/// The real monotonic clock; `Instant::ZERO` is when it was made.
#[derive(Clone, Copy, Debug)]
pub struct MonotonicClock {
    epoch: std::time::Instant,
}

impl MonotonicClock {
    /// A clock whose epoch is now.
    pub fn new() -> Self {
        MonotonicClock {
            epoch: std::time::Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        MonotonicClock::new()
    }
}

impl Clock for MonotonicClock {
    fn now(&self) -> Instant {
        Instant::from_nanos(self.epoch.elapsed().as_nanos() as u64)
    }
}

/// A clock that moves only when told; clones share the same time.
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    nanos: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Instant) -> Self {
        ManualClock {
            nanos: Arc::new(AtomicU64::new(start.as_nanos())),
        }
    }

    /// Moves the clock to `t`.
    ///
    /// Panics if `t` is earlier than the clock's time: the switch's cores
    /// require monotonic time, and a test that goes back has a bug.
    pub fn set(&self, t: Instant) {
        let was = self.nanos.fetch_max(t.as_nanos(), Ordering::AcqRel);
        assert!(
            was <= t.as_nanos(),
            "ManualClock::set({t}) is earlier than {}",
            Instant::from_nanos(was)
        );
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        self.nanos.fetch_add(d.as_nanos(), Ordering::AcqRel);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        Instant::from_nanos(self.nanos.load(Ordering::Acquire))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_clones_share_time() {
        let a = ManualClock::new(Instant::from_micros(5));
        let b = a.clone();
        b.advance(Duration::from_micros(3));
        assert_eq!(a.now(), Instant::from_micros(8));
        a.set(Instant::from_micros(20));
        assert_eq!(b.now(), Instant::from_micros(20));
    }

    #[test]
    #[should_panic(expected = "earlier")]
    fn manual_clock_refuses_to_go_back() {
        let c = ManualClock::new(Instant::from_micros(5));
        c.set(Instant::from_micros(4));
    }

    #[test]
    fn monotonic_clock_starts_near_zero_and_does_not_go_back() {
        let c = MonotonicClock::new();
        let a = c.now();
        let b = c.now();
        assert!(b >= a);
        assert!(a < Instant::from_secs(60));
    }
}
