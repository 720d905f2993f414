//! Digests over P4Runtime: `DigestEntry` writes and reads with their status
//! codes, and `DigestList`s on the primary's stream — batching, duplicate
//! suppression until `DigestListAck`, nothing for backups or for digests
//! nobody enabled. The program is a learning bridge's `mac_learn_t`
//! (source MAC, ingress port); its digests are injected into a
//! `LocalDevice` as the dataplane would emit them.

mod common;

use std::time::Duration;

use common::{Controller, DEVICE, Harness, primary, read, update_errors, write};
use control::device::{Digest, LocalDevice};
use p4_target::info::*;
use p4_target::runtime::Runtime;
use pb::entity::Entity as E;
use pb::update::Type as U;
use proto::p4::v1 as pb;
use tonic::Code;

const LEARN: u32 = 0x0500_0001;

static LEARN_FIELDS: [MetaFieldInfo; 2] = [
    MetaFieldInfo {
        id: 1,
        name: "src_addr",
        bitwidth: 48,
        signed: false,
    },
    MetaFieldInfo {
        id: 2,
        name: "ingress_port",
        bitwidth: 9,
        signed: false,
    },
];

const P4INFO: &str = r#"
pkg_info { arch: "v1model" }
digests {
  preamble { id: 83886081 name: "mac_learn_t" alias: "mac_learn_t" }
  type_spec { struct { name: "mac_learn_t" } }
}
type_info {
  structs {
    key: "mac_learn_t"
    value {
      members { name: "src_addr" type_spec { bitstring { bit { bitwidth: 48 } } } }
      members { name: "ingress_port" type_spec { bitstring { bit { bitwidth: 9 } } } }
    }
  }
}
"#;

static PROGRAM: ProgramInfo = ProgramInfo {
    name: "learn",
    digests: &[DigestInfo {
        id: LEARN,
        name: "mac_learn_t",
        fields: &LEARN_FIELDS,
        scalar: false,
    }],
    p4info_text: P4INFO,
    ..ProgramInfo::EMPTY
};

async fn start() -> Harness {
    Harness::start_on(&PROGRAM, LocalDevice::new(Box::new(Runtime::new(&PROGRAM)))).await
}

fn digest_entry(id: u32, timeout_ns: i64, list: i32, ack_ns: i64) -> E {
    E::DigestEntry(pb::DigestEntry {
        digest_id: id,
        config: Some(pb::digest_entry::Config {
            max_timeout_ns: timeout_ns,
            max_list_size: list,
            ack_timeout_ns: ack_ns,
        }),
    })
}

fn upd(ty: U, e: E) -> pb::Update {
    common::update(ty, e)
}

fn learned(mac: u64, port: u16) -> Digest {
    Digest {
        id: LEARN,
        values: vec![u128::from(mac), u128::from(port)],
    }
}

/// The next digest list on `c`'s stream within `wait`.
async fn next_list(c: &mut Controller, wait: Duration) -> Option<pb::DigestList> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let msg = tokio::time::timeout_at(deadline, c.rx.message())
            .await
            .ok()?;
        if let Some(pb::stream_message_response::Update::Digest(l)) =
            msg.unwrap().and_then(|m| m.update)
        {
            return Some(l);
        }
    }
}

/// A list's entries as (MAC bytes, port bytes).
fn entries(l: &pb::DigestList) -> Vec<(Vec<u8>, Vec<u8>)> {
    l.data
        .iter()
        .map(|d| {
            let Some(pb::p4_data::Data::Struct(s)) = &d.data else {
                panic!("digest data is a struct: {d:?}")
            };
            let bits = |i: usize| match &s.members[i].data {
                Some(pb::p4_data::Data::Bitstring(b)) => b.clone(),
                other => panic!("member {i}: {other:?}"),
            };
            (bits(0), bits(1))
        })
        .collect()
}

async fn ack(c: &Controller, l: &pb::DigestList) {
    c.tx.send(pb::StreamMessageRequest {
        update: Some(pb::stream_message_request::Update::DigestAck(
            pb::DigestListAck {
                digest_id: l.digest_id,
                list_id: l.list_id,
            },
        )),
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn digest_entries_are_written_read_and_refused_with_the_right_codes() {
    let h = start().await;
    let mut c = primary(&h, 10).await;
    let all = || vec![E::DigestEntry(pb::DigestEntry::default())];
    assert!(read(&mut c.client, all()).await.unwrap().is_empty());

    write(
        &mut c,
        vec![upd(U::Insert, digest_entry(LEARN, 1_000, 10, 5_000))],
    )
    .await
    .unwrap();
    let got = read(&mut c.client, all()).await.unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].entity, Some(digest_entry(LEARN, 1_000, 10, 5_000)));

    let bad = [
        (
            upd(U::Insert, digest_entry(LEARN, 0, 1, 0)),
            Code::AlreadyExists,
        ),
        (
            upd(U::Insert, digest_entry(0x0500_0009, 0, 1, 0)),
            Code::InvalidArgument,
        ),
        (
            upd(U::Modify, digest_entry(LEARN, -5, 1, 0)),
            Code::InvalidArgument,
        ),
        (
            upd(U::Modify, digest_entry(LEARN, 0, -1, 0)),
            Code::InvalidArgument,
        ),
        (
            upd(
                U::Modify,
                E::DigestEntry(pb::DigestEntry {
                    digest_id: LEARN,
                    config: None,
                }),
            ),
            Code::InvalidArgument,
        ),
    ];
    for (u, code) in bad {
        let status = write(&mut c, vec![u.clone()]).await.unwrap_err();
        let errs = update_errors(&status);
        assert_eq!(errs[0].0, code as i32, "{u:?}: {errs:?}");
    }
    // Nothing changed.
    let after = read(&mut c.client, all()).await.unwrap();
    assert_eq!(after, got);

    write(&mut c, vec![upd(U::Modify, digest_entry(LEARN, 0, 1, 0))])
        .await
        .unwrap();
    let got = read(&mut c.client, vec![digest_entry(LEARN, 0, 0, 0)])
        .await
        .unwrap();
    assert_eq!(got[0].entity, Some(digest_entry(LEARN, 0, 1, 0)));
    write(&mut c, vec![upd(U::Delete, digest_entry(LEARN, 0, 0, 0))])
        .await
        .unwrap();
    assert!(read(&mut c.client, all()).await.unwrap().is_empty());
    let status = write(&mut c, vec![upd(U::Delete, digest_entry(LEARN, 0, 0, 0))])
        .await
        .unwrap_err();
    assert_eq!(update_errors(&status)[0].0, Code::NotFound as i32);
    let err = read(&mut c.client, vec![digest_entry(0x0500_0009, 0, 0, 0)])
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

#[tokio::test]
async fn the_primary_gets_lists_and_repeats_wait_for_the_ack() {
    let h = start().await;
    let mut c = primary(&h, 10).await;
    let mut backup = common::open_stream(&h, DEVICE, Some(5)).await.0;

    // Not enabled yet: the dataplane's digests go nowhere.
    h.device.inject_digest(learned(0x0200_0000_000a, 3));
    assert!(
        next_list(&mut c, Duration::from_millis(200))
            .await
            .is_none()
    );

    let ack_timeout_ns = 60_000_000_000; // a minute: only an ack re-arms
    write(
        &mut c,
        vec![upd(U::Insert, digest_entry(LEARN, 0, 1, ack_timeout_ns))],
    )
    .await
    .unwrap();
    h.device.inject_digest(learned(0x0200_0000_000a, 3));
    let first = next_list(&mut c, Duration::from_secs(5))
        .await
        .expect("a list");
    assert_eq!((first.digest_id, first.list_id), (LEARN, 1));
    assert_eq!(entries(&first), vec![(vec![2, 0, 0, 0, 0, 0x0a], vec![3])]);
    assert!(first.timestamp > 0);

    // The unknown MAC keeps arriving until the controller acts: one report.
    h.device.inject_digest(learned(0x0200_0000_000a, 3));
    assert!(
        next_list(&mut c, Duration::from_millis(200))
            .await
            .is_none()
    );
    // Other data is not held back.
    h.device.inject_digest(learned(0x0200_0000_000b, 4));
    let second = next_list(&mut c, Duration::from_secs(5)).await.unwrap();
    assert_eq!(
        (second.list_id, entries(&second)[0].1.clone()),
        (2, vec![4])
    );

    // After the ack the same data is reported again.
    ack(&c, &first).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    h.device.inject_digest(learned(0x0200_0000_000a, 3));
    let third = next_list(&mut c, Duration::from_secs(5)).await.unwrap();
    assert_eq!(third.list_id, 3);

    // Backups never see digests.
    assert!(
        next_list(&mut backup, Duration::from_millis(100))
            .await
            .is_none()
    );
}

#[tokio::test]
async fn digests_are_batched_up_to_max_timeout() {
    let h = start().await;
    let mut c = primary(&h, 10).await;
    write(
        &mut c,
        vec![upd(
            U::Insert,
            digest_entry(LEARN, 300_000_000, 100, 1_000_000_000),
        )],
    )
    .await
    .unwrap();
    let t0 = tokio::time::Instant::now();
    for mac in 1..=5u64 {
        h.device.inject_digest(learned(mac, 1));
    }
    let l = next_list(&mut c, Duration::from_secs(5)).await.unwrap();
    assert_eq!(l.data.len(), 5, "one list for the burst");
    assert!(
        t0.elapsed() >= Duration::from_millis(250),
        "held for max_timeout_ns"
    );
}

#[tokio::test]
async fn digest_configs_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("learn.p4rt");
    let restored = || async {
        let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
        let svc = common::service(&PROGRAM, device.clone());
        svc.restore(&state).await.unwrap();
        let (addr, server) = common::serve(svc).await;
        (Harness { addr, device }, server)
    };
    let (h, server) = restored().await;
    let mut c = primary(&h, 10).await;
    write(
        &mut c,
        vec![upd(U::Insert, digest_entry(LEARN, 0, 1, 1_000))],
    )
    .await
    .unwrap();
    // Enough rewrites that the journal is compacted into the live state,
    // so the restore below reads the compacted form.
    for round in 0..9 {
        let churn = (0..1_000)
            .map(|_| upd(U::Modify, digest_entry(LEARN, round, 1, 1_000)))
            .collect();
        write(&mut c, churn).await.unwrap();
    }
    write(
        &mut c,
        vec![upd(U::Modify, digest_entry(LEARN, 0, 1, 1_000))],
    )
    .await
    .unwrap();
    drop(c);
    server.abort();

    let (h, _server) = restored().await;
    let mut c = primary(&h, 10).await;
    let got = read(
        &mut c.client,
        vec![E::DigestEntry(pb::DigestEntry::default())],
    )
    .await
    .unwrap();
    assert_eq!(got[0].entity, Some(digest_entry(LEARN, 0, 1, 1_000)));
    // And it is live: the stream reports.
    h.device.inject_digest(learned(0x0200_0000_000c, 1));
    assert!(next_list(&mut c, Duration::from_secs(5)).await.is_some());
}
