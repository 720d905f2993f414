//! The STF runner (in progress): the STF parser, value decoding and packet
//! expectations are here; the runner lands once the runtime's control-plane
//! API is implemented.

pub mod expect;
pub mod parse;
pub mod value;
