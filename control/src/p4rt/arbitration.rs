//! Controller arbitration per (device, role) (spec "Rules for Handling
//! MasterArbitrationUpdate", reference §1.4 and pitfall 3).
//!
//! Primacy is decided among live streams only: the primary is the live
//! controller with the highest election id, so when the primary leaves the
//! next highest is promoted and told (bmv2/PI behaviour; a finsy run after a
//! p4runtime-shell run is not locked out forever). A controller without an
//! election id is accepted as a backup and never becomes primary. Two live
//! controllers of one (device, role) may not share an id: the second gets
//! INVALID_ARGUMENT "election id ... already used" (finsy retries on that
//! text). Every arbitration reply carries the primary's (highest) id; its
//! status is OK for the primary, ALREADY_EXISTS for a backup while there is
//! a primary, NOT_FOUND for a backup when there is none. When the primary
//! changes, every controller of the group is told.

use std::collections::HashMap;

use proto::p4::v1 as pb;
use tokio::sync::mpsc;
use tonic::Code;

use super::error::P4Error;

/// Where a stream's replies go.
pub type StreamTx = mpsc::UnboundedSender<Result<pb::StreamMessageResponse, tonic::Status>>;

/// A 128-bit election id from its wire form (`None` for unset or zero).
pub fn election_id(u: Option<&pb::Uint128>) -> Option<u128> {
    let u = u?;
    let v = (u128::from(u.high) << 64) | u128::from(u.low);
    (v != 0).then_some(v)
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
    role: Option<pb::Role>,
    tx: StreamTx,
}

/// Live controllers, grouped by (device, role name).
#[derive(Default)]
pub struct Arbitration {
    groups: HashMap<GroupKey, Vec<Controller>>,
    by_stream: HashMap<u64, GroupKey>,
}

impl std::fmt::Debug for Arbitration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arbitration")
            .field("streams", &self.by_stream.len())
            .finish()
    }
}

fn primary(group: &[Controller]) -> Option<(u64, u128)> {
    group
        .iter()
        .filter_map(|c| Some((c.stream, c.election_id?)))
        .max_by_key(|&(_, id)| id)
}

fn role_name(role: Option<&pb::Role>) -> String {
    role.map(|r| r.name.clone()).unwrap_or_default()
}

impl Arbitration {
    /// Handles an arbitration message from `stream` (first or later).
    pub fn update(
        &mut self,
        stream: u64,
        device_id: u64,
        role: Option<pb::Role>,
        election_id: Option<u128>,
        tx: StreamTx,
    ) -> Result<(), P4Error> {
        let key = (device_id, role_name(role.as_ref()));
        if let Some(old) = self.by_stream.get(&stream)
            && *old != key
        {
            return Err(P4Error::invalid(
                "arbitration",
                "device_id and role cannot change on an open stream",
            ));
        }
        let group = self.groups.entry(key.clone()).or_default();
        if let Some(id) = election_id
            && group
                .iter()
                .any(|c| c.stream != stream && c.election_id == Some(id))
        {
            return Err(P4Error::new(
                Code::InvalidArgument,
                format!(
                    "election id {id} is already used by another controller of device {} role '{}'",
                    key.0, key.1
                ),
            ));
        }
        let before = primary(group);
        group.retain(|c| c.stream != stream);
        group.push(Controller {
            stream,
            election_id,
            role,
            tx,
        });
        self.by_stream.insert(stream, key.clone());
        let after = primary(&self.groups[&key]);
        self.notify(&key, before != after, Some(stream));
        Ok(())
    }

    /// Forgets `stream` (closed); promotes the next primary if it was one.
    pub fn leave(&mut self, stream: u64) {
        let Some(key) = self.by_stream.remove(&stream) else {
            return;
        };
        let Some(group) = self.groups.get_mut(&key) else {
            return;
        };
        let before = primary(group);
        group.retain(|c| c.stream != stream);
        if group.is_empty() {
            self.groups.remove(&key);
            return;
        }
        let after = primary(group);
        if before != after {
            tracing::info!(device = key.0, role = %key.1, ?after, "primary left; new primary");
            self.notify(&key, true, None);
        }
    }

    /// Sends arbitration updates: to everyone when `all`, else to `only`.
    fn notify(&self, key: &GroupKey, all: bool, only: Option<u64>) {
        let Some(group) = self.groups.get(key) else {
            return;
        };
        let prim = primary(group);
        for c in group.iter().filter(|c| all || Some(c.stream) == only) {
            let (code, msg) = match prim {
                Some((s, _)) if s == c.stream => (Code::Ok, "primary"),
                Some(_) => (Code::AlreadyExists, "backup: another controller is primary"),
                None => (Code::NotFound, "backup: no primary"),
            };
            let id = prim.map(|p| p.1).or(c.election_id).unwrap_or(0);
            let update = pb::MasterArbitrationUpdate {
                device_id: key.0,
                role: c.role.clone(),
                election_id: Some(to_wire(id)),
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

    /// Whether `stream` is the primary of its group.
    pub fn is_primary(&self, stream: u64) -> bool {
        self.by_stream
            .get(&stream)
            .and_then(|k| primary(&self.groups[k]))
            .is_some_and(|(s, _)| s == stream)
    }

    /// Checks that a Write/Set with `election_id` for (device, role) comes
    /// from the primary. Without an id, writes are allowed only while no
    /// controller of the group has one (arbitration not in use).
    pub fn check_writer(
        &self,
        device_id: u64,
        role: &str,
        election_id: Option<u128>,
    ) -> Result<(), P4Error> {
        let group = self.groups.get(&(device_id, role.to_string()));
        let prim = group.and_then(|g| primary(g)).map(|p| p.1);
        match (election_id, prim) {
            (Some(id), Some(p)) if id == p => Ok(()),
            (None, None) => Ok(()),
            (Some(id), Some(p)) => Err(P4Error::new(
                Code::PermissionDenied,
                format!(
                    "election_id: {id} is not the primary's ({p}); only the primary controller may write"
                ),
            )),
            (Some(id), None) => Err(P4Error::new(
                Code::PermissionDenied,
                format!(
                    "election_id: {id} does not belong to a connected controller; open a StreamChannel first"
                ),
            )),
            (None, Some(p)) => Err(P4Error::new(
                Code::PermissionDenied,
                format!("election_id: missing; the primary controller has id {p}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chan() -> (
        StreamTx,
        mpsc::UnboundedReceiver<Result<pb::StreamMessageResponse, tonic::Status>>,
    ) {
        mpsc::unbounded_channel()
    }

    fn last_status(
        rx: &mut mpsc::UnboundedReceiver<Result<pb::StreamMessageResponse, tonic::Status>>,
    ) -> Option<(i32, u128)> {
        let mut last = None;
        while let Ok(Ok(m)) = rx.try_recv() {
            if let Some(pb::stream_message_response::Update::Arbitration(a)) = m.update {
                last = Some((
                    a.status.unwrap().code,
                    election_id(a.election_id.as_ref()).unwrap_or(0),
                ));
            }
        }
        last
    }

    #[test]
    fn highest_live_id_is_primary_and_promotion_on_leave() {
        let mut arb = Arbitration::default();
        let (t1, mut r1) = chan();
        let (t2, mut r2) = chan();
        let (t3, mut r3) = chan();
        arb.update(1, 1, None, Some(10), t1).unwrap();
        assert_eq!(last_status(&mut r1), Some((0, 10)));
        arb.update(2, 1, None, Some(20), t2).unwrap();
        assert_eq!(last_status(&mut r2), Some((0, 20)));
        assert_eq!(
            last_status(&mut r1),
            Some((6, 20)),
            "old primary told it is now a backup"
        );
        arb.update(3, 1, None, None, t3).unwrap();
        assert_eq!(last_status(&mut r3), Some((6, 20)));
        assert!(arb.check_writer(1, "", Some(20)).is_ok());
        assert_eq!(
            arb.check_writer(1, "", Some(10)).unwrap_err().code,
            Code::PermissionDenied
        );
        assert_eq!(
            arb.check_writer(1, "", None).unwrap_err().code,
            Code::PermissionDenied
        );
        arb.leave(2);
        assert_eq!(
            last_status(&mut r1),
            Some((0, 10)),
            "next highest promoted and told"
        );
        assert_eq!(last_status(&mut r3), Some((6, 10)));
        assert!(arb.is_primary(1));
        arb.leave(1);
        assert_eq!(
            last_status(&mut r3),
            Some((5, 0)),
            "only an id-less backup left: no primary"
        );
    }

    #[test]
    fn duplicate_id_refused_with_finsy_matchable_text() {
        let mut arb = Arbitration::default();
        arb.update(1, 1, None, Some(5), chan().0).unwrap();
        let e = arb.update(2, 1, None, Some(5), chan().0).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(
            e.message.contains("election id 5 is already used"),
            "{}",
            e.message
        );
        // The same id under another role is fine.
        let role = pb::Role {
            name: "other".into(),
            ..Default::default()
        };
        arb.update(3, 1, Some(role), Some(5), chan().0).unwrap();
    }
}
