//! What each switch of a lab topology is told: its ports (from the links),
//! its QoS (from the topology's `[qos]` table), and its routes (every
//! host's /32 over all shortest paths, ECMP where there are several).
//!
//! Contract: [`setups`] is a pure function of the [`Topology`], so a
//! namespace lab (which sends each [`SwitchSetup`] to its `roceswitch` over
//! the fabric service and P4Runtime) and the simulator (which applies it
//! with [`dataplane::fabric::SwitchPlan`]) configure identical switches:
//! the same [`FabricConfig`], the same table entries, the same ids.
//!
//! Conventions: switch interface `pN` is port N, and a switch's ports are
//! `p0..pN-1` without gaps (as `roceswitch --port N=pN` numbers them).
//! Every switch routes for [`ROUTER_MAC`] and sends routed frames to a
//! neighbouring switch's router MAC or to the host's own MAC. Switch `i`
//! (in file order) hashes ECMP with seed `i + 1`, so no two tiers polarize.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::IpAddr;

use dataplane::fabric::config::{
    BufferConfig, EcnProfile, Headroom, PortConfig, Trust, WatchdogAction, WatchdogConfig,
};
use dataplane::fabric::{Bridged, FabricConfig, L3Config, NextHop, Route};
use serde::{Deserialize, Serialize};

use crate::topo::{Topology, parse_endpoint};
use crate::units::{parse_mac, parse_rate_bps};

/// The MAC every lab switch routes for (hosts send to it, switches send to
/// each other with it).
pub const ROUTER_MAC: [u8; 6] = [0x02, 0x52, 0x53, 0x00, 0x00, 0x01];

/// MTU of a link that does not give one, bytes.
pub const DEFAULT_MTU_BYTES: u32 = 1500;

/// A lab's QoS: the same on every switch port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QosSpec {
    /// PFC-enabled (lossless) priorities.
    pub lossless_priorities: Vec<u8>,
    /// Cable length assumed for headroom sizing, metres.
    pub cable_m: u32,
    /// PFC headroom per (port, lossless priority); `None`: the R-HR-2
    /// calculator's size for each port's speed, cable and MTU.
    pub headroom_bytes: Option<u64>,
    /// Static XOFF threshold of the lossless priorities' shared use, bytes
    /// (with `xon_bytes`); `None`: the dynamic threshold.
    pub xoff_bytes: Option<u64>,
    /// Static XON level, bytes (with `xoff_bytes`).
    pub xon_bytes: Option<u64>,
    /// Whole buffer of each switch (shared pool plus headroom), bytes;
    /// `None`: the fabric default's shared pool plus the headroom this
    /// switch reserves, so a lab at any speed affords its headroom.
    pub pool_bytes: Option<u64>,
    /// RED/ECN marking on the lossless priorities of every port.
    pub ecn: Option<EcnSpec>,
    /// PFC watchdog on every port with a lossless priority.
    pub watchdog: Option<WatchdogSpec>,
    /// LLDP with the DCBX TLVs on every switch port (the switch advertises
    /// its PFC and RoCE priority; willing hosts adopt them).
    pub dcbx: bool,
}

impl Default for QosSpec {
    fn default() -> Self {
        QosSpec {
            lossless_priorities: vec![3],
            cable_m: 10,
            headroom_bytes: None,
            xoff_bytes: None,
            xon_bytes: None,
            pool_bytes: None,
            ecn: None,
            watchdog: None,
            dcbx: false,
        }
    }
}

/// A RED ramp (R-ECN-3).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnSpec {
    /// Queue depth where marking starts, bytes.
    pub kmin_bytes: u64,
    /// Queue depth where marking reaches `pmax`, bytes.
    pub kmax_bytes: u64,
    /// Marking probability at `kmax_bytes`.
    pub pmax: f64,
}

/// PFC watchdog settings (R-WD-1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchdogSpec {
    /// Storm detection time, ms.
    pub detection_ms: u32,
    /// Restoration time, ms (0 = never).
    #[serde(default)]
    pub restoration_ms: u32,
    /// Poll interval, ms.
    #[serde(default = "default_poll_ms")]
    pub poll_ms: u32,
    /// Drop the stormed queue's packets (true) or forward them (false).
    #[serde(default = "default_true")]
    pub drop: bool,
}

fn default_poll_ms() -> u32 {
    100
}

fn default_true() -> bool {
    true
}

/// Everything one switch is told.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchSetup {
    /// Switch node name.
    pub name: String,
    /// Fabric QoS configuration (its `ports` are the switch's ports).
    pub fabric: FabricConfig,
    /// Routing.
    pub routes: L3Config,
}

/// Why a topology's switches cannot be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot set up the switches:\n  {}", .0.join("\n  "))]
pub struct SetupError(pub Vec<String>);

/// The port number of switch interface `pN`.
pub fn switch_port(iface: &str) -> Option<u16> {
    let digits = iface.strip_prefix('p')?;
    if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
        return None;
    }
    digits.parse().ok()
}

/// The fabric configuration `qos` means for a switch with `ports` (number,
/// speed, MTU).
pub fn fabric_config(qos: &QosSpec, ports: &[(u16, u64, u32)]) -> FabricConfig {
    let mut cfg = FabricConfig {
        ports: ports
            .iter()
            .map(|&(port, speed_bps, mtu_bytes)| PortConfig {
                port,
                speed_bps,
                mtu_bytes,
                cable_length_m: qos.cable_m,
                trust: Some(Trust::Dscp),
                pfc_priorities: qos.lossless_priorities.clone(),
            })
            .collect(),
        buffer: BufferConfig {
            pool_size_bytes: 0,
            thresholds: Vec::new(),
            headroom: match qos.headroom_bytes {
                Some(bytes) => Headroom::Explicit { bytes },
                None => Headroom::Auto,
            },
        },
        ..Default::default()
    };
    // A lab switch is software: it can afford the default shared pool on
    // top of whatever headroom its speeds and cables need (sized by the
    // fabric's own formula), where an ASIC's fixed buffer could not.
    cfg.buffer.pool_size_bytes = qos.pool_bytes.unwrap_or_else(|| {
        BufferConfig::default()
            .pool_size_bytes
            .saturating_add(cfg.headroom_total_bytes())
    });
    if let (Some(xoff_bytes), Some(xon_bytes)) = (qos.xoff_bytes, qos.xon_bytes) {
        for &priority in &qos.lossless_priorities {
            cfg.buffer
                .thresholds
                .push(dataplane::fabric::config::PriorityThreshold {
                    priority,
                    threshold: Some(dataplane::fabric::config::Threshold::Static {
                        xoff_bytes,
                        xon_bytes,
                    }),
                });
        }
    }
    if let Some(e) = qos.ecn {
        for &(port, ..) in ports {
            for &priority in &qos.lossless_priorities {
                cfg.ecn.push(EcnProfile {
                    port,
                    priority,
                    enabled: true,
                    kmin_bytes: e.kmin_bytes,
                    kmax_bytes: e.kmax_bytes,
                    pmax: e.pmax,
                });
            }
        }
    }
    cfg.dcbx.enabled = qos.dcbx;
    if let Some(w) = qos.watchdog {
        cfg.watchdog = WatchdogConfig {
            enabled: true,
            detection_time_ms: w.detection_ms,
            restoration_time_ms: (w.restoration_ms != 0).then_some(w.restoration_ms),
            action: Some(if w.drop {
                WatchdogAction::Drop
            } else {
                WatchdogAction::Forward
            }),
            poll_interval_ms: w.poll_ms,
        };
    }
    cfg
}

/// A neighbour reached through a switch port.
#[derive(Debug, Clone, Copy)]
enum Peer {
    Switch(usize),
    Host(usize),
}

/// Every switch's setup, in the topology's switch order (see the module doc).
pub fn setups(topo: &Topology) -> Result<Vec<SwitchSetup>, SetupError> {
    let mut errs = Vec::new();
    let sw_index: BTreeMap<&str, usize> = topo
        .switches
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let host_index: BTreeMap<&str, usize> = topo
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.name.as_str(), i))
        .collect();
    let mut host_macs = Vec::new();
    for h in &topo.hosts {
        match parse_mac(&h.mac) {
            Ok(m) => host_macs.push(m),
            Err(e) => {
                errs.push(format!("host {}: {e}", h.name));
                host_macs.push([0; 6]);
            }
        }
    }
    // Per switch: port → (speed, MTU, peer).
    let mut ports: Vec<BTreeMap<u16, (u64, u32, Peer)>> = vec![BTreeMap::new(); sw_index.len()];
    for (i, l) in topo.links.iter().enumerate() {
        let (Some(a), Some(b)) = (parse_endpoint(&l.a), parse_endpoint(&l.b)) else {
            errs.push(format!("link {i}: endpoints must be node:iface"));
            continue;
        };
        let speed = match parse_rate_bps(&l.speed) {
            Ok(s) => s,
            Err(e) => {
                errs.push(format!("link {i}: {e}"));
                continue;
            }
        };
        let peer_of = |e: &crate::topo::Endpoint| {
            sw_index
                .get(e.node.as_str())
                .map(|&s| Peer::Switch(s))
                .or_else(|| host_index.get(e.node.as_str()).map(|&h| Peer::Host(h)))
        };
        for (me, other) in [(&a, &b), (&b, &a)] {
            let Some(&s) = sw_index.get(me.node.as_str()) else {
                continue;
            };
            let Some(port) = switch_port(&me.iface) else {
                errs.push(format!(
                    "link {i}: switch interface {}:{} is not named pN",
                    me.node, me.iface
                ));
                continue;
            };
            let Some(peer) = peer_of(other) else {
                errs.push(format!("link {i}: unknown node {}", other.node));
                continue;
            };
            let mtu = l.mtu.unwrap_or(DEFAULT_MTU_BYTES);
            ports[s].insert(port, (speed, mtu, peer));
        }
    }
    for (s, p) in ports.iter().enumerate() {
        let name = &topo.switches[s].name;
        for (k, &n) in p.keys().enumerate() {
            if usize::from(n) != k {
                errs.push(format!(
                    "switch {name}: ports must be p0..p{} without gaps (p{k} is missing)",
                    p.len() - 1
                ));
                break;
            }
        }
    }
    if !errs.is_empty() {
        return Err(SetupError(errs));
    }

    // Hop counts from every host, over switches only (hosts do not forward).
    let dist: Vec<Vec<Option<u32>>> = (0..topo.hosts.len())
        .map(|h| {
            let mut d = vec![None; ports.len()];
            let mut queue = VecDeque::new();
            for (s, p) in ports.iter().enumerate() {
                if p.values()
                    .any(|&(_, _, peer)| matches!(peer, Peer::Host(x) if x == h))
                {
                    d[s] = Some(1);
                    queue.push_back(s);
                }
            }
            while let Some(s) = queue.pop_front() {
                for &(_, _, peer) in ports[s].values() {
                    if let Peer::Switch(n) = peer
                        && d[n].is_none()
                    {
                        d[n] = d[s].map(|x| x + 1);
                        queue.push_back(n);
                    }
                }
            }
            d
        })
        .collect();

    let mut out = Vec::new();
    for (s, p) in ports.iter().enumerate() {
        let port_list: Vec<(u16, u64, u32)> = p
            .iter()
            .map(|(&port, &(speed, mtu, _))| (port, speed, mtu))
            .collect();
        let mut routes = Vec::new();
        let mut bridged = Vec::new();
        for (h, host) in topo.hosts.iter().enumerate() {
            let Some(mine) = dist[h][s] else {
                continue; // unreachable from here
            };
            let explicit = topo.switches[s].routes.iter().find(|r| r.to == host.name);
            let mut hops = BTreeSet::new();
            if let Some(r) = explicit {
                for via in &r.via {
                    let peer =
                        switch_port(via).and_then(|n| p.get(&n).map(|&(.., peer)| (n, peer)));
                    match peer {
                        Some((port, Peer::Host(x))) => hops.insert(NextHop {
                            port,
                            dst_mac: host_macs[x],
                        }),
                        Some((port, Peer::Switch(_))) => hops.insert(NextHop {
                            port,
                            dst_mac: ROUTER_MAC,
                        }),
                        None => {
                            errs.push(format!(
                                "switch {}: route to {}: {via} is not one of its ports",
                                topo.switches[s].name, host.name
                            ));
                            false
                        }
                    };
                }
            }
            for (&port, &(_, _, peer)) in p.iter().filter(|_| explicit.is_none()) {
                match peer {
                    Peer::Host(x) if x == h => {
                        hops.insert(NextHop {
                            port,
                            dst_mac: host_macs[h],
                        });
                    }
                    Peer::Switch(n) if dist[h][n].is_some_and(|d| d + 1 == mine) => {
                        hops.insert(NextHop {
                            port,
                            dst_mac: ROUTER_MAC,
                        });
                    }
                    _ => {}
                }
            }
            // Bridged toward the host through the first shortest-path port
            // (L2 has no ECMP).
            if let (Some(vid), Some(first)) = (host.vlan, hops.first()) {
                bridged.push(Bridged {
                    vid,
                    mac: host_macs[h],
                    port: first.port,
                });
            }
            let next_hops: Vec<NextHop> = hops.into_iter().collect();
            for ip in std::iter::once(host.ip).chain(host.kernel_ip) {
                routes.push(Route {
                    prefix: IpAddr::V4(ip),
                    prefix_len: 32,
                    next_hops: next_hops.clone(),
                });
            }
        }
        out.push(SwitchSetup {
            name: topo.switches[s].name.clone(),
            fabric: fabric_config(&topo.qos, &port_list),
            routes: L3Config {
                router_mac: ROUTER_MAC,
                ecmp_seed: s as u32 + 1,
                routes,
                bridged,
            },
        });
    }
    if !errs.is_empty() {
        return Err(SetupError(errs));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEAF_SPINE: &str = r#"
        name = "ls"
        [[switches]]
        name = "leaf1"
        [[switches]]
        name = "leaf2"
        [[switches]]
        name = "spine1"
        [[switches]]
        name = "spine2"
        [[hosts]]
        name = "ha"
        mac = "02:00:00:00:02:01"
        ip = "10.0.2.1"
        [[hosts]]
        name = "hb"
        mac = "02:00:00:00:02:02"
        ip = "10.0.2.2"
        [[links]]
        a = "ha:eth0"
        b = "leaf1:p0"
        speed = "1G"
        mtu = 9000
        [[links]]
        a = "hb:eth0"
        b = "leaf2:p0"
        speed = "1G"
        [[links]]
        a = "leaf1:p1"
        b = "spine1:p0"
        speed = "10G"
        [[links]]
        a = "leaf1:p2"
        b = "spine2:p0"
        speed = "10G"
        [[links]]
        a = "leaf2:p1"
        b = "spine1:p1"
        speed = "10G"
        [[links]]
        a = "leaf2:p2"
        b = "spine2:p1"
        speed = "10G"
        [qos]
        lossless_priorities = [3, 4]
        ecn = { kmin_bytes = 20000, kmax_bytes = 200000, pmax = 0.2 }
    "#;

    fn hop(port: u16, dst_mac: [u8; 6]) -> NextHop {
        NextHop { port, dst_mac }
    }

    #[test]
    fn leaf_spine_routes_are_shortest_paths_with_ecmp() {
        let topo = Topology::from_toml(LEAF_SPINE).unwrap();
        let s = setups(&topo).unwrap();
        let names: Vec<&str> = s.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["leaf1", "leaf2", "spine1", "spine2"]);
        let leaf1 = &s[0];
        let ha = [2, 0, 0, 0, 2, 1];
        assert_eq!(leaf1.routes.routes[0].next_hops, vec![hop(0, ha)]);
        assert_eq!(
            leaf1.routes.routes[1].next_hops,
            vec![hop(1, ROUTER_MAC), hop(2, ROUTER_MAC)],
            "two equal-cost uplinks"
        );
        let spine2 = &s[3];
        assert_eq!(spine2.routes.routes[0].next_hops, vec![hop(0, ROUTER_MAC)]);
        assert_eq!(spine2.routes.routes[1].next_hops, vec![hop(1, ROUTER_MAC)]);
        let seeds: BTreeSet<u32> = s.iter().map(|x| x.routes.ecmp_seed).collect();
        assert_eq!(seeds.len(), 4, "a seed per switch");
    }

    #[test]
    fn explicit_routes_replace_the_shortest_paths_of_their_switch() {
        // leaf1 sends hb's traffic over spine2 only; leaf2 keeps its ECMP.
        let text = LEAF_SPINE.replace(
            "name = \"leaf1\"",
            "name = \"leaf1\"\nroceswitch = true\nroutes = [{ to = \"hb\", via = [\"p2\"] }]",
        );
        let topo = Topology::from_toml(&text).unwrap();
        let s = setups(&topo).unwrap();
        assert_eq!(s[0].routes.routes[1].next_hops, vec![hop(2, ROUTER_MAC)]);
        let ha = [2, 0, 0, 0, 2, 1];
        assert_eq!(
            s[0].routes.routes[0].next_hops,
            vec![hop(0, ha)],
            "hosts without a route keep the shortest path"
        );
        assert_eq!(s[1].routes.routes[0].next_hops.len(), 2);
        // A port the switch does not have, a host that does not exist.
        let bad = text.replace("via = [\"p2\"]", "via = [\"p9\"]");
        let e = setups(&Topology::from_toml(&bad).unwrap()).unwrap_err();
        assert!(e.to_string().contains("p9 is not one of its ports"), "{e}");
        let bad = text.replace("to = \"hb\"", "to = \"hz\"");
        let e = Topology::from_toml(&bad).unwrap_err();
        assert!(e.to_string().contains("no such host"), "{e}");
    }

    #[test]
    fn a_hosts_kernel_address_is_routed_like_its_roce_address() {
        let text = LEAF_SPINE.replace(
            "ip = \"10.0.2.2\"",
            "ip = \"10.0.2.2\"\nkernel_ip = \"10.0.2.102\"\nextra_commands = [[\"sleep\", \"1\"]]",
        );
        let topo = Topology::from_toml(&text).unwrap();
        let hb = topo.host("hb").unwrap();
        let logs: Vec<String> = hb.commands().into_iter().map(|(l, _)| l).collect();
        assert_eq!(logs, ["hb-2"], "no command, one extra: its own log");
        for s in setups(&topo).unwrap() {
            let to = |ip: [u8; 4]| {
                s.routes
                    .routes
                    .iter()
                    .find(|r| r.prefix == IpAddr::from(ip))
                    .map(|r| r.next_hops.clone())
            };
            assert!(to([10, 0, 2, 102]).is_some(), "{}: no route", s.name);
            assert_eq!(to([10, 0, 2, 102]), to([10, 0, 2, 2]), "{}", s.name);
        }
        // The kernel address may not be another host's.
        let clash = text.replace("10.0.2.102", "10.0.2.1");
        let e = Topology::from_toml(&clash).unwrap_err();
        assert!(e.to_string().contains("also used by"), "{e}");
    }

    /// The lab's headroom at 10G and 25G (8 ms of line rate per port and
    /// lossless priority) is more than the default 16 MiB buffer: the pool
    /// grows by what the headroom takes, so the configuration validates
    /// and the default shared pool is still there for queues.
    #[test]
    fn the_pool_affords_the_headroom_at_every_speed() {
        for speed_bps in [1_000_000_000u64, 10_000_000_000, 25_000_000_000] {
            let headroom = speed_bps / 1000; // 8 ms of line rate, in bytes
            let qos = QosSpec {
                headroom_bytes: Some(headroom),
                ..QosSpec::default()
            };
            let ports: Vec<(u16, u64, u32)> = (0..3).map(|p| (p, speed_bps, 9000)).collect();
            let cfg = fabric_config(&qos, &ports);
            assert_eq!(cfg.validate(), vec![], "{speed_bps}");
            let shared = cfg.buffer.pool_size_bytes - cfg.headroom_total_bytes();
            assert_eq!(shared, BufferConfig::default().pool_size_bytes);
        }
        let fixed = QosSpec {
            pool_bytes: Some(1 << 20),
            ..QosSpec::default()
        };
        let cfg = fabric_config(&fixed, &[(0, 1_000_000_000, 1500)]);
        assert_eq!(
            cfg.buffer.pool_size_bytes,
            1 << 20,
            "an explicit pool is kept"
        );
    }

    #[test]
    fn ports_take_speed_mtu_and_the_lab_qos() {
        let topo = Topology::from_toml(LEAF_SPINE).unwrap();
        let leaf1 = &setups(&topo).unwrap()[0].fabric;
        let p: Vec<(u16, u64, u32)> = leaf1
            .ports
            .iter()
            .map(|p| (p.port, p.speed_bps, p.mtu_bytes))
            .collect();
        assert_eq!(
            p,
            [
                (0, 1_000_000_000, 9000),
                (1, 10_000_000_000, DEFAULT_MTU_BYTES),
                (2, 10_000_000_000, DEFAULT_MTU_BYTES)
            ]
        );
        assert!(leaf1.ports.iter().all(|p| p.pfc_priorities == [3, 4]));
        assert_eq!(leaf1.ecn.len(), 6, "3 ports × 2 lossless priorities");
        assert_eq!(leaf1.validate(), vec![]);
    }

    #[test]
    fn switch_ports_must_be_numbered_without_gaps() {
        let text = LEAF_SPINE.replace("leaf1:p2", "leaf1:p7");
        let topo = Topology::from_toml(&text).unwrap();
        let err = setups(&topo).unwrap_err();
        assert!(err.0[0].contains("leaf1"), "{err}");
        assert_eq!(switch_port("p12"), Some(12));
        assert_eq!(switch_port("p01"), None);
        assert_eq!(switch_port("eth0"), None);
    }
}
