//! PFC watchdog (deadlock / pause-storm detection), the state machine of
//! reference §12 (R-WD-1..12), per (port, lossless priority).
//!
//! Contract: sans-IO. The owner (the traffic manager) calls
//! [`Watchdog::handle_poll`] every poll interval with a closure that reads
//! its cumulative counters as a [`WdSample`]; the watchdog compares them with
//! the previous poll (R-WD-4: the first poll after (re)start only records
//! baselines), runs the detection and restoration timers in µs (R-WD-6/7),
//! and reports transitions through [`Watchdog::poll_event`]. The owner then
//! applies [`Watchdog::mode`] for the affected queue (R-WD-9): `Forward`
//! ignores received PFC for the priority and generates none; `Drop` also
//! discards the queue and every new packet of that priority; `Alert` changes
//! nothing. BIG_RED_SWITCH (R-WD-11) forces `Drop` on every watched queue and
//! suspends detection. Allocation: only at construction and in the bounded
//! event queue.
//!
//! The watched unit is (port, priority p); its queue is the egress queue p
//! maps to, and its PFC counter is "PFC frames received for p".
//! Counter names follow SWSS/SU (R-WD-10). Persisting STORMED queues across a
//! restart (R-WD-12) is the control plane's job: [`Watchdog::stormed`] lists
//! them and [`Watchdog::restore_stormed`] re-enters that state.

use std::collections::VecDeque;

use crate::time::Instant;

/// What to do with a stormed queue (R-WD-1, R-WD-9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WdAction {
    /// Discard the queue and new arrivals, ignore received PFC (default).
    #[default]
    Drop,
    /// Ignore received PFC so the queue drains.
    Forward,
    /// Counters and log only.
    Alert,
}

/// Watchdog state of one queue (R-WD-3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WdState {
    /// "operational".
    #[default]
    Operational,
    /// "stormed".
    Stormed,
}

/// What the owner must currently do for one (port, priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WdMode {
    /// Normal forwarding and PFC.
    #[default]
    Normal,
    /// Ignore received PFC for the priority, generate none.
    Forward,
    /// `Forward` + discard queue and arrivals.
    Drop,
}

/// Global watchdog settings (R-WD-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchdogConfig {
    /// POLL_INTERVAL in ms, [100, 1000]; default 100 (`PFC_WD_POLL_MSECS`, R-WD-2).
    pub poll_interval_ms: u32,
    /// BIG_RED_SWITCH.
    pub big_red_switch: bool,
}

impl Default for WatchdogConfig {
    fn default() -> Self {
        WatchdogConfig {
            poll_interval_ms: 100,
            big_red_switch: false,
        }
    }
}

impl WatchdogConfig {
    /// Range problems (empty when valid).
    pub fn problems(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if !(100..=1000).contains(&self.poll_interval_ms) {
            out.push("poll_interval_ms must be in [100, 1000]");
        }
        out
    }
}

/// Per-port watchdog settings (R-WD-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchdogPortConfig {
    /// detection_time in ms, [100, 5000], ≥ poll interval.
    pub detection_time_ms: u32,
    /// restoration_time in ms, [100, 60000], ≥ poll interval; `None` = never auto-restore.
    pub restoration_time_ms: Option<u32>,
    /// Action while stormed.
    pub action: WdAction,
    /// Watched priorities (pfcwd_sw_enable), bit p = priority p. Default 3 and 4.
    pub priorities: u8,
    /// pfc_stat_history (recorded, no effect on the state machine).
    pub pfc_stat_history: bool,
}

impl Default for WatchdogPortConfig {
    fn default() -> Self {
        WatchdogPortConfig::start(200, None)
    }
}

impl WatchdogPortConfig {
    /// CLI `pfcwd start`: restoration defaults to 2 × detection (R-WD-2).
    pub fn start(detection_time_ms: u32, restoration_time_ms: Option<u32>) -> Self {
        WatchdogPortConfig {
            detection_time_ms,
            restoration_time_ms: Some(
                restoration_time_ms.unwrap_or(detection_time_ms.saturating_mul(2)),
            ),
            action: WdAction::Drop,
            priorities: (1 << 3) | (1 << 4),
            pfc_stat_history: false,
        }
    }

    /// CLI `start_default` for a switch with `ports` ports (R-WD-2, E-17):
    /// m = max(1, (ports − 1) div 32 + 1); detection = restoration = 200·m ms;
    /// poll = min(200·m, 1000) ms; action drop.
    pub fn start_default(ports: u32) -> (WatchdogConfig, WatchdogPortConfig) {
        let m = (ports.saturating_sub(1) / 32 + 1).max(1);
        let t = 200 * m;
        let global = WatchdogConfig {
            poll_interval_ms: t.min(1000),
            big_red_switch: false,
        };
        let port = WatchdogPortConfig {
            detection_time_ms: t,
            restoration_time_ms: Some(t),
            action: WdAction::Drop,
            priorities: (1 << 3) | (1 << 4),
            pfc_stat_history: false,
        };
        (global, port)
    }

    /// Range problems against the global poll interval (empty when valid).
    pub fn problems(&self, global: &WatchdogConfig) -> Vec<&'static str> {
        let mut out = Vec::new();
        if !(100..=5000).contains(&self.detection_time_ms) {
            out.push("detection_time_ms must be in [100, 5000]");
        }
        if self.detection_time_ms < global.poll_interval_ms {
            out.push("detection_time_ms must be >= poll_interval_ms");
        }
        if let Some(r) = self.restoration_time_ms {
            if !(100..=60_000).contains(&r) {
                out.push("restoration_time_ms must be in [100, 60000]");
            }
            if r < global.poll_interval_ms {
                out.push("restoration_time_ms must be >= poll_interval_ms");
            }
        }
        out
    }
}

/// The owner's cumulative counters for one (port, priority), read at a poll.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WdSample {
    /// Packets now in the priority's egress queue.
    pub occupancy_packets: u64,
    /// Packets transmitted from that queue, cumulative.
    pub tx_packets: u64,
    /// Packets dropped at that queue, cumulative.
    pub tx_drop_packets: u64,
    /// Packets of the priority admitted on the port, cumulative.
    pub rx_packets: u64,
    /// Packets of the priority dropped on arrival at the port, cumulative.
    pub rx_drop_packets: u64,
    /// PFC frames received with the priority's enable bit, cumulative.
    pub pfc_rx_frames: u64,
}

/// Per-queue watchdog counters (R-WD-10, SWSS/SU names in the docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WdQueueStats {
    /// PFC_WD_STATUS.
    pub status: WdState,
    /// PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED.
    pub deadlock_detected: u64,
    /// PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED.
    pub deadlock_restored: u64,
    /// TX OK, cumulative over all storms.
    pub tx_ok: u64,
    /// TX DROP, cumulative over all storms.
    pub tx_drop: u64,
    /// RX OK, cumulative over all storms.
    pub rx_ok: u64,
    /// RX DROP, cumulative over all storms.
    pub rx_drop: u64,
    /// TX LAST OK (current or last storm).
    pub tx_last_ok: u64,
    /// TX LAST DROP.
    pub tx_last_drop: u64,
    /// RX LAST OK.
    pub rx_last_ok: u64,
    /// RX LAST DROP.
    pub rx_last_drop: u64,
}

/// A watchdog transition (R-WD-12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WdEvent {
    /// The queue entered STORMED.
    StormDetected {
        /// Port.
        port: u16,
        /// Priority.
        priority: u8,
        /// Action applied.
        action: WdAction,
        /// The sample that completed detection.
        seen: WdSample,
    },
    /// The queue returned to OPERATIONAL.
    StormRestored {
        /// Port.
        port: u16,
        /// Priority.
        priority: u8,
        /// Counters at restoration.
        stats: WdQueueStats,
    },
}

#[derive(Clone, Copy, Debug, Default)]
struct WdQueue {
    enabled: bool,
    detect_us: u64,
    restore_us: Option<u64>,
    action: WdAction,
    detect_left_us: u64,
    restore_left_us: u64,
    baseline: Option<WdSample>,
    storm_base: WdSample,
    /// Cumulative counters of storms already restored.
    done: WdQueueStats,
    stats: WdQueueStats,
}

/// Upper bound on queued, undrained events.
const MAX_EVENTS: usize = 1024;

/// The watchdog for every port of one switch.
///
/// Call order: construct; every `poll_interval()` call [`Self::handle_poll`];
/// then drain [`Self::poll_event`] and re-read [`Self::mode`] for the queues
/// named in the events. [`Self::handle_big_red_switch`] may change every
/// queue's mode at once; the owner re-reads all modes after it.
#[derive(Clone, Debug)]
pub struct Watchdog {
    poll_us: u64,
    big_red_switch: bool,
    queues: Vec<[WdQueue; 8]>,
    events: VecDeque<WdEvent>,
    last_poll: Option<Instant>,
}

impl Watchdog {
    /// A watchdog for `ports.len()` ports; `None` = watchdog off on that port.
    pub fn new(global: &WatchdogConfig, ports: &[Option<WatchdogPortConfig>]) -> Self {
        let queues = ports
            .iter()
            .map(|cfg| {
                let mut qs = [WdQueue::default(); 8];
                if let Some(cfg) = cfg {
                    for (p, q) in qs.iter_mut().enumerate() {
                        if cfg.priorities & (1 << p) != 0 {
                            let detect_us = u64::from(cfg.detection_time_ms) * 1000;
                            let restore_us = cfg.restoration_time_ms.map(|r| u64::from(r) * 1000);
                            *q = WdQueue {
                                enabled: true,
                                detect_us,
                                restore_us,
                                action: cfg.action,
                                detect_left_us: detect_us,
                                restore_left_us: restore_us.unwrap_or(0),
                                ..WdQueue::default()
                            };
                        }
                    }
                }
                qs
            })
            .collect();
        Watchdog {
            poll_us: u64::from(global.poll_interval_ms) * 1000,
            big_red_switch: global.big_red_switch,
            queues,
            events: VecDeque::new(),
            last_poll: None,
        }
    }

    /// The poll interval.
    pub fn poll_interval(&self) -> crate::time::Duration {
        crate::time::Duration::from_micros(self.poll_us)
    }

    /// `true` if any queue is watched.
    pub fn is_active(&self) -> bool {
        self.queues.iter().any(|qs| qs.iter().any(|q| q.enabled))
    }

    /// When the last poll ran.
    pub fn last_poll(&self) -> Option<Instant> {
        self.last_poll
    }

    /// One poll (R-WD-4..8). `sample(port, priority)` returns the owner's
    /// cumulative counters. Suspended while BIG_RED_SWITCH is on.
    pub fn handle_poll(&mut self, now: Instant, mut sample: impl FnMut(u16, u8) -> WdSample) {
        self.last_poll = Some(now);
        if self.big_red_switch {
            return;
        }
        let poll = self.poll_us;
        for (port, qs) in self.queues.iter_mut().enumerate() {
            for (prio, q) in qs.iter_mut().enumerate() {
                if !q.enabled {
                    continue;
                }
                let s = sample(port as u16, prio as u8);
                let Some(base) = q.baseline.replace(s) else {
                    continue;
                };
                let new_pfc = s.pfc_rx_frames > base.pfc_rx_frames;
                let storm_cond =
                    s.occupancy_packets > 0 && s.tx_packets == base.tx_packets && new_pfc;
                let ev_port = port as u16;
                let ev_prio = prio as u8;
                match q.stats.status {
                    WdState::Operational => {
                        if storm_cond {
                            if q.detect_left_us <= poll {
                                q.detect_left_us = q.detect_us;
                                q.restore_left_us = q.restore_us.unwrap_or(0);
                                enter_storm(q, s);
                                tracing::warn!(port, prio, action = ?q.action, "PFC storm detected");
                                push(
                                    &mut self.events,
                                    WdEvent::StormDetected {
                                        port: ev_port,
                                        priority: ev_prio,
                                        action: q.action,
                                        seen: s,
                                    },
                                );
                            } else {
                                q.detect_left_us -= poll;
                            }
                        } else {
                            q.detect_left_us = q.detect_us;
                        }
                    }
                    WdState::Stormed => {
                        update_storm_counters(q, s);
                        let restore = if q.action == WdAction::Alert {
                            // R-WD-8: alert restores on the first poll without the condition.
                            !storm_cond
                        } else if let Some(r) = q.restore_us {
                            if new_pfc {
                                q.restore_left_us = r;
                                false
                            } else if q.restore_left_us <= poll {
                                true
                            } else {
                                q.restore_left_us -= poll;
                                false
                            }
                        } else {
                            false
                        };
                        if restore {
                            leave_storm(q);
                            tracing::info!(port, prio, "PFC storm restored");
                            push(
                                &mut self.events,
                                WdEvent::StormRestored {
                                    port: ev_port,
                                    priority: ev_prio,
                                    stats: q.stats,
                                },
                            );
                        }
                    }
                }
            }
        }
    }

    /// BIG_RED_SWITCH (R-WD-11): enable forces `Drop` on every watched queue
    /// and suspends detection; disable undoes it and restarts from baselines.
    pub fn handle_big_red_switch(&mut self, enable: bool) {
        if self.big_red_switch == enable {
            return;
        }
        self.big_red_switch = enable;
        if !enable {
            for q in self.queues.iter_mut().flatten() {
                q.baseline = None;
                q.detect_left_us = q.detect_us;
                q.restore_left_us = q.restore_us.unwrap_or(0);
            }
        }
    }

    /// BIG_RED_SWITCH state.
    pub fn big_red_switch(&self) -> bool {
        self.big_red_switch
    }

    /// What the owner must do for (port, priority) now.
    pub fn mode(&self, port: u16, priority: u8) -> WdMode {
        let Some(q) = self.queue(port, priority) else {
            return WdMode::Normal;
        };
        if !q.enabled {
            return WdMode::Normal;
        }
        if self.big_red_switch {
            return WdMode::Drop;
        }
        match (q.stats.status, q.action) {
            (WdState::Operational, _) | (WdState::Stormed, WdAction::Alert) => WdMode::Normal,
            (WdState::Stormed, WdAction::Forward) => WdMode::Forward,
            (WdState::Stormed, WdAction::Drop) => WdMode::Drop,
        }
    }

    /// Counters of (port, priority), or `None` if it is not watched.
    pub fn stats(&self, port: u16, priority: u8) -> Option<WdQueueStats> {
        self.queue(port, priority)
            .filter(|q| q.enabled)
            .map(|q| q.stats)
    }

    /// Every STORMED (port, priority), for persistence (R-WD-12).
    pub fn stormed(&self) -> impl Iterator<Item = (u16, u8)> + '_ {
        self.queues.iter().enumerate().flat_map(|(port, qs)| {
            qs.iter()
                .enumerate()
                .filter(|(_, q)| q.enabled && q.stats.status == WdState::Stormed)
                .map(move |(p, _)| (port as u16, p as u8))
        })
    }

    /// Resume a persisted STORMED queue after a restart (R-WD-12). Returns
    /// `false` if (port, priority) is not watched.
    pub fn restore_stormed(&mut self, port: u16, priority: u8) -> bool {
        let Some(q) = self.queue_mut(port, priority) else {
            return false;
        };
        if !q.enabled {
            return false;
        }
        if q.stats.status == WdState::Operational {
            enter_storm(q, WdSample::default());
            q.storm_base = WdSample::default();
        }
        true
    }

    /// Next transition, oldest first.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<WdEvent> {
        self.events.pop_front()
    }

    fn queue(&self, port: u16, priority: u8) -> Option<&WdQueue> {
        self.queues
            .get(usize::from(port))?
            .get(usize::from(priority))
    }
    fn queue_mut(&mut self, port: u16, priority: u8) -> Option<&mut WdQueue> {
        self.queues
            .get_mut(usize::from(port))?
            .get_mut(usize::from(priority))
    }
}

fn push(events: &mut VecDeque<WdEvent>, ev: WdEvent) {
    if events.len() >= MAX_EVENTS {
        events.pop_front();
    }
    events.push_back(ev);
}

/// R-WD-10: DETECTED only increments while detected ≤ restored; LAST counters zeroed.
fn enter_storm(q: &mut WdQueue, s: WdSample) {
    q.stats.status = WdState::Stormed;
    if q.stats.deadlock_detected <= q.stats.deadlock_restored {
        q.stats.deadlock_detected += 1;
    }
    q.storm_base = s;
    q.stats.tx_last_ok = 0;
    q.stats.tx_last_drop = 0;
    q.stats.rx_last_ok = 0;
    q.stats.rx_last_drop = 0;
}

fn update_storm_counters(q: &mut WdQueue, s: WdSample) {
    let b = q.storm_base;
    let st = &mut q.stats;
    st.tx_last_ok = s.tx_packets.saturating_sub(b.tx_packets);
    st.tx_last_drop = s.tx_drop_packets.saturating_sub(b.tx_drop_packets);
    st.rx_last_ok = s.rx_packets.saturating_sub(b.rx_packets);
    st.rx_last_drop = s.rx_drop_packets.saturating_sub(b.rx_drop_packets);
    st.tx_ok = q.done.tx_ok + st.tx_last_ok;
    st.tx_drop = q.done.tx_drop + st.tx_last_drop;
    st.rx_ok = q.done.rx_ok + st.rx_last_ok;
    st.rx_drop = q.done.rx_drop + st.rx_last_drop;
}

fn leave_storm(q: &mut WdQueue) {
    q.stats.status = WdState::Operational;
    q.stats.deadlock_restored += 1;
    q.done.tx_ok = q.stats.tx_ok;
    q.done.tx_drop = q.stats.tx_drop;
    q.done.rx_ok = q.stats.rx_ok;
    q.done.rx_drop = q.stats.rx_drop;
    q.detect_left_us = q.detect_us;
}

#[cfg(test)]
mod tests;
