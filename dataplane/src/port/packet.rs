//! [`AfPacketPort`]: a Linux `AF_PACKET` raw socket bound to one interface,
//! moving frames through memory-mapped `TPACKET_V2` receive and transmit
//! rings ([`super::ring`]).
//!
//! Why rings: with `recvmmsg`/`sendmmsg` every frame costs a socket
//! buffer, a copy into or out of user memory and a message header per
//! system call; a relay on them reached 363 kpps here against ≥ 408 kpps
//! on rings (packet-io.md), and the switch on them lost half of what a
//! generator offered. With rings the kernel copies a received frame into a
//! slot we read in place, and a transmit is a slot we fill plus one
//! `send(2)` per batch. No crate offers these rings with what a switch
//! needs (VLAN tags restored, own transmissions ignored, kernel drops
//! counted, link loss and reopen): `pnet` has plain sockets only,
//! `afpacket` and the like wrap `TPACKET_V3` receive rings for capture.
//! Hence this module, by hand.
//!
//! Setup (each step's failure is a [`PortError::Setup`] naming the step):
//! - `socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, 0)`: protocol 0 receives
//!   nothing until `bind`, so no frame from another interface slips in.
//! - `PACKET_IGNORE_OUTGOING`: the kernel does not loop frames sent out of
//!   this interface (by any socket) back to us. Without it a switch
//!   re-receives its own transmissions (packet-io.md, first trap). As a
//!   second line, frames reported as `PACKET_OUTGOING` are dropped and
//!   counted.
//! - `PACKET_VERSION` `TPACKET_V2`, `PACKET_RESERVE` 4 bytes (room to put
//!   back an 802.1Q tag in front of a received frame), `PACKET_LOSS` (a
//!   frame the kernel refuses to send, e.g. longer than the MTU after the
//!   MTU shrank, is skipped instead of stopping the transmit ring for
//!   good; frames longer than the MTU read at open are dropped and counted
//!   before they reach the ring), then the two rings, sized from the
//!   interface MTU read at open ([`AfPacketConfig`]), mapped once.
//! - The kernel strips the 802.1Q tag of every received frame in software
//!   (`skb_vlan_untag`), whether or not rx VLAN offload is on, and reports
//!   it in the slot header (`tp_vlan_tci`, `TP_STATUS_VLAN_VALID`): the
//!   tag is re-inserted in place, so received frames look as they did on
//!   the wire (as ptf does).
//! - `PACKET_MR_PROMISC` membership, `SO_SNDBUFFORCE` to 4 MiB (the
//!   transmit ring's frames in flight count against it), `bind` with
//!   `ETH_P_ALL` to the interface index.
//!
//! Frames the kernel dropped because the receive ring was full
//! (`PACKET_STATISTICS` `tp_drops`, which reading resets) are collected by
//! [`Port::take_rx_lost`] and kept in [`PortStats::rx_kernel_drops`].
//! Frames longer than a slot (the MTU was raised after open) are dropped
//! and counted (`rx_truncated`). Requires `CAP_NET_RAW`. The socket lives
//! in the network namespace of the thread that opened it (see
//! [`super::netns`]).
//!
//! Transmit: a slot is requested as soon as it is filled and one `send(2)`
//! per batch ([`Port::send_batch`], [`Port::send_with`]) makes the kernel
//! take every requested slot. When the peer's backlog is full the kernel
//! returns `ENOBUFS` and leaves the refused frame requested in its slot;
//! [`Port::tx_backlog`] then says so and the next send call asks again, so
//! no frame is lost and order is kept.
//!
//! Link loss: when the interface is deleted the kernel unbinds the socket;
//! sends then fail with `ENXIO`. An interface set down makes sends fail
//! with `ENETDOWN`. Receiving from a ring makes no system call, so a quiet
//! port's loss is found by [`Port::link_check`], every
//! [`crate::driver::LINK_CHECK_INTERVAL`]. A veth whose peer is down (no
//! carrier) gives no error at all: sends succeed and go nowhere (measured
//! on a veth pair, kernel of this VM). [`Port::link_check`] looks, by
//! name, whether the interface still has the index the socket is bound to
//! and is `IFF_UP | IFF_RUNNING` (`SIOCGIFINDEX`, `SIOCGIFFLAGS`: two
//! system calls); [`Port::reopen`] opens a fresh socket with fresh rings on
//! whatever index the name has now, in the same namespace, with the same
//! settings, keeping the counters.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use super::ring::{Mapping, RX_RESERVE_BYTES, RingGeometry, RxRing, TxRing};
use super::{FrameBuf, LinkDown, Port, PortError};

/// Requested send buffer size, bytes: frames in the transmit ring that the
/// kernel has taken and not released count against it.
const SOCKET_BUFFER_BYTES: libc::c_int = 4 << 20;

const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// Ethernet header plus two VLAN tags: what a frame may carry beyond the
/// interface MTU, bytes.
const FRAME_OVERHEAD_BYTES: usize = 14 + 8;

/// Sizes of a port's rings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AfPacketConfig {
    /// Memory for the receive ring, bytes: with a 1500-byte MTU each slot
    /// takes 1.6 KB, with 9000 bytes 9.2 KB, whatever the frame's size.
    pub rx_ring_bytes: usize,
    /// Slots of the transmit ring (frames handed to the kernel and not yet
    /// released; a veth peer releases them as it receives).
    pub tx_ring_frames: usize,
    /// Longest frame the slots hold, bytes (Ethernet header and tags
    /// included); `None`: what the interface MTU allows. A host that knows
    /// its largest frame (an RNIC: its RoCE MTU plus headers) gets several
    /// times more slots out of the same memory; longer frames are dropped
    /// and counted (`rx_truncated`, `tx_oversize`).
    pub max_frame_bytes: Option<usize>,
}

impl Default for AfPacketConfig {
    /// 8 MiB of receive ring (5,000 slots at a 1500-byte MTU: 6 ms of
    /// 64-byte frames at 800 kpps; 900 at 9000 bytes: 3 ms of 4 KiB RoCE
    /// frames at 10 Gb/s) and 256 transmit slots.
    fn default() -> Self {
        AfPacketConfig {
            rx_ring_bytes: 8 << 20,
            tx_ring_frames: 256,
            max_frame_bytes: None,
        }
    }
}

impl AfPacketConfig {
    /// Receive ring memory that holds `hold_ms` of a `line_rate_bps` line,
    /// kept between `min_bytes` and `max_bytes`: the ring is where frames
    /// wait while the reading thread is elsewhere, so a faster port needs
    /// more of it for the same wait. The switch's ports and the host
    /// agents' size their rings with it, each with its own hold time.
    pub fn rx_ring_bytes_for_line(
        line_rate_bps: u64,
        hold_ms: u64,
        min_bytes: usize,
        max_bytes: usize,
    ) -> usize {
        let line_bytes = line_rate_bps / 8 / 1000 * hold_ms;
        usize::try_from(line_bytes)
            .unwrap_or(usize::MAX)
            .clamp(min_bytes, max_bytes)
    }
}

/// `struct tpacket_stats` from `<linux/if_packet.h>` (what
/// `PACKET_STATISTICS` returns for a `TPACKET_V2` socket).
#[repr(C)]
#[derive(Default)]
struct TpacketStats {
    tp_packets: u32,
    tp_drops: u32,
}

/// Counters of one port (`Default + Copy`, monotonic).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PortStats {
    /// Frames received and handed out.
    pub rx_frames: u64,
    /// Bytes of those frames (after tag re-insertion).
    pub rx_bytes: u64,
    /// Frames that arrived with a stripped tag we re-inserted.
    pub rx_vlan_restored: u64,
    /// Frames dropped because they did not fit a ring slot or the
    /// caller's buffer.
    pub rx_truncated: u64,
    /// Own transmissions seen on receive and dropped.
    pub rx_outgoing_dropped: u64,
    /// Frames the kernel dropped before we could read them (receive ring
    /// full: `PACKET_STATISTICS` `tp_drops`), as of the last
    /// [`Port::take_rx_lost`].
    pub rx_kernel_drops: u64,
    /// Frames put in the transmit ring for the kernel.
    pub tx_frames: u64,
    /// Bytes of those frames.
    pub tx_bytes: u64,
    /// Sends that found the transmit ring full or the kernel refusing
    /// (`ENOBUFS`, `EAGAIN`): the frames waited.
    pub tx_busy: u64,
    /// Frames longer than the interface MTU allows, dropped before the
    /// ring.
    pub tx_oversize: u64,
}

/// The socket, its rings and what they were sized for; replaced whole on
/// reopen.
#[derive(Debug)]
struct Socket {
    // Field order is drop order: the ring views before the mapping, the
    // mapping before the socket.
    rx: RxRing,
    tx: TxRing,
    _map: Mapping,
    fd: OwnedFd,
    ifindex: u32,
    /// Longest frame the interface sends: MTU + Ethernet header (+ 4 for
    /// a tagged frame), bytes.
    max_tx_untagged_bytes: usize,
    /// The last `send(2)` left requested slots behind (`ENOBUFS`/`EAGAIN`).
    kick_again: bool,
}

/// An `AF_PACKET` port on one interface. See the module doc.
#[derive(Debug)]
pub struct AfPacketPort {
    sock: Socket,
    iface: String,
    /// The named namespace it was opened in ([`AfPacketPort::open_in_netns`]),
    /// for reopening there.
    netns: Option<String>,
    config: AfPacketConfig,
    stats: PortStats,
}

fn last_err() -> io::Error {
    io::Error::last_os_error()
}

fn setsockopt_int(
    fd: RawFd,
    level: libc::c_int,
    opt: libc::c_int,
    v: libc::c_int,
) -> io::Result<()> {
    // SAFETY: passes a pointer to a live c_int and its exact size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 { Err(last_err()) } else { Ok(()) }
}

fn setsockopt_ring(fd: RawFd, opt: libc::c_int, g: &RingGeometry) -> io::Result<()> {
    let req = g.request();
    // SAFETY: passes a live tpacket_req and its exact size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_PACKET,
            opt,
            (&req as *const libc::tpacket_req).cast(),
            std::mem::size_of::<libc::tpacket_req>() as libc::socklen_t,
        )
    };
    if r < 0 { Err(last_err()) } else { Ok(()) }
}

/// Index of interface `iface` in the current thread's network namespace.
pub fn interface_index(iface: &str) -> Result<u32, PortError> {
    let no_such = || PortError::NoSuchInterface {
        iface: iface.to_string(),
    };
    let c = CString::new(iface).map_err(|_| no_such())?;
    // SAFETY: `c` is a valid NUL-terminated string.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 { Err(no_such()) } else { Ok(idx) }
}

/// The MTU of `iface` as the socket `fd`'s namespace sees it.
fn interface_mtu(fd: RawFd, iface: &str) -> io::Result<u32> {
    let mut req = ifreq_named(iface);
    // SAFETY: a valid ifreq for this request; the kernel fills ifru_mtu.
    if unsafe { libc::ioctl(fd, libc::SIOCGIFMTU as _, &mut req) } < 0 {
        return Err(last_err());
    }
    // SAFETY: SIOCGIFMTU wrote the mtu member of the union.
    Ok(unsafe { req.ifr_ifru.ifru_mtu } as u32)
}

fn page_bytes() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as usize } else { 4096 }
}

impl Socket {
    /// A bound socket with mapped rings on `iface` in the calling thread's
    /// namespace.
    fn open(iface: &str, config: &AfPacketConfig) -> Result<Socket, PortError> {
        let ifindex = interface_index(iface)?;
        let setup = |what: &'static str| {
            move |source: io::Error| PortError::Setup {
                iface: iface.to_string(),
                what,
                source,
            }
        };
        // SAFETY: plain syscall; the result is checked below.
        let raw = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        if raw < 0 {
            return Err(setup("socket(AF_PACKET)")(last_err()));
        }
        // SAFETY: `raw` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let sol = libc::SOL_PACKET;
        setsockopt_int(raw, sol, PACKET_IGNORE_OUTGOING, 1)
            .map_err(setup("PACKET_IGNORE_OUTGOING"))?;
        setsockopt_int(
            raw,
            sol,
            libc::PACKET_VERSION,
            libc::tpacket_versions::TPACKET_V2 as libc::c_int,
        )
        .map_err(setup("PACKET_VERSION TPACKET_V2"))?;
        setsockopt_int(
            raw,
            sol,
            libc::PACKET_RESERVE,
            RX_RESERVE_BYTES as libc::c_int,
        )
        .map_err(setup("PACKET_RESERVE"))?;
        setsockopt_int(raw, sol, libc::PACKET_LOSS, 1).map_err(setup("PACKET_LOSS"))?;
        if setsockopt_int(
            raw,
            libc::SOL_SOCKET,
            libc::SO_SNDBUFFORCE,
            SOCKET_BUFFER_BYTES,
        )
        .is_err()
        {
            setsockopt_int(raw, libc::SOL_SOCKET, libc::SO_SNDBUF, SOCKET_BUFFER_BYTES)
                .map_err(setup("SO_SNDBUF"))?;
        }
        let mtu = interface_mtu(raw, iface).map_err(setup("SIOCGIFMTU"))? as usize;
        let max_frame = config
            .max_frame_bytes
            .map_or(mtu + FRAME_OVERHEAD_BYTES, |m| {
                m.clamp(64, mtu + FRAME_OVERHEAD_BYTES)
            });
        let page = page_bytes();
        let rx_geometry = RingGeometry::rx(max_frame, config.rx_ring_bytes, page);
        let tx_geometry = RingGeometry::tx(max_frame, config.tx_ring_frames.max(1), page);
        setsockopt_ring(raw, libc::PACKET_RX_RING, &rx_geometry)
            .map_err(setup("PACKET_RX_RING"))?;
        setsockopt_ring(raw, libc::PACKET_TX_RING, &tx_geometry)
            .map_err(setup("PACKET_TX_RING"))?;
        let map = Mapping::new(raw, rx_geometry.bytes() + tx_geometry.bytes())
            .map_err(setup("mmap rings"))?;
        let rx = RxRing::new(map.base(), rx_geometry);
        // SAFETY: the transmit ring follows the receive ring in the mapping.
        let tx = TxRing::new(unsafe { map.base().add(rx_geometry.bytes()) }, tx_geometry);
        // SAFETY: zeroed sockaddr_ll is a valid value; fields set below.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = ifindex as i32;
        // SAFETY: pointer and size describe `sll`.
        let r = unsafe {
            libc::bind(
                raw,
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(setup("bind")(last_err()));
        }
        // SAFETY: zeroed packet_mreq is valid; fields set below.
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = ifindex as i32;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        // SAFETY: pointer and size describe `mreq`.
        let r = unsafe {
            libc::setsockopt(
                raw,
                libc::SOL_PACKET,
                libc::PACKET_ADD_MEMBERSHIP,
                (&mreq as *const libc::packet_mreq).cast(),
                std::mem::size_of::<libc::packet_mreq>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(setup("PACKET_ADD_MEMBERSHIP promisc")(last_err()));
        }
        tracing::debug!(
            iface,
            ifindex,
            mtu,
            rx_slots = rx_geometry.frame_nr,
            rx_slot_bytes = rx_geometry.frame_size,
            tx_slots = tx_geometry.frame_nr,
            "AF_PACKET port open"
        );
        Ok(Socket {
            rx,
            tx,
            _map: map,
            fd,
            ifindex,
            max_tx_untagged_bytes: mtu + 14,
            kick_again: false,
        })
    }
}

impl AfPacketPort {
    /// Opens a port on `iface` in the calling thread's network namespace,
    /// with rings of the default size.
    pub fn open(iface: &str) -> Result<Self, PortError> {
        AfPacketPort::open_with(iface, AfPacketConfig::default())
    }

    /// Opens a port on `iface` in the calling thread's network namespace.
    pub fn open_with(iface: &str, config: AfPacketConfig) -> Result<Self, PortError> {
        Ok(AfPacketPort {
            sock: Socket::open(iface, &config)?,
            iface: iface.to_string(),
            netns: None,
            config,
            stats: PortStats::default(),
        })
    }

    /// Opens a port on `iface` inside the named network namespace
    /// (`/run/netns/NAME`), from a helper thread; the socket stays there.
    pub fn open_in_netns(netns: &str, iface: &str) -> Result<Self, PortError> {
        AfPacketPort::open_in_netns_with(netns, iface, AfPacketConfig::default())
    }

    /// [`AfPacketPort::open_in_netns`] with ring sizes.
    pub fn open_in_netns_with(
        netns: &str,
        iface: &str,
        config: AfPacketConfig,
    ) -> Result<Self, PortError> {
        let iface_owned = iface.to_string();
        let mut port =
            super::netns::run_in(netns, move || AfPacketPort::open_with(&iface_owned, config))
                .map_err(|source| PortError::Setup {
                iface: iface.to_string(),
                what: "entering network namespace",
                source,
            })??;
        port.netns = Some(netns.to_string());
        Ok(port)
    }

    /// The interface's index and flags as the socket's namespace sees them
    /// now, by name; `None` when no interface has the name.
    fn lookup(&self) -> io::Result<Option<(u32, libc::c_int)>> {
        let mut req = ifreq_named(&self.iface);
        let fd = self.sock.fd.as_raw_fd();
        // SAFETY: a valid ifreq for this request; the kernel fills ifru_ifindex.
        if unsafe { libc::ioctl(fd, libc::SIOCGIFINDEX as _, &mut req) } < 0 {
            let e = last_err();
            return match e.raw_os_error() {
                Some(libc::ENODEV) | Some(libc::ENXIO) => Ok(None),
                _ => Err(e),
            };
        }
        // SAFETY: SIOCGIFINDEX wrote the ifindex member of the union.
        let index = unsafe { req.ifr_ifru.ifru_ifindex } as u32;
        // SAFETY: as above; the kernel fills ifru_flags.
        if unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut req) } < 0 {
            let e = last_err();
            return match e.raw_os_error() {
                Some(libc::ENODEV) | Some(libc::ENXIO) => Ok(None),
                _ => Err(e),
            };
        }
        // SAFETY: SIOCGIFFLAGS wrote the flags member of the union.
        let flags = libc::c_int::from(unsafe { req.ifr_ifru.ifru_flags }) & 0xffff;
        Ok(Some((index, flags)))
    }

    /// The interface's MTU in bytes (largest frame payload after the
    /// Ethernet header), read now with `SIOCGIFMTU`.
    pub fn mtu_bytes(&self) -> Result<u32, PortError> {
        interface_mtu(self.sock.fd.as_raw_fd(), &self.iface)
            .map_err(|e| self.io_err("SIOCGIFMTU", e))
    }

    /// The interface index.
    pub fn ifindex(&self) -> u32 {
        self.sock.ifindex
    }

    /// Counters.
    pub fn stats(&self) -> PortStats {
        self.stats
    }

    /// Largest frame a transmit slot holds, bytes.
    pub fn max_frame_bytes(&self) -> usize {
        self.sock.tx.capacity_bytes()
    }

    fn io_err(&self, what: &'static str, source: io::Error) -> PortError {
        PortError::Io {
            iface: self.iface.clone(),
            what,
            source,
        }
    }

    /// Asks the kernel to send every requested slot. `ENOBUFS` (the
    /// peer's backlog is full) and `EAGAIN` (send buffer full) leave the
    /// refused frame requested for the next call.
    fn kick(&mut self) -> Result<(), PortError> {
        // SAFETY: a send with no data on our socket: the kernel sends the
        // transmit ring's requested slots.
        let r = unsafe {
            libc::sendto(
                self.sock.fd.as_raw_fd(),
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        };
        self.sock.kick_again = false;
        if r < 0 {
            let e = last_err();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EINTR) => {
                    self.stats.tx_busy += 1;
                    self.sock.kick_again = true;
                    Ok(())
                }
                _ => Err(self.io_err("send (transmit ring)", e)),
            };
        }
        Ok(())
    }

    /// Takes the next received frame and hands it to `each`; `None` when
    /// the ring is empty, `Some(false)` for a frame dropped here.
    fn take_one(&mut self, each: &mut dyn FnMut(&[u8]) -> bool) -> Option<bool> {
        let stats = &mut self.stats;
        self.sock.rx.take(|f| {
            if f.pkttype == libc::PACKET_OUTGOING {
                stats.rx_outgoing_dropped += 1;
                return false;
            }
            if f.cut_bytes > 0 {
                stats.rx_truncated += 1;
                return false;
            }
            if !each(f.data) {
                stats.rx_truncated += 1;
                return false;
            }
            stats.rx_vlan_restored += u64::from(f.tag_restored);
            stats.rx_frames += 1;
            stats.rx_bytes += f.data.len() as u64;
            true
        })
    }
}

/// An `ifreq` naming `iface` (truncated to `IFNAMSIZ - 1`, NUL-terminated).
fn ifreq_named(iface: &str) -> libc::ifreq {
    // SAFETY: zeroed ifreq is valid; the name stays NUL-terminated.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req
        .ifr_name
        .iter_mut()
        .zip(iface.bytes().take(libc::IFNAMSIZ - 1))
    {
        *d = s as libc::c_char;
    }
    req
}

/// What the interface's index and flags say about a port bound to `bound`.
fn link_state(now: Option<(u32, libc::c_int)>, bound: u32) -> Option<LinkDown> {
    match now {
        None => Some(LinkDown::Gone),
        Some((index, _)) if index != bound => Some(LinkDown::Gone),
        Some((_, flags)) if flags & libc::IFF_UP == 0 => Some(LinkDown::AdminDown),
        Some((_, flags)) if flags & libc::IFF_RUNNING == 0 => Some(LinkDown::NoCarrier),
        Some(_) => None,
    }
}

/// Whether `len` bytes of `frame` fit what the interface sends: at least
/// an Ethernet header, at most MTU + header (+ 4 for a tagged frame, as
/// the kernel allows).
fn fits_mtu(frame: &[u8], max_untagged_bytes: usize) -> bool {
    let tagged = matches!(frame.get(12..14), Some([0x81, 0x00] | [0x88, 0xa8]));
    frame.len() >= 14 && frame.len() <= max_untagged_bytes + 4 * usize::from(tagged)
}

impl Port for AfPacketPort {
    fn name(&self) -> &str {
        &self.iface
    }

    fn recv_batch(&mut self, bufs: &mut [FrameBuf]) -> Result<usize, PortError> {
        let mut n = 0;
        let mut seen = 0;
        while seen < bufs.len() && n < bufs.len() {
            let buf = &mut bufs[n];
            let got = self.take_one(&mut |frame| {
                if frame.len() > buf.capacity_bytes() {
                    return false;
                }
                buf.set_frame(frame);
                true
            });
            match got {
                None => break,
                Some(kept) => n += usize::from(kept),
            }
            seen += 1;
        }
        Ok(n)
    }

    fn recv_with(
        &mut self,
        bufs: &mut [FrameBuf],
        each: &mut dyn FnMut(&[u8]),
    ) -> Result<usize, PortError> {
        let mut n = 0;
        for _ in 0..bufs.len() {
            match self.take_one(&mut |frame| {
                each(frame);
                true
            }) {
                None => break,
                Some(kept) => n += usize::from(kept),
            }
        }
        Ok(n)
    }

    fn send_batch(&mut self, bufs: &[FrameBuf]) -> Result<usize, PortError> {
        let mut n = 0;
        for b in bufs {
            let frame = b.frame();
            let max = self.sock.max_tx_untagged_bytes;
            let Some(slot) = self.sock.tx.next_free() else {
                self.stats.tx_busy += 1;
                break;
            };
            n += 1;
            if frame.len() > slot.len() || !fits_mtu(frame, max) {
                self.stats.tx_oversize += 1;
                continue;
            }
            slot[..frame.len()].copy_from_slice(frame);
            self.sock.tx.commit(frame.len());
            self.stats.tx_frames += 1;
            self.stats.tx_bytes += frame.len() as u64;
        }
        if n > 0 || self.sock.kick_again {
            self.kick()?;
        }
        Ok(n)
    }

    fn send_with(
        &mut self,
        fill: &mut dyn FnMut(&mut [u8]) -> Option<usize>,
    ) -> Result<Option<usize>, PortError> {
        let mut n = 0;
        let max = self.sock.max_tx_untagged_bytes;
        loop {
            let Some(slot) = self.sock.tx.next_free() else {
                self.stats.tx_busy += 1;
                break;
            };
            let Some(len) = fill(slot) else { break };
            if len > slot.len() || !fits_mtu(&slot[..len], max) {
                // The slot stays free for the next frame.
                self.stats.tx_oversize += 1;
                continue;
            }
            self.sock.tx.commit(len);
            self.stats.tx_frames += 1;
            self.stats.tx_bytes += len as u64;
            n += 1;
        }
        if n > 0 || self.sock.kick_again {
            self.kick()?;
        }
        Ok(Some(n))
    }

    fn tx_pending(&self) -> bool {
        self.sock.kick_again
    }

    fn take_rx_lost(&mut self) -> Result<u64, PortError> {
        let mut st = TpacketStats::default();
        let mut len = std::mem::size_of::<TpacketStats>() as libc::socklen_t;
        // SAFETY: passes a live, writable `tpacket_stats` and its size; the
        // kernel writes at most `len` bytes.
        let r = unsafe {
            libc::getsockopt(
                self.sock.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut st as *mut TpacketStats).cast(),
                &mut len,
            )
        };
        if r < 0 {
            return Err(self.io_err("getsockopt(PACKET_STATISTICS)", last_err()));
        }
        // Reading resets the kernel's counters: this is the loss since the
        // last call.
        let lost = u64::from(st.tp_drops);
        self.stats.rx_kernel_drops += lost;
        Ok(lost)
    }

    fn poll_fd(&self) -> Option<RawFd> {
        Some(self.sock.fd.as_raw_fd())
    }

    fn link_check(&mut self) -> Result<Option<LinkDown>, PortError> {
        let now = self
            .lookup()
            .map_err(|e| self.io_err("SIOCGIFINDEX/SIOCGIFFLAGS", e))?;
        Ok(link_state(now, self.sock.ifindex))
    }

    fn reopen(&mut self) -> Result<bool, PortError> {
        let now = self
            .lookup()
            .map_err(|e| self.io_err("SIOCGIFINDEX/SIOCGIFFLAGS", e))?;
        // Bound to the index the name has now: up only if that one is.
        let Some((index, _)) = now else {
            return Ok(false);
        };
        if link_state(now, index).is_some() {
            return Ok(false);
        }
        let config = self.config;
        let fresh = match &self.netns {
            Some(ns) => {
                let iface = self.iface.clone();
                super::netns::run_in(ns, move || Socket::open(&iface, &config)).map_err(
                    |source| PortError::Setup {
                        iface: self.iface.clone(),
                        what: "entering network namespace",
                        source,
                    },
                )?
            }
            None => Socket::open(&self.iface, &config),
        };
        match fresh {
            Ok(fresh) => {
                tracing::debug!(
                    iface = %self.iface,
                    old_ifindex = self.sock.ifindex,
                    ifindex = fresh.ifindex,
                    "AF_PACKET port reopened"
                );
                self.sock = fresh;
                Ok(true)
            }
            // Gone again between the look and the open.
            Err(PortError::NoSuchInterface { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn wait_readable(&mut self, timeout: Option<Duration>) -> Result<bool, PortError> {
        if self.sock.rx.ready() {
            return Ok(true);
        }
        let mut pfd = libc::pollfd {
            fd: self.sock.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ts = timeout.map(|t| libc::timespec {
            tv_sec: t.as_secs().min(i64::MAX as u64) as libc::time_t,
            tv_nsec: libc::c_long::from(t.subsec_nanos() as i32),
        });
        let tsp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: one live pollfd; `tsp` is null or points at `ts`.
        let r = unsafe { libc::ppoll(&mut pfd, 1, tsp, std::ptr::null()) };
        if r < 0 {
            let e = last_err();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(false);
            }
            return Err(self.io_err("ppoll", e));
        }
        Ok(self.sock.rx.ready())
    }
}
