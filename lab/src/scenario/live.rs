//! The default scenario on real namespaces: `roceswitch` daemons on veth
//! links, `roceperf` agents on the hosts, all brought up and torn down with
//! [`crate::labctl`].
//!
//! Contract: [`run`] builds each part's [`Topology`] in code, brings it up
//! (switch daemons as lab commands, gRPC on a Unix socket in the lab's log
//! directory), programs the switches ([`super::switchctl`]), starts the
//! agents as recorded lab processes, waits for the clients (polling the
//! Ctrl-C flag), stops the server with SIGTERM so it prints its summary,
//! reads the switch counters and tears the lab down. A [`LabGuard`] tears
//! down on every exit path, errors and Ctrl-C included. Needs root.
//!
//! The topologies and the switch configuration come from [`super::parts`]
//! and [`crate::fabric::setups`], the same the simulator uses; here each
//! switch gets its setup over gRPC.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;

use super::live_series::{BOTTLENECK_PORT, Sampler};
use super::parts::{ecmp_topology, incast_topology};
pub(crate) use super::parts::{host, host_ip, host_mac, link, mac_text};
use super::switchctl::{PrioCounters, SwitchCtl};
use super::{EcmpOutcome, FlowResult, IncastOutcome, LOSSLESS_PRIORITY, Outcome, ScenarioConfig};
use crate::fabric::{ROUTER_MAC, setups};
use crate::labctl::{self, state::LabState, state::StateStore};
use crate::topo::{HostSpec, Topology};

/// Paths of the programs a live run starts.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// The switch daemon.
    pub roceswitch: PathBuf,
    /// The host agent.
    pub roceperf: PathBuf,
}

/// Finds `name` next to `exe_dir` (for a test executable in
/// `target/<profile>/deps/`, its parent), then on PATH.
pub fn find_binary(name: &str, exe: &Path) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = exe.parent() {
        dirs.push(d.to_path_buf());
        if d.file_name().is_some_and(|n| n == "deps")
            && let Some(p) = d.parent()
        {
            dirs.push(p.to_path_buf());
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// The switch daemon, or an error telling how to build it.
pub fn find_roceswitch() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("locating our own executable")?;
    find_binary("roceswitch", &exe).ok_or_else(|| {
        anyhow!(
            "the switch daemon `roceswitch` is neither next to {} nor on PATH; build it first: \
             cargo build --release -p control --bin roceswitch",
            exe.display()
        )
    })
}

/// Tears its lab down when dropped (error, panic, Ctrl-C).
pub struct LabGuard<'a> {
    /// The lab's state (processes started later are added to it).
    pub st: LabState,
    store: &'a StateStore,
    done: bool,
}

impl<'a> LabGuard<'a> {
    /// The state store the lab is recorded in.
    pub fn store(&self) -> &'a StateStore {
        self.store
    }

    /// Tears down now and reports problems.
    pub fn down(mut self) -> Result<()> {
        self.done = true;
        labctl::teardown(&self.st, self.store)
    }
}

impl Drop for LabGuard<'_> {
    fn drop(&mut self) {
        if !self.done
            && let Err(e) = labctl::teardown(&self.st, self.store)
        {
            tracing::error!(error = %e, "tearing down lab {}", self.st.lab);
        }
    }
}

/// A switch daemon command: ports `p0..pN-1` numbered in order.
pub(crate) fn switch_command(bin: &Path, ports: usize, speed_bps: u64, sock: &Path) -> Vec<String> {
    let mut v = vec![bin.display().to_string()];
    for i in 0..ports {
        v.push("--port".into());
        v.push(format!("{i}=p{i}"));
    }
    v.extend([
        "--speed".into(),
        crate::units::format_rate(speed_bps),
        "--grpc".into(),
        format!("unix:{}", sock.display()),
        "--log-level".into(),
        "warn".into(),
    ]);
    v
}

pub(crate) fn sock_path(store: &StateStore, lab: &str, node: &str) -> PathBuf {
    store.log_dir(lab).join(format!("{node}.sock"))
}

/// Brings `topo` up. A lab of the same name left by an earlier run that
/// was killed (SIGKILL, power loss: no chance to clean up) is removed
/// first, from its state file, with a warning.
pub(crate) fn up<'a>(
    topo: &Topology,
    store: &'a StateStore,
    stop: &AtomicBool,
) -> Result<LabGuard<'a>> {
    topo.validate()?;
    if store.exists(&topo.name) {
        tracing::warn!(lab = %topo.name, "removing the leftovers of an earlier run");
        eprintln!(
            "note: lab {} exists from an earlier run; removing it first",
            topo.name
        );
        labctl::down(&topo.name, store)
            .with_context(|| format!("removing the earlier lab {}", topo.name))?;
    }
    let st = labctl::up(topo, None, store, stop)?;
    Ok(LabGuard {
        st,
        store,
        done: false,
    })
}

/// Starts an agent in a host of the lab, recorded for teardown.
pub(crate) fn agent(
    g: &mut LabGuard<'_>,
    topo: &Topology,
    bin: &Path,
    node: &str,
    args: Vec<String>,
) -> Result<Child> {
    let ns = topo.netns(node);
    let mut argv = vec![bin.display().to_string()];
    argv.extend(args);
    let name = format!(
        "{node}-{}",
        argv.get(1).map(String::as_str).unwrap_or("agent")
    );
    labctl::spawn_recorded(&mut g.st, g.store, node, &ns, argv, &name)
}

pub(crate) fn agent_args(
    role: &str,
    h: &HostSpec,
    rate_bps: u64,
    dscp: u8,
    mtu_bytes: usize,
    extra: &[String],
) -> Vec<String> {
    let mut v = vec![
        role.to_string(),
        "--mtu".into(),
        mtu_bytes.to_string(),
        "--iface".into(),
        "eth0".into(),
        "--mac".into(),
        h.mac.clone(),
        "--ip".into(),
        h.ip.to_string(),
        "--rate".into(),
        crate::units::format_rate(rate_bps),
        "--dscp".into(),
        dscp.to_string(),
        "--priority".into(),
        (dscp >> 3).to_string(),
        "--json".into(),
    ];
    v.extend(extra.iter().cloned());
    v
}

/// Waits for `children` to exit; on Ctrl-C or after `limit` fails (the
/// guard then kills them).
pub(crate) fn wait_all(children: &mut [Child], limit: Duration, stop: &AtomicBool) -> Result<()> {
    let deadline = Instant::now() + limit;
    loop {
        if stop.load(Ordering::SeqCst) {
            bail!("interrupted");
        }
        let mut running = 0;
        for c in children.iter_mut() {
            match c.try_wait().context("waiting for an agent")? {
                Some(st) if !st.success() => bail!("an agent exited with {st}"),
                Some(_) => {}
                None => running += 1,
            }
        }
        if running == 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!("agents still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stops a server with SIGTERM (it then prints its summary) and waits.
pub(crate) fn stop_server(c: &mut Child) -> Result<()> {
    labctl::sys::signal(c.id(), libc::SIGTERM).context("SIGTERM to the server")?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if c.try_wait()?.is_some() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    bail!("the roceperf server did not stop within 5 s of SIGTERM")
}

/// Seconds per receiver and sender report in the incast part (the goodput
/// and retransmission series over time; the goodput verdict's intervals).
const RX_INTERVAL_S: f64 = 0.1;
/// Retransmission timeout exponent of the QP `rocelab run fault` must
/// fail (every packet dropped, [`super::fault::SMALL_N`]): perftest's default
/// (67 ms), as in the simulator.
const FAULTED_QP_TIMEOUT: u8 = 14;

/// Goodput over the senders' active span: the mean of the receiver's
/// interval rates from the first interval that received data to the last,
/// stalls (empty intervals in between) included, leaving out only the
/// partial first and last ones (bytes over the client span would count the
/// queue draining after the senders stopped as if it had been sent in time).
pub fn busy_goodput_gbps(intervals: &[(u64, f64)]) -> Option<f64> {
    let first = intervals.iter().position(|(bytes, _)| *bytes > 0)?;
    let last = intervals.iter().rposition(|(bytes, _)| *bytes > 0)?;
    if last < first + 2 {
        return None;
    }
    let inner = &intervals[first + 1..last];
    Some(inner.iter().map(|&(_, gbps)| gbps).sum::<f64>() / inner.len() as f64)
}

/// The JSON lines of an agent's log.
pub(crate) fn lines_of(g: &LabGuard<'_>, child_pid: u32) -> Result<Vec<Value>> {
    let rec = record_of(g, child_pid)?;
    let text = std::fs::read_to_string(&rec.log)
        .with_context(|| format!("reading {}", rec.log.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect())
}

/// The `summary` JSON line of an agent's log.
pub(crate) fn summary_of(g: &LabGuard<'_>, child_pid: u32) -> Result<Value> {
    summary_in(g, child_pid, &lines_of(g, child_pid)?)
}

/// The `summary` line among `lines`, read from `child_pid`'s log.
fn summary_in(g: &LabGuard<'_>, child_pid: u32, lines: &[Value]) -> Result<Value> {
    if let Some(v) = lines.iter().find(|v| v["kind"] == "summary") {
        return Ok(v.clone());
    }
    let rec = record_of(g, child_pid)?;
    Err(anyhow!(
        "no summary from {} ({}): {}",
        rec.node,
        rec.log.display(),
        labctl::log_tail(&rec.log)
    ))
}

fn record_of<'g>(g: &'g LabGuard<'_>, child_pid: u32) -> Result<&'g labctl::state::ProcRecord> {
    g.st.processes
        .iter()
        .find(|p| p.pid == child_pid)
        .ok_or_else(|| anyhow!("no record of pid {child_pid}"))
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or(0)
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(0.0)
}

/// Runs both parts. `lab_prefix` (up to 12 characters) names the labs
/// `<prefix>-inc` and `<prefix>-ecmp`; with `series_dir`, each incast's
/// time series (the switch sampled every few ms) go there as CSV + SVG.
pub fn run(
    cfg: &ScenarioConfig,
    bins: &Binaries,
    store: &StateStore,
    stop: &AtomicBool,
    lab_prefix: &str,
    series_dir: Option<&Path>,
) -> Result<Outcome> {
    let incast = run_incast(
        cfg,
        bins,
        store,
        stop,
        &format!("{lab_prefix}-inc"),
        series_dir,
    )
    .context("incast part")?;
    let incast_dcqcn = if super::dcqcn::compares(cfg) {
        let on = super::dcqcn::run_config(cfg);
        Some(
            run_incast(
                &on,
                bins,
                store,
                stop,
                &format!("{lab_prefix}-dcq"),
                series_dir,
            )
            .context("incast part with DCQCN")?,
        )
    } else {
        None
    };
    let ecmp =
        run_ecmp(cfg, bins, store, stop, &format!("{lab_prefix}-ecmp")).context("ECMP part")?;
    Ok(Outcome {
        mode: "namespaces",
        config: cfg.clone(),
        incast,
        incast_dcqcn,
        ecmp,
    })
}

/// Smallest PFC headroom per (port, lossless priority) in the lab.
pub const LAB_HEADROOM_MIN_BYTES: u64 = 256 * 1024;

/// How long after XOFF a lab peer may keep sending, for headroom sizing.
pub const LAB_PEER_RESPONSE: Duration = Duration::from_millis(8);

/// The same for the incast switch of `rocelab run` on namespaces
/// ([`run_headroom_bytes`]), whose buffer grows by its headroom. On a
/// 2-core machine busy with other work a switch daemon or an agent waits
/// for a CPU for up to ~20 ms (`perf sched latency`: agents up to 21 ms,
/// load ~9), and whatever a sender sent meanwhile is in the switch's
/// receive ring when it next looks; with 8 ms, a 1 Gb/s incast beside two
/// CPU-bound processes lost 107 frames to a full headroom in one run of
/// three. Stalls longer than the pause itself (0xFFFF quanta: 33.5 ms at
/// 1 Gb/s, 335 ms at 100 Mb/s) let the senders' pauses expire, which no
/// headroom covers. `rocelab up` keeps [`LAB_PEER_RESPONSE`]: its
/// topologies name their buffer sizes, and 20 ms at 1 Gb/s on three ports
/// does not fit the examples' 3.3 MB.
pub const RUN_PEER_RESPONSE: Duration = Duration::from_millis(20);

/// PFC headroom per (port, lossless priority) of `rocelab run`'s live
/// incast: [`RUN_PEER_RESPONSE`] of line rate, at least
/// [`LAB_HEADROOM_MIN_BYTES`].
pub fn run_headroom_bytes(speed_bps: u64) -> u64 {
    let in_flight = u128::from(speed_bps) * RUN_PEER_RESPONSE.as_nanos() / 8 / 1_000_000_000;
    (in_flight as u64).max(LAB_HEADROOM_MIN_BYTES)
}

/// PFC headroom per (port, lossless priority) in the lab. The calculated
/// headroom assumes a hardware peer that stops within the 802.1Qbb
/// response time; here the peer is a user-space agent behind veth and the
/// switch reads in batches, so far more arrives after XOFF (measured: the
/// 6 KiB computed for 1G, 10 m overflowed at once, and 256 KiB still
/// overflowed at 1G). Sized as [`LAB_PEER_RESPONSE`] of line rate, at
/// least [`LAB_HEADROOM_MIN_BYTES`].
pub fn lab_headroom_bytes(speed_bps: u64) -> u64 {
    let in_flight = u128::from(speed_bps) * LAB_PEER_RESPONSE.as_nanos() / 8 / 1_000_000_000;
    (in_flight as u64).max(LAB_HEADROOM_MIN_BYTES)
}

/// Longest wait for the switch queues to empty after the senders stop.
pub(crate) const DRAIN_LIMIT: Duration = Duration::from_secs(10);

/// How long a daemon may take to accept gRPC.
pub(crate) const SWITCH_START: Duration = Duration::from_secs(15);

/// Part 1: h1, h2 → sw → h3 (ports 0, 1, 2), 2:1 incast.
pub fn run_incast(
    cfg: &ScenarioConfig,
    bins: &Binaries,
    store: &StateStore,
    stop: &AtomicBool,
    lab: &str,
    series_dir: Option<&Path>,
) -> Result<IncastOutcome> {
    let sock = sock_path(store, lab, "sw");
    let mut topo = incast_topology(lab, cfg, run_headroom_bytes(cfg.speed_bps));
    topo.switches[0].command = Some(switch_command(&bins.roceswitch, 3, cfg.speed_bps, &sock));
    let hosts = topo.hosts.clone();
    let setup = setups(&topo)?.remove(0);
    let mut g = up(&topo, store, stop)?;
    let mut sw = SwitchCtl::connect(&format!("unix:{}", sock.display()), SWITCH_START, stop)?;
    sw.apply(&setup)?;
    if let Some(n) = cfg.fault_one_in {
        // h1's first QP: its data enters on port 0 for the server's QPN.
        let (t, e) = super::fault::acl_fault_entry(0, crate::perf::SERVER_QPN_BASE, n)?;
        sw.insert_entry(t, &e).context("installing the ACL fault")?;
    }
    let before = sw.counters()?;

    let mut server = agent(
        &mut g,
        &topo,
        &bins.roceperf,
        "h3",
        agent_args(
            "server",
            &hosts[2],
            cfg.speed_bps,
            cfg.incast_dscp,
            cfg.roce_mtu_bytes,
            &["--interval".into(), RX_INTERVAL_S.to_string()],
        ),
    )?;
    // The server must have its socket open before data arrives.
    std::thread::sleep(Duration::from_millis(300));
    let mut extra = vec![
        "--dst-ip".to_string(),
        hosts[2].ip.to_string(),
        "--dst-mac".into(),
        mac_text(ROUTER_MAC),
        "--duration".into(),
        cfg.incast_s.to_string(),
        "--qps".into(),
        cfg.incast_qps.to_string(),
        "--interval".into(),
        RX_INTERVAL_S.to_string(),
    ];
    if cfg.ecn.is_some() {
        extra.push("--ecn".into());
    }
    if !cfg.dcqcn {
        extra.push("--no-dcqcn".into());
    }
    let mut clients = Vec::new();
    // With DCBX the senders start with their own (wrong) class; the
    // receiver runs the switch's.
    let sender_dscp = cfg.dcbx.map_or(cfg.incast_dscp, |d| d.admin_dscp);
    for (i, h) in hosts[..2].iter().enumerate() {
        // Disjoint QP ranges: the server tells the senders apart by QPN.
        let mut args = extra.clone();
        args.extend(["--first-qp".into(), (i as u32 * cfg.incast_qps).to_string()]);
        if let Some(d) = cfg.dcbx {
            args.extend(["--dcbx".into(), d.modes[i].to_string()]);
        }
        if cfg.fault_one_in == Some(super::fault::SMALL_N) && i == 0 {
            // The QP that must fail must spend its whole retry budget inside
            // the run: 8 go-backs at the lab's 0.54 s timeout can take 4.3 s,
            // longer than the run; at perftest's 67 ms (the simulator's
            // too) they take 0.54 s. The QP that must recover keeps the
            // lab's timer: on a loaded machine a 67 ms timer also fires on
            // stalls, and each such timeout spends the budget as well.
            args.extend(["--qp-timeout".into(), FAULTED_QP_TIMEOUT.to_string()]);
        }
        clients.push(agent(
            &mut g,
            &topo,
            &bins.roceperf,
            &format!("h{}", i + 1),
            agent_args(
                "client",
                h,
                cfg.speed_bps,
                sender_dscp,
                cfg.roce_mtu_bytes,
                &args,
            ),
        )?);
    }
    // Always sampled: the RED verdict needs the queue depths; the picture
    // is written only when asked for.
    let sampler = Sampler::start(&format!("unix:{}", sock.display()), cfg)?;
    let limit = Duration::from_secs_f64(cfg.incast_s + 15.0);
    wait_all(&mut clients, limit, stop)?;
    let series = sampler.finish()?;
    if let Some(dir) = series_dir {
        let stem = if cfg.dcqcn {
            "incast_dcqcn_timeseries"
        } else {
            "incast_timeseries"
        };
        series
            .write(dir, stem)
            .map_err(|e| anyhow!("writing the time series to {}: {e}", dir.display()))?;
    }
    // Everything queued must reach the receiver before it reports, or a
    // drop late in the run would not show as a gap yet.
    if !sw.wait_drained(DRAIN_LIMIT, stop)? {
        tracing::warn!("switch queues still not empty after {DRAIN_LIMIT:?}");
    }
    std::thread::sleep(Duration::from_millis(200));
    stop_server(&mut server)?;
    let after = sw.counters()?;
    let mismatches = if cfg.dcbx.is_some() {
        sw.dcbx_mismatches()?
    } else {
        Vec::new()
    };
    drop(sw);
    let d = delta(&before, &after);

    let mut out = IncastOutcome::default();
    let mut span_s: f64 = 0.0;
    let client_lines = clients
        .iter()
        .map(|c| lines_of(&g, c.id()))
        .collect::<Result<Vec<_>>>()?;
    for (i, (c, lines)) in clients.iter().zip(&client_lines).enumerate() {
        let s = summary_in(&g, c.id(), lines)?;
        span_s = span_s.max(f(&s, "end_s") - f(&s, "start_s"));
        out.flows.push(FlowResult {
            name: format!("h{}", i + 1),
            tx_gbps: f(&s, "tx_gbps"),
            tx_bytes: u(&s, "tx_bytes"),
            pfc_rx: u(&s, "pfc_rx"),
            cnp_rx: u(&s, "cnp_rx"),
            retx_packets: u(&s, "retx_packets"),
            retx_bytes: u(&s, "retx_bytes"),
            naks_rx: u(&s["counters"], "packet_seq_err"),
            timeouts: u(&s["counters"], "local_ack_timeout_err"),
            retry_exceeded: u(&s["counters"], "req_transport_retries_exceeded"),
            dcbx: lines
                .iter()
                .find(|v| v["kind"] == "dcbx")
                .and_then(|v| serde_json::from_value(v["dcbx"].clone()).ok()),
            // Sender i is on switch port i.
            switch_rx_bytes_by_priority: std::array::from_fn(|p| {
                d.iter()
                    .filter(|c| c.port == i as u32 && c.priority == p as u32)
                    .map(|c| c.rx_bytes)
                    .sum()
            }),
            switch_dcbx_mismatch: mismatches
                .iter()
                .find(|(port, _)| *port == i as u32)
                .map(|(_, m)| m.clone()),
        });
    }
    let server_lines = lines_of(&g, server.id())?;
    let s = summary_in(&g, server.id(), &server_lines)?;
    out.rx_bytes = u(&s, "rx_bytes");
    let intervals: Vec<(u64, f64)> = server_lines
        .iter()
        .filter(|v| v["kind"] == "interval")
        .map(|v| (u(v, "rx_bytes"), f(v, "rx_gbps")))
        .collect();
    out.goodput_series = server_lines
        .iter()
        .filter(|v| v["kind"] == "interval")
        .map(|v| (f(v, "end_s"), f(v, "rx_gbps")))
        .collect();
    // Retransmissions: each sender's interval reports, summed into the
    // receiver's report slots, as a running total. The agents count time
    // from their own start; a sender's clock starts about when the
    // receiver's first data arrives (the slot before the first with bytes).
    let offset_s = server_lines
        .iter()
        .filter(|v| v["kind"] == "interval")
        .find(|v| u(v, "rx_bytes") > 0)
        .map_or(0.0, |v| f(v, "start_s"));
    let mut retx = vec![0u64; out.goodput_series.len()];
    for lines in &client_lines {
        for v in lines.iter().filter(|v| v["kind"] == "interval") {
            let slot = out
                .goodput_series
                .iter()
                .position(|&(t, _)| t >= offset_s + f(v, "end_s"))
                .unwrap_or(retx.len().saturating_sub(1));
            if let Some(r) = retx.get_mut(slot) {
                *r += u(v, "retx_bytes");
            }
        }
    }
    let mut total = 0;
    out.retx_series = out
        .goodput_series
        .iter()
        .zip(retx)
        .map(|(&(t, _), r)| {
            total += r;
            (t, total)
        })
        .collect();
    out.rx_gbps = match busy_goodput_gbps(&intervals) {
        Some(g) => g,
        None if span_s > 0.0 => out.rx_bytes as f64 * 8.0 / span_s / 1e9,
        None => 0.0,
    };
    out.psn_gaps = u(&s, "psn_gaps");
    out.psn_lost = u(&s, "psn_lost");
    out.rx_ce = u(&s, "ce_rx");
    out.cnp_tx = u(&s, "cnp_tx");
    out.switch_drops = d.iter().map(|c| c.drops).sum();
    out.switch_kernel_drops = d.iter().map(|c| c.kernel_drops).sum();
    for (p, drops) in out.drops_by_priority.iter_mut().enumerate() {
        *drops = d
            .iter()
            .filter(|c| c.priority == p as u32)
            .map(|c| c.drops)
            .sum();
    }
    out.switch_pfc_tx = d.iter().map(|c| c.pfc_tx_frames).sum();
    out.switch_ce_marked = d.iter().map(|c| c.ecn_marked).sum();
    let incast_prio = u32::from(cfg.incast_priority());
    out.bottleneck_tx_packets = d
        .iter()
        .filter(|c| c.port == BOTTLENECK_PORT && c.priority == incast_prio)
        .map(|c| c.tx_packets)
        .sum();
    out.red_expected_fraction = cfg
        .ecn
        .and_then(|e| super::red::expected_fraction(&series, &e));
    out.queue_band = cfg.ecn.and_then(|e| super::dcqcn::queue_band(&series, &e));
    g.down()?;
    Ok(out)
}

/// Counter increase between two reads, per (port, priority).
pub fn delta(before: &[PrioCounters], after: &[PrioCounters]) -> Vec<PrioCounters> {
    after
        .iter()
        .map(|a| {
            let b = before
                .iter()
                .find(|b| b.port == a.port && b.priority == a.priority)
                .copied()
                .unwrap_or_default();
            PrioCounters {
                port: a.port,
                priority: a.priority,
                tx_packets: a.tx_packets.saturating_sub(b.tx_packets),
                drops: a.drops.saturating_sub(b.drops),
                pfc_tx_frames: a.pfc_tx_frames.saturating_sub(b.pfc_tx_frames),
                pfc_rx_frames: a.pfc_rx_frames.saturating_sub(b.pfc_rx_frames),
                ecn_marked: a.ecn_marked.saturating_sub(b.ecn_marked),
                watchdog_storms: a.watchdog_storms.saturating_sub(b.watchdog_storms),
                queue_depth_bytes: a.queue_depth_bytes,
                kernel_drops: a.kernel_drops.saturating_sub(b.kernel_drops),
                rx_bytes: a.rx_bytes.saturating_sub(b.rx_bytes),
                tx_bytes: a.tx_bytes.saturating_sub(b.tx_bytes),
                pause_tx_ns: a.pause_tx_ns.saturating_sub(b.pause_tx_ns),
                // Levels, not counters: the later read's.
                xoff: a.xoff,
                pg_shared_bytes: a.pg_shared_bytes,
                xoff_threshold_bytes: a.xoff_threshold_bytes,
                xon_threshold_bytes: a.xon_threshold_bytes,
            }
        })
        .collect()
}

/// Part 2: ha — leaf1 ═ spine1/spine2 ═ leaf2 — hb; `cfg.ecmp_qps` QPs
/// from ha to hb; leaf1's uplinks are its ports 1 and 2.
pub fn run_ecmp(
    cfg: &ScenarioConfig,
    bins: &Binaries,
    store: &StateStore,
    stop: &AtomicBool,
    lab: &str,
) -> Result<EcmpOutcome> {
    let speed = cfg.speed_bps;
    let mut topo = ecmp_topology(lab, cfg, lab_headroom_bytes(speed));
    let (ha, hb) = (topo.hosts[0].clone(), topo.hosts[1].clone());
    let setups = setups(&topo)?;
    for s in &mut topo.switches {
        let ports = setups
            .iter()
            .find(|x| x.name == s.name)
            .map_or(0, |x| x.fabric.ports.len());
        s.command = Some(switch_command(
            &bins.roceswitch,
            ports,
            speed,
            &sock_path(store, lab, &s.name),
        ));
    }
    let mut g = up(&topo, store, stop)?;
    let mut leaf1 = None;
    for setup in &setups {
        let addr = format!("unix:{}", sock_path(store, lab, &setup.name).display());
        let mut c =
            SwitchCtl::connect(&addr, SWITCH_START, stop).with_context(|| setup.name.clone())?;
        c.apply(setup)?;
        if setup.name == "leaf1" {
            leaf1 = Some(c);
        }
    }
    let mut leaf1 = leaf1.ok_or_else(|| anyhow!("leaf1 not programmed"))?;
    let before = leaf1.counters()?;
    let mut server = agent(
        &mut g,
        &topo,
        &bins.roceperf,
        "hb",
        agent_args(
            "server",
            &hb,
            cfg.ecmp_rate_bps,
            26,
            cfg.roce_mtu_bytes,
            &[],
        ),
    )?;
    std::thread::sleep(Duration::from_millis(300));
    let extra = vec![
        "--dst-ip".to_string(),
        hb.ip.to_string(),
        "--dst-mac".into(),
        mac_text(ROUTER_MAC),
        "--duration".into(),
        cfg.ecmp_s.to_string(),
        "--qps".into(),
        cfg.ecmp_qps.to_string(),
        "--no-dcqcn".into(),
    ];
    let mut clients = vec![agent(
        &mut g,
        &topo,
        &bins.roceperf,
        "ha",
        agent_args(
            "client",
            &ha,
            cfg.ecmp_rate_bps,
            26,
            cfg.roce_mtu_bytes,
            &extra,
        ),
    )?];
    wait_all(
        &mut clients,
        Duration::from_secs_f64(cfg.ecmp_s + 15.0),
        stop,
    )?;
    if !leaf1.wait_drained(DRAIN_LIMIT, stop)? {
        tracing::warn!("leaf1 queues still not empty after {DRAIN_LIMIT:?}");
    }
    std::thread::sleep(Duration::from_millis(300));
    stop_server(&mut server)?;
    let d = delta(&before, &leaf1.counters()?);
    drop(leaf1);
    let s = summary_of(&g, server.id())?;
    let out = EcmpOutcome {
        qps: cfg.ecmp_qps,
        uplink_packets: [1u32, 2]
            .iter()
            .map(|&p| {
                d.iter()
                    .filter(|c| c.port == p && c.priority == u32::from(LOSSLESS_PRIORITY))
                    .map(|c| c.tx_packets)
                    .sum()
            })
            .collect(),
        rx_bytes: u(&s, "rx_bytes"),
        psn_gaps: u(&s, "psn_gaps"),
        psn_lost: u(&s, "psn_lost"),
    };
    g.down()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binaries_are_found_next_to_a_test_executable() {
        let dir = std::env::temp_dir().join(format!("rl-find-{}", std::process::id()));
        let deps = dir.join("deps");
        std::fs::create_dir_all(&deps).unwrap();
        std::fs::write(dir.join("roceswitch-x"), b"").unwrap();
        let found = find_binary("roceswitch-x", &deps.join("test-123"));
        assert_eq!(found, Some(dir.join("roceswitch-x")));
        assert_eq!(find_binary("roceswitch-none-such", &deps.join("t")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lab_headroom_scales_with_speed_above_a_floor() {
        assert_eq!(lab_headroom_bytes(100_000_000), LAB_HEADROOM_MIN_BYTES);
        assert_eq!(lab_headroom_bytes(1_000_000_000), 1_000_000);
        assert_eq!(run_headroom_bytes(100_000_000), LAB_HEADROOM_MIN_BYTES);
        assert_eq!(run_headroom_bytes(1_000_000_000), 2_500_000);
    }

    #[test]
    fn goodput_counts_stalls_but_not_idle_or_partial_intervals() {
        let iv = [
            (0, 0.0),
            (10, 0.02),
            (50, 0.09),
            (50, 0.095),
            (20, 0.04),
            (0, 0.0),
        ];
        let g = busy_goodput_gbps(&iv).unwrap();
        assert!((g - 0.0925).abs() < 1e-9, "{g}");
        // A stall inside the active span is part of the goodput.
        let stalled = [(10, 0.02), (50, 0.09), (0, 0.0), (50, 0.09), (20, 0.04)];
        let g = busy_goodput_gbps(&stalled).unwrap();
        assert!((g - 0.06).abs() < 1e-9, "{g}");
        assert_eq!(busy_goodput_gbps(&[(1, 0.1), (1, 0.1)]), None);
    }

    #[test]
    fn switch_commands_number_ports_in_order() {
        let v = switch_command(
            Path::new("/x/roceswitch"),
            2,
            1_000_000_000,
            Path::new("/s"),
        );
        assert_eq!(
            v.join(" "),
            "/x/roceswitch --port 0=p0 --port 1=p1 --speed 1G --grpc unix:/s --log-level warn"
        );
        assert_eq!(crate::units::format_rate(200_000_000), "200M");
        assert_eq!(mac_text(host_mac(1, 2)), "02:00:00:00:01:03");
    }
}
