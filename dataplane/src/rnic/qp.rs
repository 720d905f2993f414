//! One Reliable Connected queue pair: the requester and responder state
//! machines of IBTA Vol. 1 ch. 9 as RoCE NICs implement them.
//!
//! Requester (§9.7.4–9.7.5): send work requests are segmented into packets
//! with consecutive 24-bit PSNs (a READ request consumes one PSN per
//! response packet it asks for); at most `max_send_wr` messages and
//! `max_rd_atomic` READs are outstanding. ACKs complete messages in order
//! (coalesced: an ACK for PSN *n* acknowledges everything up to *n*); a NAK
//! "PSN sequence error" acknowledges what precedes its PSN and makes the
//! requester go back N to it; a READ response ahead of the expected one, or
//! an ACK past an unfinished READ, is an implied NAK. A retransmission timer
//! of 4.096 µs × 2^`timeout` (`timeout` 0 = infinite) goes back to the oldest
//! unacknowledged PSN. Each go-back costs one of `retry_cnt` retries and any
//! ACK or response restores them (as Linux rxe does); when none is left the
//! QP enters the error state and its oldest request completes with "transport
//! retry counter exceeded", the rest flushed. RNR NAKs wait the advertised
//! RNR time and cost one of `rnr_retry` (7 = infinite).
//!
//! Responder (§9.7.3, §9.9): one expected PSN; an in-order request is
//! executed (WRITE and READ checked against the registered memory: R_Key,
//! bounds, rights, else NAK "remote access error"; a SEND takes a receive,
//! else RNR NAK); ACKs are coalesced (on AckReq, and every
//! `ack_every_packets`); a request ahead of the expected PSN draws one NAK
//! "PSN sequence error" per gap and is dropped; a duplicate is dropped and
//! answered with an ACK, a duplicate READ is executed again. READ responses
//! (FIRST/MIDDLE/LAST/ONLY, AETH on first/last/only) are queued, at most
//! `max_dest_rd_atomic` requests, and ACKs never overtake them.
//!
//! Contract: no clock, no I/O; times in ns; PSNs masked to 24 bits. The data
//! path allocates only when a queue grows beyond what it held before.

use std::collections::VecDeque;

use super::counters::QpStats;
use super::dcqcn::Dcqcn;
use super::frame::{RoceExt, RoceFrameRepr};
use super::verbs::{Completion, CompletionOp, MemoryRegion, RecvWr, SendWr, WcStatus, WrOp};
use super::{Events, QpConfig, QpState, RnicEvent};
use crate::wire::ib::{
    AethRepr, AethSyndrome, NakCode, Opcode, RethRepr, psn_add, psn_cmp, psn_diff, rnr_timer_ns,
};
use std::cmp::Ordering::{Equal, Greater, Less};

/// rnr_retry value meaning "retry forever" (IBTA §9.7.5.2.8).
const RNR_RETRY_INFINITE: u8 = 7;

/// The retransmission timeout of `ibv_modify_qp`'s `timeout` exponent, ns
/// (4.096 µs × 2^timeout; 0 = no timer).
pub fn ack_timeout_ns(timeout: u8) -> Option<u64> {
    (timeout != 0).then(|| 4_096u64 << timeout.min(31))
}

/// Packets a message of `len` bytes takes at `mtu` (at least one).
pub(super) fn packets_for(len: u64, mtu: u64) -> u32 {
    len.div_ceil(mtu.max(1)).max(1).min(u64::from(u32::MAX)) as u32
}

/// What an RNIC-wide input handler needs from outside the QP.
pub(super) struct Ctx<'a> {
    pub(super) mtu: u64,
    pub(super) ack_every: u32,
    pub(super) mrs: &'a [MemoryRegion],
    pub(super) events: &'a mut Events,
}

/// One packet a QP wants to send, before addressing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pkt {
    pub(super) opcode: Opcode,
    pub(super) psn: u32,
    pub(super) ext: RoceExt,
    pub(super) imm: Option<u32>,
    pub(super) payload_len: usize,
    pub(super) ack_req: bool,
}

// ---------------------------------------------------------------- requester

#[derive(Debug, Clone)]
struct SendWqe {
    wr: SendWr,
    first_psn: u32,
    npkts: u32,
    started: bool,
    /// READ: response packets received in order.
    resp_rcvd: u32,
}

impl SendWqe {
    fn last_psn(&self) -> u32 {
        psn_add(self.first_psn, self.npkts - 1)
    }

    fn contains(&self, psn: u32) -> bool {
        self.started && psn_diff(psn, self.first_psn) < self.npkts
    }
}

#[derive(Debug, Clone)]
pub(super) struct Requester {
    sq: VecDeque<SendWqe>,
    /// `sq[tx_idx]` is the request the next packet comes from; everything
    /// before it was sent at least once.
    tx_idx: usize,
    /// Packet offset inside `sq[tx_idx]`.
    tx_pkt: u32,
    /// PSN of the next packet.
    next_psn: u32,
    /// One past the highest PSN ever sent.
    high_psn: u32,
    /// Oldest PSN not acknowledged.
    una_psn: u32,
    retry_left: u8,
    rnr_left: u8,
    pub(super) timer_ns: Option<u64>,
    pub(super) rnr_until_ns: Option<u64>,
    /// A gap in READ responses was answered; no other until it closes.
    read_gap: bool,
    /// READs started and not complete.
    reads_out: u32,
}

impl Requester {
    fn new(cfg: &QpConfig) -> Self {
        let psn = cfg.initial_psn & crate::wire::ib::PSN_MASK;
        Requester {
            sq: VecDeque::new(),
            tx_idx: 0,
            tx_pkt: 0,
            next_psn: psn,
            high_psn: psn,
            una_psn: psn,
            retry_left: cfg.retry_cnt,
            rnr_left: cfg.rnr_retry,
            timer_ns: None,
            rnr_until_ns: None,
            read_gap: false,
            reads_out: 0,
        }
    }
}

// ---------------------------------------------------------------- responder

#[derive(Debug, Clone, Copy)]
struct InMsg {
    send: bool,
    recv: Option<RecvWr>,
    bytes: u64,
}

#[derive(Debug, Clone, Copy)]
struct ReadResp {
    psn: u32,
    len: u64,
    npkts: u32,
    sent: u32,
    /// Executed again for a duplicate request: its packets are resends.
    dup: bool,
}

#[derive(Debug, Clone)]
pub(super) struct Responder {
    epsn: u32,
    msn: u32,
    /// The expected PSN a NAK "sequence error" was sent for (one per gap).
    nak_gap: Option<u32>,
    unacked: u32,
    in_msg: Option<InMsg>,
    rq: VecDeque<RecvWr>,
    reads: VecDeque<ReadResp>,
    ack: Option<u32>,
    nak: Option<(u32, AethRepr)>,
}

impl Responder {
    fn new(cfg: &QpConfig) -> Self {
        Responder {
            epsn: cfg.expected_psn & crate::wire::ib::PSN_MASK,
            msn: 0,
            nak_gap: None,
            unacked: 0,
            in_msg: None,
            rq: VecDeque::new(),
            reads: VecDeque::new(),
            ack: None,
            nak: None,
        }
    }
}

// ---------------------------------------------------------------- the QP

/// One RC QP (see the module doc).
#[derive(Debug, Clone)]
pub(super) struct Qp {
    pub(super) cfg: QpConfig,
    pub(super) sport: u16,
    pub(super) state: QpState,
    pub(super) next_tx_ns: u64,
    pub(super) rate_fixed_bps: f64,
    pub(super) dcqcn: Option<Dcqcn>,
    pub(super) last_cnp_ns: Option<u64>,
    pub(super) cnp_pending: bool,
    /// In the RNIC's control queue.
    pub(super) in_control: bool,
    /// Messages of the built-in workload posted so far.
    auto_posted: u64,
    pub(super) req: Requester,
    pub(super) resp: Responder,
    pub(super) stats: QpStats,
}

impl Qp {
    pub(super) fn new(cfg: QpConfig, sport: u16, line_bps: f64, dcqcn: Option<Dcqcn>) -> Self {
        Qp {
            req: Requester::new(&cfg),
            resp: Responder::new(&cfg),
            cfg,
            sport,
            state: QpState::Rts,
            next_tx_ns: 0,
            rate_fixed_bps: line_bps,
            dcqcn,
            last_cnp_ns: None,
            cnp_pending: false,
            in_control: false,
            auto_posted: 0,
            stats: QpStats::default(),
        }
    }

    pub(super) fn rate_bps(&self) -> f64 {
        self.dcqcn
            .as_ref()
            .map_or(self.rate_fixed_bps, Dcqcn::rate_bps)
    }

    fn ok(&self) -> bool {
        self.state == QpState::Rts
    }

    fn auto_remaining(&self) -> bool {
        self.cfg.message_bytes > 0 && self.cfg.messages.is_none_or(|m| self.auto_posted < m)
    }

    /// Room for one more message in flight.
    fn window_open(&self) -> bool {
        self.req.tx_idx < self.cfg.max_send_wr.max(1) as usize
    }

    /// True if a data packet (READ response or request) could go now,
    /// pacing aside.
    pub(super) fn data_ready(&self) -> bool {
        if !self.ok() {
            return false;
        }
        if !self.resp.reads.is_empty() {
            return true;
        }
        if self.req.rnr_until_ns.is_some() {
            return false;
        }
        match self.req.sq.get(self.req.tx_idx) {
            Some(w) if w.started => true,
            Some(w) => self.may_start(w.wr.op),
            None => self.auto_remaining() && self.window_open(),
        }
    }

    fn may_start(&self, op: WrOp) -> bool {
        self.window_open()
            && (!op.is_read() || self.req.reads_out < u32::from(self.cfg.max_rd_atomic.max(1)))
    }

    /// True if a control frame (CNP, ACK, NAK) may go now.
    pub(super) fn control_ready(&self) -> bool {
        self.cnp_pending
            || (self.resp.reads.is_empty() && (self.resp.ack.is_some() || self.resp.nak.is_some()))
    }

    /// Nothing queued, nothing outstanding, no workload left.
    pub(super) fn is_idle(&self) -> bool {
        !self.ok()
            || (self.req.sq.is_empty()
                && !self.auto_remaining()
                && self.resp.reads.is_empty()
                && !self.control_ready())
    }

    // ------------------------------------------------------------ commands

    pub(super) fn post_send(&mut self, wr: SendWr) -> Result<(), super::PostError> {
        if !self.ok() {
            return Err(super::PostError::QpInError);
        }
        if self.req.sq.len() >= self.cfg.max_send_wr.max(1) as usize {
            return Err(super::PostError::QueueFull);
        }
        self.push_wqe(wr, 0);
        Ok(())
    }

    fn push_wqe(&mut self, wr: SendWr, mtu: u64) {
        self.req.sq.push_back(SendWqe {
            wr,
            first_psn: 0,
            npkts: if mtu == 0 {
                0
            } else {
                packets_for(u64::from(wr.len_bytes), mtu)
            },
            started: false,
            resp_rcvd: 0,
        });
    }

    pub(super) fn post_recv(&mut self, wr: RecvWr) -> Result<(), super::PostError> {
        if !self.ok() {
            return Err(super::PostError::QpInError);
        }
        self.resp.rq.push_back(wr);
        Ok(())
    }

    // ------------------------------------------------------------ transmit

    /// Tops the send queue up from the built-in workload.
    fn refill(&mut self) {
        if self.req.tx_idx == self.req.sq.len() && self.auto_remaining() && self.window_open() {
            let len = self.cfg.message_bytes.min(u64::from(u32::MAX)) as u32;
            self.push_wqe(
                SendWr {
                    wr_id: self.auto_posted,
                    op: self.cfg.verb,
                    len_bytes: len,
                    remote: self.cfg.remote_buf,
                    signaled: false,
                },
                0,
            );
            self.auto_posted += 1;
        }
    }

    /// The next data packet: a READ response first, else a request.
    pub(super) fn next_data(&mut self, mtu: u64) -> Option<Pkt> {
        if !self.ok() {
            return None;
        }
        if let Some(r) = self.resp.reads.front() {
            return Some(self.read_response_pkt(r, mtu));
        }
        if self.req.rnr_until_ns.is_some() {
            return None;
        }
        self.refill();
        let w = self.req.sq.get(self.req.tx_idx)?;
        if !w.started && !self.may_start(w.wr.op) {
            return None;
        }
        let npkts = if w.started {
            w.npkts
        } else {
            packets_for(u64::from(w.wr.len_bytes), mtu)
        };
        let k = self.req.tx_pkt;
        let psn = self.req.next_psn;
        let len = u64::from(w.wr.len_bytes);
        let reth = |offset: u64| {
            RoceExt::Reth(RethRepr {
                virtual_addr: w.wr.remote.addr.wrapping_add(offset),
                rkey: w.wr.remote.rkey,
                dma_len: (len - offset.min(len)) as u32,
            })
        };
        if w.wr.op.is_read() {
            return Some(Pkt {
                opcode: Opcode::RcReadRequest,
                psn,
                ext: reth(u64::from(k) * mtu),
                imm: None,
                payload_len: 0,
                ack_req: false,
            });
        }
        let first = k == 0;
        let last = k + 1 == npkts;
        let imm = w.wr.op.imm();
        use Opcode::*;
        let opcode = match (w.wr.op.is_send(), first, last, imm.is_some()) {
            (true, true, true, false) => RcSendOnly,
            (true, true, true, true) => RcSendOnlyImm,
            (true, true, false, _) => RcSendFirst,
            (true, false, false, _) => RcSendMiddle,
            (true, false, true, false) => RcSendLast,
            (true, false, true, true) => RcSendLastImm,
            (false, true, true, false) => RcWriteOnly,
            (false, true, true, true) => RcWriteOnlyImm,
            (false, true, false, _) => RcWriteFirst,
            (false, false, false, _) => RcWriteMiddle,
            (false, false, true, false) => RcWriteLast,
            (false, false, true, true) => RcWriteLastImm,
        };
        let offset = u64::from(k) * mtu;
        Some(Pkt {
            opcode,
            psn,
            ext: if first && !w.wr.op.is_send() {
                reth(0)
            } else {
                RoceExt::None
            },
            imm: if last { imm } else { None },
            payload_len: len.saturating_sub(offset).min(mtu) as usize,
            ack_req: last,
        })
    }

    fn read_response_pkt(&self, r: &ReadResp, mtu: u64) -> Pkt {
        let j = r.sent;
        let first = j == 0;
        let last = j + 1 == r.npkts;
        use Opcode::*;
        let opcode = match (first, last) {
            (true, true) => RcReadResponseOnly,
            (true, false) => RcReadResponseFirst,
            (false, false) => RcReadResponseMiddle,
            (false, true) => RcReadResponseLast,
        };
        let offset = u64::from(j) * mtu;
        Pkt {
            opcode,
            psn: psn_add(r.psn, j),
            ext: if first || last {
                RoceExt::Aeth(AethRepr::ack(self.resp.msn))
            } else {
                RoceExt::None
            },
            imm: None,
            payload_len: r.len.saturating_sub(offset).min(mtu) as usize,
            ack_req: false,
        }
    }

    /// `pkt` (from [`Qp::next_data`]) went out at `now_ns`.
    pub(super) fn data_sent(&mut self, pkt: &Pkt, now_ns: u64, mtu: u64) {
        let len = pkt.payload_len as u64;
        self.stats.tx_packets += 1;
        if pkt.opcode.is_read_response() {
            let r = self
                .resp
                .reads
                .front_mut()
                .expect("a READ response was sent for a queued READ");
            if r.dup {
                self.stats.retx_packets += 1;
                self.stats.retx_bytes += len;
            } else {
                self.stats.tx_payload_bytes += len;
            }
            r.sent += 1;
            if r.sent == r.npkts {
                self.resp.reads.pop_front();
            }
            return;
        }
        let req = &mut self.req;
        let w = &mut req.sq[req.tx_idx];
        if !w.started {
            w.started = true;
            w.first_psn = req.next_psn;
            w.npkts = packets_for(u64::from(w.wr.len_bytes), mtu);
            if w.wr.op.is_read() {
                req.reads_out += 1;
            }
        }
        let end_psn = if w.wr.op.is_read() {
            req.tx_idx += 1;
            req.tx_pkt = 0;
            psn_add(w.first_psn, w.npkts)
        } else {
            req.tx_pkt += 1;
            if req.tx_pkt == w.npkts {
                req.tx_idx += 1;
                req.tx_pkt = 0;
            }
            psn_add(pkt.psn, 1)
        };
        req.next_psn = end_psn;
        if psn_cmp(pkt.psn, req.high_psn) == Less {
            self.stats.retx_packets += 1;
            self.stats.retx_bytes += len;
        } else {
            req.high_psn = end_psn;
            self.stats.tx_payload_bytes += len;
        }
        if req.timer_ns.is_none()
            && let Some(t) = ack_timeout_ns(self.cfg.timeout)
        {
            req.timer_ns = Some(now_ns + t);
        }
    }

    /// The ACK or NAK to send, without taking it.
    pub(super) fn next_control(&self) -> Option<Pkt> {
        if !self.resp.reads.is_empty() {
            return None;
        }
        let (psn, aeth) = match (self.resp.nak, self.resp.ack) {
            (Some(n), _) => n,
            (None, Some(psn)) => (psn, AethRepr::ack(self.resp.msn)),
            (None, None) => return None,
        };
        Some(Pkt {
            opcode: Opcode::RcAcknowledge,
            psn,
            ext: RoceExt::Aeth(aeth),
            imm: None,
            payload_len: 0,
            ack_req: false,
        })
    }

    /// The packet from [`Qp::next_control`] went out.
    pub(super) fn control_sent(&mut self) {
        if self.resp.nak.take().is_some() {
            self.stats.nak_tx += 1;
        } else if self.resp.ack.take().is_some() {
            self.stats.ack_tx += 1;
        }
    }

    // ------------------------------------------------------------ requester inputs

    fn reset_retries(&mut self) {
        self.req.retry_left = self.cfg.retry_cnt;
        self.req.rnr_left = self.cfg.rnr_retry;
    }

    fn complete_front(&mut self, status: WcStatus, ctx: &mut Ctx<'_>) {
        let Some(w) = self.req.sq.pop_front() else {
            return;
        };
        if self.req.tx_idx == 0 {
            // The pointer was inside this request (a late ACK after a go-back).
            self.req.tx_pkt = 0;
            if w.started {
                self.req.next_psn = psn_add(w.last_psn(), 1);
            }
        } else {
            self.req.tx_idx -= 1;
        }
        if w.started && w.wr.op.is_read() {
            self.req.reads_out -= 1;
        }
        if status == WcStatus::Success {
            self.stats.tx_messages += 1;
        }
        if w.wr.signaled || status != WcStatus::Success {
            ctx.events.push(RnicEvent::Completion(Completion {
                qpn: self.cfg.local_qpn,
                wr_id: w.wr.wr_id,
                op: match w.wr.op {
                    WrOp::Send | WrOp::SendImm(_) => CompletionOp::Send,
                    WrOp::Write | WrOp::WriteImm(_) => CompletionOp::Write,
                    WrOp::Read => CompletionOp::Read,
                },
                status,
                byte_len: if status == WcStatus::Success {
                    u64::from(w.wr.len_bytes)
                } else {
                    0
                },
                imm: None,
            }));
        }
    }

    /// Puts the transmit pointer at `psn` (which lies in a started request
    /// or at the first unsent PSN).
    fn seek(&mut self, psn: u32) {
        let req = &mut self.req;
        let mut idx = None;
        for (i, w) in req.sq.iter().enumerate() {
            if !w.started {
                break;
            }
            if w.contains(psn) {
                idx = Some((i, psn_diff(psn, w.first_psn)));
                break;
            }
        }
        match idx {
            Some((i, k)) => {
                req.tx_idx = i;
                req.tx_pkt = k;
                req.next_psn = psn;
            }
            None => {
                // Past everything started: the first request not yet sent.
                let started = req.sq.iter().take_while(|w| w.started).count();
                req.tx_idx = started;
                req.tx_pkt = 0;
                req.next_psn = req.high_psn;
            }
        }
    }

    /// Go back N to `psn`, or fail the QP if no retry is left.
    fn retry(&mut self, psn: u32, now_ns: u64, ctx: &mut Ctx<'_>) {
        if self.req.retry_left == 0 {
            self.fail(WcStatus::RetryExceeded, ctx);
            return;
        }
        self.req.retry_left -= 1;
        self.seek(psn);
        self.req.timer_ns = ack_timeout_ns(self.cfg.timeout).map(|t| now_ns + t);
        tracing::trace!(
            qpn = self.cfg.local_qpn,
            psn,
            left = self.req.retry_left,
            "go back N"
        );
    }

    /// Moves the QP to the error state: the oldest request completes with
    /// `status`, every other one is flushed (IBTA §10.3.1, o10-2.2-?).
    pub(super) fn fail(&mut self, status: WcStatus, ctx: &mut Ctx<'_>) {
        if !self.ok() {
            return;
        }
        match status {
            WcStatus::RetryExceeded => self.stats.req_transport_retries_exceeded += 1,
            WcStatus::RnrRetryExceeded => self.stats.req_rnr_retries_exceeded += 1,
            _ => {}
        }
        tracing::debug!(qpn = self.cfg.local_qpn, %status, "QP to error state");
        self.complete_front(status, ctx);
        while !self.req.sq.is_empty() {
            self.complete_front(WcStatus::WrFlushError, ctx);
        }
        while let Some(r) = self.resp.rq.pop_front() {
            ctx.events.push(RnicEvent::Completion(Completion {
                qpn: self.cfg.local_qpn,
                wr_id: r.wr_id,
                op: CompletionOp::Recv,
                status: WcStatus::WrFlushError,
                byte_len: 0,
                imm: None,
            }));
        }
        self.state = QpState::Error(status);
        self.req.timer_ns = None;
        self.req.rnr_until_ns = None;
        self.resp.reads.clear();
        self.resp.ack = None;
        self.resp.nak = None;
        self.cnp_pending = false;
        ctx.events.push(RnicEvent::QpError {
            qpn: self.cfg.local_qpn,
            status,
        });
    }

    /// Everything up to `psn` (inclusive) was received by the peer. Returns
    /// false if that was known already.
    fn ack_up_to(&mut self, psn: u32, now_ns: u64, ctx: &mut Ctx<'_>) -> bool {
        let next = psn_add(psn, 1);
        if psn_cmp(next, self.req.una_psn) != Greater || psn_cmp(next, self.req.high_psn) == Greater
        {
            return false;
        }
        self.req.una_psn = next;
        while let Some(w) = self.req.sq.front() {
            if !w.started || psn_cmp(w.last_psn(), psn) == Greater {
                break;
            }
            if w.wr.op.is_read() {
                // An ACK past a READ whose responses did not all arrive:
                // they were lost (implied NAK, §9.7.5.1.3).
                self.stats.implied_nak_seq_err += 1;
                let from = psn_add(w.first_psn, w.resp_rcvd);
                self.req.una_psn = from;
                self.retry(from, now_ns, ctx);
                return true;
            }
            self.complete_front(WcStatus::Success, ctx);
        }
        if psn_cmp(self.req.next_psn, self.req.una_psn) == Less {
            self.seek(self.req.una_psn);
        }
        self.rearm(now_ns);
        true
    }

    /// Restarts the timer after progress, or stops it if nothing is out.
    fn rearm(&mut self, now_ns: u64) {
        self.req.timer_ns = if self.req.una_psn == self.req.high_psn {
            None
        } else {
            ack_timeout_ns(self.cfg.timeout).map(|t| now_ns + t)
        };
    }

    /// An ACKNOWLEDGE (ACK or NAK) arrived.
    pub(super) fn handle_ack(&mut self, psn: u32, aeth: AethRepr, now_ns: u64, ctx: &mut Ctx<'_>) {
        match aeth.kind() {
            AethSyndrome::Ack { .. } => {
                self.stats.ack_rx += 1;
                self.reset_retries();
                self.ack_up_to(psn, now_ns, ctx);
            }
            AethSyndrome::Nak(code) => {
                self.stats.nak_rx += 1;
                // A NAK acknowledges every PSN before its own.
                if psn_cmp(psn, self.req.una_psn) == Less || psn_cmp(psn, self.req.high_psn) != Less
                {
                    return; // stale
                }
                self.ack_up_to(psn_add(psn, crate::wire::ib::PSN_MASK), now_ns, ctx);
                if !self.ok() {
                    return;
                }
                match code {
                    NakCode::PsnSequenceError => {
                        self.stats.packet_seq_err += 1;
                        self.retry(psn, now_ns, ctx);
                    }
                    NakCode::RemoteAccessError => {
                        self.stats.req_remote_access_errors += 1;
                        self.fail(WcStatus::RemoteAccessError, ctx);
                    }
                    _ => self.fail(WcStatus::RemoteInvalidRequest, ctx),
                }
            }
            AethSyndrome::RnrNak(timer) => {
                self.stats.nak_rx += 1;
                self.stats.rnr_nak_retry_err += 1;
                if psn_cmp(psn, self.req.una_psn) == Less || psn_cmp(psn, self.req.high_psn) != Less
                {
                    return;
                }
                self.ack_up_to(psn_add(psn, crate::wire::ib::PSN_MASK), now_ns, ctx);
                if !self.ok() {
                    return;
                }
                if self.cfg.rnr_retry != RNR_RETRY_INFINITE {
                    if self.req.rnr_left == 0 {
                        self.fail(WcStatus::RnrRetryExceeded, ctx);
                        return;
                    }
                    self.req.rnr_left -= 1;
                }
                self.seek(psn);
                self.req.timer_ns = None;
                self.req.rnr_until_ns = Some(now_ns + rnr_timer_ns(timer).max(1));
            }
            AethSyndrome::Reserved(_) => {}
        }
    }

    /// A READ response arrived with `payload_len` bytes.
    pub(super) fn handle_read_response(
        &mut self,
        psn: u32,
        payload_len: usize,
        now_ns: u64,
        ctx: &mut Ctx<'_>,
    ) {
        let Some(r) = self
            .req
            .sq
            .iter()
            .take_while(|w| w.started)
            .position(|w| w.wr.op.is_read())
        else {
            return; // no READ outstanding: a stale duplicate
        };
        let w = &self.req.sq[r];
        let expected = psn_add(w.first_psn, w.resp_rcvd);
        match psn_cmp(psn, expected) {
            Less => {}
            Greater => {
                if psn_cmp(psn, self.req.high_psn) != Less || self.req.read_gap {
                    return;
                }
                // A response went missing: ask again from it.
                self.req.read_gap = true;
                self.stats.implied_nak_seq_err += 1;
                self.req.una_psn = expected;
                self.retry(expected, now_ns, ctx);
            }
            Equal => {
                // In order: it acknowledges every earlier request too.
                for _ in 0..r {
                    self.complete_front(WcStatus::Success, ctx);
                }
                self.reset_retries();
                self.req.read_gap = false;
                self.stats.rx_payload_bytes += payload_len as u64;
                self.req.una_psn = psn_add(psn, 1);
                let w = &mut self.req.sq[0];
                w.resp_rcvd += 1;
                if w.resp_rcvd == w.npkts {
                    self.stats.rx_messages += 1;
                    self.complete_front(WcStatus::Success, ctx);
                }
                if psn_cmp(self.req.next_psn, self.req.una_psn) == Less {
                    self.seek(self.req.una_psn);
                }
                self.rearm(now_ns);
            }
        }
    }

    /// The retransmission timer or the RNR wait may have expired.
    pub(super) fn handle_timeout(&mut self, now_ns: u64, ctx: &mut Ctx<'_>) {
        if self.req.rnr_until_ns.is_some_and(|t| t <= now_ns) {
            self.req.rnr_until_ns = None;
        }
        if self.req.timer_ns.is_none_or(|t| t > now_ns) {
            return;
        }
        self.req.timer_ns = None;
        if self.req.una_psn == self.req.high_psn || !self.ok() {
            return;
        }
        self.stats.local_ack_timeout_err += 1;
        let una = self.req.una_psn;
        self.retry(una, now_ns, ctx);
    }

    // ------------------------------------------------------------ responder inputs

    fn set_nak(&mut self, psn: u32, aeth: AethRepr) {
        self.resp.nak = Some((psn, aeth));
        self.resp.ack = None;
        self.resp.unacked = 0;
    }

    fn rnr_nak(&mut self, psn: u32) {
        self.stats.out_of_buffer += 1;
        let aeth = AethRepr::rnr_nak(self.cfg.min_rnr_timer, self.resp.msn);
        self.set_nak(psn, aeth);
    }

    fn access_ok(&self, reth: &RethRepr, write: bool, ctx: &Ctx<'_>) -> bool {
        ctx.mrs.iter().any(|m| {
            m.rkey == reth.rkey
                && (if write {
                    m.access.remote_write
                } else {
                    m.access.remote_read
                })
                && m.contains(reth.virtual_addr, u64::from(reth.dma_len))
        })
    }

    /// A request packet (SEND, WRITE, READ request) arrived.
    pub(super) fn handle_request(&mut self, r: &RoceFrameRepr, ctx: &mut Ctx<'_>) {
        let (opcode, psn, ack_req) = (r.bth.opcode, r.bth.psn, r.bth.ack_req);
        let (imm, payload_len) = (r.imm.map(|i| i.imm), r.payload_len);
        let epsn = self.resp.epsn;
        let reth = match r.ext {
            RoceExt::Reth(r) => Some(r),
            _ => None,
        };
        match psn_cmp(psn, epsn) {
            Greater => {
                self.stats.out_of_sequence += 1;
                if self.resp.nak_gap != Some(epsn) {
                    self.resp.nak_gap = Some(epsn);
                    self.stats.psn_gaps += 1;
                    self.stats.psn_lost += u64::from(psn_diff(psn, epsn));
                    ctx.events.push(RnicEvent::PsnGap {
                        qpn: self.cfg.local_qpn,
                        expected: epsn,
                        got: psn,
                    });
                    let aeth = AethRepr::nak(NakCode::PsnSequenceError, self.resp.msn);
                    self.set_nak(epsn, aeth);
                }
                return;
            }
            Less => {
                self.stats.duplicate_request += 1;
                self.stats.psn_late += 1;
                if opcode == Opcode::RcReadRequest {
                    // READs are idempotent: answer the duplicate again.
                    if let Some(reth) = reth
                        && self.resp.reads.len() < usize::from(self.cfg.max_dest_rd_atomic.max(1))
                        && self.access_ok(&reth, false, ctx)
                    {
                        self.stats.rx_read_requests += 1;
                        let len = u64::from(reth.dma_len);
                        self.resp.reads.push_back(ReadResp {
                            psn,
                            len,
                            npkts: packets_for(len, ctx.mtu),
                            sent: 0,
                            dup: true,
                        });
                    }
                } else {
                    self.resp.ack = Some(psn_add(epsn, crate::wire::ib::PSN_MASK));
                }
                return;
            }
            Equal => {}
        }
        if opcode == Opcode::RcReadRequest {
            let Some(reth) = reth else {
                self.set_nak(psn, AethRepr::nak(NakCode::InvalidRequest, self.resp.msn));
                return;
            };
            if !self.access_ok(&reth, false, ctx) {
                self.stats.resp_remote_access_errors += 1;
                self.set_nak(
                    psn,
                    AethRepr::nak(NakCode::RemoteAccessError, self.resp.msn),
                );
                return;
            }
            let cap = usize::from(self.cfg.max_dest_rd_atomic.max(1));
            if self.resp.reads.len() >= cap {
                // Answers to duplicate READs not begun yet are optional
                // (the requester asks again): new requests go first.
                self.resp.reads.retain(|r| !(r.dup && r.sent == 0));
            }
            if self.resp.reads.len() >= cap {
                self.set_nak(psn, AethRepr::nak(NakCode::InvalidRequest, self.resp.msn));
                return;
            }
            self.stats.rx_read_requests += 1;
            let len = u64::from(reth.dma_len);
            let npkts = packets_for(len, ctx.mtu);
            self.resp.reads.push_back(ReadResp {
                psn,
                len,
                npkts,
                sent: 0,
                dup: false,
            });
            self.resp.epsn = psn_add(psn, npkts);
            self.resp.msn = psn_add(self.resp.msn, 1);
            self.resp.nak_gap = None;
            return;
        }
        let send = matches!(u8::from(opcode), 0x00..=0x05);
        // Opcode sequence (§9.8.3): FIRST/ONLY start a message, MIDDLE/LAST continue one.
        let in_seq = match self.resp.in_msg {
            None => opcode.is_first(),
            Some(m) => !opcode.is_first() && m.send == send,
        };
        if !in_seq {
            self.set_nak(psn, AethRepr::nak(NakCode::InvalidRequest, self.resp.msn));
            return;
        }
        if opcode.is_first() {
            if send {
                let recv = if self.cfg.auto_recv {
                    None
                } else {
                    match self.resp.rq.pop_front() {
                        Some(r) => Some(r),
                        None => return self.rnr_nak(psn),
                    }
                };
                self.resp.in_msg = Some(InMsg {
                    send: true,
                    recv,
                    bytes: 0,
                });
            } else {
                let ok = reth.is_some_and(|r| self.access_ok(&r, true, ctx));
                if !ok {
                    self.stats.resp_remote_access_errors += 1;
                    self.set_nak(
                        psn,
                        AethRepr::nak(NakCode::RemoteAccessError, self.resp.msn),
                    );
                    return;
                }
                self.resp.in_msg = Some(InMsg {
                    send: false,
                    recv: None,
                    bytes: 0,
                });
            }
        }
        // A WRITE with immediate takes its receive with the immediate.
        if !send && imm.is_some() && !self.cfg.auto_recv {
            let has = self.resp.in_msg.is_some_and(|m| m.recv.is_some());
            if !has {
                match self.resp.rq.pop_front() {
                    Some(r) => {
                        if let Some(m) = self.resp.in_msg.as_mut() {
                            m.recv = Some(r);
                        }
                    }
                    None => return self.rnr_nak(psn),
                }
            }
        }
        // Accept the packet.
        self.resp.epsn = psn_add(psn, 1);
        self.resp.nak_gap = None;
        self.stats.rx_payload_bytes += payload_len as u64;
        let m = self.resp.in_msg.as_mut().expect("a message is in progress");
        m.bytes += payload_len as u64;
        if opcode.is_last() {
            let m = self.resp.in_msg.take().expect("a message is in progress");
            self.resp.msn = psn_add(self.resp.msn, 1);
            self.stats.rx_messages += 1;
            if !m.send {
                self.stats.rx_write_requests += 1;
            }
            if let Some(r) = m.recv {
                ctx.events.push(RnicEvent::Completion(Completion {
                    qpn: self.cfg.local_qpn,
                    wr_id: r.wr_id,
                    op: if m.send {
                        CompletionOp::Recv
                    } else {
                        CompletionOp::RecvWriteImm
                    },
                    status: WcStatus::Success,
                    byte_len: m.bytes,
                    imm,
                }));
            }
        }
        self.resp.unacked += 1;
        if ack_req || (ctx.ack_every > 0 && self.resp.unacked >= ctx.ack_every) {
            self.resp.ack = Some(psn);
            self.resp.unacked = 0;
        }
    }
}
