//! Match-action table engines and action profiles (P4_16 specification
//! §14.2 "Tables"; entry semantics from the P4Runtime specification,
//! "TableEntry" and "ActionProfileMember/Group").
//!
//! CONTRACT (implemented by the target library; generated code relies on it):
//! - [`Table::new`] picks an engine from the key's match kinds: no key →
//!   every lookup misses; all exact → hash map (`exact.rs`); exact fields
//!   plus one LPM → a stride-8 trie whose lookup does not scan entries
//!   (`lpm.rs`); anything with ternary/range/optional (or several LPM fields,
//!   or an exact+LPM key over 512 bits) → tuple space search (`priority.rs`).
//! - [`Table::lookup`] takes one value per key field (masked to width) and
//!   never allocates; a key of the wrong length misses.
//! - The entry store keys entries by (canonical matches, priority), so
//!   modify/delete/read by key work; `size` is enforced; every entry and
//!   default action is validated against the [`TableInfo`] (and, when the
//!   table knows its [`ProgramInfo`], the action parameter widths) before
//!   anything changes (`validate.rs`). A failed call changes nothing.
//! - Each entry has a direct counter (bytes and packets, counted on every
//!   hit when the table has a `direct_counter`) and a direct meter cell
//!   (used when the table has a direct meter).
//! - Const entries from [`TableInfo::const_entries`] are installed by `new`;
//!   `is_const` refuses writes and `default_is_const` refuses default changes.
//! - Idle timeout (P4Runtime §9.1.8), for tables with `support_timeout`: a
//!   hit stores the table's idle clock in the entry (one store next to the
//!   counter it already touches); the control plane advances that clock
//!   ([`Table::set_idle_clock`], nanoseconds on its own clock, every scan)
//!   and reads [`Table::last_hit`]. Insertion counts as a hit. Tables
//!   without `support_timeout` store nothing.
//!
//! Member and group references are checked by the runtime, which owns the
//! action profiles ([`profile`]).

mod exact;
mod lpm;
mod priority;
pub mod profile;
mod validate;

use rustc_hash::FxHashMap;

use crate::externs::{MeterConfig, MeterState};
use crate::info::{CounterUnit, MatchKind, ProgramInfo, TableInfo};
use crate::runtime::{ActionCall, CounterData, EntryAction, FieldMatch, RuntimeError, TableEntry};

pub use profile::ActionProfile;

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

/// Which engine a table uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// No key: always the default action.
    Keyless,
    /// Hash map over exact keys.
    Exact,
    /// Multibit trie over exact fields ++ one LPM field.
    Lpm,
    /// Tuple space search with priorities.
    Priority,
}

#[derive(Debug)]
enum Engine {
    Keyless,
    Exact(exact::ExactEngine),
    Lpm(lpm::LpmEngine),
    Priority(priority::PriorityEngine),
}

impl Engine {
    fn for_table(info: &TableInfo) -> Engine {
        let widths: Vec<u32> = info.keys.iter().map(|k| k.bitwidth).collect();
        let lpm: Vec<usize> = (0..info.keys.len())
            .filter(|&i| info.keys[i].kind == MatchKind::Lpm)
            .collect();
        // Widths outside 1..=128 never come from the compiler; keep them
        // away from the shift arithmetic of the specialised engines.
        let sane = info.keys.iter().all(|k| (1..=128).contains(&k.bitwidth));
        let others_exact = sane
            && info
                .keys
                .iter()
                .all(|k| matches!(k.kind, MatchKind::Exact | MatchKind::Lpm));
        if info.keys.is_empty() {
            Engine::Keyless
        } else if lpm.is_empty() && others_exact {
            Engine::Exact(exact::ExactEngine::new(&widths))
        } else if lpm.len() == 1 && others_exact && widths.iter().sum::<u32>() <= lpm::MAX_KEY_BITS
        {
            Engine::Lpm(lpm::LpmEngine::new(&widths, lpm[0]))
        } else {
            Engine::Priority(priority::PriorityEngine::new(&widths))
        }
    }

    fn insert(&mut self, id: u32, matches: &[Option<FieldMatch>], priority: i32, seq: u64) {
        match self {
            Engine::Keyless => {}
            Engine::Exact(e) => e.insert(id, matches),
            Engine::Lpm(e) => e.insert(id, matches),
            Engine::Priority(e) => e.insert(id, matches, priority, seq),
        }
    }

    fn remove(&mut self, id: u32, matches: &[Option<FieldMatch>]) {
        match self {
            Engine::Keyless => {}
            Engine::Exact(e) => e.remove(matches),
            Engine::Lpm(e) => e.remove(id, matches),
            Engine::Priority(e) => e.remove(id),
        }
    }

    #[inline]
    fn lookup(&self, key: &[u128]) -> Option<u32> {
        match self {
            Engine::Keyless => None,
            Engine::Exact(e) => e.lookup(key),
            Engine::Lpm(e) => e.lookup(key),
            Engine::Priority(e) => e.lookup(key),
        }
    }
}

/// One stored entry: the control plane's view and the direct meter.
#[derive(Debug)]
struct Slot {
    entry: TableEntry,
    seq: u64,
    meter: MeterState,
    is_const: bool,
}

/// What a hit touches, kept apart from [`Slot`] in a dense array so that a
/// lookup reads one small record: the action (a copy of `Slot::entry.action`,
/// kept in step by insert and modify), the direct counter and the idle
/// clock at the last hit.
#[derive(Debug)]
struct Hot {
    action: EntryAction,
    counter: CounterData,
    last_hit: u64,
}

type EntryKey = (Box<[Option<FieldMatch>]>, i32);

/// One table.
#[derive(Debug)]
pub struct Table {
    /// Static description.
    pub info: &'static TableInfo,
    program: Option<&'static ProgramInfo>,
    engine: Engine,
    slots: Vec<Option<Slot>>,
    /// Parallel to `slots`; stale where the slot is free.
    hot: Vec<Hot>,
    free: Vec<u32>,
    keys: FxHashMap<EntryKey, u32>,
    default_action: EntryAction,
    next_seq: u64,
    len: usize,
    meter_unit: CounterUnit,
    /// Stored in an entry when it is hit (idle-timeout tables only).
    idle_clock: u64,
}

impl Table {
    /// An empty table with its initial default action and const entries.
    /// Without the [`ProgramInfo`], action parameters are not checked
    /// against their widths; [`Table::with_program`] checks them.
    pub fn new(info: &'static TableInfo) -> Self {
        Self::build(info, None)
    }

    /// As [`Table::new`], knowing the program (parameter widths, the direct
    /// meter's unit).
    pub fn with_program(info: &'static TableInfo, program: &'static ProgramInfo) -> Self {
        Self::build(info, Some(program))
    }

    fn build(info: &'static TableInfo, program: Option<&'static ProgramInfo>) -> Self {
        let meter_unit = info
            .direct_meter
            .and_then(|id| program?.meters.iter().find(|m| m.id == id))
            .map_or(CounterUnit::Bytes, |m| m.unit);
        let mut table = Table {
            info,
            program,
            engine: Engine::for_table(info),
            slots: Vec::new(),
            hot: Vec::new(),
            free: Vec::new(),
            keys: FxHashMap::default(),
            default_action: EntryAction::Direct(ActionCall::new(
                info.default_action.0,
                info.default_action.1,
            )),
            next_seq: 0,
            len: 0,
            meter_unit,
            idle_clock: 0,
        };
        let needs_priority = validate::needs_priority(info);
        let n = info.const_entries.len();
        for (i, c) in info.const_entries.iter().enumerate() {
            // Priorities come converted from the compiler; should one be
            // missing (<= 0) in a table that needs them, fall back to source
            // order (P4_16 §14.2.1.4: earlier entries win) rather than drop it.
            let priority = match (needs_priority, c.priority) {
                (false, _) => 0,
                (true, p) if p > 0 => p,
                (true, _) => i32::try_from(n - i).unwrap_or(i32::MAX),
            };
            let entry = TableEntry {
                matches: c.matches.to_vec(),
                priority,
                action: EntryAction::Direct(ActionCall::new(c.action_id, c.params)),
                metadata: Vec::new(),
            };
            match table
                .checked_key(&entry)
                .and_then(|key| table.check_new(&key).map(|()| key))
            {
                Ok(key) => {
                    table.commit_insert(key, entry, info.is_const);
                }
                Err(e) => {
                    tracing::warn!(table = info.name, index = i, error = %e, "const entry skipped")
                }
            }
        }
        table
    }

    /// The engine this table uses.
    pub fn engine_kind(&self) -> EngineKind {
        match self.engine {
            Engine::Keyless => EngineKind::Keyless,
            Engine::Exact(_) => EngineKind::Exact,
            Engine::Lpm(_) => EngineKind::Lpm,
            Engine::Priority(_) => EngineKind::Priority,
        }
    }

    /// Number of entries (const ones included).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table has no entries.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What [`Table::lookup`] returns for a key no entry matches (the
    /// default action): generated code takes it without building the key
    /// when the table [`is_empty`](Table::is_empty).
    #[inline]
    pub fn miss(&self) -> Lookup<'_> {
        Lookup {
            hit: false,
            entry: None,
            action: &self.default_action,
        }
    }

    /// Looks `key` up (one value per key field, in key order) and counts
    /// `packet_len` bytes on the hit entry's direct counter, if any.
    #[inline]
    pub fn lookup(&mut self, key: &[u128], packet_len: u32) -> Lookup<'_> {
        let found = if key.len() == self.info.keys.len() {
            self.engine.lookup(key)
        } else {
            None
        };
        if let Some(id) = found
            && let Some(hot) = self.hot.get_mut(id as usize)
        {
            if self.info.direct_counter.is_some() {
                hot.counter.bytes = hot.counter.bytes.wrapping_add(packet_len as u64);
                hot.counter.packets = hot.counter.packets.wrapping_add(1);
            }
            if self.info.idle_timeout {
                hot.last_hit = self.idle_clock;
            }
            return Lookup {
                hit: true,
                entry: Some(EntryRef(id)),
                action: &hot.action,
            };
        }
        Lookup {
            hit: false,
            entry: None,
            action: &self.default_action,
        }
    }

    /// Executes the direct meter of `entry` for a packet of `len` bytes at
    /// `now_ns`; returns the v1model colour (0 green, 1 yellow, 2 red).
    /// Green for a stale handle or a table without a direct meter.
    #[inline]
    pub fn direct_meter_execute(&mut self, entry: EntryRef, now_ns: u64, len: u32) -> u8 {
        let units = crate::externs::meter_units(self.meter_unit, len);
        match self.slots.get_mut(entry.0 as usize) {
            Some(Some(slot)) if self.info.direct_meter.is_some() => {
                slot.meter.execute(now_ns, units) as u8
            }
            _ => 0,
        }
    }

    // ----- control plane -------------------------------------------------

    /// Validates matches and priority; returns the store key.
    fn checked_key(&self, entry: &TableEntry) -> Result<EntryKey, RuntimeError> {
        let matches = validate::canonical_matches(self.info, &entry.matches)?;
        validate::check_priority(self.info, entry.priority)?;
        validate::check_entry_action(self.info, self.program, &entry.action)?;
        Ok((matches, entry.priority))
    }

    /// Store key for a delete/read by key.
    fn key_of(
        &self,
        matches: &[Option<FieldMatch>],
        priority: i32,
    ) -> Result<EntryKey, RuntimeError> {
        let matches = validate::canonical_matches(self.info, matches)?;
        validate::check_priority(self.info, priority)?;
        Ok((matches, priority))
    }

    fn check_new(&self, key: &EntryKey) -> Result<(), RuntimeError> {
        if self.keys.contains_key(key) {
            return Err(RuntimeError::AlreadyExists {
                table: self.info.name,
            });
        }
        if self.info.keys.is_empty() {
            return Err(RuntimeError::Invalid {
                field: "match".into(),
                reason: format!("{} has no key: it cannot hold entries", self.info.name),
            });
        }
        if self.len >= self.info.size as usize {
            return Err(RuntimeError::Full {
                table: self.info.name,
                size: self.info.size,
            });
        }
        Ok(())
    }

    fn refuse_if_const(&self) -> Result<(), RuntimeError> {
        if self.info.is_const {
            return Err(RuntimeError::NotPermitted(format!(
                "{} has const entries: its entries cannot be changed",
                self.info.name
            )));
        }
        Ok(())
    }

    fn commit_insert(&mut self, key: EntryKey, mut entry: TableEntry, is_const: bool) -> EntryRef {
        entry.matches = key.0.to_vec();
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        self.engine.insert(id, &key.0, key.1, seq);
        let hot = Hot {
            action: entry.action.clone(),
            counter: CounterData::default(),
            last_hit: self.idle_clock,
        };
        if self.hot.len() == id as usize {
            self.hot.push(hot);
        } else {
            self.hot[id as usize] = hot;
        }
        self.slots[id as usize] = Some(Slot {
            entry,
            seq,
            meter: MeterState::default(),
            is_const,
        });
        self.keys.insert(key, id);
        self.len += 1;
        EntryRef(id)
    }

    /// Checks that `entry` could be inserted, without inserting it.
    pub fn check_insert(&self, entry: &TableEntry) -> Result<(), RuntimeError> {
        self.refuse_if_const()?;
        let key = self.checked_key(entry)?;
        self.check_new(&key)
    }

    /// Inserts an entry (member/group references are the caller's to check).
    pub fn insert(&mut self, entry: TableEntry) -> Result<EntryRef, RuntimeError> {
        self.refuse_if_const()?;
        let key = self.checked_key(&entry)?;
        self.check_new(&key)?;
        Ok(self.commit_insert(key, entry, false))
    }

    /// Checks that `entry` could replace an existing one; returns its handle.
    pub fn check_modify(&self, entry: &TableEntry) -> Result<EntryRef, RuntimeError> {
        self.refuse_if_const()?;
        let key = self.checked_key(entry)?;
        self.keys
            .get(&key)
            .map(|&id| EntryRef(id))
            .ok_or(RuntimeError::NotFound {
                table: self.info.name,
            })
    }

    /// Replaces the action and cookie of an existing entry (counters and
    /// meter state stay); returns the old action.
    pub fn modify(&mut self, entry: TableEntry) -> Result<EntryAction, RuntimeError> {
        let r = self.check_modify(&entry)?;
        let Some(Some(slot)) = self.slots.get_mut(r.0 as usize) else {
            return Err(RuntimeError::NotFound {
                table: self.info.name,
            });
        };
        slot.entry.metadata = entry.metadata;
        self.hot[r.0 as usize].action = entry.action.clone();
        Ok(std::mem::replace(&mut slot.entry.action, entry.action))
    }

    /// The handle of the entry with these matches and priority.
    pub fn find(
        &self,
        matches: &[Option<FieldMatch>],
        priority: i32,
    ) -> Result<EntryRef, RuntimeError> {
        let key = self.key_of(matches, priority)?;
        self.keys
            .get(&key)
            .map(|&id| EntryRef(id))
            .ok_or(RuntimeError::NotFound {
                table: self.info.name,
            })
    }

    /// The entry behind a handle.
    pub fn entry(&self, r: EntryRef) -> Option<&TableEntry> {
        self.slot(r).map(|s| &s.entry)
    }

    fn slot(&self, r: EntryRef) -> Option<&Slot> {
        self.slots.get(r.0 as usize).and_then(|s| s.as_ref())
    }

    fn slot_mut(&mut self, r: EntryRef) -> Option<&mut Slot> {
        self.slots.get_mut(r.0 as usize).and_then(|s| s.as_mut())
    }

    /// Checks that the entry may be deleted; returns its handle.
    pub fn check_delete(
        &self,
        matches: &[Option<FieldMatch>],
        priority: i32,
    ) -> Result<EntryRef, RuntimeError> {
        self.refuse_if_const()?;
        self.find(matches, priority)
    }

    /// Deletes the entry with these matches and priority; returns it.
    pub fn delete(
        &mut self,
        matches: &[Option<FieldMatch>],
        priority: i32,
    ) -> Result<TableEntry, RuntimeError> {
        let r = self.check_delete(matches, priority)?;
        Ok(self.remove(r))
    }

    fn remove(&mut self, r: EntryRef) -> TableEntry {
        let slot = self.slots[r.0 as usize]
            .take()
            .expect("handle from the key store");
        let key: EntryKey = (slot.entry.matches.clone().into(), slot.entry.priority);
        self.engine.remove(r.0, &key.0);
        self.keys.remove(&key);
        self.free.push(r.0);
        self.len -= 1;
        slot.entry
    }

    /// Removes every entry that is not const; returns them.
    pub fn clear(&mut self) -> Vec<TableEntry> {
        let doomed: Vec<EntryRef> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                s.as_ref()
                    .filter(|s| !s.is_const)
                    .map(|_| EntryRef(i as u32))
            })
            .collect();
        doomed.into_iter().map(|r| self.remove(r)).collect()
    }

    /// All entries in insertion order.
    pub fn entries(&self) -> Vec<TableEntry> {
        let mut live: Vec<&Slot> = self.slots.iter().flatten().collect();
        live.sort_by_key(|s| s.seq);
        live.into_iter().map(|s| s.entry.clone()).collect()
    }

    /// All entry actions (for reference counting by the runtime).
    pub(crate) fn actions(&self) -> impl Iterator<Item = &EntryAction> {
        self.slots.iter().flatten().map(|s| &s.entry.action)
    }

    /// The current default action.
    pub fn default_action(&self) -> ActionCall {
        match &self.default_action {
            EntryAction::Direct(c) => c.clone(),
            // Only direct actions are ever stored as default.
            _ => ActionCall::new(self.info.default_action.0, self.info.default_action.1),
        }
    }

    /// Checks that `action` could become the default action.
    pub fn check_default(&self, action: &ActionCall) -> Result<(), RuntimeError> {
        if self.info.default_is_const {
            return Err(RuntimeError::NotPermitted(format!(
                "{} has a const default action",
                self.info.name
            )));
        }
        validate::check_default_action(self.info, self.program, action)
    }

    /// Sets the default action.
    pub fn set_default(&mut self, action: ActionCall) -> Result<(), RuntimeError> {
        self.check_default(&action)?;
        self.default_action = EntryAction::Direct(action);
        Ok(())
    }

    /// Restores the program's initial default action.
    pub fn reset_default(&mut self) -> Result<(), RuntimeError> {
        let initial = ActionCall::new(self.info.default_action.0, self.info.default_action.1);
        if self.info.default_is_const {
            return Err(RuntimeError::NotPermitted(format!(
                "{} has a const default action",
                self.info.name
            )));
        }
        self.default_action = EntryAction::Direct(initial);
        Ok(())
    }

    /// Advances the idle clock to `now_ns` (it never goes back): hits from
    /// now on record it.
    pub fn set_idle_clock(&mut self, now_ns: u64) {
        self.idle_clock = self.idle_clock.max(now_ns);
    }

    /// The idle clock at the entry's last hit (or its insertion); `None`
    /// for a stale handle.
    pub fn last_hit(&self, r: EntryRef) -> Option<u64> {
        self.slot(r).map(|_| self.hot[r.0 as usize].last_hit)
    }

    /// The direct counter of an entry.
    pub fn direct_counter(&self, r: EntryRef) -> Option<CounterData> {
        self.slot(r).map(|_| self.hot[r.0 as usize].counter)
    }

    /// Overwrites the direct counter of an entry; false for a stale handle.
    pub fn set_direct_counter(&mut self, r: EntryRef, data: CounterData) -> bool {
        if self.slot(r).is_none() {
            return false;
        }
        self.hot[r.0 as usize].counter = data;
        true
    }

    /// Configures the direct meter of an entry; false for a stale handle.
    pub fn set_direct_meter(&mut self, r: EntryRef, config: Option<MeterConfig>) -> bool {
        self.slot_mut(r)
            .map(|s| s.meter.configure(config))
            .is_some()
    }

    /// The direct meter configuration of an entry.
    pub fn direct_meter_config(&self, r: EntryRef) -> Option<MeterConfig> {
        self.slot(r).and_then(|s| s.meter.config())
    }
}

/// Checks that a member's action may run as an entry action of `table`.
pub(crate) fn check_member_action(
    table: &TableInfo,
    action: &ActionCall,
) -> Result<(), RuntimeError> {
    validate::check_action_scope(table, action.action_id, false, "action")
}

/// Checks an action's parameters against the program.
pub(crate) fn check_action_params(
    program: &ProgramInfo,
    action: &ActionCall,
    field: &str,
) -> Result<(), RuntimeError> {
    validate::check_params(Some(program), action, field)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::{ActionRef, ActionScope, ConstEntryInfo, KeyInfo};

    static KEYS: [KeyInfo; 1] = [KeyInfo {
        id: 1,
        name: "h.x",
        bitwidth: 8,
        kind: MatchKind::Ternary,
    }];
    static ENTRIES: [ConstEntryInfo; 3] = [
        ConstEntryInfo {
            matches: &[Some(FieldMatch::Ternary {
                value: 0x10,
                mask: 0xf0,
            })],
            priority: 0,
            action_id: 1,
            params: &[1],
        },
        ConstEntryInfo {
            matches: &[None],
            priority: 0,
            action_id: 1,
            params: &[2],
        },
        // Not an action of the table: skipped, not a panic.
        ConstEntryInfo {
            matches: &[Some(FieldMatch::Ternary {
                value: 0x11,
                mask: 0xff,
            })],
            priority: 9,
            action_id: 7,
            params: &[],
        },
    ];
    static T: TableInfo = TableInfo {
        id: 0x0200_0001,
        name: "t",
        keys: &KEYS,
        actions: &[ActionRef {
            id: 1,
            scope: ActionScope::TableAndDefault,
        }],
        size: 8,
        implementation: None,
        default_action: (1, &[0]),
        default_is_const: false,
        is_const: true,
        const_entries: &ENTRIES,
        direct_counter: None,
        direct_meter: None,
        idle_timeout: false,
    };

    fn param(l: &Lookup<'_>) -> u128 {
        match l.action {
            EntryAction::Direct(c) => c.params[0],
            _ => unreachable!(),
        }
    }

    static EXACT_KEY: [KeyInfo; 1] = [KeyInfo {
        id: 1,
        name: "h.x",
        bitwidth: 8,
        kind: MatchKind::Exact,
    }];
    static IDLE: TableInfo = TableInfo {
        id: 0x0200_0002,
        name: "idle",
        keys: &EXACT_KEY,
        actions: &[ActionRef {
            id: 1,
            scope: ActionScope::TableAndDefault,
        }],
        size: 8,
        implementation: None,
        default_action: (1, &[0]),
        default_is_const: false,
        is_const: false,
        const_entries: &[],
        direct_counter: None,
        direct_meter: None,
        idle_timeout: true,
    };

    #[test]
    fn hits_record_the_idle_clock_and_insertion_counts_as_a_hit() {
        let mut t = Table::new(&IDLE);
        t.set_idle_clock(100);
        let e = TableEntry {
            matches: vec![Some(FieldMatch::Exact(7))],
            priority: 0,
            action: EntryAction::Direct(ActionCall::new(1, &[1])),
            metadata: vec![],
        };
        let r = t.insert(e).unwrap();
        assert_eq!(t.last_hit(r), Some(100));
        t.set_idle_clock(250);
        assert_eq!(t.last_hit(r), Some(100), "no hit, no change");
        assert!(!t.lookup(&[8], 64).hit);
        assert_eq!(t.last_hit(r), Some(100), "a miss records nothing");
        assert!(t.lookup(&[7], 64).hit);
        assert_eq!(t.last_hit(r), Some(250));
        t.set_idle_clock(200);
        assert!(t.lookup(&[7], 64).hit);
        assert_eq!(t.last_hit(r), Some(250), "the clock never goes back");
    }

    #[test]
    fn const_entries_without_priorities_keep_source_order() {
        let mut t = Table::new(&T);
        assert_eq!(t.len(), 2);
        assert_eq!(param(&t.lookup(&[0x11], 0)), 1);
        assert_eq!(param(&t.lookup(&[0x21], 0)), 2);
        // A wrong-length key misses instead of panicking.
        let l = t.lookup(&[0x11, 0], 0);
        assert!(!l.hit);
        assert_eq!(param(&l), 0);
        assert!(matches!(
            t.insert(TableEntry {
                matches: vec![None],
                priority: 5,
                action: EntryAction::Direct(ActionCall::new(1, &[3])),
                metadata: vec![],
            }),
            Err(RuntimeError::NotPermitted(_))
        ));
    }
}
