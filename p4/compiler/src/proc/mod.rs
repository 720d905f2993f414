//! Shared analyses.
pub mod ids;
