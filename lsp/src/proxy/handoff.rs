//! Observation off the forwarding path: the editor's messages go, in order,
//! through a bounded queue to a thread that observes them, so that a large
//! `didOpen` (or any message) never holds up the next one. The few messages
//! whose verdict matters are observed inline once the queue has drained:
//! our code action's `workspace/executeCommand` and the editor's responses;
//! so are the server's responses (the answer to a code action must meet its
//! request already observed).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use super::pump::Watch;
use crate::observer::{ClientVerdict, ServerVerdict};

/// How many editor messages may wait for the observer before forwarding
/// waits for it.
const QUEUE: usize = 1024;

/// The longest wait for the queue to drain before an inline observation
/// (a stuck observer must not stop forwarding).
const DRAIN_LIMIT: Duration = Duration::from_secs(1);

/// A [`Watch`] that hands the editor's messages to an observer thread.
pub struct HandOff {
    inner: Arc<dyn Watch>,
    queue: SyncSender<Vec<u8>>,
    sent: AtomicU64,
    /// The queue position of the last request whose answer the observer
    /// reads specially (see [`ANSWERED_SPECIALLY`]).
    tracked: AtomicU64,
    done: Arc<(Mutex<u64>, Condvar)>,
}

/// Requests whose answers the observer matches to them: a server response
/// waits until the last of these queued has been observed (and no longer:
/// not for a large `didOpen` queued after it).
const ANSWERED_SPECIALLY: [&[u8]; 3] = [
    b"\"textDocument/codeAction\"",
    b"\"textDocument/diagnostic\"",
    b"\"initialize\"",
];

impl HandOff {
    /// Starts the observer thread over `inner`.
    pub fn new(inner: Arc<dyn Watch>) -> std::io::Result<Self> {
        let (queue, bodies) = sync_channel::<Vec<u8>>(QUEUE);
        let done = Arc::new((Mutex::new(0_u64), Condvar::new()));
        let (watch, counter) = (Arc::clone(&inner), Arc::clone(&done));
        std::thread::Builder::new()
            .name("lsp-proxy-observe".into())
            .spawn(move || {
                for body in bodies {
                    // The observer catches its own panics; this keeps the
                    // thread alive whatever happens.
                    let _ = catch_unwind(AssertUnwindSafe(|| watch.editor_message(&body)));
                    *counter.0.lock().unwrap_or_else(PoisonError::into_inner) += 1;
                    counter.1.notify_all();
                }
            })?;
        Ok(Self {
            inner,
            queue,
            sent: AtomicU64::new(0),
            tracked: AtomicU64::new(0),
            done,
        })
    }

    /// Waits until the first `count` queued messages have been observed.
    fn drain(&self, count: u64) {
        let (done, signal) = &*self.done;
        let done = done.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = signal.wait_timeout_while(done, DRAIN_LIMIT, |done| *done < count);
    }
}

/// Whether an editor message's verdict may be other than `Forward`.
fn needs_verdict(body: &[u8]) -> bool {
    memchr::memmem::find(body, b"workspace/executeCommand").is_some() || is_response(body)
}

/// Whether a body is a response (it has no `"method"`).
fn is_response(body: &[u8]) -> bool {
    memchr::memmem::find(body, b"\"method\"").is_none()
}

impl Watch for HandOff {
    fn editor_message(&self, body: &[u8]) -> ClientVerdict {
        if needs_verdict(body) {
            self.drain(self.sent.load(Ordering::Acquire));
            return self.inner.editor_message(body);
        }
        let position = self.sent.fetch_add(1, Ordering::AcqRel) + 1;
        // Small bodies only: a request is never large.
        if body.len() < 64 * 1024
            && ANSWERED_SPECIALLY
                .iter()
                .any(|needle| memchr::memmem::find(body, needle).is_some())
        {
            self.tracked.store(position, Ordering::Release);
        }
        if self.queue.send(body.to_vec()).is_err() {
            // The thread is gone: observe here.
            return self.inner.editor_message(body);
        }
        ClientVerdict::Forward
    }

    fn server_message(&self, body: &[u8]) -> ServerVerdict {
        if is_response(body) {
            self.drain(self.tracked.load(Ordering::Acquire));
        }
        self.inner.server_message(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what it saw, in order; answers executeCommand.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<Vec<u8>>>);

    impl Watch for Recorder {
        fn editor_message(&self, body: &[u8]) -> ClientVerdict {
            std::thread::sleep(Duration::from_millis(1));
            self.0.lock().unwrap().push(body.to_vec());
            if needs_verdict(body) {
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
        // A server response waits for the queue too.
        handoff.editor_message(br#"{"id":2,"method":"textDocument/codeAction"}"#);
        handoff.server_message(br#"{"id":2,"result":[]}"#);
        let seen = recorder.0.lock().unwrap().clone();
        assert_eq!(seen[21], br#"{"id":2,"method":"textDocument/codeAction"}"#);
        assert_eq!(seen[22], br#"{"id":2,"result":[]}"#);
    }
}
