//! `soakbench`: `roceswitch` for a long time under everything at once, to
//! show that it neither loses track of a frame nor grows.
//!
//! ```text
//!  rl-sk<pid>-src [s0] ==== [m0] rl-sk<pid>-mid [m1] ==== [d0] rl-sk<pid>-dst
//!   mixed traffic            roceswitch (release)        sink + pause storms
//! ```
//!
//! For `--minutes` (default 10) the generator offers `--pps` frames/s of a
//! seeded mix: RoCEv2-marked frames (DSCP 26, UDP 4791: the lossless
//! priority), best-effort UDP, IPv4 headers cut short, IPv4 headers with a
//! bad checksum, LLDP, and random bytes from runts to 1500 bytes. A
//! controller inserts and deletes host routes at `--writes-per-sec` over
//! P4Runtime, and every `--storm-every` seconds the sink's side pauses the
//! lossless priority for `--storm-secs` (PFC XOFF every millisecond, a
//! pause storm the watchdog must break).
//!
//! Every `--sample-every` seconds one line: frames offered and received,
//! the switch's conservation check (`roceswitch_conservation_ok` and the
//! ledger sums from its `/metrics`), its resident memory and open file
//! descriptors. At the end: frames in and out, drops by reason, frames
//! still queued, the conservation check, resident memory after warm-up and
//! at the end (the aim: no growth beyond 1 MB), the descriptor count, the
//! storms sent and how many held their pause without a lapse (see
//! [`storms`]) against the storms the watchdog detected, and the exit
//! status is 1 if the ledger did not balance or a storm that held went
//! undetected.
//!
//! Before the soak proper, with the watchdog off, the sink's side pauses the
//! lossless priority until the switch drops a lossless frame for headroom
//! overflow, then resumes it (`--no-fill` skips this): the lossless queue
//! has then held the most its buffer configuration admits, so memory the
//! switch keeps for a full queue (bounded by that configuration) is in the
//! baseline, not counted as growth at whichever storm first goes deepest.
//! The warm-up (`--warmup`) ends, by default, 10 s after the first pause
//! storm has ended. Memory is sampled every `--sample-every`
//! seconds, so the lines show a step at a storm apart from a slow rise.
//!
//! Needs root; the namespaces and the switch are removed at the end, on
//! error and on Ctrl-C.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use clap::Parser;
use dataplane::wire::ethernet::EthernetAddress;
use dataplane::wire::pfc::{self, MacControlRepr, PfcRepr};
use lab::bench::{
    DST_MAC, LineSwitch, Marking, SRC_MAC, count_test_frames, line_routes, marked_frame,
    route_churn,
};
use lab::labctl::line::LineLab;
use lab::port::{AfPacketPort, FrameBuf, Port};
use lab::scenario::switchctl::{SwitchCtl, WatchdogSetting};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Parser)]
#[command(
    name = "soakbench",
    about = "roceswitch under mixed traffic, table churn and pause storms for a long time: conservation, memory, descriptors"
)]
struct Cli {
    /// How long to run, minutes.
    #[arg(long, default_value_t = 10.0)]
    minutes: f64,
    /// Frames per second offered (the whole mix).
    #[arg(long, default_value_t = 20_000)]
    pps: u32,
    /// Host-route inserts and deletes per second over P4Runtime; 0: none.
    #[arg(long, default_value_t = 1_000)]
    writes_per_sec: u32,
    /// Seconds between pause storms on the lossless priority; 0: none.
    #[arg(long, default_value_t = 60.0)]
    storm_every: f64,
    /// Length of a pause storm, seconds.
    #[arg(long, default_value_t = 2.0)]
    storm_secs: f64,
    /// Seconds between progress lines.
    #[arg(long, default_value_t = 30.0)]
    sample_every: f64,
    /// Seconds of warm-up before the memory baseline is taken. Default:
    /// until 10 s after the first pause storm ends (30 s without storms),
    /// so the baseline includes the queues filled once.
    #[arg(long)]
    warmup: Option<f64>,
    /// Skip filling the lossless queue to its limit before the soak (see
    /// `fill_lossless_queue`).
    #[arg(long)]
    no_fill: bool,
    /// Seed of the traffic mix.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The lossless priority the storms pause (DSCP 26 classifies to it).
const LOSSLESS_PRIORITY: u8 = 3;
/// `--metrics` address of the switch, inside its namespace.
const METRICS_ADDR: &str = "127.0.0.1:9464";

/// The switch under test, with what the soak watches of its process.
struct Daemon(LineSwitch);

impl Daemon {
    fn start(lab: &LineLab) -> Result<Daemon> {
        // The metrics endpoint listens on the namespace's loopback.
        lab::labctl::sys::ip(&["-n", lab.mid(), "link", "set", "lo", "up"])?;
        Ok(Daemon(LineSwitch::start(
            lab,
            "soakbench",
            &["--metrics", METRICS_ADDR],
        )?))
    }

    /// Resident memory, bytes (`VmRSS`).
    fn rss_bytes(&self) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.0.pid()))
            .context("reading the switch's /proc status")?;
        let kb = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .ok_or_else(|| anyhow!("no VmRSS in /proc/{}/status", self.0.pid()))?;
        Ok(kb * 1024)
    }

    /// Open file descriptors.
    fn fds(&self) -> Result<usize> {
        Ok(std::fs::read_dir(format!("/proc/{}/fd", self.0.pid()))
            .context("listing the switch's descriptors")?
            .count())
    }
}

/// One scrape of the switch's `/metrics`: every sample by its full name
/// with labels, e.g. `roceswitch_ledger_dropped_total{port="0",reason="parser_error"}`.
struct Metrics(BTreeMap<String, f64>);

impl Metrics {
    fn scrape(ns: &str) -> Result<Metrics> {
        let body = dataplane::port::netns::run_in(ns, || -> std::io::Result<String> {
            let mut s = std::net::TcpStream::connect(METRICS_ADDR)?;
            s.set_read_timeout(Some(Duration::from_secs(5)))?;
            s.write_all(b"GET /metrics HTTP/1.0\r\nHost: soak\r\n\r\n")?;
            let mut body = String::new();
            s.read_to_string(&mut body)?;
            Ok(body)
        })
        .context("entering the switch namespace")?
        .context("GET /metrics")?;
        let samples = body
            .lines()
            .filter(|l| l.starts_with("roceswitch_"))
            .filter_map(|l| {
                let (name, value) = l.rsplit_once(' ')?;
                Some((name.to_string(), value.parse().ok()?))
            })
            .collect();
        Ok(Metrics(samples))
    }

    /// Sum of every sample of `family` (all label sets).
    fn sum(&self, family: &str) -> u64 {
        self.0
            .iter()
            .filter(|(k, _)| {
                k.strip_prefix(family)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('{'))
            })
            .map(|(_, v)| *v as u64)
            .sum()
    }

    /// Sum of `family` by the value of label `label`.
    fn by_label(&self, family: &str, label: &str) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        let needle = format!("{label}=\"");
        for (k, v) in &self.0 {
            let Some(rest) = k.strip_prefix(family).and_then(|r| r.strip_prefix('{')) else {
                continue;
            };
            if let Some(at) = rest.find(&needle) {
                let value = &rest[at + needle.len()..];
                let value = value.split('"').next().unwrap_or_default();
                *out.entry(value.to_string()).or_default() += *v as u64;
            }
        }
        out
    }

    fn conservation_ok(&self) -> bool {
        self.0.get("roceswitch_conservation_ok") == Some(&1.0)
    }
}

/// The traffic mix, from a seeded generator: the same seed gives the same
/// frames.
struct Mix(ChaCha8Rng);

impl Mix {
    fn new(seed: u64) -> Mix {
        Mix(ChaCha8Rng::seed_from_u64(seed))
    }

    /// The next frame of the mix, and whether the switch should forward
    /// it to the sink (the well-formed ones, numbered `seq`).
    fn frame(&mut self, seq: u32) -> (Vec<u8>, bool) {
        let size = self.0.gen_range(64..=1024);
        let kind = self.0.gen_range(0..16);
        let f = match kind {
            // The test payload sits where a BTH would: from 128 bytes it
            // parses as a (meaningless but whole) BTH + RETH; shorter, the
            // switch rightly drops it as a truncated RoCE packet.
            0..=7 => marked_frame(
                size.max(128),
                seq,
                0,
                Marking {
                    dscp: 26,
                    udp_dst: 4791,
                },
            ),
            8..=11 => marked_frame(size, seq, 0, Marking::BEST_EFFORT),
            12 => {
                // An IPv4 header cut short: Ethernet + 10 bytes.
                let mut f = marked_frame(64, seq, 0, Marking::BEST_EFFORT);
                f.truncate(24);
                f
            }
            13 => {
                let mut f = marked_frame(size, seq, 0, Marking::BEST_EFFORT);
                f[24] ^= 0x5a;
                f
            }
            14 => lldp_frame(),
            _ => {
                // Runts (from a bare Ethernet header) to full-size frames.
                let mut f = vec![0u8; self.0.gen_range(14..=1500)];
                self.0.fill(&mut f[..]);
                // Never a MAC Control frame: the storms are the only pauses.
                if f.len() >= 14 && f[12..14] == [0x88, 0x08] {
                    f[12] = 0;
                }
                f
            }
        };
        (f, kind <= 11)
    }
}

/// An LLDP frame (chassis, port and TTL TLVs, End) to the nearest bridge.
fn lldp_frame() -> Vec<u8> {
    let mut f = vec![0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e];
    f.extend_from_slice(&SRC_MAC);
    f.extend_from_slice(&[0x88, 0xcc]);
    // Chassis ID (MAC), port ID (interface name "s0"), TTL 120, End.
    f.extend_from_slice(&[0x02, 0x07, 0x04]);
    f.extend_from_slice(&SRC_MAC);
    f.extend_from_slice(&[0x04, 0x03, 0x05, b's', b'0']);
    f.extend_from_slice(&[0x06, 0x02, 0x00, 120, 0x00, 0x00]);
    f.resize(60, 0);
    f
}

/// Frames the generator sends at once.
const BATCH: usize = 32;

/// Counts of the traffic threads.
#[derive(Default)]
struct Traffic {
    offered: AtomicU64,
    forwardable: AtomicU64,
    received: Arc<AtomicU64>,
    pauses: AtomicU64,
    storms: std::sync::Mutex<StormLog>,
}

/// The switch's line rate: [`LineSwitch`] starts it with `--speed 10G`.
const LINE_BPS: u64 = 10_000_000_000;
/// How often a storm refreshes its XOFF.
const XOFF_EVERY: Duration = Duration::from_millis(1);

/// How long one XOFF of the storms (full quanta) pauses the switch's port.
fn pause_time() -> Duration {
    Duration::from_nanos(dataplane::time::pause_quanta_to_duration(0xffff, LINE_BPS).as_nanos())
}

/// What the storm thread sent: per storm, the longest time between two
/// XOFFs. A storm with a gap longer than [`pause_time`] let the pause
/// lapse: the queue sent in that gap, so by R-WD-5 it was not stormed then
/// and the watchdog rightly starts counting again.
#[derive(Clone, Debug, Default)]
struct StormLog {
    /// Longest gap between two XOFFs of each storm sent so far.
    longest_gaps: Vec<Duration>,
    /// Whether the storm thread got real-time scheduling.
    realtime: bool,
}

impl StormLog {
    /// Storms that held the pause without a lapse.
    fn held(&self, pause: Duration) -> usize {
        self.longest_gaps.iter().filter(|&&g| g <= pause).count()
    }
}

/// Gives the calling thread real-time scheduling (`SCHED_FIFO`, the lowest
/// priority), so a timer wake-up runs at once whatever else the two cores
/// run; returns `false` (the thread keeps its scheduling) if refused.
fn realtime_thread() -> bool {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: sched_setscheduler on the calling thread with a valid param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

fn generator(
    lab: &LineLab,
    cli: &Cli,
    traffic: Arc<Traffic>,
    done: Arc<AtomicBool>,
) -> Result<std::thread::JoinHandle<Result<()>>> {
    let mut src = AfPacketPort::open_in_netns(lab.src(), "s0")?;
    let (pps, seed) = (cli.pps.max(1), cli.seed);
    Ok(std::thread::spawn(move || {
        let mut mix = Mix::new(seed);
        let tick = Duration::from_secs_f64(BATCH as f64 / f64::from(pps));
        let mut bufs = FrameBuf::batch(BATCH);
        let (mut seq, mut next) = (0u32, Instant::now());
        while !done.load(Ordering::Relaxed) {
            let mut for_sink = [false; BATCH];
            for (b, to_sink) in bufs.iter_mut().zip(&mut for_sink) {
                let (f, forwardable) = mix.frame(seq);
                *to_sink = forwardable;
                seq = seq.wrapping_add(1);
                b.set_frame(&f);
            }
            let sent = src.send_batch(&bufs)?;
            traffic.offered.fetch_add(sent as u64, Ordering::Relaxed);
            let for_sink = for_sink[..sent].iter().filter(|&&n| n).count();
            traffic
                .forwardable
                .fetch_add(for_sink as u64, Ordering::Relaxed);
            next += tick;
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        Ok(())
    }))
}

/// Pauses the lossless priority from the sink's side: XOFF (full quanta)
/// every millisecond for `storm_secs`, every `storm_every` seconds.
///
/// A peer in a pause storm holds its pause without a break, as a NIC
/// refreshes XOFF in hardware. An XOFF pauses the switch's port for
/// 3.36 ms at 10 Gb/s, so the thread must never sleep through that: at
/// normal priority, on two cores shared with builds (load 15–22), it slept
/// through it every few milliseconds, the queue drained in the gaps, and
/// the watchdog (which by R-WD-5 needs a queue that sent nothing for a
/// whole poll) took 0.3–1.9 s to see a storm and missed 3 of 11
/// (`soakbench --minutes 4 --no-fill --storm-every 20`). The thread runs
/// `SCHED_FIFO` (the lowest real-time priority; it only sends a 60-byte
/// frame a millisecond). Even so it was held up 5–10 ms now and then on
/// that machine, so it records each storm's longest gap between XOFFs and
/// a storm that lapsed is reported as such.
fn storms(
    lab: &LineLab,
    cli: &Cli,
    traffic: Arc<Traffic>,
    done: Arc<AtomicBool>,
) -> Result<Option<std::thread::JoinHandle<Result<()>>>> {
    if cli.storm_every <= 0.0 {
        return Ok(None);
    }
    let mut port = AfPacketPort::open_in_netns(lab.dst(), "d0")?;
    let (every, length) = (
        Duration::from_secs_f64(cli.storm_every),
        Duration::from_secs_f64(cli.storm_secs),
    );
    let xoff = [pfc_frame(true)?];
    Ok(Some(std::thread::spawn(move || {
        let realtime = realtime_thread();
        traffic.storms.lock().expect("storm log").realtime = realtime;
        if !realtime {
            eprintln!("soakbench: no SCHED_FIFO for the storm thread: its pauses may lapse");
        }
        let mut storm_at = Instant::now() + every;
        while !done.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now < storm_at {
                std::thread::sleep((storm_at - now).min(Duration::from_millis(100)));
                continue;
            }
            let longest = hold_pause(&mut port, &xoff, &traffic, || {
                storm_at.elapsed() < length && !done.load(Ordering::Relaxed)
            })?;
            if done.load(Ordering::Relaxed) {
                // Cut short by the end of the soak: not a whole storm.
                break;
            }
            traffic
                .storms
                .lock()
                .expect("storm log")
                .longest_gaps
                .push(longest);
            storm_at += every;
        }
        Ok(())
    })))
}

/// Holds the lossless priority paused from the sink's side while `keep()`:
/// an XOFF every [`XOFF_EVERY`] on a fixed grid (a late wake-up does not
/// shift the rest). Returns the longest gap between two XOFFs. Run it on a
/// real-time thread ([`realtime_thread`]), or the pause lapses on loaded
/// cores (see [`storms`]).
fn hold_pause(
    port: &mut AfPacketPort,
    xoff: &[FrameBuf],
    traffic: &Traffic,
    keep: impl Fn() -> bool,
) -> Result<Duration> {
    let (mut last, mut longest) = (None::<Instant>, Duration::ZERO);
    let mut next = Instant::now();
    while keep() {
        let sent = port.send_batch(xoff)?;
        let sent_at = Instant::now();
        if let Some(last) = last {
            longest = longest.max(sent_at - last);
        }
        last = Some(sent_at);
        traffic.pauses.fetch_add(sent as u64, Ordering::Relaxed);
        next += XOFF_EVERY;
        match next.checked_duration_since(Instant::now()) {
            Some(wait) => std::thread::sleep(wait),
            None => next = Instant::now(),
        }
    }
    Ok(longest)
}

/// One PFC frame for the lossless priority: XOFF with full quanta, or XON.
fn pfc_frame(xoff: bool) -> Result<FrameBuf> {
    let repr = if xoff {
        PfcRepr::xoff(1 << LOSSLESS_PRIORITY, 0xffff)
    } else {
        PfcRepr::xon(1 << LOSSLESS_PRIORITY)
    };
    let mut bytes = [0u8; pfc::FRAME_LEN];
    pfc::emit_frame(
        EthernetAddress(DST_MAC),
        &MacControlRepr::Pfc(repr),
        &mut bytes,
    )?;
    let mut frame = FrameBuf::default();
    frame.set_frame(&bytes);
    Ok(frame)
}

/// Fills the lossless queue to the most the switch's buffer configuration
/// admits, with the watchdog off, before the soak proper: the sink's side
/// pauses the lossless priority (XOFF every millisecond) until the switch
/// drops a lossless frame for `headroom_overflow` (its PG's headroom is
/// full, so nothing more can queue), then resumes it and lets the queue
/// drain. A storm the watchdog breaks queues as much as arrives before it
/// polls, which differs from storm to storm (and a storm it misses queues
/// for its whole length): the memory a full queue needs would otherwise
/// arrive after the baseline, at whichever storm first went deepest.
/// The pause is held by [`hold_pause`] on a real-time thread (at normal
/// priority it lapsed on loaded cores and the queue never filled). Returns
/// how long the queue took to fill.
fn fill_lossless_queue(lab: &LineLab, traffic: &Arc<Traffic>, limit: Duration) -> Result<Duration> {
    let mut port = AfPacketPort::open_in_netns(lab.dst(), "d0")?;
    let (xoff, xon) = ([pfc_frame(true)?], [pfc_frame(false)?]);
    let full = Arc::new(AtomicBool::new(false));
    let holder = {
        let (traffic, full) = (traffic.clone(), full.clone());
        std::thread::spawn(move || -> Result<AfPacketPort> {
            realtime_thread();
            hold_pause(&mut port, &xoff, &traffic, || !full.load(Ordering::Relaxed))?;
            Ok(port)
        })
    };
    let overflowed = || -> Result<u64> {
        Ok(Metrics::scrape(lab.mid())?
            .by_label("roceswitch_ledger_dropped_total", "reason")
            .get("headroom_overflow")
            .copied()
            .unwrap_or(0))
    };
    let before = overflowed()?;
    let started = Instant::now();
    let filled = loop {
        std::thread::sleep(Duration::from_millis(100));
        match overflowed() {
            Ok(n) if n > before => break Ok(started.elapsed()),
            Ok(_) if started.elapsed() > limit => {
                break Err(anyhow!("the lossless queue did not fill within {limit:?}"));
            }
            Ok(_) => {}
            Err(e) => break Err(e),
        }
    };
    full.store(true, Ordering::Relaxed);
    let mut port = holder
        .join()
        .map_err(|_| anyhow!("the pause thread panicked"))??;
    let took = filled?;
    port.send_batch(&xon)?;
    std::thread::sleep(Duration::from_secs(2));
    Ok(took)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let stop = lab::signal::stop_flag();
    let lab = LineLab::create(&format!("sk{}", std::process::id()))
        .context("building the soak namespaces")?;
    let daemon = Daemon::start(&lab)?;
    let mut ctl = SwitchCtl::connect(&daemon.0.addr(), Duration::from_secs(10), stop)?;
    ctl.set_routes(&line_routes())?;
    let (start_rss, start_fds) = (daemon.rss_bytes()?, daemon.fds()?);
    let traffic = Arc::new(Traffic::default());
    let done = Arc::new(AtomicBool::new(false));
    let mut threads = vec![
        Some(count_test_frames(
            AfPacketPort::open_in_netns(lab.dst(), "d0")?,
            64,
            traffic.received.clone(),
            done.clone(),
        )),
        Some(generator(&lab, &cli, traffic.clone(), done.clone())?),
    ];
    let filled = if cli.storm_every > 0.0 && !cli.no_fill {
        ctl.set_watchdog(None)?;
        Some(fill_lossless_queue(
            &lab,
            &traffic,
            Duration::from_secs(60),
        )?)
    } else {
        None
    };
    // R-WD-2 defaults: a queue paused for 200 ms is stormed, its frames
    // dropped, and it is restored 200 ms after the pauses stop.
    ctl.set_watchdog(Some(WatchdogSetting {
        detection_time_ms: 200,
        restoration_time_ms: 200,
        poll_interval_ms: 100,
        drop: true,
    }))?;
    threads.push(storms(&lab, &cli, traffic.clone(), done.clone())?);
    let churn = (cli.writes_per_sec > 0)
        .then(|| route_churn(Box::new(ctl), cli.writes_per_sec, done.clone()));

    let started = Instant::now();
    let length = Duration::from_secs_f64(cli.minutes * 60.0);
    let sample = Duration::from_secs_f64(cli.sample_every.max(1.0));
    let warmup_secs = cli.warmup.unwrap_or(if cli.storm_every > 0.0 {
        cli.storm_every + cli.storm_secs + 10.0
    } else {
        30.0
    });
    let warmup = Duration::from_secs_f64(warmup_secs);
    let mut baseline: Option<(u64, usize)> = None;
    let mut balanced_every_time = true;
    let mut next = started + sample;
    println!(
        "{:>7} {:>11} {:>11} {:>11} {:>11} {:>6} {:>9} {:>4}",
        "t_s", "offered", "received", "sw_arrived", "sw_forward", "ledger", "rss_MiB", "fds"
    );
    while started.elapsed() < length && !stop.load(Ordering::Relaxed) {
        if baseline.is_none() && started.elapsed() >= warmup {
            baseline = Some((daemon.rss_bytes()?, daemon.fds()?));
        }
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(200)));
            continue;
        }
        next += sample;
        let m = Metrics::scrape(lab.mid())?;
        balanced_every_time &= m.conservation_ok();
        println!(
            "{:>7.0} {:>11} {:>11} {:>11} {:>11} {:>6} {:>9.1} {:>4}",
            started.elapsed().as_secs_f64(),
            traffic.offered.load(Ordering::Relaxed),
            traffic.received.load(Ordering::Relaxed),
            m.sum("roceswitch_ledger_arrived_frames_total"),
            m.sum("roceswitch_ledger_forwarded_total"),
            if m.conservation_ok() { "ok" } else { "FAIL" },
            mib(daemon.rss_bytes()?),
            daemon.fds()?,
        );
    }
    done.store(true, Ordering::Relaxed);
    for t in threads.into_iter().flatten() {
        t.join()
            .map_err(|_| anyhow!("a traffic thread panicked"))??;
    }
    if let Some(c) = churn {
        c.join()
            .map_err(|_| anyhow!("the controller thread panicked"))?
            .context("churning routes")?;
    }
    if stop.load(Ordering::Relaxed) {
        bail!("interrupted");
    }
    // Let the queues drain (a storm may just have ended) before the books close.
    std::thread::sleep(Duration::from_millis(500));
    let m = Metrics::scrape(lab.mid())?;
    let (end_rss, end_fds) = (daemon.rss_bytes()?, daemon.fds()?);
    let (base_rss, base_fds) = baseline.unwrap_or((start_rss, start_fds));
    let ok = balanced_every_time && m.conservation_ok();
    let storms_ok = {
        let storms = traffic.storms.lock().expect("storm log");
        m.sum("roceswitch_watchdog_storms_total") >= storms.held(pause_time()) as u64
    };
    let secs = started.elapsed().as_secs_f64();

    println!();
    println!(
        "soak: {:.1} min, {} frames/s offered, {} route writes/s, pause storms of {} s every {} s",
        secs / 60.0,
        cli.pps,
        cli.writes_per_sec,
        cli.storm_secs,
        cli.storm_every
    );
    println!(
        "  generator: {} frames offered ({} well-formed for the sink), sink: {} received, {} PFC XOFF frames sent",
        traffic.offered.load(Ordering::Relaxed),
        traffic.forwardable.load(Ordering::Relaxed),
        traffic.received.load(Ordering::Relaxed),
        traffic.pauses.load(Ordering::Relaxed)
    );
    println!(
        "  switch: {} frames in, {} forwarded, {} consumed (PFC, LLDP), {} still queued",
        m.sum("roceswitch_ledger_arrived_frames_total"),
        m.sum("roceswitch_ledger_forwarded_total"),
        m.sum("roceswitch_ledger_consumed_frames_total"),
        m.sum("roceswitch_ledger_queued")
    );
    println!("  drops by reason:");
    for (reason, n) in m.by_label("roceswitch_ledger_dropped_total", "reason") {
        if n > 0 {
            println!("    {reason:<24} {n}");
        }
    }
    let storms = traffic.storms.lock().expect("storm log").clone();
    let detected = m.sum("roceswitch_watchdog_storms_total");
    let held = storms.held(pause_time());
    let longest = storms
        .longest_gaps
        .iter()
        .max()
        .copied()
        .unwrap_or_default();
    println!(
        "  pause storms: {} sent ({}), {held} held without a lapse (longest gap between two XOFFs {:.2} ms; one pauses {:.2} ms); watchdog storms detected: {detected}",
        storms.longest_gaps.len(),
        if storms.realtime {
            "storm thread SCHED_FIFO"
        } else {
            "storm thread NOT real-time"
        },
        longest.as_secs_f64() * 1e3,
        pause_time().as_secs_f64() * 1e3,
    );
    let missed = (held as u64).saturating_sub(detected);
    if missed > 0 {
        println!("  MISSED: {missed} storms held their pause but the watchdog did not detect them");
    }
    println!(
        "  conservation: {}",
        if ok {
            "every sample balanced (frames in = forwarded + consumed + dropped by reason + queued)"
        } else {
            "IMBALANCE (see roceswitch_conservation_ok)"
        }
    );
    println!(
        "  resident memory: {:.1} MiB at start, {:.1} MiB after {:.0} s warm-up, {:.1} MiB at the end: {:+.2} MiB since warm-up (aim: within 1 MiB)",
        mib(start_rss),
        mib(base_rss),
        warmup_secs,
        mib(end_rss),
        (end_rss as f64 - base_rss as f64) / (1 << 20) as f64
    );
    if let Some(took) = filled {
        println!(
            "  before the soak: the lossless queue filled to headroom overflow in {:.1} s (watchdog off), then drained",
            took.as_secs_f64()
        );
    }
    println!(
        "  file descriptors: {start_fds} at start, {base_fds} after warm-up, {end_fds} at the end"
    );
    drop(daemon);
    drop(lab);
    if !ok || !storms_ok {
        std::process::exit(1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_is_seeded_and_has_every_kind() {
        let (mut a, mut b) = (Mix::new(7), Mix::new(7));
        let frames: Vec<(Vec<u8>, bool)> = (0..2000).map(|i| a.frame(i)).collect();
        assert!(frames.iter().zip(0..).all(|(f, i)| *f == b.frame(i)));
        for (f, forwardable) in &frames {
            if *forwardable {
                assert_eq!(dataplane::wire::ip::ones_complement_sum(&f[14..34]), 0xffff);
            }
        }
        let frames: Vec<Vec<u8>> = frames.into_iter().map(|(f, _)| f).collect();
        let roce = frames
            .iter()
            .filter(|f| f.len() > 37 && u16::from_be_bytes([f[36], f[37]]) == 4791)
            .count();
        let lldp = frames.iter().filter(|f| f[12..14] == [0x88, 0xcc]).count();
        let cut = frames.iter().filter(|f| f.len() == 24).count();
        let mac_control = frames
            .iter()
            .filter(|f| f.len() >= 14 && f[12..14] == [0x88, 0x08])
            .count();
        assert!(roce > 800 && lldp > 60 && cut > 60, "{roce} {lldp} {cut}");
        assert_eq!(mac_control, 0, "pauses come only from the storms");
    }

    #[test]
    fn a_storm_held_only_if_no_gap_outlasted_the_pause() {
        // Full quanta at 10 Gb/s: 65,535 × 512 bits = 3.355 ms.
        assert_eq!(pause_time(), Duration::from_nanos(3_355_392));
        let log = StormLog {
            longest_gaps: vec![
                Duration::from_micros(1_100),
                Duration::from_nanos(3_355_392),
                Duration::from_nanos(3_355_393),
                Duration::from_millis(12),
            ],
            realtime: true,
        };
        assert_eq!(log.held(pause_time()), 2);
    }

    #[test]
    fn metrics_are_summed_by_family_and_label() {
        let m = Metrics(
            [
                (
                    "roceswitch_ledger_dropped_total{port=\"0\",reason=\"parser_error\"}",
                    3.0,
                ),
                (
                    "roceswitch_ledger_dropped_total{port=\"1\",reason=\"parser_error\"}",
                    2.0,
                ),
                (
                    "roceswitch_ledger_dropped_total{port=\"0\",reason=\"no_route\"}",
                    1.0,
                ),
                ("roceswitch_ledger_dropped_totally_else", 9.0),
                ("roceswitch_conservation_ok", 1.0),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        );
        assert_eq!(m.sum("roceswitch_ledger_dropped_total"), 6);
        let by = m.by_label("roceswitch_ledger_dropped_total", "reason");
        assert_eq!(by["parser_error"], 5);
        assert_eq!(by["no_route"], 1);
        assert!(m.conservation_ok());
    }
}
