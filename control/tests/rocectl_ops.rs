//! `rocectl headroom`, `rocectl watch` and `rocectl top` (the operator
//! views) against an in-process fabric server over a `MemoryBackend`.

use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use control::fabric::{FabricService, MemoryBackend, PriorityCounters};
use control::serve::{Bound, Listen};
use proto::roceswitch::fabric::v1 as pb;

fn rocectl_sync(addr: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocectl"))
        .arg("--addr")
        .arg(addr)
        .args(args)
        .output()
        .unwrap()
}

async fn rocectl(addr: String, args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        rocectl_sync(&addr, &args)
    })
    .await
    .unwrap()
}

/// Serves a fabric service over `backend`; returns its address and event sender.
async fn fabric_server(
    backend: Arc<MemoryBackend>,
) -> (String, tokio::sync::broadcast::Sender<pb::Event>) {
    let fabric = FabricService::open(backend, None).unwrap();
    let events = fabric.events();
    let bound = Bound::bind(&Listen::Tcp("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap().to_string();
    tokio::spawn(bound.serve(None, Some(fabric), std::future::pending()));
    (addr, events)
}

#[test]
fn headroom_prints_the_e4_reference_numbers() {
    // No server is needed: the address is never dialled.
    let out = rocectl_sync(
        "unix:/nonexistent",
        &[
            "headroom", "--speed", "100G", "--cable", "100m", "--mtu", "4200",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<(String, u64)> = text
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace();
            (
                w.next().unwrap().to_string(),
                w.next().unwrap().parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fields,
        vec![
            ("xon_bytes".to_string(), 19_456),
            ("xoff_bytes".to_string(), 56_320),
            ("size_bytes".to_string(), 75_776),
        ]
    );

    // The pattern flags reach the formula: fewer small packets, less headroom.
    let out = rocectl_sync(
        "unix:/nonexistent",
        &[
            "headroom",
            "--speed",
            "100G",
            "--cable",
            "100m",
            "--mtu",
            "4200",
            "--asic",
            "spectrum2",
            "--lossless-mtu",
            "1024",
            "--small-packet-percentage",
            "0",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let xoff: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("xoff_bytes"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(xoff < 56_320, "{text}");

    for bad in [
        ["--speed", "fast", "--cable", "100m"],
        ["--speed", "100G", "--cable", "long"],
        ["--speed", "0G", "--cable", "100m"],
    ] {
        let mut args = vec!["headroom"];
        args.extend(bad);
        args.extend(["--mtu", "4200"]);
        let out = rocectl_sync("unix:/nonexistent", &args);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_follows_the_event_stream() {
    for json in [false, true] {
        let (addr, events) = fabric_server(Arc::new(MemoryBackend::default())).await;
        let mut args = vec!["--addr", &addr, "watch", "--count", "2"];
        if json {
            args.push("--json");
        }
        let child = Command::new(env!("CARGO_BIN_EXE_rocectl"))
            .args(&args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let waiter = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap());
        // The subscriber may not be listening yet: keep sending until it has two.
        let mut sent = 0u64;
        while !waiter.is_finished() && sent < 400 {
            sent += 1;
            let _ = events.send(pb::Event {
                timestamp_ns: sent,
                kind: Some(pb::event::Kind::Storm(pb::WatchdogStorm {
                    port: 4,
                    priority: 3,
                })),
            });
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        let out = waiter.await.unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        for l in lines {
            if json {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                assert_eq!(v["kind"], "watchdog_storm", "{l}");
                assert_eq!(
                    (v["port"].as_u64(), v["priority"].as_u64()),
                    (Some(4), Some(3))
                );
            } else {
                assert!(l.contains("watchdog storm: port 4 priority 3"), "{l}");
                // For people: no Rust debug formatting.
                assert!(!l.contains("Some(") && !l.contains("{ "), "{l}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_once_prints_one_frame_of_ports_by_priorities() {
    let backend = Arc::new(MemoryBackend::default());
    backend.set_counters(vec![
        PriorityCounters {
            port: 2,
            priority: 3,
            queue_depth_bytes: 65_536,
            pfc_rx_frames: 12,
            pfc_tx_frames: 7,
            ecn_marked: 99,
            drops: 0,
            ..Default::default()
        },
        PriorityCounters {
            port: 1,
            priority: 0,
            drops: 5,
            ..Default::default()
        },
    ]);
    let (addr, _events) = fabric_server(backend).await;
    let out = rocectl(addr.clone(), &["top", "--once"]).await;
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains('\x1b'),
        "a single frame has no escape codes: {text:?}"
    );
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        vec![
            vec![
                "port", "prio", "qdepth_B", "tx_Mbps", "pfc_rx", "paused", "pfc_tx", "ecn", "drops"
            ],
            vec!["1", "0", "0", "-", "0", "-", "0", "0", "5"],
            vec!["2", "3", "65536", "-", "12", "-", "7", "99", "0"],
        ]
    );
    let out = rocectl(addr.clone(), &["top", "--once", "--port", "2"]).await;
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
    let out = rocectl(addr, &["top", "--interval", "0"]).await;
    assert_eq!(out.status.code(), Some(2));
}
