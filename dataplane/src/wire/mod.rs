//! Wire formats, smoltcp style: zero-copy views over byte buffers plus small
//! owned `Repr`s with `parse`/`emit`/`buffer_len`. One file per header
//! family; whole RoCE frames are built where they are sent
//! ([`crate::rnic::frame`]), and from a free description by
//! [`roce_frame`] (the frame builder and decoder of `roceperf`).

pub mod ethernet;
pub mod ib;
pub mod ip;
pub mod lldp;
pub mod pfc;
pub mod roce_frame;
