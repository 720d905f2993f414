//! Time-series recorder for simulator runs: named series sampled at common
//! instants, written as a wide CSV and an SVG line plot (one panel per unit).
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
}

impl Recorder {
    /// A recorder for the given series.
    pub fn new(series: Vec<SeriesSpec>) -> Self {
        Recorder {
            series,
            times_us: Vec::new(),
            rows: Vec::new(),
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

    /// Writes `<dir>/<stem>.csv` and `<dir>/<stem>.svg`, creating `dir`.
    pub fn write(&self, dir: &Path, stem: &str) -> Result<(), RecordError> {
        fs::create_dir_all(dir)?;
        fs::write(dir.join(format!("{stem}.csv")), self.to_csv())?;
        self.write_svg(&dir.join(format!("{stem}.svg")), stem)
    }

    fn write_svg(&self, path: &Path, title: &str) -> Result<(), RecordError> {
        let mut units: Vec<&str> = Vec::new();
        for s in &self.series {
            if !units.contains(&s.unit.as_str()) {
                units.push(&s.unit);
            }
        }
        let panels = units.len().max(1);
        let root = SVGBackend::new(path, (1000, 300 * panels as u32)).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| RecordError::Plot(e.to_string()))?;
        let areas = root.split_evenly((panels, 1));
        let t_max = self.times_us.last().copied().unwrap_or(1.0).max(1e-9);
        for (unit, area) in units.iter().zip(areas.iter()) {
            let cols: Vec<usize> = (0..self.series.len())
                .filter(|&i| self.series[i].unit == *unit)
                .collect();
            let mut y_max = 0.0f64;
            for r in &self.rows {
                for &c in &cols {
                    if r[c].is_finite() {
                        y_max = y_max.max(r[c]);
                    }
                }
            }
            let y_max = if y_max > 0.0 { y_max * 1.05 } else { 1.0 };
            let mut chart = ChartBuilder::on(area)
                .caption(format!("{title}: {unit}"), ("sans-serif", 16))
                .margin(8)
                .x_label_area_size(30)
                .y_label_area_size(70)
                .build_cartesian_2d(0.0..t_max, 0.0..y_max)
                .map_err(|e| RecordError::Plot(e.to_string()))?;
            chart
                .configure_mesh()
                .x_desc("time [µs]")
                .y_desc(*unit)
                .draw()
                .map_err(|e| RecordError::Plot(e.to_string()))?;
            for (k, &c) in cols.iter().enumerate() {
                let color = Palette99::pick(k).to_rgba();
                let pts = self
                    .times_us
                    .iter()
                    .zip(&self.rows)
                    .filter(|(_, r)| r[c].is_finite())
                    .map(|(t, r)| (*t, r[c]));
                chart
                    .draw_series(LineSeries::new(pts, color))
                    .map_err(|e| RecordError::Plot(e.to_string()))?
                    .label(self.series[c].name.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| RecordError::Plot(e.to_string()))?;
        }
        root.present()
            .map_err(|e| RecordError::Plot(e.to_string()))?;
        Ok(())
    }
}

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
}
