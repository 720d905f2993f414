//! `rocectl counters`: the switch's counters under the names engineers
//! grep for.
//!
//! - [`ethtool_stats`]: one port as `ethtool -S` shows a DCB NIC (the mlx5
//!   names: `rx_prio{N}_pause`, `rx_prio{N}_pause_duration` in µs,
//!   `rx_prio{N}_pause_transition`, `rx_discards_phy`, `rx_ecn_mark`, ...).
//! - [`pfc_table`], [`queue_table`], [`watermark_table`]: SONiC's `show pfc
//!   counters`, `show queue counters` (with the `wredcounters` ECN column)
//!   and `show priority-group watermark` / `show queue watermark` layouts.
//! - [`since`]: what `sonic-clear` does, client-side: the counters minus a
//!   snapshot taken earlier (a counter below its snapshot was reset, and
//!   counts from zero). Levels (depths, pause state) and watermarks are
//!   never subtracted: a high-water mark minus another means nothing.
//!
//! Contract: pure functions of a [`CounterSet`]; no I/O, no panics. A port
//! is shown by its interface name when the daemon knows it, else by number.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use crate::fabric::{CounterSet, PortCounters};

/// The name a port is shown under: its interface, or its number.
pub fn port_name(set: &CounterSet, port: u16) -> String {
    set.ports
        .iter()
        .find(|p| p.port == port && !p.name.is_empty())
        .map_or_else(|| port.to_string(), |p| p.name.clone())
}

/// The port `text` names: an interface name the daemon reported, or a
/// port number.
pub fn find_port(set: &CounterSet, text: &str) -> Option<u16> {
    set.ports
        .iter()
        .find(|p| p.name == text)
        .map(|p| p.port)
        .or_else(|| text.parse().ok())
}

/// Every port that has a row of any kind, ascending.
fn ports(set: &CounterSet) -> Vec<u16> {
    let mut v: Vec<u16> = set
        .priorities
        .iter()
        .map(|c| c.port)
        .chain(set.queues.iter().map(|q| q.port))
        .chain(set.pgs.iter().map(|g| g.port))
        .chain(set.ports.iter().map(|p| p.port))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `ethtool -S` of one port: (name, value) in the order mlx5 prints them.
/// Durations are microseconds, as mlx5 reports them.
pub fn ethtool_stats(set: &CounterSet, port: u16) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let row = set.ports.iter().find(|p| p.port == port);
    let wide = |f: fn(&PortCounters) -> u64| row.map_or(0, f);
    out.push(("rx_discards_phy".into(), wide(|p| p.rx_discards_phy)));
    out.push(("tx_discards_phy".into(), wide(|p| p.tx_discards_phy)));
    out.push(("rx_ecn_mark".into(), wide(|p| p.rx_ecn_mark)));
    out.push(("link_up".into(), wide(|p| u64::from(!p.oper_down))));
    out.push(("link_down_events_phy".into(), wide(|p| p.oper_down_events)));
    out.push((
        "tx_pause_storm_warning_events".into(),
        wide(|p| p.pause_storm_warning_events),
    ));
    out.push((
        "tx_pause_storm_error_events".into(),
        wide(|p| p.pause_storm_error_events),
    ));
    // RoCE security drops (no ethtool precedent; named like the metric).
    let security = row.map(|p| p.security_drops).unwrap_or_default();
    for (reason, n) in security.by_reason() {
        out.push((format!("roce_security_{reason}_drops"), n));
    }
    for c in set.priorities.iter().filter(|c| c.port == port) {
        let n = c.priority;
        out.extend([
            (format!("rx_prio{n}_bytes"), c.rx_bytes),
            (format!("rx_prio{n}_packets"), c.rx_packets),
            (format!("tx_prio{n}_bytes"), c.tx_bytes),
            (format!("tx_prio{n}_packets"), c.tx_packets),
            (format!("rx_prio{n}_pause"), c.pfc_rx_frames),
            (format!("rx_prio{n}_pause_duration"), c.pause_rx_ns / 1000),
            (format!("tx_prio{n}_pause"), c.pfc_tx_frames),
            (format!("tx_prio{n}_pause_duration"), c.pause_tx_ns / 1000),
            (
                format!("rx_prio{n}_pause_transition"),
                c.pause_rx_transitions,
            ),
        ]);
    }
    out
}

/// `ethtool -S` text of one port.
pub fn ethtool_text(stats: &[(String, u64)]) -> String {
    let mut out = String::from("NIC statistics:\n");
    for (name, value) in stats {
        let _ = writeln!(out, "     {name}: {value}");
    }
    out
}

/// `ethtool --json -S`-like object of one port.
pub fn ethtool_json(stats: &[(String, u64)]) -> Value {
    Value::Object(
        stats
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect::<Map<_, _>>(),
    )
}

/// A table laid out as SONiC's tabulate output: right-aligned columns, a
/// dashed rule under the header.
fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = header.iter().map(String::len).collect();
    for r in rows {
        for (w, cell) in width.iter_mut().zip(r) {
            *w = (*w).max(cell.len());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .zip(&width)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect();
        let _ = writeln!(out, "{}", parts.join("  "));
    };
    line(&mut out, header);
    let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
    let _ = writeln!(out, "{}", rule.join("  "));
    for r in rows {
        line(&mut out, r);
    }
    out
}

/// One row per port, eight columns from `value(port, index)`.
fn per_port_rows(
    set: &CounterSet,
    value: impl Fn(u16, u8) -> Option<u64>,
) -> Vec<(String, [Option<u64>; 8])> {
    ports(set)
        .into_iter()
        .map(|p| {
            let mut cells = [None; 8];
            for (i, c) in cells.iter_mut().enumerate() {
                *c = value(p, i as u8);
            }
            (port_name(set, p), cells)
        })
        .collect()
}

fn eight_col_table(first: &str, prefix: &str, rows: &[(String, [Option<u64>; 8])]) -> String {
    let header: Vec<String> = std::iter::once(first.to_string())
        .chain((0..8).map(|i| format!("{prefix}{i}")))
        .collect();
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|(name, cells)| {
            std::iter::once(name.clone())
                .chain(
                    cells
                        .iter()
                        .map(|c| c.map_or_else(|| "N/A".into(), |v| v.to_string())),
                )
                .collect()
        })
        .collect();
    table(&header, &body)
}

fn eight_col_json(prefix: &str, rows: &[(String, [Option<u64>; 8])]) -> Value {
    Value::Object(
        rows.iter()
            .map(|(name, cells)| {
                let obj: Map<String, Value> = cells
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (format!("{prefix}{i}"), json!(c)))
                    .collect();
                (name.clone(), Value::Object(obj))
            })
            .collect(),
    )
}

fn pfc_rows(set: &CounterSet, rx: bool) -> Vec<(String, [Option<u64>; 8])> {
    per_port_rows(set, |p, i| {
        set.priorities
            .iter()
            .find(|c| c.port == p && c.priority == i)
            .map(|c| if rx { c.pfc_rx_frames } else { c.pfc_tx_frames })
    })
}

/// `show pfc counters`: PFC frames received, then sent, per port × priority.
pub fn pfc_table(set: &CounterSet) -> String {
    format!(
        "{}\n{}",
        eight_col_table("Port Rx", "PFC", &pfc_rows(set, true)),
        eight_col_table("Port Tx", "PFC", &pfc_rows(set, false))
    )
}

/// `show pfc counters --json`-like object: `{"rx": {port: {PFC0..}}, "tx": ...}`.
pub fn pfc_json(set: &CounterSet) -> Value {
    json!({
        "rx": eight_col_json("PFC", &pfc_rows(set, true)),
        "tx": eight_col_json("PFC", &pfc_rows(set, false)),
    })
}

/// `show queue counters` (with `show queue wredcounters`' ECN column): per
/// port × unicast queue, the SAI queue stats. Bytes dropped are not kept
/// (`N/A`, as SONiC prints what a platform does not support).
pub fn queue_table(set: &CounterSet) -> String {
    let header: Vec<String> = [
        "Port",
        "TxQ",
        "Counter/pkts",
        "Counter/bytes",
        "Drop/pkts",
        "Drop/bytes",
        "EcnMarked/pkts",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = set
        .queues
        .iter()
        .map(|q| {
            vec![
                port_name(set, q.port),
                format!("UC{}", q.queue),
                q.packets.to_string(),
                q.bytes.to_string(),
                q.dropped_packets.to_string(),
                "N/A".into(),
                q.ecn_marked_packets.to_string(),
            ]
        })
        .collect();
    table(&header, &rows)
}

/// The queue counters as JSON under their SAI names:
/// `{port: {"UC3": {"SAI_QUEUE_STAT_PACKETS": n, ...}}}`.
pub fn queue_json(set: &CounterSet) -> Value {
    let mut out = Map::new();
    for q in &set.queues {
        let port = out
            .entry(port_name(set, q.port))
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(port) = port {
            port.insert(
                format!("UC{}", q.queue),
                json!({
                    "SAI_QUEUE_STAT_PACKETS": q.packets,
                    "SAI_QUEUE_STAT_BYTES": q.bytes,
                    "SAI_QUEUE_STAT_DROPPED_PACKETS": q.dropped_packets,
                    "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": q.ecn_marked_packets,
                    "SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES": q.depth_bytes,
                    "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": q.watermark_bytes,
                }),
            );
        }
    }
    Value::Object(out)
}

fn pg_rows(set: &CounterSet, headroom: bool) -> Vec<(String, [Option<u64>; 8])> {
    per_port_rows(set, |p, i| {
        set.pgs.iter().find(|g| g.port == p && g.pg == i).map(|g| {
            if headroom {
                g.xoff_room_watermark_bytes
            } else {
                g.shared_watermark_bytes
            }
        })
    })
}

fn queue_watermark_rows(set: &CounterSet) -> Vec<(String, [Option<u64>; 8])> {
    per_port_rows(set, |p, i| {
        set.queues
            .iter()
            .find(|q| q.port == p && q.queue == i)
            .map(|q| q.watermark_bytes)
    })
}

/// `show priority-group watermark shared` and `headroom`, then `show queue
/// watermark unicast`, in bytes.
pub fn watermark_table(set: &CounterSet) -> String {
    format!(
        "Ingress shared pool occupancy per PG:\n{}\nIngress headroom per PG:\n{}\nEgress shared pool occupancy per unicast queue:\n{}",
        eight_col_table("Port", "PG", &pg_rows(set, false)),
        eight_col_table("Port", "PG", &pg_rows(set, true)),
        eight_col_table("Port", "UC", &queue_watermark_rows(set)),
    )
}

/// The watermarks as JSON under their SAI names.
pub fn watermark_json(set: &CounterSet) -> Value {
    let mut out = Map::new();
    for g in &set.pgs {
        let port = out
            .entry(port_name(set, g.port))
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(port) = port {
            port.insert(
                format!("PG{}", g.pg),
                json!({
                    "SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES": g.shared_watermark_bytes,
                    "SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES": g.xoff_room_watermark_bytes,
                    "SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_CURR_OCCUPANCY_BYTES": g.shared_bytes,
                    "SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_CURR_OCCUPANCY_BYTES": g.headroom_bytes,
                }),
            );
        }
    }
    for q in &set.queues {
        let port = out
            .entry(port_name(set, q.port))
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(port) = port {
            port.insert(
                format!("UC{}", q.queue),
                json!({ "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": q.watermark_bytes }),
            );
        }
    }
    Value::Object(out)
}

/// `now − base` of a monotonic counter; a counter below its snapshot was
/// reset (daemon restart) and counts from zero.
fn delta(now: u64, base: u64) -> u64 {
    now.checked_sub(base).unwrap_or(now)
}

/// The counters of `now` since the snapshot `base` (`sonic-clear`):
/// monotonic counters are differences, levels and watermarks are `now`'s.
/// Rows are matched by (port, priority | queue); rows `base` lacks are
/// shown whole.
pub fn since(now: &CounterSet, base: &CounterSet) -> CounterSet {
    let mut out = now.clone();
    for c in &mut out.priorities {
        let Some(b) = base
            .priorities
            .iter()
            .find(|b| (b.port, b.priority) == (c.port, c.priority))
        else {
            continue;
        };
        c.rx_packets = delta(c.rx_packets, b.rx_packets);
        c.rx_bytes = delta(c.rx_bytes, b.rx_bytes);
        c.tx_packets = delta(c.tx_packets, b.tx_packets);
        c.tx_bytes = delta(c.tx_bytes, b.tx_bytes);
        c.drops = delta(c.drops, b.drops);
        c.pfc_rx_frames = delta(c.pfc_rx_frames, b.pfc_rx_frames);
        c.pfc_tx_frames = delta(c.pfc_tx_frames, b.pfc_tx_frames);
        c.ecn_marked = delta(c.ecn_marked, b.ecn_marked);
        c.watchdog_storms = delta(c.watchdog_storms, b.watchdog_storms);
        c.kernel_drops = delta(c.kernel_drops, b.kernel_drops);
        c.pause_rx_ns = delta(c.pause_rx_ns, b.pause_rx_ns);
        c.pause_tx_ns = delta(c.pause_tx_ns, b.pause_tx_ns);
        c.pause_rx_transitions = delta(c.pause_rx_transitions, b.pause_rx_transitions);
        c.rx_drop_packets = delta(c.rx_drop_packets, b.rx_drop_packets);
        c.tx_drop_packets = delta(c.tx_drop_packets, b.tx_drop_packets);
    }
    for q in &mut out.queues {
        let Some(b) = base
            .queues
            .iter()
            .find(|b| (b.port, b.queue) == (q.port, q.queue))
        else {
            continue;
        };
        q.packets = delta(q.packets, b.packets);
        q.bytes = delta(q.bytes, b.bytes);
        q.dropped_packets = delta(q.dropped_packets, b.dropped_packets);
        q.ecn_marked_packets = delta(q.ecn_marked_packets, b.ecn_marked_packets);
    }
    for p in &mut out.ports {
        let Some(b) = base.ports.iter().find(|b| b.port == p.port) else {
            continue;
        };
        p.rx_discards_phy = delta(p.rx_discards_phy, b.rx_discards_phy);
        p.tx_discards_phy = delta(p.tx_discards_phy, b.tx_discards_phy);
        p.pause_storm_warning_events =
            delta(p.pause_storm_warning_events, b.pause_storm_warning_events);
        p.pause_storm_error_events = delta(p.pause_storm_error_events, b.pause_storm_error_events);
        p.rx_ecn_mark = delta(p.rx_ecn_mark, b.rx_ecn_mark);
        p.oper_down_events = delta(p.oper_down_events, b.oper_down_events);
        p.oper_up_events = delta(p.oper_up_events, b.oper_up_events);
        let (s, bs) = (&mut p.security_drops, &b.security_drops);
        s.rocev2_source = delta(s.rocev2_source, bs.rocev2_source);
        s.rocev1_source = delta(s.rocev1_source, bs.rocev1_source);
        s.pkey_ingress = delta(s.pkey_ingress, bs.pkey_ingress);
        s.pkey_egress = delta(s.pkey_egress, bs.pkey_egress);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{PgCounters, PriorityCounters, QueueCounters};

    fn sample() -> CounterSet {
        CounterSet {
            priorities: (0..8)
                .map(|p| PriorityCounters {
                    port: 1,
                    priority: p,
                    pfc_rx_frames: 10 + u64::from(p),
                    pause_rx_ns: 2_500_000,
                    queue_depth_bytes: 4096,
                    ..Default::default()
                })
                .collect(),
            queues: vec![QueueCounters {
                port: 1,
                queue: 3,
                packets: 7,
                watermark_bytes: 9000,
                ..Default::default()
            }],
            pgs: vec![PgCounters {
                port: 1,
                pg: 3,
                xoff_room_watermark_bytes: 1234,
                ..Default::default()
            }],
            ports: vec![PortCounters {
                port: 1,
                name: "swp2".into(),
                rx_ecn_mark: 5,
                ..Default::default()
            }],
        }
    }

    #[test]
    fn ethtool_has_every_dcb_name_for_every_priority() {
        let set = sample();
        let stats = ethtool_stats(&set, find_port(&set, "swp2").unwrap());
        let names: Vec<&str> = stats.iter().map(|(n, _)| n.as_str()).collect();
        for n in 0..8 {
            for suffix in [
                "pause",
                "pause_duration",
                "pause_transition",
                "packets",
                "bytes",
            ] {
                assert!(names.contains(&format!("rx_prio{n}_{suffix}").as_str()));
            }
            for suffix in ["pause", "pause_duration", "packets", "bytes"] {
                assert!(names.contains(&format!("tx_prio{n}_{suffix}").as_str()));
            }
        }
        for n in [
            "rx_discards_phy",
            "tx_discards_phy",
            "tx_pause_storm_warning_events",
            "tx_pause_storm_error_events",
            "rx_ecn_mark",
        ] {
            assert!(names.contains(&n), "{n}");
        }
        let text = ethtool_text(&stats);
        assert!(text.starts_with("NIC statistics:\n"));
        assert!(text.contains("\n     rx_prio3_pause: 13\n"), "{text}");
        // ns on the wire, µs as mlx5 prints.
        assert!(
            text.contains("\n     rx_prio3_pause_duration: 2500\n"),
            "{text}"
        );
        assert!(text.contains("\n     rx_ecn_mark: 5\n"), "{text}");
    }

    #[test]
    fn sonic_tables_name_ports_and_columns_as_sonic_does() {
        let set = sample();
        let pfc = pfc_table(&set);
        assert!(pfc.contains("Port Rx"), "{pfc}");
        assert!(pfc.contains("PFC7"), "{pfc}");
        assert!(
            pfc.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["swp2", "10", "11", "12", "13", "14", "15", "16", "17"]),
            "{pfc}"
        );
        let q = queue_table(&set);
        assert!(q.contains("Counter/pkts") && q.contains("UC3"), "{q}");
        let w = watermark_table(&set);
        assert!(w.contains("Ingress headroom per PG:"), "{w}");
        assert!(
            w.lines()
                .any(|l| l.split_whitespace().nth(4) == Some("1234")),
            "{w}"
        );
        let j = watermark_json(&set);
        assert_eq!(
            j["swp2"]["PG3"]["SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES"],
            1234
        );
        assert_eq!(queue_json(&set)["swp2"]["UC3"]["SAI_QUEUE_STAT_PACKETS"], 7);
    }

    #[test]
    fn since_subtracts_counters_but_not_levels_or_watermarks() {
        let base = sample();
        let mut now = sample();
        now.priorities[3].pfc_rx_frames += 4;
        now.priorities[3].queue_depth_bytes = 100;
        now.queues[0].packets = 3; // below the snapshot: reset, counts from 0
        now.queues[0].watermark_bytes = 9500;
        let d = since(&now, &base);
        assert_eq!(d.priorities[3].pfc_rx_frames, 4);
        assert_eq!(d.priorities[2].pfc_rx_frames, 0);
        assert_eq!(d.priorities[3].queue_depth_bytes, 100);
        assert_eq!(d.queues[0].packets, 3);
        assert_eq!(d.queues[0].watermark_bytes, 9500);
        assert_eq!(d.ports[0].rx_ecn_mark, 0);
    }
}
