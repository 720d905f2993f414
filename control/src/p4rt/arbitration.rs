//! Controller arbitration per (device, role) (spec §5 "Client Arbitration
//! and Controller Replication", §5.3 "Rules for Handling
//! MasterArbitrationUpdate", §5.4 "Client Arbitration Notifications",
//! §16.2 "Client Arbitration Update").
//!
//! * The server keeps, per (device, role), the highest election id it has
//!   ever seen (`election_id_past`), until the process restarts. A
//!   controller whose id is ≥ that becomes (or stays) primary and raises
//!   it; any other is a backup. When the primary leaves there is no
//!   primary until a controller arbitrates with an id ≥ the highest seen:
//!   lower-id backups are not promoted, they are told NOT_FOUND with the
//!   highest id (finsy re-bids with it).
//! * An unset election id is lower than every id (0 included): such a
//!   controller is always a backup (§16.2.1).
//! * Errors end the stream: an unknown device NOT_FOUND (checked by the
//!   service), an election id another live controller of the (device,
//!   role) uses INVALID_ARGUMENT ("election id N is already used", the
//!   text finsy retries on), a changed device id or role on an open stream
//!   FAILED_PRECONDITION, a role config outside the scheme INVALID_ARGUMENT
//!   ([`super::roles`]).
//! * Notifications (§5.4) carry the device, the role with the config a
//!   primary last set, the highest election id (unset if there has never
//!   been a primary) and a status: OK for the primary, ALREADY_EXISTS for
//!   backups while there is a primary, NOT_FOUND when there is none. Every
//!   controller of the group is told when the primary changes, downgrades
//!   or leaves; a new backup only itself.
//! * Writes and pipeline changes (§12, §14): an unknown role is NOT_FOUND,
//!   a writer that is not the primary PERMISSION_DENIED. Deviation (see
//!   `control/README.md`): a request without an election id is accepted
//!   while no controller of that (device, role) has ever arbitrated with
//!   one (PTF `base_test.py`-style clients never do).
//!
//! Roles the switch defines ([`super::roles::PredefinedRole`]) exist from
//! the start, with their fixed config; other roles exist once a
//! controller has arbitrated for them.

use std::collections::{BTreeMap, HashMap};

use proto::p4::v1 as pb;
use tokio::sync::mpsc;
use tonic::Code;

use super::error::P4Error;
use super::roles::{PredefinedRole, RoleAccess, RoleScope};

/// Where a stream's replies go.
pub type StreamTx = mpsc::UnboundedSender<Result<pb::StreamMessageResponse, tonic::Status>>;

/// A 128-bit election id from its wire form; `None` when unset (an id of
/// `{0, 0}` is a valid id, the lowest).
pub fn election_id(u: Option<&pb::Uint128>) -> Option<u128> {
    let u = u?;
    Some((u128::from(u.high) << 64) | u128::from(u.low))
}

fn to_wire(v: u128) -> pb::Uint128 {
    pb::Uint128 {
        high: (v >> 64) as u64,
        low: v as u64,
    }
}

type GroupKey = (u64, String);

struct Controller {
    stream: u64,
    election_id: Option<u128>,
    tx: StreamTx,
}

/// The controllers of one (device, role) and what the server remembers
/// about it.
#[derive(Default)]
struct Group {
    /// `election_id_past`: the highest id ever seen; `Some` once there has
    /// been a primary.
    highest: Option<u128>,
    /// The primary's stream.
    primary: Option<u64>,
    controllers: Vec<Controller>,
    /// The role config a primary last set (or the switch's own).
    config: Option<prost_types::Any>,
    scope: RoleScope,
    /// The switch defines this role: its config is fixed.
    predefined: bool,
}

/// Live controllers and remembered election ids, grouped by (device, role name).
#[derive(Default)]
pub struct Arbitration {
    groups: HashMap<GroupKey, Group>,
    by_stream: HashMap<u64, GroupKey>,
}

impl std::fmt::Debug for Arbitration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arbitration")
            .field("streams", &self.by_stream.len())
            .finish()
    }
}

fn role_name(role: Option<&pb::Role>) -> String {
    role.map(|r| r.name.clone()).unwrap_or_default()
}

fn role_label(role: &str) -> String {
    if role.is_empty() {
        "the default role".into()
    } else {
        format!("role '{role}'")
    }
}

impl Arbitration {
    /// Arbitration for `device`, with the default role and the switch's
    /// predefined roles in place.
    pub fn new(device: u64, predefined: &[PredefinedRole]) -> Self {
        let mut arb = Arbitration::default();
        arb.groups.insert((device, String::new()), Group::default());
        for r in predefined {
            arb.groups.insert(
                (device, r.name.clone()),
                Group {
                    config: Some(r.config.clone()),
                    scope: r.scope.clone(),
                    predefined: true,
                    ..Default::default()
                },
            );
        }
        arb
    }

    /// Replaces the predefined roles of `device` after a pipeline change:
    /// their scopes follow the new program's owned tables (controllers
    /// and remembered election ids stay), and a predefined role the new
    /// program has no tables for keeps its name but may write nothing.
    pub fn redefine(&mut self, device: u64, predefined: &[PredefinedRole]) {
        for ((d, name), group) in &mut self.groups {
            if *d == device && group.predefined && !predefined.iter().any(|r| &r.name == name) {
                let none = PredefinedRole::owning_nothing(name);
                group.config = Some(none.config);
                group.scope = none.scope;
            }
        }
        for r in predefined {
            let group = self.groups.entry((device, r.name.clone())).or_default();
            group.config = Some(r.config.clone());
            group.scope = r.scope.clone();
            group.predefined = true;
        }
    }

    /// Handles an arbitration message from `stream` (first or later). On
    /// error the caller ends the stream with the error's code.
    pub fn update(
        &mut self,
        stream: u64,
        device_id: u64,
        role: Option<pb::Role>,
        election_id: Option<u128>,
        tx: StreamTx,
    ) -> Result<(), P4Error> {
        let key = (device_id, role_name(role.as_ref()));
        if let Some(old) = self.by_stream.get(&stream) {
            if old.0 != key.0 {
                return Err(P4Error::new(
                    Code::FailedPrecondition,
                    format!(
                        "arbitration.device_id: this stream is for device {}, not {}; open a new stream for another device",
                        old.0, key.0
                    ),
                ));
            }
            if old.1 != key.1 {
                return Err(P4Error::new(
                    Code::FailedPrecondition,
                    format!(
                        "arbitration.role: this stream is for {}, not {}; open a new stream to change roles",
                        role_label(&old.1),
                        role_label(&key.1)
                    ),
                ));
            }
        }
        let config = role.and_then(|r| r.config);
        let group = self.groups.entry(key.clone()).or_default();
        // The config is checked whoever sends it (§5.3), and kept only
        // from a primary.
        let scope = match (&config, group.predefined) {
            (Some(c), true) if Some(c) != group.config.as_ref() => {
                return Err(P4Error::invalid(
                    "arbitration.role.config",
                    format!(
                        "the switch fixes the config of role '{}'; leave it unset",
                        key.1
                    ),
                ));
            }
            (_, true) => None,
            (c, false) => Some(RoleScope::from_config(c.as_ref())?),
        };
        if let Some(id) = election_id
            && group
                .controllers
                .iter()
                .any(|c| c.stream != stream && c.election_id == Some(id))
        {
            return Err(P4Error::new(
                Code::InvalidArgument,
                format!(
                    "election id {id} is already used by another controller of device {} {}",
                    key.0,
                    role_label(&key.1)
                ),
            ));
        }
        let was_primary = group.primary == Some(stream);
        group.controllers.retain(|c| c.stream != stream);
        group.controllers.push(Controller {
            stream,
            election_id,
            tx,
        });
        self.by_stream.insert(stream, key.clone());
        let group = self.groups.get_mut(&key).expect("inserted above");
        let primary = election_id.filter(|&id| group.highest.is_none_or(|h| id >= h));
        if let Some(id) = primary {
            group.highest = Some(id);
            group.primary = Some(stream);
            if let Some(scope) = scope {
                group.config = config;
                group.scope = scope;
            }
            // A new primary, a primary re-arbitrating (its config may have
            // changed) or the first primary: everyone is told (§5.3).
            self.notify(&key, None);
        } else if was_primary {
            // The primary downgraded itself.
            group.primary = None;
            self.notify(&key, None);
        } else {
            self.notify(&key, Some(stream));
        }
        Ok(())
    }

    /// Forgets `stream` (closed). If it was the primary, the group has none
    /// until a controller arbitrates with an id ≥ the highest seen, and
    /// every remaining controller is told.
    pub fn leave(&mut self, stream: u64) {
        let Some(key) = self.by_stream.remove(&stream) else {
            return;
        };
        let Some(group) = self.groups.get_mut(&key) else {
            return;
        };
        group.controllers.retain(|c| c.stream != stream);
        if group.primary == Some(stream) {
            group.primary = None;
            tracing::info!(device = key.0, role = %key.1, highest = ?group.highest, "primary left; no primary until an election id >= the highest arbitrates");
            self.notify(&key, None);
        }
    }

    /// Sends the advisory update to every controller of `key`, or to `only`.
    fn notify(&self, key: &GroupKey, only: Option<u64>) {
        let Some(group) = self.groups.get(key) else {
            return;
        };
        for c in group
            .controllers
            .iter()
            .filter(|c| only.is_none_or(|s| s == c.stream))
        {
            let (code, msg) = match group.primary {
                Some(p) if p == c.stream => (Code::Ok, "primary"),
                Some(_) => (Code::AlreadyExists, "backup: another controller is primary"),
                None => (
                    Code::NotFound,
                    "backup: no primary (arbitrate with an election id >= the highest seen to become primary)",
                ),
            };
            let update = pb::MasterArbitrationUpdate {
                device_id: key.0,
                role: (!key.1.is_empty() || group.config.is_some()).then(|| pb::Role {
                    name: key.1.clone(),
                    config: group.config.clone(),
                    ..Default::default()
                }),
                election_id: group.highest.map(to_wire),
                status: Some(proto::google::rpc::Status {
                    code: code as i32,
                    message: msg.into(),
                    details: vec![],
                }),
            };
            let _ = c.tx.send(Ok(pb::StreamMessageResponse {
                update: Some(pb::stream_message_response::Update::Arbitration(update)),
            }));
        }
    }

    /// The device `stream` arbitrated for, if it has.
    pub fn stream_device(&self, stream: u64) -> Option<u64> {
        self.by_stream.get(&stream).map(|k| k.0)
    }

    /// Whether `stream` is the primary of its group.
    pub fn is_primary(&self, stream: u64) -> bool {
        self.by_stream
            .get(&stream)
            .and_then(|k| self.groups.get(k))
            .is_some_and(|g| g.primary == Some(stream))
    }

    /// The scope of `stream`'s role if it is a primary.
    pub fn primary_scope(&self, stream: u64) -> Option<&RoleScope> {
        let g = self.groups.get(self.by_stream.get(&stream)?)?;
        (g.primary == Some(stream)).then_some(&g.scope)
    }

    /// The streams of the primaries of `device` whose role covers entity
    /// `id` (where notifications about it go).
    pub fn primaries_covering(&self, device: u64, id: u32) -> Vec<StreamTx> {
        self.groups
            .iter()
            .filter(|((d, _), g)| *d == device && g.scope.covers(id))
            .filter_map(|(_, g)| {
                let p = g.primary?;
                g.controllers
                    .iter()
                    .find(|c| c.stream == p)
                    .map(|c| c.tx.clone())
            })
            .collect()
    }

    fn group(&self, device_id: u64, role: &str) -> Result<&Group, P4Error> {
        self.groups
            .get(&(device_id, role.to_string()))
            .ok_or_else(|| {
                P4Error::new(
                    Code::NotFound,
                    format!(
                        "role: '{role}' is not a role of device {device_id} (no controller has arbitrated for it)"
                    ),
                )
            })
    }

    /// The scope of `role` (NOT_FOUND for a role nobody arbitrated for).
    pub fn scope(&self, device_id: u64, role: &str) -> Result<&RoleScope, P4Error> {
        self.group(device_id, role).map(|g| &g.scope)
    }

    /// Checks that a Write/Set with `election_id` for (device, role) comes
    /// from the primary (§12: NOT_FOUND for an unknown role, then
    /// PERMISSION_DENIED) and returns what that role may write.
    pub fn check_writer(
        &self,
        device_id: u64,
        role: &str,
        election_id: Option<u128>,
    ) -> Result<RoleAccess, P4Error> {
        let group = self.group(device_id, role)?;
        let primary_id = group.primary.and_then(|p| {
            group
                .controllers
                .iter()
                .find(|c| c.stream == p)
                .and_then(|c| c.election_id)
        });
        let highest = group.highest.map_or("none".to_string(), |h| h.to_string());
        match (election_id, primary_id) {
            (Some(id), Some(p)) if id == p => {}
            (None, _) if group.highest.is_none() => {}
            (Some(id), Some(p)) => {
                return Err(P4Error::new(
                    Code::PermissionDenied,
                    format!(
                        "election_id: {id} is not the primary's ({p}) for {}; only the primary controller may write",
                        role_label(role)
                    ),
                ));
            }
            (Some(id), None) => {
                return Err(P4Error::new(
                    Code::PermissionDenied,
                    format!(
                        "election_id: {id} is not the primary's: {} has no primary (highest election id seen: {highest}); arbitrate on a StreamChannel with an id >= that first",
                        role_label(role)
                    ),
                ));
            }
            (None, _) => {
                return Err(P4Error::new(
                    Code::PermissionDenied,
                    format!(
                        "election_id: missing; {} has had a primary (highest election id seen: {highest}), so writes must carry the primary's id",
                        role_label(role)
                    ),
                ));
            }
        }
        let exclusive_elsewhere: BTreeMap<u32, String> = self
            .groups
            .iter()
            .filter(|((d, r), _)| *d == device_id && r != role)
            .flat_map(|((_, r), g)| g.scope.exclusive.iter().map(move |&id| (id, r.clone())))
            .collect();
        Ok(RoleAccess {
            role: role.to_string(),
            scope: group.scope.clone(),
            exclusive_elsewhere,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Rx = mpsc::UnboundedReceiver<Result<pb::StreamMessageResponse, tonic::Status>>;

    fn chan() -> (StreamTx, Rx) {
        mpsc::unbounded_channel()
    }

    /// The last arbitration update received: (status code, election id).
    fn last(rx: &mut Rx) -> Option<(i32, Option<u128>)> {
        let mut last = None;
        while let Ok(Ok(m)) = rx.try_recv() {
            if let Some(pb::stream_message_response::Update::Arbitration(a)) = m.update {
                last = Some((a.status.unwrap().code, election_id(a.election_id.as_ref())));
            }
        }
        last
    }

    const OK: i32 = Code::Ok as i32;
    const EXISTS: i32 = Code::AlreadyExists as i32;
    const NOT_FOUND: i32 = Code::NotFound as i32;

    #[test]
    fn the_highest_id_ever_seen_keeps_primacy_after_the_primary_leaves() {
        let mut arb = Arbitration::new(1, &[]);
        let (t1, mut r1) = chan();
        let (t2, mut r2) = chan();
        arb.update(1, 1, None, Some(10), t1).unwrap();
        assert_eq!(last(&mut r1), Some((OK, Some(10))));
        arb.update(2, 1, None, Some(20), t2).unwrap();
        assert_eq!(last(&mut r2), Some((OK, Some(20))));
        assert_eq!(
            last(&mut r1),
            Some((EXISTS, Some(20))),
            "old primary demoted"
        );
        assert!(arb.check_writer(1, "", Some(20)).is_ok());
        assert_eq!(
            arb.check_writer(1, "", Some(10)).unwrap_err().code,
            Code::PermissionDenied
        );

        arb.leave(2);
        assert_eq!(
            last(&mut r1),
            Some((NOT_FOUND, Some(20))),
            "no promotion: told there is no primary, with the highest id"
        );
        assert!(!arb.is_primary(1));
        assert_eq!(
            arb.check_writer(1, "", Some(10)).unwrap_err().code,
            Code::PermissionDenied
        );

        // A lower id stays a backup; an id equal to the highest wins.
        let (t3, mut r3) = chan();
        arb.update(3, 1, None, Some(15), t3).unwrap();
        assert_eq!(last(&mut r3), Some((NOT_FOUND, Some(20))));
        assert!(last(&mut r1).is_none(), "a new backup tells only itself");
        arb.update(1, 1, None, Some(20), chan().0).unwrap();
        assert!(arb.is_primary(1));
        assert_eq!(last(&mut r3), Some((EXISTS, Some(20))));
    }

    #[test]
    fn unset_is_lower_than_zero_and_notifications_leave_the_id_unset_before_any_primary() {
        let mut arb = Arbitration::new(1, &[]);
        let (t1, mut r1) = chan();
        arb.update(1, 1, None, None, t1).unwrap();
        assert_eq!(
            last(&mut r1),
            Some((NOT_FOUND, None)),
            "never a primary: id unset"
        );
        assert!(
            arb.check_writer(1, "", None).is_ok(),
            "id-less writes while no id was ever seen"
        );
        let (t2, mut r2) = chan();
        arb.update(2, 1, None, Some(0), t2).unwrap();
        assert_eq!(last(&mut r2), Some((OK, Some(0))), "{{0,0}} is a real id");
        assert_eq!(last(&mut r1), Some((EXISTS, Some(0))));
        assert_eq!(
            arb.check_writer(1, "", None).unwrap_err().code,
            Code::PermissionDenied
        );
    }

    #[test]
    fn a_primary_downgrading_itself_tells_everyone() {
        let mut arb = Arbitration::new(1, &[]);
        let (t1, mut r1) = chan();
        let (t2, mut r2) = chan();
        arb.update(1, 1, None, Some(9), t1.clone()).unwrap();
        arb.update(2, 1, None, Some(5), t2).unwrap();
        last(&mut r1);
        last(&mut r2);
        arb.update(1, 1, None, Some(3), t1).unwrap();
        assert!(!arb.is_primary(1));
        assert_eq!(last(&mut r1), Some((NOT_FOUND, Some(9))));
        assert_eq!(last(&mut r2), Some((NOT_FOUND, Some(9))));
    }

    #[test]
    fn stream_identity_and_duplicate_ids() {
        let mut arb = Arbitration::new(1, &[]);
        arb.update(1, 1, None, Some(5), chan().0).unwrap();
        let e = arb.update(2, 1, None, Some(5), chan().0).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(
            e.message.contains("election id 5 is already used"),
            "{}",
            e.message
        );
        let role = pb::Role {
            name: "other".into(),
            ..Default::default()
        };
        arb.update(3, 1, Some(role.clone()), Some(5), chan().0)
            .unwrap();
        assert_eq!(
            arb.update(1, 2, None, Some(5), chan().0).unwrap_err().code,
            Code::FailedPrecondition,
            "device id changed"
        );
        assert_eq!(
            arb.update(1, 1, Some(role), Some(5), chan().0)
                .unwrap_err()
                .code,
            Code::FailedPrecondition,
            "role changed"
        );
        assert_eq!(
            arb.check_writer(1, "nobody", Some(5)).unwrap_err().code,
            Code::NotFound
        );
    }

    #[test]
    fn a_pipeline_change_moves_the_predefined_roles_to_the_new_tables() {
        use crate::p4rt::roles::{OwnedTableAccess, predefined_roles};
        let fabric = "roceswitch.fabric".to_string();
        let owned = |ids: &[u32]| ids.iter().map(|&id| (id, fabric.clone())).collect();
        let roles = predefined_roles(&owned(&[0x0200_0001]), OwnedTableAccess::OwnerOnly);
        let mut arb = Arbitration::new(1, &roles);
        let role = pb::Role {
            name: fabric.clone(),
            ..Default::default()
        };
        arb.update(7, 1, Some(role), Some(3), chan().0).unwrap();
        let default_role = |arb: &Arbitration| arb.check_writer(1, "", None).unwrap();
        let fabric_role = |arb: &Arbitration| arb.check_writer(1, &fabric, Some(3)).unwrap();
        assert!(default_role(&arb).check(Some(0x0200_0001), "t").is_err());

        // The new program owns another table: the old id is free, the new
        // one is the fabric role's alone; its primary stays primary.
        let roles = predefined_roles(&owned(&[0x0200_0009]), OwnedTableAccess::OwnerOnly);
        arb.redefine(1, &roles);
        assert!(arb.is_primary(7));
        assert!(default_role(&arb).check(Some(0x0200_0001), "t").is_ok());
        assert_eq!(
            default_role(&arb)
                .check(Some(0x0200_0009), "t")
                .unwrap_err()
                .code,
            Code::PermissionDenied
        );
        assert!(fabric_role(&arb).check(Some(0x0200_0009), "t").is_ok());
        assert!(fabric_role(&arb).check(Some(0x0200_0001), "t").is_err());

        // A program without fabric tables: the role still exists and may
        // write nothing; the default role may write everything.
        arb.redefine(1, &[]);
        assert!(fabric_role(&arb).check(Some(0x0200_0009), "t").is_err());
        assert!(default_role(&arb).check(Some(0x0200_0009), "t").is_ok());
    }
}
