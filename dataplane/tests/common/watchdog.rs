//! The PFC watchdog the traffic-manager tests storm against, shared by the
//! TM's unit tests (`src/tm/tests.rs`, through `#[path]`) and the
//! integration tests here, so every storm test means the same watchdog.
//!
//! Contract: the includer imports `TmConfig`, `WatchdogPortConfig` and
//! `WdAction` (the crate's own paths inside it, `dataplane::` outside), so
//! this file names no crate. Times in ms, as R-WD-1 configures them.

use super::{TmConfig, WatchdogPortConfig, WdAction};

/// Poll interval P, the orchagent default (R-WD-2).
pub(super) const POLL_MS: u32 = 100;
/// Detection time D: a storm is declared on the 2nd consecutive positive
/// poll after the baseline (R-WD-6, E-17).
pub(super) const DETECTION_MS: u32 = 200;
/// Restoration time R: restored on the 3rd consecutive quiet poll (R-WD-7).
pub(super) const RESTORATION_MS: u32 = 300;
/// The watched priority (the lossless one of these tests).
pub(super) const PRIORITY: u8 = 3;

/// Watches `PRIORITY` on `port` of `cfg` with P, D and R above and `action`.
pub(super) fn watch(cfg: &mut TmConfig, port: usize, action: WdAction) {
    cfg.watchdog.poll_interval_ms = POLL_MS;
    cfg.ports[port].watchdog = Some(WatchdogPortConfig {
        detection_time_ms: DETECTION_MS,
        restoration_time_ms: Some(RESTORATION_MS),
        action,
        priorities: 1 << PRIORITY,
        pfc_stat_history: false,
    });
}
