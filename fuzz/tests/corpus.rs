//! The fuzz targets on stable: each runs over its corpus (`corpus/NAME/`)
//! and a few built-in seeds, then for `FUZZ_SECONDS` (default 2) over
//! inputs mutated from them by a seeded generator (bit flips, byte
//! overwrites, truncation, insertion, splicing). A panic is a finding: the
//! test prints the input in hex.

use std::time::{Duration, Instant};

use prost::Message;
use proto::p4::v1 as pb;

/// The seeded generator behind the P4 `random` extern (SplitMix64).
struct Rng(p4_target::externs::Rng);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n.max(1) as u64) as usize
    }
}

fn corpus(name: &str) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(name);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
        .into_iter()
        .filter_map(|p| std::fs::read(p).ok())
        .collect()
}

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut d = seeds[rng.below(seeds.len())].clone();
    for _ in 0..1 + rng.below(4) {
        match rng.below(6) {
            0 if !d.is_empty() => {
                let i = rng.below(d.len());
                d[i] ^= 1 << rng.below(8);
            }
            1 if !d.is_empty() => {
                let i = rng.below(d.len());
                d[i] = rng.next() as u8;
            }
            2 => d.truncate(rng.below(d.len() + 1)),
            3 => {
                let i = rng.below(d.len() + 1);
                d.insert(i, rng.next() as u8);
            }
            4 => {
                let other = &seeds[rng.below(seeds.len())];
                let at = rng.below(other.len() + 1);
                d.extend_from_slice(&other[at..]);
            }
            _ => {
                let n = rng.below(64);
                d.extend((0..n).map(|_| rng.next() as u8));
            }
        }
    }
    d
}

fn run(name: &str, target: fn(&[u8]), mut seeds: Vec<Vec<u8>>) {
    seeds.extend(corpus(name));
    seeds.push(Vec::new());
    let check = |input: &[u8]| {
        let r = std::panic::catch_unwind(|| target(input));
        if r.is_err() {
            let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
            panic!("{name}: input {hex}");
        }
    };
    for s in &seeds {
        check(s);
    }
    let secs: f64 = std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let mut rng = Rng(p4_target::externs::Rng::new(0x00f0_221e ^ name.len() as u64));
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut n = 0u64;
    while Instant::now() < end {
        check(&mutate(&mut rng, &seeds));
        n += 1;
    }
    eprintln!("{name}: {} seeds, {n} mutated inputs", seeds.len());
}

#[test]
fn switch_frame() {
    run("switch_frame", roceswitch_fuzz::switch_frame, Vec::new());
}

#[test]
fn mac_pfc() {
    run("mac_pfc", roceswitch_fuzz::mac_pfc, Vec::new());
}

#[test]
fn roce_header() {
    run("roce_header", roceswitch_fuzz::roce_header, Vec::new());
}

#[test]
fn fabric_config() {
    let valid = serde_json::to_vec(&dataplane::fabric::FabricConfig::default()).unwrap();
    run("fabric_config", roceswitch_fuzz::fabric_config, vec![valid]);
}

#[test]
fn state_file() {
    run("state_file", roceswitch_fuzz::state_file, Vec::new());
}

#[test]
fn p4rt_write() {
    // An insert into every table of roce_switch.p4 with its first action
    // and all-zero exact keys: the mutations start from requests that
    // reach deep into the write path.
    let info = &dataplane::roce::PROGRAM_INFO;
    let mut updates = Vec::new();
    for t in info.tables.iter() {
        let Some(action) = t.actions.first() else {
            continue;
        };
        updates.push(pb::Update {
            r#type: pb::update::Type::Insert as i32,
            entity: Some(pb::Entity {
                entity: Some(pb::entity::Entity::TableEntry(pb::TableEntry {
                    table_id: t.id,
                    action: Some(pb::TableAction {
                        r#type: Some(pb::table_action::Type::Action(pb::Action {
                            action_id: action.id,
                            ..Default::default()
                        })),
                    }),
                    ..Default::default()
                })),
            }),
            ..Default::default()
        });
    }
    let req = pb::WriteRequest {
        device_id: 1,
        updates,
        ..Default::default()
    };
    run(
        "p4rt_write",
        roceswitch_fuzz::p4rt_write,
        vec![req.encode_to_vec()],
    );
}
