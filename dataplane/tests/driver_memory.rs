//! The real-time driver on in-memory ports: frames in, routed frames out,
//! control-plane commands applied between packets, packet-ins delivered; a
//! command wakes an idle driver; the driver on a manual clock is
//! deterministic.
//!
//! ```text
//!  test ── port 0 ──┐                ┌── port 2 ── test
//!                   └─[ Driver(Switch) ]
//!  test ── port 1 ──┘
//! ```

mod common;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::channel;
use std::time::Duration;

use common::{roce_frame, routed, router};
use dataplane::driver::{
    Clock, Driver, DriverIo, DriverStats, ManualClock, PollMode, command_channel,
};
use dataplane::port::{FrameBuf, MemoryPort, Port};
use dataplane::roce::Program;
use dataplane::switch::{Switch, SwitchConfig, SwitchDrop};
use dataplane::time::Instant;

/// Long enough that a test waiting for the driver never fails on a slow
/// machine, and short enough that a broken wake-up fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(60);

fn recv_within(port: &mut MemoryPort, timeout: Duration) -> Option<Vec<u8>> {
    let mut bufs = FrameBuf::batch(1);
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        if port.recv_batch(&mut bufs).unwrap() == 1 {
            return Some(bufs[0].frame().to_vec());
        }
        port.wait_readable(Some(Duration::from_millis(10))).unwrap();
    }
    None
}

fn send(port: &mut MemoryPort, frame: &[u8]) {
    let mut b = FrameBuf::default();
    b.set_frame(frame);
    assert_eq!(port.send_batch(&[b]).unwrap(), 1);
}

/// Three in-memory links: the test's ends and the switch's ends.
fn links() -> (Vec<MemoryPort>, Vec<Box<dyn Port + Send>>) {
    let mut ours = Vec::new();
    let mut theirs: Vec<Box<dyn Port + Send>> = Vec::new();
    for i in 0..3 {
        let (a, b) = MemoryPort::pair(&format!("test{i}"), &format!("sw{i}"));
        ours.push(a);
        theirs.push(Box::new(b));
    }
    (ours, theirs)
}

fn quiet_io(commands: dataplane::driver::CommandReceiver<Program>) -> DriverIo<Program> {
    DriverIo {
        commands,
        packet_in: None,
        events: None,
        digests: None,
    }
}

#[test]
fn driver_routes_applies_commands_and_punts() {
    let (mut ours, theirs) = links();
    let switch = Switch::new(router(2), SwitchConfig::with_ports(3), Instant::ZERO).unwrap();
    let (cmd_tx, cmd_rx) = command_channel::<Program>().unwrap();
    let (pin_tx, pin_rx) = channel();
    let io = DriverIo {
        commands: cmd_rx,
        packet_in: Some(Box::new(move |f| {
            let _ = pin_tx.send(f);
        })),
        events: None,
        digests: None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let handle = std::thread::spawn(move || {
        let mut d = Driver::new(switch, theirs, io);
        d.run(&stop2).unwrap();
        d.stats()
    });

    let frame = roce_frame(26, 7, 256);
    send(&mut ours[0], &frame);
    let out = recv_within(&mut ours[2], Duration::from_secs(5)).expect("routed frame on port 2");
    assert_eq!(out, routed(&frame));

    // A command from the control plane: punt everything IPv4 from port 1.
    cmd_tx
        .send(Box::new(|sw: &mut Switch<Program>, _now| {
            use p4_target::pipeline::Pipeline;
            use p4_target::runtime::{EntryAction, FieldMatch, RuntimeApi, TableEntry};
            let acl = dataplane::roce::PROGRAM_INFO.table_by_name("acl").unwrap();
            let punt = common::action("punt_to_cpu", &[]);
            let mut matches = vec![None; acl.keys.len()];
            matches[0] = Some(FieldMatch::Ternary {
                value: 1,
                mask: 0x1ff,
            });
            sw.pipeline_mut()
                .runtime_mut()
                .table_insert(
                    acl.id,
                    TableEntry {
                        matches,
                        priority: 1,
                        action: EntryAction::Direct(punt),
                        metadata: Vec::new(),
                    },
                )
                .unwrap();
        }))
        .unwrap();
    send(&mut ours[1], &frame);
    let punted = pin_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("packet-in");
    assert_eq!(&punted[..2], &[0x00, 0x80], "packet_in.ingress_port = 1");
    assert_eq!(punted.len(), frame.len() + 2);
    assert!(
        recv_within(&mut ours[2], Duration::from_millis(200)).is_none(),
        "punted, not routed"
    );

    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let stats = handle.join().unwrap();
    assert_eq!(stats.commands, 1);
    assert_eq!(stats.rx_frames, 2);
    assert_eq!(stats.tx_frames, 1);
}

/// Runs `driver` until `run` returns, reporting its stats on a channel so
/// the test can wait with [`PATIENCE`] instead of hanging.
fn spawn_run(mut driver: Driver<Program, ManualClock>) -> std::sync::mpsc::Receiver<DriverStats> {
    let (done_tx, done_rx) = channel();
    std::thread::spawn(move || {
        let stop = AtomicBool::new(false);
        driver.run(&stop).unwrap();
        let _ = done_tx.send(driver.stats());
    });
    done_rx
}

/// An idle driver whose switch has no deadline, on a clock that never
/// moves, and allowed to sleep for an hour: only the command channel's
/// wake-up can make it turn.
fn sleepy_driver() -> (
    Driver<Program, ManualClock>,
    dataplane::driver::CommandSender<Program>,
    Vec<MemoryPort>,
) {
    let (ours, theirs) = links();
    let switch = Switch::new(router(2), SwitchConfig::with_ports(3), Instant::ZERO).unwrap();
    let (cmd_tx, cmd_rx) = command_channel::<Program>().unwrap();
    let driver = Driver::with_clock(switch, theirs, quiet_io(cmd_rx), ManualClock::default())
        .with_max_sleep(Duration::from_secs(3600));
    assert_eq!(driver.switch().poll_timeout(), None, "an idle switch");
    (driver, cmd_tx, ours)
}

#[test]
fn a_command_wakes_an_idle_driver() {
    let (driver, cmd_tx, _ours) = sleepy_driver();
    let done = spawn_run(driver);
    // Let it fall asleep first (not needed for correctness: a command sent
    // before the sleep is seen by the next turn).
    std::thread::sleep(Duration::from_millis(20));
    let (reply_tx, reply_rx) = channel();
    cmd_tx
        .send(Box::new(move |sw, now| {
            let _ = reply_tx.send((now, sw.num_ports()));
        }))
        .unwrap();
    let (now, ports) = reply_rx
        .recv_timeout(PATIENCE)
        .expect("the command ran although the driver had an hour to sleep");
    assert_eq!((now, ports), (Instant::ZERO, 3), "run at the clock's time");
    drop(cmd_tx);
    let stats = done.recv_timeout(PATIENCE).expect("run returned");
    assert_eq!(stats.commands, 1);
    assert!(stats.command_wakes >= 1, "{stats:?}");
}

#[test]
fn run_returns_once_every_sender_is_dropped() {
    let (driver, cmd_tx, _ours) = sleepy_driver();
    let clone = cmd_tx.clone();
    let done = spawn_run(driver);
    drop(cmd_tx);
    // One sender left: still running, and still taking commands.
    let (reply_tx, reply_rx) = channel();
    clone
        .send(Box::new(move |_sw, _now| {
            let _ = reply_tx.send(());
        }))
        .unwrap();
    reply_rx
        .recv_timeout(PATIENCE)
        .expect("the clone's command ran");
    assert!(done.try_recv().is_err(), "a sender is left, so run goes on");
    drop(clone);
    let stats = done
        .recv_timeout(PATIENCE)
        .expect("run returned after the last sender went");
    assert_eq!(stats.commands, 1);
}

/// A frame the test sends (time, port, frame) or sees leave the switch.
type Timed = (Instant, u16, Vec<u8>);

/// Runs the driver on a manual clock over a recorded input, stepping from
/// deadline to deadline; returns every frame the switch sent, stamped with
/// the clock's time when it left.
fn replay(input: &[Timed], end: Instant) -> Vec<Timed> {
    let (mut ours, theirs) = links();
    let mut config = SwitchConfig::with_ports(3);
    config.tm.ports[2].speed_bps = 1_000_000_000;
    let switch = Switch::new(router(2), config, Instant::ZERO).unwrap();
    let (_cmd_tx, cmd_rx) = command_channel::<Program>().unwrap();
    let clock = ManualClock::new(Instant::ZERO);
    let mut driver = Driver::with_clock(switch, theirs, quiet_io(cmd_rx), clock);
    let mut out = Vec::new();
    let mut drive_to =
        |driver: &mut Driver<Program, ManualClock>, ours: &mut [MemoryPort], until: Instant| {
            let mut now = driver.clock().now();
            loop {
                assert!(driver.advance_to(now).unwrap());
                let mut bufs = FrameBuf::batch(8);
                for (port, link) in ours.iter_mut().enumerate() {
                    while let n @ 1.. = link.recv_batch(&mut bufs).unwrap() {
                        for b in &bufs[..n] {
                            out.push((now, port as u16, b.frame().to_vec()));
                        }
                    }
                }
                if now >= until {
                    return;
                }
                now = match driver.switch().poll_timeout() {
                    Some(deadline) if deadline > now && deadline < until => deadline,
                    _ => until,
                };
            }
        };
    for (t, port, frame) in input {
        drive_to(&mut driver, &mut ours, *t);
        send(&mut ours[usize::from(*port)], frame);
    }
    drive_to(&mut driver, &mut ours, end);
    out
}

#[test]
fn on_a_manual_clock_the_driver_replays_exactly_and_paces_at_port_speed() {
    let frame = roce_frame(26, 7, 1000);
    let mut input: Vec<Timed> = (0..6)
        .map(|_| (Instant::from_micros(10), 0, frame.clone()))
        .collect();
    input.push((Instant::from_millis(1), 1, frame.clone()));
    let end = Instant::from_millis(2);

    let first = replay(&input, end);
    assert_eq!(first, replay(&input, end), "same input, same output");

    assert_eq!(first.len(), 7, "{first:?}");
    assert!(
        first
            .iter()
            .all(|(_, port, f)| *port == 2 && *f == routed(&frame))
    );
    let times: Vec<Instant> = first.iter().map(|(t, _, _)| *t).collect();
    assert_eq!(
        times[0],
        Instant::from_micros(10),
        "received and sent at once"
    );
    // The shaper's 1536-byte bucket lets two frames go together; the rest
    // leave one serialisation time apart at 1 Gb/s.
    let serialise = dataplane::time::bits_time(frame.len() as u64, 1_000_000_000);
    for w in times[2..6].windows(2) {
        assert!(w[1] - w[0] >= serialise, "{times:?}");
    }
    assert_eq!(
        times[6],
        Instant::from_millis(1),
        "the late frame left on arrival"
    );
}

/// A port that says the kernel lost `pending` frames before it could read
/// them (what an `AF_PACKET` socket reports through `PACKET_STATISTICS`).
struct LossyPort {
    inner: MemoryPort,
    pending: Arc<std::sync::atomic::AtomicU64>,
}

impl Port for LossyPort {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn recv_batch(&mut self, bufs: &mut [FrameBuf]) -> Result<usize, dataplane::port::PortError> {
        self.inner.recv_batch(bufs)
    }
    fn send_batch(&mut self, bufs: &[FrameBuf]) -> Result<usize, dataplane::port::PortError> {
        self.inner.send_batch(bufs)
    }
    fn wait_readable(
        &mut self,
        timeout: Option<Duration>,
    ) -> Result<bool, dataplane::port::PortError> {
        self.inner.wait_readable(timeout)
    }
    fn take_rx_lost(&mut self) -> Result<u64, dataplane::port::PortError> {
        Ok(self.pending.swap(0, std::sync::atomic::Ordering::Relaxed))
    }
}

#[test]
fn frames_the_kernel_lost_are_charged_to_their_port_as_kernel_ring_drops() {
    let (mut ours, mut theirs) = links();
    let pending = Arc::new(std::sync::atomic::AtomicU64::new(0));
    // Port 1 of the switch reports losses; frames still arrive through it.
    drop(theirs.remove(1));
    let (a, b) = MemoryPort::pair("test1", "sw1");
    ours[1] = a;
    theirs.insert(
        1,
        Box::new(LossyPort {
            inner: b,
            pending: pending.clone(),
        }),
    );
    let switch = Switch::new(router(2), SwitchConfig::with_ports(3), Instant::ZERO).unwrap();
    let (_cmd_tx, cmd_rx) = command_channel::<Program>().unwrap();
    let clock = ManualClock::new(Instant::ZERO);
    let mut driver = Driver::with_clock(switch, theirs, quiet_io(cmd_rx), clock.clone());

    pending.store(7, std::sync::atomic::Ordering::Relaxed);
    send(&mut ours[1], &roce_frame(26, 1, 64));
    driver.step().unwrap();
    assert_eq!(
        recv_within(&mut ours[2], PATIENCE),
        Some(routed(&roce_frame(26, 1, 64)))
    );
    // Within one check interval the loss is not asked again...
    pending.store(5, std::sync::atomic::Ordering::Relaxed);
    driver.step().unwrap();
    assert_eq!(driver.stats().rx_kernel_drops, 7);
    // ...after it, it is; and a final collect picks up the rest.
    clock.advance(dataplane::time::Duration::from_millis(2));
    driver.step().unwrap();
    assert_eq!(driver.stats().rx_kernel_drops, 12);

    let sw = driver.switch();
    let row = &sw.ledger().ports[1];
    assert_eq!(row.dropped(SwitchDrop::KernelRing), 12);
    assert_eq!(row.arrived, 13, "lost frames arrived at the port too");
    assert_eq!(sw.stats().dropped(SwitchDrop::KernelRing), 12);
    sw.conservation().unwrap();
}

// ---- Poll modes ----

#[test]
fn a_busy_driver_forwards_and_answers_commands_without_sleeping() {
    let (mut ours, theirs) = links();
    let switch = Switch::new(router(2), SwitchConfig::with_ports(3), Instant::ZERO).unwrap();
    let (cmd_tx, cmd_rx) = command_channel::<Program>().unwrap();
    // An hour's sleep allowed: were it to sleep, the frame would wait.
    let driver = Driver::new(switch, theirs, quiet_io(cmd_rx))
        .with_poll_mode(PollMode::Busy)
        .with_max_sleep(Duration::from_secs(3600));
    assert_eq!(driver.poll_mode(), PollMode::Busy);
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let (done_tx, done_rx) = channel();
    std::thread::spawn(move || {
        let mut d = driver;
        d.run(&stop2).unwrap();
        let _ = done_tx.send(d.stats());
    });

    let frame = roce_frame(26, 7, 256);
    send(&mut ours[0], &frame);
    let out = recv_within(&mut ours[2], PATIENCE).expect("routed frame on port 2");
    assert_eq!(out, routed(&frame));
    for round in 0..3 {
        let (reply_tx, reply_rx) = channel();
        cmd_tx
            .send(Box::new(move |sw, _now| {
                let _ = reply_tx.send(sw.num_ports());
            }))
            .unwrap();
        assert_eq!(reply_rx.recv_timeout(PATIENCE), Ok(3), "command {round}");
    }
    send(&mut ours[1], &frame);
    let out = recv_within(&mut ours[2], PATIENCE).expect("second routed frame");
    assert_eq!(out, routed(&frame));

    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let stats = done_rx.recv_timeout(PATIENCE).expect("run returned");
    assert_eq!(stats.commands, 3);
    assert_eq!((stats.rx_frames, stats.tx_frames), (2, 2));
    assert_eq!(stats.sleeps, 0, "a busy driver never sleeps: {stats:?}");
    assert_eq!(stats.command_wakes, 0, "{stats:?}");
}

#[test]
fn each_poll_mode_spins_or_sleeps_after_an_idle_turn() {
    // On a clock that never moves, an idle turn of each mode.
    let turn_idle = |mode| {
        let (driver, _cmd_tx, _ours) = sleepy_driver();
        let mut driver = driver
            .with_poll_mode(mode)
            .with_max_sleep(Duration::from_millis(1));
        assert!(driver.turn().unwrap());
        let s = driver.stats();
        (s.spins, s.sleeps)
    };
    assert_eq!(turn_idle(PollMode::Sleep), (0, 1));
    assert_eq!(turn_idle(PollMode::Busy), (1, 0));
    // Adaptive spins within ADAPTIVE_SPIN of the last busy turn (the clock
    // still reads its start), then sleeps.
    assert_eq!(turn_idle(PollMode::Adaptive), (1, 0));
    let (driver, _cmd_tx, _ours) = sleepy_driver();
    let mut driver = driver
        .with_poll_mode(PollMode::Adaptive)
        .with_max_sleep(Duration::from_millis(1));
    let later = Instant::ZERO
        + dataplane::time::Duration::from_nanos(dataplane::driver::ADAPTIVE_SPIN.as_nanos() as u64);
    driver.clock().set(later);
    assert!(driver.turn().unwrap());
    assert_eq!((driver.stats().spins, driver.stats().sleeps), (0, 1));
}
