//! `rocelab run dcbx`: DCBX correcting a misconfigured host, and reporting
//! one it may not correct, in the simulator or on namespaces.
//!
//! The incast of the default scenario with LLDP/DCBX on every switch port
//! (the switch advertises PFC and RoCE on priority 3, DSCP 26) and both
//! senders started as a host with the wrong class would be: RoCE marked
//! DSCP 40, priority 5, lossy on this switch (the first failure point the
//! seed material lists: host and switch disagree on the PFC priority).
//! - h1 is DCBX-*willing*, as NICs ship: it adopts the switch's PFC and
//!   application priority and moves its RoCE to priority 3, DSCP 26; the
//!   switch then sees it advertise what the switch runs (no mismatch).
//! - h2 runs DCBX *not willing* (`--dcbx on`): it keeps priority 5, and the
//!   switch reports its port as a PFC and application-priority mismatch.
//!
//! What the switch received from each sender on each priority (its TM's
//! ingress counters) shows where the RoCE really went. The receiver runs
//! the switch's class and no DCBX.

use std::sync::atomic::AtomicBool;

use anyhow::Result;
use dataplane::dcbx::host::{DataClass, DcbxMode};

use super::dcqcn::{FigureRow, side_by_side};
use super::live::Binaries;
use super::{FlowResult, IncastOutcome, LOSSLESS_PRIORITY, ScenarioConfig, Verdict, v};
use crate::labctl::state::StateStore;

/// How the senders take part in DCBX and the class they start with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DcbxSenders {
    /// h1's and h2's mode.
    pub modes: [DcbxMode; 2],
    /// The DSCP both are configured with (their priority is DSCP >> 3).
    pub admin_dscp: u8,
}

/// The scenario's senders: h1 willing, h2 not, both on DSCP 40.
pub const SENDERS: DcbxSenders = DcbxSenders {
    modes: [DcbxMode::Willing, DcbxMode::On],
    admin_dscp: WRONG_DSCP,
};

/// The DSCP the senders start with: 40, priority 5 (not PFC-enabled here).
pub const WRONG_DSCP: u8 = 40;

/// The class the switch advertises for RoCE (its lossless priority and
/// that priority's DSCP, R-MAP-2).
pub const SWITCH_CLASS: DataClass = DataClass {
    priority: LOSSLESS_PRIORITY,
    dscp: 26,
};

/// Least share of the willing sender's bytes the switch must receive on
/// the lossless priority. Simulator: DCBX settles within the first LLDP
/// exchange (measured 0.999: the packets the RNIC sent before it).
/// Namespaces: the host learns the switch's class from the switch's first
/// LLDP frame after the host's own appeared, up to a fast-start interval
/// (1 s) into the run (measured 1.000: one 4 KiB packet before it).
pub const SIM_MIN_ADOPTED_SHARE: f64 = 0.99;
/// See [`SIM_MIN_ADOPTED_SHARE`].
pub const LIVE_MIN_ADOPTED_SHARE: f64 = 0.7;

/// Least share of the non-willing sender's bytes the switch must receive
/// on the priority it was configured with (it never moves: measured
/// 1.000).
pub const MIN_KEPT_SHARE: f64 = 0.99;

/// The configuration of the run: `base` with DCBX on the switch and
/// [`SENDERS`], fixed-rate senders, once.
pub fn config(base: &ScenarioConfig) -> ScenarioConfig {
    ScenarioConfig {
        incast_dscp: SWITCH_CLASS.dscp,
        dcqcn: false,
        compare_dcqcn: false,
        dcbx: Some(SENDERS),
        ..base.clone()
    }
}

/// The run in the simulator.
pub fn run_sim(base: &ScenarioConfig, seed: u64) -> Result<IncastOutcome> {
    super::sim::run_incast(&config(base), seed, None)
}

/// The run on namespaces.
pub fn run_live(
    base: &ScenarioConfig,
    bins: &Binaries,
    store: &StateStore,
    stop: &AtomicBool,
    lab: &str,
) -> Result<IncastOutcome> {
    super::live::run_incast(&config(base), bins, store, stop, lab, None)
}

/// Share of `by_priority`'s bytes on `priority` (0 when nothing arrived).
fn share(by_priority: &[u64; 8], priority: u8) -> f64 {
    let total: u64 = by_priority.iter().sum();
    if total == 0 {
        return 0.0;
    }
    by_priority[usize::from(priority & 7)] as f64 / total as f64
}

fn describe_shares(by_priority: &[u64; 8]) -> String {
    let total: u64 = by_priority.iter().sum();
    let parts: Vec<String> = by_priority
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b > 0)
        .map(|(p, &b)| format!("{:.1} % on priority {p}", 100.0 * b as f64 / total as f64))
        .collect();
    if parts.is_empty() {
        "nothing received".into()
    } else {
        parts.join(", ")
    }
}

/// The verdicts of a run in `mode` (`"simulator"` or `"namespaces"`).
pub fn verdicts(mode: &str, x: &IncastOutcome) -> Vec<Verdict> {
    let flow = |i: usize| x.flows.get(i).cloned().unwrap_or_default();
    let (willing, other) = (flow(0), flow(1));
    let wrong = WRONG_DSCP >> 3;
    let min_adopted = if mode == "simulator" {
        SIM_MIN_ADOPTED_SHARE
    } else {
        LIVE_MIN_ADOPTED_SHARE
    };
    let class = |c: Option<&dataplane::dcbx::host::DcbxStatus>| match c {
        Some(s) => format!(
            "{}, priority {} DSCP {}, PFC on {:#04x}",
            if s.adopted { "adopted" } else { "own" },
            s.operational.priority,
            s.operational.dscp,
            s.pfc_enable
        ),
        None => "no DCBX status".into(),
    };
    let mismatch = |m: &Option<String>| m.clone().unwrap_or_else(|| "no neighbour".into());
    let lossless_drops: u64 = x.drops_by_priority[usize::from(LOSSLESS_PRIORITY)];
    vec![
        v(
            "dcbx: the willing host adopted the switch's class",
            class(willing.dcbx.as_ref()),
            &format!(
                "adopted, priority {} DSCP {}, PFC on priority {}",
                SWITCH_CLASS.priority, SWITCH_CLASS.dscp, SWITCH_CLASS.priority
            ),
            willing.dcbx.as_ref().is_some_and(|s| {
                s.adopted
                    && s.operational == SWITCH_CLASS
                    && s.pfc_enable & (1 << SWITCH_CLASS.priority) != 0
            }),
        ),
        v(
            "dcbx: the switch sees the willing host agree",
            mismatch(&willing.switch_dcbx_mismatch),
            "none (it advertises what it adopted)",
            willing.switch_dcbx_mismatch.as_deref() == Some("none"),
        ),
        v(
            "dcbx: the willing host's RoCE is lossless",
            describe_shares(&willing.switch_rx_bytes_by_priority),
            &format!(
                ">= {:.0} % of its bytes on priority {} (the rest before the first LLDP exchange)",
                min_adopted * 100.0,
                SWITCH_CLASS.priority
            ),
            share(&willing.switch_rx_bytes_by_priority, SWITCH_CLASS.priority) >= min_adopted,
        ),
        v(
            "dcbx: the host that is not willing keeps its class",
            class(other.dcbx.as_ref()),
            &format!("own, priority {wrong} DSCP {WRONG_DSCP}"),
            other
                .dcbx
                .as_ref()
                .is_some_and(|s| !s.adopted && s.operational.priority == wrong),
        ),
        v(
            "dcbx: the switch reports its port as a mismatch",
            mismatch(&other.switch_dcbx_mismatch),
            "pfc and app (its PFC and RoCE priority differ from the switch's)",
            other.switch_dcbx_mismatch.as_deref().is_some_and(|m| {
                m.split(',').any(|p| p == "pfc") && m.split(',').any(|p| p == "app")
            }),
        ),
        v(
            "dcbx: its RoCE stays on the lossy priority",
            describe_shares(&other.switch_rx_bytes_by_priority),
            &format!(
                ">= {:.0} % of its bytes on priority {wrong}",
                MIN_KEPT_SHARE * 100.0
            ),
            share(&other.switch_rx_bytes_by_priority, wrong) >= MIN_KEPT_SHARE,
        ),
        v(
            "dcbx: nothing dropped on the lossless priority",
            format!(
                "{lossless_drops} dropped on priority {}, {} on priority {wrong}",
                SWITCH_CLASS.priority,
                x.drops_by_priority[usize::from(wrong)]
            ),
            &format!("0 on priority {} (PFC)", SWITCH_CLASS.priority),
            lossless_drops == 0,
        ),
    ]
}

/// The two senders side by side.
pub fn figures_table(x: &IncastOutcome) -> String {
    let flows: Vec<_> = (0..2)
        .map(|i| x.flows.get(i).cloned().unwrap_or_default())
        .collect();
    let rows: [FigureRow<FlowResult>; 6] = [
        ("RoCE class now", |f| match &f.dcbx {
            Some(d) => format!(
                "priority {} DSCP {}",
                d.operational.priority, d.operational.dscp
            ),
            None => "-".into(),
        }),
        ("adopted from the switch", |f| {
            f.dcbx
                .as_ref()
                .map_or("-".into(), |d| if d.adopted { "yes" } else { "no" }.into())
        }),
        ("switch sees mismatch", |f| {
            f.switch_dcbx_mismatch.clone().unwrap_or_else(|| "-".into())
        }),
        ("bytes on priority 3", |f| {
            f.switch_rx_bytes_by_priority[3].to_string()
        }),
        ("bytes on priority 5", |f| {
            f.switch_rx_bytes_by_priority[5].to_string()
        }),
        ("throughput", |f| format!("{:.4} Gb/s", f.tx_gbps)),
    ];
    side_by_side(
        ("h1 (willing)", "h2 (not willing)"),
        &flows[0],
        &flows[1],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole scenario in the simulator (deterministic).
    #[test]
    fn in_the_simulator_the_willing_host_is_corrected_and_the_other_reported() {
        let x = run_sim(
            &ScenarioConfig {
                incast_s: 0.5,
                ..ScenarioConfig::default()
            },
            1,
        )
        .unwrap();
        let vs = verdicts("simulator", &x);
        assert!(vs.iter().all(|v| v.pass), "{vs:#?}");
        let table = figures_table(&x);
        for artefact in ["Some(", "None", "{ ", " }"] {
            assert!(!table.contains(artefact), "{table}");
        }
    }

    #[test]
    fn a_host_left_on_the_wrong_priority_fails() {
        let mut x = run_sim(
            &ScenarioConfig {
                incast_s: 0.2,
                ..ScenarioConfig::default()
            },
            1,
        )
        .unwrap();
        // As if h1 had not adopted: its bytes on priority 5, the switch
        // reporting a mismatch.
        x.flows[0].switch_rx_bytes_by_priority = x.flows[1].switch_rx_bytes_by_priority;
        x.flows[0].switch_dcbx_mismatch = Some("pfc,app".into());
        let failing: Vec<String> = verdicts("simulator", &x)
            .into_iter()
            .filter(|v| !v.pass)
            .map(|v| v.check)
            .collect();
        assert_eq!(
            failing,
            [
                "dcbx: the switch sees the willing host agree",
                "dcbx: the willing host's RoCE is lossless"
            ]
        );
    }
}
