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

use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt as _;
use tokio::sync::{mpsc, watch};
use tokio::time::Sleep;

use crate::dispatch::CancelReason;
#[cfg(doc)]
use crate::dispatch::MAX_IN_FLIGHT;
use crate::notify::{NOTIFY_QUEUE, NotificationBytes, REPLAY_DELAY};
use crate::peer::Peer;
use crate::server::Server;
use crate::session::Session;
use crate::transport::wire::{Limits, Outbox, Recv, Wire};

/// At most this many messages are taken in one wake-up before writing, so
/// that a client streaming requests still gets answers.
const MAX_BATCH: usize = 64;

/// How long the calls still running when the input ends (a stdio client closed
/// stdin) may take to answer before they are cancelled.
const DRAIN_BOUND: Duration = Duration::from_secs(5);

enum Event {
    Recv(Recv),
    /// A finished call's response was appended to the buffer from this offset.
    Completed(usize),
    Notification(Option<NotificationBytes>),
    /// Time to send the latest states once more.
    Replay,
    Shutdown,
}

impl Server {
    /// Serves one MCP session over `wire` until the client leaves or
    /// `shutdown` turns `true` (or its sender is dropped; `None`: never).
    ///
    /// At shutdown every call still running is answered with a cancellation
    /// error, then [`Wire::close`] is called. Returns the read or write error
    /// that ended the connection, if any.
    pub async fn serve_wire<W: Wire>(
        &self,
        wire: W,
        limits: Limits,
        shutdown: Option<watch::Receiver<bool>>,
    ) -> io::Result<()> {
        run(self.clone(), wire, limits, shutdown).await
    }
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
    // The latest states (the selection) are replayed to this client at its
    // `ide_connected` and once more `REPLAY_DELAY` after it subscribed.
    let mut replay: Option<Pin<Box<Sleep>>> = None;
    let mut replayed_when_ready = false;
    loop {
        let mark = out.buf.len();
        // A call's own notifications (its progress) before the calls'
        // answers: what a call reported before it finished is queued before
        // its answer, and must reach the client before it (a client drops
        // progress for a request it has its answer to).
        let event = tokio::select! {
            biased;
            () = stopped(&mut shutdown) => Event::Shutdown,
            note = next_note(&mut own) => Event::Notification(note),
            () = session.complete(&mut out.buf) => Event::Completed(mark),
            note = next_note(&mut notes) => Event::Notification(note),
            () = replay_due(&mut replay) => Event::Replay,
            recv = wire.recv() => Event::Recv(recv),
        };
        let mut taken = 1;
        let mut next = Some(event);
        while let Some(event) = next.take() {
            match event {
                Event::Shutdown => {
                    cancel_all(&mut session, &mut out, CancelReason::Shutdown);
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
                Event::Recv(Recv::Message) => {
                    out.push(|buf| session.handle_with(wire.message(), wire.peer(), buf));
                }
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
                Event::Replay => {
                    replay = None;
                    push_latest(&server, &mut out);
                }
            }
            if !subscribed && session.is_initialized() {
                subscribed = true;
                notes = Some(server.notifier().subscribe());
                replay = Some(Box::pin(tokio::time::sleep(REPLAY_DELAY)));
            }
            if subscribed && !replayed_when_ready && session.is_ide_connected() {
                replayed_when_ready = true;
                push_latest(&server, &mut out);
            }
            // Take whatever else is ready without waiting, up to a batch.
            if taken < MAX_BATCH {
                taken += 1;
                let start = out.buf.len();
                if let Some(note) = own.as_mut().and_then(|rx| rx.try_recv().ok()) {
                    next = Some(Event::Notification(Some(note)));
                } else if session.try_complete(&mut out.buf) {
                    next = Some(Event::Completed(start));
                } else if let Some(note) = notes.as_mut().and_then(|rx| rx.try_recv().ok()) {
                    next = Some(Event::Notification(Some(note)));
                } else {
                    next = wire.recv().now_or_never().map(Event::Recv);
                }
            }
        }
        flush(&mut wire, &mut out, limits).await?;
    }
}

/// Appends the notifier's latest states to `out`.
fn push_latest(server: &Server, out: &mut Outbox) {
    for bytes in server.notifier().latest() {
        out.push(|buf| {
            buf.extend_from_slice(&bytes);
            true
        });
    }
}

async fn replay_due(replay: &mut Option<Pin<Box<Sleep>>>) {
    match replay {
        Some(sleep) => sleep.as_mut().await,
        None => std::future::pending().await,
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
fn cancel_all(session: &mut Session, out: &mut Outbox, reason: CancelReason) {
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
                cancel_all(session, out, CancelReason::Shutdown);
            }
            () = &mut deadline => {
                cancel_all(session, out, CancelReason::InputEnded);
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
    // Most writes complete at once: the write timeout's timer is set only
    // for one that has to wait for the client.
    let result = {
        let mut send = std::pin::pin!(wire.send(out));
        let first = std::future::poll_fn(|cx| Poll::Ready(send.as_mut().poll(cx))).await;
        match first {
            Poll::Ready(result) => result,
            Poll::Pending => {
                if let Ok(result) = tokio::time::timeout(limits.write_timeout, send).await {
                    result
                } else {
                    tracing::warn!(
                        timeout_ms = limits.write_timeout.as_millis(),
                        "client did not read its responses in time; disconnecting"
                    );
                    Err(io::ErrorKind::TimedOut.into())
                }
            }
        }
    };
    out.clear();
    result
}
