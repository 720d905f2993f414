//! The conservation law under a million frames of hostile traffic.
//!
//! A seeded generator drives the switch core running the compiled
//! `roce_switch.p4` with a 4-port incast: valid RoCE (lossless) and TCP
//! (lossy) frames, truncated and corrupted copies of them, PFC frames that
//! pause the switch's egress (storms that trip the watchdog), LLDP, runts,
//! jumbos over and under the MTU and random bytes; every few thousand
//! frames the routes change and every few tens of thousands the fabric
//! configuration changes (speeds, cables, lossless priorities, DSCP map,
//! thresholds, watchdog, ETS, DCBX), each applied as one `SwitchPlan`.
//!
//! Peers honour the switch's PFC as a NIC would: a peer told to pause a
//! priority stops sending frames of it two cable delays later (the pause
//! frame travelling out, the last frame travelling in); frames the peer
//! cannot classify (random bytes, corrupted headers) are held while any
//! priority is paused. With headroom sized by the calculator (`Headroom::
//! Auto`, the buffer checked by `BufferBudget`), the lossless priorities
//! must lose nothing to headroom overflow; every other loss must carry a
//! named reason, and the ledger must balance at every check and be empty
//! after the final drain.

mod common;

use std::net::{IpAddr, Ipv4Addr};

use common::checksum;
use dataplane::fabric::config::{
    BufferConfig, DcbxConfig, EcnProfile, EtsPort, Headroom, PortConfig, PriorityThreshold,
    QosMaps, Threshold, Trust, WatchdogAction, WatchdogConfig,
};
use dataplane::fabric::{FabricConfig, L3Config, NextHop, Route, SwitchPlan};
use dataplane::roce::{PROGRAM_INFO, Program};
use dataplane::switch::{Switch, SwitchConfig, SwitchDrop};
use dataplane::time::Instant;
use dataplane::tm::BudgetVerdict;

const PORTS: usize = 4;
const ROUTER_MAC: [u8; 6] = [0x02, 0x52, 0x53, 0, 0, 1];
const FRAMES: u64 = 1_000_000;

/// The seeded generator behind the P4 `random` extern (SplitMix64): small,
/// replayable, good enough to pick traffic.
struct Rng(p4_target::externs::Rng);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn byte(&mut self) -> u8 {
        self.next() as u8
    }
}

fn routes(rng: &mut Rng) -> L3Config {
    let hop = |port: u16| NextHop {
        port,
        dst_mac: [0x02, 0xbb, 0, 0, 0, port as u8],
    };
    let mut routes = Vec::new();
    for p in 0..PORTS as u16 {
        // Now and then a prefix is missing: its frames are dropped by the
        // program (no route), a named reason.
        if rng.chance(90) {
            routes.push(Route {
                prefix: IpAddr::V4(Ipv4Addr::new(10, 0, p as u8, 0)),
                prefix_len: 24,
                next_hops: vec![hop(p)],
            });
        }
    }
    routes.push(Route {
        prefix: IpAddr::V4(Ipv4Addr::new(10, 0, 9, 0)),
        prefix_len: 24,
        next_hops: vec![hop(2), hop(3)],
    });
    L3Config {
        router_mac: ROUTER_MAC,
        ecmp_seed: rng.next() as u32,
        routes,
        bridged: Vec::new(),
    }
}

/// A random fabric configuration the validator accepts, with calculator
/// headroom and a buffer the budget says fits.
fn fabric(rng: &mut Rng) -> FabricConfig {
    loop {
        let lossless = 3 + rng.below(2) as u8; // 3 or 4
        let speeds = [10_000_000_000u64, 25_000_000_000, 40_000_000_000];
        let mut qos = QosMaps::default();
        qos.dscp_to_priority[26] = lossless;
        qos.dscp_to_priority[10] = rng.below(3) as u8; // lossy TCP class
        let mut cfg = FabricConfig {
            ports: (0..PORTS as u16)
                .map(|port| PortConfig {
                    port,
                    speed_bps: speeds[rng.below(3) as usize],
                    mtu_bytes: [1500, 4200, 9000][rng.below(3) as usize],
                    cable_length_m: 1 + rng.below(300) as u32,
                    trust: Some(Trust::Dscp),
                    pfc_priorities: vec![lossless],
                })
                .collect(),
            qos_maps: qos,
            buffer: BufferConfig {
                pool_size_bytes: 0,
                thresholds: vec![PriorityThreshold {
                    priority: lossless,
                    threshold: Some(Threshold::Dynamic {
                        alpha: [0.5, 1.0, 2.0][rng.below(3) as usize],
                    }),
                }],
                headroom: Headroom::Auto,
            },
            ecn: vec![EcnProfile {
                port: 3,
                priority: lossless,
                enabled: rng.chance(50),
                kmin_bytes: 20_000,
                kmax_bytes: 200_000,
                pmax: 0.2,
            }],
            ets: if rng.chance(50) {
                vec![EtsPort {
                    port: 3,
                    weights: vec![10, 10, 10, 20, 20, 10, 10, 10],
                }]
            } else {
                Vec::new()
            },
            watchdog: WatchdogConfig {
                enabled: rng.chance(70),
                detection_time_ms: 100 + rng.below(200) as u32,
                restoration_time_ms: Some(100 + rng.below(200) as u32),
                action: Some(
                    [
                        WatchdogAction::Drop,
                        WatchdogAction::Forward,
                        WatchdogAction::Alert,
                    ][rng.below(3) as usize],
                ),
                poll_interval_ms: 100,
            },
            dcbx: DcbxConfig {
                enabled: rng.chance(50),
                system_name: String::new(),
                tx_interval_s: 1,
            },
            security: Default::default(),
        };
        // A buffer of the headroom the calculator asks for plus 1–4 MB shared.
        let headroom = cfg.headroom_total_bytes();
        cfg.buffer.pool_size_bytes = headroom + ((1 + rng.below(4)) << 20);
        if cfg.validate().is_empty() && cfg.buffer_budget().verdict() == BudgetVerdict::Lossless {
            return cfg;
        }
    }
}

fn ipv4_frame(dst: [u8; 4], dscp: u8, proto: u8, l4: &[u8], payload: usize) -> Vec<u8> {
    let mut f = ROUTER_MAC.to_vec();
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00]);
    let ip_len = (20 + l4.len() + payload) as u16;
    f.extend_from_slice(&[0x45, (dscp << 2) | 2]);
    f.extend_from_slice(&ip_len.to_be_bytes());
    f.extend_from_slice(&[0, 1, 0x40, 0, 64, proto, 0, 0, 10, 0, 0, 1]);
    f.extend_from_slice(&dst);
    let c = checksum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(l4);
    f.resize(f.len() + payload, 0xab);
    f
}

/// A RoCE WRITE to 10.0.`net`.2, or to a random one of the incast's
/// destinations.
fn roce(rng: &mut Rng, payload: usize, net: Option<u8>) -> Vec<u8> {
    let dst = [10, 0, net.unwrap_or([2, 3, 9][rng.below(3) as usize]), 2];
    let sport = 0xc000 | rng.below(0x1000) as u16;
    let mut l4 = Vec::new();
    l4.extend_from_slice(&sport.to_be_bytes());
    l4.extend_from_slice(&4791u16.to_be_bytes());
    l4.extend_from_slice(&((8 + 12 + 16 + payload + 4) as u16).to_be_bytes());
    l4.extend_from_slice(&[0, 0]);
    l4.extend_from_slice(&[0x0a, 0, 0xff, 0xff, 0, 0, 0x01, 0x23]);
    l4.extend_from_slice(&(rng.next() as u32 & 0xff_ffff).to_be_bytes());
    l4.extend_from_slice(&[0; 16]);
    let mut f = ipv4_frame(dst, 26, 17, &l4, payload);
    f.extend_from_slice(&[0; 4]);
    f
}

fn tcp(rng: &mut Rng, payload: usize) -> Vec<u8> {
    let dst = [10, 0, [0, 1, 2, 3, 3, 3][rng.below(6) as usize], 2];
    let mut l4 = vec![0u8; 20];
    l4[..2].copy_from_slice(&(rng.next() as u16).to_be_bytes());
    l4[2..4].copy_from_slice(&80u16.to_be_bytes());
    l4[12] = 0x50;
    ipv4_frame(dst, 10, 6, &l4, payload)
}

fn pfc(rng: &mut Rng) -> Vec<u8> {
    let mut f = vec![
        0x01, 0x80, 0xc2, 0, 0, 1, 0x02, 0, 0, 0, 0, 0x09, 0x88, 0x08, 0x01, 0x01,
    ];
    f.extend_from_slice(&[0, rng.byte()]);
    for _ in 0..8 {
        let quanta = if rng.chance(30) { 0 } else { rng.next() as u16 };
        f.extend_from_slice(&quanta.to_be_bytes());
    }
    f.resize(60, 0);
    f
}

fn lldp(rng: &mut Rng) -> Vec<u8> {
    let mut f = vec![
        0x01, 0x80, 0xc2, 0, 0, 0x0e, 0x02, 0, 0, 0, 0, 0x0a, 0x88, 0xcc,
    ];
    let n = rng.below(200) as usize;
    f.extend((0..n).map(|_| rng.byte()));
    f
}

/// What a peer knows about a frame it is about to send.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// A priority the peer classifies the frame as (its DSCP under the
    /// current map).
    Priority(u8),
    /// A frame the peer cannot classify: held while any priority is paused.
    Unknown,
    /// MAC Control: never paused.
    Control,
}

struct Peer {
    /// When the port's peer may send its next frame (ns).
    next_send: u64,
    /// Per priority: paused from `.0` until `.1` (ns), as seen at the switch.
    paused: [(u64, u64); 8],
}

/// The frame kinds and their weights, in percent.
fn frame(rng: &mut Rng, cfg: &FabricConfig) -> (Vec<u8>, Class) {
    let class_of = |dscp: usize| Class::Priority(cfg.qos_maps.dscp_to_priority[dscp]);
    let k = rng.below(100);
    let n = rng.below(1 << 16) as usize;
    match k {
        0..=34 => (roce(rng, 64 + n % 1024, None), class_of(26)),
        35..=59 => (tcp(rng, n % 1400), class_of(10)),
        60..=64 => {
            let mut f = roce(rng, 256, None);
            f.truncate(rng.below(f.len() as u64) as usize);
            (f, Class::Unknown)
        }
        65..=69 => {
            let mut f = if rng.chance(50) {
                roce(rng, 256, None)
            } else {
                tcp(rng, 256)
            };
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(f.len().min(70) as u64) as usize;
                f[at] = rng.byte();
            }
            (f, Class::Unknown)
        }
        70..=72 => (pfc(rng), Class::Control),
        73..=74 => (lldp(rng), Class::Control),
        75..=77 => {
            let n = rng.below(60) as usize;
            ((0..n).map(|_| rng.byte()).collect(), Class::Unknown)
        }
        78..=84 => (roce(rng, 4000 + n % 5500, None), class_of(26)),
        _ => {
            let n = rng.below(1600) as usize;
            ((0..n).map(|_| rng.byte()).collect(), Class::Unknown)
        }
    }
}

/// Cable delay of `m` metres of fibre (5 ns/m), ns.
fn cable_ns(m: u32) -> u64 {
    u64::from(m) * 5
}

#[test]
fn every_frame_is_accounted_for_under_a_million_hostile_frames() {
    let seed = std::env::var("CONSERVATION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_0018);
    let frames = std::env::var("CONSERVATION_FRAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(FRAMES);
    let mut rng = Rng(p4_target::externs::Rng::new(seed));
    let mut sw = Switch::new(
        Program::new(),
        SwitchConfig::with_ports(PORTS),
        Instant::ZERO,
    )
    .unwrap();
    let mut cfg = fabric(&mut rng);
    let apply = |sw: &mut Switch<Program>, cfg: &FabricConfig, rng: &mut Rng, now: u64| {
        SwitchPlan::build(sw.tm().config(), cfg, Some(&routes(rng)), &PROGRAM_INFO)
            .expect("a valid fabric plans")
            .apply(sw, Instant::from_nanos(now))
            .expect("a planned fabric applies");
    };
    apply(&mut sw, &cfg, &mut rng, 0);

    let mut peers: Vec<Peer> = (0..PORTS)
        .map(|_| Peer {
            next_send: 0,
            paused: [(0, 0); 8],
        })
        .collect();
    let mut out = Vec::new();
    let mut offered = 0u64;
    let mut held = 0u64;
    let mut pfc_from_switch = 0u64;
    let mut now = 0u64;
    let started = std::time::Instant::now();
    let transmit = |sw: &mut Switch<Program>,
                    peers: &mut [Peer],
                    cfg: &FabricConfig,
                    now: u64,
                    out: &mut Vec<u8>,
                    pfc_from_switch: &mut u64| {
        let t = Instant::from_nanos(now);
        sw.handle_timeout(t);
        #[allow(clippy::needless_range_loop)] // port indexes the switch, cfg and peers alike
        for port in 0..PORTS {
            while let Some(tx) = sw.poll_transmit(port as u16, t, out) {
                if tx.priority.is_some() || out.len() < 34 || out[12..16] != [0x88, 0x08, 1, 1] {
                    continue;
                }
                // The switch paused this port's peer: it stops after the
                // frame has crossed the cable and the frames already on
                // the cable have arrived.
                *pfc_from_switch += 1;
                let speed = cfg.ports[port].speed_bps;
                let from = now + 2 * cable_ns(cfg.ports[port].cable_length_m);
                for p in 0..8 {
                    if out[17] & (1 << p) == 0 {
                        continue;
                    }
                    let quanta = u64::from(u16::from_be_bytes([out[18 + 2 * p], out[19 + 2 * p]]));
                    // The new state takes over at `from`; until then the
                    // old one holds (a refresh keeps the peer paused).
                    let (old_from, old_until) = peers[port].paused[p];
                    let old_covers = old_until > from;
                    peers[port].paused[p] = if quanta == 0 {
                        (old_from, old_until.min(from))
                    } else {
                        let until = from + quanta * 512 * 1_000_000_000 / speed;
                        (if old_covers { old_from } else { from }, until)
                    };
                }
            }
        }
        while let Some(e) = sw.poll_event() {
            if std::env::var("CONSERVATION_DEBUG").is_ok()
                && matches!(
                    e,
                    dataplane::switch::SwitchEvent::Tm(
                        dataplane::tm::TmEvent::HeadroomOverflow { .. }
                    )
                )
            {
                eprintln!("t {now}: {e:?} {:?}", cfg.ports);
            }
        }
        while sw.poll_digest().is_some() {}
        while sw.poll_packet_in().is_some() {}
    };

    for i in 0..frames {
        if i % 5_000 == 4_999 {
            // Table churn: the routes move, appear and disappear.
            apply(&mut sw, &cfg, &mut rng, now);
        }
        if i % 250_000 == 249_999 {
            cfg = fabric(&mut rng);
            if i == 499_999 {
                // The storm below needs a watchdog that drops.
                cfg.watchdog = WatchdogConfig {
                    enabled: true,
                    detection_time_ms: 100,
                    restoration_time_ms: Some(100),
                    action: Some(WatchdogAction::Drop),
                    poll_interval_ms: 100,
                };
            }
            apply(&mut sw, &cfg, &mut rng, now);
        }
        // A pause storm: at frame 600k port 3's peer gets stuck and keeps
        // its link paused on every priority for 300 ms (the other peers
        // idle meanwhile), with lossless frames queued for it, so the
        // watchdog must step in and drop them.
        if i == 600_000 {
            let lossless = cfg.qos_maps.dscp_to_priority[26];
            let until = now + 300_000_000;
            while now < until {
                let mut storm = pfc(&mut rng);
                storm[17] = 0xff;
                for b in &mut storm[18..34] {
                    *b = 0xff;
                }
                offered += 1;
                sw.handle_frame(3, &storm, Instant::from_nanos(now));
                // Port 0's peer keeps offering lossless frames, some of
                // which the ECMP group sends to the stuck port.
                let (from, until) = peers[0].paused[usize::from(lossless)];
                if !(now >= from && now < until) {
                    let f = roce(&mut rng, 512, Some(9));
                    offered += 1;
                    sw.handle_frame(0, &f, Instant::from_nanos(now));
                }
                transmit(
                    &mut sw,
                    &mut peers,
                    &cfg,
                    now,
                    &mut out,
                    &mut pfc_from_switch,
                );
                now += 20_000;
            }
            for p in &mut peers {
                p.next_send = p.next_send.max(now);
            }
        }
        // The next sender: the peer that can send earliest.
        let port = (0..PORTS).min_by_key(|&p| peers[p].next_send).unwrap();
        now = now.max(peers[port].next_send);
        let (f, class) = frame(&mut rng, &cfg);
        let speed = cfg.ports[port].speed_bps;
        let wire_ns = (f.len().max(60) as u64 + 24) * 8 * 1_000_000_000 / speed;
        // Ingress ports 0 and 1 offer near line rate, 2 and 3 a little:
        // an incast towards ports 2 and 3.
        let idle = if port < 2 {
            rng.below(wire_ns / 4 + 1)
        } else {
            wire_ns * (2 + rng.below(6))
        };
        peers[port].next_send = now + wire_ns + idle;
        let is_paused = |p: usize| {
            let (from, until) = peers[port].paused[p];
            now >= from && now < until
        };
        let hold = match class {
            Class::Control => false,
            Class::Priority(p) => is_paused(usize::from(p)),
            Class::Unknown => (0..8).any(is_paused),
        };
        if hold {
            held += 1;
        } else {
            offered += 1;
            sw.handle_frame(port as u16, &f, Instant::from_nanos(now));
        }
        transmit(
            &mut sw,
            &mut peers,
            &cfg,
            now,
            &mut out,
            &mut pfc_from_switch,
        );
        if std::env::var("CONSERVATION_DEBUG").is_ok() && i % 50_000 == 0 {
            let lossless = cfg.ports[3].pfc_priorities[0];
            eprintln!(
                "{i}: t {now} wd {:?} q3 {:?} paused {}",
                sw.tm().watchdog().stats(3, lossless),
                sw.tm().queue_depth(3, lossless),
                sw.tm().is_paused(3, lossless, Instant::from_nanos(now))
            );
        }
        if i % 50_000 == 0 {
            sw.conservation()
                .unwrap_or_else(|e| panic!("frame {i}, seed {seed:#x}: {e}"));
        }
    }
    // Peers stop; the switch drains (pauses it received expire, at most
    // 65535 quanta at the slowest port, ~3.4 ms).
    let end = now + 1_000_000_000;
    while now < end {
        now += 10_000;
        transmit(
            &mut sw,
            &mut peers,
            &cfg,
            now,
            &mut out,
            &mut pfc_from_switch,
        );
    }
    let elapsed = started.elapsed();

    sw.conservation()
        .unwrap_or_else(|e| panic!("after the drain, seed {seed:#x}: {e}"));
    let ledger = sw.ledger();
    let total = ledger.total();
    assert_eq!(total.arrived, offered, "every frame offered arrived");
    assert_eq!(total.queued() + total.recirculating, 0, "drained");
    assert_eq!(
        total.dropped(SwitchDrop::HeadroomOverflow),
        0,
        "lossless priorities lose nothing to calculator-sized headroom (seed {seed:#x})"
    );
    assert!(
        total.forwarded() > offered / 4,
        "the mix is mostly forwardable"
    );
    // The mix exercised the reasons it was built to.
    for reason in [
        SwitchDrop::MacMalformed,
        SwitchDrop::IngressDrop,
        SwitchDrop::OverMtu,
    ] {
        assert!(total.dropped(reason) > 0, "no {} drops", reason.name());
    }
    assert!(total.consumed > 0, "PFC and LLDP frames were consumed");
    if frames >= FRAMES {
        assert!(
            total.dropped(SwitchDrop::WatchdogDrop) > 0,
            "the storm tripped the watchdog"
        );
    }
    assert!(pfc_from_switch > 0, "the incast made the switch send PFC");
    let headroom_peak = (0..PORTS as u16)
        .flat_map(|p| (0..8).map(move |g| (p, g)))
        .filter_map(|(p, g)| sw.tm().pg_usage(p, g))
        .map(|u| u.headroom_peak_bytes)
        .max()
        .unwrap_or(0);
    assert!(
        headroom_peak > 0,
        "lossless frames reached the headroom, so the no-loss check means something"
    );
    eprintln!(
        "{frames} frames (seed {seed:#x}) in {:.1} s: {:.0} frames/s; offered {offered}, \
         held by PFC {held}, forwarded {}, consumed {}, PFC sent {pfc_from_switch}, \
         {:.3} s simulated, headroom peak {headroom_peak} B",
        elapsed.as_secs_f64(),
        frames as f64 / elapsed.as_secs_f64(),
        total.forwarded(),
        total.consumed,
        now as f64 / 1e9,
    );
    for reason in SwitchDrop::ALL {
        let n = total.dropped(reason);
        if n > 0 {
            eprintln!("  dropped {:>24}: {n}", reason.name());
        }
    }
}
