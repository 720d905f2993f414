//! Ethernet II frames with 802.1Q tag detection, smoltcp style.
//!
//! [`EthernetFrame`] is a zero-copy view over any `T: AsRef<[u8]>`; once
//! [`EthernetFrame::new_checked`] succeeds no accessor panics (the payload
//! accessors re-check the optional VLAN tag length themselves). The frame
//! excludes the FCS: drivers hand us frames without it. [`EthernetRepr`] is
//! the owned form with `parse`, `emit` and `buffer_len`.
//!
//! [`EtherType`] is an open enum: unknown values parse to `Unknown(n)` and
//! round-trip. An 802.1Q tag (TPID 0x8100, TCI = PCP(3) | DEI(1) | VID(12),
//! R-MAP-1) is reported by [`EthernetFrame::vlan_tag`]; PFC frames themselves
//! are untagged (R-PFC-FMT-3).

use core::fmt;

/// Why a buffer is not a valid frame of this kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The buffer is shorter than the header (or tag) needs.
    #[error("frame truncated")]
    Truncated,
    /// A field holds a value the format forbids.
    #[error("malformed field")]
    Malformed,
}

/// A six-octet MAC address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EthernetAddress(pub [u8; 6]);

impl EthernetAddress {
    /// The broadcast address.
    pub const BROADCAST: EthernetAddress = EthernetAddress([0xff; 6]);
    /// The MAC Control (PAUSE/PFC) destination 01:80:C2:00:00:01 (R-PFC-FMT-1).
    pub const MAC_CONTROL: EthernetAddress = EthernetAddress([0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);

    /// From the first six bytes of `data`, or `None` if shorter.
    pub fn from_bytes(data: &[u8]) -> Option<Self> {
        data.get(..6)?.try_into().ok().map(EthernetAddress)
    }
    /// The raw octets.
    pub const fn as_bytes(&self) -> &[u8; 6] {
        &self.0
    }
    /// Group (multicast or broadcast) bit set.
    pub const fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }
}

impl fmt::Display for EthernetAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = &self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

/// Defines an open protocol-number enum with an `Unknown(n)` variant.
macro_rules! enum_with_unknown {
    (
        $(#[$outer:meta])*
        pub enum $name:ident($ty:ty) {
            $( $(#[$inner:meta])* $variant:ident = $value:expr ),+ $(,)?
        }
    ) => {
        $(#[$outer])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$inner])* $variant, )+
            /// A value this crate has no name for; round-trips unchanged.
            Unknown($ty),
        }
        impl From<$ty> for $name {
            fn from(value: $ty) -> Self {
                match value {
                    $( v if v == $value => $name::$variant, )+
                    other => $name::Unknown(other),
                }
            }
        }
        impl From<$name> for $ty {
            fn from(value: $name) -> Self {
                match value {
                    $( $name::$variant => $value, )+
                    $name::Unknown(other) => other,
                }
            }
        }
    };
}
pub(crate) use enum_with_unknown;

enum_with_unknown! {
    /// EtherType values this switch cares about.
    pub enum EtherType(u16) {
        /// IPv4.
        Ipv4 = 0x0800,
        /// ARP.
        Arp = 0x0806,
        /// 802.1Q customer VLAN tag (TPID).
        Vlan = 0x8100,
        /// IPv6.
        Ipv6 = 0x86dd,
        /// MAC Control (PAUSE, PFC): R-PFC-FMT-1.
        MacControl = 0x8808,
        /// RoCE v1: GRH + BTH directly over Ethernet (R-ROCE-1).
        RoceV1 = 0x8915,
    }
}

mod field {
    use core::ops::Range;
    pub(super) const DESTINATION: Range<usize> = 0..6;
    pub(super) const SOURCE: Range<usize> = 6..12;
    pub(super) const ETHERTYPE: Range<usize> = 12..14;
    pub(super) const PAYLOAD: usize = 14;
    pub(super) const VLAN_TCI: Range<usize> = 14..16;
    pub(super) const VLAN_INNER_TYPE: Range<usize> = 16..18;
    pub(super) const VLAN_PAYLOAD: usize = 18;
}

/// Length of an untagged Ethernet II header.
pub const HEADER_LEN: usize = field::PAYLOAD;
/// Length of the 802.1Q tag.
pub const VLAN_TAG_LEN: usize = 4;
/// Minimum frame length without FCS (64 with FCS).
pub const MIN_FRAME_LEN: usize = 60;

/// Bytes a frame costs on the wire beyond its length without FCS: FCS (4),
/// preamble and SFD (8), inter-frame gap (12).
pub const WIRE_OVERHEAD_BYTES: usize = 24;

/// Bytes a frame of `len_bytes` (without FCS) occupies on a link that charges
/// `overhead_bytes` per frame: padded to [`MIN_FRAME_LEN`], plus the
/// overhead. The one formula the port shaper, the simulator's wire and the
/// host agents' pacers share, so their clocks agree to the nanosecond.
pub const fn wire_len(len_bytes: usize, overhead_bytes: usize) -> usize {
    let padded = if len_bytes < MIN_FRAME_LEN {
        MIN_FRAME_LEN
    } else {
        len_bytes
    };
    padded + overhead_bytes
}

/// A decoded 802.1Q tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VlanTag {
    /// Priority code point, 0..=7 (TCI bits 15–13).
    pub pcp: u8,
    /// Drop eligible indicator (TCI bit 12).
    pub dei: bool,
    /// VLAN id, 0..=4095.
    pub vid: u16,
    /// EtherType after the tag.
    pub inner_ethertype: EtherType,
}

/// A read/write view of an Ethernet II frame (without FCS).
#[derive(Debug, Clone)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Wrap without checking; accessors may panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }
    /// Wrap and check the length (header, and the tag if the TPID says 802.1Q).
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let frame = Self::new_unchecked(buffer);
        frame.check_len()?;
        Ok(frame)
    }
    /// `Ok` when every accessor can be used without panicking.
    pub fn check_len(&self) -> Result<(), WireError> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.ethertype() == EtherType::Vlan && len < field::VLAN_PAYLOAD {
            return Err(WireError::Truncated);
        }
        Ok(())
    }
    /// Unwrap the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// Destination address.
    pub fn dst_addr(&self) -> EthernetAddress {
        EthernetAddress(
            self.buffer.as_ref()[field::DESTINATION]
                .try_into()
                .unwrap_or([0; 6]),
        )
    }
    /// Source address.
    pub fn src_addr(&self) -> EthernetAddress {
        EthernetAddress(
            self.buffer.as_ref()[field::SOURCE]
                .try_into()
                .unwrap_or([0; 6]),
        )
    }
    /// The outer EtherType (0x8100 for a tagged frame).
    pub fn ethertype(&self) -> EtherType {
        EtherType::from(read_u16(&self.buffer.as_ref()[field::ETHERTYPE]))
    }
    /// The 802.1Q tag, if the outer EtherType is 0x8100.
    pub fn vlan_tag(&self) -> Option<VlanTag> {
        if self.ethertype() != EtherType::Vlan {
            return None;
        }
        let data = self.buffer.as_ref();
        let tci = read_u16(data.get(field::VLAN_TCI)?);
        let inner = read_u16(data.get(field::VLAN_INNER_TYPE)?);
        Some(VlanTag {
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0x0fff,
            inner_ethertype: EtherType::from(inner),
        })
    }
    /// The EtherType after an optional 802.1Q tag.
    pub fn inner_ethertype(&self) -> EtherType {
        self.vlan_tag()
            .map_or_else(|| self.ethertype(), |t| t.inner_ethertype)
    }
    /// Offset of the payload (14, or 18 when tagged).
    pub fn payload_offset(&self) -> usize {
        if self.ethertype() == EtherType::Vlan {
            field::VLAN_PAYLOAD
        } else {
            field::PAYLOAD
        }
    }
    /// Payload after the header and optional tag (empty if truncated).
    pub fn payload(&self) -> &[u8] {
        self.buffer
            .as_ref()
            .get(self.payload_offset()..)
            .unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    /// Set the destination address.
    pub fn set_dst_addr(&mut self, addr: EthernetAddress) {
        self.buffer.as_mut()[field::DESTINATION].copy_from_slice(&addr.0);
    }
    /// Set the source address.
    pub fn set_src_addr(&mut self, addr: EthernetAddress) {
        self.buffer.as_mut()[field::SOURCE].copy_from_slice(&addr.0);
    }
    /// Set the outer EtherType.
    pub fn set_ethertype(&mut self, ethertype: EtherType) {
        self.buffer.as_mut()[field::ETHERTYPE].copy_from_slice(&u16::from(ethertype).to_be_bytes());
    }
    /// Tags the frame: EtherType 0x8100, then `tag`'s TCI and inner
    /// EtherType (the buffer must hold 18 bytes).
    pub fn set_vlan_tag(&mut self, tag: VlanTag) {
        self.set_ethertype(EtherType::Vlan);
        let tci = (u16::from(tag.pcp & 7) << 13) | (u16::from(tag.dei) << 12) | (tag.vid & 0x0fff);
        let b = self.buffer.as_mut();
        b[field::VLAN_TCI].copy_from_slice(&tci.to_be_bytes());
        b[field::VLAN_INNER_TYPE].copy_from_slice(&u16::from(tag.inner_ethertype).to_be_bytes());
    }
    /// Mutable payload after the header and optional tag.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let offset = self.payload_offset();
        self.buffer.as_mut().get_mut(offset..).unwrap_or(&mut [])
    }
}

fn read_u16(bytes: &[u8]) -> u16 {
    match bytes {
        [a, b, ..] => u16::from_be_bytes([*a, *b]),
        _ => 0,
    }
}

/// The owned form of an untagged Ethernet II header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthernetRepr {
    /// Source address.
    pub src_addr: EthernetAddress,
    /// Destination address.
    pub dst_addr: EthernetAddress,
    /// EtherType (for a tagged frame, the TPID 0x8100).
    pub ethertype: EtherType,
}

impl EthernetRepr {
    /// Parse the header of a checked frame.
    pub fn parse<T: AsRef<[u8]>>(frame: &EthernetFrame<T>) -> Result<Self, WireError> {
        frame.check_len()?;
        Ok(EthernetRepr {
            src_addr: frame.src_addr(),
            dst_addr: frame.dst_addr(),
            ethertype: frame.ethertype(),
        })
    }
    /// Header length in bytes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    /// Write the header into a frame of at least [`HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, frame: &mut EthernetFrame<T>) {
        frame.set_dst_addr(self.dst_addr);
        frame.set_src_addr(self.src_addr);
        frame.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // An IPv4 frame header followed by 4 payload bytes.
    static FRAME_BYTES: [u8; 18] = [
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, // dst
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // src
        0x08, 0x00, // IPv4
        0xaa, 0xbb, 0xcc, 0xdd,
    ];

    // A tagged frame: PCP 3, DEI 0, VID 100, inner IPv4.
    static TAGGED_BYTES: [u8; 20] = [
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x81, 0x00, 0x60,
        0x64, 0x08, 0x00, 0x45, 0x00,
    ];

    #[test]
    fn test_deconstruct() {
        let frame = EthernetFrame::new_checked(&FRAME_BYTES[..]).unwrap();
        assert_eq!(frame.dst_addr(), EthernetAddress([2, 0, 0, 0, 0, 2]));
        assert_eq!(frame.src_addr(), EthernetAddress([2, 0, 0, 0, 0, 1]));
        assert_eq!(frame.ethertype(), EtherType::Ipv4);
        assert_eq!(frame.vlan_tag(), None);
        assert_eq!(frame.payload(), &[0xaa, 0xbb, 0xcc, 0xdd]);
    }

    #[test]
    fn test_construct() {
        let mut bytes = [0u8; 18];
        let mut frame = EthernetFrame::new_unchecked(&mut bytes[..]);
        EthernetRepr {
            dst_addr: EthernetAddress([2, 0, 0, 0, 0, 2]),
            src_addr: EthernetAddress([2, 0, 0, 0, 0, 1]),
            ethertype: EtherType::Ipv4,
        }
        .emit(&mut frame);
        frame
            .payload_mut()
            .copy_from_slice(&[0xaa, 0xbb, 0xcc, 0xdd]);
        assert_eq!(bytes, FRAME_BYTES);
    }

    #[test]
    fn vlan_tag_detected() {
        let frame = EthernetFrame::new_checked(&TAGGED_BYTES[..]).unwrap();
        let tag = frame.vlan_tag().unwrap();
        assert_eq!((tag.pcp, tag.dei, tag.vid), (3, false, 100));
        assert_eq!(frame.inner_ethertype(), EtherType::Ipv4);
        assert_eq!(frame.payload(), &[0x45, 0x00]);
    }

    #[test]
    fn vlan_tag_constructed() {
        let mut bytes = [0u8; 20];
        let mut frame = EthernetFrame::new_unchecked(&mut bytes[..]);
        EthernetRepr {
            src_addr: EthernetAddress([2, 0, 0, 0, 0, 1]),
            dst_addr: EthernetAddress([2, 0, 0, 0, 0, 2]),
            ethertype: EtherType::Ipv4,
        }
        .emit(&mut frame);
        frame.set_vlan_tag(VlanTag {
            pcp: 3,
            dei: false,
            vid: 100,
            inner_ethertype: EtherType::Ipv4,
        });
        bytes[18..].copy_from_slice(&[0x45, 0x00]);
        assert_eq!(bytes, TAGGED_BYTES);
    }

    #[test]
    fn short_frames_are_errors_not_panics() {
        assert_eq!(
            EthernetFrame::new_checked(&FRAME_BYTES[..13]).unwrap_err(),
            WireError::Truncated
        );
        assert_eq!(
            EthernetFrame::new_checked(&TAGGED_BYTES[..16]).unwrap_err(),
            WireError::Truncated
        );
    }

    #[test]
    fn unknown_ethertype_round_trips() {
        assert_eq!(EtherType::from(0x1234), EtherType::Unknown(0x1234));
        assert_eq!(u16::from(EtherType::Unknown(0x1234)), 0x1234);
        assert_eq!(u16::from(EtherType::MacControl), 0x8808);
    }
}
