//! Meters: RFC 2698 two-rate three-colour marking, colour-blind mode.
//!
//! Contract:
//! - Rates are units per second and bursts are units, where a unit is a byte
//!   or a packet as the meter's [`CounterUnit`] says (P4Runtime
//!   `MeterConfig`: `cir`/`pir` per second, `cburst`/`pburst`).
//! - Time comes from the caller as `now_ns`; a clock going backwards adds no
//!   tokens. Both buckets start full when a cell is configured (RFC 2698 §3).
//! - Token arithmetic is exact: buckets hold units × 10⁹ in a `u128`, so
//!   `rate × Δt_ns` adds tokens without rounding.
//! - An unconfigured cell marks everything green; an out-of-range index is
//!   green as well. Nothing here allocates after construction.
//!
//! Marking (RFC 2698 §3, colour-blind): refill `Tc` at CIR up to CBS and `Tp`
//! at PIR up to PBS; a packet of size B is red if `Tp < B`, else yellow if
//! `Tc < B` (and `Tp -= B`), else green (`Tp -= B`, `Tc -= B`).

use crate::info::{CounterUnit, MeterInfo};

/// Two-rate three-colour marker configuration (RFC 2698), rates in units
/// (bytes or packets) per second, bursts in units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeterConfig {
    /// Committed information rate.
    pub cir: u64,
    /// Committed burst size.
    pub cburst: u64,
    /// Peak information rate.
    pub pir: u64,
    /// Peak burst size.
    pub pburst: u64,
}

/// v1model `MeterColor_t` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Color {
    /// Conforms to CIR/CBS.
    Green = 0,
    /// Exceeds CIR/CBS but conforms to PIR/PBS.
    Yellow = 1,
    /// Exceeds PIR/PBS.
    Red = 2,
}

/// Tokens are kept in units × `SCALE` so that `rate_per_s × ns` is exact.
const SCALE: u128 = 1_000_000_000;

/// One meter cell: its configuration and both token buckets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeterState {
    config: Option<MeterConfig>,
    /// Committed bucket, units × 10⁹.
    tc: u128,
    /// Peak bucket, units × 10⁹.
    tp: u128,
    /// Time of the last update; `None` until the first packet.
    last_ns: Option<u64>,
}

impl MeterState {
    /// Sets (or with `None` clears) the configuration; buckets start full.
    pub fn configure(&mut self, config: Option<MeterConfig>) {
        *self = MeterState {
            config,
            tc: config.map_or(0, |c| c.cburst as u128 * SCALE),
            tp: config.map_or(0, |c| c.pburst as u128 * SCALE),
            last_ns: None,
        };
    }

    /// The current configuration.
    pub fn config(&self) -> Option<MeterConfig> {
        self.config
    }

    /// Marks a packet of `units` (bytes or 1 packet) arriving at `now_ns`.
    #[inline]
    pub fn execute(&mut self, now_ns: u64, units: u64) -> Color {
        let Some(cfg) = self.config else {
            return Color::Green;
        };
        let elapsed_ns = match self.last_ns {
            Some(last) => now_ns.saturating_sub(last),
            None => 0,
        };
        if self.last_ns.is_none_or(|last| now_ns > last) {
            self.last_ns = Some(now_ns);
        }
        let dt = elapsed_ns as u128;
        // u64 × u64 fits a u128; the sum saturates instead of wrapping.
        self.tc = (self.tc.saturating_add(cfg.cir as u128 * dt)).min(cfg.cburst as u128 * SCALE);
        self.tp = (self.tp.saturating_add(cfg.pir as u128 * dt)).min(cfg.pburst as u128 * SCALE);
        let b = units as u128 * SCALE;
        if self.tp < b {
            Color::Red
        } else if self.tc < b {
            self.tp -= b;
            Color::Yellow
        } else {
            self.tp -= b;
            self.tc -= b;
            Color::Green
        }
    }
}

/// Units a packet of `len` bytes costs on a meter counting `unit`.
#[inline]
pub(crate) fn units(unit: CounterUnit, len: u32) -> u64 {
    match unit {
        CounterUnit::Packets => 1,
        CounterUnit::Bytes | CounterUnit::Both => len as u64,
    }
}

/// An indirect meter array.
#[derive(Debug)]
pub struct Meter {
    /// Static description.
    pub info: &'static MeterInfo,
    cells: Box<[MeterState]>,
}

impl Meter {
    /// An array of `info.size` unconfigured (all-green) cells; none for a
    /// direct meter, whose cells live in its table's entries.
    pub fn new(info: &'static MeterInfo) -> Self {
        let n = if info.direct_table.is_some() {
            0
        } else {
            info.size as usize
        };
        Meter {
            info,
            cells: vec![MeterState::default(); n].into_boxed_slice(),
        }
    }

    /// Number of cells.
    pub fn len(&self) -> u32 {
        self.cells.len() as u32
    }

    /// Whether the array has no cells.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// `meter.execute_meter(index, color)`: 0 green, 1 yellow, 2 red.
    #[inline]
    pub fn execute(&mut self, index: u32, now_ns: u64, len: u32) -> u8 {
        let units = units(self.info.unit, len);
        match self.cells.get_mut(index as usize) {
            Some(cell) => cell.execute(now_ns, units) as u8,
            None => Color::Green as u8,
        }
    }

    /// Configures one cell; returns false (changing nothing) when out of range.
    pub fn configure(&mut self, index: u32, config: Option<MeterConfig>) -> bool {
        match self.cells.get_mut(index as usize) {
            Some(cell) => {
                cell.configure(config);
                true
            }
            None => false,
        }
    }

    /// The configuration of one cell (`None` when unconfigured or out of range).
    pub fn config(&self, index: u32) -> Option<MeterConfig> {
        self.cells.get(index as usize).and_then(|c| c.config())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn cell(cir: u64, cburst: u64, pir: u64, pburst: u64) -> MeterState {
        let mut m = MeterState::default();
        m.configure(Some(MeterConfig {
            cir,
            cburst,
            pir,
            pburst,
        }));
        m
    }

    #[test]
    fn unconfigured_is_green() {
        let mut m = MeterState::default();
        for t in 0..10 {
            assert_eq!(m.execute(t, 1_000_000), Color::Green);
        }
    }

    #[test]
    fn back_to_back_burst_goes_green_then_yellow_then_red() {
        // CBS 3000 B, PBS 5000 B, rates irrelevant at a single instant.
        let mut m = cell(1_000, 3000, 2_000, 5000);
        let colours: Vec<Color> = (0..6).map(|_| m.execute(0, 1000)).collect();
        use Color::*;
        assert_eq!(colours, [Green, Green, Green, Yellow, Yellow, Red]);
    }

    #[test]
    fn buckets_refill_at_their_rates() {
        // 1 MB/s committed, 2 MB/s peak, 1000 B bursts: 1000 B every 1 ms
        // conforms to CIR exactly; 1000 B every 0.5 ms is yellow every
        // other packet; every 0.25 ms also turns some red.
        let mut m = cell(1_000_000, 1000, 2_000_000, 1000);
        for i in 0..20 {
            assert_eq!(m.execute(i * MS, 1000), Color::Green, "packet {i}");
        }
        let mut m = cell(1_000_000, 1000, 2_000_000, 1000);
        let colours: Vec<Color> = (0..8).map(|i| m.execute(i * MS / 2, 1000)).collect();
        use Color::*;
        assert_eq!(
            colours,
            [Green, Yellow, Green, Yellow, Green, Yellow, Green, Yellow]
        );
        let mut m = cell(1_000_000, 1000, 2_000_000, 1000);
        let colours: Vec<Color> = (0..8).map(|i| m.execute(i * MS / 4, 1000)).collect();
        assert_eq!(colours, [Green, Red, Yellow, Red, Green, Red, Yellow, Red]);
    }

    #[test]
    fn red_packets_take_no_tokens_and_time_going_back_adds_none() {
        let mut m = cell(0, 0, 1_000_000, 1500);
        assert_eq!(m.execute(10 * MS, 1000), Color::Yellow);
        assert_eq!(m.execute(10 * MS, 1000), Color::Red);
        // The red packet did not drain Tp: 500 B left, a 500 B packet fits.
        assert_eq!(m.execute(10 * MS, 500), Color::Yellow);
        assert_eq!(m.execute(5 * MS, 1), Color::Red);
        // 1 ms later at 1 MB/s: 1000 B of peak tokens again.
        assert_eq!(m.execute(11 * MS, 1000), Color::Yellow);
    }

    #[test]
    fn packet_unit_meters_count_packets() {
        static INFO: MeterInfo = MeterInfo {
            id: 0x1400_0001,
            name: "m",
            unit: CounterUnit::Packets,
            size: 2,
            direct_table: None,
        };
        let mut m = Meter::new(&INFO);
        assert!(m.configure(
            1,
            Some(MeterConfig {
                cir: 1,
                cburst: 1,
                pir: 1,
                pburst: 2
            })
        ));
        assert!(!m.configure(2, None));
        assert_eq!(m.execute(0, 0, 9000), 0);
        assert_eq!(m.execute(1, 0, 9000), 0);
        assert_eq!(m.execute(1, 0, 9000), 1);
        assert_eq!(m.execute(1, 0, 9000), 2);
        assert_eq!(m.execute(7, 0, 9000), 0);
    }
}
