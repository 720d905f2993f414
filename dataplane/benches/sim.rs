//! Simulator throughput on the compiled pipeline: simulated events and
//! switch packet events (frames a switch node received plus frames it
//! sent) handled per second of CPU time.
//!
//! Runs two fabrics whose switch is the production `Switch` running
//! `roce_switch.p4`, configured through `SwitchPlan` (a 16:1 lossless incast
//! with PFC, and a 2:1 incast with ECN + DCQCN) for a fixed simulated time.
//! Aim: ≥ 2 M switch packet events/s on one core. `cargo bench -p
//! dataplane --bench sim` (a plain `main`, `harness = false`).

use std::net::{IpAddr, Ipv4Addr};
use std::time::Instant as WallClock;

use dataplane::fabric::config::{EcnProfile, PortConfig, Trust};
use dataplane::fabric::{FabricConfig, L3Config, NextHop, Route, SwitchPlan};
use dataplane::rnic::dcqcn::DcqcnConfig;
use dataplane::rnic::{QpConfig, RnicConfig};
use dataplane::roce::{PROGRAM_INFO, Program};
use dataplane::sim::host::SimHost;
use dataplane::sim::{NodeId, Sim, TopologyBuilder, switch_config};
use dataplane::switch::Switch;
use dataplane::time::{Duration, Instant};

const G100: u64 = 100_000_000_000;
const ROUTER_MAC: [u8; 6] = [0x02, 0x52, 0x53, 0, 0, 1];

fn ip(i: usize) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(Ipv4Addr::new(10, 0, 0, 1)) + i as u32)
}

fn mac(i: usize) -> [u8; 6] {
    [2, 0, 0, 0, 0, (i + 1) as u8]
}

fn incast(n: usize, ecn: bool) -> (Sim<Program>, Vec<NodeId>) {
    let mut b = TopologyBuilder::new(1);
    let fabric = FabricConfig {
        ports: (0..=n as u16)
            .map(|port| PortConfig {
                port,
                speed_bps: G100,
                mtu_bytes: 9100,
                cable_length_m: 100,
                trust: Some(Trust::Dscp),
                pfc_priorities: vec![3],
            })
            .collect(),
        ecn: if ecn {
            vec![EcnProfile {
                port: n as u16,
                priority: 3,
                enabled: true,
                kmin_bytes: 5 * 1024,
                kmax_bytes: 200 * 1024,
                pmax: 0.01,
            }]
        } else {
            Vec::new()
        },
        ..Default::default()
    };
    let routes = L3Config {
        router_mac: ROUTER_MAC,
        ecmp_seed: 0,
        routes: (0..=n)
            .map(|i| Route {
                prefix: IpAddr::V4(ip(i)),
                prefix_len: 32,
                next_hops: vec![NextHop {
                    port: i as u16,
                    dst_mac: mac(i),
                }],
            })
            .collect(),
        bridged: Vec::new(),
    };
    let mut switch =
        Switch::new(Program::new(), switch_config(n + 1), Instant::ZERO).expect("switch");
    SwitchPlan::build(switch.tm().config(), &fabric, Some(&routes), &PROGRAM_INFO)
        .expect("plan")
        .apply(&mut switch, Instant::ZERO)
        .expect("apply");
    let sw = b.add_switch(switch);
    let dcqcn = ecn.then(|| DcqcnConfig {
        g: 1.0 / 16.0,
        rate_ai_bps: 500e6,
        ..DcqcnConfig::default()
    });
    let hosts: Vec<NodeId> = (0..=n)
        .map(|i| {
            let mut h = SimHost::new(RnicConfig {
                mac: mac(i),
                ip: ip(i),
                dcqcn,
                ..RnicConfig::default()
            });
            h.set_pause_response(Duration::from_nanos(2_017));
            b.add_host(h)
        })
        .collect();
    for (i, &h) in hosts.iter().enumerate() {
        b.connect((h, 0), (sw, i as u16), G100, Duration::from_nanos(505))
            .expect("fresh ports");
    }
    for i in 0..n {
        let q = 0x100 + i as u32;
        let qp = |remote: usize, bytes| QpConfig {
            local_qpn: q,
            remote_qpn: q,
            remote_ip: ip(remote),
            remote_mac: ROUTER_MAC,
            message_bytes: bytes,
            messages: None,
            initial_psn: 0,
            expected_psn: 0,
            ..QpConfig::default()
        };
        b.host_mut(hosts[i])
            .expect("host")
            .rnic_mut()
            .add_qp(qp(n, 65_536))
            .expect("qp");
        b.host_mut(hosts[n])
            .expect("host")
            .rnic_mut()
            .add_qp(qp(i, 0))
            .expect("qp");
    }
    (b.build(), hosts)
}

/// CPU time of this thread in seconds (Linux `schedstat`), to report rates
/// that do not depend on how busy the machine is.
fn thread_cpu_secs() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

fn run(name: &str, n: usize, ecn: bool, sim_ms: u64) {
    let (mut sim, hosts) = incast(n, ecn);
    let start = WallClock::now();
    let cpu0 = thread_cpu_secs();
    sim.run_until(Instant::from_millis(sim_ms));
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (cpu0, thread_cpu_secs()) {
        (Some(a), Some(b)) if b > a => b - a,
        _ => wall,
    };
    let rx = sim
        .host(hosts[n])
        .expect("receiver")
        .rnic()
        .stats()
        .rx_frames;
    let events = sim.events_processed();
    let switch_events = sim.switch_frames();
    println!(
        "{name}: {sim_ms} ms simulated, {events} events, {switch_events} switch packet events, \
         {rx} packets delivered; wall {wall:.3} s; CPU {cpu:.3} s = {:.2} M events/s, \
         {:.2} M switch packet events/s, {:.2} M delivered packets/s",
        events as f64 / cpu / 1e6,
        switch_events as f64 / cpu / 1e6,
        rx as f64 / cpu / 1e6,
    );
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument filters by name.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let cases: [(&str, usize, bool, u64); 2] = [
        ("incast16_pfc", 16, false, 20),
        ("incast2_ecn_dcqcn", 2, true, 20),
    ];
    for (name, n, ecn, ms) in cases {
        if filter.as_deref().is_none_or(|f| name.contains(f)) {
            run(name, n, ecn, ms);
        }
    }
}
