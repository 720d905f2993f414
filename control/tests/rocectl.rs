//! The `rocectl` binary against an in-process fabric + P4Runtime server.

mod common;
mod fabric_harness;

use std::sync::Arc;

use common::*;
use control::device::LocalDevice;
use control::fabric::config::FabricConfig;
use control::fabric::{FabricService, MemoryBackend};
use control::p4rt::{P4RuntimeConfig, P4RuntimeService};
use control::serve::{Bound, Listen};
use fabric_harness::rocectl;
use p4_target::runtime::Runtime;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_set_validate_counters_and_capabilities() {
    let backend = Arc::new(MemoryBackend::default());
    let fabric = FabricService::open(backend.clone(), None).unwrap();
    let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let p4rt =
        P4RuntimeService::from_program(&PROGRAM, device, P4RuntimeConfig::default()).unwrap();
    let bound = Bound::bind(&Listen::Tcp("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap().to_string();
    tokio::spawn(bound.serve(Some(p4rt), Some(fabric), std::future::pending()));

    let out = rocectl(addr.clone(), &["fabric", "get"]).await;
    assert!(out.status.success(), "{out:?}");
    let got: FabricConfig = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got, FabricConfig::default());

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cfg.json");
    let mut cfg = FabricConfig::default();
    cfg.qos_maps.dscp_to_priority[26] = 3;
    cfg.watchdog.enabled = true;
    std::fs::write(&file, serde_json::to_vec(&cfg).unwrap()).unwrap();
    let out = rocectl(addr.clone(), &["fabric", "set", file.to_str().unwrap()]).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(backend.applied().last(), Some(&cfg));

    cfg.watchdog.poll_interval_ms = 5;
    cfg.qos_maps.default_priority = 8;
    std::fs::write(&file, serde_json::to_vec(&cfg).unwrap()).unwrap();
    let out = rocectl(
        addr.clone(),
        &["fabric", "validate", file.to_str().unwrap()],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("qos_maps.default_priority") && err.contains("watchdog.poll_interval_ms"),
        "{err}"
    );
    let out = rocectl(addr.clone(), &["fabric", "set", file.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(2), "refused locally");
    assert_eq!(backend.applied().len(), 2);

    let out = rocectl(addr.clone(), &["fabric", "counters", "--port", "70000"]).await;
    assert_eq!(out.status.code(), Some(1), "server refusal is exit 1");
    let out = rocectl(addr.clone(), &["p4rt", "capabilities"]).await;
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1.4.1");
    let out = rocectl(addr.clone(), &["p4rt", "pipeline"]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("MyIngress.ipv4_lpm") && text.contains("cookie (none)"),
        "{text}"
    );
}
