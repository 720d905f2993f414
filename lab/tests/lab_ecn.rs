//! ECN and DCQCN end to end through the real `roceswitch` daemon (needs
//! root; skipped with a message otherwise).
//!
//! ```text
//!  h1 ──┐                2:1 incast on the lossless priority 3; the switch
//!       ├── sw ── h3     shapes every port to 40 Mb/s and marks CE on the
//!  h2 ──┘                receiver's port above a low Kmin (fabric service)
//! ```
//!
//! The senders' line rate (roceperf `--rate`) is the port's, as a NIC's is
//! its link's; DCQCN is scaled to it (`DcqcnConfig::scaled`). (With agents
//! at 10 × the port, an earlier version of this test, the first burst filled
//! the buffer to XOFF far above Kmax, and the CNPs of a queue 200 ms deep
//! pinned one sender at its floor while PFC paused the other.) Checks: the
//! congested queue
//! marks CE (switch counter), the marks reach the receiver, its CNPs reach
//! both senders, each sender's DCQCN rate (roceperf's `rate_gbps`, the
//! current rate summed over its QPs, in its interval reports) falls well
//! below the line rate it started at, and from the middle of the run to
//! near its end the senders have converged on equal shares of the port:
//! Jain's index of what they sent is at least 0.8 and together they keep
//! the port at least 0.3 busy. (The DCQCN rate itself is no measure of
//! convergence: a sender that a loaded machine starves of turns sends
//! little, gets no CNP and recovers to its line rate, as DCQCN should.)
//!
//! The switch binary must already be in `target/<profile>/` (as for
//! `scenario_live`): `cargo build --workspace` provides it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use lab::fabric::{EcnSpec, QosSpec, ROUTER_MAC};
use lab::labctl::{self, state::LabState, state::StateStore};
use lab::scenario::live::{self, lab_headroom_bytes};
use lab::scenario::switchctl::{PrioCounters, SwitchCtl};
use lab::scenario::{EcnSetting, LINK_MTU_BYTES, LOSSLESS_PRIORITY};
use lab::topo::{HostSpec, LinkSpec, SwitchSpec, Topology};
use serde_json::Value;

/// Switch port speed: the bottleneck.
const SWITCH_RATE: &str = "40M";
/// The same in bit/s.
const SWITCH_BPS: f64 = 40e6;
/// Least Jain index of the senders' rates from mid-run: 0.8 is a 0.28/0.72
/// split of the port (measured 0.87-1.00 over 10 runs of debug agents at
/// load 7-10; one sender starved by the other's CNPs gives ~0.5).
const MIN_LATE_JAIN: f64 = 0.8;
/// Least share of the port the two keep busy from mid-run. Kmin and Kmax
/// this low (1 and 8 ms of the port) make DCQCN cut more than it must at
/// times: measured 0.40-0.94 over 10 runs at load 7-10; senders stuck at
/// their floor would give ~0.01.
const MIN_LATE_UTILISATION: f64 = 0.3;
/// The senders' line rate (DCQCN starts here).
const AGENT_RATE: &str = "40M";
const AGENT_BPS: f64 = 40e6;
const DSCP: u8 = 26;
const TRAFFIC_S: f64 = 6.0;
/// Small packets: the receiver answers CE with at most one CNP per packet
/// and interval, so a cut is seen only if CNPs come often (per-sender packet
/// spacing ~0.4 ms at 40 Mb/s).
const ROCE_MTU_BYTES: usize = 1024;
/// Seconds between the senders' interval reports (each has the current
/// DCQCN rate).
const REPORT_S: f64 = 0.02;
const ECN: EcnSetting = EcnSetting {
    kmin_bytes: 4_096,
    kmax_bytes: 40_000,
    pmax: 0.5,
};

struct TempStore(PathBuf);
impl Drop for TempStore {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Tears the lab down when dropped (also when an assertion fails).
struct Guard<'a> {
    st: LabState,
    store: &'a StateStore,
}
impl Drop for Guard<'_> {
    fn drop(&mut self) {
        if let Err(e) = labctl::teardown(&self.st, self.store) {
            eprintln!("teardown of {}: {e:#}", self.st.lab);
        }
    }
}

fn mac(i: usize) -> [u8; 6] {
    [2, 0, 0, 0, 1, i as u8 + 1]
}

fn mac_text(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn host(i: usize) -> HostSpec {
    HostSpec {
        name: format!("h{}", i + 1),
        mac: mac_text(mac(i)),
        ip: std::net::Ipv4Addr::new(10, 0, 1, i as u8 + 1),
        vlan: None,
        command: None,
        extra_commands: Vec::new(),
        kernel_ip: None,
    }
}

fn agent_argv(bin: &Path, role: &str, h: &HostSpec, extra: &[String]) -> Vec<String> {
    let mut v: Vec<String> = [
        bin.display().to_string(),
        role.into(),
        "--mtu".into(),
        ROCE_MTU_BYTES.to_string(),
        "--iface".into(),
        "eth0".into(),
        "--mac".into(),
        h.mac.clone(),
        "--ip".into(),
        h.ip.to_string(),
        "--rate".into(),
        AGENT_RATE.into(),
        "--dscp".into(),
        DSCP.to_string(),
        "--priority".into(),
        (DSCP >> 3).to_string(),
        "--json".into(),
    ]
    .into();
    v.extend(extra.iter().cloned());
    v
}

/// The JSON lines of an agent log.
fn lines(log: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(log).unwrap_or_else(|e| panic!("reading {}: {e}", log.display()));
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

/// The `summary` line of an agent log.
fn summary(log: &Path) -> Value {
    lines(log)
        .into_iter()
        .find(|v| v["kind"] == "summary")
        .unwrap_or_else(|| panic!("no summary in {}", log.display()))
}

/// What an agent sent (bit/s) over its interval reports from the middle of
/// the run to 0.9 of it (the last reports may find the other sender done).
fn late_rate_bps(log: &Path) -> f64 {
    let reports: Vec<Value> = lines(log)
        .into_iter()
        .filter(|v| {
            v["kind"] == "interval"
                && v["start_s"].as_f64() >= Some(TRAFFIC_S / 2.0)
                && v["end_s"].as_f64() <= Some(0.9 * TRAFFIC_S)
        })
        .collect();
    assert!(
        reports.len() >= 10,
        "only {} interval reports in the second half of {}",
        reports.len(),
        log.display()
    );
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("no {k} in {v}"));
    let bits: f64 = reports.iter().map(|v| f(v, "tx_bytes") * 8.0).sum();
    let secs: f64 = reports
        .iter()
        .map(|v| f(v, "end_s") - f(v, "start_s"))
        .sum();
    bits / secs
}

/// The lowest DCQCN rate (bit/s) an agent reported, over its interval
/// reports and its summary.
fn lowest_rate_bps(log: &Path) -> Option<f64> {
    lines(log)
        .iter()
        .filter_map(|v| v["rate_gbps"].as_f64())
        .map(|g| g * 1e9)
        .reduce(f64::min)
}

fn wait_exit(c: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(st) = c.try_wait().expect("waiting for an agent") {
            return st;
        }
        assert!(Instant::now() < deadline, "agent {} still running", c.id());
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn sum(before: &[PrioCounters], after: &[PrioCounters], f: fn(&PrioCounters) -> u64) -> u64 {
    live::delta(before, after).iter().map(f).sum()
}

#[test]
fn low_kmin_marks_ce_the_receiver_sends_cnps_and_dcqcn_slows_the_senders() {
    if !common::root_or_skip("lab_ecn") {
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
    let roceperf = PathBuf::from(env!("CARGO_BIN_EXE_roceperf"));
    let stop = AtomicBool::new(false);
    let lab = common::unique("e");
    let dir = TempStore(std::env::temp_dir().join(format!("rocelab-test-{lab}")));
    let store = StateStore::new(&dir.0);
    let sock = store.log_dir(&lab).join("sw.sock");
    let hosts: Vec<HostSpec> = (0..3).map(host).collect();
    let mut sw_cmd = vec![roceswitch.display().to_string()];
    for i in 0..3 {
        sw_cmd.extend(["--port".into(), format!("{i}=p{i}")]);
    }
    sw_cmd.extend([
        "--speed".into(),
        SWITCH_RATE.into(),
        "--grpc".into(),
        format!("unix:{}", sock.display()),
        "--log-level".into(),
        "warn".into(),
    ]);
    let topo = Topology {
        name: lab.clone(),
        switches: vec![SwitchSpec {
            name: "sw".into(),
            command: Some(sw_cmd),
            roceswitch: false,
            routes: Vec::new(),
        }],
        hosts: hosts.clone(),
        links: (0..3)
            .map(|i| LinkSpec {
                a: format!("h{}:eth0", i + 1),
                b: format!("sw:p{i}"),
                speed: SWITCH_RATE.into(),
                mtu: Some(LINK_MTU_BYTES),
            })
            .collect(),
        // Headroom for what the senders can put on the wire before a pause
        // takes effect: their line rate, not the port's. ECN on every
        // port's lossless queue (only the receiver's, port 2, congests).
        qos: QosSpec {
            lossless_priorities: vec![LOSSLESS_PRIORITY],
            headroom_bytes: Some(lab_headroom_bytes(AGENT_BPS as u64)),
            ecn: Some(EcnSpec {
                kmin_bytes: ECN.kmin_bytes,
                kmax_bytes: ECN.kmax_bytes,
                pmax: ECN.pmax,
            }),
            ..QosSpec::default()
        },
    };
    let setup = lab::fabric::setups(&topo).expect("switch setup").remove(0);
    let st = labctl::up(&topo, None, &store, &stop).expect("lab up");
    let mut g = Guard { st, store: &store };

    let mut sw = SwitchCtl::connect(
        &format!("unix:{}", sock.display()),
        Duration::from_secs(15),
        &stop,
    )
    .expect("switch gRPC");
    sw.apply(&setup).unwrap();
    let before = sw.counters().unwrap();

    let mut server = labctl::spawn_recorded(
        &mut g.st,
        &store,
        "h3",
        &topo.netns("h3"),
        agent_argv(&roceperf, "server", &hosts[2], &[]),
        "h3-server",
    )
    .expect("server");
    std::thread::sleep(Duration::from_millis(300));
    let mut clients = Vec::new();
    for (i, h) in hosts[..2].iter().enumerate() {
        let extra: Vec<String> = [
            "--dst-ip".to_string(),
            hosts[2].ip.to_string(),
            "--dst-mac".into(),
            mac_text(ROUTER_MAC),
            "--duration".into(),
            TRAFFIC_S.to_string(),
            "--qps".into(),
            "1".into(),
            "--first-qp".into(),
            i.to_string(),
            "--ecn".into(),
            "--interval".into(),
            REPORT_S.to_string(),
        ]
        .into();
        clients.push(
            labctl::spawn_recorded(
                &mut g.st,
                &store,
                &h.name,
                &topo.netns(&h.name),
                agent_argv(&roceperf, "client", h, &extra),
                &format!("{}-client", h.name),
            )
            .expect("client"),
        );
    }
    for c in &mut clients {
        let st = wait_exit(c, Duration::from_secs_f64(TRAFFIC_S + 15.0));
        assert!(st.success(), "a client exited with {st}");
    }
    sw.wait_drained(Duration::from_secs(10), &stop).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    labctl::sys::signal(server.id(), libc::SIGTERM).expect("SIGTERM to the server");
    wait_exit(&mut server, Duration::from_secs(5));
    let after = sw.counters().unwrap();
    drop(sw);

    let logs = store.log_dir(&lab);
    let rx = summary(&logs.join("h3-server.log"));
    let tx: Vec<Value> = ["h1", "h2"]
        .iter()
        .map(|h| summary(&logs.join(format!("{h}-client.log"))))
        .collect();
    let lowest: Vec<Option<f64>> = ["h1", "h2"]
        .iter()
        .map(|h| lowest_rate_bps(&logs.join(format!("{h}-client.log"))))
        .collect();
    let late: Vec<f64> = ["h1", "h2"]
        .iter()
        .map(|h| late_rate_bps(&logs.join(format!("{h}-client.log"))))
        .collect();
    drop(g);
    let left = common::netns_with_prefix(&format!("rl-{lab}"));
    assert!(left.is_empty(), "namespaces left behind: {left:?}");

    let marked = sum(&before, &after, |c| c.ecn_marked);
    eprintln!(
        "switch CE marks {marked}\nreceiver {rx}\nsenders {tx:?}\nlowest DCQCN rates {lowest:?}\n\
         sent from mid-run, b/s {late:?}"
    );
    assert!(rx["rx_bytes"].as_u64().unwrap_or(0) > 0, "nothing arrived");
    assert!(marked > 0, "the switch marked nothing CE");
    let ce_rx = rx["ce_rx"].as_u64().expect("ce_rx");
    assert!(ce_rx > 0, "no CE mark reached the receiver");
    assert!(
        ce_rx <= marked,
        "the receiver saw {ce_rx} CE marks, more than the {marked} the switch made"
    );
    assert!(
        rx["cnp_tx"].as_u64().unwrap_or(0) > 0,
        "the receiver sent no CNP"
    );
    for (i, s) in tx.iter().enumerate() {
        let cnp_rx = s["cnp_rx"].as_u64().expect("cnp_rx");
        assert!(cnp_rx > 0, "no CNP reached sender h{}", i + 1);
        let rate_bps = lowest[i].expect("rate_gbps in the reports");
        assert!(
            rate_bps > 0.0 && rate_bps < 0.75 * AGENT_BPS,
            "sender h{}'s DCQCN rate never fell below 75% of its line rate \
             {AGENT_BPS} b/s (lowest {rate_bps} b/s)",
            i + 1
        );
    }
    let jain = lab::scenario::jain_index(&late).unwrap_or(0.0);
    assert!(
        jain >= MIN_LATE_JAIN,
        "the senders did not converge on equal shares: {late:?} b/s from mid-run, Jain {jain:.3}"
    );
    let together: f64 = late.iter().sum();
    assert!(
        together >= MIN_LATE_UTILISATION * SWITCH_BPS,
        "the senders sent {together:.0} b/s together from mid-run, under \
         {MIN_LATE_UTILISATION} of the port's {SWITCH_BPS} b/s: DCQCN over-cut"
    );
    drop(dir);
}
