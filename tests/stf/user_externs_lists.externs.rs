// The Rust side of `user_externs_lists.p4`'s externs: a `list<T>`
// constructor parameter is a slice `&[T]` (a tuple element the struct made
// up for its type), as long as the instance's list.
use super::*;

/// The extern functions, and which type implements each extern object type.
#[derive(Default)]
pub struct UserExterns;

impl Externs for UserExterns {
    type RangeSet = Ranges;
    type Pairs_bit8_bit16 = Pairs;
    type Bytes = ByteList;
}

/// `RangeSet`.
pub struct Ranges {
    ranges: Vec<range_t>,
}

impl RangeSet for Ranges {
    fn new(ranges: &[range_t]) -> Self {
        Ranges {
            ranges: ranges.to_vec(),
        }
    }

    fn find(&mut self, x: &u8) -> u8 {
        self.ranges
            .iter()
            .position(|r| (r.lo..=r.hi).contains(x))
            .map_or(0, |i| i as u8 + 1)
    }
}

/// `Pairs<bit<8>, bit<16>>`.
pub struct Pairs {
    pairs: Vec<(u8, u16)>,
    dflt: u16,
}

impl Pairs_bit8_bit16 for Pairs {
    fn new(pairs: &[tuple_0], dflt: u16) -> Self {
        Pairs {
            pairs: pairs.iter().map(|p| (p.f0, p.f1)).collect(),
            dflt,
        }
    }

    fn get(&mut self, k: &u8) -> u16 {
        self.pairs
            .iter()
            .find(|(key, _)| key == k)
            .map_or(self.dflt, |(_, v)| *v)
    }
}

/// `Bytes`.
pub struct ByteList {
    bytes: Vec<u8>,
}

impl Bytes for ByteList {
    fn new(bytes: &[u8]) -> Self {
        ByteList {
            bytes: bytes.to_vec(),
        }
    }

    fn count(&mut self) -> u8 {
        self.bytes.len() as u8
    }

    fn sum(&mut self) -> u8 {
        self.bytes.iter().fold(0, |s, b| s.wrapping_add(*b))
    }
}
