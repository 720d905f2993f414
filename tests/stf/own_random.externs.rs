// The Rust side of `own_random.p4`'s extern function, included inside the
// generated program's module (`super::*` names the generated trait).
use super::*;

/// The program's own `random(logRange)`.
#[derive(Default)]
pub struct UserExterns;

impl Externs for UserExterns {
    fn random(&mut self, logRange: &u8) -> u32 {
        (1u32 << *logRange) - 1
    }
}
