//! Agent tests over in-memory ports: client → server delivery, PFC
//! honouring, CNPs for CE marks. Real time, short runs, generous bounds.

use super::*;
use crate::port::MemoryPort;
use dataplane::wire::ethernet::EthernetAddress;
use dataplane::wire::pfc::emit_frame;
use std::sync::Arc;
use workload::LatencySummary;

const C_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0xc];
const S_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x5];
const C_IP: Ipv4Addr = Ipv4Addr::new(10, 9, 0, 1);
const S_IP: Ipv4Addr = Ipv4Addr::new(10, 9, 0, 2);

fn cfg(mac: [u8; 6], ip: Ipv4Addr, rate_bps: u64) -> RnicConfig {
    RnicConfig {
        mac,
        ip,
        line_rate_bps: rate_bps,
        dcqcn: None,
        ..RnicConfig::default()
    }
}

fn client_role(qps: u32, messages: Option<u64>) -> Role {
    Role::Client {
        test: PerfTest::WriteBw,
        qps,
        dst_ip: S_IP,
        dst_mac: S_MAC,
        message_bytes: 4096,
        messages,
        first_qp: 0,
        qp_timeout: 14,
    }
}

fn pfc_frame(priority: u8, quanta: u16) -> FrameBuf {
    let mut b = FrameBuf::default();
    let n = emit_frame(
        EthernetAddress([2, 0, 0, 0, 0, 0xee]),
        &MacControlRepr::Pfc(PfcRepr::xoff(1 << priority, quanta)),
        b.space_mut(),
    )
    .unwrap();
    b.set_len(n);
    b
}

#[test]
fn every_message_arrives_psn_complete_on_learned_qps() {
    let (cp, sp) = MemoryPort::pair("client", "server");
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let server = std::thread::spawn(move || {
        let mut s = Agent::new(sp, cfg(S_MAC, S_IP, 1_000_000_000), Role::Server).unwrap();
        let r = s
            .run(Some(Duration::from_secs(10)), None, &stop2, |_| {})
            .unwrap();
        (r, s.stats())
    });
    let mut c = Agent::new(cp, cfg(C_MAC, C_IP, 200_000_000), client_role(3, Some(50))).unwrap();
    let never = AtomicBool::new(false);
    let cr = c
        .run(Some(Duration::from_secs(5)), None, &never, |_| {})
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let (sr, sstats) = server.join().unwrap();
    assert_eq!(cr.tx_messages, 150, "3 QPs x 50 messages");
    assert_eq!(cr.tx_bytes, 150 * 4096);
    assert_eq!(sstats.qps_learned, 3);
    assert_eq!(sr.rx_messages, 150);
    assert_eq!(sr.rx_bytes, cr.tx_bytes);
    assert_eq!((sr.psn_gaps, sr.psn_lost), (0, 0), "in order, no loss");
    // A duplicate can only be a retransmission by the client's 67 ms timer
    // (real time on a loaded machine can stall the server that long).
    let retx: u64 = c
        .rnic()
        .qpns()
        .filter_map(|q| c.rnic().qp_stats(q))
        .map(|s| s.retx_packets)
        .sum();
    assert!(sr.psn_late <= retx, "{} late, {retx} resent", sr.psn_late);
    assert!(sr.rx_gbps > 0.0 && cr.tx_gbps > 0.0);
    // Paced at 200 Mb/s of wire bytes: payload rate stays below that.
    assert!(cr.tx_gbps < 0.2, "pacing ignored: {} Gb/s", cr.tx_gbps);
}

#[test]
fn a_pfc_xoff_on_the_data_priority_stops_sending_for_its_duration() {
    let (cp, mut peer) = MemoryPort::pair("client", "peer");
    // 20000 quanta at 100 Mb/s = 102.4 ms.
    assert_eq!(peer.send_batch(&[pfc_frame(3, 20_000)]).unwrap(), 1);
    let mut c = Agent::new(cp, cfg(C_MAC, C_IP, 100_000_000), client_role(1, None)).unwrap();
    let mut intervals = Vec::new();
    let never = AtomicBool::new(false);
    let r = c
        .run(
            Some(Duration::from_millis(300)),
            Some(Duration::from_millis(50)),
            &never,
            |i| intervals.push(i.clone()),
        )
        .unwrap();
    assert_eq!(r.pfc_rx, 1);
    assert!(
        (100.0..130.0).contains(&r.pause_ms),
        "pause time {} ms",
        r.pause_ms
    );
    assert_eq!(intervals[0].tx_bytes, 0, "sent while paused");
    // Nobody ACKs, so the 128-message window closes ~42 ms after resuming.
    assert!(
        intervals[2..].iter().any(|i| i.tx_bytes > 0),
        "never resumed"
    );
    // ~200 ms of 100 Mb/s at most.
    assert!(r.tx_bytes < 100_000_000 / 8 / 5 + 8192, "{}", r.tx_bytes);
    let mut got = FrameBuf::batch(64);
    assert!(peer.recv_batch(&mut got).unwrap() > 0);
}

#[test]
fn a_pfc_on_another_priority_does_not_pause_data() {
    let (cp, mut peer) = MemoryPort::pair("client", "peer");
    peer.send_batch(&[pfc_frame(5, 0xFFFF)]).unwrap();
    let mut c = Agent::new(cp, cfg(C_MAC, C_IP, 100_000_000), client_role(1, None)).unwrap();
    let never = AtomicBool::new(false);
    let mut first = None;
    let r = c
        .run(
            Some(Duration::from_millis(100)),
            Some(Duration::from_millis(50)),
            &never,
            |i| {
                first.get_or_insert(i.tx_bytes);
            },
        )
        .unwrap();
    assert!(first.unwrap() > 0);
    assert_eq!(
        r.pfc_rx, 0,
        "only the data priority's PFC frames are reported"
    );
}

#[test]
fn ce_marked_data_makes_the_server_send_cnps_and_the_client_slow_down() {
    // Client → (mark CE) → server, server's CNPs back to the client.
    let (cp, mut mid_c) = MemoryPort::pair("client", "mid-c");
    let (mut mid_s, sp) = MemoryPort::pair("mid-s", "server");
    let stop = Arc::new(AtomicBool::new(false));
    let (s1, s2) = (stop.clone(), stop.clone());
    let server = std::thread::spawn(move || {
        let mut s = Agent::new(sp, cfg(S_MAC, S_IP, 1_000_000_000), Role::Server).unwrap();
        s.run(None, None, &s1, |_| {}).unwrap()
    });
    let relay = std::thread::spawn(move || {
        let mut bufs = FrameBuf::batch(64);
        // Relays until stopped or until an end goes away (an agent that
        // finished first may drop its port before `stop` is set). The ports
        // are handed back rather than dropped here: the server may not have
        // seen `stop` yet, and a vanished peer is an error to it.
        while !s2.load(Ordering::Relaxed) {
            let Ok(n) = mid_c.recv_batch(&mut bufs) else {
                break;
            };
            for b in &mut bufs[..n] {
                let f = b.frame_mut();
                let mut ip = dataplane::wire::ip::Ipv4Packet::new_unchecked(&mut f[14..]);
                ip.mark_ce();
            }
            let Ok(n) = mid_s
                .send_batch(&bufs[..n])
                .and_then(|_| mid_s.recv_batch(&mut bufs))
            else {
                break;
            };
            if mid_c.send_batch(&bufs[..n]).is_err() {
                break;
            }
            if n == 0 {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        (mid_c, mid_s)
    });
    // DCQCN's floor is 100 Mb/s, so start well above it.
    let mut ccfg = cfg(C_MAC, C_IP, 1_000_000_000);
    ccfg.dcqcn = Some(dataplane::rnic::dcqcn::DcqcnConfig::default());
    ccfg.ecn_capable = true;
    let mut c = Agent::new(cp, ccfg, client_role(1, None)).unwrap();
    let never = AtomicBool::new(false);
    let r = c
        .run(Some(Duration::from_millis(300)), None, &never, |_| {})
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    let sr = server.join().unwrap();
    drop(relay.join().unwrap());
    assert!(sr.ce_rx > 0);
    assert!(sr.cnp_tx > 0, "no CNP for CE-marked data");
    assert!(r.cnp_rx > 0, "client saw no CNP");
    assert_eq!(r.counters.rp_cnp_handled, r.cnp_rx);
    // It starts at the 1 Gb/s line rate; the first CNP halves it (α = 1,
    // R-RP-2). How far it fell, not a sampled rate: fast recovery undoes a
    // cut within ~0.3 ms, and how often CNPs come depends on how promptly
    // this machine schedules the relay thread.
    assert!(
        r.rate_low_gbps > 0.0 && r.rate_low_gbps <= 0.5 + 1e-9,
        "DCQCN did not slow the sender: lowest rate {} Gb/s",
        r.rate_low_gbps
    );
}

#[test]
fn first_qp_moves_the_client_to_its_own_qpn_range_and_is_bounded() {
    let (cp, mut sp) = MemoryPort::pair("client", "server");
    let mut role = client_role(2, Some(1));
    if let Role::Client { first_qp, .. } = &mut role {
        *first_qp = 5;
    }
    let mut c = Agent::new(cp, cfg(C_MAC, C_IP, 1_000_000_000), role).unwrap();
    let never = AtomicBool::new(false);
    c.run(Some(Duration::from_secs(2)), None, &never, |_| {})
        .unwrap();
    let mut bufs: Vec<FrameBuf> = (0..16).map(|_| FrameBuf::with_capacity(9000)).collect();
    let n = sp.recv_batch(&mut bufs).unwrap();
    let mut dst_qpns: Vec<u32> = bufs[..n]
        .iter()
        .filter_map(|b| RoceFrameRepr::parse(b.frame()).ok())
        .map(|p| p.repr.bth.dest_qp)
        .collect();
    dst_qpns.sort_unstable();
    dst_qpns.dedup();
    assert_eq!(dst_qpns, vec![SERVER_QPN_BASE + 5, SERVER_QPN_BASE + 6]);

    let mut over = client_role(2, None);
    if let Role::Client { first_qp, .. } = &mut over {
        *first_qp = MAX_QPS - 1;
    }
    let (cp2, _sp2) = MemoryPort::pair("c2", "s2");
    assert!(Agent::new(cp2, cfg(C_MAC, C_IP, 1_000_000_000), over).is_err());
}

/// Runs `role` against a server over an in-memory wire for at most 5 s;
/// the client's summary and latency, the server's summary.
fn against_server(role: Role) -> (Report, Option<LatencySummary>, Report) {
    let (cp, sp) = MemoryPort::pair("client", "server");
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let server = std::thread::spawn(move || {
        let mut s = Agent::new(sp, cfg(S_MAC, S_IP, 1_000_000_000), Role::Server).unwrap();
        s.run(Some(Duration::from_secs(10)), None, &stop2, |_| {})
            .unwrap()
    });
    let mut c = Agent::new(cp, cfg(C_MAC, C_IP, 1_000_000_000), role).unwrap();
    let never = AtomicBool::new(false);
    let cr = c
        .run(Some(Duration::from_secs(5)), None, &never, |_| {})
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    (cr, c.latency(), server.join().unwrap())
}

fn test_role(test: PerfTest, qps: u32, size: u64, messages: u64) -> Role {
    Role::Client {
        test,
        qps,
        dst_ip: S_IP,
        dst_mac: S_MAC,
        message_bytes: size,
        messages: Some(messages),
        first_qp: 0,
        qp_timeout: 17,
    }
}

#[test]
fn read_bw_moves_the_data_from_the_server_to_the_client() {
    let (c, lat, s) = against_server(test_role(PerfTest::ReadBw, 2, 8192, 40));
    assert_eq!(lat, None, "a bandwidth test has no latency figures");
    assert_eq!(c.tx_messages, 80, "2 QPs x 40 READs completed");
    assert_eq!(c.rx_bytes, 80 * 8192, "the READ responses' payload");
    assert_eq!(c.tx_bytes, 0, "READ requests carry no payload");
    assert!(c.rx_gbps > 0.0);
    // The server sent it: 8 response packets of 1 KiB a READ.
    assert_eq!(s.tx_bytes, c.rx_bytes);
    assert!(s.tx_packets >= 80 * 8, "{}", s.tx_packets);
}

#[test]
fn send_bw_consumes_a_receive_per_message_at_the_server() {
    let (c, _, s) = against_server(test_role(PerfTest::SendBw, 1, 3000, 25));
    assert_eq!(c.tx_messages, 25);
    assert_eq!(s.rx_messages, 25, "each SEND landed in a receive");
    assert_eq!(s.rx_bytes, 25 * 3000);
    assert_eq!(
        s.counters.rnr_nak_retry_err + c.counters.rnr_nak_retry_err,
        0
    );
}

#[test]
fn latency_tests_time_every_message_one_in_flight() {
    for test in [PerfTest::WriteLat, PerfTest::ReadLat, PerfTest::SendLat] {
        let (c, lat, s) = against_server(test_role(test, 1, 64, 30));
        let lat = lat.expect("latency figures");
        assert_eq!(lat.iterations, 30, "{test}");
        assert_eq!(c.tx_messages, 30, "{test}");
        assert_eq!(lat.error, None, "{test}");
        assert!(
            0.0 < lat.t_min_us && lat.t_min_us <= lat.t_typical_us,
            "{test}: {lat:?}"
        );
        assert!(lat.t_typical_us <= lat.p99_us && lat.p99_us <= lat.t_max_us);
        // One in flight: the server never saw two messages' packets overlap,
        // so nothing was late or lost.
        assert_eq!((s.psn_gaps, s.psn_late), (0, 0), "{test}");
        match test {
            PerfTest::ReadLat => assert_eq!(c.rx_bytes, 30 * 64),
            _ => assert_eq!(s.rx_bytes, 30 * 64),
        }
    }
}

#[test]
fn latency_tests_refuse_more_than_one_qp() {
    let (cp, _sp) = MemoryPort::pair("client", "server");
    let e = Agent::new(
        cp,
        cfg(C_MAC, C_IP, 1_000_000_000),
        test_role(PerfTest::SendLat, 2, 2, 10),
    )
    .unwrap_err();
    assert!(e.to_string().contains("--qps must be 1"), "{e}");
}

#[test]
fn nvmf_host_and_target_complete_every_command_with_the_data_both_ways() {
    let (hp, tp) = MemoryPort::pair("host", "target");
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let target = std::thread::spawn(move || {
        let mut t = Agent::new(tp, cfg(S_MAC, S_IP, 1_000_000_000), Role::NvmfTarget).unwrap();
        let r = t
            .run(Some(Duration::from_secs(10)), None, &stop2, |_| {})
            .unwrap();
        (r, t.stats())
    });
    let role = Role::NvmfHost {
        nvmf: NvmfConfig {
            iodepth: 8,
            bs: 8192,
            rwmixread: 50,
            ios: Some(100),
            seed: 3,
        },
        qps: 2,
        dst_ip: S_IP,
        dst_mac: S_MAC,
        first_qp: 0,
        qp_timeout: 17,
    };
    let mut h = Agent::new(hp, cfg(C_MAC, C_IP, 1_000_000_000), role).unwrap();
    let never = AtomicBool::new(false);
    let hr = h
        .run(Some(Duration::from_secs(5)), None, &never, |_| {})
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    let (tr, tstats) = target.join().unwrap();
    let n = h.nvmf(hr.end_s - hr.start_s).expect("NVMe-oF figures");
    assert_eq!(n.error, None);
    assert_eq!(
        n.read.total_ios + n.write.total_ios,
        200,
        "2 QPs x 100 I/Os"
    );
    assert!(n.read.total_ios > 50 && n.write.total_ios > 50, "{n:?}");
    assert_eq!(tstats.qps_learned, 2);
    // Reads arrived by the target's RDMA WRITEs, writes left by its READs:
    // the host sent the write data as READ responses and capsules besides.
    let capsules = 200 * u64::from(nvmf::COMMAND_CAPSULE_BYTES);
    assert_eq!(
        hr.rx_bytes - 200 * 16,
        n.read.io_bytes,
        "read data + responses"
    );
    assert_eq!(
        hr.tx_bytes,
        n.write.io_bytes + capsules,
        "write data + capsules"
    );
    assert_eq!(tr.rx_bytes, hr.tx_bytes);
    assert_eq!(hr.counters.rx_write_requests, n.read.total_ios);
    assert_eq!(hr.counters.rx_read_requests, n.write.total_ios);
    assert_eq!(hr.retx_packets + tr.retx_packets, 0);
}

#[test]
fn serving_clients_write_to_each_other_in_one_process_each() {
    let (ap, bp) = MemoryPort::pair("a", "b");
    let role = |dst_ip, dst_mac| Role::Client {
        test: PerfTest::WriteBw,
        qps: 1,
        dst_ip,
        dst_mac,
        message_bytes: 4096,
        messages: Some(40),
        first_qp: 0,
        qp_timeout: 17,
    };
    let b = std::thread::spawn(move || {
        let mut b = Agent::new(bp, cfg(S_MAC, S_IP, 1_000_000_000), role(C_IP, C_MAC)).unwrap();
        b.serve_peers(true);
        let never = AtomicBool::new(false);
        // Long enough to answer all of a's messages after its own are done.
        let r = b
            .run(Some(Duration::from_millis(1500)), None, &never, |_| {})
            .unwrap();
        (r, b.stats())
    });
    let mut a = Agent::new(ap, cfg(C_MAC, C_IP, 1_000_000_000), role(S_IP, S_MAC)).unwrap();
    a.serve_peers(true);
    let never = AtomicBool::new(false);
    let ar = a
        .run(Some(Duration::from_millis(1500)), None, &never, |_| {})
        .unwrap();
    let (br, bstats) = b.join().unwrap();
    assert_eq!((ar.tx_messages, br.tx_messages), (40, 40), "both completed");
    assert_eq!(a.stats().qps_learned, 1);
    assert_eq!(bstats.qps_learned, 1);
    assert_eq!(ar.rx_bytes, 40 * 4096, "a answered b's WRITEs");
    assert_eq!(br.rx_bytes, 40 * 4096);
}

#[test]
fn receive_rings_hold_line_time_between_a_floor_and_a_cap() {
    let ring = |bps| super::port_config(RoceVersion::V2, 4096, bps).rx_ring_bytes;
    assert_eq!(ring(1_000_000_000), super::PORT_RX_RING_BYTES);
    assert_eq!(ring(10_000_000_000), 62_500_000);
    assert_eq!(ring(20_000_000_000), super::PORT_RX_RING_MAX_BYTES);
}

#[test]
fn pacing_bursts_keep_their_time_at_1g_and_their_bytes_at_10g() {
    assert_eq!(pacing_burst(100_000_000), PACING_BURST);
    assert_eq!(pacing_burst(1_000_000_000), PACING_BURST);
    let fast = pacing_burst(10_000_000_000);
    let bytes = fast.as_nanos() * 10_000_000_000 / 8 / 1_000_000_000;
    assert!(fast < PACING_BURST, "{fast:?}");
    assert!(
        bytes <= u128::from(dataplane::driver::TRAIN_MAX_BYTES),
        "{bytes}"
    );
}
