//! P4Runtime Write/Read throughput over loopback gRPC into a `LocalDevice`
//! (one LPM table of 65,536 entries): prints updates per second for
//! one-update requests and 1,000-update batches, and the time to read the
//! whole table back. Run with `cargo bench -p control --bench p4rt_write`.

use std::time::Instant;

use control::device::LocalDevice;
use control::p4rt::{P4RuntimeConfig, P4RuntimeService};
use p4_target::info::*;
use p4_target::runtime::Runtime;
use proto::p4::v1 as pb;
use proto::p4::v1::p4_runtime_client::P4RuntimeClient;

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

fn route(i: u32, port: u8) -> pb::Update {
    let prefix = (i << 8).to_be_bytes().to_vec();
    pb::Update {
        r#type: pb::update::Type::Insert as i32,
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

#[tokio::main]
async fn main() {
    let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let svc = P4RuntimeService::from_program(&PROGRAM, device, P4RuntimeConfig::default()).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(svc.into_server())
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    let mut client = P4RuntimeClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    let write = |updates: Vec<pb::Update>| pb::WriteRequest {
        device_id: 1,
        updates,
        ..Default::default()
    };

    let n_single = 5_000u32;
    let t = Instant::now();
    for i in 0..n_single {
        client.write(write(vec![route(i, 1)])).await.unwrap();
    }
    let single = t.elapsed();
    let (n_batch, batch) = (50_000u32, 1_000u32);
    let t = Instant::now();
    for start in (n_single..n_single + n_batch).step_by(batch as usize) {
        client
            .write(write((start..start + batch).map(|i| route(i, 2)).collect()))
            .await
            .unwrap();
    }
    let batched = t.elapsed();
    let t = Instant::now();
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
    let read_time = t.elapsed();
    assert_eq!(read, (n_single + n_batch) as usize);
    println!(
        "p4rt_write: 1 update/request:    {:>9.0} updates/s ({n_single} requests)",
        f64::from(n_single) / single.as_secs_f64()
    );
    println!(
        "p4rt_write: {batch} updates/request: {:>9.0} updates/s ({n_batch} updates)",
        f64::from(n_batch) / batched.as_secs_f64()
    );
    println!(
        "p4rt_write: wildcard read of {read} entries: {:.1} ms",
        read_time.as_secs_f64() * 1e3
    );
}
