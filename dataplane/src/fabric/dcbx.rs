//! What each port's LLDP/DCBX agent advertises, derived from the TM
//! settings a plan applies, so the advertisement is the switch's real
//! behaviour: PFC enable = the port's `pfc_enable`, ETS priority → TC =
//! its priority → queue map, TC bandwidth = its DWRR weights in percent
//! (strict queues: TSA strict, 0 %), RoCE v2 (UDP 4791), RoCE v1
//! (EtherType 0x8915) and DSCP 26 at the priority DSCP 26 classifies to
//! (R-MAP-2). Pure; allocates the per-port configurations.

use super::config::{DcbxConfig, FabricConfig};
use crate::dcbx::{AgentConfig, DcbParams, FAST_TX, TX_INTERVAL};
use crate::time::Duration;
use crate::tm::TmConfig;
use crate::tm::config::SchedMode;
use crate::wire::lldp::{AppEntry, AppSelector, ChassisId, EtsRepr, PortId, tsa};

/// The DSCP RoCE v2 senders mark (R-MAP-2).
pub(super) const ROCE_DSCP: u8 = 26;

/// One agent configuration per TM port (`None` on ports the fabric does
/// not list, and everywhere when DCBX is off).
pub(crate) fn agent_configs(tm: &TmConfig, fabric: &FabricConfig) -> Vec<Option<AgentConfig>> {
    let mut out = vec![None; tm.ports.len()];
    let d: &DcbxConfig = &fabric.dcbx;
    if !d.enabled {
        return out;
    }
    let chassis = if d.system_name.is_empty() {
        ChassisId::Mac(tm.ports.first().map_or([0; 6], |p| p.mac.0))
    } else {
        ChassisId::Local(d.system_name.clone())
    };
    let m = &fabric.qos_maps;
    let roce_prio = m
        .dscp_to_priority
        .get(usize::from(ROCE_DSCP))
        .copied()
        .unwrap_or(m.default_priority)
        & 7;
    for p in &fabric.ports {
        let Some(tp) = tm.ports.get(usize::from(p.port)) else {
            continue;
        };
        let total: u32 = tp
            .queues
            .iter()
            .map(|q| match q.sched {
                SchedMode::Dwrr(w) => u32::from(w),
                SchedMode::Strict => 0,
            })
            .sum();
        let mut ets = EtsRepr {
            willing: false,
            cbs: false,
            max_tcs: 8,
            prio_tc: tp.prio_to_queue.map(|q| q & 7),
            tc_bw: [0; 8],
            tsa: [tsa::STRICT; 8],
        };
        for (i, q) in tp.queues.iter().enumerate() {
            if let SchedMode::Dwrr(w) = q.sched {
                ets.tsa[i] = tsa::ETS;
                ets.tc_bw[i] = (u32::from(w) * 100 / total.max(1)) as u8;
            }
        }
        // The rounding remainder goes to the first ETS class, so shares add to 100.
        let sum: u32 = ets.tc_bw.iter().map(|&b| u32::from(b)).sum();
        if let Some(i) = ets.tsa.iter().position(|&t| t == tsa::ETS) {
            ets.tc_bw[i] += (100u32.saturating_sub(sum)) as u8;
        }
        let admin = DcbParams {
            ets,
            pfc_enable: tp.pfc_enable,
            pfc_cap: 8,
            app: vec![
                AppEntry::rocev2(roce_prio),
                AppEntry::rocev1(roce_prio),
                AppEntry {
                    selector: AppSelector::Dscp,
                    protocol: u16::from(ROCE_DSCP),
                    priority: roce_prio,
                },
            ],
        };
        let mut c = AgentConfig::new(
            tp.mac,
            chassis.clone(),
            PortId::Local(p.port.to_string()),
            admin,
        );
        c.port_description = Some(format!("Ethernet{}", p.port));
        c.system_name = (!d.system_name.is_empty()).then(|| d.system_name.clone());
        c.tx_interval = if d.tx_interval_s == 0 {
            TX_INTERVAL
        } else {
            Duration::from_secs(u64::from(d.tx_interval_s))
        };
        c.fast_tx = FAST_TX.min(c.tx_interval);
        out[usize::from(p.port)] = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::config::PortConfig;

    fn fabric(enabled: bool) -> FabricConfig {
        let mut f = FabricConfig {
            ports: vec![PortConfig {
                port: 1,
                speed_bps: 25_000_000_000,
                mtu_bytes: 4200,
                cable_length_m: 10,
                trust: None,
                pfc_priorities: vec![4],
            }],
            ..Default::default()
        };
        f.qos_maps.dscp_to_priority[26] = 4;
        f.dcbx = DcbxConfig {
            enabled,
            system_name: "leaf1".into(),
            tx_interval_s: 5,
        };
        f
    }

    #[test]
    fn ports_advertise_what_the_tm_runs() {
        let mut tm = TmConfig::with_ports(3);
        tm.ports[1].pfc_enable = 1 << 4;
        tm.ports[1].queues[6].sched = SchedMode::Strict;
        let c = agent_configs(&tm, &fabric(true));
        assert_eq!(c.len(), 3);
        assert!(c[0].is_none() && c[2].is_none(), "only fabric ports");
        let a = c[1].as_ref().unwrap();
        assert_eq!(a.chassis, ChassisId::Local("leaf1".into()));
        assert_eq!(a.port, PortId::Local("1".into()));
        assert_eq!(a.mac, tm.ports[1].mac);
        assert_eq!(a.tx_interval, Duration::from_secs(5));
        assert_eq!(a.admin.pfc_enable, 1 << 4);
        assert_eq!(a.admin.rocev2_priority(), Some(4));
        assert_eq!(a.admin.rocev1_priority(), Some(4));
        assert_eq!(a.admin.ets.prio_tc, tm.ports[1].prio_to_queue);
        assert_eq!(a.admin.ets.tsa[6], tsa::STRICT);
        assert_eq!(a.admin.ets.tc_bw[6], 0);
        assert_eq!(
            a.admin.ets.tc_bw.iter().map(|&b| u32::from(b)).sum::<u32>(),
            100
        );
    }

    #[test]
    fn off_means_no_agent_anywhere() {
        let tm = TmConfig::with_ports(3);
        assert!(
            agent_configs(&tm, &fabric(false))
                .iter()
                .all(Option::is_none)
        );
    }
}
