//! Register arrays (v1model `register<bit<W>>(n)`).
//!
//! Contract: cells hold `bit<W>` values masked to `W` on every write; reads
//! out of range return 0 and writes out of range are ignored (bmv2 logs an
//! error and carries on; a P4 program cannot observe anything else). No
//! allocation after construction.

use crate::info::RegisterInfo;

/// A register array.
#[derive(Debug)]
pub struct Register {
    /// Static description.
    pub info: &'static RegisterInfo,
    cells: Box<[u128]>,
}

impl Register {
    /// A zeroed register array with `info.size` cells.
    pub fn new(info: &'static RegisterInfo) -> Self {
        Register {
            info,
            cells: vec![0; info.size as usize].into_boxed_slice(),
        }
    }

    /// Number of cells.
    pub fn len(&self) -> u32 {
        self.cells.len() as u32
    }

    /// Whether the array has no cells.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// `reg.read(index)`; out of range reads 0.
    #[inline]
    pub fn read(&self, index: u32) -> u128 {
        self.cells.get(index as usize).copied().unwrap_or(0)
    }

    /// `reg.write(index, value)`; out of range writes are ignored.
    #[inline]
    pub fn write(&mut self, index: u32, value: u128) {
        if let Some(cell) = self.cells.get_mut(index as usize) {
            *cell = value & crate::bits::mask(self.info.bitwidth);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static INFO: RegisterInfo = RegisterInfo {
        id: 0x1600_0001,
        name: "r",
        bitwidth: 12,
        size: 3,
    };

    #[test]
    fn cells_are_masked_and_out_of_range_is_harmless() {
        let mut r = Register::new(&INFO);
        r.write(0, 0xffff);
        assert_eq!(r.read(0), 0xfff);
        r.write(2, 5);
        assert_eq!(r.read(2), 5);
        r.write(3, 9);
        assert_eq!(r.read(3), 0);
        assert_eq!(r.read(u32::MAX), 0);
        assert_eq!(r.len(), 3);
    }
}
