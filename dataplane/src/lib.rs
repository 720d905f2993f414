//! `dataplane`: the fixed-function half of the switch, as sans-IO cores.
//!
//! Every core here is a state machine driven by `(event, now)`; none reads a
//! clock or a socket. The same switch core ([`switch::Switch`]) runs on veth
//! ports in real time, in the deterministic simulator (`sim`) and under the
//! STF runner ([`stf`]).
//!
//! Feature `roce-program` (default): `roce_switch.p4` compiled in (`roce`)
//! and the simulator (`sim`). Without it the crate builds without the P4
//! compiler, for harnesses that bring their own program.
#![warn(missing_docs, unreachable_pub)]

pub mod dcbx;
pub mod deadlock;
pub mod driver;
pub mod fabric;
pub mod headroom;
pub mod mac;
pub mod port;
pub mod rnic;
#[cfg(feature = "roce-program")]
pub mod roce;
#[cfg(feature = "roce-program")]
pub mod sim;
pub mod stf;
pub mod switch;
pub mod time;
pub mod tm;
pub mod units;
pub mod watchdog;
pub mod wire;
