//! One switch everywhere: the same recorded input through (a) a simulator
//! switch node and (b) the daemon's real-time `Driver` on in-memory ports
//! and a manual clock gives byte-identical output on every port, in the
//! same order, and identical counters.
//!
//! ```text
//!  H0 ─ p0 ┐                     ┌ p2 ─ H2   2:1 incast, DSCP 26 (lossless, ECN)
//!  H1 ─ p1 ┤                     │           PFC XOFF back to H0/H1, CE marks
//!  H3 ─ p3 ┤  roce_switch.p4     ├ p4..p7    ECMP over 4 members from H3,
//!          │  + traffic manager  │           a mirrored flow (clone to p7)
//!  H5 ─ p5 ┘                     └           broadcasts flooded to a group
//! ```
//!
//! The input is recorded once: frames with the instant they arrive (all
//! distinct), plus PFC frames the egress neighbour sends. Both harnesses
//! run the switch from the same configuration (`SwitchPlan` plus a few
//! table, group and session writes) and the same `random()` seed.

use std::net::{IpAddr, Ipv4Addr};

use dataplane::driver::{Clock, CommandReceiver, Driver, DriverIo, ManualClock, command_channel};
use dataplane::fabric::config::{
    BufferConfig, EcnProfile, PortConfig, PriorityThreshold, Threshold, Trust,
};
use dataplane::fabric::{FabricConfig, L3Config, NextHop, Route, SwitchPlan};
use dataplane::port::{FrameBuf, MemoryPort, Port};
use dataplane::rnic::frame::{RoceExt, RoceFrameRepr};
use dataplane::roce::{PROGRAM_INFO, Program};
use dataplane::sim::{TopologyBuilder, switch_config};
use dataplane::switch::Switch;
use dataplane::time::Instant;
use dataplane::wire::ethernet::EthernetAddress;
use dataplane::wire::ib::{BthRepr, DEFAULT_PKEY, Opcode};
use dataplane::wire::ip::Ecn;
use dataplane::wire::pfc::{FRAME_LEN as PFC_LEN, MacControlRepr, PfcRepr};
use p4_target::arch::{CloneSession, McReplica};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeApi, TableEntry};

const PORTS: usize = 8;
const SPEED_BPS: u64 = 10_000_000_000;
const SEED: u64 = 0x5eed;
const ROUTER_MAC: [u8; 6] = [0x02, 0x52, 0x53, 0, 0, 1];
const MIRRORED_SRC: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 9);

type Timed = (Instant, u16, Vec<u8>);

fn host_mac(i: u8) -> [u8; 6] {
    [2, 0, 0, 0, 0, i]
}

fn fabric() -> FabricConfig {
    FabricConfig {
        ports: (0..PORTS as u16)
            .map(|port| PortConfig {
                port,
                speed_bps: SPEED_BPS,
                mtu_bytes: 9000,
                cable_length_m: 10,
                trust: Some(Trust::Dscp),
                pfc_priorities: vec![3],
            })
            .collect(),
        buffer: BufferConfig {
            pool_size_bytes: 4 << 20,
            thresholds: vec![PriorityThreshold {
                priority: 3,
                threshold: Some(Threshold::Static {
                    xoff_bytes: 60_000,
                    xon_bytes: 10_000,
                }),
            }],
            ..Default::default()
        },
        ecn: vec![EcnProfile {
            port: 2,
            priority: 3,
            enabled: true,
            kmin_bytes: 10_000,
            kmax_bytes: 80_000,
            pmax: 0.3,
        }],
        ..Default::default()
    }
}

fn routes() -> L3Config {
    let hop = |port: u16| NextHop {
        port,
        dst_mac: host_mac(port as u8),
    };
    let host = |ip: [u8; 4], len: u8, next_hops| Route {
        prefix: IpAddr::V4(Ipv4Addr::from(ip)),
        prefix_len: len,
        next_hops,
    };
    L3Config {
        router_mac: ROUTER_MAC,
        ecmp_seed: 11,
        routes: vec![
            host([10, 0, 0, 1], 32, vec![hop(0)]),
            host([10, 0, 0, 2], 32, vec![hop(1)]),
            host([10, 0, 2, 1], 32, vec![hop(2)]),
            host([10, 0, 3, 0], 24, (4..8).map(hop).collect()),
        ],
        bridged: Vec::new(),
    }
}

fn action(name: &str, params: &[u128]) -> ActionCall {
    ActionCall::new(PROGRAM_INFO.action_by_name(name).unwrap().id, params)
}

/// The switch both harnesses run.
fn switch() -> Switch<Program> {
    let mut sw = Switch::new(Program::new(), switch_config(PORTS), Instant::ZERO).unwrap();
    SwitchPlan::build(sw.tm().config(), &fabric(), Some(&routes()), &PROGRAM_INFO)
        .unwrap()
        .apply(&mut sw, Instant::ZERO)
        .unwrap();
    let (p, pre) = sw.pipeline_and_pre_mut();
    let rt = p.runtime_mut();
    // Broadcasts flood to group 1 (the egress drops the copy for the source).
    let l2 = PROGRAM_INFO.table_by_name("l2_fwd").unwrap().id;
    rt.table_insert(
        l2,
        TableEntry {
            matches: vec![
                Some(FieldMatch::Exact(0)),
                Some(FieldMatch::Exact(0xffff_ffff_ffff)),
            ],
            priority: 0,
            action: EntryAction::Direct(action("set_mcast_grp", &[1])),
            metadata: Vec::new(),
        },
    )
    .unwrap();
    let replicas: Vec<McReplica> = (0..PORTS as u16)
        .map(|port| McReplica { port, rid: 1 })
        .collect();
    pre.mc_group_set(1, &replicas).unwrap();
    // One source's RoCE traffic is mirrored to port 7.
    let acl_info = PROGRAM_INFO.table_by_name("acl").unwrap();
    let (acl, mut matches) = (acl_info.id, vec![None; acl_info.keys.len()]);
    matches[2] = Some(FieldMatch::Ternary {
        value: u128::from(u32::from(MIRRORED_SRC)),
        mask: u128::MAX,
    });
    rt.table_insert(
        acl,
        TableEntry {
            matches,
            priority: 10,
            action: EntryAction::Direct(action("acl_mirror", &[5])),
            metadata: Vec::new(),
        },
    )
    .unwrap();
    pre.mirroring_add(
        5,
        CloneSession {
            replicas: vec![McReplica { port: 7, rid: 0 }],
            class_of_service: 0,
            truncate_bytes: Some(128),
        },
    )
    .unwrap();
    sw
}

fn roce(src: [u8; 4], dst: [u8; 4], sport: u16, psn: u32, payload: usize) -> Vec<u8> {
    let r = RoceFrameRepr::new_ipv4(
        host_mac(src[3]),
        ROUTER_MAC,
        Ipv4Addr::from(src),
        Ipv4Addr::from(dst),
        26,
        Ecn::Ect0,
        sport,
        BthRepr {
            opcode: Opcode::RcWriteOnly,
            solicited: false,
            migreq: false,
            pad_count: 0,
            pkey: DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qp: 0x11,
            ack_req: false,
            psn,
        },
        RoceExt::None,
        payload,
    );
    let mut b = vec![0u8; r.buffer_len()];
    r.emit(&mut b, &[]).unwrap();
    b
}

fn pfc(quanta: u16) -> Vec<u8> {
    let mut b = vec![0u8; PFC_LEN];
    let n = dataplane::wire::pfc::emit_frame(
        EthernetAddress(host_mac(2)),
        &MacControlRepr::Pfc(PfcRepr::xoff(1 << 3, quanta)),
        &mut b,
    )
    .unwrap();
    b.truncate(n);
    b
}

fn broadcast(src: u8, seq: u8) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&host_mac(src));
    f.extend_from_slice(&[0x08, 0x06]);
    f.extend(std::iter::repeat_n(seq, 46));
    f
}

/// The recorded input, in time order, every instant distinct.
fn input() -> Vec<Timed> {
    let mut v: Vec<Timed> = Vec::new();
    let ns = Instant::from_nanos;
    // 2:1 incast at line rate for 300 µs: ~1100-byte frames every 900 ns.
    for k in 0..330u64 {
        v.push((
            ns(1_000 + k * 900),
            0,
            roce([10, 0, 0, 1], [10, 0, 2, 1], 0xc001, k as u32, 1024),
        ));
        v.push((
            ns(1_450 + k * 900),
            1,
            roce([10, 0, 0, 2], [10, 0, 2, 1], 0xc002, k as u32, 1024),
        ));
    }
    // ECMP: 64 flows from H3 (some of them from the mirrored source).
    for k in 0..256u64 {
        let src = if k % 16 == 0 {
            MIRRORED_SRC.octets()
        } else {
            [10, 0, 0, 3]
        };
        let sport = 0xc100 + (k % 64) as u16;
        v.push((
            ns(1_225 + k * 1_300),
            3,
            roce(src, [10, 0, 3, 7], sport, k as u32, 256),
        ));
    }
    // Broadcasts from H5.
    for k in 0..20u64 {
        v.push((ns(1_333 + k * 17_000), 5, broadcast(5, k as u8)));
    }
    // H2 pauses the lossless priority for a while, then lets it go.
    v.push((ns(150_111), 2, pfc(2000)));
    v.push((ns(170_111), 2, pfc(0)));
    v.sort_by_key(|(t, ..)| *t);
    for w in v.windows(2) {
        assert!(w[0].0 < w[1].0, "instants must be distinct");
    }
    v
}

/// Everything a run is judged by.
#[derive(Debug, PartialEq)]
struct Observed {
    /// Frames per port, in order.
    out: Vec<Vec<Vec<u8>>>,
    stats: dataplane::switch::SwitchStats,
    tm: Vec<dataplane::tm::PrioStats>,
    drops: dataplane::tm::DropCounts,
    ecn_marked: u64,
}

fn observe(sw: &Switch<Program>, out: Vec<Vec<Vec<u8>>>) -> Observed {
    let ecn = p4_target::info::resolve_name(PROGRAM_INFO.counters.iter(), "ecn_marked", |c| c.name)
        .unwrap()
        .id;
    let rt = sw.pipeline().runtime();
    Observed {
        out,
        stats: sw.stats(),
        tm: (0..PORTS as u16)
            .flat_map(|p| (0..8).map(move |q| (p, q)))
            .map(|(p, q)| sw.tm().stats(p, q).unwrap())
            .collect(),
        drops: sw.tm().drop_counts(),
        ecn_marked: (0..PORTS as u32 * 8)
            .map(|i| rt.counter_read(ecn, i).unwrap().packets)
            .sum(),
    }
}

/// (a) The simulator: one switch node, the input injected on its ports,
/// every port captured.
fn run_sim(input: &[Timed], end: Instant) -> Observed {
    let mut b = TopologyBuilder::<Program>::new(SEED);
    let node = b.add_switch(switch());
    let mut sim = b.build();
    for p in 0..PORTS as u16 {
        sim.capture(node, p);
    }
    for (t, port, frame) in input {
        sim.inject(node, *port, frame, *t);
    }
    sim.run_until(end);
    let out = (0..PORTS as u16)
        .map(|p| {
            sim.captured(node, p)
                .iter()
                .map(|(_, f)| f.clone())
                .collect()
        })
        .collect();
    observe(sim.switch(node).unwrap().switch(), out)
}

fn quiet_io(commands: CommandReceiver<Program>) -> DriverIo<Program> {
    DriverIo {
        commands,
        packet_in: None,
        events: None,
        digests: None,
    }
}

/// (b) The daemon's driver on in-memory ports and a manual clock, stepped
/// from input to input and deadline to deadline.
fn run_driver(input: &[Timed], end: Instant) -> Observed {
    let mut ours = Vec::new();
    let mut theirs: Vec<Box<dyn Port + Send>> = Vec::new();
    for i in 0..PORTS {
        let (a, b) = MemoryPort::pair(&format!("h{i}"), &format!("p{i}"));
        ours.push(a);
        theirs.push(Box::new(b));
    }
    let mut sw = switch();
    // As the simulator seeds switch node 0.
    sw.pipeline_mut().runtime_mut().set_seed(SEED);
    let (_commands, cmd_rx) = command_channel::<Program>().unwrap();
    let clock = ManualClock::new(Instant::ZERO);
    let mut driver = Driver::with_clock(sw, theirs, quiet_io(cmd_rx), clock);
    let mut out = vec![Vec::new(); PORTS];
    let mut bufs = FrameBuf::batch(64);
    let mut collect = |ours: &mut [MemoryPort], out: &mut Vec<Vec<Vec<u8>>>| {
        for (p, link) in ours.iter_mut().enumerate() {
            while let n @ 1.. = link.recv_batch(&mut bufs).unwrap() {
                out[p].extend(bufs[..n].iter().map(|b| b.frame().to_vec()));
            }
        }
    };
    for (t, port, frame) in input {
        assert!(driver.advance_to(*t).unwrap());
        collect(&mut ours, &mut out);
        let mut b = FrameBuf::default();
        b.set_frame(frame);
        assert_eq!(ours[usize::from(*port)].send_batch(&[b]).unwrap(), 1);
    }
    assert!(driver.advance_to(end).unwrap());
    assert_eq!(driver.clock().now(), end);
    collect(&mut ours, &mut out);
    observe(driver.switch(), out)
}

#[test]
fn simulator_and_daemon_driver_produce_identical_output() {
    let input = input();
    let end = Instant::from_millis(3);
    let sim = run_sim(&input, end);
    let live = run_driver(&input, end);

    // The scenario exercised what it is about.
    let pfc_out: usize = [0usize, 1]
        .iter()
        .map(|&p| {
            sim.out[p]
                .iter()
                .filter(|f| f[12..14] == [0x88, 0x08])
                .count()
        })
        .sum();
    assert!(pfc_out > 0, "the incast made the switch send PFC");
    assert!(sim.ecn_marked > 0, "the incast queue was CE-marked");
    let ecmp: Vec<usize> = (4..8)
        .map(|p| {
            sim.out[p]
                .iter()
                .filter(|f| f[30..33] == [10, 0, 3])
                .count()
        })
        .collect();
    assert!(
        ecmp.iter().all(|&n| n > 16),
        "four ECMP members used: {ecmp:?}"
    );
    let mirrored = sim.out[7]
        .iter()
        .filter(|f| f.len() == 128 && f[26..30] == MIRRORED_SRC.octets())
        .count();
    assert_eq!(
        mirrored, 16,
        "every mirrored packet cloned, truncated to 128 B"
    );
    for p in (0..PORTS).filter(|&p| p != 5) {
        let floods = sim.out[p].iter().filter(|f| f[..6] == [0xff; 6]).count();
        assert_eq!(floods, 20, "port {p} got every broadcast");
    }
    // A recording does not pause when told to: the incast overruns its
    // headroom, and those lossless overflows are the only drops.
    let overflow = sim.drops[dataplane::tm::DropReason::HeadroomOverflow];
    assert!(overflow > 0);
    assert_eq!(sim.drops.total(), overflow);
    let data_in = input.len() as u64 - 2;
    assert_eq!(sim.stats.rx_frames, data_in + 2);

    // And both harnesses agree on every byte and every counter.
    for p in 0..PORTS {
        assert_eq!(sim.out[p].len(), live.out[p].len(), "frames on port {p}");
        for (i, (a, b)) in sim.out[p].iter().zip(&live.out[p]).enumerate() {
            let at = a.iter().zip(b).position(|(x, y)| x != y);
            assert!(
                a == b,
                "port {p} frame {i} differs (lengths {} / {}, first differing byte {at:?})",
                a.len(),
                b.len()
            );
        }
    }
    assert!(sim == live, "counters differ");
}
