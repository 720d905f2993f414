//! The frame the simulator moves around: the first bytes of an Ethernet
//! frame (enough for every header the switch and RNIC read) plus the length
//! the whole frame has on the wire.
//!
//! Contract: `bytes()` is the stored prefix (`≤ HEAD_CAP` bytes); `len()` is
//! the full frame length in bytes without FCS; serialisation uses
//! [`SimFrame::wire_bytes`] (padded to the 60-byte minimum, plus FCS,
//! preamble and inter-frame gap). Payload bytes are never materialised,
//! which keeps an event cheap; parsers here take lengths from the headers.
//! No allocation: the prefix is inline.

use crate::rnic::WIRE_OVERHEAD_BYTES;

/// Bytes of each frame the simulator keeps.
pub const HEAD_CAP: usize = 96;

/// Minimum Ethernet frame length without FCS.
pub const MIN_FRAME_BYTES: usize = 60;

/// A frame in flight or in a queue.
#[derive(Clone, Copy)]
pub struct SimFrame {
    head: [u8; HEAD_CAP],
    head_len: u8,
    len: u32,
    /// Priority the sender put it on (data), for per-priority link counters.
    pub priority: u8,
    /// True for MAC Control frames (not counted as data).
    pub control: bool,
}

impl std::fmt::Debug for SimFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimFrame")
            .field("len", &self.len)
            .field("head_len", &self.head_len)
            .field("priority", &self.priority)
            .field("control", &self.control)
            .finish()
    }
}

impl SimFrame {
    /// A zero-length frame with a zeroed buffer.
    pub fn empty() -> Self {
        SimFrame {
            head: [0; HEAD_CAP],
            head_len: 0,
            len: 0,
            priority: 0,
            control: false,
        }
    }

    /// A frame from whole `bytes` (truncated to `HEAD_CAP` if longer).
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut f = Self::empty();
        let n = bytes.len().min(HEAD_CAP);
        f.head[..n].copy_from_slice(&bytes[..n]);
        f.set_lens(n, bytes.len());
        f
    }

    /// The whole prefix buffer, for writing into.
    pub fn head_mut(&mut self) -> &mut [u8] {
        &mut self.head
    }

    /// Sets the stored prefix length and the full frame length.
    pub fn set_lens(&mut self, head_len: usize, len: usize) {
        self.head_len = head_len.min(HEAD_CAP) as u8;
        self.len = len.min(u32::MAX as usize) as u32;
    }

    /// The stored prefix.
    pub fn bytes(&self) -> &[u8] {
        &self.head[..usize::from(self.head_len)]
    }

    /// The stored prefix, mutably (header rewrites).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.head[..usize::from(self.head_len)]
    }

    /// Full frame length in bytes (no FCS).
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True for a zero-length frame.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the frame occupies on the wire (min-size padding, FCS,
    /// preamble, IFG).
    pub fn wire_bytes(&self) -> u64 {
        (self.len().max(MIN_FRAME_BYTES) + WIRE_OVERHEAD_BYTES) as u64
    }
}
