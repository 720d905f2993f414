//! Watch ports of action selector group members (spec §9.2.2; the
//! server-side pruning the spec's "Port Translation for PSA Extern APIs"
//! describes): a member whose watch port is down is left out of its
//! group's selection until the port comes back.
//!
//! Contract:
//! * A watch port (`watch_port` bytes, or the deprecated `int32 watch`) is
//!   empty (none) or a port of the switch: front panel or CPU port,
//!   INVALID_ARGUMENT otherwise (checked against the device's ports when
//!   the group is written).
//! * The service keeps every member of a watched group as written (the
//!   shadow's `watched`); the runtime holds the members whose watch port is
//!   up ([`live`]). Reads report the members as written, watch ports
//!   included.
//! * Link changes reach the runtime through [`refresh`], which the service
//!   runs every [`REFRESH_PERIOD`] while any group is watched: a member
//!   leaves or rejoins the selection within that period of its port's
//!   change. A group whose watch ports are all down selects nothing: its
//!   entries hit and run no action.
//! * A member still listed in a watched group cannot be deleted
//!   (FAILED_PRECONDITION), even while it is pruned.
//!
//! Nothing here runs on the packet path.

use std::collections::HashMap;

use p4_target::runtime::RuntimeApi;
use proto::p4::v1 as pb;

use super::bytes::{decode, encode};
use super::error::P4Error;
use crate::device::PortSpace;

/// How often link changes are applied to watched groups.
pub const REFRESH_PERIOD: std::time::Duration = std::time::Duration::from_millis(50);

/// How a watch port travelled, so reads return the same form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchForm {
    /// `bytes watch_port`.
    Bytes,
    /// The deprecated `int32 watch`.
    Int,
}

/// A member's watch port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watch {
    /// The port whose link the member depends on.
    pub port: u16,
    /// How it was written.
    pub form: WatchForm,
}

/// A member of a watched group, as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchedMember {
    /// Member id.
    pub member: u32,
    /// Weight.
    pub weight: u32,
    /// Watch port, if any.
    pub watch: Option<Watch>,
}

/// Decodes a member's watch field (`field` names it in errors): `None` for
/// no watch port (unset, empty bytes, or 0 in the deprecated field).
pub fn decode_watch(
    watch: Option<&pb::action_profile_group::member::WatchKind>,
    field: &str,
) -> Result<Option<Watch>, P4Error> {
    use pb::action_profile_group::member::WatchKind;
    let (port, form) = match watch {
        None => return Ok(None),
        Some(WatchKind::WatchPort(b)) if b.is_empty() => return Ok(None),
        Some(WatchKind::WatchPort(b)) => (
            decode(b, 32, format_args!("{field}.watch_port"))?,
            WatchForm::Bytes,
        ),
        Some(WatchKind::Watch(0)) => return Ok(None),
        Some(WatchKind::Watch(p)) => (u128::from(*p as u32), WatchForm::Int),
    };
    let port = u16::try_from(port)
        .ok()
        .filter(|&p| p < p4_target::v1model::DROP_PORT)
        .ok_or_else(|| {
            P4Error::invalid(
                format!("{field}.watch_port"),
                format!("port {port} is not a port of this switch (0..=510)"),
            )
        })?;
    Ok(Some(Watch { port, form }))
}

/// Checks that every watch port of `members` is a port of the device.
pub fn check_ports(
    members: &[WatchedMember],
    ports: Option<PortSpace>,
    field: &str,
) -> Result<(), P4Error> {
    let Some(space) = ports else { return Ok(()) };
    for (i, m) in members.iter().enumerate() {
        if let Some(w) = m.watch
            && !space.contains(w.port)
        {
            return Err(P4Error::invalid(
                format!("{field}.members[{i}].watch_port"),
                format!("port {} does not exist (this switch has {space})", w.port),
            ));
        }
    }
    Ok(())
}

/// The members the selection uses: those without a watch port or whose
/// watch port is not in `down`.
pub fn live(members: &[WatchedMember], down: &[u16]) -> Vec<(u32, u32)> {
    members
        .iter()
        .filter(|m| m.watch.is_none_or(|w| !down.contains(&w.port)))
        .map(|m| (m.member, m.weight))
        .collect()
}

/// A member as a read reports it.
pub fn to_proto(m: &WatchedMember) -> pb::action_profile_group::Member {
    use pb::action_profile_group::member::WatchKind;
    pb::action_profile_group::Member {
        member_id: m.member,
        weight: i32::try_from(m.weight).unwrap_or(i32::MAX),
        watch_kind: m.watch.map(|w| match w.form {
            WatchForm::Bytes => WatchKind::WatchPort(encode(u128::from(w.port))),
            WatchForm::Int => WatchKind::Watch(i32::from(w.port)),
        }),
    }
}

/// Rewrites the watched groups whose selection no longer matches the links
/// (`down`: ports whose link is down). A group that changed since the
/// caller looked (deleted, or rewritten) is left alone.
pub fn refresh(
    rt: &mut dyn RuntimeApi,
    watched: &HashMap<(u32, u32), Vec<WatchedMember>>,
    down: &[u16],
) {
    for (&(profile, group), members) in watched {
        let want = live(members, down);
        let Ok(groups) = rt.groups(profile) else {
            continue;
        };
        let Some((_, installed)) = groups.into_iter().find(|(g, _)| *g == group) else {
            continue;
        };
        if installed != want
            && let Err(e) = rt.group_write(profile, group, &want, true)
        {
            tracing::warn!(profile, group, error = %e, "watch ports: group not updated");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(member: u32, port: Option<u16>) -> WatchedMember {
        WatchedMember {
            member,
            weight: 1,
            watch: port.map(|port| Watch {
                port,
                form: WatchForm::Bytes,
            }),
        }
    }

    #[test]
    fn members_whose_watch_port_is_down_leave_the_selection() {
        let members = [m(1, Some(2)), m(2, Some(3)), m(3, None)];
        assert_eq!(live(&members, &[]), vec![(1, 1), (2, 1), (3, 1)]);
        assert_eq!(live(&members, &[2]), vec![(2, 1), (3, 1)]);
        assert_eq!(live(&members, &[2, 3]), vec![(3, 1)]);
    }

    #[test]
    fn empty_and_zero_mean_no_watch_port_and_bad_ports_are_refused() {
        use pb::action_profile_group::member::WatchKind;
        assert_eq!(decode_watch(None, "m").unwrap(), None);
        assert_eq!(
            decode_watch(Some(&WatchKind::WatchPort(vec![])), "m").unwrap(),
            None
        );
        assert_eq!(decode_watch(Some(&WatchKind::Watch(0)), "m").unwrap(), None);
        let w = decode_watch(Some(&WatchKind::WatchPort(vec![0, 3])), "m").unwrap();
        assert_eq!(
            w,
            Some(Watch {
                port: 3,
                form: WatchForm::Bytes
            })
        );
        let e = decode_watch(Some(&WatchKind::WatchPort(vec![2, 0])), "m").unwrap_err();
        assert_eq!(e.code, tonic::Code::InvalidArgument);
        assert!(e.message.starts_with("m.watch_port"), "{}", e.message);
        assert!(decode_watch(Some(&WatchKind::Watch(-1)), "m").is_err());
        // Read back in the form written, canonical.
        let back = to_proto(&m(7, Some(3)));
        assert_eq!(back.watch_kind, Some(WatchKind::WatchPort(vec![3])));
    }
}
