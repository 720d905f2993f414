//! MAC Control frames: PFC (IEEE 802.1Qbb, opcode 0x0101) and legacy
//! 802.3x PAUSE (opcode 0x0001), smoltcp style.
//!
//! [`MacControlPacket`] is a zero-copy view over the MAC Control PDU (the
//! Ethernet payload after EtherType 0x8808); once `new_checked` succeeds no
//! accessor panics. [`MacControlRepr`] is the owned form; opcodes are an open
//! enum ([`MacControlOpcode`]) so an unknown opcode parses and is counted
//! rather than rejected.
//!
//! Format (R-PFC-FMT-1..4): destination 01:80:C2:00:00:01, EtherType 0x8808,
//! opcode, then for PFC a 16-bit class-enable vector (high octet reserved,
//! bit n = priority n) and eight big-endian 16-bit pause times, priority 0
//! first. Times of disabled classes are sent as 0 and read as 0. Whole frames
//! are 60 bytes before FCS: 14 header + 20 PDU + 26 zero pad, untagged
//! ([`emit_frame`]; E-2 is a test below).

use super::ethernet::{
    EtherType, EthernetAddress, EthernetFrame, EthernetRepr, HEADER_LEN, MIN_FRAME_LEN, WireError,
    enum_with_unknown,
};

enum_with_unknown! {
    /// MAC Control opcodes.
    pub enum MacControlOpcode(u16) {
        /// 802.3x PAUSE: one pause time for the whole link.
        Pause = 0x0001,
        /// 802.1Qbb priority-based flow control.
        Pfc = 0x0101,
    }
}

mod field {
    use core::ops::Range;
    pub(super) const OPCODE: Range<usize> = 0..2;
    /// PAUSE: pause_time; PFC: class-enable vector.
    pub(super) const PARAM0: Range<usize> = 2..4;
    /// PFC: eight times start here, 2 bytes each.
    pub(super) const PFC_TIMES: usize = 4;
    pub(super) const PFC_END: usize = 20;
    pub(super) const PAUSE_END: usize = 4;
}

/// Length of a PFC PDU (opcode + vector + 8 times).
pub const PFC_PDU_LEN: usize = field::PFC_END;
/// Length of a whole PFC or PAUSE frame before FCS (padded to the minimum).
pub const FRAME_LEN: usize = MIN_FRAME_LEN;

/// A view of a MAC Control PDU.
#[derive(Debug, Clone)]
pub struct MacControlPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> MacControlPacket<T> {
    /// Wrap without checking.
    pub const fn new_unchecked(buffer: T) -> Self {
        MacControlPacket { buffer }
    }
    /// Wrap and check that the opcode's parameters are present.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }
    /// `Ok` when the opcode and its parameters fit in the buffer. Unknown
    /// opcodes only need the opcode itself.
    pub fn check_len(&self) -> Result<(), WireError> {
        let len = self.buffer.as_ref().len();
        if len < field::OPCODE.end {
            return Err(WireError::Truncated);
        }
        let need = match self.opcode() {
            MacControlOpcode::Pfc => field::PFC_END,
            MacControlOpcode::Pause => field::PAUSE_END,
            MacControlOpcode::Unknown(_) => field::OPCODE.end,
        };
        if len < need {
            Err(WireError::Truncated)
        } else {
            Ok(())
        }
    }
    /// Unwrap the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    /// The opcode.
    pub fn opcode(&self) -> MacControlOpcode {
        MacControlOpcode::from(self.read(field::OPCODE.start))
    }
    /// PFC class-enable vector, low octet (the high octet is reserved).
    pub fn class_enable(&self) -> u8 {
        (self.read(field::PARAM0.start) & 0x00ff) as u8
    }
    /// PFC time field for `priority` (0..=7), in quanta; 0 for other indices.
    pub fn pfc_time(&self, priority: u8) -> u16 {
        if priority > 7 {
            return 0;
        }
        self.read(field::PFC_TIMES + 2 * usize::from(priority))
    }
    /// PAUSE pause_time in quanta.
    pub fn pause_time(&self) -> u16 {
        self.read(field::PARAM0.start)
    }
    fn read(&self, at: usize) -> u16 {
        match self.buffer.as_ref().get(at..at + 2) {
            Some(&[a, b]) => u16::from_be_bytes([a, b]),
            _ => 0,
        }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> MacControlPacket<T> {
    /// Set the opcode.
    pub fn set_opcode(&mut self, opcode: MacControlOpcode) {
        self.write(field::OPCODE.start, u16::from(opcode));
    }
    /// Set the class-enable vector (reserved high octet written as 0).
    pub fn set_class_enable(&mut self, vector: u8) {
        self.write(field::PARAM0.start, u16::from(vector));
    }
    /// Set the PFC time for `priority` (ignored for priorities > 7).
    pub fn set_pfc_time(&mut self, priority: u8, quanta: u16) {
        if priority <= 7 {
            self.write(field::PFC_TIMES + 2 * usize::from(priority), quanta);
        }
    }
    /// Set the PAUSE pause_time.
    pub fn set_pause_time(&mut self, quanta: u16) {
        self.write(field::PARAM0.start, quanta);
    }
    fn write(&mut self, at: usize, value: u16) {
        self.buffer.as_mut()[at..at + 2].copy_from_slice(&value.to_be_bytes());
    }
}

/// A PFC request: which priorities, and for how many quanta each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PfcRepr {
    /// Bit n set = the frame carries a time for priority n.
    pub class_enable: u8,
    /// Pause time per priority in quanta; 0 for disabled classes. 0 on an
    /// enabled class means XON (R-PFC-RX-2).
    pub quanta: [u16; 8],
}

impl PfcRepr {
    /// A PFC frame pausing every priority in `mask` for `quanta`.
    pub fn xoff(mask: u8, quanta: u16) -> Self {
        let mut repr = PfcRepr {
            class_enable: mask,
            quanta: [0; 8],
        };
        for p in 0..8u8 {
            if mask & (1 << p) != 0 {
                repr.quanta[usize::from(p)] = quanta;
            }
        }
        repr
    }
    /// A PFC frame resuming every priority in `mask` (time 0).
    pub fn xon(mask: u8) -> Self {
        PfcRepr {
            class_enable: mask,
            quanta: [0; 8],
        }
    }
    /// `true` if the frame carries a time for `priority`.
    pub fn is_enabled(&self, priority: u8) -> bool {
        priority <= 7 && self.class_enable & (1 << priority) != 0
    }
    /// Set one priority's time and enable bit.
    pub fn set(&mut self, priority: u8, quanta: u16) {
        if priority <= 7 {
            self.class_enable |= 1 << priority;
            self.quanta[usize::from(priority)] = quanta;
        }
    }
}

/// A legacy 802.3x PAUSE request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PauseRepr {
    /// Pause time in quanta (0 = resume).
    pub quanta: u16,
}

/// The owned form of a MAC Control PDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MacControlRepr {
    /// Priority flow control.
    Pfc(PfcRepr),
    /// Legacy PAUSE.
    Pause(PauseRepr),
    /// An opcode we do not implement (consumed and counted, never forwarded).
    Unknown {
        /// The opcode.
        opcode: u16,
    },
}

impl MacControlRepr {
    /// Parse a checked PDU. Disabled PFC classes read as time 0 (R-PFC-FMT-4).
    pub fn parse<T: AsRef<[u8]>>(packet: &MacControlPacket<T>) -> Result<Self, WireError> {
        packet.check_len()?;
        Ok(match packet.opcode() {
            MacControlOpcode::Pfc => {
                let class_enable = packet.class_enable();
                let mut quanta = [0u16; 8];
                for p in 0..8u8 {
                    if class_enable & (1 << p) != 0 {
                        quanta[usize::from(p)] = packet.pfc_time(p);
                    }
                }
                MacControlRepr::Pfc(PfcRepr {
                    class_enable,
                    quanta,
                })
            }
            MacControlOpcode::Pause => MacControlRepr::Pause(PauseRepr {
                quanta: packet.pause_time(),
            }),
            MacControlOpcode::Unknown(opcode) => MacControlRepr::Unknown { opcode },
        })
    }
    /// PDU length in bytes (before padding).
    pub const fn buffer_len(&self) -> usize {
        match self {
            MacControlRepr::Pfc(_) => field::PFC_END,
            MacControlRepr::Pause(_) => field::PAUSE_END,
            MacControlRepr::Unknown { .. } => field::OPCODE.end,
        }
    }
    /// Write the PDU into a buffer of at least `buffer_len()` bytes. Times of
    /// disabled PFC classes are written as 0.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut MacControlPacket<T>) {
        match *self {
            MacControlRepr::Pfc(repr) => {
                packet.set_opcode(MacControlOpcode::Pfc);
                packet.set_class_enable(repr.class_enable);
                for p in 0..8u8 {
                    let q = if repr.is_enabled(p) {
                        repr.quanta[usize::from(p)]
                    } else {
                        0
                    };
                    packet.set_pfc_time(p, q);
                }
            }
            MacControlRepr::Pause(repr) => {
                packet.set_opcode(MacControlOpcode::Pause);
                packet.set_pause_time(repr.quanta);
            }
            MacControlRepr::Unknown { opcode } => {
                packet.set_opcode(MacControlOpcode::Unknown(opcode))
            }
        }
    }
}

/// `true` if the frame is MAC Control: destination 01:80:C2:00:00:01 and
/// EtherType 0x8808 (R-PFC-FMT-5).
pub fn is_mac_control<T: AsRef<[u8]>>(frame: &EthernetFrame<T>) -> bool {
    frame.dst_addr() == EthernetAddress::MAC_CONTROL && frame.ethertype() == EtherType::MacControl
}

/// Parse a whole received frame as MAC Control. `Ok(None)` for a frame that
/// is not MAC Control (data); `Err` for a MAC Control frame too short to
/// hold its opcode's parameters.
pub fn parse_frame(bytes: &[u8]) -> Result<Option<MacControlRepr>, WireError> {
    let frame = EthernetFrame::new_checked(bytes)?;
    if !is_mac_control(&frame) {
        return Ok(None);
    }
    let packet = MacControlPacket::new_checked(frame.payload())?;
    MacControlRepr::parse(&packet).map(Some)
}

/// Emit a whole 60-byte MAC Control frame (untagged, zero padded) from
/// `src` into `buf`. Returns the number of bytes written ([`FRAME_LEN`]), or
/// `Truncated` if `buf` is shorter than that.
pub fn emit_frame(
    src: EthernetAddress,
    repr: &MacControlRepr,
    buf: &mut [u8],
) -> Result<usize, WireError> {
    let buf = buf.get_mut(..FRAME_LEN).ok_or(WireError::Truncated)?;
    buf.fill(0);
    let mut frame = EthernetFrame::new_unchecked(&mut *buf);
    EthernetRepr {
        src_addr: src,
        dst_addr: EthernetAddress::MAC_CONTROL,
        ethertype: EtherType::MacControl,
    }
    .emit(&mut frame);
    let mut packet = MacControlPacket::new_unchecked(&mut buf[HEADER_LEN..]);
    repr.emit(&mut packet);
    Ok(FRAME_LEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// E-2: PFC for priority 3, q = 0xFFFF, src 00:11:22:33:44:55 (verified with scapy 2.8.0).
    static PFC_FRAME_BYTES: [u8; 60] = [
        0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, // dst
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, // src
        0x88, 0x08, // MAC Control
        0x01, 0x01, // PFC
        0x00, 0x08, // class-enable: priority 3
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, // times 0..3
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // times 4..7
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // pad
    ];

    static PAUSE_FRAME_BYTES: [u8; 60] = {
        let mut b = [0u8; 60];
        let head = [
            0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x88, 0x08,
            0x00, 0x01, 0x12, 0x34,
        ];
        let mut i = 0;
        while i < head.len() {
            b[i] = head[i];
            i += 1;
        }
        b
    };

    const SRC: EthernetAddress = EthernetAddress([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);

    #[test]
    fn test_construct_pfc_e2() {
        let mut buf = [0xeeu8; 64];
        let n = emit_frame(
            SRC,
            &MacControlRepr::Pfc(PfcRepr::xoff(1 << 3, 0xffff)),
            &mut buf,
        )
        .unwrap();
        assert_eq!(n, 60);
        assert_eq!(buf[..60], PFC_FRAME_BYTES[..]);
    }

    #[test]
    fn test_deconstruct_pfc_e2() {
        let repr = parse_frame(&PFC_FRAME_BYTES).unwrap().unwrap();
        let MacControlRepr::Pfc(pfc) = repr else {
            panic!("not PFC: {repr:?}")
        };
        assert_eq!(pfc.class_enable, 0x08);
        assert!(pfc.is_enabled(3) && !pfc.is_enabled(2));
        assert_eq!(pfc.quanta, [0, 0, 0, 0xffff, 0, 0, 0, 0]);
    }

    #[test]
    fn pause_round_trip() {
        let mut buf = [0u8; 60];
        emit_frame(
            SRC,
            &MacControlRepr::Pause(PauseRepr { quanta: 0x1234 }),
            &mut buf,
        )
        .unwrap();
        assert_eq!(buf, PAUSE_FRAME_BYTES);
        assert_eq!(
            parse_frame(&buf).unwrap(),
            Some(MacControlRepr::Pause(PauseRepr { quanta: 0x1234 }))
        );
    }

    #[test]
    fn disabled_class_times_are_ignored_and_sent_as_zero() {
        let mut bytes = PFC_FRAME_BYTES;
        bytes[18] = 0x12; // time of priority 1, whose enable bit is off
        let Some(MacControlRepr::Pfc(pfc)) = parse_frame(&bytes).unwrap() else {
            panic!()
        };
        assert_eq!(pfc.quanta[1], 0);
        let mut out = [0u8; 60];
        let repr = PfcRepr {
            class_enable: 0x08,
            quanta: [0, 7, 0, 0xffff, 0, 0, 0, 0],
        };
        emit_frame(SRC, &MacControlRepr::Pfc(repr), &mut out).unwrap();
        assert_eq!(out, PFC_FRAME_BYTES);
    }

    #[test]
    fn reserved_high_octet_ignored() {
        let mut bytes = PFC_FRAME_BYTES;
        bytes[16] = 0xff;
        let Some(MacControlRepr::Pfc(pfc)) = parse_frame(&bytes).unwrap() else {
            panic!()
        };
        assert_eq!(pfc.class_enable, 0x08);
    }

    #[test]
    fn unknown_opcode_parses() {
        let mut bytes = PFC_FRAME_BYTES;
        bytes[14] = 0x00;
        bytes[15] = 0x02;
        assert_eq!(
            parse_frame(&bytes).unwrap(),
            Some(MacControlRepr::Unknown { opcode: 2 })
        );
    }

    #[test]
    fn data_frames_are_not_mac_control() {
        let mut bytes = PFC_FRAME_BYTES;
        bytes[0] = 0x02; // unicast destination
        assert_eq!(parse_frame(&bytes).unwrap(), None);
        let mut bytes = PFC_FRAME_BYTES;
        bytes[13] = 0x00; // EtherType 0x8800
        assert_eq!(parse_frame(&bytes).unwrap(), None);
    }

    #[test]
    fn truncated_pfc_is_error() {
        assert_eq!(
            parse_frame(&PFC_FRAME_BYTES[..30]),
            Err(WireError::Truncated)
        );
        assert_eq!(
            parse_frame(&PFC_FRAME_BYTES[..10]),
            Err(WireError::Truncated)
        );
        let mut small = [0u8; 59];
        assert_eq!(
            emit_frame(SRC, &MacControlRepr::Pfc(PfcRepr::xon(1)), &mut small),
            Err(WireError::Truncated)
        );
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
                let _ = parse_frame(&bytes);
                let _ = MacControlPacket::new_checked(&bytes[..]).and_then(|p| MacControlRepr::parse(&p));
            }

            #[test]
            fn pfc_round_trips(class_enable in any::<u8>(), quanta in any::<[u16; 8]>()) {
                let repr = PfcRepr { class_enable, quanta };
                let mut buf = [0u8; 60];
                emit_frame(SRC, &MacControlRepr::Pfc(repr), &mut buf).unwrap();
                let Some(MacControlRepr::Pfc(back)) = parse_frame(&buf).unwrap() else {
                    return Err(TestCaseError::fail("not PFC"));
                };
                prop_assert_eq!(back.class_enable, class_enable);
                for p in 0..8u8 {
                    let want = if repr.is_enabled(p) { quanta[usize::from(p)] } else { 0 };
                    prop_assert_eq!(back.quanta[usize::from(p)], want);
                }
                prop_assert!(buf[34..].iter().all(|&b| b == 0), "zero padding");
            }
        }
    }
}
