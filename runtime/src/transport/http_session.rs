//! 2025-11-25 sessions over Streamable HTTP: an `initialize` POST opens one
//! (its id goes back in `Mcp-Session-Id`), later POSTs name it, DELETE ends
//! it. Each session is one [`Session`](crate::Session) driven by the same
//! connection loop as a socket's; its "wire" takes the POSTs of that session
//! and hands each response to the POST waiting for it. A `tools/call` POST
//! also gets its call's progress and notifications, on a channel of its own
//! (the call's [`Peer`]), which it streams before the response
//! ([`http_sse`](super::http_sse)).
//!
//! Sessions are bounded in number, and one idle for longer than the idle
//! bound (no request running, none received) is ended.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

use super::http_sse::CALL_NOTES;
use crate::connection::{self, Outbox, Recv, Wire};
use crate::notify::NotificationBytes;
use crate::peer::Peer;
use crate::server::Server;

/// How many messages may wait for one session's loop.
pub(crate) const SESSION_QUEUE: usize = 64;

/// One POST handed to a session: the message, and where its answer goes.
pub(crate) struct Post {
    message: Bytes,
    /// The request's id (JSON text) and the POST waiting for its answer.
    waiter: Option<(String, oneshot::Sender<Vec<u8>>)>,
    /// Where the call the message starts reports to: its POST.
    peer: Option<Peer>,
}

/// What a POST of a request waits for: the response, and, for a call, the
/// progress and notifications it sends before it.
pub(crate) struct Answer {
    pub(crate) response: oneshot::Receiver<Vec<u8>>,
    pub(crate) notes: Option<mpsc::Receiver<NotificationBytes>>,
}

struct Entry {
    tx: mpsc::Sender<Post>,
    last_used: Instant,
    /// POSTs of this session waiting for an answer.
    waiting: usize,
}

/// The open sessions of one HTTP server.
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Entry>>,
    max: usize,
    idle: Duration,
    /// Session loops still running (a loop outlives its entry briefly).
    loops: Arc<AtomicUsize>,
}

/// Why a POST could not reach a session.
pub(crate) enum Missing {
    /// No session has this id (never opened, ended by DELETE, or idle too long).
    Unknown,
    /// The session's queue is full.
    Busy,
}

impl Sessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
            max,
            idle,
            loops: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// How many sessions are open.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// How many session loops are running.
    pub(crate) fn loops(&self) -> usize {
        self.loops.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic while holding this lock leaves the map consistent (every
        // change is one insert or remove): keep serving.
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Opens a session; `None` when the most sessions are open.
    pub(crate) fn open(&self, server: &Server) -> io::Result<Option<String>> {
        let id = crate::discovery::fresh_token()?;
        let mut map = self.lock();
        if map.len() >= self.max {
            return Ok(None);
        }
        let (tx, rx) = mpsc::channel(SESSION_QUEUE);
        let wire = PostWire {
            rx,
            current: Bytes::new(),
            peer: None,
            waiting: HashMap::new(),
        };
        let loops = Arc::clone(&self.loops);
        loops.fetch_add(1, Ordering::Relaxed);
        let limits = connection::Limits {
            // Answers go into channels: sending never waits on a client.
            write_timeout: Duration::from_mins(1),
        };
        let server = server.clone();
        tokio::spawn(async move {
            let _ = connection::run(server, wire, limits, None).await;
            loops.fetch_sub(1, Ordering::Relaxed);
        });
        map.insert(
            id.clone(),
            Entry {
                tx,
                last_used: Instant::now(),
                waiting: 0,
            },
        );
        tracing::debug!(sessions = map.len(), "HTTP session opened");
        Ok(Some(id))
    }

    /// Hands a notification or a response to session `id`.
    pub(crate) fn post(&self, id: &str, message: Bytes) -> Result<(), Missing> {
        self.send(
            id,
            Post {
                message,
                waiter: None,
                peer: None,
            },
        )
    }

    /// Hands request `request_id` to session `id`; returns what its POST
    /// waits for: the response and, when the request `streams` (a call),
    /// what the call sends before it. Call [`answered`](Self::answered)
    /// once done waiting.
    pub(crate) fn request(
        &self,
        id: &str,
        message: Bytes,
        request_id: &str,
        streams: bool,
    ) -> Result<Answer, Missing> {
        let (tx, response) = oneshot::channel();
        let (peer, notes) = streams.then(|| Peer::channel(CALL_NOTES)).unzip();
        let post = Post {
            message,
            waiter: Some((request_id.to_owned(), tx)),
            peer,
        };
        self.send(id, post)?;
        Ok(Answer { response, notes })
    }

    fn send(&self, id: &str, post: Post) -> Result<(), Missing> {
        let mut map = self.lock();
        let entry = map.get_mut(id).ok_or(Missing::Unknown)?;
        entry.last_used = Instant::now();
        let waits = post.waiter.is_some();
        entry.tx.try_send(post).map_err(|_| Missing::Busy)?;
        if waits {
            entry.waiting += 1;
        }
        Ok(())
    }

    /// A POST of session `id` got its answer (or gave up waiting).
    pub(crate) fn answered(&self, id: &str) {
        if let Some(entry) = self.lock().get_mut(id) {
            entry.waiting = entry.waiting.saturating_sub(1);
            entry.last_used = Instant::now();
        }
    }

    /// Ends session `id`: its loop stops and its running calls are aborted.
    /// `false` when there is no such session.
    pub(crate) fn end(&self, id: &str) -> bool {
        let removed = self.lock().remove(id).is_some();
        if removed {
            tracing::debug!("HTTP session ended");
        }
        removed
    }

    /// Ends every session idle for longer than the idle bound.
    pub(crate) fn reap(&self) {
        let idle = self.idle;
        self.lock().retain(|_, entry| {
            let keep = entry.waiting > 0 || entry.last_used.elapsed() < idle;
            if !keep {
                tracing::debug!("HTTP session ended: idle too long");
            }
            keep
        });
    }

    /// Ends every session (the server shuts down).
    pub(crate) fn clear(&self) {
        self.lock().clear();
    }

    /// How often to look for idle sessions.
    pub(crate) fn reap_every(&self) -> Duration {
        (self.idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(30))
    }
}

/// A session's side of its POSTs.
struct PostWire {
    rx: mpsc::Receiver<Post>,
    current: Bytes,
    /// Where the call `current` starts reports to.
    peer: Option<Peer>,
    /// Request id (JSON text) → the POST waiting for its answer.
    waiting: HashMap<String, oneshot::Sender<Vec<u8>>>,
}

impl Wire for PostWire {
    const TERMINATOR: Option<u8> = None;
    // An ended session aborts its calls: no one is left to read their answers.
    const DRAIN_ON_EOF: bool = false;

    async fn recv(&mut self) -> Recv {
        match self.rx.recv().await {
            Some(post) => {
                if let Some((id, tx)) = post.waiter {
                    self.waiting.insert(id, tx);
                }
                self.current = post.message;
                self.peer = post.peer;
                Recv::Message
            }
            None => Recv::Closed,
        }
    }

    fn message(&self) -> &[u8] {
        &self.current
    }

    async fn send(&mut self, out: &Outbox) -> io::Result<()> {
        for message in out.messages() {
            // A call's own notifications went to its POST (`peer`). The
            // server-wide ones have no id, and this transport offers no
            // stream for them (GET is refused): they are dropped.
            let Some(id) = response_id(message) else {
                continue;
            };
            if let Some(tx) = self.waiting.remove(id) {
                // The POST may have gone (the client disconnected): fine.
                let _ = tx.send(message.to_vec());
            }
        }
        Ok(())
    }

    async fn close(&mut self) {}

    fn peer(&self) -> Option<&Peer> {
        self.peer.as_ref()
    }
}

/// The id of a response this runtime wrote (`{"jsonrpc":"2.0","id":<id>,…`).
pub(crate) fn response_id(message: &[u8]) -> Option<&str> {
    const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    let rest = std::str::from_utf8(message.strip_prefix(PREFIX)?).ok()?;
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<&RawValue>();
    let id = values.next()?.ok()?;
    Some(id.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_ids_are_read_from_the_written_bytes() {
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":12,"result":{}}"#),
            Some("12")
        );
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":"a,\"b","error":{}}"#),
            Some(r#""a,\"b""#)
        );
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","method":"selection_changed"}"#),
            None
        );
    }
}
