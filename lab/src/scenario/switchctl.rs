//! Programming a running `roceswitch` for a lab from its
//! [`crate::fabric::SwitchSetup`]: fabric QoS (the whole configuration,
//! over the fabric service) and routes (the table writes
//! [`dataplane::fabric::L3Config::writes`] makes, over P4Runtime, the same
//! the simulator applies directly), and reading its per-(port, priority)
//! counters.
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
use control::p4cli::ops;
use proto::p4::v1 as pb;
use proto::p4::v1::p4_runtime_client::P4RuntimeClient;
use proto::roceswitch::fabric::v1 as fb;
use proto::roceswitch::fabric::v1::fabric_qos_client::FabricQosClient;
use tokio::sync::mpsc;
use tonic::transport::Channel;

use control::p4rt::translate;
use dataplane::fabric::{FabricConfig, L3Config};
use dataplane::roce::PROGRAM_INFO;
use p4_target::info::TableInfo;
use p4_target::runtime::{EntryAction, FieldMatch};

use crate::fabric::SwitchSetup;

/// The P4Runtime device id `roceswitch` serves by default.
pub const DEVICE_ID: u64 = 1;

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
    /// Frames the kernel dropped before the switch read them (port-wide,
    /// on priority 0).
    pub kernel_drops: u64,
    /// Bytes received on this ingress (port, priority).
    pub rx_bytes: u64,
    /// Bytes sent from this egress (port, priority).
    pub tx_bytes: u64,
    /// Time this ingress PG asserted XOFF toward the neighbour, ns.
    pub pause_tx_ns: u64,
    /// The ingress PG asserts XOFF now.
    pub xoff: bool,
    /// Shared-pool bytes the ingress PG holds now. The fabric maps
    /// priority p to PG p, so this is PG `priority`'s row.
    pub pg_shared_bytes: u64,
    /// Shared bytes at which that PG asserts XOFF now (0: lossy).
    pub xoff_threshold_bytes: u64,
    /// Shared bytes at or below which it releases XOFF now (0: lossy).
    pub xon_threshold_bytes: u64,
}

impl std::fmt::Display for WatchdogEvent {
    /// `storm on port 1 priority 3`, `restored port 1 priority 3`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WatchdogEvent::Storm { port, priority } => {
                write!(f, "storm on port {port} priority {priority}")
            }
            WatchdogEvent::Restore { port, priority } => {
                write!(f, "restored port {port} priority {priority}")
            }
        }
    }
}

/// A PFC watchdog event from the switch's fabric event stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
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
    events: Option<tonic::Streaming<fb::Event>>,
}

fn update(kind: pb::update::Type, e: pb::entity::Entity) -> pb::Update {
    pb::Update {
        r#type: kind as i32,
        entity: Some(pb::Entity { entity: Some(e) }),
    }
}

fn table(name: &str) -> Result<&'static TableInfo> {
    PROGRAM_INFO
        .table_by_name(name)
        .ok_or_else(|| anyhow!("the switch program has no table {name:?}"))
}

impl SwitchCtl {
    /// Connects to `addr` (retrying for up to `wait` while the daemon
    /// starts, giving up early once `stop` is set) and becomes primary
    /// controller.
    pub fn connect(addr: &str, wait: Duration, stop: &AtomicBool) -> Result<SwitchCtl> {
        let (rt, channel) = connect_channel(addr, wait, stop)?;
        let mut p4rt = P4RuntimeClient::new(channel.clone());
        let fabric = FabricQosClient::new(channel);
        let election_id = 1u128;
        let target = ops::Target {
            device_id: DEVICE_ID,
            election_id,
        };
        let stream_tx = rt
            .block_on(async {
                let primary = ops::become_primary(&mut p4rt, &target).await?;
                Ok::<_, control::p4cli::Error>(primary.keep_draining())
            })
            .with_context(|| format!("becoming primary controller of {addr}"))?;
        Ok(SwitchCtl {
            rt,
            p4rt,
            fabric,
            _stream_tx: stream_tx,
            election_id,
            events: None,
        })
    }

    fn write(&mut self, updates: Vec<pb::Update>) -> Result<()> {
        let req = pb::WriteRequest {
            device_id: DEVICE_ID,
            election_id: Some(ops::wire(self.election_id)),
            updates,
            atomicity: pb::write_request::Atomicity::ContinueOnError as i32,
            ..Default::default()
        };
        self.rt
            .block_on(self.p4rt.write(req))
            .map(|_| ())
            .map_err(|s| anyhow!("P4Runtime Write: {} {}", s.code(), s.message()))
    }

    /// Configures the switch as `setup` says: its fabric QoS, then its
    /// routes (on a switch without routes yet).
    pub fn apply(&mut self, setup: &SwitchSetup) -> Result<()> {
        self.set_fabric(&setup.fabric)
            .with_context(|| format!("{}: fabric configuration", setup.name))?;
        self.set_routes(&setup.routes)
            .with_context(|| format!("{}: routes", setup.name))
    }

    /// Replaces the whole fabric QoS configuration.
    pub fn set_fabric(&mut self, cfg: &FabricConfig) -> Result<()> {
        self.rt
            .block_on(
                self.fabric
                    .set_config(control::fabric::convert::config_to(cfg)),
            )
            .map_err(|s| anyhow!("fabric SetConfig: {}", s.message()))?;
        Ok(())
    }

    /// The switch's fabric QoS configuration.
    pub fn fabric_config(&mut self) -> Result<FabricConfig> {
        let reply = self
            .rt
            .block_on(self.fabric.get_config(fb::GetConfigRequest {}))
            .map_err(|s| anyhow!("fabric GetConfig: {}", s.message()))?
            .into_inner();
        Ok(control::fabric::convert::config_from(
            &reply,
            &FabricConfig::default(),
        ))
    }

    /// Inserts the routing `l3` means (router MAC, ECMP seed, next-hop
    /// members and groups, routes) in one batch, on a switch that has none.
    pub fn set_routes(&mut self, l3: &L3Config) -> Result<()> {
        use pb::entity::Entity;
        use pb::update::Type;
        let info = &PROGRAM_INFO;
        let w = l3.writes(info)?;
        let p = &w.profile;
        let mut updates = Vec::new();
        for (member_id, call) in &p.members {
            updates.push(update(
                Type::Insert,
                Entity::ActionProfileMember(pb::ActionProfileMember {
                    action_profile_id: p.profile_id,
                    member_id: *member_id,
                    action: Some(translate::action_call_to_proto(info, call)),
                }),
            ));
        }
        for (group_id, members) in &p.groups {
            updates.push(update(
                Type::Insert,
                Entity::ActionProfileGroup(pb::ActionProfileGroup {
                    action_profile_id: p.profile_id,
                    group_id: *group_id,
                    members: members
                        .iter()
                        .map(|&(member_id, weight)| pb::action_profile_group::Member {
                            member_id,
                            weight: weight as i32,
                            ..Default::default()
                        })
                        .collect(),
                    max_size: 0,
                }),
            ));
        }
        for t in &w.tables {
            let ti = info
                .table(t.table_id)
                .ok_or_else(|| anyhow!("table {:#x} vanished", t.table_id))?;
            for e in &t.entries {
                updates.push(update(
                    Type::Insert,
                    Entity::TableEntry(translate::entry_to_proto(info, ti, e)),
                ));
            }
            if let Some(d) = &t.default {
                updates.push(update(
                    Type::Modify,
                    Entity::TableEntry(translate::default_entry_to_proto(info, ti, d)),
                ));
            }
        }
        self.write(updates)
    }

    /// Inserts one entry of table `t`.
    pub fn insert_entry(
        &mut self,
        t: &'static TableInfo,
        e: &p4_target::runtime::TableEntry,
    ) -> Result<()> {
        let proto = translate::entry_to_proto(&PROGRAM_INFO, t, e);
        self.write(vec![update(
            pb::update::Type::Insert,
            pb::entity::Entity::TableEntry(proto),
        )])
        .with_context(|| format!("inserting into {}", t.name))
    }

    /// Inserts (or deletes, with `pb::update::Type::Delete`) the host
    /// routes `dsts/32 → nexthop_id` in one batch; the next hop must exist
    /// (the ids [`L3Config::writes`] gives next-hop sets count from 1 in
    /// route order).
    pub fn write_host_routes(
        &mut self,
        kind: pb::update::Type,
        dsts: &[Ipv4Addr],
        nexthop_id: u16,
    ) -> Result<()> {
        let routes: Vec<(Ipv4Addr, u8)> = dsts.iter().map(|&d| (d, 32)).collect();
        self.write_routes(kind, &routes, nexthop_id)
            .with_context(|| format!("{kind:?} of {} host routes", dsts.len()))
    }

    /// Inserts (or deletes) the routes `prefix/len → nexthop_id` of
    /// `ipv4_lpm` in one batch; each prefix must have its host bits clear
    /// and the next hop must exist, as for [`Self::write_host_routes`].
    pub fn write_routes(
        &mut self,
        kind: pb::update::Type,
        routes: &[(Ipv4Addr, u8)],
        nexthop_id: u16,
    ) -> Result<()> {
        let info = &PROGRAM_INFO;
        let t = table("ipv4_lpm")?;
        let set = dataplane::fabric::routes::set_nexthop_id(info, nexthop_id)?;
        let updates = routes
            .iter()
            .map(|&(dst, len)| {
                let e = p4_target::runtime::TableEntry {
                    matches: vec![Some(FieldMatch::Lpm {
                        value: u128::from(u32::from(dst)),
                        prefix_len: u32::from(len),
                    })],
                    priority: 0,
                    action: EntryAction::Direct(set.clone()),
                    metadata: Vec::new(),
                };
                update(
                    kind,
                    pb::entity::Entity::TableEntry(translate::entry_to_proto(info, t, &e)),
                )
            })
            .collect();
        self.write(updates)
    }

    /// Loads a program bundle built by `p4-to-rust build` into the switch
    /// (SetForwardingPipelineConfig, VERIFY_AND_COMMIT, with the bundle's
    /// own P4Info): a switch without entries yet, since a new program
    /// starts empty.
    pub fn load_program(&mut self, bundle: Vec<u8>) -> Result<()> {
        use prost::Message;
        let decoded = p4_target::bundle::Bundle::decode(&bundle).context("reading the bundle")?;
        let p4info = proto::p4::config::v1::P4Info::decode(&decoded.p4info[..])
            .context("the bundle's P4Info")?;
        let req = pb::SetForwardingPipelineConfigRequest {
            device_id: DEVICE_ID,
            election_id: Some(ops::wire(self.election_id)),
            action: pb::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
            config: Some(pb::ForwardingPipelineConfig {
                p4info: Some(p4info),
                p4_device_config: bundle,
                cookie: None,
            }),
            ..Default::default()
        };
        self.rt
            .block_on(self.p4rt.set_forwarding_pipeline_config(req))
            .map(|_| ())
            .map_err(|s| anyhow!("SetForwardingPipelineConfig: {} {}", s.code(), s.message()))
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
        read_counters(&self.rt, &mut self.fabric)
    }

    /// Per port with a DCBX neighbour: how the neighbour's advertisement
    /// compares with the switch's ("none", or "pfc,app", ...).
    pub fn dcbx_mismatches(&mut self) -> Result<Vec<(u32, String)>> {
        let reply = self
            .rt
            .block_on(self.fabric.get_dcbx_status(fb::GetConfigRequest {}))
            .map_err(|s| anyhow!("fabric GetDcbxStatus: {}", s.message()))?
            .into_inner();
        Ok(reply
            .ports
            .into_iter()
            .filter(|p| p.has_neighbor)
            .map(|p| (p.port, p.mismatch))
            .collect())
    }
}

/// A read-only fabric session (no P4Runtime arbitration, so it can run next
/// to the primary [`SwitchCtl`]): counters only.
pub struct CountersReader {
    rt: tokio::runtime::Runtime,
    fabric: FabricQosClient<Channel>,
}

impl CountersReader {
    /// Connects to `addr`, retrying for up to `wait`.
    pub fn connect(addr: &str, wait: Duration) -> Result<CountersReader> {
        let (rt, channel) = connect_channel(addr, wait, &AtomicBool::new(false))?;
        Ok(CountersReader {
            rt,
            fabric: FabricQosClient::new(channel),
        })
    }

    /// Per-(port, priority) counters now.
    pub fn counters(&mut self) -> Result<Vec<PrioCounters>> {
        read_counters(&self.rt, &mut self.fabric)
    }
}

/// A runtime and a channel to `addr`, retrying for up to `wait` while the
/// daemon starts (giving up early once `stop` is set).
fn connect_channel(
    addr: &str,
    wait: Duration,
    stop: &AtomicBool,
) -> Result<(tokio::runtime::Runtime, Channel)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("tokio runtime")?;
    let deadline = std::time::Instant::now() + wait;
    loop {
        match rt.block_on(control::client::connect(addr)) {
            Ok(c) => return Ok((rt, c)),
            Err(_) if stop.load(Ordering::SeqCst) => bail!("interrupted"),
            Err(e) if std::time::Instant::now() < deadline => {
                tracing::debug!(error = %e, addr, "switch not up yet");
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => return Err(e).with_context(|| format!("connecting to {addr}")),
        }
    }
}

fn read_counters(
    rt: &tokio::runtime::Runtime,
    fabric: &mut FabricQosClient<Channel>,
) -> Result<Vec<PrioCounters>> {
    let reply = rt
        .block_on(fabric.get_counters(fb::CountersRequest { ports: vec![] }))
        .map_err(|s| anyhow!("fabric GetCounters: {}", s.message()))?
        .into_inner();
    let pg = |port: u32, pg: u32| reply.pgs.iter().find(|g| g.port == port && g.pg == pg);
    Ok(reply
        .counters
        .iter()
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
            kernel_drops: c.kernel_drops,
            rx_bytes: c.rx_bytes,
            tx_bytes: c.tx_bytes,
            pause_tx_ns: c.pause_tx_ns,
            xoff: c.xoff,
            pg_shared_bytes: pg(c.port, c.priority).map_or(0, |g| g.shared_bytes),
            xoff_threshold_bytes: pg(c.port, c.priority).map_or(0, |g| g.xoff_threshold_bytes),
            xon_threshold_bytes: pg(c.port, c.priority).map_or(0, |g| g.xon_threshold_bytes),
        })
        .collect())
}
