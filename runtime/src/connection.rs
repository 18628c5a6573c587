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
    wire: W,
    limits: Limits,
    shutdown: Option<watch::Receiver<bool>>,
) -> io::Result<()> {
    let mut connection = Connection::new(server, wire, limits, shutdown);
    loop {
        let event = connection.next_event().await;
        if let Some(end) = connection.take(event) {
            return connection.end(end).await;
        }
        connection.flush().await?;
    }
}

/// Why a connection ends.
enum End {
    Shutdown,
    Closed,
    Failed(io::Error),
}

/// One connection between wake-ups: its session, what waits to be sent,
/// and where notifications come from.
struct Connection<W> {
    server: Server,
    wire: W,
    limits: Limits,
    shutdown: Option<watch::Receiver<bool>>,
    session: Session,
    out: Outbox,
    /// The session's own notifications (its calls' progress), sent from
    /// the start.
    own: Option<mpsc::Receiver<NotificationBytes>>,
    /// The server-wide notifications, once the client is initialized.
    notes: Option<mpsc::Receiver<NotificationBytes>>,
    subscribed: bool,
    /// The latest states (the selection) are replayed to this client at its
    /// `ide_connected` and once more `REPLAY_DELAY` after it subscribed.
    replay: Option<Pin<Box<Sleep>>>,
    replayed_when_ready: bool,
}

impl<W: Wire> Connection<W> {
    fn new(
        server: Server,
        wire: W,
        limits: Limits,
        shutdown: Option<watch::Receiver<bool>>,
    ) -> Self {
        let mut session = Session::new(server.clone());
        let (peer, peer_notes) = Peer::channel(NOTIFY_QUEUE);
        session.set_peer(peer);
        Self {
            server,
            wire,
            limits,
            shutdown,
            session,
            out: Outbox::new(W::TERMINATOR),
            own: Some(peer_notes),
            notes: None,
            subscribed: false,
            replay: None,
            replayed_when_ready: false,
        }
    }

    /// Waits for the next thing to do.
    async fn next_event(&mut self) -> Event {
        let mark = self.out.buf.len();
        // A call's own notifications (its progress) before the calls'
        // answers: what a call reported before it finished is queued before
        // its answer, and must reach the client before it (a client drops
        // progress for a request it has its answer to).
        tokio::select! {
            biased;
            () = stopped(&mut self.shutdown) => Event::Shutdown,
            note = next_note(&mut self.own) => Event::Notification(note),
            () = self.session.complete(&mut self.out.buf) => Event::Completed(mark),
            note = next_note(&mut self.notes) => Event::Notification(note),
            () = replay_due(&mut self.replay) => Event::Replay,
            recv = self.wire.recv() => Event::Recv(recv),
        }
    }

    /// Handles `event`, then whatever else is ready without waiting, up to
    /// a batch; `Some` when the connection ends.
    fn take(&mut self, event: Event) -> Option<End> {
        let mut taken = 1;
        let mut next = Some(event);
        while let Some(event) = next.take() {
            if let Err(end) = self.handle(event) {
                return Some(end);
            }
            self.subscribe_when_ready();
            if taken < MAX_BATCH {
                taken += 1;
                next = self.ready();
            }
        }
        None
    }

    /// Handles one event; `Err` when the connection ends.
    fn handle(&mut self, event: Event) -> Result<(), End> {
        let out = &mut self.out;
        match event {
            Event::Shutdown => return Err(End::Shutdown),
            Event::Recv(Recv::Closed) => return Err(End::Closed),
            Event::Recv(Recv::Failed(err)) => return Err(End::Failed(err)),
            Event::Recv(Recv::Message) => {
                let (session, wire) = (&mut self.session, &self.wire);
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
            Event::Notification(None) => self.notes = None,
            Event::Replay => {
                self.replay = None;
                push_latest(&self.server, out);
            }
        }
        Ok(())
    }

    /// Subscribes to the server's notifications once the client is
    /// initialized, and replays the latest states once it is connected.
    fn subscribe_when_ready(&mut self) {
        if !self.subscribed && self.session.is_initialized() {
            self.subscribed = true;
            self.notes = Some(self.server.notifier().subscribe());
            self.replay = Some(Box::pin(tokio::time::sleep(REPLAY_DELAY)));
        }
        if self.subscribed && !self.replayed_when_ready && self.session.is_ide_connected() {
            self.replayed_when_ready = true;
            push_latest(&self.server, &mut self.out);
        }
    }

    /// The next event that is ready now, in the order of [`next_event`](Self::next_event).
    fn ready(&mut self) -> Option<Event> {
        let start = self.out.buf.len();
        if let Some(note) = self.own.as_mut().and_then(|rx| rx.try_recv().ok()) {
            Some(Event::Notification(Some(note)))
        } else if self.session.try_complete(&mut self.out.buf) {
            Some(Event::Completed(start))
        } else if let Some(note) = self.notes.as_mut().and_then(|rx| rx.try_recv().ok()) {
            Some(Event::Notification(Some(note)))
        } else {
            self.wire.recv().now_or_never().map(Event::Recv)
        }
    }

    /// Sends what is left and ends the connection: at shutdown, each call
    /// still running is answered as cancelled; at the end of the input, the
    /// calls may still answer (see [`DRAIN_BOUND`]).
    async fn end(mut self, end: End) -> io::Result<()> {
        match end {
            End::Shutdown => {
                cancel_all(&mut self.session, &mut self.out, CancelReason::Shutdown);
                let _ = self.flush().await;
                self.wire.close().await;
                Ok(())
            }
            End::Closed => {
                self.flush().await?;
                if W::DRAIN_ON_EOF {
                    self.drain().await;
                }
                Ok(())
            }
            End::Failed(err) => {
                let _ = self.flush().await;
                Err(err)
            }
        }
    }

    /// Answers the calls still running after the input ended: with their
    /// results when they finish within [`DRAIN_BOUND`], else with a cancellation.
    async fn drain(&mut self) {
        let deadline = tokio::time::sleep(DRAIN_BOUND);
        tokio::pin!(deadline);
        while self.session.in_flight() > 0 {
            let start = self.out.buf.len();
            tokio::select! {
                () = stopped(&mut self.shutdown) => {
                    cancel_all(&mut self.session, &mut self.out, CancelReason::Shutdown);
                }
                () = &mut deadline => {
                    cancel_all(&mut self.session, &mut self.out, CancelReason::InputEnded);
                }
                () = self.session.complete(&mut self.out.buf) => self.out.record(start),
            }
            if self.flush().await.is_err() {
                return;
            }
        }
    }

    async fn flush(&mut self) -> io::Result<()> {
        flush(&mut self.wire, &mut self.out, self.limits).await
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
