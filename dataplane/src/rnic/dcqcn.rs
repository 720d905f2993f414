//! DCQCN reaction point (RP): the per-QP rate controller of a RoCE sender.
//!
//! Contract: sans-IO; every input takes `now` ([`Instant`], monotonic ns);
//! rates are bits per second as `f64` internally and reported as `u64`.
//! Nothing allocates. A spurious [`Dcqcn::handle_timeout`] does nothing.
//!
//! Implements roce-semantics §11: R-RP-1 (state, start at line rate), R-RP-2
//! (cut on CNP, first CNP sets α = 1), R-RP-3 (α decay every K without a CNP),
//! R-RP-4 (timer and byte-counter increase events, fast recovery / additive /
//! hyper increase, capped at line rate). Worked example E-15.
//!
//! Stage counting: an increase event is evaluated with the counters as they
//! were *before* the event is counted, so a flow gets exactly F fast-recovery
//! steps (E-15 lists five with F = 5). Timers run only after the first CNP:
//! before it the flow is at line rate and there is nothing to recover.

use crate::time::{Duration, Instant};

/// DCQCN parameters (defaults: roce-semantics R-RP-2..4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DcqcnConfig {
    /// α gain g (default 1/256).
    pub g: f64,
    /// α decay period K (default 55 µs).
    pub alpha_period: Duration,
    /// Rate increase timer period T (default 55 µs).
    pub rate_timer: Duration,
    /// Byte counter B in bytes (default 10 MB).
    pub byte_counter_bytes: u64,
    /// Fast recovery steps F (default 5).
    pub fast_recovery_steps: u32,
    /// Additive increase R_AI in bit/s (default 40 Mb/s).
    pub rate_ai_bps: f64,
    /// Hyper increase R_HAI in bit/s (default 200 Mb/s).
    pub rate_hai_bps: f64,
    /// Lowest rate a cut may reach, bit/s (default 100 Mb/s).
    pub min_rate_bps: f64,
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig {
            g: 1.0 / 256.0,
            alpha_period: Duration::from_micros(55),
            rate_timer: Duration::from_micros(55),
            byte_counter_bytes: 10_000_000,
            fast_recovery_steps: 5,
            rate_ai_bps: 40e6,
            rate_hai_bps: 200e6,
            min_rate_bps: 100e6,
        }
    }
}

impl DcqcnConfig {
    /// The line rate the default rate steps are written for: R_AI, R_HAI,
    /// the floor and the byte counter are 100 Gb/s NIC values.
    pub const REFERENCE_LINE_RATE_BPS: f64 = 100e9;

    /// The defaults scaled to a slower `line_rate_bps` (faster links keep
    /// them): rate steps, the floor and the byte counter by k = line /
    /// 100 G, the α and rate timers stretched by k^-0.2
    /// ([`TIMER_STRETCH_EXPONENT`]).
    ///
    /// Why: with the 100 G floor of 100 Mb/s a 100 Mb/s sender could never
    /// be cut, and with 55 µs timers it recovers fully within one 4 KiB
    /// packet time (330 µs), so CNPs changed nothing and PFC did all the
    /// work. Stretching the timers by 1/k (the same dynamics in packet
    /// units) is the other extreme: a 4 s lab run is then 4 ms of a 100 G
    /// fabric, and the senders sat at the floor (2 % goodput).
    pub fn scaled(line_rate_bps: u64) -> Self {
        let d = DcqcnConfig::default();
        let k = (line_rate_bps as f64 / Self::REFERENCE_LINE_RATE_BPS).min(1.0);
        let stretch = |t: Duration| {
            Duration::from_nanos((t.as_nanos() as f64 / k.powf(TIMER_STRETCH_EXPONENT)) as u64)
        };
        DcqcnConfig {
            rate_ai_bps: d.rate_ai_bps * k,
            rate_hai_bps: d.rate_hai_bps * k,
            min_rate_bps: d.min_rate_bps * k,
            byte_counter_bytes: ((d.byte_counter_bytes as f64 * k) as u64).max(1),
            alpha_period: stretch(d.alpha_period),
            rate_timer: stretch(d.rate_timer),
            ..d
        }
    }
}

/// How far [`DcqcnConfig::scaled`] stretches the timers: 1/k^0.2, i.e.
/// 55 µs → 219 µs at 100 Mb/s and 138 µs at 1 Gb/s. Calibrated in the
/// simulator's incast (`rocelab run --sim --dcqcn`): at 0.1 PFC still fired
/// 14,728 times at 100 Mb/s, at 0.5 goodput fell to 51 %; 0.15–0.2 gave no
/// pause at either speed with 89–93 % (100 Mb/s) and 75–77 % (1 Gb/s) of
/// line rate.
pub const TIMER_STRETCH_EXPONENT: f64 = 0.2;

/// Per-QP RP state.
#[derive(Debug, Clone)]
pub struct Dcqcn {
    config: DcqcnConfig,
    line_rate_bps: f64,
    rate_current_bps: f64,
    rate_target_bps: f64,
    alpha: f64,
    timer_count: u32,
    byte_count: u32,
    bytes_since_event: u64,
    cnp_seen: bool,
    alpha_deadline: Option<Instant>,
    rate_deadline: Option<Instant>,
    cnps: u64,
}

impl Dcqcn {
    /// A controller starting at line rate (R-RP-1).
    pub fn new(config: DcqcnConfig, line_rate_bps: u64) -> Self {
        let line = line_rate_bps as f64;
        Dcqcn {
            config,
            line_rate_bps: line,
            rate_current_bps: line,
            rate_target_bps: line,
            alpha: 1.0,
            timer_count: 0,
            byte_count: 0,
            bytes_since_event: 0,
            cnp_seen: false,
            alpha_deadline: None,
            rate_deadline: None,
            cnps: 0,
        }
    }

    /// Current rate RC, bit/s.
    pub fn rate_bps(&self) -> f64 {
        self.rate_current_bps
    }

    /// Target rate RT, bit/s.
    pub fn target_rate_bps(&self) -> f64 {
        self.rate_target_bps
    }

    /// α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// CNPs handled so far.
    pub fn cnps(&self) -> u64 {
        self.cnps
    }

    /// On a CNP (R-RP-2).
    pub fn on_cnp(&mut self, now: Instant) {
        if !self.cnp_seen {
            self.cnp_seen = true;
            self.alpha = 1.0;
        }
        self.cnps += 1;
        self.rate_target_bps = self.rate_current_bps;
        self.rate_current_bps =
            (self.rate_current_bps * (1.0 - self.alpha / 2.0)).max(self.config.min_rate_bps);
        self.alpha = (1.0 - self.config.g) * self.alpha + self.config.g;
        self.timer_count = 0;
        self.byte_count = 0;
        self.bytes_since_event = 0;
        self.alpha_deadline = Some(now + self.config.alpha_period);
        self.rate_deadline = Some(now + self.config.rate_timer);
    }

    /// On `bytes` sent (byte counter, R-RP-4).
    pub fn on_sent(&mut self, bytes: u64) {
        if !self.cnp_seen {
            return;
        }
        self.bytes_since_event += bytes;
        while self.bytes_since_event >= self.config.byte_counter_bytes {
            self.bytes_since_event -= self.config.byte_counter_bytes;
            self.increase();
            self.byte_count = self.byte_count.saturating_add(1);
        }
    }

    /// The earliest pending timer.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.alpha_deadline, self.rate_deadline) {
            (Some(a), Some(r)) => Some(a.min(r)),
            (a, r) => a.or(r),
        }
    }

    /// Runs every timer due at `now` (α decay R-RP-3, rate timer R-RP-4).
    /// A zero period fires once per call rather than looping.
    pub fn handle_timeout(&mut self, now: Instant) {
        let k = self.config.alpha_period.max(Duration::from_nanos(1));
        while let Some(t) = self.alpha_deadline.filter(|&t| t <= now) {
            self.alpha *= 1.0 - self.config.g;
            self.alpha_deadline = Some(t + k);
        }
        let period = self.config.rate_timer.max(Duration::from_nanos(1));
        while let Some(t) = self.rate_deadline.filter(|&t| t <= now) {
            self.increase();
            self.timer_count = self.timer_count.saturating_add(1);
            self.rate_deadline = Some(t + period);
        }
        if self.rate_current_bps >= self.line_rate_bps && self.alpha < 1e-6 {
            // Fully recovered and α negligible: stop waking up.
            self.alpha_deadline = None;
            self.rate_deadline = None;
        }
    }

    fn increase(&mut self) {
        let f = self.config.fast_recovery_steps;
        let hi = self.timer_count.max(self.byte_count);
        let lo = self.timer_count.min(self.byte_count);
        if hi < f {
            // Fast recovery.
        } else if lo < f {
            self.rate_target_bps += self.config.rate_ai_bps;
        } else {
            self.rate_target_bps += f64::from(lo - f + 1) * self.config.rate_hai_bps;
        }
        self.rate_target_bps = self.rate_target_bps.min(self.line_rate_bps);
        self.rate_current_bps =
            ((self.rate_target_bps + self.rate_current_bps) / 2.0).min(self.line_rate_bps);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: u64 = 100_000_000_000;

    fn t(ns: u64) -> Instant {
        Instant::from_nanos(ns)
    }

    #[test]
    fn e15_first_cnp_and_fast_recovery() {
        let mut d = Dcqcn::new(DcqcnConfig::default(), G100);
        d.on_cnp(t(0));
        assert_eq!(d.rate_bps(), 50e9);
        assert_eq!(d.target_rate_bps(), 100e9);
        assert_eq!(d.alpha(), 1.0);
        let mut seen = vec![];
        for i in 1..=5u64 {
            // Rate timer T = 55 µs fires; α timer fires at the same instants.
            d.handle_timeout(t(i * 55_000));
            seen.push(d.rate_bps() / 1e9);
        }
        assert_eq!(seen, vec![75.0, 87.5, 93.75, 96.875, 98.4375]);
    }

    #[test]
    fn e15_alpha_decay() {
        let mut d = Dcqcn::new(DcqcnConfig::default(), G100);
        d.on_cnp(t(0));
        d.handle_timeout(t(55_000));
        assert!((d.alpha() - 0.996_093_75).abs() < 1e-12);
        d.handle_timeout(t(550_000));
        assert!((d.alpha() - 0.961_617).abs() < 1e-6);
    }

    #[test]
    fn scaled_steps_follow_the_line_rate_and_never_exceed_the_defaults() {
        let d = DcqcnConfig::default();
        assert_eq!(DcqcnConfig::scaled(G100), d);
        assert_eq!(DcqcnConfig::scaled(400_000_000_000), d);
        let lab = DcqcnConfig::scaled(100_000_000);
        assert_eq!(lab.min_rate_bps, 100e3);
        assert_eq!(lab.rate_ai_bps, 40e3);
        assert_eq!(lab.rate_hai_bps, 200e3);
        assert_eq!(lab.byte_counter_bytes, 10_000);
        assert_eq!(lab.alpha_period, Duration::from_nanos(218_958));
        assert_eq!(lab.rate_timer, lab.alpha_period);
        // The 100 G floor would pin a 100 Mb/s sender at line rate; the
        // scaled one halves it on the first CNP, as at 100 G.
        let mut rp = Dcqcn::new(lab, 100_000_000);
        rp.on_cnp(t(0));
        assert_eq!(rp.rate_bps(), 50e6);
    }

    #[test]
    fn second_cnp_cuts_by_alpha_half() {
        let mut d = Dcqcn::new(DcqcnConfig::default(), G100);
        d.on_cnp(t(0));
        d.on_cnp(t(1_000));
        // α is still 1 → halve again: 25 G, RT = 50 G.
        assert_eq!(d.rate_bps(), 25e9);
        assert_eq!(d.target_rate_bps(), 50e9);
    }

    #[test]
    fn min_rate_floor_and_additive_increase() {
        let cfg = DcqcnConfig {
            min_rate_bps: 10e9,
            ..DcqcnConfig::default()
        };
        let mut d = Dcqcn::new(cfg, G100);
        for i in 0..10 {
            d.on_cnp(t(i));
        }
        assert_eq!(d.rate_bps(), 10e9);
        // After F timer events, RT starts growing by R_AI per event.
        for i in 1..=5u64 {
            d.handle_timeout(t(10 + i * 55_000));
        }
        let rt = d.target_rate_bps();
        d.handle_timeout(t(10 + 6 * 55_000));
        assert!((d.target_rate_bps() - rt - 40e6).abs() < 1.0);
    }

    #[test]
    fn byte_counter_drives_increase() {
        let cfg = DcqcnConfig {
            byte_counter_bytes: 1000,
            ..DcqcnConfig::default()
        };
        let mut d = Dcqcn::new(cfg, G100);
        d.on_sent(10_000); // before any CNP: no effect
        assert_eq!(d.rate_bps(), 100e9);
        d.on_cnp(t(0));
        d.on_sent(999);
        assert_eq!(d.rate_bps(), 50e9);
        d.on_sent(1);
        assert_eq!(d.rate_bps(), 75e9);
    }

    #[test]
    fn spurious_timeout_is_harmless() {
        let mut d = Dcqcn::new(DcqcnConfig::default(), G100);
        d.handle_timeout(t(1_000_000));
        assert_eq!(d.rate_bps(), 100e9);
        assert_eq!(d.poll_timeout(), None);
    }
}
