//! `roce_switch.p4` as compiled into the dataplane: one RoCEv2 RDMA WRITE
//! through parse → classify → LPM over 10,000 routes → ECMP over 8 members →
//! egress RED/ECN → deparse, on one core. The deparser rewrites the headers
//! in the buffer the frame arrived in (`Pipeline::deparse_in_place`, as the
//! switch does); the 1 KiB payload is not copied.
//!
//! Run: `cargo bench -p dataplane --bench roce_pipeline`. With `-- --min`
//! it prints instead the fastest of many short batches (ns a packet), which
//! a loaded machine blurs far less than criterion's mean; `-- --min
//! --stages` prints it for the pipeline stopped after each stage, and for
//! the whole pipeline on a packet parsed by value (`Pipeline::parse`, as
//! the switch core called it before its packet slots) instead of in place;
//! `-- --min --switch` prints the fastest batch through the switch core
//! itself (`Switch`: MAC classification, parser, ingress, replication, the
//! traffic manager's queues, egress, deparser, out as an owned buffer).

use criterion::{BatchSize, Criterion, Throughput, criterion_group};
use dataplane::roce::{PROGRAM_INFO, Program};
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::Instant;
use p4_target::dynamic::{Switchable, erase};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeApi, TableEntry};
use p4_target::v1model::StandardMetadata;

fn action(name: &str, params: &[u128]) -> ActionCall {
    ActionCall::new(PROGRAM_INFO.action_by_name(name).unwrap().id, params)
}

fn insert(p: &mut Program, table: &str, matches: Vec<Option<FieldMatch>>, action: EntryAction) {
    let id = PROGRAM_INFO.table_by_name(table).unwrap().id;
    p.runtime_mut()
        .table_insert(
            id,
            TableEntry {
                matches,
                priority: 0,
                action,
                metadata: Vec::new(),
            },
        )
        .unwrap();
}

/// 10,000 routes (the benchmark's destinations among them), all to an
/// 8-way ECMP group, RED on every (port, priority 3).
fn loaded() -> Program {
    let mut p = Program::new();
    insert(
        &mut p,
        "my_station",
        vec![Some(FieldMatch::Exact(0x02_00_00_00_00_02))],
        EntryAction::Direct(action("set_routed", &[])),
    );
    let profile = PROGRAM_INFO.action_profiles[0].id;
    for m in 0..8u32 {
        p.runtime_mut()
            .member_write(
                profile,
                m,
                action(
                    "set_nexthop",
                    &[
                        u128::from(m + 1),
                        0x02_aa_00_00_00_01,
                        0x02_bb_00_00_00_00 + u128::from(m),
                    ],
                ),
                false,
            )
            .unwrap();
        insert(
            &mut p,
            "ecn_red",
            vec![
                Some(FieldMatch::Exact(u128::from(m + 1))),
                Some(FieldMatch::Exact(3)),
            ],
            EntryAction::Direct(action("set_red", &[5_120, 204_800, 655])),
        );
    }
    let members: Vec<(u32, u32)> = (0..8).map(|m| (m, 1)).collect();
    p.runtime_mut()
        .group_write(profile, 1, &members, false)
        .unwrap();
    insert(
        &mut p,
        "nexthop",
        vec![Some(FieldMatch::Exact(1))],
        EntryAction::Group(1),
    );
    let mut x: u32 = 0x1234_5678;
    let mut inserted = std::collections::HashSet::new();
    while inserted.len() < 10_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let len = 16 + x % 17;
        let prefix = x.rotate_left(7) & !(u32::MAX >> len);
        if inserted.insert((prefix, len)) {
            insert(
                &mut p,
                "ipv4_lpm",
                vec![Some(FieldMatch::Lpm {
                    value: u128::from(prefix),
                    prefix_len: len,
                })],
                EntryAction::Direct(action("set_nexthop_id", &[1])),
            );
        }
    }
    insert(
        &mut p,
        "ipv4_lpm",
        vec![Some(FieldMatch::Lpm {
            value: 0xc633_6400,
            prefix_len: 24,
        })],
        EntryAction::Direct(action("set_nexthop_id", &[1])),
    );
    p
}

/// RC RDMA WRITE Only, 198.51.100.1 → .2, DSCP 26 ECT(0), 1 KiB payload.
fn write_frame(sport: u16) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00];
    let ip_len: u16 = 20 + 8 + 12 + 16 + 1024 + 4;
    f.extend_from_slice(&[0x45, 0x6a]);
    f.extend_from_slice(&ip_len.to_be_bytes());
    f.extend_from_slice(&[
        0, 1, 0x40, 0, 64, 17, 0, 0, 198, 51, 100, 1, 198, 51, 100, 2,
    ]);
    let mut sum: u32 = f[14..34]
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    sum = (sum & 0xffff) + (sum >> 16);
    f[24..26].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&[0x12, 0xb7]);
    f.extend_from_slice(&(ip_len - 20).to_be_bytes());
    f.extend_from_slice(&[
        0, 0, 0x0a, 0, 0xff, 0xff, 0, 0, 0x01, 0x23, 0x80, 0, 0, 0x10,
    ]);
    f.extend_from_slice(&[0; 16]);
    f.extend(std::iter::repeat_n(0x5a, 1024 + 4));
    f
}

fn pipeline(c: &mut Criterion) {
    let frames: Vec<Vec<u8>> = (0..256).map(|i| write_frame(0xc000 + i)).collect();
    let mut group = c.benchmark_group("roce_switch");
    group.throughput(Throughput::Elements(1));
    run(
        &mut group,
        "rdma_write_10k_routes_ecmp8_red",
        loaded(),
        &frames,
    );
    // The daemon runs the compiled-in program through `Switchable` (so
    // P4Runtime can load another): this must cost the same as the above.
    run(
        &mut group,
        "switchable_builtin",
        Switchable::new(loaded()),
        &frames,
    );
    // The same program behind the trait object a loaded library hands
    // over (one allocation per packet, dynamic calls): what a loaded
    // program costs compared with the compiled-in one.
    let mut s = Switchable::new(Program::new());
    let _ = s.install(Some(erase(loaded())));
    run(&mut group, "switchable_loaded_dyn", s, &frames);
    group.finish();
}

/// One packet through the pipeline in the buffer it arrived in, as the
/// switch runs it: the deparser rewrites the headers in `frame` and leaves
/// the payload where it is. `pkt` is reused.
#[inline(always)]
fn one<P: Pipeline>(p: &mut P, pkt: &mut P::Packet, frame: &mut Vec<u8>) -> usize {
    let meta = StandardMetadata::arriving(1, frame.len() as u32, 0);
    p.parse_into(frame, meta, pkt);
    p.ingress(pkt);
    let m = P::meta_mut(pkt);
    m.egress_port = m.egress_spec;
    m.deq_qdepth_bytes = 100_000;
    p.egress(pkt);
    p.deparse_in_place(pkt, frame);
    frame.len()
}

/// How far [`upto`] runs a packet: the stages of [`one`] in order, then
/// all of them on a packet parsed as the switch core does.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Stage {
    Parse,
    Ingress,
    Egress,
    Deparse,
    /// The whole of [`one`], the packet parsed by `Pipeline::parse` into a
    /// fresh struct (the switch core's call) instead of `parse_into` into
    /// the reused one: what parsing by value costs.
    ByValue,
}

/// [`one`] stopped after `last`, for `--stages`: the differences between
/// consecutive prefixes say what each stage adds to a packet.
#[inline(always)]
fn upto<P: Pipeline>(p: &mut P, pkt: &mut P::Packet, frame: &mut Vec<u8>, last: Stage) -> usize {
    if last == Stage::Deparse {
        return one(p, pkt, frame);
    }
    if last == Stage::ByValue {
        let meta = StandardMetadata::arriving(1, frame.len() as u32, 0);
        let mut fresh = p.parse(frame, meta);
        p.ingress(&mut fresh);
        let m = P::meta_mut(&mut fresh);
        m.egress_port = m.egress_spec;
        m.deq_qdepth_bytes = 100_000;
        p.egress(&mut fresh);
        p.deparse_in_place(&mut fresh, frame);
        return frame.len();
    }
    let meta = StandardMetadata::arriving(1, frame.len() as u32, 0);
    p.parse_into(frame, meta, pkt);
    if last >= Stage::Ingress {
        p.ingress(pkt);
        let m = P::meta_mut(pkt);
        m.egress_port = m.egress_spec;
        m.deq_qdepth_bytes = 100_000;
    }
    if last >= Stage::Egress {
        p.egress(pkt);
    }
    // Keep the stages run so far from being optimised away.
    std::hint::black_box(&*pkt);
    frame.len()
}

/// Fastest batch of 256 packets out of `batches`, in ns a packet. Before
/// each batch, untimed, the frames are copied afresh into the buffers the
/// batch rewrites (what the kernel does when a frame arrives).
fn min_batches<P: Pipeline>(p: P, frames: &[Vec<u8>], batches: usize) -> f64 {
    min_batches_with(p, frames, batches, one::<P>)
}

/// [`min_batches`] running each packet through `run` (monomorphised per
/// caller, so `one` is timed exactly as before `--stages` existed).
fn min_batches_with<P: Pipeline>(
    mut p: P,
    frames: &[Vec<u8>],
    batches: usize,
    mut run: impl FnMut(&mut P, &mut P::Packet, &mut Vec<u8>) -> usize,
) -> f64 {
    let mut bufs: Vec<Vec<u8>> = frames.to_vec();
    let mut pkt = p.parse(&frames[0], StandardMetadata::arriving(1, 0, 0));
    let mut best = f64::MAX;
    for _ in 0..batches {
        for (b, f) in bufs.iter_mut().zip(frames) {
            b.clear();
            b.extend_from_slice(f);
        }
        let t = std::time::Instant::now();
        for b in &mut bufs {
            std::hint::black_box(run(&mut p, &mut pkt, b));
        }
        best = best.min(t.elapsed().as_nanos() as f64 / frames.len() as f64);
    }
    best
}

/// `--stages`: the compiled-in program's fastest batch run up to each
/// stage, and what each stage adds (a stage's own cost, give or take the
/// overlap the CPU finds between it and the next); then the whole pipeline
/// again with the packet parsed by value, against the last line.
fn print_stages(batches: usize) {
    let frames: Vec<Vec<u8>> = (0..256).map(|i| write_frame(0xc000 + i)).collect();
    let mut before = 0.0;
    for (name, last) in [
        ("parse", Stage::Parse),
        ("+ ingress", Stage::Ingress),
        ("+ egress", Stage::Egress),
        ("+ deparse", Stage::Deparse),
        ("by value", Stage::ByValue),
    ] {
        // One closure per stage, so that `upto` folds its tests away.
        let ns = match last {
            Stage::Parse => min_batches_with(loaded(), &frames, batches, |p, k, f| {
                upto(p, k, f, Stage::Parse)
            }),
            Stage::Ingress => min_batches_with(loaded(), &frames, batches, |p, k, f| {
                upto(p, k, f, Stage::Ingress)
            }),
            Stage::Egress => min_batches_with(loaded(), &frames, batches, |p, k, f| {
                upto(p, k, f, Stage::Egress)
            }),
            Stage::Deparse => min_batches(loaded(), &frames, batches),
            Stage::ByValue => min_batches_with(loaded(), &frames, batches, |p, k, f| {
                upto(p, k, f, Stage::ByValue)
            }),
        };
        println!("{name:<10} {ns:6.1} ns a packet ({:+.1})", ns - before);
        before = ns;
    }
}

/// Fastest batch of 256 frames through the daemon's switch core
/// (`Switch<Switchable<Program>>`), in ns a packet: every frame received
/// on port 1 with `Switch::handle_frame_owned`, then every port drained
/// with `Switch::poll_transmit_owned`, as the driver does a receive batch
/// and then its ports. Ideal ports (`SwitchConfig::ideal`: no shaper
/// holds a frame back) with the MAC layer on, so that only the core's own
/// work is timed. The buffers that leave are refilled, untimed, and come
/// back in with the next batch.
fn min_switch_batches(frames: &[Vec<u8>], batches: usize) -> f64 {
    let mut config = SwitchConfig::ideal(9);
    config.mac_control = true;
    let mut sw = Switch::new(Switchable::new(loaded()), config, Instant::ZERO).unwrap();
    let mut bufs: Vec<Vec<u8>> = frames.to_vec();
    let mut best = f64::MAX;
    for batch in 0..batches as u64 {
        for (b, f) in bufs.iter_mut().zip(frames) {
            b.clear();
            b.extend_from_slice(f);
        }
        let now = Instant::from_nanos(batch * 1_000_000);
        let t = std::time::Instant::now();
        for b in bufs.drain(..) {
            sw.handle_frame_owned(1, b, now);
        }
        for port in 1..=8 {
            while let Some((_, out)) = sw.poll_transmit_owned(port, now) {
                bufs.push(out);
            }
        }
        best = best.min(t.elapsed().as_nanos() as f64 / frames.len() as f64);
        assert_eq!(bufs.len(), frames.len(), "every frame routed out");
    }
    best
}

/// `--min`: the fastest of 2,000 batches for each way of running the
/// program. `--batches N` runs N instead, and with `--builtin` only the
/// compiled-in program: for counting instructions a packet under
/// `valgrind --tool=callgrind --toggle-collect='roce_pipeline::min_batches*'`.
fn print_min_batches(batches: usize, builtin_only: bool) {
    let frames: Vec<Vec<u8>> = (0..256).map(|i| write_frame(0xc000 + i)).collect();
    let builtin = min_batches(loaded(), &frames, batches);
    println!("rdma_write_10k_routes_ecmp8_red  {builtin:.1} ns a packet (fastest batch)");
    if builtin_only {
        return;
    }
    let switchable = min_batches(Switchable::new(loaded()), &frames, batches);
    let mut s = Switchable::new(Program::new());
    let _ = s.install(Some(erase(loaded())));
    let dynamic = min_batches(s, &frames, batches);
    println!("switchable_builtin               {switchable:.1} ns a packet");
    println!("switchable_loaded_dyn            {dynamic:.1} ns a packet");
}

fn run<P: Pipeline>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    mut p: P,
    frames: &[Vec<u8>],
) {
    let mut i = 0;
    // One packet struct reused, parsed in place (`Pipeline::parse_into`);
    // each frame copied into its buffer outside the timing.
    let mut pkt = p.parse(&frames[0], StandardMetadata::arriving(1, 0, 0));
    group.bench_function(name, |b| {
        b.iter_batched_ref(
            || {
                i = (i + 1) & 255;
                frames[i].clone()
            },
            |frame| one(&mut p, &mut pkt, frame),
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, pipeline);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--min") {
        let batches = args
            .iter()
            .position(|a| a == "--batches")
            .and_then(|i| args.get(i + 1)?.parse().ok())
            .unwrap_or(2_000);
        if args.iter().any(|a| a == "--stages") {
            print_stages(batches);
        } else if args.iter().any(|a| a == "--switch") {
            let frames: Vec<Vec<u8>> = (0..256).map(|i| write_frame(0xc000 + i)).collect();
            let ns = min_switch_batches(&frames, batches);
            println!("switch_core                      {ns:.1} ns a packet (fastest batch)");
        } else {
            print_min_batches(batches, args.iter().any(|a| a == "--builtin"));
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
