//! The default scenario's two fabrics as lab topologies: one description,
//! from which both the namespace lab ([`super::live`], which adds the
//! switch daemons' commands) and the simulator ([`super::sim`]) build,
//! configure ([`crate::fabric::setups`]) and run the same switches.
//!
//! Addressing: host `i` of part `p` has IP 10.0.p.(i+1) and MAC
//! 02:00:00:00:p:(i+1); hosts send to [`crate::fabric::ROUTER_MAC`]; every
//! link runs at [`ScenarioConfig::speed_bps`] with a jumbo MTU.

use std::net::Ipv4Addr;

use crate::fabric::{EcnSpec, QosSpec};
use crate::topo::{HostSpec, LinkSpec, SwitchSpec, Topology};

use super::{LINK_MTU_BYTES, LOSSLESS_PRIORITY, ScenarioConfig};

/// Part number of the incast fabric (its hosts are on 10.0.1.0/24).
pub const INCAST_PART: u8 = 1;
/// Part number of the ECMP fabric (10.0.2.0/24).
pub const ECMP_PART: u8 = 2;
/// Cable length of every link, metres (headroom sizing, simulated delay).
pub const CABLE_M: u32 = 10;

/// Host `i`'s IP in part `part`.
pub fn host_ip(part: u8, i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, part, i as u8 + 1)
}

/// Host `i`'s MAC in part `part`.
pub fn host_mac(part: u8, i: usize) -> [u8; 6] {
    [2, 0, 0, 0, part, i as u8 + 1]
}

/// `aa:bb:..` text of a MAC.
pub fn mac_text(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A host of `part`.
pub fn host(name: &str, part: u8, i: usize) -> HostSpec {
    HostSpec {
        name: name.into(),
        mac: mac_text(host_mac(part, i)),
        ip: host_ip(part, i),
        vlan: None,
        command: None,
        extra_commands: Vec::new(),
        kernel_ip: None,
    }
}

/// A link at `speed_bps` with the lab's jumbo MTU.
pub fn link(a: &str, b: &str, speed_bps: u64) -> LinkSpec {
    LinkSpec {
        a: a.into(),
        b: b.into(),
        speed: crate::units::format_rate(speed_bps),
        mtu: Some(LINK_MTU_BYTES),
    }
}

fn switch(name: &str) -> SwitchSpec {
    SwitchSpec {
        name: name.into(),
        command: None,
        roceswitch: false,
        routes: Vec::new(),
    }
}

/// The lab's QoS: priority 3 lossless with `headroom_bytes` of headroom per
/// (port, lossless priority), ECN on it if the scenario asks.
pub fn qos(cfg: &ScenarioConfig, headroom_bytes: u64) -> QosSpec {
    QosSpec {
        lossless_priorities: vec![LOSSLESS_PRIORITY],
        cable_m: CABLE_M,
        headroom_bytes: Some(headroom_bytes),
        ecn: cfg.ecn.map(|e| EcnSpec {
            kmin_bytes: e.kmin_bytes,
            kmax_bytes: e.kmax_bytes,
            pmax: e.pmax,
        }),
        dcbx: cfg.dcbx.is_some(),
        ..QosSpec::default()
    }
}

/// Part 1: h1, h2 → sw → h3 on switch ports 0, 1, 2 (2:1 incast).
pub fn incast_topology(lab: &str, cfg: &ScenarioConfig, headroom_bytes: u64) -> Topology {
    let hosts: Vec<HostSpec> = ["h1", "h2", "h3"]
        .iter()
        .enumerate()
        .map(|(i, n)| host(n, INCAST_PART, i))
        .collect();
    Topology {
        name: lab.to_string(),
        switches: vec![switch("sw")],
        links: (0..3)
            .map(|i| {
                link(
                    &format!("{}:eth0", hosts[i].name),
                    &format!("sw:p{i}"),
                    cfg.speed_bps,
                )
            })
            .collect(),
        hosts,
        qos: QosSpec {
            // Headroom of the three ports' lossless priority on top.
            pool_bytes: cfg.incast_shared_bytes.map(|b| b + 3 * headroom_bytes),
            ..qos(cfg, headroom_bytes)
        },
    }
}

/// Part 2: ha — leaf1 ═ spine1/spine2 ═ leaf2 — hb; leaf1's uplinks are its
/// ports 1 and 2.
pub fn ecmp_topology(lab: &str, cfg: &ScenarioConfig, headroom_bytes: u64) -> Topology {
    let speed = cfg.speed_bps;
    Topology {
        name: lab.to_string(),
        switches: ["leaf1", "leaf2", "spine1", "spine2"]
            .into_iter()
            .map(switch)
            .collect(),
        hosts: vec![host("ha", ECMP_PART, 0), host("hb", ECMP_PART, 1)],
        links: vec![
            link("ha:eth0", "leaf1:p0", speed),
            link("hb:eth0", "leaf2:p0", speed),
            link("leaf1:p1", "spine1:p0", speed),
            link("leaf1:p2", "spine2:p0", speed),
            link("leaf2:p1", "spine1:p1", speed),
            link("leaf2:p2", "spine2:p1", speed),
        ],
        qos: qos(cfg, headroom_bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{ROUTER_MAC, setups};

    #[test]
    fn both_parts_validate_and_route_every_host() {
        let cfg = ScenarioConfig::default();
        for topo in [
            incast_topology("t-inc", &cfg, 256 * 1024),
            ecmp_topology("t-ecmp", &cfg, 256 * 1024),
        ] {
            topo.validate().unwrap();
            for s in setups(&topo).unwrap() {
                assert_eq!(s.routes.routes.len(), topo.hosts.len(), "{}", s.name);
                assert_eq!(s.fabric.validate(), vec![], "{}", s.name);
            }
        }
        let leaf1 = &setups(&ecmp_topology("t", &cfg, 1 << 18)).unwrap()[0];
        assert_eq!(leaf1.routes.routes[1].next_hops.len(), 2, "ECMP to hb");
        assert!(
            leaf1.routes.routes[1]
                .next_hops
                .iter()
                .all(|h| h.dst_mac == ROUTER_MAC)
        );
        assert_eq!(crate::units::format_rate(200_000_000), "200M");
        assert_eq!(mac_text(host_mac(1, 2)), "02:00:00:00:01:03");
    }
}
