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

use crate::fabric::{SwitchSetup, setups};
use crate::labctl::{self, state::LabState, state::StateStore};
use crate::scenario::live::{
    SWITCH_START, find_roceswitch, lab_headroom_bytes, sock_path, switch_command,
};
use crate::scenario::switchctl::SwitchCtl;
use crate::topo::Topology;
use crate::units::parse_rate_bps;

/// Brings `topo` up (see the module doc); `file` is recorded in the state.
pub fn up(
    topo: &Topology,
    file: Option<&Path>,
    store: &StateStore,
    stop: &AtomicBool,
) -> Result<LabState> {
    topo.validate()?;
    if !topo.switches.iter().any(|s| s.roceswitch) {
        return labctl::up(topo, file, store, stop);
    }
    let topo = &with_lab_headroom(topo)?;
    // setups() also checks that every roceswitch port is pN, without gaps.
    let plans = setups(topo)?;
    let bin = find_roceswitch()?;
    let mut staged = topo.clone();
    for s in staged.switches.iter_mut().filter(|s| s.roceswitch) {
        let ports = &plan(&plans, &s.name)?.fabric.ports;
        let speed = ports.iter().map(|p| p.speed_bps).max().unwrap_or(0);
        s.command = Some(switch_command(
            &bin,
            ports.len(),
            speed,
            &sock_path(store, &topo.name, &s.name),
        ));
    }
    // Hosts start once their switches route: held back from labctl::up.
    let host_commands: Vec<(String, String, Vec<String>)> = staged
        .hosts
        .iter_mut()
        .flat_map(|h| {
            let cmds: Vec<(String, String, Vec<String>)> = h
                .commands()
                .into_iter()
                .map(|(log, c)| (h.name.clone(), log, c.clone()))
                .collect();
            h.command = None;
            h.extra_commands.clear();
            cmds
        })
        .collect();
    let mut st = labctl::up(&staged, file, store, stop)?;
    let programmed = (|| -> Result<()> {
        for s in topo.switches.iter().filter(|s| s.roceswitch) {
            let setup = plan(&plans, &s.name)?;
            let addr = format!("unix:{}", sock_path(store, &topo.name, &s.name).display());
            SwitchCtl::connect(&addr, SWITCH_START, stop)
                .and_then(|mut c| c.apply(setup))
                .with_context(|| format!("programming switch {}", s.name))?;
        }
        let mut started = Vec::new();
        for (node, log, argv) in &host_commands {
            let argv = staged.expand(node, argv);
            let child = labctl::spawn_recorded(&mut st, store, node, &topo.netns(node), argv, log)?;
            started.push((node.clone(), child));
        }
        labctl::check_started(&st, &mut started, stop)
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

/// The setup of switch `name`.
/// `topo` with the lab's PFC headroom when its `[qos]` gives none. The
/// calculator sizes headroom for a hardware peer that stops within
/// 802.1Qbb's response time; a namespace lab's peers are user-space agents
/// and daemons behind veths, which keep sending far longer after XOFF
/// ([`lab_headroom_bytes`], the size `rocelab run` uses too). Without it a
/// lossless priority of `lossy-lossless.toml` or the walkthrough dropped
/// thousands of frames while pausing.
fn with_lab_headroom(topo: &Topology) -> Result<Topology> {
    let mut topo = topo.clone();
    if topo.qos.headroom_bytes.is_none() {
        let mut fastest = 0;
        for link in &topo.links {
            fastest = fastest.max(
                parse_rate_bps(&link.speed)
                    .with_context(|| format!("link {}-{} speed", link.a, link.b))?,
            );
        }
        topo.qos.headroom_bytes = Some(lab_headroom_bytes(fastest));
    }
    Ok(topo)
}

fn plan<'a>(plans: &'a [SwitchSetup], name: &str) -> Result<&'a SwitchSetup> {
    plans
        .iter()
        .find(|p| p.name == name)
        .with_context(|| format!("switch {name}: no setup"))
}
