//! The RDMA Extended Transport Header (IBTA Vol. 1 §9.3.3, R-ROCE-4): on RDMA
//! WRITE first/only and READ request, 16 bytes: virtual address, R_Key, DMA
//! length of the whole message.

use super::IbError;

/// Length of the RDMA Extended Transport Header in bytes.
pub const RETH_LEN: usize = 16;

/// Owned RDMA Extended Transport Header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RethRepr {
    /// Remote virtual address.
    pub virtual_addr: u64,
    /// Remote key.
    pub rkey: u32,
    /// DMA length of the whole message in bytes.
    pub dma_len: u32,
}

impl RethRepr {
    /// Parses the first 16 bytes of `b`.
    pub fn parse(b: &[u8]) -> Result<RethRepr, IbError> {
        if b.len() < RETH_LEN {
            return Err(IbError::Truncated);
        }
        let mut va = [0u8; 8];
        va.copy_from_slice(&b[0..8]);
        Ok(RethRepr {
            virtual_addr: u64::from_be_bytes(va),
            rkey: u32::from_be_bytes([b[8], b[9], b[10], b[11]]),
            dma_len: u32::from_be_bytes([b[12], b[13], b[14], b[15]]),
        })
    }

    /// 16 bytes.
    pub fn buffer_len(&self) -> usize {
        RETH_LEN
    }

    /// Writes into the first 16 bytes of `b` (which must be that long).
    pub fn emit(&self, b: &mut [u8]) {
        b[0..8].copy_from_slice(&self.virtual_addr.to_be_bytes());
        b[8..12].copy_from_slice(&self.rkey.to_be_bytes());
        b[12..16].copy_from_slice(&self.dma_len.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The RETH of the WRITE fixture in p4runtime-subset §3.2 (scapy 2.8.0).
    static RETH_BYTES: [u8; 16] = [
        0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00, 0x12, 0x34, 0xab, 0xcd, 0x00, 0x00, 0x00,
        0x20,
    ];

    #[test]
    fn roundtrip() {
        let r = RethRepr::parse(&RETH_BYTES).unwrap();
        assert_eq!(
            r,
            RethRepr {
                virtual_addr: 0x7f00_0000_1000,
                rkey: 0x1234_abcd,
                dma_len: 32
            }
        );
        let mut b = [0u8; 16];
        r.emit(&mut b);
        assert_eq!(b, RETH_BYTES);
        assert_eq!(RethRepr::parse(&b[..15]), Err(IbError::Truncated));
    }
}
