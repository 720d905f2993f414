//! What a new user meets first: `roceswitch` and `rocectl` agree on where
//! to meet, a client that cannot connect says where it tried and how to
//! point it elsewhere, bad `--port` lists are refused with one clear line
//! before anything opens, and a fresh daemon's fabric configuration lists
//! its ports. The daemon test needs root (it runs `roceswitch` on the
//! loopback of a namespace `rsfr-<pid>` it creates and deletes); it is
//! skipped with a message otherwise.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn rocectl(args: &[&str], env_addr: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rocectl"));
    cmd.args(args).env_remove(control::serve::ADDR_ENV);
    if let Some(a) = env_addr {
        cmd.env(control::serve::ADDR_ENV, a);
    }
    cmd.output().expect("running rocectl")
}

fn roceswitch(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roceswitch"))
        .args(args)
        .env_remove(control::serve::ADDR_ENV)
        // What a user sees: no backtrace under the message.
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .output()
        .expect("running roceswitch")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn both_binaries_default_to_the_same_address() {
    let help = |bin: &str| {
        let o = Command::new(bin).arg("--help").output().unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let daemon = help(env!("CARGO_BIN_EXE_roceswitch"));
    let client = help(env!("CARGO_BIN_EXE_rocectl"));
    for (name, text) in [("roceswitch", &daemon), ("rocectl", &client)] {
        assert!(
            text.contains(control::serve::DEFAULT_ADDR),
            "{name} --help does not name {}:\n{text}",
            control::serve::DEFAULT_ADDR
        );
        assert!(text.contains(control::serve::ADDR_ENV), "{name}:\n{text}");
    }
}

#[test]
fn an_unreachable_daemon_is_named_with_the_way_to_reach_another() {
    let dir = tempfile::tempdir().unwrap();
    let addr = format!("unix:{}", dir.path().join("none.sock").display());
    for (flag, env) in [(Some(addr.as_str()), None), (None, Some(addr.as_str()))] {
        let mut args = Vec::new();
        if let Some(a) = flag {
            args.extend(["--addr", a]);
        }
        args.extend(["fabric", "get"]);
        let out = rocectl(&args, env);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("cannot reach roceswitch at {addr}")),
            "{err}"
        );
        assert!(err.contains(control::serve::DEFAULT_ADDR), "{err}");
        assert!(
            err.contains("--addr") && err.contains(control::serve::ADDR_ENV),
            "{err}"
        );
        assert!(!err.contains("Some(") && !err.contains("{ "), "{err}");
    }
}

#[test]
fn bad_port_lists_are_refused_with_one_line_each() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["--port", "0=lo", "--port", "1=lo"],
            "interface lo is given to ports 0 and 1",
        ),
        (
            &["--port", "0=lo", "--port", "0=lo"],
            "port 0 is given twice",
        ),
        (
            &["--port", "0=rsfr-nosuch0"],
            "port 0: no network interface named \"rsfr-nosuch0\"",
        ),
        (
            &["--port", "1=lo"],
            "port numbers must be 0..1 without gaps",
        ),
    ];
    for (args, want) in cases {
        let out = roceswitch(args);
        assert!(!out.status.success(), "{args:?} started");
        let err = stderr(&out);
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: more than one line:\n{err}");
        assert!(lines[0].contains(want), "{args:?}: {err}");
    }
}

#[test]
fn a_closed_pipe_ends_rocectl_like_any_unix_tool() {
    use std::os::unix::process::ExitStatusExt;
    // `rocectl ... | head`: the reader is gone before rocectl prints. The
    // read end is closed before rocectl starts, so its first write fails
    // however the two processes are scheduled.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_rocectl"))
        .args(["headroom", "--ports", "64", "--speed", "100G"])
        .env_remove("RUST_BACKTRACE")
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("running rocectl");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}", out.status);
    assert_eq!(stderr(&out), "", "no panic message, no error line");
}

/// True if we may create namespaces; otherwise says why the test is
/// skipped (fails under `ROCESWITCH_REQUIRE_ROOT`, as CI runs as root).
fn root_or_skip(test: &str) -> bool {
    dataplane::port::netns::namespaces_or_skip(test)
}

/// A namespace and the daemon in it, both removed on drop.
struct Netns {
    name: String,
    daemon: Option<Child>,
}

impl Drop for Netns {
    fn drop(&mut self) {
        if let Some(mut d) = self.daemon.take() {
            let _ = d.kill();
            let _ = d.wait();
        }
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ready() {
        assert!(Instant::now() < deadline, "{what} within 20 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_fresh_daemon_creates_its_socket_directory_and_lists_its_ports() {
    if !root_or_skip("a_fresh_daemon_creates_its_socket_directory_and_lists_its_ports") {
        return;
    }
    let mut ns = Netns {
        name: format!("rsfr-{}", std::process::id()),
        daemon: None,
    };
    let ip = |args: &[&str]| {
        let o = Command::new("ip").args(args).output().unwrap();
        assert!(o.status.success(), "ip {args:?}: {}", stderr(&o));
    };
    ip(&["netns", "add", &ns.name]);
    ip(&["-n", &ns.name, "link", "set", "lo", "up"]);
    let dir = tempfile::tempdir().unwrap();
    let sock_dir = dir.path().join("run/roceswitch");
    let sock = sock_dir.join("ctl.sock");
    let addr = format!("unix:{}", sock.display());
    let log = std::fs::File::create(dir.path().join("daemon.log")).unwrap();
    ns.daemon = Some(
        Command::new("ip")
            .args(["netns", "exec", &ns.name, env!("CARGO_BIN_EXE_roceswitch")])
            .args(["--port", "0=lo", "--speed", "25G", "--log-level", "warn"])
            .env(control::serve::ADDR_ENV, &addr)
            .stdin(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let log_text = || std::fs::read_to_string(dir.path().join("daemon.log")).unwrap_or_default();
    wait_for("the daemon's socket", || {
        if let Some(status) = ns.daemon.as_mut().unwrap().try_wait().unwrap() {
            panic!("roceswitch exited ({status}):\n{}", log_text());
        }
        sock.exists()
    });
    let mode = std::fs::metadata(&sock_dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750, "socket directory mode {mode:o}");

    // rocectl finds the daemon through the same environment variable.
    let out = rocectl(&["fabric", "get"], Some(&addr));
    assert!(out.status.success(), "{}", stderr(&out));
    let cfg: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ports = cfg["ports"].as_array().expect("ports");
    assert_eq!(ports.len(), 1, "{cfg}");
    assert_eq!(ports[0]["port"], 0);
    assert_eq!(ports[0]["speed_bps"], 25_000_000_000u64);
    assert_eq!(ports[0]["pfc_priorities"], serde_json::json!([3]));

    // SIGTERM: a clean stop removes the socket.
    let pid = ns.daemon.as_ref().unwrap().id();
    // The child is `ip netns exec`, which execs roceswitch: same pid.
    // SAFETY: kill with a pid we own and a valid signal number.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    let status = ns.daemon.take().unwrap().wait().unwrap();
    assert!(status.success(), "{status}:\n{}", log_text());
    assert!(!Path::new(&sock).exists(), "socket left behind");
}
