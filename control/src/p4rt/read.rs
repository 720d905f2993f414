//! The Read RPC's semantics (spec §13, §9.1.6; reference §1.4 "Wildcard
//! reads"): which entities a request selects and how they are reported.
//!
//! * `table_entry{table_id: 0}` reads every table, const and
//!   fabric-owned ones included (§9.1.6); default entries appear only when
//!   `is_default_action` is set, with the cookies they were set with. The
//!   request's fields are filters (§9.1.6): a match list selects one
//!   entry; a priority, an action id (its params are ignored, as are
//!   member and group ids), a `metadata`, a `controller_metadata` and an
//!   `idle_timeout_ns` select the entries that have them. `counter_data`
//!   present asks for direct counters, `meter_config` for direct meter
//!   configs and `time_since_last_hit` for the time since the entry was
//!   last hit (idle-timeout tables only: on another table it is
//!   INVALID_ARGUMENT, §9.1.8). Entries report the `idle_timeout_ns` and
//!   `controller_metadata` they were written with; groups their
//!   `max_size`. Per-colour meter counters are UNIMPLEMENTED.
//! * A direct counter or meter read naming an entry that is not there is
//!   NOT_FOUND, one naming a table without that resource INVALID_ARGUMENT.
//! * Each request succeeds or fails alone (§13.3): the caller streams the
//!   entities of the good ones and reports each request's status
//!   ([`super::error::read_status`]).
//! * The request's `role` keeps the entities that role covers (§13): PRE
//!   entries only for roles with full access.
//! * Profile id 0, member/group id 0, counter id 0, register id 0 and an
//!   absent index are wildcards; so is an `extern_entry` with type and id
//!   0 (it reads nothing: there are no architecture-specific externs).
//! * PRE entries: group / session id 0 is the wildcard, an entry without a
//!   type reads both kinds (see [`super::pre::read`]); on a device without
//!   a PRE wildcard reads are empty. Other unsupported kinds are
//!   UNIMPLEMENTED.
//!
//! Table entries are streamed (the service's `read_request`): the reader
//! first gathers where the table's entries are
//! (`RuntimeApi::table_entry_places`, 16,384 a device job, no entry
//! copied) and sorts them into insertion order; then it takes the entries
//! 1,024 a device job (`RuntimeApi::table_rows_at`), filters and converts
//! them off the dataplane thread ([`rows_to_entities`]) and sends them
//! before taking the next page, with at most four messages queued for the
//! client. A read of a million entries never holds the dataplane for long
//! nor holds the whole table converted.
//!
//! Consistency: each page is taken, with what the shadow holds of its
//! entries, while writes are held out, so an entry is reported as one
//! moment had it. Writes go on between pages: every entry present for the
//! whole read is reported exactly once, in insertion order; one deleted
//! before its page is reached is not reported, one inserted after the read
//! began is not (its place was not gathered), one modified meanwhile is
//! reported as its page found it. P4Runtime asks no snapshot of a Read
//! across Writes on other streams (§12.3 already lets a reader see part
//! of a CONTINUE_ON_ERROR batch); a read the client is slow to drain no
//! longer keeps writes out. A read started under one pipeline ends with
//! ABORTED if the pipeline changes before it is done. Other entities are
//! read inside one device job each, against a copy of the shadow taken
//! with writes held out.

use std::collections::HashMap;
use std::sync::Arc;

use p4_target::arch::Pre;
use p4_target::info::{ProgramInfo, TableInfo};
use p4_target::runtime::{ActionCall, CounterData, EntryAction, EntryRow, FieldMatch, RuntimeApi};
use proto::p4::v1 as pb;
use proto::p4::v1::entity::Entity as E;

use super::bytes::{encode, encode_signed, mask};
use super::error::P4Error;
use super::roles::{RoleScope, entity_id};
use super::translate::{default_entry_to_proto, entry_to_proto, key_from_proto, table};
use super::write::Shadow;

/// What a read needs besides the runtime.
#[derive(Clone, Debug)]
pub struct ReadContext {
    /// The program.
    pub info: &'static ProgramInfo,
    /// Tables owned by another service.
    pub owned: HashMap<u32, String>,
    /// The device's time (ns, the idle clock's).
    pub now_ns: u64,
    /// Meter configurations, entry extras, one shots, PRE echo.
    pub shadow: Arc<Shadow>,
    /// The scope of the request's `role`, `None` for no role filter.
    pub role: Option<RoleScope>,
}

fn counter_to_proto(d: CounterData) -> pb::CounterData {
    pb::CounterData {
        byte_count: d.bytes as i64,
        packet_count: d.packets as i64,
    }
}

fn meter_to_proto(c: &p4_target::externs::MeterConfig) -> pb::MeterConfig {
    pb::MeterConfig {
        cir: c.cir as i64,
        cburst: c.cburst as i64,
        pir: c.pir as i64,
        pburst: c.pburst as i64,
        eburst: 0,
    }
}

fn entity(e: E) -> pb::Entity {
    pb::Entity { entity: Some(e) }
}

fn selected_tables(
    info: &'static ProgramInfo,
    table_id: u32,
    field: &str,
) -> Result<Vec<&'static TableInfo>, P4Error> {
    if table_id == 0 {
        Ok(info.tables.iter().collect())
    } else {
        Ok(vec![table(info, table_id, field)?])
    }
}

/// Whether the request's role (`None`: no role filter) covers the entity
/// with P4Info id `id` (a table, profile, counter, ...).
pub fn role_covers(role: Option<&RoleScope>, id: u32) -> bool {
    role.is_none_or(|scope| scope.covers(id))
}

/// Keeps the entities of one request that its `role` covers (§13); PRE
/// entries, which have no P4Info id, only for a role with full access.
pub fn retain_role(cx: &ReadContext, found: &mut Vec<pb::Entity>) {
    if let Some(scope) = &cx.role {
        found.retain(|e| {
            e.entity
                .as_ref()
                .is_some_and(|k| entity_id(k).map_or(scope.is_full(), |id| scope.covers(id)))
        });
    }
}

/// What one table contributes to a table-entry read: its default entry,
/// or the entries that pass a filter.
#[derive(Debug)]
pub enum TablePlan {
    /// `is_default_action`: the table's default entry.
    Default(&'static TableInfo),
    /// The table's entries, filtered.
    Entries(EntryQuery),
}

impl TablePlan {
    /// The table the plan reads.
    pub fn table(&self) -> &'static TableInfo {
        match self {
            TablePlan::Default(t) => t,
            TablePlan::Entries(q) => q.table,
        }
    }
}

/// The filters of a table-entry read on one table that the request
/// decodes to (the rest are compared in their wire form).
#[derive(Debug)]
pub struct EntryQuery {
    /// The table.
    pub table: &'static TableInfo,
    key: Option<Vec<Option<FieldMatch>>>,
    /// §9.1.6: an action filters on its action id only (not on its
    /// parameters, nor on member or group ids).
    action_id: Option<u32>,
}

/// Which tables a table-entry read `te` covers and how it filters them;
/// decodes and checks the request without touching the runtime.
pub fn plan_table_read(
    info: &'static ProgramInfo,
    te: &pb::TableEntry,
) -> Result<Vec<TablePlan>, P4Error> {
    if te.meter_counter_data.is_some() {
        return Err(P4Error::unimplemented(
            "table_entry.meter_counter_data (per-colour meter counters)",
        ));
    }
    let action_id = match te.action.as_ref().and_then(|a| a.r#type.as_ref()) {
        Some(pb::table_action::Type::Action(a)) if te.table_id != 0 => Some(a.action_id),
        _ => None,
    };
    let mut plans = Vec::new();
    for t in selected_tables(info, te.table_id, "table_entry.table_id")? {
        if te.table_id != 0 && te.time_since_last_hit.is_some() && !t.idle_timeout {
            // §9.1.8: only tables that support idle timeout have it.
            return Err(P4Error::invalid(
                "table_entry.time_since_last_hit",
                format!("{} does not support idle timeout", t.name),
            ));
        }
        if te.is_default_action {
            plans.push(TablePlan::Default(t));
            continue;
        }
        let key = if te.table_id != 0 && !te.r#match.is_empty() {
            Some(key_from_proto(t, &te.r#match).map_err(|e| e.context("table_entry"))?)
        } else {
            None
        };
        plans.push(TablePlan::Entries(EntryQuery {
            table: t,
            key,
            action_id,
        }));
    }
    Ok(plans)
}

/// The default entry of `t`, as a read reports it: with the cookies it
/// was set with.
pub fn default_entity(
    info: &ProgramInfo,
    shadow: &Shadow,
    t: &TableInfo,
    call: &ActionCall,
) -> pb::Entity {
    let mut pe = default_entry_to_proto(info, t, call);
    if let Some(m) = shadow.default_metadata.get(&t.id) {
        pe.metadata = m.metadata.clone();
        pe.controller_metadata = m.controller_metadata;
    }
    entity(E::TableEntry(pe))
}

/// Appends to `out` the rows (in insertion order) that pass the filters of
/// `te` and `q`, as entities, with what `shadow` holds of them; `now_ns` is
/// the device time the rows were read at (for `time_since_last_hit`).
pub fn rows_to_entities(
    info: &ProgramInfo,
    shadow: &Shadow,
    te: &pb::TableEntry,
    q: &EntryQuery,
    rows: &[EntryRow],
    now_ns: u64,
    out: &mut Vec<pb::Entity>,
) {
    let t = q.table;
    // Only entries with extras, direct meter configs or one-shot actions
    // are in the shadow; without any, skip building each entry's key.
    let shadowed = !shadow.entries.is_empty()
        || !shadow.direct_meters.is_empty()
        || !shadow.one_shots.is_empty();
    for row in rows {
        let e = &row.entry;
        let direct_action = match &e.action {
            EntryAction::Direct(c) => Some(c.action_id),
            _ => None,
        };
        if q.key.as_ref().is_some_and(|k| *k != e.matches)
            || (te.priority != 0 && te.priority != e.priority)
            || q.action_id.is_some_and(|a| direct_action != Some(a))
            || (!te.metadata.is_empty() && te.metadata != e.metadata)
        {
            continue;
        }
        let ekey = shadowed.then(|| (t.id, e.matches.clone(), e.priority));
        let extras = ekey
            .as_ref()
            .and_then(|k| shadow.entries.get(k).copied())
            .unwrap_or_default();
        if (te.controller_metadata != 0 && te.controller_metadata != extras.controller_metadata)
            || (te.idle_timeout_ns != 0 && te.idle_timeout_ns as u64 != extras.idle_timeout_ns)
        {
            continue;
        }
        let mut pe = entry_to_proto(info, t, e);
        if let Some(os) = ekey.as_ref().and_then(|k| shadow.one_shots.get(k)) {
            // A one shot reads back as written (§9.2.3).
            pe.action = super::oneshot::read_action(&os.set);
        }
        pe.idle_timeout_ns = extras.idle_timeout_ns as i64;
        pe.controller_metadata = extras.controller_metadata;
        if te.counter_data.is_some() && t.direct_counter.is_some() {
            pe.counter_data = row.counter.map(counter_to_proto);
        }
        if te.meter_config.is_some() && t.direct_meter.is_some() {
            pe.meter_config = ekey
                .as_ref()
                .and_then(|k| shadow.direct_meters.get(k))
                .map(meter_to_proto);
        }
        if te.time_since_last_hit.is_some() && t.idle_timeout {
            pe.time_since_last_hit = row.last_hit.map(|hit| pb::table_entry::IdleTimeout {
                elapsed_ns: now_ns.saturating_sub(hit) as i64,
            });
        }
        out.push(entity(E::TableEntry(pe)));
    }
}

/// Rows read a page at a time are in handle order; a read reports them
/// in insertion order.
fn insertion_order(rows: &mut [EntryRow]) {
    rows.sort_unstable_by_key(|r| r.seq);
}

/// Table entries selected by `te`, optionally with their direct counters,
/// read in one go (see [`plan_table_read`] for reads in steps).
fn table_entries(
    rt: &dyn RuntimeApi,
    cx: &ReadContext,
    te: &pb::TableEntry,
    out: &mut Vec<pb::Entity>,
) -> Result<(), P4Error> {
    for plan in plan_table_read(cx.info, te)? {
        match plan {
            TablePlan::Default(t) => out.push(default_entity(
                cx.info,
                &cx.shadow,
                t,
                &rt.table_default(t.id)?,
            )),
            TablePlan::Entries(q) => {
                let mut rows = Vec::new();
                let mut from = Some(0);
                while let Some(f) = from {
                    let (page, next) = rt.table_entries_page(q.table.id, f, usize::MAX)?;
                    rows.extend(page);
                    from = next;
                }
                insertion_order(&mut rows);
                rows_to_entities(cx.info, &cx.shadow, te, &q, &rows, cx.now_ns, out);
            }
        }
    }
    Ok(())
}

/// For a direct counter or meter read naming a table: that table must
/// have the resource (`has`), else INVALID_ARGUMENT.
fn direct_resource_table(
    cx: &ReadContext,
    te: &pb::TableEntry,
    what: &str,
    has: impl Fn(&TableInfo) -> bool,
) -> Result<(), P4Error> {
    if te.table_id == 0 {
        return Ok(());
    }
    let t = table(
        cx.info,
        te.table_id,
        &format!("{what}.table_entry.table_id"),
    )?;
    if has(t) {
        Ok(())
    } else {
        Err(P4Error::invalid(
            format!("{what}.table_entry.table_id"),
            format!(
                "{} has no {}",
                t.name,
                what.trim_end_matches("_entry").replace('_', " ")
            ),
        ))
    }
}

/// A direct resource read naming one entry (its match) finds it, or is
/// NOT_FOUND (§9.3.1, §9.4.1).
fn entry_found(te: &pb::TableEntry, found: &[pb::Entity], what: &str) -> Result<(), P4Error> {
    if te.table_id != 0 && !te.r#match.is_empty() && found.is_empty() {
        return Err(P4Error::new(
            tonic::Code::NotFound,
            format!(
                "{what}.table_entry: no such entry in table {:#x}",
                te.table_id
            ),
        ));
    }
    Ok(())
}

fn index_range(
    index: Option<&pb::Index>,
    size: u32,
    field: &str,
) -> Result<std::ops::Range<u32>, P4Error> {
    match index {
        None => Ok(0..size),
        Some(i) if i.index >= 0 && i.index < i64::from(size) => {
            Ok(i.index as u32..i.index as u32 + 1)
        }
        Some(i) if i.index < 0 => Err(P4Error::invalid(
            field,
            format!("negative index {}", i.index),
        )),
        Some(i) => Err(P4Error::new(
            tonic::Code::OutOfRange,
            format!("{field}: index {} out of range 0..{size}", i.index),
        )),
    }
}

/// The entities one request entity (the `n`-th of the request) selects,
/// appended to `out` (before the role filter, [`retain_role`]).
pub fn read_one(
    rt: &dyn RuntimeApi,
    pre: Option<&Pre>,
    cx: &ReadContext,
    n: usize,
    ent: &pb::Entity,
    out: &mut Vec<pb::Entity>,
) -> Result<(), P4Error> {
    {
        let Some(kind) = ent.entity.as_ref() else {
            return Err(P4Error::invalid(format!("entities[{n}]"), "empty entity"));
        };
        match kind {
            E::TableEntry(te) => table_entries(rt, cx, te, out)?,
            E::ActionProfileMember(m) => {
                // One-shot entries' members are not the client's (§9.2.3).
                let hidden = cx.shadow.hidden_by_profile();
                for p in cx.info.action_profiles {
                    if m.action_profile_id != 0 && m.action_profile_id != p.id {
                        continue;
                    }
                    let hidden = hidden.get(&p.id).map(|h| &h.0);
                    for (id, call) in rt.members(p.id)? {
                        if hidden.is_some_and(|h| h.contains(&id)) {
                            continue;
                        }
                        if m.member_id == 0 || m.member_id == id {
                            out.push(entity(E::ActionProfileMember(pb::ActionProfileMember {
                                action_profile_id: p.id,
                                member_id: id,
                                action: Some(super::translate::action_call_to_proto(
                                    cx.info, &call,
                                )),
                            })));
                        }
                    }
                }
                if m.action_profile_id != 0
                    && !cx
                        .info
                        .action_profiles
                        .iter()
                        .any(|p| p.id == m.action_profile_id)
                {
                    return Err(P4Error::invalid(
                        "action_profile_member.action_profile_id",
                        format!("unknown action profile id {:#x}", m.action_profile_id),
                    ));
                }
            }
            E::ActionProfileGroup(g) => {
                if g.action_profile_id != 0
                    && !cx
                        .info
                        .action_profiles
                        .iter()
                        .any(|p| p.id == g.action_profile_id)
                {
                    return Err(P4Error::invalid(
                        "action_profile_group.action_profile_id",
                        format!("unknown action profile id {:#x}", g.action_profile_id),
                    ));
                }
                let hidden = cx.shadow.hidden_by_profile();
                for p in cx
                    .info
                    .action_profiles
                    .iter()
                    .filter(|p| p.selector.is_some())
                {
                    if g.action_profile_id != 0 && g.action_profile_id != p.id {
                        continue;
                    }
                    let hidden = hidden.get(&p.id).map(|h| &h.1);
                    for (id, members) in rt.groups(p.id)? {
                        if hidden.is_some_and(|h| h.contains(&id)) {
                            continue;
                        }
                        if g.group_id == 0 || g.group_id == id {
                            out.push(entity(E::ActionProfileGroup(pb::ActionProfileGroup {
                                action_profile_id: p.id,
                                group_id: id,
                                // A watched group as written (the runtime
                                // holds the members whose port is up).
                                members: match cx.shadow.watched.get(&(p.id, id)) {
                                    Some(all) => all.iter().map(super::watch::to_proto).collect(),
                                    None => members
                                        .iter()
                                        .map(|&(member_id, weight)| {
                                            pb::action_profile_group::Member {
                                                member_id,
                                                weight: weight as i32,
                                                ..Default::default()
                                            }
                                        })
                                        .collect(),
                                },
                                // Read-write symmetry (§8.3): as inserted.
                                max_size: cx
                                    .shadow
                                    .group_max_size
                                    .get(&(p.id, id))
                                    .copied()
                                    .unwrap_or(0),
                            })));
                        }
                    }
                }
            }
            E::CounterEntry(c) => {
                if c.counter_id != 0
                    && !cx
                        .info
                        .counters
                        .iter()
                        .any(|ci| ci.id == c.counter_id && ci.direct_table.is_none())
                {
                    return Err(P4Error::invalid(
                        "counter_entry.counter_id",
                        format!("unknown counter id {:#x}", c.counter_id),
                    ));
                }
                for ci in cx
                    .info
                    .counters
                    .iter()
                    .filter(|ci| ci.direct_table.is_none())
                {
                    if c.counter_id != 0 && c.counter_id != ci.id {
                        continue;
                    }
                    for i in index_range(c.index.as_ref(), ci.size, "counter_entry.index")? {
                        let d = rt.counter_read(ci.id, i)?;
                        out.push(entity(E::CounterEntry(pb::CounterEntry {
                            counter_id: ci.id,
                            index: Some(pb::Index {
                                index: i64::from(i),
                            }),
                            data: Some(counter_to_proto(d)),
                        })));
                    }
                }
            }
            E::DirectCounterEntry(d) => {
                let te = d.table_entry.clone().unwrap_or_default();
                direct_resource_table(cx, &te, "direct_counter_entry", |t| {
                    t.direct_counter.is_some()
                })?;
                super::write::no_default_entry(&te, "direct_counter_entry")?;
                let mut entries = Vec::new();
                let te_all = pb::TableEntry {
                    counter_data: Some(Default::default()),
                    ..te.clone()
                };
                table_entries(rt, cx, &te_all, &mut entries)?;
                entry_found(&te, &entries, "direct_counter_entry")?;
                for e in entries {
                    let Some(E::TableEntry(mut pe)) = e.entity else {
                        continue;
                    };
                    let Some(data) = pe.counter_data.take() else {
                        continue;
                    };
                    out.push(entity(E::DirectCounterEntry(pb::DirectCounterEntry {
                        table_entry: Some(pe),
                        data: Some(data),
                    })));
                }
            }
            E::MeterEntry(m) => {
                if m.counter_data.is_some() {
                    return Err(P4Error::unimplemented(
                        "meter_entry.counter_data (per-colour meter counters)",
                    ));
                }
                if m.meter_id != 0
                    && !cx
                        .info
                        .meters
                        .iter()
                        .any(|mi| mi.id == m.meter_id && mi.direct_table.is_none())
                {
                    return Err(P4Error::invalid(
                        "meter_entry.meter_id",
                        format!("unknown meter id {:#x}", m.meter_id),
                    ));
                }
                for mi in cx.info.meters.iter().filter(|mi| mi.direct_table.is_none()) {
                    if m.meter_id != 0 && m.meter_id != mi.id {
                        continue;
                    }
                    for i in index_range(m.index.as_ref(), mi.size, "meter_entry.index")? {
                        out.push(entity(E::MeterEntry(pb::MeterEntry {
                            meter_id: mi.id,
                            index: Some(pb::Index {
                                index: i64::from(i),
                            }),
                            config: cx.shadow.meters.get(&(mi.id, i)).map(meter_to_proto),
                            counter_data: None,
                        })));
                    }
                }
            }
            E::DirectMeterEntry(d) => {
                if d.counter_data.is_some() {
                    return Err(P4Error::unimplemented(
                        "direct_meter_entry.counter_data (per-colour meter counters)",
                    ));
                }
                let te = d.table_entry.clone().unwrap_or_default();
                direct_resource_table(cx, &te, "direct_meter_entry", |t| t.direct_meter.is_some())?;
                super::write::no_default_entry(&te, "direct_meter_entry")?;
                let mut entries = Vec::new();
                table_entries(rt, cx, &te, &mut entries)?;
                entry_found(&te, &entries, "direct_meter_entry")?;
                for e in entries {
                    let Some(E::TableEntry(pe)) = e.entity else {
                        continue;
                    };
                    let Some(t) = cx.info.table(pe.table_id) else {
                        continue;
                    };
                    if t.direct_meter.is_none() {
                        continue;
                    }
                    let key = key_from_proto(t, &pe.r#match)?;
                    let config = cx
                        .shadow
                        .direct_meters
                        .get(&(t.id, key, pe.priority))
                        .map(meter_to_proto);
                    out.push(entity(E::DirectMeterEntry(pb::DirectMeterEntry {
                        table_entry: Some(pe),
                        config,
                        counter_data: None,
                    })));
                }
            }
            E::RegisterEntry(r) => {
                if r.register_id != 0 && !cx.info.registers.iter().any(|ri| ri.id == r.register_id)
                {
                    return Err(P4Error::invalid(
                        "register_entry.register_id",
                        format!("unknown register id {:#x}", r.register_id),
                    ));
                }
                for ri in cx.info.registers {
                    if r.register_id != 0 && r.register_id != ri.id {
                        continue;
                    }
                    for i in index_range(r.index.as_ref(), ri.size, "register_entry.index")? {
                        let v = rt.register_read(ri.id, i)?;
                        out.push(entity(E::RegisterEntry(pb::RegisterEntry {
                            register_id: ri.id,
                            index: Some(pb::Index {
                                index: i64::from(i),
                            }),
                            data: Some(proto::p4::v1::P4Data {
                                data: Some(proto::p4::v1::p4_data::Data::Bitstring(if ri.signed {
                                    encode_signed(v, ri.bitwidth)
                                } else {
                                    encode(v)
                                })),
                            }),
                        })));
                    }
                }
            }
            E::PacketReplicationEngineEntry(e) => {
                super::pre::read(pre, &cx.shadow.pre, e, out)?;
            }
            // The wildcard over all extern types reads nothing: this
            // switch has no architecture-specific externs (§9.9, §13.2).
            E::ExternEntry(x) if x.extern_type_id == 0 && x.extern_id == 0 => {}
            E::ExternEntry(_) => return Err(P4Error::unimplemented("extern_entry")),
            E::ValueSetEntry(v) => {
                if v.value_set_id != 0 && !cx.info.value_sets.iter().any(|i| i.id == v.value_set_id)
                {
                    return Err(P4Error::invalid(
                        "value_set_entry.value_set_id",
                        format!("unknown value set id {:#x}", v.value_set_id),
                    ));
                }
                for info in cx.info.value_sets {
                    if v.value_set_id != 0 && v.value_set_id != info.id {
                        continue;
                    }
                    let fields = super::write::value_set_fields(info);
                    let members = rt
                        .value_set_members(info.id)?
                        .into_iter()
                        .map(|(value, _)| {
                            // Split the concatenated member back into its
                            // fields, the last in the low bits.
                            let mut rest = value;
                            let mut r#match: Vec<pb::FieldMatch> = fields
                                .iter()
                                .rev()
                                .map(|&(id, width)| {
                                    let part = rest & mask(width);
                                    rest = if width >= 128 { 0 } else { rest >> width };
                                    pb::FieldMatch {
                                        field_id: id,
                                        field_match_type: Some(
                                            pb::field_match::FieldMatchType::Exact(
                                                pb::field_match::Exact {
                                                    value: encode(part),
                                                },
                                            ),
                                        ),
                                    }
                                })
                                .collect();
                            r#match.reverse();
                            pb::ValueSetMember { r#match }
                        })
                        .collect();
                    out.push(entity(E::ValueSetEntry(pb::ValueSetEntry {
                        value_set_id: info.id,
                        members,
                    })));
                }
            }
            E::DigestEntry(d) => {
                if d.digest_id != 0 && !cx.info.digests.iter().any(|i| i.id == d.digest_id) {
                    return Err(P4Error::invalid(
                        "digest_entry.digest_id",
                        format!("unknown digest id {:#x}", d.digest_id),
                    ));
                }
                for info in cx.info.digests {
                    if d.digest_id != 0 && d.digest_id != info.id {
                        continue;
                    }
                    if let Some(c) = cx.shadow.digests.get(&info.id) {
                        out.push(entity(E::DigestEntry(pb::DigestEntry {
                            digest_id: info.id,
                            config: Some(c.to_proto()),
                        })));
                    }
                }
            }
        }
    }
    Ok(())
}
