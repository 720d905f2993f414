//! Per-packet cost of generated code: the IPv4 LPM router of
//! `tests/in/ipv4_router.p4` (its current snapshot, `tests/out/ipv4_router.rs`)
//! with 1,024 routes, running parse → verifyChecksum → ingress → egress →
//! computeChecksum → deparse on a 64-byte packet. The figure to watch is
//! time per packet (ns); the path allocates nothing once the output buffer
//! has grown.

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeApi, TableEntry};
use p4_target::v1model::StandardMetadata;

#[allow(dead_code)]
mod ipv4_router {
    include!("../tests/out/ipv4_router.rs");
}

fn packet(dst: [u8; 4]) -> Vec<u8> {
    let mut p = vec![
        0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x08, 0x00, // Ethernet
        0x45, 0x00, 0x00, 0x32, 0x00, 0x01, 0x00, 0x00, 64, 0x11, 0x00, 0x00, 10, 0, 0, 1,
    ];
    p.extend_from_slice(&dst);
    p.resize(64, 0xab);
    p
}

fn bench(c: &mut Criterion) {
    let mut prog = ipv4_router::Program::new();
    let info = prog.info();
    let table = info.table_by_name("MyIngress.ipv4_lpm").unwrap().id;
    let fwd = info.action_by_name("MyIngress.ipv4_forward").unwrap().id;
    for i in 0..1024u32 {
        let prefix = (10u32 << 24) | (i << 12);
        prog.runtime_mut()
            .table_insert(
                table,
                TableEntry {
                    matches: vec![Some(FieldMatch::Lpm {
                        value: prefix as u128,
                        prefix_len: 20,
                    })],
                    priority: 0,
                    action: EntryAction::Direct(ActionCall::new(fwd, &[0xaa, (i % 8) as u128])),
                    metadata: vec![],
                },
            )
            .unwrap();
    }
    let data = packet([10, 0, 0x52, 7]);
    let mut out = Vec::with_capacity(128);
    let mut group = c.benchmark_group("ipv4_router");
    group.throughput(Throughput::Elements(1));
    group.bench_function("parse_ingress_egress_deparse_64B", |b| {
        b.iter(|| {
            let meta = StandardMetadata::arriving(1, data.len() as u32, 0);
            let mut pkt = prog.parse(black_box(&data), meta);
            prog.ingress(&mut pkt);
            prog.egress(&mut pkt);
            prog.deparse(&mut pkt, &data, &mut out);
            black_box(out.len())
        })
    });
    group.bench_function("parse_and_verify_checksum_64B", |b| {
        b.iter(|| {
            let meta = StandardMetadata::arriving(1, data.len() as u32, 0);
            let pkt = prog.parse(black_box(&data), meta);
            black_box(pkt.payload_offset)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
