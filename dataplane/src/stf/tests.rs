//! Runner tests on a hand-written pipeline that follows the generated-code
//! contract: a tiny router over an 11-byte header
//! `dst(4) src(4) proto(1) ttl(1) mark(1)`.
//!
//! Ingress: count the packet in `pkts[ingress_port]`; look `dst` up in
//! `ipv4_lpm` (`set_nhop(port, mark)` or `drop`, digest `miss_t(dst)` on a
//! miss); look `(src, proto)` up in the ternary `acl` (`set_ttl(ttl)` or
//! `deny`); remember `dst` in register `last_dst`. `ipv4_lpm` has the
//! direct counter `lpm_hits`. Protocol 0xff floods to
//! multicast group 1; protocol 0xfe also makes an I2E clone to session 3.

use super::*;
use p4_target::info::{
    ActionInfo, ActionRef, ActionScope, CounterInfo, CounterUnit, DigestInfo, KeyInfo,
    MetaFieldInfo, ParamInfo, RegisterInfo, TableInfo,
};
use p4_target::runtime::Runtime;
use p4_target::v1model::{CloneRequest, CloneType, StandardMetadata};

const SET_NHOP: u32 = 0x0100_0001;
const DROP: u32 = 0x0100_0002;
const SET_TTL: u32 = 0x0100_0003;
const DENY: u32 = 0x0100_0004;
const NO_ACTION: u32 = 0x0100_0005;
const MISS_DIGEST: u32 = 0x1700_0001;

static ACTIONS: [ActionInfo; 5] = [
    ActionInfo {
        id: SET_NHOP,
        name: "MyIngress.set_nhop",
        params: &[
            ParamInfo {
                id: 1,
                name: "port",
                bitwidth: 9,
            },
            ParamInfo {
                id: 2,
                name: "mark",
                bitwidth: 8,
            },
        ],
    },
    ActionInfo {
        id: DROP,
        name: "MyIngress.drop",
        params: &[],
    },
    ActionInfo {
        id: SET_TTL,
        name: "MyIngress.set_ttl",
        params: &[ParamInfo {
            id: 1,
            name: "ttl",
            bitwidth: 8,
        }],
    },
    ActionInfo {
        id: DENY,
        name: "MyIngress.deny",
        params: &[],
    },
    ActionInfo {
        id: NO_ACTION,
        name: "NoAction",
        params: &[],
    },
];

const fn aref(id: u32) -> ActionRef {
    ActionRef {
        id,
        scope: ActionScope::TableAndDefault,
    }
}

const LPM_KEYS: [KeyInfo; 1] = [KeyInfo {
    id: 1,
    name: "hdr.ipv4.dstAddr",
    bitwidth: 32,
    kind: MatchKind::Lpm,
}];
const ACL_KEYS: [KeyInfo; 2] = [
    KeyInfo {
        id: 1,
        name: "hdr.ipv4.srcAddr",
        bitwidth: 32,
        kind: MatchKind::Ternary,
    },
    KeyInfo {
        id: 2,
        name: "hdr.ipv4.protocol",
        bitwidth: 8,
        kind: MatchKind::Ternary,
    },
];

static TABLES: [TableInfo; 2] = [
    TableInfo {
        direct_counter: Some(0x1300_0001),
        ..TableInfo::plain(
            0x0200_0001,
            "MyIngress.ipv4_lpm",
            &LPM_KEYS,
            &[aref(SET_NHOP), aref(DROP)],
            64,
            (DROP, &[]),
        )
    },
    TableInfo::plain(
        0x0200_0002,
        "MyIngress.acl",
        &ACL_KEYS,
        &[aref(SET_TTL), aref(DENY), aref(NO_ACTION)],
        64,
        (NO_ACTION, &[]),
    ),
];

static INFO: ProgramInfo = ProgramInfo {
    name: "tiny_router",
    tables: &TABLES,
    actions: &ACTIONS,
    counters: &[
        CounterInfo {
            id: 0x1200_0001,
            name: "MyIngress.pkts",
            unit: CounterUnit::Both,
            size: 8,
            direct_table: None,
        },
        CounterInfo {
            id: 0x1300_0001,
            name: "MyIngress.lpm_hits",
            unit: CounterUnit::Both,
            size: 0,
            direct_table: Some(0x0200_0001),
        },
    ],
    registers: &[RegisterInfo {
        id: 0x1600_0001,
        name: "MyIngress.last_dst",
        bitwidth: 32,
        signed: false,
        size: 1,
    }],
    digests: &[DigestInfo {
        id: MISS_DIGEST,
        name: "miss_t",
        fields: &[MetaFieldInfo {
            id: 1,
            name: "dst",
            bitwidth: 32,
            signed: false,
        }],
        scalar: false,
    }],
    ..ProgramInfo::EMPTY
};

#[derive(Clone, Debug)]
struct Pkt {
    hdr: Option<[u8; 11]>,
    meta: StandardMetadata,
    payload_offset: usize,
}

struct TinyRouter {
    rt: Runtime,
}

impl TinyRouter {
    fn new() -> Self {
        TinyRouter {
            rt: Runtime::new(&INFO),
        }
    }
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

impl Pipeline for TinyRouter {
    type Packet = Pkt;
    fn info(&self) -> &'static ProgramInfo {
        &INFO
    }
    fn runtime(&self) -> &Runtime {
        &self.rt
    }
    fn runtime_mut(&mut self) -> &mut Runtime {
        &mut self.rt
    }
    fn parse(&mut self, data: &[u8], meta: StandardMetadata) -> Pkt {
        match data.get(..11) {
            Some(h) => {
                let mut hdr = [0u8; 11];
                hdr.copy_from_slice(h);
                Pkt {
                    hdr: Some(hdr),
                    meta,
                    payload_offset: 11,
                }
            }
            None => Pkt {
                hdr: None,
                meta,
                payload_offset: 0,
            },
        }
    }
    fn ingress(&mut self, pkt: &mut Pkt) {
        let len = pkt.meta.packet_length;
        self.rt.counters[0].count(pkt.meta.ingress_port as u32, len);
        let Some(h) = pkt.hdr.as_mut() else {
            pkt.meta.mark_to_drop();
            return;
        };
        let dst = be32(&h[0..4]);
        let src = be32(&h[4..8]);
        let lookup = self.rt.tables[0].lookup(&[dst as u128], len);
        let (hit, action) = (lookup.hit, lookup.action.clone());
        if !hit {
            self.rt.digests.push((MISS_DIGEST, vec![dst as u128]));
        }
        match action {
            EntryAction::Direct(call) if call.action_id == SET_NHOP => {
                pkt.meta.egress_spec = call.params[0] as u16;
                h[10] = call.params[1] as u8;
            }
            _ => pkt.meta.mark_to_drop(),
        }
        let acl = self.rt.tables[1]
            .lookup(&[src as u128, h[8] as u128], len)
            .action
            .clone();
        match acl {
            EntryAction::Direct(call) if call.action_id == SET_TTL => h[9] = call.params[0] as u8,
            EntryAction::Direct(call) if call.action_id == DENY => pkt.meta.mark_to_drop(),
            _ => {}
        }
        self.rt.registers[0].write(0, dst as u128);
        if h[8] == 0xff {
            pkt.meta.mcast_grp = 1;
        }
        if h[8] == 0xfe {
            pkt.meta.clone_request = Some(CloneRequest {
                kind: CloneType::IngressToEgress,
                session: 3,
                field_list: None,
            });
        }
    }
    fn egress(&mut self, _pkt: &mut Pkt) {}
    fn deparse(&mut self, pkt: &mut Pkt, data: &[u8], out: &mut Vec<u8>) {
        out.clear();
        if let Some(h) = pkt.hdr {
            out.extend_from_slice(&h);
        }
        out.extend_from_slice(&data[pkt.payload_offset..]);
    }
    fn meta(pkt: &Pkt) -> &StandardMetadata {
        &pkt.meta
    }
    fn meta_mut(pkt: &mut Pkt) -> &mut StandardMetadata {
        &mut pkt.meta
    }
    fn parse_preserving(
        &mut self,
        data: &[u8],
        meta: StandardMetadata,
        _from: &Pkt,
        _field_list: u8,
    ) -> Pkt {
        self.parse(data, meta)
    }
    fn reset_user_metadata(_pkt: &mut Pkt) {}
    fn preserve_fields(_from: &Pkt, _to: &mut Pkt, _field_list: u8) {}
}

fn run_tiny(stf: &str) -> StfReport {
    run(TinyRouter::new(), stf)
}

/// Header hex: dst, src, proto, ttl, mark.
fn pkt(dst: [u8; 4], src: [u8; 4], proto: u8, ttl: u8, mark: u8) -> String {
    let mut b = Vec::new();
    b.extend_from_slice(&dst);
    b.extend_from_slice(&src);
    b.extend_from_slice(&[proto, ttl, mark]);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

const ROUTES: &str = "
add ipv4_lpm hdr.ipv4.dstAddr:10.0.0.0/8 set_nhop(port:1, mark:0x11)
add MyIngress.ipv4_lpm dstAddr:10.1.0.0/16 MyIngress.set_nhop(port:2, mark:0x22)
";

#[test]
fn routes_and_matching_expectations_pass() {
    let stf = format!(
        "{ROUTES}
packet 0 {} beef
expect 1 {} beef$
packet 0 {} beef
expect 2 {}
# not routed: dropped, nothing expected
packet 0 {}
",
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0),
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0x11),
        pkt([10, 1, 2, 3], [1, 1, 1, 1], 6, 64, 0),
        pkt([10, 1, 2, 3], [1, 1, 1, 1], 6, 64, 0x22),
        pkt([11, 0, 0, 1], [1, 1, 1, 1], 6, 64, 0),
    );
    let r = run_tiny(&stf);
    assert!(r.passed, "{r}");
    assert_eq!((r.packets_in, r.packets_out), (3, 2));
}

#[test]
fn traced_runs_give_one_trace_per_packet_with_its_fate() {
    let stf = format!(
        "{ROUTES}
packet 0 {} beef
expect 1 {} beef$
packet 0 {}
",
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0),
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0x11),
        pkt([11, 0, 0, 1], [1, 1, 1, 1], 6, 64, 0),
    );
    let r = super::run_traced(TinyRouter::new(), &stf);
    assert!(r.passed, "{r}");
    assert_eq!(r.traces.len(), 2, "{:?}", r.traces);
    assert!(
        r.traces[0].starts_with("packet 1\n  arrive port 0"),
        "{}",
        r.traces[0]
    );
    assert!(r.traces[0].contains("tm enqueue copy 0"));
    assert!(r.traces[0].trim_end().ends_with("B") && r.traces[0].contains("depart port 1"));
    assert!(
        r.traces[1].contains("DROP (ingress_drop)"),
        "{}",
        r.traces[1]
    );
    // Untraced runs carry no traces.
    assert!(run_tiny(&stf).traces.is_empty());
}

#[test]
fn a_wrong_byte_fails_with_line_and_caret() {
    let stf = format!(
        "{ROUTES}packet 0 {}\nexpect 1 {}\n",
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0),
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0x12),
    );
    let r = run_tiny(&stf);
    assert!(!r.passed);
    assert_eq!(r.failures.len(), 1, "{r}");
    let f = &r.failures[0];
    assert!(
        f.starts_with("line 5: packet #1 on port 1 differs at byte 10 (nibble 21)"),
        "{f}"
    );
    assert!(
        f.contains("expected: 0A 09 09 09 01 01 01 01 06 40 12"),
        "{f}"
    );
    assert!(
        f.contains("actual:   0A 09 09 09 01 01 01 01 06 40 11"),
        "{f}"
    );
    // The caret is under the differing nibble.
    let lines: Vec<&str> = f.lines().collect();
    let caret = lines[3].find('^').unwrap();
    assert_eq!(&lines[2][caret..=caret], "1");
    // 5 spaces of prefix, then one between each of the 10 bytes before it.
    assert_eq!(lines[2][..caret].matches(' ').count(), 15);
}

#[test]
fn missing_and_unexpected_packets_fail_but_unknown_ports_are_notes() {
    // Expected on port 2, but the packet goes to port 1: port 2 is missing
    // one and port 1 (an interface, named by an expect) has an extra one.
    let stf = format!(
        "{ROUTES}packet 0 {}\nexpect 2 {}\nexpect 1\n",
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0),
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0x11),
    );
    let r = run_tiny(&stf);
    assert!(!r.passed);
    assert_eq!(
        r.failures.len(),
        1,
        "port 1 accepts anything (`expect 1`): {r}"
    );
    assert!(
        r.failures[0].contains("expected 1 packets on port 2, got 0"),
        "{r}"
    );

    let stf = format!(
        "{ROUTES}packet 0 {}\nexpect 2 {}\n",
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0),
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0x11),
    );
    let r = run_tiny(&stf);
    assert!(!r.passed);
    assert_eq!(r.failures.len(), 1, "{r}");
    assert_eq!(r.notes.len(), 1, "port 1 is no interface here: {r}");
    assert!(r.notes[0].contains("port 1"), "{r}");

    // A packet on an interface with no expectations fails.
    let stf = format!(
        "{ROUTES}packet 1 {}\n",
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0)
    );
    let r = run_tiny(&stf);
    assert!(!r.passed, "{r}");
    assert!(
        r.failures[0].contains("expected 0 packets on port 1, got 1"),
        "{r}"
    );
}

#[test]
fn wait_checks_each_phase_separately() {
    let p = pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0);
    let out = pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0x11);
    // The expectation sits after the wait, so the first phase sees an
    // unexpected packet and the second a missing one.
    let r = run_tiny(&format!("{ROUTES}packet 0 {p}\nwait\nexpect 1 {out}\n"));
    assert_eq!(r.failures.len(), 2, "{r}");
    assert!(r.failures[0].starts_with("wait at line 5"), "{r}");
    let r = run_tiny(&format!(
        "{ROUTES}packet 0 {p}\nexpect 1 {out}\nwait\npacket 0 {p}\nexpect 1 {out}\n"
    ));
    assert!(r.passed, "{r}");
}

#[test]
fn larger_stf_priority_wins_like_p4c() {
    let stf = format!(
        "{ROUTES}
add acl 10 hdr.ipv4.srcAddr:0x01000000&&&0xff000000 set_ttl(ttl:10)
add acl 20 srcAddr:0x0101**** protocol:0x** set_ttl(ttl:20)
add acl 5 protocol:17 deny()
packet 0 {}
expect 1 {}
packet 0 {}
expect 1 {}
packet 0 {}
",
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0),
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 20, 0x11),
        pkt([10, 9, 9, 9], [1, 2, 1, 1], 6, 64, 0),
        pkt([10, 9, 9, 9], [1, 2, 1, 1], 6, 10, 0x11),
        pkt([10, 9, 9, 9], [2, 2, 2, 2], 17, 64, 0),
    );
    let r = run_tiny(&stf);
    assert!(r.passed, "{r}");
}

#[test]
fn counters_registers_and_digests_can_be_checked() {
    let stf = format!(
        "{ROUTES}
register_write last_dst 0 7
check_register last_dst 0 7
packet 3 {}
expect 1 {}
packet 3 {}
wait
check_counter pkts(3) packets == 2
check_counter MyIngress.pkts(3) bytes == 22
check_counter pkts(0) packets == 0
check_register MyIngress.last_dst 0 11.0.0.1
check_digest miss_t 11.0.0.1
",
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0),
        pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0x11),
        pkt([11, 0, 0, 1], [1, 1, 1, 1], 6, 64, 0),
    );
    let r = run_tiny(&stf);
    assert!(r.passed, "{r}");

    let r = run_tiny(
        "check_counter pkts(0) packets == 1\ncheck_register last_dst 0 1\ncheck_digest miss_t 1\n",
    );
    assert_eq!(r.failures.len(), 3, "{r}");
    assert!(r.failures[0].contains("packets is 0, expected Eq 1"), "{r}");
    assert!(r.failures[1].contains("is 0x0, expected 0x1"), "{r}");
    assert!(r.failures[2].contains("no (further) digest miss_t"), "{r}");
}

#[test]
fn control_plane_mistakes_are_failures_with_lines() {
    let r = run_tiny(
        "add nosuch x:1 a()
add ipv4_lpm hdr.ipv4.dstAddr:10.0.0.0/8 nosuch()
add ipv4_lpm hdr.ipv4.dstAddr:10.0.0.0/8 set_nhop(port:1)
add ipv4_lpm hdr.ipv4.dstAddr:10.0.0.0/40 set_nhop(port:1, mark:1)
add ipv4_lpm hdr.ipv4.dstAddr:10.0.0.0/8 set_nhop(port:512, mark:1)
add ipv4_lpm bogus:1 set_nhop(port:1, mark:1)
setdefault ipv4_lpm set_ttl(ttl:1)
",
    );
    let lines: Vec<&str> = r
        .failures
        .iter()
        .map(|f| f.split(':').next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "line 1", "line 2", "line 3", "line 4", "line 5", "line 6", "line 7"
        ],
        "{r}"
    );
    assert!(r.failures[0].contains("no table named `nosuch`"), "{r}");
    assert!(
        r.failures[2].contains("missing parameter `port`")
            || r.failures[2].contains("missing parameter `mark`"),
        "{r}"
    );
    assert!(r.failures[4].contains("does not fit in 9 bits"), "{r}");
}

#[test]
fn syntax_errors_fail_before_running() {
    let r = run_tiny("packet 0 zz\nwait\nfrobnicate 1\n");
    assert!(!r.passed);
    assert_eq!(r.failures.len(), 2, "{r}");
    assert!(r.failures[0].starts_with("syntax: line 1"), "{r}");
    assert_eq!(r.packets_in, 0);
}

#[test]
fn multicast_and_mirroring_commands_configure_the_switch() {
    let p = pkt([10, 9, 9, 9], [1, 1, 1, 1], 0xff, 64, 0);
    let out = pkt([10, 9, 9, 9], [1, 1, 1, 1], 0xff, 64, 0x11);
    let c = pkt([10, 9, 9, 9], [1, 1, 1, 1], 0xfe, 64, 0);
    let c_out = pkt([10, 9, 9, 9], [1, 1, 1, 1], 0xfe, 64, 0x11);
    let stf = format!(
        "{ROUTES}
mc_mgrp_create 1
mc_node_create 0 4 5
mc_node_associate 1 0
mirroring_add 3 6
packet 0 {p}
expect 4 {out}$
expect 5 {out}$
packet 0 {c}
expect 1 {c_out}$
# the clone re-parses the original bytes: mark 0
expect 6 {c}$
"
    );
    let r = run_tiny(&stf);
    assert!(r.passed, "{r}");
    let r = run_tiny("mc_node_associate 1 0\n");
    assert!(
        r.failures[0].contains("no multicast node with handle 0"),
        "{r}"
    );
}

#[test]
fn direct_counters_are_read_through_entry_handles() {
    let a = pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0);
    let a_out = pkt([10, 9, 9, 9], [1, 1, 1, 1], 6, 64, 0x11);
    let b = pkt([10, 1, 1, 1], [1, 1, 1, 1], 6, 64, 0);
    let b_out = pkt([10, 1, 1, 1], [1, 1, 1, 1], 6, 64, 0x22);
    let stf = format!(
        "add ipv4_lpm hdr.ipv4.dstAddr:10.0.0.0/8 set_nhop(port:1, mark:0x11) = R8
add ipv4_lpm hdr.ipv4.dstAddr:10.1.0.0/16 set_nhop(port:2, mark:0x22) = R16
packet 0 {a}
expect 1 {a_out}
packet 0 {a}
expect 1 {a_out}
packet 0 {b}
expect 2 {b_out}
check_counter lpm_hits($R8) packets == 2
check_counter lpm_hits($R8) bytes == 22
check_counter MyIngress.lpm_hits($R16) packets == 1
"
    );
    let r = run_tiny(&stf);
    assert!(r.passed, "{r}");

    let r = run_tiny(&format!(
        "{stf}check_counter lpm_hits($R16) packets == 5
check_counter lpm_hits(0)
check_counter pkts($R8)
check_counter lpm_hits($NOPE)
"
    ));
    assert_eq!(r.failures.len(), 4, "{r}");
    assert!(
        r.failures[0].contains("lpm_hits($R16): packets is 1, expected Eq 5"),
        "{r}"
    );
    assert!(r.failures[1].contains("is a direct counter"), "{r}");
    assert!(r.failures[2].contains("is an indirect counter"), "{r}");
    assert!(
        r.failures[3].contains("no entry was added with `= NOPE`"),
        "{r}"
    );
}
