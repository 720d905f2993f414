//! The v1model architecture's decisions: the packet replication engine
//! ([`Pre`]: multicast groups and clone sessions) and what bmv2's
//! `simple_switch` does with a packet at the end of ingress and of egress.
//! The switch that acts on them, with a traffic manager between ingress and
//! egress, is `dataplane::switch::Switch`; these functions are pure, so the
//! control plane (P4Runtime's PRE entities) and tests use them too.
//!
//! Spec: P4_16 v1model (`v1model.p4` comments on `standard_metadata_t`,
//! `clone`, `resubmit_preserving_field_list`,
//! `recirculate_preserving_field_list`, `truncate`, `mark_to_drop`) and the
//! packet flow of bmv2 `simple_switch` (`ingress_thread`, `egress_thread`).
//!
//! [`Pre::after_ingress`] turns the standard metadata at the end of ingress
//! into an [`IngressDecision`] (I2E clone request, then resubmit, multicast
//! copies, unicast copy or drop, in bmv2's order) and [`Pre::after_egress`]
//! does the same at the end of egress ([`EgressDecision`]: E2E clone, then
//! drop, recirculate or emit); [`prepare_egress`] sets up the standard
//! metadata of a copy entering egress. Nothing here allocates except the
//! caller's copy list and configuration calls; nothing reads a clock.

use std::collections::BTreeMap;

use crate::v1model::{CloneRequest, CloneType, DROP_PORT, StandardMetadata, instance_type};

/// How many resubmits one arriving packet may cause, and how many
/// recirculations and egress-to-egress clones a packet and its copies may
/// go through, before further ones are dropped (bmv2 has no bound; a
/// program that loops forever would hang it).
pub const MAX_EXTRA_PASSES: u32 = 16;

/// A clone (mirroring) session: where copies go. A clone of a packet
/// makes one copy per replica, each with the replica's port and
/// `egress_rid` (P4Runtime's `CloneSessionEntry` replicas; bmv2's
/// `mirroring_add` is one replica with rid 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloneSession {
    /// The copies, in delivery order.
    pub replicas: Vec<McReplica>,
    /// Class of service: the copies' `priority`.
    pub class_of_service: u8,
    /// Keep at most this many bytes of each copy on output.
    pub truncate_bytes: Option<u32>,
}

impl CloneSession {
    /// A session mirroring to `egress_port` (rid 0), bmv2's
    /// `mirroring_add SESSION PORT`.
    pub fn to_port(egress_port: u16) -> Self {
        CloneSession {
            replicas: vec![McReplica {
                port: egress_port,
                rid: 0,
            }],
            class_of_service: 0,
            truncate_bytes: None,
        }
    }
}

/// A multicast node: a replica id and its ports.
#[derive(Clone, Debug, PartialEq, Eq)]
struct McNode {
    rid: u16,
    ports: Vec<u16>,
}

/// One copy a multicast group makes: an egress port and the `egress_rid`
/// (P4Runtime's replica `instance`) the copy carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct McReplica {
    /// Egress port of the copy.
    pub port: u16,
    /// `egress_rid` of the copy.
    pub rid: u16,
}

/// A multicast group: its replicas in delivery order, and the CLI node
/// handles that contributed them (so a node is associated at most once).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct McGroup {
    nodes: Vec<u32>,
    replicas: Vec<McReplica>,
}

/// Errors of the replication-engine configuration calls.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PreError {
    /// `mc_mgrp_create` of a group that exists.
    #[error("multicast group {0} already exists")]
    GroupExists(u16),
    /// Group id 0 means "no multicast" in v1model.
    #[error("multicast group 0 is reserved (it means no multicast)")]
    GroupZero,
    /// Unknown group.
    #[error("no multicast group {0}")]
    NoSuchGroup(u16),
    /// Unknown node handle.
    #[error("no multicast node with handle {0}")]
    NoSuchNode(u32),
    /// A port outside the 9-bit port space.
    #[error("port {0} is out of range (0..=510)")]
    BadPort(u32),
    /// The same (port, rid) pair twice in one group.
    #[error("replica (port {}, rid {}) appears twice", .0.port, .0.rid)]
    DuplicateReplica(McReplica),
}

/// One copy the traffic manager must deliver to egress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EgressCopy {
    /// `egress_port` of the copy.
    pub port: u16,
    /// `egress_rid` of the copy (0 for unicast).
    pub rid: u16,
    /// `instance_type` of the copy in egress.
    pub instance_type: u32,
}

/// A clone to make: the session (its replicas are
/// [`Pre::clone_replicas`]) plus the preserved field list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloneCopy {
    /// Session id.
    pub session: u32,
    /// The session's class of service: the copies' `priority`.
    pub class_of_service: u8,
    /// The session's truncation of the copies.
    pub truncate_bytes: Option<u32>,
    /// Field list whose user metadata travels with the copy.
    pub field_list: Option<u8>,
    /// `INGRESS_CLONE` or `EGRESS_CLONE`.
    pub instance_type: u32,
}

impl CloneCopy {
    /// The copy of this clone that `replica` of its session delivers.
    pub fn to(&self, replica: McReplica) -> EgressCopy {
        EgressCopy {
            port: replica.port,
            rid: replica.rid,
            instance_type: self.instance_type,
        }
    }
}

/// What to do with the original packet at the end of ingress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IngressAction {
    /// Re-run ingress on the original bytes, preserving this field list.
    Resubmit {
        /// `@field_list` index.
        field_list: u8,
    },
    /// Deliver the copies written to the caller's vector (one for unicast,
    /// one per replica for multicast).
    Forward,
    /// Drop the packet: `egress_spec` is the drop port (511).
    Drop,
    /// Drop the packet: `mcast_grp` names a group that does not exist or
    /// has no replicas.
    EmptyGroup,
}

/// The architecture's decision at the end of ingress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IngressDecision {
    /// I2E clone to make first, if requested and the session exists.
    pub clone: Option<CloneCopy>,
    /// A clone was requested for a session that does not exist (count it).
    pub clone_missing: bool,
    /// What happens to the packet itself.
    pub action: IngressAction,
}

/// What to do with the packet at the end of egress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EgressAction {
    /// Deparse and transmit on `egress_port`.
    Emit,
    /// Deparse, then re-run the whole pipeline on the result, preserving
    /// this field list.
    Recirculate {
        /// `@field_list` index.
        field_list: u8,
    },
    /// Drop the packet (`mark_to_drop` in egress).
    Drop,
}

/// The architecture's decision at the end of egress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EgressDecision {
    /// E2E clone to make, if requested and the session exists.
    pub clone: Option<CloneCopy>,
    /// A clone was requested for a session that does not exist (count it).
    pub clone_missing: bool,
    /// What happens to the packet itself.
    pub action: EgressAction,
}

/// The packet replication engine: multicast groups and clone sessions,
/// configured as with bmv2's `simple_switch_CLI` (`mc_mgrp_create`,
/// `mc_node_create`, `mc_node_associate`, `mirroring_add`) or, as a
/// P4Runtime server does, by whole groups ([`Pre::mc_group_set`],
/// [`Pre::mc_group_delete`]) and sessions. Groups and sessions list in
/// ascending id order.
#[derive(Clone, Debug, Default)]
pub struct Pre {
    /// Nodes by handle (handles count from 0 in creation order).
    nodes: Vec<McNode>,
    /// Groups by id.
    groups: BTreeMap<u16, McGroup>,
    /// Clone sessions.
    sessions: BTreeMap<u32, CloneSession>,
}

fn check_port(port: u32) -> Result<u16, PreError> {
    if port >= DROP_PORT as u32 {
        Err(PreError::BadPort(port))
    } else {
        Ok(port as u16)
    }
}

impl Pre {
    /// An engine with no groups and no sessions.
    pub fn new() -> Self {
        Self::default()
    }

    /// `mc_mgrp_create GROUP`.
    pub fn mc_mgrp_create(&mut self, group: u16) -> Result<(), PreError> {
        if group == 0 {
            return Err(PreError::GroupZero);
        }
        if self.groups.contains_key(&group) {
            return Err(PreError::GroupExists(group));
        }
        self.groups.insert(group, McGroup::default());
        Ok(())
    }

    /// `mc_node_create RID PORT...`: returns the node handle.
    pub fn mc_node_create(&mut self, rid: u16, ports: &[u32]) -> Result<u32, PreError> {
        let checked = ports
            .iter()
            .map(|&p| check_port(p))
            .collect::<Result<Vec<_>, _>>()?;
        self.nodes.push(McNode {
            rid,
            ports: checked,
        });
        Ok(self.nodes.len() as u32 - 1)
    }

    /// `mc_node_associate GROUP HANDLE`: the node's ports join the group's
    /// replicas (once per node).
    pub fn mc_node_associate(&mut self, group: u16, node: u32) -> Result<(), PreError> {
        let n = self
            .nodes
            .get(node as usize)
            .ok_or(PreError::NoSuchNode(node))?;
        let g = self
            .groups
            .get_mut(&group)
            .ok_or(PreError::NoSuchGroup(group))?;
        if !g.nodes.contains(&node) {
            g.nodes.push(node);
            g.replicas
                .extend(n.ports.iter().map(|&port| McReplica { port, rid: n.rid }));
        }
        Ok(())
    }

    /// Creates `group`, or replaces all its replicas, in one step; returns
    /// the replicas it had before (`None` if it did not exist). Replicas
    /// are delivered in the order given. Refuses group 0, ports outside
    /// 0..=510 and a repeated (port, rid) pair, changing nothing.
    pub fn mc_group_set(
        &mut self,
        group: u16,
        replicas: &[McReplica],
    ) -> Result<Option<Vec<McReplica>>, PreError> {
        if group == 0 {
            return Err(PreError::GroupZero);
        }
        for (i, r) in replicas.iter().enumerate() {
            check_port(u32::from(r.port))?;
            if replicas[..i].contains(r) {
                return Err(PreError::DuplicateReplica(*r));
            }
        }
        let old = self.groups.insert(
            group,
            McGroup {
                nodes: Vec::new(),
                replicas: replicas.to_vec(),
            },
        );
        Ok(old.map(|g| g.replicas))
    }

    /// Removes `group`; returns its replicas, or `None` if it did not exist.
    pub fn mc_group_delete(&mut self, group: u16) -> Option<Vec<McReplica>> {
        self.groups.remove(&group).map(|g| g.replicas)
    }

    /// The replicas of `group`, if it exists.
    pub fn mc_group(&self, group: u16) -> Option<&[McReplica]> {
        self.groups.get(&group).map(|g| g.replicas.as_slice())
    }

    /// Every group with its replicas, by ascending id.
    pub fn mc_groups(&self) -> impl Iterator<Item = (u16, &[McReplica])> + '_ {
        self.groups
            .iter()
            .map(|(&id, g)| (id, g.replicas.as_slice()))
    }

    /// `mirroring_add SESSION PORT` (and its class of service /
    /// truncation); replaces an existing session.
    pub fn mirroring_add(&mut self, session: u32, config: CloneSession) -> Result<(), PreError> {
        for (i, r) in config.replicas.iter().enumerate() {
            check_port(u32::from(r.port))?;
            if config.replicas[..i].contains(r) {
                return Err(PreError::DuplicateReplica(*r));
            }
        }
        self.sessions.insert(session, config);
        Ok(())
    }

    /// Removes a clone session; returns whether it existed.
    pub fn mirroring_delete(&mut self, session: u32) -> bool {
        self.sessions.remove(&session).is_some()
    }

    /// The configuration of clone session `session`, if it exists.
    pub fn clone_session(&self, session: u32) -> Option<&CloneSession> {
        self.sessions.get(&session)
    }

    /// The replicas of clone session `session` (none for an unknown one).
    pub fn clone_replicas(&self, session: u32) -> &[McReplica] {
        self.sessions
            .get(&session)
            .map_or(&[][..], |s| s.replicas.as_slice())
    }

    /// Every clone session, by ascending id.
    pub fn clone_sessions(&self) -> impl Iterator<Item = (u32, &CloneSession)> + '_ {
        self.sessions.iter().map(|(&id, c)| (id, c))
    }

    /// Appends the replicas of `group` to `copies` (cleared first); empty
    /// for an unknown or empty group.
    pub fn replicate(&self, group: u16, copies: &mut Vec<EgressCopy>) {
        copies.clear();
        let Some(g) = self.groups.get(&group) else {
            return;
        };
        copies.extend(g.replicas.iter().map(|r| EgressCopy {
            port: r.port,
            rid: r.rid,
            instance_type: instance_type::REPLICATION,
        }));
    }

    fn clone_copy(&self, req: Option<CloneRequest>, kind: CloneType) -> (Option<CloneCopy>, bool) {
        match req {
            Some(r) if r.kind == kind => match self.sessions.get(&r.session) {
                Some(config) => (
                    Some(CloneCopy {
                        session: r.session,
                        class_of_service: config.class_of_service,
                        truncate_bytes: config.truncate_bytes,
                        field_list: r.field_list,
                        instance_type: match kind {
                            CloneType::IngressToEgress => instance_type::INGRESS_CLONE,
                            CloneType::EgressToEgress => instance_type::EGRESS_CLONE,
                        },
                    }),
                    false,
                ),
                None => (None, true),
            },
            _ => (None, false),
        }
    }

    /// The decision at the end of ingress, in bmv2's order: I2E clone,
    /// resubmit, multicast, drop, unicast. Copies to deliver are written to
    /// `copies` (cleared first) when the action is [`IngressAction::Forward`].
    pub fn after_ingress(
        &self,
        meta: &StandardMetadata,
        copies: &mut Vec<EgressCopy>,
    ) -> IngressDecision {
        copies.clear();
        let (clone, clone_missing) =
            self.clone_copy(meta.clone_request, CloneType::IngressToEgress);
        let action = if let Some(field_list) = meta.resubmit {
            IngressAction::Resubmit { field_list }
        } else if meta.mcast_grp != 0 {
            self.replicate(meta.mcast_grp, copies);
            if copies.is_empty() {
                IngressAction::EmptyGroup
            } else {
                IngressAction::Forward
            }
        } else if meta.egress_spec == DROP_PORT {
            IngressAction::Drop
        } else {
            // bmv2 sends every unicast copy, resubmitted or recirculated
            // ones too, to egress as NORMAL.
            copies.push(EgressCopy {
                port: meta.egress_spec,
                rid: 0,
                instance_type: instance_type::NORMAL,
            });
            IngressAction::Forward
        };
        IngressDecision {
            clone,
            clone_missing,
            action,
        }
    }

    /// The decision at the end of egress, in bmv2's order: E2E clone, drop,
    /// recirculate, emit.
    pub fn after_egress(&self, meta: &StandardMetadata) -> EgressDecision {
        let (clone, clone_missing) = self.clone_copy(meta.clone_request, CloneType::EgressToEgress);
        let action = if meta.egress_spec == DROP_PORT {
            EgressAction::Drop
        } else if let Some(field_list) = meta.recirculate {
            EgressAction::Recirculate { field_list }
        } else {
            EgressAction::Emit
        };
        EgressDecision {
            clone,
            clone_missing,
            action,
        }
    }
}

/// Sets up the standard metadata of a copy entering egress (bmv2
/// `egress_thread`): port, replica id, instance type, empty queues, the
/// egress timestamp, and `egress_spec` cleared.
pub fn prepare_egress(meta: &mut StandardMetadata, copy: &EgressCopy, now_ns: u64) {
    meta.egress_port = copy.port;
    meta.egress_rid = copy.rid;
    meta.instance_type = copy.instance_type;
    meta.egress_spec = 0;
    meta.enq_qdepth = 0;
    meta.deq_qdepth = 0;
    meta.enq_qdepth_bytes = 0;
    meta.deq_qdepth_bytes = 0;
    meta.deq_timedelta = 0;
    meta.enq_timestamp = (now_ns / 1000) as u32;
    meta.egress_global_timestamp = (now_ns / 1000) & crate::bits::mask(48) as u64;
    meta.now_ns = now_ns;
    meta.clone_request = None;
    meta.recirculate = None;
}

#[cfg(test)]
mod tests {
    //! The decisions and the engine's configuration; the switch that acts
    //! on them is tested in `dataplane::switch`.
    use super::*;

    #[test]
    fn pre_rejects_bad_configuration() {
        let mut pre = Pre::new();
        assert_eq!(pre.mc_mgrp_create(0), Err(PreError::GroupZero));
        pre.mc_mgrp_create(1).unwrap();
        assert_eq!(pre.mc_mgrp_create(1), Err(PreError::GroupExists(1)));
        assert_eq!(pre.mc_node_associate(1, 0), Err(PreError::NoSuchNode(0)));
        assert_eq!(pre.mc_node_create(1, &[511]), Err(PreError::BadPort(511)));
        let n = pre.mc_node_create(1, &[5]).unwrap();
        assert_eq!(pre.mc_node_associate(2, n), Err(PreError::NoSuchGroup(2)));
    }

    #[test]
    fn nodes_replicate_in_association_order_once_each() {
        let mut pre = Pre::new();
        pre.mc_mgrp_create(3).unwrap();
        let n0 = pre.mc_node_create(10, &[1, 2]).unwrap();
        let n1 = pre.mc_node_create(20, &[4]).unwrap();
        assert_eq!((n0, n1), (0, 1));
        pre.mc_node_associate(3, n1).unwrap();
        pre.mc_node_associate(3, n0).unwrap();
        pre.mc_node_associate(3, n0).unwrap();
        let r = |port, rid| McReplica { port, rid };
        assert_eq!(pre.mc_group(3), Some(&[r(4, 20), r(1, 10), r(2, 10)][..]));
    }

    #[test]
    fn whole_group_writes_replace_atomically_and_list_in_id_order() {
        let r = |port, rid| McReplica { port, rid };
        let mut pre = Pre::new();
        assert_eq!(pre.mc_group_set(7, &[r(2, 1), r(3, 1)]), Ok(None));
        assert_eq!(pre.mc_group_set(4, &[r(1, 0)]), Ok(None));
        // A bad replacement changes nothing.
        assert_eq!(
            pre.mc_group_set(7, &[r(5, 0), r(5, 0)]),
            Err(PreError::DuplicateReplica(r(5, 0)))
        );
        assert_eq!(
            pre.mc_group_set(7, &[r(511, 0)]),
            Err(PreError::BadPort(511))
        );
        assert_eq!(pre.mc_group_set(0, &[r(1, 0)]), Err(PreError::GroupZero));
        assert_eq!(pre.mc_group(7), Some(&[r(2, 1), r(3, 1)][..]));
        // Same port with two rids is two copies.
        assert_eq!(
            pre.mc_group_set(7, &[r(6, 2), r(6, 3)]),
            Ok(Some(vec![r(2, 1), r(3, 1)]))
        );
        let ids: Vec<u16> = pre.mc_groups().map(|(id, _)| id).collect();
        assert_eq!(ids, vec![4, 7]);
        assert_eq!(pre.mc_group_delete(7), Some(vec![r(6, 2), r(6, 3)]));
        assert_eq!(pre.mc_group_delete(7), None);
    }

    #[test]
    fn sessions_are_listed_and_replaced() {
        let mut pre = Pre::new();
        let s = CloneSession::to_port;
        pre.mirroring_add(9, s(1)).unwrap();
        pre.mirroring_add(3, s(2)).unwrap();
        pre.mirroring_add(9, s(4)).unwrap();
        assert_eq!(pre.clone_session(9), Some(&s(4)));
        let all: Vec<(u32, CloneSession)> = pre
            .clone_sessions()
            .map(|(id, c)| (id, c.clone()))
            .collect();
        assert_eq!(all, vec![(3, s(2)), (9, s(4))]);
        assert_eq!(pre.mirroring_add(1, s(511)), Err(PreError::BadPort(511)));
        // Several replicas, each (port, rid) once.
        let r = |port, rid| McReplica { port, rid };
        let two = CloneSession {
            replicas: vec![r(1, 1), r(2, 7)],
            ..s(1)
        };
        pre.mirroring_add(5, two).unwrap();
        assert_eq!(pre.clone_replicas(5), &[r(1, 1), r(2, 7)]);
        let dup = CloneSession {
            replicas: vec![r(1, 1), r(1, 1)],
            ..s(1)
        };
        assert_eq!(
            pre.mirroring_add(6, dup),
            Err(PreError::DuplicateReplica(r(1, 1)))
        );
        assert!(pre.mirroring_delete(3));
        assert_eq!(pre.clone_session(3), None);
    }

    #[test]
    fn decisions_follow_bmv2_order() {
        let mut pre = Pre::new();
        let mut copies = Vec::new();
        let mut meta = StandardMetadata::arriving(1, 64, 0);
        meta.egress_spec = 12;
        meta.instance_type = instance_type::RESUBMIT;
        let d = pre.after_ingress(&meta, &mut copies);
        assert_eq!(d.action, IngressAction::Forward);
        assert_eq!(
            copies,
            vec![EgressCopy {
                port: 12,
                rid: 0,
                instance_type: instance_type::NORMAL,
            }],
            "a unicast copy enters egress as NORMAL, as in bmv2"
        );
        // A missing session is reported; resubmit wins over forwarding.
        meta.clone_request = Some(CloneRequest {
            kind: CloneType::IngressToEgress,
            session: 4,
            field_list: None,
        });
        meta.resubmit = Some(2);
        let d = pre.after_ingress(&meta, &mut copies);
        assert_eq!(d.action, IngressAction::Resubmit { field_list: 2 });
        assert!(d.clone_missing && d.clone.is_none());
        assert!(copies.is_empty());
        meta.resubmit = None;
        meta.mcast_grp = 9;
        assert_eq!(
            pre.after_ingress(&meta, &mut copies).action,
            IngressAction::EmptyGroup
        );
        meta.mark_to_drop();
        assert_eq!(
            pre.after_ingress(&meta, &mut copies).action,
            IngressAction::Drop
        );

        let mut meta = StandardMetadata {
            recirculate: Some(1),
            ..Default::default()
        };
        assert_eq!(
            pre.after_egress(&meta).action,
            EgressAction::Recirculate { field_list: 1 }
        );
        // An E2E clone is made even when the packet itself is dropped.
        pre.mirroring_add(
            5,
            CloneSession {
                class_of_service: 2,
                ..CloneSession::to_port(8)
            },
        )
        .unwrap();
        meta.clone_request = Some(CloneRequest {
            kind: CloneType::EgressToEgress,
            session: 5,
            field_list: Some(3),
        });
        meta.mark_to_drop();
        let d = pre.after_egress(&meta);
        assert_eq!(d.action, EgressAction::Drop);
        let clone = d.clone.expect("clone");
        assert_eq!(
            (
                pre.clone_replicas(clone.session)[0].port,
                clone.class_of_service,
                clone.field_list,
                clone.instance_type
            ),
            (8, 2, Some(3), instance_type::EGRESS_CLONE)
        );
    }
}
