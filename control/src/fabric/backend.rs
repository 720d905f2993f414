//! The seam between the fabric service and the dataplane.
//!
//! Contract: [`FabricBackend::apply`] receives a configuration that has
//! already been validated as a whole, and either applies all of it or
//! returns an error having changed nothing observable. The daemon plugs in
//! [`super::SwitchBackend`] (traffic manager and fabric-owned P4 tables in
//! one dataplane job); [`MemoryBackend`] records what it was given and
//! serves counters a test sets, for tests and dataplane-less runs.

use std::sync::Mutex;

use super::config::FabricConfig;

/// Why the dataplane refused or failed a configuration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The dataplane cannot do this (e.g. more lossless priorities than it has).
    #[error("unsupported by the dataplane: {0}")]
    Unsupported(String),
    /// The dataplane is not reachable.
    #[error("dataplane unavailable: {0}")]
    Unavailable(String),
}

/// Monotonic counters of one (port, priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PriorityCounters {
    /// Port.
    pub port: u16,
    /// Priority.
    pub priority: u8,
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Packets dropped (all reasons).
    pub drops: u64,
    /// PFC frames received for this priority.
    pub pfc_rx_frames: u64,
    /// PFC frames sent for this priority.
    pub pfc_tx_frames: u64,
    /// Packets CE-marked.
    pub ecn_marked: u64,
    /// Watchdog storms detected.
    pub watchdog_storms: u64,
    /// Current egress queue depth.
    pub queue_depth_bytes: u64,
    /// Frames the kernel dropped on this port before the switch read them
    /// (port-wide, on priority 0; not in `drops`).
    pub kernel_drops: u64,
    /// Time received PFC held this egress priority paused, ns (measured on
    /// the switch clock, the current pause included).
    pub pause_rx_ns: u64,
    /// Time this ingress priority's PG asserted XOFF towards the peer, ns.
    pub pause_tx_ns: u64,
    /// Received pauses that ended (XOFF -> XON transitions).
    pub pause_rx_transitions: u64,
    /// Packets of this priority dropped on arrival at this ingress port.
    pub rx_drop_packets: u64,
    /// Packets of this priority dropped at this egress port's queue.
    pub tx_drop_packets: u64,
    /// Received PFC pauses this egress priority now.
    pub paused: bool,
    /// This ingress priority's PG asserts XOFF now.
    pub xoff: bool,
}

/// Counters of one egress (port, queue), as SAI names them
/// (`SAI_QUEUE_STAT_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct QueueCounters {
    /// Port.
    pub port: u16,
    /// Queue.
    pub queue: u8,
    /// Packets transmitted.
    pub packets: u64,
    /// Bytes transmitted.
    pub bytes: u64,
    /// Packets dropped at the queue.
    pub dropped_packets: u64,
    /// CE marks of the priorities mapped to this queue.
    pub ecn_marked_packets: u64,
    /// Depth now, bytes.
    pub depth_bytes: u64,
    /// Highest depth seen, bytes.
    pub watermark_bytes: u64,
}

/// Buffer use of one ingress (port, PG) (`SAI_INGRESS_PRIORITY_GROUP_STAT_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PgCounters {
    /// Port.
    pub port: u16,
    /// Priority group.
    pub pg: u8,
    /// Reserved bytes in use.
    pub reserved_bytes: u64,
    /// Shared-pool bytes in use.
    pub shared_bytes: u64,
    /// Headroom bytes in use.
    pub headroom_bytes: u64,
    /// Highest shared-pool use seen.
    pub shared_watermark_bytes: u64,
    /// Highest headroom use seen (`XOFF_ROOM_WATERMARK_BYTES`).
    pub xoff_room_watermark_bytes: u64,
    /// XOFF asserted now.
    pub xoff: bool,
    /// Shared bytes at which XOFF is asserted now (dynamic thresholds move
    /// with the free pool); 0 for a lossy PG.
    pub xoff_threshold_bytes: u64,
    /// Shared bytes at or below which XOFF is released now; 0 for a lossy PG.
    pub xon_threshold_bytes: u64,
}

/// Port-wide counters (the `ethtool -S` names are in [`crate::views::counters`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PortCounters {
    /// Port.
    pub port: u16,
    /// Interface name, when the daemon knows it.
    pub name: String,
    /// Frames dropped on arrival: malformed, over MTU, kernel ring, buffer.
    pub rx_discards_phy: u64,
    /// Packets dropped at the egress queues.
    pub tx_discards_phy: u64,
    /// Watchdog storms detected on the port's priorities.
    pub pause_storm_warning_events: u64,
    /// Of those, storms the watchdog broke (action drop or forward).
    pub pause_storm_error_events: u64,
    /// Data frames that arrived already CE-marked.
    pub rx_ecn_mark: u64,
    /// The link is down (interface gone, set down, or without carrier).
    pub oper_down: bool,
    /// Why, while down ("interface gone", ...).
    pub down_cause: String,
    /// Times the link went down.
    pub oper_down_events: u64,
    /// Times the link came back.
    pub oper_up_events: u64,
    /// RoCE security drops on this port, by reason.
    pub security_drops: SecurityDrops,
}

/// RoCE security drops of one port (`roce_switch.p4`'s
/// `roce_security_drops` counters; README "RoCE security").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SecurityDrops {
    /// RoCE v2 in from a source not on the port's allowlist.
    pub rocev2_source: u64,
    /// RoCE v1 in from a source not on the port's allowlist.
    pub rocev1_source: u64,
    /// RoCE in with a P_Key the port may not send.
    pub pkey_ingress: u64,
    /// RoCE out with a P_Key that does not match the port's partitions.
    pub pkey_egress: u64,
}

impl SecurityDrops {
    /// `(reason, drops)`, with the `reason` label Prometheus and `rocectl`
    /// use, in the program's `SEC_DROP_*` order.
    pub fn by_reason(&self) -> [(&'static str, u64); 4] {
        [
            ("rocev2_source", self.rocev2_source),
            ("rocev1_source", self.rocev1_source),
            ("pkey_ingress", self.pkey_ingress),
            ("pkey_egress", self.pkey_egress),
        ]
    }

    /// All reasons together.
    pub fn total(&self) -> u64 {
        self.by_reason().iter().map(|(_, n)| n).sum()
    }
}

/// Everything `GetCounters` returns, read in one dataplane job.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CounterSet {
    /// Per (port, priority), ordered.
    pub priorities: Vec<PriorityCounters>,
    /// Per (port, queue), ordered.
    pub queues: Vec<QueueCounters>,
    /// Per (port, PG), ordered.
    pub pgs: Vec<PgCounters>,
    /// Per port, ordered.
    pub ports: Vec<PortCounters>,
}

/// Which pause states hold now (the PFC deadlock view's starting state),
/// each as (port, priority), sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PauseSnapshot {
    /// Egress queues paused by PFC their peer sent.
    pub egress_paused: Vec<(u16, u8)>,
    /// Ingress PGs asserting XOFF toward their peer, per priority.
    pub ingress_xoff: Vec<(u16, u8)>,
    /// Queues the PFC watchdog holds in a storm.
    pub storms: Vec<(u16, u8)>,
}

/// What the fabric service needs from the dataplane.
pub trait FabricBackend: Send + Sync + 'static {
    /// Applies a validated configuration, all or nothing.
    fn apply(&self, config: &FabricConfig) -> Result<(), BackendError>;
    /// Counters of `ports` (all ports when empty), ordered by (port, priority).
    fn counters(&self, ports: &[u16]) -> Vec<PriorityCounters>;
    /// The whole counter set of `ports` (all when empty): priorities,
    /// queues, PGs and port-wide counters, read at one instant.
    fn counter_set(&self, ports: &[u16]) -> CounterSet {
        CounterSet {
            priorities: self.counters(ports),
            ..CounterSet::default()
        }
    }
    /// Switch-wide counters (frames, controller traffic, digests, drops by
    /// reason), if this backend fronts a switch.
    fn switch_stats(&self) -> Option<dataplane::switch::SwitchStats> {
        None
    }
    /// Where every frame went, per ingress port and priority (the
    /// conservation ledger), if this backend fronts a switch.
    fn ledger(&self) -> Option<dataplane::switch::Ledger> {
        None
    }
    /// Which queues are paused, which PGs assert XOFF, which queues are in
    /// a watchdog storm, now (empty without a switch).
    fn pause_state(&self) -> PauseSnapshot {
        PauseSnapshot::default()
    }
    /// Each port's LLDP/DCBX agent (ports without one are left out).
    fn dcbx(&self) -> Vec<(u16, dataplane::dcbx::PortAgent)> {
        Vec::new()
    }
    /// Starts tracing the packets `request` selects (`None`: stops). The
    /// traces arrive on [`FabricBackend::trace_tap`].
    fn set_trace(
        &self,
        request: Option<dataplane::switch::TraceRequest>,
    ) -> Result<(), BackendError> {
        let _ = request;
        Err(BackendError::Unsupported(
            "packet traces need a running switch".into(),
        ))
    }
    /// Where the switch's finished traces arrive, if it traces.
    fn trace_tap(&self) -> Option<&TraceTap> {
        None
    }
}

/// The control plane's end of the dataplane's trace queue: the dataplane
/// thread `try_send`s each finished trace into a bounded channel and counts
/// the ones that did not fit; one reader at a time takes them.
#[derive(Debug)]
pub struct TraceTap {
    /// Finished traces, oldest first.
    pub traces: Mutex<std::sync::mpsc::Receiver<p4_target::trace::PacketTrace>>,
    /// Traces dropped because the channel was full.
    pub dropped: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// A reader holds the tap.
    pub busy: std::sync::atomic::AtomicBool,
}

impl TraceTap {
    /// A tap with room for `capacity` traces, and the sink the driver
    /// calls on the dataplane thread ([`dataplane::driver::Driver::with_trace_sink`]).
    pub fn new(capacity: usize) -> (Self, dataplane::driver::TraceSink) {
        let (tx, rx) = std::sync::mpsc::sync_channel(capacity);
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = dropped.clone();
        let sink: dataplane::driver::TraceSink = Box::new(move |trace| {
            if tx.try_send(trace).is_err() {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        (
            TraceTap {
                traces: Mutex::new(rx),
                dropped,
                busy: std::sync::atomic::AtomicBool::new(false),
            },
            sink,
        )
    }
}

/// A backend without a dataplane: remembers applied configurations.
#[derive(Debug, Default)]
pub struct MemoryBackend {
    applied: Mutex<Vec<FabricConfig>>,
    counters: Mutex<Vec<PriorityCounters>>,
    extra: Mutex<CounterSet>,
    refuse: Mutex<Option<BackendError>>,
}

impl MemoryBackend {
    /// Configurations applied so far, oldest first.
    pub fn applied(&self) -> Vec<FabricConfig> {
        self.applied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sets the counters `counters()` reports.
    pub fn set_counters(&self, counters: Vec<PriorityCounters>) {
        *self.counters.lock().unwrap_or_else(|e| e.into_inner()) = counters;
    }

    /// Sets the queue, PG and port rows `counter_set()` reports (its
    /// `priorities` replace those of [`Self::set_counters`]).
    pub fn set_counter_set(&self, set: CounterSet) {
        self.set_counters(set.priorities.clone());
        *self.extra.lock().unwrap_or_else(|e| e.into_inner()) = set;
    }

    /// Makes the next `apply` calls fail with `e` (None: succeed again).
    pub fn refuse_with(&self, e: Option<BackendError>) {
        *self.refuse.lock().unwrap_or_else(|e| e.into_inner()) = e;
    }
}

impl FabricBackend for MemoryBackend {
    fn apply(&self, config: &FabricConfig) -> Result<(), BackendError> {
        if let Some(e) = self
            .refuse
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Err(e);
        }
        self.applied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(config.clone());
        Ok(())
    }

    fn counters(&self, ports: &[u16]) -> Vec<PriorityCounters> {
        let mut v: Vec<_> = self
            .counters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|c| ports.is_empty() || ports.contains(&c.port))
            .copied()
            .collect();
        v.sort_by_key(|c| (c.port, c.priority));
        v
    }

    fn counter_set(&self, ports: &[u16]) -> CounterSet {
        let extra = self.extra.lock().unwrap_or_else(|e| e.into_inner());
        let keep = |p: u16| ports.is_empty() || ports.contains(&p);
        CounterSet {
            priorities: self.counters(ports),
            queues: extra
                .queues
                .iter()
                .filter(|q| keep(q.port))
                .copied()
                .collect(),
            pgs: extra.pgs.iter().filter(|g| keep(g.port)).copied().collect(),
            ports: extra
                .ports
                .iter()
                .filter(|p| keep(p.port))
                .cloned()
                .collect(),
        }
    }
}
