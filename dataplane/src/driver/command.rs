//! The control plane's channel to the driver: [`command_channel`] gives a
//! cloneable [`CommandSender`] and the [`CommandReceiver`] the driver
//! drains between packets.
//!
//! A command is queued on a `std::sync::mpsc` channel (lock-free for the
//! receiver, which is the dataplane thread) and then an eventfd(2) in the
//! driver's poll set is signalled, so a sleeping driver wakes at once
//! instead of at its next deadline. The driver clears the descriptor after
//! waking and before draining the queue, so no command is left waiting for
//! a later wake-up (see the port module's `eventfd`). Dropping a sender
//! signals too, so when the last one goes the driver sees the channel
//! closed without waiting.
//!
//! The signal is one `write(2)` per command, paid by the sender; a busy
//! driver never polls, so it pays nothing, and signals sent while it is
//! busy merge into one spare wake-up of an idle turn. Skipping the write
//! while the driver is known to be awake would save a fraction of a
//! microsecond per command against the hundreds a gRPC write costs, so
//! the channel does not try.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvError, SendError, Sender, TryRecvError};

use p4_target::pipeline::Pipeline;

use crate::port::eventfd::EventFd;
use crate::switch::Switch;
use crate::time::Instant;

/// A control-plane operation, run on the switch's thread between packets,
/// with the driver clock's current time.
pub type Command<P> = Box<dyn FnOnce(&mut Switch<P>, Instant) + Send>;

/// A new command channel. Fails only if the kernel refuses an eventfd
/// (descriptor limit).
pub fn command_channel<P: Pipeline>() -> std::io::Result<(CommandSender<P>, CommandReceiver<P>)> {
    let wake = Arc::new(EventFd::new()?);
    let (tx, rx) = mpsc::channel();
    Ok((
        CommandSender {
            tx: Some(tx),
            wake: wake.clone(),
        },
        CommandReceiver { rx, wake },
    ))
}

/// The sending half: queues commands and wakes the driver. Cloneable; the
/// channel closes when every clone is dropped.
pub struct CommandSender<P: Pipeline> {
    /// `None` only inside `drop`, which closes it before signalling.
    tx: Option<Sender<Command<P>>>,
    wake: Arc<EventFd>,
}

impl<P: Pipeline> CommandSender<P> {
    /// Queues `command` and wakes the driver; gives the command back if the
    /// receiver is gone.
    pub fn send(&self, command: Command<P>) -> Result<(), SendError<Command<P>>> {
        match &self.tx {
            Some(tx) => tx.send(command)?,
            None => return Err(SendError(command)),
        }
        self.wake.signal();
        Ok(())
    }
}

impl<P: Pipeline> Clone for CommandSender<P> {
    fn clone(&self) -> Self {
        CommandSender {
            tx: self.tx.clone(),
            wake: self.wake.clone(),
        }
    }
}

impl<P: Pipeline> Drop for CommandSender<P> {
    fn drop(&mut self) {
        // Close our end first, so the woken driver can see the channel closed.
        drop(self.tx.take());
        self.wake.signal();
    }
}

impl<P: Pipeline> std::fmt::Debug for CommandSender<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandSender").finish_non_exhaustive()
    }
}

/// The receiving half, owned by the driver (or by a test that runs
/// commands on a bare [`Switch`]).
pub struct CommandReceiver<P: Pipeline> {
    rx: Receiver<Command<P>>,
    wake: Arc<EventFd>,
}

impl<P: Pipeline> CommandReceiver<P> {
    /// The next queued command, without waiting.
    pub fn try_recv(&self) -> Result<Command<P>, TryRecvError> {
        self.rx.try_recv()
    }

    /// The next command, waiting for one; `Err` once every sender is gone
    /// and the queue is empty.
    pub fn recv(&self) -> Result<Command<P>, RecvError> {
        self.rx.recv()
    }

    /// The descriptor that polls readable once a command was sent (or a
    /// sender dropped) since the last [`CommandReceiver::clear_wake`].
    pub(crate) fn wake_fd(&self) -> std::os::fd::RawFd {
        self.wake.raw_fd()
    }

    /// Resets the wake-up descriptor; call before draining the queue.
    pub(crate) fn clear_wake(&self) -> bool {
        self.wake.clear()
    }
}

impl<P: Pipeline> std::fmt::Debug for CommandReceiver<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandReceiver").finish_non_exhaustive()
    }
}
