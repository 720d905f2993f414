//! RED/ECN marking decision on the instantaneous egress queue length
//! (R-ECN-3), for the simulator's plain-Rust forwarding; the P4 egress
//! implements the same ramp in P4.
//!
//! Contract: pure, no allocation, never panics. `q` is the queue's bytes
//! *after* the departing packet is removed (R-ECN-4: decide at dequeue, the
//! traffic manager reports it as `deq_qdepth_bytes`). Whether a packet may be
//! marked at all (ECT vs Not-ECT, R-ECN-2) is the caller's business.

/// A RED ramp: Kmin, Kmax in bytes, Pmax as a probability in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedConfig {
    /// No marking at or below this queue length.
    pub kmin_bytes: u64,
    /// Mark with probability 1 above this queue length.
    pub kmax_bytes: u64,
    /// Probability at Kmax (SONiC `green_drop_probability` / 100, R-ECN-5).
    pub pmax: f64,
}

impl RedConfig {
    /// SONiC AZURE_LOSSLESS (R-ECN-5): 1 MiB / 2 MiB / 5 %.
    pub const AZURE_LOSSLESS: RedConfig = RedConfig {
        kmin_bytes: 1_048_576,
        kmax_bytes: 2_097_152,
        pmax: 0.05,
    };

    /// `Err` with a reason unless Kmin ≤ Kmax and 0 ≤ Pmax ≤ 1.
    pub fn validate(&self) -> Result<(), &'static str> {
        if self.kmin_bytes > self.kmax_bytes {
            return Err("kmin_bytes must be <= kmax_bytes");
        }
        if !(0.0..=1.0).contains(&self.pmax) {
            return Err("pmax must be in [0, 1]");
        }
        Ok(())
    }
}

/// R-ECN-3: 0 if q ≤ Kmin; Pmax·(q − Kmin)/(Kmax − Kmin) if Kmin < q ≤ Kmax;
/// 1 if q > Kmax. A degenerate ramp (Kmin = Kmax) is a step at Kmin.
pub fn red_mark_probability(q_bytes: u64, kmin_bytes: u64, kmax_bytes: u64, pmax: f64) -> f64 {
    if q_bytes <= kmin_bytes {
        0.0
    } else if q_bytes > kmax_bytes {
        1.0
    } else {
        // kmin < q ≤ kmax, so kmax > kmin here.
        pmax * (q_bytes - kmin_bytes) as f64 / (kmax_bytes - kmin_bytes) as f64
    }
}

/// Deterministic marking decision: mark iff `rand_u32 < p · 2^32` (compared
/// exactly, in `f64`), so with a
/// uniform `rand_u32` the marking probability is `p` (p = 1 always marks,
/// p = 0 never does).
pub fn should_mark(q_bytes: u64, cfg: &RedConfig, rand_u32: u32) -> bool {
    let p = red_mark_probability(q_bytes, cfg.kmin_bytes, cfg.kmax_bytes, cfg.pmax);
    if p >= 1.0 {
        return true;
    }
    f64::from(rand_u32) < p * 4_294_967_296.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const DCQCN: RedConfig = RedConfig {
        kmin_bytes: 5_120,
        kmax_bytes: 204_800,
        pmax: 0.01,
    };

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn ramp_e10() {
        let p = |q| red_mark_probability(q, DCQCN.kmin_bytes, DCQCN.kmax_bytes, DCQCN.pmax);
        assert!(close(p(104_960), 0.005));
        assert_eq!(p(5_120), 0.0);
        assert!(close(p(204_800), 0.01));
        assert_eq!(p(204_801), 1.0);
        assert!(close(
            red_mark_probability(1_000_000, 400_000, 1_600_000, 0.2),
            0.1
        ));
        let az = RedConfig::AZURE_LOSSLESS;
        assert!(close(
            red_mark_probability(1_572_864, az.kmin_bytes, az.kmax_bytes, az.pmax),
            0.025
        ));
    }

    #[test]
    fn should_mark_is_deterministic_in_the_random_input() {
        // p = 0.005 → cutoff = 0.005 · 2^32 = 21,474,836.48
        assert!(should_mark(104_960, &DCQCN, 0));
        assert!(should_mark(104_960, &DCQCN, 21_474_836));
        assert!(!should_mark(104_960, &DCQCN, 21_474_837));
        assert!(!should_mark(5_120, &DCQCN, 0));
        assert!(should_mark(204_801, &DCQCN, u32::MAX));
    }

    #[test]
    fn marking_rate_matches_probability() {
        // Sweep the random input uniformly: the marked fraction is p.
        let n = 1u64 << 16;
        let marked = (0..n)
            .filter(|i| should_mark(104_960, &DCQCN, (i << 16) as u32))
            .count();
        assert!((marked as f64 - 0.005 * n as f64).abs() <= 1.0, "{marked}");
    }

    #[test]
    fn validate_rejects_inverted_ramps() {
        assert!(
            RedConfig {
                kmin_bytes: 10,
                kmax_bytes: 5,
                pmax: 0.1
            }
            .validate()
            .is_err()
        );
        assert!(
            RedConfig {
                kmin_bytes: 1,
                kmax_bytes: 5,
                pmax: 1.5
            }
            .validate()
            .is_err()
        );
        assert!(DCQCN.validate().is_ok());
        // Kmin == Kmax is a step, not a division by zero.
        assert_eq!(red_mark_probability(10, 10, 10, 0.5), 0.0);
        assert_eq!(red_mark_probability(11, 10, 10, 0.5), 1.0);
    }
}
