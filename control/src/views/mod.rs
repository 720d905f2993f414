//! What `rocectl` prints, as library code the binary only calls: each
//! view turns a model or a reply into a table for people and a JSON value
//! for scripts.
//!
//! Contract: pure functions from data to `String` / `serde_json::Value`;
//! no I/O. Column layouts follow the tools engineers know (SONiC `show`
//! commands, `ethtool -S`, `lldptool`), named in each view's doc.

pub mod budget;
pub mod counters;
pub mod dcbx;
pub mod events;
pub mod security;
pub mod top;
