//! Packet tracing in the switch core (issue #16): which packets are
//! traced, the traces of packets still inside the switch, and the queue of
//! finished ones. The events themselves are [`p4_target::trace`]'s; the P4
//! program records its own into the runtime's tracer, this module adds
//! arrival, drops, the traffic manager's decisions and departure.
//!
//! Contract: with no [`TraceRequest`] set the switch pays one branch per
//! arriving packet and one per enqueue and dequeue (`PacketSlot::trace` is
//! `None`). A traced packet allocates its events. Finished traces wait in
//! a queue of at most [`MAX_TRACES`]; more are dropped and counted, so a
//! slow reader never holds up the packet path.

use std::collections::VecDeque;

use p4_target::trace::{Event, FieldFilter, PacketTrace};

/// Finished traces kept for [`super::Switch::poll_trace`].
pub const MAX_TRACES: usize = 1024;

/// Which arriving packets to trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceRequest {
    /// Only packets arriving on this port (`None`: any port).
    pub ingress_port: Option<u16>,
    /// Only packets whose extracted headers match.
    pub filter: Option<FieldFilter>,
    /// Trace one in this many packets that pass the port and header
    /// filters (0 and 1: every one).
    pub sample_one_in: u32,
    /// Stop after this many traced packets (`None`: until cleared).
    pub max_packets: Option<u64>,
}

/// Trace counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Packets that started a trace.
    pub traced: u64,
    /// Finished traces (one per copy) queued for the reader.
    pub finished: u64,
    /// Finished traces dropped because the reader was slow.
    pub dropped: u64,
}

/// A traced packet's trace while one copy of it is in the switch.
#[derive(Debug)]
pub(super) struct InFlight {
    pub(super) trace: PacketTrace,
    /// The TM's paused time of the copy's egress priority at enqueue.
    pub(super) pause_mark_ns: u64,
}

/// Tracing state of one switch.
#[derive(Debug, Default)]
pub(super) struct Tracing {
    request: Option<TraceRequest>,
    /// Packets that passed the port filter (for sampling).
    candidates: u64,
    next_packet: u64,
    /// In-flight traces, indexed by `PacketSlot::trace`.
    slots: Vec<Option<InFlight>>,
    free: Vec<u32>,
    done: VecDeque<PacketTrace>,
    pub(super) stats: TraceStats,
}

impl Tracing {
    pub(super) fn set(&mut self, request: Option<TraceRequest>) {
        self.request = request;
        self.candidates = 0;
    }

    pub(super) fn active(&self) -> bool {
        self.request.is_some()
    }

    /// Whether a packet arriving on `port` is to be traced (before the
    /// header filter, which needs the parser's events).
    pub(super) fn wants(&mut self, port: u16) -> bool {
        let Some(r) = &self.request else {
            return false;
        };
        if r.ingress_port.is_some_and(|p| p != port) {
            return false;
        }
        if r.filter.is_some() {
            // Sampled after the header filter.
            return true;
        }
        self.sample()
    }

    fn sample(&mut self) -> bool {
        let Some(r) = &self.request else {
            return false;
        };
        self.candidates += 1;
        let n = u64::from(r.sample_one_in.max(1));
        self.candidates % n == 1 % n
    }

    /// Whether the parser's events pass the header filter (and sampling).
    pub(super) fn accepts(&mut self, parsed: &[Event]) -> bool {
        match self.request.as_ref().and_then(|r| r.filter.as_ref()) {
            None => true,
            Some(f) if f.matches(parsed) => self.sample(),
            Some(_) => false,
        }
    }

    /// A new trace for a packet that arrived on `port`.
    pub(super) fn begin(&mut self, port: u16, bytes: u32, now_ns: u64) -> PacketTrace {
        self.stats.traced += 1;
        self.next_packet += 1;
        if let Some(r) = &mut self.request
            && let Some(n) = &mut r.max_packets
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.request = None;
            }
        }
        PacketTrace {
            packet: self.next_packet,
            copy: 0,
            switch: None,
            events: vec![Event::Arrive {
                port,
                time_ns: now_ns,
                bytes,
            }],
        }
    }

    /// Parks a copy's trace while the copy is queued; the slot number goes
    /// in `PacketSlot::trace`.
    pub(super) fn park(&mut self, f: InFlight) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(f);
                i
            }
            None => {
                self.slots.push(Some(f));
                (self.slots.len() - 1) as u32
            }
        }
    }

    pub(super) fn slot(&mut self, i: u32) -> Option<&mut InFlight> {
        self.slots.get_mut(i as usize)?.as_mut()
    }

    pub(super) fn unpark(&mut self, i: u32) -> Option<InFlight> {
        let f = self.slots.get_mut(i as usize)?.take();
        if f.is_some() {
            self.free.push(i);
        }
        f
    }

    /// A copy's trace is complete.
    pub(super) fn finish(&mut self, trace: PacketTrace) {
        if self.done.len() >= MAX_TRACES {
            self.stats.dropped += 1;
        } else {
            self.stats.finished += 1;
            self.done.push_back(trace);
        }
    }

    pub(super) fn poll(&mut self) -> Option<PacketTrace> {
        self.done.pop_front()
    }
}

/// The ECN/RED decision of an egress pass, for programs whose RED action
/// takes parameters named `kmin_bytes`, `kmax_bytes` and `pmax` (65535 =
/// 100 %) and count marks in a counter whose name ends in `ecn_marked`, as
/// `roce_switch.p4`'s `ecn_red` table and `mark_ce` action do. `pass` are
/// the events of that pass; `depth_bytes` the queue depth it saw.
pub(super) fn ecn_decision(pass: &[Event], depth_bytes: u64) -> Option<Event> {
    let (kmin, kmax, pmax) = pass.iter().find_map(|e| match e {
        Event::Table { params, .. } => {
            let get = |n: &str| {
                params
                    .iter()
                    .find(|p| p.name == n)
                    .map(|p| p.value.0 as u64)
            };
            Some((get("kmin_bytes")?, get("kmax_bytes")?, get("pmax")?))
        }
        _ => None,
    })?;
    let marked = pass.iter().any(|e| {
        matches!(e, Event::Extern { call, object: Some(o), .. }
            if call == "count" && o.ends_with("ecn_marked"))
    });
    let probability = if depth_bytes > kmax {
        1.0
    } else if depth_bytes > kmin && kmax > kmin {
        (pmax as f64 / 65535.0) * (depth_bytes - kmin) as f64 / (kmax - kmin) as f64
    } else {
        0.0
    };
    Some(Event::Ecn {
        depth_bytes,
        kmin_bytes: kmin,
        kmax_bytes: kmax,
        probability,
        marked,
    })
}
