//! The application above the RNIC in a `roceperf` agent: what posts work
//! requests and consumes completions, per QP. Bandwidth tests and a plain
//! server need none (the RNIC's built-in workload and auto-receives do the
//! work); a latency test has its probe, an NVMe-oF host an initiator per
//! I/O queue, an NVMe-oF target a target per learned QP.
//!
//! Contract: no clock, no I/O; the agent passes `now` and the RNIC.

use dataplane::rnic::verbs::Completion;
use dataplane::rnic::{PostError, Rnic};

use super::nvmf::{Initiator, NvmfSummary, Target};
use super::workload::{LatencyProbe, LatencySummary};

/// See the module doc.
#[derive(Debug, Default)]
pub(crate) enum App {
    /// Nothing above the RNIC.
    #[default]
    None,
    /// A latency test on one QP.
    Latency(u32, LatencyProbe),
    /// An NVMe-oF host: one initiator per QP.
    NvmfHost(Vec<(u32, Initiator)>),
    /// An NVMe-oF target: one target per learned QP.
    NvmfTarget(Vec<(u32, Target)>),
}

impl App {
    /// True if there is an application that posts work requests (the
    /// agent then reads the clock for it each turn).
    pub(crate) fn posts(&self) -> bool {
        !matches!(self, App::None)
    }

    /// Posts what is due now. A refused post stops a latency probe or an
    /// initiator (its QP failed); a target retries a full send queue later.
    pub(crate) fn post(&mut self, rnic: &mut Rnic, now_ns: u64) -> Result<(), PostError> {
        match self {
            App::None => {}
            App::Latency(qpn, probe) => {
                if let Some(wr) = probe.poll_post(now_ns)
                    && let Err(e) = rnic.post_send(*qpn, wr)
                {
                    probe.post_failed();
                    return Err(e);
                }
            }
            App::NvmfHost(queues) => {
                for (qpn, q) in queues {
                    while let Some(wr) = q.poll_post(now_ns) {
                        if let Err(e) = rnic.post_send(*qpn, wr) {
                            q.post_failed();
                            return Err(e);
                        }
                    }
                }
            }
            App::NvmfTarget(queues) => {
                for (qpn, t) in queues {
                    while let Some(wr) = t.peek() {
                        match rnic.post_send(*qpn, *wr) {
                            Ok(()) => t.posted(),
                            Err(PostError::QueueFull) => break,
                            // The QP failed: its commands are lost with it.
                            Err(_) => t.clear(),
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A completion seen at `now_ns`; true if it gave the application more
    /// to post. Receives it used are posted again.
    pub(crate) fn handle_completion(
        &mut self,
        rnic: &mut Rnic,
        c: &Completion,
        now_ns: u64,
    ) -> bool {
        let repost = match self {
            App::None => return false,
            App::Latency(qpn, probe) => {
                return *qpn == c.qpn && probe.handle_completion(c, now_ns);
            }
            App::NvmfHost(queues) => match queues.iter_mut().find(|(q, _)| *q == c.qpn) {
                Some((_, q)) => q.handle_completion(c, now_ns),
                None => return false,
            },
            App::NvmfTarget(queues) => match queues.iter_mut().find(|(q, _)| *q == c.qpn) {
                Some((_, t)) => t.handle_completion(c),
                None => return false,
            },
        };
        if let Some(r) = repost
            && let Err(e) = rnic.post_recv(c.qpn, r)
        {
            tracing::debug!(qpn = c.qpn, error = %e, "cannot repost a receive");
        }
        true
    }

    /// A latency probe or every initiator is done (always true for the
    /// others: the agent's own end conditions decide).
    pub(crate) fn finished(&self) -> bool {
        match self {
            App::Latency(_, p) => p.finished(),
            App::NvmfHost(queues) => queues.iter().all(|(_, q)| q.finished()),
            App::None | App::NvmfTarget(_) => true,
        }
    }

    /// Post nothing new: the run is ending and what is in flight drains.
    pub(crate) fn stop_issuing(&mut self) {
        match self {
            App::Latency(_, p) => p.stop(),
            App::NvmfHost(queues) => queues.iter_mut().for_each(|(_, q)| q.stop()),
            App::None | App::NvmfTarget(_) => {}
        }
    }

    /// A latency test's figures.
    pub(crate) fn latency(&self) -> Option<LatencySummary> {
        match self {
            App::Latency(_, p) => Some(p.summary()),
            _ => None,
        }
    }

    /// An NVMe-oF host's figures over `secs`.
    pub(crate) fn nvmf(&self, secs: f64) -> Option<NvmfSummary> {
        match self {
            App::NvmfHost(queues) => {
                let qs: Vec<&Initiator> = queues.iter().map(|(_, q)| q).collect();
                Some(NvmfSummary::of(&qs, secs))
            }
            _ => None,
        }
    }
}
