//! Deterministic discrete-event fabric simulator.
//!
//! A [`Sim`] holds nodes — hosts running the [`crate::rnic`] model, and
//! switches that are the production [`Switch`] running a compiled P4
//! program with the real MAC, traffic manager, watchdog and replication —
//! full-duplex links with a rate and a propagation delay, and an event
//! queue ordered by (time, insertion sequence). Time is [`Instant`] in ns.
//! Frames are whole, real bytes ([`SimFrame`]).
//!
//! Link model: a frame occupies the wire for `wire_bytes·8/rate` (rounded
//! up to ns, including FCS, preamble and IFG) and arrives whole at the peer
//! after that plus the propagation delay; frames on one link arrive in the
//! order they were sent. A host starts a frame only when its transmitter
//! is idle and asks its RNIC for the next one when the transmitter frees (a
//! pull, like a MAC asking its queues). A switch port starts a frame when
//! the switch's own port shaper lets it — the shaper runs at the port
//! speed with the same wire overhead ([`crate::wire::ethernet::wire_len`])
//! — so the switch's clock, not a second model, decides when its frames
//! leave, exactly as on the daemon.
//!
//! A switch is driven as the daemon's driver drives it
//! ([`crate::driver`]): at an instant where it has input or a deadline,
//! every frame arriving then is handed to it, then one service runs
//! `handle_timeout`, polls every port in order until nothing is sendable,
//! and drains events; then the node sleeps until `poll_timeout`. A service
//! whose switch has nothing due (`poll_timeout` in the future: a frame
//! queued behind a busy port) only drains events, since its timers and
//! polls would change nothing.
//!
//! Drive it like quinn's test `Pair`: [`Sim::step`] handles one event,
//! [`Sim::run_until`] everything up to a time, [`Sim::drive`] until no event
//! is pending.
//!
//! Determinism: each switch's P4 `random()` source is seeded from the
//! simulation seed and the node id; equal seeds and inputs give identical
//! runs.
//!
//! Counters are kept per (node, port, priority) at the link ([`PortCounters`]);
//! a [`Recorder`] samples [`Probe`]s at a fixed interval for CSV/SVG output;
//! [`Sim::capture`] keeps every frame a port sends, with its time.

pub mod event;
pub mod frame;
pub mod host;
pub mod record;
pub mod switch;

use p4_target::pipeline::Pipeline;

use crate::deadlock::{PauseGraph, PauseInput, PortId};
use crate::switch::{Switch, SwitchConfig};
use crate::time::{Duration, Instant, bits_time};
use crate::wire::ethernet::{EthernetAddress, WIRE_OVERHEAD_BYTES};
use crate::wire::pfc::{self, MacControlRepr};
use event::EventQueue;
use frame::SimFrame;
use host::SimHost;
use record::{Recorder, SeriesSpec};
use switch::SimSwitch;

/// Index of a node in its [`Sim`].
pub type NodeId = usize;

/// Starting settings of a simulated switch with `ports` ports, before its
/// fabric plan: links charge [`WIRE_OVERHEAD_BYTES`] per frame, the port
/// shaper holds no burst (the wire paces every frame; a live switch banks
/// [`crate::driver::TURN_SLACK_NS`] because its loop wakes late), and port
/// `i` sends PFC from MAC 02:aa:00:00:hi(i):lo(i).
pub fn switch_config(ports: usize) -> SwitchConfig {
    let mut config = SwitchConfig::with_ports(ports);
    for (i, p) in config.tm.ports.iter_mut().enumerate() {
        p.wire_overhead_bytes = WIRE_OVERHEAD_BYTES as u32;
        p.shaper_burst_bytes = 0;
        p.shaper_burst_ns = 0;
        p.mac = EthernetAddress([0x02, 0xaa, 0, 0, (i >> 8) as u8, i as u8]);
    }
    config
}

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
    /// A switch port's speed or wire overhead differs from its link's (its
    /// shaper paces the wire, see [`switch_config`]).
    #[error(
        "node {node} port {port}: the switch paces the port at {port_bps} b/s with \
         {port_overhead_bytes} B of overhead a frame, the link runs at {link_bps} b/s with \
         {overhead} B",
        overhead = WIRE_OVERHEAD_BYTES
    )]
    SpeedMismatch {
        /// Node.
        node: NodeId,
        /// Port.
        port: u16,
        /// The switch port's configured speed.
        port_bps: u64,
        /// The switch port's per-frame overhead.
        port_overhead_bytes: u32,
        /// The link's rate.
        link_bps: u64,
    },
}

/// A simulated node.
#[derive(Debug)]
pub enum Node<P: Pipeline> {
    /// A host with one port.
    Host(Box<SimHost>),
    /// A switch.
    Switch(Box<SimSwitch<P>>),
}

impl<P: Pipeline> Node<P> {
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

#[derive(Debug, Clone, Copy, Default)]
struct PortState {
    peer: Option<(NodeId, u16)>,
    rate_bps: u64,
    delay: Duration,
    /// Host ports: the transmitter is sending until `busy_until`.
    busy: bool,
    busy_until: Instant,
    /// When the last frame sent on this port arrives at the peer (frames on
    /// a link arrive in order).
    last_arrival: Instant,
    counters: PortCounters,
}

#[derive(Debug, Clone, Copy)]
enum Event {
    /// `frame` indexes `Sim::frames` (keeps heap entries small).
    Arrive {
        node: u32,
        port: u16,
        frame: u32,
    },
    /// A host's transmitter is free again.
    TxDone {
        node: u32,
    },
    /// A node's deadline (`poll_timeout`).
    Timer {
        node: u32,
    },
    /// A switch's turn at this instant, after every frame arriving now.
    Service {
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
    /// CNPs a host's QPs received during the last sample interval, per second.
    CnpRate {
        /// Host.
        node: NodeId,
    },
    /// RoCE payload a host's QPs accepted (in order, each byte once) during
    /// the last sample interval, Gb/s: goodput at a receiver.
    GoodputGbps {
        /// Host.
        node: NodeId,
    },
    /// Payload a host's QPs have retransmitted so far, MB (a running total).
    RetxMegabytes {
        /// Host.
        node: NodeId,
    },
    /// An ingress priority group of a switch port, KB: its shared-pool use
    /// or where its XOFF/XON thresholds stand now.
    Pg {
        /// Switch.
        node: NodeId,
        /// Ingress port.
        port: u16,
        /// Priority group.
        pg: u8,
        /// Which figure.
        of: PgFigure,
    },
}

/// What a [`Probe::Pg`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgFigure {
    /// Shared-pool bytes the PG holds.
    Shared,
    /// Shared bytes at which it asserts XOFF (R-PFC-TX-1; moves with the
    /// free pool under a dynamic threshold).
    XoffThreshold,
    /// Shared bytes at or below which it releases XOFF (R-PFC-TX-2).
    XonThreshold,
}

struct Sampling {
    interval: Duration,
    probes: Vec<Probe>,
    recorder: Recorder,
    /// The counter behind each per-interval probe at the last sample.
    last_counts: Vec<u64>,
}

/// Frames one port sent, with the time each started.
type Capture = ((NodeId, u16), Vec<(Instant, Vec<u8>)>);

/// The simulator. Build it with [`TopologyBuilder`]; `P` is the P4 program
/// every switch runs.
pub struct Sim<P: Pipeline> {
    now: Instant,
    events: EventQueue<Event>,
    nodes: Vec<Node<P>>,
    ports: Vec<Vec<PortState>>,
    timer_at: Vec<Option<Instant>>,
    /// Timer events still queued whose deadline was cancelled or superseded.
    stale_timers: usize,
    /// The instant of a switch's pending `Service` event, if any.
    service_at: Vec<Option<Instant>>,
    /// A switch's next service follows its own deadline: it runs whole,
    /// without first asking whether anything is due.
    deadline_due: Vec<bool>,
    sampling: Option<Sampling>,
    processed: u64,
    switch_frames: u64,
    frames: Vec<SimFrame>,
    free_frames: Vec<u32>,
    /// Byte buffers for reuse.
    spare: Vec<Vec<u8>>,
    /// The frames of one switch service, kept for its capacity.
    switch_sent: Vec<(u16, SimFrame)>,
    captures: Vec<Capture>,
}

impl<P: Pipeline> std::fmt::Debug for Sim<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim")
            .field("now", &self.now)
            .field("nodes", &self.nodes.len())
            .field("pending", &self.events.len())
            .finish()
    }
}

/// Builds a [`Sim`]: nodes, then links, then `build`.
pub struct TopologyBuilder<P: Pipeline> {
    nodes: Vec<Node<P>>,
    ports: Vec<Vec<PortState>>,
    seed: u64,
}

impl<P: Pipeline> TopologyBuilder<P> {
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

    /// Adds a switch. Its P4 `random()` source is seeded from the
    /// simulation seed and its node id.
    pub fn add_switch(&mut self, mut switch: Switch<P>) -> NodeId {
        let id = self.nodes.len() as u64;
        let seed = self.seed ^ id.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        switch.pipeline_mut().runtime_mut().set_seed(seed);
        self.push(Node::Switch(Box::new(SimSwitch::new(switch))))
    }

    fn push(&mut self, n: Node<P>) -> NodeId {
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

    /// The switch `id`, mutably (to program it before the run).
    pub fn switch_mut(&mut self, id: NodeId) -> Option<&mut Switch<P>> {
        match self.nodes.get_mut(id)? {
            Node::Switch(s) => Some(s.switch_mut()),
            Node::Host(_) => None,
        }
    }

    /// Cables `(a, pa)` to `(b, pb)`, full duplex, `rate_bps` each way,
    /// `delay` propagation. A switch port's traffic-manager speed must be
    /// the link rate (its shaper paces the wire): a mismatch is refused.
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
            if let Node::Switch(s) = &self.nodes[n] {
                let tm = &s.tm().config().ports[usize::from(p)];
                if tm.speed_bps != rate_bps || tm.wire_overhead_bytes != WIRE_OVERHEAD_BYTES as u32
                {
                    return Err(TopologyError::SpeedMismatch {
                        node: n,
                        port: p,
                        port_bps: tm.speed_bps,
                        port_overhead_bytes: tm.wire_overhead_bytes,
                        link_bps: rate_bps,
                    });
                }
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
    pub fn build(self) -> Sim<P> {
        let n = self.nodes.len();
        let mut sim = Sim {
            now: Instant::ZERO,
            events: EventQueue::new(),
            nodes: self.nodes,
            ports: self.ports,
            timer_at: vec![None; n],
            stale_timers: 0,
            service_at: vec![None; n],
            deadline_due: vec![false; n],
            sampling: None,
            processed: 0,
            switch_frames: 0,
            frames: Vec::new(),
            free_frames: Vec::new(),
            spare: Vec::new(),
            switch_sent: Vec::new(),
            captures: Vec::new(),
        };
        for id in 0..n {
            sim.wake(id);
        }
        sim
    }
}

impl<P: Pipeline> Sim<P> {
    // ------------------------------------------------------------ getters

    /// Current simulated time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Events handled so far.
    pub fn events_processed(&self) -> u64 {
        self.processed
    }

    /// Frames switches received and sent so far (each counts once per
    /// switch it passes in and once out): the simulator's unit of switch work.
    pub fn switch_frames(&self) -> u64 {
        self.switch_frames
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
    pub fn switch(&self, id: NodeId) -> Option<&SimSwitch<P>> {
        match self.nodes.get(id)? {
            Node::Switch(s) => Some(s),
            Node::Host(_) => None,
        }
    }

    /// The pause-dependency graph of the run so far ([`crate::deadlock`]):
    /// every cabled link, and every switch's [`SimSwitch::pause_log`]
    /// replayed in time order (switches in node order within an instant),
    /// observed until now. `name` gives each node's name.
    pub fn pause_graph(&self, name: impl Fn(NodeId) -> String) -> PauseGraph {
        let mut g = PauseGraph::new();
        for (node, ports) in self.ports.iter().enumerate() {
            for (port, st) in ports.iter().enumerate() {
                if let Some((peer, peer_port)) = st.peer
                    && (node, port as u16) < (peer, peer_port)
                {
                    g.add_link(
                        PortId::new(name(node), port as u16),
                        PortId::new(name(peer), peer_port),
                    );
                }
            }
        }
        let mut inputs: Vec<(Instant, NodeId, PauseInput)> = Vec::new();
        for (id, node) in self.nodes.iter().enumerate() {
            if let Node::Switch(s) = node {
                inputs.extend(s.pause_log().0.iter().map(|&(t, p)| (t, id, p)));
            }
        }
        inputs.sort_by_key(|&(t, id, _)| (t, id));
        let names: Vec<String> = (0..self.nodes.len()).map(&name).collect();
        for (t, id, p) in inputs {
            g.handle(&names[id], p, t);
        }
        g.handle_timeout(self.now);
        g
    }

    /// Checks the conservation law ([`crate::switch::Switch::conservation`])
    /// of every switch node; the first that breaks it is named.
    pub fn conservation(&self) -> Result<(), (NodeId, crate::switch::Imbalance)> {
        for (id, node) in self.nodes.iter().enumerate() {
            if let Node::Switch(s) = node {
                s.switch().conservation().map_err(|e| (id, e))?;
            }
        }
        Ok(())
    }

    /// Switch `id`, mutably. Call [`Sim::kick`] after changing it.
    pub fn switch_mut(&mut self, id: NodeId) -> Option<&mut SimSwitch<P>> {
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

    /// The recorder, mutably (reference lines, smoothing).
    pub fn recorder_mut(&mut self) -> Option<&mut Recorder> {
        self.sampling.as_mut().map(|s| &mut s.recorder)
    }

    /// Frames `(node, port)` has sent since [`Sim::capture`] was called for
    /// it, with the time each started.
    pub fn captured(&self, node: NodeId, port: u16) -> &[(Instant, Vec<u8>)] {
        self.captures
            .iter()
            .find(|(k, _)| *k == (node, port))
            .map_or(&[], |(_, v)| v.as_slice())
    }

    // ------------------------------------------------------------ commands

    /// Keeps a copy of every frame `(node, port)` sends from now on.
    pub fn capture(&mut self, node: NodeId, port: u16) {
        if !self.captures.iter().any(|(k, _)| *k == (node, port)) {
            self.captures.push(((node, port), Vec::new()));
        }
    }

    /// Delivers `bytes` to `(node, port)` at `at` (not before now), as if a
    /// cable brought it: for replaying recorded input.
    pub fn inject(&mut self, node: NodeId, port: u16, bytes: &[u8], at: Instant) {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(bytes);
        let slot = self.store(SimFrame::new(buf, 0, false));
        self.events.push(
            at.max(self.now),
            Event::Arrive {
                node: node as u32,
                port,
                frame: slot,
            },
        );
    }

    /// Samples `probes` every `interval` from now on (first sample now).
    pub fn record(&mut self, interval: Duration, probes: Vec<(Probe, &str)>) {
        let series = probes
            .iter()
            .map(|(p, name)| SeriesSpec {
                name: (*name).to_string(),
                unit: match p {
                    Probe::QueueBytes { .. } => record::QUEUE_UNIT,
                    Probe::Paused { .. } => record::PAUSED_UNIT,
                    Probe::QpRate { .. } => "DCQCN rate [Gb/s]",
                    Probe::TxGbps { .. } | Probe::GoodputGbps { .. } => record::RATE_UNIT,
                    Probe::CnpRate { .. } => record::CNP_UNIT,
                    Probe::RetxMegabytes { .. } => record::RETX_UNIT,
                    Probe::Pg { .. } => record::PG_UNIT,
                }
                .to_string(),
            })
            .collect();
        let probes: Vec<Probe> = probes.into_iter().map(|(p, _)| p).collect();
        let last = probes.iter().map(|p| self.probe_count(p)).collect();
        self.sampling = Some(Sampling {
            interval: if interval.is_zero() {
                Duration::from_nanos(1)
            } else {
                interval
            },
            probes,
            recorder: Recorder::new(series),
            last_counts: last,
        });
        self.events.push(self.now, Event::Sample);
    }

    /// Wakes node `id` now (after changing it through `host_mut`/`switch_mut`).
    pub fn kick(&mut self, id: NodeId) {
        if id < self.nodes.len() {
            self.wake(id);
        }
    }

    // ------------------------------------------------------------ driving

    /// Handles the earliest event. Returns false if none is pending.
    pub fn step(&mut self) -> bool {
        let Some((at, ev)) = self.events.pop() else {
            return false;
        };
        if let Event::Timer { node } = ev
            && self.timer_at[node as NodeId] != Some(at)
        {
            // Superseded or cancelled (an RNIC stops its retransmission
            // timer when everything is acknowledged): not an event, and the
            // clock must not jump to it.
            self.stale_timers = self.stale_timers.saturating_sub(1);
            return true;
        }
        self.now = self.now.max(at);
        self.processed += 1;
        match ev {
            Event::Arrive { node, port, frame } => {
                let f = std::mem::take(&mut self.frames[frame as usize]);
                self.free_frames.push(frame);
                self.on_arrive(node as NodeId, port, f);
            }
            Event::TxDone { node } => {
                let node = node as NodeId;
                self.ports[node][0].busy = false;
                self.service_host(node);
            }
            Event::Timer { node } => {
                let node = node as NodeId;
                if self.timer_at[node] == Some(at) {
                    self.timer_at[node] = None;
                    let now = self.now;
                    match &mut self.nodes[node] {
                        Node::Host(h) => h.handle_timeout(now),
                        Node::Switch(_) => self.deadline_due[node] = true,
                    }
                    // A switch runs its timers in its service.
                    self.wake(node);
                }
            }
            Event::Service { node } => {
                let node = node as NodeId;
                self.service_at[node] = None;
                self.service_switch(node);
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
            let live = self.events.len().saturating_sub(self.stale_timers);
            if live == 0 {
                return self.now;
            }
            if self.sampling.is_some() && live == 1 {
                // One live event, probably the sampler: drop cancelled
                // timers so they neither keep it sampling nor move the clock.
                let mut keep = Vec::with_capacity(1);
                while let Some((at, ev)) = self.events.pop() {
                    match ev {
                        Event::Timer { node } if self.timer_at[node as NodeId] != Some(at) => {}
                        ev => keep.push((at, ev)),
                    }
                }
                self.stale_timers = 0;
                if let [(_, Event::Sample)] = keep.as_slice() {
                    return self.now;
                }
                for (at, ev) in keep {
                    self.events.push(at, ev);
                }
            }
            self.step();
        }
    }

    // ------------------------------------------------------------ internals

    fn store(&mut self, frame: SimFrame) -> u32 {
        match self.free_frames.pop() {
            Some(k) => {
                self.frames[k as usize] = frame;
                k
            }
            None => {
                self.frames.push(frame);
                (self.frames.len() - 1) as u32
            }
        }
    }

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
            Node::Host(h) => {
                h.handle_frame(now, frame.bytes());
                self.spare.push(frame.into_bytes());
                self.service_host(node);
            }
            Node::Switch(s) => {
                self.switch_frames += 1;
                s.handle_frame(now, port, frame.into_bytes());
                self.schedule_service(node);
            }
        }
    }

    /// Runs `node` now: a host starts a frame if it can; a switch gets a
    /// service after everything else due at this instant.
    fn wake(&mut self, node: NodeId) {
        match self.nodes[node] {
            Node::Host(_) => self.service_host(node),
            Node::Switch(_) => self.schedule_service(node),
        }
    }

    fn schedule_service(&mut self, node: NodeId) {
        if self.service_at[node] == Some(self.now) {
            return;
        }
        if self.events.peek_time().is_some_and(|t| t <= self.now) {
            // More may arrive at this instant: serve after it.
            self.service_at[node] = Some(self.now);
            self.events
                .push(self.now, Event::Service { node: node as u32 });
        } else {
            // Nothing else is due now: this is the instant's last input.
            self.service_switch(node);
        }
    }

    /// One driver turn for a switch (see the module doc), then its frames
    /// onto their wires in the order the switch sent them.
    fn service_switch(&mut self, node: NodeId) {
        let now = self.now;
        let Node::Switch(s) = &mut self.nodes[node] else {
            return;
        };
        let due = std::mem::take(&mut self.deadline_due[node]);
        let mut next = if due { None } else { s.poll_timeout() };
        if due || next.is_some_and(|t| t <= now) {
            let mut sent = std::mem::take(&mut self.switch_sent);
            s.serve(now, &mut sent);
            next = s.poll_timeout();
            self.switch_frames += sent.len() as u64;
            for (port, frame) in sent.drain(..) {
                self.launch(node, port, frame);
            }
            self.switch_sent = sent;
        } else {
            // Nothing is due (a frame arrived for a busy port, say): the
            // turn's timers and port polls would change nothing and send
            // nothing, so only what the input reported is collected.
            s.drain(now);
        }
        // Anything due now was handled; a deadline not in the future would
        // only spin.
        self.arm_timer(node, next.map(|t| t.max(now + Duration::from_nanos(1))));
    }

    /// Starts a frame on the host's port if the transmitter is free, then
    /// re-arms the host's timer.
    fn service_host(&mut self, node: NodeId) {
        let now = self.now;
        let st = self.ports[node][0];
        if st.peer.is_some() && !st.busy {
            let mut buf = self.spare.pop().unwrap_or_default();
            let Node::Host(h) = &mut self.nodes[node] else {
                return;
            };
            match h.poll_transmit(now, &mut buf) {
                Some(tx) => {
                    let frame = SimFrame::new(buf, tx.priority, tx.control);
                    let ser = bits_time(frame.wire_bytes(), st.rate_bps);
                    let ps = &mut self.ports[node][0];
                    ps.busy = true;
                    ps.busy_until = now + ser;
                    self.events
                        .push(now + ser, Event::TxDone { node: node as u32 });
                    self.launch(node, 0, frame);
                }
                None => self.spare.push(buf),
            }
        }
        let Node::Host(h) = &self.nodes[node] else {
            return;
        };
        let mut next = h.poll_timeout(now);
        // A deadline inside the frame on the wire (the pacer, typically) is
        // served by the TxDone that ends the frame.
        let p = self.ports[node][0];
        if p.busy && next.is_some_and(|t| t <= p.busy_until) {
            next = None;
        }
        self.arm_timer(node, next.map(|t| t.max(now)));
    }

    /// Puts `frame` on the wire of `(node, port)`: counters, capture, and
    /// its arrival at the peer. A port without a cable sends into nothing.
    fn launch(&mut self, node: NodeId, port: u16, frame: SimFrame) {
        let now = self.now;
        if let Some((_, frames)) = self.captures.iter_mut().find(|(k, _)| *k == (node, port)) {
            frames.push((now, frame.bytes().to_vec()));
        }
        let ps = &mut self.ports[node][usize::from(port)];
        let Some((peer, peer_port)) = ps.peer else {
            self.spare.push(frame.into_bytes());
            return;
        };
        let ser = bits_time(frame.wire_bytes(), ps.rate_bps);
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
        let arrival = (now + ser + ps.delay).max(ps.last_arrival);
        ps.last_arrival = arrival;
        let slot = self.store(frame);
        self.events.push(
            arrival,
            Event::Arrive {
                node: peer as u32,
                port: peer_port,
                frame: slot,
            },
        );
    }

    fn arm_timer(&mut self, node: NodeId, want: Option<Instant>) {
        let Some(t) = want else {
            if self.timer_at[node].take().is_some() {
                self.stale_timers += 1;
            }
            return;
        };
        if self.timer_at[node].is_none_or(|cur| t < cur) {
            if self.timer_at[node].is_some() {
                self.stale_timers += 1;
            }
            self.timer_at[node] = Some(t);
            self.events.push(t, Event::Timer { node: node as u32 });
        }
    }

    /// The running counter behind a per-interval probe (bytes sent, CNPs
    /// received), else 0.
    fn probe_count(&self, p: &Probe) -> u64 {
        match *p {
            Probe::TxGbps { node, port } => self
                .port_counters(node, port)
                .map_or(0, |c| c.tx_bytes_total()),
            Probe::CnpRate { node } => self.qp_sum(node, |s| s.cnp_rx),
            Probe::GoodputGbps { node } => self.qp_sum(node, |s| s.rx_payload_bytes),
            _ => 0,
        }
    }

    /// `f` summed over the QPs of host `node` (0 for a switch).
    fn qp_sum(&self, node: NodeId, f: impl Fn(&crate::rnic::QpStats) -> u64) -> u64 {
        self.host(node).map_or(0, |h| {
            let r = h.rnic();
            r.qpns().filter_map(|q| r.qp_stats(q)).map(|s| f(&s)).sum()
        })
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
                Probe::Pg { node, port, pg, of } => self
                    .switch(node)
                    .and_then(|sw| sw.tm().pg_usage(port, pg))
                    .map_or(f64::NAN, |u| {
                        let bytes = match of {
                            PgFigure::Shared => u.shared_bytes,
                            PgFigure::XoffThreshold => u.xoff_threshold_bytes,
                            PgFigure::XonThreshold => u.xon_threshold_bytes,
                        };
                        bytes as f64 / 1000.0
                    }),
                Probe::QpRate { node, qpn } => self
                    .host(node)
                    .and_then(|h| h.rnic().qp_stats(qpn))
                    .map_or(f64::NAN, |q| q.rate_bps as f64 / 1e9),
                Probe::RetxMegabytes { node } => self.qp_sum(node, |s| s.retx_bytes) as f64 / 1e6,
                Probe::TxGbps { .. } | Probe::GoodputGbps { .. } => {
                    let b = self.probe_count(p);
                    let d = b.saturating_sub(s.last_counts[i]);
                    s.last_counts[i] = b;
                    d as f64 * 8.0 / secs / 1e9
                }
                Probe::CnpRate { .. } => {
                    let n = self.probe_count(p);
                    let d = n.saturating_sub(s.last_counts[i]);
                    s.last_counts[i] = n;
                    d as f64 / secs
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
