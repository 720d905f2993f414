//! `rocectl security`: the RoCE security section (per-port source
//! allowlists and P_Key partitions, README "RoCE security") with each
//! port's drops by reason, and the edits `allow add|del` / `pkey add|del`
//! make to it before the fabric service validates and applies the whole.
//!
//! Contract: pure functions; an edit that names nothing to delete, or adds
//! what is there, is refused with a sentence; everything else (bad
//! prefixes, partitions out of range, unknown ports) is the fabric
//! service's validation, which names the field.

use std::fmt::Write as _;

use dataplane::fabric::security::{
    AllowedSource, Membership, Partition, PortSecurity, RoceSource, SecurityConfig,
};
use serde_json::{Value, json};

use crate::fabric::backend::SecurityDrops;

/// A partition as `0x0010 full`.
fn partition(p: &Partition) -> String {
    let m = match p.membership {
        Membership::Full => "full",
        Membership::Limited => "limited",
    };
    format!("{:#06x} {m}", p.key)
}

/// An allowlist entry as `10.0.0.0/24` or `10.0.0.0/24 vlan 100`.
fn source(a: &AllowedSource) -> String {
    match a.vlan {
        Some(v) => format!("{} vlan {v}", a.source),
        None => a.source.clone(),
    }
}

/// Ports with settings or drops, ascending.
fn ports(cfg: &SecurityConfig, drops: &[(u16, SecurityDrops)]) -> Vec<u16> {
    let mut v: Vec<u16> = cfg
        .ports
        .iter()
        .filter(|p| !p.allow.is_empty() || !p.partitions.is_empty())
        .map(|p| p.port)
        .chain(drops.iter().filter(|(_, d)| d.total() > 0).map(|(p, _)| *p))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Port `port`'s section (if configured) and drops (zero if none).
fn of_port<'a>(
    cfg: &'a SecurityConfig,
    drops: &[(u16, SecurityDrops)],
    port: u16,
) -> (Option<&'a PortSecurity>, SecurityDrops) {
    let p = cfg.ports.iter().find(|p| p.port == port);
    let d = drops
        .iter()
        .find(|(n, _)| *n == port)
        .map(|(_, d)| *d)
        .unwrap_or_default();
    (p, d)
}

/// `items` joined by commas, or `none` when there are none.
fn list_or(items: Vec<String>, none: &str) -> String {
    if items.is_empty() {
        none.to_string()
    } else {
        items.join(", ")
    }
}

/// One block per port: what it admits, its partitions, its drops by
/// reason. Ports neither configured nor dropping anything are left out.
pub fn table(cfg: &SecurityConfig, drops: &[(u16, SecurityDrops)]) -> String {
    let shown = ports(cfg, drops);
    if shown.is_empty() {
        return "no port filters RoCE (no allowlists, no partitions)\n".into();
    }
    let mut out = String::new();
    for port in shown {
        let (p, d) = of_port(cfg, drops, port);
        let _ = writeln!(out, "port {port}");
        let allow: Vec<String> = p.map_or_else(Vec::new, |p| p.allow.iter().map(source).collect());
        let _ = writeln!(out, "  allow       {}", list_or(allow, "(not filtered)"));
        let parts: Vec<String> =
            p.map_or_else(Vec::new, |p| p.partitions.iter().map(partition).collect());
        let _ = writeln!(
            out,
            "  partitions  {}",
            list_or(parts, "(P_Keys not checked)")
        );
        let by: Vec<String> = d
            .by_reason()
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        let _ = writeln!(out, "  drops       {}", by.join(", "));
    }
    out
}

/// The same as JSON: `[{port, allow: [{source, vlan}], partitions: [{key,
/// membership}], drops: {reason: n}}]`.
pub fn to_json(cfg: &SecurityConfig, drops: &[(u16, SecurityDrops)]) -> Value {
    let rows: Vec<Value> = ports(cfg, drops)
        .into_iter()
        .map(|port| {
            let (p, d) = of_port(cfg, drops, port);
            json!({
                "port": port,
                "allow": p.map_or_else(Vec::new, |p| p.allow.iter().map(|a| json!({
                    "source": a.source,
                    "vlan": a.vlan,
                })).collect()),
                "partitions": p.map_or_else(Vec::new, |p| p.partitions.iter().map(|k| json!({
                    "key": format!("{:#06x}", k.key),
                    "membership": match k.membership {
                        Membership::Full => "full",
                        Membership::Limited => "limited",
                    },
                })).collect()),
                "drops": d.by_reason().iter().map(|(r, n)| ((*r).to_string(), json!(n)))
                    .collect::<serde_json::Map<_, _>>(),
            })
        })
        .collect();
    Value::Array(rows)
}

fn port_mut(cfg: &mut SecurityConfig, port: u16) -> &mut PortSecurity {
    if let Some(i) = cfg.ports.iter().position(|p| p.port == port) {
        return &mut cfg.ports[i];
    }
    cfg.ports.push(PortSecurity {
        port,
        ..PortSecurity::default()
    });
    cfg.ports.sort_by_key(|p| p.port);
    let i = cfg.ports.iter().position(|p| p.port == port);
    &mut cfg.ports[i.unwrap_or_default()]
}

/// Drops ports left with nothing configured.
fn prune(cfg: &mut SecurityConfig) {
    cfg.ports
        .retain(|p| !p.allow.is_empty() || !p.partitions.is_empty());
}

/// Whether two entries name the same source (as parsed: `10.0.0.1` and
/// `10.0.0.1/32` are one) in the same VLAN.
fn same(a: &AllowedSource, source: &RoceSource, vlan: Option<u32>) -> bool {
    a.vlan == vlan && a.source.parse::<RoceSource>().as_ref() == Ok(source)
}

/// `allow add`: admits RoCE from `source` on `port` (in `vlan` only, if
/// given). The first entry turns filtering on for the port.
pub fn allow_add(
    cfg: &mut SecurityConfig,
    port: u16,
    source: &str,
    vlan: Option<u32>,
) -> Result<(), String> {
    let parsed: RoceSource = source.parse()?;
    let p = port_mut(cfg, port);
    if p.allow.iter().any(|a| same(a, &parsed, vlan)) {
        return Err(format!("port {port} already allows {parsed}"));
    }
    p.allow.push(AllowedSource {
        source: parsed.to_string(),
        vlan,
    });
    Ok(())
}

/// `allow del`: removes an entry; the last one turns filtering off.
pub fn allow_del(
    cfg: &mut SecurityConfig,
    port: u16,
    source: &str,
    vlan: Option<u32>,
) -> Result<(), String> {
    let parsed: RoceSource = source.parse()?;
    let p = port_mut(cfg, port);
    let before = p.allow.len();
    p.allow.retain(|a| !same(a, &parsed, vlan));
    let removed = p.allow.len() < before;
    prune(cfg);
    if removed {
        Ok(())
    } else {
        Err(format!("port {port} has no allow entry {parsed}"))
    }
}

/// A partition as the command line gives it: `0x0010`, `16`, or a whole
/// P_Key `0x8010` (the top bit is the membership, ignored here).
pub fn parse_partition(text: &str) -> Result<u32, String> {
    let t = text.trim();
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16),
        None => t.parse(),
    }
    .map_err(|_| format!("`{text}` is not a partition key"))?;
    if v > 0xffff {
        return Err(format!("`{text}` is wider than a 16-bit P_Key"));
    }
    Ok(v & 0x7fff)
}

/// `pkey add`: makes `port` a member of partition `key`.
pub fn pkey_add(
    cfg: &mut SecurityConfig,
    port: u16,
    key: u32,
    membership: Membership,
) -> Result<(), String> {
    let p = port_mut(cfg, port);
    if let Some(k) = p.partitions.iter_mut().find(|k| k.key == key) {
        if k.membership == membership {
            return Err(format!(
                "port {port} is already in partition {}",
                partition(k)
            ));
        }
        k.membership = membership;
        return Ok(());
    }
    p.partitions.push(Partition { key, membership });
    Ok(())
}

/// `pkey del`: takes `port` out of partition `key`; the last one turns
/// P_Key checks off on the port.
pub fn pkey_del(cfg: &mut SecurityConfig, port: u16, key: u32) -> Result<(), String> {
    let p = port_mut(cfg, port);
    let before = p.partitions.len();
    p.partitions.retain(|k| k.key != key);
    let removed = p.partitions.len() < before;
    prune(cfg);
    if removed {
        Ok(())
    } else {
        Err(format!("port {port} is not in partition {key:#06x}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_add_and_remove_and_refuse_what_is_not_there() {
        let mut c = SecurityConfig::default();
        allow_add(&mut c, 2, "10.0.0.1", None).unwrap();
        allow_add(&mut c, 2, "10.0.1.0/24", Some(100)).unwrap();
        assert!(
            allow_add(&mut c, 2, "10.0.0.1/32", None).is_err(),
            "same host"
        );
        allow_add(&mut c, 1, "02:00:00:00:0a:01", None).unwrap();
        pkey_add(&mut c, 1, 0x10, Membership::Limited).unwrap();
        assert_eq!(c.ports.iter().map(|p| p.port).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(c.ports[1].allow[0].source, "10.0.0.1/32");
        assert!(c.validate().is_empty());

        pkey_add(&mut c, 1, 0x10, Membership::Full).unwrap();
        assert_eq!(c.ports[0].partitions[0].membership, Membership::Full);
        assert!(pkey_add(&mut c, 1, 0x10, Membership::Full).is_err());

        assert!(
            allow_del(&mut c, 2, "10.0.1.0/24", None).is_err(),
            "VLAN 100 only"
        );
        allow_del(&mut c, 2, "10.0.1.0/24", Some(100)).unwrap();
        allow_del(&mut c, 2, "10.0.0.1", None).unwrap();
        assert_eq!(c.ports.len(), 1, "port 2 has nothing left");
        assert!(pkey_del(&mut c, 1, 0x20).is_err());
        pkey_del(&mut c, 1, 0x10).unwrap();
        allow_del(&mut c, 1, "02:00:00:00:0a:01", None).unwrap();
        assert!(c.ports.is_empty() && c.is_off());
    }

    #[test]
    fn partitions_parse_in_hex_or_decimal_without_the_membership_bit() {
        assert_eq!(parse_partition("0x0010"), Ok(0x10));
        assert_eq!(parse_partition("0xffff"), Ok(0x7fff));
        assert_eq!(parse_partition("16"), Ok(16));
        assert!(parse_partition("0x10000").is_err());
        assert!(parse_partition("full").is_err());
    }

    #[test]
    fn the_table_shows_settings_and_drops_per_port() {
        let mut c = SecurityConfig::default();
        allow_add(&mut c, 0, "10.0.0.0/24", Some(7)).unwrap();
        pkey_add(&mut c, 3, 0x7fff, Membership::Full).unwrap();
        let drops = [(
            5,
            SecurityDrops {
                pkey_egress: 4,
                ..Default::default()
            },
        )];
        let t = table(&c, &drops);
        assert!(
            t.contains("port 0\n  allow       10.0.0.0/24 vlan 7\n"),
            "{t}"
        );
        assert!(
            t.contains("port 3\n  allow       (not filtered)\n  partitions  0x7fff full\n"),
            "{t}"
        );
        assert!(t.contains("port 5\n"), "a port that drops is shown: {t}");
        assert!(t.contains("pkey_egress 4"), "{t}");
        let j = to_json(&c, &drops);
        assert_eq!(j[2]["drops"]["pkey_egress"], 4);
        assert_eq!(j[1]["partitions"][0]["membership"], "full");
        assert_eq!(
            table(&SecurityConfig::default(), &[]),
            "no port filters RoCE (no allowlists, no partitions)\n"
        );
    }
}
