//! The fabric QoS service (`roceswitch.fabric.v1.FabricQos`): the QoS
//! intent of a lossless RoCE fabric, owned here and not by P4Runtime
//! (DESIGN "Who owns what").
//!
//! [`config`] is the model (shared with the dataplane and the simulator,
//! [`dataplane::fabric`]) plus atomic persistence; [`backend`] is the seam
//! to the dataplane, [`switch_backend`] its implementation on a running
//! switch (one [`dataplane::fabric::SwitchPlan`] per change, applied in one
//! dataplane job); [`convert`] maps the protobuf messages to the model;
//! [`service`] is the tonic glue, [`trace`] its packet-trace stream.

pub mod backend;
pub mod config;
pub mod convert;
pub mod service;
pub mod switch_backend;
pub mod trace;

pub use backend::{
    BackendError, CounterSet, FabricBackend, MemoryBackend, PgCounters, PortCounters,
    PriorityCounters, QueueCounters, SecurityDrops, TraceTap,
};
pub use config::{ConfigError, FabricConfig};
pub use dataplane::fabric::FABRIC_OWNED_TABLES;
pub use service::FabricService;
pub use switch_backend::SwitchBackend;
