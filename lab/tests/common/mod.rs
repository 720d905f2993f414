//! Helpers for tests that need root: a skip check that says why, and
//! namespaces/veth pairs that remove themselves (also when a test panics).
#![allow(dead_code)]

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// True if we may create namespaces; otherwise says why the test is
/// skipped (fails under `ROCESWITCH_REQUIRE_ROOT`, as CI runs as root).
pub fn root_or_skip(test: &str) -> bool {
    dataplane::port::netns::namespaces_or_skip(test)
}

/// Runs the `rocelab` binary with its state under `state`.
pub fn rocelab(state: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rocelab"))
        .arg("--state-dir")
        .arg(state)
        .args(args)
        // What a user sees: no backtrace under an error.
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .output()
        .expect("running rocelab")
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A unique short tag for names in this test process.
pub fn unique(prefix: &str) -> String {
    format!(
        "{prefix}{}x{}",
        std::process::id() % 100_000,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("running ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Namespaces that are deleted on drop.
pub struct Netns {
    pub names: Vec<String>,
}

impl Netns {
    /// Creates `n` namespaces named `rl-t<unique>-<i>` with IPv6 off and lo up.
    pub fn create(n: usize) -> Netns {
        let tag = unique("t");
        let mut me = Netns { names: Vec::new() };
        for i in 0..n {
            let name = format!("rl-{tag}-{i}");
            ip(&["netns", "add", &name]);
            me.names.push(name.clone());
            ip(&[
                "netns",
                "exec",
                &name,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ]);
            ip(&["-n", &name, "link", "set", "lo", "up"]);
        }
        me
    }

    /// A veth pair `a_if` in namespace `a` and `b_if` in `b`, both up.
    pub fn veth(&self, a: usize, a_if: &str, a_mac: &str, b: usize, b_if: &str, b_mac: &str) {
        let (na, nb) = (&self.names[a], &self.names[b]);
        ip(&[
            "link", "add", "name", a_if, "netns", na, "address", a_mac, "type", "veth", "peer",
            "name", b_if, "netns", nb, "address", b_mac,
        ]);
        ip(&["-n", na, "link", "set", a_if, "up"]);
        ip(&["-n", nb, "link", "set", b_if, "up"]);
        // Until the link watcher has run, a fresh veth drops what is sent.
        for (n, i) in [(na, a_if), (nb, b_if)] {
            lab::labctl::sys::wait_oper_up(n, i, std::time::Duration::from_secs(5)).unwrap();
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

/// Namespaces whose name starts with `prefix`.
pub fn netns_with_prefix(prefix: &str) -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(prefix))
        .map(str::to_string)
        .collect()
}

/// True if `pid` exists and is not a zombie.
pub fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rfind(')')
            .and_then(|i| s[i + 2..].split_whitespace().next())
            .is_some_and(|st| st != "Z" && st != "X"),
        Err(_) => false,
    }
}
