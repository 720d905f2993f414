//! Fabric QoS intent → traffic-manager settings: ports (speed, MTU, cable,
//! lossless priorities), buffer pool, PG thresholds, headroom, ETS weights
//! and the PFC watchdog, layered on the settings a switch started with.
//!
//! Contract: pure; the result still has to pass [`TmConfig::validate`]
//! (the plan checks it). Headroom left `Auto` is sized by the TM itself
//! with the same R-HR-2 formula validation used
//! ([`super::config::port_headroom_bytes`]).

use crate::tm::{self, TmConfig};
use crate::watchdog::{WatchdogPortConfig, WdAction};

use super::config::{FabricConfig, Headroom, PortConfig, Threshold, Trust, WatchdogAction};
use super::plan::PlanError;

/// The traffic-manager settings `fabric` asks for, on top of `base` (port
/// count, MACs, shaper bursts and wire overhead come from `base`).
pub fn tm_config(base: &TmConfig, fabric: &FabricConfig) -> Result<TmConfig, PlanError> {
    let mut cfg = base.clone();
    let n = cfg.ports.len();
    let port = |p: u16| -> Result<usize, PlanError> {
        if usize::from(p) < n {
            Ok(usize::from(p))
        } else {
            Err(PlanError::NoSuchPort { port: p, ports: n })
        }
    };
    for p in &fabric.ports {
        let tm_port = &mut cfg.ports[port(p.port)?];
        tm_port.speed_bps = p.speed_bps;
        tm_port.mtu_bytes = p.mtu_bytes;
        tm_port.cable_length_m = Some(p.cable_length_m);
        tm_port.pfc_enable = p
            .pfc_priorities
            .iter()
            .fold(0u8, |m, &prio| m | (1 << (prio & 7)));
    }
    if fabric.buffer.pool_size_bytes > 0 {
        cfg.buffer_bytes = fabric.buffer.pool_size_bytes;
    }
    for t in &fabric.buffer.thresholds {
        let Some(threshold) = t.threshold else {
            continue;
        };
        let pg = usize::from(t.priority & 7);
        for tm_port in &mut cfg.ports {
            let pg_cfg = &mut tm_port.pgs[pg];
            match threshold {
                Threshold::Dynamic { alpha } => {
                    // α = 2^n (R-DT-1): the nearest representable exponent.
                    let n = alpha.log2().round().clamp(-8.0, 7.0) as i8;
                    pg_cfg.threshold = tm::Threshold::Dynamic(n);
                    pg_cfg.xon_bytes = None;
                }
                Threshold::Static {
                    xoff_bytes,
                    xon_bytes,
                } => {
                    pg_cfg.threshold = tm::Threshold::Static(xoff_bytes);
                    pg_cfg.xon_bytes = Some(xon_bytes);
                }
            }
        }
    }
    for tm_port in &mut cfg.ports {
        for pg in &mut tm_port.pgs {
            pg.headroom_bytes = match fabric.buffer.headroom {
                Headroom::Auto => None,
                Headroom::Explicit { bytes } => Some(bytes),
            };
        }
    }
    for ets in &fabric.ets {
        let tm_port = &mut cfg.ports[port(ets.port)?];
        for (q, &w) in ets.weights.iter().enumerate().take(8) {
            tm_port.queues[q].sched = if w == 0 {
                tm::SchedMode::Strict
            } else {
                tm::SchedMode::Dwrr(u16::try_from(w).unwrap_or(u16::MAX))
            };
        }
    }
    let wd = &fabric.watchdog;
    // Validation checks the poll interval only of an enabled watchdog, so
    // only then does it replace the base's (a disabled watchdog's interval
    // outside 100..=1000 was accepted and then refused by the TM).
    if wd.enabled {
        cfg.watchdog.poll_interval_ms = wd.poll_interval_ms;
    }
    for tm_port in &mut cfg.ports {
        tm_port.watchdog = (wd.enabled && tm_port.pfc_enable != 0).then(|| {
            let mut w = WatchdogPortConfig::start(wd.detection_time_ms, wd.restoration_time_ms);
            w.restoration_time_ms = wd.restoration_time_ms;
            w.action = match wd.action.unwrap_or(WatchdogAction::Drop) {
                WatchdogAction::Drop => WdAction::Drop,
                WatchdogAction::Forward => WdAction::Forward,
                WatchdogAction::Alert => WdAction::Alert,
            };
            w.priorities = tm_port.pfc_enable;
            w
        });
    }
    Ok(cfg)
}

/// The fabric view of the ports a switch started with: what [`tm_config`]
/// would turn back into `base`'s speeds, MTUs, cables and lossless
/// priorities, so a daemon's configuration lists its ports before anyone
/// sets them. Ports trust DSCP, the program's default classification.
pub fn ports_of(base: &TmConfig) -> Vec<PortConfig> {
    (0u16..)
        .zip(&base.ports)
        .map(|(port, p)| PortConfig {
            port,
            speed_bps: p.speed_bps,
            mtu_bytes: p.mtu_bytes,
            cable_length_m: p
                .cable_length_m
                .unwrap_or_else(|| tm::PortConfig::default().cable_length_m.unwrap_or(0)),
            trust: Some(Trust::Dscp),
            pfc_priorities: (0..8u8).filter(|&q| p.pfc_enable & (1 << q) != 0).collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::config::port_headroom_bytes;

    fn port(n: u16, speed_bps: u64, cable_length_m: u32) -> PortConfig {
        PortConfig {
            port: n,
            speed_bps,
            mtu_bytes: 4200,
            cable_length_m,
            trust: Some(Trust::Dscp),
            pfc_priorities: vec![3],
        }
    }

    /// A daemon's starting configuration describes its ports exactly:
    /// applying it leaves the traffic manager as the command line set it.
    #[test]
    fn ports_of_round_trips_through_tm_config() {
        let mut base = TmConfig::with_ports(3);
        base.ports[0].speed_bps = 10_000_000_000;
        base.ports[1].mtu_bytes = 4200;
        base.ports[1].pfc_enable = (1 << 3) | (1 << 4);
        base.ports[2].cable_length_m = Some(7);
        base.ports[2].pfc_enable = 0;
        let fabric = FabricConfig {
            ports: ports_of(&base),
            ..Default::default()
        };
        assert_eq!(fabric.ports[1].pfc_priorities, vec![3, 4]);
        assert!(fabric.ports[2].pfc_priorities.is_empty());
        assert_eq!(fabric.validate(), vec![]);
        let tm = tm_config(&base, &fabric).unwrap();
        for (got, want) in tm.ports.iter().zip(&base.ports) {
            assert_eq!(got.speed_bps, want.speed_bps);
            assert_eq!(got.mtu_bytes, want.mtu_bytes);
            assert_eq!(got.cable_length_m, want.cable_length_m);
            assert_eq!(got.pfc_enable, want.pfc_enable);
        }
    }

    /// Whatever port set the traffic manager accepts at start, the fabric
    /// view of it validates too: a daemon never starts with a configuration
    /// its own service would refuse.
    #[test]
    fn a_switch_the_tm_accepts_has_a_valid_fabric_view() {
        for ports in [1, 4, 16, 32, 64] {
            for speed in [10_000_000_000, 100_000_000_000, 400_000_000_000] {
                let mut base = TmConfig::with_ports(ports);
                for p in &mut base.ports {
                    p.speed_bps = speed;
                }
                let fabric = FabricConfig {
                    ports: ports_of(&base),
                    ..Default::default()
                };
                let problems = fabric.validate();
                if base.validate().is_ok() {
                    assert_eq!(problems, vec![], "{ports} ports at {speed}");
                }
            }
        }
    }

    /// Validation and the TM reserve the same headroom: one formula.
    #[test]
    fn auto_headroom_is_what_the_tm_reserves() {
        for (speed, cable) in [
            (10_000_000_000, 5),
            (25_000_000_000, 100),
            (100_000_000_000, 100),
            (100_000_000_000, 2000),
            (400_000_000_000, 40),
        ] {
            let fabric = FabricConfig {
                ports: vec![port(0, speed, cable)],
                ..Default::default()
            };
            let tm = tm_config(&TmConfig::with_ports(1), &fabric).unwrap();
            let want = port_headroom_bytes(&fabric.ports[0], Headroom::Auto).unwrap();
            assert_eq!(
                tm.ports[0].pg_headroom_bytes(3),
                Some(want),
                "{speed} b/s {cable} m"
            );
            assert_eq!(fabric.headroom_total_bytes(), want);
        }
    }

    #[test]
    fn a_port_the_switch_lacks_is_named() {
        let fabric = FabricConfig {
            ports: vec![port(4, 10_000_000_000, 10)],
            ..Default::default()
        };
        assert_eq!(
            tm_config(&TmConfig::with_ports(2), &fabric),
            Err(PlanError::NoSuchPort { port: 4, ports: 2 })
        );
    }
}
