//! Back ends: Rust code and P4Info.
pub mod p4info;
pub mod rust;
