//! IPv4, IPv6 and UDP headers, smoltcp style.
//!
//! For each header there is a zero-copy view (`Ipv4Packet<T>`, `Ipv6Packet<T>`,
//! `UdpPacket<T>`) over any `T: AsRef<[u8]>` and a small owned `*Repr` with
//! `parse`, `emit` and `buffer_len`.
//!
//! Contract: once `new_checked` (or `check_len`) has succeeded, no accessor
//! panics. `new_unchecked` is for emitting into a buffer the caller sized
//! with `buffer_len`. All multi-byte fields are network byte order. Lengths
//! are bytes.
//!
//! Spec: RFC 791 (IPv4), RFC 1071 (checksum), RFC 8200 (IPv6), RFC 768 (UDP),
//! RFC 3168 / roce-semantics R-ECN-1, R-ECN-2 (ECN codepoints, CE marking with
//! checksum update), R-ROCE-6 (RoCEv2 sends UDP checksum 0).

use std::net::{Ipv4Addr, Ipv6Addr};

/// Errors from parsing IP and UDP headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IpError {
    /// The buffer is shorter than the header or the length fields claim.
    #[error("buffer too short for the header or its length fields")]
    Truncated,
    /// The version nibble is not the one expected.
    #[error("unexpected IP version {0}")]
    Version(u8),
    /// IPv4 header checksum does not verify.
    #[error("bad IPv4 header checksum")]
    Checksum,
    /// A length field is inconsistent (IHL < 5, total length < header length, ...).
    #[error("inconsistent length field")]
    Malformed,
}

use super::ethernet::enum_with_unknown;

enum_with_unknown! {
    /// IP protocol / IPv6 next header numbers.
    pub enum IpProtocol(u8) {
        /// ICMP.
        Icmp = 1,
        /// TCP.
        Tcp = 6,
        /// UDP.
        Udp = 17,
        /// ICMPv6.
        Icmpv6 = 58,
    }
}

/// The two ECN bits of the IPv4 TOS / IPv6 traffic class (RFC 3168, R-ECN-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// 00: not ECN-capable.
    NotEct,
    /// 01: ECN-capable transport (1).
    Ect1,
    /// 10: ECN-capable transport (0).
    Ect0,
    /// 11: congestion experienced.
    Ce,
}

impl Ecn {
    /// Decodes the low two bits of `bits`.
    pub fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The two-bit codepoint.
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }

    /// True for ECT(0) and ECT(1), the codepoints a CE mark may replace (R-ECN-2).
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// RFC 1071 one's-complement sum of `data`, folded, not complemented
/// (`p4_target`'s routine, shared with the compiled pipeline's `csum16`).
pub fn ones_complement_sum(data: &[u8]) -> u16 {
    p4_target::externs::ones_complement_sum(&[data])
}

// ---------------------------------------------------------------- IPv4

mod ipv4_field {
    use core::ops::Range;
    pub(super) const VER_IHL: usize = 0;
    pub(super) const TOS: usize = 1;
    pub(super) const LENGTH: Range<usize> = 2..4;
    pub(super) const IDENT: Range<usize> = 4..6;
    pub(super) const FLG_OFF: Range<usize> = 6..8;
    pub(super) const TTL: usize = 8;
    pub(super) const PROTOCOL: usize = 9;
    pub(super) const CHECKSUM: Range<usize> = 10..12;
    pub(super) const SRC_ADDR: Range<usize> = 12..16;
    pub(super) const DST_ADDR: Range<usize> = 16..20;
}

/// Length of an IPv4 header without options, in bytes.
pub const IPV4_HEADER_LEN: usize = 20;

/// A read/write view of an IPv4 packet.
#[derive(Debug, Clone)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// Wraps a buffer without checking its length.
    pub fn new_unchecked(buffer: T) -> Self {
        Ipv4Packet { buffer }
    }

    /// Wraps a buffer and runs [`Self::check_len`].
    pub fn new_checked(buffer: T) -> Result<Self, IpError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the buffer holds the header and the `total_len` bytes
    /// claimed. A buffer longer than `total_len` (e.g. with trailing padding)
    /// is accepted.
    pub fn check_len(&self) -> Result<(), IpError> {
        let len = self.buffer.as_ref().len();
        if len < IPV4_HEADER_LEN {
            return Err(IpError::Truncated);
        }
        let hl = usize::from(self.header_len());
        if hl < IPV4_HEADER_LEN {
            return Err(IpError::Malformed);
        }
        if len < hl {
            return Err(IpError::Truncated);
        }
        let total = usize::from(self.total_len());
        if total < hl {
            return Err(IpError::Malformed);
        }
        if len < total {
            return Err(IpError::Truncated);
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Version nibble.
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[ipv4_field::VER_IHL] >> 4
    }

    /// Header length in bytes (IHL × 4).
    pub fn header_len(&self) -> u8 {
        (self.buffer.as_ref()[ipv4_field::VER_IHL] & 0x0F) * 4
    }

    /// The whole TOS byte (DSCP ‖ ECN).
    pub fn tos(&self) -> u8 {
        self.buffer.as_ref()[ipv4_field::TOS]
    }

    /// DSCP (upper six bits of TOS).
    pub fn dscp(&self) -> u8 {
        self.tos() >> 2
    }

    /// ECN codepoint (lower two bits of TOS).
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.tos())
    }

    /// Total length (header + payload) in bytes.
    pub fn total_len(&self) -> u16 {
        let b = &self.buffer.as_ref()[ipv4_field::LENGTH];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Identification field.
    pub fn ident(&self) -> u16 {
        let b = &self.buffer.as_ref()[ipv4_field::IDENT];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Don't-fragment flag.
    pub fn dont_frag(&self) -> bool {
        self.buffer.as_ref()[ipv4_field::FLG_OFF.start] & 0x40 != 0
    }

    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[ipv4_field::TTL]
    }

    /// Payload protocol.
    pub fn protocol(&self) -> IpProtocol {
        IpProtocol::from(self.buffer.as_ref()[ipv4_field::PROTOCOL])
    }

    /// Header checksum as carried.
    pub fn checksum(&self) -> u16 {
        let b = &self.buffer.as_ref()[ipv4_field::CHECKSUM];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Source address.
    pub fn src_addr(&self) -> Ipv4Addr {
        let b = &self.buffer.as_ref()[ipv4_field::SRC_ADDR];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    /// Destination address.
    pub fn dst_addr(&self) -> Ipv4Addr {
        let b = &self.buffer.as_ref()[ipv4_field::DST_ADDR];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    /// True when the header checksum verifies.
    pub fn verify_checksum(&self) -> bool {
        let hl = usize::from(self.header_len());
        ones_complement_sum(&self.buffer.as_ref()[..hl]) == 0xFFFF
    }

    /// The payload, `total_len − header_len` bytes.
    pub fn payload(&self) -> &[u8] {
        let hl = usize::from(self.header_len());
        let total = usize::from(self.total_len());
        &self.buffer.as_ref()[hl..total]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    /// Sets version 4 and the header length in bytes (must be a multiple of 4).
    pub fn set_version_and_header_len(&mut self, header_len: u8) {
        self.buffer.as_mut()[ipv4_field::VER_IHL] = 0x40 | ((header_len / 4) & 0x0F);
    }

    /// Sets the whole TOS byte.
    pub fn set_tos(&mut self, tos: u8) {
        self.buffer.as_mut()[ipv4_field::TOS] = tos;
    }

    /// Sets the total length.
    pub fn set_total_len(&mut self, len: u16) {
        self.buffer.as_mut()[ipv4_field::LENGTH].copy_from_slice(&len.to_be_bytes());
    }

    /// Sets the identification field.
    pub fn set_ident(&mut self, ident: u16) {
        self.buffer.as_mut()[ipv4_field::IDENT].copy_from_slice(&ident.to_be_bytes());
    }

    /// Sets flags (DF only) and a zero fragment offset.
    pub fn set_dont_frag(&mut self, df: bool) {
        let v: u16 = if df { 0x4000 } else { 0 };
        self.buffer.as_mut()[ipv4_field::FLG_OFF].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the time to live.
    pub fn set_ttl(&mut self, ttl: u8) {
        self.buffer.as_mut()[ipv4_field::TTL] = ttl;
    }

    /// Sets the payload protocol.
    pub fn set_protocol(&mut self, p: IpProtocol) {
        self.buffer.as_mut()[ipv4_field::PROTOCOL] = p.into();
    }

    /// Sets the checksum field verbatim.
    pub fn set_checksum(&mut self, c: u16) {
        self.buffer.as_mut()[ipv4_field::CHECKSUM].copy_from_slice(&c.to_be_bytes());
    }

    /// Sets the source address.
    pub fn set_src_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[ipv4_field::SRC_ADDR].copy_from_slice(&a.octets());
    }

    /// Sets the destination address.
    pub fn set_dst_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[ipv4_field::DST_ADDR].copy_from_slice(&a.octets());
    }

    /// Recomputes the header checksum over `header_len` bytes.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let hl = usize::from(self.header_len());
        let sum = ones_complement_sum(&self.buffer.as_ref()[..hl]);
        self.set_checksum(!sum);
    }

    /// Marks the packet CE if it is ECT(0)/ECT(1) and fixes the checksum
    /// (R-ECN-2). Returns true if the packet is CE afterwards.
    pub fn mark_ce(&mut self) -> bool {
        match self.ecn() {
            Ecn::Ce => true,
            Ecn::NotEct => false,
            Ecn::Ect0 | Ecn::Ect1 => {
                let tos = self.tos() | 0b11;
                self.set_tos(tos);
                self.fill_checksum();
                true
            }
        }
    }
}

/// Owned form of an IPv4 header without options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Repr {
    /// Source address.
    pub src_addr: Ipv4Addr,
    /// Destination address.
    pub dst_addr: Ipv4Addr,
    /// Payload protocol.
    pub protocol: IpProtocol,
    /// Payload length in bytes (total length − 20).
    pub payload_len: usize,
    /// DSCP, 0..=63.
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// Identification.
    pub ident: u16,
    /// Don't-fragment flag.
    pub dont_frag: bool,
    /// Time to live.
    pub ttl: u8,
}

impl Ipv4Repr {
    /// Parses a checked packet; rejects versions other than 4 and bad checksums.
    /// Options are skipped.
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv4Packet<T>) -> Result<Ipv4Repr, IpError> {
        p.check_len()?;
        if p.version() != 4 {
            return Err(IpError::Version(p.version()));
        }
        if !p.verify_checksum() {
            return Err(IpError::Checksum);
        }
        Ok(Ipv4Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            protocol: p.protocol(),
            payload_len: usize::from(p.total_len()) - usize::from(p.header_len()),
            dscp: p.dscp(),
            ecn: p.ecn(),
            ident: p.ident(),
            dont_frag: p.dont_frag(),
            ttl: p.ttl(),
        })
    }

    /// Header length this repr emits (no options).
    pub fn buffer_len(&self) -> usize {
        IPV4_HEADER_LEN
    }

    /// Writes the header (with a valid checksum) into the first 20 bytes of
    /// `p`. The total length is `20 + payload_len`, saturating at 65535.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Ipv4Packet<T>) {
        p.set_version_and_header_len(IPV4_HEADER_LEN as u8);
        p.set_tos((self.dscp << 2) | self.ecn.bits());
        let total = (IPV4_HEADER_LEN + self.payload_len).min(usize::from(u16::MAX)) as u16;
        p.set_total_len(total);
        p.set_ident(self.ident);
        p.set_dont_frag(self.dont_frag);
        p.set_ttl(self.ttl);
        p.set_protocol(self.protocol);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
        p.fill_checksum();
    }
}

// ---------------------------------------------------------------- IPv6

mod ipv6_field {
    use core::ops::Range;
    pub(super) const VER_TC_FLOW: Range<usize> = 0..4;
    pub(super) const LENGTH: Range<usize> = 4..6;
    pub(super) const NXT_HDR: usize = 6;
    pub(super) const HOP_LIMIT: usize = 7;
    pub(super) const SRC_ADDR: Range<usize> = 8..24;
    pub(super) const DST_ADDR: Range<usize> = 24..40;
}

/// Length of the fixed IPv6 header in bytes.
pub const IPV6_HEADER_LEN: usize = 40;

/// A read/write view of an IPv6 packet (fixed header; extension headers are
/// treated as payload).
#[derive(Debug, Clone)]
pub struct Ipv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv6Packet<T> {
    /// Wraps a buffer without checking its length.
    pub fn new_unchecked(buffer: T) -> Self {
        Ipv6Packet { buffer }
    }

    /// Wraps a buffer and runs [`Self::check_len`].
    pub fn new_checked(buffer: T) -> Result<Self, IpError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks the buffer holds the fixed header and `payload_len` bytes.
    pub fn check_len(&self) -> Result<(), IpError> {
        let len = self.buffer.as_ref().len();
        if len < IPV6_HEADER_LEN || len < IPV6_HEADER_LEN + usize::from(self.payload_len()) {
            return Err(IpError::Truncated);
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn word0(&self) -> u32 {
        let b = &self.buffer.as_ref()[ipv6_field::VER_TC_FLOW];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// Version nibble.
    pub fn version(&self) -> u8 {
        (self.word0() >> 28) as u8
    }

    /// Traffic class (DSCP ‖ ECN).
    pub fn traffic_class(&self) -> u8 {
        (self.word0() >> 20) as u8
    }

    /// DSCP (upper six bits of the traffic class).
    pub fn dscp(&self) -> u8 {
        self.traffic_class() >> 2
    }

    /// ECN codepoint.
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.traffic_class())
    }

    /// 20-bit flow label.
    pub fn flow_label(&self) -> u32 {
        self.word0() & 0xF_FFFF
    }

    /// Payload length in bytes.
    pub fn payload_len(&self) -> u16 {
        let b = &self.buffer.as_ref()[ipv6_field::LENGTH];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Next header.
    pub fn next_header(&self) -> IpProtocol {
        IpProtocol::from(self.buffer.as_ref()[ipv6_field::NXT_HDR])
    }

    /// Hop limit.
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[ipv6_field::HOP_LIMIT]
    }

    /// Source address.
    pub fn src_addr(&self) -> Ipv6Addr {
        let mut o = [0u8; 16];
        o.copy_from_slice(&self.buffer.as_ref()[ipv6_field::SRC_ADDR]);
        Ipv6Addr::from(o)
    }

    /// Destination address.
    pub fn dst_addr(&self) -> Ipv6Addr {
        let mut o = [0u8; 16];
        o.copy_from_slice(&self.buffer.as_ref()[ipv6_field::DST_ADDR]);
        Ipv6Addr::from(o)
    }

    /// The payload (`payload_len` bytes after the fixed header).
    pub fn payload(&self) -> &[u8] {
        let end = IPV6_HEADER_LEN + usize::from(self.payload_len());
        &self.buffer.as_ref()[IPV6_HEADER_LEN..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6Packet<T> {
    fn set_word0(&mut self, w: u32) {
        self.buffer.as_mut()[ipv6_field::VER_TC_FLOW].copy_from_slice(&w.to_be_bytes());
    }

    /// Sets version 6, traffic class and flow label in one go.
    pub fn set_version_tc_flow(&mut self, traffic_class: u8, flow_label: u32) {
        self.set_word0((6 << 28) | (u32::from(traffic_class) << 20) | (flow_label & 0xF_FFFF));
    }

    /// Sets the traffic class, keeping the flow label.
    pub fn set_traffic_class(&mut self, tc: u8) {
        let fl = self.flow_label();
        self.set_version_tc_flow(tc, fl);
    }

    /// Sets the payload length.
    pub fn set_payload_len(&mut self, len: u16) {
        self.buffer.as_mut()[ipv6_field::LENGTH].copy_from_slice(&len.to_be_bytes());
    }

    /// Sets the next header.
    pub fn set_next_header(&mut self, p: IpProtocol) {
        self.buffer.as_mut()[ipv6_field::NXT_HDR] = p.into();
    }

    /// Sets the hop limit.
    pub fn set_hop_limit(&mut self, h: u8) {
        self.buffer.as_mut()[ipv6_field::HOP_LIMIT] = h;
    }

    /// Sets the source address.
    pub fn set_src_addr(&mut self, a: Ipv6Addr) {
        self.buffer.as_mut()[ipv6_field::SRC_ADDR].copy_from_slice(&a.octets());
    }

    /// Sets the destination address.
    pub fn set_dst_addr(&mut self, a: Ipv6Addr) {
        self.buffer.as_mut()[ipv6_field::DST_ADDR].copy_from_slice(&a.octets());
    }

    /// Marks the packet CE if it is ECT (R-ECN-2; IPv6 has no header checksum).
    /// Returns true if the packet is CE afterwards.
    pub fn mark_ce(&mut self) -> bool {
        match self.ecn() {
            Ecn::Ce => true,
            Ecn::NotEct => false,
            Ecn::Ect0 | Ecn::Ect1 => {
                let tc = self.traffic_class() | 0b11;
                self.set_traffic_class(tc);
                true
            }
        }
    }
}

/// Owned form of the fixed IPv6 header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Repr {
    /// Source address.
    pub src_addr: Ipv6Addr,
    /// Destination address.
    pub dst_addr: Ipv6Addr,
    /// Next header.
    pub next_header: IpProtocol,
    /// Payload length in bytes.
    pub payload_len: usize,
    /// DSCP, 0..=63.
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// 20-bit flow label.
    pub flow_label: u32,
    /// Hop limit.
    pub hop_limit: u8,
}

impl Ipv6Repr {
    /// Parses a checked packet; rejects versions other than 6.
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv6Packet<T>) -> Result<Ipv6Repr, IpError> {
        p.check_len()?;
        if p.version() != 6 {
            return Err(IpError::Version(p.version()));
        }
        Ok(Ipv6Repr {
            src_addr: p.src_addr(),
            dst_addr: p.dst_addr(),
            next_header: p.next_header(),
            payload_len: usize::from(p.payload_len()),
            dscp: p.dscp(),
            ecn: p.ecn(),
            flow_label: p.flow_label(),
            hop_limit: p.hop_limit(),
        })
    }

    /// Header length this repr emits.
    pub fn buffer_len(&self) -> usize {
        IPV6_HEADER_LEN
    }

    /// Writes the fixed header into the first 40 bytes of `p`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Ipv6Packet<T>) {
        p.set_version_tc_flow((self.dscp << 2) | self.ecn.bits(), self.flow_label);
        p.set_payload_len(self.payload_len.min(usize::from(u16::MAX)) as u16);
        p.set_next_header(self.next_header);
        p.set_hop_limit(self.hop_limit);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
    }
}

// ---------------------------------------------------------------- UDP

mod udp_field {
    use core::ops::Range;
    pub(super) const SRC_PORT: Range<usize> = 0..2;
    pub(super) const DST_PORT: Range<usize> = 2..4;
    pub(super) const LENGTH: Range<usize> = 4..6;
    pub(super) const CHECKSUM: Range<usize> = 6..8;
}

/// Length of the UDP header in bytes.
pub const UDP_HEADER_LEN: usize = 8;

/// A read/write view of a UDP datagram.
#[derive(Debug, Clone)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    /// Wraps a buffer without checking its length.
    pub fn new_unchecked(buffer: T) -> Self {
        UdpPacket { buffer }
    }

    /// Wraps a buffer and runs [`Self::check_len`].
    pub fn new_checked(buffer: T) -> Result<Self, IpError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks the buffer holds the header and the `len` bytes claimed.
    pub fn check_len(&self) -> Result<(), IpError> {
        let buf_len = self.buffer.as_ref().len();
        if buf_len < UDP_HEADER_LEN {
            return Err(IpError::Truncated);
        }
        let l = usize::from(self.len());
        if l < UDP_HEADER_LEN {
            return Err(IpError::Malformed);
        }
        if buf_len < l {
            return Err(IpError::Truncated);
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        let b = &self.buffer.as_ref()[udp_field::SRC_PORT];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        let b = &self.buffer.as_ref()[udp_field::DST_PORT];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Length field (header + payload), bytes.
    pub fn len(&self) -> u16 {
        let b = &self.buffer.as_ref()[udp_field::LENGTH];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// True if the length field says there is no payload.
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) <= UDP_HEADER_LEN
    }

    /// Checksum as carried (0 = none, as RoCEv2 sends it).
    pub fn checksum(&self) -> u16 {
        let b = &self.buffer.as_ref()[udp_field::CHECKSUM];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// The payload (`len − 8` bytes).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[UDP_HEADER_LEN..usize::from(self.len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpPacket<T> {
    /// Sets the source port.
    pub fn set_src_port(&mut self, v: u16) {
        self.buffer.as_mut()[udp_field::SRC_PORT].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the destination port.
    pub fn set_dst_port(&mut self, v: u16) {
        self.buffer.as_mut()[udp_field::DST_PORT].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the length field.
    pub fn set_len(&mut self, v: u16) {
        self.buffer.as_mut()[udp_field::LENGTH].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the checksum field verbatim.
    pub fn set_checksum(&mut self, v: u16) {
        self.buffer.as_mut()[udp_field::CHECKSUM].copy_from_slice(&v.to_be_bytes());
    }
}

/// Owned form of a UDP header. `emit` writes checksum 0 (R-ROCE-6: RoCEv2
/// does not use the UDP checksum over IPv4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Payload length in bytes.
    pub payload_len: usize,
}

impl UdpRepr {
    /// Parses a checked datagram. The checksum is not verified (R-ROCE-6).
    pub fn parse<T: AsRef<[u8]>>(p: &UdpPacket<T>) -> Result<UdpRepr, IpError> {
        p.check_len()?;
        Ok(UdpRepr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            payload_len: usize::from(p.len()) - UDP_HEADER_LEN,
        })
    }

    /// Header length in bytes.
    pub fn buffer_len(&self) -> usize {
        UDP_HEADER_LEN
    }

    /// Writes the header with checksum 0.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut UdpPacket<T>) {
        p.set_src_port(self.src_port);
        p.set_dst_port(self.dst_port);
        p.set_len((UDP_HEADER_LEN + self.payload_len).min(usize::from(u16::MAX)) as u16);
        p.set_checksum(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // IPv4 + UDP header of the CNP in E-11 (roce-semantics §14).
    static IPV4_CNP: [u8; 28] = [
        0x45, 0xc0, 0x00, 0x3c, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x25, 0xef, 0x0a, 0x00, 0x00,
        0x01, 0x0a, 0x00, 0x00, 0x02, 0xc2, 0x42, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
    ];

    fn padded() -> Vec<u8> {
        let mut v = IPV4_CNP.to_vec();
        v.resize(60, 0);
        v
    }

    #[test]
    fn ipv4_deconstruct() {
        let buf = padded();
        let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
        let r = Ipv4Repr::parse(&p).unwrap();
        assert_eq!(r.src_addr, Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(r.dst_addr, Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!(r.dscp, 48);
        assert_eq!(r.ecn, Ecn::NotEct);
        assert_eq!(r.protocol, IpProtocol::Udp);
        assert_eq!(r.payload_len, 40);
        assert!(r.dont_frag);
        assert_eq!(r.ttl, 64);
        let u = UdpPacket::new_checked(p.payload()).unwrap();
        let ur = UdpRepr::parse(&u).unwrap();
        assert_eq!(
            (ur.src_port, ur.dst_port, ur.payload_len),
            (0xC242, 4791, 32)
        );
    }

    #[test]
    fn ipv4_construct_matches_fixture() {
        let r = Ipv4Repr {
            src_addr: Ipv4Addr::new(10, 0, 0, 1),
            dst_addr: Ipv4Addr::new(10, 0, 0, 2),
            protocol: IpProtocol::Udp,
            payload_len: 40,
            dscp: 48,
            ecn: Ecn::NotEct,
            ident: 0,
            dont_frag: true,
            ttl: 64,
        };
        let mut buf = [0u8; 20];
        r.emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, IPV4_CNP[..20]);
        let mut ubuf = [0u8; 8];
        UdpRepr {
            src_port: 0xC242,
            dst_port: 4791,
            payload_len: 32,
        }
        .emit(&mut UdpPacket::new_unchecked(&mut ubuf[..]));
        assert_eq!(ubuf, IPV4_CNP[20..]);
    }

    #[test]
    fn ipv4_rejects_bad_input() {
        let mut buf = padded();
        assert_eq!(
            Ipv4Packet::new_checked(&buf[..10]).unwrap_err(),
            IpError::Truncated
        );
        assert_eq!(
            Ipv4Packet::new_checked(&buf[..40]).unwrap_err(),
            IpError::Truncated
        );
        buf[11] ^= 1;
        let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(Ipv4Repr::parse(&p).unwrap_err(), IpError::Checksum);
        buf[0] = 0x44;
        assert_eq!(
            Ipv4Packet::new_checked(&buf[..]).unwrap_err(),
            IpError::Malformed
        );
    }

    #[test]
    fn mark_ce_only_ect_and_fixes_checksum() {
        let mut buf = padded();
        // Not-ECT: untouched.
        let mut p = Ipv4Packet::new_unchecked(&mut buf[..]);
        assert!(!p.mark_ce());
        assert_eq!(p.tos(), 0xc0);
        // ECT(0): marked, checksum still valid.
        p.set_tos(0xc2);
        p.fill_checksum();
        assert!(p.mark_ce());
        assert_eq!(p.ecn(), Ecn::Ce);
        assert_eq!(p.dscp(), 48);
        assert!(p.verify_checksum());
    }

    #[test]
    fn ipv6_roundtrip() {
        let r = Ipv6Repr {
            src_addr: "fe80::1".parse().unwrap(),
            dst_addr: "fe80::2".parse().unwrap(),
            next_header: IpProtocol::Udp,
            payload_len: 8,
            dscp: 26,
            ecn: Ecn::Ect0,
            flow_label: 0x12345,
            hop_limit: 64,
        };
        let mut buf = [0u8; 48];
        r.emit(&mut Ipv6Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf[0], 0x66);
        let mut p = Ipv6Packet::new_checked(&mut buf[..]).unwrap();
        assert_eq!(Ipv6Repr::parse(&p).unwrap(), r);
        assert!(p.mark_ce());
        assert_eq!(p.flow_label(), 0x12345);
        assert_eq!(p.dscp(), 26);
        assert_eq!(
            Ipv6Packet::new_checked(&buf[..47]).unwrap_err(),
            IpError::Truncated
        );
    }

    #[test]
    fn open_enum_roundtrips_unknown() {
        assert_eq!(IpProtocol::from(99), IpProtocol::Unknown(99));
        assert_eq!(u8::from(IpProtocol::Unknown(99)), 99);
        assert_eq!(u8::from(IpProtocol::Udp), 17);
    }
}
