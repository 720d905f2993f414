//! Deadlock lab: a ring of three real `roceswitch` daemons in namespaces
//! deadlocks with the PFC watchdog off and recovers with it on (needs root;
//! skipped with a message otherwise). The mechanism and the phases are in
//! `lab::scenario::ring`; this test runs it once and checks every phase
//! through the switches' counters and events and the agents' reports:
//!
//! 1. with the watchdog off, after the senders have exited, every ring
//!    egress queue holds bytes that do not move for several seconds while
//!    every switch keeps refreshing its XOFF upstream, and nothing lossless
//!    was dropped (a deadlock loses nothing, it just stops);
//! 2. with the watchdog on (detection 200 ms, restoration 400 ms, drop), a
//!    storm is declared, restored, and every queue empties;
//! 3. the same oversubscription with the watchdog on throughout: storms,
//!    more delivered than in the deadlocked run, restored and drained after;
//! 4. a second burst at a rate the ring can carry then arrives whole.
//!
//! The switch binary must already be in `target/<profile>/` (as for
//! `scenario_live`): `cargo build --workspace` provides it.

mod common;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use dataplane::tm::config::XOFF_REFRESH_MAX;

use lab::labctl::state::StateStore;
use lab::scenario::live::{self, Binaries};
use lab::scenario::ring::{self, RingConfig};
use lab::scenario::switchctl::WatchdogEvent;

struct TempStore(PathBuf);
impl Drop for TempStore {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn ring_deadlocks_with_the_watchdog_off_and_recovers_with_it_on() {
    if !common::root_or_skip("lab_deadlock") {
        return;
    }
    let exe = std::env::current_exe().expect("test executable path");
    let roceswitch = live::find_binary("roceswitch", &exe).unwrap_or_else(|| {
        panic!(
            "roceswitch is not built next to {} (nor on PATH); build it first: \
             cargo build -p control --bin roceswitch (or cargo build --workspace)",
            exe.display()
        )
    });
    let bins = Binaries {
        roceswitch,
        roceperf: PathBuf::from(env!("CARGO_BIN_EXE_roceperf")),
    };
    let lab = common::unique("d");
    let dir = TempStore(std::env::temp_dir().join(format!("rocelab-test-{lab}")));
    let store = StateStore::new(&dir.0);
    let stop = AtomicBool::new(false);
    let cfg = RingConfig::default();
    let t = Instant::now();
    // `run` tears the lab down on every path (its guard's Drop on errors
    // and panics); the check below proves it.
    let result = ring::run(&cfg, &bins, &store, &stop, &lab);
    let took = t.elapsed();
    let left = common::netns_with_prefix(&format!("rl-{lab}"));
    assert!(left.is_empty(), "namespaces left behind: {left:?}");
    let out = result.unwrap_or_else(|e| panic!("ring run failed: {e:#}"));
    eprintln!("ring run took {took:.1?}:\n{}", out.summary());

    // The ring carried traffic, then stopped by itself.
    for (i, &d) in out.fill_ring_tx_packets.iter().enumerate() {
        assert!(d > 0, "s{i}'s ring port sent nothing before the deadlock");
    }
    assert!(
        out.formed_after.is_some(),
        "the ring kept moving for {:?} after the senders stopped: no deadlock",
        cfg.form_limit
    );
    // A true deadlock: no input, and for the whole watch every ring queue
    // holds the same bytes, no ring port sends, and XOFFs keep coming.
    assert_eq!(out.held.len(), cfg.switches);
    assert!(out.held_for >= cfg.hold);
    // A PG that stays XOFF is refreshed every XOFF_REFRESH_MAX (20 ms; at
    // 20 Mb/s Q_xoff/2 = 839 ms is longer, R-PFC-TX-4): ~150 frames in the
    // 3 s hold. Late timers on a loaded machine may halve that; more than
    // 10 % above it means the switch re-sends XOFF on something else.
    let expected = out.held_for.as_secs_f64() / XOFF_REFRESH_MAX.as_secs_f64();
    let (min_refreshes, max_refreshes) = ((expected * 0.5) as u64, (expected * 1.1) as u64 + 2);
    for (i, h) in out.held.iter().enumerate() {
        assert!(h.queue_start_bytes > 0, "s{i}: ring queue empty: {h:?}");
        assert_eq!(
            h.queue_start_bytes, h.queue_end_bytes,
            "s{i}: ring queue changed with no input: {h:?}"
        );
        assert_eq!(h.ring_tx_packets, 0, "s{i}: ring port sent: {h:?}");
        for frames in [h.pfc_tx_frames, h.pfc_rx_frames] {
            assert!(
                (min_refreshes..=max_refreshes).contains(&frames),
                "s{i}: {frames} XOFF refreshes over {:?}, expected \
                 {min_refreshes}..={max_refreshes}: {h:?}",
                out.held_for
            );
        }
    }
    assert!(
        out.phase1_drops.iter().all(|&d| d == 0),
        "lossless drops while deadlocking: {:?}",
        out.phase1_drops
    );

    // The watchdog breaks it: storm declared, restored, queues empty.
    let storms: u64 = out.wd_storms.iter().sum();
    assert!(storms > 0, "no watchdog storm counted: {:?}", out.wd_events);
    let storm_events = out
        .wd_events
        .iter()
        .flatten()
        .filter(|e| {
            matches!(
                e,
                WatchdogEvent::Storm {
                    port: 1,
                    priority: 3
                }
            )
        })
        .count();
    // R-WD-6: a storm needs a baseline poll and then ceil(D/P) positive
    // polls, so it cannot be declared before the detection time D.
    let detection = Duration::from_millis(u64::from(cfg.watchdog.detection_time_ms));
    let first = out.first_storm_after.expect("a storm was counted");
    assert!(
        first >= detection && first <= cfg.recover_limit,
        "storm declared {first:?} after enabling, detection time {detection:?}"
    );
    assert!(
        storm_events > 0,
        "no storm on a ring port (1, priority 3): {:?}",
        out.wd_events
    );
    assert!(
        out.recovered_after.is_some(),
        "not recovered within {:?}: events {:?}, queued {:?}",
        cfg.recover_limit,
        out.wd_events,
        out.queued_after_recovery_bytes
    );
    assert!(out.queued_after_recovery_bytes.iter().all(|&q| q == 0));

    // The same load with the watchdog on throughout: it declares storms,
    // the hosts get traffic, and it all ends restored and drained. (How
    // much they get is no verdict: the drop action discards lossless
    // packets, and RC answers each loss with go-back-N or a timeout, so the
    // count depends on the QPs' timers more than on the switch.)
    assert!(
        out.wd_on_storms.iter().sum::<u64>() > 0,
        "no storm with the watchdog on throughout"
    );
    let (before, with_wd): (u64, u64) = (
        out.delivered_packets.iter().sum(),
        out.wd_on_delivered_packets.iter().sum(),
    );
    assert!(
        with_wd > 0,
        "with the watchdog on the hosts got no packet (deadlocked run: {before})"
    );
    assert!(
        out.wd_on_recovered_after.is_some(),
        "not restored and drained within {:?} after the senders exited: events {:?}, queued {:?}",
        cfg.recover_limit,
        out.wd_on_events,
        out.wd_on_queued_bytes
    );

    // Traffic flows again, whole.
    for f in &out.burst {
        assert!(f.tx_bytes > 0, "{f:?}");
        assert_eq!(f.rx_bytes, f.tx_bytes, "after recovery: {f:?}");
        assert_eq!(f.psn_gaps, 0, "after recovery: {f:?}");
    }
    for (i, &p) in out.burst_ring_tx_packets.iter().enumerate() {
        assert!(p > 0, "s{i}: ring port idle after recovery");
    }
    assert!(
        out.queued_after_burst_bytes.iter().all(|&q| q == 0),
        "{:?}",
        out.queued_after_burst_bytes
    );
    assert!(out.problems().is_empty(), "{:?}", out.problems());
    drop(dir);
}
