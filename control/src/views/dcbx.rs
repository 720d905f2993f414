//! DCBX per port: the local PFC/APP settings beside the neighbour's.

use proto::roceswitch::fabric::v1 as pb;

/// A PFC enable bitmap as the priorities it enables (`3,4`, or `-`).
fn prio_list(bitmap: u32) -> String {
    let v: Vec<String> = (0..8)
        .filter(|p| bitmap & (1 << p) != 0)
        .map(|p| p.to_string())
        .collect();
    if v.is_empty() {
        "-".into()
    } else {
        v.join(",")
    }
}

fn opt_prio(p: Option<u32>) -> String {
    p.map_or("-".into(), |p| p.to_string())
}

/// `rocectl fabric dcbx`: each port's own PFC/RoCE priority against what
/// its neighbour announces (as `lldptool -t -V PFC` and `-V APP` show them).
pub fn dcbx_table(ports: &[pb::DcbxPortStatus]) -> String {
    let mut out = format!(
        "{:>4}  {:<9} {:<8}  {:<24} {:<10} {:>7}  {:<9} {:<8}  {}\n",
        "port", "pfc", "roce", "neighbor", "its port", "willing", "its pfc", "its roce", "mismatch"
    );
    for p in ports {
        let (name, willing, pfc, roce) = if p.has_neighbor {
            let name = if p.neighbor_system_name.is_empty() {
                p.neighbor_chassis.clone()
            } else {
                p.neighbor_system_name.clone()
            };
            (
                name,
                if p.neighbor_willing { "yes" } else { "no" },
                p.neighbor_pfc_enable.map_or("-".into(), prio_list),
                opt_prio(p.neighbor_roce_priority),
            )
        } else {
            ("(none)".into(), "-", "-".into(), "-".into())
        };
        out += &format!(
            "{:>4}  {:<9} {:<8}  {:<24} {:<10} {:>7}  {:<9} {:<8}  {}\n",
            p.port,
            prio_list(p.local_pfc_enable),
            opt_prio(p.local_roce_priority),
            name,
            if p.has_neighbor {
                p.neighbor_port.as_str()
            } else {
                "-"
            },
            willing,
            pfc,
            roce,
            if p.mismatch == "none" {
                "ok"
            } else {
                p.mismatch.as_str()
            },
        );
    }
    out
}

/// One port of `rocectl fabric dcbx --json`.
pub fn dcbx_json(p: &pb::DcbxPortStatus) -> serde_json::Value {
    serde_json::json!({
        "port": p.port,
        "local": {
            "pfc_enable": prio_list(p.local_pfc_enable),
            "roce_priority": p.local_roce_priority,
            "prio_tc": p.local_prio_tc,
        },
        "neighbor": p.has_neighbor.then(|| serde_json::json!({
            "chassis": p.neighbor_chassis,
            "port": p.neighbor_port,
            "system_name": p.neighbor_system_name,
            "willing": p.neighbor_willing,
            "pfc_enable": p.neighbor_pfc_enable.map(prio_list),
            "roce_priority": p.neighbor_roce_priority,
            "prio_tc": p.neighbor_prio_tc,
        })),
        "mismatch": p.mismatch,
        "tx_frames": p.tx_frames,
        "rx_frames": p.rx_frames,
        "rx_discarded": p.rx_discarded,
        "ageouts": p.ageouts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_the_neighbour_and_what_differs() {
        let ports = vec![
            pb::DcbxPortStatus {
                port: 1,
                local_pfc_enable: 1 << 3,
                local_roce_priority: Some(3),
                has_neighbor: true,
                neighbor_chassis: "02:00:00:00:00:02".into(),
                neighbor_port: "02:00:00:00:00:02".into(),
                neighbor_pfc_enable: Some(1 << 4),
                neighbor_roce_priority: Some(4),
                mismatch: "pfc,app".into(),
                ..Default::default()
            },
            pb::DcbxPortStatus {
                port: 2,
                local_pfc_enable: 1 << 3,
                local_roce_priority: Some(3),
                mismatch: "none".into(),
                ..Default::default()
            },
        ];
        let t = dcbx_table(&ports);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        let one: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(one[0..3], ["1", "3", "3"]);
        assert!(one.contains(&"4") && one.ends_with(&["pfc,app"]));
        assert!(lines[2].contains("(none)") && lines[2].ends_with("ok"));
        let j = dcbx_json(&ports[0]);
        assert_eq!(j["neighbor"]["pfc_enable"], "4");
        assert_eq!(j["mismatch"], "pfc,app");
    }
}
