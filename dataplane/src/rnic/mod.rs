//! A sans-IO RoCEv2 endpoint: the RNIC model used by the simulator and the
//! host agent.
//!
//! [`Rnic`] owns a set of RC queue pairs. Each QP may stream RDMA WRITE
//! messages (WRITE FIRST/MIDDLE/LAST or ONLY, RETH on the first packet) with
//! consecutive PSNs, paced at its current DCQCN rate, and receives the peer's
//! stream, checking PSN continuity.
//!
//! Contract (quinn-proto style): no clock, no socket. Times are
//! [`Instant`]s (monotonic nanoseconds, [`crate::time`]); rates bit/s; sizes bytes. Inputs are `handle_*`,
//! outputs `poll_*`. Call order after any input or when `poll_timeout`
//! expires:
//! 1. [`Rnic::handle_timeout`] if the deadline passed,
//! 2. [`Rnic::poll_transmit`] whenever the wire is free, until it returns `None`,
//! 3. [`Rnic::poll_event`] until `None`,
//! 4. [`Rnic::poll_timeout`] to learn when to call again.
//!
//! Calling early is harmless; calling late delays service. Nothing panics on
//! bad input: malformed frames are counted and returned as errors. The data
//! path allocates only when a QP is added and for queued events.
//!
//! Spec: roce-semantics §10 (frame format, CNP R-ROCE-5, source port R-ROCE-9),
//! §11 R-NP-1 (CNP at most once per QP per interval, E-16), R-RP-1..4 (DCQCN,
//! [`dcqcn`]), §3 R-PFC-RX-1/2 (a paused priority starts no new frame until
//! the pause expires or an XON arrives; pause time = quanta·512 bit times at
//! the line rate).
//!
//! Serialisation is the caller's job: `poll_transmit` is a pull — call it
//! when the link can start a frame. Pacing here only spaces a QP's frames at
//! its DCQCN rate (wire bytes incl. FCS, preamble and IFG, see
//! [`WIRE_OVERHEAD_BYTES`]).

pub mod dcqcn;

use std::collections::VecDeque;
use std::net::Ipv4Addr;

use crate::time::{Instant, pause_quanta_to_duration};
use crate::wire::ethernet::wire_len;
use crate::wire::ip::Ecn;
use crate::wire::pfc::PfcRepr;
use crate::wire::roce::{
    AethRepr, BthRepr, DEFAULT_PKEY, Opcode, RethRepr, RoceError, RoceExt, RoceFrameRepr,
    udp_src_port_from_qpns,
};
use dcqcn::{Dcqcn, DcqcnConfig};

pub use crate::wire::ethernet::WIRE_OVERHEAD_BYTES;

const PSN_MASK: u32 = 0xFF_FFFF;

/// Errors from [`Rnic::handle_frame`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RnicError {
    /// The frame is not a parseable RoCEv2 frame.
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

/// RNIC-wide configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct RnicConfig {
    /// Our MAC address.
    pub mac: [u8; 6],
    /// Our IPv4 address.
    pub ip: Ipv4Addr,
    /// Line rate in bit/s (pacing starts here; pause quanta are measured at it).
    pub line_rate_bps: u64,
    /// Largest payload per packet in bytes (the RoCE path MTU).
    pub mtu_bytes: usize,
    /// DSCP of data and ACKs (26 → priority 3).
    pub data_dscp: u8,
    /// Priority data and ACKs travel on, for honouring PFC.
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
    /// Receiver sends one coarse ACK every this many data packets (0 = never).
    pub ack_every_packets: u32,
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
            cnp_interval_ns: 50_000,
            dcqcn: Some(DcqcnConfig::default()),
            ack_every_packets: 0,
        }
    }
}

/// One RC QP's connection and workload.
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
    /// Size of each WRITE message in bytes (0 = this QP only receives).
    pub message_bytes: u64,
    /// Number of messages to send (`None` = forever).
    pub messages: Option<u64>,
    /// First PSN we send.
    pub initial_psn: u32,
    /// First PSN we expect from the peer.
    pub expected_psn: u32,
}

/// Counters of one QP (`Default + Copy`, monotonic except `rate_bps`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct QpStats {
    /// Data bytes sent (payload only).
    pub tx_payload_bytes: u64,
    /// Data packets sent.
    pub tx_packets: u64,
    /// Messages fully sent.
    pub tx_messages: u64,
    /// Data bytes received in order (payload only).
    pub rx_payload_bytes: u64,
    /// Data packets received (any PSN).
    pub rx_packets: u64,
    /// Messages whose last packet arrived.
    pub rx_messages: u64,
    /// Data packets received with CE.
    pub rx_ce_packets: u64,
    /// CNPs sent (NP).
    pub cnp_tx: u64,
    /// CNPs received (RP).
    pub cnp_rx: u64,
    /// PSN gap events (a packet arrived ahead of the expected PSN).
    pub psn_gaps: u64,
    /// Packets missing across all gaps.
    pub psn_lost: u64,
    /// Packets that arrived behind the expected PSN (duplicates / reordering).
    pub psn_late: u64,
    /// ACKs sent.
    pub ack_tx: u64,
    /// ACKs received.
    pub ack_rx: u64,
    /// Current sending rate, bit/s.
    pub rate_bps: u64,
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
    /// Frames rejected (malformed, unknown QP, bad ICRC).
    pub rx_errors: u64,
    /// PFC frames received per priority (with the enable bit set).
    pub pfc_rx: [u64; 8],
    /// Time each priority spent paused, ns (settled at the last input).
    pub paused_ns: [u64; 8],
}

/// Something the application may want to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RnicEvent {
    /// A message's last packet was sent.
    MessageSent {
        /// Local QP.
        qpn: u32,
        /// Messages sent on the QP so far.
        count: u64,
    },
    /// A message's last packet arrived.
    MessageReceived {
        /// Local QP.
        qpn: u32,
        /// Messages received on the QP so far.
        count: u64,
    },
    /// Packets were lost: `got` arrived while `expected` was due.
    PsnGap {
        /// Local QP.
        qpn: u32,
        /// The PSN that was due.
        expected: u32,
        /// The PSN that arrived.
        got: u32,
    },
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

#[derive(Debug, Clone, Copy)]
enum Control {
    Cnp { qp_index: usize },
    Ack { qp_index: usize, psn: u32 },
}

#[derive(Debug, Clone)]
struct Qp {
    cfg: QpConfig,
    sport: u16,
    next_psn: u32,
    msg_remaining_bytes: u64,
    msg_offset_bytes: u64,
    messages_started: u64,
    next_tx_ns: u64,
    rate_fixed_bps: f64,
    dcqcn: Option<Dcqcn>,
    expected_psn: u32,
    rx_since_ack: u32,
    rx_msn: u32,
    last_cnp_ns: Option<u64>,
    stats: QpStats,
}

impl Qp {
    fn rate_bps(&self) -> f64 {
        self.dcqcn
            .as_ref()
            .map_or(self.rate_fixed_bps, Dcqcn::rate_bps)
    }

    fn has_data(&self) -> bool {
        self.cfg.message_bytes > 0
            && (self.msg_remaining_bytes > 0
                || self.cfg.messages.is_none_or(|m| self.messages_started < m))
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct PauseState {
    until_ns: u64,
    since_ns: Option<u64>,
}

/// A RoCEv2 RNIC model. See the module doc for the call order.
#[derive(Debug)]
pub struct Rnic {
    cfg: RnicConfig,
    qps: Vec<Qp>,
    rr_next: usize,
    control: VecDeque<Control>,
    events: VecDeque<RnicEvent>,
    pause: [PauseState; 8],
    stats: RnicStats,
}

impl Rnic {
    /// An RNIC with no QPs.
    pub fn new(cfg: RnicConfig) -> Self {
        Rnic {
            cfg,
            qps: Vec::new(),
            rr_next: 0,
            control: VecDeque::new(),
            events: VecDeque::new(),
            pause: [PauseState::default(); 8],
            stats: RnicStats::default(),
        }
    }

    // ------------------------------------------------------------ getters

    /// The configuration.
    pub fn config(&self) -> &RnicConfig {
        &self.cfg
    }

    /// RNIC-wide counters.
    pub fn stats(&self) -> RnicStats {
        self.stats
    }

    /// Counters of QP `qpn`, if it exists.
    pub fn qp_stats(&self, qpn: u32) -> Option<QpStats> {
        self.qps.iter().find(|q| q.cfg.local_qpn == qpn).map(|q| {
            let mut s = q.stats;
            s.rate_bps = q.rate_bps() as u64;
            s
        })
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

    /// True if nothing is left to send (all finite workloads done, no control frames).
    pub fn is_idle(&self) -> bool {
        self.control.is_empty() && !self.qps.iter().any(Qp::has_data)
    }

    // ------------------------------------------------------------ commands

    /// Adds an RC QP with its workload.
    pub fn add_qp(&mut self, cfg: QpConfig) -> Result<(), AddQpError> {
        if cfg.local_qpn > PSN_MASK || cfg.remote_qpn > PSN_MASK {
            return Err(AddQpError::BadQpn(cfg.local_qpn.max(cfg.remote_qpn)));
        }
        if self.qps.iter().any(|q| q.cfg.local_qpn == cfg.local_qpn) {
            return Err(AddQpError::Duplicate(cfg.local_qpn));
        }
        let line = self.cfg.line_rate_bps;
        self.qps.push(Qp {
            cfg,
            sport: udp_src_port_from_qpns(cfg.local_qpn, cfg.remote_qpn),
            next_psn: cfg.initial_psn & PSN_MASK,
            msg_remaining_bytes: 0,
            msg_offset_bytes: 0,
            messages_started: 0,
            next_tx_ns: 0,
            rate_fixed_bps: line as f64,
            dcqcn: self.cfg.dcqcn.map(|c| Dcqcn::new(c, line)),
            expected_psn: cfg.expected_psn & PSN_MASK,
            rx_since_ack: 0,
            rx_msn: 0,
            last_cnp_ns: None,
            stats: QpStats::default(),
        });
        Ok(())
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

    /// A frame arrived. `frame` may be whole (ICRC checked) or headers only.
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
        let Some(idx) = self
            .qps
            .iter()
            .position(|q| q.cfg.local_qpn == r.bth.dest_qp)
        else {
            self.stats.rx_errors += 1;
            return Err(RnicError::UnknownQp(r.bth.dest_qp));
        };
        self.stats.rx_frames += 1;
        match r.bth.opcode {
            Opcode::Cnp => {
                let qp = &mut self.qps[idx];
                qp.stats.cnp_rx += 1;
                if let Some(d) = qp.dcqcn.as_mut() {
                    d.on_cnp(now);
                    tracing::trace!(qpn = qp.cfg.local_qpn, rate_bps = d.rate_bps(), "CNP");
                }
            }
            Opcode::RcAcknowledge => self.qps[idx].stats.ack_rx += 1,
            Opcode::RcWriteFirst
            | Opcode::RcWriteMiddle
            | Opcode::RcWriteLast
            | Opcode::RcWriteOnly
            | Opcode::RcSendFirst
            | Opcode::RcSendMiddle
            | Opcode::RcSendLast
            | Opcode::RcSendOnly => self.on_data(now_ns, idx, &r),
            _ => {}
        }
        Ok(())
    }

    fn on_data(&mut self, now_ns: u64, idx: usize, r: &RoceFrameRepr) {
        let ack_every = self.cfg.ack_every_packets;
        let interval = self.cfg.cnp_interval_ns;
        let qp = &mut self.qps[idx];
        qp.stats.rx_packets += 1;
        let psn = r.bth.psn;
        let ahead = psn.wrapping_sub(qp.expected_psn) & PSN_MASK;
        if ahead == 0 {
            qp.stats.rx_payload_bytes += r.payload_len as u64;
            qp.expected_psn = (psn + 1) & PSN_MASK;
        } else if ahead < (1 << 23) {
            qp.stats.psn_gaps += 1;
            qp.stats.psn_lost += u64::from(ahead);
            self.events.push_back(RnicEvent::PsnGap {
                qpn: qp.cfg.local_qpn,
                expected: qp.expected_psn,
                got: psn,
            });
            qp.stats.rx_payload_bytes += r.payload_len as u64;
            qp.expected_psn = (psn + 1) & PSN_MASK;
        } else {
            qp.stats.psn_late += 1;
        }
        if matches!(
            r.bth.opcode,
            Opcode::RcWriteLast | Opcode::RcWriteOnly | Opcode::RcSendLast | Opcode::RcSendOnly
        ) {
            qp.stats.rx_messages += 1;
            qp.rx_msn = (qp.rx_msn + 1) & PSN_MASK;
            self.events.push_back(RnicEvent::MessageReceived {
                qpn: qp.cfg.local_qpn,
                count: qp.stats.rx_messages,
            });
        }
        if r.ip.ecn == Ecn::Ce {
            qp.stats.rx_ce_packets += 1;
            // R-NP-1: at most one CNP per QP per interval.
            if qp
                .last_cnp_ns
                .is_none_or(|t| now_ns.saturating_sub(t) >= interval)
            {
                qp.last_cnp_ns = Some(now_ns);
                self.control.push_back(Control::Cnp { qp_index: idx });
            }
        }
        if ack_every > 0 {
            qp.rx_since_ack += 1;
            if qp.rx_since_ack >= ack_every {
                qp.rx_since_ack = 0;
                self.control.push_back(Control::Ack { qp_index: idx, psn });
            }
        }
    }

    /// Runs DCQCN timers due at `now_ns` and settles pause accounting.
    /// Spurious calls do nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        let now_ns = now.as_nanos();
        self.settle_pauses(now_ns);
        for qp in &mut self.qps {
            if let Some(d) = qp.dcqcn.as_mut()
                && d.poll_timeout().is_some_and(|t| t <= now)
            {
                d.handle_timeout(now);
            }
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

    /// Writes the next frame into `buf` if one may start at `now_ns`:
    /// control frames (CNP, ACK) first, then data from QPs in round-robin
    /// order whose priority is not paused and whose pacer allows. If `buf`
    /// is shorter than the frame only the headers are written; `buf` must
    /// hold at least the headers (86 bytes is always enough), else `None`.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let now_ns = now.as_nanos();
        self.settle_pauses(now_ns);
        // Control frames, in order, unless their priority is paused.
        if let Some(&c) = self.control.front() {
            let prio = match c {
                Control::Cnp { .. } => self.cfg.cnp_priority,
                Control::Ack { .. } => self.cfg.data_priority,
            };
            if !self.is_paused(prio, now) {
                let repr = self.control_repr(c);
                // Dequeue only once written: a too-small buffer loses nothing.
                let t = self.write(&repr, buf, prio)?;
                self.control.pop_front();
                match c {
                    Control::Cnp { qp_index } => self.qps[qp_index].stats.cnp_tx += 1,
                    Control::Ack { qp_index, .. } => self.qps[qp_index].stats.ack_tx += 1,
                }
                return Some(t);
            }
        }
        if self.is_paused(self.cfg.data_priority, now) || self.qps.is_empty() {
            return None;
        }
        let n = self.qps.len();
        for k in 0..n {
            let idx = (self.rr_next + k) % n;
            let qp = &self.qps[idx];
            if !qp.has_data() || qp.next_tx_ns > now_ns {
                continue;
            }
            let repr = self.next_data_repr(idx);
            let prio = self.cfg.data_priority;
            let t = self.write(&repr, buf, prio)?;
            self.rr_next = (idx + 1) % n;
            self.on_data_sent(now_ns, idx, &repr, t.frame_len);
            return Some(t);
        }
        None
    }

    /// When to call again: the earliest of the DCQCN timers, a pacer
    /// release, or a pause expiry that blocks pending work. `None` = only an
    /// input can create work. Changes after any `handle_*` or `poll_transmit`.
    #[must_use]
    pub fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        let now_ns = now.as_nanos();
        let mut t: Option<u64> = None;
        let mut take = |x: u64| t = Some(t.map_or(x, |y: u64| y.min(x)));
        for qp in &self.qps {
            if let Some(d) = qp.dcqcn.as_ref().and_then(Dcqcn::poll_timeout) {
                take(d.as_nanos());
            }
            if qp.has_data() && qp.next_tx_ns > now_ns {
                take(qp.next_tx_ns);
            }
        }
        for (p, st) in self.pause.iter().enumerate() {
            if st.until_ns > now_ns {
                let blocks_data =
                    p == usize::from(self.cfg.data_priority) && self.qps.iter().any(Qp::has_data);
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
        self.events.pop_front()
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

    fn base_repr(
        &self,
        qp: &Qp,
        bth: BthRepr,
        ext: RoceExt,
        dscp: u8,
        ecn: Ecn,
        len: usize,
    ) -> RoceFrameRepr {
        RoceFrameRepr::new_ipv4(
            self.cfg.mac,
            qp.cfg.remote_mac,
            self.cfg.ip,
            qp.cfg.remote_ip,
            dscp,
            ecn,
            qp.sport,
            bth,
            ext,
            len,
        )
    }

    fn control_repr(&self, c: Control) -> RoceFrameRepr {
        match c {
            Control::Cnp { qp_index } => {
                let qp = &self.qps[qp_index];
                let bth = bth(Opcode::Cnp, qp.cfg.remote_qpn, 0, false);
                let mut bth = bth;
                bth.becn = true;
                self.base_repr(qp, bth, RoceExt::CnpPad, self.cfg.cnp_dscp, Ecn::NotEct, 0)
            }
            Control::Ack { qp_index, psn } => {
                let qp = &self.qps[qp_index];
                let b = bth(Opcode::RcAcknowledge, qp.cfg.remote_qpn, psn, false);
                let aeth = AethRepr {
                    syndrome: 0x1F,
                    msn: qp.rx_msn,
                };
                self.base_repr(
                    qp,
                    b,
                    RoceExt::Aeth(aeth),
                    self.cfg.data_dscp,
                    Ecn::NotEct,
                    0,
                )
            }
        }
    }

    fn next_data_repr(&self, idx: usize) -> RoceFrameRepr {
        let qp = &self.qps[idx];
        let mtu = self.cfg.mtu_bytes.max(1) as u64;
        let (remaining, offset) = if qp.msg_remaining_bytes == 0 {
            (qp.cfg.message_bytes, 0)
        } else {
            (qp.msg_remaining_bytes, qp.msg_offset_bytes)
        };
        let first = offset == 0;
        let last = remaining <= mtu;
        let len = remaining.min(mtu) as usize;
        let op = match (first, last) {
            (true, true) => Opcode::RcWriteOnly,
            (true, false) => Opcode::RcWriteFirst,
            (false, false) => Opcode::RcWriteMiddle,
            (false, true) => Opcode::RcWriteLast,
        };
        let ext = if first {
            RoceExt::Reth(RethRepr {
                virtual_addr: 0x1000_0000,
                rkey: qp.cfg.remote_qpn,
                dma_len: qp.cfg.message_bytes.min(u64::from(u32::MAX)) as u32,
            })
        } else {
            RoceExt::None
        };
        let ecn = if self.cfg.ecn_capable {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        };
        let b = bth(op, qp.cfg.remote_qpn, qp.next_psn, last);
        self.base_repr(qp, b, ext, self.cfg.data_dscp, ecn, len)
    }

    fn on_data_sent(&mut self, now_ns: u64, idx: usize, repr: &RoceFrameRepr, frame_len: usize) {
        let qp = &mut self.qps[idx];
        let len = repr.payload_len as u64;
        if qp.msg_remaining_bytes == 0 {
            qp.msg_remaining_bytes = qp.cfg.message_bytes;
            qp.msg_offset_bytes = 0;
            qp.messages_started += 1;
        }
        qp.msg_remaining_bytes -= len;
        qp.msg_offset_bytes += len;
        qp.next_psn = (qp.next_psn + 1) & PSN_MASK;
        qp.stats.tx_packets += 1;
        qp.stats.tx_payload_bytes += len;
        if qp.msg_remaining_bytes == 0 {
            qp.msg_offset_bytes = 0;
            qp.stats.tx_messages += 1;
            self.events.push_back(RnicEvent::MessageSent {
                qpn: qp.cfg.local_qpn,
                count: qp.stats.tx_messages,
            });
        }
        let wire_bits = (wire_len(frame_len, WIRE_OVERHEAD_BYTES) * 8) as f64;
        let gap_ns = (wire_bits * 1e9 / qp.rate_bps().max(1.0)).round() as u64;
        qp.next_tx_ns = qp.next_tx_ns.max(now_ns) + gap_ns;
        let wire_bytes = wire_len(frame_len, WIRE_OVERHEAD_BYTES) as u64;
        if let Some(d) = qp.dcqcn.as_mut() {
            d.on_sent(wire_bytes);
        }
    }
}

fn bth(opcode: Opcode, dest_qp: u32, psn: u32, ack_req: bool) -> BthRepr {
    BthRepr {
        opcode,
        solicited: false,
        migreq: false,
        pad_count: 0,
        pkey: DEFAULT_PKEY,
        fecn: false,
        becn: false,
        dest_qp,
        ack_req,
        psn,
    }
}

#[cfg(test)]
mod tests;
