//! `roce_switch.p4` compiled into Rust at build time (see `build.rs`): the
//! switch's forwarding program as a [`p4_target::pipeline::Pipeline`].
//!
//! Port numbers, the CPU port (510) and the drop-reason counter indices are
//! the program's constants, mirrored here for drivers and tests.

#[allow(missing_docs, unreachable_pub, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/roce_switch.rs"));
}

pub use generated::{PROGRAM_INFO, Program};

/// The program's P4Info in protobuf text format.
pub const P4INFO_TEXT: &str = include_str!(concat!(env!("OUT_DIR"), "/roce_switch.p4info.txtpb"));

/// The program's P4Info in protobuf binary format.
pub const P4INFO_BINARY: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/roce_switch.p4info.bin"));

/// `CPU_PORT` in the program.
pub const CPU_PORT: u16 = 510;

/// Indices of the program's `drop_reason` counter (`DROP_*` constants).
pub mod drop_reason {
    /// Parser error (truncated header, bad IPv4 version/IHL, third VLAN tag).
    pub const PARSER_ERROR: u32 = 0;
    /// IPv4 header checksum wrong.
    pub const CHECKSUM: u32 = 1;
    /// TTL / hop limit would reach 0.
    pub const TTL_EXPIRED: u32 = 2;
    /// No route, or the next hop has no member.
    pub const NO_ROUTE: u32 = 3;
    /// Denied by the ACL.
    pub const ACL: u32 = 4;
    /// L2 destination unknown (never flooded).
    pub const UNKNOWN_L2_DST: u32 = 5;
}
