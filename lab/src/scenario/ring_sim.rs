//! The deadlock ring in the simulator (`rocelab run deadlock --sim`): the
//! topology and switch setups of [`super::ring`] (every route clockwise,
//! static small XOFF/XON), simulated hosts writing two hops clockwise at
//! line rate, and the PFC watchdog on from the start. The switches'
//! pause-state changes feed a [`PauseGraph`] (the same model `rocelab
//! watch` assembles from live switches), which names the cycle when it
//! forms; the watchdog then declares storms and the cycle breaks.
//!
//! Contract: deterministic for a config and seed; runs
//! [`RingConfig::fill_s`] of sending plus [`RingConfig::recover_limit`]
//! (at most 1 s) of simulated time, and judges nothing itself
//! ([`RingSimOutcome::problems`] lists what did not happen). Times are
//! simulated, from zero.

use std::path::Path;

use anyhow::{Result, anyhow};
use dataplane::deadlock::PauseGraph;
use dataplane::fabric::config::{WatchdogAction, WatchdogConfig};
use dataplane::sim::Probe;
use dataplane::time::{Duration, Instant};

use super::LOSSLESS_PRIORITY;
use super::ring::{
    HOST_PORT, OUT_PORT, RING_DSCP, RING_PART, RingConfig, host_name, ring_fabric, switch_name,
    switch_setup,
};
use super::sim::{HostParams, add_stream_window, build_with, messages_for, mk_host, node};

/// What the simulated ring showed.
#[derive(Debug, Clone)]
pub struct RingSimOutcome {
    /// The assembled pause-dependency graph with its timeline.
    pub graph: PauseGraph,
    /// Each watchdog storm (switch, port, time).
    pub storms: Vec<(String, u16, Instant)>,
    /// Payload bytes the receivers got.
    pub delivered_bytes: u64,
    /// Bytes still queued on the ring ports at the end.
    pub queued_at_end_bytes: u64,
    /// End of the run.
    pub end: Instant,
}

fn ms(t: Instant) -> f64 {
    t.as_nanos() as f64 / 1e6
}

impl RingSimOutcome {
    /// When the first cycle formed, and its name.
    pub fn first_cycle(&self) -> Option<(Instant, String)> {
        self.graph
            .history()
            .first()
            .map(|h| (h.span.start, h.cycle.describe()))
    }

    /// When the first cycle broke.
    pub fn first_break(&self) -> Option<Instant> {
        self.graph.history().first().and_then(|h| h.span.end)
    }

    /// The earliest watchdog storm.
    pub fn first_storm(&self) -> Option<Instant> {
        self.storms.iter().map(|s| s.2).min()
    }

    /// A few lines for people.
    pub fn summary(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        match self.first_cycle() {
            Some((t, name)) => {
                let _ = writeln!(s, "cycle formed at {:.3} ms: {name}", ms(t));
            }
            None => s.push_str("no cycle formed\n"),
        }
        match self.first_storm() {
            Some(t) => {
                let _ = writeln!(
                    s,
                    "watchdog: first storm at {:.3} ms, {} storm(s): {}",
                    ms(t),
                    self.storms.len(),
                    self.storms
                        .iter()
                        .map(|(n, p, t)| format!("{n}:p{p} at {:.1} ms", ms(*t)))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            None => s.push_str("watchdog: no storm\n"),
        }
        match self.first_break() {
            Some(t) => {
                let _ = writeln!(s, "cycle broken at {:.3} ms", ms(t));
            }
            None => s.push_str("cycle never broken\n"),
        }
        let _ = writeln!(
            s,
            "{} cycle episode(s); at the end ({:.1} ms): {}, {} queued on the ring, {} delivered",
            self.graph.history().len(),
            ms(self.end),
            if self.graph.cycles().is_empty() {
                "no cycle"
            } else {
                "a cycle"
            },
            crate::units::format_bytes(self.queued_at_end_bytes),
            crate::units::format_bytes(self.delivered_bytes),
        );
        s
    }

    /// Every expectation not met (empty: the cycle was named no later than
    /// the first storm, and the watchdog broke it).
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        let Some((formed, _)) = self.first_cycle() else {
            p.push("no cycle in the pause-dependency graph".into());
            return p;
        };
        match self.first_storm() {
            None => p.push("the watchdog declared no storm".into()),
            Some(st) if st < formed => p.push(format!(
                "the cycle was named at {:.3} ms, after the first storm at {:.3} ms",
                ms(formed),
                ms(st)
            )),
            Some(_) => {}
        }
        if self.first_break().is_none() {
            p.push("the cycle never broke".into());
        }
        if let Some(c) = self.graph.history().first()
            && c.cycle.links().len() != self.graph_ring_links()
        {
            p.push(format!(
                "the cycle does not cross every ring link: {}",
                c.cycle.describe()
            ));
        }
        p
    }

    fn graph_ring_links(&self) -> usize {
        self.graph
            .links()
            .iter()
            .filter(|(a, b)| a.node.starts_with('s') && b.node.starts_with('s'))
            .count()
    }

    /// Writes `ring_pause_graph.svg` (graph + timeline) into `dir`.
    pub fn write(&self, dir: &Path) -> Result<std::path::PathBuf> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("ring_pause_graph.svg");
        dataplane::deadlock::write_svg(
            &self.graph,
            &path,
            "deadlock ring, simulator: PFC pause dependencies",
            Instant::ZERO,
            Some(self.end),
        )?;
        Ok(path)
    }
}

/// Runs the ring in the simulator, every host sending; with `series_dir`,
/// the ring queues and deliveries also go there as a time series (CSV +
/// SVG).
pub fn run(cfg: &RingConfig, seed: u64, series_dir: Option<&Path>) -> Result<RingSimOutcome> {
    let all: Vec<usize> = (0..cfg.switches).collect();
    run_with(cfg, seed, &all, series_dir)
}

/// [`run`] with only `senders` sending (host i writes to host i+2).
pub fn run_with(
    cfg: &RingConfig,
    seed: u64,
    senders: &[usize],
    series_dir: Option<&Path>,
) -> Result<RingSimOutcome> {
    let n = cfg.switches;
    if n < 3 {
        return Err(anyhow!(
            "a deadlock ring needs at least 3 switches, got {n}"
        ));
    }
    let topo = ring_fabric("sim-ring", n, cfg.speed_bps);
    let w = cfg.watchdog;
    let setups: Vec<_> = (0..n)
        .map(|i| {
            let mut s = switch_setup(i, cfg);
            s.fabric.watchdog = WatchdogConfig {
                enabled: true,
                detection_time_ms: w.detection_time_ms,
                restoration_time_ms: (w.restoration_time_ms > 0).then_some(w.restoration_time_ms),
                action: Some(if w.drop {
                    WatchdogAction::Drop
                } else {
                    WatchdogAction::Forward
                }),
                poll_interval_ms: w.poll_interval_ms,
            };
            s
        })
        .collect();
    let params = HostParams {
        rate_bps: cfg.speed_bps,
        dscp: RING_DSCP,
        ecn: false,
        dcqcn: false,
        mtu_bytes: cfg.roce_mtu_bytes,
    };
    let (mut b, ids) = build_with(&topo, &setups, seed, |i| mk_host(RING_PART, i, params))?;
    let hosts: Vec<_> = (0..n)
        .map(|i| node(&ids, &host_name(i)))
        .collect::<Result<_>>()?;
    let sws: Vec<_> = (0..n)
        .map(|i| node(&ids, &switch_name(i)))
        .collect::<Result<_>>()?;
    let fill = Duration::from_nanos((cfg.fill_s * 1e9) as u64);
    let msgs = messages_for(cfg.speed_bps, fill, 1);
    for &i in senders {
        let d = (i + 2) % n;
        // A window the senders never reach: ACKs queue behind data in the
        // same lossless class, and the deadlock is about buffers, not RC.
        add_stream_window(
            &mut b,
            (hosts[i], i),
            (hosts[d], d),
            RING_PART,
            0x300 + i as u32,
            msgs,
            1 << 16,
        )?;
    }
    let mut sim = b.build();
    let mut probes = Vec::new();
    for (i, &s) in sws.iter().enumerate() {
        probes.push((
            Probe::QueueBytes {
                node: s,
                port: OUT_PORT as u16,
                queue: LOSSLESS_PRIORITY,
            },
            format!("s{i} ring queue"),
        ));
        probes.push((
            Probe::TxGbps {
                node: s,
                port: HOST_PORT as u16,
            },
            format!("s{i} to h{i}"),
        ));
    }
    for (i, &s) in sws.iter().enumerate() {
        probes.push((
            Probe::Paused {
                node: s,
                port: OUT_PORT as u16,
                priority: LOSSLESS_PRIORITY,
            },
            format!("s{i}:p{OUT_PORT} paused"),
        ));
    }
    sim.record(
        Duration::from_millis(1),
        probes.iter().map(|(p, n)| (*p, n.as_str())).collect(),
    );
    if let Some(rec) = sim.recorder_mut() {
        rec.add_line("queue [KB]", "ingress XOFF", cfg.xoff_bytes as f64 / 1000.0);
        rec.add_line("queue [KB]", "ingress XON", cfg.xon_bytes as f64 / 1000.0);
        rec.smooth("throughput [Gb/s]", 5_000.0);
    }
    // The live limit is seconds of waiting on a loaded machine; simulated
    // time needs a detection and a restoration or two after the senders.
    let after = cfg.recover_limit.min(std::time::Duration::from_secs(1));
    let end = Instant::ZERO + fill + Duration::from_nanos(after.as_nanos() as u64);
    sim.run_until(end);
    let names: std::collections::BTreeMap<usize, String> =
        ids.iter().map(|(k, &v)| (v, k.clone())).collect();
    let graph = sim.pause_graph(|id| names.get(&id).cloned().unwrap_or_default());
    let storms = graph
        .markers()
        .iter()
        .filter(|m| m.storm)
        .map(|m| (m.port.node.clone(), m.port.port, m.at))
        .collect();
    let mut delivered = 0;
    for &i in senders {
        let d = (i + 2) % n;
        if let Some(st) = sim
            .host(hosts[d])
            .and_then(|h| h.rnic().qp_stats(0x300 + i as u32))
        {
            delivered += st.rx_payload_bytes;
        }
    }
    let queued = sws
        .iter()
        .filter_map(|&s| sim.switch(s))
        .map(|s| s.queue_bytes(OUT_PORT as u16, LOSSLESS_PRIORITY))
        .sum();
    if let (Some(dir), Some(rec)) = (series_dir, sim.recorder()) {
        rec.write(dir, "sim_ring_timeseries")
            .map_err(|e| anyhow!("writing the time series to {}: {e}", dir.display()))?;
    }
    Ok(RingSimOutcome {
        graph,
        storms,
        delivered_bytes: delivered,
        queued_at_end_bytes: queued,
        end: sim.now(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ring deadlocks, the graph names the cycle over the three ring
    /// links no later than the watchdog's first storm, and the storm
    /// breaks it.
    #[test]
    fn the_simulated_ring_names_its_cycle_before_the_watchdog_breaks_it() {
        let cfg = RingConfig {
            fill_s: 0.5,
            recover_limit: std::time::Duration::from_millis(700),
            ..RingConfig::default()
        };
        let o = run(&cfg, 1, None).unwrap();
        assert_eq!(o.problems(), Vec::<String>::new(), "{}", o.summary());
        let (formed, name) = o.first_cycle().unwrap();
        assert_eq!(
            name,
            "s0:p1 -> s1:p2, s1:p1 -> s2:p2, s2:p1 -> s0:p2 (priority 3)"
        );
        let storm = o.first_storm().unwrap();
        assert!(formed <= storm, "{}", o.summary());
        let broke = o.first_break().unwrap();
        assert!(broke >= storm, "broken by the watchdog: {}", o.summary());
    }

    /// Without the last flow the ring is a chain: switches still pause
    /// each other (two flows share s1's ring link) but nothing waits in a
    /// circle, and the graph says so.
    #[test]
    fn a_ring_with_one_silent_host_pauses_without_a_cycle() {
        let cfg = RingConfig {
            fill_s: 0.3,
            recover_limit: std::time::Duration::from_millis(200),
            ..RingConfig::default()
        };
        let o = run_with(&cfg, 1, &[0, 1], None).unwrap();
        let switch_pauses = o
            .graph
            .timeline()
            .iter()
            .filter(|r| {
                r.kind == dataplane::deadlock::StateKind::EgressPaused
                    && r.port.node.starts_with('s')
                    && r.port.port == OUT_PORT as u16
            })
            .count();
        assert!(
            switch_pauses > 0,
            "a switch paused another: {}",
            o.summary()
        );
        assert!(o.graph.history().is_empty(), "{}", o.summary());
        assert!(o.storms.is_empty(), "{}", o.summary());
        assert_eq!(o.problems(), ["no cycle in the pause-dependency graph"]);
    }
}
