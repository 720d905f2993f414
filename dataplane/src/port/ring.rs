//! Memory-mapped `TPACKET_V2` rings of an `AF_PACKET` socket: the slot
//! geometry, the mapping, and walking the receive and transmit rings.
//!
//! A ring is `frame_nr` fixed-size slots in blocks the kernel allocates and
//! user space maps (`PACKET_RX_RING`, `PACKET_TX_RING`, one `mmap` for both,
//! receive ring first). Each slot starts with a `struct tpacket2_hdr` whose
//! `tp_status` says who owns it (Linux `Documentation/networking/packet_mmap.rst`,
//! `<linux/if_packet.h>`):
//! - receive: the kernel fills a slot it owns (`TP_STATUS_KERNEL`), then
//!   sets `TP_STATUS_USER`; we read the frame at `tp_mac` (`tp_snaplen`
//!   bytes of a `tp_len`-byte frame) and hand the slot back by storing
//!   `TP_STATUS_KERNEL`;
//! - transmit: we fill a free slot (`TP_STATUS_AVAILABLE`) with a frame at
//!   [`TX_DATA_OFFSET`] and its length in `tp_len`, store
//!   `TP_STATUS_SEND_REQUEST`, and a `send(2)` with no data makes the kernel
//!   send every requested slot in ring order; it marks a slot
//!   `TP_STATUS_AVAILABLE` again when the frame's buffer is released.
//!
//! Both sides walk the slots in order, so one index per ring suffices. The
//! status word is read with acquire and written with release ordering (the
//! kernel pairs them with `smp_wmb`/`smp_rmb` around its own accesses).
//!
//! Why `TPACKET_V2` and not `V3` for receive: a `V3` block is handed to user
//! space only when it is full or its retire timer (whole milliseconds)
//! fires, so a lone frame waits up to that timer; a switch forwarding a
//! pause frame or one RoCE ACK cannot wait milliseconds. `V2` hands over
//! every frame on its own. Its cost is fixed slots sized for the largest
//! frame, which [`RingGeometry::for_frames`] keeps in whole blocks.
//!
//! Contract: [`RingGeometry`] is plain arithmetic (tested without
//! privileges). [`Mapping`] unmaps on drop; the ring views borrow raw
//! pointers into it and must not outlive it (the port owns both and drops
//! them together). Nothing here allocates after setup or makes a system
//! call except `mmap`/`munmap`.

use std::sync::atomic::{AtomicU32, Ordering};

/// Bytes of `struct tpacket2_hdr` padded to `TPACKET_ALIGNMENT`: where a
/// transmit slot's frame starts (no `PACKET_TX_HAS_OFF`), and where the
/// `struct sockaddr_ll` of a receive slot sits.
pub(crate) const TX_DATA_OFFSET: usize = libc::TPACKET2_HDRLEN - SOCKADDR_LL_BYTES;

const ETH_P_8021Q: u16 = 0x8100;

const SOCKADDR_LL_BYTES: usize = std::mem::size_of::<libc::sockaddr_ll>();

/// Headroom asked of the kernel in front of a received frame
/// (`PACKET_RESERVE`), so a stripped 802.1Q tag can be put back in place.
pub(crate) const RX_RESERVE_BYTES: usize = 4;

/// Where the kernel puts a received Ethernet frame in a slot at most:
/// `TPACKET_ALIGN(TPACKET2_HDRLEN + 16) + reserve - 14` (af_packet.c
/// `tpacket_rcv`: `netoff`, then `macoff = netoff - maclen`).
const RX_MAC_OFFSET_MAX: usize = align(libc::TPACKET2_HDRLEN + 16) + RX_RESERVE_BYTES;

const fn align(x: usize) -> usize {
    (x + libc::TPACKET_ALIGNMENT - 1) & !(libc::TPACKET_ALIGNMENT - 1)
}

/// Slots and blocks of one ring (`struct tpacket_req`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RingGeometry {
    /// Bytes per slot (a multiple of `TPACKET_ALIGNMENT`).
    pub(crate) frame_size: usize,
    /// Slots in the ring.
    pub(crate) frame_nr: usize,
    /// Bytes per block (a power-of-two number of pages).
    pub(crate) block_size: usize,
    /// Blocks in the ring.
    pub(crate) block_nr: usize,
}

impl RingGeometry {
    /// Slot and block size for frames of `max_frame_bytes` after
    /// `data_offset` bytes of slot header: blocks are the smallest power of
    /// two of at least `page` bytes that holds 8 slots, so little of a
    /// block is left over when slots are large (jumbo frames).
    fn slots(data_offset: usize, max_frame_bytes: usize, page: usize) -> (usize, usize) {
        let frame_size = align(data_offset + max_frame_bytes);
        let block_size = (frame_size * 8).next_power_of_two().max(page);
        (frame_size, block_size)
    }

    fn with_blocks(frame_size: usize, block_size: usize, block_nr: usize) -> RingGeometry {
        RingGeometry {
            frame_size,
            frame_nr: block_size / frame_size * block_nr,
            block_size,
            block_nr,
        }
    }

    /// The receive ring for slots holding `max_frame_bytes`, in about
    /// `ring_bytes` of memory (at least one block).
    pub(crate) fn rx(max_frame_bytes: usize, ring_bytes: usize, page: usize) -> RingGeometry {
        let (frame_size, block_size) = Self::slots(RX_MAC_OFFSET_MAX, max_frame_bytes, page);
        Self::with_blocks(frame_size, block_size, (ring_bytes / block_size).max(1))
    }

    /// The transmit ring with at least `frames` slots holding
    /// `max_frame_bytes`.
    pub(crate) fn tx(max_frame_bytes: usize, frames: usize, page: usize) -> RingGeometry {
        let (frame_size, block_size) = Self::slots(TX_DATA_OFFSET, max_frame_bytes, page);
        let per_block = block_size / frame_size;
        Self::with_blocks(frame_size, block_size, frames.div_ceil(per_block).max(1))
    }

    /// Bytes the ring takes in the mapping.
    pub(crate) fn bytes(&self) -> usize {
        self.block_size * self.block_nr
    }

    /// Slots in block `b` start at `b * block_size`; the slot's offset.
    fn slot_offset(&self, slot: usize) -> usize {
        let per_block = self.block_size / self.frame_size;
        (slot / per_block) * self.block_size + (slot % per_block) * self.frame_size
    }

    /// The request for `setsockopt(PACKET_RX_RING / PACKET_TX_RING)`.
    pub(crate) fn request(&self) -> libc::tpacket_req {
        libc::tpacket_req {
            tp_block_size: self.block_size as libc::c_uint,
            tp_block_nr: self.block_nr as libc::c_uint,
            tp_frame_size: self.frame_size as libc::c_uint,
            tp_frame_nr: self.frame_nr as libc::c_uint,
        }
    }
}

/// A shared mapping of a socket's rings; unmapped on drop.
#[derive(Debug)]
pub(crate) struct Mapping {
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory shared with the kernel; the port that
// owns it is used from one thread at a time (`&mut self` methods).
unsafe impl Send for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd`'s rings.
    pub(crate) fn new(fd: libc::c_int, len: usize) -> std::io::Result<Mapping> {
        // SAFETY: a fresh shared mapping of the socket's rings; checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapping {
            base: p.cast(),
            len,
        })
    }
}

impl Mapping {
    /// The first byte of the mapping (the receive ring's first block).
    pub(crate) fn base(&self) -> *mut u8 {
        self.base
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are exactly what mmap returned.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// The `tp_status` word of the slot at `slot` (the header's first field).
///
/// # Safety
/// `slot` points at a slot header inside a live mapping (4-aligned: slots
/// are 16-aligned).
unsafe fn status<'a>(slot: *mut u8) -> &'a AtomicU32 {
    // SAFETY: per the function contract.
    unsafe { AtomicU32::from_ptr(slot.cast()) }
}

/// A frame the kernel handed over in a receive slot.
pub(crate) struct RxFrame<'a> {
    /// The frame's bytes in the slot, from its MAC header, with a tag the
    /// kernel stripped put back.
    pub(crate) data: &'a [u8],
    /// Bytes the kernel could not fit in the slot (the frame was longer).
    pub(crate) cut_bytes: usize,
    /// `sll_pkttype` (`PACKET_OUTGOING` for own transmissions).
    pub(crate) pkttype: u8,
    /// An 802.1Q tag the kernel had stripped was put back.
    pub(crate) tag_restored: bool,
}

/// The receive ring, walked in order from `head`.
#[derive(Debug)]
pub(crate) struct RxRing {
    base: *mut u8,
    geometry: RingGeometry,
    head: usize,
}

// SAFETY: see `Mapping`.
unsafe impl Send for RxRing {}

impl RxRing {
    /// The ring at `base` (inside a mapping that outlives it).
    pub(crate) fn new(base: *mut u8, geometry: RingGeometry) -> RxRing {
        RxRing {
            base,
            geometry,
            head: 0,
        }
    }

    fn slot(&self, i: usize) -> *mut u8 {
        // SAFETY: `slot_offset` of a slot index < frame_nr stays in the ring.
        unsafe { self.base.add(self.geometry.slot_offset(i)) }
    }

    /// True if the next slot holds a frame for us (one load, no call).
    pub(crate) fn ready(&self) -> bool {
        // SAFETY: `head` < frame_nr; slots are aligned.
        let st = unsafe { status(self.slot(self.head)) }.load(Ordering::Acquire);
        st & libc::TP_STATUS_USER != 0
    }

    /// Hands the next frame to `f` if there is one, then gives its slot
    /// back to the kernel. `None` when the ring is empty.
    pub(crate) fn take<R>(&mut self, f: impl FnOnce(RxFrame<'_>) -> R) -> Option<R> {
        let slot = self.slot(self.head);
        // SAFETY: `slot` is a slot header in the live mapping.
        let st = unsafe { status(slot) };
        let status_bits = st.load(Ordering::Acquire);
        if status_bits & libc::TP_STATUS_USER == 0 {
            return None;
        }
        // SAFETY: the kernel set TP_STATUS_USER: the slot and its header
        // are ours until we store TP_STATUS_KERNEL. The header is a
        // `tpacket2_hdr` followed (16-aligned) by a `sockaddr_ll`.
        let (hdr, pkttype) = unsafe {
            let hdr = std::ptr::read(slot.cast::<libc::tpacket2_hdr>());
            let sll =
                std::ptr::read_unaligned(slot.add(TX_DATA_OFFSET).cast::<libc::sockaddr_ll>());
            (hdr, sll.sll_pkttype)
        };
        let frame_size = self.geometry.frame_size;
        let mut mac = usize::from(hdr.tp_mac).min(frame_size);
        let snap = (hdr.tp_snaplen as usize).min(frame_size - mac);
        let mut len = snap;
        // The kernel strips the 802.1Q tag of every received frame (even
        // with rx VLAN offload off) and reports it in the header: put it
        // back after the MAC addresses, in the headroom PACKET_RESERVE
        // keeps in front of the frame, so the frame is as it was on the wire.
        let tagged = hdr.tp_status & libc::TP_STATUS_VLAN_VALID != 0
            && snap >= 12
            && mac >= libc::TPACKET2_HDRLEN + 4;
        if tagged {
            let tpid = if hdr.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                hdr.tp_vlan_tpid
            } else {
                ETH_P_8021Q
            };
            // SAFETY: `mac - 4 .. mac + 12` is inside this slot (the header
            // check above), which is ours; the copy may overlap.
            unsafe {
                let at = slot.add(mac);
                std::ptr::copy(at, at.sub(4), 12);
                let tag = at.add(8);
                tag.cast::<[u8; 2]>().write_unaligned(tpid.to_be_bytes());
                tag.add(2)
                    .cast::<[u8; 2]>()
                    .write_unaligned(hdr.tp_vlan_tci.to_be_bytes());
            }
            mac -= 4;
            len += 4;
        }
        // SAFETY: `mac..mac + len` lies inside this slot, which is ours.
        let data = unsafe { std::slice::from_raw_parts(slot.add(mac), len) };
        let out = f(RxFrame {
            data,
            cut_bytes: (hdr.tp_len as usize).saturating_sub(snap),
            pkttype,
            tag_restored: tagged,
        });
        st.store(libc::TP_STATUS_KERNEL, Ordering::Release);
        self.head = (self.head + 1) % self.geometry.frame_nr;
        Some(out)
    }
}

/// The transmit ring: slots are filled at `head` and requested for sending;
/// the `in_flight` slots before `head` are requested and not yet seen free
/// again.
#[derive(Debug)]
pub(crate) struct TxRing {
    base: *mut u8,
    geometry: RingGeometry,
    head: usize,
    /// Slots requested and not seen free again.
    in_flight: usize,
}

// SAFETY: see `Mapping`.
unsafe impl Send for TxRing {}

impl TxRing {
    /// The ring at `base` (inside a mapping that outlives it).
    pub(crate) fn new(base: *mut u8, geometry: RingGeometry) -> TxRing {
        TxRing {
            base,
            geometry,
            head: 0,
            in_flight: 0,
        }
    }

    fn slot(&self, i: usize) -> *mut u8 {
        // SAFETY: `slot_offset` of a slot index < frame_nr stays in the ring.
        unsafe { self.base.add(self.geometry.slot_offset(i)) }
    }

    /// Largest frame a slot holds, bytes.
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.geometry.frame_size - TX_DATA_OFFSET
    }

    /// Counts the slots the kernel has finished with since the last call
    /// (in ring order from the oldest requested one).
    fn reap(&mut self) {
        while self.in_flight > 0 {
            let tail =
                (self.head + self.geometry.frame_nr - self.in_flight) % self.geometry.frame_nr;
            // SAFETY: a slot header in the live mapping.
            let st = unsafe { status(self.slot(tail)) }.load(Ordering::Acquire);
            if st != libc::TP_STATUS_AVAILABLE {
                break;
            }
            self.in_flight -= 1;
        }
    }

    /// The data area of the next free slot, to write a frame into before
    /// [`TxRing::commit`]; `None` when the ring is full (every slot
    /// requested and not yet released by the kernel).
    pub(crate) fn next_free(&mut self) -> Option<&mut [u8]> {
        if self.in_flight == self.geometry.frame_nr {
            self.reap();
            if self.in_flight == self.geometry.frame_nr {
                return None;
            }
        }
        let slot = self.slot(self.head);
        // SAFETY: a slot header in the live mapping.
        if unsafe { status(slot) }.load(Ordering::Acquire) != libc::TP_STATUS_AVAILABLE {
            // The kernel still holds it (released out of order).
            return None;
        }
        let cap = self.capacity_bytes();
        // SAFETY: the slot is free (ours until we request it); its data
        // area is `cap` bytes after the header.
        Some(unsafe { std::slice::from_raw_parts_mut(slot.add(TX_DATA_OFFSET), cap) })
    }

    /// Requests sending the frame of `len` bytes written into the slot
    /// [`TxRing::next_free`] returned (call only after it returned `Some`).
    pub(crate) fn commit(&mut self, len: usize) {
        let slot = self.slot(self.head);
        // SAFETY: the slot is free and ours (next_free checked it); its
        // header is a `tpacket2_hdr`.
        unsafe {
            (*slot.cast::<libc::tpacket2_hdr>()).tp_len = len.min(self.capacity_bytes()) as u32;
            status(slot).store(libc::TP_STATUS_SEND_REQUEST, Ordering::Release);
        }
        self.head = (self.head + 1) % self.geometry.frame_nr;
        self.in_flight += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_fill_whole_blocks_and_hold_the_largest_frame() {
        // A 1500-byte MTU: frames up to 1522 bytes (two tags).
        let g = RingGeometry::rx(1522, 8 << 20, 4096);
        assert_eq!(g.frame_size % 16, 0);
        assert!(g.frame_size >= RX_MAC_OFFSET_MAX + 1522);
        assert!(g.block_size.is_power_of_two() && g.block_size >= 4096);
        assert_eq!(g.frame_nr, g.block_size / g.frame_size * g.block_nr);
        assert!(g.bytes() <= 8 << 20 && g.bytes() > 7 << 20, "{g:?}");
        // Jumbo slots: little of a block is left over.
        let j = RingGeometry::rx(9022, 8 << 20, 4096);
        let waste = j.block_size - j.block_size / j.frame_size * j.frame_size;
        assert!(waste * 8 < j.block_size, "{j:?}");
    }

    #[test]
    fn a_slot_never_straddles_a_block() {
        let g = RingGeometry::tx(9022, 100, 4096);
        assert!(g.frame_nr >= 100, "{g:?}");
        for i in 0..g.frame_nr {
            let at = g.slot_offset(i);
            assert_eq!(at / g.block_size, (at + g.frame_size - 1) / g.block_size);
            assert!(at + g.frame_size <= g.bytes());
        }
        assert_eq!(TX_DATA_OFFSET, 32, "tpacket2_hdr padded to 16");
    }

    #[test]
    fn a_tiny_ring_still_has_one_block() {
        let g = RingGeometry::rx(60, 0, 4096);
        assert_eq!(g.block_nr, 1);
        assert!(g.frame_nr >= 8);
    }
}
