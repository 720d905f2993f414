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
//!
//! A test can take one end's link down and bring it back through a
//! [`LinkControl`] ([`MemoryPort::link_control`]), as an interface that is
//! deleted and re-created: while down, that end's receives and sends fail
//! with [`PortError::LinkDown`] and [`Port::link_check`] reports the cause;
//! [`Port::reopen`] succeeds once the link is up again and discards what
//! the peer sent meanwhile (a vanished interface receives nothing).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::time::Duration;

use super::eventfd::EventFd;
use super::{FrameBuf, LinkDown, Port, PortError};

/// Takes one [`MemoryPort`]'s simulated link down and brings it back; a
/// clone of the port's own switch, usable while a driver owns the port.
#[derive(Clone, Debug)]
pub struct LinkControl(Arc<AtomicU8>);

const LINK_CAUSES: [LinkDown; 4] = [
    LinkDown::Gone,
    LinkDown::AdminDown,
    LinkDown::NoCarrier,
    LinkDown::Error,
];

impl LinkControl {
    /// Sets the link down (`Some(cause)`) or up (`None`).
    pub fn set(&self, down: Option<LinkDown>) {
        let code = down.map_or(0, |c| {
            1 + LINK_CAUSES.iter().position(|x| *x == c).unwrap_or(0) as u8
        });
        self.0.store(code, Ordering::SeqCst);
    }

    /// The link's state: `None` when up.
    pub fn get(&self) -> Option<LinkDown> {
        match self.0.load(Ordering::SeqCst) {
            0 => None,
            n => LINK_CAUSES.get(usize::from(n - 1)).copied(),
        }
    }
}

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
    /// The simulated link ([`LinkControl`]).
    link: LinkControl,
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
                link: LinkControl(Arc::new(AtomicU8::new(0))),
            },
            MemoryPort {
                name: b.to_string(),
                tx: tx_ba,
                rx: rx_ab,
                peeked: None,
                readable: b_readable,
                peer_readable: a_readable,
                link: LinkControl(Arc::new(AtomicU8::new(0))),
            },
        )
    }

    /// The switch of this end's simulated link (see the module doc).
    pub fn link_control(&self) -> LinkControl {
        self.link.clone()
    }

    fn check_link(&self) -> Result<(), PortError> {
        match self.link.get() {
            None => Ok(()),
            Some(cause) => Err(PortError::LinkDown {
                iface: self.name.clone(),
                cause,
            }),
        }
    }
}

impl Port for MemoryPort {
    fn name(&self) -> &str {
        &self.name
    }

    fn recv_batch(&mut self, bufs: &mut [FrameBuf]) -> Result<usize, PortError> {
        self.check_link()?;
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
        self.check_link()?;
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

    fn link_check(&mut self) -> Result<Option<LinkDown>, PortError> {
        Ok(self.link.get())
    }

    fn reopen(&mut self) -> Result<bool, PortError> {
        if self.link.get().is_some() {
            return Ok(false);
        }
        self.peeked = None;
        while self.rx.try_recv().is_ok() {}
        if let Some(readable) = &self.readable {
            readable.clear();
        }
        Ok(true)
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
    fn a_downed_link_fails_and_reopens_without_what_was_sent_meanwhile() {
        let (mut a, mut b) = MemoryPort::pair("a", "b");
        let link = b.link_control();
        link.set(Some(LinkDown::Gone));
        let mut rx = FrameBuf::batch(4);
        let err = b.recv_batch(&mut rx).unwrap_err();
        assert_eq!(err.link_down(), Some(LinkDown::Gone));
        assert_eq!(
            b.send_batch(&frames(&[b"x"])).unwrap_err().link_down(),
            Some(LinkDown::Gone)
        );
        assert_eq!(b.link_check().unwrap(), Some(LinkDown::Gone));
        a.send_batch(&frames(&[b"lost"])).unwrap();
        assert!(!b.reopen().unwrap(), "still down");
        link.set(None);
        assert!(b.reopen().unwrap());
        assert_eq!(b.recv_batch(&mut rx).unwrap(), 0, "sent while down: lost");
        a.send_batch(&frames(&[b"after"])).unwrap();
        assert_eq!(b.recv_batch(&mut rx).unwrap(), 1);
        assert_eq!(rx[0].frame(), b"after");
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
