//! The traffic manager: shared-buffer admission, PFC generation and
//! reception, per-priority egress queues, scheduling, shaping and the PFC
//! watchdog, for N ports, as a sans-IO state machine.
//!
//! Contract: [`Tm`] never reads a clock or a socket; every input carries
//! `now`, which must not go backwards (an earlier `now` is treated as "no
//! time passed"). It is generic over the queued payload `T` (the simulator
//! queues its own packet struct, the switch queues parsed packets). The
//! per-packet path ([`Tm::handle_enqueue`], [`Tm::poll_transmit`]) is O(1)
//! and allocates nothing, nor does a watchdog flush: queued packets live in
//! one store of slots reserved when the TM is built, sized from the buffer
//! accounting (`buffer_bytes / cell_bytes`, the most packets it can admit),
//! and the queues are FIFO lists of slot indices through it, as an ASIC's
//! queues are descriptor lists over its cell buffer (module `arena`). Bad
//! input (unknown port, priority > 7) is a counted drop, never a panic.
//!
//! Units: bytes (buffer accounting is cell-granular: every packet is charged
//! `ceil(len / cell) · cell` bytes), bits per second, [`crate::time::Instant`] in ns.
//!
//! Rules implemented (reference `roce-semantics.md`):
//! - admission R-BUF-1/2 per (ingress port, PG): reserved, then shared under
//!   the dynamic/static threshold (R-DT-1..3, pool = buffer − Σreserved −
//!   Σheadroom), then headroom for lossless PGs; lossy PGs tail-drop;
//!   egress limits per (port, queue) for lossy traffic only (R-DT-5). Buffer
//!   is released headroom first, then shared, then reserved (as HPCC does).
//! - PFC generation R-PFC-TX-1/2/4/5: XOFF after an admission when headroom
//!   is in use or shared ≥ T; XON after a dequeue when headroom is empty and
//!   shared is 0 or shared + resume_offset ≤ T (or total ≤ the PG's XON
//!   floor, R-PFC-TX-3 project choice); XOFF is refreshed every
//!   Q_xoff/2 quanta, at most [`config::XOFF_REFRESH_MAX`] apart, while it
//!   holds (so the watchdog sees new PFC frames every poll on slow ports
//!   too); frames are sent ahead of data.
//! - PFC reception R-PFC-RX-1..4, 6: pause an egress priority for q·512 bit
//!   times from reception, replacing any earlier time; q = 0 resumes;
//!   priorities without PFC enabled ignore it; legacy PAUSE pauses all
//!   priorities only if the port honours it (R-PFC-FMT-6).
//! - scheduler: see [`sched`]; shaper: see [`shaper`].
//! - ECN: queue depths are reported at enqueue and after dequeue (R-ECN-4);
//!   the P4 egress program marks on them (`roce_switch.p4`'s `ecn_red`).
//! - watchdog R-WD-1..12 via [`crate::watchdog`], polled from
//!   [`Tm::handle_timeout`].
//! - shared headroom pool R-PFC-TX-6 when `shp_over_subscribe_ratio` is set.
//!
//! Choices where the reference leaves room (README material):
//! - A PG is lossless iff a PFC-enabled priority maps to it; its headroom is
//!   the configured `headroom_bytes`, else the R-HR-2 result for the port's
//!   speed, cable length and MTU.
//! - The XON floor (`xon_bytes`, R-PFC-TX-3) is an *extra* way to resume
//!   (total PG usage ≤ floor), on top of the R-PFC-TX-2 rule.
//! - PFC frames obey the port shaper like data (they wait for the frame in
//!   flight, as on a wire), but go before any queued data. An XOFF refresh
//!   re-evaluates XON first, so a PG whose threshold rose through other
//!   PGs draining still resumes.
//! - Watchdog `Forward`/`Drop` on (port, p) also suppress PFC *generation*
//!   for p on that port; `Drop` discards queued packets of p (counted as
//!   `WatchdogDrop` on the egress side, so they show in the storm's TX DROP)
//!   and arrivals of p both entering and leaving the port.
//! - Drops are attributed as described in [`stats`].
//!
//! Timers are a table, as quinn keeps them: each port caches its earliest
//! deadline (PFC refresh, pause expiry, shaper release), refreshed after
//! every input that touches the port, so [`Tm::poll_timeout`] is a minimum
//! over one entry per port and [`Tm::handle_timeout`] visits only the ports
//! that are due. A frame's wire cost (shaper) is
//! [`crate::wire::ethernet::wire_len`]: padded to 60 bytes, plus the port's
//! overhead, the same formula the simulator's links use.

mod arena;
pub mod budget;
pub mod config;
pub mod sched;
pub mod shaper;
pub mod stats;

mod engine;

pub use self::budget::{BudgetVerdict, BufferBudget};
pub use self::config::{
    ConfigError, ConfigProblem, PgConfig, PortConfig, QueueConfig, SchedMode, Threshold, TmConfig,
};
pub use self::engine::{Dequeued, EnqueueInfo, EnqueueMeta, PgUsage, Refused, Timer, Tm, TmEvent};
pub use self::stats::{DropCounts, DropReason, PortStats, PrioStats, QueueStats};

#[cfg(test)]
mod tests;
