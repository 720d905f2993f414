//! Whole RoCE frames, as the RNIC sends and receives them: the builder
//! ([`RoceFrameRepr::emit`]) and parser ([`RoceFrameRepr::parse`]) of
//! RoCE v2 (Ethernet / IPv4 / UDP 4791 / BTH ...) and RoCE v1 (Ethernet,
//! EtherType 0x8915 / GRH / BTH ...) frames, optionally 802.1Q-tagged, and the
//! UDP source-port entropy rule.
//!
//! Layout (R-ROCE-1): Ethernet (14, or 18 tagged) / IPv4 (20) + UDP (8,
//! checksum 0, R-ROCE-6) or GRH (40) / BTH (12) / [RETH 16 | AETH 4 | CNP pad
//! 16] / [ImmDt 4] / payload / pad to 4 bytes (BTH PadCnt) / ICRC (4,
//! R-ROCE-7). The IP total length, UDP length and GRH PayLen include the ICRC.
//!
//! RoCE v1 frames carry IPv4-mapped GIDs (`::ffff:a.b.c.d`), so one
//! description serves both versions: `ip` holds the addresses, the traffic
//! class (DSCP ‖ ECN) and the TTL / hop limit; priority travels in the VLAN
//! PCP. The headers themselves live in [`crate::wire`] (one file per family)
//! and their layout in [`crate::wire::roce_frame::RoceHeaders`], the one
//! emitter this module shares with `roceperf`'s frame builder; `parse` reads
//! frames with [`crate::wire::roce_frame::walk`], the header walk behind
//! `roceperf decode` too, and adds what a receiving NIC enforces (the IPv4
//! header checksum; IPv4 only for v2);
//! [`RoceVersion`], [`Vlan`] and [`RoceExt`] are re-exported from there.
//!
//! Contract: nothing here allocates or panics on any input; `parse` accepts a
//! whole frame (then the ICRC is checked) or only its headers, as
//! [`RoceFrameRepr::emit_headers`] writes them.
//!
//! Spec: roce-semantics §10 (R-ROCE-1..9), §14 E-11..E-13; scapy fixtures from
//! p4runtime-subset §3.2.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::wire::ethernet::{EthernetFrame, HEADER_LEN as ETH_HEADER_LEN};
use crate::wire::ib::{
    BthRepr, GrhRepr, ICRC_LEN, IbError, ImmDtRepr, NEXT_HEADER_BTH, Opcode, icrc,
};
use crate::wire::ip::{Ecn, IpError, IpProtocol, Ipv4Packet, Ipv4Repr, UdpPacket};
use crate::wire::roce_frame::{DecodeError, NetKind, NetRepr, RoceHeaders, pad_len, walk};
pub use crate::wire::roce_frame::{ROCEV2_UDP_PORT, RoceExt, RoceVersion, Vlan};

/// Length of the untagged Ethernet header.
pub const ETHERNET_HEADER_LEN: usize = ETH_HEADER_LEN;

/// Errors from parsing and building RoCE frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RoceError {
    /// The buffer is shorter than the headers need.
    #[error("buffer too short for the RoCE headers")]
    Truncated,
    /// An IPv4/UDP problem.
    #[error("IP/UDP: {0}")]
    Ip(#[from] IpError),
    /// Neither IPv4/UDP 4791 nor EtherType 0x8915 with a GRH announcing a BTH.
    #[error("not a RoCE frame")]
    NotRoce,
    /// A RoCE opcode this model does not take (UD, RD, atomics).
    #[error("unsupported opcode {0:?}")]
    UnsupportedOpcode(Opcode),
    /// The buffer handed to `emit` is smaller than `buffer_len`.
    #[error("output buffer of {have} bytes, need {need}")]
    BufferTooSmall {
        /// Bytes available.
        have: usize,
        /// Bytes needed.
        need: usize,
    },
}

impl From<DecodeError> for RoceError {
    fn from(e: DecodeError) -> Self {
        match e {
            DecodeError::Truncated { .. } => RoceError::Truncated,
            DecodeError::NotRoce(_) => RoceError::NotRoce,
            DecodeError::Malformed(_) => RoceError::Ip(IpError::Malformed),
            DecodeError::UnsupportedOpcode(name) => RoceError::UnsupportedOpcode(name.0),
        }
    }
}

impl From<IbError> for RoceError {
    fn from(e: IbError) -> Self {
        match e {
            IbError::Truncated => RoceError::Truncated,
            IbError::Version(_) => RoceError::NotRoce,
        }
    }
}

/// UDP source port from the two QP numbers (R-ROCE-9, E-13): the flow label
/// derived from `lqpn·rqpn`, folded into 0xC000..=0xFFFF.
pub fn udp_src_port_from_qpns(lqpn: u32, rqpn: u32) -> u16 {
    let mut v = u64::from(lqpn) * u64::from(rqpn);
    v ^= v >> 20;
    v ^= v >> 40;
    let fl = (v & 0xF_FFFF) as u32;
    (((fl & 0x3FFF) ^ ((fl & 0xF_C000) >> 14)) | 0xC000) as u16
}

/// Owned description of a whole RoCE frame: what the RNIC model, the host
/// agent and the frame builder emit, and the result of [`RoceFrameRepr::parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceFrameRepr {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// 802.1Q tag (required for a priority on RoCE v1).
    pub vlan: Option<Vlan>,
    /// v1 or v2.
    pub version: RoceVersion,
    /// IPv4 header (v2; its `payload_len` is recomputed by `emit`). For v1:
    /// the GIDs' IPv4 addresses, the traffic class (`dscp`, `ecn`) and the
    /// hop limit (`ttl`).
    pub ip: Ipv4Repr,
    /// UDP source port (entropy, R-ROCE-9; v2 only).
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
    /// The GRH of a v1 frame as it was on the wire (full GIDs).
    pub grh: Option<GrhRepr>,
    /// IPv4 header checksum as received (v2).
    pub ip_checksum: Option<u16>,
    /// Offset of the payload in the frame, bytes.
    pub payload_offset: usize,
    /// Frame length (Ethernet header to ICRC inclusive, no FCS) implied by
    /// the IP total length or GRH PayLen.
    pub frame_len: usize,
    /// ICRC as received, if the whole frame was present.
    pub icrc_received: Option<u32>,
    /// `Some(ok)` if the whole frame was present and the ICRC was checked.
    pub icrc_ok: Option<bool>,
}

impl RoceFrameRepr {
    /// A RoCE v2 frame, untagged, with IPv4 defaults (DF, TTL 64, ident 0)
    /// and no immediate data.
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
            vlan: None,
            version: RoceVersion::V2,
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
        pad_len(self.payload_len)
    }

    /// The headers in the one RoCE layout ([`RoceHeaders`]); lengths and
    /// PadCnt are filled in by its `emit`.
    #[inline]
    fn headers(&self) -> RoceHeaders {
        RoceHeaders {
            dst_mac: self.dst_mac,
            src_mac: self.src_mac,
            vlan: self.vlan,
            net: match self.version {
                RoceVersion::V1 => NetRepr::Grh(self.grh_without_len()),
                RoceVersion::V2 => NetRepr::Ipv4(self.ip),
            },
            udp_src_port: self.udp_src_port,
            bth: self.bth,
            ext: self.ext,
            imm: self.imm,
        }
    }

    /// Bytes from the Ethernet header to the end of the transport headers.
    pub fn header_len(&self) -> usize {
        self.headers().header_len()
    }

    /// Whole frame length in bytes (no FCS), ICRC included.
    pub fn buffer_len(&self) -> usize {
        self.headers().frame_len(self.payload_len)
    }

    /// The GRH a v1 frame carries.
    pub fn grh(&self) -> GrhRepr {
        let after = self.headers().after_net_len(self.payload_len);
        GrhRepr {
            payload_len: after.min(usize::from(u16::MAX)) as u16,
            ..self.grh_without_len()
        }
    }

    /// The GRH of a v1 frame with PayLen 0 ([`RoceHeaders::emit`] sets it).
    fn grh_without_len(&self) -> GrhRepr {
        GrhRepr {
            traffic_class: (self.ip.dscp << 2) | self.ip.ecn.bits(),
            flow_label: 0,
            payload_len: 0,
            next_header: NEXT_HEADER_BTH,
            hop_limit: self.ip.ttl,
            sgid: self.ip.src_addr.to_ipv6_mapped(),
            dgid: self.ip.dst_addr.to_ipv6_mapped(),
        }
    }

    /// Writes the whole frame: headers, `payload` (zero-filled if shorter
    /// than `payload_len`, truncated if longer), pad and ICRC. Returns the
    /// length.
    pub fn emit(&self, buf: &mut [u8], payload: &[u8]) -> Result<usize, RoceError> {
        let headers = self.headers();
        let len = headers.frame_len(self.payload_len);
        let have = buf.len();
        let Some(buf) = buf.get_mut(..len) else {
            return Err(RoceError::BufferTooSmall { have, need: len });
        };
        let hl = headers.emit(buf, self.payload_len);
        let body = &mut buf[hl..len - ICRC_LEN];
        let n = payload.len().min(self.payload_len);
        body[..n].copy_from_slice(&payload[..n]);
        body[n..].fill(0);
        headers.emit_icrc(buf)?;
        Ok(len)
    }

    /// Writes only the headers (Ethernet to the last transport header) with
    /// length fields describing the whole frame; [`RoceFrameRepr::parse`]
    /// accepts this truncated form.
    pub fn emit_headers(&self, buf: &mut [u8]) -> Result<usize, RoceError> {
        let headers = self.headers();
        let hl = headers.header_len();
        if buf.len() < hl {
            return Err(RoceError::BufferTooSmall {
                have: buf.len(),
                need: hl,
            });
        }
        Ok(headers.emit(buf, self.payload_len))
    }

    /// Parses an Ethernet (untagged or 802.1Q-tagged) frame carrying RoCE v2
    /// (IPv4 / UDP 4791; IPv4 options skipped, the header checksum checked)
    /// or RoCE v1 (EtherType 0x8915 / GRH with NxtHdr 0x1B). `frame` may be
    /// whole (then the ICRC is verified) or only its headers; lengths come
    /// from the IP total length or the GRH PayLen.
    pub fn parse(frame: &[u8]) -> Result<ParsedRoce, RoceError> {
        let w = walk(frame)?;
        let eth = EthernetFrame::new_unchecked(frame);
        let net = &frame[w.l2_len..];
        let (ip, udp_src_port, ip_checksum, grh) = match w.net {
            NetKind::Ipv4 { header_len } => {
                let ipv = Ipv4Packet::new_unchecked(net);
                if !ipv.verify_checksum() {
                    return Err(RoceError::Ip(IpError::Checksum));
                }
                let ip = Ipv4Repr {
                    src_addr: ipv.src_addr(),
                    dst_addr: ipv.dst_addr(),
                    protocol: IpProtocol::Udp,
                    payload_len: w.total - header_len,
                    dscp: ipv.dscp(),
                    ecn: ipv.ecn(),
                    ident: ipv.ident(),
                    dont_frag: ipv.dont_frag(),
                    ttl: ipv.ttl(),
                };
                let udp = UdpPacket::new_unchecked(&net[header_len..]);
                (ip, udp.src_port(), Some(ipv.checksum()), None)
            }
            // The model speaks RoCE v2 over IPv4 only.
            NetKind::Ipv6 => return Err(RoceError::NotRoce),
            NetKind::Grh(g) => {
                let v4 = |gid: Ipv6Addr| GrhRepr::ipv4_of(gid).unwrap_or(Ipv4Addr::UNSPECIFIED);
                let ip = Ipv4Repr {
                    src_addr: v4(g.sgid),
                    dst_addr: v4(g.dgid),
                    protocol: IpProtocol::Unknown(NEXT_HEADER_BTH),
                    payload_len: usize::from(g.payload_len),
                    dscp: g.traffic_class >> 2,
                    ecn: Ecn::from_bits(g.traffic_class),
                    ident: 0,
                    dont_frag: false,
                    ttl: g.hop_limit,
                };
                (ip, 0, None, Some(g))
            }
        };
        let ext = match (w.reth, w.aeth) {
            _ if w.cnp_pad => RoceExt::CnpPad,
            (Some(reth), _) => RoceExt::Reth(reth),
            (None, Some(aeth)) => RoceExt::Aeth(aeth),
            (None, None) => RoceExt::None,
        };
        let frame_len = w.frame_len();
        let (icrc_received, icrc_ok) = if frame.len() >= frame_len {
            let end = w.icrc_offset();
            let got = u32::from_le_bytes([net[end], net[end + 1], net[end + 2], net[end + 3]]);
            (Some(got), Some(icrc(&net[..end])? == got))
        } else {
            (None, None)
        };
        Ok(ParsedRoce {
            repr: RoceFrameRepr {
                dst_mac: eth.dst_addr().0,
                src_mac: eth.src_addr().0,
                vlan: w.tag.map(|t| Vlan {
                    pcp: t.pcp,
                    vid: t.vid,
                }),
                version: w.version,
                ip,
                udp_src_port,
                bth: w.bth,
                ext,
                imm: w.imm,
                payload_len: w.payload_len,
            },
            vlan_pcp: w.tag.map(|t| t.pcp),
            grh,
            ip_checksum,
            payload_offset: w.l2_len + w.header_end,
            frame_len,
            icrc_received,
            icrc_ok,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ib::{DEFAULT_PKEY, RethRepr};

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
        assert_eq!(p.icrc_received, Some(0x75d9_7b90));
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
    fn vlan_tagged_frame_parses_with_pcp_and_builds_the_same() {
        let untagged = hex(WRITE_FRAME);
        let mut tagged = untagged[..12].to_vec();
        tagged.extend_from_slice(&[0x81, 0x00, 0x60, 0x0A]); // PCP 3, VID 10
        tagged.extend_from_slice(&untagged[12..]);
        let p = RoceFrameRepr::parse(&tagged).unwrap();
        assert_eq!(p.vlan_pcp, Some(3));
        assert_eq!(p.repr.vlan, Some(Vlan { pcp: 3, vid: 10 }));
        assert_eq!(p.icrc_ok, Some(true), "the ICRC does not cover L2");
        assert_eq!(p.payload_offset, 74);
        assert_eq!(p.frame_len, 110);
        let mut r = write_repr();
        r.vlan = Some(Vlan { pcp: 3, vid: 10 });
        let mut buf = [0u8; 128];
        let payload: Vec<u8> = (0u8..32).collect();
        let n = r.emit(&mut buf, &payload).unwrap();
        assert_eq!(&buf[..n], &tagged[..]);
    }

    #[test]
    fn roce_v1_frame_roundtrip() {
        let mut r = write_repr();
        r.version = RoceVersion::V1;
        r.vlan = Some(Vlan { pcp: 3, vid: 100 });
        r.ip.ident = 0;
        r.ip.dont_frag = false;
        r.ip.ttl = 1;
        let mut buf = [0u8; 160];
        let n = r.emit(&mut buf, &[0xAB; 32]).unwrap();
        assert_eq!(n, 18 + 40 + 12 + 16 + 32 + 4);
        assert_eq!(&buf[12..18], &[0x81, 0x00, 0x60, 0x64, 0x89, 0x15]);
        assert_eq!(buf[18] >> 4, 6, "GRH IPVer");
        assert_eq!(buf[18 + 6], NEXT_HEADER_BTH);
        let p = RoceFrameRepr::parse(&buf[..n]).unwrap();
        assert_eq!(p.icrc_ok, Some(true));
        assert_eq!(p.repr.version, RoceVersion::V1);
        assert_eq!(p.repr.ip.src_addr, r.ip.src_addr);
        assert_eq!((p.repr.ip.dscp, p.repr.ip.ecn), (26, Ecn::Ect0));
        assert_eq!(p.repr.bth, r.bth);
        assert_eq!(p.repr.ext, r.ext);
        assert_eq!(p.vlan_pcp, Some(3));
        assert_eq!(p.grh.unwrap().payload_len, 12 + 16 + 32 + 4);
        assert_eq!(p.frame_len, n);
        // Corrupt one payload byte: the ICRC says so.
        buf[100] ^= 1;
        assert_eq!(
            RoceFrameRepr::parse(&buf[..n]).unwrap().icrc_ok,
            Some(false)
        );
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            let _ = RoceFrameRepr::parse(&data);
        }
    }
}
