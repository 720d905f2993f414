//! L3 intent → the routing tables of `roce_switch.p4`: the router MAC
//! (`my_station`), prefixes (`ipv4_lpm`, `ipv6_lpm` → `set_nexthop_id`) and
//! next hops (`nexthop`, an action selector: one member per next hop, one
//! group per equal-cost set, picked by a flow hash of the 5-tuple with the
//! UDP source port, R-ECMP-1..3, mixed with the switch's ECMP seed from
//! `ecmp_hash_seed`), and bridged MACs (`l2_fwd`, per VLAN).
//!
//! Contract: pure and deterministic: the same [`L3Config`] gives the same
//! ids in the same order, so a simulated fabric and a namespace lab (which
//! sends these writes over P4Runtime) program identical tables. Next hops
//! are numbered in order of first appearance from 1; a route to one next
//! hop points at its member, a route to several at a group with the next
//! hops in the order given, each with weight 1.

use std::collections::BTreeMap;
use std::net::IpAddr;

use p4_target::info::ProgramInfo;
use p4_target::runtime::{EntryAction, FieldMatch, TableEntry};

use super::plan::{PlanError, ProfileContents, TableContents, action_call, profile_id, table_id};

/// Where a route sends packets: the egress port and the neighbour's MAC (the
/// source MAC is the router MAC).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NextHop {
    /// Egress port.
    pub port: u16,
    /// Destination MAC on that link.
    pub dst_mac: [u8; 6],
}

/// A prefix and its equal-cost next hops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Destination prefix (host bits are ignored).
    pub prefix: IpAddr,
    /// Prefix length, 0..=32 (IPv4) or 0..=128 (IPv6).
    pub prefix_len: u8,
    /// Equal-cost next hops (ECMP when more than one).
    pub next_hops: Vec<NextHop>,
}

/// A MAC bridged in a VLAN: `l2_fwd` sends its frames out of `port`
/// unchanged. RoCE v1 segments need these: they have no IP to route on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bridged {
    /// VLAN id (0: untagged frames).
    pub vid: u16,
    /// Destination MAC.
    pub mac: [u8; 6],
    /// Egress port.
    pub port: u16,
}

/// A switch's forwarding: the MAC it routes for, its routes, and the MACs
/// it bridges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct L3Config {
    /// Frames to this MAC are routed; it is also the source MAC of routed frames.
    pub router_mac: [u8; 6],
    /// This switch's ECMP hash seed: give every switch of a fabric its own,
    /// or each tier picks the same uplink for a flow (hash polarization).
    pub ecmp_seed: u32,
    /// Routes, longest prefix wins.
    pub routes: Vec<Route>,
    /// Bridged MACs (VLAN, MAC → port).
    pub bridged: Vec<Bridged>,
}

/// What an [`L3Config`] writes: the `nexthop` profile's members and groups,
/// then whole-table contents (`my_station`, `ecmp_hash_seed`, `nexthop`,
/// `ipv4_lpm`, `ipv6_lpm`, `l2_fwd`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteWrites {
    /// Members and groups of the `nexthop` action selector.
    pub profile: ProfileContents,
    /// Table contents, referring to the profile's members and groups.
    pub tables: Vec<TableContents>,
}

fn mac(m: [u8; 6]) -> u128 {
    m.iter().fold(0u128, |v, &b| (v << 8) | u128::from(b))
}

/// The `ipv4_lpm`/`ipv6_lpm` action that sends a prefix to next-hop set
/// `nexthop_id` (for writing routes one by one against [`L3Config::writes`]'s
/// next hops).
pub fn set_nexthop_id(
    info: &ProgramInfo,
    nexthop_id: u16,
) -> Result<p4_target::runtime::ActionCall, PlanError> {
    action_call(
        info,
        "set_nexthop_id",
        &[("nexthop_id", u128::from(nexthop_id))],
    )
}

impl L3Config {
    /// The table writes this configuration means for `info`'s program.
    pub fn writes(&self, info: &'static ProgramInfo) -> Result<RouteWrites, PlanError> {
        let my_station = table_id(info, "my_station")?;
        let seed_table = table_id(info, "ecmp_hash_seed")?;
        let nexthop = table_id(info, "nexthop")?;
        let v4 = table_id(info, "ipv4_lpm")?;
        let v6 = table_id(info, "ipv6_lpm")?;
        let profile_id = profile_id(info, "nexthop")?;

        let mut members: Vec<(u32, p4_target::runtime::ActionCall)> = Vec::new();
        let mut member_of: BTreeMap<NextHop, u32> = BTreeMap::new();
        let mut groups: Vec<(u32, Vec<(u32, u32)>)> = Vec::new();
        let mut id_of_set: BTreeMap<Vec<NextHop>, u32> = BTreeMap::new();
        let mut nexthop_entries = Vec::new();
        let (mut v4_entries, mut v6_entries) = (Vec::new(), Vec::new());
        for (i, route) in self.routes.iter().enumerate() {
            if route.next_hops.is_empty() {
                return Err(PlanError::Invalid {
                    field: format!("routes[{i}].next_hops"),
                    reason: "a route needs at least one next hop".into(),
                });
            }
            let mut ids = Vec::with_capacity(route.next_hops.len());
            for hop in &route.next_hops {
                let next = members.len() as u32 + 1;
                let id = *member_of.entry(*hop).or_insert(next);
                if id == next {
                    let call = action_call(
                        info,
                        "set_nexthop",
                        &[
                            ("port", u128::from(hop.port)),
                            ("src_mac", mac(self.router_mac)),
                            ("dst_mac", mac(hop.dst_mac)),
                        ],
                    )?;
                    members.push((id, call));
                }
                ids.push(id);
            }
            let next_set = id_of_set.len() as u32 + 1;
            let nexthop_id = *id_of_set.entry(route.next_hops.clone()).or_insert(next_set);
            if nexthop_id == next_set {
                let action = if let [member] = ids[..] {
                    EntryAction::Member(member)
                } else {
                    groups.push((nexthop_id, ids.iter().map(|&m| (m, 1)).collect()));
                    EntryAction::Group(nexthop_id)
                };
                nexthop_entries.push(TableEntry {
                    matches: vec![Some(FieldMatch::Exact(u128::from(nexthop_id)))],
                    priority: 0,
                    action,
                    metadata: Vec::new(),
                });
            }
            let id16 = u16::try_from(nexthop_id).map_err(|_| PlanError::Invalid {
                field: format!("routes[{i}].next_hops"),
                reason: "more than 65535 distinct next-hop sets".into(),
            })?;
            let set_id = set_nexthop_id(info, id16)?;
            let (value, width, entries) = match route.prefix {
                IpAddr::V4(a) => (u128::from(u32::from(a)), 32u32, &mut v4_entries),
                IpAddr::V6(a) => (u128::from(a), 128u32, &mut v6_entries),
            };
            let len = u32::from(route.prefix_len);
            if len > width {
                return Err(PlanError::Invalid {
                    field: format!("routes[{i}].prefix_len"),
                    reason: format!("{len} is longer than the {width}-bit address"),
                });
            }
            let keep = if len == 0 {
                0
            } else {
                !0u128 << (128 - len) >> (128 - width)
            };
            entries.push(TableEntry {
                matches: vec![(len > 0).then_some(FieldMatch::Lpm {
                    value: value & keep,
                    prefix_len: len,
                })],
                priority: 0,
                action: EntryAction::Direct(set_id),
                metadata: Vec::new(),
            });
        }
        let station = TableEntry {
            matches: vec![Some(FieldMatch::Exact(mac(self.router_mac)))],
            priority: 0,
            action: EntryAction::Direct(action_call(info, "set_routed", &[])?),
            metadata: Vec::new(),
        };
        let l2_fwd = table_id(info, "l2_fwd")?;
        let mut l2_entries = Vec::with_capacity(self.bridged.len());
        for (i, b) in self.bridged.iter().enumerate() {
            if b.vid > 4095 {
                return Err(PlanError::Invalid {
                    field: format!("bridged[{i}].vid"),
                    reason: format!("{} is not a VLAN id (0..=4095)", b.vid),
                });
            }
            l2_entries.push(TableEntry {
                matches: vec![
                    Some(FieldMatch::Exact(u128::from(b.vid))),
                    Some(FieldMatch::Exact(mac(b.mac))),
                ],
                priority: 0,
                action: EntryAction::Direct(action_call(
                    info,
                    "l2_forward",
                    &[("port", u128::from(b.port))],
                )?),
                metadata: Vec::new(),
            });
        }
        let whole = |table_id, entries| TableContents {
            table_id,
            entries,
            default: None,
        };
        Ok(RouteWrites {
            profile: ProfileContents {
                profile_id,
                members,
                groups,
            },
            tables: vec![
                whole(my_station, vec![station]),
                TableContents {
                    table_id: seed_table,
                    entries: Vec::new(),
                    default: Some(action_call(
                        info,
                        "set_ecmp_seed",
                        &[("seed", u128::from(self.ecmp_seed))],
                    )?),
                },
                whole(nexthop, nexthop_entries),
                whole(v4, v4_entries),
                whole(v6, v6_entries),
                whole(l2_fwd, l2_entries),
            ],
        })
    }
}
