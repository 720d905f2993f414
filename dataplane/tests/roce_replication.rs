//! Multicast and mirroring in `roce_switch.p4` through the whole switch core
//! (compiled program → replication engine → traffic manager → egress):
//! an L2 entry (or the L2 default) pointing at a multicast group sends a
//! copy out of every replica port except the one the frame came in by, and
//! the ACL's `acl_mirror` sends the frame as it arrived to a clone
//! session's port, on the session's class of service and cut to its
//! truncation length, beside the normally forwarded original.
//!
//! ```text
//!                      ┌──► port 0
//!  port 1 ──► [switch] ┼──► port 2        group 1 = {0, 1, 2, 3}
//!                      └──► port 3        (no copy back to port 1)
//! ```

mod common;

use common::{action, insert, roce_frame, routed, router};
use dataplane::roce::{DROP_REPLICA_TO_SOURCE, PROGRAM_INFO, Program};
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::Instant;
use p4_target::arch::{CloneSession, McReplica};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{EntryAction, FieldMatch, RuntimeApi};

const PORTS: u16 = 4;
const BROADCAST: u64 = 0xffff_ffff_ffff;

fn switch(program: Program) -> Switch<Program> {
    Switch::new(
        program,
        SwitchConfig::with_ports(PORTS.into()),
        Instant::ZERO,
    )
    .unwrap()
}

/// Delivers `frame` on `port` and returns every frame transmitted, by
/// port in port order.
fn run(sw: &mut Switch<Program>, port: u16, frame: &[u8]) -> Vec<(u16, Vec<u8>)> {
    let now = Instant::ZERO;
    sw.handle_frame(port, frame, now);
    sw.handle_timeout(now);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for p in 0..PORTS {
        while sw.poll_transmit(p, now, &mut buf).is_some() {
            out.push((p, buf.clone()));
        }
    }
    out
}

fn counter(p: &Program, name: &str, index: u32) -> u64 {
    let id = PROGRAM_INFO
        .counters
        .iter()
        .find(|c| c.name.ends_with(name))
        .unwrap_or_else(|| panic!("counter {name}"))
        .id;
    p.runtime().counter_read(id, index).unwrap().packets
}

fn with_dst(mut frame: Vec<u8>, mac: u64) -> Vec<u8> {
    frame[..6].copy_from_slice(&mac.to_be_bytes()[2..]);
    frame
}

fn group_of_all_ports(sw: &mut Switch<Program>, group: u16) {
    let replicas: Vec<McReplica> = (0..PORTS).map(|port| McReplica { port, rid: 0 }).collect();
    sw.pre_mut().mc_group_set(group, &replicas).unwrap();
}

#[test]
fn broadcast_leaves_on_every_replica_port_but_the_source() {
    let mut p = Program::new();
    insert(
        &mut p,
        "l2_fwd",
        vec![
            Some(FieldMatch::Exact(0)),
            Some(FieldMatch::Exact(BROADCAST.into())),
        ],
        EntryAction::Direct(action("set_mcast_grp", &[1])),
    );
    let mut sw = switch(p);
    group_of_all_ports(&mut sw, 1);
    let frame = with_dst(roce_frame(26, 1, 64), BROADCAST);
    let out = run(&mut sw, 1, &frame);
    assert_eq!(
        out,
        vec![(0, frame.clone()), (2, frame.clone()), (3, frame.clone())],
        "bridged copies, unchanged, on the other ports"
    );
    assert_eq!(
        counter(
            sw.pipeline(),
            "RoceEgress.egress_drop_reason",
            DROP_REPLICA_TO_SOURCE
        ),
        1,
        "the copy for the source port is pruned and counted"
    );

    // An empty group sends nothing and counts the drop.
    sw.pre_mut().mc_group_set(1, &[]).unwrap();
    assert!(run(&mut sw, 1, &frame).is_empty());
    assert_eq!(
        sw.stats().drops[dataplane::switch::SwitchDrop::McastGroupEmpty as usize],
        1
    );
}

#[test]
fn a_multicast_default_floods_unknown_unicast_and_known_unicast_is_not_flooded() {
    let mut p = Program::new();
    insert(
        &mut p,
        "l2_fwd",
        vec![
            Some(FieldMatch::Exact(0)),
            Some(FieldMatch::Exact(0x02_00_00_00_00_33)),
        ],
        EntryAction::Direct(action("l2_forward", &[3])),
    );
    let l2 = PROGRAM_INFO.table_by_name("l2_fwd").unwrap().id;
    p.runtime_mut()
        .table_set_default(l2, action("set_mcast_grp", &[2]))
        .unwrap();
    let mut sw = switch(p);
    group_of_all_ports(&mut sw, 2);
    let unknown = with_dst(roce_frame(26, 2, 64), 0x02_00_00_00_00_77);
    let ports: Vec<u16> = run(&mut sw, 0, &unknown).iter().map(|o| o.0).collect();
    assert_eq!(ports, vec![1, 2, 3]);
    let known = with_dst(roce_frame(26, 3, 64), 0x02_00_00_00_00_33);
    assert_eq!(run(&mut sw, 0, &known), vec![(3, known)]);
}

fn mirror_acl(p: &mut Program, session: u32) {
    let acl = PROGRAM_INFO.table_by_name("acl").unwrap().id;
    p.runtime_mut()
        .table_insert(
            acl,
            p4_target::runtime::TableEntry {
                matches: vec![
                    Some(FieldMatch::Ternary {
                        value: 0,
                        mask: 0x1ff,
                    }),
                    None,
                    None,
                    None,
                    Some(FieldMatch::Ternary {
                        value: 17,
                        mask: 0xff,
                    }),
                    None,
                    None,
                    None,
                    None,
                ],
                priority: 10,
                action: EntryAction::Direct(action("acl_mirror", &[session.into()])),
                metadata: Vec::new(),
            },
        )
        .unwrap();
}

#[test]
fn acl_mirror_sends_the_original_and_a_copy_as_it_arrived_to_the_session_port() {
    let mut p = router(2);
    mirror_acl(&mut p, 5);
    let mut sw = switch(p);
    sw.pre_mut()
        .mirroring_add(
            5,
            CloneSession {
                replicas: vec![McReplica { port: 3, rid: 0 }],
                class_of_service: 6,
                truncate_bytes: None,
            },
        )
        .unwrap();
    let frame = roce_frame(26, 7, 64);
    let out = run(&mut sw, 0, &frame);
    assert_eq!(
        out,
        vec![(2, routed(&frame)), (3, frame.clone())],
        "routed original on the next hop, unmodified copy on the mirror port"
    );
    let q = sw.tm().stats(3, 6).unwrap();
    assert_eq!(
        q.tx_packets, 1,
        "the copy travels on the session's class of service"
    );

    // Only traffic the ACL entry matches is mirrored (port 1 is not).
    let out = run(&mut sw, 1, &frame);
    assert_eq!(out, vec![(2, routed(&frame))]);
}

#[test]
fn a_mirror_session_truncates_the_copy_and_a_missing_session_only_counts() {
    let mut p = router(2);
    mirror_acl(&mut p, 5);
    let mut sw = switch(p);
    let frame = roce_frame(26, 8, 256);
    // No session yet: the original still goes, the missing session is counted.
    let out = run(&mut sw, 0, &frame);
    assert_eq!(out, vec![(2, routed(&frame))]);
    assert_eq!(
        sw.stats().drops[dataplane::switch::SwitchDrop::CloneSessionMissing as usize],
        1
    );
    sw.pre_mut()
        .mirroring_add(
            5,
            CloneSession {
                replicas: vec![McReplica { port: 1, rid: 0 }],
                class_of_service: 0,
                truncate_bytes: Some(64),
            },
        )
        .unwrap();
    let out = run(&mut sw, 0, &frame);
    assert_eq!(out, vec![(1, frame[..64].to_vec()), (2, routed(&frame))]);
}
