// The Rust side of `function_externs.p4`'s externs, included inside the
// generated program's module (`super::*` names the generated traits).
use super::*;

/// The extern function, and the type implementing `Acc`.
#[derive(Default)]
pub struct UserExterns;

impl Externs for UserExterns {
    type Acc = Sum;

    fn fold16(&mut self, x: &u32) -> u16 {
        (*x >> 16) as u16 ^ *x as u16
    }
}

/// `Acc`: a running sum.
pub struct Sum {
    sum: u16,
}

impl Acc for Sum {
    fn new(start: u16) -> Self {
        Sum { sum: start }
    }

    fn add(&mut self, v: &u16) -> u16 {
        self.sum = self.sum.wrapping_add(*v);
        self.sum
    }
}
