//! The tonic implementation of `p4.v1.P4Runtime`: request-level checks
//! (device id, primary election, atomicity mode, the role's right to push
//! a pipeline) around the semantic modules, and the StreamChannel task per
//! controller.
//!
//! Stream (§16): packet-ins go to primaries whose role receives them
//! (through its packet-in filter), digests and idle-timeout notifications
//! to primaries whose role covers the digest or table; a packet-out from a
//! non-primary, bad packet-out metadata, an ack of an unknown digest and
//! an `other` message are answered with a StreamError naming the message.
//!
//! Pipeline (§14): VERIFY_AND_SAVE keeps the config for a COMMIT (none
//! saved: NOT_FOUND); the updates written after saving the running program
//! again are replayed on the cleared state when it is committed.
//!
//! Concurrency: writes are serialised by one async mutex (which also guards
//! the meter shadow), held by one committer task that applies the Writes
//! queued while the last group was at the device together, in one device
//! job (group commit, [`commit_writes`]): each Write keeps its own checks
//! (device, election and role, made when it arrives), decoding, atomicity,
//! per-update results and state-file record, and they are applied in
//! arrival order (P4Runtime promises no order between Writes in flight at
//! once; a client waiting for each answer gets its order). Reads run as
//! one device job each; arbitration state sits behind a short std mutex.
//!
//! Persistence ([`super::persist`]): with a state file
//! ([`P4RuntimeService::restore`]), each Write's applied updates are
//! recorded, still under the write mutex, before the RPC answers; a
//! pipeline commit that resets state resets the file, and the cookie is
//! kept so GetForwardingPipelineConfig answers the same after a restart.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use p4_target::arch::Pre;
use p4_target::info::ProgramInfo;
use p4_target::runtime::{CounterData, EntryPlace};
use proto::p4::config::v1::P4Info;
use proto::p4::v1 as pb;
use proto::p4::v1::p4_runtime_server::{P4Runtime, P4RuntimeServer};
use tokio::sync::{broadcast, watch};
use tokio_stream::Stream;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::{Code, Request, Response, Status, Streaming};

use super::arbitration::{Arbitration, StreamTx, election_id};
use super::digest::{DigestConfig, DigestEngine};
use super::error::{P4Error, read_status, write_status};
use super::loader::Library;
use super::persist::{PersistError, StateStore};
use super::read::{
    ReadContext, TablePlan, default_entity, plan_table_read, read_one, retain_role, role_covers,
    rows_to_entities,
};
use super::roles::{
    OwnedTableAccess, PredefinedRole, RoleAccess, RoleScope, owner_role, predefined_roles,
};
use super::write::{
    Op, ProfileLimits, Shadow, WriteContext, apply_batch, op_from_update, undo_batch,
};

/// What [`Inner::apply`] did: the decoded operations, one result per
/// update, and the inverses of the updates applied (when asked for).
type Applied = (Vec<Result<Op, P4Error>>, Vec<Result<(), P4Error>>, Vec<Op>);

/// Updates a device job carries when a CONTINUE_ON_ERROR batch is applied
/// in slices ([`Inner::apply`]): small enough that the device's apply of
/// one overlaps the decoding of the next, large enough that the hand-offs
/// (a queue push and at most one wake-up each) stay a small part of it.
const PIPELINED_SLICE: usize = 128;
use super::{packet_io, pipeline};

/// Writes one group commit takes at most ([`Inner::commit_group`]).
const GROUP_MAX_WRITES: usize = 64;

/// Updates after which a group takes no further Write: the first Write's
/// answer waits for the whole group, so a group stays about one batch of
/// a thousand long (a bigger Write is a group of its own).
const GROUP_MAX_UPDATES: usize = 1024;

/// One Write of a group, as [`Inner::apply_group`] applies it.
struct WriteInput<'a> {
    updates: &'a [pb::Update],
    atomicity: pb::write_request::Atomicity,
    access: &'a RoleAccess,
}

/// The decoded updates of one Write (or one slice of it) in a device job.
struct JobPart {
    /// The Write's place in its group.
    write: usize,
    ops: Vec<Result<Op, P4Error>>,
    atomicity: pb::write_request::Atomicity,
}

/// A [`JobPart`] applied: the Write's place, its operations, their
/// results and the inverses of those applied.
type PartDone = (
    usize,
    Vec<Result<Op, P4Error>>,
    Vec<Result<(), P4Error>>,
    Vec<Op>,
);

/// A Write RPC waiting for the committer ([`commit_writes`]), checked
/// already (device id, election and role, atomicity mode).
struct PendingWrite {
    request: pb::WriteRequest,
    atomicity: pb::write_request::Atomicity,
    access: RoleAccess,
    reply: tokio::sync::oneshot::Sender<Result<(), Status>>,
}

/// How Writes were committed since the service started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Write RPCs applied.
    pub writes: u64,
    /// Groups they were applied in (each one trip to the device for a
    /// group of small Writes).
    pub groups: u64,
}

#[derive(Default)]
struct WriteCounters {
    writes: AtomicU64,
    groups: AtomicU64,
}

/// The updates of a Write that were applied, with their operations.
fn succeeded<'a>(
    updates: &'a [pb::Update],
    ops: &'a [Result<Op, P4Error>],
    results: &[Result<(), P4Error>],
) -> Vec<(&'a pb::Update, &'a Op)> {
    updates
        .iter()
        .zip(ops.iter().zip(results))
        .filter_map(|(u, (op, res))| match (op, res) {
            (Ok(op), Ok(())) => Some((u, op)),
            _ => None,
        })
        .collect()
}

/// The committer task (group commit): takes the Writes queued by the RPC
/// handlers in arrival order and, under the write lock, applies those
/// waiting together ([`Inner::commit_group`]), so Writes in flight at
/// once pay one trip to the device thread and one wake-up a group
/// instead of a Write. Between groups the lock is let go, so reads and
/// pipeline changes waiting for it come in. Runs apart from the RPCs, so
/// a client going away mid-Write does not cut a group short. Ends when
/// the service is dropped.
async fn commit_writes(
    inner: std::sync::Weak<Inner>,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<PendingWrite>,
) {
    let mut queue: VecDeque<PendingWrite> = VecDeque::new();
    loop {
        if queue.is_empty() {
            match rx.recv().await {
                Some(w) => queue.push_back(w),
                None => return,
            }
        }
        let Some(inner) = inner.upgrade() else { return };
        let mut shadow = inner.shadow.lock().await;
        // What queued up while the last group was at the device (or while
        // the lock was held by someone else) joins this group.
        while queue.len() < GROUP_MAX_WRITES
            && let Ok(w) = rx.try_recv()
        {
            queue.push_back(w);
        }
        inner.commit_group(&mut shadow, &mut queue).await;
    }
}
use crate::device::{Device, DeviceError, DeviceExt};

/// Settings of the P4Runtime service.
#[derive(Clone, Debug)]
pub struct P4RuntimeConfig {
    /// The device id clients must use (p4runtime-shell and finsy default to
    /// 1, bmv2 and PTF's base_test to 0). Capabilities also accepts 0.
    pub device_id: u64,
    /// Tables another service of the switch owns: (table name or unique
    /// dotted suffix, owning service). Tables annotated
    /// `@roceswitch_owner("...")` in the P4Info are added automatically.
    /// They belong to the predefined role `roceswitch.<owner>`
    /// ([`super::roles`]).
    pub owned_tables: Vec<(String, String)>,
    /// Whether the default role may write owned tables too.
    pub owned_table_access: OwnedTableAccess,
    /// The `p4runtime_api_version` Capabilities reports (semver).
    pub api_version: String,
    /// Largest request message accepted, bytes (a device-config bundle
    /// or a big Write batch fits; larger ones are refused before they are
    /// decoded, with OUT_OF_RANGE as tonic answers).
    pub max_message_bytes: usize,
    /// StreamChannels open at once. Each one follows every packet-in and
    /// digest, so a client opening thousands would cost the switch for
    /// nothing: the next is refused with RESOURCE_EXHAUSTED.
    pub max_streams: usize,
}

/// Default [`P4RuntimeConfig::max_message_bytes`]: 64 MiB.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;
/// Default [`P4RuntimeConfig::max_streams`].
pub const MAX_STREAMS: usize = 64;

impl Default for P4RuntimeConfig {
    fn default() -> Self {
        P4RuntimeConfig {
            device_id: 1,
            owned_tables: Vec::new(),
            owned_table_access: OwnedTableAccess::default(),
            api_version: "1.4.1".into(),
            max_message_bytes: MAX_MESSAGE_BYTES,
            max_streams: MAX_STREAMS,
        }
    }
}

/// Why the service could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// An owned-table name resolves to no table (or to several).
    #[error("owned table '{0}' is not a (unique) table of the program")]
    UnknownOwnedTable(String),
    /// The program's P4Info text does not parse.
    #[error(transparent)]
    P4Info(#[from] proto::TextFormatError),
}

#[derive(Default)]
struct PipelineState {
    cookie: Option<u64>,
    /// What VERIFY_AND_SAVE saved for a COMMIT: the program and its cookie.
    saved: Option<(Arc<Program>, Option<u64>)>,
    /// The updates applied since VERIFY_AND_SAVE saved the running
    /// program again: a COMMIT replays them on the cleared state (§14).
    since_save: Vec<pb::Update>,
}

/// The program the service serves, swapped whole by a pipeline commit.
struct Program {
    info: &'static ProgramInfo,
    p4info: P4Info,
    /// What GetForwardingPipelineConfig returns and the state file's header
    /// holds: `roceswitch:NAME` for the compiled-in program, the bundle
    /// bytes for a loaded one.
    device_config: Vec<u8>,
    owned: HashMap<u32, String>,
    profiles: HashMap<u32, ProfileLimits>,
    /// The loaded library, `None` for the compiled-in program.
    library: Option<Arc<Library>>,
}

struct Inner {
    /// The compiled-in program (what the device runs at start).
    builtin: Arc<Program>,
    program: std::sync::RwLock<Arc<Program>>,
    config: P4RuntimeConfig,
    device: Arc<dyn Device>,
    arbitration: Mutex<Arbitration>,
    pipeline: Mutex<PipelineState>,
    idle_scanner: std::sync::atomic::AtomicBool,
    shadow: tokio::sync::Mutex<Shadow>,
    /// The enabled digests (a copy of `shadow.digests` the streams watch).
    digest_configs: watch::Sender<DigestConfigs>,
    /// The state file, if any; locked only while `shadow` is held.
    store: Mutex<Option<StateStore>>,
    next_stream: AtomicU64,
    /// StreamChannels open now (at most `config.max_streams`).
    open_streams: Arc<std::sync::atomic::AtomicUsize>,
    /// The committer's queue, once the first Write started it.
    writes: std::sync::OnceLock<tokio::sync::mpsc::UnboundedSender<PendingWrite>>,
    write_stats: WriteCounters,
}

/// One open StreamChannel's place in [`Inner::open_streams`], given back
/// when the stream's task ends.
struct StreamSlot(Arc<std::sync::atomic::AtomicUsize>);

impl StreamSlot {
    fn take(open: &Arc<std::sync::atomic::AtomicUsize>, max: usize) -> Option<StreamSlot> {
        open.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < max).then_some(n + 1)
        })
        .ok()
        .map(|_| StreamSlot(open.clone()))
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

type DigestConfigs = HashMap<u32, DigestConfig>;

/// What [`P4RuntimeService::restore`] replayed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Updates replayed and applied.
    pub applied: usize,
    /// Updates the write path refused on replay (logged; the file is
    /// rewritten to the state actually restored).
    pub refused: usize,
    /// Bytes of a torn tail cut off the file.
    pub torn_bytes: u64,
    /// The pipeline cookie restored.
    pub cookie: Option<u64>,
}

/// The P4Runtime service over one device.
#[derive(Clone)]
pub struct P4RuntimeService {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for P4RuntimeService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("P4RuntimeService")
            .field("program", &self.inner.program().info.name)
            .field("device_id", &self.inner.config.device_id)
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn device_status(e: DeviceError) -> Status {
    Status::new(Code::Unavailable, format!("dataplane: {e}"))
}

fn not_persisted(e: PersistError) -> Status {
    tracing::error!(error = %e, "p4runtime state not persisted");
    Status::internal(format!(
        "applied to the dataplane but not persisted (lost on restart until a later write succeeds): {e}"
    ))
}

/// A Write whose batch the state file could not record (it was taken
/// back): RESOURCE_EXHAUSTED when the disk or a limit is full, UNAVAILABLE
/// otherwise (read-only file system, I/O error): both say "not now" to a
/// client, which may retry; neither blames an update.
fn write_not_recorded(e: PersistError) -> Status {
    use std::io::ErrorKind as K;
    tracing::error!(error = %e, "p4runtime write not recorded in the state file: refused and taken back");
    let full = matches!(
        &e,
        PersistError::Io { source, .. }
            if matches!(source.kind(), K::StorageFull | K::QuotaExceeded | K::FileTooLarge)
    );
    let message = format!("not applied: the state file could not record this write: {e}");
    if full {
        Status::resource_exhausted(message)
    } else {
        Status::unavailable(message)
    }
}

/// The device config of the compiled-in program: what
/// GetForwardingPipelineConfig returns for it and Set accepts to select it.
pub fn builtin_device_config(info: &ProgramInfo) -> Vec<u8> {
    format!("roceswitch:{}", info.name).into_bytes()
}

fn owner_annotation(annotations: &[String]) -> Option<String> {
    annotations.iter().find_map(|a| {
        let rest = a.trim().strip_prefix("@roceswitch_owner(")?;
        Some(
            rest.trim_end_matches(')')
                .trim()
                .trim_matches('"')
                .to_string(),
        )
    })
}

impl Program {
    /// The service's view of `info` (whose P4Info is `p4info`). Owned
    /// tables named in `config` must exist when `strict` (the compiled-in
    /// program); a loaded program simply lacks those it does not have.
    fn build(
        info: &'static ProgramInfo,
        p4info: P4Info,
        device_config: Vec<u8>,
        library: Option<Arc<Library>>,
        config: &P4RuntimeConfig,
        strict: bool,
    ) -> Result<Program, ServiceError> {
        let mut owned = HashMap::new();
        for (name, owner) in &config.owned_tables {
            match info.table_by_name(name) {
                Some(t) => {
                    owned.insert(t.id, owner.clone());
                }
                None if strict => return Err(ServiceError::UnknownOwnedTable(name.clone())),
                None => {}
            }
        }
        for t in &p4info.tables {
            if let Some(pre) = &t.preamble
                && let Some(owner) = owner_annotation(&pre.annotations)
            {
                owned.insert(pre.id, owner);
            }
        }
        let profiles = p4info
            .action_profiles
            .iter()
            .filter_map(|p| {
                use proto::p4::config::v1::action_profile::SelectorSizeSemantics as S;
                let (sum_of_members, max_member_weight) = match &p.selector_size_semantics {
                    Some(S::SumOfMembers(m)) => (true, m.max_member_weight),
                    _ => (false, 0),
                };
                Some((
                    p.preamble.as_ref()?.id,
                    ProfileLimits {
                        max_group_size: p.max_group_size,
                        sum_of_members,
                        max_member_weight,
                    },
                ))
            })
            .collect();
        Ok(Program {
            info,
            p4info,
            device_config,
            owned,
            profiles,
            library,
        })
    }
}

impl Program {
    /// The roles of the services that own some of this program's tables.
    fn predefined_roles(&self, access: OwnedTableAccess) -> Vec<PredefinedRole> {
        let owned = self
            .owned
            .iter()
            .map(|(&id, o)| (id, owner_role(o)))
            .collect();
        predefined_roles(&owned, access)
    }
}

impl P4RuntimeService {
    /// Builds the service for `info` (the compiled program) whose P4Info is
    /// `p4info`, driving `device`.
    pub fn new(
        info: &'static ProgramInfo,
        p4info: P4Info,
        device: Arc<dyn Device>,
        config: P4RuntimeConfig,
    ) -> Result<Self, ServiceError> {
        let device_config = builtin_device_config(info);
        let program = Arc::new(Program::build(
            info,
            p4info,
            device_config,
            None,
            &config,
            true,
        )?);
        let roles = program.predefined_roles(config.owned_table_access);
        let arbitration = Arbitration::new(config.device_id, &roles);
        Ok(P4RuntimeService {
            inner: Arc::new(Inner {
                builtin: program.clone(),
                program: std::sync::RwLock::new(program),
                config,
                device,
                arbitration: Mutex::new(arbitration),
                pipeline: Mutex::default(),
                idle_scanner: std::sync::atomic::AtomicBool::new(false),
                shadow: tokio::sync::Mutex::default(),
                digest_configs: watch::Sender::new(HashMap::new()),
                store: Mutex::default(),
                next_stream: AtomicU64::new(1),
                open_streams: Arc::default(),
                writes: std::sync::OnceLock::new(),
                write_stats: WriteCounters::default(),
            }),
        })
    }

    /// Builds the service, parsing the P4Info from `info.p4info_text`.
    pub fn from_program(
        info: &'static ProgramInfo,
        device: Arc<dyn Device>,
        config: P4RuntimeConfig,
    ) -> Result<Self, ServiceError> {
        let p4info = proto::p4info_from_text(info.p4info_text)?;
        Self::new(info, p4info, device, config)
    }

    /// The tonic server wrapper. Starts the idle-timeout scanner when the
    /// program has idle-timeout tables (needs a tokio runtime).
    pub fn into_server(self) -> P4RuntimeServer<Self> {
        self.inner.start_idle_scanner();
        tokio::spawn(watch_refresh(Arc::downgrade(&self.inner)));
        let max = self.inner.config.max_message_bytes;
        P4RuntimeServer::new(self)
            .max_decoding_message_size(max)
            .max_encoding_message_size(max)
    }

    /// How many Writes were applied, in how many groups.
    pub fn write_stats(&self) -> WriteStats {
        let c = &self.inner.write_stats;
        WriteStats {
            writes: c.writes.load(Ordering::Relaxed),
            groups: c.groups.load(Ordering::Relaxed),
        }
    }

    /// Table ids of the running program that belong to another service,
    /// with their owners.
    pub fn owned_tables(&self) -> HashMap<u32, String> {
        self.inner.program().owned.clone()
    }

    /// Restores the state recorded in the P4Runtime state file `path`
    /// (created if missing) by replaying it through the Write path, then
    /// records every later change there. Call once, before serving, on a
    /// device in its initial state. Errors: the file is unreadable, not a
    /// state file, or written for another program; a torn tail is only
    /// truncated (with a warning).
    pub async fn restore(&self, path: &Path) -> Result<RestoreReport, PersistError> {
        let inner = &self.inner;
        // A file written while a loaded program ran brings that program back.
        if let Some(header) = StateStore::peek_program(path)?
            && !header.p4_device_config.is_empty()
            && header.p4_device_config != inner.builtin.device_config
            && p4_target::bundle::Bundle::is_bundle(&header.p4_device_config)
        {
            let replay = |message: String| PersistError::Replay {
                path: path.to_path_buf(),
                message,
            };
            let program = inner
                .resolve(Some(&header))
                .await
                .map_err(|s| replay(format!("loading its program: {}", s.message())))?;
            inner
                .swap(&program, &pipeline::Unchanged::default(), false)
                .await
                .map_err(|s| replay(s.message().to_string()))?;
            inner.install(program);
        }
        let program = inner.program();
        let mut shadow = inner.shadow.lock().await;
        let (mut store, loaded) = StateStore::open(path, &program.p4info, &program.device_config)?;
        let mut report = RestoreReport {
            torn_bytes: loaded.torn_bytes,
            cookie: loaded.cookie,
            ..Default::default()
        };
        for batch in &loaded.batches {
            let (ops, results, _) = inner
                .apply(
                    &mut shadow,
                    batch,
                    pb::write_request::Atomicity::ContinueOnError,
                    &RoleAccess::full(),
                    false,
                )
                .await
                .map_err(|s| PersistError::Replay {
                    path: path.to_path_buf(),
                    message: s.message().to_string(),
                })?;
            for ((u, op), res) in batch.iter().zip(&ops).zip(&results) {
                match (op, res) {
                    (Ok(op), Ok(())) => {
                        store.note(u, op);
                        report.applied += 1;
                    }
                    (Err(e), _) | (_, Err(e)) => {
                        report.refused += 1;
                        tracing::warn!(error = %e, update = ?u, "stored P4Runtime update refused on replay: dropped");
                    }
                }
            }
        }
        lock(&inner.pipeline).cookie = loaded.cookie;
        if report.refused > 0 || loaded.header_outdated {
            store.compact()?;
        }
        tracing::info!(
            path = %path.display(),
            applied = report.applied,
            refused = report.refused,
            torn_bytes = report.torn_bytes,
            live = store.live_len(),
            "p4runtime state restored"
        );
        *lock(&inner.store) = Some(store);
        drop(shadow);
        Ok(report)
    }
}

impl Inner {
    /// The program served now.
    /// Makes `program` the one requests are judged by (the dataplane
    /// already runs it): its owned tables become the predefined roles'
    /// scopes, so a role never keeps the table ids of a program gone.
    fn install(&self, program: Arc<Program>) {
        let roles = program.predefined_roles(self.config.owned_table_access);
        *self.program.write().unwrap_or_else(|e| e.into_inner()) = program;
        lock(&self.arbitration).redefine(self.config.device_id, &roles);
    }

    fn program(&self) -> Arc<Program> {
        self.program
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Starts the idle-timeout scanner once the program has idle-timeout
    /// tables (at start, or when such a program is loaded).
    fn start_idle_scanner(self: &Arc<Self>) {
        if self.program().info.tables.iter().any(|t| t.idle_timeout)
            && !self.idle_scanner.swap(true, Ordering::Relaxed)
        {
            tokio::spawn(idle_scan(Arc::downgrade(self)));
        }
    }

    fn check_device(&self, device_id: u64) -> Result<(), Status> {
        if device_id == self.config.device_id {
            Ok(())
        } else {
            Err(Status::not_found(format!(
                "device_id: unknown device {device_id} (this switch is device {})",
                self.config.device_id
            )))
        }
    }

    /// Decodes `updates` against `shadow`, applies them with `atomicity`
    /// and folds the applied changes into `shadow` ([`Inner::apply_group`]
    /// of one Write). Returns the decoded operations, one result per update
    /// and, with `keep_undo`, the inverses that take the batch back
    /// ([`Inner::undo`]).
    async fn apply(
        &self,
        shadow: &mut Shadow,
        updates: &[pb::Update],
        atomicity: pb::write_request::Atomicity,
        access: &RoleAccess,
        keep_undo: bool,
    ) -> Result<Applied, Status> {
        let write = WriteInput {
            updates,
            atomicity,
            access,
        };
        let mut applied = self
            .apply_group(shadow, std::slice::from_ref(&write), keep_undo)
            .await?;
        Ok(applied.pop().expect("one Write in, one applied"))
    }

    /// Applies a leading run of `writes` (at least one) in order, each
    /// Write with its own atomicity and access, in as few device jobs as
    /// the sizes allow, and folds the applied changes into `shadow`.
    /// Returns what [`Inner::apply`] returns, for each Write taken; the
    /// others are left for the next group.
    ///
    /// Every Write is decoded against the shadow as the Writes before it
    /// left it, without waiting for their device results: a Write whose
    /// operations may change the shadow ([`Shadow::changed_by`]) ends the
    /// run, as does reaching [`GROUP_MAX_UPDATES`] updates. The device
    /// runs the jobs in order and each Write's batch inside a job as
    /// [`apply_batch`] runs it alone, so each Write gets the results it
    /// would get alone; an all-or-nothing Write rolls back only itself,
    /// and stays within one job (one step for the dataplane).
    async fn apply_group(
        &self,
        shadow: &mut Shadow,
        writes: &[WriteInput<'_>],
        keep_undo: bool,
    ) -> Result<Vec<Applied>, Status> {
        let program = self.program();
        // A batch without atomicity goes to the device in slices, each
        // submitted as soon as it is decoded, so the device applies one
        // slice while this thread decodes the next. Decoding reads only
        // the shadow as it was before the batch, as it did for the whole
        // batch at once, and the device runs jobs in order: the results
        // are the same; only a reader between two slices sees part of
        // the batch, which CONTINUE_ON_ERROR allows (P4Runtime §12.3).
        // Small Writes share a job until it holds PIPELINED_SLICE updates.
        // Every job is submitted before any reply is awaited: the device
        // runs them in order, so once the first reply is awaited the
        // thread parks at most once for the group instead of once a job.
        let mut jobs = Vec::new();
        let mut parts: Vec<JobPart> = Vec::new();
        let mut parts_len = 0;
        let mut taken = 0;
        let mut group_len = 0;
        for (w, write) in writes.iter().enumerate() {
            let cx = WriteContext {
                info: program.info,
                access: write.access,
                profiles: &program.profiles,
                shadow,
                next_hidden: std::cell::Cell::new(shadow.next_hidden),
            };
            let slice = if write.atomicity == pb::write_request::Atomicity::ContinueOnError {
                PIPELINED_SLICE
            } else {
                write.updates.len().max(1)
            };
            // An empty batch is still a part: it reports a stopped device.
            let chunks: Vec<&[pb::Update]> = if write.updates.is_empty() {
                vec![write.updates]
            } else {
                write.updates.chunks(slice).collect()
            };
            let mut ends_group = false;
            for chunk in chunks {
                let ops: Vec<Result<Op, P4Error>> =
                    chunk.iter().map(|u| op_from_update(&cx, u)).collect();
                ends_group |= ops
                    .iter()
                    .any(|op| op.as_ref().is_ok_and(|op| shadow.changed_by(op)));
                parts_len += ops.len();
                parts.push(JobPart {
                    write: w,
                    ops,
                    atomicity: write.atomicity,
                });
                if parts_len >= PIPELINED_SLICE {
                    jobs.push(self.submit_parts(std::mem::take(&mut parts), keep_undo));
                    parts_len = 0;
                }
            }
            taken = w + 1;
            group_len += write.updates.len();
            if ends_group || group_len >= GROUP_MAX_UPDATES {
                break;
            }
        }
        if !parts.is_empty() {
            jobs.push(self.submit_parts(parts, keep_undo));
        }
        let mut applied: Vec<Applied> = (0..taken)
            .map(|_| (Vec::new(), Vec::new(), Vec::new()))
            .collect();
        for job in jobs {
            for (w, o, r, u) in job.await.map_err(device_status)? {
                let (ops, results, undo) = &mut applied[w];
                let total = writes[w].updates.len();
                // A Write in one part is moved, not copied; one in slices
                // is gathered into room for all of it at once.
                if ops.is_empty() && o.len() == total {
                    (*ops, *results) = (o, r);
                } else {
                    if ops.is_empty() {
                        ops.reserve_exact(total);
                        results.reserve_exact(total);
                    }
                    ops.extend(o);
                    results.extend(r);
                }
                undo.extend(u);
            }
        }
        let mut digests_changed = false;
        for (ops, results, _) in &applied {
            for (op, res) in ops.iter().zip(results) {
                let (Ok(op), Ok(())) = (op, res) else {
                    continue;
                };
                shadow.record(op);
                digests_changed |= matches!(op, Op::DigestSet(..));
            }
        }
        if digests_changed {
            self.digest_configs.send_replace(shadow.digests.clone());
        }
        Ok(applied)
    }

    /// Submits one device job applying `parts` in order, each with its
    /// atomicity ([`apply_batch`]).
    fn submit_parts(
        &self,
        parts: Vec<JobPart>,
        keep_undo: bool,
    ) -> impl std::future::Future<Output = Result<Vec<PartDone>, DeviceError>> + Send {
        self.device.with_state(move |dev| {
            parts
                .into_iter()
                .map(|p| {
                    let mut undo = Vec::new();
                    let results =
                        apply_batch(dev, &p.ops, p.atomicity, keep_undo.then_some(&mut undo));
                    (p.write, p.ops, results, undo)
                })
                .collect()
        })
    }

    /// The queue of the committer task, started by the first Write.
    fn write_queue(self: &Arc<Self>) -> &tokio::sync::mpsc::UnboundedSender<PendingWrite> {
        self.writes.get_or_init(|| {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            tokio::spawn(commit_writes(Arc::downgrade(self), rx));
            tx
        })
    }

    /// Commits the group at the head of `queue` ([`Inner::apply_group`]
    /// chooses how many Writes it takes) and answers each of its Writes
    /// with its own result. The state file records the group's Writes in
    /// one append, one batch record each; if it cannot, every Write of the
    /// group is taken back (newest first) and refused, so the file and the
    /// dataplane stay alike.
    async fn commit_group(&self, shadow: &mut Shadow, queue: &mut VecDeque<PendingWrite>) {
        let persisting = lock(&self.store).is_some();
        let inputs: Vec<WriteInput<'_>> = queue
            .iter()
            .take(GROUP_MAX_WRITES)
            .map(|w| WriteInput {
                updates: &w.request.updates,
                atomicity: w.atomicity,
                access: &w.access,
            })
            .collect();
        let candidates = inputs.len();
        let result = self.apply_group(shadow, &inputs, persisting).await;
        drop(inputs);
        let mut applied = match result {
            Ok(applied) => applied,
            Err(status) => {
                // The device is gone: none of these can be applied.
                for w in queue.drain(..candidates) {
                    let _ = w.reply.send(Err(status.clone()));
                }
                return;
            }
        };
        let group: Vec<PendingWrite> = queue.drain(..applied.len()).collect();
        self.write_stats
            .writes
            .fetch_add(group.len() as u64, Ordering::Relaxed);
        self.write_stats.groups.fetch_add(1, Ordering::Relaxed);
        tracing::trace!(writes = group.len(), "p4runtime write group applied");
        let recorded = lock(&self.store).as_mut().map(|store| {
            let lists: Vec<Vec<(&pb::Update, &Op)>> = group
                .iter()
                .zip(&applied)
                .map(|(w, (ops, results, _))| succeeded(&w.request.updates, ops, results))
                .collect();
            let lists: Vec<&[(&pb::Update, &Op)]> = lists.iter().map(Vec::as_slice).collect();
            store.record_writes(&lists)
        });
        if let Some(Err(e)) = recorded {
            // What a restart would not bring back is not kept now either:
            // the group is taken back and the switch forwards as before.
            let undo: Vec<Op> = applied
                .iter_mut()
                .flat_map(|(_, _, undo)| std::mem::take(undo))
                .collect();
            let status = match self.undo(shadow, undo).await {
                Ok(()) => write_not_recorded(e),
                Err(status) => status,
            };
            for w in group {
                let _ = w.reply.send(Err(status.clone()));
            }
            return;
        }
        {
            let mut pipeline = lock(&self.pipeline);
            if let Some((saved, _)) = &pipeline.saved
                && Arc::ptr_eq(saved, &self.program())
            {
                for (w, (_, results, _)) in group.iter().zip(&applied) {
                    let ok = w.request.updates.iter().zip(results);
                    let ok = ok.filter(|(_, res)| res.is_ok()).map(|(u, _)| u.clone());
                    pipeline.since_save.extend(ok);
                }
            }
        }
        for (w, (ops, results, undo)) in group.into_iter().zip(applied) {
            let PendingWrite { request, reply, .. } = w;
            let _ = reply.send(match write_status(&results) {
                Some(status) => Err(status),
                None => Ok(()),
            });
            if request.updates.len() >= PIPELINED_SLICE {
                // Freeing a big batch's request and decoded operations (a
                // few allocations an update) is left to a blocking-pool
                // thread, so the next group need not wait for it.
                tokio::task::spawn_blocking(move || drop((request, ops, results, undo)));
            }
        }
    }

    /// Applies `updates` again (a COMMIT replaying what was written since
    /// VERIFY_AND_SAVE) with full access, recording them in the state file.
    async fn replay(&self, updates: &[pb::Update]) -> Result<(), Status> {
        if updates.is_empty() {
            return Ok(());
        }
        let mut shadow = self.shadow.lock().await;
        let (ops, results, _) = self
            .apply(
                &mut shadow,
                updates,
                pb::write_request::Atomicity::ContinueOnError,
                &RoleAccess::full(),
                false,
            )
            .await?;
        if let Some(store) = lock(&self.store).as_mut() {
            store
                .record(&succeeded(updates, &ops, &results))
                .map_err(not_persisted)?;
        }
        Ok(())
    }

    /// Takes back a batch [`Inner::apply`] applied: its inverses run in one
    /// device job, newest first, and are folded into `shadow` the same way.
    async fn undo(&self, shadow: &mut Shadow, undo: Vec<Op>) -> Result<(), Status> {
        let undo = self
            .device
            .with_state(move |dev| {
                undo_batch(dev, &undo);
                undo
            })
            .await
            .map_err(device_status)?;
        for op in undo.iter().rev() {
            shadow.record(op);
        }
        if undo.iter().any(|op| matches!(op, Op::DigestSet(..))) {
            self.digest_configs.send_replace(shadow.digests.clone());
        }
        Ok(())
    }

    /// Removes every entry, member, group, PRE entry, value-set member and
    /// counter/meter/register value the control plane wrote, except in tables other services own; sets
    /// the pipeline cookie to `cookie` and resets the state file to match.
    async fn reset_state(&self, cookie: Option<u64>) -> Result<(), Status> {
        let program = self.program();
        let info = program.info;
        let owned: Vec<u32> = program.owned.keys().copied().collect();
        let mut shadow = self.shadow.lock().await;
        self.device
            .with_state(move |dev| {
                if let Some(pre) = dev.pre.as_deref_mut() {
                    *pre = Pre::new();
                }
                clear_runtime(&mut *dev.runtime, info, &owned);
            })
            .await
            .map_err(device_status)?;
        *shadow = Shadow::default();
        self.digest_configs.send_replace(HashMap::new());
        lock(&self.pipeline).cookie = cookie;
        if let Some(store) = lock(&self.store).as_mut() {
            store.reset(cookie).map_err(not_persisted)?;
        }
        Ok(())
    }
}

/// Copies the members and groups of the profiles and the entries and
/// default actions of the tables in `kept` from `old` to `new` (direct
/// counters and meters start afresh).
fn carry_over(
    old: &p4_target::runtime::Runtime,
    new: &mut p4_target::runtime::Runtime,
    kept: &pipeline::Unchanged,
) {
    use p4_target::runtime::RuntimeApi as _;
    for &p in &kept.profiles {
        for (m, action) in old.members(p).unwrap_or_default() {
            let _ = new.member_write(p, m, action, false);
        }
        for (g, members) in old.groups(p).unwrap_or_default() {
            let _ = new.group_write(p, g, &members, false);
        }
    }
    for &t in &kept.tables {
        for e in old.table_entries(t).unwrap_or_default() {
            // Const entries are the program's own: already there.
            let _ = new.table_insert(t, e);
        }
        if let Ok(d) = old.table_default(t) {
            let _ = new.table_set_default(t, d);
        }
    }
}

/// Removes every entry, member, group, value-set member and
/// counter/meter/register value of `info`'s program from `rt`, except in
/// the tables `owned` (other services own them).
fn clear_runtime(rt: &mut dyn p4_target::runtime::RuntimeApi, info: &ProgramInfo, owned: &[u32]) {
    for t in info.tables.iter().filter(|t| !owned.contains(&t.id)) {
        let _ = rt.table_clear(t.id);
        if !t.default_is_const {
            let _ = rt.table_reset_default(t.id);
        }
    }
    for p in info.action_profiles {
        for (g, _) in rt.groups(p.id).unwrap_or_default() {
            let _ = rt.group_delete(p.id, g);
        }
        for (m, _) in rt.members(p.id).unwrap_or_default() {
            let _ = rt.member_delete(p.id, m);
        }
    }
    for c in info.counters.iter().filter(|c| c.direct_table.is_none()) {
        for i in 0..c.size {
            let _ = rt.counter_write(c.id, i, CounterData::default());
        }
    }
    for m in info.meters.iter().filter(|m| m.direct_table.is_none()) {
        for i in 0..m.size {
            let _ = rt.meter_set(m.id, i, None);
        }
    }
    for r in info.registers {
        for i in 0..r.size {
            let _ = rt.register_write(r.id, i, 0);
        }
    }
    for v in info.value_sets {
        let _ = rt.value_set_write(v.id, &[]);
    }
}

impl Inner {
    /// The program a SetForwardingPipelineConfig `config` names (see
    /// control/README.md "Loading programs"): an empty device config is the
    /// running program, `roceswitch:NAME` the compiled-in one, a bundle a
    /// program to load; anything else is refused, saying what is expected.
    /// The P4Info must describe that program.
    async fn resolve(
        &self,
        config: Option<&pb::ForwardingPipelineConfig>,
    ) -> Result<Arc<Program>, Status> {
        let p4info = config
            .and_then(|c| c.p4info.as_ref())
            .ok_or_else(|| Status::invalid_argument("config.p4info: missing"))?;
        let device_config = config.map_or(&[][..], |c| &c.p4_device_config[..]);
        let running = self.program();
        let check = |program: &Arc<Program>| -> Result<Arc<Program>, Status> {
            pipeline::verify(program.info.name, &program.p4info, p4info)
                .map_err(|e| e.to_status())?;
            Ok(program.clone())
        };
        if device_config.is_empty() {
            return check(&running).map_err(|s| {
                Status::invalid_argument(format!(
                    "{} (an empty p4_device_config means the running program '{}')",
                    s.message(),
                    running.info.name
                ))
            });
        }
        if device_config == running.device_config.as_slice() {
            return check(&running);
        }
        if device_config == self.builtin.device_config.as_slice() {
            return check(&self.builtin);
        }
        if !p4_target::bundle::Bundle::is_bundle(device_config) {
            let looks = if device_config.trim_ascii_start().starts_with(b"{") {
                " (it looks like JSON, e.g. a bmv2 config: this is not bmv2)"
            } else {
                ""
            };
            return Err(Status::invalid_argument(format!(
                "config.p4_device_config: {} bytes this switch cannot load{looks}; expected a bundle built by `p4-to-rust build` (starting \"P4RSBNDL\"), '{}' for the compiled-in program, or nothing for the running program '{}'",
                device_config.len(),
                String::from_utf8_lossy(&self.builtin.device_config),
                running.info.name
            )));
        }
        let bytes = device_config.to_vec();
        let library = tokio::task::spawn_blocking(move || super::loader::load(&bytes))
            .await
            .map_err(|e| Status::internal(format!("loading the pipeline: {e}")))?
            .map_err(|e| e.to_status())?;
        pipeline::verify(library.info.name, &library.p4info, p4info).map_err(|e| e.to_status())?;
        let program = Program::build(
            library.info,
            p4info.clone(),
            device_config.to_vec(),
            Some(library),
            &self.config,
            false,
        )
        .map_err(|e| Status::invalid_argument(e.to_string()))?;
        Ok(Arc::new(program))
    }

    /// Makes `program` the running one with `cookie`. The same program
    /// again: a reset of the forwarding state, or with `reconcile` only the
    /// cookie. Another program: swapped in between two packets; with
    /// `reconcile` the entries of tables unchanged in both programs (and
    /// the members and groups of unchanged profiles, and the packet
    /// replication engine) are carried over, otherwise everything starts
    /// empty (fabric-owned tables of the compiled-in program keep theirs).
    async fn commit(
        self: &Arc<Self>,
        program: Arc<Program>,
        cookie: Option<u64>,
        reconcile: bool,
    ) -> Result<(), Status> {
        let running = self.program();
        if Arc::ptr_eq(&program, &running) {
            if reconcile {
                let _writes = self.shadow.lock().await;
                lock(&self.pipeline).cookie = cookie;
                if let Some(store) = lock(&self.store).as_mut() {
                    store.set_cookie(cookie).map_err(not_persisted)?;
                }
                return Ok(());
            }
            return self.reset_state(cookie).await;
        }
        let kept = if reconcile {
            pipeline::unchanged(&running.p4info, &program.p4info)
        } else {
            pipeline::Unchanged::default()
        };
        let mut shadow = self.shadow.lock().await;
        let started = std::time::Instant::now();
        self.swap(&program, &kept, reconcile).await?;
        let swap_us = started.elapsed().as_micros();
        if reconcile {
            shadow.retain_program(&kept.tables, &kept.profiles);
        } else {
            *shadow = Shadow::default();
        }
        self.digest_configs.send_replace(shadow.digests.clone());
        self.install(program.clone());
        lock(&self.pipeline).cookie = cookie;
        if let Some(store) = lock(&self.store).as_mut() {
            store
                .switch_program(
                    &program.p4info,
                    &program.device_config,
                    cookie,
                    reconcile.then_some((&kept.tables[..], &kept.profiles[..])),
                )
                .map_err(not_persisted)?;
        }
        drop(shadow);
        self.start_idle_scanner();
        tracing::info!(
            from = running.info.name,
            to = program.info.name,
            reconcile,
            kept_tables = kept.tables.len(),
            swap_us,
            "pipeline swapped"
        );
        Ok(())
    }

    /// Swaps the device's pipeline to `program` (one dataplane job).
    async fn swap(
        &self,
        program: &Program,
        kept: &pipeline::Unchanged,
        reconcile: bool,
    ) -> Result<(), Status> {
        // Built here, off the dataplane thread: the job only moves it in.
        let next = program.library.as_ref().map(|l| l.instantiate());
        let info = program.info;
        let owned: Vec<u32> = program.owned.keys().copied().collect();
        let kept = kept.clone();
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.device
            .submit_swap(Box::new(move |slot, pre| {
                let (old, new) = slot.install(next);
                // The compiled-in program, installed again, still holds
                // what it had: start it afresh (a loaded one is fresh).
                clear_runtime(new, info, &owned);
                if let Some(old) = old {
                    carry_over(old, new, &kept);
                }
                if !reconcile && let Some(pre) = pre {
                    *pre = Pre::new();
                }
                let _ = tx.send(());
            }))
            .map_err(|e| match e {
                DeviceError::NoPipelineSwap => Status::unimplemented(format!(
                    "config.p4_device_config: {e}; it runs '{}' only",
                    self.builtin.info.name
                )),
                e => device_status(e),
            })?;
        rx.await.map_err(|_| device_status(DeviceError::Stopped))
    }

    /// Handles one StreamChannel message; `false` closes the stream.
    fn stream_message(
        &self,
        stream: u64,
        msg: pb::StreamMessageRequest,
        tx: &StreamTx,
        arbitrated: &mut bool,
    ) -> bool {
        use pb::stream_message_request::Update;
        let report = |code: Code, message: String, details: pb::stream_error::Details| {
            let _ = tx.send(Ok(stream_error(code, message, details)));
        };
        match msg.update {
            Some(Update::Arbitration(a)) => {
                // A stream keeps its device (§5.3): another id is
                // FAILED_PRECONDITION even when no such device exists.
                if let Some(d) = lock(&self.arbitration).stream_device(stream)
                    && d != a.device_id
                {
                    let _ = tx.send(Err(Status::failed_precondition(format!(
                        "arbitration.device_id: this stream is for device {d}, not {}; open a new stream for another device",
                        a.device_id
                    ))));
                    return false;
                }
                if let Err(s) = self.check_device(a.device_id) {
                    let _ = tx.send(Err(s));
                    return false;
                }
                let id = election_id(a.election_id.as_ref());
                if let Err(e) =
                    lock(&self.arbitration).update(stream, a.device_id, a.role, id, tx.clone())
                {
                    let _ = tx.send(Err(e.to_status()));
                    return false;
                }
                *arbitrated = true;
            }
            Some(Update::Packet(po)) => {
                let details = pb::stream_error::Details::PacketOut(pb::PacketOutError {
                    packet_out: Some(po.clone()),
                });
                if !*arbitrated || !lock(&self.arbitration).is_primary(stream) {
                    report(
                        Code::PermissionDenied,
                        "packet: only the primary controller may send packets".into(),
                        details,
                    );
                    return true;
                }
                match packet_io::encode_packet_out(self.program().info, &po) {
                    Ok(frame) => {
                        if let Err(e) = self.device.packet_out(frame) {
                            report(Code::Unavailable, format!("packet: {e}"), details);
                        }
                    }
                    Err(e) => report(e.code, e.message, details),
                }
            }
            // Acks belong to the stream's digest engine (see `stream_channel`).
            Some(Update::DigestAck(_)) => {}
            Some(Update::Other(other)) => report(
                Code::Unimplemented,
                format!("other: {} is not supported", other.type_url),
                pb::stream_error::Details::Other(pb::StreamOtherError { other: Some(other) }),
            ),
            None => {}
        }
        true
    }
}

/// Applies link changes to the groups with watch ports (§9.2.2, see
/// [`super::watch`]): every [`super::watch::REFRESH_PERIOD`], while some
/// group is watched, one device job rewrites the groups whose selection
/// no longer matches the links. Ends when the service is dropped.
async fn watch_refresh(inner: std::sync::Weak<Inner>) {
    let mut tick = tokio::time::interval(super::watch::REFRESH_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(inner) = inner.upgrade() else { return };
        // Under the write lock: a group is not rewritten behind a Write.
        let shadow = inner.shadow.lock().await;
        if shadow.watched.is_empty() {
            continue;
        }
        let watched = shadow.watched.clone();
        let _ = inner
            .device
            .with_state(move |dev| {
                super::watch::refresh(&mut *dev.runtime, &watched, &dev.ports_down)
            })
            .await;
        drop(shadow);
    }
}

/// How often the idle-timeout scanner runs: the idle clock's resolution
/// and the latest a notification comes after its entry's TTL.
const IDLE_SCAN_PERIOD: std::time::Duration = std::time::Duration::from_millis(20);

/// The idle-timeout scanner (§9.1.8, §16.3): every [`IDLE_SCAN_PERIOD`] one
/// short device job advances the idle clock (hits store it in their entry)
/// and lists the entries with an `idle_timeout_ns` not hit for that long;
/// they go, one IdleTimeoutNotification per table, to the primaries whose
/// role covers the table. A notification resets the entry's timer (§16.3):
/// an entry still not hit is reported again one TTL later, one hit since
/// restarts the TTL from the hit. The packet path only stores the clock on
/// hits; the scan runs between packets like any other job. Ends when the
/// service is dropped.
async fn idle_scan(inner: std::sync::Weak<Inner>) {
    use super::write::EntryKey;
    let mut tick = tokio::time::interval(IDLE_SCAN_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // When each idle entry was last reported (device clock, ns).
    let mut reported: HashMap<EntryKey, u64> = HashMap::new();
    loop {
        tick.tick().await;
        let Some(inner) = inner.upgrade() else { return };
        let timed: Vec<(EntryKey, u64)> = inner
            .shadow
            .lock()
            .await
            .entries
            .iter()
            .filter(|(_, x)| x.idle_timeout_ns > 0)
            .map(|(k, x)| (k.clone(), x.idle_timeout_ns))
            .collect();
        let info = inner.program().info;
        let Ok((now, idle)) = inner
            .device
            .with_state(move |dev| {
                let now = dev.now_ns;
                dev.runtime.set_idle_clock(now);
                let rt = &*dev.runtime;
                let idle: Vec<(EntryKey, u64, pb::TableEntry)> = timed
                    .into_iter()
                    .filter_map(|(k, ttl)| {
                        let hit = rt.entry_last_hit(k.0, &k.1, k.2).ok()?;
                        if now.saturating_sub(hit) < ttl {
                            return None;
                        }
                        let t = info.table(k.0)?;
                        let e = rt.table_entry(k.0, &k.1, k.2).ok()?;
                        let mut pe = super::translate::entry_to_proto(info, t, &e);
                        pe.idle_timeout_ns = ttl as i64;
                        Some((k, hit, pe))
                    })
                    .collect();
                (now, idle)
            })
            .await
        else {
            continue;
        };
        reported.retain(|k, _| idle.iter().any(|(i, ..)| i == k));
        let mut by_table: HashMap<u32, Vec<pb::TableEntry>> = HashMap::new();
        for (k, hit, mut pe) in idle {
            let ttl = pe.idle_timeout_ns as u64;
            let since = reported.get(&k).map_or(hit, |&at| at.max(hit));
            if now.saturating_sub(since) < ttl {
                continue;
            }
            {
                let shadow = inner.shadow.lock().await;
                if let Some(x) = shadow.entries.get(&k) {
                    pe.controller_metadata = x.controller_metadata;
                }
                if let Some(os) = shadow.one_shots.get(&k) {
                    pe.action = super::oneshot::read_action(&os.set);
                }
            }
            reported.insert(k.clone(), now);
            by_table.entry(k.0).or_default().push(pe);
        }
        for (table, entries) in by_table {
            let targets =
                lock(&inner.arbitration).primaries_covering(inner.config.device_id, table);
            let msg = pb::StreamMessageResponse {
                update: Some(
                    pb::stream_message_response::Update::IdleTimeoutNotification(
                        pb::IdleTimeoutNotification {
                            table_entry: entries,
                            // Wall-clock nanoseconds since the epoch (§16.3).
                            timestamp: std::time::SystemTime::now()
                                .duration_since(std::time::UNIX_EPOCH)
                                .map_or(0, |d| d.as_nanos() as i64),
                        },
                    ),
                ),
            };
            for tx in targets {
                let _ = tx.send(Ok(msg.clone()));
            }
        }
    }
}

/// A StreamError message (§16.6) for the request `details` identifies.
fn stream_error(
    code: Code,
    message: String,
    details: pb::stream_error::Details,
) -> pb::StreamMessageResponse {
    pb::StreamMessageResponse {
        update: Some(pb::stream_message_response::Update::Error(
            pb::StreamError {
                canonical_code: code as i32,
                message,
                space: String::new(),
                code: 0,
                details: Some(details),
            },
        )),
    }
}

/// Sleeps until `at`, or forever without a deadline.
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The next packet-in frame or digest from the device; `None` after a
/// loss (logged) or when the device closed the channel.
async fn next_frame<T: Clone>(rx: &mut Option<broadcast::Receiver<T>>) -> Option<T> {
    let Some(r) = rx.as_mut() else {
        return std::future::pending().await;
    };
    match r.recv().await {
        Ok(f) => Some(f),
        Err(broadcast::error::RecvError::Lagged(n)) => {
            tracing::warn!(
                lost = n,
                what = std::any::type_name::<T>(),
                "controller too slow: dropped"
            );
            None
        }
        Err(broadcast::error::RecvError::Closed) => {
            *rx = None;
            None
        }
    }
}

/// Entities per ReadResponse message.
const READ_CHUNK: usize = 1000;

/// Table entries a read takes from the dataplane in one job: short
/// enough that packets keep flowing while a large table is read.
const READ_PAGE: usize = 1024;

/// Entry places a read gathers in one dataplane job: a place is two
/// numbers copied, no entry, so a job of this many stays short.
const PLACES_PAGE: usize = 16 * 1024;

/// ReadResponse messages a read queues ahead of its client: what one read
/// holds converted at a time, however large the table (a slow client
/// holds the read, not memory).
const READ_QUEUE: usize = 4;

/// Why a streamed read stopped early.
#[derive(Debug)]
enum ReadStop {
    /// The client went away (its stream was dropped).
    ClientGone,
    /// The read ends with this status (the device is gone, or the
    /// pipeline changed under it).
    Status(Status),
}

impl From<DeviceError> for ReadStop {
    fn from(e: DeviceError) -> Self {
        ReadStop::Status(device_status(e))
    }
}

/// The stream a read's entities go out on, in messages of
/// [`READ_CHUNK`].
struct ReadSink {
    tx: tokio::sync::mpsc::Sender<Result<pb::ReadResponse, Status>>,
    /// Entities not sent yet (fewer than a message's worth between
    /// [`Self::send_full`] calls).
    buf: Vec<pb::Entity>,
    /// Whether a message went out.
    sent: bool,
}

impl ReadSink {
    async fn send(&mut self, entities: Vec<pb::Entity>) -> Result<(), ReadStop> {
        self.sent = true;
        self.tx
            .send(Ok(pb::ReadResponse { entities }))
            .await
            .map_err(|_| ReadStop::ClientGone)
    }

    /// Sends every full message in the buffer; waits while the client is
    /// [`READ_QUEUE`] messages behind.
    async fn send_full(&mut self) -> Result<(), ReadStop> {
        while self.buf.len() >= READ_CHUNK {
            let rest = self.buf.split_off(READ_CHUNK);
            let full = std::mem::replace(&mut self.buf, rest);
            self.send(full).await?;
        }
        Ok(())
    }

    async fn push(&mut self, found: Vec<pb::Entity>) -> Result<(), ReadStop> {
        self.buf.extend(found);
        self.send_full().await
    }

    /// Sends what is left, and an empty message if nothing went out (a
    /// read that finds nothing still answers once).
    async fn finish(&mut self) -> Result<(), ReadStop> {
        self.send_full().await?;
        if !self.buf.is_empty() || !self.sent {
            let last = std::mem::take(&mut self.buf);
            self.send(last).await?;
        }
        Ok(())
    }
}

/// What a read reads: the program it started with and the request's role.
struct ReadScope {
    program: Arc<Program>,
    role: Option<RoleScope>,
}

/// Produces one Read's stream: each request in order, table entries a
/// page per device job, converted and sent before the next page is taken;
/// then, if a request was bad, the status that reports each (§13.3).
async fn stream_read(
    inner: Arc<Inner>,
    scope: ReadScope,
    entities: Vec<pb::Entity>,
    tx: tokio::sync::mpsc::Sender<Result<pb::ReadResponse, Status>>,
) {
    let mut sink = ReadSink {
        tx,
        buf: Vec::new(),
        sent: false,
    };
    let mut results = Vec::with_capacity(entities.len());
    let mut read = async {
        for (n, ent) in entities.into_iter().enumerate() {
            results.push(read_request(&inner, &scope, n, ent, &mut sink).await?);
        }
        sink.finish().await
    }
    .await;
    if read.is_ok()
        && let Some(status) = read_status(&results)
    {
        read = Err(ReadStop::Status(status));
    }
    match read {
        Ok(()) => {}
        Err(ReadStop::Status(status)) => {
            // Entities still buffered are dropped: the status ends the stream.
            let _ = sink.tx.send(Err(status)).await;
        }
        Err(ReadStop::ClientGone) => tracing::debug!("p4runtime read: client went away"),
    }
}

/// Holds writes out (the shadow's lock) and checks that the pipeline is
/// still the one the read started with.
async fn hold_writes<'a>(
    inner: &'a Inner,
    scope: &ReadScope,
) -> Result<tokio::sync::MutexGuard<'a, Shadow>, ReadStop> {
    let shadow = inner.shadow.lock().await;
    if !Arc::ptr_eq(&inner.program(), &scope.program) {
        return Err(ReadStop::Status(Status::aborted(
            "the forwarding pipeline changed during the read",
        )));
    }
    Ok(shadow)
}

/// Reads the `n`-th request `ent` into `sink` (after its role's filter):
/// `Ok(Err)` if the request is bad (§13.3: it fails alone).
async fn read_request(
    inner: &Inner,
    scope: &ReadScope,
    n: usize,
    ent: pb::Entity,
    sink: &mut ReadSink,
) -> Result<Result<(), P4Error>, ReadStop> {
    let Some(pb::entity::Entity::TableEntry(te)) = &ent.entity else {
        // Other entities in one device job, with a copy of the shadow
        // taken while writes are held out.
        let shadow = hold_writes(inner, scope).await?;
        let cx = Arc::new(ReadContext {
            info: scope.program.info,
            owned: scope.program.owned.clone(),
            now_ns: 0,
            shadow: Arc::new(shadow.clone()),
            role: scope.role.clone(),
        });
        let job_cx = Arc::clone(&cx);
        let found = inner
            .device
            .with_state(move |dev| {
                let mut cx = (*job_cx).clone();
                cx.now_ns = dev.now_ns;
                let mut out = Vec::new();
                read_one(&*dev.runtime, dev.pre.as_deref(), &cx, n, &ent, &mut out).map(|()| out)
            })
            .await?;
        drop(shadow);
        return match found {
            Ok(mut found) => {
                // §13: `role` keeps the entities that belong to it.
                retain_role(&cx, &mut found);
                sink.push(found).await?;
                Ok(Ok(()))
            }
            Err(e) => Ok(Err(e)),
        };
    };
    let info = scope.program.info;
    let plans = match plan_table_read(info, te) {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    // A table outside the role would be filtered out whole: not read.
    for plan in plans
        .into_iter()
        .filter(|p| role_covers(scope.role.as_ref(), p.table().id))
    {
        match plan {
            TablePlan::Default(t) => {
                let shadow = hold_writes(inner, scope).await?;
                let call = inner
                    .device
                    .with_runtime(move |rt| rt.table_default(t.id))
                    .await?;
                match call {
                    Ok(call) => {
                        let e = default_entity(info, &shadow, t, &call);
                        drop(shadow);
                        sink.push(vec![e]).await?;
                    }
                    Err(e) => return Ok(Err(e.into())),
                }
            }
            TablePlan::Entries(q) => {
                let id = q.table.id;
                // Where the entries are, in a few short jobs; sorted, in
                // insertion order (already so unless handles were reused).
                let mut places = Vec::new();
                let mut from = Some(0);
                while let Some(f) = from {
                    let page = inner
                        .device
                        .with_runtime(move |rt| rt.table_entry_places(id, f, PLACES_PAGE))
                        .await?;
                    let (page, next) = match page {
                        Ok(p) => p,
                        Err(e) => return Ok(Err(e.into())),
                    };
                    places.extend(page);
                    from = next;
                }
                if !places.is_sorted() {
                    places.sort_unstable();
                }
                let places: Arc<[EntryPlace]> = places.into();
                for start in (0..places.len()).step_by(READ_PAGE) {
                    let end = (start + READ_PAGE).min(places.len());
                    // The page's entries and what the shadow holds of them
                    // are taken with writes held out: each entry is
                    // reported as one moment had it.
                    let shadow = hold_writes(inner, scope).await?;
                    let at = Arc::clone(&places);
                    let (rows, now_ns) = inner
                        .device
                        .with_state(move |dev| {
                            (dev.runtime.table_rows_at(id, &at[start..end]), dev.now_ns)
                        })
                        .await?;
                    let rows = match rows {
                        Ok(r) => r,
                        Err(e) => return Ok(Err(e.into())),
                    };
                    rows_to_entities(info, &shadow, te, &q, &rows, now_ns, &mut sink.buf);
                    drop(shadow);
                    drop(rows);
                    sink.send_full().await?;
                }
            }
        }
    }
    Ok(Ok(()))
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

#[tonic::async_trait]
impl P4Runtime for P4RuntimeService {
    async fn write(
        &self,
        request: Request<pb::WriteRequest>,
    ) -> Result<Response<pb::WriteResponse>, Status> {
        let inner = &self.inner;
        let r = request.into_inner();
        inner.check_device(r.device_id)?;
        let access = lock(&inner.arbitration)
            .check_writer(r.device_id, &r.role, election_id(r.election_id.as_ref()))
            .map_err(|e| e.to_status())?;
        let atomicity = pb::write_request::Atomicity::try_from(r.atomicity).map_err(|_| {
            Status::invalid_argument(format!("atomicity: unknown mode {}", r.atomicity))
        })?;
        // Applied by the committer task, together with the Writes queued
        // beside it (group commit); it answers with this Write's own result.
        let (reply, answer) = tokio::sync::oneshot::channel();
        inner
            .write_queue()
            .send(PendingWrite {
                request: r,
                atomicity,
                access,
                reply,
            })
            .map_err(|_| Status::unavailable("write: the service is stopping"))?;
        match answer.await {
            Ok(Ok(())) => Ok(Response::new(pb::WriteResponse {})),
            Ok(Err(status)) => Err(status),
            Err(_) => Err(Status::internal(
                "write: the committer ended without answering (see the switch's log)",
            )),
        }
    }

    type ReadStream = BoxStream<pb::ReadResponse>;

    async fn read(
        &self,
        request: Request<pb::ReadRequest>,
    ) -> Result<Response<Self::ReadStream>, Status> {
        let inner = &self.inner;
        let r = request.into_inner();
        inner.check_device(r.device_id)?;
        // §13: `role` filters the entities to those of that role (a role
        // the device does not know is NOT_FOUND, as for Write).
        let role = if r.role.is_empty() {
            None
        } else {
            Some(
                lock(&inner.arbitration)
                    .scope(r.device_id, &r.role)
                    .map_err(|e| e.to_status())?
                    .clone(),
            )
        };
        // The read streams from its own task: each page is sent before the
        // next is taken, and at most READ_QUEUE messages wait for the
        // client.
        let (tx, rx) = tokio::sync::mpsc::channel(READ_QUEUE);
        let scope = ReadScope {
            program: inner.program(),
            role,
        };
        tokio::spawn(stream_read(Arc::clone(inner), scope, r.entities, tx));
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    async fn set_forwarding_pipeline_config(
        &self,
        request: Request<pb::SetForwardingPipelineConfigRequest>,
    ) -> Result<Response<pb::SetForwardingPipelineConfigResponse>, Status> {
        use pb::set_forwarding_pipeline_config_request::Action;
        let inner = &self.inner;
        let r = request.into_inner();
        inner.check_device(r.device_id)?;
        let access = lock(&inner.arbitration)
            .check_writer(r.device_id, &r.role, election_id(r.election_id.as_ref()))
            .map_err(|e| e.to_status())?;
        // §5.2: a role config decides whether its primary may push a
        // pipeline (`stratum.P4RoleConfig.can_push_pipeline`).
        if !access.scope.can_push_pipeline {
            return Err(Status::permission_denied(format!(
                "role: '{}' may not set the forwarding pipeline (its role config does not allow can_push_pipeline)",
                r.role
            )));
        }
        let action = Action::try_from(r.action).unwrap_or(Action::Unspecified);
        let cookie = r
            .config
            .as_ref()
            .and_then(|c| c.cookie.as_ref())
            .map(|c| c.cookie);
        match action {
            Action::Unspecified => return Err(Status::invalid_argument("action: UNSPECIFIED")),
            Action::Verify => {
                inner.resolve(r.config.as_ref()).await?;
            }
            Action::VerifyAndSave => {
                let program = inner.resolve(r.config.as_ref()).await?;
                let mut pipeline = lock(&inner.pipeline);
                pipeline.saved = Some((program, cookie));
                pipeline.since_save.clear();
            }
            Action::VerifyAndCommit => {
                let program = inner.resolve(r.config.as_ref()).await?;
                inner.commit(program, cookie, false).await?;
                lock(&inner.pipeline).saved = None;
            }
            Action::Commit => {
                // §14: COMMIT realises the config saved by VERIFY_AND_SAVE;
                // it carries none itself (an empty message is tolerated).
                if r.config
                    .as_ref()
                    .is_some_and(|c| c.p4info.is_some() || !c.p4_device_config.is_empty())
                {
                    return Err(Status::invalid_argument(
                        "config: COMMIT carries no config; it commits the one saved by VERIFY_AND_SAVE (send the config with VERIFY_AND_COMMIT instead)",
                    ));
                }
                // §14: NOT_FOUND when no VERIFY_AND_SAVE preceded it.
                let (program, saved_cookie) =
                    lock(&inner.pipeline).saved.take().ok_or_else(|| {
                        Status::not_found(
                            "action: COMMIT without a config saved by VERIFY_AND_SAVE (nothing to commit)",
                        )
                    })?;
                let replay = std::mem::take(&mut lock(&inner.pipeline).since_save);
                let same = Arc::ptr_eq(&program, &inner.program());
                inner.commit(program, saved_cookie, false).await?;
                // §14: the forwarding state of the committed config is what
                // was written since it was saved (writes made while another
                // program was saved went to the running one: not replayed).
                if same {
                    inner.replay(&replay).await?;
                }
            }
            Action::ReconcileAndCommit => {
                let program = inner.resolve(r.config.as_ref()).await?;
                inner.commit(program, cookie, true).await?;
                lock(&inner.pipeline).saved = None;
            }
        }
        tracing::info!(
            action = action.as_str_name(),
            ?cookie,
            "forwarding pipeline config"
        );
        Ok(Response::new(pb::SetForwardingPipelineConfigResponse {}))
    }

    async fn get_forwarding_pipeline_config(
        &self,
        request: Request<pb::GetForwardingPipelineConfigRequest>,
    ) -> Result<Response<pb::GetForwardingPipelineConfigResponse>, Status> {
        use pb::get_forwarding_pipeline_config_request::ResponseType;
        let inner = &self.inner;
        let r = request.into_inner();
        inner.check_device(r.device_id)?;
        let ty = ResponseType::try_from(r.response_type).map_err(|_| {
            Status::invalid_argument(format!("response_type: unknown {}", r.response_type))
        })?;
        let cookie = lock(&inner.pipeline)
            .cookie
            .map(|c| pb::forwarding_pipeline_config::Cookie { cookie: c });
        let program = inner.program();
        let p4info = matches!(ty, ResponseType::All | ResponseType::P4infoAndCookie)
            .then(|| program.p4info.clone());
        let device_config = if matches!(ty, ResponseType::All | ResponseType::DeviceConfigAndCookie)
        {
            program.device_config.clone()
        } else {
            Vec::new()
        };
        Ok(Response::new(pb::GetForwardingPipelineConfigResponse {
            config: Some(pb::ForwardingPipelineConfig {
                p4info,
                p4_device_config: device_config,
                cookie,
            }),
        }))
    }

    type StreamChannelStream = BoxStream<pb::StreamMessageResponse>;

    async fn stream_channel(
        &self,
        request: Request<Streaming<pb::StreamMessageRequest>>,
    ) -> Result<Response<Self::StreamChannelStream>, Status> {
        let inner = self.inner.clone();
        let max = inner.config.max_streams;
        let Some(slot) = StreamSlot::take(&inner.open_streams, max) else {
            return Err(Status::resource_exhausted(format!(
                "StreamChannel: {max} streams are open, the most this switch serves; close one first"
            )));
        };
        let mut incoming = request.into_inner();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let stream = inner.next_stream.fetch_add(1, Ordering::Relaxed);
        let mut packets = inner.device.packet_in();
        let mut digests = inner.device.digests();
        let mut digest_configs = inner.digest_configs.subscribe();
        tokio::spawn(async move {
            let mut arbitrated = false;
            // Lists for this stream while it is primary (spec: digests go to
            // the primary only); a new primary starts with fresh state.
            let mut engine = DigestEngine::new(inner.program().info.digests);
            let epoch = tokio::time::Instant::now();
            let now_ns = move || epoch.elapsed().as_nanos() as u64;
            let mut configs = digest_configs.borrow_and_update().clone();
            loop {
                let wake = engine
                    .poll_timeout(|id| configs.get(&id).copied())
                    .map(|ns| epoch + std::time::Duration::from_nanos(ns));
                tokio::select! {
                    msg = incoming.message() => match msg {
                        Ok(Some(pb::StreamMessageRequest {
                            update: Some(pb::stream_message_request::Update::DigestAck(ack)),
                        })) => {
                            if !inner.program().info.digests.iter().any(|d| d.id == ack.digest_id) {
                                // §16.5: an ack naming no digest of the P4Info.
                                let _ = tx.send(Ok(stream_error(
                                    Code::InvalidArgument,
                                    format!("digest_ack.digest_id: unknown digest id {:#x}", ack.digest_id),
                                    pb::stream_error::Details::DigestListAck(pb::DigestListAckError {
                                        digest_list_ack: Some(ack),
                                    }),
                                )));
                            } else if lock(&inner.arbitration).is_primary(stream) {
                                engine.handle_ack(ack.digest_id, ack.list_id);
                            }
                        }
                        Ok(Some(m)) => {
                            if !inner.stream_message(stream, m, &tx, &mut arbitrated) {
                                break;
                            }
                        }
                        Ok(None) | Err(_) => break,
                    },
                    digest = next_frame(&mut digests) => {
                        let Some(d) = digest else { continue };
                        // Digests go to the primary of a role that covers
                        // the digest (§5.2, §16.4).
                        if !lock(&inner.arbitration)
                            .primary_scope(stream)
                            .is_some_and(|scope| scope.covers(d.id))
                        {
                            continue;
                        }
                        let config = configs.get(&d.id).copied();
                        engine.handle_digest(d.id, d.values, config, now_ns());
                    }
                    _ = sleep_until(wake) => {
                        engine.handle_timeout(now_ns(), |id| configs.get(&id).copied());
                    }
                    changed = digest_configs.changed() => {
                        if changed.is_err() {
                            continue;
                        }
                        // A changed or removed config restarts that digest's lists.
                        let now = digest_configs.borrow_and_update().clone();
                        for info in inner.program().info.digests {
                            if now.get(&info.id) != configs.get(&info.id) {
                                engine.reset(info.id);
                            }
                        }
                        configs = now;
                    }
                    frame = next_frame(&mut packets) => {
                        let Some(frame) = frame else { continue };
                        let Some(filter) = lock(&inner.arbitration)
                            .primary_scope(stream)
                            .filter(|scope| scope.receives_packet_ins)
                            .map(|scope| scope.packet_in_filter)
                        else {
                            continue;
                        };
                        match packet_io::decode_packet_in(inner.program().info, &frame) {
                            Ok(pi) if !packet_io::passes(&pi, filter) => {}
                            Ok(pi) => {
                                let _ = tx.send(Ok(pb::StreamMessageResponse {
                                    update: Some(pb::stream_message_response::Update::Packet(pi)),
                                }));
                            }
                            Err(e) => tracing::warn!(error = %e, "undecodable packet-in frame"),
                        }
                    }
                    _ = tx.closed() => break,
                }
                while let Some(list) = engine.poll_list() {
                    let _ = tx.send(Ok(pb::StreamMessageResponse {
                        update: Some(pb::stream_message_response::Update::Digest(list)),
                    }));
                }
            }
            lock(&inner.arbitration).leave(stream);
            drop(slot);
            tracing::debug!(stream, "stream closed");
        });
        Ok(Response::new(Box::pin(UnboundedReceiverStream::new(rx))))
    }

    async fn capabilities(
        &self,
        request: Request<pb::CapabilitiesRequest>,
    ) -> Result<Response<pb::CapabilitiesResponse>, Status> {
        let d = request.into_inner().device_id;
        if d != 0 {
            self.inner.check_device(d)?;
        }
        Ok(Response::new(pb::CapabilitiesResponse {
            p4runtime_api_version: self.inner.config.api_version.clone(),
            experimental: None,
        }))
    }
}
