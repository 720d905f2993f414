//! Property test: buffer accounting of the traffic manager is conserved
//! under arbitrary interleavings of enqueue, transmit, received PFC and
//! timeouts, and everything returns to zero (with XON sent) once drained.

use dataplane::time::{Duration, Instant};
use dataplane::tm::{DropReason, EnqueueMeta, Tm, TmConfig};
use dataplane::wire::pfc::{MacControlRepr, PfcRepr};
use proptest::prelude::*;

const PORTS: u16 = 3;

#[derive(Debug, Clone)]
enum Op {
    Enqueue {
        ingress: u16,
        egress: u16,
        priority: u8,
        len: u32,
    },
    Transmit {
        port: u16,
    },
    Pfc {
        port: u16,
        mask: u8,
        quanta: u16,
    },
    Advance {
        ns: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..PORTS, 0..PORTS, prop_oneof![Just(0u8), Just(3u8), 0u8..8], 1u32..9000)
            .prop_map(|(ingress, egress, priority, len)| Op::Enqueue { ingress, egress, priority, len }),
        3 => (0..PORTS).prop_map(|port| Op::Transmit { port }),
        1 => (0..PORTS, any::<u8>(), prop_oneof![Just(0u16), Just(0xffffu16), 1u16..2000])
            .prop_map(|(port, mask, quanta)| Op::Pfc { port, mask, quanta }),
        2 => (1u64..200_000).prop_map(|ns| Op::Advance { ns }),
    ]
}

/// A small buffer so thresholds, XOFF and drops happen within a few hundred ops.
fn config(shp_over_subscribe_ratio: Option<u32>) -> TmConfig {
    let mut cfg = TmConfig::with_ports(usize::from(PORTS));
    cfg.buffer_bytes = 512 * 1024;
    cfg.shp_over_subscribe_ratio = shp_over_subscribe_ratio;
    for p in &mut cfg.ports {
        p.pfc_enable = (1 << 3) | (1 << 4);
        p.pgs[3].headroom_bytes = Some(32 * 1024);
        p.pgs[4].headroom_bytes = Some(16 * 1024);
        p.pgs[0].reserved_bytes = 4096;
    }
    cfg
}

fn charge(len: u32) -> u64 {
    u64::from(len).div_ceil(256).max(1) * 256
}

fn check(tm: &Tm<u32>, cfg: &TmConfig, charged: u64) -> Result<(), TestCaseError> {
    let mut shared = 0;
    let mut headroom = 0;
    let mut total = 0;
    for port in 0..PORTS {
        for pg in 0..8u8 {
            let u = tm.pg_usage(port, pg).unwrap();
            let pc = &cfg.ports[usize::from(port)];
            prop_assert!(u.reserved_bytes <= pc.pgs[usize::from(pg)].reserved_bytes);
            prop_assert!(u.headroom_bytes <= pc.pg_headroom_bytes(usize::from(pg)).unwrap());
            shared += u.shared_bytes;
            headroom += u.headroom_bytes;
            total += u.reserved_bytes + u.shared_bytes + u.headroom_bytes;
        }
    }
    prop_assert_eq!(shared, tm.shared_used_bytes());
    prop_assert!(shared <= tm.shared_pool_bytes());
    prop_assert_eq!(headroom, tm.headroom_used_bytes());
    prop_assert!(headroom <= tm.headroom_pool_bytes());
    prop_assert_eq!(total, charged, "ingress usage equals what is queued");
    let (touched, reserved) = tm.packet_slots();
    prop_assert_eq!(
        reserved,
        (cfg.buffer_bytes / u64::from(cfg.cell_bytes)) as usize,
        "the packet store never grows past its reservation"
    );
    prop_assert!(touched <= reserved);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn accounting_is_conserved(
        ops in proptest::collection::vec(op(), 1..400),
        shp in prop_oneof![Just(None), Just(Some(2u32))],
    ) {
        let cfg = config(shp);
        let mut tm: Tm<u32> = Tm::new(cfg.clone(), Instant::ZERO).unwrap();
        let mut now = Instant::ZERO;
        let mut charged = 0u64;
        let mut accepted = 0u64;
        let mut sent = 0u64;
        for (i, op) in ops.into_iter().enumerate() {
            match op {
                Op::Enqueue { ingress, egress, priority, len } => {
                    let meta = EnqueueMeta { ingress_port: ingress, egress_port: egress, priority, len_bytes: len };
                    match tm.handle_enqueue(i as u32, meta, now) {
                        Ok(info) => {
                            prop_assert_eq!(info.charged_bytes, charge(len));
                            charged += info.charged_bytes;
                            accepted += 1;
                        }
                        Err(reason) => {
                            // Lossless priorities are never refused for egress space.
                            if cfg.ports[usize::from(ingress)].pfc_enable & (1 << priority) != 0 {
                                prop_assert_eq!(reason, DropReason::HeadroomOverflow);
                            }
                        }
                    }
                }
                Op::Transmit { port } => {
                    while tm.poll_control_frame(port, now).is_some() {}
                    if let Some(d) = tm.poll_transmit(port, now) {
                        charged -= charge(d.meta.len_bytes);
                        sent += 1;
                        prop_assert!(d.sojourn <= now - Instant::ZERO);
                    }
                }
                Op::Pfc { port, mask, quanta } => {
                    tm.handle_mac_control(port, &MacControlRepr::Pfc(PfcRepr::xoff(mask, quanta)), now);
                }
                Op::Advance { ns } => {
                    now += Duration::from_nanos(ns);
                    tm.handle_timeout(now);
                }
            }
            check(&tm, &cfg, charged)?;
        }
        // Drain everything: resume all priorities and run until idle.
        for port in 0..PORTS {
            tm.handle_mac_control(port, &MacControlRepr::Pfc(PfcRepr::xon(0xff)), now);
        }
        let mut guard = 0;
        while let Some(t) = tm.poll_timeout() {
            now = now.max(t);
            tm.handle_timeout(now);
            for port in 0..PORTS {
                while tm.poll_control_frame(port, now).is_some() {}
                while let Some(d) = tm.poll_transmit(port, now) {
                    charged -= charge(d.meta.len_bytes);
                    sent += 1;
                }
            }
            guard += 1;
            prop_assert!(guard < 100_000, "did not go idle");
        }
        check(&tm, &cfg, charged)?;
        prop_assert_eq!(charged, 0);
        prop_assert_eq!(sent, accepted);
        prop_assert_eq!(tm.shared_used_bytes(), 0);
        for port in 0..PORTS {
            for pg in 0..8 {
                prop_assert!(!tm.pg_usage(port, pg).unwrap().xoff, "XON sent once drained");
            }
        }
    }
}
