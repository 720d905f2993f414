//! The Debian package, as an administrator meets it: `packaging/deb/build`
//! makes the .deb from the built binaries, `dpkg -i` installs it, the
//! systemd unit passes `systemd-analyze verify`, and the daemon started
//! exactly as the unit's `ExecStart` says serves `rocectl` through the
//! address the package's profile script exports. These machines do not run
//! systemd as init, so the test starts `ExecStart` itself, in a namespace
//! `rspkg-<pid>` holding the `swp1`/`swp2` interfaces the shipped
//! configuration names. Needs root and dpkg; it refuses to run over an
//! installed roceswitch package and purges its own install at the end.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const UNIT: &str = "/lib/systemd/system/roceswitch.service";
const SOCKET: &str = "/run/roceswitch/ctl.sock";

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("control/ is inside the repository")
        .to_path_buf()
}

/// Everything the test made, undone on drop (also when an assertion fails).
struct Installed {
    netns: String,
    daemon: Option<Child>,
}

impl Drop for Installed {
    fn drop(&mut self) {
        if let Some(mut d) = self.daemon.take() {
            let _ = d.kill();
            let _ = d.wait();
        }
        let _ = Command::new("ip")
            .args(["netns", "del", &self.netns])
            .output();
        let _ = Command::new("dpkg")
            .args(["--purge", "roceswitch"])
            .output();
        let _ = std::fs::remove_dir_all("/var/lib/roceswitch");
        let _ = std::fs::remove_dir_all("/run/roceswitch");
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
fn the_debian_package_installs_a_unit_that_starts_a_serving_daemon() {
    // Root and namespaces (dpkg -i, then ExecStart in a namespace); in CI
    // as root this fails instead of skipping.
    if !dataplane::port::netns::namespaces_or_skip(
        "the_debian_package_installs_a_unit_that_starts_a_serving_daemon",
    ) {
        return;
    }
    let profile_dir = repo().join("target/debug");
    assert!(
        profile_dir.join("rocelab").exists() && profile_dir.join("p4-to-rust").exists(),
        "the package holds every binary: `cargo build --workspace` first (tests/run does)"
    );
    let status = Command::new("dpkg")
        .args(["-s", "roceswitch"])
        .output()
        .expect("dpkg");
    assert!(
        !status.status.success(),
        "a roceswitch package is already installed here; this test will not replace it"
    );

    let out_dir = std::env::temp_dir().join(format!("rspkg-{}", std::process::id()));
    let built = run(Command::new(repo().join("packaging/deb/build")).args([
        "--profile",
        "debug",
        "--no-build",
        "--out",
        out_dir.to_str().unwrap(),
    ]));
    let deb = String::from_utf8(built.stdout).unwrap().trim().to_string();
    assert!(deb.ends_with(".deb"), "{deb}");

    let mut lab = Installed {
        netns: format!("rspkg-{}", std::process::id()),
        daemon: None,
    };
    run(Command::new("dpkg").args(["-i", &deb]));
    let _ = std::fs::remove_dir_all(&out_dir);

    // What the package put where an administrator looks.
    for bin in ["roceswitch", "rocectl", "rocelab", "roceperf", "p4-to-rust"] {
        run(Command::new(format!("/usr/bin/{bin}")).arg("--help"));
        for file in [
            format!("/usr/share/man/man1/{bin}.1.gz"),
            format!("/usr/share/bash-completion/completions/{bin}"),
            format!("/usr/share/zsh/vendor-completions/_{bin}"),
            format!("/usr/share/fish/vendor_completions.d/{bin}.fish"),
        ] {
            assert!(Path::new(&file).exists(), "{file} installed");
        }
    }
    let conffiles = run(Command::new("dpkg-query").args(["-W", "-f=${Conffiles}", "roceswitch"]));
    assert!(
        String::from_utf8_lossy(&conffiles.stdout).contains("/etc/roceswitch/roceswitch.toml"),
        "the configuration is a conffile (kept across upgrades)"
    );

    // The unit as systemd reads it (man: references resolve when man exists).
    let has_man = Command::new("sh")
        .args(["-c", "command -v man"])
        .output()
        .unwrap()
        .status
        .success();
    let verify = Command::new("systemd-analyze")
        .args([
            "verify",
            if has_man { "--man=yes" } else { "--man=no" },
            UNIT,
        ])
        .output()
        .expect("systemd-analyze (systemd package)");
    assert!(
        verify.status.success() && verify.stderr.is_empty(),
        "systemd-analyze verify {UNIT}: {}",
        String::from_utf8_lossy(&verify.stderr)
    );
    let unit = std::fs::read_to_string(UNIT).unwrap();
    let exec_start: Vec<&str> = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("the unit has an ExecStart")
        .split_whitespace()
        .collect();
    assert_eq!(exec_start[0], "/usr/bin/roceswitch");

    // The interfaces the shipped configuration names, in a namespace.
    let ns = lab.netns.clone();
    run(Command::new("ip").args(["netns", "add", &ns]));
    for (port, peer) in [("swp1", "host1"), ("swp2", "host2")] {
        run(Command::new("ip").args([
            "-n", &ns, "link", "add", port, "type", "veth", "peer", "name", peer,
        ]));
        for dev in [port, peer] {
            run(Command::new("ip").args(["-n", &ns, "link", "set", dev, "up"]));
        }
    }
    let _ = std::fs::remove_dir_all("/run/roceswitch");
    lab.daemon = Some(
        Command::new("ip")
            .args(["netns", "exec", &ns])
            .args(&exec_start)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ExecStart"),
    );
    wait_for("the daemon's socket", || Path::new(SOCKET).exists());

    // rocectl finds it through the profile script, with nothing else set.
    let get = run(Command::new("sh")
        .args([
            "-c",
            ". /etc/profile.d/roceswitch.sh && exec /usr/bin/rocectl fabric get",
        ])
        .env_remove(control::serve::ADDR_ENV));
    let config: serde_json::Value =
        serde_json::from_slice(&get.stdout).expect("fabric get prints JSON");
    let ports = config["ports"].as_array().expect("ports");
    assert_eq!(
        ports.len(),
        2,
        "the two ports of /etc/roceswitch/roceswitch.toml: {config}"
    );

    // A service stop (SIGTERM) removes the socket.
    let daemon = lab.daemon.take().unwrap();
    // SAFETY: kill(2) on the pid of a child we own.
    unsafe { libc::kill(daemon.id() as i32, libc::SIGTERM) };
    let mut daemon = daemon;
    let _ = daemon.wait();
    wait_for("the socket removed on stop", || !Path::new(SOCKET).exists());

    drop(lab);
    assert!(
        !Path::new("/usr/bin/roceswitch").exists(),
        "dpkg --purge removed the package"
    );
    assert!(
        !Path::new("/etc/roceswitch").exists(),
        "and its configuration"
    );
}
