//! The restart test of the issue: configure, `kill -9`, restart, read back
//! identical state, forwarding identical. Needs root (creates network
//! namespaces `rl-…`); skipped with a message otherwise.
//!
//! ```text
//!        ns rl-…-sw: roceswitch                   ns rl-…-h: the test's AF_PACKET sockets
//!   p0 ======================================== h0   (sends)
//!   p1 ======================================== h1   (captures)
//!   p2 ======================================== h2   (captures)
//! ```
//!
//! `target/debug/roceswitch` runs in the switch namespace with a state
//! file and gRPC on a Unix socket (reachable across namespaces). It is
//! configured over P4Runtime (router MAC, routes, next-hop members, an ECMP
//! group) and over the fabric service (a QoS map change); RoCEv2 frames
//! (UDP 4791) to a single-path route and to the ECMP route, one per flow,
//! are sent on h0 and what leaves on h1/h2 is captured. Then SIGKILL, a
//! restart on the same state file, and the same reads and the same frames:
//! state read back must be identical, and each frame must leave the same
//! port with the same bytes. A guard kills the daemon and deletes the
//! namespaces on every path (pass, fail, panic).
//!
//! The second test kills the daemon 50 times at seeded random moments
//! while a controller streams batched writes (each batch inserts one
//! group of routes and deletes an older group), and after every restart
//! reads back exactly the acknowledged batches, or those plus the one in
//! flight: never part of a batch.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod netlab;

use dataplane::port::{AfPacketPort, FrameBuf, Port};
use netlab::{NetLab, root_or_skip};
use proto::p4::v1 as pb;
use proto::p4::v1::p4_runtime_client::P4RuntimeClient;
use proto::roceswitch::fabric::v1 as fpb;
use proto::roceswitch::fabric::v1::fabric_qos_client::FabricQosClient;
use tonic::transport::Channel;

const ROUTER_MAC: [u8; 6] = [0x02, 0x52, 0x53, 0x00, 0x00, 0x01];
const HOST_MACS: [[u8; 6]; 3] = [
    [0x02, 0, 0, 0, 0x0e, 0x00],
    [0x02, 0, 0, 0, 0x0e, 0x01],
    [0x02, 0, 0, 0, 0x0e, 0x02],
];
const SRC_IP: [u8; 4] = [10, 0, 0, 1];
const SINGLE_DST: [u8; 4] = [10, 0, 1, 5];
const ECMP_DST: [u8; 4] = [10, 0, 2, 7];
const FLOWS: u16 = 8;

/// The namespaces, veths and daemon of one test; all removed on drop.
struct Lab {
    net: NetLab,
    dir: tempfile::TempDir,
    daemon: Option<Child>,
}

impl std::ops::Deref for Lab {
    type Target = NetLab;
    fn deref(&self) -> &NetLab {
        &self.net
    }
}

impl Lab {
    fn create(label: &str) -> Lab {
        let net = NetLab::create(&format!("rs{label}"));
        for (i, mac) in HOST_MACS.iter().enumerate() {
            net.add_link(i, *mac);
        }
        Lab {
            net,
            dir: tempfile::tempdir().unwrap(),
            daemon: None,
        }
    }

    fn state_file(&self) -> PathBuf {
        self.dir.path().join("switch.state")
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("ctl.sock")
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("roceswitch.log")
    }

    /// Starts roceswitch in the switch namespace and waits for its gRPC
    /// socket to answer.
    fn start_daemon(&mut self, rt: &tokio::runtime::Runtime) -> Channel {
        let _ = std::fs::remove_file(self.socket());
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log())
            .unwrap();
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.sw, env!("CARGO_BIN_EXE_roceswitch")]);
        for i in 0..HOST_MACS.len() {
            cmd.args(["--port", &format!("{i}=p{i}")]);
        }
        cmd.arg("--grpc")
            .arg(format!("unix:{}", self.socket().display()))
            .arg("--state-file")
            .arg(self.state_file())
            .args(["--log-level", "info"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        self.daemon = Some(cmd.spawn().expect("starting roceswitch"));
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.daemon.as_mut().unwrap().try_wait().unwrap() {
                panic!("roceswitch exited ({status}):\n{}", self.log_text());
            }
            let addr = format!("unix:{}", self.socket().display());
            if self.socket().exists()
                && let Ok(c) = rt.block_on(control::client::connect(&addr))
            {
                return c;
            }
            assert!(
                Instant::now() < deadline,
                "roceswitch did not answer within 20 s:\n{}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `kill -9` the daemon and reap it.
    fn kill_daemon(&mut self) {
        if let Some(mut child) = self.daemon.take() {
            let _ = child.kill(); // SIGKILL
            let _ = child.wait();
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(self.log()).unwrap_or_default()
    }
}

impl Drop for Lab {
    /// The daemon goes first; the namespaces follow with `net`.
    fn drop(&mut self) {
        self.kill_daemon();
    }
}

// ---- P4Runtime -----------------------------------------------------------

fn info() -> &'static p4_target::info::ProgramInfo {
    &dataplane::roce::PROGRAM_INFO
}

fn named(name: &str, n: &str) -> bool {
    n == name || n.ends_with(&format!(".{name}"))
}

fn table(name: &str) -> &'static p4_target::info::TableInfo {
    info()
        .tables
        .iter()
        .find(|t| named(name, t.name))
        .unwrap_or_else(|| panic!("no table {name}"))
}

fn key(t: &str, k: &str) -> u32 {
    table(t)
        .keys
        .iter()
        .find(|x| named(k, x.name))
        .unwrap_or_else(|| panic!("no key {k} in {t}"))
        .id
}

fn action_ref(name: &str) -> &'static p4_target::info::ActionInfo {
    info()
        .actions
        .iter()
        .find(|a| named(name, a.name))
        .unwrap_or_else(|| panic!("no action {name}"))
}

fn param(a: &str, p: &str, value: &[u8]) -> pb::action::Param {
    pb::action::Param {
        param_id: action_ref(a)
            .params
            .iter()
            .find(|x| x.name == p)
            .unwrap_or_else(|| panic!("no param {p} of {a}"))
            .id,
        value: value.to_vec(),
    }
}

fn profile(name: &str) -> u32 {
    info()
        .action_profiles
        .iter()
        .find(|p| named(name, p.name))
        .unwrap_or_else(|| panic!("no action profile {name}"))
        .id
}

fn insert(e: pb::entity::Entity) -> pb::Update {
    pb::Update {
        r#type: pb::update::Type::Insert as i32,
        entity: Some(pb::Entity { entity: Some(e) }),
    }
}

fn exact(field_id: u32, value: &[u8]) -> pb::FieldMatch {
    pb::FieldMatch {
        field_id,
        field_match_type: Some(pb::field_match::FieldMatchType::Exact(
            pb::field_match::Exact {
                value: value.to_vec(),
            },
        )),
    }
}

fn entry(t: &str, m: Vec<pb::FieldMatch>, a: pb::table_action::Type) -> pb::Update {
    insert(pb::entity::Entity::TableEntry(pb::TableEntry {
        table_id: table(t).id,
        r#match: m,
        action: Some(pb::TableAction { r#type: Some(a) }),
        ..Default::default()
    }))
}

fn call(a: &str, params: Vec<pb::action::Param>) -> pb::table_action::Type {
    pb::table_action::Type::Action(pb::Action {
        action_id: action_ref(a).id,
        params,
    })
}

fn route(dst: [u8; 4], len: i32, nexthop_id: u16) -> pb::Update {
    entry(
        "ipv4_lpm",
        vec![pb::FieldMatch {
            field_id: key("ipv4_lpm", "dst_addr"),
            field_match_type: Some(pb::field_match::FieldMatchType::Lpm(pb::field_match::Lpm {
                value: dst.to_vec(),
                prefix_len: len,
            })),
        }],
        call(
            "set_nexthop_id",
            vec![param(
                "set_nexthop_id",
                "nexthop_id",
                &nexthop_id.to_be_bytes(),
            )],
        ),
    )
}

fn member(id: u32, port: u16) -> pb::Update {
    insert(pb::entity::Entity::ActionProfileMember(
        pb::ActionProfileMember {
            action_profile_id: profile("nexthop"),
            member_id: id,
            action: Some(pb::Action {
                action_id: action_ref("set_nexthop").id,
                params: vec![
                    param("set_nexthop", "port", &port.to_be_bytes()),
                    param("set_nexthop", "src_mac", &ROUTER_MAC),
                    param("set_nexthop", "dst_mac", &HOST_MACS[usize::from(port)]),
                ],
            }),
        },
    ))
}

/// The controller: P4Runtime client with primacy held by an open stream.
struct Controller {
    p4: P4RuntimeClient<Channel>,
    fabric: FabricQosClient<Channel>,
    _stream: tokio::sync::mpsc::Sender<pb::StreamMessageRequest>,
}

fn election() -> Option<pb::Uint128> {
    Some(pb::Uint128 { high: 0, low: 1 })
}

async fn controller(channel: Channel) -> Controller {
    let mut p4 = P4RuntimeClient::new(channel.clone());
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tx.send(pb::StreamMessageRequest {
        update: Some(pb::stream_message_request::Update::Arbitration(
            pb::MasterArbitrationUpdate {
                device_id: 1,
                election_id: election(),
                ..Default::default()
            },
        )),
    })
    .await
    .unwrap();
    let mut stream = p4
        .stream_channel(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let first = tokio::time::timeout(Duration::from_secs(5), stream.message())
        .await
        .expect("arbitration reply")
        .unwrap()
        .and_then(|m| m.update);
    match first {
        Some(pb::stream_message_response::Update::Arbitration(a)) => {
            assert_eq!(a.status.map(|s| s.code), Some(0), "primary");
        }
        other => panic!("unexpected first stream message {other:?}"),
    }
    tokio::spawn(async move { while let Ok(Some(_)) = stream.message().await {} });
    Controller {
        p4,
        fabric: FabricQosClient::new(channel),
        _stream: tx,
    }
}

async fn configure(c: &mut Controller) {
    let updates = vec![
        entry(
            "my_station",
            vec![exact(key("my_station", "dst_mac"), &ROUTER_MAC)],
            call("set_routed", vec![]),
        ),
        member(1, 1),
        member(2, 2),
        insert(pb::entity::Entity::ActionProfileGroup(
            pb::ActionProfileGroup {
                action_profile_id: profile("nexthop"),
                group_id: 100,
                members: [1, 2]
                    .iter()
                    .map(|&member_id| pb::action_profile_group::Member {
                        member_id,
                        weight: 1,
                        ..Default::default()
                    })
                    .collect(),
                max_size: 0,
            },
        )),
        entry(
            "nexthop",
            vec![exact(key("nexthop", "nexthop_id"), &1u16.to_be_bytes())],
            pb::table_action::Type::ActionProfileMemberId(1),
        ),
        entry(
            "nexthop",
            vec![exact(key("nexthop", "nexthop_id"), &100u16.to_be_bytes())],
            pb::table_action::Type::ActionProfileGroupId(100),
        ),
        route([SINGLE_DST[0], SINGLE_DST[1], SINGLE_DST[2], 0], 24, 1),
        route([ECMP_DST[0], ECMP_DST[1], ECMP_DST[2], 0], 24, 100),
    ];
    c.p4.write(pb::WriteRequest {
        device_id: 1,
        election_id: election(),
        updates,
        atomicity: pb::write_request::Atomicity::ContinueOnError as i32,
        ..Default::default()
    })
    .await
    .unwrap();
    // Fabric: DSCP 26 → priority 3 (a QoS change to survive the restart).
    let mut maps = c
        .fabric
        .get_qos_maps(fpb::GetConfigRequest {})
        .await
        .unwrap()
        .into_inner();
    if maps.dscp_to_priority.is_empty() {
        maps.dscp_to_priority = (0..64).map(|d| d >> 3).collect();
    }
    maps.dscp_to_priority[26] = 3;
    c.fabric.set_qos_maps(maps).await.unwrap();
}

/// Everything configurable, read back (counter values stripped: data).
async fn state(c: &mut Controller) -> (Vec<pb::Entity>, fpb::FabricConfig, Option<u64>) {
    use pb::entity::Entity as E;
    let mut wanted = vec![
        E::TableEntry(Default::default()),
        E::ActionProfileMember(Default::default()),
        E::ActionProfileGroup(Default::default()),
        E::MeterEntry(Default::default()),
    ];
    for t in info().tables.iter().filter(|t| !t.default_is_const) {
        wanted.push(E::TableEntry(pb::TableEntry {
            table_id: t.id,
            is_default_action: true,
            ..Default::default()
        }));
    }
    let mut stream =
        c.p4.read(pb::ReadRequest {
            device_id: 1,
            entities: wanted
                .into_iter()
                .map(|e| pb::Entity { entity: Some(e) })
                .collect(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut entities = Vec::new();
    while let Some(r) = stream.message().await.unwrap() {
        entities.extend(r.entities);
    }
    for e in &mut entities {
        if let Some(pb::entity::Entity::TableEntry(te)) = e.entity.as_mut() {
            te.counter_data = None;
            te.meter_counter_data = None;
            te.time_since_last_hit = None;
        }
    }
    let fabric = c
        .fabric
        .get_config(fpb::GetConfigRequest {})
        .await
        .unwrap()
        .into_inner();
    let cookie =
        c.p4.get_forwarding_pipeline_config(pb::GetForwardingPipelineConfigRequest {
            device_id: 1,
            response_type: pb::get_forwarding_pipeline_config_request::ResponseType::CookieOnly
                as i32,
        })
        .await
        .unwrap()
        .into_inner()
        .config
        .and_then(|c| c.cookie)
        .map(|c| c.cookie);
    (entities, fabric, cookie)
}

async fn set_cookie(c: &mut Controller, cookie: u64) {
    use pb::set_forwarding_pipeline_config_request::Action;
    c.p4.set_forwarding_pipeline_config(pb::SetForwardingPipelineConfigRequest {
        device_id: 1,
        election_id: election(),
        action: Action::ReconcileAndCommit as i32,
        config: Some(pb::ForwardingPipelineConfig {
            p4info: Some(proto::p4info_from_text(info().p4info_text).unwrap()),
            p4_device_config: Vec::new(),
            cookie: Some(pb::forwarding_pipeline_config::Cookie { cookie }),
        }),
        ..Default::default()
    })
    .await
    .unwrap();
}

// ---- frames -------------------------------------------------------------

fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A RoCEv2 frame (Ethernet / IPv4 DSCP 26 / UDP 4791 / BTH + payload) to
/// the router; `flow` picks the UDP source port and marks the payload.
fn roce_frame(dst: [u8; 4], flow: u16) -> Vec<u8> {
    let payload_len = 12 + 32; // BTH + data
    let udp_len = 8 + payload_len;
    let ip_len = 20 + udp_len;
    let mut f = Vec::new();
    f.extend_from_slice(&ROUTER_MAC);
    f.extend_from_slice(&HOST_MACS[0]);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let ip_start = f.len();
    f.extend_from_slice(&[0x45, 26 << 2]);
    f.extend_from_slice(&(ip_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&SRC_IP);
    f.extend_from_slice(&dst);
    let csum = ipv4_checksum(&f[ip_start..ip_start + 20]);
    f[ip_start + 10..ip_start + 12].copy_from_slice(&csum.to_be_bytes());
    f.extend_from_slice(&(49152 + flow).to_be_bytes());
    f.extend_from_slice(&4791u16.to_be_bytes());
    f.extend_from_slice(&(udp_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]); // UDP checksum 0: allowed for RoCEv2 over IPv4
    // BTH: opcode SEND_ONLY (4), flags, P_Key 0xffff, dest QP, PSN.
    f.extend_from_slice(&[4, 0x40, 0xff, 0xff, 0, 0, 0, 0x11, 0x80, 0, 0, flow as u8]);
    f.extend((0..32).map(|i| (i as u8) ^ (flow as u8)));
    f
}

/// Our frame's flow if `frame` is one of ours (UDP 4791 from SRC_IP).
fn flow_of(frame: &[u8]) -> Option<u16> {
    if frame.len() < 14 + 20 + 8 || frame[12..14] != [0x08, 0x00] || frame[23] != 17 {
        return None;
    }
    if frame[26..30] != SRC_IP || frame[36..38] != 4791u16.to_be_bytes() {
        return None;
    }
    Some(u16::from_be_bytes([frame[34], frame[35]]) - 49152)
}

struct Hosts {
    tx: AfPacketPort,
    rx: Vec<AfPacketPort>,
}

impl Hosts {
    fn open(lab: &Lab) -> Hosts {
        Hosts {
            tx: AfPacketPort::open_in_netns(&lab.host, "h0").unwrap(),
            rx: (1..HOST_MACS.len())
                .map(|i| AfPacketPort::open_in_netns(&lab.host, &format!("h{i}")).unwrap())
                .collect(),
        }
    }

    fn drain(&mut self) {
        let mut bufs = FrameBuf::batch(64);
        for p in &mut self.rx {
            while p.recv_batch(&mut bufs).unwrap() > 0 {}
        }
    }

    /// Sends every test frame and returns, per frame, (port it left, bytes).
    fn exchange(&mut self) -> Vec<(String, u16, usize, Vec<u8>)> {
        self.drain();
        let mut sent = Vec::new();
        let mut frames = vec![(SINGLE_DST, 0u16)];
        frames.extend((1..=FLOWS).map(|f| (ECMP_DST, f)));
        for &(dst, flow) in &frames {
            let mut b = FrameBuf::default();
            b.set_frame(&roce_frame(dst, flow));
            assert_eq!(self.tx.send_batch(std::slice::from_ref(&b)).unwrap(), 1);
            sent.push(flow);
        }
        let mut got: Vec<(String, u16, usize, Vec<u8>)> = Vec::new();
        let mut bufs = FrameBuf::batch(64);
        let deadline = Instant::now() + Duration::from_secs(3);
        while got.len() < frames.len() && Instant::now() < deadline {
            for (i, p) in self.rx.iter_mut().enumerate() {
                p.wait_readable(Some(Duration::from_millis(10))).unwrap();
                let n = p.recv_batch(&mut bufs).unwrap();
                for b in &bufs[..n] {
                    if let Some(flow) = flow_of(b.frame()) {
                        let dst = if flow == 0 { "single" } else { "ecmp" };
                        got.push((dst.to_string(), flow, i + 1, b.frame().to_vec()));
                    }
                }
            }
        }
        got.sort_by_key(|g| g.1);
        assert_eq!(
            got.iter().map(|g| g.1).collect::<Vec<_>>(),
            sent,
            "every frame leaves exactly once"
        );
        got
    }
}

#[test]
fn configure_kill_9_restart_same_state_same_forwarding() {
    if !root_or_skip("configure_kill_9_restart_same_state_same_forwarding") {
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut lab = Lab::create("r");
    let mut hosts = Hosts::open(&lab);

    let channel = lab.start_daemon(&rt);
    let mut c = rt.block_on(controller(channel));
    rt.block_on(async {
        set_cookie(&mut c, 0x5eed).await;
        configure(&mut c).await;
    });
    let before = rt.block_on(state(&mut c));
    let forwarded = hosts.exchange();
    // Routed: TTL 63, router source MAC, next hop's MAC; the single route
    // goes to port 1, the ECMP flows use both members.
    let single = &forwarded[0];
    assert_eq!(single.2, 1, "10.0.1.0/24 leaves port 1");
    assert_eq!(single.3[0..6], HOST_MACS[1]);
    assert_eq!(single.3[6..12], ROUTER_MAC);
    assert_eq!(single.3[22], 63, "TTL decremented");
    let ports: std::collections::BTreeSet<usize> = forwarded[1..].iter().map(|g| g.2).collect();
    assert_eq!(
        ports.into_iter().collect::<Vec<_>>(),
        vec![1, 2],
        "{FLOWS} ECMP flows spread over both members"
    );
    assert!(
        before.0.len() >= 6,
        "configured entities read: {:?}",
        before.0
    );
    assert_eq!(before.2, Some(0x5eed));
    drop(c);

    // kill -9 right after the last acknowledged change, then restart.
    lab.kill_daemon();
    assert!(
        Path::new(&format!("{}.p4rt", lab.state_file().display())).exists(),
        "P4Runtime state file next to the fabric state file"
    );
    let channel = lab.start_daemon(&rt);
    let mut c = rt.block_on(controller(channel));
    let after = rt.block_on(state(&mut c));
    assert_eq!(after.0, before.0, "P4Runtime entities read back identical");
    assert_eq!(
        after.1, before.1,
        "fabric configuration read back identical"
    );
    assert_eq!(after.2, before.2, "pipeline cookie read back identical");
    assert_eq!(
        hosts.exchange(),
        forwarded,
        "same frames leave the same ports with the same bytes"
    );
    drop(c);
    drop(hosts);
    drop(lab);
}

// ---- kill -9 during batched writes ------------------------------------------

/// Routes per batch; batch `k` inserts them with next hop `k`.
const BATCH_ROUTES: u8 = 8;
/// Batch `k` also deletes batch `k - LIVE_BATCHES`, so that many stay.
const LIVE_BATCHES: u64 = 3;
const KILLS: u32 = 50;

/// The routes of batch `k`: 12.k_hi.k_lo.(8i)/29, next hop `k`.
fn batch_routes(k: u64) -> Vec<pb::Update> {
    (0..BATCH_ROUTES)
        .map(|i| route([12, (k >> 8) as u8, k as u8, i * 8], 29, k as u16))
        .collect()
}

/// Batch `k`: insert its routes, delete those of `k - LIVE_BATCHES`.
fn batch(k: u64) -> Vec<pb::Update> {
    let mut updates = batch_routes(k);
    if k >= LIVE_BATCHES {
        updates.extend(batch_routes(k - LIVE_BATCHES).into_iter().map(|mut u| {
            u.r#type = pb::update::Type::Delete as i32;
            u
        }));
    }
    updates
}

/// Next hop id → routes of it in the ipv4_lpm table.
async fn routes_by_batch(c: &mut Controller) -> std::collections::BTreeMap<u64, u32> {
    let mut stream =
        c.p4.read(pb::ReadRequest {
            device_id: 1,
            entities: vec![pb::Entity {
                entity: Some(pb::entity::Entity::TableEntry(pb::TableEntry {
                    table_id: table("ipv4_lpm").id,
                    ..Default::default()
                })),
            }],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut by_batch = std::collections::BTreeMap::new();
    while let Some(r) = stream.message().await.unwrap() {
        for e in r.entities {
            let Some(pb::entity::Entity::TableEntry(te)) = e.entity else {
                continue;
            };
            let Some(pb::table_action::Type::Action(a)) = te.action.and_then(|a| a.r#type) else {
                panic!("ipv4_lpm entry without a direct action");
            };
            let hop = a.params[0]
                .value
                .iter()
                .fold(0u64, |v, &b| (v << 8) | u64::from(b));
            *by_batch.entry(hop).or_insert(0) += 1;
        }
    }
    by_batch
}

/// What the table holds after batches `0..=last` (none if `last` is None).
fn after_batches(last: Option<u64>) -> std::collections::BTreeMap<u64, u32> {
    let Some(last) = last else {
        return Default::default();
    };
    (last.saturating_sub(LIVE_BATCHES - 1)..=last)
        .map(|k| (k, u32::from(BATCH_ROUTES)))
        .collect()
}

#[test]
fn fifty_kills_during_batched_writes_never_leave_a_partial_batch() {
    if !root_or_skip("fifty_kills_during_batched_writes_never_leave_a_partial_batch") {
        return;
    }
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut lab = Lab::create("k");
    // Seeded, so a failure names a kill that can be replayed.
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next_delay_ms = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        2 + rng % 40
    };
    // The last batch the switch acknowledged; -1: none yet.
    let acked = Arc::new(AtomicI64::new(-1));
    let mut in_flight_kept = 0;
    for kill in 0..KILLS {
        let channel = lab.start_daemon(&rt);
        let mut c = rt.block_on(controller(channel));
        let got = rt.block_on(routes_by_batch(&mut c));
        let acked_now = u64::try_from(acked.load(Ordering::SeqCst)).ok();
        let with_in_flight = Some(acked_now.map_or(0, |a| a + 1));
        let applied = if got == after_batches(acked_now) {
            acked_now
        } else if got == after_batches(with_in_flight) {
            // Recorded before the answer was lost to the kill: the whole
            // batch, which the controller may retry or read back.
            in_flight_kept += 1;
            with_in_flight
        } else {
            panic!(
                "after kill {kill}: routes per batch {got:?}; acknowledged up to {acked_now:?}, \
                 expected {:?} or {:?}\n{}",
                after_batches(acked_now),
                after_batches(with_in_flight),
                lab.log_text()
            );
        };
        acked.store(applied.map_or(-1, |a| a as i64), Ordering::SeqCst);
        let mut p4 = c.p4.clone();
        let acked_w = acked.clone();
        let first = applied.map_or(0, |a| a + 1);
        let writer = rt.spawn(async move {
            for k in first.. {
                let req = pb::WriteRequest {
                    device_id: 1,
                    election_id: election(),
                    updates: batch(k),
                    ..Default::default()
                };
                if p4.write(req).await.is_err() {
                    return;
                }
                acked_w.store(k as i64, Ordering::SeqCst);
            }
        });
        std::thread::sleep(Duration::from_millis(next_delay_ms()));
        lab.kill_daemon();
        rt.block_on(async {
            let _ = tokio::time::timeout(Duration::from_secs(5), writer).await;
        });
        drop(c);
    }
    let written = acked.load(Ordering::SeqCst) + 1;
    assert!(
        written >= i64::from(KILLS),
        "only {written} batches acknowledged over {KILLS} kills: the kills did not land during writes"
    );
    eprintln!(
        "{KILLS} kills, {written} batches acknowledged, the in-flight batch was kept {in_flight_kept} times"
    );
}
