//! RoCE security at the switch (fabric `security`): which sources may send
//! RoCE into a port (the source allowlist) and which InfiniBand partitions
//! a port belongs to (P_Key enforcement), validated, and turned into the
//! contents of `roce_switch.p4`'s fabric-owned `roce_src_allow`,
//! `pkey_ingress` and `pkey_egress` tables.
//!
//! Contract:
//! - Off by default and per port: a port with no allowed sources is not
//!   source-filtered, a port with no partitions is not P_Key-checked, so an
//!   empty section changes nothing.
//! - Only RoCE is filtered: RoCE v2 (UDP destination port 4791 with a BTH)
//!   and RoCE v1 (EtherType 0x8915, GRH, BTH). Other UDP, TCP and plain L2
//!   traffic from an unlisted source passes.
//! - Sources are GID prefixes: an IPv6 prefix is a GID prefix, an IPv4
//!   prefix matches the IPv4-mapped GIDs `::ffff:a.b.c.d/(96 + len)` (how
//!   RoCE v2 carries IPv4, and what a v1 GRH carries for an IPv4 GID). A MAC
//!   admits RoCE v1 from that source MAC only (v2 is routed: its MAC is the
//!   last router's).
//! - P_Key matching (IBTA Vol 1 10.9, "Partitioning"; the
//!   rule restated in IETF 50's InfiniBand partitioning slides and Oracle's
//!   Exalogic "Understand Partition Keys"): the top bit of the 16-bit P_Key
//!   is the membership (1 full, 0 limited), the low 15 bits the partition;
//!   two P_Keys match when their low 15 bits are equal and at least one is
//!   full, so a limited member talks only to full members and two limited
//!   members never. The switch checks the P_Key at both ends of its path:
//!   arriving, it must name one of the ingress port's partitions with no
//!   more than the port's membership (a limited port may not claim full);
//!   leaving, it must match one of the egress port's partitions by the IBTA
//!   rule. 0x7FFF is the default partition (P_Key 0xFFFF full, 0x7FFF
//!   limited); partition 0 is invalid.
//!
//! Pure; allocates the table entries.

use std::net::IpAddr;

use p4_target::info::ProgramInfo;
use p4_target::runtime::{EntryAction, FieldMatch, TableEntry};
use serde::{Deserialize, Serialize};

use super::config::{ConfigError, MAX_PORT};
use super::plan::{PlanError, TableContents, action_call, table_id};

/// The tables the security section writes (fabric-owned).
pub const SECURITY_TABLES: [&str; 3] = ["roce_src_allow", "pkey_ingress", "pkey_egress"];

/// Entries `roce_src_allow` holds (its `size` in `roce_switch.p4`): allowed
/// sources plus one catch-all per filtered port.
pub const MAX_ALLOW_ENTRIES: usize = 4096;

/// Entries each P_Key table holds: partitions plus one catch-all per port.
pub const MAX_PKEY_ENTRIES: usize = 4096;

/// The default partition (P_Key 0xFFFF full, 0x7FFF limited).
pub const DEFAULT_PARTITION: u16 = 0x7fff;

/// The P_Key membership bit (1 = full member).
pub const PKEY_FULL_BIT: u16 = 0x8000;

/// Highest VLAN ID (4095 is reserved).
const MAX_VID: u32 = 4094;

/// Membership of a port in a partition (IBTA: the P_Key's top bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Membership {
    /// May talk to every member of the partition.
    Full,
    /// May talk to full members only.
    Limited,
}

/// One partition a port belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    /// The partition: the P_Key's low 15 bits, 0x0001..=0x7FFF.
    pub key: u32,
    /// The port's membership.
    pub membership: Membership,
}

impl Partition {
    /// The partition a 16-bit P_Key names, with the membership its top bit
    /// says (0xFFFF: default partition, full; 0x1234: 0x1234, limited).
    pub fn from_pkey(pkey: u16) -> Partition {
        Partition {
            key: u32::from(pkey & !PKEY_FULL_BIT),
            membership: if pkey & PKEY_FULL_BIT != 0 {
                Membership::Full
            } else {
                Membership::Limited
            },
        }
    }

    /// The 16-bit P_Key a member with this membership sends (of a valid
    /// partition).
    pub fn pkey(&self) -> u16 {
        let key = (self.key & 0x7fff) as u16;
        match self.membership {
            Membership::Full => key | PKEY_FULL_BIT,
            Membership::Limited => key,
        }
    }
}

/// Whether two 16-bit P_Keys match (IBTA Vol 1 10.9): same partition, not
/// partition 0, and at least one full member.
pub fn pkeys_match(a: u16, b: u16) -> bool {
    let key = |p: u16| p & !PKEY_FULL_BIT;
    key(a) == key(b) && key(a) != 0 && (a | b) & PKEY_FULL_BIT != 0
}

/// Who may send RoCE into a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RoceSource {
    /// Source GIDs in this prefix (IPv4: the IPv4-mapped GIDs), v1 and v2.
    Ip {
        /// Prefix address; bits past `prefix_len` must be zero.
        addr: IpAddr,
        /// Prefix length (0..=32 for IPv4, 0..=128 for IPv6).
        prefix_len: u8,
    },
    /// RoCE v1 frames from this source MAC.
    Mac([u8; 6]),
}

impl std::fmt::Display for RoceSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RoceSource::Ip { addr, prefix_len } => write!(f, "{addr}/{prefix_len}"),
            RoceSource::Mac(m) => write!(
                f,
                "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
                m[0], m[1], m[2], m[3], m[4], m[5]
            ),
        }
    }
}

impl std::str::FromStr for RoceSource {
    type Err = String;

    /// `10.0.0.1` (a host), `10.0.0.0/24`, `fe80::1/64` (a GID prefix),
    /// `02:00:00:00:00:01` (a v1 source MAC).
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let octets: Vec<&str> = s.split([':', '-']).collect();
        if octets.len() == 6 && octets.iter().all(|o| o.len() == 2) {
            let mut mac = [0u8; 6];
            for (b, o) in mac.iter_mut().zip(&octets) {
                *b = u8::from_str_radix(o, 16).map_err(|_| format!("bad MAC `{s}`"))?;
            }
            return Ok(RoceSource::Mac(mac));
        }
        let (addr, len) = match s.split_once('/') {
            Some((a, l)) => (a, Some(l)),
            None => (s, None),
        };
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| format!("`{s}` is neither an IP/GID prefix nor a MAC"))?;
        let prefix_len = match len {
            Some(l) => l
                .parse()
                .map_err(|_| format!("bad prefix length in `{s}`"))?,
            None if addr.is_ipv4() => 32,
            None => 128,
        };
        Ok(RoceSource::Ip { addr, prefix_len })
    }
}

impl RoceSource {
    /// The `src_gid` value and mask this source matches (`None` for a MAC).
    fn gid_match(&self) -> Option<(u128, u128)> {
        let RoceSource::Ip { addr, prefix_len } = *self else {
            return None;
        };
        let (value, len) = match addr {
            IpAddr::V4(a) => (
                0xffff_0000_0000 | u128::from(u32::from(a)),
                96 + u32::from(prefix_len),
            ),
            IpAddr::V6(a) => (u128::from(a), u32::from(prefix_len)),
        };
        let mask = u128::MAX.checked_shl(128 - len.min(128)).unwrap_or(0);
        Some((value & mask, mask))
    }
}

/// One allowlist entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowedSource {
    /// Who, as a [`RoceSource`] reads it: `10.0.0.0/24`, `10.0.0.1`,
    /// `fe80::1/128` (a GID prefix), `02:00:00:00:0a:01` (a v1 source MAC).
    /// Kept as written so validation can name a bad one.
    pub source: String,
    /// Only in this VLAN (0: untagged frames only); `None`: any VLAN.
    pub vlan: Option<u32>,
}

impl AllowedSource {
    /// An entry for `source` in any VLAN.
    pub fn any_vlan(source: &RoceSource) -> AllowedSource {
        AllowedSource {
            source: source.to_string(),
            vlan: None,
        }
    }

    /// The source, parsed and checked (prefix length, host bits, unicast MAC).
    pub fn parse(&self) -> Result<RoceSource, String> {
        let src: RoceSource = self.source.parse()?;
        match src {
            RoceSource::Ip { addr, prefix_len } => {
                let max = if addr.is_ipv4() { 32 } else { 128 };
                if prefix_len > max {
                    return Err(format!("prefix length {prefix_len} is longer than {max}"));
                }
                let full = match addr {
                    IpAddr::V4(x) => 0xffff_0000_0000 | u128::from(u32::from(x)),
                    IpAddr::V6(x) => u128::from(x),
                };
                if src.gid_match().map(|(v, _)| v) != Some(full) {
                    return Err(format!("{src} has bits set past its prefix"));
                }
            }
            RoceSource::Mac(m) => {
                if m[0] & 1 != 0 || m == [0; 6] {
                    return Err(format!("{src} is not a unicast source MAC"));
                }
            }
        }
        Ok(src)
    }
}

/// The security settings of one port.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PortSecurity {
    /// Port number.
    pub port: u16,
    /// Sources RoCE may come from (empty: the port is not source-filtered).
    pub allow: Vec<AllowedSource>,
    /// Partitions of the port (empty: P_Keys are not checked here).
    pub partitions: Vec<Partition>,
}

/// RoCE security: per-port source allowlists and P_Key partitions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SecurityConfig {
    /// Ports with settings (ports not listed are not filtered).
    pub ports: Vec<PortSecurity>,
}

impl SecurityConfig {
    /// Nothing is filtered anywhere.
    pub fn is_off(&self) -> bool {
        self.ports
            .iter()
            .all(|p| p.allow.is_empty() && p.partitions.is_empty())
    }

    /// Every problem, each naming its field (`security.ports[0].allow[2].vlan`).
    pub fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        let mut err = |field: String, reason: String| e.push(ConfigError { field, reason });
        for (i, p) in self.ports.iter().enumerate() {
            let f = |n: &str| format!("security.ports[{i}].{n}");
            if p.port > MAX_PORT {
                err(
                    f("port"),
                    format!("port {} is outside 0..={MAX_PORT}", p.port),
                );
            }
            if self.ports[..i].iter().any(|o| o.port == p.port) {
                err(f("port"), format!("port {} is listed twice", p.port));
            }
            for (j, a) in p.allow.iter().enumerate() {
                let f = |n: &str| format!("security.ports[{i}].allow[{j}].{n}");
                match a.parse() {
                    Err(reason) => err(f("source"), reason),
                    Ok(src) => {
                        if p.allow[..j]
                            .iter()
                            .any(|o| o.vlan == a.vlan && o.parse() == Ok(src))
                        {
                            err(f("source"), format!("{src} is listed twice"));
                        }
                    }
                }
                if let Some(v) = a.vlan.filter(|&v| v > MAX_VID) {
                    err(f("vlan"), format!("VLAN {v} is outside 0..={MAX_VID}"));
                }
            }
            for (j, part) in p.partitions.iter().enumerate() {
                let f = format!("security.ports[{i}].partitions[{j}].key");
                if part.key == 0 || part.key > u32::from(DEFAULT_PARTITION) {
                    err(
                        f,
                        format!(
                            "partition {:#06x} is outside 0x0001..=0x7fff (the top P_Key bit is \
                             the membership)",
                            part.key
                        ),
                    );
                } else if p.partitions[..j].iter().any(|o| o.key == part.key) {
                    err(f, format!("partition {:#06x} is listed twice", part.key));
                }
            }
        }
        let count = |f: fn(&PortSecurity) -> usize| -> usize {
            self.ports
                .iter()
                .map(|p| match f(p) {
                    0 => 0,
                    n => n + 1,
                })
                .sum()
        };
        let allow = count(|p| p.allow.len());
        if allow > MAX_ALLOW_ENTRIES {
            err(
                "security.ports".into(),
                format!(
                    "{allow} allowlist entries (one more per filtered port) exceed the \
                     switch's {MAX_ALLOW_ENTRIES}"
                ),
            );
        }
        let pkeys = count(|p| p.partitions.len());
        if pkeys > MAX_PKEY_ENTRIES {
            err(
                "security.ports".into(),
                format!(
                    "{pkeys} partition entries (one more per checked port) exceed the \
                     switch's {MAX_PKEY_ENTRIES}"
                ),
            );
        }
        e
    }
}

fn entry(
    matches: Vec<Option<FieldMatch>>,
    priority: i32,
    action: p4_target::runtime::ActionCall,
) -> TableEntry {
    TableEntry {
        matches,
        priority,
        action: EntryAction::Direct(action),
        metadata: Vec::new(),
    }
}

fn ternary(value: u128, mask: u128) -> Option<FieldMatch> {
    Some(FieldMatch::Ternary { value, mask })
}

/// Allow entries sit above each port's catch-all deny.
const ALLOW_PRIORITY: i32 = 2;
const DENY_PRIORITY: i32 = 1;

/// The contents of the three security tables for `cfg`, or `None` when the
/// program lacks them and nothing is filtered.
pub(crate) fn security_tables(
    info: &'static ProgramInfo,
    cfg: &SecurityConfig,
) -> Result<Option<Vec<TableContents>>, PlanError> {
    if SECURITY_TABLES
        .iter()
        .any(|t| info.table_by_name(t).is_none())
    {
        if cfg.is_off() {
            return Ok(None);
        }
        return Err(PlanError::Invalid {
            field: "security".into(),
            reason: format!(
                "program {} has no RoCE security tables ({})",
                info.name,
                SECURITY_TABLES.join(", ")
            ),
        });
    }
    let permit = action_call(info, "roce_src_permit", &[])?;
    let deny = action_call(info, "roce_src_deny", &[])?;
    let mut allow = Vec::new();
    for (i, p) in cfg.ports.iter().enumerate() {
        if p.allow.is_empty() {
            continue;
        }
        let port = Some(FieldMatch::Exact(u128::from(p.port)));
        for (j, a) in p.allow.iter().enumerate() {
            let source = a.parse().map_err(|reason| PlanError::Invalid {
                field: format!("security.ports[{i}].allow[{j}].source"),
                reason,
            })?;
            let vid = a.vlan.and_then(|v| ternary(u128::from(v), 0xfff));
            // [ingress_port, roce_version, vid, src_mac, src_gid]
            let matches = match source {
                RoceSource::Mac(m) => {
                    let mut mac = [0u8; 16];
                    mac[10..].copy_from_slice(&m);
                    vec![
                        port,
                        ternary(1, 3),
                        vid,
                        ternary(u128::from_be_bytes(mac), 0xffff_ffff_ffff),
                        None,
                    ]
                }
                RoceSource::Ip { .. } => {
                    let (v, m) = source.gid_match().unwrap_or((0, 0));
                    vec![
                        port,
                        None,
                        vid,
                        None,
                        (m != 0).then_some(FieldMatch::Ternary { value: v, mask: m }),
                    ]
                }
            };
            allow.push(entry(matches, ALLOW_PRIORITY, permit.clone()));
        }
        allow.push(entry(
            vec![port, None, None, None, None],
            DENY_PRIORITY,
            deny.clone(),
        ));
    }

    let pkey_tables = |permit: &str, deny: &str, egress: bool| {
        let permit = action_call(info, permit, &[])?;
        let deny = action_call(info, deny, &[])?;
        let mut entries = Vec::new();
        for p in cfg.ports.iter().filter(|p| !p.partitions.is_empty()) {
            let port = Some(FieldMatch::Exact(u128::from(p.port)));
            for part in &p.partitions {
                let key = u128::from(part.key);
                let full = u128::from(PKEY_FULL_BIT);
                let pkey = match (part.membership, egress) {
                    // A full member sends either membership and receives from anyone.
                    (Membership::Full, _) => ternary(key, 0x7fff),
                    // A limited member sends limited P_Keys only ...
                    (Membership::Limited, false) => ternary(key, 0xffff),
                    // ... and receives from full members only.
                    (Membership::Limited, true) => ternary(full | key, 0xffff),
                };
                entries.push(entry(vec![port, pkey], ALLOW_PRIORITY, permit.clone()));
            }
            entries.push(entry(vec![port, None], DENY_PRIORITY, deny.clone()));
        }
        Ok::<_, PlanError>(entries)
    };
    Ok(Some(vec![
        TableContents {
            table_id: table_id(info, "roce_src_allow")?,
            entries: allow,
            default: None,
        },
        TableContents {
            table_id: table_id(info, "pkey_ingress")?,
            entries: pkey_tables("pkey_permit", "pkey_deny", false)?,
            default: None,
        },
        TableContents {
            table_id: table_id(info, "pkey_egress")?,
            entries: pkey_tables("pkey_egress_permit", "pkey_egress_deny", true)?,
            default: None,
        },
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(s: &str) -> AllowedSource {
        AllowedSource {
            source: s.into(),
            vlan: None,
        }
    }

    #[test]
    fn sources_parse_as_hosts_prefixes_and_macs() {
        assert_eq!(
            "10.0.0.1".parse::<RoceSource>().unwrap(),
            RoceSource::Ip {
                addr: "10.0.0.1".parse().unwrap(),
                prefix_len: 32
            }
        );
        assert_eq!(
            "fe80::/64".parse::<RoceSource>().unwrap().to_string(),
            "fe80::/64"
        );
        assert_eq!(
            "02:00:00:00:00:0a".parse::<RoceSource>().unwrap(),
            RoceSource::Mac([2, 0, 0, 0, 0, 10])
        );
        assert!("10.0.0.1/x".parse::<RoceSource>().is_err());
        assert!("nonsense".parse::<RoceSource>().is_err());
    }

    #[test]
    fn ipv4_prefixes_match_the_ipv4_mapped_gids() {
        let (v, m) = "10.1.0.0/16"
            .parse::<RoceSource>()
            .unwrap()
            .gid_match()
            .unwrap();
        let gid = |s: &str| u128::from(s.parse::<std::net::Ipv6Addr>().unwrap());
        assert_eq!(v, gid("::ffff:10.1.0.0"));
        assert_eq!(gid("::ffff:10.1.200.3") & m, v);
        assert_ne!(gid("::ffff:10.2.0.3") & m, v);
        assert_ne!(gid("::10.1.0.3") & m, v, "only the mapped form");
    }

    /// IBTA Vol 1 10.9: a limited member talks to full members only.
    #[test]
    fn pkey_matching_follows_the_membership_rule() {
        assert!(pkeys_match(0x8001, 0x8001));
        assert!(pkeys_match(0x8001, 0x0001));
        assert!(pkeys_match(0x0001, 0x8001));
        assert!(!pkeys_match(0x0001, 0x0001), "limited ↔ limited");
        assert!(!pkeys_match(0x8001, 0x8002), "another partition");
        assert!(!pkeys_match(0x8000, 0x8000), "partition 0 is invalid");
        assert!(pkeys_match(0xffff, 0x7fff), "the default partition");
        assert_eq!(Partition::from_pkey(0xffff).pkey(), 0xffff);
        assert_eq!(
            Partition::from_pkey(0x1234),
            Partition {
                key: 0x1234,
                membership: Membership::Limited
            }
        );
    }

    #[test]
    fn every_problem_names_its_field() {
        let cfg = SecurityConfig {
            ports: vec![
                PortSecurity {
                    port: 600,
                    allow: vec![
                        src("10.0.0.1/24"),
                        src("10.0.0.0/33"),
                        src("01:00:5e:00:00:01"),
                        AllowedSource {
                            vlan: Some(4095),
                            ..src("10.0.0.9")
                        },
                        src("10.0.0.0/24"),
                        src("10.0.0.0/24"),
                        src("nonsense"),
                    ],
                    partitions: vec![
                        Partition::from_pkey(0x8000),
                        Partition::from_pkey(0x8001),
                        Partition::from_pkey(0x0001),
                    ],
                },
                PortSecurity {
                    port: 600,
                    ..Default::default()
                },
            ],
        };
        let fields: Vec<String> = cfg.validate().into_iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            vec![
                "security.ports[0].port",
                "security.ports[0].allow[0].source",
                "security.ports[0].allow[1].source",
                "security.ports[0].allow[2].source",
                "security.ports[0].allow[3].vlan",
                "security.ports[0].allow[5].source",
                "security.ports[0].allow[6].source",
                "security.ports[0].partitions[0].key",
                "security.ports[0].partitions[2].key",
                "security.ports[1].port",
                "security.ports[1].port",
            ]
        );
        assert!(SecurityConfig::default().validate().is_empty());
        assert!(SecurityConfig::default().is_off());
    }
}
