//! `rocelab up`/`down` as a user runs them (needs root; skipped with a
//! message otherwise). After `down`, and after an `up` that failed midway,
//! no namespace, veth or process of the lab may remain.

mod common;

use common::rocelab;

use std::path::PathBuf;
use std::process::Command;

/// A state dir and lab name, torn down on drop whatever happened.
struct Lab {
    name: String,
    state: PathBuf,
}

impl Lab {
    fn new() -> Lab {
        let name = common::unique("l");
        let state = std::env::temp_dir().join(format!("rocelab-test-{name}"));
        Lab { name, state }
    }
    /// The switch's `sleep`, with a duration unique to this lab so leftover
    /// processes can be told apart from other tests' ones.
    fn sleep(&self) -> String {
        let digits: String = self.name.chars().filter(char::is_ascii_digit).collect();
        format!("sleep 300.{digits}")
    }
    fn prefix(&self) -> String {
        format!("rl-{}-", self.name)
    }
    fn write(&self, body: &str) -> PathBuf {
        std::fs::create_dir_all(&self.state).unwrap();
        let p = self.state.join("topo.toml");
        let body = body.replace("sleep 300", &self.sleep());
        std::fs::write(&p, format!("name = \"{}\"\n{body}", self.name)).unwrap();
        p
    }
    fn pids(&self) -> Vec<u32> {
        let Ok(text) = std::fs::read_to_string(self.state.join(format!("{}.json", self.name)))
        else {
            return Vec::new();
        };
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["processes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["pid"].as_u64().unwrap() as u32)
            .collect()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = rocelab(&self.state, &["down", &self.name]);
        for ns in common::netns_with_prefix(&self.prefix()) {
            let _ = Command::new("ip").args(["netns", "del", &ns]).output();
        }
        let _ = std::fs::remove_dir_all(&self.state);
    }
}

const HOSTS: &str = r#"
[[switches]]
name = "sw"
# `sh -c` forks: `sleep` is a child the teardown must reach via the group.
command = ["sh", "-c", "sleep 300; true", "{lab}"]
[[hosts]]
name = "h2"
mac = "02:00:00:00:02:02"
ip = "10.2.0.2"
command = ["roceperf", "server", "--iface", "{iface}", "--mac", "{mac}", "--ip", "{ip}"]
[[hosts]]
name = "h1"
mac = "02:00:00:00:02:01"
ip = "10.2.0.1"
command = ["roceperf", "client", "--iface", "{iface}", "--mac", "{mac}", "--ip", "{ip}",
           "--dst-ip", "{host.h2.ip}", "--dst-mac", "{host.h2.mac}", "--duration", "300", "--rate", "10M"]
"#;

/// Command lines of all processes.
fn processes() -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(c) = std::fs::read(e.path().join("cmdline")) {
            out.push(String::from_utf8_lossy(&c).replace('\0', " "));
        }
    }
    out
}

fn assert_nothing_left(lab: &Lab, pids: &[u32]) {
    assert_eq!(
        common::netns_with_prefix(&lab.prefix()),
        Vec::<String>::new(),
        "namespaces left"
    );
    for &p in pids {
        assert!(!common::pid_alive(p), "process {p} left running");
    }
    assert!(
        !lab.state.join(format!("{}.json", lab.name)).exists(),
        "state file left"
    );
    assert!(
        !processes().iter().any(|l| l.trim() == lab.sleep()),
        "a child of the switch command outlived it"
    );
    // Nothing was ever created in our own namespace; check no veth of the lab leaked here.
    let links = Command::new("ip")
        .args(["-o", "link", "show"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&links.stdout);
    for name in ["h1-sw", "sw-h1", "sw-h2", "h2-sw"] {
        assert!(
            !text.contains(&format!(": {name}")),
            "veth {name} leaked into the root namespace"
        );
    }
}

#[test]
fn up_then_down_leaves_nothing_behind() {
    if !common::root_or_skip("up_then_down_leaves_nothing_behind") {
        return;
    }
    let lab = Lab::new();
    let file = lab.write(&format!(
        "{HOSTS}\n[[links]]\na = \"h1:eth0\"\nb = \"sw:p1\"\nspeed = \"25G\"\n[[links]]\na = \"h2:eth0\"\nb = \"sw:p2\"\n"
    ));
    let out = rocelab(&lab.state, &["up", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "up: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nss = common::netns_with_prefix(&lab.prefix());
    assert_eq!(nss.len(), 3, "{nss:?}");
    let pids = lab.pids();
    assert_eq!(pids.len(), 3);
    assert!(pids.iter().all(|&p| common::pid_alive(p)));
    // The host's interface got its MAC (its agent's with bit 2 of the first
    // octet flipped, as the host has no kernel address: the kernel drops
    // the agent's frames instead of routing them), the link is up, IPv6 is
    // off.
    let show = Command::new("ip")
        .args([
            "-n",
            &format!("{}h1", lab.prefix()),
            "-o",
            "link",
            "show",
            "eth0",
        ])
        .output()
        .unwrap();
    let show = String::from_utf8_lossy(&show.stdout);
    assert!(
        show.contains("06:00:00:00:02:01") && show.contains("UP"),
        "{show}"
    );
    let v6 = Command::new("ip")
        .args([
            "netns",
            "exec",
            &format!("{}sw", lab.prefix()),
            "sysctl",
            "-n",
            "net.ipv6.conf.p1.disable_ipv6",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&v6.stdout).trim(), "1");
    // Rx offloads are off on both ends of a link.
    for (node, iface) in [("h1", "eth0"), ("sw", "p1")] {
        let got = lab::labctl::offload::rx_offloads_in(&format!("{}{node}", lab.prefix()), iface)
            .unwrap();
        assert_eq!(
            got,
            (false, false, false),
            "{node}:{iface} (gro, rxvlan, lro)"
        );
    }
    let st = rocelab(&lab.state, &["status", &lab.name]);
    let st = String::from_utf8_lossy(&st.stdout);
    assert!(st.contains("running") && !st.contains("MISSING"), "{st}");
    let out = rocelab(&lab.state, &["down", &lab.name]);
    assert!(
        out.status.success(),
        "down: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_nothing_left(&lab, &pids);
}

#[test]
fn a_bad_interface_on_the_second_host_unwinds_everything() {
    if !common::root_or_skip("a_bad_interface_on_the_second_host_unwinds_everything") {
        return;
    }
    let lab = Lab::new();
    // The kernel refuses names over 15 bytes: the second link fails after
    // three namespaces and the first veth pair exist.
    let file = lab.write(&format!(
        "{HOSTS}\n[[links]]\na = \"h2:eth0\"\nb = \"sw:p1\"\n[[links]]\na = \"h1:this-name-is-too-long\"\nb = \"sw:p2\"\n"
    ));
    let out = rocelab(&lab.state, &["up", file.to_str().unwrap()]);
    assert!(!out.status.success(), "up succeeded with a bad interface");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("this-name-is-too-long") && err.contains("link 1"),
        "{err}"
    );
    assert!(err.contains("everything created was removed"), "{err}");
    assert_nothing_left(&lab, &[]);
}

#[test]
fn a_command_that_dies_at_once_unwinds_the_started_processes() {
    if !common::root_or_skip("a_command_that_dies_at_once_unwinds_the_started_processes") {
        return;
    }
    let lab = Lab::new();
    // Own addresses, so the process check below cannot see other tests' agents.
    let body = HOSTS
        .replace(
            r#"command = ["roceperf", "client""#,
            r#"command = ["roceperf", "client", "--no-such-flag""#,
        )
        .replace("10.2.0.", "10.3.0.");
    let file = lab.write(&format!(
        "{body}\n[[links]]\na = \"h1:eth0\"\nb = \"sw:p1\"\n[[links]]\na = \"h2:eth0\"\nb = \"sw:p2\"\n"
    ));
    // `up` removes the state file with the pids when it unwinds, so look
    // for the lab's processes by command line afterwards.
    let out = rocelab(&lab.state, &["up", file.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("node h1") && err.contains("exited at once"),
        "{err}"
    );
    assert!(err.contains("no-such-flag"), "log tail not shown: {err}");
    assert_nothing_left(&lab, &[]);
    // No `sleep 300` (the switch) or roceperf server of this lab survived.
    let ps = processes().join("\n");
    assert!(
        !ps.lines()
            .any(|l| l.contains("--ip 10.3.0.2") && l.contains("roceperf")),
        "server process of the failed lab still runs"
    );
    assert!(
        !ps.lines()
            .any(|l| l.contains(&lab.sleep()) && l.contains(&lab.name)),
        "switch process of the failed lab still runs"
    );
    assert!(
        !ps.lines().any(|l| l.trim() == lab.sleep()),
        "the switch command's child outlived it"
    );
}

#[test]
fn down_after_a_crash_removes_what_the_state_file_records() {
    if !common::root_or_skip("down_after_a_crash_removes_what_the_state_file_records") {
        return;
    }
    let lab = Lab::new();
    let file = lab.write(&format!(
        "{HOSTS}\n[[links]]\na = \"h1:eth0\"\nb = \"sw:p1\"\n[[links]]\na = \"h2:eth0\"\nb = \"sw:p2\"\n"
    ));
    let out = rocelab(&lab.state, &["up", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pids = lab.pids();
    // A crashed agent and a namespace already gone by hand: down copes.
    // SAFETY: kill on a pid this test's lab started.
    unsafe { libc::kill(pids[2] as i32, libc::SIGKILL) };
    let gone = format!("{}h1", lab.prefix());
    let _ = Command::new("ip").args(["netns", "del", &gone]).output();
    let out = rocelab(&lab.state, &["down"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_nothing_left(&lab, &pids);
}

#[test]
fn ctrl_c_during_up_removes_what_was_created() {
    if !common::root_or_skip("ctrl_c_during_up_removes_what_was_created") {
        return;
    }
    let lab = Lab::new();
    let file = lab.write(&format!(
        "{HOSTS}\n[[links]]\na = \"h1:eth0\"\nb = \"sw:p1\"\n[[links]]\na = \"h2:eth0\"\nb = \"sw:p2\"\n"
    ));
    let child = Command::new(env!("CARGO_BIN_EXE_rocelab"))
        .arg("--state-dir")
        .arg(&lab.state)
        .args(["up", file.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once processes are running but `up` is still checking them.
    let t0 = std::time::Instant::now();
    let mut pids = Vec::new();
    while pids.len() < 3 && t0.elapsed() < std::time::Duration::from_secs(10) {
        pids = lab.pids();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(pids.len(), 3, "up never started the processes");
    // SAFETY: SIGINT to our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "up finished despite Ctrl-C");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("interrupted"), "{err}");
    assert_nothing_left(&lab, &pids);
}
