//! The P4Runtime state store: what controllers wrote survives a restart
//! (`kill -9` included), so a restarted switch forwards exactly as before.
//!
//! # Contract
//!
//! * What is kept: every Write update that **succeeded** (table entries and
//!   default-entry changes, action profile members and groups, meter and
//!   direct-meter configs, register cells, PRE multicast groups and clone
//!   sessions once the write path accepts them) and the forwarding pipeline
//!   cookie. Counter values are data, not config: counter writes and the
//!   `counter_data` of table entries are not kept, counters restart at zero.
//!   Register cells are restored to what the controller last wrote (the
//!   values the dataplane itself stored are data and are lost).
//! * Restore: [`StateStore::open`] hands back the recorded batches; the
//!   service replays them through the same validated write path as a Write
//!   RPC, so restored state obeys the same rules.
//! * File format: the magic `RSWP4RT1`, then records
//!   `len: u32 LE | crc32: u32 LE | kind: u8 | protobuf`, where `len` counts
//!   the kind byte and the protobuf and the CRC-32 (IEEE) covers both. The
//!   first record is the header (a `p4.v1.ForwardingPipelineConfig` with
//!   the P4Info, the device config naming the program and the cookie); then
//!   batch records (a `p4.v1.WriteRequest` whose `updates` are the applied
//!   updates of one Write RPC, or a chunk of the snapshot) and cookie
//!   records (a `ForwardingPipelineConfig` with only the cookie).
//! * Journal and snapshot in one file: each Write appends one batch record.
//!   The store also keeps the live state (one update per live entity, keyed
//!   by entity identity as the write path decodes it). When the journal
//!   holds more than [`COMPACT_RATIO`] × live + [`COMPACT_MIN_UPDATES`]
//!   updates, the live state is written as a fresh file (header + snapshot
//!   batches) to `<path>.tmp`, fsynced, renamed over the file and the
//!   directory fsynced. Each journaled update is rewritten at most a
//!   constant number of times on average, so the cost per Write stays
//!   O(updates in the Write), never O(total entries). The Write that
//!   triggers a compaction waits for it (writes are serialised anyway);
//!   the live state costs memory of the order of the entries' protobufs.
//! * Durability: a record is written with one `write(2)` before the Write
//!   RPC answers. That survives `kill -9` (the data is in the kernel's page
//!   cache, which the kernel writes back whatever happens to the process),
//!   so no fsync per Write: an fsync costs a device flush (milliseconds)
//!   and would cap the write path far below its ~100k entries/s. A power
//!   loss or kernel crash may lose the newest writes (those not written
//!   back yet); it cannot corrupt older state, because a torn tail is
//!   detected and the snapshot rename is fsynced.
//! * A record that cannot be written (disk full, read-only file system):
//!   [`StateStore::record`] cuts off what part reached the file and leaves
//!   the live state as it was, and the Write service takes the batch back
//!   out of the dataplane and refuses it (RESOURCE_EXHAUSTED when space or
//!   a limit ran out, UNAVAILABLE otherwise), so the switch never runs
//!   state a restart would not restore.
//! * Torn tail: a record cut short or failing its CRC (kill -9 or power
//!   loss mid-append) ends the file: it and everything after it are
//!   truncated with a warning, the start goes on. A file that is not ours
//!   (bad magic, missing header) or was written for another program (the
//!   P4Info differs, as judged by [`super::pipeline::differences`]) is a
//!   startup error.
//! * SetForwardingPipelineConfig: a commit that resets forwarding state
//!   calls [`StateStore::reset`] (empty snapshot with the new cookie);
//!   RECONCILE_AND_COMMIT only records the cookie.
//!
//! Reference `p4runtime-subset.md` §1.4 (Write, pipeline Get/Set).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use prost::Message;
use proto::p4::config::v1::P4Info;
use proto::p4::v1 as pb;
use proto::p4::v1::update::Type as UpdateType;

use super::pipeline;
use super::write::{EntryKey, GroupWrite, Op};

/// First bytes of a state file (format version 1).
pub const MAGIC: &[u8; 8] = b"RSWP4RT1";
/// Journal updates allowed per live entity before compaction.
pub const COMPACT_RATIO: u64 = 2;
/// Journal updates always allowed before compaction (small states).
pub const COMPACT_MIN_UPDATES: u64 = 8192;
/// Updates per snapshot batch record.
const SNAPSHOT_CHUNK: usize = 4096;
/// Largest record accepted on load; longer lengths mean a corrupt tail.
const MAX_RECORD_BYTES: usize = 1 << 30;
/// `len` + `crc32`.
const RECORD_PREFIX_BYTES: usize = 8;

const KIND_HEADER: u8 = 1;
const KIND_BATCH: u8 = 2;
const KIND_COOKIE: u8 = 3;

/// Why the state file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// A file operation failed.
    #[error("p4runtime state file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not a P4Runtime state file of this format.
    #[error("p4runtime state file {path}: not a roceswitch P4Runtime state file: {reason}")]
    NotAStateFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The file was written for another program.
    #[error(
        "p4runtime state file {path} was written for another program ({}); move it away or point --state-file elsewhere",
        .differences.join("; ")
    )]
    ProgramMismatch {
        /// The file.
        path: PathBuf,
        /// Every difference found.
        differences: Vec<String>,
    },
    /// Replaying the file could not reach the dataplane.
    #[error("p4runtime state file {path}: replay: {message}")]
    Replay {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

/// What a state file held, to be replayed.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The pipeline cookie last set.
    pub cookie: Option<u64>,
    /// Batches in order, each one Write's applied updates (or a snapshot chunk).
    pub batches: Vec<Vec<pb::Update>>,
    /// Bytes cut off a torn tail (0 when the file was intact).
    pub torn_bytes: u64,
    /// The stored P4Info differs in encoding, not in substance (the file's
    /// header should be rewritten).
    pub header_outdated: bool,
}

/// Identity of one piece of live state (what a later write replaces).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum LiveKey {
    Member(u32, u32),
    Group(u32, u32),
    MulticastGroup(u32),
    CloneSession(u32),
    Entry(EntryKey),
    Default(u32),
    DirectMeter(EntryKey),
    Meter(u32, u32),
    Register(u32, u32),
    ValueSet(u32),
    Digest(u32),
}

impl LiveKey {
    /// Replay order: what is referenced comes before what refers to it
    /// (members before groups before table entries before direct meters).
    fn rank(&self) -> u8 {
        match self {
            LiveKey::Member(..) => 0,
            LiveKey::Group(..) => 1,
            LiveKey::MulticastGroup(_) => 2,
            LiveKey::CloneSession(_) => 3,
            LiveKey::Entry(_) => 4,
            LiveKey::Default(_) => 5,
            LiveKey::DirectMeter(_) => 6,
            LiveKey::Meter(..) => 7,
            LiveKey::Register(..) => 8,
            LiveKey::ValueSet(_) => 9,
            LiveKey::Digest(_) => 10,
        }
    }
}

/// The P4Runtime state file of one service: journal, live state, cookie.
#[derive(Debug)]
pub struct StateStore {
    path: PathBuf,
    /// Open for appending (`None` only inside `open`, before the first compaction).
    file: Option<File>,
    /// Bytes in the file (where the next record starts).
    len_bytes: u64,
    p4info: P4Info,
    device_config: Vec<u8>,
    cookie: Option<u64>,
    /// Live state: key → (first-write sequence, update that recreates it).
    live: HashMap<LiveKey, (u64, pb::Update)>,
    next_seq: u64,
    /// Updates in the file (snapshot and journal).
    file_updates: u64,
    /// The file may not match the live state (a failed append): rewrite it.
    dirty: bool,
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> PersistError + '_ {
    move |source| PersistError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Field number of `WriteRequest.updates`: a batch record's body is the
/// encoding of a `WriteRequest` with only this field.
const WRITE_REQUEST_UPDATES: u32 = 4;

/// Starts a record of `kind` at the end of `buf`; returns where it starts.
fn begin_record(buf: &mut Vec<u8>, kind: u8) -> usize {
    let start = buf.len();
    buf.extend_from_slice(&[0; RECORD_PREFIX_BYTES]);
    buf.push(kind);
    start
}

/// Fills in the length and checksum of the record begun at `start`.
fn end_record(buf: &mut [u8], start: usize) {
    let body = &buf[start + RECORD_PREFIX_BYTES..];
    let len = body.len() as u32;
    let crc = crc32fast::hash(body);
    buf[start..start + 4].copy_from_slice(&len.to_le_bytes());
    buf[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// Appends one framed record holding `msg` to `buf`.
fn push_record(buf: &mut Vec<u8>, kind: u8, msg: &impl Message) {
    let start = begin_record(buf, kind);
    msg.encode(buf).expect("a Vec grows as needed");
    end_record(buf, start);
}

/// Appends one batch record holding `updates` to `buf`.
fn push_batch<'a>(buf: &mut Vec<u8>, updates: impl IntoIterator<Item = &'a pb::Update>) {
    let start = begin_record(buf, KIND_BATCH);
    for u in updates {
        prost::encoding::message::encode(WRITE_REQUEST_UPDATES, u, buf);
    }
    end_record(buf, start);
}

/// One record parsed from `data` at `pos`: (kind, body, next position), or
/// `None` if the bytes there are not a whole, intact record.
fn parse_record(data: &[u8], pos: usize) -> Option<(u8, &[u8], usize)> {
    let prefix = data.get(pos..pos + RECORD_PREFIX_BYTES)?;
    let len = u32::from_le_bytes(prefix[0..4].try_into().ok()?) as usize;
    let crc = u32::from_le_bytes(prefix[4..8].try_into().ok()?);
    if len == 0 || len > MAX_RECORD_BYTES {
        return None;
    }
    let start = pos + RECORD_PREFIX_BYTES;
    let body = data.get(start..start + len)?;
    if crc32fast::hash(body) != crc {
        return None;
    }
    Some((body[0], &body[1..], start + len))
}

/// A device config as a person reads it: a bundle by its program's name,
/// anything else as (at most 64 bytes of) text.
pub fn describe_device_config(bytes: &[u8]) -> String {
    match p4_target::bundle::Bundle::decode(bytes) {
        Ok(b) => format!("bundle of {}", b.name),
        Err(_) => String::from_utf8_lossy(&bytes[..bytes.len().min(64)]).into_owned(),
    }
}

/// The update of `u` worth keeping: counter values are data, not config.
pub fn persistable(u: &pb::Update) -> Option<pb::Update> {
    use pb::entity::Entity as E;
    let mut u = u.clone();
    match u.entity.as_mut().and_then(|e| e.entity.as_mut()) {
        Some(E::CounterEntry(_) | E::DirectCounterEntry(_)) | None => return None,
        Some(E::TableEntry(te)) => strip_entry(te),
        Some(E::MeterEntry(m)) => m.counter_data = None,
        Some(E::DirectMeterEntry(d)) => {
            d.counter_data = None;
            if let Some(te) = d.table_entry.as_mut() {
                strip_entry(te);
            }
        }
        Some(_) => {}
    }
    Some(u)
}

fn strip_entry(te: &mut pb::TableEntry) {
    te.counter_data = None;
    te.meter_counter_data = None;
    te.time_since_last_hit = None;
}

fn update(ty: UpdateType, entity: pb::entity::Entity) -> pb::Update {
    pb::Update {
        r#type: ty as i32,
        entity: Some(pb::Entity {
            entity: Some(entity),
        }),
    }
}

impl StateStore {
    /// Opens the state file at `path` for the program described by
    /// `p4info` and `device_config`, creating it (empty) if missing.
    /// Returns the store, whose live state is empty until the caller
    /// replays [`Loaded::batches`] and reports each applied update with
    /// [`StateStore::note`]. A torn tail is truncated (with a warning).
    pub fn open(
        path: &Path,
        p4info: &P4Info,
        device_config: &[u8],
    ) -> Result<(StateStore, Loaded), PersistError> {
        let data = match std::fs::read(path) {
            Ok(d) => Some(d),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err(path)(e)),
        };
        let mut store = StateStore {
            path: path.to_path_buf(),
            file: None,
            len_bytes: 0,
            p4info: p4info.clone(),
            device_config: device_config.to_vec(),
            cookie: None,
            live: HashMap::new(),
            next_seq: 0,
            file_updates: 0,
            dirty: false,
        };
        let data = match data {
            Some(d) if !d.is_empty() => d,
            Some(_) => {
                tracing::warn!(path = %path.display(), "p4runtime state file is empty: starting empty");
                store.compact()?;
                return Ok((store, Loaded::default()));
            }
            None => {
                tracing::info!(path = %path.display(), "no p4runtime state file yet: starting empty");
                store.compact()?;
                return Ok((store, Loaded::default()));
            }
        };
        let not_ours = |reason: String| PersistError::NotAStateFile {
            path: path.to_path_buf(),
            reason,
        };
        if data.len() < MAGIC.len() || &data[..MAGIC.len()] != MAGIC {
            return Err(not_ours("bad magic (expected RSWP4RT1)".into()));
        }
        let Some((KIND_HEADER, body, mut pos)) = parse_record(&data, MAGIC.len()) else {
            return Err(not_ours("missing or damaged header record".into()));
        };
        let header = pb::ForwardingPipelineConfig::decode(body)
            .map_err(|e| not_ours(format!("header: {e}")))?;
        let mut loaded = Loaded::default();
        let stored_info = header.p4info.unwrap_or_default();
        let mut differences = pipeline::differences(p4info, &stored_info);
        if header.p4_device_config != device_config {
            differences.insert(
                0,
                format!(
                    "written for '{}', this is '{}'",
                    describe_device_config(&header.p4_device_config),
                    describe_device_config(device_config)
                ),
            );
        }
        if !differences.is_empty() {
            return Err(PersistError::ProgramMismatch {
                path: path.to_path_buf(),
                differences,
            });
        }
        loaded.header_outdated = stored_info != *p4info;
        loaded.cookie = header.cookie.map(|c| c.cookie);
        while pos < data.len() {
            let Some((kind, body, next)) = parse_record(&data, pos) else {
                break;
            };
            let at = pos;
            match kind {
                KIND_BATCH => {
                    let req = pb::WriteRequest::decode(body)
                        .map_err(|e| not_ours(format!("batch record at byte {at}: {e}")))?;
                    store.file_updates += req.updates.len() as u64;
                    loaded.batches.push(req.updates);
                }
                KIND_COOKIE => {
                    let c = pb::ForwardingPipelineConfig::decode(body)
                        .map_err(|e| not_ours(format!("cookie record at byte {at}: {e}")))?;
                    loaded.cookie = c.cookie.map(|c| c.cookie);
                    store.file_updates += 1;
                }
                k => return Err(not_ours(format!("unknown record kind {k} at byte {at}"))),
            }
            pos = next;
        }
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(io_err(path))?;
        if pos < data.len() {
            loaded.torn_bytes = (data.len() - pos) as u64;
            tracing::warn!(
                path = %path.display(),
                offset = pos,
                dropped_bytes = loaded.torn_bytes,
                "p4runtime state file ends in a torn or damaged record (killed mid-write, or a crash before write-back): truncating it there and starting with the state before it"
            );
            file.set_len(pos as u64).map_err(io_err(path))?;
        }
        store.file = Some(file);
        store.len_bytes = pos as u64;
        store.cookie = loaded.cookie;
        Ok((store, loaded))
    }

    /// The path of the state file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Live entities (what a snapshot would hold).
    pub fn live_len(&self) -> usize {
        self.live.len()
    }

    /// Updates in the file (snapshot plus journal).
    pub fn file_updates(&self) -> u64 {
        self.file_updates
    }

    /// The pipeline cookie recorded.
    pub fn cookie(&self) -> Option<u64> {
        self.cookie
    }

    fn put(&mut self, key: LiveKey, u: pb::Update) {
        use std::collections::hash_map::Entry;
        match self.live.entry(key) {
            Entry::Occupied(mut o) => o.get_mut().1 = u,
            Entry::Vacant(v) => {
                v.insert((self.next_seq, u));
                self.next_seq += 1;
            }
        }
    }

    /// Folds one applied update (`u`, decoded as `op`) into the live state,
    /// without writing anything.
    pub fn note(&mut self, u: &pb::Update, op: &Op) {
        if let Some(p) = persistable(u) {
            self.note_kept(p, op);
        }
    }

    /// [`StateStore::note`] of an update already made [`persistable`].
    fn note_kept(&mut self, u: pb::Update, op: &Op) {
        use pb::entity::Entity as E;
        let ty = UpdateType::try_from(u.r#type).unwrap_or(UpdateType::Unspecified);
        let Some(entity) = u.entity.and_then(|e| e.entity) else {
            return;
        };
        if let E::PacketReplicationEngineEntry(pre) = &entity {
            use pb::packet_replication_engine_entry::Type as Pre;
            let key = match &pre.r#type {
                Some(Pre::MulticastGroupEntry(m)) => LiveKey::MulticastGroup(m.multicast_group_id),
                Some(Pre::CloneSessionEntry(c)) => LiveKey::CloneSession(c.session_id),
                None => return,
            };
            if ty == UpdateType::Delete {
                self.live.remove(&key);
            } else {
                self.put(key, update(UpdateType::Insert, entity));
            }
            return;
        }
        // A one shot is kept as its table entry update (§9.2.3).
        let op = match op {
            Op::Seq(ops) => match ops.iter().find(|o| {
                matches!(
                    o,
                    Op::TableInsert(_) | Op::TableModify(_) | Op::TableDelete(_)
                )
            }) {
                Some(table_op) => table_op,
                None => return,
            },
            op => op,
        };
        match op {
            Op::TableInsert(w) | Op::TableModify(w) => {
                let key = LiveKey::Entry(w.key());
                let mut entity = entity;
                // A MODIFY without an action keeps the stored one (§9.1.2).
                if w.keep_action
                    && let E::TableEntry(te) = &mut entity
                    && let Some(E::TableEntry(old)) = self
                        .live
                        .get(&key)
                        .and_then(|u| u.1.entity.as_ref())
                        .and_then(|e| e.entity.as_ref())
                {
                    te.action = old.action.clone();
                }
                self.put(key, update(UpdateType::Insert, entity));
            }
            Op::TableDelete(d) => {
                let key = (d.table, d.matches.clone(), d.priority);
                self.live.remove(&LiveKey::DirectMeter(key.clone()));
                self.live.remove(&LiveKey::Entry(key));
            }
            Op::Default(d) if d.action.is_some() => self.put(
                LiveKey::Default(d.table),
                update(UpdateType::Modify, entity),
            ),
            Op::Default(d) => {
                self.live.remove(&LiveKey::Default(d.table));
            }
            Op::MemberWrite(p, m, ..) => {
                self.put(LiveKey::Member(*p, *m), update(UpdateType::Insert, entity))
            }
            Op::MemberDelete(p, m) => {
                self.live.remove(&LiveKey::Member(*p, *m));
            }
            Op::GroupWrite(GroupWrite {
                profile: p,
                group: g,
                ..
            }) => self.put(LiveKey::Group(*p, *g), update(UpdateType::Insert, entity)),
            Op::GroupDelete(p, g, ..) => {
                self.live.remove(&LiveKey::Group(*p, *g));
            }
            Op::DirectMeterSet(k, cfg, _) => {
                let key = LiveKey::DirectMeter(k.clone());
                if cfg.is_some() {
                    self.put(key, update(UpdateType::Modify, entity));
                } else {
                    self.live.remove(&key);
                }
            }
            Op::MeterSet(m, cells) => {
                let E::MeterEntry(me) = entity else { return };
                for &(i, cfg, _) in cells {
                    let key = LiveKey::Meter(*m, i);
                    if cfg.is_some() {
                        let cell = pb::MeterEntry {
                            index: Some(pb::Index { index: i.into() }),
                            ..me
                        };
                        self.put(key, update(UpdateType::Modify, E::MeterEntry(cell)));
                    } else {
                        self.live.remove(&key);
                    }
                }
            }
            Op::RegisterWrite(r, cells) => {
                let E::RegisterEntry(re) = entity else { return };
                for &(i, value) in cells {
                    let key = LiveKey::Register(*r, i);
                    if value != 0 {
                        let cell = pb::RegisterEntry {
                            index: Some(pb::Index { index: i.into() }),
                            ..re.clone()
                        };
                        self.put(key, update(UpdateType::Modify, E::RegisterEntry(cell)));
                    } else {
                        // Zero is the initial value: nothing to restore.
                        self.live.remove(&key);
                    }
                }
            }
            Op::ValueSetWrite(v, members) => {
                // An empty set is the initial state: nothing to restore.
                if members.is_empty() {
                    self.live.remove(&LiveKey::ValueSet(*v));
                } else {
                    self.put(LiveKey::ValueSet(*v), update(UpdateType::Modify, entity));
                }
            }
            Op::DigestSet(d, config, _) => {
                if config.is_some() {
                    self.put(LiveKey::Digest(*d), update(UpdateType::Insert, entity));
                } else {
                    self.live.remove(&LiveKey::Digest(*d));
                }
            }
            // Counter values are data, not config; no-ops change nothing.
            _ => {}
        }
    }

    /// Records one Write's applied updates: appends them to the journal
    /// (one `write(2)`) and folds them into the live state, compacting when
    /// the journal has grown enough. Returns once the record is written.
    /// All or nothing: on an error the file and the live state are as
    /// before, so the caller can take the batch back and stay consistent
    /// with what a restart would restore. A compaction that fails after the
    /// append only logs (the batch is in the journal; the next record
    /// tries again).
    pub fn record(&mut self, applied: &[(&pb::Update, &Op)]) -> Result<(), PersistError> {
        self.record_writes(&[applied])
    }

    /// [`StateStore::record`] of several Writes applied in this order (a
    /// group commit): one batch record each, as if recorded one by one, all
    /// appended with one `write(2)`. All or nothing for the whole group.
    pub fn record_writes(&mut self, writes: &[&[(&pb::Update, &Op)]]) -> Result<(), PersistError> {
        let mut buf = Vec::new();
        let mut kept = Vec::new();
        for applied in writes {
            let start = buf.len();
            let record = begin_record(&mut buf, KIND_BATCH);
            let before = kept.len();
            for &(u, op) in *applied {
                if matches!(op, Op::Noop) {
                    continue;
                }
                if let Some(p) = persistable(u) {
                    prost::encoding::message::encode(WRITE_REQUEST_UPDATES, &p, &mut buf);
                    kept.push((p, op));
                }
            }
            if kept.len() == before {
                // Nothing of this Write is kept: no empty record.
                buf.truncate(start);
            } else {
                end_record(&mut buf, record);
            }
        }
        if kept.is_empty() && !self.dirty {
            return Ok(());
        }
        if self.dirty {
            // A failed append left a tail that could not be cut off: only a
            // rewrite makes the file match, so the live state with this
            // batch is written whole (rare, so the copy is affordable).
            let (live, next_seq) = (self.live.clone(), self.next_seq);
            for (p, op) in kept {
                self.note_kept(p, op);
            }
            if let Err(e) = self.compact() {
                self.live = live;
                self.next_seq = next_seq;
                return Err(e);
            }
            return Ok(());
        }
        self.append(&buf)?;
        self.file_updates += kept.len() as u64;
        for (p, op) in kept {
            self.note_kept(p, op);
        }
        if self.journal_too_long()
            && let Err(e) = self.compact()
        {
            tracing::warn!(error = %e, "p4runtime state file not compacted; the journal keeps growing until it can be");
        }
        Ok(())
    }

    /// True when the file holds enough more than the live state to rewrite it.
    fn journal_too_long(&self) -> bool {
        self.file_updates > COMPACT_RATIO * self.live.len() as u64 + COMPACT_MIN_UPDATES
    }

    /// Records a new pipeline cookie (RECONCILE_AND_COMMIT: state kept).
    pub fn set_cookie(&mut self, cookie: Option<u64>) -> Result<(), PersistError> {
        self.cookie = cookie;
        if self.dirty {
            return self.compact();
        }
        let mut buf = Vec::new();
        push_record(
            &mut buf,
            KIND_COOKIE,
            &pb::ForwardingPipelineConfig {
                cookie: cookie.map(|cookie| pb::forwarding_pipeline_config::Cookie { cookie }),
                ..Default::default()
            },
        );
        self.append(&buf)?;
        // Cookie records count as journal too, so they cannot pile up.
        self.file_updates += 1;
        if self.journal_too_long() {
            self.compact()?;
        }
        Ok(())
    }

    /// Another program runs from now on (`p4info`, `device_config`: the
    /// header), with `cookie`. With `kept` (RECONCILE_AND_COMMIT: table and
    /// profile ids carried over) the entries, defaults, members and groups
    /// of those and the PRE entries stay; everything else is forgotten.
    pub fn switch_program(
        &mut self,
        p4info: &P4Info,
        device_config: &[u8],
        cookie: Option<u64>,
        kept: Option<(&[u32], &[u32])>,
    ) -> Result<(), PersistError> {
        self.p4info = p4info.clone();
        self.device_config = device_config.to_vec();
        match kept {
            None => self.live.clear(),
            Some((tables, profiles)) => self.live.retain(|k, _| match k {
                LiveKey::Entry(e) => tables.contains(&e.0),
                LiveKey::Default(t) => tables.contains(t),
                LiveKey::Member(p, _) | LiveKey::Group(p, _) => profiles.contains(p),
                LiveKey::MulticastGroup(_) | LiveKey::CloneSession(_) => true,
                _ => false,
            }),
        }
        self.cookie = cookie;
        self.compact()
    }

    /// The header of the state file at `path` (the program it was written
    /// for: P4Info and device config), `None` if there is no file yet.
    pub fn peek_program(path: &Path) -> Result<Option<pb::ForwardingPipelineConfig>, PersistError> {
        let data = match std::fs::read(path) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path)(e)),
        };
        let not_ours = |reason: &str| PersistError::NotAStateFile {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        };
        if data.len() < MAGIC.len() || &data[..MAGIC.len()] != MAGIC {
            return Err(not_ours("bad magic (expected RSWP4RT1)"));
        }
        let Some((KIND_HEADER, body, _)) = parse_record(&data, MAGIC.len()) else {
            return Err(not_ours("missing or damaged header record"));
        };
        pb::ForwardingPipelineConfig::decode(body)
            .map(Some)
            .map_err(|e| not_ours(&format!("header: {e}")))
    }

    /// Forgets all state (a pipeline commit reset the dataplane) and
    /// records `cookie`: the file becomes an empty snapshot.
    pub fn reset(&mut self, cookie: Option<u64>) -> Result<(), PersistError> {
        self.live.clear();
        self.cookie = cookie;
        self.compact()
    }

    /// Appends `buf` (whole records); on failure cuts the file back and
    /// marks it dirty so the next record rewrites it from the live state.
    fn append(&mut self, buf: &[u8]) -> Result<(), PersistError> {
        let Some(file) = self.file.as_mut() else {
            self.dirty = true;
            return Err(io_err(&self.path)(std::io::Error::other("not open")));
        };
        match file.write_all(buf) {
            Ok(()) => {
                self.len_bytes += buf.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Cut off what part of the record reached the file (the
                // file is in append mode, so the next record follows); if
                // even that fails, only a rewrite can repair it.
                if file.set_len(self.len_bytes).is_err() {
                    self.dirty = true;
                }
                Err(io_err(&self.path)(e))
            }
        }
    }

    /// Rewrites the file as header + snapshot of the live state, atomically
    /// (temp file, fsync, rename, fsync of the directory).
    pub fn compact(&mut self) -> Result<(), PersistError> {
        let path = self.path.clone();
        let err = io_err(&path);
        let tmp = tmp_path(&path);
        let mut items: Vec<(u8, u64, &pb::Update)> = self
            .live
            .iter()
            .map(|(k, (seq, u))| (k.rank(), *seq, u))
            .collect();
        items.sort_unstable_by_key(|&(rank, seq, _)| (rank, seq));
        let header = pb::ForwardingPipelineConfig {
            p4info: Some(self.p4info.clone()),
            p4_device_config: self.device_config.clone(),
            cookie: self
                .cookie
                .map(|cookie| pb::forwarding_pipeline_config::Cookie { cookie }),
        };
        let mut buf = Vec::with_capacity(64 * 1024);
        buf.extend_from_slice(MAGIC);
        push_record(&mut buf, KIND_HEADER, &header);
        let file = File::create(&tmp).map_err(io_err(&tmp))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let mut len_bytes = 0u64;
        let mut write = |w: &mut BufWriter<File>, buf: &mut Vec<u8>| {
            len_bytes += buf.len() as u64;
            let r = w.write_all(buf);
            buf.clear();
            r
        };
        write(&mut w, &mut buf).map_err(io_err(&tmp))?;
        for chunk in items.chunks(SNAPSHOT_CHUNK) {
            push_batch(&mut buf, chunk.iter().map(|&(_, _, u)| u));
            write(&mut w, &mut buf).map_err(io_err(&tmp))?;
        }
        let file = w.into_inner().map_err(|e| io_err(&tmp)(e.into_error()))?;
        file.sync_all().map_err(io_err(&tmp))?;
        drop(file);
        std::fs::rename(&tmp, &path).map_err(&err)?;
        if let Some(dir) = path.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(io_err(dir))?;
        }
        self.file = Some(OpenOptions::new().append(true).open(&path).map_err(err)?);
        self.len_bytes = len_bytes;
        self.file_updates = items.len() as u64;
        self.dirty = false;
        tracing::debug!(
            path = %path.display(),
            live = items.len(),
            bytes = len_bytes,
            "p4runtime state compacted"
        );
        Ok(())
    }
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::p4rt::write::{EntryDelete, EntryExtras, EntryWrite};
    use p4_target::externs::MeterConfig;
    use p4_target::runtime::{ActionCall, CounterData, EntryAction, FieldMatch, TableEntry};
    use pb::entity::Entity as E;

    const INFO: &str = r#"
tables { preamble { id: 1 name: "ing.route" } match_fields { id: 1 name: "dst" bitwidth: 32 match_type: LPM } action_refs { id: 10 } size: 1024 }
actions { preamble { id: 10 name: "ing.fwd" } params { id: 1 name: "port" bitwidth: 9 } }
"#;
    const DEVICE: &[u8] = b"roceswitch:unit";

    fn info() -> P4Info {
        proto::p4info_from_text(INFO).unwrap()
    }

    fn route_update(ty: UpdateType, dst: u32, port: u16) -> pb::Update {
        update(
            ty,
            E::TableEntry(pb::TableEntry {
                table_id: 1,
                r#match: vec![pb::FieldMatch {
                    field_id: 1,
                    field_match_type: Some(pb::field_match::FieldMatchType::Lpm(
                        pb::field_match::Lpm {
                            value: dst.to_be_bytes().to_vec(),
                            prefix_len: 32,
                        },
                    )),
                }],
                action: Some(pb::TableAction {
                    r#type: Some(pb::table_action::Type::Action(pb::Action {
                        action_id: 10,
                        params: vec![pb::action::Param {
                            param_id: 1,
                            value: port.to_be_bytes().to_vec(),
                        }],
                    })),
                }),
                ..Default::default()
            }),
        )
    }

    /// The update and the op the write path would decode it to.
    fn route(ty: UpdateType, dst: u32, port: u16) -> (pb::Update, Op) {
        let matches = vec![Some(FieldMatch::Lpm {
            value: dst.into(),
            prefix_len: 32,
        })];
        let e = TableEntry {
            matches: matches.clone(),
            priority: 0,
            action: EntryAction::Direct(ActionCall::new(10, &[port.into()])),
            metadata: Vec::new(),
        };
        let w = EntryWrite {
            table: 1,
            entry: e,
            keep_action: false,
            resources_only: false,
            counter: None,
            meter: None,
            extras: EntryExtras::default(),
            old_meter: None,
            old_extras: EntryExtras::default(),
        };
        let op = match ty {
            UpdateType::Insert => Op::TableInsert(w),
            UpdateType::Modify => Op::TableModify(w),
            _ => Op::TableDelete(EntryDelete {
                table: 1,
                matches,
                priority: 0,
                old_meter: None,
                old_extras: EntryExtras::default(),
                has_counter: false,
            }),
        };
        (route_update(ty, dst, port), op)
    }

    fn record(store: &mut StateStore, batch: &[(pb::Update, Op)]) {
        let refs: Vec<(&pb::Update, &Op)> = batch.iter().map(|(u, o)| (u, o)).collect();
        store.record(&refs).unwrap();
    }

    fn all(loaded: &Loaded) -> Vec<pb::Update> {
        loaded.batches.iter().flatten().cloned().collect()
    }

    #[test]
    fn recorded_writes_and_cookie_come_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.p4rt");
        let (mut store, loaded) = StateStore::open(&path, &info(), DEVICE).unwrap();
        assert!(loaded.batches.is_empty() && loaded.cookie.is_none());
        let b1 = vec![
            route(UpdateType::Insert, 0x0a00_0001, 1),
            route(UpdateType::Insert, 0x0a00_0002, 2),
        ];
        let b2 = vec![route(UpdateType::Modify, 0x0a00_0001, 3)];
        record(&mut store, &b1);
        record(&mut store, &b2);
        store.set_cookie(Some(0xfeed)).unwrap();
        drop(store);

        let (store, loaded) = StateStore::open(&path, &info(), DEVICE).unwrap();
        assert_eq!(loaded.batches.len(), 2, "one record per Write");
        let want: Vec<pb::Update> = b1.iter().chain(&b2).map(|(u, _)| u.clone()).collect();
        assert_eq!(all(&loaded), want);
        assert_eq!(loaded.cookie, Some(0xfeed));
        assert_eq!(loaded.torn_bytes, 0);
        assert_eq!(store.file_updates(), 4, "three updates and a cookie");
    }

    #[test]
    fn cookie_changes_alone_are_compacted_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.p4rt");
        let (mut store, _) = StateStore::open(&path, &info(), DEVICE).unwrap();
        record(&mut store, &[route(UpdateType::Insert, 1, 1)]);
        for c in 0..2 * COMPACT_MIN_UPDATES {
            store.set_cookie(Some(c)).unwrap();
        }
        assert!(store.file_updates() <= COMPACT_MIN_UPDATES + COMPACT_RATIO + 1);
        drop(store);
        let (_, loaded) = StateStore::open(&path, &info(), DEVICE).unwrap();
        assert_eq!(loaded.cookie, Some(2 * COMPACT_MIN_UPDATES - 1));
        assert_eq!(all(&loaded), vec![route_update(UpdateType::Insert, 1, 1)]);
    }

    #[test]
    fn counter_values_and_noops_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.p4rt");
        let (mut store, _) = StateStore::open(&path, &info(), DEVICE).unwrap();
        let (mut with_counter, op) = route(UpdateType::Insert, 7, 1);
        if let Some(E::TableEntry(te)) =
            with_counter.entity.as_mut().and_then(|e| e.entity.as_mut())
        {
            te.counter_data = Some(pb::CounterData {
                byte_count: 100,
                packet_count: 1,
            });
        }
        let counter = update(
            UpdateType::Modify,
            E::CounterEntry(pb::CounterEntry {
                counter_id: 5,
                index: Some(pb::Index { index: 0 }),
                data: Some(pb::CounterData {
                    byte_count: 9,
                    packet_count: 9,
                }),
            }),
        );
        let counter_op = Op::CounterWrite(5, vec![(0, CounterData::default())]);
        let noop = route_update(UpdateType::Modify, 8, 1);
        store
            .record(&[
                (&with_counter, &op),
                (&counter, &counter_op),
                (&noop, &Op::Noop),
            ])
            .unwrap();
        drop(store);
        let (_, loaded) = StateStore::open(&path, &info(), DEVICE).unwrap();
        assert_eq!(all(&loaded), vec![route_update(UpdateType::Insert, 7, 1)]);
    }

    #[test]
    fn churn_is_compacted_to_the_live_state_in_insertion_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.p4rt");
        let (mut store, _) = StateStore::open(&path, &info(), DEVICE).unwrap();
        record(&mut store, &[route(UpdateType::Insert, 1, 1)]);
        record(&mut store, &[route(UpdateType::Insert, 2, 2)]);
        let mut max_len = 0;
        for i in 0..(COMPACT_MIN_UPDATES as u32) {
            record(
                &mut store,
                &[
                    route(UpdateType::Insert, 100 + i, 3),
                    route(UpdateType::Delete, 100 + i, 3),
                ],
            );
            max_len = max_len.max(std::fs::metadata(&path).unwrap().len());
        }
        record(&mut store, &[route(UpdateType::Modify, 1, 4)]);
        assert_eq!(store.live_len(), 2);
        assert!(
            store.file_updates() <= COMPACT_RATIO * 2 + COMPACT_MIN_UPDATES + 2,
            "journal bounded: {}",
            store.file_updates()
        );
        let full =
            2 * COMPACT_MIN_UPDATES * route_update(UpdateType::Insert, 1, 1).encoded_len() as u64;
        assert!(
            max_len < full,
            "compacted before growing without bound ({max_len} bytes)"
        );
        drop(store);
        let (_, loaded) = StateStore::open(&path, &info(), DEVICE).unwrap();
        let got = all(&loaded);
        // The last compaction's snapshot (insertion order) starts the file,
        // the journal since then follows, ending with the modify.
        assert_eq!(got[0], route_update(UpdateType::Insert, 1, 1));
        assert_eq!(got[1], route_update(UpdateType::Insert, 2, 2));
        assert_eq!(got.last(), Some(&route_update(UpdateType::Modify, 1, 4)));
        assert!(got.len() as u64 <= COMPACT_RATIO * 2 + COMPACT_MIN_UPDATES + 2);

        // An explicit compaction folds the modify into the entry.
        let (mut store, _) = StateStore::open(&path, &info(), DEVICE).unwrap();
        for u in &got {
            let dst = match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
                Some(E::TableEntry(te)) => match &te.r#match[0].field_match_type {
                    Some(pb::field_match::FieldMatchType::Lpm(l)) => {
                        u32::from_be_bytes(l.value[..].try_into().unwrap())
                    }
                    _ => unreachable!(),
                },
                _ => unreachable!(),
            };
            let ty = UpdateType::try_from(u.r#type).unwrap();
            let port = if dst == 1 && ty == UpdateType::Modify {
                4
            } else {
                dst as u16
            };
            store.note(u, &route(ty, dst, port).1);
        }
        store.compact().unwrap();
        drop(store);
        let (_, loaded) = StateStore::open(&path, &info(), DEVICE).unwrap();
        assert_eq!(
            all(&loaded),
            vec![
                route_update(UpdateType::Insert, 1, 4),
                route_update(UpdateType::Insert, 2, 2)
            ]
        );
    }

    #[test]
    fn a_torn_or_damaged_tail_is_truncated_and_appends_continue() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.p4rt");
        let (mut store, _) = StateStore::open(&path, &info(), DEVICE).unwrap();
        record(&mut store, &[route(UpdateType::Insert, 1, 1)]);
        let good_len = std::fs::metadata(&path).unwrap().len();
        record(&mut store, &[route(UpdateType::Insert, 2, 2)]);
        drop(store);
        // kill -9 in the middle of the second record's write(2).
        let full = std::fs::read(&path).unwrap();
        std::fs::write(&path, &full[..full.len() - 5]).unwrap();
        let (mut store, loaded) = StateStore::open(&path, &info(), DEVICE).unwrap();
        assert_eq!(all(&loaded), vec![route_update(UpdateType::Insert, 1, 1)]);
        assert_eq!(loaded.torn_bytes, full.len() as u64 - 5 - good_len);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), good_len);
        record(&mut store, &[route(UpdateType::Insert, 3, 3)]);
        drop(store);
        let (_, loaded) = StateStore::open(&path, &info(), DEVICE).unwrap();
        assert_eq!(
            all(&loaded),
            vec![
                route_update(UpdateType::Insert, 1, 1),
                route_update(UpdateType::Insert, 3, 3)
            ]
        );
        assert_eq!(loaded.torn_bytes, 0);

        // A flipped bit in the last record fails its checksum.
        let mut bytes = std::fs::read(&path).unwrap();
        let n = bytes.len();
        bytes[n - 3] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let (_, loaded) = StateStore::open(&path, &info(), DEVICE).unwrap();
        assert_eq!(all(&loaded), vec![route_update(UpdateType::Insert, 1, 1)]);
        assert!(loaded.torn_bytes > 0);
    }

    #[test]
    fn another_programs_file_or_a_foreign_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.p4rt");
        let (mut store, _) = StateStore::open(&path, &info(), DEVICE).unwrap();
        record(&mut store, &[route(UpdateType::Insert, 1, 1)]);
        drop(store);
        let other = proto::p4info_from_text(&INFO.replace("ing.route", "ing.acl")).unwrap();
        let err = StateStore::open(&path, &other, DEVICE).unwrap_err();
        assert!(matches!(err, PersistError::ProgramMismatch { .. }), "{err}");
        assert!(err.to_string().contains("ing.route"), "{err}");
        let err = StateStore::open(&path, &info(), b"roceswitch:other").unwrap_err();
        assert!(err.to_string().contains("roceswitch:other"), "{err}");
        // The refused file is left alone.
        let (_, loaded) = StateStore::open(&path, &info(), DEVICE).unwrap();
        assert_eq!(loaded.batches.len(), 1);

        let foreign = dir.path().join("fabric.json");
        std::fs::write(&foreign, b"{\"ports\": []}").unwrap();
        let err = StateStore::open(&foreign, &info(), DEVICE).unwrap_err();
        assert!(matches!(err, PersistError::NotAStateFile { .. }), "{err}");
    }

    #[test]
    fn reset_empties_the_file_and_keeps_the_new_cookie() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.p4rt");
        let (mut store, _) = StateStore::open(&path, &info(), DEVICE).unwrap();
        record(&mut store, &[route(UpdateType::Insert, 1, 1)]);
        store.reset(Some(42)).unwrap();
        assert_eq!(store.live_len(), 0);
        drop(store);
        let (_, loaded) = StateStore::open(&path, &info(), DEVICE).unwrap();
        assert!(loaded.batches.is_empty());
        assert_eq!(loaded.cookie, Some(42));
    }

    #[test]
    fn meter_and_register_cells_are_live_per_cell() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.p4rt");
        let (mut store, _) = StateStore::open(&path, &info(), DEVICE).unwrap();
        let cfg = MeterConfig {
            cir: 1,
            cburst: 2,
            pir: 3,
            pburst: 4,
        };
        let all_cells = update(
            UpdateType::Modify,
            E::MeterEntry(pb::MeterEntry {
                meter_id: 9,
                index: None,
                config: Some(pb::MeterConfig {
                    cir: 1,
                    cburst: 2,
                    pir: 3,
                    pburst: 4,
                    eburst: 0,
                }),
                counter_data: None,
            }),
        );
        let op = Op::MeterSet(9, vec![(0, Some(cfg), None), (1, Some(cfg), None)]);
        store.note(&all_cells, &op);
        assert_eq!(store.live_len(), 2);
        let clear_one = Op::MeterSet(9, vec![(1, None, Some(cfg))]);
        store.note(&all_cells, &clear_one);
        assert_eq!(store.live_len(), 1);
        let reg = update(
            UpdateType::Modify,
            E::RegisterEntry(pb::RegisterEntry {
                register_id: 4,
                index: None,
                data: None,
            }),
        );
        store.note(&reg, &Op::RegisterWrite(4, vec![(0, 5), (1, 0), (2, 6)]));
        assert_eq!(store.live_len(), 3, "zero is the initial value: not kept");
        store.compact().unwrap();
        drop(store);
        let (_, loaded) = StateStore::open(&path, &info(), DEVICE).unwrap();
        let idx: Vec<(bool, i64)> = all(&loaded)
            .iter()
            .map(
                |u| match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
                    Some(E::MeterEntry(m)) => (true, m.index.unwrap().index),
                    Some(E::RegisterEntry(r)) => (false, r.index.unwrap().index),
                    other => panic!("{other:?}"),
                },
            )
            .collect();
        assert_eq!(idx, vec![(true, 0), (false, 0), (false, 2)]);
    }
}
