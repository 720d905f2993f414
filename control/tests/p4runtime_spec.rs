//! P4Runtime v1.4.1 cases, one class per group, each test named after the
//! status code it expects and the spec section: arbitration after the
//! primary leaves (§5.3, §5.4, §16.2), references and ranges (§9.1.2,
//! §9.2.2, §9.3), fields a client must not set (§9.1, §9.1.8, §9.2.2),
//! reads (§9.1.6, §13.3), roles (§5.1, §5.2) and idle timeout (§9.1.8,
//! §16.3; the fixture's ACL table supports it).

mod common;

use common::*;
use pb::entity::Entity as E;
use pb::update::Type as U;
use proto::p4::v1 as pb;
use tonic::Code;

/// The single per-update error code of a failed one-update Write.
async fn code_of(c: &mut Controller, u: pb::Update) -> Code {
    let err = write(c, vec![u]).await.expect_err("write refused");
    let errs = update_errors(&err);
    assert_eq!(errs.len(), 1);
    Code::from(errs[0].0)
}

fn qos_entry(dscp: u8, prio: u8) -> pb::TableEntry {
    entry(
        T_QOS,
        vec![exact(1, &[dscp])],
        direct(action(SET_PRIO, &[(1, &[prio])])),
        0,
    )
}

async fn arbitrate_role(
    h: &Harness,
    role: &str,
    election_id: u128,
) -> Result<pb::MasterArbitrationUpdate, tonic::Status> {
    let mut client = h.client().await;
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tx.send(pb::StreamMessageRequest {
        update: Some(pb::stream_message_request::Update::Arbitration(
            pb::MasterArbitrationUpdate {
                device_id: DEVICE,
                role: Some(pb::Role {
                    name: role.into(),
                    ..Default::default()
                }),
                election_id: Some(u128_wire(election_id)),
                ..Default::default()
            },
        )),
    })
    .await
    .unwrap();
    let mut stream = client
        .stream_channel(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let first = next_arbitration(&mut stream).await;
    // Keep the stream open for the rest of the test.
    std::mem::forget((tx, stream, client));
    first
}

// ---- arbitration (§5.3, §5.4, §16.2) ---------------------------------------

#[tokio::test]
async fn s5_3_not_found_backup_is_not_promoted_and_unset_id_before_any_primary() {
    let h = Harness::start().await;
    let (_anon, first) = open_stream(&h, DEVICE, None).await;
    let first = first.unwrap();
    assert_eq!(first.status.unwrap().code, Code::NotFound as i32);
    assert_eq!(first.election_id, None, "no primary ever: id unset (§5.4)");

    let high = primary(&h, 20).await;
    let (mut low, first) = open_stream(&h, DEVICE, Some(5)).await;
    assert_eq!(
        first.unwrap().status.unwrap().code,
        Code::AlreadyExists as i32
    );
    drop(high);
    let told = next_arbitration(&mut low.rx).await.unwrap();
    assert_eq!(told.status.unwrap().code, Code::NotFound as i32);
    assert_eq!(told.election_id, Some(u128_wire(20)));
    let err = write(&mut low, vec![insert(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
}

#[tokio::test]
async fn s5_3_failed_precondition_when_a_stream_changes_its_device_id() {
    let h = Harness::start().await;
    let c = primary(&h, 3).await;
    let mut rx = c.rx;
    c.tx.send(arbitration_msg(DEVICE + 1, Some(3)))
        .await
        .unwrap();
    let err = next_arbitration(&mut rx).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err:?}");
}

// ---- references and ranges (§9.1.2, §9.2.2, §9.3) -------------------------

#[tokio::test]
async fn s9_1_2_not_found_entry_naming_a_missing_member_and_s9_3_out_of_range_index() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let te = entry(
        T_ECMP,
        vec![exact(1, &[1])],
        Some(pb::TableAction {
            r#type: Some(pb::table_action::Type::ActionProfileMemberId(77)),
        }),
        0,
    );
    assert_eq!(code_of(&mut c, insert(te)).await, Code::NotFound);
    let group = update(
        U::Insert,
        E::ActionProfileGroup(pb::ActionProfileGroup {
            action_profile_id: P_ECMP,
            group_id: 1,
            members: vec![pb::action_profile_group::Member {
                member_id: 99,
                weight: 1,
                ..Default::default()
            }],
            max_size: 0,
        }),
    );
    assert_eq!(code_of(&mut c, group).await, Code::NotFound);
    let counter = update(
        U::Modify,
        E::CounterEntry(pb::CounterEntry {
            counter_id: C_PORT,
            index: Some(pb::Index { index: 1 << 20 }),
            data: Some(Default::default()),
        }),
    );
    assert_eq!(code_of(&mut c, counter).await, Code::OutOfRange);
    let register = update(
        U::Modify,
        E::RegisterEntry(pb::RegisterEntry {
            register_id: R_SEEN,
            index: Some(pb::Index { index: 1 << 20 }),
            data: Some(pb::P4Data {
                data: Some(pb::p4_data::Data::Bitstring(vec![1])),
            }),
        }),
    );
    assert_eq!(code_of(&mut c, register).await, Code::OutOfRange);
}

// ---- fields a client must not set (§9.1, §9.1.8, §9.2.2) -------------------

#[tokio::test]
async fn s9_1_invalid_argument_for_is_const_time_since_last_hit_and_weight_zero() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let mut te = route([10, 0, 0, 0], 8, &[1]);
    te.is_const = true;
    assert_eq!(code_of(&mut c, insert(te)).await, Code::InvalidArgument);
    let mut te = route([10, 0, 0, 0], 8, &[1]);
    te.time_since_last_hit = Some(pb::table_entry::IdleTimeout { elapsed_ns: 5 });
    assert_eq!(code_of(&mut c, insert(te)).await, Code::InvalidArgument);
    let mut te = route([10, 0, 0, 0], 8, &[1]);
    te.idle_timeout_ns = 1_000_000;
    assert_eq!(
        code_of(&mut c, insert(te)).await,
        Code::InvalidArgument,
        "idle timeout on a table without support_timeout (§9.1.8)"
    );
    write(
        &mut c,
        vec![update(
            U::Insert,
            E::ActionProfileMember(pb::ActionProfileMember {
                action_profile_id: P_ECMP,
                member_id: 1,
                action: Some(action(SET_NHOP, &[(1, &[1]), (2, &[1])])),
            }),
        )],
    )
    .await
    .unwrap();
    let group = update(
        U::Insert,
        E::ActionProfileGroup(pb::ActionProfileGroup {
            action_profile_id: P_ECMP,
            group_id: 1,
            members: vec![pb::action_profile_group::Member {
                member_id: 1,
                weight: 0,
                ..Default::default()
            }],
            max_size: 0,
        }),
    );
    assert_eq!(code_of(&mut c, group).await, Code::InvalidArgument);
    assert!(lpm_routes(&mut c).await.is_empty(), "nothing was written");
}

async fn lpm_routes(c: &mut Controller) -> Vec<pb::Entity> {
    read(
        &mut c.client,
        vec![E::TableEntry(pb::TableEntry {
            table_id: T_LPM,
            ..Default::default()
        })],
    )
    .await
    .unwrap()
}

// ---- reads (§9.1.6, §13.3) -------------------------------------------------

#[tokio::test]
async fn s9_1_6_ok_read_filters_on_action_and_the_wildcard_covers_owned_and_const_tables() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    write(
        &mut c,
        vec![
            insert(route([10, 0, 0, 0], 8, &[1])),
            insert(route([11, 0, 0, 0], 8, &[2])),
            insert(qos_entry(46, 5)),
        ],
    )
    .await
    .unwrap();
    let mut filter = entry(T_LPM, vec![], direct(action(SET_PORT, &[(1, &[2])])), 0);
    filter.r#match.clear();
    let found = read(&mut c.client, vec![E::TableEntry(filter)])
        .await
        .unwrap();
    assert_eq!(found.len(), 1, "only the route with port 2: {found:?}");

    let all = read(&mut c.client, vec![E::TableEntry(Default::default())])
        .await
        .unwrap();
    let tables: std::collections::BTreeSet<u32> = all
        .iter()
        .filter_map(|e| match &e.entity {
            Some(E::TableEntry(t)) => Some(t.table_id),
            _ => None,
        })
        .collect();
    assert!(tables.contains(&T_LPM) && tables.contains(&T_QOS) && tables.contains(&T_CONST));
}

#[tokio::test]
async fn s13_3_read_batch_with_one_bad_request_returns_the_good_entities_then_the_error() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    write(&mut c, vec![insert(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .unwrap();
    let req = pb::ReadRequest {
        device_id: DEVICE,
        entities: vec![
            pb::Entity {
                entity: Some(E::TableEntry(pb::TableEntry {
                    table_id: T_LPM,
                    ..Default::default()
                })),
            },
            pb::Entity {
                entity: Some(E::TableEntry(pb::TableEntry {
                    table_id: 0x0200_0999,
                    ..Default::default()
                })),
            },
        ],
        ..Default::default()
    };
    let mut stream = c.client.read(req).await.unwrap().into_inner();
    let first = stream.message().await.unwrap().unwrap();
    assert_eq!(first.entities.len(), 1);
    let err = stream.message().await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

// ---- roles (§5.1, §5.2) ------------------------------------------------------

#[tokio::test]
async fn s5_1_ok_default_role_writes_fabric_owned_tables_under_the_shared_policy() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    write(&mut c, vec![insert(qos_entry(46, 5))]).await.unwrap();
    // The fabric role exists from the start with the switch's config.
    let a = arbitrate_role(&h, "roceswitch.fabric", 1).await.unwrap();
    assert_eq!(a.status.unwrap().code, Code::Ok as i32);
    assert!(a.role.unwrap().config.is_some(), "the role's fixed config");
}

#[tokio::test]
async fn s5_2_permission_denied_default_role_on_owned_tables_under_owner_only() {
    let h = Harness::start_owner_only().await;
    let mut c = primary(&h, 1).await;
    let err = write(&mut c, vec![insert(qos_entry(46, 5))])
        .await
        .unwrap_err();
    let errs = update_errors(&err);
    assert_eq!(Code::from(errs[0].0), Code::PermissionDenied);
    assert!(errs[0].1.contains("roceswitch.fabric"), "{}", errs[0].1);
    // Not the primary of the fabric role: a write naming it is refused.
    let mut req = write_request(
        &c,
        vec![insert(qos_entry(46, 5))],
        pb::write_request::Atomicity::ContinueOnError,
    );
    req.role = "roceswitch.fabric".into();
    assert_eq!(
        c.client.write(req).await.unwrap_err().code(),
        Code::PermissionDenied
    );
    let mut req = write_request(
        &c,
        vec![insert(qos_entry(46, 5))],
        pb::write_request::Atomicity::ContinueOnError,
    );
    req.role = "nobody".into();
    assert_eq!(
        c.client.write(req).await.unwrap_err().code(),
        Code::NotFound
    );
}

// ---- idle timeout (§9.1.8, §16.3) ------------------------------------------

#[tokio::test]
async fn s16_3_ok_idle_timeout_notification_reaches_the_primary_and_reads_report_the_idle_time() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let mut acl = entry(
        T_ACL,
        vec![ternary(1, &[6], &[0xff])],
        direct(action(DROP, &[])),
        10,
    );
    acl.idle_timeout_ns = 50_000_000;
    write(&mut c, vec![insert(acl.clone())]).await.unwrap();

    let mut read_req = acl.clone();
    read_req.idle_timeout_ns = 0;
    read_req.time_since_last_hit = Some(Default::default());
    let got = read(&mut c.client, vec![E::TableEntry(read_req)])
        .await
        .unwrap();
    let Some(E::TableEntry(te)) = &got[0].entity else {
        panic!("{got:?}")
    };
    assert_eq!(te.idle_timeout_ns, 50_000_000, "the TTL reads back");
    assert!(te.time_since_last_hit.is_some(), "asked for, so reported");

    let note = loop {
        let m = tokio::time::timeout(std::time::Duration::from_secs(5), c.rx.message())
            .await
            .expect("a notification within 5 s")
            .unwrap()
            .unwrap();
        if let Some(pb::stream_message_response::Update::IdleTimeoutNotification(n)) = m.update {
            break n;
        }
    };
    assert_eq!(note.table_entry.len(), 1);
    assert_eq!(note.table_entry[0].table_id, T_ACL);
    assert_eq!(note.table_entry[0].r#match, acl.r#match);
    assert_eq!(note.table_entry[0].idle_timeout_ns, 50_000_000);
    assert!(note.timestamp > 0);

    // An idle timeout on a table without support_timeout is refused (§9.1.8).
    let mut lpm = route([10, 0, 0, 0], 8, &[1]);
    lpm.idle_timeout_ns = 1;
    assert_eq!(code_of(&mut c, insert(lpm)).await, Code::InvalidArgument);
}

/// A controller that arbitrates for another device (a tutorial's device 0
/// against roceswitch's 1) is told NOT_FOUND, and the message names the
/// device this switch is, so the fix (`--device-id`) is obvious.
#[tokio::test]
async fn s5_3_not_found_arbitration_for_another_device_names_this_one() {
    let h = Harness::start().await;
    let (_c, first) = open_stream(&h, DEVICE + 41, Some(7)).await;
    let status = first.expect_err("arbitration for another device must fail");
    assert_eq!(status.code(), Code::NotFound);
    assert!(
        status
            .message()
            .contains(&format!("this switch is device {DEVICE}")),
        "{}",
        status.message()
    );
}
