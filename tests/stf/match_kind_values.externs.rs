// The Rust side of `match_kind_values.p4`'s externs: a match kind arrives
// as its code (exact 0, ternary 1, lpm 2, in core.p4's order), a tuple of
// them as the struct made up for the tuple type, and the second
// constructor of `KindSet` is `new_1` (one parameter).
use super::*;

/// The extern functions, and which type implements each extern object type.
#[derive(Default)]
pub struct UserExterns;

impl Externs for UserExterns {
    type KindSet_tuple = Kinds;

    fn kind_code_match_kind(&mut self, kind: &u32) -> u8 {
        *kind as u8 + 0x10
    }
}

/// `KindSet<tuple<match_kind, match_kind>>`.
pub struct Kinds {
    kinds: [u32; 2],
    base: u8,
}

impl KindSet_tuple for Kinds {
    fn new(kinds: tuple_0, base: u8) -> Self {
        Kinds {
            kinds: [kinds.f0, kinds.f1],
            base,
        }
    }

    fn new_1(kinds: tuple_0) -> Self {
        Self::new(kinds, 0)
    }

    fn count(&mut self, k: &u32) -> u8 {
        self.base + self.kinds.iter().filter(|x| **x == *k).count() as u8
    }
}
