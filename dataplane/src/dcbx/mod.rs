//! DCBX over LLDP for one port (IEEE 802.1AB transmit/receive, IEEE
//! 802.1Qaz DCBX): what a port advertises (ETS, PFC, application
//! priorities), what its neighbour advertises, whether the two match, and
//! for a *willing* port the parameters it adopts. Switch ports and host
//! agents run the same [`PortAgent`].
//!
//! Contract: sans-IO, like every core here: inputs `handle_*(.., now)`,
//! outputs `poll_transmit` (writes a whole Ethernet frame into a buffer the
//! caller owns), `poll_event`, `poll_timeout`; `now` must not go back. No
//! panics on any input; a malformed LLDPDU is counted and ignored.
//! Allocates per received or sent LLDPDU (control traffic).
//!
//! Transmission (802.1AB-2016 9.2.5, defaults of 9.2.5.x): a frame at
//! start, then every `msgTxInterval` (30 s); `txFastInit` (4) frames
//! `msgFastTx` (1 s) apart when a new neighbour appears (fast start); a
//! local change is sent at once; at most `txCreditMax` (5) frames in a
//! burst, one credit back per second. TTL = min(65535, msgTxInterval ·
//! msgTxHold + 1) (9.2.5.22). A neighbour is forgotten when its TTL runs
//! out (rxInfoAge) or on a TTL-0 frame (shutdown).
//!
//! DCBX (802.1Qaz 38.x, D.2): ETS is asymmetric (a willing port adopts the
//! peer's ETS Recommendation), PFC and application priorities are
//! symmetric (a willing port adopts the peer's PFC Configuration and
//! Application Priority TLVs when the peer is not willing; when both are
//! willing, the port with the numerically lower chassis MAC keeps its own
//! and the other adopts). **Project choice:** a willing port advertises the
//! parameters it *operates* with, so a switch sees a corrected host match
//! (lldpad advertises its admin values).
//!
//! Matching (what `rocectl dcbx` shows): the neighbour's PFC enable bitmap
//! against ours, its application priority for RoCE v2 (UDP 4791) against
//! ours (and for RoCE v1, EtherType 0x8915, if it names one), and its ETS priority → traffic class table
//! against ours; a TLV the neighbour does not send is not compared.

use std::collections::VecDeque;

pub mod host;

use crate::time::{Duration, Instant};
use crate::wire::ethernet::EthernetAddress;
use crate::wire::lldp::{
    self, AppEntry, AppSelector, ChassisId, EtsRepr, LldpRepr, PfcConfigRepr, PortId,
};

/// 802.1AB `msgTxInterval` default.
pub const TX_INTERVAL: Duration = Duration::from_secs(30);
/// 802.1AB `msgFastTx` default.
pub const FAST_TX: Duration = Duration::from_secs(1);
/// 802.1AB `msgTxHold` default.
pub const TX_HOLD: u16 = 4;
/// 802.1AB `txFastInit` default.
pub const TX_FAST_INIT: u8 = 4;
/// 802.1AB `txCreditMax` default.
pub const TX_CREDIT_MAX: u8 = 5;

/// The DCB parameters a port runs with and advertises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DcbParams {
    /// ETS: priority → TC, TC bandwidth, TSA (`willing` is the port's).
    pub ets: EtsRepr,
    /// PFC enable bitmap (bit p = priority p).
    pub pfc_enable: u8,
    /// Traffic classes PFC can be enabled on at once.
    pub pfc_cap: u8,
    /// Application priorities (RoCE v2 on UDP 4791, v1 on EtherType 0x8915, ...).
    pub app: Vec<AppEntry>,
}

impl Default for DcbParams {
    /// Priority 3 lossless, RoCE on priority 3 (R-MAP-2), 8 TCs identity,
    /// ETS shares equal over the TCs but 6 (strict, CNPs).
    fn default() -> Self {
        DcbParams {
            ets: EtsRepr {
                willing: false,
                cbs: false,
                max_tcs: 8,
                prio_tc: [0, 1, 2, 3, 4, 5, 6, 7],
                tc_bw: [15, 15, 14, 14, 14, 14, 0, 14],
                tsa: [2, 2, 2, 2, 2, 2, 0, 2],
            },
            pfc_enable: 1 << 3,
            pfc_cap: 8,
            app: vec![AppEntry::rocev2(3), AppEntry::rocev1(3)],
        }
    }
}

impl DcbParams {
    /// The priority of RoCE v2 (UDP 4791) traffic, if an entry names one.
    pub fn rocev2_priority(&self) -> Option<u8> {
        app_priority(&self.app, AppSelector::Udp, 4791)
    }

    /// The priority of RoCE v1 (EtherType 0x8915) traffic, if an entry names one.
    pub fn rocev1_priority(&self) -> Option<u8> {
        app_priority(&self.app, AppSelector::EtherType, 0x8915)
    }

    /// The DSCP a RoCE v2 sender should mark to land on `priority`: a DSCP
    /// application entry for it if there is one, else `priority << 3 | 2`
    /// (26 for priority 3, the NIC convention of R-MAP-2).
    pub fn dscp_for(&self, priority: u8) -> u8 {
        self.app
            .iter()
            .find(|a| a.selector == AppSelector::Dscp && a.priority == priority)
            .map_or(((priority & 7) << 3) | 2, |a| (a.protocol & 0x3f) as u8)
    }
}

fn app_priority(app: &[AppEntry], selector: AppSelector, protocol: u16) -> Option<u8> {
    app.iter()
        .find(|a| {
            a.protocol == protocol
                && (a.selector == selector
                    || (a.selector == AppSelector::TcpUdp && selector == AppSelector::Udp))
        })
        .map(|a| a.priority)
}

/// Identity and behaviour of one port's agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentConfig {
    /// Source MAC of LLDP frames.
    pub mac: EthernetAddress,
    /// Chassis ID (the switch's name, or the host's MAC).
    pub chassis: ChassisId,
    /// Port ID (a switch's port number, or the host's MAC).
    pub port: PortId,
    /// Port Description TLV (e.g. the interface name).
    pub port_description: Option<String>,
    /// System Name TLV.
    pub system_name: Option<String>,
    /// Willing to adopt the neighbour's parameters (hosts: yes, switches: no).
    pub willing: bool,
    /// The administrator's parameters.
    pub admin: DcbParams,
    /// `msgTxInterval`.
    pub tx_interval: Duration,
    /// `msgFastTx`.
    pub fast_tx: Duration,
}

impl AgentConfig {
    /// A port with the 802.1AB default timers.
    pub fn new(mac: EthernetAddress, chassis: ChassisId, port: PortId, admin: DcbParams) -> Self {
        AgentConfig {
            mac,
            chassis,
            port,
            port_description: None,
            system_name: None,
            willing: false,
            admin,
            tx_interval: TX_INTERVAL,
            fast_tx: FAST_TX,
        }
    }

    /// TTL the port advertises, seconds.
    pub fn ttl_s(&self) -> u16 {
        let s = self.tx_interval.as_secs_f64().ceil() as u64 * u64::from(TX_HOLD) + 1;
        u16::try_from(s).unwrap_or(u16::MAX)
    }
}

/// What a neighbour advertised, as last received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbor {
    /// Its source MAC.
    pub mac: EthernetAddress,
    /// The LLDPDU.
    pub lldp: LldpRepr,
    /// When it was first seen.
    pub since: Instant,
    /// When it is forgotten unless refreshed.
    pub expires: Instant,
}

impl Neighbor {
    /// Its PFC enable bitmap, if it sent a PFC Configuration TLV.
    pub fn pfc_enable(&self) -> Option<u8> {
        self.lldp.pfc.map(|p| p.enable)
    }

    /// Its RoCE v2 application priority, if it sent one.
    pub fn rocev2_priority(&self) -> Option<u8> {
        self.lldp
            .app
            .as_deref()
            .and_then(|a| app_priority(a, AppSelector::Udp, 4791))
    }

    /// True if it said it is willing (PFC TLV, else ETS Configuration TLV).
    pub fn willing(&self) -> bool {
        self.lldp
            .pfc
            .map(|p| p.willing)
            .or(self.lldp.ets_config.map(|e| e.willing))
            .unwrap_or(false)
    }
}

/// Which advertised parameters differ from ours (an empty set matches).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Mismatch {
    /// PFC enable bitmaps differ.
    pub pfc: bool,
    /// RoCE application priorities differ.
    pub app: bool,
    /// ETS priority → traffic class tables differ.
    pub ets: bool,
}

impl Mismatch {
    /// True if anything differs.
    pub fn any(self) -> bool {
        self.pfc || self.app || self.ets
    }

    /// `pfc,app` style list, or `none`.
    pub fn describe(self) -> String {
        let v: Vec<&str> = [(self.pfc, "pfc"), (self.app, "app"), (self.ets, "ets")]
            .into_iter()
            .filter(|(b, _)| *b)
            .map(|(_, n)| n)
            .collect();
        if v.is_empty() {
            "none".into()
        } else {
            v.join(",")
        }
    }
}

/// Notifications.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DcbxEvent {
    /// A neighbour appeared (first LLDPDU from it).
    NeighborAdded {
        /// Its chassis.
        chassis: ChassisId,
        /// Its port.
        port: PortId,
    },
    /// The neighbour's TTL ran out or it said goodbye.
    NeighborRemoved,
    /// The comparison with the neighbour changed.
    MismatchChanged {
        /// The new comparison (empty: everything matches now).
        mismatch: Mismatch,
    },
    /// A willing port changed its operational parameters to the neighbour's.
    Adopted {
        /// The operational PFC enable bitmap now.
        pfc_enable: u8,
        /// The operational RoCE v2 priority now.
        rocev2_priority: Option<u8>,
    },
}

/// Counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgentStats {
    /// LLDP frames sent.
    pub tx_frames: u64,
    /// LLDP frames received and understood.
    pub rx_frames: u64,
    /// LLDP frames received and discarded (malformed).
    pub rx_discarded: u64,
    /// Neighbours forgotten because their TTL ran out.
    pub ageouts: u64,
}

/// Upper bound on undrained events.
const MAX_EVENTS: usize = 64;

/// The LLDP/DCBX agent of one port. See the module doc.
#[derive(Clone, Debug)]
pub struct PortAgent {
    cfg: AgentConfig,
    oper: DcbParams,
    neighbor: Option<Neighbor>,
    mismatch: Mismatch,
    next_tx: Instant,
    fast_left: u8,
    credit: u8,
    credit_at: Instant,
    events: VecDeque<DcbxEvent>,
    stats: AgentStats,
}

impl PortAgent {
    /// An agent that sends its first frame at `now`.
    pub fn new(cfg: AgentConfig, now: Instant) -> Self {
        PortAgent {
            oper: cfg.admin.clone(),
            cfg,
            neighbor: None,
            mismatch: Mismatch::default(),
            next_tx: now,
            fast_left: 0,
            credit: TX_CREDIT_MAX,
            credit_at: now,
            events: VecDeque::new(),
            stats: AgentStats::default(),
        }
    }

    // ---- getters ----

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.cfg
    }

    /// The parameters the port operates with (the admin ones, or the
    /// neighbour's if it adopted them).
    pub fn operational(&self) -> &DcbParams {
        &self.oper
    }

    /// True if the operational parameters are the neighbour's.
    pub fn adopted(&self) -> bool {
        self.oper != self.cfg.admin
    }

    /// The neighbour, if one is known.
    pub fn neighbor(&self) -> Option<&Neighbor> {
        self.neighbor.as_ref()
    }

    /// How the neighbour's parameters compare with ours.
    pub fn mismatch(&self) -> Mismatch {
        self.mismatch
    }

    /// Counters.
    pub fn stats(&self) -> AgentStats {
        self.stats
    }

    /// The LLDPDU the port sends now.
    pub fn lldpdu(&self) -> LldpRepr {
        let o = &self.oper;
        LldpRepr {
            chassis: self.cfg.chassis.clone(),
            port: self.cfg.port.clone(),
            ttl_s: self.cfg.ttl_s(),
            port_description: self.cfg.port_description.clone(),
            system_name: self.cfg.system_name.clone(),
            ets_config: Some(EtsRepr {
                willing: self.cfg.willing,
                ..o.ets
            }),
            ets_recommendation: Some(EtsRepr {
                willing: false,
                cbs: false,
                max_tcs: 0,
                ..o.ets
            }),
            pfc: Some(PfcConfigRepr {
                willing: self.cfg.willing,
                mbc: false,
                cap: o.pfc_cap,
                enable: o.pfc_enable,
            }),
            app: Some(o.app.clone()),
        }
    }

    // ---- inputs ----

    /// New local settings: sent at once (somethingChangedLocal).
    pub fn handle_config(&mut self, cfg: AgentConfig, now: Instant) {
        if cfg == self.cfg {
            return;
        }
        self.cfg = cfg;
        self.resolve();
        self.next_tx = now;
    }

    /// A received LLDP frame (Ethernet, no FCS).
    pub fn handle_frame(&mut self, frame: &[u8], now: Instant) {
        let src = EthernetAddress::from_bytes(frame.get(6..).unwrap_or(&[]));
        match (lldp::parse_frame(frame), src) {
            (Ok(Some(repr)), Some(src)) => {
                self.stats.rx_frames += 1;
                self.handle_lldpdu(src, repr, now);
            }
            _ => self.stats.rx_discarded += 1,
        }
    }

    /// A parsed LLDPDU from `src`.
    pub fn handle_lldpdu(&mut self, src: EthernetAddress, repr: LldpRepr, now: Instant) {
        self.expire(now);
        if repr.ttl_s == 0 {
            if self.neighbor.take().is_some() {
                self.events.push_back(DcbxEvent::NeighborRemoved);
                self.resolve();
            }
            return;
        }
        let expires = now + Duration::from_secs(u64::from(repr.ttl_s));
        let new = self
            .neighbor
            .as_ref()
            .is_none_or(|n| n.lldp.chassis != repr.chassis || n.lldp.port != repr.port);
        if new {
            self.push(DcbxEvent::NeighborAdded {
                chassis: repr.chassis.clone(),
                port: repr.port.clone(),
            });
            // Fast start towards a new neighbour (802.1AB 9.2.7.7 newNeighbor).
            self.fast_left = TX_FAST_INIT;
            self.next_tx = self.next_tx.min(now);
        }
        let since = match &self.neighbor {
            Some(n) if !new => n.since,
            _ => now,
        };
        self.neighbor = Some(Neighbor {
            mac: src,
            lldp: repr,
            since,
            expires,
        });
        self.resolve();
    }

    /// Ages the neighbour out when its TTL has passed.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.expire(now);
        if now >= self.credit_at + Duration::from_secs(1) {
            let secs = (now - self.credit_at).as_nanos() / 1_000_000_000;
            self.credit = (u64::from(self.credit) + secs).min(u64::from(TX_CREDIT_MAX)) as u8;
            self.credit_at += Duration::from_secs(secs);
        }
    }

    // ---- outputs ----

    /// Writes the next LLDP frame into `out` if one is due at `now`.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant, out: &mut Vec<u8>) -> Option<usize> {
        if now < self.next_tx {
            return None;
        }
        self.handle_timeout(now);
        if self.credit == 0 {
            self.next_tx = self.credit_at + Duration::from_secs(1);
            return None;
        }
        self.credit -= 1;
        lldp::emit_frame(self.cfg.mac, &self.lldpdu(), out);
        self.stats.tx_frames += 1;
        let gap = if self.fast_left > 0 {
            self.fast_left -= 1;
            self.cfg.fast_tx
        } else {
            self.cfg.tx_interval
        };
        self.next_tx = now + gap.max(Duration::from_nanos(1));
        Some(out.len())
    }

    /// When a frame is due or the neighbour expires.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let expiry = self.neighbor.as_ref().map(|n| n.expires);
        Some(expiry.map_or(self.next_tx, |e| e.min(self.next_tx)))
    }

    /// When the next frame is due.
    #[must_use]
    pub fn next_transmit_at(&self) -> Instant {
        self.next_tx
    }

    /// The next notification.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<DcbxEvent> {
        self.events.pop_front()
    }

    // ---- internals ----

    fn push(&mut self, e: DcbxEvent) {
        if self.events.len() >= MAX_EVENTS {
            self.events.pop_front();
        }
        self.events.push_back(e);
    }

    fn expire(&mut self, now: Instant) {
        if self.neighbor.as_ref().is_some_and(|n| n.expires <= now) {
            self.neighbor = None;
            self.stats.ageouts += 1;
            self.push(DcbxEvent::NeighborRemoved);
            self.resolve();
        }
    }

    /// Whether this port takes the neighbour's PFC/app parameters
    /// (802.1Qaz symmetric attribute passing).
    fn adopts(&self, n: &Neighbor) -> bool {
        if !self.cfg.willing {
            return false;
        }
        if !n.willing() {
            return true;
        }
        // Both willing: the lower MAC keeps its own.
        let ours = match &self.cfg.chassis {
            ChassisId::Mac(m) => *m,
            _ => self.cfg.mac.0,
        };
        let theirs = match &n.lldp.chassis {
            ChassisId::Mac(m) => *m,
            _ => n.mac.0,
        };
        ours > theirs
    }

    /// Recomputes the operational parameters and the comparison.
    fn resolve(&mut self) {
        let mut oper = self.cfg.admin.clone();
        if let Some(n) = &self.neighbor
            && self.adopts(n)
        {
            if let Some(p) = n.lldp.pfc {
                oper.pfc_enable = p.enable;
            }
            if let Some(app) = &n.lldp.app {
                oper.app = app.clone();
            }
            if let Some(e) = n.lldp.ets_recommendation.or(n.lldp.ets_config) {
                oper.ets = EtsRepr {
                    willing: false,
                    cbs: oper.ets.cbs,
                    max_tcs: oper.ets.max_tcs,
                    ..e
                };
            }
        }
        if oper != self.oper {
            let adopted = oper != self.cfg.admin;
            self.oper = oper;
            if adopted {
                self.push(DcbxEvent::Adopted {
                    pfc_enable: self.oper.pfc_enable,
                    rocev2_priority: self.oper.rocev2_priority(),
                });
            }
            // Our advertisement changed: send it now.
            self.next_tx = Instant::ZERO;
        }
        let m = match &self.neighbor {
            None => Mismatch::default(),
            Some(n) => Mismatch {
                pfc: n.pfc_enable().is_some_and(|e| e != self.oper.pfc_enable),
                // RoCE v2 is compared whenever the neighbour sends the
                // TLV; v1 only if it names it (most NICs run v2 only).
                app: n.lldp.app.as_deref().is_some_and(|app| {
                    let v1 = app_priority(app, AppSelector::EtherType, 0x8915);
                    n.rocev2_priority() != self.oper.rocev2_priority()
                        || v1.is_some_and(|p| Some(p) != self.oper.rocev1_priority())
                }),
                ets: n
                    .lldp
                    .ets_config
                    .is_some_and(|e| e.prio_tc != self.oper.ets.prio_tc),
            },
        };
        if m != self.mismatch {
            self.mismatch = m;
            self.push(DcbxEvent::MismatchChanged { mismatch: m });
        }
    }
}

#[cfg(test)]
mod tests;
