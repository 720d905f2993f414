//! What the forwarding bench binaries (`fwdbench`, `soakbench`) share: the
//! numbered test frames they send through a [`crate::labctl::line::LineLab`],
//! the one route that carries them, and a controller that churns host
//! routes over P4Runtime while they run.
//!
//! A test frame is Ethernet/IPv4/UDP from [`SRC_IP`] to the router MAC and
//! [`DST_IP`], its payload [`MAGIC`], a sequence number and a send time, so
//! the sink counts only frames of the bench and can time them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result};
use dataplane::fabric::{L3Config, NextHop, Route};
use dataplane::wire::ip::ones_complement_sum;
use proto::p4::v1 as pb;

use crate::fabric::ROUTER_MAC;
use crate::labctl::line::LineLab;
use crate::port::{AfPacketPort, FrameBuf, Port};
use crate::scenario::live::find_roceswitch;
use crate::scenario::switchctl::SwitchCtl;

/// Source MAC of test frames (the `src` namespace's port).
pub const SRC_MAC: [u8; 6] = [2, 0, 0, 0, 1, 1];
/// MAC the switch sends test frames to (the `dst` namespace's port).
pub const DST_MAC: [u8; 6] = [2, 0, 0, 0, 2, 1];
/// Source address of test frames.
pub const SRC_IP: [u8; 4] = [10, 0, 1, 1];
/// Destination address of test frames.
pub const DST_IP: [u8; 4] = [10, 0, 2, 1];
/// First bytes of a test frame's payload.
pub const MAGIC: [u8; 4] = *b"FWDB";
/// Offset of the payload (magic, seq u32, send time u64) in a frame.
pub const PAYLOAD_AT: usize = 14 + 20 + 8;
/// Smallest Ethernet frame without FCS.
pub const MIN_FRAME_BYTES: usize = 60;
/// Next-hop id of the route to [`DST_IP`] (and of the churned routes).
pub const ROUTE_NEXTHOP: u16 = 1;

/// How a test frame is marked: DSCP and UDP destination port (4791 makes
/// it RoCEv2 to the switch's classifier).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marking {
    /// IPv4 DSCP.
    pub dscp: u8,
    /// UDP destination port.
    pub udp_dst: u16,
}

impl Marking {
    /// Best effort: DSCP 0, an ordinary UDP port.
    pub const BEST_EFFORT: Marking = Marking {
        dscp: 0,
        udp_dst: 9000,
    };
}

/// A test frame of `size_bytes` (at least [`MIN_FRAME_BYTES`]) carrying
/// `seq` and `sent_ns`.
pub fn frame(size_bytes: usize, seq: u32, sent_ns: u64) -> Vec<u8> {
    marked_frame(size_bytes, seq, sent_ns, Marking::BEST_EFFORT)
}

/// [`frame`] with `marking`.
pub fn marked_frame(size_bytes: usize, seq: u32, sent_ns: u64, marking: Marking) -> Vec<u8> {
    pair_frame(size_bytes, seq, sent_ns, marking, 0)
}

/// The source MAC of line `pair` of a [`LineLab::create_pairs`] lab.
pub fn pair_src_mac(pair: u8) -> [u8; 6] {
    let mut m = SRC_MAC;
    m[5] += pair;
    m
}

/// The MAC the switch sends line `pair`'s frames to.
pub fn pair_dst_mac(pair: u8) -> [u8; 6] {
    let mut m = DST_MAC;
    m[5] += pair;
    m
}

/// The destination address of line `pair`'s frames.
pub fn pair_dst_ip(pair: u8) -> [u8; 4] {
    let mut a = DST_IP;
    a[3] += pair;
    a
}

/// [`marked_frame`] for line `pair` (its source MAC and destination
/// address; pair 0 is the single line's).
pub fn pair_frame(
    size_bytes: usize,
    seq: u32,
    sent_ns: u64,
    marking: Marking,
    pair: u8,
) -> Vec<u8> {
    let size = size_bytes.max(MIN_FRAME_BYTES);
    let mut v = vec![0u8; size];
    v[..6].copy_from_slice(&ROUTER_MAC);
    v[6..12].copy_from_slice(&pair_src_mac(pair));
    v[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut v[14..34];
    ip[0] = 0x45;
    ip[1] = marking.dscp << 2;
    ip[2..4].copy_from_slice(&((size - 14) as u16).to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&SRC_IP);
    ip[16..20].copy_from_slice(&pair_dst_ip(pair));
    let c = !ones_complement_sum(ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let udp = &mut v[34..42];
    udp[0..2].copy_from_slice(&40000u16.to_be_bytes());
    udp[2..4].copy_from_slice(&marking.udp_dst.to_be_bytes());
    udp[4..6].copy_from_slice(&((size - 34) as u16).to_be_bytes());
    v[PAYLOAD_AT..PAYLOAD_AT + 4].copy_from_slice(&MAGIC);
    v[PAYLOAD_AT + 4..PAYLOAD_AT + 8].copy_from_slice(&seq.to_be_bytes());
    v[PAYLOAD_AT + 8..PAYLOAD_AT + 16].copy_from_slice(&sent_ns.to_be_bytes());
    v
}

/// The sequence number of a test frame (IPv4, magic in place).
pub fn seq_of(f: &[u8]) -> Option<u32> {
    if f.len() < PAYLOAD_AT + 16 || f[12..14] != [0x08, 0x00] {
        return None;
    }
    if f[PAYLOAD_AT..PAYLOAD_AT + 4] != MAGIC {
        return None;
    }
    Some(u32::from_be_bytes(
        f[PAYLOAD_AT + 4..PAYLOAD_AT + 8].try_into().ok()?,
    ))
}

/// The switch's routes for a line: [`DST_IP`]/32 out of port 1 to
/// [`DST_MAC`] (one route, so its next hop is [`ROUTE_NEXTHOP`]).
pub fn line_routes() -> L3Config {
    pair_routes(1)
}

/// The switch's routes for `pairs` lines: line `k`'s destination out of
/// port `2k + 1` to its MAC (line 0's next hop is [`ROUTE_NEXTHOP`]).
pub fn pair_routes(pairs: usize) -> L3Config {
    L3Config {
        router_mac: ROUTER_MAC,
        ecmp_seed: 1,
        routes: (0..pairs as u8)
            .map(|k| Route {
                prefix: std::net::IpAddr::V4(pair_dst_ip(k).into()),
                prefix_len: 32,
                next_hops: vec![NextHop {
                    port: 2 * u16::from(k) + 1,
                    dst_mac: pair_dst_mac(k),
                }],
            })
            .collect(),
        bridged: Vec::new(),
    }
}

/// Inserts and deletes host routes at `per_sec` updates/s (one batch every
/// 10 ms, alternating insert and delete of the same routes in
/// 10.200.0.0/16, never the bench's destination) until `done`; returns the
/// control channel and the updates the switch accepted.
pub fn route_churn(
    mut ctl: Box<SwitchCtl>,
    per_sec: u32,
    done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Result<(Box<SwitchCtl>, u64)>> {
    std::thread::spawn(move || {
        // The controller would run on another machine; here it shares the
        // cores with the generator and the sink, so it takes a back seat
        // (like the switch's own control plane) and only the switch's cost
        // of the writes shows in the forwarding rate.
        // SAFETY: setpriority on the calling thread with plain integers.
        unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 10) };
        let tick = Duration::from_millis(10);
        let per_tick = (per_sec as usize / 100).max(1);
        let routes: Vec<std::net::Ipv4Addr> = (0..per_tick)
            .map(|i| std::net::Ipv4Addr::new(10, 200, (i >> 8) as u8, i as u8))
            .collect();
        let (mut written, mut inserted) = (0u64, false);
        let mut next = Instant::now();
        while !done.load(Ordering::Relaxed) {
            let kind = if inserted {
                pb::update::Type::Delete
            } else {
                pb::update::Type::Insert
            };
            ctl.write_host_routes(kind, &routes, ROUTE_NEXTHOP)?;
            inserted = !inserted;
            written += routes.len() as u64;
            next += tick;
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        if inserted {
            ctl.write_host_routes(pb::update::Type::Delete, &routes, ROUTE_NEXTHOP)?;
        }
        Ok((ctl, written))
    })
}

/// Receives on `port` in batches of `batch` until `done`, adding the test
/// frames among them to `received` (other frames, such as pauses or LLDP,
/// are not counted).
pub fn count_test_frames(
    port: AfPacketPort,
    batch: usize,
    received: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Result<()>> {
    count_test_frames_on(vec![port], batch, received, done)
}

/// [`count_test_frames`] on several ports, one thread: each turn takes a
/// batch from every port; when all were empty it sleeps in `poll(2)` on
/// all of them.
pub fn count_test_frames_on(
    mut ports: Vec<AfPacketPort>,
    batch: usize,
    received: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Result<()>> {
    std::thread::spawn(move || {
        let mut bufs = FrameBuf::batch(batch);
        let mut fds: Vec<libc::pollfd> = ports
            .iter()
            .filter_map(|p| p.poll_fd())
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        while !done.load(Ordering::Relaxed) {
            let mut ours = 0u64;
            let mut any = false;
            for port in &mut ports {
                let n = port.recv_with(&mut bufs, &mut |f| {
                    ours += u64::from(seq_of(f).is_some());
                })?;
                any |= n > 0;
            }
            received.fetch_add(ours, Ordering::Relaxed);
            if !any {
                // SAFETY: `fds` is a live array of pollfd structs.
                unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 5) };
            }
        }
        Ok(())
    })
}

/// `roceswitch` on the `mid` namespace of a line (port `i` = `m<i>`, two by default,
/// 10G, P4Runtime on a unix socket); killed, and its socket removed, on
/// drop.
pub struct LineSwitch {
    child: Child,
    sock: PathBuf,
}

impl Drop for LineSwitch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.sock);
    }
}

impl LineSwitch {
    /// Starts the switch (found as [`find_roceswitch`] finds it) with
    /// `extra` arguments; its socket is named after `bench` and our pid.
    pub fn start(lab: &LineLab, bench: &str, extra: &[&str]) -> Result<LineSwitch> {
        LineSwitch::start_bin(&find_roceswitch()?, lab, 2, bench, extra)
    }

    /// Starts the switch binary `bin` on the first `ports` interfaces of
    /// `mid` (`m0`, `m1`, ...; port `i` is `m<i>`) with `extra` arguments;
    /// its socket is named after `bench`, our pid and a counter.
    pub fn start_bin(
        bin: &std::path::Path,
        lab: &LineLab,
        ports: usize,
        bench: &str,
        extra: &[&str],
    ) -> Result<LineSwitch> {
        static STARTED: AtomicU64 = AtomicU64::new(0);
        let n = STARTED.fetch_add(1, Ordering::Relaxed);
        let sock = std::env::temp_dir().join(format!("{bench}-{}-{n}.sock", std::process::id()));
        let _ = std::fs::remove_file(&sock);
        let mut cmd = Command::new("ip");
        // `ip netns exec` execs the daemon: the child's pid is the switch's.
        cmd.args(["netns", "exec", lab.mid()]).arg(bin);
        for i in 0..ports {
            cmd.arg("--port").arg(format!("{i}=m{i}"));
        }
        let child = cmd
            .args(["--speed", "10G"])
            .arg("--grpc")
            .arg(format!("unix:{}", sock.display()))
            .args(["--log-level", "warn"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        Ok(LineSwitch { child, sock })
    }

    /// Its P4Runtime address (`unix:PATH`).
    pub fn addr(&self) -> String {
        format!("unix:{}", self.sock.display())
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_carry_their_sequence_marking_and_a_valid_ipv4_checksum() {
        let roce = Marking {
            dscp: 26,
            udp_dst: 4791,
        };
        let f = marked_frame(128, 77, 5, roce);
        assert_eq!(f.len(), 128);
        assert_eq!(seq_of(&f), Some(77));
        assert_eq!(ones_complement_sum(&f[14..34]), 0xffff, "checksum verifies");
        assert_eq!(f[15] >> 2, 26);
        assert_eq!(u16::from_be_bytes([f[36], f[37]]), 4791);
        assert_eq!(frame(10, 1, 0).len(), MIN_FRAME_BYTES);
        let mut other = f.clone();
        other[PAYLOAD_AT] ^= 1;
        assert_eq!(seq_of(&other), None, "not ours without the magic");
    }
}
