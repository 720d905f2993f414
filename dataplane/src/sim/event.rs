//! The simulator's event queue: a binary heap ordered by time, ties broken
//! by insertion order, so a run is a pure function of its inputs and seed.
//!
//! Contract: `pop` returns events in non-decreasing time; two events at the
//! same instant come out in the order they were pushed. Times are
//! [`Instant`]s (ns). Pushing allocates only when the heap grows.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::Instant;

struct Entry<E> {
    /// Time in the high 64 bits, insertion sequence in the low 64: one
    /// integer comparison orders by (time, sequence).
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, we want the earliest first.
        other.key.cmp(&self.key)
    }
}

/// A deterministic priority queue of timed events.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at `at`.
    pub fn push(&mut self, at: Instant, event: E) {
        let seq = self.seq;
        self.seq += 1;
        let key = (u128::from(at.as_nanos()) << 64) | u128::from(seq);
        self.heap.push(Entry { key, event });
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        self.heap.pop().map(|e| (Self::time(e.key), e.event))
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Instant> {
        self.heap.peek().map(|e| Self::time(e.key))
    }

    fn time(key: u128) -> Instant {
        Instant::from_nanos((key >> 64) as u64)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True if nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_order_then_fifo() {
        let mut q = EventQueue::new();
        q.push(Instant::from_nanos(5), 'a');
        q.push(Instant::from_nanos(1), 'b');
        q.push(Instant::from_nanos(5), 'c');
        q.push(Instant::from_nanos(1), 'd');
        q.push(Instant::from_nanos(3), 'e');
        let order: Vec<char> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!['b', 'd', 'e', 'a', 'c']);
        assert!(q.is_empty());
    }

    proptest::proptest! {
        #[test]
        fn pops_sorted_and_stable(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::new();
            for (i, &t) in times.iter().enumerate() {
                q.push(Instant::from_nanos(t), i);
            }
            let out: Vec<(Instant, usize)> = std::iter::from_fn(|| q.pop()).collect();
            let mut want: Vec<(Instant, usize)> =
                times.iter().enumerate().map(|(i, &t)| (Instant::from_nanos(t), i)).collect();
            want.sort(); // by time, then insertion index
            proptest::prop_assert_eq!(out, want);
        }
    }
}
