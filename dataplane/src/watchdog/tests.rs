//! Watchdog state-machine tests: E-17 (timing), E-18 (counters), each
//! action, BIG_RED_SWITCH, configuration ranges. Polls take explicit times.

use super::*;

const STORM: WdSample = WdSample {
    occupancy_packets: 5,
    tx_packets: 0,
    tx_drop_packets: 0,
    rx_packets: 0,
    rx_drop_packets: 0,
    pfc_rx_frames: 0,
};

/// A one-port watchdog on priority 3 with poll `p` ms.
fn wd(p: u32, detection: u32, restoration: Option<u32>, action: WdAction) -> Watchdog {
    let global = WatchdogConfig {
        poll_interval_ms: p,
        big_red_switch: false,
    };
    let port = WatchdogPortConfig {
        detection_time_ms: detection,
        restoration_time_ms: restoration,
        action,
        priorities: 1 << 3,
        pfc_stat_history: false,
    };
    Watchdog::new(&global, &[Some(port)])
}

/// Simulated counters of the watched queue.
#[derive(Default)]
struct Counters {
    s: WdSample,
    t_ms: u64,
}

impl Counters {
    /// One poll period of storm: PFC keeps arriving, queue stuck.
    fn storm_poll(&mut self, w: &mut Watchdog, p_ms: u64) {
        self.s.occupancy_packets = 5;
        self.s.pfc_rx_frames += 10;
        self.s.rx_packets += 3;
        self.poll(w, p_ms);
    }
    /// One quiet poll period: no PFC, queue drains.
    fn quiet_poll(&mut self, w: &mut Watchdog, p_ms: u64) {
        self.s.occupancy_packets = 0;
        self.s.tx_packets += 7;
        self.poll(w, p_ms);
    }
    fn poll(&mut self, w: &mut Watchdog, p_ms: u64) {
        self.t_ms += p_ms;
        let s = self.s;
        w.handle_poll(Instant::from_millis(self.t_ms), |port, prio| {
            assert_eq!((port, prio), (0, 3), "only watched queues are sampled");
            s
        });
    }
}

fn status(w: &Watchdog) -> WdState {
    w.stats(0, 3).unwrap().status
}

/// Number of consecutive storm polls (after a baseline poll) until STORMED.
fn polls_to_storm(p: u32, d: u32, action: WdAction) -> u32 {
    let mut w = wd(p, d, None, action);
    let mut c = Counters::default();
    c.poll(&mut w, 0); // baseline (R-WD-4)
    for k in 1..=100 {
        c.storm_poll(&mut w, u64::from(p));
        if status(&w) == WdState::Stormed {
            return k;
        }
    }
    panic!("never stormed");
}

const ACTIONS: [WdAction; 3] = [WdAction::Drop, WdAction::Forward, WdAction::Alert];

// ---- detection timing (E-17) ----------------------------------------------------

#[test]
fn detection_on_kth_consecutive_positive_poll_e17() {
    for action in ACTIONS {
        assert_eq!(polls_to_storm(100, 400, action), 4, "{action:?}");
        assert_eq!(polls_to_storm(100, 250, action), 3, "{action:?}");
        assert_eq!(polls_to_storm(200, 200, action), 1, "{action:?}");
    }
}

#[test]
fn first_poll_only_records_baselines() {
    let mut w = wd(200, 200, None, WdAction::Drop);
    // The very first poll sees a stuck queue with PFC but has nothing to compare with.
    w.handle_poll(Instant::from_millis(0), |_, _| WdSample {
        pfc_rx_frames: 50,
        ..STORM
    });
    assert_eq!(status(&w), WdState::Operational);
}

#[test]
fn a_negative_poll_resets_detection() {
    let mut w = wd(100, 300, None, WdAction::Drop);
    let mut c = Counters::default();
    c.poll(&mut w, 0);
    c.storm_poll(&mut w, 100);
    c.storm_poll(&mut w, 100);
    c.quiet_poll(&mut w, 100); // resets detect_left
    c.storm_poll(&mut w, 100);
    c.storm_poll(&mut w, 100);
    assert_eq!(status(&w), WdState::Operational);
    c.storm_poll(&mut w, 100);
    assert_eq!(status(&w), WdState::Stormed);
}

#[test]
fn storm_needs_all_three_conditions() {
    // PFC arriving but the queue transmits: no storm. Queue stuck but no PFC: no storm.
    let mut w = wd(100, 100, None, WdAction::Drop);
    let mut c = Counters::default();
    c.poll(&mut w, 0);
    c.s.pfc_rx_frames += 1;
    c.s.tx_packets += 1;
    c.s.occupancy_packets = 3;
    c.poll(&mut w, 100);
    assert_eq!(status(&w), WdState::Operational);
    c.poll(&mut w, 100); // stuck, no new PFC
    assert_eq!(status(&w), WdState::Operational);
    c.s.occupancy_packets = 0;
    c.s.pfc_rx_frames += 1; // PFC, empty queue
    c.poll(&mut w, 100);
    assert_eq!(status(&w), WdState::Operational);
}

// ---- restoration timing (E-17) -----------------------------------------------------

#[test]
fn restoration_on_kth_consecutive_quiet_poll_e17() {
    // Drop and forward use the restoration timer; alert restores on the first
    // poll without the storm condition (R-WD-8).
    for (action, quiet_polls) in [
        (WdAction::Drop, 3),
        (WdAction::Forward, 3),
        (WdAction::Alert, 1),
    ] {
        let mut w = wd(200, 200, Some(600), action);
        let mut c = Counters::default();
        c.poll(&mut w, 0);
        c.storm_poll(&mut w, 200);
        assert_eq!(status(&w), WdState::Stormed);
        for k in 1..quiet_polls {
            c.quiet_poll(&mut w, 200);
            assert_eq!(
                status(&w),
                WdState::Stormed,
                "{action:?} after {k} quiet polls"
            );
        }
        c.quiet_poll(&mut w, 200);
        assert_eq!(status(&w), WdState::Operational, "{action:?}");
    }
}

#[test]
fn new_pfc_frames_reset_restoration() {
    let mut w = wd(200, 200, Some(400), WdAction::Forward);
    let mut c = Counters::default();
    c.poll(&mut w, 0);
    c.storm_poll(&mut w, 200);
    c.quiet_poll(&mut w, 200);
    c.s.pfc_rx_frames += 1; // one more PFC frame, queue draining
    c.s.tx_packets += 1;
    c.poll(&mut w, 200);
    c.quiet_poll(&mut w, 200);
    assert_eq!(status(&w), WdState::Stormed);
    c.quiet_poll(&mut w, 200);
    assert_eq!(status(&w), WdState::Operational);
}

#[test]
fn without_restoration_time_a_storm_never_auto_restores() {
    let mut w = wd(100, 100, None, WdAction::Drop);
    let mut c = Counters::default();
    c.poll(&mut w, 0);
    c.storm_poll(&mut w, 100);
    for _ in 0..100 {
        c.quiet_poll(&mut w, 100);
    }
    assert_eq!(status(&w), WdState::Stormed);
}

// ---- actions (R-WD-8/9) ------------------------------------------------------------

#[test]
fn modes_per_action_while_stormed() {
    for (action, mode) in [
        (WdAction::Drop, WdMode::Drop),
        (WdAction::Forward, WdMode::Forward),
        (WdAction::Alert, WdMode::Normal),
    ] {
        let mut w = wd(100, 100, Some(100), action);
        let mut c = Counters::default();
        c.poll(&mut w, 0);
        assert_eq!(w.mode(0, 3), WdMode::Normal);
        c.storm_poll(&mut w, 100);
        assert_eq!(status(&w), WdState::Stormed, "{action:?}");
        assert_eq!(w.mode(0, 3), mode, "{action:?}");
        assert!(
            matches!(w.poll_event(), Some(WdEvent::StormDetected { port: 0, priority: 3, action: a, .. }) if a == action)
        );
        c.quiet_poll(&mut w, 100);
        assert_eq!(status(&w), WdState::Operational, "{action:?}");
        assert_eq!(w.mode(0, 3), WdMode::Normal);
        assert!(matches!(
            w.poll_event(),
            Some(WdEvent::StormRestored {
                port: 0,
                priority: 3,
                ..
            })
        ));
    }
    assert_eq!(
        wd(100, 100, None, WdAction::Drop).mode(0, 4),
        WdMode::Normal,
        "unwatched priority"
    );
}

#[test]
fn alert_restores_on_first_poll_without_the_condition_even_without_restoration_time() {
    let mut w = wd(100, 100, None, WdAction::Alert);
    let mut c = Counters::default();
    c.poll(&mut w, 0);
    c.storm_poll(&mut w, 100);
    c.storm_poll(&mut w, 100);
    assert_eq!(status(&w), WdState::Stormed);
    c.quiet_poll(&mut w, 100);
    assert_eq!(status(&w), WdState::Operational);
}

// ---- counters (E-18, R-WD-10) -------------------------------------------------------

#[test]
fn storm_restore_storm_counters_e18() {
    for action in ACTIONS {
        storm_restore_storm(action);
    }
}

fn storm_restore_storm(action: WdAction) {
    let mut w = wd(100, 100, Some(100), action);
    let mut c = Counters::default();
    c.poll(&mut w, 0);
    // First storm: detected at the first positive poll, then 2 more storm polls.
    c.storm_poll(&mut w, 100);
    c.s.tx_drop_packets += 4;
    c.storm_poll(&mut w, 100);
    c.storm_poll(&mut w, 100);
    c.quiet_poll(&mut w, 100); // restore
    let after_first = w.stats(0, 3).unwrap();
    assert_eq!((after_first.rx_last_ok, after_first.tx_last_drop), (6, 4));
    // Second storm.
    c.storm_poll(&mut w, 100);
    c.s.tx_drop_packets += 1;
    c.storm_poll(&mut w, 100);
    let st = w.stats(0, 3).unwrap();
    assert_eq!(st.status, WdState::Stormed);
    assert_eq!((st.deadlock_detected, st.deadlock_restored), (2, 1));
    // LAST counters reflect only the second storm; the cumulative ones both.
    assert_eq!((st.rx_last_ok, st.tx_last_drop, st.tx_last_ok), (3, 1, 0));
    assert_eq!((st.rx_ok, st.tx_drop, st.tx_ok), (9, 5, 7));
    assert!(st.deadlock_detected - st.deadlock_restored <= 1);
}

// ---- BIG_RED_SWITCH (R-WD-11) -----------------------------------------------------

#[test]
fn big_red_switch_forces_drop_and_suspends_detection() {
    let mut w = wd(100, 100, Some(100), WdAction::Forward);
    let mut c = Counters::default();
    c.poll(&mut w, 0);
    w.handle_big_red_switch(true);
    assert_eq!(w.mode(0, 3), WdMode::Drop);
    c.storm_poll(&mut w, 100);
    c.storm_poll(&mut w, 100);
    assert_eq!(status(&w), WdState::Operational, "detection suspended");
    w.handle_big_red_switch(false);
    assert_eq!(w.mode(0, 3), WdMode::Normal);
    c.storm_poll(&mut w, 100); // baseline again after the switch
    assert_eq!(status(&w), WdState::Operational);
    c.storm_poll(&mut w, 100);
    assert_eq!(status(&w), WdState::Stormed);
}

// ---- persistence (R-WD-12) --------------------------------------------------------

#[test]
fn stormed_queues_can_be_listed_and_resumed() {
    let mut w = wd(100, 100, Some(100), WdAction::Drop);
    let mut c = Counters::default();
    c.poll(&mut w, 0);
    c.storm_poll(&mut w, 100);
    assert_eq!(w.stormed().collect::<Vec<_>>(), vec![(0, 3)]);
    let mut restarted = wd(100, 100, Some(100), WdAction::Drop);
    assert!(restarted.restore_stormed(0, 3));
    assert!(!restarted.restore_stormed(0, 2));
    assert_eq!(restarted.mode(0, 3), WdMode::Drop);
}

// ---- configuration (R-WD-1/2, E-17) -------------------------------------------------

#[test]
fn config_ranges() {
    let g = WatchdogConfig::default();
    assert_eq!(g.poll_interval_ms, 100);
    assert!(g.problems().is_empty());
    assert_eq!(
        WatchdogConfig {
            poll_interval_ms: 50,
            big_red_switch: false
        }
        .problems()
        .len(),
        1
    );
    assert_eq!(
        WatchdogConfig {
            poll_interval_ms: 1001,
            big_red_switch: false
        }
        .problems()
        .len(),
        1
    );
    let ok = WatchdogPortConfig::start(400, None);
    assert_eq!(
        ok.restoration_time_ms,
        Some(800),
        "CLI start: restoration = 2 × detection"
    );
    assert!(ok.problems(&g).is_empty());
    assert!(
        !WatchdogPortConfig::start(99, Some(200))
            .problems(&g)
            .is_empty()
    );
    assert!(
        !WatchdogPortConfig::start(5001, Some(200))
            .problems(&g)
            .is_empty()
    );
    assert!(
        !WatchdogPortConfig::start(200, Some(60_001))
            .problems(&g)
            .is_empty()
    );
    let slow = WatchdogConfig {
        poll_interval_ms: 500,
        big_red_switch: false,
    };
    assert_eq!(
        WatchdogPortConfig::start(400, Some(400))
            .problems(&slow)
            .len(),
        2,
        "both below the poll interval"
    );
    let never = WatchdogPortConfig {
        restoration_time_ms: None,
        ..ok
    };
    assert!(never.problems(&g).is_empty());
}

#[test]
fn start_default_e17() {
    let (g, p) = WatchdogPortConfig::start_default(64);
    assert_eq!(
        (
            p.detection_time_ms,
            p.restoration_time_ms,
            g.poll_interval_ms
        ),
        (400, Some(400), 400)
    );
    assert_eq!(
        WatchdogPortConfig::start_default(33).1.detection_time_ms,
        400
    );
    assert_eq!(
        WatchdogPortConfig::start_default(32).1.detection_time_ms,
        200
    );
    let (g, p) = WatchdogPortConfig::start_default(200);
    assert_eq!((p.detection_time_ms, g.poll_interval_ms), (1400, 1000));
    assert_eq!(p.action, WdAction::Drop);
}
