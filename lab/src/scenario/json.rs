//! `rocelab run --json`: one JSON document per run on stdout, for scripts
//! and CI dashboards, with the exact numbers the human tables round.
//! Field names carry their units (`_ms`, `_gbps`, `_bytes`, `_bps`); a time
//! that never came is `null`. Per-switch arrays are indexed by ring
//! position (`s0`, `s1`, ...).

use std::path::PathBuf;
use std::time::Duration;

use dataplane::time::Instant;
use serde_json::{Value, json};

use super::fault::FaultOutcome;
use super::lossy::LossyOutcome;
use super::ring::{DeadlockOutcome, RingConfig};
use super::ring_sim::RingSimOutcome;
use super::{IncastOutcome, Outcome, Verdict};

fn duration_ms(d: Option<Duration>) -> Value {
    d.map_or(Value::Null, |d| json!(d.as_secs_f64() * 1e3))
}

fn instant_ms(t: Option<Instant>) -> Value {
    t.map_or(Value::Null, |t| json!(t.as_nanos() as f64 / 1e6))
}

fn paths(files: &[PathBuf]) -> Vec<String> {
    files.iter().map(|p| p.display().to_string()).collect()
}

/// The default scenario: incast (fixed-rate, then DCQCN when it ran),
/// ECMP, and every verdict.
pub fn run_report(o: &Outcome, verdicts: &[Verdict], files: &[PathBuf]) -> Value {
    json!({
        "scenario": "default",
        "mode": o.mode,
        "pass": verdicts.iter().all(|v| v.pass),
        "speed_bps": o.config.speed_bps,
        "incast": o.incast,
        "incast_dcqcn": o.incast_dcqcn,
        "ecmp": o.ecmp,
        "verdicts": verdicts,
        "files": paths(files),
    })
}

/// The incast on a lossless and on a lossy priority.
pub fn lossy_report(o: &LossyOutcome, verdicts: &[Verdict], files: &[PathBuf]) -> Value {
    json!({
        "scenario": "lossy",
        "mode": o.mode,
        "pass": verdicts.iter().all(|v| v.pass),
        "speed_bps": o.config.speed_bps,
        "lossless": o.lossless,
        "lossy": o.lossy,
        "verdicts": verdicts,
        "files": paths(files),
    })
}

/// `rocelab run dcbx`: the run, the willing sender first.
pub fn dcbx_report(
    mode: &str,
    x: &IncastOutcome,
    verdicts: &[Verdict],
    files: &[PathBuf],
) -> Value {
    json!({
        "scenario": "dcbx",
        "mode": mode,
        "pass": verdicts.iter().all(|v| v.pass),
        "incast": x,
        "verdicts": verdicts,
        "files": paths(files),
    })
}

/// `rocelab run fault`: both runs, the faulted QP first in each.
pub fn fault_report(o: &FaultOutcome, verdicts: &[Verdict], files: &[PathBuf]) -> Value {
    json!({
        "scenario": "fault",
        "mode": o.mode,
        "pass": verdicts.iter().all(|v| v.pass),
        "one_in_small": super::fault::SMALL_N,
        "one_in_large": super::fault::LARGE_N,
        "small": o.small,
        "large": o.large,
        "verdicts": verdicts,
        "files": paths(files),
    })
}

/// The deadlock ring on namespaces, phase by phase as the summary tells it.
pub fn deadlock_report(
    cfg: &RingConfig,
    o: &DeadlockOutcome,
    problems: &[String],
    files: &[PathBuf],
) -> Value {
    json!({
        "scenario": "deadlock",
        "mode": "namespaces",
        "pass": problems.is_empty(),
        "problems": problems,
        "files": paths(files),
        "pause_view": {
            "ring_cycle": o.ring_cycle,
            "ring_cycle_at_ms": o.ring_cycle_at_ms,
            "first_storm_at_ms": o.first_storm_at_ms,
        },
        "switches": cfg.switches,
        "speed_bps": cfg.speed_bps,
        "watchdog_off": {
            "ring_tx_packets": o.fill_ring_tx_packets,
            "delivered_packets": o.delivered_packets,
            "lossless_drops": o.phase1_drops,
            "stopped_after_ms": duration_ms(o.formed_after),
            "held_for_ms": duration_ms(Some(o.held_for)),
            "held": o.held,
        },
        "watchdog_switched_on": {
            "storms": o.wd_storms,
            "first_storm_after_ms": duration_ms(o.first_storm_after),
            "recovered_after_ms": duration_ms(o.recovered_after),
            "queued_bytes": o.queued_after_recovery_bytes,
            "events": o.wd_events,
        },
        "watchdog_on_throughout": {
            "delivered_packets": o.wd_on_delivered_packets,
            "storms": o.wd_on_storms,
            "recovered_after_ms": duration_ms(o.wd_on_recovered_after),
            "queued_bytes": o.wd_on_queued_bytes,
            "events": o.wd_on_events,
        },
        "second_burst": {
            "ring_tx_packets": o.burst_ring_tx_packets,
            "lossless_drops": o.burst_drops,
            "queued_bytes": o.queued_after_burst_bytes,
            "events": o.burst_wd_events,
            "flows": o.burst,
        },
    })
}

/// The deadlock ring in the simulator: when the pause-dependency cycle
/// formed and broke, and the watchdog's storms.
pub fn ring_sim_report(
    cfg: &RingConfig,
    o: &RingSimOutcome,
    problems: &[String],
    files: &[PathBuf],
) -> Value {
    let cycle = o.first_cycle();
    json!({
        "scenario": "deadlock",
        "mode": "simulator",
        "pass": problems.is_empty(),
        "problems": problems,
        "switches": cfg.switches,
        "speed_bps": cfg.speed_bps,
        "cycle": cycle.as_ref().map(|(_, name)| name),
        "cycle_formed_ms": instant_ms(cycle.map(|(t, _)| t)),
        "cycle_broken_ms": instant_ms(o.first_break()),
        "cycle_episodes": o.graph.history().len(),
        "first_storm_ms": instant_ms(o.first_storm()),
        "storms": o.storms.iter().map(|(switch, port, at)| json!({
            "switch": switch,
            "port": port,
            "at_ms": instant_ms(Some(*at)),
        })).collect::<Vec<_>>(),
        "delivered_bytes": o.delivered_bytes,
        "queued_at_end_bytes": o.queued_at_end_bytes,
        "end_ms": instant_ms(Some(o.end)),
        "files": paths(files),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::switchctl::WatchdogEvent;
    use crate::scenario::{EcmpOutcome, FlowResult, IncastOutcome, ScenarioConfig};

    fn verdict(check: &str, pass: bool) -> Verdict {
        Verdict {
            check: check.into(),
            measured: "1".into(),
            expected: "> 0".into(),
            pass,
        }
    }

    #[test]
    fn a_run_report_keeps_exact_figures_and_fails_with_any_verdict() {
        let o = Outcome {
            mode: "simulator",
            config: ScenarioConfig::default(),
            incast: IncastOutcome {
                flows: vec![FlowResult {
                    name: "h1".into(),
                    tx_gbps: 0.0491234,
                    pfc_rx: 812,
                    ..FlowResult::default()
                }],
                switch_pfc_tx: 812,
                ..IncastOutcome::default()
            },
            incast_dcqcn: None,
            ecmp: EcmpOutcome {
                uplink_packets: vec![10, 12],
                ..EcmpOutcome::default()
            },
        };
        let vs = [verdict("incast: PFC", true), verdict("ecmp: spread", false)];
        let j = run_report(&o, &vs, &[PathBuf::from("out/verdicts.csv")]);
        assert_eq!(j["pass"], false);
        assert_eq!(j["mode"], "simulator");
        assert_eq!(j["incast"]["flows"][0]["tx_gbps"], 0.0491234);
        assert_eq!(j["incast"]["switch_pfc_tx"], 812);
        assert_eq!(j["incast_dcqcn"], Value::Null);
        assert_eq!(j["ecmp"]["uplink_packets"], json!([10, 12]));
        assert_eq!(j["verdicts"][1]["check"], "ecmp: spread");
        assert_eq!(j["verdicts"][1]["pass"], false);
        assert_eq!(j["files"], json!(["out/verdicts.csv"]));
        let all_pass = run_report(&o, &vs[..1], &[]);
        assert_eq!(all_pass["pass"], true);
    }

    #[test]
    fn a_deadlock_report_gives_times_in_ms_and_null_for_never() {
        let o = DeadlockOutcome {
            formed_after: Some(Duration::from_micros(26_600)),
            first_storm_after: Some(Duration::from_millis(210)),
            recovered_after: None,
            wd_storms: vec![1, 0, 1],
            wd_events: vec![
                vec![WatchdogEvent::Storm {
                    port: 1,
                    priority: 3,
                }],
                vec![],
                vec![],
            ],
            ..DeadlockOutcome::default()
        };
        let problems = ["the ring did not recover".to_string()];
        let j = deadlock_report(&RingConfig::default(), &o, &problems, &[]);
        assert_eq!(j["pass"], false);
        assert_eq!(j["problems"][0], "the ring did not recover");
        let off = &j["watchdog_off"];
        assert!((off["stopped_after_ms"].as_f64().unwrap() - 26.6).abs() < 1e-9);
        let on = &j["watchdog_switched_on"];
        assert_eq!(on["first_storm_after_ms"], 210.0);
        assert_eq!(on["recovered_after_ms"], Value::Null);
        assert_eq!(on["storms"], json!([1, 0, 1]));
        assert_eq!(
            on["events"][0][0],
            json!({"event": "storm", "port": 1, "priority": 3})
        );
    }
}
