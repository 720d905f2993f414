//! End-to-end check of the TM, MAC and PFC wire format together: a 2:1
//! incast through one switch, with real 60-byte PFC frames on the wires.
//!
//! ```text
//!   host A ──100G, 100 m──┐
//!                         ├── switch ──100G──► sink C
//!   host B ──100G, 100 m──┘   (ports 0, 1 → port 2)
//! ```
//!
//! Hosts are TMs too (port 0 = application, port 1 = wire), so they honour
//! received PFC exactly as the switch does. Lossless (priority 3): zero drops,
//! PFC sent and honoured, the bottleneck stays busy. Lossy (priority 0): tail
//! drops, no PFC. Time is simulated: the loop jumps to the next timer or
//! frame arrival.

use std::collections::VecDeque;

use dataplane::mac::{Mac, RxClass};
use dataplane::time::{Duration, Instant, bits_time};
use dataplane::tm::{DropReason, EnqueueMeta, Threshold, Tm, TmConfig};
use dataplane::wire::ethernet::EthernetAddress;

const SPEED_BPS: u64 = 100_000_000_000;
/// 100 m of cable at 198,000 km/s (R-UNIT-4).
const PROP_100M: Duration = Duration::from_nanos(505);
const LEN: u32 = 1000;

#[derive(Debug, Clone, Copy)]
struct Pkt {
    priority: u8,
    len_bytes: u32,
}

enum Frame {
    Data(Pkt),
    Control(Vec<u8>),
}

struct Node {
    tm: Tm<Pkt>,
    macs: Vec<Mac>,
    /// Egress port for data arriving on any port.
    route: u16,
}

/// One direction of a cable: frames in flight with their arrival times.
struct Wire {
    from: (usize, u16),
    /// `None` = the sink.
    to: Option<(usize, u16)>,
    in_flight: VecDeque<(Instant, Frame)>,
}

struct Outcome {
    switch_drops: u64,
    lossy_drops: u64,
    headroom_drops: u64,
    pfc_sent_by_switch: u64,
    pfc_received_by_hosts: u64,
    host_paused_ns: u64,
    headroom_peak_bytes: u64,
    headroom_cap_bytes: u64,
    sink_bytes_after_warmup: u64,
    warmup: Instant,
    end: Instant,
}

fn node(ports: usize, route: u16, cable_length_m: u32) -> Node {
    let mut cfg = TmConfig::with_ports(ports);
    for (i, p) in cfg.ports.iter_mut().enumerate() {
        p.speed_bps = SPEED_BPS;
        p.cable_length_m = Some(cable_length_m);
        p.mac = EthernetAddress([0x02, 0, 0, 0, route as u8, i as u8]);
        for q in &mut p.queues {
            q.limit = Threshold::Dynamic(0);
        }
    }
    Node {
        tm: Tm::new(cfg, Instant::ZERO).unwrap(),
        macs: (0..ports)
            .map(|i| Mac::new(EthernetAddress([0x02, 0, 0, 0, route as u8, i as u8])))
            .collect(),
        route,
    }
}

/// Run the incast with `prop` of cable per hop; the switch sizes its
/// headroom for `headroom_cable_m` metres (R-HR-2).
fn run(priority: u8, end: Instant, prop: Duration, headroom_cable_m: u32) -> Outcome {
    // 0 = switch, 1 = host A, 2 = host B.
    let mut nodes = vec![
        node(3, 2, headroom_cable_m),
        node(2, 1, 100),
        node(2, 1, 100),
    ];
    let mut wires = vec![
        Wire {
            from: (1, 1),
            to: Some((0, 0)),
            in_flight: VecDeque::new(),
        },
        Wire {
            from: (0, 0),
            to: Some((1, 1)),
            in_flight: VecDeque::new(),
        },
        Wire {
            from: (2, 1),
            to: Some((0, 1)),
            in_flight: VecDeque::new(),
        },
        Wire {
            from: (0, 1),
            to: Some((2, 1)),
            in_flight: VecDeque::new(),
        },
        Wire {
            from: (0, 2),
            to: None,
            in_flight: VecDeque::new(),
        },
    ];
    let warmup = Instant::from_micros(500);
    let mut sink_bytes = 0u64;
    let mut now = Instant::ZERO;
    let mut buf = [0u8; 64];
    while now < end {
        // Deliver frames that have fully arrived.
        for w in &mut wires {
            while w.in_flight.front().is_some_and(|(t, _)| *t <= now) {
                let (_, frame) = w.in_flight.pop_front().unwrap();
                let Some((to, port)) = w.to else {
                    if let Frame::Data(p) = frame
                        && now >= warmup
                    {
                        sink_bytes += u64::from(p.len_bytes);
                    }
                    continue;
                };
                let n = &mut nodes[to];
                match frame {
                    Frame::Data(p) => {
                        let meta = EnqueueMeta {
                            ingress_port: port,
                            egress_port: n.route,
                            priority: p.priority,
                            len_bytes: p.len_bytes,
                        };
                        let _ = n.tm.handle_enqueue(p, meta, now);
                    }
                    Frame::Control(bytes) => match n.macs[usize::from(port)].handle_rx(&bytes) {
                        RxClass::Control(repr) => n.tm.handle_mac_control(port, &repr, now),
                        other => panic!("PFC frame classified as {other:?}"),
                    },
                }
            }
        }
        // Hosts keep their wire queue backlogged from the application port.
        for h in &mut nodes[1..] {
            while h.tm.queue_depth(1, priority).unwrap().1 < 16 {
                let meta = EnqueueMeta {
                    ingress_port: 0,
                    egress_port: 1,
                    priority,
                    len_bytes: LEN,
                };
                h.tm.handle_enqueue(
                    Pkt {
                        priority,
                        len_bytes: LEN,
                    },
                    meta,
                    now,
                )
                .unwrap();
            }
        }
        // Timers, then control frames ahead of data on every port.
        for n in &mut nodes {
            n.tm.handle_timeout(now);
        }
        for w in &mut wires {
            let (from, port) = w.from;
            let n = &mut nodes[from];
            while let Some(pfc) = n.tm.poll_control_frame(port, now) {
                let len = n.macs[usize::from(port)].emit_pfc(&pfc, &mut buf).unwrap();
                w.in_flight.push_back((
                    now + bits_time(len as u64, SPEED_BPS) + prop,
                    Frame::Control(buf[..len].to_vec()),
                ));
            }
            while let Some(d) = n.tm.poll_transmit(port, now) {
                let arrive = now + bits_time(u64::from(d.meta.len_bytes), SPEED_BPS) + prop;
                w.in_flight.push_back((arrive, Frame::Data(d.packet)));
            }
        }
        for h in &mut nodes[1..] {
            while h.tm.poll_control_frame(0, now).is_some() {} // application port: discard
        }
        // Jump to the next thing that can happen.
        let next_timer = nodes.iter().filter_map(|n| n.tm.poll_timeout()).min();
        let next_arrival = wires
            .iter()
            .filter_map(|w| w.in_flight.front().map(|(t, _)| *t))
            .min();
        let next = [next_timer, next_arrival]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(end);
        now = next.max(now + Duration::from_nanos(1));
    }
    let s = &nodes[0].tm;
    let host_stat = |i: usize| nodes[i].tm.stats(1, priority).unwrap();
    Outcome {
        switch_drops: s.drop_counts().total(),
        lossy_drops: s.drop_counts()[DropReason::LossyTailDrop]
            + s.drop_counts()[DropReason::EgressLimit],
        headroom_drops: s.drop_counts()[DropReason::HeadroomOverflow],
        pfc_sent_by_switch: s.port_stats(0).unwrap().pfc_tx_frames
            + s.port_stats(1).unwrap().pfc_tx_frames,
        pfc_received_by_hosts: host_stat(1).pfc_rx_frames + host_stat(2).pfc_rx_frames,
        host_paused_ns: host_stat(1).pause_rx_ns + host_stat(2).pause_rx_ns,
        headroom_peak_bytes: (0..2)
            .map(|p| s.pg_usage(p, priority).unwrap().headroom_peak_bytes)
            .max()
            .unwrap(),
        headroom_cap_bytes: s.config().ports[0]
            .pg_headroom_bytes(usize::from(priority))
            .unwrap(),
        sink_bytes_after_warmup: sink_bytes,
        warmup,
        end,
    }
}

fn line_rate_bytes(o: &Outcome) -> f64 {
    (o.end - o.warmup).as_secs_f64() * SPEED_BPS as f64 / 8.0
}

#[test]
fn lossless_incast_has_no_drops_and_keeps_the_bottleneck_busy() {
    let o = run(3, Instant::from_millis(3), PROP_100M, 100);
    assert_eq!(o.switch_drops, 0, "lossless traffic dropped");
    // In-flight data after XOFF landed in headroom, within the R-HR-2 size (62,464 B).
    assert!(o.headroom_peak_bytes > 0);
    assert!(o.headroom_peak_bytes <= o.headroom_cap_bytes);
    assert_eq!(o.headroom_drops, 0);
    assert!(o.pfc_sent_by_switch > 0, "no PFC generated");
    assert_eq!(
        o.pfc_received_by_hosts, o.pfc_sent_by_switch,
        "every PFC frame decoded by a host"
    );
    assert!(o.host_paused_ns > 0, "hosts never paused");
    let ratio = o.sink_bytes_after_warmup as f64 / line_rate_bytes(&o);
    assert!(
        ratio > 0.98 && ratio < 1.01,
        "bottleneck utilisation {ratio}"
    );
}

#[test]
fn lossy_incast_tail_drops_without_pfc() {
    let o = run(0, Instant::from_millis(3), PROP_100M, 100);
    assert!(o.lossy_drops > 0, "lossy overload must drop");
    assert_eq!(o.headroom_drops, 0);
    assert_eq!(o.pfc_sent_by_switch, 0);
    assert_eq!(o.pfc_received_by_hosts, 0);
    let ratio = o.sink_bytes_after_warmup as f64 / line_rate_bytes(&o);
    assert!(
        ratio > 0.98 && ratio < 1.01,
        "bottleneck utilisation {ratio}"
    );
}

#[test]
fn headroom_sized_for_a_short_cable_overflows_on_a_long_one() {
    // 2 km of cable (≈ 10.1 µs each way) but headroom computed for 5 m.
    let o = run(3, Instant::from_millis(1), Duration::from_nanos(10_101), 5);
    assert!(o.headroom_drops > 0, "undersized headroom must overflow");
    assert_eq!(o.lossy_drops, 0);
    // Each 1000-byte packet is charged 1024 bytes: the headroom filled to within one packet.
    assert!(o.headroom_peak_bytes + 1024 > o.headroom_cap_bytes);
    assert!(o.headroom_peak_bytes <= o.headroom_cap_bytes);
}
