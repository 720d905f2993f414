//! `dataplane`: the fixed-function half of the switch, as sans-IO cores.
//!
//! Every core here is a state machine driven by `(event, now)`; none reads a
//! clock or a socket. The same code runs on veth ports in real time and in
//! the deterministic simulator ([`sim`]).
#![warn(missing_docs, unreachable_pub)]

pub mod driver;
pub mod fabric;
pub mod headroom;
pub mod mac;
pub mod port;
pub mod rnic;
pub mod roce;
pub mod sim;
pub mod switch;
pub mod time;
pub mod tm;
pub mod watchdog;
pub mod wire;
