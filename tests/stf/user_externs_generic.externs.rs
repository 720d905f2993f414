// The Rust side of `user_externs_generic.p4`'s externs: one Rust type serves
// both copies of the generic `DelayLine<T>`, and each copy of a generic
// method or function is a method of its own.
use super::*;
use std::collections::VecDeque;

/// The extern functions, and which type implements each extern object type.
#[derive(Default)]
pub struct UserExterns;

impl Externs for UserExterns {
    type ByteSum = ByteSummer;
    type DelayLine_bit8 = Delay<u8>;
    type DelayLine_bit32 = Delay<u32>;

    fn fold16_bit32(&mut self, data: &u32) -> u16 {
        (*data >> 16) as u16 ^ *data as u16
    }

    fn fold16_bit8(&mut self, data: &u8) -> u16 {
        u16::from(*data)
    }
}

/// `DelayLine<T>`: starts with `depth` zeros, so `pop` after `push` returns
/// what was pushed `depth` pushes before (its queue never grows past
/// `depth + 1`, so packets allocate nothing).
pub struct Delay<T> {
    line: VecDeque<T>,
}

impl<T: Copy + Default> Delay<T> {
    fn with_depth(depth: u32) -> Self {
        let mut line = VecDeque::with_capacity(depth as usize + 1);
        line.resize(depth as usize, T::default());
        Delay { line }
    }

    fn pop_front(&mut self) -> T {
        self.line.pop_front().unwrap_or_default()
    }
}

impl DelayLine_bit8 for Delay<u8> {
    fn new(depth: u32) -> Self {
        Delay::with_depth(depth)
    }

    fn push(&mut self, v: &u8) {
        self.line.push_back(*v);
    }

    fn pop(&mut self) -> u8 {
        self.pop_front()
    }
}

impl DelayLine_bit32 for Delay<u32> {
    fn new(depth: u32) -> Self {
        Delay::with_depth(depth)
    }

    fn push(&mut self, v: &u32) {
        self.line.push_back(*v);
    }

    fn pop(&mut self) -> u32 {
        self.pop_front()
    }
}

/// `ByteSum`: the sum of the bytes of its argument.
pub struct ByteSummer;

fn byte_sum(bytes: &[u8]) -> u16 {
    bytes.iter().map(|b| u16::from(*b)).sum()
}

impl ByteSum for ByteSummer {
    fn new() -> Self {
        ByteSummer
    }

    fn of_ethernet_t(&mut self, data: &ethernet_t) -> u16 {
        byte_sum(&data.dstAddr.to_be_bytes()[2..])
            + byte_sum(&data.srcAddr.to_be_bytes()[2..])
            + byte_sum(&data.etherType.to_be_bytes())
    }

    fn of_bit32(&mut self, data: &u32) -> u16 {
        byte_sum(&data.to_be_bytes())
    }
}
