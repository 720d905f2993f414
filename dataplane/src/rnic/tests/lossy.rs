//! Property: over a link that drops, duplicates and reorders at random,
//! every message completes exactly once and in order at both ends, or the
//! QP reports "transport retry counter exceeded".

use super::*;

/// xorshift64*: a tiny seeded generator for the link's coin flips.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn chance(&mut self, per_mille: u64) -> bool {
        self.next() % 1000 < per_mille
    }
}

fn op_of(k: u64, i: u64) -> WrOp {
    match (k >> (2 * (i % 16))) & 3 {
        0 => WrOp::Write,
        1 => WrOp::SendImm(i as u32),
        2 => WrOp::Read,
        _ => WrOp::WriteImm(i as u32),
    }
}

fn run(seed: u64, drop: u64, dup: u64, reorder: u64, ops: u64, messages: u64, psn: u32) {
    let (a, b) = rnics(
        RnicConfig {
            dcqcn: None,
            mtu_bytes: 512,
            ..RnicConfig::default()
        },
        QpConfig {
            timeout: 6, // 262 µs
            initial_psn: psn,
            max_send_wr: 16,
            ..a_qp(0, None)
        },
        QpConfig {
            expected_psn: psn,
            auto_recv: false,
            ..b_qp()
        },
    );
    let mut p = Pair::new(a, b);
    let mut rng = Rng(seed | 1);
    p.fault = Box::new(move |_| {
        if rng.chance(drop) {
            Fate::Drop
        } else if rng.chance(dup) {
            Fate::Duplicate
        } else if rng.chance(reorder) {
            Fate::Delay(rng.next() % 5_000)
        } else {
            Fate::Deliver
        }
    });
    let mut posted = 0;
    let mut recvs = 0;
    let mut want_recv = Vec::new();
    let mut rng2 = Rng(seed.rotate_left(17) | 1);
    while p.now < 5_000_000_000 {
        while posted < messages {
            let op = op_of(ops, posted);
            let len = (rng2.next() % 3000) as u32;
            if p.a.post_send(A_QPN, wr(posted, op, len)).is_err() {
                break;
            }
            if matches!(op, WrOp::SendImm(_) | WrOp::WriteImm(_)) {
                p.b.post_recv(
                    B_QPN,
                    RecvWr {
                        wr_id: recvs,
                        len_bytes: 4096,
                    },
                )
                .unwrap();
                want_recv.push((recvs, posted as u32, u64::from(len)));
                recvs += 1;
            }
            posted += 1;
        }
        if !p.step() {
            break;
        }
    }
    p.drive(p.now + 1_000_000_000);
    let a_done = p.a_completions();
    let failed = p.a_events.iter().any(|e| {
        matches!(
            e,
            RnicEvent::QpError {
                status: WcStatus::RetryExceeded,
                ..
            }
        )
    });
    // Requester: successes are 0, 1, 2, ... in order, each once; then, only
    // if the QP failed, one RetryExceeded and flushes.
    let ok: Vec<u64> = a_done
        .iter()
        .take_while(|c| c.status == WcStatus::Success)
        .map(|c| c.wr_id)
        .collect();
    assert_eq!(
        ok,
        (0..ok.len() as u64).collect::<Vec<_>>(),
        "in order, once"
    );
    if failed {
        let rest = &a_done[ok.len()..];
        assert_eq!(rest[0].status, WcStatus::RetryExceeded);
        assert!(rest[1..].iter().all(|c| c.status == WcStatus::WrFlushError));
    } else {
        assert_eq!(
            ok.len() as u64,
            messages,
            "all complete: {:?}",
            p.a.qp_stats(A_QPN)
        );
        assert_eq!(a_done.len() as u64, messages);
    }
    // Responder: every receive completes once, in order, with its message's
    // immediate and length.
    let got: Vec<(u64, u32, u64)> = p
        .b_completions()
        .iter()
        .filter(|c| c.status == WcStatus::Success)
        .map(|c| (c.wr_id, c.imm.unwrap(), c.byte_len))
        .collect();
    assert_eq!(&got[..], &want_recv[..got.len()]);
    let acked_recvs = want_recv
        .iter()
        .filter(|(_, i, _)| u64::from(*i) < ok.len() as u64)
        .count();
    assert!(got.len() >= acked_recvs, "a completed SEND was received");
    if !failed {
        assert_eq!(got.len(), want_recv.len());
    }
}

#[test]
fn a_clean_link_completes_everything() {
    run(1, 0, 0, 0, 0x1B1B_1B1B, 40, 0);
}

#[test]
fn heavy_loss_fails_with_retry_exceeded_not_silently() {
    let (a, b) = pair(0, None);
    let mut p = Pair::new(a, b);
    p.a.post_send(A_QPN, wr(0, WrOp::Write, 100)).unwrap();
    p.fault = Box::new(|_| Fate::Drop);
    p.drive(10_000_000_000);
    assert_eq!(p.a_completions()[0].status, WcStatus::RetryExceeded);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]
    #[test]
    fn every_message_completes_once_in_order_or_the_qp_fails(
        seed in proptest::prelude::any::<u64>(),
        drop in 0u64..150,
        dup in 0u64..100,
        reorder in 0u64..100,
        ops in proptest::prelude::any::<u64>(),
        messages in 1u64..40,
        near_wrap in proptest::prelude::any::<bool>(),
    ) {
        let psn = if near_wrap { 0xFF_FFF0 } else { 1000 };
        run(seed, drop, dup, reorder, ops, messages, psn);
    }
}
