use std::net::{IpAddr, Ipv6Addr};

use super::*;
use crate::rnic::frame::RoceFrameRepr;
use crate::wire::ib::{AethRepr, BthRepr, Opcode, RethRepr};
use crate::wire::ip::Ecn;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

// p4runtime-subset §3.2: RC RDMA_WRITE_ONLY and CNP over IPv4, verified with scapy 2.8.0.
const WRITE_FRAME: &str = "0200000000020200000000010800456a005c000140004011e5bbc6336401c6336402c00012b7004800000a00ffff000001238000001000007f00000010001234abcd00000020000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f907bd975";
const CNP_FRAME: &str = "020000000001020000000002080045c0003c000140004011e585c6336402c6336401000012b7002800008100ffff4000012300000000000000000000000000000000000000001c245af5";

/// A consistent spec for `op` (the extension headers it needs, a payload
/// if it may carry one).
fn spec_for(op: Opcode) -> FrameSpec {
    let layout = opcode_layout(op).unwrap();
    FrameSpec {
        opcode: op,
        dest_qp: 0xAB_CDEF,
        psn: 0xFF_FFFE,
        ack_req: true,
        pkey: 0x8001,
        reth: layout.reth.then_some(RethRepr {
            virtual_addr: 0x7f00_1234_5678,
            rkey: 0xdead_beef,
            dma_len: 4096,
        }),
        aeth: layout.aeth.then_some(AethRepr {
            syndrome: 0x1f,
            msn: 0x12_3456,
        }),
        immdt: layout.immdt.then_some(0x0102_0304),
        payload_len: if layout.payload { 37 } else { 0 },
        becn: op == Opcode::Cnp,
        ..FrameSpec::default()
    }
}

/// Every RC and UC opcode this module builds, and CNP.
fn supported() -> Vec<Opcode> {
    (0..=255u8)
        .map(Opcode::from)
        .filter(|&op| opcode_layout(op).is_some())
        .collect()
}

fn variants(mut s: FrameSpec) -> Vec<FrameSpec> {
    let v6 = |s: &mut FrameSpec| {
        s.src_ip = IpAddr::V6("fd00::1".parse().unwrap());
        s.dst_ip = IpAddr::V6("fd00::2".parse().unwrap());
        s.flow_label = 0xABCDE;
    };
    let mut out = vec![s];
    s.vlan = Some(Vlan { vid: 100, pcp: 3 });
    out.push(s);
    let mut s6 = s;
    v6(&mut s6);
    out.push(s6);
    s.version = RoceVersion::V1;
    s.udp_src_port = 0;
    out.push(s);
    s6.version = RoceVersion::V1;
    s6.udp_src_port = 0;
    s6.vlan = None;
    out.push(s6);
    out
}

#[test]
fn every_opcode_class_round_trips_over_v1_v2_v4_v6_and_vlan() {
    let ops = supported();
    assert_eq!(
        ops.len(),
        18 + 12 + 1,
        "RC 0x00..=0x11, UC 0x20..=0x2B, CNP"
    );
    for op in ops {
        for spec in variants(spec_for(op)) {
            let f = spec.build().unwrap_or_else(|e| panic!("{spec:?}: {e}"));
            let d = decode(&f).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
            assert_eq!(d.spec, spec, "{}", OpcodeName(op));
            assert!(d.icrc.ok(), "{}", OpcodeName(op));
            assert_eq!(d.frame_len, f.len());
            assert_eq!(d.trailing_len, 0);
            assert_eq!(usize::from(d.pad_count), spec.pad_len());
            if let NetHeader::Ipv4 { checksum, .. } = d.net {
                assert!(checksum.ok());
            }
            if spec.payload_len > 0 {
                assert_eq!(d.payload_pattern, Some(PayloadPattern::Counting));
                assert_eq!(&f[d.payload_offset..d.payload_offset + 3], &[0, 1, 2]);
            }
        }
    }
}

#[test]
fn layouts_follow_the_ibta_opcode_table() {
    let s = spec_for(Opcode::RcWriteFirst);
    // 14 + 20 + 8 + BTH 12 + RETH 16 + 37 + pad 3 + ICRC 4
    assert_eq!(s.buffer_len().unwrap(), 114);
    let ack = spec_for(Opcode::RcAcknowledge);
    assert_eq!(ack.buffer_len().unwrap(), 14 + 20 + 8 + 12 + 4 + 4);
    let cnp = spec_for(Opcode::Cnp);
    assert_eq!(cnp.buffer_len().unwrap(), 74, "E-11: 60 bytes of IP + 14");
    let imm = spec_for(parse_opcode("UC RDMA_WRITE_ONLY_WITH_IMMEDIATE").unwrap());
    assert_eq!(
        imm.buffer_len().unwrap(),
        14 + 20 + 8 + 12 + 16 + 4 + 40 + 4
    );
    let v6 = variants(spec_for(Opcode::RcSendOnly))[2];
    let f = v6.build().unwrap();
    assert_eq!(&f[12..18], &[0x81, 0x00, 0x60, 0x64, 0x86, 0xdd]);
    assert_eq!(f[18] >> 4, 6);
    assert_eq!(f[18 + 6], 17, "next header UDP");
    assert_eq!(&f[18 + 40 + 2..18 + 40 + 4], &4791u16.to_be_bytes());
}

#[test]
fn equals_the_rnic_model_and_the_scapy_fixtures() {
    for (h, op) in [(WRITE_FRAME, Opcode::RcWriteOnly), (CNP_FRAME, Opcode::Cnp)] {
        let f = hex(h);
        let d = decode(&f).unwrap();
        assert_eq!(d.spec.opcode, op);
        assert!(d.icrc.ok());
        assert!(matches!(d.net, NetHeader::Ipv4 { ident: 1, checksum, .. } if checksum.ok()));
        assert_eq!(d.spec.dest_qp, 0x123);
    }
    // The RNIC's builder and ours give the same bytes (ident 0), tagged or
    // not, v1 or v2.
    for op in [
        Opcode::RcWriteOnly,
        Opcode::RcAcknowledge,
        Opcode::Cnp,
        Opcode::RcSendLastImm,
    ] {
        for (version, vlan) in [
            (RoceVersion::V2, None),
            (RoceVersion::V2, Some(Vlan { vid: 7, pcp: 5 })),
            (RoceVersion::V1, Some(Vlan { vid: 7, pcp: 5 })),
        ] {
            let mut s = spec_for(op);
            s.version = version;
            s.vlan = vlan;
            let ext = match (s.reth, s.aeth) {
                (Some(r), _) => RoceExt::Reth(r),
                (_, Some(a)) => RoceExt::Aeth(a),
                _ if op == Opcode::Cnp => RoceExt::CnpPad,
                _ => RoceExt::None,
            };
            let IpAddr::V4(src) = s.src_ip else {
                unreachable!()
            };
            let IpAddr::V4(dst) = s.dst_ip else {
                unreachable!()
            };
            let mut bth = BthRepr::new(op, s.dest_qp, s.psn, s.ack_req);
            bth.pkey = s.pkey;
            bth.becn = s.becn;
            let mut r = RoceFrameRepr::new_ipv4(
                s.src_mac,
                s.dst_mac,
                src,
                dst,
                s.dscp,
                s.ecn,
                s.udp_src_port,
                bth,
                ext,
                s.payload_len,
            );
            r.imm = s.immdt.map(|imm| crate::wire::ib::ImmDtRepr { imm });
            r.vlan = vlan;
            if version == RoceVersion::V1 {
                r.version = RoceVersion::V1;
            }
            let payload: Vec<u8> = (0..s.payload_len).map(|i| i as u8).collect();
            let mut buf = vec![0u8; r.buffer_len()];
            r.emit(&mut buf, &payload).unwrap();
            assert_eq!(s.build().unwrap(), buf, "{} {version:?}", OpcodeName(op));
        }
    }
}

#[test]
fn a_corrupted_byte_is_a_bad_icrc_and_the_invariant_fields_are_not() {
    for spec in variants(spec_for(Opcode::RcWriteOnly)) {
        let f = spec.build().unwrap();
        let mut g = f.clone();
        let last = g.len() - 10;
        g[last] ^= 0x01; // payload
        let d = decode(&g).unwrap();
        assert!(!d.icrc.ok());
        assert_eq!(d.icrc.received, decode(&f).unwrap().icrc.expected);
    }
    // A switch's CE mark and TTL decrement (with a new IPv4 checksum) keep
    // the ICRC valid (E-12); a stale IPv4 checksum is reported.
    let mut f = spec_for(Opcode::RcSendOnly).build().unwrap();
    let mut ip = Ipv4Packet::new_unchecked(&mut f[14..34]);
    ip.set_tos(ip.tos() | 3);
    ip.set_ttl(63);
    let d = decode(&f).unwrap();
    assert!(d.icrc.ok());
    let NetHeader::Ipv4 { checksum, .. } = d.net else {
        panic!()
    };
    assert!(!checksum.ok());
    Ipv4Packet::new_unchecked(&mut f[14..34]).fill_checksum();
    let NetHeader::Ipv4 { checksum, .. } = decode(&f).unwrap().net else {
        panic!()
    };
    assert!(checksum.ok());
    assert_eq!(decode(&f).unwrap().spec.ecn, Ecn::Ce);
}

#[test]
fn truncated_and_foreign_input_are_typed_errors() {
    for spec in variants(spec_for(Opcode::RcReadRequest)) {
        let f = spec.build().unwrap();
        for n in 0..f.len() {
            assert!(
                matches!(decode(&f[..n]), Err(DecodeError::Truncated { .. })),
                "{n} of {} bytes",
                f.len()
            );
        }
        // Ethernet padding after the frame is counted, not decoded.
        let mut padded = f.clone();
        padded.extend_from_slice(&[0; 6]);
        assert_eq!(decode(&padded).unwrap().trailing_len, 6);
    }
    let mut f = hex(WRITE_FRAME);
    f[14 + 23] ^= 0xFF;
    assert!(matches!(decode(&f), Err(DecodeError::NotRoce(_))));
    let mut arp = hex(WRITE_FRAME);
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    assert!(matches!(decode(&arp), Err(DecodeError::NotRoce(_))));
    let mut ud = spec_for(Opcode::RcSendOnly).build().unwrap();
    ud[14 + 28] = 0x64;
    assert_eq!(
        decode(&ud),
        Err(DecodeError::UnsupportedOpcode(OpcodeName(
            Opcode::UdSendOnly
        )))
    );
}

#[test]
fn inconsistent_specs_are_refused() {
    let send = spec_for(Opcode::RcSendOnly);
    let e = FrameSpec {
        reth: spec_for(Opcode::RcWriteOnly).reth,
        ..send
    }
    .build()
    .unwrap_err();
    assert_eq!(
        e,
        FrameError::UnexpectedHeader {
            header: "RETH",
            opcode: OpcodeName(Opcode::RcSendOnly)
        }
    );
    assert_eq!(e.to_string(), "RC SEND_ONLY (0x04) carries no RETH");
    let e = FrameSpec {
        opcode: Opcode::RcWriteOnly,
        ..send
    }
    .build()
    .unwrap_err();
    assert!(matches!(
        e,
        FrameError::MissingHeader { header: "RETH", .. }
    ));
    let e = FrameSpec {
        payload_len: 1,
        ..spec_for(Opcode::RcAcknowledge)
    }
    .build()
    .unwrap_err();
    assert!(matches!(e, FrameError::UnexpectedPayload { .. }));
    assert!(matches!(
        FrameSpec { dscp: 64, ..send }.build(),
        Err(FrameError::OutOfRange { field: "dscp", .. })
    ));
    assert!(matches!(
        FrameSpec {
            dest_qp: 1 << 24,
            ..send
        }
        .build(),
        Err(FrameError::OutOfRange {
            field: "dest_qp",
            ..
        })
    ));
    assert_eq!(
        FrameSpec {
            dst_ip: IpAddr::V6(Ipv6Addr::LOCALHOST),
            ..send
        }
        .build(),
        Err(FrameError::MixedAddressFamilies)
    );
    assert_eq!(
        FrameSpec {
            opcode: Opcode::RcFetchAdd,
            ..send
        }
        .build(),
        Err(FrameError::UnsupportedOpcode(OpcodeName(
            Opcode::RcFetchAdd
        )))
    );
    assert!(matches!(
        FrameSpec {
            payload_len: 70_000,
            ..send
        }
        .build(),
        Err(FrameError::TooLong(_))
    ));
    assert_eq!(
        send.emit(&mut [0u8; 40]),
        Err(FrameError::BufferTooSmall { have: 40, need: 98 })
    );
}

#[test]
fn opcode_names_parse_both_ways() {
    for op in supported() {
        let name = opcode_name(op).unwrap();
        assert_eq!(parse_opcode(&name), Some(op), "{name}");
    }
    assert_eq!(parse_opcode("send_only"), Some(Opcode::RcSendOnly));
    assert_eq!(parse_opcode("RDMA-WRITE-FIRST"), Some(Opcode::RcWriteFirst));
    assert_eq!(parse_opcode("uc_rdma_write_only"), Some(Opcode::from(0x2A)));
    assert_eq!(parse_opcode("ack"), Some(Opcode::RcAcknowledge));
    assert_eq!(parse_opcode("cnp"), Some(Opcode::Cnp));
    assert_eq!(parse_opcode("0x81"), Some(Opcode::Cnp));
    assert_eq!(parse_opcode("10"), Some(Opcode::RcWriteOnly));
    assert_eq!(parse_opcode("SEND_SOMETIMES"), None);
    assert_eq!(OpcodeName(Opcode::from(0xC3)).to_string(), "opcode 0xc3");
}

proptest::proptest! {
    #[test]
    fn decode_never_panics(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
        let _ = decode(&data);
    }

    #[test]
    fn decode_never_panics_on_damaged_frames(i in 0usize..114, b in proptest::prelude::any::<u8>(), cut in 0usize..120) {
        let mut f = spec_for(Opcode::RcWriteFirst).build().unwrap();
        f[i] = b;
        f.truncate(cut);
        let _ = decode(&f);
    }
}

#[test]
fn no_opcode_builds_a_packet_larger_than_largest_packet_len() {
    for version in [RoceVersion::V1, RoceVersion::V2] {
        for payload in [1024usize, 4093] {
            let mut worst = 0;
            for op in supported() {
                let mut s = spec_for(op);
                s.version = version;
                if s.payload_len > 0 {
                    s.payload_len = payload;
                }
                let frame = s.build().unwrap();
                worst = worst.max(frame.len() - 14);
            }
            assert_eq!(
                worst,
                largest_packet_len(version, payload),
                "{version:?}, {payload} B: the bound is the largest frame, not above it"
            );
        }
    }
}
