//! What a lab switch would do with one frame (`roceperf decode`): the
//! frame goes through the production [`Switch`] running the compiled
//! `roce_switch.p4`, configured by [`SwitchPlan`] with the lab's default
//! QoS ([`QosSpec::default`], [`fabric_config`]), traced as `rocectl trace`
//! traces a live one, and the trace is read back: ingress priority and PG,
//! lossless or not, egress port and queue, the ECN decision, a drop and its
//! reason. Classification is the program's, never re-implemented here.
//!
//! The switch has two ports: the frame arrives on port 0; it routes for the
//! frame's destination MAC with a default route (IPv4 and IPv6) to port 1,
//! so a v2 frame sent to its gateway is routed as in a lab; other frames
//! (RoCE v1) take the program's L2 path, where the destination is known on
//! port 1 (a bridged MAC, as if the controller had learned it: the
//! program never floods). Port trust is the lab's DSCP, or PCP when asked
//! ([`Trust`]: RoCE v1 has no DSCP).
//!
//! Contract: deterministic, no I/O, no clock (the switch's time starts at
//! zero and steps until the frame is out or dropped). Allocates freely: a
//! diagnostic, not the packet path.

use std::net::IpAddr;

use anyhow::{Context, Result};
use dataplane::fabric::config::Trust;
use dataplane::fabric::{Bridged, L3Config, NextHop, Route, SwitchPlan};
use dataplane::roce::{self, PROGRAM_INFO, Program};
use dataplane::sim::switch_config;
use dataplane::switch::Switch;
use dataplane::switch::TraceRequest;
use dataplane::time::{Duration, Instant};
use dataplane::wire::ip::Ecn;
use dataplane::wire::roce_frame::Decoded;
use p4_target::trace::{Event, PacketTrace};

use crate::fabric::{DEFAULT_MTU_BYTES, QosSpec, fabric_config};

/// Port speed of the two switch ports, bits per second.
const PORT_SPEED_BPS: u64 = 100_000_000_000;
/// MAC of the next hop behind port 1.
const NEXT_HOP_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0xfe];
/// Switch time steps before giving up on a frame that neither left nor was
/// dropped (it never happens with an empty switch; a bound, not a wait).
const MAX_STEPS: u32 = 1000;

/// What happened to one copy of the frame.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyVerdict {
    /// Copy number (multicast/flood replicas count up).
    pub copy: u32,
    /// Egress port, once the traffic manager admitted the copy.
    pub egress_port: Option<u16>,
    /// Egress queue.
    pub queue: Option<u8>,
    /// The program's ECN decision: marked CE or not (absent: no decision).
    pub ce_marked: Option<bool>,
    /// Why it was dropped, if it was.
    pub drop: Option<String>,
    /// Length of the frame as it left.
    pub out_bytes: Option<u32>,
}

/// The switch's verdict on a frame.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchVerdict {
    /// Port trust used.
    pub trust: Trust,
    /// The priority the program classified the frame into.
    pub priority: Option<u8>,
    /// The ingress priority group charged.
    pub pg: Option<u8>,
    /// PFC is enabled for that priority (lossless).
    pub lossless: Option<bool>,
    /// Lossless priorities of the configuration.
    pub lossless_priorities: Vec<u8>,
    /// The frame's ECN codepoint says ECN-capable transport.
    pub ecn_capable: bool,
    /// Whether the frame was routed (L3) rather than switched (L2).
    pub routed: bool,
    /// Tables applied: (table, action, hit).
    pub tables: Vec<(String, String, bool)>,
    /// Every copy's fate.
    pub copies: Vec<CopyVerdict>,
}

/// Name of a `drop_reason` counter index (the program's `DROP_*` consts).
fn drop_reason_name(i: u64) -> String {
    let names: [(u32, &str); 8] = [
        (roce::DROP_PARSER_ERROR, "parser error"),
        (roce::DROP_CHECKSUM, "bad IPv4 checksum"),
        (roce::DROP_TTL_EXPIRED, "TTL expired"),
        (roce::DROP_NO_ROUTE, "no route"),
        (roce::DROP_ACL, "ACL deny"),
        (roce::DROP_UNKNOWN_L2_DST, "unknown L2 destination"),
        (roce::DROP_EGRESS_INVALID, "invalid egress port"),
        (roce::DROP_REPLICA_TO_SOURCE, "replica to its source port"),
    ];
    names
        .iter()
        .find(|(n, _)| u64::from(*n) == i)
        .map_or_else(|| format!("drop reason {i}"), |(_, s)| (*s).to_string())
}

/// Name of a `roce_security_drops` counter index (`port * SEC_DROP_REASONS
/// + reason`, the program's `SEC_DROP_*` consts).
fn security_drop_name(i: u64) -> String {
    let names: [(u32, &str); 4] = [
        (
            roce::SEC_DROP_ROCEV2_SOURCE,
            "RoCE v2 source not on the allowlist",
        ),
        (
            roce::SEC_DROP_ROCEV1_SOURCE,
            "RoCE v1 source not on the allowlist",
        ),
        (roce::SEC_DROP_PKEY_INGRESS, "P_Key not allowed in"),
        (
            roce::SEC_DROP_PKEY_EGRESS,
            "P_Key does not match the egress port",
        ),
    ];
    let reason = i % u64::from(roce::SEC_DROP_REASONS);
    names
        .iter()
        .find(|(n, _)| u64::from(*n) == reason)
        .map_or_else(
            || format!("RoCE security reason {reason}"),
            |(_, s)| (*s).to_string(),
        )
}

/// Runs `frame` (decoded as `d`) through a lab switch (see the module
/// doc) whose ports trust `trust`.
pub fn run(frame: &[u8], d: &Decoded, trust: Trust) -> Result<SwitchVerdict> {
    let ecn = d.spec.ecn;
    let qos = QosSpec::default();
    let mut fabric = fabric_config(
        &qos,
        &[
            (0, PORT_SPEED_BPS, DEFAULT_MTU_BYTES),
            (1, PORT_SPEED_BPS, DEFAULT_MTU_BYTES),
        ],
    );
    for p in &mut fabric.ports {
        p.trust = Some(trust);
    }
    let router_mac = frame
        .get(..6)
        .and_then(|m| m.try_into().ok())
        .unwrap_or([0; 6]);
    let default_route = |prefix: IpAddr| Route {
        prefix,
        prefix_len: 0,
        next_hops: vec![NextHop {
            port: 1,
            dst_mac: NEXT_HOP_MAC,
        }],
    };
    let routes = L3Config {
        router_mac,
        ecmp_seed: 1,
        routes: vec![
            default_route(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED)),
            default_route(IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED)),
        ],
        bridged: vec![Bridged {
            vid: d.spec.vlan.map_or(0, |v| v.vid),
            mac: d.spec.dst_mac,
            port: 1,
        }],
    };
    let mut sw = Switch::new(Program::new(), switch_config(2), Instant::ZERO).context("switch")?;
    SwitchPlan::build(sw.tm().config(), &fabric, Some(&routes), &PROGRAM_INFO)
        .context("switch plan")?
        .apply(&mut sw, Instant::ZERO)
        .context("applying the switch plan")?;
    sw.handle_trace_request(Some(TraceRequest::default()));
    let mut now = Instant::ZERO;
    sw.handle_frame(0, frame, now);
    let mut traces: Vec<PacketTrace> = Vec::new();
    let mut out = Vec::new();
    let mut in_flight = true;
    for _ in 0..MAX_STEPS {
        sw.handle_timeout(now);
        for port in 0..2 {
            while sw.poll_transmit(port, now, &mut out).is_some() {}
        }
        while let Some(t) = sw.poll_trace() {
            traces.push(t);
        }
        in_flight = (0..2u16)
            .flat_map(|p| (0..8u8).map(move |q| (p, q)))
            .any(|(p, q)| sw.tm().queue_depth(p, q).is_some_and(|(b, _)| b > 0));
        if !in_flight && !traces.is_empty() {
            break;
        }
        now += Duration::from_micros(1);
    }
    if in_flight {
        anyhow::bail!("the frame neither left the switch nor was dropped");
    }
    Ok(verdict(&traces, trust, qos.lossless_priorities, ecn))
}

/// Reads a verdict out of the traces of one packet's copies.
fn verdict(
    traces: &[PacketTrace],
    trust: Trust,
    lossless_priorities: Vec<u8>,
    ecn: Ecn,
) -> SwitchVerdict {
    let mut v = SwitchVerdict {
        trust,
        priority: None,
        pg: None,
        lossless: None,
        lossless_priorities,
        ecn_capable: ecn.is_ect() || ecn == Ecn::Ce,
        routed: false,
        tables: Vec::new(),
        copies: Vec::new(),
    };
    for t in traces {
        let mut c = CopyVerdict {
            copy: t.copy,
            egress_port: None,
            queue: None,
            ce_marked: None,
            drop: None,
            out_bytes: None,
        };
        let mut program_drop = None;
        for e in &t.events {
            match e {
                Event::Table {
                    table,
                    action,
                    hit,
                    params,
                    ..
                } if t.copy == 0 => {
                    // Routing looked the destination up (the L2 path does not).
                    if table.ends_with("_lpm") {
                        v.routed = true;
                    }
                    // Dropped before the TM: the classification still shows.
                    if table.ends_with("_to_priority")
                        && let Some(p) = params.iter().find(|p| p.name == "priority")
                    {
                        v.priority.get_or_insert(p.value.0 as u8);
                    }
                    v.tables.push((table.clone(), action.clone(), *hit));
                }
                Event::Extern {
                    call,
                    object: Some(object),
                    index: Some(i),
                    ..
                } if call == "count" && object.ends_with("drop_reason") => {
                    program_drop = Some(drop_reason_name(*i));
                }
                Event::Extern {
                    call,
                    object: Some(object),
                    index: Some(i),
                    ..
                } if call == "count" && object.contains("roce_security") => {
                    program_drop = Some(security_drop_name(*i));
                }
                Event::Enqueue {
                    egress_port,
                    priority,
                    pg,
                    lossless,
                    queue,
                    ..
                } => {
                    v.priority = Some(*priority);
                    v.pg = Some(*pg);
                    v.lossless = Some(*lossless);
                    c.egress_port = Some(*egress_port);
                    c.queue = Some(*queue);
                }
                Event::Ecn { marked, .. } => c.ce_marked = Some(*marked),
                Event::Drop { reason } => {
                    c.drop = Some(match program_drop.take() {
                        Some(p) => format!("{p} ({reason})"),
                        None => reason.clone(),
                    });
                }
                Event::TmDrop { reason } => c.drop = Some(format!("traffic manager: {reason}")),
                Event::Depart { bytes, .. } => c.out_bytes = Some(*bytes),
                _ => {}
            }
        }
        v.copies.push(c);
    }
    if v.lossless.is_none() {
        v.lossless = v.priority.map(|p| v.lossless_priorities.contains(&p));
    }
    v
}

#[cfg(test)]
mod tests {
    /// The counter index carries the port; the name is the reason's.
    #[test]
    fn security_drops_are_named_by_their_reason_on_any_port() {
        let i = |port: u64, reason: u32| {
            port * u64::from(dataplane::roce::SEC_DROP_REASONS) + u64::from(reason)
        };
        assert_eq!(
            super::security_drop_name(i(2, dataplane::roce::SEC_DROP_PKEY_EGRESS)),
            "P_Key does not match the egress port"
        );
        assert_eq!(
            super::security_drop_name(i(0, dataplane::roce::SEC_DROP_ROCEV1_SOURCE)),
            "RoCE v1 source not on the allowlist"
        );
    }
}
