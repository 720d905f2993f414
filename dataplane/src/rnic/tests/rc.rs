//! The RC rules of IBTA Vol. 1 ch. 9, one by one, grouped by role.

use super::*;
use crate::wire::ib::NakCode;

fn drop_psns(psns: &'static [u32]) -> Box<dyn FnMut(&Seen) -> Fate> {
    let mut dropped = Vec::new();
    Box::new(move |s: &Seen| {
        let psn = s.repr.bth.psn;
        // Each listed PSN is lost once (its first transmission).
        if s.dir == Dir::AtoB && psns.contains(&psn) && !dropped.contains(&psn) {
            dropped.push(psn);
            Fate::Drop
        } else {
            Fate::Deliver
        }
    })
}

// ------------------------------------------------------------ responder

#[test]
fn a_gap_draws_exactly_one_nak_psn_sequence_error() {
    let (a, b) = pair(8 * 1024, Some(1));
    let mut p = Pair::new(a, b);
    p.fault = drop_psns(&[102]);
    p.drive(10_000_000);
    let naks: Vec<(u32, AethSyndrome)> = p
        .sent(Dir::BtoA)
        .filter(|s| matches!(s.repr.ext, RoceExt::Aeth(a) if a.syndrome >> 5 == 0b011))
        .map(|s| match s.repr.ext {
            RoceExt::Aeth(a) => (s.repr.bth.psn, a.kind()),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        naks,
        vec![(102, AethSyndrome::Nak(NakCode::PsnSequenceError))],
        "one NAK for the gap, carrying the expected PSN"
    );
    let s = p.b.qp_stats(B_QPN).unwrap();
    // 103..107 arrived ahead of 102 and were dropped; one gap of one packet.
    assert_eq!((s.out_of_sequence, s.psn_gaps, s.psn_lost), (5, 1, 1));
    assert_eq!(s.nak_tx, 1);
    assert_eq!(
        (s.rx_messages, s.rx_payload_bytes),
        (1, 8 * 1024),
        "exactly once"
    );
    assert_eq!(p.b.counters().out_of_sequence, 5);
}

#[test]
fn duplicates_are_acknowledged_and_dropped() {
    let (mut a, mut b) = pair(1024, Some(2));
    let f = next_frame(&mut a, 0).unwrap();
    b.handle_frame(t_(0), &f).unwrap();
    let ack = next_frame(&mut b, 0).unwrap();
    assert_eq!(parse(&ack).bth.psn, 100);
    b.handle_frame(t_(10), &f).unwrap();
    let dup_ack = next_frame(&mut b, 10).expect("a duplicate is acknowledged");
    assert_eq!(parse(&dup_ack).bth.psn, 100);
    assert_eq!(aeth_kind(&dup_ack), AethSyndrome::Ack { credits: 0x1F });
    let s = b.qp_stats(B_QPN).unwrap();
    assert_eq!((s.duplicate_request, s.psn_late), (1, 1));
    assert_eq!(
        (s.rx_messages, s.rx_payload_bytes),
        (1, 1024),
        "executed once"
    );
    assert_eq!(b.counters().duplicate_request, 1);
}

#[test]
fn a_write_with_a_bad_rkey_or_range_draws_nak_remote_access_error() {
    for remote in [
        RemoteBuf {
            addr: verbs::DEFAULT_MR_ADDR,
            rkey: 0xBAD,
        },
        RemoteBuf {
            addr: verbs::DEFAULT_MR_ADDR + verbs::DEFAULT_MR_LEN - 10,
            rkey: verbs::DEFAULT_RKEY,
        },
    ] {
        let (a, b) = pair(0, None);
        let mut p = Pair::new(a, b);
        let mut w = wr(7, WrOp::Write, 100);
        w.remote = remote;
        p.a.post_send(A_QPN, w).unwrap();
        p.a.post_send(A_QPN, wr(8, WrOp::Write, 100)).unwrap();
        p.drive(10_000_000);
        let nak = p.sent(Dir::BtoA).next().unwrap();
        assert_eq!(nak.repr.bth.psn, 100);
        assert!(matches!(nak.repr.ext, RoceExt::Aeth(a) if a.syndrome == 0x62));
        let c = p.a_completions();
        assert_eq!(c[0].wr_id, 7);
        assert_eq!(c[0].status, WcStatus::RemoteAccessError);
        assert_eq!(c[1].status, WcStatus::WrFlushError, "the QP went to error");
        assert_eq!(
            p.a.qp_state(A_QPN),
            Some(QpState::Error(WcStatus::RemoteAccessError))
        );
        assert_eq!(p.b.qp_stats(B_QPN).unwrap().rx_payload_bytes, 0);
        assert_eq!(p.b.counters().resp_remote_access_errors, 1);
        assert_eq!(p.a.counters().req_remote_access_errors, 1);
    }
}

#[test]
fn a_read_of_memory_without_remote_read_is_refused() {
    let (mut a, mut b) = pair(0, None);
    b.register_mr(verbs::MemoryRegion {
        rkey: 0x77,
        addr: 0,
        len_bytes: 1 << 20,
        access: verbs::Access {
            remote_write: true,
            remote_read: false,
        },
    })
    .unwrap();
    let mut w = wr(1, WrOp::Read, 64);
    w.remote = RemoteBuf {
        addr: 0,
        rkey: 0x77,
    };
    a.post_send(A_QPN, w).unwrap();
    let mut p = Pair::new(a, b);
    p.drive(1_000_000);
    assert_eq!(p.a_completions()[0].status, WcStatus::RemoteAccessError);
}

#[test]
fn a_send_without_a_receive_draws_an_rnr_nak_and_succeeds_once_one_is_posted() {
    let (a, b) = rnics(
        RnicConfig {
            dcqcn: None,
            ..RnicConfig::default()
        },
        a_qp(0, None),
        QpConfig {
            auto_recv: false,
            min_rnr_timer: 1, // 10 µs
            ..b_qp()
        },
    );
    let mut p = Pair::new(a, b);
    p.a.post_send(A_QPN, wr(1, WrOp::SendImm(0xCAFE), 3000))
        .unwrap();
    p.drive(5_000);
    let rnr = p.sent(Dir::BtoA).next().unwrap().clone();
    assert_eq!(rnr.repr.bth.psn, 100);
    assert!(matches!(rnr.repr.ext, RoceExt::Aeth(a) if a.kind() == AethSyndrome::RnrNak(1)));
    p.b.post_recv(
        B_QPN,
        RecvWr {
            wr_id: 55,
            len_bytes: 4096,
        },
    )
    .unwrap();
    p.drive(1_000_000);
    let c = p.a_completions();
    assert_eq!((c.len(), c[0].status), (1, WcStatus::Success));
    let r = p.b_completions();
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].wr_id, r[0].op, r[0].byte_len, r[0].imm),
        (55, CompletionOp::Recv, 3000, Some(0xCAFE))
    );
    assert_eq!(p.a.counters().rnr_nak_retry_err, 1);
    assert_eq!(p.b.counters().out_of_buffer, 1);
    // The requester waited the advertised 10 µs before trying again.
    let resent = p
        .sent(Dir::AtoB)
        .filter(|s| s.repr.bth.psn == 100)
        .nth(1)
        .unwrap();
    assert!(resent.at_ns >= rnr.at_ns + p.latency_ns + 10_000);
}

#[test]
fn rnr_retries_run_out() {
    let (a, b) = rnics(
        RnicConfig {
            dcqcn: None,
            ..RnicConfig::default()
        },
        QpConfig {
            rnr_retry: 2,
            ..a_qp(0, None)
        },
        QpConfig {
            auto_recv: false,
            min_rnr_timer: 1,
            ..b_qp()
        },
    );
    let mut p = Pair::new(a, b);
    p.a.post_send(A_QPN, wr(1, WrOp::Send, 10)).unwrap();
    p.drive(10_000_000);
    assert_eq!(p.a_completions()[0].status, WcStatus::RnrRetryExceeded);
    assert_eq!(
        p.a.qp_stats(A_QPN).unwrap().rnr_nak_retry_err,
        3,
        "1 + 2 retries"
    );
}

#[test]
fn write_with_immediate_consumes_a_receive_and_reports_the_immediate() {
    let (a, b) = rnics(
        RnicConfig {
            dcqcn: None,
            ..RnicConfig::default()
        },
        a_qp(0, None),
        QpConfig {
            auto_recv: false,
            ..b_qp()
        },
    );
    let mut p = Pair::new(a, b);
    p.b.post_recv(
        B_QPN,
        RecvWr {
            wr_id: 9,
            len_bytes: 0,
        },
    )
    .unwrap();
    p.a.post_send(A_QPN, wr(1, WrOp::WriteImm(42), 2048))
        .unwrap();
    p.drive(1_000_000);
    let ops: Vec<Opcode> = p.sent(Dir::AtoB).map(|s| s.repr.bth.opcode).collect();
    assert_eq!(ops, vec![Opcode::RcWriteFirst, Opcode::RcWriteLastImm]);
    let r = p.b_completions();
    assert_eq!(
        (r[0].wr_id, r[0].op, r[0].imm, r[0].byte_len),
        (9, CompletionOp::RecvWriteImm, Some(42), 2048)
    );
    assert_eq!(p.a_completions()[0].op, CompletionOp::Write);
}

#[test]
fn packets_of_another_partition_are_dropped() {
    let (a, b) = rnics(
        RnicConfig {
            dcqcn: None,
            ..RnicConfig::default()
        },
        QpConfig {
            pkey: 0x8001,
            timeout: 8,
            retry_cnt: 0,
            ..a_qp(100, Some(1))
        },
        QpConfig {
            pkey: 0x8002,
            ..b_qp()
        },
    );
    let mut p = Pair::new(a, b);
    p.drive(100_000_000);
    assert_eq!(p.sent(Dir::AtoB).next().unwrap().repr.bth.pkey, 0x8001);
    assert_eq!(p.b.qp_stats(B_QPN).unwrap().pkey_violations, 1);
    assert_eq!(p.sent(Dir::BtoA).count(), 0);
    assert_eq!(
        p.a.qp_state(A_QPN),
        Some(QpState::Error(WcStatus::RetryExceeded))
    );
    // A limited member (0x0001) still talks to the full member (0x8001).
    assert!(pkey_match(0x0001, 0x8001));
    assert!(!pkey_match(0x0001, 0x0001));
}

// ------------------------------------------------------------ requester

#[test]
fn go_back_n_resends_from_the_naked_psn() {
    let (a, b) = pair(8 * 1024, Some(1));
    let mut p = Pair::new(a, b);
    p.fault = drop_psns(&[102]);
    p.drive(10_000_000);
    assert_eq!(
        p.a_psns(),
        vec![
            100, 101, 102, 103, 104, 105, 106, 107, 102, 103, 104, 105, 106, 107
        ],
        "everything from the NAKed PSN again, nothing before it"
    );
    let s = p.a.qp_stats(A_QPN).unwrap();
    assert_eq!((s.packet_seq_err, s.retx_packets, s.tx_messages), (1, 6, 1));
    assert_eq!(s.retx_bytes, 6 * 1024);
    assert_eq!(s.tx_payload_bytes, 8 * 1024, "first transmissions only");
    assert_eq!(p.a.counters().packet_seq_err, 1);
    assert_eq!(
        s.local_ack_timeout_err, 0,
        "the NAK, not the timer, recovered"
    );
}

#[test]
fn a_lost_tail_is_recovered_by_the_retransmission_timer() {
    let (a, b) = rnics(
        RnicConfig {
            dcqcn: None,
            ..RnicConfig::default()
        },
        QpConfig {
            timeout: 10, // 4.194 ms
            ..a_qp(2048, Some(1))
        },
        b_qp(),
    );
    let mut p = Pair::new(a, b);
    p.fault = drop_psns(&[101]);
    p.drive(100_000_000);
    let sends: Vec<(u32, u64)> = p
        .sent(Dir::AtoB)
        .map(|s| (s.repr.bth.psn, s.at_ns))
        .collect();
    // 100 arrived but was not acknowledged (no AckReq, no coalescing
    // threshold), so the timer goes back to it: the oldest unacknowledged PSN.
    assert_eq!(
        sends.iter().map(|s| s.0).collect::<Vec<_>>(),
        vec![100, 101, 100, 101]
    );
    assert_eq!(
        sends[2].1 - sends[0].1,
        4_096 << 10,
        "4.096 µs × 2^10 after the first unacknowledged packet"
    );
    let s_b = p.b.qp_stats(B_QPN).unwrap();
    assert_eq!((s_b.duplicate_request, s_b.rx_messages), (1, 1));
    let s = p.a.qp_stats(A_QPN).unwrap();
    assert_eq!((s.local_ack_timeout_err, s.tx_messages), (1, 1));
}

#[test]
fn retry_count_exhaustion_puts_the_qp_in_error_with_transport_retry_counter_exceeded() {
    let (a, b) = rnics(
        RnicConfig {
            dcqcn: None,
            ..RnicConfig::default()
        },
        QpConfig {
            timeout: 8,
            retry_cnt: 3,
            ..a_qp(0, None)
        },
        b_qp(),
    );
    let mut p = Pair::new(a, b);
    p.fault = Box::new(|s| {
        if s.dir == Dir::AtoB {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    for i in 0..3 {
        p.a.post_send(A_QPN, wr(i, WrOp::Write, 100)).unwrap();
    }
    p.drive(1_000_000_000);
    let s = p.a.qp_stats(A_QPN).unwrap();
    assert_eq!(s.local_ack_timeout_err, 4, "the first expiry and 3 retries");
    assert_eq!(s.req_transport_retries_exceeded, 1);
    let c = p.a_completions();
    assert_eq!(c.len(), 3);
    assert_eq!((c[0].wr_id, c[0].status), (0, WcStatus::RetryExceeded));
    assert_eq!(c[0].status.to_string(), "transport retry counter exceeded");
    assert!(c[1..].iter().all(|c| c.status == WcStatus::WrFlushError));
    assert!(p.a_events.contains(&RnicEvent::QpError {
        qpn: A_QPN,
        status: WcStatus::RetryExceeded
    }));
    assert_eq!(
        p.a.post_send(A_QPN, wr(9, WrOp::Write, 1)),
        Err(PostError::QpInError)
    );
    assert!(p.a.is_idle());
    assert_eq!(p.a.counters().req_transport_retries_exceeded, 1);
}

#[test]
fn repeated_naks_without_an_ack_in_between_also_exhaust_the_retries() {
    // Pass k of go-back-N loses PSN 101+k: each pass delivers one more
    // packet in order and draws a fresh NAK (the gap moved), but the
    // message's last packet never arrives in order, so no ACK restores the
    // retry budget and every NAK costs a retry.
    let (a, b) = rnics(
        RnicConfig {
            dcqcn: None,
            ..RnicConfig::default()
        },
        QpConfig {
            retry_cnt: 7,
            ..a_qp(32 * 1024, Some(1))
        },
        b_qp(),
    );
    let mut p = Pair::new(a, b);
    let mut sent_before = std::collections::HashMap::<u32, u32>::new();
    p.fault = Box::new(move |s| {
        if s.dir == Dir::BtoA {
            return Fate::Deliver;
        }
        let psn = s.repr.bth.psn;
        let k = sent_before.entry(psn).or_insert(0);
        let pass = *k;
        *k += 1;
        if psn >= 101 && psn - 101 == pass {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.drive(1_000_000_000);
    let s = p.a.qp_stats(A_QPN).unwrap();
    assert_eq!(s.packet_seq_err, 8, "the first NAK and 7 retries");
    assert_eq!(s.req_transport_retries_exceeded, 1);
    assert_eq!(
        p.a.qp_state(A_QPN),
        Some(QpState::Error(WcStatus::RetryExceeded))
    );
}

#[test]
fn psns_wrap_at_2_pow_24() {
    let start = 0xFF_FFFD;
    let (a, b) = rnics(
        RnicConfig {
            dcqcn: None,
            ..RnicConfig::default()
        },
        QpConfig {
            initial_psn: start,
            ..a_qp(6 * 1024, Some(2))
        },
        QpConfig {
            expected_psn: start,
            ..b_qp()
        },
    );
    let mut p = Pair::new(a, b);
    p.fault = drop_psns(&[0xFF_FFFF]);
    p.drive(10_000_000);
    // Both messages (12 packets) are on the wire before the NAK for
    // 0xFFFFFF is back; go-back-N resends from it, across the wrap.
    let first: Vec<u32> = (0..12).map(|i| (start + i) & 0xFF_FFFF).collect();
    let again: Vec<u32> = (2..12).map(|i| (start + i) & 0xFF_FFFF).collect();
    assert_eq!(p.a_psns(), [first, again].concat());
    let nak: Vec<u32> = p
        .sent(Dir::BtoA)
        .filter(|s| matches!(s.repr.ext, RoceExt::Aeth(a) if a.syndrome >> 5 == 0b011))
        .map(|s| s.repr.bth.psn)
        .collect();
    assert_eq!(nak, vec![0xFF_FFFF]);
    let s = p.b.qp_stats(B_QPN).unwrap();
    assert_eq!((s.rx_messages, s.rx_payload_bytes), (2, 12 * 1024));
    assert_eq!((s.psn_gaps, s.psn_lost), (1, 1));
    let last_ack = p
        .sent(Dir::BtoA)
        .filter(|s| s.repr.bth.opcode == Opcode::RcAcknowledge)
        .last()
        .map(|s| s.repr.bth.psn);
    assert_eq!(
        last_ack,
        Some(8),
        "the ACK of the last packet, after the wrap"
    );
    let sa = p.a.qp_stats(A_QPN).unwrap();
    assert_eq!((sa.tx_messages, sa.packet_seq_err), (2, 1));
    assert!(p.a.is_idle());
}

#[test]
fn the_outstanding_window_bounds_messages_in_flight() {
    let (a, b) = rnics(
        RnicConfig {
            dcqcn: None,
            ..RnicConfig::default()
        },
        QpConfig {
            max_send_wr: 3,
            timeout: 0, // no timer: only ACKs move the window
            ..a_qp(1024, Some(10))
        },
        b_qp(),
    );
    let mut p = Pair::new(a, b);
    p.fault = Box::new(|s| {
        if s.dir == Dir::BtoA {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.drive(10_000_000);
    assert_eq!(
        p.a_psns(),
        vec![100, 101, 102],
        "three in flight, then wait"
    );
    p.fault = Box::new(|_| Fate::Deliver);
    // A duplicate of the last one draws a fresh ACK and the window moves.
    let mut buf = vec![];
    for s in p.log.iter().filter(|s| s.dir == Dir::AtoB).take(1) {
        let mut b = [0u8; 2048];
        let n = s.repr.emit(&mut b, &[]).unwrap();
        buf = b[..n].to_vec();
    }
    p.b.handle_frame(t_(p.now), &buf).unwrap();
    p.drive(20_000_000);
    assert_eq!(p.a.qp_stats(A_QPN).unwrap().tx_messages, 10);
}

// ------------------------------------------------------------ READ

#[test]
fn read_responses_are_segmented_first_middle_last_with_aeth_on_first_and_last() {
    let (a, b) = pair(0, None);
    let mut p = Pair::new(a, b);
    p.a.post_send(A_QPN, wr(1, WrOp::Read, 2500)).unwrap();
    p.a.post_send(A_QPN, wr(2, WrOp::Read, 100)).unwrap();
    p.a.post_send(A_QPN, wr(3, WrOp::Write, 10)).unwrap();
    p.drive(1_000_000);
    let req: Vec<(Opcode, u32, Option<u32>)> = p
        .sent(Dir::AtoB)
        .map(|s| {
            let len = match s.repr.ext {
                RoceExt::Reth(r) => Some(r.dma_len),
                _ => None,
            };
            (s.repr.bth.opcode, s.repr.bth.psn, len)
        })
        .collect();
    use Opcode::*;
    assert_eq!(
        req,
        vec![
            (RcReadRequest, 100, Some(2500)),
            (RcReadRequest, 103, Some(100)),
            (RcWriteOnly, 104, Some(10)),
        ],
        "a READ of three packets consumes three PSNs"
    );
    let resp: Vec<(Opcode, u32, usize, bool)> = p
        .sent(Dir::BtoA)
        .map(|s| {
            (
                s.repr.bth.opcode,
                s.repr.bth.psn,
                s.repr.payload_len,
                matches!(s.repr.ext, RoceExt::Aeth(_)),
            )
        })
        .collect();
    assert_eq!(
        resp,
        vec![
            (RcReadResponseFirst, 100, 1024, true),
            (RcReadResponseMiddle, 101, 1024, false),
            (RcReadResponseLast, 102, 452, true),
            (RcReadResponseOnly, 103, 100, true),
            (RcAcknowledge, 104, 0, true),
        ],
        "the ACK of the WRITE waits for the READ responses"
    );
    let c = p.a_completions();
    assert_eq!(
        c.iter()
            .map(|c| (c.wr_id, c.op, c.byte_len))
            .collect::<Vec<_>>(),
        vec![
            (1, CompletionOp::Read, 2500),
            (2, CompletionOp::Read, 100),
            (3, CompletionOp::Write, 10)
        ]
    );
    assert_eq!(p.a.qp_stats(A_QPN).unwrap().rx_payload_bytes, 2600);
    assert_eq!(p.b.counters().rx_read_requests, 2);
}

#[test]
fn a_lost_read_response_is_asked_for_again_from_its_psn() {
    let (a, b) = pair(0, None);
    let mut p = Pair::new(a, b);
    let mut lost = false;
    p.fault = Box::new(move |s| {
        if s.dir == Dir::BtoA && s.repr.bth.psn == 101 && !lost {
            lost = true;
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.a.post_send(A_QPN, wr(1, WrOp::Read, 3000)).unwrap();
    p.drive(10_000_000);
    let reqs: Vec<(u32, u64, u32)> = p
        .sent(Dir::AtoB)
        .filter_map(|s| match s.repr.ext {
            RoceExt::Reth(r) => Some((s.repr.bth.psn, r.virtual_addr, r.dma_len)),
            _ => None,
        })
        .collect();
    let base = verbs::DEFAULT_MR_ADDR;
    assert_eq!(
        reqs,
        vec![(100, base, 3000), (101, base + 1024, 3000 - 1024)],
        "the READ again, from the missing response on"
    );
    let c = p.a_completions();
    assert_eq!(
        (c.len(), c[0].status, c[0].byte_len),
        (1, WcStatus::Success, 3000)
    );
    assert_eq!(p.a.qp_stats(A_QPN).unwrap().rx_payload_bytes, 3000);
    assert_eq!(p.a.counters().implied_nak_seq_err, 1);
    assert_eq!(p.b.counters().duplicate_request, 1, "PSN 101 was behind");
}

#[test]
fn outstanding_reads_are_bounded_by_max_rd_atomic() {
    let (a, b) = rnics(
        RnicConfig {
            dcqcn: None,
            ..RnicConfig::default()
        },
        QpConfig {
            max_rd_atomic: 2,
            ..a_qp(0, None)
        },
        b_qp(),
    );
    let mut p = Pair::new(a, b);
    p.fault = Box::new(|s| {
        if s.dir == Dir::BtoA {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    for i in 0..4 {
        p.a.post_send(A_QPN, wr(i, WrOp::Read, 64)).unwrap();
    }
    p.drive(1_000);
    assert_eq!(p.a_psns(), vec![100, 101], "two READs in flight");
    p.fault = Box::new(|_| Fate::Deliver);
    p.drive(1_000_000_000);
    assert_eq!(p.a_completions().len(), 4);
}
