//! A three-namespace line for forwarding benchmarks:
//!
//! ```text
//!  rl-<tag>-src [s0] ==== [m0] rl-<tag>-mid [m1] ==== [d0] rl-<tag>-dst
//! ```
//!
//! IPv6 is off everywhere, links are up and operational before `create`
//! returns, and dropping the [`LineLab`] deletes the namespaces (and with
//! them the veths), also on error paths. The `rl-` prefix is the one every
//! lab cleanup (`rocelab down`, CI) recognises.

use std::time::Duration;

use anyhow::Result;

use super::sys;

/// The three namespaces of a line; deleted on drop.
#[derive(Debug)]
pub struct LineLab {
    ns: Vec<String>,
}

impl Drop for LineLab {
    fn drop(&mut self) {
        for n in &self.ns {
            let _ = sys::ip(&["netns", "del", n]);
        }
    }
}

impl LineLab {
    /// Creates `rl-<tag>-{src,mid,dst}` and the two veth pairs.
    pub fn create(tag: &str) -> Result<LineLab> {
        let mut lab = LineLab { ns: Vec::new() };
        for role in ["src", "mid", "dst"] {
            let n = format!("rl-{tag}-{role}");
            sys::ip(&["netns", "add", &n])?;
            lab.ns.push(n.clone());
            sys::run(
                "ip",
                &[
                    "netns",
                    "exec",
                    &n,
                    "sysctl",
                    "-qw",
                    "net.ipv6.conf.all.disable_ipv6=1",
                    "net.ipv6.conf.default.disable_ipv6=1",
                ],
            )?;
        }
        let (src, mid, dst) = (lab.src(), lab.mid(), lab.dst());
        sys::ip(&[
            "link", "add", "name", "s0", "netns", src, "type", "veth", "peer", "name", "m0",
            "netns", mid,
        ])?;
        sys::ip(&[
            "link", "add", "name", "m1", "netns", mid, "type", "veth", "peer", "name", "d0",
            "netns", dst,
        ])?;
        let links = [(src, "s0"), (mid, "m0"), (mid, "m1"), (dst, "d0")];
        for (n, i) in links {
            sys::ip(&["-n", n, "link", "set", i, "up"])?;
        }
        for (n, i) in links {
            sys::wait_oper_up(n, i, Duration::from_secs(5))?;
        }
        Ok(lab)
    }

    /// The sender's namespace (interface `s0`).
    pub fn src(&self) -> &str {
        &self.ns[0]
    }

    /// The device under test's namespace (interfaces `m0` in, `m1` out).
    pub fn mid(&self) -> &str {
        &self.ns[1]
    }

    /// The receiver's namespace (interface `d0`).
    pub fn dst(&self) -> &str {
        &self.ns[2]
    }
}
