//! The fabric QoS service (`roceswitch.fabric.v1.FabricQos`): the QoS
//! intent of a lossless RoCE fabric, owned here and not by P4Runtime
//! (DESIGN "Who owns what").
//!
//! [`config`] is the plain model with whole-config validation and atomic
//! persistence; [`backend`] is the seam to the dataplane (traffic manager
//! and the fabric-owned P4 tables); [`convert`] maps the protobuf messages
//! to the model; [`service`] is the tonic glue.

pub mod backend;
pub mod config;
pub mod convert;
pub mod p4_tables;
pub mod service;

pub use backend::{BackendError, ChainBackend, FabricBackend, MemoryBackend, PriorityCounters};
pub use config::{ConfigError, FabricConfig};
pub use p4_tables::{FABRIC_OWNED_TABLES, P4TablesBackend};
pub use service::FabricService;
