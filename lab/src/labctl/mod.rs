//! Bringing namespace labs up and down: the engine of `rocelab`.
//!
//! [`up`] turns a [`Topology`] into namespaces (`rl-<lab>-<node>`), veth
//! pairs created directly in their namespaces (nothing is made in the
//! caller's namespace, so names cannot clash with the host's), MACs (a
//! host's interface has its agent's MAC only if its kernel has an address,
//! `kernel_mac`), links up, IPv6 off (`disable_ipv6` on `all` and
//! `default` before any veth exists, so no router solicitations or ND), no
//! kernel IPv4 (agents use raw frames), then the nodes' commands. Every
//! created object is appended to the [`state::LabState`] and the state
//! file rewritten before the next step, so [`down`] can remove exactly
//! what exists, also after a crash.
//!
//! Rx offloads: GRO, LRO and rx VLAN offload are turned off on every lab
//! interface ([`offload`], the ethtool ioctls, no binary needed). On veth
//! the kernel strips 802.1Q tags in software anyway; the port restores them
//! from `PACKET_AUXDATA`.
//!
//! Failure handling: any failing step, or Ctrl-C (the [`crate::signal`]
//! flag, checked between steps), makes `up` tear down what it recorded and
//! return the original error with context. Processes are killed by pid
//! after checking their start time (SIGTERM, then SIGKILL after
//! [`KILL_GRACE`]); each command leads its own process group, and the group
//! is signalled too, so children a command forked do not outlive it. Errors are `anyhow` with the failing command line and
//! its stderr: every caller only reports them.

pub mod line;
pub mod offload;
pub mod state;
pub mod sys;

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use crate::topo::{Topology, parse_endpoint};
use crate::units::parse_rate_bps;
use state::{LabState, LinkRecord, ProcRecord, StateStore};

/// Time a process gets between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long links may take to become operationally up.
pub const LINK_UP_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a started command must survive to count as started.
pub const START_CHECK: Duration = Duration::from_millis(300);

/// Brings `topo` up. On failure or interruption everything created is
/// removed again and the error returned.
pub fn up(
    topo: &Topology,
    topology_file: Option<&Path>,
    store: &StateStore,
    stop: &AtomicBool,
) -> Result<LabState> {
    if store.exists(&topo.name) {
        bail!(
            "lab {:?} is already up (state file {}); run `rocelab down {}` first",
            topo.name,
            store.path(&topo.name).display(),
            topo.name
        );
    }
    for node in topo.nodes() {
        let ns = topo.netns(node);
        if sys::netns_exists(&ns) {
            bail!(
                "namespace {ns} exists but no state file records it; remove it with `ip netns del {ns}`"
            );
        }
    }
    let mut st = LabState {
        lab: topo.name.clone(),
        topology_file: topology_file.map(Path::to_path_buf),
        ..LabState::default()
    };
    store.save(&st)?;
    match build(topo, store, &mut st, stop) {
        Ok(()) => Ok(st),
        Err(e) => {
            tracing::warn!(error = %e, "up failed; removing what was created");
            match teardown(&st, store) {
                Ok(()) => Err(e.context(format!(
                    "bringing lab {:?} up (everything created was removed)",
                    topo.name
                ))),
                Err(e2) => Err(e.context(format!(
                    "bringing lab {:?} up; cleanup ALSO failed: {e2:#}",
                    topo.name
                ))),
            }
        }
    }
}

fn check_stop(stop: &AtomicBool) -> Result<()> {
    if stop.load(Ordering::SeqCst) {
        bail!("interrupted");
    }
    Ok(())
}

/// The MAC the kernel gives a host's interface. A host with a kernel
/// address ([`crate::topo::HostSpec::kernel_ip`]) has its agent's MAC, as
/// the switches deliver its kernel's traffic there. Any other host's
/// frames are for its agent alone (raw, promiscuous), so its interface
/// gets the agent's MAC with bit 2 of the first octet flipped (still
/// locally administered, unicast): the kernel then sees the agent's frames
/// as another host's and drops them on entry to IPv4 (`PACKET_OTHERHOST`)
/// instead of routing each one, finding no route and freeing a route
/// entry per frame (`ip_route_input_slow`, `dst_alloc`, `call_rcu` in a
/// profile of `rocelab run --speed 10G`), work done in the sending
/// switch's `send(2)` (README, #17 lab24).
fn kernel_mac(h: &crate::topo::HostSpec) -> String {
    if h.kernel_ip.is_some() {
        return h.mac.clone();
    }
    match h.mac.split_once(':') {
        Some((first, rest)) => match u8::from_str_radix(first, 16) {
            Ok(b) => format!("{:02x}:{rest}", b ^ 0x04),
            Err(_) => h.mac.clone(),
        },
        None => h.mac.clone(),
    }
}

fn build(topo: &Topology, store: &StateStore, st: &mut LabState, stop: &AtomicBool) -> Result<()> {
    for node in topo.nodes() {
        check_stop(stop)?;
        let ns = topo.netns(node);
        sys::ip(&["netns", "add", &ns]).with_context(|| format!("node {node}"))?;
        st.netns.push(ns.clone());
        store.save(st)?;
        sys::run(
            "ip",
            &[
                "netns",
                "exec",
                &ns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ],
        )
        .with_context(|| format!("node {node}: disabling IPv6"))?;
        sys::ip(&["-n", &ns, "link", "set", "lo", "up"]).with_context(|| format!("node {node}"))?;
    }
    for (i, l) in topo.links.iter().enumerate() {
        check_stop(stop)?;
        let (Some(a), Some(b)) = (parse_endpoint(&l.a), parse_endpoint(&l.b)) else {
            bail!("link {i}: bad endpoint");
        };
        let speed_bps = parse_rate_bps(&l.speed).with_context(|| format!("link {i}"))?;
        let (a_ns, b_ns) = (topo.netns(&a.node), topo.netns(&b.node));
        let mut args: Vec<String> = vec![
            "link".into(),
            "add".into(),
            "name".into(),
            a.iface.clone(),
            "netns".into(),
            a_ns.clone(),
        ];
        if let Some(h) = topo.host(&a.node) {
            args.extend(["address".into(), kernel_mac(h)]);
        }
        args.extend([
            "type".into(),
            "veth".into(),
            "peer".into(),
            "name".into(),
            b.iface.clone(),
            "netns".into(),
            b_ns.clone(),
        ]);
        if let Some(h) = topo.host(&b.node) {
            args.extend(["address".into(), kernel_mac(h)]);
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        sys::ip(&argv).with_context(|| format!("link {i} ({} <-> {})", l.a, l.b))?;
        st.links.push(LinkRecord {
            a_netns: a_ns.clone(),
            a_iface: a.iface.clone(),
            b_netns: b_ns.clone(),
            b_iface: b.iface.clone(),
            speed_bps,
        });
        store.save(st)?;
        for (ns, iface) in [(&a_ns, &a.iface), (&b_ns, &b.iface)] {
            if let Some(mtu) = l.mtu {
                sys::ip(&["-n", ns, "link", "set", iface, "mtu", &mtu.to_string()])
                    .with_context(|| format!("link {i}"))?;
            }
            offload::disable_rx_offloads_in(ns, iface)
                .with_context(|| format!("link {i}: turning rx offloads off on {ns}:{iface}"))?;
            sys::ip(&["-n", ns, "link", "set", iface, "up"])
                .with_context(|| format!("link {i}"))?;
        }
    }
    for l in &st.links {
        for (ns, iface) in [(&l.a_netns, &l.a_iface), (&l.b_netns, &l.b_iface)] {
            check_stop(stop)?;
            sys::wait_oper_up(ns, iface, LINK_UP_TIMEOUT)?;
        }
    }
    for h in &topo.hosts {
        if let Some(ip) = h.kernel_ip {
            check_stop(stop)?;
            let ns = topo.netns(&h.name);
            for (iface, _) in topo.ports_of(&h.name) {
                give_kernel_ip(&ns, &iface, ip)
                    .with_context(|| format!("host {}: kernel address {ip}", h.name))?;
            }
        }
    }
    let log_dir = store.log_dir(&topo.name);
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let mut children = Vec::new();
    let commands = topo
        .switches
        .iter()
        .filter_map(|s| Some((&s.name, s.name.clone(), s.command.as_ref()?)))
        .chain(topo.hosts.iter().flat_map(|h| {
            h.commands()
                .into_iter()
                .map(move |(log, c)| (&h.name, log, c))
        }));
    for (node, log_name, cmd) in commands {
        check_stop(stop)?;
        let argv = topo.expand(node, cmd);
        let ns = topo.netns(node);
        let log = log_dir.join(format!("{log_name}.log"));
        let child = spawn_in(&ns, &argv, &log)
            .with_context(|| format!("node {node}: starting {argv:?}"))?;
        let pid = child.id();
        let start_ticks = sys::start_ticks(pid).unwrap_or(0);
        st.processes.push(ProcRecord {
            node: node.clone(),
            netns: ns,
            pid,
            start_ticks,
            argv,
            log,
        });
        store.save(st)?;
        children.push((node.clone(), child));
    }
    check_started(st, &mut children, stop)?;
    st.complete = true;
    store.save(st)?;
    Ok(())
}

/// Fails if a command of `children` (recorded in `st`) dies within
/// [`START_CHECK`] of its start: a bad binary or bad flags fail the lab.
pub fn check_started(
    st: &LabState,
    children: &mut [(String, std::process::Child)],
    stop: &AtomicBool,
) -> Result<()> {
    let deadline = Instant::now() + START_CHECK;
    while Instant::now() < deadline {
        check_stop(stop)?;
        for (node, child) in children.iter_mut() {
            if let Some(status) = child.try_wait().context("waiting for a child")?
                && !status.success()
            {
                let rec = st.processes.iter().find(|p| &p.node == node);
                let tail = rec.map(|p| log_tail(&p.log)).unwrap_or_default();
                bail!("node {node}: command exited at once ({status}): {tail}");
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Resolves a bare program name next to our own executable first (so
/// `roceperf` in a topology finds the sibling binary), then via PATH.
fn resolve_program(prog: &str) -> PathBuf {
    if !prog.contains('/')
        && let Ok(me) = std::env::current_exe()
        && let Some(dir) = me.parent()
    {
        let sibling = dir.join(prog);
        if sibling.is_file() {
            return sibling;
        }
    }
    PathBuf::from(prog)
}

/// Starts `argv` inside namespace `ns` as the leader of its own process
/// group, stdout and stderr to `log`.
pub fn spawn_in(ns: &str, argv: &[String], log: &Path) -> Result<std::process::Child> {
    let Some((prog, args)) = argv.split_first() else {
        bail!("empty command");
    };
    let out = File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let err = out.try_clone()?;
    Command::new("ip")
        .args(["netns", "exec", ns])
        .arg(resolve_program(prog))
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        // Own process group: a Ctrl-C at the terminal reaches rocelab only,
        // which then cleans up by pid.
        .process_group(0)
        .spawn()
        .map_err(|e| anyhow!("spawning ip netns exec {ns}: {e}"))
}

/// Starts `argv` in `node`'s namespace after the lab is up, records it in
/// the lab's state (so [`down`] and [`teardown`] stop it too) and returns
/// the child. Its output goes to `<log dir>/<log_name>.log`.
pub fn spawn_recorded(
    st: &mut LabState,
    store: &StateStore,
    node: &str,
    ns: &str,
    argv: Vec<String>,
    log_name: &str,
) -> Result<std::process::Child> {
    let log_dir = store.log_dir(&st.lab);
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let log = log_dir.join(format!("{log_name}.log"));
    let child =
        spawn_in(ns, &argv, &log).with_context(|| format!("node {node}: starting {argv:?}"))?;
    let pid = child.id();
    st.processes.push(ProcRecord {
        node: node.to_string(),
        netns: ns.to_string(),
        pid,
        start_ticks: sys::start_ticks(pid).unwrap_or(0),
        argv,
        log,
    });
    store.save(st)?;
    Ok(child)
}

/// Gateway the kernel of a host with a `kernel_ip` routes through: a
/// link-local address whose neighbour entry is the switches' router MAC
/// (the switch answers no ARP).
pub const KERNEL_GATEWAY: &str = "169.254.0.1";

/// `ip` on `iface` in `ns`, everything else through the switch.
fn give_kernel_ip(ns: &str, iface: &str, ip: std::net::Ipv4Addr) -> Result<()> {
    let mac = crate::units::format_mac(&crate::fabric::ROUTER_MAC);
    offload::disable_tx_offloads_in(ns, iface)
        .with_context(|| format!("turning tx offloads off on {ns}:{iface}"))?;
    sys::ip(&["-n", ns, "addr", "add", &format!("{ip}/32"), "dev", iface])?;
    sys::ip(&[
        "-n",
        ns,
        "neigh",
        "replace",
        KERNEL_GATEWAY,
        "lladdr",
        &mac,
        "dev",
        iface,
        "nud",
        "permanent",
    ])?;
    sys::ip(&[
        "-n",
        ns,
        "route",
        "replace",
        "default",
        "via",
        KERNEL_GATEWAY,
        "dev",
        iface,
        "onlink",
    ])?;
    Ok(())
}

/// The last five lines of a log file, joined with ` | `.
pub fn log_tail(p: &Path) -> String {
    let text = std::fs::read_to_string(p).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

/// Removes everything `st` records: processes (by pid, start time
/// checked), veth pairs, namespaces; then the state file. Keeps going past
/// failures and reports them all at the end.
pub fn teardown(st: &LabState, store: &StateStore) -> Result<()> {
    let mut problems = Vec::new();
    // Each command leads its own process group (spawned with
    // process_group(0)); signal the group so its children go too.
    let mut verified = Vec::new();
    for p in st.processes.iter().rev() {
        if sys::is_same_process_alive(p.pid, p.start_ticks) {
            verified.push(p.pid);
            let _ = sys::signal_group(p.pid, libc::SIGTERM);
            if let Err(e) = sys::signal(p.pid, libc::SIGTERM) {
                problems.push(format!("SIGTERM to {} (pid {}): {e}", p.node, p.pid));
            }
        }
    }
    let deadline = Instant::now() + KILL_GRACE;
    for p in st.processes.iter().rev() {
        if !verified.contains(&p.pid) {
            continue;
        }
        loop {
            sys::reap(p.pid);
            if !sys::is_same_process_alive(p.pid, p.start_ticks) {
                break;
            }
            if Instant::now() >= deadline {
                let _ = sys::signal_group(p.pid, libc::SIGKILL);
                let _ = sys::signal(p.pid, libc::SIGKILL);
                std::thread::sleep(Duration::from_millis(50));
                sys::reap(p.pid);
                if sys::is_same_process_alive(p.pid, p.start_ticks) {
                    problems.push(format!("{} (pid {}) survived SIGKILL", p.node, p.pid));
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Children that ignored SIGTERM or outlived their leader.
        let _ = sys::signal_group(p.pid, libc::SIGKILL);
    }
    for l in st.links.iter().rev() {
        // Deleting one end removes the pair; either end may already be gone.
        for (ns, iface) in [(&l.a_netns, &l.a_iface), (&l.b_netns, &l.b_iface)] {
            if sys::netns_exists(ns) && sys::ip(&["-n", ns, "link", "show", iface]).is_ok() {
                if let Err(e) = sys::ip(&["-n", ns, "link", "del", iface]) {
                    problems.push(format!("{e:#}"));
                }
                break;
            }
        }
    }
    for ns in st.netns.iter().rev() {
        if sys::netns_exists(ns)
            && let Err(e) = sys::ip(&["netns", "del", ns])
        {
            problems.push(format!("{e:#}"));
        }
    }
    if problems.is_empty() {
        store.remove(&st.lab)?;
        Ok(())
    } else {
        bail!(
            "tearing down lab {:?}:\n  {}",
            st.lab,
            problems.join("\n  ")
        )
    }
}

/// Tears down lab `lab` from its state file.
pub fn down(lab: &str, store: &StateStore) -> Result<()> {
    let st = store.load(lab).with_context(|| {
        format!(
            "lab {lab:?} has no readable state in {}",
            store.dir().display()
        )
    })?;
    teardown(&st, store)
}

/// One line per object of a lab and whether it still exists.
pub fn status(lab: &str, store: &StateStore) -> Result<String> {
    use std::fmt::Write;
    let st = store.load(lab)?;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "lab {} ({}){}",
        st.lab,
        if st.complete {
            "up"
        } else {
            "INCOMPLETE: up failed or is running"
        },
        st.topology_file
            .as_ref()
            .map(|p| format!(" from {}", p.display()))
            .unwrap_or_default()
    );
    for ns in &st.netns {
        let ok = sys::netns_exists(ns);
        let _ = writeln!(
            s,
            "  netns {ns:<28} {}",
            if ok { "present" } else { "MISSING" }
        );
    }
    for l in &st.links {
        let _ = writeln!(
            s,
            "  link  {}:{} <-> {}:{} {} bit/s",
            l.a_netns, l.a_iface, l.b_netns, l.b_iface, l.speed_bps
        );
    }
    for p in &st.processes {
        let alive = sys::is_same_process_alive(p.pid, p.start_ticks);
        let _ = writeln!(
            s,
            "  proc  {:<10} pid {:<7} {} log {}  {}",
            p.node,
            p.pid,
            if alive { "running" } else { "EXITED " },
            p.log.display(),
            p.argv.join(" ")
        );
    }
    for n in &st.notes {
        let _ = writeln!(s, "  note  {n}");
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::kernel_mac;
    use crate::scenario::parts::host;

    #[test]
    fn kernel_mac_differs_from_the_agents_unless_the_kernel_has_an_address() {
        let mut h = host("h1", 1, 1);
        h.mac = "02:00:00:00:01:03".into();
        assert_eq!(kernel_mac(&h), "06:00:00:00:01:03");
        h.kernel_ip = Some("10.0.0.9".parse().unwrap());
        assert_eq!(kernel_mac(&h), "02:00:00:00:01:03");
    }
}
