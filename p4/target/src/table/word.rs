//! Action words: what a table hit hands the dataplane, the action and its
//! parameters in one `u128`, so generated code reads them without chasing
//! the entry's action through the interned pool (entry id → pool index →
//! `EntryAction` → boxed parameters).
//!
//! Layout: the low [`TAG_BITS`] bits are the tag, the rest the payload.
//! - Tag `1 + i` ([`direct_tag`]): the action at position `i` of the
//!   table's `TableInfo::actions`, its parameters in the payload in
//!   parameter order, each at the offset [`param_offsets`] gives (the
//!   first lowest), each masked to its P4Info width.
//! - [`MEMBER`] / [`GROUP`]: an action profile member or selector group,
//!   its id in the payload's low 32 bits.
//! - [`NOT_INLINE`]: the action did not fit (parameters over
//!   [`PAYLOAD_BITS`] bits in all, or more than [`MAX_DIRECT_TAG`]
//!   actions), or the table keeps no words: the caller reads it with
//!   `Table::action_of`.
//!
//! The code generator and the table compute the layout with the same
//! functions from the same P4Info, so they agree by construction.
//!
//! Contract: nothing here allocates except [`param_offsets`]' result;
//! nothing panics.

use crate::bits::mask;
use crate::info::{ProgramInfo, TableInfo};
use crate::runtime::{ActionCall, EntryAction};

/// Bits of the tag, at the bottom of the word.
pub const TAG_BITS: u32 = 8;

/// Bits left for an action's parameters.
pub const PAYLOAD_BITS: u32 = 128 - TAG_BITS;

/// The action is not in the word: read it from the table.
pub const NOT_INLINE: u8 = 0;

/// A member of the table's action profile; the member id in the payload.
pub const MEMBER: u8 = 0xfe;

/// A group of the table's action selector; the group id in the payload.
pub const GROUP: u8 = 0xfd;

/// Largest tag of a direct action (so at most 252 actions a table inline).
pub const MAX_DIRECT_TAG: u8 = 0xfc;

// Direct tags, GROUP and MEMBER never overlap.
const _: () = assert!(MAX_DIRECT_TAG < GROUP && GROUP < MEMBER && NOT_INLINE == 0);

/// The tag of the action at `position` in the table's action list, if it
/// has one.
pub fn direct_tag(position: usize) -> Option<u8> {
    u8::try_from(position + 1)
        .ok()
        .filter(|&t| t <= MAX_DIRECT_TAG)
}

/// Bit offsets in the word of parameters of these widths (in parameter
/// order, the first lowest, right above the tag), or `None` when they do
/// not fit in [`PAYLOAD_BITS`] or a width is 0 or over 128.
pub fn param_offsets(widths: impl IntoIterator<Item = u32>) -> Option<Vec<u32>> {
    let mut at = TAG_BITS;
    widths
        .into_iter()
        .map(|w| {
            let off = at;
            at = at.checked_add(w).filter(|&end| w >= 1 && end <= 128)?;
            Some(off)
        })
        .collect()
}

/// The tag and the parameters' (offset, width) in the word of the action
/// at `position` of a table's action list whose parameters have these
/// widths (P4Info order); `None` when it has no tag or they do not fit.
/// The code generator and [`encode`] both place arguments by it.
pub fn action_layout(position: usize, widths: &[u32]) -> Option<(u8, Vec<(u32, u32)>)> {
    let tag = direct_tag(position)?;
    let offsets = param_offsets(widths.iter().copied())?;
    Some((
        tag,
        offsets.into_iter().zip(widths.iter().copied()).collect(),
    ))
}

/// [`action_layout`] of action `action_id` in `table`.
fn layout(
    table: &TableInfo,
    program: &ProgramInfo,
    action_id: u32,
) -> Option<(u8, Vec<(u32, u32)>)> {
    let position = table.actions.iter().position(|a| a.id == action_id)?;
    let action = program.actions.iter().find(|a| a.id == action_id)?;
    let widths: Vec<u32> = action.params.iter().map(|p| p.bitwidth).collect();
    action_layout(position, &widths)
}

/// The word of `action` in `table` ([`NOT_INLINE`] when it does not fit).
pub(crate) fn encode(table: &TableInfo, program: &ProgramInfo, action: &EntryAction) -> u128 {
    match action {
        EntryAction::Member(m) => u128::from(MEMBER) | u128::from(*m) << TAG_BITS,
        EntryAction::Group(g) => u128::from(GROUP) | u128::from(*g) << TAG_BITS,
        EntryAction::Direct(c) => encode_call(table, program, c),
    }
}

/// The word of a direct action call in `table` ([`NOT_INLINE`] when it
/// does not fit).
pub(crate) fn encode_call(table: &TableInfo, program: &ProgramInfo, call: &ActionCall) -> u128 {
    match layout(table, program, call.action_id) {
        Some((tag, at)) if at.len() == call.params.len() => at
            .iter()
            .zip(call.params.iter())
            .fold(u128::from(tag), |word, (&(off, w), &v)| {
                word | (v & mask(w)) << off
            }),
        _ => u128::from(NOT_INLINE),
    }
}

/// The action a word holds; `None` for [`NOT_INLINE`] (or a tag `table`
/// has no action for). The inverse of [`encode`], for tests and readers.
pub fn decode(table: &TableInfo, program: &ProgramInfo, word: u128) -> Option<EntryAction> {
    let payload = word >> TAG_BITS;
    match word as u8 {
        NOT_INLINE => None,
        MEMBER => Some(EntryAction::Member(payload as u32)),
        GROUP => Some(EntryAction::Group(payload as u32)),
        tag => {
            let action_id = table.actions.get(usize::from(tag) - 1)?.id;
            let (_, at) = layout(table, program, action_id)?;
            let params: Vec<u128> = at.iter().map(|&(off, w)| (word >> off) & mask(w)).collect();
            Some(EntryAction::Direct(ActionCall::new(action_id, &params)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_packed_above_the_tag_while_they_fit() {
        assert_eq!(param_offsets([]), Some(vec![]));
        assert_eq!(param_offsets([9, 48, 48]), Some(vec![8, 17, 65]));
        assert_eq!(param_offsets([32, 32, 16]), Some(vec![8, 40, 72]));
        assert_eq!(param_offsets([120]), Some(vec![8]));
        assert_eq!(param_offsets([120, 1]), None);
        assert_eq!(param_offsets([128]), None);
        assert_eq!(param_offsets([0]), None);
    }

    #[test]
    fn tags_stop_at_the_largest_direct_tag() {
        assert_eq!(direct_tag(0), Some(1));
        assert_eq!(
            direct_tag(usize::from(MAX_DIRECT_TAG) - 1),
            Some(MAX_DIRECT_TAG)
        );
        assert_eq!(direct_tag(usize::from(MAX_DIRECT_TAG)), None);
    }
}
