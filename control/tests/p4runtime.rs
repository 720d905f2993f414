//! The P4Runtime service driven over gRPC by the generated tonic client:
//! arbitration, Write validation (status code, field named in the message,
//! state unchanged), atomicity modes, wildcard reads, canonical byte
//! strings, default entries, pipeline config, capabilities and packet I/O.

mod common;

use common::*;
use control::device::DeviceExt;
use pb::entity::Entity as E;
use pb::update::Type as U;
use pb::write_request::Atomicity;
use proto::p4::v1 as pb;
use tonic::Code;

// ---- arbitration ----------------------------------------------------------

#[tokio::test]
async fn primary_backup_and_promotion_when_the_primary_leaves() {
    let h = Harness::start().await;
    let (mut low, first) = open_stream(&h, DEVICE, Some(10)).await;
    let first = first.unwrap();
    assert_eq!(first.status.unwrap().code, Code::Ok as i32);
    assert_eq!(
        first.election_id,
        Some(u128_wire(10)),
        "reply carries the election id"
    );

    let (mut high, first) = open_stream(&h, DEVICE, Some(1 << 64)).await;
    let first = first.unwrap();
    assert_eq!(first.status.unwrap().code, Code::Ok as i32);
    let demoted = next_arbitration(&mut low.rx).await.unwrap();
    assert_eq!(demoted.status.unwrap().code, Code::AlreadyExists as i32);
    assert_eq!(
        demoted.election_id,
        Some(u128_wire(1 << 64)),
        "backups see the primary's id"
    );

    // The lower id cannot write; the primary can.
    let err = write(&mut low, vec![insert(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    assert!(err.message().contains("election_id"), "{}", err.message());
    write(&mut high, vec![insert(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .unwrap();

    // An id-less controller is accepted as a backup.
    let (_anon, first) = open_stream(&h, DEVICE, None).await;
    assert_eq!(
        first.unwrap().status.unwrap().code,
        Code::AlreadyExists as i32
    );

    // The primary leaves (§5.3): no promotion. The backup is told there is
    // no primary, with the highest id ever seen, and may not write until
    // it arbitrates with an id >= that.
    drop(high);
    let told = next_arbitration(&mut low.rx).await.unwrap();
    assert_eq!(told.status.unwrap().code, Code::NotFound as i32);
    assert_eq!(told.election_id, Some(u128_wire(1 << 64)));
    let err = write(&mut low, vec![insert(route([11, 0, 0, 0], 8, &[2]))])
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied);
    low.tx
        .send(arbitration_msg(DEVICE, Some(1 << 64)))
        .await
        .unwrap();
    let now = next_arbitration(&mut low.rx).await.unwrap();
    assert_eq!(now.status.unwrap().code, Code::Ok as i32);
    low.election_id = 1 << 64;
    write(&mut low, vec![insert(route([11, 0, 0, 0], 8, &[2]))])
        .await
        .unwrap();
}

#[tokio::test]
async fn duplicate_election_id_and_unknown_device_close_the_stream() {
    let h = Harness::start().await;
    let _a = primary(&h, 7).await;
    let (_b, first) = open_stream(&h, DEVICE, Some(7)).await;
    let err = first.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    // finsy retries only when the text matches `election id .*(used|exists)`.
    assert!(
        err.message()
            .to_lowercase()
            .contains("election id 7 is already used"),
        "{}",
        err.message()
    );

    let (_c, first) = open_stream(&h, 99, Some(8)).await;
    assert_eq!(first.unwrap_err().code(), Code::NotFound);
}

#[tokio::test]
async fn writes_to_an_unknown_device_or_from_a_stranger_are_refused() {
    let h = Harness::start().await;
    let mut c = primary(&h, 5).await;
    let mut req = write_request(
        &c,
        vec![insert(route([10, 0, 0, 0], 8, &[1]))],
        Atomicity::ContinueOnError,
    );
    req.device_id = 3;
    assert_eq!(
        c.client.write(req).await.unwrap_err().code(),
        Code::NotFound
    );
    let mut req = write_request(
        &c,
        vec![insert(route([10, 0, 0, 0], 8, &[1]))],
        Atomicity::ContinueOnError,
    );
    req.election_id = Some(u128_wire(4));
    assert_eq!(
        c.client.write(req).await.unwrap_err().code(),
        Code::PermissionDenied
    );
    let mut req = write_request(
        &c,
        vec![insert(route([10, 0, 0, 0], 8, &[1]))],
        Atomicity::ContinueOnError,
    );
    req.election_id = None;
    assert_eq!(
        c.client.write(req).await.unwrap_err().code(),
        Code::PermissionDenied
    );
    assert!(lpm_entries(&mut c).await.is_empty());
}

#[tokio::test]
async fn without_any_arbitration_id_less_writes_are_allowed() {
    // PTF's base_test style: device 0/1, no election id anywhere.
    let h = Harness::start().await;
    let (mut c, first) = open_stream(&h, DEVICE, None).await;
    assert_eq!(
        first.unwrap().status.unwrap().code,
        Code::NotFound as i32,
        "backup, no primary"
    );
    let mut req = write_request(
        &c,
        vec![insert(route([10, 0, 0, 0], 8, &[1]))],
        Atomicity::ContinueOnError,
    );
    req.election_id = None;
    c.client.write(req).await.unwrap();
}

// ---- bad requests -----------------------------------------------------------

fn bad_cases() -> Vec<(&'static str, pb::Update, Code, &'static str)> {
    use pb::field_match::FieldMatchType;
    let port1 = direct(action(SET_PORT, &[(1, &[1])]));
    let nhop = |dmac: &[u8], port: &[u8]| direct(action(SET_NHOP, &[(1, dmac), (2, port)]));
    let acl = |m: Vec<pb::FieldMatch>, prio: i32| entry(T_ACL, m, direct(action(DROP, &[])), prio);
    let member = |profile: u32, id: u32, a: pb::Action| {
        update(
            U::Insert,
            E::ActionProfileMember(pb::ActionProfileMember {
                action_profile_id: profile,
                member_id: id,
                action: Some(a),
            }),
        )
    };
    let group = |members: Vec<(u32, i32)>| {
        update(
            U::Insert,
            E::ActionProfileGroup(pb::ActionProfileGroup {
                action_profile_id: P_ECMP,
                group_id: 1,
                members: members
                    .into_iter()
                    .map(|(member_id, weight)| pb::action_profile_group::Member {
                        member_id,
                        weight,
                        ..Default::default()
                    })
                    .collect(),
                max_size: 0,
            }),
        )
    };
    let counter = |ty: U, index: i64| {
        update(
            ty,
            E::CounterEntry(pb::CounterEntry {
                counter_id: C_PORT,
                index: Some(pb::Index { index }),
                data: Some(pb::CounterData {
                    byte_count: 1,
                    packet_count: 1,
                }),
            }),
        )
    };
    let mut with_counter = route([10, 0, 0, 0], 8, &[1]);
    with_counter.counter_data = Some(Default::default());
    let mut acl_with_counter = acl(vec![ternary(1, &[6], &[0xff])], 5);
    acl_with_counter.counter_data = Some(Default::default());
    let mut default_insert = entry(T_LPM, vec![], port1.clone(), 0);
    default_insert.is_default_action = true;
    let mut default_with_match = entry(T_LPM, vec![lpm(1, &[10, 0, 0, 0], 8)], port1.clone(), 0);
    default_with_match.is_default_action = true;
    let mut default_tableonly = entry(T_LPM, vec![], nhop(&[1], &[1]), 0);
    default_tableonly.is_default_action = true;
    let other_match = pb::FieldMatch {
        field_id: 1,
        field_match_type: Some(FieldMatchType::Other(prost_types::Any::default())),
    };
    vec![
        (
            "unknown table",
            insert(entry(0x0200_0099, vec![], port1.clone(), 0)),
            Code::InvalidArgument,
            "table_id",
        ),
        (
            "exact too wide",
            insert(entry(T_ECMP, vec![exact(1, &[1, 0, 0])], None, 0)),
            Code::InvalidArgument,
            "match[0] (meta.nhop_group).exact.value",
        ),
        (
            "mask on exact field",
            insert(entry(T_ECMP, vec![ternary(1, &[1], &[0xff])], None, 0)),
            Code::InvalidArgument,
            "match[0] (meta.nhop_group)",
        ),
        (
            "lpm prefix > width",
            insert(route([10, 0, 0, 0], 33, &[1])),
            Code::InvalidArgument,
            "lpm.prefix_len",
        ),
        (
            "lpm bits past prefix",
            insert(route([10, 0, 0, 1], 8, &[1])),
            Code::InvalidArgument,
            "lpm.value",
        ),
        (
            "lpm prefix 0",
            insert(route([0, 0, 0, 0], 0, &[1])),
            Code::InvalidArgument,
            "lpm.prefix_len",
        ),
        (
            "lpm value too wide",
            insert(entry(
                T_LPM,
                vec![lpm(1, &[1, 10, 0, 0, 0], 8)],
                port1.clone(),
                0,
            )),
            Code::InvalidArgument,
            "lpm.value",
        ),
        (
            "ternary value outside mask",
            insert(acl(vec![ternary(1, &[0x11], &[0xf0])], 5)),
            Code::InvalidArgument,
            "ternary.value",
        ),
        (
            "ternary zero mask",
            insert(acl(vec![ternary(1, &[0], &[0])], 5)),
            Code::InvalidArgument,
            "ternary.mask",
        ),
        (
            "missing priority",
            insert(acl(vec![ternary(1, &[6], &[0xff])], 0)),
            Code::InvalidArgument,
            "priority",
        ),
        (
            "negative priority",
            insert(acl(vec![ternary(1, &[6], &[0xff])], -3)),
            Code::InvalidArgument,
            "priority",
        ),
        (
            "priority on lpm table",
            insert(entry(
                T_LPM,
                vec![lpm(1, &[10, 0, 0, 0], 8)],
                port1.clone(),
                4,
            )),
            Code::InvalidArgument,
            "priority",
        ),
        (
            "unknown field id",
            insert(entry(
                T_LPM,
                vec![lpm(9, &[10, 0, 0, 0], 8)],
                port1.clone(),
                0,
            )),
            Code::InvalidArgument,
            "match[0].field_id",
        ),
        (
            "duplicate field id",
            insert(acl(
                vec![ternary(1, &[6], &[0xff]), ternary(1, &[17], &[0xff])],
                5,
            )),
            Code::InvalidArgument,
            "duplicate match field",
        ),
        (
            "missing exact field",
            insert(entry(T_ECMP, vec![], None, 0)),
            Code::InvalidArgument,
            "meta.nhop_group",
        ),
        (
            "range low > high",
            insert(acl(vec![range(2, &[9], &[3])], 5)),
            Code::InvalidArgument,
            "range",
        ),
        (
            "other match type",
            insert(entry(T_LPM, vec![other_match], port1.clone(), 0)),
            Code::InvalidArgument,
            "match[0] (hdr.ipv4.dstAddr)",
        ),
        (
            "unknown action",
            insert(entry(
                T_LPM,
                vec![lpm(1, &[10, 0, 0, 0], 8)],
                direct(action(0x0100_0099, &[])),
                0,
            )),
            Code::InvalidArgument,
            "action.action_id",
        ),
        (
            "action not in table",
            insert(acl(vec![ternary(1, &[6], &[0xff])], 5).tap(|e| e.action = port1.clone())),
            Code::InvalidArgument,
            "action.action_id",
        ),
        (
            "defaultonly action in entry",
            insert(entry(
                T_LPM,
                vec![lpm(1, &[10, 0, 0, 0], 8)],
                direct(action(DROP, &[])),
                0,
            )),
            Code::PermissionDenied,
            "@defaultonly",
        ),
        (
            "missing action",
            insert(entry(T_LPM, vec![lpm(1, &[10, 0, 0, 0], 8)], None, 0)),
            Code::InvalidArgument,
            "action",
        ),
        (
            "wrong param count",
            insert(entry(
                T_LPM,
                vec![lpm(1, &[10, 0, 0, 0], 8)],
                direct(action(SET_PORT, &[])),
                0,
            )),
            Code::InvalidArgument,
            "action.params",
        ),
        (
            "unknown param id",
            insert(entry(
                T_LPM,
                vec![lpm(1, &[10, 0, 0, 0], 8)],
                direct(action(SET_PORT, &[(7, &[1])])),
                0,
            )),
            Code::InvalidArgument,
            "params[0].param_id",
        ),
        (
            "duplicate param id",
            insert(entry(
                T_LPM,
                vec![lpm(1, &[10, 0, 0, 0], 8)],
                direct(action(SET_NHOP, &[(1, &[1]), (1, &[2])])),
                0,
            )),
            Code::InvalidArgument,
            "duplicate param",
        ),
        (
            "param too wide",
            insert(route([10, 0, 0, 0], 8, &[2, 0])),
            Code::InvalidArgument,
            "params[0] (port).value",
        ),
        (
            "empty param",
            insert(route([10, 0, 0, 0], 8, &[])),
            Code::InvalidArgument,
            "params[0] (port).value",
        ),
        (
            "insert default entry",
            insert(default_insert),
            Code::InvalidArgument,
            "is_default_action",
        ),
        (
            "default entry with match",
            modify(default_with_match),
            Code::InvalidArgument,
            "table_entry.match",
        ),
        (
            "tableonly action as default",
            modify(default_tableonly),
            Code::PermissionDenied,
            "@tableonly",
        ),
        (
            "const table",
            insert(entry(
                T_CONST,
                vec![exact(1, &[0x88, 0xcc])],
                direct(action(DROP, &[])),
                0,
            )),
            Code::PermissionDenied,
            "const",
        ),
        (
            "unspecified update type",
            update(U::Unspecified, E::TableEntry(route([10, 0, 0, 0], 8, &[1]))),
            Code::InvalidArgument,
            "updates.type",
        ),
        (
            "missing entity",
            pb::Update {
                r#type: U::Insert as i32,
                entity: None,
            },
            Code::InvalidArgument,
            "updates.entity",
        ),
        (
            "member id on direct table",
            insert(entry(
                T_LPM,
                vec![lpm(1, &[10, 0, 0, 0], 8)],
                Some(pb::TableAction {
                    r#type: Some(pb::table_action::Type::ActionProfileMemberId(1)),
                }),
                0,
            )),
            Code::InvalidArgument,
            "direct table",
        ),
        (
            "action on indirect table",
            insert(entry(T_ECMP, vec![exact(1, &[1])], nhop(&[1], &[1]), 0)),
            Code::InvalidArgument,
            "indirect",
        ),
        (
            "counter_data without direct counter",
            insert(acl_with_counter),
            Code::InvalidArgument,
            "table_entry.counter_data",
        ),
        (
            "counter insert",
            counter(U::Insert, 0),
            Code::InvalidArgument,
            "counter_entry",
        ),
        (
            "counter index out of range",
            counter(U::Modify, 8),
            Code::OutOfRange,
            "counter_entry.index",
        ),
        (
            "unknown counter",
            update(
                U::Modify,
                E::CounterEntry(pb::CounterEntry {
                    counter_id: C_LPM,
                    ..Default::default()
                }),
            ),
            Code::InvalidArgument,
            "counter_entry.counter_id",
        ),
        (
            "meter pir < cir",
            update(
                U::Modify,
                E::MeterEntry(pb::MeterEntry {
                    meter_id: M_POLICE,
                    index: Some(pb::Index { index: 0 }),
                    config: Some(pb::MeterConfig {
                        cir: 100,
                        cburst: 10,
                        pir: 50,
                        pburst: 10,
                        eburst: 0,
                    }),
                    counter_data: None,
                }),
            ),
            Code::InvalidArgument,
            "meter_entry.config.pir",
        ),
        (
            "register too wide",
            update(
                U::Modify,
                E::RegisterEntry(pb::RegisterEntry {
                    register_id: R_SEEN,
                    index: Some(pb::Index { index: 0 }),
                    data: Some(pb::P4Data {
                        data: Some(pb::p4_data::Data::Bitstring(vec![1, 0, 0, 0, 0])),
                    }),
                }),
            ),
            // A P4Data bytestring that does not fit is OUT_OF_RANGE (§8.4).
            Code::OutOfRange,
            "register_entry.data",
        ),
        (
            "member of unknown profile",
            member(0x1100_0099, 1, action(SET_NHOP, &[(1, &[1]), (2, &[1])])),
            Code::InvalidArgument,
            "action_profile_id",
        ),
        (
            "member with wrong action",
            member(P_ECMP, 1, action(SET_PORT, &[(1, &[1])])),
            Code::InvalidArgument,
            "action_profile_member.action.action_id",
        ),
        (
            "group with negative weight",
            group(vec![(1, -1)]),
            Code::InvalidArgument,
            "weight",
        ),
        (
            "group with duplicate member",
            group(vec![(1, 1), (1, 2)]),
            Code::InvalidArgument,
            "duplicate member",
        ),
        (
            "group of missing member",
            group(vec![(42, 1)]),
            Code::NotFound,
            "member 42",
        ),
        (
            "PRE entry without a type",
            update(
                U::Insert,
                E::PacketReplicationEngineEntry(Default::default()),
            ),
            Code::InvalidArgument,
            "packet_replication_engine_entry.type",
        ),
        (
            "modify missing entry",
            modify(route([12, 0, 0, 0], 8, &[1])),
            Code::NotFound,
            "not found",
        ),
        (
            "delete missing entry",
            delete(route([12, 0, 0, 0], 8, &[1])),
            Code::NotFound,
            "not found",
        ),
        (
            "counter_data on insert ok shape but duplicate",
            insert(with_counter),
            Code::AlreadyExists,
            "already exists",
        ),
    ]
}

trait Tap: Sized {
    fn tap(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}
impl<T> Tap for T {}

#[tokio::test]
async fn every_bad_update_gets_its_code_names_its_field_and_changes_nothing() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    // Some state to protect: a route (the last case duplicates it), a member, a counter value.
    write(
        &mut c,
        vec![
            insert(route([10, 0, 0, 0], 8, &[1])),
            update(
                U::Insert,
                E::ActionProfileMember(pb::ActionProfileMember {
                    action_profile_id: P_ECMP,
                    member_id: 1,
                    action: Some(action(SET_NHOP, &[(1, &[0xaa]), (2, &[3])])),
                }),
            ),
        ],
    )
    .await
    .unwrap();
    let before = snapshot(&mut c.client).await;
    let cases = bad_cases();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    for (name, upd, code, needle) in cases {
        let err = write(&mut c, vec![upd]).await.expect_err(name);
        let errs = update_errors(&err);
        assert_eq!(errs.len(), 1, "{name}");
        assert_eq!(Code::from(errs[0].0), code, "{name}: {}", errs[0].1);
        assert!(
            errs[0].1.contains(needle),
            "{name}: message {:?} does not name {needle:?}",
            errs[0].1
        );
        assert_eq!(
            snapshot(&mut c.client).await,
            before,
            "{name} changed state"
        );
    }
}

// ---- atomicity ---------------------------------------------------------------

async fn lpm_entries(c: &mut Controller) -> Vec<pb::TableEntry> {
    read(
        &mut c.client,
        vec![E::TableEntry(pb::TableEntry {
            table_id: T_LPM,
            ..Default::default()
        })],
    )
    .await
    .unwrap()
    .into_iter()
    .filter_map(|e| match e.entity {
        Some(E::TableEntry(t)) => Some(t),
        _ => None,
    })
    .collect()
}

#[tokio::test]
async fn continue_on_error_applies_the_good_updates_and_reports_each() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let err = write(
        &mut c,
        vec![
            insert(route([10, 0, 0, 0], 8, &[1])),
            insert(route([10, 0, 0, 0], 33, &[1])),
            insert(route([11, 0, 0, 0], 8, &[2])),
            insert(route([10, 0, 0, 0], 8, &[3])),
        ],
    )
    .await
    .unwrap_err();
    let codes: Vec<Code> = update_errors(&err)
        .into_iter()
        .map(|(c, _)| Code::from(c))
        .collect();
    assert_eq!(
        codes,
        vec![
            Code::Ok,
            Code::InvalidArgument,
            Code::Ok,
            Code::AlreadyExists
        ]
    );
    assert_eq!(lpm_entries(&mut c).await.len(), 2);
}

#[tokio::test]
async fn rollback_on_error_undoes_inserts_modifies_and_deletes() {
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
    let before = snapshot(&mut c.client).await;
    for atomicity in [Atomicity::RollbackOnError, Atomicity::DataplaneAtomic] {
        let req = write_request(
            &c,
            vec![
                insert(route([12, 0, 0, 0], 8, &[3])),
                modify(route([10, 0, 0, 0], 8, &[7])),
                delete(route([11, 0, 0, 0], 8, &[2])),
                insert(route([12, 0, 0, 0], 8, &[4])),
            ],
            atomicity,
        );
        let err = c.client.write(req).await.unwrap_err();
        let codes: Vec<Code> = update_errors(&err)
            .into_iter()
            .map(|(c, _)| Code::from(c))
            .collect();
        assert_eq!(
            codes,
            vec![
                Code::Aborted,
                Code::Aborted,
                Code::Aborted,
                Code::AlreadyExists
            ],
            "{atomicity:?}"
        );
        assert_eq!(
            snapshot(&mut c.client).await,
            before,
            "{atomicity:?} left a partial batch"
        );
    }
    // An invalid update in an all-or-nothing batch means nothing is applied.
    let req = write_request(
        &c,
        vec![
            insert(route([13, 0, 0, 0], 8, &[3])),
            insert(route([13, 0, 0, 0], 40, &[3])),
        ],
        Atomicity::RollbackOnError,
    );
    let err = c.client.write(req).await.unwrap_err();
    let codes: Vec<Code> = update_errors(&err)
        .into_iter()
        .map(|(c, _)| Code::from(c))
        .collect();
    assert_eq!(codes, vec![Code::Aborted, Code::InvalidArgument]);
    assert_eq!(snapshot(&mut c.client).await, before);
    // And a good all-or-nothing batch is applied whole.
    let req = write_request(
        &c,
        vec![
            insert(route([13, 0, 0, 0], 8, &[3])),
            delete(route([10, 0, 0, 0], 8, &[1])),
        ],
        Atomicity::DataplaneAtomic,
    );
    c.client.write(req).await.unwrap();
    let prefixes: Vec<Vec<u8>> = lpm_entries(&mut c)
        .await
        .into_iter()
        .map(|e| match &e.r#match[0].field_match_type {
            Some(pb::field_match::FieldMatchType::Lpm(l)) => l.value.clone(),
            _ => panic!("lpm"),
        })
        .collect();
    assert_eq!(prefixes.len(), 2);
    assert!(prefixes.contains(&vec![11, 0, 0, 0]) && prefixes.contains(&vec![13, 0, 0, 0]));
}

#[tokio::test]
async fn rollback_restores_members_groups_counters_and_registers() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let mem = |ty: U, id: u32, port: &[u8]| {
        update(
            ty,
            E::ActionProfileMember(pb::ActionProfileMember {
                action_profile_id: P_ECMP,
                member_id: id,
                action: Some(action(SET_NHOP, &[(1, &[0xaa]), (2, port)])),
            }),
        )
    };
    write(
        &mut c,
        vec![mem(U::Insert, 1, &[1]), mem(U::Insert, 2, &[2])],
    )
    .await
    .unwrap();
    let before = snapshot(&mut c.client).await;
    let req = write_request(
        &c,
        vec![
            mem(U::Modify, 1, &[9]),
            mem(U::Delete, 2, &[2]),
            update(
                U::Insert,
                E::ActionProfileGroup(pb::ActionProfileGroup {
                    action_profile_id: P_ECMP,
                    group_id: 5,
                    members: vec![pb::action_profile_group::Member {
                        member_id: 1,
                        weight: 1,
                        ..Default::default()
                    }],
                    max_size: 0,
                }),
            ),
            update(
                U::Modify,
                E::CounterEntry(pb::CounterEntry {
                    counter_id: C_PORT,
                    index: Some(pb::Index { index: 2 }),
                    data: Some(pb::CounterData {
                        byte_count: 100,
                        packet_count: 1,
                    }),
                }),
            ),
            update(
                U::Modify,
                E::RegisterEntry(pb::RegisterEntry {
                    register_id: R_SEEN,
                    index: Some(pb::Index { index: 1 }),
                    data: Some(pb::P4Data {
                        data: Some(pb::p4_data::Data::Bitstring(vec![7])),
                    }),
                }),
            ),
            mem(U::Insert, 1, &[1]),
        ],
        Atomicity::RollbackOnError,
    );
    let err = c.client.write(req).await.unwrap_err();
    assert_eq!(Code::from(update_errors(&err)[5].0), Code::AlreadyExists);
    assert_eq!(snapshot(&mut c.client).await, before);
}

// ---- reads ------------------------------------------------------------------------

#[tokio::test]
async fn wildcard_reads_skip_defaults_and_owned_tables_and_pre_reads_are_empty() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    write(
        &mut c,
        vec![
            insert(route([10, 0, 0, 0], 8, &[1])),
            insert(entry(
                T_ACL,
                vec![
                    ternary(1, &[6], &[0xff]),
                    range(2, &[0x12, 0xb7], &[0x12, 0xb7]),
                ],
                direct(action(DROP, &[])),
                10,
            )),
        ],
    )
    .await
    .unwrap();
    let all = read(&mut c.client, vec![E::TableEntry(Default::default())])
        .await
        .unwrap();
    let tables: Vec<(u32, bool, bool)> = all
        .iter()
        .map(|e| match &e.entity {
            Some(E::TableEntry(t)) => (t.table_id, t.is_default_action, t.is_const),
            _ => panic!("table entries only"),
        })
        .collect();
    // Two written entries plus the const table's initial entry, no defaults, nothing of the fabric table.
    assert_eq!(
        tables,
        vec![
            (T_LPM, false, false),
            (T_ACL, false, false),
            (T_CONST, false, true)
        ]
    );

    let default = read(
        &mut c.client,
        vec![E::TableEntry(pb::TableEntry {
            table_id: T_LPM,
            is_default_action: true,
            ..Default::default()
        })],
    )
    .await
    .unwrap();
    let Some(E::TableEntry(d)) = &default[0].entity else {
        panic!()
    };
    assert!(d.is_default_action);
    assert_eq!(d.action, direct(action(DROP, &[])));

    let pre =
        read(
            &mut c.client,
            vec![
                E::TableEntry(Default::default()),
                E::PacketReplicationEngineEntry(pb::PacketReplicationEngineEntry {
                    r#type: Some(
                        pb::packet_replication_engine_entry::Type::MulticastGroupEntry(
                            Default::default(),
                        ),
                    ),
                }),
                E::PacketReplicationEngineEntry(pb::PacketReplicationEngineEntry {
                    r#type: Some(
                        pb::packet_replication_engine_entry::Type::CloneSessionEntry(
                            Default::default(),
                        ),
                    ),
                }),
            ],
        )
        .await
        .unwrap();
    assert_eq!(
        pre.len(),
        3,
        "finsy's batched delete_all read works; PRE adds nothing"
    );

    let counters = read(
        &mut c.client,
        vec![E::CounterEntry(pb::CounterEntry {
            counter_id: C_PORT,
            ..Default::default()
        })],
    )
    .await
    .unwrap();
    assert_eq!(
        counters.len(),
        8,
        "a counter read without index returns every cell"
    );
    let one = read(
        &mut c.client,
        vec![E::CounterEntry(pb::CounterEntry {
            counter_id: C_PORT,
            index: Some(pb::Index { index: 3 }),
            data: None,
        })],
    )
    .await
    .unwrap();
    assert_eq!(one.len(), 1);

    // The owned table can still be read explicitly.
    let qos = read(
        &mut c.client,
        vec![E::TableEntry(pb::TableEntry {
            table_id: T_QOS,
            ..Default::default()
        })],
    )
    .await
    .unwrap();
    assert!(qos.is_empty());

    let err = read(
        &mut c.client,
        vec![E::TableEntry(pb::TableEntry {
            table_id: 0x0200_0042,
            ..Default::default()
        })],
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("table_id"));
}

#[tokio::test]
async fn padded_values_are_normalised_and_replies_are_canonical() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    // p4runtime-shell with canonical bytestrings off sends a 9-bit port as 00 01.
    write(
        &mut c,
        vec![insert(entry(
            T_LPM,
            vec![lpm(1, &[0, 0, 10, 0, 0, 0], 8)],
            direct(action(SET_PORT, &[(1, &[0, 1])])),
            0,
        ))],
    )
    .await
    .unwrap();
    let got = lpm_entries(&mut c).await;
    assert_eq!(got[0].r#match, vec![lpm(1, &[10, 0, 0, 0], 8)]);
    assert_eq!(got[0].action, direct(action(SET_PORT, &[(1, &[1])])));
    // A canonical insert of the same key collides; a differently padded delete finds it.
    let dup = write(&mut c, vec![insert(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .unwrap_err();
    assert_eq!(Code::from(update_errors(&dup)[0].0), Code::AlreadyExists);
    write(
        &mut c,
        vec![delete(entry(
            T_LPM,
            vec![lpm(1, &[0, 10, 0, 0, 0], 8)],
            None,
            0,
        ))],
    )
    .await
    .unwrap();
    assert!(lpm_entries(&mut c).await.is_empty());
    // Zero is one byte.
    write(&mut c, vec![insert(route([10, 0, 0, 0], 8, &[0, 0]))])
        .await
        .unwrap();
    assert_eq!(
        lpm_entries(&mut c).await[0].action,
        direct(action(SET_PORT, &[(1, &[0])]))
    );
}

#[tokio::test]
async fn default_entry_modify_and_reset_and_cookie_echo() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let mut d = entry(T_LPM, vec![], direct(action(SET_PORT, &[(1, &[3])])), 0);
    d.is_default_action = true;
    write(&mut c, vec![modify(d.clone())]).await.unwrap();
    let read_default = |c: &mut Controller| {
        let mut client = c.client.clone();
        async move {
            let r = read(
                &mut client,
                vec![E::TableEntry(pb::TableEntry {
                    table_id: T_LPM,
                    is_default_action: true,
                    ..Default::default()
                })],
            )
            .await
            .unwrap();
            match r.into_iter().next().and_then(|e| e.entity) {
                Some(E::TableEntry(t)) => t.action,
                _ => panic!(),
            }
        }
    };
    assert_eq!(
        read_default(&mut c).await,
        direct(action(SET_PORT, &[(1, &[3])]))
    );
    // MODIFY without an action resets to the program's initial default (finsy delete_all).
    d.action = None;
    write(&mut c, vec![modify(d)]).await.unwrap();
    assert_eq!(read_default(&mut c).await, direct(action(DROP, &[])));

    let mut e = route([10, 0, 0, 0], 8, &[1]);
    e.metadata = b"cookie".to_vec();
    write(&mut c, vec![insert(e)]).await.unwrap();
    assert_eq!(lpm_entries(&mut c).await[0].metadata, b"cookie".to_vec());
}

#[tokio::test]
async fn ecmp_members_groups_and_indirect_entries_round_trip() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let mem = |id: u32, port: &[u8]| {
        update(
            U::Insert,
            E::ActionProfileMember(pb::ActionProfileMember {
                action_profile_id: P_ECMP,
                member_id: id,
                action: Some(action(SET_NHOP, &[(1, &[0xaa]), (2, port)])),
            }),
        )
    };
    write(&mut c, vec![mem(1, &[1]), mem(2, &[2])])
        .await
        .unwrap();
    write(
        &mut c,
        vec![update(
            U::Insert,
            E::ActionProfileGroup(pb::ActionProfileGroup {
                action_profile_id: P_ECMP,
                group_id: 10,
                members: vec![
                    pb::action_profile_group::Member {
                        member_id: 1,
                        weight: 1,
                        ..Default::default()
                    },
                    pb::action_profile_group::Member {
                        member_id: 2,
                        weight: 3,
                        ..Default::default()
                    },
                ],
                max_size: 0,
            }),
        )],
    )
    .await
    .unwrap();
    let group_ref = Some(pb::TableAction {
        r#type: Some(pb::table_action::Type::ActionProfileGroupId(10)),
    });
    write(
        &mut c,
        vec![insert(entry(
            T_ECMP,
            vec![exact(1, &[7])],
            group_ref.clone(),
            0,
        ))],
    )
    .await
    .unwrap();
    let members = read(
        &mut c.client,
        vec![E::ActionProfileMember(Default::default())],
    )
    .await
    .unwrap();
    assert_eq!(members.len(), 2);
    let groups = read(
        &mut c.client,
        vec![E::ActionProfileGroup(Default::default())],
    )
    .await
    .unwrap();
    let Some(E::ActionProfileGroup(g)) = &groups[0].entity else {
        panic!()
    };
    assert_eq!(
        g.members
            .iter()
            .map(|m| (m.member_id, m.weight))
            .collect::<Vec<_>>(),
        vec![(1, 1), (2, 3)]
    );
    let ents = read(
        &mut c.client,
        vec![E::TableEntry(pb::TableEntry {
            table_id: T_ECMP,
            ..Default::default()
        })],
    )
    .await
    .unwrap();
    let Some(E::TableEntry(t)) = &ents[0].entity else {
        panic!()
    };
    assert_eq!(t.action, group_ref);
    // A member in use cannot go.
    let err = write(
        &mut c,
        vec![update(
            U::Delete,
            E::ActionProfileMember(pb::ActionProfileMember {
                action_profile_id: P_ECMP,
                member_id: 1,
                action: None,
            }),
        )],
    )
    .await
    .unwrap_err();
    assert_eq!(
        Code::from(update_errors(&err)[0].0),
        Code::FailedPrecondition
    );
}

#[tokio::test]
async fn direct_counters_meters_and_registers_read_back() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let mut e = route([10, 0, 0, 0], 8, &[1]);
    e.counter_data = Some(pb::CounterData {
        byte_count: 1500,
        packet_count: 1,
    });
    write(&mut c, vec![insert(e)]).await.unwrap();
    let dc = read(
        &mut c.client,
        vec![E::DirectCounterEntry(pb::DirectCounterEntry {
            table_entry: Some(pb::TableEntry {
                table_id: T_LPM,
                ..Default::default()
            }),
            data: None,
        })],
    )
    .await
    .unwrap();
    let Some(E::DirectCounterEntry(d)) = &dc[0].entity else {
        panic!()
    };
    assert_eq!(
        d.data,
        Some(pb::CounterData {
            byte_count: 1500,
            packet_count: 1
        })
    );

    let cfg = pb::MeterConfig {
        cir: 100,
        cburst: 10,
        pir: 200,
        pburst: 20,
        eburst: 0,
    };
    write(
        &mut c,
        vec![update(
            U::Modify,
            E::MeterEntry(pb::MeterEntry {
                meter_id: M_POLICE,
                index: Some(pb::Index { index: 1 }),
                config: Some(cfg),
                counter_data: None,
            }),
        )],
    )
    .await
    .unwrap();
    let m = read(
        &mut c.client,
        vec![E::MeterEntry(pb::MeterEntry {
            meter_id: M_POLICE,
            ..Default::default()
        })],
    )
    .await
    .unwrap();
    let configs: Vec<Option<pb::MeterConfig>> = m
        .into_iter()
        .map(|e| match e.entity {
            Some(E::MeterEntry(m)) => m.config,
            _ => panic!(),
        })
        .collect();
    assert_eq!(configs, vec![None, Some(cfg)]);

    write(
        &mut c,
        vec![update(
            U::Modify,
            E::RegisterEntry(pb::RegisterEntry {
                register_id: R_SEEN,
                index: Some(pb::Index { index: 2 }),
                data: Some(pb::P4Data {
                    data: Some(pb::p4_data::Data::Bitstring(vec![0, 0, 1, 0])),
                }),
            }),
        )],
    )
    .await
    .unwrap();
    let r = read(
        &mut c.client,
        vec![E::RegisterEntry(pb::RegisterEntry {
            register_id: R_SEEN,
            index: Some(pb::Index { index: 2 }),
            data: None,
        })],
    )
    .await
    .unwrap();
    let Some(E::RegisterEntry(r)) = &r[0].entity else {
        panic!()
    };
    assert_eq!(
        r.data,
        Some(pb::P4Data {
            data: Some(pb::p4_data::Data::Bitstring(vec![1, 0]))
        })
    );
}

// ---- pipeline config, capabilities -------------------------------------------------

#[tokio::test]
async fn pipeline_config_accepts_only_the_compiled_program_and_keeps_the_cookie() {
    use pb::get_forwarding_pipeline_config_request::ResponseType;
    use pb::set_forwarding_pipeline_config_request::Action;
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let get = |client: &mut proto::p4::v1::p4_runtime_client::P4RuntimeClient<
        tonic::transport::Channel,
    >,
               ty: ResponseType| {
        let mut client = client.clone();
        async move {
            client
                .get_forwarding_pipeline_config(pb::GetForwardingPipelineConfigRequest {
                    device_id: DEVICE,
                    response_type: ty as i32,
                })
                .await
                .unwrap()
                .into_inner()
                .config
                .unwrap()
        }
    };
    let ours = proto::p4info_from_text(P4INFO_TEXT).unwrap();
    let cfg = get(&mut c.client, ResponseType::P4infoAndCookie).await;
    assert_eq!(cfg.p4info.as_ref(), Some(&ours), "P4Info returned verbatim");
    assert_eq!(cfg.cookie, None);

    write(&mut c, vec![insert(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .unwrap();
    // The fabric service's table (written behind P4Runtime's back) survives a commit.
    h.device
        .with_runtime(|rt: &mut dyn p4_target::runtime::RuntimeApi| {
            rt.table_insert(
                T_QOS,
                p4_target::runtime::TableEntry {
                    matches: vec![Some(p4_target::runtime::FieldMatch::Exact(46))],
                    priority: 0,
                    action: p4_target::runtime::EntryAction::Direct(
                        p4_target::runtime::ActionCall::new(SET_PRIO, &[5]),
                    ),
                    metadata: vec![],
                },
            )
        })
        .await
        .unwrap()
        .unwrap();
    let set = |action: Action,
               p4info: Option<proto::p4::config::v1::P4Info>,
               cookie: u64,
               c: &Controller| pb::SetForwardingPipelineConfigRequest {
        device_id: DEVICE,
        election_id: Some(u128_wire(c.election_id)),
        action: action as i32,
        config: Some(pb::ForwardingPipelineConfig {
            p4info,
            p4_device_config: vec![],
            cookie: Some(pb::forwarding_pipeline_config::Cookie { cookie }),
        }),
        ..Default::default()
    };
    c.client
        .set_forwarding_pipeline_config(set(Action::VerifyAndCommit, Some(ours.clone()), 42, &c))
        .await
        .unwrap();
    assert!(
        lpm_entries(&mut c).await.is_empty(),
        "commit clears the state"
    );
    let qos = read(
        &mut c.client,
        vec![E::TableEntry(pb::TableEntry {
            table_id: T_QOS,
            ..Default::default()
        })],
    )
    .await
    .unwrap();
    assert_eq!(
        qos.len(),
        1,
        "fabric-owned entries are not P4Runtime's to clear"
    );

    // VERIFY changes nothing; RECONCILE_AND_COMMIT keeps the state and takes the cookie.
    write(&mut c, vec![insert(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .unwrap();
    c.client
        .set_forwarding_pipeline_config(set(Action::Verify, Some(ours.clone()), 7, &c))
        .await
        .unwrap();
    assert_eq!(
        get(&mut c.client, ResponseType::CookieOnly)
            .await
            .cookie
            .map(|c| c.cookie),
        Some(42)
    );
    c.client
        .set_forwarding_pipeline_config(set(Action::ReconcileAndCommit, Some(ours.clone()), 41, &c))
        .await
        .unwrap();
    assert_eq!(lpm_entries(&mut c).await.len(), 1);
    assert_eq!(
        get(&mut c.client, ResponseType::CookieOnly)
            .await
            .cookie
            .map(|c| c.cookie),
        Some(41)
    );
    c.client
        .set_forwarding_pipeline_config(set(Action::VerifyAndCommit, Some(ours.clone()), 42, &c))
        .await
        .unwrap();
    let cfg = get(&mut c.client, ResponseType::CookieOnly).await;
    assert_eq!(cfg.cookie.map(|c| c.cookie), Some(42));
    assert_eq!(cfg.p4info, None);

    let mut other = ours.clone();
    other.tables[0].preamble.as_mut().unwrap().name = "MyIngress.routes".into();
    other.actions.pop();
    let err = c
        .client
        .set_forwarding_pipeline_config(set(Action::VerifyAndCommit, Some(other), 43, &c))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("MyIngress.routes") && err.message().contains("set_prio"),
        "{}",
        err.message()
    );
    assert_eq!(
        get(&mut c.client, ResponseType::CookieOnly)
            .await
            .cookie
            .map(|c| c.cookie),
        Some(42)
    );

    let err = c
        .client
        .set_forwarding_pipeline_config(set(Action::Commit, None, 0, &c))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "§14: no saved config");
    c.client
        .set_forwarding_pipeline_config(set(Action::VerifyAndSave, Some(ours.clone()), 44, &c))
        .await
        .unwrap();
    c.client
        .set_forwarding_pipeline_config(set(Action::Commit, None, 0, &c))
        .await
        .unwrap();
    assert_eq!(
        get(&mut c.client, ResponseType::All)
            .await
            .cookie
            .map(|c| c.cookie),
        Some(44)
    );

    // Only the primary may set the pipeline.
    let (mut backup, _) = open_stream(&h, DEVICE, Some(0)).await;
    backup.election_id = 0;
    let mut req = set(Action::VerifyAndCommit, Some(ours), 1, &backup);
    req.election_id = None;
    assert_eq!(
        backup
            .client
            .set_forwarding_pipeline_config(req)
            .await
            .unwrap_err()
            .code(),
        Code::PermissionDenied
    );
}

#[tokio::test]
async fn capabilities_answers_for_the_default_device_with_semver() {
    let h = Harness::start().await;
    let mut client = h.client().await;
    for device_id in [0, DEVICE] {
        let v = client
            .capabilities(pb::CapabilitiesRequest { device_id })
            .await
            .unwrap()
            .into_inner()
            .p4runtime_api_version;
        let parts: Vec<u32> = v.split('.').map(|p| p.parse().unwrap()).collect();
        assert_eq!(parts.len(), 3, "{v}");
    }
    assert_eq!(
        client
            .capabilities(pb::CapabilitiesRequest { device_id: 5 })
            .await
            .unwrap_err()
            .code(),
        Code::NotFound
    );
}

// ---- packet I/O -------------------------------------------------------------------------

#[tokio::test]
async fn packet_out_reaches_the_device_and_packet_in_reaches_the_primary() {
    let h = Harness::start().await;
    let mut c = primary(&h, 1).await;
    let po = pb::PacketOut {
        payload: vec![0xde, 0xad],
        metadata: vec![
            pb::PacketMetadata {
                metadata_id: 1,
                value: vec![0, 5],
            },
            pb::PacketMetadata {
                metadata_id: 2,
                value: vec![0],
            },
        ],
    };
    c.tx.send(pb::StreamMessageRequest {
        update: Some(pb::stream_message_request::Update::Packet(po)),
    })
    .await
    .unwrap();
    let mut frames = Vec::new();
    for _ in 0..100 {
        frames = h.device.take_packets_out();
        if !frames.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // Port 5 in 9 bits + 7 pad bits = 0000_0010 1000_0000.
    assert_eq!(frames, vec![vec![0x02, 0x80, 0xde, 0xad]]);

    // A bad packet-out gets a StreamError naming the field, the stream stays open.
    let bad = pb::PacketOut {
        payload: vec![1],
        metadata: vec![pb::PacketMetadata {
            metadata_id: 9,
            value: vec![1],
        }],
    };
    c.tx.send(pb::StreamMessageRequest {
        update: Some(pb::stream_message_request::Update::Packet(bad)),
    })
    .await
    .unwrap();
    let msg = tokio::time::timeout(std::time::Duration::from_secs(5), c.rx.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let Some(pb::stream_message_response::Update::Error(e)) = msg.update else {
        panic!("{msg:?}")
    };
    assert_eq!(Code::from(e.canonical_code), Code::InvalidArgument);
    assert!(e.message.contains("metadata_id"), "{}", e.message);

    h.device.inject_packet_in(vec![0x00, 0x80, 0xbe, 0xef]);
    let msg = tokio::time::timeout(std::time::Duration::from_secs(5), c.rx.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let Some(pb::stream_message_response::Update::Packet(pi)) = msg.update else {
        panic!("{msg:?}")
    };
    assert_eq!(pi.payload, vec![0xbe, 0xef]);
    assert_eq!(
        pi.metadata[0],
        pb::PacketMetadata {
            metadata_id: 1,
            value: vec![1]
        }
    );
}

#[tokio::test]
async fn finsy_delete_all_sequence_succeeds() {
    // finsy 0.30 `Switch.delete_all()`: wildcard read of table entries and
    // PRE, DELETE everything outside const tables, MODIFY-reset the default
    // of every table without a const default that is not indirect, then
    // delete groups and members. With the default (shared) policy the
    // default role may reset the fabric-owned table's default too.
    let h = Harness::start().await;
    let mut c = primary(&h, 10).await;
    let mem = update(
        U::Insert,
        E::ActionProfileMember(pb::ActionProfileMember {
            action_profile_id: P_ECMP,
            member_id: 1,
            action: Some(action(SET_NHOP, &[(1, &[1]), (2, &[1])])),
        }),
    );
    let mut d = entry(T_LPM, vec![], direct(action(SET_PORT, &[(1, &[3])])), 0);
    d.is_default_action = true;
    write(
        &mut c,
        vec![
            insert(route([10, 0, 0, 0], 8, &[1])),
            mem,
            insert(entry(
                T_ECMP,
                vec![exact(1, &[1])],
                Some(pb::TableAction {
                    r#type: Some(pb::table_action::Type::ActionProfileMemberId(1)),
                }),
                0,
            )),
            modify(d),
        ],
    )
    .await
    .unwrap();

    let found =
        read(
            &mut c.client,
            vec![
                E::TableEntry(Default::default()),
                E::PacketReplicationEngineEntry(pb::PacketReplicationEngineEntry {
                    r#type: Some(
                        pb::packet_replication_engine_entry::Type::MulticastGroupEntry(
                            Default::default(),
                        ),
                    ),
                }),
                E::PacketReplicationEngineEntry(pb::PacketReplicationEngineEntry {
                    r#type: Some(
                        pb::packet_replication_engine_entry::Type::CloneSessionEntry(
                            Default::default(),
                        ),
                    ),
                }),
            ],
        )
        .await
        .unwrap();
    let deletes: Vec<pb::Update> = found
        .into_iter()
        .filter_map(|e| match e.entity {
            Some(E::TableEntry(t)) if t.table_id != T_CONST => Some(delete(t)),
            _ => None,
        })
        .collect();
    assert_eq!(deletes.len(), 2);
    write(&mut c, deletes).await.unwrap();
    let resets: Vec<pb::Update> = PROGRAM
        .tables
        .iter()
        .filter(|t| !t.default_is_const && t.implementation.is_none())
        .map(|t| {
            let mut e = entry(t.id, vec![], None, 0);
            e.is_default_action = true;
            modify(e)
        })
        .collect();
    assert_eq!(resets.len(), 3, "lpm, acl and the fabric-owned table");
    write(&mut c, resets).await.unwrap();
    let profiles = read(
        &mut c.client,
        vec![
            E::ActionProfileGroup(Default::default()),
            E::ActionProfileMember(Default::default()),
        ],
    )
    .await
    .unwrap();
    let deletes: Vec<pb::Update> = profiles
        .into_iter()
        .map(|e| pb::Update {
            r#type: U::Delete as i32,
            entity: Some(e),
        })
        .collect();
    assert_eq!(deletes.len(), 1);
    write(&mut c, deletes).await.unwrap();

    let left = read(&mut c.client, vec![E::TableEntry(Default::default())])
        .await
        .unwrap();
    assert_eq!(left.len(), 1, "only the const table's entry remains");
    let default = read(
        &mut c.client,
        vec![E::TableEntry(pb::TableEntry {
            table_id: T_LPM,
            is_default_action: true,
            ..Default::default()
        })],
    )
    .await
    .unwrap();
    let Some(E::TableEntry(d)) = &default[0].entity else {
        panic!()
    };
    assert_eq!(d.action, direct(action(DROP, &[])));
}
