//! Shared fixtures for the switch tests: a router configuration of
//! `roce_switch.p4` and hand-built RoCEv2 frames.

#![allow(dead_code)]

use dataplane::roce::{PROGRAM_INFO, Program};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeApi, TableEntry};

/// The switch's router MAC in these tests.
pub const ROUTER_MAC: u64 = 0x02_00_00_00_00_02;
/// Source MAC the next hop rewrites to.
pub const NH_SRC_MAC: u64 = 0x02_aa_00_00_00_01;
/// Destination MAC the next hop rewrites to.
pub const NH_DST_MAC: u64 = 0x02_bb_00_00_00_02;

/// An action call by (suffix) name.
pub fn action(name: &str, params: &[u128]) -> ActionCall {
    ActionCall::new(PROGRAM_INFO.action_by_name(name).unwrap().id, params)
}

/// Inserts a priority-0 entry.
pub fn insert(p: &mut Program, table: &str, matches: Vec<Option<FieldMatch>>, action: EntryAction) {
    let id = PROGRAM_INFO.table_by_name(table).unwrap().id;
    p.runtime_mut()
        .table_insert(
            id,
            TableEntry {
                matches,
                priority: 0,
                action,
                metadata: Vec::new(),
            },
        )
        .unwrap();
}

/// `roce_switch.p4` routing 198.51.100.0/24 to `egress_port`.
pub fn router(egress_port: u16) -> Program {
    let mut p = Program::new();
    insert(
        &mut p,
        "my_station",
        vec![Some(FieldMatch::Exact(ROUTER_MAC.into()))],
        EntryAction::Direct(action("set_routed", &[])),
    );
    insert(
        &mut p,
        "ipv4_lpm",
        vec![Some(FieldMatch::Lpm {
            value: 0xc633_6400,
            prefix_len: 24,
        })],
        EntryAction::Direct(action("set_nexthop_id", &[1])),
    );
    let profile = PROGRAM_INFO.action_profiles[0].id;
    p.runtime_mut()
        .member_write(
            profile,
            1,
            action(
                "set_nexthop",
                &[egress_port.into(), NH_SRC_MAC.into(), NH_DST_MAC.into()],
            ),
            false,
        )
        .unwrap();
    insert(
        &mut p,
        "nexthop",
        vec![Some(FieldMatch::Exact(1))],
        EntryAction::Member(1),
    );
    p
}

/// RFC 1071 checksum.
pub fn checksum(b: &[u8]) -> u16 {
    let mut sum: u32 = b
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A RoCEv2 RDMA WRITE Only to 198.51.100.2 with the given DSCP (ECT(0)),
/// PSN and payload size; ICRC left as zeros (a switch never checks it).
pub fn roce_frame(dscp: u8, psn: u32, payload: usize) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00];
    let ip_len = (20 + 8 + 12 + 16 + payload + 4) as u16;
    f.extend_from_slice(&[0x45, (dscp << 2) | 2]);
    f.extend_from_slice(&ip_len.to_be_bytes());
    f.extend_from_slice(&[
        0, 1, 0x40, 0, 64, 17, 0, 0, 198, 51, 100, 1, 198, 51, 100, 2,
    ]);
    let c = checksum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&[0xc0, 0x00, 0x12, 0xb7]);
    f.extend_from_slice(&(ip_len - 20).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(&[0x0a, 0, 0xff, 0xff, 0, 0, 0x01, 0x23]);
    f.extend_from_slice(&(0x8000_0000 | psn).to_be_bytes());
    f.extend_from_slice(&[0; 16]); // RETH
    f.extend(std::iter::repeat_n(0xab, payload));
    f.extend_from_slice(&[0, 0, 0, 0]);
    f
}

/// What [`router`] makes of `frame` (IPv4 at offset 14).
pub fn routed(frame: &[u8]) -> Vec<u8> {
    let mut out = frame.to_vec();
    out[..6].copy_from_slice(&NH_DST_MAC.to_be_bytes()[2..]);
    out[6..12].copy_from_slice(&NH_SRC_MAC.to_be_bytes()[2..]);
    out[22] -= 1;
    out[24] = 0;
    out[25] = 0;
    let c = checksum(&out[14..34]);
    out[24..26].copy_from_slice(&c.to_be_bytes());
    out
}
