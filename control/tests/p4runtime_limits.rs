//! A controller cannot make the P4Runtime server serve without bound:
//! StreamChannels beyond `max_streams` are refused with RESOURCE_EXHAUSTED
//! (and a closed one frees its place), and a request larger than
//! `max_message_bytes` is refused before it is decoded, leaving the state
//! as it was.

mod common;

use std::time::{Duration, Instant};

use common::*;
use control::device::LocalDevice;
use control::p4rt::{P4RuntimeConfig, P4RuntimeService};
use p4_target::runtime::Runtime;
use proto::p4::v1 as pb;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;

async fn limited(config: P4RuntimeConfig) -> (Harness, tokio::task::JoinHandle<()>) {
    let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let svc = P4RuntimeService::from_program(&PROGRAM, device.clone(), config).unwrap();
    let (addr, server) = serve(svc).await;
    (Harness { addr, device }, server)
}

/// Both halves of an open StreamChannel; dropping it closes the stream.
type Open = (
    mpsc::Sender<pb::StreamMessageRequest>,
    tonic::Streaming<pb::StreamMessageResponse>,
);

/// Opens a StreamChannel (no message sent yet), or the status the server
/// refused it with.
async fn stream(h: &Harness) -> Result<Open, tonic::Status> {
    let mut client = h.client().await;
    let (tx, rx) = mpsc::channel(4);
    let responses = client.stream_channel(ReceiverStream::new(rx)).await?;
    Ok((tx, responses.into_inner()))
}

#[tokio::test]
async fn streams_beyond_the_limit_are_refused_until_one_closes() {
    let (h, server) = limited(P4RuntimeConfig {
        device_id: DEVICE,
        max_streams: 3,
        ..Default::default()
    })
    .await;
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(stream(&h).await.expect("within the limit"));
    }
    let refused = stream(&h).await.unwrap_err();
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert!(
        refused.message().contains("3 streams"),
        "{}",
        refused.message()
    );

    // Closing one frees its place once the server has seen it end.
    drop(open.pop());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match stream(&h).await {
            Ok(s) => {
                open.push(s);
                break;
            }
            Err(e) => {
                assert_eq!(e.code(), Code::ResourceExhausted);
                assert!(
                    Instant::now() < deadline,
                    "a closed stream's place never came back"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    assert_eq!(
        stream(&h).await.unwrap_err().code(),
        Code::ResourceExhausted,
        "still at most 3"
    );
    server.abort();
}

#[tokio::test]
async fn a_request_larger_than_the_limit_is_refused_and_changes_nothing() {
    let (h, server) = limited(P4RuntimeConfig {
        device_id: DEVICE,
        max_message_bytes: 16 << 10,
        ..Default::default()
    })
    .await;
    let mut c = primary(&h, 1).await;
    let before = config_state(&h).await;
    // ~1,000 routes: far more than 16 KiB on the wire.
    let big: Vec<pb::Update> = (0..1000u32)
        .map(|i| insert(route([10, (i >> 8) as u8, i as u8, 0], 24, &[1])))
        .collect();
    let refused = write(&mut c, big).await.unwrap_err();
    assert_eq!(refused.code(), Code::OutOfRange, "{refused:?}");
    assert_eq!(config_state(&h).await, before, "nothing of it was applied");
    write(&mut c, vec![insert(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .expect("a request within the limit is served");
    server.abort();
}
