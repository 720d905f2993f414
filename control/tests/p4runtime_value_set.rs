//! Parser value sets over P4Runtime (`ValueSetEntry`): MODIFY replaces the
//! whole member list, reads return it in canonical bytes, and bad requests
//! get their spec codes and change nothing. The program is a parser that
//! accepts a configurable set of tag EtherTypes (a 16-bit set of 4).

mod common;

use common::{Harness, primary, read, update, update_errors, write, write_request};
use control::device::{DeviceExt, LocalDevice};
use p4_target::info::*;
use p4_target::runtime::{Runtime, RuntimeApi};
use pb::entity::Entity as E;
use pb::update::Type as U;
use proto::p4::v1 as pb;
use tonic::Code;

const TAGS: u32 = 0x0300_0001;

const P4INFO: &str = r#"
pkg_info { arch: "v1model" }
value_sets {
  preamble { id: 50331649 name: "MyParser.tag_types" alias: "tag_types" }
  match { id: 1 bitwidth: 16 match_type: EXACT }
  size: 4
}
"#;

static PROGRAM: ProgramInfo = ProgramInfo {
    name: "tags",
    value_sets: &[ValueSetInfo {
        id: TAGS,
        name: "MyParser.tag_types",
        bitwidth: 16,
        size: 4,
        fields: &[],
    }],
    p4info_text: P4INFO,
    ..ProgramInfo::EMPTY
};

fn set(id: u32, members: &[&[u8]]) -> E {
    E::ValueSetEntry(pb::ValueSetEntry {
        value_set_id: id,
        members: members
            .iter()
            .map(|v| pb::ValueSetMember {
                r#match: vec![common::exact(1, v)],
            })
            .collect(),
    })
}

async fn members_in_runtime(h: &Harness) -> Vec<(u128, u128)> {
    h.device
        .with_runtime(|rt: &mut dyn RuntimeApi| rt.value_set_members(TAGS).unwrap())
        .await
        .unwrap()
}

#[tokio::test]
async fn value_sets_are_replaced_read_back_and_validated() {
    let h = Harness::start_on(&PROGRAM, LocalDevice::new(Box::new(Runtime::new(&PROGRAM)))).await;
    let mut c = primary(&h, 1).await;
    let all = || vec![E::ValueSetEntry(pb::ValueSetEntry::default())];
    // An empty set reads back as such.
    assert_eq!(
        read(&mut c.client, all()).await.unwrap()[0].entity,
        Some(set(TAGS, &[]))
    );

    // Padded bytes are accepted and read back canonical.
    write(
        &mut c,
        vec![update(
            U::Modify,
            set(TAGS, &[&[0x81, 0x00], &[0x00, 0x88, 0xa8]]),
        )],
    )
    .await
    .unwrap();
    let want = set(TAGS, &[&[0x81, 0x00], &[0x88, 0xa8]]);
    assert_eq!(
        read(&mut c.client, all()).await.unwrap()[0].entity,
        Some(want.clone())
    );
    assert_eq!(
        members_in_runtime(&h).await,
        vec![(0x8100, 0xffff), (0x88a8, 0xffff)]
    );

    let five: [&[u8]; 5] = [&[1], &[2], &[3], &[4], &[5]];
    let bad_match = E::ValueSetEntry(pb::ValueSetEntry {
        value_set_id: TAGS,
        members: vec![pb::ValueSetMember {
            r#match: vec![common::lpm(1, &[0x81, 0], 8)],
        }],
    });
    for (u, code) in [
        (update(U::Insert, set(TAGS, &[&[1]])), Code::InvalidArgument),
        (update(U::Delete, set(TAGS, &[])), Code::InvalidArgument),
        (
            update(U::Modify, set(0x0300_0009, &[&[1]])),
            Code::InvalidArgument,
        ),
        (update(U::Modify, set(TAGS, &five)), Code::ResourceExhausted),
        (
            update(U::Modify, set(TAGS, &[&[1, 0, 0]])),
            Code::InvalidArgument,
        ),
        // Duplicates, padded or not, are ALREADY_EXISTS (§9.6).
        (
            update(U::Modify, set(TAGS, &[&[7], &[0, 7]])),
            Code::AlreadyExists,
        ),
        (update(U::Modify, bad_match), Code::InvalidArgument),
    ] {
        let status = write(&mut c, vec![u.clone()]).await.unwrap_err();
        assert_eq!(update_errors(&status)[0].0, code as i32, "{u:?}");
    }
    assert_eq!(
        read(&mut c.client, all()).await.unwrap()[0].entity,
        Some(want.clone())
    );

    // All or nothing: a later failing update undoes the replacement.
    let req = write_request(
        &c,
        vec![
            update(U::Modify, set(TAGS, &[&[0x91, 0x00]])),
            update(U::Modify, set(TAGS, &five)),
        ],
        pb::write_request::Atomicity::RollbackOnError,
    );
    assert!(c.client.write(req).await.is_err());
    assert_eq!(
        read(&mut c.client, all()).await.unwrap()[0].entity,
        Some(want)
    );

    // MODIFY with no members empties the set.
    write(&mut c, vec![update(U::Modify, set(TAGS, &[]))])
        .await
        .unwrap();
    assert!(members_in_runtime(&h).await.is_empty());

    // Committing the pipeline again starts from empty sets.
    write(&mut c, vec![update(U::Modify, set(TAGS, &[&[0x81, 0x00]]))])
        .await
        .unwrap();
    use pb::set_forwarding_pipeline_config_request::Action;
    c.client
        .set_forwarding_pipeline_config(pb::SetForwardingPipelineConfigRequest {
            device_id: common::DEVICE,
            election_id: Some(common::u128_wire(c.election_id)),
            action: Action::VerifyAndCommit as i32,
            config: Some(pb::ForwardingPipelineConfig {
                p4info: Some(proto::p4info_from_text(P4INFO).unwrap()),
                p4_device_config: Vec::new(),
                cookie: Some(pb::forwarding_pipeline_config::Cookie { cookie: 1 }),
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(members_in_runtime(&h).await.is_empty());
    let err = read(&mut c.client, vec![set(0x0300_0009, &[])])
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

#[tokio::test]
async fn value_sets_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("tags.p4rt");
    let restored = || async {
        let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
        let svc = common::service(&PROGRAM, device.clone());
        svc.restore(&state).await.unwrap();
        let (addr, server) = common::serve(svc).await;
        (Harness { addr, device }, server)
    };
    let (h, server) = restored().await;
    let mut c = primary(&h, 1).await;
    // Enough rewrites that the journal is compacted into the live state,
    // so the restore below reads the compacted form.
    // The last batch leaves 0x8100 and triggers the compaction.
    for round in 0..9u8 {
        let last: &[u8] = if round == 8 { &[0x81, 0x00] } else { &[round] };
        let churn = (0..1_000)
            .map(|_| update(U::Modify, set(TAGS, &[last])))
            .collect();
        write(&mut c, churn).await.unwrap();
    }
    drop(c);
    server.abort();

    let (h, _server) = restored().await;
    assert_eq!(members_in_runtime(&h).await, vec![(0x8100, 0xffff)]);
}
