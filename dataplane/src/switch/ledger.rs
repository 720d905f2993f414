//! Conservation accounting: where every frame the switch was given went.
//!
//! The law, per ingress port (the row a frame and all its copies are
//! charged to):
//!
//! ```text
//! arrived + copies = consumed + forwarded + packet_in + dropped + queued + recirculating
//! ```
//!
//! - `arrived`: frames that reached the port: read by the switch
//!   ([`super::Switch::handle_frame`]) or lost by the kernel before it
//!   could read them ([`super::Switch::handle_rx_lost`], counted as dropped
//!   by [`SwitchDrop::KernelRing`]);
//! - `copies`: extra copies the pipeline made of them (multicast replicas
//!   beyond the first, I2E and E2E clones, counted even when the clone
//!   session is missing, then as dropped);
//! - `consumed`: MAC Control (PFC, PAUSE) and LLDP frames, which end in the
//!   switch by design;
//! - `forwarded`: copies transmitted, per egress priority;
//! - `packet_in`: copies handed to the controller;
//! - `dropped`: copies that went nowhere, by [`SwitchDrop`] (there is no
//!   "other");
//! - `queued`: copies in the traffic manager now, per priority;
//! - `recirculating`: copies deparsed and waiting to re-enter ingress.
//!
//! And per (ingress port, priority), for the copies handed to the traffic
//! manager: `offered = forwarded + dropped + recirculated + queued`
//! ([`PrioLedger`]).
//!
//! Frames a packet-out injected and frames received on a port the switch
//! does not have are charged to [`Ledger::controller`]. Frames the switch
//! makes itself (PFC, LLDP) are not in the law: they are counted in
//! [`super::SwitchStats::tx_frames`].
//!
//! Contract: plain counters, no allocation on the packet path (the rows are
//! allocated with the switch); [`Ledger::check`] allocates only for the
//! report of a broken law.

use super::SwitchDrop;

/// One ingress row of the ledger.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortLedger {
    /// Frames that reached the port (read, or lost in the kernel's ring).
    pub arrived: u64,
    /// Extra copies made (replicas beyond the first, clones).
    pub copies: u64,
    /// MAC Control and LLDP frames, ended by design.
    pub consumed: u64,
    /// Copies handed to the controller.
    pub packet_in: u64,
    /// Copies dropped, by [`SwitchDrop`] index.
    pub dropped: [u64; SwitchDrop::COUNT],
    /// Copies deparsed and waiting to re-enter ingress.
    pub recirculating: u64,
    /// The traffic manager's share, per priority.
    pub priorities: [PrioLedger; 8],
}

/// Copies of one ingress row handed to the traffic manager at one priority.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrioLedger {
    /// Copies handed to the traffic manager.
    pub offered: u64,
    /// Copies transmitted.
    pub forwarded: u64,
    /// Copies dropped: at admission, flushed while queued, or by the P4
    /// egress after leaving the queue (their reasons are in
    /// [`PortLedger::dropped`]).
    pub dropped: u64,
    /// Copies that left the queue to be recirculated.
    pub recirculated: u64,
    /// Copies in the traffic manager now.
    pub queued: u64,
}

impl PrioLedger {
    /// `offered − (forwarded + dropped + recirculated + queued)`: zero when
    /// the law holds.
    pub fn imbalance(&self) -> i128 {
        i128::from(self.offered)
            - i128::from(self.forwarded)
            - i128::from(self.dropped)
            - i128::from(self.recirculated)
            - i128::from(self.queued)
    }
}

impl PortLedger {
    /// Frames and copies the row is charged with.
    pub fn inputs(&self) -> u64 {
        self.arrived + self.copies
    }

    /// Copies transmitted, all priorities.
    pub fn forwarded(&self) -> u64 {
        self.priorities.iter().map(|p| p.forwarded).sum()
    }

    /// Copies queued in the traffic manager, all priorities.
    pub fn queued(&self) -> u64 {
        self.priorities.iter().map(|p| p.queued).sum()
    }

    /// Copies dropped, all reasons.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }

    /// Copies dropped for one reason.
    pub fn dropped(&self, reason: SwitchDrop) -> u64 {
        self.dropped[reason as usize]
    }

    /// Where the row's frames and copies went, summed.
    pub fn outcomes(&self) -> u64 {
        self.consumed
            + self.forwarded()
            + self.packet_in
            + self.dropped_total()
            + self.queued()
            + self.recirculating
    }

    pub(super) fn prio(&mut self, priority: u8) -> &mut PrioLedger {
        &mut self.priorities[usize::from(priority & 7)]
    }
}

/// The whole switch's ledger: one row per front-panel port and one for
/// the controller (packet-outs) and ports the switch does not have.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Row `i` is front-panel port `i`.
    pub ports: Vec<PortLedger>,
    /// Packet-outs and frames received on ports the switch does not have.
    pub controller: PortLedger,
}

/// Which row broke the law, and by how much.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("conservation broken on {}: {detail}", match port { Some(p) => format!("port {p}"), None => "the controller row".to_string() })]
pub struct Imbalance {
    /// The port (`None`: the controller row).
    pub port: Option<u16>,
    /// Which equation and its two sides.
    pub detail: String,
}

impl Ledger {
    pub(super) fn new(ports: usize) -> Self {
        Ledger {
            ports: vec![PortLedger::default(); ports],
            controller: PortLedger::default(),
        }
    }

    /// The row frames from `port` are charged to.
    pub(super) fn row(&mut self, port: u16) -> &mut PortLedger {
        match self.ports.get_mut(usize::from(port)) {
            Some(row) => row,
            None => &mut self.controller,
        }
    }

    /// Every row summed.
    pub fn total(&self) -> PortLedger {
        let mut t = PortLedger::default();
        for r in self.ports.iter().chain([&self.controller]) {
            t.arrived += r.arrived;
            t.copies += r.copies;
            t.consumed += r.consumed;
            t.packet_in += r.packet_in;
            t.recirculating += r.recirculating;
            for (a, b) in t.dropped.iter_mut().zip(r.dropped) {
                *a += b;
            }
            for (a, b) in t.priorities.iter_mut().zip(r.priorities) {
                a.offered += b.offered;
                a.forwarded += b.forwarded;
                a.dropped += b.dropped;
                a.recirculated += b.recirculated;
                a.queued += b.queued;
            }
        }
        t
    }

    /// Checks the law on every row and every (row, priority).
    pub fn check(&self) -> Result<(), Imbalance> {
        let rows = self
            .ports
            .iter()
            .enumerate()
            .map(|(i, r)| (Some(i as u16), r))
            .chain([(None, &self.controller)]);
        for (port, r) in rows {
            if r.inputs() != r.outcomes() {
                return Err(Imbalance {
                    port,
                    detail: format!(
                        "arrived {} + copies {} != consumed {} + forwarded {} + packet_in {} \
                         + dropped {} + queued {} + recirculating {}",
                        r.arrived,
                        r.copies,
                        r.consumed,
                        r.forwarded(),
                        r.packet_in,
                        r.dropped_total(),
                        r.queued(),
                        r.recirculating
                    ),
                });
            }
            for (p, pl) in r.priorities.iter().enumerate() {
                if pl.imbalance() != 0 {
                    return Err(Imbalance {
                        port,
                        detail: format!("priority {p}: {pl:?}"),
                    });
                }
            }
        }
        Ok(())
    }
}
