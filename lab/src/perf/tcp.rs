//! Kernel TCP next to RoCE: a bulk sender and a sink on the host's own
//! stack, to put the reliable-over-lossy alternative (what iWARP does, and
//! what every TCP flow does) through the same switch as RoCE: TCP rides a
//! lossy priority and recovers from drops with its own congestion control,
//! RoCE needs the lossless one. The sender reports the kernel's
//! retransmission count (`tcpi_total_retrans` of `TCP_INFO`) so the drops
//! it recovered from show.
//!
//! Real I/O with `std::net` (one thread per connection); the host needs a
//! kernel address routed by the switch (a topology's `kernel_ip`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

/// Bytes per `write`/`read` call.
const CHUNK: usize = 128 * 1024;

/// What a span of a TCP run moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TcpReport {
    /// `"interval"` or `"summary"`.
    pub kind: &'static str,
    /// `"tcp-client"` or `"tcp-server"`.
    pub role: &'static str,
    /// Start of the span, seconds since the run started.
    pub start_s: f64,
    /// End of the span, seconds since the run started.
    pub end_s: f64,
    /// Connections.
    pub streams: usize,
    /// Payload bytes in the span.
    pub bytes: u64,
    /// Payload rate over the span, Gbit/s.
    pub gbps: f64,
    /// Segments the kernel retransmitted (sender, whole run so far).
    pub retransmits: u64,
}

impl TcpReport {
    fn between(kind: &'static str, role: &'static str, a: (f64, u64), b: (f64, u64)) -> Self {
        let secs = (b.0 - a.0).max(1e-9);
        let bytes = b.1.saturating_sub(a.1);
        TcpReport {
            kind,
            role,
            start_s: a.0,
            end_s: b.0,
            streams: 0,
            bytes,
            gbps: bytes as f64 * 8.0 / secs / 1e9,
            retransmits: 0,
        }
    }

    /// One text line.
    pub fn line(&self) -> String {
        format!(
            "{:>7.2} {:>7} {:<10} streams {:>2} {:>12} bytes {:>8.4} Gb/s retransmits {}",
            self.end_s, self.kind, self.role, self.streams, self.bytes, self.gbps, self.retransmits
        )
    }
}

/// Errors of a TCP run.
#[derive(Debug, thiserror::Error)]
pub enum TcpError {
    /// A socket call failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> TcpError {
    let what = what.into();
    move |source| TcpError::Io { what, source }
}

/// Samples `counter` every `interval` until `end` or `stop`, passing
/// interval reports to `on_interval`; then calls `finish` (which stops
/// whatever moves the counter) and returns the summary.
#[allow(clippy::too_many_arguments)]
fn watch(
    role: &'static str,
    counter: &AtomicU64,
    duration: Option<Duration>,
    interval: Option<Duration>,
    stop: &AtomicBool,
    mut extra: impl FnMut(&mut TcpReport),
    mut on_interval: impl FnMut(&TcpReport),
    finish: impl FnOnce(),
) -> TcpReport {
    let t0 = Instant::now();
    let sample = || (t0.elapsed().as_secs_f64(), counter.load(Ordering::Relaxed));
    // The counter starts at 0 with the run (writers may start just before).
    let start = (0.0, 0);
    let mut last = start;
    let mut next = interval.map(|i| t0 + i);
    loop {
        if stop.load(Ordering::Relaxed) || duration.is_some_and(|d| t0.elapsed() >= d) {
            break;
        }
        if let (Some(n), Some(i)) = (next, interval)
            && Instant::now() >= n
        {
            let now = sample();
            let mut r = TcpReport::between("interval", role, last, now);
            extra(&mut r);
            on_interval(&r);
            last = now;
            next = Some(n + i);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    finish();
    let mut r = TcpReport::between("summary", role, start, sample());
    extra(&mut r);
    r
}

/// Accepts connections on `listener` and reads everything they send until
/// `duration` or `stop`.
pub fn serve(
    listener: TcpListener,
    duration: Option<Duration>,
    interval: Option<Duration>,
    stop: &AtomicBool,
    on_interval: impl FnMut(&TcpReport),
) -> Result<TcpReport, TcpError> {
    listener
        .set_nonblocking(true)
        .map_err(io("setting the listener non-blocking"))?;
    let received = Arc::new(AtomicU64::new(0));
    let streams = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let acceptor = {
        let (received, streams, done) = (received.clone(), streams.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((mut s, peer)) => {
                        tracing::info!(%peer, "TCP connection");
                        streams.fetch_add(1, Ordering::Relaxed);
                        let (received, done) = (received.clone(), done.clone());
                        std::thread::spawn(move || {
                            let _ = s.set_nonblocking(false);
                            let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
                            let mut buf = vec![0u8; CHUNK];
                            while !done.load(Ordering::Relaxed) {
                                match s.read(&mut buf) {
                                    Ok(0) => break,
                                    Ok(n) => {
                                        received.fetch_add(n as u64, Ordering::Relaxed);
                                    }
                                    Err(e) if transient(&e) => {}
                                    Err(_) => break,
                                }
                            }
                        });
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }
        })
    };
    let n = streams.clone();
    let report = watch(
        "tcp-server",
        &received,
        duration,
        interval,
        stop,
        |r| r.streams = n.load(Ordering::Relaxed) as usize,
        on_interval,
        || {},
    );
    done.store(true, Ordering::Relaxed);
    let _ = acceptor.join();
    Ok(report)
}

/// Opens `streams` connections to `dst` (IP TOS = `dscp << 2`) and sends
/// as fast as TCP lets it for `duration` (or until `stop`).
pub fn send(
    dst: SocketAddr,
    streams: usize,
    dscp: u8,
    duration: Duration,
    interval: Option<Duration>,
    stop: &AtomicBool,
    on_interval: impl FnMut(&TcpReport),
) -> Result<TcpReport, TcpError> {
    let sent = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let mut conns = Vec::new();
    for i in 0..streams.max(1) {
        let s = connect(dst).map_err(io(format!("connecting stream {i} to {dst}")))?;
        set_tos(&s, dscp << 2).map_err(io("setting IP_TOS"))?;
        let _ = s.set_write_timeout(Some(Duration::from_millis(100)));
        conns.push(s);
    }
    let fds: Vec<i32> = conns.iter().map(AsRawFd::as_raw_fd).collect();
    let writers: Vec<_> = conns
        .into_iter()
        .map(|mut s| {
            let (sent, done) = (sent.clone(), done.clone());
            std::thread::spawn(move || {
                let buf = vec![0x5au8; CHUNK];
                while !done.load(Ordering::Relaxed) {
                    match s.write(&buf) {
                        Ok(n) => {
                            sent.fetch_add(n as u64, Ordering::Relaxed);
                        }
                        Err(e) if transient(&e) => {}
                        Err(_) => break,
                    }
                }
                s
            })
        })
        .collect();
    let n = fds.len();
    let retrans = |fds: &[i32]| fds.iter().map(|&fd| total_retrans(fd)).sum::<u64>();
    // The writers hand their sockets back, so the fds stay valid until the
    // summary has read TCP_INFO.
    let mut sockets = Vec::new();
    let report = watch(
        "tcp-client",
        &sent,
        Some(duration),
        interval,
        stop,
        |r| {
            r.streams = n;
            r.retransmits = retrans(&fds);
        },
        on_interval,
        || {
            done.store(true, Ordering::Relaxed);
            sockets.extend(writers.into_iter().filter_map(|w| w.join().ok()));
        },
    );
    drop(sockets);
    Ok(report)
}

/// A socket timeout or interruption: look at the stop flag and go on.
fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    )
}

/// Connects, waiting up to [`CONNECT_WAIT`] for a server that is not
/// listening yet (a lab starts both at once).
fn connect(dst: SocketAddr) -> std::io::Result<TcpStream> {
    let deadline = Instant::now() + CONNECT_WAIT;
    loop {
        match TcpStream::connect_timeout(&dst, Duration::from_secs(5)) {
            Err(e)
                if e.kind() == std::io::ErrorKind::ConnectionRefused
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            r => return r,
        }
    }
}

/// How long a client retries a refused connection.
pub const CONNECT_WAIT: Duration = Duration::from_secs(5);

fn set_tos(s: &TcpStream, tos: u8) -> std::io::Result<()> {
    let v = libc::c_int::from(tos);
    // SAFETY: a valid socket and an int option of the right size.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_TOS,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The kernel's count of retransmitted segments on `fd` (0 if unknown).
fn total_retrans(fd: i32) -> u64 {
    // SAFETY: tcp_info is plain data; the kernel fills at most `len` bytes.
    unsafe {
        let mut info: libc::tcp_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        let r = libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        );
        if r == 0 {
            u64::from(info.tcpi_total_retrans)
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_bytes_sent_arrive_and_are_counted_on_both_sides() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let server = std::thread::spawn(move || serve(listener, None, None, &s2, |_| {}).unwrap());
        let never = AtomicBool::new(false);
        let mut intervals = Vec::new();
        let c = send(
            addr,
            2,
            0,
            Duration::from_millis(400),
            Some(Duration::from_millis(100)),
            &never,
            |r| intervals.push(r.clone()),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        stop.store(true, Ordering::Relaxed);
        let s = server.join().unwrap();
        assert_eq!((c.streams, s.streams), (2, 2));
        assert!(c.bytes > 1_000_000, "{c:?}");
        // What was written was read (the sockets' buffers drained within
        // the 200 ms the server kept reading).
        assert_eq!(s.bytes, c.bytes);
        assert!(c.gbps > 0.0);
        assert!(intervals.len() >= 3, "{intervals:?}");
        assert!(intervals.iter().map(|r| r.bytes).sum::<u64>() <= c.bytes);
    }
}
