//! `SwitchBackend` on a real switch core running `roce_switch.p4` on its own
//! thread (as the daemon runs it): a fabric configuration becomes TM
//! settings and fabric-owned table contents in one dataplane job, counters
//! come from the TM and the program together, and a configuration the
//! program cannot take changes nothing.

mod fabric_harness;

use std::sync::mpsc::Sender;

use control::fabric::config::*;
use control::fabric::{BackendError, FabricBackend};
use dataplane::driver::Command;
use dataplane::roce::{PROGRAM_INFO, Program};
use dataplane::time::Instant;
use fabric_harness::{on_switch, switch};
use p4_target::pipeline::Pipeline;
use p4_target::runtime::{ActionCall, EntryAction, FieldMatch, RuntimeApi, TableEntry};

fn entries(tx: &Sender<Command<Program>>, table: &'static str) -> Vec<TableEntry> {
    on_switch(tx, move |sw, _| {
        let id = PROGRAM_INFO.table_by_name(table).unwrap().id;
        sw.pipeline().runtime().table_entries(id).unwrap()
    })
}

fn call(name: &str, params: &[u128]) -> EntryAction {
    EntryAction::Direct(ActionCall::new(
        PROGRAM_INFO.action_by_name(name).unwrap().id,
        params,
    ))
}

fn port(n: u16, trust: Trust) -> PortConfig {
    PortConfig {
        port: n,
        speed_bps: 25_000_000_000,
        mtu_bytes: 4200,
        cable_length_m: 50,
        trust: Some(trust),
        pfc_priorities: vec![3],
    }
}

fn config() -> FabricConfig {
    let mut c = FabricConfig {
        ports: vec![port(0, Trust::Dscp), port(1, Trust::Pcp)],
        ecn: vec![EcnProfile {
            port: 1,
            priority: 3,
            enabled: true,
            kmin_bytes: 10_000,
            kmax_bytes: 100_000,
            pmax: 0.5,
        }],
        ..Default::default()
    };
    c.qos_maps.dscp_to_priority[46] = 5;
    c.qos_maps.default_priority = 1;
    c
}

#[test]
fn a_configuration_is_tm_settings_and_table_contents_in_one_job() {
    let (backend, tx) = switch();
    backend.apply(&config()).unwrap();

    let trust = entries(&tx, "port_trust");
    assert_eq!(trust.len(), 2);
    assert_eq!(trust[1].matches, vec![Some(FieldMatch::Exact(1))]);
    assert_eq!(trust[1].action, call("trust_pcp", &[]));
    let dscp = entries(&tx, "dscp_to_priority");
    assert_eq!(dscp.len(), 64);
    assert_eq!(dscp[46].action, call("set_priority", &[5]));
    assert_eq!(dscp[26].action, call("set_priority", &[3]));
    let red = entries(&tx, "ecn_red");
    assert_eq!(red.len(), 1);
    assert_eq!(
        red[0].matches,
        vec![Some(FieldMatch::Exact(1)), Some(FieldMatch::Exact(3))]
    );
    assert_eq!(red[0].action, call("set_red", &[10_000, 100_000, 32_768]));
    let (default, tm) = on_switch(&tx, |sw, _| {
        let id = PROGRAM_INFO.table_by_name("dscp_to_priority").unwrap().id;
        (
            sw.pipeline().runtime().table_default(id).unwrap(),
            sw.tm().config().clone(),
        )
    });
    assert_eq!(EntryAction::Direct(default), call("set_priority", &[1]));
    assert_eq!(tm.ports[0].speed_bps, 25_000_000_000);
    assert_eq!(tm.ports[1].pfc_enable, 1 << 3);
    assert_eq!(
        tm.ports[2].speed_bps, 100_000_000_000,
        "unconfigured port keeps its start"
    );

    // Counters: the program's per-(port, priority) counters and the TM's
    // in one list, for every port.
    let c = backend.counters(&[]);
    assert_eq!(c.len(), 4 * 8);
    assert!(c.iter().all(|c| c.rx_packets == 0 && c.drops == 0));
    assert_eq!(backend.counters(&[1]).len(), 8);
}

#[test]
fn what_the_program_cannot_do_is_refused_and_changes_nothing() {
    let (backend, tx) = switch();
    backend.apply(&config()).unwrap();
    let before = (entries(&tx, "port_trust"), entries(&tx, "dscp_to_priority"));

    let mut bad = config();
    bad.ports[1].trust = Some(Trust::None);
    bad.qos_maps.dscp_to_priority[46] = 7;
    match backend.apply(&bad) {
        Err(BackendError::Unsupported(m)) => assert!(m.contains("ports[1].trust"), "{m}"),
        other => panic!("{other:?}"),
    }
    let mut bad = config();
    bad.ports.push(port(9, Trust::Dscp));
    match backend.apply(&bad) {
        Err(BackendError::Unsupported(m)) => assert!(m.contains("port 9"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        (entries(&tx, "port_trust"), entries(&tx, "dscp_to_priority")),
        before
    );
}

/// An LLDPDU from a host NIC advertising PFC and RoCE on `prio`.
fn host_lldp(mac: [u8; 6], prio: u8, willing: bool) -> Vec<u8> {
    use dataplane::wire::ethernet::EthernetAddress;
    use dataplane::wire::lldp::{self, AppEntry, ChassisId, LldpRepr, PfcConfigRepr, PortId};
    let repr = LldpRepr {
        chassis: ChassisId::Mac(mac),
        port: PortId::Mac(mac),
        ttl_s: 120,
        port_description: None,
        system_name: Some("host".into()),
        ets_config: None,
        ets_recommendation: None,
        pfc: Some(PfcConfigRepr {
            willing,
            mbc: false,
            cap: 8,
            enable: 1 << prio,
        }),
        app: Some(vec![AppEntry::rocev2(prio)]),
    };
    let mut f = Vec::new();
    lldp::emit_frame(EthernetAddress(mac), &repr, &mut f);
    f
}

#[test]
fn dcbx_shows_each_port_against_its_neighbour() {
    let (backend, tx) = switch();
    assert!(backend.dcbx().is_empty(), "DCBX is off by default");
    let mut cfg = config();
    cfg.dcbx = DcbxConfig {
        enabled: true,
        system_name: "leaf1".into(),
        tx_interval_s: 0,
    };
    backend.apply(&cfg).unwrap();
    // Port 0's host agrees (priority 3), port 1's insists on priority 4.
    on_switch(&tx, |sw, _| {
        sw.handle_frame(
            0,
            &host_lldp([2, 0, 0, 0, 0, 1], 3, false),
            Instant::from_secs(1),
        );
        sw.handle_frame(
            1,
            &host_lldp([2, 0, 0, 0, 0, 2], 4, false),
            Instant::from_secs(1),
        );
    });
    let ports: Vec<_> = backend
        .dcbx()
        .iter()
        .map(|(p, a)| control::fabric::convert::dcbx_status_to(*p, a))
        .collect();
    assert_eq!(
        ports.iter().map(|p| p.port).collect::<Vec<_>>(),
        vec![0, 1],
        "only fabric ports run LLDP"
    );
    assert_eq!(ports[0].local_pfc_enable, 1 << 3);
    assert_eq!(ports[0].local_roce_priority, Some(3));
    assert_eq!(ports[0].neighbor_system_name, "host");
    assert_eq!(ports[0].mismatch, "none");
    assert_eq!(ports[1].neighbor_pfc_enable, Some(1 << 4));
    assert_eq!(ports[1].neighbor_roce_priority, Some(4));
    assert_eq!(ports[1].mismatch, "pfc,app");
    // The switch said so on its event stream too.
    let events = on_switch(&tx, |sw, _| {
        std::iter::from_fn(|| sw.poll_event()).collect::<Vec<_>>()
    });
    assert!(events.iter().any(|e| matches!(
        e,
        dataplane::switch::SwitchEvent::Dcbx {
            port: 1,
            event: dataplane::dcbx::DcbxEvent::MismatchChanged { mismatch }
        } if mismatch.pfc && mismatch.app
    )));

    // Off again: the agents stop.
    cfg.dcbx.enabled = false;
    backend.apply(&cfg).unwrap();
    assert!(backend.dcbx().is_empty());
}
