//! The [`FabricBackend`] of a running switch: a fabric configuration
//! becomes a [`SwitchPlan`] (traffic-manager settings plus the contents of
//! the fabric-owned P4 tables, the same plan the simulator applies) and is
//! applied in **one** job on the dataplane thread, so no packet sees half
//! of a change; counters come from the TM and the program's per-(port,
//! priority) counters in one job too.
//!
//! Contract: `apply` plans on the calling thread (pure, names every bad
//! field), then blocks until the dataplane thread ran the plan (at most
//! [`REPLY_TIMEOUT`]). A refused plan leaves the switch as it was
//! ([`SwitchPlan::apply`] rolls back). Nothing here holds a lock the packet
//! path could wait on.

use std::sync::mpsc::sync_channel;
use std::time::Duration;

use dataplane::driver::Command;
use dataplane::fabric::SwitchPlan;
use dataplane::switch::{Switch, SwitchDrop, SwitchStats};
use dataplane::time::Instant;
use dataplane::tm::TmConfig;
use p4_target::info::{ProgramInfo, resolve_name};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::RuntimeApi;

use dataplane::watchdog::WdAction;

use super::backend::{
    BackendError, CounterSet, FabricBackend, PauseSnapshot, PgCounters, PortCounters,
    PriorityCounters, QueueCounters, SecurityDrops, TraceTap,
};
use super::config::FabricConfig;
use dataplane::watchdog::WdMode;

/// How long a blocking call waits for the dataplane thread.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(5);

/// Queues a command on the dataplane thread; `false` if it has stopped.
pub type Submit<P> = Box<dyn Fn(Command<P>) -> bool + Send + Sync>;

/// Runs `f` on the switch's thread and waits for its result.
pub fn call<P: Pipeline, R: Send + 'static>(
    submit: &Submit<P>,
    f: impl FnOnce(&mut Switch<P>, Instant) -> R + Send + 'static,
) -> Result<R, BackendError> {
    let (tx, rx) = sync_channel(1);
    let cmd: Command<P> = Box::new(move |sw, now| {
        let _ = tx.send(f(sw, now));
    });
    if !submit(cmd) {
        return Err(BackendError::Unavailable(
            "the dataplane thread has stopped".into(),
        ));
    }
    rx.recv_timeout(REPLY_TIMEOUT)
        .map_err(|_| BackendError::Unavailable("the dataplane thread did not answer".into()))
}

/// The program's per-(port, priority) counters, indexed `port * 8 + priority`.
#[derive(Clone, Copy, Debug)]
struct CounterIds {
    rx: Option<u32>,
    tx: Option<u32>,
    ecn_marked: Option<u32>,
    /// RoCE security drops, indexed `port * SEC_DROP_REASONS + reason`
    /// (ingress and egress instances; their sum is the port's count).
    security: [Option<u32>; 2],
}

/// Every counter of `ports` (all when empty) in one pass on the dataplane
/// thread: TM stats, the program's counters, watchdog and switch counters.
fn read_counter_set<P: Pipeline>(
    sw: &Switch<P>,
    now: Instant,
    ids: CounterIds,
    ports: &[u16],
    names: &[(u16, String)],
) -> CounterSet {
    let tm = sw.tm();
    let wanted: Vec<u16> = if ports.is_empty() {
        (0..tm.num_ports() as u16).collect()
    } else {
        ports.to_vec()
    };
    let rt = sw.pipeline().runtime();
    let read = |c: Option<u32>, i: u32| {
        c.and_then(|c| rt.counter_read(c, i).ok())
            .unwrap_or_default()
    };
    let ledger = sw.ledger();
    let mut set = CounterSet::default();
    for port in wanted {
        let Some(port_cfg) = tm.config().ports.get(usize::from(port)) else {
            continue;
        };
        // Discards before classification have no priority: count them on 0.
        let early = sw
            .port_discards(port)
            .map_or(0, |d| d.malformed + d.over_mtu);
        let kernel = ledger
            .ports
            .get(usize::from(port))
            .map_or(0, |r| r.dropped(SwitchDrop::KernelRing));
        let breaks_storms = port_cfg
            .watchdog
            .is_some_and(|w| w.action != WdAction::Alert);
        let mut row = PortCounters {
            port,
            name: names
                .iter()
                .find(|(n, _)| *n == port)
                .map(|(_, name)| name.clone())
                .unwrap_or_default(),
            rx_discards_phy: early + kernel,
            rx_ecn_mark: sw.rx_ecn_ce(port),
            oper_down: sw.port_oper_up(port) == Some(false),
            down_cause: sw
                .port_link_down(port)
                .map_or_else(String::new, |c| c.describe().to_string()),
            oper_down_events: sw.port_oper_changes(port).map_or(0, |c| c.0),
            oper_up_events: sw.port_oper_changes(port).map_or(0, |c| c.1),
            ..PortCounters::default()
        };
        let reasons = dataplane::roce::SEC_DROP_REASONS;
        let security = |reason: u32| {
            ids.security
                .iter()
                .map(|&c| read(c, u32::from(port) * reasons + reason).packets)
                .sum::<u64>()
        };
        row.security_drops = SecurityDrops {
            rocev2_source: security(dataplane::roce::SEC_DROP_ROCEV2_SOURCE),
            rocev1_source: security(dataplane::roce::SEC_DROP_ROCEV1_SOURCE),
            pkey_ingress: security(dataplane::roce::SEC_DROP_PKEY_INGRESS),
            pkey_egress: security(dataplane::roce::SEC_DROP_PKEY_EGRESS),
        };
        let mut queue_marks = [0u64; 8];
        for prio in 0..8u8 {
            let Some(s) = tm.stats(port, prio) else {
                continue;
            };
            let i = u32::from(port) * 8 + u32::from(prio);
            let (rx, tx) = (read(ids.rx, i), read(ids.tx, i));
            let ecn_marked = read(ids.ecn_marked, i).packets;
            queue_marks[usize::from(port_cfg.prio_to_queue[usize::from(prio)] & 7)] += ecn_marked;
            let storms = tm
                .watchdog()
                .stats(port, prio)
                .map_or(0, |w| w.deadlock_detected);
            row.rx_discards_phy += s.rx_drop_packets;
            row.tx_discards_phy += s.tx_drop_packets;
            row.pause_storm_warning_events += storms;
            if breaks_storms {
                row.pause_storm_error_events += storms;
            }
            let pg = port_cfg.prio_to_pg[usize::from(prio)] & 7;
            set.priorities.push(PriorityCounters {
                port,
                priority: prio,
                rx_packets: rx.packets,
                rx_bytes: rx.bytes,
                tx_packets: tx.packets,
                tx_bytes: tx.bytes,
                drops: s.drops.total() + if prio == 0 { early } else { 0 },
                pfc_rx_frames: s.pfc_rx_frames,
                pfc_tx_frames: s.pfc_tx_frames,
                ecn_marked,
                watchdog_storms: storms,
                queue_depth_bytes: tm.queue_depth(port, prio).map_or(0, |(b, _)| b),
                kernel_drops: if prio == 0 { kernel } else { 0 },
                pause_rx_ns: tm.paused_ns(port, prio, now),
                pause_tx_ns: tm.pause_tx_ns(port, prio, now),
                pause_rx_transitions: s.pause_rx_xoff_to_xon,
                rx_drop_packets: s.rx_drop_packets,
                tx_drop_packets: s.tx_drop_packets,
                paused: tm.is_paused(port, prio, now),
                xoff: tm.pg_usage(port, pg).is_some_and(|u| u.xoff)
                    && port_cfg.pfc_enable & (1 << prio) != 0,
            });
        }
        for q in 0..8u8 {
            let (Some(qs), Some((depth, _))) = (tm.queue_stats(port, q), tm.queue_depth(port, q))
            else {
                continue;
            };
            set.queues.push(QueueCounters {
                port,
                queue: q,
                packets: qs.tx_packets,
                bytes: qs.tx_bytes,
                dropped_packets: qs.drop_packets,
                ecn_marked_packets: queue_marks[usize::from(q)],
                depth_bytes: depth,
                watermark_bytes: qs.max_depth_bytes,
            });
        }
        for g in 0..8u8 {
            let Some(u) = tm.pg_usage(port, g) else {
                continue;
            };
            set.pgs.push(PgCounters {
                port,
                pg: g,
                reserved_bytes: u.reserved_bytes,
                shared_bytes: u.shared_bytes,
                headroom_bytes: u.headroom_bytes,
                shared_watermark_bytes: u.shared_peak_bytes,
                xoff_room_watermark_bytes: u.headroom_peak_bytes,
                xoff: u.xoff,
                xoff_threshold_bytes: u.xoff_threshold_bytes,
                xon_threshold_bytes: u.xon_threshold_bytes,
            });
        }
        set.ports.push(row);
    }
    set
}

/// Fabric configuration on a running [`Switch`].
pub struct SwitchBackend<P: Pipeline> {
    submit: Submit<P>,
    info: &'static ProgramInfo,
    /// The settings the daemon started with (port count, MACs, speeds from
    /// the command line); fabric intent is layered on top of them.
    base: TmConfig,
    counters: CounterIds,
    trace_tap: Option<TraceTap>,
    /// Interface of each port, for `rocectl counters --port swp1`.
    port_names: std::sync::Arc<[(u16, String)]>,
}

impl<P: Pipeline> std::fmt::Debug for SwitchBackend<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwitchBackend")
            .field("program", &self.info.name)
            .field("ports", &self.base.ports.len())
            .finish_non_exhaustive()
    }
}

impl<P: Pipeline> SwitchBackend<P> {
    /// A backend for the switch behind `submit`, running `info`'s program,
    /// started with `base`.
    pub fn new(submit: Submit<P>, info: &'static ProgramInfo, base: TmConfig) -> Self {
        let counter = |n: &str| {
            resolve_name(info.counters.iter(), n, |c| c.name)
                .filter(|c| c.direct_table.is_none())
                .map(|c| c.id)
        };
        SwitchBackend {
            submit,
            info,
            base,
            counters: CounterIds {
                rx: counter("rx_port_prio"),
                tx: counter("tx_port_prio"),
                ecn_marked: counter("ecn_marked"),
                security: [
                    counter("roce_security_drops"),
                    counter("roce_security_egress_drops"),
                ],
            },
            trace_tap: None,
            port_names: std::sync::Arc::new([]),
        }
    }

    /// Names each port by its interface in the counters (`PortCounters::name`).
    pub fn with_port_names(mut self, names: Vec<(u16, String)>) -> Self {
        self.port_names = names.into();
        self
    }

    /// Serves packet traces from `tap` (whose sink the driver was given).
    pub fn with_trace_tap(mut self, tap: TraceTap) -> Self {
        self.trace_tap = Some(tap);
        self
    }
}

impl<P: Pipeline> FabricBackend for SwitchBackend<P> {
    fn apply(&self, config: &FabricConfig) -> Result<(), BackendError> {
        // Validate against the program started with first (the common
        // case, off the dataplane thread), then plan for the program the
        // switch runs now: P4Runtime may have loaded another one.
        SwitchPlan::build(&self.base, config, None, self.info)
            .map_err(|e| BackendError::Unsupported(e.to_string()))?;
        let base = self.base.clone();
        let config = config.clone();
        call(&self.submit, move |sw, now| {
            let info = sw.pipeline().info();
            let plan = SwitchPlan::build(&base, &config, None, info).map_err(|e| e.to_string())?;
            plan.apply(sw, now).map_err(|e| e.to_string())
        })?
        .map_err(BackendError::Unsupported)
    }

    fn counters(&self, ports: &[u16]) -> Vec<PriorityCounters> {
        self.counter_set(ports).priorities
    }

    fn counter_set(&self, ports: &[u16]) -> CounterSet {
        let ports = ports.to_vec();
        let ids = self.counters;
        let names = self.port_names.clone();
        call(&self.submit, move |sw, now| {
            read_counter_set(sw, now, ids, &ports, &names)
        })
        .unwrap_or_default()
    }

    fn switch_stats(&self) -> Option<SwitchStats> {
        call(&self.submit, |sw, _now| sw.stats()).ok()
    }

    fn set_trace(
        &self,
        request: Option<dataplane::switch::TraceRequest>,
    ) -> Result<(), BackendError> {
        if self.trace_tap.is_none() {
            return Err(BackendError::Unsupported(
                "this switch was started without a trace queue".into(),
            ));
        }
        call(&self.submit, move |sw, _now| {
            sw.handle_trace_request(request)
        })
    }

    fn trace_tap(&self) -> Option<&TraceTap> {
        self.trace_tap.as_ref()
    }

    fn ledger(&self) -> Option<dataplane::switch::Ledger> {
        call(&self.submit, |sw, _now| sw.ledger()).ok()
    }

    fn pause_state(&self) -> PauseSnapshot {
        call(&self.submit, |sw, now| {
            let tm = sw.tm();
            let mut snap = PauseSnapshot::default();
            for port in 0..tm.num_ports() as u16 {
                let Some(pc) = tm.config().ports.get(usize::from(port)) else {
                    continue;
                };
                for prio in 0..8u8 {
                    if tm.is_paused(port, prio, now) {
                        snap.egress_paused.push((port, prio));
                    }
                    let pg = pc.prio_to_pg[usize::from(prio)];
                    if pc.pfc_enable & (1 << prio) != 0
                        && tm.pg_usage(port, pg).is_some_and(|u| u.xoff)
                    {
                        snap.ingress_xoff.push((port, prio));
                    }
                    if tm.watchdog_mode(port, prio) != WdMode::Normal {
                        snap.storms.push((port, prio));
                    }
                }
            }
            snap
        })
        .unwrap_or_default()
    }

    fn dcbx(&self) -> Vec<(u16, dataplane::dcbx::PortAgent)> {
        call(&self.submit, |sw, _now| {
            (0..sw.tm().num_ports() as u16)
                .filter_map(|p| Some((p, sw.dcbx(p)?.clone())))
                .collect()
        })
        .unwrap_or_default()
    }
}
