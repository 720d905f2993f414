//! A [`FabricBackend`] that programs the fabric-owned tables of
//! `roce_switch.p4` through the [`Device`], and reads the program's
//! per-(port, priority) counters.
//!
//! Tables (all `@roceswitch_owner("fabric")`, see [`FABRIC_OWNED_TABLES`]):
//! `port_trust` (ingress port → `trust_dscp`/`trust_pcp`),
//! `dscp_to_priority` (64 entries + default), `pcp_to_priority` (8 entries +
//! default), `ecn_red` ((egress port, priority) → `set_red(kmin_bytes,
//! kmax_bytes, pmax)` with pmax scaled so 65535 = 100 %). Counters:
//! `rx_port_prio`, `tx_port_prio`, `ecn_marked`, indexed `port * 8 + priority`.
//!
//! Contract: one configuration is one device job. The four tables are
//! rewritten whole; if any write fails, their previous entries and
//! defaults are put back before the job ends, so the dataplane never sees a
//! half-applied configuration. `apply` blocks the calling thread until the
//! dataplane thread has run the job (at most `timeout`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use p4_target::info::ProgramInfo;
use p4_target::runtime::{
    ActionCall, EntryAction, FieldMatch, RuntimeApi, RuntimeError, TableEntry,
};

use super::backend::{BackendError, FabricBackend, PriorityCounters};
use super::config::{FabricConfig, Trust};
use crate::device::Device;

/// The tables the fabric service owns in `roce_switch.p4` (names or
/// unique dotted suffixes); give them to `P4RuntimeConfig::owned_tables`.
pub const FABRIC_OWNED_TABLES: [&str; 4] = [
    "port_trust",
    "dscp_to_priority",
    "pcp_to_priority",
    "ecn_red",
];

#[derive(Clone, Copy, Debug)]
struct Ids {
    port_trust: u32,
    trust_dscp: u32,
    trust_pcp: u32,
    dscp: u32,
    pcp: u32,
    set_priority: u32,
    ecn_red: u32,
    set_red: u32,
    rx: Option<u32>,
    tx: Option<u32>,
    ecn_marked: Option<u32>,
}

/// Programs the fabric-owned P4 tables of a device.
pub struct P4TablesBackend {
    device: Arc<dyn Device>,
    ids: Ids,
    timeout: Duration,
    ports: Mutex<Vec<u16>>,
}

impl std::fmt::Debug for P4TablesBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("P4TablesBackend")
            .field("ids", &self.ids)
            .finish_non_exhaustive()
    }
}

fn unsupported(e: impl std::fmt::Display) -> BackendError {
    BackendError::Unsupported(e.to_string())
}

impl P4TablesBackend {
    /// Resolves the tables, actions and counters in `info`.
    pub fn new(info: &'static ProgramInfo, device: Arc<dyn Device>) -> Result<Self, BackendError> {
        let table = |n: &str| {
            info.table_by_name(n)
                .map(|t| t.id)
                .ok_or_else(|| unsupported(format!("the program has no table '{n}'")))
        };
        let action = |n: &str| {
            info.action_by_name(n)
                .map(|a| a.id)
                .ok_or_else(|| unsupported(format!("the program has no action '{n}'")))
        };
        let counter = |n: &str| {
            p4_target::info::resolve_name(info.counters.iter(), n, |c| c.name)
                .filter(|c| c.direct_table.is_none())
                .map(|c| c.id)
        };
        let ids = Ids {
            port_trust: table("port_trust")?,
            trust_dscp: action("trust_dscp")?,
            trust_pcp: action("trust_pcp")?,
            dscp: table("dscp_to_priority")?,
            pcp: table("pcp_to_priority")?,
            set_priority: action("set_priority")?,
            ecn_red: table("ecn_red")?,
            set_red: action("set_red")?,
            rx: counter("rx_port_prio"),
            tx: counter("tx_port_prio"),
            ecn_marked: counter("ecn_marked"),
        };
        Ok(P4TablesBackend {
            device,
            ids,
            timeout: Duration::from_secs(5),
            ports: Mutex::default(),
        })
    }

    /// The entries and defaults `cfg` means for the four tables.
    fn plan(&self, cfg: &FabricConfig) -> Result<Plan, BackendError> {
        let ids = self.ids;
        let entry = |key: Vec<u128>, action_id: u32, params: &[u128]| TableEntry {
            matches: key
                .into_iter()
                .map(|k| Some(FieldMatch::Exact(k)))
                .collect(),
            priority: 0,
            action: EntryAction::Direct(ActionCall::new(action_id, params)),
            metadata: Vec::new(),
        };
        let mut trust = Vec::new();
        for p in &cfg.ports {
            let action = match p.trust {
                Some(Trust::Dscp) => ids.trust_dscp,
                Some(Trust::Pcp) => ids.trust_pcp,
                Some(Trust::None) | None => {
                    return Err(unsupported(format!(
                        "port {}: roce_switch.p4 classifies by DSCP or PCP only (no trust NONE)",
                        p.port
                    )));
                }
            };
            trust.push(entry(vec![u128::from(p.port)], action, &[]));
        }
        let m = &cfg.qos_maps;
        let dscp = (0..)
            .zip(&m.dscp_to_priority)
            .map(|(d, &p)| entry(vec![d], ids.set_priority, &[u128::from(p)]))
            .collect();
        let pcp = (0..)
            .zip(&m.pcp_to_priority)
            .map(|(d, &p)| entry(vec![d], ids.set_priority, &[u128::from(p)]))
            .collect();
        let mut red = Vec::new();
        for q in cfg.ecn.iter().filter(|q| q.enabled) {
            let kmin = u32::try_from(q.kmin_bytes)
                .map_err(|_| unsupported(format!("ecn kmin {} exceeds 32 bits", q.kmin_bytes)))?;
            let kmax = u32::try_from(q.kmax_bytes)
                .map_err(|_| unsupported(format!("ecn kmax {} exceeds 32 bits", q.kmax_bytes)))?;
            let pmax = (q.pmax.clamp(0.0, 1.0) * 65535.0).round() as u128;
            red.push(entry(
                vec![u128::from(q.port), u128::from(q.priority)],
                ids.set_red,
                &[u128::from(kmin), u128::from(kmax), pmax],
            ));
        }
        let default = ActionCall::new(ids.set_priority, &[u128::from(m.default_priority)]);
        Ok(Plan {
            tables: vec![
                (ids.port_trust, trust),
                (ids.dscp, dscp),
                (ids.pcp, pcp),
                (ids.ecn_red, red),
            ],
            defaults: vec![(ids.dscp, default.clone()), (ids.pcp, default)],
        })
    }

    fn run<R: Send + 'static>(
        &self,
        job: impl FnOnce(&mut dyn RuntimeApi) -> R + Send + 'static,
    ) -> Result<R, BackendError> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.device
            .submit(Box::new(move |rt| {
                let _ = tx.send(job(rt));
            }))
            .map_err(|e| BackendError::Unavailable(e.to_string()))?;
        rx.recv_timeout(self.timeout)
            .map_err(|_| BackendError::Unavailable("dataplane did not answer".into()))
    }
}

/// Full contents of the fabric tables.
struct Plan {
    tables: Vec<(u32, Vec<TableEntry>)>,
    defaults: Vec<(u32, ActionCall)>,
}

fn write_plan(rt: &mut dyn RuntimeApi, plan: &Plan) -> Result<(), RuntimeError> {
    for (t, entries) in &plan.tables {
        rt.table_clear(*t)?;
        for e in entries {
            rt.table_insert(*t, e.clone())?;
        }
    }
    for (t, a) in &plan.defaults {
        rt.table_set_default(*t, a.clone())?;
    }
    Ok(())
}

fn current_plan(
    rt: &dyn RuntimeApi,
    tables: &[u32],
    defaults: &[u32],
) -> Result<Plan, RuntimeError> {
    Ok(Plan {
        tables: tables
            .iter()
            .map(|&t| Ok((t, rt.table_entries(t)?)))
            .collect::<Result<_, RuntimeError>>()?,
        defaults: defaults
            .iter()
            .map(|&t| Ok((t, rt.table_default(t)?)))
            .collect::<Result<_, RuntimeError>>()?,
    })
}

impl FabricBackend for P4TablesBackend {
    fn apply(&self, config: &FabricConfig) -> Result<(), BackendError> {
        let plan = self.plan(config)?;
        let result = self.run(move |rt| {
            let tables: Vec<u32> = plan.tables.iter().map(|t| t.0).collect();
            let defaults: Vec<u32> = plan.defaults.iter().map(|t| t.0).collect();
            let old = current_plan(rt, &tables, &defaults)?;
            if let Err(e) = write_plan(rt, &plan) {
                if let Err(re) = write_plan(rt, &old) {
                    tracing::error!(error = %re, "restoring the fabric tables failed");
                }
                return Err(e);
            }
            Ok(())
        })?;
        result.map_err(unsupported)?;
        *self.ports.lock().unwrap_or_else(|e| e.into_inner()) =
            config.ports.iter().map(|p| p.port).collect();
        Ok(())
    }

    fn counters(&self, ports: &[u16]) -> Vec<PriorityCounters> {
        let mut ports = if ports.is_empty() {
            self.ports.lock().unwrap_or_else(|e| e.into_inner()).clone()
        } else {
            ports.to_vec()
        };
        ports.sort_unstable();
        let ids = self.ids;
        self.run(move |rt| {
            let read = |c: Option<u32>, i: u32| {
                c.and_then(|c| rt.counter_read(c, i).ok())
                    .unwrap_or_default()
            };
            let mut out = Vec::new();
            for &port in &ports {
                for prio in 0..8u8 {
                    let i = u32::from(port) * 8 + u32::from(prio);
                    let (rx, tx, ecn) = (read(ids.rx, i), read(ids.tx, i), read(ids.ecn_marked, i));
                    out.push(PriorityCounters {
                        port,
                        priority: prio,
                        rx_packets: rx.packets,
                        rx_bytes: rx.bytes,
                        tx_packets: tx.packets,
                        tx_bytes: tx.bytes,
                        ecn_marked: ecn.packets,
                        ..Default::default()
                    });
                }
            }
            out
        })
        .unwrap_or_default()
    }
}
