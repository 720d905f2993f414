//! Register arrays (v1model `register<bit<W>>(n)`).
//!
//! Contract: cells hold `bit<W>` values masked to `W` on every write; reads
//! out of range return 0 and writes out of range are ignored (bmv2 logs an
//! error and carries on; a P4 program cannot observe anything else). No
//! allocation after construction. Cells wider than 128 bits live in their
//! own array of u64 limbs and are read and written as [`Bits`]; the
//! `u128` cells of narrower registers keep their code.

use crate::info::RegisterInfo;
use crate::wide::Bits;

/// A register array.
#[derive(Debug)]
pub struct Register {
    /// Static description.
    pub info: &'static RegisterInfo,
    cells: Box<[u128]>,
    /// Cells of a register wider than 128 bits, `limbs` u64 each (empty
    /// otherwise).
    wide: Box<[u64]>,
    limbs: usize,
}

impl Register {
    /// A zeroed register array with `info.size` cells.
    pub fn new(info: &'static RegisterInfo) -> Self {
        let size = info.size as usize;
        if info.bitwidth > 128 {
            let limbs = info.bitwidth.div_ceil(64) as usize;
            return Register {
                info,
                cells: Box::default(),
                wide: vec![0; size * limbs].into_boxed_slice(),
                limbs,
            };
        }
        Register {
            info,
            cells: vec![0; size].into_boxed_slice(),
            wide: Box::default(),
            limbs: 0,
        }
    }

    /// Number of cells.
    pub fn len(&self) -> u32 {
        self.info.size
    }

    /// Whether the cells are wider than 128 bits (read and written with
    /// [`Register::read_wide`] and [`Register::write_wide`]).
    pub fn is_wide(&self) -> bool {
        self.limbs > 0
    }

    /// `reg.read(index)` of a register wider than 128 bits; out of range
    /// (or a narrow register) reads 0.
    #[inline]
    pub fn read_wide<const L: usize>(&self, index: u32) -> Bits<L> {
        let at = index as usize * self.limbs;
        match self.wide.get(at..at + self.limbs) {
            Some(cell) if self.limbs > 0 => Bits::from_limbs(cell),
            _ => Bits::ZERO,
        }
    }

    /// `reg.write(index, value)` of a register wider than 128 bits; out of
    /// range writes are ignored.
    #[inline]
    pub fn write_wide<const L: usize>(&mut self, index: u32, value: Bits<L>) {
        let at = index as usize * self.limbs;
        let value = value.wrap(self.info.bitwidth);
        if let Some(cell) = self.wide.get_mut(at..at + self.limbs) {
            let n = cell.len().min(L);
            cell[..n].copy_from_slice(&value.0[..n]);
        }
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
        signed: false,
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

    static WIDE: RegisterInfo = RegisterInfo {
        id: 0x1600_0002,
        name: "w",
        bitwidth: 200,
        signed: false,
        size: 2,
    };

    #[test]
    fn wide_cells_are_masked_and_kept_apart() {
        let mut r = Register::new(&WIDE);
        assert!(r.is_wide());
        let ones = Bits::<4>::ones(256);
        r.write_wide(1, ones);
        assert_eq!(r.read_wide::<4>(1), Bits::<4>::ones(200));
        assert_eq!(r.read_wide::<4>(0), Bits::ZERO);
        r.write_wide(2, ones);
        assert_eq!(r.read_wide::<4>(2), Bits::ZERO);
        assert_eq!(r.len(), 2);
    }
}
