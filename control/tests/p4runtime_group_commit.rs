//! Group commit of Writes (README #17, p4rt25): Writes queued while the
//! device is busy are applied together, in one device job, yet each gets
//! exactly its own result, in arrival order; an all-or-nothing Write in a
//! group rolls back alone; a Write that changes the service's shadow ends
//! its group, so the next is decoded against what it left; the state file
//! records grouped Writes as a restart replays them.
//!
//! The device thread is held by a job of the test's while the Writes are
//! queued, so they wait together for it as Writes in flight do; the
//! service is called directly (no gRPC) on the test's current-thread
//! runtime.

mod common;

use std::sync::Arc;

use common::*;
use control::device::{DeviceExt, LocalDevice};
use control::p4rt::P4RuntimeService;
use p4_target::runtime::{FieldMatch, Runtime};
use proto::p4::v1 as pb;
use proto::p4::v1::p4_runtime_server::P4Runtime;
use proto::p4::v1::update::Type as U;
use proto::p4::v1::write_request::Atomicity;
use tonic::Code;

/// A Write with `atomicity`, no election id (no controller is arbitrated).
fn request(updates: Vec<pb::Update>, atomicity: Atomicity) -> pb::WriteRequest {
    pb::WriteRequest {
        device_id: DEVICE,
        updates,
        atomicity: atomicity as i32,
        ..Default::default()
    }
}

/// Holds the device thread until the returned sender is dropped or sent to.
fn hold_device(device: &LocalDevice) -> std::sync::mpsc::Sender<()> {
    let (release, held) = std::sync::mpsc::channel::<()>();
    // Queued on the device now; its result is not awaited.
    drop(device.with_runtime(move |_| {
        let _ = held.recv();
    }));
    release
}

/// Sends `writes` to `svc` at once while the device is held, then lets
/// the device go: each Write's outcome, in the order given.
async fn write_together(
    svc: &P4RuntimeService,
    device: &LocalDevice,
    writes: Vec<pb::WriteRequest>,
) -> Vec<Result<(), tonic::Status>> {
    let release = hold_device(device);
    let tasks: Vec<_> = writes
        .into_iter()
        .map(|w| {
            let svc = svc.clone();
            tokio::spawn(async move { svc.write(tonic::Request::new(w)).await.map(|_| ()) })
        })
        .collect();
    // Every Write reaches the committer's queue (the runtime is
    // current-thread: each task runs up to its wait for an answer).
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
    drop(release);
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

/// The per-update codes of a failed Write.
fn codes(r: &Result<(), tonic::Status>) -> Vec<Code> {
    match r {
        Ok(()) => Vec::new(),
        Err(status) => update_errors(status)
            .into_iter()
            .map(|(c, _)| Code::from(c))
            .collect(),
    }
}

/// The first byte of each /8 route in the LPM table, sorted, and its port.
async fn routes(device: &LocalDevice) -> Vec<(u8, Vec<u8>)> {
    let entries = device
        .with_runtime(|rt| rt.table_entries(T_LPM).unwrap())
        .await
        .unwrap();
    let mut out: Vec<(u8, Vec<u8>)> = entries
        .into_iter()
        .map(|e| {
            let Some(FieldMatch::Lpm { value, prefix_len }) = e.matches[0] else {
                panic!("an LPM key: {:?}", e.matches)
            };
            assert_eq!(prefix_len, 8);
            let port = match e.action {
                p4_target::runtime::EntryAction::Direct(call) => {
                    call.params.iter().map(|&p| p as u8).collect()
                }
                other => panic!("a direct action: {other:?}"),
            };
            ((value >> 24) as u8, port)
        })
        .collect();
    out.sort();
    out
}

fn r8(first: u8, port: u8) -> pb::TableEntry {
    route([first, 0, 0, 0], 8, &[port])
}

/// Seven Writes queued together: each gets its own per-update results,
/// later Writes see the earlier ones applied (ALREADY_EXISTS, NOT_FOUND),
/// the ROLLBACK_ON_ERROR and DATAPLANE_ATOMIC Writes that fail leave
/// nothing behind while the Writes around them stay applied.
fn mixed_writes() -> Vec<pb::WriteRequest> {
    use Atomicity::*;
    vec![
        request(vec![insert(r8(10, 1))], ContinueOnError),
        // An invalid update (prefix longer than the field) beside a good one.
        request(
            vec![insert(route([11, 0, 0, 0], 40, &[2])), insert(r8(12, 2))],
            ContinueOnError,
        ),
        // 10/8 is there by now.
        request(vec![insert(r8(10, 3))], ContinueOnError),
        request(vec![insert(r8(13, 4))], ContinueOnError),
        // 13/8 exists: the whole Write is rolled back, 14/8 with it.
        request(vec![insert(r8(14, 5)), insert(r8(13, 5))], RollbackOnError),
        // 16/8 does not exist yet: rolled back, 15/8 with it.
        request(vec![insert(r8(15, 6)), modify(r8(16, 6))], DataplaneAtomic),
        request(vec![insert(r8(16, 7))], ContinueOnError),
    ]
}

fn check_mixed(results: &[Result<(), tonic::Status>]) {
    assert!(results[0].is_ok(), "{:?}", results[0]);
    assert_eq!(codes(&results[1]), [Code::InvalidArgument, Code::Ok]);
    assert_eq!(codes(&results[2]), [Code::AlreadyExists]);
    assert!(results[3].is_ok(), "{:?}", results[3]);
    assert_eq!(codes(&results[4]), [Code::Aborted, Code::AlreadyExists]);
    assert_eq!(codes(&results[5]), [Code::Aborted, Code::NotFound]);
    assert!(results[6].is_ok(), "{:?}", results[6]);
}

const MIXED_ROUTES: [(u8, u8); 4] = [(10, 1), (12, 2), (13, 4), (16, 7)];

fn expected(routes: &[(u8, u8)]) -> Vec<(u8, Vec<u8>)> {
    routes.iter().map(|&(r, p)| (r, vec![p])).collect()
}

#[tokio::test]
async fn writes_in_flight_together_each_get_their_own_result() {
    let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let svc = service(&PROGRAM, device.clone());
    let results = write_together(&svc, &device, mixed_writes()).await;
    check_mixed(&results);
    assert_eq!(routes(&device).await, expected(&MIXED_ROUTES));
    // They were applied together: fewer device trips than Writes.
    let stats = svc.write_stats();
    assert_eq!(stats.writes, 7);
    assert!(stats.groups <= 2, "{stats:?}");
}

#[tokio::test]
async fn a_write_changing_the_shadow_ends_its_group() {
    let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let svc = service(&PROGRAM, device.clone());
    let member = |id: u32| {
        update(
            U::Insert,
            pb::entity::Entity::ActionProfileMember(pb::ActionProfileMember {
                action_profile_id: P_ECMP,
                member_id: id,
                action: Some(action(
                    SET_NHOP,
                    &[(1, &[0, 0, 0, 0, 0, id as u8]), (2, &[1])],
                )),
            }),
        )
    };
    svc.write(tonic::Request::new(request(
        vec![member(1), member(2)],
        Atomicity::ContinueOnError,
    )))
    .await
    .unwrap();
    let group = |ty: U, weight: i32| {
        update(
            ty,
            pb::entity::Entity::ActionProfileGroup(pb::ActionProfileGroup {
                action_profile_id: P_ECMP,
                group_id: 1,
                members: vec![pb::action_profile_group::Member {
                    member_id: 1,
                    weight,
                    ..Default::default()
                }],
                max_size: 4,
            }),
        )
    };
    let before = svc.write_stats();
    // The MODIFY must repeat the max_size the INSERT gave the group, which
    // only the shadow knows: decoded before the INSERT was recorded, it
    // would be refused (INVALID_ARGUMENT, max_size 4 differs from 0).
    let results = write_together(
        &svc,
        &device,
        vec![
            request(vec![group(U::Insert, 1)], Atomicity::ContinueOnError),
            request(vec![group(U::Modify, 3)], Atomicity::ContinueOnError),
            request(vec![insert(r8(10, 1))], Atomicity::ContinueOnError),
        ],
    )
    .await;
    for r in &results {
        assert!(r.is_ok(), "{r:?}");
    }
    let stats = svc.write_stats();
    assert_eq!(stats.writes - before.writes, 3);
    // The INSERT ends the first group; the MODIFY (a group write too) ends
    // the second; the route comes after it.
    assert_eq!(stats.groups - before.groups, 3, "{stats:?}");
    let groups = device
        .with_runtime(|rt| rt.groups(P_ECMP).unwrap())
        .await
        .unwrap();
    assert_eq!(groups, vec![(1, vec![(1, 3)])]);
}

#[tokio::test]
async fn grouped_writes_are_recorded_as_a_restart_replays_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("switch.p4rt");
    let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let svc = service(&PROGRAM, device.clone());
    svc.restore(&path).await.unwrap();
    let results = write_together(&svc, &device, mixed_writes()).await;
    check_mixed(&results);
    assert!(svc.write_stats().groups < 7);
    drop(svc);
    let fresh = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let restored = service(&PROGRAM, fresh.clone());
    let report = restored.restore(&path).await.unwrap();
    // The updates that succeeded, and nothing of the rolled-back Writes.
    assert_eq!((report.applied, report.refused), (4, 0), "{report:?}");
    assert_eq!(routes(&fresh).await, expected(&MIXED_ROUTES));
}

/// Writes queued behind a long one still come out in arrival order: a
/// chain of MODIFYs of one entry leaves the last one's port.
#[tokio::test]
async fn writes_queued_together_apply_in_arrival_order() {
    let device: Arc<LocalDevice> = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let svc = service(&PROGRAM, device.clone());
    let mut writes = vec![request(vec![insert(r8(10, 1))], Atomicity::ContinueOnError)];
    for port in 2..=40 {
        writes.push(request(
            vec![modify(r8(10, port))],
            Atomicity::ContinueOnError,
        ));
    }
    let results = write_together(&svc, &device, writes).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(routes(&device).await, expected(&[(10, 40)]));
    assert!(svc.write_stats().groups < 40);
}
