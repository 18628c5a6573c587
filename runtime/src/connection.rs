//! The loop that drives one [`Session`] over one transport.
//!
//! Each wake-up handles everything that is ready — incoming messages,
//! finished calls, notifications — appending the answers to one buffer, then
//! writes and flushes once. At most [`MAX_IN_FLIGHT`] calls run per
//! connection (more are refused at once), at most [`MAX_BATCH`] messages are
//! taken before writing, and a client that does not take its answers within
//! the write timeout is disconnected, so a connection's memory stays bounded.
//! When the server shuts down, or the input ends and the running calls do not
//! finish within [`DRAIN_BOUND`], each call still running is answered with an
//! error saying it was cancelled: no request goes unanswered.

use std::future::Future;
use std::io;
use std::time::Duration;

use futures_util::FutureExt as _;
use tokio::sync::{mpsc, watch};

#[cfg(doc)]
use crate::dispatch::MAX_IN_FLIGHT;
use crate::notify::{NOTIFY_QUEUE, NotificationBytes};
use crate::peer::Peer;
use crate::server::Server;
use crate::session::Session;

/// At most this many messages are taken in one wake-up before writing, so
/// that a client streaming requests still gets answers.
const MAX_BATCH: usize = 64;

/// How long the calls still running when the input ends (a stdio client closed
/// stdin) may take to answer before they are cancelled.
const DRAIN_BOUND: Duration = Duration::from_secs(5);

/// An output buffer grown beyond this is shrunk back once [`SHRINK_AFTER`]
/// flushes in a row used less than a quarter of it: one huge result must not
/// pin its memory for the connection's life, but a client that keeps asking
/// for large results (`getDiagnostics` over a big workspace) must not pay for
/// growing the buffer again, page faults and copies, on every answer.
const KEEP_BUFFER: usize = 1 << 20;

/// See [`KEEP_BUFFER`].
const SHRINK_AFTER: u32 = 32;

/// What a transport's read produced.
pub(crate) enum Recv {
    /// A message is ready in [`Wire::message`].
    Message,
    /// A message was refused by the transport (e.g. a line over the size
    /// limit); answer with this JSON-RPC error and carry on.
    Refused(i32, String),
    /// Nothing for the session (a control frame, an empty line).
    Skip,
    /// The connection is over (EOF, close, or a fatal protocol error the
    /// transport already answered).
    Closed,
    /// Reading failed.
    Failed(io::Error),
}

/// Answers written by the session, delimited, waiting to be sent.
#[derive(Default)]
pub(crate) struct Outbox {
    pub(crate) buf: Vec<u8>,
    /// `(start, end)` of each message in `buf`.
    pub(crate) spans: Vec<(usize, usize)>,
    /// Appended after each message (the newline of line-delimited transports).
    terminator: Option<u8>,
    /// Flushes in a row that used less than a quarter of the buffer.
    small_flushes: u32,
}

impl Outbox {
    pub(crate) fn new(terminator: Option<u8>) -> Self {
        Self {
            terminator,
            ..Self::default()
        }
    }

    /// Runs `write` on the buffer and, when it wrote a message, records it.
    fn push(&mut self, write: impl FnOnce(&mut Vec<u8>) -> bool) {
        let start = self.buf.len();
        if write(&mut self.buf) {
            self.record(start);
        } else {
            self.buf.truncate(start);
        }
    }

    /// Records the message written to the buffer from `start` on.
    fn record(&mut self, start: usize) {
        self.spans.push((start, self.buf.len()));
        if let Some(t) = self.terminator {
            self.buf.push(t);
        }
    }

    /// Each message's bytes.
    pub(crate) fn messages(&self) -> impl Iterator<Item = &[u8]> {
        self.spans.iter().map(|&(s, e)| &self.buf[s..e])
    }

    fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    fn clear(&mut self) {
        if self.buf.len() > self.buf.capacity() / 4 {
            self.small_flushes = 0;
        } else {
            self.small_flushes = self.small_flushes.saturating_add(1);
        }
        self.buf.clear();
        self.spans.clear();
        if self.buf.capacity() > KEEP_BUFFER && self.small_flushes >= SHRINK_AFTER {
            self.buf.shrink_to(KEEP_BUFFER / 16);
            self.small_flushes = 0;
        }
    }
}

/// A message transport: WebSocket, lines, or in-memory.
pub(crate) trait Wire: Send {
    /// Appended after each outgoing message, for line-delimited transports.
    const TERMINATOR: Option<u8>;
    /// Whether the end of input still lets running calls answer (a pipe whose
    /// writer closed may still be read from; a closed socket may not).
    const DRAIN_ON_EOF: bool;
    /// Waits for the next incoming message. Must be cancel-safe.
    fn recv(&mut self) -> impl Future<Output = Recv> + Send;
    /// The message the last [`Recv::Message`] announced.
    fn message(&self) -> &[u8];
    /// Writes every message of `out` and flushes once.
    fn send(&mut self, out: &Outbox) -> impl Future<Output = io::Result<()>> + Send;
    /// Closes the connection because the server shuts down.
    fn close(&mut self) -> impl Future<Output = ()> + Send;
}

/// Limits of one connection.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// How long a write may wait on a client that does not read.
    pub(crate) write_timeout: Duration,
}

enum Event {
    Recv(Recv),
    /// A finished call's response was appended to the buffer from this offset.
    Completed(usize),
    Notification(Option<NotificationBytes>),
    Shutdown,
}

/// Serves one connection until the client leaves or `shutdown` turns `true`
/// (or its sender is dropped; `None`: never).
pub(crate) async fn run<W: Wire>(
    server: Server,
    mut wire: W,
    limits: Limits,
    mut shutdown: Option<watch::Receiver<bool>>,
) -> io::Result<()> {
    let mut session = Session::new(server.clone());
    let mut out = Outbox::new(W::TERMINATOR);
    // The session's own notifications (its calls' progress) are sent from
    // the start; the server-wide ones once the client is initialized.
    let (peer, peer_notes) = Peer::channel(NOTIFY_QUEUE);
    session.set_peer(peer);
    let mut own: Option<mpsc::Receiver<NotificationBytes>> = Some(peer_notes);
    let mut notes: Option<mpsc::Receiver<NotificationBytes>> = None;
    let mut subscribed = false;
    loop {
        let mark = out.buf.len();
        let event = tokio::select! {
            biased;
            () = stopped(&mut shutdown) => Event::Shutdown,
            () = session.complete(&mut out.buf) => Event::Completed(mark),
            note = next_note(&mut own) => Event::Notification(note),
            note = next_note(&mut notes) => Event::Notification(note),
            recv = wire.recv() => Event::Recv(recv),
        };
        let mut taken = 1;
        let mut next = Some(event);
        while let Some(event) = next.take() {
            match event {
                Event::Shutdown => {
                    cancel_all(&mut session, &mut out, "the server is shutting down");
                    let _ = flush(&mut wire, &mut out, limits).await;
                    wire.close().await;
                    return Ok(());
                }
                Event::Recv(Recv::Closed) => {
                    flush(&mut wire, &mut out, limits).await?;
                    if W::DRAIN_ON_EOF {
                        drain(&mut session, &mut wire, &mut out, limits, &mut shutdown).await;
                    }
                    return Ok(());
                }
                Event::Recv(Recv::Failed(err)) => {
                    let _ = flush(&mut wire, &mut out, limits).await;
                    return Err(err);
                }
                Event::Recv(Recv::Message) => out.push(|buf| session.handle(wire.message(), buf)),
                Event::Recv(Recv::Refused(code, message)) => out.push(|buf| {
                    crate::jsonrpc::write_error(buf, None, code, &message);
                    true
                }),
                Event::Completed(start) => out.record(start),
                Event::Recv(Recv::Skip) => {}
                Event::Notification(Some(bytes)) => out.push(|buf| {
                    buf.extend_from_slice(&bytes);
                    true
                }),
                // The server dropped its notifier. (The session's own queue
                // never closes: the session holds its sender.)
                Event::Notification(None) => notes = None,
            }
            if !subscribed && session.is_initialized() {
                subscribed = true;
                notes = Some(server.notifier().subscribe());
            }
            // Take whatever else is ready without waiting, up to a batch.
            if taken < MAX_BATCH {
                taken += 1;
                let start = out.buf.len();
                if session.try_complete(&mut out.buf) {
                    next = Some(Event::Completed(start));
                } else if let Some(note) = [&mut own, &mut notes]
                    .into_iter()
                    .find_map(|rx| rx.as_mut().and_then(|rx| rx.try_recv().ok()))
                {
                    next = Some(Event::Notification(Some(note)));
                } else {
                    next = wire.recv().now_or_never().map(Event::Recv);
                }
            }
        }
        flush(&mut wire, &mut out, limits).await?;
    }
}

async fn stopped(shutdown: &mut Option<watch::Receiver<bool>>) {
    match shutdown {
        // A dropped sender means the server is gone: stop too.
        Some(rx) => drop(rx.wait_for(|stop| *stop).await),
        None => std::future::pending().await,
    }
}

/// Answers every call still running with a cancellation error.
fn cancel_all(session: &mut Session, out: &mut Outbox, reason: &str) {
    loop {
        let start = out.buf.len();
        if !session.cancel_next(&mut out.buf, reason) {
            break;
        }
        out.record(start);
    }
}

/// Answers the calls still running after the input ended: with their
/// results when they finish within [`DRAIN_BOUND`], else with a cancellation.
async fn drain<W: Wire>(
    session: &mut Session,
    wire: &mut W,
    out: &mut Outbox,
    limits: Limits,
    shutdown: &mut Option<watch::Receiver<bool>>,
) {
    let deadline = tokio::time::sleep(DRAIN_BOUND);
    tokio::pin!(deadline);
    while session.in_flight() > 0 {
        let start = out.buf.len();
        tokio::select! {
            () = stopped(shutdown) => {
                cancel_all(session, out, "the server is shutting down");
            }
            () = &mut deadline => {
                cancel_all(session, out, "the input ended and the call did not finish in time");
            }
            () = session.complete(&mut out.buf) => out.record(start),
        }
        if flush(wire, out, limits).await.is_err() {
            return;
        }
    }
}

async fn next_note(
    notes: &mut Option<mpsc::Receiver<NotificationBytes>>,
) -> Option<NotificationBytes> {
    match notes {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn flush<W: Wire>(wire: &mut W, out: &mut Outbox, limits: Limits) -> io::Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    let result =
        if let Ok(result) = tokio::time::timeout(limits.write_timeout, wire.send(out)).await {
            result
        } else {
            tracing::warn!(
                timeout_ms = limits.write_timeout.as_millis(),
                "client did not read its responses in time; disconnecting"
            );
            Err(io::ErrorKind::TimedOut.into())
        };
    out.clear();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flush_of(out: &mut Outbox, bytes: usize) {
        out.push(|buf| {
            buf.resize(buf.len() + bytes, b' ');
            true
        });
        out.clear();
    }

    #[test]
    fn a_large_buffer_is_kept_while_large_answers_come_and_shrunk_after() {
        let mut out = Outbox::new(None);
        flush_of(&mut out, 3 << 20);
        let grown = out.buf.capacity();
        assert!(grown >= 3 << 20);
        // Large answers keep coming: the buffer is reused as it is.
        for _ in 0..100 {
            flush_of(&mut out, 2 << 20);
            assert_eq!(out.buf.capacity(), grown);
        }
        // Small ones only: kept for a while, then given back.
        for _ in 1..SHRINK_AFTER {
            flush_of(&mut out, 100);
            assert_eq!(out.buf.capacity(), grown);
        }
        flush_of(&mut out, 100);
        assert!(out.buf.capacity() <= KEEP_BUFFER, "{}", out.buf.capacity());
    }
}
