//! Compiled `basic_router.p4` against the same router written by hand, at
//! 10 and 10,000 routes, with an ACL of 1,000 ternary entries that every
//! packet searches; and the cost of a P4Runtime-style table insert.
//!
//! Run: `cargo bench -p p4-bench`.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use p4_bench::workload::{acl_entries, frame, loaded, routes, run_compiled};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::RuntimeApi;

fn packets(routes: &[(u32, u32, u16, u32)]) -> Vec<Vec<u8>> {
    (0..1024)
        .map(|i| frame(routes[i % routes.len()].3, 0xc000 + i as u16))
        .collect()
}

fn router(c: &mut Criterion) {
    let mut group = c.benchmark_group("router");
    group.throughput(Throughput::Elements(1));
    for (n_routes, n_acl) in [(10, 0), (10_000, 0), (10_000, 1_000)] {
        let routes = routes(n_routes, 11);
        let acl = acl_entries(n_acl, 13);
        let (mut program, mut hand) = loaded(&routes, &acl);
        let pkts = packets(&routes);
        let mut out = Vec::with_capacity(256);
        let label = format!("{n_routes}_routes_{n_acl}_acl");
        let mut i = 0;
        group.bench_function(format!("compiled/{label}"), |b| {
            b.iter(|| {
                i = (i + 1) & 1023;
                run_compiled(&mut program, &pkts[i], &mut out)
            })
        });
        group.bench_function(format!("hand_written/{label}"), |b| {
            b.iter(|| {
                i = (i + 1) & 1023;
                hand.process(&pkts[i], &mut out)
            })
        });
    }
    group.finish();
}

fn table_insert(c: &mut Criterion) {
    let routes = routes(10_000, 17);
    let lpm_id = p4_bench::compiled::PROGRAM_INFO
        .table_by_name("ipv4_lpm")
        .unwrap()
        .id;
    let mut group = c.benchmark_group("runtime");
    group.throughput(Throughput::Elements(routes.len() as u64));
    group.bench_function("insert_10k_lpm_entries", |b| {
        b.iter_batched(
            || {
                let (program, _) = loaded(&[], &[]);
                let entries: Vec<_> = routes
                    .iter()
                    .map(|&(p, l, port, _)| {
                        let (mut one, _) = loaded(&[(p, l, port, 0)], &[]);
                        one.runtime_mut().table_entries(lpm_id).unwrap().remove(0)
                    })
                    .collect();
                (program, entries)
            },
            |(mut program, entries)| {
                for e in entries {
                    program.runtime_mut().table_insert(lpm_id, e).unwrap();
                }
                program
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, router, table_insert);
criterion_main!(benches);
