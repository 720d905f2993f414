//! Table engine benchmarks: LPM lookup with 10 and 10,000 IPv4 routes
//! (random /8–/32), exact lookup over 10,000 entries (also in a table with
//! idle timeout, where every hit stores the idle clock), ternary lookup in a
//! 1,000-entry ACL, and insert throughput through `RuntimeApi::table_insert`.
//!
//! Lookup keys are addresses precomputed per table, each inside a randomly
//! chosen installed entry (so lookups hit, and walk as deep as the matching
//! prefix), visited round-robin. Two key sets: `spread` has 4,096 keys (at
//! 10,000 routes the trie lines they touch overflow L1, so this measures
//! L2-resident lookups) and `hot` has 64 keys, a lab's handful of active
//! destinations. Everything is seeded and deterministic.
//!
//! Run: `cargo bench -p p4-target --bench tables -- --warm-up-time 1 --measurement-time 2`

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use p4_target::externs::Rng;
use p4_target::info::*;
use p4_target::runtime::*;
use p4_target::table::Table;

const ACTION: u32 = 0x0100_0001;
const KEYS: usize = 4096;
const HOT: usize = 64;

fn leak<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

fn table_info(keys: Vec<(u32, MatchKind)>, size: u32) -> &'static TableInfo {
    table_info_with(keys, size, false)
}

fn table_info_with(
    keys: Vec<(u32, MatchKind)>,
    size: u32,
    idle_timeout: bool,
) -> &'static TableInfo {
    let keys = leak(
        keys.into_iter()
            .enumerate()
            .map(|(i, (bitwidth, kind))| KeyInfo {
                id: i as u32 + 1,
                name: "k",
                bitwidth,
                kind,
            })
            .collect(),
    );
    Box::leak(Box::new(TableInfo {
        id: 0x0200_0001,
        name: "bench",
        keys,
        actions: leak(vec![ActionRef {
            id: ACTION,
            scope: ActionScope::TableAndDefault,
        }]),
        size,
        implementation: None,
        default_action: (ACTION, &[0]),
        default_is_const: false,
        is_const: false,
        const_entries: &[],
        direct_counter: None,
        direct_meter: None,
        idle_timeout,
    }))
}

fn program(table: &'static TableInfo) -> &'static ProgramInfo {
    Box::leak(Box::new(ProgramInfo {
        name: "bench",
        arch: "v1model",
        tables: std::slice::from_ref(table),
        actions: leak(vec![ActionInfo {
            id: ACTION,
            name: "set_port",
            params: leak(vec![ParamInfo {
                id: 1,
                name: "port",
                bitwidth: 9,
            }]),
        }]),
        action_profiles: &[],
        counters: &[],
        meters: &[],
        registers: &[],
        digests: &[],
        controller_headers: &[],
        value_sets: &[],
        p4info_text: "",
    }))
}

fn prefix_mask(len: u32) -> u128 {
    0xffff_ffffu128 ^ (0xffff_ffffu128 >> len)
}

/// `n` distinct random IPv4 routes with prefix lengths uniform in /8..=/32.
fn routes(n: usize, rng: &mut Rng) -> Vec<(u128, u32)> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let len = 8 + (rng.next_u64() % 25) as u32;
        let value = (rng.next_u64() as u128 & 0xffff_ffff) & prefix_mask(len);
        if seen.insert((value, len)) {
            out.push((value, len));
        }
    }
    out
}

fn entry(matches: Vec<Option<FieldMatch>>, priority: i32, port: u128) -> TableEntry {
    TableEntry {
        matches,
        priority,
        action: EntryAction::Direct(ActionCall::new(ACTION, &[port])),
        metadata: vec![],
    }
}

fn lpm_table(n: usize, rng: &mut Rng) -> (Table, Vec<u128>) {
    let info = table_info(vec![(32, MatchKind::Lpm)], 1 << 20);
    let mut t = Table::with_program(info, program(info));
    let rs = routes(n, rng);
    for (i, &(value, prefix_len)) in rs.iter().enumerate() {
        t.insert(entry(
            vec![Some(FieldMatch::Lpm { value, prefix_len })],
            0,
            i as u128 % 512,
        ))
        .unwrap();
    }
    let keys = (0..KEYS)
        .map(|_| {
            let (v, len) = rs[(rng.next_u64() % n as u64) as usize];
            v | (rng.next_u64() as u128 & 0xffff_ffff & !prefix_mask(len))
        })
        .collect();
    (t, keys)
}

/// Keys are fixed-size arrays stored contiguously, so fetching the next key
/// costs no pointer chase and no cache miss of its own.
fn bench_lookup<const N: usize>(
    c: &mut Criterion,
    name: &str,
    table: &mut Table,
    keys: &[[u128; N]],
) {
    assert!(keys.len().is_power_of_two());
    let wrap = keys.len() - 1;
    let mut i = 0usize;
    c.bench_function(name, |b| {
        b.iter(|| {
            i = (i + 1) & wrap;
            let l = table.lookup(black_box(&keys[i]), 64);
            // Read the action as generated code would.
            black_box(match l.action {
                EntryAction::Direct(c) => c.action_id,
                EntryAction::Member(m) | EntryAction::Group(m) => *m,
            })
        })
    });
}

fn lpm(c: &mut Criterion) {
    let mut rng = Rng::new(1);
    for n in [10, 10_000] {
        let (mut t, keys) = lpm_table(n, &mut rng);
        let keys: Vec<[u128; 1]> = keys.into_iter().map(|k| [k]).collect();
        bench_lookup(c, &format!("lpm_lookup/{n}_routes_spread"), &mut t, &keys);
        bench_lookup(
            c,
            &format!("lpm_lookup/{n}_routes_hot"),
            &mut t,
            &keys[..HOT],
        );
    }
}

fn exact(c: &mut Criterion) {
    for (idle_timeout, name) in [
        (false, "exact_lookup/10000_entries"),
        (true, "exact_lookup/10000_entries_idle_timeout"),
    ] {
        let mut rng = Rng::new(2);
        let info = table_info_with(
            vec![(9, MatchKind::Exact), (32, MatchKind::Exact)],
            1 << 20,
            idle_timeout,
        );
        let mut t = Table::with_program(info, program(info));
        let mut installed = Vec::new();
        while installed.len() < 10_000 {
            let k = vec![
                (rng.next_u64() % 512) as u128,
                rng.next_u64() as u128 & 0xffff_ffff,
            ];
            let matches = k.iter().map(|&v| Some(FieldMatch::Exact(v))).collect();
            if t.insert(entry(matches, 0, 1)).is_ok() {
                installed.push(k);
            }
        }
        t.set_idle_clock(1_000_000);
        let keys: Vec<[u128; 2]> = (0..KEYS)
            .map(|_| {
                let k = &installed[(rng.next_u64() % installed.len() as u64) as usize];
                [k[0], k[1]]
            })
            .collect();
        bench_lookup(c, name, &mut t, &keys);
    }
}

fn ternary(c: &mut Criterion) {
    // A 5-tuple-ish ACL: src/dst as ternary prefixes (/8, /16, /24, /32 or
    // wildcard), protocol exact-or-wildcard, destination port exact, a
    // range, or wildcard; random priorities.
    let mut rng = Rng::new(3);
    let info = table_info(
        vec![
            (32, MatchKind::Ternary),
            (32, MatchKind::Ternary),
            (8, MatchKind::Ternary),
            (16, MatchKind::Range),
        ],
        1 << 20,
    );
    let mut t = Table::with_program(info, program(info));
    let pick_prefix = |rng: &mut Rng| {
        let len = [0u32, 8, 16, 24, 32][(rng.next_u64() % 5) as usize];
        let m = prefix_mask(len);
        let v = rng.next_u64() as u128 & m;
        (v, m)
    };
    let mut installed = Vec::new();
    while installed.len() < 1000 {
        let (s, sm) = pick_prefix(&mut rng);
        let (d, dm) = pick_prefix(&mut rng);
        let tern = |v, m| (m != 0).then_some(FieldMatch::Ternary { value: v, mask: m });
        let proto = [6u128, 17][(rng.next_u64() % 2) as usize];
        let proto_m = if rng.next_u64().is_multiple_of(3) {
            0
        } else {
            0xff
        };
        let port = match rng.next_u64() % 3 {
            0 => None,
            1 => {
                let p = (rng.next_u64() % 65536) as u128;
                Some(FieldMatch::Range { low: p, high: p })
            }
            _ => {
                let lo = (rng.next_u64() % 60000) as u128;
                Some(FieldMatch::Range {
                    low: lo,
                    high: lo + 1 + (rng.next_u64() % 5000) as u128,
                })
            }
        };
        let matches = vec![
            tern(s, sm),
            tern(d, dm),
            tern(proto & proto_m, proto_m),
            port,
        ];
        let prio = 1 + (rng.next_u64() % 10_000) as i32;
        if t.insert(entry(matches.clone(), prio, 1)).is_ok() {
            installed.push(matches);
        }
    }
    // Keys drawn inside random entries (random bits where the entry has none).
    let keys: Vec<[u128; 4]> = (0..KEYS)
        .map(|_| {
            let e = &installed[(rng.next_u64() % installed.len() as u64) as usize];
            let mut k = [0u128; 4];
            for ((slot, m), w) in k.iter_mut().zip(e).zip([32u32, 32, 8, 16]) {
                let r = rng.next_u64() as u128 & p4_target::bits::mask(w);
                *slot = match m {
                    Some(FieldMatch::Ternary { value, mask }) => value | (r & !mask),
                    Some(FieldMatch::Range { low, high }) => low + r % (high - low + 1),
                    _ => r,
                };
            }
            k
        })
        .collect();
    bench_lookup(c, "ternary_lookup/1000_acl_entries", &mut t, &keys);

    // Reference point: the same ACL as a linear scan, best priority first
    // (sorted once), stopping at the first match.
    let mut scan: Vec<(i32, Vec<Option<FieldMatch>>)> = t
        .entries()
        .into_iter()
        .map(|e| (e.priority, e.matches))
        .collect();
    scan.sort_by_key(|e| -e.0);
    let widths = [32u32, 32, 8, 16];
    let mut i = 0usize;
    c.bench_function("ternary_lookup/1000_acl_entries_linear_scan", |b| {
        b.iter(|| {
            i = (i + 1) & (KEYS - 1);
            let key = black_box(&keys[i]);
            let hit = scan.iter().position(|(_, ms)| {
                ms.iter()
                    .zip(key)
                    .zip(widths)
                    .all(|((m, &k), w)| m.is_none_or(|m| m.matches(k, w)))
            });
            black_box(hit)
        })
    });
}

fn insert(c: &mut Criterion) {
    let mut rng = Rng::new(4);
    let rs = routes(10_000, &mut rng);
    let info = table_info(vec![(32, MatchKind::Lpm)], 1 << 20);
    let prog = program(info);
    let entries: Vec<TableEntry> = rs
        .iter()
        .map(|&(value, prefix_len)| entry(vec![Some(FieldMatch::Lpm { value, prefix_len })], 0, 1))
        .collect();
    let mut g = c.benchmark_group("insert");
    g.throughput(Throughput::Elements(entries.len() as u64));
    g.sample_size(10);
    g.bench_function("lpm_10000_routes_via_runtime_api", |b| {
        b.iter_batched(
            || (Runtime::new(prog), entries.clone()),
            |(mut rt, es)| {
                for e in es {
                    rt.table_insert(info.id, e).unwrap();
                }
                rt
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, lpm, exact, ternary, insert);
criterion_main!(benches);
