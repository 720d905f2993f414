//! RoCE security through the fabric service, as the daemon runs it: the
//! `security` section set over gRPC is validated (every bad field named),
//! applied to a switch running `roce_switch.p4` on its own thread,
//! persisted, restored from the state file at start, and its drops come
//! back in `GetCounters` and under `roceswitch_roce_security_drops_total`.

mod fabric_harness;

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::mpsc::Sender;

use control::fabric::{FabricBackend, FabricService};
use dataplane::driver::Command;
use dataplane::roce::{PROGRAM_INFO, Program};
use dataplane::wire::roce_frame::FrameSpec;
use fabric_harness::{on_switch, rocectl, serve, switch};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::RuntimeApi;
use proto::roceswitch::fabric::v1 as pb;
use tonic::Code;

fn security() -> pb::SecurityConfig {
    pb::SecurityConfig {
        ports: vec![pb::PortSecurity {
            port: 0,
            allow: vec![
                pb::AllowedSource {
                    source: "10.0.0.1/32".into(),
                    vlan: None,
                },
                pb::AllowedSource {
                    source: "02:00:00:00:0a:01".into(),
                    vlan: Some(100),
                },
            ],
            partitions: vec![pb::Partition {
                key: 0x7fff,
                full: true,
            }],
        }],
    }
}

/// A RoCE v2 SEND from `src` into port 0.
fn send_from(tx: &Sender<Command<Program>>, src: [u8; 4]) {
    let frame = FrameSpec {
        src_ip: IpAddr::V4(Ipv4Addr::from(src)),
        ..FrameSpec::default()
    }
    .build()
    .unwrap();
    on_switch(tx, move |sw, now| sw.handle_frame(0, &frame, now));
}

fn port0_drops(reply: &pb::CountersReply) -> (u64, u64) {
    let p = reply.ports.iter().find(|p| p.port == 0).unwrap();
    (
        p.roce_security_rocev2_source_drops,
        p.roce_security_pkey_ingress_drops,
    )
}

#[tokio::test]
async fn security_is_validated_applied_counted_persisted_and_restored() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("fabric.json");
    let (backend, tx) = switch();
    let backend = Arc::new(backend);
    let svc = FabricService::open(backend.clone(), Some(state.clone())).unwrap();
    let mut c = serve(svc).await;

    // Every bad field is named; nothing is applied.
    let mut bad = security();
    bad.ports[0].allow[0].source = "10.0.0.1/40".into();
    bad.ports[0].allow[1].vlan = Some(5000);
    bad.ports[0].partitions[0].key = 0;
    let err = c.set_security(bad).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    for field in [
        "security.ports[0].allow[0].source",
        "security.ports[0].allow[1].vlan",
        "security.ports[0].partitions[0].key",
    ] {
        assert!(err.message().contains(field), "{field}: {}", err.message());
    }
    assert!(!state.exists(), "nothing persisted");

    c.set_security(security()).await.unwrap();
    assert_eq!(
        c.get_security(pb::GetConfigRequest {})
            .await
            .unwrap()
            .into_inner(),
        security()
    );

    send_from(&tx, [10, 0, 0, 1]);
    send_from(&tx, [10, 0, 0, 66]);
    send_from(&tx, [10, 0, 0, 67]);
    let reply = c
        .get_counters(pb::CountersRequest { ports: vec![0] })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(port0_drops(&reply), (2, 0), "two unlisted sources");
    let text = control::metrics::render(&backend.counter_set(&[]), None, None);
    assert!(
        text.contains(
            "roceswitch_roce_security_drops_total{port=\"0\",reason=\"rocev2_source\"} 2"
        ),
        "{text}"
    );

    // A restart restores the section from the state file onto a fresh switch.
    drop(c);
    let (backend2, tx2) = switch();
    let svc2 = FabricService::open(Arc::new(backend2), Some(state)).unwrap();
    let mut c2 = serve(svc2).await;
    assert_eq!(
        c2.get_security(pb::GetConfigRequest {})
            .await
            .unwrap()
            .into_inner(),
        security()
    );
    let allow_entries = on_switch(&tx2, |sw, _| {
        let id = PROGRAM_INFO.table_by_name("roce_src_allow").unwrap().id;
        sw.pipeline().runtime().table_entries(id).unwrap().len()
    });
    assert_eq!(allow_entries, 3, "two sources and the port's catch-all");
    send_from(&tx2, [10, 0, 0, 66]);
    let reply = c2
        .get_counters(pb::CountersRequest { ports: vec![0] })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(port0_drops(&reply), (1, 0), "filtering again after restart");

    // An empty section turns every filter off.
    c2.set_security(pb::SecurityConfig::default())
        .await
        .unwrap();
    let allow_entries = on_switch(&tx2, |sw, _| {
        let id = PROGRAM_INFO.table_by_name("roce_src_allow").unwrap().id;
        sw.pipeline().runtime().table_entries(id).unwrap().len()
    });
    assert_eq!(allow_entries, 0);
}

/// A state file written before the section existed still loads (nothing
/// filtered).
#[test]
fn state_files_without_the_section_load_with_nothing_filtered() {
    let json = serde_json::to_value(control::fabric::FabricConfig::default()).unwrap();
    let mut old = json.as_object().unwrap().clone();
    old.remove("security").unwrap();
    let back: control::fabric::FabricConfig =
        serde_json::from_value(serde_json::Value::Object(old)).unwrap();
    assert!(back.security.is_off());
}

/// `rocectl security`: entries added and removed one at a time, refusals
/// said, the table and JSON shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rocectl_security_edits_and_shows_the_section() {
    use control::serve::{Bound, Listen};
    let backend = Arc::new(control::fabric::MemoryBackend::default());
    let fabric = FabricService::open(backend.clone(), None).unwrap();
    let bound = Bound::bind(&Listen::Tcp("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap().to_string();
    tokio::spawn(bound.serve(None, Some(fabric), std::future::pending()));
    let ok = |out: &std::process::Output| {
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };

    let shown = ok(&rocectl(addr.clone(), &["security"]).await);
    assert_eq!(
        shown,
        "no port filters RoCE (no allowlists, no partitions)\n"
    );
    ok(&rocectl(
        addr.clone(),
        &["security", "allow", "add", "1", "10.0.0.0/24"],
    )
    .await);
    ok(&rocectl(
        addr.clone(),
        &[
            "security",
            "allow",
            "add",
            "1",
            "02:00:00:00:0a:01",
            "--vlan",
            "100",
        ],
    )
    .await);
    ok(&rocectl(
        addr.clone(),
        &["security", "pkey", "add", "1", "0x10", "--limited"],
    )
    .await);
    let applied = backend.applied().last().unwrap().security.clone();
    assert_eq!(applied.ports.len(), 1);
    assert_eq!(applied.ports[0].allow.len(), 2);
    assert_eq!(
        applied.ports[0].partitions,
        vec![dataplane::fabric::security::Partition::from_pkey(0x0010)]
    );

    let shown = ok(&rocectl(addr.clone(), &["security"]).await);
    assert!(
        shown.contains("port 1\n  allow       10.0.0.0/24, 02:00:00:00:0a:01 vlan 100\n")
            && shown.contains("  partitions  0x0010 limited\n"),
        "{shown}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(&rocectl(addr.clone(), &["security", "--json"]).await)).unwrap();
    assert_eq!(json[0]["partitions"][0]["key"], "0x0010");

    let out = rocectl(addr.clone(), &["security", "pkey", "del", "1", "0x20"]).await;
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = rocectl(
        addr.clone(),
        &["security", "allow", "add", "1", "10.0.0.1/8"],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "the server refuses: {out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("security.ports[0].allow[2].source"),
        "{out:?}"
    );
    ok(&rocectl(
        addr.clone(),
        &["security", "allow", "del", "1", "10.0.0.0/24"],
    )
    .await);
    assert_eq!(
        backend.applied().last().unwrap().security.ports[0]
            .allow
            .len(),
        1
    );
}
