//! Observation off the forwarding path: the messages of both directions go,
//! in order, through a bounded queue to a thread that observes them, so that
//! a large `didOpen` (or any message) never holds up the next one. A large
//! editor message goes in the pieces it was forwarded in and is put
//! together on that thread: the forwarding thread never touches more memory
//! than a few reused pieces. The few
//! messages whose verdict matters are observed inline once the queue has
//! drained: our code action's `workspace/executeCommand`, the editor's
//! responses, and the server's answers to the requests the observer
//! rewrites or records the answers of (code actions, pull diagnostics,
//! `initialize`), whose ids the hand-off notes as they pass, and, while the
//! IDE awaits answers of its own, the server's answers to them (never
//! forwarded).

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::pump::{Assembly, Piece, Spare, Watch};
use super::shared::Shared;
use crate::framing::Message;
use crate::observer::{ClientVerdict, Interest, ServerVerdict};
use crate::sync::lock;

/// Which way a queued message went.
#[derive(Clone, Copy, Debug)]
enum From {
    Editor,
    Server,
}

/// How many editor messages may wait for the observer before forwarding
/// waits for it.
const QUEUE: usize = 1024;

/// The longest wait for the queue to drain before an inline observation
/// (a stuck observer must not stop forwarding).
const DRAIN_LIMIT: Duration = Duration::from_secs(1);

/// A [`Watch`] that hands the editor's messages to an observer thread.
pub struct HandOff {
    inner: Arc<dyn Watch>,
    queue: SyncSender<(From, Item)>,
    sent: AtomicU64,
    /// Piece buffers the observer thread is done with, for the reader.
    spent: Arc<Mutex<Spare>>,
    /// The ids (as JSON text) of the requests whose answers the observer
    /// matches to them ([`Interest::answered_specially`]) not answered yet:
    /// their answers are observed inline, after everything queued before.
    special: Mutex<HashSet<String>>,
    /// Which other messages need a verdict: the observer says.
    interest: Arc<Interest>,
    done: Arc<(Mutex<u64>, Condvar)>,
}

/// What goes through the queue.
enum Item {
    /// A message, whole.
    Message(Message),
    /// A piece of a large editor message, put together on the thread.
    Piece(Piece),
}

impl HandOff {
    /// Starts the observer thread over `inner`.
    pub fn new(inner: Arc<dyn Watch>) -> std::io::Result<Self> {
        let interest = inner.interest().unwrap_or_default();
        let (queue, items) = sync_channel::<(From, Item)>(QUEUE);
        let done = Arc::new((Mutex::new(0_u64), Condvar::new()));
        let spent = Arc::new(Mutex::new(Spare::default()));
        let (watch, counter, free) = (Arc::clone(&inner), Arc::clone(&done), Arc::clone(&spent));
        std::thread::Builder::new()
            .name("lsp-proxy-observe".into())
            .spawn(move || {
                crate::background::lower_priority();
                let mut assembly = Assembly::default();
                for (direction, item) in items {
                    // The observer catches its own panics (the one boundary,
                    // `Observer::from_client`): nothing here unwinds.
                    match (direction, item) {
                        (From::Editor, Item::Message(message)) => {
                            watch.queued_editor_message(&Shared::new(message));
                        }
                        (From::Server, Item::Message(message)) => {
                            watch.queued_server_message(&Shared::new(message));
                        }
                        (_, Item::Piece(piece)) => {
                            let (spent, whole) = assembly.add(piece);
                            if let Some(buffer) = spent {
                                lock(&free).keep(buffer);
                            }
                            if let Some(message) = whole {
                                let message = Shared::new(message);
                                watch.queued_editor_message(&message);
                                assembly.lend(message);
                            }
                        }
                    }
                    *lock(&counter.0) += 1;
                    counter.1.notify_all();
                }
            })?;
        Ok(Self {
            inner,
            queue,
            sent: AtomicU64::new(0),
            spent,
            special: Mutex::new(HashSet::new()),
            interest,
            done,
        })
    }

    /// Queues a message for the observer thread; `false` when the thread
    /// is gone.
    fn queue(&self, direction: From, body: &[u8]) -> bool {
        let message = Message::from_parts(body.to_vec(), 0);
        self.queue_item(direction, Item::Message(message)).is_ok()
    }

    /// Queues an item; gives it back when the thread is gone.
    fn queue_item(&self, direction: From, item: Item) -> Result<(), Item> {
        self.sent.fetch_add(1, Ordering::AcqRel);
        self.queue
            .send((direction, item))
            .map_err(|error| error.0.1)
    }

    /// Waits until everything queued so far has been observed.
    fn drain_all(&self) {
        self.drain(self.sent.load(Ordering::Acquire));
    }

    /// Waits until the first `count` queued messages have been observed.
    fn drain(&self, count: u64) {
        let (done, signal) = &*self.done;
        let done = lock(done);
        let _ = signal.wait_timeout_while(done, DRAIN_LIMIT, |done| *done < count);
    }
}

/// From this size on, a message is taken for a notification that needs no
/// verdict (a `didOpen` or `didChange` of a large document) without being
/// parsed on the forwarding path.
const LARGE: usize = 64 * 1024;

/// The members of a message that say what it is.
#[derive(serde::Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<&'a serde_json::value::RawValue>,
}

impl<'a> Head<'a> {
    /// The head of a message of under [`LARGE`] bytes; a larger one, or one
    /// that is not JSON, has none. Parsed, not searched for bytes: editors
    /// escape a method's `/` (`"textDocument\/codeAction"`, Neovim does).
    fn of(body: &'a [u8]) -> Option<Self> {
        if body.len() >= LARGE {
            return None;
        }
        serde_json::from_slice(body).ok()
    }

    /// The id, as JSON text, of a request whose answer the observer
    /// matches to it.
    fn special_request(&self) -> Option<String> {
        let method = self.method.as_deref()?;
        Interest::answered_specially(method)
            .then(|| self.id.map(|id| id.get().to_owned()))
            .flatten()
    }
}

impl Watch for HandOff {
    fn interest(&self) -> Option<Arc<Interest>> {
        Some(Arc::clone(&self.interest))
    }

    fn settle(&self) {
        self.drain_all();
    }

    fn editor_message(&self, body: &[u8]) -> ClientVerdict {
        let head = Head::of(body);
        // A request whose answer the observer changes, even one that needs
        // a verdict itself (a code action request under review).
        if let Some(id) = head.as_ref().and_then(Head::special_request) {
            lock(&self.special).insert(id);
        }
        if head
            .as_ref()
            .is_some_and(|head| self.interest.editor_verdict(head.method.as_deref()))
        {
            self.drain_all();
            return self.inner.editor_message(body);
        }
        if self.queue(From::Editor, body) {
            ClientVerdict::Forward
        } else {
            // The thread is gone: observe here.
            self.inner.editor_message(body)
        }
    }

    fn takes_pieces(&self) -> bool {
        true
    }

    fn forwarded_editor_piece(&self, piece: Piece) -> Option<Vec<u8>> {
        match self.queue_item(From::Editor, Item::Piece(piece)) {
            Ok(()) => lock(&self.spent).take(),
            // The thread is gone: the message goes unobserved, as any
            // message would once the observer has stopped.
            Err(Item::Piece(Piece::Bytes(bytes))) => Some(bytes),
            Err(_) => None,
        }
    }

    fn server_message(&self, body: &[u8]) -> ServerVerdict {
        // Read a server message's head only when some verdict may hang on
        // it: an answer awaited, or a review pending.
        let awaiting = self.interest.awaiting_answers();
        let special = (awaiting || self.interest.reviewing() || !lock(&self.special).is_empty())
            && Head::of(body).is_some_and(|head| match head.method.as_deref() {
                None => head.id.is_some_and(|id| {
                    (awaiting && Interest::answers_ours(id.get()))
                        || lock(&self.special).remove(id.get())
                }),
                Some(method) => self.interest.server_verdict(method),
            });
        if special {
            self.drain_all();
            return self.inner.server_message(body);
        }
        if self.queue(From::Server, body) {
            ServerVerdict::Forward
        } else {
            self.inner.server_message(body)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::PIECE;

    /// Records what it saw, in order; answers executeCommand.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<Vec<u8>>>);

    impl Watch for Recorder {
        fn editor_message(&self, body: &[u8]) -> ClientVerdict {
            std::thread::sleep(Duration::from_millis(1));
            self.0.lock().unwrap().push(body.to_vec());
            let interest = Interest::default();
            if Head::of(body).is_some_and(|head| interest.editor_verdict(head.method.as_deref())) {
                ClientVerdict::Answer(b"{}".to_vec())
            } else {
                ClientVerdict::Forward
            }
        }
        fn server_message(&self, body: &[u8]) -> ServerVerdict {
            self.0.lock().unwrap().push(body.to_vec());
            ServerVerdict::Forward
        }
    }

    #[test]
    fn order_is_kept_and_verdicts_wait_for_what_came_before() {
        let recorder = Arc::new(Recorder::default());
        let handoff = HandOff::new(recorder.clone()).unwrap();
        for n in 0..20 {
            let body = format!(r#"{{"method":"textDocument/didChange","n":{n}}}"#);
            assert_eq!(
                handoff.editor_message(body.as_bytes()),
                ClientVerdict::Forward
            );
        }
        let execute = br#"{"id":1,"method":"workspace/executeCommand"}"#;
        assert_eq!(
            handoff.editor_message(execute),
            ClientVerdict::Answer(b"{}".to_vec())
        );
        let seen = recorder.0.lock().unwrap().clone();
        assert_eq!(seen.len(), 21, "the command was observed after all 20");
        assert_eq!(seen[20], execute);
        assert!(seen[19].ends_with(br#""n":19}"#));
        // The answer to a code action waits for its request; other server
        // messages are queued behind it.
        handoff.editor_message(br#"{"id":2,"method":"textDocument/codeAction"}"#);
        assert_eq!(
            handoff.server_message(br#"{"method":"window/logMessage"}"#),
            ServerVerdict::Forward
        );
        handoff.server_message(br#"{"id":2,"result":[]}"#);
        let seen = recorder.0.lock().unwrap().clone();
        assert_eq!(seen[21], br#"{"id":2,"method":"textDocument/codeAction"}"#);
        assert_eq!(seen[22], br#"{"method":"window/logMessage"}"#);
        assert_eq!(seen[23], br#"{"id":2,"result":[]}"#);
    }

    /// A large editor message comes in pieces: put together on the thread,
    /// in its place in the order, the spent buffers lent back.
    #[test]
    fn pieces_are_put_together_on_the_thread() {
        let recorder = Arc::new(Recorder::default());
        let handoff = HandOff::new(recorder.clone()).unwrap();
        assert!(handoff.takes_pieces());
        let body = format!(
            r#"{{"method":"textDocument/didOpen","n":"{}"}}"#,
            "x".repeat(PIECE)
        );
        let message = Message::from_body(&body);
        let (bytes, body_start) = (message.as_bytes(), message.headers().len());
        handoff.editor_message(br#"{"method":"textDocument/didChange","n":0}"#);
        handoff.forwarded_editor_piece(Piece::Begin {
            len: bytes.len(),
            body_start,
        });
        for piece in bytes.chunks(PIECE / 2) {
            let mut buffer = Vec::with_capacity(PIECE);
            buffer.extend_from_slice(piece);
            handoff.forwarded_editor_piece(Piece::Bytes(buffer));
        }
        handoff.forwarded_editor_piece(Piece::End { whole: true });
        handoff.drain_all();
        let spent = lock(&handoff.spent)
            .take()
            .expect("spent buffers come back");
        assert!(spent.is_empty() && spent.capacity() >= PIECE);
        handoff.editor_message(br#"{"id":1,"method":"workspace/executeCommand"}"#);
        let seen = recorder.0.lock().unwrap().clone();
        assert_eq!(seen.len(), 3);
        assert!(seen[1] == body.as_bytes(), "whole, in its place");
    }

    /// Neovim escapes the `/` of every method: the hand-off reads methods,
    /// it does not search for their bytes.
    #[test]
    fn escaped_methods_are_recognized() {
        let recorder = Arc::new(Recorder::default());
        let handoff = HandOff::new(recorder.clone()).unwrap();
        let execute = br#"{"id":1,"method":"workspace\/executeCommand","params":{}}"#;
        assert_eq!(
            handoff.editor_message(execute),
            ClientVerdict::Answer(b"{}".to_vec()),
            "kept from the server"
        );
        handoff.editor_message(br#"{"id":7,"method":"textDocument\/codeAction"}"#);
        assert!(lock(&handoff.special).contains("7"));
        // A response whose result says "method" is still a response.
        handoff.server_message(br#"{"id":7,"result":[{"title":"\"method\""}]}"#);
        assert!(lock(&handoff.special).is_empty(), "answered inline");
    }

    /// The server's answers to the IDE's own requests get the observer's
    /// verdict (not forwarded) while the IDE awaits any; other messages
    /// are queued as ever.
    #[test]
    fn answers_to_the_ides_requests_are_observed_inline() {
        let ws = Arc::new(crate::LspWorkspace::new());
        let (observer, _outgoing) = crate::Observer::new(ws);
        let tap = Arc::new(super::super::tap::Tap::new(observer));
        let handoff = HandOff::new(tap.clone()).unwrap();
        let ours = br#"{"jsonrpc":"2.0","id":"ide-mcp\/s\/3","result":[]}"#;
        let theirs = br#"{"jsonrpc":"2.0","id":3,"result":[]}"#;
        tap.interest().asked_server();
        assert_eq!(handoff.server_message(ours), ServerVerdict::Drop);
        assert_eq!(handoff.server_message(theirs), ServerVerdict::Forward);
        let ours_plain =
            br#"{"jsonrpc":"2.0","id":"ide-mcp/s/4","error":{"code":-32800,"message":"x"}}"#;
        assert_eq!(handoff.server_message(ours_plain), ServerVerdict::Drop);
        assert!(Interest::answers_ours(r#""ide-mcp/s/9""#));
        assert!(!Interest::answers_ours(r#""ide-mcp/9""#));
        assert!(!Interest::answers_ours("9"));
    }
}
