//! The live incast's time series: the switch's counters sampled every
//! [`SAMPLE_EVERY`] over gRPC while the senders run, recorded with the simulator's
//! [`Recorder`] so a namespace run and a simulated one draw the same
//! figure: the bottleneck queue in KB against Kmin/Kmax, each sender's
//! ingress PG in the shared pool against the XOFF and XON thresholds (which
//! move with the free pool: the labs use a dynamic threshold), the rate each
//! sender puts into the switch and the bottleneck's rate (means over 20 ms),
//! the switch's XOFF toward each sender as shaded bands, and CNPs per second
//! to each sender.
//!
//! Everything comes from the switch: a sender's rate is what its port
//! received on the incast priority, its pause band is its ingress PG
//! asserting XOFF (the share of the sample's span it did, ≥ half = paused),
//! its CNPs are what the switch sent it on the CNP priority.
//!
//! Runs on its own thread with its own connection ([`Sampler::start`],
//! [`Sampler::finish`]); a sample is one `GetCounters`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use dataplane::sim::record::{
    CNP_UNIT, PAUSED_UNIT, PG_UNIT, QUEUE_UNIT, RATE_UNIT, Recorder, SeriesSpec,
};

use super::ScenarioConfig;
use super::switchctl::{CountersReader, PrioCounters};

/// Time between samples. A `GetCounters` runs as a job on the daemon's
/// dataplane thread: sampled every 5 ms, the debug daemon of a 100 Mb/s
/// incast lost a third of its rate (0.062 against 0.096 Gb/s of goodput);
/// every 10 ms it kept it (0.096, 0.097).
pub const SAMPLE_EVERY: Duration = Duration::from_millis(10);
/// Window the rates are averaged over in the picture.
pub const RATE_WINDOW: Duration = Duration::from_millis(20);
/// Priority CNPs travel on (DSCP 48, R-ROCE-5).
const CNP_PRIORITY: u32 = 6;
/// The incast's switch ports: senders on 0 and 1, the receiver on 2.
const SENDER_PORTS: [u32; 2] = [0, 1];
/// The receiver's switch port: the incast's bottleneck.
pub const BOTTLENECK_PORT: u32 = 2;

/// A running sampler.
pub struct Sampler {
    done: Arc<AtomicBool>,
    handle: JoinHandle<Result<Recorder>>,
}

impl Sampler {
    /// Starts sampling the switch at `addr` for the incast of `cfg`.
    pub fn start(addr: &str, cfg: &ScenarioConfig) -> Result<Sampler> {
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let addr = addr.to_string();
        let prio = u32::from(cfg.incast_priority());
        let ecn = cfg.ecn;
        let lossless = cfg.lossless();
        let handle = std::thread::Builder::new()
            .name("incast-sampler".into())
            .spawn(move || -> Result<Recorder> {
                let mut ctl = CountersReader::connect(&addr, Duration::from_secs(5))
                    .context("sampler connecting to the switch")?;
                let mut rec = recorder(ecn.is_some(), lossless);
                if let Some(e) = ecn {
                    rec.add_line(QUEUE_UNIT, "Kmin", e.kmin_bytes as f64 / 1000.0);
                    rec.add_line(QUEUE_UNIT, "Kmax", e.kmax_bytes as f64 / 1000.0);
                }
                rec.smooth(RATE_UNIT, RATE_WINDOW.as_secs_f64() * 1e6);
                rec.smooth(CNP_UNIT, RATE_WINDOW.as_secs_f64() * 1e6);
                let t0 = Instant::now();
                let mut prev = (t0, ctl.counters()?);
                while !d.load(Ordering::Relaxed) {
                    std::thread::sleep(SAMPLE_EVERY.saturating_sub(prev.0.elapsed()));
                    let now = Instant::now();
                    let c = ctl.counters()?;
                    let dt = now.duration_since(prev.0).as_secs_f64().max(1e-6);
                    let row = sample_row(&prev.1, &c, dt, prio, ecn.is_some(), lossless);
                    rec.sample(now.duration_since(t0).as_nanos() as u64, &row);
                    prev = (now, c);
                }
                Ok(rec)
            })
            .context("starting the sampler thread")?;
        Ok(Sampler { done, handle })
    }

    /// Stops sampling; the recorded series.
    pub fn finish(self) -> Result<Recorder> {
        self.done.store(true, Ordering::Relaxed);
        self.handle
            .join()
            .map_err(|_| anyhow!("the sampler thread panicked"))?
    }
}

/// Names of the ingress-PG series (the simulator's too): each sender's PG,
/// then the thresholds, read off the first sender's PG (every PG of the
/// same alpha shares them).
pub fn pg_series_names() -> Vec<String> {
    let mut names: Vec<String> = (0..SENDER_PORTS.len())
        .map(|i| format!("h{} PG (sw:p{})", i + 1, SENDER_PORTS[i]))
        .collect();
    names.push("XOFF at".into());
    names.push("XON at".into());
    names
}

/// Draws the XOFF/XON series of [`pg_series_names`] dashed.
pub fn dash_thresholds(rec: &mut Recorder) {
    for name in pg_series_names().iter().skip(SENDER_PORTS.len()) {
        rec.dash(name);
    }
}

/// The series, in the simulator's names and units.
fn recorder(ecn: bool, lossless: bool) -> Recorder {
    let s = |name: &str, unit: &str| SeriesSpec {
        name: name.into(),
        unit: unit.into(),
    };
    let mut series = vec![
        s(super::red::QUEUE_COLUMN, QUEUE_UNIT),
        s(super::red::TX_COLUMN, RATE_UNIT),
    ];
    for (i, _) in SENDER_PORTS.iter().enumerate() {
        series.push(s(&format!("h{} tx Gbps", i + 1), RATE_UNIT));
        series.push(s(&format!("h{} paused by sw", i + 1), PAUSED_UNIT));
        if ecn {
            series.push(s(&format!("h{} CNPs/s", i + 1), CNP_UNIT));
        }
    }
    if lossless {
        series.extend(pg_series_names().iter().map(|n| s(n, PG_UNIT)));
    }
    let mut rec = Recorder::new(series);
    if lossless {
        dash_thresholds(&mut rec);
    }
    rec
}

fn find(c: &[PrioCounters], port: u32, priority: u32) -> PrioCounters {
    c.iter()
        .find(|x| x.port == port && x.priority == priority)
        .copied()
        .unwrap_or_default()
}

/// One row of [`recorder`]'s series from two reads `dt` seconds apart.
fn sample_row(
    a: &[PrioCounters],
    b: &[PrioCounters],
    dt: f64,
    prio: u32,
    ecn: bool,
    lossless: bool,
) -> Vec<f64> {
    let gbps = |bytes: u64| bytes as f64 * 8.0 / dt / 1e9;
    let q = find(b, BOTTLENECK_PORT, prio);
    let mut row = vec![
        q.queue_depth_bytes as f64 / 1000.0,
        gbps(
            q.tx_bytes
                .saturating_sub(find(a, BOTTLENECK_PORT, prio).tx_bytes),
        ),
    ];
    for &port in &SENDER_PORTS {
        let (pa, pb) = (find(a, port, prio), find(b, port, prio));
        row.push(gbps(pb.rx_bytes.saturating_sub(pa.rx_bytes)));
        let xoff_share = pb.pause_tx_ns.saturating_sub(pa.pause_tx_ns) as f64 / (dt * 1e9);
        row.push(if xoff_share >= 0.5 || (pb.xoff && pa.xoff) {
            1.0
        } else {
            0.0
        });
        if ecn {
            let cnps = find(b, port, CNP_PRIORITY)
                .tx_packets
                .saturating_sub(find(a, port, CNP_PRIORITY).tx_packets);
            row.push(cnps as f64 / dt);
        }
    }
    if lossless {
        let kb = |bytes: u64| bytes as f64 / 1000.0;
        row.extend(
            SENDER_PORTS
                .iter()
                .map(|&p| kb(find(b, p, prio).pg_shared_bytes)),
        );
        let first = find(b, SENDER_PORTS[0], prio);
        row.push(kb(first.xoff_threshold_bytes));
        row.push(kb(first.xon_threshold_bytes));
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(port: u32, priority: u32, f: impl Fn(&mut PrioCounters)) -> PrioCounters {
        let mut x = PrioCounters {
            port,
            priority,
            ..PrioCounters::default()
        };
        f(&mut x);
        x
    }

    #[test]
    fn a_row_is_rates_over_the_span_and_pause_bands_from_xoff_time() {
        let a = vec![
            c(2, 3, |x| x.tx_bytes = 1_000),
            c(0, 3, |x| x.rx_bytes = 0),
            c(1, 3, |x| x.pause_tx_ns = 0),
            c(0, 6, |x| x.tx_packets = 10),
        ];
        let b = vec![
            c(2, 3, |x| {
                x.tx_bytes = 1_000 + 125_000;
                x.queue_depth_bytes = 64_000;
            }),
            c(0, 3, |x| {
                x.rx_bytes = 250_000;
                x.pg_shared_bytes = 90_000;
                x.xoff_threshold_bytes = 120_000;
                x.xon_threshold_bytes = 100_000;
            }),
            // Port 1 asserted XOFF for 7 of the 10 ms.
            c(1, 3, |x| {
                x.pause_tx_ns = 7_000_000;
                x.pg_shared_bytes = 121_000;
            }),
            c(0, 6, |x| x.tx_packets = 30),
        ];
        let row = sample_row(&a, &b, 0.010, 3, true, true);
        let rec = recorder(true, true);
        assert_eq!(row.len(), rec.series().len());
        assert_eq!(row[0], 64.0, "queue in KB");
        assert!((row[1] - 0.1).abs() < 1e-9, "125 KB in 10 ms = 0.1 Gb/s");
        assert!((row[2] - 0.2).abs() < 1e-9, "h1 sent 250 KB");
        assert_eq!(row[3], 0.0, "h1 not paused");
        assert!((row[4] - 2000.0).abs() < 1e-9, "20 CNPs in 10 ms");
        assert_eq!(row[6], 1.0, "h2 paused 70 % of the span");
        assert_eq!(rec.series()[6].unit, PAUSED_UNIT);
        assert_eq!(
            &row[8..],
            [90.0, 121.0, 120.0, 100.0],
            "PGs and thresholds in KB"
        );
        assert_eq!(rec.series()[10].name, "XOFF at");
        assert_eq!(rec.series()[11].unit, PG_UNIT);
        let lossy = sample_row(&a, &b, 0.010, 3, true, false);
        assert_eq!(lossy.len(), recorder(true, false).series().len());
        assert_eq!(lossy.len(), 8, "no PG panel on a lossy priority");
    }
}
