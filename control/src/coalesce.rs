//! A byte stream that sends what was written during one turn of the
//! runtime in one `write(2)`: [`Coalesce`].
//!
//! Why: hyper's HTTP/2 client writes a unary gRPC call in two system calls.
//! A new stream has no send window until its HEADERS frame is written
//! (h2 opens client streams from the connection task), so the task piping
//! the request body finds no capacity when the request is queued, and the
//! connection flushes the HEADERS frame alone; the DATA frame with
//! END_STREAM follows in a second write once the body task has run. Over
//! loopback each write runs the receiver's TCP stack and wakes its thread,
//! and the server often wakes twice for one request (once for the headers,
//! again for the message). Served connections use it too, so the replies
//! of Writes committed together leave in one write.
//!
//! How: writes are taken into a buffer; the first flush of what is buffered
//! is put off once (the task wakes itself and returns `Pending`, so the
//! runtime runs the tasks already woken, such as hyper's body pipe, before
//! this one again), and the next flush writes everything gathered meanwhile
//! at once. The bytes and their order are unchanged; a flush is late by one
//! pass of the task queue. A write of at least [`PASS_THROUGH_BYTES`] with
//! nothing buffered goes straight to the socket (a big batch gains nothing
//! from a copy), and the buffer is written out before it grows past that.
//!
//! Contract: no panics; memory is at most about [`PASS_THROUGH_BYTES`] plus
//! the last write accepted; errors are the inner stream's.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Writes at least this long skip the buffer when it is empty, and the
/// buffer is written out before it holds more.
pub(crate) const PASS_THROUGH_BYTES: usize = 64 * 1024;

/// A stream whose writes are gathered until a flush, and whose first flush
/// of each gathering is put off by one pass of the runtime's task queue
/// (module docs).
#[derive(Debug)]
pub(crate) struct Coalesce<T> {
    inner: T,
    /// Bytes accepted and not yet written to `inner`, from `written` on.
    buffered: Vec<u8>,
    written: usize,
    /// The flush of what is buffered has been put off once already.
    deferred: bool,
}

impl<T> Coalesce<T> {
    /// Wraps `inner`.
    pub(crate) fn new(inner: T) -> Self {
        Coalesce {
            inner,
            buffered: Vec::new(),
            written: 0,
            deferred: false,
        }
    }

    fn has_buffered(&self) -> bool {
        self.written < self.buffered.len()
    }
}

impl<T: AsyncWrite + Unpin> Coalesce<T> {
    /// Writes out everything buffered.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.has_buffered() {
            let n =
                ready!(Pin::new(&mut self.inner).poll_write(cx, &self.buffered[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.buffered.clear();
        self.written = 0;
        self.deferred = false;
        Poll::Ready(Ok(()))
    }

    /// Makes room for `len` more bytes: writes the buffer out if it would
    /// grow past [`PASS_THROUGH_BYTES`].
    fn poll_room(&mut self, cx: &mut Context<'_>, len: usize) -> Poll<io::Result<()>> {
        if self.has_buffered() && self.buffered.len() - self.written + len > PASS_THROUGH_BYTES {
            ready!(self.poll_drain(cx))?;
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Coalesce<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_room(cx, buf.len()))?;
        if !this.has_buffered() && buf.len() >= PASS_THROUGH_BYTES {
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        }
        this.buffered.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let len = bufs.iter().map(|b| b.len()).sum();
        ready!(this.poll_room(cx, len))?;
        if !this.has_buffered() && len >= PASS_THROUGH_BYTES {
            return Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        }
        for b in bufs {
            this.buffered.extend_from_slice(b);
        }
        Poll::Ready(Ok(len))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.has_buffered() && !this.deferred {
            // Let the tasks already woken (a body waiting to follow its
            // headers) write first; this task runs again after them.
            this.deferred = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

/// Served connections keep what tonic knows of their peer.
impl<T: tonic::transport::server::Connected> tonic::transport::server::Connected for Coalesce<T> {
    type ConnectInfo = T::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Coalesce<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    use super::*;

    /// A sink recording each write it takes, taking at most `max` bytes a
    /// write.
    #[derive(Default)]
    struct Sink {
        writes: Vec<Vec<u8>>,
        max: Option<usize>,
        flushes: usize,
        shut: bool,
    }

    impl AsyncWrite for Sink {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            let n = self.max.map_or(buf.len(), |m| m.min(buf.len()));
            self.writes.push(buf[..n].to_vec());
            Poll::Ready(Ok(n))
        }

        fn poll_flush(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.flushes += 1;
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.shut = true;
            Poll::Ready(Ok(()))
        }
    }

    #[derive(Default)]
    struct CountingWaker(AtomicUsize);

    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn write(io: &mut Coalesce<Sink>, cx: &mut Context<'_>, bytes: &[u8]) {
        let r = Pin::new(io).poll_write(cx, bytes);
        assert!(matches!(r, Poll::Ready(Ok(n)) if n == bytes.len()));
    }

    #[test]
    fn writes_before_a_deferred_flush_leave_in_one_write() {
        let wakes = Arc::new(CountingWaker::default());
        let waker = std::task::Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        let mut io = Coalesce::new(Sink::default());
        write(&mut io, &mut cx, b"headers");
        // The first flush is put off, and the task is woken to come back.
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_pending());
        assert_eq!(wakes.0.load(Ordering::Relaxed), 1);
        assert!(io.inner.writes.is_empty());
        // What the next task wrote meanwhile joins the same write.
        write(&mut io, &mut cx, b"+data");
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
        assert_eq!(io.inner.writes, vec![b"headers+data".to_vec()]);
        assert_eq!(io.inner.flushes, 1);
        // A new gathering is put off again.
        write(&mut io, &mut cx, b"next");
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_pending());
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
        assert_eq!(io.inner.writes.len(), 2);
    }

    #[test]
    fn a_flush_with_nothing_buffered_is_not_put_off() {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut io = Coalesce::new(Sink::default());
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
        assert_eq!(io.inner.flushes, 1);
    }

    #[test]
    fn partial_writes_of_the_inner_stream_are_completed_in_order() {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut io = Coalesce::new(Sink {
            max: Some(3),
            ..Sink::default()
        });
        write(&mut io, &mut cx, b"abcdefgh");
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_pending());
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
        assert_eq!(io.inner.writes.concat(), b"abcdefgh");
        assert_eq!(io.inner.writes.len(), 3);
    }

    #[test]
    fn big_writes_skip_the_buffer_and_the_buffer_stays_bounded() {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut io = Coalesce::new(Sink::default());
        let big = vec![7u8; PASS_THROUGH_BYTES];
        write(&mut io, &mut cx, &big);
        assert_eq!(io.inner.writes.len(), 1);
        assert!(!io.has_buffered());
        // Small, then big: the small bytes go out first, then the big ones
        // straight through.
        write(&mut io, &mut cx, b"small");
        write(&mut io, &mut cx, &big);
        assert_eq!(io.inner.writes[1], b"small");
        assert_eq!(io.inner.writes[2].len(), PASS_THROUGH_BYTES);
        assert!(!io.has_buffered());
    }

    #[test]
    fn vectored_writes_are_gathered_like_plain_ones() {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut io = Coalesce::new(Sink::default());
        let parts = [io::IoSlice::new(b"ab"), io::IoSlice::new(b"cd")];
        let r = Pin::new(&mut io).poll_write_vectored(&mut cx, &parts);
        assert!(matches!(r, Poll::Ready(Ok(4))));
        write(&mut io, &mut cx, b"ef");
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_pending());
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
        assert_eq!(io.inner.writes, vec![b"abcdef".to_vec()]);
    }

    #[test]
    fn shutdown_writes_out_what_is_buffered_first() {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut io = Coalesce::new(Sink::default());
        write(&mut io, &mut cx, b"last words");
        assert!(Pin::new(&mut io).poll_shutdown(&mut cx).is_ready());
        assert_eq!(io.inner.writes, vec![b"last words".to_vec()]);
        assert!(io.inner.shut);
    }
}
