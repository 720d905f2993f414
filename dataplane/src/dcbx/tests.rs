use super::*;

const SWITCH_MAC: EthernetAddress = EthernetAddress([0x02, 0xaa, 0, 0, 0, 1]);
const HOST_MAC: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 1]);

fn switch_port() -> PortAgent {
    let mut c = AgentConfig::new(
        SWITCH_MAC,
        ChassisId::Local("leaf1".into()),
        PortId::Local("1".into()),
        DcbParams::default(),
    );
    c.system_name = Some("leaf1".into());
    PortAgent::new(c, Instant::ZERO)
}

/// A host whose administrator put RoCE and PFC on priority 4.
fn host(willing: bool) -> PortAgent {
    let admin = DcbParams {
        pfc_enable: 1 << 4,
        app: vec![AppEntry::rocev2(4)],
        ..DcbParams::default()
    };
    let mut c = AgentConfig::new(
        HOST_MAC,
        ChassisId::Mac(HOST_MAC.0),
        PortId::Mac(HOST_MAC.0),
        admin,
    );
    c.willing = willing;
    PortAgent::new(c, Instant::ZERO)
}

/// Moves every frame `a` may send at `now` to `b`.
fn deliver(a: &mut PortAgent, b: &mut PortAgent, now: Instant) -> usize {
    let mut buf = Vec::new();
    let mut n = 0;
    while a.poll_transmit(now, &mut buf).is_some() {
        b.handle_frame(&buf, now);
        n += 1;
    }
    n
}

fn events(a: &mut PortAgent) -> Vec<DcbxEvent> {
    std::iter::from_fn(|| a.poll_event()).collect()
}

// ---- transmission ----

#[test]
fn first_frame_at_start_then_every_tx_interval() {
    let mut sw = switch_port();
    let mut buf = Vec::new();
    assert!(sw.poll_transmit(Instant::ZERO, &mut buf).is_some());
    assert!(lldp::is_lldp(&buf));
    assert_eq!(sw.poll_transmit(Instant::from_secs(29), &mut buf), None);
    assert_eq!(sw.poll_timeout(), Some(Instant::from_secs(30)));
    assert!(sw.poll_transmit(Instant::from_secs(30), &mut buf).is_some());
    let repr = lldp::parse_frame(&buf).unwrap().unwrap();
    assert_eq!(repr.ttl_s, 121, "msgTxInterval x msgTxHold + 1");
    assert_eq!(repr.pfc.unwrap().enable, 1 << 3);
    assert!(!repr.pfc.unwrap().willing);
    assert_eq!(repr.app.unwrap(), DcbParams::default().app);
}

#[test]
fn a_new_neighbour_gets_fast_start() {
    let mut sw = switch_port();
    let mut h = host(false);
    let mut buf = Vec::new();
    assert!(sw.poll_transmit(Instant::ZERO, &mut buf).is_some());
    deliver(&mut h, &mut sw, Instant::from_secs(5));
    // txFastInit frames msgFastTx apart, then the normal interval.
    let mut times = Vec::new();
    let mut t = Instant::from_secs(5);
    while t < Instant::from_secs(40) {
        if sw.poll_transmit(t, &mut buf).is_some() {
            times.push(t.as_nanos() / 1_000_000_000);
        }
        t += Duration::from_millis(100);
    }
    assert_eq!(times, vec![5, 6, 7, 8, 9, 39]);
}

#[test]
fn credits_bound_a_burst_of_local_changes() {
    let mut sw = switch_port();
    let mut buf = Vec::new();
    let mut sent = 0;
    for i in 0..10u8 {
        let mut c = sw.config().clone();
        c.admin.pfc_enable = 1 << (i % 8);
        sw.handle_config(c, Instant::ZERO);
        if sw.poll_transmit(Instant::ZERO, &mut buf).is_some() {
            sent += 1;
        }
    }
    assert_eq!(sent, usize::from(TX_CREDIT_MAX));
    assert!(sw.poll_transmit(Instant::from_secs(1), &mut buf).is_some());
}

// ---- neighbours and matching ----

#[test]
fn a_willing_host_adopts_the_switch_and_then_matches() {
    let mut sw = switch_port();
    let mut h = host(true);
    assert_eq!(h.operational().rocev2_priority(), Some(4));
    deliver(&mut sw, &mut h, Instant::ZERO);
    assert!(h.adopted());
    assert_eq!(h.operational().pfc_enable, 1 << 3);
    assert_eq!(h.operational().rocev2_priority(), Some(3));
    assert_eq!(h.operational().dscp_for(3), 26);
    assert!(events(&mut h).contains(&DcbxEvent::Adopted {
        pfc_enable: 1 << 3,
        rocev2_priority: Some(3)
    }));
    assert!(!h.mismatch().any());
    // The host advertises what it now runs; the switch sees a match.
    deliver(&mut h, &mut sw, Instant::from_millis(1));
    let n = sw.neighbor().unwrap();
    assert_eq!(n.lldp.chassis, ChassisId::Mac(HOST_MAC.0));
    assert!(n.willing());
    assert_eq!(sw.mismatch(), Mismatch::default());
}

#[test]
fn a_host_that_is_not_willing_is_a_mismatch_on_both_sides() {
    let mut sw = switch_port();
    let mut h = host(false);
    deliver(&mut sw, &mut h, Instant::ZERO);
    deliver(&mut h, &mut sw, Instant::ZERO);
    assert!(!h.adopted());
    let m = sw.mismatch();
    assert!(m.pfc && m.app && !m.ets, "{m:?}");
    assert_eq!(m.describe(), "pfc,app");
    assert!(events(&mut sw).contains(&DcbxEvent::MismatchChanged { mismatch: m }));
    assert_eq!(h.mismatch(), m);
}

#[test]
fn both_willing_the_lower_mac_keeps_its_own() {
    let mut a = host(true); // 02:00:00:00:00:01
    let mut c = a.config().clone();
    c.mac = EthernetAddress([0x02, 0, 0, 0, 0, 9]);
    c.chassis = ChassisId::Mac(c.mac.0);
    c.admin = DcbParams::default();
    let mut b = PortAgent::new(c, Instant::ZERO);
    deliver(&mut a, &mut b, Instant::ZERO);
    deliver(&mut b, &mut a, Instant::ZERO);
    assert!(!a.adopted(), "lower MAC keeps its own");
    assert!(b.adopted());
    assert_eq!(b.operational().pfc_enable, 1 << 4);
}

#[test]
fn the_neighbour_ages_out_and_a_zero_ttl_removes_it() {
    let mut sw = switch_port();
    let mut h = host(false);
    deliver(&mut h, &mut sw, Instant::ZERO);
    assert!(sw.mismatch().any());
    events(&mut sw);
    sw.handle_timeout(Instant::from_secs(120));
    assert!(sw.neighbor().is_some());
    sw.handle_timeout(Instant::from_secs(121));
    assert!(sw.neighbor().is_none());
    assert_eq!(sw.stats().ageouts, 1);
    assert_eq!(
        events(&mut sw),
        vec![
            DcbxEvent::NeighborRemoved,
            DcbxEvent::MismatchChanged {
                mismatch: Mismatch::default()
            }
        ]
    );
    let mut r = h.lldpdu();
    deliver(&mut h, &mut sw, Instant::from_secs(200));
    r.ttl_s = 0;
    sw.handle_lldpdu(HOST_MAC, r, Instant::from_secs(201));
    assert!(sw.neighbor().is_none());
}

#[test]
fn garbage_is_counted_not_fatal() {
    let mut sw = switch_port();
    let mut frame = vec![0u8; 60];
    frame[..6].copy_from_slice(&lldp::NEAREST_BRIDGE.0);
    frame[12..14].copy_from_slice(&[0x88, 0xcc]);
    sw.handle_frame(&frame, Instant::ZERO);
    sw.handle_frame(&frame[..10], Instant::ZERO);
    assert_eq!(sw.stats().rx_discarded, 2);
    assert!(sw.neighbor().is_none());
}
