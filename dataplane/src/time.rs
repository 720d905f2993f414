//! Time for the sans-IO cores: [`Instant`] and [`Duration`] newtypes over
//! `u64` nanoseconds.
//!
//! Contract: no core reads a clock; every input carries `now: Instant` from
//! the driver (the veth run loop or the simulator). `Instant::ZERO` is the
//! driver's epoch. Arithmetic saturates instead of panicking (an `Instant`
//! minus a later `Instant` is `Duration::ZERO`), so bad inputs never panic.
//!
//! Link-rate helpers implement R-UNIT-1 (one pause quantum = 512 bit times
//! at the port speed) and round *up* to whole nanoseconds, so a pause or a
//! serialisation never ends before the exact time.

use core::fmt;
use core::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

/// Nanoseconds per second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// Bit times in one pause quantum (IEEE 802.3 Annex 31B, R-UNIT-1).
pub const BITS_PER_QUANTUM: u64 = 512;

/// A point in time, in nanoseconds since the driver's epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    nanos: u64,
}

/// A span of time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration {
    nanos: u64,
}

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant { nanos: 0 };
    /// The far future; used for "never" in timer tables.
    pub const MAX: Instant = Instant { nanos: u64::MAX };

    /// From nanoseconds since the epoch.
    pub const fn from_nanos(nanos: u64) -> Self {
        Instant { nanos }
    }
    /// From microseconds since the epoch (saturating).
    pub const fn from_micros(micros: u64) -> Self {
        Instant {
            nanos: micros.saturating_mul(1_000),
        }
    }
    /// From milliseconds since the epoch (saturating).
    pub const fn from_millis(millis: u64) -> Self {
        Instant {
            nanos: millis.saturating_mul(1_000_000),
        }
    }
    /// From seconds since the epoch (saturating).
    pub const fn from_secs(secs: u64) -> Self {
        Instant {
            nanos: secs.saturating_mul(NANOS_PER_SEC),
        }
    }
    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.nanos
    }
    /// Whole microseconds since the epoch (truncated).
    pub const fn as_micros(self) -> u64 {
        self.nanos / 1_000
    }
    /// Time since `earlier`, or zero if `earlier` is later than `self`.
    pub const fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration {
            nanos: self.nanos.saturating_sub(earlier.nanos),
        }
    }
    /// Time since `earlier`, or `None` if `earlier` is later than `self`.
    pub const fn checked_duration_since(self, earlier: Instant) -> Option<Duration> {
        match self.nanos.checked_sub(earlier.nanos) {
            Some(nanos) => Some(Duration { nanos }),
            None => None,
        }
    }
}

impl Duration {
    /// Zero length.
    pub const ZERO: Duration = Duration { nanos: 0 };
    /// The longest representable span.
    pub const MAX: Duration = Duration { nanos: u64::MAX };

    /// From nanoseconds.
    pub const fn from_nanos(nanos: u64) -> Self {
        Duration { nanos }
    }
    /// From microseconds (saturating).
    pub const fn from_micros(micros: u64) -> Self {
        Duration {
            nanos: micros.saturating_mul(1_000),
        }
    }
    /// From milliseconds (saturating).
    pub const fn from_millis(millis: u64) -> Self {
        Duration {
            nanos: millis.saturating_mul(1_000_000),
        }
    }
    /// From seconds (saturating).
    pub const fn from_secs(secs: u64) -> Self {
        Duration {
            nanos: secs.saturating_mul(NANOS_PER_SEC),
        }
    }
    /// Nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.nanos
    }
    /// Whole microseconds (truncated).
    pub const fn as_micros(self) -> u64 {
        self.nanos / 1_000
    }
    /// Whole milliseconds (truncated).
    pub const fn as_millis(self) -> u64 {
        self.nanos / 1_000_000
    }
    /// Seconds as a float (for reports only, never for state).
    pub fn as_secs_f64(self) -> f64 {
        self.nanos as f64 / NANOS_PER_SEC as f64
    }
    /// `true` for a zero-length span.
    pub const fn is_zero(self) -> bool {
        self.nanos == 0
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, rhs: Duration) -> Instant {
        Instant {
            nanos: self.nanos.saturating_add(rhs.nanos),
        }
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}
impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, rhs: Duration) -> Instant {
        Instant {
            nanos: self.nanos.saturating_sub(rhs.nanos),
        }
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: a later `rhs` gives `Duration::ZERO`.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, rhs: Duration) -> Duration {
        Duration {
            nanos: self.nanos.saturating_add(rhs.nanos),
        }
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, rhs: Duration) -> Duration {
        Duration {
            nanos: self.nanos.saturating_sub(rhs.nanos),
        }
    }
}
impl SubAssign for Duration {
    fn sub_assign(&mut self, rhs: Duration) {
        *self = *self - rhs;
    }
}
impl Mul<u64> for Duration {
    type Output = Duration;
    fn mul(self, rhs: u64) -> Duration {
        Duration {
            nanos: self.nanos.saturating_mul(rhs),
        }
    }
}
impl Div<u64> for Duration {
    type Output = Duration;
    /// Division by zero gives `Duration::MAX` rather than panicking.
    fn div(self, rhs: u64) -> Duration {
        match self.nanos.checked_div(rhs) {
            Some(nanos) => Duration { nanos },
            None => Duration::MAX,
        }
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}s",
            self.nanos / NANOS_PER_SEC,
            self.nanos % NANOS_PER_SEC
        )
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ns", self.nanos)
    }
}

/// Time to serialise `bytes` at `bps` bits per second, rounded up to whole
/// nanoseconds. A zero rate gives `Duration::MAX` ("never").
pub fn bits_time(bytes: u64, bps: u64) -> Duration {
    bits_to_duration(u128::from(bytes) * 8, bps)
}

/// Length of a pause of `quanta` pause quanta (512 bit times each, R-UNIT-1)
/// at `bps`, rounded up to whole nanoseconds. E-1: 0xFFFF at 100 Gb/s is
/// 335,539.2 ns, returned as 335,540 ns. A zero rate gives `Duration::MAX`.
pub fn pause_quanta_to_duration(quanta: u16, bps: u64) -> Duration {
    bits_to_duration(u128::from(quanta) * u128::from(BITS_PER_QUANTUM), bps)
}

fn bits_to_duration(bits: u128, bps: u64) -> Duration {
    if bps == 0 {
        return Duration::MAX;
    }
    let nanos = (bits * u128::from(NANOS_PER_SEC)).div_ceil(u128::from(bps));
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 1_000_000_000;

    // ---- E-1: pause quanta ------------------------------------------------

    #[test]
    fn one_quantum_per_speed_e1() {
        // 1 quantum in picoseconds = 512e12 / bps; check via 1000 quanta to keep ns integral.
        assert_eq!(pause_quanta_to_duration(1, G).as_nanos(), 512);
        assert_eq!(pause_quanta_to_duration(1000, 10 * G).as_nanos(), 51_200);
        assert_eq!(pause_quanta_to_duration(1000, 25 * G).as_nanos(), 20_480);
        assert_eq!(pause_quanta_to_duration(1000, 40 * G).as_nanos(), 12_800);
        assert_eq!(pause_quanta_to_duration(1000, 50 * G).as_nanos(), 10_240);
        assert_eq!(pause_quanta_to_duration(1000, 100 * G).as_nanos(), 5_120);
        assert_eq!(pause_quanta_to_duration(1000, 200 * G).as_nanos(), 2_560);
        assert_eq!(pause_quanta_to_duration(1000, 400 * G).as_nanos(), 1_280);
        assert_eq!(pause_quanta_to_duration(1000, 800 * G).as_nanos(), 640);
    }

    #[test]
    fn full_pause_per_speed_e1() {
        assert_eq!(pause_quanta_to_duration(0xFFFF, G).as_micros(), 33_553); // 33.554 ms
        assert_eq!(pause_quanta_to_duration(0xFFFF, G).as_nanos(), 33_553_920);
        assert_eq!(
            pause_quanta_to_duration(0xFFFF, 10 * G).as_nanos(),
            3_355_392
        );
        assert_eq!(
            pause_quanta_to_duration(0xFFFF, 25 * G).as_nanos(),
            1_342_157
        ); // 1.342 ms, rounded up
        assert_eq!(
            pause_quanta_to_duration(0xFFFF, 100 * G).as_nanos(),
            335_540
        ); // 335.5392 µs
        assert_eq!(pause_quanta_to_duration(0xFFFF, 400 * G).as_nanos(), 83_885); // 83.8848 µs
    }

    #[test]
    fn zero_rate_is_never_not_a_panic() {
        assert_eq!(pause_quanta_to_duration(1, 0), Duration::MAX);
        assert_eq!(bits_time(1, 0), Duration::MAX);
    }

    // ---- serialisation ----------------------------------------------------

    #[test]
    fn bits_time_rounds_up() {
        assert_eq!(bits_time(1500, 100 * G).as_nanos(), 120);
        assert_eq!(bits_time(64, 100 * G).as_nanos(), 6); // 5.12 ns
        assert_eq!(bits_time(125, G).as_nanos(), 1_000);
    }

    // ---- arithmetic ----------------------------------------------------------

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_micros(5);
        assert_eq!(t - Instant::from_micros(7), Duration::ZERO);
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
        assert_eq!(Duration::from_millis(1) / 0, Duration::MAX);
        assert_eq!((t + Duration::from_nanos(10)).as_nanos(), 5_010);
        assert_eq!(
            Instant::from_millis(3).checked_duration_since(Instant::from_millis(4)),
            None
        );
    }
}
