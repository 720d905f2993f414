//! How the dataplane thread waits for work and where it runs.
//!
//! [`PollMode`] is what the driver does after a turn that moved no frame:
//! sleep in `ppoll(2)` (the default: an idle switch costs no CPU, and a
//! frame arriving wakes it), spin over the rings for a while and then sleep
//! ([`PollMode::Adaptive`]), or spin for ever ([`PollMode::Busy`]), as
//! DPDK-style switches do on a core given to the dataplane: the latency a
//! frame sees is then the processing time, not a thread wake-up. A busy
//! dataplane thread uses a whole core all the time, traffic or not; on a
//! core it shares, it delays whatever else runs there, the sink it just
//! woke included, so pin it ([`pin_current_thread`]) to a core nothing
//! else is given.
//!
//! Pinning uses `sched_setaffinity(2)` on the calling thread; threads it
//! starts afterwards inherit the mask. Any online CPU ([`online_cpus`]) is
//! accepted, also one outside the mask the process was started with
//! (`taskset`), which [`allowed_cpus`] reads; the kernel still refuses one
//! its cpuset forbids. A CPU that is not online is refused with the online
//! ones named, not silently ignored.

use std::fmt;
use std::str::FromStr;

/// What the dataplane thread does after a turn that moved no frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PollMode {
    /// Sleep in `ppoll(2)` until a frame, a command or the switch's next
    /// deadline (the driver's behaviour before poll modes existed).
    #[default]
    Sleep,
    /// Spin over the rings for [`super::ADAPTIVE_SPIN`] after the last
    /// turn that moved a frame, then sleep as [`PollMode::Sleep`]: busy
    /// while traffic flows, no CPU when idle.
    Adaptive,
    /// Never sleep: turn after turn with a pause hint in between, checking
    /// the command queue every turn. Costs a whole core.
    Busy,
}

impl PollMode {
    /// Every mode, in the order the command line lists them.
    pub const ALL: [PollMode; 3] = [PollMode::Busy, PollMode::Adaptive, PollMode::Sleep];

    /// The mode's name on the command line and in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            PollMode::Sleep => "sleep",
            PollMode::Adaptive => "adaptive",
            PollMode::Busy => "busy",
        }
    }
}

impl fmt::Display for PollMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A poll mode name that is none of [`PollMode::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown poll mode {0:?}: expected busy, adaptive or sleep")]
pub struct PollModeParseError(pub String);

impl FromStr for PollMode {
    type Err = PollModeParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PollMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| PollModeParseError(s.to_string()))
    }
}

/// Why the CPU mask could not be read or set.
#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    /// A CPU that is not online (or does not exist).
    #[error("CPU {cpu} is not online (online: {})", cpu_list(online))]
    NotOnline {
        /// The CPU asked for.
        cpu: usize,
        /// The online CPUs.
        online: Vec<usize>,
    },
    /// The kernel's list of online CPUs could not be read.
    #[error("reading {ONLINE_CPUS}: {0}")]
    Online(std::io::Error),
    /// `sched_getaffinity(2)` or `sched_setaffinity(2)` failed.
    #[error("{call}: {source}")]
    Affinity {
        /// The system call.
        call: &'static str,
        /// Its error.
        source: std::io::Error,
    },
}

/// `0,2-3`: a CPU list as `taskset -c` and `/proc/self/status` write it.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// Where the kernel lists the online CPUs (`0-1`).
const ONLINE_CPUS: &str = "/sys/devices/system/cpu/online";

/// The CPUs of a list as [`cpu_list`] writes it, ascending; `None` if it is
/// not one.
pub fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
        if a > b {
            return None;
        }
        cpus.extend(a..=b);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Some(cpus)
}

/// The CPUs online now, ascending.
pub fn online_cpus() -> Result<Vec<usize>, CpuError> {
    let text = std::fs::read_to_string(ONLINE_CPUS).map_err(CpuError::Online)?;
    parse_cpu_list(&text).ok_or_else(|| {
        CpuError::Online(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not a CPU list: {text:?}"),
        ))
    })
}

/// The CPUs the calling thread may run on, ascending.
pub fn allowed_cpus() -> Result<Vec<usize>, CpuError> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: sched_getaffinity writes at most size_of::<cpu_set_t>() bytes
    // into the set we own, for the calling thread (pid 0).
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Err(CpuError::Affinity {
            call: "sched_getaffinity",
            source: std::io::Error::last_os_error(),
        });
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET reads the set we own, for indices below its size.
    Ok((0..max)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Restricts the calling thread (and the threads it starts afterwards) to
/// `cpus`, each of which must be online.
pub fn pin_current_thread(cpus: &[usize]) -> Result<(), CpuError> {
    let online = online_cpus()?;
    if let Some(&cpu) = cpus.iter().find(|c| !online.contains(c)) {
        return Err(CpuError::NotOnline { cpu, online });
    }
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: `c` is an online CPU, so below the set's size.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: the set is initialised and lives across the call; pid 0 is
    // the calling thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r != 0 {
        return Err(CpuError::Affinity {
            call: "sched_setaffinity",
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_modes_round_trip_through_their_names() {
        for mode in PollMode::ALL {
            assert_eq!(mode.name().parse::<PollMode>(), Ok(mode));
        }
        assert_eq!(PollMode::default(), PollMode::Sleep);
        let err = "spin".parse::<PollMode>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown poll mode \"spin\": expected busy, adaptive or sleep"
        );
    }

    #[test]
    fn cpu_lists_collapse_runs_and_parse_back() {
        assert_eq!(cpu_list(&[]), "");
        assert_eq!(cpu_list(&[1]), "1");
        assert_eq!(cpu_list(&[0, 2, 3, 4, 7]), "0,2-4,7");
        assert_eq!(parse_cpu_list("0,2-4,7\n"), Some(vec![0, 2, 3, 4, 7]));
        assert_eq!(parse_cpu_list("0-1"), Some(vec![0, 1]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn a_thread_pins_itself_to_an_online_cpu_and_refuses_others() {
        // On a thread of its own: the mask would outlive the test otherwise.
        std::thread::spawn(|| {
            let allowed = allowed_cpus().unwrap();
            let last = *allowed.last().expect("some CPU is allowed");
            pin_current_thread(&[last]).unwrap();
            assert_eq!(allowed_cpus().unwrap(), vec![last]);
            let beyond = 8 * std::mem::size_of::<libc::cpu_set_t>() - 1;
            match pin_current_thread(&[beyond]) {
                Err(CpuError::NotOnline { cpu, online }) => {
                    assert_eq!((cpu, online), (beyond, online_cpus().unwrap()));
                }
                other => panic!("expected NotOnline, got {other:?}"),
            }
            // Pinned to one CPU, it may still move to another online one.
            let online = online_cpus().unwrap();
            pin_current_thread(&online).unwrap();
            assert_eq!(allowed_cpus().unwrap(), online);
        })
        .join()
        .unwrap();
    }
}
