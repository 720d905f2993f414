//! Every table engine against a brute-force reference: random inserts,
//! deletes and lookups (proptest), compared entry by entry.
//!
//! The reference keeps a plain list and answers a lookup by scanning it:
//! for exact/LPM tables the matching entry with the longest LPM prefix, for
//! priority tables the matching entry with the highest priority, ties going
//! to the one inserted first.

use p4_target::info::{
    ActionInfo, ActionRef, ActionScope, KeyInfo, MatchKind, ParamInfo, ProgramInfo, TableInfo,
};
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeError, TableEntry};
use p4_target::table::{EngineKind, Table, WordLookup, word};
use proptest::prelude::*;

fn table_info(keys: &[(u32, MatchKind)], size: u32) -> &'static TableInfo {
    let keys: Vec<KeyInfo> = keys
        .iter()
        .enumerate()
        .map(|(i, &(bitwidth, kind))| KeyInfo {
            id: i as u32 + 1,
            name: "k",
            bitwidth,
            kind,
        })
        .collect();
    Box::leak(Box::new(TableInfo::plain(
        0x0200_0001,
        "t",
        Box::leak(keys.into_boxed_slice()),
        &[ActionRef {
            id: 1,
            scope: ActionScope::TableAndDefault,
        }],
        size,
        (1, &[]),
    )))
}

/// A program around `table` whose one action takes a 64-bit argument (the
/// entry's tag), so the table checks arguments and keeps action words.
fn program(table: &'static TableInfo) -> &'static ProgramInfo {
    Box::leak(Box::new(ProgramInfo {
        name: "engines",
        tables: std::slice::from_ref(table),
        actions: Box::leak(Box::new([ActionInfo {
            id: 1,
            name: "tag",
            params: &[ParamInfo {
                id: 1,
                name: "tag",
                bitwidth: 64,
            }],
        }])),
        ..ProgramInfo::EMPTY
    }))
}

/// The tag of the entry a word lookup hit: from the word, or from the
/// table when the word does not hold the action.
fn word_tag(table: &Table, program: &ProgramInfo, got: WordLookup) -> Option<u128> {
    let action = word::decode(table.info, program, got.word)
        .unwrap_or_else(|| table.action_of(got.entry).clone());
    match action {
        EntryAction::Direct(c) if got.hit => Some(c.params[0]),
        _ => None,
    }
}

fn mask(w: u32) -> u128 {
    p4_target::bits::mask(w)
}

/// Values that share long prefixes: one of four fixed bit patterns with a
/// random number of its low bits randomised. Entries then nest deeply and
/// lookups walk every level of the LPM trie.
fn clustered(width: u32) -> BoxedStrategy<u128> {
    const BASES: [u128; 4] = [
        0x0a01_0203_0405_0607_0809_0a0b_0c0d_0e0f,
        0xc0a8_0164_ffff_0000_1234_5678_9abc_def0,
        0x0a01_0203_ffff_ffff_0000_0000_5555_aaaa,
        0,
    ];
    (0..4usize, any::<u128>(), 0..=width)
        .prop_map(move |(b, r, k)| (BASES[b] ^ (r & mask(k))) & mask(width))
        .boxed()
}

/// A random match for a field, already in canonical form.
fn field_match(width: u32, kind: MatchKind) -> BoxedStrategy<Option<FieldMatch>> {
    let m = mask(width);
    match kind {
        MatchKind::Exact => (0..=m.min(15))
            .prop_map(|v| Some(FieldMatch::Exact(v)))
            .boxed(),
        MatchKind::Optional => prop_oneof![
            Just(None),
            (0..=m.min(7)).prop_map(|v| Some(FieldMatch::Optional(v)))
        ]
        .boxed(),
        MatchKind::Lpm => (clustered(width), 0..=width)
            .prop_map(move |(v, p)| {
                if p == 0 {
                    None
                } else {
                    let pm = m ^ mask(width - p);
                    Some(FieldMatch::Lpm {
                        value: v & pm,
                        prefix_len: p,
                    })
                }
            })
            .boxed(),
        MatchKind::Ternary => (any::<u128>(), any::<u128>())
            .prop_map(move |(v, k)| {
                // Sparse masks so that entries overlap often.
                let k = k & (k >> 1) & m;
                if k == 0 {
                    None
                } else {
                    Some(FieldMatch::Ternary {
                        value: v & k,
                        mask: k,
                    })
                }
            })
            .boxed(),
        MatchKind::Range => (0..=m, 0..=m)
            .prop_map(move |(a, b)| {
                let (low, high) = (a.min(b), a.max(b));
                if low == 0 && high == m {
                    None
                } else {
                    Some(FieldMatch::Range { low, high })
                }
            })
            .boxed(),
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert(Vec<Option<FieldMatch>>, i32),
    /// Delete the n-th live entry (mod count).
    Delete(usize),
    /// Move the n-th live entry (mod count) to another priority: delete
    /// it and insert its matches again at the new priority.
    Reprioritize(usize, i32),
    Lookup(Vec<u128>),
}

/// An entry's matches, one strategy per key field.
fn entry_matches(keys: &[(u32, MatchKind)]) -> Vec<BoxedStrategy<Option<FieldMatch>>> {
    keys.iter().map(|&(w, k)| field_match(w, k)).collect()
}

/// A lookup key drawn uniformly over each field's width.
fn uniform_key(keys: &[(u32, MatchKind)]) -> Vec<BoxedStrategy<u128>> {
    keys.iter().map(|&(w, _)| (0..=mask(w)).boxed()).collect()
}

fn ops(keys: &'static [(u32, MatchKind)], with_priority: bool) -> impl Strategy<Value = Vec<Op>> {
    let prio = if with_priority { 1..4i32 } else { 0..1i32 };
    ops_with(keys, prio, 1..250)
}

/// [`ops`] with priorities drawn from `prio` and `count` operations.
fn ops_with(
    keys: &'static [(u32, MatchKind)],
    prio: std::ops::Range<i32>,
    count: std::ops::Range<usize>,
) -> impl Strategy<Value = Vec<Op>> {
    let entry = entry_matches(keys);
    let key = keys
        .iter()
        .map(|&(w, k)| {
            if k == MatchKind::Lpm {
                clustered(w)
            } else {
                (0..=mask(w)).boxed()
            }
        })
        .collect::<Vec<_>>();
    let op = prop_oneof![
        4 => (entry, prio).prop_map(|(m, p)| Op::Insert(m, p)),
        1 => any::<usize>().prop_map(Op::Delete),
        4 => key.prop_map(Op::Lookup),
    ];
    prop::collection::vec(op, count)
}

/// As [`ops_with`], with wildcard entries (no field matched, so they
/// match every key) inserted often and entries moved to other
/// priorities: whatever ranks below the best wildcard can never win, and
/// the priority engine then scans only what ranks above it.
fn with_wildcards(
    keys: &'static [(u32, MatchKind)],
    prio: std::ops::Range<i32>,
    count: std::ops::Range<usize>,
) -> impl Strategy<Value = Vec<Op>> {
    let (entry, key) = (entry_matches(keys), uniform_key(keys));
    let op = prop_oneof![
        4 => (entry, prio.clone()).prop_map(|(m, p)| Op::Insert(m, p)),
        1 => prio.clone().prop_map(move |p| Op::Insert(vec![None; keys.len()], p)),
        1 => any::<usize>().prop_map(Op::Delete),
        1 => (any::<usize>(), prio).prop_map(|(n, p)| Op::Reprioritize(n, p)),
        4 => key.prop_map(Op::Lookup),
    ];
    prop::collection::vec(op, count)
}

/// Over the priority engine's bit-vector stage's limit (1,024 entries)
/// and back: 1,300 inserts fill the table past it (the stage is dropped
/// and the groups answer), 900 deletes take it below half of it (the stage
/// is built again from the ranking), and random operations follow; lookups
/// in each phase.
fn past_the_stage(keys: &'static [(u32, MatchKind)]) -> impl Strategy<Value = Vec<Op>> {
    let (entry, key) = (entry_matches(keys), uniform_key(keys));
    let inserts = prop::collection::vec(
        (entry, 1..1000i32).prop_map(|(m, p)| Op::Insert(m, p)),
        1300,
    );
    let lookups = prop::collection::vec(key.prop_map(Op::Lookup), 100);
    let deletes = prop::collection::vec(any::<usize>().prop_map(Op::Delete), 900);
    (
        inserts,
        lookups.clone(),
        deletes,
        lookups,
        ops_with(keys, 1..1000, 100..200),
    )
        .prop_map(|(a, b, c, d, e)| [a, b, c, d, e].concat())
}

/// As [`ops_with`], with phases of inserts then deletes: the table grows
/// to a few hundred entries, shrinks to a handful, and grows again.
fn churn(
    keys: &'static [(u32, MatchKind)],
    prio: std::ops::Range<i32>,
    count: std::ops::Range<usize>,
) -> impl Strategy<Value = Vec<Op>> {
    ops_with(keys, prio, count).prop_map(to_churn)
}

/// Every other run of 150 operations turns inserts into deletes.
fn to_churn(ops: Vec<Op>) -> Vec<Op> {
    let mut out = Vec::with_capacity(ops.len() * 2);
    for (i, op) in ops.into_iter().enumerate() {
        match op {
            Op::Insert(..) if (i / 150) % 2 == 1 => {
                out.push(Op::Delete(i));
                out.push(Op::Delete(i / 3));
            }
            op => out.push(op),
        }
    }
    out
}

/// IPv6-shaped values for the tail layout: one of three /32s (so routes
/// crowd one root slot, fill its tail past its size and turn it into
/// nodes) with a random number of low bits randomised (so routes nest and
/// diverge at every depth), now and then anything at all.
fn ipv6_value() -> BoxedStrategy<u128> {
    const BLOCKS: [u128; 3] = [
        0x2001_0db8 << 96,
        0x2001_0db9 << 96,
        0x2a00_1450_4001_0800 << 64,
    ];
    prop_oneof![
        8 => (0..3usize, any::<u128>(), 0..=96u32)
            .prop_map(|(b, r, k)| BLOCKS[b] | (r & mask(k))),
        1 => any::<u128>(),
    ]
    .boxed()
}

/// IPv6 prefix lengths: a few root routes (/0–/16), many that fit a tail
/// (/17–/79 past a 16-bit root), and long ones that do not (/80–/128).
fn ipv6_len() -> BoxedStrategy<u32> {
    prop_oneof![1 => 0..=16u32, 6 => 17..=79u32, 2 => 80..=128u32, 1 => Just(128u32)].boxed()
}

/// Inserts, deletes and lookups of IPv6 routes shaped by [`ipv6_value`]
/// and [`ipv6_len`]; lookups at such values, so they land inside routes,
/// beside them, and in the paths tails skip.
fn ipv6_ops(count: std::ops::Range<usize>) -> impl Strategy<Value = Vec<Op>> {
    let entry = (ipv6_value(), ipv6_len()).prop_map(|(v, p)| {
        let m = if p == 0 {
            None
        } else {
            Some(FieldMatch::Lpm {
                value: v & !u128::MAX.checked_shr(p).unwrap_or(0),
                prefix_len: p,
            })
        };
        Op::Insert(vec![m], 0)
    });
    let op = prop_oneof![
        4 => entry,
        1 => any::<usize>().prop_map(Op::Delete),
        4 => ipv6_value().prop_map(|k| Op::Lookup(vec![k])),
    ];
    prop::collection::vec(op, count)
}

fn lpm_len(m: &Option<FieldMatch>) -> u32 {
    match m {
        Some(FieldMatch::Lpm { prefix_len, .. }) => *prefix_len,
        _ => 0,
    }
}

/// Runs `ops` against a table and the reference; returns the number of hits seen.
fn check(keys: &'static [(u32, MatchKind)], with_priority: bool, expect: EngineKind, ops: Vec<Op>) {
    check_in(65_536, keys, with_priority, expect, ops)
}

/// [`check`] on a table declared with `size` entries (LPM tables of 65,536
/// entries or more get a wider root).
fn check_in(
    size: u32,
    keys: &'static [(u32, MatchKind)],
    with_priority: bool,
    expect: EngineKind,
    ops: Vec<Op>,
) {
    let info = table_info(keys, size);
    let program = program(info);
    let widths: Vec<u32> = keys.iter().map(|k| k.0).collect();
    let mut table = Table::with_program(info, program);
    assert_eq!(table.engine_kind(), expect);
    // Reference: (matches, priority, seq, tag) in insertion order.
    let mut reference: Vec<(Vec<Option<FieldMatch>>, i32, u64, u128)> = Vec::new();
    let mut seq = 0u64;
    let mut queue: std::collections::VecDeque<Op> = ops.into();
    while let Some(op) = queue.pop_front() {
        match op {
            Op::Reprioritize(n, priority) => {
                if reference.is_empty() {
                    continue;
                }
                let (matches, ..) = reference[n % reference.len()].clone();
                queue.push_front(Op::Insert(matches, priority));
                queue.push_front(Op::Delete(n));
            }
            Op::Insert(matches, priority) => {
                let tag = seq as u128;
                let dup = reference.iter().any(|e| e.0 == matches && e.1 == priority);
                let r = table.insert(TableEntry {
                    matches: matches.clone(),
                    priority,
                    action: EntryAction::Direct(ActionCall::new(1, &[tag])),
                    metadata: vec![],
                });
                if dup {
                    assert_eq!(r.unwrap_err(), RuntimeError::AlreadyExists { table: "t" });
                } else {
                    r.unwrap();
                    reference.push((matches, priority, seq, tag));
                    seq += 1;
                }
            }
            Op::Delete(n) => {
                if reference.is_empty() {
                    continue;
                }
                let (matches, priority, _, _) = reference.remove(n % reference.len());
                table.delete(&matches, priority).unwrap();
                assert!(matches!(
                    table.delete(&matches, priority),
                    Err(RuntimeError::NotFound { .. })
                ));
            }
            Op::Lookup(key) => {
                let candidates = reference.iter().filter(|e| {
                    e.0.iter()
                        .zip(&key)
                        .zip(&widths)
                        .all(|((m, &k), &w)| m.is_none_or(|m| m.matches(k, w)))
                });
                let want = if with_priority {
                    candidates.min_by_key(|e| (-e.1, e.2))
                } else {
                    // Exact fields are equal among candidates; longest prefix wins.
                    candidates.max_by_key(|e| e.0.iter().map(lpm_len).sum::<u32>())
                };
                let got = table.lookup(&key, 64);
                let got_tag = match got.action {
                    EntryAction::Direct(c) if got.hit => Some(c.params[0]),
                    _ => None,
                };
                assert_eq!(got_tag, want.map(|e| e.3), "key {key:x?}");
                let got = table.lookup_word(&key, 64);
                assert_eq!(
                    word_tag(&table, program, got),
                    want.map(|e| e.3),
                    "word, key {key:x?}"
                );
                // The same key packed into one word, as generated code
                // passes it (every engine, the priority one included).
                if widths.iter().sum::<u32>() <= 128 {
                    let packed = key.iter().zip(&widths).fold(0u128, |acc, (&k, &w)| {
                        acc.checked_shl(w).unwrap_or(0) | (k & mask(w))
                    });
                    let got = table.lookup_packed(packed, 64);
                    let got_tag = match got.action {
                        EntryAction::Direct(c) if got.hit => Some(c.params[0]),
                        _ => None,
                    };
                    assert_eq!(got_tag, want.map(|e| e.3), "packed key {packed:x}");
                    let got = table.lookup_packed_word(packed, 64);
                    assert_eq!(
                        word_tag(&table, program, got),
                        want.map(|e| e.3),
                        "word, packed key {packed:x}"
                    );
                }
            }
        }
        assert_eq!(table.len(), reference.len());
    }
    let entries = table.entries();
    let tags: Vec<u128> = entries
        .iter()
        .map(|e| match &e.action {
            EntryAction::Direct(c) => c.params[0],
            _ => unreachable!(),
        })
        .collect();
    let want: Vec<u128> = reference.iter().map(|e| e.3).collect();
    assert_eq!(tags, want, "entries read back in insertion order");
}

/// Lookup keys near existing prefixes: mutate a few low bits of random keys.
static EXACT: [(u32, MatchKind); 2] = [(8, MatchKind::Exact), (4, MatchKind::Exact)];
static LPM16: [(u32, MatchKind); 1] = [(16, MatchKind::Lpm)];
static LPM4: [(u32, MatchKind); 1] = [(4, MatchKind::Lpm)];
static LPM_EXACT: [(u32, MatchKind); 2] = [(7, MatchKind::Lpm), (3, MatchKind::Exact)];
static LPM24: [(u32, MatchKind); 1] = [(24, MatchKind::Lpm)];
static IPV4: [(u32, MatchKind); 1] = [(32, MatchKind::Lpm)];
static LPM_EXACT_DEEP: [(u32, MatchKind); 2] = [(12, MatchKind::Lpm), (9, MatchKind::Exact)];
static IPV6: [(u32, MatchKind); 1] = [(128, MatchKind::Lpm)];
/// Exactly one 64-bit register: the engine's 64-bit key path at its edge.
static LPM_EXACT_64: [(u32, MatchKind); 2] = [(48, MatchKind::Lpm), (16, MatchKind::Exact)];
/// One 64-bit field: no field before it to shift.
static LPM64: [(u32, MatchKind); 1] = [(64, MatchKind::Lpm)];
/// 65 bits: just past the 64-bit path.
static LPM_EXACT_65: [(u32, MatchKind); 2] = [(32, MatchKind::Lpm), (33, MatchKind::Exact)];
/// 132 bits: past one register, so keys are packed into bytes.
static WIDE_LPM: [(u32, MatchKind); 2] = [(128, MatchKind::Lpm), (4, MatchKind::Exact)];
static MIXED: [(u32, MatchKind); 4] = [
    (6, MatchKind::Ternary),
    (5, MatchKind::Range),
    (3, MatchKind::Optional),
    (4, MatchKind::Lpm),
];
static TERNARY_ONLY: [(u32, MatchKind); 2] = [(8, MatchKind::Ternary), (2, MatchKind::Exact)];
/// A small 5-tuple-like ACL: narrow fields, so that entries overlap often
/// and buckets fill past their limit.
static ACL: [(u32, MatchKind); 4] = [
    (8, MatchKind::Ternary),
    (8, MatchKind::Ternary),
    (4, MatchKind::Ternary),
    (6, MatchKind::Range),
];
/// Ranges and little else: most entries share the one bucket of the
/// catch-all group, told apart by their ranges alone.
static RANGES: [(u32, MatchKind); 2] = [(8, MatchKind::Range), (2, MatchKind::Optional)];
/// 112 bits with a 64-bit field: still packed into one word.
static PACKED_RANGE_APART: [(u32, MatchKind); 3] = [
    (64, MatchKind::Ternary),
    (40, MatchKind::Range),
    (8, MatchKind::Optional),
];
/// Fields over 64 bits: the engine keeps its tests in 128-bit words.
static WIDE_TERNARY: [(u32, MatchKind); 3] = [
    (128, MatchKind::Ternary),
    (16, MatchKind::Range),
    (72, MatchKind::Optional),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn exact_engine_matches_reference(ops in ops(&EXACT, false)) {
        check(&EXACT, false, EngineKind::Exact, ops);
    }

    #[test]
    fn lpm_engine_matches_reference_on_a_tiny_field(ops in ops(&LPM4, false)) {
        check(&LPM4, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn lpm_engine_matches_reference(ops in ops(&LPM16, false)) {
        check(&LPM16, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn lpm_below_the_root_matches_reference(ops in ops(&LPM24, false)) {
        check(&LPM24, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn ipv4_lpm_matches_reference(ops in ops(&IPV4, false)) {
        check(&IPV4, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn lpm_with_exact_field_below_the_root_matches_reference(ops in ops(&LPM_EXACT_DEEP, false)) {
        check(&LPM_EXACT_DEEP, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn ipv4_lpm_in_a_small_table_matches_reference(ops in ops(&IPV4, false)) {
        check_in(1024, &IPV4, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn lpm_below_the_small_root_matches_reference(ops in ops(&LPM24, false)) {
        check_in(1024, &LPM24, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn lpm_filling_64_bits_matches_reference(ops in ops(&LPM_EXACT_64, false)) {
        check(&LPM_EXACT_64, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn lpm_on_one_64_bit_field_matches_reference(ops in ops(&LPM64, false)) {
        check(&LPM64, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn lpm_of_65_bits_matches_reference(ops in ops(&LPM_EXACT_65, false)) {
        check(&LPM_EXACT_65, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn ipv6_lpm_matches_reference(ops in ops(&IPV6, false)) {
        check(&IPV6, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn wide_lpm_matches_reference(ops in ops(&WIDE_LPM, false)) {
        check(&WIDE_LPM, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn lpm_with_exact_field_matches_reference(ops in ops(&LPM_EXACT, false)) {
        check(&LPM_EXACT, false, EngineKind::Lpm, ops);
    }

    #[test]
    fn priority_engine_matches_reference(ops in ops(&MIXED, true)) {
        check(&MIXED, true, EngineKind::Priority, ops);
    }

    #[test]
    fn ternary_engine_matches_reference(ops in ops(&TERNARY_ONLY, true)) {
        check(&TERNARY_ONLY, true, EngineKind::Priority, ops);
    }

    #[test]
    fn wide_priority_engine_matches_reference(ops in ops(&WIDE_TERNARY, true)) {
        check(&WIDE_TERNARY, true, EngineKind::Priority, ops);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Hundreds of IPv6 routes crowding a few root slots: tails fill and
    /// become nodes, routes too long for a tail go through nodes beside
    /// them, root routes change what tails fall back to. Large and small
    /// tables (their roots differ for narrow keys only).
    #[test]
    fn ipv6_tails_match_reference(ops in ipv6_ops(300..900)) {
        check(&IPV6, false, EngineKind::Lpm, ops.clone());
        check_in(1 << 20, &IPV6, false, EngineKind::Lpm, ops);
    }

    /// As above with phases of deletes: tails empty and give their
    /// position its fallback back, and nodes left with nothing are freed.
    #[test]
    fn ipv6_tails_churn_matches_reference(ops in ipv6_ops(300..900).prop_map(to_churn)) {
        check(&IPV6, false, EngineKind::Lpm, ops);
    }

    /// IPv4 with churn, in a large table (18-bit root) and a small one:
    /// tails of 8 routes fill, become nodes and fold back.
    #[test]
    fn ipv4_churn_matches_reference(ops in churn(&IPV4, 0..1, 300..900)) {
        check(&IPV4, false, EngineKind::Lpm, ops.clone());
        check_in(1024, &IPV4, false, EngineKind::Lpm, ops);
    }

    /// Keys past 128 bits (the byte packer) with churn: tails read their
    /// 64 bits from the packed key.
    #[test]
    fn wide_lpm_churn_matches_reference(ops in churn(&WIDE_LPM, 0..1, 300..900)) {
        check(&WIDE_LPM, false, EngineKind::Lpm, ops);
    }

    /// Hundreds of entries with priorities far apart: groups whose best
    /// entry cannot beat the match found so far are skipped (the early
    /// exit), slot arrays grow, shrink and close their gaps on deletion,
    /// and full buckets send entries to other groups. Still the best
    /// match, first inserted among equals, every time.
    #[test]
    fn priority_early_exit_matches_reference(ops in ops_with(&ACL, 1..1000, 300..900)) {
        check(&ACL, true, EngineKind::Priority, ops);
    }

    /// Deletes as frequent as inserts: buckets empty and are refilled,
    /// and the bucket filter in front of the groups is rebuilt smaller
    /// while stale bits remain; no live entry may be hidden.
    #[test]
    fn priority_churn_matches_reference(ops in churn(&ACL, 1..1000, 300..900)) {
        check(&ACL, true, EngineKind::Priority, ops);
    }

    /// Long buckets whose heads fail: the rest of a bucket is scanned
    /// now or after the chunk's other heads, and skipped when the
    /// priority of its second entry (kept in the slot) cannot win; ties
    /// among those entries, deletes that change a bucket's second entry.
    #[test]
    fn priority_long_buckets_match_reference(ops in churn(&RANGES, 1..6, 300..900)) {
        check(&RANGES, true, EngineKind::Priority, ops);
    }

    /// Wildcard entries among the first few by rank, added, deleted and
    /// moved to other priorities (ties included): the entries ranked
    /// above the best wildcard are scanned instead of the groups, and
    /// that band follows every change.
    #[test]
    fn priority_wildcard_band_matches_reference(ops in with_wildcards(&ACL, 1..40, 300..900)) {
        check(&ACL, true, EngineKind::Priority, ops);
    }

    /// The same with few priorities (ties everywhere), on a key of every
    /// match kind, and on one that just fits the packed word.
    #[test]
    fn priority_wildcard_ties_match_reference(
        acl in with_wildcards(&ACL, 1..4, 100..400),
        mixed in with_wildcards(&MIXED, 1..6, 100..400),
        apart in with_wildcards(&PACKED_RANGE_APART, 1..6, 100..400),
    ) {
        check(&ACL, true, EngineKind::Priority, acl);
        check(&MIXED, true, EngineKind::Priority, mixed);
        check(&PACKED_RANGE_APART, true, EngineKind::Priority, apart);
    }

    /// Tables below the bit-vector stage's limit are answered by it (the
    /// proptests above, all under a few hundred entries); this one goes
    /// past the limit, where the groups answer, and back below half of it.
    #[test]
    fn priority_past_the_bit_vector_stage_matches_reference(
        acl in past_the_stage(&ACL),
        apart in past_the_stage(&PACKED_RANGE_APART),
    ) {
        check(&ACL, true, EngineKind::Priority, acl);
        check(&PACKED_RANGE_APART, true, EngineKind::Priority, apart);
    }

    #[test]
    fn priority_ties_match_reference_in_a_large_table(ops in ops_with(&ACL, 1..3, 300..900)) {
        check(&ACL, true, EngineKind::Priority, ops);
    }
}

/// Deep, overlapping IPv4 prefixes inserted and deleted in random order:
/// every deletion must restore the next-longer covering prefix.
#[test]
fn lpm_nested_prefixes_delete_in_any_order() {
    let info = table_info(&IPV4, 1024);
    let mut table = Table::new(info);
    let addr: u128 = 0xc0a8_0137;
    let prefix = |p: u32| {
        if p == 0 {
            None
        } else {
            Some(FieldMatch::Lpm {
                value: addr & (mask(32) ^ mask(32 - p)),
                prefix_len: p,
            })
        }
    };
    let entry = |p: u32| TableEntry {
        matches: vec![prefix(p)],
        priority: 0,
        action: EntryAction::Direct(ActionCall::new(1, &[p as u128])),
        metadata: vec![],
    };
    let mut live: Vec<u32> = (0..=32).collect();
    for &p in &live {
        table.insert(entry(p)).unwrap();
    }
    // A deterministic shuffle of the deletion order.
    let mut order = live.clone();
    for i in 0..order.len() {
        let j = (i * 7919 + 13) % order.len();
        order.swap(i, j);
    }
    for p in order {
        live.retain(|&x| x != p);
        table.delete(&[prefix(p)], 0).unwrap();
        for probe_len in 0..=32u32 {
            // An address sharing exactly `probe_len` leading bits with `addr`.
            let probe = if probe_len == 32 {
                addr
            } else {
                addr ^ (1u128 << (31 - probe_len))
            };
            let want = live.iter().copied().filter(|&l| l <= probe_len).max();
            let got = table.lookup(&[probe], 0);
            let got = match got.action {
                EntryAction::Direct(c) if got.hit => Some(c.params[0] as u32),
                _ => None,
            };
            assert_eq!(
                got, want,
                "after deleting /{p}, probe sharing {probe_len} bits"
            );
        }
    }
}
