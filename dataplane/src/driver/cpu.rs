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
//! starts afterwards inherit the mask. Only CPUs in the process's current
//! mask ([`allowed_cpus`]) are accepted: a CPU outside it (or beyond the
//! machine) is refused with the mask named, not silently ignored.

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
    /// A CPU the process may not run on (or that does not exist).
    #[error("CPU {cpu} is not one this process may run on (allowed: {})", cpu_list(allowed))]
    NotAllowed {
        /// The CPU asked for.
        cpu: usize,
        /// The CPUs the process may run on.
        allowed: Vec<usize>,
    },
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
/// `cpus`, each of which must be in [`allowed_cpus`].
pub fn pin_current_thread(cpus: &[usize]) -> Result<(), CpuError> {
    let allowed = allowed_cpus()?;
    if let Some(&cpu) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(CpuError::NotAllowed { cpu, allowed });
    }
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: `c` is an allowed CPU, so below the set's size.
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
    fn cpu_lists_collapse_runs() {
        assert_eq!(cpu_list(&[]), "");
        assert_eq!(cpu_list(&[1]), "1");
        assert_eq!(cpu_list(&[0, 2, 3, 4, 7]), "0,2-4,7");
    }

    #[test]
    fn a_thread_pins_itself_to_an_allowed_cpu_and_refuses_others() {
        // On a thread of its own: the mask would outlive the test otherwise.
        std::thread::spawn(|| {
            let allowed = allowed_cpus().unwrap();
            let last = *allowed.last().expect("some CPU is allowed");
            pin_current_thread(&[last]).unwrap();
            assert_eq!(allowed_cpus().unwrap(), vec![last]);
            let beyond = 8 * std::mem::size_of::<libc::cpu_set_t>() - 1;
            match pin_current_thread(&[beyond]) {
                Err(CpuError::NotAllowed { cpu, allowed }) => {
                    assert_eq!((cpu, allowed), (beyond, vec![last]));
                }
                other => panic!("expected NotAllowed, got {other:?}"),
            }
        })
        .join()
        .unwrap();
    }
}
