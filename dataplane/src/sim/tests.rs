//! Simulator core tests: two hosts back to back, no switch.

use std::net::Ipv4Addr;

use super::host::{PfcStorm, SimHost};
use super::*;
use crate::rnic::{QpConfig, RnicConfig};
use crate::roce::Program;

const G100: u64 = 100_000_000_000;

fn host(i: u8) -> SimHost {
    SimHost::new(RnicConfig {
        mac: [2, 0, 0, 0, 0, i],
        ip: Ipv4Addr::new(10, 0, 0, i),
        ..RnicConfig::default()
    })
}

fn qp(local: u32, remote: u32, to: u8, bytes: u64, msgs: Option<u64>) -> QpConfig {
    QpConfig {
        local_qpn: local,
        remote_qpn: remote,
        remote_ip: Ipv4Addr::new(10, 0, 0, to),
        remote_mac: [2, 0, 0, 0, 0, to],
        message_bytes: bytes,
        messages: msgs,
        initial_psn: 0,
        expected_psn: 0,
        ..QpConfig::default()
    }
}

fn back_to_back(delay_ns: u64, msgs: Option<u64>) -> (Sim<Program>, NodeId, NodeId) {
    let mut b = TopologyBuilder::<Program>::new(1);
    let a = b.add_host(host(1));
    let z = b.add_host(host(2));
    b.host_mut(a)
        .unwrap()
        .rnic_mut()
        .add_qp(qp(1, 2, 2, 1024 * 64, msgs))
        .unwrap();
    b.host_mut(z)
        .unwrap()
        .rnic_mut()
        .add_qp(qp(2, 1, 1, 0, None))
        .unwrap();
    b.connect((a, 0), (z, 0), G100, Duration::from_nanos(delay_ns))
        .unwrap();
    (b.build(), a, z)
}

#[test]
fn line_rate_delivery_and_timing() {
    // 10 messages × 64 packets of 1024 B; each frame 1024+74 = 1098 B,
    // 1122 B on the wire = 89.76 → 90 ns at 100 Gb/s.
    let (mut sim, a, z) = back_to_back(1_000, Some(10));
    let end = sim.drive();
    let s = sim.host(z).unwrap().rnic().qp_stats(2).unwrap();
    assert_eq!(s.rx_messages, 10);
    assert_eq!(s.rx_payload_bytes, 10 * 64 * 1024);
    assert_eq!(s.psn_gaps, 0);
    // 640 frames back to back: the last arrives after 640 serialisations + delay.
    let last = 640 * 90 + 1_000;
    assert!(end.as_nanos().abs_diff(last) <= 640, "end {end} vs {last}");
    let c = sim.port_counters(a, 0).unwrap();
    assert_eq!(c.tx_frames[3], 640);
    assert_eq!(sim.port_counters(z, 0).unwrap().rx_frames[3], 640);
}

#[test]
fn same_seed_same_run() {
    let run = || {
        let (mut sim, _, z) = back_to_back(500, Some(3));
        let end = sim.drive();
        (
            end,
            sim.events_processed(),
            sim.host(z).unwrap().rnic().qp_stats(2),
        )
    };
    assert_eq!(run(), run());
}

#[test]
fn run_until_stops_at_time() {
    let (mut sim, _, z) = back_to_back(1_000, None);
    sim.run_until(Instant::from_micros(10));
    assert_eq!(sim.now(), Instant::from_micros(10));
    let rx = sim.host(z).unwrap().rnic().qp_stats(2).unwrap().rx_packets;
    // (10 µs − 1 µs delay) / 90 ns ≈ 100 frames.
    assert!((95..=101).contains(&rx), "rx {rx}");
}

#[test]
fn storming_host_pauses_its_peer() {
    let (mut sim, a, z) = back_to_back(100, None);
    sim.host_mut(z).unwrap().set_storm(Some(PfcStorm {
        priority_mask: 1 << 3,
        quanta: 0xFFFF,
        interval: Duration::from_micros(100),
        start: Instant::from_micros(5),
    }));
    sim.kick(z);
    sim.run_until(Instant::from_micros(5));
    let before = sim.host(z).unwrap().rnic().qp_stats(2).unwrap().rx_packets;
    sim.run_until(Instant::from_micros(500));
    let after = sim.host(z).unwrap().rnic().qp_stats(2).unwrap().rx_packets;
    // At most a frame or two in flight when the pause lands.
    assert!(after - before <= 3, "{before} → {after}");
    assert!(sim.host(a).unwrap().rnic().is_paused(3, sim.now()));
    assert!(sim.port_counters(z, 0).unwrap().pfc_tx[3] >= 5);
    assert!(sim.port_counters(a, 0).unwrap().pfc_rx[3] >= 5);
}

#[test]
fn recorder_samples_and_writes() {
    let (mut sim, a, _) = back_to_back(100, None);
    sim.record(
        Duration::from_micros(1),
        vec![
            (Probe::TxGbps { node: a, port: 0 }, "a tx"),
            (Probe::QpRate { node: a, qpn: 1 }, "a rate"),
            (
                Probe::Paused {
                    node: a,
                    port: 0,
                    priority: 3,
                },
                "a paused",
            ),
        ],
    );
    sim.run_until(Instant::from_micros(20));
    let r = sim.recorder().unwrap();
    assert_eq!(r.len(), 21);
    let tx = r.column("a tx").unwrap();
    // Steady state: 1098/1122 of 100 Gb/s of frame bytes ≈ 97.9 Gb/s.
    // Per-µs samples quantise to whole frames; their mean does not.
    let mean = tx[1..].iter().map(|(_, g)| g).sum::<f64>() / 20.0;
    assert!((96.0..99.0).contains(&mean), "{mean} {tx:?}");
    assert!(
        tx[1..].iter().all(|(_, g)| (90.0..105.0).contains(g)),
        "{tx:?}"
    );
    assert_eq!(r.column("a rate").unwrap()[5].1, 100.0);
    assert_eq!(r.column("a paused").unwrap()[5].1, 0.0);
    let dir = std::env::temp_dir().join(format!("roceswitch-sim-core-{}", std::process::id()));
    r.write(&dir, "back_to_back").unwrap();
    assert!(dir.join("back_to_back.svg").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn topology_errors() {
    let mut b = TopologyBuilder::<Program>::new(0);
    let a = b.add_host(host(1));
    let z = b.add_host(host(2));
    assert_eq!(
        b.connect((a, 1), (z, 0), G100, Duration::ZERO),
        Err(TopologyError::NoPort { node: a, port: 1 })
    );
    assert_eq!(
        b.connect((a, 0), (9, 0), G100, Duration::ZERO),
        Err(TopologyError::NoNode(9))
    );
    assert_eq!(
        b.connect((a, 0), (z, 0), 0, Duration::ZERO),
        Err(TopologyError::ZeroRate)
    );
    b.connect((a, 0), (z, 0), G100, Duration::ZERO).unwrap();
    assert_eq!(
        b.connect((a, 0), (z, 0), G100, Duration::ZERO),
        Err(TopologyError::PortInUse { node: a, port: 0 })
    );
}

/// Pinned summary of a small run (smoltcp `netsim` style): any change in
/// link timing, event scheduling or RNIC segmentation shows up here.
#[test]
fn snapshot_back_to_back() {
    let (mut sim, a, z) = back_to_back(250, Some(2));
    let end = sim.drive();
    let ca = sim.port_counters(a, 0).unwrap();
    let s = sim.host(z).unwrap().rnic().qp_stats(2).unwrap();
    let summary = format!(
        "end {} events {} tx_frames {} tx_bytes {} busy_ns {} rx_bytes {} msgs {}",
        end.as_nanos(),
        sim.events_processed(),
        ca.tx_frames[3],
        ca.tx_bytes[3],
        ca.busy_ns,
        s.rx_payload_bytes,
        s.rx_messages
    );
    assert_eq!(
        summary,
        // 2 × 1098 B (RETH) + 126 × 1082 B; +24 B each on the wire: 90 / 89 ns.
        // The run ends when the ACK of the last packet (AckReq) is back at
        // `a`: 2 ACKs × (tx done + arrival) are the 4 events beyond the data.
        "end 11901 events 260 tx_frames 128 tx_bytes 138528 busy_ns 11394 rx_bytes 131072 msgs 2"
    );
}
