//! Digests through the switch core: `tests/programs/l2_learn.p4` (compiled
//! by build.rs) reports unknown source MACs as `mac_learn_t` digests and
//! floods unknown destinations through multicast group 1. The test plays
//! the controller: it takes the digests from the switch and installs what
//! they teach, after which the bridge forwards without flooding or asking.

#[allow(missing_docs, unreachable_pub, dead_code, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/l2_learn.rs"));
}

use dataplane::switch::{Digest, Switch, SwitchConfig};
use dataplane::time::Instant;
use generated::{PROGRAM_INFO, Program};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeApi, TableEntry};

const A: u64 = 0x02_00_00_00_00_0a;
const B: u64 = 0x02_00_00_00_00_0b;

fn frame(dst: u64, src: u64) -> Vec<u8> {
    let mut f = Vec::with_capacity(60);
    f.extend_from_slice(&dst.to_be_bytes()[2..]);
    f.extend_from_slice(&src.to_be_bytes()[2..]);
    f.extend_from_slice(&0x88b5u16.to_be_bytes());
    f.resize(60, 0x5a);
    f
}

fn bridge() -> Switch<Program> {
    let mut sw = Switch::new(Program::new(), SwitchConfig::with_ports(3), Instant::ZERO).unwrap();
    let pre = sw.pre_mut();
    pre.mc_mgrp_create(1).unwrap();
    let node = pre.mc_node_create(0, &[0, 1, 2]).unwrap();
    pre.mc_node_associate(1, node).unwrap();
    sw
}

/// Sends `f` in on `port` and returns, per port, the frames that left.
fn send(sw: &mut Switch<Program>, port: u16, f: &[u8], t_us: u64) -> [Vec<Vec<u8>>; 3] {
    sw.handle_frame(port, f, Instant::from_micros(t_us));
    let later = Instant::from_micros(t_us + 100);
    sw.handle_timeout(later);
    std::array::from_fn(|p| {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while sw.poll_transmit(p as u16, later, &mut buf).is_some() {
            out.push(std::mem::take(&mut buf));
        }
        out
    })
}

fn digests(sw: &mut Switch<Program>) -> Vec<Digest> {
    std::iter::from_fn(|| sw.poll_digest()).collect()
}

/// What a controller does with a `mac_learn_t` digest.
fn learn(sw: &mut Switch<Program>, d: &Digest) {
    let (mac, port) = (d.values[0], d.values[1]);
    let table = |name: &str| PROGRAM_INFO.table_by_name(name).unwrap().id;
    let action = |name: &str, params: &[u128]| {
        EntryAction::Direct(ActionCall::new(
            PROGRAM_INFO.action_by_name(name).unwrap().id,
            params,
        ))
    };
    let rt = sw.pipeline_mut().runtime_mut();
    for (t, a) in [
        ("smac", action("NoAction", &[])),
        ("dmac", action("forward", &[port])),
    ] {
        rt.table_insert(
            table(t),
            TableEntry {
                matches: vec![Some(FieldMatch::Exact(mac))],
                priority: 0,
                action: a,
                metadata: Vec::new(),
            },
        )
        .unwrap();
    }
}

#[test]
fn unknown_sources_become_digests_and_learned_ones_stop_flooding() {
    let mut sw = bridge();
    let digest_id = PROGRAM_INFO.digests[0].id;

    // A → B: A is new (digest), B unknown (flooded, not back to port 0).
    let out = send(&mut sw, 0, &frame(B, A), 0);
    assert!(out[0].is_empty());
    assert_eq!(out[1], vec![frame(B, A)]);
    assert_eq!(out[2], vec![frame(B, A)]);
    let learned = digests(&mut sw);
    assert_eq!(
        learned,
        vec![Digest {
            id: digest_id,
            values: vec![u128::from(A), 0],
        }]
    );
    learn(&mut sw, &learned[0]);

    // B → A from port 2: B is new, A is known now: straight to port 0.
    let out = send(&mut sw, 2, &frame(A, B), 1_000);
    assert_eq!(out[0], vec![frame(A, B)]);
    assert!(out[1].is_empty() && out[2].is_empty());
    let learned = digests(&mut sw);
    assert_eq!(learned.len(), 1);
    assert_eq!(learned[0].values, vec![u128::from(B), 2]);
    learn(&mut sw, &learned[0]);

    // Both known: unicast, and nothing more to report.
    let out = send(&mut sw, 0, &frame(B, A), 2_000);
    assert_eq!(out[2], vec![frame(B, A)]);
    assert!(out[1].is_empty());
    assert!(digests(&mut sw).is_empty());
    let stats = sw.stats();
    assert_eq!((stats.digests, stats.digests_dropped), (2, 0));
}

#[test]
fn a_controller_that_never_reads_costs_digests_not_memory() {
    let mut sw = bridge();
    for i in 0..5_000u64 {
        sw.handle_frame(
            1,
            &frame(B, 0x02_00_00_01_00_00 + i),
            Instant::from_micros(i),
        );
    }
    let stats = sw.stats();
    assert_eq!(stats.digests + stats.digests_dropped, 5_000);
    assert!(stats.digests_dropped > 0, "the queue is bounded");
    assert_eq!(digests(&mut sw).len() as u64, stats.digests);
}
