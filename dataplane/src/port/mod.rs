//! Port I/O: moving whole Ethernet frames between a switch or host agent and
//! a link, in batches.
//!
//! [`Port`] is the seam every run loop is written against. It has two
//! implementations: [`AfPacketPort`] (a Linux `AF_PACKET` socket bound to one
//! interface, e.g. a veth end in a lab namespace, moving frames through
//! memory-mapped rings) and [`MemoryPort`] (channel pairs, for tests that
//! need no privileges).
//!
//! Contract:
//! - [`Port::recv_batch`] and [`Port::send_batch`] never block. Receive fills
//!   up to `bufs.len()` [`FrameBuf`]s and returns how many; send hands as
//!   many leading frames as the link accepts to the kernel and returns how
//!   many (fewer than given means "try again later", not an error).
//! - Without copies where the port allows: [`Port::recv_with`] hands each
//!   received frame to a closure where it lies (a receive ring's slot), and
//!   [`Port::send_with`] lets a closure write each frame straight into a
//!   transmit ring's slot. Both fall back to the batch calls for ports
//!   without rings, so a run loop written against them serves every port.
//! - A port may keep frames it accepted until the kernel takes them
//!   ([`Port::tx_pending`]): the caller then sends again soon (an empty
//!   [`Port::send_batch`] will do), as after a partial send.
//! - [`Port::wait_readable`] blocks until a frame can be received or the
//!   timeout passes, so a run loop can sleep and still wake for its timers.
//!   This is the IO shell: it reads no clock itself and the cores behind it
//!   stay sans-IO.
//! - Frames are without FCS. A received frame whose 802.1Q tag the kernel
//!   stripped has it put back in place (see [`packet`]), so PCP
//!   classification sees what was on the wire.
//! - Nothing here panics on bad input; errors carry the interface name.
//! - A link can go away under a port: [`PortError::link_down`] tells such
//!   errors from the rest, [`Port::link_check`] looks without moving frames
//!   and [`Port::reopen`] brings the port back (both cheap enough for a
//!   timer, never called per packet).
//!
//! Spec: `shared/reference/packet-io.md` (own transmissions re-received,
//! VLAN tags stripped on receive, batching and rings instead of per-packet
//! syscalls).

pub(crate) mod eventfd;
pub mod memory;
pub mod netns;
pub mod packet;
mod ring;

pub use memory::{LinkControl, MemoryPort};
pub use packet::{AfPacketConfig, AfPacketPort, PortStats};

/// Largest frame a [`FrameBuf`] holds by default, bytes (no FCS): a 9000-byte
/// jumbo payload plus Ethernet and one VLAN tag.
pub const DEFAULT_FRAME_CAPACITY_BYTES: usize = 9018;

/// Why a port's link is down, as its driver saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkDown {
    /// The interface is gone (deleted; it may come back under a new index).
    Gone,
    /// The interface is administratively down (`ip link set X down`).
    AdminDown,
    /// The interface is up but has no carrier (e.g. its veth peer is down).
    NoCarrier,
    /// Sending or receiving failed with an error that means the link is
    /// unusable (e.g. `ENETDOWN`) while the interface still looked up.
    Error,
}

impl LinkDown {
    /// Short words for logs and events ("interface gone").
    pub const fn describe(self) -> &'static str {
        match self {
            LinkDown::Gone => "interface gone",
            LinkDown::AdminDown => "administratively down",
            LinkDown::NoCarrier => "no carrier",
            LinkDown::Error => "link error",
        }
    }
}

/// Errors of port operations.
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    /// The interface does not exist (in this network namespace).
    #[error("no interface named {iface:?}")]
    NoSuchInterface {
        /// Interface name.
        iface: String,
    },
    /// A system call failed while opening or configuring the port.
    #[error("{iface}: {what}: {source}")]
    Setup {
        /// Interface name.
        iface: String,
        /// The step that failed.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// A system call failed while moving frames.
    #[error("{iface}: {what}: {source}")]
    Io {
        /// Interface name.
        iface: String,
        /// The operation that failed.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The other end of an in-memory port is gone.
    #[error("in-memory peer disconnected")]
    Disconnected,
    /// The link is down (an in-memory port's simulated link,
    /// [`MemoryPort::link_control`]).
    #[error("{iface}: link down: {}", cause.describe())]
    LinkDown {
        /// Port name.
        iface: String,
        /// Why.
        cause: LinkDown,
    },
}

impl PortError {
    /// `Some` when the error means the port's link is gone or down (the
    /// driver then marks the port down and tries to reopen it), `None` for
    /// errors that end the run. `AF_PACKET` reports a deleted interface as
    /// `ENXIO`/`ENODEV` and an interface going down as `ENETDOWN` (the
    /// socket's pending error, once, on the next receive).
    pub fn link_down(&self) -> Option<LinkDown> {
        match self {
            PortError::LinkDown { cause, .. } => Some(*cause),
            PortError::Io { source, .. } => match source.raw_os_error()? {
                libc::ENXIO | libc::ENODEV => Some(LinkDown::Gone),
                libc::ENETDOWN => Some(LinkDown::Error),
                _ => None,
            },
            _ => None,
        }
    }
}

/// A buffer for one frame.
///
/// For receive, the port fills it; read the frame with [`FrameBuf::frame`].
/// For send, write the frame into [`FrameBuf::space_mut`] and call
/// [`FrameBuf::set_len`], or use [`FrameBuf::set_frame`].
#[derive(Clone)]
pub struct FrameBuf {
    data: Box<[u8]>,
    len: usize,
}

impl std::fmt::Debug for FrameBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameBuf")
            .field("len", &self.len)
            .field("capacity", &self.capacity_bytes())
            .finish()
    }
}

impl Default for FrameBuf {
    fn default() -> Self {
        FrameBuf::with_capacity(DEFAULT_FRAME_CAPACITY_BYTES)
    }
}

impl FrameBuf {
    /// A buffer for frames of up to `capacity_bytes`.
    pub fn with_capacity(capacity_bytes: usize) -> Self {
        FrameBuf {
            data: vec![0u8; capacity_bytes].into_boxed_slice(),
            len: 0,
        }
    }

    /// `n` buffers of the default capacity.
    pub fn batch(n: usize) -> Vec<FrameBuf> {
        (0..n).map(|_| FrameBuf::default()).collect()
    }

    /// Largest frame this buffer holds, bytes.
    pub fn capacity_bytes(&self) -> usize {
        self.data.len()
    }

    /// The frame.
    pub fn frame(&self) -> &[u8] {
        &self.data[..self.len]
    }

    /// The frame, writable.
    pub fn frame_mut(&mut self) -> &mut [u8] {
        &mut self.data[..self.len]
    }

    /// Frame length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the buffer holds no frame.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole writable area for building a frame to send.
    pub fn space_mut(&mut self) -> &mut [u8] {
        &mut self.data
    }

    /// Sets the frame length after writing into [`FrameBuf::space_mut`]
    /// (clamped to the capacity).
    pub fn set_len(&mut self, len_bytes: usize) {
        self.len = len_bytes.min(self.capacity_bytes());
    }

    /// Copies `frame` in (truncated to the capacity).
    pub fn set_frame(&mut self, frame: &[u8]) {
        let n = frame.len().min(self.capacity_bytes());
        self.space_mut()[..n].copy_from_slice(&frame[..n]);
        self.set_len(n);
    }
}

/// A link endpoint that moves frames in batches. See the module doc.
pub trait Port {
    /// Name for logs and errors (interface name for `AF_PACKET`).
    fn name(&self) -> &str;

    /// Receives up to `bufs.len()` frames without blocking; returns how many
    /// were written to `bufs[..n]` (0 if none are waiting).
    fn recv_batch(&mut self, bufs: &mut [FrameBuf]) -> Result<usize, PortError>;

    /// Sends the frames in `bufs` in order without blocking; returns how many
    /// leading frames were accepted. The rest should be offered again later.
    fn send_batch(&mut self, bufs: &[FrameBuf]) -> Result<usize, PortError>;

    /// Receives up to `bufs.len()` frames without blocking and hands each
    /// to `each`, in order; returns how many. A port with a receive ring
    /// hands out each frame in its slot (no copy; `bufs` unused); the
    /// default receives into `bufs` with [`Port::recv_batch`].
    fn recv_with(
        &mut self,
        bufs: &mut [FrameBuf],
        each: &mut dyn FnMut(&[u8]),
    ) -> Result<usize, PortError> {
        let n = self.recv_batch(bufs)?;
        for b in &bufs[..n] {
            each(b.frame());
        }
        Ok(n)
    }

    /// Sends frames written in place: calls `fill` with each free transmit
    /// slot in turn until it returns `None` or no slot is free; `fill`
    /// writes one frame at the slot's start and returns its length. Frames
    /// longer than the slot or the link's MTU are dropped and counted by
    /// the port. The frames go to the kernel before this returns (see
    /// [`Port::tx_pending`] for those it refused for now). Returns how many
    /// were sent, or `None` if the port has no transmit ring (the default;
    /// use [`Port::send_batch`]), in which case `fill` was not called.
    fn send_with(
        &mut self,
        fill: &mut dyn FnMut(&mut [u8]) -> Option<usize>,
    ) -> Result<Option<usize>, PortError> {
        let _ = fill;
        Ok(None)
    }

    /// True if frames the port accepted wait for the kernel, which refused
    /// them for now (its queue toward the peer was full): send again soon.
    /// Ports that hand every accepted frame over at once say false.
    fn tx_pending(&self) -> bool {
        false
    }

    /// Blocks until a frame is waiting or `timeout` passes (`None` = no
    /// limit). Returns true if a frame is waiting. May wake spuriously.
    fn wait_readable(&mut self, timeout: Option<std::time::Duration>) -> Result<bool, PortError>;

    /// Frames that reached the port since the last call but were lost
    /// before they could be received (the kernel's receive buffer or ring
    /// was full). Ports that cannot lose frames report 0.
    fn take_rx_lost(&mut self) -> Result<u64, PortError> {
        Ok(0)
    }

    /// A file descriptor that polls readable when a frame is waiting, so one
    /// thread can wait on many ports at once; `None` for ports without one.
    fn poll_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }

    /// Looks whether the link is usable now, without moving frames
    /// (`AF_PACKET`: the interface still has the index the port is bound
    /// to, and is `IFF_UP` and `IFF_RUNNING`). `Ok(None)`: up, or the port
    /// cannot tell. Called every [`crate::driver::LINK_CHECK_INTERVAL`],
    /// off the packet path.
    fn link_check(&mut self) -> Result<Option<LinkDown>, PortError> {
        Ok(None)
    }

    /// Tries to make a down port usable again (`AF_PACKET`: resolve the
    /// interface by name, which may give a new index, and open a fresh
    /// socket with the same settings). `Ok(true)`: the port is up and its
    /// [`Port::poll_fd`] may have changed; `Ok(false)`: not yet (or the
    /// port cannot reopen, the default).
    fn reopen(&mut self) -> Result<bool, PortError> {
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_frame_truncates_to_capacity() {
        let mut b = FrameBuf::with_capacity(8);
        b.set_frame(&[7u8; 20]);
        assert_eq!(b.len(), 8);
        assert_eq!(b.frame(), &[7u8; 8]);
    }
}
