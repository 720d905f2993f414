//! The switch core: one compiled P4 program, the v1model replication engine
//! and the fixed-function traffic manager, wired the way an ASIC wires them.
//!
//! ```text
//! frame ─► MAC ─┬─► PFC/PAUSE ─────────────────────────► TM (pause egress)
//!               └─► P4 parser ─► P4 ingress ─► PRE ─► TM (admission, queues,
//!                   PFC generation, shaper) ─► P4 egress ─► deparser ─► frame
//! ```
//!
//! [`Switch`] is sans-IO like the cores it drives: frames come in through
//! [`Switch::handle_frame`] with the time they arrived, frames go out through
//! [`Switch::poll_transmit`] into a buffer the caller owns, and
//! [`Switch::poll_timeout`] says when to call again. The veth run loop and
//! the simulator are thin drivers around it.
//!
//! Call order per wake-up (as quinn's `Connection`): `handle_frame` for every
//! received frame, `handle_timeout(now)`, then `poll_transmit(port, now, ..)`
//! on each port until it returns `false`, `poll_packet_in` and `poll_event`
//! until empty, and sleep until `poll_timeout()`.
//!
//! Conventions: P4 port numbers are traffic-manager port indices
//! (`0..ports`); [`DEFAULT_CPU_PORT`] (510) is the CPU port, whose frames
//! skip the traffic manager and are handed to the controller with their
//! `packet_in` header. The P4 egress sees the queue depths of the packet's
//! egress queue (`deq_qdepth_bytes` after the packet left it, R-ECN-4).
//!
//! Every frame that does not leave is counted by a [`SwitchDrop`] reason.
//! Per packet, the core copies the frame once into a pooled buffer; it
//! allocates only for multicast replicas and clones.

use std::collections::VecDeque;

use p4_target::arch::{EgressAction, EgressCopy, IngressAction, Pre, prepare_egress};
use p4_target::pipeline::Pipeline;
use p4_target::v1model::{StandardMetadata, instance_type};

use crate::mac::{Mac, RxClass};
use crate::time::Instant;
use crate::tm::{ConfigError, DropReason, EnqueueMeta, Tm, TmConfig, TmEvent};

/// The CPU port used when the configuration does not name one.
pub const DEFAULT_CPU_PORT: u16 = 510;

/// Frames queued for the controller beyond this are dropped and counted.
const MAX_PACKET_IN: usize = 1024;
/// Digests waiting for the control plane; more are counted and discarded.
const MAX_DIGESTS: usize = 4096;

/// Buffers kept for reuse.
const MAX_POOLED_BUFFERS: usize = 4096;

/// Why a frame (or one copy of it) went nowhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SwitchDrop {
    /// A runt or truncated MAC Control frame.
    MacMalformed,
    /// The P4 ingress dropped it (`mark_to_drop`, or no egress port set).
    IngressDrop,
    /// `mcast_grp` named an empty or unknown group.
    McastGroupEmpty,
    /// A clone named a session that is not configured.
    CloneSessionMissing,
    /// The P4 egress dropped it.
    EgressDrop,
    /// Resubmit or recirculation loop over the limit.
    LoopLimit,
    /// `egress_spec` named a port the switch does not have.
    NoSuchPort,
    /// The traffic manager refused it (see [`Switch::tm`] for the reason split).
    Tm,
    /// The controller did not drain packet-ins fast enough.
    PacketInOverflow,
    /// Longer than the ingress port's MTU (plus Ethernet and VLAN headers).
    OverMtu,
}

impl SwitchDrop {
    /// Number of reasons.
    pub const COUNT: usize = 10;
    /// Every reason, in counter order.
    pub const ALL: [SwitchDrop; SwitchDrop::COUNT] = [
        SwitchDrop::MacMalformed,
        SwitchDrop::IngressDrop,
        SwitchDrop::McastGroupEmpty,
        SwitchDrop::CloneSessionMissing,
        SwitchDrop::EgressDrop,
        SwitchDrop::LoopLimit,
        SwitchDrop::NoSuchPort,
        SwitchDrop::Tm,
        SwitchDrop::PacketInOverflow,
        SwitchDrop::OverMtu,
    ];

    /// Stable snake_case name for logs and metrics.
    pub const fn name(self) -> &'static str {
        match self {
            SwitchDrop::MacMalformed => "mac_malformed",
            SwitchDrop::IngressDrop => "ingress_drop",
            SwitchDrop::McastGroupEmpty => "mcast_group_empty",
            SwitchDrop::CloneSessionMissing => "clone_session_missing",
            SwitchDrop::EgressDrop => "egress_drop",
            SwitchDrop::LoopLimit => "loop_limit",
            SwitchDrop::NoSuchPort => "no_such_port",
            SwitchDrop::Tm => "traffic_manager",
            SwitchDrop::PacketInOverflow => "packet_in_overflow",
            SwitchDrop::OverMtu => "over_mtu",
        }
    }

    fn from_arch(reason: p4_target::arch::DropReason) -> Self {
        use p4_target::arch::DropReason as A;
        match reason {
            A::IngressDrop => SwitchDrop::IngressDrop,
            A::McastGroupEmpty => SwitchDrop::McastGroupEmpty,
            A::CloneSessionMissing => SwitchDrop::CloneSessionMissing,
            A::EgressDrop => SwitchDrop::EgressDrop,
            A::ResubmitLimit | A::RecirculateLimit => SwitchDrop::LoopLimit,
        }
    }
}

/// One `digest<T>(receiver, data)` call: the digest id (P4Info) and the
/// struct's member values in declaration order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digest {
    /// P4Info digest id.
    pub id: u32,
    /// Member values, in the order of the digest type's fields.
    pub values: Vec<u128>,
}

/// Switch-level counters (the TM and MACs keep their own).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwitchStats {
    /// Frames received on all ports (data and MAC Control).
    pub rx_frames: u64,
    /// Frames transmitted on all ports (data and PFC).
    pub tx_frames: u64,
    /// Frames handed to the controller.
    pub packet_in: u64,
    /// Frames injected by the controller.
    pub packet_out: u64,
    /// Digests (`digest<T>()` calls) queued for the controller.
    pub digests: u64,
    /// Digests discarded because the controller did not take them in time.
    pub digests_dropped: u64,
    /// Drops by [`SwitchDrop`] index.
    pub drops: [u64; SwitchDrop::COUNT],
}

/// Frames a port received and the switch discarded before classification
/// (runts, malformed MAC Control, over-MTU): per port, for port counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortDiscards {
    /// Malformed frames.
    pub malformed: u64,
    /// Frames over the port MTU.
    pub over_mtu: u64,
}

impl SwitchStats {
    /// Drops for one reason.
    pub fn dropped(&self, reason: SwitchDrop) -> u64 {
        self.drops[reason as usize]
    }
}

/// What [`Switch::poll_transmit`] wrote into the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Frame length in bytes (no FCS).
    pub len: usize,
    /// The egress priority (queue class) of a data frame; `None` for a PFC frame.
    pub priority: Option<u8>,
}

/// Switch settings.
#[derive(Clone, Debug)]
pub struct SwitchConfig {
    /// Traffic manager (and through it the ports: speed, MAC, PFC, ...).
    pub tm: TmConfig,
    /// CPU port number.
    pub cpu_port: u16,
}

impl SwitchConfig {
    /// `n` ports with default traffic-manager settings.
    pub fn with_ports(n: usize) -> Self {
        SwitchConfig {
            tm: TmConfig::with_ports(n),
            cpu_port: DEFAULT_CPU_PORT,
        }
    }
}

/// A packet inside the traffic manager: the parsed packet, the bytes its
/// payload comes from, and where it goes.
#[derive(Debug)]
pub struct Queued<Pk> {
    pkt: Pk,
    data: Vec<u8>,
    copy: EgressCopy,
    truncate_bytes: Option<u32>,
    /// Recirculations this packet has been through.
    loops: u32,
}

/// The switch: see the module doc.
pub struct Switch<P: Pipeline> {
    pipeline: P,
    pre: Pre,
    tm: Tm<Queued<P::Packet>>,
    macs: Vec<Mac>,
    discards: Vec<PortDiscards>,
    cpu_port: u16,
    stats: SwitchStats,
    /// Scratch list of replicas, reused across packets.
    copies: Vec<EgressCopy>,
    pool: Vec<Vec<u8>>,
    packet_in: VecDeque<Vec<u8>>,
    digests: VecDeque<Digest>,
    /// Deparsed frames to run through the pipeline again, with the packet
    /// whose field list they keep and the port they re-enter on.
    recirculate: VecDeque<Recirculation<P::Packet>>,
}

impl<P: Pipeline> std::fmt::Debug for Switch<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Switch")
            .field("program", &self.pipeline.info().name)
            .field("ports", &self.macs.len())
            .field("cpu_port", &self.cpu_port)
            .field("stats", &self.stats)
            .finish()
    }
}

impl<P: Pipeline> Switch<P> {
    /// A switch running `pipeline` with `config`.
    pub fn new(pipeline: P, config: SwitchConfig, now: Instant) -> Result<Self, ConfigError> {
        let macs: Vec<Mac> = config.tm.ports.iter().map(|p| Mac::new(p.mac)).collect();
        let discards = vec![PortDiscards::default(); macs.len()];
        let tm = Tm::new(config.tm, now)?;
        Ok(Switch {
            pipeline,
            pre: Pre::new(),
            tm,
            macs,
            discards,
            cpu_port: config.cpu_port,
            stats: SwitchStats::default(),
            copies: Vec::new(),
            pool: Vec::new(),
            packet_in: VecDeque::new(),
            digests: VecDeque::new(),
            recirculate: VecDeque::new(),
        })
    }

    // ---- getters and configuration ----

    /// The compiled program (its runtime holds the tables).
    pub fn pipeline(&self) -> &P {
        &self.pipeline
    }

    /// The compiled program, for control-plane writes between packets.
    pub fn pipeline_mut(&mut self) -> &mut P {
        &mut self.pipeline
    }

    /// Multicast groups and clone sessions.
    pub fn pre(&self) -> &Pre {
        &self.pre
    }

    /// Multicast groups and clone sessions, for configuration changes.
    pub fn pre_mut(&mut self) -> &mut Pre {
        &mut self.pre
    }

    /// The program and the replication engine together, for control-plane
    /// jobs that change tables and groups in one step.
    pub fn pipeline_and_pre_mut(&mut self) -> (&mut P, &mut Pre) {
        (&mut self.pipeline, &mut self.pre)
    }

    /// The traffic manager (stats, queue depths, watchdog).
    pub fn tm(&self) -> &Tm<Queued<P::Packet>> {
        &self.tm
    }

    /// The traffic manager, for configuration changes.
    pub fn tm_mut(&mut self) -> &mut Tm<Queued<P::Packet>> {
        &mut self.tm
    }

    /// MAC counters of a port.
    pub fn mac_stats(&self, port: u16) -> Option<crate::mac::MacStats> {
        self.macs.get(usize::from(port)).map(Mac::stats)
    }

    /// What `port` received and discarded before classification.
    pub fn port_discards(&self, port: u16) -> Option<PortDiscards> {
        self.discards.get(usize::from(port)).copied()
    }

    /// Switch-level counters.
    pub fn stats(&self) -> SwitchStats {
        self.stats
    }

    /// Number of front-panel ports.
    pub fn num_ports(&self) -> usize {
        self.macs.len()
    }

    /// The CPU port number.
    pub fn cpu_port(&self) -> u16 {
        self.cpu_port
    }

    // ---- inputs ----

    /// A frame received on `port` at `now` (Ethernet, no FCS).
    pub fn handle_frame(&mut self, port: u16, frame: &[u8], now: Instant) {
        let data = self.buffer_from(frame);
        self.handle_frame_owned(port, data, now);
    }

    /// [`Switch::handle_frame`] for a frame in a buffer the switch may keep
    /// (no copy): it queues the bytes and hands the buffer back out through
    /// [`Switch::poll_transmit_owned`] or keeps it in its pool.
    pub fn handle_frame_owned(&mut self, port: u16, frame: Vec<u8>, now: Instant) {
        self.stats.rx_frames += 1;
        let Some(mac) = self.macs.get_mut(usize::from(port)) else {
            self.count(SwitchDrop::NoSuchPort);
            self.recycle(frame);
            return;
        };
        match mac.handle_rx(&frame) {
            RxClass::Control(repr) => self.tm.handle_mac_control(port, &repr, now),
            RxClass::Malformed => {
                self.discards[usize::from(port)].malformed += 1;
                self.count(SwitchDrop::MacMalformed);
            }
            RxClass::Data if frame.len() > self.max_frame_bytes(port, &frame) => {
                self.discards[usize::from(port)].over_mtu += 1;
                self.count(SwitchDrop::OverMtu);
            }
            RxClass::Data => {
                self.ingress(port, frame, instance_type::NORMAL, None, 0, now);
                return;
            }
        }
        self.recycle(frame);
    }

    /// A PacketOut from the controller: `frame` starts with the program's
    /// `packet_out` header and enters ingress on the CPU port.
    pub fn handle_packet_out(&mut self, frame: &[u8], now: Instant) {
        self.stats.packet_out += 1;
        let data = self.buffer_from(frame);
        self.ingress(self.cpu_port, data, instance_type::NORMAL, None, 0, now);
    }

    /// Runs the traffic manager's timers (PFC refresh, pause expiry,
    /// watchdog) and any pending recirculation.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.tm.handle_timeout(now);
        while let Some(r) = self.recirculate.pop_front() {
            let preserve = Some((r.from, r.field_list));
            self.ingress(
                r.port,
                r.data,
                instance_type::RECIRC,
                preserve,
                r.loops,
                now,
            );
        }
    }

    // ---- outputs ----

    /// Writes the next frame `port` may send at `now` into `out` (PFC frames
    /// first, then data the shaper and pause state allow) and says what it
    /// was. Returns `None` when the port has nothing to send now.
    #[must_use]
    pub fn poll_transmit(
        &mut self,
        port: u16,
        now: Instant,
        out: &mut Vec<u8>,
    ) -> Option<Transmit> {
        let mac = self.macs.get_mut(usize::from(port))?;
        if let Some(pfc) = self.tm.poll_control_frame(port, now) {
            out.clear();
            out.resize(crate::wire::pfc::FRAME_LEN, 0);
            match mac.emit_pfc(&pfc, out) {
                Ok(n) => {
                    out.truncate(n);
                    self.stats.tx_frames += 1;
                    return Some(Transmit {
                        len: n,
                        priority: None,
                    });
                }
                Err(e) => tracing::error!(port, error = %e, "cannot build PFC frame"),
            }
        }
        while let Some(deq) = self.tm.poll_transmit(port, now) {
            let priority = deq.meta.priority;
            let Queued {
                mut pkt,
                data,
                copy,
                truncate_bytes,
                loops,
            } = deq.packet;
            let meta = P::meta_mut(&mut pkt);
            prepare_egress(meta, &copy, now.as_nanos());
            meta.enq_timestamp = deq.enqueued_at.as_micros() as u32;
            meta.enq_qdepth = deq.enq_qdepth_packets;
            meta.enq_qdepth_bytes = clamp_u32(deq.enq_qdepth_bytes);
            meta.deq_qdepth = deq.deq_qdepth_packets;
            meta.deq_qdepth_bytes = clamp_u32(deq.deq_qdepth_bytes);
            meta.deq_timedelta = clamp_u32(deq.sojourn.as_micros());
            if self.egress(pkt, data, truncate_bytes, loops, now, out) {
                self.stats.tx_frames += 1;
                return Some(Transmit {
                    len: out.len(),
                    priority: Some(priority),
                });
            }
        }
        None
    }

    /// [`Switch::poll_transmit`] into one of the switch's own buffers,
    /// which the caller keeps (the other half of
    /// [`Switch::handle_frame_owned`]: buffers flow in with arriving frames
    /// and out with leaving ones).
    #[must_use]
    pub fn poll_transmit_owned(&mut self, port: u16, now: Instant) -> Option<(Transmit, Vec<u8>)> {
        let mut out = self.pool.pop().unwrap_or_default();
        match self.poll_transmit(port, now, &mut out) {
            Some(t) => Some((t, out)),
            None => {
                self.pool.push(out);
                None
            }
        }
    }

    /// The next frame for the controller (with its `packet_in` header).
    #[must_use]
    pub fn poll_packet_in(&mut self) -> Option<Vec<u8>> {
        self.packet_in.pop_front()
    }

    /// The next digest for the controller, in emission order.
    #[must_use]
    pub fn poll_digest(&mut self) -> Option<Digest> {
        self.digests.pop_front()
    }

    /// Moves the digests the last ingress run emitted to the controller queue.
    fn collect_digests(&mut self) {
        let emitted = &mut self.pipeline.runtime_mut().digests;
        for (id, values) in emitted.drain(..) {
            if self.digests.len() >= MAX_DIGESTS {
                self.stats.digests_dropped += 1;
            } else {
                self.stats.digests += 1;
                self.digests.push_back(Digest { id, values });
            }
        }
    }

    /// The next traffic-manager event (pause, storm, headroom overflow).
    #[must_use]
    pub fn poll_event(&mut self) -> Option<TmEvent> {
        self.tm.poll_event()
    }

    /// When to call [`Switch::handle_timeout`] / [`Switch::poll_transmit`]
    /// next. Calling early is harmless.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.recirculate.is_empty() {
            self.tm.poll_timeout()
        } else {
            Some(Instant::ZERO)
        }
    }

    /// Returns a transmitted frame's buffer for reuse.
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        if self.pool.len() < MAX_POOLED_BUFFERS {
            buf.clear();
            self.pool.push(buf);
        }
    }

    // ---- the pipeline passes ----

    /// Largest frame `port` accepts: its MTU plus the Ethernet header and
    /// the VLAN tags this frame carries (up to two).
    fn max_frame_bytes(&self, port: u16, frame: &[u8]) -> usize {
        let mtu = self.tm.config().ports[usize::from(port)].mtu_bytes as usize;
        let is_tag = |at: usize| matches!(frame.get(at..at + 2), Some([0x81, 0x00] | [0x88, 0xa8]));
        let tags = if is_tag(12) {
            1 + usize::from(is_tag(16))
        } else {
            0
        };
        mtu + 14 + 4 * tags
    }

    fn count(&mut self, reason: SwitchDrop) {
        self.stats.drops[reason as usize] += 1;
    }

    fn buffer_from(&mut self, frame: &[u8]) -> Vec<u8> {
        let mut buf = self.pool.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(frame);
        buf
    }

    /// Parser + ingress + replication decision, then admission to the TM.
    fn ingress(
        &mut self,
        port: u16,
        data: Vec<u8>,
        itype: u32,
        preserve: Option<(P::Packet, u8)>,
        loops: u32,
        now: Instant,
    ) {
        let now_ns = now.as_nanos();
        let mut passes = 0;
        let mut next = Some((data, itype, preserve));
        while let Some((data, itype, preserve)) = next.take() {
            passes += 1;
            let mut meta = StandardMetadata::arriving(port, data.len() as u32, now_ns);
            meta.instance_type = itype;
            let mut pkt = self.pipeline.parse(&data, meta);
            if let Some((from, list)) = &preserve {
                P::preserve_fields(from, &mut pkt, *list);
            }
            self.pipeline.ingress(&mut pkt);
            if !self.pipeline.runtime().digests.is_empty() {
                self.collect_digests();
            }
            let mut copies = std::mem::take(&mut self.copies);
            let decision = self.pre.after_ingress(P::meta(&pkt), &mut copies);
            if decision.clone_missing {
                self.count(SwitchDrop::CloneSessionMissing);
            }
            if let Some(clone) = decision.clone {
                let mut cmeta = StandardMetadata::arriving(port, data.len() as u32, now_ns);
                cmeta.instance_type = clone.instance_type;
                let mut cpkt = self.pipeline.parse(&data, cmeta);
                if let Some(list) = clone.field_list {
                    P::preserve_fields(&pkt, &mut cpkt, list);
                }
                P::meta_mut(&mut cpkt).priority = clone.config.class_of_service;
                let copy = EgressCopy {
                    port: clone.config.egress_port,
                    rid: 0,
                    instance_type: clone.instance_type,
                };
                let truncate = clone.config.truncate_bytes;
                self.enqueue(
                    port,
                    Queued {
                        pkt: cpkt,
                        data: data.clone(),
                        copy,
                        truncate_bytes: truncate,
                        loops,
                    },
                    now,
                );
            }
            match decision.action {
                IngressAction::Resubmit { field_list } => {
                    if passes > p4_target::arch::MAX_EXTRA_PASSES {
                        self.count(SwitchDrop::LoopLimit);
                    } else {
                        next = Some((data, instance_type::RESUBMIT, Some((pkt, field_list))));
                    }
                }
                IngressAction::Drop(reason) => {
                    self.count(SwitchDrop::from_arch(reason));
                    self.recycle(data);
                }
                IngressAction::Forward => {
                    let (last, rest) = copies.split_last().expect("Forward has a copy");
                    for copy in rest {
                        let q = Queued {
                            pkt: pkt.clone(),
                            data: data.clone(),
                            copy: *copy,
                            truncate_bytes: None,
                            loops,
                        };
                        self.enqueue(port, q, now);
                    }
                    let q = Queued {
                        pkt,
                        data,
                        copy: *last,
                        truncate_bytes: None,
                        loops,
                    };
                    self.enqueue(port, q, now);
                }
            }
            self.copies = copies;
        }
    }

    /// Hands one copy to the traffic manager (or straight to the CPU).
    fn enqueue(&mut self, ingress_port: u16, queued: Queued<P::Packet>, now: Instant) {
        let Queued {
            mut pkt,
            data,
            copy,
            truncate_bytes,
            loops,
        } = queued;
        if copy.port == self.cpu_port {
            prepare_egress(P::meta_mut(&mut pkt), &copy, now.as_nanos());
            let mut out = self.pool.pop().unwrap_or_default();
            if self.egress(pkt, data, truncate_bytes, loops, now, &mut out) {
                if self.packet_in.len() >= MAX_PACKET_IN {
                    self.count(SwitchDrop::PacketInOverflow);
                    self.recycle(out);
                } else {
                    self.stats.packet_in += 1;
                    self.packet_in.push_back(out);
                }
            } else {
                self.recycle(out);
            }
            return;
        }
        if usize::from(copy.port) >= self.macs.len() {
            self.count(SwitchDrop::NoSuchPort);
            self.recycle(data);
            return;
        }
        let meta = P::meta(&pkt);
        // Packets from the controller have no front-panel ingress port: the
        // egress port's own priority group carries their buffer.
        let ingress_port = if usize::from(ingress_port) < self.macs.len() {
            ingress_port
        } else {
            copy.port
        };
        let enq = EnqueueMeta {
            ingress_port,
            egress_port: copy.port,
            priority: meta.priority & 7,
            len_bytes: meta.packet_length,
        };
        let queued = Queued {
            pkt,
            data,
            copy,
            truncate_bytes,
            loops,
        };
        if let Err(reason) = self.tm.handle_enqueue(queued, enq, now) {
            self.count(SwitchDrop::Tm);
            if reason == DropReason::HeadroomOverflow {
                tracing::error!(
                    ingress_port,
                    priority = enq.priority,
                    "lossless packet dropped: headroom exhausted (headroom sized too small)"
                );
            }
        }
    }

    /// Egress + deparser for one dequeued copy; writes the frame to `out`.
    /// Returns `false` when the packet does not leave (dropped, recirculated).
    fn egress(
        &mut self,
        mut pkt: P::Packet,
        data: Vec<u8>,
        truncate_bytes: Option<u32>,
        loops: u32,
        now: Instant,
        out: &mut Vec<u8>,
    ) -> bool {
        self.pipeline.egress(&mut pkt);
        let decision = self.pre.after_egress(P::meta(&pkt));
        if decision.clone_missing {
            self.count(SwitchDrop::CloneSessionMissing);
        }
        let needs_bytes = decision.clone.is_some() || decision.action == EgressAction::Emit;
        if needs_bytes || matches!(decision.action, EgressAction::Recirculate { .. }) {
            self.pipeline.deparse(&mut pkt, &data, out);
        }
        if let Some(clone) = decision.clone {
            // E2E: the copy is the packet as it leaves egress, sent to the session's port.
            let meta = *P::meta(&pkt);
            let bytes = self.buffer_from(out);
            let mut cmeta =
                StandardMetadata::arriving(meta.ingress_port, bytes.len() as u32, now.as_nanos());
            cmeta.instance_type = clone.instance_type;
            cmeta.priority = clone.config.class_of_service;
            let cpkt = self.pipeline.parse(&bytes, cmeta);
            let copy = EgressCopy {
                port: clone.config.egress_port,
                rid: 0,
                instance_type: clone.instance_type,
            };
            let truncate = clone.config.truncate_bytes;
            let q = Queued {
                pkt: cpkt,
                data: bytes,
                copy,
                truncate_bytes: truncate,
                loops,
            };
            self.enqueue(meta.ingress_port, q, now);
        }
        let port = P::meta(&pkt).egress_port;
        let truncate = P::meta(&pkt).truncate_len.or(truncate_bytes);
        self.recycle(data);
        match decision.action {
            EgressAction::Drop(reason) => {
                self.count(SwitchDrop::from_arch(reason));
                false
            }
            EgressAction::Recirculate { field_list } => {
                if loops >= p4_target::arch::MAX_EXTRA_PASSES {
                    self.count(SwitchDrop::LoopLimit);
                } else {
                    let data = self.buffer_from(out);
                    self.recirculate.push_back(Recirculation {
                        port,
                        data,
                        from: pkt,
                        field_list,
                        loops: loops + 1,
                    });
                }
                false
            }
            EgressAction::Emit => {
                if let Some(n) = truncate {
                    out.truncate(n as usize);
                }
                true
            }
        }
    }
}

/// A deparsed frame waiting to run through the pipeline again.
#[derive(Debug)]
struct Recirculation<Pk> {
    /// Port it re-enters on (the one it was leaving by).
    port: u16,
    data: Vec<u8>,
    /// The packet whose field list travels with it.
    from: Pk,
    field_list: u8,
    loops: u32,
}

fn clamp_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}
