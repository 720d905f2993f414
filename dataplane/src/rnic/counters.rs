//! Counters of the RNIC model: per QP ([`QpStats`]), per RNIC
//! ([`RnicStats`]), and the device counters under the names the Linux RDMA
//! stack exposes in `/sys/class/infiniband/<dev>/ports/1/counters` and
//! `hw_counters` ([`RdmaCounters`]), so a report reads like one from a real
//! NIC.
//!
//! Contract: plain `Default + Copy` structs, monotonic except `rate_bps`.
//! `port_xmit_data` / `port_rcv_data` are in 4-byte words, as the IB
//! PortCounters define them (multiply by 4 for bytes).

use serde::Serialize;

/// Counters of one QP.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct QpStats {
    /// Payload bytes of data packets sent for the first time (requests and
    /// READ responses).
    pub tx_payload_bytes: u64,
    /// Data packets sent, retransmissions included.
    pub tx_packets: u64,
    /// Send work requests completed successfully (acknowledged).
    pub tx_messages: u64,
    /// Payload bytes accepted in order (WRITE/SEND data at a responder,
    /// READ response data at a requester).
    pub rx_payload_bytes: u64,
    /// Data packets received (any PSN).
    pub rx_packets: u64,
    /// Messages whose last packet was accepted in order.
    pub rx_messages: u64,
    /// Data packets received with CE.
    pub rx_ce_packets: u64,
    /// CNPs sent (NP).
    pub cnp_tx: u64,
    /// CNPs received (RP).
    pub cnp_rx: u64,
    /// PSN gaps: requests that arrived ahead of the expected PSN and drew a
    /// NAK (one per gap).
    pub psn_gaps: u64,
    /// Packets missing across those gaps (at the moment each was seen).
    pub psn_lost: u64,
    /// Requests that arrived behind the expected PSN (duplicates).
    pub psn_late: u64,
    /// ACKs sent (NAKs not included).
    pub ack_tx: u64,
    /// ACKs received (NAKs not included).
    pub ack_rx: u64,
    /// NAKs sent (sequence, RNR, access, invalid request).
    pub nak_tx: u64,
    /// NAKs received.
    pub nak_rx: u64,
    /// Data packets sent again (go-back-N, timeouts, duplicate READs).
    pub retx_packets: u64,
    /// Payload bytes of those.
    pub retx_bytes: u64,
    /// Requests that arrived ahead of the expected PSN (`out_of_sequence`).
    pub out_of_sequence: u64,
    /// NAK-sequence-error packets received (`packet_seq_err`).
    pub packet_seq_err: u64,
    /// Retransmission timer expiries (`local_ack_timeout_err`).
    pub local_ack_timeout_err: u64,
    /// ACKs or responses past an unfinished READ (`implied_nak_seq_err`).
    pub implied_nak_seq_err: u64,
    /// Duplicate requests received (`duplicate_request`).
    pub duplicate_request: u64,
    /// RNR NAKs received (`rnr_nak_retry_err`).
    pub rnr_nak_retry_err: u64,
    /// RNR NAKs sent: a SEND found no receive (`out_of_buffer`).
    pub out_of_buffer: u64,
    /// Remote access error NAKs received (`req_remote_access_errors`).
    pub req_remote_access_errors: u64,
    /// Remote access error NAKs sent (`resp_remote_access_errors`).
    pub resp_remote_access_errors: u64,
    /// Times the QP failed with "transport retry counter exceeded"
    /// (`req_transport_retries_exceeded`).
    pub req_transport_retries_exceeded: u64,
    /// Times the QP failed with "RNR retry counter exceeded".
    pub req_rnr_retries_exceeded: u64,
    /// READ requests executed, duplicates included (`rx_read_requests`).
    pub rx_read_requests: u64,
    /// WRITE messages received (`rx_write_requests`).
    pub rx_write_requests: u64,
    /// Packets dropped for a P_Key that does not match the QP's.
    pub pkey_violations: u64,
    /// Current sending rate, bit/s. With a pacing burst
    /// ([`super::RnicConfig::pacing_burst_ns`]) as of the QP's last data
    /// frame, CNP or [`super::Rnic::handle_timeout`]: DCQCN's rate timer
    /// is then applied when the rate is next used, not on a wake-up of its own.
    pub rate_bps: u64,
    /// Lowest rate a CNP has cut the QP to, bit/s (0: never cut). Rate
    /// samples miss DCQCN's dips: fast recovery undoes a cut in ~5 timer
    /// periods.
    pub rate_low_bps: u64,
}

/// RNIC-wide counters.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RnicStats {
    /// Frames sent (all kinds).
    pub tx_frames: u64,
    /// Frame bytes sent (without FCS).
    pub tx_bytes: u64,
    /// Frames received and accepted.
    pub rx_frames: u64,
    /// Bytes of those.
    pub rx_bytes: u64,
    /// Frames rejected (malformed, unknown QP, bad ICRC).
    pub rx_errors: u64,
    /// CE-marked RoCE packets received (`np_ecn_marked_roce_packets`).
    pub rx_ce_packets: u64,
    /// PFC frames received per priority (with the enable bit set).
    pub pfc_rx: [u64; 8],
    /// Time each priority spent paused, ns (settled at the last input).
    pub paused_ns: [u64; 8],
    /// Events not queued because the queue was full.
    pub events_dropped: u64,
}

/// Device counters under their Linux names (`counters` and `hw_counters`
/// of `/sys/class/infiniband/<dev>/ports/1/`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RdmaCounters {
    /// Octets sent / 4.
    pub port_xmit_data: u64,
    /// Octets received / 4.
    pub port_rcv_data: u64,
    /// Packets sent.
    pub port_xmit_packets: u64,
    /// Packets received.
    pub port_rcv_packets: u64,
    /// Requests that arrived ahead of the expected PSN.
    pub out_of_sequence: u64,
    /// NAK sequence errors received.
    pub packet_seq_err: u64,
    /// Retransmission timer expiries.
    pub local_ack_timeout_err: u64,
    /// Implied NAKs (ACK or response past an unfinished READ).
    pub implied_nak_seq_err: u64,
    /// Duplicate requests received.
    pub duplicate_request: u64,
    /// RNR NAKs received.
    pub rnr_nak_retry_err: u64,
    /// SENDs that found no receive (RNR NAKs sent).
    pub out_of_buffer: u64,
    /// CNPs sent (notification point).
    pub np_cnp_sent: u64,
    /// CNPs handled (reaction point).
    pub rp_cnp_handled: u64,
    /// CE-marked RoCE packets received.
    pub np_ecn_marked_roce_packets: u64,
    /// Remote access errors received by requesters.
    pub req_remote_access_errors: u64,
    /// Remote access errors sent by responders.
    pub resp_remote_access_errors: u64,
    /// QPs failed with "transport retry counter exceeded".
    pub req_transport_retries_exceeded: u64,
    /// READ requests executed.
    pub rx_read_requests: u64,
    /// WRITE requests received.
    pub rx_write_requests: u64,
}

impl RdmaCounters {
    /// Every counter with its Linux name, in sysfs order.
    pub fn named(&self) -> [(&'static str, u64); 19] {
        [
            ("port_xmit_data", self.port_xmit_data),
            ("port_rcv_data", self.port_rcv_data),
            ("port_xmit_packets", self.port_xmit_packets),
            ("port_rcv_packets", self.port_rcv_packets),
            ("out_of_sequence", self.out_of_sequence),
            ("packet_seq_err", self.packet_seq_err),
            ("local_ack_timeout_err", self.local_ack_timeout_err),
            ("implied_nak_seq_err", self.implied_nak_seq_err),
            ("duplicate_request", self.duplicate_request),
            ("rnr_nak_retry_err", self.rnr_nak_retry_err),
            ("out_of_buffer", self.out_of_buffer),
            ("np_cnp_sent", self.np_cnp_sent),
            ("rp_cnp_handled", self.rp_cnp_handled),
            (
                "np_ecn_marked_roce_packets",
                self.np_ecn_marked_roce_packets,
            ),
            ("req_remote_access_errors", self.req_remote_access_errors),
            ("resp_remote_access_errors", self.resp_remote_access_errors),
            (
                "req_transport_retries_exceeded",
                self.req_transport_retries_exceeded,
            ),
            ("rx_read_requests", self.rx_read_requests),
            ("rx_write_requests", self.rx_write_requests),
        ]
    }

    /// The counters `rnic` and its QPs add up to.
    pub(crate) fn from_stats<'a>(r: &RnicStats, qps: impl Iterator<Item = &'a QpStats>) -> Self {
        let mut c = RdmaCounters {
            port_xmit_data: r.tx_bytes / 4,
            port_rcv_data: r.rx_bytes / 4,
            port_xmit_packets: r.tx_frames,
            port_rcv_packets: r.rx_frames,
            np_ecn_marked_roce_packets: r.rx_ce_packets,
            ..RdmaCounters::default()
        };
        for q in qps {
            c.out_of_sequence += q.out_of_sequence;
            c.packet_seq_err += q.packet_seq_err;
            c.local_ack_timeout_err += q.local_ack_timeout_err;
            c.implied_nak_seq_err += q.implied_nak_seq_err;
            c.duplicate_request += q.duplicate_request;
            c.rnr_nak_retry_err += q.rnr_nak_retry_err;
            c.out_of_buffer += q.out_of_buffer;
            c.np_cnp_sent += q.cnp_tx;
            c.rp_cnp_handled += q.cnp_rx;
            c.req_remote_access_errors += q.req_remote_access_errors;
            c.resp_remote_access_errors += q.resp_remote_access_errors;
            c.req_transport_retries_exceeded += q.req_transport_retries_exceeded;
            c.rx_read_requests += q.rx_read_requests;
            c.rx_write_requests += q.rx_write_requests;
        }
        c
    }

    /// `self - earlier`, counter by counter (saturating).
    pub fn since(&self, earlier: &RdmaCounters) -> RdmaCounters {
        let a = self.named();
        let b = earlier.named();
        let mut out = [0u64; 19];
        for i in 0..19 {
            out[i] = a[i].1.saturating_sub(b[i].1);
        }
        RdmaCounters {
            port_xmit_data: out[0],
            port_rcv_data: out[1],
            port_xmit_packets: out[2],
            port_rcv_packets: out[3],
            out_of_sequence: out[4],
            packet_seq_err: out[5],
            local_ack_timeout_err: out[6],
            implied_nak_seq_err: out[7],
            duplicate_request: out[8],
            rnr_nak_retry_err: out[9],
            out_of_buffer: out[10],
            np_cnp_sent: out[11],
            rp_cnp_handled: out[12],
            np_ecn_marked_roce_packets: out[13],
            req_remote_access_errors: out[14],
            resp_remote_access_errors: out[15],
            req_transport_retries_exceeded: out[16],
            rx_read_requests: out[17],
            rx_write_requests: out[18],
        }
    }
}
