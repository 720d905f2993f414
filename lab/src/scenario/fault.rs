//! `rocelab run fault`: what a faulty path does to one RC queue pair. The
//! switch's ACL drops one in every N data packets of one QP
//! (`acl_drop_one_in` in `roce_switch.p4`, keyed on the ingress port and
//! the BTH destination QP), on the lossless priority where nothing else is
//! lost, and the run is made twice:
//! - N = [`SMALL_N`] (1): the path black-holes the QP. Nothing reaches the
//!   responder, so neither ACK nor NAK comes back; each retransmission
//!   timeout costs one of retry_cnt (7) go-backs and the eighth fails the
//!   QP with "transport retry counter exceeded" (IBTA §9.7.5.2.2). Exactly
//!   8 timeouts and 0 NAKs, whatever the timing. (With N = 2 the outcome
//!   was a race: a NAK acknowledges the PSNs before it, and whenever a
//!   round's first packet survived, progress and a later ACK restored the
//!   budget, so on a loaded machine the QP sometimes never failed.)
//! - N large ([`LARGE_N`]): each loss costs one NAK and a go-back-N
//!   retransmission, and every message completes.
//!
//! The other sender, whose QP the ACL does not match, is the control: no
//! loss, nothing to recover, in both runs. The incast is the default
//! scenario's (2:1, one QP a sender, 4 KiB MTU, 64 KiB messages = 16
//! packets), in the simulator or on namespaces.

use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, anyhow};
use dataplane::fabric::action_call;
use dataplane::roce::PROGRAM_INFO;
use p4_target::info::TableInfo;
use p4_target::runtime::{EntryAction, FieldMatch, TableEntry};

use super::dcqcn::{FigureRow, side_by_side};
use super::live::{self, Binaries};
use super::{FlowResult, IncastOutcome, ScenarioConfig, Verdict, v};
use crate::labctl::state::StateStore;

/// N of the run that must end in "transport retry counter exceeded":
/// every packet of the QP dropped.
pub const SMALL_N: u32 = 1;
/// N of the run that must recover by retransmission only.
pub const LARGE_N: u32 = 200;
/// Timeouts of the black-holed QP: retry_cnt (7, perftest's and the
/// agents' default) go-backs, then the one that fails it.
const FAULTED_QP_TIMEOUTS: u64 = 8;
/// The ACL entry's cell in `acl_fault_seen`.
const FAULT_CELL: u128 = 0;

/// Both runs.
#[derive(Debug, Clone)]
pub struct FaultOutcome {
    /// `"simulator"` or `"namespaces"`.
    pub mode: &'static str,
    /// The run with one in [`SMALL_N`] dropped.
    pub small: IncastOutcome,
    /// The run with one in [`LARGE_N`] dropped.
    pub large: IncastOutcome,
}

/// The ACL entry that drops one in `one_in` packets arriving on
/// `ingress_port` for `dest_qp`, with its table.
pub fn acl_fault_entry(
    ingress_port: u16,
    dest_qp: u32,
    one_in: u32,
) -> Result<(&'static TableInfo, TableEntry)> {
    let table = PROGRAM_INFO
        .table_by_name("acl")
        .ok_or_else(|| anyhow!("the switch program has no acl table"))?;
    let action = action_call(
        &PROGRAM_INFO,
        "acl_drop_one_in",
        &[("n", u128::from(one_in)), ("cell", FAULT_CELL)],
    )?;
    let mut matches = vec![None; table.keys.len()];
    for (name, value, width) in [
        ("ingress_port", u128::from(ingress_port), 9),
        ("dest_qp", u128::from(dest_qp), 24),
    ] {
        let i = table
            .keys
            .iter()
            .position(|k| k.name == name)
            .ok_or_else(|| anyhow!("the acl table has no key {name}"))?;
        matches[i] = Some(FieldMatch::Ternary {
            value,
            mask: (1u128 << width) - 1,
        });
    }
    Ok((
        table,
        TableEntry {
            matches,
            priority: 100,
            action: EntryAction::Direct(action),
            metadata: Vec::new(),
        },
    ))
}

fn config(base: &ScenarioConfig, one_in: u32) -> ScenarioConfig {
    ScenarioConfig {
        incast_qps: 1,
        ecn: None,
        dcqcn: false,
        compare_dcqcn: false,
        fault_one_in: Some(one_in),
        ..base.clone()
    }
}

/// Both runs in the simulator.
pub fn run_sim(base: &ScenarioConfig, seed: u64) -> Result<FaultOutcome> {
    let run = |n| {
        super::sim::run_incast(&config(base, n), seed, None)
            .with_context(|| format!("incast with one in {n} dropped"))
    };
    Ok(FaultOutcome {
        mode: "simulator",
        small: run(SMALL_N)?,
        large: run(LARGE_N)?,
    })
}

/// Both runs on namespaces.
pub fn run_live(
    base: &ScenarioConfig,
    bins: &Binaries,
    store: &StateStore,
    stop: &AtomicBool,
    lab_prefix: &str,
) -> Result<FaultOutcome> {
    let run = |n, tag: &str| {
        live::run_incast(
            &config(base, n),
            bins,
            store,
            stop,
            &format!("{lab_prefix}-{tag}"),
            None,
        )
        .with_context(|| format!("incast with one in {n} dropped"))
    };
    Ok(FaultOutcome {
        mode: "namespaces",
        small: run(SMALL_N, "fs")?,
        large: run(LARGE_N, "fl")?,
    })
}

/// How a run is named in verdicts and tables.
pub fn dropped(n: u32) -> String {
    if n == 1 {
        "every packet dropped".into()
    } else {
        format!("one in {n} dropped")
    }
}

fn flow(x: &IncastOutcome, i: usize) -> FlowResult {
    x.flows.get(i).cloned().unwrap_or_default()
}

/// The verdicts: the faulted QP fails with N small and recovers with N
/// large; the other QP is untouched in both.
pub fn verdicts(o: &FaultOutcome) -> Vec<Verdict> {
    let (s, l) = (flow(&o.small, 0), flow(&o.large, 0));
    let mut out = vec![
        v(
            &format!("{}: the QP fails", dropped(SMALL_N)),
            format!(
                "{} QP retry exceeded, {} NAKs, {} timeouts",
                s.retry_exceeded, s.naks_rx, s.timeouts
            ),
            "1, after exactly retry_cnt + 1 = 8 timeouts and 0 NAKs (nothing reaches the responder)",
            s.retry_exceeded == 1 && s.naks_rx == 0 && s.timeouts == FAULTED_QP_TIMEOUTS,
        ),
        v(
            &format!("{}: the QP recovers", dropped(LARGE_N)),
            format!(
                "{} NAKs, {} packets retransmitted, {} QP retry exceeded",
                l.naks_rx, l.retx_packets, l.retry_exceeded
            ),
            "> 0 NAKs and retransmissions, no failure (go-back-N from each loss)",
            l.retry_exceeded == 0 && l.naks_rx > 0 && l.retx_packets >= l.naks_rx,
        ),
        v(
            &format!("{}: goodput of the faulted QP", dropped(LARGE_N)),
            format!(
                "{:.4} Gb/s against {:.4} Gb/s for the other",
                l.tx_gbps,
                flow(&o.large, 1).tx_gbps
            ),
            "> 0 (every loss repaired, the QP keeps going)",
            l.tx_gbps > 0.0,
        ),
    ];
    for (n, x) in [(SMALL_N, &o.small), (LARGE_N, &o.large)] {
        let c = flow(x, 1);
        out.push(v(
            &format!("{}: the other QP is untouched", dropped(n)),
            format!(
                "{} NAKs, {} retransmitted, {} timeouts",
                c.naks_rx, c.retx_packets, c.timeouts
            ),
            "0 of each (the ACL matches one QP)",
            c.naks_rx == 0 && c.retx_packets == 0 && c.timeouts == 0 && c.retry_exceeded == 0,
        ));
    }
    out
}

/// The two runs side by side.
pub fn figures_table(o: &FaultOutcome) -> String {
    let rows: [FigureRow; 6] = [
        ("faulted QP throughput", |x| {
            format!("{:.4} Gb/s", flow(x, 0).tx_gbps)
        }),
        ("other QP throughput", |x| {
            format!("{:.4} Gb/s", flow(x, 1).tx_gbps)
        }),
        ("NAKs received (faulted)", |x| {
            flow(x, 0).naks_rx.to_string()
        }),
        ("packets retransmitted", |x| {
            flow(x, 0).retx_packets.to_string()
        }),
        ("retransmission timeouts", |x| {
            flow(x, 0).timeouts.to_string()
        }),
        ("QP retry exceeded", |x| {
            flow(x, 0).retry_exceeded.to_string()
        }),
    ];
    side_by_side(
        (&dropped(SMALL_N), &dropped(LARGE_N)),
        &o.small,
        &o.large,
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_acl_entry_matches_the_ingress_port_and_qp_only() {
        let (t, e) = acl_fault_entry(3, 0x200, 7).unwrap();
        assert!(t.name.ends_with("acl"));
        let set: Vec<usize> = (0..e.matches.len())
            .filter(|&i| e.matches[i].is_some())
            .collect();
        assert_eq!(
            set.len(),
            2,
            "only ingress_port and dest_qp: {:?}",
            e.matches
        );
        let EntryAction::Direct(a) = &e.action else {
            panic!("{:?}", e.action)
        };
        assert_eq!(&a.params[..], &[7, FAULT_CELL]);
    }

    /// The whole scenario in the simulator (deterministic, ~2 s debug).
    #[test]
    fn in_the_simulator_small_n_fails_the_qp_and_large_n_only_retransmits() {
        let o = run_sim(
            &ScenarioConfig {
                incast_s: 1.0,
                ..ScenarioConfig::default()
            },
            1,
        )
        .unwrap();
        let vs = verdicts(&o);
        assert!(vs.iter().all(|v| v.pass), "{vs:#?}");
    }
}
