//! The NVMe-oF initiator and target state machines, without an RNIC.

use super::*;

fn recv(wr_id: u64, imm: u32) -> Completion {
    Completion {
        qpn: 1,
        wr_id,
        op: CompletionOp::Recv,
        status: WcStatus::Success,
        byte_len: 64,
        imm: Some(imm),
    }
}

#[test]
fn a_capsule_immediate_carries_op_command_id_and_length() {
    let c = Capsule {
        op: IoOp::Write,
        cid: 1023,
        blocks: 8,
    };
    assert_eq!(c.to_imm(), 0x8000_0000 | (1023 << 16) | 8);
    assert_eq!(Capsule::from_imm(c.to_imm()), Some(c));
    assert_eq!(c.len_bytes(), 4096);
    assert_eq!(c.host_buf().addr, DEFAULT_MR_ADDR + 1023 * 4096);
    assert_eq!(Capsule::from_imm(0x0001_0000), None, "no length");
}

#[test]
fn the_initiator_keeps_iodepth_commands_outstanding_and_times_each() {
    let cfg = NvmfConfig {
        iodepth: 2,
        bs: 4096,
        rwmixread: 100,
        ios: Some(3),
        seed: 7,
    };
    cfg.validate().unwrap();
    let mut h = Initiator::new(cfg);
    assert_eq!(h.initial_receives().count(), 2);
    let a = h.poll_post(1_000).unwrap();
    let b = h.poll_post(1_000).unwrap();
    assert_eq!(h.poll_post(1_000), None, "two outstanding at iodepth 2");
    let cap = |wr: &SendWr| match wr.op {
        WrOp::SendImm(imm) => Capsule::from_imm(imm).unwrap(),
        other => panic!("capsule sent as {other:?}"),
    };
    assert_eq!(a.len_bytes, COMMAND_CAPSULE_BYTES);
    assert_eq!((cap(&a).cid, cap(&b).cid), (0, 1));
    assert_eq!(cap(&a).op, IoOp::Read, "rwmixread 100");
    // The response for command 1 arrives first: NVMe completes out of order.
    let repost = h.handle_completion(&recv(9, 1), 5_000).unwrap();
    assert_eq!(repost.wr_id, 9, "the used receive is posted again");
    let c = h.poll_post(6_000).unwrap();
    assert_eq!(cap(&c).cid, 1, "the freed command id is reused");
    assert!(h.poll_post(6_000).is_none() && !h.finished());
    h.handle_completion(&recv(3, 0), 9_000);
    h.handle_completion(&recv(4, 1), 10_000);
    assert!(h.finished(), "3 I/Os asked, 3 completed");
    let s = NvmfSummary::of(&[&h], 1.0);
    assert_eq!(s.read.total_ios, 3);
    assert_eq!(s.write.total_ios, 0);
    assert_eq!(s.read.io_bytes, 3 * 4096);
    assert_eq!((s.read.clat_ns.min, s.read.clat_ns.max), (4_000, 8_000));
    let text = s.fio_lines().join("\n");
    assert!(text.contains("read: IOPS=3,"), "{text}");
    assert!(text.contains("clat percentiles (usec)"), "{text}");
    assert!(!text.contains("write:"), "no writes asked: {text}");
}

#[test]
fn the_read_mix_is_honoured_and_reproducible() {
    let mix = |seed| {
        let mut h = Initiator::new(NvmfConfig {
            iodepth: 1024,
            rwmixread: 70,
            seed,
            ..NvmfConfig::default()
        });
        (0..1000)
            .map(|_| {
                let wr = h.poll_post(0).unwrap();
                let WrOp::SendImm(imm) = wr.op else { panic!() };
                Capsule::from_imm(imm).unwrap().op == IoOp::Read
            })
            .collect::<Vec<_>>()
    };
    let reads = mix(1).iter().filter(|&&r| r).count();
    assert!(
        (640..=760).contains(&reads),
        "{reads} reads of 1000 at 70 %"
    );
    assert_eq!(mix(1), mix(1), "same seed, same sequence");
    assert_ne!(mix(1), mix(2));
}

#[test]
fn the_target_writes_read_data_then_responds_and_reads_write_data_first() {
    let mut t = Target::default();
    let read = Capsule {
        op: IoOp::Read,
        cid: 5,
        blocks: 16,
    };
    let repost = t.handle_completion(&recv(42, read.to_imm())).unwrap();
    assert_eq!(repost.wr_id, 42);
    let data = *t.peek().unwrap();
    t.posted();
    assert_eq!(data.op, WrOp::Write);
    assert_eq!(data.len_bytes, 8192);
    assert_eq!(data.remote, read.host_buf());
    let resp = *t.peek().unwrap();
    t.posted();
    assert_eq!(resp.op, WrOp::SendImm(5), "the response names the command");
    assert_eq!(resp.len_bytes, RESPONSE_CAPSULE_BYTES);
    assert!(t.peek().is_none());

    let write = Capsule {
        op: IoOp::Write,
        cid: 6,
        blocks: 8,
    };
    t.handle_completion(&recv(43, write.to_imm()));
    let fetch = *t.peek().unwrap();
    t.posted();
    assert_eq!(fetch.op, WrOp::Read);
    assert!(fetch.signaled, "the response waits for the READ");
    assert!(t.peek().is_none(), "no response before the data is in");
    t.handle_completion(&Completion {
        qpn: 1,
        wr_id: fetch.wr_id,
        op: CompletionOp::Read,
        status: WcStatus::Success,
        byte_len: 4096,
        imm: None,
    });
    assert_eq!(t.peek().unwrap().op, WrOp::SendImm(6));
    assert_eq!(t.commands, 2);
}

#[test]
fn bad_configurations_are_refused_by_name() {
    let bad = |f: fn(&mut NvmfConfig)| {
        let mut c = NvmfConfig::default();
        f(&mut c);
        c.validate().unwrap_err().to_string()
    };
    assert!(bad(|c| c.iodepth = 0).contains("--iodepth"));
    assert!(bad(|c| c.iodepth = 2048).contains("--iodepth"));
    assert!(bad(|c| c.bs = 1000).contains("--bs"));
    assert!(bad(|c| c.rwmixread = 101).contains("--rwmixread"));
}

#[test]
fn json_percentiles_are_keyed_as_fio_keys_them() {
    let mut h = Initiator::new(NvmfConfig {
        iodepth: 1,
        rwmixread: 100,
        ..NvmfConfig::default()
    });
    let wr = h.poll_post(0).unwrap();
    h.handle_completion(&recv(0, wr.wr_id as u32), 2_500);
    let v = serde_json::to_value(NvmfSummary::of(&[&h], 1.0)).unwrap();
    assert_eq!(v["read"]["clat_ns"]["percentile"]["99.900000"], 2_500);
    assert_eq!(v["read"]["total_ios"], 1);
    assert_eq!(v["write"]["total_ios"], 0);
}
