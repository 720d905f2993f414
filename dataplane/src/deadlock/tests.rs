use super::*;

fn ms(t: u64) -> Instant {
    Instant::from_millis(t)
}

/// Three switches in a ring: si:p1 -> s(i+1):p2, like the deadlock ring.
fn ring(n: usize) -> PauseGraph {
    let mut g = PauseGraph::new();
    for i in 0..n {
        g.add_link(
            PortId::new(format!("s{i}"), 1),
            PortId::new(format!("s{}", (i + 1) % n), 2),
        );
        g.add_link(
            PortId::new(format!("s{i}"), 0),
            PortId::new(format!("h{i}"), 0),
        );
    }
    g
}

fn pause(g: &mut PauseGraph, node: &str, port: u16, paused: bool, t: u64) -> bool {
    g.handle(
        node,
        PauseInput::EgressPaused {
            port,
            priority: 3,
            paused,
        },
        ms(t),
    )
}

fn xoff(g: &mut PauseGraph, node: &str, port: u16, asserted: bool, t: u64) -> bool {
    g.handle(
        node,
        PauseInput::IngressXoff {
            port,
            priorities: 1 << 3,
            asserted,
        },
        ms(t),
    )
}

/// Every ring switch asserting XOFF on its ring ingress and paused on its
/// ring egress.
fn deadlock(g: &mut PauseGraph, n: usize) {
    for i in 0..n {
        let s = format!("s{i}");
        xoff(g, &s, 2, true, 1);
        pause(g, &s, 1, true, 2);
    }
}

#[test]
fn a_closed_ring_of_pauses_is_one_cycle_naming_its_links() {
    let mut g = ring(3);
    deadlock(&mut g, 3);
    let c = g.cycles();
    assert_eq!(c.len(), 1, "{}", g.describe());
    assert_eq!(c[0].vertices.len(), 6);
    assert_eq!(
        c[0].describe(),
        "s0:p1 -> s1:p2, s1:p1 -> s2:p2, s2:p1 -> s0:p2 (priority 3)"
    );
    assert_eq!(g.history().len(), 1);
    assert_eq!(g.history()[0].span.start, ms(2));
    assert!(g.describe().starts_with("CYCLE s0:p1 -> s1:p2"));
}

#[test]
fn an_open_chain_of_pauses_is_no_cycle() {
    let mut g = ring(3);
    // s0 and s1 paused and asserting, s2 neither: a chain, not a ring.
    for s in ["s0", "s1"] {
        xoff(&mut g, s, 2, true, 1);
        pause(&mut g, s, 1, true, 2);
    }
    xoff(&mut g, "s2", 2, true, 3);
    assert!(g.cycles().is_empty(), "{}", g.describe());
    assert!(!g.edges().is_empty());
    assert!(g.describe().starts_with("no cycle"));
}

#[test]
fn an_unpause_removes_its_edge_and_breaks_the_cycle() {
    let mut g = ring(3);
    deadlock(&mut g, 3);
    let before = g.edges().len();
    assert!(pause(&mut g, "s1", 1, false, 10), "the cycle set changed");
    assert_eq!(
        g.edges().len(),
        before - 2,
        "its own edge and s1:p2's XOFF edge to it"
    );
    assert!(g.cycles().is_empty());
    assert_eq!(g.history()[0].span.end, Some(ms(10)));
    // Paused again: a new cycle span.
    assert!(pause(&mut g, "s1", 1, true, 12));
    assert_eq!(g.history().len(), 2);
    assert_eq!(g.history()[1].span.start, ms(12));
}

#[test]
fn an_xon_breaks_the_cycle_too() {
    let mut g = ring(4);
    deadlock(&mut g, 4);
    assert_eq!(g.cycles().len(), 1);
    assert_eq!(g.cycles()[0].links().len(), 4);
    xoff(&mut g, "s3", 2, false, 5);
    assert!(g.cycles().is_empty());
}

#[test]
fn a_watchdog_storm_cuts_the_paused_queue_out_until_restored() {
    let mut g = ring(3);
    deadlock(&mut g, 3);
    let storm = |storm| PauseInput::Watchdog {
        port: 1,
        priority: 3,
        storm,
    };
    assert!(g.handle("s2", storm(true), ms(300)));
    assert!(g.cycles().is_empty());
    assert_eq!(g.history()[0].span.end, Some(ms(300)));
    assert!(g.handle("s2", storm(false), ms(700)));
    assert_eq!(g.cycles().len(), 1, "still paused: the cycle is back");
    assert_eq!(g.markers().len(), 2);
}

#[test]
fn other_priorities_do_not_join_a_cycle() {
    let mut g = ring(3);
    for i in 0..3 {
        let s = format!("s{i}");
        xoff(&mut g, &s, 2, true, 1);
        // Egress paused on priority 4, not 3.
        g.handle(
            &s,
            PauseInput::EgressPaused {
                port: 1,
                priority: 4,
                paused: true,
            },
            ms(2),
        );
    }
    assert!(g.cycles().is_empty(), "{}", g.describe());
}

#[test]
fn two_disjoint_cycles_are_both_named() {
    let mut g = ring(3);
    for i in 0..3 {
        g.add_link(
            PortId::new(format!("t{i}"), 1),
            PortId::new(format!("t{}", (i + 1) % 3), 2),
        );
    }
    deadlock(&mut g, 3);
    for i in 0..3 {
        let s = format!("t{i}");
        xoff(&mut g, &s, 2, true, 1);
        pause(&mut g, &s, 1, true, 2);
    }
    let names: Vec<String> = g.cycles().iter().map(Cycle::describe).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].starts_with("s0:p1") && names[1].starts_with("t0:p1"));
}

#[test]
fn the_timeline_keeps_every_pause_interval() {
    let mut g = ring(3);
    pause(&mut g, "s0", 1, true, 1);
    pause(&mut g, "s0", 1, true, 2); // no change
    pause(&mut g, "s0", 1, false, 3);
    pause(&mut g, "s0", 1, true, 5);
    pause(&mut g, "s1", 1, false, 6); // never paused: no row
    let rows = g.timeline();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].kind, StateKind::EgressPaused);
    assert_eq!(
        rows[0].spans,
        vec![
            Span {
                start: ms(1),
                end: Some(ms(3))
            },
            Span {
                start: ms(5),
                end: None
            }
        ]
    );
    // Without a known peer, the edge still points somewhere.
    let mut lone = PauseGraph::new();
    pause(&mut lone, "sw", 4, true, 1);
    assert_eq!(lone.edges()[0].1.port.node, "peer of sw:p4");
}

#[test]
fn tm_events_map_to_inputs() {
    let e = TmEvent::XoffSent {
        port: 2,
        pg: 3,
        priorities: 0x08,
    };
    assert_eq!(
        PauseInput::from_tm(&e),
        Some(PauseInput::IngressXoff {
            port: 2,
            priorities: 0x08,
            asserted: true
        })
    );
    let e = TmEvent::PauseRxEnded {
        port: 1,
        priority: 3,
    };
    assert_eq!(
        PauseInput::from_tm(&e),
        Some(PauseInput::EgressPaused {
            port: 1,
            priority: 3,
            paused: false
        })
    );
    assert_eq!(
        PauseInput::from_tm(&TmEvent::HeadroomOverflow { port: 0, pg: 3 }),
        None
    );
}

#[test]
fn the_picture_names_the_cycle_and_has_a_ms_axis() {
    let mut g = ring(3);
    deadlock(&mut g, 3);
    g.handle(
        "s0",
        PauseInput::Watchdog {
            port: 1,
            priority: 3,
            storm: true,
        },
        ms(250),
    );
    g.handle_timeout(ms(400));
    let svg = render_svg(&g, "ring", Instant::ZERO, None);
    assert!(svg.starts_with("<svg"));
    assert!(
        svg.contains("s0:p1 -&gt; s1:p2"),
        "cycle named in the caption"
    );
    assert!(svg.contains("broken at 250.0 ms"));
    assert!(svg.contains("time [ms]"));
    assert!(svg.contains("watchdog storm s0:p1"));
    assert!(svg.contains("s1:p2 prio 3 XOFF to s0:p1"));
}
