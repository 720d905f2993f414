//! A program loaded at run time (issue #15, "Any compiled program, loaded
//! by SetForwardingPipelineConfig"): the tutorials' `basic.p4` built into
//! a bundle by `p4-to-rust build`, pushed over P4Runtime into a running
//! `roceswitch` on veths, programmed and forwarding; bundles built for
//! another ABI or compiler, and another target's config, refused; a
//! `kill -9` and restart comes back with the loaded program and its
//! entries; then the compiled-in `roce_switch.p4` pushed back with
//! RECONCILE_AND_COMMIT. Needs root (namespaces `rl-pl…`); run under
//! `flock /tmp/roceswitch-netns.lock`. Skipped with a message otherwise.
//!
//! Building the bundle runs cargo in the shared `target/p4rs` (the first
//! build of a checkout compiles `p4-target` in release, later ones only
//! the program).
//!
//! ```text
//!        ns pl-…-sw: roceswitch          ns pl-…-h: the test's AF_PACKET sockets
//!   p0 ================================ h0   (sends)
//!   p1 ================================ h1   (captures)
//! ```

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod netlab;

use dataplane::port::{AfPacketPort, FrameBuf, Port};
use netlab::{NetLab, root_or_skip};
use prost::Message;
use proto::p4::config::v1::P4Info;
use proto::p4::v1 as pb;
use proto::p4::v1::p4_runtime_client::P4RuntimeClient;
use tonic::Code;
use tonic::transport::Channel;

const DEVICE: u64 = 1;
const H0: [u8; 6] = [0x02, 0, 0, 0, 0x0f, 0x00];
const H1: [u8; 6] = [0x02, 0, 0, 0, 0x0f, 0x01];
const NEXT_HOP: [u8; 6] = [0x02, 0, 0, 0, 0x0f, 0x99];
const SRC_IP: [u8; 4] = [10, 0, 0, 1];
const DST_IP: [u8; 4] = [10, 0, 1, 5];

/// Namespaces, veths and the daemon; all removed on drop.
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
    fn create() -> Lab {
        let net = NetLab::create("pl");
        for (i, mac) in [H0, H1].iter().enumerate() {
            net.add_link(i, *mac);
        }
        Lab {
            net,
            dir: tempfile::tempdir().unwrap(),
            daemon: None,
        }
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("ctl.sock")
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("roceswitch.log")).unwrap_or_default()
    }

    fn start_daemon(&mut self, rt: &tokio::runtime::Runtime) -> P4RuntimeClient<Channel> {
        let _ = std::fs::remove_file(self.socket());
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("roceswitch.log"))
            .unwrap();
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.sw, env!("CARGO_BIN_EXE_roceswitch")])
            .args(["--port", "0=p0", "--port", "1=p1", "--grpc"])
            .arg(format!("unix:{}", self.socket().display()))
            .arg("--state-file")
            .arg(self.dir.path().join("switch.state"))
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
                return P4RuntimeClient::new(c).max_decoding_message_size(64 << 20);
            }
            assert!(
                Instant::now() < deadline,
                "roceswitch did not answer within 20 s:\n{}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn kill_daemon(&mut self) {
        if let Some(mut child) = self.daemon.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Lab {
    /// The daemon goes first; the namespaces follow with `net`.
    fn drop(&mut self) {
        self.kill_daemon();
    }
}

fn id_of(
    items: impl IntoIterator<Item = Option<proto::p4::config::v1::Preamble>>,
    name: &str,
) -> u32 {
    items
        .into_iter()
        .flatten()
        .find(|p| p.name == name || p.name.ends_with(&format!(".{name}")))
        .unwrap_or_else(|| panic!("{name} in the P4Info"))
        .id
}

fn set(
    action: pb::set_forwarding_pipeline_config_request::Action,
    p4info: &P4Info,
    device_config: Vec<u8>,
    cookie: u64,
) -> pb::SetForwardingPipelineConfigRequest {
    pb::SetForwardingPipelineConfigRequest {
        device_id: DEVICE,
        action: action as i32,
        config: Some(pb::ForwardingPipelineConfig {
            p4info: Some(p4info.clone()),
            p4_device_config: device_config,
            cookie: Some(pb::forwarding_pipeline_config::Cookie { cookie }),
        }),
        ..Default::default()
    }
}

async fn get(c: &mut P4RuntimeClient<Channel>) -> pb::ForwardingPipelineConfig {
    c.get_forwarding_pipeline_config(pb::GetForwardingPipelineConfigRequest {
        device_id: DEVICE,
        response_type: pb::get_forwarding_pipeline_config_request::ResponseType::All as i32,
    })
    .await
    .unwrap()
    .into_inner()
    .config
    .unwrap()
}

/// Every table entry the switch has (wildcard read).
async fn entries(c: &mut P4RuntimeClient<Channel>) -> Vec<pb::TableEntry> {
    let mut s = c
        .read(pb::ReadRequest {
            device_id: DEVICE,
            entities: vec![pb::Entity {
                entity: Some(pb::entity::Entity::TableEntry(pb::TableEntry::default())),
            }],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    while let Some(r) = s.message().await.unwrap() {
        for e in r.entities {
            if let Some(pb::entity::Entity::TableEntry(t)) = e.entity {
                out.push(t);
            }
        }
    }
    out
}

/// basic.p4's route: 10.0.1.0/24 → ipv4_forward(NEXT_HOP, port 1).
fn route(info: &P4Info) -> pb::Update {
    let table = id_of(info.tables.iter().map(|t| t.preamble.clone()), "ipv4_lpm");
    let action = id_of(
        info.actions.iter().map(|a| a.preamble.clone()),
        "ipv4_forward",
    );
    pb::Update {
        r#type: pb::update::Type::Insert as i32,
        entity: Some(pb::Entity {
            entity: Some(pb::entity::Entity::TableEntry(pb::TableEntry {
                table_id: table,
                r#match: vec![pb::FieldMatch {
                    field_id: 1,
                    field_match_type: Some(pb::field_match::FieldMatchType::Lpm(
                        pb::field_match::Lpm {
                            value: vec![10, 0, 1, 0],
                            prefix_len: 24,
                        },
                    )),
                }],
                action: Some(pb::TableAction {
                    r#type: Some(pb::table_action::Type::Action(pb::Action {
                        action_id: action,
                        params: vec![
                            pb::action::Param {
                                param_id: 1,
                                value: NEXT_HOP.to_vec(),
                            },
                            pb::action::Param {
                                param_id: 2,
                                value: vec![1],
                            },
                        ],
                    })),
                }),
                ..Default::default()
            })),
        }),
    }
}

fn ipv4_frame(ttl: u8) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&[0x02, 0x52, 0x53, 0, 0, 1]);
    f.extend_from_slice(&H0);
    f.extend_from_slice(&[0x08, 0x00]);
    let payload = [0xabu8; 26];
    let total = (20 + payload.len()) as u16;
    f.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        1,
        0,
        0,
        ttl,
        17,
        0,
        0,
    ]);
    f.extend_from_slice(&SRC_IP);
    f.extend_from_slice(&DST_IP);
    f.extend_from_slice(&payload);
    f
}

/// Sends one IPv4 frame on h0; what h1 sees of it within 2 s.
fn exchange(tx: &mut AfPacketPort, rx: &mut AfPacketPort) -> Option<Vec<u8>> {
    let mut bufs = FrameBuf::batch(64);
    while rx.recv_batch(&mut bufs).unwrap() > 0 {}
    let mut b = FrameBuf::default();
    b.set_frame(&ipv4_frame(64));
    assert_eq!(tx.send_batch(std::slice::from_ref(&b)).unwrap(), 1);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        rx.wait_readable(Some(Duration::from_millis(20))).unwrap();
        let n = rx.recv_batch(&mut bufs).unwrap();
        for b in &bufs[..n] {
            let f = b.frame();
            if f.len() >= 34
                && f[12..14] == [0x08, 0x00]
                && f[26..30] == SRC_IP
                && f[30..34] == DST_IP
            {
                return Some(f.to_vec());
            }
        }
    }
    None
}

#[test]
fn basic_p4_loaded_programmed_forwarding_survives_restart_and_roce_switch_comes_back() {
    if !root_or_skip(
        "basic_p4_loaded_programmed_forwarding_survives_restart_and_roce_switch_comes_back",
    ) {
        return;
    }
    let root = p4_compiler::switch_crate::workspace_root();
    let started = Instant::now();
    let bundle = p4_compiler::bundle_build::build_bundle(
        &root.join("p4/compiler/src/front/testdata/basic.p4"),
        &p4_compiler::bundle_build::default_target_dir(),
        &Default::default(),
    )
    .unwrap_or_else(|e| panic!("p4-to-rust build basic.p4: {e}"));
    eprintln!(
        "bundle built in {:?} ({} bytes of library)",
        started.elapsed(),
        bundle.library.len()
    );
    let basic_bytes = bundle.encode();
    let basic_info = P4Info::decode(&bundle.p4info[..]).unwrap();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut lab = Lab::create();
    let mut tx = AfPacketPort::open_in_netns(&lab.host, "h0").unwrap();
    let mut rx = AfPacketPort::open_in_netns(&lab.host, "h1").unwrap();
    let mut c = lab.start_daemon(&rt);
    use pb::set_forwarding_pipeline_config_request::Action as A;
    let builtin = rt.block_on(get(&mut c));
    assert_eq!(builtin.p4_device_config, b"roceswitch:roce_switch");
    let roce_info = builtin.p4info.clone().unwrap();

    // Refused, each saying what does not match, and nothing changes.
    let refused = |c: &mut P4RuntimeClient<Channel>, req| {
        let err = rt
            .block_on(c.set_forwarding_pipeline_config(req))
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{}", err.message());
        err.message().to_string()
    };
    let mut other_abi = bundle.clone();
    other_abi.abi = other_abi
        .abi
        .replace("rustc=rustc ", "rustc=rustc 1.80.0-old ");
    let msg = refused(&mut c, set(A::Verify, &basic_info, other_abi.encode(), 1));
    assert!(
        msg.contains("another ABI") && msg.contains("rustc"),
        "{msg}"
    );
    let mut other_compiler = bundle.clone();
    other_compiler.compiler = "p4-to-rust 0.0.9".into();
    let msg = refused(
        &mut c,
        set(A::VerifyAndCommit, &basic_info, other_compiler.encode(), 1),
    );
    assert!(msg.contains("p4-to-rust 0.0.9"), "{msg}");
    let msg = refused(
        &mut c,
        set(
            A::VerifyAndCommit,
            &basic_info,
            br#"{"program": "basic.p4"}"#.to_vec(),
            1,
        ),
    );
    assert!(
        msg.contains("bmv2") && msg.contains("p4-to-rust build"),
        "{msg}"
    );
    let msg = refused(&mut c, set(A::VerifyAndCommit, &basic_info, Vec::new(), 1));
    assert!(msg.contains("running program 'roce_switch'"), "{msg}");
    let msg = refused(
        &mut c,
        set(A::VerifyAndCommit, &roce_info, basic_bytes.clone(), 1),
    );
    assert!(msg.contains("not the program 'basic'"), "{msg}");
    assert_eq!(
        rt.block_on(get(&mut c)).p4_device_config,
        builtin.p4_device_config
    );

    // Loaded, programmed, forwarding.
    let swap = Instant::now();
    rt.block_on(c.set_forwarding_pipeline_config(set(
        A::VerifyAndCommit,
        &basic_info,
        basic_bytes.clone(),
        7,
    )))
    .unwrap();
    eprintln!(
        "VERIFY_AND_COMMIT of the bundle (load + swap) took {:?}",
        swap.elapsed()
    );
    let got = rt.block_on(get(&mut c));
    assert_eq!(
        got.p4_device_config, basic_bytes,
        "Get returns the bundle set"
    );
    assert_eq!(got.p4info.as_ref(), Some(&basic_info));
    assert!(
        exchange(&mut tx, &mut rx).is_none(),
        "basic.p4 drops unrouted packets"
    );
    rt.block_on(c.write(pb::WriteRequest {
        device_id: DEVICE,
        updates: vec![route(&basic_info)],
        atomicity: 0,
        ..Default::default()
    }))
    .unwrap();
    let check_forwarded = |f: Option<Vec<u8>>| {
        let f = f.expect("routed by basic.p4 to port 1");
        assert_eq!(f[0..6], NEXT_HOP, "ipv4_forward sets the next hop's MAC");
        assert_eq!(
            f[6..12],
            [0x02, 0x52, 0x53, 0, 0, 1],
            "source: the old destination"
        );
        assert_eq!(f[22], 63, "TTL decremented");
    };
    check_forwarded(exchange(&mut tx, &mut rx));

    // kill -9 and restart: the same program, entries and forwarding.
    lab.kill_daemon();
    let mut c = lab.start_daemon(&rt);
    let got = rt.block_on(get(&mut c));
    assert_eq!(
        got.p4_device_config, basic_bytes,
        "restart keeps the loaded program"
    );
    assert_eq!(got.cookie.map(|c| c.cookie), Some(7));
    assert_eq!(rt.block_on(entries(&mut c)).len(), 1, "and its entry");
    check_forwarded(exchange(&mut tx, &mut rx));

    // roce_switch.p4 (compiled in) back with RECONCILE_AND_COMMIT: no table
    // is shared, so basic's entry goes; roce_switch runs again.
    rt.block_on(c.set_forwarding_pipeline_config(set(
        A::ReconcileAndCommit,
        &roce_info,
        builtin.p4_device_config.clone(),
        8,
    )))
    .unwrap();
    let got = rt.block_on(get(&mut c));
    assert_eq!(got.p4_device_config, builtin.p4_device_config);
    assert_eq!(got.p4info.as_ref(), Some(&roce_info));
    let basic_lpm = id_of(
        basic_info.tables.iter().map(|t| t.preamble.clone()),
        "ipv4_lpm",
    );
    assert!(
        rt.block_on(entries(&mut c))
            .iter()
            .all(|e| e.table_id != basic_lpm),
        "basic.p4's entries are gone with it"
    );
    assert!(
        exchange(&mut tx, &mut rx).is_none(),
        "roce_switch.p4 without routes does not route 10.0.1.5"
    );
    let log = lab.log_text();
    if let Some(line) = log.lines().find(|l| l.contains("pipeline swapped")) {
        eprintln!("{line}");
    }
}
