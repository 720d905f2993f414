//! Packet traces (issue #16) of `roce_switch.p4` in the switch core with a
//! real traffic manager (PFC on priority 3): a RoCE WRITE routed and
//! ECN-marked, a packet the ACL drops, a packet held by a received PFC
//! pause, and the JSON form checked field by field against `docs/trace.md`.

use dataplane::roce::{self, PROGRAM_INFO, Program};
use dataplane::switch::{Switch, SwitchConfig, TraceRequest};
use dataplane::time::Instant;
use dataplane::wire::pfc::{MacControlRepr, PfcRepr};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeApi, TableEntry};
use p4_target::trace::{Event, PacketTrace, Stage};

const ROUTER_MAC: u128 = 0x02_00_00_00_00_02;

/// RC RDMA WRITE Only over IPv4 (DSCP 26, ECT(0)), 198.51.100.1 → .2,
/// sport 0xc000, dQP 0x123, PSN 16, RETH, 32-byte payload (scapy).
const ROCE_WRITE: &str = "0200000000020200000000010800456a005c000140004011e5bbc6336401c6336402\
c00012b7004800000a00ffff000001238000001000007f00000010001234abcd00000020\
000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f907bd975";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn table_id(name: &str) -> u32 {
    PROGRAM_INFO.table_by_name(name).unwrap().id
}

fn action(name: &str, params: &[u128]) -> ActionCall {
    ActionCall::new(PROGRAM_INFO.action_by_name(name).unwrap().id, params)
}

fn insert(
    sw: &mut Switch<Program>,
    table: &str,
    matches: Vec<Option<FieldMatch>>,
    priority: i32,
    a: EntryAction,
) {
    sw.pipeline_mut()
        .runtime_mut()
        .table_insert(
            table_id(table),
            TableEntry {
                matches,
                priority,
                action: a,
                metadata: Vec::new(),
            },
        )
        .unwrap();
}

/// Four ports with the default traffic manager (priority 3 lossless),
/// 198.51.100.0/24 routed to port 2, RED on (port 2, priority 3) with
/// Kmin 0 and Kmax 1 byte, so any packet left behind means a mark.
fn switch() -> Switch<Program> {
    let mut sw = Switch::new(Program::new(), SwitchConfig::with_ports(4), Instant::ZERO).unwrap();
    insert(
        &mut sw,
        "my_station",
        vec![Some(FieldMatch::Exact(ROUTER_MAC))],
        0,
        EntryAction::Direct(action("set_routed", &[])),
    );
    insert(
        &mut sw,
        "ipv4_lpm",
        vec![Some(FieldMatch::Lpm {
            value: 0xc633_6400,
            prefix_len: 24,
        })],
        0,
        EntryAction::Direct(action("set_nexthop_id", &[1])),
    );
    let profile = PROGRAM_INFO.action_profiles[0].id;
    sw.pipeline_mut()
        .runtime_mut()
        .member_write(
            profile,
            1,
            action(
                "set_nexthop",
                &[2, 0x02_aa_00_00_00_01, 0x02_bb_00_00_00_02],
            ),
            false,
        )
        .unwrap();
    insert(
        &mut sw,
        "nexthop",
        vec![Some(FieldMatch::Exact(1))],
        0,
        EntryAction::Member(1),
    );
    insert(
        &mut sw,
        "ecn_red",
        vec![Some(FieldMatch::Exact(2)), Some(FieldMatch::Exact(3))],
        0,
        EntryAction::Direct(action("set_red", &[0, 1, 65535])),
    );
    sw
}

fn every_packet() -> TraceRequest {
    TraceRequest {
        sample_one_in: 1,
        ..Default::default()
    }
}

/// Lets every port send until nothing is left, from `at` in 1 µs steps.
fn drain_from(sw: &mut Switch<Program>, at: Instant) -> Vec<(u16, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for step in 0..1000 {
        let now = Instant::from_nanos(at.as_nanos() + step * 1000);
        sw.handle_timeout(now);
        for port in 0..4 {
            while sw.poll_transmit(port, now, &mut buf).is_some() {
                out.push((port, buf.clone()));
            }
        }
    }
    out
}

fn traces(sw: &mut Switch<Program>) -> Vec<PacketTrace> {
    std::iter::from_fn(|| sw.poll_trace()).collect()
}

fn tables(t: &PacketTrace) -> Vec<(String, String)> {
    t.events
        .iter()
        .filter_map(|e| match e {
            Event::Table { table, action, .. } => Some((short(table), short(action))),
            _ => None,
        })
        .collect()
}

fn short(name: &str) -> String {
    name.rsplit('.').next().unwrap().to_string()
}

#[test]
fn roce_write_trace_lists_parser_tables_tm_and_ecn() {
    let mut sw = switch();
    sw.handle_trace_request(Some(TraceRequest {
        filter: Some(
            "udp.dst_port == 4791 && bth.opcode == 0x0a"
                .parse()
                .unwrap(),
        ),
        ..every_packet()
    }));
    let frame = hex(ROCE_WRITE);
    // Three arrive back to back: the first leaves two behind it (RED marks).
    for _ in 0..3 {
        sw.handle_frame(1, &frame, Instant::ZERO);
    }
    let out = drain_from(&mut sw, Instant::ZERO);
    assert_eq!(out.len(), 3);
    let all = traces(&mut sw);
    assert_eq!(all.len(), 3, "one trace per packet");
    let t = &all[0];
    print!("{t}");

    let states: Vec<&str> = t
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ParserState { state, .. } => Some(state.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        states,
        [
            "start",
            "parse_ethernet",
            "parse_ipv4",
            "parse_ipv4_l4",
            "parse_udp",
            "parse_bth",
            "parse_reth"
        ]
    );
    let udp = t.events.iter().find_map(|e| match e {
        Event::Extract { header, fields } if header == "hdr.udp" => Some(fields.clone()),
        _ => None,
    });
    let udp = udp.expect("udp extracted");
    assert!(
        udp.iter()
            .any(|f| f.name == "dst_port" && f.value.0 == 4791)
    );

    let applied = tables(t);
    let names: Vec<&str> = applied.iter().map(|(t, _)| t.as_str()).collect();
    for expected in ["my_station", "ipv4_lpm", "nexthop", "acl", "ecn_red"] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    let pos = |n: &str| names.iter().position(|x| *x == n).unwrap();
    assert!(pos("my_station") < pos("ipv4_lpm") && pos("ipv4_lpm") < pos("nexthop"));
    assert!(pos("nexthop") < pos("ecn_red"), "egress after ingress");
    assert!(applied.contains(&("nexthop".into(), "set_nexthop".into())));
    let lpm = t.events.iter().find_map(|e| match e {
        Event::Table {
            table,
            hit,
            entry,
            params,
            ..
        } if table.ends_with("ipv4_lpm") => Some((*hit, entry.clone(), params.clone())),
        _ => None,
    });
    let (hit, entry, params) = lpm.unwrap();
    assert!(hit);
    assert_eq!(entry.unwrap().matches, ["0xc6336400/24"]);
    assert_eq!(params[0].value.0, 1);

    let enq = t.events.iter().find_map(|e| match e {
        Event::Enqueue {
            pg,
            queue,
            priority,
            lossless,
            egress_port,
            queue_depth_bytes,
            ..
        } => Some((
            *pg,
            *queue,
            *priority,
            *lossless,
            *egress_port,
            *queue_depth_bytes,
        )),
        _ => None,
    });
    let (pg, queue, priority, lossless, egress_port, depth) = enq.expect("enqueue event");
    assert_eq!((priority, egress_port, depth), (3, 2, 0));
    assert!(lossless);
    let cfg = &sw.tm().config().ports[1];
    assert_eq!(pg, cfg.prio_to_pg[3]);
    assert_eq!(queue, sw.tm().config().ports[2].prio_to_queue[3]);

    let ecn = t.events.iter().find_map(|e| match e {
        Event::Ecn {
            depth_bytes,
            kmin_bytes,
            kmax_bytes,
            probability,
            marked,
        } => Some((
            *depth_bytes,
            *kmin_bytes,
            *kmax_bytes,
            *probability,
            *marked,
        )),
        _ => None,
    });
    let (depth, kmin, kmax, p, marked) = ecn.expect("ecn decision");
    assert_eq!(depth, 2 * frame.len() as u64, "two packets left behind");
    assert_eq!((kmin, kmax), (0, 1));
    assert_eq!(p, 1.0);
    assert!(marked);
    // The last packet leaves an empty queue: no mark.
    let last_ecn = all[2].events.iter().find_map(|e| match e {
        Event::Ecn {
            marked,
            depth_bytes,
            ..
        } => Some((*marked, *depth_bytes)),
        _ => None,
    });
    assert_eq!(last_ecn, Some((false, 0)));

    let deparse = t.events.iter().find_map(|e| match e {
        Event::Deparse {
            headers, changed, ..
        } => Some((headers.clone(), changed.clone())),
        _ => None,
    });
    let (headers, changed) = deparse.unwrap();
    assert_eq!(
        headers,
        ["hdr.ethernet", "hdr.ipv4", "hdr.udp", "hdr.bth", "hdr.reth"]
    );
    // MACs, ToS (CE), TTL and checksum changed; the payload did not.
    assert!(changed.iter().all(|c| c.offset < 34));
    assert!(
        changed
            .iter()
            .any(|c| c.offset == 22 && c.after == Some(frame[22] - 1))
    );
    assert!(matches!(
        t.events.last(),
        Some(Event::Depart { port: 2, .. })
    ));
}

#[test]
fn acl_drop_trace_names_the_table_and_entry() {
    let mut sw = switch();
    insert(
        &mut sw,
        "acl",
        vec![
            None,
            None,
            None,
            None,
            Some(FieldMatch::Ternary {
                value: 17,
                mask: 0xff,
            }),
            Some(FieldMatch::Range {
                low: 0xc000,
                high: 0xc000,
            }),
            None,
            None,
            None,
        ],
        10,
        EntryAction::Direct(action("acl_deny", &[])),
    );
    sw.handle_trace_request(Some(TraceRequest {
        ingress_port: Some(1),
        ..every_packet()
    }));
    sw.handle_frame(1, &hex(ROCE_WRITE), Instant::ZERO);
    assert!(drain_from(&mut sw, Instant::ZERO).is_empty());
    let all = traces(&mut sw);
    assert_eq!(all.len(), 1);
    let t = &all[0];
    print!("{t}");
    let acl = t.events.iter().find_map(|e| match e {
        Event::Table {
            table,
            hit,
            entry,
            action,
            ..
        } if table.ends_with("acl") => Some((*hit, entry.clone().unwrap(), action.clone())),
        _ => None,
    });
    let (hit, entry, action_name) = acl.expect("acl applied");
    assert!(hit);
    assert_eq!(entry.priority, 10);
    assert_eq!(entry.matches[4], "0x11&&&0xff");
    assert_eq!(entry.matches[5], "0xc000..0xc000");
    assert_eq!(entry.matches[0], "*");
    assert!(action_name.ends_with("acl_deny"));
    assert!(
        t.events
            .iter()
            .any(|e| matches!(e, Event::Extern { call, .. } if call == "mark_to_drop"))
    );
    assert!(matches!(t.events.last(), Some(Event::Drop { reason }) if reason == "ingress_drop"));
    assert!(!t.events.iter().any(|e| matches!(
        e,
        Event::Enqueue { .. }
            | Event::Pass {
                stage: Stage::Egress,
                ..
            }
    )));
}

#[test]
fn trace_while_egress_priority_is_paused_shows_the_pause() {
    let mut sw = switch();
    sw.handle_trace_request(Some(every_packet()));
    let t0 = Instant::from_micros(10);
    // The peer on port 2 pauses priority 3 for the longest time.
    sw.tm_mut()
        .handle_mac_control(2, &MacControlRepr::Pfc(PfcRepr::xoff(1 << 3, 0xffff)), t0);
    sw.handle_frame(1, &hex(ROCE_WRITE), t0);
    let mut buf = Vec::new();
    assert!(sw.poll_transmit(2, t0, &mut buf).is_none(), "paused");
    // XON 25 µs later.
    let t1 = Instant::from_micros(35);
    sw.tm_mut()
        .handle_mac_control(2, &MacControlRepr::Pfc(PfcRepr::xoff(1 << 3, 0)), t1);
    assert_eq!(drain_from(&mut sw, t1).len(), 1);
    let all = traces(&mut sw);
    let t = &all[0];
    print!("{t}");
    assert!(t.events.iter().any(|e| matches!(
        e,
        Event::Enqueue {
            egress_paused: true,
            ..
        }
    )));
    let deq = t.events.iter().find_map(|e| match e {
        Event::Dequeue {
            queued_ns,
            paused_ns,
            ..
        } => Some((*queued_ns, *paused_ns)),
        _ => None,
    });
    assert_eq!(deq, Some((25_000, 25_000)));
    assert!(t.to_string().contains("PAUSED"));
}

#[test]
fn sampling_and_limit_select_packets() {
    let mut sw = switch();
    sw.handle_trace_request(Some(TraceRequest {
        sample_one_in: 2,
        max_packets: Some(2),
        ..Default::default()
    }));
    for _ in 0..8 {
        sw.handle_frame(1, &hex(ROCE_WRITE), Instant::ZERO);
    }
    drain_from(&mut sw, Instant::ZERO);
    let all = traces(&mut sw);
    assert_eq!(all.len(), 2);
    assert!(!sw.tracing(), "the request ends after max_packets");
    // A filter nothing matches traces nothing.
    sw.handle_trace_request(Some(TraceRequest {
        filter: Some("udp.dst_port == 1".parse().unwrap()),
        ..every_packet()
    }));
    sw.handle_frame(1, &hex(ROCE_WRITE), Instant::ZERO);
    drain_from(&mut sw, Instant::ZERO);
    assert!(traces(&mut sw).is_empty());
}

/// The fields `docs/trace.md` documents for each event, from its tables.
fn documented() -> std::collections::BTreeMap<String, Vec<String>> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/trace.md")).unwrap();
    let mut map = std::collections::BTreeMap::new();
    for line in doc.lines() {
        let Some(rest) = line.strip_prefix("| `") else {
            continue;
        };
        let cols: Vec<&str> = rest.split('|').collect();
        let name = cols[0].trim().trim_end_matches('`').to_string();
        let fields = cols[1]
            .split(',')
            .map(|f| f.trim().trim_matches('`').to_string())
            .filter(|f| !f.is_empty() && f != "—")
            .collect();
        map.insert(name, fields);
    }
    map
}

#[test]
fn json_traces_round_trip_and_match_the_documented_schema() {
    let mut sw = switch();
    sw.handle_trace_request(Some(every_packet()));
    let frame = hex(ROCE_WRITE);
    for _ in 0..2 {
        sw.handle_frame(1, &frame, Instant::ZERO);
    }
    drain_from(&mut sw, Instant::ZERO);
    let doc = documented();
    let mut seen = std::collections::BTreeSet::new();
    for t in traces(&mut sw) {
        let line = serde_json::to_string(&t).unwrap();
        assert!(!line.contains('\n'));
        let back: PacketTrace = serde_json::from_str(&line).unwrap();
        assert_eq!(back, t);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        let top: Vec<&String> = v.as_object().unwrap().keys().collect();
        let want = &doc["trace"];
        for k in &top {
            assert!(want.contains(k), "trace field {k} is documented");
        }
        for e in v["events"].as_array().unwrap() {
            let obj = e.as_object().unwrap();
            let kind = obj["event"].as_str().unwrap();
            seen.insert(kind.to_string());
            let want = doc
                .get(kind)
                .unwrap_or_else(|| panic!("event {kind} documented"));
            let mut keys: Vec<&str> = obj
                .keys()
                .map(String::as_str)
                .filter(|k| *k != "event")
                .collect();
            keys.sort();
            let mut documented: Vec<&str> = want.iter().map(String::as_str).collect();
            documented.sort();
            assert_eq!(keys, documented, "fields of {kind}");
        }
    }
    for kind in [
        "arrive",
        "pass",
        "parser_state",
        "extract",
        "table",
        "extern",
        "enqueue",
        "dequeue",
        "ecn",
        "deparse",
        "depart",
    ] {
        assert!(seen.contains(kind), "a real trace has {kind}");
    }
    // A field the schema does not have is refused.
    let bad = r#"{"packet":1,"copy":0,"events":[{"event":"drop","reason":"x","extra":1}]}"#;
    assert!(serde_json::from_str::<PacketTrace>(bad).is_err());
}

#[test]
fn filters_parse_and_refuse_nonsense() {
    use p4_target::trace::FieldFilter;
    assert!(
        "udp.dst_port == 4791 && bth.opcode == 0x0a"
            .parse::<FieldFilter>()
            .is_ok()
    );
    assert!(
        "hdr.ipv4.ttl != 1 || udp.src_port == 0xc000"
            .parse::<FieldFilter>()
            .is_ok()
    );
    assert!("udp.dst_port = 4791".parse::<FieldFilter>().is_err());
    assert!("dst_port == 4791".parse::<FieldFilter>().is_err());
    assert!("udp.dst_port == x".parse::<FieldFilter>().is_err());
    let _ = roce::CPU_PORT;
}
