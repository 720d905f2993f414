//! The real-time driver: runs a [`Switch`] on real ports. It is the only
//! place in the dataplane that reads a clock or touches a socket;
//! everything it drives is sans-IO.
//!
//! One thread owns the switch. Each turn of [`Driver::run`]:
//! 1. applies control-plane commands (closures over the switch) that
//!    arrived since the last turn, so table writes happen between packets
//!    and the per-packet path never waits for a lock;
//! 2. receives a batch on every port and hands each frame to the switch
//!    where it lies ([`Port::recv_with`]: in the receive ring's slot, no
//!    copy; looking at an empty ring is one memory load, no system call);
//! 3. runs the switch's timers and collects what each port may send now,
//!    up to [`BATCH`] frames, written into the port's transmit ring
//!    ([`Port::send_with`]) and handed to the kernel with one system call
//!    per port (what the kernel refuses is kept and offered again, never
//!    dropped);
//! 4. forwards packet-ins, digests and traffic-manager events to their
//!    callbacks;
//! 5. when the turn moved no frame, sleeps in `ppoll(2)` until a frame
//!    arrives, a command is sent or the switch's next deadline
//!    ([`Switch::poll_timeout`]) comes, at most [`MAX_SLEEP`] — or, in
//!    the [`PollMode::Busy`] mode, turns again at once after a pause hint
//!    (in [`PollMode::Adaptive`], for [`ADAPTIVE_SPIN`] after the last turn
//!    that moved a frame); see "Poll modes" below.
//!
//! [`Driver::run`] asks for nice [`DATAPLANE_NICE`]: on a machine busy with
//! other work the thread woken by a frame then runs before the compilers
//! (and the control plane, at nice 5). Measured with `fwdbench` (64 B,
//! release, 2 rounds of 3 trials, load average 10–12 from other builds):
//! 100 kpps forwarded and 5,046 frames lost in the kernel's receive ring
//! at nice −10 against 85 kpps and 327,880 lost at nice 0, p99 latency 28
//! against 60 µs. Polling the rings for 50 µs after each busy turn
//! instead of sleeping (with or without a `sched_yield` in the spin) did
//! not lower the median latency there and cost up to 1 ms at p99: on two
//! shared cores the spinning thread delays the sink it just woke.
//! `rocelab run` goes further and starts a namespace lab real-time
//! (`SCHED_FIFO`, [`raise_thread_priority`]), switches and agents alike.
//!
//! **Poll modes** ([`Driver::with_poll_mode`], [`cpu`]). Sleeping costs a
//! frame that finds the switch idle two thread wake-ups on its way (the
//! switch's, then the receiver's), which a Linux bridge, forwarding in the
//! sender's softirq, does not pay: +13.4 µs p50 over the bridge at 64 B.
//! [`PollMode::Busy`] never sleeps; on a core of its own
//! ([`cpu::pin_current_thread`]; `roceswitch --dataplane-poll busy
//! --dataplane-cpu N`) a frame is seen within one turn of the loop. It
//! costs that whole core, idle or not. Commands still run between turns
//! (the queue is looked at every turn, no eventfd needed), and the stop
//! flag is read every turn. Figures: README, forwarding row, "#17 (lat24)".
//!
//! **Waking for commands.** The poll set holds, besides every port's
//! descriptor, the eventfd of the command channel ([`command`]): sending a
//! command signals it, so an idle switch applies a table write as soon as
//! the dataplane thread is scheduled, not when its sleep runs out. Before,
//! a command sent to an idle daemon waited for the rest of the 5 ms sleep.
//! Measured with `cargo bench -p control --bench write_latency` (release,
//! 2-core VM at load average 2–6 from other builds, 2,000 samples after
//! idle gaps, 10 runs), before → after:
//!
//! | p50 / p99 | before | after |
//! |---|---|---|
//! | command sent → running on the dataplane thread | 3.2 / 4.7–7.8 ms | 14–23 µs / 55 µs–1.8 ms |
//! | one-update P4Runtime `Write` sent → applying | 3.1 / 4.4–8.5 ms | 0.18–0.24 / 0.8–3.6 ms |
//! | … of which the service's submit → applying | 2.8 / 5.0–7.9 ms | 17–30 µs / 0.08–2.5 ms |
//!
//! The command p99 was under 100 µs in 6 of the 10 runs; the rest of every
//! tail is the dataplane thread waiting for a CPU the builds held (run at
//! nice −10, the command p99 was 64–77 µs). What is left of a write's
//! latency is gRPC and the service, p50 150–250 µs here. [`MAX_SLEEP`]
//! remains as a backstop for the stop flag and for ports without a
//! descriptor (looked at every 100 µs); in-memory ports
//! ([`crate::port::MemoryPort`]) have one.
//!
//! **The clock seam.** The driver reads time only through its [`Clock`]:
//! [`MonotonicClock`] in the daemon (a wall-clock jump changes nothing),
//! [`ManualClock`] in tests. With a manual clock and in-memory ports a
//! test drives the real loop deterministically: [`Driver::step`] runs one
//! turn without sleeping, and [`Driver::advance_to`] moves the clock
//! through every switch deadline up to a chosen instant, stepping at each,
//! the way the simulator jumps its clock to the earliest `poll_timeout`.
//!
//! **Links that go away.** A port error that means the link is gone or
//! down ([`PortError::link_down`]: `ENXIO`, `ENODEV`, `ENETDOWN`) does not
//! end the loop: the driver marks that port down, tells the switch
//! ([`Switch::set_port_oper`], which drops what is sent to it as
//! [`crate::switch::SwitchDrop::PortDown`]), discards the frames it had
//! taken for it but not sent (counted in
//! [`DriverStats::tx_lost_link_down`]), and stops reading and writing it
//! (its descriptor leaves the poll set: a socket whose interface vanished
//! polls as an error forever). Every [`LINK_CHECK_INTERVAL`] of the
//! driver's clock, off the packet path, it asks each down port to
//! [`Port::reopen`] and each up port for its [`Port::link_check`] (so an
//! interface set down, or deleted and re-created, is noticed without
//! traffic). Downs log a warning, ups an info line; both are counted.
//!
//! Contract: the loop itself allocates only when a port's pool of sent
//! buffers grows; port errors other than link loss end [`Driver::run`] and
//! are returned; nothing here panics on traffic.

pub mod clock;
pub mod command;
pub mod cpu;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::TryRecvError;

use p4_target::pipeline::Pipeline;

pub use self::clock::{Clock, ManualClock, MonotonicClock};
pub use self::command::{Command, CommandReceiver, CommandSender, command_channel};
pub use self::cpu::PollMode;
use crate::port::{FrameBuf, LinkDown, Port, PortError};
use crate::switch::{Digest, Switch, SwitchEvent};
use crate::time::Instant;

/// Frames moved per port per batch.
pub const BATCH: usize = 64;

/// Longest sleep between turns by default ([`Driver::with_max_sleep`]), so
/// the stop flag is seen.
pub const MAX_SLEEP: std::time::Duration = std::time::Duration::from_millis(5);

/// How long [`PollMode::Adaptive`] spins after the last turn that moved a
/// frame before it sleeps: longer than the gap between the frames of a
/// train or a request and its answer, short enough that an idle switch
/// soon stops taking a core.
pub const ADAPTIVE_SPIN: std::time::Duration = std::time::Duration::from_micros(100);

/// How often ports without a poll descriptor are looked at while idle.
const UNPOLLED_PORT_NAP: std::time::Duration = std::time::Duration::from_micros(100);

/// How often the ports are asked for frames the kernel lost
/// ([`Port::take_rx_lost`], a system call per port).
pub const RX_LOST_INTERVAL: std::time::Duration = std::time::Duration::from_millis(1);

/// How often down ports are asked to reopen and up ports whether their
/// link is still there ([`Port::reopen`], [`Port::link_check`]).
pub const LINK_CHECK_INTERVAL: std::time::Duration = std::time::Duration::from_millis(200);

/// How long to wait for the kernel to take a transmit backlog.
const BACKLOG_NAP: std::time::Duration = std::time::Duration::from_micros(50);

/// Nice value the dataplane thread asks for in [`Driver::run`] (root
/// only; refused silently otherwise): woken by a frame on a machine busy
/// with other work, it should run before compilers and the control plane.
pub const DATAPLANE_NICE: libc::c_int = -10;

/// Real-time priority (`SCHED_FIFO`) a thread standing in for hardware
/// asks for with [`raise_thread_priority`]: the lowest, which is above
/// every normal thread however nice. A nice value still shares the CPU
/// with busy processes (a woken thread can wait milliseconds for a CPU
/// hog's slice); a real-time one preempts them at once. The kernel's
/// real-time throttling (by default 95 % of each second) leaves the rest
/// of the machine a share even if such a thread never slept.
pub const REALTIME_PRIORITY: libc::c_int = 1;

/// What [`raise_thread_priority`] obtained for the calling thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadPriority {
    /// `SCHED_FIFO` at [`REALTIME_PRIORITY`].
    Realtime,
    /// Nice [`DATAPLANE_NICE`].
    Nice,
    /// Neither was granted (not root): as it was.
    Unchanged,
}

/// Raises the calling thread's priority: real-time if `realtime` and
/// granted, else nice [`DATAPLANE_NICE`] (both need root; refusals are
/// logged at debug level and leave the thread as it was). A thread that is
/// real-time already (started by a real-time lab) is left so.
pub fn raise_thread_priority(realtime: bool) -> ThreadPriority {
    // SAFETY: sched_getscheduler on the calling thread only reads.
    if unsafe { libc::sched_getscheduler(0) } == libc::SCHED_FIFO {
        return ThreadPriority::Realtime;
    }
    if realtime {
        let param = libc::sched_param {
            sched_priority: REALTIME_PRIORITY,
        };
        // SAFETY: sched_setscheduler on the calling thread (pid 0) with a
        // valid, initialised parameter.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0 {
            return ThreadPriority::Realtime;
        }
        tracing::debug!(
            error = %std::io::Error::last_os_error(),
            "no real-time priority; asking for a nice value instead"
        );
    }
    // SAFETY: setpriority on the calling thread with plain integers.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, DATAPLANE_NICE) } == 0 {
        return ThreadPriority::Nice;
    }
    tracing::debug!(
        error = %std::io::Error::last_os_error(),
        "thread keeps its priority"
    );
    ThreadPriority::Unchanged
}

/// How late a turn may come, for sizing port shapers
/// ([`crate::tm::PortConfig::shaper_burst_ns`]): a turn that handles full
/// receive batches on several ports takes tens of microseconds, and a port
/// whose shaper could not bank that much credit would send below its
/// speed. It is also what an idle port may send at once: two
/// [`SHAPER_TRAIN_NS`], one train of a lab host's (its pacing burst). On
/// fast ports [`train_ns`] cuts it to [`TRAIN_MAX_BYTES`]: a deeper idle
/// bucket lets bursts through faster than the port's speed and hides the
/// queue they would make.
pub const TURN_SLACK_NS: u64 = 500_000;

/// What a backlogged port's shaper banks beyond [`TURN_SLACK_NS`]
/// ([`crate::tm::PortConfig::shaper_catch_up_ns`]), so that a turn that
/// comes late makes up what the port missed. On a machine busy with other
/// work the thread waits for a CPU: beside two CPU-bound processes and
/// other builds (2 cores, load ~10, `perf sched latency`) its wake-ups
/// came 18 µs late on average and up to 5.2 ms; with only the 100 µs
/// bucket this was, the bottleneck port lost what was late beyond it and
/// the fixed-rate incast at 1 Gb/s fell to 0.75–0.85 of its rate (0.89–0.98
/// on a quiet machine). An idle port banks none of it, so arrivals after idle meet the
/// port's speed, not a burst allowance that would hide their queue.
pub const CATCH_UP_NS: u64 = 2_000_000;

/// The train a backlogged port waits for before it wakes the loop
/// ([`crate::tm::PortConfig::shaper_train_ns`]): frames leave in trains of
/// up to this much wire time, so a port busy at 1 Gb/s wakes the loop
/// (and the host it sends to) about 4,000 times a second, not once every
/// 33 µs 4 KiB frame, each of those wake-ups a context switch on both
/// sides (half of a 1 Gb/s receiver's CPU was switching, `perf record`).
/// The mean rate stays the port's speed. On fast ports [`train_ns`]
/// shortens it to [`TRAIN_MAX_BYTES`].
pub const SHAPER_TRAIN_NS: u64 = 250_000;

/// Most bytes a software device sends at once: a switch port's train
/// ([`SHAPER_TRAIN_NS`]) and idle bucket ([`TURN_SLACK_NS`]), a lab host's
/// pacing burst. Sized in time alone they grow with the line rate: at
/// 10 Gb/s a 250 µs train is 312 KB and a host's 500 µs burst 625 KB, past
/// the lab's ECN Kmax (200 KB), and DCQCN reacts to the trains, not to the
/// congestion. In the simulator's 10 Gb/s incast with these settings
/// (README, "#17 (lab25)") the DCQCN queue sat empty (median 0 KB, 2 % of
/// samples between Kmin and Kmax); capped at 64 KiB, median 17 KB and
/// 47 %, as at 1 Gb/s with the uncapped ones (25 KB, 52 %). 64 KiB, a
/// third of that Kmax, leaves 1 Gb/s unchanged (31, 62.5 and 62.5 KB).
pub const TRAIN_MAX_BYTES: u64 = 64 * 1024;

/// At most `longest_ns` of wire time at `speed_bps`, and at most
/// [`TRAIN_MAX_BYTES`], ns. 0 stays 0.
pub fn train_ns(longest_ns: u64, speed_bps: u64) -> u64 {
    let cap_ns = u128::from(TRAIN_MAX_BYTES) * 8 * 1_000_000_000 / u128::from(speed_bps.max(1));
    longest_ns.min(u64::try_from(cap_ns).unwrap_or(u64::MAX))
}

/// Where the driver takes commands from and reports to.
pub struct DriverIo<P: Pipeline> {
    /// Control-plane operations to apply.
    pub commands: CommandReceiver<P>,
    /// Called with each frame for the controller (with its `packet_in` header).
    pub packet_in: Option<Box<dyn FnMut(Vec<u8>) + Send>>,
    /// Called with each switch event (the TM's pauses, storms, headroom
    /// overflows; the DCBX agents' neighbour and mismatch changes).
    pub events: Option<Box<dyn FnMut(SwitchEvent) + Send>>,
    /// Called with each digest the program emits (dropped when `None`).
    pub digests: Option<Box<dyn FnMut(Digest) + Send>>,
}

impl<P: Pipeline> std::fmt::Debug for DriverIo<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DriverIo")
            .field("packet_in", &self.packet_in.is_some())
            .field("events", &self.events.is_some())
            .field("digests", &self.digests.is_some())
            .finish()
    }
}

/// Counters of the driver itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DriverStats {
    /// Turns of the loop.
    pub turns: u64,
    /// Frames received from ports.
    pub rx_frames: u64,
    /// Frames the kernel accepted for sending.
    pub tx_frames: u64,
    /// Times a port's kernel queue was full and frames were kept for later.
    pub tx_backpressure: u64,
    /// Frames the kernel dropped before the driver could read them (all
    /// ports; the switch counts them per port as
    /// [`crate::switch::SwitchDrop::KernelRing`]).
    pub rx_kernel_drops: u64,
    /// Control-plane commands applied.
    pub commands: u64,
    /// Sleeps ended by the command channel's wake-up (a command sent, or a
    /// sender dropped).
    pub command_wakes: u64,
    /// Times the thread slept in `ppoll(2)` after an idle turn.
    pub sleeps: u64,
    /// Idle turns followed by a pause hint and another turn instead of a
    /// sleep ([`PollMode::Busy`], [`PollMode::Adaptive`]).
    pub spins: u64,
    /// Times a port's link was found gone or down.
    pub port_down_events: u64,
    /// Times a down port was reopened.
    pub port_up_events: u64,
    /// Frames taken from the switch for a port whose link then failed,
    /// never sent.
    pub tx_lost_link_down: u64,
}

/// What one turn found to do ([`Driver::step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Frames moved: turn again at once.
    Busy,
    /// No frame moved: the switch waits for a frame, a command or its next
    /// deadline.
    Idle,
    /// Every command sender is gone (the turn did nothing else).
    Closed,
}

struct PortIo {
    port: Box<dyn Port + Send>,
    rx: Vec<FrameBuf>,
    /// Frames taken from the switch and not yet accepted by the kernel.
    tx: VecDeque<FrameBuf>,
    /// Sent-buffer pool.
    spare: Vec<FrameBuf>,
    /// `Some` while the link is down: neither read nor written.
    down: Option<LinkDown>,
}

/// Runs a switch on ports; see the module doc.
pub struct Driver<P: Pipeline, C: Clock = MonotonicClock> {
    switch: Switch<P>,
    ports: Vec<PortIo>,
    io: DriverIo<P>,
    clock: C,
    max_sleep: std::time::Duration,
    poll_mode: PollMode,
    /// When a turn last moved a frame ([`PollMode::Adaptive`] spins for
    /// [`ADAPTIVE_SPIN`] after it).
    last_busy: Instant,
    /// The command channel's descriptor first, then every port that has one.
    poll_set: Vec<libc::pollfd>,
    /// Some port has no descriptor and must be looked at by timer.
    unpolled_ports: bool,
    scratch: Vec<u8>,
    stats: DriverStats,
    /// Where finished packet traces go (dropped when `None`).
    trace_sink: Option<TraceSink>,
    /// When the ports are next asked for kernel losses.
    next_rx_lost_check: Instant,
    /// When links are next checked and down ports asked to reopen.
    next_link_check: Instant,
}

/// Called on the dataplane thread with each finished packet trace; it must
/// not block (hand the trace to a bounded queue and drop it when full).
pub type TraceSink = Box<dyn FnMut(p4_target::trace::PacketTrace) + Send>;

impl<P: Pipeline, C: Clock> std::fmt::Debug for Driver<P, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("switch", &self.switch)
            .field("stats", &self.stats)
            .finish()
    }
}

impl<P: Pipeline> Driver<P> {
    /// A driver for `switch` whose port `i` is `ports[i]`, on the monotonic
    /// clock (its epoch is now).
    pub fn new(switch: Switch<P>, ports: Vec<Box<dyn Port + Send>>, io: DriverIo<P>) -> Self {
        Driver::with_clock(switch, ports, io, MonotonicClock::new())
    }
}

impl<P: Pipeline, C: Clock> Driver<P, C> {
    /// A driver for `switch` whose port `i` is `ports[i]`, reading time from
    /// `clock`.
    pub fn with_clock(
        switch: Switch<P>,
        ports: Vec<Box<dyn Port + Send>>,
        io: DriverIo<P>,
        clock: C,
    ) -> Self {
        let ports: Vec<PortIo> = ports
            .into_iter()
            .map(|port| PortIo {
                port,
                rx: FrameBuf::batch(BATCH),
                tx: VecDeque::with_capacity(BATCH),
                spare: Vec::new(),
                down: None,
            })
            .collect();
        let mut driver = Driver {
            switch,
            ports,
            io,
            clock,
            max_sleep: MAX_SLEEP,
            poll_mode: PollMode::default(),
            last_busy: Instant::ZERO,
            poll_set: Vec::new(),
            unpolled_ports: false,
            scratch: Vec::with_capacity(16 * 1024),
            stats: DriverStats::default(),
            trace_sink: None,
            next_rx_lost_check: Instant::ZERO,
            next_link_check: Instant::ZERO,
        };
        driver.rebuild_poll_set();
        driver
    }

    /// The command channel's descriptor, then those of the up ports (a
    /// port's descriptor changes when it is reopened).
    fn rebuild_poll_set(&mut self) {
        let pollfd = |fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        self.poll_set.clear();
        self.poll_set.push(pollfd(self.io.commands.wake_fd()));
        let up = || self.ports.iter().filter(|p| p.down.is_none());
        self.poll_set
            .extend(up().filter_map(|p| p.port.poll_fd()).map(pollfd));
        self.unpolled_ports = up().any(|p| p.port.poll_fd().is_none());
    }

    /// Whether port `i`'s link is up as the driver sees it (`None`: no such
    /// port).
    pub fn port_up(&self, i: usize) -> Option<bool> {
        self.ports.get(i).map(|p| p.down.is_none())
    }

    /// Sets the longest sleep between turns (default [`MAX_SLEEP`]); the
    /// stop flag of [`Driver::run`] is looked at no less often.
    pub fn with_max_sleep(mut self, max_sleep: std::time::Duration) -> Self {
        self.max_sleep = max_sleep;
        self
    }

    /// Sets what the thread does after a turn that moved no frame (default
    /// [`PollMode::Sleep`]).
    pub fn with_poll_mode(mut self, mode: PollMode) -> Self {
        self.poll_mode = mode;
        self
    }

    /// What the thread does after a turn that moved no frame.
    pub fn poll_mode(&self) -> PollMode {
        self.poll_mode
    }

    /// Hands finished packet traces ([`Switch::poll_trace`]) to `sink`
    /// each turn; a trace request itself travels as a command.
    pub fn with_trace_sink(mut self, sink: TraceSink) -> Self {
        self.trace_sink = Some(sink);
        self
    }

    /// The switch (for inspection, e.g. its next deadline).
    pub fn switch(&self) -> &Switch<P> {
        &self.switch
    }

    /// Gives the switch back (after [`Driver::run`] returned).
    pub fn into_switch(self) -> Switch<P> {
        self.switch
    }

    /// The clock the driver reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Driver counters.
    pub fn stats(&self) -> DriverStats {
        self.stats
    }

    /// Runs until `stop` is set or the command channel closes.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<(), PortError> {
        // The default 50 µs timer slack would make every shaper wake-up late.
        // SAFETY: PR_SET_TIMERSLACK takes an integer and affects this thread only.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong) };
        // A thread that is already real-time (`rocelab run` starts its
        // whole lab so) stays so.
        let priority = raise_thread_priority(false);
        tracing::debug!(?priority, poll_mode = %self.poll_mode, "dataplane thread priority");
        while !stop.load(Ordering::Relaxed) {
            if !self.turn()? {
                break;
            }
        }
        Ok(())
    }

    /// One turn of the loop, then, if it moved no frame, a sleep or (as the
    /// [`PollMode`] says) a pause hint; `false` when the control plane has
    /// gone away.
    pub fn turn(&mut self) -> Result<bool, PortError> {
        match self.step()? {
            Turn::Closed => Ok(false),
            Turn::Busy => {
                // Only the adaptive mode looks at it: no clock read a turn
                // otherwise.
                if self.poll_mode == PollMode::Adaptive {
                    self.last_busy = self.clock.now();
                }
                Ok(true)
            }
            Turn::Idle if self.spins_when_idle() => {
                self.stats.spins += 1;
                // Tells the core it is a spin loop (x86 `pause`): less
                // power, and a sibling hyper-thread gets the pipeline.
                std::hint::spin_loop();
                Ok(true)
            }
            Turn::Idle => {
                self.sleep()?;
                Ok(true)
            }
        }
    }

    /// Whether an idle turn is followed by another at once, not a sleep.
    fn spins_when_idle(&self) -> bool {
        match self.poll_mode {
            PollMode::Sleep => false,
            PollMode::Busy => true,
            PollMode::Adaptive => {
                let idle = self.clock.now().saturating_duration_since(self.last_busy);
                idle.as_nanos() < ADAPTIVE_SPIN.as_nanos() as u64
            }
        }
    }

    /// One turn of the loop without sleeping (steps 1–4 of the module doc).
    pub fn step(&mut self) -> Result<Turn, PortError> {
        self.stats.turns += 1;
        let mut applied = false;
        loop {
            match self.io.commands.try_recv() {
                Ok(cmd) => {
                    cmd(&mut self.switch, self.clock.now());
                    self.stats.commands += 1;
                    applied = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return Ok(Turn::Closed),
            }
        }
        // A busy loop never polls the eventfd that sleep clears: clear it
        // here (one read, only when commands came), so its counter does not
        // grow without end.
        if applied && self.poll_mode == PollMode::Busy {
            self.io.commands.clear_wake();
        }
        let mut received = 0;
        for i in 0..self.ports.len() {
            let p = &mut self.ports[i];
            if p.down.is_some() {
                continue;
            }
            let now = self.clock.now();
            let switch = &mut self.switch;
            let port = i as u16;
            let got = p.port.recv_with(&mut p.rx, &mut |frame| {
                switch.handle_frame(port, frame, now);
            });
            match got {
                Ok(n) => received += n,
                Err(e) => self.port_failed(i, e)?,
            }
        }
        self.stats.rx_frames += received as u64;
        let now = self.clock.now();
        if now >= self.next_rx_lost_check {
            self.collect_rx_lost()?;
            self.next_rx_lost_check =
                now + crate::time::Duration::from_nanos(RX_LOST_INTERVAL.as_nanos() as u64);
        }
        if now >= self.next_link_check {
            self.check_links();
            self.next_link_check =
                now + crate::time::Duration::from_nanos(LINK_CHECK_INTERVAL.as_nanos() as u64);
        }
        self.switch.handle_timeout(now);
        let mut sent_any = false;
        for i in 0..self.ports.len() {
            if self.ports[i].down.is_some() {
                continue;
            }
            match self.transmit(i, now) {
                Ok(sent) => sent_any |= sent,
                Err(e) => self.port_failed(i, e)?,
            }
        }
        while let Some(frame) = self.switch.poll_packet_in() {
            if let Some(deliver) = &mut self.io.packet_in {
                deliver(frame);
            }
        }
        while let Some(digest) = self.switch.poll_digest() {
            if let Some(deliver) = &mut self.io.digests {
                deliver(digest);
            }
        }
        while let Some(trace) = self.switch.poll_trace() {
            if let Some(deliver) = &mut self.trace_sink {
                deliver(trace);
            }
        }
        while let Some(event) = self.switch.poll_event() {
            tracing::debug!(?event, "switch event");
            if let Some(deliver) = &mut self.io.events {
                deliver(event);
            }
        }
        Ok(if received == 0 && !sent_any {
            Turn::Idle
        } else {
            Turn::Busy
        })
    }

    /// Asks every port for the frames the kernel lost since the last call
    /// and charges them to the switch (done every [`RX_LOST_INTERVAL`] by
    /// [`Driver::step`]; call it before reading final counters).
    pub fn collect_rx_lost(&mut self) -> Result<u64, PortError> {
        let mut total = 0;
        for i in 0..self.ports.len() {
            let p = &mut self.ports[i];
            if p.down.is_some() {
                continue;
            }
            let lost = match p.port.take_rx_lost() {
                Ok(lost) => lost,
                Err(e) => {
                    self.port_failed(i, e)?;
                    continue;
                }
            };
            if lost > 0 {
                tracing::debug!(port = i, lost, "kernel dropped received frames");
                self.switch.handle_rx_lost(i as u16, lost);
                total += lost;
            }
        }
        self.stats.rx_kernel_drops += total;
        Ok(total)
    }

    /// Handles an error of port `i`: link loss marks the port down, any
    /// other error is returned (and ends the run).
    fn port_failed(&mut self, i: usize, e: PortError) -> Result<(), PortError> {
        let Some(mut cause) = e.link_down() else {
            return Err(e);
        };
        if cause == LinkDown::Error {
            // ENETDOWN says little: the interface may be gone, down, or
            // without carrier. Ask it.
            if let Ok(Some(seen)) = self.ports[i].port.link_check() {
                cause = seen;
            }
        }
        self.mark_down(i, cause, Some(&e));
        Ok(())
    }

    fn mark_down(&mut self, i: usize, cause: LinkDown, error: Option<&PortError>) {
        let now = self.clock.now();
        let p = &mut self.ports[i];
        if p.down.is_some() {
            return;
        }
        p.down = Some(cause);
        self.stats.port_down_events += 1;
        self.stats.tx_lost_link_down += p.tx.len() as u64;
        p.spare.extend(p.tx.drain(..));
        match error {
            Some(error) => tracing::warn!(
                port = i,
                iface = p.port.name(),
                cause = cause.describe(),
                %error,
                "port down"
            ),
            None => tracing::warn!(
                port = i,
                iface = p.port.name(),
                cause = cause.describe(),
                "port down"
            ),
        }
        self.switch.set_port_oper(i as u16, Some(cause), now);
        self.rebuild_poll_set();
    }

    /// Every [`LINK_CHECK_INTERVAL`]: down ports are asked to reopen, up
    /// ports whether their link is still there. Failures of the checks
    /// themselves are logged, not fatal.
    fn check_links(&mut self) {
        for i in 0..self.ports.len() {
            let p = &mut self.ports[i];
            match p.down {
                Some(was) => match p.port.reopen() {
                    Ok(true) => {
                        p.down = None;
                        self.stats.port_up_events += 1;
                        tracing::info!(port = i, iface = p.port.name(), "port up");
                        let now = self.clock.now();
                        self.switch.set_port_oper(i as u16, None, now);
                        self.rebuild_poll_set();
                    }
                    Ok(false) => {
                        // Still down: report a new cause (set down, then
                        // deleted: IFF_UP clears before the interface goes).
                        if let Ok(Some(cause)) = p.port.link_check()
                            && cause != was
                        {
                            p.down = Some(cause);
                            tracing::warn!(
                                port = i,
                                iface = p.port.name(),
                                cause = cause.describe(),
                                "port still down"
                            );
                            let now = self.clock.now();
                            self.switch.set_port_oper(i as u16, Some(cause), now);
                        }
                    }
                    Err(error) => {
                        tracing::debug!(port = i, iface = p.port.name(), %error, "reopen failed")
                    }
                },
                None => match p.port.link_check() {
                    Ok(Some(cause)) => self.mark_down(i, cause, None),
                    Ok(None) => {}
                    Err(error) => tracing::warn!(
                        port = i,
                        iface = p.port.name(),
                        %error,
                        "cannot check the link"
                    ),
                },
            }
        }
    }

    /// Moves what port `i` may send now from the switch to the kernel: at
    /// most [`BATCH`] frames, written straight into the port's transmit
    /// ring where it has one.
    fn transmit(&mut self, i: usize, now: Instant) -> Result<bool, PortError> {
        let p = &mut self.ports[i];
        // Only take new frames from the switch once the kernel took the old ones,
        // so the shaper, not the socket, decides the pace.
        if p.tx.is_empty() && !p.port.tx_pending() {
            let (switch, scratch) = (&mut self.switch, &mut self.scratch);
            let mut budget = BATCH;
            let sent = p.port.send_with(&mut |slot| {
                if budget == 0 {
                    return None;
                }
                budget -= 1;
                switch.poll_transmit(i as u16, now, scratch)?;
                let n = scratch.len();
                // A frame longer than the slot is the port's to count and drop.
                if let Some(dst) = slot.get_mut(..n) {
                    dst.copy_from_slice(scratch);
                }
                Some(n)
            })?;
            if let Some(n) = sent {
                if p.port.tx_pending() {
                    self.stats.tx_backpressure += 1;
                }
                self.stats.tx_frames += n as u64;
                return Ok(n > 0);
            }
        } else if p.tx.is_empty() {
            // Frames the kernel refused wait in the ring: ask again.
            p.port.send_batch(&[])?;
            return Ok(false);
        }
        if p.tx.is_empty() {
            while p.tx.len() < BATCH
                && self
                    .switch
                    .poll_transmit(i as u16, now, &mut self.scratch)
                    .is_some()
            {
                let mut buf = p.spare.pop().unwrap_or_default();
                buf.set_frame(&self.scratch);
                p.tx.push_back(buf);
            }
        }
        if p.tx.is_empty() {
            return Ok(false);
        }
        let batch = p.tx.make_contiguous();
        let n = p.port.send_batch(batch)?;
        if n < p.tx.len() {
            self.stats.tx_backpressure += 1;
        }
        self.stats.tx_frames += n as u64;
        for buf in p.tx.drain(..n) {
            p.spare.push(buf);
        }
        Ok(n > 0)
    }

    /// Waits for a frame on any port, a command, or the switch's next
    /// deadline.
    fn sleep(&mut self) -> Result<(), PortError> {
        let now = self.clock.now();
        let mut timeout = self.max_sleep;
        if let Some(deadline) = self.switch.poll_timeout() {
            let wait = deadline.saturating_duration_since(now);
            timeout = timeout.min(std::time::Duration::from_nanos(wait.as_nanos()));
        }
        if self
            .ports
            .iter()
            .any(|p| !p.tx.is_empty() || p.port.tx_pending())
        {
            timeout = timeout.min(BACKLOG_NAP);
        }
        if self.unpolled_ports {
            timeout = timeout.min(UNPOLLED_PORT_NAP);
        }
        let link_check = self.next_link_check.saturating_duration_since(now);
        timeout = timeout.min(std::time::Duration::from_nanos(link_check.as_nanos()));
        if timeout.is_zero() {
            return Ok(());
        }
        for p in &mut self.poll_set {
            p.revents = 0;
        }
        self.stats.sleeps += 1;
        // ppoll, not poll: the shaper's next release is often microseconds away.
        let ts = libc::timespec {
            tv_sec: timeout.as_secs().min(libc::time_t::MAX as u64) as libc::time_t,
            tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
        };
        // SAFETY: `poll_set` is a valid array of `poll_set.len()` pollfd
        // structs and `ts` a valid timespec, both alive for the call; no
        // signal mask is passed.
        let r = unsafe {
            libc::ppoll(
                self.poll_set.as_mut_ptr(),
                self.poll_set.len() as libc::nfds_t,
                &ts,
                std::ptr::null(),
            )
        };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(PortError::Io {
                    iface: "poll".into(),
                    what: "poll",
                    source: e,
                });
            }
        }
        // Cleared before the next turn drains the queue, so a command sent
        // after this point signals again and is not left for a later wake-up.
        if self.poll_set[0].revents != 0 && self.io.commands.clear_wake() {
            self.stats.command_wakes += 1;
        }
        Ok(())
    }
}

impl<P: Pipeline> Driver<P, ManualClock> {
    /// Runs the switch up to `until` on the manual clock: turns until idle
    /// at the current time, then moves the clock to the switch's next
    /// deadline or the driver's next link check, whichever is first, if it
    /// is not after `until` (else to `until`) and turns
    /// again, until idle at `until`. Frames already waiting on the ports are
    /// received at the current time; an `until` not after the clock only
    /// turns at the current time. Never sleeps. `false` when the control
    /// plane has gone away.
    ///
    /// To learn when each frame leaves, advance to one deadline at a time
    /// (`switch().poll_timeout()`) and read the ports in between; frames
    /// sent at an instant are on the ports when this returns.
    pub fn advance_to(&mut self, until: Instant) -> Result<bool, PortError> {
        loop {
            loop {
                match self.step()? {
                    Turn::Busy => {}
                    Turn::Idle => break,
                    Turn::Closed => return Ok(false),
                }
            }
            let now = self.clock.now();
            // The link check is a deadline too, so a port that went down
            // or came back is seen at the same instant however far a test
            // jumps.
            let deadline = match self.switch.poll_timeout() {
                Some(d) => d.min(self.next_link_check),
                None => self.next_link_check,
            };
            let next = match deadline {
                deadline if deadline > now && deadline <= until => deadline,
                _ if now < until => until,
                _ => return Ok(true),
            };
            self.clock.set(next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trains_hold_at_most_their_bytes_and_slow_ports_keep_their_time() {
        assert_eq!(train_ns(SHAPER_TRAIN_NS, 100_000_000), SHAPER_TRAIN_NS);
        assert_eq!(train_ns(SHAPER_TRAIN_NS, 1_000_000_000), SHAPER_TRAIN_NS);
        // 64 KiB at 10 Gb/s: 52.4 µs, not 312 KB in 250 µs.
        assert_eq!(train_ns(SHAPER_TRAIN_NS, 10_000_000_000), 52_428);
        assert_eq!(train_ns(TURN_SLACK_NS, 1_000_000_000), TURN_SLACK_NS);
        assert_eq!(train_ns(0, 10_000_000_000), 0);
    }
}
