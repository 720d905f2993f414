//! The live PFC deadlock view, client side: one or more switches' fabric
//! event streams (`PauseChange`, watchdog storm/restore) and their
//! `GetPauseState` snapshots fed into one [`PauseGraph`] (the model the
//! simulator feeds too), with a terminal view redrawn as it changes.
//!
//! Contract: [`PauseWatch`] is sans-IO (events in, graph out); times are
//! the switches' wall-clock event stamps, as [`Instant`]s since the first
//! one seen (the timeline starts at 0 ms). [`follow`] subscribes to every
//! switch first, then reads the snapshots, so no change between the two
//! is lost (a change read twice is harmless: inputs set states). A
//! subscriber that falls behind loses events (the server says so in its
//! log); the next snapshot is the way back, which `follow` does not take.

use std::future::Future;

use dataplane::deadlock::{PauseGraph, PauseInput};
use dataplane::time::Instant;
use proto::roceswitch::fabric::v1 as pb;
use proto::roceswitch::fabric::v1::fabric_qos_client::FabricQosClient;
use tokio_stream::{StreamExt, StreamMap};
use tonic::transport::Channel;

/// The inputs an event carries for the deadlock view (none for most kinds).
pub fn event_input(ev: &pb::Event) -> Option<PauseInput> {
    use pb::event::Kind;
    let small = |v: u32| u16::try_from(v).ok();
    match ev.kind.as_ref()? {
        Kind::PauseChange(c) => change_input(c),
        Kind::Storm(s) => Some(PauseInput::Watchdog {
            port: small(s.port)?,
            priority: u8::try_from(s.priority).ok().filter(|p| *p < 8)?,
            storm: true,
        }),
        Kind::Restore(r) => Some(PauseInput::Watchdog {
            port: small(r.port)?,
            priority: u8::try_from(r.priority).ok().filter(|p| *p < 8)?,
            storm: false,
        }),
        _ => None,
    }
}

/// A `PauseChange` as a graph input (`None` if out of range or of an
/// unknown kind).
pub fn change_input(c: &pb::PauseChange) -> Option<PauseInput> {
    let port = u16::try_from(c.port).ok()?;
    let priority = u8::try_from(c.priority).ok().filter(|p| *p < 8)?;
    match pb::PauseKind::try_from(c.kind).ok()? {
        pb::PauseKind::EgressPaused => Some(PauseInput::EgressPaused {
            port,
            priority,
            paused: c.active,
        }),
        pb::PauseKind::IngressXoff => Some(PauseInput::IngressXoff {
            port,
            priorities: 1 << priority,
            asserted: c.active,
        }),
        pb::PauseKind::Unspecified => None,
    }
}

/// A pause graph fed from fabric events.
#[derive(Debug, Clone)]
pub struct PauseWatch {
    graph: PauseGraph,
    origin_ns: Option<u64>,
}

impl PauseWatch {
    /// Starts from `graph` (its links; usually nothing paused yet).
    pub fn new(graph: PauseGraph) -> Self {
        PauseWatch {
            graph,
            origin_ns: None,
        }
    }

    /// The graph so far.
    pub fn graph(&self) -> &PauseGraph {
        &self.graph
    }

    /// `ns` (wall clock) as an instant since the first stamp seen.
    pub fn instant(&mut self, ns: u64) -> Instant {
        let origin = *self.origin_ns.get_or_insert(ns);
        Instant::from_nanos(ns.saturating_sub(origin))
    }

    /// Applies `node`'s event; true if the cycles changed.
    pub fn handle_event(&mut self, node: &str, ev: &pb::Event) -> bool {
        let Some(input) = event_input(ev) else {
            return false;
        };
        let now = self.instant(ev.timestamp_ns);
        self.graph.handle(node, input, now)
    }

    /// Applies `node`'s snapshot taken at `now_ns`; true if the cycles changed.
    pub fn handle_snapshot(&mut self, node: &str, r: &pb::PauseStateReply, now_ns: u64) -> bool {
        let now = self.instant(now_ns);
        let mut changed = false;
        for c in &r.active {
            if let Some(i) = change_input(c) {
                changed |= self.graph.handle(node, i, now);
            }
        }
        for s in &r.storms {
            let ev = pb::Event {
                timestamp_ns: now_ns,
                kind: Some(pb::event::Kind::Storm(*s)),
            };
            changed |= self.handle_event(node, &ev);
        }
        changed
    }

    /// Moves the end of the timeline to `now_ns`.
    pub fn handle_timeout(&mut self, now_ns: u64) {
        let now = self.instant(now_ns);
        self.graph.handle_timeout(now);
    }

    /// The watch's graph, consumed.
    pub fn into_graph(self) -> PauseGraph {
        self.graph
    }
}

/// Wall-clock now, ns since the Unix epoch.
pub fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Follows `switches` (name, channel) into `watch` until `stop` resolves or
/// every stream ends; calls `show` after the snapshots and after every
/// event that changed the graph's edges.
pub async fn follow(
    switches: Vec<(String, Channel)>,
    watch: &mut PauseWatch,
    stop: impl Future<Output = ()>,
    mut show: impl FnMut(&PauseGraph),
) -> Result<(), tonic::Status> {
    let mut streams = StreamMap::new();
    let mut clients = Vec::new();
    for (name, ch) in switches {
        let mut c = FabricQosClient::new(ch);
        let s = c
            .watch_events(pb::WatchEventsRequest {})
            .await
            .map_err(|e| tonic::Status::new(e.code(), format!("{name}: {}", e.message())))?
            .into_inner();
        streams.insert(name.clone(), s);
        clients.push((name, c));
    }
    for (name, c) in &mut clients {
        let snap = c
            .get_pause_state(pb::GetConfigRequest {})
            .await
            .map_err(|e| tonic::Status::new(e.code(), format!("{name}: {}", e.message())))?
            .into_inner();
        watch.handle_snapshot(name, &snap, wall_ns());
    }
    show(watch.graph());
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            next = streams.next() => {
                let Some((name, ev)) = next else { break };
                let ev = ev?;
                let before = watch.graph().edges();
                let cycles = watch.handle_event(&name, &ev);
                if cycles || watch.graph().edges() != before {
                    show(watch.graph());
                }
            }
        }
    }
    watch.handle_timeout(wall_ns());
    Ok(())
}

/// The terminal view: a header line and [`PauseGraph::describe`].
pub fn view(g: &PauseGraph, switches: usize) -> String {
    let at = g
        .time_range()
        .map_or(0.0, |(_, last)| last.as_nanos() as f64 / 1e6);
    format!(
        "PFC deadlock view: {switches} switch(es), {} link(s), {:.1} ms since the first event, {} cycle episode(s) so far\n{}",
        g.links().len(),
        at,
        g.history().len(),
        g.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use dataplane::deadlock::PortId;

    fn change(port: u32, kind: pb::PauseKind, active: bool, at_ns: u64) -> pb::Event {
        pb::Event {
            timestamp_ns: at_ns,
            kind: Some(pb::event::Kind::PauseChange(pb::PauseChange {
                port,
                priority: 3,
                kind: kind as i32,
                active,
            })),
        }
    }

    /// Three switches' snapshots and events make the ring's cycle; a
    /// watchdog storm event breaks it, at the event's own time.
    #[test]
    fn events_and_snapshots_from_three_switches_close_the_ring() {
        let mut g = PauseGraph::new();
        for i in 0..3 {
            g.add_link(
                PortId::new(format!("s{i}"), 1),
                PortId::new(format!("s{}", (i + 1) % 3), 2),
            );
        }
        let mut w = PauseWatch::new(g);
        let t0 = 1_700_000_000_000_000_000;
        // s0 already paused and asserting when the watch starts.
        let snap = pb::PauseStateReply {
            active: vec![
                pb::PauseChange {
                    port: 1,
                    priority: 3,
                    kind: pb::PauseKind::EgressPaused as i32,
                    active: true,
                },
                pb::PauseChange {
                    port: 2,
                    priority: 3,
                    kind: pb::PauseKind::IngressXoff as i32,
                    active: true,
                },
            ],
            storms: vec![],
        };
        assert!(!w.handle_snapshot("s0", &snap, t0));
        for (k, s) in ["s1", "s2"].iter().enumerate() {
            let t = t0 + 1_000_000 * (k as u64 + 1);
            w.handle_event(s, &change(2, pb::PauseKind::IngressXoff, true, t));
            w.handle_event(s, &change(1, pb::PauseKind::EgressPaused, true, t));
        }
        let c = w.graph().cycles();
        assert_eq!(c.len(), 1);
        assert_eq!(
            c[0].describe(),
            "s0:p1 -> s1:p2, s1:p1 -> s2:p2, s2:p1 -> s0:p2 (priority 3)"
        );
        assert_eq!(w.graph().history()[0].span.start, Instant::from_millis(2));
        let storm = pb::Event {
            timestamp_ns: t0 + 250_000_000,
            kind: Some(pb::event::Kind::Storm(pb::WatchdogStorm {
                port: 1,
                priority: 3,
            })),
        };
        assert!(w.handle_event("s1", &storm));
        assert!(w.graph().cycles().is_empty());
        assert_eq!(
            w.graph().history()[0].span.end,
            Some(Instant::from_millis(250))
        );
        assert!(view(w.graph(), 3).contains("no cycle"));
    }

    #[test]
    fn unknown_kinds_and_out_of_range_values_are_ignored() {
        let mut bad = change(1, pb::PauseKind::EgressPaused, true, 0);
        if let Some(pb::event::Kind::PauseChange(c)) = &mut bad.kind {
            c.priority = 9;
        }
        assert_eq!(event_input(&bad), None);
        let cfg = pb::Event {
            timestamp_ns: 0,
            kind: Some(pb::event::Kind::ConfigApplied(pb::ConfigApplied {
                generation: 1,
                section: "ecn".into(),
            })),
        };
        assert_eq!(event_input(&cfg), None);
    }
}
