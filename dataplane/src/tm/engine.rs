//! The [`Tm`] state machine itself (see the parent module doc for the rules).

use std::collections::VecDeque;
use std::num::NonZeroU64;

use super::arena::{Arena, List, max_packets};

use crate::time::{Duration, Instant, pause_quanta_to_duration};
use crate::watchdog::{Watchdog, WdEvent, WdMode, WdQueueStats, WdSample};
use crate::wire::ethernet::wire_len;
use crate::wire::pfc::{FRAME_LEN as PFC_FRAME_LEN, MacControlRepr, PfcRepr};

use super::config::{
    ConfigError, ConfigProblem, PortConfig, SchedMode, Threshold, TmConfig, XOFF_REFRESH_MAX,
};
use super::sched::Scheduler;
use super::shaper::Shaper;
use super::stats::{DropCounts, DropReason, PortStats, PrioStats, QueueStats};

/// Upper bound on undrained events; the oldest are discarded past it and
/// counted in [`Tm::events_lost`].
const MAX_EVENTS: usize = 4096;

/// What the ingress pipeline tells the TM about a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnqueueMeta {
    /// Port the packet arrived on (its PG is charged there).
    pub ingress_port: u16,
    /// Port to send it on.
    pub egress_port: u16,
    /// Priority 0..=7 (R-MAP-5: selects the ingress PG and the egress queue).
    pub priority: u8,
    /// Frame length in bytes (without FCS unless the caller includes it).
    pub len_bytes: u32,
}

/// A packet [`Tm::admit`] refused, handed back with the reason (already
/// counted) so its owner can reuse what it holds.
#[derive(Debug)]
pub struct Refused<T> {
    /// Why, as counted in the drop statistics.
    pub reason: DropReason,
    /// The packet as it was offered.
    pub packet: T,
}

/// Result of a successful enqueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnqueueInfo {
    /// Egress queue the packet went to.
    pub queue: u8,
    /// Ingress PG charged.
    pub pg: u8,
    /// Queue depth ahead of this packet, bytes (v1model `enq_qdepth_bytes`).
    pub enq_qdepth_bytes: u64,
    /// Queue depth ahead of this packet, packets (`enq_qdepth`).
    pub enq_qdepth_packets: u32,
    /// Bytes charged to the buffer (whole cells).
    pub charged_bytes: u64,
}

/// A packet leaving an egress queue.
#[derive(Debug)]
pub struct Dequeued<T> {
    /// The payload.
    pub packet: T,
    /// Its enqueue metadata.
    pub meta: EnqueueMeta,
    /// Queue it left.
    pub queue: u8,
    /// When it was enqueued.
    pub enqueued_at: Instant,
    /// Time spent queued (`deq_timedelta`).
    pub sojourn: Duration,
    /// Depth ahead of it at enqueue, bytes.
    pub enq_qdepth_bytes: u64,
    /// Depth ahead of it at enqueue, packets.
    pub enq_qdepth_packets: u32,
    /// Queue bytes after it was removed (R-ECN-4, `deq_qdepth_bytes`).
    pub deq_qdepth_bytes: u64,
    /// Queue packets after it was removed (`deq_qdepth`).
    pub deq_qdepth_packets: u32,
}

/// Notifications for logs, counters and the event stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmEvent {
    /// An XOFF for these priorities was queued on `port` (first, not refreshes).
    XoffSent {
        /// Ingress port whose PG crossed XOFF.
        port: u16,
        /// The PG.
        pg: u8,
        /// Priorities in the frame.
        priorities: u8,
    },
    /// An XON was queued.
    XonSent {
        /// Ingress port.
        port: u16,
        /// The PG.
        pg: u8,
        /// Priorities in the frame.
        priorities: u8,
    },
    /// A received PFC/PAUSE started pausing an egress priority.
    PauseRxStarted {
        /// Egress port.
        port: u16,
        /// Priority.
        priority: u8,
    },
    /// The received pause ended (XON or expiry).
    PauseRxEnded {
        /// Egress port.
        port: u16,
        /// Priority.
        priority: u8,
    },
    /// A lossless packet was dropped with headroom exhausted (R-BUF-2).
    HeadroomOverflow {
        /// Ingress port.
        port: u16,
        /// The PG.
        pg: u8,
    },
    /// The watchdog declared a storm (R-WD-12).
    StormDetected {
        /// Port.
        port: u16,
        /// Priority.
        priority: u8,
        /// Action applied.
        action: crate::watchdog::WdAction,
        /// Counters seen.
        seen: WdSample,
    },
    /// The watchdog restored a queue.
    StormRestored {
        /// Port.
        port: u16,
        /// Priority.
        priority: u8,
        /// Counters at restoration.
        stats: WdQueueStats,
    },
}

/// The TM's timers (one table entry each; `poll_timeout` is their minimum).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// Resend XOFF (or send XON) for a paused ingress PG.
    PfcRefresh {
        /// Port.
        port: u16,
        /// PG.
        pg: u8,
    },
    /// A received pause expires.
    PauseExpiry {
        /// Port.
        port: u16,
        /// Priority.
        priority: u8,
    },
    /// The port's shaper lets the next frame start.
    ShaperRelease {
        /// Port.
        port: u16,
    },
    /// The watchdog polls.
    WatchdogPoll,
}

/// A port's entry in the timer table: one of its [`Timer`]s, named without
/// the port (the entry's place in the table says which), so that keeping
/// the entry current on the per-packet path stores a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PortTimer {
    PfcRefresh { pg: u8 },
    PauseExpiry { priority: u8 },
    ShaperRelease,
}

impl PortTimer {
    /// The timer as [`Tm::next_timer`] names it, on `port`.
    fn on(self, port: u16) -> Timer {
        match self {
            PortTimer::PfcRefresh { pg } => Timer::PfcRefresh { port, pg },
            PortTimer::PauseExpiry { priority } => Timer::PauseExpiry { port, priority },
            PortTimer::ShaperRelease => Timer::ShaperRelease { port },
        }
    }
}

/// Buffer usage of one ingress (port, PG).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PgUsage {
    /// Bytes in the reserved (guaranteed) part.
    pub reserved_bytes: u64,
    /// Bytes in the shared pool.
    pub shared_bytes: u64,
    /// Bytes in headroom.
    pub headroom_bytes: u64,
    /// XOFF currently asserted towards the peer.
    pub xoff: bool,
    /// Highest headroom use seen (high-water mark), bytes.
    pub headroom_peak_bytes: u64,
    /// Highest shared-pool use seen (high-water mark), bytes.
    pub shared_peak_bytes: u64,
    /// Shared bytes at which the PG asserts XOFF now (R-PFC-TX-1): with a
    /// dynamic threshold it moves with the free shared pool. 0 for a lossy PG.
    pub xoff_threshold_bytes: u64,
    /// Shared bytes at or below which an asserted XOFF is released
    /// (R-PFC-TX-2: the XOFF threshold minus the resume offset). 0 for a lossy PG.
    pub xon_threshold_bytes: u64,
}

#[derive(Clone, Copy, Debug)]
struct PgState {
    lossless: bool,
    /// PFC-enabled priorities mapping to this PG.
    prio_mask: u8,
    reserved_cap: u64,
    headroom_cap: u64,
    xon_floor: Option<u64>,
    /// The shared-pool threshold (R-DT-1/2), of the port's configuration.
    threshold: Threshold,
    reserved_used: u64,
    shared_used: u64,
    headroom_used: u64,
    headroom_peak: u64,
    shared_peak: u64,
    xoff: bool,
    /// When the current XOFF began (for `PrioStats::pause_tx_ns`).
    xoff_since: Option<Instant>,
    refresh_at: Option<Instant>,
}

impl Default for PgState {
    /// An unconfigured PG: no buffer, lossy, nothing in use ([`Port::apply`]
    /// sets its parameters).
    fn default() -> Self {
        PgState {
            lossless: false,
            prio_mask: 0,
            reserved_cap: 0,
            headroom_cap: 0,
            xon_floor: None,
            threshold: Threshold::Dynamic(0),
            reserved_used: 0,
            shared_used: 0,
            headroom_used: 0,
            headroom_peak: 0,
            shared_peak: 0,
            xoff: false,
            xoff_since: None,
            refresh_at: None,
        }
    }
}

impl PgState {
    fn total(&self) -> u64 {
        self.reserved_used + self.shared_used + self.headroom_used
    }

    /// Shared bytes at which this PG asserts XOFF (R-PFC-TX-1), given the
    /// shared pool's free bytes.
    #[inline(always)]
    fn xoff_threshold(&self, shared_free_bytes: u64) -> u64 {
        self.threshold.limit_bytes(shared_free_bytes)
    }

    /// R-PFC-TX-1: a lossless PG not yet in XOFF with headroom in use or
    /// shared at its threshold.
    #[inline(always)]
    fn xoff_due(&self, shared_free_bytes: u64) -> bool {
        self.lossless
            && !self.xoff
            && (self.headroom_used > 0
                || self.shared_used >= self.xoff_threshold(shared_free_bytes))
    }

    /// R-PFC-TX-2 (+ the R-PFC-TX-3 XON floor): whether a PG in XOFF may
    /// resume.
    #[inline]
    fn xon_condition(&self, shared_free_bytes: u64, resume_offset_bytes: u64) -> bool {
        if self.headroom_used != 0 {
            return false;
        }
        self.shared_used == 0
            || self.shared_used + resume_offset_bytes <= self.xoff_threshold(shared_free_bytes)
            || self.xon_floor.is_some_and(|x| self.total() <= x)
    }

    /// Takes back a departed packet's `charged` bytes: headroom first,
    /// then shared, then reserved. Returns the (shared, headroom) bytes
    /// freed, for the buffer-wide totals.
    #[inline(always)]
    fn release(&mut self, charged: u64) -> (u64, u64) {
        let mut left = charged;
        let from_headroom = left.min(self.headroom_used);
        self.headroom_used -= from_headroom;
        left -= from_headroom;
        let from_shared = left.min(self.shared_used);
        self.shared_used -= from_shared;
        left -= from_shared;
        self.reserved_used = self.reserved_used.saturating_sub(left);
        (from_shared, from_headroom)
    }
}

#[derive(Debug)]
struct Slot<T> {
    packet: T,
    meta: EnqueueMeta,
    enqueued_at: Instant,
    /// Never 0 (every packet is charged at least one cell): the niche lets
    /// the store keep `Option<Slot>` in the slot's own size.
    charged: NonZeroU64,
    enq_depth_bytes: u64,
    enq_depth_packets: u32,
}

#[derive(Debug)]
struct Queue {
    /// The queued packets, slots of [`Tm`]'s store.
    slots: List,
    bytes: u64,
    charged: u64,
    limit: Threshold,
}

#[derive(Clone, Copy, Debug, Default)]
struct RxPause {
    since: Option<Instant>,
    until: Instant,
}

#[derive(Debug)]
struct Port {
    speed_bps: u64,
    overhead_bytes: u64,
    xoff_quanta: u16,
    pfc_enable: u8,
    legacy_pause: bool,
    prio_to_pg: [u8; 8],
    prio_to_queue: [u8; 8],
    pgs: [PgState; 8],
    queues: [Queue; 8],
    sched: Scheduler,
    shaper: Shaper,
    /// [`PortConfig::shaper_train`], bytes.
    train_bytes: u64,
    rx_pause: [RxPause; 8],
    pending: Option<PfcRepr>,
    /// Bit q set = queue q has packets (kept in step with `queues`).
    nonempty: u8,
    /// Bit g set = PG g has a PFC refresh pending (`refresh_at` is set).
    refreshing: u8,
    /// Bit p set = priority p is paused by a received PFC (`since` is set).
    paused: u8,
    wd_mode: [WdMode; 8],
    stats: [PrioStats; 8],
    qstats: [QueueStats; 8],
    port_stats: PortStats,
    /// This port's entry in the timer table: its earliest timer, kept in
    /// step by [`Tm::refresh_deadline`] after every change to the port.
    deadline: Option<(Instant, PortTimer)>,
}

impl Port {
    fn new(cfg: &PortConfig, now: Instant) -> Self {
        let mut port = Port {
            speed_bps: cfg.speed_bps,
            overhead_bytes: 0,
            xoff_quanta: cfg.xoff_quanta,
            pfc_enable: 0,
            legacy_pause: false,
            prio_to_pg: [0; 8],
            prio_to_queue: [0; 8],
            pgs: [PgState::default(); 8],
            queues: core::array::from_fn(|_| Queue {
                slots: List::default(),
                bytes: 0,
                charged: 0,
                limit: Threshold::Static(0),
            }),
            sched: Scheduler::new(0, [1; 8]),
            shaper: Shaper::new(cfg.speed_bps, cfg.shaper_burst(), now)
                .with_catch_up(cfg.shaper_catch_up()),
            train_bytes: cfg.shaper_train(),
            rx_pause: [RxPause::default(); 8],
            pending: None,
            nonempty: 0,
            refreshing: 0,
            paused: 0,
            wd_mode: [WdMode::Normal; 8],
            stats: [PrioStats::default(); 8],
            qstats: [QueueStats::default(); 8],
            port_stats: PortStats::default(),
            deadline: None,
        };
        port.apply(cfg);
        port
    }

    /// Apply parameters, keeping usage, queues and counters.
    fn apply(&mut self, cfg: &PortConfig) {
        self.speed_bps = cfg.speed_bps;
        self.overhead_bytes = u64::from(cfg.wire_overhead_bytes);
        self.xoff_quanta = cfg.xoff_quanta;
        self.pfc_enable = cfg.pfc_enable;
        self.legacy_pause = cfg.legacy_pause;
        self.prio_to_pg = cfg.prio_to_pg;
        self.prio_to_queue = cfg.prio_to_queue;
        let lossless = cfg.lossless_pg_mask();
        for (g, pg) in self.pgs.iter_mut().enumerate() {
            let pc = &cfg.pgs[g];
            pg.lossless = lossless & (1 << g) != 0;
            pg.prio_mask = (0..8)
                .filter(|&p| cfg.pfc_enable & (1 << p) != 0 && usize::from(cfg.prio_to_pg[p]) == g)
                .fold(0u8, |m, p| m | (1 << p));
            pg.reserved_cap = pc.reserved_bytes;
            pg.headroom_cap = cfg.pg_headroom_bytes(g).unwrap_or(0);
            pg.xon_floor = pc.xon_bytes;
            pg.threshold = pc.threshold;
        }
        let mut strict = 0u8;
        let mut quanta = [1u64; 8];
        for (q, qc) in cfg.queues.iter().enumerate() {
            self.queues[q].limit = qc.limit;
            match qc.sched {
                SchedMode::Strict => strict |= 1 << q,
                SchedMode::Dwrr(w) => {
                    quanta[q] = u64::from(w.max(1)) * u64::from(cfg.dwrr_quantum_bytes.max(1))
                }
            }
        }
        self.sched.reconfigure(strict, quanta);
        self.shaper
            .reconfigure(cfg.speed_bps, cfg.shaper_burst(), cfg.shaper_catch_up());
        self.train_bytes = cfg.shaper_train();
    }

    /// Bit q set = queue q has packets.
    fn nonempty_mask(&self) -> u8 {
        self.nonempty
    }

    /// Bit q set = some priority mapping to queue q is paused (as of the
    /// last expiry pass).
    #[inline]
    fn paused_queue_mask(&self) -> u8 {
        let mut m = 0u8;
        for p in bits(self.paused) {
            m |= 1 << (self.prio_to_queue[p] & 7);
        }
        m
    }

    /// Bit q set = queue q has packets and is not paused: what the
    /// scheduler may pick from, and whether data is backlogged.
    #[inline]
    fn eligible_mask(&self) -> u8 {
        self.nonempty_mask() & !self.paused_queue_mask()
    }

    fn pause_duration(&self, quanta: u16) -> Duration {
        pause_quanta_to_duration(quanta, self.speed_bps)
    }

    /// The earliest of this port's timers: PFC refresh per PG, pause expiry
    /// per paused priority, and the shaper release when it has something
    /// sendable; `eligible` is [`Port::eligible_mask`] (the caller may
    /// need it too).
    #[inline(always)]
    fn compute_deadline(&self, eligible: u8) -> Option<(Instant, PortTimer)> {
        if self.refreshing == 0 && self.paused == 0 {
            // The usual case on the per-packet path: only the shaper.
            return self
                .ready_at(eligible)
                .map(|t| (t, PortTimer::ShaperRelease));
        }
        let mut best: Option<(Instant, PortTimer)> = None;
        let mut consider = |t: Instant, timer: PortTimer| {
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, timer));
            }
        };
        for g in bits(self.refreshing) {
            if let Some(t) = self.pgs[g].refresh_at {
                consider(t, PortTimer::PfcRefresh { pg: g as u8 });
            }
        }
        for p in bits(self.paused) {
            let priority = p as u8;
            consider(self.rx_pause[p].until, PortTimer::PauseExpiry { priority });
        }
        if let Some(t) = self.ready_at(eligible) {
            consider(t, PortTimer::ShaperRelease);
        }
        best
    }

    /// When this port may next start a frame, if it has something sendable
    /// (a pending control frame or a non-empty unpaused queue); with a
    /// train configured and data backlogged, when the shaper lets the
    /// backlog (up to the train, less one frame) go at once. `eligible`
    /// is [`Port::eligible_mask`].
    #[inline(always)]
    fn ready_at(&self, eligible: u8) -> Option<Instant> {
        if self.pending.is_some() || (eligible != 0 && self.train_bytes == 0) {
            return Some(self.shaper.ready_at());
        }
        if eligible == 0 {
            return None;
        }
        Some(self.train_ready_at(eligible))
    }

    /// [`Port::ready_at`] with a train configured and `eligible` queues
    /// backlogged. Out of line: inlined, its loop and division made the
    /// compiler call the whole of `ready_at` out of line on the
    /// per-packet path of ports without trains (hardware-like pacing).
    #[inline(never)]
    fn train_ready_at(&self, eligible: u8) -> Instant {
        let (mut bytes, mut packets) = (0u64, 0u64);
        for q in bits(eligible) {
            bytes += self.queues[q].bytes;
            packets += self.queues[q].slots.len() as u64;
        }
        // The last frame of the backlog starts when the credit is back at
        // 0 after the others: waiting for their bytes delays it nothing.
        let others = bytes - bytes / packets.max(1);
        self.shaper.ready_at_with(others.min(self.train_bytes))
    }

    /// Refills the shaper up to `now` at the idle bucket, if nothing is
    /// sendable: before a change that may give the port a backlog. With
    /// nothing sendable the shaper sets no deadline, so the timer table
    /// stays right without a refresh.
    #[inline]
    fn settle_if_idle(&mut self, now: Instant) {
        if self.pending.is_none() && self.eligible_mask() == 0 {
            self.shaper.settle(now);
        }
    }

    /// This port's entry in the timer table, after a change that left
    /// which queues are eligible as it was (so its backlog too).
    #[inline(always)]
    fn refresh_deadline(&mut self) {
        self.deadline = self.compute_deadline(self.eligible_mask());
    }

    /// [`Port::refresh_deadline`], and tells the shaper whether frames
    /// wait: at the end of an input that may have changed the eligible
    /// queues (each input settled the shaper at its `now` first, while it
    /// was idle). Only such inputs call it: a queue filling from empty or
    /// emptying, a pause starting or ending, a flush, a configuration.
    /// Elsewhere the backlog is unchanged, so the per-packet path of a port
    /// that stays backlogged asks nothing.
    #[inline(always)]
    fn refresh(&mut self) {
        let eligible = self.eligible_mask();
        self.deadline = self.compute_deadline(eligible);
        self.shaper.set_backlogged(eligible != 0);
    }

    /// Priorities for which the watchdog suppresses PFC (forward/drop).
    fn wd_suppressed_mask(&self) -> u8 {
        (0..8)
            .filter(|&p| self.wd_mode[p] != WdMode::Normal)
            .fold(0u8, |m, p| m | (1 << p))
    }
}

/// The traffic manager for N ports.
///
/// Methods fall in four groups, as quinn's `Connection`:
/// - getters: [`stats`](Self::stats), [`queue_stats`](Self::queue_stats),
///   [`port_stats`](Self::port_stats), [`drop_counts`](Self::drop_counts),
///   [`pg_usage`](Self::pg_usage), [`queue_depth`](Self::queue_depth),
///   [`is_paused`](Self::is_paused), [`watchdog`](Self::watchdog), …
/// - inputs: [`handle_enqueue`](Self::handle_enqueue) (packet from the
///   ingress pipeline), [`handle_mac_control`](Self::handle_mac_control)
///   (PFC/PAUSE received on a port), [`handle_timeout`](Self::handle_timeout),
///   [`handle_config`](Self::handle_config),
///   [`handle_big_red_switch`](Self::handle_big_red_switch);
/// - outputs: [`poll_control_frame`](Self::poll_control_frame),
///   [`poll_transmit`](Self::poll_transmit), [`poll_event`](Self::poll_event),
///   [`poll_timeout`](Self::poll_timeout).
///
/// Poll order after any input at time `now`: first
/// `handle_timeout(now)` if `poll_timeout() <= now`; then for every port,
/// drain `poll_control_frame(port, now)` (PFC goes ahead of data,
/// R-PFC-TX-5) and then `poll_transmit(port, now)` until it returns `None`;
/// then drain `poll_event()`; finally sleep until `poll_timeout()`.
/// `poll_transmit` returns `None` while the port has a control frame
/// pending, while its shaper is not ready, or when every non-empty queue is
/// paused. Calling `handle_timeout` early is harmless; calling it late delays
/// PFC refreshes and watchdog polls. `now` must be monotonic.
#[derive(Debug)]
pub struct Tm<T> {
    ports: Vec<Port>,
    /// Every queued packet, in slots reserved up front ([`super::arena`]).
    store: Arena<Slot<T>>,
    cfg: TmConfig,
    buffer_bytes: u64,
    cells: Cells,
    resume_offset_bytes: u64,
    used: BufferUse,
    drops: DropCounts,
    /// Queued packets the watchdog flushed, for the owner to account
    /// ([`Tm::poll_discarded`]).
    discarded: List,
    events: VecDeque<TmEvent>,
    events_lost: u64,
    watchdog: Watchdog,
    wd_next: Option<Instant>,
}

/// The buffer-wide byte counters, beside the per-port ones. A struct of
/// their own so the packet path can ask for the free shared bytes while it
/// holds `ports` borrowed.
#[derive(Debug, Default)]
struct BufferUse {
    /// The shared pool: buffer − Σreserved − headroom (R-DT-3).
    shared_pool_bytes: u64,
    shared_used_bytes: u64,
    /// Headroom set aside: Σ xoff, or the SHP size (R-PFC-TX-6).
    headroom_pool_bytes: u64,
    /// Headroom in use over all PGs.
    headroom_used_bytes: u64,
    /// Every queued packet's charge, for the lossy egress limit (R-DT-5).
    egress_used_bytes: u64,
}

impl BufferUse {
    /// Bytes of the shared pool not in use.
    #[inline(always)]
    fn shared_free_bytes(&self) -> u64 {
        self.shared_pool_bytes
            .saturating_sub(self.shared_used_bytes)
    }

    /// An admitted packet's charge: `charge` bytes in all, of which
    /// `to_shared` from the shared pool and `to_headroom` from headroom.
    #[inline(always)]
    fn charge(&mut self, to_shared: u64, to_headroom: u64, charge: u64) {
        self.shared_used_bytes += to_shared;
        self.headroom_used_bytes += to_headroom;
        self.egress_used_bytes += charge;
    }

    /// A departed packet's ingress charge (its egress charge is released
    /// where the queue gives it up).
    #[inline(always)]
    fn release_ingress(&mut self, from_shared: u64, from_headroom: u64) {
        self.shared_used_bytes -= from_shared;
        self.headroom_used_bytes -= from_headroom;
    }
}

impl<T> Tm<T> {
    /// Validate `cfg` and build a TM whose clock starts at `now`. The first
    /// watchdog poll (baselines only, R-WD-4) is due at `now`.
    pub fn new(cfg: TmConfig, now: Instant) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let ports = cfg.ports.iter().map(|p| Port::new(p, now)).collect();
        let watchdog = build_watchdog(&cfg);
        let wd_next = watchdog.is_active().then_some(now);
        let mut tm = Tm {
            ports,
            store: Arena::with_capacity(max_packets(cfg.buffer_bytes, cfg.cell_bytes)),
            buffer_bytes: cfg.buffer_bytes,
            cells: Cells::new(cfg.cell_bytes),
            resume_offset_bytes: cfg.resume_offset_bytes,
            used: BufferUse::default(),
            drops: DropCounts::default(),
            discarded: List::default(),
            events: VecDeque::with_capacity(MAX_EVENTS),
            events_lost: 0,
            watchdog,
            wd_next,
            cfg,
        };
        tm.used.shared_pool_bytes = tm.compute_pools();
        tm.apply_all_wd_modes(now);
        tm.refresh_all_deadlines();
        Ok(tm)
    }

    /// Sets the headroom pool size and returns the shared pool size:
    /// buffer − Σreserved − headroom (private Σxoff, or the SHP size).
    fn compute_pools(&mut self) -> u64 {
        let (reserved, _, pool) = super::budget::totals(&self.cfg);
        self.used.headroom_pool_bytes = pool;
        self.buffer_bytes
            .saturating_sub(reserved.saturating_add(pool))
    }

    /// Replace the configuration. The port count cannot change. Queued
    /// packets, buffer usage and counters are kept; a changed watchdog config
    /// restarts the watchdog (queues return to normal, baselines re-taken).
    pub fn handle_config(&mut self, cfg: TmConfig, now: Instant) -> Result<(), ConfigError> {
        let mut err = cfg.validate().err().unwrap_or(ConfigError {
            problems: Vec::new(),
        });
        if cfg.ports.len() != self.ports.len() {
            err.problems.push(ConfigProblem::PortCountChanged {
                from: self.ports.len(),
                to: cfg.ports.len(),
            });
        }
        if !err.problems.is_empty() {
            return Err(err);
        }
        for (port, pc) in self.ports.iter_mut().zip(&cfg.ports) {
            port.apply(pc);
        }
        self.buffer_bytes = cfg.buffer_bytes;
        self.store
            .reserve_total(max_packets(cfg.buffer_bytes, cfg.cell_bytes));
        self.cells = Cells::new(cfg.cell_bytes);
        self.resume_offset_bytes = cfg.resume_offset_bytes;
        let wd_changed = cfg.watchdog.poll_interval_ms != self.cfg.watchdog.poll_interval_ms
            || cfg
                .ports
                .iter()
                .zip(&self.cfg.ports)
                .any(|(a, b)| a.watchdog != b.watchdog);
        if wd_changed {
            self.watchdog = build_watchdog(&cfg);
            self.wd_next = self.watchdog.is_active().then_some(now);
        } else if cfg.watchdog.big_red_switch != self.cfg.watchdog.big_red_switch {
            self.watchdog
                .handle_big_red_switch(cfg.watchdog.big_red_switch);
        }
        self.cfg = cfg;
        self.used.shared_pool_bytes = self.compute_pools();
        self.apply_all_wd_modes(now);
        self.refresh_all_deadlines();
        Ok(())
    }

    /// BIG_RED_SWITCH on or off (R-WD-11).
    pub fn handle_big_red_switch(&mut self, enable: bool, now: Instant) {
        self.cfg.watchdog.big_red_switch = enable;
        self.watchdog.handle_big_red_switch(enable);
        self.apply_all_wd_modes(now);
        self.refresh_all_deadlines();
    }

    // ---- getters ----------------------------------------------------------

    /// Number of ports.
    pub fn num_ports(&self) -> usize {
        self.ports.len()
    }
    /// The active configuration.
    pub fn config(&self) -> &TmConfig {
        &self.cfg
    }
    /// Counters of (port, priority).
    pub fn stats(&self, port: u16, priority: u8) -> Option<PrioStats> {
        self.ports
            .get(usize::from(port))?
            .stats
            .get(usize::from(priority))
            .copied()
    }
    /// Counters of (port, queue).
    pub fn queue_stats(&self, port: u16, queue: u8) -> Option<QueueStats> {
        self.ports
            .get(usize::from(port))?
            .qstats
            .get(usize::from(queue))
            .copied()
    }
    /// MAC-control counters of a port.
    pub fn port_stats(&self, port: u16) -> Option<PortStats> {
        self.ports.get(usize::from(port)).map(|p| p.port_stats)
    }
    /// Drops by reason over the whole TM.
    pub fn drop_counts(&self) -> DropCounts {
        self.drops
    }
    /// Buffer usage of an ingress (port, PG).
    pub fn pg_usage(&self, port: u16, pg: u8) -> Option<PgUsage> {
        let g = self
            .ports
            .get(usize::from(port))?
            .pgs
            .get(usize::from(pg))?;
        Some(PgUsage {
            reserved_bytes: g.reserved_used,
            shared_bytes: g.shared_used,
            headroom_bytes: g.headroom_used,
            xoff: g.xoff,
            headroom_peak_bytes: g.headroom_peak,
            shared_peak_bytes: g.shared_peak,
            xoff_threshold_bytes: if g.lossless { self.pg_threshold(g) } else { 0 },
            xon_threshold_bytes: if g.lossless {
                self.pg_threshold(g)
                    .saturating_sub(self.resume_offset_bytes)
            } else {
                0
            },
        })
    }
    /// The shared pool size: buffer − Σreserved − Σheadroom (R-DT-3).
    pub fn shared_pool_bytes(&self) -> u64 {
        self.used.shared_pool_bytes
    }
    /// Bytes of the shared pool in use.
    pub fn shared_used_bytes(&self) -> u64 {
        self.used.shared_used_bytes
    }
    /// Headroom set aside: Σ lossless xoff, or the shared headroom pool size.
    pub fn headroom_pool_bytes(&self) -> u64 {
        self.used.headroom_pool_bytes
    }
    /// Headroom in use over all PGs.
    pub fn headroom_used_bytes(&self) -> u64 {
        self.used.headroom_used_bytes
    }
    /// (bytes, packets) queued in (port, queue).
    pub fn queue_depth(&self, port: u16, queue: u8) -> Option<(u64, usize)> {
        let q = self
            .ports
            .get(usize::from(port))?
            .queues
            .get(usize::from(queue))?;
        Some((q.bytes, q.slots.len()))
    }
    /// `true` if received PFC/PAUSE pauses (port, priority) at `now`.
    pub fn is_paused(&self, port: u16, priority: u8, now: Instant) -> bool {
        self.ports
            .get(usize::from(port))
            .and_then(|p| p.rx_pause.get(usize::from(priority)))
            .is_some_and(|r| r.since.is_some() && r.until > now)
    }
    /// Total time received PFC/PAUSE has held (port, priority) paused up
    /// to `now`, ns (the ended pauses plus the current one): the packet
    /// trace subtracts two readings to say how long a packet waited on a
    /// pause.
    pub fn paused_ns(&self, port: u16, priority: u8, now: Instant) -> u64 {
        let Some(pt) = self.ports.get(usize::from(port)) else {
            return 0;
        };
        let p = usize::from(priority & 7);
        let ongoing = match pt.rx_pause[p].since {
            Some(since) => (now.min(pt.rx_pause[p].until) - since.min(now)).as_nanos(),
            None => 0,
        };
        pt.stats[p].pause_rx_ns + ongoing
    }
    /// Total time (port, priority)'s ingress PG has asserted XOFF towards
    /// the neighbour up to `now`, ns (ended XOFFs plus the current one).
    pub fn pause_tx_ns(&self, port: u16, priority: u8, now: Instant) -> u64 {
        let Some(pt) = self.ports.get(usize::from(port)) else {
            return 0;
        };
        let p = usize::from(priority & 7);
        let pg = &pt.pgs[usize::from(pt.prio_to_pg[p] & 7)];
        let ongoing = match pg.xoff_since {
            Some(since) if pg.prio_mask & (1 << p) != 0 => (now - since.min(now)).as_nanos(),
            _ => 0,
        };
        pt.stats[p].pause_tx_ns + ongoing
    }
    /// The PFC watchdog (its counters and states).
    pub fn watchdog(&self) -> &Watchdog {
        &self.watchdog
    }
    /// Current watchdog mode of (port, priority).
    pub fn watchdog_mode(&self, port: u16, priority: u8) -> WdMode {
        self.ports
            .get(usize::from(port))
            .and_then(|p| p.wd_mode.get(usize::from(priority)).copied())
            .unwrap_or_default()
    }
    /// Events discarded because nobody drained [`Self::poll_event`].
    pub fn events_lost(&self) -> u64 {
        self.events_lost
    }

    // ---- inputs -----------------------------------------------------------

    /// Admit a packet (R-BUF-1/2, R-DT-*, R-DT-5), then check XOFF
    /// (R-PFC-TX-1) for its PG. On `Err` the packet is dropped and counted.
    pub fn handle_enqueue(
        &mut self,
        packet: T,
        meta: EnqueueMeta,
        now: Instant,
    ) -> Result<EnqueueInfo, DropReason> {
        self.admit(packet, meta, now)
            .map_err(|refused| refused.reason)
    }

    /// [`Self::handle_enqueue`], handing a refused packet back: a caller
    /// that pools what its packets hold (the switch's parsed-packet boxes
    /// and frame buffers) takes them back instead of freeing them, so tail
    /// drops do not turn into an allocation per later arrival.
    pub fn admit(
        &mut self,
        packet: T,
        meta: EnqueueMeta,
        now: Instant,
    ) -> Result<EnqueueInfo, Refused<T>> {
        let (ip, ep, p) = (
            usize::from(meta.ingress_port),
            usize::from(meta.egress_port),
            usize::from(meta.priority),
        );
        // The ports as a local slice: its length and address stay in
        // registers, so the indexing below is checked once, here, instead
        // of reloading `self.ports` after every store the accounting makes.
        let ports = &mut self.ports[..];
        if ip >= ports.len() || ep >= ports.len() || p >= 8 {
            self.drops.add(DropReason::InvalidMetadata);
            return Err(Refused {
                reason: DropReason::InvalidMetadata,
                packet,
            });
        }
        let g = usize::from(ports[ip].prio_to_pg[p] & 7);
        let q = usize::from(ports[ep].prio_to_queue[p] & 7);
        if ports[ip].wd_mode[p] == WdMode::Drop {
            return Err(Refused {
                reason: self.drop_ingress(ip, p, DropReason::WatchdogDrop),
                packet,
            });
        }
        if ports[ep].wd_mode[p] == WdMode::Drop {
            return Err(Refused {
                reason: self.drop_egress(ep, p, q, DropReason::WatchdogDrop),
                packet,
            });
        }
        let charge = self.cells.charge(meta.len_bytes);

        // Ingress plan.
        let pg = &ports[ip].pgs[g];
        let to_reserved = charge.min(pg.reserved_cap.saturating_sub(pg.reserved_used));
        let rest = charge - to_reserved;
        let free = self.used.shared_free_bytes();
        let (to_shared, to_headroom) = if rest == 0 {
            (0, 0)
        } else if rest <= free && pg.shared_used + rest <= pg.xoff_threshold(free) {
            (rest, 0)
        } else if pg.lossless {
            if pg.headroom_used + rest <= pg.headroom_cap
                && self.used.headroom_used_bytes + rest <= self.used.headroom_pool_bytes
            {
                (0, rest)
            } else {
                // No log line here: the event and the drop counter carry it,
                // and the switch logs it rate-limited.
                self.push_event(TmEvent::HeadroomOverflow {
                    port: meta.ingress_port,
                    pg: g as u8,
                });
                return Err(Refused {
                    reason: self.drop_ingress(ip, p, DropReason::HeadroomOverflow),
                    packet,
                });
            }
        } else {
            return Err(Refused {
                reason: self.drop_ingress(ip, p, DropReason::LossyTailDrop),
                packet,
            });
        };
        let lossless = pg.lossless;

        // Egress limit (lossy only, R-DT-5).
        if !lossless {
            let queue = &ports[ep].queues[q];
            let limit = queue.limit.limit_bytes(
                self.buffer_bytes
                    .saturating_sub(self.used.egress_used_bytes),
            );
            if queue.charged + charge > limit {
                return Err(Refused {
                    reason: self.drop_egress(ep, p, q, DropReason::EgressLimit),
                    packet,
                });
            }
        }

        // Commit: the packet joins its queue first, so that it and its
        // slot's fields are done with before the ingress counters (fewer
        // values held across the commit).
        let port = &mut ports[ep];
        // A packet joining a queue that had none is the only way an enqueue
        // can give the port a backlog; the shaper's backlog is looked at
        // then and only then (see `Port::refresh`).
        let was_empty = port.nonempty & (1 << q) == 0;
        if was_empty {
            // Idle until now, if this is the first frame waiting.
            port.settle_if_idle(now);
        }
        let queue = &mut port.queues[q];
        let enq_depth_bytes = queue.bytes;
        let enq_depth_packets = u32::try_from(queue.slots.len()).unwrap_or(u32::MAX);
        self.store.push_back(
            &mut queue.slots,
            Slot {
                packet,
                meta,
                enqueued_at: now,
                charged: NonZeroU64::new(charge).expect("a packet is charged at least one cell"),
                enq_depth_bytes,
                enq_depth_packets,
            },
        );
        queue.bytes += u64::from(meta.len_bytes);
        queue.charged += charge;
        port.nonempty |= 1 << q;
        let qs = &mut port.qstats[q];
        qs.enq_packets += 1;
        qs.max_depth_bytes = qs.max_depth_bytes.max(queue.bytes);
        qs.max_depth_packets = qs.max_depth_packets.max(queue.slots.len() as u64);
        let ps = &mut port.stats[p];
        ps.max_queue_bytes = ps.max_queue_bytes.max(queue.bytes);

        let pg = &mut ports[ip].pgs[g];
        pg.reserved_used += to_reserved;
        pg.shared_used += to_shared;
        pg.headroom_used += to_headroom;
        pg.headroom_peak = pg.headroom_peak.max(pg.headroom_used);
        pg.shared_peak = pg.shared_peak.max(pg.shared_used);
        self.used.charge(to_shared, to_headroom, charge);
        let st = &mut ports[ip].stats[p];
        st.rx_packets += 1;
        st.rx_bytes += u64::from(meta.len_bytes);

        let port = &mut ports[ep];
        if was_empty {
            port.refresh();
        } else if port.train_bytes != 0 {
            // A packet joining a backlogged queue leaves the egress port's
            // deadline as it was (the shaper, pauses, refreshes and which
            // queues are eligible are unchanged) unless the port has a
            // train, whose release depends on the backlog's size (or an
            // XOFF to send: below).
            port.refresh_deadline();
        }
        // The ingress port's timers change only if it now sends XOFF (after
        // the egress port's refresh above, which it redoes when the two are
        // one port, so the frame pending is counted).
        let shared_free = self.used.shared_free_bytes();
        if ports[ip].pgs[g].xoff_due(shared_free) {
            self.on_xoff_due(ip, g, now);
        }
        Ok(EnqueueInfo {
            queue: q as u8,
            pg: g as u8,
            enq_qdepth_bytes: enq_depth_bytes,
            enq_qdepth_packets: enq_depth_packets,
            charged_bytes: charge,
        })
    }

    /// A MAC Control frame received on `port` (R-PFC-RX-1..4, 6; R-PFC-FMT-6).
    /// Unknown ports are ignored.
    pub fn handle_mac_control(&mut self, port: u16, repr: &MacControlRepr, now: Instant) {
        let pi = usize::from(port);
        let Some(pt) = self.ports.get_mut(pi) else {
            return;
        };
        match *repr {
            MacControlRepr::Pfc(pfc) => {
                pt.port_stats.pfc_rx_frames += 1;
                for p in 0..8u8 {
                    if !pfc.is_enabled(p) {
                        continue;
                    }
                    let pu = usize::from(p);
                    self.ports[pi].stats[pu].pfc_rx_frames += 1;
                    let pt = &self.ports[pi];
                    if pt.pfc_enable & (1 << p) != 0 && pt.wd_mode[pu] == WdMode::Normal {
                        self.apply_rx_pause(pi, pu, pfc.quanta[pu], now);
                    }
                }
            }
            MacControlRepr::Pause(pause) => {
                pt.port_stats.pause_rx_frames += 1;
                if pt.legacy_pause {
                    for p in 0..8 {
                        if self.ports[pi].wd_mode[p] == WdMode::Normal {
                            self.apply_rx_pause(pi, p, pause.quanta, now);
                        }
                    }
                } else {
                    pt.port_stats.pause_rx_ignored += 1;
                }
            }
            MacControlRepr::Unknown { .. } => pt.port_stats.mac_control_unknown += 1,
        }
        self.refresh_port(pi);
    }

    /// Ends every pause `port`'s peer holds on it, as a resume would, but
    /// without counting a received frame: the link went away, and a pause
    /// from a peer that is gone must not hold the port's queues.
    pub fn end_peer_pauses(&mut self, port: u16, now: Instant) {
        let pi = usize::from(port);
        if pi >= self.ports.len() {
            return;
        }
        for p in 0..8 {
            self.expire_rx_pause(pi, p, now);
            self.end_rx_pause(pi, p, now);
        }
        self.refresh_port(pi);
    }

    /// Run expired timers: pause expiries, PFC refreshes (R-PFC-TX-4) and the
    /// watchdog poll. A call with nothing expired does nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        for pi in 0..self.ports.len() {
            if self.ports[pi].deadline.is_none_or(|(t, _)| t > now) {
                continue;
            }
            for p in bits(self.ports[pi].paused) {
                self.expire_rx_pause(pi, p, now);
            }
            for g in bits(self.ports[pi].refreshing) {
                let pg = &self.ports[pi].pgs[g];
                if pg.refresh_at.is_some_and(|t| t <= now) {
                    if pg.xoff
                        && pg.lossless
                        && !pg
                            .xon_condition(self.used.shared_free_bytes(), self.resume_offset_bytes)
                    {
                        self.send_xoff(pi, g, now, true);
                    } else {
                        self.send_xon(pi, g, now);
                    }
                }
            }
            self.refresh_port(pi);
        }
        if let Some(due) = self.wd_next
            && due <= now
        {
            self.watchdog_poll(now);
            let next = due + self.watchdog.poll_interval();
            self.wd_next = Some(if next > now {
                next
            } else {
                now + self.watchdog.poll_interval()
            });
            // A storm or a restoration may flush queues and end pauses anywhere.
            self.refresh_all_deadlines();
        }
    }

    // ---- outputs ----------------------------------------------------------

    /// The next PFC frame to send on `port`, if one is pending and the port
    /// may start a frame now (R-PFC-TX-5: control goes ahead of data). The
    /// caller builds the wire frame (see [`crate::mac`]).
    #[must_use]
    pub fn poll_control_frame(&mut self, port: u16, now: Instant) -> Option<PfcRepr> {
        let pt = self.ports.get_mut(usize::from(port))?;
        pt.pending?;
        if !pt.shaper.is_ready(now) {
            return None;
        }
        let frame = pt.pending.take()?;
        let cost = wire_len(PFC_FRAME_LEN, pt.overhead_bytes as usize) as u64;
        pt.shaper.consume(cost, now);
        pt.port_stats.pfc_tx_frames += 1;
        for p in 0..8 {
            if frame.class_enable & (1 << p) != 0 {
                pt.stats[p].pfc_tx_frames += 1;
            }
        }
        self.refresh_deadline(usize::from(port));
        Some(frame)
    }

    /// The next data packet `port` may start sending at `now`: none while a
    /// control frame is pending, the shaper is not ready, or every
    /// non-empty queue is paused. Releases its buffer and checks XON
    /// (R-PFC-TX-2) for its ingress PG.
    #[must_use]
    pub fn poll_transmit(&mut self, port: u16, now: Instant) -> Option<Dequeued<T>> {
        self.dequeue(usize::from(port), now)
    }

    /// [`Tm::poll_transmit`]. Every way out refreshes the port's deadline
    /// itself; the record is returned from where it was built, not held
    /// across a refresh in the caller (which copied it once more).
    fn dequeue(&mut self, ep: usize, now: Instant) -> Option<Dequeued<T>> {
        let pt = self.ports.get_mut(ep)?;
        if pt.pending.is_some() || pt.nonempty_mask() == 0 || !pt.shaper.is_ready(now) {
            // Nothing changed but the shaper's refill: the backlog is
            // what it was.
            pt.refresh_deadline();
            return None;
        }
        // Pauses that expire here may change which queues are eligible.
        let pauses_expired = pt.paused != 0;
        if pauses_expired {
            for p in 0..8 {
                self.expire_rx_pause(ep, p, now);
            }
        }
        // A local slice, as in `admit`: indexed without reloading.
        let ports = &mut self.ports[..];
        let pt = &mut ports[ep];
        let eligible = pt.eligible_mask();
        let (queues, store) = (&pt.queues, &self.store);
        let picked = pt.sched.pick(eligible, |q| {
            store
                .front(&queues[q].slots)
                .map_or(0, |s| u64::from(s.meta.len_bytes))
        });
        let Some(q) = picked else {
            pt.refresh();
            return None;
        };
        let queue = &mut pt.queues[q];
        let Some(slot) = self.store.pop_front(&mut queue.slots) else {
            pt.refresh();
            return None;
        };
        let len = u64::from(slot.meta.len_bytes);
        queue.bytes -= len;
        let charged = slot.charged.get();
        queue.charged -= charged;
        let now_empty = queue.slots.is_empty();
        // The record as the caller receives it, built as the slot comes
        // out (measured a few instructions fewer than building it last).
        let out = Dequeued {
            sojourn: now - slot.enqueued_at,
            enqueued_at: slot.enqueued_at,
            meta: slot.meta,
            queue: q as u8,
            enq_qdepth_bytes: slot.enq_depth_bytes,
            enq_qdepth_packets: slot.enq_depth_packets,
            deq_qdepth_bytes: queue.bytes,
            deq_qdepth_packets: u32::try_from(queue.slots.len()).unwrap_or(u32::MAX),
            packet: slot.packet,
        };
        if now_empty {
            pt.nonempty &= !(1 << q);
        }
        pt.sched.on_sent(q, len, now_empty);
        let cost = wire_len(len as usize, pt.overhead_bytes as usize) as u64;
        pt.shaper.consume(cost, now);
        let p = usize::from(out.meta.priority);
        pt.stats[p].tx_packets += 1;
        pt.stats[p].tx_bytes += len;
        pt.qstats[q].tx_packets += 1;
        pt.qstats[q].tx_bytes += len;
        if now_empty || pauses_expired {
            pt.refresh();
        } else {
            pt.refresh_deadline();
        }
        self.used.egress_used_bytes -= charged;
        // The ingress charge, after the egress port's refresh: an XON it
        // sends refreshes the ingress port, which may be this one.
        let ip = usize::from(out.meta.ingress_port);
        let ingress = &mut ports[ip];
        let g = usize::from(ingress.prio_to_pg[p] & 7);
        let pg = &mut ingress.pgs[g];
        let (from_shared, from_headroom) = pg.release(charged);
        self.used.release_ingress(from_shared, from_headroom);
        if pg.xoff && pg.xon_condition(self.used.shared_free_bytes(), self.resume_offset_bytes) {
            self.on_xon_due(ip, g, now);
        }
        Some(out)
    }

    /// The next queued packet the watchdog's drop action flushed (already
    /// counted as [`DropReason::WatchdogDrop`] on its egress port), oldest
    /// first, so its owner can account for it. The packets are kept until
    /// taken: an owner that does not care must still drain them.
    #[must_use]
    pub fn poll_discarded(&mut self) -> Option<(T, EnqueueMeta)> {
        self.store
            .pop_front(&mut self.discarded)
            .map(|slot| (slot.packet, slot.meta))
    }

    /// Flushed packets not yet taken with [`Tm::poll_discarded`].
    pub fn discarded(&self) -> impl Iterator<Item = (&T, &EnqueueMeta)> {
        self.store
            .iter(&self.discarded)
            .map(|slot| (&slot.packet, &slot.meta))
    }

    /// Packet slots of the store: (the most ever used at once, reserved).
    /// The reservation is [`TmConfig::buffer_bytes`] / [`TmConfig::cell_bytes`]
    /// (every packet is charged at least one cell), so the first never
    /// exceeds the second under a steady configuration.
    pub fn packet_slots(&self) -> (usize, usize) {
        (self.store.touched(), self.store.capacity())
    }

    /// Next notification, oldest first.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<TmEvent> {
        self.events.pop_front()
    }

    /// When to call [`Self::handle_timeout`] and poll the ports again: the
    /// earliest of every port's shaper release (for ports with something
    /// sendable), pause expiry, PFC refresh, and the watchdog poll. May be in
    /// the past (call now). `None` when idle. Changes after any input.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.next_timer().map(|(t, _)| t)
    }

    /// Like [`Self::poll_timeout`], also naming the timer. O(ports): the
    /// minimum over the timer table (one entry per port, kept current after
    /// every input, plus the watchdog poll).
    #[must_use]
    pub fn next_timer(&self) -> Option<(Instant, Timer)> {
        let mut best: Option<(Instant, Timer)> = self.wd_next.map(|t| (t, Timer::WatchdogPoll));
        for (pi, pt) in self.ports.iter().enumerate() {
            if let Some((t, timer)) = pt.deadline
                && best.is_none_or(|(b, _)| t < b)
            {
                best = Some((t, timer.on(pi as u16)));
            }
        }
        best
    }

    /// When `port` may next start a frame, if it has something sendable
    /// (a pending control frame or a non-empty unpaused queue).
    #[must_use]
    pub fn next_transmit_at(&self, port: u16) -> Option<Instant> {
        let pt = self.ports.get(usize::from(port))?;
        pt.ready_at(pt.eligible_mask())
    }

    /// When `port`'s shaper lets the next frame start, whatever is queued
    /// (for frames the MAC originates, such as LLDP).
    #[must_use]
    pub fn shaper_ready_at(&self, port: u16) -> Option<Instant> {
        self.ports
            .get(usize::from(port))
            .map(|p| p.shaper.ready_at())
    }

    /// A frame of `len_bytes` the MAC originates (LLDP) starts on `port`
    /// now: if no PFC frame is pending and the shaper lets a frame start,
    /// charge it to the shaper like any frame and return `true`; else
    /// `false` and nothing changes. The frame goes ahead of queued data
    /// (R-PFC-TX-5 treats MAC control traffic so).
    pub fn handle_mac_frame_tx(&mut self, port: u16, len_bytes: usize, now: Instant) -> bool {
        let Some(pt) = self.ports.get_mut(usize::from(port)) else {
            return false;
        };
        if pt.pending.is_some() || !pt.shaper.is_ready(now) {
            return false;
        }
        let cost = wire_len(len_bytes, pt.overhead_bytes as usize) as u64;
        pt.shaper.consume(cost, now);
        self.refresh_deadline(usize::from(port));
        true
    }

    /// The earliest timer recomputed from every port's state, ignoring the
    /// table: what [`Self::next_timer`] must always equal.
    #[cfg(test)]
    pub(crate) fn next_timer_by_scan(&self) -> Option<(Instant, Timer)> {
        let mut best: Option<(Instant, Timer)> = self.wd_next.map(|t| (t, Timer::WatchdogPoll));
        for (pi, pt) in self.ports.iter().enumerate() {
            if let Some((t, timer)) = pt.compute_deadline(pt.eligible_mask())
                && best.is_none_or(|(b, _)| t < b)
            {
                best = Some((t, timer.on(pi as u16)));
            }
        }
        best
    }

    /// Whether every port's shaper knows if its frames wait, as the
    /// eligible queues say: what the inputs' backlog refreshes must keep.
    #[cfg(test)]
    pub(crate) fn backlogs_agree(&self) -> bool {
        self.ports
            .iter()
            .all(|pt| pt.shaper.is_backlogged() == (pt.eligible_mask() != 0))
    }

    // ---- internals: the timer table ------------------------------------

    /// [`Port::refresh_deadline`] of port `pi`.
    #[inline(always)]
    fn refresh_deadline(&mut self, pi: usize) {
        self.ports[pi].refresh_deadline();
    }

    /// [`Port::refresh`] of port `pi`.
    #[inline(always)]
    fn refresh_port(&mut self, pi: usize) {
        self.ports[pi].refresh();
    }

    fn refresh_all_deadlines(&mut self) {
        for pi in 0..self.ports.len() {
            self.refresh_port(pi);
        }
    }

    // ---- internals: accounting ------------------------------------------

    /// Bytes of the shared pool not in use.
    #[inline(always)]
    fn pg_threshold(&self, pg: &PgState) -> u64 {
        pg.xoff_threshold(self.used.shared_free_bytes())
    }

    fn drop_ingress(&mut self, ip: usize, p: usize, reason: DropReason) -> DropReason {
        self.drops.add(reason);
        let st = &mut self.ports[ip].stats[p];
        st.drops.add(reason);
        st.rx_drop_packets += 1;
        reason
    }

    fn drop_egress(&mut self, ep: usize, p: usize, q: usize, reason: DropReason) -> DropReason {
        self.drops.add(reason);
        let pt = &mut self.ports[ep];
        pt.stats[p].drops.add(reason);
        pt.stats[p].tx_drop_packets += 1;
        pt.qstats[q].drop_packets += 1;
        reason
    }

    /// Release a departed packet's ingress charge (see [`PgState::release`]);
    /// then check XON for the PG.
    fn release_ingress(&mut self, meta: &EnqueueMeta, charged: u64, now: Instant) {
        let ip = usize::from(meta.ingress_port);
        let g = usize::from(self.ports[ip].prio_to_pg[usize::from(meta.priority)] & 7);
        let (from_shared, from_headroom) = self.ports[ip].pgs[g].release(charged);
        self.used.release_ingress(from_shared, from_headroom);
        if self.xon_due(&self.ports[ip].pgs[g]) {
            self.on_xon_due(ip, g, now);
        }
    }

    // ---- internals: PFC generation ------------------------------------------

    /// R-PFC-TX-2 for a PG in XOFF (a PG not in XOFF, the usual case, has
    /// nothing to check).
    #[inline(always)]
    fn xon_due(&self, pg: &PgState) -> bool {
        pg.xoff && pg.xon_condition(self.used.shared_free_bytes(), self.resume_offset_bytes)
    }

    /// Sends the XON [`Self::xon_due`] found due; the ingress port's
    /// timers change with it.
    #[cold]
    #[inline(never)]
    fn on_xon_due(&mut self, ip: usize, g: usize, now: Instant) {
        self.send_xon(ip, g, now);
        self.refresh_port(ip);
    }

    /// Sends the XOFF [`PgState::xoff_due`] found due; the ingress port's
    /// timers change with it.
    #[cold]
    #[inline(never)]
    fn on_xoff_due(&mut self, ip: usize, g: usize, now: Instant) {
        self.send_xoff(ip, g, now, false);
        self.refresh_port(ip);
    }

    fn send_xoff(&mut self, ip: usize, g: usize, now: Instant, refresh: bool) {
        let pt = &mut self.ports[ip];
        let mask = pt.pgs[g].prio_mask & !pt.wd_suppressed_mask();
        let half = (pt.pause_duration(pt.xoff_quanta) / 2).min(XOFF_REFRESH_MAX);
        let quanta = pt.xoff_quanta;
        let pg = &mut pt.pgs[g];
        pg.xoff = true;
        pg.xoff_since.get_or_insert(now);
        pg.refresh_at = Some(now + half.max(Duration::from_nanos(1)));
        pt.refreshing |= 1 << g;
        if mask != 0 {
            let frame = pt.pending.get_or_insert_with(PfcRepr::default);
            for p in 0..8u8 {
                if mask & (1 << p) != 0 {
                    frame.set(p, quanta);
                    pt.stats[usize::from(p)].xoff_tx_frames += 1;
                }
            }
        }
        if !refresh {
            tracing::debug!(port = ip, pg = g, priorities = mask, "PFC XOFF");
            self.push_event(TmEvent::XoffSent {
                port: ip as u16,
                pg: g as u8,
                priorities: mask,
            });
        }
    }

    fn send_xon(&mut self, ip: usize, g: usize, now: Instant) {
        let pt = &mut self.ports[ip];
        let mask = pt.pgs[g].prio_mask;
        let pg = &mut pt.pgs[g];
        pg.xoff = false;
        let asserted = pg
            .xoff_since
            .take()
            .map_or(0, |t| (now - t.min(now)).as_nanos());
        for p in bits(mask) {
            pt.stats[p].pause_tx_ns += asserted;
        }
        pg.refresh_at = None;
        pt.refreshing &= !(1 << g);
        if mask != 0 {
            let frame = pt.pending.get_or_insert_with(PfcRepr::default);
            for p in 0..8u8 {
                if mask & (1 << p) != 0 {
                    frame.set(p, 0);
                    pt.stats[usize::from(p)].xon_tx_frames += 1;
                }
            }
        }
        tracing::debug!(port = ip, pg = g, priorities = mask, "PFC XON");
        self.push_event(TmEvent::XonSent {
            port: ip as u16,
            pg: g as u8,
            priorities: mask,
        });
    }

    // ---- internals: PFC reception -----------------------------------------

    /// R-PFC-RX-1/2: replace the remaining time; 0 resumes.
    fn apply_rx_pause(&mut self, pi: usize, p: usize, quanta: u16, now: Instant) {
        self.expire_rx_pause(pi, p, now);
        let pt = &mut self.ports[pi];
        if quanta > 0 {
            let until = now + pt.pause_duration(quanta);
            let r = &mut pt.rx_pause[p];
            r.until = until;
            if r.since.is_none() {
                r.since = Some(now);
                pt.paused |= 1 << p;
                self.push_event(TmEvent::PauseRxStarted {
                    port: pi as u16,
                    priority: p as u8,
                });
            }
        } else {
            self.end_rx_pause(pi, p, now);
        }
    }

    fn expire_rx_pause(&mut self, pi: usize, p: usize, now: Instant) {
        let r = self.ports[pi].rx_pause[p];
        if r.since.is_some() && r.until <= now {
            // Paused until then: no catch-up banked for that time.
            self.ports[pi].settle_if_idle(r.until);
            self.end_rx_pause(pi, p, r.until);
        }
    }

    fn end_rx_pause(&mut self, pi: usize, p: usize, at: Instant) {
        let pt = &mut self.ports[pi];
        if let Some(since) = pt.rx_pause[p].since.take() {
            pt.paused &= !(1 << p);
            pt.rx_pause[p].until = Instant::ZERO;
            pt.stats[p].pause_rx_ns += (at - since).as_nanos();
            pt.stats[p].pause_rx_xoff_to_xon += 1;
            self.push_event(TmEvent::PauseRxEnded {
                port: pi as u16,
                priority: p as u8,
            });
        }
    }

    // ---- internals: watchdog ------------------------------------------------

    fn watchdog_poll(&mut self, now: Instant) {
        let ports = &self.ports;
        self.watchdog.handle_poll(now, |port, p| {
            let pt = &ports[usize::from(port)];
            let pu = usize::from(p);
            let q = usize::from(pt.prio_to_queue[pu] & 7);
            WdSample {
                occupancy_packets: pt.queues[q].slots.len() as u64,
                tx_packets: pt.qstats[q].tx_packets,
                tx_drop_packets: pt.qstats[q].drop_packets,
                rx_packets: pt.stats[pu].rx_packets,
                rx_drop_packets: pt.stats[pu].rx_drop_packets,
                pfc_rx_frames: pt.stats[pu].pfc_rx_frames,
            }
        });
        while let Some(ev) = self.watchdog.poll_event() {
            let (port, priority) = match ev {
                WdEvent::StormDetected {
                    port,
                    priority,
                    action,
                    seen,
                } => {
                    self.push_event(TmEvent::StormDetected {
                        port,
                        priority,
                        action,
                        seen,
                    });
                    (port, priority)
                }
                WdEvent::StormRestored {
                    port,
                    priority,
                    stats,
                } => {
                    self.push_event(TmEvent::StormRestored {
                        port,
                        priority,
                        stats,
                    });
                    (port, priority)
                }
            };
            let mode = self.watchdog.mode(port, priority);
            self.apply_wd_mode(usize::from(port), usize::from(priority), mode, now);
        }
    }

    fn apply_all_wd_modes(&mut self, now: Instant) {
        for pi in 0..self.ports.len() {
            for p in 0..8 {
                let mode = self.watchdog.mode(pi as u16, p as u8);
                self.apply_wd_mode(pi, p, mode, now);
            }
        }
    }

    /// R-WD-9: forward = stop honouring received PFC (resume now) and stop
    /// generating it; drop = forward + flush the queue's packets of this
    /// priority. Restoring to normal undoes both.
    fn apply_wd_mode(&mut self, pi: usize, p: usize, mode: WdMode, now: Instant) {
        let old = self.ports[pi].wd_mode[p];
        if old == mode {
            return;
        }
        self.ports[pi].wd_mode[p] = mode;
        if mode != WdMode::Normal {
            self.end_rx_pause(pi, p, now);
        }
        if mode == WdMode::Drop {
            self.flush_priority(pi, p, now);
        }
    }

    fn flush_priority(&mut self, pi: usize, p: usize, now: Instant) {
        let q = usize::from(self.ports[pi].prio_to_queue[p] & 7);
        // The flushed packets stay in their slots, moved to the discarded
        // list in queue order. The store and the two lists are taken out for
        // the walk (no allocation: an empty arena reserves nothing) so that
        // each packet's charges can be released as it moves; releasing
        // touches counters and PFC state, never the store.
        let mut store = core::mem::replace(&mut self.store, Arena::with_capacity(0));
        let mut slots = core::mem::take(&mut self.ports[pi].queues[q].slots);
        let mut discarded = core::mem::take(&mut self.discarded);
        store.move_where(
            &mut slots,
            &mut discarded,
            |slot| usize::from(slot.meta.priority) == p,
            |slot| {
                let queue = &mut self.ports[pi].queues[q];
                queue.bytes -= u64::from(slot.meta.len_bytes);
                let charged = slot.charged.get();
                queue.charged -= charged;
                self.used.egress_used_bytes -= charged;
                self.drop_egress(pi, p, q, DropReason::WatchdogDrop);
                self.release_ingress(&slot.meta, charged, now);
            },
        );
        self.store = store;
        self.ports[pi].queues[q].slots = slots;
        self.discarded = discarded;
        if self.ports[pi].queues[q].slots.is_empty() {
            self.ports[pi].nonempty &= !(1 << q);
            self.ports[pi].sched.on_flushed(q);
        }
    }

    fn push_event(&mut self, ev: TmEvent) {
        if self.events.len() >= MAX_EVENTS {
            self.events.pop_front();
            self.events_lost += 1;
        }
        self.events.push_back(ev);
    }
}

/// Buffer cells: what a packet is charged (whole cells, at least one).
#[derive(Clone, Copy, Debug)]
struct Cells {
    bytes: u64,
    /// `log2(bytes)` when `bytes` is a power of two (the usual 256): the
    /// per-packet charge is then a shift, not a division.
    shift: Option<u32>,
}

impl Cells {
    fn new(cell_bytes: u32) -> Cells {
        let bytes = u64::from(cell_bytes.max(1));
        Cells {
            bytes,
            shift: bytes.is_power_of_two().then(|| bytes.trailing_zeros()),
        }
    }

    #[inline]
    fn charge(self, len_bytes: u32) -> u64 {
        let len = u64::from(len_bytes);
        match self.shift {
            Some(s) => ((len + self.bytes - 1) >> s).max(1) << s,
            None => len.div_ceil(self.bytes).max(1) * self.bytes,
        }
    }
}

/// The indices of the set bits of `mask`, lowest first.
fn bits(mask: u8) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            i
        })
    })
}

fn build_watchdog(cfg: &TmConfig) -> Watchdog {
    let per_port: Vec<_> = cfg.ports.iter().map(|p| p.watchdog).collect();
    Watchdog::new(&cfg.watchdog, &per_port)
}
