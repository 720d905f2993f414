//! LLDP (IEEE 802.1AB) frames carrying the IEEE DCBX TLVs (802.1Qaz
//! Annex D): ETS Configuration and Recommendation, PFC Configuration and
//! Application Priority.
//!
//! Contract: [`LldpRepr::parse`] takes the LLDPDU (the Ethernet payload)
//! and checks every TLV's length against the buffer before reading it;
//! truncated or mandatory-TLV-less PDUs are [`WireError`]s, unknown TLVs
//! are skipped (802.1AB 9.2.7.7). [`LldpRepr::emit`] cannot fail on a
//! buffer of [`LldpRepr::buffer_len`] bytes. Owned strings and the
//! application table allocate: LLDP is control-plane traffic, a frame
//! every second or thirty per port. No panics on any input.
//!
//! Layout (network order): a TLV header is 7 bits of type and 9 bits of
//! length. Mandatory: Chassis ID (1), Port ID (2), TTL (3) in that order,
//! End (0) last. Optional here: Port Description (4), System Name (5),
//! and organisationally specific TLVs (127) with OUI 00-80-C2:
//! - 9 ETS Configuration: willing(1) CBS(1) reserved(3) max TCs(3);
//!   priority → TC as 8 nibbles (priority 0 in the high nibble of the
//!   first byte); TC bandwidth % × 8; TSA × 8 (0 strict, 1 CBS, 2 ETS).
//! - 10 ETS Recommendation: a reserved byte, then the same three tables.
//! - 11 PFC Configuration: willing(1) MBC(1) reserved(2) PFC cap(4);
//!   enable bitmap (bit p = priority p).
//! - 12 Application Priority: a reserved byte, then 3-byte entries:
//!   priority(3) reserved(2) selector(3), protocol id (16 bits).
//!
//! Frames go to the nearest-bridge group address 01:80:C2:00:00:0E with
//! EtherType 0x88CC, untagged, padded to 60 bytes; a bridge never
//! forwards them (802.1Q Table 8-1).

use super::ethernet::{EthernetAddress, WireError};

/// The nearest-bridge group address LLDP frames go to.
pub const NEAREST_BRIDGE: EthernetAddress = EthernetAddress([0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e]);
/// The LLDP EtherType.
pub const ETHERTYPE_LLDP: u16 = 0x88cc;
/// IEEE 802.1 OUI of the DCBX TLVs.
pub const OUI_IEEE_8021: [u8; 3] = [0x00, 0x80, 0xc2];
/// Smallest Ethernet frame (no FCS); LLDP frames are padded to it.
const MIN_FRAME_LEN: usize = 60;

mod tlv {
    pub(super) const END: u8 = 0;
    pub(super) const CHASSIS_ID: u8 = 1;
    pub(super) const PORT_ID: u8 = 2;
    pub(super) const TTL: u8 = 3;
    pub(super) const PORT_DESCRIPTION: u8 = 4;
    pub(super) const SYSTEM_NAME: u8 = 5;
    pub(super) const ORG: u8 = 127;
    pub(super) const ETS_CONFIG: u8 = 9;
    pub(super) const ETS_RECOMMENDATION: u8 = 10;
    pub(super) const PFC_CONFIG: u8 = 11;
    pub(super) const APP_PRIORITY: u8 = 12;
}

/// Chassis ID (TLV 1).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChassisId {
    /// Subtype 4: a MAC address.
    Mac([u8; 6]),
    /// Subtype 7: locally assigned text (switch names in labs).
    Local(String),
    /// Any other subtype, raw.
    Other(u8, Vec<u8>),
}

/// Port ID (TLV 2).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PortId {
    /// Subtype 3: a MAC address (hosts).
    Mac([u8; 6]),
    /// Subtype 5: an interface name.
    Name(String),
    /// Subtype 7: locally assigned (switch port numbers, as text).
    Local(String),
    /// Any other subtype, raw.
    Other(u8, Vec<u8>),
}

fn mac_text(m: &[u8; 6]) -> String {
    EthernetAddress(*m).to_string()
}

impl core::fmt::Display for ChassisId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ChassisId::Mac(m) => f.write_str(&mac_text(m)),
            ChassisId::Local(s) => f.write_str(s),
            ChassisId::Other(t, b) => write!(f, "{t}:{}", hex(b)),
        }
    }
}

impl core::fmt::Display for PortId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PortId::Mac(m) => f.write_str(&mac_text(m)),
            PortId::Name(s) | PortId::Local(s) => f.write_str(s),
            PortId::Other(t, b) => write!(f, "{t}:{}", hex(b)),
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Transmission selection algorithm of a traffic class (802.1Q Table 8-6).
pub mod tsa {
    /// Strict priority.
    pub const STRICT: u8 = 0;
    /// Credit-based shaper.
    pub const CBS: u8 = 1;
    /// Enhanced transmission selection (weighted).
    pub const ETS: u8 = 2;
    /// Vendor specific.
    pub const VENDOR: u8 = 255;
}

/// ETS Configuration / Recommendation contents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EtsRepr {
    /// Willing to accept the peer's recommendation (Configuration TLV only).
    pub willing: bool,
    /// Credit-based shaper supported (Configuration TLV only).
    pub cbs: bool,
    /// Traffic classes supported, 1..=8 (0 on the wire means 8).
    pub max_tcs: u8,
    /// Priority → traffic class.
    pub prio_tc: [u8; 8],
    /// Bandwidth of each traffic class, percent.
    pub tc_bw: [u8; 8],
    /// Transmission selection algorithm of each traffic class ([`tsa`]).
    pub tsa: [u8; 8],
}

/// PFC Configuration contents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PfcConfigRepr {
    /// Willing to accept the peer's configuration.
    pub willing: bool,
    /// MACsec bypass capability.
    pub mbc: bool,
    /// Traffic classes that can have PFC enabled at once.
    pub cap: u8,
    /// Bit p set = PFC enabled on priority p.
    pub enable: u8,
}

/// What an application priority entry's protocol id means (802.1Qaz
/// D.2.13 Table D-9, 802.1Qcd for DSCP).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AppSelector {
    /// 1: an EtherType (RoCE v1: 0x8915).
    EtherType,
    /// 2: a TCP or SCTP port.
    Tcp,
    /// 3: a UDP or DCCP port (RoCE v2: 4791).
    Udp,
    /// 4: a TCP, SCTP, UDP or DCCP port.
    TcpUdp,
    /// 5: a DSCP value.
    Dscp,
    /// Anything else.
    Unknown(u8),
}

impl AppSelector {
    fn from_bits(v: u8) -> Self {
        match v {
            1 => AppSelector::EtherType,
            2 => AppSelector::Tcp,
            3 => AppSelector::Udp,
            4 => AppSelector::TcpUdp,
            5 => AppSelector::Dscp,
            other => AppSelector::Unknown(other),
        }
    }

    fn bits(self) -> u8 {
        match self {
            AppSelector::EtherType => 1,
            AppSelector::Tcp => 2,
            AppSelector::Udp => 3,
            AppSelector::TcpUdp => 4,
            AppSelector::Dscp => 5,
            AppSelector::Unknown(v) => v & 7,
        }
    }

    /// Short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            AppSelector::EtherType => "ethertype",
            AppSelector::Tcp => "tcp",
            AppSelector::Udp => "udp",
            AppSelector::TcpUdp => "tcp/udp",
            AppSelector::Dscp => "dscp",
            AppSelector::Unknown(_) => "?",
        }
    }
}

/// One Application Priority entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AppEntry {
    /// What `protocol` is.
    pub selector: AppSelector,
    /// EtherType, port number or DSCP.
    pub protocol: u16,
    /// Priority 0..=7.
    pub priority: u8,
}

impl AppEntry {
    /// RoCE v2: UDP port 4791.
    pub const fn rocev2(priority: u8) -> Self {
        AppEntry {
            selector: AppSelector::Udp,
            protocol: 4791,
            priority,
        }
    }

    /// RoCE v1: EtherType 0x8915.
    pub const fn rocev1(priority: u8) -> Self {
        AppEntry {
            selector: AppSelector::EtherType,
            protocol: 0x8915,
            priority,
        }
    }
}

/// One LLDPDU with its DCBX TLVs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LldpRepr {
    /// Chassis ID.
    pub chassis: ChassisId,
    /// Port ID.
    pub port: PortId,
    /// Time to live, seconds (0: forget me now).
    pub ttl_s: u16,
    /// Port Description TLV.
    pub port_description: Option<String>,
    /// System Name TLV.
    pub system_name: Option<String>,
    /// ETS Configuration TLV.
    pub ets_config: Option<EtsRepr>,
    /// ETS Recommendation TLV.
    pub ets_recommendation: Option<EtsRepr>,
    /// PFC Configuration TLV.
    pub pfc: Option<PfcConfigRepr>,
    /// Application Priority TLV (`None`: not sent).
    pub app: Option<Vec<AppEntry>>,
}

fn header(ty: u8, len: usize) -> [u8; 2] {
    let v = (u16::from(ty) << 9) | (len as u16 & 0x1ff);
    v.to_be_bytes()
}

fn id_bytes_chassis(c: &ChassisId) -> (u8, &[u8]) {
    match c {
        ChassisId::Mac(m) => (4, &m[..]),
        ChassisId::Local(s) => (7, s.as_bytes()),
        ChassisId::Other(t, b) => (*t, &b[..]),
    }
}

fn id_bytes_port(p: &PortId) -> (u8, &[u8]) {
    match p {
        PortId::Mac(m) => (3, &m[..]),
        PortId::Name(s) => (5, s.as_bytes()),
        PortId::Local(s) => (7, s.as_bytes()),
        PortId::Other(t, b) => (*t, &b[..]),
    }
}

/// Longest string value a TLV carries (9-bit length, less a subtype byte).
const MAX_STRING: usize = 255;

fn clip(s: &[u8]) -> &[u8] {
    &s[..s.len().min(MAX_STRING)]
}

fn ets_tables(e: &EtsRepr, out: &mut Vec<u8>) {
    for pair in e.prio_tc.chunks(2) {
        out.push(((pair[0] & 0xf) << 4) | (pair[1] & 0xf));
    }
    out.extend_from_slice(&e.tc_bw);
    out.extend_from_slice(&e.tsa);
}

fn parse_ets_tables(b: &[u8]) -> ([u8; 8], [u8; 8], [u8; 8]) {
    let mut prio_tc = [0u8; 8];
    for (i, byte) in b[..4].iter().enumerate() {
        prio_tc[2 * i] = byte >> 4;
        prio_tc[2 * i + 1] = byte & 0xf;
    }
    let mut tc_bw = [0u8; 8];
    tc_bw.copy_from_slice(&b[4..12]);
    let mut tsa = [0u8; 8];
    tsa.copy_from_slice(&b[12..20]);
    (prio_tc, tc_bw, tsa)
}

impl LldpRepr {
    /// The TLVs as bytes, End TLV included (no padding).
    fn tlvs(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        let mut put = |ty: u8, value: &[u8]| {
            out.extend_from_slice(&header(ty, value.len()));
            out.extend_from_slice(value);
        };
        let (st, id) = id_bytes_chassis(&self.chassis);
        let mut v = vec![st];
        v.extend_from_slice(clip(id));
        put(tlv::CHASSIS_ID, &v);
        let (st, id) = id_bytes_port(&self.port);
        let mut v = vec![st];
        v.extend_from_slice(clip(id));
        put(tlv::PORT_ID, &v);
        put(tlv::TTL, &self.ttl_s.to_be_bytes());
        if let Some(d) = &self.port_description {
            put(tlv::PORT_DESCRIPTION, clip(d.as_bytes()));
        }
        if let Some(n) = &self.system_name {
            put(tlv::SYSTEM_NAME, clip(n.as_bytes()));
        }
        let org = |sub: u8| {
            let mut v = OUI_IEEE_8021.to_vec();
            v.push(sub);
            v
        };
        if let Some(e) = &self.ets_config {
            let mut v = org(tlv::ETS_CONFIG);
            v.push((u8::from(e.willing) << 7) | (u8::from(e.cbs) << 6) | (e.max_tcs.min(8) & 7));
            ets_tables(e, &mut v);
            put(tlv::ORG, &v);
        }
        if let Some(e) = &self.ets_recommendation {
            let mut v = org(tlv::ETS_RECOMMENDATION);
            v.push(0);
            ets_tables(e, &mut v);
            put(tlv::ORG, &v);
        }
        if let Some(p) = &self.pfc {
            let mut v = org(tlv::PFC_CONFIG);
            v.push((u8::from(p.willing) << 7) | (u8::from(p.mbc) << 6) | (p.cap & 0xf));
            v.push(p.enable);
            put(tlv::ORG, &v);
        }
        if let Some(app) = &self.app {
            let mut v = org(tlv::APP_PRIORITY);
            v.push(0);
            // 9-bit length: at most 167 entries fit.
            for a in app.iter().take((511 - 5) / 3) {
                v.push(((a.priority & 7) << 5) | a.selector.bits());
                v.extend_from_slice(&a.protocol.to_be_bytes());
            }
            put(tlv::ORG, &v);
        }
        put(tlv::END, &[]);
        out
    }

    /// LLDPDU length in bytes.
    pub fn buffer_len(&self) -> usize {
        self.tlvs().len()
    }

    /// Writes the LLDPDU into `buf` (at least [`Self::buffer_len`] bytes);
    /// returns the length written.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let t = self.tlvs();
        let out = buf.get_mut(..t.len()).ok_or(WireError::Truncated)?;
        out.copy_from_slice(&t);
        Ok(t.len())
    }

    /// Parses an LLDPDU.
    pub fn parse(pdu: &[u8]) -> Result<LldpRepr, WireError> {
        let mut at = 0usize;
        let mut index = 0usize;
        let mut chassis = None;
        let mut port = None;
        let mut ttl = None;
        let mut repr_desc = None;
        let mut repr_name = None;
        let mut ets_config = None;
        let mut ets_recommendation = None;
        let mut pfc = None;
        let mut app = None;
        loop {
            let h = pdu.get(at..at + 2).ok_or(WireError::Truncated)?;
            let v = u16::from_be_bytes([h[0], h[1]]);
            let (ty, len) = ((v >> 9) as u8, usize::from(v & 0x1ff));
            let value = pdu.get(at + 2..at + 2 + len).ok_or(WireError::Truncated)?;
            at += 2 + len;
            // 802.1AB 9.2: Chassis ID, Port ID and TTL come first, in order.
            let expected = [tlv::CHASSIS_ID, tlv::PORT_ID, tlv::TTL];
            if index < 3 && ty != expected[index] {
                return Err(WireError::Malformed);
            }
            index += 1;
            match ty {
                tlv::END => break,
                tlv::CHASSIS_ID => {
                    let (&st, id) = value.split_first().ok_or(WireError::Malformed)?;
                    chassis = Some(match (st, <[u8; 6]>::try_from(id)) {
                        (4, Ok(m)) => ChassisId::Mac(m),
                        (7, _) => ChassisId::Local(String::from_utf8_lossy(id).into_owned()),
                        _ => ChassisId::Other(st, id.to_vec()),
                    });
                }
                tlv::PORT_ID => {
                    let (&st, id) = value.split_first().ok_or(WireError::Malformed)?;
                    port = Some(match (st, <[u8; 6]>::try_from(id)) {
                        (3, Ok(m)) => PortId::Mac(m),
                        (5, _) => PortId::Name(String::from_utf8_lossy(id).into_owned()),
                        (7, _) => PortId::Local(String::from_utf8_lossy(id).into_owned()),
                        _ => PortId::Other(st, id.to_vec()),
                    });
                }
                tlv::TTL => {
                    let b: [u8; 2] = value.try_into().map_err(|_| WireError::Malformed)?;
                    ttl = Some(u16::from_be_bytes(b));
                }
                tlv::PORT_DESCRIPTION => {
                    repr_desc = Some(String::from_utf8_lossy(value).into_owned())
                }
                tlv::SYSTEM_NAME => repr_name = Some(String::from_utf8_lossy(value).into_owned()),
                tlv::ORG if value.len() >= 4 && value[..3] == OUI_IEEE_8021 => {
                    let body = &value[4..];
                    match value[3] {
                        tlv::ETS_CONFIG | tlv::ETS_RECOMMENDATION if body.len() == 21 => {
                            let (prio_tc, tc_bw, tsa) = parse_ets_tables(&body[1..]);
                            let e = EtsRepr {
                                willing: body[0] & 0x80 != 0,
                                cbs: body[0] & 0x40 != 0,
                                max_tcs: match body[0] & 7 {
                                    0 => 8,
                                    n => n,
                                },
                                prio_tc,
                                tc_bw,
                                tsa,
                            };
                            if value[3] == tlv::ETS_CONFIG {
                                ets_config = Some(e);
                            } else {
                                ets_recommendation = Some(EtsRepr {
                                    willing: false,
                                    cbs: false,
                                    max_tcs: 0,
                                    ..e
                                });
                            }
                        }
                        tlv::PFC_CONFIG if body.len() == 2 => {
                            pfc = Some(PfcConfigRepr {
                                willing: body[0] & 0x80 != 0,
                                mbc: body[0] & 0x40 != 0,
                                cap: body[0] & 0xf,
                                enable: body[1],
                            });
                        }
                        tlv::APP_PRIORITY if !body.is_empty() && (body.len() - 1) % 3 == 0 => {
                            app = Some(
                                body[1..]
                                    .chunks_exact(3)
                                    .map(|e| AppEntry {
                                        priority: e[0] >> 5,
                                        selector: AppSelector::from_bits(e[0] & 7),
                                        protocol: u16::from_be_bytes([e[1], e[2]]),
                                    })
                                    .collect(),
                            );
                        }
                        _ => return Err(WireError::Malformed),
                    }
                }
                _ => {} // unknown TLVs are skipped (9.2.7.7)
            }
        }
        Ok(LldpRepr {
            chassis: chassis.ok_or(WireError::Malformed)?,
            port: port.ok_or(WireError::Malformed)?,
            ttl_s: ttl.ok_or(WireError::Malformed)?,
            port_description: repr_desc,
            system_name: repr_name,
            ets_config,
            ets_recommendation,
            pfc,
            app,
        })
    }
}

/// True if `frame` (Ethernet, no FCS) is an LLDP frame for the nearest
/// bridge: what a bridge port consumes and never forwards.
pub fn is_lldp(frame: &[u8]) -> bool {
    frame.len() >= 14 && frame[..6] == NEAREST_BRIDGE.0 && frame[12..14] == [0x88, 0xcc]
}

/// The whole frame from `src`: Ethernet header, LLDPDU, zero padding to
/// 60 bytes. Replaces the contents of `out`.
pub fn emit_frame(src: EthernetAddress, repr: &LldpRepr, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&NEAREST_BRIDGE.0);
    out.extend_from_slice(&src.0);
    out.extend_from_slice(&ETHERTYPE_LLDP.to_be_bytes());
    out.extend_from_slice(&repr.tlvs());
    if out.len() < MIN_FRAME_LEN {
        out.resize(MIN_FRAME_LEN, 0);
    }
}

/// The LLDPDU of an LLDP frame, parsed; `Ok(None)` for other frames.
pub fn parse_frame(frame: &[u8]) -> Result<Option<LldpRepr>, WireError> {
    if !is_lldp(frame) {
        return Ok(None);
    }
    LldpRepr::parse(&frame[14..]).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host's LLDPDU as lldpad sends it: chassis MAC, port MAC, TTL 120,
    /// PFC Configuration (willing, 8 TCs capable, priority 3), Application
    /// Priority (UDP 4791 → 3), End.
    static PDU_BYTES: [u8; 43] = [
        0x02, 0x07, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // chassis, MAC
        0x04, 0x07, 0x03, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // port, MAC
        0x06, 0x02, 0x00, 0x78, // TTL 120
        0xfe, 0x06, 0x00, 0x80, 0xc2, 0x0b, 0x88, 0x08, // PFC
        0xfe, 0x08, 0x00, 0x80, 0xc2, 0x0c, 0x00, 0x63, 0x12, 0xb7, // APP
        0x00, 0x00, // End
        0x00, // (trailing byte after End is ignored)
    ];

    fn host_repr() -> LldpRepr {
        LldpRepr {
            chassis: ChassisId::Mac([2, 0, 0, 0, 0, 1]),
            port: PortId::Mac([2, 0, 0, 0, 0, 1]),
            ttl_s: 120,
            port_description: None,
            system_name: None,
            ets_config: None,
            ets_recommendation: None,
            pfc: Some(PfcConfigRepr {
                willing: true,
                mbc: false,
                cap: 8,
                enable: 1 << 3,
            }),
            app: Some(vec![AppEntry::rocev2(3)]),
        }
    }

    #[test]
    fn test_deconstruct() {
        assert_eq!(LldpRepr::parse(&PDU_BYTES).unwrap(), host_repr());
    }

    #[test]
    fn test_construct() {
        let r = host_repr();
        let mut buf = vec![0u8; r.buffer_len()];
        assert_eq!(r.emit(&mut buf).unwrap(), 42);
        assert_eq!(&buf[..], &PDU_BYTES[..42]);
    }

    #[test]
    fn every_tlv_round_trips_through_a_frame() {
        let ets = EtsRepr {
            willing: false,
            cbs: false,
            max_tcs: 8,
            prio_tc: [0, 1, 2, 3, 4, 5, 6, 7],
            tc_bw: [10, 10, 10, 40, 10, 10, 0, 10],
            tsa: [2, 2, 2, 2, 2, 2, 0, 2],
        };
        let r = LldpRepr {
            chassis: ChassisId::Local("leaf1".into()),
            port: PortId::Local("3".into()),
            ttl_s: 120,
            port_description: Some("p3".into()),
            system_name: Some("leaf1".into()),
            ets_config: Some(ets),
            ets_recommendation: Some(EtsRepr { max_tcs: 0, ..ets }),
            pfc: Some(PfcConfigRepr {
                willing: false,
                mbc: false,
                cap: 8,
                enable: 0x18,
            }),
            app: Some(vec![
                AppEntry::rocev2(3),
                AppEntry::rocev1(3),
                AppEntry {
                    selector: AppSelector::Dscp,
                    protocol: 26,
                    priority: 3,
                },
            ]),
        };
        let mut frame = Vec::new();
        emit_frame(EthernetAddress([2, 0xaa, 0, 0, 0, 3]), &r, &mut frame);
        assert!(is_lldp(&frame));
        assert_eq!(parse_frame(&frame).unwrap(), Some(r));
    }

    #[test]
    fn short_frames_are_padded_and_others_are_not_lldp() {
        let mut r = host_repr();
        r.pfc = None;
        r.app = None;
        let mut frame = Vec::new();
        emit_frame(EthernetAddress([2, 0, 0, 0, 0, 1]), &r, &mut frame);
        assert_eq!(frame.len(), 60);
        assert_eq!(parse_frame(&frame).unwrap(), Some(r));
        frame[13] = 0x00;
        assert_eq!(parse_frame(&frame).unwrap(), None);
    }

    #[test]
    fn truncated_and_misordered_pdus_are_errors() {
        for n in [0, 1, 5, 20, 30, 40] {
            assert!(LldpRepr::parse(&PDU_BYTES[..n]).is_err(), "{n} bytes");
        }
        // TTL before Port ID.
        let mut bad = PDU_BYTES;
        bad[9] = 0x06;
        assert_eq!(LldpRepr::parse(&bad), Err(WireError::Malformed));
        // A PFC TLV of the wrong length.
        let mut bad = PDU_BYTES;
        bad[23] = 0x05;
        assert!(LldpRepr::parse(&bad).is_err());
    }
}
