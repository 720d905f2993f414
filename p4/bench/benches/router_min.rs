//! The router comparison of `router.rs` measured so that a busy machine
//! does not blur it: each figure is the fastest of many short batches
//! (1,000 packets each; all variants interleaved), so time a batch spent
//! descheduled drops out instead of inflating the mean. Prints ns a packet,
//! the ratio compiled ÷ hand-written (as a rate), and what the packet-trace
//! points cost an untraced packet (compiled against the
//! `--no-trace-points` build) twice: with the packet struct a local of the
//! call, as the ratio is measured, and in memory behind a pointer, as the
//! switch keeps it (see `run_compiled_in`). With the struct local, the
//! build without trace points can keep it in registers, which the traced
//! build cannot (a traced packet's struct goes to the out-of-line traced
//! code), so the first figure overstates what tracing costs a switch.
//!
//! Run: `cargo bench -p p4-bench --bench router_min`.
//!
//! `-- --count N [--hand] [case]` instead sends N packets through the
//! compiled router (or the hand-written one) of each selected case and
//! times nothing: under `valgrind --tool=callgrind`, the difference between
//! two counts' instruction totals divided by the difference in N is the
//! instructions a packet, a figure a loaded machine does not blur.

use std::hint::black_box;
use std::time::Instant;

use p4_bench::untraced;
use p4_bench::workload::{acl_entries, frame, load, loaded, routes, run_compiled, run_compiled_in};
use p4_target::pipeline::Pipeline;

const BATCH: usize = 1_000;
const BATCHES: usize = 3_000;

fn main() {
    // `cargo bench -p p4-bench --bench router_min -- 10_routes` runs only
    // the cases whose name contains the argument (for `perf record`).
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = args.iter().position(|a| a == "--count").map(|i| {
        args.get(i + 1)
            .and_then(|n| n.parse::<usize>().ok())
            .expect("--count N")
    });
    let hand_only = args.iter().any(|a| a == "--hand");
    let filter = args
        .iter()
        .enumerate()
        .find(|&(i, a)| !a.starts_with('-') && (i == 0 || args[i - 1] != "--count"))
        .map(|(_, a)| a.clone());
    if count.is_none() {
        println!(
            "{:<26} {:>12} {:>12} {:>7} {:>12} {:>11} {:>16}",
            "case",
            "compiled ns",
            "hand ns",
            "ratio",
            "untraced ns",
            "trace cost",
            "in memory: cost"
        );
    }
    for (n_routes, n_acl) in [(10, 0), (10_000, 0), (10_000, 1_000)] {
        let label = format!("{n_routes}_routes_{n_acl}_acl");
        if filter.as_ref().is_some_and(|f| !label.contains(f.as_str())) {
            continue;
        }
        let routes = routes(n_routes, 11);
        let acl = acl_entries(n_acl, 13);
        let (mut program, mut hand) = loaded(&routes, &acl);
        let mut bare = untraced::Program::new();
        load(&mut bare, &routes, &acl);
        let pkts: Vec<Vec<u8>> = (0..1024)
            .map(|i| frame(routes[i % routes.len()].3, 0xc000 + i as u16))
            .collect();
        let mut out = Vec::with_capacity(256);
        if let Some(n) = count {
            for i in 0..n {
                let pkt = &pkts[i & 1023];
                if hand_only {
                    black_box(hand.process(pkt, &mut out));
                } else {
                    black_box(run_compiled(&mut program, pkt, &mut out));
                }
            }
            println!(
                "{label}: {n} packets through the {} router",
                if hand_only {
                    "hand-written"
                } else {
                    "compiled"
                }
            );
            continue;
        }
        let (mut best_c, mut best_h, mut best_u) = (f64::MAX, f64::MAX, f64::MAX);
        // The packet struct in memory, behind a pointer the optimiser
        // cannot see through, for both builds.
        let mut slot = <p4_bench::compiled::Program as Pipeline>::Packet::default();
        let mut bare_slot = <untraced::Program as Pipeline>::Packet::default();
        let (slot, bare_slot) = black_box((&mut slot, &mut bare_slot));
        let (mut best_cm, mut best_um) = (f64::MAX, f64::MAX);
        let mut i = 0usize;
        for _ in 0..BATCHES {
            let t = Instant::now();
            for _ in 0..BATCH {
                i = (i + 1) & 1023;
                black_box(run_compiled(&mut program, &pkts[i], &mut out));
            }
            best_c = best_c.min(t.elapsed().as_nanos() as f64 / BATCH as f64);
            let t = Instant::now();
            for _ in 0..BATCH {
                i = (i + 1) & 1023;
                black_box(hand.process(&pkts[i], &mut out));
            }
            best_h = best_h.min(t.elapsed().as_nanos() as f64 / BATCH as f64);
            let t = Instant::now();
            for _ in 0..BATCH {
                i = (i + 1) & 1023;
                black_box(run_compiled(&mut bare, &pkts[i], &mut out));
            }
            best_u = best_u.min(t.elapsed().as_nanos() as f64 / BATCH as f64);
        }
        // The trace cost again, the two builds alone, packets in memory.
        for _ in 0..BATCHES {
            let t = Instant::now();
            for _ in 0..BATCH {
                i = (i + 1) & 1023;
                black_box(run_compiled_in(&mut program, slot, &pkts[i], &mut out));
            }
            best_cm = best_cm.min(t.elapsed().as_nanos() as f64 / BATCH as f64);
            let t = Instant::now();
            for _ in 0..BATCH {
                i = (i + 1) & 1023;
                black_box(run_compiled_in(&mut bare, bare_slot, &pkts[i], &mut out));
            }
            best_um = best_um.min(t.elapsed().as_nanos() as f64 / BATCH as f64);
        }
        println!(
            "{:<26} {best_c:>12.1} {best_h:>12.1} {:>7.2} {best_u:>12.1} {:>10.1}% {:>15.1}%",
            label,
            best_h / best_c,
            (best_c / best_u - 1.0) * 100.0,
            (best_cm / best_um - 1.0) * 100.0
        );
    }
}
