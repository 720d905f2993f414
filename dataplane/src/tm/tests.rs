//! Traffic-manager tests, grouped by state under banner comments. Every
//! helper macro takes an explicit time in nanoseconds.

use super::*;
use crate::time::{Duration, Instant, pause_quanta_to_duration};
use crate::watchdog::{WatchdogPortConfig, WdAction, WdMode};
use crate::wire::pfc::{MacControlRepr, PauseRepr, PfcRepr};

#[path = "../../tests/common/watchdog.rs"]
mod watchdog_fixture;

const G100: u64 = 100_000_000_000;
const G10: u64 = 10_000_000_000;

fn at(ns: u64) -> Instant {
    Instant::from_nanos(ns)
}

/// Enqueue packet `$id` at time `$t` ns.
macro_rules! enq {
    ($tm:expr, $t:expr, $id:expr, $ip:expr => $ep:expr, prio $p:expr, len $len:expr) => {
        $tm.handle_enqueue(
            $id,
            EnqueueMeta {
                ingress_port: $ip,
                egress_port: $ep,
                priority: $p,
                len_bytes: $len,
            },
            at($t),
        )
    };
}

/// Poll one data packet from `$port` at time `$t` ns.
macro_rules! tx {
    ($tm:expr, $t:expr, $port:expr) => {
        $tm.poll_transmit($port, at($t))
    };
}

/// Poll one control frame from `$port` at time `$t` ns.
macro_rules! ctrl {
    ($tm:expr, $t:expr, $port:expr) => {
        $tm.poll_control_frame($port, at($t))
    };
}

/// Receive a PFC frame on `$port` at time `$t` ns for priorities `$mask`.
macro_rules! rx_pfc {
    ($tm:expr, $t:expr, $port:expr, mask $mask:expr, quanta $q:expr) => {
        $tm.handle_mac_control(
            $port,
            &MacControlRepr::Pfc(PfcRepr::xoff($mask, $q)),
            at($t),
        )
    };
}

/// A config with `n` ports: PFC on priority 3 only, unlimited egress limits
/// for lossy queues unless a test sets them.
fn config(n: usize) -> TmConfig {
    let mut cfg = TmConfig::with_ports(n);
    for p in &mut cfg.ports {
        for q in &mut p.queues {
            q.limit = Threshold::Static(0);
        }
    }
    cfg
}

fn tm(cfg: TmConfig) -> Tm<u32> {
    Tm::new(cfg, Instant::ZERO).expect("valid config")
}

/// Drain every transmittable packet of `port`, advancing time to each shaper
/// release, until nothing is sendable; returns (packets, end time).
fn drain(tm: &mut Tm<u32>, port: u16, mut now: u64) -> (Vec<Dequeued<u32>>, u64) {
    let mut out = Vec::new();
    loop {
        while ctrl!(tm, now, port).is_some() {}
        if let Some(d) = tx!(tm, now, port) {
            out.push(d);
            continue;
        }
        match tm.next_transmit_at(port) {
            Some(t) if t.as_nanos() > now => now = t.as_nanos(),
            Some(_) => continue,
            None => return (out, now),
        }
    }
}

// ---- configuration ------------------------------------------------------------

#[test]
fn default_config_is_valid_and_headroom_comes_from_cable_length() {
    let tm = tm(TmConfig::with_ports(4));
    // R-HR-2 E-6: 100G, 100 m, MTU 9100, Spectrum-2 → xoff 62,464 per lossless PG.
    assert_eq!(tm.config().ports[0].pg_headroom_bytes(3), Some(62_464));
    assert_eq!(tm.config().ports[0].pg_headroom_bytes(0), Some(0));
    assert_eq!(tm.shared_pool_bytes(), 12 * 1024 * 1024 - 4 * 62_464);
}

#[test]
fn invalid_config_lists_every_problem() {
    let mut cfg = TmConfig::with_ports(2);
    cfg.ports[0].legacy_pause = true; // with PFC on priority 3: R-PFC-FMT-6
    cfg.ports[0].pgs[3].xon_bytes = Some(1_000_000); // XON above XOFF
    cfg.ports[1].pgs[0].threshold = Threshold::Dynamic(9); // outside [-8, 7]
    cfg.ports[1].queues[2].sched = SchedMode::Dwrr(0);
    cfg.ports[1].pgs[3].headroom_bytes = Some(20 * 1024 * 1024); // more than the buffer
    let err = Tm::<u32>::new(cfg, Instant::ZERO).unwrap_err();
    let p = &err.problems;
    assert!(p.contains(&ConfigProblem::PauseAndPfc { port: 0 }), "{err}");
    assert!(
        p.iter()
            .any(|x| matches!(x, ConfigProblem::XonAboveXoff { port: 0, pg: 3, .. })),
        "{err}"
    );
    assert!(
        p.iter().any(|x| matches!(
            x,
            ConfigProblem::DynamicThRange {
                port: 1,
                value: 9,
                ..
            }
        )),
        "{err}"
    );
    assert!(
        p.contains(&ConfigProblem::ZeroWeight { port: 1, queue: 2 }),
        "{err}"
    );
    assert!(
        p.iter()
            .any(|x| matches!(x, ConfigProblem::Overcommitted { .. })),
        "{err}"
    );
    assert_eq!(p.len(), 5, "{err}");
    assert!(
        err.to_string()
            .contains("ports[0]: legacy_pause and pfc_enable are mutually exclusive")
    );
}

#[test]
fn lossless_pg_without_headroom_source_is_rejected() {
    let mut cfg = TmConfig::with_ports(1);
    cfg.ports[0].cable_length_m = None;
    let err = Tm::<u32>::new(cfg, Instant::ZERO).unwrap_err();
    assert_eq!(
        err.problems,
        vec![ConfigProblem::NoHeadroom { port: 0, pg: 3 }]
    );
}

#[test]
fn handle_config_rejects_port_count_change_and_keeps_state() {
    let mut tm = tm(config(2));
    enq!(tm, 0, 1, 0 => 1, prio 0, len 1000).unwrap();
    let err = tm.handle_config(config(3), at(1)).unwrap_err();
    assert_eq!(
        err.problems,
        vec![ConfigProblem::PortCountChanged { from: 2, to: 3 }]
    );
    let mut cfg = config(2);
    cfg.ports[1].speed_bps = G10;
    tm.handle_config(cfg, at(2)).unwrap();
    assert_eq!(tm.queue_depth(1, 0), Some((1000, 1)));
}

// ---- bad input ---------------------------------------------------------------

#[test]
fn bad_metadata_is_a_counted_drop() {
    let mut tm = tm(config(2));
    assert_eq!(
        enq!(tm, 0, 1, 0 => 2, prio 0, len 100),
        Err(DropReason::InvalidMetadata)
    );
    assert_eq!(
        enq!(tm, 0, 1, 5 => 0, prio 0, len 100),
        Err(DropReason::InvalidMetadata)
    );
    assert_eq!(
        enq!(tm, 0, 1, 0 => 1, prio 8, len 100),
        Err(DropReason::InvalidMetadata)
    );
    assert_eq!(tm.drop_counts()[DropReason::InvalidMetadata], 3);
    assert!(tx!(tm, 0, 9).is_none());
    tm.handle_mac_control(9, &MacControlRepr::Pause(PauseRepr { quanta: 1 }), at(0));
}

// ---- queue depth, sojourn ------------------------------------------------------

#[test]
fn depth_reported_at_enqueue_and_after_dequeue() {
    let mut tm = tm(config(2));
    let i1 = enq!(tm, 0, 1, 0 => 1, prio 0, len 1000).unwrap();
    let _ = enq!(tm, 10, 2, 0 => 1, prio 0, len 1000).unwrap();
    let i3 = enq!(tm, 20, 3, 0 => 1, prio 0, len 500).unwrap();
    assert_eq!((i1.enq_qdepth_bytes, i1.enq_qdepth_packets), (0, 0));
    assert_eq!((i3.enq_qdepth_bytes, i3.enq_qdepth_packets), (2000, 2));
    assert_eq!(i3.charged_bytes, 512); // two 256-byte cells
    let d = tx!(tm, 100, 1).unwrap();
    assert_eq!(d.packet, 1);
    // R-ECN-4: depth after the departing packet is removed.
    assert_eq!((d.deq_qdepth_bytes, d.deq_qdepth_packets), (1500, 2));
    assert_eq!(d.sojourn, Duration::from_nanos(100));
    let stats = tm.queue_stats(1, 0).unwrap();
    assert_eq!((stats.max_depth_bytes, stats.max_depth_packets), (2500, 3));
    assert_eq!(tm.stats(1, 0).unwrap().max_queue_bytes, 2500);
}

// ---- PFC reception -----------------------------------------------------------

#[test]
fn rx_pause_stops_exactly_that_priority() {
    let mut tm = tm(config(2));
    enq!(tm, 0, 30, 0 => 1, prio 3, len 1000).unwrap();
    enq!(tm, 0, 0, 0 => 1, prio 0, len 1000).unwrap();
    rx_pfc!(tm, 0, 1, mask 1 << 3, quanta 0xffff);
    assert!(tm.is_paused(1, 3, at(0)));
    let (sent, _) = drain(&mut tm, 1, 0);
    assert_eq!(
        sent.iter().map(|d| d.packet).collect::<Vec<_>>(),
        vec![0],
        "only priority 0 passes"
    );
    // The pause expires after 0xFFFF quanta at 100G (E-1: 335.54 µs).
    let expiry = pause_quanta_to_duration(0xffff, G100).as_nanos();
    assert_eq!(tm.poll_timeout(), Some(at(expiry)));
    assert!(tx!(tm, expiry - 1, 1).is_none());
    tm.handle_timeout(at(expiry));
    assert_eq!(tx!(tm, expiry, 1).unwrap().packet, 30);
    let st = tm.stats(1, 3).unwrap();
    assert_eq!(
        (st.pfc_rx_frames, st.pause_rx_ns, st.pause_rx_xoff_to_xon),
        (1, expiry, 1)
    );
}

#[test]
fn new_pfc_replaces_remaining_time_not_adds() {
    let mut tm = tm(config(2));
    rx_pfc!(tm, 0, 1, mask 1 << 3, quanta 1000); // 5.12 µs at 100G
    rx_pfc!(tm, 2_000, 1, mask 1 << 3, quanta 1000); // replaces: ends at 7.12 µs, not 10.24
    assert!(tm.is_paused(1, 3, at(7_119)));
    assert!(!tm.is_paused(1, 3, at(7_120)));
    rx_pfc!(tm, 3_000, 1, mask 1 << 3, quanta 100); // shorter replacement shortens it
    assert!(!tm.is_paused(1, 3, at(3_512)));
    tm.handle_timeout(at(10_000));
    let st = tm.stats(1, 3).unwrap();
    assert_eq!(
        (st.pfc_rx_frames, st.pause_rx_ns, st.pause_rx_xoff_to_xon),
        (3, 3_512, 1)
    );
}

#[test]
fn quanta_zero_resumes_immediately() {
    let mut tm = tm(config(2));
    enq!(tm, 0, 7, 0 => 1, prio 3, len 100).unwrap();
    rx_pfc!(tm, 0, 1, mask 1 << 3, quanta 0xffff);
    assert!(tx!(tm, 10, 1).is_none());
    rx_pfc!(tm, 500, 1, mask 1 << 3, quanta 0);
    assert_eq!(tx!(tm, 500, 1).unwrap().packet, 7);
    let st = tm.stats(1, 3).unwrap();
    assert_eq!((st.pause_rx_ns, st.pause_rx_xoff_to_xon), (500, 1));
    let evs: Vec<_> = std::iter::from_fn(|| tm.poll_event()).collect();
    assert_eq!(
        evs,
        vec![
            TmEvent::PauseRxStarted {
                port: 1,
                priority: 3
            },
            TmEvent::PauseRxEnded {
                port: 1,
                priority: 3
            }
        ]
    );
}

#[test]
fn pfc_for_disabled_priority_is_counted_but_ignored() {
    let mut tm = tm(config(2));
    enq!(tm, 0, 2, 0 => 1, prio 2, len 100).unwrap();
    rx_pfc!(tm, 0, 1, mask 1 << 2, quanta 0xffff);
    assert!(!tm.is_paused(1, 2, at(0)));
    assert_eq!(tx!(tm, 0, 1).unwrap().packet, 2);
    assert_eq!(tm.stats(1, 2).unwrap().pfc_rx_frames, 1);
}

#[test]
fn legacy_pause_honoured_only_when_enabled() {
    let mut cfg = config(2);
    cfg.ports[1].pfc_enable = 0;
    cfg.ports[1].legacy_pause = true;
    let mut t = tm(cfg);
    enq!(t, 0, 1, 0 => 1, prio 5, len 100).unwrap();
    t.handle_mac_control(1, &MacControlRepr::Pause(PauseRepr { quanta: 1000 }), at(0));
    assert!(tx!(t, 0, 1).is_none());
    assert!((0..8).all(|p| t.is_paused(1, p, at(100))));
    assert_eq!(tx!(t, 5_120, 1).unwrap().packet, 1);

    let mut t = tm(config(2));
    enq!(t, 0, 1, 0 => 1, prio 5, len 100).unwrap();
    t.handle_mac_control(1, &MacControlRepr::Pause(PauseRepr { quanta: 1000 }), at(0));
    assert_eq!(tx!(t, 0, 1).unwrap().packet, 1);
    let ps = t.port_stats(1).unwrap();
    assert_eq!((ps.pause_rx_frames, ps.pause_rx_ignored), (1, 1));
}

#[test]
fn frame_started_before_pause_completes_and_nothing_more_is_sent() {
    // R-PFC-RX-5: at most the frame in flight after the pause is processed.
    let mut tm = tm(config(2));
    for i in 0..4 {
        enq!(tm, 0, i, 0 => 1, prio 3, len 1500).unwrap();
    }
    let first = tx!(tm, 0, 1).unwrap();
    rx_pfc!(tm, 60, 1, mask 1 << 3, quanta 0xffff); // mid-serialisation of `first`
    assert_eq!(first.packet, 0);
    assert!(tx!(tm, 120, 1).is_none());
    assert!(tx!(tm, 300_000, 1).is_none());
}

// ---- PFC generation ----------------------------------------------------------

/// One lossless PG filling towards an egress port that never drains.
fn fill_until_xoff(tm: &mut Tm<u32>, len: u32) -> (u32, u64) {
    for i in 0..100_000u32 {
        enq!(tm, u64::from(i), i, 0 => 1, prio 3, len len).unwrap();
        if tm.pg_usage(0, 3).unwrap().xoff {
            return (i, u64::from(i));
        }
    }
    panic!("no XOFF");
}

#[test]
fn xoff_when_shared_reaches_threshold_then_headroom_absorbs() {
    let mut tm = tm(config(2));
    let pool = tm.shared_pool_bytes();
    let (_, t) = fill_until_xoff(&mut tm, 1024);
    let u = tm.pg_usage(0, 3).unwrap();
    // α = 1: shared ≥ T = pool − shared  ⇔  shared ≥ pool / 2 (first time, within one packet).
    assert!(
        u.shared_bytes >= pool / 2 && u.shared_bytes < pool / 2 + 1024,
        "{u:?} pool {pool}"
    );
    assert_eq!(u.headroom_bytes, 0);
    assert_eq!(
        tm.poll_event(),
        Some(TmEvent::XoffSent {
            port: 0,
            pg: 3,
            priorities: 1 << 3
        })
    );
    // The XOFF goes out on the ingress port, ahead of data.
    assert_eq!(ctrl!(tm, t, 0), Some(PfcRepr::xoff(1 << 3, 0xffff)));
    assert_eq!(tm.stats(0, 3).unwrap().pfc_tx_frames, 1);
    // Packets still arriving (in flight) go to headroom, not dropped.
    for i in 0..60u32 {
        enq!(tm, t + 1, 1000 + i, 0 => 1, prio 3, len 1024).unwrap();
    }
    let u = tm.pg_usage(0, 3).unwrap();
    assert_eq!(u.headroom_bytes, 60 * 1024);
    assert_eq!(tm.drop_counts().total(), 0);
}

#[test]
fn headroom_overflow_is_counted_and_reported() {
    let mut cfg = config(2);
    cfg.ports[0].pgs[3].headroom_bytes = Some(4096);
    let mut tm = tm(cfg);
    let (_, t) = fill_until_xoff(&mut tm, 1024);
    for i in 0..4 {
        enq!(tm, t, i, 0 => 1, prio 3, len 1024).unwrap();
    }
    assert_eq!(
        enq!(tm, t, 99, 0 => 1, prio 3, len 1024),
        Err(DropReason::HeadroomOverflow)
    );
    assert_eq!(tm.drop_counts()[DropReason::HeadroomOverflow], 1);
    assert_eq!(
        tm.stats(0, 3).unwrap().drops[DropReason::HeadroomOverflow],
        1
    );
    let evs: Vec<_> = std::iter::from_fn(|| tm.poll_event()).collect();
    assert!(
        evs.contains(&TmEvent::HeadroomOverflow { port: 0, pg: 3 }),
        "{evs:?}"
    );
}

#[test]
fn xoff_is_refreshed_at_half_the_pause_time_until_xon() {
    let mut tm = tm(config(2));
    rx_pfc!(tm, 0, 1, mask 1 << 3, quanta 0xffff); // keep port 1 from draining
    let (_, t0) = fill_until_xoff(&mut tm, 1024);
    assert!(ctrl!(tm, t0, 0).is_some());
    let half = pause_quanta_to_duration(0xffff, G100).as_nanos() / 2; // 167,770 ns
    assert_eq!(
        tm.next_timer(),
        Some((at(t0 + half), Timer::PfcRefresh { port: 0, pg: 3 }))
    );
    tm.handle_timeout(at(t0 + half - 1));
    assert!(
        ctrl!(tm, t0 + half - 1, 0).is_none(),
        "no refresh before half the pause time"
    );
    tm.handle_timeout(at(t0 + half));
    assert_eq!(ctrl!(tm, t0 + half, 0), Some(PfcRepr::xoff(1 << 3, 0xffff)));
    rx_pfc!(tm, t0 + half, 1, mask 1 << 3, quanta 0xffff); // port 1 stays paused
    assert_eq!(tm.next_timer().unwrap().0, at(t0 + 2 * half));
    assert_eq!(tm.stats(0, 3).unwrap().xoff_tx_frames, 2);
}

#[test]
fn xon_after_drain_below_threshold_minus_resume_offset() {
    let mut tm = tm(config(2));
    let (_, t0) = fill_until_xoff(&mut tm, 1024);
    for i in 0..10 {
        enq!(tm, t0, 500 + i, 0 => 1, prio 3, len 1024).unwrap(); // some headroom in use
    }
    let _ = ctrl!(tm, t0, 0);
    // Drain port 1 one packet at a time until the XON appears on port 0.
    let mut now = t0;
    let mut sent = 0;
    loop {
        now = now.max(tm.next_transmit_at(1).expect("still backlogged").as_nanos());
        tx!(tm, now, 1).expect("sendable");
        sent += 1;
        if let Some(frame) = ctrl!(tm, now, 0) {
            assert_eq!(frame, PfcRepr::xon(1 << 3));
            break;
        }
    }
    let u = tm.pg_usage(0, 3).unwrap();
    assert!(!u.xoff);
    assert_eq!(u.headroom_bytes, 0);
    let free = tm.shared_pool_bytes() - tm.shared_used_bytes();
    assert!(u.shared_bytes + 3072 <= free, "{u:?} free {free}");
    // Hysteresis: the XON needed more than the headroom to drain.
    assert!(sent > 10, "{sent}");
    assert_eq!(
        tm.next_timer().map(|(_, t)| t),
        Some(Timer::ShaperRelease { port: 1 })
    );
}

#[test]
fn tx_pause_duration_is_the_measured_xoff_time_and_watermarks_stay() {
    let mut tm = tm(config(2));
    let (_, t0) = fill_until_xoff(&mut tm, 1024);
    let shared_at_xoff = tm.pg_usage(0, 3).unwrap().shared_bytes;
    // While asserted, the duration runs with `now`; other priorities stay 0.
    assert_eq!(tm.pause_tx_ns(0, 3, at(t0 + 7_000)), 7_000);
    assert_eq!(tm.pause_tx_ns(0, 0, at(t0 + 7_000)), 0);
    assert_eq!(tm.stats(0, 3).unwrap().pause_tx_ns, 0, "not ended yet");
    let _ = ctrl!(tm, t0, 0);
    let mut now = t0;
    loop {
        now = now.max(tm.next_transmit_at(1).expect("backlogged").as_nanos());
        tx!(tm, now, 1).expect("sendable");
        if ctrl!(tm, now, 0).is_some() {
            break;
        }
    }
    assert!(!tm.pg_usage(0, 3).unwrap().xoff);
    assert_eq!(tm.stats(0, 3).unwrap().pause_tx_ns, now - t0);
    // Ended: later reads do not grow.
    assert_eq!(tm.pause_tx_ns(0, 3, at(now + 1_000_000)), now - t0);
    let u = tm.pg_usage(0, 3).unwrap();
    assert!(u.shared_peak_bytes >= shared_at_xoff, "{u:?}");
    assert!(u.shared_peak_bytes > u.shared_bytes, "{u:?}");
}

#[test]
fn lossy_pg_tail_drops_and_never_sends_pfc() {
    let mut tm = tm(config(2));
    let mut dropped_at = None;
    for i in 0..100_000u32 {
        if let Err(r) = enq!(tm, 0, i, 0 => 1, prio 0, len 1024) {
            assert_eq!(r, DropReason::LossyTailDrop);
            dropped_at = Some(i);
            break;
        }
    }
    assert!(dropped_at.is_some());
    assert!(ctrl!(tm, 0, 0).is_none());
    assert_eq!(tm.pg_usage(0, 0).unwrap().headroom_bytes, 0);
    assert_eq!(tm.stats(0, 0).unwrap().drops[DropReason::LossyTailDrop], 1);
}

#[test]
fn control_frame_goes_ahead_of_data_on_the_same_port() {
    let mut tm = tm(config(2));
    // Data queued for port 0 (arriving from port 1), and port 0's PG 3 in XOFF.
    enq!(tm, 0, 77, 1 => 0, prio 0, len 100).unwrap();
    let (_, t) = fill_until_xoff(&mut tm, 1024);
    assert!(tx!(tm, t, 0).is_none(), "PFC frame pending: data waits");
    assert!(ctrl!(tm, t, 0).is_some());
    let release = tm.next_transmit_at(0).unwrap();
    assert!(release.as_nanos() >= t, "the PFC frame occupies the wire");
    assert_eq!(tx!(tm, release.as_nanos(), 0).unwrap().packet, 77);
}

/// The thresholds a PG reports are the ones it acts on: XOFF fires when
/// shared use reaches the reported XOFF threshold, which under α = 1 falls as
/// the pool fills; XON sits the resume offset below it; a lossy PG reports 0.
#[test]
fn reported_xoff_and_xon_thresholds_are_the_ones_acted_on() {
    let mut tm = tm(config(2));
    let empty = tm.pg_usage(0, 3).unwrap();
    assert_eq!(
        empty.xoff_threshold_bytes,
        tm.shared_pool_bytes(),
        "α = 1, pool free"
    );
    assert!(empty.xon_threshold_bytes < empty.xoff_threshold_bytes);
    assert_eq!(
        tm.pg_usage(0, 0).unwrap().xoff_threshold_bytes,
        0,
        "lossy PG"
    );
    let mut before = empty;
    for i in 0..100_000u32 {
        enq!(tm, u64::from(i), i, 0 => 1, prio 3, len 1024).unwrap();
        let u = tm.pg_usage(0, 3).unwrap();
        if u.xoff {
            assert!(u.shared_bytes >= before.xoff_threshold_bytes.min(u.xoff_threshold_bytes));
            assert!(
                before.shared_bytes < before.xoff_threshold_bytes,
                "not earlier"
            );
            assert!(
                u.xoff_threshold_bytes < empty.xoff_threshold_bytes,
                "fell as the pool filled"
            );
            assert_eq!(
                u.xoff_threshold_bytes - u.xon_threshold_bytes,
                empty.xoff_threshold_bytes - empty.xon_threshold_bytes,
                "XON is the resume offset below XOFF"
            );
            return;
        }
        before = u;
    }
    panic!("no XOFF");
}

// ---- dynamic thresholds (R-DT-4, E-9) -------------------------------------------

/// N lossy PGs on N ingress ports, all to port N, no reserved space, no
/// lossless PG anywhere (pool = the whole 12 MiB buffer): enqueue 1-cell
/// packets round robin until every PG is refused; each PG then holds
/// α·B/(1+N·α).
fn dt_steady_state(n: usize, dynamic_th: i8) -> Vec<u64> {
    let mut cfg = config(n + 1);
    for p in &mut cfg.ports {
        p.pfc_enable = 0;
        for pg in &mut p.pgs {
            pg.threshold = Threshold::Dynamic(dynamic_th);
        }
    }
    let mut tm = tm(cfg);
    assert_eq!(tm.shared_pool_bytes(), 12_582_912);
    let mut full = vec![false; n];
    let mut id = 0;
    while full.iter().any(|f| !f) {
        for (i, f) in full.iter_mut().enumerate() {
            if !*f {
                id += 1;
                *f = enq!(tm, 0, id, i as u16 => n as u16, prio 0, len 256).is_err();
            }
        }
    }
    (0..n)
        .map(|i| tm.pg_usage(i as u16, 0).unwrap().shared_bytes)
        .collect()
}

#[test]
fn dynamic_threshold_steady_state_e9() {
    let cases: [(usize, i8, f64); 5] = [
        (1, 0, 6_291_456.0),
        (2, 0, 4_194_304.0),
        (4, 0, 2_516_582.4),
        (1, 1, 8_388_608.0),
        (4, -3, 1_048_576.0),
    ];
    for (n, th, expect) in cases {
        for got in dt_steady_state(n, th) {
            // Round-robin arrival order leaves each PG within two cells (per user) of the fixed point.
            assert!(
                (got as f64 - expect).abs() <= 2.0 * 256.0 * n as f64,
                "N={n} th={th}: {got} vs {expect}"
            );
        }
    }
}

// ---- egress limits (R-DT-5) ---------------------------------------------------------

#[test]
fn egress_limit_drops_lossy_but_never_lossless() {
    let mut cfg = config(2);
    cfg.ports[1].queues[0].limit = Threshold::Static(4096);
    cfg.ports[1].queues[3].limit = Threshold::Static(4096);
    let mut tm = tm(cfg);
    for i in 0..4 {
        enq!(tm, 0, i, 0 => 1, prio 0, len 1024).unwrap();
    }
    assert_eq!(
        enq!(tm, 0, 9, 0 => 1, prio 0, len 1024),
        Err(DropReason::EgressLimit)
    );
    assert_eq!(tm.queue_stats(1, 0).unwrap().drop_packets, 1);
    assert_eq!(tm.stats(1, 0).unwrap().drops[DropReason::EgressLimit], 1);
    for i in 0..20 {
        enq!(tm, 0, i, 0 => 1, prio 3, len 1024).unwrap();
    }
    assert_eq!(tm.queue_depth(1, 3), Some((20 * 1024, 20)));
}

// ---- scheduler --------------------------------------------------------------------

#[test]
fn strict_priority_queue_goes_first() {
    let mut tm = tm(config(2));
    for i in 0..5 {
        enq!(tm, 0, i, 0 => 1, prio 0, len 500).unwrap();
    }
    for i in 10..15 {
        enq!(tm, 0, i, 0 => 1, prio 6, len 500).unwrap(); // queue 6 is strict by default
    }
    let (sent, _) = drain(&mut tm, 1, 0);
    let order: Vec<_> = sent.iter().map(|d| d.packet).collect();
    assert_eq!(order, vec![10, 11, 12, 13, 14, 0, 1, 2, 3, 4]);
}

#[test]
fn dwrr_serves_bytes_in_weight_ratio() {
    let mut cfg = config(2);
    cfg.ports[1].queues[0].sched = SchedMode::Dwrr(1);
    cfg.ports[1].queues[1].sched = SchedMode::Dwrr(3);
    let mut tm = tm(cfg);
    for i in 0..3000 {
        enq!(tm, 0, i, 0 => 1, prio 0, len 1000).unwrap();
        enq!(tm, 0, i, 0 => 1, prio 1, len 700).unwrap();
    }
    let mut now = 0;
    let mut bytes = [0u64; 2];
    for _ in 0..2000 {
        now = now.max(tm.next_transmit_at(1).unwrap().as_nanos());
        let d = tx!(tm, now, 1).unwrap();
        bytes[usize::from(d.queue)] += u64::from(d.meta.len_bytes);
    }
    let ratio = bytes[1] as f64 / bytes[0] as f64;
    assert!((ratio - 3.0).abs() < 0.03, "ratio {ratio}");
}

#[test]
fn paused_queue_is_skipped_by_the_scheduler() {
    let mut cfg = config(2);
    cfg.ports[1].pfc_enable = (1 << 3) | (1 << 6);
    let mut tm = tm(cfg);
    enq!(tm, 0, 6, 0 => 1, prio 6, len 100).unwrap();
    enq!(tm, 0, 0, 0 => 1, prio 0, len 100).unwrap();
    rx_pfc!(tm, 0, 1, mask 1 << 6, quanta 0xffff);
    assert_eq!(tx!(tm, 0, 1).unwrap().packet, 0);
    assert!(tx!(tm, 1_000, 1).is_none());
}

// ---- shaper ----------------------------------------------------------------------

/// Bytes started on `port` in [0, 1 ms), keeping its queue backlogged.
fn bytes_in_one_ms(speed_bps: u64, len: u32, overhead: u32) -> u64 {
    let mut cfg = config(2);
    cfg.ports[1].speed_bps = speed_bps;
    cfg.ports[1].wire_overhead_bytes = overhead;
    let mut tm = tm(cfg);
    let mut now = 0u64;
    let mut sent = 0u64;
    let mut id = 0;
    while now < 1_000_000 {
        while tm.queue_depth(1, 0).unwrap().1 < 64 {
            id += 1;
            enq!(tm, now, id, 0 => 1, prio 0, len len).unwrap();
        }
        tm.handle_timeout(at(now));
        while let Some(d) = tx!(tm, now, 1) {
            sent += u64::from(d.meta.len_bytes) + u64::from(overhead);
        }
        now = tm.poll_timeout().unwrap().as_nanos().max(now + 1);
    }
    sent
}

#[test]
fn shaper_holds_the_port_rate_within_one_percent() {
    for (speed, len, overhead) in [
        (G100, 1500, 0),
        (G10, 1500, 0),
        (G100, 64, 24),
        (25_000_000_000, 9000, 0),
    ] {
        let expect = speed as f64 / 8.0 / 1000.0;
        let got = bytes_in_one_ms(speed, len, overhead) as f64;
        assert!(
            (got - expect).abs() / expect < 0.01,
            "{speed} bps, {len} B: {got} vs {expect}"
        );
    }
}

/// Bytes started on port 1 in 10 ms when the caller only turns up every
/// `turn_ns` (as a software switch's loop does), keeping the queue backlogged.
fn bytes_in_10ms_polled_every(turn_ns: u64, burst_ns: u64) -> u64 {
    let mut cfg = config(2);
    cfg.ports[1].speed_bps = G10;
    cfg.ports[1].shaper_burst_ns = burst_ns;
    let mut tm = tm(cfg);
    let (mut sent, mut id) = (0u64, 0);
    let mut now = 0u64;
    while now < 10 * MS {
        while tm.queue_depth(1, 0).unwrap().1 < 4096 {
            id += 1;
            enq!(tm, now, id, 0 => 1, prio 0, len 1000).unwrap();
        }
        while let Some(d) = tx!(tm, now, 1) {
            sent += u64::from(d.meta.len_bytes);
        }
        now += turn_ns;
    }
    sent
}

#[test]
fn shaper_slack_keeps_the_rate_when_turns_come_late() {
    let line_rate = G10 / 8 / 100; // bytes in 10 ms
    let exact = bytes_in_10ms_polled_every(80_000, 0);
    let slack = bytes_in_10ms_polled_every(80_000, 100_000);
    assert!(
        exact < line_rate / 4,
        "without slack: {exact} of {line_rate}"
    );
    assert!(
        slack.abs_diff(line_rate) < line_rate / 100,
        "with slack: {slack} of {line_rate}"
    );
    // The slack is a ceiling, not extra rate: a late caller never gets more.
    assert!(bytes_in_10ms_polled_every(20_000, 100_000) <= line_rate + 125_000);
}

// ---- watchdog inside the TM ------------------------------------------------------------

/// Port 1 egress priority 3 blocked by a PFC storm from its peer.
fn stormy_tm(action: WdAction) -> Tm<u32> {
    let mut cfg = config(2);
    watchdog_fixture::watch(&mut cfg, 1, action);
    tm(cfg)
}

const MS: u64 = 1_000_000;

/// Run 0..=`until_ms` in 10 ms steps; the peer sends XOFF every 10 ms while `storm(ms)`.
fn run_storm(tm: &mut Tm<u32>, from_ms: u64, until_ms: u64, storm: impl Fn(u64) -> bool) {
    let mut ms = from_ms;
    while ms <= until_ms {
        let now = ms * MS;
        if storm(ms) {
            rx_pfc!(tm, now, 1, mask 1 << 3, quanta 0xffff);
        }
        tm.handle_timeout(at(now));
        ms += 10;
    }
}

#[test]
fn watchdog_drop_action_flushes_and_drops_then_restores() {
    let mut tm = stormy_tm(WdAction::Drop);
    for i in 0..5 {
        enq!(tm, 0, i, 0 => 1, prio 3, len 1000).unwrap();
    }
    // Polls at 0 (baseline), 100, 200 → storm on the 2nd positive poll (D = 200, P = 100).
    run_storm(&mut tm, 0, 190, |_| true);
    assert_eq!(tm.watchdog_mode(1, 3), WdMode::Normal);
    run_storm(&mut tm, 200, 200, |_| true);
    assert_eq!(tm.watchdog_mode(1, 3), WdMode::Drop);
    assert_eq!(tm.queue_depth(1, 3), Some((0, 0)), "queue discarded");
    assert_eq!(tm.stats(1, 3).unwrap().drops[DropReason::WatchdogDrop], 5);
    assert_eq!(
        enq!(tm, 200 * MS, 9, 0 => 1, prio 3, len 1000),
        Err(DropReason::WatchdogDrop)
    );
    assert!(
        enq!(tm, 200 * MS, 9, 0 => 1, prio 0, len 1000).is_ok(),
        "other priorities unaffected"
    );
    let evs: Vec<_> = std::iter::from_fn(|| tm.poll_event()).collect();
    assert!(evs.iter().any(|e| matches!(
        e,
        TmEvent::StormDetected {
            port: 1,
            priority: 3,
            action: WdAction::Drop,
            ..
        }
    )));
    // Storm stops at 210 ms: quiet polls at 300, 400, 500 → restored on the 3rd (R = 300).
    run_storm(&mut tm, 210, 490, |_| false);
    assert_eq!(tm.watchdog_mode(1, 3), WdMode::Drop);
    run_storm(&mut tm, 500, 500, |_| false);
    assert_eq!(tm.watchdog_mode(1, 3), WdMode::Normal);
    assert!(enq!(tm, 500 * MS, 10, 0 => 1, prio 3, len 1000).is_ok());
    let wd = tm.watchdog().stats(1, 3).unwrap();
    assert_eq!((wd.deadlock_detected, wd.deadlock_restored), (1, 1));
    // 5 flushed at storm start + 1 arrival dropped during the storm.
    assert_eq!((wd.tx_drop, wd.tx_last_drop), (6, 6));
}

#[test]
fn watchdog_flush_takes_only_its_priority_and_keeps_both_orders() {
    // Priorities 3 (watched, lossless) and 4 share egress queue 3.
    let mut cfg = config(2);
    cfg.ports[1].prio_to_queue[4] = 3;
    watchdog_fixture::watch(&mut cfg, 1, WdAction::Drop);
    let mut tm = tm(cfg);
    for i in 0..10 {
        let p = if i % 3 == 0 { 4 } else { 3 };
        enq!(tm, 0, i, 0 => 1, prio p, len 100 + i).unwrap();
    }
    run_storm(&mut tm, 0, 200, |_| true);
    assert_eq!(tm.watchdog_mode(1, 3), WdMode::Drop);
    let flushed: Vec<u32> = tm.discarded().map(|(id, _)| *id).collect();
    assert_eq!(flushed, [1, 2, 4, 5, 7, 8]);
    assert_eq!(tm.queue_depth(1, 3), Some((100 + 103 + 106 + 109, 4)));
    let taken: Vec<u32> = std::iter::from_fn(|| tm.poll_discarded())
        .map(|(id, meta)| {
            assert_eq!(meta.priority, 3);
            id
        })
        .collect();
    assert_eq!(taken, flushed);
    assert_eq!(tm.discarded().count(), 0);
    // The priority-4 packets still leave, in order, once the pause ends.
    rx_pfc!(tm, 210 * MS, 1, mask 1 << 3, quanta 0);
    let (sent, _) = drain(&mut tm, 1, 210 * MS);
    let ids: Vec<u32> = sent.iter().map(|d| d.packet).collect();
    assert_eq!(ids, [0, 3, 6, 9]);
    assert_eq!(tm.queue_depth(1, 3), Some((0, 0)));
    // Every byte the flushed packets held was given back.
    for g in 0..8 {
        let u = tm.pg_usage(0, g).unwrap();
        assert_eq!(u.reserved_bytes + u.shared_bytes + u.headroom_bytes, 0);
    }
}

#[test]
fn the_packet_store_never_outgrows_what_the_buffer_admits() {
    // The smallest packets (one cell each) from every port to every port on
    // every priority, never drained, until the accounting refuses them all.
    let cfg = config(4);
    let reserved = (cfg.buffer_bytes / u64::from(cfg.cell_bytes)) as usize;
    let mut tm = tm(cfg);
    assert_eq!(tm.packet_slots(), (0, reserved));
    let mut queued = 0usize;
    let offer = |tm: &mut Tm<u32>, queued: &mut usize| {
        loop {
            let mut admitted = 0;
            for ip in 0..4u16 {
                for ep in 0..4u16 {
                    for p in 0..8u8 {
                        if enq!(tm, 0, 0, ip => ep, prio p, len 1).is_ok() {
                            admitted += 1;
                        }
                    }
                }
            }
            if admitted == 0 {
                break;
            }
            *queued += admitted;
        }
    };
    offer(&mut tm, &mut queued);
    let (touched, capacity) = tm.packet_slots();
    assert_eq!(capacity, reserved, "the reservation did not grow");
    assert_eq!(touched, queued, "one slot per queued packet");
    assert!(
        queued * 10 > reserved * 9,
        "the buffer was nearly filled: {queued} of {reserved}"
    );
    // Drained and filled again, the same slots serve.
    for port in 0..4 {
        rx_pfc!(tm, 0, port, mask 0xff, quanta 0);
        drain(&mut tm, port, 0);
    }
    let before = queued;
    queued = 0;
    offer(&mut tm, &mut queued);
    assert_eq!(queued, before);
    assert_eq!(tm.packet_slots(), (touched, reserved));
}

#[test]
fn watchdog_forward_action_ignores_pfc_so_the_queue_drains() {
    let mut tm = stormy_tm(WdAction::Forward);
    for i in 0..5 {
        enq!(tm, 0, i, 0 => 1, prio 3, len 1000).unwrap();
    }
    run_storm(&mut tm, 0, 200, |_| true);
    assert_eq!(tm.watchdog_mode(1, 3), WdMode::Forward);
    rx_pfc!(tm, 205 * MS, 1, mask 1 << 3, quanta 0xffff);
    assert!(!tm.is_paused(1, 3, at(205 * MS)));
    let (sent, _) = drain(&mut tm, 1, 205 * MS);
    assert_eq!(sent.len(), 5);
    assert_eq!(tm.drop_counts().total(), 0);
}

#[test]
fn watchdog_alert_action_changes_nothing_but_counts() {
    let mut tm = stormy_tm(WdAction::Alert);
    enq!(tm, 0, 1, 0 => 1, prio 3, len 1000).unwrap();
    run_storm(&mut tm, 0, 200, |_| true);
    assert_eq!(tm.watchdog_mode(1, 3), WdMode::Normal);
    assert_eq!(tm.watchdog().stats(1, 3).unwrap().deadlock_detected, 1);
    assert!(tm.is_paused(1, 3, at(200 * MS)));
    assert_eq!(tm.queue_depth(1, 3), Some((1000, 1)));
}

#[test]
fn big_red_switch_forces_drop_on_watched_queues() {
    let mut tm = stormy_tm(WdAction::Forward);
    enq!(tm, 0, 1, 0 => 1, prio 3, len 1000).unwrap();
    tm.handle_big_red_switch(true, at(1));
    assert_eq!(tm.watchdog_mode(1, 3), WdMode::Drop);
    assert_eq!(tm.queue_depth(1, 3), Some((0, 0)));
    assert_eq!(
        tm.watchdog_mode(0, 3),
        WdMode::Normal,
        "port 0 is not watched"
    );
    tm.handle_big_red_switch(false, at(2));
    assert_eq!(tm.watchdog_mode(1, 3), WdMode::Normal);
}

#[test]
fn stormed_priority_generates_no_pfc() {
    let mut cfg = config(2);
    watchdog_fixture::watch(&mut cfg, 0, WdAction::Drop);
    let mut tm = tm(cfg);
    tm.handle_big_red_switch(true, at(0));
    // Priority 3 arrivals on port 0 are dropped while the switch is on: no buffer, no PFC.
    assert_eq!(
        enq!(tm, 1, 1, 0 => 1, prio 3, len 1000),
        Err(DropReason::WatchdogDrop)
    );
    assert!(ctrl!(tm, 1, 0).is_none());
}

// ---- priority maps (R-PFC-RX-4, R-MAP-5) ----------------------------------------------

#[test]
fn pausing_a_priority_blocks_the_queue_it_maps_to() {
    let mut cfg = config(2);
    cfg.ports[1].pfc_enable = (1 << 3) | (1 << 4);
    cfg.ports[1].prio_to_queue[4] = 3; // priorities 3 and 4 share queue 3
    let mut tm = tm(cfg);
    let info = enq!(tm, 0, 3, 0 => 1, prio 3, len 100).unwrap();
    assert_eq!(info.queue, 3);
    enq!(tm, 0, 4, 0 => 1, prio 4, len 100).unwrap();
    enq!(tm, 0, 0, 0 => 1, prio 0, len 100).unwrap();
    rx_pfc!(tm, 0, 1, mask 1 << 4, quanta 0xffff);
    let (sent, _) = drain(&mut tm, 1, 0);
    assert_eq!(sent.iter().map(|d| d.packet).collect::<Vec<_>>(), vec![0]);
}

#[test]
fn xoff_names_every_lossless_priority_of_the_pg() {
    let mut cfg = config(2);
    cfg.ports[0].pfc_enable = (1 << 3) | (1 << 4);
    cfg.ports[0].prio_to_pg[4] = 3; // PG 3 holds priorities 3 and 4
    let mut tm = tm(cfg);
    let (_, t) = fill_until_xoff(&mut tm, 1024);
    assert_eq!(
        ctrl!(tm, t, 0),
        Some(PfcRepr::xoff((1 << 3) | (1 << 4), 0xffff))
    );
    // Priority 4 is charged to the same PG.
    let before = tm.pg_usage(0, 3).unwrap();
    assert_eq!(enq!(tm, t, 1, 0 => 1, prio 4, len 1024).unwrap().pg, 3);
    assert_eq!(
        tm.pg_usage(0, 3).unwrap().headroom_bytes,
        before.headroom_bytes + 1024
    );
}

#[test]
fn xon_floor_resumes_once_total_usage_is_low_enough() {
    // A static shared threshold keeps T fixed, so only the floor can trigger XON early.
    let mut cfg = config(2);
    cfg.resume_offset_bytes = 1 << 40; // disable the R-PFC-TX-2 offset branch
    cfg.ports[0].pgs[3].threshold = Threshold::Static(64 * 1024);
    cfg.ports[0].pgs[3].xon_bytes = Some(16 * 1024);
    let mut tm = tm(cfg);
    let (_, t) = fill_until_xoff(&mut tm, 1024);
    let _ = ctrl!(tm, t, 0);
    let mut now = t;
    loop {
        now = now.max(tm.next_transmit_at(1).unwrap().as_nanos());
        tx!(tm, now, 1).unwrap();
        if ctrl!(tm, now, 0).is_some() {
            break;
        }
    }
    let u = tm.pg_usage(0, 3).unwrap();
    assert_eq!(
        u.reserved_bytes + u.shared_bytes + u.headroom_bytes,
        16 * 1024
    );
}

// ---- shared headroom pool (R-PFC-TX-6) ------------------------------------------------------

#[test]
fn shared_headroom_pool_is_oversubscribed_across_pgs() {
    let mut cfg = config(3);
    for p in &mut cfg.ports {
        p.pgs[3].headroom_bytes = Some(64 * 1024);
    }
    cfg.shp_over_subscribe_ratio = Some(3); // 3 × 64 KiB of xoff share 64 KiB
    let mut tm = tm(cfg);
    assert_eq!(tm.headroom_pool_bytes(), 64 * 1024);
    assert_eq!(tm.shared_pool_bytes(), 12 * 1024 * 1024 - 64 * 1024);
    // Port 0's PG 3 may use its whole xoff, which is the whole pool here.
    let (_, t) = fill_until_xoff(&mut tm, 1024);
    for i in 0..64 {
        enq!(tm, t, i, 0 => 2, prio 3, len 1024).unwrap();
    }
    assert_eq!(tm.headroom_used_bytes(), 64 * 1024);
    // Port 1's PG 3 is past its threshold too; its private cap has room but the pool does not.
    let mut i = 0;
    let reason = loop {
        i += 1;
        if let Err(r) = enq!(tm, t, i, 1 => 2, prio 3, len 1024) {
            break r;
        }
    };
    assert_eq!(reason, DropReason::HeadroomOverflow);
    assert_eq!(tm.pg_usage(1, 3).unwrap().headroom_bytes, 0);
}

#[test]
fn zero_shp_ratio_is_rejected() {
    let mut cfg = config(1);
    cfg.shp_over_subscribe_ratio = Some(0);
    assert_eq!(
        Tm::<u32>::new(cfg, Instant::ZERO).unwrap_err().problems,
        vec![ConfigProblem::ZeroShpRatio]
    );
}

#[test]
fn reconfiguring_a_paused_pg_as_lossy_ends_its_xoff() {
    let mut tm = tm(config(2));
    rx_pfc!(tm, 0, 1, mask 1 << 3, quanta 0xffff); // keep port 1 from draining
    let (_, t) = fill_until_xoff(&mut tm, 1024);
    let _ = ctrl!(tm, t, 0);
    let mut cfg = config(2);
    cfg.ports[0].pfc_enable = 0;
    tm.handle_config(cfg, at(t)).unwrap();
    let (refresh, timer) = tm.next_timer().unwrap();
    assert_eq!(timer, Timer::PfcRefresh { port: 0, pg: 3 });
    tm.handle_timeout(refresh);
    assert!(!tm.pg_usage(0, 3).unwrap().xoff);
    assert_ne!(
        tm.next_timer().map(|(_, t)| t),
        Some(Timer::PfcRefresh { port: 0, pg: 3 })
    );
}

// ---- XOFF refresh on slow ports ---------------------------------------------------------

const M10: u64 = 10_000_000;

fn slow_config(n: usize) -> TmConfig {
    let mut cfg = config(n);
    for p in &mut cfg.ports {
        p.speed_bps = M10;
    }
    cfg
}

#[test]
fn xoff_refresh_on_a_slow_port_is_capped_at_xoff_refresh_max() {
    let mut tm = tm(slow_config(2));
    rx_pfc!(tm, 0, 1, mask 1 << 3, quanta 0xffff); // keep port 1 from draining
    let (_, t0) = fill_until_xoff(&mut tm, 1024);
    assert!(ctrl!(tm, t0, 0).is_some());
    // Q_xoff/2 at 10 Mb/s is 1.68 s; the cap makes it 20 ms.
    assert!(pause_quanta_to_duration(0xffff, M10) / 2 > config::XOFF_REFRESH_MAX);
    let cap = config::XOFF_REFRESH_MAX.as_nanos();
    assert_eq!(
        tm.next_timer(),
        Some((at(t0 + cap), Timer::PfcRefresh { port: 0, pg: 3 }))
    );
    let mut sent = Vec::new();
    let mut now = t0;
    while now < t0 + 1000 * MS {
        now += MS;
        tm.handle_timeout(at(now));
        if let Some(f) = ctrl!(tm, now, 0) {
            assert_eq!(f, PfcRepr::xoff(1 << 3, 0xffff));
            sent.push(now);
        }
    }
    assert_eq!(sent.len(), 50, "one refresh per 20 ms for 1 s: {sent:?}");
    assert!(sent.windows(2).all(|w| w[1] - w[0] <= cap));
}

/// Two switches on a 10 Mb/s link: B's ingress from A stays XOFF (its own
/// egress is paused for good), so A's egress queue towards B holds packets
/// and never sends. A's watchdog (P = 100 ms, D = 200 ms) must see new PFC
/// frames on every poll and declare the storm; with refreshes only every
/// Q_xoff/2 (1.68 s) it saw one frame and never did.
#[test]
fn a_deadlocked_slow_link_is_detected_by_the_watchdog() {
    let mut b = tm(slow_config(2));
    rx_pfc!(b, 0, 1, mask 1 << 3, quanta 0xffff); // B's egress stuck
    let (_, t0) = fill_until_xoff(&mut b, 1024);
    let mut cfg = slow_config(2);
    watchdog_fixture::watch(&mut cfg, 1, WdAction::Drop);
    let mut a = tm(cfg);
    for i in 0..5 {
        enq!(a, t0, i, 0 => 1, prio 3, len 1000).unwrap();
    }
    let mut now = t0;
    let mut stormed_at = None;
    while now < 1000 * MS && stormed_at.is_none() {
        b.handle_timeout(at(now));
        while let Some(f) = ctrl!(b, now, 0) {
            a.handle_mac_control(1, &MacControlRepr::Pfc(f), at(now));
        }
        a.handle_timeout(at(now));
        if a.watchdog_mode(1, 3) == WdMode::Drop {
            stormed_at = Some(now);
        } else {
            assert!(tx!(a, now, 1).is_none(), "A's egress is paused");
        }
        now += MS;
    }
    let t = stormed_at.expect("the watchdog never saw the deadlock");
    // Baseline poll at 0, positive polls at 100 and 200 ms.
    assert!(t <= 300 * MS, "storm declared at {} ms", t / MS);
    assert_eq!(a.watchdog().stats(1, 3).unwrap().deadlock_detected, 1);
    assert_eq!(a.queue_depth(1, 3), Some((0, 0)), "drop action flushed");
}

/// A peer on a 10 Gb/s port pauses priority 3 with full quanta (3.355 ms
/// each) while a packet arrives every millisecond; returns when the
/// watchdog declared the storm, if it did within 2 s. `gap_us(t_us)` is
/// the time from an XOFF sent at `t_us` to the next. Time moves in 100 µs
/// steps: XOFF first, then timers, then everything sendable.
fn storm_declared_at(gap_us: impl Fn(u64) -> u64) -> Option<u64> {
    let mut cfg = config(2);
    for p in &mut cfg.ports {
        p.speed_bps = G10;
    }
    watchdog_fixture::watch(&mut cfg, 1, WdAction::Drop);
    let mut tm = tm(cfg);
    let (mut next_xoff, mut id) = (0u64, 0u32);
    for step in 0..20_000u64 {
        let (t_us, now) = (step * 100, step * 100_000);
        if t_us == next_xoff {
            rx_pfc!(tm, now, 1, mask 1 << 3, quanta 0xffff);
            next_xoff += gap_us(t_us);
        }
        if t_us % 1000 == 0 {
            id += 1;
            let _ = enq!(tm, now, id, 0 => 1, prio 3, len 1000);
        }
        tm.handle_timeout(at(now));
        while ctrl!(tm, now, 0).is_some() {}
        while tx!(tm, now, 1).is_some() {}
        if tm.watchdog_mode(1, 3) == WdMode::Drop {
            return Some(now);
        }
    }
    None
}

/// R-WD-5/6: a queue kept paused by refreshes that come before each pause
/// runs out is a storm from the first poll after it began (D = 200 ms: on
/// the 2nd positive poll); one whose pause runs out for a moment in every
/// poll interval sends in that moment and is not, however many XOFFs
/// arrive. The soak's storm sender once slept past the pause on loaded
/// cores, and its storms went undetected for the second reason.
#[test]
fn a_storm_is_a_pause_that_never_lapses() {
    assert_eq!(
        pause_quanta_to_duration(0xffff, G10),
        Duration::from_nanos(3_355_392)
    );
    // Refreshed every 3.3 ms, 55 µs inside the pause time.
    assert_eq!(storm_declared_at(|_| 3_300), Some(200 * MS));
    // The same, but 3.5 ms once in every 100 ms: the pause lapses for
    // 145 µs and the queue drains.
    assert_eq!(
        storm_declared_at(|t| if t % 100_000 == 49_500 { 3_500 } else { 500 }),
        None
    );
}

// ------------------------------------------------------------ timer table

/// One step of a random workload for the timer-table property.
#[derive(Clone, Debug)]
enum Step {
    Enqueue {
        ip: u16,
        ep: u16,
        prio: u8,
        len: u32,
    },
    Transmit {
        port: u16,
    },
    Control {
        port: u16,
    },
    Pfc {
        port: u16,
        mask: u8,
        quanta: u16,
    },
    Timeout,
    Advance {
        ns: u64,
    },
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        4 => (0u16..4, 0u16..4, 0u8..8, 64u32..9000)
            .prop_map(|(ip, ep, prio, len)| Step::Enqueue { ip, ep, prio, len }),
        4 => (0u16..4).prop_map(|port| Step::Transmit { port }),
        2 => (0u16..4).prop_map(|port| Step::Control { port }),
        1 => (0u16..4, any::<u8>(), prop_oneof![Just(0u16), 1u16..0xffff])
            .prop_map(|(port, mask, quanta)| Step::Pfc { port, mask, quanta }),
        1 => Just(Step::Timeout),
        3 => (1u64..200_000).prop_map(|ns| Step::Advance { ns }),
    ]
}

impl Step {
    /// Feeds this step to `tm` at `now` (packet `id` if it enqueues one);
    /// an `Advance` moves `now` on.
    fn apply(self, tm: &mut Tm<u32>, now: &mut u64, id: u32) {
        let t = *now;
        match self {
            Step::Enqueue { ip, ep, prio, len } => {
                let _ = enq!(tm, t, id, ip => ep, prio prio, len len);
            }
            Step::Transmit { port } => {
                let _ = tx!(tm, t, port);
            }
            Step::Control { port } => {
                let _ = ctrl!(tm, t, port);
            }
            Step::Pfc { port, mask, quanta } => rx_pfc!(tm, t, port, mask mask, quanta quanta),
            Step::Timeout => tm.handle_timeout(at(t)),
            Step::Advance { ns } => *now += ns,
        }
    }
}

/// Runs `steps` on 4 ports at 10 Gb/s (trains of `train_ns`, 0 for none),
/// checking after each that the timer table names the same earliest timer
/// as a scan of every port.
fn timer_table_agrees_with_scan(
    steps: Vec<Step>,
    train_ns: u64,
) -> Result<(), proptest::test_runner::TestCaseError> {
    let mut cfg = config(4);
    cfg.buffer_bytes = 256 * 1024;
    for p in &mut cfg.ports {
        p.speed_bps = G10;
        p.wire_overhead_bytes = 24;
        p.shaper_train_ns = train_ns;
    }
    let mut tm = tm(cfg);
    let mut now = 0u64;
    for (id, s) in steps.into_iter().enumerate() {
        s.apply(&mut tm, &mut now, id as u32);
        proptest::prop_assert_eq!(tm.next_timer(), tm.next_timer_by_scan());
    }
    Ok(())
}

proptest::proptest! {
    /// The timer table (one cached deadline per port, refreshed after each
    /// input) always names the same earliest timer as a scan of every port.
    #[test]
    fn timer_table_matches_a_full_scan(steps in proptest::collection::vec(step(), 1..300)) {
        timer_table_agrees_with_scan(steps, 0)?;
    }

    /// The same with trains on every port: a packet joining a backlogged
    /// queue moves the port's release (it waits for the backlog's train),
    /// so that enqueue must refresh the deadline where others need not.
    #[test]
    fn timer_table_matches_a_full_scan_with_trains(
        steps in proptest::collection::vec(step(), 1..300)
    ) {
        timer_table_agrees_with_scan(steps, 5_000)?;
    }

    /// The shaper's backlog (which bucket depth refills fill to) is only
    /// refreshed by inputs that may change the eligible queues; after any
    /// input it still agrees with them.
    #[test]
    fn shaper_backlog_matches_the_eligible_queues(steps in proptest::collection::vec(step(), 1..300)) {
        let mut cfg = config(4);
        cfg.buffer_bytes = 256 * 1024;
        for p in &mut cfg.ports {
            p.speed_bps = G10;
            p.wire_overhead_bytes = 24;
            p.shaper_catch_up_ns = 100_000;
        }
        let mut tm = tm(cfg);
        let mut now = 0u64;
        for (id, s) in steps.into_iter().enumerate() {
            s.apply(&mut tm, &mut now, id as u32);
            proptest::prop_assert!(tm.backlogs_agree());
        }
    }
}
