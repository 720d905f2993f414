//! `rocelab up` for topologies whose switches run roceswitch
//! (`roceswitch = true`): the daemons start with their `pN` interfaces as
//! ports, each is programmed with the topology's `[qos]` and shortest-path
//! routes ([`crate::fabric::setups`], the path `rocelab run` uses), and only
//! then do the hosts' commands start, so a client's first packet already
//! finds its route. Everything started is recorded in the lab's state file:
//! `rocelab down` stops it, and a failure on the way tears the lab down.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};

use crate::fabric::setups;
use crate::labctl::{self, state::LabState, state::StateStore};
use crate::scenario::live::{
    SWITCH_START, find_binary, find_roceswitch, sock_path, switch_command,
};
use crate::scenario::switchctl::SwitchCtl;
use crate::topo::Topology;

/// Brings `topo` up (see the module doc); `file` is recorded in the state.
pub fn up(
    topo: &Topology,
    file: Option<&Path>,
    store: &StateStore,
    stop: &AtomicBool,
) -> Result<LabState> {
    topo.validate()?;
    let mut staged = topo.clone();
    let commands = staged.switches.iter_mut().map(|s| &mut s.command);
    for cmd in commands.chain(staged.hosts.iter_mut().map(|h| &mut h.command)) {
        if let Some(argv) = cmd.take() {
            *cmd = Some(own_tool(argv));
        }
    }
    if !topo.switches.iter().any(|s| s.roceswitch) {
        return labctl::up(&staged, file, store, stop);
    }
    let plans = setups(topo)?;
    let bin = find_roceswitch()?;
    for s in staged.switches.iter_mut().filter(|s| s.roceswitch) {
        let ports = staged_ports(topo, &s.name)?;
        let speed = ports.iter().map(|&(_, bps)| bps).max().unwrap_or(0);
        s.command = Some(switch_command(
            &bin,
            ports.len(),
            speed,
            &sock_path(store, &topo.name, &s.name),
        ));
    }
    // Hosts start once their switches route: held back from labctl::up.
    let host_commands: Vec<(String, Vec<String>)> = staged
        .hosts
        .iter_mut()
        .filter_map(|h| Some((h.name.clone(), h.command.take()?)))
        .collect();
    let mut st = labctl::up(&staged, file, store, stop)?;
    let programmed = (|| -> Result<()> {
        for s in topo.switches.iter().filter(|s| s.roceswitch) {
            let setup = plans
                .iter()
                .find(|p| p.name == s.name)
                .with_context(|| format!("switch {}: no setup", s.name))?;
            let addr = format!("unix:{}", sock_path(store, &topo.name, &s.name).display());
            SwitchCtl::connect(&addr, SWITCH_START, stop)
                .and_then(|mut c| c.apply(setup))
                .with_context(|| format!("programming switch {}", s.name))?;
        }
        let mut started = Vec::new();
        for (node, argv) in &host_commands {
            let argv = staged.expand(node, argv);
            let child =
                labctl::spawn_recorded(&mut st, store, node, &topo.netns(node), argv, node)?;
            started.push((node, child));
        }
        // A command that dies at once (bad binary, bad flags) fails the lab,
        // as in labctl::up.
        std::thread::sleep(labctl::START_CHECK);
        for (node, child) in &mut started {
            if let Some(status) = child.try_wait()?
                && !status.success()
            {
                let log = store.log_dir(&topo.name).join(format!("{node}.log"));
                anyhow::bail!(
                    "host {node}: command exited at once ({status}): {}",
                    labctl::log_tail(&log)
                );
            }
        }
        Ok(())
    })();
    match programmed {
        Ok(()) => Ok(st),
        Err(e) => {
            if let Err(e2) = labctl::teardown(&st, store) {
                return Err(e.context(format!("cleanup ALSO failed: {e2:#}")));
            }
            Err(e.context(format!(
                "bringing lab {:?} up (everything created was removed)",
                topo.name
            )))
        }
    }
}

/// `argv` with a bare `roceperf` or `roceswitch` resolved to the binary
/// next to rocelab (then PATH), so a lab runs from a build tree as is.
fn own_tool(mut argv: Vec<String>) -> Vec<String> {
    if let Some(first) = argv.first_mut()
        && matches!(first.as_str(), "roceperf" | "roceswitch")
        && let Ok(exe) = std::env::current_exe()
        && let Some(found) = find_binary(first, &exe)
    {
        *first = found.display().to_string();
    }
    argv
}

/// The `pN` ports of switch `node` with their link speeds, numbered 0..N
/// without gaps (what roceswitch's `--port` list needs).
fn staged_ports(topo: &Topology, node: &str) -> Result<Vec<(u16, u64)>> {
    let mut ports = Vec::new();
    for (iface, speed) in topo.ports_of(node) {
        let n = crate::fabric::switch_port(&iface).with_context(|| {
            format!("switch {node}: interface {iface} must be named pN to be a roceswitch port")
        })?;
        ports.push((n, speed));
    }
    ports.sort_unstable();
    for (i, &(n, _)) in ports.iter().enumerate() {
        anyhow::ensure!(
            usize::from(n) == i,
            "switch {node}: ports must be p0..p{} without gaps (p{i} missing)",
            ports.len() - 1
        );
    }
    Ok(ports)
}
