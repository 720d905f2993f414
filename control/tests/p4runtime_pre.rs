//! P4Runtime `PacketReplicationEngineEntry` through the gRPC service:
//! multicast groups and clone sessions written, read back exactly as
//! written (by id and by wildcard), modified and deleted; each bad request
//! with its status code, the field named and no state change; all-or-nothing
//! batches that mix PRE and table updates rolling back whole; and a device
//! without a replication engine.

mod common;

use common::*;
use control::device::{DeviceExt, LocalDevice};
use p4_target::runtime::Runtime;
use pb::entity::Entity as E;
use pb::packet_replication_engine_entry::Type as PreType;
use pb::update::Type as U;
use pb::write_request::Atomicity;
use proto::p4::v1 as pb;
use tonic::Code;

// ---- builders -------------------------------------------------------------

/// A replica sent with the deprecated `egress_port` field.
fn rep(port: u32, instance: u32) -> pb::Replica {
    pb::Replica {
        port_kind: Some(pb::replica::PortKind::EgressPort(port)),
        instance,
        backup_replicas: Vec::new(),
    }
}

/// A replica sent with the `port` bytes field.
fn rep_bytes(port: &[u8], instance: u32) -> pb::Replica {
    pb::Replica {
        port_kind: Some(pb::replica::PortKind::Port(port.to_vec())),
        instance,
        backup_replicas: Vec::new(),
    }
}

fn group_entry(id: u32, replicas: Vec<pb::Replica>, metadata: &[u8]) -> pb::MulticastGroupEntry {
    pb::MulticastGroupEntry {
        multicast_group_id: id,
        replicas,
        metadata: metadata.to_vec(),
    }
}

fn session_entry(id: u32, replica: pb::Replica, cos: u32, len: i32) -> pb::CloneSessionEntry {
    pb::CloneSessionEntry {
        session_id: id,
        replicas: vec![replica],
        class_of_service: cos,
        packet_length_bytes: len,
    }
}

fn pre(t: PreType) -> E {
    E::PacketReplicationEngineEntry(pb::PacketReplicationEngineEntry { r#type: Some(t) })
}

fn group(g: pb::MulticastGroupEntry) -> E {
    pre(PreType::MulticastGroupEntry(g))
}

fn session(s: pb::CloneSessionEntry) -> E {
    pre(PreType::CloneSessionEntry(s))
}

fn all_groups() -> E {
    group(Default::default())
}

fn all_sessions() -> E {
    session(Default::default())
}

fn entities(es: Vec<E>) -> Vec<pb::Entity> {
    es.into_iter()
        .map(|e| pb::Entity { entity: Some(e) })
        .collect()
}

/// Everything the PRE holds, plus the table state (for "nothing changed").
async fn pre_snapshot(c: &mut Controller) -> Vec<pb::Entity> {
    let mut s = read(&mut c.client, vec![all_groups(), all_sessions()])
        .await
        .unwrap();
    s.extend(snapshot(&mut c.client).await);
    s
}

fn codes(err: &tonic::Status) -> Vec<Code> {
    update_errors(err)
        .into_iter()
        .map(|(c, _)| Code::from(c))
        .collect()
}

// ---- multicast groups -----------------------------------------------------

#[tokio::test]
async fn multicast_group_insert_read_modify_delete() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let g1 = group_entry(1, vec![rep(1, 0), rep(2, 0), rep(2, 7)], b"\xab\xcd");
    let g9 = group_entry(9, vec![rep(3, 1)], b"");
    write(
        &mut c,
        vec![
            update(U::Insert, group(g1.clone())),
            update(U::Insert, group(g9.clone())),
        ],
    )
    .await
    .unwrap();

    // Exact read: what was written, replica order and metadata included.
    let got = read(&mut c.client, vec![group(group_entry(1, vec![], b""))])
        .await
        .unwrap();
    assert_eq!(got, entities(vec![group(g1.clone())]));
    // Wildcard read: every group, by id.
    let got = read(&mut c.client, vec![all_groups()]).await.unwrap();
    assert_eq!(got, entities(vec![group(g1.clone()), group(g9.clone())]));
    // An id that does not exist reads nothing.
    let got = read(&mut c.client, vec![group(group_entry(2, vec![], b""))])
        .await
        .unwrap();
    assert!(got.is_empty(), "{got:?}");

    // MODIFY replaces the whole replica list (and the metadata).
    let g1b = group_entry(1, vec![rep(4, 3)], b"\x01");
    write(&mut c, vec![update(U::Modify, group(g1b.clone()))])
        .await
        .unwrap();
    let got = read(&mut c.client, vec![all_groups()]).await.unwrap();
    assert_eq!(got, entities(vec![group(g1b), group(g9.clone())]));

    // DELETE needs only the id.
    write(
        &mut c,
        vec![update(U::Delete, group(group_entry(1, vec![], b"")))],
    )
    .await
    .unwrap();
    let got = read(&mut c.client, vec![all_groups()]).await.unwrap();
    assert_eq!(got, entities(vec![group(g9)]));

    // The device's engine replicates as written.
    let replicas = h
        .device
        .with_state(|dev| {
            let pre = dev.pre.as_deref().expect("LocalDevice has a PRE");
            pre.mc_group(9).map(|r| r.to_vec())
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        replicas,
        vec![p4_target::arch::McReplica { port: 3, rid: 1 }]
    );
}

#[tokio::test]
async fn an_empty_group_is_a_group() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let g = group_entry(5, vec![], b"");
    write(&mut c, vec![update(U::Insert, group(g.clone()))])
        .await
        .unwrap();
    let got = read(&mut c.client, vec![all_groups()]).await.unwrap();
    assert_eq!(got, entities(vec![group(g)]));
}

#[tokio::test]
async fn port_bytes_are_read_back_as_port_bytes_in_canonical_form() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    // Padded bytes (p4runtime-shell with canonical bytestrings off) and a
    // mix of both port forms in one group.
    let written = group_entry(3, vec![rep_bytes(&[0, 2], 0), rep(5, 0)], b"");
    write(&mut c, vec![update(U::Insert, group(written))])
        .await
        .unwrap();
    let got = read(&mut c.client, vec![all_groups()]).await.unwrap();
    let canonical = group_entry(3, vec![rep_bytes(&[2], 0), rep(5, 0)], b"");
    assert_eq!(got, entities(vec![group(canonical)]));
    // The same port in both forms is still a duplicate replica.
    let dup = group_entry(4, vec![rep_bytes(&[1], 0), rep(1, 0)], b"");
    let err = write(&mut c, vec![update(U::Insert, group(dup))])
        .await
        .unwrap_err();
    assert_eq!(codes(&err), vec![Code::InvalidArgument]);
}

// ---- clone sessions -------------------------------------------------------

#[tokio::test]
async fn clone_session_insert_read_modify_delete() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let s7 = session_entry(7, rep(3, 0), 5, 128);
    let s2 = session_entry(2, rep_bytes(&[0x01, 0xfe], 0), 0, 0);
    write(
        &mut c,
        vec![
            update(U::Insert, session(s7.clone())),
            update(U::Insert, session(s2.clone())),
        ],
    )
    .await
    .unwrap();
    let got = read(&mut c.client, vec![all_sessions()]).await.unwrap();
    assert_eq!(
        got,
        entities(vec![session(s2.clone()), session(s7.clone())])
    );
    let got = read(
        &mut c.client,
        vec![session(pb::CloneSessionEntry {
            session_id: 7,
            ..Default::default()
        })],
    )
    .await
    .unwrap();
    assert_eq!(got, entities(vec![session(s7)]));

    // The engine holds port, class of service and truncation.
    let cfg = h
        .device
        .with_state(|dev| dev.pre.as_deref().unwrap().clone_session(7).cloned())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        cfg,
        p4_target::arch::CloneSession {
            replicas: vec![p4_target::arch::McReplica { port: 3, rid: 0 }],
            class_of_service: 5,
            truncate_bytes: Some(128),
        }
    );

    let s7b = session_entry(7, rep(1, 0), 0, 0);
    write(&mut c, vec![update(U::Modify, session(s7b.clone()))])
        .await
        .unwrap();
    write(
        &mut c,
        vec![update(
            U::Delete,
            session(pb::CloneSessionEntry {
                session_id: 2,
                ..Default::default()
            }),
        )],
    )
    .await
    .unwrap();
    let got = read(&mut c.client, vec![all_sessions()]).await.unwrap();
    assert_eq!(got, entities(vec![session(s7b)]));
}

#[tokio::test]
async fn untyped_wildcard_reads_groups_then_sessions_and_is_empty_when_nothing_is_set() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let untyped = E::PacketReplicationEngineEntry(Default::default());
    // finsy's delete_all() sends these on a fresh switch.
    assert!(
        read(
            &mut c.client,
            vec![untyped.clone(), all_groups(), all_sessions()]
        )
        .await
        .unwrap()
        .is_empty()
    );
    let g = group_entry(1, vec![rep(1, 0)], b"");
    let s = session_entry(1, rep(2, 0), 0, 0);
    write(
        &mut c,
        vec![
            update(U::Insert, session(s.clone())),
            update(U::Insert, group(g.clone())),
        ],
    )
    .await
    .unwrap();
    let got = read(&mut c.client, vec![untyped]).await.unwrap();
    assert_eq!(got, entities(vec![group(g), session(s)]));
}

// ---- bad requests ---------------------------------------------------------

#[tokio::test]
async fn bad_pre_updates_fail_with_the_spec_code_naming_the_field_and_change_nothing() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    write(
        &mut c,
        vec![
            update(U::Insert, group(group_entry(1, vec![rep(1, 0)], b""))),
            update(U::Insert, session(session_entry(1, rep(2, 0), 0, 0))),
        ],
    )
    .await
    .unwrap();
    let before = pre_snapshot(&mut c).await;
    let no_port = pb::Replica {
        port_kind: None,
        instance: 0,
        backup_replicas: Vec::new(),
    };
    let with_backup = pb::Replica {
        backup_replicas: vec![pb::BackupReplica {
            port: vec![3],
            instance: 0,
        }],
        ..rep(2, 0)
    };
    let cases: Vec<(&str, pb::Update, Code, &str)> = vec![
        (
            "group id 0",
            update(U::Insert, group(group_entry(0, vec![rep(1, 0)], b""))),
            Code::InvalidArgument,
            "multicast_group_entry.multicast_group_id",
        ),
        (
            "group id wider than mcast_grp",
            update(U::Insert, group(group_entry(70_000, vec![], b""))),
            Code::InvalidArgument,
            "multicast_group_entry.multicast_group_id",
        ),
        (
            "delete group 0",
            update(U::Delete, group(group_entry(0, vec![], b""))),
            Code::InvalidArgument,
            "multicast_group_entry.multicast_group_id",
        ),
        (
            "duplicate replica",
            update(
                U::Insert,
                group(group_entry(2, vec![rep(1, 0), rep(3, 0), rep(1, 0)], b"")),
            ),
            Code::InvalidArgument,
            "multicast_group_entry.replicas[2]",
        ),
        (
            "instance wider than egress_rid",
            update(U::Insert, group(group_entry(2, vec![rep(1, 65_536)], b""))),
            Code::InvalidArgument,
            "multicast_group_entry.replicas[0].instance",
        ),
        (
            "port 511 (the drop port)",
            update(U::Insert, group(group_entry(2, vec![rep(511, 0)], b""))),
            Code::InvalidArgument,
            "multicast_group_entry.replicas[0].port",
        ),
        (
            "port bytes wider than 32 bits",
            update(
                U::Insert,
                group(group_entry(2, vec![rep_bytes(&[1, 0, 0, 0, 0], 0)], b"")),
            ),
            Code::InvalidArgument,
            "multicast_group_entry.replicas[0].port",
        ),
        (
            "replica without a port",
            update(U::Insert, group(group_entry(2, vec![no_port.clone()], b""))),
            Code::InvalidArgument,
            "multicast_group_entry.replicas[0].port",
        ),
        (
            "backup replicas",
            update(U::Insert, group(group_entry(2, vec![with_backup], b""))),
            Code::Unimplemented,
            "multicast_group_entry.replicas[0].backup_replicas",
        ),
        (
            "insert existing group",
            update(U::Insert, group(group_entry(1, vec![rep(4, 0)], b""))),
            Code::AlreadyExists,
            "multicast group 1 already exists",
        ),
        (
            "modify missing group",
            update(U::Modify, group(group_entry(2, vec![rep(4, 0)], b""))),
            Code::NotFound,
            "multicast group 2 not found",
        ),
        (
            "delete missing group",
            update(U::Delete, group(group_entry(2, vec![], b""))),
            Code::NotFound,
            "multicast group 2 not found",
        ),
        (
            "session id 0",
            update(U::Insert, session(session_entry(0, rep(1, 0), 0, 0))),
            Code::InvalidArgument,
            "clone_session_entry.session_id",
        ),
        (
            "session with a replica twice",
            update(
                U::Insert,
                session(pb::CloneSessionEntry {
                    replicas: vec![rep(1, 2), rep(1, 2)],
                    ..session_entry(3, rep(1, 0), 0, 0)
                }),
            ),
            Code::InvalidArgument,
            "clone_session_entry.replicas[1]",
        ),
        (
            "session replica instance beyond egress_rid",
            update(U::Insert, session(session_entry(3, rep(1, 70_000), 0, 0))),
            Code::InvalidArgument,
            "clone_session_entry.replicas[0].instance",
        ),
        (
            "class of service above 7",
            update(U::Insert, session(session_entry(3, rep(1, 0), 8, 0))),
            Code::InvalidArgument,
            "clone_session_entry.class_of_service",
        ),
        (
            "negative packet length",
            update(U::Insert, session(session_entry(3, rep(1, 0), 0, -1))),
            Code::InvalidArgument,
            "clone_session_entry.packet_length_bytes",
        ),
        (
            "session replica without a port",
            update(U::Insert, session(session_entry(3, no_port, 0, 0))),
            Code::InvalidArgument,
            "clone_session_entry.replicas[0].port",
        ),
        (
            "insert existing session",
            update(U::Insert, session(session_entry(1, rep(5, 0), 0, 0))),
            Code::AlreadyExists,
            "clone session 1 already exists",
        ),
        (
            "modify missing session",
            update(U::Modify, session(session_entry(3, rep(5, 0), 0, 0))),
            Code::NotFound,
            "clone session 3 not found",
        ),
        (
            "delete missing session",
            update(U::Delete, session(session_entry(3, rep(5, 0), 0, 0))),
            Code::NotFound,
            "clone session 3 not found",
        ),
        (
            "untyped entry",
            update(
                U::Insert,
                E::PacketReplicationEngineEntry(Default::default()),
            ),
            Code::InvalidArgument,
            "packet_replication_engine_entry.type",
        ),
    ];
    for (name, u, code, needle) in cases {
        let err = write(&mut c, vec![u]).await.unwrap_err();
        let errs = update_errors(&err);
        assert_eq!(errs.len(), 1, "{name}");
        assert_eq!(Code::from(errs[0].0), code, "{name}: {}", errs[0].1);
        assert!(
            errs[0].1.contains(needle),
            "{name}: {:?} lacks {needle:?}",
            errs[0].1
        );
        assert_eq!(pre_snapshot(&mut c).await, before, "{name} changed state");
    }
}

#[tokio::test]
async fn only_the_primary_may_write_pre_entries() {
    let h = Harness::start().await;
    let mut primary_c = primary(&h, 10).await;
    let (mut backup, first) = open_stream(&h, DEVICE, Some(5)).await;
    assert_ne!(first.unwrap().status.unwrap().code, 0, "second is a backup");
    let err = write(
        &mut backup,
        vec![update(
            U::Insert,
            group(group_entry(1, vec![rep(1, 0)], b"")),
        )],
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    assert!(
        read(&mut primary_c.client, vec![all_groups()])
            .await
            .unwrap()
            .is_empty()
    );
}

// ---- atomicity ------------------------------------------------------------

#[tokio::test]
async fn all_or_nothing_batches_roll_back_pre_and_table_updates_together() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    write(
        &mut c,
        vec![
            update(U::Insert, group(group_entry(1, vec![rep(1, 0)], b"\x01"))),
            update(U::Insert, group(group_entry(2, vec![rep(2, 0)], b""))),
            update(U::Insert, session(session_entry(1, rep(3, 0), 1, 64))),
            insert(route([10, 0, 0, 0], 8, &[1])),
        ],
    )
    .await
    .unwrap();
    let before = pre_snapshot(&mut c).await;
    for atomicity in [Atomicity::RollbackOnError, Atomicity::DataplaneAtomic] {
        let req = write_request(
            &c,
            vec![
                update(U::Insert, group(group_entry(3, vec![rep(3, 0)], b""))),
                update(U::Modify, group(group_entry(1, vec![rep(5, 5)], b"\x02"))),
                update(U::Delete, group(group_entry(2, vec![], b""))),
                update(U::Modify, session(session_entry(1, rep(4, 0), 0, 0))),
                update(U::Insert, session(session_entry(2, rep(4, 0), 0, 0))),
                insert(route([11, 0, 0, 0], 8, &[2])),
                // Fails on the device: the group exists.
                update(U::Insert, group(group_entry(1, vec![rep(6, 0)], b""))),
            ],
            atomicity,
        );
        let err = c.client.write(req).await.unwrap_err();
        let mut want = vec![Code::Aborted; 6];
        want.push(Code::AlreadyExists);
        assert_eq!(codes(&err), want, "{atomicity:?}");
        assert_eq!(
            pre_snapshot(&mut c).await,
            before,
            "{atomicity:?} left a partial batch"
        );
    }
    // An invalid update refuses the whole batch before anything runs.
    let req = write_request(
        &c,
        vec![
            update(U::Delete, group(group_entry(1, vec![], b""))),
            update(U::Insert, group(group_entry(0, vec![], b""))),
        ],
        Atomicity::RollbackOnError,
    );
    let err = c.client.write(req).await.unwrap_err();
    assert_eq!(codes(&err), vec![Code::Aborted, Code::InvalidArgument]);
    assert_eq!(pre_snapshot(&mut c).await, before);

    // CONTINUE_ON_ERROR applies the good updates around a bad one.
    let err = write(
        &mut c,
        vec![
            update(U::Delete, group(group_entry(2, vec![], b""))),
            update(U::Delete, group(group_entry(2, vec![], b""))),
            update(U::Insert, group(group_entry(4, vec![rep(4, 0)], b""))),
        ],
    )
    .await
    .unwrap_err();
    assert_eq!(codes(&err), vec![Code::Ok, Code::NotFound, Code::Ok]);
    let ids: Vec<u32> = read(&mut c.client, vec![all_groups()])
        .await
        .unwrap()
        .into_iter()
        .map(|e| match e.entity {
            Some(E::PacketReplicationEngineEntry(pb::PacketReplicationEngineEntry {
                r#type: Some(PreType::MulticastGroupEntry(g)),
            })) => g.multicast_group_id,
            other => panic!("not a group: {other:?}"),
        })
        .collect();
    assert_eq!(ids, vec![1, 4]);
    // A good all-or-nothing batch is applied whole, metadata included.
    let g1 = group_entry(1, vec![rep(7, 1), rep(8, 1)], b"\x09");
    let req = write_request(
        &c,
        vec![
            update(U::Modify, group(g1.clone())),
            update(U::Delete, group(group_entry(4, vec![], b""))),
        ],
        Atomicity::DataplaneAtomic,
    );
    c.client.write(req).await.unwrap();
    let got = read(&mut c.client, vec![all_groups()]).await.unwrap();
    assert_eq!(got, entities(vec![group(g1)]));
}

// ---- a device without a replication engine --------------------------------

#[tokio::test]
async fn a_device_without_pre_reads_empty_and_refuses_writes() {
    let device = LocalDevice::without_pre(Box::new(Runtime::new(&PROGRAM)));
    let h = Harness::start_on(&PROGRAM, device).await;
    let mut c = primary(&h, 1).await;
    assert!(
        read(&mut c.client, vec![all_groups(), all_sessions()])
            .await
            .unwrap()
            .is_empty()
    );
    let err = read(&mut c.client, vec![group(group_entry(1, vec![], b""))])
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    let err = write(
        &mut c,
        vec![update(
            U::Insert,
            group(group_entry(1, vec![rep(1, 0)], b"")),
        )],
    )
    .await
    .unwrap_err();
    assert_eq!(codes(&err), vec![Code::Unimplemented]);
}

// ---- the real switch: P4Runtime → SwitchDevice → Switch ---------------------

/// A `Switch` running roce_switch.p4 with 4 ports on its own thread, driven
/// through the driver's command channel as `roceswitch` does.
struct RealSwitch {
    commands: dataplane::driver::CommandSender<dataplane::roce::Program>,
    harness: Harness,
}

impl RealSwitch {
    async fn start() -> RealSwitch {
        use dataplane::switch::{Switch, SwitchConfig};
        use dataplane::time::Instant;
        let (tx, rx) = dataplane::driver::command_channel::<dataplane::roce::Program>().unwrap();
        std::thread::spawn(move || {
            let mut sw = Switch::new(
                dataplane::roce::Program::new(),
                SwitchConfig::with_ports(4),
                Instant::ZERO,
            )
            .unwrap();
            while let Ok(cmd) = rx.recv() {
                cmd(&mut sw, Instant::ZERO);
            }
        });
        let (pin_tx, _) = tokio::sync::broadcast::channel(16);
        let device = std::sync::Arc::new(control::switchdev::SwitchDevice::new(tx.clone(), pin_tx));
        let (addr, _server) = serve(service(&dataplane::roce::PROGRAM_INFO, device)).await;
        // The harness's LocalDevice is only a placeholder here.
        let placeholder = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
        RealSwitch {
            commands: tx,
            harness: Harness {
                addr,
                device: placeholder,
            },
        }
    }

    /// Sends `frame` in on `port`; returns what every port transmits.
    fn frame(&self, port: u16, frame: Vec<u8>) -> Vec<(u16, Vec<u8>)> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.commands
            .send(Box::new(move |sw, now| {
                sw.handle_frame(port, &frame, now);
                sw.handle_timeout(now);
                let mut out = Vec::new();
                let mut buf = Vec::new();
                for p in 0..4 {
                    while sw.poll_transmit(p, now, &mut buf).is_some() {
                        out.push((p, buf.clone()));
                    }
                }
                let _ = tx.send(out);
            }))
            .unwrap();
        rx.recv().unwrap()
    }
}

#[tokio::test]
async fn on_the_real_switch_a_group_written_over_p4runtime_replicates_frames() {
    let info = &dataplane::roce::PROGRAM_INFO;
    let sw = RealSwitch::start().await;
    let mut c = primary(&sw.harness, 1).await;
    // Port 4 does not exist on a 4-port switch; the CPU port does.
    let err = write(
        &mut c,
        vec![update(
            U::Insert,
            group(group_entry(1, vec![rep(1, 0), rep(4, 0)], b"")),
        )],
    )
    .await
    .unwrap_err();
    let errs = update_errors(&err);
    assert_eq!(Code::from(errs[0].0), Code::InvalidArgument);
    assert!(
        errs[0].1.contains("multicast_group_entry.replicas[1].port"),
        "{}",
        errs[0].1
    );
    // Broadcast in VLAN 0 → group 1 = ports 0..3.
    let l2 = info.table_by_name("l2_fwd").unwrap();
    let set_grp = info.action_by_name("set_mcast_grp").unwrap();
    write(
        &mut c,
        vec![
            update(
                U::Insert,
                group(group_entry(1, (0..4).map(|p| rep(p, 0)).collect(), b"")),
            ),
            insert(entry(
                l2.id,
                vec![exact(l2.keys[0].id, &[0]), exact(l2.keys[1].id, &[0xff; 6])],
                direct(action(set_grp.id, &[(set_grp.params[0].id, &[1])])),
                0,
            )),
        ],
    )
    .await
    .unwrap();
    let mut frame = vec![0xff; 6];
    frame.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x01, 0x88, 0xb5]);
    frame.extend_from_slice(&[0x5a; 46]);
    let out = sw.frame(2, frame.clone());
    let ports: Vec<u16> = out.iter().map(|(p, _)| *p).collect();
    assert_eq!(ports, vec![0, 1, 3], "every member port but the source");
    assert!(out.iter().all(|(_, f)| *f == frame), "copies are unchanged");

    // Deleting the group stops the copies.
    write(
        &mut c,
        vec![update(U::Delete, group(group_entry(1, vec![], b"")))],
    )
    .await
    .unwrap();
    assert!(sw.frame(2, frame).is_empty());
}

#[tokio::test]
async fn committing_a_pipeline_clears_groups_and_sessions() {
    use pb::set_forwarding_pipeline_config_request::Action;
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    write(
        &mut c,
        vec![
            update(U::Insert, group(group_entry(1, vec![rep(1, 0)], b"\x05"))),
            update(U::Insert, session(session_entry(1, rep(2, 0), 0, 0))),
        ],
    )
    .await
    .unwrap();
    c.client
        .set_forwarding_pipeline_config(pb::SetForwardingPipelineConfigRequest {
            device_id: DEVICE,
            election_id: Some(u128_wire(c.election_id)),
            action: Action::VerifyAndCommit as i32,
            config: Some(pb::ForwardingPipelineConfig {
                p4info: Some(proto::p4info_from_text(P4INFO_TEXT).unwrap()),
                p4_device_config: Vec::new(),
                cookie: Some(pb::forwarding_pipeline_config::Cookie { cookie: 1 }),
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        read(&mut c.client, vec![all_groups(), all_sessions()])
            .await
            .unwrap()
            .is_empty()
    );
    // The same ids can be inserted again.
    let g = group_entry(1, vec![rep(3, 0)], b"");
    write(&mut c, vec![update(U::Insert, group(g.clone()))])
        .await
        .unwrap();
    assert_eq!(
        read(&mut c.client, vec![all_groups()]).await.unwrap(),
        entities(vec![group(g)])
    );
}
