//! `rocectl trace` against a switch run as the daemon runs it: the compiled
//! `roce_switch.p4` on the real-time driver (in-memory ports), the fabric
//! service over a `SwitchBackend` with the daemon's trace queue, and the
//! `rocectl` binary as a client. The trace request travels as a dataplane
//! command, the filter is applied on the packet path, and the traces come
//! back through the bounded queue and the server stream.

use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use control::fabric::{FabricBackend, FabricService, SwitchBackend, TraceTap};
use control::serve::{Bound, Listen};
use dataplane::driver::{Driver, DriverIo, command_channel};
use dataplane::port::memory::MemoryPort;
use dataplane::port::{FrameBuf, Port};
use dataplane::roce::{PROGRAM_INFO, Program};
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::Instant;
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeApi, TableEntry};
use p4_target::trace::{Event, PacketTrace};

/// RC RDMA WRITE Only over IPv4 (DSCP 26, ECT(0)) to 198.51.100.2 (scapy).
const ROCE_WRITE: &str = "0200000000020200000000010800456a005c000140004011e5bbc6336401c6336402\
c00012b7004800000a00ffff000001238000001000007f00000010001234abcd00000020\
000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f907bd975";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn action(name: &str, params: &[u128]) -> ActionCall {
    ActionCall::new(PROGRAM_INFO.action_by_name(name).unwrap().id, params)
}

fn insert(p: &mut Program, table: &str, m: Option<FieldMatch>, a: EntryAction) {
    let id = PROGRAM_INFO.table_by_name(table).unwrap().id;
    p.runtime_mut()
        .table_insert(
            id,
            TableEntry {
                matches: vec![m],
                priority: 0,
                action: a,
                metadata: Vec::new(),
            },
        )
        .unwrap();
}

/// roce_switch.p4 routing 198.51.100.0/24 out of port 1.
fn program() -> Program {
    let mut p = Program::new();
    insert(
        &mut p,
        "my_station",
        Some(FieldMatch::Exact(0x02_00_00_00_00_02)),
        EntryAction::Direct(action("set_routed", &[])),
    );
    insert(
        &mut p,
        "ipv4_lpm",
        Some(FieldMatch::Lpm {
            value: 0xc633_6400,
            prefix_len: 24,
        }),
        EntryAction::Direct(action("set_nexthop_id", &[1])),
    );
    let profile = PROGRAM_INFO.action_profiles[0].id;
    p.runtime_mut()
        .member_write(
            profile,
            1,
            action(
                "set_nexthop",
                &[1, 0x02_aa_00_00_00_01, 0x02_bb_00_00_00_02],
            ),
            false,
        )
        .unwrap();
    insert(
        &mut p,
        "nexthop",
        Some(FieldMatch::Exact(1)),
        EntryAction::Member(1),
    );
    p
}

struct Daemon {
    addr: String,
    /// The hosts' ends of ports 0 and 1.
    hosts: Vec<MemoryPort>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn daemon() -> Daemon {
    let config = SwitchConfig::with_ports(2);
    let base = config.tm.clone();
    let switch = Switch::new(program(), config, Instant::ZERO).unwrap();
    let mut ports: Vec<Box<dyn Port + Send>> = Vec::new();
    let mut hosts = Vec::new();
    for i in 0..2 {
        let (ours, theirs) = MemoryPort::pair(&format!("sw{i}"), &format!("host{i}"));
        ports.push(Box::new(ours));
        hosts.push(theirs);
    }
    let (cmd_tx, cmd_rx) = command_channel::<Program>().unwrap();
    let (tap, sink) = TraceTap::new(64);
    let io = DriverIo {
        commands: cmd_rx,
        packet_in: None,
        events: None,
        digests: None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let thread = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut driver = Driver::new(switch, ports, io)
                .with_max_sleep(Duration::from_millis(5))
                .with_trace_sink(sink);
            let _ = driver.run(&stop);
        })
    };
    let submit = cmd_tx.clone();
    let backend: Arc<dyn FabricBackend> = Arc::new(
        SwitchBackend::new(
            Box::new(move |cmd| submit.send(cmd).is_ok()),
            &PROGRAM_INFO,
            base.clone(),
        )
        .with_trace_tap(tap),
    );
    let defaults = dataplane::fabric::FabricConfig {
        ports: dataplane::fabric::ports_of(&base),
        ..Default::default()
    };
    let fabric = FabricService::open_or(backend, None, defaults).unwrap();
    let bound = Bound::bind(&Listen::Tcp("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = bound.local_addr().unwrap().to_string();
    tokio::spawn(bound.serve(None, Some(fabric), std::future::pending()));
    Daemon {
        addr,
        hosts,
        stop,
        thread: Some(thread),
    }
}

/// Runs `rocectl --addr ADDR args..` while host 0 sends `frames` in turn
/// every 20 ms, until rocectl exits (at most 30 s).
async fn trace_while_sending(d: &mut Daemon, args: &[&str], frames: &[Vec<u8>]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rocectl"));
    cmd.arg("--addr").arg(&d.addr).args(args);
    let child = tokio::task::spawn_blocking(move || cmd.output().unwrap());
    let mut buf = vec![FrameBuf::default()];
    for i in 0..1500 {
        if child.is_finished() {
            break;
        }
        buf[0].set_frame(&frames[i % frames.len()]);
        d.hosts[0].send_batch(&buf).unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        // Drain what the switch sent to host 1.
        let mut rx = FrameBuf::batch(8);
        while d.hosts[1].recv_batch(&mut rx).unwrap() > 0 {}
    }
    child.await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rocectl_trace_streams_filtered_packets_as_json_and_text() {
    let mut d = daemon().await;
    let write = hex(ROCE_WRITE);
    let mut send_only = write.clone();
    send_only[42] = 0x04; // BTH opcode SEND Only: not selected by the filter
    let frames = [send_only, write.clone()];

    let out = trace_while_sending(
        &mut d,
        &[
            "trace",
            "--filter",
            "udp.dst_port == 4791 && bth.opcode == 0x0a",
            "--port",
            "0",
            "--count",
            "3",
            "--json",
        ],
        &frames,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let traces: Vec<PacketTrace> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(traces.len(), 3);
    for t in &traces {
        let opcode = t.events.iter().find_map(|e| match e {
            Event::Extract { header, fields } if header == "hdr.bth" => fields
                .iter()
                .find(|f| f.name == "opcode")
                .map(|f| f.value.0),
            _ => None,
        });
        assert_eq!(opcode, Some(0x0a), "only RDMA WRITE Only is traced");
        assert!(matches!(
            t.events.first(),
            Some(Event::Arrive { port: 0, .. })
        ));
        assert!(t.events.iter().any(|e| matches!(
            e,
            Event::Enqueue {
                egress_port: 1,
                priority: 3,
                ..
            }
        )));
        assert!(matches!(
            t.events.last(),
            Some(Event::Depart { port: 1, .. })
        ));
    }

    // Text: one indented block per packet.
    let out = trace_while_sending(&mut d, &["trace", "--count", "1"], &[write]).await;
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("packet "), "{text}");
    for needle in [
        "  arrive port 0",
        "    table RoceIngress.ipv4_lpm",
        "    tm enqueue copy 0",
        "  depart port 1",
    ] {
        assert!(text.contains(needle), "{needle:?} in:\n{text}");
    }

    // A bad filter is refused before anything is sent.
    let out = trace_while_sending(
        &mut d,
        &["trace", "--filter", "udp.dst_port = 1"],
        &[hex(ROCE_WRITE)],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--filter"));
}
