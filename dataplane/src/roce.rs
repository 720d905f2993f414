//! `roce_switch.p4` compiled into Rust at build time (see `build.rs`): the
//! switch's forwarding program as a [`p4_target::pipeline::Pipeline`].
//!
//! The program's `const`s (the CPU port, the `DROP_*` indices of its
//! `drop_reason` counter, EtherTypes, ...) and the index and P4Info id of
//! each table, counter, register, ... are re-exported from the generated
//! code, so they cannot drift from the P4 source (naming rules:
//! `p4_compiler::back::rust::consts`).

#[allow(missing_docs, unreachable_pub, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/roce_switch.rs"));
}

pub use generated::consts::*;
pub use generated::{
    PROGRAM_INFO, Program, action_profiles, actions, counters, digests, meters, registers, tables,
    value_sets,
};

/// The program's P4Info in protobuf text format.
pub const P4INFO_TEXT: &str = include_str!(concat!(env!("OUT_DIR"), "/roce_switch.p4info.txtpb"));

/// The program's P4Info in protobuf binary format.
pub const P4INFO_BINARY: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/roce_switch.p4info.bin"));
