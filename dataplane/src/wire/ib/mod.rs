//! InfiniBand transport headers as RoCE carries them, one file per header
//! family (IBTA Vol. 1 ch. 9 and Annex A16/A17):
//!
//! - [`bth`]: the Base Transport Header, its opcodes and 24-bit PSN arithmetic;
//! - [`reth`], [`aeth`], [`immdt`]: the extended transport headers an opcode
//!   implies (RDMA, ACK, immediate data);
//! - [`grh`]: the Global Route Header RoCE v1 puts between Ethernet and BTH;
//! - [`icrc`]: the invariant CRC trailer of every RoCE packet.
//!
//! Whole frames (Ethernet, IP/UDP or GRH, these headers, payload, ICRC) are
//! built and parsed by the layer that sends them, the RNIC model
//! ([`crate::rnic::frame`]).
//!
//! Contract: views follow smoltcp (`new_checked`, then no accessor panics);
//! `*Repr`s have `parse`/`emit`/`buffer_len`; opcodes are an open enum. Nothing
//! here allocates. Lengths are bytes, multi-byte fields big-endian.
//!
//! Spec: roce-semantics §10 (R-ROCE-1..7), §14 E-11, E-12.

pub mod aeth;
pub mod bth;
pub mod grh;
pub mod icrc;
pub mod immdt;
pub mod reth;

pub use aeth::{AETH_LEN, AethRepr, AethSyndrome, NakCode, rnr_timer_ns};
pub use bth::{BTH_LEN, Bth, BthRepr, DEFAULT_PKEY, Opcode, PSN_MASK, psn_add, psn_cmp, psn_diff};
pub use grh::{GRH_LEN, GrhRepr, NEXT_HEADER_BTH};
pub use icrc::{ICRC_LEN, icrc};
pub use immdt::{IMMDT_LEN, ImmDtRepr};
pub use reth::{RETH_LEN, RethRepr};

/// Length of the reserved padding after a CNP's BTH in bytes (R-ROCE-5).
pub const CNP_PAD_LEN: usize = 16;

/// Errors from parsing InfiniBand transport headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IbError {
    /// The buffer is shorter than the header.
    #[error("buffer too short for the InfiniBand header")]
    Truncated,
    /// The packet handed to the ICRC does not start with an IPv4, IPv6 or
    /// GRH header (version nibble).
    #[error("no IPv4/IPv6/GRH header (version nibble {0})")]
    Version(u8),
}

/// A 24-bit big-endian field.
pub(crate) fn be24(b: &[u8]) -> u32 {
    (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2])
}

/// Writes the low 24 bits of `v` big-endian.
pub(crate) fn put_be24(b: &mut [u8], v: u32) {
    b[0] = (v >> 16) as u8;
    b[1] = (v >> 8) as u8;
    b[2] = v as u8;
}
