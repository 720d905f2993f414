//! Does the switch mark as its RED profile says? The incast's marked
//! fraction against the fraction the RED curve gives for the queue depths
//! the run measured.
//!
//! The curve is the one `roce_switch.p4` applies at dequeue (RFC 3168 marking
//! on the queue depth in bytes, R-ECN-3): nothing at or below Kmin, `pmax ·
//! (q − Kmin) / (Kmax − Kmin)` between Kmin and Kmax, every ECT packet above
//! Kmax. The expectation is the curve's mean over the bottleneck queue's
//! samples, each weighted by what the bottleneck sent in its span (packets
//! are one MTU each, so bytes stand for packets); spans the port sent
//! nothing in do not count. The samples come from the same recorder the
//! time-series picture is drawn from: every 0.5 ms in the simulator, every
//! 10 ms from a live switch.

use dataplane::sim::record::Recorder;

use super::{EcnSetting, Verdict, v};

/// The recorder's column holding the bottleneck queue, KB.
pub const QUEUE_COLUMN: &str = "bottleneck queue (sw:p2)";
/// The recorder's column holding what the bottleneck sent, Gb/s.
pub const TX_COLUMN: &str = "bottleneck tx Gbps";

/// Allowed distance between the marked and the expected fraction: an
/// absolute floor (a few packets when hardly anything is marked) plus a
/// share of the expectation (the queue is sampled, not seen at every
/// departure: a live switch's queue moves between XOFF and XON faster than
/// 10 ms samples show).
const ABS_TOLERANCE: f64 = 0.03;
const REL_TOLERANCE: f64 = 0.10;

/// Marking probability of an ECT packet leaving a queue of `queue_bytes`.
pub fn mark_probability(e: &EcnSetting, queue_bytes: f64) -> f64 {
    let (kmin, kmax) = (e.kmin_bytes as f64, e.kmax_bytes as f64);
    if queue_bytes > kmax {
        1.0
    } else if queue_bytes > kmin {
        e.pmax * (queue_bytes - kmin) / (kmax - kmin)
    } else {
        0.0
    }
}

/// The fraction of the bottleneck's packets the curve marks, over the
/// recorded samples; `None` when the recorder has no sample in which the
/// bottleneck sent anything.
pub fn expected_fraction(rec: &Recorder, e: &EcnSetting) -> Option<f64> {
    let queue = rec.column(QUEUE_COLUMN)?;
    let tx = rec.column(TX_COLUMN)?;
    let (mut weighted, mut weight) = (0.0, 0.0);
    for (&(_, q_kb), &(_, gbps)) in queue.iter().zip(&tx) {
        if gbps.is_finite() && q_kb.is_finite() && gbps > 0.0 {
            weighted += gbps * mark_probability(e, q_kb * 1000.0);
            weight += gbps;
        }
    }
    (weight > 0.0).then(|| weighted / weight)
}

/// The verdict line: `marked` of the bottleneck's `sent` ECT packets
/// against the `expected` fraction.
pub fn verdict(name: &str, marked: u64, sent: u64, expected: Option<f64>) -> Verdict {
    let measured = (sent > 0).then(|| marked as f64 / sent as f64);
    let text = match (measured, expected) {
        (Some(m), Some(x)) => format!("{m:.3} marked ({marked} of {sent}), curve {x:.3}"),
        _ => format!("{marked} marked of {sent} sent, no queue samples"),
    };
    let pass = match (measured, expected) {
        (Some(m), Some(x)) => (m - x).abs() <= ABS_TOLERANCE + REL_TOLERANCE * x,
        _ => false,
    };
    v(
        name,
        text,
        &format!(
            "within {ABS_TOLERANCE} + {:.0} % of the RED curve at the sampled queue depths",
            REL_TOLERANCE * 100.0
        ),
        pass,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use dataplane::sim::record::{QUEUE_UNIT, RATE_UNIT, SeriesSpec};

    const E: EcnSetting = EcnSetting {
        kmin_bytes: 20_000,
        kmax_bytes: 200_000,
        pmax: 0.2,
    };

    #[test]
    fn the_curve_is_zero_linear_then_one() {
        assert_eq!(mark_probability(&E, 20_000.0), 0.0);
        assert!((mark_probability(&E, 110_000.0) - 0.1).abs() < 1e-12);
        assert!((mark_probability(&E, 200_000.0) - 0.2).abs() < 1e-12);
        assert_eq!(mark_probability(&E, 200_001.0), 1.0);
    }

    fn rec(rows: &[(f64, f64)]) -> Recorder {
        let s = |name: &str, unit: &str| SeriesSpec {
            name: name.into(),
            unit: unit.into(),
        };
        let mut r = Recorder::new(vec![s(QUEUE_COLUMN, QUEUE_UNIT), s(TX_COLUMN, RATE_UNIT)]);
        for (i, &(q, g)) in rows.iter().enumerate() {
            r.sample(i as u64 * 1_000_000, &[q, g]);
        }
        r
    }

    #[test]
    fn the_expectation_weights_samples_by_what_was_sent_and_skips_idle_spans() {
        // 110 KB at 0.1 Gb/s (p 0.1), above Kmax at 0.3 Gb/s (p 1), and an
        // idle span whose deep queue must not count.
        let r = rec(&[(110.0, 0.1), (250.0, 0.3), (500.0, 0.0)]);
        let x = expected_fraction(&r, &E).unwrap();
        assert!((x - (0.1 * 0.1 + 0.3) / 0.4).abs() < 1e-12, "{x}");
        assert_eq!(expected_fraction(&rec(&[(50.0, 0.0)]), &E), None);
    }

    #[test]
    fn a_marker_stuck_at_pmax_fails_and_one_on_the_curve_passes() {
        // The queue sat above Kmax: every packet should have been marked.
        assert!(!verdict("x", 200, 1000, Some(1.0)).pass);
        assert!(verdict("x", 990, 1000, Some(1.0)).pass);
        // Nothing above Kmin: nothing may be marked.
        assert!(!verdict("x", 300, 1000, Some(0.0)).pass);
        assert!(verdict("x", 0, 1000, Some(0.0)).pass);
        assert!(!verdict("x", 0, 0, None).pass);
    }
}
