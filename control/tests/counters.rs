//! The counters engineers grep for, end to end: a real switch core
//! (`roce_switch.p4`) on its own thread with a `ManualClock`, behind a
//! `SwitchBackend`, the fabric service, and `rocectl counters` as a
//! process (`--json`, `--clear`).

use std::process::{Command, Output};
use std::sync::Arc;

use control::fabric::{FabricBackend, FabricService};
use control::serve::{Bound, Listen};
use dataplane::driver::{Clock, CommandSender, ManualClock};
use dataplane::mac::Mac;
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::{Duration, Instant};
use dataplane::wire::ethernet::EthernetAddress;
use dataplane::wire::pfc::PfcRepr;

type Program = dataplane::roce::Program;

/// A 2-port switch whose commands run at the clock's time.
fn switch(clock: ManualClock) -> (Arc<dyn FabricBackend>, CommandSender<Program>) {
    let mut config = SwitchConfig::with_ports(2);
    config.tm.ports[0].mtu_bytes = 1500;
    let base = config.tm.clone();
    let (tx, rx) = dataplane::driver::command_channel().unwrap();
    std::thread::spawn(move || {
        let mut sw = Switch::new(Program::new(), config, clock.now()).unwrap();
        while let Ok(cmd) = rx.recv() {
            let now = clock.now();
            sw.handle_timeout(now);
            cmd(&mut sw, now);
        }
    });
    let submit = tx.clone();
    let backend = control::fabric::SwitchBackend::new(
        Box::new(move |cmd| submit.send(cmd).is_ok()),
        &dataplane::roce::PROGRAM_INFO,
        base,
    )
    .with_port_names(vec![(0, "swp1".into()), (1, "swp2".into())]);
    (Arc::new(backend), tx)
}

fn pfc_frame(repr: &PfcRepr) -> Vec<u8> {
    let mut buf = vec![0u8; 64];
    let n = Mac::new(EthernetAddress([2, 0, 0, 0, 0, 9]))
        .emit_pfc(repr, &mut buf)
        .unwrap();
    buf.truncate(n);
    buf
}

/// An IPv4/UDP frame to 4791 with ECN = CE (not routed anywhere: only the
/// arrival counters matter here).
fn ce_frame() -> Vec<u8> {
    let mut f = vec![0u8; 80];
    f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[14] = 0x45;
    f[15] = 0b0110_1011; // DSCP 26, ECN CE
    f[16..18].copy_from_slice(&66u16.to_be_bytes());
    f[22] = 64;
    f[23] = 17;
    f[26..30].copy_from_slice(&[10, 0, 0, 1]);
    f[30..34].copy_from_slice(&[10, 0, 0, 2]);
    f[36..38].copy_from_slice(&4791u16.to_be_bytes());
    f
}

fn run(
    tx: &CommandSender<Program>,
    f: impl FnOnce(&mut Switch<Program>, Instant) + Send + 'static,
) {
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    tx.send(Box::new(move |sw, now| {
        f(sw, now);
        let _ = done_tx.send(());
    }))
    .unwrap();
    done_rx.recv().unwrap();
}

#[test]
fn pause_duration_is_measured_on_the_switch_clock() {
    let clock = ManualClock::new(Instant::from_nanos(1_000_000));
    let (backend, tx) = switch(clock.clone());
    let xoff = pfc_frame(&PfcRepr::xoff(1 << 3, 0xffff));
    run(&tx, move |sw, now| sw.handle_frame(1, &xoff, now));

    clock.advance(Duration::from_micros(100));
    let set = backend.counter_set(&[1]);
    let c = set.priorities.iter().find(|c| c.priority == 3).unwrap();
    assert!(c.paused);
    assert_eq!(c.pfc_rx_frames, 1);
    assert_eq!(c.pause_rx_ns, 100_000, "the pause so far, read at now");
    assert_eq!(c.pause_rx_transitions, 0);

    clock.advance(Duration::from_micros(150));
    let xon = pfc_frame(&PfcRepr::xon(1 << 3));
    run(&tx, move |sw, now| sw.handle_frame(1, &xon, now));
    clock.advance(Duration::from_millis(5));
    let set = backend.counter_set(&[1]);
    let c = set.priorities.iter().find(|c| c.priority == 3).unwrap();
    assert!(!c.paused);
    assert_eq!(c.pfc_rx_frames, 2);
    assert_eq!(c.pause_rx_ns, 250_000, "XOFF to XON, not quanta");
    assert_eq!(c.pause_rx_transitions, 1);
    let other = set.priorities.iter().find(|c| c.priority == 4).unwrap();
    assert_eq!((other.pfc_rx_frames, other.pause_rx_ns), (0, 0));

    let stats = control::views::counters::ethtool_stats(&set, 1);
    let get = |n: &str| stats.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
    assert_eq!(get("rx_prio3_pause"), Some(2));
    assert_eq!(get("rx_prio3_pause_duration"), Some(250), "µs");
    assert_eq!(get("rx_prio3_pause_transition"), Some(1));
    assert_eq!(get("tx_prio3_pause"), Some(0));
}

#[test]
fn data_frames_move_the_arrival_counters() {
    let clock = ManualClock::new(Instant::from_nanos(1_000));
    let (backend, tx) = switch(clock);
    run(&tx, |sw, now| {
        for _ in 0..3 {
            sw.handle_frame(0, &ce_frame(), now);
        }
        let mut plain = ce_frame();
        plain[15] = 26 << 2; // ECT(0)... not CE
        sw.handle_frame(0, &plain, now);
        sw.handle_frame(0, &[0u8; 2000], now); // over the 1500 B MTU
    });
    let set = backend.counter_set(&[]);
    let port0 = set.ports.iter().find(|p| p.port == 0).unwrap();
    assert_eq!(port0.name, "swp1");
    assert_eq!(port0.rx_ecn_mark, 3);
    assert!(port0.rx_discards_phy >= 1, "{port0:?}");
    assert_eq!(
        set.ports.iter().find(|p| p.port == 1).unwrap().rx_ecn_mark,
        0
    );
    assert_eq!(set.queues.len(), 2 * 8);
    assert_eq!(set.pgs.len(), 2 * 8);
}

fn rocectl(addr: &str, cache: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocectl"))
        .env("XDG_CACHE_HOME", cache)
        .arg("--addr")
        .arg(addr)
        .args(args)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rocectl_counters_json_and_clear_against_a_daemon() {
    let clock = ManualClock::new(Instant::from_nanos(1_000_000));
    let (backend, tx) = switch(clock.clone());
    let fabric = FabricService::open(backend, None).unwrap();
    let bound = Bound::bind(&Listen::Tcp("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap().to_string();
    tokio::spawn(bound.serve(None, Some(fabric), std::future::pending()));
    let cache = tempfile::tempdir().unwrap();

    let xoff = pfc_frame(&PfcRepr::xoff(1 << 3, 0xffff));
    let again = xoff.clone();
    run(&tx, move |sw, now| sw.handle_frame(1, &xoff, now));
    let (a, c) = (addr.clone(), cache.path().to_path_buf());
    let call = move |args: &'static [&'static str]| {
        let (a, c) = (a.clone(), c.clone());
        tokio::task::spawn_blocking(move || rocectl(&a, &c, args))
    };

    let out = call(&["counters", "ethtool", "--port", "swp2", "--json"])
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["swp2"]["rx_prio3_pause"], 1, "{v}");
    assert!(v.get("swp1").is_none(), "--port selects: {v}");

    let out = call(&["counters", "pfc"]).await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["swp2", "0", "0", "0", "1", "0", "0", "0", "0"]),
        "{text}"
    );

    let out = call(&["counters", "--clear"]).await.unwrap();
    assert!(out.status.success(), "{out:?}");
    run(&tx, move |sw, now| sw.handle_frame(1, &again, now));
    let out = call(&["counters", "pfc", "--json"]).await.unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["rx"]["swp2"]["PFC3"], 1,
        "only the frame since --clear: {v}"
    );
    let out = call(&["counters", "pfc", "--json", "--raw"]).await.unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rx"]["swp2"]["PFC3"], 2, "{v}");

    for view in ["queue", "watermark"] {
        let out = call(if view == "queue" {
            &["counters", "queue"]
        } else {
            &["counters", "watermark", "--json"]
        })
        .await
        .unwrap();
        assert!(out.status.success(), "{view}: {out:?}");
    }
    let out = call(&["counters", "ethtool", "--port", "swp9"])
        .await
        .unwrap();
    assert!(!out.status.success(), "unknown port is an error");
}
