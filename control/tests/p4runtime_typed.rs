//! P4Runtime values whose P4Info type is more than one `bit<W>`: an
//! `int<W>` register carries two's complement bytes (§8.4, §9.7), and a
//! value set over a struct takes one EXACT `FieldMatch` per member (§9.6),
//! concatenated first-member-high into what the parser compares.

mod common;

use common::{Harness, primary, read, update, update_errors, write};
use control::device::{DeviceExt, LocalDevice};
use p4_target::info::*;
use p4_target::runtime::{Runtime, RuntimeApi};
use pb::entity::Entity as E;
use pb::update::Type as U;
use proto::p4::v1 as pb;
use tonic::Code;

const ACC: u32 = 0x1600_0001;
const WIDE: u32 = 0x1600_0002;
const PAIRS: u32 = 0x0300_0001;

const P4INFO: &str = r#"
pkg_info { arch: "v1model" }
value_sets {
  preamble { id: 50331649 name: "P.pairs" alias: "pairs" }
  match { id: 1 name: "kind" bitwidth: 8 match_type: EXACT }
  match { id: 2 name: "inner.sub" bitwidth: 4 match_type: EXACT }
  size: 3
}
registers {
  preamble { id: 369098753 name: "I.acc" alias: "acc" }
  type_spec { bitstring { int { bitwidth: 8 } } }
  size: 2
}
registers {
  preamble { id: 369098754 name: "I.wide" alias: "wide" }
  type_spec { bitstring { int { bitwidth: 12 } } }
  size: 1
}
"#;

static PROGRAM: ProgramInfo = ProgramInfo {
    name: "typed",
    registers: &[
        RegisterInfo {
            id: ACC,
            name: "I.acc",
            bitwidth: 8,
            signed: true,
            size: 2,
        },
        RegisterInfo {
            id: WIDE,
            name: "I.wide",
            bitwidth: 12,
            signed: true,
            size: 1,
        },
    ],
    value_sets: &[ValueSetInfo {
        id: PAIRS,
        name: "P.pairs",
        bitwidth: 12,
        size: 3,
        fields: &[
            MetaFieldInfo {
                id: 1,
                name: "kind",
                bitwidth: 8,
                signed: false,
            },
            MetaFieldInfo {
                id: 2,
                name: "inner.sub",
                bitwidth: 4,
                signed: false,
            },
        ],
    }],
    p4info_text: P4INFO,
    ..ProgramInfo::EMPTY
};

fn register(id: u32, index: i64, data: &[u8]) -> E {
    E::RegisterEntry(pb::RegisterEntry {
        register_id: id,
        index: Some(pb::Index { index }),
        data: Some(pb::P4Data {
            data: Some(pb::p4_data::Data::Bitstring(data.to_vec())),
        }),
    })
}

fn cell_bytes(e: &pb::Entity) -> Vec<u8> {
    match &e.entity {
        Some(E::RegisterEntry(r)) => match r.data.as_ref().and_then(|d| d.data.as_ref()) {
            Some(pb::p4_data::Data::Bitstring(b)) => b.clone(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

async fn cells(h: &Harness) -> (u128, u128, u128) {
    h.device
        .with_runtime(|rt: &mut dyn RuntimeApi| {
            (
                rt.register_read(ACC, 0).unwrap(),
                rt.register_read(ACC, 1).unwrap(),
                rt.register_read(WIDE, 0).unwrap(),
            )
        })
        .await
        .unwrap()
}

async fn start() -> Harness {
    Harness::start_on(&PROGRAM, LocalDevice::new(Box::new(Runtime::new(&PROGRAM)))).await
}

#[tokio::test]
async fn s8_4_signed_register_cells_travel_in_twos_complement() {
    let h = start().await;
    let mut c = primary(&h, 1).await;
    // -1 sign-extended to three bytes, +127 with a leading zero, and -2048
    // (the most negative int<12>) in two bytes.
    write(
        &mut c,
        vec![
            update(U::Modify, register(ACC, 0, &[0xff, 0xff, 0xff])),
            update(U::Modify, register(ACC, 1, &[0x00, 0x7f])),
            update(U::Modify, register(WIDE, 0, &[0xf8, 0x00])),
        ],
    )
    .await
    .unwrap();
    assert_eq!(cells(&h).await, (0xff, 0x7f, 0x800));
    // Read back canonical: the shortest string that sign-extends to the value.
    let req = vec![E::RegisterEntry(pb::RegisterEntry::default())];
    let bytes: Vec<Vec<u8>> = read(&mut c.client, req)
        .await
        .unwrap()
        .iter()
        .map(cell_bytes)
        .collect();
    assert_eq!(bytes, vec![vec![0xff], vec![0x7f], vec![0xf8, 0x00]]);

    // +128 and -129 are outside int<8>, and +2048 outside int<12>: OUT_OF_RANGE,
    // the cell unchanged. (0x80 alone is -128, in range.)
    for (id, data) in [
        (ACC, vec![0x00, 0x80]),
        (ACC, vec![0xff, 0x7f]),
        (WIDE, vec![0x08, 0x00]),
    ] {
        let status = write(&mut c, vec![update(U::Modify, register(id, 0, &data))])
            .await
            .unwrap_err();
        assert_eq!(
            update_errors(&status)[0].0,
            Code::OutOfRange as i32,
            "{data:x?}"
        );
    }
    write(&mut c, vec![update(U::Modify, register(ACC, 0, &[0x80]))])
        .await
        .unwrap();
    assert_eq!(cells(&h).await, (0x80, 0x7f, 0x800));
}

fn member(fields: &[(u32, &[u8])]) -> pb::ValueSetMember {
    pb::ValueSetMember {
        r#match: fields.iter().map(|(id, v)| common::exact(*id, v)).collect(),
    }
}

fn set(members: Vec<pb::ValueSetMember>) -> E {
    E::ValueSetEntry(pb::ValueSetEntry {
        value_set_id: PAIRS,
        members,
    })
}

#[tokio::test]
async fn s9_6_struct_value_set_members_have_one_field_per_struct_member() {
    let h = start().await;
    let mut c = primary(&h, 1).await;
    // Fields in any order, padded or not.
    write(
        &mut c,
        vec![update(
            U::Modify,
            set(vec![
                member(&[(1, &[0x0a]), (2, &[0x0b])]),
                member(&[(2, &[0x00, 0x01]), (1, &[0x0c])]),
            ]),
        )],
    )
    .await
    .unwrap();
    let in_runtime = h
        .device
        .with_runtime(|rt: &mut dyn RuntimeApi| rt.value_set_members(PAIRS).unwrap())
        .await
        .unwrap();
    assert_eq!(in_runtime, vec![(0x0ab, 0xfff), (0x0c1, 0xfff)]);
    // Read back field by field, in P4Info order, canonical.
    let got = read(
        &mut c.client,
        vec![E::ValueSetEntry(pb::ValueSetEntry::default())],
    )
    .await
    .unwrap();
    assert_eq!(
        got[0].entity,
        Some(set(vec![
            member(&[(1, &[0x0a]), (2, &[0x0b])]),
            member(&[(1, &[0x0c]), (2, &[0x01])]),
        ]))
    );

    for (bad, why) in [
        (member(&[(1, &[0x0a])]), "a member missing"),
        (member(&[(1, &[0x0a]), (1, &[0x0b])]), "a field twice"),
        (member(&[(1, &[0x0a]), (3, &[0x0b])]), "an unknown field id"),
        (
            member(&[(1, &[0x0a]), (2, &[0x10])]),
            "wider than inner.sub's 4 bits",
        ),
        (
            member(&[(1, &[0x0a]), (2, &[0x0b]), (3, &[1])]),
            "one field too many",
        ),
    ] {
        let status = write(&mut c, vec![update(U::Modify, set(vec![bad]))])
            .await
            .unwrap_err();
        assert_eq!(
            update_errors(&status)[0].0,
            Code::InvalidArgument as i32,
            "{why}"
        );
    }
    // The same member twice, fields in another order: ALREADY_EXISTS.
    let status = write(
        &mut c,
        vec![update(
            U::Modify,
            set(vec![
                member(&[(1, &[0x0a]), (2, &[0x0b])]),
                member(&[(2, &[0x0b]), (1, &[0x0a])]),
            ]),
        )],
    )
    .await
    .unwrap_err();
    assert_eq!(update_errors(&status)[0].0, Code::AlreadyExists as i32);
}
