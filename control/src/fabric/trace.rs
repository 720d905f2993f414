//! The fabric service's `Trace` stream: turns a request into a
//! [`TraceRequest`] on the switch, forwards the switch's finished traces as
//! JSON lines (docs/trace.md) until the count, the duration or the client
//! ends it, then clears the request.
//!
//! Contract: one stream at a time (the backend's [`TraceTap`] is held while
//! it runs); the dataplane never waits for this code: it drops traces into
//! a bounded queue and counts what does not fit, and each reply carries
//! that count.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use dataplane::switch::TraceRequest;
use p4_target::trace::FieldFilter;
use proto::roceswitch::fabric::v1 as pb;
use tonic::Status;

use super::backend::FabricBackend;

/// How often the forwarding loop looks at the deadline and the client.
const POLL: Duration = Duration::from_millis(50);

/// Replies in flight towards the client before the loop waits for it.
const STREAM_BUFFER: usize = 256;

/// The switch-side request for `r` (INVALID_ARGUMENT for a bad filter).
pub fn request_from(r: &pb::TraceRequest) -> Result<TraceRequest, Status> {
    let filter = if r.filter.trim().is_empty() {
        None
    } else {
        Some(
            r.filter
                .parse::<FieldFilter>()
                .map_err(|e| Status::invalid_argument(e.to_string()))?,
        )
    };
    let ingress_port = r
        .ingress_port
        .map(u16::try_from)
        .transpose()
        .map_err(|_| Status::invalid_argument("ingress_port: not a port number"))?;
    Ok(TraceRequest {
        ingress_port,
        filter,
        sample_one_in: r.sample_one_in.max(1),
        max_packets: (r.count > 0).then_some(r.count),
    })
}

/// Starts the trace and returns the stream of replies.
pub fn start(
    backend: Arc<dyn FabricBackend>,
    r: pb::TraceRequest,
) -> Result<tokio::sync::mpsc::Receiver<Result<pb::TraceReply, Status>>, Status> {
    let request = request_from(&r)?;
    let tap = backend
        .trace_tap()
        .ok_or_else(|| Status::unimplemented("this switch does not trace packets"))?;
    if tap.busy.swap(true, Ordering::AcqRel) {
        return Err(Status::resource_exhausted(
            "another trace is running on this switch; try again when it ends",
        ));
    }
    // Traces left over from an earlier stream are not this one's.
    {
        let rx = tap.traces.lock().unwrap_or_else(|e| e.into_inner());
        while rx.try_recv().is_ok() {}
    }
    if let Err(e) = backend.set_trace(Some(request)) {
        tap.busy.store(false, Ordering::Release);
        return Err(Status::unavailable(e.to_string()));
    }
    let (tx, rx) = tokio::sync::mpsc::channel(STREAM_BUFFER);
    let deadline =
        (r.duration_ms > 0).then(|| Instant::now() + Duration::from_millis(r.duration_ms));
    let count = r.count;
    tokio::task::spawn_blocking(move || {
        forward(backend.as_ref(), &tx, count, deadline);
        let _ = backend.set_trace(None);
        if let Some(tap) = backend.trace_tap() {
            tap.busy.store(false, Ordering::Release);
        }
    });
    Ok(rx)
}

/// Moves traces from the tap to the client until done.
fn forward(
    backend: &dyn FabricBackend,
    tx: &tokio::sync::mpsc::Sender<Result<pb::TraceReply, Status>>,
    count: u64,
    deadline: Option<Instant>,
) {
    let Some(tap) = backend.trace_tap() else {
        return;
    };
    let dropped_at_start = tap.dropped.load(Ordering::Relaxed);
    let traces = tap.traces.lock().unwrap_or_else(|e| e.into_inner());
    let mut sent = 0u64;
    loop {
        if tx.is_closed() || deadline.is_some_and(|d| Instant::now() >= d) {
            return;
        }
        let wait = deadline.map_or(POLL, |d| {
            d.saturating_duration_since(Instant::now()).min(POLL)
        });
        let trace = match traces.recv_timeout(wait) {
            Ok(t) => t,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
        };
        let json = match serde_json::to_string(&trace) {
            Ok(j) => j,
            Err(e) => {
                let _ = tx.blocking_send(Err(Status::internal(format!("trace encoding: {e}"))));
                return;
            }
        };
        let dropped = tap.dropped.load(Ordering::Relaxed) - dropped_at_start;
        if tx
            .blocking_send(Ok(pb::TraceReply { json, dropped }))
            .is_err()
        {
            return;
        }
        sent += 1;
        if count > 0 && sent >= count {
            return;
        }
    }
}
