//! The default scenario in the deterministic simulator (`rocelab run
//! --sim`): the same topologies, speeds, priorities, ECN profile and QP
//! counts as [`super::live`], with [`dataplane::sim`] hosts (the RNIC
//! model) and switches (the traffic manager behind the plain L3 forwarder,
//! ECMP on the 5-tuple).
//!
//! Contract: deterministic for a given config and seed; senders send what
//! fits the live durations (`incast_s`, `ecmp_s`) at their rate, and each
//! part runs until every queue has drained, so a drop always shows as a
//! PSN gap; rates are over that whole span. Cables are 10 m (50 ns). Switch CE marks come from the
//! switch's own counter. Fills the same [`Outcome`] as a live run.

use std::net::Ipv4Addr;
use std::path::Path;

use anyhow::{Result, anyhow};
use dataplane::headroom::peer_response_quanta;
use dataplane::rnic::dcqcn::DcqcnConfig;
use dataplane::rnic::{QpConfig, RnicConfig};
use dataplane::sim::forward::L3Forwarder;
use dataplane::sim::host::SimHost;
use dataplane::sim::switch::SimSwitch;
use dataplane::sim::{NodeId, Probe, Sim, TopologyBuilder};
use dataplane::time::{Duration, pause_quanta_to_duration};
use dataplane::tm::TmConfig;
use dataplane::tm::ecn::RedConfig;
use dataplane::wire::ethernet::EthernetAddress;

use super::{
    EcmpOutcome, FlowResult, IncastOutcome, LINK_MTU_BYTES, LOSSLESS_PRIORITY, Outcome,
    ScenarioConfig,
};

/// Cable length of every link, metres.
const CABLE_M: u32 = 10;
/// WRITE size, bytes (as roceperf's default).
const MESSAGE_BYTES: u64 = 65_536;

fn host_ip(part: u8, i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, part, i as u8 + 1)
}

fn host_mac(part: u8, i: usize) -> [u8; 6] {
    [2, 0, 0, 0, part, i as u8 + 1]
}

fn cable() -> Duration {
    Duration::from_nanos(u64::from(CABLE_M) * 1_000_000_000 / 198_000_000)
}

fn mk_host(
    part: u8,
    i: usize,
    speed_bps: u64,
    dscp: u8,
    ecn: bool,
    dcqcn: bool,
    mtu: usize,
) -> SimHost {
    let mut h = SimHost::new(RnicConfig {
        mtu_bytes: mtu,
        mac: host_mac(part, i),
        ip: host_ip(part, i),
        line_rate_bps: speed_bps,
        data_dscp: dscp,
        data_priority: dscp >> 3,
        ecn_capable: ecn,
        dcqcn: dcqcn.then(DcqcnConfig::default),
        ..RnicConfig::default()
    });
    let q = peer_response_quanta(speed_bps / 1_000_000).unwrap_or(394) as u16;
    h.set_pause_response(pause_quanta_to_duration(q, speed_bps));
    h
}

fn tm_cfg(ports: usize, speed_bps: u64) -> TmConfig {
    let mut c = TmConfig::with_ports(ports);
    for (i, p) in c.ports.iter_mut().enumerate() {
        p.speed_bps = speed_bps;
        p.cable_length_m = Some(CABLE_M);
        p.wire_overhead_bytes = 24;
        p.mtu_bytes = LINK_MTU_BYTES;
        p.pfc_enable = 1 << LOSSLESS_PRIORITY;
        p.mac = EthernetAddress([2, 0xAA, 0, 0, 0, i as u8]);
    }
    c
}

/// Messages per QP so that `qps` QPs at `rate_bps` send for `span`.
fn messages_for(rate_bps: u64, span: Duration, qps: u32) -> u64 {
    let bytes = rate_bps as f64 / 8.0 * (span.as_nanos() as f64 / 1e9);
    ((bytes / MESSAGE_BYTES as f64 / f64::from(qps.max(1))).ceil() as u64).max(1)
}

/// A one-way WRITE stream `src → dst`, QPN `qpn` on both ends, `messages`
/// WRITEs of [`MESSAGE_BYTES`].
#[allow(clippy::too_many_arguments)]
fn add_stream(
    b: &mut TopologyBuilder,
    src: NodeId,
    src_ip_mac: (Ipv4Addr, [u8; 6]),
    dst: NodeId,
    dst_ip_mac: (Ipv4Addr, [u8; 6]),
    qpn: u32,
    messages: u64,
) -> Result<()> {
    let snd = QpConfig {
        local_qpn: qpn,
        remote_qpn: qpn,
        remote_ip: dst_ip_mac.0,
        remote_mac: dst_ip_mac.1,
        message_bytes: MESSAGE_BYTES,
        messages: Some(messages),
        initial_psn: 0,
        expected_psn: 0,
    };
    let rcv = QpConfig {
        local_qpn: qpn,
        remote_qpn: qpn,
        remote_ip: src_ip_mac.0,
        remote_mac: src_ip_mac.1,
        message_bytes: 0,
        messages: None,
        initial_psn: 0,
        expected_psn: 0,
    };
    b.host_mut(src)
        .ok_or_else(|| anyhow!("no host {src:?}"))?
        .rnic_mut()
        .add_qp(snd)
        .map_err(|e| anyhow!("sender QP: {e:?}"))?;
    b.host_mut(dst)
        .ok_or_else(|| anyhow!("no host {dst:?}"))?
        .rnic_mut()
        .add_qp(rcv)
        .map_err(|e| anyhow!("receiver QP: {e:?}"))?;
    Ok(())
}

/// Runs both parts in the simulator; with `series_dir`, the incast time
/// series (bottleneck queue, rates) go there as CSV + SVG.
pub fn run(cfg: &ScenarioConfig, seed: u64, series_dir: Option<&Path>) -> Result<Outcome> {
    let incast = run_incast(cfg, seed, series_dir)?;
    let ecmp = run_ecmp(cfg, seed)?;
    Ok(Outcome {
        mode: "simulator",
        config: cfg.clone(),
        incast,
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

/// Part 1: senders 0, 1 and receiver 2 on switch ports 0, 1, 2.
pub fn run_incast(
    cfg: &ScenarioConfig,
    seed: u64,
    series_dir: Option<&Path>,
) -> Result<IncastOutcome> {
    let speed = cfg.speed_bps;
    let mut b = TopologyBuilder::new(seed);
    let mut tm = tm_cfg(3, speed);
    if let Some(e) = cfg.ecn {
        tm.ports[2].queues[usize::from(cfg.incast_priority())].red = Some(RedConfig {
            kmin_bytes: e.kmin_bytes,
            kmax_bytes: e.kmax_bytes,
            pmax: e.pmax,
        });
    }
    let mut fwd = L3Forwarder::new(seed as u32);
    for i in 0..3 {
        fwd.add_route(host_ip(1, i), 32, &[i as u16]);
    }
    let sw = b.add_switch(
        SimSwitch::new(tm, Box::new(fwd)).map_err(|e| anyhow!("switch config: {e:?}"))?,
    );
    let hosts: Vec<NodeId> = (0..3)
        .map(|i| {
            b.add_host(mk_host(
                1,
                i,
                speed,
                cfg.incast_dscp,
                cfg.ecn.is_some(),
                cfg.dcqcn,
                cfg.roce_mtu_bytes,
            ))
        })
        .collect();
    for (i, &h) in hosts.iter().enumerate() {
        b.connect((h, 0), (sw, i as u16), speed, cable())
            .map_err(|e| anyhow!("link: {e:?}"))?;
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
            add_stream(
                &mut b,
                hosts[s],
                (host_ip(1, s), host_mac(1, s)),
                hosts[2],
                (host_ip(1, 2), host_mac(1, 2)),
                qpn,
                msgs,
            )?;
        }
    }
    let mut sim = b.build();
    let mut probes = vec![
        (
            Probe::QueueBytes {
                node: sw,
                port: 2,
                queue: cfg.incast_priority(),
            },
            "bottleneck queue bytes".to_string(),
        ),
        (
            Probe::TxGbps { node: sw, port: 2 },
            "bottleneck tx Gbps".to_string(),
        ),
    ];
    for (s, &h) in hosts[..2].iter().enumerate() {
        probes.push((
            Probe::TxGbps { node: h, port: 0 },
            format!("h{} tx Gbps", s + 1),
        ));
    }
    sim.record(
        Duration::from_micros(500),
        probes.iter().map(|(p, n)| (*p, n.as_str())).collect(),
    );
    // Senders stop after their messages; the run ends when the queues
    // have drained, so every drop shows as a gap at the receiver.
    let end = sim.drive();
    let secs = (end.as_nanos() as f64 / 1e9).max(1e-9);

    let mut out = IncastOutcome::default();
    for (s, &h) in hosts[..2].iter().enumerate() {
        let host = sim.host(h).ok_or_else(|| anyhow!("sender gone"))?;
        let mut tx = 0;
        let mut cnp_rx = 0;
        for &(_, q) in qpns.iter().filter(|(o, _)| *o == s) {
            if let Some(st) = host.rnic().qp_stats(q) {
                tx += st.tx_payload_bytes;
                cnp_rx += st.cnp_rx;
            }
        }
        out.flows.push(FlowResult {
            name: format!("h{}", s + 1),
            tx_gbps: tx as f64 * 8.0 / secs / 1e9,
            tx_bytes: tx,
            pfc_rx: host.rnic().stats().pfc_rx[usize::from(cfg.incast_priority())],
            cnp_rx,
        });
    }
    let all: Vec<u32> = qpns.iter().map(|&(_, q)| q).collect();
    let (rx, gaps, lost, ce, cnp) = rx_totals(&sim, hosts[2], &all);
    out.rx_bytes = rx;
    out.rx_gbps = rx as f64 * 8.0 / secs / 1e9;
    out.psn_gaps = gaps;
    out.psn_lost = lost;
    out.rx_ce = ce;
    out.cnp_tx = cnp;
    let swr = sim.switch(sw).ok_or_else(|| anyhow!("switch gone"))?;
    out.switch_drops = swr.tm().drop_counts().total();
    out.switch_ce_marked = swr.stats().ce_marked;
    out.switch_pfc_tx = (0..3u16)
        .filter_map(|p| sim.port_counters(sw, p))
        .map(|c| c.pfc_tx_total())
        .sum();
    if let (Some(dir), Some(rec)) = (series_dir, sim.recorder()) {
        rec.write(dir, "sim_incast_timeseries")
            .map_err(|e| anyhow!("writing the time series to {}: {e}", dir.display()))?;
    }
    Ok(out)
}

/// Part 2: host 0 on leaf1 (port 0), host 1 on leaf2; leaves' ports 1, 2
/// go to spine1, spine2; `cfg.ecmp_qps` QPs from host 0 to host 1.
pub fn run_ecmp(cfg: &ScenarioConfig, seed: u64) -> Result<EcmpOutcome> {
    let speed = cfg.speed_bps;
    let mut b = TopologyBuilder::new(seed);
    let (a_ip, b_ip) = (host_ip(2, 0), host_ip(2, 1));
    let mk_sw = |b: &mut TopologyBuilder, ports: usize, routes: &[(Ipv4Addr, &[u16])], s: u32| {
        let mut fwd = L3Forwarder::new(s);
        for (ip, p) in routes {
            fwd.add_route(*ip, 32, p);
        }
        SimSwitch::new(tm_cfg(ports, speed), Box::new(fwd))
            .map(|sw| b.add_switch(sw))
            .map_err(|e| anyhow!("switch config: {e:?}"))
    };
    let seed32 = seed as u32;
    let leaf1 = mk_sw(&mut b, 3, &[(a_ip, &[0]), (b_ip, &[1, 2])], seed32)?;
    let leaf2 = mk_sw(&mut b, 3, &[(b_ip, &[0]), (a_ip, &[1, 2])], seed32 + 1)?;
    let spine1 = mk_sw(&mut b, 2, &[(a_ip, &[0]), (b_ip, &[1])], seed32 + 2)?;
    let spine2 = mk_sw(&mut b, 2, &[(a_ip, &[0]), (b_ip, &[1])], seed32 + 3)?;
    let ha = b.add_host(mk_host(
        2,
        0,
        cfg.ecmp_rate_bps,
        26,
        false,
        false,
        cfg.roce_mtu_bytes,
    ));
    let hb = b.add_host(mk_host(
        2,
        1,
        cfg.ecmp_rate_bps,
        26,
        false,
        false,
        cfg.roce_mtu_bytes,
    ));
    let links = [
        ((ha, 0), (leaf1, 0)),
        ((hb, 0), (leaf2, 0)),
        ((leaf1, 1), (spine1, 0)),
        ((leaf1, 2), (spine2, 0)),
        ((leaf2, 1), (spine1, 1)),
        ((leaf2, 2), (spine2, 1)),
    ];
    for (x, y) in links {
        // Host links run at the host's rate, fabric links at the lab speed.
        let rate = if x.0 == ha || x.0 == hb {
            cfg.ecmp_rate_bps
        } else {
            speed
        };
        b.connect(x, y, rate, cable())
            .map_err(|e| anyhow!("link: {e:?}"))?;
    }
    let qpns: Vec<u32> = (0..cfg.ecmp_qps).map(|q| 0x100 + q).collect();
    let msgs = messages_for(
        cfg.ecmp_rate_bps,
        Duration::from_nanos((cfg.ecmp_s * 1e9) as u64),
        cfg.ecmp_qps,
    );
    for &q in &qpns {
        add_stream(
            &mut b,
            ha,
            (a_ip, host_mac(2, 0)),
            hb,
            (b_ip, host_mac(2, 1)),
            q,
            msgs,
        )?;
    }
    let mut sim = b.build();
    sim.drive();
    let (rx, gaps, lost, _, _) = rx_totals(&sim, hb, &qpns);
    let prio = usize::from(LOSSLESS_PRIORITY);
    Ok(EcmpOutcome {
        qps: cfg.ecmp_qps,
        uplink_packets: [1u16, 2]
            .iter()
            .map(|&p| {
                sim.port_counters(leaf1, p)
                    .map(|c| c.tx_frames[prio])
                    .unwrap_or(0)
            })
            .collect(),
        rx_bytes: rx,
        psn_gaps: gaps,
        psn_lost: lost,
    })
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
