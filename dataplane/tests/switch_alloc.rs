//! The switch core's forwarding path allocates nothing once warmed up:
//! RoCE frames received in bursts that queue up in the traffic manager,
//! routed, and taken out as owned buffers which come back in with the next
//! frames (as the driver's receive and transmit rings do), on the daemon's
//! switch (`Switchable` over the compiled-in `roce_switch.p4`, the default
//! port configuration). Buffers and parsed-packet slots both come from the
//! switch's pools; counted by a global allocator after one warm-up run.

mod common;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::allocations;

use common::{roce_frame, routed, router};
use dataplane::roce::Program;
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::Instant;
use p4_target::dynamic::Switchable;

/// Frames received at once: they wait in port 2's queue behind each other.
const BURST: usize = 64;

/// Packets waiting in port 2's queues.
fn queued_on_port_2(sw: &Switch<Switchable<Program>>) -> usize {
    (0..8)
        .map(|q| sw.tm().queue_depth(2, q).map_or(0, |(_, packets)| packets))
        .sum()
}

/// `rounds` bursts of `burst` frames in on port 0, each drained from port
/// 2 at its line rate before the next (until nothing is queued). `spare`
/// holds the buffers the test owns between rounds (the frames that left);
/// when it runs out, frames are copied in. Returns the frames that left.
fn stream(
    sw: &mut Switch<Switchable<Program>>,
    frame: &[u8],
    spare: &mut Vec<Vec<u8>>,
    now: &mut u64,
    rounds: usize,
    burst: usize,
) -> usize {
    let mut left = 0;
    for _ in 0..rounds {
        for _ in 0..burst {
            let t = Instant::from_nanos(*now);
            match spare.pop() {
                Some(mut buf) => {
                    buf.clear();
                    buf.extend_from_slice(frame);
                    sw.handle_frame_owned(0, buf, t);
                }
                // Copied into a buffer of the switch's pool, as the driver
                // does from its receive ring.
                None => sw.handle_frame(0, frame, t),
            }
        }
        let mut out = 0;
        while queued_on_port_2(sw) > 0 {
            *now += 100;
            let t = Instant::from_nanos(*now);
            sw.handle_timeout(t);
            while let Some((_, buf)) = sw.poll_transmit_owned(2, t) {
                out += 1;
                spare.push(buf);
            }
            while sw.poll_event().is_some() {}
        }
        left += out;
    }
    left
}

#[test]
fn forwarding_through_the_switch_allocates_nothing_after_warm_up() {
    let mut sw = Switch::new(
        Switchable::new(router(2)),
        SwitchConfig::with_ports(3),
        Instant::ZERO,
    )
    .unwrap();
    let frame = roce_frame(26, 1, 1024);
    let mut spare: Vec<Vec<u8>> = Vec::with_capacity(2 * BURST);
    let mut now = 0u64;
    assert_eq!(
        stream(&mut sw, &frame, &mut spare, &mut now, 2, BURST),
        2 * BURST
    );
    // The frames leave routed: the path counted below is the real one.
    assert_eq!(spare.last().unwrap(), &routed(&frame));
    let start = allocations();

    let left = stream(&mut sw, &frame, &mut spare, &mut now, 200, BURST);
    let counted = allocations() - start;

    assert_eq!(left, 200 * BURST);
    assert_eq!(sw.stats().tx_frames, 202 * BURST as u64);
    assert_eq!(sw.tm().packet_slots().0, BURST, "bursts queued up");
    assert_eq!(counted, 0, "allocations after two warm-up bursts");
}

#[test]
fn tail_drops_on_a_lossy_priority_allocate_nothing_after_warm_up() {
    // A buffer of 256 KiB (187 KiB of it guaranteed to the ports) holds a
    // few dozen 1 KiB frames in its shared pool, so bursts of 256 on
    // the lossy priority (DSCP 0) are mostly dropped by the TM, whose
    // refused packets hand their buffers and boxes back to the switch.
    let mut config = SwitchConfig::with_ports(3);
    config.tm.buffer_bytes = 256 * 1024;
    let mut sw = Switch::new(Switchable::new(router(2)), config, Instant::ZERO).unwrap();
    let frame = roce_frame(0, 1, 1024);
    let burst = 4 * BURST;
    let mut spare: Vec<Vec<u8>> = Vec::with_capacity(burst);
    let mut now = 0u64;
    let warm = stream(&mut sw, &frame, &mut spare, &mut now, 2, burst);
    assert!(warm > 0 && warm < 2 * burst, "{warm} of {} left", 2 * burst);
    let start = allocations();

    let left = stream(&mut sw, &frame, &mut spare, &mut now, 50, burst);
    let counted = allocations() - start;

    let dropped: u64 = sw.stats().drops.iter().sum();
    assert_eq!(
        (warm + left) as u64 + dropped,
        52 * burst as u64,
        "every frame left or was dropped"
    );
    assert!(
        dropped >= 50 * burst as u64 / 2,
        "mostly dropped: {dropped}"
    );
    assert_eq!(counted, 0, "allocations after two warm-up bursts");
}
