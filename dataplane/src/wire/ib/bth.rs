//! The Base Transport Header (IBTA Vol. 1 §9.2, R-ROCE-2), its opcodes
//! (R-ROCE-3) and the 24-bit PSN arithmetic every RC endpoint needs.
//!
//! Contract: [`Bth::new_checked`] guarantees 12 bytes, after which no accessor
//! panics; setters live in the `AsMut` block. [`psn_cmp`] orders PSNs modulo
//! 2^24 within half the space (IBTA §9.7.1: a window of 2^23).

use super::{IbError, be24, put_be24};
use crate::wire::ethernet::enum_with_unknown;

/// Length of the Base Transport Header in bytes.
pub const BTH_LEN: usize = 12;
/// The default partition key (full member of the default partition).
pub const DEFAULT_PKEY: u16 = 0xFFFF;
/// PSNs and QP numbers are 24 bits.
pub const PSN_MASK: u32 = 0xFF_FFFF;

/// `psn + n` modulo 2^24.
pub fn psn_add(psn: u32, n: u32) -> u32 {
    psn.wrapping_add(n) & PSN_MASK
}

/// Compares two PSNs on the 2^24 circle: `Less` if `a` precedes `b` by less
/// than 2^23, `Greater` if it follows by less than 2^23 (the half-space rule
/// of IBTA §9.7.1), `Equal` if the same.
pub fn psn_cmp(a: u32, b: u32) -> std::cmp::Ordering {
    // Shift the 24-bit difference into the top of an i32: its sign is the order.
    let d = ((a.wrapping_sub(b)) << 8) as i32;
    d.cmp(&0)
}

/// Distance from `from` forward to `to` on the 2^24 circle.
pub fn psn_diff(to: u32, from: u32) -> u32 {
    to.wrapping_sub(from) & PSN_MASK
}

enum_with_unknown! {
    /// BTH opcode: transport (RC 0x00, UC 0x20, RD 0x40, UD 0x60) + operation
    /// (R-ROCE-3), plus CNP 0x81.
    pub enum Opcode(u8) {
        /// RC SEND first.
        RcSendFirst = 0x00,
        /// RC SEND middle.
        RcSendMiddle = 0x01,
        /// RC SEND last.
        RcSendLast = 0x02,
        /// RC SEND last with immediate.
        RcSendLastImm = 0x03,
        /// RC SEND only.
        RcSendOnly = 0x04,
        /// RC SEND only with immediate.
        RcSendOnlyImm = 0x05,
        /// RC RDMA WRITE first.
        RcWriteFirst = 0x06,
        /// RC RDMA WRITE middle.
        RcWriteMiddle = 0x07,
        /// RC RDMA WRITE last.
        RcWriteLast = 0x08,
        /// RC RDMA WRITE last with immediate.
        RcWriteLastImm = 0x09,
        /// RC RDMA WRITE only.
        RcWriteOnly = 0x0A,
        /// RC RDMA WRITE only with immediate.
        RcWriteOnlyImm = 0x0B,
        /// RC RDMA READ request.
        RcReadRequest = 0x0C,
        /// RC RDMA READ response first.
        RcReadResponseFirst = 0x0D,
        /// RC RDMA READ response middle.
        RcReadResponseMiddle = 0x0E,
        /// RC RDMA READ response last.
        RcReadResponseLast = 0x0F,
        /// RC RDMA READ response only.
        RcReadResponseOnly = 0x10,
        /// RC ACKNOWLEDGE.
        RcAcknowledge = 0x11,
        /// RC ATOMIC ACKNOWLEDGE.
        RcAtomicAcknowledge = 0x12,
        /// RC compare-and-swap.
        RcCompareSwap = 0x13,
        /// RC fetch-and-add.
        RcFetchAdd = 0x14,
        /// UD SEND only.
        UdSendOnly = 0x64,
        /// UD SEND only with immediate.
        UdSendOnlyImm = 0x65,
        /// Congestion notification packet.
        Cnp = 0x81,
    }
}

impl Opcode {
    /// True if a RETH follows the BTH (WRITE first/only, READ request; RC or UC).
    pub fn has_reth(self) -> bool {
        let v = u8::from(self);
        matches!(v & 0xE0, 0x00 | 0x20) && matches!(v & 0x1F, 0x06 | 0x0A | 0x0B | 0x0C)
    }

    /// True if an AETH follows the BTH (ACK, atomic ACK, READ response first/last/only).
    pub fn has_aeth(self) -> bool {
        let v = u8::from(self);
        matches!(v & 0xE0, 0x00 | 0x40) && matches!(v & 0x1F, 0x0D | 0x0F | 0x10 | 0x11 | 0x12)
    }

    /// True if an ImmDt header is present (SEND/WRITE "with immediate").
    pub fn has_immdt(self) -> bool {
        let v = u8::from(self);
        v & 0x80 == 0 && matches!(v & 0x1F, 0x03 | 0x05 | 0x09 | 0x0B)
    }

    /// True for the first or only packet of a request message.
    pub fn is_first(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            RcSendFirst
                | RcSendOnly
                | RcSendOnlyImm
                | RcWriteFirst
                | RcWriteOnly
                | RcWriteOnlyImm
                | RcReadRequest
                | RcReadResponseFirst
                | RcReadResponseOnly
        )
    }

    /// True for the last or only packet of a message.
    pub fn is_last(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            RcSendLast
                | RcSendLastImm
                | RcSendOnly
                | RcSendOnlyImm
                | RcWriteLast
                | RcWriteLastImm
                | RcWriteOnly
                | RcWriteOnlyImm
                | RcReadRequest
                | RcReadResponseLast
                | RcReadResponseOnly
        )
    }

    /// RC requests a responder executes (SEND, WRITE, READ request).
    pub fn is_rc_request(self) -> bool {
        matches!(u8::from(self), 0x00..=0x0C)
    }

    /// RC READ responses.
    pub fn is_read_response(self) -> bool {
        matches!(u8::from(self), 0x0D..=0x10)
    }
}

mod field {
    use core::ops::Range;
    pub(super) const OPCODE: usize = 0;
    pub(super) const FLAGS: usize = 1;
    pub(super) const PKEY: Range<usize> = 2..4;
    pub(super) const FECN_BECN: usize = 4;
    pub(super) const DEST_QP: Range<usize> = 5..8;
    pub(super) const ACK_REQ: usize = 8;
    pub(super) const PSN: Range<usize> = 9..12;
}

/// A read/write view of a Base Transport Header (R-ROCE-2).
#[derive(Debug, Clone)]
pub struct Bth<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Bth<T> {
    /// Wraps a buffer without checking its length.
    pub fn new_unchecked(buffer: T) -> Self {
        Bth { buffer }
    }

    /// Wraps a buffer and checks it holds 12 bytes.
    pub fn new_checked(buffer: T) -> Result<Self, IbError> {
        let b = Self::new_unchecked(buffer);
        b.check_len()?;
        Ok(b)
    }

    /// Checks the buffer holds a whole BTH.
    pub fn check_len(&self) -> Result<(), IbError> {
        if self.buffer.as_ref().len() < BTH_LEN {
            return Err(IbError::Truncated);
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Opcode.
    pub fn opcode(&self) -> Opcode {
        Opcode::from(self.buffer.as_ref()[field::OPCODE])
    }

    /// Solicited event bit.
    pub fn solicited(&self) -> bool {
        self.buffer.as_ref()[field::FLAGS] & 0x80 != 0
    }

    /// MigReq bit.
    pub fn migreq(&self) -> bool {
        self.buffer.as_ref()[field::FLAGS] & 0x40 != 0
    }

    /// Pad count (0..=3 bytes of padding before the ICRC).
    pub fn pad_count(&self) -> u8 {
        (self.buffer.as_ref()[field::FLAGS] >> 4) & 0x3
    }

    /// Transport header version (0).
    pub fn tver(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS] & 0x0F
    }

    /// Partition key.
    pub fn pkey(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::PKEY];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Forward ECN bit.
    pub fn fecn(&self) -> bool {
        self.buffer.as_ref()[field::FECN_BECN] & 0x80 != 0
    }

    /// Backward ECN bit.
    pub fn becn(&self) -> bool {
        self.buffer.as_ref()[field::FECN_BECN] & 0x40 != 0
    }

    /// Destination QP number (24 bits).
    pub fn dest_qp(&self) -> u32 {
        be24(&self.buffer.as_ref()[field::DEST_QP])
    }

    /// AckReq bit.
    pub fn ack_req(&self) -> bool {
        self.buffer.as_ref()[field::ACK_REQ] & 0x80 != 0
    }

    /// Packet sequence number (24 bits).
    pub fn psn(&self) -> u32 {
        be24(&self.buffer.as_ref()[field::PSN])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Bth<T> {
    /// Sets the opcode.
    pub fn set_opcode(&mut self, op: Opcode) {
        self.buffer.as_mut()[field::OPCODE] = op.into();
    }

    /// Sets SE, M, PadCnt and TVer together.
    pub fn set_flags(&mut self, solicited: bool, migreq: bool, pad_count: u8, tver: u8) {
        self.buffer.as_mut()[field::FLAGS] = (u8::from(solicited) << 7)
            | (u8::from(migreq) << 6)
            | ((pad_count & 0x3) << 4)
            | (tver & 0x0F);
    }

    /// Sets the partition key.
    pub fn set_pkey(&mut self, v: u16) {
        self.buffer.as_mut()[field::PKEY].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets FECN and BECN (reserved bits zero).
    pub fn set_fecn_becn(&mut self, fecn: bool, becn: bool) {
        self.buffer.as_mut()[field::FECN_BECN] = (u8::from(fecn) << 7) | (u8::from(becn) << 6);
    }

    /// Sets the destination QP (low 24 bits used).
    pub fn set_dest_qp(&mut self, v: u32) {
        put_be24(&mut self.buffer.as_mut()[field::DEST_QP], v);
    }

    /// Sets AckReq (reserved bits zero).
    pub fn set_ack_req(&mut self, v: bool) {
        self.buffer.as_mut()[field::ACK_REQ] = u8::from(v) << 7;
    }

    /// Sets the PSN (low 24 bits used).
    pub fn set_psn(&mut self, v: u32) {
        put_be24(&mut self.buffer.as_mut()[field::PSN], v);
    }
}

/// Owned form of a BTH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BthRepr {
    /// Opcode.
    pub opcode: Opcode,
    /// Solicited event.
    pub solicited: bool,
    /// MigReq.
    pub migreq: bool,
    /// Pad count, 0..=3.
    pub pad_count: u8,
    /// Partition key.
    pub pkey: u16,
    /// Forward ECN.
    pub fecn: bool,
    /// Backward ECN.
    pub becn: bool,
    /// Destination QP (24 bits).
    pub dest_qp: u32,
    /// AckReq.
    pub ack_req: bool,
    /// PSN (24 bits).
    pub psn: u32,
}

impl BthRepr {
    /// A BTH with default flags (no SE/M/FECN/BECN, P_Key 0xFFFF).
    pub fn new(opcode: Opcode, dest_qp: u32, psn: u32, ack_req: bool) -> BthRepr {
        BthRepr {
            opcode,
            solicited: false,
            migreq: false,
            pad_count: 0,
            pkey: DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qp,
            ack_req,
            psn,
        }
    }

    /// Parses a BTH.
    pub fn parse<T: AsRef<[u8]>>(b: &Bth<T>) -> Result<BthRepr, IbError> {
        b.check_len()?;
        Ok(BthRepr {
            opcode: b.opcode(),
            solicited: b.solicited(),
            migreq: b.migreq(),
            pad_count: b.pad_count(),
            pkey: b.pkey(),
            fecn: b.fecn(),
            becn: b.becn(),
            dest_qp: b.dest_qp(),
            ack_req: b.ack_req(),
            psn: b.psn(),
        })
    }

    /// 12 bytes.
    pub fn buffer_len(&self) -> usize {
        BTH_LEN
    }

    /// Writes the header (TVer 0).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, b: &mut Bth<T>) {
        b.set_opcode(self.opcode);
        b.set_flags(self.solicited, self.migreq, self.pad_count, 0);
        b.set_pkey(self.pkey);
        b.set_fecn_becn(self.fecn, self.becn);
        b.set_dest_qp(self.dest_qp);
        b.set_ack_req(self.ack_req);
        b.set_psn(self.psn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering::*;

    // The BTH of the CNP in E-11: opcode 0x81, P_Key 0xFFFF, BECN, dest QP 0x11.
    static CNP_BTH: [u8; 12] = [
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn deconstruct() {
        let r = BthRepr::parse(&Bth::new_checked(&CNP_BTH[..]).unwrap()).unwrap();
        assert_eq!(r.opcode, Opcode::Cnp);
        assert!(r.becn && !r.fecn && !r.ack_req);
        assert_eq!((r.pkey, r.dest_qp, r.psn), (0xFFFF, 0x11, 0));
        assert_eq!(
            Bth::new_checked(&CNP_BTH[..11]).unwrap_err(),
            IbError::Truncated
        );
    }

    #[test]
    fn construct() {
        let mut r = BthRepr::new(Opcode::Cnp, 0x11, 0, false);
        r.becn = true;
        let mut buf = [0u8; 12];
        r.emit(&mut Bth::new_unchecked(&mut buf[..]));
        assert_eq!(buf, CNP_BTH);
    }

    #[test]
    fn psn_arithmetic_wraps_at_2_pow_24() {
        assert_eq!(psn_add(0xFF_FFFF, 1), 0);
        assert_eq!(psn_add(0xFF_FFFE, 5), 3);
        assert_eq!(psn_cmp(0, 0xFF_FFFF), Greater, "0 follows 2^24-1");
        assert_eq!(psn_cmp(0xFF_FFFF, 0), Less);
        assert_eq!(psn_cmp(5, 5), Equal);
        assert_eq!(psn_cmp(0x7F_FFFF, 0), Greater);
        assert_eq!(
            psn_cmp(0x80_0001, 0),
            Less,
            "beyond half the space is behind"
        );
        assert_eq!(psn_diff(2, 0xFF_FFFE), 4);
    }

    #[test]
    fn opcode_classes() {
        assert!(Opcode::RcWriteFirst.has_reth());
        assert!(Opcode::RcWriteOnly.has_reth());
        assert!(Opcode::RcReadRequest.has_reth());
        assert!(!Opcode::RcWriteMiddle.has_reth());
        assert!(Opcode::RcAcknowledge.has_aeth());
        assert!(Opcode::RcReadResponseFirst.has_aeth());
        assert!(!Opcode::RcReadResponseMiddle.has_aeth());
        assert!(!Opcode::Cnp.has_aeth());
        assert!(Opcode::RcWriteOnlyImm.has_immdt());
        assert!(Opcode::RcSendLastImm.has_immdt());
        assert!(Opcode::RcReadResponseOnly.is_first() && Opcode::RcReadResponseOnly.is_last());
        assert!(Opcode::RcReadRequest.is_rc_request());
        assert!(!Opcode::RcAcknowledge.is_rc_request());
        assert_eq!(Opcode::from(0x99), Opcode::Unknown(0x99));
        assert_eq!(u8::from(Opcode::Unknown(0x99)), 0x99);
    }
}
