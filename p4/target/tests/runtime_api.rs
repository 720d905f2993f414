//! The control-plane API (`RuntimeApi for Runtime`) and the per-packet
//! calls generated code makes, on a small program with every kind of
//! object: an LPM table with direct counter and meter, a const ACL, an
//! ECMP table behind an action selector, a keyless table, indirect
//! counters and meters, a register and a parser value set.

use p4_target::externs::{BitPacker, MeterConfig};
use p4_target::info::*;
use p4_target::runtime::*;
use p4_target::table::EngineKind;

const NO_ACTION: u32 = 0x0100_0001;
const SET_PORT: u32 = 0x0100_0002;
const DROP: u32 = 0x0100_0003;
const SET_NHOP: u32 = 0x0100_0004;

const T_LPM: u32 = 0x0200_0001;
const T_ACL: u32 = 0x0200_0002;
const T_ECMP: u32 = 0x0200_0003;
const T_KEYLESS: u32 = 0x0200_0004;
const P_ECMP: u32 = 0x1100_0001;
const C_PORT: u32 = 0x1200_0001;
const C_LPM: u32 = 0x1300_0001;
const M_POLICE: u32 = 0x1400_0001;
const M_LPM: u32 = 0x1500_0001;
const R_SEEN: u32 = 0x1600_0001;
const R_WIDE: u32 = 0x1600_0002;
const V_PORTS: u32 = 0x0300_0001;

static PORT: [ParamInfo; 1] = [ParamInfo {
    id: 1,
    name: "port",
    bitwidth: 9,
}];
static NHOP: [ParamInfo; 2] = [
    ParamInfo {
        id: 1,
        name: "dmac",
        bitwidth: 48,
    },
    ParamInfo {
        id: 2,
        name: "port",
        bitwidth: 9,
    },
];
static ACTIONS: [ActionInfo; 4] = [
    ActionInfo {
        id: NO_ACTION,
        name: "NoAction",
        params: &[],
    },
    ActionInfo {
        id: SET_PORT,
        name: "MyIngress.set_port",
        params: &PORT,
    },
    ActionInfo {
        id: DROP,
        name: "MyIngress.drop",
        params: &[],
    },
    ActionInfo {
        id: SET_NHOP,
        name: "MyIngress.set_nhop",
        params: &NHOP,
    },
];

static LPM_KEYS: [KeyInfo; 1] = [KeyInfo {
    id: 1,
    name: "hdr.ipv4.dstAddr",
    bitwidth: 32,
    kind: MatchKind::Lpm,
}];
static LPM_ACTIONS: [ActionRef; 3] = [
    ActionRef {
        id: SET_PORT,
        scope: ActionScope::TableAndDefault,
    },
    ActionRef {
        id: DROP,
        scope: ActionScope::DefaultOnly,
    },
    ActionRef {
        id: SET_NHOP,
        scope: ActionScope::TableOnly,
    },
];
static ACL_KEYS: [KeyInfo; 2] = [
    KeyInfo {
        id: 1,
        name: "hdr.ipv4.protocol",
        bitwidth: 8,
        kind: MatchKind::Ternary,
    },
    KeyInfo {
        id: 2,
        name: "meta.l4_dport",
        bitwidth: 16,
        kind: MatchKind::Range,
    },
];
static ACL_ACTIONS: [ActionRef; 2] = [
    ActionRef {
        id: NO_ACTION,
        scope: ActionScope::TableAndDefault,
    },
    ActionRef {
        id: DROP,
        scope: ActionScope::TableAndDefault,
    },
];
static ACL_ENTRIES: [ConstEntryInfo; 2] = [
    ConstEntryInfo {
        matches: &[
            Some(FieldMatch::Ternary {
                value: 17,
                mask: 0xff,
            }),
            Some(FieldMatch::Range {
                low: 4791,
                high: 4791,
            }),
        ],
        priority: 20,
        action_id: NO_ACTION,
        params: &[],
    },
    ConstEntryInfo {
        matches: &[
            Some(FieldMatch::Ternary {
                value: 17,
                mask: 0xff,
            }),
            None,
        ],
        priority: 10,
        action_id: DROP,
        params: &[],
    },
];
static ECMP_KEYS: [KeyInfo; 1] = [KeyInfo {
    id: 1,
    name: "meta.nhop_group",
    bitwidth: 16,
    kind: MatchKind::Exact,
}];
static ECMP_ACTIONS: [ActionRef; 2] = [
    ActionRef {
        id: SET_NHOP,
        scope: ActionScope::TableAndDefault,
    },
    ActionRef {
        id: DROP,
        scope: ActionScope::TableAndDefault,
    },
];
static KEYLESS_ACTIONS: [ActionRef; 1] = [ActionRef {
    id: SET_PORT,
    scope: ActionScope::TableAndDefault,
}];

static TABLES: [TableInfo; 4] = [
    TableInfo {
        direct_counter: Some(C_LPM),
        direct_meter: Some(M_LPM),
        ..TableInfo::plain(
            T_LPM,
            "MyIngress.ipv4_lpm",
            &LPM_KEYS,
            &LPM_ACTIONS,
            3,
            (DROP, &[]),
        )
    },
    TableInfo {
        default_is_const: true,
        is_const: true,
        const_entries: &ACL_ENTRIES,
        ..TableInfo::plain(
            T_ACL,
            "MyIngress.acl",
            &ACL_KEYS,
            &ACL_ACTIONS,
            16,
            (NO_ACTION, &[]),
        )
    },
    TableInfo {
        implementation: Some(P_ECMP),
        ..TableInfo::plain(
            T_ECMP,
            "MyIngress.ecmp",
            &ECMP_KEYS,
            &ECMP_ACTIONS,
            16,
            (DROP, &[]),
        )
    },
    TableInfo::plain(
        T_KEYLESS,
        "MyIngress.fixed",
        &[],
        &KEYLESS_ACTIONS,
        1,
        (SET_PORT, &[5]),
    ),
];

static PROGRAM: ProgramInfo = ProgramInfo {
    name: "test",
    arch: "v1model",
    tables: &TABLES,
    actions: &ACTIONS,
    action_profiles: &[ActionProfileInfo {
        id: P_ECMP,
        name: "MyIngress.ecmp_selector",
        table_ids: &[T_ECMP],
        selector: Some((HashAlgorithm::Crc16, 16)),
        size: 4,
    }],
    counters: &[
        CounterInfo {
            id: C_PORT,
            name: "port_counter",
            unit: CounterUnit::Both,
            size: 8,
            direct_table: None,
        },
        CounterInfo {
            id: C_LPM,
            name: "lpm_counter",
            unit: CounterUnit::Both,
            size: 0,
            direct_table: Some(T_LPM),
        },
    ],
    meters: &[
        MeterInfo {
            id: M_POLICE,
            name: "police",
            unit: CounterUnit::Packets,
            size: 2,
            direct_table: None,
        },
        MeterInfo {
            id: M_LPM,
            name: "lpm_meter",
            unit: CounterUnit::Bytes,
            size: 0,
            direct_table: Some(T_LPM),
        },
    ],
    registers: &[
        RegisterInfo {
            id: R_SEEN,
            name: "seen",
            bitwidth: 12,
            signed: false,
            size: 4,
        },
        RegisterInfo {
            id: R_WIDE,
            name: "wide",
            bitwidth: 320,
            signed: false,
            size: 2,
        },
    ],
    digests: &[],
    controller_headers: &[],
    value_sets: &[ValueSetInfo {
        id: V_PORTS,
        name: "ports",
        bitwidth: 16,
        size: 2,
        fields: &[],
    }],
    p4info_text: "",
};

fn route(value: u128, prefix_len: u32, port: u128) -> TableEntry {
    TableEntry {
        matches: vec![Some(FieldMatch::Lpm { value, prefix_len })],
        priority: 0,
        action: EntryAction::Direct(ActionCall::new(SET_PORT, &[port])),
        metadata: b"cookie".to_vec(),
    }
}

fn invalid_field(e: RuntimeError) -> String {
    match e {
        RuntimeError::Invalid { field, .. } => field,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

fn action_of(l: &p4_target::table::Lookup<'_>) -> (bool, EntryAction) {
    (l.hit, l.action.clone())
}

#[test]
fn new_builds_every_object_with_const_entries_and_defaults() {
    let mut rt = Runtime::new(&PROGRAM);
    assert_eq!(rt.tables.len(), 4);
    assert_eq!(rt.counters.len(), 2, "one element per info.counters entry");
    assert_eq!(rt.meters.len(), 2);
    assert_eq!(rt.tables[0].engine_kind(), EngineKind::Lpm);
    assert_eq!(rt.tables[1].engine_kind(), EngineKind::Priority);
    assert_eq!(rt.tables[2].engine_kind(), EngineKind::Exact);
    assert_eq!(rt.tables[3].engine_kind(), EngineKind::Keyless);

    // The const ACL: RoCEv2 (UDP 4791) passes, other UDP drops, TCP misses.
    let (hit, a) = action_of(&rt.tables[1].lookup(&[17, 4791], 100));
    assert!(hit);
    assert_eq!(a, EntryAction::Direct(ActionCall::new(NO_ACTION, &[])));
    let (hit, a) = action_of(&rt.tables[1].lookup(&[17, 53], 100));
    assert!(hit);
    assert_eq!(a, EntryAction::Direct(ActionCall::new(DROP, &[])));
    let (hit, _) = action_of(&rt.tables[1].lookup(&[6, 4791], 100));
    assert!(!hit);
    assert_eq!(rt.table_entries(T_ACL).unwrap().len(), 2);
    assert!(matches!(
        rt.table_delete(T_ACL, ACL_ENTRIES[1].matches, 10),
        Err(RuntimeError::NotPermitted(_))
    ));
    assert!(matches!(
        rt.table_set_default(T_ACL, ActionCall::new(DROP, &[])),
        Err(RuntimeError::NotPermitted(_))
    ));
    rt.table_clear(T_ACL).unwrap();
    assert_eq!(
        rt.table_entries(T_ACL).unwrap().len(),
        2,
        "const entries survive a clear"
    );

    // Keyless: always the default action, and no entries.
    let (hit, a) = action_of(&rt.tables[3].lookup(&[], 60));
    assert!(!hit);
    assert_eq!(a, EntryAction::Direct(ActionCall::new(SET_PORT, &[5])));
    assert_eq!(
        invalid_field(
            rt.table_insert(
                T_KEYLESS,
                TableEntry {
                    matches: vec![],
                    priority: 0,
                    action: EntryAction::Direct(ActionCall::new(SET_PORT, &[1])),
                    metadata: vec![],
                }
            )
            .unwrap_err()
        ),
        "match"
    );
}

#[test]
fn entries_are_validated_and_failed_calls_change_nothing() {
    let mut rt = Runtime::new(&PROGRAM);
    rt.table_insert(T_LPM, route(0x0a00_0000, 8, 1)).unwrap();
    let before = rt.table_entries(T_LPM).unwrap();

    let e = rt
        .table_insert(T_LPM, route(0x0b00_0000, 8, 512))
        .unwrap_err();
    assert_eq!(invalid_field(e), "action.params[0] (port)");
    let e = rt
        .table_insert(T_LPM, route(0x0b00_0001, 8, 1))
        .unwrap_err();
    assert_eq!(invalid_field(e), "match[0] (hdr.ipv4.dstAddr)");
    let e = rt
        .table_insert(T_LPM, route(0x0b00_0000, 33, 1))
        .unwrap_err();
    assert_eq!(invalid_field(e), "match[0] (hdr.ipv4.dstAddr)");
    let mut with_prio = route(0x0b00_0000, 8, 1);
    with_prio.priority = 3;
    assert_eq!(
        invalid_field(rt.table_insert(T_LPM, with_prio).unwrap_err()),
        "priority"
    );
    let mut drop = route(0x0b00_0000, 8, 1);
    drop.action = EntryAction::Direct(ActionCall::new(DROP, &[]));
    assert_eq!(
        invalid_field(rt.table_insert(T_LPM, drop).unwrap_err()),
        "action.action_id"
    );
    let mut short = route(0x0b00_0000, 8, 1);
    short.action = EntryAction::Direct(ActionCall::new(SET_NHOP, &[1]));
    assert_eq!(
        invalid_field(rt.table_insert(T_LPM, short).unwrap_err()),
        "action.params"
    );
    let mut member = route(0x0b00_0000, 8, 1);
    member.action = EntryAction::Member(1);
    assert_eq!(
        invalid_field(rt.table_insert(T_LPM, member).unwrap_err()),
        "action"
    );
    assert_eq!(
        rt.table_insert(T_LPM, route(0x0a00_0000, 8, 2)),
        Err(RuntimeError::AlreadyExists {
            table: "MyIngress.ipv4_lpm"
        })
    );
    assert!(matches!(
        rt.table_insert(0x0200_0099, route(0, 8, 1)),
        Err(RuntimeError::UnknownId { kind: "table", .. })
    ));
    assert_eq!(rt.table_entries(T_LPM).unwrap(), before, "nothing changed");

    rt.table_insert(T_LPM, route(0x0b00_0000, 8, 2)).unwrap();
    rt.table_insert(T_LPM, route(0x0c00_0000, 8, 3)).unwrap();
    assert_eq!(
        rt.table_insert(T_LPM, route(0x0d00_0000, 8, 4)),
        Err(RuntimeError::Full {
            table: "MyIngress.ipv4_lpm",
            size: 3
        })
    );

    // Modify keeps the key, replaces action and cookie; delete by key.
    let mut m = route(0x0a00_0000, 8, 7);
    m.metadata = b"v2".to_vec();
    rt.table_modify(T_LPM, m.clone()).unwrap();
    let (_, a) = action_of(&rt.tables[0].lookup(&[0x0a01_0203], 64));
    assert_eq!(a, EntryAction::Direct(ActionCall::new(SET_PORT, &[7])));
    assert_eq!(rt.table_entries(T_LPM).unwrap()[0], m);
    assert_eq!(
        rt.table_modify(T_LPM, route(0x0e00_0000, 8, 1)),
        Err(RuntimeError::NotFound {
            table: "MyIngress.ipv4_lpm"
        })
    );
    rt.table_delete(T_LPM, &m.matches, 0).unwrap();
    let (hit, a) = action_of(&rt.tables[0].lookup(&[0x0a01_0203], 64));
    assert!(!hit);
    assert_eq!(a, EntryAction::Direct(ActionCall::new(DROP, &[])));
    rt.table_clear(T_LPM).unwrap();
    assert!(rt.table_entries(T_LPM).unwrap().is_empty());
}

#[test]
fn default_actions_follow_scopes() {
    let mut rt = Runtime::new(&PROGRAM);
    assert_eq!(rt.table_default(T_LPM).unwrap(), ActionCall::new(DROP, &[]));
    rt.table_set_default(T_LPM, ActionCall::new(SET_PORT, &[3]))
        .unwrap();
    let (_, a) = action_of(&rt.tables[0].lookup(&[1], 64));
    assert_eq!(a, EntryAction::Direct(ActionCall::new(SET_PORT, &[3])));
    assert_eq!(
        invalid_field(
            rt.table_set_default(T_LPM, ActionCall::new(SET_NHOP, &[1, 1]))
                .unwrap_err()
        ),
        "default_action.action_id"
    );
    assert_eq!(
        invalid_field(
            rt.table_set_default(T_LPM, ActionCall::new(SET_PORT, &[1 << 9]))
                .unwrap_err()
        ),
        "default_action.params[0] (port)"
    );
    assert_eq!(
        rt.table_default(T_LPM).unwrap(),
        ActionCall::new(SET_PORT, &[3])
    );
    rt.table_reset_default(T_LPM).unwrap();
    assert_eq!(rt.table_default(T_LPM).unwrap(), ActionCall::new(DROP, &[]));
    assert!(matches!(
        rt.table_reset_default(T_ACL),
        Err(RuntimeError::NotPermitted(_))
    ));
}

#[test]
fn direct_counters_and_meters_follow_their_entries() {
    let mut rt = Runtime::new(&PROGRAM);
    let r = route(0x0a00_0000, 8, 1);
    rt.table_insert(T_LPM, r.clone()).unwrap();
    for len in [100, 200, 300] {
        assert!(rt.tables[0].lookup(&[0x0a00_0001], len).hit);
    }
    assert!(!rt.tables[0].lookup(&[0x0b00_0001], 999).hit);
    assert_eq!(
        rt.direct_counter_read(T_LPM, &r.matches, 0).unwrap(),
        CounterData {
            bytes: 600,
            packets: 3
        }
    );
    rt.direct_counter_write(T_LPM, &r.matches, 0, CounterData::default())
        .unwrap();
    assert_eq!(
        rt.direct_counter_read(T_LPM, &r.matches, 0).unwrap(),
        CounterData::default()
    );
    assert!(matches!(
        rt.direct_counter_read(T_LPM, &route(0x0b00_0000, 8, 1).matches, 0),
        Err(RuntimeError::NotFound { .. })
    ));
    assert_eq!(
        invalid_field(
            rt.direct_counter_read(T_ECMP, &[Some(FieldMatch::Exact(1))], 0)
                .unwrap_err()
        ),
        "table_entry"
    );

    // Direct meter, bytes: CBS 1000, PBS 2000, slow rates.
    let cfg = MeterConfig {
        cir: 1000,
        cburst: 1000,
        pir: 2000,
        pburst: 2000,
    };
    rt.direct_meter_set(T_LPM, &r.matches, 0, Some(cfg))
        .unwrap();
    let mut colours = vec![];
    for _ in 0..3 {
        let l = rt.tables[0].lookup(&[0x0a00_0001], 1000);
        let e = l.entry.unwrap();
        colours.push(rt.tables[0].direct_meter_execute(e, 0, 1000));
    }
    assert_eq!(colours, [0, 1, 2]);
    let bad = MeterConfig {
        cir: 10,
        cburst: 1,
        pir: 5,
        pburst: 1,
    };
    assert_eq!(
        invalid_field(
            rt.direct_meter_set(T_LPM, &r.matches, 0, Some(bad))
                .unwrap_err()
        ),
        "config.pir"
    );
    // Deleting and re-adding the route starts with fresh counters.
    rt.table_delete(T_LPM, &r.matches, 0).unwrap();
    rt.table_insert(T_LPM, r.clone()).unwrap();
    assert_eq!(
        rt.direct_counter_read(T_LPM, &r.matches, 0).unwrap(),
        CounterData::default()
    );
    let e = rt.tables[0].lookup(&[0x0a00_0001], 1000).entry.unwrap();
    assert_eq!(
        rt.tables[0].direct_meter_execute(e, 0, 1_000_000),
        0,
        "unconfigured is green"
    );
}

#[test]
fn selector_members_groups_and_references() {
    let mut rt = Runtime::new(&PROGRAM);
    let nhop = |port| ActionCall::new(SET_NHOP, &[0x0200_0000_0000 | port, port]);
    assert_eq!(
        invalid_field(
            rt.member_write(P_ECMP, 1, ActionCall::new(SET_PORT, &[1]), false)
                .unwrap_err()
        ),
        "action.action_id"
    );
    assert_eq!(
        invalid_field(
            rt.member_write(P_ECMP, 1, ActionCall::new(SET_NHOP, &[1, 1 << 9]), false)
                .unwrap_err()
        ),
        "action.params[1] (port)"
    );
    for m in 1..=3 {
        rt.member_write(P_ECMP, m, nhop(m as u128), false).unwrap();
    }
    rt.group_write(P_ECMP, 100, &[(1, 1), (2, 1), (3, 2)], false)
        .unwrap();
    let entry = |action| TableEntry {
        matches: vec![Some(FieldMatch::Exact(7))],
        priority: 0,
        action,
        metadata: vec![],
    };
    assert!(matches!(
        rt.table_insert(T_ECMP, entry(EntryAction::Group(101))).unwrap_err(),
        RuntimeError::MissingRef(m) if m.starts_with("action.action_profile_group_id")
    ));
    assert_eq!(
        invalid_field(
            rt.table_insert(T_ECMP, entry(EntryAction::Direct(nhop(1))))
                .unwrap_err()
        ),
        "action"
    );
    assert!(rt.table_entries(T_ECMP).unwrap().is_empty());
    rt.table_insert(T_ECMP, entry(EntryAction::Group(100)))
        .unwrap();

    // Per-packet path: lookup, then select by hash.
    let l = rt.tables[2].lookup(&[7], 64);
    assert_eq!(l.action, &EntryAction::Group(100));
    let mut counts = [0usize; 4];
    for flow in 0..4000u32 {
        let mut p = BitPacker::new();
        p.push(flow as u128, 32).push(4791, 16);
        let h = rt.hash(HashAlgorithm::Crc16, &p);
        let a = rt.profiles[0].select(100, h).unwrap();
        counts[a.params[1] as usize] += 1;
    }
    assert!(
        counts[3] > counts[1] + counts[1] / 2,
        "weight 2 gets about twice weight 1: {counts:?}"
    );

    assert!(matches!(
        rt.member_delete(P_ECMP, 1),
        Err(RuntimeError::InUse(_))
    ));
    assert!(matches!(
        rt.group_delete(P_ECMP, 100),
        Err(RuntimeError::InUse(_))
    ));
    // Re-point the entry at a member: the group becomes free, the member busy.
    rt.table_modify(T_ECMP, entry(EntryAction::Member(3)))
        .unwrap();
    rt.group_delete(P_ECMP, 100).unwrap();
    rt.member_delete(P_ECMP, 1).unwrap();
    assert!(matches!(
        rt.member_delete(P_ECMP, 3),
        Err(RuntimeError::InUse(_))
    ));
    assert_eq!(rt.profile_users(P_ECMP, &EntryAction::Member(3)), 1);
    rt.table_clear(T_ECMP).unwrap();
    rt.member_delete(P_ECMP, 3).unwrap();
    assert_eq!(rt.members(P_ECMP).unwrap(), vec![(2, nhop(2))]);
    assert!(rt.groups(P_ECMP).unwrap().is_empty());
    assert!(matches!(
        rt.members(0x1100_0009),
        Err(RuntimeError::UnknownId { .. })
    ));
}

#[test]
fn indirect_counters_meters_registers_and_value_sets() {
    let mut rt = Runtime::new(&PROGRAM);
    rt.counters[0].count(3, 1500);
    rt.counters[0].count(3, 64);
    assert_eq!(
        rt.counter_read(C_PORT, 3).unwrap(),
        CounterData {
            bytes: 1564,
            packets: 2
        }
    );
    rt.counter_write(
        C_PORT,
        3,
        CounterData {
            bytes: 1,
            packets: 1,
        },
    )
    .unwrap();
    assert_eq!(rt.counter_read(C_PORT, 3).unwrap().bytes, 1);
    assert_eq!(
        invalid_field(rt.counter_read(C_PORT, 8).unwrap_err()),
        "index"
    );
    assert!(matches!(
        rt.counter_read(C_LPM, 0),
        Err(RuntimeError::UnknownId {
            kind: "counter",
            ..
        })
    ));

    // Packet meter: CBS 1, PBS 2 -> green, yellow, red at one instant.
    rt.meter_set(
        M_POLICE,
        1,
        Some(MeterConfig {
            cir: 1,
            cburst: 1,
            pir: 1,
            pburst: 2,
        }),
    )
    .unwrap();
    let c: Vec<u8> = (0..3).map(|_| rt.meters[0].execute(1, 5, 1500)).collect();
    assert_eq!(c, [0, 1, 2]);
    assert_eq!(rt.meters[0].execute(0, 5, 1500), 0);
    assert_eq!(
        invalid_field(rt.meter_set(M_POLICE, 2, None).unwrap_err()),
        "index"
    );
    rt.meter_set(M_POLICE, 1, None).unwrap();
    assert_eq!(rt.meters[0].execute(1, 5, 1500), 0);

    rt.register_write(R_SEEN, 2, 0xabcd).unwrap();
    assert_eq!(rt.register_read(R_SEEN, 2).unwrap(), 0xbcd);
    assert_eq!(rt.registers[0].read(2), 0xbcd);
    assert_eq!(
        invalid_field(rt.register_read(R_SEEN, 4).unwrap_err()),
        "index"
    );
    // A 320-bit register: the pipeline reads and writes its cells; the
    // u128 control-plane API refuses it rather than cutting values.
    let big = p4_target::wide::Bits::<5>::ones(320);
    rt.registers[1].write_wide(1, big);
    assert_eq!(rt.registers[1].read_wide::<5>(1), big);
    assert_eq!(
        invalid_field(rt.register_read(R_WIDE, 1).unwrap_err()),
        "wide"
    );
    assert_eq!(
        invalid_field(rt.register_write(R_WIDE, 1, 5).unwrap_err()),
        "wide"
    );
    assert_eq!(rt.registers[1].read_wide::<5>(1), big);

    rt.value_set_write(V_PORTS, &[(4791, 0xffff), (0x1200, 0xff00)])
        .unwrap();
    assert!(rt.value_sets[0].contains(4791));
    assert!(rt.value_sets[0].contains(0x12ab));
    assert!(!rt.value_sets[0].contains(80));
    assert!(matches!(
        rt.value_set_write(V_PORTS, &[(1, 0xffff); 3]),
        Err(RuntimeError::Full { .. })
    ));
    assert_eq!(
        invalid_field(
            rt.value_set_write(V_PORTS, &[(0x1_0000, 0x1_ffff)])
                .unwrap_err()
        ),
        "members[0]"
    );
    assert!(
        rt.value_sets[0].contains(4791),
        "a refused write changes nothing"
    );
}

#[test]
fn random_is_reproducible_per_seed() {
    let mut rt = Runtime::new(&PROGRAM);
    let p = BitPacker::new();
    rt.set_seed(42);
    let a: Vec<u64> = (0..4).map(|_| rt.hash(HashAlgorithm::Random, &p)).collect();
    let r1 = rt.random(10, 20);
    rt.set_seed(42);
    let b: Vec<u64> = (0..4).map(|_| rt.hash(HashAlgorithm::Random, &p)).collect();
    assert_eq!(a, b);
    assert_eq!(rt.random(10, 20), r1);
    assert!((10..=20).contains(&r1));
}

/// Each runtime owns its generator: two on one thread (as the simulator's
/// switches are) each draw their own seeded sequence, interleaved or not.
#[test]
fn runtimes_on_one_thread_draw_their_own_sequences() {
    let (mut a, mut b) = (Runtime::new(&PROGRAM), Runtime::new(&PROGRAM));
    a.set_seed(1);
    b.set_seed(2);
    let (mut ga, mut gb) = (
        p4_target::externs::Rng::new(1),
        p4_target::externs::Rng::new(2),
    );
    for _ in 0..16 {
        assert_eq!(a.random(0, 1 << 40), ga.range(0, 1 << 40));
        assert_eq!(b.random(0, 1 << 40), gb.range(0, 1 << 40));
    }
}

/// `Runtime::random` maps its draw itself (constant bounds fold): the same
/// values and the same number of draws as `Rng::range` for every shape of
/// range, empty, power of two, other, 2^64 values and wider.
#[test]
fn random_draws_as_the_generator_range() {
    let mut rt = Runtime::new(&PROGRAM);
    let wide = u128::from(u64::MAX);
    let ranges = [
        (0u128, 65_535u128),
        (5, 5),
        (9, 3),
        (10, 20),
        (7, 7 + wide),
        (1, 2 + wide),
        (0, u128::MAX),
    ];
    for seed in [1u64, 42, 0x5eed] {
        rt.set_seed(seed);
        let mut g = p4_target::externs::Rng::new(seed);
        for _ in 0..50 {
            for (lo, hi) in ranges {
                assert_eq!(rt.random(lo, hi), g.range(lo, hi), "{lo}..={hi}");
            }
        }
    }
}

#[test]
fn entry_places_sort_into_insertion_order_and_skip_what_was_deleted() {
    let mut rt = Runtime::new(&PROGRAM);
    // The table holds three entries.
    for i in 0..3u128 {
        rt.table_insert(T_LPM, route(0x0a00_0000 + (i << 8), 24, 1))
            .unwrap();
    }
    // The freed handle of the second route goes to the fourth.
    let second = route(0x0a00_0100, 24, 1);
    rt.table_delete(T_LPM, &second.matches, 0).unwrap();
    rt.table_insert(T_LPM, route(0x0b00_0000, 8, 2)).unwrap();
    let (mut places, next) = rt.table_entry_places(T_LPM, 0, 2).unwrap();
    let (rest, end) = rt.table_entry_places(T_LPM, next.unwrap(), 2).unwrap();
    assert_eq!(end, None);
    places.extend(rest);
    assert_eq!(places.len(), 3);
    places.sort_unstable();
    let dst = |rows: &[EntryRow]| -> Vec<u128> {
        rows.iter()
            .map(|r| match r.entry.matches[0] {
                Some(FieldMatch::Lpm { value, .. }) => value,
                ref other => panic!("not an LPM match: {other:?}"),
            })
            .collect()
    };
    let rows = rt.table_rows_at(T_LPM, &places).unwrap();
    assert_eq!(
        dst(&rows),
        [0x0a00_0000, 0x0a00_0200, 0x0b00_0000],
        "insertion order, not handle order"
    );
    // A place outlives neither a delete nor its handle's reuse.
    let third = route(0x0a00_0200, 24, 1);
    rt.table_delete(T_LPM, &third.matches, 0).unwrap();
    let fifth = route(0x0b00_0000, 8, 2);
    rt.table_delete(T_LPM, &fifth.matches, 0).unwrap();
    rt.table_insert(T_LPM, route(0x0c00_0000, 8, 3)).unwrap();
    let rows = rt.table_rows_at(T_LPM, &places).unwrap();
    assert_eq!(dst(&rows), [0x0a00_0000]);
    assert!(matches!(
        rt.table_rows_at(0x0200_0999, &places),
        Err(RuntimeError::UnknownId { .. })
    ));
}

#[test]
fn entry_pages_go_through_the_runtime() {
    let mut rt = Runtime::new(&PROGRAM);
    rt.table_insert(T_LPM, route(0x0a00_0000, 8, 1)).unwrap();
    rt.table_insert(T_LPM, route(0x0b00_0000, 8, 2)).unwrap();
    assert!(rt.tables[0].lookup(&[0x0b00_0001], 77).hit);
    let (first, next) = rt.table_entries_page(T_LPM, 0, 1).unwrap();
    assert_eq!(first.len(), 1);
    let (second, end) = rt.table_entries_page(T_LPM, next.unwrap(), 1).unwrap();
    assert_eq!(end, None);
    assert_eq!(second[0].entry, route(0x0b00_0000, 8, 2));
    assert_eq!(
        second[0].counter,
        Some(CounterData {
            bytes: 77,
            packets: 1
        })
    );
    assert!(matches!(
        rt.table_entries_page(0x0200_0999, 0, 1),
        Err(RuntimeError::UnknownId { .. })
    ));
}
