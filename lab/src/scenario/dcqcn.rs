//! The main job's second incast: the same 2:1 incast with DCQCN on, judged
//! against the first run (fixed-rate senders) and printed beside it.
//!
//! Without DCQCN, PFC alone holds the line: the bottleneck queue climbs to
//! XOFF, the switch pauses its uplinks, nothing is dropped. With DCQCN the
//! CE marks the switch sets between Kmin and Kmax come back as CNPs and
//! each sender cuts its rate (roce-semantics §11), so the queue stays below
//! XOFF: pauses fall by at least [`MIN_PAUSE_REDUCTION`]×, the queue
//! settles between Kmin and Kmax ([`queue_band`]), the senders still share
//! fairly and nothing is lost. DCQCN gives up some throughput for that (see
//! [`super::DCQCN_GOODPUT_MIN`]).

use std::fmt::Write as _;

use dataplane::sim::record::Recorder;

use super::red::{QUEUE_COLUMN, TX_COLUMN};
use super::{
    DCQCN_GOODPUT_MIN, DCQCN_MAX_PFC, EcnSetting, FlowResult, IncastOutcome, MESSAGE_BYTES,
    MIN_JAIN, ScenarioConfig, Verdict, jain_index, payload_efficiency, v,
};

/// DCQCN must cut the switch's PFC frames at least this many times
/// (issue #19's figure; measured: simulator 16,044 → 0 at 100 Mb/s).
pub const MIN_PAUSE_REDUCTION: u64 = 10;

/// Where the bottleneck queue sat while the senders ran: the samples from
/// the first that reached Kmin (before it the senders start at line rate,
/// R-RP-1, and the queue has yet to build) on, those in which the
/// bottleneck sent anything (after the senders stop it only drains).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct QueueBand {
    /// Samples counted.
    pub samples: usize,
    /// Share of them with the queue in Kmin..=Kmax.
    pub in_band_fraction: f64,
    /// Median queue of them, KB.
    pub median_kb: f64,
}

/// The queue's [`QueueBand`] from the recorder the time-series picture is
/// drawn from (every 0.5 ms in the simulator, 10 ms from a live switch);
/// `None` when the queue never reached Kmin while the bottleneck sent.
pub fn queue_band(rec: &Recorder, e: &EcnSetting) -> Option<QueueBand> {
    let (kmin_kb, kmax_kb) = (e.kmin_bytes as f64 / 1e3, e.kmax_bytes as f64 / 1e3);
    let queue = rec.column(QUEUE_COLUMN)?;
    let tx = rec.column(TX_COLUMN)?;
    let start = queue.iter().position(|&(_, q)| q >= kmin_kb)?;
    let mut kb: Vec<f64> = queue[start..]
        .iter()
        .zip(&tx[start..])
        .filter(|&(&(_, q), &(_, gbps))| q.is_finite() && gbps > 0.0)
        .map(|(&(_, q), _)| q)
        .collect();
    if kb.is_empty() {
        return None;
    }
    kb.sort_by(f64::total_cmp);
    let in_band = kb
        .iter()
        .filter(|&&q| (kmin_kb..=kmax_kb).contains(&q))
        .count();
    Some(QueueBand {
        samples: kb.len(),
        in_band_fraction: in_band as f64 / kb.len() as f64,
        median_kb: kb[kb.len() / 2],
    })
}

/// Least share of the samples with the queue between Kmin and Kmax, in the
/// simulator: DCQCN's cuts and recoveries move it up and down the band
/// (measured 0.87 at 100 Mb/s, 0.75 at 1 Gb/s, 0.78 at 10 Gb/s); the limit
/// cycle of the RP's 100 Gb/s timers, which swung the queue from empty to
/// 1.75 × Kmax, gave 0.36.
pub const SIM_MIN_IN_BAND: f64 = 0.7;

/// The same on namespaces, with the queue sampled every 10 ms over gRPC
/// from a debug-build switch on a loaded 2-core machine, where the user-space
/// senders lose turns and come back in bursts (measured 0.70 at load ~9).
pub const LIVE_MIN_IN_BAND: f64 = 0.5;

/// The verdict on the queue of a DCQCN run in `mode` (`"simulator"` or
/// `"namespaces"`): its median between Kmin and Kmax and at least the
/// mode's share of the samples there.
pub fn queue_verdict(name: &str, mode: &str, band: Option<QueueBand>, e: &EcnSetting) -> Verdict {
    let min = if mode == "simulator" {
        SIM_MIN_IN_BAND
    } else {
        LIVE_MIN_IN_BAND
    };
    let (kmin_kb, kmax_kb) = (e.kmin_bytes as f64 / 1e3, e.kmax_bytes as f64 / 1e3);
    let measured = match band {
        Some(b) => format!(
            "median {:.0} KB, {:.0} % of {} samples in band",
            b.median_kb,
            b.in_band_fraction * 100.0,
            b.samples
        ),
        None => "never reached Kmin while sending".to_string(),
    };
    v(
        name,
        measured,
        &format!(
            "median in {kmin_kb:.0}..{kmax_kb:.0} KB (Kmin..Kmax) and >= {:.0} % of samples there",
            min * 100.0
        ),
        band.is_some_and(|b| {
            (kmin_kb..=kmax_kb).contains(&b.median_kb) && b.in_band_fraction >= min
        }),
    )
}

/// The configuration of the DCQCN run: `base` with DCQCN on.
pub fn run_config(base: &ScenarioConfig) -> ScenarioConfig {
    ScenarioConfig {
        dcqcn: true,
        ..base.clone()
    }
}

/// True if `cfg` runs the comparison: side by side on, the first run with
/// fixed-rate senders, on the lossless priority, with ECN marking (without
/// marks there is nothing for DCQCN to react to).
pub fn compares(cfg: &ScenarioConfig) -> bool {
    cfg.compare_dcqcn && !cfg.dcqcn && cfg.lossless() && cfg.ecn.is_some()
}

fn total(x: &IncastOutcome, f: fn(&FlowResult) -> u64) -> u64 {
    x.flows.iter().map(f).sum()
}

/// Judges the DCQCN run against the fixed-rate one (`off`), both run in
/// `mode` (`"simulator"` or `"namespaces"`).
pub fn verdicts(
    cfg: &ScenarioConfig,
    mode: &str,
    off: &IncastOutcome,
    on: &IncastOutcome,
) -> Vec<Verdict> {
    let payload_gbps =
        cfg.speed_bps as f64 / 1e9 * payload_efficiency(cfg.roce_mtu_bytes, MESSAGE_BYTES);
    let rates: Vec<f64> = on.flows.iter().map(|f| f.tx_gbps).collect();
    let jain = jain_index(&rates).unwrap_or(0.0);
    let tx = total(on, |f| f.tx_bytes);
    let mut out = vec![
        v(
            "dcqcn: PFC pauses",
            format!(
                "{} with DCQCN, {} without",
                on.switch_pfc_tx, off.switch_pfc_tx
            ),
            &format!(
                "<= 1/{MIN_PAUSE_REDUCTION} of without, or <= {DCQCN_MAX_PFC} (the senders slow \
                 down before XOFF)"
            ),
            on.switch_pfc_tx * MIN_PAUSE_REDUCTION <= off.switch_pfc_tx
                || on.switch_pfc_tx <= DCQCN_MAX_PFC,
        ),
        v(
            "dcqcn: senders slowed by CNPs",
            format!(
                "{} CE marked, {} CNPs received",
                on.switch_ce_marked,
                total(on, |f| f.cnp_rx)
            ),
            "> 0 each",
            on.switch_ce_marked > 0 && total(on, |f| f.cnp_rx) > 0,
        ),
        v(
            "dcqcn: goodput",
            format!("{:.3} Gb/s", on.rx_gbps),
            &format!(
                ">= {DCQCN_GOODPUT_MIN} x {payload_gbps:.4} Gb/s (DCQCN trades a little \
                 throughput for a short queue)"
            ),
            on.rx_gbps >= DCQCN_GOODPUT_MIN * payload_gbps,
        ),
        v(
            "dcqcn: fairness of the senders",
            format!(
                "Jain {jain:.3} ({} Gb/s)",
                rates
                    .iter()
                    .map(|r| format!("{r:.3}"))
                    .collect::<Vec<_>>()
                    .join(" / ")
            ),
            &format!(">= {MIN_JAIN}"),
            jain >= MIN_JAIN,
        ),
        v(
            "dcqcn: nothing lost",
            format!(
                "{} dropped, {} of {tx} bytes received",
                on.switch_drops, on.rx_bytes
            ),
            "0 dropped, received = sent",
            on.switch_drops == 0 && on.rx_bytes == tx && tx > 0,
        ),
        // With the senders slowed the queue lives between Kmin and Kmax,
        // where the curve, not the all-marked region above Kmax, decides.
        super::red::verdict(
            "dcqcn: marked fraction on the RED curve",
            on.switch_ce_marked,
            on.bottleneck_tx_packets,
            on.red_expected_fraction,
        ),
    ];
    if let Some(e) = &cfg.ecn {
        out.push(queue_verdict(
            "dcqcn: queue between Kmin and Kmax",
            mode,
            on.queue_band,
            e,
        ));
    }
    out
}

/// One row of a side-by-side table: its name and how to read it off one
/// column's subject (a run, by default).
pub type FigureRow<T = IncastOutcome> = (&'static str, fn(&T) -> String);

/// Two runs (or two senders of one run) side by side, one row per figure.
pub fn side_by_side<T>(columns: (&str, &str), a: &T, b: &T, rows: &[FigureRow<T>]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{:<26}  {:>22}  {:>22}", "figure", columns.0, columns.1);
    for (name, f) in rows {
        let _ = writeln!(s, "{name:<26}  {:>22}  {:>22}", f(a), f(b));
    }
    s
}

/// Sender throughputs as `a / b Gb/s`.
pub fn sender_rates(x: &IncastOutcome) -> String {
    x.flows
        .iter()
        .map(|f| format!("{:.4}", f.tx_gbps))
        .collect::<Vec<_>>()
        .join(" / ")
        + " Gb/s"
}

/// The fixed-rate and the DCQCN run side by side.
pub fn figures_table(off: &IncastOutcome, on: &IncastOutcome) -> String {
    let rows: [FigureRow; 8] = [
        ("goodput at receiver", |x| format!("{:.4} Gb/s", x.rx_gbps)),
        ("sender throughput", sender_rates),
        ("PFC frames from switch", |x| x.switch_pfc_tx.to_string()),
        ("switch drops", |x| x.switch_drops.to_string()),
        ("lost in switch's rx rings", |x| {
            x.switch_kernel_drops.to_string()
        }),
        ("CE marked by switch", |x| x.switch_ce_marked.to_string()),
        ("CNPs received by senders", |x| {
            total(x, |f| f.cnp_rx).to_string()
        }),
        ("bytes received", |x| x.rx_bytes.to_string()),
    ];
    side_by_side(("DCQCN off", "DCQCN on"), off, on, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pfc: u64, ce: u64, rates: [f64; 2]) -> IncastOutcome {
        let flows = rates
            .iter()
            .map(|&r| FlowResult {
                name: "h".into(),
                tx_gbps: r,
                tx_bytes: 1000,
                cnp_rx: ce / 2,
                ..FlowResult::default()
            })
            .collect();
        IncastOutcome {
            flows,
            rx_gbps: rates.iter().sum(),
            rx_bytes: 2000,
            switch_pfc_tx: pfc,
            switch_ce_marked: ce,
            bottleneck_tx_packets: 20 * ce.max(1),
            red_expected_fraction: Some(0.05),
            queue_band: Some(QueueBand {
                samples: 400,
                in_band_fraction: 0.85,
                median_kb: 110.0,
            }),
            ..IncastOutcome::default()
        }
    }

    #[test]
    fn dcqcn_that_removes_the_pauses_passes_every_line() {
        let cfg = ScenarioConfig::default();
        let off = run(16_044, 24_000, [0.048, 0.048]);
        let on = run(0, 3_000, [0.043, 0.043]);
        let vs = verdicts(&cfg, "simulator", &off, &on);
        assert!(vs.iter().all(|v| v.pass), "{vs:#?}");
        let table = figures_table(&off, &on);
        assert!(table.contains("DCQCN off") && table.contains("16044"));
        for artefact in ["Some(", "None", "{ ", " }"] {
            assert!(!table.contains(artefact), "{table}");
        }
    }

    #[test]
    fn pauses_that_barely_fall_unfair_senders_or_a_stalled_link_fail() {
        let cfg = ScenarioConfig::default();
        let off = run(1_000, 24_000, [0.048, 0.048]);
        let failing = |on: &IncastOutcome| {
            verdicts(&cfg, "simulator", &off, on)
                .into_iter()
                .filter(|v| !v.pass)
                .map(|v| v.check)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            failing(&run(200, 3_000, [0.043, 0.043])),
            ["dcqcn: PFC pauses"]
        );
        assert_eq!(
            failing(&run(0, 3_000, [0.075, 0.012])),
            ["dcqcn: fairness of the senders"]
        );
        assert_eq!(failing(&run(0, 3_000, [0.001, 0.001])), ["dcqcn: goodput"]);
        // Nothing marked where the curve marks 5 %: no CNPs either.
        assert_eq!(
            failing(&run(0, 0, [0.048, 0.048])),
            [
                "dcqcn: senders slowed by CNPs",
                "dcqcn: marked fraction on the RED curve"
            ]
        );
        // Half the packets marked where the curve marks 5 %.
        let mut over = run(0, 3_000, [0.048, 0.048]);
        over.bottleneck_tx_packets = 6_000;
        assert_eq!(failing(&over), ["dcqcn: marked fraction on the RED curve"]);
        // The limit cycle of unscaled timers: empty to 1.75 × Kmax.
        let mut swinging = run(0, 3_000, [0.048, 0.048]);
        swinging.queue_band = Some(QueueBand {
            samples: 16_000,
            in_band_fraction: 0.36,
            median_kb: 191.0,
        });
        assert_eq!(failing(&swinging), ["dcqcn: queue between Kmin and Kmax"]);
        // A queue parked above Kmax, and one that never built.
        for band in [
            Some(QueueBand {
                samples: 400,
                in_band_fraction: 0.45,
                median_kb: 230.0,
            }),
            None,
        ] {
            let mut x = run(0, 3_000, [0.048, 0.048]);
            x.queue_band = band;
            assert_eq!(failing(&x), ["dcqcn: queue between Kmin and Kmax"]);
        }
    }

    fn recorded(rows: &[(f64, f64)]) -> Recorder {
        use dataplane::sim::record::{QUEUE_UNIT, RATE_UNIT, SeriesSpec};
        let spec = |name: &str, unit: &str| SeriesSpec {
            name: name.into(),
            unit: unit.into(),
        };
        let mut r = Recorder::new(vec![
            spec(QUEUE_COLUMN, QUEUE_UNIT),
            spec(TX_COLUMN, RATE_UNIT),
        ]);
        for (i, &(q, g)) in rows.iter().enumerate() {
            r.sample(i as u64 * 10_000, &[q, g]);
        }
        r
    }

    #[test]
    fn the_band_counts_from_the_first_sample_at_kmin_while_the_bottleneck_sends() {
        let e = ScenarioConfig::default().ecn.unwrap();
        // Start-up below Kmin (not counted), five sending samples of which
        // four are in 20..200 KB, then the drain after the senders stop.
        let r = recorded(&[
            (0.0, 0.1),
            (8.0, 0.1),
            (40.0, 0.1),
            (120.0, 0.1),
            (250.0, 0.1),
            (180.0, 0.1),
            (60.0, 0.1),
            (10.0, 0.0),
            (0.0, 0.0),
        ]);
        let b = queue_band(&r, &e).unwrap();
        assert_eq!(b.samples, 5);
        assert!((b.in_band_fraction - 0.8).abs() < 1e-12, "{b:?}");
        assert_eq!(b.median_kb, 120.0);
        assert_eq!(queue_band(&recorded(&[(5.0, 0.1), (10.0, 0.1)]), &e), None);
    }

    #[test]
    fn only_a_fixed_rate_lossless_run_with_ecn_compares() {
        let base = ScenarioConfig::default();
        assert!(compares(&base));
        assert!(!compares(&run_config(&base)));
        assert!(!compares(&ScenarioConfig {
            ecn: None,
            ..base.clone()
        }));
        assert!(!compares(&ScenarioConfig {
            incast_dscp: 0,
            ..base.clone()
        }));
        assert!(!compares(&ScenarioConfig {
            compare_dcqcn: false,
            ..base
        }));
    }
}
