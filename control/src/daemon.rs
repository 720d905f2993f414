//! Assembling the control plane of a running switch: the P4Runtime service
//! and the fabric service over one device, sharing one listener.
//!
//! The fabric backend is the dataplane's ([`crate::fabric::SwitchBackend`]
//! on a running switch); the fabric-owned tables the program has
//! ([`FABRIC_OWNED_TABLES`]) belong to P4Runtime's predefined role
//! `roceswitch.fabric`, and [`DaemonOptions::owned_table_access`] says
//! whether the default role may write them too. The fabric configuration is
//! restored from, and persisted to, `state_file`; what P4Runtime wrote
//! (entries, members, groups, meter configs, the pipeline cookie; not
//! counter values) to `p4rt_state_file` ([`crate::p4rt::persist`]),
//! replayed in [`Daemon::bind`] before anything is served.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use p4_target::info::ProgramInfo;

use crate::device::Device;
use crate::fabric::config::FabricConfig;
use crate::fabric::{FABRIC_OWNED_TABLES, FabricBackend, FabricService, MemoryBackend};
use crate::p4rt::{P4RuntimeConfig, P4RuntimeService};
use crate::serve::{Bound, Listen, ServeError};

/// Daemon settings.
#[derive(Clone, Debug)]
pub struct DaemonOptions {
    /// Where both services listen.
    pub listen: Listen,
    /// P4Runtime device id.
    pub device_id: u64,
    /// Whether P4Runtime's default role may write fabric-owned tables.
    pub owned_table_access: crate::p4rt::roles::OwnedTableAccess,
    /// Fabric state file (`None`: start from defaults, persist nothing).
    pub state_file: Option<PathBuf>,
    /// P4Runtime state file (`None`: start empty, persist nothing); the
    /// daemon uses [`p4rt_state_path`] of `state_file`.
    pub p4rt_state_file: Option<PathBuf>,
    /// The fabric configuration to start from when there is no state file
    /// (switchd lists the ports it opened, so a fresh daemon shows them).
    pub fabric_defaults: FabricConfig,
}

/// Where the daemon keeps P4Runtime state next to the fabric state file
/// `state_file`: `<state_file>.p4rt`.
pub fn p4rt_state_path(state_file: &Path) -> PathBuf {
    let mut s = state_file.as_os_str().to_owned();
    s.push(".p4rt");
    PathBuf::from(s)
}

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// P4Runtime service setup.
    #[error("p4runtime: {0}")]
    P4Runtime(#[from] crate::p4rt::ServiceError),
    /// Fabric service setup (state file, backend).
    #[error("fabric: {0}")]
    Fabric(#[from] crate::fabric::service::OpenError),
    /// The P4Runtime state file could not be restored.
    #[error(transparent)]
    P4State(#[from] crate::p4rt::persist::PersistError),
    /// Listening or serving.
    #[error(transparent)]
    Serve(#[from] ServeError),
}

/// Both services, ready to serve.
#[derive(Debug)]
pub struct Daemon {
    /// The P4Runtime service.
    pub p4rt: P4RuntimeService,
    /// The fabric service.
    pub fabric: FabricService,
    listen: Listen,
    p4rt_state_file: Option<PathBuf>,
}

impl Daemon {
    /// Builds the services for `info` on `device`; `fabric` is the
    /// dataplane's fabric backend (`None`: configurations are validated and
    /// kept, but go nowhere).
    pub fn build(
        opts: DaemonOptions,
        info: &'static ProgramInfo,
        device: Arc<dyn Device>,
        fabric: Option<Arc<dyn FabricBackend>>,
    ) -> Result<Daemon, DaemonError> {
        let owned = FABRIC_OWNED_TABLES
            .iter()
            .filter(|t| info.table_by_name(t).is_some())
            .map(|t| (t.to_string(), "fabric".to_string()))
            .collect();
        let p4rt = P4RuntimeService::from_program(
            info,
            device,
            P4RuntimeConfig {
                device_id: opts.device_id,
                owned_tables: owned,
                owned_table_access: opts.owned_table_access,
                ..Default::default()
            },
        )?;
        let backend = fabric.unwrap_or_else(|| Arc::new(MemoryBackend::default()));
        let fabric = FabricService::open_or(backend, opts.state_file, opts.fabric_defaults)?;
        Ok(Daemon {
            p4rt,
            fabric,
            listen: opts.listen,
            p4rt_state_file: opts.p4rt_state_file,
        })
    }

    /// Restores the P4Runtime state file (if any), then binds the listener
    /// (so its address is known before serving); serve with
    /// [`Bound::serve`], passing the two services back in.
    pub async fn bind(self) -> Result<(Bound, P4RuntimeService, FabricService), DaemonError> {
        if let Some(path) = &self.p4rt_state_file {
            self.p4rt.restore(path).await?;
        }
        Ok((Bound::bind(&self.listen).await?, self.p4rt, self.fabric))
    }
}
