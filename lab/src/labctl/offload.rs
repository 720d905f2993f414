//! Turning receive offloads off on a lab interface without the `ethtool`
//! binary: the legacy `SIOCETHTOOL` commands `ETHTOOL_SGRO` (GRO off) and
//! `ETHTOOL_SFLAGS` (clearing `ETH_FLAG_RXVLAN` and `ETH_FLAG_LRO`), run
//! from a thread inside the interface's namespace.
//!
//! Why: GRO/LRO would merge frames before an `AF_PACKET` socket sees them,
//! and rx VLAN offload would move tags into metadata. On veth the kernel
//! still strips 802.1Q tags in software on receive whatever the setting
//! (the port restores them from `PACKET_AUXDATA`), so this is hygiene that
//! makes lab interfaces behave like the documented setup, not the VLAN fix.

use std::io;

const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GFLAGS: u32 = 0x25;
const ETHTOOL_SFLAGS: u32 = 0x26;
const ETHTOOL_GGRO: u32 = 0x2b;
const ETHTOOL_SGRO: u32 = 0x2c;
const ETHTOOL_STXCSUM: u32 = 0x17;
const ETHTOOL_SSG: u32 = 0x19;
const ETHTOOL_STSO: u32 = 0x1f;
const ETHTOOL_SGSO: u32 = 0x24;
const ETH_FLAG_RXVLAN: u32 = 1 << 8;
const ETH_FLAG_LRO: u32 = 1 << 15;

/// `struct ethtool_value`.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// `struct ifreq` with the `ifr_data` member.
#[repr(C)]
struct IfreqData {
    name: [libc::c_char; libc::IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 16],
}

fn ethtool(fd: libc::c_int, iface: &str, cmd: u32, data: u32) -> io::Result<u32> {
    let mut v = EthtoolValue { cmd, data };
    let mut req = IfreqData {
        name: [0; libc::IFNAMSIZ],
        data: (&mut v as *mut EthtoolValue).cast(),
        _pad: [0; 16],
    };
    if iface.len() >= libc::IFNAMSIZ {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    for (d, s) in req.name.iter_mut().zip(iface.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: `req` is a valid ifreq whose data points at a live ethtool_value.
    let r = unsafe { libc::ioctl(fd, SIOCETHTOOL as _, &mut req) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(v.data)
}

/// Current (GRO on, rx VLAN offload on, LRO on) of `iface` in this thread's namespace.
pub fn rx_offloads(iface: &str) -> io::Result<(bool, bool, bool)> {
    with_socket(|fd| {
        let gro = ethtool(fd, iface, ETHTOOL_GGRO, 0)? != 0;
        let flags = ethtool(fd, iface, ETHTOOL_GFLAGS, 0)?;
        Ok((gro, flags & ETH_FLAG_RXVLAN != 0, flags & ETH_FLAG_LRO != 0))
    })
}

/// Turns GRO, LRO and rx VLAN offload off on `iface` in this thread's namespace.
pub fn disable_rx_offloads(iface: &str) -> io::Result<()> {
    with_socket(|fd| {
        ethtool(fd, iface, ETHTOOL_SGRO, 0)?;
        let flags = ethtool(fd, iface, ETHTOOL_GFLAGS, 0)?;
        let want = flags & !(ETH_FLAG_RXVLAN | ETH_FLAG_LRO);
        if want != flags {
            ethtool(fd, iface, ETHTOOL_SFLAGS, want)?;
        }
        Ok(())
    })
}

/// Turns transmit checksum offload, scatter-gather, TSO and GSO off on
/// `iface` in this thread's namespace: a kernel sending through a
/// user-space switch must put whole frames with finished checksums on the
/// wire, as the switch reads them raw (with offload on, veth hands over TCP
/// segments of up to 64 KiB with the checksum left for hardware to fill).
pub fn disable_tx_offloads(iface: &str) -> io::Result<()> {
    with_socket(|fd| {
        for cmd in [ETHTOOL_SGSO, ETHTOOL_STSO, ETHTOOL_SSG, ETHTOOL_STXCSUM] {
            ethtool(fd, iface, cmd, 0)?;
        }
        Ok(())
    })
}

/// [`disable_tx_offloads`] inside the named namespace.
pub fn disable_tx_offloads_in(netns: &str, iface: &str) -> io::Result<()> {
    let i = iface.to_string();
    crate::port::netns::run_in(netns, move || disable_tx_offloads(&i))?
}

/// [`disable_rx_offloads`] inside the named namespace.
pub fn disable_rx_offloads_in(netns: &str, iface: &str) -> io::Result<()> {
    let i = iface.to_string();
    crate::port::netns::run_in(netns, move || disable_rx_offloads(&i))?
}

/// [`rx_offloads`] inside the named namespace.
pub fn rx_offloads_in(netns: &str, iface: &str) -> io::Result<(bool, bool, bool)> {
    let i = iface.to_string();
    crate::port::netns::run_in(netns, move || rx_offloads(&i))?
}

fn with_socket<T>(f: impl FnOnce(libc::c_int) -> io::Result<T>) -> io::Result<T> {
    // SAFETY: plain syscall; the fd is closed below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let r = f(fd);
    // SAFETY: closing the fd we opened.
    unsafe { libc::close(fd) };
    r
}
