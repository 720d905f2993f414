//! Egress scheduler for one port's 8 queues: strict priority, then DWRR (ETS).
//!
//! Order of service (documented contract):
//! 1. strict queues, highest queue index first (7 before 6 …);
//! 2. the remaining queues by deficit weighted round robin: on each visit a
//!    queue gets `weight × quantum_bytes` of deficit and sends head packets
//!    while the head fits; an empty queue's deficit is reset to 0.
//!
//! Paused (or otherwise ineligible) queues are skipped and keep their deficit.
//!
//! Contract: `pick` is O(1) amortised (at most a few passes over 8 queues),
//! allocates nothing, never panics; it only chooses — the caller pops the
//! packet and then calls [`Scheduler::on_sent`].

/// Scheduler state for one port.
#[derive(Clone, Copy, Debug)]
pub struct Scheduler {
    strict_mask: u8,
    quantum_bytes: [u64; 8],
    deficit_bytes: [u64; 8],
    cursor: usize,
    /// The cursor's queue already got its quantum on this visit.
    topped_up: bool,
}

impl Scheduler {
    /// `strict_mask` bit q = queue q is strict; `quantum_bytes[q]` is the
    /// DWRR quantum (weight × unit) for the others (a quantum of 0 counts
    /// as 1).
    pub fn new(strict_mask: u8, quantum_bytes: [u64; 8]) -> Self {
        Scheduler {
            strict_mask,
            quantum_bytes: quantum_bytes.map(|q| q.max(1)),
            deficit_bytes: [0; 8],
            cursor: 0,
            topped_up: false,
        }
    }

    /// Replace modes and weights, keeping deficits.
    pub fn reconfigure(&mut self, strict_mask: u8, quantum_bytes: [u64; 8]) {
        self.strict_mask = strict_mask;
        self.quantum_bytes = quantum_bytes.map(|q| q.max(1));
    }

    /// Choose the next queue. `eligible` bit q = queue q is non-empty and not
    /// paused; `head_len(q)` is the byte length of its head packet.
    #[inline]
    pub fn pick(&mut self, eligible: u8, head_len: impl Fn(usize) -> u64) -> Option<usize> {
        let strict = eligible & self.strict_mask;
        if strict != 0 {
            return Some(7 - strict.leading_zeros() as usize);
        }
        let dwrr = eligible & !self.strict_mask;
        if dwrr == 0 {
            return None;
        }
        // Each full pass over the eligible queues adds at least one quantum to
        // every one of them, so this terminates; the bound is a safety net.
        for _ in 0..(8 * 64) {
            if dwrr & (1 << self.cursor) == 0 {
                // Skip ineligible queues in one step (same as advancing through them).
                let skip = dwrr.rotate_right(self.cursor as u32).trailing_zeros() as usize;
                self.cursor = (self.cursor + skip) % 8;
                self.topped_up = false;
            }
            let q = self.cursor;
            let len = head_len(q);
            if len <= self.deficit_bytes[q] {
                return Some(q);
            }
            if !self.topped_up {
                self.deficit_bytes[q] = self.deficit_bytes[q].saturating_add(self.quantum_bytes[q]);
                self.topped_up = true;
                if len <= self.deficit_bytes[q] {
                    return Some(q);
                }
            }
            self.advance();
        }
        // Unreachable with quanta ≥ 1 and sane lengths; serve the cursor anyway.
        (0..8).find(|q| dwrr & (1 << q) != 0)
    }

    #[inline]
    fn advance(&mut self) {
        self.cursor = (self.cursor + 1) % 8;
        self.topped_up = false;
    }

    /// Record that `queue` sent `len` bytes; `now_empty` resets its deficit
    /// and moves on.
    #[inline]
    pub fn on_sent(&mut self, queue: usize, len: u64, now_empty: bool) {
        if self.strict_mask & (1 << queue) != 0 {
            return;
        }
        self.deficit_bytes[queue] = self.deficit_bytes[queue].saturating_sub(len);
        if now_empty {
            self.deficit_bytes[queue] = 0;
            if self.cursor == queue {
                self.advance();
            }
        }
    }

    /// Forget `queue`'s deficit (it was flushed).
    pub fn on_flushed(&mut self, queue: usize) {
        self.deficit_bytes[queue] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(s: &mut Scheduler, lens: [u64; 8], eligible: u8, n: usize) -> [u64; 8] {
        let mut bytes = [0u64; 8];
        for _ in 0..n {
            let q = s.pick(eligible, |q| lens[q]).unwrap();
            bytes[q] += lens[q];
            s.on_sent(q, lens[q], false);
        }
        bytes
    }

    #[test]
    fn strict_highest_index_first() {
        let mut s = Scheduler::new(0b1100_0000, [1500; 8]);
        assert_eq!(s.pick(0b1100_0001, |_| 100), Some(7));
        assert_eq!(s.pick(0b0100_0001, |_| 100), Some(6));
        assert_eq!(s.pick(0b0000_0001, |_| 100), Some(0));
        assert_eq!(s.pick(0, |_| 100), None);
    }

    #[test]
    fn dwrr_shares_bytes_by_weight() {
        let mut s = Scheduler::new(0, [1000, 3000, 0, 0, 0, 0, 0, 0].map(|x: u64| x.max(1)));
        let bytes = run(&mut s, [500, 1500, 1, 1, 1, 1, 1, 1], 0b11, 40_000);
        let ratio = bytes[1] as f64 / bytes[0] as f64;
        assert!((ratio - 3.0).abs() < 0.01, "{ratio}");
    }

    #[test]
    fn large_packets_accumulate_deficit() {
        let mut s = Scheduler::new(0, [100; 8]);
        // A 9000-byte head needs many quanta but is served, with its deficit
        // built up honestly (90 quanta of 100 bytes).
        assert_eq!(s.pick(0b1, |_| 9000), Some(0));
        s.on_sent(0, 9000, false);
        assert_eq!(s.deficit_bytes[0], 0);
    }
}
