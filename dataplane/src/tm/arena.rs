//! The TM's packet store: one arena of slots reserved when the TM is built,
//! and FIFO lists of slot indices threaded through it (the egress queues
//! and the watchdog's flushed packets), the way an ASIC's queues are linked
//! lists of descriptors over a fixed cell buffer.
//!
//! Contract: the arena's capacity is [`max_packets`] of the configuration,
//! reserved in one allocation by [`Arena::with_capacity`] (up to
//! [`MAX_RESERVED_BYTES`] of slots: the 12 MiB default buffer in 256-byte
//! cells needs 49,152, each holding the switch's pointer-sized queue record
//! and the TM's own accounting; the packet it points to sits in the switch's
//! own pool). The buffer
//! accounting charges every packet at least one cell and never admits more
//! than `buffer_bytes` in all (reserved + shared pool + headroom pool =
//! buffer, R-DT-3), so the TM never holds more than `buffer_bytes /
//! cell_bytes` packets and the arena never grows: pushing, popping and
//! moving a packet between lists are O(1) and allocate nothing (tested in
//! `tests.rs` and `tests/tm_alloc.rs`). Only a configuration change that
//! leaves more admitted than the new buffer allows ([`super::Tm::handle_config`]
//! keeps queued packets) can need more, and then the arena grows there, once;
//! so does a configuration whose buffer needs more than
//! [`MAX_RESERVED_BYTES`] of slots (the simulator's ideal switch with a
//! 1 TiB buffer), which reserves that much and grows past it only if that
//! many packets are ever queued at once.
//!
//! Freed slots are reused last-in, first-out, so the memory pages the store
//! touches are those of the deepest occupancy ever reached, bounded by the
//! buffer configuration; the reservation itself is address space until a
//! queue first reaches that depth. A flush moves packets between lists
//! without copying them, and the flushed packets stay in their slots until
//! their owner takes them.
//!
//! Written by hand: a slab crate (`slab`) gives the arena but not the
//! intrusive lists, and a `VecDeque` per queue is what this replaces (it
//! reallocated, doubling and copying, whenever a queue went deeper than
//! before, and a flush threw its capacity away).

/// "No slot": the end of a list.
const NIL: u32 = u32::MAX;

/// The most address space reserved up front for slots, bytes.
pub(super) const MAX_RESERVED_BYTES: usize = 64 << 20;

/// The most packets the buffer accounting can hold at once: every packet is
/// charged at least one cell and the charges never exceed `buffer_bytes`.
pub(super) fn max_packets(buffer_bytes: u64, cell_bytes: u32) -> usize {
    let cells = buffer_bytes / u64::from(cell_bytes.max(1));
    usize::try_from(cells)
        .unwrap_or(usize::MAX)
        .min(NIL as usize)
}

/// A FIFO of slots in an [`Arena`]: a descriptor queue (head, tail, length).
#[derive(Clone, Copy, Debug)]
pub(super) struct List {
    head: u32,
    tail: u32,
    len: u32,
}

impl Default for List {
    fn default() -> Self {
        List {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl List {
    /// Packets in the list.
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    /// `true` if the list holds nothing.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[derive(Debug)]
struct Entry<V> {
    value: Option<V>,
    /// Next slot in the list this slot is on (a queue, the discarded list
    /// or the free list).
    next: u32,
}

/// Slots for `V`, reserved once; see the module doc.
#[derive(Debug)]
pub(super) struct Arena<V> {
    entries: Vec<Entry<V>>,
    /// Head of the free list (slots once used, now empty), LIFO.
    free: u32,
}

impl<V> Arena<V> {
    /// An arena for up to `capacity` values, reserved now (at most
    /// [`MAX_RESERVED_BYTES`] of them).
    pub(super) fn with_capacity(capacity: usize) -> Self {
        Arena {
            entries: Vec::with_capacity(capacity.min(Self::max_reserved())),
            free: NIL,
        }
    }

    fn max_reserved() -> usize {
        MAX_RESERVED_BYTES / size_of::<Entry<V>>().max(1)
    }

    /// Slots reserved.
    pub(super) fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    /// Slots ever used at once (the high-water mark: the pages touched).
    pub(super) fn touched(&self) -> usize {
        self.entries.len()
    }

    /// Makes room for `capacity` slots in all (a configuration change).
    pub(super) fn reserve_total(&mut self, capacity: usize) {
        let capacity = capacity.min(Self::max_reserved());
        if capacity > self.entries.capacity() {
            self.entries.reserve_exact(capacity - self.entries.len());
        }
    }

    /// Appends `value` to `list`.
    #[inline(always)]
    pub(super) fn push_back(&mut self, list: &mut List, value: V) {
        let idx = if self.free != NIL {
            let idx = self.free;
            let entry = &mut self.entries[idx as usize];
            self.free = entry.next;
            entry.value = Some(value);
            entry.next = NIL;
            idx
        } else {
            self.first_use(value)
        };
        self.link_back(list, idx);
    }

    /// A slot never used before (only until the deepest occupancy is
    /// reached, so kept off the per-packet path's code).
    #[cold]
    #[inline(never)]
    fn first_use(&mut self, value: V) -> u32 {
        let idx = self.entries.len() as u32;
        self.entries.push(Entry {
            value: Some(value),
            next: NIL,
        });
        idx
    }

    /// The value at the head of `list`.
    #[inline(always)]
    pub(super) fn front(&self, list: &List) -> Option<&V> {
        if list.head == NIL {
            return None;
        }
        self.entries[list.head as usize].value.as_ref()
    }

    /// Removes and returns the head of `list`; its slot goes to the free list.
    #[inline(always)]
    pub(super) fn pop_front(&mut self, list: &mut List) -> Option<V> {
        let idx = list.head;
        if idx == NIL {
            return None;
        }
        let entry = &mut self.entries[idx as usize];
        list.head = entry.next;
        list.len -= 1;
        if list.head == NIL {
            list.tail = NIL;
        }
        let value = entry.value.take();
        entry.next = self.free;
        self.free = idx;
        value
    }

    /// The values of `list`, head first.
    pub(super) fn iter<'a>(&'a self, list: &List) -> impl Iterator<Item = &'a V> + 'a {
        let mut idx = list.head;
        std::iter::from_fn(move || {
            if idx == NIL {
                return None;
            }
            let entry = &self.entries[idx as usize];
            idx = entry.next;
            entry.value.as_ref()
        })
    }

    /// Moves every value of `from` for which `pick` is true to the back of
    /// `to`, in order, without moving the values themselves; calls `moved`
    /// with each one moved. O(len of `from`), allocates nothing.
    pub(super) fn move_where(
        &mut self,
        from: &mut List,
        to: &mut List,
        mut pick: impl FnMut(&V) -> bool,
        mut moved: impl FnMut(&V),
    ) {
        let mut prev = NIL;
        let mut idx = from.head;
        while idx != NIL {
            let entry = &self.entries[idx as usize];
            let next = entry.next;
            let value = entry.value.as_ref().expect("a listed slot holds a value");
            if pick(value) {
                moved(value);
                // Unlink from `from`.
                if prev == NIL {
                    from.head = next;
                } else {
                    self.entries[prev as usize].next = next;
                }
                if from.tail == idx {
                    from.tail = prev;
                }
                from.len -= 1;
                self.entries[idx as usize].next = NIL;
                self.link_back(to, idx);
            } else {
                prev = idx;
            }
            idx = next;
        }
    }

    #[inline(always)]
    fn link_back(&mut self, list: &mut List, idx: u32) {
        if list.tail == NIL {
            list.head = idx;
        } else {
            self.entries[list.tail as usize].next = idx;
        }
        list.tail = idx;
        list.len += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_fifo_and_share_the_reserved_slots() {
        let mut arena = Arena::with_capacity(4);
        let (mut a, mut b) = (List::default(), List::default());
        for v in 0..3 {
            arena.push_back(&mut a, v);
        }
        arena.push_back(&mut b, 10);
        assert_eq!(arena.pop_front(&mut a), Some(0));
        arena.push_back(&mut b, 11);
        assert_eq!(arena.iter(&a).copied().collect::<Vec<_>>(), [1, 2]);
        assert_eq!(arena.iter(&b).copied().collect::<Vec<_>>(), [10, 11]);
        // Four slots served five pushes: the popped one was reused.
        assert_eq!((arena.touched(), arena.capacity()), (4, 4));
        assert_eq!((a.len(), b.len()), (2, 2));
    }

    #[test]
    fn move_where_keeps_order_on_both_sides() {
        let mut arena = Arena::with_capacity(8);
        let (mut q, mut out) = (List::default(), List::default());
        for v in 0..8 {
            arena.push_back(&mut q, v);
        }
        let mut seen = Vec::new();
        arena.move_where(&mut q, &mut out, |v| v % 3 != 1, |v| seen.push(*v));
        assert_eq!(arena.iter(&q).copied().collect::<Vec<_>>(), [1, 4, 7]);
        assert_eq!(
            arena.iter(&out).copied().collect::<Vec<_>>(),
            [0, 2, 3, 5, 6]
        );
        assert_eq!(seen, [0, 2, 3, 5, 6]);
        // The tail of the source is right: appending after a move works.
        arena.pop_front(&mut out);
        arena.push_back(&mut q, 8);
        assert_eq!(arena.iter(&q).copied().collect::<Vec<_>>(), [1, 4, 7, 8]);
        // Moving everything empties the source completely.
        arena.move_where(&mut q, &mut out, |_| true, |_| {});
        assert!(q.is_empty() && arena.front(&q).is_none());
        assert_eq!(out.len(), 8);
        assert_eq!(arena.pop_front(&mut out), Some(2));
        arena.push_back(&mut q, 9);
        assert_eq!(arena.iter(&q).copied().collect::<Vec<_>>(), [9]);
        assert_eq!(arena.capacity(), 8);
    }

    #[test]
    fn a_huge_buffer_reserves_a_bounded_store_that_still_grows() {
        let mut arena: Arena<[u8; 1000]> = Arena::with_capacity(max_packets(1 << 40, 256));
        let reserved = arena.capacity();
        assert!(reserved * 1000 <= MAX_RESERVED_BYTES && reserved > 60_000);
        let mut list = List::default();
        for _ in 0..reserved + 1 {
            arena.push_back(&mut list, [7; 1000]);
        }
        assert_eq!(list.len(), reserved + 1);
        assert_eq!(arena.pop_front(&mut list), Some([7; 1000]));
    }

    #[test]
    fn max_packets_is_whole_cells_of_the_buffer() {
        assert_eq!(max_packets(12 << 20, 256), 49_152);
        assert_eq!(max_packets(1000, 256), 3);
    }
}
