//! The Immediate Data header (IBTA Vol. 1 §9.3.6): 4 bytes on SEND and RDMA
//! WRITE "with immediate", delivered to the responder's completion.

use super::IbError;

/// Length of the Immediate Data header in bytes.
pub const IMMDT_LEN: usize = 4;

/// Owned Immediate Data header (big-endian).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImmDtRepr {
    /// The immediate value.
    pub imm: u32,
}

impl ImmDtRepr {
    /// Parses the first 4 bytes of `b`.
    pub fn parse(b: &[u8]) -> Result<ImmDtRepr, IbError> {
        if b.len() < IMMDT_LEN {
            return Err(IbError::Truncated);
        }
        Ok(ImmDtRepr {
            imm: u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        })
    }

    /// 4 bytes.
    pub fn buffer_len(&self) -> usize {
        IMMDT_LEN
    }

    /// Writes into the first 4 bytes of `b`.
    pub fn emit(&self, b: &mut [u8]) {
        b[..4].copy_from_slice(&self.imm.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let r = ImmDtRepr::parse(&[0xde, 0xad, 0xbe, 0xef]).unwrap();
        assert_eq!(r.imm, 0xDEAD_BEEF);
        let mut b = [0u8; 4];
        r.emit(&mut b);
        assert_eq!(b, [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(ImmDtRepr::parse(&b[..2]), Err(IbError::Truncated));
    }
}
