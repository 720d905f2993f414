//! `roceperf`: a RoCEv2 host agent on a raw `AF_PACKET` socket, in the style
//! of ib_write_bw. The server receives RC RDMA WRITE streams and answers CE
//! marks with CNPs; the client streams WRITEs on N QPs with DCQCN rate
//! control, honouring PFC. Both report bandwidth, message rate, loss (PSN
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

use std::net::Ipv4Addr;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use dataplane::rnic::RnicConfig;
use dataplane::rnic::dcqcn::DcqcnConfig;
use dataplane::rnic::frame::RoceVersion;
use lab::perf::report::Report;
use lab::perf::{Agent, MAX_QPS, Role};
use lab::port::AfPacketPort;
use lab::units::{parse_mac, parse_rate_bps};

#[derive(Parser)]
#[command(
    name = "roceperf",
    version,
    about = "RoCEv2 RDMA WRITE bandwidth agent on raw frames"
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
    /// Stream RDMA WRITEs to a server.
    Client {
        #[command(flatten)]
        common: Common,
        /// Server IPv4 address.
        #[arg(long)]
        dst_ip: Ipv4Addr,
        /// Server (or switch next-hop) MAC.
        #[arg(long, value_parser = parse_mac_arg)]
        dst_mac: [u8; 6],
        /// Number of QPs.
        #[arg(long, default_value_t = 1)]
        qps: u32,
        /// WRITE message size in bytes.
        #[arg(long, default_value_t = 65536)]
        size: u64,
        /// Seconds to run.
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        /// Messages per QP (default: as many as fit the duration).
        #[arg(long)]
        messages: Option<u64>,
        /// Fixed rate: turn DCQCN off.
        #[arg(long)]
        no_dcqcn: bool,
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
    },
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
    /// RoCE path MTU: payload bytes per packet.
    #[arg(long, default_value_t = 1024)]
    mtu: usize,
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
    let (common, role, duration, dcqcn) = match cli.cmd {
        Cmd::Server { common, duration } => {
            let d = duration.map(|d| seconds(d, "duration")).transpose()?;
            (common, Role::Server, d, true)
        }
        Cmd::Client {
            common,
            dst_ip,
            dst_mac,
            qps,
            size,
            duration,
            messages,
            no_dcqcn,
            first_qp,
            qp_timeout,
        } => {
            if qps == 0 || first_qp.saturating_add(qps) > MAX_QPS {
                bail!("--first-qp + --qps must be 1..={MAX_QPS}");
            }
            let role = Role::Client {
                qps,
                dst_ip,
                dst_mac,
                message_bytes: size,
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
    if common.mtu == 0 || common.mtu > 9000 {
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
    let cfg = RnicConfig {
        mac: common.mac,
        ip: common.ip,
        line_rate_bps: common.rate,
        mtu_bytes: common.mtu,
        data_dscp: common.dscp,
        data_priority: common.priority,
        cnp_dscp: common.cnp_dscp,
        cnp_priority: common.cnp_priority,
        ecn_capable: common.ecn,
        dcqcn: dcqcn.then(|| DcqcnConfig::scaled(common.rate)),
        roce_version,
        vlan_id: common.vlan,
        ..RnicConfig::default()
    };
    let port = match &common.netns {
        Some(ns) => AfPacketPort::open_in_netns(ns, &common.iface),
        None => AfPacketPort::open(&common.iface),
    }
    .with_context(|| format!("opening port on {}", common.iface))?;
    // Largest frame: Eth 14 (+ 4 tag) + IPv4 20 + UDP 8 (v1: GRH 40) + BTH 12
    // + RETH 16 + payload + pad 3 + ICRC 4; all of it after Ethernet must
    // fit the interface MTU.
    let iface_mtu = port.mtu_bytes().context("reading the interface MTU")?;
    let network = match roce_version {
        RoceVersion::V1 => 40,
        RoceVersion::V2 => 20 + 8,
    };
    let need = common.mtu as u32 + network + 12 + 16 + 3 + 4;
    if need > iface_mtu {
        bail!(
            "--mtu {} makes frames of {need} bytes after Ethernet, but {} has MTU {iface_mtu}: \
             lower --mtu or raise the interface MTU",
            common.mtu,
            common.iface
        );
    }
    let stop = lab::signal::stop_flag();
    let mut agent = Agent::new(port, cfg, role).context("setting up the agent")?;
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
    let summary = agent
        .run(duration, interval, stop, print)
        .context("running the agent")?;
    print(&summary);
    if !json {
        // The JSON summary carries them as "counters".
        println!("counters (Linux RDMA names, over the run):");
        for l in summary.counter_lines(true) {
            println!("{l}");
        }
    }
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
                "rx_not_for_us": ast.rx_not_for_us,
                "rx_other": ast.rx_other,
                "qps_learned": ast.qps_learned,
                "tx_deferred": ast.tx_deferred,
            })
        );
    } else {
        println!(
            "port: rx {} tx {} frames, kernel busy {}x, deferred {} | other frames {} not-for-us {} | QPs learned {}",
            ps.rx_frames,
            ps.tx_frames,
            ps.tx_busy,
            ast.tx_deferred,
            ast.rx_other,
            ast.rx_not_for_us,
            ast.qps_learned
        );
    }
    Ok(())
}
