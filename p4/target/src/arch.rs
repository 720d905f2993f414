//! The v1model architecture in memory: a switch that drives a compiled
//! [`Pipeline`] the way bmv2's `simple_switch` does, with a packet
//! replication engine (multicast groups, clone sessions) and no traffic
//! manager (every queue is empty: `enq_qdepth`/`deq_qdepth` are 0).
//!
//! Spec: P4_16 v1model (`v1model.p4` comments on `standard_metadata_t`,
//! `clone`, `resubmit_preserving_field_list`,
//! `recirculate_preserving_field_list`, `truncate`, `mark_to_drop`) and the
//! packet flow of bmv2 `simple_switch` (`ingress_thread`, `egress_thread`).
//!
//! The decision logic is split from the driver so that the real dataplane,
//! which has a traffic manager between ingress and egress, reuses it:
//! [`Pre::after_ingress`] turns the standard metadata at the end of ingress
//! into an [`IngressDecision`] (I2E clone request, then resubmit, multicast
//! copies, unicast copy or drop, in bmv2's order) and [`Pre::after_egress`]
//! does the same at the end of egress ([`EgressDecision`]: E2E clone, then
//! drop, recirculate or emit). [`V1Switch`] is the in-memory driver that acts
//! on those decisions immediately.
//!
//! Behaviour, following bmv2:
//! - An I2E clone re-parses the bytes the ingress pass started from (bmv2
//!   restores the packet buffer before copying), gets instance type
//!   `INGRESS_CLONE`, the fields of its `@field_list`, and goes straight to
//!   egress on the session's port.
//! - A resubmitted packet re-parses the same original bytes with instance
//!   type `RESUBMIT`; the resubmitting pass emits nothing else.
//! - Multicast (non-zero `mcast_grp` at the end of ingress) makes one copy
//!   per (node, port) of the group in node-association order, each with
//!   `egress_rid` of its node and instance type `REPLICATION`.
//! - Otherwise `egress_spec == 511` drops, any other value unicasts.
//! - Before egress, `egress_spec` is reset to 0 so that only a
//!   `mark_to_drop` *in egress* drops there.
//! - An E2E clone copies the packet at the end of egress (headers as
//!   modified), resets its standard metadata, and runs egress again on the
//!   session's port with instance type `EGRESS_CLONE`. It happens even when
//!   the original is dropped in egress, as in bmv2. User metadata of the
//!   copy is *not* reset (the [`Pipeline`] trait offers no way to), which
//!   differs from bmv2 only for fields outside the field list.
//! - Recirculation re-parses the deparsed bytes with instance type `RECIRC`.
//! - `truncate(n)` and a clone session's truncation cut the emitted bytes.
//! - Preserved fields are copied after the parser ran (bmv2 copies them
//!   before), so a parser cannot read them.
//! - Resubmit and recirculate passes are bounded ([`MAX_EXTRA_PASSES`] of
//!   each per arriving packet); a packet over the limit is dropped and
//!   counted.
//!
//! Every drop is counted by [`DropReason`]. Time is an argument
//! (`now_ns`); nothing here reads a clock.

use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use crate::pipeline::Pipeline;
use crate::v1model::{CloneRequest, CloneType, DROP_PORT, StandardMetadata, instance_type};

/// How many resubmits, and separately how many recirculations, one arriving
/// packet may cause before further ones are dropped.
pub const MAX_EXTRA_PASSES: u32 = 16;

/// Why a packet (or one copy of it) was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// `egress_spec == 511` and no multicast group at the end of ingress.
    IngressDrop,
    /// `mcast_grp` names a group that does not exist or has no ports.
    McastGroupEmpty,
    /// A clone named a session that is not configured.
    CloneSessionMissing,
    /// `mark_to_drop` in egress.
    EgressDrop,
    /// Too many resubmits of one packet.
    ResubmitLimit,
    /// Too many recirculations of one packet.
    RecirculateLimit,
}

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; 6] = [
        DropReason::IngressDrop,
        DropReason::McastGroupEmpty,
        DropReason::CloneSessionMissing,
        DropReason::EgressDrop,
        DropReason::ResubmitLimit,
        DropReason::RecirculateLimit,
    ];

    /// Index of this reason in [`SwitchStats::drops`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// Counters of the in-memory switch; all monotonic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwitchStats {
    /// Packets given to [`V1Switch::process`].
    pub rx_packets: u64,
    /// Packets emitted on a port.
    pub tx_packets: u64,
    /// Ingress passes run (arrivals, resubmits, recirculations).
    pub ingress_passes: u64,
    /// Egress passes run (unicast, replicas, clones).
    pub egress_passes: u64,
    /// Drops, indexed by [`DropReason::index`].
    pub drops: [u64; DropReason::ALL.len()],
}

impl SwitchStats {
    /// Drops counted for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.drops[reason.index()]
    }

    fn count_drop(&mut self, reason: DropReason) {
        self.drops[reason.index()] += 1;
    }
}

/// A clone (mirroring) session: where copies go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloneSession {
    /// Egress port of the copies.
    pub egress_port: u16,
    /// Class of service: the copy's `priority`.
    pub class_of_service: u8,
    /// Keep at most this many bytes of the copy on output.
    pub truncate_bytes: Option<u32>,
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

/// A clone to make: the session's destination plus the preserved field list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloneCopy {
    /// Session id.
    pub session: u32,
    /// Session configuration.
    pub config: CloneSession,
    /// Field list whose user metadata travels with the copy.
    pub field_list: Option<u8>,
    /// `INGRESS_CLONE` or `EGRESS_CLONE`.
    pub instance_type: u32,
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
    /// Drop the packet.
    Drop(DropReason),
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
    /// Drop the packet.
    Drop(DropReason),
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
        check_port(u32::from(config.egress_port))?;
        self.sessions.insert(session, config);
        Ok(())
    }

    /// Removes a clone session; returns whether it existed.
    pub fn mirroring_delete(&mut self, session: u32) -> bool {
        self.sessions.remove(&session).is_some()
    }

    /// The configuration of clone session `session`, if it exists.
    pub fn clone_session(&self, session: u32) -> Option<CloneSession> {
        self.sessions.get(&session).copied()
    }

    /// Every clone session, by ascending id.
    pub fn clone_sessions(&self) -> impl Iterator<Item = (u32, CloneSession)> + '_ {
        self.sessions.iter().map(|(&id, &c)| (id, c))
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
                Some(&config) => (
                    Some(CloneCopy {
                        session: r.session,
                        config,
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
                IngressAction::Drop(DropReason::McastGroupEmpty)
            } else {
                IngressAction::Forward
            }
        } else if meta.egress_spec == DROP_PORT {
            IngressAction::Drop(DropReason::IngressDrop)
        } else {
            copies.push(EgressCopy {
                port: meta.egress_spec,
                rid: 0,
                instance_type: meta.instance_type,
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
            EgressAction::Drop(DropReason::EgressDrop)
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

/// Work waiting inside one [`V1Switch::process`] call.
enum Work<Pkt> {
    /// Parse `bytes` and run ingress; `preserve` copies a field list from a
    /// previous pass.
    Ingress {
        bytes: Rc<[u8]>,
        instance_type: u32,
        preserve: Option<(Pkt, u8)>,
    },
    /// Run egress on a parsed packet whose payload is in `bytes`.
    Egress {
        pkt: Pkt,
        bytes: Rc<[u8]>,
        copy: EgressCopy,
        truncate_bytes: Option<u32>,
    },
}

/// The in-memory v1model switch (bmv2 `simple_switch` without queues).
///
/// Configure with [`V1Switch::pre_mut`], [`V1Switch::set_cpu_port`] and the
/// pipeline's runtime ([`V1Switch::pipeline_mut`]); feed packets with
/// [`V1Switch::process`], which returns everything they caused to be
/// transmitted, as `(port, bytes)` in the order the switch emitted them.
pub struct V1Switch<P: Pipeline> {
    pipeline: P,
    pre: Pre,
    cpu_port: Option<u16>,
    stats: SwitchStats,
    copies: Vec<EgressCopy>,
}

impl<P: Pipeline> std::fmt::Debug for V1Switch<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("V1Switch")
            .field("program", &self.pipeline.info().name)
            .field("pre", &self.pre)
            .field("cpu_port", &self.cpu_port)
            .field("stats", &self.stats)
            .finish()
    }
}

impl<P: Pipeline> V1Switch<P> {
    /// A switch running `pipeline`, with no groups, sessions or CPU port.
    pub fn new(pipeline: P) -> Self {
        V1Switch {
            pipeline,
            pre: Pre::new(),
            cpu_port: None,
            stats: SwitchStats::default(),
            copies: Vec::new(),
        }
    }

    /// The compiled program.
    pub fn pipeline(&self) -> &P {
        &self.pipeline
    }

    /// The compiled program, for control-plane writes between packets.
    pub fn pipeline_mut(&mut self) -> &mut P {
        &mut self.pipeline
    }

    /// The replication engine.
    pub fn pre(&self) -> &Pre {
        &self.pre
    }

    /// The replication engine, to configure groups and sessions.
    pub fn pre_mut(&mut self) -> &mut Pre {
        &mut self.pre
    }

    /// Sets the port whose packets are packet-ins for the controller.
    /// Packets sent there are returned by [`V1Switch::process`] like any other.
    pub fn set_cpu_port(&mut self, port: Option<u16>) {
        self.cpu_port = port;
    }

    /// The CPU port, if set.
    pub fn cpu_port(&self) -> Option<u16> {
        self.cpu_port
    }

    /// Counters so far.
    pub fn stats(&self) -> &SwitchStats {
        &self.stats
    }

    /// Runs one packet arriving on `ingress_port` at `now_ns` through the
    /// whole v1model flow and returns what the switch transmitted.
    pub fn process(&mut self, ingress_port: u16, bytes: &[u8], now_ns: u64) -> Vec<(u16, Vec<u8>)> {
        self.stats.rx_packets += 1;
        let mut out = Vec::new();
        let mut queue: VecDeque<Work<P::Packet>> = VecDeque::new();
        let mut resubmits = 0u32;
        let mut recirculations = 0u32;
        queue.push_back(Work::Ingress {
            bytes: Rc::from(bytes),
            instance_type: instance_type::NORMAL,
            preserve: None,
        });
        while let Some(work) = queue.pop_front() {
            match work {
                Work::Ingress {
                    bytes,
                    instance_type: itype,
                    preserve,
                } => {
                    self.stats.ingress_passes += 1;
                    let mut meta =
                        StandardMetadata::arriving(ingress_port, bytes.len() as u32, now_ns);
                    meta.instance_type = itype;
                    let mut pkt = self.pipeline.parse(&bytes, meta);
                    if let Some((from, list)) = &preserve {
                        P::preserve_fields(from, &mut pkt, *list);
                    }
                    self.pipeline.ingress(&mut pkt);
                    let decision = self.pre.after_ingress(P::meta(&pkt), &mut self.copies);
                    if decision.clone_missing {
                        self.stats.count_drop(DropReason::CloneSessionMissing);
                    }
                    if let Some(clone) = decision.clone {
                        let mut cmeta =
                            StandardMetadata::arriving(ingress_port, bytes.len() as u32, now_ns);
                        cmeta.instance_type = instance_type::INGRESS_CLONE;
                        let mut cpkt = self.pipeline.parse(&bytes, cmeta);
                        if let Some(list) = clone.field_list {
                            P::preserve_fields(&pkt, &mut cpkt, list);
                        }
                        P::meta_mut(&mut cpkt).priority = clone.config.class_of_service;
                        queue.push_back(Work::Egress {
                            pkt: cpkt,
                            bytes: bytes.clone(),
                            copy: EgressCopy {
                                port: clone.config.egress_port,
                                rid: 0,
                                instance_type: clone.instance_type,
                            },
                            truncate_bytes: clone.config.truncate_bytes,
                        });
                    }
                    match decision.action {
                        IngressAction::Resubmit { field_list } => {
                            resubmits += 1;
                            if resubmits > MAX_EXTRA_PASSES {
                                self.stats.count_drop(DropReason::ResubmitLimit);
                            } else {
                                queue.push_back(Work::Ingress {
                                    bytes,
                                    instance_type: instance_type::RESUBMIT,
                                    preserve: Some((pkt, field_list)),
                                });
                            }
                        }
                        IngressAction::Drop(reason) => self.stats.count_drop(reason),
                        IngressAction::Forward => {
                            let copies = std::mem::take(&mut self.copies);
                            let mut original = Some(pkt);
                            for (i, copy) in copies.iter().enumerate() {
                                // Every copy but the last gets a clone; the last takes the original.
                                let p = if i + 1 == copies.len() {
                                    original.take()
                                } else {
                                    original.clone()
                                };
                                let Some(p) = p else { break };
                                queue.push_back(Work::Egress {
                                    pkt: p,
                                    bytes: bytes.clone(),
                                    copy: *copy,
                                    truncate_bytes: None,
                                });
                            }
                            self.copies = copies;
                        }
                    }
                }
                Work::Egress {
                    mut pkt,
                    bytes,
                    copy,
                    truncate_bytes,
                } => {
                    self.stats.egress_passes += 1;
                    prepare_egress(P::meta_mut(&mut pkt), &copy, now_ns);
                    self.pipeline.egress(&mut pkt);
                    let decision = self.pre.after_egress(P::meta(&pkt));
                    if decision.clone_missing {
                        self.stats.count_drop(DropReason::CloneSessionMissing);
                    }
                    if let Some(clone) = decision.clone {
                        let mut cpkt = pkt.clone();
                        let old = *P::meta(&pkt);
                        let cmeta = P::meta_mut(&mut cpkt);
                        *cmeta =
                            StandardMetadata::arriving(old.ingress_port, old.packet_length, now_ns);
                        cmeta.priority = clone.config.class_of_service;
                        queue.push_back(Work::Egress {
                            pkt: cpkt,
                            bytes: bytes.clone(),
                            copy: EgressCopy {
                                port: clone.config.egress_port,
                                rid: 0,
                                instance_type: clone.instance_type,
                            },
                            truncate_bytes: clone.config.truncate_bytes,
                        });
                    }
                    match decision.action {
                        EgressAction::Drop(reason) => self.stats.count_drop(reason),
                        EgressAction::Recirculate { field_list } => {
                            let mut data = Vec::new();
                            self.pipeline.deparse(&mut pkt, &bytes, &mut data);
                            recirculations += 1;
                            if recirculations > MAX_EXTRA_PASSES {
                                self.stats.count_drop(DropReason::RecirculateLimit);
                            } else {
                                queue.push_back(Work::Ingress {
                                    bytes: Rc::from(data),
                                    instance_type: instance_type::RECIRC,
                                    preserve: Some((pkt, field_list)),
                                });
                            }
                        }
                        EgressAction::Emit => {
                            let mut data = Vec::new();
                            let limit = P::meta(&pkt).truncate_len;
                            self.pipeline.deparse(&mut pkt, &bytes, &mut data);
                            for l in [limit, truncate_bytes].into_iter().flatten() {
                                data.truncate(l as usize);
                            }
                            self.stats.tx_packets += 1;
                            out.push((copy.port, data));
                        }
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    //! A hand-written pipeline whose behaviour is scripted by the packet's
    //! first byte, so that each architecture path can be driven directly.
    //!
    //! Header (8 bytes): `op a b c x0 x1 x2 x3`. Egress writes `x0` =
    //! egress port, `x1` = instance type, `x2` = egress rid, `x3` = the
    //! preserved user-metadata byte.
    use super::*;
    use crate::info::ProgramInfo;
    use crate::runtime::Runtime;
    use crate::v1model::CloneRequest;

    static INFO: ProgramInfo = ProgramInfo {
        name: "scripted",
        arch: "v1model",
        tables: &[],
        actions: &[],
        action_profiles: &[],
        counters: &[],
        meters: &[],
        registers: &[],
        digests: &[],
        controller_headers: &[],
        value_sets: &[],
        p4info_text: "",
    };

    #[derive(Clone, Debug)]
    struct Pkt {
        hdr: Option<[u8; 8]>,
        user: u8,
        meta: StandardMetadata,
        payload_offset: usize,
    }

    struct Scripted {
        rt: Runtime,
    }

    impl Scripted {
        fn new() -> Self {
            Scripted {
                rt: Runtime {
                    info: &INFO,
                    tables: vec![],
                    profiles: vec![],
                    counters: vec![],
                    meters: vec![],
                    registers: vec![],
                    value_sets: vec![],
                    digests: vec![],
                },
            }
        }
    }

    impl Pipeline for Scripted {
        type Packet = Pkt;
        fn info(&self) -> &'static ProgramInfo {
            &INFO
        }
        fn runtime(&self) -> &Runtime {
            &self.rt
        }
        fn runtime_mut(&mut self) -> &mut Runtime {
            &mut self.rt
        }
        fn parse(&mut self, data: &[u8], mut meta: StandardMetadata) -> Pkt {
            if data.len() < 8 {
                meta.parser_error = crate::v1model::error_code::PACKET_TOO_SHORT;
                return Pkt {
                    hdr: None,
                    user: 0,
                    meta,
                    payload_offset: 0,
                };
            }
            let mut hdr = [0u8; 8];
            hdr.copy_from_slice(&data[..8]);
            Pkt {
                hdr: Some(hdr),
                user: 0,
                meta,
                payload_offset: 8,
            }
        }
        fn ingress(&mut self, pkt: &mut Pkt) {
            let Some(h) = pkt.hdr.as_mut() else {
                pkt.meta.mark_to_drop();
                return;
            };
            let (op, a, b) = (h[0], h[1] as u16, h[2] as u32);
            let m = &mut pkt.meta;
            match op {
                0 => m.egress_spec = a,
                1 => m.mcast_grp = a,
                2 => m.mark_to_drop(),
                3 => {
                    if m.instance_type == instance_type::RESUBMIT {
                        m.egress_spec = a;
                    } else {
                        pkt.user = 0x5a;
                        m.resubmit = Some(1);
                    }
                }
                4 | 9 => {
                    pkt.user = 0x33;
                    h[3] = 0xee;
                    m.egress_spec = a;
                    m.clone_request = Some(CloneRequest {
                        kind: CloneType::IngressToEgress,
                        session: b,
                        field_list: Some(1),
                    });
                }
                5 | 6 => m.egress_spec = a,
                7 => m.resubmit = Some(0),
                8 => {
                    m.egress_spec = a;
                    m.truncate_len = Some(b);
                }
                _ => m.mark_to_drop(),
            }
        }
        fn egress(&mut self, pkt: &mut Pkt) {
            let Some(h) = pkt.hdr.as_mut() else { return };
            let m = &mut pkt.meta;
            match h[0] {
                5 if m.instance_type != instance_type::RECIRC => {
                    pkt.user = 0x44;
                    h[3] = h[3].wrapping_add(1);
                    m.recirculate = Some(1);
                }
                6 if m.instance_type != instance_type::EGRESS_CLONE => {
                    m.egress_spec = DROP_PORT;
                    m.clone_request = Some(CloneRequest {
                        kind: CloneType::EgressToEgress,
                        session: h[2] as u32,
                        field_list: None,
                    });
                }
                _ => {}
            }
            h[4] = m.egress_port as u8;
            h[5] = m.instance_type as u8;
            h[6] = m.egress_rid as u8;
            h[7] = pkt.user;
        }
        fn deparse(&mut self, pkt: &mut Pkt, data: &[u8], out: &mut Vec<u8>) {
            out.clear();
            if let Some(h) = pkt.hdr {
                out.extend_from_slice(&h);
            }
            out.extend_from_slice(&data[pkt.payload_offset..]);
        }
        fn meta(pkt: &Pkt) -> &StandardMetadata {
            &pkt.meta
        }
        fn meta_mut(pkt: &mut Pkt) -> &mut StandardMetadata {
            &mut pkt.meta
        }
        fn preserve_fields(from: &Pkt, to: &mut Pkt, field_list: u8) {
            if field_list == 1 {
                to.user = from.user;
            }
        }
    }

    fn switch() -> V1Switch<Scripted> {
        V1Switch::new(Scripted::new())
    }

    fn pkt(op: u8, a: u8, b: u8, c: u8) -> Vec<u8> {
        vec![op, a, b, c, 0, 0, 0, 0, 0xde, 0xad]
    }

    #[test]
    fn unicast_goes_to_egress_spec_with_metadata_set() {
        let mut sw = switch();
        let out = sw.process(1, &pkt(0, 7, 0, 0), 5_000);
        assert_eq!(out, vec![(7, vec![0, 7, 0, 0, 7, 0, 0, 0, 0xde, 0xad])]);
        assert_eq!(sw.stats().tx_packets, 1);
        assert_eq!(sw.stats().egress_passes, 1);
    }

    #[test]
    fn mark_to_drop_in_ingress_is_counted() {
        let mut sw = switch();
        assert!(sw.process(1, &pkt(2, 0, 0, 0), 0).is_empty());
        assert_eq!(sw.stats().dropped(DropReason::IngressDrop), 1);
        // A packet too short for the header: the parser error path drops too.
        assert!(sw.process(1, &[1, 2, 3], 0).is_empty());
        assert_eq!(sw.stats().dropped(DropReason::IngressDrop), 2);
    }

    #[test]
    fn multicast_replicates_per_node_and_port_with_rid() {
        let mut sw = switch();
        let pre = sw.pre_mut();
        pre.mc_mgrp_create(3).unwrap();
        let n0 = pre.mc_node_create(10, &[1, 2]).unwrap();
        let n1 = pre.mc_node_create(20, &[4]).unwrap();
        assert_eq!((n0, n1), (0, 1));
        pre.mc_node_associate(3, n1).unwrap();
        pre.mc_node_associate(3, n0).unwrap();
        let out = sw.process(1, &pkt(1, 3, 0, 0), 0);
        let r = instance_type::REPLICATION as u8;
        assert_eq!(
            out,
            vec![
                (4, vec![1, 3, 0, 0, 4, r, 20, 0, 0xde, 0xad]),
                (1, vec![1, 3, 0, 0, 1, r, 10, 0, 0xde, 0xad]),
                (2, vec![1, 3, 0, 0, 2, r, 10, 0, 0xde, 0xad]),
            ]
        );
        // Unknown group: dropped and counted.
        assert!(sw.process(1, &pkt(1, 9, 0, 0), 0).is_empty());
        assert_eq!(sw.stats().dropped(DropReason::McastGroupEmpty), 1);
    }

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
    fn whole_group_writes_replace_atomically_and_list_in_id_order() {
        let mut sw = switch();
        let r = |port, rid| McReplica { port, rid };
        let pre = sw.pre_mut();
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
        let out = sw.process(1, &pkt(1, 7, 0, 0), 0);
        let rep = instance_type::REPLICATION as u8;
        assert_eq!(
            out,
            vec![
                (6, vec![1, 7, 0, 0, 6, rep, 2, 0, 0xde, 0xad]),
                (6, vec![1, 7, 0, 0, 6, rep, 3, 0, 0xde, 0xad]),
            ]
        );
        assert_eq!(
            sw.pre_mut().mc_group_delete(7),
            Some(vec![r(6, 2), r(6, 3)])
        );
        assert_eq!(sw.pre_mut().mc_group_delete(7), None);
        assert!(sw.process(1, &pkt(1, 7, 0, 0), 0).is_empty());
    }

    #[test]
    fn sessions_are_listed_and_replaced() {
        let mut pre = Pre::new();
        let s = |egress_port| CloneSession {
            egress_port,
            class_of_service: 0,
            truncate_bytes: None,
        };
        pre.mirroring_add(9, s(1)).unwrap();
        pre.mirroring_add(3, s(2)).unwrap();
        pre.mirroring_add(9, s(4)).unwrap();
        assert_eq!(pre.clone_session(9), Some(s(4)));
        let all: Vec<(u32, CloneSession)> = pre.clone_sessions().collect();
        assert_eq!(all, vec![(3, s(2)), (9, s(4))]);
        assert_eq!(pre.mirroring_add(1, s(511)), Err(PreError::BadPort(511)));
        assert!(pre.mirroring_delete(3));
        assert_eq!(pre.clone_session(3), None);
    }

    #[test]
    fn resubmit_reparses_original_and_preserves_field_list() {
        let mut sw = switch();
        let out = sw.process(1, &pkt(3, 6, 0, 0), 0);
        let rs = instance_type::RESUBMIT as u8;
        assert_eq!(out, vec![(6, vec![3, 6, 0, 0, 6, rs, 0, 0x5a, 0xde, 0xad])]);
        assert_eq!(sw.stats().ingress_passes, 2);
    }

    #[test]
    fn endless_resubmit_is_bounded_and_counted() {
        let mut sw = switch();
        assert!(sw.process(1, &pkt(7, 0, 0, 0), 0).is_empty());
        assert_eq!(sw.stats().ingress_passes, 1 + MAX_EXTRA_PASSES as u64);
        assert_eq!(sw.stats().dropped(DropReason::ResubmitLimit), 1);
    }

    #[test]
    fn i2e_clone_reparses_original_bytes_and_comes_first() {
        let mut sw = switch();
        sw.pre_mut()
            .mirroring_add(
                5,
                CloneSession {
                    egress_port: 9,
                    class_of_service: 0,
                    truncate_bytes: None,
                },
            )
            .unwrap();
        let out = sw.process(1, &pkt(4, 2, 5, 0x11), 0);
        let ic = instance_type::INGRESS_CLONE as u8;
        assert_eq!(
            out,
            vec![
                // The clone shows the original c (0x11), not ingress's 0xee,
                // and carries the preserved byte.
                (9, vec![4, 2, 5, 0x11, 9, ic, 0, 0x33, 0xde, 0xad]),
                (2, vec![4, 2, 5, 0xee, 2, 0, 0, 0x33, 0xde, 0xad]),
            ]
        );
    }

    #[test]
    fn clone_session_truncates_and_missing_session_is_counted() {
        let mut sw = switch();
        sw.pre_mut()
            .mirroring_add(
                5,
                CloneSession {
                    egress_port: 9,
                    class_of_service: 3,
                    truncate_bytes: Some(4),
                },
            )
            .unwrap();
        let out = sw.process(1, &pkt(4, 2, 5, 0x11), 0);
        assert_eq!(out[0], (9, vec![4, 2, 5, 0x11]));
        assert_eq!(out[1].1.len(), 10);
        let out = sw.process(1, &pkt(9, 2, 6, 0x11), 0);
        assert_eq!(out.len(), 1, "original still forwarded");
        assert_eq!(sw.stats().dropped(DropReason::CloneSessionMissing), 1);
    }

    #[test]
    fn recirculate_reparses_deparsed_bytes() {
        let mut sw = switch();
        let out = sw.process(1, &pkt(5, 3, 0, 0x10), 0);
        let rc = instance_type::RECIRC as u8;
        // First pass wrote c+1 and x0..x3 before recirculating; the second
        // pass sees those bytes, then egress overwrites x0..x3.
        assert_eq!(
            out,
            vec![(3, vec![5, 3, 0, 0x11, 3, rc, 0, 0x44, 0xde, 0xad])]
        );
        assert_eq!(sw.stats().ingress_passes, 2);
        assert_eq!(sw.stats().egress_passes, 2);
    }

    #[test]
    fn egress_drop_still_makes_e2e_clone() {
        let mut sw = switch();
        sw.pre_mut()
            .mirroring_add(
                2,
                CloneSession {
                    egress_port: 8,
                    class_of_service: 0,
                    truncate_bytes: None,
                },
            )
            .unwrap();
        let out = sw.process(1, &pkt(6, 3, 2, 0), 0);
        let ec = instance_type::EGRESS_CLONE as u8;
        // The clone keeps egress's header writes from the first pass (x0=3)
        // and then egress runs again on port 8.
        assert_eq!(out, vec![(8, vec![6, 3, 2, 0, 8, ec, 0, 0, 0xde, 0xad])]);
        assert_eq!(sw.stats().dropped(DropReason::EgressDrop), 1);
    }

    #[test]
    fn truncate_cuts_output() {
        let mut sw = switch();
        let out = sw.process(1, &pkt(8, 4, 3, 0), 0);
        assert_eq!(out, vec![(4, vec![8, 4, 3])]);
    }

    #[test]
    fn decisions_are_usable_without_the_driver() {
        let pre = Pre::new();
        let mut copies = Vec::new();
        let mut meta = StandardMetadata::arriving(1, 64, 0);
        meta.egress_spec = 12;
        let d = pre.after_ingress(&meta, &mut copies);
        assert_eq!(d.action, IngressAction::Forward);
        assert_eq!(
            copies,
            vec![EgressCopy {
                port: 12,
                rid: 0,
                instance_type: 0
            }]
        );
        meta.resubmit = Some(2);
        let d = pre.after_ingress(&meta, &mut copies);
        assert_eq!(d.action, IngressAction::Resubmit { field_list: 2 });
        assert!(copies.is_empty());
        let mut meta = StandardMetadata {
            recirculate: Some(1),
            ..Default::default()
        };
        assert_eq!(
            pre.after_egress(&meta).action,
            EgressAction::Recirculate { field_list: 1 }
        );
        meta.mark_to_drop();
        assert_eq!(
            pre.after_egress(&meta).action,
            EgressAction::Drop(DropReason::EgressDrop)
        );
    }
}
