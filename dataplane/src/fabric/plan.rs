//! A [`SwitchPlan`]: everything a fabric configuration (and, for a
//! simulated or lab fabric, its routes) means for one switch — the traffic
//! manager's settings and the whole contents of the P4 tables and action
//! profiles it owns — and the one function that applies it.
//!
//! Contract:
//! - [`SwitchPlan::build`] is pure and checks everything it can without the
//!   switch: names resolve in the program, ports exist, the TM settings
//!   validate. Errors name the field or object at fault.
//! - [`SwitchPlan::apply`] runs on the thread that owns the [`Switch`] (the
//!   daemon's dataplane thread, or the simulator) in one call, between two
//!   packets: TM settings and tables change together, so no packet sees half
//!   of a change; each port's LLDP/DCBX agent starts, changes or stops
//!   last (fabric `dcbx`). If any write is refused, the touched tables, profiles and
//!   the TM settings are put back as they were before the call returns.
//!
//! Tables of `roce_switch.p4` the fabric service owns
//! ([`FABRIC_OWNED_TABLES`]): `port_trust` (ingress port →
//! `trust_dscp`/`trust_pcp`), `dscp_to_priority` (64 entries + default),
//! `pcp_to_priority` (8 entries + default), `ecn_red` ((egress port,
//! priority) → `set_red(kmin_bytes, kmax_bytes, pmax)`, pmax scaled so
//! 65535 = 100 %, R-ECN-3); and the RoCE security tables `roce_src_allow`,
//! `pkey_ingress`, `pkey_egress` (fabric `security`, see
//! [`super::security`]). A program with none of them (a user's own
//! program) gets the TM part only, and a configuration that needs them is
//! refused.

use p4_target::info::{ProgramInfo, resolve_name};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{
    ActionCall, EntryAction, FieldMatch, RuntimeApi, RuntimeError, TableEntry,
};

use crate::dcbx::AgentConfig;
use crate::switch::Switch;
use crate::time::Instant;
use crate::tm::TmConfig;

use super::config::{FabricConfig, QosMaps, Trust};
use super::routes::L3Config;

/// The tables the fabric service owns in `roce_switch.p4` (names or unique
/// dotted suffixes). P4Runtime clients may read them; writes go through the
/// fabric service.
pub const FABRIC_OWNED_TABLES: [&str; 7] = [
    "port_trust",
    "dscp_to_priority",
    "pcp_to_priority",
    "ecn_red",
    "roce_src_allow",
    "pkey_ingress",
    "pkey_egress",
];

/// Why a plan cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The program lacks an object the plan needs.
    #[error("the program has no {kind} `{name}`")]
    Missing {
        /// `table`, `action`, `action profile`, `action parameter`.
        kind: &'static str,
        /// Its name.
        name: String,
    },
    /// The configuration names a port the switch does not have.
    #[error("port {port}: the switch has ports 0..{ports}")]
    NoSuchPort {
        /// The port.
        port: u16,
        /// How many ports the switch has.
        ports: usize,
    },
    /// A value the program or the traffic manager cannot take.
    #[error("{field}: {reason}")]
    Invalid {
        /// Field path.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The traffic manager refuses the settings.
    #[error("traffic manager: {0}")]
    Tm(#[from] crate::tm::ConfigError),
}

/// Why applying a plan failed (nothing changed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// A table or profile write was refused.
    #[error("table write refused: {0}")]
    Runtime(#[from] RuntimeError),
    /// The traffic manager refused the settings (e.g. another port count).
    #[error("traffic manager: {0}")]
    Tm(#[from] crate::tm::ConfigError),
}

/// The whole contents of one table after the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableContents {
    /// P4Info table id.
    pub table_id: u32,
    /// Every entry, in insertion order.
    pub entries: Vec<TableEntry>,
    /// The default action, if the plan sets it.
    pub default: Option<ActionCall>,
}

/// The whole contents of one action profile (or selector) after the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileContents {
    /// P4Info action profile id.
    pub profile_id: u32,
    /// `(member id, action)`.
    pub members: Vec<(u32, ActionCall)>,
    /// `(group id, [(member id, weight)])`.
    pub groups: Vec<(u32, Vec<(u32, u32)>)>,
}

/// Traffic-manager settings plus the tables and profiles a configuration
/// replaces, ready to apply in one step. See the module doc.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchPlan {
    tm: TmConfig,
    dcbx: Vec<Option<AgentConfig>>,
    profiles: Vec<ProfileContents>,
    tables: Vec<TableContents>,
}

pub(crate) fn table_id(info: &ProgramInfo, name: &str) -> Result<u32, PlanError> {
    info.table_by_name(name)
        .map(|t| t.id)
        .ok_or_else(|| PlanError::Missing {
            kind: "table",
            name: name.into(),
        })
}

pub(crate) fn profile_id(info: &ProgramInfo, name: &str) -> Result<u32, PlanError> {
    resolve_name(info.action_profiles.iter(), name, |p| p.name)
        .map(|p| p.id)
        .ok_or_else(|| PlanError::Missing {
            kind: "action profile",
            name: name.into(),
        })
}

/// `action(name = value, ...)` with arguments put in the action's
/// parameter order, by name; every parameter needs an argument and every
/// argument a parameter.
pub fn action_call(
    info: &ProgramInfo,
    action: &str,
    args: &[(&str, u128)],
) -> Result<ActionCall, PlanError> {
    let a = info
        .action_by_name(action)
        .ok_or_else(|| PlanError::Missing {
            kind: "action",
            name: action.into(),
        })?;
    let mut params = Vec::with_capacity(a.params.len());
    for p in a.params {
        let (_, v) = args
            .iter()
            .find(|(n, _)| *n == p.name)
            .ok_or_else(|| PlanError::Missing {
                kind: "argument for action parameter",
                name: format!("{action}.{}", p.name),
            })?;
        params.push(*v);
    }
    if let Some((n, _)) = args
        .iter()
        .find(|(n, _)| !a.params.iter().any(|p| p.name == *n))
    {
        return Err(PlanError::Missing {
            kind: "action parameter",
            name: format!("{action}.{n}"),
        });
    }
    Ok(ActionCall::new(a.id, &params))
}

fn exact(values: &[u128], action: ActionCall) -> TableEntry {
    TableEntry {
        matches: values.iter().map(|&v| Some(FieldMatch::Exact(v))).collect(),
        priority: 0,
        action: EntryAction::Direct(action),
        metadata: Vec::new(),
    }
}

/// The four fabric-owned QoS tables' contents for `cfg`, or `None` when the
/// program has none of them.
fn fabric_tables(
    info: &'static ProgramInfo,
    cfg: &FabricConfig,
) -> Result<Option<Vec<TableContents>>, PlanError> {
    let present = FABRIC_OWNED_TABLES[..4]
        .iter()
        .filter(|n| info.table_by_name(n).is_some())
        .count();
    if present == 0 {
        let needs_tables = cfg.ecn.iter().any(|e| e.enabled)
            || cfg.qos_maps != QosMaps::default()
            || cfg.ports.iter().any(|p| p.trust == Some(Trust::Pcp));
        if needs_tables {
            return Err(PlanError::Invalid {
                field: "qos_maps / ecn / ports.trust".into(),
                reason: format!(
                    "program {} has no fabric-owned tables ({}) to classify or mark with",
                    info.name,
                    FABRIC_OWNED_TABLES[..4].join(", ")
                ),
            });
        }
        return Ok(None);
    }
    let mut trust = Vec::new();
    for (i, p) in cfg.ports.iter().enumerate() {
        let action = match p.trust {
            Some(Trust::Dscp) => "trust_dscp",
            Some(Trust::Pcp) => "trust_pcp",
            Some(Trust::None) | None => {
                return Err(PlanError::Invalid {
                    field: format!("ports[{i}].trust"),
                    reason: "roce_switch.p4 classifies by DSCP or PCP only (no trust NONE)".into(),
                });
            }
        };
        trust.push(exact(
            &[u128::from(p.port)],
            action_call(info, action, &[])?,
        ));
    }
    let m = &cfg.qos_maps;
    let set = |prio: u8| action_call(info, "set_priority", &[("priority", u128::from(prio))]);
    let dscp = (0..)
        .zip(&m.dscp_to_priority)
        .map(|(d, &p)| Ok(exact(&[d], set(p)?)))
        .collect::<Result<Vec<_>, PlanError>>()?;
    let pcp = (0..)
        .zip(&m.pcp_to_priority)
        .map(|(d, &p)| Ok(exact(&[d], set(p)?)))
        .collect::<Result<Vec<_>, PlanError>>()?;
    let mut red = Vec::new();
    for (i, q) in cfg.ecn.iter().enumerate().filter(|(_, q)| q.enabled) {
        let bytes32 = |v: u64, f: &str| {
            u32::try_from(v).map_err(|_| PlanError::Invalid {
                field: format!("ecn[{i}].{f}"),
                reason: format!("{v} does not fit the program's 32-bit threshold"),
            })
        };
        let kmin = bytes32(q.kmin_bytes, "kmin_bytes")?;
        let kmax = bytes32(q.kmax_bytes, "kmax_bytes")?;
        let pmax = (q.pmax.clamp(0.0, 1.0) * 65535.0).round() as u128;
        red.push(exact(
            &[u128::from(q.port), u128::from(q.priority)],
            action_call(
                info,
                "set_red",
                &[
                    ("kmin_bytes", u128::from(kmin)),
                    ("kmax_bytes", u128::from(kmax)),
                    ("pmax", pmax),
                ],
            )?,
        ));
    }
    let default = set(m.default_priority)?;
    Ok(Some(vec![
        TableContents {
            table_id: table_id(info, "port_trust")?,
            entries: trust,
            default: None,
        },
        TableContents {
            table_id: table_id(info, "dscp_to_priority")?,
            entries: dscp,
            default: Some(default.clone()),
        },
        TableContents {
            table_id: table_id(info, "pcp_to_priority")?,
            entries: pcp,
            default: Some(default),
        },
        TableContents {
            table_id: table_id(info, "ecn_red")?,
            entries: red,
            default: None,
        },
    ]))
}

impl SwitchPlan {
    /// The plan for `fabric` on a switch that started with `base` and runs
    /// `info`'s program; with `routes`, its routing tables too (simulated
    /// and lab fabrics; the daemon takes routes over P4Runtime instead).
    pub fn build(
        base: &TmConfig,
        fabric: &FabricConfig,
        routes: Option<&L3Config>,
        info: &'static ProgramInfo,
    ) -> Result<SwitchPlan, PlanError> {
        let tm = super::tm::tm_config(base, fabric)?;
        tm.validate()?;
        let mut tables = fabric_tables(info, fabric)?.unwrap_or_default();
        for port in fabric.security.ports.iter().map(|p| p.port) {
            if usize::from(port) >= tm.ports.len() {
                return Err(PlanError::NoSuchPort {
                    port,
                    ports: tm.ports.len(),
                });
            }
        }
        tables
            .extend(super::security::security_tables(info, &fabric.security)?.unwrap_or_default());
        let mut profiles = Vec::new();
        if let Some(l3) = routes {
            let w = l3.writes(info)?;
            profiles.push(w.profile);
            tables.extend(w.tables);
        }
        let dcbx = super::dcbx::agent_configs(&tm, fabric);
        Ok(SwitchPlan {
            tm,
            dcbx,
            profiles,
            tables,
        })
    }

    /// The traffic-manager settings the plan applies.
    pub fn tm_config(&self) -> &TmConfig {
        &self.tm
    }

    /// Each port's LLDP/DCBX agent settings (`None`: no LLDP there).
    pub fn dcbx(&self) -> &[Option<AgentConfig>] {
        &self.dcbx
    }

    /// The tables the plan replaces, in write order.
    pub fn tables(&self) -> &[TableContents] {
        &self.tables
    }

    /// The action profiles the plan replaces.
    pub fn profiles(&self) -> &[ProfileContents] {
        &self.profiles
    }

    /// Applies the plan to `sw` in one step (see the module doc); on error
    /// nothing has changed.
    pub fn apply<P: Pipeline>(&self, sw: &mut Switch<P>, now: Instant) -> Result<(), ApplyError> {
        let old_tm = sw.tm().config().clone();
        let rt: &mut dyn RuntimeApi = sw.pipeline_mut().runtime_mut();
        let old = Snapshot::take(rt, &self.tables, &self.profiles)?;
        if let Err(e) = write(rt, &self.tables, &self.profiles) {
            restore(rt, &old);
            return Err(e.into());
        }
        if let Err(e) = sw.tm_mut().handle_config(self.tm.clone(), now) {
            restore(sw.pipeline_mut().runtime_mut(), &old);
            // The TM refused before changing anything; keep it as it was.
            debug_assert_eq!(sw.tm().config(), &old_tm);
            return Err(e.into());
        }
        sw.handle_dcbx_config(&self.dcbx, now);
        Ok(())
    }
}

/// What the touched tables and profiles held before a plan.
struct Snapshot {
    tables: Vec<TableContents>,
    profiles: Vec<ProfileContents>,
}

impl Snapshot {
    fn take(
        rt: &dyn RuntimeApi,
        tables: &[TableContents],
        profiles: &[ProfileContents],
    ) -> Result<Snapshot, RuntimeError> {
        Ok(Snapshot {
            tables: tables
                .iter()
                .map(|t| {
                    Ok(TableContents {
                        table_id: t.table_id,
                        entries: rt.table_entries(t.table_id)?,
                        default: Some(rt.table_default(t.table_id)?),
                    })
                })
                .collect::<Result<_, RuntimeError>>()?,
            profiles: profiles
                .iter()
                .map(|p| {
                    Ok(ProfileContents {
                        profile_id: p.profile_id,
                        members: rt.members(p.profile_id)?,
                        groups: rt.groups(p.profile_id)?,
                    })
                })
                .collect::<Result<_, RuntimeError>>()?,
        })
    }
}

/// Replaces the tables and profiles: entries referring to members and
/// groups go first, then groups, then members; new ones in reverse order.
fn write(
    rt: &mut dyn RuntimeApi,
    tables: &[TableContents],
    profiles: &[ProfileContents],
) -> Result<(), RuntimeError> {
    for t in tables {
        rt.table_clear(t.table_id)?;
    }
    for p in profiles {
        for (g, _) in rt.groups(p.profile_id)? {
            rt.group_delete(p.profile_id, g)?;
        }
        for (m, _) in rt.members(p.profile_id)? {
            rt.member_delete(p.profile_id, m)?;
        }
    }
    for p in profiles {
        for (m, call) in &p.members {
            rt.member_write(p.profile_id, *m, call.clone(), false)?;
        }
        for (g, members) in &p.groups {
            rt.group_write(p.profile_id, *g, members, false)?;
        }
    }
    for t in tables {
        for e in &t.entries {
            rt.table_insert(t.table_id, e.clone())?;
        }
        if let Some(d) = &t.default {
            rt.table_set_default(t.table_id, d.clone())?;
        }
    }
    Ok(())
}

fn restore(rt: &mut dyn RuntimeApi, old: &Snapshot) {
    if let Err(e) = write(rt, &old.tables, &old.profiles) {
        tracing::error!(error = %e, "restoring tables after a refused plan failed");
    }
}
