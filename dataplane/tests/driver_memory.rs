//! The real-time driver on in-memory ports: frames in, routed frames out,
//! control-plane commands applied between packets, packet-ins delivered.
//!
//! ```text
//!  test ── port 0 ──┐                ┌── port 2 ── test
//!                   └─[ Driver(Switch) ]
//!  test ── port 1 ──┘
//! ```

mod common;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::channel;
use std::time::Duration;

use common::{roce_frame, routed, router};
use dataplane::driver::{Command, Driver, DriverIo};
use dataplane::port::{FrameBuf, MemoryPort, Port};
use dataplane::roce::Program;
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::Instant;

fn recv_within(port: &mut MemoryPort, timeout: Duration) -> Option<Vec<u8>> {
    let mut bufs = FrameBuf::batch(1);
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        if port.recv_batch(&mut bufs).unwrap() == 1 {
            return Some(bufs[0].frame().to_vec());
        }
        port.wait_readable(Some(Duration::from_millis(10))).unwrap();
    }
    None
}

fn send(port: &mut MemoryPort, frame: &[u8]) {
    let mut b = FrameBuf::default();
    b.set_frame(frame);
    assert_eq!(port.send_batch(&[b]).unwrap(), 1);
}

#[test]
fn driver_routes_applies_commands_and_punts() {
    let mut ours = Vec::new();
    let mut theirs: Vec<Box<dyn Port + Send>> = Vec::new();
    for i in 0..3 {
        let (a, b) = MemoryPort::pair(&format!("test{i}"), &format!("sw{i}"));
        ours.push(a);
        theirs.push(Box::new(b));
    }
    let switch = Switch::new(router(2), SwitchConfig::with_ports(3), Instant::ZERO).unwrap();
    let (cmd_tx, cmd_rx) = channel::<Command<Program>>();
    let (pin_tx, pin_rx) = channel();
    let io = DriverIo {
        commands: cmd_rx,
        packet_in: Some(Box::new(move |f| {
            let _ = pin_tx.send(f);
        })),
        events: None,
        digests: None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let handle = std::thread::spawn(move || {
        let mut d = Driver::new(switch, theirs, io);
        d.run(&stop2).unwrap();
        d.stats()
    });

    let frame = roce_frame(26, 7, 256);
    send(&mut ours[0], &frame);
    let out = recv_within(&mut ours[2], Duration::from_secs(5)).expect("routed frame on port 2");
    assert_eq!(out, routed(&frame));

    // A command from the control plane: punt everything IPv4 from port 1.
    cmd_tx
        .send(Box::new(|sw: &mut Switch<Program>, _now| {
            use p4_target::pipeline::Pipeline;
            use p4_target::runtime::{EntryAction, FieldMatch, RuntimeApi, TableEntry};
            let acl = dataplane::roce::PROGRAM_INFO
                .table_by_name("acl")
                .unwrap()
                .id;
            let punt = common::action("punt_to_cpu", &[]);
            let mut matches = vec![None; 8];
            matches[0] = Some(FieldMatch::Ternary {
                value: 1,
                mask: 0x1ff,
            });
            sw.pipeline_mut()
                .runtime_mut()
                .table_insert(
                    acl,
                    TableEntry {
                        matches,
                        priority: 1,
                        action: EntryAction::Direct(punt),
                        metadata: Vec::new(),
                    },
                )
                .unwrap();
        }))
        .unwrap();
    send(&mut ours[1], &frame);
    let punted = pin_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("packet-in");
    assert_eq!(&punted[..2], &[0x00, 0x80], "packet_in.ingress_port = 1");
    assert_eq!(punted.len(), frame.len() + 2);
    assert!(
        recv_within(&mut ours[2], Duration::from_millis(200)).is_none(),
        "punted, not routed"
    );

    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let stats = handle.join().unwrap();
    assert_eq!(stats.commands, 1);
    assert_eq!(stats.rx_frames, 2);
    assert_eq!(stats.tx_frames, 1);
}
