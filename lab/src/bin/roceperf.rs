//! `roceperf`: a RoCEv2 host agent on a raw `AF_PACKET` socket, in the style
//! of perftest. The server answers RC requests (WRITE, SEND, READ) and CE
//! marks with CNPs; the client runs one perftest test (`--test write_bw`,
//! `read_bw`, `send_bw`, `write_lat`, `read_lat`, `send_lat`,
//! [`lab::perf::workload`]) on N QPs with DCQCN rate control, honouring PFC. Both report bandwidth, message rate, loss (PSN
//! gaps), CNPs, PFC and pause time, per `--interval` and at the end, as a
//! text table or JSON lines (`--json`), with the RNIC's device counters under
//! their Linux RDMA names (`port_xmit_data`, `packet_seq_err`,
//! `local_ack_timeout_err`, `np_ecn_marked_roce_packets`, ...).
//!
//! `--roce-version 1 --vlan VID` speaks RoCE v1 instead: EtherType 0x8915,
//! GRH + BTH on one VLAN, the priority in the PCP.
//!
//! The interface must carry no kernel IP (the kernel would answer UDP 4791
//! with ICMP); the agent speaks raw frames only. Needs CAP_NET_RAW.
//!
//! Two offline tools share the binary: `roceperf frame` builds any RoCE v1/v2
//! frame from flags ([`dataplane::wire::roce_frame`]) and writes hex or a
//! pcap file; `roceperf decode` reads one back, prints every field, the
//! ICRC and IPv4 checksum checks, and what a lab switch does with it
//! ([`lab::perf::verdict`]).

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use dataplane::fabric::config::Trust;
use dataplane::rnic::RnicConfig;
use dataplane::rnic::dcqcn::{DcqcnConfig, scaled_cnp_interval};
use dataplane::wire::ib::{AethRepr, Opcode, RethRepr, psn_add};
use dataplane::wire::ip::Ecn;
use dataplane::wire::roce_frame::{
    FrameSpec, PayloadPattern, RoceVersion, Vlan, decode, largest_packet_len, opcode_layout,
    parse_opcode,
};
use lab::perf::dcbx::DcbxMode;
use lab::perf::frame::{
    default_trust, describe, describe_verdict, parse_hex, read_pcap, to_hex, to_json, write_pcap,
};
use lab::perf::nvmf::NvmfConfig;
use lab::perf::report::Report;
use lab::perf::tcp::{self, TcpReport};
use lab::perf::workload::{BandwidthSummary, PerfTest};
use lab::perf::{Agent, MAX_QPS, Role};
use lab::port::{AfPacketPort, Port};
use lab::units::{parse_mac, parse_rate_bps};

#[derive(Parser)]
#[command(
    name = "roceperf",
    version,
    about = "RoCE host agent on raw frames running the perftest tests (write/read/send, bandwidth and latency), and a RoCE frame builder and decoder"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Receive WRITE streams (QPs are learned from the first packet).
    Server {
        #[command(flatten)]
        common: Common,
        /// Stop after this many seconds (default: run until Ctrl-C).
        #[arg(long)]
        duration: Option<f64>,
    },
    /// Run a perftest test against a server: `--test write_bw` (default),
    /// `read_bw`, `send_bw`, or the latency tests `write_lat`, `read_lat`,
    /// `send_lat` (one message in flight).
    Client {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        peer: PeerArgs,
        /// The perftest test, with or without `ib_`: write_bw, read_bw,
        /// send_bw, write_lat, read_lat, send_lat.
        #[arg(long, default_value = "write_bw", value_parser = parse_test)]
        test: PerfTest,
        /// Message size in bytes (default as perftest: 65536 for bandwidth
        /// tests, 2 for latency tests).
        #[arg(short, long)]
        size: Option<u64>,
        /// Seconds to run.
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        /// Messages per QP; latency tests: messages timed (default: as
        /// many as fit the duration).
        #[arg(short = 'n', long, visible_alias = "iters")]
        messages: Option<u64>,
        /// Also answer peers that write to us, as `server` does (a host
        /// that sends and receives in one process); runs the whole
        /// --duration.
        #[arg(long)]
        serve: bool,
    },
    /// Serve NVMe over Fabrics I/O (RDMA binding) to hosts: a read is
    /// answered with an RDMA WRITE of the data and a response SEND, a
    /// write with an RDMA READ of the host's buffer and a response SEND.
    NvmfTarget {
        #[command(flatten)]
        common: Common,
        /// Stop after this many seconds (default: run until Ctrl-C).
        #[arg(long)]
        duration: Option<f64>,
    },
    /// Run NVMe over Fabrics I/O against a target: command capsules by
    /// SEND, `--iodepth` outstanding on each QP, a `--rwmixread` share of
    /// reads; IOPS and completion-latency percentiles as fio prints them.
    NvmfHost {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        peer: PeerArgs,
        /// Commands outstanding per QP.
        #[arg(long, default_value_t = 32)]
        iodepth: u16,
        /// Bytes per I/O (a multiple of 512).
        #[arg(long, default_value_t = 4096)]
        bs: u32,
        /// Percentage of reads; the rest are writes.
        #[arg(long, default_value_t = 70)]
        rwmixread: u8,
        /// I/Os per QP (default: as many as fit the duration).
        #[arg(long)]
        number_ios: Option<u64>,
        /// Seconds to run.
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        /// Seed of the read/write choice.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Receive kernel TCP (a bulk sink): the reliable-over-lossy traffic to
    /// put next to RoCE. Needs a kernel address (a topology's `kernel_ip`).
    TcpServer {
        /// Address to listen on.
        #[arg(long, default_value = "0.0.0.0:5201")]
        listen: std::net::SocketAddr,
        /// Stop after this many seconds (default: run until Ctrl-C).
        #[arg(long)]
        duration: Option<f64>,
        #[command(flatten)]
        out: TcpCommon,
    },
    /// Send kernel TCP as fast as it goes to a `tcp-server`, marked with
    /// `--dscp` (0: a lossy priority), reporting the rate and the kernel's
    /// retransmissions.
    TcpClient {
        /// Server address and port.
        #[arg(long)]
        dst: std::net::SocketAddr,
        /// Parallel connections.
        #[arg(long, default_value_t = 1)]
        streams: usize,
        /// DSCP of the segments.
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=63))]
        dscp: u8,
        /// Seconds to run.
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        #[command(flatten)]
        out: TcpCommon,
    },
    /// Build RoCE v1/v2 frames from flags (valid ICRC and IPv4 checksum)
    /// and write them as hex or a pcap file.
    #[command(after_help = FRAME_EXAMPLES)]
    Frame(Box<FrameArgs>),
    /// Decode RoCE frames from a pcap file or hex: every header field, the
    /// ICRC and IPv4 checksum, and what a lab switch does with each frame.
    /// Exits 1 if a frame is not RoCE, is cut short or fails a check.
    #[command(after_help = DECODE_EXAMPLES)]
    Decode {
        /// pcap or pcapng file (Ethernet link type).
        #[arg(required_unless_present = "hex", conflicts_with = "hex")]
        file: Option<PathBuf>,
        /// One frame in hex instead of a file (separators `:`, `-` and
        /// spaces are ignored).
        #[arg(long)]
        hex: Option<String>,
        /// One JSON object a frame instead of text.
        #[arg(long)]
        json: bool,
        /// Port trust of the switch: dscp or pcp (default: pcp for RoCE
        /// v1, which has no DSCP; dscp, the lab's, for v2).
        #[arg(long, value_parser = parse_trust)]
        trust: Option<Trust>,
        /// Leave out the switch.
        #[arg(long)]
        no_switch: bool,
    },
}

const FRAME_EXAMPLES: &str = "Examples:
  roceperf frame --opcode RDMA_WRITE_ONLY --qpn 0x11 --psn 5 --payload-len 64 --hex
  roceperf frame --opcode SEND_ONLY --src-ip fd00::1 --dst-ip fd00::2 --pcap send6.pcap
  roceperf frame --roce v1 --vlan 100 --pcp 3 --opcode ACKNOWLEDGE --msn 7 --hex
  roceperf frame --opcode CNP --dscp 48 --qpn 0x123 --pcap cnp.pcap
  roceperf frame --opcode RDMA_WRITE_FIRST --payload-len 1024 --count 8 --pcap burst.pcap

Opcodes by IBTA name (RC unless prefixed UC_: SEND_FIRST .. SEND_ONLY_WITH_IMMEDIATE,
RDMA_WRITE_FIRST .. RDMA_WRITE_ONLY_WITH_IMMEDIATE, RDMA_READ_REQUEST,
RDMA_READ_RESPONSE_FIRST/MIDDLE/LAST/ONLY, ACKNOWLEDGE, CNP) or number (0x0a).
RETH (--va/--rkey/--dma-len), AETH (--syndrome/--msn) and ImmDt (--imm) go where the
opcode carries them; giving one the opcode does not carry is an error.";

const DECODE_EXAMPLES: &str = "Examples:
  roceperf decode capture.pcap
  roceperf decode --json burst.pcap
  roceperf decode --hex \"$(roceperf frame --opcode SEND_ONLY --payload-len 8 --hex)\"
  roceperf decode --trust pcp --hex 02000000000202000000000181006064...";

#[derive(Args)]
struct FrameArgs {
    /// RoCE version: v2 (IP/UDP 4791) or v1 (EtherType 0x8915 + GRH).
    #[arg(long, default_value = "v2", value_parser = parse_version)]
    roce: RoceVersion,
    /// Source MAC.
    #[arg(long, default_value = "02:00:00:00:00:01", value_parser = parse_mac_arg)]
    src_mac: [u8; 6],
    /// Destination MAC.
    #[arg(long, default_value = "02:00:00:00:00:02", value_parser = parse_mac_arg)]
    dst_mac: [u8; 6],
    /// 802.1Q VLAN id (tags the frame).
    #[arg(long, value_parser = clap::value_parser!(u16).range(0..=4095))]
    vlan: Option<u16>,
    /// 802.1Q priority (tags the frame, VLAN 0 unless --vlan).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=7))]
    pcp: Option<u8>,
    /// Source IPv4 or IPv6 address (v1: the SGID, IPv4 as ::ffff:a.b.c.d).
    #[arg(long, default_value = "10.0.0.1")]
    src_ip: IpAddr,
    /// Destination address, the same family.
    #[arg(long, default_value = "10.0.0.2")]
    dst_ip: IpAddr,
    /// DSCP.
    #[arg(long, default_value_t = 26, value_parser = clap::value_parser!(u8).range(0..=63))]
    dscp: u8,
    /// ECN codepoint: not-ect, ect0, ect1 or ce.
    #[arg(long, default_value = "ect0", value_parser = parse_ecn)]
    ecn: Ecn,
    /// TTL / hop limit.
    #[arg(long, default_value_t = 64)]
    ttl: u8,
    /// IPv6 / GRH flow label (20 bits).
    #[arg(long, default_value = "0", value_parser = parse_u32)]
    flow_label: u32,
    /// UDP source port (v2).
    #[arg(long, default_value = "0xc000", value_parser = parse_u16)]
    sport: u16,
    /// BTH opcode, by IBTA name or number.
    #[arg(long, default_value = "SEND_ONLY", value_parser = parse_opcode_arg)]
    opcode: Opcode,
    /// Destination QP number.
    #[arg(long, default_value = "0x12", value_parser = parse_u32)]
    qpn: u32,
    /// Packet sequence number (of the first frame with --count).
    #[arg(long, default_value = "0", value_parser = parse_u32)]
    psn: u32,
    /// Set AckReq.
    #[arg(long)]
    ack_req: bool,
    /// Set the solicited event bit.
    #[arg(long)]
    solicited: bool,
    /// Set MigReq.
    #[arg(long)]
    migreq: bool,
    /// Set FECN.
    #[arg(long)]
    fecn: bool,
    /// Set BECN (a CNP always has it, R-ROCE-5).
    #[arg(long)]
    becn: bool,
    /// Partition key.
    #[arg(long, default_value = "0xffff", value_parser = parse_u16)]
    pkey: u16,
    /// RETH virtual address (default 0 when the opcode carries a RETH).
    #[arg(long, value_parser = parse_u64)]
    va: Option<u64>,
    /// RETH R_Key (default 0).
    #[arg(long, value_parser = parse_u32)]
    rkey: Option<u32>,
    /// RETH DMA length (default: the payload length).
    #[arg(long, value_parser = parse_u32)]
    dma_len: Option<u32>,
    /// AETH syndrome (default 0x1f: ACK, no credit count).
    #[arg(long, value_parser = parse_u8)]
    syndrome: Option<u8>,
    /// AETH message sequence number (default 0).
    #[arg(long, value_parser = parse_u32)]
    msn: Option<u32>,
    /// Immediate data (opcodes "with immediate"; default 0).
    #[arg(long, value_parser = parse_u32)]
    imm: Option<u32>,
    /// Payload bytes (before the pad to 4).
    #[arg(long, default_value_t = 0)]
    payload_len: usize,
    /// Payload bytes: `counting` (00 01 02 ...) or `fill:0xAB`.
    #[arg(long, default_value = "counting", value_parser = parse_pattern)]
    payload: PayloadPattern,
    /// Frames to build; the PSN counts up from --psn.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    count: u32,
    /// Print each frame as hex, one a line.
    #[arg(long, required_unless_present = "pcap", conflicts_with = "pcap")]
    hex: bool,
    /// Write the frames to this pcap file (Wireshark opens it).
    #[arg(long)]
    pcap: Option<PathBuf>,
}

fn parse_num(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| format!("`{s}` is not a number (decimal or 0x hex)"))
}

fn parse_u64(s: &str) -> Result<u64, String> {
    parse_num(s)
}

fn parse_u32(s: &str) -> Result<u32, String> {
    u32::try_from(parse_num(s)?).map_err(|_| format!("`{s}` does not fit 32 bits"))
}

fn parse_u16(s: &str) -> Result<u16, String> {
    u16::try_from(parse_num(s)?).map_err(|_| format!("`{s}` does not fit 16 bits"))
}

fn parse_u8(s: &str) -> Result<u8, String> {
    u8::try_from(parse_num(s)?).map_err(|_| format!("`{s}` does not fit 8 bits"))
}

fn parse_version(s: &str) -> Result<RoceVersion, String> {
    match s.to_ascii_lowercase().as_str() {
        "v1" | "1" => Ok(RoceVersion::V1),
        "v2" | "2" => Ok(RoceVersion::V2),
        _ => Err(format!("`{s}`: v1 or v2")),
    }
}

fn parse_ecn(s: &str) -> Result<Ecn, String> {
    match s
        .to_ascii_lowercase()
        .replace(['-', '_', '(', ')'], "")
        .as_str()
    {
        "notect" | "0" => Ok(Ecn::NotEct),
        "ect1" | "1" => Ok(Ecn::Ect1),
        "ect0" | "2" => Ok(Ecn::Ect0),
        "ce" | "3" => Ok(Ecn::Ce),
        _ => Err(format!("`{s}`: not-ect, ect0, ect1 or ce")),
    }
}

fn parse_trust(s: &str) -> Result<Trust, String> {
    match s.to_ascii_lowercase().as_str() {
        "dscp" => Ok(Trust::Dscp),
        "pcp" => Ok(Trust::Pcp),
        _ => Err(format!("`{s}`: dscp or pcp")),
    }
}

fn parse_test(s: &str) -> Result<PerfTest, String> {
    PerfTest::parse(s).ok_or_else(|| {
        let names: Vec<_> = PerfTest::ALL.iter().map(|t| t.name()).collect();
        format!("`{s}` is not a test: {}", names.join(", "))
    })
}

fn parse_opcode_arg(s: &str) -> Result<Opcode, String> {
    parse_opcode(s).ok_or_else(|| {
        format!(
            "`{s}` is not an IBTA opcode name (SEND_ONLY, RDMA_WRITE_FIRST, CNP, ...) or number"
        )
    })
}

fn parse_pattern(s: &str) -> Result<PayloadPattern, String> {
    match s.split_once(':') {
        None if s == "counting" => Ok(PayloadPattern::Counting),
        Some(("fill", b)) => Ok(PayloadPattern::Fill(parse_u8(b)?)),
        _ => Err(format!("`{s}`: counting or fill:BYTE")),
    }
}

/// The spec the flags describe: extension headers the opcode carries get
/// their defaults; ones it does not carry are passed on for the builder to
/// refuse.
fn frame_spec(a: &FrameArgs) -> Result<FrameSpec> {
    let layout = opcode_layout(a.opcode);
    let wants =
        |f: fn(&dataplane::wire::roce_frame::OpcodeLayout) -> bool| layout.as_ref().is_some_and(f);
    let reth = (wants(|l| l.reth) || a.va.is_some() || a.rkey.is_some() || a.dma_len.is_some())
        .then(|| {
            Ok::<_, anyhow::Error>(RethRepr {
                virtual_addr: a.va.unwrap_or(0),
                rkey: a.rkey.unwrap_or(0),
                dma_len: match a.dma_len {
                    Some(l) => l,
                    None => u32::try_from(a.payload_len).context("--payload-len over 4 GiB")?,
                },
            })
        })
        .transpose()?;
    let aeth = (wants(|l| l.aeth) || a.syndrome.is_some() || a.msn.is_some()).then(|| {
        let mut r = AethRepr::ack(a.msn.unwrap_or(0));
        if let Some(s) = a.syndrome {
            r.syndrome = s;
        }
        r
    });
    let immdt = (wants(|l| l.immdt) || a.imm.is_some()).then(|| a.imm.unwrap_or(0));
    let vlan = match (a.vlan, a.pcp) {
        (None, None) => None,
        (vid, pcp) => Some(Vlan {
            vid: vid.unwrap_or(0),
            pcp: pcp.unwrap_or(0),
        }),
    };
    Ok(FrameSpec {
        version: a.roce,
        dst_mac: a.dst_mac,
        src_mac: a.src_mac,
        vlan,
        src_ip: a.src_ip,
        dst_ip: a.dst_ip,
        dscp: a.dscp,
        ecn: a.ecn,
        ttl: a.ttl,
        flow_label: a.flow_label,
        udp_src_port: if a.roce == RoceVersion::V1 {
            0
        } else {
            a.sport
        },
        opcode: a.opcode,
        dest_qp: a.qpn,
        psn: a.psn,
        ack_req: a.ack_req,
        solicited: a.solicited,
        migreq: a.migreq,
        fecn: a.fecn,
        becn: a.becn || a.opcode == Opcode::Cnp,
        pkey: a.pkey,
        reth,
        aeth,
        immdt,
        payload_len: a.payload_len,
        payload: a.payload,
    })
}

fn cmd_frame(a: &FrameArgs) -> Result<()> {
    let mut spec = frame_spec(a)?;
    let mut frames = Vec::new();
    for _ in 0..a.count {
        frames.push(spec.build().context("building the frame")?);
        spec.psn = psn_add(spec.psn, 1);
    }
    match &a.pcap {
        Some(path) => {
            write_pcap(path, &frames)?;
            eprintln!(
                "wrote {} frame(s) of {} bytes to {}",
                frames.len(),
                frames[0].len(),
                path.display()
            );
        }
        None => {
            for f in &frames {
                println!("{}", to_hex(f));
            }
        }
    }
    Ok(())
}

/// Decodes and prints every frame; false if one failed to decode or a check.
fn cmd_decode(
    frames: &[Vec<u8>],
    json: bool,
    trust: Option<Trust>,
    no_switch: bool,
) -> Result<bool> {
    let mut all_good = true;
    for (i, f) in frames.iter().enumerate() {
        let d = match decode(f) {
            Ok(d) => d,
            Err(e) => {
                all_good = false;
                if json {
                    println!(
                        "{}",
                        serde_json::json!({ "frame": i, "error": e.to_string(), "len": f.len() })
                    );
                } else {
                    println!("frame {i}: {} bytes: {e}", f.len());
                }
                continue;
            }
        };
        let ip_ok = match d.net {
            dataplane::wire::roce_frame::NetHeader::Ipv4 { checksum, .. } => checksum.ok(),
            _ => true,
        };
        all_good &= d.icrc.ok() && ip_ok;
        let verdict = if no_switch {
            None
        } else {
            let t = trust.unwrap_or_else(|| default_trust(&d));
            Some(
                lab::perf::verdict::run(&f[..d.frame_len], &d, t)
                    .context("running the frame through the switch")?,
            )
        };
        if json {
            println!("{}", to_json(i, &d, verdict.as_ref()));
        } else {
            if i > 0 {
                println!();
            }
            println!("frame {i}: RoCE {:?}, {} bytes", d.spec.version, f.len());
            for l in describe(&d) {
                println!("  {l}");
            }
            if let Some(v) = &verdict {
                for l in describe_verdict(v) {
                    println!("  {l}");
                }
            }
        }
    }
    Ok(all_good)
}

/// The closing table a perftest client prints: latency percentiles, or
/// peak and average bandwidth and message rate.
fn print_perftest_summary<P: lab::port::Port>(
    agent: &Agent<P>,
    test: PerfTest,
    size: u64,
    run: &Report,
    peak_gbps: f64,
    json: bool,
) {
    if let Some(lat) = agent.latency() {
        if json {
            println!(
                "{}",
                serde_json::json!({ "kind": "latency", "test": test.to_string(), "latency": lat })
            );
        } else {
            println!("{test}: post to completion (a round trip), one message in flight");
            for l in lat.table() {
                println!("{l}");
            }
            if let Some(e) = &lat.error {
                println!("stopped early: {e}");
            }
        }
        return;
    }
    let average = test.data_gbps(run);
    let b = BandwidthSummary {
        bytes: size,
        iterations: run.tx_messages,
        bw_peak_gbps: peak_gbps.max(average),
        bw_average_gbps: average,
        msg_rate_mpps: run.msg_rate_mps,
    };
    if json {
        println!(
            "{}",
            serde_json::json!({ "kind": "bandwidth", "test": test.to_string(), "bandwidth": b })
        );
    } else {
        println!("{test}:");
        for l in b.table() {
            println!("{l}");
        }
    }
}

/// The peer and the QPs to it, for `client` and `nvmf-host`.
#[derive(Args)]
struct PeerArgs {
    /// The peer's (server's, NVMe-oF target's) IPv4 address.
    #[arg(long)]
    dst_ip: Ipv4Addr,
    /// The peer's (or the switch next hop's) MAC.
    #[arg(long, value_parser = parse_mac_arg)]
    dst_mac: [u8; 6],
    /// Number of QPs (latency tests: 1; NVMe-oF: the I/O queues).
    #[arg(long, default_value_t = 1)]
    qps: u32,
    /// Index of the first QP (QPNs client 0x100+i → server 0x200+i);
    /// give each client sharing a server its own range.
    #[arg(long, default_value_t = 0)]
    first_qp: u32,
    /// Retransmission timeout exponent, as perftest's `--qp-timeout`
    /// and ibv_modify_qp: 4.096 µs × 2^N; 0 waits forever (for a
    /// client whose peer never answers). Default 17 (0.54 s), not
    /// perftest's 14 (67 ms): see `lab::perf::LAB_QP_TIMEOUT`.
    #[arg(long, default_value_t = lab::perf::LAB_QP_TIMEOUT, value_parser = clap::value_parser!(u8).range(0..=31))]
    qp_timeout: u8,
    /// Fixed rate: turn DCQCN off.
    #[arg(long)]
    no_dcqcn: bool,
}

/// What `tcp-server` and `tcp-client` share.
#[derive(Args)]
struct TcpCommon {
    /// Open the sockets inside this named network namespace.
    #[arg(long)]
    netns: Option<String>,
    /// Print a report every this many seconds.
    #[arg(long)]
    interval: Option<f64>,
    /// JSON lines instead of text.
    #[arg(long)]
    json: bool,
}

/// `tcp-server` / `tcp-client`: kernel TCP next to RoCE.
fn cmd_tcp(cmd: Cmd) -> Result<()> {
    let stop = lab::signal::stop_flag();
    let print = move |json: bool| {
        move |r: &TcpReport| {
            if json {
                println!("{}", serde_json::to_string(r).unwrap_or_default());
            } else {
                println!("{}", r.line());
            }
        }
    };
    let in_ns =
        |netns: Option<String>, f: Box<dyn FnOnce() -> Result<TcpReport> + Send>| match netns {
            Some(ns) => dataplane::port::netns::run_in(&ns, f)
                .with_context(|| format!("entering network namespace {ns}"))?,
            None => f(),
        };
    let (summary, json) = match cmd {
        Cmd::TcpServer {
            listen,
            duration,
            out:
                TcpCommon {
                    netns,
                    interval,
                    json,
                },
        } => {
            let d = duration.map(|d| seconds(d, "duration")).transpose()?;
            let i = interval.map(|i| seconds(i, "interval")).transpose()?;
            let r = in_ns(
                netns,
                Box::new(move || {
                    let l = std::net::TcpListener::bind(listen)
                        .with_context(|| format!("listening on {listen}"))?;
                    Ok(tcp::serve(l, d, i, stop, print(json))?)
                }),
            )?;
            (r, json)
        }
        Cmd::TcpClient {
            dst,
            streams,
            dscp,
            duration,
            out:
                TcpCommon {
                    netns,
                    interval,
                    json,
                },
        } => {
            let d = seconds(duration, "duration")?;
            let i = interval.map(|i| seconds(i, "interval")).transpose()?;
            let r = in_ns(
                netns,
                Box::new(move || Ok(tcp::send(dst, streams, dscp, d, i, stop, print(json))?)),
            )?;
            (r, json)
        }
        _ => bail!("not a TCP command"),
    };
    print(json)(&summary);
    Ok(())
}

#[derive(Args)]
struct Common {
    /// Interface to open (a veth end without kernel IP).
    #[arg(long)]
    iface: String,
    /// Open the interface inside this named network namespace.
    #[arg(long)]
    netns: Option<String>,
    /// Our MAC address.
    #[arg(long, value_parser = parse_mac_arg)]
    mac: [u8; 6],
    /// Our IPv4 address (carried in frames only, never configured).
    #[arg(long)]
    ip: Ipv4Addr,
    /// Emulated line rate (pacing, serialisation, pause quanta), e.g. 1G.
    #[arg(long, default_value = "1G", value_parser = parse_rate_arg)]
    rate: u64,
    /// RoCE path MTU: payload bytes per packet (default: the largest IB
    /// MTU of 256, 512, 1024, 2048 and 4096 bytes whose frames fit the
    /// interface MTU, as perftest takes the port's active MTU: 4096 on a
    /// 9000-byte link, 1024 on a 1500-byte one).
    #[arg(long)]
    mtu: Option<usize>,
    /// Priority data travels on (the PFC class honoured).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=7))]
    priority: u8,
    /// DSCP of data packets.
    #[arg(long, default_value_t = 26, value_parser = clap::value_parser!(u8).range(0..=63))]
    dscp: u8,
    /// Send data as ECN-capable (ECT(0)), so switches can mark CE.
    #[arg(long)]
    ecn: bool,
    /// DSCP of CNPs.
    #[arg(long, default_value_t = 48, value_parser = clap::value_parser!(u8).range(0..=63))]
    cnp_dscp: u8,
    /// Priority of CNPs.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u8).range(0..=7))]
    cnp_priority: u8,
    /// RoCE version: 2 (IPv4/UDP 4791, routable, priority by DSCP) or 1
    /// (EtherType 0x8915, GRH + BTH, one L2 segment, priority by the VLAN
    /// PCP: needs --vlan).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=2))]
    roce_version: u8,
    /// Tag every frame with this VLAN id, the PCP being the frame's
    /// priority (--priority for data, --cnp-priority for CNPs).
    #[arg(long, value_parser = clap::value_parser!(u16).range(0..=4095))]
    vlan: Option<u16>,
    /// DCBX (LLDP with the 802.1Qaz TLVs): `willing` advertises our RoCE
    /// priority and adopts the switch's PFC and application priority, as
    /// NICs ship; `on` advertises only (a mismatch shows at the switch);
    /// `off` sends no LLDP.
    #[arg(long, default_value = "willing")]
    dcbx: DcbxMode,
    /// Print a report every this many seconds.
    #[arg(long)]
    interval: Option<f64>,
    /// JSON lines instead of a table.
    #[arg(long)]
    json: bool,
}

fn parse_mac_arg(s: &str) -> Result<[u8; 6], String> {
    parse_mac(s).map_err(|e| e.to_string())
}

fn parse_rate_arg(s: &str) -> Result<u64, String> {
    parse_rate_bps(s).map_err(|e| e.to_string())
}

fn seconds(s: f64, what: &str) -> Result<Duration> {
    if !(s.is_finite() && s > 0.0) {
        bail!("--{what} must be a positive number of seconds, got {s}");
    }
    Ok(Duration::from_secs_f64(s))
}

fn main() -> Result<()> {
    cli_common::restore_pipe_manners();
    cli_common::handle_doc_flags::<Cli>();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let mut serve_peers = false;
    let (common, role, duration, dcqcn) = match cli.cmd {
        Cmd::Frame(a) => return cmd_frame(&a),
        cmd @ (Cmd::TcpServer { .. } | Cmd::TcpClient { .. }) => return cmd_tcp(cmd),
        Cmd::Decode {
            file,
            hex,
            json,
            trust,
            no_switch,
        } => {
            let frames = match (&file, &hex) {
                (_, Some(h)) => vec![parse_hex(h).context("--hex")?],
                (Some(p), None) => read_pcap(p)?,
                (None, None) => bail!("give a pcap file or --hex"),
            };
            if !cmd_decode(&frames, json, trust, no_switch)? {
                std::process::exit(1);
            }
            return Ok(());
        }
        Cmd::Server { common, duration } => {
            let d = duration.map(|d| seconds(d, "duration")).transpose()?;
            (common, Role::Server, d, true)
        }
        Cmd::NvmfTarget { common, duration } => {
            let d = duration.map(|d| seconds(d, "duration")).transpose()?;
            (common, Role::NvmfTarget, d, true)
        }
        Cmd::NvmfHost {
            common,
            peer:
                PeerArgs {
                    dst_ip,
                    dst_mac,
                    qps,
                    first_qp,
                    qp_timeout,
                    no_dcqcn,
                },
            iodepth,
            bs,
            rwmixread,
            number_ios,
            duration,
            seed,
        } => {
            let nvmf = NvmfConfig {
                iodepth,
                bs,
                rwmixread,
                ios: number_ios,
                seed,
            };
            nvmf.validate()?;
            let role = Role::NvmfHost {
                nvmf,
                qps,
                dst_ip,
                dst_mac,
                first_qp,
                qp_timeout,
            };
            (
                common,
                role,
                Some(seconds(duration, "duration")?),
                !no_dcqcn,
            )
        }
        Cmd::Client {
            common,
            peer:
                PeerArgs {
                    dst_ip,
                    dst_mac,
                    qps,
                    first_qp,
                    qp_timeout,
                    no_dcqcn,
                },
            test,
            size,
            duration,
            messages,
            serve,
        } => {
            serve_peers = serve;
            if qps == 0 || first_qp.saturating_add(qps) > MAX_QPS {
                bail!("--first-qp + --qps must be 1..={MAX_QPS}");
            }
            let role = Role::Client {
                test,
                qps,
                dst_ip,
                dst_mac,
                message_bytes: size.unwrap_or(test.default_size_bytes()),
                messages,
                first_qp,
                qp_timeout,
            };
            (
                common,
                role,
                Some(seconds(duration, "duration")?),
                !no_dcqcn,
            )
        }
    };
    let interval = common
        .interval
        .map(|i| seconds(i, "interval"))
        .transpose()?;
    if common.mtu.is_some_and(|m| m == 0 || m > 9000) {
        bail!("--mtu must be 1..=9000");
    }
    let roce_version = if common.roce_version == 1 {
        if common.vlan.is_none() {
            bail!(
                "--roce-version 1 carries the priority in the VLAN PCP only: give --vlan VID \
                 (and a switch port in that VLAN)"
            );
        }
        RoceVersion::V1
    } else {
        RoceVersion::V2
    };
    let port = match &common.netns {
        Some(ns) => AfPacketPort::open_in_netns(ns, &common.iface),
        None => AfPacketPort::open(&common.iface),
    }
    .with_context(|| format!("opening port on {}", common.iface))?;
    // All of the largest frame after Ethernet must fit the interface MTU.
    let iface_mtu = port.mtu_bytes().context("reading the interface MTU")?;
    let fits = |mtu: usize| largest_packet_len(roce_version, mtu) as u32 <= iface_mtu;
    let mtu = match common.mtu {
        Some(mtu) if !fits(mtu) => bail!(
            "--mtu {mtu} makes frames of {} bytes after Ethernet, but {} has MTU {iface_mtu}: \
             lower --mtu or raise the interface MTU",
            largest_packet_len(roce_version, mtu),
            common.iface
        ),
        Some(mtu) => mtu,
        None => match [4096, 2048, 1024, 512, 256].into_iter().find(|&m| fits(m)) {
            Some(m) => m,
            None => bail!(
                "{} has MTU {iface_mtu}: too small for a 256-byte RoCE MTU",
                common.iface
            ),
        },
    };
    let cfg = RnicConfig {
        mac: common.mac,
        ip: common.ip,
        line_rate_bps: common.rate,
        mtu_bytes: mtu,
        data_dscp: common.dscp,
        data_priority: common.priority,
        cnp_dscp: common.cnp_dscp,
        cnp_priority: common.cnp_priority,
        ecn_capable: common.ecn,
        dcqcn: dcqcn.then(|| DcqcnConfig::scaled(common.rate)),
        cnp_interval_ns: scaled_cnp_interval(common.rate).as_nanos(),
        roce_version,
        vlan_id: common.vlan,
        pacing_burst_ns: lab::perf::pacing_burst(common.rate).as_nanos() as u64,
        ..RnicConfig::default()
    };
    // Reopened with ring slots for our largest frame, not the interface's.
    drop(port);
    let pcfg = lab::perf::port_config(roce_version, mtu, common.rate);
    let port = match &common.netns {
        Some(ns) => AfPacketPort::open_in_netns_with(ns, &common.iface, pcfg),
        None => AfPacketPort::open_with(&common.iface, pcfg),
    }
    .with_context(|| format!("opening port on {}", common.iface))?;
    let (role_test, role_size) = match &role {
        Role::Client {
            test,
            message_bytes,
            ..
        } => (Some(*test), Some(*message_bytes)),
        Role::Server | Role::NvmfHost { .. } | Role::NvmfTarget => (None, None),
    };
    let stop = lab::signal::stop_flag();
    // The agent stands in for NIC hardware: on a machine busy with other
    // work it should run before compilers, as the switch's dataplane does
    // (root only; otherwise it keeps its priority).
    let priority = dataplane::driver::raise_thread_priority(false);
    tracing::debug!(?priority, "agent thread priority");
    let mut agent = Agent::new(port, cfg, role).context("setting up the agent")?;
    agent.enable_dcbx(common.dcbx, None);
    agent.serve_peers(serve_peers);
    let json = common.json;
    if !json {
        println!("{}", Report::table_header());
    }
    let print = |r: &Report| {
        if json {
            println!("{}", r.json_line());
        } else {
            println!("{}", r.table_row());
        }
    };
    let test = role_test.unwrap_or_default();
    let mut peak_gbps: Option<f64> = None;
    let summary = agent
        .run(duration, interval, stop, |r| {
            peak_gbps = Some(peak_gbps.unwrap_or(0.0).max(test.data_gbps(r)));
            print(r)
        })
        .context("running the agent")?;
    print(&summary);
    if !json {
        // The JSON summary carries them as "counters".
        println!("counters (Linux RDMA names, over the run):");
        for l in summary.counter_lines(true) {
            println!("{l}");
        }
    }
    if let Some(n) = agent.nvmf(summary.end_s - summary.start_s) {
        if json {
            println!("{}", serde_json::json!({ "kind": "nvmf", "nvmf": n }));
        } else {
            for l in n.fio_lines() {
                println!("{l}");
            }
        }
    }
    if let Some(size) = role_size {
        print_perftest_summary(
            &agent,
            test,
            size,
            &summary,
            peak_gbps.unwrap_or(test.data_gbps(&summary)),
            json,
        );
    }
    if let Some(d) = agent.dcbx_status() {
        if json {
            println!("{}", serde_json::json!({ "kind": "dcbx", "dcbx": d }));
        } else {
            println!(
                "dcbx: {} | peer {} | RoCE on priority {} DSCP {}{} | PFC enabled {:#04x} | mismatch {} | lldp tx {} rx {}",
                d.mode,
                d.peer.as_deref().unwrap_or("none"),
                d.operational.priority,
                d.operational.dscp,
                if d.adopted {
                    format!(
                        " (adopted from the peer; ours was priority {} DSCP {})",
                        d.admin.priority, d.admin.dscp
                    )
                } else {
                    String::new()
                },
                d.pfc_enable,
                d.mismatch,
                d.lldp_tx,
                d.lldp_rx
            );
        }
    }
    // What the kernel lost in the receive ring lands in the port's stats.
    let _ = agent.port_mut().take_rx_lost();
    let ps = agent.port().stats();
    let ast = agent.stats();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "kind": "port",
                "rx_frames": ps.rx_frames,
                "tx_frames": ps.tx_frames,
                "tx_busy": ps.tx_busy,
                "rx_vlan_restored": ps.rx_vlan_restored,
                "rx_outgoing_dropped": ps.rx_outgoing_dropped,
                "rx_kernel_drops": ps.rx_kernel_drops,
                "rx_truncated": ps.rx_truncated,
                "tx_oversize": ps.tx_oversize,
                "rx_not_for_us": ast.rx_not_for_us,
                "rx_other": ast.rx_other,
                "qps_learned": ast.qps_learned,
                "tx_deferred": ast.tx_deferred,
            })
        );
    } else {
        println!(
            "port: rx {} tx {} frames, kernel busy {}x, deferred {}, lost in the kernel's ring {}, truncated {}, oversize {} | other frames {} not-for-us {} | QPs learned {}",
            ps.rx_frames,
            ps.tx_frames,
            ps.tx_busy,
            ast.tx_deferred,
            ps.rx_kernel_drops,
            ps.rx_truncated,
            ps.tx_oversize,
            ast.rx_other,
            ast.rx_not_for_us,
            ast.qps_learned
        );
    }
    Ok(())
}
