//! Deterministic discrete-event fabric simulator (in progress).

pub mod event;
pub mod forward;
pub mod record;
