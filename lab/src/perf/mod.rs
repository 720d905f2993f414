//! The RoCE host agent behind `roceperf`: a thin real-time driver that runs
//! the sans-IO [`Rnic`] model on a [`Port`].
//!
//! The driver owns the clock and the port; the RNIC owns all protocol
//! behaviour (PSNs, ICRC via `dataplane::wire::ib`, CNP generation on CE,
//! DCQCN, PFC honouring). One loop iteration, in the order the RNIC's
//! contract asks for:
//! 1. `now` from a monotonic clock started with the agent;
//!    [`Rnic::handle_timeout`] if `poll_timeout` has passed;
//! 2. receive a batch: PFC / 802.3x PAUSE frames go to
//!    [`Rnic::handle_pfc`] (PAUSE pauses every priority), RoCE frames for our
//!    MAC go to [`Rnic::handle_frame`] (an 802.1Q tag is removed first);
//! 3. re-offer frames the kernel refused last time, then pull frames with
//!    [`Rnic::poll_transmit`] straight into the port's transmit ring
//!    ([`Port::send_with`]; through [`FrameBuf`]s for ports without one)
//!    and hand the batch to the kernel; frames the kernel does not take
//!    stay queued, so a full socket never costs a PSN. The driver is the
//!    wire: it pulls a frame only when the emulated link at
//!    `line_rate_bps` is free (serialisation incl. preamble, FCS and IFG)
//!    within [`pacing_burst`], the same burst the RNIC's QP pacers get, so
//!    a message leaves as trains of frames in few batches;
//! 4. drain [`Rnic::poll_event`] (logged at trace level);
//! 5. sleep in [`Port::wait_readable`] until the RNIC's next deadline
//!    (with the wire busy: when half the burst is free again), the next
//!    report or the end, unless work is pending. Even a short wait is a
//!    sleep (with a 1 µs timer slack), never a `sched_yield`: on a machine
//!    busy with CPU-bound work a yield handed the CPU away for up to
//!    16 ms, and a sleep that overshoots a little is made up by the
//!    pacers' catch-up.
//!
//! QP pairing without an out-of-band channel (the agent has no kernel IP): a
//! client's QP `i` is QPN [`CLIENT_QPN_BASE`]` + i` and writes to the
//! server's QPN [`SERVER_QPN_BASE`]` + i` (`i` from the client's
//! `first_qp`, so clients with disjoint QP ranges share a server); both start at PSN
//! [`INITIAL_PSN`]. A server learns a QP from the first data packet for an
//! unknown QPN in the server range, so a lost first packet still shows as a
//! PSN gap.
//!
//! Spec: roce-semantics §2 (PFC), §10 (RoCEv2), §11 (DCQCN); packet-io.md
//! (no kernel IP on agent veths).

mod app;
pub mod frame;
pub mod nvmf;
pub mod report;
pub mod tcp;
pub mod verdict;
pub mod workload;

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use dataplane::rnic::frame::{RoceFrameRepr, RoceVersion};
use dataplane::rnic::{QpConfig, Rnic, RnicConfig, RnicError, RnicEvent, WIRE_OVERHEAD_BYTES};
use dataplane::time::{Instant, bits_time};
use dataplane::wire::ib::Opcode;
use dataplane::wire::pfc::{MacControlRepr, PfcRepr, parse_frame};
use dataplane::wire::roce_frame::largest_packet_len;

use crate::port::{FrameBuf, Port, PortError};
use app::App;
pub use dataplane::dcbx::host as dcbx;
use dcbx::{DcbxMode, DcbxStatus, HostDcbx};
use nvmf::{Initiator, NvmfConfig, NvmfSummary, Target};
use report::{Report, Snapshot};
use workload::{LatencyProbe, LatencySummary, PerfTest};

/// QPN of a client's first QP.
pub const CLIENT_QPN_BASE: u32 = 0x0100;
/// QPN of a server's first QP.
pub const SERVER_QPN_BASE: u32 = 0x0200;
/// Most QPs per client (the QPN ranges must not overlap).
pub const MAX_QPS: u32 = 0x100;
/// PSN both sides start at.
pub const INITIAL_PSN: u32 = 0;
/// Retransmission timeout exponent of the lab's QPs: 4.096 µs × 2^17 =
/// 0.54 s. perftest's default 14 (67 ms) is sized for hardware peers that
/// answer within microseconds; here both ends are user-space agents on a
/// shared 2-core machine, where a peer descheduled for tens of ms is normal
/// (14 gave 24 spurious retransmissions in a 1.5 s veth run while other
/// builds ran), and a lossless queue of 1 MB drains in 80 ms at 100 Mb/s.
/// A spurious timeout on a lossless priority would show as a
/// retransmission the lab's verdicts count as a failure.
pub const LAB_QP_TIMEOUT: u8 = 17;
/// The shortest pacing burst the agent uses, whatever the RNIC's: the
/// wire may run this far ahead of the clock.
pub const MIN_BURST: Duration = Duration::from_micros(50);
/// Pacing burst of the lab's agents ([`RnicConfig::pacing_burst_ns`],
/// and the wire's own): trains of up to this much wire time leave in one
/// batch, and the agent wakes when half of it is free again (every
/// ~250 µs while sending), not once a frame (every 34 µs for 4 KiB frames
/// at 1 Gb/s, 3.4 µs at 10 Gb/s). A wake-up that comes late on a busy
/// machine is made up from the same allowance. Measured with `agentbench`
/// (release, one sender on a veth, load ~3): 250 µs gave 0.90 of the 1 Gb/s
/// payload rate, 500 µs 1.00. The switch then sees trains of 15 frames a
/// sender at 1 Gb/s, which its buffer and the lab's PFC headroom (8 ms of
/// line rate) absorb.
pub const PACING_BURST: Duration = Duration::from_micros(500);

/// The pacing burst of an agent at `line_rate_bps`: [`PACING_BURST`], cut
/// on fast links to [`dataplane::driver::TRAIN_MAX_BYTES`] (52 µs at
/// 10 Gb/s; 500 µs there was a 625 KB train, past the lab's Kmax), so a
/// sender's trains stay well below what ECN reacts to.
pub fn pacing_burst(line_rate_bps: u64) -> Duration {
    let longest_ns = PACING_BURST.as_nanos() as u64;
    Duration::from_nanos(dataplane::driver::train_ns(longest_ns, line_rate_bps))
}
/// Wire time the emulated link may make up after a late loop turn (as the
/// switch's port shaper banks credit): a sleep that overshoots on a loaded
/// machine would otherwise lower the rate for good. It lets a frame follow
/// the last one early only after the link had been idle-by-lateness.
pub const LATE_CREDIT: Duration = Duration::from_micros(500);
/// Longest a run waits, after its end, for an application's messages in
/// flight (a latency probe's, an NVMe-oF host's commands).
const DRAIN_LIMIT_NS: u64 = 1_000_000_000;
/// Frames pulled from the RNIC and sent per batch.
pub const TX_BATCH: usize = 32;
/// Frames received per batch.
pub const RX_BATCH: usize = 64;

/// Receive ring of an agent's port, bytes, at the least: 16 MiB of slots
/// sized for its largest frame ([`port_config`]) is ~3,800 slots at a
/// 4 KiB RoCE MTU, 13 ms of a 10 Gb/s line: what a receiver descheduled on
/// a busy machine must absorb without loss (an RNIC does not drop for lack
/// of CPU).
pub const PORT_RX_RING_BYTES: usize = 16 << 20;

/// Most memory an agent's receive ring takes, bytes.
pub const PORT_RX_RING_MAX_BYTES: usize = 64 << 20;

/// Line time an agent's receive ring holds, between
/// [`PORT_RX_RING_BYTES`] and [`PORT_RX_RING_MAX_BYTES`]: the kernel's
/// real-time throttling (`sched_rt_runtime_us`, 950 ms of every second)
/// can hold a lab that runs real-time and keeps both cores busy, as
/// `rocelab run --speed 10G` does, for up to 50 ms, and with 13 ms of ring
/// the 10G incast's receiver lost 16–104 frames in 3 of 6 runs (README,
/// #17 lab24).
pub const PORT_RX_RING_TIME_MS: u64 = 50;

/// The port settings of an agent whose RoCE MTU is `roce_mtu_bytes` and
/// line rate `line_rate_bps`: ring slots for its largest frame (an 802.1Q
/// tag included) instead of the interface MTU, which on a 9000-byte lab
/// link more than doubles the slots the ring holds, and
/// [`PORT_RX_RING_TIME_MS`] of the line rate in them.
pub fn port_config(
    version: RoceVersion,
    roce_mtu_bytes: usize,
    line_rate_bps: u64,
) -> crate::port::AfPacketConfig {
    use crate::port::AfPacketConfig;
    AfPacketConfig {
        rx_ring_bytes: AfPacketConfig::rx_ring_bytes_for_line(
            line_rate_bps,
            PORT_RX_RING_TIME_MS,
            PORT_RX_RING_BYTES,
            PORT_RX_RING_MAX_BYTES,
        ),
        max_frame_bytes: Some(largest_packet_len(version, roce_mtu_bytes) + 14 + 4),
        ..AfPacketConfig::default()
    }
}

/// What the agent does.
#[derive(Debug, Clone, PartialEq)]
pub enum Role {
    /// Run a perftest test against a server: WRITE, READ or SEND streams,
    /// or one message in flight for latency.
    Client {
        /// What to measure.
        test: PerfTest,
        /// Number of QPs (1..=[`MAX_QPS`]).
        qps: u32,
        /// Server IPv4 address.
        dst_ip: Ipv4Addr,
        /// Server (or next-hop) MAC.
        dst_mac: [u8; 6],
        /// Bytes per message.
        message_bytes: u64,
        /// Messages per QP, latency tests: messages timed (`None` = until
        /// the duration ends).
        messages: Option<u64>,
        /// Index of the first QP: QPs are `first_qp..first_qp + qps`, so
        /// several clients can share one server (`first_qp + qps` at most
        /// [`MAX_QPS`]).
        first_qp: u32,
        /// Retransmission timeout exponent (4.096 µs × 2^N; 0 = never).
        qp_timeout: u8,
    },
    /// Answer requests (WRITE, SEND, READ) on QPs learned from the first
    /// packet, and CE marks with CNPs.
    Server,
    /// An NVMe-oF host ([`nvmf`]): `iodepth` commands outstanding on each
    /// of `qps` QPs to a target.
    NvmfHost {
        /// The workload.
        nvmf: NvmfConfig,
        /// Number of QPs (I/O queues).
        qps: u32,
        /// Target IPv4 address.
        dst_ip: Ipv4Addr,
        /// Target (or next-hop) MAC.
        dst_mac: [u8; 6],
        /// Index of the first QP, as for [`Role::Client`].
        first_qp: u32,
        /// Retransmission timeout exponent.
        qp_timeout: u8,
    },
    /// An NVMe-oF target ([`nvmf`]): serves the commands of every host QP
    /// it learns.
    NvmfTarget,
}

/// Errors of the agent.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// Port I/O failed.
    #[error(transparent)]
    Port(#[from] PortError),
    /// The QP set-up is invalid.
    #[error("QP set-up: {0}")]
    Qp(#[from] dataplane::rnic::AddQpError),
    /// Bad parameters.
    #[error("{0}")]
    Config(String),
    /// The RNIC refused a work request.
    #[error("posting a work request: {0}")]
    Post(#[from] dataplane::rnic::PostError),
}

/// Agent-level counters the RNIC does not keep.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct AgentStats {
    /// Frames addressed to another MAC (ignored).
    pub rx_not_for_us: u64,
    /// Non-RoCE, non-PFC frames (ignored).
    pub rx_other: u64,
    /// QPs a server learned.
    pub qps_learned: u64,
    /// Frames the kernel refused at first and that were queued for retry.
    pub tx_deferred: u64,
}

/// A running RNIC on a port. See the module doc.
#[derive(Debug)]
pub struct Agent<P: Port> {
    port: P,
    rnic: Rnic,
    role: Role,
    epoch: std::time::Instant,
    rx: Vec<FrameBuf>,
    tx: Vec<FrameBuf>,
    /// `tx[backlog_start..backlog_end]` were refused by the kernel.
    backlog_start: usize,
    backlog_end: usize,
    /// When the emulated wire finishes the last frame pulled, ns.
    link_free_ns: u64,
    stats: AgentStats,
    /// What posts work requests above the RNIC.
    app: App,
    /// LLDP/DCBX, if enabled ([`Agent::enable_dcbx`]).
    dcbx: Option<HostDcbx>,
    /// Where an LLDP frame is built for sending.
    lldp_buf: Vec<FrameBuf>,
    /// A client that also answers peers writing to it, as a server does.
    serve: bool,
}

/// The QP a client's or host's `i`-th queue uses toward `dst_ip`.
fn client_qp(i: u32, dst_ip: Ipv4Addr, dst_mac: [u8; 6], timeout: u8) -> QpConfig {
    QpConfig {
        local_qpn: CLIENT_QPN_BASE + i,
        remote_qpn: SERVER_QPN_BASE + i,
        remote_ip: dst_ip,
        remote_mac: dst_mac,
        initial_psn: INITIAL_PSN,
        expected_psn: INITIAL_PSN,
        timeout,
        ..QpConfig::default()
    }
}

fn check_qp_range(first_qp: u32, qps: u32) -> Result<(), AgentError> {
    if qps == 0 || first_qp.saturating_add(qps) > MAX_QPS {
        return Err(AgentError::Config(format!(
            "--first-qp + --qps must be 1..={MAX_QPS}, got {first_qp} + {qps}"
        )));
    }
    Ok(())
}

impl<P: Port> Agent<P> {
    /// An agent for `role` with RNIC settings `cfg` on `port`. A client's
    /// QPs are created here.
    pub fn new(port: P, cfg: RnicConfig, role: Role) -> Result<Self, AgentError> {
        let mut rnic = Rnic::new(cfg.clone());
        let mut app = App::None;
        if let Role::Client {
            test,
            qps,
            dst_ip,
            dst_mac,
            message_bytes,
            messages,
            first_qp,
            qp_timeout,
        } = &role
        {
            check_qp_range(*first_qp, *qps)?;
            if *message_bytes == 0 || *message_bytes > u64::from(u32::MAX) {
                return Err(AgentError::Config(
                    "--size must be 1..=4294967295 bytes".into(),
                ));
            }
            if test.is_latency() && *qps != 1 {
                return Err(AgentError::Config(format!(
                    "{test} keeps one message in flight on one QP: --qps must be 1, got {qps}"
                )));
            }
            for i in *first_qp..*first_qp + *qps {
                let qp = QpConfig {
                    // A latency test posts its own requests.
                    message_bytes: if test.is_latency() { 0 } else { *message_bytes },
                    messages: *messages,
                    verb: test.verb(),
                    ..client_qp(i, *dst_ip, *dst_mac, *qp_timeout)
                };
                rnic.add_qp(qp)?;
                if test.is_latency() {
                    let len = *message_bytes as u32;
                    let p = LatencyProbe::new(test.verb(), len, qp.remote_buf, *messages);
                    app = App::Latency(qp.local_qpn, p);
                }
            }
        }
        if let Role::NvmfHost {
            nvmf,
            qps,
            dst_ip,
            dst_mac,
            first_qp,
            qp_timeout,
        } = &role
        {
            check_qp_range(*first_qp, *qps)?;
            nvmf.validate()
                .map_err(|e| AgentError::Config(e.to_string()))?;
            let mut queues = Vec::new();
            for i in *first_qp..*first_qp + *qps {
                let qp = QpConfig {
                    // Capsules need posted receives, as on a real host.
                    auto_recv: false,
                    max_send_wr: nvmf.host_send_queue(),
                    ..client_qp(i, *dst_ip, *dst_mac, *qp_timeout)
                };
                rnic.add_qp(qp)?;
                let q = Initiator::new(NvmfConfig {
                    seed: nvmf.seed.wrapping_add(u64::from(i)),
                    ..*nvmf
                });
                for r in q.initial_receives() {
                    rnic.post_recv(qp.local_qpn, r)?;
                }
                queues.push((qp.local_qpn, q));
            }
            app = App::NvmfHost(queues);
        }
        if role == Role::NvmfTarget {
            app = App::NvmfTarget(Vec::new());
        }
        let cap = cfg.mtu_bytes + 128;
        Ok(Agent {
            port,
            rnic,
            role,
            epoch: std::time::Instant::now(),
            rx: (0..RX_BATCH)
                .map(|_| FrameBuf::with_capacity(cap.max(1600)))
                .collect(),
            tx: (0..TX_BATCH)
                .map(|_| FrameBuf::with_capacity(cap))
                .collect(),
            backlog_start: 0,
            backlog_end: 0,
            link_free_ns: 0,
            stats: AgentStats::default(),
            app,
            dcbx: None,
            lldp_buf: vec![FrameBuf::default()],
            serve: false,
        })
    }

    /// The RNIC model.
    pub fn rnic(&self) -> &Rnic {
        &self.rnic
    }

    /// Agent counters.
    pub fn stats(&self) -> AgentStats {
        self.stats
    }

    /// The port.
    pub fn port(&self) -> &P {
        &self.port
    }

    /// The port, mutable (e.g. to collect its kernel losses).
    pub fn port_mut(&mut self) -> &mut P {
        &mut self.port
    }

    /// Runs DCBX on the port ([`dcbx`]): advertise the RNIC's RoCE
    /// priority and DSCP, and adopt the switch's when `mode` is willing.
    pub fn enable_dcbx(&mut self, mode: DcbxMode, system_name: Option<String>) {
        let c = self.rnic.config();
        let admin = dcbx::DataClass {
            priority: c.data_priority,
            dscp: c.data_dscp,
        };
        let now = self.now();
        self.dcbx = HostDcbx::new(mode, c.mac, c.roce_version, admin, system_name, now);
    }

    /// Also answer peers that write to us (learn their QPs from the first
    /// packet, as [`Role::Server`] does), next to our own workload: a host
    /// that both sends and receives, as in a ring of flows. The run then
    /// lasts its whole duration, not only until our workload is done.
    pub fn serve_peers(&mut self, on: bool) {
        self.serve = on;
    }

    /// DCBX as it stands (`None` when off).
    pub fn dcbx_status(&self) -> Option<DcbxStatus> {
        self.dcbx.as_ref().map(HostDcbx::status)
    }

    /// A latency test's figures so far (`None` for other roles and tests).
    pub fn latency(&self) -> Option<LatencySummary> {
        self.app.latency()
    }

    /// An NVMe-oF host's figures over `secs` seconds (`None` for other
    /// roles).
    pub fn nvmf(&self, secs: f64) -> Option<NvmfSummary> {
        self.app.nvmf(secs)
    }

    fn role_name(&self) -> &'static str {
        match self.role {
            Role::Client { .. } | Role::NvmfHost { .. } => "client",
            Role::Server | Role::NvmfTarget => "server",
        }
    }

    fn now(&self) -> Instant {
        Instant::from_nanos(u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    /// Cumulative counters now.
    pub fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot {
            at_ns: self.now().as_nanos(),
            ..Snapshot::default()
        };
        for q in self.rnic.qpns() {
            if let Some(st) = self.rnic.qp_stats(q) {
                s.tx_payload_bytes += st.tx_payload_bytes;
                s.tx_packets += st.tx_packets;
                s.tx_messages += st.tx_messages;
                s.rx_payload_bytes += st.rx_payload_bytes;
                s.rx_packets += st.rx_packets;
                s.rx_messages += st.rx_messages;
                s.psn_gaps += st.psn_gaps;
                s.psn_lost += st.psn_lost;
                s.psn_late += st.psn_late;
                s.retx_packets += st.retx_packets;
                s.retx_bytes += st.retx_bytes;
                s.rx_ce_packets += st.rx_ce_packets;
                s.cnp_tx += st.cnp_tx;
                s.cnp_rx += st.cnp_rx;
                s.rate_bps += st.rate_bps;
                if st.rate_low_bps != 0 {
                    s.rate_low_bps = match s.rate_low_bps {
                        0 => st.rate_low_bps,
                        low => low.min(st.rate_low_bps),
                    };
                }
            }
        }
        let r = self.rnic.stats();
        let p = usize::from(self.rnic.config().data_priority.min(7));
        s.pfc_rx = r.pfc_rx[p];
        s.paused_ns = r.paused_ns[p];
        // The first frame of each learned QP was counted as unknown-QP.
        s.rx_errors = r.rx_errors.saturating_sub(self.stats.qps_learned);
        s.rdma = self.rnic.counters();
        s
    }

    fn report(&self, kind: &'static str, a: &Snapshot, b: &Snapshot) -> Report {
        Report::between(kind, self.role_name(), self.rnic.qpns().count(), a, b)
    }

    /// Runs until `duration` has passed (`None` = until `stop` is set), or
    /// `stop` is set, or a client has sent all its messages and flushed
    /// them. Every `interval` an interval report is passed to `on_interval`.
    /// Returns the summary of the whole run.
    pub fn run(
        &mut self,
        duration: Option<Duration>,
        interval: Option<Duration>,
        stop: &AtomicBool,
        mut on_interval: impl FnMut(&Report),
    ) -> Result<Report, AgentError> {
        let start = self.snapshot();
        let end_ns = duration.map(|d| start.at_ns.saturating_add(d.as_nanos() as u64));
        let mut last = start;
        let interval_ns = interval.map(|d| (d.as_nanos() as u64).max(1));
        let mut next_report_ns = interval_ns.map(|i| start.at_ns + i);
        let mut drain_end_ns = None;
        // The default 50 µs timer slack would make every pacing wake-up
        // late, as the switch's dataplane thread also finds.
        // SAFETY: PR_SET_TIMERSLACK takes an integer and affects this thread only.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong) };
        loop {
            let now = self.now();
            let now_ns = now.as_nanos();
            if stop.load(Ordering::Relaxed) || end_ns.is_some_and(|e| now_ns >= e) {
                // Messages in flight finish (as fio drains I/O), so the
                // peer is not left retrying requests nobody will answer.
                self.app.stop_issuing();
                let drain_until = *drain_end_ns.get_or_insert(now_ns + DRAIN_LIMIT_NS);
                if self.app.finished() || now_ns >= drain_until {
                    break;
                }
            }
            if let (Some(n), Some(i)) = (next_report_ns, interval_ns)
                && now_ns >= n
            {
                let snap = self.snapshot();
                on_interval(&self.report("interval", &last, &snap));
                last = snap;
                next_report_ns = Some(n + i * (now_ns - n) / i + i);
            }
            if self.rnic.poll_timeout(now).is_some_and(|t| t <= now) {
                self.rnic.handle_timeout(now);
            }
            let received = self.receive(now)?;
            if self.app.posts() {
                let now_ns = self.epoch_ns();
                self.app.post(&mut self.rnic, now_ns)?;
            }
            let sent_full = self.transmit(now)?;
            let mut completed = false;
            while let Some(ev) = self.rnic.poll_event() {
                match ev {
                    RnicEvent::PsnGap { qpn, expected, got } => {
                        tracing::debug!(qpn, expected, got, "PSN gap")
                    }
                    RnicEvent::Completion(c) => {
                        let seen_ns = self.epoch_ns();
                        if !self.app.handle_completion(&mut self.rnic, &c, seen_ns) {
                            tracing::trace!(?c, "completion");
                        }
                        completed = true;
                    }
                    other => tracing::trace!(?other, "event"),
                }
            }
            let app_done = self.app.finished();
            // A serving client runs to the end: peers may still write.
            if matches!(self.role, Role::Client { .. } | Role::NvmfHost { .. })
                && !self.serve
                && self.rnic.is_idle()
                && app_done
                && self.backlog_end == self.backlog_start
                && !self.port.tx_pending()
            {
                break;
            }
            // A completion may let the next message go at once.
            if received == RX_BATCH || sent_full || (completed && !app_done) {
                continue;
            }
            // Ask with the `now` transmit used: the RNIC answers `None` for
            // work that was ready at the time it is asked.
            let mut rnic_wake = self.rnic.poll_timeout(now).map(Instant::as_nanos);
            let burst_ns = self.burst_ns();
            if self.link_free_ns > now.as_nanos() + burst_ns && !self.rnic.is_idle() {
                // The wire is busy: wake when half the burst is free again
                // (a train, not a frame), or for an RNIC deadline before
                // that. Work the RNIC had ready waits for the wire.
                let free = self.link_free_ns - burst_ns / 2;
                rnic_wake = Some(match rnic_wake {
                    Some(w) if w > now.as_nanos() => w.min(free),
                    _ => free,
                });
            }
            let now_ns = self.now().as_nanos();
            let dcbx_wake = self
                .dcbx
                .as_ref()
                .and_then(HostDcbx::poll_timeout)
                .map(Instant::as_nanos);
            // Once the end has passed (draining), it is no deadline.
            let end_wake = end_ns.filter(|&e| e > now_ns);
            let mut wake_ns = [rnic_wake, next_report_ns, end_wake, dcbx_wake]
                .into_iter()
                .flatten()
                .min();
            if self.backlog_end > self.backlog_start || self.port.tx_pending() {
                wake_ns = Some(wake_ns.map_or(now_ns + 20_000, |w| w.min(now_ns + 20_000)));
            }
            let timeout = wake_ns.map(|w| Duration::from_nanos(w.saturating_sub(now_ns)));
            match timeout {
                Some(t) if t.is_zero() => {}
                // Wake at least every 100 ms to notice `stop`.
                Some(t) => {
                    self.port
                        .wait_readable(Some(t.min(Duration::from_millis(100))))?;
                }
                None => {
                    self.port.wait_readable(Some(Duration::from_millis(100)))?;
                }
            }
        }
        let now = self.now();
        self.rnic.handle_timeout(now);
        let end = self.snapshot();
        if let (Some(_), true) = (interval_ns, end.at_ns > last.at_ns) {
            on_interval(&self.report("interval", &last, &end));
        }
        Ok(self.report("summary", &start, &end))
    }

    /// Time since the agent started, ns, read now (not the loop turn's
    /// `now`): a latency sample ends when its completion is seen.
    fn epoch_ns(&self) -> u64 {
        self.now().as_nanos()
    }

    /// Receives one batch and feeds it to the RNIC; returns frames received.
    fn receive(&mut self, now: Instant) -> Result<usize, AgentError> {
        let mut rx = std::mem::take(&mut self.rx);
        let r = self.port.recv_batch(&mut rx);
        if let Ok(n) = r {
            for b in &rx[..n] {
                self.handle_rx(now, b.frame());
            }
        }
        self.rx = rx;
        let n = r?;
        Ok(n)
    }

    fn handle_rx(&mut self, now: Instant, frame: &[u8]) {
        if frame.len() < 14 {
            self.stats.rx_other += 1;
            return;
        }
        let ethertype = u16::from_be_bytes([frame[12], frame[13]]);
        if ethertype == dataplane::wire::lldp::ETHERTYPE_LLDP {
            match &mut self.dcbx {
                Some(d) => {
                    d.handle_frame(frame, now);
                    if let Some(c) = d.poll_class_change() {
                        tracing::info!(
                            priority = c.priority,
                            dscp = c.dscp,
                            "DCBX: RoCE now on priority {} (DSCP {})",
                            c.priority,
                            c.dscp
                        );
                        self.rnic.set_data_class(c.priority, c.dscp);
                    }
                }
                None => self.stats.rx_other += 1,
            }
            return;
        }
        if ethertype == 0x8808 {
            match parse_frame(frame) {
                Ok(Some(MacControlRepr::Pfc(pfc))) => self.rnic.handle_pfc(now, &pfc),
                Ok(Some(MacControlRepr::Pause(p))) => {
                    self.rnic.handle_pfc(now, &PfcRepr::xoff(0xFF, p.quanta))
                }
                _ => self.stats.rx_other += 1,
            }
            return;
        }
        if frame[0..6] != self.rnic.config().mac {
            self.stats.rx_not_for_us += 1;
            return;
        }
        // RoCE parsing expects untagged frames: drop an 802.1Q tag.
        let untagged;
        let frame = if ethertype == 0x8100 && frame.len() >= 18 {
            let mut v = Vec::with_capacity(frame.len() - 4);
            v.extend_from_slice(&frame[..12]);
            v.extend_from_slice(&frame[16..]);
            untagged = v;
            &untagged[..]
        } else {
            frame
        };
        match self.rnic.handle_frame(now, frame) {
            Ok(()) => {}
            Err(RnicError::UnknownQp(qpn))
                if self.serve || matches!(self.role, Role::Server | Role::NvmfTarget) =>
            {
                if self.learn_qp(qpn, frame) {
                    let _ = self.rnic.handle_frame(now, frame);
                }
            }
            Err(RnicError::Frame(_)) => self.stats.rx_other += 1,
            Err(e) => tracing::debug!(error = %e, "frame rejected"),
        }
    }

    /// Creates the server-side QP for a client's first data packet.
    fn learn_qp(&mut self, qpn: u32, frame: &[u8]) -> bool {
        if !(SERVER_QPN_BASE..SERVER_QPN_BASE + MAX_QPS).contains(&qpn) {
            return false;
        }
        let Ok(p) = RoceFrameRepr::parse(frame) else {
            return false;
        };
        if matches!(p.repr.bth.opcode, Opcode::Cnp | Opcode::RcAcknowledge) {
            return false;
        }
        let target = self.role == Role::NvmfTarget;
        let cfg = QpConfig {
            local_qpn: qpn,
            remote_qpn: qpn - SERVER_QPN_BASE + CLIENT_QPN_BASE,
            remote_ip: p.repr.ip.src_addr,
            remote_mac: p.repr.src_mac,
            message_bytes: 0,
            messages: None,
            initial_psn: INITIAL_PSN,
            expected_psn: INITIAL_PSN,
            // A target issues WRITEs, READs and SENDs of its own: receives
            // for capsules, room for two requests a command.
            auto_recv: !target,
            max_send_wr: if target {
                2 * nvmf::TARGET_RECEIVES + 8
            } else {
                QpConfig::default().max_send_wr
            },
            timeout: LAB_QP_TIMEOUT,
            ..QpConfig::default()
        };
        match self.rnic.add_qp(cfg) {
            Ok(()) => {
                if let App::NvmfTarget(queues) = &mut self.app {
                    for r in Target::initial_receives() {
                        // The QP was just added: posting cannot fail.
                        let _ = self.rnic.post_recv(qpn, r);
                    }
                    queues.push((qpn, Target::default()));
                }
                self.stats.qps_learned += 1;
                tracing::info!(qpn, peer = %cfg.remote_ip, "learned QP");
                true
            }
            Err(e) => {
                tracing::debug!(error = %e, "cannot learn QP");
                false
            }
        }
    }

    /// Sends the backlog, then a fresh batch: written straight into the
    /// port's transmit ring where it has one, else through
    /// [`Agent::tx`] buffers. Returns true if a full batch was produced
    /// (more may be ready at once).
    fn transmit(&mut self, now: Instant) -> Result<bool, AgentError> {
        if let Some(f) = self.dcbx.as_mut().and_then(|d| d.poll_transmit(now)) {
            self.lldp_buf[0].set_frame(f);
            // A frame the kernel refuses goes with the next one, 30 s on.
            self.port.send_batch(&self.lldp_buf)?;
        }
        if self.port.tx_pending() {
            // Frames the kernel refused wait in the port's ring: ask again
            // before adding to them.
            self.port.send_batch(&[])?;
            if self.port.tx_pending() {
                return Ok(false);
            }
        }
        if self.backlog_end > self.backlog_start {
            let sent = self
                .port
                .send_batch(&self.tx[self.backlog_start..self.backlog_end])?;
            self.backlog_start += sent;
            if self.backlog_start < self.backlog_end {
                return Ok(false);
            }
        }
        let now_ns = now.as_nanos();
        let burst_ns = self.burst_ns();
        let line_bps = self.rnic.config().line_rate_bps.max(1);
        let (rnic, link_free_ns) = (&mut self.rnic, &mut self.link_free_ns);
        let mut n = 0;
        // The wire: a frame may start while the emulated link is free
        // within the pacing burst.
        let mut pull = |buf: &mut [u8]| -> Option<usize> {
            if n == TX_BATCH || *link_free_ns > now_ns + burst_ns {
                return None;
            }
            let t = rnic.poll_transmit(now, buf)?;
            if t.written_len != t.frame_len {
                // Too long for the slot: the port counts and drops it.
                tracing::warn!(frame_len = t.frame_len, "frame larger than tx buffer");
                return Some(t.frame_len);
            }
            let wire_bytes = (t.frame_len + WIRE_OVERHEAD_BYTES) as u64;
            // A late loop turn may make up to LATE_CREDIT of wire time it
            // missed, so oversleeping does not lower the rate.
            let credit_ns = LATE_CREDIT.as_nanos() as u64;
            *link_free_ns = (*link_free_ns).max(now_ns.saturating_sub(credit_ns))
                + bits_time(wire_bytes, line_bps).as_nanos();
            n += 1;
            Some(t.frame_len)
        };
        if self.port.send_with(&mut pull)?.is_some() {
            return Ok(n == TX_BATCH);
        }
        let mut filled = 0;
        while filled < TX_BATCH {
            let buf = &mut self.tx[filled];
            let Some(len) = pull(buf.space_mut()) else {
                break;
            };
            if len <= buf.capacity_bytes() {
                buf.set_len(len);
                filled += 1;
            }
        }
        if filled == 0 {
            self.backlog_start = 0;
            self.backlog_end = 0;
            return Ok(false);
        }
        let sent = self.port.send_batch(&self.tx[..filled])?;
        if sent < filled {
            self.stats.tx_deferred += (filled - sent) as u64;
        }
        self.backlog_start = sent;
        self.backlog_end = filled;
        Ok(filled == TX_BATCH)
    }

    /// How far ahead of the emulated wire frames may be pulled, ns: the
    /// RNIC's pacing burst, at least [`MIN_BURST`].
    fn burst_ns(&self) -> u64 {
        self.rnic
            .config()
            .pacing_burst_ns
            .max(MIN_BURST.as_nanos() as u64)
    }
}

#[cfg(test)]
mod tests;
