//! v1model externs: hashes, checksums, counters, meters, registers, random.
//!
//! CONTRACT (implemented by the target library; generated code relies on it):
//! - [`Counter::count`], [`Meter::execute`], [`Register::read`] and
//!   [`Register::write`] never panic and never allocate; out-of-range indices
//!   are ignored (counters, register writes), read as 0 (registers) or are
//!   green (meters), as bmv2 would log and carry on.
//! - [`hash`] runs a v1model `HashAlgorithm` over bits packed with
//!   [`BitPacker`]; [`update_checksum`] and [`verify_checksum`] implement
//!   v1model's `update_checksum` / `verify_checksum` on top of it.
//! - Meters follow RFC 2698 (two-rate three-colour marker, colour-blind
//!   mode) with time taken from the caller's `now_ns`; nothing here reads a
//!   clock.
//!
//! Each extern lives in its own submodule; this module re-exports them so
//! that generated code can write `p4_target::externs::Counter` etc.

mod counter;
mod crc32;
mod hash;
mod meter;
mod random;
mod register;

pub use counter::Counter;
pub use hash::{
    BitPacker, CrcConfig, csum16_finish, csum16_finish_u64, csum16_weighted_bytes, csum16_wire_sum,
    hash, hash_bytes, hash_range, hash_with, ones_complement_sum, update_checksum, verify_checksum,
};
pub(crate) use meter::units as meter_units;
pub use meter::{Color, Meter, MeterConfig, MeterState};
pub use random::Rng;
pub use register::Register;
