//! The switch core: one compiled P4 program, the v1model replication engine
//! and the fixed-function traffic manager, wired the way an ASIC wires them.
//! The daemon, the simulator, the STF runner ([`crate::stf`]) and the tests
//! all drive this one switch.
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
//! the simulator are thin drivers around it; harnesses without links call
//! [`Switch::drain`].
//!
//! Call order per wake-up (as quinn's `Connection`): `handle_frame` for every
//! received frame, `handle_timeout(now)`, then `poll_transmit(port, now, ..)`
//! on each port until it returns `false`, `poll_packet_in`, `poll_digest`
//! and `poll_event` until empty, and sleep until `poll_timeout()`.
//!
//! Conventions: P4 port numbers are traffic-manager port indices
//! (`0..ports`). The CPU port ([`SwitchConfig::cpu_port`], by default
//! [`DEFAULT_CPU_PORT`]) is not a traffic-manager port: frames sent there
//! skip the traffic manager and are handed to the controller with their
//! `packet_in` header. Without a CPU port (a plain v1model program under
//! STF), 510 is a port like any other, as in bmv2. The P4 egress sees the
//! queue depths of the packet's egress queue (`deq_qdepth_bytes` after the
//! packet left it, R-ECN-4).
//!
//! v1model semantics, following bmv2's `simple_switch` (spec: `v1model.p4`
//! and `simple_switch.cpp` `ingress_thread`/`egress_thread`; the decisions
//! themselves are [`p4_target::arch`]):
//! - An I2E clone re-parses the bytes the ingress pass started from (bmv2
//!   restores the packet buffer before copying), resets its user metadata
//!   except the fields of its `@field_list`, gets instance type
//!   `INGRESS_CLONE` and the session's class of service as `priority`, and
//!   goes to egress on the session's port: one copy per replica of the
//!   session, each with the replica's port and `egress_rid`. They are
//!   enqueued before the original's copies.
//! - A resubmitted packet re-parses the same original bytes with instance
//!   type `RESUBMIT`; its field list is copied into fresh user metadata
//!   before the parser runs. The resubmitting pass emits nothing else.
//! - Multicast (non-zero `mcast_grp` at the end of ingress) makes one copy
//!   per (node, port) of the group in node-association order, each with
//!   `egress_rid` of its node and instance type `REPLICATION`.
//! - Otherwise `egress_spec == 511` drops, any other value unicasts with
//!   instance type `NORMAL` (resubmitted and recirculated packets too).
//! - Before egress, `egress_spec` is reset to 0 so that only a
//!   `mark_to_drop` *in egress* drops there.
//! - An E2E clone copies the packet as egress left it (headers as modified,
//!   before the deparser and `computeChecksum`), resets its user metadata
//!   except its field list, starts its standard metadata afresh (ingress
//!   port and packet length kept, instance type `EGRESS_CLONE`, the
//!   session's class of service), and runs egress again on the session's
//!   port, once per replica as for I2E. It happens even when the original
//!   is dropped in egress.
//! - Recirculation re-parses the deparsed bytes with instance type `RECIRC`,
//!   entering on the port the packet first arrived on, with its field list
//!   copied before the parser runs.
//! - `truncate(n)` and a clone session's truncation both cut the emitted
//!   bytes (the shorter wins).
//! - Resubmits of one arriving packet, and recirculations plus E2E clones
//!   of a packet and its copies, are each bounded by
//!   [`p4_target::arch::MAX_EXTRA_PASSES`]; one over the bound is dropped
//!   as [`SwitchDrop::LoopLimit`].
//! - Digests are collected after every ingress and egress pass, in order.
//!
//! Every frame that does not leave is counted by a [`SwitchDrop`] reason.
//! Per packet, the core copies the frame at most once, into a pooled buffer
//! ([`Switch::handle_frame`]; [`Switch::handle_frame_owned`] takes the
//! buffer as it is); that buffer is the one that leaves: the deparser
//! rewrites the headers in front of the payload
//! ([`Pipeline::deparse_in_place`]) unless the packet is traced. The
//! parsed packet lives in a pooled slot too, with everything its copy
//! carries through the traffic manager, which queues only a pointer to it
//! (see [`Queued`]). Once the pools have warmed up, forwarding a packet
//! allocates nothing (`tests/switch_alloc.rs`); a copy the traffic manager
//! refuses comes back from [`Tm::admit`] and its buffer and slot return to
//! the pools, so tail drops allocate nothing either.

mod ledger;

use std::collections::VecDeque;

use p4_target::arch::{
    EgressAction, EgressCopy, IngressAction, MAX_EXTRA_PASSES, Pre, prepare_egress,
};
use p4_target::pipeline::Pipeline;
use p4_target::v1model::{StandardMetadata, instance_type};

use p4_target::trace::{Event, PacketTrace, Stage};

use crate::dcbx::{AgentConfig, DcbxEvent, PortAgent};
use crate::mac::{Mac, RxClass};
pub use crate::port::LinkDown;
use crate::time::Instant;
use crate::tm::config::{SchedMode, Threshold};
use crate::tm::{ConfigError, DropReason, EnqueueMeta, Tm, TmConfig, TmEvent};

mod trace;
pub use self::ledger::{Imbalance, Ledger, PortLedger, PrioLedger};
use trace::{InFlight, Tracing};
pub use trace::{MAX_TRACES, TraceRequest, TraceStats};

/// The CPU port of [`SwitchConfig::with_ports`].
pub const DEFAULT_CPU_PORT: u16 = 510;

/// Frames queued for the controller beyond this are dropped and counted.
const MAX_PACKET_IN: usize = 1024;
/// Digests waiting for the control plane; more are counted and discarded.
const MAX_DIGESTS: usize = 4096;

/// Buffers kept for reuse.
const MAX_POOLED_BUFFERS: usize = 4096;
// Parsed-packet slots kept for reuse are bounded by the traffic manager's
// packet slots instead ([`Switch::recycle_packet`]).

/// Why a frame (or one copy of it) went nowhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SwitchDrop {
    /// A runt or truncated MAC Control frame.
    MacMalformed,
    /// The P4 ingress dropped it (`egress_spec` is the drop port at the end
    /// of ingress, e.g. after `mark_to_drop`).
    IngressDrop,
    /// `mcast_grp` named an empty or unknown group.
    McastGroupEmpty,
    /// A clone named a session that is not configured.
    CloneSessionMissing,
    /// The P4 egress dropped it.
    EgressDrop,
    /// More resubmits, recirculations or E2E clones than
    /// [`p4_target::arch::MAX_EXTRA_PASSES`].
    LoopLimit,
    /// A frame for a port the switch does not have (`egress_spec`, a
    /// replica or a clone session naming one; a frame received on one; a
    /// packet-out without a CPU port).
    NoSuchPort,
    /// The controller did not drain packet-ins fast enough.
    PacketInOverflow,
    /// Longer than the ingress port's MTU (plus Ethernet and VLAN headers).
    OverMtu,
    /// Traffic manager: a lossy priority group past its shared threshold
    /// ([`DropReason::LossyTailDrop`]).
    LossyTailDrop,
    /// Traffic manager: a lossy copy over its egress queue limit
    /// ([`DropReason::EgressLimit`]).
    EgressLimit,
    /// Traffic manager: a lossless copy with shared buffer and headroom
    /// exhausted ([`DropReason::HeadroomOverflow`]): headroom sized too small.
    HeadroomOverflow,
    /// Traffic manager: discarded by the PFC watchdog's drop action, on
    /// arrival or flushed from its queue ([`DropReason::WatchdogDrop`]).
    WatchdogDrop,
    /// Lost in the kernel's receive ring or socket buffer before the
    /// driver read it (AF_PACKET `PACKET_STATISTICS` `tp_drops`), reported
    /// with [`Switch::handle_rx_lost`].
    KernelRing,
    /// For a port whose link is down ([`Switch::set_port_oper`]): sent
    /// there while down, or queued for it when it went down.
    PortDown,
}

impl SwitchDrop {
    /// Number of reasons.
    pub const COUNT: usize = 15;
    /// Every reason, in counter order.
    pub const ALL: [SwitchDrop; SwitchDrop::COUNT] = [
        SwitchDrop::MacMalformed,
        SwitchDrop::IngressDrop,
        SwitchDrop::McastGroupEmpty,
        SwitchDrop::CloneSessionMissing,
        SwitchDrop::EgressDrop,
        SwitchDrop::LoopLimit,
        SwitchDrop::NoSuchPort,
        SwitchDrop::PacketInOverflow,
        SwitchDrop::OverMtu,
        SwitchDrop::LossyTailDrop,
        SwitchDrop::EgressLimit,
        SwitchDrop::HeadroomOverflow,
        SwitchDrop::WatchdogDrop,
        SwitchDrop::KernelRing,
        SwitchDrop::PortDown,
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
            SwitchDrop::PacketInOverflow => "packet_in_overflow",
            SwitchDrop::OverMtu => "over_mtu",
            SwitchDrop::LossyTailDrop => DropReason::LossyTailDrop.name(),
            SwitchDrop::EgressLimit => DropReason::EgressLimit.name(),
            SwitchDrop::HeadroomOverflow => DropReason::HeadroomOverflow.name(),
            SwitchDrop::WatchdogDrop => DropReason::WatchdogDrop.name(),
            SwitchDrop::KernelRing => "kernel_ring",
            SwitchDrop::PortDown => "port_down",
        }
    }

    /// The switch's name for a traffic-manager drop. The switch checks
    /// ports and masks priorities before it enqueues, so the TM's
    /// `InvalidMetadata` can only mean a port that does not exist.
    pub const fn from_tm(reason: DropReason) -> Self {
        match reason {
            DropReason::LossyTailDrop => SwitchDrop::LossyTailDrop,
            DropReason::EgressLimit => SwitchDrop::EgressLimit,
            DropReason::HeadroomOverflow => SwitchDrop::HeadroomOverflow,
            DropReason::WatchdogDrop => SwitchDrop::WatchdogDrop,
            DropReason::InvalidMetadata => SwitchDrop::NoSuchPort,
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

/// What [`Switch::poll_event`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SwitchEvent {
    /// From the traffic manager (pauses, storms, headroom overflow).
    Tm(TmEvent),
    /// From a port's LLDP/DCBX agent.
    Dcbx {
        /// The port.
        port: u16,
        /// What happened.
        event: DcbxEvent,
    },
    /// A port's link went down or came back ([`Switch::set_port_oper`]).
    PortOper {
        /// The port.
        port: u16,
        /// `None`: up; `Some`: down, and why.
        down: Option<LinkDown>,
    },
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
    /// Ingress passes run (arrivals, resubmits, recirculations, packet-outs).
    pub ingress_passes: u64,
    /// Egress passes run (one per unicast copy, replica or clone).
    pub egress_passes: u64,
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
    /// The CPU port: copies sent there become packet-ins, packet-outs enter
    /// ingress there. It must not be a traffic-manager port. `None`: no CPU
    /// port, and packet-outs are dropped.
    pub cpu_port: Option<u16>,
    /// Ports behave as Ethernet MACs: they consume MAC Control frames (PFC,
    /// PAUSE) and discard runts and malformed MAC Control frames. `false`:
    /// every received frame, whatever its length or EtherType, goes to the
    /// P4 parser, as in bmv2.
    pub mac_control: bool,
}

impl SwitchConfig {
    /// `n` ports with default traffic-manager settings, MAC Control
    /// handling and the CPU port [`DEFAULT_CPU_PORT`]: the daemon's switch.
    pub fn with_ports(n: usize) -> Self {
        SwitchConfig {
            tm: TmConfig::with_ports(n),
            cpu_port: Some(DEFAULT_CPU_PORT),
            mac_control: true,
        }
    }

    /// `n` ports as ideal output queues, for harnesses that check what is
    /// forwarded rather than when (the STF runner): one FIFO queue per port
    /// (every priority maps to queue 0, so a port emits in enqueue order),
    /// a buffer and thresholds no test fills, no PFC, ports that send any
    /// amount at once (a ~4 GB shaper bucket refilled at `u64::MAX` b/s),
    /// frames up to 64 KiB, no MAC layer and no CPU port, as bmv2 runs
    /// under p4c's STF runner.
    pub fn ideal(n: usize) -> Self {
        let mut tm = TmConfig::with_ports(n);
        tm.buffer_bytes = 1 << 40;
        for port in &mut tm.ports {
            port.speed_bps = u64::MAX;
            port.shaper_burst_bytes = u32::MAX;
            port.pfc_enable = 0;
            port.prio_to_pg = [0; 8];
            port.prio_to_queue = [0; 8];
            for pg in &mut port.pgs {
                pg.threshold = Threshold::Static(0);
            }
            for q in &mut port.queues {
                q.sched = SchedMode::Dwrr(1);
                q.limit = Threshold::Static(0);
            }
            port.mtu_bytes = u32::from(u16::MAX);
            port.cable_length_m = None;
            port.watchdog = None;
        }
        SwitchConfig {
            tm,
            cpu_port: None,
            mac_control: false,
        }
    }
}

/// A packet inside the traffic manager: one pointer to a pooled
/// [`PacketSlot`], which holds the parsed packet, the bytes its payload
/// comes from, where it goes and where it came from.
///
/// The TM reads nothing of what it queues (its accounting works from the
/// [`EnqueueMeta`] given beside it), so all it stores and hands back is the
/// pointer. With the 64-byte record it held before (the parsed packet's
/// box, the frame's `Vec` and the copy's words), moving the record into the
/// TM's slot and out again cost ~7 ns of its 48 ns a packet (#17, tm26).
#[derive(Debug)]
pub struct Queued<Pk>(Box<PacketSlot<Pk>>);

/// One copy of a packet, from the parser to the wire, in a box from the
/// switch's pool: the parsed packet is parsed into it in place
/// ([`Pipeline::parse_into`]) and never moved, and the rest is written into
/// it field by field once the copy's fate is known.
///
/// Returned by value from [`Pipeline::parse`], the parsed packet cost
/// 16-18 ns a packet on `roce_switch.p4` (#17, act24): a wide copy of the
/// struct right after the parser's narrow stores stalls on store
/// forwarding, and a reused slot copied into the queue after ingress
/// stalled the same way on ingress's stores.
///
/// A slot in the pool has an empty `data` (its buffer went back to the
/// buffer pool) and stale copy fields, which [`PacketSlot::carry`] sets
/// before the slot is queued.
#[derive(Debug)]
struct PacketSlot<Pk> {
    pkt: Pk,
    data: Vec<u8>,
    copy: EgressCopy,
    truncate_bytes: Option<u32>,
    /// Recirculations and E2E clones this packet's line has been through.
    loops: u32,
    /// The port the packet first arrived on (the CPU port for a
    /// packet-out): recirculations re-enter there, clones are charged there.
    ingress_port: u16,
    /// Slot of this copy's packet trace, when it is traced.
    trace: Option<u32>,
}

impl<Pk> PacketSlot<Pk> {
    /// A new slot for `pkt` (only while the pool warms up).
    fn holding(pkt: Pk) -> Box<Self> {
        Box::new(PacketSlot {
            pkt,
            data: Vec::new(),
            copy: EgressCopy {
                port: 0,
                rid: 0,
                instance_type: instance_type::NORMAL,
            },
            truncate_bytes: None,
            loops: 0,
            ingress_port: 0,
            trace: None,
        })
    }

    /// Gives the parsed packet in this slot the rest of what its copy
    /// carries through the TM.
    fn carry(
        &mut self,
        data: Vec<u8>,
        copy: EgressCopy,
        truncate_bytes: Option<u32>,
        loops: u32,
        ingress_port: u16,
        trace: Option<u32>,
    ) {
        self.data = data;
        self.copy = copy;
        self.truncate_bytes = truncate_bytes;
        self.loops = loops;
        self.ingress_port = ingress_port;
        self.trace = trace;
    }
}

/// `true` if `frame` is IPv4 or IPv6 (behind up to two VLAN tags) with
/// ECN = CE (RFC 3168 §5): a few byte reads, no parse of the rest.
fn ecn_ce(frame: &[u8]) -> bool {
    let mut at = 12;
    let ethertype = |at: usize| {
        frame
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    let mut ty = ethertype(at);
    for _ in 0..2 {
        if matches!(ty, Some(0x8100 | 0x88a8)) {
            at += 4;
            ty = ethertype(at);
        }
    }
    let ip = at + 2;
    match ty {
        Some(0x0800) => frame.get(ip + 1).is_some_and(|tos| tos & 3 == 3),
        Some(0x86dd) => frame.get(ip + 1).is_some_and(|b| (b >> 4) & 3 == 3),
        _ => false,
    }
}

/// The switch: see the module doc.
pub struct Switch<P: Pipeline> {
    pipeline: P,
    pre: Pre,
    tm: Tm<Queued<P::Packet>>,
    macs: Vec<Mac>,
    /// Each port's LLDP/DCBX agent, if LLDP runs on it.
    lldp: Vec<Option<PortAgent>>,
    /// Whether any port has an LLDP agent: the per-turn calls skip the walk
    /// over every port's empty slot when none has.
    any_lldp: bool,
    discards: Vec<PortDiscards>,
    /// Data frames received per port whose IP header carried ECN CE
    /// (`ethtool -S` `rx_ecn_mark`).
    rx_ecn_ce: Vec<u64>,
    cpu_port: Option<u16>,
    mac_control: bool,
    stats: SwitchStats,
    /// Where every frame went ([`ledger`]).
    ledger: Ledger,
    /// Scratch list of replicas, reused across packets.
    copies: Vec<EgressCopy>,
    pool: Vec<Vec<u8>>,
    /// Packet slots kept for reuse (see [`PacketSlot`]).
    packets: Vec<Box<PacketSlot<P::Packet>>>,
    packet_in: VecDeque<Vec<u8>>,
    digests: VecDeque<Digest>,
    /// Deparsed frames to run through the pipeline again, with the packet
    /// whose field list they keep and the port they re-enter on.
    recirculate: VecDeque<Recirculation<P::Packet>>,
    /// Packet tracing (off unless a [`TraceRequest`] is set).
    tracing: Tracing,
    /// Ports whose link is down ([`Switch::set_port_oper`]).
    link_down: Vec<Option<LinkDown>>,
    /// Whether any entry of `link_down` is set (as `any_lldp`).
    any_link_down: bool,
    /// Oper changes not yet taken by [`Switch::poll_event`].
    oper_events: VecDeque<SwitchEvent>,
    /// Per port: times the link went down, times it came back.
    oper_changes: Vec<(u64, u64)>,
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
        let rx_ecn_ce = vec![0; macs.len()];
        let lldp = vec![None; macs.len()];
        let ledger = Ledger::new(macs.len());
        let link_down = vec![None; macs.len()];
        let tm = Tm::new(config.tm, now)?;
        Ok(Switch {
            pipeline,
            pre: Pre::new(),
            tm,
            macs,
            lldp,
            any_lldp: false,
            discards,
            rx_ecn_ce,
            cpu_port: config.cpu_port,
            mac_control: config.mac_control,
            stats: SwitchStats::default(),
            ledger,
            copies: Vec::new(),
            pool: Vec::new(),
            packets: Vec::new(),
            packet_in: VecDeque::new(),
            digests: VecDeque::new(),
            recirculate: VecDeque::new(),
            tracing: Tracing::default(),
            oper_changes: vec![(0, 0); link_down.len()],
            link_down,
            any_link_down: false,
            oper_events: VecDeque::new(),
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

    /// The LLDP/DCBX agent of `port`, if LLDP runs there.
    pub fn dcbx(&self, port: u16) -> Option<&PortAgent> {
        self.lldp.get(usize::from(port))?.as_ref()
    }

    /// Starts, reconfigures (`Some`) or stops (`None`) LLDP/DCBX on each
    /// port (`configs[i]` for port `i`; missing entries stop it). A new
    /// agent sends its first frame at `now`; a changed one sends its new
    /// parameters at once; the neighbour of a reconfigured port is kept.
    pub fn handle_dcbx_config(&mut self, configs: &[Option<AgentConfig>], now: Instant) {
        for (i, slot) in self.lldp.iter_mut().enumerate() {
            match (configs.get(i).cloned().flatten(), slot.as_mut()) {
                (None, _) => *slot = None,
                (Some(c), Some(agent)) => agent.handle_config(c, now),
                (Some(c), None) => *slot = Some(PortAgent::new(c, now)),
            }
        }
        self.any_lldp = self.lldp.iter().any(Option::is_some);
    }

    /// When `port` may next start a frame (queued data or PFC the TM
    /// holds, or an LLDP frame due), as far as the port itself knows.
    #[must_use]
    pub fn next_transmit_at(&self, port: u16) -> Option<Instant> {
        let data = self.tm.next_transmit_at(port);
        let lldp = self.lldp_ready_at(port);
        match (data, lldp) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// When `port`'s LLDP frame can start: its due time or the shaper's.
    fn lldp_ready_at(&self, port: u16) -> Option<Instant> {
        let due = self
            .lldp
            .get(usize::from(port))?
            .as_ref()?
            .next_transmit_at();
        let shaper = self.tm.shaper_ready_at(port).unwrap_or(due);
        Some(due.max(shaper))
    }

    /// What `port` received and discarded before classification.
    pub fn port_discards(&self, port: u16) -> Option<PortDiscards> {
        self.discards.get(usize::from(port)).copied()
    }

    /// Data frames received on `port` already marked ECN CE by an
    /// upstream hop (0 for unknown ports).
    pub fn rx_ecn_ce(&self, port: u16) -> u64 {
        self.rx_ecn_ce.get(usize::from(port)).copied().unwrap_or(0)
    }

    /// Switch-level counters.
    pub fn stats(&self) -> SwitchStats {
        self.stats
    }

    /// Where every frame went, per ingress port and priority ([`Ledger`]),
    /// with the copies the watchdog flushed and nobody collected yet
    /// already charged.
    pub fn ledger(&self) -> Ledger {
        let mut ledger = self.ledger.clone();
        for (queued, meta) in self.tm.discarded() {
            let row = ledger.row(queued.0.ingress_port);
            row.dropped[SwitchDrop::WatchdogDrop as usize] += 1;
            let prio = row.prio(meta.priority);
            prio.queued -= 1;
            prio.dropped += 1;
        }
        ledger
    }

    /// Checks the conservation law on every row of [`Switch::ledger`]:
    /// every frame received is forwarded, handed to the controller,
    /// consumed, dropped for a named reason, or still inside.
    pub fn conservation(&self) -> Result<(), Imbalance> {
        self.ledger().check()
    }

    /// Number of front-panel ports.
    pub fn num_ports(&self) -> usize {
        self.macs.len()
    }

    /// The CPU port number, if the switch has one.
    pub fn cpu_port(&self) -> Option<u16> {
        self.cpu_port
    }

    // ---- packet trace ----

    /// Starts tracing the packets `request` selects (replacing any request
    /// before), or stops (`None`). Packets already traced finish their trace.
    pub fn handle_trace_request(&mut self, request: Option<TraceRequest>) {
        self.tracing.set(request);
    }

    /// Whether a trace request is active (it ends by itself after its
    /// `max_packets`).
    pub fn tracing(&self) -> bool {
        self.tracing.active()
    }

    /// The next finished trace (one per copy of a traced packet: when it
    /// left, or was dropped), oldest first.
    #[must_use]
    pub fn poll_trace(&mut self) -> Option<PacketTrace> {
        self.tracing.poll()
    }

    /// Trace counters.
    pub fn trace_stats(&self) -> TraceStats {
        self.tracing.stats
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
        self.ledger.row(port).arrived += 1;
        let Some(mac) = self.macs.get_mut(usize::from(port)) else {
            self.count(port, SwitchDrop::NoSuchPort);
            self.recycle(frame);
            return;
        };
        if self.mac_control {
            match mac.handle_rx(&frame) {
                RxClass::Control(repr) => {
                    self.ledger.row(port).consumed += 1;
                    self.tm.handle_mac_control(port, &repr, now);
                    self.recycle(frame);
                    return;
                }
                RxClass::Lldp => {
                    self.ledger.row(port).consumed += 1;
                    if let Some(agent) = &mut self.lldp[usize::from(port)] {
                        agent.handle_frame(&frame, now);
                    }
                    self.recycle(frame);
                    return;
                }
                RxClass::Malformed => {
                    self.discards[usize::from(port)].malformed += 1;
                    self.count(port, SwitchDrop::MacMalformed);
                    self.recycle(frame);
                    return;
                }
                RxClass::Data => {}
            }
        }
        if frame.len() > self.max_frame_bytes(port, &frame) {
            self.discards[usize::from(port)].over_mtu += 1;
            self.count(port, SwitchDrop::OverMtu);
            self.recycle(frame);
            return;
        }
        if ecn_ce(&frame) {
            self.rx_ecn_ce[usize::from(port)] += 1;
        }
        self.ingress(port, frame, None, 0, now);
    }

    /// A PacketOut from the controller: `frame` starts with the program's
    /// `packet_out` header and enters ingress on the CPU port (dropped as
    /// [`SwitchDrop::NoSuchPort`] when the switch has none).
    pub fn handle_packet_out(&mut self, frame: &[u8], now: Instant) {
        self.stats.packet_out += 1;
        self.ledger.controller.arrived += 1;
        let Some(cpu) = self.cpu_port else {
            self.ledger.controller.dropped[SwitchDrop::NoSuchPort as usize] += 1;
            self.stats.drops[SwitchDrop::NoSuchPort as usize] += 1;
            return;
        };
        let data = self.buffer_from(frame);
        self.ingress(cpu, data, None, 0, now);
    }

    /// `count` frames that reached `port` but were lost before the switch
    /// read them (the kernel's receive ring or socket buffer overflowed):
    /// charged to the port and dropped as [`SwitchDrop::KernelRing`].
    pub fn handle_rx_lost(&mut self, port: u16, count: u64) {
        let row = self.ledger.row(port);
        row.arrived += count;
        row.dropped[SwitchDrop::KernelRing as usize] += count;
        self.stats.drops[SwitchDrop::KernelRing as usize] += count;
    }

    /// The link of `port` went down (`Some(why)`) or came back (`None`) at
    /// `now`. While a port is down, copies for it are dropped as
    /// [`SwitchDrop::PortDown`] before the traffic manager, what it had
    /// queued is released as drops of that reason (at the port's shaper
    /// pace, from [`Switch::handle_timeout`]), PFC/PAUSE frames it would
    /// send are discarded, and [`Switch::poll_transmit`] gives nothing for
    /// it. Going down also ends any pause the peer had asserted on it (the
    /// peer is gone; a returning link starts unpaused). A change (down, up,
    /// or a down port's cause) emits [`SwitchEvent::PortOper`]; a repeat of
    /// the current state, or an unknown port, does nothing.
    pub fn set_port_oper(&mut self, port: u16, down: Option<LinkDown>, now: Instant) {
        let Some(state) = self.link_down.get_mut(usize::from(port)) else {
            return;
        };
        if *state == down {
            return;
        }
        // A down port whose cause changes (set down, then deleted: the
        // kernel clears IFF_UP before the interface goes) reports the new
        // cause, but it is not another transition.
        let transition = state.is_some() != down.is_some();
        *state = down;
        self.any_link_down = self.link_down.iter().any(Option::is_some);
        self.oper_events
            .push_back(SwitchEvent::PortOper { port, down });
        if !transition {
            return;
        }
        let changes = &mut self.oper_changes[usize::from(port)];
        match down {
            Some(_) => changes.0 += 1,
            None => changes.1 += 1,
        }
        if down.is_some() {
            // The peer's pauses end with its link (PauseRxEnded events as
            // for a resume; no received frame is counted).
            self.tm.end_peer_pauses(port, now);
            self.release_down_ports(now);
        }
    }

    /// Whether `port`'s link is up (`None` for a port the switch does not
    /// have).
    pub fn port_oper_up(&self, port: u16) -> Option<bool> {
        self.link_down
            .get(usize::from(port))
            .map(|down| down.is_none())
    }

    /// Times `port`'s link went down and came back: `(downs, ups)`.
    pub fn port_oper_changes(&self, port: u16) -> Option<(u64, u64)> {
        self.oper_changes.get(usize::from(port)).copied()
    }

    /// Why `port` is down, `None` when it is up or unknown.
    pub fn port_link_down(&self, port: u16) -> Option<LinkDown> {
        self.link_down.get(usize::from(port)).copied().flatten()
    }

    /// Runs the traffic manager's timers (PFC refresh, pause expiry,
    /// watchdog) and any pending recirculation.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.tm.handle_timeout(now);
        self.collect_discarded();
        if self.any_link_down {
            self.release_down_ports(now);
        }
        if self.any_lldp {
            for agent in self.lldp.iter_mut().flatten() {
                agent.handle_timeout(now);
            }
        }
        while let Some(r) = self.recirculate.pop_front() {
            self.ledger.row(r.port).recirculating -= 1;
            self.ingress(r.port, r.data, Some((r.from, r.field_list)), r.loops, now);
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
        if self.link_down.get(usize::from(port))?.is_some() {
            return None;
        }
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
        if let Some(agent) = &mut self.lldp[usize::from(port)]
            && agent.next_transmit_at() <= now
            && self.tm.shaper_ready_at(port).is_some_and(|t| t <= now)
        {
            let mut frame = self.pool.pop().unwrap_or_default();
            if let Some(n) = agent.poll_transmit(now, &mut frame) {
                if self.tm.handle_mac_frame_tx(port, n, now) {
                    out.clear();
                    out.extend_from_slice(&frame);
                    self.recycle(frame);
                    self.stats.tx_frames += 1;
                    return Some(Transmit {
                        len: n,
                        priority: None,
                    });
                }
                // A PFC frame took the slot: this LLDP frame is lost, as a
                // MAC whose transmit queue is full loses one.
                tracing::debug!(port, "LLDP frame deferred by PFC");
            }
            self.recycle(frame);
        }
        self.collect_discarded();
        while let Some(deq) = self.tm.poll_transmit(port, now) {
            let priority = deq.meta.priority;
            let mut slot = deq.packet.0;
            let row = slot.ingress_port;
            self.ledger.row(row).prio(priority).queued -= 1;
            let meta = P::meta_mut(&mut slot.pkt);
            prepare_egress(meta, &slot.copy, now.as_nanos());
            meta.enq_timestamp = deq.enqueued_at.as_micros() as u32;
            meta.enq_qdepth = deq.enq_qdepth_packets;
            meta.enq_qdepth_bytes = clamp_u32(deq.enq_qdepth_bytes);
            meta.deq_qdepth = deq.deq_qdepth_packets;
            meta.deq_qdepth_bytes = clamp_u32(deq.deq_qdepth_bytes);
            meta.deq_timedelta = clamp_u32(deq.sojourn.as_micros());
            if let Some(trace) = slot.trace {
                let paused_now = self.tm.paused_ns(port, priority, now);
                if let Some(f) = self.tracing.slot(trace) {
                    f.trace.events.push(Event::Dequeue {
                        copy: f.trace.copy,
                        egress_port: port,
                        queue: deq.queue,
                        time_ns: now.as_nanos(),
                        queued_ns: deq.sojourn.as_nanos(),
                        paused_ns: paused_now.saturating_sub(f.pause_mark_ns),
                        queue_depth_bytes: deq.deq_qdepth_bytes,
                    });
                }
            }
            let outcome = self.egress(slot, now, out);
            let prio = self.ledger.row(row).prio(priority);
            match outcome {
                Egressed::Emitted => prio.forwarded += 1,
                Egressed::Dropped => prio.dropped += 1,
                Egressed::Recirculated => prio.recirculated += 1,
            }
            if outcome == Egressed::Emitted {
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

    /// Runs the timers due at `now`, then hands every frame each port may
    /// send at `now` to `emit(port, frame)`, in port order and per port in
    /// transmit order, until no egress pass runs and no recirculation
    /// waits (an egress pass may recirculate or clone to a port already
    /// visited). For harnesses without links, such as the STF runner and
    /// tests with [`SwitchConfig::ideal`]; a driver with real ports polls
    /// each port with [`Switch::poll_transmit`] instead.
    pub fn drain(&mut self, now: Instant, mut emit: impl FnMut(u16, &[u8])) {
        let mut buf = self.pool.pop().unwrap_or_default();
        loop {
            self.handle_timeout(now);
            let passes = self.stats.egress_passes;
            for port in 0..self.macs.len() {
                let port = port as u16;
                while self.poll_transmit(port, now, &mut buf).is_some() {
                    emit(port, &buf);
                }
            }
            if self.stats.egress_passes == passes && self.recirculate.is_empty() {
                break;
            }
        }
        self.recycle(buf);
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

    /// The next event: port oper changes first, then the traffic
    /// manager's (pause, storm, headroom overflow), then the DCBX agents'
    /// in port order.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<SwitchEvent> {
        if let Some(e) = self.oper_events.pop_front() {
            return Some(e);
        }
        if let Some(e) = self.tm.poll_event() {
            return Some(SwitchEvent::Tm(e));
        }
        if !self.any_lldp {
            return None;
        }
        for (port, agent) in self.lldp.iter_mut().enumerate() {
            if let Some(event) = agent.as_mut().and_then(PortAgent::poll_event) {
                return Some(SwitchEvent::Dcbx {
                    port: port as u16,
                    event,
                });
            }
        }
        None
    }

    /// When to call [`Switch::handle_timeout`] / [`Switch::poll_transmit`]
    /// next. Calling early is harmless.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if !self.recirculate.is_empty() {
            return Some(Instant::ZERO);
        }
        let mut t = self.tm.poll_timeout();
        if !self.any_lldp {
            return t;
        }
        for (port, agent) in self.lldp.iter().enumerate() {
            let Some(agent) = agent else { continue };
            if self.link_down[port].is_some() {
                continue;
            }
            let mut due = agent.poll_timeout();
            if due.is_some_and(|d| d == agent.next_transmit_at()) {
                due = self.lldp_ready_at(port as u16);
            }
            if let Some(d) = due {
                t = Some(t.map_or(d, |x| x.min(d)));
            }
        }
        t
    }

    /// Returns a transmitted frame's buffer for reuse.
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        if self.pool.len() < MAX_POOLED_BUFFERS {
            buf.clear();
            self.pool.push(buf);
        }
    }

    /// Returns a packet slot for reuse, and the frame buffer it holds (if
    /// any) to the buffer pool. The slot pool holds at most as many as the
    /// traffic manager has packet slots: more can never be in flight at
    /// once, give or take the few between ingress and the TM.
    fn recycle_slot(&mut self, mut slot: Box<PacketSlot<P::Packet>>) {
        let data = std::mem::take(&mut slot.data);
        // A slot that never carried a copy (ingress dropped the packet, or
        // its buffer left with the frame) holds no buffer worth pooling.
        if data.capacity() > 0 {
            self.recycle(data);
        }
        if self.packets.len() < self.tm.packet_slots().1 {
            self.packets.push(slot);
        }
    }

    /// Drops a queued copy charged to `row`'s ledger: its trace, if it is
    /// traced, ends with the drop, and what it holds goes back to the pools.
    fn drop_queued(&mut self, slot: Box<PacketSlot<P::Packet>>, row: u16, reason: SwitchDrop) {
        let trace = slot
            .trace
            .and_then(|i| self.tracing.unpark(i))
            .map(|f| f.trace);
        self.drop_traced(row, reason, trace);
        self.recycle_slot(slot);
    }

    /// Parses `data` into a pooled slot (a new one only while the pool
    /// warms up).
    #[inline(always)]
    fn parse_pooled(&mut self, data: &[u8], meta: StandardMetadata) -> Box<PacketSlot<P::Packet>> {
        match self.packets.pop() {
            Some(mut slot) => {
                self.pipeline.parse_into(data, meta, &mut slot.pkt);
                slot
            }
            None => PacketSlot::holding(self.pipeline.parse(data, meta)),
        }
    }

    /// A copy of `from` in a pooled slot (multicast replicas, E2E clones).
    fn clone_pooled(&mut self, from: &P::Packet) -> Box<PacketSlot<P::Packet>> {
        match self.packets.pop() {
            Some(mut slot) => {
                slot.pkt.clone_from(from);
                slot
            }
            None => PacketSlot::holding(from.clone()),
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

    /// Counts a drop of a copy charged to `port`'s ledger row.
    fn count(&mut self, port: u16, reason: SwitchDrop) {
        self.stats.drops[reason as usize] += 1;
        self.ledger.row(port).dropped[reason as usize] += 1;
    }

    /// Charges the copies the watchdog flushed from the TM's queues.
    fn collect_discarded(&mut self) {
        while let Some((Queued(slot), meta)) = self.tm.poll_discarded() {
            self.count(slot.ingress_port, SwitchDrop::WatchdogDrop);
            let prio = self.ledger.row(slot.ingress_port).prio(meta.priority);
            prio.queued -= 1;
            prio.dropped += 1;
            self.recycle_slot(slot);
        }
    }

    /// Empties what down ports have queued, as [`SwitchDrop::PortDown`]
    /// drops, and discards the PFC frames they would send. The traffic
    /// manager releases at the shaper's pace; what it holds back is
    /// released by a later call (its [`Switch::poll_timeout`] says when).
    fn release_down_ports(&mut self, now: Instant) {
        for port in 0..self.link_down.len() {
            if self.link_down[port].is_none() {
                continue;
            }
            let port = port as u16;
            while self.tm.poll_control_frame(port, now).is_some() {}
            while let Some(deq) = self.tm.poll_transmit(port, now) {
                let slot = deq.packet.0;
                let row = slot.ingress_port;
                let prio = self.ledger.row(row).prio(deq.meta.priority);
                prio.queued -= 1;
                prio.dropped += 1;
                self.drop_queued(slot, row, SwitchDrop::PortDown);
            }
        }
    }

    fn buffer_from(&mut self, frame: &[u8]) -> Vec<u8> {
        let mut buf = self.pool.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(frame);
        buf
    }

    /// Moves the digests the last pass emitted to the controller queue.
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

    /// Parser + ingress + replication decision, then admission to the TM;
    /// resubmits loop here. `preserve` is the packet of the pass before and
    /// its field list, for a recirculation.
    fn ingress(
        &mut self,
        port: u16,
        data: Vec<u8>,
        mut preserve: Option<(Box<PacketSlot<P::Packet>>, u8)>,
        loops: u32,
        now: Instant,
    ) {
        let now_ns = now.as_nanos();
        let mut itype = if preserve.is_some() {
            instance_type::RECIRC
        } else {
            instance_type::NORMAL
        };
        let mut passes = 0;
        // This packet's trace, once it is known to be traced.
        let mut traced: Option<PacketTrace> = None;
        let mut want_trace = self.tracing.active() && self.tracing.wants(port);
        loop {
            passes += 1;
            self.stats.ingress_passes += 1;
            let mut meta = StandardMetadata::arriving(port, data.len() as u32, now_ns);
            meta.instance_type = itype;
            if want_trace {
                self.pipeline.runtime_mut().trace.start();
            }
            let mut slot = match preserve.take() {
                // Resubmits and recirculations are rare: the new pass is
                // returned by value into the slot of the pass before.
                Some((mut from, list)) => {
                    from.pkt = self.pipeline.parse_preserving(&data, meta, &from.pkt, list);
                    from
                }
                None => self.parse_pooled(&data, meta),
            };
            if want_trace && traced.is_none() {
                if self.tracing.accepts(self.pipeline.runtime().trace.events()) {
                    traced = Some(self.tracing.begin(port, data.len() as u32, now_ns));
                } else {
                    self.pipeline.runtime_mut().trace.cancel();
                    want_trace = false;
                }
            }
            if let Some(t) = &mut traced {
                t.events.push(Event::Pass {
                    stage: Stage::Ingress,
                    instance_type: itype,
                });
            }
            self.pipeline.ingress(&mut slot.pkt);
            if let Some(t) = &mut traced {
                self.pipeline.runtime_mut().trace.finish_into(&mut t.events);
            }
            if !self.pipeline.runtime().digests.is_empty() {
                self.collect_digests();
            }
            let mut copies = std::mem::take(&mut self.copies);
            let decision = self.pre.after_ingress(P::meta(&slot.pkt), &mut copies);
            if decision.clone_missing {
                self.ledger.row(port).copies += 1;
                self.count(port, SwitchDrop::CloneSessionMissing);
            }
            if let Some(clone) = decision.clone {
                // One copy per replica of the session (by index: enqueueing
                // needs the switch mutably).
                for i in 0..self.pre.clone_replicas(clone.session).len() {
                    let replica = self.pre.clone_replicas(clone.session)[i];
                    self.ledger.row(port).copies += 1;
                    let mut cmeta = StandardMetadata::arriving(port, data.len() as u32, now_ns);
                    cmeta.instance_type = clone.instance_type;
                    let mut cslot = self.parse_pooled(&data, cmeta);
                    P::reset_user_metadata(&mut cslot.pkt);
                    if let Some(list) = clone.field_list {
                        P::preserve_fields(&slot.pkt, &mut cslot.pkt, list);
                    }
                    P::meta_mut(&mut cslot.pkt).priority = clone.class_of_service;
                    let cdata = self.buffer_from(&data);
                    let trace = self.trace_copy(&mut traced, true);
                    let copy = clone.to(replica);
                    cslot.carry(cdata, copy, clone.truncate_bytes, loops, port, trace);
                    self.enqueue(cslot, now);
                }
            }
            let action = decision.action;
            match action {
                IngressAction::Resubmit { field_list } if passes <= MAX_EXTRA_PASSES => {
                    self.copies = copies;
                    preserve = Some((slot, field_list));
                    itype = instance_type::RESUBMIT;
                    continue;
                }
                IngressAction::Resubmit { .. } => {
                    self.drop_traced(port, SwitchDrop::LoopLimit, traced)
                }
                IngressAction::Drop => self.drop_traced(port, SwitchDrop::IngressDrop, traced),
                IngressAction::EmptyGroup => {
                    self.drop_traced(port, SwitchDrop::McastGroupEmpty, traced)
                }
                IngressAction::Forward => {
                    let (last, rest) = copies.split_last().expect("Forward has a copy");
                    self.ledger.row(port).copies += rest.len() as u64;
                    for copy in rest {
                        let cdata = self.buffer_from(&data);
                        let trace = self.trace_copy(&mut traced, true);
                        let mut cslot = self.clone_pooled(&slot.pkt);
                        cslot.carry(cdata, *copy, None, loops, port, trace);
                        self.enqueue(cslot, now);
                    }
                    let trace = self.trace_copy(&mut traced, false);
                    slot.carry(data, *last, None, loops, port, trace);
                    self.enqueue(slot, now);
                    self.copies = copies;
                    return;
                }
            }
            self.copies = copies;
            self.recycle(data);
            self.recycle_slot(slot);
            return;
        }
    }

    /// Hands one copy to the traffic manager (or, for the CPU port, runs
    /// egress at once and queues the packet-in).
    fn enqueue(&mut self, mut slot: Box<PacketSlot<P::Packet>>, now: Instant) {
        let port = slot.copy.port;
        let row = slot.ingress_port;
        if self.cpu_port == Some(port) {
            prepare_egress(P::meta_mut(&mut slot.pkt), &slot.copy, now.as_nanos());
            let mut out = self.pool.pop().unwrap_or_default();
            if self.egress(slot, now, &mut out) != Egressed::Emitted {
                self.recycle(out);
            } else if self.packet_in.len() >= MAX_PACKET_IN {
                self.count(row, SwitchDrop::PacketInOverflow);
                self.recycle(out);
            } else {
                self.stats.packet_in += 1;
                self.ledger.row(row).packet_in += 1;
                self.packet_in.push_back(out);
            }
            return;
        }
        if usize::from(port) >= self.macs.len() {
            self.drop_queued(slot, row, SwitchDrop::NoSuchPort);
            return;
        }
        if self.link_down[usize::from(port)].is_some() {
            self.drop_queued(slot, row, SwitchDrop::PortDown);
            return;
        }
        let meta = P::meta(&slot.pkt);
        // Packets from the controller have no front-panel ingress port: the
        // egress port's own priority group carries their buffer.
        let ingress_port = if usize::from(slot.ingress_port) < self.macs.len() {
            slot.ingress_port
        } else {
            port
        };
        let enq = EnqueueMeta {
            ingress_port,
            egress_port: port,
            priority: meta.priority & 7,
            len_bytes: meta.packet_length,
        };
        let trace = slot.trace;
        let xoff_before = trace.map(|_| self.pg_xoff(enq));
        self.ledger.row(row).prio(enq.priority).offered += 1;
        let admitted = match self.tm.admit(Queued(slot), enq, now) {
            Ok(info) => Ok(info),
            Err(refused) => {
                // Its buffer and packet slot go back to the pools, so tail
                // drops cost later arrivals no allocation.
                self.recycle_slot(refused.packet.0);
                Err(refused.reason)
            }
        };
        if let (Some(slot), Some(xoff_before)) = (trace, xoff_before) {
            self.trace_enqueue(slot, enq, &admitted, xoff_before, now);
        }
        let prio = self.ledger.row(row).prio(enq.priority);
        match admitted {
            Ok(_) => prio.queued += 1,
            Err(_) => prio.dropped += 1,
        }
        if let Err(reason) = admitted {
            self.count(row, SwitchDrop::from_tm(reason));
            if reason == DropReason::HeadroomOverflow {
                // Logged at the 1st, 2nd, 4th, 8th, ... drop of the port: a
                // headroom sized too small under a storm must not flood the
                // log with a line per packet; the counter has every one.
                let so_far = self.ledger.row(row).dropped[SwitchDrop::HeadroomOverflow as usize];
                if so_far.is_power_of_two() {
                    tracing::error!(
                        ingress_port,
                        priority = enq.priority,
                        drops_so_far = so_far,
                        "lossless packet dropped: headroom exhausted (headroom sized too small, R-BUF-2)"
                    );
                }
            }
        }
    }

    /// Egress + deparser for one copy whose standard metadata is prepared;
    /// writes the frame to `out` when it leaves. Drops are counted here;
    /// the caller charges the outcome to its priority.
    fn egress(
        &mut self,
        mut slot: Box<PacketSlot<P::Packet>>,
        now: Instant,
        out: &mut Vec<u8>,
    ) -> Egressed {
        let (truncate_bytes, loops, ingress_port, trace) = (
            slot.truncate_bytes,
            slot.loops,
            slot.ingress_port,
            slot.trace,
        );
        self.stats.egress_passes += 1;
        let mut traced = trace.and_then(|i| self.tracing.unpark(i)).map(|f| f.trace);
        let pass_start = traced.as_mut().map(|t| {
            t.events.push(Event::Pass {
                stage: Stage::Egress,
                instance_type: P::meta(&slot.pkt).instance_type,
            });
            self.pipeline.runtime_mut().trace.start();
            t.events.len()
        });
        self.pipeline.egress(&mut slot.pkt);
        if let (Some(t), Some(start)) = (&mut traced, pass_start) {
            self.pipeline.runtime_mut().trace.finish_into(&mut t.events);
            let depth = u64::from(P::meta(&slot.pkt).deq_qdepth_bytes);
            if let Some(ecn) = trace::ecn_decision(&t.events[start..], depth) {
                t.events.push(ecn);
            }
        }
        if !self.pipeline.runtime().digests.is_empty() {
            self.collect_digests();
        }
        let decision = self.pre.after_egress(P::meta(&slot.pkt));
        if decision.clone_missing {
            self.ledger.row(ingress_port).copies += 1;
            self.count(ingress_port, SwitchDrop::CloneSessionMissing);
        }
        if let Some(clone) = decision.clone {
            // One copy per replica of the session.
            for i in 0..self.pre.clone_replicas(clone.session).len() {
                let replica = self.pre.clone_replicas(clone.session)[i];
                self.ledger.row(ingress_port).copies += 1;
                if loops >= MAX_EXTRA_PASSES {
                    self.count(ingress_port, SwitchDrop::LoopLimit);
                    continue;
                }
                // E2E: the packet as egress left it, metadata started afresh.
                let mut cslot = self.clone_pooled(&slot.pkt);
                P::reset_user_metadata(&mut cslot.pkt);
                if let Some(list) = clone.field_list {
                    P::preserve_fields(&slot.pkt, &mut cslot.pkt, list);
                }
                let old = *P::meta(&slot.pkt);
                let cmeta = P::meta_mut(&mut cslot.pkt);
                *cmeta =
                    StandardMetadata::arriving(old.ingress_port, old.packet_length, now.as_nanos());
                cmeta.instance_type = clone.instance_type;
                cmeta.priority = clone.class_of_service;
                let cdata = self.buffer_from(&slot.data);
                let trace = self.trace_copy(&mut traced, true);
                let copy = clone.to(replica);
                cslot.carry(
                    cdata,
                    copy,
                    clone.truncate_bytes,
                    loops + 1,
                    ingress_port,
                    trace,
                );
                self.enqueue(cslot, now);
            }
        }
        let emitted = match decision.action {
            EgressAction::Drop => {
                self.drop_traced(ingress_port, SwitchDrop::EgressDrop, traced.take());
                Egressed::Dropped
            }
            EgressAction::Recirculate { field_list } => {
                if loops >= MAX_EXTRA_PASSES {
                    self.drop_traced(ingress_port, SwitchDrop::LoopLimit, traced.take());
                    Egressed::Dropped
                } else {
                    // The recirculated pass is a new arrival (traced again
                    // if the request selects it); this copy's trace ends.
                    if let Some(t) = traced.take() {
                        self.tracing.finish(t);
                    }
                    self.ledger.row(ingress_port).recirculating += 1;
                    let s = &mut *slot;
                    self.pipeline.deparse_in_place(&mut s.pkt, &mut s.data);
                    self.recirculate.push_back(Recirculation {
                        port: ingress_port,
                        data: std::mem::take(&mut slot.data),
                        from: slot,
                        field_list,
                        loops: loops + 1,
                    });
                    return Egressed::Recirculated;
                }
            }
            EgressAction::Emit => {
                let limit = P::meta(&slot.pkt).truncate_len;
                if traced.is_some() {
                    // The trace compares the bytes before and after.
                    self.pipeline.runtime_mut().trace.start();
                    let s = &mut *slot;
                    self.pipeline.deparse(&mut s.pkt, &s.data, out);
                } else {
                    // The payload stays in the buffer it arrived in: only
                    // the headers are rewritten, and the buffer leaves.
                    let s = &mut *slot;
                    self.pipeline.deparse_in_place(&mut s.pkt, &mut s.data);
                    std::mem::swap(out, &mut s.data);
                }
                for n in [limit, truncate_bytes].into_iter().flatten() {
                    out.truncate(n as usize);
                }
                if let Some(mut t) = traced.take() {
                    let port = P::meta(&slot.pkt).egress_port;
                    let mut deparser = Vec::new();
                    self.pipeline.runtime_mut().trace.finish_into(&mut deparser);
                    let headers = deparser
                        .into_iter()
                        .filter_map(|e| match e {
                            Event::Extern {
                                call,
                                object: Some(h),
                                ..
                            } if call == "emit" => Some(h),
                            _ => None,
                        })
                        .collect();
                    t.events.push(Event::Deparse {
                        headers,
                        bytes: out.len() as u32,
                        changed: p4_target::trace::byte_changes(&slot.data, out),
                    });
                    t.events.push(Event::Depart {
                        port,
                        time_ns: now.as_nanos(),
                        bytes: out.len() as u32,
                    });
                    self.tracing.finish(t);
                }
                Egressed::Emitted
            }
        };
        self.recycle_slot(slot);
        emitted
    }
}

impl<P: Pipeline> Switch<P> {
    /// Counts a drop and ends the trace of the dropped packet, if traced.
    fn drop_traced(&mut self, port: u16, reason: SwitchDrop, trace: Option<PacketTrace>) {
        self.count(port, reason);
        if let Some(mut t) = trace {
            t.events.push(Event::Drop {
                reason: reason.name().into(),
            });
            self.tracing.finish(t);
        }
    }

    /// The trace slot of one copy of a traced packet: a clone of the trace
    /// when `more` copies follow, else the trace itself.
    fn trace_copy(&mut self, traced: &mut Option<PacketTrace>, more: bool) -> Option<u32> {
        let t = if more {
            let t = traced.as_mut()?;
            let copy = t.clone();
            t.copy += 1;
            copy
        } else {
            traced.take()?
        };
        Some(self.tracing.park(InFlight {
            trace: t,
            pause_mark_ns: 0,
        }))
    }

    /// Whether the PG `enq` is charged to has XOFF asserted now.
    fn pg_xoff(&self, enq: EnqueueMeta) -> bool {
        let pg = self
            .tm
            .config()
            .ports
            .get(usize::from(enq.ingress_port))
            .map_or(0, |p| p.prio_to_pg[usize::from(enq.priority & 7)]);
        self.tm
            .pg_usage(enq.ingress_port, pg)
            .is_some_and(|u| u.xoff)
    }

    /// Records the traffic manager's decision on a traced copy.
    fn trace_enqueue(
        &mut self,
        slot: u32,
        enq: EnqueueMeta,
        result: &Result<crate::tm::EnqueueInfo, DropReason>,
        xoff_before: bool,
        now: Instant,
    ) {
        match result {
            Ok(info) => {
                let usage = self
                    .tm
                    .pg_usage(enq.ingress_port, info.pg)
                    .unwrap_or_default();
                let lossless = self
                    .tm
                    .config()
                    .ports
                    .get(usize::from(enq.ingress_port))
                    .is_some_and(|p| p.pfc_enable & (1 << (enq.priority & 7)) != 0);
                let paused = self.tm.is_paused(enq.egress_port, enq.priority, now);
                let mark = self.tm.paused_ns(enq.egress_port, enq.priority, now);
                let (shared, headroom) =
                    (self.tm.shared_used_bytes(), self.tm.headroom_used_bytes());
                let Some(f) = self.tracing.slot(slot) else {
                    return;
                };
                f.pause_mark_ns = mark;
                f.trace.events.push(Event::Enqueue {
                    copy: f.trace.copy,
                    ingress_port: enq.ingress_port,
                    egress_port: enq.egress_port,
                    priority: enq.priority,
                    pg: info.pg,
                    lossless,
                    queue: info.queue,
                    charged_bytes: info.charged_bytes,
                    pg_shared_bytes: usage.shared_bytes,
                    pg_headroom_bytes: usage.headroom_bytes,
                    shared_used_bytes: shared,
                    headroom_used_bytes: headroom,
                    queue_depth_bytes: info.enq_qdepth_bytes,
                    queue_depth_packets: info.enq_qdepth_packets,
                    egress_paused: paused,
                });
                if usage.xoff != xoff_before {
                    f.trace.events.push(Event::Pfc {
                        port: enq.ingress_port,
                        pg: info.pg,
                        xoff: usage.xoff,
                    });
                }
            }
            Err(reason) => {
                if let Some(mut f) = self.tracing.unpark(slot) {
                    f.trace.events.push(Event::TmDrop {
                        reason: reason.name().into(),
                    });
                    self.tracing.finish(f.trace);
                }
            }
        }
    }
}

/// What became of a copy after the P4 egress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Egressed {
    /// Deparsed into the output buffer.
    Emitted,
    /// Dropped (and counted).
    Dropped,
    /// Waiting to re-enter ingress.
    Recirculated,
}

/// A deparsed frame waiting to run through the pipeline again.
#[derive(Debug)]
struct Recirculation<Pk> {
    /// Port it re-enters on (the one its packet first arrived on).
    port: u16,
    data: Vec<u8>,
    /// The packet whose field list travels with it, in its slot (whose
    /// `data` is empty: the frame is `data` above).
    from: Box<PacketSlot<Pk>>,
    field_list: u8,
    loops: u32,
}

fn clamp_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests;
