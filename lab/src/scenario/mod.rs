//! The embedded default scenario of `rocelab run`: what it measures and how
//! it is judged.
//!
//! Two parts, run either on real namespaces through `roceswitch`
//! ([`live`]) or in the deterministic simulator ([`sim`]); both fill the
//! same [`Outcome`], so [`verdicts`] and the printed table are identical:
//!
//! 1. **Incast**: two senders and one receiver behind one switch, every
//!    port shaped to [`ScenarioConfig::speed_bps`] (2:1 oversubscription),
//!    RoCE WRITEs on the lossless priority 3 (DSCP 26), ECN marking on the
//!    receiver's egress queue. Expected: no drop, PSN-complete delivery, PFC
//!    pauses from the switch, CE marks and CNPs, the bottleneck near its
//!    line rate (design spec: lossless classes, PFC and ECN/DCQCN).
//! 2. **ECMP**: a 2-leaf/2-spine fabric, one host per leaf, several QPs
//!    (distinct UDP source ports, the RoCEv2 entropy) from leaf 1 to leaf 2.
//!    Expected: each of leaf 1's two uplinks carries between half and 1.5×
//!    its fair share of packets, and every QP stays in order (R-ECMP-2).
//!
//! Units are in the names (`_bps`, `_bytes`, `_s`).

pub mod dcbx;
pub mod dcqcn;
pub mod fault;
pub mod json;
pub mod live;
pub mod live_series;
pub mod lossy;
pub mod output;
pub mod parts;
pub mod red;
pub mod ring;
pub mod ring_sim;
pub mod sim;
pub mod switchctl;

use std::fmt::Write as _;

/// Knobs of the default scenario.
#[derive(Debug, Clone)]
pub struct ScenarioConfig {
    /// Port speed of every link (switch shapers and host agents), bit/s.
    pub speed_bps: u64,
    /// Incast traffic duration, seconds.
    pub incast_s: f64,
    /// ECMP traffic duration, seconds.
    pub ecmp_s: f64,
    /// Rate the ECMP sender offers, bit/s (below the uplinks' sum: the
    /// point is the spread, not congestion).
    pub ecmp_rate_bps: u64,
    /// QPs of the ECMP sender.
    pub ecmp_qps: u32,
    /// QPs per incast sender.
    pub incast_qps: u32,
    /// RoCE path MTU: payload bytes per packet. Large packets keep the
    /// user-space agents at rate on a loaded machine (fewer wake-ups).
    pub roce_mtu_bytes: usize,
    /// Incast traffic: DSCP (26 = priority 3, lossless; 0 = lossy).
    pub incast_dscp: u8,
    /// ECN on the receiver's egress queue (Kmin, Kmax bytes, Pmax).
    pub ecn: Option<EcnSetting>,
    /// Senders slow down on CNPs (DCQCN). Off by default: fixed-rate
    /// senders keep the 2:1 incast congested, so PFC must hold the line
    /// while CE marks and CNPs are still produced and counted.
    pub dcqcn: bool,
    /// Run the incast a second time with DCQCN on and judge the two side by
    /// side ([`dcqcn`]); only when `dcqcn` is off, the incast is lossless and
    /// ECN marks. On by default: the main job shows both halves of the
    /// lossless story.
    pub compare_dcqcn: bool,
    /// Simulator only: trace the packets this selects on every switch
    /// (`rocelab run --sim --trace FILTER`).
    pub trace: Option<dataplane::switch::TraceRequest>,
    /// Where the simulator writes those traces, one JSON object a line
    /// (docs/trace.md); the incast run's first, then the ECMP run's.
    pub trace_out: Option<std::path::PathBuf>,
    /// Shared buffer of the incast switch beyond its PFC headroom, bytes;
    /// `None`: the fabric default (16 MiB). Default [`INCAST_SHARED_BYTES`].
    pub incast_shared_bytes: Option<u64>,
    /// Fault injection: the switch's ACL drops one in every N data packets
    /// of sender h1's first QP ([`fault`]).
    pub fault_one_in: Option<u32>,
    /// LLDP/DCBX on the switch and the senders, which start with this
    /// class ([`dcbx`]); `None`: no LLDP anywhere.
    pub dcbx: Option<dcbx::DcbxSenders>,
}

/// Shared buffer of the incast switch: 1 MiB, so the dynamic threshold
/// (half the free pool) is reached within a fraction of a second even at
/// the ~1.6:1 the user-space senders manage on a loaded machine (16 MiB
/// absorbed a 3 s live run with no XOFF and no drop), and what is queued
/// when the senders stop drains in ~80 ms at 100 Mb/s instead of seconds.
pub const INCAST_SHARED_BYTES: u64 = 1 << 20;

/// Share of the receiver's CNPs a live sender must get: the senders exit
/// when their duration ends, and CNPs for CE-marked data still queued then
/// (up to [`INCAST_SHARED_BYTES`] plus headroom, ~80 ms at 100 Mb/s) find
/// no one; anything below this share lost CNPs on the way. The simulator's
/// hosts stay up: there received = sent exactly.
pub const LIVE_MIN_CNP_SHARE: f64 = 0.95;

/// RED/ECN marking profile.
#[derive(Debug, Clone, Copy)]
pub struct EcnSetting {
    /// Queue depth where marking starts, bytes.
    pub kmin_bytes: u64,
    /// Queue depth where marking reaches `pmax`, bytes.
    pub kmax_bytes: u64,
    /// Marking probability at `kmax_bytes`.
    pub pmax: f64,
}

impl Default for ScenarioConfig {
    fn default() -> Self {
        ScenarioConfig {
            speed_bps: 100_000_000,
            incast_s: 4.0,
            ecmp_s: 2.0,
            ecmp_rate_bps: 50_000_000,
            ecmp_qps: 32,
            incast_qps: 1,
            roce_mtu_bytes: 4096,
            incast_dscp: 26,
            ecn: Some(EcnSetting {
                kmin_bytes: 20_000,
                kmax_bytes: 200_000,
                pmax: 0.2,
            }),
            dcqcn: false,
            compare_dcqcn: true,
            trace: None,
            trace_out: None,
            incast_shared_bytes: Some(INCAST_SHARED_BYTES),
            fault_one_in: None,
            dcbx: None,
        }
    }
}

impl ScenarioConfig {
    /// The priority the incast traffic maps to (default DSCP map, DSCP >> 3).
    pub fn incast_priority(&self) -> u8 {
        self.incast_dscp >> 3
    }

    /// True if the incast traffic is on the lossless priority 3.
    pub fn lossless(&self) -> bool {
        self.incast_priority() == LOSSLESS_PRIORITY
    }
}

/// MTU of every lab link and switch port, bytes (jumbo: room for a 4 KiB
/// RoCE payload plus headers).
pub const LINK_MTU_BYTES: u32 = 9000;

/// Fastest link `rocelab run` accepts on namespaces: on a small machine a
/// live lab cannot keep faster veths busy, so the incast checks would fail
/// for the lab's sake, not the switch's. Measured with `rocelab run
/// --speed 10G` on 2 cores (release, a build with this limit raised):
/// before #17 lab24, 3.8–4.8 Gb/s at the bottleneck, 48–103 k frames lost
/// in the switch's receive rings, 11–12 of 18 checks; since (receive rings
/// by speed, hosts' kernels not routing the agents' frames), lossless,
/// 5.7–7.3 Gb/s, 13–14 of 18, short of the 7.35 Gb/s goodput check and
/// of DCQCN's, with the switch's dataplane thread using a whole core. The
/// simulator has no such limit.
pub const MAX_LIVE_SPEED_BPS: u64 = 1_000_000_000;

/// The PFC-enabled priority of the scenario.
pub const LOSSLESS_PRIORITY: u8 = 3;

/// One sender's flow.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct FlowResult {
    /// Sender name.
    pub name: String,
    /// Payload throughput the sender achieved, Gbit/s.
    pub tx_gbps: f64,
    /// Payload bytes sent.
    pub tx_bytes: u64,
    /// PFC frames the sender received (pauses seen on the wire).
    pub pfc_rx: u64,
    /// CNPs the sender received.
    pub cnp_rx: u64,
    /// Data packets the sender sent again (go-back-N).
    pub retx_packets: u64,
    /// Payload bytes of those.
    pub retx_bytes: u64,
    /// Sequence-error NAKs the sender received (`packet_seq_err`).
    pub naks_rx: u64,
    /// Retransmission timer expiries (`local_ack_timeout_err`).
    pub timeouts: u64,
    /// QPs that failed with "transport retry counter exceeded".
    pub retry_exceeded: u64,
    /// What DCBX did on the sender, if it ran ([`dcbx`]).
    pub dcbx: Option<dataplane::dcbx::host::DcbxStatus>,
    /// Bytes the switch received from the sender's port, by priority.
    pub switch_rx_bytes_by_priority: [u64; 8],
    /// The switch's DCBX comparison with the sender ("none", "pfc,app");
    /// `None` without DCBX or before the sender was heard.
    pub switch_dcbx_mismatch: Option<String>,
}

/// What the incast part measured.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct IncastOutcome {
    /// Per sender.
    pub flows: Vec<FlowResult>,
    /// Payload goodput at the receiver, Gbit/s.
    pub rx_gbps: f64,
    /// Payload bytes received.
    pub rx_bytes: u64,
    /// PSN gaps at the receiver.
    pub psn_gaps: u64,
    /// Packets the receiver counts as lost.
    pub psn_lost: u64,
    /// Packets the switch dropped (all ports, all priorities).
    pub switch_drops: u64,
    /// Frames the kernel dropped in the switch's receive rings before the
    /// switch read them (all ports; 0 in the simulator). Not in
    /// [`IncastOutcome::switch_drops`]: the switch never saw them, so no
    /// pause could have held them back, but RC recovery shows them.
    pub switch_kernel_drops: u64,
    /// PFC frames the switch sent.
    pub switch_pfc_tx: u64,
    /// Packets the switch marked CE.
    pub switch_ce_marked: u64,
    /// CE-marked packets the receiver got.
    pub rx_ce: u64,
    /// CNPs the receiver sent.
    pub cnp_tx: u64,
    /// Packets the bottleneck queue (receiver's port, incast priority) sent.
    pub bottleneck_tx_packets: u64,
    /// The fraction of them the RED curve marks at the sampled queue depths
    /// ([`red::expected_fraction`]); `None` without ECN or samples.
    pub red_expected_fraction: Option<f64>,
    /// Where the bottleneck queue sat while the senders ran
    /// ([`dcqcn::queue_band`]); `None` without ECN or samples.
    pub queue_band: Option<dcqcn::QueueBand>,
    /// Packets the switch dropped, by priority (all ports).
    pub drops_by_priority: [u64; 8],
    /// Goodput at the receiver over time: (seconds into the run, Gb/s).
    #[serde(skip)]
    pub goodput_series: Vec<(f64, f64)>,
    /// Payload the senders had retransmitted by then, together: (seconds
    /// into the run, bytes).
    #[serde(skip)]
    pub retx_series: Vec<(f64, u64)>,
}

/// What the ECMP part measured.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct EcmpOutcome {
    /// QPs the sender ran.
    pub qps: u32,
    /// Data packets leaf 1 sent on each uplink.
    pub uplink_packets: Vec<u64>,
    /// Payload bytes the receiver got.
    pub rx_bytes: u64,
    /// PSN gaps at the receiver (reordering across paths shows here).
    pub psn_gaps: u64,
    /// Packets the receiver counts as lost.
    pub psn_lost: u64,
}

/// Everything one run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// `"namespaces"` or `"simulator"`.
    pub mode: &'static str,
    /// The configuration it ran with.
    pub config: ScenarioConfig,
    /// Incast part.
    pub incast: IncastOutcome,
    /// The incast again with DCQCN on, when [`dcqcn::compares`].
    pub incast_dcqcn: Option<IncastOutcome>,
    /// ECMP part.
    pub ecmp: EcmpOutcome,
}

/// One line of the verdict table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Verdict {
    /// What is checked.
    pub check: String,
    /// What was measured.
    pub measured: String,
    /// What is expected.
    pub expected: String,
    /// Whether the measurement meets the expectation.
    pub pass: bool,
}

fn v(check: &str, measured: String, expected: &str, pass: bool) -> Verdict {
    Verdict {
        check: check.to_string(),
        measured,
        expected: expected.to_string(),
        pass,
    }
}

/// Largest share of its fair share any uplink may carry.
pub const ECMP_MAX_OVER_FAIR: f64 = 1.5;
/// Smallest share of its fair share any uplink must carry.
pub const ECMP_MIN_OF_FAIR: f64 = 0.5;

/// The ratio of each entry to the mean (1.0 = exactly fair); empty or
/// all-zero input gives an empty vector.
pub fn fair_share_ratios(counts: &[u64]) -> Vec<f64> {
    let total: u64 = counts.iter().sum();
    if counts.is_empty() || total == 0 {
        return Vec::new();
    }
    let fair = total as f64 / counts.len() as f64;
    counts.iter().map(|&c| c as f64 / fair).collect()
}

/// Payload bytes per WRITE message of the lab's senders (roceperf's and
/// the simulator's default).
pub const MESSAGE_BYTES: u64 = 65_536;

/// Share of a link's bit rate that is RoCE payload when WRITEs of
/// `message_bytes` go out in packets of `mtu_bytes` payload: every packet
/// carries Ethernet, IPv4, UDP, BTH and ICRC headers and costs preamble,
/// FCS and inter-frame gap on the wire; the first packet of each message
/// also carries a RETH (IBTA 9.3.1, RoCEv2 framing).
pub fn payload_efficiency(mtu_bytes: usize, message_bytes: u64) -> f64 {
    use dataplane::wire::{ethernet, ib, ip};
    let mtu = mtu_bytes.max(1) as u64;
    let packets = message_bytes.div_ceil(mtu).max(1);
    let per_packet = (ethernet::HEADER_LEN
        + ip::IPV4_HEADER_LEN
        + ip::UDP_HEADER_LEN
        + ib::bth::BTH_LEN
        + ib::icrc::ICRC_LEN
        + ethernet::WIRE_OVERHEAD_BYTES) as u64;
    let wire = message_bytes + packets * per_packet + ib::reth::RETH_LEN as u64;
    message_bytes as f64 / wire as f64
}

/// Jain's fairness index of `xs`: (Σx)² / (n·Σx²), 1 = equal shares, 1/n =
/// one takes all; `None` for no data.
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    (!xs.is_empty() && sq > 0.0).then(|| sum * sum / (xs.len() as f64 * sq))
}

/// Lowest Jain index where the senders should share fairly (#18): two
/// senders at 0.45/0.55 of the bottleneck give 0.990, 0.35/0.65 give 0.917.
pub const MIN_JAIN: f64 = 0.95;

/// Goodput band around the payload rate of a lossless bottleneck in the
/// simulator: PFC keeps the bottleneck busy and nothing else competes
/// (measured 1.000 of it at 100 Mb/s).
pub const SIM_GOODPUT_BAND: (f64, f64) = (0.95, 1.01);

/// The same on namespaces: the debug-build switch and the user-space agents
/// lose turns on a loaded 2-core machine (measured 0.86-0.87 at 40 Mb/s
/// while other builds ran, ~0.98 at 100 Mb/s on a quieter one); a shaper at
/// half rate or a bottleneck idling under PFC fails it. The top: a shaper
/// cannot deliver more than the line.
pub const LIVE_GOODPUT_BAND: (f64, f64) = (0.75, 1.02);

/// The goodput band for a run's mode (`"simulator"` or `"namespaces"`).
pub fn lossless_goodput_band(mode: &str) -> (f64, f64) {
    if mode == "simulator" {
        SIM_GOODPUT_BAND
    } else {
        LIVE_GOODPUT_BAND
    }
}

/// On a lossy priority RC falls back to go-back-N: a goodput above this
/// share of the payload rate means drops did not cost what they must,
/// unless a QP failed with retry exceeded and left the link to the others
/// (simulator at 2:1: 0.17 with 16 MiB of buffer; with 1 MiB one QP fails
/// and the other runs at 0.85; live: 0.065-0.094).
pub const LOSSY_GOODPUT_MAX: f64 = 0.6;

/// With DCQCN the senders give up a little of the bottleneck for a short
/// queue: the lowest share of the payload rate that still passes (rates
/// and timers scaled by `DcqcnConfig::scaled`: simulator 0.97 of it at
/// 100 Mb/s and 0.98 at 1 Gb/s, namespaces 0.93 at 100 Mb/s on a loaded
/// machine; senders that over-cut, as with the 100 G timers' limit cycle,
/// left the link idle part of the time, and one stuck at its floor gets
/// ~0.02).
pub const DCQCN_GOODPUT_MIN: f64 = 0.75;

/// Most PFC frames the switch may send with DCQCN: the senders slow down
/// before the queue reaches XOFF, so at most a few pauses at start-up
/// (before the first CNPs arrive) are expected.
pub const DCQCN_MAX_PFC: u64 = 10;

/// Judges an outcome line by line.
pub fn verdicts(o: &Outcome) -> Vec<Verdict> {
    let c = &o.config;
    let x = &o.incast;
    let line_gbps = c.speed_bps as f64 / 1e9;
    let payload_gbps = line_gbps * payload_efficiency(c.roce_mtu_bytes, MESSAGE_BYTES);
    let mut out = Vec::new();
    let sum = |f: fn(&FlowResult) -> u64| x.flows.iter().map(f).sum::<u64>();
    if c.lossless() {
        let (mut lo, hi) = lossless_goodput_band(o.mode);
        if c.dcqcn {
            lo = lo.min(DCQCN_GOODPUT_MIN);
        }
        out.push(v(
            "incast: bottleneck goodput",
            format!("{:.3} Gb/s", x.rx_gbps),
            &format!("{lo}..{hi} x {payload_gbps:.4} Gb/s (line rate minus RoCE headers)"),
            (lo * payload_gbps..=hi * payload_gbps).contains(&x.rx_gbps),
        ));
        let rates: Vec<f64> = x.flows.iter().map(|f| f.tx_gbps).collect();
        let jain = jain_index(&rates);
        out.push(v(
            "incast: fairness of the senders",
            format!(
                "Jain {:.3} ({} Gb/s)",
                jain.unwrap_or(0.0),
                rates
                    .iter()
                    .map(|r| format!("{r:.3}"))
                    .collect::<Vec<_>>()
                    .join(" / ")
            ),
            &format!(">= {MIN_JAIN} (equal senders share the bottleneck)"),
            x.flows.len() >= 2 && jain.is_some_and(|j| j >= MIN_JAIN),
        ));
        out.push(v(
            "incast: switch drops",
            x.switch_drops.to_string(),
            "0 (lossless priority 3)",
            x.switch_drops == 0,
        ));
        let tx = sum(|f| f.tx_bytes);
        out.push(v(
            "incast: bytes sent = bytes received",
            format!("{tx} sent, {} received", x.rx_bytes),
            "equal and > 0 (nothing lost on a lossless priority)",
            tx == x.rx_bytes && tx > 0,
        ));
        out.push(v(
            "incast: RC recovery",
            format!(
                "{} NAKs, {} retransmitted, {} timeouts, {} gaps",
                sum(|f| f.naks_rx),
                sum(|f| f.retx_packets),
                sum(|f| f.timeouts),
                x.psn_gaps
            ),
            "0 of each (no loss, nothing to recover)",
            sum(|f| f.naks_rx) == 0
                && sum(|f| f.retx_packets) == 0
                && sum(|f| f.timeouts) == 0
                && x.psn_gaps == 0
                && x.psn_lost == 0,
        ));
        let pfc_rx = sum(|f| f.pfc_rx);
        let measured = format!(
            "{} sent by switch, {} seen by senders",
            x.switch_pfc_tx, pfc_rx
        );
        if c.dcqcn {
            out.push(v(
                "incast: PFC pauses",
                measured,
                &format!("<= {DCQCN_MAX_PFC} (DCQCN keeps the queue below XOFF)"),
                x.switch_pfc_tx <= DCQCN_MAX_PFC,
            ));
            if let Some(e) = &c.ecn {
                out.push(dcqcn::queue_verdict(
                    "incast: queue between Kmin and Kmax",
                    o.mode,
                    x.queue_band,
                    e,
                ));
            }
        } else {
            out.push(v(
                "incast: PFC pauses",
                measured,
                "> 0 sent and seen (fixed-rate senders)",
                x.switch_pfc_tx > 0 && pfc_rx > 0,
            ));
        }
    } else {
        let failed_qps = sum(|f| f.retry_exceeded);
        out.push(v(
            "incast: bottleneck goodput",
            format!("{:.3} Gb/s, {failed_qps} QP(s) retry exceeded", x.rx_gbps),
            &format!(
                "> 0 and <= {LOSSY_GOODPUT_MAX} x {payload_gbps:.4} Gb/s (go-back-N collapse), \
                 or a QP failed with retry exceeded"
            ),
            x.rx_gbps > 0.0 && (x.rx_gbps <= LOSSY_GOODPUT_MAX * payload_gbps || failed_qps > 0),
        ));
        out.push(v(
            "incast: switch drops",
            x.switch_drops.to_string(),
            "> 0 (lossy priority, oversubscribed)",
            x.switch_drops > 0,
        ));
        out.push(v(
            "incast: RC recovery",
            format!(
                "{} NAKs sent, {} received, {} retransmitted",
                x.psn_gaps,
                sum(|f| f.naks_rx),
                sum(|f| f.retx_packets)
            ),
            "> 0 each (loss answered by NAK and go-back-N)",
            x.psn_gaps > 0 && sum(|f| f.naks_rx) > 0 && sum(|f| f.retx_packets) > 0,
        ));
        out.push(v(
            "incast: PFC pauses",
            x.switch_pfc_tx.to_string(),
            "0 (priority is not PFC-enabled)",
            x.switch_pfc_tx == 0,
        ));
    }
    if c.ecn.is_some() {
        out.push(v(
            "incast: CE marks",
            format!(
                "{} marked by switch, {} received",
                x.switch_ce_marked, x.rx_ce
            ),
            "> 0, received = marked (queue above Kmin, nothing lost)",
            x.switch_ce_marked > 0 && (!c.lossless() || x.rx_ce == x.switch_ce_marked),
        ));
        out.push(red::verdict(
            "incast: marked fraction on the RED curve",
            x.switch_ce_marked,
            x.bottleneck_tx_packets,
            x.red_expected_fraction,
        ));
        let cnp_rx = sum(|f| f.cnp_rx);
        let (expected, pass) = if o.mode == "simulator" {
            (
                "> 0, received = sent (CNPs on priority 6 cross an uncongested path)".to_string(),
                cnp_rx == x.cnp_tx,
            )
        } else {
            (
                format!(
                    "> 0, {LIVE_MIN_CNP_SHARE}..1 x sent (the last ones find the senders gone)"
                ),
                cnp_rx <= x.cnp_tx && cnp_rx as f64 >= LIVE_MIN_CNP_SHARE * x.cnp_tx as f64,
            )
        };
        out.push(v(
            "incast: CNPs",
            format!("{} sent by receiver, {} received", x.cnp_tx, cnp_rx),
            &expected,
            x.cnp_tx > 0 && pass,
        ));
    }
    if let Some(on) = &o.incast_dcqcn {
        out.extend(dcqcn::verdicts(c, o.mode, x, on));
    }
    let e = &o.ecmp;
    let ratios = fair_share_ratios(&e.uplink_packets);
    let spread = e
        .uplink_packets
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(" / ");
    let ratio_text = ratios
        .iter()
        .map(|r| format!("{r:.2}"))
        .collect::<Vec<_>>()
        .join(" / ");
    out.push(v(
        &format!("ecmp: spread of {} QPs over uplinks", e.qps),
        format!("{spread} pkts (x fair: {ratio_text})"),
        &format!("each uplink {ECMP_MIN_OF_FAIR}..{ECMP_MAX_OVER_FAIR} x fair share"),
        !ratios.is_empty()
            && ratios
                .iter()
                .all(|&r| (ECMP_MIN_OF_FAIR..=ECMP_MAX_OVER_FAIR).contains(&r)),
    ));
    out.push(v(
        "ecmp: per-QP order and loss",
        format!("{} gaps, {} lost", e.psn_gaps, e.psn_lost),
        "0 gaps, 0 lost (a QP keeps its path)",
        e.psn_gaps == 0 && e.psn_lost == 0 && e.rx_bytes > 0,
    ));
    out
}

/// The verdict table as text, with a summary line.
pub fn verdict_table(mode: &str, vs: &[Verdict]) -> String {
    let w_check = vs.iter().map(|v| v.check.len()).max().unwrap_or(5).max(5);
    let w_meas = vs
        .iter()
        .map(|v| v.measured.len())
        .max()
        .unwrap_or(8)
        .max(8);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<w_check$}  {:<w_meas$}  {:<6}  expected",
        "check", "measured", "result"
    );
    for v in vs {
        let _ = writeln!(
            s,
            "{:<w_check$}  {:<w_meas$}  {:<6}  {}",
            v.check,
            v.measured,
            if v.pass { "PASS" } else { "FAIL" },
            v.expected
        );
    }
    let failed = vs.iter().filter(|v| !v.pass).count();
    let _ = writeln!(
        s,
        "{mode}: {} of {} checks passed{}",
        vs.len() - failed,
        vs.len(),
        if failed == 0 { "" } else { " -- FAILED" }
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> Outcome {
        Outcome {
            mode: "test",
            config: ScenarioConfig {
                speed_bps: 1_000_000_000,
                ..ScenarioConfig::default()
            },
            incast: IncastOutcome {
                flows: vec![
                    FlowResult {
                        name: "h1".into(),
                        tx_gbps: 0.48,
                        tx_bytes: 1,
                        pfc_rx: 10,
                        cnp_rx: 3,
                        ..FlowResult::default()
                    },
                    FlowResult {
                        name: "h2".into(),
                        tx_gbps: 0.49,
                        tx_bytes: 1,
                        pfc_rx: 12,
                        cnp_rx: 4,
                        ..FlowResult::default()
                    },
                ],
                rx_gbps: 0.97,
                rx_bytes: 2,
                switch_pfc_tx: 22,
                switch_ce_marked: 9,
                rx_ce: 9,
                cnp_tx: 7,
                bottleneck_tx_packets: 100,
                red_expected_fraction: Some(0.1),
                ..IncastOutcome::default()
            },
            incast_dcqcn: None,
            ecmp: EcmpOutcome {
                qps: 32,
                uplink_packets: vec![1000, 1100],
                rx_bytes: 5,
                ..EcmpOutcome::default()
            },
        }
    }

    #[test]
    fn a_healthy_lossless_run_passes_every_line() {
        let vs = verdicts(&good());
        assert!(vs.iter().all(|v| v.pass), "{vs:#?}");
        assert_eq!(vs.len(), 11);
        assert!(verdict_table("t", &vs).contains("11 of 11 checks passed"));
        let mut fast = good();
        fast.incast.rx_gbps = 1.2;
        assert!(
            !verdicts(&fast)[0].pass,
            "goodput above line rate means the shaper is broken"
        );
    }

    #[test]
    fn a_drop_or_gap_on_the_lossless_priority_fails() {
        let mut o = good();
        o.incast.switch_drops = 1;
        o.incast.psn_gaps = 1;
        let failed: Vec<String> = verdicts(&o)
            .into_iter()
            .filter(|v| !v.pass)
            .map(|v| v.check)
            .collect();
        assert_eq!(failed, vec!["incast: switch drops", "incast: RC recovery"]);
        assert!(verdict_table("t", &verdicts(&o)).contains("FAILED"));
    }

    #[test]
    fn lossy_runs_expect_drops_and_no_pauses() {
        let mut o = good();
        o.config.incast_dscp = 0;
        let vs = verdicts(&o);
        let drops = vs
            .iter()
            .find(|v| v.check == "incast: switch drops")
            .unwrap();
        assert!(!drops.pass, "a lossy incast without drops is suspicious");
        o.incast.switch_drops = 50;
        o.incast.psn_lost = 50;
        o.incast.psn_gaps = 20;
        o.incast.switch_pfc_tx = 0;
        o.incast.rx_ce = 5;
        for f in &mut o.incast.flows {
            f.naks_rx = 10;
            f.retx_packets = 200;
        }
        let failed = |o: &Outcome| -> Vec<String> {
            verdicts(o)
                .into_iter()
                .filter(|v| !v.pass)
                .map(|v| v.check)
                .collect()
        };
        assert_eq!(
            failed(&o),
            vec!["incast: bottleneck goodput"],
            "go-back-N must cost goodput"
        );
        o.incast.rx_gbps = 0.15;
        assert!(failed(&o).is_empty(), "{:?}", failed(&o));
        for f in &mut o.incast.flows {
            f.retx_packets = 0;
        }
        assert_eq!(failed(&o), vec!["incast: RC recovery"]);
    }

    #[test]
    fn fairness_goodput_and_cnp_accounting_are_two_sided() {
        let mut o = good();
        o.incast.flows[0].tx_gbps = 0.2;
        o.incast.flows[1].tx_gbps = 0.77;
        let vs = verdicts(&o);
        assert!(!vs[1].pass, "{:?}", vs[1]);
        let mut o = good();
        o.incast.rx_gbps = 0.7;
        assert!(!verdicts(&o)[0].pass, "0.7 of 1 Gb/s is not near line rate");
        o.mode = "simulator";
        o.incast.rx_gbps = 0.9;
        assert!(
            !verdicts(&o)[0].pass,
            "the simulator has no scheduling to lose 10 % to"
        );
        let mut o = good();
        o.incast.flows[0].cnp_rx = 2;
        let cnp = verdicts(&o)
            .into_iter()
            .find(|v| v.check == "incast: CNPs")
            .unwrap();
        assert!(!cnp.pass, "a CNP lost on the way back must show");
        let mut o = good();
        o.config.dcqcn = true;
        let pfc = |o: &Outcome| {
            verdicts(o)
                .into_iter()
                .find(|v| v.check == "incast: PFC pauses")
                .unwrap()
                .pass
        };
        assert!(
            !pfc(&o),
            "22 pauses with DCQCN: it did not keep the queue low"
        );
        o.incast.switch_pfc_tx = 0;
        assert!(pfc(&o));
        assert!((payload_efficiency(4096, 65_536) - 65_536.0 / 66_864.0).abs() < 1e-12);
        assert_eq!(jain_index(&[1.0, 1.0]), Some(1.0));
        assert!((jain_index(&[1.0, 0.0]).unwrap() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn ecmp_spread_outside_the_band_fails() {
        assert_eq!(fair_share_ratios(&[100, 300]), vec![0.5, 1.5]);
        assert!(fair_share_ratios(&[0, 0]).is_empty());
        let mut o = good();
        o.ecmp.uplink_packets = vec![100, 1000];
        let spread = verdicts(&o)
            .into_iter()
            .find(|v| v.check.starts_with("ecmp: spread"))
            .unwrap();
        assert!(!spread.pass);
        o.ecmp.uplink_packets = vec![0, 0];
        assert!(
            !verdicts(&o)
                .into_iter()
                .find(|v| v.check.starts_with("ecmp: spread"))
                .unwrap()
                .pass,
            "no traffic at all is not a fair spread"
        );
    }

    /// The verdict table is for people: no Rust debug formatting in a
    /// passing or a failing run, and every measured number has its unit.
    #[test]
    fn the_verdict_table_reads_without_debug_artefacts() {
        let mut bad = good();
        bad.incast.switch_drops = 3;
        bad.incast.psn_gaps = 2;
        bad.ecmp.uplink_packets = vec![0, 0];
        for o in [good(), bad] {
            let table = verdict_table("namespaces", &verdicts(&o));
            for artefact in ["Some(", "None", "{ ", " }", "[", "]"] {
                assert!(!table.contains(artefact), "{artefact:?} in:\n{table}");
            }
            assert!(table.contains("Gb/s"), "{table}");
        }
    }
}
