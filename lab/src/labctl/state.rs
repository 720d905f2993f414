//! The state file of a lab: everything `rocelab up` created, written after
//! every step, so `rocelab down` can remove it all even after a crash.
//!
//! One JSON file per lab, `<state-dir>/<lab>.json` (default state dir
//! `/run/rocelab`), replaced atomically (write a temp file, fsync, rename)
//! so a crash mid-write leaves the previous version. Process logs live in
//! `<state-dir>/<lab>/<node>.log`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// Default directory of state files.
pub const DEFAULT_STATE_DIR: &str = "/run/rocelab";

/// A veth pair as created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkRecord {
    /// Namespace of end A.
    pub a_netns: String,
    /// Interface of end A.
    pub a_iface: String,
    /// Namespace of end B.
    pub b_netns: String,
    /// Interface of end B.
    pub b_iface: String,
    /// Configured speed, bit/s.
    pub speed_bps: u64,
}

/// A process started in a namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcRecord {
    /// Node it runs for.
    pub node: String,
    /// Its namespace.
    pub netns: String,
    /// Process id.
    pub pid: u32,
    /// Start time in clock ticks since boot (`/proc/PID/stat` field 22),
    /// so a recycled pid is never killed by mistake.
    pub start_ticks: u64,
    /// The command line.
    pub argv: Vec<String>,
    /// Log file of stdout and stderr.
    pub log: PathBuf,
}

/// What one lab created, in creation order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabState {
    /// Lab name.
    pub lab: String,
    /// Topology file it came from.
    pub topology_file: Option<PathBuf>,
    /// Namespaces created.
    pub netns: Vec<String>,
    /// veth pairs created.
    pub links: Vec<LinkRecord>,
    /// Processes started.
    pub processes: Vec<ProcRecord>,
    /// True once `up` finished every step.
    pub complete: bool,
    /// Notes about things that could not be set up (e.g. no ethtool).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The directory of state files.
#[derive(Debug, Clone)]
pub struct StateStore {
    dir: PathBuf,
}

impl StateStore {
    /// A store in `dir` (created on first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        StateStore { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// State file of `lab`.
    pub fn path(&self, lab: &str) -> PathBuf {
        self.dir.join(format!("{lab}.json"))
    }

    /// Log directory of `lab`.
    pub fn log_dir(&self, lab: &str) -> PathBuf {
        self.dir.join(lab)
    }

    /// True if `lab` has a state file.
    pub fn exists(&self, lab: &str) -> bool {
        self.path(lab).exists()
    }

    /// Reads `lab`'s state.
    pub fn load(&self, lab: &str) -> Result<LabState> {
        let p = self.path(lab);
        let text = fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", p.display()))
    }

    /// Writes `st` atomically.
    pub fn save(&self, st: &LabState) -> Result<()> {
        fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating state dir {}", self.dir.display()))?;
        let p = self.path(&st.lab);
        let tmp = self.dir.join(format!(".{}.json.tmp", st.lab));
        let text = serde_json::to_string_pretty(st).context("serialising lab state")?;
        let mut f =
            fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .with_context(|| format!("writing {}", tmp.display()))?;
        fs::rename(&tmp, &p).with_context(|| format!("renaming to {}", p.display()))?;
        Ok(())
    }

    /// Deletes `lab`'s state file.
    pub fn remove(&self, lab: &str) -> Result<()> {
        let p = self.path(lab);
        match fs::remove_file(&p) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e).with_context(|| format!("removing {}", p.display())),
        }
    }

    /// Names of labs with state files, sorted.
    pub fn labs(&self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let rd = match fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e).with_context(|| format!("listing {}", self.dir.display())),
        };
        for e in rd {
            let name = e?.file_name().to_string_lossy().to_string();
            if let Some(lab) = name.strip_suffix(".json")
                && !lab.starts_with('.')
            {
                out.push(lab.to_string());
            }
        }
        out.sort();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_lists() {
        let dir = std::env::temp_dir().join(format!("rocelab-state-{}", std::process::id()));
        let store = StateStore::new(&dir);
        let mut st = LabState {
            lab: "t1".into(),
            ..LabState::default()
        };
        st.netns.push("rl-t1-h1".into());
        store.save(&st).unwrap();
        st.processes.push(ProcRecord {
            node: "h1".into(),
            netns: "rl-t1-h1".into(),
            pid: 42,
            start_ticks: 7,
            argv: vec!["x".into()],
            log: dir.join("t1/h1.log"),
        });
        store.save(&st).unwrap();
        assert_eq!(store.load("t1").unwrap(), st);
        assert_eq!(store.labs().unwrap(), ["t1"]);
        store.remove("t1").unwrap();
        assert!(store.labs().unwrap().is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
