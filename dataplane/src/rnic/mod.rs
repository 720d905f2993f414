//! A sans-IO RoCE RNIC: the model behind the simulator's hosts and the
//! `roceperf` host agent.
//!
//! [`Rnic`] owns a set of Reliable Connected queue pairs ([`qp`]: requester
//! with go-back-N, retransmission timer and retry counters; responder with
//! expected-PSN tracking, coalesced ACKs, NAKs and READ responses) and the
//! memory regions peers may access. Applications post work requests
//! ([`Rnic::post_send`], [`Rnic::post_recv`]: SEND, SEND with immediate, RDMA
//! WRITE (with immediate), RDMA READ) and read completions from
//! [`Rnic::poll_event`]; a QP may also run a built-in workload (a stream of
//! one verb, [`QpConfig::message_bytes`]), as `ib_write_bw` does. Frames are
//! RoCE v2 or RoCE v1 ([`RnicConfig::roce_version`], [`frame`]), optionally
//! VLAN-tagged, paced per QP at its DCQCN rate; CE-marked packets draw CNPs.
//!
//! Contract (quinn-proto style): no clock, no socket. Times are
//! [`Instant`]s (monotonic nanoseconds, [`crate::time`]); rates bit/s; sizes
//! bytes. Inputs are `handle_*`, outputs `poll_*`. Call order after any
//! input or when `poll_timeout` expires:
//! 1. [`Rnic::handle_timeout`] if the deadline passed,
//! 2. [`Rnic::poll_transmit`] whenever the wire is free, until it returns `None`,
//! 3. [`Rnic::poll_event`] until `None`,
//! 4. [`Rnic::poll_timeout`] to learn when to call again.
//!
//! Calling early is harmless; calling late delays service. Nothing panics on
//! bad input: malformed frames are counted and returned as errors. The data
//! path allocates only when a queue outgrows its capacity; events beyond
//! [`EVENT_QUEUE_LIMIT`] are counted and dropped.
//!
//! Spec: IBTA Vol. 1 ch. 9 (RC transport, [`qp`]); roce-semantics §10 (frame
//! format, CNP R-ROCE-5, source port R-ROCE-9), §11 R-NP-1 (CNP at most once
//! per QP per interval, E-16), R-RP-1..4 (DCQCN, [`dcqcn`]), §3 R-PFC-RX-1/2
//! (a paused priority starts no new frame until the pause expires or an XON
//! arrives; pause time = quanta·512 bit times at the line rate).
//!
//! Serialisation is the caller's job: `poll_transmit` is a pull — call it
//! when the link can start a frame. Pacing here only spaces a QP's data
//! frames at its DCQCN rate (wire bytes incl. FCS, preamble and IFG, see
//! [`WIRE_OVERHEAD_BYTES`]); ACKs, NAKs and CNPs are not paced.

pub mod counters;
pub mod dcqcn;
pub mod frame;
pub mod qp;
pub mod verbs;

use std::collections::VecDeque;
use std::net::Ipv4Addr;

use crate::time::{Instant, pause_quanta_to_duration};
use crate::wire::ethernet::wire_len;
use crate::wire::ib::{BthRepr, DEFAULT_PKEY, Opcode, PSN_MASK};
use crate::wire::ip::Ecn;
use crate::wire::pfc::PfcRepr;
use counters::RdmaCounters;
pub use counters::{QpStats, RnicStats};
use dcqcn::{Dcqcn, DcqcnConfig};
use frame::{RoceError, RoceExt, RoceFrameRepr, RoceVersion, Vlan, udp_src_port_from_qpns};
use qp::{Ctx, Pkt, Qp};
use verbs::{Completion, MemoryRegion, RecvWr, RemoteBuf, SendWr, WcStatus, WrOp};

pub use crate::wire::ethernet::WIRE_OVERHEAD_BYTES;

/// Bytes that always hold a frame's headers, Ethernet (802.1Q-tagged)
/// to the last transport header (a GRH, BTH, RETH and ImmDt come to 90).
pub const MAX_HEADERS_LEN: usize = 128;

/// Most events kept for [`Rnic::poll_event`]; more are counted in
/// [`RnicStats::events_dropped`].
pub const EVENT_QUEUE_LIMIT: usize = 1 << 16;

/// Errors from [`Rnic::handle_frame`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RnicError {
    /// The frame is not a parseable RoCE frame.
    #[error("bad frame: {0}")]
    Frame(#[from] RoceError),
    /// The destination QP is not configured here.
    #[error("unknown destination QP {0:#x}")]
    UnknownQp(u32),
    /// The frame failed its ICRC.
    #[error("ICRC mismatch")]
    Icrc,
}

/// Errors from [`Rnic::add_qp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AddQpError {
    /// A QP with this number exists.
    #[error("QP {0:#x} already exists")]
    Duplicate(u32),
    /// QP numbers are 24 bits.
    #[error("QP number {0:#x} does not fit 24 bits")]
    BadQpn(u32),
}

/// Errors from [`Rnic::post_send`] and [`Rnic::post_recv`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PostError {
    /// No such QP.
    #[error("unknown QP {0:#x}")]
    UnknownQp(u32),
    /// The QP is in the error state.
    #[error("the QP is in the error state")]
    QpInError,
    /// The send queue holds `max_send_wr` requests.
    #[error("send queue full")]
    QueueFull,
}

/// Errors from [`Rnic::register_mr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RegisterMrError {
    /// A region with this R_Key exists.
    #[error("R_Key {0:#x} is in use")]
    DuplicateRkey(u32),
}

/// RNIC-wide configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct RnicConfig {
    /// Our MAC address.
    pub mac: [u8; 6],
    /// Our IPv4 address (RoCE v1: the IPv4-mapped GID).
    pub ip: Ipv4Addr,
    /// Line rate in bit/s (pacing starts here; pause quanta are measured at it).
    pub line_rate_bps: u64,
    /// Largest payload per packet in bytes (the RoCE path MTU).
    pub mtu_bytes: usize,
    /// DSCP of data and ACKs (26 → priority 3).
    pub data_dscp: u8,
    /// Priority data and ACKs travel on, for honouring PFC (and the VLAN PCP).
    pub data_priority: u8,
    /// DSCP of CNPs (48 → priority 6, R-ROCE-5).
    pub cnp_dscp: u8,
    /// Priority of CNPs.
    pub cnp_priority: u8,
    /// Send data as ECT(0) (needed for ECN marking).
    pub ecn_capable: bool,
    /// NP: minimum gap between CNPs for one QP, ns (R-NP-1, 50 µs).
    pub cnp_interval_ns: u64,
    /// RP: DCQCN parameters, `None` = fixed line rate.
    pub dcqcn: Option<DcqcnConfig>,
    /// Responder: also ACK every this many packets without AckReq (0 = only
    /// on AckReq, i.e. the last packet of each message).
    pub ack_every_packets: u32,
    /// RoCE v2 (IPv4/UDP) or v1 (GRH over Ethernet).
    pub roce_version: RoceVersion,
    /// Tag frames with this VLAN id, PCP = the frame's priority (RoCE v1
    /// needs it for a priority).
    pub vlan_id: Option<u16>,
    /// Register [`verbs::default_mr`] (remote read and write), the target
    /// of every QP's default [`QpConfig::remote_buf`].
    pub default_mr: bool,
    /// How far ahead of `now` a QP's pacer may run, ns: data frames worth
    /// up to this much wire time at the QP's rate leave together, as a
    /// train, and the mean rate stays the QP's; a caller that comes late by
    /// up to as much again still gets the missed time (so after an idle
    /// spell a train may hold twice the burst). 0 spaces every frame
    /// exactly. A host agent in user space sets it so that it sends
    /// batches and wakes a few thousand times a second instead of once a
    /// frame ([`Rnic::poll_timeout`] then asks to be called when half of
    /// it is free again).
    pub pacing_burst_ns: u64,
}

impl Default for RnicConfig {
    fn default() -> Self {
        RnicConfig {
            mac: [2, 0, 0, 0, 0, 1],
            ip: Ipv4Addr::new(10, 0, 0, 1),
            line_rate_bps: 100_000_000_000,
            mtu_bytes: 1024,
            data_dscp: 26,
            data_priority: 3,
            cnp_dscp: 48,
            cnp_priority: 6,
            ecn_capable: true,
            cnp_interval_ns: dcqcn::DEFAULT_CNP_INTERVAL_NS,
            dcqcn: Some(DcqcnConfig::default()),
            ack_every_packets: 0,
            roce_version: RoceVersion::V2,
            vlan_id: None,
            default_mr: true,
            pacing_burst_ns: 0,
        }
    }
}

/// One RC QP: its connection, its transport attributes (as
/// `ibv_modify_qp` sets them) and an optional built-in workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpConfig {
    /// Our QP number (24 bits).
    pub local_qpn: u32,
    /// The peer's QP number.
    pub remote_qpn: u32,
    /// Peer IPv4 address.
    pub remote_ip: Ipv4Addr,
    /// Next-hop MAC for frames to the peer.
    pub remote_mac: [u8; 6],
    /// Built-in workload: size of each message in bytes (0 = none).
    pub message_bytes: u64,
    /// Built-in workload: number of messages (`None` = forever).
    pub messages: Option<u64>,
    /// Built-in workload: the verb (WRITE by default).
    pub verb: WrOp,
    /// Built-in workload: the peer buffer WRITEs and READs target.
    pub remote_buf: RemoteBuf,
    /// First PSN we send (`sq_psn`).
    pub initial_psn: u32,
    /// First PSN we expect from the peer (`rq_psn`).
    pub expected_psn: u32,
    /// Partition key of the QP's packets.
    pub pkey: u16,
    /// Retransmission timeout exponent: 4.096 µs × 2^timeout (0 = infinite).
    pub timeout: u8,
    /// Retries after timeouts and sequence NAKs before the QP fails.
    pub retry_cnt: u8,
    /// Retries after RNR NAKs (7 = infinite).
    pub rnr_retry: u8,
    /// RNR timer code this responder advertises (IBTA table 45).
    pub min_rnr_timer: u8,
    /// Most messages in flight (send queue depth).
    pub max_send_wr: u32,
    /// Most READs in flight as requester (initiator depth).
    pub max_rd_atomic: u8,
    /// Most READs queued as responder (responder resources).
    pub max_dest_rd_atomic: u8,
    /// Every SEND finds a receive (an application that always reposts);
    /// `false`: only posted receives, else RNR NAK.
    pub auto_recv: bool,
}

impl Default for QpConfig {
    /// perftest's defaults: timeout 14 (67 ms), retry_cnt 7, rnr_retry 7,
    /// min_rnr_timer 12 (0.64 ms), 128 outstanding, 16 READs.
    fn default() -> Self {
        QpConfig {
            local_qpn: 1,
            remote_qpn: 1,
            remote_ip: Ipv4Addr::UNSPECIFIED,
            remote_mac: [0; 6],
            message_bytes: 0,
            messages: None,
            verb: WrOp::Write,
            remote_buf: RemoteBuf {
                addr: verbs::DEFAULT_MR_ADDR,
                rkey: verbs::DEFAULT_RKEY,
            },
            initial_psn: 0,
            expected_psn: 0,
            pkey: DEFAULT_PKEY,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 12,
            max_send_wr: 128,
            max_rd_atomic: 16,
            max_dest_rd_atomic: 16,
            auto_recv: true,
        }
    }
}

/// State of a QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QpState {
    /// Ready to send.
    Rts,
    /// Failed; the status says why ("transport retry counter exceeded", ...).
    Error(WcStatus),
}

/// Something the application may want to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RnicEvent {
    /// A work request finished (signaled ones, and every error).
    Completion(Completion),
    /// A QP entered the error state.
    QpError {
        /// Local QP.
        qpn: u32,
        /// Why.
        status: WcStatus,
    },
    /// A request arrived ahead of the expected PSN: packets were lost.
    PsnGap {
        /// Local QP.
        qpn: u32,
        /// The PSN that was due.
        expected: u32,
        /// The PSN that arrived.
        got: u32,
    },
}

/// The bounded event queue.
#[derive(Debug, Default)]
pub(crate) struct Events {
    q: VecDeque<RnicEvent>,
    dropped: u64,
}

impl Events {
    pub(crate) fn push(&mut self, e: RnicEvent) {
        if self.q.len() >= EVENT_QUEUE_LIMIT {
            self.dropped += 1;
        } else {
            self.q.push_back(e);
        }
    }
}

/// Descriptor of a frame written by [`Rnic::poll_transmit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    /// Length of the whole frame in bytes (no FCS).
    pub frame_len: usize,
    /// Bytes actually written: `frame_len`, or only the headers if the
    /// buffer was shorter than the frame (the simulator's header-only mode).
    pub written_len: usize,
    /// Priority the frame travels on.
    pub priority: u8,
}

#[derive(Debug, Clone, Copy, Default)]
struct PauseState {
    until_ns: u64,
    since_ns: Option<u64>,
}

/// A RoCE RNIC model. See the module doc for the call order.
#[derive(Debug)]
pub struct Rnic {
    cfg: RnicConfig,
    qps: Vec<Qp>,
    mrs: Vec<MemoryRegion>,
    rr_next: usize,
    /// QPs with a control frame (CNP, ACK, NAK) ready, oldest first.
    control: VecDeque<usize>,
    events: Events,
    pause: [PauseState; 8],
    stats: RnicStats,
}

impl Rnic {
    /// An RNIC with no QPs (and the default memory region, if configured).
    pub fn new(cfg: RnicConfig) -> Self {
        let mrs = if cfg.default_mr {
            vec![verbs::default_mr()]
        } else {
            Vec::new()
        };
        Rnic {
            cfg,
            qps: Vec::new(),
            mrs,
            rr_next: 0,
            control: VecDeque::new(),
            events: Events::default(),
            pause: [PauseState::default(); 8],
            stats: RnicStats::default(),
        }
    }

    /// Moves data and ACKs to `priority` marked `dscp` (and the PFC class
    /// honoured with them), as a willing DCBX host does when it adopts the
    /// switch's application priority. Frames already queued keep theirs.
    pub fn set_data_class(&mut self, priority: u8, dscp: u8) {
        self.cfg.data_priority = priority & 7;
        self.cfg.data_dscp = dscp & 0x3f;
    }

    // ------------------------------------------------------------ getters

    /// The configuration.
    pub fn config(&self) -> &RnicConfig {
        &self.cfg
    }

    /// The longest frame [`Rnic::poll_transmit`] can write with this
    /// configuration: the MTU's payload, its pad, the ICRC and the longest
    /// headers. A buffer this long always receives the whole frame.
    pub fn max_frame_len(&self) -> usize {
        MAX_HEADERS_LEN + self.cfg.mtu_bytes.max(1) + 3 + crate::wire::ib::ICRC_LEN
    }

    /// RNIC-wide counters.
    pub fn stats(&self) -> RnicStats {
        let mut s = self.stats;
        s.events_dropped = self.events.dropped;
        s
    }

    /// The device counters under their Linux names.
    pub fn counters(&self) -> RdmaCounters {
        RdmaCounters::from_stats(&self.stats, self.qps.iter().map(|q| &q.stats))
    }

    /// Counters of QP `qpn`, if it exists.
    pub fn qp_stats(&self, qpn: u32) -> Option<QpStats> {
        self.qp_index(qpn).map(|i| {
            let q = &self.qps[i];
            let mut s = q.stats;
            s.rate_bps = q.rate_bps() as u64;
            s
        })
    }

    /// State of QP `qpn`.
    pub fn qp_state(&self, qpn: u32) -> Option<QpState> {
        self.qp_index(qpn).map(|i| self.qps[i].state)
    }

    /// Numbers of all QPs, in creation order.
    pub fn qpns(&self) -> impl Iterator<Item = u32> + '_ {
        self.qps.iter().map(|q| q.cfg.local_qpn)
    }

    /// True if priority `p` is paused at `now_ns`.
    pub fn is_paused(&self, priority: u8, now: Instant) -> bool {
        let now_ns = now.as_nanos();
        self.pause
            .get(usize::from(priority))
            .is_some_and(|p| p.until_ns > now_ns)
    }

    /// True if nothing is left to do: every workload done and acknowledged
    /// (or its QP failed), no READ response and no control frame pending.
    pub fn is_idle(&self) -> bool {
        self.control.is_empty() && self.qps.iter().all(Qp::is_idle)
    }

    fn qp_index(&self, qpn: u32) -> Option<usize> {
        self.qps.iter().position(|q| q.cfg.local_qpn == qpn)
    }

    // ------------------------------------------------------------ commands

    /// Adds an RC QP (in RTS) with its workload.
    pub fn add_qp(&mut self, cfg: QpConfig) -> Result<(), AddQpError> {
        if cfg.local_qpn > PSN_MASK || cfg.remote_qpn > PSN_MASK {
            return Err(AddQpError::BadQpn(cfg.local_qpn.max(cfg.remote_qpn)));
        }
        if self.qp_index(cfg.local_qpn).is_some() {
            return Err(AddQpError::Duplicate(cfg.local_qpn));
        }
        let line = self.cfg.line_rate_bps;
        self.qps.push(Qp::new(
            cfg,
            udp_src_port_from_qpns(cfg.local_qpn, cfg.remote_qpn),
            line as f64,
            self.cfg.dcqcn.map(|c| Dcqcn::new(c, line)),
        ));
        Ok(())
    }

    /// Registers a memory region peers may WRITE to or READ from.
    pub fn register_mr(&mut self, mr: MemoryRegion) -> Result<(), RegisterMrError> {
        if self.mrs.iter().any(|m| m.rkey == mr.rkey) {
            return Err(RegisterMrError::DuplicateRkey(mr.rkey));
        }
        self.mrs.push(mr);
        Ok(())
    }

    /// Posts a send work request on `qpn` (`ibv_post_send`).
    pub fn post_send(&mut self, qpn: u32, wr: SendWr) -> Result<(), PostError> {
        let i = self.qp_index(qpn).ok_or(PostError::UnknownQp(qpn))?;
        self.qps[i].post_send(wr)
    }

    /// Posts a receive on `qpn` (`ibv_post_recv`); used when the QP's
    /// `auto_recv` is off.
    pub fn post_recv(&mut self, qpn: u32, wr: RecvWr) -> Result<(), PostError> {
        let i = self.qp_index(qpn).ok_or(PostError::UnknownQp(qpn))?;
        self.qps[i].post_recv(wr)
    }

    // ------------------------------------------------------------ inputs

    /// A PFC frame arrived. For each enabled priority p with time q: q > 0 pauses for q·512 bit times from now, replacing any
    /// remaining pause; q = 0 resumes now (R-PFC-RX-1/2).
    pub fn handle_pfc(&mut self, now: Instant, pfc: &PfcRepr) {
        let now_ns = now.as_nanos();
        self.settle_pauses(now_ns);
        for (p, &q) in pfc.quanta.iter().enumerate() {
            if !pfc.is_enabled(p as u8) {
                continue;
            }
            self.stats.pfc_rx[p] += 1;
            let st = &mut self.pause[p];
            if q == 0 {
                if let Some(since) = st.since_ns.take() {
                    self.stats.paused_ns[p] += now_ns.saturating_sub(since);
                }
                st.until_ns = now_ns;
            } else {
                let dur_ns = pause_quanta_to_duration(q, self.cfg.line_rate_bps).as_nanos();
                st.until_ns = now_ns + dur_ns.max(1);
                st.since_ns.get_or_insert(now_ns);
            }
        }
    }

    /// A frame arrived. `frame` may be whole (ICRC checked) or headers only;
    /// 802.1Q-tagged or not; RoCE v1 or v2.
    pub fn handle_frame(&mut self, now: Instant, frame: &[u8]) -> Result<(), RnicError> {
        let now_ns = now.as_nanos();
        let parsed = match RoceFrameRepr::parse(frame) {
            Ok(p) => p,
            Err(e) => {
                self.stats.rx_errors += 1;
                return Err(e.into());
            }
        };
        if parsed.icrc_ok == Some(false) {
            self.stats.rx_errors += 1;
            return Err(RnicError::Icrc);
        }
        let r = parsed.repr;
        let Some(idx) = self.qp_index(r.bth.dest_qp) else {
            self.stats.rx_errors += 1;
            return Err(RnicError::UnknownQp(r.bth.dest_qp));
        };
        self.stats.rx_frames += 1;
        self.stats.rx_bytes += parsed.frame_len as u64;
        let op = r.bth.opcode;
        let data = op.is_rc_request() || op.is_read_response();
        if data && r.ip.ecn == Ecn::Ce {
            self.stats.rx_ce_packets += 1;
        }
        let mut ctx = Ctx {
            mtu: self.cfg.mtu_bytes.max(1) as u64,
            ack_every: self.cfg.ack_every_packets,
            mrs: &self.mrs,
            events: &mut self.events,
        };
        let qp = &mut self.qps[idx];
        if qp.state != QpState::Rts {
            return Ok(());
        }
        if op != Opcode::Cnp && !pkey_match(r.bth.pkey, qp.cfg.pkey) {
            qp.stats.pkey_violations += 1;
            return Ok(());
        }
        if data {
            qp.stats.rx_packets += 1;
            if r.ip.ecn == Ecn::Ce {
                qp.stats.rx_ce_packets += 1;
                // R-NP-1: at most one CNP per QP per interval.
                if qp
                    .last_cnp_ns
                    .is_none_or(|t| now_ns.saturating_sub(t) >= self.cfg.cnp_interval_ns)
                {
                    qp.last_cnp_ns = Some(now_ns);
                    qp.cnp_pending = true;
                }
            }
        }
        match op {
            Opcode::Cnp => {
                qp.stats.cnp_rx += 1;
                if let Some(d) = qp.dcqcn.as_mut() {
                    // The increases due before this CNP first.
                    catch_up_rate_timer(&self.cfg, d, now);
                    d.on_cnp(now);
                    let rate = d.rate_bps() as u64;
                    let low = &mut qp.stats.rate_low_bps;
                    *low = if *low == 0 { rate } else { (*low).min(rate) };
                    tracing::trace!(qpn = qp.cfg.local_qpn, rate_bps = rate, "CNP");
                }
            }
            Opcode::RcAcknowledge => {
                if let RoceExt::Aeth(a) = r.ext {
                    qp.handle_ack(r.bth.psn, a, now_ns, &mut ctx);
                }
            }
            _ if op.is_read_response() => {
                qp.handle_read_response(r.bth.psn, r.payload_len, now_ns, &mut ctx)
            }
            _ if op.is_rc_request() => qp.handle_request(&r, &mut ctx),
            _ => {}
        }
        self.enqueue_control(idx);
        Ok(())
    }

    fn enqueue_control(&mut self, idx: usize) {
        let qp = &mut self.qps[idx];
        if qp.control_ready() && !qp.in_control {
            qp.in_control = true;
            self.control.push_back(idx);
        }
    }

    /// Runs timers due at `now`: DCQCN, retransmission and RNR waits; settles
    /// pause accounting. Spurious calls do nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        let now_ns = now.as_nanos();
        self.settle_pauses(now_ns);
        let mut ctx = Ctx {
            mtu: self.cfg.mtu_bytes.max(1) as u64,
            ack_every: self.cfg.ack_every_packets,
            mrs: &self.mrs,
            events: &mut self.events,
        };
        for qp in &mut self.qps {
            if let Some(d) = qp.dcqcn.as_mut()
                && d.poll_timeout().is_some_and(|t| t <= now)
            {
                d.handle_timeout(now);
            }
            qp.handle_timeout(now_ns, &mut ctx);
        }
    }

    fn settle_pauses(&mut self, now_ns: u64) {
        for (p, st) in self.pause.iter_mut().enumerate() {
            if let Some(since) = st.since_ns
                && st.until_ns <= now_ns
            {
                self.stats.paused_ns[p] += st.until_ns.saturating_sub(since);
                st.since_ns = None;
            }
        }
    }

    // ------------------------------------------------------------ outputs

    /// Writes the next frame into `buf` if one may start at `now`: control
    /// frames (CNP, ACK, NAK) first, then data (READ responses, then
    /// requests) from QPs in round-robin order whose priority is not paused
    /// and whose pacer allows. If `buf` is shorter than the frame only the
    /// headers are written; `buf` must hold at least the headers
    /// ([`MAX_HEADERS_LEN`] is always enough), else `None` and nothing is
    /// lost; [`Rnic::max_frame_len`] always holds the whole frame.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let now_ns = now.as_nanos();
        self.settle_pauses(now_ns);
        if let Some(t) = self.transmit_control(now, buf) {
            return Some(t);
        }
        let prio = self.cfg.data_priority;
        if self.is_paused(prio, now) || self.qps.is_empty() {
            return None;
        }
        let mtu = self.cfg.mtu_bytes.max(1) as u64;
        let n = self.qps.len();
        let pace_until_ns = now_ns.saturating_add(self.cfg.pacing_burst_ns);
        for k in 0..n {
            let idx = (self.rr_next + k) % n;
            let qp = &mut self.qps[idx];
            if !qp.data_ready() || qp.next_tx_ns > pace_until_ns {
                continue;
            }
            let Some(pkt) = qp.next_data(mtu) else {
                continue;
            };
            let ecn = if self.cfg.ecn_capable {
                Ecn::Ect0
            } else {
                Ecn::NotEct
            };
            let repr = self.repr(idx, &pkt, self.cfg.data_dscp, ecn, prio);
            let t = self.write(&repr, buf, prio)?;
            self.rr_next = (idx + 1) % n;
            let qp = &mut self.qps[idx];
            qp.data_sent(&pkt, now_ns, mtu);
            // The rate timer's events due by now, before the rate spaces
            // this frame.
            if let Some(d) = qp.dcqcn.as_mut() {
                catch_up_rate_timer(&self.cfg, d, now);
            }
            let wire_bytes = wire_len(t.frame_len, WIRE_OVERHEAD_BYTES) as u64;
            let gap_ns = ((wire_bytes * 8) as f64 * 1e9 / qp.rate_bps().max(1.0)).round() as u64;
            // A caller late by up to the burst makes the missed time up.
            let behind_ns = now_ns.saturating_sub(self.cfg.pacing_burst_ns);
            qp.next_tx_ns = qp.next_tx_ns.max(behind_ns) + gap_ns;
            if let Some(d) = qp.dcqcn.as_mut() {
                d.on_sent(wire_bytes);
            }
            // An ACK held back behind READ responses may go now.
            self.enqueue_control(idx);
            return Some(t);
        }
        None
    }

    fn transmit_control(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let mut pos = 0;
        while pos < self.control.len() {
            let idx = self.control[pos];
            let qp = &self.qps[idx];
            if !qp.control_ready() {
                self.qps[idx].in_control = false;
                self.control.remove(pos);
                continue;
            }
            let cnp_prio = self.cfg.cnp_priority;
            let data_prio = self.cfg.data_priority;
            let sent = if qp.cnp_pending && !self.is_paused(cnp_prio, now) {
                let mut bth = BthRepr::new(Opcode::Cnp, qp.cfg.remote_qpn, 0, false);
                bth.becn = true;
                let repr = self.frame_repr(
                    idx,
                    bth,
                    RoceExt::CnpPad,
                    None,
                    0,
                    self.cfg.cnp_dscp,
                    Ecn::NotEct,
                    cnp_prio,
                );
                let t = self.write(&repr, buf, cnp_prio)?;
                let qp = &mut self.qps[idx];
                qp.cnp_pending = false;
                qp.stats.cnp_tx += 1;
                Some(t)
            } else if let Some(pkt) = qp.next_control()
                && !self.is_paused(data_prio, now)
            {
                let repr = self.repr(idx, &pkt, self.cfg.data_dscp, Ecn::NotEct, data_prio);
                let t = self.write(&repr, buf, data_prio)?;
                self.qps[idx].control_sent();
                Some(t)
            } else {
                None
            };
            match sent {
                Some(t) => {
                    if !self.qps[idx].control_ready() {
                        self.qps[idx].in_control = false;
                        self.control.remove(pos);
                    }
                    return Some(t);
                }
                None => pos += 1,
            }
        }
        None
    }

    /// When to call again: the earliest of the DCQCN timers, a pacer
    /// release, a retransmission timer, an RNR wait, or a pause expiry that
    /// blocks pending work. `None` = only an input can create work. Changes after
    /// any `handle_*` or `poll_transmit`.
    ///
    /// With a pacing burst ([`RnicConfig::pacing_burst_ns`] > 0) DCQCN's
    /// rate timer asks for no wake-up: the rate only matters when a frame
    /// is paced or a CNP cuts it, and both apply every timer event due by
    /// then first, in order. A host agent in user space at a reduced rate
    /// at 1 Gb/s would otherwise wake every 138 µs for the timer alone,
    /// and on a busy machine each wake-up may come late (measured in the
    /// 1 Gb/s lab at load ~9: with the timer's wake-ups and the short
    /// waits they caused, one sender's pacer lost 2.1 s of a 4 s run to
    /// late turns, 28 ms without). Without a burst (exact pacing, the
    /// simulator's hosts) the timer stays a deadline, so simulated runs
    /// are unchanged.
    #[must_use]
    pub fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        let now_ns = now.as_nanos();
        let mut t: Option<u64> = None;
        let mut take = |x: u64| t = Some(t.map_or(x, |y: u64| y.min(x)));
        let mut data_waiting = false;
        let timer_wakes = self.cfg.pacing_burst_ns == 0;
        for qp in &self.qps {
            if timer_wakes && let Some(d) = qp.dcqcn.as_ref().and_then(Dcqcn::poll_timeout) {
                take(d.as_nanos());
            }
            if let Some(x) = qp.req.timer_ns {
                take(x);
            }
            if let Some(x) = qp.req.rnr_until_ns {
                take(x);
            }
            if qp.data_ready() {
                data_waiting = true;
                let burst = self.cfg.pacing_burst_ns;
                if qp.next_tx_ns > now_ns.saturating_add(burst) {
                    // Half the burst free again: a train, not one frame.
                    take(qp.next_tx_ns - burst / 2);
                }
            }
        }
        for (p, st) in self.pause.iter().enumerate() {
            if st.until_ns > now_ns {
                let blocks_data = p == usize::from(self.cfg.data_priority) && data_waiting;
                if blocks_data || !self.control.is_empty() || st.since_ns.is_some() {
                    take(st.until_ns);
                }
            }
        }
        t.map(Instant::from_nanos)
    }

    /// The next queued notification.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<RnicEvent> {
        self.events.q.pop_front()
    }

    // ------------------------------------------------------------ helpers

    fn write(&mut self, repr: &RoceFrameRepr, buf: &mut [u8], prio: u8) -> Option<Transmit> {
        let frame_len = repr.buffer_len();
        let written_len = if buf.len() >= frame_len {
            repr.emit(buf, &[]).ok()?
        } else {
            repr.emit_headers(buf).ok()?
        };
        self.stats.tx_frames += 1;
        self.stats.tx_bytes += frame_len as u64;
        Some(Transmit {
            frame_len,
            written_len,
            priority: prio,
        })
    }

    fn repr(&self, idx: usize, pkt: &Pkt, dscp: u8, ecn: Ecn, prio: u8) -> RoceFrameRepr {
        let qp = &self.qps[idx];
        let mut bth = BthRepr::new(pkt.opcode, qp.cfg.remote_qpn, pkt.psn, pkt.ack_req);
        bth.pkey = qp.cfg.pkey;
        self.frame_repr(idx, bth, pkt.ext, pkt.imm, pkt.payload_len, dscp, ecn, prio)
    }

    #[allow(clippy::too_many_arguments)]
    fn frame_repr(
        &self,
        idx: usize,
        bth: BthRepr,
        ext: RoceExt,
        imm: Option<u32>,
        payload_len: usize,
        dscp: u8,
        ecn: Ecn,
        prio: u8,
    ) -> RoceFrameRepr {
        let qp = &self.qps[idx];
        let mut r = RoceFrameRepr::new_ipv4(
            self.cfg.mac,
            qp.cfg.remote_mac,
            self.cfg.ip,
            qp.cfg.remote_ip,
            dscp,
            ecn,
            qp.sport,
            bth,
            ext,
            payload_len,
        );
        r.imm = imm.map(|imm| crate::wire::ib::ImmDtRepr { imm });
        r.version = self.cfg.roce_version;
        r.vlan = self.cfg.vlan_id.map(|vid| Vlan { pcp: prio & 7, vid });
        r
    }
}

/// P_Keys match if their low 15 bits agree and at least one is a full
/// member (IBTA §10.9.3).
fn pkey_match(a: u16, b: u16) -> bool {
    (a & 0x7FFF) == (b & 0x7FFF) && (a | b) & 0x8000 != 0
}

/// With a pacing burst DCQCN's rate timer asks no wake-up
/// ([`Rnic::poll_timeout`]): its events due by `now` run here, before the
/// rate is next used (a frame paced, a CNP cutting it).
fn catch_up_rate_timer(cfg: &RnicConfig, d: &mut Dcqcn, now: Instant) {
    if cfg.pacing_burst_ns > 0 && d.poll_timeout().is_some_and(|t| t <= now) {
        d.handle_timeout(now);
    }
}

#[cfg(test)]
mod tests;
