//! Files a `rocelab run` leaves in its output directory: the verdicts and
//! measurements as CSV, and an SVG bar chart of per-flow throughput and
//! the ECMP spread (plotters, SVG backend).
//!
//! Contract: [`write_all`] creates the directory and writes
//! `verdicts.csv` (check, measured, expected, result), `incast_flows.csv`
//! (flow, tx Gbit/s, tx bytes, PFC frames seen, CNPs received),
//! `ecmp_uplinks.csv` (uplink, packets, ratio to fair share) and
//! `summary.svg`; returns the paths written. CSV fields are quoted when
//! they contain a comma or quote (RFC 4180).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use plotters::prelude::*;

use super::{Outcome, Verdict, fair_share_ratios};

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv(rows: &[Vec<String>]) -> String {
    rows.iter()
        .map(|r| r.iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(",") + "\n")
        .collect()
}

fn verdict_rows(vs: &[Verdict]) -> Vec<Vec<String>> {
    let mut rows = vec![vec![
        "check".to_string(),
        "measured".into(),
        "expected".into(),
        "result".into(),
    ]];
    rows.extend(vs.iter().map(|v| {
        vec![
            v.check.clone(),
            v.measured.clone(),
            v.expected.clone(),
            if v.pass { "PASS" } else { "FAIL" }.to_string(),
        ]
    }));
    rows
}

/// Writes only `verdicts.csv` into `dir` (scenarios without plots).
pub fn write_verdicts(dir: &Path, vs: &[Verdict]) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let p = dir.join("verdicts.csv");
    std::fs::write(&p, csv(&verdict_rows(vs)))
        .with_context(|| format!("writing {}", p.display()))?;
    Ok(p)
}

/// Writes every output file of a run into `dir`.
pub fn write_all(dir: &Path, o: &Outcome, vs: &[Verdict]) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    let mut put = |name: &str, text: String| -> Result<()> {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
        written.push(p);
        Ok(())
    };
    put("verdicts.csv", csv(&verdict_rows(vs)))?;
    let mut rows = vec![vec![
        "flow".to_string(),
        "tx_gbps".into(),
        "tx_bytes".into(),
        "pfc_rx".into(),
        "cnp_rx".into(),
    ]];
    rows.extend(o.incast.flows.iter().map(|f| {
        vec![
            f.name.clone(),
            format!("{:.4}", f.tx_gbps),
            f.tx_bytes.to_string(),
            f.pfc_rx.to_string(),
            f.cnp_rx.to_string(),
        ]
    }));
    put("incast_flows.csv", csv(&rows))?;
    let ratios = fair_share_ratios(&o.ecmp.uplink_packets);
    let mut rows = vec![vec![
        "uplink".to_string(),
        "packets".into(),
        "x_fair_share".into(),
    ]];
    rows.extend(o.ecmp.uplink_packets.iter().enumerate().map(|(i, p)| {
        vec![
            format!("leaf1 port {}", i + 1),
            p.to_string(),
            ratios.get(i).map(|r| format!("{r:.3}")).unwrap_or_default(),
        ]
    }));
    put("ecmp_uplinks.csv", csv(&rows))?;
    let svg = dir.join("summary.svg");
    draw_summary(&svg, o).map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
    written.push(svg);
    Ok(written)
}

type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;

fn draw_summary(path: &Path, o: &Outcome) -> DrawResult {
    let root = SVGBackend::new(path, (900, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(450);
    let line_gbps = o.config.speed_bps as f64 / 1e9;
    let mut bars: Vec<(String, f64)> = o
        .incast
        .flows
        .iter()
        .map(|f| (f.name.clone(), f.tx_gbps))
        .collect();
    bars.push(("receiver".into(), o.incast.rx_gbps));
    bar_chart(
        &left,
        &format!("incast throughput, Gb/s ({})", o.mode),
        &bars,
        line_gbps * 1.1,
    )?;
    let ratios = fair_share_ratios(&o.ecmp.uplink_packets);
    let bars: Vec<(String, f64)> = ratios
        .iter()
        .enumerate()
        .map(|(i, &r)| (format!("uplink {}", i + 1), r))
        .collect();
    bar_chart(
        &right,
        &format!("ECMP spread, x fair share ({} QPs)", o.ecmp.qps),
        &bars,
        2.0,
    )?;
    root.present()?;
    Ok(())
}

fn bar_chart(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    bars: &[(String, f64)],
    y_max: f64,
) -> DrawResult {
    let n = bars.len().max(1);
    // Room above the tallest bar for its label.
    let y_max = bars.iter().map(|(_, v)| v * 1.15).fold(y_max, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(40)
        .build_cartesian_2d(0f64..n as f64, 0f64..y_max.max(1e-9))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("")
        .draw()?;
    chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
        Rectangle::new(
            [(i as f64 + 0.15, 0.0), (i as f64 + 0.85, *v)],
            BLUE.mix(0.6).filled(),
        )
    }))?;
    // Each bar's name and value above it.
    chart.draw_series(bars.iter().enumerate().map(|(i, (label, v))| {
        Text::new(
            format!("{label}: {v:.3}"),
            (i as f64 + 0.15, v + y_max * 0.03),
            ("sans-serif", 12),
        )
    }))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{EcmpOutcome, IncastOutcome, ScenarioConfig, verdicts};

    #[test]
    fn csv_quotes_fields_with_commas() {
        assert_eq!(
            csv(&[vec!["a,b".into(), "c\"d".into(), "e".into()]]),
            "\"a,b\",\"c\"\"d\",e\n"
        );
    }

    #[test]
    fn every_file_is_written() {
        let o = Outcome {
            mode: "test",
            config: ScenarioConfig::default(),
            incast: IncastOutcome::default(),
            incast_dcqcn: None,
            ecmp: EcmpOutcome {
                qps: 4,
                uplink_packets: vec![3, 5],
                ..EcmpOutcome::default()
            },
        };
        let vs = verdicts(&o);
        let dir = std::env::temp_dir().join(format!("rl-out-{}", std::process::id()));
        let files = write_all(&dir, &o, &vs).unwrap();
        assert_eq!(files.len(), 4);
        let up = std::fs::read_to_string(dir.join("ecmp_uplinks.csv")).unwrap();
        assert_eq!(
            up,
            "uplink,packets,x_fair_share\nleaf1 port 1,3,0.750\nleaf1 port 2,5,1.250\n"
        );
        let svg = std::fs::read_to_string(dir.join("summary.svg")).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
        let v = std::fs::read_to_string(dir.join("verdicts.csv")).unwrap();
        assert_eq!(v.lines().count(), vs.len() + 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
