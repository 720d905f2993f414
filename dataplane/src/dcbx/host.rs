//! DCBX on a host: the same LLDP/DCBX port agent the switch runs
//! ([`PortAgent`]), advertising what the RNIC runs with,
//! and, when *willing* (the default, as NICs ship), taking the switch's PFC
//! and application priority: RoCE moves to the priority the switch
//! advertises for UDP 4791 (v2) or EtherType 0x8915 (v1), marked with the
//! DSCP the switch names for it (or `priority << 3 | 2`, R-MAP-2), and
//! PFC is honoured on that priority. A non-willing host keeps its own
//! settings and the switch reports the difference as a mismatch. One agent
//! serves `roceperf` on a veth and the simulator's hosts
//! ([`crate::sim::host::SimHost::enable_dcbx`]).
//!
//! Contract: sans-IO (told `now`, asked for frames); allocates per LLDP
//! frame (control traffic, one every 30 s after fast start).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{AgentConfig, DcbParams, PortAgent};
use crate::time::Instant;
use crate::wire::ethernet::EthernetAddress;
use crate::wire::lldp::{AppEntry, AppSelector, ChassisId, PortId};
use crate::wire::roce_frame::RoceVersion;

/// How the host takes part in DCBX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DcbxMode {
    /// No LLDP at all.
    Off,
    /// Advertise our settings, never adopt the switch's.
    On,
    /// Advertise, and adopt the switch's PFC and application priority.
    #[default]
    Willing,
}

impl FromStr for DcbxMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "off" => Ok(DcbxMode::Off),
            "on" | "not-willing" => Ok(DcbxMode::On),
            "willing" => Ok(DcbxMode::Willing),
            _ => Err(format!("`{s}`: willing, on (advertise only) or off")),
        }
    }
}

impl fmt::Display for DcbxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DcbxMode::Off => "off",
            DcbxMode::On => "on",
            DcbxMode::Willing => "willing",
        })
    }
}

/// A RoCE traffic class: the priority data travels on and its DSCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataClass {
    /// 802.1p priority (PFC class honoured, VLAN PCP).
    pub priority: u8,
    /// DSCP of RoCE v2 data.
    pub dscp: u8,
}

/// What `roceperf` reports about DCBX.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DcbxStatus {
    /// `willing` or `on`.
    pub mode: String,
    /// The neighbour (the switch port), as `chassis/port`, if one is known.
    pub peer: Option<String>,
    /// True if the host runs with the neighbour's parameters.
    pub adopted: bool,
    /// What the host was told to run with.
    pub admin: DataClass,
    /// What it runs with now.
    pub operational: DataClass,
    /// Priorities PFC is enabled on now (bitmap, bit p = priority p).
    pub pfc_enable: u8,
    /// What differs from the neighbour's advertisement (`none`, `pfc,app`).
    pub mismatch: String,
    /// LLDP frames sent and received.
    pub lldp_tx: u64,
    /// LLDP frames received and understood.
    pub lldp_rx: u64,
}

/// The host's DCBX agent. See the module doc.
#[derive(Debug)]
pub struct HostDcbx {
    agent: PortAgent,
    mode: DcbxMode,
    version: RoceVersion,
    admin: DataClass,
    applied: DataClass,
    frame: Vec<u8>,
}

impl HostDcbx {
    /// An agent advertising `admin` for RoCE `version` from `mac`; `None`
    /// for [`DcbxMode::Off`]. The first LLDP frame is due at `now`.
    pub fn new(
        mode: DcbxMode,
        mac: [u8; 6],
        version: RoceVersion,
        admin: DataClass,
        system_name: Option<String>,
        now: Instant,
    ) -> Option<Self> {
        if mode == DcbxMode::Off {
            return None;
        }
        let p = admin.priority & 7;
        let params = DcbParams {
            pfc_enable: 1 << p,
            app: vec![
                AppEntry::rocev2(p),
                AppEntry::rocev1(p),
                AppEntry {
                    selector: AppSelector::Dscp,
                    protocol: u16::from(admin.dscp & 0x3f),
                    priority: p,
                },
            ],
            ..DcbParams::default()
        };
        let mut cfg = AgentConfig::new(
            EthernetAddress(mac),
            ChassisId::Mac(mac),
            PortId::Mac(mac),
            params,
        );
        cfg.willing = mode == DcbxMode::Willing;
        cfg.system_name = system_name;
        Some(HostDcbx {
            agent: PortAgent::new(cfg, now),
            mode,
            version,
            admin,
            applied: admin,
            frame: Vec::with_capacity(256),
        })
    }

    /// An LLDP frame arrived.
    pub fn handle_frame(&mut self, frame: &[u8], now: Instant) {
        self.agent.handle_frame(frame, now);
    }

    /// The next LLDP frame to send, if one is due.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        // A neighbour's TTL may have run out (a frame due is handled below).
        if self.agent.poll_timeout().is_some_and(|t| t <= now) {
            self.agent.handle_timeout(now);
        }
        let n = self.agent.poll_transmit(now, &mut self.frame)?;
        Some(&self.frame[..n])
    }

    /// When to call again.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.agent.poll_timeout()
    }

    /// The data class to switch to, if DCBX changed it since the last call
    /// (adopted the switch's, or back to ours when the switch went away).
    pub fn poll_class_change(&mut self) -> Option<DataClass> {
        while let Some(ev) = self.agent.poll_event() {
            tracing::info!(?ev, "DCBX");
        }
        let now = self.class();
        (now != self.applied).then(|| {
            self.applied = now;
            now
        })
    }

    fn class(&self) -> DataClass {
        if !self.agent.adopted() {
            return self.admin;
        }
        let oper = self.agent.operational();
        let p = match self.version {
            RoceVersion::V1 => oper.rocev1_priority().or(oper.rocev2_priority()),
            RoceVersion::V2 => oper.rocev2_priority(),
        }
        .unwrap_or(self.admin.priority);
        DataClass {
            priority: p,
            dscp: oper.dscp_for(p),
        }
    }

    /// What to report.
    pub fn status(&self) -> DcbxStatus {
        let st = self.agent.stats();
        DcbxStatus {
            mode: self.mode.to_string(),
            peer: self
                .agent
                .neighbor()
                .map(|n| format!("{}/{}", n.lldp.chassis, n.lldp.port)),
            adopted: self.agent.adopted(),
            admin: self.admin,
            operational: self.class(),
            pfc_enable: self.agent.operational().pfc_enable,
            mismatch: self.agent.mismatch().describe(),
            lldp_tx: st.tx_frames,
            lldp_rx: st.rx_frames,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    const HOST: [u8; 6] = [2, 0, 0, 0, 0, 0x0c];
    const SWITCH: [u8; 6] = [2, 0, 0, 0, 0, 0x5a];

    /// A switch port's agent advertising priority 3 lossless, not willing.
    fn switch_port(now: Instant) -> PortAgent {
        let mut cfg = AgentConfig::new(
            EthernetAddress(SWITCH),
            ChassisId::Local("sw1".into()),
            PortId::Local("1".into()),
            DcbParams::default(),
        );
        cfg.willing = false;
        PortAgent::new(cfg, now)
    }

    fn exchange(host: &mut HostDcbx, sw: &mut PortAgent, now: Instant) {
        let mut buf = Vec::new();
        if let Some(n) = sw.poll_transmit(now, &mut buf) {
            host.handle_frame(&buf[..n], now);
        }
        if let Some(f) = host.poll_transmit(now) {
            sw.handle_frame(f, now);
        }
    }

    fn wrong_class() -> DataClass {
        DataClass {
            priority: 5,
            dscp: 40,
        }
    }

    #[test]
    fn a_willing_host_moves_roce_to_the_switchs_priority() {
        let t0 = Instant::ZERO;
        let mut sw = switch_port(t0);
        let mut h = HostDcbx::new(
            DcbxMode::Willing,
            HOST,
            RoceVersion::V2,
            wrong_class(),
            None,
            t0,
        )
        .unwrap();
        assert_eq!(h.poll_class_change(), None, "nothing heard yet");
        exchange(&mut h, &mut sw, t0);
        let c = h.poll_class_change().expect("adopted");
        assert_eq!(
            c,
            DataClass {
                priority: 3,
                dscp: 26
            }
        );
        let s = h.status();
        assert!(s.adopted);
        assert_eq!(s.pfc_enable, 1 << 3);
        assert_eq!(s.mismatch, "none");
        assert_eq!(s.peer.as_deref(), Some("sw1/1"));
        // The host now advertises what it runs: the switch sees a match.
        exchange(&mut h, &mut sw, t0 + Duration::from_millis(1));
        assert!(!sw.mismatch().any(), "{:?}", sw.mismatch());
        // The switch goes away: back to the host's own settings.
        let late = t0 + Duration::from_secs(200);
        let _ = h.poll_transmit(late);
        assert_eq!(h.poll_class_change(), Some(wrong_class()));
    }

    #[test]
    fn a_host_that_is_not_willing_keeps_its_class_and_the_switch_sees_a_mismatch() {
        let t0 = Instant::ZERO;
        let mut sw = switch_port(t0);
        let mut h =
            HostDcbx::new(DcbxMode::On, HOST, RoceVersion::V2, wrong_class(), None, t0).unwrap();
        exchange(&mut h, &mut sw, t0);
        exchange(&mut h, &mut sw, t0 + Duration::from_millis(1));
        assert_eq!(h.poll_class_change(), None);
        assert!(!h.status().adopted);
        let m = sw.mismatch();
        assert!(m.pfc && m.app, "{m:?}");
        assert_eq!(h.status().mismatch, "pfc,app");
    }

    #[test]
    fn off_sends_nothing() {
        assert!(
            HostDcbx::new(
                DcbxMode::Off,
                HOST,
                RoceVersion::V2,
                wrong_class(),
                None,
                Instant::ZERO
            )
            .is_none()
        );
        assert_eq!("willing".parse(), Ok(DcbxMode::Willing));
        assert!("maybe".parse::<DcbxMode>().is_err());
    }
}
