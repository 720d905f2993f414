//! A fabric change racing a packet stream: no packet is processed with half
//! of a change.
//!
//! ```text
//!  stream (DSCP 26) ──► port 0 ─[ roce_switch.p4 + TM ]─► port 1
//!  control thread:  config A ⇄ config B, over and over, meanwhile
//! ```
//!
//! Config A maps DSCP 26 to priority 3 and makes 3 lossless; config B maps
//! it to 4 and makes 4 lossless. Both give every priority a 1-byte static
//! XOFF threshold, so a lossless packet always goes to headroom while a
//! lossy one is always tail-dropped: a packet classified by one config and
//! admitted by the other's lossless set would be dropped as lossy. The
//! stream and the changes run on different threads into the switch's
//! command queue, as P4Runtime/fabric jobs and packets meet on the daemon's
//! dataplane thread.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::mpsc::{Sender, channel};

use control::fabric::config::*;
use control::fabric::{FabricBackend, SwitchBackend};
use dataplane::driver::Command;
use dataplane::fabric::{L3Config, NextHop, Route, SwitchPlan};
use dataplane::rnic::frame::{RoceExt, RoceFrameRepr};
use dataplane::roce::{PROGRAM_INFO, Program};
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::Instant;
use dataplane::tm::DropReason;
use dataplane::wire::ib::{BthRepr, DEFAULT_PKEY, Opcode};
use dataplane::wire::ip::Ecn;

const ROUTER_MAC: [u8; 6] = [0x02, 0x52, 0x53, 0, 0, 1];
const PACKETS: usize = 20_000;
const FLIPS: usize = 400;

fn config(priority: u8) -> FabricConfig {
    let mut c = FabricConfig {
        ports: (0..2)
            .map(|port| PortConfig {
                port,
                speed_bps: 100_000_000_000,
                mtu_bytes: 1500,
                cable_length_m: 10,
                trust: Some(Trust::Dscp),
                pfc_priorities: vec![priority],
            })
            .collect(),
        buffer: BufferConfig {
            pool_size_bytes: 16 << 20,
            thresholds: (0..8)
                .map(|p| PriorityThreshold {
                    priority: p,
                    threshold: Some(Threshold::Static {
                        xoff_bytes: 1,
                        xon_bytes: 0,
                    }),
                })
                .collect(),
            headroom: Headroom::Explicit { bytes: 1 << 20 },
        },
        ..Default::default()
    };
    c.qos_maps.dscp_to_priority[26] = priority;
    c
}

fn frame(psn: u32) -> Vec<u8> {
    let r = RoceFrameRepr::new_ipv4(
        [2, 0, 0, 0, 0, 1],
        ROUTER_MAC,
        Ipv4Addr::new(10, 0, 0, 1),
        Ipv4Addr::new(10, 0, 1, 1),
        26,
        Ecn::Ect0,
        0xc000,
        BthRepr {
            opcode: Opcode::RcWriteOnly,
            solicited: false,
            migreq: false,
            pad_count: 0,
            pkey: DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qp: 5,
            ack_req: false,
            psn,
        },
        RoceExt::None,
        64,
    );
    let mut b = vec![0u8; r.buffer_len()];
    r.emit(&mut b, &[]).unwrap();
    b
}

/// A 2-port switch routing 10.0.1.1 out of port 1, on its own thread; each
/// command runs 1 µs after the previous one.
fn switch() -> Sender<Command<Program>> {
    let mut sw = Switch::new(Program::new(), SwitchConfig::with_ports(2), Instant::ZERO).unwrap();
    let routes = L3Config {
        router_mac: ROUTER_MAC,
        ecmp_seed: 1,
        routes: vec![Route {
            prefix: IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
            prefix_len: 32,
            next_hops: vec![NextHop {
                port: 1,
                dst_mac: [2, 0, 0, 0, 1, 1],
            }],
        }],
        bridged: Vec::new(),
    };
    SwitchPlan::build(sw.tm().config(), &config(3), Some(&routes), &PROGRAM_INFO)
        .unwrap()
        .apply(&mut sw, Instant::ZERO)
        .unwrap();
    let (tx, rx) = channel::<Command<Program>>();
    std::thread::spawn(move || {
        let mut t = 0;
        while let Ok(cmd) = rx.recv() {
            t += 1_000;
            cmd(&mut sw, Instant::from_nanos(t));
        }
    });
    tx
}

#[test]
fn a_fabric_change_is_never_half_applied_to_a_packet() {
    let tx = switch();
    let submit = tx.clone();
    let base = SwitchConfig::with_ports(2).tm;
    let backend = SwitchBackend::new(
        Box::new(move |cmd| submit.send(cmd).is_ok()),
        &PROGRAM_INFO,
        base,
    );
    backend.apply(&config(3)).unwrap();

    let stream = {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for psn in 0..PACKETS as u32 {
                let f = frame(psn);
                let sent = tx.send(Box::new(move |sw: &mut Switch<Program>, now| {
                    sw.handle_frame(0, &f, now);
                    sw.handle_timeout(now);
                    let mut out = Vec::new();
                    while sw.poll_transmit(1, now, &mut out).is_some() {}
                }));
                if sent.is_err() {
                    return;
                }
            }
        })
    };
    for k in 0..FLIPS {
        backend
            .apply(&config(if k % 2 == 0 { 4 } else { 3 }))
            .unwrap();
    }
    stream.join().unwrap();

    let (tx_frames, drops, lossless_rx) = {
        let (rtx, rrx) = channel();
        tx.send(Box::new(move |sw: &mut Switch<Program>, _| {
            let tm = sw.tm();
            let rx = |p| tm.stats(0, p).map_or(0, |s| s.rx_packets);
            let _ = rtx.send((sw.stats().tx_frames, tm.drop_counts(), rx(3) + rx(4)));
        }))
        .unwrap();
        rrx.recv().unwrap()
    };
    assert_eq!(
        drops[DropReason::LossyTailDrop],
        0,
        "a packet met a classification and a lossless set from different configs"
    );
    assert_eq!(drops.total(), 0);
    assert_eq!(
        lossless_rx, PACKETS as u64,
        "every packet admitted as lossless"
    );
    assert_eq!(tx_frames, PACKETS as u64, "every packet forwarded");
}
