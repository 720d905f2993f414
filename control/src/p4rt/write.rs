//! The Write RPC's semantics: decoding updates into device operations
//! (validated against the P4Info before anything is submitted), and
//! applying a batch inside one device job with the requested atomicity
//! (spec §12.2 "Batching and Ordering of Updates", §12.3 "Batch Atomicity"):
//!
//! * CONTINUE_ON_ERROR: every valid update is applied in order; each gets
//!   its own result.
//! * ROLLBACK_ON_ERROR and DATAPLANE_ATOMIC: all or nothing. An invalid
//!   update means nothing is submitted; a runtime failure undoes the
//!   updates already applied by running their inverse operations in
//!   reverse order. Since the whole batch runs in one job between packets,
//!   the dataplane never sees a partial batch, which is what
//!   DATAPLANE_ATOMIC asks for. Updates not applied get ABORTED.
//!
//! Status codes follow the entity sections of the spec (§9): a write the
//! writer's role does not cover is PERMISSION_DENIED ([`super::roles`]);
//! `is_const` set in any write, `time_since_last_hit` set in an INSERT or
//! MODIFY, idle timeouts on tables without `support_timeout` or on the
//! default entry, member or group id 0, group member weight 0, a watch
//! port that is not a port of the switch and an INSERT into a keyless
//! table are INVALID_ARGUMENT (§9.1, §9.1.8, §9.2); an action outside its
//! `@tableonly`/`@defaultonly` scope, writes to const tables other than a
//! MODIFY of direct resources, const default actions and the default entry
//! of an indirect table (a constant, §9.1.3) are PERMISSION_DENIED
//! (§9.1.2–§9.1.4); a member or group that does not exist is NOT_FOUND
//! (§9.1.2, §9.2.2); a counter, meter or register index below 0 is
//! INVALID_ARGUMENT and one past the size OUT_OF_RANGE (§9.3–§9.7), as is
//! a register value wider than the cell (§8.4); a duplicate value-set
//! member is ALREADY_EXISTS (§9.6); per-colour meter counters are
//! UNIMPLEMENTED. A group member's watch port takes it out of the selection
//! while the port is down ([`super::watch`]). A MODIFY without an action
//! keeps the entry's action (§9.1.2); a MODIFY without `meter_config` resets
//! the direct meter, one without `counter_data` leaves the counter (§9.1.7).
//! A default entry keeps the `metadata` and `controller_metadata` it is set
//! with until it is reset (§9.1.3).
//!
//! Packet replication engine entries (multicast groups, clone sessions;
//! see [`super::pre`]) are operations like any other: they run in the same
//! job, roll back with the rest, and fail per update with UNIMPLEMENTED on
//! a device without an engine.

use std::collections::HashMap;

use p4_target::externs::MeterConfig;
use p4_target::info::{ProgramInfo, TableInfo, ValueSetInfo};
use p4_target::runtime::{ActionCall, CounterData, FieldMatch, RuntimeApi, TableEntry};
use p4_target::table::profile::MAX_GROUP_WEIGHT;
use proto::p4::v1 as pb;
use proto::p4::v1::update::Type as UpdateType;
use proto::p4::v1::write_request::Atomicity;
use tonic::Code;

use super::bytes::{decode, decode_signed};
use super::digest::DigestConfig;
use super::error::P4Error;
use super::oneshot::{self, OneShot, OneShotMark};
use super::pre::{self, PreEcho, PreOp};
use super::roles::{RoleAccess, entity_id};
use super::translate::{
    action_call_from_proto, check_action_in_table, check_priority, entry_action_from_proto,
    key_from_proto, table,
};
use super::watch::{self, WatchedMember};
use crate::device::DeviceState;

/// Key of one table entry (and its direct resources): table id, match
/// list, priority.
pub type EntryKey = (u32, Vec<Option<FieldMatch>>, i32);

/// Per-entry values P4Runtime reads back that the runtime does not keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntryExtras {
    /// `idle_timeout_ns` (0: the entry never expires).
    pub idle_timeout_ns: u64,
    /// The deprecated `controller_metadata` cookie.
    pub controller_metadata: u64,
}

impl EntryExtras {
    fn is_default(&self) -> bool {
        *self == EntryExtras::default()
    }
}

/// An action profile's group limits from the P4Info (§9.2.2 "Rules on
/// setting max_size").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfileLimits {
    /// `max_group_size` (0: no static limit).
    pub max_group_size: i32,
    /// Group size counts members (`sum_of_members`) rather than weights.
    pub sum_of_members: bool,
    /// `sum_of_members.max_member_weight` (0: no limit).
    pub max_member_weight: i32,
}

/// State the device cannot report back (meter configurations, how PRE
/// entries were encoded, per-entry idle timeouts and cookies, group
/// `max_size`), kept by the service so reads can echo it and rollbacks can
/// restore it.
#[derive(Clone, Debug, Default)]
pub struct Shadow {
    /// Indirect meter cells: (meter id, index) → config.
    pub meters: HashMap<(u32, u32), MeterConfig>,
    /// Direct meters: entry key → config.
    pub direct_meters: HashMap<EntryKey, MeterConfig>,
    /// Enabled digests: digest id → config.
    pub digests: HashMap<u32, DigestConfig>,
    /// Group metadata and replica port forms of PRE entries.
    pub pre: PreEcho,
    /// Entries with an idle timeout or a `controller_metadata`.
    pub entries: HashMap<EntryKey, EntryExtras>,
    /// Groups written with a `max_size`: (profile, group) → max_size.
    pub group_max_size: HashMap<(u32, u32), i32>,
    /// Cookies of default entries set with one: table id → cookies.
    pub default_metadata: HashMap<u32, DefaultMeta>,
    /// One-shot entries (§9.2.3): entry key → its action set and the
    /// hidden member and group ids it became.
    pub one_shots: HashMap<EntryKey, OneShot>,
    /// The next hidden id to try for one-shot members and groups.
    pub next_hidden: u32,
    /// Groups with watch ports: (profile, group) → members as written.
    pub watched: HashMap<(u32, u32), Vec<WatchedMember>>,
}

/// The cookies a default entry was set with (§9.1.3: echoed in reads,
/// cleared when the entry is reset).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DefaultMeta {
    /// `metadata`.
    pub metadata: Vec<u8>,
    /// The deprecated `controller_metadata`.
    pub controller_metadata: u64,
}

/// A MODIFY of a table's default entry (§9.1.3).
#[derive(Clone, Debug)]
pub struct DefaultWrite {
    /// Table id.
    pub table: u32,
    /// The new default action; `None` resets it to the program's.
    pub action: Option<ActionCall>,
    /// Cookies after the write (none after a reset).
    pub meta: DefaultMeta,
    /// Cookies before the write (for rollback).
    pub old_meta: DefaultMeta,
}

/// An INSERT or MODIFY of one table entry.
#[derive(Clone, Debug)]
pub struct EntryWrite {
    /// Table id.
    pub table: u32,
    /// The entry (for a MODIFY that keeps the action, its action is a
    /// placeholder).
    pub entry: TableEntry,
    /// MODIFY without an action: the entry keeps its action.
    pub keep_action: bool,
    /// An entry of a const table: only its direct resources change.
    pub resources_only: bool,
    /// Direct counter value to write.
    pub counter: Option<CounterData>,
    /// Direct meter: `Some(config)` (re)configures it, `Some(None)` to the
    /// default; `None` leaves it.
    pub meter: Option<Option<MeterConfig>>,
    /// Idle timeout and cookie after the write.
    pub extras: EntryExtras,
    /// Before the write (MODIFY; for rollback): meter config and extras.
    pub old_meter: Option<MeterConfig>,
    /// See `old_meter`.
    pub old_extras: EntryExtras,
}

impl EntryWrite {
    /// The entry's key.
    pub fn key(&self) -> EntryKey {
        (self.table, self.entry.matches.clone(), self.entry.priority)
    }
}

/// A DELETE of one table entry, with what the shadow held for it.
#[derive(Clone, Debug)]
pub struct EntryDelete {
    /// Table id.
    pub table: u32,
    /// Match list.
    pub matches: Vec<Option<FieldMatch>>,
    /// Priority.
    pub priority: i32,
    /// `Some` when the table has a direct meter: its config.
    pub old_meter: Option<Option<MeterConfig>>,
    /// The entry's idle timeout and cookie.
    pub old_extras: EntryExtras,
    /// Whether the table has a direct counter (rollback restores it).
    pub has_counter: bool,
}

/// An INSERT or MODIFY of one action profile group.
#[derive(Clone, Debug)]
pub struct GroupWrite {
    /// Action profile id.
    pub profile: u32,
    /// Group id.
    pub group: u32,
    /// Every member as written, with its weight and watch port (the
    /// runtime gets those whose watch port is up, [`watch::live`]).
    pub members: Vec<WatchedMember>,
    /// MODIFY (else INSERT).
    pub modify: bool,
    /// `max_size` as written.
    pub max_size: i32,
    /// A MODIFY of a watched group: its members before (for rollback).
    pub old: Option<Vec<WatchedMember>>,
}

impl GroupWrite {
    /// Whether a member has a watch port.
    pub fn is_watched(&self) -> bool {
        self.members.iter().any(|m| m.watch.is_some())
    }
}

/// One device operation.
#[derive(Clone, Debug)]
pub enum Op {
    /// Accepted, changes nothing (a counter MODIFY without data).
    Noop,
    /// Insert a table entry with its direct resources.
    TableInsert(EntryWrite),
    /// Modify a table entry.
    TableModify(EntryWrite),
    /// Delete a table entry.
    TableDelete(EntryDelete),
    /// Set or reset a default entry.
    Default(DefaultWrite),
    /// Insert (false) or modify (true) a member.
    MemberWrite(u32, u32, ActionCall, bool),
    /// Delete a member.
    MemberDelete(u32, u32),
    /// Insert or modify a group.
    GroupWrite(GroupWrite),
    /// Delete a group: profile, group, its `max_size`, and its members as
    /// written if it is watched (for rollback).
    GroupDelete(u32, u32, i32, Option<Vec<WatchedMember>>),
    /// Overwrite indirect counter cells.
    CounterWrite(u32, Vec<(u32, CounterData)>),
    /// Overwrite a direct counter (`None`: only check the entry exists).
    DirectCounterWrite(EntryKey, Option<CounterData>),
    /// Configure indirect meter cells: (index, new config, old config).
    MeterSet(u32, Vec<(u32, Option<MeterConfig>, Option<MeterConfig>)>),
    /// Configure a direct meter: new and old config.
    DirectMeterSet(EntryKey, Option<MeterConfig>, Option<MeterConfig>),
    /// Write register cells.
    RegisterWrite(u32, Vec<(u32, u128)>),
    /// Replace a parser value set's members.
    ValueSetWrite(u32, Vec<(u128, u128)>),
    /// Enable, change or (`None`) disable a digest: new and old config.
    /// Service state only; the dataplane always emits.
    DigestSet(u32, Option<DigestConfig>, Option<DigestConfig>),
    /// Change a multicast group or clone session.
    Pre(PreOp),
    /// Operations that run, and roll back, as one (a one-shot entry's
    /// members, group and entry).
    Seq(Vec<Op>),
    /// Record a one-shot entry in the shadow (after checking that its
    /// selector is not programmed with members and groups).
    OneShotMark(OneShotMark),
}

/// What decoding an update needs besides the request.
pub struct WriteContext<'a> {
    /// The program.
    pub info: &'static ProgramInfo,
    /// What the writer's role may write.
    pub access: &'a RoleAccess,
    /// Group limits per action profile (from the P4Info).
    pub profiles: &'a HashMap<u32, ProfileLimits>,
    /// Current shadow state (old values for inverse operations).
    pub shadow: &'a Shadow,
    /// The next hidden id for one-shot members and groups, advanced by
    /// each expansion of the batch (start it at `shadow.next_hidden`).
    pub next_hidden: std::cell::Cell<u32>,
}

fn only_modify(ty: UpdateType, what: &str) -> Result<(), P4Error> {
    if ty == UpdateType::Modify {
        Ok(())
    } else {
        Err(P4Error::invalid(
            format!("updates.type ({what})"),
            format!("{what} only supports MODIFY, got {}", ty.as_str_name()),
        ))
    }
}

/// The cells an `index` selects (unset: all). A negative index is
/// INVALID_ARGUMENT, one past the size OUT_OF_RANGE (§9.3–§9.6).
pub fn indices(index: Option<&pb::Index>, size: u32, field: &str) -> Result<Vec<u32>, P4Error> {
    match index {
        None => Ok((0..size).collect()),
        Some(i) if i.index < 0 => Err(P4Error::invalid(
            field,
            format!("negative index {}", i.index),
        )),
        Some(i) if i.index >= i64::from(size) => Err(P4Error::new(
            Code::OutOfRange,
            format!("{field}: index {} out of range 0..{size}", i.index),
        )),
        Some(i) => Ok(vec![i.index as u32]),
    }
}

fn meter_config(c: Option<&pb::MeterConfig>, field: &str) -> Result<Option<MeterConfig>, P4Error> {
    let Some(c) = c else { return Ok(None) };
    for (name, v) in [
        ("cir", c.cir),
        ("cburst", c.cburst),
        ("pir", c.pir),
        ("pburst", c.pburst),
    ] {
        if v < 0 {
            return Err(P4Error::invalid(
                format!("{field}.{name}"),
                format!("negative ({v})"),
            ));
        }
    }
    if c.pir < c.cir {
        return Err(P4Error::invalid(
            format!("{field}.pir"),
            format!("peak rate {} is below the committed rate {}", c.pir, c.cir),
        ));
    }
    if c.eburst != 0 {
        // Our meters are two-rate three-colour (RFC 2698): no excess burst (§9.4).
        return Err(P4Error::invalid(
            format!("{field}.eburst"),
            "must be unset for a trTCM meter",
        ));
    }
    Ok(Some(MeterConfig {
        cir: c.cir as u64,
        cburst: c.cburst as u64,
        pir: c.pir as u64,
        pburst: c.pburst as u64,
    }))
}

fn no_colour_counters(d: Option<&pb::MeterCounterData>, field: &str) -> Result<(), P4Error> {
    match d {
        Some(_) => Err(P4Error::unimplemented(format!(
            "{field} (per-colour meter counters)"
        ))),
        None => Ok(()),
    }
}

fn counter_data(d: &pb::CounterData, field: &str) -> Result<CounterData, P4Error> {
    if d.byte_count < 0 || d.packet_count < 0 {
        return Err(P4Error::invalid(field, "negative count"));
    }
    Ok(CounterData {
        bytes: d.byte_count as u64,
        packets: d.packet_count as u64,
    })
}

/// Decodes the key of a table entry used to address a direct resource.
fn entry_key(
    cx: &WriteContext<'_>,
    te: Option<&pb::TableEntry>,
    field: &str,
) -> Result<EntryKey, P4Error> {
    let te = te.ok_or_else(|| P4Error::invalid(field, "missing table_entry"))?;
    let t = table(cx.info, te.table_id, &format!("{field}.table_id"))?;
    let key = key_from_proto(t, &te.r#match).map_err(|e| e.context(field))?;
    check_priority(t, te.priority).map_err(|e| e.context(field))?;
    Ok((t.id, key, te.priority))
}

/// Direct resources of a table's default entry (§9.4, §9.5 with
/// `is_default_action`): UNIMPLEMENTED, since the runtime counts and meters
/// hits only (see control/README.md).
pub(crate) fn no_default_entry(te: &pb::TableEntry, entity: &str) -> Result<(), P4Error> {
    if te.is_default_action {
        return Err(P4Error::unimplemented(format!(
            "{entity}.table_entry.is_default_action (direct resources of the default entry)"
        )));
    }
    Ok(())
}

/// [`no_default_entry`] for a write, after checking that the table exists
/// and has the resource (INVALID_ARGUMENT otherwise, as for any entry).
fn default_entry_resource(
    cx: &WriteContext<'_>,
    te: Option<&pb::TableEntry>,
    entity: &str,
    has: impl Fn(&TableInfo) -> bool,
) -> Result<(), P4Error> {
    let Some(te) = te.filter(|t| t.is_default_action) else {
        return Ok(());
    };
    let t = table(
        cx.info,
        te.table_id,
        &format!("{entity}.table_entry.table_id"),
    )?;
    if !has(t) {
        return Err(P4Error::invalid(
            format!("{entity}.table_entry.table_id"),
            format!(
                "{} has no {}",
                t.name,
                entity.trim_end_matches("_entry").replace('_', " ")
            ),
        ));
    }
    no_default_entry(te, entity)
}

fn entity_kind(e: &pb::entity::Entity) -> &'static str {
    use pb::entity::Entity as E;
    match e {
        E::ExternEntry(_) => "extern_entry",
        E::TableEntry(_) => "table_entry",
        E::ActionProfileMember(_) => "action_profile_member",
        E::ActionProfileGroup(_) => "action_profile_group",
        E::MeterEntry(_) => "meter_entry",
        E::DirectMeterEntry(_) => "direct_meter_entry",
        E::CounterEntry(_) => "counter_entry",
        E::DirectCounterEntry(_) => "direct_counter_entry",
        E::PacketReplicationEngineEntry(_) => "packet_replication_engine_entry",
        E::ValueSetEntry(_) => "value_set_entry",
        E::RegisterEntry(_) => "register_entry",
        E::DigestEntry(_) => "digest_entry",
    }
}

/// Decodes and validates one update.
pub fn op_from_update(cx: &WriteContext<'_>, u: &pb::Update) -> Result<Op, P4Error> {
    use pb::entity::Entity as E;
    let ty = UpdateType::try_from(u.r#type).unwrap_or(UpdateType::Unspecified);
    if ty == UpdateType::Unspecified {
        return Err(P4Error::invalid("updates.type", "UNSPECIFIED update type"));
    }
    let Some(entity) = u.entity.as_ref().and_then(|e| e.entity.as_ref()) else {
        return Err(P4Error::invalid("updates.entity", "missing"));
    };
    cx.access.check(entity_id(entity), entity_kind(entity))?;
    match entity {
        E::TableEntry(te) => table_op(cx, ty, te),
        E::ActionProfileMember(m) => {
            let p = cx
                .info
                .action_profiles
                .iter()
                .find(|p| p.id == m.action_profile_id)
                .ok_or_else(|| {
                    P4Error::invalid(
                        "action_profile_member.action_profile_id",
                        format!("unknown action profile id {:#x}", m.action_profile_id),
                    )
                })?;
            if m.member_id == 0 {
                return Err(P4Error::invalid(
                    "action_profile_member.member_id",
                    "0 is not a valid member id",
                ));
            }
            oneshot::check_explicit(cx, p.id, "action_profile_member.action_profile_id")?;
            if ty == UpdateType::Delete {
                // A member pruned from a watched group (its watch port is
                // down) is still in the group (§9.2.1).
                if let Some(((_, g), _)) = cx.shadow.watched.iter().find(|((pid, _), ms)| {
                    *pid == p.id && ms.iter().any(|x| x.member == m.member_id)
                }) {
                    return Err(P4Error::new(
                        Code::FailedPrecondition,
                        format!(
                            "action_profile_member: member {} is in group {g}",
                            m.member_id
                        ),
                    ));
                }
                return Ok(Op::MemberDelete(p.id, m.member_id));
            }
            let a = m
                .action
                .as_ref()
                .ok_or_else(|| P4Error::invalid("action_profile_member.action", "missing"))?;
            for &tid in p.table_ids {
                if let Some(t) = cx.info.table(tid) {
                    check_action_in_table(
                        t,
                        a.action_id,
                        false,
                        "action_profile_member.action.action_id",
                    )?;
                }
            }
            let call = action_call_from_proto(cx.info, a, "action_profile_member.action")?;
            Ok(Op::MemberWrite(
                p.id,
                m.member_id,
                call,
                ty == UpdateType::Modify,
            ))
        }
        E::ActionProfileGroup(g) => group_op(cx, ty, g),
        E::CounterEntry(c) => {
            only_modify(ty, "counter_entry")?;
            let ci = cx
                .info
                .counters
                .iter()
                .find(|ci| ci.id == c.counter_id && ci.direct_table.is_none())
                .ok_or_else(|| {
                    P4Error::invalid(
                        "counter_entry.counter_id",
                        format!("unknown counter id {:#x}", c.counter_id),
                    )
                })?;
            let cells = indices(c.index.as_ref(), ci.size, "counter_entry.index")?;
            // Without data the value is not modified (§9.3.2).
            let Some(d) = c.data.as_ref() else {
                return Ok(Op::Noop);
            };
            let data = counter_data(d, "counter_entry.data")?;
            Ok(Op::CounterWrite(
                ci.id,
                cells.into_iter().map(|i| (i, data)).collect(),
            ))
        }
        E::DirectCounterEntry(d) => {
            only_modify(ty, "direct_counter_entry")?;
            default_entry_resource(cx, d.table_entry.as_ref(), "direct_counter_entry", |t| {
                t.direct_counter.is_some()
            })?;
            let key = entry_key(
                cx,
                d.table_entry.as_ref(),
                "direct_counter_entry.table_entry",
            )?;
            if cx
                .info
                .table(key.0)
                .and_then(|t| t.direct_counter)
                .is_none()
            {
                return Err(P4Error::invalid(
                    "direct_counter_entry.table_entry.table_id",
                    "table has no direct counter",
                ));
            }
            let data = d
                .data
                .as_ref()
                .map(|d| counter_data(d, "direct_counter_entry.data"))
                .transpose()?;
            Ok(Op::DirectCounterWrite(key, data))
        }
        E::MeterEntry(m) => {
            only_modify(ty, "meter_entry")?;
            let mi = cx
                .info
                .meters
                .iter()
                .find(|mi| mi.id == m.meter_id && mi.direct_table.is_none())
                .ok_or_else(|| {
                    P4Error::invalid(
                        "meter_entry.meter_id",
                        format!("unknown meter id {:#x}", m.meter_id),
                    )
                })?;
            let config = meter_config(m.config.as_ref(), "meter_entry.config")?;
            let cells = indices(m.index.as_ref(), mi.size, "meter_entry.index")?;
            no_colour_counters(m.counter_data.as_ref(), "meter_entry.counter_data")?;
            Ok(Op::MeterSet(
                mi.id,
                cells
                    .into_iter()
                    .map(|i| (i, config, cx.shadow.meters.get(&(mi.id, i)).copied()))
                    .collect(),
            ))
        }
        E::DirectMeterEntry(d) => {
            only_modify(ty, "direct_meter_entry")?;
            default_entry_resource(cx, d.table_entry.as_ref(), "direct_meter_entry", |t| {
                t.direct_meter.is_some()
            })?;
            let key = entry_key(cx, d.table_entry.as_ref(), "direct_meter_entry.table_entry")?;
            if cx.info.table(key.0).and_then(|t| t.direct_meter).is_none() {
                return Err(P4Error::invalid(
                    "direct_meter_entry.table_entry.table_id",
                    "table has no direct meter",
                ));
            }
            let config = meter_config(d.config.as_ref(), "direct_meter_entry.config")?;
            no_colour_counters(d.counter_data.as_ref(), "direct_meter_entry.counter_data")?;
            let old = cx.shadow.direct_meters.get(&key).copied();
            Ok(Op::DirectMeterSet(key, config, old))
        }
        E::RegisterEntry(r) => {
            only_modify(ty, "register_entry")?;
            let ri = cx
                .info
                .registers
                .iter()
                .find(|ri| ri.id == r.register_id)
                .ok_or_else(|| {
                    P4Error::invalid(
                        "register_entry.register_id",
                        format!("unknown register id {:#x}", r.register_id),
                    )
                })?;
            let cells = indices(r.index.as_ref(), ri.size, "register_entry.index")?;
            let value = match r.data.as_ref().and_then(|d| d.data.as_ref()) {
                // §8.4: a bytestring that does not fit is OUT_OF_RANGE.
                // An int<W> cell is two's complement.
                Some(proto::p4::v1::p4_data::Data::Bitstring(b)) => if ri.signed {
                    decode_signed(b, ri.bitwidth, "register_entry.data")
                } else {
                    decode(b, ri.bitwidth, "register_entry.data")
                }
                .map_err(|e| P4Error {
                    code: Code::OutOfRange,
                    ..e
                })?,
                _ => {
                    return Err(P4Error::invalid(
                        "register_entry.data",
                        "expected a bitstring",
                    ));
                }
            };
            Ok(Op::RegisterWrite(
                ri.id,
                cells.into_iter().map(|i| (i, value)).collect(),
            ))
        }
        E::PacketReplicationEngineEntry(e) => pre::pre_op(ty, e).map(Op::Pre),
        E::ExternEntry(_) => Err(P4Error::unimplemented("extern_entry")),
        E::ValueSetEntry(v) => value_set_op(cx, ty, v),
        E::DigestEntry(d) => digest_op(cx, ty, d),
    }
}

/// An `ActionProfileGroup` update (§9.2.2).
fn group_op(
    cx: &WriteContext<'_>,
    ty: UpdateType,
    g: &pb::ActionProfileGroup,
) -> Result<Op, P4Error> {
    let p = cx
        .info
        .action_profiles
        .iter()
        .find(|p| p.id == g.action_profile_id)
        .ok_or_else(|| {
            P4Error::invalid(
                "action_profile_group.action_profile_id",
                format!("unknown action profile id {:#x}", g.action_profile_id),
            )
        })?;
    if p.selector.is_none() {
        return Err(P4Error::invalid(
            "action_profile_group.action_profile_id",
            format!("{} has no selector: no groups", p.name),
        ));
    }
    if g.group_id == 0 {
        return Err(P4Error::invalid(
            "action_profile_group.group_id",
            "0 is not a valid group id",
        ));
    }
    oneshot::check_explicit(cx, p.id, "action_profile_group.action_profile_id")?;
    let stored_max = cx
        .shadow
        .group_max_size
        .get(&(p.id, g.group_id))
        .copied()
        .unwrap_or(0);
    let watched = cx.shadow.watched.get(&(p.id, g.group_id)).cloned();
    if ty == UpdateType::Delete {
        return Ok(Op::GroupDelete(p.id, g.group_id, stored_max, watched));
    }
    let limits = cx.profiles.get(&p.id).copied().unwrap_or_default();
    if g.max_size < 0 {
        return Err(P4Error::invalid(
            "action_profile_group.max_size",
            format!("negative ({})", g.max_size),
        ));
    }
    if limits.max_group_size > 0 && (g.max_size == 0 || g.max_size > limits.max_group_size) {
        return Err(P4Error::invalid(
            "action_profile_group.max_size",
            format!(
                "{} is outside 1..={} (the profile's max_group_size)",
                g.max_size, limits.max_group_size
            ),
        ));
    }
    if g.max_size as u64 > u64::from(MAX_GROUP_WEIGHT) {
        // §9.2.2.1: a max_size the target cannot hold, at creation.
        return Err(P4Error::new(
            Code::ResourceExhausted,
            format!(
                "action_profile_group.max_size: {} is more than this switch's groups hold ({MAX_GROUP_WEIGHT})",
                g.max_size
            ),
        ));
    }
    if ty == UpdateType::Modify && g.max_size != stored_max {
        return Err(P4Error::invalid(
            "action_profile_group.max_size",
            format!(
                "{} differs from the {stored_max} the group was inserted with (it cannot change)",
                g.max_size
            ),
        ));
    }
    let mut members: Vec<WatchedMember> = Vec::with_capacity(g.members.len());
    for (i, m) in g.members.iter().enumerate() {
        let field = format!("action_profile_group.members[{i}]");
        if m.weight <= 0 {
            return Err(P4Error::invalid(
                format!("{field}.weight"),
                format!("{} is not a valid weight (must be > 0)", m.weight),
            ));
        }
        if limits.max_member_weight > 0 && m.weight > limits.max_member_weight {
            return Err(P4Error::invalid(
                format!("{field}.weight"),
                format!(
                    "{} exceeds max_member_weight {}",
                    m.weight, limits.max_member_weight
                ),
            ));
        }
        let watch = watch::decode_watch(m.watch_kind.as_ref(), &field)?;
        if members.iter().any(|x| x.member == m.member_id) {
            return Err(P4Error::invalid(
                format!("{field}.member_id"),
                format!("duplicate member id {}", m.member_id),
            ));
        }
        members.push(WatchedMember {
            member: m.member_id,
            weight: m.weight as u32,
            watch,
        });
    }
    let size: u64 = if limits.sum_of_members {
        members.len() as u64
    } else {
        members.iter().map(|x| u64::from(x.weight)).sum()
    };
    let limit = match (g.max_size, limits.max_group_size) {
        (0, 0) => None,
        (0, l) | (l, _) => Some(l as u64),
    };
    if let Some(limit) = limit.filter(|&l| size > l) {
        return Err(P4Error::new(
            Code::ResourceExhausted,
            format!(
                "action_profile_group.members: size {size} exceeds the group's max_size {limit}"
            ),
        ));
    }
    let total: u64 = members.iter().map(|x| u64::from(x.weight)).sum();
    if total > u64::from(MAX_GROUP_WEIGHT) {
        return Err(P4Error::new(
            Code::ResourceExhausted,
            format!(
                "action_profile_group.members: total weight {total} exceeds this switch's {MAX_GROUP_WEIGHT}"
            ),
        ));
    }
    Ok(Op::GroupWrite(GroupWrite {
        profile: p.id,
        group: g.group_id,
        members,
        modify: ty == UpdateType::Modify,
        max_size: g.max_size,
        old: watched.filter(|_| ty == UpdateType::Modify),
    }))
}

/// The P4Info match fields of a value set as (id, width), in the order
/// their values are concatenated (the first in the most significant bits):
/// one field (id 1) over a `bit<W>` element, one per leaf of a struct.
pub(crate) fn value_set_fields(info: &ValueSetInfo) -> Vec<(u32, u32)> {
    if info.fields.is_empty() {
        vec![(1, info.bitwidth)]
    } else {
        info.fields.iter().map(|f| (f.id, f.bitwidth)).collect()
    }
}

/// A whole new member list for a parser value set (spec §9.6: MODIFY only).
/// A member has one EXACT `FieldMatch` per P4Info match field, in any order.
fn value_set_op(
    cx: &WriteContext<'_>,
    ty: UpdateType,
    v: &pb::ValueSetEntry,
) -> Result<Op, P4Error> {
    only_modify(ty, "value_set_entry")?;
    let info = cx
        .info
        .value_sets
        .iter()
        .find(|i| i.id == v.value_set_id)
        .ok_or_else(|| {
            P4Error::invalid(
                "value_set_entry.value_set_id",
                format!("unknown value set id {:#x}", v.value_set_id),
            )
        })?;
    if v.members.len() > info.size as usize {
        return Err(P4Error::new(
            Code::ResourceExhausted,
            format!(
                "value_set_entry.members: {} members, {} holds {}",
                v.members.len(),
                info.name,
                info.size
            ),
        ));
    }
    let fields = value_set_fields(info);
    let mut members = Vec::with_capacity(v.members.len());
    for (i, m) in v.members.iter().enumerate() {
        let field = format!("value_set_entry.members[{i}].match");
        if m.r#match.len() != fields.len() {
            return Err(P4Error::invalid(
                &field,
                format!(
                    "expected one field per match field of {} ({} fields), got {}",
                    info.name,
                    fields.len(),
                    m.r#match.len()
                ),
            ));
        }
        let mut value = 0u128;
        for &(id, width) in &fields {
            let mut given = m.r#match.iter().filter(|fm| fm.field_id == id);
            let (Some(fm), None) = (given.next(), given.next()) else {
                return Err(P4Error::invalid(
                    &field,
                    format!("expected field id {id} exactly once"),
                ));
            };
            let Some(pb::field_match::FieldMatchType::Exact(e)) = &fm.field_match_type else {
                return Err(P4Error::invalid(
                    &field,
                    format!("field id {id}: the match kind is EXACT"),
                ));
            };
            let part = decode(&e.value, width, format_args!("{field} (field id {id})"))?;
            value = if width >= 128 {
                part
            } else {
                (value << width) | part
            };
        }
        let member = (value, crate::p4rt::bytes::mask(info.bitwidth));
        if members.contains(&member) {
            // §9.6: duplicates are ALREADY_EXISTS (read-write symmetry).
            return Err(P4Error::new(
                Code::AlreadyExists,
                format!("{field}: duplicate member {value:#x}"),
            ));
        }
        members.push(member);
    }
    Ok(Op::ValueSetWrite(info.id, members))
}

fn digest_op(cx: &WriteContext<'_>, ty: UpdateType, d: &pb::DigestEntry) -> Result<Op, P4Error> {
    if !cx.info.digests.iter().any(|i| i.id == d.digest_id) {
        return Err(P4Error::invalid(
            "digest_entry.digest_id",
            format!("unknown digest id {:#x}", d.digest_id),
        ));
    }
    let old = cx.shadow.digests.get(&d.digest_id).copied();
    let new = match ty {
        UpdateType::Delete => None,
        _ => Some(DigestConfig::from_proto(
            d.config.as_ref(),
            "digest_entry.config",
        )?),
    };
    match (ty, old) {
        (UpdateType::Insert, Some(_)) => Err(P4Error::new(
            Code::AlreadyExists,
            format!(
                "digest_entry: digest {:#x} is already configured",
                d.digest_id
            ),
        )),
        (UpdateType::Modify | UpdateType::Delete, None) => Err(P4Error::new(
            Code::NotFound,
            format!("digest_entry: digest {:#x} is not configured", d.digest_id),
        )),
        _ => Ok(Op::DigestSet(d.digest_id, new, old)),
    }
}

/// The default entry (§9.1.3): MODIFY only, empty match, priority 0, no
/// idle timeout; no action resets it.
fn default_entry_op(
    cx: &WriteContext<'_>,
    ty: UpdateType,
    t: &'static TableInfo,
    te: &pb::TableEntry,
) -> Result<Op, P4Error> {
    if ty != UpdateType::Modify {
        return Err(P4Error::invalid(
            "table_entry.is_default_action",
            format!(
                "the default entry can only be modified, not {}",
                ty.as_str_name()
            ),
        ));
    }
    if !te.r#match.is_empty() {
        return Err(P4Error::invalid(
            "table_entry.match",
            "must be empty for the default entry",
        ));
    }
    if te.priority != 0 {
        return Err(P4Error::invalid(
            "table_entry.priority",
            "must be 0 for the default entry",
        ));
    }
    if te.idle_timeout_ns != 0 {
        return Err(P4Error::invalid(
            "table_entry.idle_timeout_ns",
            "the default entry has no idle timeout (must be 0)",
        ));
    }
    if te.counter_data.is_some() || te.meter_config.is_some() || te.meter_counter_data.is_some() {
        return Err(P4Error::unimplemented(
            "direct resources of the default entry",
        ));
    }
    if t.default_is_const {
        return Err(P4Error::new(
            Code::PermissionDenied,
            format!(
                "table_entry.is_default_action: {} has a const default action",
                t.name
            ),
        ));
    }
    if t.implementation.is_some() {
        // §9.1.3: the default entry of an indirect table is a constant.
        return Err(P4Error::new(
            Code::PermissionDenied,
            format!(
                "table_entry.is_default_action: {} is an indirect table; its default entry is constant",
                t.name
            ),
        ));
    }
    let old_meta = cx
        .shadow
        .default_metadata
        .get(&t.id)
        .cloned()
        .unwrap_or_default();
    match te.action.as_ref().and_then(|a| a.r#type.as_ref()) {
        // A reset clears the cookies too (§9.1.3).
        None => Ok(Op::Default(DefaultWrite {
            table: t.id,
            action: None,
            meta: DefaultMeta::default(),
            old_meta,
        })),
        Some(pb::table_action::Type::Action(a)) => {
            check_action_in_table(t, a.action_id, true, "table_entry.action.action_id")?;
            let call = action_call_from_proto(cx.info, a, "table_entry.action")?;
            Ok(Op::Default(DefaultWrite {
                table: t.id,
                action: Some(call),
                meta: DefaultMeta {
                    metadata: te.metadata.clone(),
                    controller_metadata: te.controller_metadata,
                },
                old_meta,
            }))
        }
        Some(_) => Err(P4Error::invalid(
            "table_entry.action",
            "the default entry takes a direct action",
        )),
    }
}

fn table_op(cx: &WriteContext<'_>, ty: UpdateType, te: &pb::TableEntry) -> Result<Op, P4Error> {
    let t = table(cx.info, te.table_id, "table_entry.table_id")?;
    if te.is_const {
        return Err(P4Error::invalid(
            "table_entry.is_const",
            "must be false in a write (the switch sets it in reads)",
        ));
    }
    if ty != UpdateType::Delete && te.time_since_last_hit.is_some() {
        return Err(P4Error::invalid(
            "table_entry.time_since_last_hit",
            "must be unset in a write (it is read-only)",
        ));
    }
    if te.is_default_action {
        return default_entry_op(cx, ty, t, te);
    }
    if ty == UpdateType::Insert && t.keys.is_empty() {
        // §9.1: a keyless table has only its default entry.
        return Err(P4Error::invalid(
            "table_entry.table_id",
            format!(
                "{} has no match key: only its default entry can be set (MODIFY with is_default_action)",
                t.name
            ),
        ));
    }
    let matches = key_from_proto(t, &te.r#match).map_err(|e| e.context("table_entry"))?;
    check_priority(t, te.priority).map_err(|e| e.context("table_entry"))?;
    let key: EntryKey = (t.id, matches, te.priority);
    // Most tables have neither direct meters nor extras: skip hashing the key.
    let old_meter = (!cx.shadow.direct_meters.is_empty())
        .then(|| cx.shadow.direct_meters.get(&key).copied())
        .flatten();
    let old_extras = (!cx.shadow.entries.is_empty())
        .then(|| cx.shadow.entries.get(&key).copied())
        .flatten()
        .unwrap_or_default();
    if ty == UpdateType::Delete {
        // Only the key counts in a DELETE (§9.1).
        if t.is_const {
            return Err(P4Error::new(
                Code::PermissionDenied,
                format!("table_entry.table_id: {} has const entries", t.name),
            ));
        }
        // Without one shots (the usual case) the key is neither hashed
        // nor copied.
        let one_shot = (!cx.shadow.one_shots.is_empty())
            .then(|| cx.shadow.one_shots.get(&key))
            .flatten();
        let op = |matches| {
            Op::TableDelete(EntryDelete {
                table: t.id,
                matches,
                priority: key.2,
                old_meter: t.direct_meter.map(|_| old_meter),
                old_extras,
                has_counter: t.direct_counter.is_some(),
            })
        };
        return Ok(match one_shot {
            Some(os) => oneshot::remove(key.clone(), os, op(key.1.clone())),
            None => op(key.1),
        });
    }
    let action_set = te.action.as_ref().and_then(|a| a.r#type.as_ref()).is_some();
    if t.is_const && (ty == UpdateType::Insert || action_set) {
        return Err(P4Error::new(
            Code::PermissionDenied,
            format!(
                "table_entry.table_id: {} has const entries (a MODIFY may change only their direct resources, without an action)",
                t.name
            ),
        ));
    }
    if te.meter_counter_data.is_some() {
        return Err(P4Error::unimplemented(
            "table_entry.meter_counter_data (per-colour meter counters)",
        ));
    }
    if te.idle_timeout_ns < 0 {
        return Err(P4Error::invalid(
            "table_entry.idle_timeout_ns",
            format!("negative ({})", te.idle_timeout_ns),
        ));
    }
    if te.idle_timeout_ns != 0 && !t.idle_timeout {
        return Err(P4Error::invalid(
            "table_entry.idle_timeout_ns",
            format!("{} does not support idle timeout", t.name),
        ));
    }
    if t.is_const && te.idle_timeout_ns != 0 {
        return Err(P4Error::invalid(
            "table_entry.idle_timeout_ns",
            "static entries have no idle timeout",
        ));
    }
    let keep_action = ty == UpdateType::Modify && !action_set;
    let one_shot = match te.action.as_ref().and_then(|a| a.r#type.as_ref()) {
        Some(pb::table_action::Type::ActionProfileActionSet(set)) => Some(set),
        _ => None,
    };
    let action = if keep_action || one_shot.is_some() {
        // Placeholder: the device job takes the entry's current action, or
        // the one-shot expansion names its group.
        p4_target::runtime::EntryAction::Member(0)
    } else {
        let action = entry_action_from_proto(cx.info, t, te.action.as_ref())
            .map_err(|e| e.context("table_entry"))?;
        if let (
            Some(p),
            p4_target::runtime::EntryAction::Member(_) | p4_target::runtime::EntryAction::Group(_),
        ) = (t.implementation, &action)
        {
            oneshot::check_explicit(cx, p, "table_entry.action")?;
        }
        action
    };
    let counter = match &te.counter_data {
        Some(_) if t.direct_counter.is_none() => {
            return Err(P4Error::invalid(
                "table_entry.counter_data",
                format!("{} has no direct counter", t.name),
            ));
        }
        Some(d) => Some(counter_data(d, "table_entry.counter_data")?),
        None => None,
    };
    if te.meter_config.is_some() && t.direct_meter.is_none() {
        return Err(P4Error::invalid(
            "table_entry.meter_config",
            format!("{} has no direct meter", t.name),
        ));
    }
    let config = meter_config(te.meter_config.as_ref(), "table_entry.meter_config")?;
    // INSERT: a config is applied, none leaves the default; MODIFY: an
    // unset config resets the meter to the default (§9.1.7).
    let meter = match (ty, t.direct_meter) {
        (_, None) => None,
        (UpdateType::Insert, Some(_)) => config.map(Some),
        (_, Some(_)) => Some(config),
    };
    let w = EntryWrite {
        table: t.id,
        entry: TableEntry {
            matches: key.1,
            priority: key.2,
            action,
            metadata: te.metadata.clone(),
        },
        keep_action,
        resources_only: t.is_const,
        counter,
        meter,
        extras: EntryExtras {
            idle_timeout_ns: te.idle_timeout_ns as u64,
            controller_metadata: te.controller_metadata,
        },
        old_meter,
        old_extras,
    };
    // The usual entry (no one shot written or kept) needs no key copy.
    let key = (one_shot.is_some() || !cx.shadow.one_shots.is_empty()).then(|| w.key());
    let op = if ty == UpdateType::Insert {
        Op::TableInsert(w)
    } else {
        Op::TableModify(w)
    };
    let Some(key) = key else { return Ok(op) };
    let old_one_shot = (ty == UpdateType::Modify)
        .then(|| cx.shadow.one_shots.get(&key))
        .flatten();
    Ok(match (one_shot, old_one_shot) {
        (Some(set), old) => oneshot::expand(cx, t, key, set, old, op)?,
        // A MODIFY that keeps the action keeps the one shot.
        (None, Some(_)) if keep_action => op,
        (None, Some(old)) => oneshot::remove(key, old, op),
        (None, None) => op,
    })
}

/// The operation that undoes `op`, computed before `op` runs; `None` when
/// `op` will fail anyway (nothing to undo).
fn inverse(dev: &DeviceState<'_>, op: &Op) -> Option<Op> {
    let rt: &dyn RuntimeApi = &*dev.runtime;
    Some(match op {
        Op::Noop => Op::Noop,
        // Sub-operations touch distinct objects, so each inverse is taken
        // on the state before the sequence; they run newest first.
        Op::Seq(ops) => Op::Seq(
            ops.iter()
                .rev()
                .map(|o| inverse(dev, o))
                .collect::<Option<_>>()?,
        ),
        Op::OneShotMark(m) => Op::OneShotMark(m.inverse()),
        Op::Pre(p) => Op::Pre(pre::inverse(dev.pre.as_deref()?, p)?),
        Op::TableInsert(w) => Op::TableDelete(EntryDelete {
            table: w.table,
            matches: w.entry.matches.clone(),
            priority: w.entry.priority,
            old_meter: w.meter,
            old_extras: w.extras,
            has_counter: false,
        }),
        Op::TableModify(w) => {
            let old = rt
                .table_entry(w.table, &w.entry.matches, w.entry.priority)
                .ok()?;
            let counter = w.counter.and_then(|_| {
                rt.direct_counter_read(w.table, &w.entry.matches, w.entry.priority)
                    .ok()
            });
            Op::TableModify(EntryWrite {
                table: w.table,
                entry: old,
                keep_action: false,
                resources_only: w.resources_only,
                counter,
                meter: w.meter.map(|_| w.old_meter),
                extras: w.old_extras,
                old_meter: w.meter.flatten(),
                old_extras: w.extras,
            })
        }
        Op::TableDelete(d) => {
            let old = rt.table_entry(d.table, &d.matches, d.priority).ok()?;
            let counter = if d.has_counter {
                rt.direct_counter_read(d.table, &d.matches, d.priority).ok()
            } else {
                None
            };
            Op::TableInsert(EntryWrite {
                table: d.table,
                entry: old,
                keep_action: false,
                resources_only: false,
                counter,
                meter: d.old_meter.flatten().map(Some),
                extras: d.old_extras,
                old_meter: None,
                old_extras: EntryExtras::default(),
            })
        }
        Op::Default(d) => Op::Default(DefaultWrite {
            table: d.table,
            action: Some(rt.table_default(d.table).ok()?),
            meta: d.old_meta.clone(),
            old_meta: d.meta.clone(),
        }),
        Op::MemberWrite(p, m, _, false) => Op::MemberDelete(*p, *m),
        Op::MemberWrite(p, m, _, true) | Op::MemberDelete(p, m) => {
            let old = rt.members(*p).ok()?.into_iter().find(|(id, _)| id == m)?.1;
            Op::MemberWrite(*p, *m, old, matches!(op, Op::MemberWrite(..)))
        }
        Op::GroupWrite(g) if !g.modify => Op::GroupDelete(g.profile, g.group, g.max_size, None),
        Op::GroupWrite(GroupWrite {
            profile,
            group,
            max_size,
            old,
            ..
        })
        | Op::GroupDelete(profile, group, max_size, old) => {
            // A watched group as written; another as the runtime holds it.
            let installed = rt
                .groups(*profile)
                .ok()?
                .into_iter()
                .find(|(id, _)| id == group)?
                .1;
            let members = old.clone().unwrap_or_else(|| {
                installed
                    .into_iter()
                    .map(|(member, weight)| WatchedMember {
                        member,
                        weight,
                        watch: None,
                    })
                    .collect()
            });
            let (modify, old) = match op {
                Op::GroupWrite(g) => (true, g.is_watched().then(|| g.members.clone())),
                _ => (false, None),
            };
            Op::GroupWrite(GroupWrite {
                profile: *profile,
                group: *group,
                members,
                modify,
                max_size: *max_size,
                old,
            })
        }
        Op::CounterWrite(c, cells) => Op::CounterWrite(
            *c,
            cells
                .iter()
                .map(|&(i, _)| Some((i, rt.counter_read(*c, i).ok()?)))
                .collect::<Option<_>>()?,
        ),
        Op::DirectCounterWrite(k, _) => Op::DirectCounterWrite(
            k.clone(),
            Some(rt.direct_counter_read(k.0, &k.1, k.2).ok()?),
        ),
        Op::MeterSet(m, cells) => Op::MeterSet(
            *m,
            cells.iter().map(|&(i, new, old)| (i, old, new)).collect(),
        ),
        Op::DirectMeterSet(k, new, old) => Op::DirectMeterSet(k.clone(), *old, *new),
        Op::DigestSet(d, new, old) => Op::DigestSet(*d, *old, *new),
        Op::RegisterWrite(r, cells) => Op::RegisterWrite(
            *r,
            cells
                .iter()
                .map(|&(i, _)| Some((i, rt.register_read(*r, i).ok()?)))
                .collect::<Option<_>>()?,
        ),
        Op::ValueSetWrite(v, _) => Op::ValueSetWrite(*v, rt.value_set_members(*v).ok()?),
    })
}

/// Writes an entry's direct counter and meter after an INSERT or MODIFY.
fn write_resources(rt: &mut dyn RuntimeApi, w: &EntryWrite) -> Result<(), P4Error> {
    let (t, m, p) = (w.table, &w.entry.matches, w.entry.priority);
    if let Some(c) = w.counter {
        rt.direct_counter_write(t, m, p, c)?;
    }
    if let Some(cfg) = w.meter {
        rt.direct_meter_set(t, m, p, cfg)?;
    }
    Ok(())
}

/// Runs one operation on the device.
pub fn apply_op(dev: &mut DeviceState<'_>, op: &Op) -> Result<(), P4Error> {
    if let Op::Seq(ops) = op {
        let mut applied = Vec::with_capacity(ops.len());
        for o in ops {
            let inv = inverse(dev, o);
            if let Err(e) = apply_op(dev, o) {
                undo_batch(dev, &applied);
                return Err(e);
            }
            applied.extend(inv);
        }
        return Ok(());
    }
    let rt: &mut dyn RuntimeApi = &mut *dev.runtime;
    match op {
        Op::Seq(_) => unreachable!("handled above"),
        Op::OneShotMark(m) => m.apply(rt)?,
        Op::Noop | Op::DigestSet(..) => {}
        Op::Pre(p) => {
            let Some(engine) = dev.pre.as_deref_mut() else {
                return Err(P4Error::unimplemented(
                    "packet_replication_engine_entry (this device has no PRE)",
                ));
            };
            pre::apply(engine, dev.ports, p)?;
        }
        Op::TableInsert(w) => {
            rt.table_insert_ref(w.table, &w.entry)?;
            write_resources(rt, w)?;
        }
        Op::TableModify(w) => {
            let current = rt.table_entry(w.table, &w.entry.matches, w.entry.priority)?;
            if !w.resources_only {
                let mut entry = w.entry.clone();
                if w.keep_action {
                    entry.action = current.action;
                }
                rt.table_modify(w.table, entry)?;
            }
            write_resources(rt, w)?;
        }
        Op::TableDelete(d) => rt.table_delete(d.table, &d.matches, d.priority)?,
        Op::Default(d) => match &d.action {
            Some(a) => rt.table_set_default(d.table, a.clone())?,
            None => rt.table_reset_default(d.table)?,
        },
        Op::MemberWrite(p, m, a, modify) => rt.member_write(*p, *m, a.clone(), *modify)?,
        Op::MemberDelete(p, m) => rt.member_delete(*p, *m)?,
        Op::GroupWrite(g) => {
            watch::check_ports(&g.members, dev.ports, "action_profile_group")?;
            let live = watch::live(&g.members, &dev.ports_down);
            rt.group_write(g.profile, g.group, &live, g.modify)?
        }
        Op::GroupDelete(p, g, ..) => rt.group_delete(*p, *g)?,
        Op::CounterWrite(c, cells) => {
            for &(i, d) in cells {
                rt.counter_write(*c, i, d)?;
            }
        }
        Op::DirectCounterWrite(k, d) => match d {
            Some(d) => rt.direct_counter_write(k.0, &k.1, k.2, *d)?,
            None => {
                rt.direct_counter_read(k.0, &k.1, k.2)?;
            }
        },
        Op::MeterSet(m, cells) => {
            for &(i, cfg, _) in cells {
                rt.meter_set(*m, i, cfg)?;
            }
        }
        Op::DirectMeterSet(k, cfg, _) => rt.direct_meter_set(k.0, &k.1, k.2, *cfg)?,
        Op::RegisterWrite(r, cells) => {
            for &(i, v) in cells {
                rt.register_write(*r, i, v)?;
            }
        }
        Op::ValueSetWrite(v, members) => rt.value_set_write(*v, members)?,
    }
    Ok(())
}

/// Applies a decoded batch with `atomicity`; one result per update. With
/// `undo`, the inverse of every update applied is pushed to it in order, so
/// the caller can take the batch back (the state file could not record
/// it): see [`undo_batch`].
pub fn apply_batch(
    dev: &mut DeviceState<'_>,
    ops: &[Result<Op, P4Error>],
    atomicity: Atomicity,
    mut undo: Option<&mut Vec<Op>>,
) -> Vec<Result<(), P4Error>> {
    // Entries inserted now count as hit now (idle timeout, §9.1.8).
    let now = dev.now_ns;
    dev.runtime.set_idle_clock(now);
    if atomicity == Atomicity::ContinueOnError {
        return ops
            .iter()
            .map(|op| {
                let op = op.as_ref().map_err(Clone::clone)?;
                let inv = undo.as_ref().and_then(|_| inverse(dev, op));
                apply_op(dev, op)?;
                if let (Some(undo), Some(inv)) = (undo.as_deref_mut(), inv) {
                    undo.push(inv);
                }
                Ok(())
            })
            .collect();
    }
    if let Some(bad) = ops.iter().position(|op| op.is_err()) {
        return ops
            .iter()
            .map(|op| match op {
                Err(e) => Err(e.clone()),
                Ok(_) => Err(P4Error::new(
                    Code::Aborted,
                    format!("not applied: update {bad} of this all-or-nothing batch is invalid"),
                )),
            })
            .collect();
    }
    let mut applied: Vec<Op> = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let Ok(op) = op else {
            unreachable!("checked above")
        };
        let inv = inverse(dev, op);
        if let Err(e) = apply_op(dev, op) {
            undo_batch(dev, &applied);
            return (0..ops.len())
                .map(|j| {
                    if j == i {
                        Err(e.clone())
                    } else {
                        Err(P4Error::new(
                            Code::Aborted,
                            format!("rolled back: update {i} of this all-or-nothing batch failed"),
                        ))
                    }
                })
                .collect();
        }
        applied.extend(inv);
    }
    if let Some(undo) = undo {
        undo.extend(applied);
    }
    ops.iter().map(|_| Ok(())).collect()
}

/// Runs the inverses `undo` (as [`apply_batch`] collected them) in reverse
/// order, taking a batch back. A step that fails is logged: the entry it
/// concerned was changed by nothing else in between, so it cannot fail
/// unless the device itself is broken.
pub fn undo_batch(dev: &mut DeviceState<'_>, undo: &[Op]) {
    for u in undo.iter().rev() {
        if let Err(e) = apply_op(dev, u) {
            tracing::error!(error = %e, "rollback step failed");
        }
    }
}

impl Shadow {
    /// What survives a RECONCILE_AND_COMMIT to another program: entry
    /// extras of the `tables` kept, group sizes of the `profiles` kept and
    /// the PRE echo; meters (their configs start afresh) and digests (the
    /// new program's are off) go.
    pub fn retain_program(&mut self, tables: &[u32], profiles: &[u32]) {
        self.meters.clear();
        self.direct_meters.clear();
        self.digests.clear();
        self.entries.retain(|k, _| tables.contains(&k.0));
        self.default_metadata.retain(|t, _| tables.contains(t));
        self.one_shots
            .retain(|k, o| tables.contains(&k.0) && profiles.contains(&o.profile));
        self.group_max_size.retain(|k, _| profiles.contains(&k.0));
        self.watched.retain(|k, _| profiles.contains(&k.0));
    }

    /// Whether [`Shadow::record`] of `op` may change the shadow (or the
    /// next hidden id). `false` only when it certainly does not: then an
    /// update decoded after `op` reads the same shadow whether or not
    /// `op` was recorded, which is what lets a group commit decode the
    /// next Write before this one's device results are back. Mirrors
    /// `record`: keep the two in step.
    pub fn changed_by(&self, op: &Op) -> bool {
        match op {
            Op::Noop
            | Op::MemberWrite(..)
            | Op::MemberDelete(..)
            | Op::CounterWrite(..)
            | Op::DirectCounterWrite(..)
            | Op::RegisterWrite(..)
            | Op::ValueSetWrite(..) => false,
            Op::TableInsert(w) | Op::TableModify(w) => {
                !(w.meter.is_none() && w.extras.is_default() && self.entries.is_empty())
            }
            Op::TableDelete(_) => !(self.direct_meters.is_empty() && self.entries.is_empty()),
            _ => true,
        }
    }

    /// Folds an applied operation into the shadow state.
    pub fn record(&mut self, op: &Op) {
        match op {
            Op::MeterSet(m, cells) => {
                for &(i, cfg, _) in cells {
                    match cfg {
                        Some(c) => self.meters.insert((*m, i), c),
                        None => self.meters.remove(&(*m, i)),
                    };
                }
            }
            Op::DirectMeterSet(k, cfg, _) => {
                match cfg {
                    Some(c) => self.direct_meters.insert(k.clone(), *c),
                    None => self.direct_meters.remove(k),
                };
            }
            Op::TableInsert(w) | Op::TableModify(w) => {
                // The usual entry (no meter, no extras, none kept) changes
                // nothing here: skip building and hashing its key.
                if w.meter.is_none() && w.extras.is_default() && self.entries.is_empty() {
                    return;
                }
                let key = w.key();
                if let Some(cfg) = w.meter {
                    match cfg {
                        Some(c) => self.direct_meters.insert(key.clone(), c),
                        None => self.direct_meters.remove(&key),
                    };
                }
                if w.extras.is_default() {
                    self.entries.remove(&key);
                } else {
                    self.entries.insert(key, w.extras);
                }
            }
            Op::TableDelete(d) => {
                if self.direct_meters.is_empty() && self.entries.is_empty() {
                    return;
                }
                let key = (d.table, d.matches.clone(), d.priority);
                self.direct_meters.remove(&key);
                self.entries.remove(&key);
            }
            Op::GroupWrite(g) => {
                if g.max_size == 0 {
                    self.group_max_size.remove(&(g.profile, g.group));
                } else {
                    self.group_max_size.insert((g.profile, g.group), g.max_size);
                }
                if g.is_watched() {
                    self.watched.insert((g.profile, g.group), g.members.clone());
                } else {
                    self.watched.remove(&(g.profile, g.group));
                }
            }
            Op::GroupDelete(p, g, ..) => {
                self.group_max_size.remove(&(*p, *g));
                self.watched.remove(&(*p, *g));
            }
            Op::Default(d) => {
                if d.meta == DefaultMeta::default() {
                    self.default_metadata.remove(&d.table);
                } else {
                    self.default_metadata.insert(d.table, d.meta.clone());
                }
            }
            Op::Pre(p) => self.pre.record(p),
            Op::Seq(ops) => {
                for o in ops {
                    self.record(o);
                }
            }
            Op::OneShotMark(m) => match &m.new {
                Some(os) => {
                    let top = os
                        .members
                        .iter()
                        .chain([&os.group])
                        .max()
                        .copied()
                        .unwrap_or(0);
                    self.next_hidden = self.next_hidden.max(top.wrapping_add(1));
                    self.one_shots.insert(m.key.clone(), os.clone());
                }
                None => {
                    self.one_shots.remove(&m.key);
                }
            },
            Op::DigestSet(d, cfg, _) => {
                match cfg {
                    Some(c) => self.digests.insert(*d, *c),
                    None => self.digests.remove(d),
                };
            }
            _ => {}
        }
    }
}
