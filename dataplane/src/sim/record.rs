//! Time-series recorder for simulator runs: named series sampled at common
//! instants, written as a wide CSV and an SVG figure: one panel per unit,
//! time in ms; rates may be drawn as means over windows of a few ms
//! ([`Recorder::smooth`]), panels may carry reference lines
//! ([`Recorder::add_line`]: Kmin, Kmax, XOFF, XON), and 0/1 pause series
//! ([`PAUSED_UNIT`]) are drawn as shaded bands, one lane per port.
//!
//! Contract: `sample` appends one row; every row has one value per series
//! (the simulator samples all probes together). Output goes into a directory
//! given by the caller, created if missing. Times are µs in the files.
//! Allocation: one `Vec<f64>` per row.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use plotters::prelude::*;

/// Errors writing recorder output.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Creating the directory or writing a file failed.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// plotters could not draw.
    #[error("plot: {0}")]
    Plot(String),
}

/// One recorded series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesSpec {
    /// Column name.
    pub name: String,
    /// Unit label; series with the same unit share a plot panel.
    pub unit: String,
}

/// Rows of samples for a fixed set of series.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    series: Vec<SeriesSpec>,
    times_us: Vec<f64>,
    rows: Vec<Vec<f64>>,
    /// Reference lines: (unit, label, value).
    lines: Vec<(String, String, f64)>,
    /// Trailing-average windows per unit, µs.
    smoothing: Vec<(String, f64)>,
    /// Series drawn dashed: thresholds that move (a dynamic XOFF/XON).
    dashed: Vec<String>,
}

impl Recorder {
    /// A recorder for the given series.
    pub fn new(series: Vec<SeriesSpec>) -> Self {
        Recorder {
            series,
            times_us: Vec::new(),
            rows: Vec::new(),
            lines: Vec::new(),
            smoothing: Vec::new(),
            dashed: Vec::new(),
        }
    }

    /// The series.
    pub fn series(&self) -> &[SeriesSpec] {
        &self.series
    }

    /// Appends a row taken at `time_ns`. `values` must have one entry per
    /// series; missing entries read as NaN, extra ones are ignored.
    pub fn sample(&mut self, time_ns: u64, values: &[f64]) {
        let mut row = vec![f64::NAN; self.series.len()];
        for (d, v) in row.iter_mut().zip(values) {
            *d = *v;
        }
        self.times_us.push(time_ns as f64 / 1000.0);
        self.rows.push(row);
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True if no rows were recorded.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// All values of the series called `name`, with their times in µs.
    pub fn column(&self, name: &str) -> Option<Vec<(f64, f64)>> {
        let i = self.series.iter().position(|s| s.name == name)?;
        Some(
            self.times_us
                .iter()
                .zip(&self.rows)
                .map(|(t, r)| (*t, r[i]))
                .collect(),
        )
    }

    /// The CSV text: header `time_us,<name [unit]>...`, one line per row.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("time_us");
        for sp in &self.series {
            let _ = write!(s, ",{} [{}]", sp.name, sp.unit);
        }
        s.push('\n');
        for (t, row) in self.times_us.iter().zip(&self.rows) {
            let _ = write!(s, "{t}");
            for v in row {
                let _ = write!(s, ",{v}");
            }
            s.push('\n');
        }
        s
    }

    /// Draws a horizontal reference line (`label` at `value`) in the
    /// panel of `unit` (Kmin/Kmax/XOFF/XON over a queue in KB).
    pub fn add_line(&mut self, unit: &str, label: &str, value: f64) {
        self.lines
            .push((unit.to_string(), label.to_string(), value));
    }

    /// Draws the series called `name` as a thin dashed line: a threshold
    /// that moves over time, read against the solid series of its panel.
    pub fn dash(&mut self, name: &str) {
        self.dashed.push(name.to_string());
    }

    /// Draws the series of `unit` as means over consecutive windows of
    /// `window_us`, one point each (rates sampled every few hundred µs read
    /// better over a few ms). The CSV keeps the samples.
    pub fn smooth(&mut self, unit: &str, window_us: f64) {
        self.smoothing.retain(|(u, _)| u != unit);
        self.smoothing.push((unit.to_string(), window_us));
    }

    /// Writes `<dir>/<stem>.csv` and `<dir>/<stem>.svg`, creating `dir`.
    pub fn write(&self, dir: &Path, stem: &str) -> Result<(), RecordError> {
        fs::create_dir_all(dir)?;
        fs::write(dir.join(format!("{stem}.csv")), self.to_csv())?;
        self.write_svg(&dir.join(format!("{stem}.svg")), stem)
    }

    /// The points drawn for column `c`, time in ms: window means if its
    /// unit is smoothed, else the samples.
    fn drawn(&self, c: usize) -> Vec<(f64, f64)> {
        let window = self
            .smoothing
            .iter()
            .find(|(u, _)| *u == self.series[c].unit)
            .map_or(0.0, |(_, w)| *w);
        let pts: Vec<(f64, f64)> = self
            .times_us
            .iter()
            .zip(&self.rows)
            .filter(|(_, r)| r[c].is_finite())
            .map(|(t, r)| (*t, r[c]))
            .collect();
        if window <= 0.0 {
            return pts.iter().map(|&(t, v)| (t / 1000.0, v)).collect();
        }
        // One point per window: the mean of its samples, at its end.
        let mut out = Vec::new();
        let (mut start, mut sum, mut n) = (pts.first().map_or(0.0, |p| p.0), 0.0, 0usize);
        for &(t, v) in &pts {
            if t - start >= window && n > 0 {
                out.push((t / 1000.0, sum / n as f64));
                (start, sum, n) = (t, 0.0, 0);
            }
            sum += v;
            n += 1;
        }
        if n > 0 {
            out.push((pts.last().map_or(0.0, |p| p.0) / 1000.0, sum / n as f64));
        }
        out
    }

    fn write_svg(&self, path: &Path, title: &str) -> Result<(), RecordError> {
        let plot = |e: &dyn std::fmt::Display| RecordError::Plot(e.to_string());
        let mut units: Vec<&str> = Vec::new();
        for s in &self.series {
            if !units.contains(&s.unit.as_str()) {
                units.push(&s.unit);
            }
        }
        let panels = units.len().max(1);
        let root = SVGBackend::new(path, (1100, 280 * panels as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| plot(&e))?;
        let areas = root.split_evenly((panels, 1));
        let t_max = (self.times_us.last().copied().unwrap_or(1.0) / 1000.0).max(1e-6);
        for (unit, area) in units.iter().zip(areas.iter()) {
            let cols: Vec<usize> = (0..self.series.len())
                .filter(|&i| self.series[i].unit == *unit)
                .collect();
            if *unit == PAUSED_UNIT {
                self.draw_bands(area, &cols, t_max, title)
                    .map_err(|e| plot(&e))?;
                continue;
            }
            let drawn: Vec<Vec<(f64, f64)>> = cols.iter().map(|&c| self.drawn(c)).collect();
            let lines: Vec<&(String, String, f64)> =
                self.lines.iter().filter(|l| l.0 == *unit).collect();
            let mut y_max = lines.iter().map(|l| l.2).fold(0.0f64, f64::max);
            for pts in &drawn {
                for (_, v) in pts {
                    y_max = y_max.max(*v);
                }
            }
            let y_max = if y_max > 0.0 { y_max * 1.08 } else { 1.0 };
            let mut chart = ChartBuilder::on(area)
                .caption(format!("{title}: {unit}"), ("sans-serif", 17))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(70)
                .build_cartesian_2d(0.0..t_max, 0.0..y_max)
                .map_err(|e| plot(&e))?;
            chart
                .configure_mesh()
                .x_desc("time [ms]")
                .y_desc(*unit)
                .label_style(("sans-serif", 14))
                .axis_desc_style(("sans-serif", 14))
                .draw()
                .map_err(|e| plot(&e))?;
            for (k, (&c, pts)) in cols.iter().zip(drawn).enumerate() {
                let color = Palette99::pick(k).to_rgba();
                if self.dashed.contains(&self.series[c].name) {
                    let style = ShapeStyle::from(&BLACK.mix(0.8)).stroke_width(1);
                    chart
                        .draw_series(DashedLineSeries::new(pts, 5, 4, style))
                        .map_err(|e| plot(&e))?
                        .label(self.series[c].name.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
                    continue;
                }
                chart
                    .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                    .map_err(|e| plot(&e))?
                    .label(self.series[c].name.clone())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                    });
            }
            for (k, (_, label, v)) in lines.iter().enumerate() {
                let color = [RED, MAGENTA, BLACK, CYAN][k % 4];
                let style = ShapeStyle::from(&color.mix(0.7)).stroke_width(1);
                chart
                    .draw_series(DashedLineSeries::new([(0.0, *v), (t_max, *v)], 6, 4, style))
                    .map_err(|e| plot(&e))?
                    .label(format!("{label} {}", round_sig(*v)))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .label_font(("sans-serif", 13))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|e| plot(&e))?;
        }
        root.present().map_err(|e| plot(&e))?;
        Ok(())
    }

    /// One lane per series of 0/1 samples, shaded where 1 (PFC pauses).
    fn draw_bands(
        &self,
        area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        cols: &[usize],
        t_max: f64,
        title: &str,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let lanes = cols.len().max(1) as f64;
        let names: Vec<String> = cols.iter().map(|&c| self.series[c].name.clone()).collect();
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("{title}: PFC pause intervals (shaded: paused)"),
                ("sans-serif", 17),
            )
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(160)
            .build_cartesian_2d(0.0..t_max, 0.0..lanes)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc("time [ms]")
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 14))
            .y_labels(cols.len() * 2 + 1)
            .y_label_formatter(&|y| {
                let lane = *y - 0.5;
                let i = lane.round();
                if (lane - i).abs() < 0.01 && i >= 0.0 && (i as usize) < names.len() {
                    names[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .draw()?;
        for (k, &c) in cols.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            let y0 = k as f64 + 0.15;
            let y1 = k as f64 + 0.85;
            let mut start: Option<f64> = None;
            let mut bands = Vec::new();
            let mut last_t = 0.0;
            for (t, r) in self.times_us.iter().zip(&self.rows) {
                let t = *t / 1000.0;
                let on = r[c].is_finite() && r[c] >= 0.5;
                match (on, start) {
                    (true, None) => start = Some(t),
                    (false, Some(s)) => {
                        bands.push((s, t));
                        start = None;
                    }
                    _ => {}
                }
                last_t = t;
            }
            if let Some(s) = start {
                bands.push((s, last_t));
            }
            chart.draw_series(bands.into_iter().map(|(a, b)| {
                Rectangle::new([(a, y0), (b.max(a + t_max / 2000.0), y1)], color.filled())
            }))?;
        }
        Ok(())
    }
}

/// `v` with at most four significant digits, for a legend (`0.09801`,
/// `20`, `1048.576` → `1049`).
fn round_sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = 4 - 1 - v.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits);
    format!("{}", (v * scale).round() / scale)
}

/// The unit of 0/1 pause probes: drawn as shaded bands, one lane each.
pub const PAUSED_UNIT: &str = "paused [0/1]";
/// Unit of queue depth series, drawn with their Kmin/Kmax/XOFF/XON lines.
pub const QUEUE_UNIT: &str = "queue [KB]";
/// Unit of rate series.
pub const RATE_UNIT: &str = "throughput [Gb/s]";
/// Unit of retransmitted-payload series (running totals).
pub const RETX_UNIT: &str = "retransmitted [MB]";
/// Unit of CNP rate series.
pub const CNP_UNIT: &str = "CNPs received [1/s]";
/// Unit of ingress priority-group series: shared-pool use against the
/// XOFF/XON thresholds, which move with the free pool.
pub const PG_UNIT: &str = "ingress PG shared [KB]";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_and_svg_are_written() {
        let mut r = Recorder::new(vec![
            SeriesSpec {
                name: "q".into(),
                unit: "bytes".into(),
            },
            SeriesSpec {
                name: "rate".into(),
                unit: "Gb/s".into(),
            },
        ]);
        r.sample(0, &[0.0, 100.0]);
        r.sample(1_500, &[2048.0, 50.0]);
        let csv = r.to_csv();
        assert_eq!(csv, "time_us,q [bytes],rate [Gb/s]\n0,0,100\n1.5,2048,50\n");
        assert_eq!(r.column("rate").unwrap(), vec![(0.0, 100.0), (1.5, 50.0)]);
        let dir = std::env::temp_dir().join(format!("roceswitch-record-{}", std::process::id()));
        r.write(&dir, "t").unwrap();
        let svg = fs::read_to_string(dir.join("t.svg")).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("rate"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn smoothed_units_are_drawn_as_window_means_and_lines_land_in_their_panel() {
        let mut r = Recorder::new(vec![
            SeriesSpec {
                name: "rate".into(),
                unit: "Gb/s".into(),
            },
            SeriesSpec {
                name: "q".into(),
                unit: "queue [KB]".into(),
            },
        ]);
        // A rate alternating 0/1 every 500 µs, a constant queue.
        for i in 0..40u64 {
            r.sample(i * 500_000, &[(i % 2) as f64, 5.0]);
        }
        assert_eq!(r.drawn(0).len(), 40, "unsmoothed: every sample");
        r.smooth("Gb/s", 2_000.0);
        let pts = r.drawn(0);
        assert_eq!(pts.len(), 10, "20 ms in windows of 2 ms: {pts:?}");
        assert!(pts.iter().all(|&(_, v)| v == 0.5), "{pts:?}");
        assert_eq!(pts[0].0, 2.0, "time in ms, at the window's end");
        r.add_line("queue [KB]", "Kmin", 20.0);
        let dir = std::env::temp_dir().join(format!("roceswitch-record-s-{}", std::process::id()));
        r.write(&dir, "t").unwrap();
        let svg = fs::read_to_string(dir.join("t.svg")).unwrap();
        assert!(svg.contains("Kmin 20") && svg.contains("time [ms]"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
