//! Packet-in/packet-out tests of `roce_switch.p4` as compiled into the
//! dataplane, driven in-process through the switch core on ideal output
//! queues (`SwitchConfig::ideal`, with the program's CPU port) and, for RED,
//! through the pipeline directly so the queue depth the egress sees is
//! exact.
//!
//! Frames are hand-written bytes (two of them captured from scapy in
//! `shared/reference/p4runtime-subset.md` §3.2), never built with our own
//! parser; expected outputs are computed here byte by byte.
//!
//! ```text
//!   port 1 ──► [ roce_switch.p4 ] ──► port 2 .. 9 (next hops / ECMP members)
//! ```

use dataplane::roce::{self, PROGRAM_INFO, Program};
use dataplane::switch::{Switch, SwitchConfig};
use dataplane::time::Instant;
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeApi, TableEntry};
use p4_target::v1model::StandardMetadata;

const ROUTER_MAC: u64 = 0x02_00_00_00_00_02;
const NH_SRC_MAC: u64 = 0x02_aa_00_00_00_01;
const NH_DST_MAC: u64 = 0x02_bb_00_00_00_02;

/// RC RDMA WRITE Only over IPv4 (DSCP 26, ECT(0)), 198.51.100.1 → .2,
/// sport 0xc000, dQP 0x123, PSN 16, RETH, 32-byte payload; ICRC from scapy.
const ROCE_WRITE: &str = "0200000000020200000000010800456a005c000140004011e5bbc6336401c6336402\
c00012b7004800000a00ffff000001238000001000007f00000010001234abcd00000020\
000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f907bd975";

/// RoCEv2 CNP (DSCP 48), 198.51.100.2 → .1, BECN, dQP 0x123; ICRC from scapy.
const ROCE_CNP: &str = "020000000001020000000002080045c0003c000140004011e585c6336402c6336401\
000012b7002800008100ffff4000012300000000000000000000000000000000000000001c245af5";

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// RFC 1071 checksum over `bytes` (independent of the switch's code).
fn ones_complement_checksum(bytes: &[u8]) -> u16 {
    let mut sum = 0u32;
    for chunk in bytes.chunks(2) {
        let word = u16::from_be_bytes([chunk[0], *chunk.get(1).unwrap_or(&0)]);
        sum += u32::from(word);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Rewrites the IPv4 header checksum of the header at `off` (IHL-aware).
fn fix_ipv4_checksum(frame: &mut [u8], off: usize) {
    let ihl = usize::from(frame[off] & 0x0f) * 4;
    frame[off + 10] = 0;
    frame[off + 11] = 0;
    let c = ones_complement_checksum(&frame[off..off + ihl]);
    frame[off + 10..off + 12].copy_from_slice(&c.to_be_bytes());
}

fn set_mac(frame: &mut [u8], off: usize, mac: u64) {
    frame[off..off + 6].copy_from_slice(&mac.to_be_bytes()[2..]);
}

fn table_id(name: &str) -> u32 {
    PROGRAM_INFO
        .table_by_name(name)
        .unwrap_or_else(|| panic!("table {name}"))
        .id
}

fn action(name: &str, params: &[u128]) -> ActionCall {
    let id = PROGRAM_INFO
        .action_by_name(name)
        .unwrap_or_else(|| panic!("action {name}"))
        .id;
    ActionCall::new(id, params)
}

fn profile_id() -> u32 {
    PROGRAM_INFO.action_profiles[0].id
}

fn counter(p: &Program, name: &str, index: u32) -> u64 {
    let id = PROGRAM_INFO
        .counters
        .iter()
        .find(|c| c.name.ends_with(name))
        .unwrap()
        .id;
    p.runtime().counter_read(id, index).unwrap().packets
}

fn entry(matches: Vec<Option<FieldMatch>>, priority: i32, action: EntryAction) -> TableEntry {
    TableEntry {
        matches,
        priority,
        action,
        metadata: Vec::new(),
    }
}

/// Sends `frame` in on `port` (a packet-out when `port` is the CPU port)
/// and returns what the switch sent: frames by port, then packet-ins as
/// frames on the CPU port.
fn process(sw: &mut Switch<Program>, port: u16, frame: &[u8]) -> Vec<(u16, Vec<u8>)> {
    let now = Instant::ZERO;
    if port == roce::CPU_PORT {
        sw.handle_packet_out(frame, now);
    } else {
        sw.handle_frame(port, frame, now);
    }
    let mut out = Vec::new();
    sw.drain(now, |p, f| out.push((p, f.to_vec())));
    while let Some(f) = sw.poll_packet_in() {
        out.push((roce::CPU_PORT, f));
    }
    out
}

/// A switch routing 198.51.100.0/24 and 2001:db8::/32 to next hop 1
/// (port 2), with the router MAC installed.
fn router() -> Switch<Program> {
    let mut config = SwitchConfig::ideal(32);
    config.cpu_port = Some(roce::CPU_PORT);
    let mut sw = Switch::new(Program::new(), config, Instant::ZERO).unwrap();
    let rt = sw.pipeline_mut().runtime_mut();
    rt.table_insert(
        table_id("my_station"),
        entry(
            vec![Some(FieldMatch::Exact(ROUTER_MAC.into()))],
            0,
            EntryAction::Direct(action("set_routed", &[])),
        ),
    )
    .unwrap();
    rt.table_insert(
        table_id("ipv4_lpm"),
        entry(
            vec![Some(FieldMatch::Lpm {
                value: 0xc633_6400,
                prefix_len: 24,
            })],
            0,
            EntryAction::Direct(action("set_nexthop_id", &[1])),
        ),
    )
    .unwrap();
    rt.table_insert(
        table_id("ipv6_lpm"),
        entry(
            vec![Some(FieldMatch::Lpm {
                value: 0x2001_0db8 << 96,
                prefix_len: 32,
            })],
            0,
            EntryAction::Direct(action("set_nexthop_id", &[1])),
        ),
    )
    .unwrap();
    rt.member_write(
        profile_id(),
        1,
        action("set_nexthop", &[2, NH_SRC_MAC.into(), NH_DST_MAC.into()]),
        false,
    )
    .unwrap();
    rt.table_insert(
        table_id("nexthop"),
        entry(vec![Some(FieldMatch::Exact(1))], 0, EntryAction::Member(1)),
    )
    .unwrap();
    sw
}

/// What a routed IPv4 frame should look like on the way out.
fn routed_v4(input: &[u8], ip_off: usize) -> Vec<u8> {
    let mut out = input.to_vec();
    set_mac(&mut out, 0, NH_DST_MAC);
    set_mac(&mut out, 6, NH_SRC_MAC);
    out[ip_off + 8] -= 1;
    fix_ipv4_checksum(&mut out, ip_off);
    out
}

// ---------------------------------------------------------------- parsing and routing

#[test]
fn roce_write_with_reth_is_routed_with_ttl_and_checksum() {
    let mut sw = router();
    let frame = hex(ROCE_WRITE);
    let out = process(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1, "one copy out");
    assert_eq!(out[0].0, 2);
    let expected = routed_v4(&frame, 14);
    assert_eq!(hex_of(&out[0].1), hex_of(&expected));
    // The ICRC (last 4 bytes) is untouched: ToS/TTL/checksum are masked (R-ROCE-7).
    assert_eq!(out[0].1[out[0].1.len() - 4..], frame[frame.len() - 4..]);
}

#[test]
fn roce_write_gets_priority_3_and_cnp_priority_6() {
    for (frame, prio) in [(hex(ROCE_WRITE), 3u8), (hex(ROCE_CNP), 6)] {
        let mut p = router_pipeline();
        let meta = StandardMetadata::arriving(1, frame.len() as u32, 0);
        let mut pkt = p.parse(&frame, meta);
        p.ingress(&mut pkt);
        assert_eq!(Program::meta(&pkt).priority, prio);
        assert_eq!(Program::meta(&pkt).parser_error, 0);
    }
}

#[test]
fn cnp_is_routed_and_keeps_its_padding() {
    let mut sw = router();
    let mut frame = hex(ROCE_CNP);
    set_mac(&mut frame, 0, ROUTER_MAC);
    let out = process(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1);
    assert_eq!(hex_of(&out[0].1), hex_of(&routed_v4(&frame, 14)));
}

#[test]
fn ack_with_aeth_is_routed() {
    // RC ACKNOWLEDGE (0x11): BTH + AETH (syndrome 0, MSN 7) + ICRC.
    let mut frame = hex(ROCE_WRITE)[..14 + 20 + 8 + 12].to_vec();
    frame[42] = 0x11;
    frame.extend_from_slice(&[0x00, 0x00, 0x00, 0x07]); // AETH
    frame.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]); // ICRC (opaque here)
    let ip_len = (frame.len() - 14) as u16;
    frame[16..18].copy_from_slice(&ip_len.to_be_bytes());
    let udp_len = ip_len - 20;
    frame[38..40].copy_from_slice(&udp_len.to_be_bytes());
    fix_ipv4_checksum(&mut frame, 14);
    let mut sw = router();
    let out = process(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1);
    assert_eq!(hex_of(&out[0].1), hex_of(&routed_v4(&frame, 14)));
}

#[test]
fn ipv6_roce_is_routed_with_hop_limit_decrement() {
    let mut frame = Vec::new();
    frame.extend_from_slice(&hex("020000000002 020000000001 86dd"));
    // version 6, DSCP 26, ECN ECT(0): traffic class 0x6a; flow label 0x12345.
    frame.extend_from_slice(&[0x66, 0xa1, 0x23, 0x45]);
    let payload_len: u16 = 8 + 12 + 16 + 4 + 4;
    frame.extend_from_slice(&payload_len.to_be_bytes());
    frame.extend_from_slice(&[17, 64]); // UDP, hop limit 64
    frame.extend_from_slice(&hex("20010db8000000000000000000000001"));
    frame.extend_from_slice(&hex("20010db8000000000000000000000002"));
    frame.extend_from_slice(&hex("c24212b7 0028 0000")); // UDP
    frame.extend_from_slice(&hex("0a00ffff 00000011 80000005")); // BTH WRITE Only
    frame.extend_from_slice(&hex("0000000000001000 00000042 00000004")); // RETH
    frame.extend_from_slice(&hex("01020304 0badf00d")); // payload + ICRC
    let mut sw = router();
    let out = process(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1, "routed");
    let mut expected = frame.clone();
    set_mac(&mut expected, 0, NH_DST_MAC);
    set_mac(&mut expected, 6, NH_SRC_MAC);
    expected[14 + 7] = 63;
    assert_eq!(hex_of(&out[0].1), hex_of(&expected));
}

#[test]
fn ipv4_options_are_skipped_by_ihl_and_kept() {
    // The WRITE frame with 8 bytes of options (IHL 7: NOP NOP + 6 bytes).
    let base = hex(ROCE_WRITE);
    let mut frame = base[..34].to_vec();
    frame.extend_from_slice(&[0x01, 0x01, 0x44, 0x06, 0x05, 0x00, 0x00, 0x00]);
    frame.extend_from_slice(&base[34..]);
    frame[14] = 0x47;
    let ip_len = (frame.len() - 14) as u16;
    frame[16..18].copy_from_slice(&ip_len.to_be_bytes());
    fix_ipv4_checksum(&mut frame, 14);
    let mut p = router_pipeline();
    let meta = StandardMetadata::arriving(1, frame.len() as u32, 0);
    let mut pkt = p.parse(&frame, meta);
    p.ingress(&mut pkt);
    // The BTH behind the options was found: priority and routing worked.
    assert_eq!(Program::meta(&pkt).parser_error, 0);
    assert_eq!(Program::meta(&pkt).priority, 3);
    let mut sw = router();
    let out = process(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1);
    assert_eq!(hex_of(&out[0].1), hex_of(&routed_v4(&frame, 14)));
}

#[test]
fn truncated_bth_is_dropped_and_counted() {
    let frame = hex(ROCE_WRITE);
    let truncated = &frame[..14 + 20 + 8 + 6]; // half a BTH
    let mut sw = router();
    assert!(process(&mut sw, 1, truncated).is_empty());
    assert_eq!(
        counter(
            sw.pipeline(),
            "RoceIngress.drop_reason",
            roce::DROP_PARSER_ERROR
        ),
        1
    );
    // A whole frame still goes through afterwards.
    assert_eq!(process(&mut sw, 1, &frame).len(), 1);
}

#[test]
fn ttl_expiry_and_missing_routes_are_dropped_and_counted() {
    let mut sw = router();
    let mut frame = hex(ROCE_WRITE);
    frame[22] = 1;
    fix_ipv4_checksum(&mut frame, 14);
    assert!(process(&mut sw, 1, &frame).is_empty());
    let mut other = hex(ROCE_WRITE);
    other[30..34].copy_from_slice(&[10, 9, 9, 9]);
    fix_ipv4_checksum(&mut other, 14);
    assert!(process(&mut sw, 1, &other).is_empty());
    let p = sw.pipeline();
    assert_eq!(
        counter(p, "RoceIngress.drop_reason", roce::DROP_TTL_EXPIRED),
        1
    );
    assert_eq!(
        counter(p, "RoceIngress.drop_reason", roce::DROP_NO_ROUTE),
        1
    );
}

#[test]
fn bad_ipv4_checksum_is_dropped_and_counted() {
    let mut sw = router();
    let mut frame = hex(ROCE_WRITE);
    frame[24] ^= 0xff;
    assert!(process(&mut sw, 1, &frame).is_empty());
    assert_eq!(
        counter(
            sw.pipeline(),
            "RoceIngress.drop_reason",
            roce::DROP_CHECKSUM
        ),
        1
    );
}

#[test]
fn double_tagged_frames_use_pcp_when_the_port_trusts_pcp_and_l2_forward() {
    let mut sw = router();
    let rt = sw.pipeline_mut().runtime_mut();
    rt.table_insert(
        table_id("port_trust"),
        entry(
            vec![Some(FieldMatch::Exact(1))],
            0,
            EntryAction::Direct(action("trust_pcp", &[])),
        ),
    )
    .unwrap();
    rt.table_insert(
        table_id("l2_fwd"),
        entry(
            vec![
                Some(FieldMatch::Exact(100)),
                Some(FieldMatch::Exact(0x02_00_00_00_00_99)),
            ],
            0,
            EntryAction::Direct(action("l2_forward", &[7])),
        ),
    )
    .unwrap();
    // S-tag (0x88a8) PCP 5 VID 100, C-tag PCP 1 VID 200, then the IPv4 RoCE frame.
    let base = hex(ROCE_WRITE);
    let mut frame = hex("020000000099 020000000001");
    frame.extend_from_slice(&hex("88a8 a064 8100")); // outer TCI: pcp 5, vid 100
    frame.extend_from_slice(&hex("20c8 0800")); // inner TCI: pcp 1, vid 200
    frame.extend_from_slice(&base[14..]);
    let out = process(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, 7);
    assert_eq!(out[0].1, frame, "bridged unchanged (no TTL change)");

    let mut pipeline = router_pipeline();
    pipeline
        .runtime_mut()
        .table_insert(
            table_id("port_trust"),
            entry(
                vec![Some(FieldMatch::Exact(1))],
                0,
                EntryAction::Direct(action("trust_pcp", &[])),
            ),
        )
        .unwrap();
    let mut pkt = pipeline.parse(&frame, StandardMetadata::arriving(1, frame.len() as u32, 0));
    pipeline.ingress(&mut pkt);
    assert_eq!(Program::meta(&pkt).priority, 5, "outer PCP under PCP trust");
}

/// A RoCE v1 frame has no IP header and so no DSCP: on a port that trusts
/// DSCP (the default) its VLAN PCP classifies it, and it is bridged.
#[test]
fn roce_v1_frames_take_their_priority_from_the_pcp_on_a_dscp_port() {
    let mut pipeline = router_pipeline();
    pipeline
        .runtime_mut()
        .table_insert(
            table_id("l2_fwd"),
            entry(
                vec![
                    Some(FieldMatch::Exact(100)),
                    Some(FieldMatch::Exact(0x02_00_00_00_00_99)),
                ],
                0,
                EntryAction::Direct(action("l2_forward", &[7])),
            ),
        )
        .unwrap();
    // Tag PCP 3 VID 100, EtherType 0x8915, GRH (next header 0x1B = BTH),
    // BTH of an RDMA WRITE ONLY, 16 bytes of payload, ICRC.
    let mut frame = hex("020000000099 020000000001 8100 6064 8915");
    frame.extend_from_slice(&hex("60000000 001c 1b 40"));
    frame.extend_from_slice(&[0u8; 32]);
    frame.extend_from_slice(&hex("0a00ffff 00000011 80000001"));
    frame.extend_from_slice(&[0u8; 20]);
    let mut pkt = pipeline.parse(&frame, StandardMetadata::arriving(1, frame.len() as u32, 0));
    pipeline.ingress(&mut pkt);
    assert_eq!(Program::meta(&pkt).priority, 3, "PCP 3, no DSCP to trust");

    let mut sw = router();
    std::mem::swap(sw.pipeline_mut(), &mut pipeline);
    let out = process(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0], (7, frame), "bridged unchanged");
}

#[test]
fn unknown_l2_destination_is_dropped_not_flooded() {
    let mut sw = router();
    let mut frame = hex(ROCE_WRITE);
    set_mac(&mut frame, 0, 0x02_00_00_00_00_77);
    assert!(process(&mut sw, 1, &frame).is_empty());
    assert_eq!(
        counter(
            sw.pipeline(),
            "RoceIngress.drop_reason",
            roce::DROP_UNKNOWN_L2_DST
        ),
        1
    );
}

#[test]
fn acl_deny_and_punt_to_cpu() {
    let mut sw = router();
    let rt = sw.pipeline_mut().runtime_mut();
    let any16 = Some(FieldMatch::Range {
        low: 0,
        high: 0xffff,
    });
    rt.table_insert(
        table_id("acl"),
        entry(
            vec![
                None,
                None,
                None,
                None,
                Some(FieldMatch::Ternary {
                    value: 17,
                    mask: 0xff,
                }),
                Some(FieldMatch::Range {
                    low: 0xc000,
                    high: 0xc000,
                }),
                any16,
                None,
                None,
            ],
            10,
            EntryAction::Direct(action("acl_deny", &[])),
        ),
    )
    .unwrap();
    rt.table_insert(
        table_id("acl"),
        entry(
            vec![
                None,
                Some(FieldMatch::Ternary {
                    value: 0x0800,
                    mask: 0xffff,
                }),
                None,
                None,
                None,
                None,
                None,
                None,
                None,
            ],
            5,
            EntryAction::Direct(action("punt_to_cpu", &[])),
        ),
    )
    .unwrap();
    let frame = hex(ROCE_WRITE); // sport 0xc000: denied
    assert!(process(&mut sw, 1, &frame).is_empty());
    assert_eq!(
        counter(sw.pipeline(), "RoceIngress.drop_reason", roce::DROP_ACL),
        1
    );
    let mut other = frame.clone();
    other[34..36].copy_from_slice(&0xc001u16.to_be_bytes());
    let out = process(&mut sw, 1, &other);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, 510);
    // packet_in header: ingress port 1 in 9 bits, then 7 pad bits.
    assert_eq!(&out[0].1[..2], &[0x00, 0x80]);
}

/// The fault-injection ACL action: one in every n packets of the matching
/// QP dropped (counted as an ACL drop), other QPs untouched.
#[test]
fn acl_drop_one_in_n_drops_every_nth_packet_of_one_qp() {
    let mut sw = router();
    let frame = hex(ROCE_WRITE);
    // BTH after Ethernet 14 + IPv4 20 + UDP 8; DestQP is its bytes 5..8.
    let qp_at = 14 + 20 + 8 + 5;
    let qpn = u32::from_be_bytes([0, frame[qp_at], frame[qp_at + 1], frame[qp_at + 2]]);
    let mut other = frame.clone();
    other[qp_at + 2] ^= 1;
    let mut key = vec![None; 9];
    key[8] = Some(FieldMatch::Ternary {
        value: u128::from(qpn),
        mask: 0xff_ffff,
    });
    sw.pipeline_mut()
        .runtime_mut()
        .table_insert(
            table_id("acl"),
            entry(
                key,
                10,
                EntryAction::Direct(action("acl_drop_one_in", &[3, 7])),
            ),
        )
        .unwrap();
    let mut delivered = Vec::new();
    for _ in 0..9 {
        delivered.push(process(&mut sw, 1, &frame).len());
        assert_eq!(process(&mut sw, 1, &other).len(), 1, "another QP");
    }
    assert_eq!(delivered, [1, 1, 0, 1, 1, 0, 1, 1, 0]);
    assert_eq!(
        counter(sw.pipeline(), "RoceIngress.drop_reason", roce::DROP_ACL),
        3
    );
}

#[test]
fn packet_out_goes_where_the_controller_says() {
    let mut sw = router();
    let frame = hex(ROCE_WRITE);
    let mut out_frame = vec![0x02, 0x00]; // egress port 4
    out_frame.extend_from_slice(&frame);
    let out = process(&mut sw, 510, &out_frame);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, 4);
    assert_eq!(out[0].1, frame, "sent unchanged, header removed");
}

// ---------------------------------------------------------------- ECMP

fn router_pipeline() -> Program {
    let mut sw = router();
    std::mem::replace(sw.pipeline_mut(), Program::new())
}

/// Replaces next hop 1 by a group of `n` members on ports 10..10+n.
fn ecmp(p: &mut Program, n: u32) {
    let rt = p.runtime_mut();
    let t = table_id("nexthop");
    rt.table_delete(t, &[Some(FieldMatch::Exact(1))], 0)
        .unwrap();
    for m in 0..n {
        rt.member_write(
            profile_id(),
            100 + m,
            action(
                "set_nexthop",
                &[(10 + m).into(), NH_SRC_MAC.into(), NH_DST_MAC.into()],
            ),
            false,
        )
        .unwrap();
    }
    let members: Vec<(u32, u32)> = (0..n).map(|m| (100 + m, 1)).collect();
    rt.group_write(profile_id(), 7, &members, false).unwrap();
    rt.table_insert(
        t,
        entry(vec![Some(FieldMatch::Exact(1))], 0, EntryAction::Group(7)),
    )
    .unwrap();
}

fn egress_port_for(p: &mut Program, frame: &[u8]) -> u16 {
    let mut pkt = p.parse(frame, StandardMetadata::arriving(1, frame.len() as u32, 0));
    p.ingress(&mut pkt);
    Program::meta(&pkt).egress_spec
}

/// Upper tail of the chi-square distribution, by the Wilson–Hilferty cube
/// approximation (good to ~1e-3 for 7 degrees of freedom and up).
fn chi_square_p_value(chi2: f64, dof: f64) -> f64 {
    let z = ((chi2 / dof).powf(1.0 / 3.0) - (1.0 - 2.0 / (9.0 * dof))) / (2.0 / (9.0 * dof)).sqrt();
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// Complementary error function (Numerical Recipes' Chebyshev fit, 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[test]
fn ecmp_spreads_10000_flows_over_8_members_by_udp_source_port() {
    let mut p = router_pipeline();
    ecmp(&mut p, 8);
    let mut frame = hex(ROCE_WRITE);
    let mut counts = [0u32; 8];
    for i in 0..10_000u32 {
        let sport = 0xc000 + (i % 0x4000) as u16;
        frame[34..36].copy_from_slice(&sport.to_be_bytes());
        // Different flows also differ in destination QP, as real QPs do; the
        // switch only hashes the 5-tuple, so the source port is what varies.
        let port = egress_port_for(&mut p, &frame);
        assert!((10..18).contains(&port), "member port, got {port}");
        counts[usize::from(port - 10)] += 1;
    }
    let expected = 10_000.0 / 8.0;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (f64::from(c) - expected).powi(2) / expected)
        .sum();
    let p_value = chi_square_p_value(chi2, 7.0);
    assert!(
        p_value > 0.01,
        "counts {counts:?}, chi2 {chi2:.2}, p {p_value:.4}"
    );
}

#[test]
fn ecmp_keeps_each_flow_on_one_member() {
    let mut p = router_pipeline();
    ecmp(&mut p, 8);
    let mut frame = hex(ROCE_WRITE);
    for sport in (0xc000u16..0xc000 + 500).step_by(7) {
        frame[34..36].copy_from_slice(&sport.to_be_bytes());
        let first = egress_port_for(&mut p, &frame);
        for _ in 0..5 {
            assert_eq!(
                egress_port_for(&mut p, &frame),
                first,
                "flow {sport:#x} moved"
            );
        }
    }
}

#[test]
fn chi_square_helper_matches_tables() {
    // 7 degrees of freedom: the 1 % critical value is 18.475, 5 % is 14.067.
    assert!((chi_square_p_value(18.475, 7.0) - 0.01).abs() < 0.002);
    assert!((chi_square_p_value(14.067, 7.0) - 0.05).abs() < 0.004);
}

// ---------------------------------------------------------------- RED / ECN

const KMIN: u32 = 20_000;
const KMAX: u32 = 200_000;
const PMAX_PERCENT: f64 = 20.0;

fn red_pipeline() -> Program {
    let mut p = router_pipeline();
    let pmax = (PMAX_PERCENT / 100.0 * 65535.0).round() as u128;
    p.runtime_mut()
        .table_insert(
            table_id("ecn_red"),
            entry(
                vec![Some(FieldMatch::Exact(2)), Some(FieldMatch::Exact(3))],
                0,
                EntryAction::Direct(action("set_red", &[KMIN.into(), KMAX.into(), pmax])),
            ),
        )
        .unwrap();
    p
}

/// Runs `frame` through ingress and egress with the given queue depth and
/// returns the ECN bits it leaves with.
fn ecn_after(p: &mut Program, frame: &[u8], qdepth_bytes: u32) -> u8 {
    let mut pkt = p.parse(frame, StandardMetadata::arriving(1, frame.len() as u32, 0));
    p.ingress(&mut pkt);
    let m = Program::meta_mut(&mut pkt);
    m.egress_port = m.egress_spec;
    m.deq_qdepth_bytes = qdepth_bytes;
    p.egress(&mut pkt);
    let mut out = Vec::new();
    p.deparse(&mut pkt, frame, &mut out);
    // The IPv4 checksum is valid whatever happened to the ECN bits.
    assert_eq!(ones_complement_checksum(&out[14..34]), 0, "IPv4 checksum");
    out[15] & 3
}

#[test]
fn red_never_marks_below_kmin_and_always_above_kmax() {
    let mut p = red_pipeline();
    let frame = hex(ROCE_WRITE); // ECT(0), priority 3, leaves on port 2
    for q in [0, 1, KMIN / 2, KMIN] {
        for _ in 0..200 {
            assert_eq!(ecn_after(&mut p, &frame, q), 2, "q = {q}: never marked");
        }
    }
    for q in [KMAX + 1, KMAX * 2, u32::MAX] {
        for _ in 0..200 {
            assert_eq!(ecn_after(&mut p, &frame, q), 3, "q = {q}: always CE");
        }
    }
}

#[test]
fn red_marks_at_the_ramp_rate_between_kmin_and_kmax() {
    let mut p = red_pipeline();
    let frame = hex(ROCE_WRITE);
    for q in [
        KMIN + (KMAX - KMIN) / 4,
        KMIN + (KMAX - KMIN) / 2,
        KMAX - 1000,
    ] {
        let n = 100_000;
        let marked = (0..n).filter(|_| ecn_after(&mut p, &frame, q) == 3).count();
        let rate = marked as f64 / n as f64 * 100.0;
        let expected = PMAX_PERCENT * f64::from(q - KMIN) / f64::from(KMAX - KMIN);
        assert!(
            (rate - expected).abs() < 1.0,
            "q {q}: marked {rate:.2} %, expected {expected:.2} %"
        );
    }
}

#[test]
fn red_never_marks_not_ect_and_keeps_ce() {
    let mut p = red_pipeline();
    let mut not_ect = hex(ROCE_WRITE);
    not_ect[15] &= !3;
    fix_ipv4_checksum(&mut not_ect, 14);
    let mut ce = hex(ROCE_WRITE);
    ce[15] |= 3;
    fix_ipv4_checksum(&mut ce, 14);
    for _ in 0..100 {
        assert_eq!(
            ecn_after(&mut p, &not_ect, KMAX * 4),
            0,
            "Not-ECT is never marked"
        );
        assert_eq!(ecn_after(&mut p, &ce, 0), 3, "CE stays CE");
    }
    let marked_id = PROGRAM_INFO
        .counters
        .iter()
        .find(|c| c.name.ends_with("ecn_marked"))
        .unwrap()
        .id;
    assert_eq!(
        p.runtime()
            .counter_read(marked_id, 2 * 8 + 3)
            .unwrap()
            .packets,
        0
    );
}

fn hex_of(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
