//! Running code inside a named network namespace without a child process.
//!
//! [`run_in`] spawns a thread, moves it into `/run/netns/NAME` with
//! `setns(CLONE_NEWNET)` and runs a closure there. Sockets opened by the
//! closure stay bound to that namespace after the thread ends, so a test or
//! tool can hold ports in several namespaces at once. Only the network
//! namespace changes (no mount namespace, unlike `ip netns exec`).
//! Needs `CAP_SYS_ADMIN`.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Path of a named namespace as `ip netns` creates it.
pub fn netns_path(name: &str) -> String {
    format!("/run/netns/{name}")
}

/// Runs `f` on a new thread inside network namespace `name` and returns its
/// result. Errors if the namespace cannot be opened or entered.
pub fn run_in<T, F>(name: &str, f: F) -> io::Result<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let file = File::open(netns_path(name))?;
    let handle = std::thread::spawn(move || -> io::Result<T> {
        // SAFETY: setns on a valid namespace fd affects only this thread.
        let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(f())
    });
    handle
        .join()
        .map_err(|_| io::Error::other("namespace thread panicked"))?
}

/// The environment variable that turns a namespace test's skip into a
/// failure: CI sets it when it runs as root, so a test that cannot run
/// there fails instead of passing silently.
pub const REQUIRE_NAMESPACES_ENV: &str = "ROCESWITCH_REQUIRE_ROOT";

/// Why this process cannot create network namespaces (not root, or no
/// `ip` tool), or `None` when it can.
pub fn namespaces_unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    if euid != 0 {
        return Some(format!(
            "needs root (creates network namespaces); euid = {euid}"
        ));
    }
    if std::process::Command::new("ip").arg("-V").output().is_err() {
        return Some("the `ip` tool (iproute2) is not installed".to_string());
    }
    None
}

/// For tests that create namespaces: `true` when they may; otherwise
/// prints `SKIPPED <test>: <why>` and returns `false`, or panics when
/// [`REQUIRE_NAMESPACES_ENV`] is set (CI running as root must run every
/// such test).
pub fn namespaces_or_skip(test: &str) -> bool {
    let Some(why) = namespaces_unavailable() else {
        return true;
    };
    if std::env::var_os(REQUIRE_NAMESPACES_ENV).is_some() {
        panic!("{test} cannot run ({why}) but {REQUIRE_NAMESPACES_ENV} is set");
    }
    eprintln!("SKIPPED {test}: {why}");
    false
}
