//! Traffic-manager counters: drop reasons and plain `Default + Copy` stats
//! structs per (port, priority) and per (port, queue).
//!
//! Contract: every counter is a monotonic `u64`. Drops are counted in an
//! array indexed by [`DropReason`], so adding a reason cannot leave it
//! uncounted. Attribution: ingress drops (`LossyTailDrop`,
//! `HeadroomOverflow`, `WatchdogDrop` on arrival) count on the *ingress*
//! (port, priority); egress drops (`EgressLimit`, `WatchdogDrop` of queued
//! packets) on the *egress* (port, priority). `InvalidMetadata` has no valid
//! port and is only in the global [`DropCounts`]. PFC names follow
//! `struct ieee_pfc` (R-PFC-RX-6): "requests" sent, "indications" received.

use core::ops::Index;

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Lossy PG past its shared threshold (R-BUF-1).
    LossyTailDrop,
    /// Lossy packet over its egress queue limit (R-DT-5).
    EgressLimit,
    /// Lossless PG with shared and headroom exhausted (R-BUF-2): headroom sized wrong.
    HeadroomOverflow,
    /// Discarded by the PFC watchdog drop action (R-WD-9).
    WatchdogDrop,
    /// Enqueue metadata named a port or priority that does not exist.
    InvalidMetadata,
}

impl DropReason {
    /// Number of reasons (size of counter arrays).
    pub const COUNT: usize = 5;
    /// Every reason, in index order.
    pub const ALL: [DropReason; DropReason::COUNT] = [
        DropReason::LossyTailDrop,
        DropReason::EgressLimit,
        DropReason::HeadroomOverflow,
        DropReason::WatchdogDrop,
        DropReason::InvalidMetadata,
    ];
    /// Index into counter arrays.
    pub const fn index(self) -> usize {
        self as usize
    }
    /// A stable snake_case name (for logs and the control plane).
    pub const fn name(self) -> &'static str {
        match self {
            DropReason::LossyTailDrop => "lossy_tail_drop",
            DropReason::EgressLimit => "egress_limit",
            DropReason::HeadroomOverflow => "headroom_overflow",
            DropReason::WatchdogDrop => "watchdog_drop",
            DropReason::InvalidMetadata => "invalid_metadata",
        }
    }
}

/// Drop counters indexed by [`DropReason`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropCounts(pub [u64; DropReason::COUNT]);

impl DropCounts {
    /// Count one drop.
    pub fn add(&mut self, reason: DropReason) {
        self.0[reason.index()] += 1;
    }
    /// Sum over reasons.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

impl Index<DropReason> for DropCounts {
    type Output = u64;
    fn index(&self, reason: DropReason) -> &u64 {
        &self.0[reason.index()]
    }
}

/// Counters for one (port, priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrioStats {
    /// Packets of this priority admitted on this ingress port.
    pub rx_packets: u64,
    /// Their bytes.
    pub rx_bytes: u64,
    /// Packets of this priority transmitted on this egress port.
    pub tx_packets: u64,
    /// Their bytes.
    pub tx_bytes: u64,
    /// Drops by reason (see the module doc for attribution).
    pub drops: DropCounts,
    /// Packets of this priority dropped on arrival at this ingress port.
    pub rx_drop_packets: u64,
    /// Packets of this priority dropped at this egress port's queue.
    pub tx_drop_packets: u64,
    /// PFC frames sent with this priority enabled ("requests").
    pub pfc_tx_frames: u64,
    /// PFC frames received with this priority enabled ("indications").
    pub pfc_rx_frames: u64,
    /// Total time this egress priority was paused by received PFC, ns.
    pub pause_rx_ns: u64,
    /// Total time this ingress priority's PG asserted XOFF towards the
    /// neighbour (XOFF sent until XON sent), ns; measured from `now`.
    pub pause_tx_ns: u64,
    /// XOFF→XON transitions of the received pause state.
    pub pause_rx_xoff_to_xon: u64,
    /// Largest depth, in bytes, of this priority's egress queue on this port
    /// seen at an enqueue of this priority.
    pub max_queue_bytes: u64,
    /// XOFF frames generated for this priority (incl. refreshes).
    pub xoff_tx_frames: u64,
    /// XON frames generated for this priority.
    pub xon_tx_frames: u64,
}

/// Counters for one egress (port, queue).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Packets enqueued.
    pub enq_packets: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Packets dropped at this queue (egress limit, watchdog flush/arrivals).
    pub drop_packets: u64,
    /// Largest depth seen, bytes.
    pub max_depth_bytes: u64,
    /// Largest depth seen, packets.
    pub max_depth_packets: u64,
}

/// Per-port MAC-control counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Legacy PAUSE frames received.
    pub pause_rx_frames: u64,
    /// Legacy PAUSE frames ignored because the port does not honour PAUSE.
    pub pause_rx_ignored: u64,
    /// MAC-control frames with an unknown opcode.
    pub mac_control_unknown: u64,
    /// PFC frames sent.
    pub pfc_tx_frames: u64,
    /// PFC frames received.
    pub pfc_rx_frames: u64,
}
