//! One-shot action selector programming (spec §9.2.3 "One Shot Action
//! Selector Programming"): a table entry of a selector table whose action
//! is an `ActionProfileActionSet` is programmed as members, a group and
//! the entry pointing at the group, all in one update.
//!
//! Contract:
//! * The members and the group get ids the client never sees (taken from
//!   [`Shadow::next_hidden`] upwards, skipping ids in use); reads return
//!   the entry with the action set as written (§9.2.3: never desugared)
//!   and leave the hidden members and groups out.
//! * A selector is programmed either with one shots or with members and
//!   groups (§9.2.3): an action set for a profile that has client members
//!   or groups, and a member, group or member/group entry for a profile
//!   with one-shot entries, are INVALID_ARGUMENT.
//! * Each action must be a table action (INVALID_ARGUMENT, or
//!   PERMISSION_DENIED outside its scope), with a weight > 0 (§9.2.3); with
//!   `sum_of_members` there are at most `max_group_size` actions each of at
//!   most `max_member_weight`, with `sum_of_weights` the weights add up to
//!   at most `max_group_size` (INVALID_ARGUMENT otherwise); an empty set is
//!   INVALID_ARGUMENT. Watch ports work as a group member's do
//!   ([`super::watch`]).
//! * The expansion is one [`Op::Seq`]: members, group, entry (and, for a
//!   MODIFY or DELETE, the old group and members after the entry), plus an
//!   [`Op::OneShotMark`] that records the set in the shadow. The sequence
//!   runs and rolls back like one operation.

use std::collections::{BTreeSet, HashMap};

use p4_target::info::TableInfo;
use p4_target::runtime::{EntryAction, RuntimeApi};
use p4_target::table::profile::MAX_GROUP_WEIGHT;
use proto::p4::v1 as pb;
use tonic::Code;

use super::error::P4Error;
use super::translate::{action_call_from_proto, check_action_in_table};
use super::watch::{Watch, WatchedMember, decode_watch};
use super::write::{EntryKey, GroupWrite, Op, Shadow, WriteContext};

/// A one-shot entry: the action set as written and what it became.
#[derive(Clone, Debug, PartialEq)]
pub struct OneShot {
    /// The action set, as read back.
    pub set: pb::ActionProfileActionSet,
    /// The action profile (selector).
    pub profile: u32,
    /// The hidden group.
    pub group: u32,
    /// The hidden members, in action order.
    pub members: Vec<u32>,
}

/// Records (or with `new: None` forgets) a one-shot entry in the shadow;
/// `check` makes it first verify that the profile has no client members
/// or groups (ids outside the hidden ones listed).
#[derive(Clone, Debug)]
pub struct OneShotMark {
    /// The entry.
    pub key: EntryKey,
    /// After the update.
    pub new: Option<OneShot>,
    /// Before the update (for rollback).
    pub old: Option<OneShot>,
    /// (profile, hidden member ids, hidden group ids) to check against.
    pub check: Option<(u32, BTreeSet<u32>, BTreeSet<u32>)>,
}

impl OneShotMark {
    /// The mark that undoes this one.
    pub fn inverse(&self) -> OneShotMark {
        OneShotMark {
            key: self.key.clone(),
            new: self.old.clone(),
            old: self.new.clone(),
            check: None,
        }
    }

    /// The device-side part: the mixing check (§9.2.3).
    pub fn apply(&self, rt: &dyn RuntimeApi) -> Result<(), P4Error> {
        let Some((profile, members, groups)) = &self.check else {
            return Ok(());
        };
        let client_member = rt
            .members(*profile)?
            .into_iter()
            .any(|(m, _)| !members.contains(&m));
        let client_group = rt
            .groups(*profile)
            .unwrap_or_default()
            .into_iter()
            .any(|(g, _)| !groups.contains(&g));
        if client_member || client_group {
            return Err(mixing(
                *profile,
                "it has members or groups written by the client",
            ));
        }
        Ok(())
    }
}

fn mixing(profile: u32, why: &str) -> P4Error {
    P4Error::invalid(
        "table_entry.action.action_profile_action_set",
        format!(
            "action profile {profile:#x} is programmed with members and groups: no one-shot entries ({why}; §9.2.3)"
        ),
    )
}

impl Shadow {
    /// The hidden member and group ids of one-shot entries of `profile`.
    pub fn hidden(&self, profile: u32) -> (BTreeSet<u32>, BTreeSet<u32>) {
        let mut members = BTreeSet::new();
        let mut groups = BTreeSet::new();
        for os in self.one_shots.values().filter(|o| o.profile == profile) {
            members.extend(&os.members);
            groups.insert(os.group);
        }
        (members, groups)
    }

    /// Whether `profile` has one-shot entries.
    pub fn has_one_shots(&self, profile: u32) -> bool {
        self.one_shots.values().any(|o| o.profile == profile)
    }

    /// Hidden ids per profile, for reads that leave them out.
    pub fn hidden_by_profile(&self) -> HashMap<u32, (BTreeSet<u32>, BTreeSet<u32>)> {
        let mut out: HashMap<u32, (BTreeSet<u32>, BTreeSet<u32>)> = HashMap::new();
        for os in self.one_shots.values() {
            let e = out.entry(os.profile).or_default();
            e.0.extend(&os.members);
            e.1.insert(os.group);
        }
        out
    }
}

/// The client may not mix styles: a member, group or member/group entry
/// for `profile` is INVALID_ARGUMENT while it has one-shot entries.
pub fn check_explicit(cx: &WriteContext<'_>, profile: u32, field: &str) -> Result<(), P4Error> {
    if cx.shadow.has_one_shots(profile) {
        return Err(P4Error::invalid(
            field,
            format!(
                "action profile {profile:#x} is programmed with one-shot action sets: no members or groups (§9.2.3)"
            ),
        ));
    }
    Ok(())
}

/// Hidden ids for one expansion: the next free ones from the shadow's
/// counter and the batch's earlier allocations.
fn allocate(cx: &WriteContext<'_>, used: &BTreeSet<u32>) -> u32 {
    loop {
        let id = cx.next_hidden.get().max(1);
        cx.next_hidden.set(id.wrapping_add(1));
        if !used.contains(&id) {
            return id;
        }
    }
}

/// Expands an INSERT or MODIFY of entry `key` of selector table `t` whose
/// action is `set`: `entry_op` is the table operation with the action left
/// to fill in (a group). `old` is the entry's one-shot state, if any.
pub fn expand(
    cx: &WriteContext<'_>,
    t: &TableInfo,
    key: EntryKey,
    set: &pb::ActionProfileActionSet,
    old: Option<&OneShot>,
    entry_op: Op,
) -> Result<Op, P4Error> {
    const F: &str = "table_entry.action.action_profile_action_set";
    let Some(profile) = t
        .implementation
        .and_then(|p| cx.info.action_profiles.iter().find(|ap| ap.id == p))
        .filter(|ap| ap.selector.is_some())
    else {
        return Err(P4Error::invalid(
            F,
            format!("{} is not implemented by an action selector", t.name),
        ));
    };
    if set.action_selection_mode != 0 || set.size_semantics != 0 || set.group_action.is_some() {
        return Err(P4Error::unimplemented(format!(
            "{F}: action_selection_mode, size_semantics and group_action (P4Runtime 1.5 and later)"
        )));
    }
    if set.action_profile_actions.is_empty() {
        return Err(P4Error::invalid(
            F,
            "no actions (a one shot needs at least one)",
        ));
    }
    let limits = cx.profiles.get(&profile.id).copied().unwrap_or_default();
    let mut actions = Vec::with_capacity(set.action_profile_actions.len());
    for (i, a) in set.action_profile_actions.iter().enumerate() {
        let field = format!("{F}.action_profile_actions[{i}]");
        let action = a
            .action
            .as_ref()
            .ok_or_else(|| P4Error::invalid(format!("{field}.action"), "missing"))?;
        check_action_in_table(
            t,
            action.action_id,
            false,
            &format!("{field}.action.action_id"),
        )?;
        let call = action_call_from_proto(cx.info, action, &format!("{field}.action"))?;
        if a.weight <= 0 {
            return Err(P4Error::invalid(
                format!("{field}.weight"),
                format!("{} is not a valid weight (must be > 0)", a.weight),
            ));
        }
        if limits.sum_of_members
            && limits.max_member_weight > 0
            && a.weight > limits.max_member_weight
        {
            return Err(P4Error::invalid(
                format!("{field}.weight"),
                format!(
                    "{} exceeds max_member_weight {}",
                    a.weight, limits.max_member_weight
                ),
            ));
        }
        use pb::action_profile_action::WatchKind as A;
        use pb::action_profile_group::member::WatchKind as G;
        let watch = a.watch_kind.as_ref().map(|w| match w {
            A::Watch(p) => G::Watch(*p),
            A::WatchPort(b) => G::WatchPort(b.clone()),
        });
        let watch: Option<Watch> = decode_watch(watch.as_ref(), &field)?;
        actions.push((call, a.weight as u32, watch));
    }
    let total: u64 = actions.iter().map(|&(_, w, _)| u64::from(w)).sum();
    if limits.max_group_size > 0 {
        let size = if limits.sum_of_members {
            actions.len() as u64
        } else {
            total
        };
        if size > limits.max_group_size as u64 {
            return Err(P4Error::invalid(
                F,
                format!(
                    "size {size} exceeds the selector's max_group_size {}",
                    limits.max_group_size
                ),
            ));
        }
    }
    if total > u64::from(MAX_GROUP_WEIGHT) {
        return Err(P4Error::new(
            Code::ResourceExhausted,
            format!("{F}: total weight {total} exceeds this switch's {MAX_GROUP_WEIGHT}"),
        ));
    }

    let (hidden_members, hidden_groups) = cx.shadow.hidden(profile.id);
    let used: BTreeSet<u32> = hidden_members.union(&hidden_groups).copied().collect();
    let mut ops = Vec::with_capacity(actions.len() + 4);
    let mut members = Vec::with_capacity(actions.len());
    for (call, ..) in &actions {
        let m = allocate(cx, &used);
        ops.push(Op::MemberWrite(profile.id, m, call.clone(), false));
        members.push(m);
    }
    let group = allocate(cx, &used);
    ops.push(Op::GroupWrite(GroupWrite {
        profile: profile.id,
        group,
        members: members
            .iter()
            .zip(&actions)
            .map(|(&member, &(_, weight, watch))| WatchedMember {
                member,
                weight,
                watch,
            })
            .collect(),
        modify: false,
        max_size: 0,
        old: None,
    }));
    ops.push(with_group(entry_op, group));
    if let Some(old) = old {
        ops.extend(release(old));
    }
    let new = OneShot {
        set: set.clone(),
        profile: profile.id,
        group,
        members,
    };
    let mark = OneShotMark {
        key,
        new: Some(new),
        old: old.cloned(),
        check: Some((profile.id, hidden_members, hidden_groups)),
    };
    // The mixing check runs first.
    ops.insert(0, Op::OneShotMark(mark));
    Ok(Op::Seq(ops))
}

/// A DELETE (or a MODIFY to a plain action) of a one-shot entry: the
/// entry operation, then its hidden group and members go.
pub fn remove(key: EntryKey, old: &OneShot, entry_op: Op) -> Op {
    let mut ops = vec![entry_op];
    ops.extend(release(old));
    ops.push(Op::OneShotMark(OneShotMark {
        key,
        new: None,
        old: Some(old.clone()),
        check: None,
    }));
    Op::Seq(ops)
}

fn release(old: &OneShot) -> Vec<Op> {
    let mut ops = vec![Op::GroupDelete(old.profile, old.group, 0, None)];
    ops.extend(
        old.members
            .iter()
            .map(|&m| Op::MemberDelete(old.profile, m)),
    );
    ops
}

fn with_group(op: Op, group: u32) -> Op {
    match op {
        Op::TableInsert(mut w) => {
            w.entry.action = EntryAction::Group(group);
            Op::TableInsert(w)
        }
        Op::TableModify(mut w) => {
            w.entry.action = EntryAction::Group(group);
            w.keep_action = false;
            Op::TableModify(w)
        }
        other => other,
    }
}

/// The action a read reports for a one-shot entry.
pub fn read_action(set: &pb::ActionProfileActionSet) -> Option<pb::TableAction> {
    Some(pb::TableAction {
        r#type: Some(pb::table_action::Type::ActionProfileActionSet(set.clone())),
    })
}
