//! The v1model behaviours of [`Switch`] (the module doc's list), on ideal
//! output queues, with a hand-written pipeline whose behaviour is scripted
//! by the packet's first byte, so that each architecture path can be driven
//! directly.
//!
//! Header (8 bytes): `op a b c x0 x1 x2 x3`, then payload. At the end of
//! every egress pass, egress writes `x0` = egress port, `x1` = instance
//! type, `x2` = egress rid (ops 4 and 10: the user byte outside every
//! field list, which the parser sets to 0xaa)
//! and `x3` = the user byte in field list 1.

use p4_target::arch::{CloneSession, MAX_EXTRA_PASSES, McReplica};
use p4_target::info::ProgramInfo;
use p4_target::pipeline::Pipeline;
use p4_target::runtime::Runtime;
use p4_target::v1model::{
    CloneRequest, CloneType, DROP_PORT, StandardMetadata, error_code, instance_type,
};

use super::*;

static INFO: ProgramInfo = ProgramInfo {
    name: "scripted",
    ..ProgramInfo::EMPTY
};

#[derive(Clone, Debug)]
struct Pkt {
    hdr: Option<[u8; 8]>,
    /// User metadata in `@field_list(1)`.
    user: u8,
    /// User metadata in no field list.
    user2: u8,
    meta: StandardMetadata,
    payload_offset: usize,
}

struct Scripted {
    rt: Runtime,
}

impl Scripted {
    fn new() -> Self {
        Scripted {
            rt: Runtime::new(&INFO),
        }
    }
}

impl Pipeline for Scripted {
    type Packet = Pkt;
    fn info(&self) -> &'static ProgramInfo {
        &INFO
    }
    fn runtime(&self) -> &Runtime {
        &self.rt
    }
    fn runtime_mut(&mut self) -> &mut Runtime {
        &mut self.rt
    }
    fn parse(&mut self, data: &[u8], mut meta: StandardMetadata) -> Pkt {
        if data.len() < 8 {
            meta.parser_error = error_code::PACKET_TOO_SHORT;
            return Pkt {
                hdr: None,
                user: 0,
                user2: 0,
                meta,
                payload_offset: 0,
            };
        }
        let mut hdr = [0u8; 8];
        hdr.copy_from_slice(&data[..8]);
        Pkt {
            hdr: Some(hdr),
            user: 0,
            // Metadata the parser sets: an I2E clone must not keep it.
            user2: 0xaa,
            meta,
            payload_offset: 8,
        }
    }
    fn parse_preserving(
        &mut self,
        data: &[u8],
        meta: StandardMetadata,
        from: &Pkt,
        field_list: u8,
    ) -> Pkt {
        // This parser never writes `user`, so copying after it is the same
        // as copying before.
        let mut pkt = self.parse(data, meta);
        Self::preserve_fields(from, &mut pkt, field_list);
        pkt
    }
    fn ingress(&mut self, pkt: &mut Pkt) {
        let Some(h) = pkt.hdr.as_mut() else {
            pkt.meta.mark_to_drop();
            return;
        };
        let (op, a, b) = (h[0], h[1] as u16, h[2] as u32);
        let m = &mut pkt.meta;
        match op {
            0 | 6 | 10 | 11 => m.egress_spec = a,
            1 => m.mcast_grp = a,
            2 => m.mark_to_drop(),
            3 => {
                if m.instance_type == instance_type::RESUBMIT {
                    m.egress_spec = a;
                } else {
                    pkt.user = 0x5a;
                    m.resubmit = Some(1);
                }
            }
            4 | 9 => {
                pkt.user = 0x33;
                h[3] = 0xee;
                m.egress_spec = a;
                m.clone_request = Some(CloneRequest {
                    kind: CloneType::IngressToEgress,
                    session: b,
                    field_list: Some(1),
                });
            }
            5 => {
                m.egress_spec = a;
                if m.instance_type == instance_type::RECIRC {
                    h[2] = instance_type::RECIRC as u8;
                }
            }
            7 => m.resubmit = Some(0),
            8 => {
                m.egress_spec = a;
                m.truncate_len = Some(b);
            }
            _ => m.mark_to_drop(),
        }
    }
    fn egress(&mut self, pkt: &mut Pkt) {
        let Some(h) = pkt.hdr.as_mut() else { return };
        let m = &mut pkt.meta;
        let e2e = |session: u8, field_list| {
            Some(CloneRequest {
                kind: CloneType::EgressToEgress,
                session: u32::from(session),
                field_list,
            })
        };
        match h[0] {
            5 if pkt.user != 0x44 => {
                pkt.user = 0x44;
                h[3] = h[3].wrapping_add(1);
                m.recirculate = Some(1);
            }
            6 if m.instance_type != instance_type::EGRESS_CLONE => {
                m.egress_spec = DROP_PORT;
                m.clone_request = e2e(h[2], None);
            }
            10 if m.instance_type != instance_type::EGRESS_CLONE => {
                h[3] = 0xc1;
                pkt.user = 0x55;
                pkt.user2 = 0x99;
                m.clone_request = e2e(h[2], Some(1));
            }
            11 => m.clone_request = e2e(h[2], None),
            _ => {}
        }
        h[4] = m.egress_port as u8;
        h[5] = m.instance_type as u8;
        h[6] = if h[0] == 4 || h[0] == 10 {
            pkt.user2
        } else {
            m.egress_rid as u8
        };
        h[7] = pkt.user;
    }
    fn deparse(&mut self, pkt: &mut Pkt, data: &[u8], out: &mut Vec<u8>) {
        out.clear();
        if let Some(h) = pkt.hdr.as_mut() {
            if h[0] == 10 {
                // A `computeChecksum`-like update the deparser makes.
                h[1] = h[1].wrapping_add(0x10);
            }
            out.extend_from_slice(h);
        }
        out.extend_from_slice(&data[pkt.payload_offset..]);
    }
    fn meta(pkt: &Pkt) -> &StandardMetadata {
        &pkt.meta
    }
    fn meta_mut(pkt: &mut Pkt) -> &mut StandardMetadata {
        &mut pkt.meta
    }
    fn reset_user_metadata(pkt: &mut Pkt) {
        pkt.user = 0;
        pkt.user2 = 0;
    }
    fn preserve_fields(from: &Pkt, to: &mut Pkt, field_list: u8) {
        if field_list == 1 {
            to.user = from.user;
        }
    }
}

const PORTS: usize = 16;

fn switch() -> Switch<Scripted> {
    Switch::new(Scripted::new(), SwitchConfig::ideal(PORTS), Instant::ZERO).unwrap()
}

/// Sends one frame in on `port` and returns everything transmitted, in
/// port order and per port in transmit order.
fn process(sw: &mut Switch<Scripted>, port: u16, frame: &[u8]) -> Vec<(u16, Vec<u8>)> {
    let now = Instant::from_micros(1);
    sw.handle_frame(port, frame, now);
    let mut out = Vec::new();
    sw.drain(now, |p, f| out.push((p, f.to_vec())));
    // Every scripted case (clones, resubmits, recirculations, multicast,
    // drops) leaves the ledger balanced, with nothing left inside.
    let ledger = sw.ledger();
    ledger.check().unwrap();
    let total = ledger.total();
    assert_eq!(total.queued() + total.recirculating, 0);
    assert_eq!(total.packet_in, sw.stats().packet_in);
    out
}

fn pkt(op: u8, a: u8, b: u8, c: u8) -> Vec<u8> {
    vec![op, a, b, c, 0, 0, 0, 0, 0xde, 0xad]
}

fn session(egress_port: u16, class_of_service: u8, truncate_bytes: Option<u32>) -> CloneSession {
    CloneSession {
        replicas: vec![McReplica {
            port: egress_port,
            rid: 0,
        }],
        class_of_service,
        truncate_bytes,
    }
}

const IC: u8 = instance_type::INGRESS_CLONE as u8;
const EC: u8 = instance_type::EGRESS_CLONE as u8;
const RC: u8 = instance_type::RECIRC as u8;
const REP: u8 = instance_type::REPLICATION as u8;

// ---- unicast, drop, multicast ----

#[test]
fn unicast_goes_to_egress_spec_with_metadata_set() {
    let mut sw = switch();
    let out = process(&mut sw, 1, &pkt(0, 7, 0, 0));
    assert_eq!(out, vec![(7, vec![0, 7, 0, 0, 7, 0, 0, 0, 0xde, 0xad])]);
    let s = sw.stats();
    assert_eq!((s.rx_frames, s.tx_frames), (1, 1));
    assert_eq!((s.ingress_passes, s.egress_passes), (1, 1));
}

#[test]
fn mark_to_drop_in_ingress_is_counted() {
    let mut sw = switch();
    assert!(process(&mut sw, 1, &pkt(2, 0, 0, 0)).is_empty());
    assert_eq!(sw.stats().dropped(SwitchDrop::IngressDrop), 1);
    // A frame too short for the header (and for Ethernet: the ideal switch
    // has no MAC layer) reaches the parser, whose error path drops it.
    assert!(process(&mut sw, 1, &[1, 2, 3]).is_empty());
    assert_eq!(sw.stats().dropped(SwitchDrop::IngressDrop), 2);
    assert_eq!(sw.stats().dropped(SwitchDrop::MacMalformed), 0);
}

#[test]
fn multicast_replicates_per_node_and_port_with_rid() {
    let mut sw = switch();
    let pre = sw.pre_mut();
    pre.mc_mgrp_create(3).unwrap();
    let n0 = pre.mc_node_create(10, &[1, 2, 4]).unwrap();
    let n1 = pre.mc_node_create(20, &[4]).unwrap();
    pre.mc_node_associate(3, n1).unwrap();
    pre.mc_node_associate(3, n0).unwrap();
    let out = process(&mut sw, 1, &pkt(1, 3, 0, 0));
    assert_eq!(
        out,
        vec![
            (1, vec![1, 3, 0, 0, 1, REP, 10, 0, 0xde, 0xad]),
            (2, vec![1, 3, 0, 0, 2, REP, 10, 0, 0xde, 0xad]),
            // Port 4 twice, in node-association order: rid 20, then 10.
            (4, vec![1, 3, 0, 0, 4, REP, 20, 0, 0xde, 0xad]),
            (4, vec![1, 3, 0, 0, 4, REP, 10, 0, 0xde, 0xad]),
        ]
    );
    // Unknown group: dropped and counted.
    assert!(process(&mut sw, 1, &pkt(1, 9, 0, 0)).is_empty());
    assert_eq!(sw.stats().dropped(SwitchDrop::McastGroupEmpty), 1);
}

#[test]
fn whole_group_writes_take_effect_and_same_port_two_rids_is_two_copies() {
    let mut sw = switch();
    let r = |port, rid| McReplica { port, rid };
    sw.pre_mut().mc_group_set(7, &[r(2, 1), r(3, 1)]).unwrap();
    sw.pre_mut().mc_group_set(7, &[r(6, 2), r(6, 3)]).unwrap();
    let out = process(&mut sw, 1, &pkt(1, 7, 0, 0));
    assert_eq!(
        out,
        vec![
            (6, vec![1, 7, 0, 0, 6, REP, 2, 0, 0xde, 0xad]),
            (6, vec![1, 7, 0, 0, 6, REP, 3, 0, 0xde, 0xad]),
        ]
    );
    sw.pre_mut().mc_group_delete(7);
    assert!(process(&mut sw, 1, &pkt(1, 7, 0, 0)).is_empty());
    assert_eq!(sw.stats().dropped(SwitchDrop::McastGroupEmpty), 1);
}

#[test]
fn a_port_the_switch_lacks_is_counted() {
    let mut sw = switch();
    assert!(process(&mut sw, 1, &pkt(0, PORTS as u8, 0, 0)).is_empty());
    assert_eq!(sw.stats().dropped(SwitchDrop::NoSuchPort), 1);
    sw.handle_frame(PORTS as u16, &pkt(0, 1, 0, 0), Instant::ZERO);
    assert_eq!(sw.stats().dropped(SwitchDrop::NoSuchPort), 2);
}

// ---- CPU port ----

#[test]
fn without_a_cpu_port_510_is_a_port_like_any_other() {
    let mut sw = Switch::new(Scripted::new(), SwitchConfig::ideal(511), Instant::ZERO).unwrap();
    assert_eq!(sw.cpu_port(), None);
    // The header's port byte cannot say 510: a replica can.
    sw.pre_mut()
        .mc_group_set(1, &[McReplica { port: 510, rid: 0 }])
        .unwrap();
    let out = process(&mut sw, 1, &pkt(1, 1, 0, 0));
    assert_eq!(
        out,
        vec![(510, vec![1, 1, 0, 0, 0xfe, REP, 0, 0, 0xde, 0xad])]
    );
    assert_eq!(sw.poll_packet_in(), None);
    // A packet-out has nowhere to enter.
    sw.handle_packet_out(&pkt(0, 2, 0, 0), Instant::ZERO);
    assert_eq!(sw.stats().dropped(SwitchDrop::NoSuchPort), 1);
}

#[test]
fn with_a_cpu_port_copies_there_are_packet_ins() {
    let mut config = SwitchConfig::ideal(4);
    config.cpu_port = Some(DEFAULT_CPU_PORT);
    let mut sw = Switch::new(Scripted::new(), config, Instant::ZERO).unwrap();
    sw.pre_mut()
        .mc_group_set(
            1,
            &[
                McReplica {
                    port: DEFAULT_CPU_PORT,
                    rid: 4,
                },
                McReplica { port: 3, rid: 5 },
            ],
        )
        .unwrap();
    let out = process(&mut sw, 1, &pkt(1, 1, 0, 0));
    assert_eq!(out, vec![(3, vec![1, 1, 0, 0, 3, REP, 5, 0, 0xde, 0xad])]);
    let packet_in = sw.poll_packet_in().expect("packet-in");
    assert_eq!(packet_in, vec![1, 1, 0, 0, 0xfe, REP, 4, 0, 0xde, 0xad]);
    assert_eq!(sw.stats().packet_in, 1);
    // A packet-out enters ingress on the CPU port.
    sw.handle_packet_out(&pkt(0, 2, 0, 0), Instant::ZERO);
    let mut out = Vec::new();
    sw.drain(Instant::ZERO, |p, f| out.push((p, f.to_vec())));
    assert_eq!(out, vec![(2, vec![0, 2, 0, 0, 2, 0, 0, 0, 0xde, 0xad])]);
}

// ---- resubmit ----

#[test]
fn resubmit_reparses_original_and_preserves_field_list() {
    let mut sw = switch();
    let out = process(&mut sw, 1, &pkt(3, 6, 0, 0));
    // Ingress saw RESUBMIT (it forwarded); egress sees NORMAL, as in bmv2.
    assert_eq!(out, vec![(6, vec![3, 6, 0, 0, 6, 0, 0, 0x5a, 0xde, 0xad])]);
    assert_eq!(sw.stats().ingress_passes, 2);
}

#[test]
fn endless_resubmit_is_bounded_and_counted() {
    let mut sw = switch();
    assert!(process(&mut sw, 1, &pkt(7, 0, 0, 0)).is_empty());
    assert_eq!(sw.stats().ingress_passes, 1 + u64::from(MAX_EXTRA_PASSES));
    assert_eq!(sw.stats().dropped(SwitchDrop::LoopLimit), 1);
}

// ---- clones ----

#[test]
fn i2e_clone_reparses_original_bytes_and_resets_user_metadata() {
    let mut sw = switch();
    sw.pre_mut().mirroring_add(5, session(9, 0, None)).unwrap();
    let out = process(&mut sw, 1, &pkt(4, 2, 5, 0x11));
    assert_eq!(
        out,
        vec![
            (2, vec![4, 2, 5, 0xee, 2, 0, 0xaa, 0x33, 0xde, 0xad]),
            // The clone shows the original c (0x11), not ingress's 0xee,
            // carries the preserved byte and lost what the parser set.
            (9, vec![4, 2, 5, 0x11, 9, IC, 0, 0x33, 0xde, 0xad]),
        ]
    );
}

#[test]
fn i2e_clone_comes_before_the_original_on_the_same_port_whatever_its_class() {
    let mut sw = switch();
    sw.pre_mut().mirroring_add(5, session(2, 7, None)).unwrap();
    let out = process(&mut sw, 1, &pkt(4, 2, 5, 0x11));
    assert_eq!(
        out,
        vec![
            (2, vec![4, 2, 5, 0x11, 2, IC, 0, 0x33, 0xde, 0xad]),
            (2, vec![4, 2, 5, 0xee, 2, 0, 0xaa, 0x33, 0xde, 0xad]),
        ]
    );
}

#[test]
fn a_clone_session_makes_one_copy_per_replica_with_its_rid() {
    let mut sw = switch();
    let r = |port, rid| McReplica { port, rid };
    let two = CloneSession {
        replicas: vec![r(9, 7), r(3, 1)],
        ..session(0, 0, None)
    };
    sw.pre_mut().mirroring_add(5, two).unwrap();
    // Op 9 clones I2E like op 4 and shows the egress rid in x2.
    let mut out = process(&mut sw, 1, &pkt(9, 2, 5, 0x11));
    out.sort();
    assert_eq!(
        out,
        vec![
            (2, vec![9, 2, 5, 0xee, 2, 0, 0, 0x33, 0xde, 0xad]),
            (3, vec![9, 2, 5, 0x11, 3, IC, 1, 0x33, 0xde, 0xad]),
            (9, vec![9, 2, 5, 0x11, 9, IC, 7, 0x33, 0xde, 0xad]),
        ]
    );
}

#[test]
fn clone_session_truncates_and_missing_session_is_counted() {
    let mut sw = switch();
    sw.pre_mut()
        .mirroring_add(5, session(9, 3, Some(4)))
        .unwrap();
    let out = process(&mut sw, 1, &pkt(4, 2, 5, 0x11));
    assert_eq!(out[0].1.len(), 10);
    assert_eq!(out[1], (9, vec![4, 2, 5, 0x11]));
    let out = process(&mut sw, 1, &pkt(9, 2, 6, 0x11));
    assert_eq!(out.len(), 1, "original still forwarded");
    assert_eq!(sw.stats().dropped(SwitchDrop::CloneSessionMissing), 1);
}

/// The bmv2 semantics of an egress-to-egress clone: the headers as egress
/// modified them (copied before the deparser, so its update shows once),
/// user metadata reset except the field list, instance type EGRESS_CLONE,
/// and a second egress pass on the session's port.
#[test]
fn e2e_clone_copies_the_packet_as_egress_left_it_with_fresh_metadata() {
    let mut sw = switch();
    sw.pre_mut().mirroring_add(5, session(8, 0, None)).unwrap();
    let out = process(&mut sw, 1, &pkt(10, 2, 5, 0));
    assert_eq!(
        out,
        vec![
            // The original: egress wrote c = 0xc1 and both user bytes; the
            // deparser added 0x10 to `a`.
            (2, vec![10, 0x12, 5, 0xc1, 2, 0, 0x99, 0x55, 0xde, 0xad]),
            // The clone keeps c = 0xc1, its deparser ran once (a = 0x12,
            // not 0x22 as a re-parse of the deparsed bytes would give),
            // the field-list byte survived and the other user byte did not.
            (8, vec![10, 0x12, 5, 0xc1, 8, EC, 0, 0x55, 0xde, 0xad]),
        ]
    );
    assert_eq!(sw.stats().egress_passes, 2);
}

#[test]
fn egress_drop_still_makes_e2e_clone() {
    let mut sw = switch();
    // The session's port comes before the original's: `drain` goes round
    // the ports again for the clone made on port 3.
    sw.pre_mut().mirroring_add(2, session(1, 0, None)).unwrap();
    let out = process(&mut sw, 1, &pkt(6, 3, 2, 0));
    // The clone went through egress again, on port 1.
    assert_eq!(out, vec![(1, vec![6, 3, 2, 0, 1, EC, 0, 0, 0xde, 0xad])]);
    assert_eq!(sw.stats().dropped(SwitchDrop::EgressDrop), 1);
}

#[test]
fn endless_e2e_clones_are_bounded_and_counted() {
    let mut sw = switch();
    sw.pre_mut().mirroring_add(4, session(3, 0, None)).unwrap();
    let out = process(&mut sw, 1, &pkt(11, 3, 4, 0));
    // The original and one clone per allowed generation.
    assert_eq!(out.len(), 1 + MAX_EXTRA_PASSES as usize);
    assert_eq!(sw.stats().dropped(SwitchDrop::LoopLimit), 1);
}

// ---- recirculate, truncate ----

#[test]
fn recirculate_reparses_deparsed_bytes_with_the_field_list() {
    let mut sw = switch();
    let out = process(&mut sw, 1, &pkt(5, 3, 0, 0x10));
    // The first pass wrote c + 1 and x0..x3 before recirculating; the
    // second ingress saw RECIRC (b) and the preserved byte (no second
    // recirculation), then egress overwrote x0..x3.
    assert_eq!(
        out,
        vec![(3, vec![5, 3, RC, 0x11, 3, 0, 0, 0x44, 0xde, 0xad])]
    );
    assert_eq!(sw.stats().ingress_passes, 2);
    assert_eq!(sw.stats().egress_passes, 2);
}

#[test]
fn truncate_cuts_output() {
    let mut sw = switch();
    let out = process(&mut sw, 1, &pkt(8, 4, 3, 0));
    assert_eq!(out, vec![(4, vec![8, 4, 3])]);
}

// ---- the ideal configuration ----

#[test]
fn ideal_queues_send_everything_at_once_in_order() {
    let mut sw = switch();
    let now = Instant::from_micros(3);
    for i in 0..1000u16 {
        let mut f = pkt(0, 5, 0, 0);
        f.extend_from_slice(&i.to_be_bytes());
        f.resize(1500, 0);
        sw.handle_frame(1, &f, now);
    }
    let mut seen = Vec::new();
    sw.drain(now, |p, f| {
        assert_eq!(p, 5);
        seen.push(u16::from_be_bytes([f[10], f[11]]));
    });
    assert_eq!(seen, (0..1000).collect::<Vec<_>>());
    let tm_drops: u64 = [
        SwitchDrop::LossyTailDrop,
        SwitchDrop::EgressLimit,
        SwitchDrop::HeadroomOverflow,
        SwitchDrop::WatchdogDrop,
    ]
    .iter()
    .map(|&r| sw.stats().dropped(r))
    .sum();
    assert_eq!(tm_drops, 0);
    sw.conservation().unwrap();
    assert_eq!(sw.ledger().ports[1].priorities[0].forwarded, 1000);
}

#[test]
fn mac_ports_consume_pause_frames_and_ideal_ports_parse_them() {
    // An 802.3x PAUSE frame.
    let mut pause = vec![
        0x01, 0x80, 0xc2, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0x88, 0x08, 0, 1, 0, 5,
    ];
    pause.resize(60, 0);
    let mut sw = switch();
    sw.handle_frame(1, &pause, Instant::ZERO);
    // To the parser: op 1 (multicast) to group 0x80, which does not exist.
    assert_eq!(sw.stats().dropped(SwitchDrop::McastGroupEmpty), 1);
    let mut sw = Switch::new(Scripted::new(), SwitchConfig::with_ports(4), Instant::ZERO).unwrap();
    sw.handle_frame(1, &pause, Instant::ZERO);
    assert_eq!(sw.stats().ingress_passes, 0);
    assert_eq!(sw.mac_stats(1).unwrap().rx_pause_frames, 1);
}

// ---- LLDP / DCBX ----

mod lldp {
    use super::*;
    use crate::dcbx::{AgentConfig, DcbParams, DcbxEvent};
    use crate::wire::ethernet::EthernetAddress;
    use crate::wire::lldp::{self, ChassisId, LldpRepr, PortId};

    /// Two MAC ports running LLDP, as the daemon's switch.
    fn switch() -> Switch<Scripted> {
        let mut cfg = SwitchConfig::with_ports(2);
        cfg.cpu_port = None;
        let mut sw = Switch::new(Scripted::new(), cfg, Instant::ZERO).unwrap();
        let agents: Vec<_> = (0..2u8)
            .map(|p| {
                Some(AgentConfig::new(
                    EthernetAddress([2, 0xaa, 0, 0, 0, p + 1]),
                    ChassisId::Local("leaf1".into()),
                    PortId::Local(p.to_string()),
                    DcbParams::default(),
                ))
            })
            .collect();
        sw.handle_dcbx_config(&agents, Instant::ZERO);
        sw
    }

    /// The LLDPDUs `port` sends at `now`.
    fn sent(sw: &mut Switch<Scripted>, port: u16, now: Instant) -> Vec<LldpRepr> {
        sw.handle_timeout(now);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        while sw.poll_transmit(port, now, &mut buf).is_some() {
            out.push(lldp::parse_frame(&buf).unwrap().expect("only LLDP is sent"));
        }
        out
    }

    fn host_frame(ttl_s: u16) -> Vec<u8> {
        let mac = [2, 0, 0, 0, 0, 9];
        let repr = LldpRepr {
            chassis: ChassisId::Mac(mac),
            port: PortId::Mac(mac),
            ttl_s,
            port_description: None,
            system_name: None,
            ets_config: None,
            ets_recommendation: None,
            pfc: None,
            app: None,
        };
        let mut f = Vec::new();
        lldp::emit_frame(EthernetAddress(mac), &repr, &mut f);
        f
    }

    #[test]
    fn every_port_sends_at_start_then_every_tx_interval() {
        let mut sw = switch();
        for port in 0..2 {
            let at_start = sent(&mut sw, port, Instant::ZERO);
            assert_eq!(at_start.len(), 1, "port {port}");
            assert_eq!(at_start[0].port, PortId::Local(port.to_string()));
            assert_eq!(at_start[0].ttl_s, 121);
            assert_eq!(at_start[0].pfc.unwrap().enable, 1 << 3);
        }
        assert_eq!(sw.poll_timeout(), Some(Instant::from_secs(30)));
        assert!(sent(&mut sw, 0, Instant::from_secs(29)).is_empty());
        assert_eq!(sent(&mut sw, 0, Instant::from_secs(30)).len(), 1);
        assert_eq!(sent(&mut sw, 1, Instant::from_secs(30)).len(), 1);
        assert_eq!(sw.dcbx(0).unwrap().stats().tx_frames, 2);
    }

    #[test]
    fn a_new_neighbour_gets_fast_start_on_its_port_only() {
        let mut sw = switch();
        for port in 0..2 {
            let _ = sent(&mut sw, port, Instant::ZERO);
        }
        let t = Instant::from_secs(5);
        sw.handle_frame(0, &host_frame(121), t);
        assert!(matches!(
            sw.poll_event(),
            Some(SwitchEvent::Dcbx {
                port: 0,
                event: DcbxEvent::NeighborAdded { .. }
            })
        ));
        // One frame at once, txFastInit more msgFastTx apart (802.1AB
        // 9.2.9 txFast), then back to msgTxInterval.
        for s in 5..10 {
            assert_eq!(sent(&mut sw, 0, Instant::from_secs(s)).len(), 1, "at {s} s");
        }
        assert!(sent(&mut sw, 0, Instant::from_secs(38)).is_empty());
        assert!(sent(&mut sw, 1, Instant::from_secs(9)).is_empty());
        assert_eq!(sent(&mut sw, 0, Instant::from_secs(39)).len(), 1);
        let n = sw.dcbx(0).unwrap().neighbor().unwrap();
        assert_eq!(n.lldp.chassis, ChassisId::Mac([2, 0, 0, 0, 0, 9]));
        assert!(sw.dcbx(1).unwrap().neighbor().is_none());
    }

    #[test]
    fn a_down_port_sends_nothing_and_does_not_hold_the_timer() {
        let mut sw = switch();
        for port in 0..2 {
            let _ = sent(&mut sw, port, Instant::ZERO);
        }
        let t = Instant::from_secs(1);
        sw.set_port_oper(0, Some(LinkDown::AdminDown), t);
        sw.set_port_oper(0, Some(LinkDown::AdminDown), t);
        sw.set_port_oper(7, Some(LinkDown::Gone), t);
        // Set down, then deleted: the new cause is reported, but the port
        // went down once.
        sw.set_port_oper(0, Some(LinkDown::Gone), t);
        for cause in [LinkDown::AdminDown, LinkDown::Gone] {
            assert_eq!(
                sw.poll_event(),
                Some(SwitchEvent::PortOper {
                    port: 0,
                    down: Some(cause)
                }),
                "a repeat and an unknown port change nothing"
            );
        }
        assert_eq!(sw.poll_event(), None);
        assert_eq!(sw.port_oper_changes(0), Some((1, 0)));
        assert_eq!(sw.port_link_down(0), Some(LinkDown::Gone));
        assert_eq!(sw.port_oper_up(0), Some(false));
        assert_eq!(sw.port_oper_up(7), None);
        // Port 0's agent is overdue at 30 s but sends nothing; port 1's does.
        assert!(sent(&mut sw, 0, Instant::from_secs(31)).is_empty());
        assert_eq!(sent(&mut sw, 1, Instant::from_secs(31)).len(), 1);
        assert!(
            sw.poll_timeout().is_none_or(|d| d > Instant::from_secs(31)),
            "a down port's overdue agent would make the driver spin"
        );
        sw.set_port_oper(0, None, Instant::from_secs(32));
        assert_eq!(
            sw.poll_event(),
            Some(SwitchEvent::PortOper {
                port: 0,
                down: None
            })
        );
        assert_eq!(sent(&mut sw, 0, Instant::from_secs(32)).len(), 1);
        assert_eq!(sw.port_oper_changes(0), Some((1, 1)));
    }

    #[test]
    fn received_lldp_is_consumed_never_forwarded() {
        let mut sw = switch();
        for port in 0..2 {
            let _ = sent(&mut sw, port, Instant::ZERO);
        }
        sw.handle_dcbx_config(&[None, None], Instant::ZERO);
        // With or without an agent on the port, nothing goes to the pipeline.
        let mut with_agent = switch();
        for s in [&mut sw, &mut with_agent] {
            let t = Instant::from_micros(1);
            s.handle_frame(1, &host_frame(121), t);
            let mut out = Vec::new();
            s.drain(t, |p, f| {
                if !lldp::is_lldp(f) || f[6..12] == [2, 0, 0, 0, 0, 9] {
                    out.push(p);
                }
            });
            assert!(out.is_empty(), "forwarded to {out:?}");
            assert_eq!(s.stats().ingress_passes, 0);
            assert_eq!(s.mac_stats(1).unwrap().rx_lldp_frames, 1);
        }
        assert!(sw.dcbx(1).is_none());
        assert!(with_agent.dcbx(1).unwrap().neighbor().is_some());
    }
}
