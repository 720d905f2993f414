//! Both services on one filesystem Unix socket (how the switch is reached
//! from another network namespace), a client dialling the path, unknown
//! services answered UNIMPLEMENTED, and the socket removed on shutdown.

mod common;

use std::sync::Arc;

use common::*;
use control::device::LocalDevice;
use control::fabric::{FabricService, MemoryBackend};
use control::p4rt::{P4RuntimeConfig, P4RuntimeService};
use control::serve::{Bound, Listen};
use p4_target::runtime::Runtime;
use proto::p4::v1 as pb;
use proto::roceswitch::fabric::v1 as fpb;

#[tokio::test]
async fn services_answer_on_a_unix_socket_and_clean_up() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p4rt.sock");
    std::fs::write(&path, b"stale").unwrap();
    let listen: Listen = format!("unix:{}", path.display()).parse().unwrap();
    let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let p4rt =
        P4RuntimeService::from_program(&PROGRAM, device, P4RuntimeConfig::default()).unwrap();
    let fabric = FabricService::open(Arc::new(MemoryBackend::default()), None).unwrap();
    let bound = Bound::bind(&listen).await.unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(bound.serve(Some(p4rt), Some(fabric), async {
        let _ = stopped.await;
    }));

    let channel = control::client::connect(&format!("unix:{}", path.display()))
        .await
        .unwrap();
    let mut p4 = proto::p4::v1::p4_runtime_client::P4RuntimeClient::new(channel.clone());
    let caps = p4
        .capabilities(pb::CapabilitiesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(!caps.p4runtime_api_version.is_empty());
    let mut fabric =
        proto::roceswitch::fabric::v1::fabric_qos_client::FabricQosClient::new(channel.clone());
    fabric.get_config(fpb::GetConfigRequest {}).await.unwrap();

    // A service we do not implement (finsy probes gNMI) is UNIMPLEMENTED.
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let codec = tonic_prost_codec();
    let err = grpc
        .unary::<pb::CapabilitiesRequest, pb::CapabilitiesResponse, _>(
            tonic::Request::new(pb::CapabilitiesRequest::default()),
            "/gnmi.gNMI/Capabilities".parse().unwrap(),
            codec,
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unimplemented);

    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
    assert!(!path.exists(), "socket file removed on shutdown");
}

fn tonic_prost_codec() -> tonic_prost::ProstCodec<pb::CapabilitiesRequest, pb::CapabilitiesResponse>
{
    tonic_prost::ProstCodec::default()
}
