//! Action profiles and action selectors (P4Runtime `ActionProfileMember`,
//! `ActionProfileGroup`; v1model `action_profile`, `action_selector`).
//!
//! Contract:
//! - Members map an id to an [`ActionCall`]; groups (selectors only) map an
//!   id to `(member id, weight)` pairs. A weight of 0 — what a client that
//!   leaves the field unset sends — counts as 1.
//! - References are counted: a member used by a group or a table entry, or a
//!   group used by an entry, cannot be deleted ([`RuntimeError::InUse`]); a
//!   group or entry naming a member or group that is not there is
//!   [`RuntimeError::MissingRef`].
//! - [`ActionProfile::select`] picks `flat[hash % slots]` from a flat array
//!   in which each member holds a share of slots proportional to its weight:
//!   O(1), no allocation.
//! - A group written afresh gets `slots = total_weight · k` (the smallest
//!   multiple of the total weight ≥ [`GROUP_SLOTS`]) laid out as the
//!   weighted member list repeated, so `flat[hash % slots]` is the member
//!   `hash % total_weight` picks: bmv2's choice, which STF tests expect.
//! - Flow stability (resilient hashing): a modified group keeps its slot
//!   count while its total weight fits, keeps every slot whose member is
//!   still in the group and still has quota left (shares proportional to
//!   weight, largest-remainder rounding) and reassigns only the rest.
//!   Removing a member moves only that member's flows; adding one moves only
//!   the flows it takes over.
//! - A group's total weight is capped at [`MAX_GROUP_WEIGHT`] so the flat
//!   array stays small.
//!
//! Validation of a member's action against the tables sharing the profile
//! is done by the runtime, which knows those tables.

use std::collections::BTreeMap;

use crate::info::ActionProfileInfo;
use crate::runtime::{ActionCall, EntryAction, RuntimeError};

/// Largest total weight of a group.
pub const MAX_GROUP_WEIGHT: u32 = 1 << 16;

#[derive(Debug, Clone)]
struct Group {
    members: Vec<(u32, u32)>,
    flat: Box<[u32]>,
}

/// An action profile or selector.
#[derive(Debug)]
pub struct ActionProfile {
    /// Static description.
    pub info: &'static ActionProfileInfo,
    members: BTreeMap<u32, ActionCall>,
    groups: BTreeMap<u32, Group>,
    /// Uses of each member by groups and table entries.
    member_refs: BTreeMap<u32, u32>,
    /// Uses of each group by table entries.
    group_refs: BTreeMap<u32, u32>,
}

/// Minimum number of selection slots of a group.
pub const GROUP_SLOTS: usize = 1024;

/// Slots each member gets: proportional to weight, remainders to the
/// members with the largest fractional parts (ties: listing order).
fn quotas(members: &[(u32, u32)], slots: usize) -> BTreeMap<u32, u32> {
    let total: u64 = members.iter().map(|m| u64::from(m.1)).sum();
    let mut shares: Vec<(u32, u64, u64)> = members
        .iter()
        .map(|&(m, w)| {
            let exact = slots as u64 * u64::from(w);
            (m, exact / total, exact % total)
        })
        .collect();
    let given: u64 = shares.iter().map(|s| s.1).sum();
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|&a, &b| shares[b].2.cmp(&shares[a].2));
    for &i in order.iter().take((slots as u64 - given) as usize) {
        shares[i].1 += 1;
    }
    shares.into_iter().map(|(m, q, _)| (m, q as u32)).collect()
}

/// A new flat selection array for `members`, keeping `old` slots where possible.
fn build_flat(old: Option<&[u32]>, members: &[(u32, u32)]) -> Box<[u32]> {
    let total: usize = members.iter().map(|m| m.1 as usize).sum();
    if total == 0 {
        return Box::new([]);
    }
    let Some(old) = old.filter(|o| o.len() >= total) else {
        // Fresh layout: the weighted list repeated (see the module doc).
        let weighted: Vec<u32> = members
            .iter()
            .flat_map(|&(m, w)| std::iter::repeat_n(m, w as usize))
            .collect();
        let slots = GROUP_SLOTS.div_ceil(total) * total;
        return weighted.iter().copied().cycle().take(slots).collect();
    };
    let slots = old.len();
    let mut quota = quotas(members, slots);
    let mut flat = vec![u32::MAX; slots];
    for (slot, &m) in flat.iter_mut().zip(old) {
        if let Some(q) = quota.get_mut(&m)
            && *q > 0
        {
            *slot = m;
            *q -= 1;
        }
    }
    let mut todo = members.iter().flat_map(|&(m, _)| {
        let left = quota.get(&m).copied().unwrap_or(0);
        std::iter::repeat_n(m, left as usize)
    });
    for slot in flat.iter_mut().filter(|s| **s == u32::MAX) {
        *slot = todo.next().unwrap_or(u32::MAX);
    }
    flat.into()
}

impl ActionProfile {
    /// An empty profile.
    pub fn new(info: &'static ActionProfileInfo) -> Self {
        ActionProfile {
            info,
            members: BTreeMap::new(),
            groups: BTreeMap::new(),
            member_refs: BTreeMap::new(),
            group_refs: BTreeMap::new(),
        }
    }

    /// The action of a member.
    #[inline]
    pub fn member(&self, member_id: u32) -> Option<&ActionCall> {
        self.members.get(&member_id)
    }

    /// Picks a member of `group_id` from `hash` (the selector hash over the
    /// table's `selector` key fields), honouring weights; `None` for an
    /// unknown or empty group.
    #[inline]
    pub fn select(&self, group_id: u32, hash: u64) -> Option<&ActionCall> {
        let g = self.groups.get(&group_id)?;
        if g.flat.is_empty() {
            return None;
        }
        let m = g.flat[(hash % g.flat.len() as u64) as usize];
        self.members.get(&m)
    }

    /// Number of selection slots of a group (see the module doc).
    pub fn group_slots(&self, group_id: u32) -> Option<usize> {
        self.groups.get(&group_id).map(|g| g.flat.len())
    }

    /// The member id `select` would pick.
    pub fn select_member_id(&self, group_id: u32, hash: u64) -> Option<u32> {
        let g = self.groups.get(&group_id)?;
        if g.flat.is_empty() {
            return None;
        }
        Some(g.flat[(hash % g.flat.len() as u64) as usize])
    }

    /// Inserts or (with `modify`) replaces a member. The caller has checked
    /// that the action may run in the profile's tables.
    pub fn write_member(
        &mut self,
        member_id: u32,
        action: ActionCall,
        modify: bool,
    ) -> Result<(), RuntimeError> {
        let exists = self.members.contains_key(&member_id);
        match (modify, exists) {
            (true, false) => {
                return Err(RuntimeError::NotFound {
                    table: self.info.name,
                });
            }
            (false, true) => {
                return Err(RuntimeError::AlreadyExists {
                    table: self.info.name,
                });
            }
            (false, false) if self.members.len() >= self.info.size as usize => {
                return Err(RuntimeError::Full {
                    table: self.info.name,
                    size: self.info.size,
                });
            }
            _ => {}
        }
        self.members.insert(member_id, action);
        Ok(())
    }

    /// Deletes a member (refused while a group or entry uses it).
    pub fn delete_member(&mut self, member_id: u32) -> Result<(), RuntimeError> {
        if !self.members.contains_key(&member_id) {
            return Err(RuntimeError::NotFound {
                table: self.info.name,
            });
        }
        if let Some(n) = self.member_refs.get(&member_id).filter(|&&n| n > 0) {
            return Err(RuntimeError::InUse(format!(
                "member {member_id} of {} is used by {n} group(s) or entries",
                self.info.name
            )));
        }
        self.members.remove(&member_id);
        Ok(())
    }

    /// Members: (member id, action), by id.
    pub fn members(&self) -> Vec<(u32, ActionCall)> {
        self.members
            .iter()
            .map(|(&id, a)| (id, a.clone()))
            .collect()
    }

    /// Inserts or (with `modify`) replaces a group.
    pub fn write_group(
        &mut self,
        group_id: u32,
        members: &[(u32, u32)],
        modify: bool,
    ) -> Result<(), RuntimeError> {
        if self.info.selector.is_none() {
            return Err(RuntimeError::Invalid {
                field: "group_id".into(),
                reason: format!(
                    "{} is an action profile without a selector: it has no groups",
                    self.info.name
                ),
            });
        }
        let exists = self.groups.contains_key(&group_id);
        match (modify, exists) {
            (true, false) => {
                return Err(RuntimeError::NotFound {
                    table: self.info.name,
                });
            }
            (false, true) => {
                return Err(RuntimeError::AlreadyExists {
                    table: self.info.name,
                });
            }
            _ => {}
        }
        let mut normalised = Vec::with_capacity(members.len());
        let mut total = 0u64;
        for (i, &(m, w)) in members.iter().enumerate() {
            if !self.members.contains_key(&m) {
                return Err(RuntimeError::MissingRef(format!(
                    "members[{i}].member_id: no member {m} in {}",
                    self.info.name
                )));
            }
            if members[..i].iter().any(|&(o, _)| o == m) {
                return Err(RuntimeError::Invalid {
                    field: format!("members[{i}].member_id"),
                    reason: format!("member {m} listed twice"),
                });
            }
            let w = w.max(1);
            total += w as u64;
            normalised.push((m, w));
        }
        if total > MAX_GROUP_WEIGHT as u64 {
            return Err(RuntimeError::Invalid {
                field: "members".into(),
                reason: format!("total weight {total} exceeds {MAX_GROUP_WEIGHT}"),
            });
        }
        let old = self.groups.get(&group_id).cloned();
        let flat = build_flat(old.as_ref().map(|g| &*g.flat), &normalised);
        if let Some(old) = &old {
            for &(m, _) in &old.members {
                self.unref_member(m);
            }
        }
        for &(m, _) in &normalised {
            *self.member_refs.entry(m).or_insert(0) += 1;
        }
        self.groups.insert(
            group_id,
            Group {
                members: normalised,
                flat,
            },
        );
        Ok(())
    }

    fn unref_member(&mut self, m: u32) {
        if let Some(n) = self.member_refs.get_mut(&m) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.member_refs.remove(&m);
            }
        }
    }

    /// Deletes a group (refused while an entry uses it).
    pub fn delete_group(&mut self, group_id: u32) -> Result<(), RuntimeError> {
        let Some(g) = self.groups.get(&group_id) else {
            return Err(RuntimeError::NotFound {
                table: self.info.name,
            });
        };
        if let Some(n) = self.group_refs.get(&group_id).filter(|&&n| n > 0) {
            return Err(RuntimeError::InUse(format!(
                "group {group_id} of {} is used by {n} entries",
                self.info.name
            )));
        }
        let members: Vec<u32> = g.members.iter().map(|m| m.0).collect();
        for m in members {
            self.unref_member(m);
        }
        self.groups.remove(&group_id);
        Ok(())
    }

    /// Groups: (group id, [(member id, weight)]), by id.
    pub fn groups(&self) -> Vec<(u32, Vec<(u32, u32)>)> {
        self.groups
            .iter()
            .map(|(&id, g)| (id, g.members.clone()))
            .collect()
    }

    /// Checks that an entry may point at `action` (the member or group exists).
    pub fn check_ref(&self, action: &EntryAction) -> Result<(), RuntimeError> {
        match *action {
            EntryAction::Member(m) if !self.members.contains_key(&m) => {
                Err(RuntimeError::MissingRef(format!(
                    "action.action_profile_member_id: no member {m} in {}",
                    self.info.name
                )))
            }
            EntryAction::Group(g) if !self.groups.contains_key(&g) => {
                Err(RuntimeError::MissingRef(format!(
                    "action.action_profile_group_id: no group {g} in {}",
                    self.info.name
                )))
            }
            _ => Ok(()),
        }
    }

    /// Records that a table entry now points at `action`.
    pub fn acquire(&mut self, action: &EntryAction) {
        match *action {
            EntryAction::Member(m) => *self.member_refs.entry(m).or_insert(0) += 1,
            EntryAction::Group(g) => *self.group_refs.entry(g).or_insert(0) += 1,
            EntryAction::Direct(_) => {}
        }
    }

    /// Records that a table entry no longer points at `action`.
    pub fn release(&mut self, action: &EntryAction) {
        match *action {
            EntryAction::Member(m) => self.unref_member(m),
            EntryAction::Group(g) => {
                if let Some(n) = self.group_refs.get_mut(&g) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        self.group_refs.remove(&g);
                    }
                }
            }
            EntryAction::Direct(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::HashAlgorithm;

    static SEL: ActionProfileInfo = ActionProfileInfo {
        id: 0x1100_0001,
        name: "ecmp",
        table_ids: &[],
        selector: Some((HashAlgorithm::Crc16, 16)),
        size: 8,
    };

    fn profile() -> ActionProfile {
        let mut p = ActionProfile::new(&SEL);
        for m in 1..=5 {
            p.write_member(m, ActionCall::new(1, &[m as u128]), false)
                .unwrap();
        }
        p
    }

    #[test]
    fn weights_shape_the_distribution() {
        let mut p = profile();
        p.write_group(10, &[(1, 1), (2, 3)], false).unwrap();
        let mut counts = [0u32; 6];
        for h in 0..4000u64 {
            let a = p
                .select(10, h.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 7)
                .unwrap();
            counts[a.params[0] as usize] += 1;
        }
        let share = counts[2] as f64 / 4000.0;
        assert!(
            (0.70..0.80).contains(&share),
            "member 2 gets ~3/4, got {share}"
        );
        assert_eq!(counts[1] + counts[2], 4000);
        assert!(p.select(11, 0).is_none());
    }

    #[test]
    fn replacing_a_member_moves_only_its_flows() {
        let mut p = profile();
        p.write_group(10, &[(1, 2), (2, 2), (3, 2)], false).unwrap();
        let before: Vec<u32> = (0..600)
            .map(|h| p.select_member_id(10, h).unwrap())
            .collect();
        p.write_group(10, &[(1, 2), (4, 2), (3, 2)], true).unwrap();
        let after: Vec<u32> = (0..600)
            .map(|h| p.select_member_id(10, h).unwrap())
            .collect();
        for (b, a) in before.iter().zip(&after) {
            if *b != 2 {
                assert_eq!(a, b, "flows of unchanged members stay");
            } else {
                assert_eq!(*a, 4);
            }
        }
    }

    #[test]
    fn references_block_deletes() {
        let mut p = profile();
        p.write_group(10, &[(1, 1)], false).unwrap();
        assert!(matches!(p.delete_member(1), Err(RuntimeError::InUse(_))));
        p.acquire(&EntryAction::Group(10));
        assert!(matches!(p.delete_group(10), Err(RuntimeError::InUse(_))));
        p.release(&EntryAction::Group(10));
        p.delete_group(10).unwrap();
        p.acquire(&EntryAction::Member(1));
        assert!(matches!(p.delete_member(1), Err(RuntimeError::InUse(_))));
        p.release(&EntryAction::Member(1));
        p.delete_member(1).unwrap();
        assert!(matches!(
            p.delete_member(1),
            Err(RuntimeError::NotFound { .. })
        ));
    }

    #[test]
    fn bad_groups_change_nothing() {
        let mut p = profile();
        p.write_group(10, &[(1, 1), (2, 1)], false).unwrap();
        let err = p.write_group(10, &[(1, 1), (9, 1)], true).unwrap_err();
        assert!(
            matches!(err, RuntimeError::MissingRef(ref m) if m.starts_with("members[1].member_id")),
            "{err}"
        );
        assert!(p.write_group(10, &[(1, 1), (1, 1)], true).is_err());
        assert!(
            p.write_group(10, &[(1, MAX_GROUP_WEIGHT + 1)], true)
                .is_err()
        );
        assert_eq!(p.groups(), vec![(10, vec![(1, 1), (2, 1)])]);
        // Member 2 is still referenced by the unchanged group.
        assert!(p.delete_member(2).is_err());
        assert!(matches!(
            p.write_member(6, ActionCall::new(1, &[]), false),
            Ok(())
        ));
        assert!(matches!(
            p.write_member(7, ActionCall::new(1, &[]), false),
            Ok(())
        ));
        assert!(matches!(
            p.write_member(8, ActionCall::new(1, &[]), false),
            Ok(())
        ));
        assert!(matches!(
            p.write_member(9, ActionCall::new(1, &[]), false),
            Err(RuntimeError::Full { .. })
        ));
    }

    proptest::proptest! {
        /// Any sequence of group rewrites: each member gets its weight's
        /// share of the slots (rounded), and a flow moves only if its old
        /// member lost slots (so removing a member moves only its flows).
        #[test]
        fn flat_arrays_honour_weights_and_keep_flows(
            steps in proptest::collection::vec(
                proptest::collection::btree_map(1u32..=5, 1u32..=4, 1..=5), 1..8)
        ) {
            let mut p = profile();
            type Snapshot = (Vec<u32>, Vec<(u32, u32)>);
            let mut old: Option<Snapshot> = None;
            for (i, group) in steps.iter().enumerate() {
                let members: Vec<(u32, u32)> = group.iter().map(|(&m, &w)| (m, w)).collect();
                p.write_group(10, &members, i > 0).unwrap();
                let total: u32 = members.iter().map(|m| m.1).sum();
                let slots = p.group_slots(10).unwrap() as u64;
                if i == 0 {
                    // A fresh group picks like bmv2: member `hash % total` of the weighted list.
                    let weighted: Vec<u32> = members.iter().flat_map(|&(m, w)| std::iter::repeat_n(m, w as usize)).collect();
                    for h in 0..3 * slots {
                        proptest::prop_assert_eq!(p.select_member_id(10, h).unwrap(), weighted[(h % u64::from(total)) as usize]);
                    }
                }
                let now: Vec<u32> = (0..slots).map(|h| p.select_member_id(10, h).unwrap()).collect();
                for &(m, w) in &members {
                    let got = now.iter().filter(|&&x| x == m).count() as u64;
                    let exact = slots * u64::from(w);
                    proptest::prop_assert!(
                        got == exact / u64::from(total) || got == exact.div_ceil(u64::from(total)),
                        "member {} weight {} of {}: {} slots", m, w, total, got
                    );
                }
                if let Some((before, _)) = &old
                    && before.len() == now.len()
                {
                    for (b, n) in before.iter().zip(&now) {
                        let old_count = before.iter().filter(|&&x| x == *b).count();
                        let new_count = now.iter().filter(|&&x| x == *b).count();
                        if new_count >= old_count {
                            proptest::prop_assert_eq!(b, n);
                        }
                    }
                }
                old = Some((now, members));
            }
        }
    }
}
