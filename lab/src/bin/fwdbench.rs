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
//! a core, since it runs on the cores the generator and sink use. With
//! `--read-entries N` (default 0: the fill takes seconds and, beyond the
//! compiled-in table's 16,384 routes, a program bundle) the switch's
//! `ipv4_lpm` is first filled with N BGP-shaped routes outside the bench's
//! destination block (batches of 1,000 over P4Runtime), and every
//! roceswitch trial is also followed by one while a second controller
//! reads the table back, wildcard Read after wildcard Read (each streamed
//! and its entries counted against the table's size; the read under way
//! when the trial ends is finished before the next trial starts): the
//! forwarding rate kept while a controller reads (issue #17: at least
//! 0.95 of without). `ipv4_lpm` holds 16,384 routes in `roce_switch.p4`;
//! for more, build the program with a larger `size` into a bundle
//! (`p4-to-rust build`) and pass it as `--read-program`: the switch loads
//! it over P4Runtime before it is programmed, so every trial of that
//! switch, with and without reads, runs the loaded program.
//!
//! That saturating ratio also measures the generator: on two shared cores
//! the abuser (or the reader) takes CPU from it, and it offers less. So
//! with the abuse or the read phase, `--trials` more rounds of load phases
//! run at a fixed offered rate, `--paced-fraction` (default 0.8) of the
//! median rate forwarded without them, one plain, one with the abuser, one
//! with the reader (the mean rates of each kind are reported): the
//! fraction of the offered frames the switch forwarded in each says
//! whether the dataplane is starved. Meanwhile the switch's threads' CPU
//! time is read from `/proc/PID/task` and printed by thread name
//! (`dataplane`, the control plane's `tokio-rt-worker`s, ...) as shares of
//! a core without and under abuse or reads.
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
//! Placing the threads (issue #17): `--bench-cpu M` keeps the generator,
//! the sink and the prober (this process, and every thread it starts) on
//! CPU M, and `--switch-cpu N` puts the device on CPU N: every thread of a
//! switch process (as `taskset -a -p`, once it answers P4Runtime), the
//! relay's thread. The bridge has no thread of its own: it forwards in the
//! softirq of the sender's `send`, so on M. A switch build can be given
//! its own arguments after its path, `--roceswitch 'busy=PATH
//! --dataplane-poll busy --dataplane-cpu 1'`. `--probe-wait spin` has the
//! prober spin on its receive ring instead of sleeping in `poll(2)` until
//! the probe comes: a receiver that polls, as RoCE hosts poll their
//! completion queues, without the wake-up of the receiving thread (which
//! the bridge, delivering within the sender's own system call, never
//! pays).
//!
//! Needs root; the namespaces and the switch process are removed at
//! the end, on error and on Ctrl-C.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use dataplane::driver::cpu::pin_current_thread;
use lab::bench::{
    LineSwitch, MIN_FRAME_BYTES, Marking, ROUTE_NEXTHOP, count_test_frames_on, frame, pair_dst_ip,
    pair_frame, pair_routes, route_churn, seq_of,
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
    /// Routes to fill the switch's `ipv4_lpm` with, which a second
    /// controller reads back, wildcard Read after wildcard Read, during an
    /// extra roceswitch load phase; 0 skips that phase (and the fill).
    #[arg(long, default_value_t = 0)]
    read_entries: usize,
    /// A program bundle (`p4-to-rust build` of `roce_switch.p4` with a
    /// larger `ipv4_lpm`) each switch loads before it is programmed, for
    /// `--read-entries` beyond the compiled-in table's size.
    #[arg(long, value_name = "BUNDLE")]
    read_program: Option<std::path::PathBuf>,
    /// Load phases per device and size (the median is reported).
    #[arg(long, default_value_t = 3)]
    trials: usize,
    /// With the abuse phase: also run `--trials` pairs of load phases at a
    /// fixed offered rate, this fraction of the median forwarding rate
    /// without abuse, with and without the misbehaving controller, and
    /// report the fraction forwarded (whether the dataplane is starved,
    /// apart from how fast the generator can offer); 0 skips them.
    #[arg(long, default_value_t = 0.8)]
    paced_fraction: f64,
    /// A switch build to measure, `NAME=PATH`, optionally followed by
    /// arguments for it separated by spaces (`busy=PATH --dataplane-poll
    /// busy`; repeat the flag to compare builds in one run); default
    /// `roceswitch`, found next to this executable or on PATH.
    #[arg(long = "roceswitch", value_name = "NAME=PATH [ARGS]")]
    switches: Vec<String>,
    /// Pin the generator, sink and prober (every thread of this process)
    /// to this CPU.
    #[arg(long, value_name = "CPU")]
    bench_cpu: Option<usize>,
    /// Pin the device under test to this CPU: every thread of a switch
    /// process, the relay's thread (the bridge forwards in the sender's
    /// softirq, on --bench-cpu).
    #[arg(long, value_name = "CPU")]
    switch_cpu: Option<usize>,
    /// How the prober waits for each probe at the sink: `sleep` in
    /// poll(2), or `spin` on the receive ring.
    #[arg(long, value_name = "MODE", default_value = "sleep")]
    probe_wait: ProbeWait,
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

/// How the prober waits for a probe ([`latency_phase`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ProbeWait {
    /// In `poll(2)` until the sink's socket is readable.
    Sleep,
    /// Looking at the receive ring again and again.
    Spin,
}

/// What to start in `mid`.
#[derive(Clone, Debug)]
enum DeviceKind {
    /// A switch binary on the first `2 × pairs` ports, `pairs` lines loaded.
    Switch {
        name: String,
        bin: std::path::PathBuf,
        /// Its own arguments, after the bench's.
        args: Vec<String>,
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
        switches.push(("roceswitch".to_string(), find_roceswitch()?, Vec::new()));
    }
    for spec in &cli.switches {
        let (name, rest) = spec
            .split_once('=')
            .with_context(|| format!("--roceswitch {spec}: expected NAME=PATH [ARGS]"))?;
        if name.is_empty() || name == "bridge" || name == "relay" || name.contains('/') {
            bail!("--roceswitch {spec}: the name must be new, non-empty and without '/'");
        }
        let mut words = rest.split_whitespace();
        let path = words
            .next()
            .with_context(|| format!("--roceswitch {spec}: no path"))?;
        let args = words.map(str::to_string).collect();
        switches.push((name.to_string(), std::path::PathBuf::from(path), args));
    }
    let names: Vec<String> = if cli.devices.is_empty() {
        switches
            .iter()
            .map(|(n, _, _)| n.clone())
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
                let (_, bin, args) = switches
                    .iter()
                    .find(|(s, _, _)| s == n)
                    .with_context(|| format!("--devices: no switch named {n}"))?;
                kinds.push(DeviceKind::Switch {
                    name: n.to_string(),
                    bin: bin.clone(),
                    args: args.clone(),
                    pairs: 1,
                });
                if cli.wide_pairs > 1 {
                    kinds.push(DeviceKind::Switch {
                        name: format!("{n}/{}", 2 * cli.wide_pairs),
                        bin: bin.clone(),
                        args: args.clone(),
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
        /// The filled table a reader reads, when `--read-entries` is set.
        read: Option<ReadTarget>,
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
                // A relay that stopped early forwarded nothing after: say why.
                if let Some(Ok(Err(e))) = thread.take().map(|t| t.join()) {
                    eprintln!("relay stopped: {e:#}");
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

fn start_device(lab: &LineLab, kind: &DeviceKind, cli: &Cli, stop: &AtomicBool) -> Result<Device> {
    let batch = cli.batch;
    match kind {
        DeviceKind::Switch {
            bin, args, pairs, ..
        } => {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let daemon = LineSwitch::start_bin(bin, lab, 2 * pairs, "fwdbench", &args)?;
            let mut ctl = SwitchCtl::connect(&daemon.addr(), Duration::from_secs(10), stop)?;
            // Answering P4Runtime, it has started its threads.
            if let Some(cpu) = cli.switch_cpu {
                pin_process(daemon.pid(), cpu)?;
            }
            // The read phase concerns the plain two-port switch.
            let reads = *pairs == 1 && cli.read_entries > 0;
            if reads && let Some(path) = &cli.read_program {
                let bundle =
                    std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
                ctl.load_program(bundle)
                    .with_context(|| format!("loading {}", path.display()))?;
            }
            ctl.set_routes(&pair_routes(*pairs))?;
            let read = if reads {
                Some(fill_for_reads(&mut ctl, &daemon.addr(), cli.read_entries)?)
            } else {
                None
            };
            Ok(Device::Switch {
                daemon,
                ctl: Some(Box::new(ctl)),
                read,
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
            let cpu = cli.switch_cpu;
            let thread = std::thread::spawn(move || -> Result<()> {
                if let Some(cpu) = cpu {
                    pin_current_thread(&[cpu]).context("--switch-cpu")?;
                }
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
    /// What the reading controller read during the load phase.
    reads: Option<ReadTally>,
    /// On a paced figure under abuse or reads: the switch's threads' shares
    /// of a core in the paced phases without and with that load
    /// (`name a/b %, ...`).
    switch_threads: Option<String>,
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
            reads: None,
            switch_threads: None,
        }
    }
}

/// Offered and forwarded packets/s of one load phase over the first
/// `pairs` lines: one generator (this thread) sends a batch on each line in
/// turn, one sink thread counts on all of them. The generator sends as fast
/// as it can, or at `rate_pps` when given (paced on the frames sent so far;
/// a generator that falls behind catches up at most [`PACING_SLACK`]).
fn load_phase(
    lab: &LineLab,
    size: usize,
    secs: f64,
    batch: usize,
    pairs: usize,
    rate_pps: Option<f64>,
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
    // Pacing: frames are due at `paced_from + paced / rate`.
    let (mut paced_from, mut paced) = (t0, 0u64);
    while t0.elapsed() < dur && !stop.load(Ordering::Relaxed) {
        let mut sent = 0;
        for (src, frames) in srcs.iter_mut().zip(&frames) {
            sent += src.send_batch(frames)?;
        }
        offered += sent as u64;
        paced += sent as u64;
        if let Some(rate) = rate_pps {
            let due = paced_from + Duration::from_secs_f64(paced as f64 / rate);
            let now = Instant::now();
            if let Some(wait) = due.checked_duration_since(now) {
                std::thread::sleep(wait);
            } else if now - due > PACING_SLACK {
                (paced_from, paced) = (now - PACING_SLACK, 0);
            }
        } else if sent == 0 {
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

/// How far a paced generator that fell behind (a sleep that overslept on
/// the shared cores) may catch up at full speed. 5 ms lost a third of the
/// rate at load 11: sleeps of ~0.5 ms overslept by more, often.
const PACING_SLACK: Duration = Duration::from_millis(100);

/// CPU time (user + system, ns) of a process's threads, summed by thread
/// name (`dataplane`, `tokio-runtime-worker`, ...), from `/proc/PID/task`.
#[derive(Clone, Debug, Default)]
struct ThreadCpu(std::collections::BTreeMap<String, u64>);

impl ThreadCpu {
    fn read(pid: u32) -> Result<ThreadCpu> {
        // SAFETY: sysconf with a valid name has no other effect.
        let tick_ns = 1_000_000_000 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        let mut by_name = std::collections::BTreeMap::new();
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
            .with_context(|| format!("listing the threads of {pid}"))?;
        for task in tasks.flatten() {
            // A thread may end between the listing and the read.
            let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
                continue;
            };
            // `pid (comm) state ...`: utime and stime are fields 14 and 15.
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                continue;
            };
            let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
            let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
            if let (Some(user), Some(system)) = (ticks(11), ticks(12)) {
                *by_name
                    .entry(stat[open + 1..close].to_string())
                    .or_default() += (user + system) * tick_ns;
            }
        }
        Ok(ThreadCpu(by_name))
    }

    /// CPU time used since `earlier`, by thread name.
    fn since(&self, earlier: &ThreadCpu) -> ThreadCpu {
        ThreadCpu(
            self.0
                .iter()
                .map(|(name, &ns)| {
                    let before = earlier.0.get(name).copied().unwrap_or(0);
                    (name.clone(), ns.saturating_sub(before))
                })
                .collect(),
        )
    }

    fn add(&mut self, other: &ThreadCpu) {
        for (name, ns) in &other.0 {
            *self.0.entry(name.clone()).or_default() += ns;
        }
    }

    /// `name a/b %, ...`: each thread group's share of a core in `self`
    /// (over `wall_ns`) and in `other` (over `other_wall_ns`).
    fn compare(&self, wall_ns: u64, other: &ThreadCpu, other_wall_ns: u64) -> String {
        let mut names: Vec<&String> = self.0.keys().chain(other.0.keys()).collect();
        names.sort();
        names.dedup();
        let share = |t: &ThreadCpu, name: &String, wall: u64| {
            100.0 * t.0.get(name).copied().unwrap_or(0) as f64 / wall.max(1) as f64
        };
        names
            .into_iter()
            .map(|n| {
                format!(
                    "{n} {:.1}/{:.1} %",
                    share(self, n, wall_ns),
                    share(other, n, other_wall_ns)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
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

impl AbuseTally {
    fn add(&mut self, t: &AbuseTally) {
        self.streams += t.streams;
        self.streams_refused += t.streams_refused;
        self.oversize += t.oversize;
        self.oversize_refused += t.oversize_refused;
        self.cpu_ns += t.cpu_ns;
        self.wall_ns += t.wall_ns;
    }
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

/// A tally of a controller thread, stamped with the CPU time the thread
/// used and how long it ran.
trait ControllerTally: Send + 'static {
    fn timed(&mut self, cpu_ns: u64, wall_ns: u64);
}

impl ControllerTally for AbuseTally {
    fn timed(&mut self, cpu_ns: u64, wall_ns: u64) {
        (self.cpu_ns, self.wall_ns) = (cpu_ns, wall_ns);
    }
}

impl ControllerTally for ReadTally {
    fn timed(&mut self, cpu_ns: u64, wall_ns: u64) {
        (self.cpu_ns, self.wall_ns) = (cpu_ns, wall_ns);
    }
}

/// Runs a controller's `body` on a thread of its own with a current-thread
/// runtime, at nice 10: a controller would run on another machine; here it
/// shares the generator's and the sink's cores, so it yields to them.
fn spawn_controller<T, F, Fut>(body: F) -> std::thread::JoinHandle<Result<T>>
where
    T: ControllerTally,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<T>>,
{
    std::thread::spawn(move || {
        // SAFETY: setpriority on the calling thread with plain integers.
        unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 10) };
        let (cpu0, wall0) = (thread_cpu_ns(), Instant::now());
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("tokio runtime")?;
        let mut tally = rt.block_on(body())?;
        tally.timed(thread_cpu_ns() - cpu0, wall0.elapsed().as_nanos() as u64);
        Ok(tally)
    })
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
    spawn_controller(move || async move {
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
        Ok(tally)
    })
}

/// The table the reading controller reads and what each read must return.
#[derive(Clone, Copy, Debug)]
struct ReadTarget {
    table_id: u32,
    /// Entries in the table: the filled routes and the bench's own.
    entries: u64,
}

/// What the reading controller of [`controller_reads`] did.
#[derive(Clone, Copy, Debug, Default)]
struct ReadTally {
    /// Wildcard reads of the table completed, each with every entry.
    reads: u64,
    /// Their total and longest duration, ns.
    read_ns: u64,
    longest_ns: u64,
    /// CPU time the reader's own thread used, and the time it ran, ns.
    cpu_ns: u64,
    wall_ns: u64,
}

impl ReadTally {
    fn add(&mut self, t: &ReadTally) {
        self.reads += t.reads;
        self.read_ns += t.read_ns;
        self.longest_ns = self.longest_ns.max(t.longest_ns);
        self.cpu_ns += t.cpu_ns;
        self.wall_ns += t.wall_ns;
    }
}

/// `n` distinct BGP-shaped IPv4 routes (`route_sets::bgp_ipv4`, fixed
/// seed) none of which covers or lies inside the /8 of the bench's
/// destinations, so the bench's own frames keep their /32 route and only
/// the table's size changes.
fn read_routes(n: usize) -> Result<Vec<(std::net::Ipv4Addr, u8)>> {
    use p4_target::table::route_sets::bgp_ipv4;
    let bench = u32::from_be_bytes(pair_dst_ip(0)) & 0xff00_0000;
    let mut rng = p4_target::externs::Rng::new(17);
    let drawn = bgp_ipv4(n + n / 8 + 1024, &mut rng);
    let routes: Vec<_> = drawn
        .into_iter()
        .filter(|&(v, len)| {
            let v = v as u32;
            // Overlap with bench/8: the shorter prefix's bits agree.
            let common = len.min(8);
            let mask = if common == 0 {
                0
            } else {
                u32::MAX << (32 - common)
            };
            v & mask != bench & mask
        })
        .map(|(v, len)| (std::net::Ipv4Addr::from(v as u32), len as u8))
        .take(n)
        .collect();
    if routes.len() < n {
        bail!(
            "only {} of {n} routes lie outside the bench's destinations",
            routes.len()
        );
    }
    Ok(routes)
}

/// Fills `ipv4_lpm` with [`read_routes`]`(n)` over P4Runtime in batches of
/// 1,000 and returns what the reader must then find in it.
fn fill_for_reads(ctl: &mut SwitchCtl, addr: &str, n: usize) -> Result<ReadTarget> {
    let table = dataplane::roce::PROGRAM_INFO
        .table_by_name("ipv4_lpm")
        .context("the switch program has no ipv4_lpm")?;
    let before = read_table_once(addr, table.id)?;
    let routes = read_routes(n)?;
    let t0 = Instant::now();
    for chunk in routes.chunks(1000) {
        ctl.write_routes(pb::update::Type::Insert, chunk, ROUTE_NEXTHOP)
            .with_context(|| {
                format!(
                    "filling ipv4_lpm with {n} routes (it holds {} in the compiled-in \
                     program; for more, pass a larger build as --read-program)",
                    table.size
                )
            })?;
    }
    let secs = t0.elapsed().as_secs_f64();
    let entries = read_table_once(addr, table.id)?;
    if entries != before + n as u64 {
        bail!("ipv4_lpm holds {entries} entries after the fill, not {before} + {n}");
    }
    println!(
        "filled ipv4_lpm with {n} routes in {secs:.1} s ({:.0} routes/s); {entries} entries",
        n as f64 / secs
    );
    Ok(ReadTarget {
        table_id: table.id,
        entries,
    })
}

/// A P4Runtime client of `addr` (no arbitration: reads need none) that
/// accepts read responses of any size the switch sends.
async fn reader_client(
    addr: &str,
) -> Result<proto::p4::v1::p4_runtime_client::P4RuntimeClient<tonic::transport::Channel>> {
    let channel = control::client::connect(addr)
        .await
        .with_context(|| format!("connecting to {addr}"))?;
    Ok(
        proto::p4::v1::p4_runtime_client::P4RuntimeClient::new(channel)
            .max_decoding_message_size(control::p4rt::service::MAX_MESSAGE_BYTES),
    )
}

/// Entries of table `table_id` in one wildcard Read, counted as they
/// stream in.
async fn read_table(
    client: &mut proto::p4::v1::p4_runtime_client::P4RuntimeClient<tonic::transport::Channel>,
    table_id: u32,
) -> Result<u64> {
    let mut stream = client
        .read(pb::ReadRequest {
            device_id: 1,
            entities: vec![pb::Entity {
                entity: Some(pb::entity::Entity::TableEntry(pb::TableEntry {
                    table_id,
                    ..Default::default()
                })),
            }],
            ..Default::default()
        })
        .await
        .map_err(|s| anyhow::anyhow!("P4Runtime Read: {} {}", s.code(), s.message()))?
        .into_inner();
    let mut n = 0;
    while let Some(r) = stream
        .message()
        .await
        .map_err(|s| anyhow::anyhow!("P4Runtime Read stream: {} {}", s.code(), s.message()))?
    {
        n += r.entities.len() as u64;
    }
    Ok(n)
}

/// [`read_table`] once, on a runtime of its own.
fn read_table_once(addr: &str, table_id: u32) -> Result<u64> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("tokio runtime")?;
    rt.block_on(async {
        let mut client = reader_client(addr).await?;
        read_table(&mut client, table_id).await
    })
}

/// A controller that reads `target`'s table back to back, each read
/// streamed and counted, until `done`; the read under way then is
/// finished (and counted), so that joining the thread leaves the switch
/// idle for the next trial. Every read must return every entry.
fn controller_reads(
    addr: String,
    target: ReadTarget,
    done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Result<ReadTally>> {
    spawn_controller(move || async move {
        let mut client = reader_client(&addr).await?;
        let mut tally = ReadTally::default();
        while !done.load(Ordering::Relaxed) {
            let t0 = Instant::now();
            let got = read_table(&mut client, target.table_id).await?;
            if got != target.entries {
                bail!(
                    "a wildcard read returned {got} entries, the table holds {}",
                    target.entries
                );
            }
            let ns = t0.elapsed().as_nanos() as u64;
            tally.reads += 1;
            tally.read_ns += ns;
            tally.longest_ns = tally.longest_ns.max(ns);
        }
        Ok(tally)
    })
}

/// Puts every thread of process `pid` on `cpu` (`taskset -a -p`): threads
/// it starts later inherit the mask of the one starting them.
fn pin_process(pid: u32, cpu: usize) -> Result<()> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set; `cpu` is checked
    // against its size first.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        bail!("--switch-cpu {cpu}: no such CPU");
    }
    // SAFETY: `cpu` is below the set's size.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .with_context(|| format!("listing the threads of {pid}"))?;
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        // SAFETY: the set is initialised and outlives the call; `tid` is a
        // thread id (one that has just ended fails with ESRCH, ignored).
        let r =
            unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::ESRCH) {
                return Err(e)
                    .with_context(|| format!("--switch-cpu {cpu}: thread {tid} of {pid}"));
            }
        }
    }
    Ok(())
}

/// One-way latencies (ns) of `probes` sequential probes; lost ones left out.
fn latency_phase(
    lab: &LineLab,
    size: usize,
    probes: usize,
    wait: ProbeWait,
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
                match wait {
                    ProbeWait::Sleep => {
                        dst.wait_readable(Some(deadline - now))?;
                    }
                    ProbeWait::Spin => std::hint::spin_loop(),
                }
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
    let load = load_phase(lab, size, cli.seconds, cli.batch, 1, None, stop);
    done.store(true, Ordering::Relaxed);
    let elapsed = t0.elapsed().as_secs_f64();
    let (c, written) = writer
        .join()
        .map_err(|_| anyhow::anyhow!("writer thread panicked"))?
        .context("writing routes during the load")?;
    *ctl = Some(c);
    Ok(Some((load?, written as f64 / elapsed)))
}

/// One load phase on line 0 (at `rate_pps`, or as fast as the generator
/// can) while a controller thread `start` spawns runs; the thread is told
/// to stop when the phase ends and joined: ((offered, forwarded) pps, what
/// it returned).
fn load_while<T>(
    lab: &LineLab,
    size: usize,
    cli: &Cli,
    rate_pps: Option<f64>,
    stop: &AtomicBool,
    what: &str,
    start: impl FnOnce(Arc<AtomicBool>) -> std::thread::JoinHandle<Result<T>>,
) -> Result<((f64, f64), T)> {
    let done = Arc::new(AtomicBool::new(false));
    let controller = start(done.clone());
    let load = load_phase(lab, size, cli.seconds, cli.batch, 1, rate_pps, stop);
    done.store(true, Ordering::Relaxed);
    let got = controller
        .join()
        .map_err(|_| anyhow::anyhow!("{what} thread panicked"))?
        .with_context(|| format!("{what} during the load"))?;
    Ok((load?, got))
}

/// The load phase while [`controller_abuse`] runs: ((offered, forwarded)
/// pps, what the abuser got).
fn load_while_abused(
    dev: &Device,
    lab: &LineLab,
    size: usize,
    cli: &Cli,
    rate_pps: Option<f64>,
    stop: &AtomicBool,
) -> Result<Option<((f64, f64), AbuseTally)>> {
    let Device::Switch { daemon, .. } = dev else {
        return Ok(None);
    };
    let addr = daemon.addr();
    load_while(
        lab,
        size,
        cli,
        rate_pps,
        stop,
        "abusing the P4Runtime server",
        |done| controller_abuse(addr, cli.abuse_streams, done),
    )
    .map(Some)
}

/// The load phase while [`controller_reads`] reads the filled table:
/// ((offered, forwarded) pps, what the reader read); `None` without a
/// filled table.
fn load_while_reading(
    dev: &Device,
    lab: &LineLab,
    size: usize,
    cli: &Cli,
    rate_pps: Option<f64>,
    stop: &AtomicBool,
) -> Result<Option<((f64, f64), ReadTally)>> {
    let Device::Switch {
        daemon,
        read: Some(target),
        ..
    } = dev
    else {
        return Ok(None);
    };
    let addr = daemon.addr();
    load_while(
        lab,
        size,
        cli,
        rate_pps,
        stop,
        "reading the table",
        |done| controller_reads(addr, *target, done),
    )
    .map(Some)
}

/// `f()` and the CPU time the switch's threads used meanwhile, with the
/// wall time it took (ns).
fn switch_cpu_during<T>(
    dev: &Device,
    f: impl FnOnce() -> Result<T>,
) -> Result<(T, ThreadCpu, u64)> {
    let Device::Switch { daemon, .. } = dev else {
        bail!("only a switch has threads to watch");
    };
    let (before, t0) = (ThreadCpu::read(daemon.pid())?, Instant::now());
    let out = f()?;
    let used = ThreadCpu::read(daemon.pid())?.since(&before);
    Ok((out, used, t0.elapsed().as_nanos() as u64))
}

/// The mean (offered, forwarded) pps of equally long trials: their ratio
/// is the fraction of all the offered frames that were forwarded.
fn mean(trials: &[(f64, f64)]) -> (f64, f64) {
    let n = trials.len().max(1) as f64;
    let (o, f) = trials
        .iter()
        .fold((0.0, 0.0), |(o, f), t| (o + t.0, f + t.1));
    (o / n, f / n)
}

/// The trial with the median forwarding rate.
fn median(mut trials: Vec<(f64, f64)>) -> (f64, f64) {
    trials.sort_by(|a, b| a.1.total_cmp(&b.1));
    trials.get(trials.len() / 2).copied().unwrap_or((0.0, 0.0))
}

fn measure(lab: &LineLab, kind: &DeviceKind, cli: &Cli, stop: &AtomicBool) -> Result<Vec<Figures>> {
    let mut dev = start_device(lab, kind, cli, stop)?;
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
        let _ = latency_phase(lab, size, 20, cli.probe_wait, stop)?;
        let drops_before = dev.drops()?;
        // Trials with and without writes alternate, so that both see the
        // same background load on this shared machine.
        let (mut plain, mut churned, mut writes) = (Vec::new(), Vec::new(), Vec::new());
        let (mut abused, mut tally) = (Vec::new(), AbuseTally::default());
        let (mut read, mut reads) = (Vec::new(), ReadTally::default());
        for _ in 0..cli.trials.max(1) {
            plain.push(load_phase(
                lab,
                size,
                cli.seconds,
                cli.batch,
                pairs,
                None,
                stop,
            )?);
            if extras
                && cli.writes_per_sec > 0
                && let Some((load, per_sec)) = load_while_writing(&mut dev, lab, size, cli, stop)?
            {
                churned.push(load);
                writes.push(per_sec);
            }
            if extras
                && cli.abuse_streams > 0
                && let Some((load, t)) = load_while_abused(&dev, lab, size, cli, None, stop)?
            {
                abused.push(load);
                tally.add(&t);
            }
            if extras && let Some((load, t)) = load_while_reading(&dev, lab, size, cli, None, stop)?
            {
                read.push(load);
                reads.add(&t);
            }
        }
        // At a fixed offered load the generator keeps up with and without
        // abuse or reads, so what is lost there is the switch's.
        let (mut paced, mut paced_abused, mut paced_read) = (Vec::new(), Vec::new(), Vec::new());
        let (mut cpu, mut cpu_abused, mut cpu_read) = (
            (ThreadCpu::default(), 0),
            (ThreadCpu::default(), 0),
            (ThreadCpu::default(), 0),
        );
        let paced_rate = cli.paced_fraction * median(plain.clone()).1;
        let reading = matches!(dev, Device::Switch { read: Some(_), .. });
        if extras && (cli.abuse_streams > 0 || reading) && paced_rate > 0.0 {
            for _ in 0..cli.trials.max(1) {
                let (load, used, wall) = switch_cpu_during(&dev, || {
                    load_phase(lab, size, cli.seconds, cli.batch, 1, Some(paced_rate), stop)
                })?;
                paced.push(load);
                cpu.0.add(&used);
                cpu.1 += wall;
                if cli.abuse_streams > 0 {
                    let (abused_load, used, wall) = switch_cpu_during(&dev, || {
                        load_while_abused(&dev, lab, size, cli, Some(paced_rate), stop)
                    })?;
                    if let Some((load, _)) = abused_load {
                        paced_abused.push(load);
                        cpu_abused.0.add(&used);
                        cpu_abused.1 += wall;
                    }
                }
                let (read_load, used, wall) = switch_cpu_during(&dev, || {
                    load_while_reading(&dev, lab, size, cli, Some(paced_rate), stop)
                })?;
                if let Some((load, _)) = read_load {
                    paced_read.push(load);
                    cpu_read.0.add(&used);
                    cpu_read.1 += wall;
                }
            }
        }
        let (switch_drops, kernel_drops) = match (drops_before, dev.drops()?) {
            (Some(b), Some(a)) => (Some(a.0.saturating_sub(b.0)), Some(a.1.saturating_sub(b.1))),
            _ => (None, None),
        };
        let (mut lat, probes_lost) = latency_phase(lab, size, cli.probes, cli.probe_wait, stop)?;
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
            reads: None,
            switch_threads: None,
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
        if !read.is_empty() {
            figs.push(Figures {
                reads: Some(reads),
                ..Figures::load_only(format!("{device}+r"), size, median(read))
            });
        }
        if !paced.is_empty() {
            figs.push(Figures::load_only(
                format!("{device}@paced"),
                size,
                mean(&paced),
            ));
        }
        // Each loaded paced figure carries the switch's threads' shares
        // without and with its load.
        if !paced.is_empty() && !paced_abused.is_empty() {
            figs.push(Figures {
                switch_threads: Some(cpu.0.compare(cpu.1, &cpu_abused.0, cpu_abused.1)),
                ..Figures::load_only(format!("{device}@paced+a"), size, mean(&paced_abused))
            });
        }
        if !paced.is_empty() && !paced_read.is_empty() {
            figs.push(Figures {
                switch_threads: Some(cpu.0.compare(cpu.1, &cpu_read.0, cpu_read.1)),
                ..Figures::load_only(format!("{device}@paced+r"), size, mean(&paced_read))
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
    // Before any thread starts, so the sink threads inherit it.
    if let Some(cpu) = cli.bench_cpu {
        pin_current_thread(&[cpu]).context("--bench-cpu")?;
    }
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
            let paced = find(&format!("{name}@paced"));
            if let (Some(p), Some(pa)) = (paced, find(&format!("{name}@paced+a"))) {
                print_paced(
                    name,
                    size,
                    cli.paced_fraction,
                    p,
                    pa,
                    "abuse",
                    "under abuse",
                );
            }
            if let Some(r) = find(&format!("{name}+r")) {
                let t = r.reads.unwrap_or_default();
                println!(
                    "{name} {size:>5} B: while a controller read {} entries back to back ({} wildcard reads, {:.2} s each on average, longest {:.2} s; the reader used {:.0} % of a core): fwd_pps x{:.3} of the rate without reads",
                    cli.read_entries,
                    t.reads,
                    t.read_ns as f64 / t.reads.max(1) as f64 / 1e9,
                    t.longest_ns as f64 / 1e9,
                    100.0 * t.cpu_ns as f64 / t.wall_ns.max(1) as f64,
                    r.forwarded_pps / s.forwarded_pps
                );
            }
            if let (Some(p), Some(pr)) = (paced, find(&format!("{name}@paced+r"))) {
                print_paced(
                    name,
                    size,
                    cli.paced_fraction,
                    p,
                    pr,
                    "reads",
                    "during reads",
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

/// The fraction forwarded at a fixed offered rate without (`plain`) and
/// with (`loaded`) an extra load (`what`, `with` naming it: "abuse",
/// "under abuse"), and the switch's threads' shares of a core meanwhile.
fn print_paced(
    name: &str,
    size: usize,
    paced_fraction: f64,
    plain: &Figures,
    loaded: &Figures,
    what: &str,
    with: &str,
) {
    let fraction = |f: &Figures| f.forwarded_pps / f.offered_pps.max(1.0);
    println!(
        "{name} {size:>5} B: at a fixed offered rate ({paced_fraction:.2} of the rate without {what}: {:.0} pps offered without, {:.0} {with}) forwarded {:.2} % without {what}, {:.2} % {with}: x{:.3}",
        plain.offered_pps,
        loaded.offered_pps,
        100.0 * fraction(plain),
        100.0 * fraction(loaded),
        fraction(loaded) / fraction(plain)
    );
    println!(
        "{name} {size:>5} B: its threads' share of a core at that rate, without/{with}: {}",
        loaded.switch_threads.as_deref().unwrap_or("-")
    );
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
