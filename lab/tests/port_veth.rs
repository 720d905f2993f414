//! AF_PACKET ports between two namespaces over a veth pair (needs root;
//! skipped with a message otherwise).
//!
//! ```text
//!  ns0 [a0] ======== veth ======== [b0] ns1
//! ```

mod common;

use std::time::Duration;

use lab::port::{AfPacketPort, FrameBuf, Port};

const A_MAC: [u8; 6] = [2, 0, 0, 0, 0xa, 1];
const B_MAC: [u8; 6] = [2, 0, 0, 0, 0xb, 1];

fn frame(
    dst: [u8; 6],
    src: [u8; 6],
    ethertype: u16,
    tag: Option<u16>,
    seq: u16,
    len: usize,
) -> FrameBuf {
    let mut v = Vec::new();
    v.extend_from_slice(&dst);
    v.extend_from_slice(&src);
    if let Some(tci) = tag {
        v.extend_from_slice(&0x8100u16.to_be_bytes());
        v.extend_from_slice(&tci.to_be_bytes());
    }
    v.extend_from_slice(&ethertype.to_be_bytes());
    v.extend_from_slice(&seq.to_be_bytes());
    while v.len() < len {
        v.push((v.len() % 251) as u8);
    }
    let mut b = FrameBuf::default();
    b.set_frame(&v);
    b
}

/// Receives until `want` frames arrived or 2 s passed.
fn recv_n(p: &mut AfPacketPort, want: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut bufs = FrameBuf::batch(64);
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while out.len() < want && std::time::Instant::now() < deadline {
        p.wait_readable(Some(Duration::from_millis(50))).unwrap();
        let n = p.recv_batch(&mut bufs).unwrap();
        out.extend(bufs[..n].iter().map(|b| b.frame().to_vec()));
    }
    out
}

fn ports() -> (common::Netns, AfPacketPort, AfPacketPort) {
    let ns = common::Netns::create(2);
    ns.veth(0, "a0", "02:00:00:00:0a:01", 1, "b0", "02:00:00:00:0b:01");
    let a = AfPacketPort::open_in_netns(&ns.names[0], "a0").unwrap();
    let b = AfPacketPort::open_in_netns(&ns.names[1], "b0").unwrap();
    (ns, a, b)
}

#[test]
fn a_batch_crosses_the_veth_intact_and_in_order_both_ways() {
    if !common::root_or_skip("a_batch_crosses_the_veth_intact_and_in_order_both_ways") {
        return;
    }
    let (_ns, mut a, mut b) = ports();
    let sent: Vec<FrameBuf> = (0..100)
        .map(|i| frame(B_MAC, A_MAC, 0x88b5, None, i, 60 + usize::from(i) * 13))
        .collect();
    let mut off = 0;
    while off < sent.len() {
        off += a.send_batch(&sent[off..]).unwrap();
    }
    let got = recv_n(&mut b, 100);
    assert_eq!(got.len(), 100);
    for (g, s) in got.iter().zip(&sent) {
        assert_eq!(g.as_slice(), s.frame());
    }
    let back = [frame(A_MAC, B_MAC, 0x88b5, None, 7, 1500)];
    assert_eq!(b.send_batch(&back).unwrap(), 1);
    let got = recv_n(&mut a, 1);
    assert_eq!(got, [back[0].frame().to_vec()]);
    assert_eq!(a.stats().tx_frames, 100);
    assert_eq!(b.stats().rx_frames, 100);
}

#[test]
fn vlan_tags_survive_receive_offload() {
    if !common::root_or_skip("vlan_tags_survive_receive_offload") {
        return;
    }
    let (_ns, mut a, mut b) = ports();
    // PCP 5, DEI 0, VID 100; and PCP 3, VID 0 (priority-tagged).
    let tagged = [
        frame(B_MAC, A_MAC, 0x0800, Some(0xa064), 1, 100),
        frame(B_MAC, A_MAC, 0x0800, Some(0x6000), 2, 100),
        frame(B_MAC, A_MAC, 0x0800, None, 3, 100),
    ];
    assert_eq!(a.send_batch(&tagged).unwrap(), 3);
    let got = recv_n(&mut b, 3);
    assert_eq!(got.len(), 3);
    for (g, s) in got.iter().zip(&tagged) {
        assert_eq!(g.as_slice(), s.frame(), "frame changed on the way");
    }
    assert_eq!(b.stats().rx_vlan_restored, 2);
}

#[test]
fn own_transmissions_are_not_received() {
    if !common::root_or_skip("own_transmissions_are_not_received") {
        return;
    }
    let (ns, mut a, mut b) = ports();
    // A second socket on the same interface: it must not see what `a` sends
    // either (PACKET_IGNORE_OUTGOING applies to frames from any socket).
    let mut a2 = AfPacketPort::open_in_netns(&ns.names[0], "a0").unwrap();
    let out: Vec<FrameBuf> = (0..10)
        .map(|i| frame(B_MAC, A_MAC, 0x88b5, None, i, 64))
        .collect();
    assert_eq!(a.send_batch(&out).unwrap(), 10);
    assert_eq!(recv_n(&mut b, 10).len(), 10, "peer must receive them");
    let mut bufs = FrameBuf::batch(64);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        a.recv_batch(&mut bufs).unwrap(),
        0,
        "sender re-received its frames"
    );
    assert_eq!(
        a2.recv_batch(&mut bufs).unwrap(),
        0,
        "sibling socket saw outgoing frames"
    );
    // ...while frames from the peer do arrive at both.
    b.send_batch(&[frame(A_MAC, B_MAC, 0x88b5, None, 99, 64)])
        .unwrap();
    assert_eq!(recv_n(&mut a, 1).len(), 1);
    assert_eq!(recv_n(&mut a2, 1).len(), 1);
}

#[test]
fn opening_a_missing_interface_is_a_clear_error() {
    if !common::root_or_skip("opening_a_missing_interface_is_a_clear_error") {
        return;
    }
    let ns = common::Netns::create(1);
    let e = AfPacketPort::open_in_netns(&ns.names[0], "nope0").unwrap_err();
    assert!(e.to_string().contains("nope0"), "{e}");
}

/// An IPv4/UDP frame from a0 to 10.9.0.2:5000 carrying `payload`, UDP
/// checksum 0 (none).
fn udp_frame(payload: &[u8]) -> FrameBuf {
    let mut v = Vec::new();
    v.extend_from_slice(&B_MAC);
    v.extend_from_slice(&A_MAC);
    v.extend_from_slice(&0x0800u16.to_be_bytes());
    let total = 20 + 8 + payload.len();
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 9, 0, 1]);
    ip[16..20].copy_from_slice(&[10, 9, 0, 2]);
    let c = !dataplane::wire::ip::ones_complement_sum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    v.extend_from_slice(&ip);
    v.extend_from_slice(&4000u16.to_be_bytes());
    v.extend_from_slice(&5000u16.to_be_bytes());
    v.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(payload);
    let mut b = FrameBuf::default();
    b.set_frame(&v);
    b
}

/// A transmit ring slot is given back when the kernel releases the frame's
/// buffer, which a receiving IP stack may do (orphaning it) while the data
/// still waits in a socket queue. Frames must reach such a receiver as sent
/// even when every slot has been written again before it reads them.
#[test]
fn frames_reach_a_kernel_socket_unchanged_after_their_slots_are_reused() {
    if !common::root_or_skip("frames_reach_a_kernel_socket_unchanged_after_their_slots_are_reused")
    {
        return;
    }
    let (ns, mut a, _b) = ports();
    common::ip(&[
        "-n",
        &ns.names[1],
        "addr",
        "add",
        "10.9.0.2/24",
        "dev",
        "b0",
    ]);
    let sock = lab::port::netns::run_in(&ns.names[1], || {
        let s = std::net::UdpSocket::bind("10.9.0.2:5000").unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&s);
        let big: libc::c_int = 64 << 20;
        // SAFETY: setsockopt with a live c_int and its size.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                (&big as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        s
    })
    .unwrap();
    // Four rings' worth, each frame's payload its own number repeated.
    let n = 1024u32;
    let frames: Vec<FrameBuf> = (0..n)
        .map(|i| udp_frame(&i.to_be_bytes().repeat(350)))
        .collect();
    let mut off = 0;
    while off < frames.len() {
        off += a.send_batch(&frames[off..]).unwrap();
        while a.tx_pending() {
            a.send_batch(&[]).unwrap();
        }
    }
    sock.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = [0u8; 2048];
    let mut got = 0u32;
    while let Ok(len) = sock.recv(&mut buf) {
        let want = got.to_be_bytes().repeat(350);
        assert_eq!(&buf[..len], &want[..], "datagram {got} changed");
        got += 1;
    }
    assert_eq!(got, n, "datagrams received");
}
