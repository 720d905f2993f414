//! `control`: roceswitch's gRPC control plane.
//!
//! * [`device`]: how services reach the dataplane. The dataplane thread owns
//!   the compiled pipeline and runs control-plane closures between packets;
//!   services send closures over a channel and await the reply, so the
//!   per-packet path never waits on a lock a writer holds.
//! * [`p4rt`]: the `p4.v1.P4Runtime` service (reference
//!   `p4runtime-subset.md`): arbitration, pipeline config, Write/Read with
//!   strict validation, packet I/O.
//! * [`fabric`]: the `roceswitch.fabric.v1.FabricQos` service: QoS intent
//!   (ports, maps, buffers, ECN, ETS, PFC watchdog), validated as a whole,
//!   persisted atomically, applied through a [`fabric::FabricBackend`].
//! * [`pausewatch`]: the live PFC deadlock view, client side (fabric
//!   events of one or more switches into one pause-dependency graph).

#![warn(missing_docs, unreachable_pub)]

pub mod client;
mod coalesce;
pub mod daemon;
pub mod device;
pub mod fabric;
pub mod metrics;
pub mod p4cli;
pub mod p4rt;
pub mod pausewatch;
pub mod serve;
pub mod switchd;
pub mod switchdev;
pub mod tls;
pub mod views;
