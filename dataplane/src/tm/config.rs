//! Traffic-manager configuration and its validation.
//!
//! Contract: [`TmConfig::validate`] checks the whole config and returns a
//! [`ConfigError`] listing *every* problem found (not just the first); a
//! rejected config changes nothing. Units: bytes, bits per second, pause
//! quanta, milliseconds for watchdog times (as SONiC configures them).
//!
//! Rules implemented: R-BUF-1/2 (reserved, shared, headroom per PG),
//! R-DT-1..5 (dynamic or static thresholds, α = 2^dynamic_th with
//! dynamic_th ∈ [−8, 7]), R-PFC-FMT-6 (legacy PAUSE and PFC are mutually
//! exclusive per port: such a port config is rejected), R-PFC-TX-4 (XOFF
//! quanta), R-HR-2 (headroom computed from the cable length when a lossless
//! PG gives none), R-WD-1 (watchdog ranges).

use core::fmt;

use crate::headroom::{self, AsicPreset, HeadroomInputs};
use crate::watchdog::{WatchdogConfig, WatchdogPortConfig};
use crate::wire::ethernet::EthernetAddress;

/// Default shared buffer: 12 MiB.
pub const DEFAULT_BUFFER_BYTES: u64 = 12 * 1024 * 1024;
/// Default accounting cell: 256 B.
pub const DEFAULT_CELL_BYTES: u32 = 256;
/// Default XOFF pause time (R-PFC-TX-4).
pub const DEFAULT_XOFF_QUANTA: u16 = 0xffff;
/// Longest time between two XOFF frames of a PG that stays XOFF
/// (R-PFC-TX-4 allows refreshing more often than every Q_xoff/2). Without
/// this cap a slow port (Q_xoff/2 = 839 ms at 20 Mb/s, 168 ms at 100 Mb/s)
/// refreshes less often than the watchdog polls (≥ 100 ms, R-WD-1), so the
/// storm condition "new PFC frames since the last poll" (R-WD-5) fails on
/// most polls and a deadlock is never detected. 20 ms leaves several
/// frames per poll even when timers run late; above ~840 Mb/s Q_xoff/2 is
/// shorter and applies unchanged.
pub const XOFF_REFRESH_MAX: crate::time::Duration = crate::time::Duration::from_millis(20);
/// HPCC resume offset (R-PFC-TX-2): 3 KB.
pub const DEFAULT_RESUME_OFFSET_BYTES: u64 = 3072;
/// Default shaper burst: one 1500-byte frame plus headers.
pub const DEFAULT_SHAPER_BURST_BYTES: u32 = 1536;
/// Default DWRR quantum unit, multiplied by the queue weight.
pub const DEFAULT_DWRR_QUANTUM_BYTES: u32 = 2048;

/// A buffer threshold (R-DT-1, R-DT-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    /// T = 2^n · (free bytes of the pool), n ∈ [−8, 7].
    Dynamic(i8),
    /// T = n bytes; 0 means unlimited (SAI).
    Static(u64),
}

impl Threshold {
    /// The threshold in bytes given the pool's free bytes.
    #[inline(always)]
    pub fn limit_bytes(self, free_bytes: u64) -> u64 {
        match self {
            // `free × 2^n`, saturating: no bit may be shifted out.
            Threshold::Dynamic(n) if n >= 0 => {
                if n < 64 && free_bytes.leading_zeros() >= n as u32 {
                    free_bytes << n
                } else {
                    u64::MAX
                }
            }
            Threshold::Dynamic(n) => free_bytes >> n.unsigned_abs().min(63),
            Threshold::Static(0) => u64::MAX,
            Threshold::Static(n) => n,
        }
    }
}

/// Priority-group (ingress) buffer settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PgConfig {
    /// Guaranteed bytes charged before the shared pool (R-BUF-1).
    pub reserved_bytes: u64,
    /// Shared-pool threshold.
    pub threshold: Threshold,
    /// Headroom (xoff) bytes for a lossless PG. `None` on a lossless PG means
    /// "compute from the port's cable length" (R-HR-2). Ignored on lossy PGs.
    pub headroom_bytes: Option<u64>,
    /// XON floor (R-PFC-TX-3 project choice): also resume when the PG's total
    /// usage is at most this. `None`: only the R-PFC-TX-2 rule.
    pub xon_bytes: Option<u64>,
}

impl Default for PgConfig {
    fn default() -> Self {
        PgConfig {
            reserved_bytes: 0,
            threshold: Threshold::Dynamic(0),
            headroom_bytes: None,
            xon_bytes: None,
        }
    }
}

/// How the egress scheduler serves a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedMode {
    /// Strict priority; among strict queues the higher index goes first.
    Strict,
    /// Deficit weighted round robin (ETS) with this weight (≥ 1).
    Dwrr(u16),
}

/// Egress queue settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueConfig {
    /// Scheduling mode.
    pub sched: SchedMode,
    /// Egress limit for lossy traffic (R-DT-5); lossless traffic is never
    /// dropped at egress. (ECN marking is the P4 egress program's, on the
    /// `deq_qdepth_bytes` the TM reports, R-ECN-4.)
    pub limit: Threshold,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            sched: SchedMode::Dwrr(1),
            limit: Threshold::Dynamic(3),
        }
    }
}

/// Per-port settings.
#[derive(Clone, Debug, PartialEq)]
pub struct PortConfig {
    /// Port speed in bits per second (shaper rate, pause-quanta length).
    pub speed_bps: u64,
    /// Source MAC for PFC frames sent from this port.
    pub mac: EthernetAddress,
    /// Bit p set = priority p is lossless (PFC enabled). Default: 1 << 3 (R-MAP-2).
    pub pfc_enable: u8,
    /// Honour received legacy 802.3x PAUSE (exclusive with `pfc_enable`, R-PFC-FMT-6).
    pub legacy_pause: bool,
    /// Priority → ingress PG (TC_TO_PRIORITY_GROUP_MAP). Default identity.
    pub prio_to_pg: [u8; 8],
    /// Priority → egress queue (MAP_PFC_PRIORITY_TO_QUEUE). Default identity.
    pub prio_to_queue: [u8; 8],
    /// Ingress PG settings, indexed by PG.
    pub pgs: [PgConfig; 8],
    /// Egress queue settings, indexed by queue.
    pub queues: [QueueConfig; 8],
    /// Pause time of generated XOFF frames (R-PFC-TX-4).
    pub xoff_quanta: u16,
    /// Token-bucket depth of the port shaper.
    pub shaper_burst_bytes: u32,
    /// The bucket also holds at least this much time at port speed. A
    /// hardware port paces every frame (0, the default); a software switch
    /// whose loop wakes tens of microseconds late needs the slack, or the
    /// credit that piles up while it is away is lost and the port runs
    /// below its speed. See [`PortConfig::shaper_burst`].
    pub shaper_burst_ns: u64,
    /// A backlogged port waits, before it next wakes its owner, until it
    /// may send this much wire time (at most its backlog, at most the
    /// bucket) as one train, instead of asking to be woken for every
    /// frame. 0 (the default, and the simulator's): a wake-up per frame,
    /// as hardware paces. A software switch sets it so that a busy port
    /// costs it, and the host behind it, a few thousand wake-ups a second
    /// instead of one a frame; frames still never leave above the port's
    /// rate. See [`PortConfig::shaper_train`].
    pub shaper_train_ns: u64,
    /// While the port has frames it could send, its bucket holds this much
    /// more time at port speed, so that a software switch's loop that
    /// comes late makes up what the port missed (an idle port banks only
    /// the plain bucket). 0 (the default, and the simulator's): none.
    pub shaper_catch_up_ns: u64,
    /// Bytes charged per frame on top of its length (e.g. 24 for FCS +
    /// preamble + inter-frame gap when lengths exclude them). Default 0.
    pub wire_overhead_bytes: u32,
    /// DWRR quantum per unit of weight.
    pub dwrr_quantum_bytes: u32,
    /// Port MTU (for the headroom calculator).
    pub mtu_bytes: u32,
    /// Cable length; lossless PGs without `headroom_bytes` get the R-HR-2 result.
    pub cable_length_m: Option<u32>,
    /// ASIC constants for the headroom calculator.
    pub asic: AsicPreset,
    /// PFC watchdog for this port, if enabled.
    pub watchdog: Option<WatchdogPortConfig>,
}

impl Default for PortConfig {
    fn default() -> Self {
        let mut queues = [QueueConfig::default(); 8];
        queues[6].sched = SchedMode::Strict; // CNP priority (R-MAP-2)
        PortConfig {
            speed_bps: 100_000_000_000,
            mac: EthernetAddress([0x02, 0, 0, 0, 0, 0]),
            pfc_enable: 1 << 3,
            legacy_pause: false,
            prio_to_pg: [0, 1, 2, 3, 4, 5, 6, 7],
            prio_to_queue: [0, 1, 2, 3, 4, 5, 6, 7],
            pgs: [PgConfig::default(); 8],
            queues,
            xoff_quanta: DEFAULT_XOFF_QUANTA,
            shaper_burst_bytes: DEFAULT_SHAPER_BURST_BYTES,
            shaper_burst_ns: 0,
            shaper_train_ns: 0,
            shaper_catch_up_ns: 0,
            wire_overhead_bytes: 0,
            dwrr_quantum_bytes: DEFAULT_DWRR_QUANTUM_BYTES,
            mtu_bytes: 9100,
            cable_length_m: Some(100),
            asic: AsicPreset::default(),
            watchdog: None,
        }
    }
}

impl PortConfig {
    /// Token-bucket depth in bytes: `shaper_burst_bytes`, or
    /// `shaper_burst_ns` at `speed_bps` if that is more.
    pub fn shaper_burst(&self) -> u32 {
        u32::try_from(self.bytes_in(self.shaper_burst_ns))
            .unwrap_or(u32::MAX)
            .max(self.shaper_burst_bytes)
    }

    /// The train a backlogged port waits for, bytes: `shaper_train_ns` at
    /// `speed_bps` (0: none).
    pub fn shaper_train(&self) -> u64 {
        u64::try_from(self.bytes_in(self.shaper_train_ns)).unwrap_or(u64::MAX)
    }

    /// The catch-up a backlogged port banks beyond its bucket, bytes:
    /// `shaper_catch_up_ns` at `speed_bps`.
    pub fn shaper_catch_up(&self) -> u64 {
        u64::try_from(self.bytes_in(self.shaper_catch_up_ns)).unwrap_or(u64::MAX)
    }

    /// Bytes the port sends in `ns` at `speed_bps`.
    fn bytes_in(&self, ns: u64) -> u128 {
        u128::from(self.speed_bps) * u128::from(ns) / (8 * u128::from(crate::time::NANOS_PER_SEC))
    }

    /// Bit g set = PG g holds at least one PFC-enabled priority (lossless).
    pub fn lossless_pg_mask(&self) -> u8 {
        let mut mask = 0;
        for p in 0..8 {
            if self.pfc_enable & (1 << p) != 0 {
                mask |= 1u8 << (self.prio_to_pg[p] & 7);
            }
        }
        mask
    }

    /// The headroom (xoff) bytes of `pg`: the configured value, else the
    /// R-HR-2 result for this port's speed, cable and MTU, else 0 for lossy PGs.
    pub fn pg_headroom_bytes(&self, pg: usize) -> Option<u64> {
        if self.lossless_pg_mask() & (1 << pg) == 0 {
            return Some(0);
        }
        if let Some(h) = self.pgs[pg].headroom_bytes {
            return Some(h);
        }
        let cable = self.cable_length_m?;
        headroom::mellanox(&HeadroomInputs::new(
            self.speed_bps / 1_000_000,
            cable,
            self.mtu_bytes,
            self.asic,
        ))
        .ok()
        .map(|r| r.xoff_bytes)
    }
}

/// The whole traffic-manager configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct TmConfig {
    /// Total buffer in bytes.
    pub buffer_bytes: u64,
    /// Accounting cell; every packet is charged whole cells.
    pub cell_bytes: u32,
    /// R-PFC-TX-2 resume offset.
    pub resume_offset_bytes: u64,
    /// Per-port settings; the port number is the index.
    pub ports: Vec<PortConfig>,
    /// Global watchdog settings (poll interval, BIG_RED_SWITCH).
    pub watchdog: WatchdogConfig,
    /// Shared headroom pool (R-PFC-TX-6): `Some(ratio)` replaces private
    /// per-PG headroom by one pool of ceil(Σ xoff / ratio) bytes; each PG's
    /// xoff stays its cap inside that pool. `None` (default): private headroom.
    pub shp_over_subscribe_ratio: Option<u32>,
}

impl TmConfig {
    /// `n` ports with default settings.
    pub fn with_ports(n: usize) -> Self {
        TmConfig {
            buffer_bytes: DEFAULT_BUFFER_BYTES,
            cell_bytes: DEFAULT_CELL_BYTES,
            resume_offset_bytes: DEFAULT_RESUME_OFFSET_BYTES,
            ports: vec![PortConfig::default(); n],
            watchdog: WatchdogConfig::default(),
            shp_over_subscribe_ratio: None,
        }
    }

    /// Buffer set aside for headroom given the sum of every lossless PG's
    /// xoff: that sum, or ceil(sum / ratio) with a shared headroom pool.
    pub fn headroom_pool_bytes(&self, xoff_total_bytes: u64) -> u64 {
        match self.shp_over_subscribe_ratio {
            Some(r) if r > 0 => xoff_total_bytes.div_ceil(u64::from(r)),
            _ => xoff_total_bytes,
        }
    }

    /// Check everything; list every problem.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let mut problems = Vec::new();
        if self.ports.is_empty() {
            problems.push(ConfigProblem::NoPorts);
        }
        if self.ports.len() > usize::from(u16::MAX) {
            problems.push(ConfigProblem::TooManyPorts(self.ports.len()));
        }
        if self.cell_bytes == 0 || u64::from(self.cell_bytes) > self.buffer_bytes {
            problems.push(ConfigProblem::BadCell {
                cell_bytes: self.cell_bytes,
            });
        }
        if self.shp_over_subscribe_ratio == Some(0) {
            problems.push(ConfigProblem::ZeroShpRatio);
        }
        for (i, port) in self.ports.iter().enumerate() {
            let port_id = i as u16;
            if port.speed_bps == 0 {
                problems.push(ConfigProblem::ZeroSpeed { port: port_id });
            }
            if port.legacy_pause && port.pfc_enable != 0 {
                problems.push(ConfigProblem::PauseAndPfc { port: port_id });
            }
            if port.pfc_enable != 0 && port.xoff_quanta == 0 {
                problems.push(ConfigProblem::ZeroXoffQuanta { port: port_id });
            }
            for p in 0..8u8 {
                if port.prio_to_pg[usize::from(p)] > 7 {
                    problems.push(ConfigProblem::BadMap {
                        port: port_id,
                        priority: p,
                        what: "prio_to_pg",
                    });
                }
                if port.prio_to_queue[usize::from(p)] > 7 {
                    problems.push(ConfigProblem::BadMap {
                        port: port_id,
                        priority: p,
                        what: "prio_to_queue",
                    });
                }
            }
            if port.dwrr_quantum_bytes == 0 {
                problems.push(ConfigProblem::ZeroDwrrQuantum { port: port_id });
            }
            for (pg, pgc) in port.pgs.iter().enumerate() {
                let pg_id = pg as u8;
                check_threshold(pgc.threshold, &mut problems, || ThresholdSite::Pg {
                    port: port_id,
                    pg: pg_id,
                });
                match port.pg_headroom_bytes(pg) {
                    Some(h) => {
                        if let Some(xon) = pgc.xon_bytes
                            && port.lossless_pg_mask() & (1 << pg) != 0
                            && xon > h
                        {
                            problems.push(ConfigProblem::XonAboveXoff {
                                port: port_id,
                                pg: pg_id,
                                xon_bytes: xon,
                                xoff_bytes: h,
                            });
                        }
                    }
                    None => problems.push(ConfigProblem::NoHeadroom {
                        port: port_id,
                        pg: pg_id,
                    }),
                }
            }
            for (q, qc) in port.queues.iter().enumerate() {
                let q_id = q as u8;
                if qc.sched == SchedMode::Dwrr(0) {
                    problems.push(ConfigProblem::ZeroWeight {
                        port: port_id,
                        queue: q_id,
                    });
                }
                check_threshold(qc.limit, &mut problems, || ThresholdSite::Queue {
                    port: port_id,
                    queue: q_id,
                });
            }
            if let Some(wd) = &port.watchdog {
                for reason in wd.problems(&self.watchdog) {
                    problems.push(ConfigProblem::Watchdog {
                        port: port_id,
                        reason,
                    });
                }
                if wd.priorities & !port.pfc_enable != 0 {
                    problems.push(ConfigProblem::Watchdog {
                        port: port_id,
                        reason: "watchdog priorities must be PFC-enabled (lossless)",
                    });
                }
            }
        }
        for reason in self.watchdog.problems() {
            problems.push(ConfigProblem::WatchdogGlobal { reason });
        }
        // The one buffer sum (rocectl headroom and fabric validation use it too).
        let (reserved, _, headroom_pool) = super::budget::totals(self);
        let guaranteed = reserved.saturating_add(headroom_pool);
        if guaranteed > self.buffer_bytes {
            problems.push(ConfigProblem::Overcommitted {
                guaranteed_bytes: guaranteed,
                buffer_bytes: self.buffer_bytes,
            });
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ConfigError { problems })
        }
    }
}

enum ThresholdSite {
    Pg { port: u16, pg: u8 },
    Queue { port: u16, queue: u8 },
}

fn check_threshold(
    t: Threshold,
    problems: &mut Vec<ConfigProblem>,
    site: impl FnOnce() -> ThresholdSite,
) {
    if let Threshold::Dynamic(n) = t
        && !(-8..=7).contains(&n)
    {
        problems.push(match site() {
            ThresholdSite::Pg { port, pg } => ConfigProblem::DynamicThRange {
                port,
                what: "pg",
                index: pg,
                value: n,
            },
            ThresholdSite::Queue { port, queue } => ConfigProblem::DynamicThRange {
                port,
                what: "queue",
                index: queue,
                value: n,
            },
        });
    }
}

/// One problem in a [`TmConfig`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigProblem {
    /// `ports` is empty.
    NoPorts,
    /// More ports than the `u16` port space.
    TooManyPorts(usize),
    /// `cell_bytes` is 0 or larger than the buffer.
    BadCell {
        /// The value.
        cell_bytes: u32,
    },
    /// `speed_bps` is 0.
    ZeroSpeed {
        /// Port.
        port: u16,
    },
    /// Legacy PAUSE and PFC both enabled (R-PFC-FMT-6).
    PauseAndPfc {
        /// Port.
        port: u16,
    },
    /// PFC enabled with `xoff_quanta` 0 (an XOFF that would mean XON).
    ZeroXoffQuanta {
        /// Port.
        port: u16,
    },
    /// A priority map entry above 7.
    BadMap {
        /// Port.
        port: u16,
        /// Priority whose entry is bad.
        priority: u8,
        /// Which map.
        what: &'static str,
    },
    /// `dwrr_quantum_bytes` is 0.
    ZeroDwrrQuantum {
        /// Port.
        port: u16,
    },
    /// `dynamic_th` outside [−8, 7] (R-DT-1).
    DynamicThRange {
        /// Port.
        port: u16,
        /// "pg" or "queue".
        what: &'static str,
        /// PG or queue index.
        index: u8,
        /// The value.
        value: i8,
    },
    /// A lossless PG without headroom and without a cable length to compute it.
    NoHeadroom {
        /// Port.
        port: u16,
        /// PG.
        pg: u8,
    },
    /// XON floor above the PG's xoff (headroom) size: XON must be ≤ XOFF.
    XonAboveXoff {
        /// Port.
        port: u16,
        /// PG.
        pg: u8,
        /// XON bytes.
        xon_bytes: u64,
        /// XOFF (headroom) bytes.
        xoff_bytes: u64,
    },
    /// DWRR weight 0.
    ZeroWeight {
        /// Port.
        port: u16,
        /// Queue.
        queue: u8,
    },
    /// Per-port watchdog settings out of range (R-WD-1).
    Watchdog {
        /// Port.
        port: u16,
        /// Why.
        reason: &'static str,
    },
    /// Global watchdog settings out of range (R-WD-1).
    WatchdogGlobal {
        /// Why.
        reason: &'static str,
    },
    /// `shp_over_subscribe_ratio` is 0.
    ZeroShpRatio,
    /// `handle_config` cannot change the number of ports.
    PortCountChanged {
        /// Ports now.
        from: usize,
        /// Ports in the new config.
        to: usize,
    },
    /// Σ reserved + Σ headroom exceeds the buffer.
    Overcommitted {
        /// Σ reserved + headroom.
        guaranteed_bytes: u64,
        /// Buffer size.
        buffer_bytes: u64,
    },
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ConfigProblem::*;
        match self {
            NoPorts => write!(f, "ports: at least one port is required"),
            TooManyPorts(n) => write!(f, "ports: {n} ports exceed the u16 port space"),
            BadCell { cell_bytes } => {
                write!(f, "cell_bytes: {cell_bytes} must be > 0 and ≤ buffer_bytes")
            }
            ZeroSpeed { port } => write!(f, "ports[{port}].speed_bps: must be > 0"),
            PauseAndPfc { port } => {
                write!(
                    f,
                    "ports[{port}]: legacy_pause and pfc_enable are mutually exclusive (R-PFC-FMT-6)"
                )
            }
            ZeroXoffQuanta { port } => write!(
                f,
                "ports[{port}].xoff_quanta: must be > 0 when PFC is enabled"
            ),
            BadMap {
                port,
                priority,
                what,
            } => write!(f, "ports[{port}].{what}[{priority}]: must be 0..=7"),
            ZeroDwrrQuantum { port } => write!(f, "ports[{port}].dwrr_quantum_bytes: must be > 0"),
            DynamicThRange {
                port,
                what,
                index,
                value,
            } => {
                write!(
                    f,
                    "ports[{port}].{what}s[{index}]: dynamic_th {value} outside [-8, 7]"
                )
            }
            NoHeadroom { port, pg } => write!(
                f,
                "ports[{port}].pgs[{pg}]: lossless PG needs headroom_bytes or a cable_length_m to compute it"
            ),
            XonAboveXoff {
                port,
                pg,
                xon_bytes,
                xoff_bytes,
            } => {
                write!(
                    f,
                    "ports[{port}].pgs[{pg}].xon_bytes: {xon_bytes} above xoff {xoff_bytes}"
                )
            }
            ZeroWeight { port, queue } => write!(
                f,
                "ports[{port}].queues[{queue}].sched: DWRR weight must be ≥ 1"
            ),
            Watchdog { port, reason } => write!(f, "ports[{port}].watchdog: {reason}"),
            WatchdogGlobal { reason } => write!(f, "watchdog: {reason}"),
            ZeroShpRatio => write!(f, "shp_over_subscribe_ratio: must be >= 1"),
            PortCountChanged { from, to } => {
                write!(
                    f,
                    "ports: the port count cannot change from {from} to {to} (build a new Tm)"
                )
            }
            Overcommitted {
                guaranteed_bytes,
                buffer_bytes,
            } => write!(
                f,
                "reserved + headroom = {guaranteed_bytes} bytes exceed buffer_bytes {buffer_bytes}"
            ),
        }
    }
}

/// A rejected configuration: every problem found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid traffic-manager config: {}", list(.problems))]
pub struct ConfigError {
    /// All problems, in config order.
    pub problems: Vec<ConfigProblem>,
}

fn list(problems: &[ConfigProblem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_thresholds_scale_the_free_bytes_and_saturate() {
        assert_eq!(Threshold::Dynamic(0).limit_bytes(1000), 1000);
        assert_eq!(Threshold::Dynamic(3).limit_bytes(1000), 8000);
        assert_eq!(Threshold::Dynamic(-2).limit_bytes(1000), 250);
        assert_eq!(
            Threshold::Dynamic(1).limit_bytes(u64::MAX / 2 + 1),
            u64::MAX
        );
        assert_eq!(
            Threshold::Dynamic(2).limit_bytes(u64::MAX / 4),
            u64::MAX - 3
        );
        assert_eq!(Threshold::Dynamic(7).limit_bytes(0), 0);
        assert_eq!(Threshold::Dynamic(64).limit_bytes(0), u64::MAX);
        assert_eq!(Threshold::Static(0).limit_bytes(5), u64::MAX, "0: no limit");
        assert_eq!(Threshold::Static(4096).limit_bytes(5), 4096);
    }
}
