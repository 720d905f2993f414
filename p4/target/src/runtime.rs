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
//!
//! Index convention: `counters` and `meters` have one element per entry of
//! `info.counters` / `info.meters`, direct ones included (those elements
//! have no cells; direct cells live in the table entries), so the dense
//! index of an object is its position in the `ProgramInfo` slice.
//!
//! Randomness (`random`, `HashAlgorithm.random`) comes from a seeded
//! SplitMix64 generator each `Runtime` owns ([`Runtime::set_seed`]), so
//! switches sharing a thread (the simulator's) draw their own sequences.

use crate::externs::{BitPacker, Counter, Meter, MeterConfig, Register, Rng};
use crate::info::{HashAlgorithm, MatchKind, ProgramInfo};
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
    /// A group or entry names a member or group that does not exist.
    #[error("{0}")]
    MissingRef(String),
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
    /// Packet trace recorder: off unless the driver traces this packet.
    pub trace: crate::trace::Tracer,
    /// Generator behind `random` and `HashAlgorithm.random`; deterministic
    /// default seed.
    rng: Rng,
}

/// Counter cell contents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CounterData {
    /// Bytes counted.
    pub bytes: u64,
    /// Packets counted.
    pub packets: u64,
}

/// One entry of a [`RuntimeApi::table_entries_page`], with what a read
/// may report about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryRow {
    /// The entry.
    pub entry: TableEntry,
    /// Insertion order: rows sorted by `seq` are in insertion order.
    pub seq: u64,
    /// Its direct counter (tables with one).
    pub counter: Option<CounterData>,
    /// The idle clock at its last hit (idle-timeout tables).
    pub last_hit: Option<u64>,
}

/// Where a live entry is: its insertion number and handle. Places sort
/// by `seq` first, that is in insertion order; the pair names one
/// insertion, so a place outlives neither a delete nor the reuse of its
/// handle (see [`RuntimeApi::table_rows_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryPlace {
    /// The entry's insertion number (per table, increasing).
    pub seq: u64,
    /// Its handle in the table.
    pub handle: u32,
}

/// The control-plane API, implemented for [`Runtime`] below. Every method
/// validates all of its arguments before it changes anything.
pub trait RuntimeApi {
    /// Inserts an entry.
    fn table_insert(&mut self, table_id: u32, entry: TableEntry) -> Result<(), RuntimeError> {
        self.table_insert_ref(table_id, &entry)
    }
    /// Inserts an entry the caller keeps (no copy of it is made; the
    /// table stores its own form).
    fn table_insert_ref(&mut self, table_id: u32, entry: &TableEntry) -> Result<(), RuntimeError>;
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
    /// Up to `max` entries of a table in entry-handle order, from handle
    /// `from` on, and the handle to continue from (`None`: no more). Lets
    /// a reader take a large table in short steps between packets.
    fn table_entries_page(
        &self,
        table_id: u32,
        from: u32,
        max: usize,
    ) -> Result<(Vec<EntryRow>, Option<u32>), RuntimeError>;
    /// Where up to `max` live entries of a table are, from handle `from`
    /// on, and the handle to continue from (`None`: no more). Cheap per
    /// entry (no entry is copied): a reader gathers a large table's places
    /// in a few steps, sorts them into insertion order and takes the
    /// entries with [`Self::table_rows_at`] a short step at a time.
    fn table_entry_places(
        &self,
        table_id: u32,
        from: u32,
        max: usize,
    ) -> Result<(Vec<EntryPlace>, Option<u32>), RuntimeError>;
    /// The entries at `at`, in that order; a place whose entry has been
    /// deleted since is skipped.
    fn table_rows_at(
        &self,
        table_id: u32,
        at: &[EntryPlace],
    ) -> Result<Vec<EntryRow>, RuntimeError>;
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
    #[allow(clippy::type_complexity)]
    fn groups(&self, profile_id: u32) -> Result<Vec<(u32, Vec<(u32, u32)>)>, RuntimeError>;

    /// Reads an indirect counter cell.
    fn counter_read(&self, counter_id: u32, index: u32) -> Result<CounterData, RuntimeError>;
    /// Overwrites an indirect counter cell.
    fn counter_write(
        &mut self,
        counter_id: u32,
        index: u32,
        data: CounterData,
    ) -> Result<(), RuntimeError>;
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
    fn meter_set(
        &mut self,
        meter_id: u32,
        index: u32,
        config: Option<MeterConfig>,
    ) -> Result<(), RuntimeError>;
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
    fn register_write(
        &mut self,
        register_id: u32,
        index: u32,
        value: u128,
    ) -> Result<(), RuntimeError>;
    /// Replaces the members of a parser value set: (value, mask) pairs.
    fn value_set_write(
        &mut self,
        value_set_id: u32,
        members: &[(u128, u128)],
    ) -> Result<(), RuntimeError>;
    /// The members of a parser value set, in the order written.
    fn value_set_members(&self, value_set_id: u32) -> Result<Vec<(u128, u128)>, RuntimeError>;

    /// The entry with these matches and priority.
    fn table_entry(
        &self,
        table_id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
    ) -> Result<TableEntry, RuntimeError> {
        self.table_entries(table_id)?
            .into_iter()
            .find(|e| e.matches == matches && e.priority == priority)
            .ok_or(RuntimeError::NotFound { table: "table" })
    }

    /// Advances the idle clock of every table with idle timeout to
    /// `now_ns` (see [`crate::table::Table::set_idle_clock`]).
    fn set_idle_clock(&mut self, _now_ns: u64) {}

    /// The idle clock at the last hit (or insertion) of an entry of a
    /// table with idle timeout.
    fn entry_last_hit(
        &self,
        table_id: u32,
        _matches: &[Option<FieldMatch>],
        _priority: i32,
    ) -> Result<u64, RuntimeError> {
        Err(unknown("idle-timeout table", table_id))
    }
}

// ----- construction and per-packet helpers ---------------------------------

fn unknown(kind: &'static str, id: u32) -> RuntimeError {
    RuntimeError::UnknownId { kind, id }
}

/// The control-plane register API carries `u128` cell values: registers
/// wider than 128 bits are not readable or writable through it yet.
fn refuse_wide_register(r: &Register) -> Result<(), RuntimeError> {
    if r.is_wide() {
        return Err(RuntimeError::Invalid {
            field: r.info.name.into(),
            reason: format!(
                "cells of {} bits: the register API carries at most 128 bits yet",
                r.info.bitwidth
            ),
        });
    }
    Ok(())
}

fn bad_index(index: u32, size: u32, what: &str) -> RuntimeError {
    RuntimeError::Invalid {
        field: "index".into(),
        reason: format!("{index} is out of range for {what} ({size} cells)"),
    }
}

impl Runtime {
    /// All program state in its initial form: tables with their const
    /// entries and initial default actions, empty profiles, zeroed
    /// counters and registers, unconfigured (green) meters, empty value
    /// sets, the random generator at its default seed.
    ///
    /// `counters` and `meters` have one element per `info.counters` /
    /// `info.meters` entry, so a dense index means the same object in both;
    /// the elements for direct counters and meters have no cells (their
    /// cells live in the table entries).
    pub fn new(info: &'static ProgramInfo) -> Self {
        Runtime {
            info,
            tables: info
                .tables
                .iter()
                .map(|t| Table::with_program(t, info))
                .collect(),
            profiles: info
                .action_profiles
                .iter()
                .map(|p| ActionProfile::with_program(p, info))
                .collect(),
            counters: info.counters.iter().map(Counter::new).collect(),
            meters: info.meters.iter().map(Meter::new).collect(),
            registers: info.registers.iter().map(Register::new).collect(),
            value_sets: info
                .value_sets
                .iter()
                .map(|_| ValueSet::default())
                .collect(),
            digests: Vec::new(),
            trace: Default::default(),
            rng: Rng::default(),
        }
    }

    /// Restarts the random sequence (`random`, `HashAlgorithm.random`).
    pub fn set_seed(&mut self, seed: u64) {
        self.rng.set_seed(seed);
    }

    /// v1model `random(result, lo, hi)`: a value in `lo..=hi`. Always
    /// inlined, drawing and mapping here: generated code passes constant
    /// bounds, so the mapping folds away (RED's `random(r, 0, 65535)`
    /// becomes one AND) and a draw is an add and the mix on the state.
    /// The same draws and values as [`Rng::range`].
    #[inline(always)]
    pub fn random(&mut self, lo: u128, hi: u128) -> u128 {
        if hi > lo
            && let Ok(span) = u64::try_from(hi - lo)
        {
            return lo + u128::from(Rng::pick(span, self.rng.next_u64()));
        }
        self.rng.range(lo, hi)
    }

    /// [`crate::externs::hash`], drawing `HashAlgorithm::Random` from the
    /// seeded generator behind [`Runtime::set_seed`] so runs are reproducible.
    #[inline]
    pub fn hash(&mut self, algorithm: HashAlgorithm, input: &BitPacker) -> u64 {
        match algorithm {
            HashAlgorithm::Random => self.rng.next_u64(),
            _ => crate::externs::hash(algorithm, input),
        }
    }

    /// [`Runtime::hash`] of a field list of whole bytes packed into `bytes`
    /// ([`crate::externs::hash_bytes`]).
    #[inline]
    pub fn hash_bytes<const N: usize>(&mut self, algorithm: HashAlgorithm, bytes: &[u8; N]) -> u64 {
        match algorithm {
            HashAlgorithm::Random => self.rng.next_u64(),
            _ => crate::externs::hash_bytes(algorithm, bytes),
        }
    }

    fn table_index(&self, id: u32) -> Result<usize, RuntimeError> {
        self.info
            .tables
            .iter()
            .position(|t| t.id == id)
            .ok_or(unknown("table", id))
    }

    fn profile_index(&self, id: u32) -> Result<usize, RuntimeError> {
        self.info
            .action_profiles
            .iter()
            .position(|p| p.id == id)
            .ok_or(unknown("action profile", id))
    }

    fn counter_index(&self, id: u32) -> Result<usize, RuntimeError> {
        self.info
            .counters
            .iter()
            .position(|c| c.id == id && c.direct_table.is_none())
            .ok_or(unknown("counter", id))
    }

    fn meter_index(&self, id: u32) -> Result<usize, RuntimeError> {
        self.info
            .meters
            .iter()
            .position(|m| m.id == id && m.direct_table.is_none())
            .ok_or(unknown("meter", id))
    }

    fn register_index(&self, id: u32) -> Result<usize, RuntimeError> {
        self.info
            .registers
            .iter()
            .position(|r| r.id == id)
            .ok_or(unknown("register", id))
    }

    /// The profile index behind a table's `implementation`, if any.
    fn implementation(&self, ti: usize) -> Result<Option<usize>, RuntimeError> {
        match self.tables[ti].info.implementation {
            Some(pid) => self.profile_index(pid).map(Some),
            None => Ok(None),
        }
    }

    /// Checks a member/group reference of an entry of table `ti` against
    /// the table's profile; returns that profile's index.
    fn check_entry_ref(
        &self,
        ti: usize,
        action: &EntryAction,
    ) -> Result<Option<usize>, RuntimeError> {
        let pi = self.implementation(ti)?;
        if let Some(pi) = pi {
            self.profiles[pi].check_ref(action)?;
        }
        Ok(pi)
    }

    /// Number of entries, across the tables sharing profile `profile_id`,
    /// that point at `action` (diagnostics and tests).
    pub fn profile_users(&self, profile_id: u32, action: &EntryAction) -> usize {
        self.tables
            .iter()
            .filter(|t| t.info.implementation == Some(profile_id))
            .flat_map(|t| t.actions())
            .filter(|a| *a == action)
            .count()
    }

    fn direct_entry(
        &self,
        table_id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
        need_meter: bool,
    ) -> Result<(usize, crate::table::EntryRef), RuntimeError> {
        let ti = self.table_index(table_id)?;
        let table = &self.tables[ti];
        let has = if need_meter {
            table.info.direct_meter.is_some()
        } else {
            table.info.direct_counter.is_some()
        };
        if !has {
            return Err(RuntimeError::Invalid {
                field: "table_entry".into(),
                reason: format!(
                    "{} has no direct {}",
                    table.info.name,
                    if need_meter { "meter" } else { "counter" }
                ),
            });
        }
        Ok((ti, table.find(matches, priority)?))
    }
}

impl RuntimeApi for Runtime {
    fn table_insert_ref(&mut self, table_id: u32, entry: &TableEntry) -> Result<(), RuntimeError> {
        let ti = self.table_index(table_id)?;
        if self.implementation(ti)?.is_none() {
            // No profile to reference: `insert` validates everything
            // before it changes anything, so one pass is enough.
            self.tables[ti].insert_ref(entry)?;
        } else {
            self.tables[ti].check_insert(entry)?;
            let pi = self.check_entry_ref(ti, &entry.action)?;
            self.tables[ti].insert_ref(entry)?;
            if let Some(pi) = pi {
                self.profiles[pi].acquire(&entry.action);
            }
        }
        tracing::debug!(
            table = self.tables[ti].info.name,
            entries = self.tables[ti].len(),
            "entry inserted"
        );
        Ok(())
    }

    fn table_modify(&mut self, table_id: u32, entry: TableEntry) -> Result<(), RuntimeError> {
        let ti = self.table_index(table_id)?;
        self.tables[ti].check_modify(&entry)?;
        let pi = self.check_entry_ref(ti, &entry.action)?;
        let action = entry.action.clone();
        let old = self.tables[ti].modify(entry)?;
        if let Some(pi) = pi {
            self.profiles[pi].acquire(&action);
            self.profiles[pi].release(&old);
        }
        Ok(())
    }

    fn table_delete(
        &mut self,
        table_id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
    ) -> Result<(), RuntimeError> {
        let ti = self.table_index(table_id)?;
        let pi = self.implementation(ti)?;
        let old = self.tables[ti].delete(matches, priority)?;
        if let Some(pi) = pi {
            self.profiles[pi].release(&old.action);
        }
        tracing::debug!(
            table = self.tables[ti].info.name,
            entries = self.tables[ti].len(),
            "entry deleted"
        );
        Ok(())
    }

    fn table_entries(&self, table_id: u32) -> Result<Vec<TableEntry>, RuntimeError> {
        Ok(self.tables[self.table_index(table_id)?].entries())
    }

    fn table_entries_page(
        &self,
        table_id: u32,
        from: u32,
        max: usize,
    ) -> Result<(Vec<EntryRow>, Option<u32>), RuntimeError> {
        Ok(self.tables[self.table_index(table_id)?].page(from, max))
    }

    fn table_entry_places(
        &self,
        table_id: u32,
        from: u32,
        max: usize,
    ) -> Result<(Vec<EntryPlace>, Option<u32>), RuntimeError> {
        Ok(self.tables[self.table_index(table_id)?].places(from, max))
    }

    fn table_rows_at(
        &self,
        table_id: u32,
        at: &[EntryPlace],
    ) -> Result<Vec<EntryRow>, RuntimeError> {
        Ok(self.tables[self.table_index(table_id)?].rows_at(at))
    }

    fn table_set_default(&mut self, table_id: u32, action: ActionCall) -> Result<(), RuntimeError> {
        let ti = self.table_index(table_id)?;
        self.tables[ti].set_default(action)
    }

    fn table_reset_default(&mut self, table_id: u32) -> Result<(), RuntimeError> {
        let ti = self.table_index(table_id)?;
        self.tables[ti].reset_default()
    }

    fn table_default(&self, table_id: u32) -> Result<ActionCall, RuntimeError> {
        Ok(self.tables[self.table_index(table_id)?].default_action())
    }

    fn table_clear(&mut self, table_id: u32) -> Result<(), RuntimeError> {
        let ti = self.table_index(table_id)?;
        let pi = self.implementation(ti)?;
        let removed = self.tables[ti].clear();
        tracing::debug!(
            table = self.tables[ti].info.name,
            removed = removed.len(),
            "table cleared"
        );
        if let Some(pi) = pi {
            for e in &removed {
                self.profiles[pi].release(&e.action);
            }
        }
        Ok(())
    }

    fn member_write(
        &mut self,
        profile_id: u32,
        member_id: u32,
        action: ActionCall,
        modify: bool,
    ) -> Result<(), RuntimeError> {
        let pi = self.profile_index(profile_id)?;
        // The action must be a table action of every table sharing the profile.
        for t in self
            .info
            .tables
            .iter()
            .filter(|t| t.implementation == Some(profile_id))
        {
            crate::table::check_member_action(t, &action)?;
        }
        crate::table::check_action_params(self.info, &action, "action")?;
        self.profiles[pi].write_member(member_id, action, modify)
    }

    fn member_delete(&mut self, profile_id: u32, member_id: u32) -> Result<(), RuntimeError> {
        let pi = self.profile_index(profile_id)?;
        self.profiles[pi].delete_member(member_id)
    }

    fn members(&self, profile_id: u32) -> Result<Vec<(u32, ActionCall)>, RuntimeError> {
        Ok(self.profiles[self.profile_index(profile_id)?].members())
    }

    fn group_write(
        &mut self,
        profile_id: u32,
        group_id: u32,
        members: &[(u32, u32)],
        modify: bool,
    ) -> Result<(), RuntimeError> {
        let pi = self.profile_index(profile_id)?;
        self.profiles[pi].write_group(group_id, members, modify)
    }

    fn group_delete(&mut self, profile_id: u32, group_id: u32) -> Result<(), RuntimeError> {
        let pi = self.profile_index(profile_id)?;
        self.profiles[pi].delete_group(group_id)
    }

    fn groups(&self, profile_id: u32) -> Result<Vec<(u32, Vec<(u32, u32)>)>, RuntimeError> {
        Ok(self.profiles[self.profile_index(profile_id)?].groups())
    }

    fn counter_read(&self, counter_id: u32, index: u32) -> Result<CounterData, RuntimeError> {
        let c = &self.counters[self.counter_index(counter_id)?];
        c.read(index)
            .ok_or_else(|| bad_index(index, c.len(), c.info.name))
    }

    fn counter_write(
        &mut self,
        counter_id: u32,
        index: u32,
        data: CounterData,
    ) -> Result<(), RuntimeError> {
        let ci = self.counter_index(counter_id)?;
        let c = &mut self.counters[ci];
        if c.write(index, data) {
            Ok(())
        } else {
            Err(bad_index(index, c.len(), c.info.name))
        }
    }

    fn direct_counter_read(
        &self,
        table_id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
    ) -> Result<CounterData, RuntimeError> {
        let (ti, r) = self.direct_entry(table_id, matches, priority, false)?;
        self.tables[ti]
            .direct_counter(r)
            .ok_or(RuntimeError::NotFound {
                table: self.tables[ti].info.name,
            })
    }

    fn direct_counter_write(
        &mut self,
        table_id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
        data: CounterData,
    ) -> Result<(), RuntimeError> {
        let (ti, r) = self.direct_entry(table_id, matches, priority, false)?;
        self.tables[ti].set_direct_counter(r, data);
        Ok(())
    }

    fn meter_set(
        &mut self,
        meter_id: u32,
        index: u32,
        config: Option<MeterConfig>,
    ) -> Result<(), RuntimeError> {
        let mi = self.meter_index(meter_id)?;
        check_meter_config(config)?;
        let m = &mut self.meters[mi];
        if m.configure(index, config) {
            Ok(())
        } else {
            Err(bad_index(index, m.len(), m.info.name))
        }
    }

    fn direct_meter_set(
        &mut self,
        table_id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
        config: Option<MeterConfig>,
    ) -> Result<(), RuntimeError> {
        let (ti, r) = self.direct_entry(table_id, matches, priority, true)?;
        check_meter_config(config)?;
        self.tables[ti].set_direct_meter(r, config);
        Ok(())
    }

    fn register_read(&self, register_id: u32, index: u32) -> Result<u128, RuntimeError> {
        let r = &self.registers[self.register_index(register_id)?];
        if index >= r.len() {
            return Err(bad_index(index, r.len(), r.info.name));
        }
        refuse_wide_register(r)?;
        Ok(r.read(index))
    }

    fn register_write(
        &mut self,
        register_id: u32,
        index: u32,
        value: u128,
    ) -> Result<(), RuntimeError> {
        let ri = self.register_index(register_id)?;
        let r = &mut self.registers[ri];
        if index >= r.len() {
            return Err(bad_index(index, r.len(), r.info.name));
        }
        refuse_wide_register(r)?;
        r.write(index, value);
        Ok(())
    }

    fn table_entry(
        &self,
        table_id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
    ) -> Result<TableEntry, RuntimeError> {
        let t = &self.tables[self.table_index(table_id)?];
        let r = t.find(matches, priority)?;
        t.entry(r)
            .ok_or(RuntimeError::NotFound { table: t.info.name })
    }

    fn set_idle_clock(&mut self, now_ns: u64) {
        for t in self.tables.iter_mut().filter(|t| t.info.idle_timeout) {
            t.set_idle_clock(now_ns);
        }
    }

    fn entry_last_hit(
        &self,
        table_id: u32,
        matches: &[Option<FieldMatch>],
        priority: i32,
    ) -> Result<u64, RuntimeError> {
        let t = &self.tables[self.table_index(table_id)?];
        if !t.info.idle_timeout {
            return Err(unknown("idle-timeout table", table_id));
        }
        let r = t.find(matches, priority)?;
        t.last_hit(r)
            .ok_or(RuntimeError::NotFound { table: t.info.name })
    }

    fn value_set_members(&self, value_set_id: u32) -> Result<Vec<(u128, u128)>, RuntimeError> {
        let vi = self
            .info
            .value_sets
            .iter()
            .position(|v| v.id == value_set_id)
            .ok_or(unknown("value set", value_set_id))?;
        Ok(self.value_sets[vi].members.clone())
    }

    fn value_set_write(
        &mut self,
        value_set_id: u32,
        members: &[(u128, u128)],
    ) -> Result<(), RuntimeError> {
        let vi = self
            .info
            .value_sets
            .iter()
            .position(|v| v.id == value_set_id)
            .ok_or(unknown("value set", value_set_id))?;
        let vinfo = &self.info.value_sets[vi];
        if members.len() > vinfo.size as usize {
            return Err(RuntimeError::Full {
                table: vinfo.name,
                size: vinfo.size,
            });
        }
        let m = crate::bits::mask(vinfo.bitwidth);
        for (i, &(v, k)) in members.iter().enumerate() {
            if v & !m != 0 || k & !m != 0 {
                return Err(RuntimeError::Invalid {
                    field: format!("members[{i}]"),
                    reason: format!("value or mask does not fit in {} bits", vinfo.bitwidth),
                });
            }
            if v & !k != 0 {
                return Err(RuntimeError::Invalid {
                    field: format!("members[{i}]"),
                    reason: format!("value {v:#x} has bits outside the mask {k:#x}"),
                });
            }
        }
        self.value_sets[vi].members = members.to_vec();
        Ok(())
    }
}

/// RFC 2698 requires PIR >= CIR (and bmv2 refuses otherwise).
fn check_meter_config(config: Option<MeterConfig>) -> Result<(), RuntimeError> {
    match config {
        Some(c) if c.pir < c.cir => Err(RuntimeError::Invalid {
            field: "config.pir".into(),
            reason: format!("peak rate {} is below the committed rate {}", c.pir, c.cir),
        }),
        _ => Ok(()),
    }
}
