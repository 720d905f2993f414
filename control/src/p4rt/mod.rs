//! The `p4.v1.P4Runtime` service (reference `p4runtime-subset.md`).
//!
//! One concern per module: [`bytes`] (canonical byte strings), [`error`]
//! (status codes and the Write error shape), [`translate`] (validated
//! proto ↔ runtime conversion), [`write`](mod@write) (update decoding and atomic
//! batches), [`read`] (entity selection and wildcards), [`arbitration`]
//! (primary/backup election), [`roles`] (what each role may
//! write), [`pipeline`] (P4Info verification), [`pre`]
//! (multicast groups and clone sessions), [`oneshot`] (one-shot action
//! selector programming), [`watch`] (group members' watch ports),
//! [`packet_io`] (controller
//! headers), [`digest`] (digest batching and acks), [`persist`] (the state
//! file that survives restarts) and [`service`] (the tonic glue).

pub mod arbitration;
pub mod bytes;
pub mod digest;
pub mod error;
pub mod loader;
pub mod oneshot;
pub mod packet_io;
pub mod persist;
pub mod pipeline;
pub mod pre;
pub mod read;
pub mod roles;
pub mod service;
pub mod translate;
pub mod watch;
pub mod write;

pub use error::P4Error;
pub use service::{P4RuntimeConfig, P4RuntimeService, RestoreReport, ServiceError, WriteStats};
