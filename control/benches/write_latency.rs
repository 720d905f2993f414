//! How soon an idle switch daemon applies what the control plane sends
//! (issue #11: "write-to-effect latency on an idle daemon: p99 under
//! 100 µs"). Two figures, each over many samples taken after an idle gap of
//! 0.5–3 ms (so the dataplane thread is asleep in `ppoll` and every phase of
//! its sleep is hit):
//!
//! 1. **command wake**: a closure sent on the driver's command channel,
//!    from `send` until it runs on the dataplane thread;
//! 2. **write to effect**: one-update P4Runtime `Write` requests (an
//!    `ipv4_lpm` insert into `roce_switch.p4`) over TCP on loopback, from
//!    the client sending the request until the dataplane thread starts
//!    applying it (a table insert then takes about a microsecond), and the
//!    client's whole round trip; the first leg split where the service
//!    hands the update to the device (gRPC and the service, then the
//!    command channel).
//!
//! The daemon pieces are the real ones (`Driver`, `SwitchDevice`,
//! `SwitchBackend`, `Daemon` with both services, the tokio runtime shaped as
//! `switchd` shapes it); the two ports are idle descriptors (a datagram
//! socket nothing writes to), which is what the driver sees of `AF_PACKET`
//! ports on quiet links, so no root is needed. Run with
//! `cargo bench -p control --bench write_latency [-- SAMPLES]`;
//! `--poll busy|adaptive|sleep` runs the driver in that poll mode
//! (default sleep, as the daemon), `--dataplane-cpu N` pins its thread,
//! and `--back-to-back` sends the Writes one after another without idle
//! gaps and prints their rate (the one-at-a-time rate of `p4rt_write
//! -- --single-only`, through the real driver and daemon).

use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixDatagram;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use control::daemon::{Daemon, DaemonOptions};
use control::device::{Device, DeviceError, DeviceJob, Digest};
use control::fabric::{FabricBackend, SwitchBackend};
use control::switchdev::SwitchDevice;
use dataplane::driver::cpu::{PollMode, pin_current_thread};
use dataplane::driver::{CommandSender, Driver, DriverIo, command_channel};
use dataplane::port::{FrameBuf, Port, PortError};
use dataplane::roce::{PROGRAM_INFO, Program};
use dataplane::switch::{Switch, SwitchConfig};
use proto::p4::v1 as pb;
use proto::p4::v1::p4_runtime_client::P4RuntimeClient;
use tokio::sync::broadcast;

/// A port on a quiet link: a descriptor that never polls readable.
struct IdlePort {
    name: String,
    rx: UnixDatagram,
    _peer: UnixDatagram,
}

impl IdlePort {
    fn new(name: &str) -> IdlePort {
        let (rx, peer) = UnixDatagram::pair().expect("socketpair");
        rx.set_nonblocking(true).expect("nonblocking");
        IdlePort {
            name: name.into(),
            rx,
            _peer: peer,
        }
    }
}

impl Port for IdlePort {
    fn name(&self) -> &str {
        &self.name
    }
    fn recv_batch(&mut self, _bufs: &mut [FrameBuf]) -> Result<usize, PortError> {
        Ok(0)
    }
    fn send_batch(&mut self, bufs: &[FrameBuf]) -> Result<usize, PortError> {
        Ok(bufs.len())
    }
    fn wait_readable(&mut self, timeout: Option<Duration>) -> Result<bool, PortError> {
        std::thread::sleep(timeout.unwrap_or(Duration::from_millis(5)));
        Ok(false)
    }
    fn poll_fd(&self) -> Option<RawFd> {
        Some(self.rx.as_raw_fd())
    }
}

/// The bench's clock: nanoseconds since it started, shared by all threads.
fn nanos_since(epoch: Instant) -> u64 {
    epoch.elapsed().as_nanos() as u64
}

/// A [`SwitchDevice`] that notes when the service hands it a job and when
/// the dataplane thread starts the job (its end would race with the reply
/// the job itself sends).
struct TimedDevice {
    inner: SwitchDevice<Program>,
    epoch: Instant,
    submitted_ns: Arc<AtomicU64>,
    applied_ns: Arc<AtomicU64>,
}

impl Device for TimedDevice {
    fn submit_job(&self, job: DeviceJob) -> Result<(), DeviceError> {
        let (epoch, applied_ns) = (self.epoch, self.applied_ns.clone());
        self.submitted_ns
            .fetch_max(nanos_since(epoch), Ordering::SeqCst);
        self.inner.submit_job(Box::new(move |state| {
            applied_ns.fetch_max(nanos_since(epoch), Ordering::SeqCst);
            job(state);
        }))
    }
    fn packet_out(&self, frame: Vec<u8>) -> Result<(), DeviceError> {
        self.inner.packet_out(frame)
    }
    fn packet_in(&self) -> Option<broadcast::Receiver<Vec<u8>>> {
        self.inner.packet_in()
    }
    fn digests(&self) -> Option<broadcast::Receiver<Digest>> {
        self.inner.digests()
    }
}

/// An idle gap before sample `i`: 0.5–3 ms, spread so that samples land at
/// every phase of the driver's sleep.
fn idle_gap(i: u32) -> Duration {
    Duration::from_micros(500 + u64::from(i.wrapping_mul(7919) % 2500))
}

struct Dataplane {
    commands: CommandSender<Program>,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
    base_tm: dataplane::tm::TmConfig,
}

fn start_dataplane(mode: PollMode, cpu: Option<usize>) -> Dataplane {
    let config = SwitchConfig::with_ports(2);
    let base_tm = config.tm.clone();
    let switch = Switch::new(Program::new(), config, dataplane::time::Instant::ZERO).unwrap();
    let ports: Vec<Box<dyn Port + Send>> =
        vec![Box::new(IdlePort::new("p0")), Box::new(IdlePort::new("p1"))];
    let (commands, rx) = command_channel::<Program>().unwrap();
    let io = DriverIo {
        commands: rx,
        packet_in: None,
        events: None,
        digests: None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let thread = {
        let stop = stop.clone();
        std::thread::Builder::new()
            .name("dataplane".into())
            .spawn(move || {
                if let Some(cpu) = cpu {
                    pin_current_thread(&[cpu]).unwrap();
                }
                let mut driver = Driver::new(switch, ports, io).with_poll_mode(mode);
                driver.run(&stop).unwrap();
            })
            .unwrap()
    };
    Dataplane {
        commands,
        stop,
        thread,
        base_tm,
    }
}

impl Dataplane {
    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        drop(self.commands);
        self.thread.join().unwrap();
    }
}

/// Command wake latency: `send` to the closure running.
fn command_wake(dp: &Dataplane, samples: u32) -> Vec<Duration> {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut out = Vec::with_capacity(samples as usize);
    for i in 0..samples {
        std::thread::sleep(idle_gap(i));
        let tx = tx.clone();
        let sent = Instant::now();
        dp.commands
            .send(Box::new(move |_sw, _now| {
                let _ = tx.send(sent.elapsed());
            }))
            .unwrap();
        out.push(rx.recv().unwrap());
    }
    out
}

/// One `ipv4_lpm` insert of 10.x.y.0/24 → next hop 1.
fn route_insert(i: u32) -> pb::WriteRequest {
    let table = PROGRAM_INFO.table_by_name("ipv4_lpm").unwrap();
    let action = PROGRAM_INFO.action_by_name("set_nexthop_id").unwrap();
    let prefix = 0x0a00_0000u32 | (i << 8);
    pb::WriteRequest {
        device_id: 1,
        updates: vec![pb::Update {
            r#type: pb::update::Type::Insert as i32,
            entity: Some(pb::Entity {
                entity: Some(pb::entity::Entity::TableEntry(pb::TableEntry {
                    table_id: table.id,
                    r#match: vec![pb::FieldMatch {
                        field_id: table.keys[0].id,
                        field_match_type: Some(pb::field_match::FieldMatchType::Lpm(
                            pb::field_match::Lpm {
                                value: prefix.to_be_bytes().to_vec(),
                                prefix_len: 24,
                            },
                        )),
                    }],
                    action: Some(pb::TableAction {
                        r#type: Some(pb::table_action::Type::Action(pb::Action {
                            action_id: action.id,
                            params: vec![pb::action::Param {
                                param_id: action.params[0].id,
                                value: vec![1],
                            }],
                        })),
                    }),
                    ..Default::default()
                })),
            }),
        }],
        ..Default::default()
    }
}

/// Write to effect over P4Runtime, in samples of each leg.
#[derive(Default)]
struct WriteLegs {
    /// Request sent → the service submits the update to the device.
    to_submit: Vec<Duration>,
    /// Submitted → the dataplane thread starts it (the command channel).
    to_dataplane: Vec<Duration>,
    /// Request sent → the dataplane thread starts it.
    to_effect: Vec<Duration>,
    /// The client's whole round trip.
    round_trip: Vec<Duration>,
}

/// `--back-to-back`: each Write sent as soon as the last is answered (no
/// idle gap), as `p4rt_write -- --single-only --inflight 1` sends them,
/// but through the real driver and daemon.
fn write_to_effect(dp: &Dataplane, samples: u32, back_to_back: bool) -> WriteLegs {
    let epoch = Instant::now();
    let submitted_ns = Arc::new(AtomicU64::new(0));
    let applied_ns = Arc::new(AtomicU64::new(0));
    let (pin_tx, _) = broadcast::channel(16);
    let device = Arc::new(TimedDevice {
        inner: SwitchDevice::new(dp.commands.clone(), pin_tx),
        epoch,
        submitted_ns: submitted_ns.clone(),
        applied_ns: applied_ns.clone(),
    });
    let submit = dp.commands.clone();
    let tm: Arc<dyn FabricBackend> = Arc::new(SwitchBackend::new(
        Box::new(move |cmd| submit.send(cmd).is_ok()),
        &PROGRAM_INFO,
        dp.base_tm.clone(),
    ));
    // The server as `switchd` runs it: a one-worker runtime of its own, a
    // little behind the dataplane thread (nice 5).
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .on_thread_start(|| {
            // SAFETY: affects the calling thread only; plain integers.
            unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 5) };
        })
        .enable_all()
        .build()
        .unwrap();
    let addr = server.block_on(async {
        let opts = DaemonOptions {
            listen: "127.0.0.1:0".parse().unwrap(),
            device_id: 1,
            owned_table_access: Default::default(),
            state_file: None,
            p4rt_state_file: None,
            fabric_defaults: Default::default(),
        };
        let daemon = Daemon::build(opts, &PROGRAM_INFO, device, Some(tm)).unwrap();
        let (bound, p4rt, fabric) = daemon.bind().await.unwrap();
        let addr = bound.local_addr().unwrap();
        tokio::spawn(bound.serve(Some(p4rt), Some(fabric), std::future::pending()));
        addr
    });
    // The controller: a runtime on this thread.
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = client.block_on(async {
        let mut p4rt = P4RuntimeClient::connect(format!("http://{addr}"))
            .await
            .unwrap();
        let mut legs = WriteLegs::default();
        for i in 0..samples {
            let request = route_insert(i);
            if !back_to_back {
                // Blocking on purpose: a timer-free, precise idle gap.
                std::thread::sleep(idle_gap(i));
            }
            submitted_ns.store(0, Ordering::SeqCst);
            applied_ns.store(0, Ordering::SeqCst);
            let sent_ns = nanos_since(epoch);
            p4rt.write(request).await.unwrap();
            legs.round_trip
                .push(Duration::from_nanos(nanos_since(epoch) - sent_ns));
            let submitted = submitted_ns.load(Ordering::SeqCst);
            let applied = applied_ns.load(Ordering::SeqCst);
            assert!(
                applied >= submitted && submitted > sent_ns,
                "the write went through the device to the dataplane thread"
            );
            legs.to_submit
                .push(Duration::from_nanos(submitted - sent_ns));
            legs.to_dataplane
                .push(Duration::from_nanos(applied - submitted));
            legs.to_effect.push(Duration::from_nanos(applied - sent_ns));
        }
        legs
    });
    server.shutdown_background();
    out
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: usize| samples[(samples.len() * q / 100).min(samples.len() - 1)];
    println!(
        "{what:<36} n={:<5} p50 {:>8.1} µs  p99 {:>8.1} µs  max {:>8.1} µs",
        samples.len(),
        at(50).as_secs_f64() * 1e6,
        at(99).as_secs_f64() * 1e6,
        samples.last().unwrap().as_secs_f64() * 1e6,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
    };
    let mode: PollMode = value("--poll").map_or(PollMode::Sleep, |m| m.parse().unwrap());
    let cpu: Option<usize> = value("--dataplane-cpu").map(|c| c.parse().unwrap());
    let back_to_back = args.iter().any(|a| a == "--back-to-back");
    // The sample count: a number that is not a flag's value.
    let samples: u32 = args
        .iter()
        .enumerate()
        .filter(|&(i, _)| i == 0 || !args[i - 1].starts_with("--"))
        .find_map(|(_, a)| a.parse().ok())
        .unwrap_or(2_000);
    let dp = start_dataplane(mode, cpu);
    if back_to_back {
        let t = Instant::now();
        let legs = write_to_effect(&dp, samples, true);
        println!(
            "back to back, dataplane poll {mode}: {samples} one-update Writes one at a time: {:.0} Writes/s",
            f64::from(samples) / t.elapsed().as_secs_f64()
        );
        report("P4Runtime write → on dataplane", legs.to_effect);
        report("  of which: sent → submitted", legs.to_submit);
        report("  of which: submitted → on dataplane", legs.to_dataplane);
        report("P4Runtime write round trip", legs.round_trip);
        dp.stop();
        return;
    }
    report("command wake (send → run)", command_wake(&dp, samples));
    let legs = write_to_effect(&dp, samples, false);
    report("P4Runtime write → on dataplane", legs.to_effect);
    report("  of which: sent → submitted", legs.to_submit);
    report("  of which: submitted → on dataplane", legs.to_dataplane);
    report("P4Runtime write round trip", legs.round_trip);
    dp.stop();
}
