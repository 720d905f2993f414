//! The ACK Extended Transport Header (IBTA Vol. 1 §9.3.5, R-ROCE-4): on
//! ACKs and READ responses first/last/only, 4 bytes: syndrome and MSN.
//!
//! Syndrome bits 7–5 give the class: 000 ACK (low 5 bits credits, 0x1F =
//! unlimited), 001 RNR NAK (low 5 bits the RNR timer code, IBTA table 45),
//! 011 NAK (low 5 bits the [`NakCode`]).

use super::{IbError, be24, put_be24};

/// Length of the ACK Extended Transport Header in bytes.
pub const AETH_LEN: usize = 4;

/// AETH syndrome classes (bits 7–5 of the syndrome).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AethSyndrome {
    /// ACK with a credit count (0x1F = unlimited).
    Ack {
        /// Credit count (low 5 bits).
        credits: u8,
    },
    /// Receiver-not-ready NAK with its timer code.
    RnrNak(u8),
    /// NAK with a code.
    Nak(NakCode),
    /// Reserved class.
    Reserved(u8),
}

/// NAK codes (IBTA table 44).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NakCode {
    /// PSN sequence error: a packet arrived ahead of the expected PSN.
    PsnSequenceError,
    /// Invalid request (bad opcode sequence, too many outstanding READs).
    InvalidRequest,
    /// Remote access error (bad R_Key, out of bounds, access not allowed).
    RemoteAccessError,
    /// Remote operational error.
    RemoteOperationalError,
    /// Invalid RD request.
    InvalidRdRequest,
    /// Any other code.
    Reserved(u8),
}

impl NakCode {
    /// The 5-bit code.
    pub fn code(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
            NakCode::Reserved(c) => c & 0x1F,
        }
    }

    /// The code's meaning from its 5 bits.
    pub fn from_code(c: u8) -> NakCode {
        match c & 0x1F {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            c => NakCode::Reserved(c),
        }
    }
}

/// Microseconds of each RNR timer code (IBTA table 45; code 0 is the
/// longest, 655.36 ms).
const RNR_TIMER_US: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840,
    5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840,
    245_760, 327_680, 491_520,
];

/// The RNR NAK delay of timer code `code` (low 5 bits), ns.
pub fn rnr_timer_ns(code: u8) -> u64 {
    u64::from(RNR_TIMER_US[usize::from(code & 0x1F)]) * 1_000
}

/// Owned ACK Extended Transport Header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AethRepr {
    /// Raw syndrome byte.
    pub syndrome: u8,
    /// Message sequence number (24 bits).
    pub msn: u32,
}

impl AethRepr {
    /// An ACK with unlimited credits.
    pub fn ack(msn: u32) -> AethRepr {
        AethRepr {
            syndrome: 0x1F,
            msn,
        }
    }

    /// A NAK with `code`.
    pub fn nak(code: NakCode, msn: u32) -> AethRepr {
        AethRepr {
            syndrome: 0x60 | code.code(),
            msn,
        }
    }

    /// An RNR NAK asking the requester to wait timer code `timer`.
    pub fn rnr_nak(timer: u8, msn: u32) -> AethRepr {
        AethRepr {
            syndrome: 0x20 | (timer & 0x1F),
            msn,
        }
    }

    /// Parses the first 4 bytes of `b`.
    pub fn parse(b: &[u8]) -> Result<AethRepr, IbError> {
        if b.len() < AETH_LEN {
            return Err(IbError::Truncated);
        }
        Ok(AethRepr {
            syndrome: b[0],
            msn: be24(&b[1..4]),
        })
    }

    /// 4 bytes.
    pub fn buffer_len(&self) -> usize {
        AETH_LEN
    }

    /// Writes into the first 4 bytes of `b`.
    pub fn emit(&self, b: &mut [u8]) {
        b[0] = self.syndrome;
        put_be24(&mut b[1..4], self.msn);
    }

    /// Decodes the syndrome class.
    pub fn kind(&self) -> AethSyndrome {
        let low = self.syndrome & 0x1F;
        match self.syndrome >> 5 {
            0b000 => AethSyndrome::Ack { credits: low },
            0b001 => AethSyndrome::RnrNak(low),
            0b011 => AethSyndrome::Nak(NakCode::from_code(low)),
            _ => AethSyndrome::Reserved(self.syndrome),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syndromes() {
        assert_eq!(AethRepr::ack(7).kind(), AethSyndrome::Ack { credits: 0x1F });
        let nak = AethRepr::nak(NakCode::PsnSequenceError, 3);
        assert_eq!(nak.syndrome, 0x60);
        assert_eq!(nak.kind(), AethSyndrome::Nak(NakCode::PsnSequenceError));
        assert_eq!(AethRepr::nak(NakCode::RemoteAccessError, 0).syndrome, 0x62);
        assert_eq!(AethRepr::rnr_nak(14, 0).kind(), AethSyndrome::RnrNak(14));
        assert_eq!(
            AethRepr {
                syndrome: 0x40,
                msn: 0
            }
            .kind(),
            AethSyndrome::Reserved(0x40)
        );
        assert_eq!(rnr_timer_ns(0), 655_360_000);
        assert_eq!(rnr_timer_ns(14), 1_280_000);
    }

    #[test]
    fn roundtrip() {
        let bytes = [0x1f, 0x12, 0x34, 0x56];
        let a = AethRepr::parse(&bytes).unwrap();
        assert_eq!(a.msn, 0x12_3456);
        let mut out = [0u8; 4];
        a.emit(&mut out);
        assert_eq!(out, bytes);
        assert_eq!(AethRepr::parse(&bytes[..3]), Err(IbError::Truncated));
    }
}
