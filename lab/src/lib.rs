//! `lab`: everything that runs roceswitch on real veth links.
//!
//! - [`port`]: batched `AF_PACKET` port I/O on an interface, plus in-memory
//!   ports for tests (it lives in `dataplane::port`, shared with the switch).
//! - [`perf`]: the RoCE host agent behind `roceperf`: a thin real-time
//!   driver around the sans-IO [`dataplane::rnic::Rnic`], with
//!   ib_write_bw-style reports.
//! - [`topo`] and [`labctl`]: namespace labs behind `rocelab`: a topology
//!   file, bringing it up with `ip`, recording what was made in a state file,
//!   and tearing it down again (also after a crash).
//! - [`bringup`]: `rocelab up` of a topology whose switches run
//!   roceswitch: daemons started and programmed before the hosts start.
//! - [`fabric`]: what each switch of a topology is told (ports, QoS,
//!   shortest-path ECMP routes), the same for a namespace lab and the
//!   simulator.
//! - [`scenario`]: the embedded default scenario of `rocelab run` (incast
//!   and ECMP) on namespaces or in the simulator, with its verdicts.
//! - [`watch`]: `rocelab watch`, the live PFC deadlock view of a lab.
//! - [`bench`]: test frames and route churn of the bench binaries.
//!
//! Binaries: `roceperf`, `rocelab`, `relaybench`.
#![warn(missing_docs, unreachable_pub)]

pub mod bench;
pub mod bringup;
pub mod fabric;
pub mod labctl;
pub mod perf;
pub use dataplane::port;
pub mod scenario;
pub mod signal;
pub mod topo;
pub mod watch;
/// The units parser/printer lives with the switch core so the daemon and
/// `rocectl` read `--speed` exactly as the lab does.
pub use dataplane::units;
