// The Rust side of `user_externs_inferred.p4`'s externs: `Accum(16w100)`
// and `Accum<bit<16>>(16w0)` are both `Accum_bit16`, whether the type
// argument was inferred or written; the typedefs `Acc32`, `Clock` and
// `Ticks` add no names of their own.
use super::*;

/// No extern functions; which type implements each extern object type.
#[derive(Default)]
pub struct UserExterns;

impl Externs for UserExterns {
    type Stamp = Counter;
    type Accum_bit8 = Sum<u8>;
    type Accum_bit16 = Sum<u16>;
    type Accum_bit32 = Sum<u32>;
}

/// `Accum<T>`: a running sum that wraps at the width of `T`, as P4's `+` does.
pub struct Sum<T> {
    sum: T,
}

impl Accum_bit8 for Sum<u8> {
    fn new(start: u8) -> Self {
        Sum { sum: start }
    }

    fn add(&mut self, v: &u8) -> u8 {
        self.sum = self.sum.wrapping_add(*v);
        self.sum
    }
}

impl Accum_bit16 for Sum<u16> {
    fn new(start: u16) -> Self {
        Sum { sum: start }
    }

    fn add(&mut self, v: &u16) -> u16 {
        self.sum = self.sum.wrapping_add(*v);
        self.sum
    }
}

impl Accum_bit32 for Sum<u32> {
    fn new(start: u32) -> Self {
        Sum { sum: start }
    }

    fn add(&mut self, v: &u32) -> u32 {
        self.sum = self.sum.wrapping_add(*v);
        self.sum
    }
}

/// `Stamp`: counts up from `first`, wrapping at 8 bits.
pub struct Counter {
    next: u8,
}

impl Stamp for Counter {
    fn new(first: u8) -> Self {
        Counter { next: first }
    }

    fn next(&mut self) -> u8 {
        let n = self.next;
        self.next = n.wrapping_add(1);
        n
    }
}
