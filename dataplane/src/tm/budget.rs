//! The buffer budget of a whole switch: what a [`TmConfig`] reserves per
//! lossless priority group and in total, what is left for the shared pool,
//! the thresholds that follow, and what the pool could still afford.
//!
//! Contract: [`BufferBudget::of`] is the *one* place that adds up the
//! buffer: [`TmConfig::validate`] refuses a configuration whose budget is
//! [`BudgetVerdict::Overcommitted`], [`super::Tm`] sizes its shared pool
//! from [`BufferBudget::shared_bytes`], and the fabric service validates a
//! fabric configuration with the budget of the traffic-manager settings it
//! plans ([`crate::fabric::config::FabricConfig::validate`]), so `rocectl
//! headroom`, validation and enforcement cannot disagree. Pure; allocates
//! one row per lossless PG. Units: bytes, metres.
//!
//! Rules: per-PG headroom is [`super::PortConfig::pg_headroom_bytes`]
//! (the configured size or R-HR-2); reserved space is charged first
//! (R-BUF-1); with a shared headroom pool the headroom set aside is
//! ceil(Σ xoff / ratio) (R-PFC-TX-6); the shared pool is
//! buffer − Σ reserved − headroom (R-DT-3); a dynamic threshold allows
//! α · free bytes (R-DT-1), α · B / (1 + N · α) each when N PGs are
//! congested at once (R-DT-4).

use super::config::{PortConfig, Threshold, TmConfig};

/// One lossless priority group's share of the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PgBudget {
    /// Port.
    pub port: u16,
    /// Priority group.
    pub pg: u8,
    /// PFC-enabled priorities mapped to the PG (bit p = priority p).
    pub priorities: u8,
    /// Port speed, bit/s.
    pub speed_bps: u64,
    /// Cable length the headroom was sized for, if any.
    pub cable_length_m: Option<u32>,
    /// Port MTU, bytes.
    pub mtu_bytes: u32,
    /// Guaranteed (reserved) bytes.
    pub reserved_bytes: u64,
    /// Headroom (xoff) bytes; `None`: cannot be sized (no cable length).
    pub xoff_bytes: Option<u64>,
    /// XON floor, if configured (R-PFC-TX-3).
    pub xon_bytes: Option<u64>,
    /// The shared-pool threshold at which the PG sends XOFF.
    pub threshold: BudgetThreshold,
}

/// A PG threshold as the budget reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum BudgetThreshold {
    /// XOFF once the PG holds this many shared bytes.
    Static {
        /// Bytes (0 = unlimited).
        xoff_bytes: u64,
    },
    /// α = 2^exponent of the free shared pool.
    Dynamic {
        /// The exponent n of α = 2^n.
        exponent: i8,
    },
}

impl From<Threshold> for BudgetThreshold {
    fn from(t: Threshold) -> Self {
        match t {
            Threshold::Static(xoff_bytes) => BudgetThreshold::Static { xoff_bytes },
            Threshold::Dynamic(exponent) => BudgetThreshold::Dynamic { exponent },
        }
    }
}

impl BudgetThreshold {
    /// α of a dynamic threshold.
    pub fn alpha(self) -> Option<f64> {
        match self {
            BudgetThreshold::Dynamic { exponent } => Some(2f64.powi(i32::from(exponent))),
            BudgetThreshold::Static { .. } => None,
        }
    }

    /// Shared bytes one PG may hold before XOFF when `congested` PGs
    /// (at least 1) fill a pool of `shared_bytes` together: α·B/(1+N·α)
    /// (R-DT-4), or the static level.
    pub fn xoff_at_bytes(self, shared_bytes: u64, congested: u32) -> u64 {
        match self {
            BudgetThreshold::Static { xoff_bytes: 0 } => shared_bytes,
            BudgetThreshold::Static { xoff_bytes } => xoff_bytes.min(shared_bytes),
            BudgetThreshold::Dynamic { .. } => {
                let a = self.alpha().unwrap_or(1.0);
                let n = f64::from(congested.max(1));
                (a * shared_bytes as f64 / (1.0 + n * a)) as u64
            }
        }
    }
}

/// Whether the buffer can hold the configuration losslessly.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum BudgetVerdict {
    /// Every lossless PG has its headroom and a shared pool is left.
    Lossless,
    /// A lossless PG's headroom cannot be sized (no cable length).
    NoHeadroom {
        /// (port, PG) pairs without a size.
        pgs: Vec<(u16, u8)>,
    },
    /// Reserved space and headroom fit but leave no shared buffer: every
    /// lossless packet goes straight to headroom (XOFF on the first byte)
    /// and lossy traffic has nowhere to go.
    NoSharedLeft {
        /// Σ reserved + headroom.
        guaranteed_bytes: u64,
        /// The buffer.
        buffer_bytes: u64,
    },
    /// Reserved space and headroom exceed the buffer: PFC cannot keep
    /// every lossless PG from dropping.
    Overcommitted {
        /// Σ reserved + headroom.
        guaranteed_bytes: u64,
        /// The buffer.
        buffer_bytes: u64,
    },
}

impl BudgetVerdict {
    /// A sentence for people.
    pub fn explain(&self) -> String {
        match self {
            BudgetVerdict::Lossless => "lossless: every lossless PG has its headroom".into(),
            BudgetVerdict::NoHeadroom { pgs } => format!(
                "cannot be lossless: no cable length to size the headroom of (port, PG) {pgs:?}"
            ),
            BudgetVerdict::NoSharedLeft {
                guaranteed_bytes,
                buffer_bytes,
            } => format!(
                "cannot be lossless: reserved + headroom = {guaranteed_bytes} bytes leave nothing \
                 of the {buffer_bytes}-byte buffer for the shared pool"
            ),
            BudgetVerdict::Overcommitted {
                guaranteed_bytes,
                buffer_bytes,
            } => format!(
                "cannot be lossless: reserved + headroom = {guaranteed_bytes} bytes exceed the \
                 {buffer_bytes}-byte buffer by {} bytes",
                guaranteed_bytes - buffer_bytes
            ),
        }
    }
}

/// The whole switch's buffer budget. See the module doc.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BufferBudget {
    /// Total buffer.
    pub buffer_bytes: u64,
    /// Accounting cell.
    pub cell_bytes: u32,
    /// One row per lossless PG, in (port, PG) order.
    pub pgs: Vec<PgBudget>,
    /// Σ reserved bytes over every PG, lossy ones included.
    pub reserved_total_bytes: u64,
    /// Σ xoff over the lossless PGs.
    pub xoff_total_bytes: u64,
    /// Headroom set aside: Σ xoff, or the shared headroom pool.
    pub headroom_pool_bytes: u64,
    /// Shared headroom pool over-subscription ratio, if any.
    pub shp_over_subscribe_ratio: Option<u32>,
    /// What is left for the shared pool.
    pub shared_bytes: u64,
    /// The R-PFC-TX-2 resume offset.
    pub resume_offset_bytes: u64,
}

/// The reserved bytes, Σ xoff over lossless PGs and the headroom pool of
/// `cfg` (the sums [`super::Tm`] sizes its pools with).
pub(crate) fn totals(cfg: &TmConfig) -> (u64, u64, u64) {
    let mut reserved = 0u64;
    let mut xoff = 0u64;
    for port in &cfg.ports {
        for (g, pg) in port.pgs.iter().enumerate() {
            reserved = reserved.saturating_add(pg.reserved_bytes);
            xoff = xoff.saturating_add(port.pg_headroom_bytes(g).unwrap_or(0));
        }
    }
    (reserved, xoff, cfg.headroom_pool_bytes(xoff))
}

impl BufferBudget {
    /// The budget of `cfg`.
    pub fn of(cfg: &TmConfig) -> BufferBudget {
        let mut pgs = Vec::new();
        for (i, port) in cfg.ports.iter().enumerate() {
            let lossless = port.lossless_pg_mask();
            for g in 0..8usize {
                if lossless & (1 << g) == 0 {
                    continue;
                }
                pgs.push(pg_row(i as u16, port, g));
            }
        }
        let (reserved, xoff, pool) = totals(cfg);
        BufferBudget {
            buffer_bytes: cfg.buffer_bytes,
            cell_bytes: cfg.cell_bytes,
            pgs,
            reserved_total_bytes: reserved,
            xoff_total_bytes: xoff,
            headroom_pool_bytes: pool,
            shp_over_subscribe_ratio: cfg.shp_over_subscribe_ratio,
            shared_bytes: cfg
                .buffer_bytes
                .saturating_sub(reserved.saturating_add(pool)),
            resume_offset_bytes: cfg.resume_offset_bytes,
        }
    }

    /// Σ reserved + headroom set aside.
    pub fn guaranteed_bytes(&self) -> u64 {
        self.reserved_total_bytes
            .saturating_add(self.headroom_pool_bytes)
    }

    /// Whether the configuration can be lossless.
    pub fn verdict(&self) -> BudgetVerdict {
        let missing: Vec<(u16, u8)> = self
            .pgs
            .iter()
            .filter(|p| p.xoff_bytes.is_none())
            .map(|p| (p.port, p.pg))
            .collect();
        if !missing.is_empty() {
            return BudgetVerdict::NoHeadroom { pgs: missing };
        }
        let guaranteed_bytes = self.guaranteed_bytes();
        if guaranteed_bytes > self.buffer_bytes {
            BudgetVerdict::Overcommitted {
                guaranteed_bytes,
                buffer_bytes: self.buffer_bytes,
            }
        } else if guaranteed_bytes == self.buffer_bytes && !self.pgs.is_empty() {
            BudgetVerdict::NoSharedLeft {
                guaranteed_bytes,
                buffer_bytes: self.buffer_bytes,
            }
        } else {
            BudgetVerdict::Lossless
        }
    }

    /// Number of lossless PGs.
    pub fn lossless_pgs(&self) -> u32 {
        self.pgs.len() as u32
    }
}

fn pg_row(port_id: u16, port: &PortConfig, g: usize) -> PgBudget {
    let priorities = (0..8)
        .filter(|&p| port.pfc_enable & (1 << p) != 0 && usize::from(port.prio_to_pg[p] & 7) == g)
        .fold(0u8, |m, p| m | (1 << p));
    let pc = &port.pgs[g];
    PgBudget {
        port: port_id,
        pg: g as u8,
        priorities,
        speed_bps: port.speed_bps,
        cable_length_m: port.cable_length_m,
        mtu_bytes: port.mtu_bytes,
        reserved_bytes: pc.reserved_bytes,
        xoff_bytes: port.pg_headroom_bytes(g),
        xon_bytes: pc.xon_bytes,
        threshold: pc.threshold.into(),
    }
}

/// The longest cable (the same on every port that has one) for which
/// `cfg` stays [`BudgetVerdict::Lossless`], up to `limit_m`; `None` if it
/// is not lossless even with 0 m cables. Ports with an explicit headroom
/// do not change with the cable.
pub fn max_cable_m(cfg: &TmConfig, limit_m: u32) -> Option<u32> {
    let fits = |m: u32| {
        let mut c = cfg.clone();
        for p in &mut c.ports {
            if p.cable_length_m.is_some() {
                p.cable_length_m = Some(m);
            }
        }
        BufferBudget::of(&c).verdict() == BudgetVerdict::Lossless
    };
    if !fits(0) {
        return None;
    }
    let (mut lo, mut hi) = (0u32, limit_m);
    if fits(hi) {
        return Some(hi);
    }
    // fits(lo) && !fits(hi): headroom grows with the cable, so bisect.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// The order in which [`max_lossless_priorities`] makes priorities
/// lossless after the configured ones: RoCE's 3 and 4 first (R-MAP-3),
/// then the rest.
const PRIORITY_ORDER: [u8; 8] = [3, 4, 2, 5, 1, 0, 6, 7];

/// The most lossless priorities every port could have (the configured
/// ones first, then [`PRIORITY_ORDER`]) with `cfg` staying
/// [`BudgetVerdict::Lossless`]; 0 if even one does not fit.
pub fn max_lossless_priorities(cfg: &TmConfig) -> u8 {
    let mut best = 0;
    for k in 1..=8u8 {
        let mut c = cfg.clone();
        for p in &mut c.ports {
            let enabled = p.pfc_enable;
            let mut order: Vec<u8> = (0..8).filter(|&x| enabled & (1 << x) != 0).collect();
            order.extend(PRIORITY_ORDER.iter().filter(|&&x| enabled & (1 << x) == 0));
            p.pfc_enable = order[..usize::from(k)]
                .iter()
                .fold(0u8, |m, &x| m | (1 << x));
            p.legacy_pause = false;
        }
        if BufferBudget::of(&c).verdict() == BudgetVerdict::Lossless {
            best = k;
        } else {
            break;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tm::config::PortConfig;

    fn switch(ports: usize, cable: u32, buffer: u64) -> TmConfig {
        let mut c = TmConfig::with_ports(ports);
        c.buffer_bytes = buffer;
        for p in &mut c.ports {
            p.cable_length_m = Some(cable);
            p.mtu_bytes = 4200;
        }
        c
    }

    /// E-4 per PG (100 GbE, 100 m, MTU 4200 → xoff 56,320), summed.
    #[test]
    fn totals_are_the_per_pg_formula_summed() {
        let c = switch(4, 100, 12 << 20);
        let b = BufferBudget::of(&c);
        assert_eq!(b.pgs.len(), 4);
        assert!(b.pgs.iter().all(|p| p.xoff_bytes == Some(56_320)));
        assert_eq!(b.xoff_total_bytes, 4 * 56_320);
        assert_eq!(b.headroom_pool_bytes, 4 * 56_320);
        assert_eq!(b.shared_bytes, (12 << 20) - 4 * 56_320);
        assert_eq!(b.verdict(), BudgetVerdict::Lossless);
        let port = PortConfig {
            mtu_bytes: 4200,
            ..PortConfig::default()
        };
        assert_eq!(
            port.pg_headroom_bytes(3),
            b.pgs[0].xoff_bytes,
            "the TM's own per-PG number"
        );
    }

    #[test]
    fn refusals_say_why() {
        let c = switch(4, 100, 4 * 56_320);
        assert!(matches!(
            BufferBudget::of(&c).verdict(),
            BudgetVerdict::NoSharedLeft { .. }
        ));
        let c = switch(4, 100, 4 * 56_320 - 1);
        let v = BufferBudget::of(&c).verdict();
        assert_eq!(
            v,
            BudgetVerdict::Overcommitted {
                guaranteed_bytes: 4 * 56_320,
                buffer_bytes: 4 * 56_320 - 1
            }
        );
        assert!(v.explain().contains("exceed"), "{}", v.explain());
        let mut c = switch(1, 100, 1 << 20);
        c.ports[0].cable_length_m = None;
        assert_eq!(
            BufferBudget::of(&c).verdict(),
            BudgetVerdict::NoHeadroom { pgs: vec![(0, 3)] }
        );
    }

    #[test]
    fn shared_headroom_pool_divides_the_headroom() {
        let mut c = switch(4, 100, 12 << 20);
        c.shp_over_subscribe_ratio = Some(2);
        let b = BufferBudget::of(&c);
        assert_eq!(b.headroom_pool_bytes, 2 * 56_320);
    }

    #[test]
    fn what_the_pool_affords() {
        // 8 ports at 100 GbE; 1 MiB of buffer.
        let c = switch(8, 100, 1 << 20);
        let m = max_cable_m(&c, 10_000).unwrap();
        let at = |m: u32| {
            let mut c = c.clone();
            c.ports.iter_mut().for_each(|p| p.cable_length_m = Some(m));
            BufferBudget::of(&c).verdict()
        };
        assert_eq!(at(m), BudgetVerdict::Lossless);
        assert_ne!(at(m + 1), BudgetVerdict::Lossless);
        assert!(m > 100, "{m}");
        let k = max_lossless_priorities(&c);
        assert_eq!(k, 2, "two 56 KB PGs on 8 ports fit in 1 MiB, three do not");
        assert_eq!(max_cable_m(&switch(8, 100, 8 * 20_000), 10_000), None);
    }

    #[test]
    fn dynamic_thresholds_share_the_pool_e9() {
        let t = BudgetThreshold::Dynamic { exponent: 0 };
        let b = 12_582_912;
        assert_eq!(t.xoff_at_bytes(b, 1), 6_291_456);
        assert_eq!(t.xoff_at_bytes(b, 2), 4_194_304);
        let t = BudgetThreshold::Dynamic { exponent: -3 };
        assert_eq!(t.xoff_at_bytes(b, 4), 1_048_576);
        assert_eq!(
            BudgetThreshold::Static { xoff_bytes: 0 }.xoff_at_bytes(b, 3),
            b
        );
    }
}
