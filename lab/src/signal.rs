//! Ctrl-C and SIGTERM as a flag the run loops poll.
//!
//! [`stop_flag`] installs (once) a handler for SIGINT and SIGTERM that only
//! stores `true` into a static [`AtomicBool`] (async-signal-safe). The
//! handler is installed without `SA_RESTART`, so a thread sleeping in
//! `ppoll` or `waitpid` wakes with `EINTR` and sees the flag at once.

use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

extern "C" fn on_signal(_sig: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// The process-wide stop flag, set by SIGINT or SIGTERM.
pub fn stop_flag() -> &'static AtomicBool {
    INSTALL.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: a zeroed sigaction with a handler that only touches an
            // atomic is a valid, async-signal-safe disposition.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as *const () as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                sa.sa_flags = 0;
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
    &STOP
}

/// True once SIGINT or SIGTERM arrived (after [`stop_flag`] installed the handler).
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}
