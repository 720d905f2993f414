//! Controller roles (spec §5.1 "Default Role", §5.2 "Role Config"): what a
//! role may write, whether its primary gets packet-ins and may push a
//! pipeline, and the tables other services of this switch own.
//!
//! * The default role (no `role`, name `""`) has full pipeline access, as
//!   the spec says, except for entities another role holds *exclusively*.
//! * Role configs use Stratum's scheme, `stratum.P4RoleConfig`
//!   (`stratum/public/proto/p4_role_config.proto`; finsy ships it):
//!   `exclusive_p4_ids` (only this role writes them), `shared_p4_ids`
//!   (this role and roles with full access write them),
//!   `receives_packet_ins`, `packet_in_filter`, `can_push_pipeline`. A
//!   role without a config has full access (§5.2). A config of any other
//!   type is INVALID_ARGUMENT.
//! * Tables another service of the switch owns (the fabric QoS service's
//!   tables of `roce_switch.p4`; `@roceswitch_owner("fabric")`) belong to a
//!   predefined role `roceswitch.<owner>` (`roceswitch.fabric`) whose
//!   config the switch fixes: it may write exactly those tables, gets no
//!   packet-ins and cannot push a pipeline. Whether the default role may
//!   write them too is the [`OwnedTableAccess`] policy: `shared` (the
//!   default: the ids are the role's `shared_p4_ids`, so a spec-following
//!   client that writes every table is not refused) or `owner-only` (the
//!   ids are `exclusive_p4_ids`: writes from any other role are
//!   PERMISSION_DENIED naming the owning role).
//! * An entity's P4 id for these rules: a table entry, direct counter or
//!   direct meter entry → its table; members and groups → the action
//!   profile; counters, meters, registers, value sets, digests → their id.
//!   Packet replication engine entries have no P4 id: only roles with full
//!   access write them.
//!
//! Nothing here allocates per packet; scopes are decoded once, when a
//! primary's config is accepted.

use std::collections::{BTreeMap, BTreeSet};

use prost::Message;
use proto::p4::v1 as pb;
use tonic::Code;

use super::error::P4Error;

/// The role name of tables the service `owner` owns.
pub fn owner_role(owner: &str) -> String {
    format!("roceswitch.{owner}")
}

/// `Any.type_url` of the role configs this server understands.
pub const ROLE_CONFIG_TYPE_URL: &str = "type.googleapis.com/stratum.P4RoleConfig";

/// `stratum.P4RoleConfig`: field numbers from Stratum's
/// `p4_role_config.proto`.
#[derive(Clone, PartialEq, Message)]
pub struct P4RoleConfig {
    /// Entities only this role may write.
    #[prost(uint32, repeated, tag = "1")]
    pub exclusive_p4_ids: Vec<u32>,
    /// Entities this role may write, shared with other roles.
    #[prost(uint32, repeated, tag = "2")]
    pub shared_p4_ids: Vec<u32>,
    /// Packet-ins the role's primary gets (unset: all).
    #[prost(message, optional, tag = "3")]
    pub packet_in_filter: Option<PacketFilter>,
    /// Whether the role's primary gets packet-ins.
    #[prost(bool, tag = "4")]
    pub receives_packet_ins: bool,
    /// Whether the role's primary may call SetForwardingPipelineConfig.
    #[prost(bool, tag = "5")]
    pub can_push_pipeline: bool,
}

/// `stratum.P4RoleConfig.PacketFilter`: a packet-in is delivered when its
/// metadata field `metadata_id` has value `value`.
#[derive(Clone, PartialEq, Message)]
pub struct PacketFilter {
    /// Packet-in metadata id.
    #[prost(uint32, tag = "1")]
    pub metadata_id: u32,
    /// Value it must have (compared as an integer).
    #[prost(bytes = "vec", tag = "2")]
    pub value: Vec<u8>,
}

/// The default role's access to tables another service owns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OwnedTableAccess {
    /// The default role may write them (spec: full pipeline access); the
    /// owning service replaces their contents when it next applies.
    #[default]
    Shared,
    /// Only the owner's role may write them.
    OwnerOnly,
}

impl std::str::FromStr for OwnedTableAccess {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "shared" => Ok(OwnedTableAccess::Shared),
            "owner-only" => Ok(OwnedTableAccess::OwnerOnly),
            _ => Err(format!(
                "unknown owned-table access {s:?} (expected \"shared\" or \"owner-only\")"
            )),
        }
    }
}

impl std::fmt::Display for OwnedTableAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OwnedTableAccess::Shared => "shared",
            OwnedTableAccess::OwnerOnly => "owner-only",
        })
    }
}

/// What one role may do, decoded from its config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleScope {
    /// Entities the role may write; `None` is full access.
    pub writable: Option<BTreeSet<u32>>,
    /// Entities no other role may write.
    pub exclusive: BTreeSet<u32>,
    /// Whether its primary gets packet-ins.
    pub receives_packet_ins: bool,
    /// Packet-in filter: (metadata id, value).
    pub packet_in_filter: Option<(u32, u128)>,
    /// Whether its primary may push a pipeline.
    pub can_push_pipeline: bool,
}

impl Default for RoleScope {
    /// Full pipeline access (no config).
    fn default() -> Self {
        RoleScope {
            writable: None,
            exclusive: BTreeSet::new(),
            receives_packet_ins: true,
            packet_in_filter: None,
            can_push_pipeline: true,
        }
    }
}

impl RoleScope {
    /// The scope of a role config (`None`: full access). Anything but a
    /// decodable `stratum.P4RoleConfig` is INVALID_ARGUMENT (spec §5.3).
    pub fn from_config(config: Option<&prost_types::Any>) -> Result<RoleScope, P4Error> {
        let Some(any) = config else {
            return Ok(RoleScope::default());
        };
        if !any.type_url.ends_with("/stratum.P4RoleConfig") {
            return Err(P4Error::invalid(
                "arbitration.role.config",
                format!(
                    "unsupported role config type {:?} (this switch understands {ROLE_CONFIG_TYPE_URL})",
                    any.type_url
                ),
            ));
        }
        let c = P4RoleConfig::decode(any.value.as_slice()).map_err(|e| {
            P4Error::invalid(
                "arbitration.role.config",
                format!("not a stratum.P4RoleConfig: {e}"),
            )
        })?;
        let filter = match &c.packet_in_filter {
            None => None,
            Some(f) => Some((
                f.metadata_id,
                super::bytes::decode(&f.value, 128, "arbitration.role.config.packet_in_filter")?,
            )),
        };
        Ok(RoleScope {
            writable: Some(
                c.exclusive_p4_ids
                    .iter()
                    .chain(&c.shared_p4_ids)
                    .copied()
                    .collect(),
            ),
            exclusive: c.exclusive_p4_ids.iter().copied().collect(),
            receives_packet_ins: c.receives_packet_ins,
            packet_in_filter: filter,
            can_push_pipeline: c.can_push_pipeline,
        })
    }

    /// Whether the role covers entity `id` (writes, notifications, read
    /// filters).
    pub fn covers(&self, id: u32) -> bool {
        self.writable.as_ref().is_none_or(|w| w.contains(&id))
    }

    /// Whether the role has full access.
    pub fn is_full(&self) -> bool {
        self.writable.is_none()
    }
}

/// A role the switch defines itself: its fixed config and scope.
#[derive(Clone, Debug)]
pub struct PredefinedRole {
    /// Role name (`roceswitch.fabric`).
    pub name: String,
    /// The config the switch reports in arbitration replies.
    pub config: prost_types::Any,
    /// Its decoded scope.
    pub scope: RoleScope,
}

impl PredefinedRole {
    /// Role `name` with `config`.
    fn new(name: &str, config: P4RoleConfig) -> Self {
        let any = prost_types::Any {
            type_url: ROLE_CONFIG_TYPE_URL.into(),
            value: config.encode_to_vec(),
        };
        let scope = RoleScope::from_config(Some(&any)).expect("our own role config decodes");
        PredefinedRole {
            name: name.to_string(),
            config: any,
            scope,
        }
    }

    /// Role `name` owning nothing: it may write no entity (its service's
    /// tables are not in the running program).
    pub fn owning_nothing(name: &str) -> Self {
        PredefinedRole::new(name, P4RoleConfig::default())
    }
}

/// The predefined roles for tables owned by other services: one per
/// owner, with `owned` mapping table id → owner role name.
pub fn predefined_roles(
    owned: &BTreeMap<u32, String>,
    access: OwnedTableAccess,
) -> Vec<PredefinedRole> {
    let mut by_role: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for (id, role) in owned {
        by_role.entry(role).or_default().push(*id);
    }
    by_role
        .into_iter()
        .map(|(name, ids)| {
            let config = match access {
                OwnedTableAccess::Shared => P4RoleConfig {
                    shared_p4_ids: ids,
                    ..Default::default()
                },
                OwnedTableAccess::OwnerOnly => P4RoleConfig {
                    exclusive_p4_ids: ids,
                    ..Default::default()
                },
            };
            PredefinedRole::new(name, config)
        })
        .collect()
}

/// A writer's permissions for one Write, taken from the arbitration state
/// when the request arrives.
#[derive(Clone, Debug, Default)]
pub struct RoleAccess {
    /// The writer's role.
    pub role: String,
    /// The writer's scope.
    pub scope: RoleScope,
    /// Entities other roles hold exclusively: id → that role.
    pub exclusive_elsewhere: BTreeMap<u32, String>,
}

impl RoleAccess {
    /// Full access for the default role (tests and tools without arbitration).
    pub fn full() -> Self {
        RoleAccess::default()
    }

    /// PERMISSION_DENIED unless the role may write entity `id` (`None`:
    /// an entity without a P4 id, e.g. a PRE entry). `what` names it.
    pub fn check(&self, id: Option<u32>, what: &str) -> Result<(), P4Error> {
        // Formatted only into an error (this runs for every update).
        let role = || {
            if self.role.is_empty() {
                "the default role".to_string()
            } else {
                format!("role '{}'", self.role)
            }
        };
        let Some(id) = id else {
            if self.scope.is_full() {
                return Ok(());
            }
            return Err(P4Error::new(
                Code::PermissionDenied,
                format!(
                    "{what}: {} may not write it (its role config lists P4 ids only)",
                    role()
                ),
            ));
        };
        if !self.scope.covers(id) {
            return Err(P4Error::new(
                Code::PermissionDenied,
                format!(
                    "{what}: {} may not write {id:#x} (not in its role config)",
                    role()
                ),
            ));
        }
        if let Some(owner) = self.exclusive_elsewhere.get(&id) {
            return Err(P4Error::new(
                Code::PermissionDenied,
                format!(
                    "{what}: {id:#x} belongs exclusively to role '{owner}' (its service writes it); {} may read it but not write it",
                    role()
                ),
            ));
        }
        Ok(())
    }
}

/// The P4 id an entity's write permission is judged by (see the module doc).
pub fn entity_id(e: &pb::entity::Entity) -> Option<u32> {
    use pb::entity::Entity as E;
    match e {
        E::TableEntry(t) => Some(t.table_id),
        E::DirectCounterEntry(d) => d.table_entry.as_ref().map(|t| t.table_id),
        E::DirectMeterEntry(d) => d.table_entry.as_ref().map(|t| t.table_id),
        E::ActionProfileMember(m) => Some(m.action_profile_id),
        E::ActionProfileGroup(g) => Some(g.action_profile_id),
        E::CounterEntry(c) => Some(c.counter_id),
        E::MeterEntry(m) => Some(m.meter_id),
        E::RegisterEntry(r) => Some(r.register_id),
        E::ValueSetEntry(v) => Some(v.value_set_id),
        E::DigestEntry(d) => Some(d.digest_id),
        E::ExternEntry(x) => Some(x.extern_id),
        E::PacketReplicationEngineEntry(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_config_is_full_access_and_a_foreign_config_is_refused() {
        let full = RoleScope::from_config(None).unwrap();
        assert!(full.is_full() && full.receives_packet_ins && full.can_push_pipeline);
        let foreign = prost_types::Any {
            type_url: "type.googleapis.com/acme.Role".into(),
            value: vec![],
        };
        assert_eq!(
            RoleScope::from_config(Some(&foreign)).unwrap_err().code,
            Code::InvalidArgument
        );
    }

    #[test]
    fn owned_tables_are_shared_or_exclusive_by_policy() {
        let owned: BTreeMap<u32, String> = [(0x0200_0004, owner_role("fabric"))].into();
        let shared = predefined_roles(&owned, OwnedTableAccess::Shared);
        assert_eq!(shared.len(), 1);
        assert_eq!(shared[0].name, "roceswitch.fabric");
        assert!(shared[0].scope.covers(0x0200_0004));
        assert!(!shared[0].scope.covers(0x0200_0001));
        assert!(shared[0].scope.exclusive.is_empty());
        assert!(!shared[0].scope.can_push_pipeline && !shared[0].scope.receives_packet_ins);

        let only = predefined_roles(&owned, OwnedTableAccess::OwnerOnly);
        let default_role = RoleAccess {
            exclusive_elsewhere: only[0]
                .scope
                .exclusive
                .iter()
                .map(|&id| (id, only[0].name.clone()))
                .collect(),
            ..RoleAccess::full()
        };
        let e = default_role
            .check(Some(0x0200_0004), "table_entry")
            .unwrap_err();
        assert_eq!(e.code, Code::PermissionDenied);
        assert!(e.message.contains("roceswitch.fabric"), "{}", e.message);
        default_role
            .check(Some(0x0200_0001), "table_entry")
            .unwrap();
        default_role.check(None, "pre").unwrap();

        let fabric = RoleAccess {
            role: only[0].name.clone(),
            scope: only[0].scope.clone(),
            ..Default::default()
        };
        fabric.check(Some(0x0200_0004), "table_entry").unwrap();
        assert_eq!(
            fabric
                .check(Some(0x0200_0001), "table_entry")
                .unwrap_err()
                .code,
            Code::PermissionDenied
        );
        assert_eq!(
            fabric.check(None, "pre").unwrap_err().code,
            Code::PermissionDenied
        );
    }
}
