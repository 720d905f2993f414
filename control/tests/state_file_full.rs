//! The state file cannot take a write (its disk is full): the Write is
//! refused with RESOURCE_EXHAUSTED naming the state file, nothing of the
//! batch stays in the dataplane, the part of the record that reached the
//! file is cut off, and once there is room again writes go on and a restart
//! restores exactly what was acknowledged.
//!
//! A full disk is stood in for by the file-size limit (RLIMIT_FSIZE): a
//! write(2) past it stops short and then fails with EFBIG, as one on a full
//! disk does with ENOSPC, without root or a mount. The limit holds for the
//! whole process, so this test has a binary of its own.

mod common;

use common::*;
use tonic::Code;

/// Caps the size of any file this process writes (`None`: no cap).
fn limit_file_size(bytes: Option<u64>) {
    let lim = libc::rlimit {
        rlim_cur: bytes.unwrap_or(libc::RLIM_INFINITY),
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit reads a valid rlimit; no other preconditions.
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &lim) };
    assert_eq!(rc, 0, "setrlimit: {}", std::io::Error::last_os_error());
}

#[tokio::test]
async fn a_write_the_state_file_cannot_record_is_refused_and_taken_back() {
    // At the limit the kernel sends SIGXFSZ, which would end the process;
    // ignored, the write fails with EFBIG instead.
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.p4rt");
    let first = serve_restored(&state).await;
    let mut c = primary(&first.h, 1).await;
    write(&mut c, vec![insert(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .unwrap();
    let before = config_state(&first.h).await;
    let len = std::fs::metadata(&state).unwrap().len();

    // Room for a few bytes of the next record, not all of it.
    limit_file_size(Some(len + 16));
    let full = write(
        &mut c,
        vec![
            insert(route([10, 1, 0, 0], 16, &[2])),
            insert(route([10, 2, 0, 0], 16, &[3])),
        ],
    )
    .await
    .unwrap_err();
    assert_eq!(full.code(), Code::ResourceExhausted, "{}", full.message());
    assert!(
        full.message().contains("state file") && full.message().contains("not applied"),
        "{}",
        full.message()
    );
    assert_eq!(
        config_state(&first.h).await,
        before,
        "nothing of the refused batch stays in the dataplane"
    );
    assert_eq!(
        std::fs::metadata(&state).unwrap().len(),
        len,
        "the part of the record that reached the file is cut off"
    );
    // A delete is taken back too: the route it removed comes back.
    let gone = write(&mut c, vec![delete(route([10, 0, 0, 0], 8, &[1]))])
        .await
        .unwrap_err();
    assert_eq!(gone.code(), Code::ResourceExhausted, "{}", gone.message());
    assert_eq!(
        config_state(&first.h).await,
        before,
        "the deleted route is back"
    );

    limit_file_size(None);
    write(&mut c, vec![insert(route([10, 3, 0, 0], 16, &[2]))])
        .await
        .unwrap();
    let acknowledged = config_state(&first.h).await;
    assert_eq!(acknowledged.len(), before.len() + 1);
    drop(c);
    drop(first);

    let second = serve_restored(&state).await;
    assert_eq!(second.report.refused, 0);
    assert_eq!(
        second.report.torn_bytes, 0,
        "no torn record was left behind"
    );
    assert_eq!(
        config_state(&second.h).await,
        acknowledged,
        "a restart restores exactly what was acknowledged"
    );
}
