//! Match-action table engines and action profiles (P4_16 specification
//! §14.2 "Tables"; entry semantics from the P4Runtime specification,
//! "TableEntry" and "ActionProfileMember/Group").
//!
//! CONTRACT (implemented by the target library; generated code relies on it):
//! - [`Table::new`] picks an engine from the key's match kinds: no key →
//!   every lookup misses; all exact → hash map (`exact.rs`); exact fields
//!   plus one LPM → a poptrie whose lookup does not scan entries
//!   (`lpm.rs`); anything with ternary/range/optional (or several LPM fields,
//!   or an exact+LPM key over 512 bits) → tuple space search (`priority.rs`).
//! - [`Table::lookup`] takes one value per key field (masked to width) and
//!   never allocates; a key of the wrong length misses.
//!   [`Table::lookup_packed`] takes the same key packed into one `u128`
//!   (key order, first field highest; at most 128 bits): generated code
//!   uses it for all-exact and exact+LPM tables, whose engine it knows.
//! - Entries are found by (canonical matches, priority), so
//!   modify/delete/read by key work (exact and LPM engines find them
//!   themselves, the priority engine through an index of key records);
//!   `size` is enforced; every entry and
//!   default action is validated against the [`TableInfo`] (and, when the
//!   table knows its [`ProgramInfo`], the action parameter widths) before
//!   anything changes (`validate.rs`). A failed call changes nothing.
//! - An entry has a direct counter (bytes and packets, counted on every
//!   hit) when the table has a `direct_counter`, and a direct meter cell
//!   when it has a direct meter; tables without them store neither.
//! - Entry actions are interned: entries with the same action share one
//!   copy, and a hit reads the entry's 4-byte index into that pool.
//!   Tables that know their program and are declared with at most
//!   [`WORDS_MAX_SIZE`] entries also keep each entry's action as an
//!   action word (`word.rs`): [`Table::lookup_packed_word`] hands it out,
//!   one load after the entry id, parameters included.
//! - [`Table::page`] hands out entries a bounded number at a time, so a
//!   reader never holds the owning thread for the whole table.
//! - Const entries from [`TableInfo::const_entries`] are installed by `new`;
//!   `is_const` refuses writes and `default_is_const` refuses default changes.
//! - Idle timeout (P4Runtime §9.1.8), for tables with `support_timeout`: a
//!   hit stores the table's idle clock in the entry's slot of a per-entry
//!   array; the control plane advances that clock
//!   ([`Table::set_idle_clock`], nanoseconds on its own clock, every scan)
//!   and reads [`Table::last_hit`]. Insertion counts as a hit. Tables
//!   without `support_timeout` store nothing.
//!
//! Member and group references are checked by the runtime, which owns the
//! action profiles ([`profile`]).

mod bitstage;
mod exact;
#[cfg(test)]
mod fixtures;
mod lpm;
mod priority;
pub mod profile;
mod records;
pub mod route_sets;
mod validate;
pub mod word;

use std::hash::{Hash, Hasher};

use hashbrown::HashTable;
use rustc_hash::{FxHashMap, FxHasher};

use crate::externs::{MeterConfig, MeterState};
use crate::info::{CounterUnit, MatchKind, ProgramInfo, TableInfo};
use crate::runtime::{
    ActionCall, CounterData, EntryAction, EntryPlace, EntryRow, FieldMatch, RuntimeError,
    TableEntry,
};

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

/// Result of a lookup as an action word ([`Table::lookup_packed_word`]).
#[derive(Clone, Copy, Debug)]
pub struct WordLookup {
    /// Whether an entry matched (false: the default action runs).
    pub hit: bool,
    /// The matched entry, for direct meters.
    pub entry: Option<EntryRef>,
    /// The entry's action (or the default action) as a word; its tag is
    /// [`word::NOT_INLINE`] when the caller must read it with
    /// [`Table::action_of`].
    pub word: u128,
}

/// Largest declared size of a table that keeps action words (16 bytes an
/// entry beside the 4-byte pool index, at most 1 MiB a table): the small
/// tables every packet meets. Larger ones (routes by the million) keep
/// only the pool, and their words say [`word::NOT_INLINE`].
pub const WORDS_MAX_SIZE: u32 = 1 << 16;

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

// One engine per table, so the size of the largest variant costs nothing;
// boxing it would add a dependent load to every lookup. An explicit tag
// byte: with the tag in a niche of an engine's field, every lookup decoded
// it (load, xor, test, cmov) before its jump.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
#[repr(u8)]
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
            Engine::Lpm(lpm::LpmEngine::new(&widths, lpm[0], info.size))
        } else {
            let ranged: Vec<bool> = info
                .keys
                .iter()
                .map(|k| k.kind == MatchKind::Range)
                .collect();
            Engine::Priority(priority::PriorityEngine::new(&widths, &ranged))
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

/// Marks a free entry id in `Table::actions`.
const FREE: u32 = u32::MAX;

/// One table.
///
/// Entries are numbered by dense ids (reused after deletion). Per id the
/// table keeps only what it must, each in an array of its own: the index
/// of the entry's action in an interned pool (`pool`: routes share next
/// hops, so a hit reads a 4-byte index and an action that is likely in
/// cache), the insertion sequence number, the key as a byte record
/// (`records.rs`), and, only in tables that have them, the direct
/// counter, the idle clock at the last hit and the direct meter. The
/// controller cookie lives in a side map, since most entries have none.
/// Exact and LPM engines find an entry by its key themselves; the priority
/// engine gets an index of records.
#[derive(Debug)]
pub struct Table {
    /// Static description.
    pub info: &'static TableInfo,
    program: Option<&'static ProgramInfo>,
    engine: Engine,
    /// Per entry id: its action's index in `pool`, or [`FREE`].
    actions: Vec<u32>,
    /// Per entry id: its action as a word (tables that keep words only,
    /// see [`WORDS_MAX_SIZE`]; a free id holds [`word::NOT_INLINE`]).
    words: Vec<u128>,
    /// Whether the table keeps `words`.
    keeps_words: bool,
    /// Per entry id (tables with a direct counter only).
    counters: Vec<CounterData>,
    /// Per entry id (idle-timeout tables only).
    last_hit: Vec<u64>,
    /// Per entry id (tables with a direct meter only).
    meters: Vec<MeterState>,
    /// Per entry id: insertion sequence number.
    seq: Vec<u64>,
    records: records::Records,
    /// Entry ids by key record (priority engine only).
    index: Option<HashTable<u32>>,
    /// Non-empty controller cookies by entry id.
    metadata: FxHashMap<u32, Box<[u8]>>,
    pool: ActionPool,
    free: Vec<u32>,
    default_action: EntryAction,
    /// `default_action` as a word ([`word::NOT_INLINE`] in tables that
    /// keep no words).
    default_word: u128,
    next_seq: u64,
    len: usize,
    meter_unit: CounterUnit,
    /// Stored in an entry when it is hit (idle-timeout tables only).
    idle_clock: u64,
    /// `info.keys.len()`, next to the engine for the lookup's check.
    n_keys: usize,
}

/// Entry actions interned with reference counts: one copy of each
/// distinct action, found again by hash.
#[derive(Debug, Default)]
struct ActionPool {
    calls: Vec<EntryAction>,
    refs: Vec<u32>,
    index: HashTable<u32>,
    free: Vec<u32>,
}

fn hash_of<T: Hash + ?Sized>(v: &T) -> u64 {
    let mut h = FxHasher::default();
    v.hash(&mut h);
    h.finish()
}

impl ActionPool {
    /// The index of `action`, adding it (or a reference to it).
    fn acquire(&mut self, action: &EntryAction) -> u32 {
        let h = hash_of(action);
        let calls = &self.calls;
        if let Some(&i) = self.index.find(h, |&i| calls[i as usize] == *action) {
            self.refs[i as usize] += 1;
            return i;
        }
        let i = match self.free.pop() {
            Some(i) => {
                self.calls[i as usize] = action.clone();
                self.refs[i as usize] = 1;
                i
            }
            None => {
                self.calls.push(action.clone());
                self.refs.push(1);
                (self.calls.len() - 1) as u32
            }
        };
        let calls = &self.calls;
        self.index
            .insert_unique(h, i, |&j| hash_of(&calls[j as usize]));
        i
    }

    fn release(&mut self, i: u32) {
        let r = &mut self.refs[i as usize];
        *r -= 1;
        if *r == 0 {
            let h = hash_of(&self.calls[i as usize]);
            if let Ok(e) = self.index.find_entry(h, |&j| j == i) {
                e.remove();
            }
            // Drop the parameters now; the slot is reused by `acquire`.
            self.calls[i as usize] = EntryAction::Member(0);
            self.free.push(i);
        }
    }

    #[inline]
    fn get(&self, i: u32) -> &EntryAction {
        &self.calls[i as usize]
    }

    fn memory_bytes(&self) -> usize {
        self.calls.capacity() * std::mem::size_of::<EntryAction>()
            + self
                .calls
                .iter()
                .map(|c| match c {
                    EntryAction::Direct(c) => c.params.len() * 16,
                    _ => 0,
                })
                .sum::<usize>()
            + self.refs.capacity() * 4
            + self.index.capacity() * 5
            + self.free.capacity() * 4
    }
}

/// Canonical matches and priority of an entry.
type EntryKey = (Box<[Option<FieldMatch>]>, i32);

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
        let needs_priority = validate::needs_priority(info);
        let engine = Engine::for_table(info);
        let index = matches!(engine, Engine::Priority(_)).then(HashTable::new);
        let default_action = EntryAction::Direct(ActionCall::new(
            info.default_action.0,
            info.default_action.1,
        ));
        let mut table = Table {
            info,
            program,
            engine,
            actions: Vec::new(),
            words: Vec::new(),
            keeps_words: program.is_some() && info.size <= WORDS_MAX_SIZE,
            counters: Vec::new(),
            last_hit: Vec::new(),
            meters: Vec::new(),
            seq: Vec::new(),
            records: records::Records::new(info, needs_priority),
            index,
            metadata: FxHashMap::default(),
            pool: ActionPool::default(),
            free: Vec::new(),
            default_action,
            default_word: u128::from(word::NOT_INLINE),
            next_seq: 0,
            len: 0,
            meter_unit,
            idle_clock: 0,
            n_keys: info.keys.len(),
        };
        table.default_word = table.word_of(&table.default_action);
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
                    table.commit_insert(key, &entry.action, &entry.metadata);
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

    /// Heap bytes the table holds for its entries (engine, key records,
    /// per-entry arrays, interned actions, indices), counted by capacity.
    pub fn memory_bytes(&self) -> usize {
        let engine = match &self.engine {
            Engine::Keyless => 0,
            Engine::Exact(e) => e.memory_bytes(),
            Engine::Lpm(e) => e.memory_bytes(),
            Engine::Priority(e) => e.memory_bytes(),
        };
        engine
            + self.actions.capacity() * 4
            + self.words.capacity() * 16
            + self.counters.capacity() * std::mem::size_of::<CounterData>()
            + self.last_hit.capacity() * 8
            + self.meters.capacity() * std::mem::size_of::<MeterState>()
            + self.seq.capacity() * 8
            + self.records.memory_bytes()
            + self.index.as_ref().map_or(0, |i| i.capacity() * 5)
            + self.metadata.capacity() * 25
            + self.metadata.values().map(|m| m.len()).sum::<usize>()
            + self.pool.memory_bytes()
            + self.free.capacity() * 4
    }

    /// Looks `key` up (one value per key field, in key order) and counts
    /// `packet_len` bytes on the hit entry's direct counter, if any.
    #[inline]
    pub fn lookup(&mut self, key: &[u128], packet_len: u32) -> Lookup<'_> {
        let found = self.probe(key);
        self.outcome(found, packet_len)
    }

    /// [`Table::lookup`] for a key the caller packed into one `u128`: the
    /// fields in key order, each masked to its width, the first in the
    /// highest bits, at most 128 bits in all. Generated code calls this for
    /// tables whose fields are all exact, or exact and one LPM (the engines
    /// it knows `Table::new` picks for them): it packs the key in native
    /// widths, and the lookup is only that engine's probe, inlined, without
    /// the key slice and the general packing loop. Any other table is
    /// looked up through the fields taken apart again. A key wider than
    /// 128 bits cannot be packed: such a table misses. Always inlined: the
    /// call would save and restore the registers the largest engine needs.
    #[inline(always)]
    pub fn lookup_packed(&mut self, packed: u128, packet_len: u32) -> Lookup<'_> {
        let found = self.probe_packed(packed);
        self.outcome(found, packet_len)
    }

    /// [`Table::lookup_packed`] handing out the action as a word (see
    /// [`word`]): in a table that keeps words, a hit reads it right after
    /// the entry id. Generated code calls this.
    #[inline(always)]
    pub fn lookup_packed_word(&mut self, packed: u128, packet_len: u32) -> WordLookup {
        let found = self.probe_packed(packed);
        self.word_outcome(found, packet_len)
    }

    /// [`Table::lookup`] handing out the action as a word, as
    /// [`Table::lookup_packed_word`] does.
    #[inline]
    pub fn lookup_word(&mut self, key: &[u128], packet_len: u32) -> WordLookup {
        let found = self.probe(key);
        self.word_outcome(found, packet_len)
    }

    /// [`Table::miss`] as a word.
    #[inline]
    pub fn miss_word(&self) -> WordLookup {
        WordLookup {
            hit: false,
            entry: None,
            word: self.default_word,
        }
    }

    /// The action of `entry` as a [`Lookup`] found it (`None`: a miss, the
    /// default action): what a [`WordLookup`] whose word is
    /// [`word::NOT_INLINE`] stands for.
    pub fn action_of(&self, entry: Option<EntryRef>) -> &EntryAction {
        match entry.and_then(|r| self.actions.get(r.0 as usize)) {
            Some(&a) if a != FREE => self.pool.get(a),
            _ => &self.default_action,
        }
    }

    /// The entry id a key (one value per field, in key order) finds; a key
    /// of the wrong length finds none.
    #[inline]
    fn probe(&self, key: &[u128]) -> Option<u32> {
        if key.len() == self.n_keys {
            self.engine.lookup(key)
        } else {
            None
        }
    }

    /// The entry id a packed key finds, by the engine's own probe.
    #[inline(always)]
    fn probe_packed(&self, packed: u128) -> Option<u32> {
        match &self.engine {
            Engine::Exact(e) => e.lookup_packed(packed),
            Engine::Lpm(e) => e.lookup_packed(packed),
            Engine::Keyless => None,
            Engine::Priority(_) => self.lookup_unpacked(packed),
        }
    }

    /// [`Table::lookup_packed`] of a table whose engine takes no packed
    /// key: the fields taken apart (key order) and looked up.
    #[cold]
    #[inline(never)]
    fn lookup_unpacked(&self, packed: u128) -> Option<u32> {
        // Each field is at least a bit wide, so a packed key has at most
        // 128 of them.
        let mut buf = [0u128; 128];
        let key = buf.get_mut(..self.n_keys)?;
        let mut rest = packed;
        for (k, info) in key.iter_mut().zip(self.info.keys).rev() {
            *k = rest & crate::bits::mask(info.bitwidth);
            rest = rest.checked_shr(info.bitwidth).unwrap_or(0);
        }
        self.engine.lookup(key)
    }

    /// Counts a hit of entry `i`: its direct counter and idle clock.
    #[inline(always)]
    fn count_hit(&mut self, i: usize, packet_len: u32) {
        // `counters` and `last_hit` stay empty in tables without a
        // direct counter or idle timeout: their lengths say it all,
        // without reading the table's description.
        if let Some(c) = self.counters.get_mut(i) {
            c.bytes = c.bytes.wrapping_add(packet_len as u64);
            c.packets = c.packets.wrapping_add(1);
        }
        if let Some(h) = self.last_hit.get_mut(i) {
            *h = self.idle_clock;
        }
    }

    /// What a word lookup that found entry `found` returns, counting the
    /// hit. Engines return live ids only, so the word is read without
    /// the pool index beside it.
    #[inline(always)]
    fn word_outcome(&mut self, found: Option<u32>, packet_len: u32) -> WordLookup {
        match found {
            Some(id) if (id as usize) < self.actions.len() => {
                self.count_hit(id as usize, packet_len);
                WordLookup {
                    hit: true,
                    entry: Some(EntryRef(id)),
                    word: self
                        .words
                        .get(id as usize)
                        .copied()
                        .unwrap_or(u128::from(word::NOT_INLINE)),
                }
            }
            _ => self.miss_word(),
        }
    }

    /// What a lookup that found entry `found` returns, counting the hit.
    #[inline(always)]
    fn outcome(&mut self, found: Option<u32>, packet_len: u32) -> Lookup<'_> {
        if let Some(id) = found
            && let Some(&a) = self.actions.get(id as usize)
        {
            self.count_hit(id as usize, packet_len);
            return Lookup {
                hit: true,
                entry: Some(EntryRef(id)),
                action: self.pool.get(a),
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
        if !self.is_live(entry) {
            return 0;
        }
        match self.meters.get_mut(entry.0 as usize) {
            Some(m) => m.execute(now_ns, units) as u8,
            None => 0,
        }
    }

    // ----- control plane -------------------------------------------------

    /// `action` as this table's words hold it ([`word::NOT_INLINE`] in a
    /// table that keeps none).
    fn word_of(&self, action: &EntryAction) -> u128 {
        match self.program {
            Some(program) if self.keeps_words => word::encode(self.info, program, action),
            _ => u128::from(word::NOT_INLINE),
        }
    }

    /// Stores `action` as entry `i`'s word (tables that keep words).
    fn set_word(&mut self, i: usize, action: &EntryAction) {
        let w = self.word_of(action);
        if let Some(slot) = self.words.get_mut(i) {
            *slot = w;
        }
    }

    fn is_live(&self, r: EntryRef) -> bool {
        self.actions.get(r.0 as usize).is_some_and(|&a| a != FREE)
    }

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

    /// The entry with this (canonical) key.
    fn lookup_key(&self, key: &EntryKey) -> Option<u32> {
        match &self.engine {
            Engine::Keyless => None,
            Engine::Exact(e) => e.find(&key.0),
            Engine::Lpm(e) => e.find(&key.0),
            Engine::Priority(_) => {
                let index = self.index.as_ref()?;
                let mut rec = vec![0u8; self.records.size()];
                self.records.encode(&key.0, key.1, &mut rec);
                index
                    .find(hash_of(&rec[..]), |&id| self.records.get(id) == &rec[..])
                    .copied()
            }
        }
    }

    fn check_new(&self, key: &EntryKey) -> Result<(), RuntimeError> {
        if self.info.keys.is_empty() {
            return Err(RuntimeError::Invalid {
                field: "match".into(),
                reason: format!("{} has no key: it cannot hold entries", self.info.name),
            });
        }
        if self.lookup_key(key).is_some() {
            return Err(RuntimeError::AlreadyExists {
                table: self.info.name,
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

    fn commit_insert(&mut self, key: EntryKey, action: &EntryAction, metadata: &[u8]) -> EntryRef {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                let n = self.actions.len() + 1;
                lpm::grow(&mut self.actions, n, FREE);
                if self.keeps_words {
                    lpm::grow(&mut self.words, n, u128::from(word::NOT_INLINE));
                }
                lpm::grow(&mut self.seq, n, 0);
                if self.info.direct_counter.is_some() {
                    lpm::grow(&mut self.counters, n, CounterData::default());
                }
                if self.info.idle_timeout {
                    lpm::grow(&mut self.last_hit, n, 0);
                }
                if self.info.direct_meter.is_some() {
                    lpm::grow(&mut self.meters, n, MeterState::default());
                }
                (n - 1) as u32
            }
        };
        let i = id as usize;
        let seq = self.next_seq;
        self.next_seq += 1;
        self.engine.insert(id, &key.0, key.1, seq);
        self.records.put(id, &key.0, key.1);
        if let Some(index) = self.index.as_mut() {
            let rec = self.records.get(id);
            let records = &self.records;
            index.insert_unique(hash_of(rec), id, |&j| hash_of(records.get(j)));
        }
        self.actions[i] = self.pool.acquire(action);
        self.set_word(i, action);
        self.seq[i] = seq;
        if let Some(c) = self.counters.get_mut(i) {
            *c = CounterData::default();
        }
        if let Some(h) = self.last_hit.get_mut(i) {
            *h = self.idle_clock;
        }
        if let Some(m) = self.meters.get_mut(i) {
            *m = MeterState::default();
        }
        if !metadata.is_empty() {
            self.metadata.insert(id, metadata.into());
        }
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
        self.insert_ref(&entry)
    }

    /// As [`Table::insert`], for a caller that keeps the entry (the
    /// P4Runtime service records it afterwards): the table copies only
    /// what it stores, so the caller need not clone it.
    pub fn insert_ref(&mut self, entry: &TableEntry) -> Result<EntryRef, RuntimeError> {
        self.refuse_if_const()?;
        let key = self.checked_key(entry)?;
        self.check_new(&key)?;
        Ok(self.commit_insert(key, &entry.action, &entry.metadata))
    }

    /// Checks that `entry` could replace an existing one; returns its handle.
    pub fn check_modify(&self, entry: &TableEntry) -> Result<EntryRef, RuntimeError> {
        self.refuse_if_const()?;
        let key = self.checked_key(entry)?;
        self.lookup_key(&key)
            .map(EntryRef)
            .ok_or(RuntimeError::NotFound {
                table: self.info.name,
            })
    }

    /// Replaces the action and cookie of an existing entry (counters and
    /// meter state stay); returns the old action.
    pub fn modify(&mut self, entry: TableEntry) -> Result<EntryAction, RuntimeError> {
        let r = self.check_modify(&entry)?;
        let i = r.0 as usize;
        let old_index = self.actions[i];
        let old = self.pool.get(old_index).clone();
        self.actions[i] = self.pool.acquire(&entry.action);
        self.set_word(i, &entry.action);
        self.pool.release(old_index);
        if entry.metadata.is_empty() {
            self.metadata.remove(&r.0);
        } else {
            self.metadata.insert(r.0, entry.metadata.into_boxed_slice());
        }
        Ok(old)
    }

    /// The handle of the entry with these matches and priority.
    pub fn find(
        &self,
        matches: &[Option<FieldMatch>],
        priority: i32,
    ) -> Result<EntryRef, RuntimeError> {
        let key = self.key_of(matches, priority)?;
        self.lookup_key(&key)
            .map(EntryRef)
            .ok_or(RuntimeError::NotFound {
                table: self.info.name,
            })
    }

    /// The entry behind a handle.
    pub fn entry(&self, r: EntryRef) -> Option<TableEntry> {
        if !self.is_live(r) {
            return None;
        }
        let (matches, priority) = self.records.decode(self.records.get(r.0));
        Some(TableEntry {
            matches,
            priority,
            action: self.pool.get(self.actions[r.0 as usize]).clone(),
            metadata: self
                .metadata
                .get(&r.0)
                .map(|m| m.to_vec())
                .unwrap_or_default(),
        })
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
        let entry = self.entry(r).expect("handle from the key store");
        let id = r.0;
        self.engine.remove(id, &entry.matches);
        if let Some(index) = self.index.as_mut() {
            let rec = self.records.get(id);
            if let Ok(e) = index.find_entry(hash_of(rec), |&j| j == id) {
                e.remove();
            }
        }
        self.pool.release(self.actions[id as usize]);
        self.actions[id as usize] = FREE;
        if let Some(slot) = self.words.get_mut(id as usize) {
            *slot = u128::from(word::NOT_INLINE);
        }
        self.metadata.remove(&id);
        self.free.push(id);
        self.len -= 1;
        entry
    }

    /// Removes every entry that is not const; returns them.
    pub fn clear(&mut self) -> Vec<TableEntry> {
        // Entries are const exactly when the table is.
        if self.info.is_const {
            return Vec::new();
        }
        let doomed: Vec<EntryRef> = (0..self.actions.len() as u32)
            .map(EntryRef)
            .filter(|&r| self.is_live(r))
            .collect();
        doomed.into_iter().map(|r| self.remove(r)).collect()
    }

    /// Handles of the live entries in insertion order.
    pub fn handles(&self) -> Vec<EntryRef> {
        let mut live: Vec<u32> = (0..self.actions.len() as u32)
            .filter(|&id| self.actions[id as usize] != FREE)
            .collect();
        live.sort_unstable_by_key(|&id| self.seq[id as usize]);
        live.into_iter().map(EntryRef).collect()
    }

    /// Up to `max` live entries from handle `from` on, in handle order,
    /// and the handle to continue from (`None` when none is left).
    pub fn page(&self, from: u32, max: usize) -> (Vec<EntryRow>, Option<u32>) {
        let mut rows = Vec::with_capacity(max.min(self.len));
        let mut id = from as usize;
        while id < self.actions.len() {
            if rows.len() == max {
                return (rows, Some(id as u32));
            }
            rows.extend(self.row(EntryRef(id as u32)));
            id += 1;
        }
        (rows, None)
    }

    /// Where up to `max` live entries are, from handle `from` on, in
    /// handle order, and the handle to continue from (`None` when none is
    /// left). Sorted, the places are in insertion order; [`Self::rows_at`]
    /// takes the entries. Reads no entry, so a page can be long.
    pub fn places(&self, from: u32, max: usize) -> (Vec<EntryPlace>, Option<u32>) {
        let mut out = Vec::with_capacity(max.min(self.len));
        let mut id = from as usize;
        while id < self.actions.len() {
            if out.len() == max {
                return (out, Some(id as u32));
            }
            if self.actions[id] != FREE {
                out.push(EntryPlace {
                    seq: self.seq[id],
                    handle: id as u32,
                });
            }
            id += 1;
        }
        (out, None)
    }

    /// The rows of the entries at `at`, in that order; a place whose entry
    /// was deleted since (its handle free, or holding a later insertion)
    /// is skipped.
    pub fn rows_at(&self, at: &[EntryPlace]) -> Vec<EntryRow> {
        at.iter()
            .filter(|p| self.seq.get(p.handle as usize) == Some(&p.seq))
            .filter_map(|p| self.row(EntryRef(p.handle)))
            .collect()
    }

    /// What a read reports of the entry behind `r`, if it is live.
    fn row(&self, r: EntryRef) -> Option<EntryRow> {
        let entry = self.entry(r)?;
        Some(EntryRow {
            entry,
            seq: self.seq[r.0 as usize],
            counter: self
                .info
                .direct_counter
                .and_then(|_| self.direct_counter(r)),
            last_hit: self.info.idle_timeout.then(|| self.last_hit(r)).flatten(),
        })
    }

    /// All entries in insertion order.
    pub fn entries(&self) -> Vec<TableEntry> {
        self.handles()
            .into_iter()
            .filter_map(|r| self.entry(r))
            .collect()
    }

    /// All entry actions (for reference counting by the runtime).
    pub(crate) fn actions(&self) -> impl Iterator<Item = &EntryAction> {
        self.actions
            .iter()
            .filter(|&&a| a != FREE)
            .map(|&a| self.pool.get(a))
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
        self.default_word = self.word_of(&self.default_action);
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
        self.default_word = self.word_of(&self.default_action);
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
        if !self.is_live(r) {
            return None;
        }
        Some(self.last_hit.get(r.0 as usize).copied().unwrap_or(0))
    }

    /// The direct counter of an entry.
    pub fn direct_counter(&self, r: EntryRef) -> Option<CounterData> {
        if !self.is_live(r) {
            return None;
        }
        Some(self.counters.get(r.0 as usize).copied().unwrap_or_default())
    }

    /// Overwrites the direct counter of an entry; false for a stale handle.
    pub fn set_direct_counter(&mut self, r: EntryRef, data: CounterData) -> bool {
        if !self.is_live(r) {
            return false;
        }
        if let Some(c) = self.counters.get_mut(r.0 as usize) {
            *c = data;
        }
        true
    }

    /// Configures the direct meter of an entry; false for a stale handle.
    pub fn set_direct_meter(&mut self, r: EntryRef, config: Option<MeterConfig>) -> bool {
        if !self.is_live(r) {
            return false;
        }
        if let Some(m) = self.meters.get_mut(r.0 as usize) {
            m.configure(config);
        }
        true
    }

    /// The direct meter configuration of an entry.
    pub fn direct_meter_config(&self, r: EntryRef) -> Option<MeterConfig> {
        if !self.is_live(r) {
            return None;
        }
        self.meters.get(r.0 as usize).and_then(|m| m.config())
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
    use crate::info::{ConstEntryInfo, KeyInfo};

    static KEYS: [KeyInfo; 1] = fixtures::key_x(MatchKind::Ternary);
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
        is_const: true,
        const_entries: &ENTRIES,
        ..fixtures::table(1, "t", &KEYS, 8)
    };

    fn param(l: &Lookup<'_>) -> u128 {
        match l.action {
            EntryAction::Direct(c) => c.params[0],
            _ => unreachable!(),
        }
    }

    static EXACT_KEY: [KeyInfo; 1] = fixtures::key_x(MatchKind::Exact);
    static IDLE: TableInfo = TableInfo {
        idle_timeout: true,
        ..fixtures::table(2, "idle", &EXACT_KEY, 8)
    };

    static COUNTED: TableInfo = TableInfo {
        direct_counter: Some(0x1300_0001),
        idle_timeout: true,
        ..fixtures::table(3, "counted", &EXACT_KEY, 256)
    };

    fn exact(x: u128, param: u128) -> TableEntry {
        TableEntry {
            matches: vec![Some(FieldMatch::Exact(x))],
            priority: 0,
            action: EntryAction::Direct(ActionCall::new(1, &[param])),
            metadata: vec![],
        }
    }

    #[test]
    fn pages_cover_every_entry_once_with_counters_and_insertion_order() {
        let mut t = Table::new(&COUNTED);
        for x in 0..50 {
            t.insert(exact(x, x % 4)).unwrap();
        }
        // Holes, then reused handles.
        for x in (0..50).step_by(3) {
            t.delete(&[Some(FieldMatch::Exact(x))], 0).unwrap();
        }
        for x in 100..110 {
            t.insert(exact(x, x % 4)).unwrap();
        }
        t.set_idle_clock(5);
        assert!(t.lookup(&[104], 77).hit);
        let mut rows = Vec::new();
        let mut from = Some(0);
        let mut pages = 0;
        while let Some(f) = from {
            let (page, next) = t.page(f, 7);
            assert!(page.len() <= 7);
            rows.extend(page);
            from = next;
            pages += 1;
        }
        assert_eq!(pages, 7, "43 entries in pages of 7");
        rows.sort_by_key(|r| r.seq);
        let entries: Vec<TableEntry> = rows.iter().map(|r| r.entry.clone()).collect();
        assert_eq!(entries, t.entries(), "every entry once, in insertion order");
        let hit = rows.iter().find(|r| r.entry == exact(104, 0)).unwrap();
        assert_eq!(
            hit.counter,
            Some(CounterData {
                bytes: 77,
                packets: 1
            })
        );
        assert_eq!(hit.last_hit, Some(5));
        let other = rows.iter().find(|r| r.entry == exact(105, 1)).unwrap();
        assert_eq!(other.counter, Some(CounterData::default()));
        assert_eq!(other.last_hit, Some(0));
    }

    #[test]
    fn entries_share_interned_actions_and_keep_their_own() {
        let mut t = Table::new(&COUNTED);
        for x in 0..6 {
            t.insert(exact(x, 7)).unwrap();
        }
        assert_eq!(t.pool.calls.len(), 1, "one copy of a shared action");
        let old = t.modify(exact(2, 9)).unwrap();
        assert_eq!(old, exact(2, 7).action);
        assert_eq!(param(&t.lookup(&[2], 0)), 9);
        assert_eq!(param(&t.lookup(&[3], 0)), 7);
        t.delete(&[Some(FieldMatch::Exact(2))], 0).unwrap();
        assert!(!t.lookup(&[2], 0).hit);
        // The freed pool slot is reused, not grown.
        t.insert(exact(2, 11)).unwrap();
        assert_eq!(t.pool.calls.len(), 2);
        assert_eq!(param(&t.lookup(&[2], 0)), 11);
        assert_eq!(t.pool.refs, vec![5, 1]);
    }

    static TAG_PROGRAM: ProgramInfo = ProgramInfo {
        name: "words",
        tables: &[],
        actions: &[crate::info::ActionInfo {
            id: 1,
            name: "a",
            params: &[crate::info::ParamInfo {
                id: 1,
                name: "x",
                bitwidth: 8,
            }],
        }],
        ..ProgramInfo::EMPTY
    };

    /// The action a word lookup stands for.
    fn word_action(t: &Table, l: WordLookup) -> EntryAction {
        word::decode(t.info, &TAG_PROGRAM, l.word).expect("an inline word")
    }

    #[test]
    fn words_follow_inserts_modifies_deletes_and_the_default() {
        let mut t = Table::with_program(&COUNTED, &TAG_PROGRAM);
        let miss = t.lookup_packed_word(3, 0);
        assert!(!miss.hit);
        assert_eq!(word_action(&t, miss), exact(0, 0).action);
        t.insert(exact(3, 7)).unwrap();
        let hit = t.lookup_packed_word(3, 10);
        assert!(hit.hit);
        assert_eq!(word_action(&t, hit), exact(3, 7).action);
        assert_eq!(t.direct_counter(hit.entry.unwrap()).unwrap().bytes, 10);
        t.modify(exact(3, 9)).unwrap();
        let l = t.lookup_word(&[3], 0);
        assert_eq!(word_action(&t, l), exact(3, 9).action);
        t.set_default(ActionCall::new(1, &[5])).unwrap();
        let l = t.lookup_word(&[4], 0);
        assert_eq!(word_action(&t, l), exact(4, 5).action);
        t.delete(&[Some(FieldMatch::Exact(3))], 0).unwrap();
        let l = t.lookup_word(&[3], 0);
        assert_eq!(word_action(&t, l), exact(3, 5).action);
        t.reset_default().unwrap();
        assert_eq!(word_action(&t, t.miss_word()), exact(0, 0).action);
        // A table without its program keeps no words: the action is read
        // from the table.
        let mut t = Table::new(&COUNTED);
        t.insert(exact(3, 7)).unwrap();
        let hit = t.lookup_word(&[3], 0);
        assert_eq!(hit.word, u128::from(word::NOT_INLINE));
        assert_eq!(t.action_of(hit.entry), &exact(3, 7).action);
        assert_eq!(t.action_of(None), &exact(0, 0).action);
    }

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
