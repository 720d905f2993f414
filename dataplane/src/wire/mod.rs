//! Wire formats, smoltcp style: zero-copy views over byte buffers plus small
//! owned `Repr`s with `parse`/`emit`/`buffer_len`.

pub mod ethernet;
pub mod ip;
pub mod lldp;
pub mod pfc;
pub mod roce;
