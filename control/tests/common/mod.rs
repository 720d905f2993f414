//! Shared fixture for the gRPC tests: a small hand-built program (LPM table
//! with a direct counter, a ternary+range ACL, an ECMP table behind a
//! selector, a fabric-owned QoS table, a const table, indirect counter,
//! meter and register, packet_in/packet_out headers), its P4Info text, and
//! a P4Runtime server on 127.0.0.1:0 over a `LocalDevice`.

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use control::device::LocalDevice;
use control::p4rt::{P4RuntimeConfig, P4RuntimeService};
use p4_target::info::*;
use p4_target::runtime::{FieldMatch, Runtime};
use proto::p4::v1 as pb;
use proto::p4::v1::p4_runtime_client::P4RuntimeClient;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

pub const NO_ACTION: u32 = 0x0100_0001;
pub const SET_PORT: u32 = 0x0100_0002;
pub const DROP: u32 = 0x0100_0003;
pub const SET_NHOP: u32 = 0x0100_0004;
pub const SET_PRIO: u32 = 0x0100_0005;

pub const T_LPM: u32 = 0x0200_0001;
pub const T_ACL: u32 = 0x0200_0002;
pub const T_ECMP: u32 = 0x0200_0003;
pub const T_QOS: u32 = 0x0200_0004;
pub const T_CONST: u32 = 0x0200_0005;
pub const P_ECMP: u32 = 0x1100_0001;
pub const C_PORT: u32 = 0x1200_0001;
pub const C_LPM: u32 = 0x1300_0001;
pub const M_POLICE: u32 = 0x1400_0001;
pub const R_SEEN: u32 = 0x1600_0001;

static PORT: [ParamInfo; 1] = [ParamInfo {
    id: 1,
    name: "port",
    bitwidth: 9,
}];
static NHOP: [ParamInfo; 2] = [
    ParamInfo {
        id: 1,
        name: "dmac",
        bitwidth: 48,
    },
    ParamInfo {
        id: 2,
        name: "port",
        bitwidth: 9,
    },
];
static PRIO: [ParamInfo; 1] = [ParamInfo {
    id: 1,
    name: "prio",
    bitwidth: 3,
}];
static ACTIONS: [ActionInfo; 5] = [
    ActionInfo {
        id: NO_ACTION,
        name: "NoAction",
        params: &[],
    },
    ActionInfo {
        id: SET_PORT,
        name: "MyIngress.set_port",
        params: &PORT,
    },
    ActionInfo {
        id: DROP,
        name: "MyIngress.drop",
        params: &[],
    },
    ActionInfo {
        id: SET_NHOP,
        name: "MyIngress.set_nhop",
        params: &NHOP,
    },
    ActionInfo {
        id: SET_PRIO,
        name: "MyIngress.set_prio",
        params: &PRIO,
    },
];
static LPM_KEYS: [KeyInfo; 1] = [KeyInfo {
    id: 1,
    name: "hdr.ipv4.dstAddr",
    bitwidth: 32,
    kind: MatchKind::Lpm,
}];
static LPM_ACTIONS: [ActionRef; 3] = [
    ActionRef {
        id: SET_PORT,
        scope: ActionScope::TableAndDefault,
    },
    ActionRef {
        id: DROP,
        scope: ActionScope::DefaultOnly,
    },
    ActionRef {
        id: SET_NHOP,
        scope: ActionScope::TableOnly,
    },
];
static ACL_KEYS: [KeyInfo; 2] = [
    KeyInfo {
        id: 1,
        name: "hdr.ipv4.protocol",
        bitwidth: 8,
        kind: MatchKind::Ternary,
    },
    KeyInfo {
        id: 2,
        name: "meta.l4_dport",
        bitwidth: 16,
        kind: MatchKind::Range,
    },
];
static ACL_ACTIONS: [ActionRef; 2] = [
    ActionRef {
        id: NO_ACTION,
        scope: ActionScope::TableAndDefault,
    },
    ActionRef {
        id: DROP,
        scope: ActionScope::TableAndDefault,
    },
];
static ECMP_KEYS: [KeyInfo; 1] = [KeyInfo {
    id: 1,
    name: "meta.nhop_group",
    bitwidth: 16,
    kind: MatchKind::Exact,
}];
static ECMP_ACTIONS: [ActionRef; 2] = [
    ActionRef {
        id: SET_NHOP,
        scope: ActionScope::TableAndDefault,
    },
    ActionRef {
        id: DROP,
        scope: ActionScope::TableAndDefault,
    },
];
static QOS_KEYS: [KeyInfo; 1] = [KeyInfo {
    id: 1,
    name: "hdr.ipv4.dscp",
    bitwidth: 6,
    kind: MatchKind::Exact,
}];
static QOS_ACTIONS: [ActionRef; 1] = [ActionRef {
    id: SET_PRIO,
    scope: ActionScope::TableAndDefault,
}];
static CONST_KEYS: [KeyInfo; 1] = [KeyInfo {
    id: 1,
    name: "hdr.ethernet.etherType",
    bitwidth: 16,
    kind: MatchKind::Exact,
}];
static CONST_ACTIONS: [ActionRef; 2] = [
    ActionRef {
        id: NO_ACTION,
        scope: ActionScope::TableAndDefault,
    },
    ActionRef {
        id: DROP,
        scope: ActionScope::TableAndDefault,
    },
];
static CONST_ENTRIES: [ConstEntryInfo; 1] = [ConstEntryInfo {
    matches: &[Some(FieldMatch::Exact(0x0806))],
    priority: 0,
    action_id: DROP,
    params: &[],
}];

static TABLES: [TableInfo; 5] = [
    TableInfo {
        direct_counter: Some(C_LPM),
        ..TableInfo::plain(
            T_LPM,
            "MyIngress.ipv4_lpm",
            &LPM_KEYS,
            &LPM_ACTIONS,
            8,
            (DROP, &[]),
        )
    },
    TableInfo {
        idle_timeout: true,
        ..TableInfo::plain(
            T_ACL,
            "MyIngress.acl",
            &ACL_KEYS,
            &ACL_ACTIONS,
            16,
            (NO_ACTION, &[]),
        )
    },
    TableInfo {
        implementation: Some(P_ECMP),
        ..TableInfo::plain(
            T_ECMP,
            "MyIngress.ecmp",
            &ECMP_KEYS,
            &ECMP_ACTIONS,
            16,
            (DROP, &[]),
        )
    },
    TableInfo::plain(
        T_QOS,
        "MyIngress.dscp_to_priority",
        &QOS_KEYS,
        &QOS_ACTIONS,
        64,
        (SET_PRIO, &[0]),
    ),
    TableInfo {
        default_is_const: true,
        is_const: true,
        const_entries: &CONST_ENTRIES,
        ..TableInfo::plain(
            T_CONST,
            "MyIngress.arp_filter",
            &CONST_KEYS,
            &CONST_ACTIONS,
            4,
            (NO_ACTION, &[]),
        )
    },
];

static OUT_FIELDS: [MetaFieldInfo; 2] = [
    MetaFieldInfo {
        id: 1,
        name: "egress_port",
        bitwidth: 9,
        signed: false,
    },
    MetaFieldInfo {
        id: 2,
        name: "_pad",
        bitwidth: 7,
        signed: false,
    },
];
static IN_FIELDS: [MetaFieldInfo; 2] = [
    MetaFieldInfo {
        id: 1,
        name: "ingress_port",
        bitwidth: 9,
        signed: false,
    },
    MetaFieldInfo {
        id: 2,
        name: "_pad",
        bitwidth: 7,
        signed: false,
    },
];

pub const P4INFO_TEXT: &str = r#"
pkg_info { arch: "v1model" }
tables {
  preamble { id: 33554433 name: "MyIngress.ipv4_lpm" alias: "ipv4_lpm" }
  match_fields { id: 1 name: "hdr.ipv4.dstAddr" bitwidth: 32 match_type: LPM }
  action_refs { id: 16777218 }
  action_refs { id: 16777219 annotations: "@defaultonly" scope: DEFAULT_ONLY }
  action_refs { id: 16777220 annotations: "@tableonly" scope: TABLE_ONLY }
  direct_resource_ids: 318767105
  size: 8
}
tables {
  preamble { id: 33554434 name: "MyIngress.acl" alias: "acl" }
  match_fields { id: 1 name: "hdr.ipv4.protocol" bitwidth: 8 match_type: TERNARY }
  match_fields { id: 2 name: "meta.l4_dport" bitwidth: 16 match_type: RANGE }
  action_refs { id: 16777217 }
  action_refs { id: 16777219 }
  size: 16
  idle_timeout_behavior: NOTIFY_CONTROL
}
tables {
  preamble { id: 33554435 name: "MyIngress.ecmp" alias: "ecmp" }
  match_fields { id: 1 name: "meta.nhop_group" bitwidth: 16 match_type: EXACT }
  action_refs { id: 16777220 }
  action_refs { id: 16777219 }
  implementation_id: 285212673
  size: 16
}
tables {
  preamble { id: 33554436 name: "MyIngress.dscp_to_priority" alias: "dscp_to_priority" annotations: "@roceswitch_owner(\"fabric\")" }
  match_fields { id: 1 name: "hdr.ipv4.dscp" bitwidth: 6 match_type: EXACT }
  action_refs { id: 16777221 }
  size: 64
}
tables {
  preamble { id: 33554437 name: "MyIngress.arp_filter" alias: "arp_filter" }
  match_fields { id: 1 name: "hdr.ethernet.etherType" bitwidth: 16 match_type: EXACT }
  action_refs { id: 16777217 }
  action_refs { id: 16777219 }
  const_default_action_id: 16777217
  size: 4
  is_const_table: true
  has_initial_entries: true
}
actions { preamble { id: 16777217 name: "NoAction" alias: "NoAction" } }
actions {
  preamble { id: 16777218 name: "MyIngress.set_port" alias: "set_port" }
  params { id: 1 name: "port" bitwidth: 9 }
}
actions { preamble { id: 16777219 name: "MyIngress.drop" alias: "drop" } }
actions {
  preamble { id: 16777220 name: "MyIngress.set_nhop" alias: "set_nhop" }
  params { id: 1 name: "dmac" bitwidth: 48 }
  params { id: 2 name: "port" bitwidth: 9 }
}
actions {
  preamble { id: 16777221 name: "MyIngress.set_prio" alias: "set_prio" }
  params { id: 1 name: "prio" bitwidth: 3 }
}
action_profiles {
  preamble { id: 285212673 name: "MyIngress.ecmp_selector" alias: "ecmp_selector" }
  table_ids: 33554435
  with_selector: true
  size: 4
}
counters {
  preamble { id: 301989889 name: "port_counter" alias: "port_counter" }
  spec { unit: BOTH }
  size: 8
}
direct_counters {
  preamble { id: 318767105 name: "lpm_counter" alias: "lpm_counter" }
  spec { unit: BOTH }
  direct_table_id: 33554433
}
meters {
  preamble { id: 335544321 name: "police" alias: "police" }
  spec { unit: PACKETS }
  size: 2
}
controller_packet_metadata {
  preamble { id: 67108865 name: "packet_out" alias: "packet_out" annotations: "@controller_header(\"packet_out\")" }
  metadata { id: 1 name: "egress_port" bitwidth: 9 }
  metadata { id: 2 name: "_pad" bitwidth: 7 }
}
controller_packet_metadata {
  preamble { id: 67108866 name: "packet_in" alias: "packet_in" annotations: "@controller_header(\"packet_in\")" }
  metadata { id: 1 name: "ingress_port" bitwidth: 9 }
  metadata { id: 2 name: "_pad" bitwidth: 7 }
}
registers {
  preamble { id: 369098753 name: "seen" alias: "seen" }
  type_spec { bitstring { bit { bitwidth: 32 } } }
  size: 4
}
type_info { }
"#;

pub static PROGRAM: ProgramInfo = ProgramInfo {
    name: "ctltest",
    tables: &TABLES,
    actions: &ACTIONS,
    action_profiles: &[ActionProfileInfo {
        id: P_ECMP,
        name: "MyIngress.ecmp_selector",
        table_ids: &[T_ECMP],
        selector: Some((HashAlgorithm::Crc16, 16)),
        size: 4,
    }],
    counters: &[
        CounterInfo {
            id: C_PORT,
            name: "port_counter",
            unit: CounterUnit::Both,
            size: 8,
            direct_table: None,
        },
        CounterInfo {
            id: C_LPM,
            name: "lpm_counter",
            unit: CounterUnit::Both,
            size: 0,
            direct_table: Some(T_LPM),
        },
    ],
    meters: &[MeterInfo {
        id: M_POLICE,
        name: "police",
        unit: CounterUnit::Packets,
        size: 2,
        direct_table: None,
    }],
    registers: &[RegisterInfo {
        id: R_SEEN,
        name: "seen",
        bitwidth: 32,
        signed: false,
        size: 4,
    }],
    controller_headers: &[
        ControllerHeaderInfo {
            id: 0x0400_0001,
            name: "packet_out",
            fields: &OUT_FIELDS,
        },
        ControllerHeaderInfo {
            id: 0x0400_0002,
            name: "packet_in",
            fields: &IN_FIELDS,
        },
    ],
    p4info_text: P4INFO_TEXT,
    ..ProgramInfo::EMPTY
};

pub const DEVICE: u64 = 1;

/// A running server and what tests need to reach it.
pub struct Harness {
    pub addr: std::net::SocketAddr,
    pub device: Arc<LocalDevice>,
}

/// The P4Runtime service for `program` over `device`, with device id [`DEVICE`].
pub fn service(
    program: &'static ProgramInfo,
    device: Arc<dyn control::device::Device>,
) -> P4RuntimeService {
    P4RuntimeService::from_program(
        program,
        device,
        P4RuntimeConfig {
            device_id: DEVICE,
            ..Default::default()
        },
    )
    .unwrap()
}

/// Serves `svc` on 127.0.0.1:0: its address and the server task.
pub async fn serve(svc: P4RuntimeService) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let _ = tonic::transport::Server::builder()
            .add_service(svc.into_server())
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
            .await;
    });
    (addr, server)
}

impl Harness {
    /// The fixture program on a fresh `LocalDevice`.
    pub async fn start() -> Harness {
        Harness::start_on(&PROGRAM, LocalDevice::new(Box::new(Runtime::new(&PROGRAM)))).await
    }

    /// The fixture program with owned tables writable only by their owner's
    /// role (`--owned-table-access owner-only`).
    #[allow(dead_code)]
    pub async fn start_owner_only() -> Harness {
        let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
        let svc = P4RuntimeService::from_program(
            &PROGRAM,
            device.clone(),
            P4RuntimeConfig {
                device_id: DEVICE,
                owned_table_access: control::p4rt::roles::OwnedTableAccess::OwnerOnly,
                ..Default::default()
            },
        )
        .unwrap();
        let (addr, _server) = serve(svc).await;
        Harness { addr, device }
    }

    /// `program`'s service over `device`.
    pub async fn start_on(program: &'static ProgramInfo, device: Arc<LocalDevice>) -> Harness {
        let (addr, _server) = serve(service(program, device.clone())).await;
        Harness { addr, device }
    }

    pub async fn client(&self) -> P4RuntimeClient<Channel> {
        P4RuntimeClient::connect(format!("http://{}", self.addr))
            .await
            .unwrap()
    }
}

/// An open StreamChannel.
pub struct Controller {
    pub client: P4RuntimeClient<Channel>,
    pub tx: mpsc::Sender<pb::StreamMessageRequest>,
    pub rx: tonic::Streaming<pb::StreamMessageResponse>,
    pub election_id: u128,
}

pub fn u128_wire(v: u128) -> pb::Uint128 {
    pb::Uint128 {
        high: (v >> 64) as u64,
        low: v as u64,
    }
}

pub fn arbitration_msg(device: u64, election_id: Option<u128>) -> pb::StreamMessageRequest {
    pb::StreamMessageRequest {
        update: Some(pb::stream_message_request::Update::Arbitration(
            pb::MasterArbitrationUpdate {
                device_id: device,
                election_id: election_id.map(u128_wire),
                ..Default::default()
            },
        )),
    }
}

/// Opens a stream and sends the arbitration message; returns the stream
/// and the first reply (or the stream's error status).
pub async fn open_stream(
    h: &Harness,
    device: u64,
    election_id: Option<u128>,
) -> (
    Controller,
    Result<pb::MasterArbitrationUpdate, tonic::Status>,
) {
    let mut client = h.client().await;
    let (tx, rx) = mpsc::channel(16);
    tx.send(arbitration_msg(device, election_id)).await.unwrap();
    let mut stream = client
        .stream_channel(ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let first = next_arbitration(&mut stream).await;
    (
        Controller {
            client,
            tx,
            rx: stream,
            election_id: election_id.unwrap_or(0),
        },
        first,
    )
}

pub async fn next_arbitration(
    rx: &mut tonic::Streaming<pb::StreamMessageResponse>,
) -> Result<pb::MasterArbitrationUpdate, tonic::Status> {
    loop {
        let msg = tokio::time::timeout(std::time::Duration::from_secs(5), rx.message())
            .await
            .expect("arbitration reply within 5 s")?;
        match msg.and_then(|m| m.update) {
            Some(pb::stream_message_response::Update::Arbitration(a)) => return Ok(a),
            Some(_) => continue,
            None => return Err(tonic::Status::cancelled("stream ended")),
        }
    }
}

pub async fn primary(h: &Harness, election_id: u128) -> Controller {
    let (c, first) = open_stream(h, DEVICE, Some(election_id)).await;
    assert_eq!(
        first.unwrap().status.unwrap().code,
        0,
        "expected to be primary"
    );
    c
}

// ---- message builders -------------------------------------------------

pub fn exact(field_id: u32, value: &[u8]) -> pb::FieldMatch {
    pb::FieldMatch {
        field_id,
        field_match_type: Some(pb::field_match::FieldMatchType::Exact(
            pb::field_match::Exact {
                value: value.to_vec(),
            },
        )),
    }
}
pub fn lpm(field_id: u32, value: &[u8], prefix_len: i32) -> pb::FieldMatch {
    pb::FieldMatch {
        field_id,
        field_match_type: Some(pb::field_match::FieldMatchType::Lpm(pb::field_match::Lpm {
            value: value.to_vec(),
            prefix_len,
        })),
    }
}
pub fn ternary(field_id: u32, value: &[u8], mask: &[u8]) -> pb::FieldMatch {
    pb::FieldMatch {
        field_id,
        field_match_type: Some(pb::field_match::FieldMatchType::Ternary(
            pb::field_match::Ternary {
                value: value.to_vec(),
                mask: mask.to_vec(),
            },
        )),
    }
}
pub fn range(field_id: u32, low: &[u8], high: &[u8]) -> pb::FieldMatch {
    pb::FieldMatch {
        field_id,
        field_match_type: Some(pb::field_match::FieldMatchType::Range(
            pb::field_match::Range {
                low: low.to_vec(),
                high: high.to_vec(),
            },
        )),
    }
}
pub fn action(action_id: u32, params: &[(u32, &[u8])]) -> pb::Action {
    pb::Action {
        action_id,
        params: params
            .iter()
            .map(|&(param_id, v)| pb::action::Param {
                param_id,
                value: v.to_vec(),
            })
            .collect(),
    }
}
pub fn direct(a: pb::Action) -> Option<pb::TableAction> {
    Some(pb::TableAction {
        r#type: Some(pb::table_action::Type::Action(a)),
    })
}
pub fn entry(
    table_id: u32,
    matches: Vec<pb::FieldMatch>,
    a: Option<pb::TableAction>,
    priority: i32,
) -> pb::TableEntry {
    pb::TableEntry {
        table_id,
        r#match: matches,
        action: a,
        priority,
        ..Default::default()
    }
}
pub fn update(ty: pb::update::Type, e: pb::entity::Entity) -> pb::Update {
    pb::Update {
        r#type: ty as i32,
        entity: Some(pb::Entity { entity: Some(e) }),
    }
}
pub fn insert(te: pb::TableEntry) -> pb::Update {
    update(pb::update::Type::Insert, pb::entity::Entity::TableEntry(te))
}
pub fn modify(te: pb::TableEntry) -> pb::Update {
    update(pb::update::Type::Modify, pb::entity::Entity::TableEntry(te))
}
pub fn delete(te: pb::TableEntry) -> pb::Update {
    update(pb::update::Type::Delete, pb::entity::Entity::TableEntry(te))
}
/// 10.0.0.0/8 → set_port(port).
pub fn route(prefix: [u8; 4], len: i32, port: &[u8]) -> pb::TableEntry {
    entry(
        T_LPM,
        vec![lpm(1, &prefix, len)],
        direct(action(SET_PORT, &[(1, port)])),
        0,
    )
}

pub fn write_request(
    c: &Controller,
    updates: Vec<pb::Update>,
    atomicity: pb::write_request::Atomicity,
) -> pb::WriteRequest {
    pb::WriteRequest {
        device_id: DEVICE,
        election_id: Some(u128_wire(c.election_id)),
        updates,
        atomicity: atomicity as i32,
        ..Default::default()
    }
}

pub async fn write(c: &mut Controller, updates: Vec<pb::Update>) -> Result<(), tonic::Status> {
    let req = write_request(c, updates, pb::write_request::Atomicity::ContinueOnError);
    c.client.write(req).await.map(|_| ())
}

pub async fn read(
    client: &mut P4RuntimeClient<Channel>,
    entities: Vec<pb::entity::Entity>,
) -> Result<Vec<pb::Entity>, tonic::Status> {
    let req = pb::ReadRequest {
        device_id: DEVICE,
        entities: entities
            .into_iter()
            .map(|e| pb::Entity { entity: Some(e) })
            .collect(),
        ..Default::default()
    };
    let mut stream = client.read(req).await?.into_inner();
    let mut out = Vec::new();
    while let Some(r) = stream.message().await? {
        out.extend(r.entities);
    }
    Ok(out)
}

/// Everything the control plane can observe, for "state did not change" checks.
pub async fn snapshot(client: &mut P4RuntimeClient<Channel>) -> Vec<pb::Entity> {
    use pb::entity::Entity as E;
    let mut ents = vec![
        E::TableEntry(Default::default()),
        E::ActionProfileMember(Default::default()),
        E::ActionProfileGroup(Default::default()),
        E::CounterEntry(Default::default()),
        E::MeterEntry(Default::default()),
        E::RegisterEntry(Default::default()),
        E::TableEntry(pb::TableEntry {
            table_id: T_QOS,
            ..Default::default()
        }),
    ];
    for t in PROGRAM.tables {
        ents.push(E::TableEntry(pb::TableEntry {
            table_id: t.id,
            is_default_action: true,
            ..Default::default()
        }));
    }
    read(client, ents).await.unwrap()
}

/// The per-update (code, message) list of a failed Write.
pub fn update_errors(status: &tonic::Status) -> Vec<(i32, String)> {
    assert_eq!(
        status.code(),
        tonic::Code::Unknown,
        "write errors are UNKNOWN: {status:?}"
    );
    control::p4rt::error::decode_write_errors(status)
        .expect("grpc-status-details-bin with p4.v1.Error details")
}

/// A service on a fresh device, restored from `state`, served on 127.0.0.1:0.
pub struct Served {
    pub h: Harness,
    pub report: control::p4rt::RestoreReport,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.server.abort();
    }
}

pub async fn serve_restored(state: &std::path::Path) -> Served {
    let device = LocalDevice::new(Box::new(Runtime::new(&PROGRAM)));
    let svc = service(&PROGRAM, device.clone());
    let report = svc.restore(state).await.unwrap();
    let (addr, server) = serve(svc).await;
    Served {
        h: Harness { addr, device },
        report,
        server,
    }
}

/// Observable state minus counter values (data, not config).
pub async fn config_state(h: &Harness) -> Vec<pb::Entity> {
    let mut client = h.client().await;
    snapshot(&mut client)
        .await
        .into_iter()
        .filter(|e| !matches!(e.entity, Some(pb::entity::Entity::CounterEntry(_))))
        .map(|mut e| {
            if let Some(pb::entity::Entity::TableEntry(te)) = e.entity.as_mut() {
                te.counter_data = None;
            }
            e
        })
        .collect()
}
