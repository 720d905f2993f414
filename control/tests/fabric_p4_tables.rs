//! `P4TablesBackend` on a program with roce_switch.p4's fabric-owned
//! tables and counters: a configuration becomes table contents in one
//! device job, a failing one leaves the tables as they were.

use control::device::{DeviceExt, LocalDevice};
use control::fabric::config::*;
use control::fabric::{BackendError, FabricBackend, P4TablesBackend};
use p4_target::info::*;
use p4_target::runtime::{ActionCall, CounterData, EntryAction, FieldMatch, Runtime, RuntimeApi};

const TRUST_DSCP: u32 = 0x0100_0001;
const TRUST_PCP: u32 = 0x0100_0002;
const SET_PRIORITY: u32 = 0x0100_0003;
const SET_RED: u32 = 0x0100_0004;
const RED_OFF: u32 = 0x0100_0005;
const T_TRUST: u32 = 0x0200_0001;
const T_DSCP: u32 = 0x0200_0002;
const T_PCP: u32 = 0x0200_0003;
const T_RED: u32 = 0x0200_0004;
const C_TX: u32 = 0x1200_0001;
const C_ECN: u32 = 0x1200_0002;

static PRIO: [ParamInfo; 1] = [ParamInfo {
    id: 1,
    name: "priority",
    bitwidth: 3,
}];
static RED: [ParamInfo; 3] = [
    ParamInfo {
        id: 1,
        name: "kmin_bytes",
        bitwidth: 32,
    },
    ParamInfo {
        id: 2,
        name: "kmax_bytes",
        bitwidth: 32,
    },
    ParamInfo {
        id: 3,
        name: "pmax",
        bitwidth: 16,
    },
];
static ACTIONS: [ActionInfo; 5] = [
    ActionInfo {
        id: TRUST_DSCP,
        name: "RoceIngress.trust_dscp",
        params: &[],
    },
    ActionInfo {
        id: TRUST_PCP,
        name: "RoceIngress.trust_pcp",
        params: &[],
    },
    ActionInfo {
        id: SET_PRIORITY,
        name: "RoceIngress.set_priority",
        params: &PRIO,
    },
    ActionInfo {
        id: SET_RED,
        name: "RoceEgress.set_red",
        params: &RED,
    },
    ActionInfo {
        id: RED_OFF,
        name: "RoceEgress.red_off",
        params: &[],
    },
];
const fn t(
    id: u32,
    name: &'static str,
    keys: &'static [KeyInfo],
    actions: &'static [ActionRef],
    size: u32,
    default: (u32, &'static [u128]),
) -> TableInfo {
    TableInfo {
        id,
        name,
        keys,
        actions,
        size,
        implementation: None,
        default_action: default,
        default_is_const: false,
        is_const: false,
        const_entries: &[],
        direct_counter: None,
        direct_meter: None,
        idle_timeout: false,
    }
}
const fn k(id: u32, name: &'static str, bitwidth: u32) -> KeyInfo {
    KeyInfo {
        id,
        name,
        bitwidth,
        kind: MatchKind::Exact,
    }
}
const fn a(id: u32) -> ActionRef {
    ActionRef {
        id,
        scope: ActionScope::TableAndDefault,
    }
}
static TABLES: [TableInfo; 4] = [
    // Two ports only, so a three-port configuration fails half-way.
    t(
        T_TRUST,
        "RoceIngress.port_trust",
        &[k(1, "ingress_port", 9)],
        &[a(TRUST_DSCP), a(TRUST_PCP)],
        2,
        (TRUST_DSCP, &[]),
    ),
    t(
        T_DSCP,
        "RoceIngress.dscp_to_priority",
        &[k(1, "dscp", 6)],
        &[a(SET_PRIORITY)],
        64,
        (SET_PRIORITY, &[0]),
    ),
    t(
        T_PCP,
        "RoceIngress.pcp_to_priority",
        &[k(1, "pcp", 3)],
        &[a(SET_PRIORITY)],
        8,
        (SET_PRIORITY, &[0]),
    ),
    t(
        T_RED,
        "RoceEgress.ecn_red",
        &[k(1, "egress_port", 9), k(2, "priority", 3)],
        &[a(SET_RED), a(RED_OFF)],
        64,
        (RED_OFF, &[]),
    ),
];
static PROGRAM: ProgramInfo = ProgramInfo {
    name: "fabric_tables",
    arch: "v1model",
    tables: &TABLES,
    actions: &ACTIONS,
    action_profiles: &[],
    counters: &[
        CounterInfo {
            id: C_TX,
            name: "RoceEgress.tx_port_prio",
            unit: CounterUnit::Both,
            size: 4096,
            direct_table: None,
        },
        CounterInfo {
            id: C_ECN,
            name: "RoceEgress.ecn_marked",
            unit: CounterUnit::Packets,
            size: 4096,
            direct_table: None,
        },
    ],
    meters: &[],
    registers: &[],
    digests: &[],
    controller_headers: &[],
    value_sets: &[],
    p4info_text: "",
};

fn port(n: u16, trust: Trust) -> PortConfig {
    PortConfig {
        port: n,
        speed_bps: 100_000_000_000,
        mtu_bytes: 4200,
        cable_length_m: 5,
        trust: Some(trust),
        pfc_priorities: vec![3],
    }
}

fn config() -> FabricConfig {
    let mut c = FabricConfig {
        ports: vec![port(0, Trust::Dscp), port(1, Trust::Pcp)],
        ..Default::default()
    };
    c.qos_maps.dscp_to_priority[46] = 5;
    c.qos_maps.default_priority = 1;
    c.ecn = vec![EcnProfile {
        port: 0,
        priority: 3,
        enabled: true,
        kmin_bytes: 5_000,
        kmax_bytes: 200_000,
        pmax: 0.5,
    }];
    assert!(c.validate().is_empty());
    c
}

type Tables = Vec<(Vec<(Vec<Option<FieldMatch>>, EntryAction)>, ActionCall)>;

async fn tables(dev: &LocalDevice) -> Tables {
    dev.with_runtime(|rt: &mut dyn RuntimeApi| {
        [T_TRUST, T_DSCP, T_PCP, T_RED]
            .iter()
            .map(|&t| {
                let entries = rt
                    .table_entries(t)
                    .unwrap()
                    .into_iter()
                    .map(|e| (e.matches, e.action))
                    .collect();
                (entries, rt.table_default(t).unwrap())
            })
            .collect()
    })
    .await
    .unwrap()
}

fn direct(action_id: u32, params: &[u128]) -> EntryAction {
    EntryAction::Direct(ActionCall::new(action_id, params))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_becomes_table_contents_and_failures_restore_them() {
    let dev = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let backend = P4TablesBackend::new(&PROGRAM, dev.clone()).unwrap();
    backend.apply(&config()).unwrap();
    let got = tables(&dev).await;
    assert_eq!(
        got[0].0,
        vec![
            (vec![Some(FieldMatch::Exact(0))], direct(TRUST_DSCP, &[])),
            (vec![Some(FieldMatch::Exact(1))], direct(TRUST_PCP, &[])),
        ]
    );
    assert_eq!(got[1].0.len(), 64);
    assert_eq!(
        got[1].0[46],
        (
            vec![Some(FieldMatch::Exact(46))],
            direct(SET_PRIORITY, &[5])
        )
    );
    assert_eq!(
        got[1].0[26].1,
        direct(SET_PRIORITY, &[3]),
        "default map DSCP >> 3"
    );
    assert_eq!(got[1].1, ActionCall::new(SET_PRIORITY, &[1]));
    assert_eq!(got[2].0.len(), 8);
    assert_eq!(got[2].1, ActionCall::new(SET_PRIORITY, &[1]));
    assert_eq!(
        got[3].0,
        vec![(
            vec![Some(FieldMatch::Exact(0)), Some(FieldMatch::Exact(3))],
            direct(SET_RED, &[5_000, 200_000, 32_768])
        )]
    );

    // A third port overflows port_trust half-way: everything is put back.
    let mut three = config();
    three.ports.push(port(2, Trust::Dscp));
    three.qos_maps.dscp_to_priority[46] = 6;
    assert!(
        matches!(backend.apply(&three), Err(BackendError::Unsupported(m)) if m.contains("full"))
    );
    assert_eq!(tables(&dev).await, got);

    // Trust NONE cannot be expressed by the program: refused before any write.
    let mut none = config();
    none.ports[1].trust = Some(Trust::None);
    assert!(
        matches!(backend.apply(&none), Err(BackendError::Unsupported(m)) if m.contains("port 1"))
    );
    assert_eq!(tables(&dev).await, got);

    // Counters come from the program's per-(port, priority) counters.
    dev.with_runtime(|rt: &mut dyn RuntimeApi| {
        rt.counter_write(
            C_TX,
            8 + 3,
            CounterData {
                bytes: 1500,
                packets: 1,
            },
        )
        .unwrap();
        rt.counter_write(
            C_ECN,
            8 + 3,
            CounterData {
                bytes: 0,
                packets: 4,
            },
        )
        .unwrap();
    })
    .await
    .unwrap();
    let c = backend.counters(&[1]);
    assert_eq!(c.len(), 8);
    assert_eq!(
        (c[3].port, c[3].priority, c[3].tx_bytes, c[3].ecn_marked),
        (1, 3, 1500, 4)
    );
    assert_eq!(backend.counters(&[]).len(), 16, "all configured ports");
}

#[test]
fn a_program_without_the_fabric_tables_is_refused() {
    static EMPTY: ProgramInfo = ProgramInfo {
        tables: &[],
        ..PROGRAM
    };
    let dev = LocalDevice::new(Box::new(Runtime::new(&EMPTY)));
    let err = P4TablesBackend::new(&EMPTY, dev).unwrap_err();
    assert!(err.to_string().contains("port_trust"), "{err}");
}
