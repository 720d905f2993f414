//! Prometheus metrics over HTTP: `GET /metrics` serves the fabric backend's
//! per-(port, priority) counters, and the switch-wide counters (frames,
//! controller traffic, digests, drops by reason) when the backend fronts a
//! switch, in the Prometheus text exposition format (version 0.0.4).
//!
//! Contract: every [`PriorityCounters`] field becomes one metric family,
//! labelled `port` and `priority`, with `# HELP` and `# TYPE` lines;
//! monotonic counts are `counter`s named `roceswitch_*_total`, the egress
//! queue depth is the gauge `roceswitch_queue_depth_bytes`. Units are in the
//! names (packets, bytes, frames). The server is a minimal HTTP/1.1
//! responder on a tokio `TcpListener`: one request per connection
//! (`Connection: close`), request heads up to [`MAX_HEAD_BYTES`], 404 for
//! other paths, 405 for other methods, 400 for anything unparsable. It
//! never panics on bad input; a misbehaving client only loses its own
//! connection.

use std::fmt::Write as _;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use dataplane::switch::{Ledger, PortLedger, SwitchDrop, SwitchStats};

use crate::fabric::{FabricBackend, PriorityCounters};

/// Longest request head (request line + headers) accepted, in bytes.
pub const MAX_HEAD_BYTES: usize = 8 * 1024;

/// How long a client has to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

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

/// One metric family: name, type, help, and how to read it from a row.
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    value: fn(&PriorityCounters) -> u64,
}

const FAMILIES: [Family; 11] = [
    Family {
        name: "roceswitch_rx_packets_total",
        kind: "counter",
        help: "Packets received, by ingress port and priority.",
        value: |c| c.rx_packets,
    },
    Family {
        name: "roceswitch_rx_bytes_total",
        kind: "counter",
        help: "Bytes received, by ingress port and priority.",
        value: |c| c.rx_bytes,
    },
    Family {
        name: "roceswitch_tx_packets_total",
        kind: "counter",
        help: "Packets sent, by egress port and priority.",
        value: |c| c.tx_packets,
    },
    Family {
        name: "roceswitch_tx_bytes_total",
        kind: "counter",
        help: "Bytes sent, by egress port and priority.",
        value: |c| c.tx_bytes,
    },
    Family {
        name: "roceswitch_drops_total",
        kind: "counter",
        help: "Packets dropped for any reason.",
        value: |c| c.drops,
    },
    Family {
        name: "roceswitch_pfc_rx_frames_total",
        kind: "counter",
        help: "PFC pause frames received for this priority.",
        value: |c| c.pfc_rx_frames,
    },
    Family {
        name: "roceswitch_pfc_tx_frames_total",
        kind: "counter",
        help: "PFC pause frames sent for this priority.",
        value: |c| c.pfc_tx_frames,
    },
    Family {
        name: "roceswitch_ecn_marked_packets_total",
        kind: "counter",
        help: "Packets marked ECN congestion experienced.",
        value: |c| c.ecn_marked,
    },
    Family {
        name: "roceswitch_watchdog_storms_total",
        kind: "counter",
        help: "PFC watchdog storms detected.",
        value: |c| c.watchdog_storms,
    },
    Family {
        name: "roceswitch_queue_depth_bytes",
        kind: "gauge",
        help: "Current egress queue depth.",
        value: |c| c.queue_depth_bytes,
    },
    Family {
        name: "roceswitch_kernel_drops_total",
        kind: "counter",
        help: "Frames the kernel dropped before the switch read them (AF_PACKET receive buffer full), port-wide on priority 0.",
        value: |c| c.kernel_drops,
    },
];

/// The Prometheus text exposition of `counters` and, when known, the
/// switch-wide `stats`.
pub fn render(
    counters: &[PriorityCounters],
    stats: Option<&SwitchStats>,
    ledger: Option<&Ledger>,
) -> String {
    let mut out = String::new();
    if let Some(s) = stats {
        render_switch(&mut out, s);
    }
    if let Some(l) = ledger {
        render_ledger(&mut out, l);
    }
    for f in &FAMILIES {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
        let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind);
        for c in counters {
            let _ = writeln!(
                out,
                "{}{{port=\"{}\",priority=\"{}\"}} {}",
                f.name,
                c.port,
                c.priority,
                (f.value)(c)
            );
        }
    }
    out
}

/// Switch-wide families: frames, controller traffic, digests, and the
/// switch's own drops by reason (the traffic manager's are per priority).
fn render_switch(out: &mut String, s: &SwitchStats) {
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
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} counter");
        let _ = writeln!(out, "{name} {value}");
    }
    let name = "roceswitch_switch_drops_total";
    let _ = writeln!(
        out,
        "# HELP {name} Copies the switch dropped, by reason (traffic-manager reasons, kernel ring losses and watchdog flushes included)."
    );
    let _ = writeln!(out, "# TYPE {name} counter");
    for reason in SwitchDrop::ALL {
        let _ = writeln!(
            out,
            "{name}{{reason=\"{}\"}} {}",
            reason.name(),
            s.dropped(reason)
        );
    }
}

/// One per-port ledger family: name, type, help, and how to read it.
type LedgerFamily = (
    &'static str,
    &'static str,
    &'static str,
    fn(&PortLedger) -> u64,
);

/// The conservation ledger: per ingress port (`port="cpu"` is the
/// controller's row) the frames that arrived and where they went, the
/// per-priority share, and `roceswitch_conservation_ok` (1 when
/// arrived + copies = consumed + forwarded + packet_in + dropped + queued +
/// recirculating holds on every row).
fn render_ledger(out: &mut String, ledger: &Ledger) {
    let rows: Vec<(String, &PortLedger)> = ledger
        .ports
        .iter()
        .enumerate()
        .map(|(i, r)| (i.to_string(), r))
        .chain([("cpu".to_string(), &ledger.controller)])
        .collect();
    let ok = u8::from(ledger.check().is_ok());
    let _ = writeln!(
        out,
        "# HELP roceswitch_conservation_ok 1 when every frame is accounted for on every port."
    );
    let _ = writeln!(out, "# TYPE roceswitch_conservation_ok gauge");
    let _ = writeln!(out, "roceswitch_conservation_ok {ok}");
    let per_port: [LedgerFamily; 7] = [
        (
            "roceswitch_ledger_arrived_frames_total",
            "counter",
            "Frames that reached the port (read, or lost in the kernel ring).",
            |r| r.arrived,
        ),
        (
            "roceswitch_ledger_copies_total",
            "counter",
            "Extra copies made of the port's frames (replicas, clones).",
            |r| r.copies,
        ),
        (
            "roceswitch_ledger_consumed_frames_total",
            "counter",
            "MAC Control and LLDP frames the switch consumed.",
            |r| r.consumed,
        ),
        (
            "roceswitch_ledger_packet_in_total",
            "counter",
            "Copies handed to the controller.",
            |r| r.packet_in,
        ),
        (
            "roceswitch_ledger_forwarded_total",
            "counter",
            "Copies transmitted, all priorities.",
            PortLedger::forwarded,
        ),
        (
            "roceswitch_ledger_queued",
            "gauge",
            "Copies in the traffic manager now.",
            PortLedger::queued,
        ),
        (
            "roceswitch_ledger_recirculating",
            "gauge",
            "Copies waiting to re-enter ingress.",
            |r| r.recirculating,
        ),
    ];
    for (name, kind, help, value) in per_port {
        let _ = writeln!(out, "# HELP {name} {help} By ingress port.");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for (port, r) in &rows {
            let _ = writeln!(out, "{name}{{port=\"{port}\"}} {}", value(r));
        }
    }
    let name = "roceswitch_ledger_dropped_total";
    let _ = writeln!(
        out,
        "# HELP {name} Copies dropped, by ingress port and reason."
    );
    let _ = writeln!(out, "# TYPE {name} counter");
    for (port, r) in &rows {
        for reason in SwitchDrop::ALL {
            let _ = writeln!(
                out,
                "{name}{{port=\"{port}\",reason=\"{}\"}} {}",
                reason.name(),
                r.dropped(reason)
            );
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
                        if let Err(e) = handle(stream, backend).await {
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

/// The request head up to the blank line, or None if the client closed,
/// was too slow, or sent more than [`MAX_HEAD_BYTES`] without one.
async fn read_head(stream: &mut TcpStream) -> std::io::Result<Option<Vec<u8>>> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    let read = async {
        loop {
            if head.windows(4).any(|w| w == b"\r\n\r\n") {
                return Ok(true);
            }
            if head.len() > MAX_HEAD_BYTES {
                return Ok(false);
            }
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                return Ok(false);
            }
            head.extend_from_slice(&buf[..n]);
        }
    };
    match tokio::time::timeout(READ_TIMEOUT, read).await {
        Ok(Ok(true)) => Ok(Some(head)),
        Ok(Ok(false)) | Err(_) => Ok(None),
        Ok(Err(e)) => Err(e),
    }
}

async fn handle(mut stream: TcpStream, backend: Arc<dyn FabricBackend>) -> std::io::Result<()> {
    let Some(head) = read_head(&mut stream).await? else {
        return respond(
            &mut stream,
            "400 Bad Request",
            "text/plain",
            "bad request\n",
        )
        .await;
    };
    let text = String::from_utf8_lossy(&head);
    let line = text.lines().next().unwrap_or("");
    let mut words = line.split(' ');
    let (method, target, version) = (words.next(), words.next(), words.next());
    let (Some(method), Some(target), Some(version)) = (method, target, version) else {
        return respond(
            &mut stream,
            "400 Bad Request",
            "text/plain",
            "bad request\n",
        )
        .await;
    };
    if !version.starts_with("HTTP/1.") {
        return respond(
            &mut stream,
            "400 Bad Request",
            "text/plain",
            "bad request\n",
        )
        .await;
    }
    let path = target.split('?').next().unwrap_or("");
    if path != "/metrics" {
        return respond(&mut stream, "404 Not Found", "text/plain", "not found\n").await;
    }
    if method != "GET" {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            "only GET\n",
        )
        .await;
    }
    // Backends may block on the dataplane thread: keep that off the reactor.
    let (counters, stats, ledger) = tokio::task::spawn_blocking(move || {
        (
            backend.counters(&[]),
            backend.switch_stats(),
            backend.ledger(),
        )
    })
    .await
    .unwrap_or_default();
    respond(
        &mut stream,
        "200 OK",
        "text/plain; version=0.0.4; charset=utf-8",
        &render(&counters, stats.as_ref(), ledger.as_ref()),
    )
    .await
}

async fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await?;
    // Lingering close: closing with unread input would reset the connection
    // and could destroy the reply in flight; read (bounded) until the peer closes.
    let mut sink = [0u8; 4096];
    let mut left = 16 * MAX_HEAD_BYTES;
    let _ = tokio::time::timeout(READ_TIMEOUT, async {
        while left > 0 {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    })
    .await;
    Ok(())
}
