//! The driver when a port's link goes away and comes back (issue #18), on
//! in-memory ports with a manual clock: the port is marked down, frames
//! for it (and those queued for it) are dropped as `PortDown` with the
//! ledger balanced, the peer's pause on it ends, the switch emits the oper
//! change, and after the link returns the next link check reopens the port
//! and it forwards again. Errors that are not link loss still end the run.
//!
//! ```text
//!  test ── port 0 ──┐                ┌── port 2 ── test (its link fails)
//!                   └─[ Driver(Switch) ]
//!  test ── port 1 ──┘
//! ```

mod common;

use std::sync::mpsc::{Receiver, channel};

use common::{roce_frame, routed, router};
use dataplane::driver::{
    Clock, Driver, DriverIo, LINK_CHECK_INTERVAL, ManualClock, command_channel,
};
use dataplane::port::{FrameBuf, LinkDown, MemoryPort, Port, PortError};
use dataplane::roce::Program;
use dataplane::switch::{Switch, SwitchConfig, SwitchDrop, SwitchEvent};
use dataplane::time::{Duration, Instant};
use dataplane::wire::ethernet::EthernetAddress;
use dataplane::wire::pfc::{MacControlRepr, PfcRepr, emit_frame};

fn send(port: &mut MemoryPort, frame: &[u8]) {
    let mut b = FrameBuf::default();
    b.set_frame(frame);
    assert_eq!(port.send_batch(&[b]).unwrap(), 1);
}

fn recv_all(port: &mut MemoryPort) -> Vec<Vec<u8>> {
    let mut bufs = FrameBuf::batch(64);
    let n = port.recv_batch(&mut bufs).unwrap();
    bufs[..n].iter().map(|b| b.frame().to_vec()).collect()
}

type Rig = (
    Vec<MemoryPort>,
    Driver<Program, ManualClock>,
    ManualClock,
    Receiver<SwitchEvent>,
    dataplane::port::LinkControl,
    dataplane::driver::CommandSender<Program>,
);

/// Three links, the switch routing to port 2, port 2's link switch.
fn rig() -> Rig {
    let mut ours = Vec::new();
    let mut theirs: Vec<Box<dyn Port + Send>> = Vec::new();
    let mut link = None;
    for i in 0..3 {
        let (a, b) = MemoryPort::pair(&format!("test{i}"), &format!("sw{i}"));
        if i == 2 {
            link = Some(b.link_control());
        }
        ours.push(a);
        theirs.push(Box::new(b));
    }
    let switch = Switch::new(router(2), SwitchConfig::with_ports(3), Instant::ZERO).unwrap();
    let (cmd_tx, cmd_rx) = command_channel::<Program>().unwrap();
    let (ev_tx, ev_rx) = channel();
    let io = DriverIo {
        commands: cmd_rx,
        packet_in: None,
        events: Some(Box::new(move |e| {
            let _ = ev_tx.send(e);
        })),
        digests: None,
    };
    let clock = ManualClock::new(Instant::ZERO);
    let driver = Driver::with_clock(switch, theirs, io, clock.clone());
    (ours, driver, clock, ev_rx, link.unwrap(), cmd_tx)
}

fn oper_events(rx: &Receiver<SwitchEvent>) -> Vec<(u16, Option<LinkDown>)> {
    rx.try_iter()
        .filter_map(|e| match e {
            SwitchEvent::PortOper { port, down } => Some((port, down)),
            _ => None,
        })
        .collect()
}

fn pfc_xoff(priorities: u8) -> Vec<u8> {
    let mut f = vec![0u8; 64];
    let n = emit_frame(
        EthernetAddress([2, 0, 0, 0, 0, 0x22]),
        &MacControlRepr::Pfc(PfcRepr::xoff(priorities, 0xffff)),
        &mut f,
    )
    .unwrap();
    f.truncate(n);
    f
}

#[test]
fn a_vanished_link_drops_with_a_reason_and_returns_forwarding() {
    let (mut ours, mut driver, clock, events, link, _cmd) = rig();
    let frame = roce_frame(26, 1, 64);
    send(&mut ours[0], &frame);
    driver.step().unwrap();
    assert_eq!(recv_all(&mut ours[2]), vec![routed(&frame)]);

    // The peer on port 2 pauses priority 3: what follows queues for it.
    send(&mut ours[2], &pfc_xoff(1 << 3));
    driver.step().unwrap();
    for psn in 2..6 {
        send(&mut ours[0], &roce_frame(26, psn, 64));
    }
    driver.step().unwrap();
    assert_eq!(driver.switch().ledger().ports[0].queued(), 4);
    assert!(driver.switch().tm().is_paused(2, 3, clock.now()));
    let pfc_rx = driver.switch().tm().port_stats(2).unwrap().pfc_rx_frames;

    // The interface disappears: the next receive on it fails.
    link.set(Some(LinkDown::Gone));
    driver.step().unwrap();
    assert_eq!(driver.port_up(2), Some(false));
    assert_eq!(driver.port_up(0), Some(true));
    assert_eq!(driver.stats().port_down_events, 1);
    assert_eq!(oper_events(&events), vec![(2, Some(LinkDown::Gone))]);
    let sw = driver.switch();
    assert_eq!(sw.port_oper_up(2), Some(false));
    assert_eq!(sw.port_link_down(2), Some(LinkDown::Gone));
    assert!(
        !sw.tm().is_paused(2, 3, clock.now()),
        "the peer's pause ended"
    );
    assert_eq!(
        sw.tm().port_stats(2).unwrap().pfc_rx_frames,
        pfc_rx,
        "ending the pause is no received PFC frame"
    );
    let row = sw.ledger().ports[0];
    assert_eq!(row.queued(), 0, "what was queued for port 2 is released");
    assert_eq!(row.dropped(SwitchDrop::PortDown), 4);
    sw.conservation().unwrap();

    // While down, frames routed there are dropped under the named reason.
    for psn in 6..9 {
        send(&mut ours[0], &roce_frame(26, psn, 64));
    }
    driver.step().unwrap();
    let sw = driver.switch();
    assert_eq!(sw.ledger().ports[0].dropped(SwitchDrop::PortDown), 7);
    assert_eq!(sw.stats().dropped(SwitchDrop::PortDown), 7);
    sw.conservation().unwrap();

    // Still gone at the next link check: no reopen.
    let step = Duration::from_nanos(LINK_CHECK_INTERVAL.as_nanos() as u64);
    driver.advance_to(clock.now() + step).unwrap();
    assert_eq!(driver.port_up(2), Some(false));
    assert_eq!(driver.stats().port_up_events, 0);

    // The interface comes back; the next link check reopens the port.
    link.set(None);
    driver.advance_to(clock.now() + step).unwrap();
    assert_eq!(driver.port_up(2), Some(true));
    assert_eq!(driver.stats().port_up_events, 1);
    assert_eq!(oper_events(&events), vec![(2, None)]);
    assert_eq!(driver.switch().port_oper_up(2), Some(true));

    let frame = roce_frame(26, 9, 64);
    send(&mut ours[0], &frame);
    driver.step().unwrap();
    assert_eq!(
        recv_all(&mut ours[2]),
        vec![routed(&frame)],
        "forwards again, and nothing from while it was down"
    );
    let sw = driver.switch();
    assert_eq!(sw.ledger().ports[0].dropped(SwitchDrop::PortDown), 7);
    sw.conservation().unwrap();
}

#[test]
fn an_admin_down_link_is_noticed_by_the_link_check_without_traffic() {
    let (_ours, mut driver, clock, events, link, _cmd) = rig();
    driver.step().unwrap();
    link.set(Some(LinkDown::AdminDown));
    // Receives fail too on a memory port; only look at what the check says.
    let step = Duration::from_nanos(LINK_CHECK_INTERVAL.as_nanos() as u64);
    driver.advance_to(clock.now() + step).unwrap();
    assert_eq!(driver.port_up(2), Some(false));
    assert_eq!(oper_events(&events), vec![(2, Some(LinkDown::AdminDown))]);
    link.set(None);
    driver.advance_to(clock.now() + step).unwrap();
    assert_eq!(driver.port_up(2), Some(true));
    assert_eq!(oper_events(&events), vec![(2, None)]);
}

/// Set down, then deleted (the kernel clears IFF_UP before the interface
/// goes): the new cause is reported while the port stays down.
#[test]
fn a_down_port_reports_a_new_cause_without_going_down_twice() {
    let (_ours, mut driver, clock, events, link, _cmd) = rig();
    driver.step().unwrap();
    let step = Duration::from_nanos(LINK_CHECK_INTERVAL.as_nanos() as u64);
    link.set(Some(LinkDown::AdminDown));
    driver.advance_to(clock.now() + step).unwrap();
    assert_eq!(oper_events(&events), vec![(2, Some(LinkDown::AdminDown))]);
    link.set(Some(LinkDown::Gone));
    driver.advance_to(clock.now() + step).unwrap();
    assert_eq!(oper_events(&events), vec![(2, Some(LinkDown::Gone))]);
    driver.advance_to(clock.now() + step).unwrap();
    assert_eq!(oper_events(&events), vec![], "no repeat");
    assert_eq!(driver.port_up(2), Some(false));
    assert_eq!(driver.stats().port_down_events, 1, "one transition");
}

#[test]
fn errors_that_are_not_link_loss_still_end_the_run() {
    let (mut ours, mut driver, _clock, _events, _link, _cmd) = rig();
    drop(ours.remove(2));
    send(&mut ours[0], &roce_frame(26, 1, 64));
    assert!(matches!(driver.step(), Err(PortError::Disconnected)));
}
