//! A simulated switch: MAC Control handling, a [`Forwarding`] pipeline and
//! the traffic manager ([`Tm`], with its PFC logic and watchdog), driven by
//! the simulator's event loop.
//!
//! Contract: frames arrive whole (as [`SimFrame`]s); MAC Control frames go
//! to the TM's PFC reception and are never forwarded (R-PFC-FMT-5); data
//! frames go through `forward`, then `Tm::handle_enqueue`. When a port's
//! transmitter is free the simulator asks [`SimSwitch::poll_transmit`]: a
//! pending PFC frame goes first (R-PFC-TX-5), else the TM's next packet,
//! whose ECN mark is decided with the TM's RED ramp on the queue depth after
//! dequeue (R-ECN-3/4) using the simulator's seeded RNG, and applied by the
//! pipeline's `egress`.
//!
//! Timing caveat: the TM reports its shaper as due while a port is still
//! serialising a frame; that wakeup is deferred to the end of the frame, so
//! a TM timer hidden behind it (pause expiry, PFC refresh, watchdog poll)
//! can run up to one frame time late. Times are [`Instant`]s.

use rand::RngCore;
use rand_chacha::ChaCha8Rng;

use crate::time::{Duration, Instant};
use crate::tm::ecn::should_mark;
use crate::tm::{ConfigError, DropReason, EnqueueMeta, Timer, Tm, TmConfig, TmEvent};
use crate::wire::pfc::{self, MacControlRepr};

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
    /// Malformed MAC Control frames.
    pub bad_mac_control: u64,
}

/// A switch node.
pub struct SimSwitch {
    tm: Tm<SimFrame>,
    forwarding: Box<dyn Forwarding>,
    busy_until: Vec<Instant>,
    stats: SwitchStats,
    events: Vec<(Instant, TmEvent)>,
    xoff_sent: u64,
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
        Ok(SimSwitch {
            tm: Tm::new(cfg, Instant::ZERO)?,
            forwarding,
            busy_until: vec![Instant::ZERO; n],
            stats: SwitchStats::default(),
            events: Vec::new(),
            xoff_sent: 0,
        })
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
        &mut self.tm
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
        if frame.control {
            match pfc::parse_frame(frame.bytes()) {
                Ok(Some(repr)) => self.tm.handle_mac_control(port, &repr, now),
                Ok(None) => {}
                Err(_) => self.stats.bad_mac_control += 1,
            }
            self.drain_events(now);
            return;
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
            let mac = self.tm.config().ports.get(usize::from(port))?.mac;
            let mut f = SimFrame::empty();
            let n = pfc::emit_frame(mac, &MacControlRepr::Pfc(repr), f.head_mut()).ok()?;
            f.set_lens(n, n);
            f.control = true;
            self.drain_events(now);
            return Some(f);
        }
        let d = self.tm.poll_transmit(port, now)?;
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

    pub(crate) fn note_busy(&mut self, port: u16, until: Instant) {
        if let Some(b) = self.busy_until.get_mut(usize::from(port)) {
            *b = until;
        }
    }

    pub(crate) fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        let (t, timer) = self.tm.next_timer()?;
        if t > now {
            return Some(t);
        }
        match timer {
            // Wanted now, but the port is mid-frame: its TxDone will poll it.
            Timer::ShaperRelease { port } => {
                let busy = self
                    .busy_until
                    .get(usize::from(port))
                    .copied()
                    .unwrap_or(now);
                Some(busy.max(now + Duration::from_nanos(1)))
            }
            _ => Some(now),
        }
    }

    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        self.tm.handle_timeout(now);
        self.drain_events(now);
    }

    fn drain_events(&mut self, now: Instant) {
        while let Some(e) = self.tm.poll_event() {
            match e {
                TmEvent::XoffSent { .. } => self.xoff_sent += 1,
                TmEvent::XonSent { .. }
                | TmEvent::PauseRxStarted { .. }
                | TmEvent::PauseRxEnded { .. } => {}
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
