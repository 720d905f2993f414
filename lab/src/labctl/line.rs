//! A three-namespace line for forwarding benchmarks:
//!
//! ```text
//!  rl-<tag>-src [s0] ==== [m0] rl-<tag>-mid [m1] ==== [d0] rl-<tag>-dst
//! ```
//!
//! or, with [`LineLab::create_pairs`], `n` such lines side by side through
//! the same three namespaces: pair `k` is `s<k>` ═ `m<2k>`, `m<2k+1>` ═
//! `d<k>`, so a device in `mid` has `2n` ports.
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
    pairs: usize,
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
        LineLab::create_pairs(tag, 1)
    }

    /// Creates `rl-<tag>-{src,mid,dst}` and `pairs` lines through them
    /// (`2 * pairs` veth pairs).
    pub fn create_pairs(tag: &str, pairs: usize) -> Result<LineLab> {
        let mut lab = LineLab {
            ns: Vec::new(),
            pairs,
        };
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
        let mut links = Vec::new();
        for k in 0..pairs {
            let (s, m_in, m_out, d) = (
                format!("s{k}"),
                format!("m{}", 2 * k),
                format!("m{}", 2 * k + 1),
                format!("d{k}"),
            );
            sys::ip(&[
                "link", "add", "name", &s, "netns", src, "type", "veth", "peer", "name", &m_in,
                "netns", mid,
            ])?;
            sys::ip(&[
                "link", "add", "name", &m_out, "netns", mid, "type", "veth", "peer", "name", &d,
                "netns", dst,
            ])?;
            links.extend([(src, s), (mid, m_in), (mid, m_out), (dst, d)]);
        }
        for (n, i) in &links {
            sys::ip(&["-n", n, "link", "set", i, "up"])?;
        }
        for (n, i) in &links {
            sys::wait_oper_up(n, i, Duration::from_secs(5))?;
        }
        Ok(lab)
    }

    /// Lines through the namespaces.
    pub fn pairs(&self) -> usize {
        self.pairs
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
