//! The seam between a compiled program and whatever drives it: the switch
//! core (`dataplane::switch::Switch`, which the daemon, the simulator and
//! the STF runner all use) or a test that calls the passes directly.
//!
//! A driver runs the v1model packet flow (parser → verifyChecksum → ingress →
//! replication/traffic manager → egress → computeChecksum → deparser) by
//! calling [`Pipeline::parse`], [`Pipeline::ingress`], [`Pipeline::egress`]
//! and [`Pipeline::deparse`] in that order, and acts on the standard metadata
//! in between (drop, unicast, multicast, clone, resubmit, recirculate).
//!
//! The packet's bytes stay with the driver: [`Pipeline::Packet`] holds the
//! parsed headers, user and standard metadata and the offset where the
//! unparsed payload starts, and `deparse` is given the same bytes back to
//! copy that payload. A driver that owns the frame's buffer calls
//! [`Pipeline::deparse_in_place`] instead, which rewrites the headers in
//! front of the payload and leaves the payload where it is (a RoCE WRITE
//! carries 1–4 KiB behind ~70 bytes of headers). Nothing here allocates per
//! packet, except the default `deparse_in_place` of a hand-written pipeline.

use crate::info::ProgramInfo;
use crate::runtime::Runtime;
use crate::v1model::StandardMetadata;

/// A compiled v1model program.
pub trait Pipeline: Send + 'static {
    /// Parsed headers, user metadata, standard metadata and payload offset of
    /// one packet between parse and deparse. `Clone` makes multicast copies
    /// and clones.
    type Packet: Clone + Send + std::fmt::Debug;

    /// The program's static description (P4Info facts).
    fn info(&self) -> &'static ProgramInfo;

    /// The program's tables, profiles, counters, meters and registers.
    fn runtime(&self) -> &Runtime;

    /// Mutable access, for control-plane writes between packets.
    fn runtime_mut(&mut self) -> &mut Runtime;

    /// Runs the parser and `verifyChecksum` on `data`. Never fails: a parser
    /// error is recorded in `parser_error` and, as v1model defines, the packet
    /// still goes through ingress with whatever was extracted so far.
    /// `meta` comes in with the arrival fields set (port, length, clock,
    /// instance type).
    fn parse(&mut self, data: &[u8], meta: StandardMetadata) -> Self::Packet;

    /// [`Pipeline::parse`] into `pkt`, which it overwrites entirely (the
    /// result is the same as `*pkt = self.parse(data, meta)`) if `pkt` is a
    /// packet this pipeline made (parsed, cloned or default) and processed
    /// since: compiled programs reset a header of a type only `extract`
    /// fills only if it is valid, as such a header invalid still holds its
    /// reset value (a packet whose fields were changed by other code than
    /// the program's may keep them). Compiled
    /// programs parse in place here: returning the packet struct by value
    /// costs a copy of a struct the parser has just written field by field,
    /// which stalls on store forwarding. Per-packet loops that keep a
    /// packet struct around should call this one.
    #[inline]
    fn parse_into(&mut self, data: &[u8], meta: StandardMetadata, pkt: &mut Self::Packet) {
        *pkt = self.parse(data, meta);
    }

    /// [`Pipeline::parse`] for a resubmitted or recirculated packet: the
    /// user metadata starts with the fields of `field_list` copied from
    /// `from` (the packet of the pass before) and zero elsewhere, *before*
    /// the parser runs, as in bmv2, so the parser sees them.
    fn parse_preserving(
        &mut self,
        data: &[u8],
        meta: StandardMetadata,
        from: &Self::Packet,
        field_list: u8,
    ) -> Self::Packet;

    /// Runs the ingress control.
    fn ingress(&mut self, pkt: &mut Self::Packet);

    /// Runs the egress control. The driver has set `egress_port`,
    /// `egress_rid`, `instance_type` and the queueing fields first.
    fn egress(&mut self, pkt: &mut Self::Packet);

    /// Runs `computeChecksum` and the deparser, writing the packet's bytes
    /// (emitted headers, then `data[payload_offset..]`) to `out`, which is
    /// cleared first. `data` must be the slice given to `parse`.
    fn deparse(&mut self, pkt: &mut Self::Packet, data: &[u8], out: &mut Vec<u8>);

    /// [`Pipeline::deparse`] in place: `frame` holds the bytes given to
    /// `parse` and, on return, the packet's bytes (the same as `deparse`
    /// would write to `out`). Compiled programs overwrite the parsed headers
    /// with the emitted ones and move the payload only when the two differ
    /// in length; the payload is never copied otherwise. This default, for
    /// hand-written pipelines, deparses into a new buffer.
    fn deparse_in_place(&mut self, pkt: &mut Self::Packet, frame: &mut Vec<u8>) {
        let mut out = Vec::with_capacity(frame.len());
        self.deparse(pkt, frame, &mut out);
        *frame = out;
    }

    /// The packet's standard metadata.
    fn meta(pkt: &Self::Packet) -> &StandardMetadata;

    /// The packet's standard metadata, mutable.
    fn meta_mut(pkt: &mut Self::Packet) -> &mut StandardMetadata;

    /// Sets every user-metadata field to zero (bmv2's `reset_metadata`),
    /// leaving headers and standard metadata alone: an egress-to-egress
    /// clone keeps the headers as egress left them but starts its metadata
    /// afresh, with only its field list copied back.
    fn reset_user_metadata(pkt: &mut Self::Packet);

    /// Copies the user-metadata fields annotated `@field_list(field_list)`
    /// from `from` to `to` (resubmit, recirculate and
    /// `clone_preserving_field_list`).
    fn preserve_fields(from: &Self::Packet, to: &mut Self::Packet, field_list: u8);
}
