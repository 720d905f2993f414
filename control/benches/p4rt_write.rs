//! P4Runtime Write/Read throughput over loopback gRPC into a `LocalDevice`
//! (one LPM table of 65,536 entries), without and with a state file
//! ([`control::p4rt::persist`]): updates per second for one-update requests
//! and 1,000-update batches, then modifies of every entry (the journal
//! outgrows the live state, so compactions happen inside the timed loop);
//! the time to read the whole table back, the state file's size and the
//! time to restore it into a fresh service. Run with
//! `cargo bench -p control --bench p4rt_write`.

use std::path::Path;
use std::time::{Duration, Instant};

use control::device::LocalDevice;
use control::p4rt::{P4RuntimeConfig, P4RuntimeService};
use control::serve::{Bound, Listen};
use p4_target::info::*;
use p4_target::runtime::Runtime;
use proto::p4::v1 as pb;
use proto::p4::v1::p4_runtime_client::P4RuntimeClient;
use tonic::transport::Channel;

static PORT: [ParamInfo; 1] = [ParamInfo {
    id: 1,
    name: "port",
    bitwidth: 9,
}];
static ACTIONS: [ActionInfo; 1] = [ActionInfo {
    id: 0x0100_0001,
    name: "set_port",
    params: &PORT,
}];
static KEYS: [KeyInfo; 1] = [KeyInfo {
    id: 1,
    name: "dst",
    bitwidth: 32,
    kind: MatchKind::Lpm,
}];
static REFS: [ActionRef; 1] = [ActionRef {
    id: 0x0100_0001,
    scope: ActionScope::TableAndDefault,
}];
static TABLES: [TableInfo; 1] = [TableInfo {
    id: 0x0200_0001,
    name: "routes",
    keys: &KEYS,
    actions: &REFS,
    size: 65536,
    implementation: None,
    default_action: (0x0100_0001, &[0]),
    default_is_const: false,
    is_const: false,
    const_entries: &[],
    direct_counter: None,
    direct_meter: None,
    idle_timeout: false,
}];
static PROGRAM: ProgramInfo = ProgramInfo {
    name: "bench",
    arch: "v1model",
    tables: &TABLES,
    actions: &ACTIONS,
    action_profiles: &[],
    counters: &[],
    meters: &[],
    registers: &[],
    digests: &[],
    controller_headers: &[],
    value_sets: &[],
    p4info_text: r#"
tables { preamble { id: 33554433 name: "routes" } match_fields { id: 1 name: "dst" bitwidth: 32 match_type: LPM } action_refs { id: 16777217 } size: 65536 }
actions { preamble { id: 16777217 name: "set_port" } params { id: 1 name: "port" bitwidth: 9 } }
"#,
};

fn route(ty: pb::update::Type, i: u32, port: u8) -> pb::Update {
    let prefix = (i << 8).to_be_bytes().to_vec();
    pb::Update {
        r#type: ty as i32,
        entity: Some(pb::Entity {
            entity: Some(pb::entity::Entity::TableEntry(pb::TableEntry {
                table_id: 0x0200_0001,
                r#match: vec![pb::FieldMatch {
                    field_id: 1,
                    field_match_type: Some(pb::field_match::FieldMatchType::Lpm(
                        pb::field_match::Lpm {
                            value: prefix,
                            prefix_len: 24,
                        },
                    )),
                }],
                action: Some(pb::TableAction {
                    r#type: Some(pb::table_action::Type::Action(pb::Action {
                        action_id: 0x0100_0001,
                        params: vec![pb::action::Param {
                            param_id: 1,
                            value: vec![port],
                        }],
                    })),
                }),
                ..Default::default()
            })),
        }),
    }
}

const N_SINGLE: u32 = 5_000;
const N_BATCHED: u32 = 50_000;
const BATCH: u32 = 1_000;

async fn service(state: Option<&Path>) -> (P4RuntimeClient<Channel>, Duration) {
    let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let svc = P4RuntimeService::from_program(&PROGRAM, device, P4RuntimeConfig::default()).unwrap();
    let t = Instant::now();
    if let Some(path) = state {
        svc.restore(path).await.unwrap();
    }
    let restore = t.elapsed();
    // Served as the daemon serves (`control::serve`: same server settings).
    let bound = Bound::bind(&Listen::Tcp("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap();
    tokio::spawn(bound.serve(Some(svc), None, std::future::pending()));
    let client = P4RuntimeClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    (client, restore)
}

fn request(updates: Vec<pb::Update>) -> pb::WriteRequest {
    pb::WriteRequest {
        device_id: 1,
        updates,
        ..Default::default()
    }
}

/// (single, batched, modify-all rounds) throughput in updates/s.
async fn run(client: &mut P4RuntimeClient<Channel>, rounds: u32) -> (f64, f64, f64) {
    use pb::update::Type::{Insert, Modify};
    let t = Instant::now();
    for i in 0..N_SINGLE {
        client
            .write(request(vec![route(Insert, i, 1)]))
            .await
            .unwrap();
    }
    let single = f64::from(N_SINGLE) / t.elapsed().as_secs_f64();
    let t = Instant::now();
    for start in (N_SINGLE..N_SINGLE + N_BATCHED).step_by(BATCH as usize) {
        let updates = (start..start + BATCH)
            .map(|i| route(Insert, i, 2))
            .collect();
        client.write(request(updates)).await.unwrap();
    }
    let batched = f64::from(N_BATCHED) / t.elapsed().as_secs_f64();
    let total = N_SINGLE + N_BATCHED;
    let t = Instant::now();
    for round in 0..rounds {
        for start in (0..total).step_by(BATCH as usize) {
            let end = (start + BATCH).min(total);
            let port = 3 + round as u8;
            let updates = (start..end).map(|i| route(Modify, i, port)).collect();
            client.write(request(updates)).await.unwrap();
        }
    }
    let modified = f64::from(total * rounds) / t.elapsed().as_secs_f64();
    (single, batched, modified)
}

/// Reads every table entry back; returns how many there were.
async fn read_all(client: &mut P4RuntimeClient<Channel>) -> usize {
    let mut stream = client
        .read(pb::ReadRequest {
            device_id: 1,
            entities: vec![pb::Entity {
                entity: Some(pb::entity::Entity::TableEntry(Default::default())),
            }],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut read = 0;
    while let Some(r) = stream.message().await.unwrap() {
        read += r.entities.len();
    }
    read
}

#[tokio::main]
async fn main() {
    let rounds = 3;
    let (mut plain, _) = service(None).await;
    let without = run(&mut plain, rounds).await;
    let t = Instant::now();
    let read = read_all(&mut plain).await;
    println!(
        "p4rt_write: wildcard read of {read} entries: {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.p4rt");
    let (mut persisted, _) = service(Some(&path)).await;
    let with = run(&mut persisted, rounds).await;
    let size = std::fs::metadata(&path).unwrap().len();
    let (_, restore) = service(Some(&path)).await;
    let total = N_SINGLE + N_BATCHED;
    for (what, a, b) in [
        ("1 update/request", without.0, with.0),
        ("1000 updates/request", without.1, with.1),
        ("modify all x3, 1000/request", without.2, with.2),
    ] {
        println!(
            "p4rt_write: {what:<28} {a:>9.0} updates/s without state file, {b:>9.0} with ({:.0}%)",
            100.0 * b / a
        );
    }
    println!(
        "p4rt_write: state file after {} updates on {total} live entries: {:.1} MB; restore into a fresh service: {:.0} ms",
        total * (1 + rounds),
        size as f64 / 1e6,
        restore.as_secs_f64() * 1e3
    );
}
