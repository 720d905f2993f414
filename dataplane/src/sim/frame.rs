//! The frame the simulator moves around: the whole Ethernet frame, byte for
//! byte (no FCS), as a host or switch put it on the wire, plus what the
//! link counters need to know about it.
//!
//! Contract: [`SimFrame::bytes`] is exactly what the sender wrote, so a P4
//! program in a simulated switch parses what it would parse live and a
//! receiving RNIC checks the real ICRC. Serialisation uses
//! [`SimFrame::wire_bytes`] ([`crate::wire::ethernet::wire_len`]: padded to
//! the 60-byte minimum, plus FCS, preamble and inter-frame gap). The byte
//! buffers are pooled by the simulator; moving a frame moves a `Vec`, it
//! does not copy the bytes.

use crate::wire::ethernet::{WIRE_OVERHEAD_BYTES, wire_len};

/// A frame in flight.
#[derive(Clone, Default)]
pub struct SimFrame {
    bytes: Vec<u8>,
    /// Priority the sender sent it on (data), for per-priority link counters.
    pub priority: u8,
    /// True for MAC Control frames (not counted as data).
    pub control: bool,
}

impl std::fmt::Debug for SimFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimFrame")
            .field("len", &self.bytes.len())
            .field("priority", &self.priority)
            .field("control", &self.control)
            .finish()
    }
}

impl SimFrame {
    /// A frame holding `bytes`.
    pub fn new(bytes: Vec<u8>, priority: u8, control: bool) -> Self {
        SimFrame {
            bytes,
            priority,
            control,
        }
    }

    /// The frame's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Gives the byte buffer back (for the pool).
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Frame length in bytes (no FCS).
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True for a zero-length frame.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Bytes the frame occupies on the wire (min-size padding, FCS,
    /// preamble, IFG).
    pub fn wire_bytes(&self) -> u64 {
        wire_len(self.len(), WIRE_OVERHEAD_BYTES) as u64
    }
}
