//! Requests the IDE itself sends toward an editor (`window/showDocument`
//! for `openFile`, `window/showMessageRequest` for a review), and the
//! routing of the editor's answers back to them.
//!
//! Each observer's stream gets a bounded queue of messages to write to the
//! editor ([`Observer::new`](crate::Observer::new) returns its receiving
//! end). A request gets the id `"ide-mcp/<n>"`, a string: language servers
//! number their requests, so the editor's answers to ours cannot be taken
//! for answers to the server's; the observer swallows them
//! ([`ClientVerdict::Drop`](crate::ClientVerdict::Drop)) and resolves the
//! waiting call.

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::stream::StreamId;
use crate::framing::Message;
use crate::outgoing::Outgoing;
use crate::sync::lock;
use ide_mcp_tools::position::PositionEncoding;

/// The prefix of the ids of requests sent toward the editor.
pub const EDITOR_REQUEST_PREFIX: &str = "ide-mcp/";

/// How many messages toward the editor may wait in one stream's queue.
pub const OUTGOING_CAPACITY: usize = 16;

/// How long a request toward the editor waits for its answer.
pub const EDITOR_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a request toward the editor failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditorRequestError {
    /// No stream's editor supports the request (or none is connected).
    Unsupported,
    /// The stream's queue is full or closed.
    NotSent,
    /// No answer within [`EDITOR_REQUEST_TIMEOUT`].
    TimedOut,
    /// The editor answered with an error.
    Failed(String),
}

impl fmt::Display for EditorRequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unsupported => f.write_str("the editor does not support this request"),
            Self::NotSent => f.write_str("the request could not be sent to the editor"),
            Self::TimedOut => f.write_str("the editor did not answer in time"),
            Self::Failed(message) => write!(f, "the editor answered with an error: {message}"),
        }
    }
}

impl std::error::Error for EditorRequestError {}

#[derive(Debug)]
struct Route {
    stream: StreamId,
    queue: mpsc::Sender<Message>,
    can: EditorCan,
    encoding: PositionEncoding,
}

/// The requests an editor said it handles, of those the IDE sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent capabilities of the editor, each a yes or no"
)]
pub struct EditorCan {
    /// `window/showDocument` (`window.showDocument.support`).
    pub show_document: bool,
    /// `window/showMessageRequest` with actions (`window.showMessage`).
    pub show_message: bool,
    /// `workspace/applyEdit` (`workspace.applyEdit`).
    pub apply_edit: bool,
    /// Workspace edits as `documentChanges` (versioned).
    pub document_changes: bool,
    /// Whether the editor shows a file changed on disk by itself.
    pub own_reload: OwnReload,
}

/// Whether an editor shows a file that changed on disk in its clean buffer
/// by itself, known from its `clientInfo.name` (or its process's name):
/// the host then adds no second mechanism (a second question, a buffer
/// left modified).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OwnReload {
    /// Not by itself (Helix, an editor we do not know): the host shows the
    /// new text with `workspace/applyEdit`.
    #[default]
    Never,
    /// Neovim (`autoread`, on by default: a clean buffer is reloaded when
    /// Neovim gets the focus, enters the buffer or runs `:checktime`),
    /// Kakoune (`autoreload`, `ask` by default) and Emacs
    /// (`auto-revert-mode`; without it Emacs asks before the user edits or
    /// saves the buffer). An edit of ours would add a question (eglot's
    /// "Server wants to edit", then Emacs's own "Reread from disk?"; in
    /// Neovim, W12 "changed in Vim as well" at the next focus) and leave
    /// the buffer modified, so the host sends none.
    Always,
}

/// A request the IDE sends an editor, by what the editor must handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditorRequest {
    /// `window/showDocument`.
    ShowDocument,
    /// `window/showMessageRequest`.
    ShowMessage,
    /// `workspace/applyEdit`: only ever to an editor that has the document
    /// open.
    ApplyEdit,
}

impl EditorRequest {
    fn method(self) -> &'static str {
        match self {
            Self::ShowDocument => "window/showDocument",
            Self::ShowMessage => "window/showMessageRequest",
            Self::ApplyEdit => "workspace/applyEdit",
        }
    }

    fn handled_by(self, can: EditorCan) -> bool {
        match self {
            Self::ShowDocument => can.show_document,
            Self::ShowMessage => can.show_message,
            Self::ApplyEdit => can.apply_edit,
        }
    }
}

type Answer = Result<Value, String>;

/// The streams requests can go out on, and the requests awaiting answers.
#[derive(Debug, Default)]
pub(crate) struct EditorRequests {
    routes: Mutex<Vec<Route>>,
    pending: Outgoing<Answer>,
    /// The stream whose editor the user used last (0: none yet).
    last_used: AtomicU64,
}

/// Where a request toward an editor goes: the queue of one stream, and the
/// position encoding its positions must be in.
#[derive(Clone, Debug)]
pub(crate) struct Destination {
    queue: mpsc::Sender<Message>,
    pub(crate) encoding: PositionEncoding,
    #[cfg_attr(not(unix), expect(dead_code, reason = "the host (Unix only) asks"))]
    pub(crate) can: EditorCan,
    request: EditorRequest,
}

impl EditorRequests {
    /// A queue toward the editor for `stream`.
    pub(crate) fn register(&self, stream: StreamId) -> mpsc::Receiver<Message> {
        let (queue, rx) = mpsc::channel(OUTGOING_CAPACITY);
        lock(&self.routes).push(Route {
            stream,
            queue,
            can: EditorCan::default(),
            encoding: PositionEncoding::default(),
        });
        rx
    }

    pub(crate) fn unregister(&self, stream: StreamId) {
        lock(&self.routes).retain(|r| r.stream != stream);
    }

    pub(crate) fn set_editor_can(&self, stream: StreamId, can: EditorCan) {
        for route in lock(&self.routes).iter_mut().filter(|r| r.stream == stream) {
            route.can = can;
        }
    }

    pub(crate) fn set_encoding(&self, stream: StreamId, encoding: PositionEncoding) {
        for route in lock(&self.routes).iter_mut().filter(|r| r.stream == stream) {
            route.encoding = encoding;
        }
    }

    /// Queues `message` for `stream`'s editor (a notification the observer
    /// sends on its own); dropped, and logged, when the queue is full.
    pub(crate) fn send_to_editor(&self, stream: StreamId, message: Message) {
        let queue = lock(&self.routes)
            .iter()
            .find(|r| r.stream == stream)
            .map(|r| r.queue.clone());
        if queue.is_none_or(|queue| queue.try_send(message).is_err()) {
            tracing::warn!(
                ?stream,
                "the queue toward the editor is full; a message was dropped"
            );
        }
    }

    /// The user used `stream`'s editor (typed, asked something).
    pub(crate) fn used(&self, stream: StreamId) {
        self.last_used.store(stream.0, Ordering::Relaxed);
    }

    /// Where `request` goes: to the first of `openers` (the streams that
    /// have the document open) whose editor handles it, else to the stream
    /// used last, else to any that handles it; `None` when no editor does.
    pub(crate) fn destination(
        &self,
        request: EditorRequest,
        openers: &[StreamId],
    ) -> Option<Destination> {
        let routes = lock(&self.routes);
        let usable = |r: &&Route| request.handled_by(r.can) && !r.queue.is_closed();
        let last = StreamId(self.last_used.load(Ordering::Relaxed));
        let opener = openers
            .iter()
            .find_map(|&s| routes.iter().filter(usable).find(|r| r.stream == s));
        let route = if request == EditorRequest::ApplyEdit {
            opener?
        } else {
            opener
                .or_else(|| routes.iter().filter(usable).find(|r| r.stream == last))
                .or_else(|| routes.iter().find(usable))?
        };
        tracing::debug!(?request, stream = ?route.stream, ?openers, "toward the editor");
        Some(Destination {
            queue: route.queue.clone(),
            encoding: route.encoding,
            can: route.can,
            request,
        })
    }

    /// Sends the request `to` is for with `params`, and waits for the
    /// answer's `result`.
    pub(crate) async fn send(
        &self,
        to: &Destination,
        params: Value,
    ) -> Result<Value, EditorRequestError> {
        // Given up on (timed out, the call cancelled), a request is only
        // forgotten: the editor's answer, if it comes, is still ours.
        let Ok(mut lease) = self.pending.lease((), |_| ()) else {
            return Err(EditorRequestError::NotSent);
        };
        let n = lease.id();
        let body = json!({
            "jsonrpc": "2.0",
            "id": format!("{EDITOR_REQUEST_PREFIX}{n}"),
            "method": to.request.method(),
            "params": params,
        });
        tracing::debug!(
            n,
            method = to.request.method(),
            "a request toward the editor"
        );
        let message = Message::from_body(body.to_string());
        if to.queue.try_send(message).is_err() {
            lease.withdraw();
            return Err(EditorRequestError::NotSent);
        }
        match tokio::time::timeout(EDITOR_REQUEST_TIMEOUT, lease.answer()).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(message))) => Err(EditorRequestError::Failed(message)),
            Ok(Err(_gone)) => Err(EditorRequestError::NotSent),
            Err(_elapsed) => Err(EditorRequestError::TimedOut),
        }
    }

    /// Routes the editor's answer to request `id`; `false` when `id` is
    /// not one of ours (the answer is then the server's to have).
    pub(crate) fn resolve(&self, id: &str, answer: Answer) -> bool {
        let Some(n) = id
            .strip_prefix(EDITOR_REQUEST_PREFIX)
            .and_then(|n| n.parse::<u64>().ok())
        else {
            return false;
        };
        self.pending.answer(n, answer);
        // Ours even when nobody waits any more (timed out): never forwarded.
        true
    }
}
