//! The compiler benchmark's two routers: `basic_router.p4` compiled by
//! `p4-to-rust` ([`compiled`]) and the same logic written by hand in plain
//! Rust ([`HandRouter`]), over the same table engines, so that the
//! benchmark's ratio measures what code generation costs.
//!
//! Both take an Ethernet frame and return the egress port and the rewritten
//! frame, or `None` for a drop.

#![warn(missing_docs, unreachable_pub)]

pub mod workload;

use p4_target::info::ProgramInfo;
use p4_target::runtime::EntryAction;
use p4_target::table::Table;

/// `basic_router.p4` as generated Rust.
#[allow(missing_docs, unreachable_pub, clippy::all)]
pub mod compiled {
    include!(concat!(env!("OUT_DIR"), "/basic_router.rs"));
}

/// `basic_router.p4` generated without packet-trace points
/// (`p4-to-rust compile --no-trace-points`): what the points cost is the
/// difference to [`compiled`].
#[allow(missing_docs, unreachable_pub, clippy::all)]
pub mod untraced {
    include!(concat!(env!("OUT_DIR"), "/basic_router_untraced.rs"));
}

/// The router written by hand: the same parse, ACL, LPM, TTL and checksum
/// steps as `basic_router.p4`.
#[derive(Debug)]
pub struct HandRouter {
    /// `RouterIngress.acl` (ternary: src, dst, protocol, L4 dst port).
    pub acl: Table,
    /// `RouterIngress.ipv4_lpm`.
    pub lpm: Table,
    drop_id: u32,
    set_nhop_id: u32,
}

impl HandRouter {
    /// Empty tables shaped like the program's.
    pub fn new(info: &'static ProgramInfo) -> Self {
        let table = |name| Table::with_program(info.table_by_name(name).expect("table"), info);
        HandRouter {
            acl: table("acl"),
            lpm: table("ipv4_lpm"),
            drop_id: info.action_by_name("drop").expect("action").id,
            set_nhop_id: info.action_by_name("set_nhop").expect("action").id,
        }
    }

    /// Routes `frame`; writes the outgoing frame into `out`.
    pub fn process(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Option<u16> {
        if frame.len() < 34 || frame[12..14] != [0x08, 0x00] || frame[22] <= 1 {
            return None;
        }
        let proto = frame[23];
        let src = u32::from_be_bytes([frame[26], frame[27], frame[28], frame[29]]);
        let dst = u32::from_be_bytes([frame[30], frame[31], frame[32], frame[33]]);
        let dport = if (proto == 6 || proto == 17) && frame.len() >= 38 {
            u16::from_be_bytes([frame[36], frame[37]])
        } else {
            0
        };
        let len = frame.len() as u32;
        let acl_key = [
            u128::from(src),
            u128::from(dst),
            u128::from(proto),
            u128::from(dport),
        ];
        if let EntryAction::Direct(call) = self.acl.lookup(&acl_key, len).action
            && call.action_id == self.drop_id
        {
            return None;
        }
        let (port, dmac) = match self.lpm.lookup(&[u128::from(dst)], len).action {
            EntryAction::Direct(call) if call.action_id == self.set_nhop_id => {
                (call.params[0] as u16, call.params[1] as u64)
            }
            _ => return None,
        };
        out.clear();
        out.extend_from_slice(frame);
        out.copy_within(0..6, 6);
        out[..6].copy_from_slice(&dmac.to_be_bytes()[2..]);
        out[22] -= 1;
        out[24] = 0;
        out[25] = 0;
        let mut sum: u32 = out[14..34]
            .chunks_exact(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        out[24..26].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        Some(port)
    }
}
