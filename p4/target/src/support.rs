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
/// generator decides which). The deparser takes such a header's bytes from
/// there ([`PacketOut::wire`]) and patches only the fields a statement may
/// write, so fields no statement reads or writes need not be decoded at all
/// (the generated `extract` skips them when the cursor is on a byte
/// boundary). In `verifyChecksum`, where no statement before it writes
/// those fields, their checksum is summed from these bytes
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
        WireAt::aligned(off_bits).unwrap_or(WireAt::NONE)
    }

    /// Extracted at bit `off_bits`, if that is a byte boundary (and an
    /// offset a `WireAt` holds): the test the generated `extract` takes its
    /// byte-aligned path by, which may leave fields undecoded.
    #[inline]
    pub fn aligned(off_bits: usize) -> Option<WireAt> {
        if off_bits.is_multiple_of(8) {
            u32::try_from(off_bits / 8 + 1).ok().map(WireAt)
        } else {
            None
        }
    }

    /// Extracted at byte `off`.
    #[inline]
    pub fn at_byte(off: usize) -> WireAt {
        WireAt::at_bits(off.saturating_mul(8))
    }

    /// The byte offset it was extracted at, if it was.
    #[inline]
    pub fn byte(self) -> Option<usize> {
        (self.0 as usize).checked_sub(1)
    }

    /// Bits `bit..bit + width` of the `len`-byte header extracted here from
    /// `data` (the frame given to the parser): a field `extract` left
    /// undecoded, for a trace. 0 if it was not extracted from `data`.
    pub fn read_bits(self, data: &[u8], len: usize, bit: usize, width: u32) -> u128 {
        match self.byte().and_then(|at| data.get(at..at + len)) {
            Some(header) => crate::packet::read_bits(header, bit, width),
            None => 0,
        }
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
///
/// Headers with a [`WireAt`] are emitted from the bytes they were parsed
/// from ([`PacketOut::wire`]). In place, those bytes may be written over by
/// a header emitted earlier at another offset (one inserted, removed or
/// moved in front): before the first such write, the parsed headers' bytes
/// from there on are saved at the front of the spill buffer (nothing has
/// spilled yet: spilling stops writes to the frame), and read from there
/// after.
#[derive(Debug)]
pub struct PacketOut<'a> {
    /// The output buffer, or the frame being rewritten.
    buf: &'a mut Vec<u8>,
    /// Appending: the frame as parsed.
    src: &'a [u8],
    /// In place: bytes written over the parsed headers so far.
    at: usize,
    /// In place: the parsed headers' length (where the payload starts).
    room: usize,
    /// In place: the frame's bytes from `saved_from` to `room` as parsed,
    /// then the headers past `room`; `None` appends to `buf`.
    spill: Option<&'a mut Vec<u8>>,
    /// In place: where the saved bytes start in the frame; `room` while
    /// nothing is saved. The spilled headers start at `room - saved_from`.
    saved_from: usize,
    /// In place while emits still go to the frame (nothing has spilled):
    /// `at + 1`, the [`WireAt`] of a header parsed where the next emit goes,
    /// which [`PacketOut::wire`] then leaves where it is; [`NOT_IN_FRAME`]
    /// otherwise. One field for the usual case's test, which the deparser
    /// makes once a header, instead of the spill buffer's length against
    /// `room - saved_from`.
    next_wire: usize,
}

/// [`PacketOut`]'s `next_wire` once emits no longer go to the frame: no
/// [`WireAt`] (a `u32`) equals it.
const NOT_IN_FRAME: usize = usize::MAX;

impl<'a> PacketOut<'a> {
    /// Emits append to `out`; `src` is the frame as parsed (the slice
    /// given to the parser), which headers with a [`WireAt`] are copied
    /// from.
    #[inline]
    pub fn append(out: &'a mut Vec<u8>, src: &'a [u8]) -> Self {
        PacketOut {
            buf: out,
            src,
            at: 0,
            room: 0,
            spill: None,
            saved_from: 0,
            next_wire: NOT_IN_FRAME,
        }
    }

    /// Emits overwrite `frame` from its start, where the parser consumed
    /// `parsed` bytes; `spill` (cleared here) takes what does not fit, and
    /// parsed bytes an emit writes over before they are read.
    #[inline]
    pub fn in_place(frame: &'a mut Vec<u8>, parsed: usize, spill: &'a mut Vec<u8>) -> Self {
        spill.clear();
        let room = parsed.min(frame.len());
        PacketOut {
            room,
            buf: frame,
            src: &[],
            at: 0,
            spill: Some(spill),
            saved_from: room,
            next_wire: 1,
        }
    }

    /// In place: whether nothing has spilled, so emits still go to the frame.
    #[inline(always)]
    fn in_frame(&self) -> bool {
        self.next_wire != NOT_IN_FRAME
    }

    /// In place, emits in the frame so far end at `end`.
    #[inline(always)]
    fn written_to(&mut self, end: usize) {
        self.at = end;
        self.next_wire = end + 1;
    }

    /// Emits `bytes` (one header's wire form).
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) {
        let end = self.at + bytes.len();
        if self.in_frame() && end <= self.room {
            self.save_before_overwrite();
            self.buf[self.at..end].copy_from_slice(bytes);
            self.written_to(end);
            return;
        }
        match self.spill.as_deref_mut() {
            None => self.buf.extend_from_slice(bytes),
            Some(spill) => {
                spill.extend_from_slice(bytes);
                self.next_wire = NOT_IN_FRAME;
            }
        }
    }

    /// A header of `LEN` bytes extracted at `wire`, emitted from the bytes
    /// it was parsed from: they are written to the output (in place where
    /// it was parsed, nothing is copied) and returned, for the caller to
    /// patch the fields a statement may have changed since. `None`
    /// (nothing done) if it was not extracted from a byte boundary of the
    /// frame: the caller then emits the header's fields.
    #[inline(always)]
    pub fn wire<const LEN: usize>(&mut self, wire: WireAt) -> Option<&mut [u8; LEN]> {
        let at = self.at;
        // In place where it was parsed (the usual case): nothing to copy.
        if wire.0 as usize == self.next_wire && at + LEN <= self.room {
            self.written_to(at + LEN);
            return self.buf[at..].first_chunk_mut::<LEN>();
        }
        let from = wire.byte()?;
        if self.spill.is_none() {
            // Appending (`Pipeline::deparse`): a copy of a
            // length known here, which inlines as a few moves where a
            // call with the length as an argument costs a `memcpy` call.
            let bytes = self.src.get(from..)?.first_chunk::<LEN>()?;
            let start = self.buf.len();
            self.buf.extend_from_slice(bytes);
            return self.buf[start..].first_chunk_mut::<LEN>();
        }
        self.wire_moved(from, LEN)?.try_into().ok()
    }

    /// [`Self::wire`] in place of a header not where it was parsed (a
    /// header before it was inserted, removed or changed length): its bytes
    /// are moved. Out of line, so that the usual case inlines as a test.
    #[inline(never)]
    fn wire_moved(&mut self, from: usize, len: usize) -> Option<&mut [u8]> {
        if from + len > self.room {
            return None;
        }
        let (at, end) = (self.at, self.at + len);
        if self.in_frame() && end <= self.room {
            self.save_before_overwrite();
            match self.saved(from, len) {
                Some(saved) => {
                    let saved = saved.start..saved.end;
                    let spill = self.spill.as_deref().expect("in place");
                    self.buf[at..end].copy_from_slice(&spill[saved]);
                }
                None => self.buf.copy_within(from..from + len, at),
            }
            self.written_to(end);
            return Some(&mut self.buf[at..end]);
        }
        self.next_wire = NOT_IN_FRAME;
        let saved = self.saved(from, len);
        let spill = self.spill.as_deref_mut().expect("in place");
        let start = spill.len();
        match saved {
            Some(saved) => spill.extend_from_within(saved),
            None => spill.extend_from_slice(&self.buf[from..from + len]),
        }
        Some(&mut spill[start..])
    }

    /// In place: where the parsed bytes `from..from + len` are in the spill
    /// buffer, if they were saved; else they are still in the frame
    /// (unchanged, or patched as the header they belong to was emitted
    /// where it was parsed, to the same values).
    fn saved(&self, from: usize, len: usize) -> Option<std::ops::Range<usize>> {
        let from = from.checked_sub(self.saved_from)?;
        Some(from..from + len)
    }

    /// In place, before bytes are written at `at` for another header than
    /// the one parsed there: saves the parsed bytes from `at` on, once, so
    /// that a header emitted after can still be read as it was parsed.
    /// Bytes before `at` hold headers emitted where they were parsed, each
    /// as it was parsed but for its patched fields.
    #[inline]
    fn save_before_overwrite(&mut self) {
        if self.saved_from == self.room
            && let Some(spill) = self.spill.as_deref_mut()
        {
            spill.extend_from_slice(&self.buf[self.at..self.room]);
            self.saved_from = self.at;
        }
    }

    /// In place: closes the gap between the emitted headers and the
    /// payload (the payload moves only if the headers changed length).
    #[inline]
    pub fn finish(self) {
        if let Some(spill) = self.spill {
            let spilled = self.room - self.saved_from;
            if self.at != self.room || spill.len() != spilled {
                self.buf.splice(self.at..self.room, spill.drain(spilled..));
            }
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
    use proptest::prelude::*;

    #[test]
    fn a_header_is_emitted_from_its_wire_bytes_wherever_it_goes() {
        let mut scratch = Vec::new();
        // Parsed: a 2-byte header at 0, a 3-byte one at 2; payload after.
        let mut frame = vec![1, 2, 3, 4, 5, 0xee];
        let mut out = PacketOut::in_place(&mut frame, 5, &mut scratch);
        out.put(&[9, 9]);
        out.wire::<3>(WireAt::at_byte(2)).expect("extracted")[1] = 0;
        out.finish();
        assert_eq!(frame, [9, 9, 3, 0, 5, 0xee], "in place, patched");
        // A header pushed in front writes over the second one's bytes
        // before it is emitted: they come from the copy saved first.
        let mut frame = vec![1, 2, 3, 4, 5, 0xee];
        let mut out = PacketOut::in_place(&mut frame, 5, &mut scratch);
        out.put(&[7, 7, 7]);
        assert_eq!(
            *out.wire::<3>(WireAt::at_byte(2)).expect("saved"),
            [3, 4, 5]
        );
        out.finish();
        assert_eq!(frame, [7, 7, 7, 3, 4, 5, 0xee]);
        // The first header dropped: the second moves down.
        let mut frame = vec![1, 2, 3, 4, 5, 0xee];
        let mut out = PacketOut::in_place(&mut frame, 5, &mut scratch);
        out.wire::<3>(WireAt::at_byte(2)).expect("extracted");
        out.finish();
        assert_eq!(frame, [3, 4, 5, 0xee]);
        // Emitted in the other order.
        let mut frame = vec![1, 2, 3, 4, 5, 0xee];
        let mut out = PacketOut::in_place(&mut frame, 5, &mut scratch);
        out.wire::<3>(WireAt::at_byte(2)).expect("extracted");
        out.wire::<2>(WireAt::at_byte(0)).expect("saved");
        out.finish();
        assert_eq!(frame, [3, 4, 5, 1, 2, 0xee]);
        // Appending: copied from the frame as parsed.
        let mut v = vec![0];
        let mut out = PacketOut::append(&mut v, &frame);
        out.wire::<2>(WireAt::at_byte(1)).expect("extracted")[0] = 8;
        assert_eq!(v, [0, 8, 5]);
        // Not extracted from a byte boundary: the caller packs its fields.
        assert!(
            PacketOut::append(&mut v, &frame)
                .wire::<1>(WireAt::at_bits(4))
                .is_none()
        );
        assert!(
            PacketOut::in_place(&mut frame, 5, &mut scratch)
                .wire::<1>(WireAt::NONE)
                .is_none()
        );
        // Equality of headers ignores where they came from.
        assert_eq!(WireAt::at_bits(8), WireAt::NONE);
    }

    /// One emit of a deparser: a parsed header (by index) from its wire
    /// bytes with one byte patched, or bytes of a header of its own.
    #[derive(Clone, Debug)]
    enum Emit {
        Wire(usize, u8),
        Put(Vec<u8>),
    }

    /// The first byte [`PacketOut::wire`] returns for a header of `len`
    /// bytes (1 to 4, the lengths the proptest draws).
    fn wire_first<'o>(out: &'o mut PacketOut<'_>, wire: WireAt, len: usize) -> Option<&'o mut u8> {
        match len {
            1 => out.wire::<1>(wire).map(|d| &mut d[0]),
            2 => out.wire::<2>(wire).map(|d| &mut d[0]),
            3 => out.wire::<3>(wire).map(|d| &mut d[0]),
            4 => out.wire::<4>(wire).map(|d| &mut d[0]),
            _ => unreachable!("the proptest draws 1 to 4 bytes"),
        }
    }

    fn emits(headers: usize) -> impl Strategy<Value = Vec<Emit>> {
        let emit = prop_oneof![
            (0..headers, any::<u8>()).prop_map(|(i, b)| Emit::Wire(i, b)),
            proptest::collection::vec(any::<u8>(), 0..6).prop_map(Emit::Put),
        ];
        proptest::collection::vec(emit, 0..8)
    }

    proptest! {
        /// Any emits in place (headers in or out of parse order, dropped,
        /// repeated, inserted) leave the frame as appending them does,
        /// followed by the payload.
        #[test]
        fn in_place_emits_equal_appended_ones(
            (lens, emits) in proptest::collection::vec(1usize..5, 1..5)
                .prop_flat_map(|lens| { let n = lens.len(); (Just(lens), emits(n)) }),
            payload in proptest::collection::vec(any::<u8>(), 0..4),
        ) {
            let parsed: usize = lens.iter().sum();
            let frame: Vec<u8> = (1..=parsed as u8).chain(payload.iter().copied()).collect();
            let starts: Vec<usize> =
                lens.iter().scan(0, |at, l| { *at += l; Some(*at - l) }).collect();
            let run = |out: &mut PacketOut<'_>| {
                for e in &emits {
                    match e {
                        Emit::Wire(i, b) => {
                            let first = wire_first(out, WireAt::at_byte(starts[*i]), lens[*i]);
                            *first.expect("extracted") = *b;
                        }
                        Emit::Put(bytes) => out.put(bytes),
                    }
                }
            };
            let mut appended = Vec::new();
            run(&mut PacketOut::append(&mut appended, &frame));
            appended.extend_from_slice(&payload);
            let mut in_place = frame.clone();
            let mut scratch = Vec::new();
            let mut out = PacketOut::in_place(&mut in_place, parsed, &mut scratch);
            run(&mut out);
            out.finish();
            prop_assert_eq!(in_place, appended);
        }
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
        let mut out = PacketOut::append(&mut v, &[]);
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
