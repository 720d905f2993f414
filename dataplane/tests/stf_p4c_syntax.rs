//! The STF runner through the public API only, on STF text written the way
//! p4c's test suite writes it: `stack$0.field` key names, `0x****0101`
//! don't-care nibbles, table and action names qualified by control, entry
//! handles (`= A`), priorities where the larger one wins, and expectations
//! without `$` that accept trailing bytes.
//!
//! The pipeline is written by hand against the generated-code contract:
//! `data(f1:32 f2:32 h1:16 b1:8 b2:8) extra0(h:16 b1:8 b2:8)`, table
//! `ingress.test1` (key `hdrs.data.f1` ternary, `setb1(val, port)`) and
//! `ingress.ex1` (key `hdrs.extra[0].h` ternary, `act1(val)`/`act2(val)`
//! writing `extra[0].b1`).

use dataplane::stf;
use p4_target::info::{
    ActionInfo, ActionRef, ActionScope, KeyInfo, MatchKind, ParamInfo, ProgramInfo, TableInfo,
};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{EntryAction, Runtime};
use p4_target::v1model::StandardMetadata;

const SETB1: u32 = 0x0100_0001;
const ACT1: u32 = 0x0100_0002;
const ACT2: u32 = 0x0100_0003;
const NOOP: u32 = 0x0100_0004;

const fn aref(id: u32) -> ActionRef {
    ActionRef {
        id,
        scope: ActionScope::TableAndDefault,
    }
}

static ACTIONS: [ActionInfo; 4] = [
    ActionInfo {
        id: SETB1,
        name: "ingress.setb1",
        params: &[
            ParamInfo {
                id: 1,
                name: "port",
                bitwidth: 9,
            },
            ParamInfo {
                id: 2,
                name: "val",
                bitwidth: 8,
            },
        ],
    },
    ActionInfo {
        id: ACT1,
        name: "ingress.act1",
        params: &[ParamInfo {
            id: 1,
            name: "val",
            bitwidth: 8,
        }],
    },
    ActionInfo {
        id: ACT2,
        name: "ingress.act2",
        params: &[ParamInfo {
            id: 1,
            name: "val",
            bitwidth: 8,
        }],
    },
    ActionInfo {
        id: NOOP,
        name: "ingress.noop",
        params: &[],
    },
];

const fn table(
    id: u32,
    name: &'static str,
    keys: &'static [KeyInfo],
    actions: &'static [ActionRef],
) -> TableInfo {
    TableInfo::plain(id, name, keys, actions, 16, (NOOP, &[]))
}

static TABLES: [TableInfo; 2] = [
    table(
        0x0200_0001,
        "ingress.test1",
        &[KeyInfo {
            id: 1,
            name: "hdrs.data.f1",
            bitwidth: 32,
            kind: MatchKind::Ternary,
        }],
        &[aref(SETB1), aref(NOOP)],
    ),
    table(
        0x0200_0002,
        "ingress.ex1",
        &[KeyInfo {
            id: 1,
            name: "hdrs.extra[0].h",
            bitwidth: 16,
            kind: MatchKind::Ternary,
        }],
        &[aref(ACT1), aref(ACT2), aref(NOOP)],
    ),
];

static INFO: ProgramInfo = ProgramInfo {
    name: "p4c_style",
    arch: "v1model",
    tables: &TABLES,
    actions: &ACTIONS,
    action_profiles: &[],
    counters: &[],
    meters: &[],
    registers: &[],
    digests: &[],
    controller_headers: &[],
    value_sets: &[],
    p4info_text: "",
};

const HDR_BYTES: usize = 16;

#[derive(Clone, Debug)]
struct Pkt {
    hdr: Option<[u8; HDR_BYTES]>,
    meta: StandardMetadata,
}

struct P4cStyle {
    rt: Runtime,
}

impl Pipeline for P4cStyle {
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
        let hdr = data.get(..HDR_BYTES).map(|h| {
            let mut a = [0u8; HDR_BYTES];
            a.copy_from_slice(h);
            a
        });
        Pkt { hdr, meta }
    }
    fn ingress(&mut self, pkt: &mut Pkt) {
        let Some(h) = pkt.hdr.as_mut() else {
            pkt.meta.mark_to_drop();
            return;
        };
        let f1 = u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as u128;
        let len = pkt.meta.packet_length;
        if let EntryAction::Direct(call) = self.rt.tables[0].lookup(&[f1], len).action
            && call.action_id == SETB1
        {
            pkt.meta.egress_spec = call.params[0] as u16;
            h[10] = call.params[1] as u8;
        }
        let xh = u16::from_be_bytes([h[12], h[13]]) as u128;
        if let EntryAction::Direct(call) = self.rt.tables[1].lookup(&[xh], len).action
            && (call.action_id == ACT1 || call.action_id == ACT2)
        {
            h[14] = call.params[0] as u8;
        }
    }
    fn egress(&mut self, _pkt: &mut Pkt) {}
    fn deparse(&mut self, pkt: &mut Pkt, data: &[u8], out: &mut Vec<u8>) {
        out.clear();
        match pkt.hdr {
            Some(h) => {
                out.extend_from_slice(&h);
                out.extend_from_slice(&data[HDR_BYTES..]);
            }
            None => out.extend_from_slice(data),
        }
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

fn run(text: &str) -> stf::StfReport {
    stf::run(
        P4cStyle {
            rt: Runtime::new(&INFO),
        },
        text,
    )
}

const ENTRIES: &str = "
# Comments and blank lines are ignored.
add test1 0 data.f1:0x****0101 ingress.setb1(val:0x7f, port:2)
add test1 503 data.f1:0x****0202 ingress.setb1(val:7, port:3) = A
add ex1 100 extra$0.h:0x25** act1(val:0x25)
add ex1 110 extra$0.h:0x2525 act2(val:0x27)
";

#[test]
fn p4c_style_file_passes() {
    let text = format!(
        "{ENTRIES}
#          f1       f2      h1  b1 b2  h   b1 b2
expect 2 00000101 ******** **** 7f 66
packet 0 00000101 00000202 0303 55 66 7777 88 00
expect 3 00000202 ******** **** 07 66
packet 2 00000202 00000303 0404 55 66 7777 88 00 0102
wait
# h = 0x2525 matches both ex1 entries: priority 110 (act2) wins.
packet 2 00000202 00000303 0404 55 66 2525 88 00
expect 3 00000202 00000303 0404 07 66 2525 27 00 $
packet 2 00000202 00000303 0404 55 66 2500 88 00
expect 3 00000202 00000303 0404 07 66 2500 25 00 $
"
    );
    let report = run(&text);
    assert!(report.passed, "{report}");
    assert_eq!(report.packets_in, 4);
}

#[test]
fn the_lower_priority_entry_does_not_win() {
    // Same packet, but expecting act1's value: must fail, at the right byte.
    let text = format!(
        "{ENTRIES}packet 2 00000202 00000303 0404 55 66 2525 88 00\nexpect 3 00000202 00000303 0404 07 66 2525 25 00\n"
    );
    let report = run(&text);
    assert!(!report.passed);
    assert_eq!(report.failures.len(), 1, "{report}");
    assert!(
        report.failures[0].contains("differs at byte 14"),
        "{report}"
    );
}

#[test]
fn a_missing_packet_fails_and_a_packet_to_an_unnamed_port_is_a_note() {
    // The packet goes to port 2, which no line names (bmv2 would have no
    // interface there); port 3 misses its packet.
    let report = run(&format!(
        "{ENTRIES}packet 0 00000101 00000202 0303 55 66 7777 88 00\nexpect 3 00\n"
    ));
    assert!(!report.passed);
    assert_eq!(report.failures.len(), 1, "{report}");
    assert!(
        report.failures[0].contains("expected 1 packets on port 3, got 0"),
        "{report}"
    );
    assert_eq!(report.notes.len(), 1, "{report}");
    assert!(report.notes[0].contains("port 2"), "{report}");
}
