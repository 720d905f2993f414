//! The tonic implementation of `roceswitch.fabric.v1.FabricQos`.
//!
//! Every Set builds the complete next configuration (the current one with
//! one section replaced), validates it as a whole (INVALID_ARGUMENT listing
//! every problem with its field), persists it atomically, then hands it to
//! the [`FabricBackend`]. If the backend refuses, the previous state file is
//! restored and nothing changes. Sets are serialised; each applied Set bumps
//! the generation and publishes a `ConfigApplied` event. Other components
//! (the watchdog) publish storm/restore events through [`FabricService::events`].

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use proto::roceswitch::fabric::v1 as pb;
use proto::roceswitch::fabric::v1::fabric_qos_server::{FabricQos, FabricQosServer};
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};

use super::backend::{BackendError, FabricBackend};
use super::config::{FabricConfig, PersistError, join};
use super::convert;

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The state file exists but is unreadable or invalid.
    #[error(transparent)]
    Persist(#[from] PersistError),
    /// The dataplane refused the stored configuration.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

struct State {
    config: FabricConfig,
    generation: u64,
}

struct Inner {
    state: tokio::sync::Mutex<State>,
    backend: Arc<dyn FabricBackend>,
    state_file: Option<PathBuf>,
    events: broadcast::Sender<pb::Event>,
}

/// The fabric QoS service.
#[derive(Clone)]
pub struct FabricService {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for FabricService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FabricService")
            .field("state_file", &self.inner.state_file)
            .finish_non_exhaustive()
    }
}

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl FabricService {
    /// Starts from `state_file` if it exists (else the defaults), applies
    /// that configuration to `backend`.
    pub fn open(
        backend: Arc<dyn FabricBackend>,
        state_file: Option<PathBuf>,
    ) -> Result<Self, OpenError> {
        Self::open_or(backend, state_file, FabricConfig::default())
    }

    /// Starts from `state_file` if it exists, else from `defaults`; applies
    /// that configuration to `backend`.
    pub fn open_or(
        backend: Arc<dyn FabricBackend>,
        state_file: Option<PathBuf>,
        defaults: FabricConfig,
    ) -> Result<Self, OpenError> {
        let config = match &state_file {
            Some(p) if p.exists() => super::config::load(p)?,
            _ => defaults,
        };
        backend.apply(&config)?;
        let (events, _) = broadcast::channel(256);
        Ok(FabricService {
            inner: Arc::new(Inner {
                state: tokio::sync::Mutex::new(State {
                    config,
                    generation: 0,
                }),
                backend,
                state_file,
                events,
            }),
        })
    }

    /// The tonic server wrapper.
    pub fn into_server(self) -> FabricQosServer<Self> {
        FabricQosServer::new(self)
    }

    /// Where events are published (subscribers: WatchEvents streams).
    pub fn events(&self) -> broadcast::Sender<pb::Event> {
        self.inner.events.clone()
    }

    /// The current configuration.
    pub async fn config(&self) -> FabricConfig {
        self.inner.state.lock().await.config.clone()
    }

    async fn set(
        &self,
        section: &str,
        next: impl FnOnce(&FabricConfig) -> FabricConfig,
    ) -> Result<Response<pb::SetReply>, Status> {
        let inner = &self.inner;
        let mut st = inner.state.lock().await;
        let new = next(&st.config);
        let errors = new.validate();
        if !errors.is_empty() {
            return Err(Status::invalid_argument(format!(
                "{} problem(s) in the {section} configuration: {}",
                errors.len(),
                join(&errors)
            )));
        }
        if new == st.config {
            return Ok(Response::new(pb::SetReply {
                generation: st.generation,
            }));
        }
        if let Some(path) = &inner.state_file {
            super::config::save(&new, path).map_err(|e| Status::internal(e.to_string()))?;
        }
        if let Err(e) = inner.backend.apply(&new) {
            if let Some(path) = &inner.state_file
                && let Err(pe) = super::config::save(&st.config, path)
            {
                tracing::error!(error = %pe, "could not restore the state file");
            }
            return Err(match e {
                BackendError::Unsupported(_) => Status::failed_precondition(e.to_string()),
                BackendError::Unavailable(_) => Status::unavailable(e.to_string()),
            });
        }
        st.config = new;
        st.generation += 1;
        tracing::info!(
            section,
            generation = st.generation,
            "fabric configuration applied"
        );
        let _ = inner.events.send(pb::Event {
            timestamp_ns: now_ns(),
            kind: Some(pb::event::Kind::ConfigApplied(pb::ConfigApplied {
                generation: st.generation,
                section: section.into(),
            })),
        });
        Ok(Response::new(pb::SetReply {
            generation: st.generation,
        }))
    }
}

type TraceStream = Pin<Box<dyn Stream<Item = Result<pb::TraceReply, Status>> + Send + 'static>>;
type EventStream = Pin<Box<dyn Stream<Item = Result<pb::Event, Status>> + Send + 'static>>;

#[tonic::async_trait]
impl FabricQos for FabricService {
    async fn get_config(
        &self,
        _: Request<pb::GetConfigRequest>,
    ) -> Result<Response<pb::FabricConfig>, Status> {
        Ok(Response::new(convert::config_to(&self.config().await)))
    }

    async fn set_config(
        &self,
        r: Request<pb::FabricConfig>,
    ) -> Result<Response<pb::SetReply>, Status> {
        let c = r.into_inner();
        self.set("whole", |cur| convert::config_from(&c, cur)).await
    }

    async fn get_ports(
        &self,
        _: Request<pb::GetConfigRequest>,
    ) -> Result<Response<pb::PortsConfig>, Status> {
        Ok(Response::new(convert::ports_to(&self.config().await.ports)))
    }

    async fn set_ports(
        &self,
        r: Request<pb::PortsConfig>,
    ) -> Result<Response<pb::SetReply>, Status> {
        let ports = convert::ports_from(&r.into_inner());
        self.set("ports", |cur| FabricConfig {
            ports,
            ..cur.clone()
        })
        .await
    }

    async fn get_qos_maps(
        &self,
        _: Request<pb::GetConfigRequest>,
    ) -> Result<Response<pb::QosMaps>, Status> {
        Ok(Response::new(convert::maps_to(
            &self.config().await.qos_maps,
        )))
    }

    async fn set_qos_maps(
        &self,
        r: Request<pb::QosMaps>,
    ) -> Result<Response<pb::SetReply>, Status> {
        let qos_maps = convert::maps_from(&r.into_inner());
        self.set("qos_maps", |cur| FabricConfig {
            qos_maps,
            ..cur.clone()
        })
        .await
    }

    async fn get_buffer(
        &self,
        _: Request<pb::GetConfigRequest>,
    ) -> Result<Response<pb::BufferConfig>, Status> {
        Ok(Response::new(convert::buffer_to(
            &self.config().await.buffer,
        )))
    }

    async fn set_buffer(
        &self,
        r: Request<pb::BufferConfig>,
    ) -> Result<Response<pb::SetReply>, Status> {
        let buffer = convert::buffer_from(&r.into_inner());
        self.set("buffer", |cur| FabricConfig {
            buffer,
            ..cur.clone()
        })
        .await
    }

    async fn get_ecn(
        &self,
        _: Request<pb::GetConfigRequest>,
    ) -> Result<Response<pb::EcnConfig>, Status> {
        Ok(Response::new(convert::ecn_to(&self.config().await.ecn)))
    }

    async fn set_ecn(&self, r: Request<pb::EcnConfig>) -> Result<Response<pb::SetReply>, Status> {
        let ecn = convert::ecn_from(&r.into_inner());
        self.set("ecn", |cur| FabricConfig { ecn, ..cur.clone() })
            .await
    }

    async fn get_ets(
        &self,
        _: Request<pb::GetConfigRequest>,
    ) -> Result<Response<pb::EtsConfig>, Status> {
        Ok(Response::new(convert::ets_to(&self.config().await.ets)))
    }

    async fn set_ets(&self, r: Request<pb::EtsConfig>) -> Result<Response<pb::SetReply>, Status> {
        let ets = convert::ets_from(&r.into_inner());
        self.set("ets", |cur| FabricConfig { ets, ..cur.clone() })
            .await
    }

    async fn get_watchdog(
        &self,
        _: Request<pb::GetConfigRequest>,
    ) -> Result<Response<pb::WatchdogConfig>, Status> {
        Ok(Response::new(convert::watchdog_to(
            &self.config().await.watchdog,
        )))
    }

    async fn set_watchdog(
        &self,
        r: Request<pb::WatchdogConfig>,
    ) -> Result<Response<pb::SetReply>, Status> {
        let watchdog = convert::watchdog_from(&r.into_inner());
        self.set("watchdog", |cur| FabricConfig {
            watchdog,
            ..cur.clone()
        })
        .await
    }

    async fn get_dcbx(
        &self,
        _: Request<pb::GetConfigRequest>,
    ) -> Result<Response<pb::DcbxConfig>, Status> {
        Ok(Response::new(convert::dcbx_to(&self.config().await.dcbx)))
    }

    async fn set_dcbx(&self, r: Request<pb::DcbxConfig>) -> Result<Response<pb::SetReply>, Status> {
        let dcbx = convert::dcbx_from(&r.into_inner());
        self.set("dcbx", |cur| FabricConfig {
            dcbx,
            ..cur.clone()
        })
        .await
    }

    async fn get_security(
        &self,
        _: Request<pb::GetConfigRequest>,
    ) -> Result<Response<pb::SecurityConfig>, Status> {
        Ok(Response::new(convert::security_to(
            &self.config().await.security,
        )))
    }

    async fn set_security(
        &self,
        r: Request<pb::SecurityConfig>,
    ) -> Result<Response<pb::SetReply>, Status> {
        let security = convert::security_from(&r.into_inner());
        self.set("security", |cur| FabricConfig {
            security,
            ..cur.clone()
        })
        .await
    }

    async fn get_dcbx_status(
        &self,
        _: Request<pb::GetConfigRequest>,
    ) -> Result<Response<pb::DcbxStatusReply>, Status> {
        let ports = self
            .inner
            .backend
            .dcbx()
            .iter()
            .map(|(p, a)| convert::dcbx_status_to(*p, a))
            .collect();
        Ok(Response::new(pb::DcbxStatusReply { ports }))
    }

    async fn get_pause_state(
        &self,
        _: Request<pb::GetConfigRequest>,
    ) -> Result<Response<pb::PauseStateReply>, Status> {
        let snap = self.inner.backend.pause_state();
        let change = |kind: pb::PauseKind| {
            move |&(port, priority): &(u16, u8)| pb::PauseChange {
                port: port.into(),
                priority: priority.into(),
                kind: kind as i32,
                active: true,
            }
        };
        let mut active: Vec<pb::PauseChange> = snap
            .egress_paused
            .iter()
            .map(change(pb::PauseKind::EgressPaused))
            .collect();
        active.extend(
            snap.ingress_xoff
                .iter()
                .map(change(pb::PauseKind::IngressXoff)),
        );
        let storms = snap
            .storms
            .iter()
            .map(|&(port, priority)| pb::WatchdogStorm {
                port: port.into(),
                priority: priority.into(),
            })
            .collect();
        Ok(Response::new(pb::PauseStateReply { active, storms }))
    }

    async fn get_counters(
        &self,
        r: Request<pb::CountersRequest>,
    ) -> Result<Response<pb::CountersReply>, Status> {
        let ports: Vec<u16> = r
            .into_inner()
            .ports
            .into_iter()
            .map(|p| {
                u16::try_from(p).map_err(|_| {
                    Status::invalid_argument(format!("ports: {p} is not a port number"))
                })
            })
            .collect::<Result<_, _>>()?;
        // The backend may block on the dataplane thread.
        let backend = self.inner.backend.clone();
        let set = tokio::task::spawn_blocking(move || backend.counter_set(&ports))
            .await
            .map_err(|e| Status::internal(format!("reading counters: {e}")))?;
        Ok(Response::new(convert::counter_set_to(&set)))
    }

    type WatchEventsStream = EventStream;

    async fn watch_events(
        &self,
        _: Request<pb::WatchEventsRequest>,
    ) -> Result<Response<Self::WatchEventsStream>, Status> {
        let stream = BroadcastStream::new(self.inner.events.subscribe()).filter_map(|e| match e {
            Ok(ev) => Some(Ok(ev)),
            Err(tokio_stream::wrappers::errors::BroadcastStreamRecvError::Lagged(n)) => {
                tracing::warn!(lost = n, "event subscriber lagged");
                None
            }
        });
        Ok(Response::new(Box::pin(stream)))
    }

    type TraceStream = TraceStream;

    async fn trace(
        &self,
        r: Request<pb::TraceRequest>,
    ) -> Result<Response<Self::TraceStream>, Status> {
        let rx = super::trace::start(self.inner.backend.clone(), r.into_inner())?;
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }
}
