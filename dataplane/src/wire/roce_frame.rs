//! Any RoCE frame from a description, and any RoCE frame back into one:
//! the sans-IO core of `roceperf frame` and `roceperf decode`.
//!
//! [`FrameSpec`] names every field a person testing a switch or an RNIC may
//! want to set: RoCE v1 (EtherType 0x8915, GRH, BTH; priority only in the
//! VLAN PCP) or v2 (IPv4 or IPv6, UDP 4791), 802.1Q tag, DSCP/ECN, TTL,
//! UDP source port, opcode, QPN, PSN, BTH flags, P_Key, RETH, AETH, ImmDt
//! and the payload. [`FrameSpec::build`] checks the description against the
//! IBTA opcode table (Vol. 1 §9.2, table 35: which extension headers an
//! opcode carries, which carry no payload) and refuses what is inconsistent
//! with a [`FrameError`]; [`decode`] reads a frame back into a [`Decoded`]:
//! the spec, every header field the spec does not hold, the IPv4 header
//! checksum and the ICRC (received and expected).
//!
//! The header layout is [`RoceHeaders`] (`headers.rs`), the one emitter the
//! RNIC model ([`crate::rnic::frame::RoceFrameRepr`]) writes its frames with
//! too, so for IPv4 v2 and for v1 both give the same bytes (a test says so);
//! the RNIC sends no IPv6 and no UC, this module builds both. The headers are
//! the [`crate::wire`] ones, the ICRC is [`crate::wire::ib::icrc()`], the IPv4
//! checksum [`Ipv4Packet::fill_checksum`].
//!
//! Contract: [`decode`] never panics on any input and refuses a frame
//! shorter than its length fields claim ([`DecodeError::Truncated`]); bytes
//! after the frame (Ethernet padding) are counted, not decoded. `build`
//! allocates the frame; nothing else allocates. Lengths are bytes. The UDP
//! checksum is sent as 0 over IPv4 and IPv6 alike (R-ROCE-6; what RoCE
//! NICs do).
//!
//! Not built: the DETH/RDETH of UD and RD, the AtomicETH/AtomicAckETH of
//! atomics ([`FrameError::UnsupportedOpcode`]).
//!
//! Spec: roce-semantics §10 (R-ROCE-1..9); IBTA Vol. 1 §9.2, Annex A16
//! (RoCE), Annex A17 (RoCE v2).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::wire::ethernet::EthernetFrame;
use crate::wire::ib::{
    AETH_LEN, AethRepr, BTH_LEN, BthRepr, CNP_PAD_LEN, GrhRepr, ICRC_LEN, IMMDT_LEN, ImmDtRepr,
    NEXT_HEADER_BTH, Opcode, PSN_MASK, RETH_LEN, RethRepr, icrc,
};
use crate::wire::ip::{
    Ecn, IPV4_HEADER_LEN, IpProtocol, Ipv4Packet, Ipv4Repr, Ipv6Packet, Ipv6Repr, UDP_HEADER_LEN,
    UdpPacket,
};

mod headers;
mod walk;

pub use headers::{
    NetRepr, ROCEV2_UDP_PORT, RoceExt, RoceHeaders, RoceVersion, Vlan, largest_packet_len, pad_len,
};
pub use walk::{HeaderWalk, NetKind, walk};

/// The bytes after the transport headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PayloadPattern {
    /// 0, 1, 2, ... 255, 0, 1, ... (a shifted or lost byte shows).
    #[default]
    Counting,
    /// Every byte the same.
    Fill(u8),
}

impl PayloadPattern {
    /// Byte `i` of a payload with this pattern.
    pub fn byte(self, i: usize) -> u8 {
        match self {
            PayloadPattern::Counting => i as u8,
            PayloadPattern::Fill(b) => b,
        }
    }

    /// The pattern `bytes` follow, if any (`Counting` wins for a single 0).
    pub fn of(bytes: &[u8]) -> Option<PayloadPattern> {
        [
            PayloadPattern::Counting,
            PayloadPattern::Fill(*bytes.first()?),
        ]
        .into_iter()
        .find(|p| bytes.iter().enumerate().all(|(i, &b)| b == p.byte(i)))
    }
}

/// Everything a RoCE frame is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSpec {
    /// v1 or v2.
    pub version: RoceVersion,
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// 802.1Q tag, if any.
    pub vlan: Option<Vlan>,
    /// Source address (v1: the SGID; an IPv4 address becomes `::ffff:a.b.c.d`).
    pub src_ip: IpAddr,
    /// Destination address (the same family as `src_ip`).
    pub dst_ip: IpAddr,
    /// DSCP, 0..=63 (v1: the upper six bits of the GRH traffic class).
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// IPv4 TTL / IPv6 or GRH hop limit.
    pub ttl: u8,
    /// IPv6 / GRH flow label, 20 bits (IPv4: unused, must be 0).
    pub flow_label: u32,
    /// UDP source port (v2; the ECMP entropy, R-ROCE-9).
    pub udp_src_port: u16,
    /// BTH opcode.
    pub opcode: Opcode,
    /// Destination QP, 24 bits.
    pub dest_qp: u32,
    /// PSN, 24 bits.
    pub psn: u32,
    /// BTH AckReq.
    pub ack_req: bool,
    /// BTH solicited event.
    pub solicited: bool,
    /// BTH MigReq.
    pub migreq: bool,
    /// BTH FECN.
    pub fecn: bool,
    /// BTH BECN (a CNP sets it).
    pub becn: bool,
    /// Partition key.
    pub pkey: u16,
    /// RETH: present exactly when the opcode carries one.
    pub reth: Option<RethRepr>,
    /// AETH: present exactly when the opcode carries one.
    pub aeth: Option<AethRepr>,
    /// Immediate data: present exactly for the "with immediate" opcodes.
    pub immdt: Option<u32>,
    /// Payload length before padding.
    pub payload_len: usize,
    /// Payload bytes.
    pub payload: PayloadPattern,
}

impl Default for FrameSpec {
    /// An RC SEND_ONLY over IPv4 with no payload, DSCP 26 / ECT(0), between
    /// two locally administered MACs, P_Key 0xFFFF, TTL 64.
    fn default() -> Self {
        FrameSpec {
            version: RoceVersion::V2,
            dst_mac: [0x02, 0, 0, 0, 0, 0x02],
            src_mac: [0x02, 0, 0, 0, 0, 0x01],
            vlan: None,
            src_ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst_ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            dscp: 26,
            ecn: Ecn::Ect0,
            ttl: 64,
            flow_label: 0,
            udp_src_port: 0xC000,
            opcode: Opcode::RcSendOnly,
            dest_qp: 0x12,
            psn: 0,
            ack_req: false,
            solicited: false,
            migreq: false,
            fecn: false,
            becn: false,
            pkey: crate::wire::ib::DEFAULT_PKEY,
            reth: None,
            aeth: None,
            immdt: None,
            payload_len: 0,
            payload: PayloadPattern::Counting,
        }
    }
}

/// Why a [`FrameSpec`] cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// A field does not fit its width.
    #[error("{field} = {value} is out of range (at most {max})")]
    OutOfRange {
        /// The field.
        field: &'static str,
        /// The value given.
        value: u64,
        /// Its largest value.
        max: u64,
    },
    /// Source and destination are not the same address family.
    #[error("source and destination addresses are not both IPv4 or both IPv6")]
    MixedAddressFamilies,
    /// An extension header the opcode does not carry.
    #[error("{opcode} carries no {header}")]
    UnexpectedHeader {
        /// The header (`RETH`, `AETH`, `ImmDt`).
        header: &'static str,
        /// The opcode.
        opcode: OpcodeName,
    },
    /// An extension header the opcode needs is missing.
    #[error("{opcode} needs a {header}")]
    MissingHeader {
        /// The header.
        header: &'static str,
        /// The opcode.
        opcode: OpcodeName,
    },
    /// A payload on an opcode that carries none (ACK, READ request, CNP).
    #[error("{opcode} carries no payload")]
    UnexpectedPayload {
        /// The opcode.
        opcode: OpcodeName,
    },
    /// An opcode whose headers this module does not build (UD, RD, atomics,
    /// reserved).
    #[error("{0} is not supported (only RC, UC and CNP opcodes)")]
    UnsupportedOpcode(OpcodeName),
    /// The frame would not fit the IP length fields.
    #[error("frame of {0} bytes after Ethernet is too long for the IP length field")]
    TooLong(usize),
    /// The buffer handed to [`FrameSpec::emit`] is too small.
    #[error("output buffer of {have} bytes, need {need}")]
    BufferTooSmall {
        /// Bytes available.
        have: usize,
        /// Bytes needed.
        need: usize,
    },
}

/// Why bytes are not a RoCE frame [`decode`] can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Fewer bytes than the headers or the length fields need.
    #[error("truncated: {what} needs {need} bytes, have {have}")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes needed from the start of the frame.
        need: usize,
        /// Bytes there are.
        have: usize,
    },
    /// Not RoCE: another EtherType, IP protocol or UDP port.
    #[error("not a RoCE frame: {0}")]
    NotRoce(&'static str),
    /// A length or version field that cannot be right.
    #[error("malformed: {0}")]
    Malformed(&'static str),
    /// The BTH opcode's extension headers are not decoded here.
    #[error("{0} is not supported (only RC, UC and CNP opcodes)")]
    UnsupportedOpcode(OpcodeName),
}

/// An opcode that prints as its IBTA name (`RC RDMA_WRITE_ONLY (0x0a)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpcodeName(pub Opcode);

impl std::fmt::Display for OpcodeName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = u8::from(self.0);
        match opcode_name(self.0) {
            Some(n) => write!(f, "{n} ({v:#04x})"),
            None => write!(f, "opcode {v:#04x}"),
        }
    }
}

/// IBTA operation names by the low five bits (Vol. 1 table 35).
const OPERATIONS: [&str; 21] = [
    "SEND_FIRST",
    "SEND_MIDDLE",
    "SEND_LAST",
    "SEND_LAST_WITH_IMMEDIATE",
    "SEND_ONLY",
    "SEND_ONLY_WITH_IMMEDIATE",
    "RDMA_WRITE_FIRST",
    "RDMA_WRITE_MIDDLE",
    "RDMA_WRITE_LAST",
    "RDMA_WRITE_LAST_WITH_IMMEDIATE",
    "RDMA_WRITE_ONLY",
    "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
    "RDMA_READ_REQUEST",
    "RDMA_READ_RESPONSE_FIRST",
    "RDMA_READ_RESPONSE_MIDDLE",
    "RDMA_READ_RESPONSE_LAST",
    "RDMA_READ_RESPONSE_ONLY",
    "ACKNOWLEDGE",
    "ATOMIC_ACKNOWLEDGE",
    "COMPARE_SWAP",
    "FETCH_ADD",
];

/// Transport prefixes by the top three bits.
const TRANSPORTS: [&str; 4] = ["RC", "UC", "RD", "UD"];

/// The IBTA name of an opcode with its transport (`RC SEND_ONLY`, `CNP`),
/// or `None` for a reserved one.
pub fn opcode_name(op: Opcode) -> Option<String> {
    let v = u8::from(op);
    if op == Opcode::Cnp {
        return Some("CNP".into());
    }
    let t = TRANSPORTS.get(usize::from(v >> 5))?;
    let o = OPERATIONS.get(usize::from(v & 0x1F))?;
    Some(format!("{t} {o}"))
}

/// An opcode by IBTA name (`SEND_ONLY`, `rc_rdma_write_first`,
/// `UC RDMA_WRITE_ONLY`, `cnp`; RC when no transport is given; `-` and
/// spaces count as `_`) or number (`0x0a`, `10`).
pub fn parse_opcode(s: &str) -> Option<Opcode> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u8::from_str_radix(hex, 16).ok().map(Opcode::from);
    }
    if let Ok(v) = s.parse::<u8>() {
        return Some(Opcode::from(v));
    }
    let norm: String = s
        .chars()
        .map(|c| match c {
            '-' | ' ' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect();
    if norm == "CNP" {
        return Some(Opcode::Cnp);
    }
    let (transport, op) = TRANSPORTS
        .iter()
        .enumerate()
        .find_map(|(i, t)| Some((i, norm.strip_prefix(t)?.strip_prefix('_')?)))
        .unwrap_or((0, norm.as_str()));
    // Common short forms.
    let op = match op {
        "ACK" => "ACKNOWLEDGE",
        "READ_REQUEST" => "RDMA_READ_REQUEST",
        o => o,
    };
    let i = OPERATIONS.iter().position(|o| *o == op)?;
    Some(Opcode::from(((transport as u8) << 5) | i as u8))
}

/// Which headers follow the BTH, and whether a payload may.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpcodeLayout {
    /// A RETH follows.
    pub reth: bool,
    /// An AETH follows.
    pub aeth: bool,
    /// ImmDt follows.
    pub immdt: bool,
    /// The 16 reserved bytes of a CNP follow.
    pub cnp_pad: bool,
    /// The opcode may carry payload.
    pub payload: bool,
}

/// The headers `op` carries (IBTA table 35), or `None` for an opcode this
/// module does not build or decode.
pub fn opcode_layout(op: Opcode) -> Option<OpcodeLayout> {
    let v = u8::from(op);
    if op == Opcode::Cnp {
        return Some(OpcodeLayout {
            reth: false,
            aeth: false,
            immdt: false,
            cnp_pad: true,
            payload: false,
        });
    }
    let supported = match v >> 5 {
        0 => v & 0x1F <= 0x11, // RC without atomics
        1 => v & 0x1F <= 0x0B, // UC: SEND and WRITE
        _ => false,
    };
    if !supported {
        return None;
    }
    let op5 = v & 0x1F;
    Some(OpcodeLayout {
        reth: op.has_reth(),
        aeth: op.has_aeth(),
        immdt: op.has_immdt(),
        cnp_pad: false,
        // READ request and ACK: headers only.
        payload: !matches!(op5, 0x0C | 0x11),
    })
}

fn range(field: &'static str, value: u64, max: u64) -> Result<(), FrameError> {
    if value > max {
        return Err(FrameError::OutOfRange { field, value, max });
    }
    Ok(())
}

impl FrameSpec {
    /// The headers the opcode implies, after checking the spec against them
    /// and every field against its width.
    pub fn check(&self) -> Result<OpcodeLayout, FrameError> {
        let name = OpcodeName(self.opcode);
        let layout = opcode_layout(self.opcode).ok_or(FrameError::UnsupportedOpcode(name))?;
        range("dscp", self.dscp.into(), 63)?;
        range("dest_qp", self.dest_qp.into(), PSN_MASK.into())?;
        range("psn", self.psn.into(), PSN_MASK.into())?;
        range("flow_label", self.flow_label.into(), 0xF_FFFF)?;
        if let Some(v) = self.vlan {
            range("vlan.vid", v.vid.into(), 4095)?;
            range("vlan.pcp", v.pcp.into(), 7)?;
        }
        if let Some(a) = self.aeth {
            range("aeth.msn", a.msn.into(), PSN_MASK.into())?;
        }
        match (self.src_ip, self.dst_ip) {
            (IpAddr::V4(_), IpAddr::V4(_)) if self.version == RoceVersion::V2 => {
                range("flow_label (IPv4 has none)", self.flow_label.into(), 0)?;
            }
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => {}
            _ => return Err(FrameError::MixedAddressFamilies),
        }
        for (want, have, header) in [
            (layout.reth, self.reth.is_some(), "RETH"),
            (layout.aeth, self.aeth.is_some(), "AETH"),
            (layout.immdt, self.immdt.is_some(), "ImmDt"),
        ] {
            match (want, have) {
                (true, false) => {
                    return Err(FrameError::MissingHeader {
                        header,
                        opcode: name,
                    });
                }
                (false, true) => {
                    return Err(FrameError::UnexpectedHeader {
                        header,
                        opcode: name,
                    });
                }
                _ => {}
            }
        }
        if !layout.payload && self.payload_len > 0 {
            return Err(FrameError::UnexpectedPayload { opcode: name });
        }
        // The longest IP/GRH length field the frame needs.
        let headers = self.headers(&layout);
        let after_net = headers.after_net_len(self.payload_len);
        let ip_len = match headers.net {
            NetRepr::Grh(_) => after_net,
            NetRepr::Ipv6(_) => UDP_HEADER_LEN + after_net,
            NetRepr::Ipv4(_) => IPV4_HEADER_LEN + UDP_HEADER_LEN + after_net,
        };
        if ip_len > usize::from(u16::MAX) {
            return Err(FrameError::TooLong(ip_len));
        }
        Ok(layout)
    }

    /// Pad bytes after the payload (BTH PadCnt).
    pub fn pad_len(&self) -> usize {
        pad_len(self.payload_len)
    }

    /// BTH to the last transport header, for `decode`.
    fn transport_len(layout: &OpcodeLayout) -> usize {
        BTH_LEN
            + if layout.reth { RETH_LEN } else { 0 }
            + if layout.aeth { AETH_LEN } else { 0 }
            + if layout.cnp_pad { CNP_PAD_LEN } else { 0 }
            + if layout.immdt { IMMDT_LEN } else { 0 }
    }

    /// The headers this spec describes, for the one emitter
    /// ([`RoceHeaders::emit`]); lengths and PadCnt are filled in there.
    /// Meaningful after [`FrameSpec::check`].
    fn headers(&self, layout: &OpcodeLayout) -> RoceHeaders {
        let net = match (self.version, self.src_ip, self.dst_ip) {
            (RoceVersion::V1, src, dst) => NetRepr::Grh(GrhRepr {
                traffic_class: (self.dscp << 2) | self.ecn.bits(),
                flow_label: self.flow_label,
                payload_len: 0,
                next_header: NEXT_HEADER_BTH,
                hop_limit: self.ttl,
                sgid: gid(src),
                dgid: gid(dst),
            }),
            (RoceVersion::V2, IpAddr::V4(src_addr), IpAddr::V4(dst_addr)) => {
                NetRepr::Ipv4(Ipv4Repr {
                    src_addr,
                    dst_addr,
                    protocol: IpProtocol::Udp,
                    payload_len: 0,
                    dscp: self.dscp,
                    ecn: self.ecn,
                    ident: 0,
                    dont_frag: true,
                    ttl: self.ttl,
                })
            }
            (RoceVersion::V2, src, dst) => NetRepr::Ipv6(Ipv6Repr {
                src_addr: gid(src),
                dst_addr: gid(dst),
                next_header: IpProtocol::Udp,
                payload_len: 0,
                dscp: self.dscp,
                ecn: self.ecn,
                flow_label: self.flow_label,
                hop_limit: self.ttl,
            }),
        };
        // `check` allows at most one of them: no opcode carries two.
        let ext = match (self.reth, self.aeth) {
            (Some(r), _) => RoceExt::Reth(r),
            (None, Some(a)) => RoceExt::Aeth(a),
            (None, None) if layout.cnp_pad => RoceExt::CnpPad,
            (None, None) => RoceExt::None,
        };
        RoceHeaders {
            dst_mac: self.dst_mac,
            src_mac: self.src_mac,
            vlan: self.vlan,
            net,
            udp_src_port: self.udp_src_port,
            bth: BthRepr {
                opcode: self.opcode,
                solicited: self.solicited,
                migreq: self.migreq,
                pad_count: 0,
                pkey: self.pkey,
                fecn: self.fecn,
                becn: self.becn,
                dest_qp: self.dest_qp,
                ack_req: self.ack_req,
                psn: self.psn,
            },
            ext,
            imm: self.immdt.map(|imm| ImmDtRepr { imm }),
        }
    }

    /// The whole frame's length (no FCS), or why it cannot be built.
    pub fn buffer_len(&self) -> Result<usize, FrameError> {
        let layout = self.check()?;
        Ok(self.headers(&layout).frame_len(self.payload_len))
    }

    /// Builds the frame: headers, payload, pad, ICRC (no FCS). Allocates it.
    pub fn build(&self) -> Result<Vec<u8>, FrameError> {
        let mut buf = vec![0u8; self.buffer_len()?];
        self.emit(&mut buf)?;
        Ok(buf)
    }

    /// Writes the frame into the first [`FrameSpec::buffer_len`] bytes of
    /// `buf` (which must hold them) and returns that length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, FrameError> {
        let layout = self.check()?;
        let headers = self.headers(&layout);
        let len = headers.frame_len(self.payload_len);
        let have = buf.len();
        let Some(buf) = buf.get_mut(..len) else {
            return Err(FrameError::BufferTooSmall { have, need: len });
        };
        let hl = headers.emit(buf, self.payload_len);
        let (payload, pad) = buf[hl..len - ICRC_LEN].split_at_mut(self.payload_len);
        for (i, b) in payload.iter_mut().enumerate() {
            *b = self.payload.byte(i);
        }
        pad.fill(0);
        headers
            .emit_icrc(buf)
            .map_err(|_| FrameError::TooLong(len))?;
        Ok(len)
    }
}

/// The GID / IPv6 address of an address (IPv4: `::ffff:a.b.c.d`).
fn gid(a: IpAddr) -> Ipv6Addr {
    match a {
        IpAddr::V4(v4) => v4.to_ipv6_mapped(),
        IpAddr::V6(v6) => v6,
    }
}

/// A value as received next to the value it should have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check<T> {
    /// On the wire.
    pub received: T,
    /// Computed from the rest of the frame.
    pub expected: T,
}

impl<T: PartialEq> Check<T> {
    /// Received equals expected.
    pub fn ok(&self) -> bool {
        self.received == self.expected
    }
}

/// The network header as it was on the wire, beyond what [`FrameSpec`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetHeader {
    /// IPv4.
    Ipv4 {
        /// Header length (IHL × 4).
        header_len: usize,
        /// Total length.
        total_len: u16,
        /// Identification.
        ident: u16,
        /// Don't fragment.
        dont_frag: bool,
        /// Header checksum.
        checksum: Check<u16>,
    },
    /// IPv6.
    Ipv6 {
        /// Payload length.
        payload_len: u16,
    },
    /// The GRH of RoCE v1.
    Grh {
        /// Payload length.
        payload_len: u16,
    },
}

/// UDP as received (v2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpHeader {
    /// Destination port (4791).
    pub dst_port: u16,
    /// Length field.
    pub len: u16,
    /// Checksum field (0: unused).
    pub checksum: u16,
}

/// A decoded frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// What [`FrameSpec::build`] would need to build it (the payload
    /// pattern is `Counting` when the bytes follow none: see
    /// [`Decoded::payload_pattern`]).
    pub spec: FrameSpec,
    /// The 802.1Q tag's drop-eligible bit.
    pub vlan_dei: bool,
    /// The network header.
    pub net: NetHeader,
    /// UDP (v2).
    pub udp: Option<UdpHeader>,
    /// BTH PadCnt.
    pub pad_count: u8,
    /// BTH TVer.
    pub tver: u8,
    /// Where the payload starts in the frame.
    pub payload_offset: usize,
    /// The pattern the payload follows, if any.
    pub payload_pattern: Option<PayloadPattern>,
    /// The ICRC.
    pub icrc: Check<u32>,
    /// Frame length the length fields give (Ethernet header to ICRC).
    pub frame_len: usize,
    /// Bytes after the frame (Ethernet padding), not decoded.
    pub trailing_len: usize,
}

/// Decodes an Ethernet frame (no FCS) carrying RoCE v1 or v2, untagged or
/// with one 802.1Q tag. The IPv4 checksum and the ICRC are reported, not
/// enforced.
pub fn decode(frame: &[u8]) -> Result<Decoded, DecodeError> {
    let w = walk(frame)?;
    let frame_len = w.frame_len();
    if frame.len() < frame_len {
        return Err(DecodeError::Truncated {
            what: "frame (length fields)",
            need: frame_len,
            have: frame.len(),
        });
    }
    let eth = EthernetFrame::new_unchecked(frame);
    let net = &frame[w.l2_len..];
    let bth = w.bth;
    let mut spec = FrameSpec {
        version: w.version,
        dst_mac: eth.dst_addr().0,
        src_mac: eth.src_addr().0,
        vlan: w.tag.map(|t| Vlan {
            vid: t.vid,
            pcp: t.pcp,
        }),
        opcode: bth.opcode,
        dest_qp: bth.dest_qp,
        psn: bth.psn,
        ack_req: bth.ack_req,
        solicited: bth.solicited,
        migreq: bth.migreq,
        fecn: bth.fecn,
        becn: bth.becn,
        pkey: bth.pkey,
        reth: w.reth,
        aeth: w.aeth,
        immdt: w.imm.map(|i| i.imm),
        payload_len: w.payload_len,
        ..FrameSpec::default()
    };
    let net_hdr = match w.net {
        NetKind::Ipv4 { header_len } => {
            let ip = Ipv4Packet::new_unchecked(net);
            let mut copy = [0u8; 60];
            copy[..header_len].copy_from_slice(&net[..header_len]);
            let mut c = Ipv4Packet::new_unchecked(&mut copy[..header_len]);
            c.fill_checksum();
            spec.src_ip = IpAddr::V4(ip.src_addr());
            spec.dst_ip = IpAddr::V4(ip.dst_addr());
            spec.dscp = ip.dscp();
            spec.ecn = ip.ecn();
            spec.ttl = ip.ttl();
            NetHeader::Ipv4 {
                header_len,
                total_len: ip.total_len(),
                ident: ip.ident(),
                dont_frag: ip.dont_frag(),
                checksum: Check {
                    received: ip.checksum(),
                    expected: c.checksum(),
                },
            }
        }
        NetKind::Ipv6 => {
            let ip = Ipv6Packet::new_unchecked(net);
            spec.src_ip = IpAddr::V6(ip.src_addr());
            spec.dst_ip = IpAddr::V6(ip.dst_addr());
            spec.dscp = ip.dscp();
            spec.ecn = ip.ecn();
            spec.ttl = ip.hop_limit();
            spec.flow_label = ip.flow_label();
            NetHeader::Ipv6 {
                payload_len: ip.payload_len(),
            }
        }
        NetKind::Grh(g) => {
            let addr = |a: Ipv6Addr| match GrhRepr::ipv4_of(a) {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(a),
            };
            spec.src_ip = addr(g.sgid);
            spec.dst_ip = addr(g.dgid);
            if spec.src_ip.is_ipv4() != spec.dst_ip.is_ipv4() {
                // Keep both as GIDs so the spec stays buildable.
                spec.src_ip = IpAddr::V6(g.sgid);
                spec.dst_ip = IpAddr::V6(g.dgid);
            }
            spec.dscp = g.traffic_class >> 2;
            spec.ecn = Ecn::from_bits(g.traffic_class);
            spec.ttl = g.hop_limit;
            spec.flow_label = g.flow_label;
            NetHeader::Grh {
                payload_len: g.payload_len,
            }
        }
    };
    // v1 has no UDP header: no source port either.
    spec.udp_src_port = 0;
    let udp = w.udp_offset.map(|off| {
        let u = UdpPacket::new_unchecked(&net[off..]);
        spec.udp_src_port = u.src_port();
        UdpHeader {
            dst_port: u.dst_port(),
            len: u.len(),
            checksum: u.checksum(),
        }
    });
    let payload = &net[w.header_end..w.header_end + w.payload_len];
    let payload_pattern = PayloadPattern::of(payload);
    spec.payload = payload_pattern.unwrap_or_default();
    let end = w.icrc_offset();
    let received = u32::from_le_bytes([net[end], net[end + 1], net[end + 2], net[end + 3]]);
    let expected = icrc(&net[..end]).map_err(|_| DecodeError::Malformed("ICRC input"))?;
    Ok(Decoded {
        spec,
        vlan_dei: w.tag.is_some_and(|t| t.dei),
        net: net_hdr,
        udp,
        pad_count: bth.pad_count,
        tver: w.tver,
        payload_offset: w.l2_len + w.header_end,
        payload_pattern,
        icrc: Check { received, expected },
        frame_len,
        trailing_len: frame.len() - frame_len,
    })
}

#[cfg(test)]
mod tests;
