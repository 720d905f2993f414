//! roceperf client → server over a direct veth pair between two namespaces,
//! as separate processes (needs root; skipped with a message otherwise).
//!
//! ```text
//!  ns0 [c0] roceperf client ===== veth ===== roceperf server [s0] ns1
//!                                              (or a PFC injector)
//! ```

mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dataplane::wire::ethernet::EthernetAddress;
use dataplane::wire::pfc::{MacControlRepr, PfcRepr, emit_frame};
use lab::port::{AfPacketPort, FrameBuf, Port};
use serde_json::Value;

const C_MAC: &str = "02:00:00:00:0c:01";
const S_MAC: &str = "02:00:00:00:05:01";

fn roceperf<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_roceperf"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning roceperf")
}

/// Kills a child if the test fails before waiting for it.
struct Reaper(Option<Child>);
impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn json_lines(c: Child) -> Vec<Value> {
    let out = c.wait_with_output().expect("roceperf output");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "roceperf failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        text
    );
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn find<'a>(lines: &'a [Value], kind: &str) -> &'a Value {
    lines
        .iter()
        .find(|v| v["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} line in {lines:?}"))
}

/// `role` on the server's end (s0 in the second namespace, 10.1.0.2), with
/// JSON reports, for at most 30 s; more flags follow.
fn on_server(ns: &common::Netns, role: &str) -> Vec<String> {
    [
        role,
        "--netns",
        &ns.names[1],
        "--iface",
        "s0",
        "--mac",
        S_MAC,
        "--ip",
        "10.1.0.2",
        "--duration",
        "30",
        "--json",
    ]
    .map(String::from)
    .to_vec()
}

/// `role` on the client's end (c0, 10.1.0.1) aimed at the server, with
/// JSON reports; more flags follow.
fn on_client(ns: &common::Netns, role: &str, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        role,
        "--netns",
        &ns.names[0],
        "--iface",
        "c0",
        "--mac",
        C_MAC,
        "--ip",
        "10.1.0.1",
        "--dst-ip",
        "10.1.0.2",
        "--dst-mac",
        S_MAC,
        "--json",
    ]
    .map(String::from)
    .to_vec();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn setup() -> common::Netns {
    let ns = common::Netns::create(2);
    ns.veth(0, "c0", C_MAC, 1, "s0", S_MAC);
    ns
}

/// Share of the paced payload rate a debug-build agent must reach on a
/// loaded 2-core machine: stalls up to `LATE_CREDIT` are made up, longer
/// ones cost rate.
const PACER_MIN_SHARE: f64 = 0.75;

#[test]
fn client_to_server_delivers_every_psn_and_reports_bandwidth() {
    if !common::root_or_skip("client_to_server_delivers_every_psn_and_reports_bandwidth") {
        return;
    }
    let ns = setup();
    let mut server = Reaper(Some(roceperf(&on_server(&ns, "server"))));
    std::thread::sleep(Duration::from_millis(400));
    let client = roceperf(&on_client(
        &ns,
        "client",
        &[
            "--qps",
            "2",
            "--size",
            "65536",
            "--duration",
            "1.5",
            "--rate",
            "20M",
            "--interval",
            "0.5",
        ],
    ));
    let c = json_lines(client);
    std::thread::sleep(Duration::from_millis(300));
    let s = server.0.take().unwrap();
    // SIGTERM: the server stops and prints its summary.
    // SAFETY: kill on our child's pid.
    unsafe { libc::kill(s.id() as i32, libc::SIGTERM) };
    let s = json_lines(s);
    let cs = find(&c, "summary");
    let ss = find(&s, "summary");
    assert!(cs["tx_gbps"].as_f64().unwrap() > 0.0, "{cs}");
    assert!(ss["rx_gbps"].as_f64().unwrap() > 0.0, "{ss}");
    assert!(cs["tx_bytes"].as_u64().unwrap() > 1_000_000, "{cs}");
    assert_eq!(
        ss["rx_bytes"], cs["tx_bytes"],
        "server got a different byte count"
    );
    assert_eq!(ss["rx_packets"], cs["tx_packets"]);
    assert_eq!(ss["psn_gaps"], 0, "{ss}");
    assert_eq!(ss["psn_lost"], 0);
    assert_eq!(ss["psn_late"], 0);
    assert_eq!(ss["rx_errors"], 0);
    assert_eq!(ss["qps"], 2);
    assert_eq!(find(&s, "port")["qps_learned"], 2);
    // Interval lines are printed and add up to the summary.
    let per: u64 = c
        .iter()
        .filter(|v| v["kind"] == "interval")
        .map(|v| v["tx_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(per, cs["tx_bytes"].as_u64().unwrap());
    // RC over a lossless veth: nothing to recover, nothing resent (the lab
    // timeout leaves room for a descheduled peer).
    assert_eq!(cs["retx_packets"], 0, "{cs}");
    assert_eq!(cs["counters"]["local_ack_timeout_err"], 0, "{cs}");
    // Paced at 20 Mb/s of wire bytes (a rate a debug agent keeps on a
    // machine at load 6; at 500M it reached 0.12 Gb/s and at 100M 0.042,
    // CPU-bound, which says nothing of the pacer): the payload rate is
    // that times the
    // share of payload in a 1024-byte-MTU WRITE frame, less only the
    // pacer's start-up and scheduling slack.
    let paced = 0.02 * lab::scenario::payload_efficiency(1024, 65_536);
    let tx = cs["tx_gbps"].as_f64().unwrap();
    assert!(
        (PACER_MIN_SHARE * paced..=1.01 * paced).contains(&tx),
        "{tx} Gb/s, paced payload rate {paced} Gb/s: {cs}"
    );
}

#[test]
fn pfc_frames_into_the_client_port_pause_it() {
    if !common::root_or_skip("pfc_frames_into_the_client_port_pause_it") {
        return;
    }
    let ns = setup();
    let mut injector = AfPacketPort::open_in_netns(&ns.names[1], "s0").unwrap();
    let client = Reaper(Some(roceperf(&[
        "client",
        "--netns",
        &ns.names[0],
        "--iface",
        "c0",
        "--mac",
        C_MAC,
        "--ip",
        "10.1.0.1",
        "--dst-ip",
        "10.1.0.2",
        "--dst-mac",
        S_MAC,
        "--size",
        "65536",
        "--duration",
        "3",
        "--rate",
        "1G",
        "--priority",
        "3",
        "--interval",
        "0.25",
        "--json",
        // No server answers here: without a timeout the QP keeps its
        // window instead of giving up with "retry counter exceeded".
        "--qp-timeout",
        "0",
    ])));
    let pfc = |repr: PfcRepr| {
        let mut b = FrameBuf::default();
        let n = emit_frame(
            EthernetAddress([2, 0, 0, 0, 0xee, 1]),
            &MacControlRepr::Pfc(repr),
            b.space_mut(),
        )
        .unwrap();
        b.set_len(n);
        b
    };
    // 0xFFFF quanta at 1 Gb/s = 33.5 ms; refresh every 10 ms for 1 s.
    let xoff = [pfc(PfcRepr::xoff(1 << 3, 0xFFFF))];
    let xon = [pfc(PfcRepr::xon(1 << 3))];
    // Frames of the client prove it runs before we pause it.
    let mut seen = FrameBuf::batch(64);
    let t0 = Instant::now();
    while injector.recv_batch(&mut seen).unwrap() == 0 {
        assert!(t0.elapsed() < Duration::from_secs(5), "client never sent");
        injector
            .wait_readable(Some(Duration::from_millis(20)))
            .unwrap();
    }
    std::thread::sleep(Duration::from_millis(500));
    let start = Instant::now();
    let mut sent = 0;
    while start.elapsed() < Duration::from_secs(1) {
        sent += injector.send_batch(&xoff).unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    injector.send_batch(&xon).unwrap();
    let mut client = client;
    let c = json_lines(client.0.take().unwrap());
    let summary = find(&c, "summary");
    let intervals: Vec<u64> = c
        .iter()
        .filter(|v| v["kind"] == "interval")
        .map(|v| v["tx_bytes"].as_u64().unwrap())
        .collect();
    let (min, max) = (
        *intervals.iter().min().unwrap(),
        *intervals.iter().max().unwrap(),
    );
    assert!(max > 0, "{intervals:?}");
    assert!(
        min * 10 < max,
        "no quarter-second was nearly silent while paused: {intervals:?}"
    );
    let pause_ms = summary["pause_ms"].as_f64().unwrap();
    assert!(
        (800.0..1500.0).contains(&pause_ms),
        "pause time {pause_ms} ms"
    );
    let pfc_rx = summary["pfc_rx"].as_u64().unwrap();
    assert!(
        pfc_rx as f64 >= sent as f64 * 0.9,
        "{pfc_rx} of {sent} PFC frames seen"
    );
}

#[test]
fn an_mtu_the_interface_cannot_carry_is_refused_up_front() {
    if !common::root_or_skip("an_mtu_the_interface_cannot_carry_is_refused_up_front") {
        return;
    }
    let ns = setup();
    let out = Command::new(env!("CARGO_BIN_EXE_roceperf"))
        .args([
            "client",
            "--netns",
            &ns.names[0],
            "--iface",
            "c0",
            "--mac",
            C_MAC,
            "--ip",
            "10.1.0.1",
            "--dst-ip",
            "10.1.0.2",
            "--dst-mac",
            S_MAC,
            "--mtu",
            "4096",
            "--duration",
            "1",
        ])
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--mtu 4096") && err.contains("MTU 1500"),
        "{err}"
    );
}

/// RoCE v1 on one VLAN: EtherType 0x8915 behind an 802.1Q tag whose PCP is
/// the data priority, every byte delivered in order.
#[test]
fn roce_v1_on_a_vlan_delivers_and_carries_the_priority_in_the_pcp() {
    if !common::root_or_skip("roce_v1_on_a_vlan_delivers_and_carries_the_priority_in_the_pcp") {
        return;
    }
    let ns = setup();
    let v1 = ["--roce-version", "1", "--vlan", "100", "--json"];
    let mut sniffer = AfPacketPort::open_in_netns(&ns.names[1], "s0").unwrap();
    let mut server = Reaper(Some(roceperf(
        &[
            &[
                "server",
                "--netns",
                &ns.names[1],
                "--iface",
                "s0",
                "--mac",
                S_MAC,
                "--ip",
                "10.1.0.2",
                "--duration",
                "30",
            ][..],
            &v1,
        ]
        .concat(),
    )));
    std::thread::sleep(Duration::from_millis(400));
    let client = roceperf(
        &[
            &[
                "client",
                "--netns",
                &ns.names[0],
                "--iface",
                "c0",
                "--mac",
                C_MAC,
                "--ip",
                "10.1.0.1",
                "--dst-ip",
                "10.1.0.2",
                "--dst-mac",
                S_MAC,
                "--qps",
                "2",
                "--size",
                "65536",
                "--duration",
                "1",
                "--rate",
                "20M",
            ][..],
            &v1,
        ]
        .concat(),
    );
    let c = json_lines(client);
    std::thread::sleep(Duration::from_millis(300));
    let s = server.0.take().unwrap();
    // SAFETY: kill on our child's pid.
    unsafe { libc::kill(s.id() as i32, libc::SIGTERM) };
    let s = json_lines(s);
    let (cs, ss) = (find(&c, "summary"), find(&s, "summary"));
    assert!(cs["tx_bytes"].as_u64().unwrap() > 1_000_000, "{cs}");
    assert_eq!(ss["rx_bytes"], cs["tx_bytes"], "{ss}");
    assert_eq!(ss["psn_gaps"], 0, "{ss}");

    // What went over the wire: tag with PCP 3 (the default --priority),
    // VID 100, then EtherType 0x8915 and a GRH (IPv6-style version 6).
    let mut bufs = FrameBuf::batch(64);
    let (mut data, mut seen) = (Vec::new(), 0);
    for _ in 0..16 {
        let n = sniffer.recv_batch(&mut bufs).unwrap();
        seen += n;
        data.extend(
            bufs[..n]
                .iter()
                .map(|b| b.frame().to_vec())
                // The client's frames but its LLDP (DCBX, untagged).
                .filter(|f| {
                    f.len() > 18 && f[6..12] == [2, 0, 0, 0, 0x0c, 1] && f[12..14] != [0x88, 0xcc]
                }),
        );
    }
    assert!(!data.is_empty(), "no frame from the client among {seen}");
    for f in &data {
        assert_eq!(f[12..14], [0x81, 0x00], "tagged");
        assert_eq!(f[14] >> 5, 3, "PCP = priority 3");
        assert_eq!(u16::from_be_bytes([f[14], f[15]]) & 0x0fff, 100, "VID");
        assert_eq!(f[16..18], [0x89, 0x15], "RoCE v1 EtherType");
        assert_eq!(f[18] >> 4, 6, "GRH version");
    }
}

#[test]
fn roce_v1_without_a_vlan_is_refused_with_the_reason() {
    let out = Command::new(env!("CARGO_BIN_EXE_roceperf"))
        .args([
            "server",
            "--iface",
            "lo",
            "--mac",
            S_MAC,
            "--ip",
            "10.1.0.2",
            "--roce-version",
            "1",
        ])
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--vlan"), "{err}");
}

/// The perftest family against one server: `read_lat` times each READ (one
/// in flight), then `read_bw` streams READs whose data the server sends.
#[test]
fn read_lat_and_read_bw_against_one_server() {
    if !common::root_or_skip("read_lat_and_read_bw_against_one_server") {
        return;
    }
    let ns = setup();
    let mut server = Reaper(Some(roceperf(&on_server(&ns, "server"))));
    std::thread::sleep(Duration::from_millis(400));
    let client = |test: &str, extra: &[&str]| {
        json_lines(roceperf(&on_client(
            &ns,
            "client",
            &[&["--test", test][..], extra].concat(),
        )))
    };
    // QPs 0 and 1 for the two tests: the server keeps what it learned.
    let lat = client(
        "read_lat",
        &["--iters", "200", "--size", "64", "--duration", "20"],
    );
    let l = &find(&lat, "latency")["latency"];
    assert_eq!(l["iterations"], 200, "{l}");
    assert_eq!(l["error"], Value::Null, "{l}");
    let (min, med, p99, max) = (
        l["t_min_us"].as_f64().unwrap(),
        l["t_typical_us"].as_f64().unwrap(),
        l["p99_us"].as_f64().unwrap(),
        l["t_max_us"].as_f64().unwrap(),
    );
    assert!(0.0 < min && min <= med && med <= p99 && p99 <= max, "{l}");
    assert_eq!(find(&lat, "summary")["rx_bytes"], 200 * 64);

    let bw = client(
        "ib_read_bw",
        &[
            "--first-qp",
            "1",
            "--qps",
            "2",
            "--duration",
            "1",
            "--rate",
            "20M",
        ],
    );
    let cs = find(&bw, "summary");
    let b = &find(&bw, "bandwidth")["bandwidth"];
    assert_eq!(b["bytes"], 65536, "perftest's default size");
    assert_eq!(b["iterations"], cs["tx_messages"], "{b}");
    // Completed READs, plus the part of those in flight when time ran out
    // (at most 16 outstanding a QP).
    let (rx, done) = (
        cs["rx_bytes"].as_u64().unwrap(),
        cs["tx_messages"].as_u64().unwrap(),
    );
    assert!(
        (done * 65536..(done + 2 * 16) * 65536).contains(&rx),
        "{rx} bytes for {done} READs: {cs}"
    );
    assert!(b["bw_average_gbps"].as_f64().unwrap() > 0.0, "{b}");
    assert_eq!(cs["tx_bytes"], 0, "the client sent only READ requests");

    let s = server.0.take().unwrap();
    // SAFETY: kill on our child's pid.
    unsafe { libc::kill(s.id() as i32, libc::SIGTERM) };
    let s = json_lines(s);
    let ss = find(&s, "summary");
    assert_eq!(find(&s, "port")["qps_learned"], 3);
    // Every READ response byte came from the server; it may have sent a
    // few more the client stopped listening for.
    let sent = ss["tx_bytes"].as_u64().unwrap();
    assert!(
        (200 * 64 + rx..=200 * 64 + rx + 2 * 16 * 65536).contains(&sent),
        "server sent {sent}, client got {rx} + {}: {ss}",
        200 * 64
    );
}

/// NVMe-oF between two agents as processes: every command of a fixed count
/// completes, reads and writes in the asked mix, the target's QPs end clean.
#[test]
fn nvmf_host_against_a_target_completes_every_io() {
    if !common::root_or_skip("nvmf_host_against_a_target_completes_every_io") {
        return;
    }
    let ns = setup();
    let mut target = Reaper(Some(roceperf(&on_server(&ns, "nvmf-target"))));
    std::thread::sleep(Duration::from_millis(400));
    let host = json_lines(roceperf(&on_client(
        &ns,
        "nvmf-host",
        &[
            "--qps",
            "2",
            "--iodepth",
            "16",
            "--rwmixread",
            "70",
            "--number-ios",
            "500",
            "--duration",
            "20",
        ],
    )));
    let n = &find(&host, "nvmf")["nvmf"];
    let (reads, writes) = (
        n["read"]["total_ios"].as_u64().unwrap(),
        n["write"]["total_ios"].as_u64().unwrap(),
    );
    assert_eq!(reads + writes, 1000, "2 queues x 500: {n}");
    assert!((600..=800).contains(&reads), "70 % reads: {reads}");
    assert_eq!(n["error"], Value::Null);
    assert_eq!(n["read"]["io_bytes"], reads * 4096);
    let p50 = n["read"]["clat_ns"]["percentile"]["50.000000"]
        .as_u64()
        .unwrap();
    assert!(p50 > 0 && p50 <= n["read"]["clat_ns"]["max"].as_u64().unwrap());

    let t = target.0.take().unwrap();
    // SAFETY: kill on our child's pid.
    unsafe { libc::kill(t.id() as i32, libc::SIGTERM) };
    let t = json_lines(t);
    let ts = find(&t, "summary");
    assert_eq!(find(&t, "port")["qps_learned"], 2);
    assert_eq!(ts["counters"]["req_transport_retries_exceeded"], 0, "{ts}");
    // The target sent the read data and took the write data.
    assert!(ts["tx_bytes"].as_u64().unwrap() >= reads * 4096, "{ts}");
    assert!(ts["rx_bytes"].as_u64().unwrap() >= writes * 4096, "{ts}");
}
