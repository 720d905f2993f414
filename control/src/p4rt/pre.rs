//! P4Runtime `PacketReplicationEngineEntry` (spec "PacketReplicationEngineEntry":
//! multicast groups and clone sessions) over the device's [`Pre`].
//!
//! Contract:
//! * Decoding ([`pre_op`]) validates everything that does not depend on the
//!   device, naming the field: id ≠ 0 (and a group id fits the 16-bit
//!   `mcast_grp`), a port and an `instance` < 2^16 per replica, no
//!   duplicate (port, instance), no backup replicas (UNIMPLEMENTED); a
//!   clone session's replicas follow the same rules (each clone makes one
//!   copy per replica, carrying its instance as `egress_rid`),
//!   `class_of_service` 0..=7 (the copies' priority) and
//!   `packet_length_bytes` ≥ 0 (0 = no truncation).
//! * Applying ([`apply`]) checks existence (INSERT of an existing id is
//!   ALREADY_EXISTS, MODIFY/DELETE of a missing one NOT_FOUND) and that the
//!   ports exist on the device, then changes the engine in one step: a
//!   MODIFY replaces all replicas of a group at once.
//! * [`inverse`] gives the operation that undoes one, for ROLLBACK_ON_ERROR.
//! * Reads ([`read`]) select by id, id 0 being the wildcard, and report
//!   entries the way they were written: group `metadata` and each
//!   replica's port form (`egress_port` or `port` bytes, in canonical form)
//!   come from the [`PreEcho`] the service keeps, since the engine only
//!   knows port numbers.
//!
//! Units: ports are P4 port numbers, `packet_length_bytes` bytes.

use std::collections::HashMap;

use p4_target::arch::{CloneSession, McReplica, Pre, PreError};
use proto::p4::v1 as pb;
use proto::p4::v1::update::Type as UpdateType;
use tonic::Code;

use super::bytes::{decode, encode};
use super::error::P4Error;
use crate::device::PortSpace;

/// How a replica's port travelled, so a read returns the same form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PortForm {
    /// The deprecated `uint32 egress_port`.
    #[default]
    EgressPort,
    /// `bytes port`.
    Bytes,
}

/// What a read must echo that the engine does not keep.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Echo {
    /// The group's `metadata` (empty for sessions).
    pub metadata: Vec<u8>,
    /// Port form per replica, in replica order.
    pub forms: Vec<PortForm>,
}

/// Echo data of every group and session written through P4Runtime.
#[derive(Clone, Debug, Default)]
pub struct PreEcho {
    /// Multicast groups by id.
    pub groups: HashMap<u16, Echo>,
    /// Clone sessions by id.
    pub sessions: HashMap<u32, Echo>,
}

impl PreEcho {
    /// Records a successfully applied operation.
    pub fn record(&mut self, op: &PreOp) {
        match op {
            PreOp::GroupSet { id, echo, .. } => {
                self.groups.insert(*id, echo.clone());
            }
            PreOp::GroupDelete(id) => {
                self.groups.remove(id);
            }
            PreOp::SessionSet { id, echo, .. } => {
                self.sessions.insert(*id, echo.clone());
            }
            PreOp::SessionDelete(id) => {
                self.sessions.remove(id);
            }
        }
    }
}

/// Whether a set operation creates or replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetMode {
    /// INSERT: the id must not exist.
    Insert,
    /// MODIFY: the id must exist.
    Modify,
}

/// One replication-engine change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreOp {
    /// Create or replace a multicast group.
    GroupSet {
        /// Group id (`mcast_grp`).
        id: u16,
        /// Replicas in delivery order.
        replicas: Vec<McReplica>,
        /// Insert or modify.
        mode: SetMode,
        /// What reads echo.
        echo: Echo,
    },
    /// Delete a multicast group.
    GroupDelete(u16),
    /// Create or replace a clone session.
    SessionSet {
        /// Session id.
        id: u32,
        /// Destination, class of service, truncation.
        session: CloneSession,
        /// Insert or modify.
        mode: SetMode,
        /// What reads echo.
        echo: Echo,
    },
    /// Delete a clone session.
    SessionDelete(u32),
}

/// Decodes one replica: (port, instance, form).
fn replica(r: &pb::Replica, field: &str) -> Result<(u16, u32, PortForm), P4Error> {
    use pb::replica::PortKind;
    if !r.backup_replicas.is_empty() {
        return Err(P4Error::unimplemented(format!(
            "{field}.backup_replicas (no port failover)"
        )));
    }
    let (port, form) = match &r.port_kind {
        Some(PortKind::EgressPort(p)) => (u128::from(*p), PortForm::EgressPort),
        Some(PortKind::Port(b)) => (
            decode(b, 32, format_args!("{field}.port"))?,
            PortForm::Bytes,
        ),
        None => return Err(P4Error::invalid(format!("{field}.port"), "missing")),
    };
    if port >= u128::from(p4_target::v1model::DROP_PORT) {
        return Err(P4Error::invalid(
            format!("{field}.port"),
            format!("port {port} is out of range (0..=510)"),
        ));
    }
    Ok((port as u16, r.instance, form))
}

/// Decodes a `PacketReplicationEngineEntry` update.
pub fn pre_op(ty: UpdateType, e: &pb::PacketReplicationEngineEntry) -> Result<PreOp, P4Error> {
    use pb::packet_replication_engine_entry::Type;
    match &e.r#type {
        None => Err(P4Error::invalid(
            "packet_replication_engine_entry.type",
            "missing (multicast_group_entry or clone_session_entry)",
        )),
        Some(Type::MulticastGroupEntry(g)) => group_op(ty, g),
        Some(Type::CloneSessionEntry(c)) => session_op(ty, c),
    }
}

/// The replicas of a group or session (`what` names it in errors): each
/// (port, instance) once, the instance an `egress_rid` (16 bits).
fn replica_list(
    list: &[pb::Replica],
    what: &str,
) -> Result<(Vec<McReplica>, Vec<PortForm>), P4Error> {
    let mut replicas = Vec::with_capacity(list.len());
    let mut forms = Vec::with_capacity(list.len());
    for (i, r) in list.iter().enumerate() {
        let field = format!("{what}.replicas[{i}]");
        let (port, instance, form) = replica(r, &field)?;
        let rid = u16::try_from(instance).map_err(|_| {
            P4Error::invalid(
                format!("{field}.instance"),
                format!("{instance} does not fit egress_rid (16 bits)"),
            )
        })?;
        let rep = McReplica { port, rid };
        if replicas.contains(&rep) {
            return Err(P4Error::invalid(
                field,
                format!("duplicate replica (port {port}, instance {instance})"),
            ));
        }
        replicas.push(rep);
        forms.push(form);
    }
    Ok((replicas, forms))
}

fn mode(ty: UpdateType) -> SetMode {
    if ty == UpdateType::Insert {
        SetMode::Insert
    } else {
        SetMode::Modify
    }
}

fn group_op(ty: UpdateType, g: &pb::MulticastGroupEntry) -> Result<PreOp, P4Error> {
    const F: &str = "multicast_group_entry";
    let id = match g.multicast_group_id {
        0 => {
            return Err(P4Error::invalid(
                format!("{F}.multicast_group_id"),
                "0 is reserved (it means no multicast)",
            ));
        }
        id => u16::try_from(id).map_err(|_| {
            P4Error::invalid(
                format!("{F}.multicast_group_id"),
                format!("{id} does not fit mcast_grp (16 bits)"),
            )
        })?,
    };
    if ty == UpdateType::Delete {
        return Ok(PreOp::GroupDelete(id));
    }
    let (replicas, forms) = replica_list(&g.replicas, F)?;
    Ok(PreOp::GroupSet {
        id,
        replicas,
        mode: mode(ty),
        echo: Echo {
            metadata: g.metadata.clone(),
            forms,
        },
    })
}

fn session_op(ty: UpdateType, c: &pb::CloneSessionEntry) -> Result<PreOp, P4Error> {
    const F: &str = "clone_session_entry";
    if c.session_id == 0 {
        return Err(P4Error::invalid(format!("{F}.session_id"), "0 is reserved"));
    }
    if ty == UpdateType::Delete {
        return Ok(PreOp::SessionDelete(c.session_id));
    }
    let (replicas, forms) = replica_list(&c.replicas, F)?;
    let class_of_service = u8::try_from(c.class_of_service)
        .ok()
        .filter(|&cos| cos <= 7)
        .ok_or_else(|| {
            P4Error::invalid(
                format!("{F}.class_of_service"),
                format!("{} is not a priority 0..=7", c.class_of_service),
            )
        })?;
    let truncate_bytes = match c.packet_length_bytes {
        n if n < 0 => {
            return Err(P4Error::invalid(
                format!("{F}.packet_length_bytes"),
                format!("negative ({n})"),
            ));
        }
        0 => None,
        n => Some(n as u32),
    };
    Ok(PreOp::SessionSet {
        id: c.session_id,
        session: CloneSession {
            replicas,
            class_of_service,
            truncate_bytes,
        },
        mode: mode(ty),
        echo: Echo {
            metadata: Vec::new(),
            forms,
        },
    })
}

fn check_ports<'a>(
    ports: Option<PortSpace>,
    field: &str,
    replicas: impl Iterator<Item = &'a u16>,
) -> Result<(), P4Error> {
    let Some(space) = ports else { return Ok(()) };
    for (i, &p) in replicas.enumerate() {
        if !space.contains(p) {
            return Err(P4Error::invalid(
                format!("{field}.replicas[{i}].port"),
                format!("port {p} does not exist (this switch has {space})"),
            ));
        }
    }
    Ok(())
}

fn engine_error(e: PreError) -> P4Error {
    P4Error::new(Code::InvalidArgument, e.to_string())
}

/// Applies `op` to `pre`; `ports` are the ports the device has.
pub fn apply(pre: &mut Pre, ports: Option<PortSpace>, op: &PreOp) -> Result<(), P4Error> {
    match op {
        PreOp::GroupSet {
            id, replicas, mode, ..
        } => {
            let exists = pre.mc_group(*id).is_some();
            match (mode, exists) {
                (SetMode::Insert, true) => {
                    return Err(P4Error::new(
                        Code::AlreadyExists,
                        format!("multicast group {id} already exists"),
                    ));
                }
                (SetMode::Modify, false) => return Err(group_missing(*id)),
                _ => {}
            }
            check_ports(
                ports,
                "multicast_group_entry",
                replicas.iter().map(|r| &r.port),
            )?;
            pre.mc_group_set(*id, replicas).map_err(engine_error)?;
        }
        PreOp::GroupDelete(id) => {
            pre.mc_group_delete(*id).ok_or_else(|| group_missing(*id))?;
        }
        PreOp::SessionSet {
            id, session, mode, ..
        } => {
            let exists = pre.clone_session(*id).is_some();
            match (mode, exists) {
                (SetMode::Insert, true) => {
                    return Err(P4Error::new(
                        Code::AlreadyExists,
                        format!("clone session {id} already exists"),
                    ));
                }
                (SetMode::Modify, false) => return Err(session_missing(*id)),
                _ => {}
            }
            check_ports(
                ports,
                "clone_session_entry",
                session.replicas.iter().map(|r| &r.port),
            )?;
            pre.mirroring_add(*id, session.clone())
                .map_err(engine_error)?;
        }
        PreOp::SessionDelete(id) => {
            if !pre.mirroring_delete(*id) {
                return Err(session_missing(*id));
            }
        }
    }
    Ok(())
}

fn group_missing(id: u16) -> P4Error {
    P4Error::new(Code::NotFound, format!("multicast group {id} not found"))
}

fn session_missing(id: u32) -> P4Error {
    P4Error::new(Code::NotFound, format!("clone session {id} not found"))
}

/// The operation that undoes `op` on `pre` as it is now; `None` when `op`
/// will fail (nothing to undo).
pub fn inverse(pre: &Pre, op: &PreOp) -> Option<PreOp> {
    Some(match op {
        PreOp::GroupSet { id, mode, .. } => match (mode, pre.mc_group(*id)) {
            (SetMode::Insert, None) => PreOp::GroupDelete(*id),
            (SetMode::Modify, Some(old)) => PreOp::GroupSet {
                id: *id,
                replicas: old.to_vec(),
                mode: SetMode::Modify,
                echo: Echo::default(),
            },
            _ => return None,
        },
        PreOp::GroupDelete(id) => PreOp::GroupSet {
            id: *id,
            replicas: pre.mc_group(*id)?.to_vec(),
            mode: SetMode::Insert,
            echo: Echo::default(),
        },
        PreOp::SessionSet { id, mode, .. } => match (mode, pre.clone_session(*id)) {
            (SetMode::Insert, None) => PreOp::SessionDelete(*id),
            (SetMode::Modify, Some(old)) => PreOp::SessionSet {
                id: *id,
                session: old.clone(),
                mode: SetMode::Modify,
                echo: Echo::default(),
            },
            _ => return None,
        },
        PreOp::SessionDelete(id) => PreOp::SessionSet {
            id: *id,
            session: pre.clone_session(*id)?.clone(),
            mode: SetMode::Insert,
            echo: Echo::default(),
        },
    })
}

fn replica_to_proto(port: u16, instance: u16, form: PortForm) -> pb::Replica {
    use pb::replica::PortKind;
    pb::Replica {
        port_kind: Some(match form {
            PortForm::EgressPort => PortKind::EgressPort(u32::from(port)),
            PortForm::Bytes => PortKind::Port(encode(u128::from(port))),
        }),
        instance: u32::from(instance),
        backup_replicas: Vec::new(),
    }
}

fn form(echo: Option<&Echo>, i: usize) -> PortForm {
    echo.and_then(|e| e.forms.get(i).copied())
        .unwrap_or_default()
}

fn group_to_proto(id: u16, replicas: &[McReplica], echo: Option<&Echo>) -> pb::MulticastGroupEntry {
    pb::MulticastGroupEntry {
        multicast_group_id: u32::from(id),
        replicas: replicas
            .iter()
            .enumerate()
            .map(|(i, r)| replica_to_proto(r.port, r.rid, form(echo, i)))
            .collect(),
        metadata: echo.map(|e| e.metadata.clone()).unwrap_or_default(),
    }
}

fn session_to_proto(id: u32, s: &CloneSession, echo: Option<&Echo>) -> pb::CloneSessionEntry {
    pb::CloneSessionEntry {
        session_id: id,
        replicas: s
            .replicas
            .iter()
            .enumerate()
            .map(|(i, r)| replica_to_proto(r.port, r.rid, form(echo, i)))
            .collect(),
        class_of_service: u32::from(s.class_of_service),
        packet_length_bytes: s
            .truncate_bytes
            .map_or(0, |n| i32::try_from(n).unwrap_or(i32::MAX)),
    }
}

fn entity(t: pb::packet_replication_engine_entry::Type) -> pb::Entity {
    pb::Entity {
        entity: Some(pb::entity::Entity::PacketReplicationEngineEntry(
            pb::PacketReplicationEngineEntry { r#type: Some(t) },
        )),
    }
}

/// Appends the entries `e` selects to `out`. An unset type reads groups
/// and sessions; id 0 is the wildcard; an unknown id reads nothing.
/// Without an engine, wildcard reads are empty and exact reads
/// UNIMPLEMENTED.
pub fn read(
    pre: Option<&Pre>,
    echo: &PreEcho,
    e: &pb::PacketReplicationEngineEntry,
    out: &mut Vec<pb::Entity>,
) -> Result<(), P4Error> {
    use pb::packet_replication_engine_entry::Type;
    let (group, session) = match &e.r#type {
        None => (Some(0), Some(0)),
        Some(Type::MulticastGroupEntry(g)) => (Some(g.multicast_group_id), None),
        Some(Type::CloneSessionEntry(c)) => (None, Some(c.session_id)),
    };
    let Some(pre) = pre else {
        if group.unwrap_or(0) == 0 && session.unwrap_or(0) == 0 {
            return Ok(());
        }
        return Err(P4Error::unimplemented(
            "packet_replication_engine_entry (this device has no PRE)",
        ));
    };
    if let Some(want) = group {
        for (id, replicas) in pre.mc_groups() {
            if want == 0 || want == u32::from(id) {
                out.push(entity(Type::MulticastGroupEntry(group_to_proto(
                    id,
                    replicas,
                    echo.groups.get(&id),
                ))));
            }
        }
    }
    if let Some(want) = session {
        for (id, s) in pre.clone_sessions() {
            if want == 0 || want == id {
                out.push(entity(Type::CloneSessionEntry(session_to_proto(
                    id,
                    s,
                    echo.sessions.get(&id),
                ))));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(port: u32, instance: u32) -> pb::Replica {
        pb::Replica {
            port_kind: Some(pb::replica::PortKind::EgressPort(port)),
            instance,
            backup_replicas: Vec::new(),
        }
    }

    fn group(id: u32, replicas: Vec<pb::Replica>) -> pb::PacketReplicationEngineEntry {
        pb::PacketReplicationEngineEntry {
            r#type: Some(
                pb::packet_replication_engine_entry::Type::MulticastGroupEntry(
                    pb::MulticastGroupEntry {
                        multicast_group_id: id,
                        replicas,
                        metadata: vec![7],
                    },
                ),
            ),
        }
    }

    #[test]
    fn inverse_of_each_op_restores_the_engine() {
        let mut pre = Pre::new();
        let ins = pre_op(UpdateType::Insert, &group(5, vec![rep(1, 0), rep(2, 0)])).unwrap();
        let inv = inverse(&pre, &ins).unwrap();
        apply(&mut pre, None, &ins).unwrap();
        let before: Vec<McReplica> = pre.mc_group(5).unwrap().to_vec();
        let m = pre_op(UpdateType::Modify, &group(5, vec![rep(3, 1)])).unwrap();
        let minv = inverse(&pre, &m).unwrap();
        apply(&mut pre, None, &m).unwrap();
        apply(&mut pre, None, &minv).unwrap();
        assert_eq!(pre.mc_group(5).unwrap(), before.as_slice());
        apply(&mut pre, None, &inv).unwrap();
        assert!(pre.mc_group(5).is_none());
        // An op that will fail has nothing to undo.
        assert!(inverse(&pre, &m).is_none());
    }

    #[test]
    fn ports_outside_the_device_are_refused_naming_the_replica() {
        let mut pre = Pre::new();
        let ports = Some(PortSpace {
            front_panel: 4,
            cpu_port: Some(510),
        });
        let op = pre_op(UpdateType::Insert, &group(5, vec![rep(1, 0), rep(4, 0)])).unwrap();
        let e = apply(&mut pre, ports, &op).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(
            e.message
                .starts_with("multicast_group_entry.replicas[1].port"),
            "{}",
            e.message
        );
        assert!(pre.mc_group(5).is_none());
        let op = pre_op(UpdateType::Insert, &group(5, vec![rep(510, 0)])).unwrap();
        apply(&mut pre, ports, &op).unwrap();
    }
}
