//! Traffic-manager per-packet cost: one `handle_enqueue` plus one
//! `poll_transmit` (admission, egress accounting, scheduling, shaping,
//! release and XON check) per iteration. Target: ≤ 50 ns per packet.
//!
//! Two shapes: a single lossy queue kept one packet deep, and a lossless
//! priority mixed with a lossy one under DWRR with 64 packets queued, so the
//! scheduler and PFC checks do real work.

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use dataplane::time::{Instant, bits_time};
use dataplane::tm::{EnqueueMeta, Threshold, Tm, TmConfig};

fn config() -> TmConfig {
    let mut cfg = TmConfig::with_ports(4);
    for p in &mut cfg.ports {
        for q in &mut p.queues {
            q.limit = Threshold::Static(0);
        }
    }
    cfg
}

fn bench_enqueue_dequeue(c: &mut Criterion) {
    let mut group = c.benchmark_group("tm");
    group.throughput(Throughput::Elements(1));

    group.bench_function("enqueue+dequeue, 1 queue", |b| {
        let mut tm: Tm<u64> = Tm::new(config(), Instant::ZERO).unwrap();
        let step = bits_time(1000, 100_000_000_000);
        let mut now = Instant::ZERO;
        let mut id = 0u64;
        b.iter(|| {
            id += 1;
            let meta = EnqueueMeta {
                ingress_port: 0,
                egress_port: 1,
                priority: 0,
                len_bytes: 1000,
            };
            let _ = black_box(tm.handle_enqueue(id, meta, now));
            let d = tm.poll_transmit(1, now);
            now += step;
            black_box(d)
        });
    });

    group.bench_function("enqueue+dequeue, lossless+lossy DWRR, 64 deep", |b| {
        let mut tm: Tm<u64> = Tm::new(config(), Instant::ZERO).unwrap();
        let step = bits_time(1000, 100_000_000_000);
        let mut now = Instant::ZERO;
        for id in 0..64u64 {
            let meta = EnqueueMeta {
                ingress_port: (id % 3) as u16,
                egress_port: 3,
                priority: if id.is_multiple_of(2) { 3 } else { 0 },
                len_bytes: 1000,
            };
            tm.handle_enqueue(id, meta, now).unwrap();
        }
        let mut id = 64u64;
        b.iter(|| {
            id += 1;
            let meta = EnqueueMeta {
                ingress_port: (id % 3) as u16,
                egress_port: 3,
                priority: if id.is_multiple_of(2) { 3 } else { 0 },
                len_bytes: 1000,
            };
            let _ = black_box(tm.handle_enqueue(id, meta, now));
            let d = tm.poll_transmit(3, now);
            now += step;
            black_box(d)
        });
    });
    group.finish();
}

criterion_group!(benches, bench_enqueue_dequeue);
criterion_main!(benches);
