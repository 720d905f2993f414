//! [`EventFd`]: a Linux `eventfd(2)` used as a wake-up flag in a poll set.
//!
//! [`EventFd::signal`] makes the descriptor poll readable;
//! [`EventFd::clear`] makes it unreadable again. A waiter clears it after
//! waking and *then* looks for work, so a signal given after it looked is
//! never lost: the descriptor stays readable and the next poll returns at
//! once. Signals given while nobody waits merge into one wake-up.
//!
//! Contract: the descriptor is non-blocking and close-on-exec; neither call
//! blocks, allocates or panics; errors (only a counter at its maximum,
//! which means "already signalled") are ignored.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A wake-up descriptor; see the module doc.
#[derive(Debug)]
pub(crate) struct EventFd {
    fd: OwnedFd,
}

impl EventFd {
    /// A new, unsignalled descriptor.
    pub(crate) fn new() -> std::io::Result<EventFd> {
        // SAFETY: eventfd takes two integers and returns a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a descriptor we just opened and own alone.
        Ok(EventFd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Makes the descriptor readable (one `write(2)`).
    pub(crate) fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to a descriptor we own.
        let _ = unsafe {
            libc::write(
                self.fd.as_raw_fd(),
                (&raw const one).cast::<libc::c_void>(),
                std::mem::size_of::<u64>(),
            )
        };
    }

    /// Makes the descriptor unreadable again (one `read(2)`); true if it
    /// was signalled.
    pub(crate) fn clear(&self) -> bool {
        let mut count: u64 = 0;
        // SAFETY: reads at most 8 bytes into a live u64 from a descriptor we own.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                (&raw mut count).cast::<libc::c_void>(),
                std::mem::size_of::<u64>(),
            )
        };
        n == std::mem::size_of::<u64>() as isize
    }

    /// The descriptor, for a poll set.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readable(e: &EventFd) -> bool {
        let mut p = libc::pollfd {
            fd: e.raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, zero timeout.
        unsafe { libc::poll(&mut p, 1, 0) == 1 }
    }

    #[test]
    fn signals_merge_and_clear_resets() {
        let e = EventFd::new().unwrap();
        assert!(!readable(&e));
        assert!(!e.clear(), "nothing to clear yet");
        e.signal();
        e.signal();
        assert!(readable(&e));
        assert!(e.clear());
        assert!(!readable(&e), "one clear takes every merged signal");
        assert!(!e.clear());
    }
}
