//! The device abstraction the gRPC services drive.
//!
//! Contract: the dataplane thread owns the pipeline's [`RuntimeApi`] and
//! runs control-plane jobs (closures) between packets. Services never touch
//! the runtime directly: they [`Device::submit`] a job and await its result
//! over a oneshot channel ([`DeviceExt::with_runtime`],
//! [`DeviceExt::with_state`]). A batch of updates submitted as one job is
//! therefore applied atomically with respect to packets, and the per-packet
//! path takes no lock a writer can hold.
//!
//! A job sees a [`DeviceState`]: the runtime (tables, profiles, externs),
//! the packet replication engine beside it (multicast groups and clone
//! sessions; `None` on a device without one) and the ports a replica may
//! name. Both are borrowed for the job only, so a job that changes tables
//! and groups together is still one step for the dataplane.
//!
//! Packet I/O crosses the same boundary as raw frames: a packet-out frame is
//! the `packet_out` controller header followed by the payload, a packet-in
//! frame is the `packet_in` header followed by the payload (encoding is the
//! P4Runtime service's job, see `p4rt::packet_io`).
//!
//! Digests travel the same way, as [`Digest`] values, to every subscriber.
//!
//! [`LocalDevice`] is the in-process implementation used by tests and by
//! tools without a dataplane (its clock: monotonic time since it started):
//! it owns a `Box<dyn RuntimeApi + Send>` and a
//! [`Pre`] (no packets flow through it, but groups and sessions are kept and
//! read back) in its own thread, records packet-out frames and lets tests
//! inject packet-ins and digests.

use std::sync::{Arc, Mutex};

pub use dataplane::switch::Digest;
use p4_target::arch::Pre;
use p4_target::dynamic::DynPipeline;
use p4_target::runtime::{Runtime, RuntimeApi};
use tokio::sync::{broadcast, oneshot};

/// The port numbers a device has: front-panel ports `0..front_panel` and
/// the CPU port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortSpace {
    /// Number of front-panel ports (numbered from 0).
    pub front_panel: u16,
    /// The CPU port, if the device has one.
    pub cpu_port: Option<u16>,
}

impl PortSpace {
    /// Whether `port` exists on the device.
    pub fn contains(&self, port: u16) -> bool {
        port < self.front_panel || self.cpu_port == Some(port)
    }
}

impl std::fmt::Display for PortSpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ports 0..{}", self.front_panel)?;
        if let Some(cpu) = self.cpu_port {
            write!(f, " and CPU port {cpu}")?;
        }
        Ok(())
    }
}

/// What a control-plane job may read and change, borrowed from the thread
/// that owns it for the duration of the job.
pub struct DeviceState<'a> {
    /// The pipeline's runtime.
    pub runtime: &'a mut dyn RuntimeApi,
    /// The packet replication engine, if the device has one.
    pub pre: Option<&'a mut Pre>,
    /// The ports replicas may name; `None` when the device has no real
    /// ports (any port the engine accepts, 0..=510, is allowed).
    pub ports: Option<PortSpace>,
    /// The time the job runs, in nanoseconds on the clock the dataplane
    /// gives packets (the idle clock of idle-timeout tables uses it).
    pub now_ns: u64,
    /// Ports whose link is down now (watch ports of selector groups).
    pub ports_down: Vec<u16>,
}

impl std::fmt::Debug for DeviceState<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceState")
            .field("pre", &self.pre)
            .field("ports", &self.ports)
            .field("now_ns", &self.now_ns)
            .field("ports_down", &self.ports_down)
            .finish_non_exhaustive()
    }
}

/// A control-plane job run on the thread that owns the device state.
pub type DeviceJob = Box<dyn FnOnce(&mut DeviceState<'_>) + Send + 'static>;

/// Where a device's program runs, as a pipeline swap sees it: the
/// daemon's [`p4_target::dynamic::Switchable`] pipeline.
pub trait PipelineSlot {
    /// Makes `next` run from the next packet on (`None`: the compiled-in
    /// program); returns the runtime of the program that ran until now
    /// (`None` if it is the same object) and the new one's.
    fn install(&mut self, next: Option<Box<dyn DynPipeline>>) -> (Option<&Runtime>, &mut Runtime);
}

impl<P: p4_target::pipeline::Pipeline> PipelineSlot for p4_target::dynamic::Switchable<P> {
    fn install(&mut self, next: Option<Box<dyn DynPipeline>>) -> (Option<&Runtime>, &mut Runtime) {
        p4_target::dynamic::Switchable::install(self, next)
    }
}

/// A pipeline swap, run on the dataplane thread between two packets with
/// the device's pipeline and its packet replication engine.
pub type SwapJob = Box<dyn FnOnce(&mut dyn PipelineSlot, Option<&mut Pre>) + Send + 'static>;

/// A control-plane job that needs only the runtime.
pub type RuntimeJob = Box<dyn FnOnce(&mut dyn RuntimeApi) + Send + 'static>;

/// Why the device could not run a job or take a frame.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// The dataplane thread has stopped (or the job panicked).
    #[error("device stopped")]
    Stopped,
    /// The device has no CPU port.
    #[error("device has no packet I/O")]
    NoPacketIo,
    /// The device runs one compiled-in program and cannot load another.
    #[error("this device cannot load pipelines")]
    NoPipelineSwap,
}

/// What the services need from a dataplane.
pub trait Device: Send + Sync + 'static {
    /// Queues `job` to run on the dataplane thread, between packets.
    fn submit_job(&self, job: DeviceJob) -> Result<(), DeviceError>;
    /// Queues a job that needs only the runtime.
    fn submit(&self, job: RuntimeJob) -> Result<(), DeviceError> {
        self.submit_job(Box::new(move |state| job(&mut *state.runtime)))
    }
    /// Queues a pipeline swap to run between two packets; devices that
    /// cannot change their program answer [`DeviceError::NoPipelineSwap`].
    fn submit_swap(&self, job: SwapJob) -> Result<(), DeviceError> {
        drop(job);
        Err(DeviceError::NoPipelineSwap)
    }
    /// Sends a frame (controller header + payload) into the pipeline's CPU port.
    fn packet_out(&self, frame: Vec<u8>) -> Result<(), DeviceError>;
    /// Frames (controller header + payload) the pipeline sends to the CPU
    /// port; `None` if the device has no CPU port.
    fn packet_in(&self) -> Option<broadcast::Receiver<Vec<u8>>>;
    /// Digests the program emits (`digest<T>()`); `None` if the device
    /// reports none.
    fn digests(&self) -> Option<broadcast::Receiver<Digest>> {
        None
    }
}

/// Awaiting form of [`Device::submit`].
pub trait DeviceExt: Device {
    /// Runs `f` on the runtime, on the dataplane thread, and returns its result.
    fn with_runtime<R, F>(
        &self,
        f: F,
    ) -> impl std::future::Future<Output = Result<R, DeviceError>> + Send
    where
        R: Send + 'static,
        F: FnOnce(&mut dyn RuntimeApi) -> R + Send + 'static,
    {
        self.with_state(move |state| f(&mut *state.runtime))
    }

    /// Runs `f` on the whole device state (runtime and replication
    /// engine), on the dataplane thread, and returns its result.
    fn with_state<R, F>(
        &self,
        f: F,
    ) -> impl std::future::Future<Output = Result<R, DeviceError>> + Send
    where
        R: Send + 'static,
        F: FnOnce(&mut DeviceState<'_>) -> R + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let submitted = self.submit_job(Box::new(move |state| {
            let _ = tx.send(f(state));
        }));
        async move {
            submitted?;
            rx.await.map_err(|_| DeviceError::Stopped)
        }
    }
}

impl<T: Device + ?Sized> DeviceExt for T {}

enum Msg {
    Job(DeviceJob),
}

/// An in-process device: a thread owning a runtime and (normally) a
/// replication engine, no packets flowing.
pub struct LocalDevice {
    jobs: std::sync::mpsc::Sender<Msg>,
    packet_in: broadcast::Sender<Vec<u8>>,
    digests: broadcast::Sender<Digest>,
    packets_out: Arc<Mutex<Vec<Vec<u8>>>>,
    ports_down: Arc<Mutex<Vec<u16>>>,
}

impl std::fmt::Debug for LocalDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalDevice").finish_non_exhaustive()
    }
}

impl LocalDevice {
    /// Starts the owning thread, with an empty replication engine. The
    /// thread ends when the device is dropped.
    pub fn new(runtime: Box<dyn RuntimeApi + Send>) -> Arc<Self> {
        Self::start(runtime, Some(Pre::new()))
    }

    /// A device without a packet replication engine (PRE writes are
    /// UNIMPLEMENTED on it).
    pub fn without_pre(runtime: Box<dyn RuntimeApi + Send>) -> Arc<Self> {
        Self::start(runtime, None)
    }

    fn start(mut runtime: Box<dyn RuntimeApi + Send>, mut pre: Option<Pre>) -> Arc<Self> {
        let (tx, rx) = std::sync::mpsc::channel::<Msg>();
        let ports_down: Arc<Mutex<Vec<u16>>> = Arc::default();
        let down = ports_down.clone();
        std::thread::Builder::new()
            .name("local-device".into())
            .spawn(move || {
                let epoch = std::time::Instant::now();
                while let Ok(Msg::Job(job)) = rx.recv() {
                    let mut state = DeviceState {
                        runtime: &mut *runtime,
                        pre: pre.as_mut(),
                        ports: None,
                        now_ns: epoch.elapsed().as_nanos() as u64,
                        ports_down: down.lock().unwrap_or_else(|e| e.into_inner()).clone(),
                    };
                    // A panicking job drops its reply sender: the caller sees
                    // `Stopped` for that job, and the device keeps serving.
                    let run = std::panic::AssertUnwindSafe(|| job(&mut state));
                    if std::panic::catch_unwind(run).is_err() {
                        tracing::error!("control-plane job panicked");
                    }
                }
            })
            .expect("spawning the device thread");
        let (packet_in, _) = broadcast::channel(1024);
        let (digests, _) = broadcast::channel(1024);
        Arc::new(LocalDevice {
            jobs: tx,
            packet_in,
            digests,
            packets_out: Arc::default(),
            ports_down,
        })
    }

    /// Sets `port`'s link up or down (as later jobs see it).
    pub fn set_port_up(&self, port: u16, up: bool) {
        let mut down = self.ports_down.lock().unwrap_or_else(|e| e.into_inner());
        down.retain(|&p| p != port);
        if !up {
            down.push(port);
        }
    }

    /// Makes the pipeline "send" `frame` to the CPU port.
    pub fn inject_packet_in(&self, frame: Vec<u8>) {
        let _ = self.packet_in.send(frame);
    }

    /// Makes the pipeline "emit" a digest.
    pub fn inject_digest(&self, digest: Digest) {
        let _ = self.digests.send(digest);
    }

    /// Packet-out frames received so far (drained).
    pub fn take_packets_out(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.packets_out.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Device for LocalDevice {
    fn submit_job(&self, job: DeviceJob) -> Result<(), DeviceError> {
        self.jobs
            .send(Msg::Job(job))
            .map_err(|_| DeviceError::Stopped)
    }

    fn packet_out(&self, frame: Vec<u8>) -> Result<(), DeviceError> {
        self.packets_out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(frame);
        Ok(())
    }

    fn packet_in(&self) -> Option<broadcast::Receiver<Vec<u8>>> {
        Some(self.packet_in.subscribe())
    }

    fn digests(&self) -> Option<broadcast::Receiver<Digest>> {
        Some(self.digests.subscribe())
    }
}
