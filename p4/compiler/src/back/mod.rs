//! Back ends: Rust code ([`rust`]) and P4Info ([`p4info`]). Both take the
//! checked IR and its `ProgramInfo`, never unchecked input.
pub mod p4info;
pub mod rust;
