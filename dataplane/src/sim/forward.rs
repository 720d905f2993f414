//! The forwarding seam of a simulated switch, and a plain-Rust L3 forwarder.
//!
//! [`Forwarding`] is what the switch's programmable pipeline does: pick an
//! egress port and a priority at ingress, and apply the traffic manager's
//! ECN decision at egress. [`L3Forwarder`] implements it by hand; the
//! compiled P4 program implements the same trait later, so scenarios can run
//! against either.
//!
//! Contract: frames are untagged Ethernet starting at byte 0; the simulator
//! may hand over only the headers (`frame.len()` < `frame_len`), so nothing
//! here reads past the transport headers. Bad input is a [`ForwardDrop`],
//! never a panic. No allocation per packet.
//!
//! Spec: roce-semantics R-MAP-2 (DSCP → priority: 26 → 3, 48 → 6, others 0
//! by default), R-ECMP-1..3 (5-tuple, MurmurHash3 key13, `hash mod N`),
//! R-ECN-2 (mark only ECT, rewrite IPv4 checksum), R-ECN-7 (TTL/TOS changes
//! keep the ICRC valid).

use std::net::Ipv4Addr;

use crate::wire::ip::{IPV4_HEADER_LEN, IpProtocol, Ipv4Packet};
use crate::wire::roce::{ETHERNET_HEADER_LEN, FiveTuple};

/// Where an ingress packet goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Egress port.
    pub egress_port: u16,
    /// Priority (selects the ingress PG and the egress queue).
    pub priority: u8,
}

/// Why the pipeline dropped a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum ForwardDrop {
    /// Not IPv4 (or an EtherType we do not route).
    #[error("not IPv4")]
    NotIpv4,
    /// Header too short or inconsistent.
    #[error("malformed header")]
    Malformed,
    /// No route to the destination.
    #[error("no route")]
    NoRoute,
    /// TTL would reach zero.
    #[error("TTL expired")]
    TtlExpired,
}

/// Egress-side information the traffic manager hands the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EgressMeta {
    /// Egress port.
    pub port: u16,
    /// Egress queue / priority.
    pub priority: u8,
    /// Queue depth after this packet left, bytes (R-ECN-4).
    pub queue_bytes: u64,
    /// The TM's RED decision: congestion should be signalled on this packet.
    pub congested: bool,
}

/// A switch pipeline as seen by the simulator.
pub trait Forwarding {
    /// Ingress: classify and route a frame of `frame_len` bytes that arrived
    /// on `in_port`. May rewrite headers in `frame` (e.g. TTL).
    fn forward(
        &mut self,
        in_port: u16,
        frame: &mut [u8],
        frame_len: usize,
    ) -> Result<Decision, ForwardDrop>;

    /// Egress: apply ECN marking if `meta.congested` (and the packet is ECT).
    /// Returns true if the packet left CE-marked by this call.
    fn egress(&mut self, meta: &EgressMeta, frame: &mut [u8]) -> bool;
}

#[derive(Debug, Clone)]
struct Route {
    prefix: u32,
    len: u8,
    ports: Vec<u16>,
}

/// Counters of the L3 forwarder.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct L3Stats {
    /// Packets forwarded.
    pub forwarded: u64,
    /// Drops: not IPv4.
    pub drop_not_ipv4: u64,
    /// Drops: malformed.
    pub drop_malformed: u64,
    /// Drops: no route.
    pub drop_no_route: u64,
    /// Drops: TTL expired.
    pub drop_ttl: u64,
    /// Packets CE-marked at egress.
    pub ce_marked: u64,
}

/// A longest-prefix-match IPv4 router with ECMP and a DSCP → priority map.
#[derive(Debug, Clone)]
pub struct L3Forwarder {
    routes: Vec<Route>,
    dscp_to_priority: [u8; 64],
    ecmp_seed: u32,
    decrement_ttl: bool,
    stats: L3Stats,
}

impl Default for L3Forwarder {
    fn default() -> Self {
        Self::new(0)
    }
}

impl L3Forwarder {
    /// An empty table with the R-MAP-2 lab map (26 → 3, 48 → 6, else 0) and
    /// the given ECMP seed.
    pub fn new(ecmp_seed: u32) -> Self {
        let mut map = [0u8; 64];
        map[26] = 3;
        map[48] = 6;
        L3Forwarder {
            routes: Vec::new(),
            dscp_to_priority: map,
            ecmp_seed,
            decrement_ttl: true,
            stats: L3Stats::default(),
        }
    }

    /// Adds `prefix/len → ports` (equal-cost set, hashed in the given order).
    /// A later route with the same prefix replaces the earlier one.
    pub fn add_route(&mut self, prefix: Ipv4Addr, len: u8, ports: &[u16]) {
        let len = len.min(32);
        let mask = prefix_mask(len);
        let prefix = u32::from(prefix) & mask;
        self.routes
            .retain(|r| !(r.prefix == prefix && r.len == len));
        self.routes.push(Route {
            prefix,
            len,
            ports: ports.to_vec(),
        });
        self.routes.sort_by_key(|r| std::cmp::Reverse(r.len));
    }

    /// Sets the priority of one DSCP value.
    pub fn set_dscp_priority(&mut self, dscp: u8, priority: u8) {
        if let Some(e) = self.dscp_to_priority.get_mut(usize::from(dscp)) {
            *e = priority.min(7);
        }
    }

    /// Turns TTL decrement on or off (on by default).
    pub fn set_decrement_ttl(&mut self, on: bool) {
        self.decrement_ttl = on;
    }

    /// Counters.
    pub fn stats(&self) -> L3Stats {
        self.stats
    }

    /// The equal-cost port set for `dst`, if routed.
    pub fn lookup(&self, dst: Ipv4Addr) -> Option<&[u16]> {
        let d = u32::from(dst);
        self.routes
            .iter()
            .find(|r| d & prefix_mask(r.len) == r.prefix)
            .map(|r| r.ports.as_slice())
    }

    fn classify(&mut self, frame: &mut [u8]) -> Result<Decision, ForwardDrop> {
        if frame.len() < ETHERNET_HEADER_LEN + IPV4_HEADER_LEN {
            return Err(ForwardDrop::Malformed);
        }
        if frame[12..14] != [0x08, 0x00] {
            return Err(ForwardDrop::NotIpv4);
        }
        let ip_bytes = &mut frame[ETHERNET_HEADER_LEN..];
        let ip = Ipv4Packet::new_unchecked(&*ip_bytes);
        let ihl = usize::from(ip.header_len());
        if ip.version() != 4 || ihl < IPV4_HEADER_LEN || ip_bytes.len() < ihl {
            return Err(ForwardDrop::Malformed);
        }
        let protocol = ip.protocol();
        let (src_port, dst_port) = match protocol {
            IpProtocol::Udp | IpProtocol::Tcp if ip_bytes.len() >= ihl + 4 => (
                u16::from_be_bytes([ip_bytes[ihl], ip_bytes[ihl + 1]]),
                u16::from_be_bytes([ip_bytes[ihl + 2], ip_bytes[ihl + 3]]),
            ),
            _ => (0, 0),
        };
        let tuple = FiveTuple {
            src_addr: ip.src_addr(),
            dst_addr: ip.dst_addr(),
            protocol: protocol.into(),
            src_port,
            dst_port,
        };
        let priority = self.dscp_to_priority[usize::from(ip.dscp())];
        let ttl = ip.ttl();
        let ports = self.lookup(tuple.dst_addr).ok_or(ForwardDrop::NoRoute)?;
        if ports.is_empty() {
            return Err(ForwardDrop::NoRoute);
        }
        let egress_port = ports[tuple.ecmp_index(self.ecmp_seed, ports.len())];
        if self.decrement_ttl {
            if ttl <= 1 {
                return Err(ForwardDrop::TtlExpired);
            }
            let mut ipm = Ipv4Packet::new_unchecked(&mut *ip_bytes);
            ipm.set_ttl(ttl - 1);
            ipm.fill_checksum();
        }
        Ok(Decision {
            egress_port,
            priority,
        })
    }
}

fn prefix_mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len.min(32)))
    }
}

impl Forwarding for L3Forwarder {
    fn forward(
        &mut self,
        _in_port: u16,
        frame: &mut [u8],
        _frame_len: usize,
    ) -> Result<Decision, ForwardDrop> {
        let r = self.classify(frame);
        match r {
            Ok(_) => self.stats.forwarded += 1,
            Err(ForwardDrop::NotIpv4) => self.stats.drop_not_ipv4 += 1,
            Err(ForwardDrop::Malformed) => self.stats.drop_malformed += 1,
            Err(ForwardDrop::NoRoute) => self.stats.drop_no_route += 1,
            Err(ForwardDrop::TtlExpired) => self.stats.drop_ttl += 1,
        }
        r
    }

    fn egress(&mut self, meta: &EgressMeta, frame: &mut [u8]) -> bool {
        if !meta.congested || frame.len() < ETHERNET_HEADER_LEN + IPV4_HEADER_LEN {
            return false;
        }
        if frame[12..14] != [0x08, 0x00] {
            return false;
        }
        let mut ip = Ipv4Packet::new_unchecked(&mut frame[ETHERNET_HEADER_LEN..]);
        if ip.version() != 4 || usize::from(ip.header_len()) < IPV4_HEADER_LEN {
            return false;
        }
        let was_ect = ip.ecn().is_ect();
        if was_ect && ip.mark_ce() {
            self.stats.ce_marked += 1;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ip::Ecn;
    use crate::wire::roce::{BthRepr, DEFAULT_PKEY, Opcode, RoceExt, RoceFrameRepr};

    fn frame(dst: Ipv4Addr, dscp: u8, sport: u16, ecn: Ecn) -> Vec<u8> {
        let r = RoceFrameRepr::new_ipv4(
            [2; 6],
            [4; 6],
            Ipv4Addr::new(10, 0, 0, 1),
            dst,
            dscp,
            ecn,
            sport,
            BthRepr {
                opcode: Opcode::RcWriteOnly,
                solicited: false,
                migreq: false,
                pad_count: 0,
                pkey: DEFAULT_PKEY,
                fecn: false,
                becn: false,
                dest_qp: 5,
                ack_req: false,
                psn: 0,
            },
            RoceExt::None,
            64,
        );
        let mut b = vec![0u8; r.buffer_len()];
        r.emit(&mut b, &[]).unwrap();
        b
    }

    #[test]
    fn lpm_dscp_map_and_ttl() {
        let mut f = L3Forwarder::new(0);
        f.add_route(Ipv4Addr::new(10, 0, 0, 0), 8, &[1]);
        f.add_route(Ipv4Addr::new(10, 0, 1, 0), 24, &[2]);
        let mut fr = frame(Ipv4Addr::new(10, 0, 1, 2), 26, 0xC000, Ecn::Ect0);
        let n = fr.len();
        let d = f.forward(0, &mut fr, n).unwrap();
        assert_eq!(
            d,
            Decision {
                egress_port: 2,
                priority: 3
            }
        );
        let p = RoceFrameRepr::parse(&fr).unwrap();
        assert_eq!(p.repr.ip.ttl, 63);
        assert_eq!(
            p.icrc_ok,
            Some(true),
            "TTL decrement keeps the ICRC (R-ECN-7)"
        );
        let mut fr = frame(Ipv4Addr::new(10, 9, 9, 9), 48, 0xC000, Ecn::NotEct);
        assert_eq!(
            f.forward(0, &mut fr, n).unwrap(),
            Decision {
                egress_port: 1,
                priority: 6
            }
        );
        let mut fr = frame(Ipv4Addr::new(10, 9, 9, 9), 0, 0xC000, Ecn::NotEct);
        assert_eq!(f.forward(0, &mut fr, n).unwrap().priority, 0);
        let mut fr = frame(Ipv4Addr::new(11, 0, 0, 1), 26, 0xC000, Ecn::Ect0);
        assert_eq!(f.forward(0, &mut fr, n), Err(ForwardDrop::NoRoute));
        assert_eq!(
            f.forward(0, &mut [0u8; 10], 10),
            Err(ForwardDrop::Malformed)
        );
        assert_eq!(f.stats().drop_no_route, 1);
    }

    #[test]
    fn ecmp_uses_reference_hash_e14() {
        let mut f = L3Forwarder::new(0);
        f.add_route(Ipv4Addr::new(10, 0, 1, 0), 24, &[10, 11, 12, 13]);
        for (sport, idx) in [(0xC242u16, 3u16), (0xC243, 2), (0xC000, 0), (0xFFFF, 1)] {
            let mut fr = frame(Ipv4Addr::new(10, 0, 1, 2), 26, sport, Ecn::Ect0);
            let n = fr.len();
            assert_eq!(f.forward(0, &mut fr, n).unwrap().egress_port, 10 + idx);
        }
    }

    #[test]
    fn egress_marks_only_ect_and_keeps_icrc() {
        let mut f = L3Forwarder::new(0);
        let meta = EgressMeta {
            port: 1,
            priority: 3,
            queue_bytes: 100_000,
            congested: true,
        };
        let mut fr = frame(Ipv4Addr::new(10, 0, 1, 2), 26, 0xC000, Ecn::Ect0);
        assert!(f.egress(&meta, &mut fr));
        let p = RoceFrameRepr::parse(&fr).unwrap();
        assert_eq!(p.repr.ip.ecn, Ecn::Ce);
        assert_eq!(p.icrc_ok, Some(true));
        let mut fr = frame(Ipv4Addr::new(10, 0, 1, 2), 26, 0xC000, Ecn::NotEct);
        assert!(!f.egress(&meta, &mut fr));
        let calm = EgressMeta {
            congested: false,
            ..meta
        };
        let mut fr = frame(Ipv4Addr::new(10, 0, 1, 2), 26, 0xC000, Ecn::Ect0);
        assert!(!f.egress(&calm, &mut fr));
        assert_eq!(f.stats().ce_marked, 1);
    }

    proptest::proptest! {
        #[test]
        fn random_frames_never_panic(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120), congested: bool) {
            let mut f = L3Forwarder::new(7);
            f.add_route(Ipv4Addr::new(0, 0, 0, 0), 0, &[1, 2, 3]);
            let mut d = data.clone();
            let n = d.len();
            if let Ok(dec) = f.forward(0, &mut d, n) {
                proptest::prop_assert!((1..=3).contains(&dec.egress_port));
                proptest::prop_assert!(dec.priority <= 7);
            }
            let meta = EgressMeta { port: 1, priority: 3, queue_bytes: 0, congested };
            let _ = f.egress(&meta, &mut d);
        }
    }
}
