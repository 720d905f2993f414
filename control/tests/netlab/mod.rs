//! Network namespaces joined by veths, for the daemon tests that need root
//! (restart, port_link, pipeline_load): a switch namespace `rl-<tag>-sw`
//! and a host namespace `rl-<tag>-h` (the `rl-` prefix CI's cleanup
//! knows), IPv6 off, loopback up, veths `p<i>` (switch) – `h<i>` (host).
//! Everything is removed on drop; a test's own guard stops its daemon
//! first.

#![allow(dead_code, unreachable_pub)]

use std::process::Command;
use std::time::{Duration, Instant};

/// True if the test may create namespaces; otherwise says why it is
/// skipped (and fails under `ROCESWITCH_REQUIRE_ROOT`, as CI runs as root).
pub fn root_or_skip(test: &str) -> bool {
    dataplane::port::netns::namespaces_or_skip(test)
}

/// Runs `ip ARGS`, panicking with its stderr if it fails.
pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("running ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `02:00:00:00:0e:01`.
pub fn mac_text(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Waits until `iface` in `ns` reports `state UP`.
pub fn wait_up(ns: &str, iface: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let out = Command::new("ip")
            .args(["-n", ns, "-o", "link", "show", "dev", iface])
            .output()
            .expect("ip link show");
        if String::from_utf8_lossy(&out.stdout).contains("state UP") {
            return;
        }
        assert!(Instant::now() < deadline, "{iface} in {ns} not up");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The two namespaces of one test.
pub struct NetLab {
    /// The switch's namespace.
    pub sw: String,
    /// The hosts' namespace.
    pub host: String,
}

impl NetLab {
    /// `label` tells apart the labs of tests running at once in this
    /// process (namespace names are short: a few letters).
    pub fn create(label: &str) -> NetLab {
        let tag = format!("{label}{}", std::process::id() % 100_000);
        let lab = NetLab {
            sw: format!("rl-{tag}-sw"),
            host: format!("rl-{tag}-h"),
        };
        for ns in [&lab.sw, &lab.host] {
            ip(&["netns", "add", ns]);
            ip(&[
                "netns",
                "exec",
                ns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        lab
    }

    /// The veth `p<i>` (switch) – `h<i>` (host, with `host_mac`), both up.
    pub fn add_link(&self, i: usize, host_mac: [u8; 6]) {
        let (p, h) = (format!("p{i}"), format!("h{i}"));
        ip(&[
            "link",
            "add",
            "name",
            &p,
            "netns",
            &self.sw,
            "type",
            "veth",
            "peer",
            "name",
            &h,
            "netns",
            &self.host,
            "address",
            &mac_text(host_mac),
        ]);
        ip(&["-n", &self.sw, "link", "set", &p, "up"]);
        ip(&["-n", &self.host, "link", "set", &h, "up"]);
        wait_up(&self.sw, &p);
        wait_up(&self.host, &h);
    }
}

impl Drop for NetLab {
    fn drop(&mut self) {
        for ns in [&self.sw, &self.host] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}
