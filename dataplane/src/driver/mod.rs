//! The real-time driver: runs a [`Switch`] on real ports with the real
//! clock. It is the only place in the dataplane that reads a clock or
//! touches a socket; everything it drives is sans-IO.
//!
//! One thread owns the switch. Each turn of [`Driver::run`]:
//! 1. applies control-plane commands (closures over the switch) that
//!    arrived since the last turn, so table writes happen between packets
//!    and the per-packet path never waits for a lock;
//! 2. receives a batch on every port and hands each frame to the switch;
//! 3. runs the switch's timers and collects what each port may send now,
//!    sending it in batches (what the kernel refuses is kept and offered
//!    again, never dropped);
//! 4. forwards packet-ins, digests and traffic-manager events to their
//!    channels;
//! 5. sleeps in `ppoll(2)` on all ports until a frame arrives or the switch's
//!    next deadline ([`Switch::poll_timeout`]), at most [`MAX_SLEEP`].

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};

use p4_target::pipeline::Pipeline;

use crate::port::{FrameBuf, Port, PortError};
use crate::switch::{Digest, Switch};
use crate::time::Instant;
use crate::tm::TmEvent;

/// Frames moved per port per batch.
pub const BATCH: usize = 64;

/// Longest sleep between turns, so commands and the stop flag are seen.
pub const MAX_SLEEP: std::time::Duration = std::time::Duration::from_millis(5);

/// How late a turn may come, for sizing port shapers
/// ([`crate::tm::PortConfig::shaper_burst_ns`]): a turn that handles full
/// receive batches on several ports takes tens of microseconds, and a port
/// whose shaper could not bank that much credit would send below its speed.
pub const TURN_SLACK_NS: u64 = 100_000;

/// A control-plane operation, run on the switch's thread between packets,
/// with the switch clock's current time.
pub type Command<P> = Box<dyn FnOnce(&mut Switch<P>, Instant) + Send>;

/// Where the driver reports to.
pub struct DriverIo<P: Pipeline> {
    /// Control-plane operations to apply.
    pub commands: Receiver<Command<P>>,
    /// Called with each frame for the controller (with its `packet_in` header).
    pub packet_in: Option<Box<dyn FnMut(Vec<u8>) + Send>>,
    /// Called with each traffic-manager event (pause, storm, headroom overflow).
    pub events: Option<Box<dyn FnMut(TmEvent) + Send>>,
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
    /// Control-plane commands applied.
    pub commands: u64,
}

struct PortIo {
    port: Box<dyn Port + Send>,
    rx: Vec<FrameBuf>,
    /// Frames taken from the switch and not yet accepted by the kernel.
    tx: VecDeque<FrameBuf>,
    /// Sent-buffer pool.
    spare: Vec<FrameBuf>,
}

/// Runs a switch on ports; see the module doc.
pub struct Driver<P: Pipeline> {
    switch: Switch<P>,
    ports: Vec<PortIo>,
    io: DriverIo<P>,
    epoch: std::time::Instant,
    scratch: Vec<u8>,
    stats: DriverStats,
}

impl<P: Pipeline> std::fmt::Debug for Driver<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("switch", &self.switch)
            .field("stats", &self.stats)
            .finish()
    }
}

impl<P: Pipeline> Driver<P> {
    /// A driver for `switch` whose port `i` is `ports[i]`.
    pub fn new(switch: Switch<P>, ports: Vec<Box<dyn Port + Send>>, io: DriverIo<P>) -> Self {
        let ports = ports
            .into_iter()
            .map(|port| PortIo {
                port,
                rx: FrameBuf::batch(BATCH),
                tx: VecDeque::with_capacity(BATCH),
                spare: Vec::new(),
            })
            .collect();
        Driver {
            switch,
            ports,
            io,
            epoch: std::time::Instant::now(),
            scratch: Vec::with_capacity(16 * 1024),
            stats: DriverStats::default(),
        }
    }

    /// The switch (for inspection after [`Driver::run`] returns).
    pub fn switch(&self) -> &Switch<P> {
        &self.switch
    }

    /// Gives the switch back (after [`Driver::run`] returned).
    pub fn into_switch(self) -> Switch<P> {
        self.switch
    }

    /// Driver counters.
    pub fn stats(&self) -> DriverStats {
        self.stats
    }

    fn now(&self) -> Instant {
        Instant::from_nanos(self.epoch.elapsed().as_nanos() as u64)
    }

    /// Runs until `stop` is set or the command channel closes.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<(), PortError> {
        // The default 50 µs timer slack would make every shaper wake-up late.
        // SAFETY: PR_SET_TIMERSLACK takes an integer and affects this thread only.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong) };
        while !stop.load(Ordering::Relaxed) {
            if !self.turn()? {
                break;
            }
        }
        Ok(())
    }

    /// One turn of the loop; `false` when the control plane has gone away.
    pub fn turn(&mut self) -> Result<bool, PortError> {
        self.stats.turns += 1;
        loop {
            match self.io.commands.try_recv() {
                Ok(cmd) => {
                    let now = self.now();
                    cmd(&mut self.switch, now);
                    self.stats.commands += 1;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return Ok(false),
            }
        }
        let mut received = 0;
        for (i, p) in self.ports.iter_mut().enumerate() {
            let n = p.port.recv_batch(&mut p.rx)?;
            let now = Instant::from_nanos(self.epoch.elapsed().as_nanos() as u64);
            for buf in &p.rx[..n] {
                self.switch.handle_frame(i as u16, buf.frame(), now);
            }
            received += n;
        }
        self.stats.rx_frames += received as u64;
        let now = self.now();
        self.switch.handle_timeout(now);
        let mut sent_any = false;
        for i in 0..self.ports.len() {
            sent_any |= self.transmit(i, now)?;
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
        while let Some(event) = self.switch.poll_event() {
            tracing::debug!(?event, "traffic manager");
            if let Some(deliver) = &mut self.io.events {
                deliver(event);
            }
        }
        if received == 0 && !sent_any {
            self.sleep()?;
        }
        Ok(true)
    }

    /// Moves what port `i` may send now from the switch to the kernel.
    fn transmit(&mut self, i: usize, now: Instant) -> Result<bool, PortError> {
        let p = &mut self.ports[i];
        // Only take new frames from the switch once the kernel took the old ones,
        // so the shaper, not the socket, decides the pace.
        if p.tx.is_empty() {
            while p.tx.len() < BATCH && self.switch.poll_transmit(i as u16, now, &mut self.scratch)
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

    /// Waits for a frame on any port or the switch's next deadline.
    fn sleep(&mut self) -> Result<(), PortError> {
        let now = self.now();
        let mut timeout = MAX_SLEEP;
        if let Some(deadline) = self.switch.poll_timeout() {
            let wait = deadline.saturating_duration_since(now);
            timeout = timeout.min(std::time::Duration::from_nanos(wait.as_nanos()));
        }
        if self.ports.iter().any(|p| !p.tx.is_empty()) {
            // Waiting for the kernel to take a backlog: short naps.
            timeout = timeout.min(std::time::Duration::from_micros(50));
        }
        if timeout.is_zero() {
            return Ok(());
        }
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(self.ports.len());
        for p in &self.ports {
            match p.port.poll_fd() {
                Some(fd) => fds.push(libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                }),
                None => {
                    // A port without a descriptor (in-memory): poll it briefly.
                    std::thread::sleep(timeout.min(std::time::Duration::from_micros(100)));
                    return Ok(());
                }
            }
        }
        // ppoll, not poll: the shaper's next release is often microseconds away.
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
        };
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs and `ts`
        // a valid timespec, both alive for the call; no signal mask is passed.
        let r = unsafe {
            libc::ppoll(
                fds.as_mut_ptr(),
                fds.len() as libc::nfds_t,
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
        Ok(())
    }
}
