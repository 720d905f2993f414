//! P4Runtime state survives a restart of the service: everything written
//! over gRPC (every match kind, an ECMP group, a default-entry change, a
//! meter config, a register cell, the pipeline cookie) is read back
//! identically from a service rebuilt on a fresh device from the same
//! state file; refused updates are not replayed; counters restart at zero;
//! a pipeline commit that resets state resets the file; churn is compacted.

mod common;

use common::*;
use control::device::LocalDevice;
use control::p4rt::RestoreReport;
use p4_target::runtime::Runtime;
use pb::entity::Entity as E;
use pb::update::Type as U;
use proto::p4::v1 as pb;
use tonic::Code;

fn member(id: u32, port: u16) -> pb::Update {
    update(
        U::Insert,
        E::ActionProfileMember(pb::ActionProfileMember {
            action_profile_id: P_ECMP,
            member_id: id,
            action: Some(action(
                SET_NHOP,
                &[(1, &[2, 0, 0, 0, 0, id as u8]), (2, &port.to_be_bytes())],
            )),
        }),
    )
}

fn group(id: u32, members: &[u32]) -> pb::Update {
    update(
        U::Insert,
        E::ActionProfileGroup(pb::ActionProfileGroup {
            action_profile_id: P_ECMP,
            group_id: id,
            members: members
                .iter()
                .map(|&member_id| pb::action_profile_group::Member {
                    member_id,
                    weight: 1,
                    ..Default::default()
                })
                .collect(),
            max_size: 0,
        }),
    )
}

fn ecmp_entry(key: u16, t: pb::table_action::Type) -> pb::TableEntry {
    entry(
        T_ECMP,
        vec![exact(1, &key.to_be_bytes())],
        Some(pb::TableAction { r#type: Some(t) }),
        0,
    )
}

fn acl(proto: u8, low: u16, high: u16, prio: i32, a: u32) -> pb::TableEntry {
    entry(
        T_ACL,
        vec![
            ternary(1, &[proto], &[0xff]),
            range(2, &low.to_be_bytes(), &high.to_be_bytes()),
        ],
        direct(action(a, &[])),
        prio,
    )
}

fn default_entry(table_id: u32, a: Option<pb::Action>) -> pb::TableEntry {
    pb::TableEntry {
        table_id,
        is_default_action: true,
        action: a.and_then(direct),
        ..Default::default()
    }
}

async fn cookie(h: &Harness) -> Option<u64> {
    let mut client = h.client().await;
    client
        .get_forwarding_pipeline_config(pb::GetForwardingPipelineConfigRequest {
            device_id: DEVICE,
            response_type: pb::get_forwarding_pipeline_config_request::ResponseType::CookieOnly
                as i32,
        })
        .await
        .unwrap()
        .into_inner()
        .config
        .unwrap()
        .cookie
        .map(|c| c.cookie)
}

async fn set_pipeline(c: &mut Controller, action: i32, cookie: u64) {
    c.client
        .set_forwarding_pipeline_config(pb::SetForwardingPipelineConfigRequest {
            device_id: DEVICE,
            election_id: Some(u128_wire(c.election_id)),
            action,
            config: Some(pb::ForwardingPipelineConfig {
                p4info: Some(proto::p4info_from_text(P4INFO_TEXT).unwrap()),
                p4_device_config: Vec::new(),
                cookie: Some(pb::forwarding_pipeline_config::Cookie { cookie }),
            }),
            ..Default::default()
        })
        .await
        .unwrap();
}

fn seen_register(index: i64, value: u8) -> pb::Update {
    update(
        U::Modify,
        E::RegisterEntry(pb::RegisterEntry {
            register_id: R_SEEN,
            index: Some(pb::Index { index }),
            data: Some(pb::P4Data {
                data: Some(pb::p4_data::Data::Bitstring(vec![value])),
            }),
        }),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn written_state_is_read_back_identically_after_a_restart() {
    use pb::set_forwarding_pipeline_config_request::Action as A;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("switch.state.p4rt");

    let first = serve_restored(&state).await;
    assert_eq!(
        first.report,
        RestoreReport::default(),
        "a new file is empty"
    );
    let mut c = primary(&first.h, 1).await;
    set_pipeline(&mut c, A::ReconcileAndCommit as i32, 0xC0FFEE).await;
    // ECMP: two members, a group over both, an exact entry on the group and
    // one on a single member.
    write(
        &mut c,
        vec![
            member(1, 1),
            member(2, 2),
            member(3, 3),
            group(10, &[1, 2]),
            insert(ecmp_entry(
                5,
                pb::table_action::Type::ActionProfileGroupId(10),
            )),
            insert(ecmp_entry(
                6,
                pb::table_action::Type::ActionProfileMemberId(3),
            )),
        ],
    )
    .await
    .unwrap();
    // LPM routes (one with counter data: counters are not kept), ternary +
    // range ACL entries, default-entry change, meter config, register cell.
    let mut counted = route([10, 1, 0, 0], 16, &[2]);
    counted.counter_data = Some(pb::CounterData {
        byte_count: 1000,
        packet_count: 10,
    });
    write(
        &mut c,
        vec![
            insert(route([10, 0, 0, 0], 8, &[1])),
            insert(counted),
            insert(route([192, 168, 0, 0], 24, &[3])),
            insert(acl(17, 4791, 4791, 10, NO_ACTION)),
            insert(acl(6, 0, 1023, 5, DROP)),
            modify(default_entry(T_ACL, Some(action(DROP, &[])))),
            update(
                U::Modify,
                E::MeterEntry(pb::MeterEntry {
                    meter_id: M_POLICE,
                    index: Some(pb::Index { index: 1 }),
                    config: Some(pb::MeterConfig {
                        cir: 100,
                        cburst: 10,
                        pir: 200,
                        pburst: 20,
                        eburst: 0,
                    }),
                    counter_data: None,
                }),
            ),
            seen_register(2, 0x2a),
            update(
                U::Modify,
                E::CounterEntry(pb::CounterEntry {
                    counter_id: C_PORT,
                    index: Some(pb::Index { index: 0 }),
                    data: Some(pb::CounterData {
                        byte_count: 5,
                        packet_count: 5,
                    }),
                }),
            ),
        ],
    )
    .await
    .unwrap();
    // CONTINUE_ON_ERROR: the duplicate fails, the rest is applied (and only
    // that is recorded: replaying the duplicate would be refused).
    let err = write(
        &mut c,
        vec![
            insert(route([10, 0, 0, 0], 8, &[7])),
            modify(route([192, 168, 0, 0], 24, &[4])),
            delete(acl(6, 0, 1023, 5, DROP)),
            insert(acl(6, 22, 22, 7, DROP)),
        ],
    )
    .await
    .unwrap_err();
    let codes: Vec<i32> = update_errors(&err).iter().map(|e| e.0).collect();
    assert_eq!(
        codes,
        vec![Code::AlreadyExists as i32, 0, 0, 0],
        "only the duplicate fails"
    );
    let before = config_state(&first.h).await;
    assert_eq!(cookie(&first.h).await, Some(0xC0FFEE));
    drop(c);
    drop(first);

    let second = serve_restored(&state).await;
    assert_eq!(
        second.report.refused, 0,
        "only applied updates were recorded"
    );
    assert_eq!(second.report.torn_bytes, 0);
    assert_eq!(second.report.cookie, Some(0xC0FFEE));
    let after = config_state(&second.h).await;
    assert_eq!(after, before);
    assert_eq!(cookie(&second.h).await, Some(0xC0FFEE));
    // Counters restart at zero.
    let mut client = second.h.client().await;
    let counters = read(
        &mut client,
        vec![E::CounterEntry(pb::CounterEntry {
            counter_id: C_PORT,
            index: Some(pb::Index { index: 0 }),
            data: None,
        })],
    )
    .await
    .unwrap();
    match &counters[0].entity {
        Some(E::CounterEntry(ce)) => assert_eq!(ce.data.unwrap_or_default(), Default::default()),
        other => panic!("{other:?}"),
    }
    // Spot check the substance, not only equality: the group and the meter.
    assert!(after.iter().any(|e| matches!(&e.entity,
        Some(E::ActionProfileGroup(g)) if g.group_id == 10 && g.members.len() == 2)));
    assert!(after.iter().any(|e| matches!(&e.entity,
        Some(E::MeterEntry(m)) if m.index == Some(pb::Index { index: 1 })
            && m.config.is_some_and(|c| c.cir == 100))));

    // Writes after a restore keep being recorded; a third start sees them.
    let mut c = primary(&second.h, 1).await;
    write(&mut c, vec![delete(route([10, 1, 0, 0], 16, &[2]))])
        .await
        .unwrap();
    let before = config_state(&second.h).await;
    drop(c);
    drop(client);
    drop(second);
    let third = serve_restored(&state).await;
    assert_eq!(third.report.refused, 0);
    assert_eq!(config_state(&third.h).await, before);

    // A commit that resets forwarding state resets the file too.
    let mut c = primary(&third.h, 1).await;
    set_pipeline(&mut c, A::VerifyAndCommit as i32, 7).await;
    let empty = config_state(&third.h).await;
    drop(c);
    drop(third);
    let fourth = serve_restored(&state).await;
    assert_eq!(fourth.report.applied, 0);
    assert_eq!(config_state(&fourth.h).await, empty);
    assert_eq!(cookie(&fourth.h).await, Some(7));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn churn_is_compacted_and_still_restores_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.p4rt");
    let first = serve_restored(&state).await;
    let mut c = primary(&first.h, 1).await;
    write(&mut c, vec![insert(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .unwrap();
    // Far more journal than live state: insert/delete pairs and register
    // rewrites, in batches.
    let per_batch = 2000usize;
    for b in 0..10u8 {
        let mut updates = Vec::with_capacity(per_batch);
        for i in 0..per_batch / 4 {
            let v = (i % 250) as u8 + 1;
            updates.push(insert(route([11, b, v, 0], 24, &[2])));
            updates.push(delete(route([11, b, v, 0], 24, &[2])));
            updates.push(seen_register(0, v));
            updates.push(seen_register(1, b + 1));
        }
        write(&mut c, updates).await.unwrap();
    }
    let before = config_state(&first.h).await;
    drop(c);
    drop(first);
    let size = std::fs::metadata(&state).unwrap().len();
    assert!(
        size < 1_000_000,
        "20000 journaled updates compacted to a few live ones: {size} bytes"
    );
    let second = serve_restored(&state).await;
    assert_eq!(second.report.refused, 0);
    assert!(
        second.report.applied < 20_000,
        "replayed {} updates",
        second.report.applied
    );
    assert_eq!(config_state(&second.h).await, before);
}

#[tokio::test]
async fn a_state_file_of_another_program_is_a_startup_error() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.p4rt");
    let other = P4INFO_TEXT.replace("MyIngress.acl", "MyIngress.acl_v2");
    let p4info = proto::p4info_from_text(&other).unwrap();
    drop(control::p4rt::persist::StateStore::open(&state, &p4info, b"roceswitch:ctltest").unwrap());
    let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let svc = service(&PROGRAM, device);
    let err = svc.restore(&state).await.unwrap_err();
    assert!(
        err.to_string().contains("another program") && err.to_string().contains("acl"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolled_back_batch_is_not_recorded_and_a_torn_tail_is_dropped() {
    use pb::write_request::Atomicity;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.p4rt");
    let first = serve_restored(&state).await;
    let mut c = primary(&first.h, 1).await;
    write(&mut c, vec![insert(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .unwrap();
    // All or nothing: the duplicate rolls the new route back; nothing is kept.
    let req = write_request(
        &c,
        vec![
            insert(route([10, 9, 0, 0], 16, &[2])),
            insert(route([10, 0, 0, 0], 8, &[1])),
        ],
        Atomicity::RollbackOnError,
    );
    c.client.write(req).await.unwrap_err();
    let kept = config_state(&first.h).await;
    let len_kept = std::fs::metadata(&state).unwrap().len();
    write(&mut c, vec![insert(route([10, 2, 0, 0], 16, &[3]))])
        .await
        .unwrap();
    drop(c);
    drop(first);

    let second = serve_restored(&state).await;
    assert_eq!(
        second.report.refused, 0,
        "the rolled-back batch left no trace"
    );
    assert_eq!(second.report.applied, 2);
    drop(second);

    // kill -9 in the middle of the last append: that write had not been
    // acknowledged; the start drops it with a warning and goes on.
    let full = std::fs::read(&state).unwrap();
    std::fs::write(&state, &full[..full.len() - 3]).unwrap();
    let third = serve_restored(&state).await;
    assert_eq!(third.report.torn_bytes, full.len() as u64 - 3 - len_kept);
    assert_eq!(third.report.applied, 1);
    assert_eq!(config_state(&third.h).await, kept);
    assert_eq!(std::fs::metadata(&state).unwrap().len(), len_kept);
}
