//! A simulated switch: MAC Control handling, a [`Forwarding`] pipeline and
//! the traffic manager ([`Tm`], with its PFC logic and watchdog), driven by
//! the simulator's event loop.
//!
//! Contract: frames arrive whole (as [`SimFrame`]s); each port's
//! [`Mac`] classifies them; MAC Control frames go to the TM's PFC reception
//! and are never forwarded (R-PFC-FMT-5); data frames go through `forward`,
//! then `Tm::handle_enqueue`. When a port's transmitter is free the
//! simulator asks the switch for its next frame: a
//! pending PFC frame goes first (R-PFC-TX-5), else the TM's next packet,
//! whose ECN mark is decided with the TM's RED ramp on the queue depth after
//! dequeue (R-ECN-3/4) using the simulator's seeded RNG, and applied by the
//! pipeline's `egress`.
//!
//! Timing caveat: while a port with a backlog is serialising a frame the TM
//! reports its shaper as due "now" (it cannot know the wire is busy), which
//! hides the TM's other timers (pause expiry, PFC refresh, watchdog poll)
//! behind it. The switch then wakes every [`SimSwitch::timer_slack`]
//! (default 1 µs) instead, so those timers may run up to that much late;
//! the port itself is served exactly when its frame ends. Times are
//! [`Instant`]s.
//!
//! Performance: after an arrival or a dequeue only the ports that may have
//! become sendable (egress port, and the ingress port for a pending
//! XOFF/XON) are reported to the simulator through `take_touched`.

use rand::RngCore;
use rand_chacha::ChaCha8Rng;

use crate::mac::{Mac, MacStats, RxClass};
use crate::time::{Duration, Instant};
use crate::tm::ecn::should_mark;
use crate::tm::{ConfigError, DropReason, EnqueueMeta, Timer, Tm, TmConfig, TmEvent};

use super::forward::{EgressMeta, ForwardDrop, Forwarding};
use super::frame::SimFrame;

/// Counters of the switch beyond the TM's own.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SwitchStats {
    /// Frames the pipeline dropped, by cause: not IPv4, malformed, no route, TTL.
    pub pipeline_drops: [u64; 4],
    /// Frames the TM refused (any [`DropReason`]).
    pub tm_drops: u64,
    /// Frames CE-marked at egress.
    pub ce_marked: u64,
}

/// A switch node.
pub struct SimSwitch {
    tm: Tm<SimFrame>,
    macs: Vec<Mac>,
    forwarding: Box<dyn Forwarding>,
    stats: SwitchStats,
    events: Vec<(Instant, TmEvent)>,
    xoff_sent: u64,
    touched: Vec<u16>,
    touched_mark: Vec<bool>,
    timer_slack: Duration,
    /// `Tm::next_timer` is O(ports); it is cached and recomputed only after
    /// inputs that can move a TM timer earlier (see `poll_timeout`).
    deadline: std::cell::Cell<Option<Option<(Instant, Timer)>>>,
    last_timeout: Option<Instant>,
}

impl std::fmt::Debug for SimSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimSwitch")
            .field("ports", &self.tm.num_ports())
            .field("stats", &self.stats)
            .finish()
    }
}

impl SimSwitch {
    /// A switch with `cfg.ports.len()` ports (validated by the TM).
    pub fn new(cfg: TmConfig, forwarding: Box<dyn Forwarding>) -> Result<Self, ConfigError> {
        let n = cfg.ports.len();
        let macs = cfg.ports.iter().map(|p| Mac::new(p.mac)).collect();
        Ok(SimSwitch {
            tm: Tm::new(cfg, Instant::ZERO)?,
            macs,
            forwarding,
            stats: SwitchStats::default(),
            events: Vec::new(),
            xoff_sent: 0,
            touched: Vec::with_capacity(4),
            touched_mark: vec![false; n],
            timer_slack: Duration::from_micros(1),
            deadline: std::cell::Cell::new(None),
            last_timeout: None,
        })
    }

    /// Sets the wakeup period used while the TM's timers are hidden behind
    /// a busy port's shaper (see the module doc). Minimum 1 ns.
    pub fn set_timer_slack(&mut self, slack: Duration) {
        self.timer_slack = slack.max(Duration::from_nanos(1));
    }

    /// The wakeup period used while TM timers are hidden.
    pub fn timer_slack(&self) -> Duration {
        self.timer_slack
    }

    fn touch(&mut self, port: u16) {
        if let Some(m) = self.touched_mark.get_mut(usize::from(port))
            && !*m
        {
            *m = true;
            self.touched.push(port);
        }
    }

    pub(crate) fn take_touched(&mut self) -> Vec<u16> {
        for &p in &self.touched {
            self.touched_mark[usize::from(p)] = false;
        }
        std::mem::take(&mut self.touched)
    }

    pub(crate) fn put_touched(&mut self, mut buf: Vec<u16>) {
        if self.touched.is_empty() {
            buf.clear();
            self.touched = buf;
        }
    }

    // ------------------------------------------------------------ getters

    /// Number of ports.
    pub fn num_ports(&self) -> u16 {
        self.tm.num_ports() as u16
    }

    /// The traffic manager (counters, buffer usage, watchdog state).
    pub fn tm(&self) -> &Tm<SimFrame> {
        &self.tm
    }

    /// The traffic manager, mutably (e.g. BIG_RED_SWITCH, config changes).
    pub fn tm_mut(&mut self) -> &mut Tm<SimFrame> {
        self.deadline.set(None);
        &mut self.tm
    }

    /// MAC counters of a port.
    pub fn mac_stats(&self, port: u16) -> Option<MacStats> {
        self.macs.get(usize::from(port)).map(Mac::stats)
    }

    /// Switch counters.
    pub fn stats(&self) -> SwitchStats {
        self.stats
    }

    /// Notable TM events with their times: storms, restorations, headroom
    /// overflows (XOFF/XON/pause events are only counted).
    pub fn events(&self) -> &[(Instant, TmEvent)] {
        &self.events
    }

    /// First XOFF frames queued (not refreshes).
    pub fn xoff_sent(&self) -> u64 {
        self.xoff_sent
    }

    /// Egress queue depth in bytes.
    pub fn queue_bytes(&self, port: u16, queue: u8) -> u64 {
        self.tm.queue_depth(port, queue).map_or(0, |(b, _)| b)
    }

    /// True if received PFC pauses (port, priority).
    pub fn is_paused(&self, port: u16, priority: u8, now: Instant) -> bool {
        self.tm.is_paused(port, priority, now)
    }

    // ------------------------------------------------------------ driven by the simulator

    pub(crate) fn handle_frame(
        &mut self,
        now: Instant,
        port: u16,
        mut frame: SimFrame,
        _rng: &mut ChaCha8Rng,
    ) {
        let Some(mac) = self.macs.get_mut(usize::from(port)) else {
            return;
        };
        match mac.handle_rx(frame.bytes()) {
            RxClass::Data => {}
            RxClass::Control(repr) => {
                // Consumed by the MAC, never forwarded (R-PFC-FMT-5).
                self.touch(port);
                self.deadline.set(None);
                self.tm.handle_mac_control(port, &repr, now);
                self.drain_events(now);
                return;
            }
            RxClass::Malformed => return,
        }
        let len = frame.len();
        let d = match self.forwarding.forward(port, frame.bytes_mut(), len) {
            Ok(d) => d,
            Err(e) => {
                let i = match e {
                    ForwardDrop::NotIpv4 => 0,
                    ForwardDrop::Malformed => 1,
                    ForwardDrop::NoRoute => 2,
                    ForwardDrop::TtlExpired => 3,
                };
                self.stats.pipeline_drops[i] += 1;
                return;
            }
        };
        frame.priority = d.priority;
        let meta = EnqueueMeta {
            ingress_port: port,
            egress_port: d.egress_port,
            priority: d.priority,
            len_bytes: len as u32,
        };
        self.touch(d.egress_port);
        self.touch(port);
        if let Err(reason) = self.tm.handle_enqueue(frame, meta, now) {
            self.stats.tm_drops += 1;
            tracing::trace!(?reason, port, "TM drop");
            let _: DropReason = reason;
        }
        self.drain_events(now);
    }

    pub(crate) fn poll_transmit(
        &mut self,
        now: Instant,
        port: u16,
        rng: &mut ChaCha8Rng,
    ) -> Option<SimFrame> {
        if let Some(repr) = self.tm.poll_control_frame(port, now) {
            let mut f = SimFrame::empty();
            let n = self
                .macs
                .get_mut(usize::from(port))?
                .emit_pfc(&repr, f.head_mut())
                .ok()?;
            f.set_lens(n, n);
            f.control = true;
            self.drain_events(now);
            return Some(f);
        }
        let d = self.tm.poll_transmit(port, now)?;
        self.touch(d.meta.ingress_port);
        let mut frame = d.packet;
        let congested = d
            .red
            .is_some_and(|red| should_mark(d.deq_qdepth_bytes, &red, rng.next_u32()));
        let meta = EgressMeta {
            port,
            priority: d.meta.priority,
            queue_bytes: d.deq_qdepth_bytes,
            congested,
        };
        if self.forwarding.egress(&meta, frame.bytes_mut()) {
            self.stats.ce_marked += 1;
        }
        self.drain_events(now);
        Some(frame)
    }

    /// The TM's next timer, from the cache when nothing moved it earlier.
    /// Timers move earlier only on PFC reception, on XOFF/XON (both raise
    /// TM events), in `handle_timeout` and through `tm_mut`; all of those
    /// clear the cache. Timers that disappear leave a stale, earlier
    /// deadline, which costs one spurious wakeup.
    pub(crate) fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        let next = match self.deadline.get() {
            Some(d) => d,
            None => {
                let d = self.tm.next_timer();
                self.deadline.set(Some(d));
                d
            }
        };
        let (t, timer) = next?;
        if t > now {
            return Some(t);
        }
        match timer {
            // "Send now" from a port that is mid-frame (its TxDone serves
            // it): the TM's other timers are hidden behind this one, so poll
            // again after the slack.
            Timer::ShaperRelease { .. } => Some(now + self.timer_slack),
            // Already handled at this instant and still due: do not spin.
            _ if self.last_timeout == Some(now) => Some(now + self.timer_slack),
            _ => Some(now),
        }
    }

    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        self.last_timeout = Some(now);
        self.deadline.set(None);
        self.tm.handle_timeout(now);
        self.drain_events(now);
    }

    fn drain_events(&mut self, now: Instant) {
        while let Some(e) = self.tm.poll_event() {
            match e {
                TmEvent::XoffSent { .. } => {
                    self.xoff_sent += 1;
                    self.deadline.set(None);
                }
                TmEvent::XonSent { .. } => self.deadline.set(None),
                TmEvent::PauseRxStarted { .. } | TmEvent::PauseRxEnded { .. } => {}
                TmEvent::StormDetected { port, priority, .. } => {
                    tracing::info!(port, priority, %now, "PFC storm detected");
                    self.events.push((now, e));
                }
                TmEvent::StormRestored { port, priority, .. } => {
                    tracing::info!(port, priority, %now, "PFC storm restored");
                    self.events.push((now, e));
                }
                TmEvent::HeadroomOverflow { .. } => {
                    if self.events.len() < 10_000 {
                        self.events.push((now, e));
                    }
                }
            }
        }
    }
}
