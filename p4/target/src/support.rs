//! Types every generated program uses, written once here instead of in
//! every generated file: the parser cursor, the per-pass environment, header
//! stacks, varbit values, the `exit` signal and the result of `apply()`.
//! Generated code imports them with one `use`; nothing here is
//! program-specific.

use crate::table::EntryRef;
use crate::v1model::{CloneRequest, StandardMetadata};

/// Raised by `exit`: unwinds the whole control chain.
#[derive(Clone, Copy, Debug)]
pub struct Exit;

/// What `t.apply()` returns.
#[derive(Clone, Copy, Debug)]
pub struct ApplyResult {
    /// An entry matched.
    pub hit: bool,
    /// The id of the action that ran (0 when none).
    pub action_run: u32,
}

/// The parser's view of the packet: bytes and a bit cursor.
#[derive(Debug)]
pub struct PacketIn<'a> {
    /// The whole packet.
    pub data: &'a [u8],
    /// Bits consumed so far.
    pub off_bits: usize,
}

impl PacketIn<'_> {
    /// `lookahead` of `width` bits, or `None` past the end.
    #[inline]
    pub fn lookahead(&self, width: u32) -> Option<u128> {
        if self.data.len() * 8 < self.off_bits + width as usize {
            return None;
        }
        Some(crate::packet::read_bits(self.data, self.off_bits, width))
    }
}

/// Per-pass state the architecture keeps outside the P4 parameters: what
/// externs read (clock, length, payload) and the requests they make
/// (clone, resubmit, recirculate, truncate, drop), copied back into the
/// standard metadata when the pass ends.
#[derive(Debug)]
pub struct Env<'a> {
    /// The packet's bytes (for `*_with_payload` checksums; empty in controls).
    pub data: &'a [u8],
    /// Where the unparsed payload starts in `data`.
    pub payload_offset: usize,
    /// `packet_length`, for counters and meters.
    pub packet_length: u32,
    /// The switch clock in ns, for meters.
    pub now_ns: u64,
    /// Pending clone request.
    pub clone_request: Option<CloneRequest>,
    /// Pending resubmit (field list).
    pub resubmit: Option<u8>,
    /// Pending recirculate (field list).
    pub recirculate: Option<u8>,
    /// Pending truncation.
    pub truncate_len: Option<u32>,
    /// `verify_checksum` failed.
    pub checksum_error: bool,
    /// `assert`/`assume` failed: drop.
    pub drop: bool,
    /// The entry the current table hit, for direct meters.
    pub entry: Option<EntryRef>,
}

impl<'a> Env<'a> {
    /// The environment of a pass over a packet with standard metadata `sm`.
    #[inline]
    pub fn new(data: &'a [u8], payload_offset: usize, sm: &StandardMetadata) -> Self {
        Env {
            data,
            payload_offset,
            packet_length: sm.packet_length,
            now_ns: sm.now_ns,
            clone_request: sm.clone_request,
            resubmit: sm.resubmit,
            recirculate: sm.recirculate,
            truncate_len: sm.truncate_len,
            checksum_error: sm.checksum_error != 0,
            drop: false,
            entry: None,
        }
    }

    /// Writes the pass's requests back into the standard metadata.
    #[inline]
    pub fn store(&self, sm: &mut StandardMetadata) {
        sm.clone_request = self.clone_request;
        sm.resubmit = self.resubmit;
        sm.recirculate = self.recirculate;
        sm.truncate_len = self.truncate_len;
        if self.checksum_error {
            sm.checksum_error = 1;
        }
        if self.drop {
            sm.mark_to_drop();
        }
    }
}

/// A `varbit<8 * N>` value: bytes and the current length in bits. Two
/// values are equal when they have the same length and the same bytes in
/// use (P4_16 §8.9.1); storage past the length does not count.
#[derive(Clone, Copy, Debug)]
pub struct Varbit<const N: usize> {
    /// Current length in bits (a multiple of 8).
    pub len_bits: u32,
    /// Storage.
    pub bytes: [u8; N],
}

impl<const N: usize> Default for Varbit<N> {
    fn default() -> Self {
        Varbit {
            len_bits: 0,
            bytes: [0; N],
        }
    }
}

impl<const N: usize> PartialEq for Varbit<N> {
    fn eq(&self, other: &Self) -> bool {
        self.len_bits == other.len_bits && self.used() == other.used()
    }
}

impl<const N: usize> Eq for Varbit<N> {}

impl<const N: usize> Varbit<N> {
    /// The bytes in use.
    pub fn used(&self) -> &[u8] {
        &self.bytes[..((self.len_bits / 8) as usize).min(N)]
    }
}

/// A header stack: elements and the `nextIndex`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stack<H, const N: usize> {
    /// The elements.
    pub elems: [H; N],
    /// `nextIndex`.
    pub next: u32,
}

impl<H: Copy + Default, const N: usize> Default for Stack<H, N> {
    fn default() -> Self {
        Stack {
            elems: [H::default(); N],
            next: 0,
        }
    }
}

/// v1model `csum16` over the packed field list followed by `payload`.
pub fn csum16_with_payload(fields: &[u8], payload: &[u8]) -> u128 {
    let mut sum: u64 = 0;
    let mut hi: Option<u8> = None;
    for &b in fields.iter().chain(payload.iter()) {
        match hi.take() {
            None => hi = Some(b),
            Some(h) => sum += ((h as u64) << 8) | b as u64,
        }
    }
    if let Some(h) = hi {
        sum += (h as u64) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    (!(sum as u16)) as u128
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varbits_compare_length_and_bytes_in_use_only() {
        let mut a = Varbit::<4> {
            len_bits: 16,
            bytes: [1, 2, 3, 4],
        };
        let b = Varbit::<4> {
            len_bits: 16,
            bytes: [1, 2, 9, 9],
        };
        assert_eq!(a, b, "bytes past the length are storage, not value");
        a.len_bits = 24;
        assert_ne!(a, b, "same prefix, different length");
        a.len_bits = 16;
        a.bytes[1] = 7;
        assert_ne!(a, b);
    }

    #[test]
    fn csum16_with_payload_pads_an_odd_byte_and_folds() {
        // RFC 1071 example words 0x0001 0xf203 0xf4f5 0xf6f7 -> sum 0xddf2, checksum 0x220d.
        assert_eq!(
            csum16_with_payload(&[0x00, 0x01, 0xf2, 0x03], &[0xf4, 0xf5, 0xf6, 0xf7]),
            0x220d
        );
        assert_eq!(csum16_with_payload(&[0x01], &[]), !0x0100u16 as u128);
    }

    #[test]
    fn env_round_trips_requests_into_standard_metadata() {
        let mut sm = StandardMetadata::arriving(3, 100, 5_000);
        let mut env = Env::new(&[], 0, &sm);
        assert_eq!((env.packet_length, env.now_ns), (100, 5_000));
        env.resubmit = Some(1);
        env.drop = true;
        env.store(&mut sm);
        assert_eq!(sm.resubmit, Some(1));
        assert_eq!(sm.egress_spec, crate::v1model::DROP_PORT);
    }
}
