//! Deterministic discrete-event fabric simulator.
//!
//! A [`Sim`] holds nodes (hosts running the [`crate::rnic`] model, switches
//! running the traffic manager behind a [`forward::Forwarding`] pipeline),
//! full-duplex links with a rate and a propagation delay, and an event queue
//! ordered by (time, insertion sequence). Time is [`Instant`] in ns.
//!
//! Link model: a port starts a frame only when its transmitter is idle; the
//! frame occupies the wire for `wire_bytes·8/rate` (rounded up to ns,
//! including FCS, preamble and IFG) and arrives whole at the peer after that
//! plus the propagation delay. The node is asked for the next frame when the
//! transmitter frees (a pull, like a MAC asking its queues).
//!
//! Drive it like quinn's test `Pair`: [`Sim::step`] handles one event,
//! [`Sim::run_until`] everything up to a time, [`Sim::drive`] until no event
//! is pending. Node timers follow each core's `poll_timeout`; a timer that
//! fires early is harmless (cores ignore spurious timeouts).
//!
//! Determinism: all randomness (RED marking) comes from one ChaCha8 RNG
//! seeded by the caller; equal seeds and inputs give identical runs.
//!
//! Counters are kept per (node, port, priority) at the link ([`PortCounters`]);
//! a [`Recorder`] samples [`Probe`]s at a fixed interval for CSV/SVG output.

pub mod event;
pub mod forward;
pub mod frame;
pub mod host;
pub mod record;
pub mod switch;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::time::{Duration, Instant, bits_time};
use crate::wire::pfc::{self, MacControlRepr};
use event::EventQueue;
use frame::SimFrame;
use host::SimHost;
use record::{Recorder, SeriesSpec};
use switch::SimSwitch;

/// Index of a node in its [`Sim`].
pub type NodeId = usize;

/// Errors from building a topology.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// The node does not exist.
    #[error("no node {0}")]
    NoNode(NodeId),
    /// The port does not exist on the node.
    #[error("node {node} has no port {port}")]
    NoPort {
        /// Node.
        node: NodeId,
        /// Port.
        port: u16,
    },
    /// The port is already cabled.
    #[error("node {node} port {port} is already connected")]
    PortInUse {
        /// Node.
        node: NodeId,
        /// Port.
        port: u16,
    },
    /// A link needs a non-zero rate.
    #[error("link rate must be > 0")]
    ZeroRate,
}

/// A simulated node.
#[derive(Debug)]
pub enum Node {
    /// A host with one port.
    Host(Box<SimHost>),
    /// A switch.
    Switch(Box<SimSwitch>),
}

impl Node {
    fn num_ports(&self) -> u16 {
        match self {
            Node::Host(_) => 1,
            Node::Switch(s) => s.num_ports(),
        }
    }
}

/// Counters of one port direction pair, per priority where it applies.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PortCounters {
    /// Data frames sent per priority.
    pub tx_frames: [u64; 8],
    /// Data bytes sent per priority (frame bytes, no FCS).
    pub tx_bytes: [u64; 8],
    /// Data frames received per priority (sender's priority).
    pub rx_frames: [u64; 8],
    /// Data bytes received per priority.
    pub rx_bytes: [u64; 8],
    /// PFC frames sent with the enable bit of each priority set.
    pub pfc_tx: [u64; 8],
    /// PFC frames received with the enable bit of each priority set.
    pub pfc_rx: [u64; 8],
    /// Time the transmitter was busy, ns.
    pub busy_ns: u64,
}

impl PortCounters {
    /// Data bytes sent over all priorities.
    pub fn tx_bytes_total(&self) -> u64 {
        self.tx_bytes.iter().sum()
    }

    /// PFC frames sent (any priority enabled) — counted once per priority bit.
    pub fn pfc_tx_total(&self) -> u64 {
        self.pfc_tx.iter().sum()
    }
}

#[derive(Debug, Clone, Copy)]
struct PortState {
    peer: Option<(NodeId, u16)>,
    rate_bps: u64,
    delay: Duration,
    busy: bool,
    busy_until: Instant,
    counters: PortCounters,
}

impl Default for PortState {
    fn default() -> Self {
        PortState {
            peer: None,
            rate_bps: 0,
            delay: Duration::ZERO,
            busy: false,
            busy_until: Instant::ZERO,
            counters: PortCounters::default(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Event {
    /// `frame` indexes `Sim::frames` (keeps heap entries small).
    Arrive {
        node: u32,
        port: u16,
        frame: u32,
    },
    TxDone {
        node: u32,
        port: u16,
    },
    Timer {
        node: u32,
    },
    Sample,
}

/// A value the recorder samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// Egress queue depth of a switch port/queue, bytes.
    QueueBytes {
        /// Switch.
        node: NodeId,
        /// Port.
        port: u16,
        /// Queue (priority).
        queue: u8,
    },
    /// 1 if the port's transmitter is paused for the priority, else 0.
    Paused {
        /// Node.
        node: NodeId,
        /// Port (0 for hosts).
        port: u16,
        /// Priority.
        priority: u8,
    },
    /// Current DCQCN rate of a host QP, Gb/s.
    QpRate {
        /// Host.
        node: NodeId,
        /// Local QP number.
        qpn: u32,
    },
    /// Data throughput a port sent during the last sample interval, Gb/s.
    TxGbps {
        /// Node.
        node: NodeId,
        /// Port.
        port: u16,
    },
}

struct Sampling {
    interval: Duration,
    probes: Vec<Probe>,
    recorder: Recorder,
    last_tx_bytes: Vec<u64>,
}

/// The simulator. Build it with [`TopologyBuilder`].
pub struct Sim {
    now: Instant,
    events: EventQueue<Event>,
    nodes: Vec<Node>,
    ports: Vec<Vec<PortState>>,
    timer_at: Vec<Option<Instant>>,
    rng: ChaCha8Rng,
    sampling: Option<Sampling>,
    processed: u64,
    frames: Vec<SimFrame>,
    free_frames: Vec<u32>,
}

impl std::fmt::Debug for Sim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim")
            .field("now", &self.now)
            .field("nodes", &self.nodes.len())
            .field("pending", &self.events.len())
            .finish()
    }
}

/// Builds a [`Sim`]: nodes, then links, then `build`.
pub struct TopologyBuilder {
    nodes: Vec<Node>,
    ports: Vec<Vec<PortState>>,
    seed: u64,
}

impl TopologyBuilder {
    /// An empty topology whose run uses `seed`.
    pub fn new(seed: u64) -> Self {
        TopologyBuilder {
            nodes: Vec::new(),
            ports: Vec::new(),
            seed,
        }
    }

    /// Adds a host.
    pub fn add_host(&mut self, host: SimHost) -> NodeId {
        self.push(Node::Host(Box::new(host)))
    }

    /// Adds a switch.
    pub fn add_switch(&mut self, switch: SimSwitch) -> NodeId {
        self.push(Node::Switch(Box::new(switch)))
    }

    fn push(&mut self, n: Node) -> NodeId {
        self.ports
            .push(vec![PortState::default(); usize::from(n.num_ports())]);
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    /// The host `id`, mutably (to add QPs before the run).
    pub fn host_mut(&mut self, id: NodeId) -> Option<&mut SimHost> {
        match self.nodes.get_mut(id)? {
            Node::Host(h) => Some(h),
            Node::Switch(_) => None,
        }
    }

    /// Cables `(a, pa)` to `(b, pb)`, full duplex, `rate_bps` each way,
    /// `delay` propagation.
    pub fn connect(
        &mut self,
        (a, pa): (NodeId, u16),
        (b, pb): (NodeId, u16),
        rate_bps: u64,
        delay: Duration,
    ) -> Result<(), TopologyError> {
        if rate_bps == 0 {
            return Err(TopologyError::ZeroRate);
        }
        for (n, p) in [(a, pa), (b, pb)] {
            let ports = self.ports.get(n).ok_or(TopologyError::NoNode(n))?;
            let st = ports
                .get(usize::from(p))
                .ok_or(TopologyError::NoPort { node: n, port: p })?;
            if st.peer.is_some() {
                return Err(TopologyError::PortInUse { node: n, port: p });
            }
        }
        for ((n, p), peer) in [((a, pa), (b, pb)), ((b, pb), (a, pa))] {
            let st = &mut self.ports[n][usize::from(p)];
            st.peer = Some(peer);
            st.rate_bps = rate_bps;
            st.delay = delay;
        }
        Ok(())
    }

    /// The simulator, at time zero with every node's timers armed.
    pub fn build(self) -> Sim {
        let n = self.nodes.len();
        let mut sim = Sim {
            now: Instant::ZERO,
            events: EventQueue::new(),
            nodes: self.nodes,
            ports: self.ports,
            timer_at: vec![None; n],
            rng: ChaCha8Rng::seed_from_u64(self.seed),
            sampling: None,
            processed: 0,
            frames: Vec::new(),
            free_frames: Vec::new(),
        };
        for id in 0..n {
            sim.service(id);
        }
        sim
    }
}

impl Sim {
    // ------------------------------------------------------------ getters

    /// Current simulated time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Events handled so far.
    pub fn events_processed(&self) -> u64 {
        self.processed
    }

    /// Events pending.
    pub fn events_pending(&self) -> usize {
        self.events.len()
    }

    /// Host `id`.
    pub fn host(&self, id: NodeId) -> Option<&SimHost> {
        match self.nodes.get(id)? {
            Node::Host(h) => Some(h),
            Node::Switch(_) => None,
        }
    }

    /// Host `id`, mutably. Changes take effect at the next event.
    pub fn host_mut(&mut self, id: NodeId) -> Option<&mut SimHost> {
        match self.nodes.get_mut(id)? {
            Node::Host(h) => Some(h),
            Node::Switch(_) => None,
        }
    }

    /// Switch `id`.
    pub fn switch(&self, id: NodeId) -> Option<&SimSwitch> {
        match self.nodes.get(id)? {
            Node::Switch(s) => Some(s),
            Node::Host(_) => None,
        }
    }

    /// Switch `id`, mutably.
    pub fn switch_mut(&mut self, id: NodeId) -> Option<&mut SimSwitch> {
        match self.nodes.get_mut(id)? {
            Node::Switch(s) => Some(s),
            Node::Host(_) => None,
        }
    }

    /// Link counters of `(node, port)`.
    pub fn port_counters(&self, node: NodeId, port: u16) -> Option<PortCounters> {
        self.ports
            .get(node)?
            .get(usize::from(port))
            .map(|p| p.counters)
    }

    /// The recorder, if sampling was enabled.
    pub fn recorder(&self) -> Option<&Recorder> {
        self.sampling.as_ref().map(|s| &s.recorder)
    }

    // ------------------------------------------------------------ commands

    /// Samples `probes` every `interval` from now on (first sample now).
    pub fn record(&mut self, interval: Duration, probes: Vec<(Probe, &str)>) {
        let series = probes
            .iter()
            .map(|(p, name)| SeriesSpec {
                name: (*name).to_string(),
                unit: match p {
                    Probe::QueueBytes { .. } => "queue [KB]",
                    Probe::Paused { .. } => "paused [0/1]",
                    Probe::QpRate { .. } => "DCQCN rate [Gb/s]",
                    Probe::TxGbps { .. } => "throughput [Gb/s]",
                }
                .to_string(),
            })
            .collect();
        let probes: Vec<Probe> = probes.into_iter().map(|(p, _)| p).collect();
        let last = probes.iter().map(|p| self.probe_tx_bytes(p)).collect();
        self.sampling = Some(Sampling {
            interval: if interval.is_zero() {
                Duration::from_nanos(1)
            } else {
                interval
            },
            probes,
            recorder: Recorder::new(series),
            last_tx_bytes: last,
        });
        self.events.push(self.now, Event::Sample);
    }

    /// Wakes node `id` now (after changing it through `host_mut`/`switch_mut`).
    pub fn kick(&mut self, id: NodeId) {
        if id < self.nodes.len() {
            self.service(id);
        }
    }

    // ------------------------------------------------------------ driving

    /// Handles the earliest event. Returns false if none is pending.
    pub fn step(&mut self) -> bool {
        let Some((at, ev)) = self.events.pop() else {
            return false;
        };
        self.now = self.now.max(at);
        self.processed += 1;
        match ev {
            Event::Arrive { node, port, frame } => {
                let f = self.frames[frame as usize];
                self.free_frames.push(frame);
                self.on_arrive(node as NodeId, port, f);
            }
            Event::TxDone { node, port } => {
                let node = node as NodeId;
                self.ports[node][usize::from(port)].busy = false;
                self.service_port(node, port);
                self.service_touched(node);
            }
            Event::Timer { node } => {
                let node = node as NodeId;
                if self.timer_at[node] == Some(at) {
                    self.timer_at[node] = None;
                    let now = self.now;
                    match &mut self.nodes[node] {
                        Node::Host(h) => h.handle_timeout(now),
                        Node::Switch(s) => s.handle_timeout(now),
                    }
                    self.service(node);
                }
            }
            Event::Sample => self.on_sample(),
        }
        true
    }

    /// Handles every event up to and including `t`; then `now() == t`.
    pub fn run_until(&mut self, t: Instant) {
        while self.events.peek_time().is_some_and(|e| e <= t) {
            self.step();
        }
        self.now = self.now.max(t);
    }

    /// Handles events until none is pending (sampling stops when everything
    /// else is idle). Returns the time of the last event. Never returns for
    /// workloads that never end; use [`Sim::run_until`] for those.
    pub fn drive(&mut self) -> Instant {
        loop {
            if self.events.is_empty() {
                return self.now;
            }
            if self.sampling.is_some() && self.events.len() == 1 {
                // Only the sampler is left.
                if let Some((_, Event::Sample)) = self.events.pop() {
                    return self.now;
                }
            }
            self.step();
        }
    }

    // ------------------------------------------------------------ internals

    fn on_arrive(&mut self, node: NodeId, port: u16, frame: SimFrame) {
        let now = self.now;
        {
            let c = &mut self.ports[node][usize::from(port)].counters;
            if frame.control {
                if let Ok(Some(MacControlRepr::Pfc(p))) = pfc::parse_frame(frame.bytes()) {
                    for prio in 0..8u8 {
                        if p.is_enabled(prio) {
                            c.pfc_rx[usize::from(prio)] += 1;
                        }
                    }
                }
            } else {
                let pr = usize::from(frame.priority & 7);
                c.rx_frames[pr] += 1;
                c.rx_bytes[pr] += frame.len() as u64;
            }
        }
        match &mut self.nodes[node] {
            Node::Host(h) => h.handle_frame(now, &frame),
            Node::Switch(s) => s.handle_frame(now, port, frame, &mut self.rng),
        }
        self.service_touched(node);
    }

    /// Services the ports a switch reported as possibly sendable (all ports
    /// of a host), then re-arms the node's timer.
    fn service_touched(&mut self, node: NodeId) {
        if let Node::Switch(s) = &mut self.nodes[node] {
            let touched = s.take_touched();
            for &port in touched.iter() {
                self.service_port(node, port);
            }
            if let Node::Switch(s) = &mut self.nodes[node] {
                s.put_touched(touched);
            }
            self.arm_timer(node);
        } else {
            self.service(node);
        }
    }

    /// Starts a frame on every idle port of `node` that has one, then
    /// re-arms the node's timer.
    fn service(&mut self, node: NodeId) {
        for port in 0..self.nodes[node].num_ports() {
            self.service_port(node, port);
        }
        self.arm_timer(node);
    }

    fn service_port(&mut self, node: NodeId, port: u16) {
        let st = self.ports[node][usize::from(port)];
        let Some((peer, peer_port)) = st.peer else {
            return;
        };
        if st.busy {
            return;
        }
        let now = self.now;
        let frame = match &mut self.nodes[node] {
            Node::Host(h) => h.poll_transmit(now),
            Node::Switch(s) => s.poll_transmit(now, port, &mut self.rng),
        };
        let Some(frame) = frame else { return };
        let ser = bits_time(frame.wire_bytes(), st.rate_bps);
        let ps = &mut self.ports[node][usize::from(port)];
        ps.busy = true;
        ps.busy_until = now + ser;
        ps.counters.busy_ns += ser.as_nanos();
        if frame.control {
            if let Ok(Some(MacControlRepr::Pfc(p))) = pfc::parse_frame(frame.bytes()) {
                for prio in 0..8u8 {
                    if p.is_enabled(prio) {
                        ps.counters.pfc_tx[usize::from(prio)] += 1;
                    }
                }
            }
        } else {
            let pr = usize::from(frame.priority & 7);
            ps.counters.tx_frames[pr] += 1;
            ps.counters.tx_bytes[pr] += frame.len() as u64;
        }
        self.events.push(
            now + ser,
            Event::TxDone {
                node: node as u32,
                port,
            },
        );
        let slot = match self.free_frames.pop() {
            Some(k) => {
                self.frames[k as usize] = frame;
                k
            }
            None => {
                self.frames.push(frame);
                (self.frames.len() - 1) as u32
            }
        };
        self.events.push(
            now + ser + st.delay,
            Event::Arrive {
                node: peer as u32,
                port: peer_port,
                frame: slot,
            },
        );
    }

    fn arm_timer(&mut self, node: NodeId) {
        let now = self.now;
        let want = match &self.nodes[node] {
            Node::Host(h) => h.poll_timeout(now),
            Node::Switch(s) => s.poll_timeout(now),
        };
        let Some(t) = want else { return };
        // A host's deadline that falls inside its frame on the wire (the
        // pacer, typically) is served by the TxDone that ends the frame.
        if let Node::Host(_) = &self.nodes[node]
            && let Some(p) = self.ports[node].first()
            && p.busy
            && t <= p.busy_until
        {
            return;
        }
        let t = t.max(now);
        if self.timer_at[node].is_none_or(|cur| t < cur) {
            self.timer_at[node] = Some(t);
            self.events.push(t, Event::Timer { node: node as u32 });
        }
    }

    fn probe_tx_bytes(&self, p: &Probe) -> u64 {
        match *p {
            Probe::TxGbps { node, port } => self
                .port_counters(node, port)
                .map_or(0, |c| c.tx_bytes_total()),
            _ => 0,
        }
    }

    fn on_sample(&mut self) {
        let Some(mut s) = self.sampling.take() else {
            return;
        };
        let now = self.now;
        let secs = s.interval.as_secs_f64();
        let mut row = Vec::with_capacity(s.probes.len());
        for (i, p) in s.probes.iter().enumerate() {
            let v = match *p {
                Probe::QueueBytes { node, port, queue } => self
                    .switch(node)
                    .map_or(f64::NAN, |sw| sw.queue_bytes(port, queue) as f64 / 1000.0),
                Probe::Paused {
                    node,
                    port,
                    priority,
                } => match self.nodes.get(node) {
                    Some(Node::Host(h)) => f64::from(u8::from(h.rnic().is_paused(priority, now))),
                    Some(Node::Switch(sw)) => {
                        f64::from(u8::from(sw.is_paused(port, priority, now)))
                    }
                    None => f64::NAN,
                },
                Probe::QpRate { node, qpn } => self
                    .host(node)
                    .and_then(|h| h.rnic().qp_stats(qpn))
                    .map_or(f64::NAN, |q| q.rate_bps as f64 / 1e9),
                Probe::TxGbps { .. } => {
                    let b = self.probe_tx_bytes(p);
                    let d = b.saturating_sub(s.last_tx_bytes[i]);
                    s.last_tx_bytes[i] = b;
                    d as f64 * 8.0 / secs / 1e9
                }
            };
            row.push(v);
        }
        s.recorder.sample(now.as_nanos(), &row);
        self.events.push(now + s.interval, Event::Sample);
        self.sampling = Some(s);
    }
}

#[cfg(test)]
mod tests;
