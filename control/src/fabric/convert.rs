//! Mapping between `roceswitch.fabric.v1` messages and the
//! [`config`](super::config) model. Out-of-range numbers are saturated so
//! that validation, not conversion, reports them with their field name;
//! unset enums and oneofs become `None` for the same reason.

use dataplane::dcbx::PortAgent;
use dataplane::fabric::security::{
    AllowedSource, Membership, Partition, PortSecurity, SecurityConfig,
};
use proto::roceswitch::fabric::v1 as pb;

use super::backend::{
    CounterSet, PgCounters, PortCounters, PriorityCounters, QueueCounters, SecurityDrops,
};
use super::config::*;

fn u8_sat(v: u32) -> u8 {
    u8::try_from(v).unwrap_or(u8::MAX)
}

fn u16_sat(v: u32) -> u16 {
    u16::try_from(v).unwrap_or(u16::MAX)
}

/// Ports from the wire.
pub fn ports_from(p: &pb::PortsConfig) -> Vec<PortConfig> {
    p.ports
        .iter()
        .map(|p| PortConfig {
            port: u16_sat(p.port),
            speed_bps: p.speed_bps,
            mtu_bytes: p.mtu_bytes,
            cable_length_m: p.cable_length_m,
            trust: match pb::Trust::try_from(p.trust) {
                Ok(pb::Trust::Dscp) => Some(Trust::Dscp),
                Ok(pb::Trust::Pcp) => Some(Trust::Pcp),
                Ok(pb::Trust::None) => Some(Trust::None),
                _ => None,
            },
            pfc_priorities: p.pfc_priorities.iter().map(|&x| u8_sat(x)).collect(),
        })
        .collect()
}

/// Ports to the wire.
pub fn ports_to(p: &[PortConfig]) -> pb::PortsConfig {
    pb::PortsConfig {
        ports: p
            .iter()
            .map(|p| pb::PortConfig {
                port: u32::from(p.port),
                speed_bps: p.speed_bps,
                mtu_bytes: p.mtu_bytes,
                cable_length_m: p.cable_length_m,
                trust: match p.trust {
                    Some(Trust::Dscp) => pb::Trust::Dscp,
                    Some(Trust::Pcp) => pb::Trust::Pcp,
                    Some(Trust::None) => pb::Trust::None,
                    None => pb::Trust::Unspecified,
                } as i32,
                pfc_priorities: p.pfc_priorities.iter().map(|&x| u32::from(x)).collect(),
            })
            .collect(),
    }
}

/// Maps from the wire (empty lists mean the defaults).
pub fn maps_from(m: &pb::QosMaps) -> QosMaps {
    let d = QosMaps::default();
    QosMaps {
        dscp_to_priority: if m.dscp_to_priority.is_empty() {
            d.dscp_to_priority
        } else {
            m.dscp_to_priority.iter().map(|&x| u8_sat(x)).collect()
        },
        pcp_to_priority: if m.pcp_to_priority.is_empty() {
            d.pcp_to_priority
        } else {
            m.pcp_to_priority.iter().map(|&x| u8_sat(x)).collect()
        },
        default_priority: u8_sat(m.default_priority),
    }
}

/// Maps to the wire.
pub fn maps_to(m: &QosMaps) -> pb::QosMaps {
    pb::QosMaps {
        dscp_to_priority: m.dscp_to_priority.iter().map(|&x| u32::from(x)).collect(),
        pcp_to_priority: m.pcp_to_priority.iter().map(|&x| u32::from(x)).collect(),
        default_priority: u32::from(m.default_priority),
    }
}

/// Buffer from the wire (no headroom message = automatic).
pub fn buffer_from(b: &pb::BufferConfig) -> BufferConfig {
    use pb::headroom_config::Mode;
    use pb::priority_threshold::Threshold as T;
    BufferConfig {
        pool_size_bytes: b.pool_size_bytes,
        thresholds: b
            .thresholds
            .iter()
            .map(|t| PriorityThreshold {
                priority: u8_sat(t.priority),
                threshold: t.threshold.as_ref().map(|x| match x {
                    T::StaticThreshold(s) => Threshold::Static {
                        xoff_bytes: s.xoff_bytes,
                        xon_bytes: s.xon_bytes,
                    },
                    T::DynamicAlpha(a) => Threshold::Dynamic { alpha: *a },
                }),
            })
            .collect(),
        headroom: match b.headroom.as_ref().and_then(|h| h.mode.as_ref()) {
            Some(Mode::ExplicitBytes(n)) => Headroom::Explicit { bytes: *n },
            _ => Headroom::Auto,
        },
    }
}

/// Buffer to the wire.
pub fn buffer_to(b: &BufferConfig) -> pb::BufferConfig {
    use pb::headroom_config::Mode;
    use pb::priority_threshold::Threshold as T;
    pb::BufferConfig {
        pool_size_bytes: b.pool_size_bytes,
        thresholds: b
            .thresholds
            .iter()
            .map(|t| pb::PriorityThreshold {
                priority: u32::from(t.priority),
                threshold: t.threshold.map(|x| match x {
                    Threshold::Static {
                        xoff_bytes,
                        xon_bytes,
                    } => T::StaticThreshold(pb::StaticThreshold {
                        xoff_bytes,
                        xon_bytes,
                    }),
                    Threshold::Dynamic { alpha } => T::DynamicAlpha(alpha),
                }),
            })
            .collect(),
        headroom: Some(pb::HeadroomConfig {
            mode: Some(match b.headroom {
                Headroom::Auto => Mode::Automatic(true),
                Headroom::Explicit { bytes } => Mode::ExplicitBytes(bytes),
            }),
        }),
    }
}

/// ECN from the wire.
pub fn ecn_from(e: &pb::EcnConfig) -> Vec<EcnProfile> {
    e.profiles
        .iter()
        .map(|p| EcnProfile {
            port: u16_sat(p.port),
            priority: u8_sat(p.priority),
            enabled: p.enabled,
            kmin_bytes: p.kmin_bytes,
            kmax_bytes: p.kmax_bytes,
            pmax: p.pmax,
        })
        .collect()
}

/// ECN to the wire.
pub fn ecn_to(e: &[EcnProfile]) -> pb::EcnConfig {
    pb::EcnConfig {
        profiles: e
            .iter()
            .map(|p| pb::EcnProfile {
                port: u32::from(p.port),
                priority: u32::from(p.priority),
                enabled: p.enabled,
                kmin_bytes: p.kmin_bytes,
                kmax_bytes: p.kmax_bytes,
                pmax: p.pmax,
            })
            .collect(),
    }
}

/// ETS from the wire.
pub fn ets_from(e: &pb::EtsConfig) -> Vec<EtsPort> {
    e.ports
        .iter()
        .map(|p| EtsPort {
            port: u16_sat(p.port),
            weights: p.weights.clone(),
        })
        .collect()
}

/// ETS to the wire.
pub fn ets_to(e: &[EtsPort]) -> pb::EtsConfig {
    pb::EtsConfig {
        ports: e
            .iter()
            .map(|p| pb::EtsPort {
                port: u32::from(p.port),
                weights: p.weights.clone(),
            })
            .collect(),
    }
}

/// Watchdog from the wire (restoration 0 = never).
pub fn watchdog_from(w: &pb::WatchdogConfig) -> WatchdogConfig {
    WatchdogConfig {
        enabled: w.enabled,
        detection_time_ms: w.detection_time_ms,
        restoration_time_ms: (w.restoration_time_ms != 0).then_some(w.restoration_time_ms),
        action: match pb::WatchdogAction::try_from(w.action) {
            Ok(pb::WatchdogAction::Drop) => Some(WatchdogAction::Drop),
            Ok(pb::WatchdogAction::Forward) => Some(WatchdogAction::Forward),
            Ok(pb::WatchdogAction::Alert) => Some(WatchdogAction::Alert),
            _ => None,
        },
        poll_interval_ms: w.poll_interval_ms,
    }
}

/// Watchdog to the wire.
pub fn watchdog_to(w: &WatchdogConfig) -> pb::WatchdogConfig {
    pb::WatchdogConfig {
        enabled: w.enabled,
        detection_time_ms: w.detection_time_ms,
        restoration_time_ms: w.restoration_time_ms.unwrap_or(0),
        action: match w.action {
            Some(WatchdogAction::Drop) => pb::WatchdogAction::Drop,
            Some(WatchdogAction::Forward) => pb::WatchdogAction::Forward,
            Some(WatchdogAction::Alert) => pb::WatchdogAction::Alert,
            None => pb::WatchdogAction::Unspecified,
        } as i32,
        poll_interval_ms: w.poll_interval_ms,
    }
}

/// A whole configuration from the wire; absent sections keep `base`'s.
pub fn config_from(c: &pb::FabricConfig, base: &FabricConfig) -> FabricConfig {
    FabricConfig {
        ports: c
            .ports
            .as_ref()
            .map(ports_from)
            .unwrap_or_else(|| base.ports.clone()),
        qos_maps: c
            .qos_maps
            .as_ref()
            .map(maps_from)
            .unwrap_or_else(|| base.qos_maps.clone()),
        buffer: c
            .buffer
            .as_ref()
            .map(buffer_from)
            .unwrap_or_else(|| base.buffer.clone()),
        ecn: c
            .ecn
            .as_ref()
            .map(ecn_from)
            .unwrap_or_else(|| base.ecn.clone()),
        ets: c
            .ets
            .as_ref()
            .map(ets_from)
            .unwrap_or_else(|| base.ets.clone()),
        watchdog: c
            .watchdog
            .as_ref()
            .map(watchdog_from)
            .unwrap_or_else(|| base.watchdog.clone()),
        dcbx: c
            .dcbx
            .as_ref()
            .map(dcbx_from)
            .unwrap_or_else(|| base.dcbx.clone()),
        security: c
            .security
            .as_ref()
            .map(security_from)
            .unwrap_or_else(|| base.security.clone()),
    }
}

/// A whole configuration to the wire.
pub fn config_to(c: &FabricConfig) -> pb::FabricConfig {
    pb::FabricConfig {
        ports: Some(ports_to(&c.ports)),
        qos_maps: Some(maps_to(&c.qos_maps)),
        buffer: Some(buffer_to(&c.buffer)),
        ecn: Some(ecn_to(&c.ecn)),
        ets: Some(ets_to(&c.ets)),
        watchdog: Some(watchdog_to(&c.watchdog)),
        dcbx: Some(dcbx_to(&c.dcbx)),
        security: Some(security_to(&c.security)),
    }
}

/// RoCE security settings from the wire.
pub fn security_from(s: &pb::SecurityConfig) -> SecurityConfig {
    SecurityConfig {
        ports: s
            .ports
            .iter()
            .map(|p| PortSecurity {
                port: u16_sat(p.port),
                allow: p
                    .allow
                    .iter()
                    .map(|a| AllowedSource {
                        source: a.source.clone(),
                        vlan: a.vlan,
                    })
                    .collect(),
                partitions: p
                    .partitions
                    .iter()
                    .map(|k| Partition {
                        key: k.key,
                        membership: if k.full {
                            Membership::Full
                        } else {
                            Membership::Limited
                        },
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// RoCE security settings to the wire.
pub fn security_to(s: &SecurityConfig) -> pb::SecurityConfig {
    pb::SecurityConfig {
        ports: s
            .ports
            .iter()
            .map(|p| pb::PortSecurity {
                port: u32::from(p.port),
                allow: p
                    .allow
                    .iter()
                    .map(|a| pb::AllowedSource {
                        source: a.source.clone(),
                        vlan: a.vlan,
                    })
                    .collect(),
                partitions: p
                    .partitions
                    .iter()
                    .map(|k| pb::Partition {
                        key: k.key,
                        full: k.membership == Membership::Full,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// DCBX settings from the wire.
pub fn dcbx_from(d: &pb::DcbxConfig) -> DcbxConfig {
    DcbxConfig {
        enabled: d.enabled,
        system_name: d.system_name.clone(),
        tx_interval_s: d.tx_interval_s,
    }
}

/// DCBX settings to the wire.
pub fn dcbx_to(d: &DcbxConfig) -> pb::DcbxConfig {
    pb::DcbxConfig {
        enabled: d.enabled,
        system_name: d.system_name.clone(),
        tx_interval_s: d.tx_interval_s,
    }
}

/// One port's DCBX agent, as `rocectl dcbx` shows it.
pub fn dcbx_status_to(port: u16, a: &PortAgent) -> pb::DcbxPortStatus {
    let oper = a.operational();
    let n = a.neighbor();
    let stats = a.stats();
    pb::DcbxPortStatus {
        port: u32::from(port),
        local_pfc_enable: u32::from(oper.pfc_enable),
        local_roce_priority: oper.rocev2_priority().map(u32::from),
        local_prio_tc: oper.ets.prio_tc.iter().map(|&t| u32::from(t)).collect(),
        has_neighbor: n.is_some(),
        neighbor_chassis: n.map(|n| n.lldp.chassis.to_string()).unwrap_or_default(),
        neighbor_port: n.map(|n| n.lldp.port.to_string()).unwrap_or_default(),
        neighbor_system_name: n
            .and_then(|n| n.lldp.system_name.clone())
            .unwrap_or_default(),
        neighbor_willing: n.is_some_and(|n| n.willing()),
        neighbor_pfc_enable: n.and_then(|n| n.pfc_enable()).map(u32::from),
        neighbor_roce_priority: n.and_then(|n| n.rocev2_priority()).map(u32::from),
        neighbor_prio_tc: n
            .and_then(|n| n.lldp.ets_config)
            .map(|e| e.prio_tc.iter().map(|&t| u32::from(t)).collect())
            .unwrap_or_default(),
        mismatch: a.mismatch().describe(),
        tx_frames: stats.tx_frames,
        rx_frames: stats.rx_frames,
        rx_discarded: stats.rx_discarded,
        ageouts: stats.ageouts,
    }
}

/// Counters to the wire.
pub fn counters_to(c: &PriorityCounters) -> pb::PriorityCounters {
    pb::PriorityCounters {
        port: u32::from(c.port),
        priority: u32::from(c.priority),
        rx_packets: c.rx_packets,
        rx_bytes: c.rx_bytes,
        tx_packets: c.tx_packets,
        tx_bytes: c.tx_bytes,
        drops: c.drops,
        pfc_rx_frames: c.pfc_rx_frames,
        pfc_tx_frames: c.pfc_tx_frames,
        ecn_marked: c.ecn_marked,
        watchdog_storms: c.watchdog_storms,
        queue_depth_bytes: c.queue_depth_bytes,
        kernel_drops: c.kernel_drops,
        pause_rx_ns: c.pause_rx_ns,
        pause_tx_ns: c.pause_tx_ns,
        pause_rx_transitions: c.pause_rx_transitions,
        rx_drop_packets: c.rx_drop_packets,
        tx_drop_packets: c.tx_drop_packets,
        paused: c.paused,
        xoff: c.xoff,
    }
}

/// Counters from the wire (port and priority numbers that do not fit are
/// clamped; the daemon never sends them).
pub fn counters_from(c: &pb::PriorityCounters) -> PriorityCounters {
    PriorityCounters {
        port: narrow(c.port),
        priority: narrow(c.priority),
        rx_packets: c.rx_packets,
        rx_bytes: c.rx_bytes,
        tx_packets: c.tx_packets,
        tx_bytes: c.tx_bytes,
        drops: c.drops,
        pfc_rx_frames: c.pfc_rx_frames,
        pfc_tx_frames: c.pfc_tx_frames,
        ecn_marked: c.ecn_marked,
        watchdog_storms: c.watchdog_storms,
        queue_depth_bytes: c.queue_depth_bytes,
        kernel_drops: c.kernel_drops,
        pause_rx_ns: c.pause_rx_ns,
        pause_tx_ns: c.pause_tx_ns,
        pause_rx_transitions: c.pause_rx_transitions,
        rx_drop_packets: c.rx_drop_packets,
        tx_drop_packets: c.tx_drop_packets,
        paused: c.paused,
        xoff: c.xoff,
    }
}

fn narrow<T: TryFrom<u32> + Bounded>(v: u32) -> T {
    T::try_from(v).unwrap_or(T::MAX)
}

/// Integer types with a largest value (for [`narrow`]).
trait Bounded {
    const MAX: Self;
}
impl Bounded for u8 {
    const MAX: u8 = u8::MAX;
}
impl Bounded for u16 {
    const MAX: u16 = u16::MAX;
}

/// A counter set to the wire (`GetCounters`' reply).
pub fn counter_set_to(set: &CounterSet) -> pb::CountersReply {
    pb::CountersReply {
        counters: set.priorities.iter().map(counters_to).collect(),
        queues: set
            .queues
            .iter()
            .map(|q| pb::QueueCounters {
                port: u32::from(q.port),
                queue: u32::from(q.queue),
                packets: q.packets,
                bytes: q.bytes,
                dropped_packets: q.dropped_packets,
                ecn_marked_packets: q.ecn_marked_packets,
                depth_bytes: q.depth_bytes,
                watermark_bytes: q.watermark_bytes,
            })
            .collect(),
        pgs: set
            .pgs
            .iter()
            .map(|g| pb::PgCounters {
                port: u32::from(g.port),
                pg: u32::from(g.pg),
                reserved_bytes: g.reserved_bytes,
                shared_bytes: g.shared_bytes,
                headroom_bytes: g.headroom_bytes,
                shared_watermark_bytes: g.shared_watermark_bytes,
                xoff_room_watermark_bytes: g.xoff_room_watermark_bytes,
                xoff: g.xoff,
                xoff_threshold_bytes: g.xoff_threshold_bytes,
                xon_threshold_bytes: g.xon_threshold_bytes,
            })
            .collect(),
        ports: set
            .ports
            .iter()
            .map(|p| pb::PortCounters {
                port: u32::from(p.port),
                name: p.name.clone(),
                rx_discards_phy: p.rx_discards_phy,
                tx_discards_phy: p.tx_discards_phy,
                pause_storm_warning_events: p.pause_storm_warning_events,
                pause_storm_error_events: p.pause_storm_error_events,
                rx_ecn_mark: p.rx_ecn_mark,
                oper_down: p.oper_down,
                down_cause: p.down_cause.clone(),
                oper_down_events: p.oper_down_events,
                oper_up_events: p.oper_up_events,
                roce_security_rocev2_source_drops: p.security_drops.rocev2_source,
                roce_security_rocev1_source_drops: p.security_drops.rocev1_source,
                roce_security_pkey_ingress_drops: p.security_drops.pkey_ingress,
                roce_security_pkey_egress_drops: p.security_drops.pkey_egress,
            })
            .collect(),
    }
}

/// `GetCounters`' reply back to a counter set.
pub fn counter_set_from(r: &pb::CountersReply) -> CounterSet {
    CounterSet {
        priorities: r.counters.iter().map(counters_from).collect(),
        queues: r
            .queues
            .iter()
            .map(|q| QueueCounters {
                port: narrow(q.port),
                queue: narrow(q.queue),
                packets: q.packets,
                bytes: q.bytes,
                dropped_packets: q.dropped_packets,
                ecn_marked_packets: q.ecn_marked_packets,
                depth_bytes: q.depth_bytes,
                watermark_bytes: q.watermark_bytes,
            })
            .collect(),
        pgs: r
            .pgs
            .iter()
            .map(|g| PgCounters {
                port: narrow(g.port),
                pg: narrow(g.pg),
                reserved_bytes: g.reserved_bytes,
                shared_bytes: g.shared_bytes,
                headroom_bytes: g.headroom_bytes,
                shared_watermark_bytes: g.shared_watermark_bytes,
                xoff_room_watermark_bytes: g.xoff_room_watermark_bytes,
                xoff: g.xoff,
                xoff_threshold_bytes: g.xoff_threshold_bytes,
                xon_threshold_bytes: g.xon_threshold_bytes,
            })
            .collect(),
        ports: r
            .ports
            .iter()
            .map(|p| PortCounters {
                port: narrow(p.port),
                name: p.name.clone(),
                rx_discards_phy: p.rx_discards_phy,
                tx_discards_phy: p.tx_discards_phy,
                pause_storm_warning_events: p.pause_storm_warning_events,
                pause_storm_error_events: p.pause_storm_error_events,
                rx_ecn_mark: p.rx_ecn_mark,
                oper_down: p.oper_down,
                down_cause: p.down_cause.clone(),
                oper_down_events: p.oper_down_events,
                oper_up_events: p.oper_up_events,
                security_drops: SecurityDrops {
                    rocev2_source: p.roce_security_rocev2_source_drops,
                    rocev1_source: p.roce_security_rocev1_source_drops,
                    pkey_ingress: p.roce_security_pkey_ingress_drops,
                    pkey_egress: p.roce_security_pkey_egress_drops,
                },
            })
            .collect(),
    }
}
