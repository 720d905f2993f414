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
    /// them); see "Scaling to slow links" below. The notification point's
    /// side of the same scaling is [`scaled_cnp_interval`].
    ///
    /// Scaling to slow links: DCQCN's defaults are tuned for 100 Gb/s, where
    /// a 4 KiB packet takes 0.33 µs and the queue between Kmin and Kmax
    /// drains in tens of µs. Rates (R_AI, R_HAI, the floor) scale with k =
    /// line / 100 G. Exact similarity would also stretch every time by 1/k
    /// and keep the byte counter: a 100 Mb/s lab would then be a 100 G
    /// fabric slowed 1,000×, and a 4 s run 4 ms of it, too short for DCQCN
    /// to leave its first cut (the senders sat near the floor). Keeping the
    /// 100 G timers is the other extreme: at 100 Mb/s a CNP followed every
    /// marked packet and the RP recovered within a packet time, so the
    /// queue swung between empty and 1.75 × Kmax in a ~140 ms limit cycle
    /// (`rocelab run --sim`, before this scaling). In between, each
    /// quantity is stretched by its own power of 1/k, calibrated in the
    /// simulator's 2:1 incast at 100 Mb/s, 1, 10 and 25 Gb/s for a queue
    /// that stays between Kmin and Kmax with no pause at full goodput:
    /// the α and rate timers by k^-0.2 ([`TIMER_STRETCH_EXPONENT`]), the NP's
    /// minimum CNP gap by k^-0.3 ([`CNP_GAP_STRETCH_EXPONENT`]), the byte
    /// counter by k^0.5 ([`BYTE_COUNTER_EXPONENT`]), and g grows by k^-0.5
    /// up to 1/16 ([`G_EXPONENT`], [`G_MAX`]) so α follows the queue within
    /// a few of the longer periods.
    pub fn scaled(line_rate_bps: u64) -> Self {
        let d = DcqcnConfig::default();
        let k = link_scale(line_rate_bps);
        let stretch = |t: Duration| stretch(t, k, TIMER_STRETCH_EXPONENT);
        DcqcnConfig {
            g: (d.g * k.powf(-G_EXPONENT)).min(G_MAX.max(d.g)),
            rate_ai_bps: d.rate_ai_bps * k,
            rate_hai_bps: d.rate_hai_bps * k,
            min_rate_bps: d.min_rate_bps * k,
            byte_counter_bytes: ((d.byte_counter_bytes as f64 * k.powf(BYTE_COUNTER_EXPONENT))
                as u64)
                .max(1),
            alpha_period: stretch(d.alpha_period),
            rate_timer: stretch(d.rate_timer),
            ..d
        }
    }
}

/// The NP's minimum gap between two CNPs of one QP (R-NP-1: 50 µs at
/// 100 Gb/s), stretched for a slower link by k^-0.3 like the RP's timers
/// ([`DcqcnConfig::scaled`]): 397 µs at 100 Mb/s, 199 µs at 1 Gb/s. At
/// 50 µs a 100 Mb/s receiver answered every marked 4 KiB packet with a CNP,
/// so the senders kept cutting while the queue drained.
pub fn scaled_cnp_interval(line_rate_bps: u64) -> Duration {
    stretch(
        Duration::from_nanos(DEFAULT_CNP_INTERVAL_NS),
        link_scale(line_rate_bps),
        CNP_GAP_STRETCH_EXPONENT,
    )
}

/// R-NP-1's minimum CNP gap at 100 Gb/s, ns.
pub const DEFAULT_CNP_INTERVAL_NS: u64 = 50_000;

/// k = line / 100 G, at most 1 (faster links keep the defaults).
fn link_scale(line_rate_bps: u64) -> f64 {
    (line_rate_bps as f64 / DcqcnConfig::REFERENCE_LINE_RATE_BPS).clamp(1e-6, 1.0)
}

fn stretch(t: Duration, k: f64, exponent: f64) -> Duration {
    Duration::from_nanos((t.as_nanos() as f64 * k.powf(-exponent)) as u64)
}

/// How far [`DcqcnConfig::scaled`] stretches the α and rate timers: 1/k^0.2,
/// i.e. 55 µs → 219 µs at 100 Mb/s and 138 µs at 1 Gb/s.
pub const TIMER_STRETCH_EXPONENT: f64 = 0.2;
/// How far [`scaled_cnp_interval`] stretches the NP's CNP gap: 1/k^0.3.
pub const CNP_GAP_STRETCH_EXPONENT: f64 = 0.3;
/// The byte counter B scales by k^0.5: 10 MB → 316 KB at 100 Mb/s (77 of
/// the lab's 4 KiB packets between byte-counter increase events; 2.4 with
/// B scaled by k, which drove the RP into hyper increase within ms).
pub const BYTE_COUNTER_EXPONENT: f64 = 0.5;
/// g grows by k^-0.5 on slower links (1/256 → 1/26 at 1 Gb/s) ...
pub const G_EXPONENT: f64 = 0.5;
/// ... up to 1/16 (100 Mb/s), the g of the simulator's ECN scenario
/// (README, "Where we differ"). With 1/256 at 100 Mb/s α lagged the queue
/// and it spent 13 % of the time above Kmax.
pub const G_MAX: f64 = 1.0 / 16.0;

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

    /// α as of the last CNP or [`Dcqcn::handle_timeout`] (its decay is
    /// applied when the controller next runs).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// CNPs handled so far.
    pub fn cnps(&self) -> u64 {
        self.cnps
    }

    /// On a CNP (R-RP-2).
    pub fn on_cnp(&mut self, now: Instant) {
        self.decay_alpha(now);
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

    /// The rate increase timer's next deadline (R-RP-4); `None` once the
    /// rate is back at line rate. α decay (R-RP-3) needs no wake-up of its
    /// own: it is applied, period by period on the same schedule, whenever
    /// the controller next runs ([`Dcqcn::on_cnp`], [`Dcqcn::handle_timeout`]).
    /// A caller may also skip the rate timer's wake-ups if it runs
    /// [`Dcqcn::handle_timeout`] before it next uses the rate and before
    /// each [`Dcqcn::on_cnp`]: the events due by then are applied in order.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.rate_deadline
    }

    /// Runs every timer due at `now` (α decay R-RP-3, rate timer R-RP-4).
    /// A zero period fires once per call rather than looping.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.decay_alpha(now);
        let period = self.config.rate_timer.max(Duration::from_nanos(1));
        while let Some(t) = self.rate_deadline.filter(|&t| t <= now) {
            self.increase();
            self.timer_count = self.timer_count.saturating_add(1);
            self.rate_deadline = Some(t + period);
        }
        if self.rate_current_bps >= self.line_rate_bps {
            // Fully recovered: further increase events change nothing until
            // the next CNP resets the stage counters, so stop waking up.
            self.rate_deadline = None;
        }
    }

    /// α decay (R-RP-3): α × (1 − g) for every period K that ended by
    /// `now` since the last CNP, the same values a timer firing each period
    /// would give, without waking a sender whose rate is back at line rate.
    fn decay_alpha(&mut self, now: Instant) {
        let Some(due) = self.alpha_deadline.filter(|&t| t <= now) else {
            return;
        };
        let k = self.config.alpha_period.as_nanos().max(1);
        let periods = (now.as_nanos() - due.as_nanos()) / k + 1;
        self.alpha *= (1.0 - self.config.g).powi(periods.min(i32::MAX as u64) as i32);
        self.alpha_deadline = Some(Instant::from_nanos(due.as_nanos() + periods * k));
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
        assert_eq!(
            scaled_cnp_interval(G100).as_nanos(),
            DEFAULT_CNP_INTERVAL_NS
        );
        let lab = DcqcnConfig::scaled(100_000_000);
        assert_eq!(lab.min_rate_bps, 100e3);
        assert_eq!(lab.rate_ai_bps, 40e3);
        assert_eq!(lab.rate_hai_bps, 200e3);
        // k = 1/1000: B × k^0.5, timers × k^-0.2, g × k^-0.5 up to 1/16,
        // the NP's CNP gap × k^-0.3.
        assert_eq!(lab.byte_counter_bytes, 316_227);
        assert_eq!(lab.alpha_period, Duration::from_nanos(218_958));
        assert_eq!(lab.rate_timer, lab.alpha_period);
        assert_eq!(lab.g, G_MAX);
        assert_eq!(scaled_cnp_interval(100_000_000).as_nanos(), 397_164);
        let gig = DcqcnConfig::scaled(1_000_000_000);
        assert!((gig.g - 10.0 / 256.0).abs() < 1e-12, "{}", gig.g);
        // The 100 G floor would pin a 100 Mb/s sender at line rate; the
        // scaled one halves it on the first CNP, as at 100 G.
        let mut rp = Dcqcn::new(lab, 100_000_000);
        rp.on_cnp(t(0));
        assert_eq!(rp.rate_bps(), 50e6);
    }

    #[test]
    fn alpha_decays_without_waking_and_a_recovered_sender_sleeps() {
        // Two controllers see the same CNPs; one is woken at every period
        // of the α timer, the other only when its rate timer is due. Their
        // α agree at the next CNP, period by period.
        let mut every = Dcqcn::new(DcqcnConfig::default(), G100);
        let mut lazy = every.clone();
        every.on_cnp(t(0));
        lazy.on_cnp(t(0));
        for i in 1..=40u64 {
            every.handle_timeout(t(i * 55_000));
        }
        while let Some(at) = lazy.poll_timeout() {
            lazy.handle_timeout(at);
        }
        // Recovered to line rate: nothing left to wake up for.
        assert_eq!(lazy.rate_bps(), 100e9);
        assert_eq!(lazy.poll_timeout(), None);
        every.handle_timeout(t(3_000_000));
        lazy.on_cnp(t(3_000_001));
        every.on_cnp(t(3_000_001));
        assert!((every.alpha() - lazy.alpha()).abs() < 1e-12);
        assert!(lazy.alpha() < 0.82, "{}", lazy.alpha());
        assert_eq!(every.rate_bps(), lazy.rate_bps());
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
