//! The program's mutable state (tables, action profiles, counters, meters,
//! registers, value sets) and the ID-based API that control planes use.
//!
//! Generated code indexes the vectors of [`Runtime`] directly with dense
//! indices it knows at compile time (`rt.tables[2]`), in the order of the
//! corresponding [`ProgramInfo`] slices. Control planes (STF runner,
//! P4Runtime server) go through the `*_by_id` methods, which validate every
//! argument against the [`ProgramInfo`] and return a [`RuntimeError`] that
//! names the bad field; a failed call changes nothing.
//!
//! Values are canonical native integers: match values, masks and action
//! parameters are `u128` already checked to fit their declared width
//! (byte-string decoding and zero-padding normalisation are the caller's
//! job). Priorities follow P4Runtime: a larger number wins.

use crate::externs::{Counter, Meter, MeterConfig, Register};
use crate::info::{MatchKind, ProgramInfo};
use crate::table::{ActionProfile, Table};

/// How one key field of an entry matches. A wildcard is `None` in the
/// entry's match list (only allowed for ternary, range, optional and LPM).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldMatch {
    /// Exact value.
    Exact(u128),
    /// Prefix of `prefix_len` leading bits (of the field's width).
    Lpm {
        /// Value; bits past the prefix must be zero.
        value: u128,
        /// Prefix length, `0..=width`.
        prefix_len: u32,
    },
    /// Value under mask; `value & !mask` must be zero.
    Ternary {
        /// Value.
        value: u128,
        /// Mask.
        mask: u128,
    },
    /// Inclusive range.
    Range {
        /// Lowest matching value.
        low: u128,
        /// Highest matching value.
        high: u128,
    },
    /// Optional: exact when present.
    Optional(u128),
}

impl FieldMatch {
    /// The match kind this value belongs to.
    pub fn kind(&self) -> MatchKind {
        match self {
            FieldMatch::Exact(_) => MatchKind::Exact,
            FieldMatch::Lpm { .. } => MatchKind::Lpm,
            FieldMatch::Ternary { .. } => MatchKind::Ternary,
            FieldMatch::Range { .. } => MatchKind::Range,
            FieldMatch::Optional(_) => MatchKind::Optional,
        }
    }

    /// Whether `key` (a field value) matches, given the field's width.
    pub fn matches(&self, key: u128, width: u32) -> bool {
        match *self {
            FieldMatch::Exact(v) | FieldMatch::Optional(v) => key == v,
            FieldMatch::Lpm { value, prefix_len } => {
                let m = crate::bits::mask(width) ^ crate::bits::mask(width - prefix_len.min(width));
                key & m == value & m
            }
            FieldMatch::Ternary { value, mask } => key & mask == value & mask,
            FieldMatch::Range { low, high } => low <= key && key <= high,
        }
    }
}

/// An action with its arguments, as stored in table entries and members.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ActionCall {
    /// Action id.
    pub action_id: u32,
    /// Arguments in parameter order, each masked to its width.
    pub params: Box<[u128]>,
}

impl ActionCall {
    /// An action without arguments.
    pub fn new(action_id: u32, params: &[u128]) -> Self {
        ActionCall {
            action_id,
            params: params.into(),
        }
    }
}

/// What a table entry points at.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EntryAction {
    /// An action run directly.
    Direct(ActionCall),
    /// A member of the table's action profile.
    Member(u32),
    /// A group of the table's action selector.
    Group(u32),
}

/// A table entry in runtime form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableEntry {
    /// One item per key field, in key order; `None` is a wildcard.
    pub matches: Vec<Option<FieldMatch>>,
    /// Priority; larger wins. Must be > 0 when the table has a ternary,
    /// range or optional key, and 0 otherwise.
    pub priority: i32,
    /// What the entry runs.
    pub action: EntryAction,
    /// Opaque controller cookie (P4Runtime `TableEntry.metadata`), echoed on read.
    pub metadata: Vec<u8>,
}

/// Why a control-plane call was refused. Every variant names the object or
/// field at fault so that a gRPC status message can quote it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuntimeError {
    /// No object with this id of the expected kind.
    #[error("unknown {kind} id {id:#x}")]
    UnknownId {
        /// Object kind (`table`, `action`, `counter`, ...).
        kind: &'static str,
        /// The id.
        id: u32,
    },
    /// A field or argument is malformed; `field` says which.
    #[error("{field}: {reason}")]
    Invalid {
        /// The offending field (`match[1]`, `action.params[0]`, `priority`, ...).
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// INSERT of an entry whose key is already present.
    #[error("entry already exists in {table}")]
    AlreadyExists {
        /// Table name.
        table: &'static str,
    },
    /// MODIFY/DELETE of an entry that is not there.
    #[error("entry not found in {table}")]
    NotFound {
        /// Table name.
        table: &'static str,
    },
    /// The table is full.
    #[error("{table} is full ({size} entries)")]
    Full {
        /// Table name.
        table: &'static str,
        /// Its capacity.
        size: u32,
    },
    /// Changing a `const` table or default action, or similar.
    #[error("{0}")]
    NotPermitted(String),
    /// A member or group is still referenced.
    #[error("{0}")]
    InUse(String),
}

/// A parser value set's members: one match list per member.
#[derive(Clone, Debug, Default)]
pub struct ValueSet {
    /// Members; each is a list of (value, mask) over the set's key.
    pub members: Vec<(u128, u128)>,
}

impl ValueSet {
    /// Whether `value` matches any member.
    #[inline]
    pub fn contains(&self, value: u128) -> bool {
        self.members.iter().any(|&(v, m)| value & m == v & m)
    }
}

/// All mutable program state. Fields are public for generated code; the
/// control plane uses the methods, which keep the invariants.
#[derive(Debug)]
pub struct Runtime {
    /// The program this state belongs to.
    pub info: &'static ProgramInfo,
    /// Tables, in `info.tables` order.
    pub tables: Vec<Table>,
    /// Action profiles and selectors, in `info.action_profiles` order.
    pub profiles: Vec<ActionProfile>,
    /// Indirect counters, in `info.counters` order (direct ones live in their table).
    pub counters: Vec<Counter>,
    /// Indirect meters, in `info.meters` order (direct ones live in their table).
    pub meters: Vec<Meter>,
    /// Registers, in `info.registers` order.
    pub registers: Vec<Register>,
    /// Parser value sets, in `info.value_sets` order.
    pub value_sets: Vec<ValueSet>,
    /// Digests emitted since the last drain: (digest id, field values).
    pub digests: Vec<(u32, Vec<u128>)>,
}

/// Counter cell contents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CounterData {
    /// Bytes counted.
    pub bytes: u64,
    /// Packets counted.
    pub packets: u64,
}

/// The control-plane API. Implemented in `runtime_api.rs`-style code by the
/// target library; listed here as the contract callers build against.
pub trait RuntimeApi {
    /// Inserts an entry.
    fn table_insert(&mut self, table_id: u32, entry: TableEntry) -> Result<(), RuntimeError>;
    /// Replaces the action (and cookie) of an existing entry, keyed by matches + priority.
    fn table_modify(&mut self, table_id: u32, entry: TableEntry) -> Result<(), RuntimeError>;
    /// Deletes the entry with these matches and priority.
    fn table_delete(
        &mut self,
        table_id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
    ) -> Result<(), RuntimeError>;
    /// All entries of a table (const entries included), in insertion order.
    fn table_entries(&self, table_id: u32) -> Result<Vec<TableEntry>, RuntimeError>;
    /// Sets the default action. Fails for a `const default_action`.
    fn table_set_default(&mut self, table_id: u32, action: ActionCall) -> Result<(), RuntimeError>;
    /// Restores the program's initial default action.
    fn table_reset_default(&mut self, table_id: u32) -> Result<(), RuntimeError>;
    /// The current default action.
    fn table_default(&self, table_id: u32) -> Result<ActionCall, RuntimeError>;
    /// Removes every non-const entry.
    fn table_clear(&mut self, table_id: u32) -> Result<(), RuntimeError>;

    /// Inserts or (with `modify`) replaces an action profile member.
    fn member_write(
        &mut self,
        profile_id: u32,
        member_id: u32,
        action: ActionCall,
        modify: bool,
    ) -> Result<(), RuntimeError>;
    /// Deletes a member (refused while a group or entry uses it).
    fn member_delete(&mut self, profile_id: u32, member_id: u32) -> Result<(), RuntimeError>;
    /// Members of a profile: (member id, action).
    fn members(&self, profile_id: u32) -> Result<Vec<(u32, ActionCall)>, RuntimeError>;
    /// Inserts or (with `modify`) replaces a group: (member id, weight) list.
    fn group_write(
        &mut self,
        profile_id: u32,
        group_id: u32,
        members: &[(u32, u32)],
        modify: bool,
    ) -> Result<(), RuntimeError>;
    /// Deletes a group (refused while an entry uses it).
    fn group_delete(&mut self, profile_id: u32, group_id: u32) -> Result<(), RuntimeError>;
    /// Groups of a profile: (group id, [(member id, weight)]).
    fn groups(&self, profile_id: u32) -> Result<Vec<(u32, Vec<(u32, u32)>)>, RuntimeError>;

    /// Reads an indirect counter cell.
    fn counter_read(&self, counter_id: u32, index: u32) -> Result<CounterData, RuntimeError>;
    /// Overwrites an indirect counter cell.
    fn counter_write(&mut self, counter_id: u32, index: u32, data: CounterData) -> Result<(), RuntimeError>;
    /// Reads the direct counter of one entry.
    fn direct_counter_read(
        &self,
        table_id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
    ) -> Result<CounterData, RuntimeError>;
    /// Overwrites the direct counter of one entry.
    fn direct_counter_write(
        &mut self,
        table_id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
        data: CounterData,
    ) -> Result<(), RuntimeError>;
    /// Configures one cell of an indirect meter (`None` = unconfigured: all green).
    fn meter_set(&mut self, meter_id: u32, index: u32, config: Option<MeterConfig>) -> Result<(), RuntimeError>;
    /// Configures the direct meter of one entry.
    fn direct_meter_set(
        &mut self,
        table_id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
        config: Option<MeterConfig>,
    ) -> Result<(), RuntimeError>;
    /// Reads a register cell.
    fn register_read(&self, register_id: u32, index: u32) -> Result<u128, RuntimeError>;
    /// Writes a register cell (value masked to the cell width).
    fn register_write(&mut self, register_id: u32, index: u32, value: u128) -> Result<(), RuntimeError>;
    /// Replaces the members of a parser value set: (value, mask) pairs.
    fn value_set_write(&mut self, value_set_id: u32, members: &[(u128, u128)]) -> Result<(), RuntimeError>;
}
