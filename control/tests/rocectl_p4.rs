//! `rocectl table` and `rocectl counter` against an in-process P4Runtime
//! server (the shared fixture program): names resolve against the P4Info,
//! values parse by match kind, writes go through arbitration, and what the
//! tool writes is what the server holds.

mod common;
mod fabric_harness;

use std::process::Output;

use common::*;
use fabric_harness::rocectl;
use proto::p4::v1 as pb;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

async fn entries(h: &Harness, table_id: u32) -> Vec<pb::TableEntry> {
    let mut c = h.client().await;
    read(
        &mut c,
        vec![pb::entity::Entity::TableEntry(pb::TableEntry {
            table_id,
            ..Default::default()
        })],
    )
    .await
    .unwrap()
    .into_iter()
    .filter_map(|e| match e.entity {
        Some(pb::entity::Entity::TableEntry(t)) if !t.is_default_action => Some(t),
        _ => None,
    })
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lpm_entry_add_list_modify_delete_by_name() {
    let h = Harness::start().await;
    let addr = h.addr.to_string();

    let out = rocectl(
        addr.clone(),
        &[
            "table",
            "add",
            "ipv4_lpm",
            "10.0.0.9/24",
            "set_nhop",
            "00:11:22:33:44:55",
            "3",
        ],
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let got = entries(&h, T_LPM).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].r#match, vec![lpm(1, &[10, 0, 0, 0], 24)]);
    assert_eq!(
        got[0].action,
        direct(action(
            SET_NHOP,
            &[(1, &[0x11, 0x22, 0x33, 0x44, 0x55]), (2, &[3])]
        ))
    );

    let out = rocectl(addr.clone(), &["table", "list", "MyIngress.ipv4_lpm"]).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        stdout(&out).trim(),
        "10.0.0.0/24 MyIngress.set_nhop 00:11:22:33:44:55 3"
    );

    let out = rocectl(
        addr.clone(),
        &[
            "table",
            "modify",
            "ipv4_lpm",
            "10.0.0.0/24",
            "set_port",
            "0x7",
        ],
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let got = entries(&h, T_LPM).await;
    assert_eq!(got[0].action, direct(action(SET_PORT, &[(1, &[7])])));

    // Inserting the same key twice is the server's refusal: exit 1.
    let out = rocectl(
        addr.clone(),
        &["table", "add", "ipv4_lpm", "10.0.0.0/24", "set_port", "1"],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");

    let out = rocectl(
        addr.clone(),
        &["table", "delete", "ipv4_lpm", "10.0.0.0/24"],
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    assert!(entries(&h, T_LPM).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ternary_and_range_entry_needs_priority_and_lists_back() {
    let h = Harness::start().await;
    let addr = h.addr.to_string();
    let add = ["table", "add", "acl", "0x06&&&0xff", "1000..2000", "drop"];

    let out = rocectl(addr.clone(), &add).await;
    assert_eq!(out.status.code(), Some(2), "no priority: refused locally");
    assert!(stderr(&out).contains("--priority"), "{}", stderr(&out));
    assert!(entries(&h, T_ACL).await.is_empty());

    let mut with_prio = add.to_vec();
    with_prio.extend(["--priority", "10"]);
    let out = rocectl(addr.clone(), &with_prio).await;
    assert!(out.status.success(), "{out:?}");
    let got = entries(&h, T_ACL).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].priority, 10);
    assert_eq!(
        got[0].r#match,
        vec![
            ternary(1, &[6], &[0xff]),
            range(2, &[0x03, 0xe8], &[0x07, 0xd0])
        ]
    );

    // A don't-care range is left out of the entry.
    let out = rocectl(
        addr.clone(),
        &[
            "table",
            "add",
            "acl",
            "17",
            "*",
            "NoAction",
            "--priority",
            "5",
        ],
    )
    .await;
    assert!(out.status.success(), "{out:?}");

    let out = rocectl(addr.clone(), &["table", "list", "acl"]).await;
    let text = stdout(&out);
    assert!(
        text.contains("0x6&&&0xff 1000..2000 MyIngress.drop --priority 10"),
        "{text}"
    );
    assert!(
        text.contains("0x11&&&0xff * NoAction --priority 5"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_names_and_values_are_input_errors() {
    let h = Harness::start().await;
    let addr = h.addr.to_string();
    let cases: [(&[&str], &str); 5] = [
        (
            &["table", "add", "nosuch", "1", "drop"],
            "no table named \"nosuch\"",
        ),
        (
            &["table", "add", "ipv4_lpm", "10.0.0.0/24", "set_prio", "1"],
            "no action named \"set_prio\"",
        ),
        (
            &["table", "add", "ipv4_lpm", "10.0.0.0/40", "set_port", "1"],
            "prefix length",
        ),
        (
            &["table", "add", "ipv4_lpm", "10.0.0.0/8", "set_port", "512"],
            "does not fit in 9 bits",
        ),
        (
            &["table", "add", "ipv4_lpm", "10.0.0.0/8", "set_nhop", "1"],
            "takes 2 parameter(s) (dmac port)",
        ),
    ];
    for (args, want) in cases {
        let out = rocectl(addr.clone(), args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
    assert!(entries(&h, T_LPM).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lower_election_id_does_not_write() {
    let h = Harness::start().await;
    let _holder = primary(&h, 10).await;
    let args = [
        "table",
        "add",
        "ipv4_lpm",
        "10.1.0.0/16",
        "set_port",
        "2",
        "--election-id",
        "5",
    ];
    let out = rocectl(h.addr.to_string(), &args).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stderr(&out).contains("not primary"), "{}", stderr(&out));
    assert!(entries(&h, T_LPM).await.is_empty());

    let out = rocectl(h.addr.to_string(), &args[..6]).await;
    assert!(out.status.success(), "default election id is high: {out:?}");
    assert_eq!(entries(&h, T_LPM).await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counter_read_by_name() {
    let h = Harness::start().await;
    {
        let mut c = primary(&h, 10).await;
        write(
            &mut c,
            vec![update(
                pb::update::Type::Modify,
                pb::entity::Entity::CounterEntry(pb::CounterEntry {
                    counter_id: C_PORT,
                    index: Some(pb::Index { index: 2 }),
                    data: Some(pb::CounterData {
                        byte_count: 1500,
                        packet_count: 3,
                    }),
                }),
            )],
        )
        .await
        .unwrap();
    }
    let out = rocectl(
        h.addr.to_string(),
        &["counter", "read", "port_counter", "2"],
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<Vec<String>> = stdout(&out)
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    assert_eq!(lines, vec![vec!["2", "3", "1500"]]);

    let out = rocectl(h.addr.to_string(), &["counter", "read", "port_counter"]).await;
    assert_eq!(stdout(&out).lines().count(), 1 + 8, "header + every cell");
    let out = rocectl(
        h.addr.to_string(),
        &["counter", "read", "port_counter", "8"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "index past the size");
}
