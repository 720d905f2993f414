//! RoCE security in the compiled `roce_switch.p4`, configured the one way
//! (fabric `security` → `SwitchPlan`): the RoCE source allowlist (v2 by
//! source IP/GID, v1 by source MAC or GID) and P_Key partitions with IBTA
//! membership, each drop counted by port and reason.
//!
//! ```text
//!            ┌────────┐ port 1 ── 10.0.1.0/24
//!  port 0 ──►│ switch │ port 2 ── 10.0.2.0/24, and MAC 02:..:0a:02 in VLAN 100
//!            └────────┘ port 3 ── 10.0.3.0/24
//! ```

mod common;

use std::net::{IpAddr, Ipv4Addr};

use dataplane::fabric::config::{PortConfig, Trust};
use dataplane::fabric::security::{AllowedSource, Partition, PortSecurity, SecurityConfig};
use dataplane::fabric::{Bridged, FabricConfig, L3Config, NextHop, PlanError, Route, SwitchPlan};
use dataplane::roce::{
    PROGRAM_INFO, Program, SEC_DROP_PKEY_EGRESS, SEC_DROP_PKEY_INGRESS, SEC_DROP_REASONS,
    SEC_DROP_ROCEV1_SOURCE, SEC_DROP_ROCEV2_SOURCE, counters,
};
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::Instant;
use p4_target::pipeline::Pipeline;
use p4_target::runtime::RuntimeApi;

const ROUTER_MAC: [u8; 6] = [0x02, 0x52, 0x53, 0, 0, 1];
const V1_HOST: [u8; 6] = [0x02, 0, 0, 0, 0x0a, 2];

fn routes() -> L3Config {
    L3Config {
        router_mac: ROUTER_MAC,
        ecmp_seed: 0,
        routes: (1..4u8)
            .map(|p| Route {
                prefix: IpAddr::V4(Ipv4Addr::new(10, 0, p, 0)),
                prefix_len: 24,
                next_hops: vec![NextHop {
                    port: u16::from(p),
                    dst_mac: [0x02, 0xbb, 0, 0, 0, p],
                }],
            })
            .collect(),
        bridged: vec![Bridged {
            vid: 100,
            mac: V1_HOST,
            port: 2,
        }],
    }
}

fn switch_with(security: SecurityConfig) -> Switch<Program> {
    let mut sw = Switch::new(Program::new(), SwitchConfig::with_ports(4), Instant::ZERO).unwrap();
    let fabric = FabricConfig {
        ports: (0..4)
            .map(|port| PortConfig {
                port,
                speed_bps: 10_000_000_000,
                mtu_bytes: 9000,
                cable_length_m: 10,
                trust: Some(Trust::Dscp),
                pfc_priorities: vec![3],
            })
            .collect(),
        security,
        ..Default::default()
    };
    assert_eq!(fabric.validate(), vec![]);
    SwitchPlan::build(sw.tm().config(), &fabric, Some(&routes()), &PROGRAM_INFO)
        .unwrap()
        .apply(&mut sw, Instant::ZERO)
        .unwrap();
    sw
}

/// A routed RoCE v2 WRITE (or, with `udp_dst` ≠ 4791, plain UDP) from `src`
/// to `dst` carrying `pkey`.
fn v2(src: [u8; 4], dst: [u8; 4], pkey: u16, udp_dst: u16) -> Vec<u8> {
    let mut f = common::roce_frame(26, 1, 64);
    f[..6].copy_from_slice(&ROUTER_MAC);
    f[26..30].copy_from_slice(&src);
    f[30..34].copy_from_slice(&dst);
    f[24..26].copy_from_slice(&[0, 0]);
    let c = common::checksum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
    f[36..38].copy_from_slice(&udp_dst.to_be_bytes());
    f[44..46].copy_from_slice(&pkey.to_be_bytes());
    f
}

/// A bridged RoCE v1 WRITE ONLY in VLAN 100 (PCP 3) from `src_mac` with
/// source GID `sgid` to [`V1_HOST`].
fn v1(src_mac: [u8; 6], sgid: u128, pkey: u16) -> Vec<u8> {
    let mut f = V1_HOST.to_vec();
    f.extend_from_slice(&src_mac);
    f.extend_from_slice(&[0x81, 0x00, 0x60, 0x64, 0x89, 0x15]);
    f.extend_from_slice(&[0x60, 0, 0, 0, 0, 28, 0x1b, 64]);
    f.extend_from_slice(&sgid.to_be_bytes());
    f.extend_from_slice(&[0; 16]);
    f.extend_from_slice(&[0x0a, 0]);
    f.extend_from_slice(&pkey.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 0x11, 0x80, 0, 0, 1]);
    f.extend_from_slice(&[0; 20]);
    f
}

/// Sends `frame` in on `port`; the port it left by, if any.
fn send(sw: &mut Switch<Program>, port: u16, frame: &[u8], t: &mut u64) -> Option<u16> {
    *t += 10_000;
    let now = Instant::from_nanos(*t);
    sw.handle_frame(port, frame, now);
    let mut out = Vec::new();
    (0..4).find(|&p| sw.poll_transmit(p, now, &mut out).is_some())
}

/// `roce_security_drops` (+ the egress one) of (`port`, `reason`).
fn drops(sw: &Switch<Program>, port: u16, reason: u32) -> u64 {
    let rt = sw.pipeline().runtime();
    let i = u32::from(port) * SEC_DROP_REASONS + reason;
    [
        counters::ROCE_INGRESS_ROCE_SECURITY_DROPS_ID,
        counters::ROCE_EGRESS_ROCE_SECURITY_EGRESS_DROPS_ID,
    ]
    .iter()
    .map(|&c| rt.counter_read(c, i).unwrap().packets)
    .sum()
}

fn allow(s: &str) -> AllowedSource {
    AllowedSource {
        source: s.into(),
        vlan: None,
    }
}

fn port(port: u16, allow: Vec<AllowedSource>, partitions: Vec<Partition>) -> PortSecurity {
    PortSecurity {
        port,
        allow,
        partitions,
    }
}

const ROCE: u16 = 4791;

#[test]
fn the_allowlist_admits_listed_v2_sources_only_on_filtered_ports() {
    let mut sw = switch_with(SecurityConfig {
        ports: vec![port(
            0,
            vec![allow("10.0.0.1"), allow("10.9.0.0/16")],
            vec![],
        )],
    });
    let t = &mut 0;
    let to1 = [10, 0, 1, 5];
    assert_eq!(
        send(&mut sw, 0, &v2([10, 0, 0, 1], to1, 0xffff, ROCE), t),
        Some(1)
    );
    assert_eq!(
        send(&mut sw, 0, &v2([10, 9, 7, 7], to1, 0xffff, ROCE), t),
        Some(1)
    );
    assert_eq!(drops(&sw, 0, SEC_DROP_ROCEV2_SOURCE), 0);

    assert_eq!(
        send(&mut sw, 0, &v2([10, 0, 0, 2], to1, 0xffff, ROCE), t),
        None
    );
    assert_eq!(
        send(&mut sw, 0, &v2([10, 8, 0, 1], to1, 0xffff, ROCE), t),
        None
    );
    assert_eq!(drops(&sw, 0, SEC_DROP_ROCEV2_SOURCE), 2);

    assert_eq!(
        send(&mut sw, 0, &v2([10, 0, 0, 2], to1, 0xffff, 4000), t),
        Some(1),
        "non-RoCE UDP from an unlisted source is not filtered"
    );
    assert_eq!(
        send(&mut sw, 3, &v2([10, 0, 0, 2], to1, 0xffff, ROCE), t),
        Some(1),
        "port 3 has no allowlist: not filtered"
    );
    assert_eq!(drops(&sw, 0, SEC_DROP_ROCEV2_SOURCE), 2);
    assert_eq!(drops(&sw, 3, SEC_DROP_ROCEV2_SOURCE), 0);
}

#[test]
fn the_allowlist_admits_v1_by_source_mac_or_gid_and_per_vlan() {
    let gid: u128 = u128::from("fe80::1".parse::<std::net::Ipv6Addr>().unwrap());
    let mac_ok = [0x02, 0, 0, 0, 0x0a, 1];
    let mut sw = switch_with(SecurityConfig {
        ports: vec![port(
            0,
            vec![
                AllowedSource {
                    vlan: Some(100),
                    ..allow("02:00:00:00:0a:01")
                },
                allow("fe80::1/128"),
                AllowedSource {
                    vlan: Some(200),
                    ..allow("02:00:00:00:0a:09")
                },
            ],
            vec![],
        )],
    });
    let t = &mut 0;
    assert_eq!(send(&mut sw, 0, &v1(mac_ok, 0, 0xffff), t), Some(2));
    assert_eq!(
        send(&mut sw, 0, &v1([0x02, 0, 0, 0, 0x0a, 7], gid, 0xffff), t),
        Some(2),
        "a listed GID admits any MAC"
    );
    assert_eq!(
        send(&mut sw, 0, &v1([0x02, 0, 0, 0, 0x0a, 7], 0, 0xffff), t),
        None
    );
    assert_eq!(
        send(&mut sw, 0, &v1([0x02, 0, 0, 0, 0x0a, 9], 0, 0xffff), t),
        None,
        "listed for VLAN 200 only"
    );
    assert_eq!(drops(&sw, 0, SEC_DROP_ROCEV1_SOURCE), 2);
    assert_eq!(drops(&sw, 0, SEC_DROP_ROCEV2_SOURCE), 0);
    assert_eq!(
        send(
            &mut sw,
            0,
            &v2([10, 0, 0, 1], [10, 0, 1, 1], 0xffff, ROCE),
            t
        ),
        None,
        "a MAC entry admits RoCE v1 only"
    );
    assert_eq!(drops(&sw, 0, SEC_DROP_ROCEV2_SOURCE), 1);
}

/// IBTA partition matching: limited ↔ full passes both ways, limited ↔
/// limited and unknown partitions are dropped, a limited port cannot
/// claim full membership.
#[test]
fn pkey_partitions_enforce_ibta_membership() {
    let limited = Partition::from_pkey(0x0010);
    let full = Partition::from_pkey(0x8010);
    let mut sw = switch_with(SecurityConfig {
        ports: vec![
            port(0, vec![], vec![limited]),
            port(1, vec![], vec![full, Partition::from_pkey(0xffff)]),
            port(2, vec![], vec![limited]),
        ],
    });
    let t = &mut 0;
    let (to1, to2, to3) = ([10, 0, 1, 1], [10, 0, 2, 1], [10, 0, 3, 1]);
    let src = [10, 0, 0, 1];
    assert_eq!(
        send(&mut sw, 0, &v2(src, to1, 0x0010, ROCE), t),
        Some(1),
        "limited → full"
    );
    assert_eq!(
        send(&mut sw, 1, &v2(src, to2, 0x8010, ROCE), t),
        Some(2),
        "full → limited"
    );
    assert_eq!(
        send(&mut sw, 1, &v2(src, to2, 0xffff, ROCE), t),
        None,
        "port 2 is not in the default partition"
    );
    assert_eq!(drops(&sw, 2, SEC_DROP_PKEY_EGRESS), 1);

    assert_eq!(
        send(&mut sw, 0, &v2(src, to2, 0x0010, ROCE), t),
        None,
        "limited ↔ limited"
    );
    assert_eq!(drops(&sw, 2, SEC_DROP_PKEY_EGRESS), 2);
    assert_eq!(drops(&sw, 0, SEC_DROP_PKEY_INGRESS), 0);

    assert_eq!(
        send(&mut sw, 0, &v2(src, to1, 0x8010, ROCE), t),
        None,
        "a limited port claims full"
    );
    assert_eq!(
        send(&mut sw, 0, &v2(src, to1, 0x0020, ROCE), t),
        None,
        "unknown partition"
    );
    assert_eq!(drops(&sw, 0, SEC_DROP_PKEY_INGRESS), 2);

    assert_eq!(
        send(&mut sw, 3, &v2(src, to1, 0xffff, ROCE), t),
        Some(1),
        "port 3 has no partitions (unchecked in), port 1 the default one"
    );
    assert_eq!(
        send(&mut sw, 1, &v2(src, to3, 0x1234, ROCE), t),
        None,
        "port 1 checks what it receives"
    );
    assert_eq!(
        send(&mut sw, 0, &v2(src, to3, 0x0010, ROCE), t),
        Some(3),
        "port 3 unchecked out"
    );
    assert_eq!(
        send(&mut sw, 0, &v2(src, to2, 0x0010, 4000), t),
        Some(2),
        "non-RoCE UDP carries no P_Key"
    );
}

#[test]
fn an_empty_section_filters_nothing_and_bad_ports_are_refused() {
    let mut sw = switch_with(SecurityConfig {
        ports: vec![port(0, vec![], vec![])],
    });
    let t = &mut 0;
    assert_eq!(
        send(
            &mut sw,
            0,
            &v2([10, 0, 0, 9], [10, 0, 1, 1], 0x0001, ROCE),
            t
        ),
        Some(1)
    );
    assert_eq!(
        send(&mut sw, 0, &v1([0x02, 0, 0, 0, 0x0a, 9], 7, 0x0001), t),
        Some(2)
    );

    let fabric = FabricConfig {
        security: SecurityConfig {
            ports: vec![port(9, vec![allow("10.0.0.1")], vec![])],
        },
        ..Default::default()
    };
    assert_eq!(
        SwitchPlan::build(sw.tm().config(), &fabric, None, &PROGRAM_INFO),
        Err(PlanError::NoSuchPort { port: 9, ports: 4 })
    );
}
