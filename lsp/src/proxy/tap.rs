//! The proxy's own watch over its stream: learns the editor from
//! `initialize`, runs the observer, and copies what it saw to the leader
//! when this proxy follows one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use tokio::sync::oneshot;

use super::editor::EditorInfo;
use super::pump::{EditorVerdict, ServerVerdict, Watch};
use super::relay::{Direction, Upstream};

/// The watch the pumps call: the observer, plus what the process needs.
pub(crate) struct Tap {
    observer: Box<dyn Watch>,
    upstream: Upstream,
    parent_pid: u32,
    editor: Mutex<Option<oneshot::Sender<EditorInfo>>>,
    learned: AtomicBool,
}

impl Tap {
    /// A tap over `observer`; the receiver yields the editor once its
    /// `initialize` has passed.
    pub(crate) fn new(observer: Box<dyn Watch>) -> (Self, oneshot::Receiver<EditorInfo>) {
        let (sender, receiver) = oneshot::channel();
        let tap = Self {
            observer,
            upstream: Upstream::default(),
            parent_pid: std::os::unix::process::parent_id(),
            editor: Mutex::new(Some(sender)),
            learned: AtomicBool::new(false),
        };
        (tap, receiver)
    }

    /// The link to the leader.
    pub(crate) fn upstream(&self) -> &Upstream {
        &self.upstream
    }
}

impl Watch for Tap {
    fn editor_message(&self, body: &[u8]) -> EditorVerdict {
        if !self.learned.load(Ordering::Relaxed)
            && let Some(info) = EditorInfo::from_initialize(body, self.parent_pid)
        {
            self.learned.store(true, Ordering::Relaxed);
            let sender = self
                .editor
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(sender) = sender {
                let _ = sender.send(info);
            }
        }
        self.upstream.observe(Direction::FromEditor, body, || {
            self.observer.editor_message(body)
        })
    }

    fn server_message(&self, body: &[u8]) -> ServerVerdict {
        self.upstream.observe(Direction::FromServer, body, || {
            self.observer.server_message(body)
        })
    }
}
