//! NVMe over Fabrics on RDMA as a workload: an initiator that keeps
//! `iodepth` commands outstanding on each queue pair, and a target that
//! serves them, both sans-IO (told `now` and the RNIC's completions, asked
//! for the work requests to post).
//!
//! Each command moves data the way the NVMe-oF RDMA transport binding
//! does:
//! - read: host SEND of the command capsule → target RDMA WRITE of the data
//!   into the host's buffer → target SEND of the response capsule;
//! - write: host SEND of the command capsule → target RDMA READ of the
//!   host's buffer → target SEND of the response capsule.
//!
//! Both sides post receives for capsules (no receive, no capsule: RNR NAK),
//! as an NVMe-oF host and target do, and repost one as each is used.
//! RC keeps the data WRITE ahead of the response SEND on the wire.
//!
//! Where this differs from the binding: the RNIC model carries no payload
//! bytes, so a capsule's payload (64-byte command, 16-byte response) is
//! sent but not read; what the target needs travels in the capsule's
//! immediate data instead ([`Capsule`]): read or write, the command id and
//! the length. The host buffer of command `cid` is `cid × length` into the
//! host's default memory region ([`default_mr`]): what the keyed SGL of a
//! real command would name. Latency is the host's, from posting the command
//! capsule to the response capsule's receive completion (fio's `clat`).

use std::collections::VecDeque;

use dataplane::rnic::verbs::{
    Completion, CompletionOp, DEFAULT_MR_ADDR, DEFAULT_RKEY, RecvWr, RemoteBuf, SendWr, WcStatus,
    WrOp, default_mr,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::workload::{mean_stdev, nearest_rank};

/// Bytes of an NVMe-oF command capsule without in-capsule data (a 64-byte
/// submission queue entry).
pub const COMMAND_CAPSULE_BYTES: u32 = 64;
/// Bytes of a response capsule (a 16-byte completion queue entry).
pub const RESPONSE_CAPSULE_BYTES: u32 = 16;
/// Logical block size lengths are counted in.
pub const BLOCK_BYTES: u32 = 512;
/// Deepest queue a QP may have (command ids are 15 bits in [`Capsule`]).
pub const MAX_IODEPTH: u16 = 1024;
/// Receives a target keeps posted per QP: one per command a host may have
/// outstanding.
pub const TARGET_RECEIVES: u32 = MAX_IODEPTH as u32;

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IoOp {
    /// Data from the target to the host (target RDMA WRITE).
    Read,
    /// Data from the host to the target (target RDMA READ).
    Write,
}

/// What a command capsule's immediate carries: bit 31 write, bits 30..16
/// the command id, bits 15..0 the length in 512-byte blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capsule {
    /// Read or write.
    pub op: IoOp,
    /// Command id, below [`MAX_IODEPTH`].
    pub cid: u16,
    /// Data length, 512-byte blocks (1..=65535).
    pub blocks: u16,
}

impl Capsule {
    /// The immediate value.
    pub fn to_imm(self) -> u32 {
        let w = u32::from(self.op == IoOp::Write) << 31;
        w | (u32::from(self.cid & 0x7FFF) << 16) | u32::from(self.blocks)
    }

    /// The capsule an immediate value describes (`None`: a zero length).
    pub fn from_imm(imm: u32) -> Option<Capsule> {
        let blocks = (imm & 0xFFFF) as u16;
        (blocks != 0).then_some(Capsule {
            op: if imm >> 31 == 1 {
                IoOp::Write
            } else {
                IoOp::Read
            },
            cid: ((imm >> 16) & 0x7FFF) as u16,
            blocks,
        })
    }

    /// Data length, bytes.
    pub fn len_bytes(self) -> u32 {
        u32::from(self.blocks) * BLOCK_BYTES
    }

    /// The host buffer this command's data goes to or comes from.
    pub fn host_buf(self) -> RemoteBuf {
        RemoteBuf {
            addr: DEFAULT_MR_ADDR + u64::from(self.cid) * u64::from(self.len_bytes()),
            rkey: DEFAULT_RKEY,
        }
    }
}

/// Why a workload cannot be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NvmfConfigError {
    /// Queue depth out of range.
    #[error("--iodepth must be 1..={MAX_IODEPTH}, got {0}")]
    Iodepth(u16),
    /// Block size not a multiple of 512 or too large.
    #[error("--bs must be a multiple of 512 bytes up to 65535 × 512, got {0}")]
    BlockSize(u32),
    /// Read share above 100 %.
    #[error("--rwmixread is a percentage (0..=100), got {0}")]
    ReadMix(u8),
}

/// An initiator's workload (fio's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NvmfConfig {
    /// Commands outstanding per QP.
    pub iodepth: u16,
    /// Bytes per I/O.
    pub bs: u32,
    /// Share of reads, percent.
    pub rwmixread: u8,
    /// I/Os per QP (`None`: until the run ends).
    pub ios: Option<u64>,
    /// Seed of the read/write choice.
    pub seed: u64,
}

impl Default for NvmfConfig {
    fn default() -> Self {
        NvmfConfig {
            iodepth: 32,
            bs: 4096,
            rwmixread: 70,
            ios: None,
            seed: 1,
        }
    }
}

impl NvmfConfig {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), NvmfConfigError> {
        if self.iodepth == 0 || self.iodepth > MAX_IODEPTH {
            return Err(NvmfConfigError::Iodepth(self.iodepth));
        }
        if self.bs == 0 || !self.bs.is_multiple_of(BLOCK_BYTES) || self.bs / BLOCK_BYTES > 0xFFFF {
            return Err(NvmfConfigError::BlockSize(self.bs));
        }
        if self.rwmixread > 100 {
            return Err(NvmfConfigError::ReadMix(self.rwmixread));
        }
        Ok(())
    }

    /// Work requests a host QP needs room for: every capsule outstanding.
    pub fn host_send_queue(&self) -> u32 {
        u32::from(self.iodepth) + 8
    }
}

/// The host side of one NVMe-oF I/O queue (one QP).
#[derive(Debug, Clone)]
pub struct Initiator {
    cfg: NvmfConfig,
    /// Per command id: what is outstanding and when its capsule was posted.
    slots: Vec<Option<(IoOp, u64)>>,
    free: Vec<u16>,
    issued: u64,
    stopped: bool,
    rng: ChaCha8Rng,
    read: IoLog,
    write: IoLog,
    error: Option<WcStatus>,
}

/// Completed I/Os of one direction.
#[derive(Debug, Clone, Default)]
struct IoLog {
    clat_ns: Vec<u64>,
    bytes: u64,
}

impl Initiator {
    /// An idle queue; `cfg` must validate.
    pub fn new(cfg: NvmfConfig) -> Self {
        let qd = cfg.iodepth.clamp(1, MAX_IODEPTH);
        Initiator {
            cfg,
            slots: vec![None; usize::from(qd)],
            // Pop from the end: command ids 0, 1, 2, ... first.
            free: (0..qd).rev().collect(),
            issued: 0,
            stopped: false,
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            read: IoLog::default(),
            write: IoLog::default(),
            error: None,
        }
    }

    /// The receives to post before the first command: one per response
    /// capsule that can be outstanding.
    pub fn initial_receives(&self) -> impl Iterator<Item = RecvWr> + use<> {
        (0..u64::from(self.cfg.iodepth)).map(|i| RecvWr {
            wr_id: i,
            len_bytes: RESPONSE_CAPSULE_BYTES,
        })
    }

    /// The next command capsule to post, if a command id is free and more
    /// I/Os are due. The caller must post it.
    #[must_use]
    pub fn poll_post(&mut self, now_ns: u64) -> Option<SendWr> {
        if self.error.is_some() || self.stopped || self.cfg.ios.is_some_and(|n| self.issued >= n) {
            return None;
        }
        let cid = self.free.pop()?;
        let op = if self.rng.gen_range(0..100u8) < self.cfg.rwmixread {
            IoOp::Read
        } else {
            IoOp::Write
        };
        self.slots[usize::from(cid)] = Some((op, now_ns));
        self.issued += 1;
        let capsule = Capsule {
            op,
            cid,
            blocks: (self.cfg.bs / BLOCK_BYTES) as u16,
        };
        Some(SendWr {
            wr_id: u64::from(cid),
            op: WrOp::SendImm(capsule.to_imm()),
            len_bytes: COMMAND_CAPSULE_BYTES,
            remote: capsule.host_buf(),
            signaled: false,
        })
    }

    /// A completion of this QP arrived at `now_ns`. Returns the receive to
    /// post again when it used one.
    pub fn handle_completion(&mut self, c: &Completion, now_ns: u64) -> Option<RecvWr> {
        if c.status != WcStatus::Success {
            self.error.get_or_insert(c.status);
            return None;
        }
        if c.op != CompletionOp::Recv {
            return None;
        }
        // A response capsule: its immediate is the command id.
        if let Some(cid) = c.imm.and_then(|i| u16::try_from(i).ok())
            && let Some((op, posted)) = self.slots.get_mut(usize::from(cid)).and_then(Option::take)
        {
            let log = match op {
                IoOp::Read => &mut self.read,
                IoOp::Write => &mut self.write,
            };
            log.clat_ns.push(now_ns.saturating_sub(posted));
            log.bytes += u64::from(self.cfg.bs);
            self.free.push(cid);
        }
        Some(RecvWr {
            wr_id: c.wr_id,
            len_bytes: RESPONSE_CAPSULE_BYTES,
        })
    }

    /// The RNIC refused a capsule (its QP failed): this queue stops.
    pub fn post_failed(&mut self) {
        self.error.get_or_insert(WcStatus::WrFlushError);
    }

    /// Issue nothing more; [`Self::finished`] once what is in flight
    /// completes (fio drains in-flight I/O at the end of a run).
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Every I/O asked for completed (or issuing stopped and nothing is in
    /// flight), or the QP failed.
    pub fn finished(&self) -> bool {
        let done_issuing = self.stopped || self.cfg.ios.is_some_and(|n| self.issued >= n);
        self.error.is_some() || (done_issuing && self.free.len() == self.slots.len())
    }

    /// The completion error that stopped this queue.
    pub fn error(&self) -> Option<WcStatus> {
        self.error
    }
}

/// The target side of one NVMe-oF I/O queue (one QP).
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// Work requests to post, in order.
    out: VecDeque<SendWr>,
    /// Commands served.
    pub commands: u64,
    /// Capsules whose immediate was not a command.
    pub bad_capsules: u64,
}

impl Target {
    /// The receives to post when the QP is set up.
    pub fn initial_receives() -> impl Iterator<Item = RecvWr> {
        (0..u64::from(TARGET_RECEIVES)).map(|i| RecvWr {
            wr_id: i,
            len_bytes: COMMAND_CAPSULE_BYTES,
        })
    }

    /// A completion of this QP: queues the data transfer and the response a
    /// command needs. Returns the receive to post again when it used one.
    pub fn handle_completion(&mut self, c: &Completion) -> Option<RecvWr> {
        match (c.op, c.status) {
            (CompletionOp::Recv, WcStatus::Success) => {
                match c.imm.and_then(Capsule::from_imm) {
                    Some(cmd) => {
                        self.commands += 1;
                        let data = SendWr {
                            wr_id: u64::from(cmd.cid),
                            op: match cmd.op {
                                IoOp::Read => WrOp::Write,
                                IoOp::Write => WrOp::Read,
                            },
                            len_bytes: cmd.len_bytes(),
                            remote: cmd.host_buf(),
                            // A write's response waits for the READ.
                            signaled: cmd.op == IoOp::Write,
                        };
                        self.out.push_back(data);
                        if cmd.op == IoOp::Read {
                            self.out.push_back(response(cmd.cid));
                        }
                    }
                    None => self.bad_capsules += 1,
                }
                Some(RecvWr {
                    wr_id: c.wr_id,
                    len_bytes: COMMAND_CAPSULE_BYTES,
                })
            }
            (CompletionOp::Read, WcStatus::Success) => {
                // The host's data is here: answer the write.
                self.out.push_back(response(c.wr_id as u16));
                None
            }
            _ => None,
        }
    }

    /// The next work request to post.
    pub fn peek(&self) -> Option<&SendWr> {
        self.out.front()
    }

    /// The RNIC took the request [`Self::peek`] showed.
    pub fn posted(&mut self) {
        self.out.pop_front();
    }

    /// The QP failed: forget what was queued.
    pub fn clear(&mut self) {
        self.out.clear();
    }
}

fn response(cid: u16) -> SendWr {
    SendWr {
        wr_id: u64::from(cid),
        op: WrOp::SendImm(u32::from(cid)),
        len_bytes: RESPONSE_CAPSULE_BYTES,
        remote: RemoteBuf {
            addr: default_mr().addr,
            rkey: DEFAULT_RKEY,
        },
        signaled: false,
    }
}

/// fio's completion-latency percentiles.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// One direction's figures, in fio's JSON names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IoSummary {
    /// I/Os completed.
    pub total_ios: u64,
    /// Bytes moved.
    pub io_bytes: u64,
    /// I/Os per second.
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes: f64,
    /// Completion latency, ns.
    pub clat_ns: ClatSummary,
}

/// Completion latency, ns, as fio's `clat_ns`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClatSummary {
    /// Fastest.
    pub min: u64,
    /// Slowest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub stddev: f64,
    /// `(percent, ns)` at [`FIO_PERCENTILES`] (nearest rank); in JSON an
    /// object keyed as fio keys it (`"99.900000": ns`).
    #[serde(serialize_with = "fio_percentiles")]
    pub percentile: Vec<(f64, u64)>,
}

fn fio_percentiles<S: serde::Serializer>(p: &[(f64, u64)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(p.len()))?;
    for (pct, ns) in p {
        m.serialize_entry(&format!("{pct:.6}"), ns)?;
    }
    m.end()
}

impl IoSummary {
    fn of(samples: &mut [u64], bytes: u64, secs: f64) -> Self {
        samples.sort_unstable();
        let n = samples.len();
        let (mean, stddev) = mean_stdev(samples);
        let secs = secs.max(1e-9);
        IoSummary {
            total_ios: n as u64,
            io_bytes: bytes,
            iops: n as f64 / secs,
            bw_bytes: bytes as f64 / secs,
            clat_ns: ClatSummary {
                min: samples.first().copied().unwrap_or(0),
                max: samples.last().copied().unwrap_or(0),
                mean,
                stddev,
                percentile: FIO_PERCENTILES
                    .iter()
                    .map(|&p| (p, nearest_rank(samples, p / 100.0)))
                    .collect(),
            },
        }
    }

    /// fio's text lines for this direction (`read` or `write`).
    fn fio_lines(&self, name: &str, secs: f64) -> Vec<String> {
        let mib = |b: f64| b / (1024.0 * 1024.0);
        let us = |ns: f64| ns / 1e3;
        let mut out = vec![
            format!(
                "  {name}: IOPS={}, BW={:.1}MiB/s ({:.1}MB/s)({:.1}MiB/{:.2}s)",
                si(self.iops),
                mib(self.bw_bytes),
                self.bw_bytes / 1e6,
                mib(self.io_bytes as f64),
                secs
            ),
            format!(
                "    clat (usec): min={:.0}, max={:.0}, avg={:.2}, stdev={:.2}",
                us(self.clat_ns.min as f64),
                us(self.clat_ns.max as f64),
                us(self.clat_ns.mean),
                us(self.clat_ns.stddev)
            ),
            "    clat percentiles (usec):".to_string(),
        ];
        for row in self.clat_ns.percentile.chunks(4) {
            let cells: Vec<String> = row
                .iter()
                .map(|&(p, ns)| format!("{p:>5.2}th=[{:>6.0}]", us(ns as f64)))
                .collect();
            out.push(format!("     | {}", cells.join(", ")));
        }
        out
    }
}

/// fio's compact count: 950, 12.3k, 1.20M.
fn si(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// A host's figures over all its queues, fio-style.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvmfSummary {
    /// Queue depth per QP.
    pub iodepth: u16,
    /// Bytes per I/O.
    pub bs: u32,
    /// Read share, percent.
    pub rwmixread: u8,
    /// QPs (I/O queues).
    pub queues: usize,
    /// Seconds the figures span.
    pub runtime_s: f64,
    /// Reads.
    pub read: IoSummary,
    /// Writes.
    pub write: IoSummary,
    /// A completion error that stopped a queue (`ibv_wc_status_str`).
    pub error: Option<String>,
}

impl NvmfSummary {
    /// The figures of `queues` over `secs` seconds.
    pub fn of(queues: &[&Initiator], secs: f64) -> Self {
        let cfg = queues.first().map_or_else(NvmfConfig::default, |q| q.cfg);
        let mut reads: Vec<u64> = Vec::new();
        let mut writes: Vec<u64> = Vec::new();
        let (mut rb, mut wb) = (0, 0);
        for q in queues {
            reads.extend_from_slice(&q.read.clat_ns);
            writes.extend_from_slice(&q.write.clat_ns);
            rb += q.read.bytes;
            wb += q.write.bytes;
        }
        NvmfSummary {
            iodepth: cfg.iodepth,
            bs: cfg.bs,
            rwmixread: cfg.rwmixread,
            queues: queues.len(),
            runtime_s: secs,
            read: IoSummary::of(&mut reads, rb, secs),
            write: IoSummary::of(&mut writes, wb, secs),
            error: queues.iter().find_map(|q| q.error()).map(|e| e.to_string()),
        }
    }

    /// The report fio prints for a job.
    pub fn fio_lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "nvmf: (rw=randrw, bs={}, iodepth={}, rwmixread={}, queues={}): runtime={:.2}s",
            self.bs, self.iodepth, self.rwmixread, self.queues, self.runtime_s
        )];
        if self.read.total_ios > 0 || self.rwmixread > 0 {
            out.extend(self.read.fio_lines("read", self.runtime_s));
        }
        if self.write.total_ios > 0 || self.rwmixread < 100 {
            out.extend(self.write.fio_lines("write", self.runtime_s));
        }
        if let Some(e) = &self.error {
            out.push(format!("  error: {e}"));
        }
        out
    }
}

#[cfg(test)]
mod tests;
