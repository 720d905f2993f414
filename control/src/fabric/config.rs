//! The fabric QoS configuration: the model and its validation live in
//! [`dataplane::fabric::config`] (one definition for the daemon, the
//! simulator and the lab); this module adds the state file.
//!
//! Contract: [`save`] writes a temp file in the target directory, fsyncs
//! it, renames it over the state file and fsyncs the directory, so a crash
//! leaves either the old or the new file. [`load`] validates what it reads.

use std::io::Write as _;
use std::path::Path;

pub use dataplane::fabric::config::*;

/// Why the state file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// File system.
    #[error("state file {path}: {source}")]
    Io {
        /// Path.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// Not JSON of a `FabricConfig`.
    #[error("state file {path}: {source}")]
    Format {
        /// Path.
        path: String,
        /// Cause.
        source: serde_json::Error,
    },
    /// Parsed, but invalid.
    #[error("state file {path}: invalid configuration: {}", join(.errors))]
    Invalid {
        /// Path.
        path: String,
        /// Problems.
        errors: Vec<ConfigError>,
    },
}

/// Writes the configuration to `path` atomically (temp file in the same
/// directory, fsync, rename, fsync of the directory).
pub fn save(cfg: &FabricConfig, path: &Path) -> Result<(), PersistError> {
    let io = |source| PersistError::Io {
        path: path.display().to_string(),
        source,
    };
    let json = serde_json::to_vec_pretty(cfg).map_err(|source| PersistError::Format {
        path: path.display().to_string(),
        source,
    })?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&json)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

/// Reads and validates a state file.
pub fn load(path: &Path) -> Result<FabricConfig, PersistError> {
    let p = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| PersistError::Io {
        path: p.clone(),
        source,
    })?;
    parse(&bytes, &p)
}

/// Parses and validates a state file's bytes (`p` names it in errors).
pub fn parse(bytes: &[u8], p: &str) -> Result<FabricConfig, PersistError> {
    let p = p.to_string();
    let cfg: FabricConfig =
        serde_json::from_slice(bytes).map_err(|source| PersistError::Format {
            path: p.clone(),
            source,
        })?;
    let errors = cfg.validate();
    if errors.is_empty() {
        Ok(cfg)
    } else {
        Err(PersistError::Invalid { path: p, errors })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(n: u16) -> PortConfig {
        PortConfig {
            port: n,
            speed_bps: 100_000_000_000,
            mtu_bytes: 4200,
            cable_length_m: 100,
            trust: Some(Trust::Dscp),
            pfc_priorities: vec![3, 4],
        }
    }

    fn good() -> FabricConfig {
        FabricConfig {
            ports: vec![port(0), port(1)],
            buffer: BufferConfig {
                pool_size_bytes: 16 << 20,
                thresholds: vec![
                    PriorityThreshold {
                        priority: 3,
                        threshold: Some(Threshold::Static {
                            xoff_bytes: 200_000,
                            xon_bytes: 150_000,
                        }),
                    },
                    PriorityThreshold {
                        priority: 0,
                        threshold: Some(Threshold::Dynamic { alpha: 1.0 }),
                    },
                ],
                headroom: Headroom::Auto,
            },
            ecn: vec![EcnProfile {
                port: 0,
                priority: 3,
                enabled: true,
                kmin_bytes: 5_000,
                kmax_bytes: 200_000,
                pmax: 0.01,
            }],
            ets: vec![EtsPort {
                port: 1,
                weights: vec![0, 0, 0, 50, 50, 0, 0, 0],
            }],
            watchdog: WatchdogConfig {
                enabled: true,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn save_is_atomic_and_load_round_trips_and_validates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fabric.json");
        let c = good();
        save(&c, &path).unwrap();
        assert_eq!(load(&path).unwrap(), c);
        let mut d = c.clone();
        d.watchdog.enabled = false;
        save(&d, &path).unwrap();
        assert_eq!(load(&path).unwrap(), d);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "no temp files left: {leftovers:?}");
        let mut bad = c;
        bad.qos_maps.default_priority = 9;
        save(&bad, &path).unwrap();
        match load(&path) {
            Err(PersistError::Invalid { errors, .. }) => {
                assert_eq!(errors[0].field, "qos_maps.default_priority")
            }
            other => panic!("{other:?}"),
        }
        std::fs::write(&path, b"{not json").unwrap();
        assert!(matches!(load(&path), Err(PersistError::Format { .. })));
    }
}
