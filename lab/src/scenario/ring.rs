//! The deadlock ring on real namespaces: a cyclic buffer dependency between
//! `roceswitch` daemons that PFC turns into a deadlock, and the PFC
//! watchdog breaking it (roce-semantics §12, §13; ATSCALE §4.2).
//!
//! ```text
//!        h0                 switch i: p0 = its host, p1 → switch i+1's p2
//!        │ p0               routes: its own host on p0, every other host
//!        s0                 clockwise on p1. Host i writes to host i+2, so
//!   p2 ╱    ╲ p1            each ring link carries one first-hop flow and
//!     ╱      ╲              one transit flow at line rate each: 2:1
//!  p1╱        ╲p2           oversubscribed. The transit bytes a switch holds
//!  s2 ──────── s1           can only leave through its ring port, which the
//!  │ p2     p1 │            next switch pauses for the same reason: once
//!  h2          h1           every ring port is paused nothing moves again.
//! ```
//!
//! Contract: [`run`] brings the ring up (through [`crate::labctl`], switch
//! commands from [`super::live`]), programs every switch (static small
//! XOFF/XON thresholds so the pauses come early and deterministically,
//! watchdog off), and runs four phases, returning the counters it saw in a
//! [`DeadlockOutcome`]; it judges nothing (the caller does, see
//! [`DeadlockOutcome::problems`]). Phases:
//! 1. **deadlock**: every host sends to the host two hops away at the port
//!    speed for [`RingConfig::fill_s`]; after the senders have exited, it
//!    waits until every ring port has stopped transmitting while holding
//!    bytes, then watches for [`RingConfig::hold`] with no input at all:
//!    a true deadlock keeps its queues, sends nothing on the ring and keeps
//!    refreshing its XOFFs.
//! 2. **watchdog**: turns the watchdog on on every switch and waits for its
//!    storm and restore events and for every queue to empty.
//! 3. **watchdog throughout**: the oversubscription of phase 1 again, with
//!    the watchdog on: storms are declared while the senders run (the ring
//!    deadlocks again), the hosts get far more than in phase 1,
//!    and after the senders exit every storm is restored and every queue
//!    empties.
//! 4. **recovery**: fresh receivers; two-hop flows from every host but the
//!    last at a rate the ring can carry, for [`RingConfig::burst_s`]; what
//!    each receiver got. The last host stays silent because its flow would
//!    close the cycle again (switch 0's ring ingress would hold transit
//!    bytes): with the cycle closed even a load the ring can carry deadlocks
//!    now and then when bursts (scheduling on a busy machine) pause all
//!    ring ports at once, and the watchdog then drops, as it should; a
//!    whole-delivery check needs a pattern without the cycle. Every ring
//!    link and both transit paths still carry traffic.
//!
//! Addressing as in [`super::live`], part [`RING_PART`]: host i is
//! 10.0.3.<i+1>, MAC 02:00:00:00:03:<i+1>. Needs root.

use std::net::IpAddr;
use std::path::Path;
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use super::live::{
    self, Binaries, LabGuard, SWITCH_START, agent_args, host, host_mac, link, mac_text, sock_path,
    stop_server, summary_of, switch_command, wait_all,
};
use dataplane::deadlock::{PauseGraph, PortId};
use dataplane::fabric::{L3Config, NextHop, Route};

use super::switchctl::{PrioCounters, SwitchCtl, WatchdogEvent, WatchdogSetting};
use super::{LINK_MTU_BYTES, LOSSLESS_PRIORITY};
use crate::fabric::{QosSpec, ROUTER_MAC, SwitchSetup, fabric_config};
use crate::labctl::{self, state::StateStore};
use crate::topo::{SwitchSpec, Topology};

/// Third address byte of the ring's hosts.
pub const RING_PART: u8 = 3;
/// A switch's port to its host.
pub const HOST_PORT: u32 = 0;
/// A switch's ring port to the next switch (clockwise).
pub const OUT_PORT: u32 = 1;
/// A switch's ring port from the previous switch.
pub const IN_PORT: u32 = 2;
/// DSCP of the ring traffic (priority 3, lossless).
pub const RING_DSCP: u8 = 26;

/// Knobs of the ring run.
#[derive(Debug, Clone)]
pub struct RingConfig {
    /// Switches (and hosts) in the ring, at least 3.
    pub switches: usize,
    /// Speed of every port (switch shapers, host agents' line rate), bit/s.
    pub speed_bps: u64,
    /// Static XOFF threshold of the lossless priority, bytes.
    pub xoff_bytes: u64,
    /// XON floor of the lossless priority, bytes.
    pub xon_bytes: u64,
    /// PFC headroom per (port, lossless priority), bytes.
    pub headroom_bytes: u64,
    /// RoCE path MTU (payload bytes per packet).
    pub roce_mtu_bytes: usize,
    /// How long the senders offer line rate in phase 1, seconds.
    pub fill_s: f64,
    /// Longest wait for the ring to stop after the senders exit.
    pub form_limit: Duration,
    /// How long the deadlock is watched with no input.
    pub hold: Duration,
    /// Watchdog settings of phase 2.
    pub watchdog: WatchdogSetting,
    /// Longest wait for the watchdog to detect, restore and drain.
    pub recover_limit: Duration,
    /// Phase 4 per-sender rate, bit/s (up to two flows share a ring link).
    pub burst_rate_bps: u64,
    /// Phase 4 duration, seconds.
    pub burst_s: f64,
}

impl Default for RingConfig {
    fn default() -> Self {
        RingConfig {
            switches: 3,
            speed_bps: 20_000_000,
            xoff_bytes: 12 * 1024,
            xon_bytes: 4 * 1024,
            // 420 ms of line rate: what a sender puts on the wire after an
            // XOFF when the switch or the agent is not scheduled for a while
            // (a debug build on a loaded 2-core machine; 256 KiB, 105 ms,
            // overflowed once in ~40 runs with six CPU hogs).
            headroom_bytes: 1024 * 1024,
            roce_mtu_bytes: 1024,
            fill_s: 2.0,
            form_limit: Duration::from_secs(10),
            hold: Duration::from_secs(3),
            watchdog: WatchdogSetting {
                detection_time_ms: 200,
                restoration_time_ms: 400,
                poll_interval_ms: 100,
                drop: true,
            },
            recover_limit: Duration::from_secs(10),
            burst_rate_bps: 5_000_000,
            burst_s: 1.5,
        }
    }
}

/// Node names of the ring.
pub fn switch_name(i: usize) -> String {
    format!("s{i}")
}

/// Host `i`'s node name.
pub fn host_name(i: usize) -> String {
    format!("h{i}")
}

/// The ring as a lab topology: `n` switches running `roceswitch` (gRPC on
/// a Unix socket in the lab's log directory), one host each.
pub fn ring_topology(
    lab: &str,
    n: usize,
    speed_bps: u64,
    roceswitch: &Path,
    store: &StateStore,
) -> Topology {
    let mut t = ring_fabric(lab, n, speed_bps);
    for s in &mut t.switches {
        s.command = Some(switch_command(
            roceswitch,
            3,
            speed_bps,
            &sock_path(store, lab, &s.name),
        ));
    }
    t
}

/// The ring's nodes and links without switch commands (the simulator's
/// ring, and the shape of [`ring_topology`]).
pub fn ring_fabric(lab: &str, n: usize, speed_bps: u64) -> Topology {
    let switches = (0..n)
        .map(|i| SwitchSpec {
            name: switch_name(i),
            command: None,
            roceswitch: false,
            routes: Vec::new(),
        })
        .collect();
    let hosts = (0..n).map(|i| host(&host_name(i), RING_PART, i)).collect();
    let mut links = Vec::new();
    for i in 0..n {
        links.push(link(
            &format!("{}:eth0", host_name(i)),
            &format!("{}:p{HOST_PORT}", switch_name(i)),
            speed_bps,
        ));
        links.push(link(
            &format!("{}:p{OUT_PORT}", switch_name(i)),
            &format!("{}:p{IN_PORT}", switch_name((i + 1) % n)),
            speed_bps,
        ));
    }
    Topology {
        name: lab.to_string(),
        switches,
        hosts,
        links,
        qos: QosSpec::default(),
    }
}

/// Programs switch `i` of an `n`-ring: lossless priority 3 with the static
/// thresholds of `cfg`, watchdog off, its host on [`HOST_PORT`], every
/// other host clockwise on [`OUT_PORT`].
pub fn program_switch(ctl: &mut SwitchCtl, i: usize, cfg: &RingConfig) -> Result<()> {
    ctl.apply(&switch_setup(i, cfg))
}

/// What switch `i` of the ring is told (see [`program_switch`]): routes are
/// not shortest paths but all clockwise, which is what closes the cycle.
pub fn switch_setup(i: usize, cfg: &RingConfig) -> SwitchSetup {
    let qos = QosSpec {
        lossless_priorities: vec![LOSSLESS_PRIORITY],
        headroom_bytes: Some(
            cfg.headroom_bytes
                .max(live::lab_headroom_bytes(cfg.speed_bps)),
        ),
        xoff_bytes: Some(cfg.xoff_bytes),
        xon_bytes: Some(cfg.xon_bytes),
        ..QosSpec::default()
    };
    let ports: Vec<(u16, u64, u32)> = (0..3).map(|p| (p, cfg.speed_bps, LINK_MTU_BYTES)).collect();
    let routes = (0..cfg.switches)
        .map(|j| {
            let hop = if j == i {
                NextHop {
                    port: HOST_PORT as u16,
                    dst_mac: host_mac(RING_PART, j),
                }
            } else {
                NextHop {
                    port: OUT_PORT as u16,
                    dst_mac: ROUTER_MAC,
                }
            };
            Route {
                prefix: IpAddr::V4(live::host_ip(RING_PART, j)),
                prefix_len: 32,
                next_hops: vec![hop],
            }
        })
        .collect();
    SwitchSetup {
        name: switch_name(i),
        fabric: fabric_config(&qos, &ports),
        routes: L3Config {
            router_mac: ROUTER_MAC,
            ecmp_seed: i as u32 + 1,
            routes,
            bridged: Vec::new(),
        },
    }
}

/// The counters of (`port`, priority 3) in one switch's counter list.
pub fn lossless(c: &[PrioCounters], port: u32) -> PrioCounters {
    c.iter()
        .find(|x| x.port == port && x.priority == u32::from(LOSSLESS_PRIORITY))
        .copied()
        .unwrap_or(PrioCounters {
            port,
            priority: u32::from(LOSSLESS_PRIORITY),
            ..Default::default()
        })
}

/// What one switch did while the ring was watched with no input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct HeldSwitch {
    /// Ring egress queue (priority 3) at the start of the watch, bytes.
    pub queue_start_bytes: u64,
    /// The same at the end.
    pub queue_end_bytes: u64,
    /// Packets the ring port sent during the watch.
    pub ring_tx_packets: u64,
    /// PFC frames the switch sent upstream (on its ring ingress) during the watch.
    pub pfc_tx_frames: u64,
    /// PFC frames it received from downstream (on its ring egress) during the watch.
    pub pfc_rx_frames: u64,
}

impl HeldSwitch {
    /// `queue 12000 -> 12000 B, tx 0 packets, XOFF sent 3 / received 4`.
    fn describe(&self) -> String {
        format!(
            "queue {} -> {} B, tx {} packets, XOFF sent {} / received {}",
            self.queue_start_bytes,
            self.queue_end_bytes,
            self.ring_tx_packets,
            self.pfc_tx_frames,
            self.pfc_rx_frames
        )
    }
}

/// One flow of phase 4.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct BurstFlow {
    /// Sender host.
    pub from: String,
    /// Receiver host.
    pub to: String,
    /// Bytes the sender sent.
    pub tx_bytes: u64,
    /// Bytes the receiver got.
    pub rx_bytes: u64,
    /// PSN gaps the receiver saw.
    pub psn_gaps: u64,
}

impl DeadlockOutcome {
    /// Writes the live view's `ring_pause_graph.svg` (the graph with its
    /// cycles above the pause timeline) into `dir`, if there is a view.
    pub fn write_pause_graph(&self, dir: &Path) -> Result<Option<std::path::PathBuf>> {
        let Some(g) = &self.pause_graph else {
            return Ok(None);
        };
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
        let path = dir.join("ring_pause_graph.svg");
        let (start, end) = g.time_range().unzip();
        dataplane::deadlock::write_svg(
            g,
            &path,
            "deadlock ring, namespaces: PFC pause dependencies (live view)",
            start.unwrap_or(dataplane::time::Instant::ZERO),
            end,
        )?;
        Ok(Some(path))
    }

    /// Keeps the live view's `graph` of an `n`-switch ring and what it
    /// says: the first cycle that crosses all `n` ring links and when, and
    /// the first storm.
    fn judge_pause_view(&mut self, graph: PauseGraph, n: usize) {
        let ms = |t: dataplane::time::Instant| t.as_nanos() as f64 / 1e6;
        if let Some(c) = graph
            .history()
            .iter()
            .filter(|c| crosses_the_ring(&c.cycle.links(), n))
            .min_by_key(|c| c.span.start)
        {
            self.ring_cycle = Some(c.cycle.describe());
            self.ring_cycle_at_ms = Some(ms(c.span.start));
        }
        self.first_storm_at_ms = graph
            .markers()
            .iter()
            .filter(|m| m.storm)
            .map(|m| m.at)
            .min()
            .map(ms);
        self.pause_graph = Some(graph);
    }
}

/// True if `links` (paused egress, the peer port pausing it) are the `n`
/// ring links `s<i>:p1 -> s<i+1>:p2`.
fn crosses_the_ring(links: &[(PortId, PortId)], n: usize) -> bool {
    links.len() == n
        && (0..n).all(|i| {
            links.contains(&(
                PortId::new(switch_name(i), OUT_PORT as u16),
                PortId::new(switch_name((i + 1) % n), IN_PORT as u16),
            ))
        })
}

/// `s0 12, s1 30, s2 14`: one value per switch of the ring.
fn per_switch<T>(values: &[T], show: impl Fn(&T) -> String) -> String {
    if values.is_empty() {
        return "none".into();
    }
    values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("s{i} {}", show(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One `  s1 watchdog: storm on port 1 priority 3, restored ...` line per
/// switch that had events.
fn write_events(s: &mut String, events: &[Vec<WatchdogEvent>]) {
    use std::fmt::Write as _;
    for (i, evs) in events.iter().enumerate().filter(|(_, e)| !e.is_empty()) {
        let _ = writeln!(s, "  s{i} watchdog: {}", event_list(evs));
    }
}

/// `storm on port 1 priority 3, restored port 1 priority 3`.
fn event_list(events: &[WatchdogEvent]) -> String {
    let list = events.iter().map(ToString::to_string).collect::<Vec<_>>();
    list.join(", ")
}

/// Every switch's events on one line: `s1 storm on port 1 priority 3, ...`
/// (`none` if there were none).
fn events_text(events: &[Vec<WatchdogEvent>]) -> String {
    let parts: Vec<String> = (0..)
        .zip(events)
        .filter(|(_, e)| !e.is_empty())
        .map(|(i, e)| format!("s{i} {}", event_list(e)))
        .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join("; ")
    }
}

/// Everything [`run`] measured.
#[derive(Debug, Clone, Default)]
pub struct DeadlockOutcome {
    /// The live pause-dependency graph of the whole run, as `rocelab watch`
    /// assembles it from the switches' event streams (`None` if the view
    /// could not follow them).
    pub pause_graph: Option<PauseGraph>,
    /// The first cycle the live view named that crosses every ring link.
    pub ring_cycle: Option<String>,
    /// When it was named, ms into the view's timeline.
    pub ring_cycle_at_ms: Option<f64>,
    /// The first watchdog storm the view saw, ms into its timeline.
    pub first_storm_at_ms: Option<f64>,
    /// Packets each ring port sent in phase 1 (before the deadlock: a
    /// ring PG pauses its upstream only after that sent it XOFF bytes).
    pub fill_ring_tx_packets: Vec<u64>,
    /// Packets each switch delivered to its host in phase 1 (may be 0: a
    /// flow can be stuck after its first ring hop before any reached its
    /// last).
    pub delivered_packets: Vec<u64>,
    /// Time from the senders' exit until the ring was seen stopped; `None`
    /// if it kept moving for the whole [`RingConfig::form_limit`].
    pub formed_after: Option<Duration>,
    /// Per switch, the watch with no input (empty if no deadlock formed).
    pub held: Vec<HeldSwitch>,
    /// How long the watch lasted.
    pub held_for: Duration,
    /// Lossless (priority 3) drops of each switch in phase 1.
    pub phase1_drops: Vec<u64>,
    /// Watchdog events per switch in phase 2, in arrival order.
    pub wd_events: Vec<Vec<WatchdogEvent>>,
    /// Watchdog storms per switch (its counter) after phase 2.
    pub wd_storms: Vec<u64>,
    /// Time from enabling the watchdog to its first storm event.
    pub first_storm_after: Option<Duration>,
    /// Time from enabling the watchdog until every storm was restored and
    /// every queue empty; `None` if not within [`RingConfig::recover_limit`].
    pub recovered_after: Option<Duration>,
    /// Bytes left queued per switch after phase 2.
    pub queued_after_recovery_bytes: Vec<u64>,
    /// Phase 3 (watchdog on throughout): packets each switch delivered to
    /// its host.
    pub wd_on_delivered_packets: Vec<u64>,
    /// Phase 3: storms each switch detected.
    pub wd_on_storms: Vec<u64>,
    /// Phase 3: watchdog events per switch from the senders' exit on.
    pub wd_on_events: Vec<Vec<WatchdogEvent>>,
    /// Phase 3: time from the senders' exit until every storm was restored
    /// and every queue empty; `None` if not within the limit.
    pub wd_on_recovered_after: Option<Duration>,
    /// Phase 3: bytes left queued per switch at its end.
    pub wd_on_queued_bytes: Vec<u64>,
    /// Phase 4, one entry per flow.
    pub burst: Vec<BurstFlow>,
    /// Packets each ring port sent in phase 4.
    pub burst_ring_tx_packets: Vec<u64>,
    /// Lossless drops of each switch in phase 4.
    pub burst_drops: Vec<u64>,
    /// Watchdog events per switch in phase 4.
    pub burst_wd_events: Vec<Vec<WatchdogEvent>>,
    /// Bytes left queued per switch after phase 4.
    pub queued_after_burst_bytes: Vec<u64>,
}

impl DeadlockOutcome {
    /// A few lines for people: per phase, what each switch showed, with
    /// units (the JSON of a run keeps the exact numbers).
    pub fn summary(&self) -> String {
        use crate::units::{format_bytes, format_duration};
        use std::fmt::Write as _;
        let when = |d: Option<Duration>| {
            d.map_or_else(
                || "never".to_string(),
                |d| format!("after {}", format_duration(d)),
            )
        };
        let mut s = String::new();
        let _ = writeln!(s, "phase 1, watchdog off:");
        let _ = writeln!(
            s,
            "  ring tx packets {}; delivered to hosts {}; lossless drops {}",
            per_switch(&self.fill_ring_tx_packets, u64::to_string),
            per_switch(&self.delivered_packets, u64::to_string),
            per_switch(&self.phase1_drops, u64::to_string),
        );
        let _ = writeln!(
            s,
            "  ring stopped {} (counted from the senders' exit)",
            when(self.formed_after)
        );
        for (i, h) in self.held.iter().enumerate() {
            let _ = writeln!(
                s,
                "  s{i}, {} with no input: ring queue {} -> {}, ring tx {} packets, \
                 XOFF sent {} / received {}",
                format_duration(self.held_for),
                format_bytes(h.queue_start_bytes),
                format_bytes(h.queue_end_bytes),
                h.ring_tx_packets,
                h.pfc_tx_frames,
                h.pfc_rx_frames
            );
        }
        let ms = |t: Option<f64>| t.map_or_else(|| "never".to_string(), |t| format!("{t:.1} ms"));
        let _ = writeln!(
            s,
            "  live pause view: ring cycle named at {}{}; first watchdog storm at {}",
            ms(self.ring_cycle_at_ms),
            self.ring_cycle
                .as_deref()
                .map_or_else(String::new, |c| format!(" ({c})")),
            ms(self.first_storm_at_ms)
        );
        let _ = writeln!(s, "phase 2, watchdog switched on:");
        let _ = writeln!(
            s,
            "  storms {}; first storm {}; restored and drained {}; left queued {}",
            per_switch(&self.wd_storms, u64::to_string),
            when(self.first_storm_after),
            when(self.recovered_after),
            per_switch(&self.queued_after_recovery_bytes, |&b| format_bytes(b)),
        );
        write_events(&mut s, &self.wd_events);
        let _ = writeln!(s, "phase 3, same load with the watchdog on throughout:");
        let _ = writeln!(
            s,
            "  delivered to hosts {} packets; storms {}; restored and drained {} \
             (counted from the senders' exit); left queued {}",
            per_switch(&self.wd_on_delivered_packets, u64::to_string),
            per_switch(&self.wd_on_storms, u64::to_string),
            when(self.wd_on_recovered_after),
            per_switch(&self.wd_on_queued_bytes, |&b| format_bytes(b)),
        );
        write_events(&mut s, &self.wd_on_events);
        let _ = writeln!(s, "phase 4, a second burst:");
        let _ = writeln!(
            s,
            "  ring tx packets {}; lossless drops {}; left queued {}",
            per_switch(&self.burst_ring_tx_packets, u64::to_string),
            per_switch(&self.burst_drops, u64::to_string),
            per_switch(&self.queued_after_burst_bytes, |&b| format_bytes(b)),
        );
        write_events(&mut s, &self.burst_wd_events);
        for f in &self.burst {
            let _ = writeln!(
                s,
                "  {} -> {}: sent {}, received {}, PSN gaps {}",
                f.from,
                f.to,
                format_bytes(f.tx_bytes),
                format_bytes(f.rx_bytes),
                f.psn_gaps
            );
        }
        s
    }

    /// Every expectation the run did not meet, one line each (empty = the
    /// ring deadlocked without the watchdog and recovered with it).
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        match (self.ring_cycle_at_ms, self.first_storm_at_ms) {
            (None, _) => p.push("the live pause view named no cycle across the ring".into()),
            (Some(c), Some(s)) if c > s => p.push(format!(
                "the live pause view named the ring's cycle at {c:.1} ms, after the first \
                 watchdog storm at {s:.1} ms"
            )),
            _ => {}
        }
        for (i, &d) in self.fill_ring_tx_packets.iter().enumerate() {
            if d == 0 {
                p.push(format!("s{i}'s ring port sent nothing before the deadlock"));
            }
        }
        match self.formed_after {
            None => p.push("the ring never stopped: no deadlock formed".into()),
            Some(_) => {
                for (i, h) in self.held.iter().enumerate() {
                    if h.queue_start_bytes == 0 || h.queue_end_bytes == 0 {
                        p.push(format!(
                            "s{i}: ring queue empty during the watch ({})",
                            h.describe()
                        ));
                    }
                    if h.queue_start_bytes != h.queue_end_bytes {
                        p.push(format!(
                            "s{i}: ring queue changed during the watch ({})",
                            h.describe()
                        ));
                    }
                    if h.ring_tx_packets != 0 {
                        p.push(format!(
                            "s{i}: ring port sent during the watch ({})",
                            h.describe()
                        ));
                    }
                    if h.pfc_tx_frames == 0 || h.pfc_rx_frames == 0 {
                        p.push(format!(
                            "s{i}: XOFF not refreshed during the watch ({})",
                            h.describe()
                        ));
                    }
                }
            }
        }
        for (i, &d) in self.phase1_drops.iter().enumerate() {
            if d != 0 {
                p.push(format!("s{i} dropped {d} lossless packets in phase 1"));
            }
        }
        if self.wd_storms.iter().sum::<u64>() == 0 {
            p.push("the watchdog detected no storm".into());
        }
        if self.recovered_after.is_none() {
            p.push(format!(
                "no recovery: storms restored and queues empty not reached (events: {}; queued {})",
                events_text(&self.wd_events),
                per_switch(&self.queued_after_recovery_bytes, |b| format!("{b} B"))
            ));
        }
        if self.wd_on_storms.iter().sum::<u64>() == 0 {
            p.push("with the watchdog on throughout, no storm was detected".into());
        }
        // Only "some": the drop action discards lossless packets and RC
        // answers with go-back-N and timeouts, so how many the hosts get
        // depends on the QPs' timers (RC on a dropping queue collapses).
        let with_wd: u64 = self.wd_on_delivered_packets.iter().sum();
        if with_wd == 0 {
            p.push("with the watchdog on, the hosts got no packet".into());
        }
        if self.wd_on_recovered_after.is_none() {
            p.push(format!(
                "with the watchdog on throughout, not drained and restored (events: {}; queued {})",
                events_text(&self.wd_on_events),
                per_switch(&self.wd_on_queued_bytes, |b| format!("{b} B"))
            ));
        }
        for f in &self.burst {
            if f.rx_bytes == 0 || f.rx_bytes != f.tx_bytes || f.psn_gaps != 0 {
                p.push(format!(
                    "after recovery, {} -> {} not delivered whole: sent {} B, received {} B, \
                     PSN gaps {}",
                    f.from, f.to, f.tx_bytes, f.rx_bytes, f.psn_gaps
                ));
            }
        }
        for (i, &d) in self.burst_drops.iter().enumerate() {
            if d != 0 {
                p.push(format!("s{i} dropped {d} lossless packets after recovery"));
            }
        }
        for (i, &t) in self.burst_ring_tx_packets.iter().enumerate() {
            if t == 0 {
                p.push(format!("s{i}: ring port idle after recovery"));
            }
        }
        for (i, &q) in self.queued_after_burst_bytes.iter().enumerate() {
            if q != 0 {
                p.push(format!("s{i}: {q} bytes still queued after the burst"));
            }
        }
        p
    }
}

/// Starts `argv` in host `node`, recorded for teardown, log `<log>.log`.
fn spawn_agent(
    g: &mut LabGuard<'_>,
    topo: &Topology,
    node: &str,
    argv: Vec<String>,
    log: &str,
) -> Result<Child> {
    let ns = topo.netns(node);
    let store = g.store();
    labctl::spawn_recorded(&mut g.st, store, node, &ns, argv, log)
}

/// Starts a client on each host of `senders`, writing to the host two
/// hops clockwise.
#[allow(clippy::too_many_arguments)]
fn start_clients(
    g: &mut LabGuard<'_>,
    topo: &Topology,
    bins: &Binaries,
    cfg: &RingConfig,
    senders: &[usize],
    rate_bps: u64,
    duration_s: f64,
    phase: &str,
) -> Result<Vec<Child>> {
    let n = cfg.switches;
    let mut clients = Vec::new();
    for &i in senders {
        let h = &topo.hosts[i];
        let dst = &topo.hosts[(i + 2) % n];
        let mut argv = vec![bins.roceperf.display().to_string()];
        argv.extend(agent_args(
            "client",
            h,
            rate_bps,
            RING_DSCP,
            cfg.roce_mtu_bytes,
            &[
                "--dst-ip".into(),
                dst.ip.to_string(),
                "--dst-mac".into(),
                mac_text(ROUTER_MAC),
                "--duration".into(),
                duration_s.to_string(),
                "--no-dcqcn".into(),
            ],
        ));
        clients.push(spawn_agent(
            g,
            topo,
            &h.name,
            argv,
            &format!("{}-client-{phase}", h.name),
        )?);
    }
    Ok(clients)
}

fn all_counters(ctls: &mut [SwitchCtl]) -> Result<Vec<Vec<PrioCounters>>> {
    ctls.iter_mut()
        .enumerate()
        .map(|(i, c)| c.counters().with_context(|| switch_name(i)))
        .collect()
}

fn sleep_or_stop(d: Duration, stop: &AtomicBool) -> Result<()> {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if stop.load(Ordering::SeqCst) {
            bail!("interrupted");
        }
        std::thread::sleep(Duration::from_millis(20).min(end - Instant::now()));
    }
    Ok(())
}

/// Watchdog storms each switch has counted so far (all its queues).
fn storm_counts(counters: &[Vec<PrioCounters>]) -> Vec<u64> {
    counters
        .iter()
        .map(|c| c.iter().map(|x| x.watchdog_storms).sum())
        .collect()
}

/// Collects watchdog events into `events` (one list per switch) until a
/// storm has been seen, every storm each switch counted since
/// `storms_before` has reached us as an event (the counter moves before the
/// event travels, so a late event cannot be mistaken for a restored
/// queue), each has its restore, and every queue is empty; for at most
/// `limit` from `since`. Returns when the first storm event was read and
/// when all that held (`None`: not within `limit`).
fn wait_recovered(
    ctls: &mut [SwitchCtl],
    events: &mut [Vec<WatchdogEvent>],
    storms_before: &[u64],
    since: Instant,
    limit: Duration,
    stop: &AtomicBool,
) -> Result<(Option<Duration>, Option<Duration>)> {
    let mut first_storm = None;
    loop {
        for (i, c) in ctls.iter_mut().enumerate() {
            let evs = c.watchdog_events(Duration::from_millis(20))?;
            if first_storm.is_none() && evs.iter().any(|e| matches!(e, WatchdogEvent::Storm { .. }))
            {
                first_storm = Some(since.elapsed());
            }
            events[i].extend(evs);
        }
        let storms = |evs: &Vec<WatchdogEvent>| {
            evs.iter()
                .filter(|e| matches!(e, WatchdogEvent::Storm { .. }))
                .count()
        };
        let any_storm = events.iter().any(|e| storms(e) > 0);
        let all_restored = events.iter().all(|e| 2 * storms(e) == e.len());
        if any_storm && all_restored {
            let c = all_counters(ctls)?;
            let counted = storm_counts(&c);
            let all_seen = (0..events.len())
                .all(|i| counted[i].saturating_sub(storms_before[i]) == storms(&events[i]) as u64);
            if all_seen && c.iter().flatten().all(|x| x.queue_depth_bytes == 0) {
                return Ok((first_storm, Some(since.elapsed())));
            }
        }
        if since.elapsed() >= limit {
            return Ok((first_storm, None));
        }
        if stop.load(Ordering::SeqCst) {
            bail!("interrupted");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// How long the ring ports must have sent nothing (while holding bytes)
/// to count as stopped.
const STOPPED_FOR: Duration = Duration::from_secs(1);

/// Brings the ring up as lab `lab`, runs the four phases and tears down.
pub fn run(
    cfg: &RingConfig,
    bins: &Binaries,
    store: &StateStore,
    stop: &AtomicBool,
    lab: &str,
) -> Result<DeadlockOutcome> {
    let n = cfg.switches;
    if n < 3 {
        bail!("a deadlock ring needs at least 3 switches, got {n}");
    }
    let topo = ring_topology(lab, n, cfg.speed_bps, &bins.roceswitch, store);
    let mut g = live::up(&topo, store, stop)?;
    let mut ctls = Vec::new();
    for i in 0..n {
        let addr = format!("unix:{}", sock_path(store, lab, &switch_name(i)).display());
        let mut c =
            SwitchCtl::connect(&addr, SWITCH_START, stop).with_context(|| switch_name(i))?;
        program_switch(&mut c, i, cfg)
            .with_context(|| format!("programming {}", switch_name(i)))?;
        ctls.push(c);
    }
    // The live PFC deadlock view (what `rocelab watch` shows) follows every
    // switch's event stream through all four phases; it is stopped before
    // the switches go, so every stream ends cleanly.
    let watch_stop = AtomicBool::new(false);
    let (out, graph) = std::thread::scope(|sc| {
        let watcher =
            sc.spawn(|| crate::watch::follow_lab(lab, store, None, &watch_stop, |_, _| {}));
        let out = phases(cfg, bins, stop, &topo, &mut g, &mut ctls);
        watch_stop.store(true, Ordering::SeqCst);
        let graph = watcher
            .join()
            .map_err(|_| anyhow!("the pause-view thread panicked"))
            .and_then(|r| r);
        (out, graph)
    });
    let mut out = out?;
    match graph {
        Ok(graph) => out.judge_pause_view(graph, n),
        Err(e) => tracing::warn!("live pause view: {e:#}"),
    }
    drop(ctls);
    g.down()
        .map_err(|e| anyhow!("tearing down the ring: {e:#}"))?;
    Ok(out)
}

/// Phases 1 to 4 on the ring that is up (`g`) and programmed (`ctls`).
fn phases(
    cfg: &RingConfig,
    bins: &Binaries,
    stop: &AtomicBool,
    topo: &Topology,
    g: &mut LabGuard<'_>,
    ctls: &mut [SwitchCtl],
) -> Result<DeadlockOutcome> {
    let n = cfg.switches;
    let mut out = DeadlockOutcome::default();

    // Phase 1: oversubscribe every ring link, then stop all input.
    let start = all_counters(ctls)?;
    let all: Vec<usize> = (0..n).collect();
    let mut clients = start_clients(g, topo, bins, cfg, &all, cfg.speed_bps, cfg.fill_s, "fill")?;
    wait_all(
        &mut clients,
        Duration::from_secs_f64(cfg.fill_s + 15.0),
        stop,
    )?;
    let ended = Instant::now();
    let mut last = all_counters(ctls)?;
    let mut still_since = Instant::now();
    loop {
        sleep_or_stop(Duration::from_millis(200), stop)?;
        let now = all_counters(ctls)?;
        let moved = (0..n).any(|i| {
            let (a, b) = (lossless(&last[i], OUT_PORT), lossless(&now[i], OUT_PORT));
            a.tx_packets != b.tx_packets || b.queue_depth_bytes == 0
        });
        last = now;
        if moved {
            still_since = Instant::now();
        } else if still_since.elapsed() >= STOPPED_FOR {
            out.formed_after = Some(still_since.duration_since(ended));
            break;
        }
        if ended.elapsed() >= cfg.form_limit {
            break;
        }
    }
    if out.formed_after.is_some() {
        let a = all_counters(ctls)?;
        let t = Instant::now();
        sleep_or_stop(cfg.hold, stop)?;
        let b = all_counters(ctls)?;
        out.held_for = t.elapsed();
        out.held = (0..n)
            .map(|i| {
                let (oa, ob) = (lossless(&a[i], OUT_PORT), lossless(&b[i], OUT_PORT));
                let (ia, ib) = (lossless(&a[i], IN_PORT), lossless(&b[i], IN_PORT));
                HeldSwitch {
                    queue_start_bytes: oa.queue_depth_bytes,
                    queue_end_bytes: ob.queue_depth_bytes,
                    ring_tx_packets: ob.tx_packets.saturating_sub(oa.tx_packets),
                    pfc_tx_frames: ib.pfc_tx_frames.saturating_sub(ia.pfc_tx_frames),
                    pfc_rx_frames: ob.pfc_rx_frames.saturating_sub(oa.pfc_rx_frames),
                }
            })
            .collect();
    }
    let end1 = all_counters(ctls)?;
    for i in 0..n {
        let d = live::delta(&start[i], &end1[i]);
        out.fill_ring_tx_packets
            .push(lossless(&d, OUT_PORT).tx_packets);
        out.delivered_packets
            .push(lossless(&d, HOST_PORT).tx_packets);
        out.phase1_drops.push(
            d.iter()
                .filter(|c| c.priority == u32::from(LOSSLESS_PRIORITY))
                .map(|c| c.drops)
                .sum(),
        );
    }

    // Phase 2: the watchdog breaks the deadlock.
    for c in ctls.iter_mut() {
        c.watch_events()?;
    }
    let enabled = Instant::now();
    for (i, c) in ctls.iter_mut().enumerate() {
        c.set_watchdog(Some(cfg.watchdog))
            .with_context(|| format!("enabling the watchdog on {}", switch_name(i)))?;
    }
    out.wd_events = vec![Vec::new(); n];
    (out.first_storm_after, out.recovered_after) = wait_recovered(
        ctls,
        &mut out.wd_events,
        &storm_counts(&end1),
        enabled,
        cfg.recover_limit,
        stop,
    )?;
    let end2 = all_counters(ctls)?;
    out.wd_storms = storm_counts(&end2);
    out.queued_after_recovery_bytes = end2
        .iter()
        .map(|c| c.iter().map(|x| x.queue_depth_bytes).sum())
        .collect();

    if out.recovered_after.is_none() {
        // Still stuck: a burst would only queue behind the deadlock.
        return Ok(out);
    }

    // Phase 3: the same oversubscription with the watchdog on throughout.
    let mut clients = start_clients(
        g,
        topo,
        bins,
        cfg,
        &all,
        cfg.speed_bps,
        cfg.fill_s,
        "watchdog",
    )?;
    wait_all(
        &mut clients,
        Duration::from_secs_f64(cfg.fill_s + 15.0),
        stop,
    )?;
    let ended = Instant::now();
    out.wd_on_events = vec![Vec::new(); n];
    // Storms during the run are already in the streams; count from the
    // senders' exit.
    (_, out.wd_on_recovered_after) = wait_recovered(
        ctls,
        &mut out.wd_on_events,
        &storm_counts(&end2),
        ended,
        cfg.recover_limit,
        stop,
    )?;
    let end3 = all_counters(ctls)?;
    for i in 0..n {
        let d = live::delta(&end2[i], &end3[i]);
        out.wd_on_delivered_packets
            .push(lossless(&d, HOST_PORT).tx_packets);
        out.wd_on_storms
            .push(d.iter().map(|x| x.watchdog_storms).sum());
        out.wd_on_queued_bytes
            .push(end3[i].iter().map(|x| x.queue_depth_bytes).sum());
    }
    if out.wd_on_recovered_after.is_none() {
        return Ok(out);
    }

    // Phase 4: traffic flows again, whole (watchdog still on).
    let mut servers = Vec::new();
    for h in &topo.hosts {
        let mut argv = vec![bins.roceperf.display().to_string()];
        argv.extend(agent_args(
            "server",
            h,
            cfg.speed_bps,
            RING_DSCP,
            cfg.roce_mtu_bytes,
            &[],
        ));
        servers.push(spawn_agent(
            g,
            topo,
            &h.name,
            argv,
            &format!("{}-server", h.name),
        )?);
    }
    // The servers must have their sockets open before data arrives.
    sleep_or_stop(Duration::from_millis(300), stop)?;
    let senders = &all[..n - 1];
    let mut clients = start_clients(
        g,
        topo,
        bins,
        cfg,
        senders,
        cfg.burst_rate_bps,
        cfg.burst_s,
        "burst",
    )?;
    wait_all(
        &mut clients,
        Duration::from_secs_f64(cfg.burst_s + 15.0),
        stop,
    )?;
    for c in ctls.iter_mut() {
        if !c.wait_drained(live::DRAIN_LIMIT, stop)? {
            tracing::warn!("ring queues still not empty after {:?}", live::DRAIN_LIMIT);
        }
    }
    sleep_or_stop(Duration::from_millis(200), stop)?;
    for s in &mut servers {
        stop_server(s)?;
    }
    let end4 = all_counters(ctls)?;
    for c in ctls.iter_mut() {
        out.burst_wd_events
            .push(c.watchdog_events(Duration::from_millis(1))?);
    }
    for i in 0..n {
        let d = live::delta(&end3[i], &end4[i]);
        out.burst_ring_tx_packets
            .push(lossless(&d, OUT_PORT).tx_packets);
        out.burst_drops.push(
            d.iter()
                .filter(|c| c.priority == u32::from(LOSSLESS_PRIORITY))
                .map(|c| c.drops)
                .sum(),
        );
        out.queued_after_burst_bytes
            .push(end4[i].iter().map(|x| x.queue_depth_bytes).sum());
    }
    for (k, &i) in senders.iter().enumerate() {
        let to = (i + 2) % n;
        let tx = summary_of(g, clients[k].id())?;
        let rx = summary_of(g, servers[to].id())?;
        out.burst.push(BurstFlow {
            from: host_name(i),
            to: host_name(to),
            tx_bytes: tx["tx_bytes"].as_u64().unwrap_or(0),
            rx_bytes: rx["rx_bytes"].as_u64().unwrap_or(0),
            psn_gaps: rx["psn_gaps"].as_u64().unwrap_or(0),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_topology_is_valid_and_closes_clockwise() {
        let store = StateStore::new(Path::new("/tmp/rl-ring-unit"));
        for n in [3, 4] {
            let t = ring_topology("ring", n, 20_000_000, Path::new("/x/roceswitch"), &store);
            t.validate().unwrap();
            assert_eq!(
                (t.switches.len(), t.hosts.len(), t.links.len()),
                (n, n, 2 * n)
            );
            for i in 0..n {
                let s = switch_name(i);
                let ports: Vec<String> = t.ports_of(&s).into_iter().map(|(p, _)| p).collect();
                assert_eq!(ports.len(), 3, "{s}: {ports:?}");
                let out = format!("{s}:p{OUT_PORT}");
                let next_in = format!("{}:p{IN_PORT}", switch_name((i + 1) % n));
                assert!(
                    t.links.iter().any(|l| l.a == out && l.b == next_in),
                    "{s} p1 is not linked to the next switch's p2"
                );
                assert_eq!(
                    t.ports_of(&host_name(i)),
                    [("eth0".to_string(), 20_000_000)]
                );
            }
            let cmd = t.expand("s0", t.switches[0].command.as_ref().unwrap());
            assert!(cmd.join(" ").contains("--port 2=p2 --speed 20M"), "{cmd:?}");
        }
    }

    fn good() -> DeadlockOutcome {
        let held = HeldSwitch {
            queue_start_bytes: 20_000,
            queue_end_bytes: 20_000,
            ring_tx_packets: 0,
            pfc_tx_frames: 150,
            pfc_rx_frames: 150,
        };
        let flow = BurstFlow {
            from: "h0".into(),
            to: "h2".into(),
            tx_bytes: 1000,
            rx_bytes: 1000,
            psn_gaps: 0,
        };
        DeadlockOutcome {
            fill_ring_tx_packets: vec![100; 3],
            delivered_packets: vec![0, 5, 9],
            formed_after: Some(Duration::from_millis(30)),
            held: vec![held; 3],
            held_for: Duration::from_secs(3),
            phase1_drops: vec![0; 3],
            wd_events: vec![
                vec![
                    WatchdogEvent::Storm {
                        port: 1,
                        priority: 3,
                    },
                    WatchdogEvent::Restore {
                        port: 1,
                        priority: 3,
                    },
                ],
                vec![],
                vec![],
            ],
            wd_storms: vec![1, 0, 0],
            first_storm_after: Some(Duration::from_millis(260)),
            recovered_after: Some(Duration::from_millis(800)),
            queued_after_recovery_bytes: vec![0; 3],
            wd_on_delivered_packets: vec![2000, 900, 1500],
            wd_on_storms: vec![2, 0, 1],
            wd_on_events: vec![vec![]; 3],
            wd_on_recovered_after: Some(Duration::from_millis(700)),
            wd_on_queued_bytes: vec![0; 3],
            burst: vec![flow.clone(), flow],
            burst_ring_tx_packets: vec![600, 1200, 600],
            burst_drops: vec![0; 3],
            burst_wd_events: vec![vec![]; 3],
            queued_after_burst_bytes: vec![0; 3],
            pause_graph: None,
            ring_cycle: Some("s0:p1 -> s1:p2, s1:p1 -> s2:p2, s2:p1 -> s0:p2 (priority 3)".into()),
            ring_cycle_at_ms: Some(44.5),
            first_storm_at_ms: Some(6323.1),
        }
    }

    #[test]
    fn a_deadlock_and_a_recovery_pass_and_each_failure_is_named() {
        assert_eq!(good().problems(), Vec::<String>::new());
        let mut moving = good();
        moving.held[1].ring_tx_packets = 3;
        moving.held[1].queue_end_bytes = 10_000;
        let p = moving.problems().join("\n");
        assert!(
            p.contains("s1: ring port sent") && p.contains("s1: ring queue changed"),
            "{p}"
        );
        let mut unrefreshed = good();
        unrefreshed.held[2].pfc_tx_frames = 0;
        assert!(unrefreshed.problems()[0].contains("s2: XOFF not refreshed"));
        let mut never = good();
        never.formed_after = None;
        never.held.clear();
        assert_eq!(
            never.problems(),
            ["the ring never stopped: no deadlock formed"]
        );
        let mut blind = good();
        blind.wd_storms = vec![0; 3];
        blind.recovered_after = None;
        assert_eq!(blind.problems().len(), 2);
        let mut lossy = good();
        lossy.burst[0].rx_bytes = 900;
        assert!(lossy.problems()[0].contains("not delivered whole"));
        let mut stuck = good();
        stuck.wd_on_delivered_packets = vec![0, 0, 0];
        assert!(stuck.problems()[0].contains("got no packet"));
        // The live pause view must name the ring's cycle, and no later than
        // the watchdog's first storm.
        let mut unseen = good();
        unseen.ring_cycle = None;
        unseen.ring_cycle_at_ms = None;
        assert_eq!(
            unseen.problems(),
            ["the live pause view named no cycle across the ring"]
        );
        let mut late = good();
        late.ring_cycle_at_ms = Some(7000.0);
        assert!(late.problems()[0].contains("after the first watchdog storm"));
    }

    #[test]
    fn only_the_whole_ring_counts_as_its_cycle() {
        let link = |a: usize, b: usize| {
            (
                PortId::new(switch_name(a), OUT_PORT as u16),
                PortId::new(switch_name(b), IN_PORT as u16),
            )
        };
        assert!(crosses_the_ring(&[link(0, 1), link(1, 2), link(2, 0)], 3));
        assert!(!crosses_the_ring(&[link(0, 1), link(1, 2)], 3));
        assert!(!crosses_the_ring(&[link(0, 1), link(1, 2), link(2, 0)], 4));
    }

    /// The report is for people: units on every number, no Rust debug
    /// formatting (`Some(`, `{ `, `[[`), and a phase that never happened
    /// says so in words.
    #[test]
    fn the_summary_reads_without_debug_artefacts() {
        let mut o = good();
        o.recovered_after = None;
        let text = o.summary();
        for artefact in ["Some(", "None", "{ ", " }", "[[", "Storm {", "Restore {"] {
            assert!(!text.contains(artefact), "{artefact:?} in:\n{text}");
        }
        assert!(text.contains("restored and drained never"), "{text}");
        assert!(text.contains("storm on port"), "{text}");
        assert!(text.contains(" ms"), "{text}");
        for p in o.problems() {
            assert!(!p.contains("Some(") && !p.contains("{ "), "{p}");
        }
    }
}
