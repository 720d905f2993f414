//! `relaybench`: the forwarding rate of a bare AF_PACKET relay between two
//! namespaces, the baseline the switch is compared to.
//!
//! ```text
//!  rl-rb<pid>-src [s0] ==== [m0] rl-rb<pid>-mid [m1] ==== [d0] rl-rb<pid>-dst
//!   generator (sendmmsg)     relay: recv_batch m0 → send_batch m1     sink
//! ```
//!
//! For each frame size a generator thread blasts frames for `--seconds`, a
//! relay thread forwards them with [`lab::port`] batches, a sink counts.
//! Prints offered, relayed and delivered rates in packets/s and the loss.
//! All three threads share the machine's cores, as on our 2-vCPU VMs, so
//! compare ratios measured in one run (packet-io.md). Needs root; the
//! namespaces are removed at the end, on error and on Ctrl-C.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use lab::labctl::line::LineLab;
use lab::port::{AfPacketPort, FrameBuf, Port};

#[derive(Parser)]
#[command(
    name = "relaybench",
    about = "AF_PACKET relay forwarding rate between namespaces"
)]
struct Cli {
    /// Frame sizes in bytes (without FCS).
    #[arg(long, value_delimiter = ',', default_value = "64,1024")]
    sizes: Vec<usize>,
    /// Seconds per size.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Frames per batch.
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// JSON lines instead of a table.
    #[arg(long)]
    json: bool,
}

struct Figures {
    size: usize,
    offered_pps: f64,
    relayed_pps: f64,
    delivered_pps: f64,
    loss_pct: f64,
}

fn run_size(
    lab: &LineLab,
    size: usize,
    secs: f64,
    batch: usize,
    stop: &'static AtomicBool,
) -> Result<Figures> {
    let mut src = AfPacketPort::open_in_netns(lab.src(), "s0")?;
    let mut r0 = AfPacketPort::open_in_netns(lab.mid(), "m0")?;
    let mut r1 = AfPacketPort::open_in_netns(lab.mid(), "m1")?;
    let mut dst = AfPacketPort::open_in_netns(lab.dst(), "d0")?;
    let done = Arc::new(AtomicBool::new(false));
    let relayed = Arc::new(AtomicU64::new(0));
    let delivered = Arc::new(AtomicU64::new(0));
    let (d1, d2) = (done.clone(), done.clone());
    let (rel, del) = (relayed.clone(), delivered.clone());
    let relay = std::thread::spawn(move || -> Result<()> {
        let mut bufs = FrameBuf::batch(batch);
        while !d1.load(Ordering::Relaxed) {
            let n = r0.recv_batch(&mut bufs)?;
            if n == 0 {
                r0.wait_readable(Some(Duration::from_millis(5)))?;
                continue;
            }
            // Forward all of them; a full queue drops the rest (counted as loss).
            let mut off = 0;
            for _ in 0..100 {
                off += r1.send_batch(&bufs[off..n])?;
                if off == n {
                    break;
                }
            }
            rel.fetch_add(off as u64, Ordering::Relaxed);
        }
        Ok(())
    });
    let sink = std::thread::spawn(move || -> Result<()> {
        let mut bufs = FrameBuf::batch(batch);
        while !d2.load(Ordering::Relaxed) {
            let n = dst.recv_batch(&mut bufs)?;
            if n == 0 {
                dst.wait_readable(Some(Duration::from_millis(5)))?;
            }
            del.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(())
    });
    let mut frames = FrameBuf::batch(batch);
    for (i, f) in frames.iter_mut().enumerate() {
        let mut v = vec![0u8; size.max(60)];
        v[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        v[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        v[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
        v[14] = i as u8;
        f.set_frame(&v);
    }
    let t0 = Instant::now();
    let dur = Duration::from_secs_f64(secs);
    let mut offered = 0u64;
    while t0.elapsed() < dur && !stop.load(Ordering::Relaxed) {
        let n = src.send_batch(&frames)?;
        offered += n as u64;
        if n == 0 {
            std::thread::yield_now();
        }
    }
    let elapsed = t0.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_millis(200));
    done.store(true, Ordering::Relaxed);
    relay
        .join()
        .map_err(|_| anyhow::anyhow!("relay thread panicked"))??;
    sink.join()
        .map_err(|_| anyhow::anyhow!("sink thread panicked"))??;
    let (rel, del) = (
        relayed.load(Ordering::Relaxed),
        delivered.load(Ordering::Relaxed),
    );
    Ok(Figures {
        size,
        offered_pps: offered as f64 / elapsed,
        relayed_pps: rel as f64 / elapsed,
        delivered_pps: del as f64 / elapsed,
        loss_pct: if offered == 0 {
            0.0
        } else {
            100.0 * (offered.saturating_sub(del)) as f64 / offered as f64
        },
    })
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let stop = lab::signal::stop_flag();
    let lab = LineLab::create(&format!("rb{}", std::process::id()))
        .context("building the bench namespaces")?;
    if !cli.json {
        println!(
            "{:>6} {:>12} {:>12} {:>12} {:>7}",
            "bytes", "offered_pps", "relayed_pps", "deliv_pps", "loss%"
        );
    }
    for &size in &cli.sizes {
        let f = run_size(&lab, size, cli.seconds, cli.batch.clamp(1, 1024), stop)
            .with_context(|| format!("size {size}"))?;
        if cli.json {
            println!(
                "{}",
                serde_json::json!({"bytes": f.size, "offered_pps": f.offered_pps, "relayed_pps": f.relayed_pps,
                    "delivered_pps": f.delivered_pps, "loss_pct": f.loss_pct})
            );
        } else {
            println!(
                "{:>6} {:>12.0} {:>12.0} {:>12.0} {:>7.2}",
                f.size, f.offered_pps, f.relayed_pps, f.delivered_pps, f.loss_pct
            );
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    drop(lab);
    Ok(())
}
