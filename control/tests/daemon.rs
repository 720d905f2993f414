//! The assembled daemon on a Unix socket: P4Runtime refuses the
//! fabric-owned tables of a program that has them, the fabric service hands
//! configurations to the dataplane's backend, and its state file survives a
//! restart (and is applied again).

use std::sync::Arc;

use control::daemon::{Daemon, DaemonOptions};
use control::device::LocalDevice;
use control::fabric::{FabricBackend, MemoryBackend};
use control::serve::Listen;
use p4_target::info::*;
use p4_target::runtime::Runtime;
use proto::p4::v1 as pb;
use proto::roceswitch::fabric::v1 as fpb;

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
        id: 0x0100_0001,
        name: "RoceIngress.trust_dscp",
        params: &[],
    },
    ActionInfo {
        id: 0x0100_0002,
        name: "RoceIngress.trust_pcp",
        params: &[],
    },
    ActionInfo {
        id: 0x0100_0003,
        name: "RoceIngress.set_priority",
        params: &PRIO,
    },
    ActionInfo {
        id: 0x0100_0004,
        name: "RoceEgress.set_red",
        params: &RED,
    },
    ActionInfo {
        id: 0x0100_0005,
        name: "RoceEgress.red_off",
        params: &[],
    },
];
const fn t(
    id: u32,
    name: &'static str,
    keys: &'static [KeyInfo],
    actions: &'static [ActionRef],
    default: (u32, &'static [u128]),
) -> TableInfo {
    TableInfo::plain(id, name, keys, actions, 64, default)
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
    t(
        0x0200_0001,
        "RoceIngress.port_trust",
        &[k(1, "ingress_port", 9)],
        &[a(0x0100_0001), a(0x0100_0002)],
        (0x0100_0001, &[]),
    ),
    t(
        0x0200_0002,
        "RoceIngress.dscp_to_priority",
        &[k(1, "dscp", 6)],
        &[a(0x0100_0003)],
        (0x0100_0003, &[0]),
    ),
    t(
        0x0200_0003,
        "RoceIngress.pcp_to_priority",
        &[k(1, "pcp", 3)],
        &[a(0x0100_0003)],
        (0x0100_0003, &[0]),
    ),
    t(
        0x0200_0004,
        "RoceEgress.ecn_red",
        &[k(1, "egress_port", 9), k(2, "priority", 3)],
        &[a(0x0100_0004), a(0x0100_0005)],
        (0x0100_0005, &[]),
    ),
];
static PROGRAM: ProgramInfo = ProgramInfo {
    name: "daemon_test",
    tables: &TABLES,
    actions: &ACTIONS,
    p4info_text: r#"
tables { preamble { id: 33554433 name: "RoceIngress.port_trust" } match_fields { id: 1 name: "ingress_port" bitwidth: 9 match_type: EXACT } action_refs { id: 16777217 } action_refs { id: 16777218 } size: 64 }
tables { preamble { id: 33554434 name: "RoceIngress.dscp_to_priority" } match_fields { id: 1 name: "dscp" bitwidth: 6 match_type: EXACT } action_refs { id: 16777219 } size: 64 }
tables { preamble { id: 33554435 name: "RoceIngress.pcp_to_priority" } match_fields { id: 1 name: "pcp" bitwidth: 3 match_type: EXACT } action_refs { id: 16777219 } size: 64 }
tables { preamble { id: 33554436 name: "RoceEgress.ecn_red" } match_fields { id: 1 name: "egress_port" bitwidth: 9 match_type: EXACT } match_fields { id: 2 name: "priority" bitwidth: 3 match_type: EXACT } action_refs { id: 16777220 } action_refs { id: 16777221 } size: 64 }
actions { preamble { id: 16777217 name: "RoceIngress.trust_dscp" } }
actions { preamble { id: 16777218 name: "RoceIngress.trust_pcp" } }
actions { preamble { id: 16777219 name: "RoceIngress.set_priority" } params { id: 1 name: "priority" bitwidth: 3 } }
actions { preamble { id: 16777220 name: "RoceEgress.set_red" } params { id: 1 name: "kmin_bytes" bitwidth: 32 } params { id: 2 name: "kmax_bytes" bitwidth: 32 } params { id: 3 name: "pmax" bitwidth: 16 } }
actions { preamble { id: 16777221 name: "RoceEgress.red_off" } }
"#,
    ..ProgramInfo::EMPTY
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_wires_ownership_fabric_tables_and_state() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("ctl.sock");
    let opts = DaemonOptions {
        listen: Listen::Unix(sock.clone()),
        device_id: 1,
        owned_table_access: control::p4rt::roles::OwnedTableAccess::OwnerOnly,
        state_file: Some(dir.path().join("fabric.json")),
        p4rt_state_file: None,
        fabric_defaults: Default::default(),
    };
    let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let dataplane = Arc::new(MemoryBackend::default());
    let backend: Arc<dyn FabricBackend> = dataplane.clone();
    let (bound, p4rt, fabric) =
        Daemon::build(opts.clone(), &PROGRAM, device.clone(), Some(backend))
            .unwrap()
            .bind()
            .await
            .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(bound.serve(Some(p4rt), Some(fabric), async {
        let _ = stopped.await;
    }));
    let channel = control::client::connect(&format!("unix:{}", sock.display()))
        .await
        .unwrap();

    // Fabric: DSCP 46 → priority 5 reaches the dataplane's backend.
    let mut f = fpb::fabric_qos_client::FabricQosClient::new(channel.clone());
    let mut maps = f
        .get_qos_maps(fpb::GetConfigRequest {})
        .await
        .unwrap()
        .into_inner();
    maps.dscp_to_priority[46] = 5;
    f.set_qos_maps(maps.clone()).await.unwrap();
    let applied = dataplane.applied();
    assert_eq!(applied.last().unwrap().qos_maps.dscp_to_priority[46], 5);

    // P4Runtime (owner-only policy): the same table is refused, naming the owner.
    let mut p = pb::p4_runtime_client::P4RuntimeClient::new(channel);
    let err = p
        .write(pb::WriteRequest {
            device_id: 1,
            updates: vec![pb::Update {
                r#type: pb::update::Type::Insert as i32,
                entity: Some(pb::Entity {
                    entity: Some(pb::entity::Entity::TableEntry(pb::TableEntry {
                        table_id: 0x0200_0002,
                        r#match: vec![pb::FieldMatch {
                            field_id: 1,
                            field_match_type: Some(pb::field_match::FieldMatchType::Exact(
                                pb::field_match::Exact { value: vec![1] },
                            )),
                        }],
                        action: Some(pb::TableAction {
                            r#type: Some(pb::table_action::Type::Action(pb::Action {
                                action_id: 0x0100_0003,
                                params: vec![pb::action::Param {
                                    param_id: 1,
                                    value: vec![1],
                                }],
                            })),
                        }),
                        ..Default::default()
                    })),
                }),
            }],
            ..Default::default()
        })
        .await
        .unwrap_err();
    let errs = control::p4rt::error::decode_write_errors(&err).unwrap();
    assert_eq!(tonic::Code::from(errs[0].0), tonic::Code::PermissionDenied);
    assert!(errs[0].1.contains("fabric"), "{}", errs[0].1);

    stop.send(()).unwrap();
    server.await.unwrap().unwrap();

    // Restart: the stored configuration is applied to a fresh dataplane.
    let device2 = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let dataplane2 = Arc::new(MemoryBackend::default());
    let backend2: Arc<dyn FabricBackend> = dataplane2.clone();
    let (_bound, _p4rt, fabric2) = Daemon::build(opts, &PROGRAM, device2, Some(backend2))
        .unwrap()
        .bind()
        .await
        .unwrap();
    assert_eq!(fabric2.config().await.qos_maps.dscp_to_priority[46], 5);
    assert_eq!(
        dataplane2
            .applied()
            .first()
            .map(|c| c.qos_maps.dscp_to_priority[46]),
        Some(5),
        "the restored configuration went to the dataplane"
    );
}
