//! The built-in workload on a clean link: segmentation, pacing, DCQCN
//! reaction to CNPs, CNP pacing (E-16), PFC honouring, bad input.

use super::*;
use crate::wire::ip::Ipv4Packet;

fn set_ce(frame: &mut [u8]) {
    let mut ip = Ipv4Packet::new_unchecked(&mut frame[frame::ETHERNET_HEADER_LEN..]);
    assert!(ip.mark_ce());
}

// ------------------------------------------------------------ sender

#[test]
fn write_stream_segments_messages_with_consecutive_psns_and_completes_on_acks() {
    let (a, b) = pair(2500, Some(2));
    let mut p = Pair::new(a, b);
    p.drive(1_000_000);
    let ops: Vec<_> = p
        .sent(Dir::AtoB)
        .map(|s| {
            assert_eq!(s.repr.ip.dscp, 26);
            assert_eq!(s.repr.ip.ecn, Ecn::Ect0);
            assert_eq!(s.repr.udp_src_port, 0xC242);
            (
                s.repr.bth.opcode,
                s.repr.bth.psn,
                s.repr.payload_len,
                s.repr.bth.ack_req,
            )
        })
        .collect();
    use Opcode::*;
    assert_eq!(
        ops,
        vec![
            (RcWriteFirst, 100, 1024, false),
            (RcWriteMiddle, 101, 1024, false),
            (RcWriteLast, 102, 452, true),
            (RcWriteFirst, 103, 1024, false),
            (RcWriteMiddle, 104, 1024, false),
            (RcWriteLast, 105, 452, true),
        ]
    );
    // One coalesced ACK per message, for its last PSN.
    let acks: Vec<u32> = p.sent(Dir::BtoA).map(|s| s.repr.bth.psn).collect();
    assert_eq!(acks, vec![102, 105]);
    let s = p.b.qp_stats(B_QPN).unwrap();
    assert_eq!(
        (s.rx_messages, s.rx_payload_bytes, s.psn_gaps, s.ack_tx),
        (2, 5000, 0, 2)
    );
    let s = p.a.qp_stats(A_QPN).unwrap();
    assert_eq!((s.tx_messages, s.ack_rx, s.retx_packets), (2, 2, 0));
    assert!(p.a.is_idle() && p.b.is_idle());
    assert!(p.a_events.is_empty(), "the built-in workload is unsignaled");
}

#[test]
fn the_sender_is_busy_until_its_last_message_is_acknowledged() {
    let (mut a, mut b) = pair(1024, Some(1));
    let f = next_frame(&mut a, 0).unwrap();
    assert!(!a.is_idle(), "sent but not acknowledged");
    b.handle_frame(t_(0), &f).unwrap();
    let ack = next_frame(&mut b, 0).unwrap();
    assert_eq!(aeth_kind(&ack), AethSyndrome::Ack { credits: 0x1F });
    a.handle_frame(t_(10), &ack).unwrap();
    assert!(a.is_idle());
    assert_eq!(a.poll_timeout(t_(10)), None, "no timer left");
}

#[test]
fn pacing_spaces_frames_at_line_rate() {
    let (mut a, _) = pair(1024, None);
    let f1 = next_frame(&mut a, 0).unwrap();
    // Next frame not before serialisation time of the first at 100 Gb/s.
    assert!(next_frame(&mut a, 1).is_none());
    let due = a.poll_timeout(t_(1)).map(I::as_nanos).unwrap();
    let expect = ((f1.len() + WIRE_OVERHEAD_BYTES) * 8) as u64 / 100;
    assert!(due.abs_diff(expect) <= 1, "due {due} expect {expect}");
    assert!(next_frame(&mut a, due).is_some());
}

#[test]
fn a_pacing_burst_sends_trains_at_the_mean_line_rate() {
    // 100 Gb/s, 1024-byte payloads: one frame's wire time, then a burst of
    // four and a half of them.
    let (mut probe, _) = pair(1024, None);
    let f = next_frame(&mut probe, 0).unwrap();
    let gap = ((f.len() + WIRE_OVERHEAD_BYTES) * 8) as u64 / 100;
    let (mut a, _) = rnics(
        RnicConfig {
            dcqcn: None,
            pacing_burst_ns: 4 * gap + gap / 2,
            ..RnicConfig::default()
        },
        a_qp(1024, None),
        b_qp(),
    );
    // At t = 0 the frames due at 0, 1, 2, 3 and 4 gaps leave together.
    let mut train = 0;
    while next_frame(&mut a, 0).is_some() {
        train += 1;
    }
    assert_eq!(train, 5);
    // The next call is when half the burst is free again.
    let due = a.poll_timeout(t_(0)).map(I::as_nanos).unwrap();
    let half = (4 * gap + gap / 2) / 2;
    assert!(due.abs_diff(5 * gap - half) <= 5, "due {due}, gap {gap}");
    // Over many trains the mean rate is the line rate: the 100th frame
    // (due at 99 gaps) leaves a burst ahead of its time, not more.
    let (mut now, mut sent) = (due, train);
    let mut last = now;
    while sent < 100 {
        while sent < 100 && next_frame(&mut a, now).is_some() {
            sent += 1;
            last = now;
        }
        now = a.poll_timeout(t_(now)).map(I::as_nanos).unwrap();
    }
    let early = (99 * gap).saturating_sub(last);
    assert!(
        early <= 4 * gap + gap / 2 && early >= 2 * gap,
        "100th frame {early} ns early, gap {gap}"
    );
}

#[test]
fn cnp_halves_the_pacing_rate() {
    let (mut a, mut b) = rnics(RnicConfig::default(), a_qp(1024, None), b_qp());
    let mut f = next_frame(&mut a, 0).unwrap();
    set_ce(&mut f);
    b.handle_frame(t_(0), &f).unwrap();
    let cnp = next_frame(&mut b, 0).unwrap();
    assert_eq!(parse(&cnp).bth.opcode, Opcode::Cnp);
    a.handle_frame(t_(0), &cnp).unwrap();
    assert_eq!(a.qp_stats(A_QPN).unwrap().rate_bps, 50_000_000_000);
    let t1 = a.poll_timeout(t_(0)).map(I::as_nanos).unwrap();
    let _ = next_frame(&mut a, t1).unwrap();
    let t2 = a.poll_timeout(t_(t1)).map(I::as_nanos).unwrap();
    let expect = ((f.len() + WIRE_OVERHEAD_BYTES) * 8) as u64 / 50;
    assert!((t2 - t1).abs_diff(expect) <= 1);
    let c = b.counters();
    assert_eq!((c.np_cnp_sent, c.np_ecn_marked_roce_packets), (1, 1));
    assert_eq!(a.counters().rp_cnp_handled, 1);
}

#[test]
fn a_train_paced_sender_needs_no_wake_up_for_the_rate_timer() {
    // Two senders see the same CNPs; one paces every frame (the rate
    // timer is a deadline), the other in trains (it is not, and the
    // increases due are applied when the rate is next used). Each sends
    // one frame, so only timers remain.
    let burst = RnicConfig {
        pacing_burst_ns: 500_000,
        ..RnicConfig::default()
    };
    let (mut exact, mut b) = rnics(RnicConfig::default(), a_qp(1024, Some(1)), b_qp());
    let (mut train, _) = rnics(burst, a_qp(1024, Some(1)), b_qp());
    let mut f = next_frame(&mut exact, 0).unwrap();
    let _ = next_frame(&mut train, 0).unwrap();
    set_ce(&mut f);
    b.handle_frame(t_(0), &f).unwrap();
    let cnp = next_frame(&mut b, 0).unwrap();
    exact.handle_frame(t_(0), &cnp).unwrap();
    train.handle_frame(t_(0), &cnp).unwrap();
    let wake = |r: &Rnic| r.poll_timeout(t_(0)).map(I::as_nanos).unwrap();
    assert_eq!(
        wake(&exact),
        55_000,
        "the exact pacer wakes for the rate timer"
    );
    assert!(wake(&train) > 55_000, "the train-paced one does not");
    let rate = |r: &Rnic| r.qp_stats(A_QPN).unwrap().rate_bps;
    exact.handle_timeout(t_(165_000));
    assert_eq!(rate(&exact), 93_750_000_000, "three fast-recovery steps");
    assert_eq!(rate(&train), 50_000_000_000, "nothing ran yet");
    // The next CNP applies the six increases due before it, then cuts.
    exact.handle_timeout(t_(330_000));
    exact.handle_frame(t_(330_000), &cnp).unwrap();
    train.handle_frame(t_(330_000), &cnp).unwrap();
    assert!(rate(&exact) > 50_000_000_000);
    assert_eq!(rate(&train), rate(&exact));
}

// ------------------------------------------------------------ receiver

#[test]
fn e16_cnp_pacing_one_per_50us() {
    let (mut a, mut b) = pair(64, None);
    let mut cnp_times = vec![];
    for k in 0..=12u64 {
        let t = k * 10_000;
        let send_at = a.poll_timeout(t_(t)).map(I::as_nanos).unwrap_or(t).max(t);
        let mut f = next_frame(&mut a, send_at).unwrap();
        set_ce(&mut f);
        b.handle_frame(t_(t), &f).unwrap();
        while let Some(c) = next_frame(&mut b, t) {
            let r = parse(&c);
            if r.bth.opcode == Opcode::RcAcknowledge {
                // Keep A's send window open.
                a.handle_frame(t_(t), &c).unwrap();
                continue;
            }
            assert_eq!(r.bth.opcode, Opcode::Cnp);
            assert!(r.bth.becn);
            assert_eq!(r.bth.dest_qp, A_QPN);
            assert_eq!(r.ip.dscp, 48);
            cnp_times.push(t);
        }
    }
    assert_eq!(cnp_times, vec![0, 50_000, 100_000]);
    assert_eq!(b.qp_stats(B_QPN).unwrap().cnp_tx, 3);
}

#[test]
fn ack_every_n_packets_adds_acks_inside_long_messages() {
    let (a, mut b) = pair(8 * 1024, Some(1));
    b.cfg.ack_every_packets = 3;
    let mut p = Pair::new(a, b);
    p.drive(1_000_000);
    let acks: Vec<u32> = p.sent(Dir::BtoA).map(|s| s.repr.bth.psn).collect();
    // Every third packet, and the last (AckReq) one.
    assert_eq!(acks, vec![102, 105, 107]);
    assert_eq!(p.a.qp_stats(A_QPN).unwrap().tx_messages, 1);
}

#[test]
fn bad_frames_are_errors_not_panics() {
    let (mut a, mut b) = pair(1024, Some(1));
    assert!(matches!(
        b.handle_frame(t_(0), &[0u8; 10]),
        Err(RnicError::Frame(_))
    ));
    let mut f = next_frame(&mut a, 0).unwrap();
    let n = f.len();
    f[n - 10] ^= 1;
    assert_eq!(b.handle_frame(t_(0), &f), Err(RnicError::Icrc));
    f[n - 10] ^= 1;
    // Re-address to an unknown QP: BTH dest QP bytes.
    f[frame::ETHERNET_HEADER_LEN + 20 + 8 + 7] = 0x99;
    assert!(matches!(
        b.handle_frame(t_(0), &f[..80]),
        Err(RnicError::UnknownQp(_))
    ));
    assert_eq!(b.stats().rx_errors, 3);
    assert_eq!(
        a.add_qp(QpConfig {
            local_qpn: A_QPN,
            ..QpConfig::default()
        }),
        Err(AddQpError::Duplicate(A_QPN))
    );
    assert_eq!(
        a.post_send(0x999, wr(1, WrOp::Write, 8)),
        Err(PostError::UnknownQp(0x999))
    );
}

// ------------------------------------------------------------ PFC

#[test]
fn pause_blocks_data_until_expiry_and_counts_time() {
    let (mut a, _) = pair(1024, None);
    let mut q = PfcRepr::default();
    q.set(3, 1000); // 5.12 µs at 100 Gb/s (E-1)
    a.handle_pfc(t_(0), &q);
    assert!(a.is_paused(3, t_(0)));
    assert!(next_frame(&mut a, 0).is_none());
    assert_eq!(a.poll_timeout(t_(0)).map(I::as_nanos), Some(5_120));
    assert!(next_frame(&mut a, 5_119).is_none());
    assert!(next_frame(&mut a, 5_120).is_some());
    assert_eq!(a.stats().paused_ns[3], 5_120);
    assert_eq!(a.stats().pfc_rx[3], 1);
}

#[test]
fn xon_resumes_and_refresh_replaces() {
    let (mut a, _) = pair(1024, None);
    let mut q = PfcRepr::default();
    q.set(3, 0xFFFF);
    a.handle_pfc(t_(0), &q);
    q.set(3, 1000);
    a.handle_pfc(t_(100), &q); // replaces: expires at 100 + 5120
    assert!(next_frame(&mut a, 5_000).is_none());
    assert!(a.is_paused(3, t_(5_219)));
    assert!(!a.is_paused(3, t_(5_220)));
    q.set(3, 0xFFFF);
    a.handle_pfc(t_(6_000), &q);
    q.set(3, 0);
    a.handle_pfc(t_(7_000), &q);
    assert!(next_frame(&mut a, 7_000).is_some());
    assert_eq!(a.stats().paused_ns[3], 5_220 + 1_000);
}

#[test]
fn pause_on_data_priority_does_not_block_cnps_but_blocks_acks() {
    let (mut a, mut b) = pair(1024, None);
    let mut f = next_frame(&mut a, 0).unwrap();
    set_ce(&mut f);
    let mut q = PfcRepr::default();
    q.set(3, 0xFFFF);
    b.handle_pfc(t_(0), &q);
    b.handle_frame(t_(0), &f).unwrap();
    let cnp = next_frame(&mut b, 0).expect("CNP on priority 6 still flows");
    assert_eq!(parse(&cnp).bth.opcode, Opcode::Cnp);
    assert!(
        next_frame(&mut b, 0).is_none(),
        "the ACK waits for the pause"
    );
    // And a pause on priority 6 does block the CNP.
    let (mut a, mut b) = pair(1024, None);
    let mut f = next_frame(&mut a, 0).unwrap();
    set_ce(&mut f);
    let mut q = PfcRepr::default();
    q.set(6, 0xFFFF);
    b.handle_pfc(t_(0), &q);
    b.handle_frame(t_(0), &f).unwrap();
    let ack = next_frame(&mut b, 0).unwrap();
    assert_eq!(parse(&ack).bth.opcode, Opcode::RcAcknowledge);
    assert!(next_frame(&mut b, 0).is_none());
}

#[test]
fn header_only_mode_writes_headers_and_reports_full_length() {
    let (mut a, mut b) = pair(4096, Some(1));
    let mut buf = [0u8; 96];
    let t = a.poll_transmit(t_(0), &mut buf).unwrap();
    assert_eq!(t.frame_len, 14 + 20 + 8 + 12 + 16 + 1024 + 4);
    assert_eq!(t.written_len, 70);
    b.handle_frame(t_(0), &buf[..t.written_len]).unwrap();
    assert_eq!(b.qp_stats(B_QPN).unwrap().rx_payload_bytes, 1024);
}

#[test]
fn too_small_buffer_loses_no_frame() {
    let (mut a, mut b) = pair(1024, Some(2));
    let mut f = next_frame(&mut a, 0).unwrap();
    set_ce(&mut f);
    b.handle_frame(t_(0), &f).unwrap();
    let mut tiny = [0u8; 20];
    assert!(b.poll_transmit(t_(0), &mut tiny).is_none());
    assert!(a.poll_transmit(t_(1_000), &mut tiny).is_none());
    // The CNP is still queued, and A's data was not consumed either.
    assert!(next_frame(&mut b, 0).is_some());
    assert_eq!(b.qp_stats(B_QPN).unwrap().cnp_tx, 1);
    assert_eq!(a.qp_stats(A_QPN).unwrap().tx_packets, 1);
    let f2 = next_frame(&mut a, 1_000).unwrap();
    assert_eq!(parse(&f2).bth.psn, 101);
}

#[test]
fn roce_v1_on_a_vlan_carries_the_priority_in_the_pcp() {
    let cfg = RnicConfig {
        roce_version: RoceVersion::V1,
        vlan_id: Some(100),
        dcqcn: None,
        ..RnicConfig::default()
    };
    let (a, b) = rnics(cfg, a_qp(3000, Some(2)), b_qp());
    let mut p = Pair::new(a, b);
    p.drive(1_000_000);
    for s in &p.log {
        assert_eq!(s.repr.version, RoceVersion::V1);
        assert_eq!(s.repr.vlan, Some(Vlan { pcp: 3, vid: 100 }));
    }
    assert_eq!(p.b.qp_stats(B_QPN).unwrap().rx_payload_bytes, 6000);
    assert_eq!(p.a.qp_stats(A_QPN).unwrap().tx_messages, 2);
}

proptest::proptest! {
    #[test]
    fn random_frames_are_rejected_not_panics(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..160)) {
        let (_, mut b) = pair(1024, Some(1));
        let before = b.stats().rx_errors + b.stats().rx_frames;
        let _ = b.handle_frame(t_(0), &data);
        proptest::prop_assert_eq!(b.stats().rx_errors + b.stats().rx_frames, before + 1);
    }
}
