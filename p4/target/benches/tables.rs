//! Table engine benchmarks: LPM lookup with 10, 10,000 and 1,000,000 IPv4
//! routes (random /8–/32, and a BGP-like mix: mostly /24, clustered) and
//! 100,000 IPv6 routes (BGP-like: mostly /48 and /32); exact lookup over
//! 10,000 entries (also in a table with idle timeout, where every hit
//! stores the idle clock); ternary lookup in 1,000- and 10,000-entry ACLs
//! (random masks and priorities, and a first-match list built from a few
//! mask shapes); insert throughput through `RuntimeApi::table_insert`
//! (LPM) and `Table` (insert and delete of a 10,000-entry ACL).
//!
//! Before the lookups of each large table the bench prints its memory: the
//! heap bytes the table holds per route, measured by a counting allocator
//! around the inserts (so capacity slack, indices and interned actions
//! count), and the insert rate while it filled.
//!
//! Lookup keys are addresses precomputed per table, each inside a randomly
//! chosen installed entry (so lookups hit, and walk as deep as the matching
//! prefix), visited round-robin. Two key sets: `spread` has 4,096 keys (at
//! 10,000 routes the trie lines they touch overflow L1, so this measures
//! L2-resident lookups) and `hot` has 64 keys, a lab's handful of active
//! destinations. Everything is seeded and deterministic.
//!
//! Run: `cargo bench -p p4-target --bench tables -- --warm-up-time 1 --measurement-time 2`

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use p4_target::externs::Rng;
use p4_target::info::*;
use p4_target::runtime::*;
use p4_target::table::Table;
use p4_target::table::route_sets::{bgp_ipv4, bgp_ipv6, ipv4_prefix_mask, random_ipv4, weighted};

/// Heap bytes in use, for the memory figures.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        IN_USE.fetch_add(new_size, Ordering::Relaxed);
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

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
    let actions = leak(vec![ActionRef {
        id: ACTION,
        scope: ActionScope::TableAndDefault,
    }]);
    Box::leak(Box::new(TableInfo {
        idle_timeout,
        ..TableInfo::plain(0x0200_0001, "bench", keys, actions, size, (ACTION, &[0]))
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

fn entry(matches: Vec<Option<FieldMatch>>, priority: i32, port: u128) -> TableEntry {
    TableEntry {
        matches,
        priority,
        action: EntryAction::Direct(ActionCall::new(ACTION, &[port])),
        metadata: vec![],
    }
}

/// An LPM table of `width` bits holding `rs` (next hop = route index
/// mod 512), and lookup keys inside randomly chosen routes. Prints its
/// memory and insert rate when it holds 100,000 routes or more.
fn lpm_table(what: &str, width: u32, rs: &[(u128, u32)], rng: &mut Rng) -> (Table, Vec<u128>) {
    // Declared as large as needed: tables of 65,536 entries or more get
    // the 1 MiB root, smaller ones the 256 KiB one.
    let size = if rs.len() >= 1 << 16 {
        1 << 21
    } else {
        1 << 15
    };
    let info = table_info(vec![(width, MatchKind::Lpm)], size);
    let prog = program(info);
    // Entries are made inside the timed loop: what they allocate and the
    // table does not keep is freed again, so the heap grows by the table.
    let before = IN_USE.load(Ordering::Relaxed);
    let start = Instant::now();
    let mut t = Table::with_program(info, prog);
    for (i, &(value, prefix_len)) in rs.iter().enumerate() {
        t.insert(entry(
            vec![Some(FieldMatch::Lpm { value, prefix_len })],
            0,
            i as u128 % 512,
        ))
        .unwrap();
    }
    let took = start.elapsed();
    let bytes = IN_USE.load(Ordering::Relaxed).saturating_sub(before);
    if rs.len() >= 100_000 {
        println!(
            "lpm_memory/{what}: {} routes, {:.1} MB, {:.1} B a route; inserted at {:.0}k routes/s",
            rs.len(),
            bytes as f64 / 1e6,
            bytes as f64 / rs.len() as f64,
            rs.len() as f64 / took.as_secs_f64() / 1e3
        );
    }
    let host = p4_target::bits::mask(width);
    let keys = (0..KEYS)
        .map(|_| {
            let (v, len) = rs[(rng.next_u64() % rs.len() as u64) as usize];
            let r = ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128;
            v | (r & (host >> len))
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
    // The fastest of 300 passes over 4,096 lookups: a loaded machine
    // inflates criterion's means; the minimum is what the code costs.
    let mut best = f64::MAX;
    for _ in 0..300 {
        let t = Instant::now();
        for k in 0..4096 {
            let l = table.lookup(black_box(&keys[k & wrap]), 64);
            black_box(match l.action {
                EntryAction::Direct(c) => c.params.first().copied().unwrap_or(0) as u32,
                EntryAction::Member(m) | EntryAction::Group(m) => *m,
            });
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e9 / 4096.0);
    }
    println!("{name}: fastest pass {best:.1} ns a lookup");
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
    let sets = [
        ("10_routes", 32, random_ipv4(10, &mut rng)),
        ("10000_routes", 32, random_ipv4(10_000, &mut rng)),
        ("1M_routes", 32, random_ipv4(1_000_000, &mut rng)),
        ("1M_bgp_routes", 32, bgp_ipv4(1_000_000, &mut rng)),
        ("100k_ipv6_routes", 128, bgp_ipv6(100_000, &mut rng)),
    ];
    for (name, width, rs) in sets {
        let (mut t, keys) = lpm_table(name, width, &rs, &mut rng);
        drop(rs);
        let keys: Vec<[u128; 1]> = keys.into_iter().map(|k| [k]).collect();
        bench_lookup(c, &format!("lpm_lookup/{name}_spread"), &mut t, &keys);
        bench_lookup(c, &format!("lpm_lookup/{name}_hot"), &mut t, &keys[..HOT]);
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

/// The ACL's key: (src, dst, protocol, dst port).
const ACL_KEY: [(u32, MatchKind); 4] = [
    (32, MatchKind::Ternary),
    (32, MatchKind::Ternary),
    (8, MatchKind::Ternary),
    (16, MatchKind::Range),
];

/// A 5-tuple-ish ACL of `n` entries over (src, dst, protocol, dst port).
/// Random: src/dst as ternary prefixes (/8, /16, /24, /32 or wildcard),
/// protocol exact-or-wildcard, port exact, a random range or wildcard,
/// random priorities. First-match: eight mask shapes in fixed proportions
/// (host and subnet rules to well-known ports, a subnet's ephemeral range,
/// source blocks), addresses from 200 subnets, priority = list order.
fn acl(n: usize, first_match: bool, rng: &mut Rng) -> (Table, Vec<[u128; 4]>) {
    let info = table_info(ACL_KEY.to_vec(), 1 << 20);
    let mut t = Table::with_program(info, program(info));
    let tern = |v: u128, m: u128| {
        (m != 0).then_some(FieldMatch::Ternary {
            value: v & m,
            mask: m,
        })
    };
    let subnets: Vec<u128> = (0..200)
        .map(|_| rng.next_u64() as u128 & 0xffff_0000)
        .collect();
    const PORTS: [u128; 12] = [
        22, 53, 80, 123, 443, 179, 4791, 3306, 5432, 6379, 8080, 9100,
    ];
    let mut installed = Vec::new();
    while installed.len() < n {
        let matches = if first_match {
            let addr = |rng: &mut Rng| {
                subnets[(rng.next_u64() % subnets.len() as u64) as usize]
                    | (rng.next_u64() as u128 & 0xffff)
            };
            let port = |rng: &mut Rng| {
                let p = PORTS[(rng.next_u64() % PORTS.len() as u64) as usize];
                Some(FieldMatch::Range { low: p, high: p })
            };
            let (s, d) = (addr(rng), addr(rng));
            let shape = weighted(
                rng,
                &[
                    (0, 30),
                    (1, 20),
                    (2, 10),
                    (3, 10),
                    (4, 10),
                    (5, 15),
                    (6, 3),
                    (7, 2),
                ],
            );
            match shape {
                0 => vec![
                    tern(s, ipv4_prefix_mask(24)),
                    tern(d, ipv4_prefix_mask(32)),
                    tern(6, 0xff),
                    port(rng),
                ],
                1 => vec![
                    None,
                    tern(d, ipv4_prefix_mask(32)),
                    tern(6, 0xff),
                    port(rng),
                ],
                2 => vec![
                    tern(s, ipv4_prefix_mask(16)),
                    tern(d, ipv4_prefix_mask(24)),
                    None,
                    None,
                ],
                3 => vec![tern(s, ipv4_prefix_mask(32)), None, None, None],
                4 => vec![
                    None,
                    tern(d, ipv4_prefix_mask(24)),
                    tern(17, 0xff),
                    Some(FieldMatch::Range {
                        low: 1024,
                        high: 65535,
                    }),
                ],
                5 => vec![
                    tern(s, ipv4_prefix_mask(24)),
                    tern(d, ipv4_prefix_mask(24)),
                    tern(6, 0xff),
                    port(rng),
                ],
                6 => vec![None, None, tern(17, 0xff), port(rng)],
                _ => vec![tern(s, ipv4_prefix_mask(8)), None, None, None],
            }
        } else {
            let pick_prefix = |rng: &mut Rng| {
                let len = [0u32, 8, 16, 24, 32][(rng.next_u64() % 5) as usize];
                (rng.next_u64() as u128, ipv4_prefix_mask(len))
            };
            let (s, sm) = pick_prefix(rng);
            let (d, dm) = pick_prefix(rng);
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
            vec![tern(s, sm), tern(d, dm), tern(proto, proto_m), port]
        };
        let prio = if first_match {
            (n - installed.len()) as i32
        } else {
            1 + (rng.next_u64() % 10_000) as i32
        };
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
    (t, keys)
}

fn ternary(c: &mut Criterion) {
    let mut rng = Rng::new(3);
    let (mut t, keys) = acl(1000, false, &mut rng);
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
    for (name, first_match) in [
        ("ternary_lookup/10000_acl_entries", false),
        ("ternary_lookup/10000_first_match_acl_entries", true),
    ] {
        let (mut t, keys) = acl(10_000, first_match, &mut rng);
        bench_lookup(c, name, &mut t, &keys);
    }
}

fn insert(c: &mut Criterion) {
    let mut rng = Rng::new(4);
    let rs = random_ipv4(10_000, &mut rng);
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

/// Insert and delete throughput of a 10,000-entry random ACL (the shape
/// of `ternary_lookup/10000_acl_entries`, another seed) through `Table`:
/// all entries into an empty table, and all out of a full one in
/// insertion order.
fn ternary_insert(c: &mut Criterion) {
    let mut rng = Rng::new(5);
    let (t, _) = acl(10_000, false, &mut rng);
    let entries = t.entries();
    let info = table_info(ACL_KEY.to_vec(), 1 << 20);
    let prog = program(info);
    let filled = || {
        let mut t = Table::with_program(info, prog);
        for e in &entries {
            t.insert(e.clone()).unwrap();
        }
        t
    };
    let mut g = c.benchmark_group("insert");
    g.throughput(Throughput::Elements(entries.len() as u64));
    g.sample_size(10);
    g.bench_function("ternary_10000_acl_entries", |b| {
        b.iter_batched(
            || (Table::with_program(info, prog), entries.clone()),
            |(mut t, es)| {
                for e in es {
                    t.insert(e).unwrap();
                }
                t
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("ternary_delete_10000_acl_entries", |b| {
        b.iter_batched(
            filled,
            |mut t| {
                for e in &entries {
                    t.delete(&e.matches, e.priority).unwrap();
                }
                t
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, lpm, exact, ternary, insert, ternary_insert);
criterion_main!(benches);
