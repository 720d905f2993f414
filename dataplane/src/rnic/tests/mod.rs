//! Unit tests of the RNIC model, grouped by concern: [`stream`] (the
//! built-in workload, pacing, CNPs, PFC), [`rc`] (the RC rules of IBTA ch. 9
//! one by one), [`lossy`] (a property test over a link that drops,
//! duplicates and reorders). [`Pair`] couples two RNICs over a link with a
//! latency and a fault hook, on an explicit clock, like quinn's test `Pair`.

mod lossy;
mod rc;
mod stream;

use super::*;
use crate::time::Instant as I;
use crate::wire::ib::AethSyndrome;
use verbs::CompletionOp;

pub(super) const A_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
pub(super) const B_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
pub(super) const A_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
pub(super) const B_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];
pub(super) const A_QPN: u32 = 0x11;
pub(super) const B_QPN: u32 = 0x22;

pub(super) fn t_(ns: u64) -> I {
    I::from_nanos(ns)
}

/// Two RNICs, A (requester) and B (responder), with one QP each: A's QP
/// starts at PSN 100 and runs `a_qp`'s workload.
pub(super) fn rnics(cfg: RnicConfig, a_qp: QpConfig, b_qp: QpConfig) -> (Rnic, Rnic) {
    let mut a = Rnic::new(RnicConfig {
        mac: A_MAC,
        ip: A_IP,
        ..cfg.clone()
    });
    let mut b = Rnic::new(RnicConfig {
        mac: B_MAC,
        ip: B_IP,
        ..cfg
    });
    a.add_qp(QpConfig {
        local_qpn: A_QPN,
        remote_qpn: B_QPN,
        remote_ip: B_IP,
        remote_mac: B_MAC,
        ..a_qp
    })
    .unwrap();
    b.add_qp(QpConfig {
        local_qpn: B_QPN,
        remote_qpn: A_QPN,
        remote_ip: A_IP,
        remote_mac: A_MAC,
        ..b_qp
    })
    .unwrap();
    (a, b)
}

/// A's QP config: PSN 100, `message_bytes` × `messages` of the built-in workload.
pub(super) fn a_qp(message_bytes: u64, messages: Option<u64>) -> QpConfig {
    QpConfig {
        message_bytes,
        messages,
        initial_psn: 100,
        ..QpConfig::default()
    }
}

/// B's QP config: expects PSN 100, no workload.
pub(super) fn b_qp() -> QpConfig {
    QpConfig {
        expected_psn: 100,
        ..QpConfig::default()
    }
}

/// The usual pair: DCQCN off, 100 Gb/s, MTU 1024.
pub(super) fn pair(message_bytes: u64, messages: Option<u64>) -> (Rnic, Rnic) {
    rnics(
        RnicConfig {
            dcqcn: None,
            ..RnicConfig::default()
        },
        a_qp(message_bytes, messages),
        b_qp(),
    )
}

pub(super) fn next_frame(r: &mut Rnic, now: u64) -> Option<Vec<u8>> {
    let mut buf = [0u8; 9300];
    r.poll_transmit(t_(now), &mut buf)
        .map(|t| buf[..t.written_len].to_vec())
}

pub(super) fn parse(f: &[u8]) -> RoceFrameRepr {
    let p = RoceFrameRepr::parse(f).unwrap();
    assert_eq!(p.icrc_ok, Some(true));
    p.repr
}

/// The AETH class of an ACKNOWLEDGE frame.
pub(super) fn aeth_kind(f: &[u8]) -> AethSyndrome {
    match parse(f).ext {
        RoceExt::Aeth(a) => a.kind(),
        e => panic!("no AETH: {e:?}"),
    }
}

/// Which way a frame goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dir {
    AtoB,
    BtoA,
}

/// What the link does with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
    Deliver,
    Drop,
    Duplicate,
    /// Deliver this much later than the latency (reordering).
    Delay(u64),
}

/// A frame as it crossed the link.
#[derive(Debug, Clone)]
pub(super) struct Seen {
    pub(super) at_ns: u64,
    pub(super) dir: Dir,
    pub(super) repr: RoceFrameRepr,
    pub(super) fate: Fate,
}

/// Two RNICs over a link (see the module doc).
pub(super) struct Pair {
    pub(super) a: Rnic,
    pub(super) b: Rnic,
    pub(super) now: u64,
    pub(super) latency_ns: u64,
    in_flight: Vec<(u64, u64, Dir, Vec<u8>)>,
    seq: u64,
    pub(super) fault: Box<dyn FnMut(&Seen) -> Fate>,
    /// Every frame sent, in order.
    pub(super) log: Vec<Seen>,
    pub(super) a_events: Vec<RnicEvent>,
    pub(super) b_events: Vec<RnicEvent>,
}

impl Pair {
    pub(super) fn new(a: Rnic, b: Rnic) -> Self {
        Pair {
            a,
            b,
            now: 0,
            latency_ns: 1_000,
            in_flight: Vec::new(),
            seq: 0,
            fault: Box::new(|_| Fate::Deliver),
            log: Vec::new(),
            a_events: Vec::new(),
            b_events: Vec::new(),
        }
    }

    fn send_all(&mut self) {
        for dir in [Dir::AtoB, Dir::BtoA] {
            loop {
                let r = match dir {
                    Dir::AtoB => &mut self.a,
                    Dir::BtoA => &mut self.b,
                };
                let Some(f) = next_frame(r, self.now) else {
                    break;
                };
                let mut seen = Seen {
                    at_ns: self.now,
                    dir,
                    repr: parse(&f),
                    fate: Fate::Deliver,
                };
                seen.fate = (self.fault)(&seen);
                let at = self.now + self.latency_ns;
                match seen.fate {
                    Fate::Deliver => self.push(at, dir, f),
                    Fate::Drop => {}
                    Fate::Duplicate => {
                        self.push(at, dir, f.clone());
                        self.push(at + 1, dir, f);
                    }
                    Fate::Delay(d) => self.push(at + d, dir, f),
                }
                self.log.push(seen);
            }
        }
        self.a_events
            .extend(std::iter::from_fn(|| self.a.poll_event()));
        self.b_events
            .extend(std::iter::from_fn(|| self.b.poll_event()));
    }

    fn push(&mut self, at: u64, dir: Dir, f: Vec<u8>) {
        self.seq += 1;
        self.in_flight.push((at, self.seq, dir, f));
    }

    /// Advances to the next event (a delivery or a deadline); false if none.
    pub(super) fn step(&mut self) -> bool {
        self.send_all();
        let deadline = [
            self.a.poll_timeout(t_(self.now)),
            self.b.poll_timeout(t_(self.now)),
        ]
        .into_iter()
        .flatten()
        .map(I::as_nanos)
        .chain(self.in_flight.iter().map(|f| f.0))
        .min();
        let Some(t) = deadline else {
            return false;
        };
        self.now = self.now.max(t);
        // Deliver everything due, in (time, send order).
        self.in_flight.sort_by_key(|f| (f.0, f.1));
        while self.in_flight.first().is_some_and(|f| f.0 <= self.now) {
            let (_, _, dir, f) = self.in_flight.remove(0);
            let to = match dir {
                Dir::AtoB => &mut self.b,
                Dir::BtoA => &mut self.a,
            };
            to.handle_frame(t_(self.now), &f).unwrap();
        }
        for r in [&mut self.a, &mut self.b] {
            if r.poll_timeout(t_(self.now))
                .is_some_and(|t| t.as_nanos() <= self.now)
            {
                r.handle_timeout(t_(self.now));
            }
        }
        true
    }

    /// Steps until nothing is pending or `limit_ns` of simulated time passed.
    pub(super) fn drive(&mut self, limit_ns: u64) {
        while self.now <= limit_ns && self.step() {}
        self.send_all();
    }

    /// Frames sent in direction `dir`.
    pub(super) fn sent(&self, dir: Dir) -> impl Iterator<Item = &Seen> {
        self.log.iter().filter(move |s| s.dir == dir)
    }

    /// Requester data PSNs A sent, in order.
    pub(super) fn a_psns(&self) -> Vec<u32> {
        self.sent(Dir::AtoB)
            .filter(|s| s.repr.bth.opcode.is_rc_request())
            .map(|s| s.repr.bth.psn)
            .collect()
    }

    /// Completions A (requester) reported.
    pub(super) fn a_completions(&self) -> Vec<Completion> {
        completions(&self.a_events)
    }

    /// Completions B (responder) reported.
    pub(super) fn b_completions(&self) -> Vec<Completion> {
        completions(&self.b_events)
    }
}

pub(super) fn completions(ev: &[RnicEvent]) -> Vec<Completion> {
    ev.iter()
        .filter_map(|e| match e {
            RnicEvent::Completion(c) => Some(*c),
            _ => None,
        })
        .collect()
}

/// A signaled work request.
pub(super) fn wr(wr_id: u64, op: WrOp, len_bytes: u32) -> SendWr {
    SendWr {
        wr_id,
        op,
        len_bytes,
        remote: RemoteBuf {
            addr: verbs::DEFAULT_MR_ADDR,
            rkey: verbs::DEFAULT_RKEY,
        },
        signaled: true,
    }
}
