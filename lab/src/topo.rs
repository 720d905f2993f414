//! Lab topology files: the TOML a `rocelab up` reads, and its validation.
//!
//! ```toml
//! name = "pair"                      # lab name: namespaces are rl-<name>-<node>
//!
//! [[switches]]
//! name = "sw1"
//! # Optional; run inside the switch's namespace once links are up.
//! command = ["roceswitch", "--ports", "{ports}"]
//!
//! [[hosts]]
//! name = "h1"
//! mac = "02:00:00:00:01:01"          # set on the host's interface
//! ip = "10.0.0.1"                    # for the agent's frames; never configured in the kernel
//! command = ["roceperf", "server", "--iface", "{iface}", "--mac", "{mac}", "--ip", "{ip}"]
//!
//! [[links]]
//! a = "h1:eth0"                      # node:interface
//! b = "sw1:p1"
//! speed = "10G"                      # recorded, handed to the switch in {ports}
//! ```
//!
//! Placeholders in commands: `{lab}`, `{ns}`, `{node}`; for a host `{iface}`
//! (its first interface), `{mac}`, `{ip}`; for anyone `{ports}` (the node's
//! interfaces as `IF=BPS,IF=BPS`) and `{host.NAME.mac}` / `{host.NAME.ip}`
//! for any host, `{router_mac}` (the MAC a roceswitch routes for, the
//! next hop of a host whose peer is behind a switch). Validation ([`Topology::validate`]) reports every problem
//! it finds at once, structural ones only (names, references, duplicates,
//! addresses, speeds); what only the kernel can judge (e.g. an interface
//! name it refuses) fails during `up`, which then unwinds.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::fabric::QosSpec;
use crate::units::{parse_mac, parse_rate_bps};

/// Prefix of every namespace a lab creates.
pub const NETNS_PREFIX: &str = "rl-";

/// Errors of loading a topology.
#[derive(Debug, thiserror::Error)]
pub enum TopoError {
    /// Not valid TOML for this schema.
    #[error("topology syntax: {0}")]
    Syntax(#[from] toml::de::Error),
    /// Semantically invalid; every problem found, one per line.
    #[error("invalid topology:\n  {}", .0.join("\n  "))]
    Invalid(Vec<String>),
}

/// A whole lab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Lab name (`[a-z0-9-]`, up to 16 characters).
    pub name: String,
    /// Switches.
    #[serde(default)]
    pub switches: Vec<SwitchSpec>,
    /// Hosts.
    #[serde(default)]
    pub hosts: Vec<HostSpec>,
    /// Point-to-point links (veth pairs).
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    /// QoS every switch port gets (lossless priorities, headroom, ECN,
    /// watchdog); see [`crate::fabric`].
    #[serde(default)]
    pub qos: QosSpec,
}

/// A switch node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchSpec {
    /// Node name.
    pub name: String,
    /// Command to run in the switch namespace (argv, placeholders allowed).
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// Run the roceswitch daemon here instead of `command`: its interfaces
    /// `p0..pN` are its ports, and once it is up `rocelab up` programs it
    /// with the topology's `[qos]` and shortest-path routes (see
    /// [`crate::bringup`]) before any host command starts.
    #[serde(default)]
    pub roceswitch: bool,
    /// Routes that replace the shortest paths on this switch (a
    /// `roceswitch`): traffic to host `to` leaves through `via`.
    #[serde(default)]
    pub routes: Vec<RouteSpec>,
}

/// An explicit route on a switch: `{ to = "h2", via = ["p1"] }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    /// Destination host (its /32).
    pub to: String,
    /// Egress ports `pN` (more than one: ECMP over them).
    pub via: Vec<String>,
}

/// A host node (a RoCE host agent's namespace).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// Node name.
    pub name: String,
    /// MAC of the host's interface.
    pub mac: String,
    /// IPv4 address the agent uses (not configured in the kernel).
    pub ip: Ipv4Addr,
    /// A VLAN the host's MAC is bridged in on every `roceswitch` of the
    /// lab (its port toward the host on a shortest path): for RoCE v1,
    /// which has no IP to route on.
    #[serde(default)]
    pub vlan: Option<u16>,
    /// Command to run in the host namespace.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// More commands to run there, each its own process and log
    /// (`<host>-2.log`, ...): e.g. a TCP sink next to a RoCE server.
    #[serde(default)]
    pub extra_commands: Vec<Vec<String>>,
    /// An address for the host's kernel on its interface, routed by the
    /// switches like `ip` (for kernel TCP/UDP next to RoCE). The agent's
    /// `ip` stays off the kernel, which would answer RoCE with ICMP; the
    /// kernel reaches every other address through the switch (a default
    /// route to a static neighbour with the router MAC).
    #[serde(default)]
    pub kernel_ip: Option<Ipv4Addr>,
}

impl HostSpec {
    /// Every command of the host with the name of its log file: `command`
    /// as `<host>`, then `extra_commands` as `<host>-2`, `<host>-3`, ...
    pub fn commands(&self) -> Vec<(String, &Vec<String>)> {
        self.command
            .iter()
            .map(|c| (self.name.clone(), c))
            .chain(
                self.extra_commands
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (format!("{}-{}", self.name, i + 2), c)),
            )
            .collect()
    }
}

/// A link between two `node:interface` endpoints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// First endpoint, `node:iface`.
    pub a: String,
    /// Second endpoint, `node:iface`.
    pub b: String,
    /// Port speed, e.g. `10G` (veth has none: the switch shapes to it).
    #[serde(default = "default_speed")]
    pub speed: String,
    /// MTU for both ends, bytes.
    #[serde(default)]
    pub mtu: Option<u32>,
}

fn default_speed() -> String {
    "10G".to_string()
}

/// One end of a link, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Node name.
    pub node: String,
    /// Interface name.
    pub iface: String,
}

/// Splits `node:iface`.
pub fn parse_endpoint(s: &str) -> Option<Endpoint> {
    let (node, iface) = s.split_once(':')?;
    if node.is_empty() || iface.is_empty() {
        return None;
    }
    Some(Endpoint {
        node: node.to_string(),
        iface: iface.to_string(),
    })
}

fn valid_name(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

impl Topology {
    /// Parses and validates a topology file's text.
    pub fn from_toml(text: &str) -> Result<Self, TopoError> {
        let t: Topology = toml::from_str(text)?;
        t.validate()?;
        Ok(t)
    }

    /// Namespace of `node`.
    pub fn netns(&self, node: &str) -> String {
        format!("{NETNS_PREFIX}{}-{node}", self.name)
    }

    /// All node names, switches first.
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.switches
            .iter()
            .map(|s| s.name.as_str())
            .chain(self.hosts.iter().map(|h| h.name.as_str()))
    }

    /// The host named `name`.
    pub fn host(&self, name: &str) -> Option<&HostSpec> {
        self.hosts.iter().find(|h| h.name == name)
    }

    /// Interfaces of `node` with their speeds in bit/s, in link order.
    pub fn ports_of(&self, node: &str) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for l in &self.links {
            let speed = parse_rate_bps(&l.speed).unwrap_or(0);
            for e in [&l.a, &l.b].into_iter().filter_map(|e| parse_endpoint(e)) {
                if e.node == node {
                    out.push((e.iface, speed));
                }
            }
        }
        out
    }

    /// Checks everything that can be checked without the kernel and
    /// reports every problem.
    pub fn validate(&self) -> Result<(), TopoError> {
        let mut errs = Vec::new();
        if !valid_name(&self.name, 16) {
            errs.push(format!(
                "lab name {:?}: use 1-16 characters a-z, 0-9, '-'",
                self.name
            ));
        }
        let mut names = BTreeSet::new();
        for n in self.nodes() {
            if !valid_name(n, 24) {
                errs.push(format!(
                    "node name {n:?}: use 1-24 characters a-z, 0-9, '-'"
                ));
            }
            if !names.insert(n) {
                errs.push(format!("node {n:?} is defined twice"));
            }
        }
        for s in &self.switches {
            for r in &s.routes {
                if self.host(&r.to).is_none() {
                    errs.push(format!(
                        "switch {}: route to {:?}: no such host",
                        s.name, r.to
                    ));
                }
                if r.via.is_empty() {
                    errs.push(format!(
                        "switch {}: route to {}: via names no port",
                        s.name, r.to
                    ));
                }
            }
            if !s.routes.is_empty() && !s.roceswitch {
                errs.push(format!(
                    "switch {}: routes are for roceswitch = true switches",
                    s.name
                ));
            }
        }
        for s in self
            .switches
            .iter()
            .filter(|s| s.roceswitch && s.command.is_some())
        {
            errs.push(format!(
                "switch {}: give either roceswitch = true or a command, not both",
                s.name
            ));
        }
        let mut macs = BTreeMap::new();
        let mut ips = BTreeMap::new();
        for h in &self.hosts {
            match parse_mac(&h.mac) {
                Ok(m) => {
                    if m[0] & 1 != 0 {
                        errs.push(format!("host {}: MAC {} is multicast", h.name, h.mac));
                    }
                    if let Some(other) = macs.insert(m, &h.name) {
                        errs.push(format!(
                            "host {}: MAC {} also used by {other}",
                            h.name, h.mac
                        ));
                    }
                }
                Err(e) => errs.push(format!("host {}: {e}", h.name)),
            }
            for ip in std::iter::once(h.ip).chain(h.kernel_ip) {
                if let Some(other) = ips.insert(ip, &h.name) {
                    errs.push(format!("host {}: IP {ip} also used by {other}", h.name));
                }
            }
            if h.extra_commands.iter().any(Vec::is_empty) {
                errs.push(format!("host {}: an extra command is empty", h.name));
            }
        }
        let mut used = BTreeSet::new();
        let mut host_links: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, l) in self.links.iter().enumerate() {
            if let Err(e) = parse_rate_bps(&l.speed) {
                errs.push(format!("link {i}: {e}"));
            }
            if l.mtu.is_some_and(|m| !(68..=65535).contains(&m)) {
                errs.push(format!("link {i}: MTU must be 68..=65535"));
            }
            for e in [&l.a, &l.b] {
                let Some(ep) = parse_endpoint(e) else {
                    errs.push(format!("link {i}: endpoint {e:?} is not node:iface"));
                    continue;
                };
                if !names.contains(ep.node.as_str()) {
                    errs.push(format!("link {i}: unknown node {:?}", ep.node));
                }
                if !used.insert((ep.node.clone(), ep.iface.clone())) {
                    errs.push(format!("link {i}: interface {e} is used twice"));
                }
                if let Some(h) = self.hosts.iter().find(|h| h.name == ep.node) {
                    *host_links.entry(h.name.as_str()).or_default() += 1;
                }
            }
        }
        for (h, n) in host_links {
            if n > 1 {
                errs.push(format!(
                    "host {h} has {n} links; a host has one interface (its MAC)"
                ));
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(TopoError::Invalid(errs))
        }
    }

    /// `argv` with placeholders expanded for `node`.
    pub fn expand(&self, node: &str, argv: &[String]) -> Vec<String> {
        let mut vars: Vec<(String, String)> = vec![
            ("{lab}".into(), self.name.clone()),
            ("{ns}".into(), self.netns(node)),
            ("{node}".into(), node.to_string()),
        ];
        let ports = self.ports_of(node);
        vars.push((
            "{ports}".into(),
            ports
                .iter()
                .map(|(i, s)| format!("{i}={s}"))
                .collect::<Vec<_>>()
                .join(","),
        ));
        if let Some(h) = self.host(node) {
            if let Some((iface, _)) = ports.first() {
                vars.push(("{iface}".into(), iface.clone()));
            }
            vars.push(("{mac}".into(), h.mac.clone()));
            vars.push(("{ip}".into(), h.ip.to_string()));
            if let Some(k) = h.kernel_ip {
                vars.push(("{kernel_ip}".into(), k.to_string()));
            }
        }
        vars.push((
            "{router_mac}".into(),
            crate::units::format_mac(&crate::fabric::ROUTER_MAC),
        ));
        for h in &self.hosts {
            vars.push((format!("{{host.{}.mac}}", h.name), h.mac.clone()));
            vars.push((format!("{{host.{}.ip}}", h.name), h.ip.to_string()));
            if let Some(k) = h.kernel_ip {
                vars.push((format!("{{host.{}.kernel_ip}}", h.name), k.to_string()));
            }
        }
        argv.iter()
            .map(|a| {
                let mut s = a.clone();
                for (k, v) in &vars {
                    s = s.replace(k.as_str(), v);
                }
                s
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIR: &str = r#"
        name = "pair"
        [[switches]]
        name = "sw1"
        command = ["roceswitch", "--ports", "{ports}"]
        [[hosts]]
        name = "h1"
        mac = "02:00:00:00:01:01"
        ip = "10.0.0.1"
        command = ["roceperf", "client", "--iface", "{iface}", "--dst-mac", "{host.h2.mac}"]
        [[hosts]]
        name = "h2"
        mac = "02:00:00:00:01:02"
        ip = "10.0.0.2"
        [[links]]
        a = "h1:eth0"
        b = "sw1:p1"
        speed = "25G"
        [[links]]
        a = "h2:eth0"
        b = "sw1:p2"
    "#;

    #[test]
    fn a_valid_file_parses_and_expands_placeholders() {
        let t = Topology::from_toml(PAIR).unwrap();
        assert_eq!(t.netns("h1"), "rl-pair-h1");
        assert_eq!(
            t.expand("sw1", t.switches[0].command.as_ref().unwrap()),
            ["roceswitch", "--ports", "p1=25000000000,p2=10000000000"]
        );
        assert_eq!(
            t.expand("h1", t.hosts[0].command.as_ref().unwrap()),
            [
                "roceperf",
                "client",
                "--iface",
                "eth0",
                "--dst-mac",
                "02:00:00:00:01:02"
            ]
        );
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let bad = r#"
            name = "Bad_Name"
            [[hosts]]
            name = "h1"
            mac = "01:00:00:00:00:01"
            ip = "10.0.0.1"
            [[hosts]]
            name = "h1"
            mac = "nonsense"
            ip = "10.0.0.1"
            [[links]]
            a = "h1:eth0"
            b = "ghost:p1"
            speed = "fast"
        "#;
        let Err(TopoError::Invalid(errs)) = Topology::from_toml(bad) else {
            panic!("accepted")
        };
        let all = errs.join("\n");
        for needle in [
            "lab name",
            "defined twice",
            "multicast",
            "bad MAC",
            "IP 10.0.0.1 also used",
            "unknown node \"ghost\"",
            "bad rate",
        ] {
            assert!(all.contains(needle), "missing {needle:?} in:\n{all}");
        }
    }

    #[test]
    fn the_example_topologies_are_valid() {
        for text in [
            include_str!("../examples/pair.toml"),
            include_str!("../examples/switched.toml"),
        ] {
            let t = Topology::from_toml(text).unwrap();
            assert!(!t.links.is_empty());
        }
    }

    #[test]
    fn unknown_keys_are_syntax_errors() {
        let e = Topology::from_toml("name = \"x\"\nswitchez = []\n").unwrap_err();
        assert!(matches!(e, TopoError::Syntax(_)), "{e}");
    }
}
