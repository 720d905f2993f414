//! Every topology under `lab/examples/` works as shipped: `rocelab up FILE`
//! with the real roceswitch and host agents, RoCE traffic arrives where the
//! file's header says to look, `rocelab down` removes every namespace.
//! Needs root and `target/<profile>/roceswitch` (`cargo build -p control
//! --bin roceswitch`); skipped with a message otherwise.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::rocelab;
use std::time::{Duration, Instant};

/// Where traffic must show up: (node, interface, at least this many bytes received).
type Expect = &'static [(&'static str, &'static str, u64)];

/// Each example and what it must carry. A new example needs a row here.
const EXAMPLES: &[(&str, &str, Expect)] = &[
    ("pair.toml", "pair", &[("h2", "eth0", 1_000_000)]),
    ("switched.toml", "sw", &[("h2", "eth0", 1_000_000)]),
    // Bridged, not routed: h2 gets h1's RoCE v1 frames through the switch.
    (
        "roce-v1.toml",
        "v1",
        &[("h2", "eth0", 1_000_000), ("sw1", "p0", 1_000_000)],
    ),
    // Both senders reach h2 through its 100 Mb/s port.
    (
        "lossy-lossless.toml",
        "ll",
        &[
            ("h2", "eth0", 1_000_000),
            ("sw1", "p0", 1_000_000),
            ("sw1", "p1", 1_000_000),
        ],
    ),
    // Every host gets its peer's WRITEs through two ring links, deadlock
    // after deadlock broken by the watchdog.
    (
        "deadlock-ring.toml",
        "ring",
        &[
            ("h0", "eth0", 200_000),
            ("h1", "eth0", 200_000),
            ("h2", "eth0", 200_000),
            ("s1", "p2", 200_000),
        ],
    ),
    // RoCE and kernel TCP share h3's port.
    ("tcp-next-to-roce.toml", "tcp", &[("h3", "eth0", 2_000_000)]),
    // Both clients reach h2, one of them after DCBX moved it to priority 3.
    ("dcbx.toml", "dcbx", &[("h2", "eth0", 1_000_000)]),
    (
        "leaf-spine.toml",
        "ls",
        // Both spines carry a share of ha's 8 QPs: ECMP spreads them.
        &[
            ("hb", "eth0", 1_000_000),
            ("spine1", "p0", 100_000),
            ("spine2", "p0", 100_000),
        ],
    ),
];

/// Held by every test that brings a lab up: the tests of one example use
/// its lab name (its namespaces), and cargo runs tests in parallel.
static ONE_LAB_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_lab_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_LAB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// How long traffic may take to reach the expected counts.
const TRAFFIC_LIMIT: Duration = Duration::from_secs(30);

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

fn root_or_skip(test: &str) -> bool {
    if !common::root_or_skip(test) {
        return false;
    }
    let roceswitch = Path::new(env!("CARGO_BIN_EXE_rocelab")).with_file_name("roceswitch");
    if !roceswitch.is_file() {
        let why = format!(
            "{} missing (cargo build -p control --bin roceswitch)",
            roceswitch.display()
        );
        if std::env::var_os(dataplane::port::netns::REQUIRE_NAMESPACES_ENV).is_some() {
            panic!("{test} cannot run: {why}");
        }
        eprintln!("SKIPPED {test}: {why}");
        return false;
    }
    true
}

fn rx_bytes(lab: &str, node: &str, iface: &str) -> u64 {
    let ns = format!("rl-{lab}-{node}");
    let out = Command::new("ip")
        .args(["netns", "exec", &ns, "cat"])
        .arg(format!("/sys/class/net/{iface}/statistics/rx_bytes"))
        .output()
        .expect("reading interface counters");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

fn namespaces_of(lab: &str) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&format!("rl-{lab}-")))
        .map(str::to_string)
        .collect()
}

/// Takes the lab down however the test ends.
struct Down<'a> {
    state: &'a Path,
    lab: &'static str,
}

impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = rocelab(self.state, &["down", self.lab]);
    }
}

#[test]
fn every_example_has_an_expectation() {
    let mut files: Vec<String> = std::fs::read_dir(examples_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    files.sort();
    let mut known: Vec<String> = EXAMPLES.iter().map(|(f, ..)| f.to_string()).collect();
    known.sort();
    assert_eq!(files, known, "lab/examples and this test's table differ");
    for (file, lab, _) in EXAMPLES {
        let text = std::fs::read_to_string(examples_dir().join(file)).unwrap();
        let topo = lab::topo::Topology::from_toml(&text).unwrap();
        assert_eq!(topo.name, *lab, "{file}");
        assert!(text.starts_with('#'), "{file}: no header comment");
    }
}

#[test]
fn each_example_comes_up_carries_traffic_and_goes_down() {
    if !root_or_skip("each_example_comes_up_carries_traffic_and_goes_down") {
        return;
    }
    let _one = one_lab_at_a_time();
    let state_dir = std::env::temp_dir().join(format!("rl-examples-{}", std::process::id()));
    let state = state_dir.as_path();
    for (file, lab, expect) in EXAMPLES {
        let path = examples_dir().join(file);
        let down = Down { state, lab };
        let up = rocelab(state, &["up", path.to_str().unwrap()]);
        assert!(
            up.status.success(),
            "rocelab up {file}: {}",
            String::from_utf8_lossy(&up.stderr)
        );
        let deadline = Instant::now() + TRAFFIC_LIMIT;
        loop {
            let seen: Vec<(&str, &str, u64, u64)> = expect
                .iter()
                .map(|&(node, iface, min)| (node, iface, rx_bytes(lab, node, iface), min))
                .collect();
            if seen.iter().all(|&(_, _, got, min)| got >= min) {
                break;
            }
            if Instant::now() > deadline {
                let logs = std::fs::read_dir(state.join(lab))
                    .map(|d| {
                        d.filter_map(|e| {
                            let p = e.ok()?.path();
                            let text = std::fs::read_to_string(&p).ok()?;
                            let tail: Vec<&str> = text.lines().rev().take(5).collect();
                            Some(format!("{}: {}", p.display(), tail.join(" | ")))
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                    })
                    .unwrap_or_default();
                panic!("{file}: traffic short of expectations {seen:?}\nlogs:\n{logs}");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        drop(down);
        assert_eq!(
            namespaces_of(lab),
            Vec::<String>::new(),
            "{file}: left behind"
        );
    }
}

/// Runs `rocectl` (built next to `rocelab`) against a lab switch; its JSON.
fn rocectl_json(state: &Path, lab: &str, switch: &str, args: &[&str]) -> serde_json::Value {
    let rocectl = Path::new(env!("CARGO_BIN_EXE_rocelab")).with_file_name("rocectl");
    let sock = state.join(lab).join(format!("{switch}.sock"));
    let out = Command::new(rocectl)
        .arg("--addr")
        .arg(format!("unix:{}", sock.display()))
        .args(args)
        .output()
        .expect("running rocectl");
    assert!(
        out.status.success(),
        "rocectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("rocectl --json output")
}

/// `dcbx.toml`: the willing host adopts the switch's RoCE priority (the
/// switch sees it advertise priority 3, and its traffic arrives on 3), the
/// host that is not willing stays on priority 5 and is reported as a
/// mismatch.
#[test]
fn dcbx_example_corrects_the_willing_host_and_reports_the_other() {
    if !root_or_skip("dcbx_example_corrects_the_willing_host_and_reports_the_other") {
        return;
    }
    let _one = one_lab_at_a_time();
    let state_dir = std::env::temp_dir().join(format!("rl-dcbx-{}", std::process::id()));
    let state = state_dir.as_path();
    let lab = "dcbx";
    let _down = Down { state, lab };
    let up = rocelab(
        state,
        &["up", examples_dir().join("dcbx.toml").to_str().unwrap()],
    );
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let port = |v: &serde_json::Value, n: u64| {
        v.as_array()
            .and_then(|a| a.iter().find(|p| p["port"] == n).cloned())
            .unwrap_or_default()
    };
    let deadline = Instant::now() + TRAFFIC_LIMIT;
    let (p0, p2, counters) = loop {
        let d = rocectl_json(state, lab, "sw1", &["dcbx", "--json"]);
        let c = rocectl_json(state, lab, "sw1", &["counters", "ethtool", "--json"]);
        let (p0, p2) = (port(&d, 0), port(&d, 2));
        let settled = p0["neighbor"]["roce_priority"] == 3
            && p2["neighbor"]["roce_priority"] == 5
            && c["p0"]["rx_prio3_packets"].as_u64().unwrap_or(0) > 100
            && c["p2"]["rx_prio5_packets"].as_u64().unwrap_or(0) > 100;
        if settled {
            break (p0, p2, c);
        }
        assert!(
            Instant::now() < deadline,
            "DCBX did not settle: port 0 {p0}, port 2 {p2}"
        );
        std::thread::sleep(Duration::from_millis(300));
    };
    // h1 (willing) took the switch's parameters and advertises them.
    assert_eq!(p0["neighbor"]["willing"], true, "{p0}");
    assert_eq!(p0["neighbor"]["pfc_enable"], "3", "{p0}");
    assert_eq!(p0["mismatch"], "none", "{p0}");
    // h3 (not willing) kept its own: PFC on 5 and RoCE on 5.
    assert_eq!(p2["neighbor"]["willing"], false, "{p2}");
    assert_eq!(p2["neighbor"]["pfc_enable"], "5", "{p2}");
    let m = p2["mismatch"].as_str().unwrap();
    assert!(m.contains("pfc") && m.contains("app"), "{p2}");
    // h3 never sent on the lossless priority.
    assert_eq!(counters["p2"]["rx_prio3_packets"], 0, "{counters}");
}

/// `tcp-next-to-roce.toml`: RoCE on the lossless priority and kernel TCP on
/// a lossy one share h3's 100 Mb/s port by ETS (each a fair part of what
/// leaves it); the switch pauses the RoCE sender and never drops its
/// frames, while TCP's excess is dropped and retransmitted.
#[test]
fn tcp_next_to_roce_shares_the_bottleneck_and_roce_loses_nothing() {
    if !root_or_skip("tcp_next_to_roce_shares_the_bottleneck_and_roce_loses_nothing") {
        return;
    }
    let _one = one_lab_at_a_time();
    let state_dir = std::env::temp_dir().join(format!("rl-tcp-{}", std::process::id()));
    let state = state_dir.as_path();
    let lab = "tcp";
    let _down = Down { state, lab };
    let up = rocelab(
        state,
        &[
            "up",
            examples_dir()
                .join("tcp-next-to-roce.toml")
                .to_str()
                .unwrap(),
        ],
    );
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let counters = || rocectl_json(state, lab, "sw1", &["counters", "ethtool", "--json"]);
    let get = |c: &serde_json::Value, port: &str, name: &str| c[port][name].as_u64().unwrap_or(0);
    // Both classes must be flowing before the window starts.
    let deadline = Instant::now() + TRAFFIC_LIMIT;
    loop {
        let c = counters();
        if get(&c, "p2", "tx_prio0_bytes") > 1_000_000
            && get(&c, "p2", "tx_prio3_bytes") > 1_000_000
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "TCP and RoCE did not both reach h3: {c}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let a = counters();
    std::thread::sleep(Duration::from_secs(3));
    let b = counters();
    let d = |port: &str, name: &str| get(&b, port, name) - get(&a, port, name);
    let (tcp, roce) = (d("p2", "tx_prio0_bytes"), d("p2", "tx_prio3_bytes"));
    let share = tcp as f64 / (tcp + roce).max(1) as f64;
    // ETS: priorities 0 and 3 are two traffic classes of equal weight.
    assert!(
        (0.3..=0.7).contains(&share),
        "TCP {tcp} B, RoCE {roce} B: TCP share {share:.2}"
    );
    // 3 s of a 100 Mb/s port, less the pauses' slack.
    assert!(
        tcp + roce > 25_000_000,
        "only {} B left p2 in 3 s",
        tcp + roce
    );
    // RoCE: paused, never dropped.
    assert!(d("p0", "tx_prio3_pause") > 0, "h1 was never paused: {b}");
    assert_eq!(
        get(&b, "p0", "rx_discards_phy"),
        0,
        "RoCE frames dropped: {b}"
    );
}
