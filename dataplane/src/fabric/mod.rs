//! Fabric QoS configuration and the one path that turns it into switch
//! state.
//!
//! - [`config`]: the operator's intent (ports, priority maps, buffer and
//!   PFC thresholds, headroom, ECN, ETS, watchdog), validated as a whole.
//! - [`routes`]: routing intent (router MAC, prefixes, ECMP next hops) for
//!   `roce_switch.p4`'s tables.
//! - [`security`]: RoCE source allowlists and P_Key partitions, and the
//!   tables that enforce them.
//! - `dcbx`: what each port's LLDP/DCBX agent advertises, from the TM
//!   settings the plan applies.
//! - [`SwitchPlan`]: both, resolved against a switch's program and
//!   starting settings into TM settings plus whole-table contents, applied
//!   in one step on the thread that owns the [`crate::switch::Switch`].
//!
//! The daemon (fabric service), the simulator and the lab's simulated mode
//! all go through [`SwitchPlan`], so a configuration means the same switch
//! state everywhere.

pub mod config;
pub mod routes;
pub mod security;

mod dcbx;
mod plan;
mod tm;

pub use config::FabricConfig;
pub use plan::{
    ApplyError, FABRIC_OWNED_TABLES, PlanError, ProfileContents, SwitchPlan, TableContents,
    action_call,
};
pub use routes::{Bridged, L3Config, NextHop, Route, RouteWrites};
pub use security::SecurityConfig;
pub use tm::{ports_of, tm_config};
