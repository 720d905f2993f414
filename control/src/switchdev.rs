//! The services' view of a running switch: [`SwitchDevice`] (the
//! [`Device`] the P4Runtime service and the fabric P4-table backend drive)
//! and [`TmBackend`] (the [`FabricBackend`] that turns fabric QoS intent
//! into traffic-manager settings).
//!
//! Both talk to the dataplane thread only through the driver's command
//! channel ([`dataplane::driver::Command`]): every operation is a closure
//! run on the switch's thread between packets, and replies come back over a
//! channel. Nothing here holds a lock the packet path could wait on.
//! Control-plane jobs get the program's runtime and the switch's packet
//! replication engine together, with the switch's ports (front panel plus
//! CPU port) as the ports a replica may name.

use std::sync::mpsc::{Sender, sync_channel};
use std::time::Duration;

use dataplane::driver::Command;
use dataplane::switch::Switch;
use dataplane::tm::{self, TmConfig};
use dataplane::watchdog::{WatchdogPortConfig, WdAction};
use p4_target::pipeline::Pipeline;
use tokio::sync::broadcast;

use crate::device::{Device, DeviceError, DeviceJob, DeviceState, Digest, PortSpace};
use crate::fabric::backend::{BackendError, FabricBackend, PriorityCounters};
use crate::fabric::config::{FabricConfig, Headroom, Threshold, WatchdogAction};

/// How long a blocking call waits for the dataplane thread.
const REPLY_TIMEOUT: Duration = Duration::from_secs(5);

/// A [`Device`] backed by the driver thread of a real switch.
pub struct SwitchDevice<P: Pipeline> {
    commands: Sender<Command<P>>,
    packet_in: broadcast::Sender<Vec<u8>>,
    digests: Option<broadcast::Sender<Digest>>,
}

impl<P: Pipeline> std::fmt::Debug for SwitchDevice<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwitchDevice").finish_non_exhaustive()
    }
}

impl<P: Pipeline> SwitchDevice<P> {
    /// A device sending commands on `commands`; packet-ins are published on
    /// `packet_in` (the driver's packet-in callback sends there).
    pub fn new(commands: Sender<Command<P>>, packet_in: broadcast::Sender<Vec<u8>>) -> Self {
        SwitchDevice {
            commands,
            packet_in,
            digests: None,
        }
    }

    /// Reports the digests published on `digests` (the driver's digest
    /// callback sends there).
    pub fn with_digests(mut self, digests: broadcast::Sender<Digest>) -> Self {
        self.digests = Some(digests);
        self
    }
}

impl<P: Pipeline> Device for SwitchDevice<P> {
    fn submit_job(&self, job: DeviceJob) -> Result<(), DeviceError> {
        let cmd: Command<P> = Box::new(move |sw: &mut Switch<P>, _now| {
            let ports = PortSpace {
                front_panel: u16::try_from(sw.num_ports()).unwrap_or(u16::MAX),
                cpu_port: sw.cpu_port(),
            };
            let (pipeline, pre) = sw.pipeline_and_pre_mut();
            job(&mut DeviceState {
                runtime: pipeline.runtime_mut(),
                pre: Some(pre),
                ports: Some(ports),
            })
        });
        self.commands.send(cmd).map_err(|_| DeviceError::Stopped)
    }

    fn packet_out(&self, frame: Vec<u8>) -> Result<(), DeviceError> {
        let cmd: Command<P> =
            Box::new(move |sw: &mut Switch<P>, now| sw.handle_packet_out(&frame, now));
        self.commands.send(cmd).map_err(|_| DeviceError::Stopped)
    }

    fn packet_in(&self) -> Option<broadcast::Receiver<Vec<u8>>> {
        Some(self.packet_in.subscribe())
    }

    fn digests(&self) -> Option<broadcast::Receiver<Digest>> {
        self.digests.as_ref().map(broadcast::Sender::subscribe)
    }
}

/// Runs `f` on the switch's thread and waits for its result.
fn call<P: Pipeline, R: Send + 'static>(
    commands: &Sender<Command<P>>,
    f: impl FnOnce(&mut Switch<P>, dataplane::time::Instant) -> R + Send + 'static,
) -> Result<R, BackendError> {
    let (tx, rx) = sync_channel(1);
    let cmd: Command<P> = Box::new(move |sw, now| {
        let _ = tx.send(f(sw, now));
    });
    commands
        .send(cmd)
        .map_err(|_| BackendError::Unavailable("the dataplane thread has stopped".into()))?;
    rx.recv_timeout(REPLY_TIMEOUT)
        .map_err(|_| BackendError::Unavailable("the dataplane thread did not answer".into()))
}

/// Applies the buffer, PFC, ETS and watchdog parts of the fabric
/// configuration to the traffic manager. ECN and classification live in P4
/// tables (see `fabric::p4_tables`).
pub struct TmBackend<P: Pipeline> {
    commands: Sender<Command<P>>,
    /// The settings the daemon started with (port count, MACs, speeds from
    /// the command line); fabric intent is layered on top of them.
    base: TmConfig,
}

impl<P: Pipeline> std::fmt::Debug for TmBackend<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TmBackend")
            .field("ports", &self.base.ports.len())
            .finish()
    }
}

impl<P: Pipeline> TmBackend<P> {
    /// A backend over the switch behind `commands`, started with `base`.
    pub fn new(commands: Sender<Command<P>>, base: TmConfig) -> Self {
        TmBackend { commands, base }
    }
}

/// The traffic-manager settings `fabric` asks for, on top of `base`.
pub fn tm_config(base: &TmConfig, fabric: &FabricConfig) -> Result<TmConfig, BackendError> {
    let mut cfg = base.clone();
    let n = cfg.ports.len();
    let port = |p: u16| -> Result<usize, BackendError> {
        if usize::from(p) < n {
            Ok(usize::from(p))
        } else {
            Err(BackendError::Unsupported(format!(
                "port {p}: the switch has ports 0..{n}"
            )))
        }
    };
    for p in &fabric.ports {
        let tm_port = &mut cfg.ports[port(p.port)?];
        tm_port.speed_bps = p.speed_bps;
        tm_port.mtu_bytes = p.mtu_bytes;
        tm_port.cable_length_m = Some(p.cable_length_m);
        tm_port.pfc_enable = p
            .pfc_priorities
            .iter()
            .fold(0u8, |m, &prio| m | (1 << (prio & 7)));
    }
    if fabric.buffer.pool_size_bytes > 0 {
        cfg.buffer_bytes = fabric.buffer.pool_size_bytes;
    }
    for t in &fabric.buffer.thresholds {
        let Some(threshold) = t.threshold else {
            continue;
        };
        let pg = usize::from(t.priority & 7);
        for tm_port in &mut cfg.ports {
            let pg_cfg = &mut tm_port.pgs[pg];
            match threshold {
                Threshold::Dynamic { alpha } => {
                    // α = 2^n (R-DT-1): the nearest representable exponent.
                    let n = alpha.log2().round().clamp(-8.0, 7.0) as i8;
                    pg_cfg.threshold = tm::Threshold::Dynamic(n);
                    pg_cfg.xon_bytes = None;
                }
                Threshold::Static {
                    xoff_bytes,
                    xon_bytes,
                } => {
                    pg_cfg.threshold = tm::Threshold::Static(xoff_bytes);
                    pg_cfg.xon_bytes = Some(xon_bytes);
                }
            }
        }
    }
    for tm_port in &mut cfg.ports {
        for pg in &mut tm_port.pgs {
            pg.headroom_bytes = match fabric.buffer.headroom {
                Headroom::Auto => None,
                Headroom::Explicit { bytes } => Some(bytes),
            };
        }
    }
    for ets in &fabric.ets {
        let tm_port = &mut cfg.ports[port(ets.port)?];
        for (q, &w) in ets.weights.iter().enumerate().take(8) {
            tm_port.queues[q].sched = if w == 0 {
                tm::SchedMode::Strict
            } else {
                tm::SchedMode::Dwrr(u16::try_from(w).unwrap_or(u16::MAX))
            };
        }
    }
    let wd = &fabric.watchdog;
    cfg.watchdog.poll_interval_ms = wd.poll_interval_ms;
    for tm_port in &mut cfg.ports {
        tm_port.watchdog = (wd.enabled && tm_port.pfc_enable != 0).then(|| {
            let mut w = WatchdogPortConfig::start(wd.detection_time_ms, wd.restoration_time_ms);
            w.restoration_time_ms = wd.restoration_time_ms;
            w.action = match wd.action.unwrap_or(WatchdogAction::Drop) {
                WatchdogAction::Drop => WdAction::Drop,
                WatchdogAction::Forward => WdAction::Forward,
                WatchdogAction::Alert => WdAction::Alert,
            };
            w.priorities = tm_port.pfc_enable;
            w
        });
    }
    Ok(cfg)
}

impl<P: Pipeline> FabricBackend for TmBackend<P> {
    fn apply(&self, config: &FabricConfig) -> Result<(), BackendError> {
        let cfg = tm_config(&self.base, config)?;
        cfg.validate()
            .map_err(|e| BackendError::Unsupported(format!("traffic manager: {e}")))?;
        call(&self.commands, move |sw, now| {
            sw.tm_mut().handle_config(cfg, now)
        })?
        .map_err(|e| BackendError::Unsupported(format!("traffic manager: {e}")))
    }

    fn counters(&self, ports: &[u16]) -> Vec<PriorityCounters> {
        let ports = ports.to_vec();
        call(&self.commands, move |sw, _now| {
            let tm = sw.tm();
            let wanted: Vec<u16> = if ports.is_empty() {
                (0..tm.num_ports() as u16).collect()
            } else {
                ports
            };
            let mut out = Vec::new();
            for port in wanted {
                // Discards before classification have no priority: count them on 0.
                let early = sw
                    .port_discards(port)
                    .map_or(0, |d| d.malformed + d.over_mtu);
                for prio in 0..8u8 {
                    let Some(s) = tm.stats(port, prio) else {
                        continue;
                    };
                    let queue_depth_bytes = tm.queue_depth(port, prio).map_or(0, |(b, _)| b);
                    out.push(PriorityCounters {
                        port,
                        priority: prio,
                        drops: s.drops.total() + if prio == 0 { early } else { 0 },
                        pfc_rx_frames: s.pfc_rx_frames,
                        pfc_tx_frames: s.pfc_tx_frames,
                        watchdog_storms: tm
                            .watchdog()
                            .stats(port, prio)
                            .map_or(0, |w| w.deadlock_detected),
                        queue_depth_bytes,
                        ..Default::default()
                    });
                }
            }
            out
        })
        .unwrap_or_default()
    }

    fn switch_stats(&self) -> Option<dataplane::switch::SwitchStats> {
        call(&self.commands, |sw, _now| sw.stats()).ok()
    }
}
