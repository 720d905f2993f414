//! `rocelab watch LAB`: the PFC deadlock view of a running lab. The lab's
//! state file gives its links (namespace + interface at each end, so
//! `rl-<lab>-s0`/`p1` is `s0:p1`, a host's `eth0` is its port 0) and the
//! switches whose gRPC socket is in the lab's log directory (every
//! roceswitch of `rocelab up` and of `rocelab run`); their fabric event
//! streams are assembled by [`control::pausewatch`] into one
//! pause-dependency graph, redrawn in the terminal as it changes, and
//! written as SVG at the end.
//!
//! Contract: [`lab_graph`] is pure; [`run`] blocks until `stop` is set or
//! `seconds` pass, then returns the graph. Needs read access to the
//! lab's sockets (root, or the daemon's `--grpc-group`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use control::pausewatch::{PauseWatch, follow, view};
use dataplane::deadlock::{PauseGraph, PortId};

use crate::fabric::switch_port;
use crate::labctl::state::{LabState, StateStore};
use crate::topo::NETNS_PREFIX;

/// The node name of namespace `netns` of `lab`, if it is one of the lab's.
fn node_of(lab: &str, netns: &str) -> Option<String> {
    netns
        .strip_prefix(NETNS_PREFIX)?
        .strip_prefix(lab)?
        .strip_prefix('-')
        .map(str::to_string)
}

/// The lab's links as a graph (nothing paused yet), and its node names.
pub fn lab_graph(st: &LabState) -> (PauseGraph, Vec<String>) {
    let mut g = PauseGraph::new();
    let mut nodes = std::collections::BTreeSet::new();
    for l in &st.links {
        let (Some(a), Some(b)) = (node_of(&st.lab, &l.a_netns), node_of(&st.lab, &l.b_netns))
        else {
            continue;
        };
        let port = |iface: &str| switch_port(iface).unwrap_or(0);
        g.add_link(
            PortId::new(a.clone(), port(&l.a_iface)),
            PortId::new(b.clone(), port(&l.b_iface)),
        );
        nodes.insert(a);
        nodes.insert(b);
    }
    (g, nodes.into_iter().collect())
}

/// Watches `lab` until `stop` or `seconds`; redraws the view on stdout.
pub fn run(
    lab: &str,
    store: &StateStore,
    seconds: Option<f64>,
    stop: &AtomicBool,
) -> Result<PauseGraph> {
    let tty = std::io::IsTerminal::is_terminal(&std::io::stdout());
    follow_lab(lab, store, seconds, stop, |g, switches| {
        if tty {
            print!("\x1b[2J\x1b[H");
        }
        println!("{}", view(g, switches));
    })
}

/// Assembles `lab`'s pause-dependency graph from its switches' event
/// streams until `stop` or `seconds`; `show` gets the graph (and the number
/// of switches followed) after every change. [`run`] draws it; a scenario
/// keeps the graph to judge it.
pub fn follow_lab(
    lab: &str,
    store: &StateStore,
    seconds: Option<f64>,
    stop: &AtomicBool,
    mut show: impl FnMut(&PauseGraph, usize),
) -> Result<PauseGraph> {
    let st = store
        .load(lab)
        .with_context(|| format!("lab {lab}: no state file (is it up?)"))?;
    let (graph, nodes) = lab_graph(&st);
    let socks: Vec<(String, PathBuf)> = nodes
        .iter()
        .map(|n| (n.clone(), store.log_dir(lab).join(format!("{n}.sock"))))
        .filter(|(_, p)| p.exists())
        .collect();
    if socks.is_empty() {
        bail!(
            "lab {lab} has no roceswitch switch with a gRPC socket in {}",
            store.log_dir(lab).display()
        );
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("tokio runtime")?;
    let n = socks.len();
    rt.block_on(async {
        let mut switches = Vec::new();
        for (name, path) in &socks {
            let addr = format!("unix:{}", path.display());
            let ch = control::client::connect(&addr)
                .await
                .with_context(|| format!("{name}: connecting to {addr}"))?;
            switches.push((name.clone(), ch));
        }
        let mut watch = PauseWatch::new(graph);
        let end = seconds.map(|s| std::time::Instant::now() + Duration::from_secs_f64(s.max(0.0)));
        let until = async {
            while !stop.load(Ordering::SeqCst) && end.is_none_or(|e| std::time::Instant::now() < e)
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        follow(switches, &mut watch, until, |g| show(g, n))
            .await
            .map_err(|s| anyhow::anyhow!("fabric event stream: {}", s.message()))?;
        Ok(watch.into_graph())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labctl::state::LinkRecord;

    #[test]
    fn the_state_files_links_become_the_graphs_links() {
        let link = |a: &str, ai: &str, b: &str, bi: &str| LinkRecord {
            a_netns: format!("rl-ring-{a}"),
            a_iface: ai.into(),
            b_netns: format!("rl-ring-{b}"),
            b_iface: bi.into(),
            speed_bps: 20_000_000,
        };
        let st = LabState {
            lab: "ring".into(),
            links: vec![
                link("h0", "eth0", "s0", "p0"),
                link("s0", "p1", "s1", "p2"),
                link("s1", "p1", "s0", "p2"),
            ],
            ..LabState::default()
        };
        let (g, nodes) = lab_graph(&st);
        assert_eq!(nodes, ["h0", "s0", "s1"]);
        assert_eq!(g.peer(&PortId::new("s0", 1)), Some(&PortId::new("s1", 2)));
        assert_eq!(g.peer(&PortId::new("s0", 0)), Some(&PortId::new("h0", 0)));
        assert_eq!(node_of("ring", "rl-ringx-s0"), None);
    }
}
