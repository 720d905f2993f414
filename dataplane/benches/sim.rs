//! Simulator throughput: simulated events handled per wall-clock second.
//!
//! Runs two fabrics (a 16:1 lossless incast with PFC, and a 2:1 incast with
//! ECN + DCQCN) for a fixed simulated time and prints events/s and
//! simulated packets/s. Target: ≥ 5 M events/s. `cargo bench -p dataplane
//! --bench sim` (a plain `main`, `harness = false`).

use std::net::Ipv4Addr;
use std::time::Instant as WallClock;

use dataplane::rnic::dcqcn::DcqcnConfig;
use dataplane::rnic::{QpConfig, RnicConfig};
use dataplane::sim::forward::L3Forwarder;
use dataplane::sim::host::SimHost;
use dataplane::sim::switch::SimSwitch;
use dataplane::sim::{NodeId, Sim, TopologyBuilder};
use dataplane::time::{Duration, Instant};
use dataplane::tm::TmConfig;
use dataplane::tm::ecn::RedConfig;
use dataplane::wire::ethernet::EthernetAddress;

const G100: u64 = 100_000_000_000;

fn ip(i: usize) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(Ipv4Addr::new(10, 0, 0, 1)) + i as u32)
}

fn mac(i: usize) -> [u8; 6] {
    [2, 0, 0, 0, 0, (i + 1) as u8]
}

fn incast(n: usize, ecn: bool) -> (Sim, Vec<NodeId>) {
    let mut b = TopologyBuilder::new(1);
    let mut cfg = TmConfig::with_ports(n + 1);
    for (i, p) in cfg.ports.iter_mut().enumerate() {
        p.wire_overhead_bytes = 24;
        p.mac = EthernetAddress([2, 0xAA, 0, 0, 0, i as u8]);
        if ecn {
            p.queues[3].red = Some(RedConfig {
                kmin_bytes: 5 * 1024,
                kmax_bytes: 200 * 1024,
                pmax: 0.01,
            });
        }
    }
    let mut fwd = L3Forwarder::new(0);
    for i in 0..=n {
        fwd.add_route(ip(i), 32, &[i as u16]);
    }
    let sw = b.add_switch(SimSwitch::new(cfg, Box::new(fwd)).expect("valid TM config"));
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
            remote_mac: mac(remote),
            message_bytes: bytes,
            messages: None,
            initial_psn: 0,
            expected_psn: 0,
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
    println!(
        "{name}: {sim_ms} ms simulated, {events} events, {rx} packets delivered; \
         wall {wall:.3} s = {:.2} M events/s; CPU {cpu:.3} s = {:.2} M events/s, \
         {:.2} M delivered packets/s",
        events as f64 / wall / 1e6,
        events as f64 / cpu / 1e6,
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
