//! The Global Route Header (IBTA Vol. 1 §8.3), which RoCE v1 puts between
//! the Ethernet header (EtherType 0x8915) and the BTH (R-ROCE-1).
//!
//! The GRH has the IPv6 header's layout (IPVer 6, TClass, FlowLabel, PayLen,
//! NxtHdr, HopLmt, SGID, DGID), so the view is [`Ipv6Packet`]; the `Repr`
//! here names the fields as the IBTA does. For a RoCE packet NxtHdr is 0x1B
//! (the BTH follows) and PayLen counts from the BTH to the ICRC inclusive.
//! GIDs of IPv4 hosts are IPv4-mapped (`::ffff:a.b.c.d`), as Linux builds
//! them from a netdev's IPv4 addresses.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::IbError;
use crate::wire::ip::{IPV6_HEADER_LEN, IpProtocol, Ipv6Packet};

/// Length of the GRH in bytes.
pub const GRH_LEN: usize = IPV6_HEADER_LEN;
/// NxtHdr value that announces a BTH (IBTA §8.3.1: 0x1B, "IBA transport").
pub const NEXT_HEADER_BTH: u8 = 0x1B;

/// Owned Global Route Header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrhRepr {
    /// Traffic class (carried like the IPv6 DSCP ‖ ECN byte).
    pub traffic_class: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
    /// Bytes after the GRH: BTH to ICRC inclusive.
    pub payload_len: u16,
    /// Next header (0x1B for a BTH).
    pub next_header: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Source GID.
    pub sgid: Ipv6Addr,
    /// Destination GID.
    pub dgid: Ipv6Addr,
}

impl GrhRepr {
    /// Parses the first 40 bytes of `b` (IPVer must be 6).
    pub fn parse(b: &[u8]) -> Result<GrhRepr, IbError> {
        if b.len() < GRH_LEN {
            return Err(IbError::Truncated);
        }
        let p = Ipv6Packet::new_unchecked(b);
        if p.version() != 6 {
            return Err(IbError::Version(p.version()));
        }
        Ok(GrhRepr {
            traffic_class: p.traffic_class(),
            flow_label: p.flow_label(),
            payload_len: p.payload_len(),
            next_header: p.next_header().into(),
            hop_limit: p.hop_limit(),
            sgid: p.src_addr(),
            dgid: p.dst_addr(),
        })
    }

    /// 40 bytes.
    pub fn buffer_len(&self) -> usize {
        GRH_LEN
    }

    /// Writes into the first 40 bytes of `b`.
    pub fn emit(&self, b: &mut [u8]) {
        let mut p = Ipv6Packet::new_unchecked(&mut b[..GRH_LEN]);
        p.set_version_tc_flow(self.traffic_class, self.flow_label);
        p.set_payload_len(self.payload_len);
        p.set_next_header(IpProtocol::from(self.next_header));
        p.set_hop_limit(self.hop_limit);
        p.set_src_addr(self.sgid);
        p.set_dst_addr(self.dgid);
    }

    /// The IPv4 address an IPv4-mapped GID stands for.
    pub fn ipv4_of(gid: Ipv6Addr) -> Option<Ipv4Addr> {
        gid.to_ipv4_mapped()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_with_mapped_gids() {
        let g = GrhRepr {
            traffic_class: 26 << 2,
            flow_label: 0,
            payload_len: 12 + 16 + 4,
            next_header: NEXT_HEADER_BTH,
            hop_limit: 1,
            sgid: Ipv4Addr::new(10, 0, 0, 1).to_ipv6_mapped(),
            dgid: Ipv4Addr::new(10, 0, 0, 2).to_ipv6_mapped(),
        };
        let mut b = [0u8; 40];
        g.emit(&mut b);
        assert_eq!(&b[..8], &[0x66, 0x80, 0x00, 0x00, 0x00, 0x20, 0x1b, 0x01]);
        assert_eq!(&b[8 + 10..8 + 16], &[0xff, 0xff, 10, 0, 0, 1]);
        assert_eq!(GrhRepr::parse(&b).unwrap(), g);
        assert_eq!(GrhRepr::ipv4_of(g.dgid), Some(Ipv4Addr::new(10, 0, 0, 2)));
        b[0] = 0x46;
        assert_eq!(GrhRepr::parse(&b), Err(IbError::Version(4)));
        assert_eq!(GrhRepr::parse(&b[..39]), Err(IbError::Truncated));
    }
}
