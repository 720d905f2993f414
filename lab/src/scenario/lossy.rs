//! `rocelab run lossy`: why RoCE wants a lossless fabric. The same 2:1
//! incast of RC WRITEs ([`super::live::run_incast`] /
//! [`super::sim::run_incast`]) runs twice, once on the PFC-protected
//! priority 3 (DSCP 26) and once on the lossy priority 0 (DSCP 0), with ECN
//! and DCQCN off so only PFC tells the two apart.
//!
//! Expected (IBTA Vol. 1 §9.7, roce-semantics §3–§4): lossless completes
//! with no drop, no NAK, no retransmission and its goodput near the
//! payload rate of the bottleneck; lossy drops at the switch, the responder
//! NAKs each PSN gap ("PSN sequence error"), the requesters go back N and
//! resend everything after the hole, and goodput collapses far below the
//! lossless figure. [`verdicts`] judges both, [`figures_table`] prints them
//! side by side, and [`write_figure`] draws both over time: the goodput at
//! the receiver and the payload the senders retransmitted.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result, anyhow};
use dataplane::sim::record::{RETX_UNIT, Recorder, SeriesSpec};

use super::dcqcn::{FigureRow, sender_rates, side_by_side};
use super::live::{self, Binaries};
use super::{
    FlowResult, IncastOutcome, MESSAGE_BYTES, ScenarioConfig, Verdict, payload_efficiency, v,
};
use crate::labctl::state::StateStore;

/// DSCP of the lossless run (priority 3, PFC on).
pub const LOSSLESS_DSCP: u8 = 26;
/// DSCP of the lossy run (priority 0, PFC off).
pub const LOSSY_DSCP: u8 = 0;

/// Lossy goodput must stay below this share of the lossless goodput, or a
/// QP must have failed with "transport retry counter exceeded" (then the
/// survivors may take the whole link): the collapse the scenario is about
/// (the simulator measures 0.17 with a 16 MiB buffer, one QP failing; with the lab's
/// 1 MiB one a QP exhausts its retries and the other runs at 0.85); a
/// switch that protected the lossy priority gives ~1 and no failed QP.
pub const COLLAPSE_MAX_RATIO: f64 = 0.6;

/// Both runs of the scenario.
#[derive(Debug, Clone)]
pub struct LossyOutcome {
    /// `"namespaces"` or `"simulator"`.
    pub mode: &'static str,
    /// The configuration (speed, duration, MTU) both runs share.
    pub config: ScenarioConfig,
    /// The incast on priority 3.
    pub lossless: IncastOutcome,
    /// The incast on priority 0.
    pub lossy: IncastOutcome,
}

/// `base` with the incast on `dscp`, ECN and DCQCN off.
pub fn run_config(base: &ScenarioConfig, dscp: u8) -> ScenarioConfig {
    ScenarioConfig {
        incast_dscp: dscp,
        ecn: None,
        dcqcn: false,
        ..base.clone()
    }
}

/// Both runs in the simulator.
pub fn run_sim(base: &ScenarioConfig, seed: u64) -> Result<LossyOutcome> {
    let lossless = super::sim::run_incast(&run_config(base, LOSSLESS_DSCP), seed, None)
        .context("lossless incast")?;
    let lossy = super::sim::run_incast(&run_config(base, LOSSY_DSCP), seed, None)
        .context("lossy incast")?;
    Ok(LossyOutcome {
        mode: "simulator",
        config: base.clone(),
        lossless,
        lossy,
    })
}

/// Both runs on namespaces (needs root); labs `<prefix>-ll` and `<prefix>-ly`.
pub fn run_live(
    base: &ScenarioConfig,
    bins: &Binaries,
    store: &StateStore,
    stop: &AtomicBool,
    lab_prefix: &str,
) -> Result<LossyOutcome> {
    let lossless = live::run_incast(
        &run_config(base, LOSSLESS_DSCP),
        bins,
        store,
        stop,
        &format!("{lab_prefix}-ll"),
        None,
    )
    .context("lossless incast")?;
    let lossy = live::run_incast(
        &run_config(base, LOSSY_DSCP),
        bins,
        store,
        stop,
        &format!("{lab_prefix}-ly"),
        None,
    )
    .context("lossy incast")?;
    Ok(LossyOutcome {
        mode: "namespaces",
        config: base.clone(),
        lossless,
        lossy,
    })
}

/// Step of the figure's time axis: the live receiver reports every 0.1 s,
/// the simulator samples every 0.5 ms (averaged into the step).
fn figure_step_s(mode: &str) -> f64 {
    if mode == "simulator" { 0.02 } else { 0.1 }
}

/// `series` (seconds, value) on a grid of `step` seconds from 0 to `end`:
/// the mean of the samples in each step (for rates), or the last value
/// (for running totals), carried forward through empty steps.
fn on_grid(series: &[(f64, f64)], step: f64, end: f64, mean: bool) -> Vec<f64> {
    let n = (end / step).ceil().max(1.0) as usize;
    let mut out = Vec::with_capacity(n);
    let mut last = 0.0;
    for k in 0..n {
        let (lo, hi) = (k as f64 * step, (k + 1) as f64 * step);
        let inside: Vec<f64> = series
            .iter()
            .filter(|&&(t, v)| t > lo && t <= hi && v.is_finite())
            .map(|&(_, v)| v)
            .collect();
        if let Some(&v) = inside.last() {
            last = if mean {
                inside.iter().sum::<f64>() / inside.len() as f64
            } else {
                v
            };
        } else if mean {
            last = 0.0;
        }
        out.push(last);
    }
    out
}

/// Draws `lossy_timeseries.svg` (and its CSV) into `dir`: the goodput at
/// the receiver of both runs, and what their senders retransmitted, over
/// time from each run's start.
pub fn write_figure(o: &LossyOutcome, dir: &Path) -> Result<PathBuf> {
    let step = figure_step_s(o.mode);
    let retx = |x: &IncastOutcome| -> Vec<(f64, f64)> {
        x.retx_series
            .iter()
            .map(|&(t, b)| (t, b as f64 / 1e6))
            .collect()
    };
    let end = [&o.lossless, &o.lossy]
        .iter()
        .flat_map(|x| x.goodput_series.last().map(|&(t, _)| t))
        .fold(0.0, f64::max);
    let spec = |name: &str, unit: &str| SeriesSpec {
        name: name.into(),
        unit: unit.into(),
    };
    const GOODPUT_UNIT: &str = "goodput at the receiver [Gb/s]";
    let mut rec = Recorder::new(vec![
        spec("lossless (priority 3)", GOODPUT_UNIT),
        spec("lossy (priority 0)", GOODPUT_UNIT),
        spec("lossless (priority 3) ", RETX_UNIT),
        spec("lossy (priority 0) ", RETX_UNIT),
    ]);
    let columns = [
        on_grid(&o.lossless.goodput_series, step, end, true),
        on_grid(&o.lossy.goodput_series, step, end, true),
        on_grid(&retx(&o.lossless), step, end, false),
        on_grid(&retx(&o.lossy), step, end, false),
    ];
    for k in 0..columns[0].len() {
        let t_ns = ((k + 1) as f64 * step * 1e9) as u64;
        rec.sample(t_ns, &columns.iter().map(|c| c[k]).collect::<Vec<_>>());
    }
    let line_gbps = o.config.speed_bps as f64 / 1e9;
    rec.add_line(
        GOODPUT_UNIT,
        "payload rate, Gb/s:",
        line_gbps * payload_efficiency(o.config.roce_mtu_bytes, MESSAGE_BYTES),
    );
    let stem = if o.mode == "simulator" {
        "sim_lossy_timeseries"
    } else {
        "lossy_timeseries"
    };
    rec.write(dir, stem)
        .map_err(|e| anyhow!("writing {stem} into {}: {e}", dir.display()))?;
    Ok(dir.join(format!("{stem}.svg")))
}

/// Sum of one counter over the senders.
fn total(x: &IncastOutcome, f: fn(&FlowResult) -> u64) -> u64 {
    x.flows.iter().map(f).sum()
}

/// Judges both runs.
pub fn verdicts(o: &LossyOutcome) -> Vec<Verdict> {
    let line_gbps = o.config.speed_bps as f64 / 1e9;
    let payload_gbps = line_gbps * payload_efficiency(o.config.roce_mtu_bytes, MESSAGE_BYTES);
    let (ll, ly) = (&o.lossless, &o.lossy);
    let (lo, hi) = super::lossless_goodput_band(o.mode);
    let mut out = vec![
        v(
            "lossless: goodput",
            format!("{:.4} Gb/s", ll.rx_gbps),
            &format!("{lo}..{hi} x {payload_gbps:.4} Gb/s (line rate minus RoCE headers)"),
            (lo * payload_gbps..=hi * payload_gbps).contains(&ll.rx_gbps),
        ),
        v(
            "lossless: drops, NAKs, retransmissions",
            format!(
                "{} dropped, {} NAKs, {} retransmitted, {} timeouts",
                ll.switch_drops,
                total(ll, |f| f.naks_rx),
                total(ll, |f| f.retx_packets),
                total(ll, |f| f.timeouts)
            ),
            "0 of each (PFC instead of loss)",
            ll.switch_drops == 0
                && ll.psn_gaps == 0
                && total(ll, |f| f.naks_rx) == 0
                && total(ll, |f| f.retx_packets) == 0
                && total(ll, |f| f.timeouts) == 0,
        ),
        v(
            "lossless: PFC pauses",
            ll.switch_pfc_tx.to_string(),
            "> 0 (2:1 incast of fixed-rate senders)",
            ll.switch_pfc_tx > 0,
        ),
        v(
            "lossy: switch drops",
            ly.switch_drops.to_string(),
            "> 0, and no PFC (priority 0 is not PFC-enabled)",
            ly.switch_drops > 0 && ly.switch_pfc_tx == 0,
        ),
        v(
            "lossy: NAKs",
            format!(
                "{} sent by receiver, {} received by senders",
                ly.psn_gaps,
                total(ly, |f| f.naks_rx)
            ),
            "> 0 (one PSN sequence error NAK per gap)",
            ly.psn_gaps > 0 && total(ly, |f| f.naks_rx) > 0,
        ),
        v(
            "lossy: go-back-N retransmissions",
            format!(
                "{} packets, {} bytes",
                total(ly, |f| f.retx_packets),
                total(ly, |f| f.retx_bytes)
            ),
            &format!(
                ">= {} (each NAK received resends at least one packet)",
                total(ly, |f| f.naks_rx).max(1)
            ),
            total(ly, |f| f.retx_packets) >= total(ly, |f| f.naks_rx).max(1),
        ),
        v(
            "lossy: goodput collapse",
            format!(
                "{:.4} Gb/s = {:.3} of lossless, {} QP(s) retry exceeded",
                ly.rx_gbps,
                ratio(ly.rx_gbps, ll.rx_gbps),
                total(ly, |f| f.retry_exceeded)
            ),
            &format!(
                "<= {COLLAPSE_MAX_RATIO} of lossless, or a QP failed \"transport retry counter exceeded\""
            ),
            ly.rx_gbps > 0.0
                && (ratio(ly.rx_gbps, ll.rx_gbps) <= COLLAPSE_MAX_RATIO
                    || total(ly, |f| f.retry_exceeded) > 0),
        ),
    ];
    // Whatever reached the receiver in order must have been sent.
    for (name, x) in [("lossless", ll), ("lossy", ly)] {
        let tx = total(x, |f| f.tx_bytes);
        out.push(v(
            &format!("{name}: bytes received <= sent"),
            format!("{} of {tx}", x.rx_bytes),
            "received <= sent, > 0",
            x.rx_bytes <= tx && x.rx_bytes > 0,
        ));
    }
    out
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::INFINITY }
}

/// The two runs' figures side by side.
pub fn figures_table(o: &LossyOutcome) -> String {
    let rows: [FigureRow; 10] = [
        ("goodput at receiver", |x| format!("{:.4} Gb/s", x.rx_gbps)),
        ("sender throughput", sender_rates),
        ("bytes received", |x| x.rx_bytes.to_string()),
        ("switch drops", |x| x.switch_drops.to_string()),
        ("PFC frames from switch", |x| x.switch_pfc_tx.to_string()),
        ("NAKs sent (PSN gaps)", |x| x.psn_gaps.to_string()),
        ("NAKs received", |x| total(x, |f| f.naks_rx).to_string()),
        ("packets retransmitted", |x| {
            total(x, |f| f.retx_packets).to_string()
        }),
        ("retransmission timeouts", |x| {
            total(x, |f| f.timeouts).to_string()
        }),
        ("QPs retry exceeded", |x| {
            total(x, |f| f.retry_exceeded).to_string()
        }),
    ];
    side_by_side(
        ("lossless (prio 3)", "lossy (prio 0)"),
        &o.lossless,
        &o.lossy,
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(tx_gbps: f64, retx: u64, naks: u64) -> FlowResult {
        FlowResult {
            name: "h".into(),
            tx_gbps,
            tx_bytes: 1000,
            retx_packets: retx,
            retx_bytes: retx * 4096,
            naks_rx: naks,
            ..FlowResult::default()
        }
    }

    fn good() -> LossyOutcome {
        LossyOutcome {
            mode: "test",
            config: ScenarioConfig::default(),
            lossless: IncastOutcome {
                flows: vec![flow(0.049, 0, 0), flow(0.049, 0, 0)],
                rx_gbps: 0.097,
                rx_bytes: 2000,
                switch_pfc_tx: 40,
                ..IncastOutcome::default()
            },
            lossy: IncastOutcome {
                flows: vec![flow(0.02, 300, 20), flow(0.02, 250, 18)],
                rx_gbps: 0.017,
                rx_bytes: 1500,
                switch_drops: 40,
                psn_gaps: 38,
                ..IncastOutcome::default()
            },
        }
    }

    #[test]
    fn a_collapse_on_lossy_and_a_clean_lossless_run_pass() {
        let vs = verdicts(&good());
        assert!(vs.iter().all(|v| v.pass), "{vs:#?}");
        let t = figures_table(&good());
        assert!(
            t.contains("lossy (prio 0)") && t.contains("0.0170 Gb/s"),
            "{t}"
        );
    }

    #[test]
    fn a_retransmission_on_lossless_or_none_on_lossy_fails() {
        let failed = |o: &LossyOutcome| -> Vec<String> {
            verdicts(o)
                .into_iter()
                .filter(|v| !v.pass)
                .map(|v| v.check)
                .collect()
        };
        let mut o = good();
        o.lossless.flows[0].retx_packets = 1;
        assert_eq!(failed(&o), vec!["lossless: drops, NAKs, retransmissions"]);
        let mut o = good();
        o.lossy.flows.iter_mut().for_each(|f| f.retx_packets = 0);
        assert_eq!(failed(&o), vec!["lossy: go-back-N retransmissions"]);
        // Lossy as fast as lossless: the drops cost nothing, which RC over
        // a dropping fabric cannot do.
        let mut o = good();
        o.lossy.rx_gbps = 0.09;
        assert_eq!(failed(&o), vec!["lossy: goodput collapse"]);
        // ... unless a QP gave up: the other may then take the link.
        o.lossy.flows[1].retry_exceeded = 1;
        assert!(failed(&o).is_empty());
        // A lossless run well below the payload rate fails too.
        let mut o = good();
        o.lossless.rx_gbps = 0.05;
        assert!(failed(&o).contains(&"lossless: goodput".to_string()));
    }

    #[test]
    fn the_figure_shows_the_lossy_run_retransmitting_and_the_lossless_not() {
        let o = run_sim(
            &ScenarioConfig {
                incast_s: 0.5,
                ..ScenarioConfig::default()
            },
            1,
        )
        .unwrap();
        let last = |x: &IncastOutcome| x.retx_series.last().map_or(0, |&(_, b)| b);
        assert_eq!(last(&o.lossless), 0);
        assert!(last(&o.lossy) > 0, "{:?}", o.lossy.retx_series.last());
        assert_eq!(
            last(&o.lossy),
            o.lossy.flows.iter().map(|f| f.retx_bytes).sum::<u64>(),
            "the series ends at what the senders report"
        );
        let lossless_mean = o
            .lossless
            .goodput_series
            .iter()
            .map(|&(_, g)| g)
            .sum::<f64>()
            / o.lossless.goodput_series.len() as f64;
        assert!(lossless_mean > 0.05, "{lossless_mean}");
        let dir = std::env::temp_dir().join(format!("rl-lossy-fig-{}", std::process::id()));
        let path = write_figure(&o, &dir).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("retransmitted [MB]") && svg.contains("lossy (priority 0)"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
