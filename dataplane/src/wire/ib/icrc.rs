//! The invariant CRC every RoCE packet ends with (IBTA Vol. 1 §7.8.1,
//! R-ROCE-7; RoCE v1: Annex A16, RoCE v2: Annex A17).
//!
//! CRC-32 (the Ethernet polynomial, zlib's, via `crc32fast`: the crate's one
//! CRC implementation) over 8 bytes of ones standing in for the IB LRH, then
//! the network header, [UDP,] BTH and the rest up to the ICRC, with the fields
//! a router may change replaced by ones: IPv4 TOS, TTL and header checksum;
//! IPv6 / GRH traffic class, flow label and hop limit; the UDP checksum; BTH
//! byte 4 (FECN, BECN, reserved). The four ICRC bytes go on the wire least
//! significant first. Nothing here allocates.

use super::IbError;
use super::bth::BTH_LEN;
use super::grh::NEXT_HEADER_BTH;
use crate::wire::ip::{IPV4_HEADER_LEN, UDP_HEADER_LEN};

/// Length of the invariant CRC trailer in bytes.
pub const ICRC_LEN: usize = 4;

/// The CRC-32 of the 8 bytes of ones that stand in for the LRH: every ICRC
/// starts from this state (`icrc_starts_after_the_lrh_ones` checks it).
const CRC_OF_LRH_ONES: u32 = 0x2144_DF1C;

/// Computes the ICRC of a RoCE packet.
///
/// `l3_packet` starts at the IPv4 or IPv6 header (RoCE v2, UDP follows) or
/// at the GRH (RoCE v1: IPVer 6 and NxtHdr 0x1B, the BTH follows directly)
/// and ends just before the ICRC. Returns the CRC value; the wire bytes are
/// `value.to_le_bytes()`.
pub fn icrc(l3_packet: &[u8]) -> Result<u32, IbError> {
    let first = *l3_packet.first().ok_or(IbError::Truncated)?;
    let (net_len, udp_len) = match first >> 4 {
        4 => (usize::from(first & 0x0F) * 4, UDP_HEADER_LEN),
        6 => {
            let next = *l3_packet.get(6).ok_or(IbError::Truncated)?;
            (
                40,
                if next == NEXT_HEADER_BTH {
                    0
                } else {
                    UDP_HEADER_LEN
                },
            )
        }
        v => return Err(IbError::Version(v)),
    };
    let hdr_len = net_len + udp_len + BTH_LEN;
    if net_len < IPV4_HEADER_LEN || l3_packet.len() < hdr_len {
        return Err(IbError::Truncated);
    }
    // Masked copy of network header + UDP + BTH (at most 60 + 8 + 12 bytes).
    let mut head = [0u8; 80];
    let head = &mut head[..hdr_len];
    head.copy_from_slice(&l3_packet[..hdr_len]);
    if first >> 4 == 4 {
        head[1] = 0xFF; // TOS
        head[8] = 0xFF; // TTL
        head[10] = 0xFF; // header checksum
        head[11] = 0xFF;
    } else {
        head[0] |= 0x0F; // traffic class (low nibble of byte 0, high of byte 1)
        head[1] = 0xFF; // and the flow label
        head[2] = 0xFF;
        head[3] = 0xFF;
        head[7] = 0xFF; // hop limit
    }
    if udp_len > 0 {
        head[net_len + 6] = 0xFF; // UDP checksum
        head[net_len + 7] = 0xFF;
    }
    head[net_len + udp_len + 4] = 0xFF; // BTH FECN/BECN/reserved
    let mut crc = crc32fast::Hasher::new_with_initial(CRC_OF_LRH_ONES);
    crc.update(head);
    crc.update(&l3_packet[hdr_len..]);
    Ok(crc.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ip::Ipv4Packet;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn icrc_starts_after_the_lrh_ones() {
        assert_eq!(crc32fast::hash(&[0xFF; 8]), CRC_OF_LRH_ONES);
    }

    #[test]
    fn e11_and_e12() {
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
    fn grh_packets_have_no_udp_and_mask_like_ipv6() {
        // GRH (TClass 0x68, hop limit 1) + CNP-like BTH + 16 bytes.
        let mut p = vec![0x66, 0x80, 0, 0, 0, 32, NEXT_HEADER_BTH, 1];
        p.extend_from_slice(&[0u8; 32]);
        p.extend_from_slice(&hex("0a00ffff0000001100000005"));
        p.extend_from_slice(&[7u8; 16]);
        let v = icrc(&p).unwrap();
        // The same bytes with a UDP next header would be read as UDP: different.
        let mut q = p.clone();
        q[6] = 17;
        assert_ne!(icrc(&q).unwrap(), v);
        // Traffic class, flow label, hop limit and BTH byte 4 are invariant.
        p[0] = 0x6F;
        p[1] = 0xFF;
        p[3] = 0x12;
        p[7] = 64;
        p[40 + 4] = 0xC0;
        assert_eq!(icrc(&p).unwrap(), v);
        // The addresses are not.
        p[39] ^= 1;
        assert_ne!(icrc(&p).unwrap(), v);
    }

    #[test]
    fn short_or_foreign_input_is_an_error() {
        assert_eq!(icrc(&[]), Err(IbError::Truncated));
        assert_eq!(icrc(&[0x45; 30]), Err(IbError::Truncated));
        assert_eq!(icrc(&[0x25; 60]), Err(IbError::Version(2)));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            let _ = icrc(&data);
        }
    }
}
