//! The Prometheus endpoint over a `MemoryBackend`: fetched with a raw
//! `TcpStream`, as a scraper would.

use std::sync::Arc;

use control::fabric::{FabricBackend, MemoryBackend, PriorityCounters};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn start(
    backend: Arc<MemoryBackend>,
) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = control::metrics::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let backend: Arc<dyn FabricBackend> = backend;
    tokio::spawn(control::metrics::serve(listener, backend, async {
        let _ = stop_rx.await;
    }));
    (addr, stop_tx)
}

async fn fetch(addr: std::net::SocketAddr, request: &[u8]) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(request).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(std::time::Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .expect("reply within 10 s")
        .unwrap();
    String::from_utf8(out).unwrap()
}

fn sample(port: u16, priority: u8, base: u64) -> PriorityCounters {
    PriorityCounters {
        port,
        priority,
        rx_packets: base + 1,
        rx_bytes: base + 2,
        tx_packets: base + 3,
        tx_bytes: base + 4,
        drops: base + 5,
        pfc_rx_frames: base + 6,
        pfc_tx_frames: base + 7,
        ecn_marked: base + 8,
        watchdog_storms: base + 9,
        queue_depth_bytes: base + 10,
        kernel_drops: base + 11,
        ..Default::default()
    }
}

#[tokio::test]
async fn get_metrics_serves_every_counter_with_labels_help_and_type() {
    let backend = Arc::new(MemoryBackend::default());
    backend.set_counters(vec![sample(1, 0, 2000), sample(0, 3, 1000)]);
    let (addr, _stop) = start(backend.clone()).await;

    let reply = fetch(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").await;
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    assert!(
        head.contains(&format!("content-length: {}", body.len())),
        "{head}"
    );
    let expected = [
        ("roceswitch_rx_packets_total", "counter", 1),
        ("roceswitch_rx_bytes_total", "counter", 2),
        ("roceswitch_tx_packets_total", "counter", 3),
        ("roceswitch_tx_bytes_total", "counter", 4),
        ("roceswitch_drops_total", "counter", 5),
        ("roceswitch_pfc_rx_frames_total", "counter", 6),
        ("roceswitch_pfc_tx_frames_total", "counter", 7),
        ("roceswitch_ecn_marked_packets_total", "counter", 8),
        ("roceswitch_watchdog_storms_total", "counter", 9),
        ("roceswitch_queue_depth_bytes", "gauge", 10),
        ("roceswitch_kernel_drops_total", "counter", 11),
    ];
    let lines: Vec<&str> = body.lines().collect();
    for (name, kind, offset) in expected {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("# HELP {name} "))),
            "{name}"
        );
        assert!(
            lines.contains(&format!("# TYPE {name} {kind}").as_str()),
            "{name}"
        );
        let p0 = format!("{name}{{port=\"0\",priority=\"3\"}} {}", 1000 + offset);
        let p1 = format!("{name}{{port=\"1\",priority=\"0\"}} {}", 2000 + offset);
        let i0 = lines
            .iter()
            .position(|l| *l == p0)
            .unwrap_or_else(|| panic!("{p0}\n{body}"));
        let i1 = lines
            .iter()
            .position(|l| *l == p1)
            .unwrap_or_else(|| panic!("{p1}\n{body}"));
        assert!(i0 < i1, "rows ordered by (port, priority)");
    }
    // Every per-(port, priority) family has HELP, TYPE and the two rows.
    let families: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .collect();
    for f in &families {
        let name = f.split(' ').next().unwrap();
        let rows = lines
            .iter()
            .filter(|l| l.starts_with(&format!("{name}{{")))
            .count();
        assert_eq!(rows, 2, "{name}\n{body}");
    }
    assert_eq!(lines.len(), families.len() * 4, "{body}");

    // A scrape sees the counters as they are now.
    backend.set_counters(vec![sample(0, 3, 5000)]);
    let reply = fetch(addr, b"GET /metrics HTTP/1.0\r\n\r\n").await;
    assert!(
        reply.contains("roceswitch_rx_packets_total{port=\"0\",priority=\"3\"} 5001\n"),
        "{reply}"
    );
    assert!(!reply.contains("port=\"1\""), "{reply}");
}

#[tokio::test]
async fn other_paths_methods_and_garbage_get_http_errors() {
    let backend = Arc::new(MemoryBackend::default());
    let (addr, stop) = start(backend).await;
    let reply = fetch(addr, b"GET / HTTP/1.1\r\n\r\n").await;
    assert!(reply.starts_with("HTTP/1.1 404 "), "{reply}");
    let reply = fetch(addr, b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n").await;
    assert!(reply.starts_with("HTTP/1.1 405 "), "{reply}");
    let reply = fetch(addr, b"\x16\x03\x01 not http\r\n\r\n").await;
    assert!(reply.starts_with("HTTP/1.1 400 "), "{reply}");
    // A head that never ends is cut off rather than buffered forever
    // (431 Request Header Fields Too Large).
    let reply = fetch(addr, &vec![b'a'; 3 * control::metrics::MAX_HEAD_BYTES]).await;
    assert!(reply.starts_with("HTTP/1.1 4"), "{reply}");

    // An empty backend serves an empty exposition (families without rows
    // are left out, as the Prometheus library does).
    let reply = fetch(addr, b"GET /metrics?x=1 HTTP/1.1\r\n\r\n").await;
    assert!(reply.starts_with("HTTP/1.1 200 "), "{reply}");
    assert!(!reply.contains("roceswitch_queue_depth_bytes"), "{reply}");

    stop.send(()).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "listener closed after shutdown"
    );
}

/// A real switch core (`roce_switch.p4`, 2 ports, port 0 with a 1500 B
/// MTU) on its own thread, as the daemon runs it, behind a `SwitchBackend`.
fn switch_backend() -> (
    Arc<dyn FabricBackend>,
    dataplane::driver::CommandSender<dataplane::roce::Program>,
) {
    use dataplane::switch::{Switch, SwitchConfig};
    use dataplane::time::Instant;
    let mut config = SwitchConfig::with_ports(2);
    config.tm.ports[0].mtu_bytes = 1500;
    let base = config.tm.clone();
    let (tx, rx) = dataplane::driver::command_channel().unwrap();
    std::thread::spawn(move || {
        let mut sw = Switch::new(dataplane::roce::Program::new(), config, Instant::ZERO).unwrap();
        while let Ok(cmd) = rx.recv() {
            cmd(&mut sw, Instant::ZERO);
        }
    });
    let submit = tx.clone();
    let backend: Arc<dyn FabricBackend> = Arc::new(control::fabric::SwitchBackend::new(
        Box::new(move |cmd| submit.send(cmd).is_ok()),
        &dataplane::roce::PROGRAM_INFO,
        base,
    ));
    (backend, tx)
}

#[tokio::test]
async fn switch_wide_counters_and_drop_reasons_are_exported() {
    let (backend, commands) = switch_backend();
    let mut oversize = vec![0u8; 2000];
    oversize[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    commands
        .send(Box::new(move |sw, now| {
            sw.handle_frame(0, &oversize, now);
            sw.handle_packet_out(&[0x00, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], now);
        }))
        .unwrap();

    let listener = control::metrics::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(control::metrics::serve(
        listener,
        backend,
        std::future::pending(),
    ));
    let body = fetch(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert!(body.starts_with("HTTP/1.1 200 OK"), "{body}");
    for line in [
        "# TYPE roceswitch_rx_frames_total counter",
        "roceswitch_rx_frames_total 1",
        "roceswitch_packet_out_total 1",
        "roceswitch_digests_dropped_total 0",
        "roceswitch_switch_drops_total{reason=\"over_mtu\"} 1",
        "roceswitch_switch_drops_total{reason=\"packet_in_overflow\"} 0",
        "roceswitch_switch_drops_total{reason=\"kernel_ring\"} 0",
        "roceswitch_conservation_ok 1",
        "roceswitch_ledger_arrived_frames_total{port=\"0\"} 1",
        "roceswitch_ledger_dropped_total{port=\"0\",reason=\"over_mtu\"} 1",
        "roceswitch_ledger_arrived_frames_total{port=\"cpu\"} 1",
    ] {
        assert!(
            body.lines().any(|l| l == line),
            "missing {line:?} in:\n{body}"
        );
    }
}

/// Every metric name in `text` (identifiers starting `roceswitch_`).
fn metric_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("roceswitch_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        out.push(tail[..end].to_string());
        rest = &tail[end..];
    }
    out.sort();
    out.dedup();
    out
}

/// Every string under a key `key` anywhere in `v`.
fn strings_under(v: &serde_json::Value, key: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                match x {
                    serde_json::Value::String(s) if k == key => out.push(s.clone()),
                    _ => strings_under(x, key, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings_under(x, key, out)),
        _ => {}
    }
}

#[tokio::test]
async fn every_metric_the_grafana_dashboard_queries_is_exported_by_a_switch() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/grafana/roceswitch.json"
    );
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut queries = Vec::new();
    strings_under(&dashboard, "expr", &mut queries);
    strings_under(&dashboard, "query", &mut queries);
    let wanted = metric_names(&queries.join("\n"));
    assert!(wanted.len() >= 15, "{wanted:?}");

    let (backend, _commands) = switch_backend();
    let listener = control::metrics::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(control::metrics::serve(
        listener,
        backend,
        std::future::pending(),
    ));
    let reply = fetch(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").await;
    let exported: Vec<&str> = reply
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    for name in &wanted {
        assert!(
            exported.contains(&name.as_str()),
            "the dashboard queries {name}, /metrics has no such family:\n{reply}"
        );
    }
    // The label set is the one rocectl shows: port x priority / queue / pg.
    for needle in [
        "roceswitch_pfc_rx_pause_seconds_total{port=\"1\",priority=\"3\"} 0",
        "roceswitch_queue_ecn_marked_packets_total{port=\"0\",queue=\"3\"} 0",
        "roceswitch_pg_headroom_watermark_bytes{pg=\"3\",port=\"0\"} 0",
        "roceswitch_rx_ecn_mark_total{port=\"1\"} 0",
    ] {
        assert!(reply.lines().any(|l| l == needle), "{needle}\n{reply}");
    }
}
