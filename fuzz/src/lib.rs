//! The bodies of roceswitch's fuzz targets, one function per target, shared
//! by the libFuzzer binaries (`fuzz_targets/`, `cargo fuzz run NAME` on
//! nightly) and the stable corpus harness (`tests/corpus.rs`).
//!
//! Contract: each function takes any bytes and must not panic; where the
//! code under test promises more (the switch's conservation law, a state
//! file that loads either whole or with an error), the function asserts it.

use std::cell::RefCell;
use std::collections::HashMap;

use control::device::DeviceState;
use control::p4rt::roles::RoleAccess;
use control::p4rt::write::{Shadow, WriteContext, apply_batch, op_from_update, undo_batch};
use dataplane::mac::Mac;
use dataplane::roce::{P4INFO_BINARY, PROGRAM_INFO, Program};
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::Instant;
use dataplane::wire::ethernet::EthernetAddress;
use p4_target::pipeline::Pipeline;
use p4_target::runtime::RuntimeApi;
use prost::Message;
use proto::p4::v1 as pb;

thread_local! {
    /// One switch kept across inputs, so state built by earlier frames
    /// (queues, pauses, LLDP neighbours) meets later ones.
    static SWITCH: RefCell<(Switch<Program>, u64)> = RefCell::new((
        Switch::new(Program::new(), SwitchConfig::with_ports(4), Instant::ZERO)
            .expect("the default switch configuration is valid"),
        0,
    ));
}

/// The switch core's frame input: byte 0 picks the port (beyond the
/// switch's 4 ports too), the rest is the frame. The conservation law must
/// hold afterwards.
pub fn switch_frame(data: &[u8]) {
    let Some((&port, frame)) = data.split_first() else {
        return;
    };
    SWITCH.with(|s| {
        let (sw, t) = &mut *s.borrow_mut();
        *t += 1_000;
        let now = Instant::from_nanos(*t);
        sw.handle_frame(u16::from(port % 6), frame, now);
        if port & 0x80 != 0 {
            sw.handle_packet_out(frame, now);
        }
        sw.handle_timeout(now);
        let mut out = Vec::new();
        for p in 0..4 {
            while sw.poll_transmit(p, now, &mut out).is_some() {}
        }
        while sw.poll_packet_in().is_some() {}
        while sw.poll_digest().is_some() {}
        while sw.poll_event().is_some() {}
        if let Err(e) = sw.conservation() {
            panic!("{e}");
        }
    });
}

/// The MAC's receive classification and the MAC Control (PFC/PAUSE)
/// parser; a frame the parser accepts re-emits to the same parse.
pub fn mac_pfc(data: &[u8]) {
    let mut mac = Mac::new(EthernetAddress([2, 0, 0, 0, 0, 1]));
    let _ = mac.handle_rx(data);
    if let Ok(Some(dataplane::wire::pfc::MacControlRepr::Pfc(pfc))) =
        dataplane::wire::pfc::parse_frame(data)
    {
        let mut buf = vec![0; dataplane::wire::pfc::FRAME_LEN];
        let n = mac.emit_pfc(&pfc, &mut buf).expect("a parsed PFC re-emits");
        let again = dataplane::wire::pfc::parse_frame(&buf[..n]).expect("our own PFC parses");
        assert_eq!(
            again,
            Some(dataplane::wire::pfc::MacControlRepr::Pfc(pfc)),
            "PFC round trip"
        );
    }
}

/// The host agent's RoCE frame parser (v2: Ethernet / IPv4 / UDP 4791, v1:
/// EtherType 0x8915 / GRH; then the BTH, its extension headers and ICRC).
pub fn roce_header(data: &[u8]) {
    let _ = dataplane::rnic::frame::RoceFrameRepr::parse(data);
}

/// The fabric state-file loader: bytes either load into a configuration
/// that validates, or are refused with an error.
pub fn fabric_config(data: &[u8]) {
    if let Ok(cfg) = control::fabric::config::parse(data, "fuzz") {
        assert!(cfg.validate().is_empty(), "a loaded config validates");
    }
}

/// The P4Runtime state-file (`FILE.p4rt`) loader: any bytes open or are
/// refused; opening never panics.
pub fn state_file(data: &[u8]) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("state.p4rt");
    std::fs::write(&path, data).expect("writing the input");
    let info = pb_p4info();
    let _ = control::p4rt::persist::StateStore::open(&path, &info, b"roceswitch:fuzz");
}

/// The P4Runtime write path: the bytes as a `WriteRequest`, each update
/// decoded against `roce_switch.p4` and the batch applied to a fresh
/// program and replication engine.
pub fn p4rt_write(data: &[u8]) {
    let Ok(req) = pb::WriteRequest::decode(data) else {
        return;
    };
    let access = RoleAccess::full();
    let profiles = HashMap::new();
    let shadow = Shadow::default();
    let cx = WriteContext {
        info: &PROGRAM_INFO,
        access: &access,
        profiles: &profiles,
        shadow: &shadow,
        next_hidden: std::cell::Cell::new(shadow.next_hidden),
    };
    let ops: Vec<_> = req.updates.iter().map(|u| op_from_update(&cx, u)).collect();
    let mut program = Program::new();
    let mut pre = p4_target::arch::Pre::new();
    let mut dev = DeviceState {
        runtime: program.runtime_mut() as &mut dyn RuntimeApi,
        pre: Some(&mut pre),
        ports: Some(control::device::PortSpace {
            front_panel: 4,
            cpu_port: Some(510),
        }),
        now_ns: 0,
        ports_down: Vec::new(),
    };
    let atomicity = pb::write_request::Atomicity::try_from(req.atomicity)
        .unwrap_or(pb::write_request::Atomicity::ContinueOnError);
    // Applied, then taken back as when the state file cannot record it.
    let mut undo = Vec::new();
    let _ = apply_batch(&mut dev, &ops, atomicity, Some(&mut undo));
    undo_batch(&mut dev, &undo);
}

fn pb_p4info() -> proto::p4::config::v1::P4Info {
    proto::p4::config::v1::P4Info::decode(P4INFO_BINARY).expect("the compiled P4Info decodes")
}
