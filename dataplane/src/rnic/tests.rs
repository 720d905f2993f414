//! Unit tests of the RNIC model, grouped by concern.

use super::*;
use crate::time::Instant as I;

fn t_(ns: u64) -> I {
    I::from_nanos(ns)
}
use crate::wire::ip::Ipv4Packet;
use crate::wire::roce::ETHERNET_HEADER_LEN;

const A_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const B_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const A_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const B_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

fn pair(message_bytes: u64, messages: Option<u64>) -> (Rnic, Rnic) {
    let mut a = Rnic::new(RnicConfig {
        mac: A_MAC,
        ip: A_IP,
        ..RnicConfig::default()
    });
    let mut b = Rnic::new(RnicConfig {
        mac: B_MAC,
        ip: B_IP,
        ..RnicConfig::default()
    });
    a.add_qp(QpConfig {
        local_qpn: 0x11,
        remote_qpn: 0x22,
        remote_ip: B_IP,
        remote_mac: B_MAC,
        message_bytes,
        messages,
        initial_psn: 100,
        expected_psn: 0,
    })
    .unwrap();
    b.add_qp(QpConfig {
        local_qpn: 0x22,
        remote_qpn: 0x11,
        remote_ip: A_IP,
        remote_mac: A_MAC,
        message_bytes: 0,
        messages: None,
        initial_psn: 0,
        expected_psn: 100,
    })
    .unwrap();
    (a, b)
}

fn next_frame(r: &mut Rnic, now: u64) -> Option<Vec<u8>> {
    let mut buf = [0u8; 2048];
    r.poll_transmit(t_(now), &mut buf)
        .map(|t| buf[..t.written_len].to_vec())
}

fn set_ce(frame: &mut [u8]) {
    let mut ip = Ipv4Packet::new_unchecked(&mut frame[ETHERNET_HEADER_LEN..]);
    assert!(ip.mark_ce());
}

// ------------------------------------------------------------ sender

#[test]
fn write_stream_segments_messages_with_consecutive_psns() {
    let (mut a, mut b) = pair(2500, Some(2));
    let mut ops = vec![];
    let mut t = 0;
    while let Some(f) = next_frame(&mut a, t) {
        let p = RoceFrameRepr::parse(&f).unwrap();
        assert_eq!(p.icrc_ok, Some(true));
        assert_eq!(p.repr.ip.dscp, 26);
        assert_eq!(p.repr.ip.ecn, Ecn::Ect0);
        assert_eq!(p.repr.udp_src_port, 0xC242);
        ops.push((p.repr.bth.opcode, p.repr.bth.psn, p.repr.payload_len));
        b.handle_frame(t_(t), &f).unwrap();
        t = a.poll_timeout(t_(t)).map(I::as_nanos).unwrap_or(t);
    }
    use Opcode::*;
    assert_eq!(
        ops,
        vec![
            (RcWriteFirst, 100, 1024),
            (RcWriteMiddle, 101, 1024),
            (RcWriteLast, 102, 452),
            (RcWriteFirst, 103, 1024),
            (RcWriteMiddle, 104, 1024),
            (RcWriteLast, 105, 452),
        ]
    );
    let s = b.qp_stats(0x22).unwrap();
    assert_eq!(
        (s.rx_messages, s.rx_payload_bytes, s.psn_gaps),
        (2, 5000, 0)
    );
    assert_eq!(a.qp_stats(0x11).unwrap().tx_messages, 2);
    assert!(a.is_idle());
    let ev: Vec<_> = std::iter::from_fn(|| a.poll_event()).collect();
    assert_eq!(ev.len(), 2);
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
fn cnp_halves_the_pacing_rate() {
    let (mut a, mut b) = pair(1024, None);
    let mut f = next_frame(&mut a, 0).unwrap();
    set_ce(&mut f);
    b.handle_frame(t_(0), &f).unwrap();
    let cnp = next_frame(&mut b, 0).unwrap();
    a.handle_frame(t_(0), &cnp).unwrap();
    assert_eq!(a.qp_stats(0x11).unwrap().rate_bps, 50_000_000_000);
    let t1 = a.poll_timeout(t_(0)).map(I::as_nanos).unwrap();
    let _ = next_frame(&mut a, t1).unwrap();
    let t2 = a.poll_timeout(t_(t1)).map(I::as_nanos).unwrap();
    let expect = ((f.len() + WIRE_OVERHEAD_BYTES) * 8) as u64 / 50;
    assert!((t2 - t1).abs_diff(expect) <= 1);
}

// ------------------------------------------------------------ receiver

#[test]
fn psn_gap_is_counted() {
    let (mut a, mut b) = pair(1024, Some(5));
    let mut t = 0;
    let mut i = 0;
    while let Some(f) = next_frame(&mut a, t) {
        if i != 2 {
            b.handle_frame(t_(t), &f).unwrap();
        }
        i += 1;
        t = a.poll_timeout(t_(t)).map(I::as_nanos).unwrap_or(t);
    }
    let s = b.qp_stats(0x22).unwrap();
    assert_eq!((s.psn_gaps, s.psn_lost, s.rx_packets), (1, 1, 4));
    assert_eq!(
        b.poll_event(),
        Some(RnicEvent::MessageReceived {
            qpn: 0x22,
            count: 1
        })
    );
    assert_eq!(
        b.poll_event(),
        Some(RnicEvent::MessageReceived {
            qpn: 0x22,
            count: 2
        })
    );
    assert_eq!(
        b.poll_event(),
        Some(RnicEvent::PsnGap {
            qpn: 0x22,
            expected: 102,
            got: 103
        })
    );
}

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
            let p = RoceFrameRepr::parse(&c).unwrap();
            assert_eq!(p.repr.bth.opcode, Opcode::Cnp);
            assert!(p.repr.bth.becn);
            assert_eq!(p.repr.bth.dest_qp, 0x11);
            assert_eq!(p.repr.ip.dscp, 48);
            assert_eq!(p.icrc_ok, Some(true));
            cnp_times.push(t);
        }
    }
    assert_eq!(cnp_times, vec![0, 50_000, 100_000]);
    assert_eq!(b.qp_stats(0x22).unwrap().cnp_tx, 3);
}

#[test]
fn coarse_acks() {
    let (mut a, mut b) = pair(1024, Some(4));
    b.cfg.ack_every_packets = 2;
    let mut t = 0;
    while let Some(f) = next_frame(&mut a, t) {
        b.handle_frame(t_(t), &f).unwrap();
        while let Some(ack) = next_frame(&mut b, t) {
            a.handle_frame(t_(t), &ack).unwrap();
        }
        t = a.poll_timeout(t_(t)).map(I::as_nanos).unwrap_or(t);
    }
    assert_eq!(a.qp_stats(0x11).unwrap().ack_rx, 2);
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
    f[ETHERNET_HEADER_LEN + 20 + 8 + 7] = 0x99;
    assert!(matches!(
        b.handle_frame(t_(0), &f[..80]),
        Err(RnicError::UnknownQp(_))
    ));
    assert_eq!(b.stats().rx_errors, 3);
    assert_eq!(
        a.add_qp(QpConfig {
            local_qpn: 0x11,
            remote_qpn: 1,
            remote_ip: B_IP,
            remote_mac: B_MAC,
            message_bytes: 0,
            messages: None,
            initial_psn: 0,
            expected_psn: 0
        }),
        Err(AddQpError::Duplicate(0x11))
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
fn pause_on_data_priority_does_not_block_cnps() {
    let (mut a, mut b) = pair(1024, None);
    let mut f = next_frame(&mut a, 0).unwrap();
    set_ce(&mut f);
    let mut q = PfcRepr::default();
    q.set(3, 0xFFFF);
    b.handle_pfc(t_(0), &q);
    b.handle_frame(t_(0), &f).unwrap();
    let cnp = next_frame(&mut b, 0).expect("CNP on priority 6 still flows");
    assert_eq!(
        RoceFrameRepr::parse(&cnp).unwrap().repr.bth.opcode,
        Opcode::Cnp
    );
    // And a pause on priority 6 does block it.
    let (mut a, mut b) = pair(1024, None);
    let mut f = next_frame(&mut a, 0).unwrap();
    set_ce(&mut f);
    let mut q = PfcRepr::default();
    q.set(6, 0xFFFF);
    b.handle_pfc(t_(0), &q);
    b.handle_frame(t_(0), &f).unwrap();
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
    assert_eq!(b.qp_stats(0x22).unwrap().rx_payload_bytes, 1024);
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
    assert_eq!(b.qp_stats(0x22).unwrap().cnp_tx, 1);
    assert_eq!(a.qp_stats(0x11).unwrap().tx_packets, 1);
    let f2 = next_frame(&mut a, 1_000).unwrap();
    assert_eq!(RoceFrameRepr::parse(&f2).unwrap().repr.bth.psn, 101);
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
