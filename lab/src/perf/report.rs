//! Reports of a roceperf run: counters summed over QPs, the rates derived
//! from them, and their text-table and JSON forms.
//!
//! A [`Snapshot`] is the cumulative state at one moment; the difference of
//! two snapshots over their time span is a [`Report`] (per interval with
//! `--interval`, or for the whole run). Units: bytes are RoCE payload bytes
//! (what ib_write_bw counts), rates are Gbit/s of payload and million
//! messages per second, times are milliseconds in reports and nanoseconds in
//! snapshots. [`Report::counters`] carries the RNIC's device counters under
//! the names Linux exposes in `/sys/class/infiniband/*/ports/1/counters` and
//! `hw_counters` (`port_xmit_data` in 4-byte words, as there).

use dataplane::rnic::counters::RdmaCounters;
use serde::Serialize;

/// Cumulative counters at one moment (sums over all QPs).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    /// Time since the agent started, ns.
    pub at_ns: u64,
    /// Payload bytes sent.
    pub tx_payload_bytes: u64,
    /// Data packets sent.
    pub tx_packets: u64,
    /// Messages sent.
    pub tx_messages: u64,
    /// Payload bytes received.
    pub rx_payload_bytes: u64,
    /// Data packets received.
    pub rx_packets: u64,
    /// Messages received.
    pub rx_messages: u64,
    /// PSN gap events.
    pub psn_gaps: u64,
    /// Packets missing across all gaps.
    pub psn_lost: u64,
    /// Packets behind the expected PSN (duplicates, reordering).
    pub psn_late: u64,
    /// Data packets sent again (go-back-N after a NAK or a timeout).
    pub retx_packets: u64,
    /// Payload bytes of those.
    pub retx_bytes: u64,
    /// CE-marked data packets received.
    pub rx_ce_packets: u64,
    /// CNPs sent.
    pub cnp_tx: u64,
    /// CNPs received.
    pub cnp_rx: u64,
    /// PFC frames received that named the data priority.
    pub pfc_rx: u64,
    /// Time the data priority was paused, ns.
    pub paused_ns: u64,
    /// Frames rejected by the RNIC (malformed, unknown QP, bad ICRC).
    pub rx_errors: u64,
    /// Sum of the QPs' current DCQCN rates, bit/s (not cumulative).
    pub rate_bps: u64,
    /// Lowest rate a CNP cut any QP to since the start, bit/s (0: none).
    pub rate_low_bps: u64,
    /// Device counters, Linux names.
    pub rdma: RdmaCounters,
}

/// What happened between two snapshots.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// `"interval"` or `"summary"`.
    pub kind: &'static str,
    /// `"client"` or `"server"`.
    pub role: &'static str,
    /// Start of the span, seconds since the agent started.
    pub start_s: f64,
    /// End of the span, seconds since the agent started.
    pub end_s: f64,
    /// Number of QPs.
    pub qps: usize,
    /// Payload bytes sent in the span.
    pub tx_bytes: u64,
    /// Data packets sent.
    pub tx_packets: u64,
    /// Messages sent.
    pub tx_messages: u64,
    /// Payload bytes received.
    pub rx_bytes: u64,
    /// Data packets received.
    pub rx_packets: u64,
    /// Messages received.
    pub rx_messages: u64,
    /// Payload bandwidth sent, Gbit/s.
    pub tx_gbps: f64,
    /// Payload bandwidth received, Gbit/s.
    pub rx_gbps: f64,
    /// Messages per second (sent for a client, received for a server), millions.
    pub msg_rate_mps: f64,
    /// PSN gap events (loss).
    pub psn_gaps: u64,
    /// Packets lost across the gaps.
    pub psn_lost: u64,
    /// Packets late or duplicated.
    pub psn_late: u64,
    /// Data packets retransmitted (go-back-N), included in `tx_packets`.
    pub retx_packets: u64,
    /// Payload bytes retransmitted, not included in `tx_bytes`.
    pub retx_bytes: u64,
    /// CE-marked packets received.
    pub ce_rx: u64,
    /// CNPs sent.
    pub cnp_tx: u64,
    /// CNPs received.
    pub cnp_rx: u64,
    /// PFC frames received for the data priority.
    pub pfc_rx: u64,
    /// Time the data priority was paused, ms.
    pub pause_ms: f64,
    /// Frames the RNIC rejected.
    pub rx_errors: u64,
    /// Current DCQCN sending rate summed over QPs, Gbit/s.
    pub rate_gbps: f64,
    /// Lowest rate a CNP cut any QP to since the run started, Gbit/s
    /// (0: no cut). Rate samples miss the dips: recovery takes ~0.3 ms.
    pub rate_low_gbps: f64,
    /// Device counters over the span, under their Linux names.
    pub counters: RdmaCounters,
}

impl Report {
    /// The report of the span from `a` to `b` (`b` later).
    pub fn between(
        kind: &'static str,
        role: &'static str,
        qps: usize,
        a: &Snapshot,
        b: &Snapshot,
    ) -> Self {
        let secs = (b.at_ns.saturating_sub(a.at_ns) as f64 / 1e9).max(1e-9);
        let d = |f: fn(&Snapshot) -> u64| f(b).saturating_sub(f(a));
        let tx_bytes = d(|s| s.tx_payload_bytes);
        let rx_bytes = d(|s| s.rx_payload_bytes);
        let msgs = if role == "client" {
            d(|s| s.tx_messages)
        } else {
            d(|s| s.rx_messages)
        };
        Report {
            kind,
            role,
            start_s: a.at_ns as f64 / 1e9,
            end_s: b.at_ns as f64 / 1e9,
            qps,
            tx_bytes,
            tx_packets: d(|s| s.tx_packets),
            tx_messages: d(|s| s.tx_messages),
            rx_bytes,
            rx_packets: d(|s| s.rx_packets),
            rx_messages: d(|s| s.rx_messages),
            tx_gbps: tx_bytes as f64 * 8.0 / secs / 1e9,
            rx_gbps: rx_bytes as f64 * 8.0 / secs / 1e9,
            msg_rate_mps: msgs as f64 / secs / 1e6,
            psn_gaps: d(|s| s.psn_gaps),
            psn_lost: d(|s| s.psn_lost),
            psn_late: d(|s| s.psn_late),
            retx_packets: d(|s| s.retx_packets),
            retx_bytes: d(|s| s.retx_bytes),
            ce_rx: d(|s| s.rx_ce_packets),
            cnp_tx: d(|s| s.cnp_tx),
            cnp_rx: d(|s| s.cnp_rx),
            pfc_rx: d(|s| s.pfc_rx),
            pause_ms: d(|s| s.paused_ns) as f64 / 1e6,
            rx_errors: d(|s| s.rx_errors),
            rate_gbps: b.rate_bps as f64 / 1e9,
            rate_low_gbps: b.rate_low_bps as f64 / 1e9,
            counters: b.rdma.since(&a.rdma),
        }
    }

    /// The device counters as `name value` lines (non-zero ones, or all
    /// with `all`), like `grep . /sys/class/infiniband/*/ports/1/*counters/*`.
    pub fn counter_lines(&self, all: bool) -> Vec<String> {
        self.counters
            .named()
            .into_iter()
            .filter(|&(_, v)| all || v != 0)
            .map(|(n, v)| format!("  {n:<32} {v}"))
            .collect()
    }

    /// Header line of the text table.
    pub fn table_header() -> String {
        format!(
            "{:>7} {:>7} {:>12} {:>9} {:>12} {:>9} {:>9} {:>8} {:>7} {:>7} {:>7} {:>6} {:>9}",
            "t_s",
            "kind",
            "tx_bytes",
            "tx_Gb/s",
            "rx_bytes",
            "rx_Gb/s",
            "Mmsg/s",
            "lost",
            "cnp_tx",
            "cnp_rx",
            "ce_rx",
            "pfc",
            "pause_ms"
        )
    }

    /// One row of the text table.
    pub fn table_row(&self) -> String {
        format!(
            "{:>7.2} {:>7} {:>12} {:>9.3} {:>12} {:>9.3} {:>9.4} {:>8} {:>7} {:>7} {:>7} {:>6} {:>9.1}",
            self.end_s,
            self.kind,
            self.tx_bytes,
            self.tx_gbps,
            self.rx_bytes,
            self.rx_gbps,
            self.msg_rate_mps,
            self.psn_lost,
            self.cnp_tx,
            self.cnp_rx,
            self.ce_rx,
            self.pfc_rx,
            self.pause_ms
        )
    }

    /// One JSON line.
    pub fn json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_come_from_the_difference_over_the_span() {
        let a = Snapshot {
            at_ns: 1_000_000_000,
            tx_payload_bytes: 1000,
            tx_messages: 10,
            paused_ns: 5_000_000,
            ..Snapshot::default()
        };
        let b = Snapshot {
            at_ns: 3_000_000_000,
            tx_payload_bytes: 1000 + 250_000_000,
            tx_messages: 10 + 4_000_000,
            paused_ns: 25_000_000,
            ..Snapshot::default()
        };
        let r = Report::between("summary", "client", 2, &a, &b);
        assert_eq!(r.tx_bytes, 250_000_000);
        assert!((r.tx_gbps - 1.0).abs() < 1e-9, "{}", r.tx_gbps);
        assert!((r.msg_rate_mps - 2.0).abs() < 1e-9);
        assert!((r.pause_ms - 20.0).abs() < 1e-9);
        assert_eq!((r.start_s, r.end_s), (1.0, 3.0));
        let v: serde_json::Value = serde_json::from_str(&r.json_line()).unwrap();
        assert_eq!(v["tx_bytes"], 250_000_000);
        assert_eq!(v["kind"], "summary");
    }

    #[test]
    fn linux_counter_names_in_json_and_text() {
        let a = Snapshot {
            rdma: RdmaCounters {
                packet_seq_err: 2,
                local_ack_timeout_err: 1,
                ..RdmaCounters::default()
            },
            ..Snapshot::default()
        };
        let b = Snapshot {
            at_ns: 1_000_000_000,
            rdma: RdmaCounters {
                port_xmit_data: 1000,
                packet_seq_err: 7,
                local_ack_timeout_err: 1,
                np_ecn_marked_roce_packets: 3,
                ..RdmaCounters::default()
            },
            ..Snapshot::default()
        };
        let r = Report::between("summary", "client", 1, &a, &b);
        let v: serde_json::Value = serde_json::from_str(&r.json_line()).unwrap();
        let c = &v["counters"];
        assert_eq!(c["port_xmit_data"], 1000);
        assert_eq!(c["packet_seq_err"], 5, "a difference over the span");
        assert_eq!(c["local_ack_timeout_err"], 0);
        assert_eq!(c["np_ecn_marked_roce_packets"], 3);
        for name in [
            "port_rcv_data",
            "port_xmit_packets",
            "port_rcv_packets",
            "out_of_sequence",
            "implied_nak_seq_err",
            "duplicate_request",
            "rnr_nak_retry_err",
            "np_cnp_sent",
            "rp_cnp_handled",
        ] {
            assert_eq!(c[name], 0, "{name}");
        }
        let lines = r.counter_lines(false);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[1].trim_start().starts_with("packet_seq_err"));
        assert_eq!(r.counter_lines(true).len(), 19);
    }
}
