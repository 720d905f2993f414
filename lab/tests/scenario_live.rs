//! The default scenario's parts through the real `roceswitch` daemon on
//! veth links in namespaces (needs root; skipped with a message otherwise).
//!
//! ```text
//!  incast:  h1 ──┐                       ECMP:  ha ── leaf1 ══ spine1 ══ leaf2 ── hb
//!           h2 ──┼── sw ── h3                         ╚═══ spine2 ═══╝
//! ```
//!
//! Each test brings up its own lab (namespaces `rl-l<pid>x<n>-…`, state in a
//! temporary directory) and tears it down on every exit path (the runner's
//! guard), then checks that no namespace of its lab is left. The tests run
//! one at a time: each starts up to four switch daemons.
//!
//! The switch binary is not built from here (a nested cargo would deadlock
//! on the build lock): it must already be in `target/<profile>/`, which a
//! workspace build (`cargo build --workspace`) provides.

mod common;

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use lab::labctl::state::StateStore;
use lab::scenario::live::{self, Binaries};
use lab::scenario::{
    LIVE_GOODPUT_BAND, MESSAGE_BYTES, MIN_JAIN, ScenarioConfig, fair_share_ratios, jain_index,
    lossy, payload_efficiency, verdict_table,
};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Lab speed for these tests: low enough that debug builds of the switch
/// and the agents keep their rate on a loaded 2-core machine (measured:
/// senders reach ~35 Mb/s each under load 7 with 4 KiB packets, so 2:1 at
/// 40M still congests), high enough that the queues fill within seconds.
const SPEED_BPS: u64 = 40_000_000;

fn binaries() -> Binaries {
    let exe = std::env::current_exe().expect("test executable path");
    let roceswitch = live::find_binary("roceswitch", &exe).unwrap_or_else(|| {
        panic!(
            "roceswitch is not built next to {} (nor on PATH); build it first: \
             cargo build -p control --bin roceswitch (or cargo build --workspace)",
            exe.display()
        )
    });
    Binaries {
        roceswitch,
        roceperf: PathBuf::from(env!("CARGO_BIN_EXE_roceperf")),
    }
}

struct TempStore(PathBuf);
impl Drop for TempStore {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `f` with a fresh state store and a unique lab name, then checks
/// that no namespace of that lab survived.
fn with_lab<T>(f: impl FnOnce(&StateStore, &str) -> T) -> T {
    let lab = common::unique("l");
    let dir = TempStore(std::env::temp_dir().join(format!("rocelab-test-{lab}")));
    let store = StateStore::new(&dir.0);
    let out = f(&store, &lab);
    let left = common::netns_with_prefix(&format!("rl-{lab}"));
    assert!(left.is_empty(), "namespaces left behind: {left:?}");
    out
}

fn cfg() -> ScenarioConfig {
    ScenarioConfig {
        speed_bps: SPEED_BPS,
        incast_s: 3.0,
        ecn: None,
        ..ScenarioConfig::default()
    }
}

#[test]
fn lossless_incast_through_the_switch_loses_nothing_and_pauses_the_senders() {
    if !common::root_or_skip("lossless_incast") {
        return;
    }
    let bins = binaries();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let stop = AtomicBool::new(false);
    let series = std::env::temp_dir().join(format!("rl-series-{}", std::process::id()));
    let x = with_lab(|store, lab| {
        live::run_incast(
            &cfg(),
            &bins,
            store,
            &stop,
            &format!("{lab}-i"),
            Some(&series),
        )
        .expect("incast run")
    });
    eprintln!("{x:#?}");
    // The time series the switch was sampled into: the queue built up, the
    // switch paused the senders, and the picture was drawn.
    let csv = std::fs::read_to_string(series.join("incast_timeseries.csv")).unwrap();
    let svg = std::fs::read_to_string(series.join("incast_timeseries.svg")).unwrap();
    let _ = std::fs::remove_dir_all(&series);
    assert!(svg.starts_with("<svg"));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let rows: Vec<Vec<f64>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert!(rows.len() > 100, "{} samples over a 3 s incast", rows.len());
    let col = |name: &str| header.iter().position(|h| h.starts_with(name)).unwrap();
    let (q, p1, p2) = (col("bottleneck queue"), col("h1 paused"), col("h2 paused"));
    assert!(
        rows.iter().any(|r| r[q] > 10.0),
        "the queue never passed 10 KB"
    );
    assert!(
        rows.iter().any(|r| r[p1] == 1.0 || r[p2] == 1.0),
        "no sample shows a sender paused"
    );
    assert!(x.rx_bytes > 0, "nothing arrived: {x:?}");
    assert_eq!(x.switch_drops, 0, "lossless priority dropped in the switch");
    assert_eq!(
        (x.psn_gaps, x.psn_lost),
        (0, 0),
        "the receiver must see every PSN"
    );
    assert!(x.switch_pfc_tx > 0, "the switch never sent PFC");
    let seen: u64 = x.flows.iter().map(|f| f.pfc_rx).sum();
    assert!(seen > 0, "no PFC frame reached a sender on the wire");
    // Nothing lost: every payload byte a sender sent arrived, and RC had
    // nothing to recover.
    let sent: u64 = x.flows.iter().map(|f| f.tx_bytes).sum();
    assert_eq!(sent, x.rx_bytes, "sender bytes != receiver bytes");
    for f in &x.flows {
        assert_eq!((f.retx_packets, f.naks_rx, f.timeouts), (0, 0, 0), "{f:?}");
    }
    // PFC keeps the bottleneck busy: goodput near the payload rate of the
    // line (headers from the frame layout), shared fairly.
    let payload_gbps =
        SPEED_BPS as f64 / 1e9 * payload_efficiency(cfg().roce_mtu_bytes, MESSAGE_BYTES);
    let (lo, hi) = LIVE_GOODPUT_BAND;
    assert!(
        (lo * payload_gbps..=hi * payload_gbps).contains(&x.rx_gbps),
        "goodput {} Gb/s, payload rate {payload_gbps} Gb/s",
        x.rx_gbps
    );
    let rates: Vec<f64> = x.flows.iter().map(|f| f.tx_gbps).collect();
    let jain = jain_index(&rates).unwrap();
    assert!(jain >= MIN_JAIN, "Jain {jain} over {rates:?}");
}

/// `rocelab run lossy` on namespaces: the incast on priority 3 and on
/// priority 0. RC over the lossy priority must show drops, NAKs, go-back-N
/// and a goodput collapse; the lossless run none of it.
#[test]
fn lossy_scenario_shows_go_back_n_where_lossless_shows_nothing_to_recover() {
    if !common::root_or_skip("lossy_scenario") {
        return;
    }
    let bins = binaries();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let stop = AtomicBool::new(false);
    let o = with_lab(|store, lab| {
        lossy::run_live(&cfg(), &bins, store, &stop, lab).expect("lossy scenario")
    });
    let vs = lossy::verdicts(&o);
    eprintln!(
        "{}\n{}",
        lossy::figures_table(&o),
        verdict_table(o.mode, &vs)
    );
    assert!(vs.iter().all(|v| v.pass), "{o:#?}");
}

/// `rocelab run fault` on namespaces: the QP behind the ACL that drops
/// all of its packets fails with "transport retry counter exceeded",
/// one in 200 only retransmits; the other sender's QP is untouched.
#[test]
fn an_acl_dropping_one_qps_packets_fails_it_or_makes_it_retransmit() {
    if !common::root_or_skip("fault_scenario") {
        return;
    }
    let bins = binaries();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let stop = AtomicBool::new(false);
    let o = with_lab(|store, lab| {
        lab::scenario::fault::run_live(&cfg(), &bins, store, &stop, lab).expect("fault scenario")
    });
    let vs = lab::scenario::fault::verdicts(&o);
    eprintln!(
        "{}\n{}",
        lab::scenario::fault::figures_table(&o),
        verdict_table(o.mode, &vs)
    );
    assert!(vs.iter().all(|v| v.pass), "{o:#?}");
}

#[test]
fn dcbx_moves_the_willing_host_to_the_lossless_priority_and_reports_the_other() {
    if !common::root_or_skip("dcbx_scenario") {
        return;
    }
    let bins = binaries();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let stop = AtomicBool::new(false);
    let x = with_lab(|store, lab| {
        lab::scenario::dcbx::run_live(&cfg(), &bins, store, &stop, lab).expect("dcbx scenario")
    });
    let vs = lab::scenario::dcbx::verdicts("namespaces", &x);
    eprintln!(
        "{}\n{}",
        lab::scenario::dcbx::figures_table(&x),
        verdict_table("namespaces", &vs)
    );
    assert!(vs.iter().all(|v| v.pass), "{x:#?}");
}

#[test]
fn ecmp_spreads_64_qps_over_two_uplinks_within_1_5x_fair_share() {
    if !common::root_or_skip("ecmp_spread") {
        return;
    }
    let bins = binaries();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let stop = AtomicBool::new(false);
    let c = ScenarioConfig {
        ecmp_qps: 64,
        ecmp_s: 2.0,
        ecmp_rate_bps: 50_000_000,
        ..cfg()
    };
    let e = with_lab(|store, lab| {
        live::run_ecmp(&c, &bins, store, &stop, &format!("{lab}-e")).expect("ECMP run")
    });
    eprintln!("{e:#?}");
    let ratios = fair_share_ratios(&e.uplink_packets);
    assert_eq!(ratios.len(), 2, "no traffic on the uplinks: {e:?}");
    for (i, r) in ratios.iter().enumerate() {
        assert!(*r <= 1.5, "uplink {} carries {r:.2}x its fair share", i + 1);
    }
    assert_eq!((e.psn_gaps, e.psn_lost), (0, 0), "a QP must keep its path");
}
