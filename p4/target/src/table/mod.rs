//! Match-action table engines and action profiles.
//!
//! CONTRACT (implemented by the target library; generated code relies on it):
//! - [`Table::new`] picks an engine from the key's match kinds: all exact →
//!   hash map; exact fields plus one LPM → a trie whose lookup does not scan
//!   entries; anything with ternary/range/optional → a priority engine
//!   better than a linear scan as tables grow.
//! - [`Table::lookup`] takes one value per key field and never allocates.

use crate::info::TableInfo;
use crate::runtime::{ActionCall, EntryAction};

/// Handle of an entry inside its table (stable while the entry lives).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EntryRef(pub u32);

/// Result of a lookup.
#[derive(Debug)]
pub struct Lookup<'a> {
    /// Whether an entry matched (false: the default action runs).
    pub hit: bool,
    /// The matched entry, for direct meters.
    pub entry: Option<EntryRef>,
    /// What to run: the entry's action, or the default action on a miss.
    pub action: &'a EntryAction,
}

/// One table.
#[derive(Debug)]
pub struct Table {
    /// Static description.
    pub info: &'static TableInfo,
}

impl Table {
    /// An empty table with its initial default action and const entries.
    pub fn new(info: &'static TableInfo) -> Self {
        Table { info }
    }

    /// Looks `key` up (one value per key field, in key order) and counts
    /// `packet_len` bytes on the hit entry's direct counter, if any.
    pub fn lookup(&mut self, key: &[u128], packet_len: u32) -> Lookup<'_> {
        let _ = (key, packet_len);
        unimplemented!("table engine")
    }

    /// Executes the direct meter of `entry` for a packet of `len` bytes at
    /// `now_ns`; returns the v1model colour (0 green, 1 yellow, 2 red).
    pub fn direct_meter_execute(&mut self, entry: EntryRef, now_ns: u64, len: u32) -> u8 {
        let _ = (entry, now_ns, len);
        unimplemented!("table engine")
    }
}

/// An action profile or selector.
#[derive(Debug)]
pub struct ActionProfile {
    /// Static description.
    pub info: &'static crate::info::ActionProfileInfo,
}

impl ActionProfile {
    /// The action of a member.
    pub fn member(&self, member_id: u32) -> Option<&ActionCall> {
        let _ = member_id;
        unimplemented!("action profile")
    }

    /// Picks a member of `group_id` from `hash` (the selector hash over the
    /// table's `selector` key fields), honouring weights; `None` for an
    /// unknown or empty group.
    pub fn select(&self, group_id: u32, hash: u64) -> Option<&ActionCall> {
        let _ = (group_id, hash);
        unimplemented!("action selector")
    }
}
