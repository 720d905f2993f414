//! Property: random, mostly malformed Write requests never crash the server
//! (every answer is OK or the spec's UNKNOWN-with-details, never
//! INTERNAL/UNAVAILABLE), and an all-or-nothing batch that contains an
//! invalid update never changes the switch's state.

mod common;

use common::*;
use pb::entity::Entity as E;
use pb::field_match::FieldMatchType as F;
use pb::write_request::Atomicity;
use proptest::prelude::*;
use prost::Message;
use proto::p4::v1 as pb;
use tonic::Code;

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop_oneof![Just(0u8), Just(0xffu8), any::<u8>()], 0..6)
}

fn field_match() -> impl Strategy<Value = pb::FieldMatch> {
    let ty = prop_oneof![
        bytes().prop_map(|value| F::Exact(pb::field_match::Exact { value })),
        (bytes(), bytes())
            .prop_map(|(value, mask)| F::Ternary(pb::field_match::Ternary { value, mask })),
        (bytes(), -2i32..40)
            .prop_map(|(value, prefix_len)| F::Lpm(pb::field_match::Lpm { value, prefix_len })),
        (bytes(), bytes()).prop_map(|(low, high)| F::Range(pb::field_match::Range { low, high })),
        bytes().prop_map(|value| F::Optional(pb::field_match::Optional { value })),
    ];
    (0u32..4, prop::option::weighted(0.95, ty)).prop_map(|(field_id, t)| pb::FieldMatch {
        field_id,
        field_match_type: t,
    })
}

fn id(known: &'static [u32]) -> impl Strategy<Value = u32> {
    prop_oneof![4 => prop::sample::select(known), 1 => any::<u32>()]
}

fn act() -> impl Strategy<Value = pb::Action> {
    (
        id(&[NO_ACTION, SET_PORT, DROP, SET_NHOP, SET_PRIO]),
        prop::collection::vec((0u32..4, bytes()), 0..3),
    )
        .prop_map(|(action_id, ps)| pb::Action {
            action_id,
            params: ps
                .into_iter()
                .map(|(param_id, value)| pb::action::Param { param_id, value })
                .collect(),
        })
}

fn table_action() -> impl Strategy<Value = Option<pb::TableAction>> {
    use pb::table_action::Type;
    prop::option::weighted(
        0.9,
        prop_oneof![
            4 => act().prop_map(Type::Action),
            1 => (0u32..4).prop_map(Type::ActionProfileMemberId),
            1 => (0u32..4).prop_map(Type::ActionProfileGroupId),
        ]
        .prop_map(|t| pb::TableAction { r#type: Some(t) }),
    )
}

fn entity() -> impl Strategy<Value = E> {
    prop_oneof![
        6 => (
            id(&[T_LPM, T_ACL, T_ECMP, T_QOS, T_CONST]),
            prop::collection::vec(field_match(), 0..3),
            table_action(),
            -2i32..20,
            prop::bool::weighted(0.15),
            prop::option::weighted(0.1, (any::<i64>(), any::<i64>())),
        )
            .prop_map(|(table_id, m, a, priority, is_default_action, cd)| {
                E::TableEntry(pb::TableEntry {
                    table_id,
                    r#match: m,
                    action: a,
                    priority,
                    is_default_action,
                    counter_data: cd.map(|(b, p)| pb::CounterData { byte_count: b, packet_count: p }),
                    ..Default::default()
                })
            }),
        1 => (id(&[P_ECMP]), 0u32..4, prop::option::of(act())).prop_map(|(p, m, a)| {
            E::ActionProfileMember(pb::ActionProfileMember { action_profile_id: p, member_id: m, action: a })
        }),
        1 => (id(&[P_ECMP]), 0u32..4, prop::collection::vec((0u32..4, -2i32..4), 0..3)).prop_map(|(p, g, ms)| {
            E::ActionProfileGroup(pb::ActionProfileGroup {
                action_profile_id: p,
                group_id: g,
                members: ms
                    .into_iter()
                    .map(|(member_id, weight)| pb::action_profile_group::Member { member_id, weight, ..Default::default() })
                    .collect(),
                max_size: 0,
            })
        }),
        1 => (id(&[C_PORT, C_LPM]), prop::option::of(-2i64..10)).prop_map(|(c, i)| {
            E::CounterEntry(pb::CounterEntry {
                counter_id: c,
                index: i.map(|index| pb::Index { index }),
                data: Some(pb::CounterData { byte_count: 5, packet_count: 1 }),
            })
        }),
        1 => (id(&[R_SEEN]), prop::option::of(-2i64..6), bytes()).prop_map(|(r, i, v)| {
            E::RegisterEntry(pb::RegisterEntry {
                register_id: r,
                index: i.map(|index| pb::Index { index }),
                data: Some(pb::P4Data { data: Some(pb::p4_data::Data::Bitstring(v)) }),
            })
        }),
    ]
}

fn updates() -> impl Strategy<Value = Vec<pb::Update>> {
    prop::collection::vec(
        (0i32..5, prop::option::weighted(0.95, entity())).prop_map(|(t, e)| pb::Update {
            r#type: t,
            entity: e.map(|e| pb::Entity { entity: Some(e) }),
        }),
        0..5,
    )
}

struct Fixture {
    rt: tokio::runtime::Runtime,
    harness: Harness,
    ctl: std::cell::RefCell<Controller>,
}

fn fixture() -> Fixture {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let harness = rt.block_on(Harness::start());
    let mut ctl = rt.block_on(primary(&harness, 1));
    // Some state for the batches to (not) disturb.
    rt.block_on(write(
        &mut ctl,
        vec![
            insert(route([10, 0, 0, 0], 8, &[1])),
            update(
                pb::update::Type::Insert,
                E::ActionProfileMember(pb::ActionProfileMember {
                    action_profile_id: P_ECMP,
                    member_id: 1,
                    action: Some(action(SET_NHOP, &[(1, &[1]), (2, &[1])])),
                }),
            ),
        ],
    ))
    .unwrap();
    Fixture {
        rt,
        harness,
        ctl: std::cell::RefCell::new(ctl),
    }
}

fn never_internal(status: &tonic::Status) {
    assert!(
        !matches!(status.code(), Code::Internal | Code::Unavailable | Code::Cancelled | Code::Unknown if status.details().is_empty()),
        "server failure: {status:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn all_or_nothing_batches_with_an_invalid_update_change_nothing(mut ups in updates(), atomic in prop::bool::ANY) {
        thread_local!(static FX: Fixture = fixture());
        FX.with(|fx| {
            let mut ctl = fx.ctl.borrow_mut();
            let before = fx.rt.block_on(snapshot(&mut ctl.client));
            ups.push(insert(entry(0x0200_0abc, vec![], None, 0)));
            let n = ups.len();
            let mode = if atomic { Atomicity::DataplaneAtomic } else { Atomicity::RollbackOnError };
            let req = write_request(&ctl, ups, mode);
            let err = fx.rt.block_on(ctl.client.write(req)).expect_err("batch has an invalid update");
            never_internal(&err);
            let errs = update_errors(&err);
            prop_assert_eq!(errs.len(), n);
            prop_assert!(errs.iter().all(|(c, _)| *c != 0), "no update reported OK in a refused batch");
            let after = fx.rt.block_on(snapshot(&mut ctl.client));
            prop_assert_eq!(after, before);
            Ok(())
        })?;
    }

    #[test]
    fn continue_on_error_batches_get_well_formed_answers(ups in updates()) {
        thread_local!(static FX: Fixture = fixture());
        FX.with(|fx| {
            let mut ctl = fx.ctl.borrow_mut();
            let n = ups.len();
            let req = write_request(&ctl, ups, Atomicity::ContinueOnError);
            match fx.rt.block_on(ctl.client.write(req)) {
                Ok(_) => {}
                Err(status) => {
                    never_internal(&status);
                    prop_assert_eq!(update_errors(&status).len(), n);
                }
            }
            // Still serving.
            fx.rt.block_on(snapshot(&mut ctl.client));
            Ok(())
        })?;
    }

    #[test]
    fn arbitrary_bytes_as_write_requests_never_crash(raw in prop::collection::vec(any::<u8>(), 0..200)) {
        thread_local!(static FX: Fixture = fixture());
        FX.with(|fx| {
            let mut ctl = fx.ctl.borrow_mut();
            if let Ok(mut req) = pb::WriteRequest::decode(raw.as_slice()) {
                req.device_id = DEVICE;
                req.election_id = Some(u128_wire(1));
                let before = fx.rt.block_on(snapshot(&mut ctl.client));
                req.updates.push(insert(entry(0x0200_0abc, vec![], None, 0)));
                req.atomicity = Atomicity::RollbackOnError as i32;
                let err = fx.rt.block_on(ctl.client.write(req)).expect_err("invalid update appended");
                never_internal(&err);
                prop_assert_eq!(fx.rt.block_on(snapshot(&mut ctl.client)), before);
            }
            Ok(())
        })?;
    }
}

#[test]
fn the_fixture_harness_is_reachable() {
    let fx = fixture();
    let mut ctl = fx.ctl.borrow_mut();
    assert!(!fx.rt.block_on(snapshot(&mut ctl.client)).is_empty());
    let _ = &fx.harness;
}
