//! 2025-11-25 sessions over Streamable HTTP: an `initialize` POST opens one
//! (its id goes back in `Mcp-Session-Id`), later POSTs name it, DELETE ends
//! it.
//!
//! Every POST of a session is served in its own task, as a 2026-07-28
//! exchange is ([`exchange`](super::exchange)): a
//! [`Session`](crate::Session) resumed at the negotiated version serves its
//! one request. So the session itself is only that version and a table of
//! its calls still running, each named by its request id: a
//! `notifications/cancelled` posted to the session stops one, and ending the
//! session stops them all (their POSTs answer that the session ended).
//!
//! A session may have one event stream open (`GET /mcp`, see
//! [`listen`](Sessions::listen)): the server-wide notifications and the
//! session's own ones sent outside any POST go there. A second GET replaces
//! the first, which ends.
//!
//! Sessions are bounded in number, and one idle for longer than the idle
//! bound (no request being answered, none received, no event stream open)
//! is ended.

use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;
use tokio::sync::{mpsc, oneshot};

use crate::notify::{NOTIFY_QUEUE, NotificationBytes};

/// Why a running call of a session was stopped before it answered. (Its
/// stop's sender dropped: the session ended.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The client sent `notifications/cancelled` for it.
    Cancelled,
    /// The session ended (DELETE, idleness, the server shutting down).
    Ended,
}

/// A running call of a session: its request id (JSON text), its serial
/// number, and what stops the POST waiting for it.
type Entry = (Box<str>, u64, oneshot::Sender<Stop>);

/// The running calls of one session (a few: each holds an in-flight
/// permit); `None` once the session ended.
type Running = Option<Vec<Entry>>;

/// One open session.
struct State {
    version: &'static str,
    /// Requests of this session being answered.
    waiting: AtomicUsize,
    /// When a request of it last began or ended, in milliseconds since
    /// the sessions' epoch.
    last_used: AtomicU64,
    running: Mutex<Running>,
    /// The session's event stream, while one is open: where its own
    /// notifications sent outside a POST go.
    stream: Mutex<Option<mpsc::Sender<NotificationBytes>>>,
}

impl State {
    fn running(&self) -> MutexGuard<'_, Running> {
        // Every change under this lock is one insert or remove: a panic
        // while holding it leaves the table consistent.
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops every running call (later ones stop as soon as they
    /// register) and ends the event stream.
    fn end(&self) {
        // Dropping the senders stops their POSTs with `Stop::Ended`.
        drop(self.running().take());
        drop(self.stream().take());
    }

    fn stream(&self) -> MutexGuard<'_, Option<mpsc::Sender<NotificationBytes>>> {
        // Every change under this lock is one assignment.
        self.stream.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `note` on the event stream, if one is open and has room.
    fn send(&self, note: NotificationBytes) -> bool {
        self.stream()
            .as_ref()
            .is_some_and(|tx| tx.try_send(note).is_ok())
    }
}

/// Session ids are 128 random bits chosen by this server: `FxHash` is enough
/// (a client cannot choose the ids it would flood one bucket with), and
/// cheaper than `SipHash`.
type SessionMap = FxHashMap<String, Arc<State>>;

/// The open sessions of one HTTP server.
pub(crate) struct Sessions {
    map: Mutex<SessionMap>,
    max: usize,
    idle: Duration,
    /// Where the sessions' times count from.
    epoch: Instant,
    /// Calls of sessions still running (registered, not yet answered).
    calls: Arc<AtomicUsize>,
    /// The serial number of the next running call.
    serial: AtomicU64,
}

impl Sessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        Self {
            map: Mutex::new(SessionMap::default()),
            max,
            idle,
            epoch: Instant::now(),
            calls: Arc::new(AtomicUsize::new(0)),
            serial: AtomicU64::new(0),
        }
    }

    /// How many sessions are open.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// How many calls of sessions are running.
    pub(crate) fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, SessionMap> {
        // A panic while holding this lock leaves the map consistent (every
        // change is one insert or remove): keep serving.
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn now(&self) -> u64 {
        millis_since(self.epoch)
    }

    /// Opens a session at the negotiated `version`; `None` when the most
    /// sessions are open.
    pub(crate) fn open(&self, version: &'static str) -> io::Result<Option<String>> {
        let id = crate::discovery::fresh_token()?;
        let mut map = self.lock();
        if map.len() >= self.max {
            return Ok(None);
        }
        let state = State {
            version,
            waiting: AtomicUsize::new(0),
            last_used: AtomicU64::new(self.now()),
            running: Mutex::new(Some(Vec::new())),
            stream: Mutex::new(None),
        };
        map.insert(id.clone(), Arc::new(state));
        tracing::debug!(sessions = map.len(), "HTTP session opened");
        Ok(Some(id))
    }

    /// Session `id`, for one request until the returned ticket is dropped;
    /// `None` when there is no such session.
    pub(crate) fn begin(&self, id: &str) -> Option<Ticket<'_>> {
        let state = Arc::clone(self.lock().get(id)?);
        state.waiting.fetch_add(1, Ordering::Relaxed);
        state.last_used.store(self.now(), Ordering::Relaxed);
        Some(Ticket {
            sessions: self,
            state,
        })
    }

    /// Opens the event stream of session `id`, replacing (ending) the one
    /// open before; `None` when there is no such session. The session is in
    /// use, never reaped as idle, while the stream is open.
    pub(crate) fn listen(&self, id: &str) -> Option<Listening> {
        let state = Arc::clone(self.lock().get(id)?);
        let (tx, notes) = mpsc::channel(NOTIFY_QUEUE);
        {
            // Under the lock of the calls, which says whether it ended.
            let running = state.running();
            running.as_ref()?;
            if state.stream().replace(tx).is_some() {
                tracing::debug!("HTTP event stream replaced by a new GET");
            }
        }
        state.waiting.fetch_add(1, Ordering::Relaxed);
        Some(Listening {
            state,
            epoch: self.epoch,
            notes,
        })
    }

    /// Ends session `id`: its running calls are stopped. `false` when there
    /// is no such session.
    pub(crate) fn end(&self, id: &str) -> bool {
        let removed = self.lock().remove(id);
        if let Some(state) = &removed {
            state.end();
            tracing::debug!("HTTP session ended");
        }
        removed.is_some()
    }

    /// Ends every session idle for longer than the idle bound.
    pub(crate) fn reap(&self) {
        let now = self.now();
        let idle = u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX);
        self.lock().retain(|_, state| {
            let keep = state.waiting.load(Ordering::Relaxed) > 0
                || now.saturating_sub(state.last_used.load(Ordering::Relaxed)) < idle;
            if !keep {
                state.end();
                tracing::debug!("HTTP session ended: idle too long");
            }
            keep
        });
    }

    /// Ends every session (the server shuts down).
    pub(crate) fn clear(&self) {
        for (_, state) in self.lock().drain() {
            state.end();
        }
    }

    /// How often to look for sessions idle for longer than `idle`.
    pub(crate) fn reap_every(idle: Duration) -> Duration {
        (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(30))
    }
}

/// One request of a session being answered: it keeps the session from
/// being reaped as idle.
pub(crate) struct Ticket<'a> {
    sessions: &'a Sessions,
    state: Arc<State>,
}

impl Ticket<'_> {
    /// Stops the running call `request` (JSON text) of this session, as the
    /// client's `notifications/cancelled` asks.
    pub(crate) fn cancel(&self, request: &str) {
        let mut running = self.state.running();
        let Some(running) = running.as_mut() else {
            return; // ended meanwhile: its calls are stopped already
        };
        // Every call of that id: a client that reused the id of a call still
        // running cancels both.
        let mut found = false;
        for (_, _, stop) in running.extract_if(.., |(id, _, _)| **id == *request) {
            found = true;
            let _ = stop.send(Stop::Cancelled);
        }
        if !found {
            tracing::debug!(id = request, "cancellation of a request not in flight");
        }
    }

    /// Where the notifications of this session's calls go once their POST
    /// was answered: its event stream, whichever is open when they come.
    pub(crate) fn late(&self) -> Late {
        Late(Arc::clone(&self.state))
    }

    /// The session's negotiated protocol version.
    pub(crate) fn version(&self) -> &'static str {
        self.state.version
    }

    /// Registers the call of request `id` (JSON text) as running, until the
    /// returned [`Call`] is dropped. If the session already ended, the call
    /// is stopped at once.
    pub(crate) fn running(&self, id: &str) -> RunningCall {
        let (tx, stop) = oneshot::channel();
        let serial = self.sessions.serial.fetch_add(1, Ordering::Relaxed);
        let registered = match self.state.running().as_mut() {
            Some(running) => {
                running.push((id.into(), serial, tx));
                true
            }
            None => false, // the sender is dropped: `Stop::Ended`
        };
        if registered {
            self.sessions.calls.fetch_add(1, Ordering::Relaxed);
        }
        RunningCall {
            state: Arc::clone(&self.state),
            calls: Arc::clone(&self.sessions.calls),
            serial: registered.then_some(serial),
            stop,
        }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        self.state
            .last_used
            .store(self.sessions.now(), Ordering::Relaxed);
        self.state.waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A call of a session, registered as running while its POST waits.
pub(crate) struct RunningCall {
    state: Arc<State>,
    calls: Arc<AtomicUsize>,
    /// Its serial number, if it was registered.
    serial: Option<u64>,
    stop: oneshot::Receiver<Stop>,
}

impl RunningCall {
    /// Resolves when the call is to be stopped, and says why. Cancel-safe.
    pub(crate) async fn stopped(&mut self) -> Stop {
        (&mut self.stop).await.unwrap_or(Stop::Ended)
    }
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        let Some(serial) = self.serial else {
            return;
        };
        self.calls.fetch_sub(1, Ordering::Relaxed);
        if let Some(running) = self.state.running().as_mut() {
            running.retain(|(_, s, _)| *s != serial);
        }
    }
}

/// The open event stream of a session: the notifications for it arrive
/// on [`notes`](Self::notes), which ends when the session ends or a newer
/// stream replaces this one.
pub(crate) struct Listening {
    state: Arc<State>,
    epoch: Instant,
    /// The session's own notifications.
    pub(crate) notes: mpsc::Receiver<NotificationBytes>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.state
            .last_used
            .store(millis_since(self.epoch), Ordering::Relaxed);
        self.state.waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A session's event stream as a target of notifications sent after their
/// POST was answered (see [`Ticket::late`]).
#[derive(Clone)]
pub(crate) struct Late(Arc<State>);

impl Late {
    /// Sends what `notes` still receives to the session's event stream
    /// (dropped when none is open), until every sender of `notes` is gone
    /// or the session ends.
    pub(crate) async fn forward(self, mut notes: mpsc::Receiver<NotificationBytes>) {
        while let Some(note) = notes.recv().await {
            if self.0.running().is_none() {
                return;
            }
            if !self.0.send(note) {
                tracing::debug!("a notification after its POST found no event stream; dropped");
            }
        }
    }
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("open", &self.len())
            .finish()
    }
}

/// Milliseconds from `epoch` to now.
fn millis_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}
