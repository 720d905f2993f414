//! The fabric QoS configuration model: what an operator asks of a switch
//! (ports, classification maps, buffer and PFC thresholds, headroom, ECN,
//! ETS, watchdog), as plain Rust types validated as a whole.
//!
//! Contract: [`FabricConfig::validate`] returns *every* problem, each naming
//! its field path (`ports[2].mtu_bytes`, `ecn[0].kmax_bytes`), so a client
//! fixes a configuration in one round; nothing is applied unless it is
//! empty. The buffer is checked with the traffic manager's own budget
//! ([`FabricConfig::buffer_budget`], [`crate::tm::BufferBudget`]: per-PG
//! R-HR-2 headroom, reserved space, shared pool), so what validation
//! accepts is what the TM reserves. Persistence is the
//! control plane's business (these types are `serde`).
//!
//! Units are in the names: bytes, bits per second, metres, milliseconds.
//! Priorities are 0..=7, ports are v1model port numbers (0..=511).
//! Ranges follow `roce-semantics.md`: watchdog R-WD-1 (detection
//! 100..=5000 ms, restoration 100..=60000 ms or none, poll 100..=1000 ms,
//! both times ≥ poll), dynamic thresholds R-DT-1 (α = 2^n, n ∈ [−8, 7]),
//! ECN R-ECN-3 (Kmin < Kmax, Pmax ∈ [0, 1]), headroom R-HR-1/2.

use serde::{Deserialize, Serialize};

use crate::tm::{BudgetVerdict, BufferBudget, TmConfig};

/// Highest priority.
pub const MAX_PRIORITY: u8 = 7;
/// Highest v1model port number (bit<9>).
pub const MAX_PORT: u16 = 511;
/// Smallest and largest port MTU accepted.
pub const MTU_RANGE_BYTES: std::ops::RangeInclusive<u32> = 68..=9216;
/// Fastest port speed accepted (800 Gb/s).
pub const MAX_SPEED_BPS: u64 = 800_000_000_000;
/// Longest cable accepted.
pub const MAX_CABLE_M: u32 = 10_000;
/// Dynamic-threshold α range: 2^−8 ..= 2^7 (R-DT-1).
pub const ALPHA_RANGE: std::ops::RangeInclusive<f64> = 0.003_906_25..=128.0;

/// What a port trusts to classify packets into priorities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Trust {
    /// IP DSCP through `dscp_to_priority`.
    Dscp,
    /// 802.1Q PCP through `pcp_to_priority`.
    Pcp,
    /// Nothing: everything gets the default priority.
    None,
}

/// One port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PortConfig {
    /// Port number.
    pub port: u16,
    /// Line rate.
    pub speed_bps: u64,
    /// MTU (L2 payload).
    pub mtu_bytes: u32,
    /// Cable length (headroom sizing).
    pub cable_length_m: u32,
    /// Classification trust; `None` = not given (invalid).
    pub trust: Option<Trust>,
    /// Lossless (PFC-enabled) priorities.
    pub pfc_priorities: Vec<u8>,
}

/// Classification maps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QosMaps {
    /// 64 entries: DSCP → priority.
    pub dscp_to_priority: Vec<u8>,
    /// 8 entries: PCP → priority.
    pub pcp_to_priority: Vec<u8>,
    /// Priority for untrusted or unclassified packets.
    pub default_priority: u8,
}

impl Default for QosMaps {
    fn default() -> Self {
        QosMaps {
            dscp_to_priority: (0..64u8).map(|d| d >> 3).collect(),
            pcp_to_priority: (0..8).collect(),
            default_priority: 0,
        }
    }
}

/// The pause threshold of one priority group.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Threshold {
    /// Fixed XOFF/XON levels of shared-buffer use.
    Static {
        /// Send PFC XOFF at this occupancy.
        xoff_bytes: u64,
        /// Send XON when occupancy falls to this.
        xon_bytes: u64,
    },
    /// Dynamic threshold T = α · free pool (R-DT-1).
    Dynamic {
        /// α.
        alpha: f64,
    },
}

/// Threshold of one priority.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriorityThreshold {
    /// Priority.
    pub priority: u8,
    /// Threshold; `None` = not given (invalid).
    pub threshold: Option<Threshold>,
}

/// Headroom reserved per (port, lossless priority).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Headroom {
    /// Computed from speed, cable length and MTU ([`port_headroom_bytes`]).
    Auto,
    /// Fixed size.
    Explicit {
        /// Bytes per (port, lossless priority).
        bytes: u64,
    },
}

/// Shared buffer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BufferConfig {
    /// Total buffer (shared pool plus headroom).
    pub pool_size_bytes: u64,
    /// Per-priority thresholds.
    pub thresholds: Vec<PriorityThreshold>,
    /// Headroom mode.
    pub headroom: Headroom,
}

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig {
            pool_size_bytes: 16 << 20,
            thresholds: Vec::new(),
            headroom: Headroom::Auto,
        }
    }
}

/// RED/ECN marking of one (port, priority) queue (R-ECN-3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EcnProfile {
    /// Port.
    pub port: u16,
    /// Priority.
    pub priority: u8,
    /// Marking on.
    pub enabled: bool,
    /// Below: never mark.
    pub kmin_bytes: u64,
    /// Above: always mark.
    pub kmax_bytes: u64,
    /// Marking probability at `kmax_bytes`.
    pub pmax: f64,
}

impl EcnProfile {
    /// The marking probability of an ECT packet leaving with `q_bytes`
    /// behind it (R-ECN-3/4): 0 up to Kmin, Pmax·(q − Kmin)/(Kmax − Kmin)
    /// up to Kmax, 1 above; a degenerate ramp (Kmin = Kmax) is a step. The
    /// curve `roce_switch.p4`'s egress implements (with Pmax in 1/65535
    /// steps), for checking what a fabric marked.
    pub fn mark_probability(&self, q_bytes: u64) -> f64 {
        if !self.enabled || q_bytes <= self.kmin_bytes {
            0.0
        } else if q_bytes > self.kmax_bytes {
            1.0
        } else {
            // kmin < q ≤ kmax, so kmax > kmin here.
            self.pmax * (q_bytes - self.kmin_bytes) as f64
                / (self.kmax_bytes - self.kmin_bytes) as f64
        }
    }
}

/// ETS weights of one port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EtsPort {
    /// Port.
    pub port: u16,
    /// 8 weights in percent (index = priority); 0 = strict priority.
    pub weights: Vec<u32>,
}

/// What the PFC watchdog does to a stormed queue (R-WD-9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WatchdogAction {
    /// Drop the queue's packets and ignore PFC.
    Drop,
    /// Ignore PFC so the queue drains.
    Forward,
    /// Count and log only.
    Alert,
}

/// PFC watchdog (R-WD-1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WatchdogConfig {
    /// On.
    pub enabled: bool,
    /// Storm detection time.
    pub detection_time_ms: u32,
    /// Restoration time; `None` = never restore automatically.
    pub restoration_time_ms: Option<u32>,
    /// Action; `None` = not given (invalid when enabled).
    pub action: Option<WatchdogAction>,
    /// Poll interval.
    pub poll_interval_ms: u32,
}

impl Default for WatchdogConfig {
    /// R-WD-2 defaults, disabled.
    fn default() -> Self {
        WatchdogConfig {
            enabled: false,
            detection_time_ms: 200,
            restoration_time_ms: Some(200),
            action: Some(WatchdogAction::Drop),
            poll_interval_ms: 100,
        }
    }
}

/// LLDP/DCBX on the switch's ports (802.1AB, 802.1Qaz). The parameters
/// advertised are not configured here: they are what the TM runs with
/// (PFC enable, priority → queue, ETS weights) and the priority DSCP 26
/// maps to (RoCE's application priority), so they cannot disagree.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DcbxConfig {
    /// Run LLDP with the DCBX TLVs on every fabric port.
    pub enabled: bool,
    /// Chassis ID and System Name (empty: port 0's MAC as chassis ID).
    pub system_name: String,
    /// `msgTxInterval`, seconds (0: the 802.1AB default, 30 s).
    pub tx_interval_s: u32,
}

/// The whole fabric QoS configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FabricConfig {
    /// Ports.
    pub ports: Vec<PortConfig>,
    /// Classification maps.
    pub qos_maps: QosMaps,
    /// Buffer.
    pub buffer: BufferConfig,
    /// ECN profiles.
    pub ecn: Vec<EcnProfile>,
    /// ETS weights.
    pub ets: Vec<EtsPort>,
    /// PFC watchdog.
    pub watchdog: WatchdogConfig,
    /// LLDP/DCBX (absent in older state files: off).
    #[serde(default)]
    pub dcbx: DcbxConfig,
    /// RoCE source allowlists and P_Key partitions (absent in older state
    /// files: nothing filtered).
    #[serde(default)]
    pub security: super::security::SecurityConfig,
}

/// One validation problem.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct ConfigError {
    /// Field path.
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

/// `a; b; c`.
pub fn join(errors: &[ConfigError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Headroom per (port, lossless priority): the explicit size, or the
/// traffic manager's own per-PG size for the port's speed, cable and MTU
/// ([`crate::tm::PortConfig::pg_headroom_bytes`]: R-HR-2, the SONiC/Mellanox
/// formula with the TM's default ASIC constants). `None` when the formula
/// has no answer for the port (a speed outside its tables).
pub fn port_headroom_bytes(p: &PortConfig, headroom: Headroom) -> Option<u64> {
    let mut tm_port = crate::tm::PortConfig {
        speed_bps: p.speed_bps,
        mtu_bytes: p.mtu_bytes,
        cable_length_m: Some(p.cable_length_m),
        pfc_enable: 1,
        prio_to_pg: [0, 1, 2, 3, 4, 5, 6, 7],
        ..crate::tm::PortConfig::default()
    };
    if let Headroom::Explicit { bytes } = headroom {
        tm_port.pgs[0].headroom_bytes = Some(bytes);
    }
    tm_port.pg_headroom_bytes(0)
}

fn err(errors: &mut Vec<ConfigError>, field: impl Into<String>, reason: impl Into<String>) {
    errors.push(ConfigError {
        field: field.into(),
        reason: reason.into(),
    });
}

fn check_priority(errors: &mut Vec<ConfigError>, field: String, p: u8) {
    if p > MAX_PRIORITY {
        err(errors, field, format!("priority {p} is outside 0..=7"));
    }
}

impl FabricConfig {
    /// Total headroom the configuration reserves: Σ xoff of its
    /// [`FabricConfig::buffer_budget`].
    pub fn headroom_total_bytes(&self) -> u64 {
        self.buffer_budget().xoff_total_bytes
    }

    /// The buffer budget of the traffic-manager settings this
    /// configuration plans ([`crate::fabric::tm_config`]) on a switch whose
    /// other ports are lossy: the same sums the traffic manager enforces
    /// ([`BufferBudget`]). Ports outside 0..=511 and ETS entries of ports
    /// not configured are left out (validation reports them).
    pub fn buffer_budget(&self) -> BufferBudget {
        BufferBudget::of(&self.standalone_tm_config())
    }

    /// The traffic-manager settings [`FabricConfig::buffer_budget`] adds
    /// up: this configuration planned on a switch with ports `0..=max
    /// port`, those not configured lossy.
    pub fn standalone_tm_config(&self) -> TmConfig {
        let mut cfg = self.clone();
        cfg.ports.retain(|p| p.port <= MAX_PORT);
        let known: Vec<u16> = cfg.ports.iter().map(|p| p.port).collect();
        cfg.ets.retain(|e| known.contains(&e.port));
        let n = known.iter().map(|&p| usize::from(p) + 1).max().unwrap_or(0);
        let mut base = TmConfig::with_ports(n);
        for p in &mut base.ports {
            p.pfc_enable = 0;
        }
        super::tm::tm_config(&base, &cfg).unwrap_or(base)
    }

    /// Every problem with this configuration (empty = valid).
    pub fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        let mut seen_ports = Vec::new();
        for (i, p) in self.ports.iter().enumerate() {
            let f = |n: &str| format!("ports[{i}].{n}");
            if p.port > MAX_PORT {
                err(
                    &mut e,
                    f("port"),
                    format!("port {} is outside 0..={MAX_PORT}", p.port),
                );
            }
            if seen_ports.contains(&p.port) {
                err(
                    &mut e,
                    f("port"),
                    format!("port {} is configured twice", p.port),
                );
            }
            seen_ports.push(p.port);
            if p.speed_bps == 0 || p.speed_bps > MAX_SPEED_BPS {
                err(
                    &mut e,
                    f("speed_bps"),
                    format!("{} is outside 1..={MAX_SPEED_BPS}", p.speed_bps),
                );
            }
            if !MTU_RANGE_BYTES.contains(&p.mtu_bytes) {
                err(
                    &mut e,
                    f("mtu_bytes"),
                    format!("{} is outside {MTU_RANGE_BYTES:?}", p.mtu_bytes),
                );
            }
            if p.cable_length_m > MAX_CABLE_M {
                err(
                    &mut e,
                    f("cable_length_m"),
                    format!("{} m is longer than {MAX_CABLE_M} m", p.cable_length_m),
                );
            }
            if p.trust.is_none() {
                err(&mut e, f("trust"), "not given (DSCP, PCP or NONE)");
            }
            for (j, &prio) in p.pfc_priorities.iter().enumerate() {
                check_priority(&mut e, format!("ports[{i}].pfc_priorities[{j}]"), prio);
                if p.pfc_priorities[..j].contains(&prio) {
                    err(
                        &mut e,
                        format!("ports[{i}].pfc_priorities[{j}]"),
                        format!("priority {prio} listed twice"),
                    );
                }
            }
        }

        let m = &self.qos_maps;
        if m.dscp_to_priority.len() != 64 {
            err(
                &mut e,
                "qos_maps.dscp_to_priority",
                format!("needs 64 entries, has {}", m.dscp_to_priority.len()),
            );
        }
        for (d, &p) in m.dscp_to_priority.iter().enumerate() {
            check_priority(&mut e, format!("qos_maps.dscp_to_priority[{d}]"), p);
        }
        if m.pcp_to_priority.len() != 8 {
            err(
                &mut e,
                "qos_maps.pcp_to_priority",
                format!("needs 8 entries, has {}", m.pcp_to_priority.len()),
            );
        }
        for (d, &p) in m.pcp_to_priority.iter().enumerate() {
            check_priority(&mut e, format!("qos_maps.pcp_to_priority[{d}]"), p);
        }
        check_priority(
            &mut e,
            "qos_maps.default_priority".into(),
            m.default_priority,
        );

        let b = &self.buffer;
        if b.pool_size_bytes == 0 {
            err(&mut e, "buffer.pool_size_bytes", "must be > 0");
        }
        for (i, t) in b.thresholds.iter().enumerate() {
            check_priority(
                &mut e,
                format!("buffer.thresholds[{i}].priority"),
                t.priority,
            );
            if b.thresholds[..i].iter().any(|o| o.priority == t.priority) {
                err(
                    &mut e,
                    format!("buffer.thresholds[{i}].priority"),
                    format!("priority {} listed twice", t.priority),
                );
            }
            match t.threshold {
                None => err(
                    &mut e,
                    format!("buffer.thresholds[{i}]"),
                    "no static or dynamic threshold given",
                ),
                Some(Threshold::Static {
                    xoff_bytes,
                    xon_bytes,
                }) => {
                    if xon_bytes > xoff_bytes {
                        err(
                            &mut e,
                            format!("buffer.thresholds[{i}].xon_bytes"),
                            format!("xon {xon_bytes} is above xoff {xoff_bytes}"),
                        );
                    }
                    if xoff_bytes == 0 || xoff_bytes > b.pool_size_bytes {
                        err(
                            &mut e,
                            format!("buffer.thresholds[{i}].xoff_bytes"),
                            format!(
                                "{xoff_bytes} is outside 1..={} (the pool)",
                                b.pool_size_bytes
                            ),
                        );
                    }
                }
                Some(Threshold::Dynamic { alpha }) => {
                    if !ALPHA_RANGE.contains(&alpha) {
                        err(
                            &mut e,
                            format!("buffer.thresholds[{i}].dynamic_alpha"),
                            format!("{alpha} is outside [2^-8, 2^7]"),
                        );
                    }
                }
            }
        }
        if let Headroom::Explicit { bytes: 0 } = b.headroom {
            err(&mut e, "buffer.headroom.explicit_bytes", "must be > 0");
        }
        if b.pool_size_bytes > 0 {
            let verdict = self.buffer_budget().verdict();
            if verdict != BudgetVerdict::Lossless {
                err(&mut e, "buffer.headroom", verdict.explain());
            }
        }

        let known = |p: u16| self.ports.iter().any(|c| c.port == p);
        for (i, q) in self.ecn.iter().enumerate() {
            let f = |n: &str| format!("ecn[{i}].{n}");
            if !known(q.port) {
                err(
                    &mut e,
                    f("port"),
                    format!("port {} is not configured", q.port),
                );
            }
            check_priority(&mut e, f("priority"), q.priority);
            if self.ecn[..i]
                .iter()
                .any(|o| o.port == q.port && o.priority == q.priority)
            {
                err(
                    &mut e,
                    f("priority"),
                    format!("(port {}, priority {}) listed twice", q.port, q.priority),
                );
            }
            if q.enabled {
                if q.kmin_bytes >= q.kmax_bytes {
                    err(
                        &mut e,
                        f("kmin_bytes"),
                        format!("kmin {} is not below kmax {}", q.kmin_bytes, q.kmax_bytes),
                    );
                }
                if q.kmax_bytes > b.pool_size_bytes {
                    err(
                        &mut e,
                        f("kmax_bytes"),
                        format!("{} is larger than the pool", q.kmax_bytes),
                    );
                }
            }
            if !(0.0..=1.0).contains(&q.pmax) {
                err(&mut e, f("pmax"), format!("{} is outside [0, 1]", q.pmax));
            }
        }

        for (i, s) in self.ets.iter().enumerate() {
            if !known(s.port) {
                err(
                    &mut e,
                    format!("ets[{i}].port"),
                    format!("port {} is not configured", s.port),
                );
            }
            if self.ets[..i].iter().any(|o| o.port == s.port) {
                err(
                    &mut e,
                    format!("ets[{i}].port"),
                    format!("port {} listed twice", s.port),
                );
            }
            if s.weights.len() != 8 {
                err(
                    &mut e,
                    format!("ets[{i}].weights"),
                    format!("needs 8 weights, has {}", s.weights.len()),
                );
            }
            let sum: u64 = s.weights.iter().map(|&w| u64::from(w)).sum();
            if sum != 0 && sum != 100 {
                err(
                    &mut e,
                    format!("ets[{i}].weights"),
                    format!(
                        "non-strict weights are percentages and must add up to 100 (got {sum})"
                    ),
                );
            }
        }

        let w = &self.watchdog;
        if w.enabled {
            if !(100..=1000).contains(&w.poll_interval_ms) {
                err(
                    &mut e,
                    "watchdog.poll_interval_ms",
                    format!("{} is outside 100..=1000", w.poll_interval_ms),
                );
            }
            if !(100..=5000).contains(&w.detection_time_ms) {
                err(
                    &mut e,
                    "watchdog.detection_time_ms",
                    format!("{} is outside 100..=5000", w.detection_time_ms),
                );
            } else if w.detection_time_ms < w.poll_interval_ms {
                err(
                    &mut e,
                    "watchdog.detection_time_ms",
                    format!(
                        "{} is below the poll interval {}",
                        w.detection_time_ms, w.poll_interval_ms
                    ),
                );
            }
            if let Some(r) = w.restoration_time_ms {
                if !(100..=60_000).contains(&r) {
                    err(
                        &mut e,
                        "watchdog.restoration_time_ms",
                        format!("{r} is outside 100..=60000 (0 = never)"),
                    );
                } else if r < w.poll_interval_ms {
                    err(
                        &mut e,
                        "watchdog.restoration_time_ms",
                        format!("{r} is below the poll interval {}", w.poll_interval_ms),
                    );
                }
            }
            if w.action.is_none() {
                err(
                    &mut e,
                    "watchdog.action",
                    "not given (DROP, FORWARD or ALERT)",
                );
            }
        }
        e.extend(self.security.validate());
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(n: u16) -> PortConfig {
        PortConfig {
            port: n,
            speed_bps: 100_000_000_000,
            mtu_bytes: 4200,
            cable_length_m: 100,
            trust: Some(Trust::Dscp),
            pfc_priorities: vec![3, 4],
        }
    }

    fn good() -> FabricConfig {
        FabricConfig {
            ports: vec![port(0), port(1)],
            buffer: BufferConfig {
                pool_size_bytes: 16 << 20,
                thresholds: vec![
                    PriorityThreshold {
                        priority: 3,
                        threshold: Some(Threshold::Static {
                            xoff_bytes: 200_000,
                            xon_bytes: 150_000,
                        }),
                    },
                    PriorityThreshold {
                        priority: 0,
                        threshold: Some(Threshold::Dynamic { alpha: 1.0 }),
                    },
                ],
                headroom: Headroom::Auto,
            },
            ecn: vec![EcnProfile {
                port: 0,
                priority: 3,
                enabled: true,
                kmin_bytes: 5_000,
                kmax_bytes: 200_000,
                pmax: 0.01,
            }],
            ets: vec![EtsPort {
                port: 1,
                weights: vec![0, 0, 0, 50, 50, 0, 0, 0],
            }],
            watchdog: WatchdogConfig {
                enabled: true,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn fields(c: &FabricConfig) -> Vec<String> {
        c.validate().into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn defaults_and_a_typical_config_are_valid() {
        assert_eq!(FabricConfig::default().validate(), vec![]);
        assert_eq!(good().validate(), vec![]);
    }

    #[test]
    fn every_problem_is_reported_at_once_with_its_field() {
        let mut c = good();
        c.ports[1].port = 0;
        c.ports[0].mtu_bytes = 20;
        c.ports[0].trust = None;
        c.ports[0].pfc_priorities = vec![3, 3, 9];
        c.qos_maps.dscp_to_priority[5] = 8;
        c.qos_maps.pcp_to_priority.pop();
        c.buffer.thresholds[0].threshold = Some(Threshold::Static {
            xoff_bytes: 100,
            xon_bytes: 200,
        });
        c.buffer.thresholds[1].threshold = Some(Threshold::Dynamic { alpha: 0.0 });
        c.ecn[0].kmin_bytes = 300_000;
        c.ecn[0].pmax = 1.5;
        c.ets[0].weights[0] = 10;
        c.watchdog.detection_time_ms = 50;
        c.watchdog.restoration_time_ms = Some(70_000);
        c.watchdog.poll_interval_ms = 2000;
        assert_eq!(
            fields(&c),
            vec![
                "ports[0].mtu_bytes",
                "ports[0].trust",
                "ports[0].pfc_priorities[1]",
                "ports[0].pfc_priorities[2]",
                "ports[1].port",
                "qos_maps.dscp_to_priority[5]",
                "qos_maps.pcp_to_priority",
                "buffer.thresholds[0].xon_bytes",
                "buffer.thresholds[1].dynamic_alpha",
                "ecn[0].kmin_bytes",
                "ecn[0].pmax",
                "ets[0].port",
                "ets[0].weights",
                "watchdog.poll_interval_ms",
                "watchdog.detection_time_ms",
                "watchdog.restoration_time_ms",
            ]
        );
    }

    #[test]
    fn watchdog_times_must_not_be_below_the_poll_interval() {
        let mut c = good();
        c.watchdog.poll_interval_ms = 500;
        c.watchdog.detection_time_ms = 400;
        c.watchdog.restoration_time_ms = Some(300);
        assert_eq!(
            fields(&c),
            vec!["watchdog.detection_time_ms", "watchdog.restoration_time_ms"]
        );
        c.watchdog.enabled = false;
        assert!(
            c.validate().is_empty(),
            "a disabled watchdog is not checked"
        );
    }

    /// E-10 and the AZURE_LOSSLESS profile (R-ECN-5: 1 MiB / 2 MiB / 5 %).
    #[test]
    fn red_ramp_e10() {
        let profile = |kmin_bytes, kmax_bytes, pmax| EcnProfile {
            port: 0,
            priority: 3,
            enabled: true,
            kmin_bytes,
            kmax_bytes,
            pmax,
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        let dcqcn = profile(5_120, 204_800, 0.01);
        assert!(close(dcqcn.mark_probability(104_960), 0.005));
        assert_eq!(dcqcn.mark_probability(5_120), 0.0);
        assert!(close(dcqcn.mark_probability(204_800), 0.01));
        assert_eq!(dcqcn.mark_probability(204_801), 1.0);
        assert!(close(
            profile(400_000, 1_600_000, 0.2).mark_probability(1_000_000),
            0.1
        ));
        let azure = profile(1_048_576, 2_097_152, 0.05);
        assert!(close(azure.mark_probability(1_572_864), 0.025));
        let step = profile(10, 10, 0.5);
        assert_eq!(
            (step.mark_probability(10), step.mark_probability(11)),
            (0.0, 1.0)
        );
        let off = EcnProfile {
            enabled: false,
            ..dcqcn
        };
        assert_eq!(off.mark_probability(1 << 30), 0.0);
    }

    #[test]
    fn headroom_must_fit_in_the_pool() {
        let mut c = good();
        // The TM's R-HR-2 result for 100 GbE, 100 m, MTU 4200 (tens of KB).
        let h = port_headroom_bytes(&c.ports[0], Headroom::Auto).unwrap();
        assert!((30_000..120_000).contains(&h), "{h}");
        c.buffer.pool_size_bytes = 4 * h;
        c.buffer.thresholds.clear();
        c.ecn.clear();
        assert_eq!(
            fields(&c),
            vec!["buffer.headroom"],
            "2 ports × 2 lossless PGs fill the pool"
        );
        c.buffer.headroom = Headroom::Explicit { bytes: 1000 };
        assert!(c.validate().is_empty());
    }
}
