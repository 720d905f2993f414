// The Rust side of `user_externs.p4`'s externs; README.md "User-defined
// externs" shows this file. It is included inside the generated program's
// module, so `super::*` names the traits the compiler generated.
use super::*;

/// The extern functions, and which type implements each extern object type.
#[derive(Default)]
pub struct UserExterns;

impl Externs for UserExterns {
    type Tally = RunningSum;

    fn mix16(&mut self, a: &u32, b: &u16) -> u16 {
        ((*a >> 16) as u16 ^ *a as u16) ^ *b
    }

    fn swap_bytes(&mut self, v: &mut u16) {
        *v = v.swap_bytes();
    }
}

/// `Tally`: a running sum.
pub struct RunningSum {
    sum: u32,
}

impl Tally for RunningSum {
    fn new(start: u32) -> Self {
        RunningSum { sum: start }
    }

    fn add(&mut self, step: &u8) -> u32 {
        self.sum = self.sum.wrapping_add(u32::from(*step));
        self.sum
    }

    fn add_0(&mut self) -> u32 {
        self.add(&1)
    }

    fn peek(&mut self, sum: &mut u32) {
        *sum = self.sum;
    }
}
