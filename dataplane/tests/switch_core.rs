//! The whole switch core (MAC → compiled `roce_switch.p4` → traffic manager
//! → egress → deparser) under congestion, in simulated time.
//!
//! ```text
//!  port 0 (10G) ──┐
//!                 ├──► [ switch ] ──► port 2 (10G)     2:1 incast
//!  port 1 (10G) ──┘
//! ```
//!
//! Senders offer line rate on both ingress ports. On the lossless priority
//! they stop when the switch pauses them (as a NIC honouring PFC would), so
//! nothing may be lost; on a lossy priority they never stop, so the switch
//! must drop and count.

mod common;

use common::{roce_frame, router};
use dataplane::roce::Program;
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::{Duration, Instant};

const SPEED_BPS: u64 = 10_000_000_000;

fn switch() -> Switch<Program> {
    let mut config = SwitchConfig::with_ports(3);
    // A small buffer, so a few milliseconds of 2:1 incast fill it.
    config.tm.buffer_bytes = 1 << 20;
    for port in &mut config.tm.ports {
        port.speed_bps = SPEED_BPS;
        port.cable_length_m = Some(10);
    }
    Switch::new(router(2), config, Instant::ZERO).unwrap()
}

/// A PFC frame's (class-enable vector, times) if `f` is one.
fn pfc(f: &[u8]) -> Option<(u8, [u16; 8])> {
    if f.len() < 34
        || f[..6] != [0x01, 0x80, 0xc2, 0, 0, 1]
        || f[12..16] != [0x88, 0x08, 0x01, 0x01]
    {
        return None;
    }
    let mut times = [0u16; 8];
    for (i, t) in times.iter_mut().enumerate() {
        *t = u16::from_be_bytes([f[18 + 2 * i], f[19 + 2 * i]]);
    }
    Some((f[17], times))
}

#[derive(Default, Debug)]
struct Outcome {
    sent: [u32; 2],
    delivered_psns: [Vec<u32>; 2],
    xoff_on: [u32; 2],
    xon_on: [u32; 2],
    pfc_on_egress: u32,
}

/// Offers line rate on ports 0 and 1 for `offer_for`; a sender honours PFC
/// when `honour_pfc`. Runs until everything drained.
fn incast(sw: &mut Switch<Program>, dscp: u8, honour_pfc: bool, offer_for: Duration) -> Outcome {
    let mut out = Outcome::default();
    let frame_len = roce_frame(dscp, 0, 1024).len() as u64;
    let gap_ns = (frame_len + 20) * 8 * 1_000_000_000 / SPEED_BPS; // with preamble + IFG
    let mut next_send = [0u64; 2];
    let mut paused_until = [0u64; 2];
    let mut buf = Vec::new();
    let end = offer_for.as_nanos();
    let mut now = 0u64;
    while now < end + 10_000_000 {
        for port in 0..2 {
            if now < end && now >= next_send[port] && (!honour_pfc || now >= paused_until[port]) {
                let f = roce_frame(dscp, out.sent[port] | (port as u32) << 20, 1024);
                sw.handle_frame(port as u16, &f, Instant::from_nanos(now));
                out.sent[port] += 1;
                next_send[port] = now + gap_ns;
            }
        }
        sw.handle_timeout(Instant::from_nanos(now));
        for port in 0..3u16 {
            while sw
                .poll_transmit(port, Instant::from_nanos(now), &mut buf)
                .is_some()
            {
                if let Some((classes, times)) = pfc(&buf) {
                    if port == 2 {
                        out.pfc_on_egress += 1;
                        continue;
                    }
                    assert_eq!(classes, 1 << 3, "PFC names exactly priority 3");
                    let p = usize::from(port);
                    if times[3] == 0 {
                        out.xon_on[p] += 1;
                        paused_until[p] = now;
                    } else {
                        out.xoff_on[p] += 1;
                        // 512 bit times per quantum at the port speed.
                        paused_until[p] =
                            now + u64::from(times[3]) * 512 * 1_000_000_000 / SPEED_BPS;
                    }
                } else if port == 2 {
                    let psn = u32::from_be_bytes([buf[50], buf[51], buf[52], buf[53]]) & 0xff_ffff;
                    out.delivered_psns[(psn >> 20) as usize].push(psn & 0xf_ffff);
                }
            }
        }
        now += 100;
    }
    out
}

#[test]
fn lossless_incast_pauses_the_senders_and_loses_nothing() {
    let mut sw = switch();
    let out = incast(&mut sw, 26, true, Duration::from_millis(2));
    for port in 0..2 {
        assert!(
            out.xoff_on[port] > 0,
            "XOFF sent on ingress port {port}: {:?} {:?}",
            out.xoff_on,
            out.sent
        );
        assert!(out.xon_on[port] > 0, "XON follows on port {port}");
        let psns = &out.delivered_psns[port];
        assert_eq!(
            psns.len() as u32,
            out.sent[port],
            "every packet of port {port} delivered"
        );
        assert!(psns.windows(2).all(|w| w[1] == w[0] + 1), "in PSN order");
    }
    assert_eq!(out.pfc_on_egress, 0, "no PFC towards the receiver");
    assert_eq!(sw.stats().drops.iter().sum::<u64>(), 0);
    // The egress was kept busy: 2 ms at 10G carries ~2,300 of these frames.
    let delivered: usize = out.delivered_psns.iter().map(Vec::len).sum();
    assert!(delivered > 2_000, "delivered {delivered}");
}

#[test]
fn lossy_incast_drops_and_counts_without_pausing() {
    let mut sw = switch();
    let out = incast(&mut sw, 0, false, Duration::from_millis(20));
    let delivered: usize = out.delivered_psns.iter().map(Vec::len).sum();
    let sent: u32 = out.sent.iter().sum();
    assert_eq!(out.xoff_on, [0, 0], "no PFC for a lossy priority");
    let drops = sw
        .stats()
        .dropped(dataplane::switch::SwitchDrop::LossyTailDrop)
        + sw.stats()
            .dropped(dataplane::switch::SwitchDrop::EgressLimit);
    assert!(drops > 0, "over-subscribed lossy traffic is dropped");
    sw.conservation().unwrap();
    let total = sw.ledger().total();
    assert_eq!(total.arrived, u64::from(sent), "the ledger saw every frame");
    assert_eq!(total.forwarded(), delivered as u64);
    assert_eq!(
        delivered as u64 + drops,
        u64::from(sent),
        "every frame delivered or counted"
    );
    let tm_drops = sw.tm().drop_counts();
    assert_eq!(tm_drops.total(), drops, "the TM says why");
}

#[test]
fn frames_over_the_port_mtu_are_discarded_and_counted() {
    let mut config = SwitchConfig::with_ports(3);
    config.tm.ports[0].mtu_bytes = 1500;
    let mut sw = Switch::new(router(2), config, Instant::ZERO).unwrap();
    let big = roce_frame(26, 1, 1500); // 1500 B of payload + headers: over a 1500 MTU
    let fits = roce_frame(26, 2, 1400);
    sw.handle_frame(0, &big, Instant::ZERO);
    sw.handle_frame(0, &fits, Instant::ZERO);
    let mut out = Vec::new();
    let mut sent = 0;
    for t in 0..100 {
        while sw
            .poll_transmit(2, Instant::from_micros(t), &mut out)
            .is_some()
        {
            sent += 1;
            assert_eq!(out.len(), fits.len());
        }
    }
    assert_eq!(sent, 1, "only the frame within the MTU is forwarded");
    assert_eq!(sw.port_discards(0).unwrap().over_mtu, 1);
    assert_eq!(
        sw.stats().dropped(dataplane::switch::SwitchDrop::OverMtu),
        1
    );
}

#[test]
fn packet_out_goes_through_the_traffic_manager_to_its_port() {
    let mut sw = Switch::new(router(2), SwitchConfig::with_ports(3), Instant::ZERO).unwrap();
    let frame = roce_frame(26, 9, 64);
    let mut with_header = vec![0x00, 0x80]; // packet_out.egress_port = 1
    with_header.extend_from_slice(&frame);
    sw.handle_packet_out(&with_header, Instant::ZERO);
    let mut out = Vec::new();
    assert!(
        sw.poll_transmit(1, Instant::from_micros(1), &mut out)
            .is_some(),
        "sent on port 1"
    );
    assert_eq!(out, frame, "unchanged, header removed");
    assert_eq!(sw.stats().drops.iter().sum::<u64>(), 0);
}
