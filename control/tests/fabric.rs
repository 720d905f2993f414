//! The fabric QoS service over gRPC with the generated client: sections
//! set and read back, whole-config validation reporting every field,
//! nothing applied or persisted on refusal, restart from the state file,
//! counters and the event stream.

mod fabric_harness;

use std::sync::Arc;

use control::fabric::{BackendError, FabricService, MemoryBackend, PriorityCounters};
use fabric_harness::serve;
use proto::roceswitch::fabric::v1 as pb;
use tonic::Code;

fn ports() -> pb::PortsConfig {
    let port = |n| pb::PortConfig {
        port: n,
        speed_bps: 100_000_000_000,
        mtu_bytes: 4200,
        cable_length_m: 5,
        trust: pb::Trust::Dscp as i32,
        pfc_priorities: vec![3],
    };
    pb::PortsConfig {
        ports: vec![port(0), port(1)],
    }
}

fn ecn(kmin: u64, kmax: u64, pmax: f64) -> pb::EcnConfig {
    pb::EcnConfig {
        profiles: vec![pb::EcnProfile {
            port: 0,
            priority: 3,
            enabled: true,
            kmin_bytes: kmin,
            kmax_bytes: kmax,
            pmax,
        }],
    }
}

#[tokio::test]
async fn sections_are_validated_as_a_whole_applied_persisted_and_restored() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("fabric.json");
    let backend = Arc::new(MemoryBackend::default());
    let svc = FabricService::open(backend.clone(), Some(state.clone())).unwrap();
    let mut c = serve(svc).await;
    let mut events = c
        .watch_events(pb::WatchEventsRequest {})
        .await
        .unwrap()
        .into_inner();

    assert_eq!(
        c.set_ports(ports()).await.unwrap().into_inner().generation,
        1
    );
    assert_eq!(
        c.set_ecn(ecn(5_000, 200_000, 0.01))
            .await
            .unwrap()
            .into_inner()
            .generation,
        2
    );
    assert_eq!(
        c.get_ports(pb::GetConfigRequest {})
            .await
            .unwrap()
            .into_inner(),
        ports()
    );
    assert_eq!(
        c.get_ecn(pb::GetConfigRequest {})
            .await
            .unwrap()
            .into_inner(),
        ecn(5_000, 200_000, 0.01)
    );
    let ev = tokio::time::timeout(std::time::Duration::from_secs(5), events.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        matches!(
            ev.kind,
            Some(pb::event::Kind::ConfigApplied(pb::ConfigApplied {
                generation: 1,
                ..
            }))
        ),
        "{ev:?}"
    );

    // Several problems in one request: all reported, nothing applied or persisted.
    let applied_before = backend.applied().len();
    let file_before = std::fs::read(&state).unwrap();
    let err = c.set_ecn(ecn(300_000, 200_000, 1.5)).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("ecn[0].kmin_bytes") && err.message().contains("ecn[0].pmax"),
        "{}",
        err.message()
    );
    // Removing a port that ECN still refers to is a cross-section error.
    let err = c
        .set_ports(pb::PortsConfig {
            ports: vec![ports().ports[1].clone()],
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("ecn[0].port"), "{}", err.message());
    let err = c
        .set_watchdog(pb::WatchdogConfig {
            enabled: true,
            detection_time_ms: 50,
            restoration_time_ms: 0,
            action: 0,
            poll_interval_ms: 100,
        })
        .await
        .unwrap_err();
    assert!(
        err.message().contains("watchdog.detection_time_ms")
            && err.message().contains("watchdog.action"),
        "{}",
        err.message()
    );
    let err = c
        .set_buffer(pb::BufferConfig {
            pool_size_bytes: 1 << 20,
            thresholds: vec![pb::PriorityThreshold {
                priority: 3,
                threshold: Some(pb::priority_threshold::Threshold::StaticThreshold(
                    pb::StaticThreshold {
                        xoff_bytes: 1000,
                        xon_bytes: 2000,
                    },
                )),
            }],
            headroom: Some(pb::HeadroomConfig {
                mode: Some(pb::headroom_config::Mode::ExplicitBytes(600_000)),
            }),
        })
        .await
        .unwrap_err();
    assert!(
        err.message().contains("buffer.thresholds[0].xon_bytes")
            && err.message().contains("buffer.headroom"),
        "{}",
        err.message()
    );
    assert_eq!(backend.applied().len(), applied_before);
    assert_eq!(std::fs::read(&state).unwrap(), file_before);
    assert_eq!(
        c.get_ecn(pb::GetConfigRequest {})
            .await
            .unwrap()
            .into_inner(),
        ecn(5_000, 200_000, 0.01)
    );

    // The dataplane refuses: state and file unchanged.
    backend.refuse_with(Some(BackendError::Unsupported(
        "only 2 lossless priorities".into(),
    )));
    let mut p = ports();
    p.ports[0].pfc_priorities = vec![3, 4, 5];
    assert_eq!(
        c.set_ports(p).await.unwrap_err().code(),
        Code::FailedPrecondition
    );
    assert_eq!(std::fs::read(&state).unwrap(), file_before);
    assert_eq!(
        c.get_ports(pb::GetConfigRequest {})
            .await
            .unwrap()
            .into_inner(),
        ports()
    );
    backend.refuse_with(None);

    // A restart comes back with the persisted configuration and applies it.
    let whole = c
        .get_config(pb::GetConfigRequest {})
        .await
        .unwrap()
        .into_inner();
    let backend2 = Arc::new(MemoryBackend::default());
    let svc2 = FabricService::open(backend2.clone(), Some(state)).unwrap();
    let mut c2 = serve(svc2).await;
    assert_eq!(
        c2.get_config(pb::GetConfigRequest {})
            .await
            .unwrap()
            .into_inner(),
        whole
    );
    assert_eq!(backend2.applied().len(), 1);
    assert_eq!(backend2.applied()[0].ecn[0].kmax_bytes, 200_000);
}

#[tokio::test]
async fn whole_config_set_and_counters_per_port() {
    let backend = Arc::new(MemoryBackend::default());
    let mut c = serve(FabricService::open(backend.clone(), None).unwrap()).await;
    let mut whole = c
        .get_config(pb::GetConfigRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(whole.qos_maps.as_ref().unwrap().dscp_to_priority.len(), 64);
    whole.ports = Some(ports());
    whole.ets = Some(pb::EtsConfig {
        ports: vec![pb::EtsPort {
            port: 1,
            weights: vec![0, 0, 0, 60, 40, 0, 0, 0],
        }],
    });
    whole.watchdog = Some(pb::WatchdogConfig {
        enabled: true,
        detection_time_ms: 200,
        restoration_time_ms: 400,
        action: pb::WatchdogAction::Forward as i32,
        poll_interval_ms: 100,
    });
    c.set_config(whole.clone()).await.unwrap();
    assert_eq!(
        c.get_config(pb::GetConfigRequest {})
            .await
            .unwrap()
            .into_inner(),
        whole
    );
    assert_eq!(backend.applied().last().unwrap().ets[0].weights[3], 60);

    let mut bad = whole.clone();
    bad.qos_maps.as_mut().unwrap().dscp_to_priority[46] = 9;
    bad.ets.as_mut().unwrap().ports[0].weights[0] = 5;
    let err = c.set_config(bad).await.unwrap_err();
    assert!(
        err.message().contains("qos_maps.dscp_to_priority[46]")
            && err.message().contains("ets[0].weights"),
        "{}",
        err.message()
    );

    backend.set_counters(vec![
        PriorityCounters {
            port: 1,
            priority: 3,
            pfc_rx_frames: 7,
            ..Default::default()
        },
        PriorityCounters {
            port: 0,
            priority: 3,
            ecn_marked: 2,
            ..Default::default()
        },
    ]);
    let all = c
        .get_counters(pb::CountersRequest { ports: vec![] })
        .await
        .unwrap()
        .into_inner()
        .counters;
    assert_eq!(
        all.iter().map(|x| (x.port, x.priority)).collect::<Vec<_>>(),
        vec![(0, 3), (1, 3)]
    );
    let one = c
        .get_counters(pb::CountersRequest { ports: vec![1] })
        .await
        .unwrap()
        .into_inner()
        .counters;
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].pfc_rx_frames, 7);
    assert_eq!(
        c.get_counters(pb::CountersRequest {
            ports: vec![70_000]
        })
        .await
        .unwrap_err()
        .code(),
        Code::InvalidArgument
    );
}
