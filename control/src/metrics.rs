//! Prometheus metrics over HTTP: `GET /metrics` serves the fabric backend's
//! counter set (per port × priority, per port × queue, per port × PG, per
//! port) and, when the backend fronts a switch, the switch-wide counters
//! (frames, controller traffic, digests, drops by reason) and the
//! conservation ledger, in the Prometheus text exposition format (0.0.4).
//!
//! Contract: each scrape reads the backend once (off the reactor, the
//! backend may block on the dataplane thread) into a fresh
//! [`prometheus::Registry`] and encodes it with [`prometheus::TextEncoder`];
//! families without rows are left out, as the library does. Names carry
//! their units (`_bytes`, `_seconds`, `_packets`, `_frames`); monotonic
//! counts are counters ending in `_total`, levels are gauges. Labels:
//! `port` and `priority`, `queue` or `pg` (the same set as `rocectl
//! counters`). HTTP is hyper's HTTP/1 server: request heads over
//! [`MAX_HEAD_BYTES`] or slower than [`READ_TIMEOUT`] are refused, other
//! paths get 404, other methods 405. Nothing here panics on client input.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use prometheus::core::Collector;
use prometheus::{CounterVec, Encoder, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};
use tokio::net::TcpListener;

use dataplane::switch::{Ledger, PortLedger, SwitchDrop, SwitchStats};

use crate::fabric::{CounterSet, FabricBackend, PriorityCounters};

/// Longest request head (request line + headers) accepted, in bytes.
pub const MAX_HEAD_BYTES: usize = 8 * 1024;

/// How long a client has to send its request head.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the metrics endpoint could not start.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// Binding the listen address failed.
    #[error("metrics listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// A metric family: name, help, and how to read it from a row of `T`.
type Family<T> = (&'static str, &'static str, fn(&T) -> u64);

/// A per-(port, priority) family read from [`PriorityCounters`].
type PrioFamily = Family<PriorityCounters>;

/// Counters per (port, priority); the first eleven are the names the
/// exporter has always had.
const PRIORITY_COUNTERS: [PrioFamily; 14] = [
    (
        "roceswitch_rx_packets_total",
        "Packets received, by ingress port and priority.",
        |c| c.rx_packets,
    ),
    (
        "roceswitch_rx_bytes_total",
        "Bytes received, by ingress port and priority.",
        |c| c.rx_bytes,
    ),
    (
        "roceswitch_tx_packets_total",
        "Packets sent, by egress port and priority.",
        |c| c.tx_packets,
    ),
    (
        "roceswitch_tx_bytes_total",
        "Bytes sent, by egress port and priority.",
        |c| c.tx_bytes,
    ),
    (
        "roceswitch_drops_total",
        "Packets dropped for any reason.",
        |c| c.drops,
    ),
    (
        "roceswitch_pfc_rx_frames_total",
        "PFC pause frames received for this priority.",
        |c| c.pfc_rx_frames,
    ),
    (
        "roceswitch_pfc_tx_frames_total",
        "PFC pause frames sent for this priority.",
        |c| c.pfc_tx_frames,
    ),
    (
        "roceswitch_ecn_marked_packets_total",
        "Packets marked ECN congestion experienced.",
        |c| c.ecn_marked,
    ),
    (
        "roceswitch_watchdog_storms_total",
        "PFC watchdog storms detected.",
        |c| c.watchdog_storms,
    ),
    (
        "roceswitch_kernel_drops_total",
        "Frames the kernel dropped before the switch read them (AF_PACKET receive buffer full), port-wide on priority 0.",
        |c| c.kernel_drops,
    ),
    (
        "roceswitch_pfc_rx_pause_transitions_total",
        "Received pauses that ended (XOFF to XON), by egress port and priority (ethtool rx_prioN_pause_transition).",
        |c| c.pause_rx_transitions,
    ),
    (
        "roceswitch_rx_drop_packets_total",
        "Packets dropped on arrival, by ingress port and priority.",
        |c| c.rx_drop_packets,
    ),
    (
        "roceswitch_tx_drop_packets_total",
        "Packets dropped at the egress queue, by egress port and priority.",
        |c| c.tx_drop_packets,
    ),
    (
        "roceswitch_queue_depth_bytes",
        "Current egress queue depth.",
        |c| c.queue_depth_bytes,
    ),
];

/// Which of [`PRIORITY_COUNTERS`] are gauges (the rest are counters).
const PRIORITY_GAUGES: [&str; 1] = ["roceswitch_queue_depth_bytes"];

/// Builds one scrape's registry; a family that fails to register (a bug:
/// the names are constants) is logged and left out.
struct Exposition {
    registry: Registry,
}

impl Exposition {
    fn add<C: Collector + Clone + 'static>(&self, c: C) -> C {
        if let Err(e) = self.registry.register(Box::new(c.clone())) {
            tracing::error!(error = %e, "metrics family not registered");
        }
        c
    }

    fn counter(&self, name: &str, help: &str, labels: &[&str]) -> Option<IntCounterVec> {
        IntCounterVec::new(Opts::new(name, help), labels)
            .inspect_err(|e| tracing::error!(name, error = %e, "metrics family"))
            .ok()
            .map(|c| self.add(c))
    }

    fn seconds(&self, name: &str, help: &str, labels: &[&str]) -> Option<CounterVec> {
        CounterVec::new(Opts::new(name, help), labels)
            .inspect_err(|e| tracing::error!(name, error = %e, "metrics family"))
            .ok()
            .map(|c| self.add(c))
    }

    fn gauge(&self, name: &str, help: &str, labels: &[&str]) -> Option<IntGaugeVec> {
        IntGaugeVec::new(Opts::new(name, help), labels)
            .inspect_err(|e| tracing::error!(name, error = %e, "metrics family"))
            .ok()
            .map(|c| self.add(c))
    }

    fn text(&self) -> String {
        let mut out = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::error!(error = %e, "metrics encoding");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

fn set_counter(c: &Option<IntCounterVec>, labels: &[&str], v: u64) {
    if let Some(c) = c {
        c.with_label_values(labels).inc_by(v);
    }
}

fn set_gauge(g: &Option<IntGaugeVec>, labels: &[&str], v: u64) {
    if let Some(g) = g {
        g.with_label_values(labels)
            .set(i64::try_from(v).unwrap_or(i64::MAX));
    }
}

/// The Prometheus text exposition of `set` and, when known, the
/// switch-wide `stats` and the conservation `ledger`.
pub fn render(set: &CounterSet, stats: Option<&SwitchStats>, ledger: Option<&Ledger>) -> String {
    let x = Exposition {
        registry: Registry::new(),
    };
    if let Some(s) = stats {
        render_switch(&x, s);
    }
    if let Some(l) = ledger {
        render_ledger(&x, l);
    }
    render_priorities(&x, &set.priorities);
    render_queues_pgs_ports(&x, set);
    x.text()
}

fn render_priorities(x: &Exposition, rows: &[PriorityCounters]) {
    const LABELS: [&str; 2] = ["port", "priority"];
    for (name, help, value) in PRIORITY_COUNTERS {
        let labels = |c: &PriorityCounters| [c.port.to_string(), c.priority.to_string()];
        if PRIORITY_GAUGES.contains(&name) {
            let g = x.gauge(name, help, &LABELS);
            for c in rows {
                let l = labels(c);
                set_gauge(&g, &[&l[0], &l[1]], value(c));
            }
        } else {
            let f = x.counter(name, help, &LABELS);
            for c in rows {
                let l = labels(c);
                set_counter(&f, &[&l[0], &l[1]], value(c));
            }
        }
    }
    let rx = x.seconds(
        "roceswitch_pfc_rx_pause_seconds_total",
        "Time received PFC held the egress priority paused, measured (ethtool rx_prioN_pause_duration).",
        &LABELS,
    );
    let tx = x.seconds(
        "roceswitch_pfc_tx_pause_seconds_total",
        "Time the ingress priority asserted XOFF towards the peer, measured (ethtool tx_prioN_pause_duration).",
        &LABELS,
    );
    let paused = x.gauge(
        "roceswitch_pfc_paused",
        "1 while received PFC pauses the egress priority.",
        &LABELS,
    );
    let xoff = x.gauge(
        "roceswitch_pfc_xoff",
        "1 while the ingress priority asserts XOFF towards the peer.",
        &LABELS,
    );
    for c in rows {
        let (port, prio) = (c.port.to_string(), c.priority.to_string());
        let l = [port.as_str(), prio.as_str()];
        if let Some(rx) = &rx {
            rx.with_label_values(&l).inc_by(c.pause_rx_ns as f64 / 1e9);
        }
        if let Some(tx) = &tx {
            tx.with_label_values(&l).inc_by(c.pause_tx_ns as f64 / 1e9);
        }
        set_gauge(&paused, &l, u64::from(c.paused));
        set_gauge(&xoff, &l, u64::from(c.xoff));
    }
}

fn render_queues_pgs_ports(x: &Exposition, set: &CounterSet) {
    let q_labels = ["port", "queue"];
    let q_packets = x.counter(
        "roceswitch_queue_packets_total",
        "Packets transmitted from the egress queue (SAI_QUEUE_STAT_PACKETS).",
        &q_labels,
    );
    let q_bytes = x.counter(
        "roceswitch_queue_bytes_total",
        "Bytes transmitted from the egress queue (SAI_QUEUE_STAT_BYTES).",
        &q_labels,
    );
    let q_dropped = x.counter(
        "roceswitch_queue_dropped_packets_total",
        "Packets dropped at the egress queue (SAI_QUEUE_STAT_DROPPED_PACKETS).",
        &q_labels,
    );
    let q_ecn = x.counter(
        "roceswitch_queue_ecn_marked_packets_total",
        "Packets CE-marked in the egress queue (SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS).",
        &q_labels,
    );
    let q_watermark = x.gauge(
        "roceswitch_queue_watermark_bytes",
        "Highest egress queue depth seen (SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES).",
        &q_labels,
    );
    for q in &set.queues {
        let (port, queue) = (q.port.to_string(), q.queue.to_string());
        let l = [port.as_str(), queue.as_str()];
        set_counter(&q_packets, &l, q.packets);
        set_counter(&q_bytes, &l, q.bytes);
        set_counter(&q_dropped, &l, q.dropped_packets);
        set_counter(&q_ecn, &l, q.ecn_marked_packets);
        set_gauge(&q_watermark, &l, q.watermark_bytes);
    }

    let g_labels = ["port", "pg"];
    let pg_gauges: [Family<crate::fabric::PgCounters>; 8] = [
        (
            "roceswitch_pg_reserved_bytes",
            "Reserved buffer in use by the ingress priority group.",
            |g| g.reserved_bytes,
        ),
        (
            "roceswitch_pg_shared_bytes",
            "Shared buffer in use by the ingress priority group.",
            |g| g.shared_bytes,
        ),
        (
            "roceswitch_pg_headroom_bytes",
            "Headroom in use by the ingress priority group.",
            |g| g.headroom_bytes,
        ),
        (
            "roceswitch_pg_shared_watermark_bytes",
            "Highest shared-buffer use seen (SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES).",
            |g| g.shared_watermark_bytes,
        ),
        (
            "roceswitch_pg_headroom_watermark_bytes",
            "Highest headroom use seen (SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES).",
            |g| g.xoff_room_watermark_bytes,
        ),
        (
            "roceswitch_pg_xoff",
            "1 while the priority group asserts XOFF.",
            |g| u64::from(g.xoff),
        ),
        (
            "roceswitch_pg_xoff_threshold_bytes",
            "Shared bytes at which the lossless priority group asserts XOFF now (moves with the free pool under a dynamic threshold).",
            |g| g.xoff_threshold_bytes,
        ),
        (
            "roceswitch_pg_xon_threshold_bytes",
            "Shared bytes at or below which the lossless priority group releases XOFF now.",
            |g| g.xon_threshold_bytes,
        ),
    ];
    for (name, help, value) in pg_gauges {
        let f = x.gauge(name, help, &g_labels);
        for g in &set.pgs {
            let (port, pg) = (g.port.to_string(), g.pg.to_string());
            set_gauge(&f, &[&port, &pg], value(g));
        }
    }

    let port_counters: [Family<crate::fabric::PortCounters>; 5] = [
        (
            "roceswitch_rx_discards_phy_total",
            "Frames dropped on arrival at the port: malformed, over MTU, kernel ring, buffer (ethtool rx_discards_phy).",
            |p| p.rx_discards_phy,
        ),
        (
            "roceswitch_tx_discards_phy_total",
            "Packets dropped at the port's egress queues (ethtool tx_discards_phy).",
            |p| p.tx_discards_phy,
        ),
        (
            "roceswitch_pause_storm_warning_events_total",
            "PFC storms the watchdog detected on the port (ethtool tx_pause_storm_warning_events).",
            |p| p.pause_storm_warning_events,
        ),
        (
            "roceswitch_pause_storm_error_events_total",
            "PFC storms the watchdog broke by dropping or forwarding (ethtool tx_pause_storm_error_events).",
            |p| p.pause_storm_error_events,
        ),
        (
            "roceswitch_rx_ecn_mark_total",
            "Data frames that arrived already CE-marked (ethtool rx_ecn_mark).",
            |p| p.rx_ecn_mark,
        ),
    ];
    for (name, help, value) in port_counters {
        let f = x.counter(name, help, &["port"]);
        for p in &set.ports {
            set_counter(&f, &[&p.port.to_string()], value(p));
        }
    }
    let oper_up = x.gauge(
        "roceswitch_port_oper_up",
        "1 while the port's link is up; 0 while its interface is gone, set down or without carrier (the switch drops what it would send there as reason port_down).",
        &["port"],
    );
    let oper_changes = x.counter(
        "roceswitch_port_oper_changes_total",
        "Times the port's link went down or came back, by direction.",
        &["port", "direction"],
    );
    let security = x.counter(
        "roceswitch_roce_security_drops_total",
        "RoCE dropped by the switch's RoCE security, by reason: rocev2_source / rocev1_source (in from a source not on the port's allowlist), pkey_ingress (in with a P_Key the port may not send), pkey_egress (out with a P_Key that does not match the port's partitions).",
        &["port", "reason"],
    );
    for p in &set.ports {
        let port = p.port.to_string();
        for (reason, n) in p.security_drops.by_reason() {
            set_counter(&security, &[&port, reason], n);
        }
        set_gauge(&oper_up, &[&port], u64::from(!p.oper_down));
        set_counter(&oper_changes, &[&port, "down"], p.oper_down_events);
        set_counter(&oper_changes, &[&port, "up"], p.oper_up_events);
    }
}

/// Switch-wide families: frames, controller traffic, digests, and the
/// switch's own drops by reason (the traffic manager's are per priority).
fn render_switch(x: &Exposition, s: &SwitchStats) {
    let plain: [(&str, &str, u64); 6] = [
        (
            "roceswitch_rx_frames_total",
            "Frames received on all ports.",
            s.rx_frames,
        ),
        (
            "roceswitch_tx_frames_total",
            "Frames sent on all ports, PFC included.",
            s.tx_frames,
        ),
        (
            "roceswitch_packet_in_total",
            "Frames handed to the controller.",
            s.packet_in,
        ),
        (
            "roceswitch_packet_out_total",
            "Frames injected by the controller.",
            s.packet_out,
        ),
        (
            "roceswitch_digests_total",
            "Digests queued for the controller.",
            s.digests,
        ),
        (
            "roceswitch_digests_dropped_total",
            "Digests discarded because the controller did not take them.",
            s.digests_dropped,
        ),
    ];
    for (name, help, value) in plain {
        set_counter(&x.counter(name, help, &[]), &[], value);
    }
    let drops = x.counter(
        "roceswitch_switch_drops_total",
        "Copies the switch dropped, by reason (traffic-manager reasons, kernel ring losses and watchdog flushes included).",
        &["reason"],
    );
    for reason in SwitchDrop::ALL {
        set_counter(&drops, &[reason.name()], s.dropped(reason));
    }
}

/// One per-port ledger family: name, is it a gauge, help, and how to read it.
type LedgerFamily = (&'static str, bool, &'static str, fn(&PortLedger) -> u64);

/// The conservation ledger: per ingress port (`port="cpu"` is the
/// controller's row) the frames that arrived and where they went, and
/// `roceswitch_conservation_ok` (1 when arrived + copies = consumed +
/// forwarded + packet_in + dropped + queued + recirculating holds on every
/// row).
fn render_ledger(x: &Exposition, ledger: &Ledger) {
    let rows: Vec<(String, &PortLedger)> = ledger
        .ports
        .iter()
        .enumerate()
        .map(|(i, r)| (i.to_string(), r))
        .chain([("cpu".to_string(), &ledger.controller)])
        .collect();
    let ok = x.gauge(
        "roceswitch_conservation_ok",
        "1 when every frame is accounted for on every port.",
        &[],
    );
    set_gauge(&ok, &[], u64::from(ledger.check().is_ok()));
    let per_port: [LedgerFamily; 7] = [
        (
            "roceswitch_ledger_arrived_frames_total",
            false,
            "Frames that reached the port (read, or lost in the kernel ring). By ingress port.",
            |r| r.arrived,
        ),
        (
            "roceswitch_ledger_copies_total",
            false,
            "Extra copies made of the port's frames (replicas, clones). By ingress port.",
            |r| r.copies,
        ),
        (
            "roceswitch_ledger_consumed_frames_total",
            false,
            "MAC Control and LLDP frames the switch consumed. By ingress port.",
            |r| r.consumed,
        ),
        (
            "roceswitch_ledger_packet_in_total",
            false,
            "Copies handed to the controller. By ingress port.",
            |r| r.packet_in,
        ),
        (
            "roceswitch_ledger_forwarded_total",
            false,
            "Copies transmitted, all priorities. By ingress port.",
            PortLedger::forwarded,
        ),
        (
            "roceswitch_ledger_queued",
            true,
            "Copies in the traffic manager now. By ingress port.",
            PortLedger::queued,
        ),
        (
            "roceswitch_ledger_recirculating",
            true,
            "Copies waiting to re-enter ingress. By ingress port.",
            |r| r.recirculating,
        ),
    ];
    for (name, gauge, help, value) in per_port {
        if gauge {
            let g = x.gauge(name, help, &["port"]);
            for (port, r) in &rows {
                set_gauge(&g, &[port], value(r));
            }
        } else {
            let c = x.counter(name, help, &["port"]);
            for (port, r) in &rows {
                set_counter(&c, &[port], value(r));
            }
        }
    }
    let dropped = x.counter(
        "roceswitch_ledger_dropped_total",
        "Copies dropped, by ingress port and reason.",
        &["port", "reason"],
    );
    for (port, r) in &rows {
        for reason in SwitchDrop::ALL {
            set_counter(&dropped, &[port, reason.name()], r.dropped(reason));
        }
    }
}

/// Binds `addr` (e.g. `127.0.0.1:9100`).
pub async fn bind(addr: &str) -> Result<TcpListener, MetricsError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| MetricsError::Bind {
            addr: addr.to_string(),
            source,
        })
}

/// Serves `GET /metrics` from `backend` on `listener` until `shutdown`
/// completes.
pub async fn serve(
    listener: TcpListener,
    backend: Arc<dyn FabricBackend>,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let backend = backend.clone();
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |req| {
                            respond(req, backend.clone())
                        });
                        let served = hyper::server::conn::http1::Builder::new()
                            .timer(TokioTimer::new())
                            .header_read_timeout(READ_TIMEOUT)
                            .max_buf_size(MAX_HEAD_BYTES)
                            .keep_alive(false)
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                        if let Err(e) = served {
                            tracing::debug!(%peer, error = %e, "metrics connection");
                        }
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "metrics accept");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
        }
    }
}

fn text_reply(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r
}

async fn respond(
    req: Request<Incoming>,
    backend: Arc<dyn FabricBackend>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.uri().path() != "/metrics" {
        return Ok(text_reply(StatusCode::NOT_FOUND, "not found\n".into()));
    }
    if req.method() != Method::GET {
        return Ok(text_reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "only GET\n".into(),
        ));
    }
    // Backends may block on the dataplane thread: keep that off the reactor.
    let (set, stats, ledger) = tokio::task::spawn_blocking(move || {
        (
            backend.counter_set(&[]),
            backend.switch_stats(),
            backend.ledger(),
        )
    })
    .await
    .unwrap_or_default();
    let mut reply = text_reply(
        StatusCode::OK,
        render(&set, stats.as_ref(), ledger.as_ref()),
    );
    if let Ok(v) = hyper::header::HeaderValue::from_str(TextEncoder::new().format_type()) {
        reply.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    Ok(reply)
}
