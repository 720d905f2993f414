//! The one layout of a RoCE frame's headers: Ethernet [+ 802.1Q] / GRH (v1)
//! or IPv4 | IPv6 + UDP 4791 (v2) / BTH / [RETH | AETH | CNP pad] / [ImmDt],
//! then payload, pad to 4 bytes and the ICRC (R-ROCE-1). [`RoceHeaders`]
//! writes them with every length field (IP total length, UDP length, GRH
//! PayLen, BTH PadCnt) derived from the payload length, and
//! [`RoceHeaders::emit_icrc`] closes the frame. Both builders of whole
//! frames use it: the RNIC's per-packet [`crate::rnic::frame::RoceFrameRepr`]
//! and `roceperf`'s [`super::FrameSpec`].
//!
//! Contract: nothing here allocates; [`RoceHeaders::emit`] panics if the
//! buffer is shorter than [`RoceHeaders::header_len`] (callers check and
//! return their own error). Lengths are bytes.
//!
//! Spec: roce-semantics §10 (R-ROCE-1, -6, -7); IBTA Vol. 1 §9.2, Annex A16,
//! Annex A17.

use crate::wire::ethernet::{
    EtherType, EthernetAddress, EthernetFrame, EthernetRepr, HEADER_LEN as ETH_HEADER_LEN,
    VLAN_TAG_LEN, VlanTag,
};
use crate::wire::ib::{
    AETH_LEN, AethRepr, BTH_LEN, Bth, BthRepr, CNP_PAD_LEN, GRH_LEN, GrhRepr, ICRC_LEN, IMMDT_LEN,
    IbError, ImmDtRepr, RETH_LEN, RethRepr, icrc,
};
use crate::wire::ip::{
    IPV4_HEADER_LEN, IPV6_HEADER_LEN, IpProtocol, Ipv4Packet, Ipv4Repr, Ipv6Packet, Ipv6Repr,
    UDP_HEADER_LEN, UdpPacket, UdpRepr,
};

/// UDP destination port of RoCE v2 (IANA).
pub const ROCEV2_UDP_PORT: u16 = 4791;

/// RoCE v1 (GRH over Ethernet) or v2 (IP/UDP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RoceVersion {
    /// EtherType 0x8915, GRH + BTH: not routable, priority from the VLAN PCP.
    V1,
    /// IPv4 or IPv6 / UDP 4791 / BTH: routable, priority from the DSCP.
    #[default]
    V2,
}

/// An 802.1Q tag a frame carries (DEI 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vlan {
    /// Priority code point, 0..=7.
    pub pcp: u8,
    /// VLAN id, 0..=4095 (0: priority tag only).
    pub vid: u16,
}

/// The extension header after the BTH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoceExt {
    /// None.
    None,
    /// RETH (WRITE first/only, READ request).
    Reth(RethRepr),
    /// AETH (ACK, READ responses first/last/only).
    Aeth(AethRepr),
    /// The 16 reserved zero bytes of a CNP.
    CnpPad,
}

impl RoceExt {
    /// Length in bytes.
    pub fn len(&self) -> usize {
        match self {
            RoceExt::None => 0,
            RoceExt::Reth(_) => RETH_LEN,
            RoceExt::Aeth(_) => AETH_LEN,
            RoceExt::CnpPad => CNP_PAD_LEN,
        }
    }

    /// True for [`RoceExt::None`].
    pub fn is_empty(&self) -> bool {
        matches!(self, RoceExt::None)
    }
}

/// The network header: the GRH of v1, or the IP header of v2 (a UDP header
/// follows it). Its length field is overwritten by [`RoceHeaders::emit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetRepr {
    /// RoCE v1.
    Grh(GrhRepr),
    /// RoCE v2 over IPv4.
    Ipv4(Ipv4Repr),
    /// RoCE v2 over IPv6.
    Ipv6(Ipv6Repr),
}

impl NetRepr {
    /// RoCE v1 or v2.
    pub fn version(&self) -> RoceVersion {
        match self {
            NetRepr::Grh(_) => RoceVersion::V1,
            NetRepr::Ipv4(_) | NetRepr::Ipv6(_) => RoceVersion::V2,
        }
    }

    /// Bytes from the end of the Ethernet header to the BTH (UDP included).
    pub fn header_len(&self) -> usize {
        match self {
            NetRepr::Grh(_) => GRH_LEN,
            NetRepr::Ipv4(_) => IPV4_HEADER_LEN + UDP_HEADER_LEN,
            NetRepr::Ipv6(_) => IPV6_HEADER_LEN + UDP_HEADER_LEN,
        }
    }

    fn ethertype(&self) -> EtherType {
        match self {
            NetRepr::Grh(_) => EtherType::RoceV1,
            NetRepr::Ipv4(_) => EtherType::Ipv4,
            NetRepr::Ipv6(_) => EtherType::Ipv6,
        }
    }
}

/// Every header of one RoCE frame, Ethernet to the last transport header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceHeaders {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// 802.1Q tag, if any.
    pub vlan: Option<Vlan>,
    /// GRH or IP header.
    pub net: NetRepr,
    /// UDP source port (v2; the ECMP entropy, R-ROCE-9).
    pub udp_src_port: u16,
    /// BTH (its `pad_count` is recomputed by `emit`).
    pub bth: BthRepr,
    /// Extension header.
    pub ext: RoceExt,
    /// Immediate data, after the extension header.
    pub imm: Option<ImmDtRepr>,
}

/// Pad bytes after a payload of `payload_len` so that it ends on a 4-byte
/// boundary (BTH PadCnt).
pub fn pad_len(payload_len: usize) -> usize {
    (4 - payload_len % 4) % 4
}

/// Bytes after the Ethernet header (and tag) of the largest RoCE packet of
/// `version` (v2 over IPv4) with `payload_len` bytes of payload: the longest
/// transport headers an opcode carries (RETH and ImmDt, RDMA WRITE ONLY
/// with immediate). An interface's MTU must hold this.
pub fn largest_packet_len(version: RoceVersion, payload_len: usize) -> usize {
    let net = match version {
        RoceVersion::V1 => GRH_LEN,
        RoceVersion::V2 => IPV4_HEADER_LEN + UDP_HEADER_LEN,
    };
    net + BTH_LEN + RETH_LEN + IMMDT_LEN + payload_len + pad_len(payload_len) + ICRC_LEN
}

impl RoceHeaders {
    /// Ethernet header, with the tag if any.
    pub fn l2_len(&self) -> usize {
        ETH_HEADER_LEN + self.vlan.map_or(0, |_| VLAN_TAG_LEN)
    }

    /// BTH, extension header and ImmDt.
    pub fn transport_len(&self) -> usize {
        BTH_LEN + self.ext.len() + self.imm.map_or(0, |_| IMMDT_LEN)
    }

    /// Bytes from the Ethernet header to the end of the transport headers.
    pub fn header_len(&self) -> usize {
        self.l2_len() + self.net.header_len() + self.transport_len()
    }

    /// Bytes from the BTH to the ICRC inclusive, for `payload_len`.
    pub fn after_net_len(&self, payload_len: usize) -> usize {
        self.transport_len() + payload_len + pad_len(payload_len) + ICRC_LEN
    }

    /// Whole frame length (no FCS), ICRC included, for `payload_len`.
    pub fn frame_len(&self, payload_len: usize) -> usize {
        self.l2_len() + self.net.header_len() + self.after_net_len(payload_len)
    }

    /// Writes the headers into `buf[..header_len()]` with length fields and
    /// PadCnt describing a frame with `payload_len` bytes of payload (GRH and
    /// IP lengths saturate at 65535; callers refuse longer frames). Returns
    /// [`RoceHeaders::header_len`]. Panics if `buf` is shorter.
    #[inline]
    pub fn emit(&self, buf: &mut [u8], payload_len: usize) -> usize {
        let l2 = self.l2_len();
        let ethertype = self.net.ethertype();
        let mut eth = EthernetFrame::new_unchecked(&mut buf[..l2]);
        EthernetRepr {
            src_addr: EthernetAddress(self.src_mac),
            dst_addr: EthernetAddress(self.dst_mac),
            ethertype,
        }
        .emit(&mut eth);
        if let Some(v) = self.vlan {
            eth.set_vlan_tag(VlanTag {
                pcp: v.pcp,
                dei: false,
                vid: v.vid,
                inner_ethertype: ethertype,
            });
        }
        let after_net = self.after_net_len(payload_len);
        let net = &mut buf[l2..];
        let ip_len = match self.net {
            NetRepr::Grh(g) => {
                GrhRepr {
                    payload_len: after_net.min(usize::from(u16::MAX)) as u16,
                    ..g
                }
                .emit(&mut net[..GRH_LEN]);
                None
            }
            NetRepr::Ipv4(ip) => {
                Ipv4Repr {
                    protocol: IpProtocol::Udp,
                    payload_len: UDP_HEADER_LEN + after_net,
                    ..ip
                }
                .emit(&mut Ipv4Packet::new_unchecked(&mut net[..IPV4_HEADER_LEN]));
                Some(IPV4_HEADER_LEN)
            }
            NetRepr::Ipv6(ip) => {
                Ipv6Repr {
                    next_header: IpProtocol::Udp,
                    payload_len: UDP_HEADER_LEN + after_net,
                    ..ip
                }
                .emit(&mut Ipv6Packet::new_unchecked(&mut net[..IPV6_HEADER_LEN]));
                Some(IPV6_HEADER_LEN)
            }
        };
        if let Some(ip_len) = ip_len {
            UdpRepr {
                src_port: self.udp_src_port,
                dst_port: ROCEV2_UDP_PORT,
                payload_len: after_net,
            }
            .emit(&mut UdpPacket::new_unchecked(
                &mut net[ip_len..ip_len + UDP_HEADER_LEN],
            ));
        }
        let mut off = self.net.header_len();
        BthRepr {
            pad_count: pad_len(payload_len) as u8,
            ..self.bth
        }
        .emit(&mut Bth::new_unchecked(&mut net[off..off + BTH_LEN]));
        off += BTH_LEN;
        match &self.ext {
            RoceExt::None => {}
            RoceExt::Reth(r) => r.emit(&mut net[off..off + RETH_LEN]),
            RoceExt::Aeth(a) => a.emit(&mut net[off..off + AETH_LEN]),
            RoceExt::CnpPad => net[off..off + CNP_PAD_LEN].fill(0),
        }
        off += self.ext.len();
        if let Some(imm) = self.imm {
            imm.emit(&mut net[off..off + IMMDT_LEN]);
        }
        self.header_len()
    }

    /// Computes the ICRC over `frame` (the whole frame, ICRC slot last, as
    /// [`RoceHeaders::emit`] and the payload left it) and writes it into the
    /// last four bytes (R-ROCE-7).
    pub fn emit_icrc(&self, frame: &mut [u8]) -> Result<(), IbError> {
        let end = frame
            .len()
            .checked_sub(ICRC_LEN)
            .ok_or(IbError::Truncated)?;
        let crc = icrc(frame.get(self.l2_len()..end).ok_or(IbError::Truncated)?)?;
        frame[end..].copy_from_slice(&crc.to_le_bytes());
        Ok(())
    }
}
