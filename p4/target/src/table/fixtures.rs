//! Program descriptions the table modules' unit tests share: one plain
//! table over one plain key, so that each test spells out only the fields
//! it is about (`TableInfo { idle_timeout: true, ..table(2, "idle",
//! &EXACT_X, 8) }`).

use crate::info::{ActionRef, ActionScope, KeyInfo, MatchKind, TableInfo};

/// Action 1, allowed as an entry action and as the default action.
pub(super) static ACTION_1: [ActionRef; 1] = [ActionRef {
    id: 1,
    scope: ActionScope::TableAndDefault,
}];

/// One 8-bit key field `h.x`, matched by `kind`.
pub(super) const fn key_x(kind: MatchKind) -> [KeyInfo; 1] {
    [KeyInfo {
        id: 1,
        name: "h.x",
        bitwidth: 8,
        kind,
    }]
}

/// Table `name`, id `0x0200_0000 + n`, of `size` entries over `keys`,
/// running [`ACTION_1`] with `1(0)` as its changeable default; no const
/// entries, implementation, direct counter or meter, or idle timeout.
pub(super) const fn table(
    n: u32,
    name: &'static str,
    keys: &'static [KeyInfo],
    size: u32,
) -> TableInfo {
    TableInfo::plain(0x0200_0000 + n, name, keys, &ACTION_1, size, (1, &[0]))
}
