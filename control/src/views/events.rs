//! Fabric events (`rocectl fabric events`, `rocectl watch`): one line a
//! person reads, or one JSON object a script reads.

use proto::roceswitch::fabric::v1 as pb;

/// `12:03:45.123 watchdog storm: port 4 priority 3` (UTC time of day).
pub fn event_line(ev: &pb::Event) -> String {
    use pb::event::Kind;
    let what = match &ev.kind {
        Some(Kind::ConfigApplied(c)) => {
            format!(
                "config applied: {} (generation {})",
                c.section, c.generation
            )
        }
        Some(Kind::Storm(s)) => format!(
            "watchdog storm: port {} priority {} (paused past the detection time)",
            s.port, s.priority
        ),
        Some(Kind::Restore(r)) => {
            format!("watchdog restored: port {} priority {}", r.port, r.priority)
        }
        Some(Kind::DcbxMismatch(d)) if d.mismatch == "none" => {
            format!("dcbx: port {} agrees with its neighbour again", d.port)
        }
        Some(Kind::DcbxMismatch(d)) => {
            format!("dcbx mismatch: port {} differs in {}", d.port, d.mismatch)
        }
        Some(Kind::PauseChange(c)) => {
            let what = match (pb::PauseKind::try_from(c.kind), c.active) {
                (Ok(pb::PauseKind::EgressPaused), true) => "paused by its peer",
                (Ok(pb::PauseKind::EgressPaused), false) => "resumed",
                (Ok(pb::PauseKind::IngressXoff), true) => "XOFF sent (ingress full)",
                (Ok(pb::PauseKind::IngressXoff), false) => "XON sent",
                _ => "pause state of an unknown kind",
            };
            format!("pfc: port {} priority {}: {what}", c.port, c.priority)
        }
        Some(Kind::PortOper(o)) => port_oper_sentence(o),
        None => "event of a kind this rocectl does not know".into(),
    };
    let ms_of_day = (ev.timestamp_ns / 1_000_000) % 86_400_000;
    format!(
        "{:02}:{:02}:{:02}.{:03} {what}",
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000
    )
}

/// `port 2 (veth2) down: interface gone` / `port 2 (veth2) up`.
fn port_oper_sentence(o: &pb::PortOper) -> String {
    let port = if o.name.is_empty() {
        format!("port {}", o.port)
    } else {
        format!("port {} ({})", o.port, o.name)
    };
    match (o.up, o.cause.is_empty()) {
        (true, _) => format!("{port} up"),
        (false, true) => format!("{port} down"),
        (false, false) => format!("{port} down: {}", o.cause),
    }
}

/// The event as one JSON object: `timestamp_ns`, `kind` and the kind's fields.
pub fn event_json(ev: &pb::Event) -> serde_json::Value {
    use pb::event::Kind;
    let (kind, fields) = match &ev.kind {
        Some(Kind::ConfigApplied(c)) => (
            "config_applied",
            serde_json::json!({"generation": c.generation, "section": c.section}),
        ),
        Some(Kind::Storm(s)) => (
            "watchdog_storm",
            serde_json::json!({"port": s.port, "priority": s.priority}),
        ),
        Some(Kind::Restore(r)) => (
            "watchdog_restore",
            serde_json::json!({"port": r.port, "priority": r.priority}),
        ),
        Some(Kind::DcbxMismatch(d)) => (
            "dcbx_mismatch",
            serde_json::json!({"port": d.port, "mismatch": d.mismatch}),
        ),
        Some(Kind::PauseChange(c)) => (
            "pause_change",
            serde_json::json!({
                "port": c.port,
                "priority": c.priority,
                "pause_kind": match pb::PauseKind::try_from(c.kind) {
                    Ok(pb::PauseKind::EgressPaused) => "egress_paused",
                    Ok(pb::PauseKind::IngressXoff) => "ingress_xoff",
                    _ => "unknown",
                },
                "active": c.active,
            }),
        ),
        Some(Kind::PortOper(o)) => (
            "port_oper",
            serde_json::json!({"port": o.port, "name": o.name, "up": o.up, "cause": o.cause}),
        ),
        None => ("unknown", serde_json::json!({})),
    };
    let mut v = serde_json::json!({"timestamp_ns": ev.timestamp_ns, "kind": kind});
    if let (Some(obj), serde_json::Value::Object(extra)) = (v.as_object_mut(), fields) {
        obj.extend(extra);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_storm_reads_as_utc_time_of_day_and_as_flat_json() {
        // 1 day + 12:03:45.123 after the epoch.
        let ts = (86_400_000 + 12 * 3_600_000 + 3 * 60_000 + 45_000 + 123) * 1_000_000;
        let ev = pb::Event {
            timestamp_ns: ts,
            kind: Some(pb::event::Kind::Storm(pb::WatchdogStorm {
                port: 4,
                priority: 3,
            })),
        };
        assert_eq!(
            event_line(&ev),
            "12:03:45.123 watchdog storm: port 4 priority 3 (paused past the detection time)"
        );
        let j = event_json(&ev);
        assert_eq!(j["kind"], "watchdog_storm");
        assert_eq!(j["port"], 4);
        assert_eq!(j["timestamp_ns"], ts);
    }
}
