//! `agentbench`: what one RoCE host agent (the `roceperf` RNIC on a
//! ring-based `AF_PACKET` port) sends on its own, with nothing but a veth
//! between it and a receiving agent.
//!
//! ```text
//!  rl-ab<pid>-a [e0] ===== veth, MTU 9000 ===== [e0] rl-ab<pid>-b
//!   client agent (RDMA WRITE stream)             server agent
//! ```
//!
//! For each emulated line rate (`--rates`, default 1G and 10G) and each
//! trial, a client thread streams 64 KiB WRITEs on one QP at that rate for
//! `--seconds` to a server thread, both [`lab::perf::Agent`]s as `roceperf`
//! runs them (4 KiB RoCE MTU, the lab's pacing burst and port rings,
//! DCQCN off). Prints
//! the payload rate the client sent and the server received, as a share of
//! the line's payload rate, with the retransmissions (a lossless veth should
//! need none), alternating the rates trial by trial so each sees the same
//! background load (packet-io.md: compare ratios from one run). This is the
//! ceiling a `rocelab` sender has; the incast's senders share the machine
//! with the switch and the receiver. Needs root; the namespaces are removed
//! at the end, on error and on Ctrl-C.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use dataplane::rnic::RnicConfig;
use dataplane::rnic::frame::RoceVersion;
use lab::labctl::sys;
use lab::perf::workload::PerfTest;
use lab::perf::{Agent, LAB_QP_TIMEOUT, Role, pacing_burst};
use lab::port::{AfPacketPort, Port};

#[derive(Parser)]
#[command(
    name = "agentbench",
    about = "Rate one RoCE host agent reaches on its own over a veth"
)]
struct Cli {
    /// Emulated line rates, e.g. 1G,10G.
    #[arg(long, value_delimiter = ',', default_value = "1G,10G")]
    rates: Vec<String>,
    /// Seconds per trial.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Trials per rate (the median is reported).
    #[arg(long, default_value_t = 3)]
    trials: usize,
    /// RoCE MTU, payload bytes per packet.
    #[arg(long, default_value_t = 4096)]
    mtu: usize,
}

const C_MAC: [u8; 6] = [2, 0, 0, 0, 0xab, 1];
const S_MAC: [u8; 6] = [2, 0, 0, 0, 0xab, 2];
const C_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const S_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

/// Two namespaces joined by a veth; deleted on drop.
struct Pair {
    ns: [String; 2],
}

impl Drop for Pair {
    fn drop(&mut self) {
        for n in &self.ns {
            let _ = sys::ip(&["netns", "del", n]);
        }
    }
}

impl Pair {
    fn create() -> Result<Pair> {
        let tag = format!("rl-ab{}", std::process::id());
        let pair = Pair {
            ns: [format!("{tag}-a"), format!("{tag}-b")],
        };
        for n in &pair.ns {
            sys::ip(&["netns", "add", n])?;
        }
        sys::ip(&[
            "link",
            "add",
            "name",
            "e0",
            "netns",
            &pair.ns[0],
            "mtu",
            "9000",
            "type",
            "veth",
            "peer",
            "name",
            "e0",
            "netns",
            &pair.ns[1],
            "mtu",
            "9000",
        ])?;
        for n in &pair.ns {
            sys::ip(&["-n", n, "link", "set", "e0", "up"])?;
        }
        for n in &pair.ns {
            sys::wait_oper_up(n, "e0", Duration::from_secs(5))?;
        }
        Ok(pair)
    }
}

/// One trial's figures: Gb/s of payload sent and received, packets sent
/// again.
struct Trial {
    tx_gbps: f64,
    rx_gbps: f64,
    retx_packets: u64,
    /// Frames the kernel dropped because the server's receive ring was full.
    ring_lost: u64,
}

fn rnic(mac: [u8; 6], ip: Ipv4Addr, rate_bps: u64, mtu: usize) -> RnicConfig {
    RnicConfig {
        mac,
        ip,
        line_rate_bps: rate_bps,
        mtu_bytes: mtu,
        dcqcn: None,
        pacing_burst_ns: pacing_burst(rate_bps).as_nanos() as u64,
        ..RnicConfig::default()
    }
}

fn trial(pair: &Pair, rate_bps: u64, cli: &Cli, stop: &AtomicBool) -> Result<Trial> {
    let pcfg = lab::perf::port_config(RoceVersion::V2, cli.mtu, rate_bps);
    let cport = AfPacketPort::open_in_netns_with(&pair.ns[0], "e0", pcfg)?;
    let sport = AfPacketPort::open_in_netns_with(&pair.ns[1], "e0", pcfg)?;
    let server_stop = Arc::new(AtomicBool::new(false));
    let ss = server_stop.clone();
    let mtu = cli.mtu;
    let server = std::thread::spawn(move || -> Result<(lab::perf::report::Report, u64)> {
        let mut s = Agent::new(sport, rnic(S_MAC, S_IP, rate_bps, mtu), Role::Server)?;
        let r = s.run(None, None, &ss, |_| {})?;
        s.port_mut().take_rx_lost()?;
        Ok((r, s.port().stats().rx_kernel_drops))
    });
    let role = Role::Client {
        test: PerfTest::WriteBw,
        qps: 1,
        dst_ip: S_IP,
        dst_mac: S_MAC,
        message_bytes: 64 * 1024,
        messages: None,
        first_qp: 0,
        qp_timeout: LAB_QP_TIMEOUT,
    };
    let mut c = Agent::new(cport, rnic(C_MAC, C_IP, rate_bps, mtu), role)?;
    let cr = c.run(
        Some(Duration::from_secs_f64(cli.seconds)),
        None,
        stop,
        |_| {},
    )?;
    std::thread::sleep(Duration::from_millis(200));
    server_stop.store(true, Ordering::Relaxed);
    let (sr, ring_lost) = server
        .join()
        .map_err(|_| anyhow::anyhow!("server thread panicked"))??;
    // The client's span: the server's also holds its idle start and end.
    let span = (cr.end_s - cr.start_s).max(1e-9);
    Ok(Trial {
        tx_gbps: cr.tx_gbps,
        rx_gbps: sr.rx_bytes as f64 * 8.0 / span / 1e9,
        retx_packets: cr.retx_packets,
        ring_lost,
    })
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let rates: Vec<(String, u64)> = cli
        .rates
        .iter()
        .map(|r| Ok((r.clone(), lab::units::parse_rate_bps(r).context("--rates")?)))
        .collect::<Result<_>>()?;
    let stop = lab::signal::stop_flag();
    // SAFETY: setpriority on the calling thread with plain integers; the
    // agents' threads inherit it, as roceperf raises its own.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, dataplane::driver::DATAPLANE_NICE) };
    let pair = Pair::create().context("building the namespaces")?;
    let mut results: Vec<Vec<Trial>> = rates.iter().map(|_| Vec::new()).collect();
    for _ in 0..cli.trials.max(1) {
        for (i, (_, bps)) in rates.iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                anyhow::bail!("interrupted");
            }
            results[i].push(trial(&pair, *bps, &cli, stop)?);
        }
    }
    drop(pair);
    // Payload share of the wire for 64 KiB WRITEs in MTU-sized packets.
    let payload = lab::scenario::payload_efficiency(cli.mtu, 64 * 1024);
    println!(
        "{:>6} {:>10} {:>10} {:>10} {:>8} {:>10}",
        "rate", "tx_gbps", "rx_gbps", "x_payload", "retx", "ring_lost"
    );
    for ((name, bps), mut trials) in rates.iter().zip(results) {
        trials.sort_by(|a, b| a.rx_gbps.total_cmp(&b.rx_gbps));
        let m = &trials[trials.len() / 2];
        let line_payload_gbps = *bps as f64 * payload / 1e9;
        println!(
            "{:>6} {:>10.3} {:>10.3} {:>10.2} {:>8} {:>10}",
            name,
            m.tx_gbps,
            m.rx_gbps,
            m.rx_gbps / line_payload_gbps,
            m.retx_packets,
            m.ring_lost
        );
    }
    Ok(())
}
