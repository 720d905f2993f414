//! RoCEv2 transport headers (BTH, RETH, AETH, ImmDt), the ICRC, the UDP
//! source-port entropy rule, the reference ECMP hash, and a builder/parser
//! for whole RoCEv2-over-IPv4 frames.
//!
//! Contract: views follow smoltcp (`new_checked` then no accessor panics);
//! `*Repr`s have `parse`/`emit`/`buffer_len`. Opcodes are an open enum, so an
//! unknown opcode round-trips. Nothing here allocates. Lengths are bytes.
//!
//! Frame layout (R-ROCE-1): Ethernet (14) / IPv4 (20) / UDP (8, dport 4791,
//! checksum 0, R-ROCE-6) / BTH (12) / [RETH 16 | AETH 4 | CNP pad 16] /
//! payload / pad to 4 bytes (BTH PadCnt) / ICRC (4, least-significant byte
//! first, R-ROCE-7). The IP total length and UDP length include the ICRC.
//!
//! The Ethernet header is written and read here with a private 14-byte helper
//! (untagged, EtherType 0x0800) so this module does not depend on the MAC
//! layer's types.
//!
//! Spec: roce-semantics §10 (R-ROCE-1..9), §9 (R-ECMP-3), §14 E-11..E-14;
//! scapy fixtures from p4runtime-subset §3.2.

use std::net::Ipv4Addr;

use super::ethernet::{
    EtherType, EthernetAddress, EthernetFrame, EthernetRepr, HEADER_LEN as ETH_HEADER_LEN,
    enum_with_unknown,
};
use super::ip::{
    Ecn, IPV4_HEADER_LEN, IpError, IpProtocol, Ipv4Packet, Ipv4Repr, UDP_HEADER_LEN, UdpPacket,
    UdpRepr,
};

/// UDP destination port of RoCEv2.
pub const ROCEV2_UDP_PORT: u16 = 4791;
/// Length of the Base Transport Header in bytes.
pub const BTH_LEN: usize = 12;
/// Length of the RDMA Extended Transport Header in bytes.
pub const RETH_LEN: usize = 16;
/// Length of the ACK Extended Transport Header in bytes.
pub const AETH_LEN: usize = 4;
/// Length of the Immediate Data header in bytes.
pub const IMMDT_LEN: usize = 4;
/// Length of the reserved padding after a CNP's BTH in bytes (R-ROCE-5).
pub const CNP_PAD_LEN: usize = 16;
/// Length of the invariant CRC trailer in bytes.
pub const ICRC_LEN: usize = 4;
/// Length of the untagged Ethernet header written by the frame builder.
pub const ETHERNET_HEADER_LEN: usize = 14;
/// The default partition key.
pub const DEFAULT_PKEY: u16 = 0xFFFF;

/// Errors from parsing RoCEv2 headers and frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RoceError {
    /// The buffer is shorter than the headers need.
    #[error("buffer too short for the RoCEv2 headers")]
    Truncated,
    /// An IPv4/UDP problem.
    #[error("IP/UDP: {0}")]
    Ip(#[from] IpError),
    /// Not IPv4 / not UDP / not dport 4791.
    #[error("not a RoCEv2 frame")]
    NotRoce,
    /// The buffer handed to `emit` is smaller than `buffer_len`.
    #[error("output buffer of {have} bytes, need {need}")]
    BufferTooSmall {
        /// Bytes available.
        have: usize,
        /// Bytes needed.
        need: usize,
    },
}

enum_with_unknown! {
    /// BTH opcode: transport (RC 0x00, UC 0x20, RD 0x40, UD 0x60) + operation
    /// (R-ROCE-3), plus CNP 0x81.
    pub enum Opcode(u8) {
        /// RC SEND first.
        RcSendFirst = 0x00,
        /// RC SEND middle.
        RcSendMiddle = 0x01,
        /// RC SEND last.
        RcSendLast = 0x02,
        /// RC SEND last with immediate.
        RcSendLastImm = 0x03,
        /// RC SEND only.
        RcSendOnly = 0x04,
        /// RC SEND only with immediate.
        RcSendOnlyImm = 0x05,
        /// RC RDMA WRITE first.
        RcWriteFirst = 0x06,
        /// RC RDMA WRITE middle.
        RcWriteMiddle = 0x07,
        /// RC RDMA WRITE last.
        RcWriteLast = 0x08,
        /// RC RDMA WRITE last with immediate.
        RcWriteLastImm = 0x09,
        /// RC RDMA WRITE only.
        RcWriteOnly = 0x0A,
        /// RC RDMA WRITE only with immediate.
        RcWriteOnlyImm = 0x0B,
        /// RC RDMA READ request.
        RcReadRequest = 0x0C,
        /// RC RDMA READ response first.
        RcReadResponseFirst = 0x0D,
        /// RC RDMA READ response middle.
        RcReadResponseMiddle = 0x0E,
        /// RC RDMA READ response last.
        RcReadResponseLast = 0x0F,
        /// RC RDMA READ response only.
        RcReadResponseOnly = 0x10,
        /// RC ACKNOWLEDGE.
        RcAcknowledge = 0x11,
        /// RC ATOMIC ACKNOWLEDGE.
        RcAtomicAcknowledge = 0x12,
        /// RC compare-and-swap.
        RcCompareSwap = 0x13,
        /// RC fetch-and-add.
        RcFetchAdd = 0x14,
        /// UD SEND only.
        UdSendOnly = 0x64,
        /// UD SEND only with immediate.
        UdSendOnlyImm = 0x65,
        /// Congestion notification packet.
        Cnp = 0x81,
    }
}

impl Opcode {
    /// True if a RETH follows the BTH (WRITE first/only, READ request; RC or UC).
    pub fn has_reth(self) -> bool {
        let v = u8::from(self);
        matches!(v & 0xE0, 0x00 | 0x20) && matches!(v & 0x1F, 0x06 | 0x0A | 0x0B | 0x0C)
    }

    /// True if an AETH follows the BTH (ACK, atomic ACK, READ response first/last/only).
    pub fn has_aeth(self) -> bool {
        let v = u8::from(self);
        matches!(v & 0xE0, 0x00 | 0x40) && matches!(v & 0x1F, 0x0D | 0x0F | 0x10 | 0x11 | 0x12)
    }

    /// True if an ImmDt header is present (SEND/WRITE "with immediate").
    pub fn has_immdt(self) -> bool {
        let v = u8::from(self);
        v & 0x80 == 0 && matches!(v & 0x1F, 0x03 | 0x05 | 0x09 | 0x0B)
    }
}

// ---------------------------------------------------------------- BTH

mod bth_field {
    use core::ops::Range;
    pub(super) const OPCODE: usize = 0;
    pub(super) const FLAGS: usize = 1;
    pub(super) const PKEY: Range<usize> = 2..4;
    pub(super) const FECN_BECN: usize = 4;
    pub(super) const DEST_QP: Range<usize> = 5..8;
    pub(super) const ACK_REQ: usize = 8;
    pub(super) const PSN: Range<usize> = 9..12;
}

fn be24(b: &[u8]) -> u32 {
    (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2])
}

fn put_be24(b: &mut [u8], v: u32) {
    b[0] = (v >> 16) as u8;
    b[1] = (v >> 8) as u8;
    b[2] = v as u8;
}

/// A read/write view of a Base Transport Header (R-ROCE-2).
#[derive(Debug, Clone)]
pub struct Bth<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Bth<T> {
    /// Wraps a buffer without checking its length.
    pub fn new_unchecked(buffer: T) -> Self {
        Bth { buffer }
    }

    /// Wraps a buffer and checks it holds 12 bytes.
    pub fn new_checked(buffer: T) -> Result<Self, RoceError> {
        let b = Self::new_unchecked(buffer);
        b.check_len()?;
        Ok(b)
    }

    /// Checks the buffer holds a whole BTH.
    pub fn check_len(&self) -> Result<(), RoceError> {
        if self.buffer.as_ref().len() < BTH_LEN {
            return Err(RoceError::Truncated);
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Opcode.
    pub fn opcode(&self) -> Opcode {
        Opcode::from(self.buffer.as_ref()[bth_field::OPCODE])
    }

    /// Solicited event bit.
    pub fn solicited(&self) -> bool {
        self.buffer.as_ref()[bth_field::FLAGS] & 0x80 != 0
    }

    /// MigReq bit.
    pub fn migreq(&self) -> bool {
        self.buffer.as_ref()[bth_field::FLAGS] & 0x40 != 0
    }

    /// Pad count (0..=3 bytes of padding before the ICRC).
    pub fn pad_count(&self) -> u8 {
        (self.buffer.as_ref()[bth_field::FLAGS] >> 4) & 0x3
    }

    /// Transport header version (0).
    pub fn tver(&self) -> u8 {
        self.buffer.as_ref()[bth_field::FLAGS] & 0x0F
    }

    /// Partition key.
    pub fn pkey(&self) -> u16 {
        let b = &self.buffer.as_ref()[bth_field::PKEY];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Forward ECN bit.
    pub fn fecn(&self) -> bool {
        self.buffer.as_ref()[bth_field::FECN_BECN] & 0x80 != 0
    }

    /// Backward ECN bit.
    pub fn becn(&self) -> bool {
        self.buffer.as_ref()[bth_field::FECN_BECN] & 0x40 != 0
    }

    /// Destination QP number (24 bits).
    pub fn dest_qp(&self) -> u32 {
        be24(&self.buffer.as_ref()[bth_field::DEST_QP])
    }

    /// AckReq bit.
    pub fn ack_req(&self) -> bool {
        self.buffer.as_ref()[bth_field::ACK_REQ] & 0x80 != 0
    }

    /// Packet sequence number (24 bits).
    pub fn psn(&self) -> u32 {
        be24(&self.buffer.as_ref()[bth_field::PSN])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Bth<T> {
    /// Sets the opcode.
    pub fn set_opcode(&mut self, op: Opcode) {
        self.buffer.as_mut()[bth_field::OPCODE] = op.into();
    }

    /// Sets SE, M, PadCnt and TVer together.
    pub fn set_flags(&mut self, solicited: bool, migreq: bool, pad_count: u8, tver: u8) {
        self.buffer.as_mut()[bth_field::FLAGS] = (u8::from(solicited) << 7)
            | (u8::from(migreq) << 6)
            | ((pad_count & 0x3) << 4)
            | (tver & 0x0F);
    }

    /// Sets the partition key.
    pub fn set_pkey(&mut self, v: u16) {
        self.buffer.as_mut()[bth_field::PKEY].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets FECN and BECN (reserved bits zero).
    pub fn set_fecn_becn(&mut self, fecn: bool, becn: bool) {
        self.buffer.as_mut()[bth_field::FECN_BECN] = (u8::from(fecn) << 7) | (u8::from(becn) << 6);
    }

    /// Sets the destination QP (low 24 bits used).
    pub fn set_dest_qp(&mut self, v: u32) {
        put_be24(&mut self.buffer.as_mut()[bth_field::DEST_QP], v);
    }

    /// Sets AckReq (reserved bits zero).
    pub fn set_ack_req(&mut self, v: bool) {
        self.buffer.as_mut()[bth_field::ACK_REQ] = u8::from(v) << 7;
    }

    /// Sets the PSN (low 24 bits used).
    pub fn set_psn(&mut self, v: u32) {
        put_be24(&mut self.buffer.as_mut()[bth_field::PSN], v);
    }
}

/// Owned form of a BTH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BthRepr {
    /// Opcode.
    pub opcode: Opcode,
    /// Solicited event.
    pub solicited: bool,
    /// MigReq.
    pub migreq: bool,
    /// Pad count, 0..=3.
    pub pad_count: u8,
    /// Partition key.
    pub pkey: u16,
    /// Forward ECN.
    pub fecn: bool,
    /// Backward ECN.
    pub becn: bool,
    /// Destination QP (24 bits).
    pub dest_qp: u32,
    /// AckReq.
    pub ack_req: bool,
    /// PSN (24 bits).
    pub psn: u32,
}

impl BthRepr {
    /// Parses a checked BTH.
    pub fn parse<T: AsRef<[u8]>>(b: &Bth<T>) -> Result<BthRepr, RoceError> {
        b.check_len()?;
        Ok(BthRepr {
            opcode: b.opcode(),
            solicited: b.solicited(),
            migreq: b.migreq(),
            pad_count: b.pad_count(),
            pkey: b.pkey(),
            fecn: b.fecn(),
            becn: b.becn(),
            dest_qp: b.dest_qp(),
            ack_req: b.ack_req(),
            psn: b.psn(),
        })
    }

    /// 12 bytes.
    pub fn buffer_len(&self) -> usize {
        BTH_LEN
    }

    /// Writes the header (TVer 0).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, b: &mut Bth<T>) {
        b.set_opcode(self.opcode);
        b.set_flags(self.solicited, self.migreq, self.pad_count, 0);
        b.set_pkey(self.pkey);
        b.set_fecn_becn(self.fecn, self.becn);
        b.set_dest_qp(self.dest_qp);
        b.set_ack_req(self.ack_req);
        b.set_psn(self.psn);
    }
}

// ---------------------------------------------------------------- RETH / AETH / ImmDt

/// Owned RDMA Extended Transport Header (R-ROCE-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RethRepr {
    /// Remote virtual address.
    pub virtual_addr: u64,
    /// Remote key.
    pub rkey: u32,
    /// DMA length of the whole message in bytes.
    pub dma_len: u32,
}

impl RethRepr {
    /// Parses the first 16 bytes of `b`.
    pub fn parse(b: &[u8]) -> Result<RethRepr, RoceError> {
        if b.len() < RETH_LEN {
            return Err(RoceError::Truncated);
        }
        let mut va = [0u8; 8];
        va.copy_from_slice(&b[0..8]);
        Ok(RethRepr {
            virtual_addr: u64::from_be_bytes(va),
            rkey: u32::from_be_bytes([b[8], b[9], b[10], b[11]]),
            dma_len: u32::from_be_bytes([b[12], b[13], b[14], b[15]]),
        })
    }

    /// 16 bytes.
    pub fn buffer_len(&self) -> usize {
        RETH_LEN
    }

    /// Writes into the first 16 bytes of `b` (which must be that long).
    pub fn emit(&self, b: &mut [u8]) {
        b[0..8].copy_from_slice(&self.virtual_addr.to_be_bytes());
        b[8..12].copy_from_slice(&self.rkey.to_be_bytes());
        b[12..16].copy_from_slice(&self.dma_len.to_be_bytes());
    }
}

/// AETH syndrome classes (R-ROCE-4, bits 7–5 of the syndrome).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AethSyndrome {
    /// ACK with a credit count (0x1F = unlimited).
    Ack {
        /// Credit count (low 5 bits).
        credits: u8,
    },
    /// Receiver-not-ready NAK with a timer code.
    RnrNak(u8),
    /// NAK with a code (0 PSN sequence error, 1 invalid request, ...).
    Nak(u8),
    /// Reserved class.
    Reserved(u8),
}

/// Owned ACK Extended Transport Header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AethRepr {
    /// Raw syndrome byte.
    pub syndrome: u8,
    /// Message sequence number (24 bits).
    pub msn: u32,
}

impl AethRepr {
    /// Parses the first 4 bytes of `b`.
    pub fn parse(b: &[u8]) -> Result<AethRepr, RoceError> {
        if b.len() < AETH_LEN {
            return Err(RoceError::Truncated);
        }
        Ok(AethRepr {
            syndrome: b[0],
            msn: be24(&b[1..4]),
        })
    }

    /// 4 bytes.
    pub fn buffer_len(&self) -> usize {
        AETH_LEN
    }

    /// Writes into the first 4 bytes of `b`.
    pub fn emit(&self, b: &mut [u8]) {
        b[0] = self.syndrome;
        put_be24(&mut b[1..4], self.msn);
    }

    /// Decodes the syndrome class.
    pub fn kind(&self) -> AethSyndrome {
        let low = self.syndrome & 0x1F;
        match self.syndrome >> 5 {
            0b000 => AethSyndrome::Ack { credits: low },
            0b001 => AethSyndrome::RnrNak(low),
            0b011 => AethSyndrome::Nak(low),
            _ => AethSyndrome::Reserved(self.syndrome),
        }
    }
}

/// Owned Immediate Data header (4 bytes, big-endian).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImmDtRepr {
    /// The immediate value.
    pub imm: u32,
}

impl ImmDtRepr {
    /// Parses the first 4 bytes of `b`.
    pub fn parse(b: &[u8]) -> Result<ImmDtRepr, RoceError> {
        if b.len() < IMMDT_LEN {
            return Err(RoceError::Truncated);
        }
        Ok(ImmDtRepr {
            imm: u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        })
    }

    /// 4 bytes.
    pub fn buffer_len(&self) -> usize {
        IMMDT_LEN
    }

    /// Writes into the first 4 bytes of `b`.
    pub fn emit(&self, b: &mut [u8]) {
        b[..4].copy_from_slice(&self.imm.to_be_bytes());
    }
}

// ---------------------------------------------------------------- ICRC

/// Computes the RoCEv2 ICRC (R-ROCE-7) of an IPv4 or IPv6 packet.
///
/// `ip_packet` starts at the IP header and ends just before the ICRC. The
/// masked fields (IPv4 TOS/TTL/checksum, IPv6 TC/flow label/hop limit, UDP
/// checksum, BTH byte 4) are treated as all-ones. Returns the CRC value;
/// the wire bytes are `value.to_le_bytes()`.
pub fn icrc(ip_packet: &[u8]) -> Result<u32, RoceError> {
    let first = *ip_packet.first().ok_or(RoceError::Truncated)?;
    let ip_len = match first >> 4 {
        4 => usize::from(first & 0x0F) * 4,
        6 => 40,
        v => return Err(RoceError::Ip(IpError::Version(v))),
    };
    let hdr_len = ip_len + UDP_HEADER_LEN + BTH_LEN;
    if ip_len < IPV4_HEADER_LEN || ip_packet.len() < hdr_len {
        return Err(RoceError::Truncated);
    }
    // Masked copy of IP + UDP + BTH (at most 60 + 8 + 12 bytes).
    let mut head = [0u8; 80];
    let head = &mut head[..hdr_len];
    head.copy_from_slice(&ip_packet[..hdr_len]);
    if first >> 4 == 4 {
        head[1] = 0xFF;
        head[8] = 0xFF;
        head[10] = 0xFF;
        head[11] = 0xFF;
    } else {
        head[0] |= 0x0F;
        head[1] = 0xFF;
        head[2] = 0xFF;
        head[3] = 0xFF;
        head[7] = 0xFF;
    }
    head[ip_len + 6] = 0xFF;
    head[ip_len + 7] = 0xFF;
    head[ip_len + UDP_HEADER_LEN + 4] = 0xFF;
    // CRC-32 (zlib's, via crc32fast like the P4 target's hashes) over the
    // LRH placeholder (8 bytes of ones), the masked headers and the rest.
    let mut crc = crc32fast::Hasher::new();
    crc.update(&[0xFF; 8]);
    crc.update(head);
    crc.update(&ip_packet[hdr_len..]);
    Ok(crc.finalize())
}

// ---------------------------------------------------------------- flow entropy

/// UDP source port from the two QP numbers (R-ROCE-9, E-13): the flow label
/// derived from `lqpn·rqpn`, folded into 0xC000..=0xFFFF.
pub fn udp_src_port_from_qpns(lqpn: u32, rqpn: u32) -> u16 {
    let mut v = u64::from(lqpn) * u64::from(rqpn);
    v ^= v >> 20;
    v ^= v >> 40;
    let fl = (v & 0xF_FFFF) as u32;
    (((fl & 0x3FFF) ^ ((fl & 0xF_C000) >> 14)) | 0xC000) as u16
}

// ---------------------------------------------------------------- whole frames

/// The extension header after the BTH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoceExt {
    /// None.
    None,
    /// RETH (WRITE first/only, READ request).
    Reth(RethRepr),
    /// AETH (ACK, READ responses).
    Aeth(AethRepr),
    /// The 16 reserved zero bytes of a CNP.
    CnpPad,
}

impl RoceExt {
    fn len(&self) -> usize {
        match self {
            RoceExt::None => 0,
            RoceExt::Reth(_) => RETH_LEN,
            RoceExt::Aeth(_) => AETH_LEN,
            RoceExt::CnpPad => CNP_PAD_LEN,
        }
    }
}

/// Owned description of a whole RoCEv2-over-IPv4 frame: the builder used by
/// the RNIC model and the host agent, and the result of [`RoceFrameRepr::parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceFrameRepr {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// IPv4 header (its `payload_len` is recomputed by `emit`).
    pub ip: Ipv4Repr,
    /// UDP source port (entropy, R-ROCE-9).
    pub udp_src_port: u16,
    /// BTH (its `pad_count` is recomputed by `emit`).
    pub bth: BthRepr,
    /// Extension header.
    pub ext: RoceExt,
    /// Immediate data, after the extension header (opcodes "with immediate").
    pub imm: Option<ImmDtRepr>,
    /// Payload length in bytes (before padding).
    pub payload_len: usize,
}

/// A parsed frame plus where its payload lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedRoce {
    /// The headers.
    pub repr: RoceFrameRepr,
    /// 802.1Q priority code point, if the frame was tagged (R-MAP-1).
    pub vlan_pcp: Option<u8>,
    /// Offset of the payload in the frame, bytes.
    pub payload_offset: usize,
    /// Frame length (Ethernet header to ICRC inclusive, no FCS) implied by
    /// the IP total length.
    pub frame_len: usize,
    /// `Some(ok)` if the whole frame was present and the ICRC was checked.
    pub icrc_ok: Option<bool>,
}

impl RoceFrameRepr {
    /// Convenience constructor for an RC WRITE/SEND data packet or CNP with
    /// IPv4 defaults (DF, TTL 64, ident 0) and no immediate data.
    #[allow(clippy::too_many_arguments)]
    pub fn new_ipv4(
        src_mac: [u8; 6],
        dst_mac: [u8; 6],
        src_addr: Ipv4Addr,
        dst_addr: Ipv4Addr,
        dscp: u8,
        ecn: Ecn,
        udp_src_port: u16,
        bth: BthRepr,
        ext: RoceExt,
        payload_len: usize,
    ) -> Self {
        RoceFrameRepr {
            dst_mac,
            src_mac,
            ip: Ipv4Repr {
                src_addr,
                dst_addr,
                protocol: IpProtocol::Udp,
                payload_len: 0,
                dscp,
                ecn,
                ident: 0,
                dont_frag: true,
                ttl: 64,
            },
            udp_src_port,
            bth,
            ext,
            imm: None,
            payload_len,
        }
    }

    /// Pad bytes after the payload so that it ends on a 4-byte boundary.
    pub fn pad_len(&self) -> usize {
        (4 - self.payload_len % 4) % 4
    }

    fn transport_header_len(&self) -> usize {
        BTH_LEN + self.ext.len() + self.imm.map_or(0, |_| IMMDT_LEN)
    }

    /// Bytes from the Ethernet header to the end of the transport headers.
    pub fn header_len(&self) -> usize {
        ETHERNET_HEADER_LEN + IPV4_HEADER_LEN + UDP_HEADER_LEN + self.transport_header_len()
    }

    /// Whole frame length in bytes (no FCS), ICRC included.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload_len + self.pad_len() + ICRC_LEN
    }

    /// Writes the whole untagged frame: headers, `payload` (zero-filled if
    /// shorter than `payload_len`, truncated if longer), pad and ICRC.
    /// Returns the length.
    pub fn emit(&self, buf: &mut [u8], payload: &[u8]) -> Result<usize, RoceError> {
        let len = self.buffer_len();
        if buf.len() < len {
            return Err(RoceError::BufferTooSmall {
                have: buf.len(),
                need: len,
            });
        }
        let hl = self.emit_headers(buf)?;
        let body = &mut buf[hl..len - ICRC_LEN];
        let n = payload.len().min(self.payload_len);
        body[..n].copy_from_slice(&payload[..n]);
        body[n..].fill(0);
        let crc = icrc(&buf[ETHERNET_HEADER_LEN..len - ICRC_LEN])?;
        buf[len - ICRC_LEN..len].copy_from_slice(&crc.to_le_bytes());
        Ok(len)
    }

    /// Writes only the headers (Ethernet to the last transport header) with
    /// length fields describing the whole frame. The simulator carries frames
    /// in this truncated form; [`RoceFrameRepr::parse`] accepts it.
    pub fn emit_headers(&self, buf: &mut [u8]) -> Result<usize, RoceError> {
        let hl = self.header_len();
        if buf.len() < hl {
            return Err(RoceError::BufferTooSmall {
                have: buf.len(),
                need: hl,
            });
        }
        EthernetRepr {
            src_addr: EthernetAddress(self.src_mac),
            dst_addr: EthernetAddress(self.dst_mac),
            ethertype: EtherType::Ipv4,
        }
        .emit(&mut EthernetFrame::new_unchecked(
            &mut buf[..ETH_HEADER_LEN],
        ));
        let udp_payload =
            self.transport_header_len() + self.payload_len + self.pad_len() + ICRC_LEN;
        let mut ip = self.ip;
        ip.protocol = IpProtocol::Udp;
        ip.payload_len = UDP_HEADER_LEN + udp_payload;
        let ip_off = ETHERNET_HEADER_LEN;
        ip.emit(&mut Ipv4Packet::new_unchecked(
            &mut buf[ip_off..ip_off + IPV4_HEADER_LEN],
        ));
        let udp_off = ip_off + IPV4_HEADER_LEN;
        UdpRepr {
            src_port: self.udp_src_port,
            dst_port: ROCEV2_UDP_PORT,
            payload_len: udp_payload,
        }
        .emit(&mut UdpPacket::new_unchecked(
            &mut buf[udp_off..udp_off + UDP_HEADER_LEN],
        ));
        let bth_off = udp_off + UDP_HEADER_LEN;
        let mut bth = self.bth;
        bth.pad_count = self.pad_len() as u8;
        bth.emit(&mut Bth::new_unchecked(
            &mut buf[bth_off..bth_off + BTH_LEN],
        ));
        let ext_off = bth_off + BTH_LEN;
        match &self.ext {
            RoceExt::None => {}
            RoceExt::Reth(r) => r.emit(&mut buf[ext_off..ext_off + RETH_LEN]),
            RoceExt::Aeth(a) => a.emit(&mut buf[ext_off..ext_off + AETH_LEN]),
            RoceExt::CnpPad => buf[ext_off..ext_off + CNP_PAD_LEN].fill(0),
        }
        if let Some(imm) = self.imm {
            let off = ext_off + self.ext.len();
            imm.emit(&mut buf[off..off + IMMDT_LEN]);
        }
        Ok(hl)
    }

    /// Parses an Ethernet (untagged or 802.1Q-tagged) / IPv4 / UDP:4791 /
    /// BTH frame. `frame` may be the whole frame (then the ICRC is verified)
    /// or only its headers, as written by [`Self::emit_headers`]; lengths
    /// come from the IP header. IPv4 options are skipped.
    pub fn parse(frame: &[u8]) -> Result<ParsedRoce, RoceError> {
        let eth = EthernetFrame::new_checked(frame).map_err(|_| RoceError::Truncated)?;
        if eth.inner_ethertype() != EtherType::Ipv4 {
            return Err(RoceError::NotRoce);
        }
        let vlan_pcp = eth.vlan_tag().map(|t| t.pcp);
        let l2_len = eth.payload_offset();
        let ip_bytes = &frame[l2_len..];
        if ip_bytes.len() < IPV4_HEADER_LEN {
            return Err(RoceError::Truncated);
        }
        let ipv = Ipv4Packet::new_unchecked(ip_bytes);
        if ipv.version() != 4 {
            return Err(RoceError::NotRoce);
        }
        let ihl = usize::from(ipv.header_len());
        let total = usize::from(ipv.total_len());
        if ihl < IPV4_HEADER_LEN || total < ihl + UDP_HEADER_LEN + BTH_LEN + ICRC_LEN {
            return Err(RoceError::Ip(IpError::Malformed));
        }
        if ip_bytes.len() < ihl + UDP_HEADER_LEN + BTH_LEN {
            return Err(RoceError::Truncated);
        }
        if ipv.protocol() != IpProtocol::Udp {
            return Err(RoceError::NotRoce);
        }
        if !ipv.verify_checksum() {
            return Err(RoceError::Ip(IpError::Checksum));
        }
        let udp = UdpPacket::new_unchecked(&ip_bytes[ihl..]);
        if udp.dst_port() != ROCEV2_UDP_PORT {
            return Err(RoceError::NotRoce);
        }
        let bth_off = ihl + UDP_HEADER_LEN;
        let bth = BthRepr::parse(&Bth::new_unchecked(&ip_bytes[bth_off..]))?;
        let ext_off = bth_off + BTH_LEN;
        let ext = if bth.opcode == Opcode::Cnp {
            if ip_bytes.len() < ext_off + CNP_PAD_LEN {
                return Err(RoceError::Truncated);
            }
            RoceExt::CnpPad
        } else if bth.opcode.has_reth() {
            RoceExt::Reth(RethRepr::parse(&ip_bytes[ext_off..])?)
        } else if bth.opcode.has_aeth() {
            RoceExt::Aeth(AethRepr::parse(&ip_bytes[ext_off..])?)
        } else {
            RoceExt::None
        };
        let imm_off = ext_off + ext.len();
        let imm = if bth.opcode.has_immdt() {
            Some(ImmDtRepr::parse(&ip_bytes[imm_off.min(ip_bytes.len())..])?)
        } else {
            None
        };
        let hdr_end = imm_off + imm.map_or(0, |_| IMMDT_LEN);
        let payload_plus_pad = total
            .checked_sub(hdr_end + ICRC_LEN)
            .ok_or(RoceError::Ip(IpError::Malformed))?;
        let pad = usize::from(bth.pad_count);
        let payload_len = payload_plus_pad
            .checked_sub(pad)
            .ok_or(RoceError::Ip(IpError::Malformed))?;
        let frame_len = l2_len + total;
        let icrc_ok = if frame.len() >= frame_len {
            let ip_end = total - ICRC_LEN;
            let got = u32::from_le_bytes([
                ip_bytes[ip_end],
                ip_bytes[ip_end + 1],
                ip_bytes[ip_end + 2],
                ip_bytes[ip_end + 3],
            ]);
            Some(icrc(&ip_bytes[..ip_end])? == got)
        } else {
            None
        };
        let ip = Ipv4Repr {
            src_addr: ipv.src_addr(),
            dst_addr: ipv.dst_addr(),
            protocol: IpProtocol::Udp,
            payload_len: total - ihl,
            dscp: ipv.dscp(),
            ecn: ipv.ecn(),
            ident: ipv.ident(),
            dont_frag: ipv.dont_frag(),
            ttl: ipv.ttl(),
        };
        Ok(ParsedRoce {
            repr: RoceFrameRepr {
                dst_mac: eth.dst_addr().0,
                src_mac: eth.src_addr().0,
                ip,
                udp_src_port: udp.src_port(),
                bth,
                ext,
                imm,
                payload_len,
            },
            vlan_pcp,
            payload_offset: l2_len + hdr_end,
            frame_len,
            icrc_ok,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    // p4runtime-subset §3.2: RC RDMA_WRITE_ONLY over IPv4, verified with scapy 2.8.0.
    const WRITE_FRAME: &str = "0200000000020200000000010800456a005c000140004011e5bbc6336401c6336402c00012b7004800000a00ffff000001238000001000007f00000010001234abcd00000020000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f907bd975";
    // p4runtime-subset §3.2: CNP over IPv4, verified with scapy 2.8.0.
    const CNP_FRAME: &str = "020000000001020000000002080045c0003c000140004011e585c6336402c6336401000012b7002800008100ffff4000012300000000000000000000000000000000000000001c245af5";

    fn write_repr() -> RoceFrameRepr {
        let mut r = RoceFrameRepr::new_ipv4(
            [2, 0, 0, 0, 0, 1],
            [2, 0, 0, 0, 0, 2],
            Ipv4Addr::new(198, 51, 100, 1),
            Ipv4Addr::new(198, 51, 100, 2),
            26,
            Ecn::Ect0,
            0xC000,
            BthRepr {
                opcode: Opcode::RcWriteOnly,
                solicited: false,
                migreq: false,
                pad_count: 0,
                pkey: DEFAULT_PKEY,
                fecn: false,
                becn: false,
                dest_qp: 0x123,
                ack_req: true,
                psn: 16,
            },
            RoceExt::Reth(RethRepr {
                virtual_addr: 0x7f00_0000_1000,
                rkey: 0x1234_abcd,
                dma_len: 32,
            }),
            32,
        );
        r.ip.ident = 1;
        r
    }

    #[test]
    fn deconstruct_write_fixture() {
        let f = hex(WRITE_FRAME);
        let p = RoceFrameRepr::parse(&f).unwrap();
        let mut want = write_repr();
        want.ip.payload_len = 72;
        assert_eq!(p.repr, want);
        assert_eq!(p.frame_len, 106);
        assert_eq!(p.payload_offset, 70);
        assert_eq!(p.icrc_ok, Some(true));
        assert_eq!(&f[102..], &[0x90, 0x7b, 0xd9, 0x75]);
    }

    #[test]
    fn construct_write_fixture() {
        let payload: Vec<u8> = (0u8..32).collect();
        let mut buf = [0u8; 128];
        let n = write_repr().emit(&mut buf, &payload).unwrap();
        assert_eq!(&buf[..n], &hex(WRITE_FRAME)[..]);
    }

    #[test]
    fn cnp_fixture_roundtrip() {
        let f = hex(CNP_FRAME);
        let p = RoceFrameRepr::parse(&f).unwrap();
        assert_eq!(p.repr.bth.opcode, Opcode::Cnp);
        assert!(p.repr.bth.becn);
        assert_eq!(p.repr.bth.dest_qp, 0x123);
        assert_eq!(p.repr.ext, RoceExt::CnpPad);
        assert_eq!(p.repr.ip.dscp, 48);
        assert_eq!(p.icrc_ok, Some(true));
        let mut buf = [0u8; 74];
        assert_eq!(p.repr.emit(&mut buf, &[]).unwrap(), 74);
        assert_eq!(&buf[..], &f[..]);
    }

    #[test]
    fn icrc_e11_and_e12() {
        let mut ip = hex(
            "45c0003c00004000401125ef0a0000010a000002 c24212b700280000 8100ffff4000001100000000",
        );
        ip.extend_from_slice(&[0u8; 16]);
        let v = icrc(&ip).unwrap();
        assert_eq!(v, 0x7782_7C4E);
        assert_eq!(v.to_le_bytes(), [0x4e, 0x7c, 0x82, 0x77]);
        // E-12: CE mark, TTL 5, new checksum, FECN: unchanged.
        let mut p = Ipv4Packet::new_unchecked(&mut ip[..]);
        p.set_tos(0xC3);
        p.set_ttl(5);
        p.fill_checksum();
        ip[20 + 8 + 4] = 0x80 | 0x40;
        assert_eq!(icrc(&ip).unwrap(), 0x7782_7C4E);
        // A payload bit flip does change it.
        ip[50] ^= 1;
        assert_ne!(icrc(&ip).unwrap(), 0x7782_7C4E);
    }

    #[test]
    fn icrc_detects_corruption_in_frame() {
        let mut f = hex(WRITE_FRAME);
        f[80] ^= 0x10;
        assert_eq!(RoceFrameRepr::parse(&f).unwrap().icrc_ok, Some(false));
    }

    #[test]
    fn udp_sport_e13() {
        assert_eq!(udp_src_port_from_qpns(0x11, 0x22), 0xC242);
        assert_eq!(udp_src_port_from_qpns(0x1234, 0x5678), 0xC01A);
        assert_eq!(udp_src_port_from_qpns(0xABCDE, 0x12345), 0xC2B9);
    }

    #[test]
    fn header_only_parse_and_bad_input() {
        let r = write_repr();
        let mut buf = [0u8; 74];
        let n = r.emit_headers(&mut buf).unwrap();
        let p = RoceFrameRepr::parse(&buf[..n]).unwrap();
        assert_eq!(p.icrc_ok, None);
        assert_eq!(p.repr.payload_len, 32);
        assert_eq!(p.frame_len, 106);
        assert_eq!(
            RoceFrameRepr::parse(&buf[..40]).unwrap_err(),
            RoceError::Truncated
        );
        let mut f = hex(WRITE_FRAME);
        f[14 + 23] ^= 0xFF; // dport != 4791
        assert_eq!(RoceFrameRepr::parse(&f).unwrap_err(), RoceError::NotRoce);
        assert!(matches!(
            r.emit(&mut [0u8; 50], &[]),
            Err(RoceError::BufferTooSmall { need: 106, .. })
        ));
    }

    #[test]
    fn immediate_data_roundtrip() {
        let mut r = write_repr();
        r.bth.opcode = Opcode::RcWriteOnlyImm;
        r.imm = Some(ImmDtRepr { imm: 0xDEAD_BEEF });
        r.payload_len = 5;
        let mut buf = [0u8; 128];
        let n = r.emit(&mut buf, b"hello").unwrap();
        assert_eq!(n, 14 + 20 + 8 + 12 + 16 + 4 + 5 + 3 + 4);
        let p = RoceFrameRepr::parse(&buf[..n]).unwrap();
        assert_eq!(p.icrc_ok, Some(true));
        assert_eq!(p.repr.imm, Some(ImmDtRepr { imm: 0xDEAD_BEEF }));
        assert_eq!(p.repr.payload_len, 5);
        assert_eq!(p.repr.bth.pad_count, 3);
        assert_eq!(&buf[p.payload_offset..p.payload_offset + 5], b"hello");
    }

    #[test]
    fn vlan_tagged_frame_parses_with_pcp() {
        let untagged = hex(WRITE_FRAME);
        let mut tagged = untagged[..12].to_vec();
        tagged.extend_from_slice(&[0x81, 0x00, 0x60, 0x0A]); // PCP 3, VID 10
        tagged.extend_from_slice(&untagged[12..]);
        let p = RoceFrameRepr::parse(&tagged).unwrap();
        assert_eq!(p.vlan_pcp, Some(3));
        assert_eq!(p.icrc_ok, Some(true), "the ICRC does not cover L2");
        assert_eq!(p.payload_offset, 74);
        assert_eq!(p.frame_len, 110);
    }

    #[test]
    fn opcode_classes() {
        assert!(Opcode::RcWriteFirst.has_reth());
        assert!(Opcode::RcWriteOnly.has_reth());
        assert!(!Opcode::RcWriteMiddle.has_reth());
        assert!(Opcode::RcAcknowledge.has_aeth());
        assert!(!Opcode::Cnp.has_aeth());
        assert!(Opcode::RcWriteOnlyImm.has_immdt());
        assert_eq!(Opcode::from(0x99), Opcode::Unknown(0x99));
        let a = AethRepr {
            syndrome: 0x1F,
            msn: 7,
        };
        assert_eq!(a.kind(), AethSyndrome::Ack { credits: 0x1F });
        assert_eq!(
            AethRepr {
                syndrome: 0x60,
                msn: 0
            }
            .kind(),
            AethSyndrome::Nak(0)
        );
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            let _ = RoceFrameRepr::parse(&data);
            let _ = icrc(&data);
        }
    }
}
