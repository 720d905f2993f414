//! Indirect counter arrays (v1model `counter(n, type)`).
//!
//! Contract: every cell counts both bytes and packets whatever the declared
//! [`CounterUnit`](crate::info::CounterUnit) (P4Runtime reads then report the
//! unit's half; the other one is harmless). Counts wrap at `u64::MAX`.
//! Out-of-range indices are ignored, never a panic. No allocation after
//! construction.

use crate::info::CounterInfo;
use crate::runtime::CounterData;

/// An indirect counter array.
#[derive(Debug)]
pub struct Counter {
    /// Static description.
    pub info: &'static CounterInfo,
    cells: Box<[CounterData]>,
}

impl Counter {
    /// A zeroed counter array with `info.size` cells (none for a direct
    /// counter, whose cells live in its table's entries).
    pub fn new(info: &'static CounterInfo) -> Self {
        let n = if info.direct_table.is_some() {
            0
        } else {
            info.size as usize
        };
        Counter {
            info,
            cells: vec![CounterData::default(); n].into_boxed_slice(),
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

    /// `counter.count(index)` for a packet of `len` bytes; out-of-range indices are ignored.
    #[inline]
    pub fn count(&mut self, index: u32, len: u32) {
        if let Some(cell) = self.cells.get_mut(index as usize) {
            cell.bytes = cell.bytes.wrapping_add(len as u64);
            cell.packets = cell.packets.wrapping_add(1);
        }
    }

    /// The cell at `index`, `None` when out of range.
    pub fn read(&self, index: u32) -> Option<CounterData> {
        self.cells.get(index as usize).copied()
    }

    /// Overwrites a cell; returns false (and changes nothing) when out of range.
    pub fn write(&mut self, index: u32, data: CounterData) -> bool {
        match self.cells.get_mut(index as usize) {
            Some(cell) => {
                *cell = data;
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::CounterUnit;

    static INFO: CounterInfo = CounterInfo {
        id: 0x1200_0001,
        name: "c",
        unit: CounterUnit::Both,
        size: 4,
        direct_table: None,
    };

    #[test]
    fn counts_bytes_and_packets_and_ignores_out_of_range() {
        let mut c = Counter::new(&INFO);
        c.count(1, 100);
        c.count(1, 60);
        c.count(4, 1000);
        c.count(u32::MAX, 1000);
        assert_eq!(
            c.read(1),
            Some(CounterData {
                bytes: 160,
                packets: 2
            })
        );
        assert_eq!(c.read(0), Some(CounterData::default()));
        assert_eq!(c.read(4), None);
        assert!(!c.write(4, CounterData::default()));
        assert!(c.write(
            1,
            CounterData {
                bytes: 7,
                packets: 1
            }
        ));
        assert_eq!(c.read(1).unwrap().bytes, 7);
    }
}
