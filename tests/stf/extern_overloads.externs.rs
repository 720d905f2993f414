// The Rust side of `extern_overloads.p4`'s externs: overloads of one arity
// are named like overloads by arity (`new_1`, `mix_2`), made unique in
// declaration order.
use super::*;

/// The extern functions, and which type implements `Scaler`.
#[derive(Default)]
pub struct UserExterns;

impl Externs for UserExterns {
    type Scaler = Scale;

    fn mix(&mut self, a: &u8, with: &u8) -> u8 {
        a ^ with
    }

    fn mix_2(&mut self, a: &u8, add: &u8) -> u8 {
        a.wrapping_add(*add)
    }

    fn mix_1(&mut self, a: &u8) -> u8 {
        !a
    }
}

/// `Scaler`: `x * factor + offset`, or `x << shift`.
pub struct Scale {
    factor: u8,
    shift: u8,
    offset: u8,
}

impl Scaler for Scale {
    fn new(factor: u8) -> Self {
        Scale {
            factor,
            shift: 0,
            offset: 0,
        }
    }

    fn new_1(shift: u8) -> Self {
        Scale {
            factor: 1,
            shift,
            offset: 0,
        }
    }

    fn new_2(factor: u8, offset: u8) -> Self {
        Scale {
            factor,
            shift: 0,
            offset,
        }
    }

    fn scale(&mut self, x: &u8) -> u8 {
        (x.wrapping_mul(self.factor) << self.shift).wrapping_add(self.offset)
    }
}
