//! [`AfPacketPort`]: a Linux `AF_PACKET` raw socket bound to one interface,
//! moving frames with `recvmmsg`/`sendmmsg` batches.
//!
//! Setup (each step's failure is a [`PortError::Setup`] naming the step):
//! - `socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, 0)`: protocol 0 receives
//!   nothing until `bind`, so no frame from another interface slips in.
//! - `PACKET_IGNORE_OUTGOING`: the kernel does not loop frames sent out of
//!   this interface (by any socket) back to us. Without it a switch
//!   re-receives its own transmissions (packet-io.md, first trap). As a
//!   second line, frames reported as `PACKET_OUTGOING` are dropped and
//!   counted.
//! - `PACKET_AUXDATA`: the kernel removes the 802.1Q tag of every received
//!   frame in software (`skb_vlan_untag`), whether or not rx VLAN offload is
//!   on, so turning the offload off (ethtool) does not bring the tag back on
//!   veth. We therefore read `tp_vlan_tci` from the auxdata and re-insert the
//!   tag in front of the EtherType (as ptf does); received frames look as
//!   they did on the wire.
//! - `PACKET_MR_PROMISC` membership, `SO_RCVBUFFORCE`/`SO_SNDBUFFORCE` to
//!   4 MiB (falling back to the unprivileged options), `bind` with
//!   `ETH_P_ALL` to the interface index.
//!
//! Frames the kernel dropped because the socket's receive buffer was full
//! (`PACKET_STATISTICS` `tp_drops`, which reading resets) are collected by
//! [`Port::take_rx_lost`] and kept in [`PortStats::rx_kernel_drops`].
//!
//! Batches are at most [`MAX_BATCH`] frames; larger slices are served in
//! several calls. Frames longer than the buffer are dropped and counted
//! (`MSG_TRUNC`). Requires `CAP_NET_RAW`. The socket lives in the network
//! namespace of the thread that opened it (see [`super::netns`]).
//!
//! Link loss: when the interface is deleted the kernel unbinds the socket
//! and sets its pending error to `ENETDOWN` (returned once, by the next
//! receive); sends then fail with `ENXIO`. An interface set down gives
//! `ENETDOWN` on receive once and on every send. A veth whose peer is down
//! (no carrier) gives no error at all: sends succeed and go nowhere
//! (measured on a veth pair, kernel of this VM). [`Port::link_check`]
//! looks, by name, whether the interface still has the index the socket is
//! bound to and is `IFF_UP | IFF_RUNNING` (`SIOCGIFINDEX`,
//! `SIOCGIFFLAGS`: two system calls); [`Port::reopen`] opens a fresh
//! socket on whatever index the name has now, in the same namespace, with
//! the same settings, keeping the counters.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use super::{FrameBuf, LinkDown, Port, PortError};

/// Most frames moved by one `recvmmsg`/`sendmmsg` call.
pub const MAX_BATCH: usize = 64;

/// Requested socket buffer size, bytes.
const SOCKET_BUFFER_BYTES: libc::c_int = 4 << 20;

const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
const ETH_P_8021Q: u16 = 0x8100;

/// `struct tpacket_auxdata` from `<linux/if_packet.h>`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TpacketAuxdata {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
}

/// `struct tpacket_stats` from `<linux/if_packet.h>` (what
/// `PACKET_STATISTICS` returns for a socket without a ring).
#[repr(C)]
#[derive(Default)]
struct TpacketStats {
    tp_packets: u32,
    tp_drops: u32,
}

/// Room for one `PACKET_AUXDATA` control message (CMSG_SPACE, 8-aligned).
const CMSG_BYTES: usize = 64;

/// Counters of one port (`Default + Copy`, monotonic).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PortStats {
    /// Frames received and handed out.
    pub rx_frames: u64,
    /// Bytes of those frames (after tag re-insertion).
    pub rx_bytes: u64,
    /// Frames that arrived with a stripped tag we re-inserted.
    pub rx_vlan_restored: u64,
    /// Frames dropped because they did not fit the buffer.
    pub rx_truncated: u64,
    /// Own transmissions seen on receive and dropped.
    pub rx_outgoing_dropped: u64,
    /// Frames the kernel dropped before we could read them (receive buffer
    /// full: `PACKET_STATISTICS` `tp_drops`), as of the last
    /// [`Port::take_rx_lost`].
    pub rx_kernel_drops: u64,
    /// Frames accepted by the kernel for sending.
    pub tx_frames: u64,
    /// Bytes of those frames.
    pub tx_bytes: u64,
    /// Send calls that accepted nothing (kernel queue full).
    pub tx_busy: u64,
}

/// An `AF_PACKET` port on one interface. See the module doc.
#[derive(Debug)]
pub struct AfPacketPort {
    fd: OwnedFd,
    iface: String,
    ifindex: u32,
    /// The named namespace it was opened in ([`AfPacketPort::open_in_netns`]),
    /// for reopening there.
    netns: Option<String>,
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

impl AfPacketPort {
    /// Opens a port on `iface` in the calling thread's network namespace.
    pub fn open(iface: &str) -> Result<Self, PortError> {
        let ifindex = interface_index(iface)?;
        let setup = |what: &'static str| {
            let source = last_err();
            PortError::Setup {
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
            return Err(setup("socket(AF_PACKET)"));
        }
        // SAFETY: `raw` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let wrap = |what: &'static str, r: io::Result<()>| {
            r.map_err(|source| PortError::Setup {
                iface: iface.to_string(),
                what,
                source,
            })
        };
        wrap(
            "PACKET_IGNORE_OUTGOING",
            setsockopt_int(raw, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1),
        )?;
        wrap(
            "PACKET_AUXDATA",
            setsockopt_int(raw, libc::SOL_PACKET, libc::PACKET_AUXDATA, 1),
        )?;
        for (forced, plain) in [
            (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
            (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
        ] {
            if setsockopt_int(raw, libc::SOL_SOCKET, forced, SOCKET_BUFFER_BYTES).is_err() {
                wrap(
                    "SO_RCVBUF/SO_SNDBUF",
                    setsockopt_int(raw, libc::SOL_SOCKET, plain, SOCKET_BUFFER_BYTES),
                )?;
            }
        }
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
            return Err(setup("bind"));
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
            return Err(setup("PACKET_ADD_MEMBERSHIP promisc"));
        }
        tracing::debug!(iface, ifindex, "AF_PACKET port open");
        Ok(AfPacketPort {
            fd,
            iface: iface.to_string(),
            ifindex,
            netns: None,
            stats: PortStats::default(),
        })
    }

    /// Opens a port on `iface` inside the named network namespace
    /// (`/run/netns/NAME`), from a helper thread; the socket stays there.
    pub fn open_in_netns(netns: &str, iface: &str) -> Result<Self, PortError> {
        let iface_owned = iface.to_string();
        let mut port = super::netns::run_in(netns, move || AfPacketPort::open(&iface_owned))
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
        let fd = self.fd.as_raw_fd();
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
        let mut req = ifreq_named(&self.iface);
        // SAFETY: a valid ifreq for this request; the kernel fills ifru_mtu.
        let r = unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::SIOCGIFMTU as _, &mut req) };
        if r < 0 {
            return Err(self.io_err("SIOCGIFMTU", last_err()));
        }
        // SAFETY: SIOCGIFMTU wrote the mtu member of the union.
        Ok(unsafe { req.ifr_ifru.ifru_mtu } as u32)
    }

    /// The interface index.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Counters.
    pub fn stats(&self) -> PortStats {
        self.stats
    }

    fn io_err(&self, what: &'static str, source: io::Error) -> PortError {
        PortError::Io {
            iface: self.iface.clone(),
            what,
            source,
        }
    }

    fn recv_chunk(&mut self, bufs: &mut [FrameBuf]) -> Result<usize, PortError> {
        let n = bufs.len().min(MAX_BATCH);
        if n == 0 {
            return Ok(0);
        }
        // SAFETY: all-zero is a valid value for these C structs.
        let mut hdrs: [libc::mmsghdr; MAX_BATCH] = unsafe { std::mem::zeroed() };
        let mut iovs: [libc::iovec; MAX_BATCH] = unsafe { std::mem::zeroed() };
        let mut addrs: [libc::sockaddr_ll; MAX_BATCH] = unsafe { std::mem::zeroed() };
        let mut cmsgs = [[0u64; CMSG_BYTES / 8]; MAX_BATCH];
        let mut caps = [0usize; MAX_BATCH];
        for i in 0..n {
            let area = bufs[i].rx_area();
            caps[i] = area.len();
            iovs[i].iov_base = area.as_mut_ptr().cast();
            iovs[i].iov_len = area.len();
            let h = &mut hdrs[i].msg_hdr;
            h.msg_iov = &mut iovs[i];
            h.msg_iovlen = 1;
            h.msg_name = (&mut addrs[i] as *mut libc::sockaddr_ll).cast();
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            h.msg_control = cmsgs[i].as_mut_ptr().cast();
            h.msg_controllen = CMSG_BYTES as _;
        }
        // SAFETY: every header points at live buffers sized as declared.
        let r = unsafe {
            libc::recvmmsg(
                self.fd.as_raw_fd(),
                hdrs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if r < 0 {
            let e = last_err();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(self.io_err("recvmmsg", e)),
            };
        }
        let got = r as usize;
        let mut out = 0;
        for i in 0..got {
            let h = &hdrs[i].msg_hdr;
            let len = hdrs[i].msg_len as usize;
            if addrs[i].sll_pkttype == libc::PACKET_OUTGOING {
                self.stats.rx_outgoing_dropped += 1;
                continue;
            }
            if h.msg_flags & libc::MSG_TRUNC != 0 || len > caps[i] {
                self.stats.rx_truncated += 1;
                continue;
            }
            let aux = auxdata(h);
            // Compact: frame i may land in slot `out` < i after drops.
            if out != i {
                let (lo, hi) = bufs.split_at_mut(i);
                lo[out].rx_area()[..len].copy_from_slice(&hi[0].rx_area()[..len]);
            }
            match aux {
                Some(a) if a.tp_status & TP_STATUS_VLAN_VALID != 0 => {
                    let tpid = if a.tp_status & TP_STATUS_VLAN_TPID_VALID != 0 {
                        a.tp_vlan_tpid
                    } else {
                        ETH_P_8021Q
                    };
                    bufs[out].set_received_with_tag(len, tpid, a.tp_vlan_tci);
                    self.stats.rx_vlan_restored += 1;
                }
                _ => bufs[out].set_received(len),
            }
            self.stats.rx_frames += 1;
            self.stats.rx_bytes += bufs[out].len() as u64;
            out += 1;
        }
        Ok(out)
    }

    fn send_chunk(&mut self, bufs: &[FrameBuf]) -> Result<usize, PortError> {
        let n = bufs.len().min(MAX_BATCH);
        if n == 0 {
            return Ok(0);
        }
        // SAFETY: all-zero is a valid value for these C structs.
        let mut hdrs: [libc::mmsghdr; MAX_BATCH] = unsafe { std::mem::zeroed() };
        let mut iovs: [libc::iovec; MAX_BATCH] = unsafe { std::mem::zeroed() };
        for i in 0..n {
            let f = bufs[i].frame();
            iovs[i].iov_base = f.as_ptr() as *mut libc::c_void;
            iovs[i].iov_len = f.len();
            hdrs[i].msg_hdr.msg_iov = &mut iovs[i];
            hdrs[i].msg_hdr.msg_iovlen = 1;
        }
        // SAFETY: headers point at live frames; the kernel only reads them.
        let r = unsafe {
            libc::sendmmsg(
                self.fd.as_raw_fd(),
                hdrs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_DONTWAIT,
            )
        };
        if r < 0 {
            let e = last_err();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EINTR) => {
                    self.stats.tx_busy += 1;
                    Ok(0)
                }
                _ => Err(self.io_err("sendmmsg", e)),
            };
        }
        let sent = r as usize;
        self.stats.tx_frames += sent as u64;
        self.stats.tx_bytes += bufs[..sent].iter().map(|b| b.len() as u64).sum::<u64>();
        Ok(sent)
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

fn auxdata(h: &libc::msghdr) -> Option<TpacketAuxdata> {
    // SAFETY: the kernel filled msg_control up to msg_controllen; the CMSG
    // macros stay inside it and we copy the payload out unaligned.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_PACKET
                && (*c).cmsg_type == libc::PACKET_AUXDATA
                && (*c).cmsg_len as usize
                    >= libc::CMSG_LEN(std::mem::size_of::<TpacketAuxdata>() as u32) as usize
            {
                return Some(std::ptr::read_unaligned(
                    libc::CMSG_DATA(c).cast::<TpacketAuxdata>(),
                ));
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
    }
    None
}

impl Port for AfPacketPort {
    fn name(&self) -> &str {
        &self.iface
    }

    fn take_rx_lost(&mut self) -> Result<u64, PortError> {
        let mut st = TpacketStats::default();
        let mut len = std::mem::size_of::<TpacketStats>() as libc::socklen_t;
        // SAFETY: passes a live, writable `tpacket_stats` and its size; the
        // kernel writes at most `len` bytes.
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
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
        Some(self.fd.as_raw_fd())
    }

    fn link_check(&mut self) -> Result<Option<LinkDown>, PortError> {
        let now = self
            .lookup()
            .map_err(|e| self.io_err("SIOCGIFINDEX/SIOCGIFFLAGS", e))?;
        Ok(link_state(now, self.ifindex))
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
        let fresh = match &self.netns {
            Some(ns) => AfPacketPort::open_in_netns(ns, &self.iface),
            None => AfPacketPort::open(&self.iface),
        };
        match fresh {
            Ok(fresh) => {
                tracing::debug!(
                    iface = %self.iface,
                    old_ifindex = self.ifindex,
                    ifindex = fresh.ifindex,
                    "AF_PACKET port reopened"
                );
                self.fd = fresh.fd;
                self.ifindex = fresh.ifindex;
                Ok(true)
            }
            // Gone again between the look and the open.
            Err(PortError::NoSuchInterface { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn recv_batch(&mut self, bufs: &mut [FrameBuf]) -> Result<usize, PortError> {
        let mut total = 0;
        while total < bufs.len() {
            let want = (bufs.len() - total).min(MAX_BATCH);
            let n = self.recv_chunk(&mut bufs[total..total + want])?;
            total += n;
            if n < want {
                break;
            }
        }
        Ok(total)
    }

    fn send_batch(&mut self, bufs: &[FrameBuf]) -> Result<usize, PortError> {
        let mut total = 0;
        while total < bufs.len() {
            let want = (bufs.len() - total).min(MAX_BATCH);
            let n = self.send_chunk(&bufs[total..total + want])?;
            total += n;
            if n < want {
                break;
            }
        }
        Ok(total)
    }

    fn wait_readable(&mut self, timeout: Option<Duration>) -> Result<bool, PortError> {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
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
        Ok(r > 0 && pfd.revents & libc::POLLIN != 0)
    }
}
