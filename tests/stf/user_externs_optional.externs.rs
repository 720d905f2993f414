// The Rust side of `user_externs_optional.p4`'s externs: a call leaving out
// an `@optional` parameter is a method of its own (`bump_1`, `twice_1`),
// and a list argument arrives as the struct made up for its tuple type.
use super::*;

/// The extern functions, and which type implements each extern object type.
#[derive(Default)]
pub struct UserExterns;

impl Externs for UserExterns {
    type Bumper = Bump;
    type ByteAdder = Adder;

    fn twice(&mut self, x: &u8, plus: &u8) -> u8 {
        x.wrapping_mul(2).wrapping_add(*plus)
    }

    fn twice_1(&mut self, x: &u8) -> u8 {
        x.wrapping_mul(2)
    }
}

/// `Bumper`: keeps its constructor's codes.
pub struct Bump {
    codes: u32,
}

impl Bumper for Bump {
    fn new(kind: u32, colour: u32, e: u32) -> Self {
        Bump {
            codes: (kind << 16) | (colour << 8) | e,
        }
    }

    fn bump(&mut self, x: &u8, by: &u8) -> u8 {
        x.wrapping_add(*by)
    }

    fn bump_1(&mut self, x: &u8) -> u8 {
        x.wrapping_add(1)
    }

    fn codes(&mut self) -> u32 {
        self.codes
    }
}

/// `ByteAdder`: byte sums of the two tuple types the program passes.
pub struct Adder;

fn bytes3(t: &tuple_0) -> u16 {
    u16::from(t.f0) + u16::from(t.f1) + (t.f2 >> 8) + (t.f2 & 0xff)
}

impl ByteAdder for Adder {
    fn new() -> Self {
        Adder
    }

    fn sum_tuple_0(&mut self, data: &tuple_0) -> u16 {
        bytes3(data)
    }

    fn sum_tuple_0_2(&mut self, data: &tuple_0, invert: &bool) -> u16 {
        if *invert { !bytes3(data) } else { bytes3(data) }
    }

    fn sum_tuple_1(&mut self, data: &tuple_1) -> u16 {
        (data.f0 >> 8) + (data.f0 & 0xff)
    }
}
