//! The traffic manager's per-packet path allocates nothing: enqueue,
//! dequeue, PFC, a watchdog storm that flushes a deep queue, taking the
//! flushed packets and the restoration, counted by a global allocator
//! once the TM is built and has been through one storm.

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::allocations;

#[path = "common/watchdog.rs"]
mod watchdog_fixture;

use dataplane::time::Instant;
use dataplane::tm::{EnqueueMeta, Tm, TmConfig};
use dataplane::watchdog::{WatchdogPortConfig, WdAction, WdMode};
use dataplane::wire::pfc::{MacControlRepr, PfcRepr};

const MS: u64 = 1_000_000;

fn at(ns: u64) -> Instant {
    Instant::from_nanos(ns)
}

fn meta(ingress_port: u16, egress_port: u16, priority: u8, len_bytes: u32) -> EnqueueMeta {
    EnqueueMeta {
        ingress_port,
        egress_port,
        priority,
        len_bytes,
    }
}

/// Steady forwarding on a lossy and the lossless priority, `n` rounds.
fn forward(tm: &mut Tm<u64>, id: &mut u64, now: &mut u64, n: usize) {
    for _ in 0..n {
        for p in [0u8, 3] {
            *id += 1;
            tm.handle_enqueue(*id, meta(0, 1, p, 1024), at(*now))
                .unwrap();
        }
        *now += 200;
        tm.handle_timeout(at(*now));
        while tm.poll_control_frame(1, at(*now)).is_some() {}
        while tm.poll_transmit(1, at(*now)).is_some() {}
        while tm.poll_event().is_some() {}
    }
}

/// A pause storm on the lossless priority of port 1 for 400 ms, then 600 ms
/// of quiet: the queue builds up to XOFF and headroom, the watchdog flushes
/// it, the flushed packets are taken, and the queue is restored. Returns
/// the packets flushed.
fn storm(tm: &mut Tm<u64>, id: &mut u64, now: &mut u64) -> usize {
    let mut ms = *now / MS + 1;
    let mut flushed = 0;
    for step in 0..100 {
        ms += 10;
        let t = ms * MS;
        if step < 40 {
            tm.handle_mac_control(
                1,
                &MacControlRepr::Pfc(PfcRepr::xoff(1 << 3, 0xffff)),
                at(t),
            );
        }
        for _ in 0..50 {
            *id += 1;
            let _ = tm.handle_enqueue(*id, meta(0, 1, 3, 1024), at(t));
        }
        tm.handle_timeout(at(t));
        while tm.poll_control_frame(0, at(t)).is_some() {}
        while tm.poll_control_frame(1, at(t)).is_some() {}
        while tm.poll_transmit(1, at(t)).is_some() {}
        while tm.poll_discarded().is_some() {
            flushed += 1;
        }
        while tm.poll_event().is_some() {}
    }
    *now = ms * MS;
    flushed
}

#[test]
fn the_per_packet_path_and_a_storm_flush_allocate_nothing() {
    let mut cfg = TmConfig::with_ports(2);
    watchdog_fixture::watch(&mut cfg, 1, WdAction::Drop);
    let mut tm: Tm<u64> = Tm::new(cfg, Instant::ZERO).unwrap();
    let (mut id, mut now) = (0u64, 0u64);
    // The watchdog's own event queue (`dataplane::watchdog`, outside the
    // TM) grows once, at its first storm: counting starts after one.
    forward(&mut tm, &mut id, &mut now, 100);
    assert!(storm(&mut tm, &mut id, &mut now) > 100);
    let start = allocations();

    forward(&mut tm, &mut id, &mut now, 10_000);
    let flushed = storm(&mut tm, &mut id, &mut now);
    forward(&mut tm, &mut id, &mut now, 100);
    let counted = allocations() - start;

    let wd = tm.watchdog().stats(1, 3).unwrap();
    assert_eq!((wd.deadlock_detected, wd.deadlock_restored), (2, 2));
    assert_eq!(tm.watchdog_mode(1, 3), WdMode::Normal);
    assert!(flushed > 100, "the storm flushed a deep queue ({flushed})");
    assert_eq!(
        counted, 0,
        "allocations after the TM was built and had one storm"
    );
}
