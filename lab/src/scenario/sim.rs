//! The default scenario in the deterministic simulator (`rocelab run
//! --sim`): the same topologies and switch setups as [`super::live`]
//! ([`super::parts`], [`crate::fabric::setups`]), with [`dataplane::sim`]
//! hosts (the RNIC model) and switches that are the production `Switch`
//! running `roce_switch.p4`, configured with [`SwitchPlan`] from the very
//! configuration the namespace lab sends over gRPC.
//!
//! Contract: deterministic for a given config and seed; senders send what
//! fits the live durations (`incast_s`, `ecmp_s`) at their rate, and each
//! part runs until every queue has drained, so a drop always shows as a
//! PSN gap; rates are over that whole span. Cables delay light over
//! [`CABLE_M`]. Switch CE marks come from the program's own `ecn_marked`
//! counter. Fills the same [`Outcome`] as a live run.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, anyhow};
use dataplane::fabric::SwitchPlan;
use dataplane::headroom::peer_response_quanta;
use dataplane::rnic::dcqcn::{DcqcnConfig, scaled_cnp_interval};
use dataplane::rnic::{QpConfig, RnicConfig};
use dataplane::roce::{PROGRAM_INFO, Program};
use dataplane::sim::host::SimHost;
use dataplane::sim::record::{CNP_UNIT, QUEUE_UNIT, RATE_UNIT};
use dataplane::sim::{NodeId, PgFigure, Probe, TopologyBuilder, switch_config};
use dataplane::switch::Switch;
use dataplane::time::{Duration, Instant, pause_quanta_to_duration};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::RuntimeApi;

use super::live::lab_headroom_bytes;
use super::parts::{
    CABLE_M, ECMP_PART, INCAST_PART, ecmp_topology, host_ip, host_mac, incast_topology,
};
use super::{
    EcmpOutcome, FlowResult, IncastOutcome, LOSSLESS_PRIORITY, MESSAGE_BYTES, Outcome,
    ScenarioConfig, live_series, red,
};
use crate::fabric::{ROUTER_MAC, SwitchSetup, setups};
use crate::topo::{Topology, parse_endpoint};
use crate::units::parse_rate_bps;

type Sim = dataplane::sim::Sim<Program>;

/// Propagation delay of a cable of [`CABLE_M`] (light at 198,000 km/s).
fn cable() -> Duration {
    Duration::from_nanos(u64::from(CABLE_M) * 1_000_000_000 / 198_000_000)
}

/// How one simulated host is built (the live agent's flags).
#[derive(Debug, Clone, Copy)]
pub(super) struct HostParams {
    pub(super) rate_bps: u64,
    pub(super) dscp: u8,
    pub(super) ecn: bool,
    pub(super) dcqcn: bool,
    pub(super) mtu_bytes: usize,
}

pub(super) fn mk_host(part: u8, i: usize, p: HostParams) -> SimHost {
    let mut h = SimHost::new(RnicConfig {
        mtu_bytes: p.mtu_bytes,
        mac: host_mac(part, i),
        ip: host_ip(part, i),
        line_rate_bps: p.rate_bps,
        data_dscp: p.dscp,
        data_priority: p.dscp >> 3,
        ecn_capable: p.ecn,
        dcqcn: p.dcqcn.then(|| DcqcnConfig::scaled(p.rate_bps)),
        cnp_interval_ns: scaled_cnp_interval(p.rate_bps).as_nanos(),
        ..RnicConfig::default()
    });
    let q = peer_response_quanta(p.rate_bps / 1_000_000).unwrap_or(394) as u16;
    h.set_pause_response(pause_quanta_to_duration(q, p.rate_bps));
    h
}

/// A simulated fabric built from a lab topology: every switch gets its
/// setup through [`SwitchPlan`], every host comes from `host`, every link
/// its speed and a [`CABLE_M`] cable. Returns the node ids by name.
fn build(
    topo: &Topology,
    seed: u64,
    host: impl FnMut(usize) -> SimHost,
) -> Result<(TopologyBuilder<Program>, BTreeMap<String, NodeId>)> {
    build_with(topo, &setups(topo)?, seed, host)
}

/// [`build`] with the switch setups given (a scenario that routes its own
/// way, like the deadlock ring).
pub(super) fn build_with(
    topo: &Topology,
    setups: &[SwitchSetup],
    seed: u64,
    mut host: impl FnMut(usize) -> SimHost,
) -> Result<(TopologyBuilder<Program>, BTreeMap<String, NodeId>)> {
    let mut b = TopologyBuilder::new(seed);
    let mut ids = BTreeMap::new();
    for setup in setups {
        let mut sw = Switch::new(
            Program::new(),
            switch_config(setup.fabric.ports.len()),
            Instant::ZERO,
        )
        .context("switch")?;
        SwitchPlan::build(
            sw.tm().config(),
            &setup.fabric,
            Some(&setup.routes),
            &PROGRAM_INFO,
        )
        .with_context(|| format!("{}: plan", setup.name))?
        .apply(&mut sw, Instant::ZERO)
        .with_context(|| format!("{}: apply", setup.name))?;
        ids.insert(setup.name.clone(), b.add_switch(sw));
    }
    for (i, h) in topo.hosts.iter().enumerate() {
        ids.insert(h.name.clone(), b.add_host(host(i)));
    }
    for l in &topo.links {
        let end = |e: &str| -> Result<(NodeId, u16)> {
            let ep = parse_endpoint(e).ok_or_else(|| anyhow!("link end {e}"))?;
            let node = *ids
                .get(&ep.node)
                .ok_or_else(|| anyhow!("no node {}", ep.node))?;
            let port = crate::fabric::switch_port(&ep.iface).unwrap_or(0);
            Ok((node, port))
        };
        let speed = parse_rate_bps(&l.speed).map_err(|e| anyhow!("link speed: {e}"))?;
        b.connect(end(&l.a)?, end(&l.b)?, speed, cable())
            .map_err(|e| anyhow!("link {} — {}: {e}", l.a, l.b))?;
    }
    Ok((b, ids))
}

pub(super) fn node(ids: &BTreeMap<String, NodeId>, name: &str) -> Result<NodeId> {
    ids.get(name)
        .copied()
        .ok_or_else(|| anyhow!("no node {name}"))
}

/// Messages per QP so that `qps` QPs at `rate_bps` send for `span`.
pub(super) fn messages_for(rate_bps: u64, span: Duration, qps: u32) -> u64 {
    let bytes = rate_bps as f64 / 8.0 * (span.as_nanos() as f64 / 1e9);
    ((bytes / MESSAGE_BYTES as f64 / f64::from(qps.max(1))).ceil() as u64).max(1)
}

/// A one-way WRITE stream from host `s` to host `d` of `part` (QPN `qpn`
/// on both ends, `messages` WRITEs of [`MESSAGE_BYTES`]); frames go to the
/// router MAC.
fn add_stream(
    b: &mut TopologyBuilder<Program>,
    src: (NodeId, usize),
    dst: (NodeId, usize),
    part: u8,
    qpn: u32,
    messages: u64,
) -> Result<()> {
    let window = QpConfig::default().max_send_wr;
    add_stream_window(b, src, dst, part, qpn, messages, window)
}

/// [`add_stream`] with `window` messages in flight (the send queue depth).
pub(super) fn add_stream_window(
    b: &mut TopologyBuilder<Program>,
    (src, s): (NodeId, usize),
    (dst, d): (NodeId, usize),
    part: u8,
    qpn: u32,
    messages: u64,
    window: u32,
) -> Result<()> {
    let qp = |peer: usize, message_bytes, messages| QpConfig {
        local_qpn: qpn,
        remote_qpn: qpn,
        remote_ip: host_ip(part, peer),
        remote_mac: ROUTER_MAC,
        message_bytes,
        messages,
        initial_psn: 0,
        expected_psn: 0,
        max_send_wr: window,
        ..QpConfig::default()
    };
    b.host_mut(src)
        .ok_or_else(|| anyhow!("no host {src}"))?
        .rnic_mut()
        .add_qp(qp(d, MESSAGE_BYTES, Some(messages)))
        .map_err(|e| anyhow!("sender QP: {e}"))?;
    b.host_mut(dst)
        .ok_or_else(|| anyhow!("no host {dst}"))?
        .rnic_mut()
        .add_qp(qp(s, 0, None))
        .map_err(|e| anyhow!("receiver QP: {e}"))?;
    Ok(())
}

/// Runs both parts in the simulator; with `series_dir`, the incast time
/// series (bottleneck queue, rates) go there as CSV + SVG.
pub fn run(cfg: &ScenarioConfig, seed: u64, series_dir: Option<&Path>) -> Result<Outcome> {
    let incast = run_incast(cfg, seed, series_dir)?;
    let incast_dcqcn = if super::dcqcn::compares(cfg) {
        Some(run_incast(
            &super::dcqcn::run_config(cfg),
            seed,
            series_dir,
        )?)
    } else {
        None
    };
    let ecmp = run_ecmp(cfg, seed)?;
    Ok(Outcome {
        mode: "simulator",
        config: cfg.clone(),
        incast,
        incast_dcqcn,
        ecmp,
    })
}

fn rx_totals(sim: &Sim, node: NodeId, qpns: &[u32]) -> (u64, u64, u64, u64, u64) {
    let mut t = (0, 0, 0, 0, 0);
    if let Some(h) = sim.host(node) {
        for &q in qpns {
            if let Some(s) = h.rnic().qp_stats(q) {
                t.0 += s.rx_payload_bytes;
                t.1 += s.psn_gaps;
                t.2 += s.psn_lost;
                t.3 += s.rx_ce_packets;
                t.4 += s.cnp_tx;
            }
        }
    }
    t
}

/// The recorder's column of the receiver's goodput.
const GOODPUT_COLUMN: &str = "h3 goodput Gbps";

/// Runs `sim` in 1 ms steps until every host's RNIC is idle and the
/// switch's buffer is empty (for runs with timers that never stop, like
/// LLDP); returns the time it found them so.
fn drive_until_idle(sim: &mut Sim, hosts: &[NodeId], sw: NodeId) -> Instant {
    const STEP: Duration = Duration::from_millis(1);
    loop {
        let now = sim.now();
        let idle = hosts
            .iter()
            .all(|&h| sim.host(h).is_none_or(|h| h.rnic().is_idle()))
            && sim
                .switch(sw)
                .is_none_or(|s| s.tm().shared_used_bytes() + s.tm().headroom_used_bytes() == 0);
        if idle && now > Instant::ZERO {
            return now;
        }
        sim.run_until(now + STEP);
    }
}

/// Packets the program CE-marked on `port` (its `ecn_marked` counter), all
/// priorities.
/// Packets the switch's P4 counter `name` (indexed port · 8 + priority)
/// counted at `indices`.
fn counter_packets(sim: &Sim, sw: NodeId, name: &str, indices: impl Iterator<Item = u32>) -> u64 {
    let Some(c) = p4_target::info::resolve_name(PROGRAM_INFO.counters.iter(), name, |c| c.name)
    else {
        return 0;
    };
    let Some(s) = sim.switch(sw) else { return 0 };
    let rt = s.switch().pipeline().runtime();
    indices
        .filter_map(|i| rt.counter_read(c.id, i).ok())
        .map(|d| d.packets)
        .sum()
}

/// Part 1: h1, h2 → sw → h3 (see [`incast_topology`]).
pub fn run_incast(
    cfg: &ScenarioConfig,
    seed: u64,
    series_dir: Option<&Path>,
) -> Result<IncastOutcome> {
    let speed = cfg.speed_bps;
    let topo = incast_topology("sim-inc", cfg, lab_headroom_bytes(speed));
    let params = HostParams {
        rate_bps: speed,
        dscp: cfg.incast_dscp,
        ecn: cfg.ecn.is_some(),
        dcqcn: cfg.dcqcn,
        mtu_bytes: cfg.roce_mtu_bytes,
    };
    // With DCBX the senders start with their own (wrong) class; the
    // receiver runs the switch's.
    let sender = HostParams {
        dscp: cfg.dcbx.map_or(cfg.incast_dscp, |d| d.admin_dscp),
        ..params
    };
    let (mut b, ids) = build(&topo, seed, |i| {
        mk_host(INCAST_PART, i, if i < 2 { sender } else { params })
    })?;
    let sw = node(&ids, "sw")?;
    let hosts = [node(&ids, "h1")?, node(&ids, "h2")?, node(&ids, "h3")?];
    if let Some(d) = cfg.dcbx {
        for (s, mode) in d.modes.into_iter().enumerate() {
            b.host_mut(hosts[s])
                .ok_or_else(|| anyhow!("no sender {s}"))?
                .enable_dcbx(mode, Instant::ZERO);
        }
    }
    let mut qpns = Vec::new();
    let msgs = messages_for(
        speed,
        Duration::from_nanos((cfg.incast_s * 1e9) as u64),
        cfg.incast_qps,
    );
    for s in 0..2 {
        for q in 0..cfg.incast_qps {
            let qpn = 0x100 + (s as u32) * 0x40 + q;
            qpns.push((s, qpn));
            add_stream(&mut b, (hosts[s], s), (hosts[2], 2), INCAST_PART, qpn, msgs)?;
        }
    }
    if let Some(n) = cfg.fault_one_in {
        // h1's first QP: its data enters the switch on port 0 for QPN 0x100.
        let (t, e) = super::fault::acl_fault_entry(0, qpns[0].1, n)?;
        b.switch_mut(sw)
            .ok_or_else(|| anyhow!("switch gone"))?
            .pipeline_mut()
            .runtime_mut()
            .table_insert(t.id, e)
            .map_err(|e| anyhow!("installing the ACL fault: {e:?}"))?;
    }
    let mut sim = b.build();
    start_traces(&mut sim, &ids, cfg);
    let mut probes = vec![
        (
            Probe::QueueBytes {
                node: sw,
                port: 2,
                queue: cfg.incast_priority(),
            },
            red::QUEUE_COLUMN.to_string(),
        ),
        (
            Probe::TxGbps { node: sw, port: 2 },
            red::TX_COLUMN.to_string(),
        ),
    ];
    for (s, &h) in hosts[..2].iter().enumerate() {
        probes.push((
            Probe::TxGbps { node: h, port: 0 },
            format!("h{} tx Gbps", s + 1),
        ));
        probes.push((
            Probe::Paused {
                node: h,
                port: 0,
                priority: cfg.incast_priority(),
            },
            format!("h{} paused by sw", s + 1),
        ));
        probes.push((Probe::CnpRate { node: h }, format!("h{} CNPs/s", s + 1)));
        if !cfg.lossless() {
            probes.push((
                Probe::RetxMegabytes { node: h },
                format!("h{} retransmitted MB", s + 1),
            ));
        }
    }
    probes.push((
        Probe::GoodputGbps { node: hosts[2] },
        GOODPUT_COLUMN.to_string(),
    ));
    if cfg.lossless() {
        // Senders arrive on switch ports 0 and 1; priority p is PG p.
        let pg = cfg.incast_priority();
        let figures = [
            (0, PgFigure::Shared),
            (1, PgFigure::Shared),
            (0, PgFigure::XoffThreshold),
            (0, PgFigure::XonThreshold),
        ];
        for ((port, of), name) in figures.into_iter().zip(live_series::pg_series_names()) {
            probes.push((
                Probe::Pg {
                    node: sw,
                    port,
                    pg,
                    of,
                },
                name,
            ));
        }
    }
    sim.record(
        Duration::from_micros(500),
        probes.iter().map(|(p, n)| (*p, n.as_str())).collect(),
    );
    if let Some(rec) = sim.recorder_mut() {
        if let Some(e) = cfg.ecn {
            rec.add_line(QUEUE_UNIT, "Kmin", e.kmin_bytes as f64 / 1000.0);
            rec.add_line(QUEUE_UNIT, "Kmax", e.kmax_bytes as f64 / 1000.0);
        }
        live_series::dash_thresholds(rec);
        // Rates and CNPs over 5 ms, not per 0.5 ms sample.
        rec.smooth(RATE_UNIT, 5_000.0);
        rec.smooth(CNP_UNIT, 5_000.0);
    }
    // Senders stop after their messages; the run ends when the queues
    // have drained, so every drop shows as a gap at the receiver. LLDP
    // never stops on its own: with it, run until the hosts are idle.
    let end = if cfg.dcbx.is_some() {
        drive_until_idle(&mut sim, &hosts, sw)
    } else {
        sim.drive()
    };
    write_traces(&sim, &ids, cfg, false)?;
    let secs = (end.as_nanos() as f64 / 1e9).max(1e-9);

    let mut out = IncastOutcome::default();
    for (s, &h) in hosts[..2].iter().enumerate() {
        let host = sim.host(h).ok_or_else(|| anyhow!("sender gone"))?;
        let mut flow = FlowResult {
            name: format!("h{}", s + 1),
            pfc_rx: host.rnic().stats().pfc_rx[usize::from(cfg.incast_priority())],
            ..FlowResult::default()
        };
        for &(_, q) in qpns.iter().filter(|(o, _)| *o == s) {
            if let Some(st) = host.rnic().qp_stats(q) {
                flow.tx_bytes += st.tx_payload_bytes;
                flow.cnp_rx += st.cnp_rx;
                flow.retx_packets += st.retx_packets;
                flow.retx_bytes += st.retx_bytes;
                flow.naks_rx += st.packet_seq_err;
                flow.timeouts += st.local_ack_timeout_err;
                flow.retry_exceeded += st.req_transport_retries_exceeded;
            }
        }
        flow.tx_gbps = flow.tx_bytes as f64 * 8.0 / secs / 1e9;
        flow.dcbx = host.dcbx_status();
        let swr = sim.switch(sw).ok_or_else(|| anyhow!("switch gone"))?;
        // Sender s is on switch port s.
        let port = s as u16;
        for (p, b) in flow.switch_rx_bytes_by_priority.iter_mut().enumerate() {
            *b = swr.tm().stats(port, p as u8).map_or(0, |st| st.rx_bytes);
        }
        flow.switch_dcbx_mismatch = swr
            .switch()
            .dcbx(port)
            .filter(|a| a.neighbor().is_some())
            .map(|a| a.mismatch().describe());
        out.flows.push(flow);
    }
    let all: Vec<u32> = qpns.iter().map(|&(_, q)| q).collect();
    let (rx, gaps, lost, ce, cnp) = rx_totals(&sim, hosts[2], &all);
    out.rx_bytes = rx;
    out.rx_gbps = rx as f64 * 8.0 / secs / 1e9;
    out.psn_gaps = gaps;
    out.psn_lost = lost;
    out.rx_ce = ce;
    out.cnp_tx = cnp;
    if let Some(rec) = sim.recorder() {
        let secs = |t_us: f64| t_us / 1e6;
        out.goodput_series = rec
            .column(GOODPUT_COLUMN)
            .unwrap_or_default()
            .into_iter()
            .map(|(t, g)| (secs(t), g))
            .collect();
        let retx: Vec<Vec<(f64, f64)>> = (1..=2)
            .filter_map(|s| rec.column(&format!("h{s} retransmitted MB")))
            .collect();
        out.retx_series = out
            .goodput_series
            .iter()
            .enumerate()
            .map(|(i, &(t, _))| {
                let mb: f64 = retx.iter().filter_map(|c| c.get(i)).map(|&(_, v)| v).sum();
                (t, (mb * 1e6).round() as u64)
            })
            .collect();
    }
    let swr = sim.switch(sw).ok_or_else(|| anyhow!("switch gone"))?;
    out.switch_drops = swr.tm().drop_counts().total();
    for (p, d) in out.drops_by_priority.iter_mut().enumerate() {
        *d = (0..swr.tm().num_ports() as u16)
            .filter_map(|port| swr.tm().stats(port, p as u8))
            .map(|st| st.drops.total())
            .sum();
    }
    out.switch_ce_marked = counter_packets(&sim, sw, "ecn_marked", 0..3 * 8);
    let bottleneck = 2 * 8 + u32::from(cfg.incast_priority());
    out.bottleneck_tx_packets =
        counter_packets(&sim, sw, "tx_port_prio", bottleneck..bottleneck + 1);
    out.red_expected_fraction = cfg
        .ecn
        .zip(sim.recorder())
        .and_then(|(e, rec)| red::expected_fraction(rec, &e));
    out.queue_band = cfg
        .ecn
        .zip(sim.recorder())
        .and_then(|(e, rec)| super::dcqcn::queue_band(rec, &e));
    out.switch_pfc_tx = (0..3u16)
        .filter_map(|p| sim.port_counters(sw, p))
        .map(|c| c.pfc_tx_total())
        .sum();
    if let (Some(dir), Some(rec)) = (series_dir, sim.recorder()) {
        let stem = if cfg.dcqcn {
            "sim_incast_dcqcn_timeseries"
        } else {
            "sim_incast_timeseries"
        };
        rec.write(dir, stem)
            .map_err(|e| anyhow!("writing the time series to {}: {e}", dir.display()))?;
    }
    Ok(out)
}

/// Part 2: `cfg.ecmp_qps` QPs from ha to hb over the leaf-spine fabric (see
/// [`ecmp_topology`]).
pub fn run_ecmp(cfg: &ScenarioConfig, seed: u64) -> Result<EcmpOutcome> {
    let topo = ecmp_topology("sim-ecmp", cfg, lab_headroom_bytes(cfg.speed_bps));
    // The sender paces itself at the ECMP rate on a link at the lab speed,
    // as the live agent does.
    let params = HostParams {
        rate_bps: cfg.ecmp_rate_bps,
        dscp: 26,
        ecn: false,
        dcqcn: false,
        mtu_bytes: cfg.roce_mtu_bytes,
    };
    let (mut b, ids) = build(&topo, seed, |i| mk_host(ECMP_PART, i, params))?;
    let (leaf1, ha, hb) = (node(&ids, "leaf1")?, node(&ids, "ha")?, node(&ids, "hb")?);
    let qpns: Vec<u32> = (0..cfg.ecmp_qps).map(|q| 0x100 + q).collect();
    let msgs = messages_for(
        cfg.ecmp_rate_bps,
        Duration::from_nanos((cfg.ecmp_s * 1e9) as u64),
        cfg.ecmp_qps,
    );
    for &q in &qpns {
        add_stream(&mut b, (ha, 0), (hb, 1), ECMP_PART, q, msgs)?;
    }
    let mut sim = b.build();
    start_traces(&mut sim, &ids, cfg);
    sim.drive();
    write_traces(&sim, &ids, cfg, true)?;
    let (rx, gaps, lost, _, _) = rx_totals(&sim, hb, &qpns);
    let prio = LOSSLESS_PRIORITY;
    let tm = sim.switch(leaf1).ok_or_else(|| anyhow!("leaf1 gone"))?.tm();
    Ok(EcmpOutcome {
        qps: cfg.ecmp_qps,
        uplink_packets: [1u16, 2]
            .iter()
            .map(|&p| tm.stats(p, prio).map_or(0, |s| s.tx_packets))
            .collect(),
        rx_bytes: rx,
        psn_gaps: gaps,
        psn_lost: lost,
    })
}

/// Sets `cfg.trace` on every switch of the run.
fn start_traces(sim: &mut Sim, ids: &BTreeMap<String, NodeId>, cfg: &ScenarioConfig) {
    if cfg.trace.is_none() {
        return;
    }
    for &id in ids.values() {
        if let Some(s) = sim.switch_mut(id) {
            s.switch_mut().handle_trace_request(cfg.trace.clone());
        }
    }
}

/// Writes every switch's traces to `cfg.trace_out` as JSON lines, each
/// naming its switch (after what is there when `append`).
fn write_traces(
    sim: &Sim,
    ids: &BTreeMap<String, NodeId>,
    cfg: &ScenarioConfig,
    append: bool,
) -> Result<()> {
    use std::io::Write;
    let (Some(_), Some(path)) = (&cfg.trace, &cfg.trace_out) else {
        return Ok(());
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(path)
        .with_context(|| format!("trace output {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    for (name, &id) in ids {
        let Some(s) = sim.switch(id) else { continue };
        let (traces, dropped) = s.traces();
        for t in traces {
            let mut t = t.clone();
            t.switch = Some(name.clone());
            serde_json::to_writer(&mut out, &t)?;
            out.write_all(b"\n")?;
        }
        if dropped > 0 {
            tracing::warn!(switch = %name, dropped, "packet traces dropped (too many kept)");
        }
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::verdicts;

    fn quick() -> ScenarioConfig {
        ScenarioConfig::default()
    }

    #[test]
    fn the_default_scenario_passes_in_the_simulator() {
        let o = run(&quick(), 1, None).unwrap();
        let vs = verdicts(&o);
        assert!(vs.iter().all(|v| v.pass), "{o:#?}\n{vs:#?}");
    }

    #[test]
    fn a_lossy_incast_drops_and_never_pauses() {
        let cfg = ScenarioConfig {
            incast_dscp: 0,
            ecn: None,
            ..quick()
        };
        let x = run_incast(&cfg, 1, None).unwrap();
        assert!(x.switch_drops > 0, "{x:#?}");
        assert!(x.psn_lost + x.psn_gaps > 0, "{x:#?}");
        assert_eq!(x.switch_pfc_tx, 0);
    }
}
