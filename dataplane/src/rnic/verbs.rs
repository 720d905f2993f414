//! What an application hands an RC queue pair and gets back, in the shape
//! of the verbs API (`ibv_post_send`, `ibv_post_recv`, `ibv_poll_cq`,
//! `ibv_reg_mr`): work requests, memory regions and work completions.
//!
//! Memory is modelled by its bounds and access rights only: a WRITE or READ
//! is checked against the registered region (R_Key, range, access) as a real
//! responder checks it, but no payload bytes are stored.

use std::fmt;

/// Operation of a send work request (`ibv_wr_opcode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrOp {
    /// SEND: consumes a receive at the peer.
    Send,
    /// SEND with immediate data.
    SendImm(u32),
    /// RDMA WRITE into the peer's registered memory.
    Write,
    /// RDMA WRITE with immediate: consumes a receive at the peer.
    WriteImm(u32),
    /// RDMA READ from the peer's registered memory.
    Read,
}

impl WrOp {
    /// The immediate value, if the operation carries one.
    pub fn imm(self) -> Option<u32> {
        match self {
            WrOp::SendImm(v) | WrOp::WriteImm(v) => Some(v),
            _ => None,
        }
    }

    /// True for RDMA READ.
    pub fn is_read(self) -> bool {
        matches!(self, WrOp::Read)
    }

    /// True for SEND and SEND with immediate.
    pub fn is_send(self) -> bool {
        matches!(self, WrOp::Send | WrOp::SendImm(_))
    }

    /// perftest-style name.
    pub fn name(self) -> &'static str {
        match self {
            WrOp::Send => "SEND",
            WrOp::SendImm(_) => "SEND_WITH_IMM",
            WrOp::Write => "RDMA_WRITE",
            WrOp::WriteImm(_) => "RDMA_WRITE_WITH_IMM",
            WrOp::Read => "RDMA_READ",
        }
    }
}

/// A buffer in the peer's memory: virtual address and R_Key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteBuf {
    /// Remote virtual address.
    pub addr: u64,
    /// Remote key of the region.
    pub rkey: u32,
}

/// A send work request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendWr {
    /// Caller's id, returned in the completion.
    pub wr_id: u64,
    /// Operation.
    pub op: WrOp,
    /// Message length, bytes.
    pub len_bytes: u32,
    /// Target (WRITE) or source (READ) in the peer's memory; ignored by SEND.
    pub remote: RemoteBuf,
    /// Report a completion on success (errors are always reported).
    pub signaled: bool,
}

/// A receive work request: a buffer for one incoming SEND (or the
/// completion of one WRITE with immediate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvWr {
    /// Caller's id, returned in the completion.
    pub wr_id: u64,
    /// Buffer length, bytes.
    pub len_bytes: u32,
}

/// Remote access rights of a memory region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Access {
    /// RDMA WRITE allowed.
    pub remote_write: bool,
    /// RDMA READ allowed.
    pub remote_read: bool,
}

/// A registered memory region (`ibv_reg_mr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryRegion {
    /// Its remote key.
    pub rkey: u32,
    /// Start address.
    pub addr: u64,
    /// Length, bytes.
    pub len_bytes: u64,
    /// What peers may do.
    pub access: Access,
}

impl MemoryRegion {
    /// True if `[addr, addr + len)` lies inside the region.
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        addr >= self.addr
            && addr
                .checked_add(len)
                .is_some_and(|end| end <= self.addr.saturating_add(self.len_bytes))
    }
}

/// R_Key of the region every RNIC registers unless told not to
/// ([`super::RnicConfig::default_mr`]).
pub const DEFAULT_RKEY: u32 = 0x0000_1000;
/// Start of the default region.
pub const DEFAULT_MR_ADDR: u64 = 0x1000_0000;
/// Length of the default region (1 TiB: any message fits).
pub const DEFAULT_MR_LEN: u64 = 1 << 40;

/// The default region: remote read and write allowed.
pub fn default_mr() -> MemoryRegion {
    MemoryRegion {
        rkey: DEFAULT_RKEY,
        addr: DEFAULT_MR_ADDR,
        len_bytes: DEFAULT_MR_LEN,
        access: Access {
            remote_write: true,
            remote_read: true,
        },
    }
}

/// Status of a work completion (`ibv_wc_status`); `Display` gives the text
/// `ibv_wc_status_str` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WcStatus {
    /// Success.
    Success,
    /// Retries after ACK timeouts or NAK sequence errors ran out
    /// (`IBV_WC_RETRY_EXC_ERR`).
    RetryExceeded,
    /// Retries after RNR NAKs ran out (`IBV_WC_RNR_RETRY_EXC_ERR`).
    RnrRetryExceeded,
    /// The responder refused the access: bad R_Key, range or rights
    /// (`IBV_WC_REM_ACCESS_ERR`).
    RemoteAccessError,
    /// The responder found the request invalid (`IBV_WC_REM_INV_REQ_ERR`).
    RemoteInvalidRequest,
    /// Not executed: the QP went to the error state (`IBV_WC_WR_FLUSH_ERR`).
    WrFlushError,
}

impl fmt::Display for WcStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WcStatus::Success => "success",
            WcStatus::RetryExceeded => "transport retry counter exceeded",
            WcStatus::RnrRetryExceeded => "RNR retry counter exceeded",
            WcStatus::RemoteAccessError => "remote access error",
            WcStatus::RemoteInvalidRequest => "remote invalid request error",
            WcStatus::WrFlushError => "Work Request Flushed Error",
        })
    }
}

/// What a completion reports (`ibv_wc_opcode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionOp {
    /// A SEND finished (requester).
    Send,
    /// An RDMA WRITE finished (requester).
    Write,
    /// An RDMA READ finished (requester).
    Read,
    /// A SEND arrived into a receive (responder).
    Recv,
    /// A WRITE with immediate arrived (responder, consumed a receive).
    RecvWriteImm,
}

/// A work completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// Local QP.
    pub qpn: u32,
    /// The work request's id.
    pub wr_id: u64,
    /// What finished.
    pub op: CompletionOp,
    /// How it finished.
    pub status: WcStatus,
    /// Bytes moved (receives: bytes received).
    pub byte_len: u64,
    /// Immediate data (receives of SEND/WRITE with immediate).
    pub imm: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_text_matches_ibv_wc_status_str() {
        assert_eq!(
            WcStatus::RetryExceeded.to_string(),
            "transport retry counter exceeded"
        );
        assert_eq!(
            WcStatus::RemoteAccessError.to_string(),
            "remote access error"
        );
    }

    #[test]
    fn region_bounds() {
        let mr = MemoryRegion {
            rkey: 1,
            addr: 100,
            len_bytes: 50,
            access: Access::default(),
        };
        assert!(mr.contains(100, 50));
        assert!(!mr.contains(100, 51));
        assert!(!mr.contains(99, 1));
        assert!(!mr.contains(u64::MAX, 2));
    }
}
