//! The benchmark is only fair if the routers do the same thing: every
//! packet must come out of each (compiled, compiled without trace points,
//! hand-written) on the same port with the same bytes.

use p4_bench::workload::{acl_entries, frame, load, loaded, routes, run_compiled};

#[test]
fn compiled_untraced_and_hand_written_routers_agree_byte_for_byte() {
    let routes = routes(2_000, 7);
    let mut acl = acl_entries(200, 9);
    // One ACL entry that does match: UDP to 4791 from 10.0.0.1 is dropped
    // when the destination is in 100.64.0.0/10.
    acl.push(p4_target::runtime::TableEntry {
        matches: vec![
            None,
            Some(p4_target::runtime::FieldMatch::Ternary {
                value: 0x6440_0000,
                mask: 0xffc0_0000,
            }),
            Some(p4_target::runtime::FieldMatch::Ternary {
                value: 17,
                mask: 0xff,
            }),
            None,
        ],
        priority: 100_000,
        action: acl[0].action.clone(),
        metadata: Vec::new(),
    });
    let (mut program, mut hand) = loaded(&routes, &acl);
    let mut untraced = p4_bench::untraced::Program::new();
    load(&mut untraced, &routes, &acl);
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    let mut forwarded = 0;
    let mut rng = p4_bench::workload::Rng::new(3);
    for i in 0..5_000u32 {
        // Half inside known routes, half random addresses (many misses).
        let dst = if i % 2 == 0 {
            routes[i as usize % routes.len()].3
        } else {
            rng.next_u64() as u32
        };
        let f = frame(dst, 0xc000 + (i % 1000) as u16);
        let pc = run_compiled(&mut program, &f, &mut a);
        let ph = hand.process(&f, &mut b);
        let pu = run_compiled(&mut untraced, &f, &mut c);
        assert_eq!(pc, ph, "port for dst {dst:#x}");
        assert_eq!(pc, pu, "port for dst {dst:#x} without trace points");
        if pc.is_some() {
            assert_eq!(a, b, "bytes for dst {dst:#x}");
            assert_eq!(a, c, "bytes for dst {dst:#x} without trace points");
            forwarded += 1;
        }
    }
    assert!(
        forwarded > 2_000,
        "most routed packets are forwarded ({forwarded})"
    );
}
