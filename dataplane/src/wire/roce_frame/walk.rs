//! Where each header of a RoCE frame lies: the one header walk behind
//! [`super::decode`] (the lenient decoder of `roceperf decode`) and the RNIC's
//! strict [`crate::rnic::frame::RoceFrameRepr::parse`].
//!
//! The walk reads Ethernet (one optional 802.1Q tag), then IPv4 + UDP 4791,
//! IPv6 + UDP 4791 (RoCE v2) or the GRH (RoCE v1, EtherType 0x8915), the BTH
//! and the extension headers its opcode carries (IBTA Vol. 1 §9.2, table 35),
//! and checks the length fields against the headers. It needs the headers
//! only, not the payload or the ICRC, so the RNIC can parse the header-only
//! frames it emits; callers that need the whole frame check
//! [`HeaderWalk::frame_len`] themselves. Checksums are left to the callers:
//! one reports them, the other enforces them.
//!
//! Contract: never panics on any input, allocates nothing. Offsets are bytes
//! from the start of the network header (IPv4/IPv6/GRH) unless named
//! otherwise.

use crate::wire::ethernet::EtherType;
use crate::wire::ethernet::{EthernetFrame, HEADER_LEN as ETH_HEADER_LEN, VLAN_TAG_LEN, VlanTag};
use crate::wire::ib::{
    AETH_LEN, AethRepr, BTH_LEN, Bth, BthRepr, CNP_PAD_LEN, GRH_LEN, GrhRepr, ICRC_LEN, ImmDtRepr,
    NEXT_HEADER_BTH, RETH_LEN, RethRepr,
};
use crate::wire::ip::{
    IPV4_HEADER_LEN, IPV6_HEADER_LEN, IpProtocol, Ipv4Packet, Ipv6Packet, UDP_HEADER_LEN, UdpPacket,
};

use super::{DecodeError, FrameSpec, OpcodeName, RoceVersion, opcode_layout};

/// The network header a walk found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetKind {
    /// RoCE v2 over IPv4; the header length includes options.
    Ipv4 {
        /// IHL in bytes.
        header_len: usize,
    },
    /// RoCE v2 over IPv6.
    Ipv6,
    /// RoCE v1: the GRH as read.
    Grh(GrhRepr),
}

/// Where the headers of one RoCE frame lie, and what the BTH and its
/// extension headers hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderWalk {
    /// The 802.1Q tag, if any.
    pub tag: Option<VlanTag>,
    /// Length of the Ethernet header (14, or 18 tagged).
    pub l2_len: usize,
    /// v1 or v2.
    pub version: RoceVersion,
    /// IPv4, IPv6 or GRH.
    pub net: NetKind,
    /// Offset of the UDP header (v2).
    pub udp_offset: Option<usize>,
    /// Offset of the BTH.
    pub bth_offset: usize,
    /// The BTH.
    pub bth: BthRepr,
    /// BTH TVer.
    pub tver: u8,
    /// RETH, if the opcode carries one.
    pub reth: Option<RethRepr>,
    /// AETH, if the opcode carries one.
    pub aeth: Option<AethRepr>,
    /// ImmDt, if the opcode carries one.
    pub imm: Option<ImmDtRepr>,
    /// The 16-byte pad after the BTH of a CNP.
    pub cnp_pad: bool,
    /// Offset just after the last transport header: where the payload starts.
    pub header_end: usize,
    /// Length of the network packet the length fields give (IP total
    /// length, or 40 + GRH PayLen, or 40 + IPv6 payload length), ICRC included.
    pub total: usize,
    /// Payload length without the BTH pad.
    pub payload_len: usize,
}

impl HeaderWalk {
    /// Frame length the length fields give: Ethernet header to ICRC, no FCS.
    pub fn frame_len(&self) -> usize {
        self.l2_len + self.total
    }

    /// Offset of the ICRC from the start of the network header.
    pub fn icrc_offset(&self) -> usize {
        self.total - ICRC_LEN
    }
}

fn need(frame: &[u8], what: &'static str, n: usize) -> Result<(), DecodeError> {
    if frame.len() < n {
        return Err(DecodeError::Truncated {
            what,
            need: n,
            have: frame.len(),
        });
    }
    Ok(())
}

/// Walks the headers of `frame` (Ethernet onwards, no FCS).
pub fn walk(frame: &[u8]) -> Result<HeaderWalk, DecodeError> {
    need(frame, "Ethernet header", ETH_HEADER_LEN)?;
    let eth = EthernetFrame::new_unchecked(frame);
    if eth.ethertype() == EtherType::Vlan {
        need(frame, "802.1Q tag", ETH_HEADER_LEN + VLAN_TAG_LEN)?;
    }
    let tag = eth.vlan_tag();
    let l2_len = eth.payload_offset();
    let net = &frame[l2_len..];
    let (version, net_kind, udp_offset, total) = match eth.inner_ethertype() {
        EtherType::Ipv4 => {
            need(frame, "IPv4 header", l2_len + IPV4_HEADER_LEN)?;
            let ip = Ipv4Packet::new_unchecked(net);
            if ip.version() != 4 {
                return Err(DecodeError::Malformed(
                    "IPv4 EtherType with another IP version",
                ));
            }
            let ihl = usize::from(ip.header_len());
            if ihl < IPV4_HEADER_LEN {
                return Err(DecodeError::Malformed("IPv4 header length below 20"));
            }
            need(frame, "IPv4 header with options", l2_len + ihl)?;
            if ip.protocol() != IpProtocol::Udp {
                return Err(DecodeError::NotRoce("IP protocol is not UDP"));
            }
            let total = usize::from(ip.total_len());
            if total < ihl + UDP_HEADER_LEN {
                return Err(DecodeError::Malformed(
                    "IPv4 total length below its headers",
                ));
            }
            let kind = NetKind::Ipv4 { header_len: ihl };
            (RoceVersion::V2, kind, Some(ihl), total)
        }
        EtherType::Ipv6 => {
            need(frame, "IPv6 header", l2_len + IPV6_HEADER_LEN)?;
            let ip = Ipv6Packet::new_unchecked(net);
            if ip.version() != 6 {
                return Err(DecodeError::Malformed(
                    "IPv6 EtherType with another IP version",
                ));
            }
            if ip.next_header() != IpProtocol::Udp {
                return Err(DecodeError::NotRoce("IPv6 next header is not UDP"));
            }
            let total = IPV6_HEADER_LEN + usize::from(ip.payload_len());
            (RoceVersion::V2, NetKind::Ipv6, Some(IPV6_HEADER_LEN), total)
        }
        EtherType::RoceV1 => {
            need(frame, "GRH", l2_len + GRH_LEN)?;
            let g = GrhRepr::parse(net).map_err(|_| DecodeError::Malformed("GRH"))?;
            if net[0] >> 4 != 6 {
                return Err(DecodeError::Malformed("GRH IPVer is not 6"));
            }
            if g.next_header != NEXT_HEADER_BTH {
                return Err(DecodeError::NotRoce(
                    "GRH next header is not the BTH (0x1B)",
                ));
            }
            let total = GRH_LEN + usize::from(g.payload_len);
            (RoceVersion::V1, NetKind::Grh(g), None, total)
        }
        _ => {
            return Err(DecodeError::NotRoce(
                "EtherType is not IPv4, IPv6 or 0x8915",
            ));
        }
    };
    if let Some(off) = udp_offset {
        need(frame, "UDP header", l2_len + off + UDP_HEADER_LEN)?;
        if UdpPacket::new_unchecked(&net[off..]).dst_port() != super::ROCEV2_UDP_PORT {
            return Err(DecodeError::NotRoce("UDP destination port is not 4791"));
        }
    }
    let bth_offset = udp_offset.map_or(GRH_LEN, |off| off + UDP_HEADER_LEN);
    need(frame, "BTH", l2_len + bth_offset + BTH_LEN)?;
    let bth_view = Bth::new_unchecked(&net[bth_offset..]);
    let bth = BthRepr::parse(&bth_view).map_err(|_| DecodeError::Malformed("BTH"))?;
    let layout =
        opcode_layout(bth.opcode).ok_or(DecodeError::UnsupportedOpcode(OpcodeName(bth.opcode)))?;
    let header_end = bth_offset + FrameSpec::transport_len(&layout);
    need(frame, "transport headers", l2_len + header_end)?;
    let bad = |_| DecodeError::Malformed("extension header");
    let mut off = bth_offset + BTH_LEN;
    let mut walk = HeaderWalk {
        tag,
        l2_len,
        version,
        net: net_kind,
        udp_offset,
        bth_offset,
        bth,
        tver: bth_view.tver(),
        reth: None,
        aeth: None,
        imm: None,
        cnp_pad: layout.cnp_pad,
        header_end,
        total,
        payload_len: 0,
    };
    if layout.reth {
        walk.reth = Some(RethRepr::parse(&net[off..]).map_err(bad)?);
        off += RETH_LEN;
    }
    if layout.aeth {
        walk.aeth = Some(AethRepr::parse(&net[off..]).map_err(bad)?);
        off += AETH_LEN;
    }
    if layout.cnp_pad {
        off += CNP_PAD_LEN;
    }
    if layout.immdt {
        walk.imm = Some(ImmDtRepr::parse(&net[off..]).map_err(bad)?);
    }
    if total < header_end + ICRC_LEN {
        return Err(DecodeError::Malformed(
            "length field shorter than the headers and ICRC",
        ));
    }
    if let Some(udp_off) = udp_offset {
        let udp_len = UdpPacket::new_unchecked(&net[udp_off..]).len();
        if usize::from(udp_len) != total - udp_off {
            return Err(DecodeError::Malformed(
                "UDP length disagrees with the IP length",
            ));
        }
    }
    walk.payload_len = (total - header_end - ICRC_LEN)
        .checked_sub(usize::from(bth.pad_count))
        .ok_or(DecodeError::Malformed("PadCnt larger than the payload"))?;
    Ok(walk)
}
