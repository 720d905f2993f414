//! A simulated switch node: the production [`Switch`] (MAC, compiled P4
//! program, replication, traffic manager with PFC and watchdog) and the
//! bookkeeping the simulator's tests and plots read.
//!
//! Contract: the simulator drives the switch exactly as the real-time
//! driver does in one turn ([`crate::driver`]): every frame that arrived
//! at an instant goes to [`Switch::handle_frame`], then
//! [`Switch::handle_timeout`], then each port in order is polled with
//! [`Switch::poll_transmit`] until it has nothing to send, then events,
//! packet-ins and digests are drained. A port starts a frame only when the
//! switch's own shaper lets it (the simulator configures switch ports with
//! the link's rate and overhead), so the wire never has to hold a switch
//! frame back. Times are [`Instant`]s.

use p4_target::pipeline::Pipeline;

use super::frame::SimFrame;
use crate::deadlock::PauseInput;
use crate::mac::MacStats;
use crate::switch::{Switch, SwitchEvent};
use crate::time::Instant;
use crate::tm::{Tm, TmEvent};
use p4_target::trace::PacketTrace;

/// Notable traffic-manager events kept for inspection: storms,
/// restorations, and (up to this many) headroom overflows.
const MAX_KEPT_EVENTS: usize = 10_000;

/// Packet traces kept per switch (more are counted as dropped).
const MAX_KEPT_TRACES: usize = 100_000;

/// Pause-state changes kept per switch (more are counted as dropped).
const MAX_KEPT_PAUSES: usize = 1_000_000;

/// A switch node.
pub struct SimSwitch<P: Pipeline> {
    switch: Switch<P>,
    events: Vec<(Instant, TmEvent)>,
    xoff_sent: u64,
    packet_in_dropped: u64,
    /// Finished packet traces (when a trace request is set on the switch).
    traces: Vec<PacketTrace>,
    traces_dropped: u64,
    /// Pause-state changes (the deadlock graph's inputs) with their times.
    pauses: Vec<(Instant, PauseInput)>,
    pauses_dropped: u64,
}

impl<P: Pipeline> std::fmt::Debug for SimSwitch<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimSwitch")
            .field("switch", &self.switch)
            .field("xoff_sent", &self.xoff_sent)
            .finish()
    }
}

impl<P: Pipeline> SimSwitch<P> {
    /// A node around `switch`.
    pub fn new(switch: Switch<P>) -> Self {
        SimSwitch {
            switch,
            events: Vec::new(),
            xoff_sent: 0,
            packet_in_dropped: 0,
            traces: Vec::new(),
            traces_dropped: 0,
            pauses: Vec::new(),
            pauses_dropped: 0,
        }
    }

    // ------------------------------------------------------------ getters

    /// Finished packet traces of this switch so far (set a request with
    /// [`Switch::handle_trace_request`] on [`SimSwitch::switch_mut`]),
    /// and how many did not fit ([`MAX_KEPT_TRACES`]).
    pub fn traces(&self) -> (&[PacketTrace], u64) {
        (&self.traces, self.traces_dropped)
    }

    /// The switch.
    pub fn switch(&self) -> &Switch<P> {
        &self.switch
    }

    /// The switch, mutably (table writes, plans, BIG_RED_SWITCH). Wake the
    /// node with `Sim::kick` afterwards.
    pub fn switch_mut(&mut self) -> &mut Switch<P> {
        &mut self.switch
    }

    /// Number of ports.
    pub fn num_ports(&self) -> u16 {
        u16::try_from(self.switch.num_ports()).unwrap_or(u16::MAX)
    }

    /// The traffic manager (counters, buffer usage, watchdog state).
    pub fn tm(&self) -> &Tm<crate::switch::Queued<P::Packet>> {
        self.switch.tm()
    }

    /// MAC counters of a port.
    pub fn mac_stats(&self, port: u16) -> Option<MacStats> {
        self.switch.mac_stats(port)
    }

    /// Notable TM events with their times: storms, restorations, headroom
    /// overflows (XOFF/XON/pause events are only counted).
    pub fn events(&self) -> &[(Instant, TmEvent)] {
        &self.events
    }

    /// Every change of this switch's pause state with its time, oldest
    /// first: egress queues paused and unpaused, XOFF asserted and
    /// released, watchdog storms and restores (the inputs of a
    /// [`crate::deadlock::PauseGraph`]), and how many did not fit
    /// ([`MAX_KEPT_PAUSES`]).
    pub fn pause_log(&self) -> (&[(Instant, PauseInput)], u64) {
        (&self.pauses, self.pauses_dropped)
    }

    /// First XOFF frames queued (not refreshes).
    pub fn xoff_sent(&self) -> u64 {
        self.xoff_sent
    }

    /// Frames the program sent to the CPU port (no controller in a simulation).
    pub fn packet_in_dropped(&self) -> u64 {
        self.packet_in_dropped
    }

    /// Egress queue depth in bytes.
    pub fn queue_bytes(&self, port: u16, queue: u8) -> u64 {
        self.tm().queue_depth(port, queue).map_or(0, |(b, _)| b)
    }

    /// True if received PFC pauses (port, priority).
    pub fn is_paused(&self, port: u16, priority: u8, now: Instant) -> bool {
        self.tm().is_paused(port, priority, now)
    }

    // ------------------------------------------------------------ driven by the simulator

    pub(crate) fn handle_frame(&mut self, now: Instant, port: u16, frame: Vec<u8>) {
        self.switch.handle_frame_owned(port, frame, now);
    }

    /// One driver turn at `now` (the module doc's order): timers, then
    /// every port in order until it has nothing to send, then the reports.
    /// The frames go to `sent` in the order the switch sent them.
    pub(crate) fn serve(&mut self, now: Instant, sent: &mut Vec<(u16, SimFrame)>) {
        self.switch.handle_timeout(now);
        for port in 0..self.num_ports() {
            // Polling a port with nothing the shaper lets out now changes
            // nothing; skipping it keeps a service O(ready ports). An LLDP
            // frame due counts (the switch's view, not only the TM's): a
            // port skipped with one due would have its timer re-armed a
            // nanosecond later, forever.
            if self.switch.next_transmit_at(port).is_none_or(|t| t > now) {
                continue;
            }
            while let Some((tx, buf)) = self.switch.poll_transmit_owned(port, now) {
                let frame = SimFrame::new(buf, tx.priority.unwrap_or(0), tx.priority.is_none());
                sent.push((port, frame));
            }
        }
        self.drain(now);
    }

    /// Drains what the switch reports after a turn.
    pub(crate) fn drain(&mut self, now: Instant) {
        while let Some(e) = self.switch.poll_event() {
            let e = match e {
                SwitchEvent::Tm(e) => e,
                SwitchEvent::Dcbx { port, event } => {
                    tracing::debug!(port, ?event, %now, "DCBX");
                    continue;
                }
                // Simulated links never go down.
                SwitchEvent::PortOper { .. } => continue,
            };
            if let Some(p) = PauseInput::from_tm(&e) {
                if self.pauses.len() < MAX_KEPT_PAUSES {
                    self.pauses.push((now, p));
                } else {
                    self.pauses_dropped += 1;
                }
            }
            match e {
                TmEvent::XoffSent { .. } => self.xoff_sent += 1,
                TmEvent::StormDetected { port, priority, .. } => {
                    tracing::info!(port, priority, %now, "PFC storm detected");
                    self.events.push((now, e));
                }
                TmEvent::StormRestored { port, priority, .. } => {
                    tracing::info!(port, priority, %now, "PFC storm restored");
                    self.events.push((now, e));
                }
                TmEvent::HeadroomOverflow { .. } if self.events.len() < MAX_KEPT_EVENTS => {
                    self.events.push((now, e));
                }
                _ => {}
            }
        }
        while self.switch.poll_packet_in().is_some() {
            self.packet_in_dropped += 1;
        }
        while self.switch.poll_digest().is_some() {}
        while let Some(t) = self.switch.poll_trace() {
            if self.traces.len() < MAX_KEPT_TRACES {
                self.traces.push(t);
            } else {
                self.traces_dropped += 1;
            }
        }
    }

    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        self.switch.poll_timeout()
    }
}
