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
