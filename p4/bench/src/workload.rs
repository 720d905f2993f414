//! Deterministic route tables, ACLs and packets for the benchmark and the
//! equivalence test.

use p4_target::pipeline::Pipeline;
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeApi, TableEntry};

use crate::HandRouter;
use crate::compiled::{PROGRAM_INFO, Program};

/// A small xorshift generator: the workload must not depend on a crate's
/// RNG algorithm staying the same.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded generator.
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    /// Next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `n` distinct routes (prefixes /8../32) with their next-hop port, plus a
/// sample address inside each.
pub fn routes(n: usize, seed: u64) -> Vec<(u32, u32, u16, u32)> {
    let mut rng = Rng::new(seed);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let len = 8 + (rng.next_u64() % 25) as u32;
        let mask = if len == 32 {
            u32::MAX
        } else {
            !(u32::MAX >> len)
        };
        let prefix = (rng.next_u64() as u32) & mask;
        if seen.insert((prefix, len)) {
            let inside = prefix | ((rng.next_u64() as u32) & !mask);
            out.push((prefix, len, 1 + (out.len() % 64) as u16, inside));
        }
    }
    out
}

/// `n` ACL entries that match no benchmark packet (they name TCP port
/// 1..=n), so every lookup searches the whole table.
pub fn acl_entries(n: usize, seed: u64) -> Vec<TableEntry> {
    let drop = ActionCall::new(PROGRAM_INFO.action_by_name("drop").unwrap().id, &[]);
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let src_len = (rng.next_u64() % 33) as u32;
            let src_mask = !u32::MAX.checked_shr(src_len).unwrap_or(0);
            TableEntry {
                matches: vec![
                    Some(FieldMatch::Ternary {
                        value: u128::from(rng.next_u64() as u32 & src_mask),
                        mask: u128::from(src_mask),
                    }),
                    None,
                    Some(FieldMatch::Ternary {
                        value: 6,
                        mask: 0xff,
                    }),
                    Some(FieldMatch::Ternary {
                        value: (i + 1) as u128,
                        mask: 0xffff,
                    }),
                ],
                priority: 1 + i as i32,
                action: EntryAction::Direct(drop.clone()),
                metadata: Vec::new(),
            }
        })
        .collect()
}

/// A UDP frame (to port 4791) to `dst`.
pub fn frame(dst: u32, sport: u16) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00];
    f.extend_from_slice(&[0x45, 0x68, 0x00, 0x38, 0, 1, 0x40, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&[10, 0, 0, 1]);
    f.extend_from_slice(&dst.to_be_bytes());
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&4791u16.to_be_bytes());
    f.extend_from_slice(&[0x00, 0x24, 0, 0]);
    f.extend(std::iter::repeat_n(0u8, 28));
    f
}

fn route_entry(prefix: u32, len: u32, port: u16) -> TableEntry {
    let set_nhop = PROGRAM_INFO.action_by_name("set_nhop").unwrap().id;
    TableEntry {
        matches: vec![Some(FieldMatch::Lpm {
            value: u128::from(prefix),
            prefix_len: len,
        })],
        priority: 0,
        action: EntryAction::Direct(ActionCall::new(
            set_nhop,
            &[u128::from(port), 0x02_00_00_00_0a_00 + u128::from(port)],
        )),
        metadata: Vec::new(),
    }
}

/// Both routers loaded with the same routes and ACL.
pub fn loaded(routes: &[(u32, u32, u16, u32)], acl: &[TableEntry]) -> (Program, HandRouter) {
    let mut program = Program::new();
    let mut hand = HandRouter::new(&PROGRAM_INFO);
    load(&mut program, routes, acl);
    load_hand(&mut hand, routes, acl);
    (program, hand)
}

/// Installs the routes and the ACL into a compiled router (either build).
pub fn load<P: Pipeline>(program: &mut P, routes: &[(u32, u32, u16, u32)], acl: &[TableEntry]) {
    let lpm_id = program.info().table_by_name("ipv4_lpm").unwrap().id;
    let acl_id = program.info().table_by_name("acl").unwrap().id;
    for &(prefix, len, port, _) in routes {
        let e = route_entry(prefix, len, port);
        program.runtime_mut().table_insert(lpm_id, e).unwrap();
    }
    for e in acl {
        program
            .runtime_mut()
            .table_insert(acl_id, e.clone())
            .unwrap();
    }
}

fn load_hand(hand: &mut HandRouter, routes: &[(u32, u32, u16, u32)], acl: &[TableEntry]) {
    for &(prefix, len, port, _) in routes {
        hand.lpm.insert(route_entry(prefix, len, port)).unwrap();
    }
    for e in acl {
        hand.acl.insert(e.clone()).unwrap();
    }
}

/// One packet through a compiled router (either build): parse, ingress,
/// egress, deparse.
pub fn run_compiled<P: Pipeline>(p: &mut P, frame: &[u8], out: &mut Vec<u8>) -> Option<u16>
where
    P::Packet: Default,
{
    run_compiled_in(p, &mut P::Packet::default(), frame, out)
}

/// [`run_compiled`] with the packet struct in `pkt`. In [`run_compiled`] it
/// is a local of the call, which the optimiser may keep in registers; a
/// switch keeps it in memory (in its queues), which a caller models by
/// passing a slot whose address escapes (`std::hint::black_box`).
#[inline]
pub fn run_compiled_in<P: Pipeline>(
    p: &mut P,
    pkt: &mut P::Packet,
    frame: &[u8],
    out: &mut Vec<u8>,
) -> Option<u16> {
    let meta = p4_target::v1model::StandardMetadata::arriving(0, frame.len() as u32, 0);
    p.parse_into(frame, meta, pkt);
    p.ingress(pkt);
    let port = P::meta(pkt).egress_spec;
    if port == p4_target::v1model::DROP_PORT {
        return None;
    }
    P::meta_mut(pkt).egress_port = port;
    p.egress(pkt);
    p.deparse(pkt, frame, out);
    Some(port)
}
