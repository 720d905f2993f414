//! The switch core's forwarding path allocates nothing once warmed up:
//! RoCE frames received in bursts that queue up in the traffic manager,
//! routed, and taken out as owned buffers which come back in with the next
//! frames (as the driver's receive and transmit rings do), on the daemon's
//! switch (`Switchable` over the compiled-in `roce_switch.p4`, the default
//! port configuration). Buffers and parsed-packet slots both come from the
//! switch's pools; counted by a global allocator after one warm-up run.
//!
//! One test in this file, so no other test's allocations are counted (the
//! counter is per thread anyway).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::{roce_frame, routed, router};
use dataplane::roce::Program;
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::Instant;
use p4_target::dynamic::Switchable;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Frames received at once: they wait in port 2's queue behind each other.
const BURST: usize = 64;

/// `rounds` bursts of [`BURST`] frames in on port 0, each drained from port
/// 2 at its line rate before the next. `spare` holds the buffers the test
/// owns between rounds. Returns the frames that left.
fn stream(
    sw: &mut Switch<Switchable<Program>>,
    frame: &[u8],
    spare: &mut Vec<Vec<u8>>,
    now: &mut u64,
    rounds: usize,
) -> usize {
    let mut left = 0;
    for _ in 0..rounds {
        for _ in 0..BURST {
            let mut buf = spare.pop().unwrap_or_default();
            buf.clear();
            buf.extend_from_slice(frame);
            sw.handle_frame_owned(0, buf, Instant::from_nanos(*now));
        }
        let mut out = 0;
        while out < BURST {
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
    assert_eq!(stream(&mut sw, &frame, &mut spare, &mut now, 2), 2 * BURST);
    // The frames leave routed: the path counted below is the real one.
    assert_eq!(spare.last().unwrap(), &routed(&frame));
    let start = allocations();

    let left = stream(&mut sw, &frame, &mut spare, &mut now, 200);
    let counted = allocations() - start;

    assert_eq!(left, 200 * BURST);
    assert_eq!(sw.stats().tx_frames, 202 * BURST as u64);
    assert_eq!(sw.tm().packet_slots().0, BURST, "bursts queued up");
    assert_eq!(counted, 0, "allocations after two warm-up bursts");
}
