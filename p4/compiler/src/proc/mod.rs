//! Shared analyses used by more than one stage: P4Runtime id assignment
//! ([`ids`]) and Rust identifier naming ([`namer`]).
pub mod ids;
pub mod namer;
