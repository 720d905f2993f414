//! What a `roceperf` client measures: the perftest family's tests
//! (`ib_write_bw`, `ib_read_bw`, `ib_send_bw`, `ib_write_lat`,
//! `ib_read_lat`, `ib_send_lat`) as a verb and a mode, the latency probe
//! that keeps one message in flight, and the perftest-style summaries.
//!
//! Bandwidth tests run the RNIC's built-in workload: a window of up to
//! `max_send_wr` messages per QP (perftest's `--tx-depth`), READs bounded by
//! `max_rd_atomic` (perftest's `--outs`, 16 here as there). A READ test's
//! bandwidth is what the client received; a WRITE or SEND test's is what it
//! sent.
//!
//! Latency tests post one signaled work request at a time on one QP
//! ([`LatencyProbe`], sans-IO: it is told `now` and the completions) and time
//! each from the post to its completion. Where this differs from perftest:
//! `ib_write_lat` and `ib_send_lat` ping-pong between two active sides and
//! report half a round trip; our server is passive, so a WRITE or SEND is
//! timed to its ACK, a whole round trip, which is how perftest reports
//! `ib_read_lat` too. Loop turns of the user-space agents on both ends are
//! inside the figure.

use std::fmt;

use dataplane::rnic::verbs::{Completion, RemoteBuf, SendWr, WcStatus, WrOp};
use serde::Serialize;

/// A perftest test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PerfTest {
    /// `ib_write_bw`: RDMA WRITE streams.
    #[default]
    WriteBw,
    /// `ib_read_bw`: RDMA READ streams (the server sends the data).
    ReadBw,
    /// `ib_send_bw`: SEND streams into the server's receives.
    SendBw,
    /// `ib_write_lat`: one RDMA WRITE in flight, timed to its ACK.
    WriteLat,
    /// `ib_read_lat`: one RDMA READ in flight, timed to its last response.
    ReadLat,
    /// `ib_send_lat`: one SEND in flight, timed to its ACK.
    SendLat,
}

impl PerfTest {
    /// Every test, in perftest's order.
    pub const ALL: [PerfTest; 6] = [
        PerfTest::WriteBw,
        PerfTest::ReadBw,
        PerfTest::SendBw,
        PerfTest::WriteLat,
        PerfTest::ReadLat,
        PerfTest::SendLat,
    ];

    /// The verb it posts.
    pub fn verb(self) -> WrOp {
        match self {
            PerfTest::WriteBw | PerfTest::WriteLat => WrOp::Write,
            PerfTest::ReadBw | PerfTest::ReadLat => WrOp::Read,
            PerfTest::SendBw | PerfTest::SendLat => WrOp::Send,
        }
    }

    /// True for the latency tests (one message in flight).
    pub fn is_latency(self) -> bool {
        matches!(
            self,
            PerfTest::WriteLat | PerfTest::ReadLat | PerfTest::SendLat
        )
    }

    /// Its name without the `ib_` prefix, as `--test` takes it.
    pub fn name(self) -> &'static str {
        match self {
            PerfTest::WriteBw => "write_bw",
            PerfTest::ReadBw => "read_bw",
            PerfTest::SendBw => "send_bw",
            PerfTest::WriteLat => "write_lat",
            PerfTest::ReadLat => "read_lat",
            PerfTest::SendLat => "send_lat",
        }
    }

    /// The payload rate a report of this test measures: what the client
    /// received for a READ test (the data flows to it), what it sent for
    /// the others, Gbit/s.
    pub fn data_gbps(self, r: &super::report::Report) -> f64 {
        if matches!(self, PerfTest::ReadBw | PerfTest::ReadLat) {
            r.rx_gbps
        } else {
            r.tx_gbps
        }
    }

    /// The message size perftest uses when none is given: 64 KiB for
    /// bandwidth, 2 bytes for latency.
    pub fn default_size_bytes(self) -> u64 {
        if self.is_latency() { 2 } else { 65_536 }
    }

    /// The test named `s` (`read_bw`, `ib_read_bw`, `read-bw`).
    pub fn parse(s: &str) -> Option<PerfTest> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        let s = s.strip_prefix("ib_").unwrap_or(&s);
        Self::ALL.into_iter().find(|t| t.name() == s)
    }
}

impl fmt::Display for PerfTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ib_{}", self.name())
    }
}

/// One message in flight on one QP, each timed from post to completion.
///
/// Call order per loop turn: [`LatencyProbe::poll_post`] (post what it
/// returns), then [`LatencyProbe::handle_completion`] for each completion of
/// the probe's QP. Samples are kept (8 bytes each) for exact percentiles.
#[derive(Debug, Clone)]
pub struct LatencyProbe {
    op: WrOp,
    len_bytes: u32,
    remote: RemoteBuf,
    iterations: Option<u64>,
    posted: u64,
    stopped: bool,
    /// (wr_id, post time ns) of the message in flight.
    in_flight: Option<(u64, u64)>,
    samples_ns: Vec<u64>,
    error: Option<WcStatus>,
}

impl LatencyProbe {
    /// A probe posting `op` of `len_bytes` to `remote`, `iterations` times
    /// (`None`: until the run ends).
    pub fn new(op: WrOp, len_bytes: u32, remote: RemoteBuf, iterations: Option<u64>) -> Self {
        let cap = iterations.unwrap_or(1 << 16).min(1 << 20) as usize;
        LatencyProbe {
            op,
            len_bytes,
            remote,
            iterations,
            posted: 0,
            stopped: false,
            in_flight: None,
            samples_ns: Vec::with_capacity(cap),
            error: None,
        }
    }

    /// The work request to post now, if the last one completed and more
    /// are due. The caller must post it (or call [`Self::post_failed`]).
    #[must_use]
    pub fn poll_post(&mut self, now_ns: u64) -> Option<SendWr> {
        if self.in_flight.is_some() || self.stopped || self.finished() {
            return None;
        }
        let wr_id = self.posted;
        self.posted += 1;
        self.in_flight = Some((wr_id, now_ns));
        Some(SendWr {
            wr_id,
            op: self.op,
            len_bytes: self.len_bytes,
            remote: self.remote,
            signaled: true,
        })
    }

    /// The RNIC refused the last work request: the probe stops.
    pub fn post_failed(&mut self) {
        self.in_flight = None;
        self.error = Some(WcStatus::WrFlushError);
    }

    /// A completion arrived at `now_ns`; true if it was the probe's.
    pub fn handle_completion(&mut self, c: &Completion, now_ns: u64) -> bool {
        match self.in_flight {
            Some((wr_id, posted_ns)) if wr_id == c.wr_id => {
                self.in_flight = None;
                if c.status == WcStatus::Success {
                    self.samples_ns.push(now_ns.saturating_sub(posted_ns));
                } else {
                    self.error = Some(c.status);
                }
                true
            }
            _ => false,
        }
    }

    /// Post nothing more; [`Self::finished`] once the message in flight
    /// completes.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// All iterations done (or stopped with nothing in flight), or an
    /// error stopped the probe.
    pub fn finished(&self) -> bool {
        self.error.is_some()
            || (self.stopped && self.in_flight.is_none())
            || self
                .iterations
                .is_some_and(|n| self.samples_ns.len() as u64 >= n)
    }

    /// Why the probe stopped early, if it did.
    pub fn error(&self) -> Option<WcStatus> {
        self.error
    }

    /// The figures over every completed message.
    pub fn summary(&self) -> LatencySummary {
        LatencySummary::of(&self.samples_ns, u64::from(self.len_bytes), self.error)
    }
}

/// Latency figures of a run, µs, as perftest's latency tests print them
/// (`t_typical` is the median).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Message size, bytes.
    pub bytes: u64,
    /// Messages timed.
    pub iterations: u64,
    /// Fastest, µs.
    pub t_min_us: f64,
    /// Slowest, µs.
    pub t_max_us: f64,
    /// Median, µs.
    pub t_typical_us: f64,
    /// Mean, µs.
    pub t_avg_us: f64,
    /// Standard deviation, µs.
    pub t_stdev_us: f64,
    /// 99th percentile (nearest rank), µs.
    pub p99_us: f64,
    /// 99.9th percentile (nearest rank), µs.
    pub p99_9_us: f64,
    /// The completion error that stopped the test (`ibv_wc_status_str`).
    pub error: Option<String>,
}

/// Nearest rank: the smallest of `sorted` with at least a `q` share
/// (0..=1) of them at or below it; 0 without samples.
pub(crate) fn nearest_rank(sorted: &[u64], q: f64) -> u64 {
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1)) - 1;
    sorted.get(i).copied().unwrap_or(0)
}

/// Mean and sample standard deviation of `samples` (0 for what too few
/// samples cannot give).
pub(crate) fn mean_stdev(samples: &[u64]) -> (f64, f64) {
    let n = samples.len() as f64;
    if samples.is_empty() {
        return (0.0, 0.0);
    }
    let mean = samples.iter().map(|&v| v as f64).sum::<f64>() / n;
    if samples.len() < 2 {
        return (mean, 0.0);
    }
    let var = samples
        .iter()
        .map(|&v| (v as f64 - mean).powi(2))
        .sum::<f64>()
        / (n - 1.0);
    (mean, var.sqrt())
}

impl LatencySummary {
    /// Figures of `samples_ns` (any order). All zero without samples.
    pub fn of(samples_ns: &[u64], bytes: u64, error: Option<WcStatus>) -> Self {
        let mut s = samples_ns.to_vec();
        s.sort_unstable();
        let us = |ns: u64| ns as f64 / 1e3;
        let (mean_ns, stdev_ns) = mean_stdev(&s);
        LatencySummary {
            bytes,
            iterations: s.len() as u64,
            t_min_us: s.first().copied().map_or(0.0, us),
            t_max_us: s.last().copied().map_or(0.0, us),
            t_typical_us: us(nearest_rank(&s, 0.5)),
            t_avg_us: mean_ns / 1e3,
            t_stdev_us: stdev_ns / 1e3,
            p99_us: us(nearest_rank(&s, 0.99)),
            p99_9_us: us(nearest_rank(&s, 0.999)),
            error: error.map(|e| e.to_string()),
        }
    }

    /// The table perftest's latency tests print.
    pub fn table(&self) -> Vec<String> {
        vec![
            RULE.to_string(),
            format!(
                " {:<7}{:<14}{:<15}{:<15}{:<17}{:<15}{:<17}{:<24}{}",
                "#bytes",
                "#iterations",
                "t_min[usec]",
                "t_max[usec]",
                "t_typical[usec]",
                "t_avg[usec]",
                "t_stdev[usec]",
                "99% percentile[usec]",
                "99.9% percentile[usec]"
            ),
            format!(
                " {:<7}{:<14}{:<15.2}{:<15.2}{:<17.2}{:<15.2}{:<17.2}{:<24.2}{:.2}",
                self.bytes,
                self.iterations,
                self.t_min_us,
                self.t_max_us,
                self.t_typical_us,
                self.t_avg_us,
                self.t_stdev_us,
                self.p99_us,
                self.p99_9_us
            ),
            RULE.to_string(),
        ]
    }
}

const RULE: &str =
    "---------------------------------------------------------------------------------------";

/// Bandwidth figures of a run as perftest's bandwidth tests print them with
/// `--report_gbits`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BandwidthSummary {
    /// Message size, bytes.
    pub bytes: u64,
    /// Messages completed.
    pub iterations: u64,
    /// Best interval's payload rate (the average without `--interval`), Gbit/s.
    pub bw_peak_gbps: f64,
    /// Payload rate over the run, Gbit/s.
    pub bw_average_gbps: f64,
    /// Messages per second, millions.
    pub msg_rate_mpps: f64,
}

impl BandwidthSummary {
    /// The table perftest's bandwidth tests print.
    pub fn table(&self) -> Vec<String> {
        vec![
            RULE.to_string(),
            format!(
                " {:<11}{:<15}{:<19}{:<21}{}",
                "#bytes", "#iterations", "BW peak[Gb/sec]", "BW average[Gb/sec]", "MsgRate[Mpps]"
            ),
            format!(
                " {:<11}{:<15}{:<19.3}{:<21.3}{:.6}",
                self.bytes,
                self.iterations,
                self.bw_peak_gbps,
                self.bw_average_gbps,
                self.msg_rate_mpps
            ),
            RULE.to_string(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dataplane::rnic::verbs::CompletionOp;

    fn completion(wr_id: u64, status: WcStatus) -> Completion {
        Completion {
            qpn: 0x100,
            wr_id,
            op: CompletionOp::Read,
            status,
            byte_len: 2,
            imm: None,
        }
    }

    #[test]
    fn names_round_trip_with_and_without_the_ib_prefix() {
        for t in PerfTest::ALL {
            assert_eq!(PerfTest::parse(t.name()), Some(t));
            assert_eq!(PerfTest::parse(&t.to_string()), Some(t));
        }
        assert_eq!(PerfTest::parse("READ-BW"), Some(PerfTest::ReadBw));
        assert_eq!(PerfTest::parse("atomic_bw"), None);
        assert_eq!(PerfTest::SendLat.verb(), WrOp::Send);
        assert_eq!(PerfTest::WriteLat.default_size_bytes(), 2);
    }

    #[test]
    fn the_probe_keeps_one_message_in_flight_and_times_each() {
        let remote = RemoteBuf { addr: 0, rkey: 1 };
        let mut p = LatencyProbe::new(WrOp::Read, 2, remote, Some(3));
        let wr = p.poll_post(1_000).expect("first post");
        assert!(wr.signaled && wr.op == WrOp::Read);
        assert_eq!(p.poll_post(1_500), None, "one in flight");
        assert!(!p.handle_completion(&completion(wr.wr_id + 7, WcStatus::Success), 1_600));
        assert!(p.handle_completion(&completion(wr.wr_id, WcStatus::Success), 4_000));
        let wr = p.poll_post(5_000).unwrap();
        assert!(p.handle_completion(&completion(wr.wr_id, WcStatus::Success), 6_000));
        let wr = p.poll_post(6_000).unwrap();
        assert!(p.handle_completion(&completion(wr.wr_id, WcStatus::Success), 8_000));
        assert!(p.finished());
        assert_eq!(p.poll_post(9_000), None, "three iterations asked");
        let s = p.summary();
        assert_eq!(s.iterations, 3);
        assert_eq!((s.t_min_us, s.t_typical_us, s.t_max_us), (1.0, 2.0, 3.0));
        assert!((s.t_avg_us - 2.0).abs() < 1e-9);
        assert!((s.t_stdev_us - 1.0).abs() < 1e-9);
        assert_eq!(s.error, None);
    }

    #[test]
    fn an_error_completion_stops_the_probe_and_is_reported() {
        let mut p = LatencyProbe::new(WrOp::Write, 2, RemoteBuf { addr: 0, rkey: 1 }, None);
        let wr = p.poll_post(0).unwrap();
        assert!(p.handle_completion(&completion(wr.wr_id, WcStatus::RetryExceeded), 10));
        assert!(p.finished());
        assert_eq!(p.poll_post(20), None);
        let s = p.summary();
        assert_eq!(s.iterations, 0);
        assert_eq!(s.error.as_deref(), Some("transport retry counter exceeded"));
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        // 1..=1000 µs: the 99th percentile is the 990th sample, 99.9th the 999th.
        let samples: Vec<u64> = (1..=1000).rev().map(|us| us * 1000).collect();
        let s = LatencySummary::of(&samples, 64, None);
        assert_eq!(s.t_typical_us, 500.0);
        assert_eq!(s.p99_us, 990.0);
        assert_eq!(s.p99_9_us, 999.0);
        assert_eq!(s.t_max_us, 1000.0);
        let t = s.table();
        assert!(t[1].contains("t_typical[usec]") && t[1].contains("99.9% percentile[usec]"));
        assert!(t[2].trim_start().starts_with("64"));
        assert_eq!(LatencySummary::of(&[], 2, None).t_max_us, 0.0);
    }
}
