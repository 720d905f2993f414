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
    assert_eq!(
        found.len(),
        2,
        "the filter is the action id, not its params: {found:?}"
    );

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
async fn s13_3_unknown_read_batch_streams_every_good_request_then_one_error_per_request() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    write(
        &mut c,
        vec![
            insert(route([10, 0, 0, 0], 8, &[1])),
            insert(qos_entry(46, 5)),
        ],
    )
    .await
    .unwrap();
    let table = |id| pb::Entity {
        entity: Some(E::TableEntry(pb::TableEntry {
            table_id: id,
            ..Default::default()
        })),
    };
    // {good, bad, good}: both good requests' entities, then UNKNOWN with
    // OK / INVALID_ARGUMENT / OK details (§13.3's example).
    let req = pb::ReadRequest {
        device_id: DEVICE,
        entities: vec![table(T_LPM), table(0x0200_0999), table(T_QOS)],
        ..Default::default()
    };
    let mut stream = c.client.read(req).await.unwrap().into_inner();
    let mut got = Vec::new();
    let err = loop {
        match stream.message().await {
            Ok(Some(r)) => got.extend(r.entities),
            Ok(None) => panic!("the batch had a bad request"),
            Err(e) => break e,
        }
    };
    assert_eq!(got.len(), 2, "the entities of both good requests: {got:?}");
    assert_eq!(err.code(), Code::Unknown, "{err:?}");
    let codes: Vec<Code> = control::p4rt::error::decode_write_errors(&err)
        .expect("one p4.v1.Error per request")
        .into_iter()
        .map(|(code, _)| Code::from(code))
        .collect();
    assert_eq!(codes, [Code::Ok, Code::InvalidArgument, Code::Ok]);

    // A Read of one bad request answers with its own code, details too.
    let err = read(
        &mut c.client,
        vec![E::TableEntry(pb::TableEntry {
            table_id: 0x0200_0999,
            ..Default::default()
        })],
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        control::p4rt::error::decode_write_errors(&err).map(|d| d.len()),
        Some(1)
    );
}

/// A `stratum.P4RoleConfig` giving write access to `ids`.
fn role_config(ids: &[u32], can_push_pipeline: bool) -> prost_types::Any {
    use prost::Message;
    let c = control::p4rt::roles::P4RoleConfig {
        shared_p4_ids: ids.to_vec(),
        can_push_pipeline,
        ..Default::default()
    };
    prost_types::Any {
        type_url: control::p4rt::roles::ROLE_CONFIG_TYPE_URL.into(),
        value: c.encode_to_vec(),
    }
}

/// A primary of `role` with `config`.
async fn role_primary(
    h: &Harness,
    role: &str,
    config: prost_types::Any,
    election_id: u128,
) -> Controller {
    let mut client = h.client().await;
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tx.send(pb::StreamMessageRequest {
        update: Some(pb::stream_message_request::Update::Arbitration(
            pb::MasterArbitrationUpdate {
                device_id: DEVICE,
                role: Some(pb::Role {
                    name: role.into(),
                    config: Some(config),
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
    let first = next_arbitration(&mut stream).await.unwrap();
    assert_eq!(first.status.unwrap().code, Code::Ok as i32);
    Controller {
        client,
        tx,
        rx: stream,
        election_id,
    }
}

#[tokio::test]
async fn s13_ok_read_role_filters_entities_to_the_role_and_not_found_for_an_unknown_role() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    write(
        &mut c,
        vec![
            insert(route([10, 0, 0, 0], 8, &[1])),
            insert(qos_entry(46, 5)),
        ],
    )
    .await
    .unwrap();
    let _routes = role_primary(&h, "routes", role_config(&[T_LPM], false), 1).await;
    let req = |role: &str| pb::ReadRequest {
        device_id: DEVICE,
        role: role.into(),
        entities: vec![pb::Entity {
            entity: Some(E::TableEntry(Default::default())),
        }],
    };
    let mut stream = c.client.read(req("routes")).await.unwrap().into_inner();
    let mut got = Vec::new();
    while let Some(r) = stream.message().await.unwrap() {
        got.extend(r.entities);
    }
    let tables: Vec<u32> = got
        .iter()
        .filter_map(|e| match &e.entity {
            Some(E::TableEntry(t)) => Some(t.table_id),
            _ => None,
        })
        .collect();
    assert_eq!(tables, [T_LPM], "only the role's table");
    let err = match c.client.read(req("nobody")).await {
        Err(e) => e,
        Ok(r) => r.into_inner().message().await.unwrap_err(),
    };
    assert_eq!(err.code(), Code::NotFound);
}

/// The fixture with room for routes over several Read pages (a Read
/// takes a table's entries 1,024 a device job).
fn paged_program() -> &'static p4_target::info::ProgramInfo {
    let mut tables = PROGRAM.tables.to_vec();
    assert_eq!(tables[0].id, T_LPM);
    tables[0].size = 4096;
    let text = P4INFO_TEXT.replacen("size: 8\n", "size: 4096\n", 1);
    Box::leak(Box::new(p4_target::info::ProgramInfo {
        tables: tables.leak(),
        p4info_text: text.leak(),
        ..PROGRAM
    }))
}

#[tokio::test]
async fn s13_3_unknown_read_over_several_pages_keeps_insertion_order_role_and_each_request() {
    let program = paged_program();
    let device =
        control::device::LocalDevice::new(Box::new(p4_target::runtime::Runtime::new(program)));
    let h = Harness::start_on(program, device).await;
    let mut c = primary(&h, 1).await;
    // 3,000 /32 routes, every fourth through set_nhop; then every third
    // deleted and 500 more inserted, which take the freed handles: handle
    // order is no longer insertion order.
    let te = |i: u32| {
        let dst = (0x0a00_0000 + i).to_be_bytes();
        if i.is_multiple_of(4) {
            entry(
                T_LPM,
                vec![lpm(1, &dst, 32)],
                direct(action(SET_NHOP, &[(1, &[2, 0, 0, 0, 0, 1]), (2, &[3])])),
                0,
            )
        } else {
            route(dst, 32, &[1])
        }
    };
    for batch in (0..3000).collect::<Vec<u32>>().chunks(500) {
        write(&mut c, batch.iter().map(|&i| insert(te(i))).collect())
            .await
            .unwrap();
    }
    let gone: Vec<u32> = (0..3000).filter(|i| i % 3 == 0).collect();
    for batch in gone.chunks(500) {
        write(&mut c, batch.iter().map(|&i| delete(te(i))).collect())
            .await
            .unwrap();
    }
    write(&mut c, (3000..3500).map(|i| insert(te(i))).collect())
        .await
        .unwrap();
    write(&mut c, vec![insert(qos_entry(46, 5))]).await.unwrap();
    let live: Vec<u32> = (0..3500).filter(|i| *i >= 3000 || i % 3 != 0).collect();

    // Under a role holding only the routes: {every table, a bad table,
    // the routes filtered on set_port}.
    let _routes = role_primary(&h, "routes", role_config(&[T_LPM], false), 1).await;
    let mut by_action = entry(T_LPM, vec![], direct(action(SET_PORT, &[(1, &[9])])), 0);
    by_action.r#match.clear();
    let req = pb::ReadRequest {
        device_id: DEVICE,
        role: "routes".into(),
        entities: [
            pb::TableEntry::default(),
            pb::TableEntry {
                table_id: 0x0200_0999,
                ..Default::default()
            },
            by_action,
        ]
        .into_iter()
        .map(|te| pb::Entity {
            entity: Some(E::TableEntry(te)),
        })
        .collect(),
    };
    let mut stream = c.client.read(req).await.unwrap().into_inner();
    let mut got = Vec::new();
    let err = loop {
        match stream.message().await {
            Ok(Some(r)) => got.extend(r.entities),
            Ok(None) => panic!("the batch had a bad request"),
            Err(e) => break e,
        }
    };
    let dst = |e: &pb::Entity| match &e.entity {
        Some(E::TableEntry(t)) if t.table_id == T_LPM => match &t.r#match[0].field_match_type {
            Some(pb::field_match::FieldMatchType::Lpm(l)) => {
                let mut b = [0u8; 4];
                b[4 - l.value.len()..].copy_from_slice(&l.value);
                u32::from_be_bytes(b) - 0x0a00_0000
            }
            other => panic!("not an LPM match: {other:?}"),
        },
        other => panic!("not a route: {other:?}"),
    };
    let set_port: Vec<u32> = live.iter().copied().filter(|i| i % 4 != 0).collect();
    assert_eq!(got.len(), live.len() + set_port.len(), "routes only, twice");
    let (all, filtered) = got.split_at(live.len());
    assert_eq!(
        all.iter().map(dst).collect::<Vec<_>>(),
        live,
        "every route in insertion order, none of the QoS or const tables"
    );
    assert_eq!(filtered.iter().map(dst).collect::<Vec<_>>(), set_port);
    assert_eq!(err.code(), Code::Unknown, "{err:?}");
    let codes: Vec<Code> = control::p4rt::error::decode_write_errors(&err)
        .expect("one p4.v1.Error per request")
        .into_iter()
        .map(|(code, _)| Code::from(code))
        .collect();
    assert_eq!(codes, [Code::Ok, Code::InvalidArgument, Code::Ok]);
}

/// The fixture with a route table of `size` entries.
fn program_with_routes(size: u32) -> &'static p4_target::info::ProgramInfo {
    let mut tables = PROGRAM.tables.to_vec();
    assert_eq!(tables[0].id, T_LPM);
    tables[0].size = size;
    let text = P4INFO_TEXT.replacen("size: 8\n", &format!("size: {size}\n"), 1);
    Box::leak(Box::new(p4_target::info::ProgramInfo {
        tables: tables.leak(),
        p4info_text: text.leak(),
        ..PROGRAM
    }))
}

#[tokio::test]
async fn s13_a_read_many_pages_long_returns_each_entry_once_while_writes_go_on() {
    let program = program_with_routes(128 * 1024);
    let device =
        control::device::LocalDevice::new(Box::new(p4_target::runtime::Runtime::new(program)));
    let h = Harness::start_on(program, device).await;
    let mut c = primary(&h, 1).await;
    let te = |i: u32| route((0x0a00_0000 + i).to_be_bytes(), 32, &[1]);
    // 100,000 routes, about 100 read pages (far more than the transport's
    // windows and the read's queue hold); every fifth deleted and 10,000
    // more inserted into the freed handles, so handle order is not
    // insertion order.
    for batch in (0..100_000).collect::<Vec<u32>>().chunks(1000) {
        write(&mut c, batch.iter().map(|&i| insert(te(i))).collect())
            .await
            .unwrap();
    }
    let gone: Vec<u32> = (0..100_000).filter(|i| i % 5 == 0).collect();
    for batch in gone.chunks(1000) {
        write(&mut c, batch.iter().map(|&i| delete(te(i))).collect())
            .await
            .unwrap();
    }
    for batch in (100_000..110_000).collect::<Vec<u32>>().chunks(1000) {
        write(&mut c, batch.iter().map(|&i| insert(te(i))).collect())
            .await
            .unwrap();
    }
    let live: Vec<u32> = (0..110_000)
        .filter(|i| *i >= 100_000 || i % 5 != 0)
        .collect();

    // The reader has its own connection, and takes one message before the
    // writes below: the service is then a few messages ahead of it, far
    // from the end of the table.
    let mut reader = h.client().await;
    let req = pb::ReadRequest {
        device_id: DEVICE,
        entities: vec![pb::Entity {
            entity: Some(E::TableEntry(pb::TableEntry {
                table_id: T_LPM,
                ..Default::default()
            })),
        }],
        ..Default::default()
    };
    let mut stream = reader.read(req).await.unwrap().into_inner();
    let mut got = stream
        .message()
        .await
        .unwrap()
        .expect("a first message")
        .entities;
    assert!(got.len() < live.len(), "the table takes several messages");
    // Writes are not held out by a read the client has not finished: the
    // last route inserted goes, a new one comes.
    let last = *live.last().unwrap();
    write(&mut c, vec![delete(te(last)), insert(te(200_000))])
        .await
        .unwrap();
    while let Some(r) = stream.message().await.unwrap() {
        got.extend(r.entities);
    }
    let dst = |e: &pb::Entity| match &e.entity {
        Some(E::TableEntry(t)) => match &t.r#match[0].field_match_type {
            Some(pb::field_match::FieldMatchType::Lpm(l)) => {
                let mut b = [0u8; 4];
                b[4 - l.value.len()..].copy_from_slice(&l.value);
                u32::from_be_bytes(b) - 0x0a00_0000
            }
            other => panic!("not an LPM match: {other:?}"),
        },
        other => panic!("not a table entry: {other:?}"),
    };
    let got: Vec<u32> = got.iter().map(dst).collect();
    // Every route there for the whole read, once each, in insertion
    // order; the one deleted before its page was reached is not reported,
    // nor the one inserted after the read began.
    let want = &live[..live.len() - 1];
    let first_difference = got.iter().zip(want).position(|(g, w)| g != w);
    assert_eq!(
        (got.len(), first_difference),
        (want.len(), None),
        "(entries, first out of place) against the routes there throughout"
    );
}

#[tokio::test]
async fn s5_2_permission_denied_pipeline_push_from_a_role_without_can_push_pipeline() {
    use pb::set_forwarding_pipeline_config_request::Action;
    let h = Harness::start().await;
    let mut r = role_primary(&h, "routes", role_config(&[T_LPM], false), 1).await;
    let p4info = proto::p4info_from_text(P4INFO_TEXT).unwrap();
    let req = |role: &str| pb::SetForwardingPipelineConfigRequest {
        device_id: DEVICE,
        role: role.into(),
        election_id: Some(u128_wire(1)),
        action: Action::Verify as i32,
        config: Some(pb::ForwardingPipelineConfig {
            p4info: Some(p4info.clone()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let err = r
        .client
        .set_forwarding_pipeline_config(req("routes"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err:?}");
    let _pusher = role_primary(&h, "pusher", role_config(&[T_LPM], true), 1).await;
    r.client
        .set_forwarding_pipeline_config(req("pusher"))
        .await
        .unwrap();
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

    // The notification reset the entry's timer: still not hit, it is
    // reported again one TTL later, not at every scan (§16.3).
    let again = loop {
        let m = tokio::time::timeout(std::time::Duration::from_secs(5), c.rx.message())
            .await
            .expect("a second notification within 5 s")
            .unwrap()
            .unwrap();
        if let Some(pb::stream_message_response::Update::IdleTimeoutNotification(n)) = m.update {
            break n;
        }
    };
    assert_eq!(again.table_entry[0].r#match, acl.r#match);
    let gap_ns = again.timestamp - note.timestamp;
    assert!(
        (45_000_000..2_000_000_000).contains(&gap_ns),
        "one TTL (50 ms) between the two, got {gap_ns} ns"
    );

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

// ---- SetForwardingPipelineConfig (§14) -------------------------------------

#[tokio::test]
async fn s14_not_found_commit_without_save_and_commit_replays_the_writes_since_the_save() {
    use pb::set_forwarding_pipeline_config_request::Action;
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let p4info = proto::p4info_from_text(P4INFO_TEXT).unwrap();
    let set = |action: Action, config: Option<pb::ForwardingPipelineConfig>| {
        pb::SetForwardingPipelineConfigRequest {
            device_id: DEVICE,
            election_id: Some(u128_wire(1)),
            action: action as i32,
            config,
            ..Default::default()
        }
    };
    let err = c
        .client
        .set_forwarding_pipeline_config(set(Action::Commit, None))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "nothing saved: {err:?}");

    write(&mut c, vec![insert(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .unwrap();
    let config = pb::ForwardingPipelineConfig {
        p4info: Some(p4info),
        cookie: Some(pb::forwarding_pipeline_config::Cookie { cookie: 7 }),
        ..Default::default()
    };
    c.client
        .set_forwarding_pipeline_config(set(Action::VerifyAndSave, Some(config)))
        .await
        .unwrap();
    assert_eq!(lpm_routes(&mut c).await.len(), 1, "SAVE leaves the state");
    write(&mut c, vec![insert(route([11, 0, 0, 0], 8, &[2]))])
        .await
        .unwrap();
    c.client
        .set_forwarding_pipeline_config(set(Action::Commit, None))
        .await
        .unwrap();
    let routes = lpm_routes(&mut c).await;
    assert_eq!(
        routes.len(),
        1,
        "only what was written since the save: {routes:?}"
    );
    let Some(E::TableEntry(te)) = &routes[0].entity else {
        panic!("{routes:?}")
    };
    assert_eq!(te.r#match, vec![lpm(1, &[11, 0, 0, 0], 8)]);
}

// ---- default entries (§9.1.3) -------------------------------------------------

async fn default_of(c: &mut Controller, table_id: u32) -> pb::TableEntry {
    let got = read(
        &mut c.client,
        vec![E::TableEntry(pb::TableEntry {
            table_id,
            is_default_action: true,
            ..Default::default()
        })],
    )
    .await
    .unwrap();
    match got.into_iter().next().and_then(|e| e.entity) {
        Some(E::TableEntry(te)) => te,
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn s9_1_3_ok_default_entry_cookies_read_back_and_reset_and_indirect_default_is_constant() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let mut d = entry(T_LPM, vec![], direct(action(SET_PORT, &[(1, &[3])])), 0);
    d.is_default_action = true;
    d.metadata = b"cookie".to_vec();
    d.controller_metadata = 77;
    write(&mut c, vec![modify(d)]).await.unwrap();
    let got = default_of(&mut c, T_LPM).await;
    assert_eq!(got.metadata, b"cookie", "read-write symmetry (§8.3)");
    assert_eq!(got.controller_metadata, 77);

    // A MODIFY without an action resets the entry, cookies included.
    let reset = pb::TableEntry {
        table_id: T_LPM,
        is_default_action: true,
        ..Default::default()
    };
    write(&mut c, vec![modify(reset)]).await.unwrap();
    let got = default_of(&mut c, T_LPM).await;
    assert!(
        got.metadata.is_empty() && got.controller_metadata == 0,
        "{got:?}"
    );

    // The default entry of an indirect table is a constant NoAction-like
    // entry: PERMISSION_DENIED, and it reads back as const.
    let mut d = entry(T_ECMP, vec![], direct(action(DROP, &[])), 0);
    d.is_default_action = true;
    assert_eq!(code_of(&mut c, modify(d)).await, Code::PermissionDenied);
    assert!(default_of(&mut c, T_ECMP).await.is_const);
}

// ---- reads filter on the action id only (§9.1.6) ---------------------------

#[tokio::test]
async fn s9_1_6_ok_action_filter_matches_the_action_id_whatever_the_params() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    write(
        &mut c,
        vec![
            insert(route([10, 0, 0, 0], 8, &[1])),
            insert(route([11, 0, 0, 0], 8, &[2])),
        ],
    )
    .await
    .unwrap();
    // The filter names set_port without its parameter: both entries.
    let filter = entry(T_LPM, vec![], direct(action(SET_PORT, &[])), 0);
    let found = read(&mut c.client, vec![E::TableEntry(filter)])
        .await
        .unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    let filter = entry(T_LPM, vec![], direct(action(DROP, &[])), 0);
    let found = read(&mut c.client, vec![E::TableEntry(filter)])
        .await
        .unwrap();
    assert!(found.is_empty(), "no entry runs drop: {found:?}");
}

// ---- action profiles (§9.2) ---------------------------------------------------

#[tokio::test]
async fn s9_2_2_ok_group_max_size_reads_back_and_watch_ports_are_checked() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let member = |id| {
        update(
            U::Insert,
            E::ActionProfileMember(pb::ActionProfileMember {
                action_profile_id: P_ECMP,
                member_id: id,
                action: Some(action(SET_NHOP, &[(1, &[1]), (2, &[1])])),
            }),
        )
    };
    write(&mut c, vec![member(1)]).await.unwrap();
    let group = |id, watch: Option<Vec<u8>>| {
        update(
            U::Insert,
            E::ActionProfileGroup(pb::ActionProfileGroup {
                action_profile_id: P_ECMP,
                group_id: id,
                members: vec![pb::action_profile_group::Member {
                    member_id: 1,
                    weight: 2,
                    watch_kind: watch.map(pb::action_profile_group::member::WatchKind::WatchPort),
                }],
                max_size: 8,
            }),
        )
    };
    // An empty watch port means no watch port.
    write(&mut c, vec![group(1, Some(vec![]))]).await.unwrap();
    let got = read(
        &mut c.client,
        vec![E::ActionProfileGroup(pb::ActionProfileGroup {
            action_profile_id: P_ECMP,
            group_id: 1,
            ..Default::default()
        })],
    )
    .await
    .unwrap();
    let Some(E::ActionProfileGroup(g)) = &got[0].entity else {
        panic!("{got:?}")
    };
    assert_eq!(g.max_size, 8, "read-write symmetry");
    assert_eq!(
        code_of(&mut c, group(2, Some(vec![0x10, 0]))).await,
        Code::InvalidArgument,
        "port 4096 is not a port of the switch"
    );
    let mut huge = group(3, None);
    if let Some(E::ActionProfileGroup(g)) = huge.entity.as_mut().and_then(|e| e.entity.as_mut()) {
        g.max_size = 1 << 20;
    }
    assert_eq!(
        code_of(&mut c, huge).await,
        Code::ResourceExhausted,
        "a max_size the switch cannot hold (§9.2.2.1)"
    );
}

// ---- direct resources and indexed externs (§9.3–§9.7) ------------------------

#[tokio::test]
async fn s9_3_not_found_direct_counter_of_a_missing_entry_and_s9_7_out_of_range_register_value() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let missing = route([10, 0, 0, 0], 8, &[1]);
    let err = read(
        &mut c.client,
        vec![E::DirectCounterEntry(pb::DirectCounterEntry {
            table_entry: Some(missing),
            data: None,
        })],
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err:?}");
    let err = read(
        &mut c.client,
        vec![E::MeterEntry(pb::MeterEntry {
            meter_id: M_POLICE,
            counter_data: Some(Default::default()),
            ..Default::default()
        })],
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented, "per-colour counters");

    let register = |value: Vec<u8>| {
        update(
            U::Modify,
            E::RegisterEntry(pb::RegisterEntry {
                register_id: R_SEEN,
                index: Some(pb::Index { index: 1 }),
                data: Some(pb::P4Data {
                    data: Some(pb::p4_data::Data::Bitstring(value)),
                }),
            }),
        )
    };
    assert_eq!(
        code_of(&mut c, register(vec![1, 0, 0, 0, 0])).await,
        Code::OutOfRange,
        "33 bits for a bit<32> cell (§8.4)"
    );
    write(&mut c, vec![register(vec![0, 0, 0, 0, 0, 9])])
        .await
        .expect("leading zero bytes are fine (§8.4)");
}

// ---- stream errors (§16) --------------------------------------------------------

#[tokio::test]
async fn s16_invalid_argument_stream_error_for_an_ack_of_an_unknown_digest() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let ack = pb::DigestListAck {
        digest_id: 0x1700_0999,
        list_id: 3,
    };
    c.tx.send(pb::StreamMessageRequest {
        update: Some(pb::stream_message_request::Update::DigestAck(ack)),
    })
    .await
    .unwrap();
    let err = loop {
        let m = tokio::time::timeout(std::time::Duration::from_secs(5), c.rx.message())
            .await
            .expect("a stream error within 5 s")
            .unwrap()
            .unwrap();
        if let Some(pb::stream_message_response::Update::Error(e)) = m.update {
            break e;
        }
    };
    assert_eq!(Code::from(err.canonical_code), Code::InvalidArgument);
    let Some(pb::stream_error::Details::DigestListAck(d)) = err.details else {
        panic!("the error names the ack: {err:?}")
    };
    assert_eq!(d.digest_list_ack, Some(ack));
}

// ---- keyless tables (§9.1) -------------------------------------------------------

const T_KEYLESS: u32 = 0x0200_0011;
const A_MARK: u32 = 0x0100_0011;

static KEYLESS_ACTIONS: [p4_target::info::ActionRef; 1] = [p4_target::info::ActionRef {
    id: A_MARK,
    scope: p4_target::info::ActionScope::TableAndDefault,
}];

static KEYLESS: p4_target::info::ProgramInfo = p4_target::info::ProgramInfo {
    name: "keyless",
    arch: "v1model",
    tables: &[p4_target::info::TableInfo::plain(
        T_KEYLESS,
        "MyIngress.mark_all",
        &[],
        &KEYLESS_ACTIONS,
        1,
        (A_MARK, &[]),
    )],
    actions: &[p4_target::info::ActionInfo {
        id: A_MARK,
        name: "MyIngress.mark",
        params: &[],
    }],
    action_profiles: &[],
    counters: &[],
    meters: &[],
    registers: &[],
    digests: &[],
    controller_headers: &[],
    value_sets: &[],
    p4info_text: r#"
pkg_info { arch: "v1model" }
tables {
  preamble { id: 33554449 name: "MyIngress.mark_all" alias: "mark_all" }
  action_refs { id: 16777233 }
  size: 1
}
actions { preamble { id: 16777233 name: "MyIngress.mark" alias: "mark" } }
"#,
};

#[tokio::test]
async fn s9_1_invalid_argument_insert_into_a_keyless_table() {
    let device =
        control::device::LocalDevice::new(Box::new(p4_target::runtime::Runtime::new(&KEYLESS)));
    let h = Harness::start_on(&KEYLESS, device).await;
    let mut c = primary(&h, 1).await;
    let te = entry(T_KEYLESS, vec![], direct(action(A_MARK, &[])), 0);
    assert_eq!(
        code_of(&mut c, insert(te.clone())).await,
        Code::InvalidArgument
    );
    // Its default entry is what a client sets.
    let mut d = te;
    d.is_default_action = true;
    write(&mut c, vec![modify(d)]).await.unwrap();
}

// ---- one-shot action selector programming (§9.2.3) ---------------------------

fn one_shot(nhops: &[(u8, i32)]) -> Option<pb::TableAction> {
    Some(pb::TableAction {
        r#type: Some(pb::table_action::Type::ActionProfileActionSet(
            pb::ActionProfileActionSet {
                action_profile_actions: nhops
                    .iter()
                    .map(|&(port, weight)| pb::ActionProfileAction {
                        action: Some(action(SET_NHOP, &[(1, &[0x0a, port]), (2, &[port])])),
                        weight,
                        watch_kind: None,
                    })
                    .collect(),
                ..Default::default()
            },
        )),
    })
}

fn ecmp_entry(group: u8, a: Option<pb::TableAction>) -> pb::TableEntry {
    entry(T_ECMP, vec![exact(1, &[group])], a, 0)
}

async fn profile_contents(h: &Harness) -> (usize, usize) {
    use control::device::DeviceExt;
    use p4_target::runtime::RuntimeApi;
    h.device
        .with_runtime(|rt: &mut dyn RuntimeApi| {
            (
                rt.members(P_ECMP).unwrap().len(),
                rt.groups(P_ECMP).unwrap().len(),
            )
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn s9_2_3_ok_one_shot_entries_read_back_as_written_and_keep_the_selector_to_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("oneshot.p4rt");
    let served = serve_restored(&state).await;
    let h = &served.h;
    let mut c = primary(h, 1).await;
    let first = ecmp_entry(1, one_shot(&[(1, 1), (2, 3)]));
    write(&mut c, vec![insert(first.clone())]).await.unwrap();
    assert_eq!(profile_contents(h).await, (2, 1), "two members, one group");
    let got = read(&mut c.client, vec![E::TableEntry(ecmp_entry(1, None))])
        .await
        .unwrap();
    let Some(E::TableEntry(te)) = &got[0].entity else {
        panic!("{got:?}")
    };
    assert_eq!(te.action, first.action, "the action set as written");
    let members = read(
        &mut c.client,
        vec![E::ActionProfileMember(Default::default())],
    )
    .await
    .unwrap();
    let groups = read(
        &mut c.client,
        vec![E::ActionProfileGroup(Default::default())],
    )
    .await
    .unwrap();
    assert!(
        members.is_empty() && groups.is_empty(),
        "hidden: {members:?} {groups:?}"
    );

    // No mixing with members and groups while one shots program the selector.
    let member = update(
        U::Insert,
        E::ActionProfileMember(pb::ActionProfileMember {
            action_profile_id: P_ECMP,
            member_id: 1,
            action: Some(action(SET_NHOP, &[(1, &[1]), (2, &[1])])),
        }),
    );
    assert_eq!(code_of(&mut c, member.clone()).await, Code::InvalidArgument);
    let bad = ecmp_entry(2, one_shot(&[(1, 0)]));
    assert_eq!(
        code_of(&mut c, insert(bad)).await,
        Code::InvalidArgument,
        "weight 0"
    );

    // MODIFY replaces the set; the old members and group go.
    let second = ecmp_entry(1, one_shot(&[(3, 2)]));
    write(&mut c, vec![modify(second.clone())]).await.unwrap();
    assert_eq!(profile_contents(h).await, (1, 1));

    // A restart replays it.
    drop(c);
    drop(served);
    let served = serve_restored(&state).await;
    let h = &served.h;
    let mut c = primary(h, 2).await;
    let got = read(&mut c.client, vec![E::TableEntry(ecmp_entry(1, None))])
        .await
        .unwrap();
    let Some(E::TableEntry(te)) = &got[0].entity else {
        panic!("{got:?}")
    };
    assert_eq!(te.action, second.action, "restored as written");

    // A batch that fails after a one shot takes it back whole.
    let req = write_request(
        &c,
        vec![
            insert(ecmp_entry(5, one_shot(&[(4, 1), (5, 1)]))),
            insert(ecmp_entry(1, one_shot(&[(6, 1)]))),
        ],
        pb::write_request::Atomicity::RollbackOnError,
    );
    assert!(c.client.write(req).await.is_err(), "entry 1 exists");
    assert_eq!(profile_contents(h).await, (1, 1), "nothing of entry 5 left");

    // Deleting the last one shot frees the selector for members.
    write(&mut c, vec![delete(ecmp_entry(1, None))])
        .await
        .unwrap();
    assert_eq!(profile_contents(h).await, (0, 0));
    write(&mut c, vec![member]).await.unwrap();
    let with_member = ecmp_entry(3, one_shot(&[(1, 1)]));
    assert_eq!(
        code_of(&mut c, insert(with_member)).await,
        Code::InvalidArgument,
        "a selector with members takes no one shots"
    );
}

// ---- packet replication engine (§9.5) -----------------------------------------

#[tokio::test]
async fn s9_5_ok_clone_session_with_several_replicas_and_instances_reads_back() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let replica = |port: u32, instance| pb::Replica {
        port_kind: Some(pb::replica::PortKind::Port(vec![port as u8])),
        instance,
        backup_replicas: vec![],
    };
    let session = pb::CloneSessionEntry {
        session_id: 100,
        replicas: vec![replica(2, 1), replica(3, 2)],
        class_of_service: 2,
        packet_length_bytes: 64,
    };
    let pre = |s: pb::CloneSessionEntry| {
        E::PacketReplicationEngineEntry(pb::PacketReplicationEngineEntry {
            r#type: Some(pb::packet_replication_engine_entry::Type::CloneSessionEntry(s)),
        })
    };
    write(&mut c, vec![update(U::Insert, pre(session.clone()))])
        .await
        .unwrap();
    let got = read(
        &mut c.client,
        vec![pre(pb::CloneSessionEntry {
            session_id: 100,
            ..Default::default()
        })],
    )
    .await
    .unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].entity, Some(pre(session)), "read-write symmetry");
}

#[tokio::test]
async fn s9_2_2_ok_members_whose_watch_port_is_down_leave_the_selection_until_it_is_up() {
    use pb::action_profile_group::member::WatchKind;
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let member = |id: u32, port: u8| {
        update(
            U::Insert,
            E::ActionProfileMember(pb::ActionProfileMember {
                action_profile_id: P_ECMP,
                member_id: id,
                action: Some(action(SET_NHOP, &[(1, &[port]), (2, &[port])])),
            }),
        )
    };
    write(&mut c, vec![member(1, 2), member(2, 3)])
        .await
        .unwrap();
    let watched = |port: u8| pb::action_profile_group::Member {
        member_id: u32::from(port) - 1,
        weight: 1,
        watch_kind: Some(WatchKind::WatchPort(vec![port])),
    };
    let group = pb::ActionProfileGroup {
        action_profile_id: P_ECMP,
        group_id: 7,
        members: vec![watched(2), watched(3)],
        max_size: 0,
    };
    write(
        &mut c,
        vec![update(U::Insert, E::ActionProfileGroup(group.clone()))],
    )
    .await
    .unwrap();
    let installed = || async {
        use control::device::DeviceExt;
        use p4_target::runtime::RuntimeApi;
        h.device
            .with_runtime(|rt: &mut dyn RuntimeApi| rt.groups(P_ECMP).unwrap()[0].1.clone())
            .await
            .unwrap()
    };
    let read_group = |c: &mut Controller| {
        let mut client = c.client.clone();
        async move {
            let got = read(
                &mut client,
                vec![E::ActionProfileGroup(pb::ActionProfileGroup {
                    action_profile_id: P_ECMP,
                    group_id: 7,
                    ..Default::default()
                })],
            )
            .await
            .unwrap();
            got[0].entity.clone()
        }
    };
    assert_eq!(installed().await, vec![(1, 1), (2, 1)]);
    assert_eq!(
        read_group(&mut c).await,
        Some(E::ActionProfileGroup(group.clone()))
    );

    // Port 2 goes down: member 1 leaves the selection within a refresh
    // period; reads still show the group as written.
    h.device.set_port_up(2, false);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while installed().await != vec![(2, 1)] {
        assert!(
            std::time::Instant::now() < deadline,
            "member 1 never pruned"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        read_group(&mut c).await,
        Some(E::ActionProfileGroup(group.clone()))
    );
    let del = update(
        U::Delete,
        E::ActionProfileMember(pb::ActionProfileMember {
            action_profile_id: P_ECMP,
            member_id: 1,
            action: None,
        }),
    );
    assert_eq!(
        code_of(&mut c, del).await,
        Code::FailedPrecondition,
        "a pruned member is still in its group"
    );

    // A rolled-back MODIFY leaves the group watched as it was.
    let unwatched = pb::ActionProfileGroup {
        members: vec![pb::action_profile_group::Member {
            member_id: 2,
            weight: 1,
            watch_kind: None,
        }],
        ..group.clone()
    };
    let req = write_request(
        &c,
        vec![
            update(U::Modify, E::ActionProfileGroup(unwatched)),
            insert(route([10, 0, 0, 0], 8, &[1])),
            insert(route([10, 0, 0, 0], 8, &[1])),
        ],
        pb::write_request::Atomicity::RollbackOnError,
    );
    assert!(c.client.write(req).await.is_err());
    assert_eq!(
        read_group(&mut c).await,
        Some(E::ActionProfileGroup(group.clone()))
    );
    assert_eq!(installed().await, vec![(2, 1)]);

    // The port comes back: so does the member.
    h.device.set_port_up(2, true);
    while installed().await != vec![(1, 1), (2, 1)] {
        assert!(std::time::Instant::now() < deadline, "member 1 never back");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn s6_invalid_argument_p4info_asking_for_more_multicast_groups_than_the_switch_has() {
    use pb::set_forwarding_pipeline_config_request::Action;
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let verify = |groups: i32| {
        let mut p4info = proto::p4info_from_text(P4INFO_TEXT).unwrap();
        p4info
            .pkg_info
            .get_or_insert_default()
            .platform_properties
            .get_or_insert_default()
            .multicast_group_table_size = groups;
        pb::SetForwardingPipelineConfigRequest {
            device_id: DEVICE,
            election_id: Some(u128_wire(1)),
            action: Action::Verify as i32,
            config: Some(pb::ForwardingPipelineConfig {
                p4info: Some(p4info),
                ..Default::default()
            }),
            ..Default::default()
        }
    };
    c.client
        .set_forwarding_pipeline_config(verify(1024))
        .await
        .unwrap();
    let err = c
        .client
        .set_forwarding_pipeline_config(verify(100_000))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("multicast_group_table_size"),
        "{err:?}"
    );
}

#[tokio::test]
async fn s14_invalid_argument_p4info_whose_objects_differ_from_the_program() {
    use pb::set_forwarding_pipeline_config_request::Action;
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let verify = |p4info: proto::p4::config::v1::P4Info| pb::SetForwardingPipelineConfigRequest {
        device_id: DEVICE,
        election_id: Some(u128_wire(1)),
        action: Action::Verify as i32,
        config: Some(pb::ForwardingPipelineConfig {
            p4info: Some(p4info),
            ..Default::default()
        }),
        ..Default::default()
    };
    let ours = proto::p4info_from_text(P4INFO_TEXT).unwrap();
    c.client
        .set_forwarding_pipeline_config(verify(ours.clone()))
        .await
        .unwrap();
    // A counter of another size, a table of another size, a register
    // the program does not have: none can be realised (§14).
    let mut counter = ours.clone();
    counter.counters[0].size = 4096;
    let mut table = ours.clone();
    table.tables[0].size = 1;
    let mut extra = ours.clone();
    let mut r = extra.registers[0].clone();
    r.preamble.as_mut().unwrap().id = 0x1600_0099;
    r.preamble.as_mut().unwrap().name = "ghost".into();
    extra.registers.push(r);
    for (what, p4info) in [
        ("port_counter", counter),
        ("ipv4_lpm", table),
        ("ghost", extra),
    ] {
        let err = c
            .client
            .set_forwarding_pipeline_config(verify(p4info))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{what}");
        assert!(err.message().contains(what), "{what}: {}", err.message());
    }
}

#[tokio::test]
async fn s9_4_unimplemented_direct_counter_of_the_default_entry() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let default_entry = pb::TableEntry {
        table_id: T_LPM,
        is_default_action: true,
        ..Default::default()
    };
    // Not an empty answer, not NOT_FOUND: the default entry exists, its
    // direct counter is what this switch does not keep.
    let err = read(
        &mut c.client,
        vec![E::DirectCounterEntry(pb::DirectCounterEntry {
            table_entry: Some(default_entry.clone()),
            data: None,
        })],
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented, "{err:?}");
    let counter = update(
        U::Modify,
        E::DirectCounterEntry(pb::DirectCounterEntry {
            table_entry: Some(default_entry.clone()),
            data: Some(pb::CounterData {
                byte_count: 1,
                packet_count: 1,
            }),
        }),
    );
    assert_eq!(code_of(&mut c, counter).await, Code::Unimplemented);
    let meter = update(
        U::Modify,
        E::DirectMeterEntry(pb::DirectMeterEntry {
            table_entry: Some(default_entry.clone()),
            ..Default::default()
        }),
    );
    assert_eq!(
        code_of(&mut c, meter).await,
        Code::InvalidArgument,
        "the table has no direct meter"
    );
    let te = pb::TableEntry {
        action: direct(action(DROP, &[])),
        counter_data: Some(pb::CounterData {
            byte_count: 1,
            packet_count: 1,
        }),
        ..default_entry
    };
    assert_eq!(code_of(&mut c, modify(te)).await, Code::Unimplemented);
    // A table without a direct counter is still INVALID_ARGUMENT.
    let no_counter = pb::TableEntry {
        table_id: T_ACL,
        is_default_action: true,
        ..Default::default()
    };
    let counter = update(
        U::Modify,
        E::DirectCounterEntry(pb::DirectCounterEntry {
            table_entry: Some(no_counter.clone()),
            data: Some(pb::CounterData::default()),
        }),
    );
    assert_eq!(code_of(&mut c, counter).await, Code::InvalidArgument);
    let err = read(
        &mut c.client,
        vec![E::DirectCounterEntry(pb::DirectCounterEntry {
            table_entry: Some(no_counter),
            data: None,
        })],
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
}
