//! The one configuration path: a fabric config plus routes, planned against
//! `roce_switch.p4` and applied to a `Switch` in one step.
//!
//! ```text
//!                ┌────────────┐ port 1 ── 10.0.1.2/32
//!  port 0 ──────►│   switch   │ port 2 ─┐
//!                └────────────┘ port 3 ─┴ 10.0.2.0/24 (ECMP)
//! ```

mod common;

use std::net::{IpAddr, Ipv4Addr};

use common::roce_frame;
use dataplane::fabric::config::{EcnProfile, PortConfig, Trust};
use dataplane::fabric::{
    ApplyError, Bridged, FabricConfig, L3Config, NextHop, PlanError, Route, SwitchPlan,
};
use dataplane::roce::{PROGRAM_INFO, Program};
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::Instant;
use p4_target::pipeline::Pipeline;
use p4_target::runtime::RuntimeApi;

const ROUTER_MAC: [u8; 6] = [0x02, 0x52, 0x53, 0, 0, 1];

fn hop(port: u16) -> NextHop {
    NextHop {
        port,
        dst_mac: [0x02, 0xbb, 0, 0, 0, port as u8],
    }
}

fn routes() -> L3Config {
    L3Config {
        router_mac: ROUTER_MAC,
        ecmp_seed: 7,
        routes: vec![
            Route {
                prefix: IpAddr::V4(Ipv4Addr::new(10, 0, 1, 2)),
                prefix_len: 32,
                next_hops: vec![hop(1)],
            },
            Route {
                prefix: IpAddr::V4(Ipv4Addr::new(10, 0, 2, 0)),
                prefix_len: 24,
                next_hops: vec![hop(2), hop(3)],
            },
        ],
        bridged: Vec::new(),
    }
}

fn fabric(lossless: u8, dscp26: u8) -> FabricConfig {
    let mut cfg = FabricConfig {
        ports: (0..4)
            .map(|port| PortConfig {
                port,
                speed_bps: 10_000_000_000,
                mtu_bytes: 9000,
                cable_length_m: 10,
                trust: Some(Trust::Dscp),
                pfc_priorities: vec![lossless],
            })
            .collect(),
        ecn: vec![EcnProfile {
            port: 1,
            priority: lossless,
            enabled: true,
            kmin_bytes: 10_000,
            kmax_bytes: 100_000,
            pmax: 0.2,
        }],
        ..Default::default()
    };
    cfg.qos_maps.dscp_to_priority[26] = dscp26;
    cfg
}

fn switch() -> Switch<Program> {
    Switch::new(Program::new(), SwitchConfig::with_ports(4), Instant::ZERO).unwrap()
}

/// A RoCE WRITE from 10.0.0.1 to `dst` with UDP source port `sport`.
fn frame_to(dst: Ipv4Addr, sport: u16) -> Vec<u8> {
    let mut f = roce_frame(26, 1, 64);
    f[..6].copy_from_slice(&ROUTER_MAC);
    f[26..30].copy_from_slice(&[10, 0, 0, 1]);
    f[30..34].copy_from_slice(&dst.octets());
    f[34..36].copy_from_slice(&sport.to_be_bytes());
    f[24..26].copy_from_slice(&[0, 0]);
    let c = common::checksum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
    f
}

/// Sends `frame` in on port 0 and returns the port it left by.
fn forward(sw: &mut Switch<Program>, frame: &[u8], t: u64) -> Option<(u16, Vec<u8>)> {
    let now = Instant::from_nanos(t);
    sw.handle_frame(0, frame, now);
    let mut out = Vec::new();
    for port in 0..4 {
        if sw.poll_transmit(port, now, &mut out).is_some() {
            return Some((port, out));
        }
    }
    None
}

#[test]
fn a_plan_programs_routes_ecmp_classification_and_the_tm_in_one_step() {
    let mut sw = switch();
    let plan = SwitchPlan::build(
        sw.tm().config(),
        &fabric(3, 3),
        Some(&routes()),
        &PROGRAM_INFO,
    )
    .unwrap();
    plan.apply(&mut sw, Instant::ZERO).unwrap();

    let (port, out) = forward(
        &mut sw,
        &frame_to(Ipv4Addr::new(10, 0, 1, 2), 0xc000),
        1_000,
    )
    .expect("routed");
    assert_eq!(port, 1);
    assert_eq!(out[..6], hop(1).dst_mac, "next hop's MAC");
    assert_eq!(out[6..12], ROUTER_MAC, "router MAC as source");
    assert_eq!(out[22], 63, "TTL decremented");

    // 64 flows over the /24 use both members of the ECMP group.
    let mut per_port = [0u32; 4];
    for (i, sport) in (0xc000u16..0xc040).enumerate() {
        let (port, _) = forward(
            &mut sw,
            &frame_to(Ipv4Addr::new(10, 0, 2, 9), sport),
            2_000 + i as u64 * 10_000,
        )
        .expect("routed");
        per_port[usize::from(port)] += 1;
    }
    assert_eq!(per_port[0] + per_port[1], 0);
    assert!(per_port[2] > 10 && per_port[3] > 10, "{per_port:?}");

    // The TM has the lossless set and the speed; the P4 table the map.
    let tm = sw.tm().config();
    assert!(tm.ports.iter().all(|p| p.pfc_enable == 1 << 3));
    assert!(tm.ports.iter().all(|p| p.speed_bps == 10_000_000_000));
    assert_eq!(
        sw.tm().stats(0, 3).unwrap().rx_packets,
        65,
        "DSCP 26 → priority 3"
    );
}

#[test]
fn a_refused_write_puts_tables_and_tm_back() {
    let mut sw = switch();
    let before = SwitchPlan::build(
        sw.tm().config(),
        &fabric(3, 3),
        Some(&routes()),
        &PROGRAM_INFO,
    )
    .unwrap();
    before.apply(&mut sw, Instant::ZERO).unwrap();
    let tm_before = sw.tm().config().clone();
    let rt = sw.pipeline().runtime();
    let tables_before: Vec<_> = before
        .tables()
        .iter()
        .map(|t| rt.table_entries(t.table_id).unwrap())
        .collect();

    // More routes than `ipv4_lpm` holds (16,384): the last table write fails
    // after the fabric tables and the next-hop profile were already replaced.
    let mut many = routes();
    many.routes.extend((0..16_384u32).map(|i| Route {
        prefix: IpAddr::V4(Ipv4Addr::from(0x0b00_0000 + i)),
        prefix_len: 32,
        next_hops: vec![hop(2)],
    }));
    let plan =
        SwitchPlan::build(sw.tm().config(), &fabric(5, 5), Some(&many), &PROGRAM_INFO).unwrap();
    let err = plan.apply(&mut sw, Instant::from_nanos(1)).unwrap_err();
    assert!(matches!(err, ApplyError::Runtime(_)), "{err}");

    assert_eq!(sw.tm().config(), &tm_before, "TM unchanged");
    let rt = sw.pipeline().runtime();
    for (t, entries) in before.tables().iter().zip(&tables_before) {
        assert_eq!(&rt.table_entries(t.table_id).unwrap(), entries);
    }
    let (port, _) = forward(&mut sw, &frame_to(Ipv4Addr::new(10, 0, 1, 2), 1), 5_000).unwrap();
    assert_eq!(port, 1, "old routes still forward");
    assert_eq!(
        sw.tm().stats(0, 3).unwrap().rx_packets,
        1,
        "old DSCP map still holds"
    );
}

#[test]
fn plan_errors_name_what_is_wrong() {
    let sw = switch();
    let mut cfg = fabric(3, 3);
    cfg.ports[0].port = 7;
    assert_eq!(
        SwitchPlan::build(sw.tm().config(), &cfg, None, &PROGRAM_INFO),
        Err(PlanError::NoSuchPort { port: 7, ports: 4 })
    );
    let mut cfg = fabric(3, 3);
    cfg.ports[2].trust = Some(Trust::None);
    match SwitchPlan::build(sw.tm().config(), &cfg, None, &PROGRAM_INFO) {
        Err(PlanError::Invalid { field, .. }) => assert_eq!(field, "ports[2].trust"),
        other => panic!("{other:?}"),
    }
    let mut bad = routes();
    bad.routes[1].prefix_len = 33;
    match SwitchPlan::build(sw.tm().config(), &fabric(3, 3), Some(&bad), &PROGRAM_INFO) {
        Err(PlanError::Invalid { field, .. }) => assert_eq!(field, "routes[1].prefix_len"),
        other => panic!("{other:?}"),
    }
}

/// Bridged MACs become `l2_fwd` entries: a RoCE v1 frame on VLAN 100 to a
/// bridged MAC leaves by its port unchanged, at the priority of its PCP; a
/// VLAN id beyond 12 bits is refused by name.
#[test]
fn bridged_macs_carry_roce_v1_frames_at_their_pcp() {
    let mut sw = switch();
    let mut l3 = routes();
    let host = [0x02, 0, 0, 0, 0x0a, 2];
    l3.bridged = vec![Bridged {
        vid: 100,
        mac: host,
        port: 2,
    }];
    SwitchPlan::build(sw.tm().config(), &fabric(3, 3), Some(&l3), &PROGRAM_INFO)
        .unwrap()
        .apply(&mut sw, Instant::ZERO)
        .unwrap();
    // Tag PCP 3 VID 100, EtherType 0x8915, GRH, BTH (RDMA WRITE ONLY), payload.
    let mut v1 = host.to_vec();
    v1.extend_from_slice(&[0x02, 0, 0, 0, 0x0a, 1, 0x81, 0x00, 0x60, 0x64, 0x89, 0x15]);
    v1.extend_from_slice(&[0x60, 0, 0, 0, 0, 28, 0x1b, 64]);
    v1.extend_from_slice(&[0; 32]);
    v1.extend_from_slice(&[0x0a, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0x80, 0, 0, 1]);
    v1.extend_from_slice(&[0; 20]);
    assert_eq!(forward(&mut sw, &v1, 1_000), Some((2, v1.clone())));
    assert_eq!(
        sw.tm().stats(0, 3).unwrap().rx_packets,
        1,
        "PCP 3 → priority 3"
    );

    let mut other_vlan = v1.clone();
    other_vlan[15] = 101;
    assert_eq!(
        forward(&mut sw, &other_vlan, 2_000),
        None,
        "not bridged in VLAN 101"
    );

    l3.bridged[0].vid = 4096;
    match SwitchPlan::build(sw.tm().config(), &fabric(3, 3), Some(&l3), &PROGRAM_INFO) {
        Err(PlanError::Invalid { field, .. }) => assert_eq!(field, "bridged[0].vid"),
        other => panic!("{other:?}"),
    }
}

/// Two tiers of a Clos fabric choose between two uplinks by the same flow
/// hash. With one seed they pick "the same" uplink for every flow (hash
/// polarization: the second tier then uses only half its paths); with a
/// seed each, their choices are independent.
#[test]
fn per_switch_ecmp_seeds_decorrelate_tiers() {
    let choices = |seed: u32| -> Vec<u16> {
        let mut sw = switch();
        let mut l3 = routes();
        l3.ecmp_seed = seed;
        SwitchPlan::build(sw.tm().config(), &fabric(3, 3), Some(&l3), &PROGRAM_INFO)
            .unwrap()
            .apply(&mut sw, Instant::ZERO)
            .unwrap();
        (0..2000u16)
            .map(|i| {
                let f = frame_to(Ipv4Addr::new(10, 0, 2, 9), 0xc000 + i);
                forward(&mut sw, &f, 1_000 + u64::from(i) * 10_000)
                    .unwrap()
                    .0
            })
            .collect()
    };
    let joint = |a: &[u16], b: &[u16]| {
        let mut n = [0u32; 4];
        for (x, y) in a.iter().zip(b) {
            n[usize::from((x - 2) * 2 + (y - 2))] += 1;
        }
        n
    };
    let (tier1, same, other) = (choices(1), choices(1), choices(2));
    let polarized = joint(&tier1, &same);
    assert_eq!(
        polarized[1] + polarized[2],
        0,
        "same seed, same choice: {polarized:?}"
    );
    let independent = joint(&tier1, &other);
    for n in independent {
        assert!(
            (400..600).contains(&n),
            "each pair of choices ~25 %: {independent:?}"
        );
    }
}

#[test]
fn a_disabled_watchdog_with_any_poll_interval_validates_and_applies() {
    let mut cfg = fabric(3, 3);
    cfg.watchdog.enabled = false;
    cfg.watchdog.poll_interval_ms = 5;
    assert!(cfg.validate().is_empty());
    let mut sw = switch();
    SwitchPlan::build(sw.tm().config(), &cfg, None, &PROGRAM_INFO)
        .expect("what validates plans")
        .apply(&mut sw, Instant::ZERO)
        .unwrap();
}
