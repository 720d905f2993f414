//! The seam between the fabric service and the dataplane.
//!
//! Contract: [`FabricBackend::apply`] receives a configuration that has
//! already been validated as a whole, and either applies all of it or
//! returns an error having changed nothing observable. The daemon plugs in
//! the traffic manager (buffers, PFC, ECN, ETS, watchdog) and writes the
//! fabric-owned P4 tables (`dscp_to_priority`, `pcp_to_priority`,
//! `port_trust`, `ecn_red`); [`MemoryBackend`] records what it was given
//! and serves counters a test sets, for tests and dataplane-less runs.

use std::sync::Mutex;

use super::config::FabricConfig;

/// Why the dataplane refused or failed a configuration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The dataplane cannot do this (e.g. more lossless priorities than it has).
    #[error("unsupported by the dataplane: {0}")]
    Unsupported(String),
    /// The dataplane is not reachable.
    #[error("dataplane unavailable: {0}")]
    Unavailable(String),
}

/// Monotonic counters of one (port, priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PriorityCounters {
    /// Port.
    pub port: u16,
    /// Priority.
    pub priority: u8,
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Packets dropped (all reasons).
    pub drops: u64,
    /// PFC frames received for this priority.
    pub pfc_rx_frames: u64,
    /// PFC frames sent for this priority.
    pub pfc_tx_frames: u64,
    /// Packets CE-marked.
    pub ecn_marked: u64,
    /// Watchdog storms detected.
    pub watchdog_storms: u64,
    /// Current egress queue depth.
    pub queue_depth_bytes: u64,
}

/// What the fabric service needs from the dataplane.
pub trait FabricBackend: Send + Sync + 'static {
    /// Applies a validated configuration, all or nothing.
    fn apply(&self, config: &FabricConfig) -> Result<(), BackendError>;
    /// Counters of `ports` (all ports when empty), ordered by (port, priority).
    fn counters(&self, ports: &[u16]) -> Vec<PriorityCounters>;
    /// Switch-wide counters (frames, controller traffic, digests, drops by
    /// reason), if this backend fronts a switch.
    fn switch_stats(&self) -> Option<dataplane::switch::SwitchStats> {
        None
    }
}

/// A backend without a dataplane: remembers applied configurations.
#[derive(Debug, Default)]
pub struct MemoryBackend {
    applied: Mutex<Vec<FabricConfig>>,
    counters: Mutex<Vec<PriorityCounters>>,
    refuse: Mutex<Option<BackendError>>,
}

impl MemoryBackend {
    /// Configurations applied so far, oldest first.
    pub fn applied(&self) -> Vec<FabricConfig> {
        self.applied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sets the counters `counters()` reports.
    pub fn set_counters(&self, counters: Vec<PriorityCounters>) {
        *self.counters.lock().unwrap_or_else(|e| e.into_inner()) = counters;
    }

    /// Makes the next `apply` calls fail with `e` (None: succeed again).
    pub fn refuse_with(&self, e: Option<BackendError>) {
        *self.refuse.lock().unwrap_or_else(|e| e.into_inner()) = e;
    }
}

impl FabricBackend for MemoryBackend {
    fn apply(&self, config: &FabricConfig) -> Result<(), BackendError> {
        if let Some(e) = self
            .refuse
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Err(e);
        }
        self.applied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(config.clone());
        Ok(())
    }

    fn counters(&self, ports: &[u16]) -> Vec<PriorityCounters> {
        let mut v: Vec<_> = self
            .counters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|c| ports.is_empty() || ports.contains(&c.port))
            .copied()
            .collect();
        v.sort_by_key(|c| (c.port, c.priority));
        v
    }
}

/// Several backends acting as one, applied in order (for example the
/// traffic manager, then the P4 tables). If a later one refuses, the
/// earlier ones get the previously applied configuration back, so the
/// all-or-nothing contract holds for the chain. Counters of the same
/// (port, priority) are merged field by field (each source fills its own
/// fields; the sums combine them).
pub struct ChainBackend {
    parts: Vec<std::sync::Arc<dyn FabricBackend>>,
    last: Mutex<Option<FabricConfig>>,
}

impl std::fmt::Debug for ChainBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainBackend")
            .field("parts", &self.parts.len())
            .finish()
    }
}

impl ChainBackend {
    /// A chain of `parts`, applied in order.
    pub fn new(parts: Vec<std::sync::Arc<dyn FabricBackend>>) -> Self {
        ChainBackend {
            parts,
            last: Mutex::new(None),
        }
    }
}

impl FabricBackend for ChainBackend {
    fn apply(&self, config: &FabricConfig) -> Result<(), BackendError> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        for (i, part) in self.parts.iter().enumerate() {
            if let Err(e) = part.apply(config) {
                if let Some(prev) = last.as_ref() {
                    for earlier in &self.parts[..i] {
                        if let Err(re) = earlier.apply(prev) {
                            tracing::error!(error = %re, "re-applying the previous fabric configuration failed");
                        }
                    }
                }
                return Err(e);
            }
        }
        *last = Some(config.clone());
        Ok(())
    }

    fn switch_stats(&self) -> Option<dataplane::switch::SwitchStats> {
        self.parts.iter().find_map(|p| p.switch_stats())
    }

    fn counters(&self, ports: &[u16]) -> Vec<PriorityCounters> {
        let mut merged: std::collections::BTreeMap<(u16, u8), PriorityCounters> =
            Default::default();
        for part in &self.parts {
            for c in part.counters(ports) {
                let m = merged
                    .entry((c.port, c.priority))
                    .or_insert(PriorityCounters {
                        port: c.port,
                        priority: c.priority,
                        ..Default::default()
                    });
                m.rx_packets += c.rx_packets;
                m.rx_bytes += c.rx_bytes;
                m.tx_packets += c.tx_packets;
                m.tx_bytes += c.tx_bytes;
                m.drops += c.drops;
                m.pfc_rx_frames += c.pfc_rx_frames;
                m.pfc_tx_frames += c.pfc_tx_frames;
                m.ecn_marked += c.ecn_marked;
                m.watchdog_storms += c.watchdog_storms;
                m.queue_depth_bytes += c.queue_depth_bytes;
            }
        }
        merged.into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_refusing_part_rolls_the_earlier_ones_back() {
        let (tm, tables) = (
            Arc::new(MemoryBackend::default()),
            Arc::new(MemoryBackend::default()),
        );
        let chain = ChainBackend::new(vec![tm.clone(), tables.clone()]);
        let first = FabricConfig::default();
        chain.apply(&first).unwrap();
        let mut second = first.clone();
        second.qos_maps.default_priority = 3;
        tables.refuse_with(Some(BackendError::Unsupported("no".into())));
        assert!(chain.apply(&second).is_err());
        let applied = tm.applied();
        assert_eq!(applied.len(), 3, "first, second, then first again");
        assert_eq!(applied[2], first);
        assert_eq!(tables.applied(), vec![first]);
    }

    #[test]
    fn counters_from_several_sources_merge_per_port_and_priority() {
        let (tm, tables) = (
            Arc::new(MemoryBackend::default()),
            Arc::new(MemoryBackend::default()),
        );
        tm.set_counters(vec![PriorityCounters {
            port: 1,
            priority: 3,
            pfc_rx_frames: 5,
            ..Default::default()
        }]);
        tables.set_counters(vec![
            PriorityCounters {
                port: 1,
                priority: 3,
                ecn_marked: 2,
                ..Default::default()
            },
            PriorityCounters {
                port: 0,
                priority: 0,
                tx_bytes: 9,
                ..Default::default()
            },
        ]);
        let chain = ChainBackend::new(vec![tm, tables]);
        let c = chain.counters(&[]);
        assert_eq!(c.len(), 2);
        assert_eq!((c[1].pfc_rx_frames, c[1].ecn_marked), (5, 2));
        assert_eq!(chain.counters(&[0]).len(), 1);
    }
}
