//! The PFC pause-dependency graph: which buffer waits for which across a
//! fabric, its cycles (a cyclic buffer dependency is a deadlock in the
//! making, roce-semantics §12; ATSCALE §4.2), and a timeline of pause
//! states per link.
//!
//! Vertices are (node, port, priority, side): the **egress** queue of a
//! port, or the **ingress** priority group of a port. "Waits for" edges:
//! - an egress queue paused by PFC its link peer sent waits for that
//!   peer's ingress PG of the same priority (the peer asserts XOFF because
//!   that PG is full);
//! - an ingress PG asserting XOFF toward its neighbour waits for every
//!   paused egress queue of the same priority on its own switch (its bytes
//!   can only leave through them). This is the routing-blind reading: it
//!   may add an edge to an egress that holds none of the PG's bytes, so a
//!   reported cycle is a cycle of pauses that *can* be a deadlock; every
//!   real cyclic buffer dependency is reported.
//!
//! An egress queue the PFC watchdog has declared a storm on no longer
//! waits (it ignores the pause or drops), so a storm removes its edge
//! until the restore: that is the watchdog breaking the cycle.
//!
//! Contract: sans-IO; every input comes with its `now` ([`Instant`], ns,
//! from whatever clock the feeder uses: simulated time, or wall-clock ns
//! since the first event for a live fabric). Inputs name the node that saw
//! them; links are added before or while inputs arrive. Cycles are found
//! again after each input that changes an edge (Tarjan's SCC, linear in
//! the graph, which has a handful of vertices per port). Nothing panics;
//! everything allocates (this is control-plane work, off the packet path).

mod svg;

pub use svg::{render_svg, write_svg};

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::time::Instant;
use crate::tm::TmEvent;

/// A port of a node (switch or host) of the fabric.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortId {
    /// Node name (`s0`, `leaf1`, `h2`).
    pub node: String,
    /// Port number on that node (0 for a host's one port).
    pub port: u16,
}

impl PortId {
    /// `node:p<port>`.
    pub fn new(node: impl Into<String>, port: u16) -> Self {
        PortId {
            node: node.into(),
            port,
        }
    }
}

impl fmt::Display for PortId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:p{}", self.node, self.port)
    }
}

/// Which buffer of a port a vertex is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The ingress priority group (asserts XOFF toward the peer).
    Ingress,
    /// The egress queue (paused by the peer's PFC).
    Egress,
}

/// A vertex of the graph: one buffer of one port for one priority.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Vertex {
    /// The port.
    pub port: PortId,
    /// The priority (0..=7).
    pub priority: u8,
    /// Ingress PG or egress queue.
    pub side: Side,
}

impl fmt::Display for Vertex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = match self.side {
            Side::Ingress => "in",
            Side::Egress => "out",
        };
        write!(f, "{} {side} prio {}", self.port, self.priority)
    }
}

/// One change a node reports about its own ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseInput {
    /// The egress queue (`port`, `priority`) started or stopped being
    /// paused by PFC received from the port's peer.
    EgressPaused {
        /// Port.
        port: u16,
        /// Priority.
        priority: u8,
        /// Paused from now on.
        paused: bool,
    },
    /// The ingress PG of `port` started or stopped asserting XOFF toward
    /// the port's peer for `priorities` (bit i = priority i).
    IngressXoff {
        /// Port.
        port: u16,
        /// Priorities of the PG's PFC frames.
        priorities: u8,
        /// XOFF asserted from now on (false: XON sent).
        asserted: bool,
    },
    /// The PFC watchdog declared a storm on (`port`, `priority`) or
    /// restored it.
    Watchdog {
        /// Port.
        port: u16,
        /// Priority.
        priority: u8,
        /// Storm from now on (false: restored).
        storm: bool,
    },
}

impl PauseInput {
    /// The input a traffic-manager event carries, if any.
    pub fn from_tm(e: &TmEvent) -> Option<Self> {
        Some(match *e {
            TmEvent::PauseRxStarted { port, priority } => PauseInput::EgressPaused {
                port,
                priority,
                paused: true,
            },
            TmEvent::PauseRxEnded { port, priority } => PauseInput::EgressPaused {
                port,
                priority,
                paused: false,
            },
            TmEvent::XoffSent {
                port, priorities, ..
            } => PauseInput::IngressXoff {
                port,
                priorities,
                asserted: true,
            },
            TmEvent::XonSent {
                port, priorities, ..
            } => PauseInput::IngressXoff {
                port,
                priorities,
                asserted: false,
            },
            TmEvent::StormDetected { port, priority, .. } => PauseInput::Watchdog {
                port,
                priority,
                storm: true,
            },
            TmEvent::StormRestored { port, priority, .. } => PauseInput::Watchdog {
                port,
                priority,
                storm: false,
            },
            TmEvent::HeadroomOverflow { .. } => return None,
        })
    }
}

/// What a timeline row records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StateKind {
    /// The egress queue is paused by its peer.
    EgressPaused,
    /// The ingress PG asserts XOFF toward its peer.
    IngressXoff,
    /// The watchdog holds a storm on the queue.
    Storm,
}

/// A time span; `end` is `None` while it lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Start.
    pub start: Instant,
    /// End, if it ended.
    pub end: Option<Instant>,
}

/// One row of the timeline: a state of one (port, priority) over time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The port.
    pub port: PortId,
    /// The priority.
    pub priority: u8,
    /// The state.
    pub kind: StateKind,
    /// When it held, oldest first.
    pub spans: Vec<Span>,
}

/// A cycle of the graph, starting at its smallest egress vertex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    /// The vertices in "waits for" order; the last waits for the first.
    pub vertices: Vec<Vertex>,
}

impl Cycle {
    /// The links the cycle crosses, as (paused egress port, the peer port
    /// whose XOFF pauses it), in cycle order.
    pub fn links(&self) -> Vec<(PortId, PortId)> {
        let n = self.vertices.len();
        (0..n)
            .filter_map(|i| {
                let (a, b) = (&self.vertices[i], &self.vertices[(i + 1) % n]);
                (a.side == Side::Egress && b.side == Side::Ingress)
                    .then(|| (a.port.clone(), b.port.clone()))
            })
            .collect()
    }

    /// `s0:p1 -> s1:p2, s1:p1 -> s2:p2, s2:p1 -> s0:p2 (priority 3)`.
    pub fn describe(&self) -> String {
        let links: Vec<String> = self
            .links()
            .iter()
            .map(|(a, b)| format!("{a} -> {b}"))
            .collect();
        let prios: BTreeSet<u8> = self.vertices.iter().map(|v| v.priority).collect();
        let prios: Vec<String> = prios.iter().map(u8::to_string).collect();
        format!("{} (priority {})", links.join(", "), prios.join(","))
    }
}

/// When a cycle (named by [`Cycle::describe`]) existed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleSpan {
    /// The cycle.
    pub cycle: Cycle,
    /// When it formed and, if it did, broke.
    pub span: Span,
}

/// A watchdog event, kept as a timeline marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    /// When.
    pub at: Instant,
    /// Where.
    pub port: PortId,
    /// Priority.
    pub priority: u8,
    /// Storm (true) or restore.
    pub storm: bool,
}

/// The lab-wide pause-dependency graph with its history.
#[derive(Clone, Debug, Default)]
pub struct PauseGraph {
    peers: BTreeMap<PortId, PortId>,
    /// Current state per (port, priority, kind), and its timeline row index.
    state: BTreeMap<(PortId, u8, StateKind), usize>,
    rows: Vec<Row>,
    cycles: Vec<Cycle>,
    history: Vec<CycleSpan>,
    markers: Vec<Marker>,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl PauseGraph {
    /// An empty graph (no links, nothing paused).
    pub fn new() -> Self {
        Self::default()
    }

    /// Cables `a` to `b` (both directions).
    pub fn add_link(&mut self, a: PortId, b: PortId) {
        self.peers.insert(a.clone(), b.clone());
        self.peers.insert(b, a);
    }

    /// The port at the other end of `p`'s link, if known.
    pub fn peer(&self, p: &PortId) -> Option<&PortId> {
        self.peers.get(p)
    }

    /// Every link once, as (smaller end, larger end).
    pub fn links(&self) -> Vec<(PortId, PortId)> {
        self.peers
            .iter()
            .filter(|(a, b)| a < b)
            .map(|(a, b)| (a.clone(), b.clone()))
            .collect()
    }

    /// Applies what `node` reported at `now`. Returns true if the set of
    /// cycles changed.
    pub fn handle(&mut self, node: &str, input: PauseInput, now: Instant) -> bool {
        self.first.get_or_insert(now);
        self.last = Some(self.last.map_or(now, |l| l.max(now)));
        match input {
            PauseInput::EgressPaused {
                port,
                priority,
                paused,
            } => self.set(
                PortId::new(node, port),
                priority,
                StateKind::EgressPaused,
                paused,
                now,
            ),
            PauseInput::IngressXoff {
                port,
                priorities,
                asserted,
            } => {
                for p in (0..8u8).filter(|p| priorities & (1 << p) != 0) {
                    self.set(
                        PortId::new(node, port),
                        p,
                        StateKind::IngressXoff,
                        asserted,
                        now,
                    );
                }
            }
            PauseInput::Watchdog {
                port,
                priority,
                storm,
            } => {
                self.markers.push(Marker {
                    at: now,
                    port: PortId::new(node, port),
                    priority,
                    storm,
                });
                self.set(
                    PortId::new(node, port),
                    priority,
                    StateKind::Storm,
                    storm,
                    now,
                );
            }
        }
        self.update_cycles(now)
    }

    /// Marks the end of observation at `now` (moves the timeline's end).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.first.get_or_insert(now);
        self.last = Some(self.last.map_or(now, |l| l.max(now)));
    }

    fn set(&mut self, port: PortId, priority: u8, kind: StateKind, on: bool, now: Instant) {
        let key = (port.clone(), priority, kind);
        let row = match self.state.get(&key) {
            Some(&r) => r,
            None => {
                if !on {
                    return;
                }
                self.rows.push(Row {
                    port,
                    priority,
                    kind,
                    spans: Vec::new(),
                });
                self.state.insert(key, self.rows.len() - 1);
                self.rows.len() - 1
            }
        };
        let spans = &mut self.rows[row].spans;
        let open = spans.last().is_some_and(|s| s.end.is_none());
        match (on, open) {
            (true, false) => spans.push(Span {
                start: now,
                end: None,
            }),
            (false, true) => {
                if let Some(s) = spans.last_mut() {
                    s.end = Some(now);
                }
            }
            _ => {}
        }
    }

    fn is_on(&self, port: &PortId, priority: u8, kind: StateKind) -> bool {
        self.state
            .get(&(port.clone(), priority, kind))
            .is_some_and(|&r| self.rows[r].spans.last().is_some_and(|s| s.end.is_none()))
    }

    /// The current "waits for" edges, sorted.
    pub fn edges(&self) -> Vec<(Vertex, Vertex)> {
        let mut out = Vec::new();
        let on = |kind| {
            self.state
                .keys()
                .filter(move |(p, prio, k)| *k == kind && self.is_on(p, *prio, kind))
        };
        for (port, prio, _) in on(StateKind::EgressPaused) {
            if self.is_on(port, *prio, StateKind::Storm) {
                continue;
            }
            let from = Vertex {
                port: port.clone(),
                priority: *prio,
                side: Side::Egress,
            };
            // A peer we do not know (one switch watched alone) still
            // gets a vertex: the pause came from somewhere.
            let peer = self.peers.get(port).cloned().unwrap_or_else(|| PortId {
                node: format!("peer of {port}"),
                port: 0,
            });
            out.push((
                from.clone(),
                Vertex {
                    port: peer,
                    priority: *prio,
                    side: Side::Ingress,
                },
            ));
        }
        for (port, prio, _) in on(StateKind::IngressXoff) {
            for (eport, eprio, _) in on(StateKind::EgressPaused) {
                if eport.node == port.node
                    && eport != port
                    && eprio == prio
                    && !self.is_on(eport, *eprio, StateKind::Storm)
                {
                    out.push((
                        Vertex {
                            port: port.clone(),
                            priority: *prio,
                            side: Side::Ingress,
                        },
                        Vertex {
                            port: eport.clone(),
                            priority: *eprio,
                            side: Side::Egress,
                        },
                    ));
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The cycles now, one per strongly connected component, sorted.
    pub fn cycles(&self) -> &[Cycle] {
        &self.cycles
    }

    /// Every cycle seen and when it held, in order of forming.
    pub fn history(&self) -> &[CycleSpan] {
        &self.history
    }

    /// The timeline rows, in order of first appearance.
    pub fn timeline(&self) -> &[Row] {
        &self.rows
    }

    /// Watchdog storms and restores, in order.
    pub fn markers(&self) -> &[Marker] {
        &self.markers
    }

    /// The first and last instants the graph was told about.
    pub fn time_range(&self) -> Option<(Instant, Instant)> {
        Some((self.first?, self.last?))
    }

    fn update_cycles(&mut self, now: Instant) -> bool {
        let next = find_cycles(&self.edges());
        if next == self.cycles {
            return false;
        }
        for c in &self.cycles {
            if !next.contains(c)
                && let Some(h) = self
                    .history
                    .iter_mut()
                    .rev()
                    .find(|h| h.cycle == *c && h.span.end.is_none())
            {
                h.span.end = Some(now);
            }
        }
        for c in &next {
            if !self.cycles.contains(c) {
                self.history.push(CycleSpan {
                    cycle: c.clone(),
                    span: Span {
                        start: now,
                        end: None,
                    },
                });
            }
        }
        self.cycles = next;
        true
    }

    /// A few lines for a terminal: the cycles (or "no cycle"), then every
    /// edge.
    pub fn describe(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        if self.cycles.is_empty() {
            s.push_str("no cycle\n");
        }
        for c in &self.cycles {
            let _ = writeln!(s, "CYCLE {}", c.describe());
        }
        let edges = self.edges();
        if edges.is_empty() {
            s.push_str("nothing paused\n");
        }
        for (a, b) in edges {
            let _ = writeln!(s, "  {a} waits for {b}");
        }
        s
    }
}

/// One cycle per non-trivial strongly connected component of `edges`
/// (Tarjan), each rotated to start at its smallest egress vertex.
pub fn find_cycles(edges: &[(Vertex, Vertex)]) -> Vec<Cycle> {
    let verts: Vec<&Vertex> = edges
        .iter()
        .flat_map(|(a, b)| [a, b])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let id = |v: &Vertex| verts.binary_search(&v).unwrap_or(0);
    let mut adj = vec![Vec::new(); verts.len()];
    for (a, b) in edges {
        adj[id(a)].push(id(b));
    }
    let mut cycles = Vec::new();
    for comp in tarjan(&adj) {
        let self_loop = comp.len() == 1 && adj[comp[0]].contains(&comp[0]);
        if comp.len() < 2 && !self_loop {
            continue;
        }
        let inside: BTreeSet<usize> = comp.iter().copied().collect();
        // Start from the smallest egress vertex (else the smallest).
        let start = *comp
            .iter()
            .min_by_key(|&&i| (verts[i].side != Side::Egress, verts[i]))
            .unwrap_or(&comp[0]);
        if let Some(path) = cycle_through(&adj, &inside, start) {
            cycles.push(Cycle {
                vertices: path.into_iter().map(|i| verts[i].clone()).collect(),
            });
        }
    }
    cycles.sort_by(|a, b| a.vertices.cmp(&b.vertices));
    cycles
}

/// The shortest cycle from `start` back to itself inside `inside` (BFS).
fn cycle_through(adj: &[Vec<usize>], inside: &BTreeSet<usize>, start: usize) -> Option<Vec<usize>> {
    let mut prev = vec![usize::MAX; adj.len()];
    let mut queue = std::collections::VecDeque::from([start]);
    let mut seen = BTreeSet::from([start]);
    while let Some(u) = queue.pop_front() {
        for &w in &adj[u] {
            if !inside.contains(&w) {
                continue;
            }
            if w == start {
                let mut path = vec![u];
                let mut x = u;
                while x != start {
                    x = prev[x];
                    path.push(x);
                }
                path.reverse();
                return Some(path);
            }
            if seen.insert(w) {
                prev[w] = u;
                queue.push_back(w);
            }
        }
    }
    None
}

/// Tarjan's strongly connected components, iteratively.
fn tarjan(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = adj.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut comps = Vec::new();
    let mut next = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // (vertex, next edge to look at)
        let mut work = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut ei)) = work.last_mut() {
            if let Some(&w) = adj[v].get(*ei) {
                *ei += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    comps.push(comp);
                }
            }
        }
    }
    comps
}

#[cfg(test)]
mod tests;
