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

    /// `packet_in.length()`: the whole packet's length in bytes, however
    /// much of it has been extracted.
    #[inline]
    pub fn length(&self) -> u32 {
        u32::try_from(self.data.len()).unwrap_or(u32::MAX)
    }
}

/// Where in the frame a header was extracted from (its first byte), kept
/// in headers of the types a program never writes as a whole (the code
/// generator decides which): such a header emitted in place at the same
/// offset is already there ([`PacketOut::unchanged`]), or is there but for
/// the fields a statement may write ([`PacketOut::patch`]). In
/// `verifyChecksum`, where no statement before it writes those fields,
/// their checksum is summed from these bytes
/// ([`crate::externs::csum16_wire_sum`]). Equal to every other `WireAt`,
/// so a header's P4 equality is still its validity and fields.
///
/// Held as the offset plus one, so that "not extracted" is zero and a
/// packet's headers still reset to all zero bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct WireAt(u32);

impl WireAt {
    /// Not extracted from the frame (a default or constructed header).
    pub const NONE: WireAt = WireAt(0);

    /// Extracted at bit `off_bits`: a byte offset if it is whole.
    #[inline]
    pub fn at_bits(off_bits: usize) -> WireAt {
        if off_bits.is_multiple_of(8) {
            WireAt::at_byte(off_bits / 8)
        } else {
            WireAt::NONE
        }
    }

    /// Extracted at byte `off` (where the parser's cursor is known to be
    /// whole: no test of the bits below it).
    #[inline]
    pub fn at_byte(off: usize) -> WireAt {
        match u32::try_from(off + 1) {
            Ok(v) => WireAt(v),
            Err(_) => WireAt::NONE,
        }
    }

    /// The byte offset it was extracted at, if it was.
    #[inline]
    pub fn byte(self) -> Option<usize> {
        (self.0 as usize).checked_sub(1)
    }
}

impl PartialEq for WireAt {
    fn eq(&self, _: &WireAt) -> bool {
        true
    }
}

impl Eq for WireAt {}

/// The deparser's view of the output (`packet_out`): emitted headers are
/// either appended to a buffer ([`PacketOut::append`], for
/// `Pipeline::deparse`), or written over the headers the parser consumed
/// at the front of the frame ([`PacketOut::in_place`], for
/// `Pipeline::deparse_in_place`). In place, headers that no longer fit
/// there go to a spill buffer, in order, and [`PacketOut::finish`] moves
/// the payload once to make room for them; when the emitted headers take
/// exactly the bytes the parsed ones did (a router rewriting MACs, TTL and
/// checksum), nothing moves and the payload is never touched.
#[derive(Debug)]
pub struct PacketOut<'a> {
    /// The output buffer, or the frame being rewritten.
    buf: &'a mut Vec<u8>,
    /// In place: bytes written over the parsed headers so far.
    at: usize,
    /// In place: the parsed headers' length (where the payload starts).
    room: usize,
    /// In place: headers past `room`; `None` appends to `buf`.
    spill: Option<&'a mut Vec<u8>>,
}

impl<'a> PacketOut<'a> {
    /// Emits append to `out`.
    #[inline]
    pub fn append(out: &'a mut Vec<u8>) -> Self {
        PacketOut {
            buf: out,
            at: 0,
            room: 0,
            spill: None,
        }
    }

    /// Emits overwrite `frame` from its start, where the parser consumed
    /// `parsed` bytes; `spill` (cleared here) takes what does not fit.
    #[inline]
    pub fn in_place(frame: &'a mut Vec<u8>, parsed: usize, spill: &'a mut Vec<u8>) -> Self {
        spill.clear();
        PacketOut {
            room: parsed.min(frame.len()),
            buf: frame,
            at: 0,
            spill: Some(spill),
        }
    }

    /// Emits `bytes` (one header's wire form).
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) {
        match &mut self.spill {
            None => self.buf.extend_from_slice(bytes),
            Some(spill) => {
                let end = self.at + bytes.len();
                if spill.is_empty() && end <= self.room {
                    self.buf[self.at..end].copy_from_slice(bytes);
                    self.at = end;
                } else {
                    spill.extend_from_slice(bytes);
                }
            }
        }
    }

    /// In place, a header of `len` bytes extracted at `wire` and never
    /// changed since, emitted where it was parsed: its bytes are already
    /// there, so the cursor moves past them and `true` is returned. `false`
    /// (nothing done) anywhere else: appending, after a spill, or at
    /// another offset; the caller then emits the header's fields.
    #[inline]
    pub fn unchanged(&mut self, wire: WireAt, len: usize) -> bool {
        match &self.spill {
            Some(spill)
                if spill.is_empty()
                    && wire.0 as usize == self.at + 1
                    && self.at + len <= self.room =>
            {
                self.at += len;
                true
            }
            _ => false,
        }
    }

    /// In place, a header of `len` bytes extracted at `wire` and changed
    /// since in some fields only, emitted where it was parsed: its bytes
    /// there, for the caller to patch those fields (the cursor moves past
    /// them). `None` (nothing done) wherever [`Self::unchanged`] says
    /// `false`; the caller then emits the header's fields.
    #[inline]
    pub fn patch(&mut self, wire: WireAt, len: usize) -> Option<&mut [u8]> {
        let at = self.at;
        if self.unchanged(wire, len) {
            Some(&mut self.buf[at..at + len])
        } else {
            None
        }
    }

    /// In place: closes the gap between the emitted headers and the
    /// payload (the payload moves only if the headers changed length).
    #[inline]
    pub fn finish(self) {
        if let Some(spill) = self.spill
            && (self.at != self.room || !spill.is_empty())
        {
            self.buf.splice(self.at..self.room, spill.drain(..));
        }
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
    /// Clone request made in this pass (`None` until one is: a request of
    /// an earlier pass stays in the standard metadata, see [`Env::store`]).
    pub clone_request: Option<CloneRequest>,
    /// Resubmit (field list) requested in this pass.
    pub resubmit: Option<u8>,
    /// Recirculate (field list) requested in this pass.
    pub recirculate: Option<u8>,
    /// Truncation requested in this pass.
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
    /// The requests start empty rather than copied from `sm`: generated code
    /// only ever sets them, so writing back those set ([`Env::store`]) ends
    /// the same as copying in and out, without reading fields the switch
    /// has just stored (a wide load over narrow stores misses store
    /// forwarding, and the parser's pass starts right after them).
    #[inline]
    pub fn new(data: &'a [u8], payload_offset: usize, sm: &StandardMetadata) -> Self {
        Env {
            data,
            payload_offset,
            packet_length: sm.packet_length,
            now_ns: sm.now_ns,
            clone_request: None,
            resubmit: None,
            recirculate: None,
            truncate_len: None,
            checksum_error: sm.checksum_error != 0,
            drop: false,
            entry: None,
        }
    }

    /// Writes the requests made in this pass into the standard metadata
    /// (a later request replaces an earlier one, as a repeated call does).
    #[inline]
    pub fn store(&self, sm: &mut StandardMetadata) {
        if self.clone_request.is_some() {
            sm.clone_request = self.clone_request;
        }
        if self.resubmit.is_some() {
            sm.resubmit = self.resubmit;
        }
        if self.recirculate.is_some() {
            sm.recirculate = self.recirculate;
        }
        if self.truncate_len.is_some() {
            sm.truncate_len = self.truncate_len;
        }
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

/// Puts `headers` in place of the first `parsed` bytes of `frame` (the
/// headers the parser consumed), keeping the payload behind them: an
/// overwrite when the lengths are equal, else the payload moves once.
#[inline]
pub fn replace_headers(frame: &mut Vec<u8>, parsed: usize, headers: &[u8]) {
    let parsed = parsed.min(frame.len());
    if headers.len() == parsed {
        frame[..parsed].copy_from_slice(headers);
    } else {
        frame.splice(..parsed, headers.iter().copied());
    }
}

/// Runs `f` in a function of its own that the optimiser treats as rarely
/// called: generated stage entry points run the traced instance of their
/// code through it, so the untraced instance is laid out and inlined as if
/// it were the only one.
#[cold]
#[inline(never)]
pub fn cold<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// v1model `csum16` over the packed field list followed by `payload`.
pub fn csum16_with_payload(fields: &[u8], payload: &[u8]) -> u128 {
    u128::from(!crate::externs::ones_complement_sum(&[fields, payload]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unchanged_header_is_left_in_place_only_where_it_was_parsed() {
        // Parsed: a 2-byte header at 0, a 3-byte one at 2; payload after.
        let mut frame = vec![1, 2, 3, 4, 5, 0xee];
        let mut spill = Vec::new();
        let mut out = PacketOut::in_place(&mut frame, 5, &mut spill);
        out.put(&[9, 9]);
        assert!(out.unchanged(WireAt::at_bits(16), 3));
        out.finish();
        assert_eq!(frame, [9, 9, 3, 4, 5, 0xee]);
        // A header pushed in front: the second one is no longer where it
        // was parsed, so it must be emitted from its fields.
        let mut out = PacketOut::in_place(&mut frame, 5, &mut spill);
        out.put(&[7, 7, 7]);
        assert!(!out.unchanged(WireAt::at_bits(16), 3));
        assert!(!out.unchanged(WireAt::NONE, 3));
        // Unaligned or appended: never.
        assert!(!PacketOut::append(&mut Vec::new()).unchanged(WireAt::at_bits(0), 1));
        assert!(!PacketOut::in_place(&mut frame, 5, &mut spill).unchanged(WireAt::at_bits(4), 1));
        // Equality of headers ignores where they came from.
        assert_eq!(WireAt::at_bits(8), WireAt::NONE);

        // Patched where it was parsed: the header's own bytes, and the
        // next header continues after them.
        let mut frame = vec![1, 2, 3, 4, 5, 6, 7];
        let mut out = PacketOut::in_place(&mut frame, 6, &mut spill);
        out.put(&[9, 9]);
        out.patch(WireAt::at_bits(16), 3).expect("in place")[1] = 0;
        out.put(&[8]);
        assert!(out.patch(WireAt::at_bits(16), 1).is_none());
        out.finish();
        assert_eq!(frame, [9, 9, 3, 0, 5, 8, 7]);
    }

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
    fn packet_out_in_place_moves_the_payload_only_when_headers_change_length() {
        let mut spill = Vec::new();
        // Same length: overwritten.
        let mut frame = vec![1, 2, 3, 4, 9, 9];
        let mut out = PacketOut::in_place(&mut frame, 4, &mut spill);
        out.put(&[5, 6]);
        out.put(&[7, 8]);
        out.finish();
        assert_eq!(frame, [5, 6, 7, 8, 9, 9]);
        // Shorter: the payload moves down.
        let mut out = PacketOut::in_place(&mut frame, 4, &mut spill);
        out.put(&[1]);
        out.finish();
        assert_eq!(frame, [1, 9, 9]);
        // Longer: what does not fit spills, in order, ahead of the payload.
        let mut out = PacketOut::in_place(&mut frame, 1, &mut spill);
        out.put(&[2, 3]);
        out.put(&[4]);
        out.finish();
        assert_eq!(frame, [2, 3, 4, 9, 9]);
        // Nothing emitted: the headers are gone.
        let out = PacketOut::in_place(&mut frame, 3, &mut spill);
        out.finish();
        assert_eq!(frame, [9, 9]);
        // Appending, as `deparse` does.
        let mut v = vec![0];
        let mut out = PacketOut::append(&mut v);
        out.put(&[1, 2]);
        out.finish();
        assert_eq!(v, [0, 1, 2]);
    }

    #[test]
    fn replace_headers_keeps_the_payload_whatever_the_header_length() {
        let mut frame = vec![1, 2, 3, 9, 9];
        replace_headers(&mut frame, 3, &[4, 5, 6]);
        assert_eq!(frame, [4, 5, 6, 9, 9]);
        replace_headers(&mut frame, 3, &[7]);
        assert_eq!(frame, [7, 9, 9], "a header removed");
        replace_headers(&mut frame, 1, &[1, 2, 3, 4]);
        assert_eq!(frame, [1, 2, 3, 4, 9, 9], "headers added");
        replace_headers(&mut frame, 100, &[0]);
        assert_eq!(frame, [0], "a parse past the end takes the whole frame");
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
        // A later pass that requests nothing keeps the earlier requests; one
        // that requests again replaces them.
        sm.truncate_len = Some(64);
        Env::new(&[], 0, &sm).store(&mut sm);
        assert_eq!((sm.resubmit, sm.truncate_len), (Some(1), Some(64)));
        let mut env = Env::new(&[], 0, &sm);
        env.truncate_len = Some(32);
        env.store(&mut sm);
        assert_eq!((sm.resubmit, sm.truncate_len), (Some(1), Some(32)));
    }
}
