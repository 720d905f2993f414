//! The system side of labs: running `ip` (and friends) with every failure
//! reported with its command line and stderr, and looking at processes by
//! pid and start time.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Runs `prog args..`, returning stdout; a non-zero exit is an error that
/// quotes the command and its stderr.
pub fn run(prog: &str, args: &[&str]) -> Result<String> {
    let cmdline = format!("{prog} {}", args.join(" "));
    tracing::debug!(%cmdline, "run");
    let out = Command::new(prog)
        .args(args)
        .output()
        .with_context(|| format!("starting `{cmdline}`"))?;
    if !out.status.success() {
        bail!(
            "`{cmdline}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `ip args..`.
pub fn ip(args: &[&str]) -> Result<String> {
    run("ip", args)
}

/// Waits until `iface` in namespace `ns` reports operational state UP
/// (carrier on, qdisc attached). Right after `ip link set up` a veth drops
/// what is sent until the kernel's link watcher has run.
pub fn wait_oper_up(ns: &str, iface: &str, timeout: std::time::Duration) -> Result<()> {
    let t0 = std::time::Instant::now();
    loop {
        let out = ip(&["-n", ns, "-o", "link", "show", "dev", iface])?;
        if out.contains("state UP") {
            return Ok(());
        }
        if t0.elapsed() >= timeout {
            bail!(
                "{ns}:{iface} not operationally up after {timeout:?}: {}",
                out.trim()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// True if the named network namespace exists.
pub fn netns_exists(name: &str) -> bool {
    Path::new(&crate::port::netns::netns_path(name)).exists()
}

/// True if `prog` is found on `PATH`.
pub fn on_path(prog: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(prog).is_file()))
}

/// Start time of `pid` in clock ticks since boot, if it runs and is not a
/// zombie.
pub fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: fields after its ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); field 22 is starttime.
    if fields.first() == Some(&"Z") || fields.first() == Some(&"X") {
        return None;
    }
    fields.get(19)?.parse().ok()
}

/// True if `pid` still is the process that started at `ticks`.
pub fn is_same_process_alive(pid: u32, ticks: u64) -> bool {
    start_ticks(pid) == Some(ticks)
}

/// Sends `sig` to `pid`; errors other than "no such process" are returned.
pub fn signal(pid: u32, sig: libc::c_int) -> std::io::Result<()> {
    // SAFETY: kill has no memory effects.
    let r = unsafe { libc::kill(pid as libc::pid_t, sig) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ESRCH) {
            return Err(e);
        }
    }
    Ok(())
}

/// Sends `sig` to the process group led by `pgid`; "no such group" is fine.
pub fn signal_group(pgid: u32, sig: libc::c_int) -> std::io::Result<()> {
    if pgid <= 1 {
        return Ok(());
    }
    // SAFETY: kill has no memory effects; a negative pid names a group.
    let r = unsafe { libc::kill(-(pgid as libc::pid_t), sig) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ESRCH) {
            return Err(e);
        }
    }
    Ok(())
}

/// Reaps `pid` if it is our exited child (no effect otherwise).
pub fn reap(pid: u32) {
    let mut status = 0;
    // SAFETY: WNOHANG waitpid on a pid only reaps our own child.
    unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_process_is_alive_with_a_stable_start_time() {
        let me = std::process::id();
        let t = start_ticks(me).expect("own stat");
        assert!(is_same_process_alive(me, t));
        assert!(
            !is_same_process_alive(me, t + 1),
            "start time must be compared"
        );
    }

    #[test]
    fn failures_quote_the_command_and_stderr() {
        let e = run("sh", &["-c", "echo boom >&2; exit 3"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("sh -c") && e.contains("boom"), "{e}");
    }
}
