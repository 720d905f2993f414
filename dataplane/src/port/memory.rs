//! [`MemoryPort`]: an in-memory link for tests, built from two channels.
//!
//! [`MemoryPort::pair`] returns the two ends of one full-duplex link: a frame
//! sent on one end is received, unchanged and in order, on the other. Sends
//! never block and are never refused while the peer exists (the queue is
//! unbounded); once the peer is dropped, sends fail with
//! [`PortError::Disconnected`] and receives return 0. Frames longer than a
//! receive buffer are truncated to it.
//!
//! Each end has a poll descriptor ([`Port::poll_fd`], an eventfd the peer
//! signals when it sends), so a run loop sleeping in `poll` wakes for an
//! in-memory frame as it would for a socket. A receive clears it before
//! taking frames, so a frame sent afterwards signals again; a spurious
//! wake-up is possible, a lost one is not. If the kernel refuses the
//! eventfds (descriptor limit), the ends have no poll descriptor.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::time::Duration;

use super::eventfd::EventFd;
use super::{FrameBuf, Port, PortError};

/// One end of an in-memory link.
#[derive(Debug)]
pub struct MemoryPort {
    name: String,
    tx: Sender<Vec<u8>>,
    rx: Receiver<Vec<u8>>,
    /// A frame taken by `wait_readable`, delivered by the next receive.
    peeked: Option<Vec<u8>>,
    /// Signalled by the peer when it sends to us.
    readable: Option<Arc<EventFd>>,
    /// The peer's `readable`.
    peer_readable: Option<Arc<EventFd>>,
}

impl MemoryPort {
    /// Both ends of a new link, named `a` and `b`.
    pub fn pair(a: &str, b: &str) -> (MemoryPort, MemoryPort) {
        let (tx_ab, rx_ab) = channel();
        let (tx_ba, rx_ba) = channel();
        let (a_readable, b_readable) = match (EventFd::new(), EventFd::new()) {
            (Ok(x), Ok(y)) => (Some(Arc::new(x)), Some(Arc::new(y))),
            _ => (None, None),
        };
        (
            MemoryPort {
                name: a.to_string(),
                tx: tx_ab,
                rx: rx_ba,
                peeked: None,
                readable: a_readable.clone(),
                peer_readable: b_readable.clone(),
            },
            MemoryPort {
                name: b.to_string(),
                tx: tx_ba,
                rx: rx_ab,
                peeked: None,
                readable: b_readable,
                peer_readable: a_readable,
            },
        )
    }
}

impl Port for MemoryPort {
    fn name(&self) -> &str {
        &self.name
    }

    fn recv_batch(&mut self, bufs: &mut [FrameBuf]) -> Result<usize, PortError> {
        if let Some(readable) = &self.readable {
            readable.clear();
        }
        let mut n = 0;
        while n < bufs.len() {
            let frame = match self.peeked.take() {
                Some(f) => f,
                None => match self.rx.try_recv() {
                    Ok(f) => f,
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
                },
            };
            bufs[n].set_frame(&frame);
            n += 1;
        }
        if n > 0 && n == bufs.len() {
            // More may be waiting: stay readable.
            if let Some(readable) = &self.readable {
                readable.signal();
            }
        }
        Ok(n)
    }

    fn send_batch(&mut self, bufs: &[FrameBuf]) -> Result<usize, PortError> {
        for b in bufs {
            self.tx
                .send(b.frame().to_vec())
                .map_err(|_| PortError::Disconnected)?;
        }
        if let (false, Some(peer)) = (bufs.is_empty(), &self.peer_readable) {
            peer.signal();
        }
        Ok(bufs.len())
    }

    fn wait_readable(&mut self, timeout: Option<Duration>) -> Result<bool, PortError> {
        if self.peeked.is_some() {
            return Ok(true);
        }
        let got = match timeout {
            Some(t) => self.rx.recv_timeout(t).ok(),
            None => self.rx.recv().ok(),
        };
        let ready = got.is_some();
        self.peeked = got;
        Ok(ready)
    }

    fn poll_fd(&self) -> Option<std::os::fd::RawFd> {
        self.readable.as_ref().map(|e| e.raw_fd())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(data: &[&[u8]]) -> Vec<FrameBuf> {
        data.iter()
            .map(|d| {
                let mut b = FrameBuf::with_capacity(64);
                b.set_frame(d);
                b
            })
            .collect()
    }

    #[test]
    fn frames_cross_in_order_and_only_to_the_peer() {
        let (mut a, mut b) = MemoryPort::pair("a", "b");
        assert_eq!(
            a.send_batch(&frames(&[b"one", b"two", b"three"])).unwrap(),
            3
        );
        let mut rx = FrameBuf::batch(2);
        assert_eq!(
            a.recv_batch(&mut rx).unwrap(),
            0,
            "sender must not see its own frames"
        );
        assert!(b.wait_readable(Some(Duration::from_millis(10))).unwrap());
        assert_eq!(b.recv_batch(&mut rx).unwrap(), 2);
        assert_eq!(rx[0].frame(), b"one");
        assert_eq!(rx[1].frame(), b"two");
        assert_eq!(b.recv_batch(&mut rx).unwrap(), 1);
        assert_eq!(rx[0].frame(), b"three");
    }

    fn poll_readable(p: &MemoryPort) -> bool {
        let mut fd = libc::pollfd {
            fd: p.poll_fd().expect("in-memory ports have a poll descriptor"),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, zero timeout.
        unsafe { libc::poll(&mut fd, 1, 0) == 1 }
    }

    #[test]
    fn poll_descriptor_is_readable_exactly_while_frames_wait() {
        let (mut a, mut b) = MemoryPort::pair("a", "b");
        assert!(!poll_readable(&b));
        a.send_batch(&frames(&[b"one", b"two", b"three"])).unwrap();
        assert!(poll_readable(&b), "a sent frame wakes the peer");
        assert!(!poll_readable(&a), "not the sender");
        let mut rx = FrameBuf::batch(2);
        assert_eq!(b.recv_batch(&mut rx).unwrap(), 2);
        assert!(poll_readable(&b), "a frame is still waiting");
        assert_eq!(b.recv_batch(&mut rx).unwrap(), 1);
        assert!(!poll_readable(&b), "all taken");
    }

    #[test]
    fn wait_times_out_and_disconnect_is_an_error() {
        let (mut a, b) = MemoryPort::pair("a", "b");
        assert!(!a.wait_readable(Some(Duration::from_millis(1))).unwrap());
        drop(b);
        assert!(matches!(
            a.send_batch(&frames(&[b"x"])),
            Err(PortError::Disconnected)
        ));
    }
}
