//! A simulated host: one port, an [`Rnic`], optionally LLDP/DCBX on its
//! port ([`SimHost::enable_dcbx`], the agent `roceperf` runs), and an
//! optional misbehaviour (a NIC stuck sending PFC pause frames, ATSCALE
//! §4.3 / R-DL-3).
//!
//! Contract: driven by the simulator like any core (`handle_frame`,
//! `poll_transmit`, `poll_timeout`, `handle_timeout`, times as
//! [`Instant`]). MAC Control frames are consumed here (R-PFC-FMT-5) and
//! handed to the RNIC as pause state; everything else goes to the RNIC.
//! Frames are whole: the RNIC writes every byte, ICRC included, and checks
//! the ICRC of what it receives.

use std::collections::VecDeque;

use crate::dcbx::host::{DataClass, DcbxMode, DcbxStatus, HostDcbx};
use crate::mac::{Mac, RxClass};
use crate::rnic::{Rnic, RnicConfig};
use crate::time::{Duration, Instant};
use crate::wire::ethernet::EthernetAddress;
use crate::wire::pfc::{MacControlRepr, PfcRepr};

/// A host that keeps sending PFC XOFF frames, as a stuck NIC does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PfcStorm {
    /// Priorities to pause (bit n = priority n).
    pub priority_mask: u8,
    /// Quanta per frame.
    pub quanta: u16,
    /// Gap between frames.
    pub interval: Duration,
    /// When the storm starts.
    pub start: Instant,
}

/// Counters of a host beyond the RNIC's own.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HostStats {
    /// PFC frames this host generated (storm).
    pub pfc_tx: u64,
    /// Frames the RNIC rejected.
    pub rx_rejected: u64,
    /// Frames the MAC consumed without effect: PAUSE/unknown MAC Control
    /// (a host honours PFC only), runts, and LLDP without a DCBX agent.
    pub mac_dropped: u64,
    /// LLDP frames sent.
    pub lldp_tx: u64,
}

/// A simulated host.
#[derive(Debug)]
pub struct SimHost {
    rnic: Rnic,
    mac: Mac,
    storm: Option<PfcStorm>,
    next_storm: Instant,
    pause_response: Duration,
    pending_pfc: VecDeque<(Instant, PfcRepr)>,
    stats: HostStats,
    dcbx: Option<HostDcbx>,
}

/// What [`SimHost::poll_transmit`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostTransmit {
    /// The frame's priority (data) or 0.
    pub priority: u8,
    /// True for a MAC Control (PFC) frame.
    pub control: bool,
}

impl SimHost {
    /// A host around an RNIC with this configuration.
    pub fn new(cfg: RnicConfig) -> Self {
        SimHost {
            mac: Mac::new(EthernetAddress(cfg.mac)),
            rnic: Rnic::new(cfg),
            storm: None,
            next_storm: Instant::ZERO,
            pause_response: Duration::ZERO,
            pending_pfc: VecDeque::new(),
            stats: HostStats::default(),
            dcbx: None,
        }
    }

    /// Runs LLDP/DCBX on the host's port from `now` ([`HostDcbx`]),
    /// advertising the RNIC's RoCE class; a willing host moves its RoCE to
    /// the class its switch advertises. [`DcbxMode::Off`] stops it.
    pub fn enable_dcbx(&mut self, mode: DcbxMode, now: Instant) {
        let c = self.rnic.config();
        let admin = DataClass {
            priority: c.data_priority,
            dscp: c.data_dscp,
        };
        self.dcbx = HostDcbx::new(mode, c.mac, c.roce_version, admin, None, now);
    }

    /// What DCBX did on this host, if it runs.
    pub fn dcbx_status(&self) -> Option<DcbxStatus> {
        self.dcbx.as_ref().map(HostDcbx::status)
    }

    /// Applies a class DCBX adopted (or gave back) to the RNIC.
    fn apply_dcbx_class(&mut self) {
        if let Some(c) = self.dcbx.as_mut().and_then(HostDcbx::poll_class_change) {
            self.rnic.set_data_class(c.priority, c.dscp);
        }
    }

    /// Delay between receiving a PFC frame and honouring it, as a real NIC
    /// has (R-PFC-RX-5 budgets this: 394 quanta ≈ 2 µs at 100 Gb/s). The
    /// host keeps transmitting meanwhile. Default zero.
    pub fn set_pause_response(&mut self, delay: Duration) {
        self.pause_response = delay;
    }

    fn apply_due_pfc(&mut self, now: Instant) {
        while let Some(&(at, repr)) = self.pending_pfc.front() {
            if at > now {
                break;
            }
            self.pending_pfc.pop_front();
            self.rnic.handle_pfc(at, &repr);
        }
    }

    /// Makes this host send PFC frames forever from `storm.start`.
    pub fn set_storm(&mut self, storm: Option<PfcStorm>) {
        self.next_storm = storm.map_or(Instant::ZERO, |s| s.start);
        self.storm = storm;
    }

    /// The RNIC.
    pub fn rnic(&self) -> &Rnic {
        &self.rnic
    }

    /// The RNIC, mutably (to add QPs).
    pub fn rnic_mut(&mut self) -> &mut Rnic {
        &mut self.rnic
    }

    /// Host counters.
    pub fn stats(&self) -> HostStats {
        self.stats
    }

    /// A frame arrived on the host's port.
    pub fn handle_frame(&mut self, now: Instant, frame: &[u8]) {
        self.apply_due_pfc(now);
        match self.mac.handle_rx(frame) {
            RxClass::Control(MacControlRepr::Pfc(p)) => {
                if self.pause_response.is_zero() {
                    self.rnic.handle_pfc(now, &p);
                } else {
                    self.pending_pfc.push_back((now + self.pause_response, p));
                }
            }
            RxClass::Control(_) | RxClass::Malformed => self.stats.mac_dropped += 1,
            RxClass::Lldp => match self.dcbx.as_mut() {
                Some(d) => {
                    d.handle_frame(frame, now);
                    self.apply_dcbx_class();
                }
                None => self.stats.mac_dropped += 1,
            },
            RxClass::Data => {
                if self.rnic.handle_frame(now, frame).is_err() {
                    self.stats.rx_rejected += 1;
                }
            }
        }
    }

    /// Writes the next frame to put on the wire into `out`, if one may
    /// start now.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant, out: &mut Vec<u8>) -> Option<HostTransmit> {
        self.apply_due_pfc(now);
        if let Some(s) = self.storm
            && now >= self.next_storm
        {
            self.next_storm = now + s.interval;
            let repr = PfcRepr::xoff(s.priority_mask, s.quanta);
            out.clear();
            out.resize(crate::wire::pfc::FRAME_LEN, 0);
            let n = self.mac.emit_pfc(&repr, out).ok()?;
            out.truncate(n);
            self.stats.pfc_tx += 1;
            return Some(HostTransmit {
                priority: 0,
                control: true,
            });
        }
        if let Some(f) = self.dcbx.as_mut().and_then(|d| d.poll_transmit(now)) {
            out.clear();
            out.extend_from_slice(f);
            self.stats.lldp_tx += 1;
            // A neighbour that aged out gives the host its own class back.
            self.apply_dcbx_class();
            return Some(HostTransmit {
                priority: 0,
                control: false,
            });
        }
        // The RNIC writes straight into `out`, sized for its longest frame:
        // a pooled buffer that held a frame grows by a few bytes at most.
        out.resize(self.rnic.max_frame_len(), 0);
        let t = self.rnic.poll_transmit(now, out)?;
        debug_assert_eq!(t.written_len, t.frame_len, "a whole frame fits");
        out.truncate(t.written_len);
        Some(HostTransmit {
            priority: t.priority,
            control: false,
        })
    }

    /// When to call again.
    #[must_use]
    pub fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        let mut t = self.rnic.poll_timeout(now);
        let mut take = |x: Instant| t = Some(t.map_or(x, |y| y.min(x)));
        if self.storm.is_some() {
            take(self.next_storm);
        }
        if let Some(&(at, _)) = self.pending_pfc.front() {
            take(at);
        }
        if let Some(at) = self.dcbx.as_ref().and_then(HostDcbx::poll_timeout) {
            take(at);
        }
        t
    }

    /// Runs due timers.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.apply_due_pfc(now);
        self.rnic.handle_timeout(now);
    }
}
