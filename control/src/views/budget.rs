//! `rocectl headroom` for a whole switch: the buffer budget of a fabric
//! configuration ([`dataplane::tm::BufferBudget`], the sums the traffic
//! manager enforces and the fabric service validates with), what the pool
//! still affords, and the verdict.

use std::fmt::Write as _;

use dataplane::fabric::FabricConfig;
use dataplane::tm::budget::{BudgetThreshold, max_cable_m, max_lossless_priorities};
use dataplane::tm::{BudgetVerdict, BufferBudget};
use serde::Serialize;

/// Longest cable [`SwitchBudget::of`] searches up to, metres.
pub const CABLE_SEARCH_LIMIT_M: u32 = 10_000;

/// A fabric configuration's budget with what the pool affords.
#[derive(Debug, Clone, Serialize)]
pub struct SwitchBudget {
    /// The budget itself.
    pub budget: BufferBudget,
    /// Whether it can be lossless.
    pub verdict: BudgetVerdict,
    /// The verdict in words.
    pub explanation: String,
    /// The longest cable every port could have and stay lossless.
    pub max_cable_m: Option<u32>,
    /// The most lossless priorities every port could have.
    pub max_lossless_priorities: u8,
}

impl SwitchBudget {
    /// The budget of `cfg`.
    pub fn of(cfg: &FabricConfig) -> SwitchBudget {
        let tm = cfg.standalone_tm_config();
        let budget = BufferBudget::of(&tm);
        let verdict = budget.verdict();
        SwitchBudget {
            explanation: verdict.explain(),
            verdict,
            max_cable_m: max_cable_m(&tm, CABLE_SEARCH_LIMIT_M),
            max_lossless_priorities: max_lossless_priorities(&tm),
            budget,
        }
    }

    /// True if the configuration can be lossless.
    pub fn is_lossless(&self) -> bool {
        self.verdict == BudgetVerdict::Lossless
    }
}

fn speed(bps: u64) -> String {
    if bps >= 1_000_000_000 && bps.is_multiple_of(1_000_000_000) {
        format!("{}G", bps / 1_000_000_000)
    } else if bps.is_multiple_of(1_000_000) {
        format!("{}M", bps / 1_000_000)
    } else {
        bps.to_string()
    }
}

fn prios(mask: u8) -> String {
    (0..8)
        .filter(|p| mask & (1 << p) != 0)
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn threshold(t: BudgetThreshold, shared: u64, congested: u32) -> String {
    match t {
        BudgetThreshold::Static { xoff_bytes: 0 } => "static, unlimited".into(),
        BudgetThreshold::Static { xoff_bytes } => format!("static xoff {xoff_bytes}"),
        BudgetThreshold::Dynamic { exponent } => format!(
            "dynamic alpha 2^{exponent}: xoff at {} shared, {} with {congested} congested",
            t.xoff_at_bytes(shared, 1),
            t.xoff_at_bytes(shared, congested)
        ),
    }
}

/// The table: one row per lossless PG, then the totals, what the pool
/// affords and the verdict.
pub fn table(s: &SwitchBudget) -> String {
    let b = &s.budget;
    let n = b.lossless_pgs();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "buffer {} B, cell {} B, {} lossless PG(s)",
        b.buffer_bytes, b.cell_bytes, n
    );
    let _ = writeln!(
        out,
        "{:>4} {:>2} {:>5} {:>6} {:>6} {:>5} {:>9} {:>10} {:>8}  threshold",
        "port", "pg", "prios", "speed", "cable", "mtu", "reserved", "xoff", "xon"
    );
    for r in &b.pgs {
        let _ = writeln!(
            out,
            "{:>4} {:>2} {:>5} {:>6} {:>6} {:>5} {:>9} {:>10} {:>8}  {}",
            r.port,
            r.pg,
            prios(r.priorities),
            speed(r.speed_bps),
            r.cable_length_m
                .map_or("-".to_string(), |m| format!("{m}m")),
            r.mtu_bytes,
            r.reserved_bytes,
            r.xoff_bytes.map_or("?".to_string(), |x| x.to_string()),
            r.xon_bytes.map_or("-".to_string(), |x| x.to_string()),
            threshold(r.threshold, b.shared_bytes, n),
        );
    }
    let pct = |v: u64| {
        if b.buffer_bytes == 0 {
            0.0
        } else {
            100.0 * v as f64 / b.buffer_bytes as f64
        }
    };
    let _ = writeln!(
        out,
        "reserved total        {:>12} B  {:5.1} %",
        b.reserved_total_bytes,
        pct(b.reserved_total_bytes)
    );
    let _ = writeln!(
        out,
        "headroom (sum xoff)   {:>12} B  {:5.1} %",
        b.xoff_total_bytes,
        pct(b.xoff_total_bytes)
    );
    if let Some(r) = b.shp_over_subscribe_ratio {
        let _ = writeln!(
            out,
            "headroom set aside    {:>12} B  {:5.1} %  (shared headroom pool, 1:{r})",
            b.headroom_pool_bytes,
            pct(b.headroom_pool_bytes)
        );
    }
    let _ = writeln!(
        out,
        "shared pool left      {:>12} B  {:5.1} %",
        b.shared_bytes,
        pct(b.shared_bytes)
    );
    let _ = writeln!(
        out,
        "xon: resume when headroom is empty and shared + {} B is under the threshold (R-PFC-TX-2)",
        b.resume_offset_bytes
    );
    let _ = writeln!(
        out,
        "largest cable on every port: {}",
        s.max_cable_m.map_or("none fits".to_string(), |m| {
            if m >= CABLE_SEARCH_LIMIT_M {
                format!(">= {m} m")
            } else {
                format!("{m} m")
            }
        })
    );
    let _ = writeln!(
        out,
        "most lossless priorities on every port: {}",
        s.max_lossless_priorities
    );
    let _ = writeln!(out, "{}", s.explanation);
    out
}

/// The JSON form (every field of [`SwitchBudget`]).
pub fn json(s: &SwitchBudget) -> serde_json::Value {
    serde_json::to_value(s).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dataplane::fabric::config::{BufferConfig, PortConfig, Trust};

    fn cfg(ports: u16, pool: u64) -> FabricConfig {
        FabricConfig {
            ports: (0..ports)
                .map(|port| PortConfig {
                    port,
                    speed_bps: 100_000_000_000,
                    mtu_bytes: 4200,
                    cable_length_m: 100,
                    trust: Some(Trust::Dscp),
                    pfc_priorities: vec![3],
                })
                .collect(),
            buffer: BufferConfig {
                pool_size_bytes: pool,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_lossless_switch_shows_its_rows_totals_and_margins() {
        let s = SwitchBudget::of(&cfg(4, 12 << 20));
        assert!(s.is_lossless());
        let t = table(&s);
        assert!(t.contains("4 lossless PG(s)"), "{t}");
        assert!(t.contains("225280 B"), "4 x 56,320 (E-4): {t}");
        assert!(
            t.lines()
                .any(|l| l.contains("  100G") && l.contains("100m"))
        );
        let j = json(&s);
        assert_eq!(j["budget"]["xoff_total_bytes"], 225_280);
        assert_eq!(j["verdict"], "Lossless");
    }

    #[test]
    fn an_impossible_switch_is_refused_with_the_reason() {
        let s = SwitchBudget::of(&cfg(4, 200_000));
        assert!(!s.is_lossless());
        assert!(table(&s).contains("cannot be lossless"));
        assert_eq!(s.max_lossless_priorities, 0);
        let v = cfg(4, 200_000).validate();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].reason, s.explanation, "validation says the same");
    }
}
