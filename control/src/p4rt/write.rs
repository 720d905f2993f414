//! The Write RPC's semantics: decoding updates into device operations
//! (validated against the P4Info before anything is submitted), and
//! applying a batch inside one device job with the requested atomicity
//! (spec "Batching and Ordering of Updates"):
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
//! Packet replication engine entries (multicast groups, clone sessions;
//! see [`super::pre`]) are operations like any other: they run in the same
//! job, roll back with the rest, and fail per update with UNIMPLEMENTED on
//! a device without an engine.

use std::collections::HashMap;

use p4_target::externs::MeterConfig;
use p4_target::info::ProgramInfo;
use p4_target::runtime::{ActionCall, CounterData, FieldMatch, RuntimeApi, TableEntry};
use proto::p4::v1 as pb;
use proto::p4::v1::update::Type as UpdateType;
use proto::p4::v1::write_request::Atomicity;
use tonic::Code;

use super::bytes::decode;
use super::digest::DigestConfig;
use super::error::P4Error;
use super::pre::{self, PreEcho, PreOp};
use super::translate::{
    action_call_from_proto, check_action_in_table, check_priority, entry_action_from_proto,
    key_from_proto, table,
};
use crate::device::DeviceState;

/// Key of one direct resource cell: table id, match list, priority.
pub type EntryKey = (u32, Vec<Option<FieldMatch>>, i32);

/// State the device cannot report back (meter configurations, how PRE
/// entries were encoded), kept by the service so reads can echo it and
/// rollbacks can restore it.
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
}

/// One device operation.
#[derive(Clone, Debug)]
pub enum Op {
    /// Accepted, changes nothing (default reset of a table another service owns).
    Noop,
    /// Insert a table entry, then optionally set its direct counter.
    TableInsert(u32, TableEntry, Option<CounterData>),
    /// Modify a table entry's action and cookie.
    TableModify(u32, TableEntry, Option<CounterData>),
    /// Delete the entry with these matches and priority.
    TableDelete(u32, Vec<Option<FieldMatch>>, i32),
    /// Set the default action.
    DefaultSet(u32, ActionCall),
    /// Reset the default action to the program's initial one.
    DefaultReset(u32),
    /// Insert (false) or modify (true) a member.
    MemberWrite(u32, u32, ActionCall, bool),
    /// Delete a member.
    MemberDelete(u32, u32),
    /// Insert (false) or modify (true) a group of (member, weight).
    GroupWrite(u32, u32, Vec<(u32, u32)>, bool),
    /// Delete a group.
    GroupDelete(u32, u32),
    /// Overwrite indirect counter cells.
    CounterWrite(u32, Vec<(u32, CounterData)>),
    /// Overwrite a direct counter.
    DirectCounterWrite(EntryKey, CounterData),
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
}

/// What decoding an update needs besides the request.
pub struct WriteContext<'a> {
    /// The program.
    pub info: &'static ProgramInfo,
    /// Tables owned by another service: id → owner.
    pub owned: &'a HashMap<u32, String>,
    /// Current meter configs (for inverse operations).
    pub shadow: &'a Shadow,
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

fn indices(index: Option<&pb::Index>, size: u32, field: &str) -> Result<Vec<u32>, P4Error> {
    match index {
        None => Ok((0..size).collect()),
        Some(i) if i.index >= 0 && i.index < i64::from(size) => Ok(vec![i.index as u32]),
        Some(i) => Err(P4Error::invalid(
            field,
            format!("index {} out of range 0..{size}", i.index),
        )),
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
    Ok(Some(MeterConfig {
        cir: c.cir as u64,
        cburst: c.cburst as u64,
        pir: c.pir as u64,
        pburst: c.pburst as u64,
    }))
}

fn counter_data(d: Option<&pb::CounterData>, field: &str) -> Result<CounterData, P4Error> {
    let d = d.cloned().unwrap_or_default();
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
            if ty == UpdateType::Delete {
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
        E::ActionProfileGroup(g) => {
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
            if ty == UpdateType::Delete {
                return Ok(Op::GroupDelete(p.id, g.group_id));
            }
            if g.max_size > 0 && g.members.len() > g.max_size as usize {
                return Err(P4Error::invalid(
                    "action_profile_group.members",
                    format!("{} members exceed max_size {}", g.members.len(), g.max_size),
                ));
            }
            let mut members: Vec<(u32, u32)> = Vec::with_capacity(g.members.len());
            for (i, m) in g.members.iter().enumerate() {
                if m.weight < 0 {
                    return Err(P4Error::invalid(
                        format!("action_profile_group.members[{i}].weight"),
                        format!("negative weight {}", m.weight),
                    ));
                }
                if members.iter().any(|&(id, _)| id == m.member_id) {
                    return Err(P4Error::invalid(
                        format!("action_profile_group.members[{i}].member_id"),
                        format!("duplicate member id {}", m.member_id),
                    ));
                }
                members.push((m.member_id, m.weight.max(1) as u32));
            }
            Ok(Op::GroupWrite(
                p.id,
                g.group_id,
                members,
                ty == UpdateType::Modify,
            ))
        }
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
            let data = counter_data(c.data.as_ref(), "counter_entry.data")?;
            let cells = indices(c.index.as_ref(), ci.size, "counter_entry.index")?
                .into_iter()
                .map(|i| (i, data))
                .collect();
            Ok(Op::CounterWrite(ci.id, cells))
        }
        E::DirectCounterEntry(d) => {
            only_modify(ty, "direct_counter_entry")?;
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
            let data = counter_data(d.data.as_ref(), "direct_counter_entry.data")?;
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
            let cells = indices(m.index.as_ref(), mi.size, "meter_entry.index")?
                .into_iter()
                .map(|i| (i, config, cx.shadow.meters.get(&(mi.id, i)).copied()))
                .collect();
            Ok(Op::MeterSet(mi.id, cells))
        }
        E::DirectMeterEntry(d) => {
            only_modify(ty, "direct_meter_entry")?;
            let key = entry_key(cx, d.table_entry.as_ref(), "direct_meter_entry.table_entry")?;
            if cx.info.table(key.0).and_then(|t| t.direct_meter).is_none() {
                return Err(P4Error::invalid(
                    "direct_meter_entry.table_entry.table_id",
                    "table has no direct meter",
                ));
            }
            let config = meter_config(d.config.as_ref(), "direct_meter_entry.config")?;
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
            let value = match r.data.as_ref().and_then(|d| d.data.as_ref()) {
                Some(proto::p4::v1::p4_data::Data::Bitstring(b)) => {
                    decode(b, ri.bitwidth, "register_entry.data")?
                }
                _ => {
                    return Err(P4Error::invalid(
                        "register_entry.data",
                        "expected a bitstring",
                    ));
                }
            };
            let cells = indices(r.index.as_ref(), ri.size, "register_entry.index")?
                .into_iter()
                .map(|i| (i, value))
                .collect();
            Ok(Op::RegisterWrite(ri.id, cells))
        }
        E::PacketReplicationEngineEntry(e) => pre::pre_op(ty, e).map(Op::Pre),
        E::ExternEntry(_) => Err(P4Error::unimplemented("extern_entry")),
        E::ValueSetEntry(v) => value_set_op(cx, ty, v),
        E::DigestEntry(d) => digest_op(cx, ty, d),
    }
}

/// A whole new member list for a parser value set (spec: MODIFY only).
/// Our P4Info gives each set one EXACT match field (id 1) over its whole key.
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
    let mut members = Vec::with_capacity(v.members.len());
    for (i, m) in v.members.iter().enumerate() {
        let field = format!("value_set_entry.members[{i}].match");
        let [fm] = m.r#match.as_slice() else {
            return Err(P4Error::invalid(
                &field,
                "expected exactly one field (id 1)",
            ));
        };
        if fm.field_id != 1 {
            return Err(P4Error::invalid(
                &field,
                format!("unknown field id {}", fm.field_id),
            ));
        }
        let Some(pb::field_match::FieldMatchType::Exact(e)) = &fm.field_match_type else {
            return Err(P4Error::invalid(&field, "the match kind is EXACT"));
        };
        let value = decode(&e.value, info.bitwidth, &field)?;
        let member = (value, crate::p4rt::bytes::mask(info.bitwidth));
        if members.contains(&member) {
            return Err(P4Error::invalid(&field, "duplicate member"));
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

fn table_op(cx: &WriteContext<'_>, ty: UpdateType, te: &pb::TableEntry) -> Result<Op, P4Error> {
    let t = table(cx.info, te.table_id, "table_entry.table_id")?;
    let reset_default = te.is_default_action
        && ty == UpdateType::Modify
        && te.r#match.is_empty()
        && te.priority == 0
        && te.action.as_ref().and_then(|a| a.r#type.as_ref()).is_none();
    if reset_default && cx.owned.contains_key(&t.id) {
        // finsy's delete_all() resets the default entry of every table
        // without a const default. For a table another service owns, what
        // that service configured is P4Runtime's "initial" state, so the
        // reset is accepted and changes nothing.
        return Ok(Op::Noop);
    }
    if let Some(owner) = cx.owned.get(&t.id) {
        return Err(P4Error::new(
            Code::PermissionDenied,
            format!(
                "table_entry.table_id: {} is owned by the {owner} service; P4Runtime may read it but not write it",
                t.name
            ),
        ));
    }
    if te.is_default_action {
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
        if t.default_is_const {
            return Err(P4Error::new(
                Code::PermissionDenied,
                format!(
                    "table_entry.is_default_action: {} has a const default action",
                    t.name
                ),
            ));
        }
        return match te.action.as_ref().and_then(|a| a.r#type.as_ref()) {
            None => Ok(Op::DefaultReset(t.id)),
            Some(pb::table_action::Type::Action(a)) => {
                check_action_in_table(t, a.action_id, true, "table_entry.action.action_id")?;
                let call = action_call_from_proto(cx.info, a, "table_entry.action")?;
                Ok(Op::DefaultSet(t.id, call))
            }
            Some(_) => Err(P4Error::invalid(
                "table_entry.action",
                "the default entry takes a direct action",
            )),
        };
    }
    if t.is_const {
        return Err(P4Error::new(
            Code::PermissionDenied,
            format!("table_entry.table_id: {} has const entries", t.name),
        ));
    }
    let key = key_from_proto(t, &te.r#match).map_err(|e| e.context("table_entry"))?;
    check_priority(t, te.priority).map_err(|e| e.context("table_entry"))?;
    if ty == UpdateType::Delete {
        return Ok(Op::TableDelete(t.id, key, te.priority));
    }
    let action = entry_action_from_proto(cx.info, t, te.action.as_ref())
        .map_err(|e| e.context("table_entry"))?;
    let counter = match &te.counter_data {
        Some(_) if t.direct_counter.is_none() => {
            return Err(P4Error::invalid(
                "table_entry.counter_data",
                format!("{} has no direct counter", t.name),
            ));
        }
        Some(d) => Some(counter_data(Some(d), "table_entry.counter_data")?),
        None => None,
    };
    if te.meter_config.is_some() {
        return Err(P4Error::unimplemented(
            "table_entry.meter_config (use direct_meter_entry)",
        ));
    }
    if te.idle_timeout_ns != 0 && !t.idle_timeout {
        return Err(P4Error::invalid(
            "table_entry.idle_timeout_ns",
            format!("{} does not support idle timeout", t.name),
        ));
    }
    let entry = TableEntry {
        matches: key,
        priority: te.priority,
        action,
        metadata: te.metadata.clone(),
    };
    Ok(if ty == UpdateType::Insert {
        Op::TableInsert(t.id, entry, counter)
    } else {
        Op::TableModify(t.id, entry, counter)
    })
}

fn find_entry(
    rt: &dyn RuntimeApi,
    tid: u32,
    key: &[Option<FieldMatch>],
    prio: i32,
) -> Option<TableEntry> {
    rt.table_entries(tid)
        .ok()?
        .into_iter()
        .find(|e| e.matches == key && e.priority == prio)
}

/// The operation that undoes `op`, computed before `op` runs; `None` when
/// `op` will fail anyway (nothing to undo).
fn inverse(dev: &DeviceState<'_>, op: &Op) -> Option<Op> {
    let rt: &dyn RuntimeApi = &*dev.runtime;
    Some(match op {
        Op::Noop => Op::Noop,
        Op::Pre(p) => Op::Pre(pre::inverse(dev.pre.as_deref()?, p)?),
        Op::TableInsert(t, e, _) => Op::TableDelete(*t, e.matches.clone(), e.priority),
        Op::TableModify(t, e, c) => {
            let old = find_entry(rt, *t, &e.matches, e.priority)?;
            let old_c = c.and_then(|_| rt.direct_counter_read(*t, &e.matches, e.priority).ok());
            Op::TableModify(*t, old, old_c)
        }
        Op::TableDelete(t, k, p) => {
            let old = find_entry(rt, *t, k, *p)?;
            let c = rt.direct_counter_read(*t, k, *p).ok();
            Op::TableInsert(*t, old, c)
        }
        Op::DefaultSet(t, _) | Op::DefaultReset(t) => {
            Op::DefaultSet(*t, rt.table_default(*t).ok()?)
        }
        Op::MemberWrite(p, m, _, false) => Op::MemberDelete(*p, *m),
        Op::MemberWrite(p, m, _, true) | Op::MemberDelete(p, m) => {
            let old = rt.members(*p).ok()?.into_iter().find(|(id, _)| id == m)?.1;
            Op::MemberWrite(*p, *m, old, matches!(op, Op::MemberWrite(..)))
        }
        Op::GroupWrite(p, g, _, false) => Op::GroupDelete(*p, *g),
        Op::GroupWrite(p, g, _, true) | Op::GroupDelete(p, g) => {
            let old = rt.groups(*p).ok()?.into_iter().find(|(id, _)| id == g)?.1;
            Op::GroupWrite(*p, *g, old, matches!(op, Op::GroupWrite(..)))
        }
        Op::CounterWrite(c, cells) => Op::CounterWrite(
            *c,
            cells
                .iter()
                .map(|&(i, _)| Some((i, rt.counter_read(*c, i).ok()?)))
                .collect::<Option<_>>()?,
        ),
        Op::DirectCounterWrite(k, _) => {
            Op::DirectCounterWrite(k.clone(), rt.direct_counter_read(k.0, &k.1, k.2).ok()?)
        }
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

/// Runs one operation on the device.
pub fn apply_op(dev: &mut DeviceState<'_>, op: &Op) -> Result<(), P4Error> {
    let rt: &mut dyn RuntimeApi = &mut *dev.runtime;
    match op {
        Op::Noop | Op::DigestSet(..) => {}
        Op::Pre(p) => {
            let Some(engine) = dev.pre.as_deref_mut() else {
                return Err(P4Error::unimplemented(
                    "packet_replication_engine_entry (this device has no PRE)",
                ));
            };
            pre::apply(engine, dev.ports, p)?;
        }
        Op::TableInsert(t, e, c) => {
            rt.table_insert(*t, e.clone())?;
            if let Some(c) = c {
                rt.direct_counter_write(*t, &e.matches, e.priority, *c)?;
            }
        }
        Op::TableModify(t, e, c) => {
            rt.table_modify(*t, e.clone())?;
            if let Some(c) = c {
                rt.direct_counter_write(*t, &e.matches, e.priority, *c)?;
            }
        }
        Op::TableDelete(t, k, p) => rt.table_delete(*t, k, *p)?,
        Op::DefaultSet(t, a) => rt.table_set_default(*t, a.clone())?,
        Op::DefaultReset(t) => rt.table_reset_default(*t)?,
        Op::MemberWrite(p, m, a, modify) => rt.member_write(*p, *m, a.clone(), *modify)?,
        Op::MemberDelete(p, m) => rt.member_delete(*p, *m)?,
        Op::GroupWrite(p, g, ms, modify) => rt.group_write(*p, *g, ms, *modify)?,
        Op::GroupDelete(p, g) => rt.group_delete(*p, *g)?,
        Op::CounterWrite(c, cells) => {
            for &(i, d) in cells {
                rt.counter_write(*c, i, d)?;
            }
        }
        Op::DirectCounterWrite(k, d) => rt.direct_counter_write(k.0, &k.1, k.2, *d)?,
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

/// Applies a decoded batch with `atomicity`; one result per update.
pub fn apply_batch(
    dev: &mut DeviceState<'_>,
    ops: &[Result<Op, P4Error>],
    atomicity: Atomicity,
) -> Vec<Result<(), P4Error>> {
    if atomicity == Atomicity::ContinueOnError {
        return ops
            .iter()
            .map(|op| op.clone().and_then(|op| apply_op(dev, &op)))
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
    let mut undo: Vec<Option<Op>> = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let Ok(op) = op else {
            unreachable!("checked above")
        };
        let inv = inverse(dev, op);
        if let Err(e) = apply_op(dev, op) {
            for u in undo.iter().rev().flatten() {
                if let Err(ue) = apply_op(dev, u) {
                    tracing::error!(error = %ue, "rollback step failed");
                }
            }
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
        undo.push(inv);
    }
    ops.iter().map(|_| Ok(())).collect()
}
