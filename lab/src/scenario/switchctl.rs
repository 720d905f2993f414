//! Programming a running `roceswitch` for a lab: L3 routes (P4Runtime) and
//! fabric QoS (ports, ECN), and reading its per-(port, priority) counters.
//!
//! Contract: [`SwitchCtl::connect`] dials the daemon's gRPC address
//! (`unix:/path` works across namespaces), becomes primary controller
//! (arbitration on StreamChannel, device 1, election id 1, stream held
//! open for the controller's lifetime), then writes with that election id.
//! Table, action and profile ids come from the compiled program's info
//! ([`dataplane::roce::PROGRAM_INFO`]) by name, so a renumbered P4Info does
//! not break us. Forwarding is routed: a router MAC in `my_station`, /32
//! routes to next-hop ids, next hops as action-selector members, ECMP as
//! groups (P4Runtime spec §9.2 action profiles). Blocking API: each call
//! runs on the controller's own single-threaded tokio runtime.

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use proto::p4::v1 as pb;
use proto::p4::v1::p4_runtime_client::P4RuntimeClient;
use proto::roceswitch::fabric::v1 as fb;
use proto::roceswitch::fabric::v1::fabric_qos_client::FabricQosClient;
use tokio::sync::mpsc;
use tonic::transport::Channel;

use super::EcnSetting;

/// The P4Runtime device id `roceswitch` serves by default.
pub const DEVICE_ID: u64 = 1;
/// The MAC every lab switch routes for (hosts send to it, switches send to
/// each other with it).
pub const ROUTER_MAC: [u8; 6] = [0x02, 0x52, 0x53, 0x00, 0x00, 0x01];

/// A next hop: egress port and the MAC to rewrite the destination to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextHop {
    /// Egress port number.
    pub port: u16,
    /// Destination MAC on that link.
    pub dst_mac: [u8; 6],
}

/// Per-(port, priority) counters as the fabric service reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrioCounters {
    /// Port.
    pub port: u32,
    /// Priority.
    pub priority: u32,
    /// Packets sent.
    pub tx_packets: u64,
    /// Packets dropped.
    pub drops: u64,
    /// PFC frames sent for this priority.
    pub pfc_tx_frames: u64,
    /// PFC frames received for this priority.
    pub pfc_rx_frames: u64,
    /// Packets marked CE.
    pub ecn_marked: u64,
    /// Watchdog storms (deadlocks) detected on this queue.
    pub watchdog_storms: u64,
    /// Current queue depth, bytes.
    pub queue_depth_bytes: u64,
}

/// A PFC watchdog event from the switch's fabric event stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchdogEvent {
    /// (port, priority) entered the stormed state.
    Storm {
        /// Port.
        port: u32,
        /// Priority.
        priority: u32,
    },
    /// (port, priority) was restored to normal operation.
    Restore {
        /// Port.
        port: u32,
        /// Priority.
        priority: u32,
    },
}

/// PFC watchdog settings for [`SwitchCtl::set_watchdog`] (R-WD-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchdogSetting {
    /// Storm detection time, ms.
    pub detection_time_ms: u32,
    /// Restoration time, ms (0 = never).
    pub restoration_time_ms: u32,
    /// Poll interval, ms.
    pub poll_interval_ms: u32,
    /// Drop (true) or forward (false) while stormed.
    pub drop: bool,
}

/// A primary-controller session with one switch.
pub struct SwitchCtl {
    rt: tokio::runtime::Runtime,
    p4rt: P4RuntimeClient<Channel>,
    fabric: FabricQosClient<Channel>,
    // Keeps the StreamChannel (and so our primacy) open.
    _stream_tx: mpsc::Sender<pb::StreamMessageRequest>,
    election_id: u128,
    next_member: u32,
    events: Option<tonic::Streaming<fb::Event>>,
}

fn u128_wire(v: u128) -> pb::Uint128 {
    pb::Uint128 {
        high: (v >> 64) as u64,
        low: v as u64,
    }
}

fn table_id(name: &str) -> Result<u32> {
    dataplane::roce::PROGRAM_INFO
        .tables
        .iter()
        .find(|t| t.name == name || t.name.ends_with(&format!(".{name}")))
        .map(|t| t.id)
        .ok_or_else(|| anyhow!("the switch program has no table {name:?}"))
}

fn action_id(name: &str) -> Result<u32> {
    dataplane::roce::PROGRAM_INFO
        .actions
        .iter()
        .find(|a| a.name == name || a.name.ends_with(&format!(".{name}")))
        .map(|a| a.id)
        .ok_or_else(|| anyhow!("the switch program has no action {name:?}"))
}

fn profile_id(name: &str) -> Result<u32> {
    dataplane::roce::PROGRAM_INFO
        .action_profiles
        .iter()
        .find(|a| a.name == name || a.name.ends_with(&format!(".{name}")))
        .map(|a| a.id)
        .ok_or_else(|| anyhow!("the switch program has no action profile {name:?}"))
}

fn key_id(table: &str, key: &str) -> Result<u32> {
    let t = dataplane::roce::PROGRAM_INFO
        .tables
        .iter()
        .find(|t| t.name == table || t.name.ends_with(&format!(".{table}")))
        .ok_or_else(|| anyhow!("the switch program has no table {table:?}"))?;
    t.keys
        .iter()
        .find(|k| k.name == key || k.name.ends_with(&format!(".{key}")))
        .map(|k| k.id)
        .ok_or_else(|| anyhow!("table {table:?} has no key {key:?}"))
}

fn param_id(action: &str, p: &str) -> Result<u32> {
    let a = dataplane::roce::PROGRAM_INFO
        .actions
        .iter()
        .find(|a| a.name == action || a.name.ends_with(&format!(".{action}")))
        .ok_or_else(|| anyhow!("the switch program has no action {action:?}"))?;
    a.params
        .iter()
        .find(|x| x.name == p)
        .map(|x| x.id)
        .ok_or_else(|| anyhow!("action {action:?} has no parameter {p:?}"))
}

fn exact(field_id: u32, value: &[u8]) -> pb::FieldMatch {
    pb::FieldMatch {
        field_id,
        field_match_type: Some(pb::field_match::FieldMatchType::Exact(
            pb::field_match::Exact {
                value: value.to_vec(),
            },
        )),
    }
}

fn insert(e: pb::entity::Entity) -> pb::Update {
    update(pb::update::Type::Insert, e)
}

fn update(kind: pb::update::Type, e: pb::entity::Entity) -> pb::Update {
    pb::Update {
        r#type: kind as i32,
        entity: Some(pb::Entity { entity: Some(e) }),
    }
}

/// The `ipv4_lpm` entry `dst/32 → set_nexthop_id(nexthop_id)`.
fn ipv4_host_route(dst: Ipv4Addr, nexthop_id: u16) -> Result<pb::TableEntry> {
    Ok(pb::TableEntry {
        table_id: table_id("ipv4_lpm")?,
        r#match: vec![pb::FieldMatch {
            field_id: key_id("ipv4_lpm", "dst_addr")?,
            field_match_type: Some(pb::field_match::FieldMatchType::Lpm(pb::field_match::Lpm {
                value: dst.octets().to_vec(),
                prefix_len: 32,
            })),
        }],
        action: Some(pb::TableAction {
            r#type: Some(pb::table_action::Type::Action(pb::Action {
                action_id: action_id("set_nexthop_id")?,
                params: vec![param(
                    param_id("set_nexthop_id", "nexthop_id")?,
                    &nexthop_id.to_be_bytes(),
                )],
            })),
        }),
        ..Default::default()
    })
}

fn param(id: u32, value: &[u8]) -> pb::action::Param {
    pb::action::Param {
        param_id: id,
        value: value.to_vec(),
    }
}

impl SwitchCtl {
    /// Connects to `addr` (retrying for up to `wait` while the daemon
    /// starts, giving up early once `stop` is set) and becomes primary
    /// controller.
    pub fn connect(addr: &str, wait: Duration, stop: &AtomicBool) -> Result<SwitchCtl> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("tokio runtime")?;
        let deadline = std::time::Instant::now() + wait;
        let channel = loop {
            match rt.block_on(control::client::connect(addr)) {
                Ok(c) => break c,
                Err(_) if stop.load(Ordering::SeqCst) => bail!("interrupted"),
                Err(e) if std::time::Instant::now() < deadline => {
                    tracing::debug!(error = %e, addr, "switch not up yet");
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => return Err(e).with_context(|| format!("connecting to {addr}")),
            }
        };
        let mut p4rt = P4RuntimeClient::new(channel.clone());
        let fabric = FabricQosClient::new(channel);
        let election_id = 1u128;
        let (tx, rx) = mpsc::channel(8);
        let arbitration = pb::StreamMessageRequest {
            update: Some(pb::stream_message_request::Update::Arbitration(
                pb::MasterArbitrationUpdate {
                    device_id: DEVICE_ID,
                    election_id: Some(u128_wire(election_id)),
                    ..Default::default()
                },
            )),
        };
        rt.block_on(async {
            tx.send(arbitration)
                .await
                .map_err(|_| anyhow!("stream closed"))?;
            let mut stream = p4rt
                .stream_channel(tokio_stream::wrappers::ReceiverStream::new(rx))
                .await
                .context("StreamChannel")?
                .into_inner();
            loop {
                let msg = tokio::time::timeout(Duration::from_secs(5), stream.message())
                    .await
                    .context("no arbitration reply within 5 s")?
                    .context("StreamChannel")?;
                match msg.and_then(|m| m.update) {
                    Some(pb::stream_message_response::Update::Arbitration(a)) => {
                        let code = a.status.map(|s| s.code).unwrap_or(0);
                        if code != 0 {
                            bail!("not primary controller of {addr} (status {code})");
                        }
                        break;
                    }
                    Some(_) => continue,
                    None => bail!("StreamChannel ended before arbitration"),
                }
            }
            // Keep draining the stream so the server never blocks on us.
            tokio::spawn(async move { while let Ok(Some(_)) = stream.message().await {} });
            Ok(())
        })?;
        Ok(SwitchCtl {
            rt,
            p4rt,
            fabric,
            _stream_tx: tx,
            election_id,
            next_member: 1,
            events: None,
        })
    }

    fn write(&mut self, updates: Vec<pb::Update>) -> Result<()> {
        let req = pb::WriteRequest {
            device_id: DEVICE_ID,
            election_id: Some(u128_wire(self.election_id)),
            updates,
            atomicity: pb::write_request::Atomicity::ContinueOnError as i32,
            ..Default::default()
        };
        self.rt
            .block_on(self.p4rt.write(req))
            .map(|_| ())
            .map_err(|s| anyhow!("P4Runtime Write: {} {}", s.code(), s.message()))
    }

    /// Makes the switch route frames addressed to [`ROUTER_MAC`].
    pub fn add_router_mac(&mut self) -> Result<()> {
        let te = pb::TableEntry {
            table_id: table_id("my_station")?,
            r#match: vec![exact(key_id("my_station", "dst_mac")?, &ROUTER_MAC)],
            action: Some(pb::TableAction {
                r#type: Some(pb::table_action::Type::Action(pb::Action {
                    action_id: action_id("set_routed")?,
                    params: vec![],
                })),
            }),
            ..Default::default()
        };
        self.write(vec![insert(pb::entity::Entity::TableEntry(te))])
    }

    /// Routes `dst/32` to `hops`: one member for one hop, a selector group
    /// (ECMP, hashed on the 5-tuple) for several. `nexthop_id` must be
    /// unique per switch.
    pub fn add_route(&mut self, dst: Ipv4Addr, nexthop_id: u16, hops: &[NextHop]) -> Result<()> {
        if hops.is_empty() {
            bail!("route to {dst}: no next hop");
        }
        let profile = profile_id("nexthop")?;
        let set_nexthop = action_id("set_nexthop")?;
        let mut updates = Vec::new();
        let mut members = Vec::new();
        for h in hops {
            let member_id = self.next_member;
            self.next_member += 1;
            members.push(member_id);
            updates.push(insert(pb::entity::Entity::ActionProfileMember(
                pb::ActionProfileMember {
                    action_profile_id: profile,
                    member_id,
                    action: Some(pb::Action {
                        action_id: set_nexthop,
                        params: vec![
                            param(param_id("set_nexthop", "port")?, &h.port.to_be_bytes()),
                            param(param_id("set_nexthop", "src_mac")?, &ROUTER_MAC),
                            param(param_id("set_nexthop", "dst_mac")?, &h.dst_mac),
                        ],
                    }),
                },
            )));
        }
        let table_action = if let [member] = members[..] {
            pb::table_action::Type::ActionProfileMemberId(member)
        } else {
            let group_id = u32::from(nexthop_id);
            updates.push(insert(pb::entity::Entity::ActionProfileGroup(
                pb::ActionProfileGroup {
                    action_profile_id: profile,
                    group_id,
                    members: members
                        .iter()
                        .map(|&member_id| pb::action_profile_group::Member {
                            member_id,
                            weight: 1,
                            ..Default::default()
                        })
                        .collect(),
                    max_size: 0,
                },
            )));
            pb::table_action::Type::ActionProfileGroupId(group_id)
        };
        updates.push(insert(pb::entity::Entity::TableEntry(pb::TableEntry {
            table_id: table_id("nexthop")?,
            r#match: vec![exact(
                key_id("nexthop", "nexthop_id")?,
                &nexthop_id.to_be_bytes(),
            )],
            action: Some(pb::TableAction {
                r#type: Some(table_action),
            }),
            ..Default::default()
        })));
        updates.push(insert(pb::entity::Entity::TableEntry(ipv4_host_route(
            dst, nexthop_id,
        )?)));
        self.write(updates)
            .with_context(|| format!("route {dst}/32 via {hops:?}"))
    }

    /// Inserts (or deletes, with `pb::update::Type::Delete`) the host
    /// routes `dsts/32 → nexthop_id` in one batch; the next hop must exist.
    pub fn write_host_routes(
        &mut self,
        kind: pb::update::Type,
        dsts: &[Ipv4Addr],
        nexthop_id: u16,
    ) -> Result<()> {
        let updates = dsts
            .iter()
            .map(|&dst| {
                let te = ipv4_host_route(dst, nexthop_id)?;
                Ok(update(kind, pb::entity::Entity::TableEntry(te)))
            })
            .collect::<Result<Vec<_>>>()?;
        self.write(updates)
            .with_context(|| format!("{kind:?} of {} host routes", dsts.len()))
    }

    /// Sets ports `0..ports`' speed, MTU and lossless (PFC) priorities
    /// through the fabric service, keeping the rest of a configured port's
    /// settings (a port not yet configured gets a 10 m cable, DSCP trust).
    pub fn set_ports(
        &mut self,
        ports: u32,
        speed_bps: u64,
        mtu_bytes: u32,
        pfc_priorities: &[u8],
    ) -> Result<()> {
        let n_ports = ports;
        let mut ports = self
            .rt
            .block_on(self.fabric.get_ports(fb::GetConfigRequest {}))
            .map_err(|s| anyhow!("fabric GetPorts: {}", s.message()))?
            .into_inner();
        for port in 0..n_ports {
            if !ports.ports.iter().any(|p| p.port == port) {
                ports.ports.push(fb::PortConfig {
                    port,
                    mtu_bytes: 1500,
                    cable_length_m: 10,
                    trust: fb::Trust::Dscp as i32,
                    ..Default::default()
                });
            }
        }
        for p in &mut ports.ports {
            p.speed_bps = speed_bps;
            p.mtu_bytes = mtu_bytes;
            p.pfc_priorities = pfc_priorities.iter().map(|&x| u32::from(x)).collect();
        }
        self.rt
            .block_on(self.fabric.set_ports(ports))
            .map_err(|s| anyhow!("fabric SetPorts: {}", s.message()))?;
        Ok(())
    }

    /// Sets an explicit PFC headroom per (port, lossless priority),
    /// keeping the rest of the buffer configuration.
    pub fn set_headroom(&mut self, bytes: u64) -> Result<()> {
        let mut buf = self
            .rt
            .block_on(self.fabric.get_buffer(fb::GetConfigRequest {}))
            .map_err(|s| anyhow!("fabric GetBuffer: {}", s.message()))?
            .into_inner();
        buf.headroom = Some(fb::HeadroomConfig {
            mode: Some(fb::headroom_config::Mode::ExplicitBytes(bytes)),
        });
        self.rt
            .block_on(self.fabric.set_buffer(buf))
            .map_err(|s| anyhow!("fabric SetBuffer: {}", s.message()))?;
        Ok(())
    }

    /// Gives `priority` a static PFC threshold (XOFF once the PG's shared
    /// use reaches `xoff_bytes`; XON per R-PFC-TX-2, or once its total use
    /// is at most `xon_bytes`) and an explicit headroom per (port, lossless
    /// priority), keeping the rest of the buffer configuration.
    pub fn set_static_threshold(
        &mut self,
        priority: u8,
        xoff_bytes: u64,
        xon_bytes: u64,
        headroom_bytes: u64,
    ) -> Result<()> {
        let mut buf = self
            .rt
            .block_on(self.fabric.get_buffer(fb::GetConfigRequest {}))
            .map_err(|s| anyhow!("fabric GetBuffer: {}", s.message()))?
            .into_inner();
        buf.thresholds.retain(|t| t.priority != u32::from(priority));
        buf.thresholds.push(fb::PriorityThreshold {
            priority: u32::from(priority),
            threshold: Some(fb::priority_threshold::Threshold::StaticThreshold(
                fb::StaticThreshold {
                    xoff_bytes,
                    xon_bytes,
                },
            )),
        });
        buf.headroom = Some(fb::HeadroomConfig {
            mode: Some(fb::headroom_config::Mode::ExplicitBytes(headroom_bytes)),
        });
        self.rt
            .block_on(self.fabric.set_buffer(buf))
            .map_err(|s| anyhow!("fabric SetBuffer: {}", s.message()))?;
        Ok(())
    }

    /// Turns the PFC watchdog on with `w` (every port with a lossless
    /// priority), or off with `None`.
    pub fn set_watchdog(&mut self, w: Option<WatchdogSetting>) -> Result<()> {
        let cfg = match w {
            Some(w) => fb::WatchdogConfig {
                enabled: true,
                detection_time_ms: w.detection_time_ms,
                restoration_time_ms: w.restoration_time_ms,
                action: if w.drop {
                    fb::WatchdogAction::Drop
                } else {
                    fb::WatchdogAction::Forward
                } as i32,
                poll_interval_ms: w.poll_interval_ms,
            },
            None => {
                let mut cur = self
                    .rt
                    .block_on(self.fabric.get_watchdog(fb::GetConfigRequest {}))
                    .map_err(|s| anyhow!("fabric GetWatchdog: {}", s.message()))?
                    .into_inner();
                cur.enabled = false;
                cur
            }
        };
        self.rt
            .block_on(self.fabric.set_watchdog(cfg))
            .map_err(|s| anyhow!("fabric SetWatchdog: {}", s.message()))?;
        Ok(())
    }

    /// Subscribes to the switch's fabric event stream; events that happen
    /// from now on are kept for [`SwitchCtl::watchdog_events`].
    pub fn watch_events(&mut self) -> Result<()> {
        let stream = self
            .rt
            .block_on(self.fabric.watch_events(fb::WatchEventsRequest {}))
            .map_err(|s| anyhow!("fabric WatchEvents: {}", s.message()))?
            .into_inner();
        self.events = Some(stream);
        Ok(())
    }

    /// Watchdog events received since the last call, waiting up to `wait`
    /// for the first one (needs [`SwitchCtl::watch_events`] first).
    pub fn watchdog_events(&mut self, wait: Duration) -> Result<Vec<WatchdogEvent>> {
        let Some(stream) = self.events.as_mut() else {
            bail!("watchdog_events before watch_events");
        };
        let mut out = Vec::new();
        let mut limit = wait;
        loop {
            let next = self
                .rt
                .block_on(async { tokio::time::timeout(limit, stream.message()).await });
            let msg = match next {
                Err(_) => break, // nothing more within the limit
                Ok(Err(s)) => bail!("fabric event stream: {}", s.message()),
                Ok(Ok(None)) => bail!("fabric event stream ended"),
                Ok(Ok(Some(m))) => m,
            };
            match msg.kind {
                Some(fb::event::Kind::Storm(e)) => out.push(WatchdogEvent::Storm {
                    port: e.port,
                    priority: e.priority,
                }),
                Some(fb::event::Kind::Restore(e)) => out.push(WatchdogEvent::Restore {
                    port: e.port,
                    priority: e.priority,
                }),
                _ => continue,
            }
            // After the first event, only collect what is already there.
            limit = Duration::from_millis(1);
        }
        Ok(out)
    }

    /// Enables RED/ECN marking on (`port`, `priority`).
    pub fn set_ecn(&mut self, port: u32, priority: u8, ecn: EcnSetting) -> Result<()> {
        let cfg = fb::EcnConfig {
            profiles: vec![fb::EcnProfile {
                port,
                priority: u32::from(priority),
                enabled: true,
                kmin_bytes: ecn.kmin_bytes,
                kmax_bytes: ecn.kmax_bytes,
                pmax: ecn.pmax,
            }],
        };
        self.rt
            .block_on(self.fabric.set_ecn(cfg))
            .map_err(|s| anyhow!("fabric SetEcn: {}", s.message()))?;
        Ok(())
    }

    /// Waits until every queue of the switch is empty (polling its
    /// counters), for at most `limit`; true if it drained.
    pub fn wait_drained(&mut self, limit: Duration, stop: &AtomicBool) -> Result<bool> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            if stop.load(Ordering::SeqCst) {
                bail!("interrupted");
            }
            if self.counters()?.iter().all(|c| c.queue_depth_bytes == 0) {
                return Ok(true);
            }
            if std::time::Instant::now() >= deadline {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Counters of every (port, priority).
    pub fn counters(&mut self) -> Result<Vec<PrioCounters>> {
        let reply = self
            .rt
            .block_on(
                self.fabric
                    .get_counters(fb::CountersRequest { ports: vec![] }),
            )
            .map_err(|s| anyhow!("fabric GetCounters: {}", s.message()))?
            .into_inner();
        Ok(reply
            .counters
            .into_iter()
            .map(|c| PrioCounters {
                port: c.port,
                priority: c.priority,
                tx_packets: c.tx_packets,
                drops: c.drops,
                pfc_tx_frames: c.pfc_tx_frames,
                pfc_rx_frames: c.pfc_rx_frames,
                ecn_marked: c.ecn_marked,
                watchdog_storms: c.watchdog_storms,
                queue_depth_bytes: c.queue_depth_bytes,
            })
            .collect())
    }
}
