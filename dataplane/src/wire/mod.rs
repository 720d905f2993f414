//! Wire formats, smoltcp style: zero-copy views over byte buffers plus small
//! owned `Repr`s with `parse`/`emit`/`buffer_len`. One file per header
//! family; the layout of a whole RoCE frame is [`roce_frame::RoceHeaders`],
//! used by the RNIC ([`crate::rnic::frame`]) and by [`roce_frame`]'s builder
//! from a free description (with its decoder, the core of `roceperf`).

pub mod ethernet;
pub mod ib;
pub mod ip;
pub mod lldp;
pub mod pfc;
pub mod roce_frame;
