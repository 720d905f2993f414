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
//! - A profile that knows its program also keeps each group member's
//!   action as an action word (`word.rs`, laid out for the profile's first
//!   table) and, per slot, the member's position in the group:
//!   [`ActionProfile::select_word`] picks the same member as `select`, one
//!   load after the slot, without the member search.
//!
//! Validation of a member's action against the tables sharing the profile
//! is done by the runtime, which knows those tables.

use std::collections::BTreeMap;

use super::word;
use crate::info::{ActionProfileInfo, ProgramInfo, TableInfo};
use crate::runtime::{ActionCall, EntryAction, RuntimeError};

/// Largest total weight of a group.
pub const MAX_GROUP_WEIGHT: u32 = 1 << 16;

#[derive(Debug, Clone)]
struct Group {
    members: Vec<(u32, u32)>,
    flat: Box<[u32]>,
    /// `flat.len()`, for the pick's remainder.
    slots: Slots,
    /// Per slot of `flat`: its member's position in `members` (profiles
    /// that keep words only, else empty).
    picks: Box<[u16]>,
    /// Per position in `members`: the member's action word.
    words: Box<[u128]>,
}

/// The number of slots of a group, ready for `hash % slots` by two
/// multiplies instead of a division (Lemire, Kaser, Kurz, "Faster
/// remainder by direct computation", 2019): the pick is on the packet's
/// chain of dependent steps, and a division is its longest link.
#[derive(Debug, Clone, Copy)]
struct Slots {
    /// The number of slots (at most `MAX_GROUP_WEIGHT`).
    n: u32,
    /// `ceil(2^64 / n)` modulo 2^64 (0 for `n` = 0 or 1).
    reciprocal: u64,
}

impl Slots {
    fn new(n: usize) -> Slots {
        let n = u32::try_from(n).expect("a group has at most MAX_GROUP_WEIGHT slots");
        let reciprocal = (u64::MAX)
            .checked_div(u64::from(n))
            .map_or(0, |q| q.wrapping_add(1));
        Slots { n, reciprocal }
    }

    /// `hash % n`, or `None` for a group without slots. Exact for every
    /// `hash` below 2^32 (the CRC and checksum selector hashes); wider
    /// ones take the division.
    #[inline(always)]
    fn slot(self, hash: u64) -> Option<usize> {
        if self.n == 0 {
            return None;
        }
        let rem = match u32::try_from(hash) {
            Ok(h) => {
                let fraction = self.reciprocal.wrapping_mul(u64::from(h));
                ((u128::from(fraction) * u128::from(self.n)) >> 64) as u64
            }
            Err(_) => hash % u64::from(self.n),
        };
        Some(rem as usize)
    }
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
    /// The table and program member words are laid out for (profiles made
    /// [`ActionProfile::with_program`] only).
    words_for: Option<(&'static TableInfo, &'static ProgramInfo)>,
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
            words_for: None,
        }
    }

    /// An empty profile that keeps its group members' action words, laid
    /// out for its first table in `program` (see the module doc).
    pub fn with_program(info: &'static ActionProfileInfo, program: &'static ProgramInfo) -> Self {
        let table = info
            .table_ids
            .first()
            .and_then(|id| program.tables.iter().find(|t| t.id == *id));
        ActionProfile {
            words_for: table.map(|t| (t, program)),
            ..Self::new(info)
        }
    }

    /// The word of a member's action ([`word::NOT_INLINE`] without one).
    fn word_of(&self, action: &ActionCall) -> u128 {
        match self.words_for {
            Some((table, program)) => word::encode_call(table, program, action),
            None => u128::from(word::NOT_INLINE),
        }
    }

    /// [`ActionProfile::select`] as the member's action word:
    /// [`word::NOT_INLINE`] when the profile keeps no words, the action
    /// does not fit, or the group is unknown or empty (then `select` says
    /// which).
    #[inline]
    pub fn select_word(&self, group_id: u32, hash: u64) -> u128 {
        let picked = self.groups.get(&group_id).and_then(|g| {
            let position = g.picks.get(g.slots.slot(hash)?)?;
            g.words.get(usize::from(*position))
        });
        picked.copied().unwrap_or(u128::from(word::NOT_INLINE))
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
        self.members.get(&self.select_member_id(group_id, hash)?)
    }

    /// Number of selection slots of a group (see the module doc).
    pub fn group_slots(&self, group_id: u32) -> Option<usize> {
        self.groups.get(&group_id).map(|g| g.flat.len())
    }

    /// The member id `select` would pick.
    #[inline]
    pub fn select_member_id(&self, group_id: u32, hash: u64) -> Option<u32> {
        let g = self.groups.get(&group_id)?;
        g.flat.get(g.slots.slot(hash)?).copied()
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
        // Groups holding the member keep its word in step.
        let w = self.word_of(&action);
        for g in self.groups.values_mut() {
            for (slot, &(m, _)) in g.words.iter_mut().zip(&g.members) {
                if m == member_id {
                    *slot = w;
                }
            }
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
        let (picks, words) = if self.words_for.is_some() {
            let position: BTreeMap<u32, u16> = normalised
                .iter()
                .enumerate()
                .map(|(i, &(m, _))| (m, i as u16))
                .collect();
            let picks = flat
                .iter()
                .map(|m| position.get(m).copied().unwrap_or(u16::MAX))
                .collect();
            let words = normalised
                .iter()
                .map(|(m, _)| self.word_of(&self.members[m]))
                .collect();
            (picks, words)
        } else {
            (Box::default(), Box::default())
        };
        self.groups.insert(
            group_id,
            Group {
                members: normalised,
                slots: Slots::new(flat.len()),
                flat,
                picks,
                words,
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
    use crate::table::fixtures;

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

    static WORD_TABLE: TableInfo = TableInfo {
        implementation: Some(0x1100_0002),
        ..fixtures::table(1, "nexthop", &[], 8)
    };
    static WORD_SEL: ActionProfileInfo = ActionProfileInfo {
        id: 0x1100_0002,
        name: "ecmp",
        table_ids: &[0x0200_0001],
        selector: Some((HashAlgorithm::Crc16, 16)),
        size: 8,
    };
    static WORD_PROGRAM: ProgramInfo = ProgramInfo {
        name: "words",
        tables: std::slice::from_ref(&WORD_TABLE),
        actions: &[crate::info::ActionInfo {
            id: 1,
            name: "port",
            params: &[crate::info::ParamInfo {
                id: 1,
                name: "p",
                bitwidth: 16,
            }],
        }],
        action_profiles: std::slice::from_ref(&WORD_SEL),
        ..ProgramInfo::EMPTY
    };

    #[test]
    fn select_word_picks_what_select_picks() {
        let mut p = ActionProfile::with_program(&WORD_SEL, &WORD_PROGRAM);
        for m in 1..=5 {
            p.write_member(m, ActionCall::new(1, &[m as u128]), false)
                .unwrap();
        }
        let agree = |p: &ActionProfile, group: u32| {
            for h in (0..3000u64).map(|h| h.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
                let picked = word::decode(&WORD_TABLE, &WORD_PROGRAM, p.select_word(group, h));
                assert_eq!(picked, p.select(group, h).cloned().map(EntryAction::Direct));
            }
        };
        p.write_group(10, &[(1, 1), (2, 3), (5, 2)], false).unwrap();
        agree(&p, 10);
        // Resilient rewrite, a member changed in place, an unknown group.
        p.write_group(10, &[(1, 1), (4, 3), (5, 2)], true).unwrap();
        p.write_member(5, ActionCall::new(1, &[50]), true).unwrap();
        agree(&p, 10);
        agree(&p, 11);
        // Without its program a profile keeps no words.
        let mut p = profile();
        p.write_group(10, &[(1, 1)], false).unwrap();
        assert_eq!(p.select_word(10, 7), u128::from(word::NOT_INLINE));
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

    #[test]
    fn slots_take_the_remainder_of_every_hash() {
        assert_eq!(Slots::new(0).slot(7), None);
        for n in [1usize, 2, 3, 7, 1024, 1025, 3000, 65_535, 65_536] {
            let slots = Slots::new(n);
            for hash in [
                0,
                1,
                n as u64 - 1,
                n as u64,
                u64::from(u32::MAX),
                1 << 32,
                u64::MAX,
            ] {
                assert_eq!(
                    slots.slot(hash),
                    Some((hash % n as u64) as usize),
                    "{hash} % {n}"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn slots_match_the_division(n in 1usize..=MAX_GROUP_WEIGHT as usize, hash: u64, small: u32) {
            let slots = Slots::new(n);
            proptest::prop_assert_eq!(slots.slot(hash), Some((hash % n as u64) as usize));
            proptest::prop_assert_eq!(slots.slot(u64::from(small)), Some(small as usize % n));
        }

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
