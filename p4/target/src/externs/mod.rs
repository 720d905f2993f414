//! v1model externs: hashes, checksums, counters, meters, registers, random.
//!
//! CONTRACT (implemented by the target library; generated code relies on it).

use crate::info::{CounterInfo, HashAlgorithm, MeterInfo, RegisterInfo};

/// An indirect counter array.
#[derive(Debug)]
pub struct Counter {
    /// Static description.
    pub info: &'static CounterInfo,
}

impl Counter {
    /// `counter.count(index)` for a packet of `len` bytes; out-of-range indices are ignored.
    pub fn count(&mut self, index: u32, len: u32) {
        let _ = (index, len);
        unimplemented!()
    }
}

/// Two-rate three-colour marker configuration (RFC 2698), rates in units
/// (bytes or packets) per second, bursts in units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeterConfig {
    /// Committed information rate.
    pub cir: u64,
    /// Committed burst size.
    pub cburst: u64,
    /// Peak information rate.
    pub pir: u64,
    /// Peak burst size.
    pub pburst: u64,
}

/// An indirect meter array.
#[derive(Debug)]
pub struct Meter {
    /// Static description.
    pub info: &'static MeterInfo,
}

impl Meter {
    /// `meter.execute_meter(index, color)`: 0 green, 1 yellow, 2 red.
    pub fn execute(&mut self, index: u32, now_ns: u64, len: u32) -> u8 {
        let _ = (index, now_ns, len);
        unimplemented!()
    }
}

/// A register array.
#[derive(Debug)]
pub struct Register {
    /// Static description.
    pub info: &'static RegisterInfo,
}

impl Register {
    /// `reg.read(index)`; out of range reads 0.
    pub fn read(&self, index: u32) -> u128 {
        let _ = index;
        unimplemented!()
    }
    /// `reg.write(index, value)`; out of range writes are ignored.
    pub fn write(&mut self, index: u32, value: u128) {
        let _ = (index, value);
        unimplemented!()
    }
}

/// Packs P4 values MSB-first at bit granularity into bytes, the input of
/// hashes and checksums (a field list `{a, b, c}` becomes `a ++ b ++ c`).
#[derive(Debug)]
pub struct BitPacker {
    /// Packed bytes.
    pub buf: [u8; 256],
    /// Bits used.
    pub bits: usize,
}

/// `hash(out, algo, base, data, max)` core: hashes the packed input.
pub fn hash(algorithm: HashAlgorithm, input: &BitPacker) -> u64 {
    let _ = (algorithm, input);
    unimplemented!()
}
