//! `rocelab run --sim` as a binary: the default scenario in the simulator
//! prints its verdict table, writes its files and reports failure through
//! the exit status. Needs nothing (no root, no switch binary).

use std::path::PathBuf;
use std::process::{Command, Output};

struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn rocelab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocelab"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("running rocelab")
}

fn out_dir(tag: &str) -> TempDir {
    TempDir(std::env::temp_dir().join(format!("rocelab-sim-{tag}-{}", std::process::id())))
}

#[test]
fn the_default_scenario_passes_and_writes_every_file() {
    let dir = out_dir("default");
    let o = rocelab(&["run", "--sim", "--out", dir.0.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("simulator: 18 of 18 checks passed")
            && stdout.contains("marked fraction on the RED curve"),
        "{stdout}"
    );
    // The incast twice, side by side: PFC alone, then DCQCN.
    assert!(
        stdout.contains("DCQCN off") && stdout.contains("DCQCN on"),
        "{stdout}"
    );
    for line in [
        "incast: PFC pauses",
        "incast: CE marks",
        "incast: CNPs",
        "dcqcn: PFC pauses",
        "dcqcn: fairness of the senders",
        "dcqcn: queue between Kmin and Kmax",
        "ecmp: spread",
    ] {
        assert!(stdout.contains(line), "no {line:?} line in\n{stdout}");
    }
    for f in [
        "verdicts.csv",
        "incast_flows.csv",
        "ecmp_uplinks.csv",
        "summary.svg",
    ] {
        assert!(dir.0.join(f).is_file(), "{f} missing");
    }
    assert!(dir.0.join("sim_incast_timeseries.csv").is_file());
    assert!(dir.0.join("sim_incast_dcqcn_timeseries.svg").is_file());
}

#[test]
fn a_lossy_run_expects_drops_and_passes() {
    let dir = out_dir("lossy");
    let o = rocelab(&[
        "run",
        "--sim",
        "--dscp",
        "0",
        "--no-ecn",
        "--out",
        dir.0.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    assert!(stdout.contains("6 of 6 checks passed"), "{stdout}");
    assert!(stdout.contains("go-back-N collapse"), "{stdout}");
}

/// `rocelab run lossy --sim`: both runs, their figures side by side, and
/// every verdict passing (lossless clean, lossy NAKs, go-back-N, collapse).
#[test]
fn the_lossy_scenario_shows_go_back_n_against_lossless() {
    let dir = out_dir("lossy-scenario");
    let o = rocelab(&["run", "lossy", "--sim", "--out", dir.0.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for line in [
        "lossless (prio 3)",
        "packets retransmitted",
        "NAKs received",
        "lossy: goodput collapse",
        "simulator: 9 of 9 checks passed",
    ] {
        assert!(stdout.contains(line), "no {line:?} in\n{stdout}");
    }
    assert!(dir.0.join("verdicts.csv").is_file());
}

#[test]
fn a_failing_check_makes_the_exit_status_nonzero() {
    // One QP cannot be spread over two uplinks: the ECMP line must FAIL.
    let dir = out_dir("fail");
    let o = rocelab(&[
        "run",
        "--sim",
        "--no-dcqcn-run",
        "--ecmp-qps",
        "1",
        "--json",
        "--out",
        dir.0.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    // With --json the table goes to stderr and stdout is one document.
    assert!(
        stderr.contains("FAIL") && stderr.contains("-- FAILED"),
        "{stderr}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&stdout).expect("stdout is one JSON document");
    assert_eq!(doc["pass"], false);
    let spread = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["check"].as_str().unwrap().starts_with("ecmp: spread"))
        .expect("an ECMP spread verdict");
    assert_eq!(spread["pass"], false, "{spread}");
    assert_eq!(doc["ecmp"]["qps"], 1);
    assert!(
        doc["incast"]["switch_pfc_tx"].as_u64().unwrap() > 0,
        "{doc:#}"
    );
    let csv = std::fs::read_to_string(dir.0.join("verdicts.csv")).unwrap();
    assert!(
        csv.lines()
            .any(|l| l.starts_with("ecmp: spread") && l.ends_with(",FAIL")),
        "{csv}"
    );
}
