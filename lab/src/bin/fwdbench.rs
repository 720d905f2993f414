//! `fwdbench`: forwarding rate and latency between two namespaces through
//! `roceswitch`, a Linux bridge and a bare AF_PACKET relay, measured in one
//! run so the ratios compare like with like (packet-io.md: the machine is
//! shared, compare ratios from one run, not absolutes).
//!
//! ```text
//!  rl-fb<pid>-src [s0] ==== [m0] rl-fb<pid>-mid [m1] ==== [d0] rl-fb<pid>-dst
//!   generator + prober     device under test        sink + probe receiver
//! ```
//!
//! The device in `mid` is, in turn: `roceswitch` (found next to this
//! executable or on PATH, routing 10.0.2.1/32 out of port 1, programmed over
//! P4Runtime), a Linux bridge `br0` over m0 and m1, and a one-thread relay
//! (recv batch on m0, send batch on m1, as `relaybench`).
//!
//! For each device and frame size (bytes without FCS): `--trials` load
//! phases where the generator sends IPv4/UDP frames as fast as it can for
//! `--seconds` and the sink counts what arrives (offered and forwarded
//! packets/s; the median trial is reported), then a
//! latency phase of `--probes` sequential timestamped probe frames on the
//! idle path, each waited for at the sink (one-way latency in µs, p50 and
//! p99, including two AF_PACKET syscalls on each side, the same for every
//! device). Prints a table (with the drops the switch itself counted during
//! the load phase, from its fabric counters, and the frames the kernel
//! dropped on the switch's ports before it read them, `kernel_drops`) and the roceswitch / relay
//! ratios. With `--writes-per-sec N` (default 10k) every roceswitch trial is
//! followed by one while a controller thread inserts and deletes host routes
//! at that rate over P4Runtime, and the bench prints the forwarding rate
//! kept under writes. With `--abuse-streams N` (default 1000) every
//! roceswitch trial is also followed by one while a misbehaving controller
//! opens N P4Runtime StreamChannels at once, round after round (the switch
//! keeps 64 and refuses the rest), and sends a Write announcing more than
//! the switch's 64 MiB limit each round (a raw HTTP/2 call, the body from a
//! static buffer); the bench prints the forwarding rate kept under that
//! abuse (issue #18: at least 0.9 of normal) and the abuser's own share of
//! a core, since it runs on the cores the generator and sink use.
//!
//! Comparing builds: `--roceswitch NAME=PATH` (repeated) measures each
//! switch binary as its own device, and `--rounds R` repeats the whole
//! sequence of devices R times, each device started afresh, so every
//! alternative sees the same background load; the figures are medians over
//! the rounds, and each switch is reported against the bridge and the
//! relay (rate ratio, latency added). `--wide-pairs N` also runs each
//! switch on 2N ports with N lines loaded at once by one generator thread
//! and counted by one sink thread (device `NAME/2N`), against the same
//! switch on one line: the cost of many ports to the driver.
//!
//! Needs root; the namespaces and the switch process are removed at
//! the end, on error and on Ctrl-C.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use lab::bench::{
    LineSwitch, MIN_FRAME_BYTES, Marking, count_test_frames_on, frame, pair_frame, pair_routes,
    route_churn, seq_of,
};
use lab::labctl::line::LineLab;
use lab::labctl::sys;
use lab::port::{AfPacketPort, FrameBuf, Port};
use lab::scenario::live::find_roceswitch;
use lab::scenario::switchctl::SwitchCtl;
use proto::p4::v1 as pb;

#[derive(Parser)]
#[command(
    name = "fwdbench",
    about = "Forwarding rate and latency: roceswitch vs Linux bridge vs AF_PACKET relay"
)]
struct Cli {
    /// Frame sizes in bytes (without FCS).
    #[arg(long, value_delimiter = ',', default_value = "64,1024")]
    sizes: Vec<usize>,
    /// Seconds of load per device and size.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Latency probes per device and size.
    #[arg(long, default_value_t = 1000)]
    probes: usize,
    /// Frames per batch (generator, sink and relay).
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// Table writes per second over P4Runtime during an extra roceswitch
    /// load phase (host routes inserted and deleted in batches every
    /// 10 ms); 0 skips that phase.
    #[arg(long, default_value_t = 10_000)]
    writes_per_sec: u32,
    /// StreamChannels a misbehaving controller opens at once, round after
    /// round, during an extra roceswitch load phase (with one oversize
    /// Write a round); 0 skips that phase.
    #[arg(long, default_value_t = 1000)]
    abuse_streams: usize,
    /// Load phases per device and size (the median is reported).
    #[arg(long, default_value_t = 3)]
    trials: usize,
    /// A switch build to measure, `NAME=PATH` (repeat the flag to compare
    /// builds in one run); default `roceswitch`, found next to this
    /// executable or on PATH.
    #[arg(long = "roceswitch", value_name = "NAME=PATH")]
    switches: Vec<String>,
    /// Devices to measure each round, in order: switch names, `bridge`,
    /// `relay` (default: every switch, then the bridge and the relay).
    #[arg(long, value_delimiter = ',')]
    devices: Vec<String>,
    /// Rounds over the devices, each starting every device afresh, so
    /// alternatives see the same background load; figures are medians
    /// over the rounds.
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// Also measure each switch on `2 × N` ports with N lines loaded at
    /// once (one generator thread and one sink thread for all), as the
    /// device `NAME/2N`; 0 skips.
    #[arg(long, default_value_t = 0)]
    wide_pairs: usize,
}

/// What to start in `mid`.
#[derive(Clone, Debug)]
enum DeviceKind {
    /// A switch binary on the first `2 × pairs` ports, `pairs` lines loaded.
    Switch {
        name: String,
        bin: std::path::PathBuf,
        pairs: usize,
    },
    Bridge,
    Relay,
}

impl DeviceKind {
    fn name(&self) -> String {
        match self {
            DeviceKind::Switch { name, .. } => name.clone(),
            DeviceKind::Bridge => "bridge".into(),
            DeviceKind::Relay => "relay".into(),
        }
    }

    fn pairs(&self) -> usize {
        match self {
            DeviceKind::Switch { pairs, .. } => *pairs,
            _ => 1,
        }
    }
}

/// The devices of a round, from the command line.
fn device_kinds(cli: &Cli) -> Result<Vec<DeviceKind>> {
    let mut switches = Vec::new();
    if cli.switches.is_empty() {
        switches.push(("roceswitch".to_string(), find_roceswitch()?));
    }
    for spec in &cli.switches {
        let (name, path) = spec
            .split_once('=')
            .with_context(|| format!("--roceswitch {spec}: expected NAME=PATH"))?;
        if name.is_empty() || name == "bridge" || name == "relay" || name.contains('/') {
            bail!("--roceswitch {spec}: the name must be new, non-empty and without '/'");
        }
        switches.push((name.to_string(), std::path::PathBuf::from(path)));
    }
    let names: Vec<String> = if cli.devices.is_empty() {
        switches
            .iter()
            .map(|(n, _)| n.clone())
            .chain(["bridge".to_string(), "relay".to_string()])
            .collect()
    } else {
        cli.devices.clone()
    };
    let mut kinds = Vec::new();
    for name in names {
        match name.as_str() {
            "bridge" => kinds.push(DeviceKind::Bridge),
            "relay" => kinds.push(DeviceKind::Relay),
            n => {
                let (_, bin) = switches
                    .iter()
                    .find(|(s, _)| s == n)
                    .with_context(|| format!("--devices: no switch named {n}"))?;
                kinds.push(DeviceKind::Switch {
                    name: n.to_string(),
                    bin: bin.clone(),
                    pairs: 1,
                });
                if cli.wide_pairs > 1 {
                    kinds.push(DeviceKind::Switch {
                        name: format!("{n}/{}", 2 * cli.wide_pairs),
                        bin: bin.clone(),
                        pairs: cli.wide_pairs,
                    });
                }
            }
        }
    }
    Ok(kinds)
}

/// The three namespaces; removed on drop.
/// The device under test in `mid`; its drop stops it.
enum Device {
    Switch {
        daemon: LineSwitch,
        ctl: Option<Box<SwitchCtl>>,
    },
    Bridge {
        ns: String,
    },
    Relay {
        done: Arc<AtomicBool>,
        thread: Option<std::thread::JoinHandle<Result<()>>>,
    },
}

impl Drop for Device {
    fn drop(&mut self) {
        match self {
            // The daemon stops when the device is dropped, after the
            // control session (fields drop after this).
            Device::Switch { ctl, .. } => drop(ctl.take()),
            Device::Bridge { ns } => {
                let _ = sys::ip(&["-n", ns, "link", "del", "br0"]);
            }
            Device::Relay { done, thread } => {
                done.store(true, Ordering::Relaxed);
                if let Some(t) = thread.take() {
                    let _ = t.join();
                }
            }
        }
    }
}

impl Device {
    /// Packets the switch counted as dropped so far (all ports and
    /// priorities), and frames the kernel dropped on its ports before it
    /// read them; `None` for devices without such counters.
    fn drops(&mut self) -> Result<Option<(u64, u64)>> {
        match self {
            Device::Switch { ctl: Some(ctl), .. } => {
                let c = ctl.counters()?;
                Ok(Some((
                    c.iter().map(|c| c.drops).sum(),
                    c.iter().map(|c| c.kernel_drops).sum(),
                )))
            }
            _ => Ok(None),
        }
    }
}

fn start_device(
    lab: &LineLab,
    kind: &DeviceKind,
    batch: usize,
    stop: &AtomicBool,
) -> Result<Device> {
    match kind {
        DeviceKind::Switch { bin, pairs, .. } => {
            let daemon = LineSwitch::start_bin(bin, lab, 2 * pairs, "fwdbench", &[])?;
            let mut ctl = SwitchCtl::connect(&daemon.addr(), Duration::from_secs(10), stop)?;
            ctl.set_routes(&pair_routes(*pairs))?;
            Ok(Device::Switch {
                daemon,
                ctl: Some(Box::new(ctl)),
            })
        }
        DeviceKind::Bridge => {
            let ns = lab.mid();
            sys::ip(&["-n", ns, "link", "add", "br0", "type", "bridge"])?;
            let dev = Device::Bridge { ns: ns.to_string() };
            for i in ["m0", "m1"] {
                sys::ip(&["-n", ns, "link", "set", i, "master", "br0"])?;
            }
            sys::ip(&["-n", ns, "link", "set", "br0", "up"])?;
            sys::wait_oper_up(ns, "br0", Duration::from_secs(5))?;
            Ok(dev)
        }
        DeviceKind::Relay => {
            let mut rx = AfPacketPort::open_in_netns(lab.mid(), "m0")?;
            let mut tx = AfPacketPort::open_in_netns(lab.mid(), "m1")?;
            let done = Arc::new(AtomicBool::new(false));
            let d = done.clone();
            let thread = std::thread::spawn(move || -> Result<()> {
                let mut bufs = FrameBuf::batch(batch);
                while !d.load(Ordering::Relaxed) {
                    let n = rx.recv_batch(&mut bufs)?;
                    if n == 0 {
                        rx.wait_readable(Some(Duration::from_millis(5)))?;
                        continue;
                    }
                    let mut off = 0;
                    for _ in 0..100 {
                        off += tx.send_batch(&bufs[off..n])?;
                        if off == n {
                            break;
                        }
                    }
                }
                Ok(())
            });
            Ok(Device::Relay {
                done,
                thread: Some(thread),
            })
        }
    }
}

#[derive(Clone)]
struct Figures {
    device: String,
    size_bytes: usize,
    offered_pps: f64,
    forwarded_pps: f64,
    p50_us: f64,
    p99_us: f64,
    probes_lost: usize,
    /// Drops the switch counted during the load phases.
    switch_drops: Option<u64>,
    /// Frames the kernel dropped on the switch's ports during the load
    /// phases, before the switch read them.
    kernel_drops: Option<u64>,
    /// Table updates per second written during the load phase.
    writes_per_sec: Option<f64>,
    /// What a misbehaving controller did during the load phase.
    abuse: Option<AbuseTally>,
}

impl Figures {
    /// The figures of an extra load phase: rates only, no latency probes
    /// and no drop counters.
    fn load_only(device: String, size: usize, (offered_pps, forwarded_pps): (f64, f64)) -> Self {
        Figures {
            device,
            size_bytes: size.max(MIN_FRAME_BYTES),
            offered_pps,
            forwarded_pps,
            p50_us: f64::NAN,
            p99_us: f64::NAN,
            probes_lost: 0,
            switch_drops: None,
            kernel_drops: None,
            writes_per_sec: None,
            abuse: None,
        }
    }
}

/// Offered and forwarded packets/s of one load phase over the first
/// `pairs` lines: one generator (this thread) sends a batch on each line in
/// turn, one sink thread counts on all of them.
fn load_phase(
    lab: &LineLab,
    size: usize,
    secs: f64,
    batch: usize,
    pairs: usize,
    stop: &AtomicBool,
) -> Result<(f64, f64)> {
    let mut srcs = Vec::new();
    let mut dsts = Vec::new();
    for k in 0..pairs {
        srcs.push(AfPacketPort::open_in_netns(lab.src(), &format!("s{k}"))?);
        dsts.push(AfPacketPort::open_in_netns(lab.dst(), &format!("d{k}"))?);
    }
    let done = Arc::new(AtomicBool::new(false));
    let delivered = Arc::new(AtomicU64::new(0));
    let sink = count_test_frames_on(dsts, batch, delivered.clone(), done.clone());
    let frames: Vec<Vec<FrameBuf>> = (0..pairs)
        .map(|k| {
            (0..batch)
                .map(|i| {
                    let mut b = FrameBuf::default();
                    b.set_frame(&pair_frame(
                        size,
                        i as u32,
                        0,
                        Marking::BEST_EFFORT,
                        k as u8,
                    ));
                    b
                })
                .collect()
        })
        .collect();
    let t0 = Instant::now();
    let dur = Duration::from_secs_f64(secs);
    let mut offered = 0u64;
    while t0.elapsed() < dur && !stop.load(Ordering::Relaxed) {
        let mut sent = 0;
        for (src, frames) in srcs.iter_mut().zip(&frames) {
            sent += src.send_batch(frames)?;
        }
        offered += sent as u64;
        if sent == 0 {
            std::thread::yield_now();
        }
    }
    let elapsed = t0.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_millis(300));
    done.store(true, Ordering::Relaxed);
    sink.join()
        .map_err(|_| anyhow::anyhow!("sink thread panicked"))??;
    Ok((
        offered as f64 / elapsed,
        delivered.load(Ordering::Relaxed) as f64 / elapsed,
    ))
}

/// What the misbehaving controller of [`controller_abuse`] got.
#[derive(Clone, Copy, Debug, Default)]
struct AbuseTally {
    /// StreamChannels it tried to open.
    streams: u64,
    /// Refused with RESOURCE_EXHAUSTED.
    streams_refused: u64,
    /// Oversize Writes sent.
    oversize: u64,
    /// Oversize Writes refused with OUT_OF_RANGE.
    oversize_refused: u64,
    /// CPU time the abuser's own thread used, and the time it ran, ns:
    /// its share of the two cores the generator, switch and sink share.
    cpu_ns: u64,
    wall_ns: u64,
}

/// CPU time (user + system) the calling thread has used, ns.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The size an oversize Write announces: 1 MiB over the switch's limit.
const OVERSIZE_BYTES: u32 = (control::p4rt::service::MAX_MESSAGE_BYTES + (1 << 20)) as u32;

/// Sends the switch what a client writing a 65 MiB Write sends it, and
/// returns the status it answers: a P4Runtime `Write` call whose gRPC
/// message announces [`OVERSIZE_BYTES`], on a fresh HTTP/2 connection,
/// followed by 1 MiB of body as the switch's flow control admits it. The
/// switch must refuse on the announced length (OUT_OF_RANGE), before the
/// body; if it waited for the rest, the call times out and the bench fails.
///
/// The body comes from a static buffer: a tonic client would first clone
/// and encode the 65 MiB message (130 MiB of copying and page faults a
/// round), on the same two cores as the generator, switch and sink, and
/// that measured the abuser, not the switch.
async fn oversize_write(addr: &str) -> Result<tonic::Code> {
    static BODY: [u8; 1 << 20] = [0; 1 << 20];
    let path = addr
        .strip_prefix("unix:")
        .with_context(|| format!("{addr}: the switch under test listens on a unix socket"))?;
    let io = tokio::net::UnixStream::connect(path)
        .await
        .with_context(|| format!("connecting to {addr}"))?;
    let (client, connection) = h2::client::handshake(io)
        .await
        .context("HTTP/2 handshake")?;
    let connection = tokio::spawn(connection);
    let call = async move {
        let mut client = client.ready().await?;
        let request = http::Request::post("http://localhost/p4.v1.P4Runtime/Write")
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())?;
        let (response, mut body) = client.send_request(request, false)?;
        let mut prefix = [0u8; 5];
        prefix[1..].copy_from_slice(&OVERSIZE_BYTES.to_be_bytes());
        body.send_data(bytes::Bytes::copy_from_slice(&prefix), false)?;
        body.send_data(bytes::Bytes::from_static(&BODY), false)?;
        let (head, mut received) = response.await?.into_parts();
        // A refusal is a trailers-only response: the status is in the head.
        let status = match head.headers.get("grpc-status") {
            Some(s) => Some(s.clone()),
            None => received
                .trailers()
                .await?
                .and_then(|t| t.get("grpc-status").cloned()),
        };
        let code = status
            .and_then(|s| s.to_str().ok()?.parse::<i32>().ok())
            .context("no grpc-status in the answer")?;
        anyhow::Ok(tonic::Code::from_i32(code))
    };
    let code = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .context("the oversize Write was not refused within 10 s")?;
    connection.abort();
    code
}

/// A controller that opens `streams` StreamChannels at once (over several
/// connections: the switch allows 256 HTTP/2 streams on one), holds them
/// 50 ms, closes them and sends one Write of 65 MiB ([`oversize_write`]), round after round
/// until `done`. Accepted streams stay silent (no arbitration), so the
/// cost to the switch is the refusals and the bookkeeping, which must not
/// reach the dataplane.
fn controller_abuse(
    addr: String,
    streams: usize,
    done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Result<AbuseTally>> {
    use proto::p4::v1::p4_runtime_client::P4RuntimeClient;
    use tonic::Code;
    std::thread::spawn(move || {
        // SAFETY: setpriority on the calling thread with plain integers.
        unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 10) };
        let (cpu0, wall0) = (thread_cpu_ns(), Instant::now());
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("tokio runtime")?;
        rt.block_on(async move {
            let mut clients = Vec::new();
            for _ in 0..streams.div_ceil(200).max(1) {
                let channel = control::client::connect(&addr)
                    .await
                    .with_context(|| format!("connecting to {addr}"))?;
                clients.push(P4RuntimeClient::new(channel));
            }
            let mut tally = AbuseTally::default();
            while !done.load(Ordering::Relaxed) {
                let mut tasks = tokio::task::JoinSet::new();
                for i in 0..streams {
                    let mut client = clients[i % clients.len()].clone();
                    tasks.spawn(async move {
                        let (tx, rx) = tokio::sync::mpsc::channel::<pb::StreamMessageRequest>(1);
                        let opened = client
                            .stream_channel(tokio_stream::wrappers::ReceiverStream::new(rx))
                            .await;
                        (tx, opened)
                    });
                }
                let mut open = Vec::new();
                while let Some(joined) = tasks.join_next().await {
                    let (tx, opened) = joined.context("stream task")?;
                    tally.streams += 1;
                    match opened {
                        Ok(s) => open.push((tx, s)),
                        Err(e) if e.code() == Code::ResourceExhausted => tally.streams_refused += 1,
                        Err(e) => bail!("StreamChannel: unexpected {e}"),
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                drop(open);
                tally.oversize += 1;
                match oversize_write(&addr).await? {
                    Code::OutOfRange => tally.oversize_refused += 1,
                    code => bail!("oversize Write: unexpected {code:?}"),
                }
            }
            tally.cpu_ns = thread_cpu_ns() - cpu0;
            tally.wall_ns = wall0.elapsed().as_nanos() as u64;
            Ok(tally)
        })
    })
}

/// One-way latencies (ns) of `probes` sequential probes; lost ones left out.
fn latency_phase(
    lab: &LineLab,
    size: usize,
    probes: usize,
    stop: &AtomicBool,
) -> Result<(Vec<u64>, usize)> {
    let mut src = AfPacketPort::open_in_netns(lab.src(), "s0")?;
    let mut dst = AfPacketPort::open_in_netns(lab.dst(), "d0")?;
    let mut out = vec![FrameBuf::default()];
    let mut bufs = FrameBuf::batch(16);
    let base = Instant::now();
    let mut lat = Vec::with_capacity(probes);
    let mut lost = 0;
    for seq in 0..probes as u32 {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let sent = Instant::now();
        out[0].set_frame(&frame(size, seq, (sent - base).as_nanos() as u64));
        if src.send_batch(&out)? != 1 {
            lost += 1;
            continue;
        }
        let deadline = sent + Duration::from_millis(50);
        let got = 'wait: loop {
            let n = dst.recv_batch(&mut bufs)?;
            for b in &bufs[..n] {
                if seq_of(b.frame()) == Some(seq) {
                    break 'wait Some(sent.elapsed());
                }
            }
            let now = Instant::now();
            if now >= deadline {
                break None;
            }
            if n == 0 {
                dst.wait_readable(Some(deadline - now))?;
            }
        };
        match got {
            Some(d) => lat.push(d.as_nanos() as u64),
            None => lost += 1,
        }
    }
    Ok((lat, lost))
}

fn percentile_us(sorted_ns: &[u64], p: f64) -> f64 {
    if sorted_ns.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted_ns.len() - 1) as f64 * p).round() as usize;
    sorted_ns[i] as f64 / 1000.0
}

/// The load phase while [`route_churn`] writes at `per_sec`:
/// ((offered, forwarded) pps, updates/s written).
fn load_while_writing(
    dev: &mut Device,
    lab: &LineLab,
    size: usize,
    cli: &Cli,
    stop: &AtomicBool,
) -> Result<Option<((f64, f64), f64)>> {
    let Device::Switch { ctl, .. } = dev else {
        return Ok(None);
    };
    let Some(c) = ctl.take() else {
        return Ok(None);
    };
    let done = Arc::new(AtomicBool::new(false));
    let writer = route_churn(c, cli.writes_per_sec, done.clone());
    let t0 = Instant::now();
    let load = load_phase(lab, size, cli.seconds, cli.batch, 1, stop);
    done.store(true, Ordering::Relaxed);
    let elapsed = t0.elapsed().as_secs_f64();
    let (c, written) = writer
        .join()
        .map_err(|_| anyhow::anyhow!("writer thread panicked"))?
        .context("writing routes during the load")?;
    *ctl = Some(c);
    Ok(Some((load?, written as f64 / elapsed)))
}

/// The load phase while [`controller_abuse`] runs:
/// ((offered, forwarded) pps, what the abuser got).
fn load_while_abused(
    dev: &Device,
    lab: &LineLab,
    size: usize,
    cli: &Cli,
    stop: &AtomicBool,
) -> Result<Option<((f64, f64), AbuseTally)>> {
    let Device::Switch { daemon, .. } = dev else {
        return Ok(None);
    };
    let done = Arc::new(AtomicBool::new(false));
    let abuser = controller_abuse(daemon.addr(), cli.abuse_streams, done.clone());
    let load = load_phase(lab, size, cli.seconds, cli.batch, 1, stop);
    done.store(true, Ordering::Relaxed);
    let tally = abuser
        .join()
        .map_err(|_| anyhow::anyhow!("abuser thread panicked"))?
        .context("abusing the P4Runtime server during the load")?;
    Ok(Some((load?, tally)))
}

/// The trial with the median forwarding rate.
fn median(mut trials: Vec<(f64, f64)>) -> (f64, f64) {
    trials.sort_by(|a, b| a.1.total_cmp(&b.1));
    trials.get(trials.len() / 2).copied().unwrap_or((0.0, 0.0))
}

fn measure(lab: &LineLab, kind: &DeviceKind, cli: &Cli, stop: &AtomicBool) -> Result<Vec<Figures>> {
    let mut dev = start_device(lab, kind, cli.batch, stop)?;
    let device = kind.name();
    let pairs = kind.pairs();
    // The extra phases concern the plain two-port switch.
    let extras = pairs == 1;
    let mut figs = Vec::new();
    for &size in &cli.sizes {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        // Warm-up: the bridge learns, the switch's first packets are slow.
        let _ = latency_phase(lab, size, 20, stop)?;
        let drops_before = dev.drops()?;
        // Trials with and without writes alternate, so that both see the
        // same background load on this shared machine.
        let (mut plain, mut churned, mut writes) = (Vec::new(), Vec::new(), Vec::new());
        let (mut abused, mut tally) = (Vec::new(), AbuseTally::default());
        for _ in 0..cli.trials.max(1) {
            plain.push(load_phase(lab, size, cli.seconds, cli.batch, pairs, stop)?);
            if extras
                && cli.writes_per_sec > 0
                && let Some((load, per_sec)) = load_while_writing(&mut dev, lab, size, cli, stop)?
            {
                churned.push(load);
                writes.push(per_sec);
            }
            if extras
                && cli.abuse_streams > 0
                && let Some((load, t)) = load_while_abused(&dev, lab, size, cli, stop)?
            {
                abused.push(load);
                tally.streams += t.streams;
                tally.streams_refused += t.streams_refused;
                tally.oversize += t.oversize;
                tally.oversize_refused += t.oversize_refused;
                tally.cpu_ns += t.cpu_ns;
                tally.wall_ns += t.wall_ns;
            }
        }
        let (switch_drops, kernel_drops) = match (drops_before, dev.drops()?) {
            (Some(b), Some(a)) => (Some(a.0.saturating_sub(b.0)), Some(a.1.saturating_sub(b.1))),
            _ => (None, None),
        };
        let (mut lat, probes_lost) = latency_phase(lab, size, cli.probes, stop)?;
        lat.sort_unstable();
        let (offered_pps, forwarded_pps) = median(plain);
        figs.push(Figures {
            device: device.clone(),
            size_bytes: size.max(MIN_FRAME_BYTES),
            offered_pps,
            forwarded_pps,
            p50_us: percentile_us(&lat, 0.50),
            p99_us: percentile_us(&lat, 0.99),
            probes_lost,
            switch_drops,
            kernel_drops,
            writes_per_sec: None,
            abuse: None,
        });
        if !churned.is_empty() {
            figs.push(Figures {
                writes_per_sec: Some(writes.iter().sum::<f64>() / writes.len() as f64),
                ..Figures::load_only(format!("{device}+w"), size, median(churned))
            });
        }
        if !abused.is_empty() {
            figs.push(Figures {
                abuse: Some(tally),
                ..Figures::load_only(format!("{device}+a"), size, median(abused))
            });
        }
    }
    drop(dev);
    Ok(figs)
}

/// One figure per (device, size) from the rounds' figures: the round with
/// the median forwarding rate for the rates, the median of the rounds'
/// latencies, the drops summed.
fn over_rounds(rounds: &[Figures]) -> Vec<Figures> {
    let mut keys: Vec<(String, usize)> = Vec::new();
    for f in rounds {
        let k = (f.device.clone(), f.size_bytes);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let med = |mut v: Vec<f64>| {
        v.retain(|x| !x.is_nan());
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    keys.into_iter()
        .map(|(device, size)| {
            let mut of: Vec<&Figures> = rounds
                .iter()
                .filter(|f| f.device == device && f.size_bytes == size)
                .collect();
            let p50_us = med(of.iter().map(|f| f.p50_us).collect());
            let p99_us = med(of.iter().map(|f| f.p99_us).collect());
            let sum = |g: fn(&Figures) -> Option<u64>| of.iter().map(|f| g(f)).sum::<Option<u64>>();
            let (switch_drops, kernel_drops) = (sum(|f| f.switch_drops), sum(|f| f.kernel_drops));
            let probes_lost = of.iter().map(|f| f.probes_lost).sum();
            of.sort_by(|a, b| a.forwarded_pps.total_cmp(&b.forwarded_pps));
            Figures {
                p50_us,
                p99_us,
                switch_drops,
                kernel_drops,
                probes_lost,
                ..of[of.len() / 2].clone()
            }
        })
        .collect()
}

fn main() -> Result<()> {
    let mut cli = Cli::parse();
    cli.batch = cli.batch.clamp(1, 1024);
    let kinds = device_kinds(&cli)?;
    let stop = lab::signal::stop_flag();
    let pairs = kinds.iter().map(DeviceKind::pairs).max().unwrap_or(1);
    let lab = LineLab::create_pairs(&format!("fb{}", std::process::id()), pairs)
        .context("building the bench namespaces")?;
    let mut rounds = Vec::new();
    for _ in 0..cli.rounds.max(1) {
        for kind in &kinds {
            let figs = measure(&lab, kind, &cli, stop)
                .with_context(|| format!("device {}", kind.name()))?;
            rounds.extend(figs);
            if stop.load(Ordering::Relaxed) {
                bail!("interrupted");
            }
        }
    }
    drop(lab);
    let all = over_rounds(&rounds);
    println!(
        "{:<16} {:>6} {:>12} {:>12} {:>7} {:>9} {:>9} {:>6} {:>10} {:>12}",
        "device",
        "bytes",
        "offered_pps",
        "fwd_pps",
        "loss%",
        "p50_us",
        "p99_us",
        "lost",
        "sw_drops",
        "kernel_drops"
    );
    for f in &all {
        let loss = if f.offered_pps > 0.0 {
            100.0 * (1.0 - f.forwarded_pps / f.offered_pps).max(0.0)
        } else {
            0.0
        };
        println!(
            "{:<16} {:>6} {:>12.0} {:>12.0} {:>7.2} {:>9.1} {:>9.1} {:>6} {:>10} {:>12}",
            f.device,
            f.size_bytes,
            f.offered_pps,
            f.forwarded_pps,
            loss,
            f.p50_us,
            f.p99_us,
            f.probes_lost,
            f.switch_drops
                .map_or_else(|| "-".to_string(), |d| d.to_string()),
            f.kernel_drops
                .map_or_else(|| "-".to_string(), |d| d.to_string())
        );
    }
    println!();
    for kind in &kinds {
        let DeviceKind::Switch { name, pairs, .. } = kind else {
            continue;
        };
        for &size in &cli.sizes {
            let size = size.max(MIN_FRAME_BYTES);
            let find = |d: &str| all.iter().find(|f| f.device == d && f.size_bytes == size);
            let Some(s) = find(name) else { continue };
            if *pairs > 1 {
                let base = name.split('/').next().unwrap_or(name);
                if let Some(b) = find(base) {
                    println!(
                        "{name} {size:>5} B: {pairs} lines loaded: fwd_pps x{:.2} of {base} on one line",
                        s.forwarded_pps / b.forwarded_pps
                    );
                }
                continue;
            }
            for other in ["bridge", "relay"] {
                if let Some(o) = find(other) {
                    println!(
                        "{name} {size:>5} B: fwd_pps x{:.2} of the {other}; latency added p50 {:+.1} us, p99 {:+.1} us",
                        s.forwarded_pps / o.forwarded_pps,
                        s.p50_us - o.p50_us,
                        s.p99_us - o.p99_us
                    );
                }
            }
            if let Some(w) = find(&format!("{name}+w")) {
                println!(
                    "{name} {size:>5} B: while writing {:.0} entries/s: fwd_pps x{:.3} of the rate without writes",
                    w.writes_per_sec.unwrap_or(0.0),
                    w.forwarded_pps / s.forwarded_pps
                );
            }
            if let Some(a) = find(&format!("{name}+a")) {
                let t = a.abuse.unwrap_or_default();
                println!(
                    "{name} {size:>5} B: under abuse ({} StreamChannels opened, {} refused; {} oversize Writes, {} refused; the abuser used {:.0} % of a core): fwd_pps x{:.3} of the rate without",
                    t.streams,
                    t.streams_refused,
                    t.oversize,
                    t.oversize_refused,
                    100.0 * t.cpu_ns as f64 / t.wall_ns.max(1) as f64,
                    a.forwarded_pps / s.forwarded_pps
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_the_nearest_rank() {
        let v: Vec<u64> = (1..=100).map(|x| x * 1000).collect();
        assert_eq!(percentile_us(&v, 0.5), 51.0);
        assert_eq!(percentile_us(&v, 0.99), 99.0);
        assert!(percentile_us(&[], 0.5).is_nan());
    }
}
