//! The observer of one LSP stream: what it keeps of the stream, and its
//! verdicts.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;

use lsp_types::Range;
use ropey::Rope;
use tokio::sync::mpsc;

use super::envelope::Id;
use super::overlay::{Interest, ReviewState};
use crate::framing::Message;
use crate::lenient_diagnostics::UnreadLog;
use crate::workspace::{LspWorkspace, StreamId};
use ide_mcp_tools::position::PositionEncoding;
use ide_mcp_tools::uri::encoded_uri_path;

/// How many of the editor's requests the observer tracks while they await
/// the server's answer (code actions, pull diagnostics); past this, the
/// oldest are forgotten (a server that never answers cannot grow the map).
pub const MAX_TRACKED_REQUESTS: usize = 1024;

/// What to do with a message from the editor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientVerdict {
    /// Forward it to the server unchanged.
    Forward,
    /// Do not forward it; send this response body back to the editor
    /// instead (the `workspace/executeCommand` of our code action).
    Answer(Vec<u8>),
    /// Do not forward it: it is the editor's answer to a request the proxy
    /// itself sent toward the editor.
    Drop,
    /// Forward this body instead (a `codeAction` request without Claude's
    /// hunks in its `context.diagnostics`).
    Replace(Vec<u8>),
    /// Do not forward it; send these bodies back to the editor, in order
    /// (a review's command: the diagnostics without the hunks decided,
    /// then the answer).
    AnswerAll(Vec<Vec<u8>>),
}

/// What to do with a message from the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerVerdict {
    /// Forward it to the editor unchanged.
    Forward,
    /// Forward this body instead: the server's `textDocument/codeAction`
    /// answer with our action merged in, or its `initialize` answer with our
    /// command added to `executeCommandProvider.commands`.
    Replace(Vec<u8>),
    /// Do not forward it: it is the server's answer to a request the IDE
    /// itself sent (a live LSP tool's).
    Drop,
}

/// How an observer changes what it forwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObserverOptions {
    /// Merge the "Send selection to Claude Code" action into code action
    /// answers (default `true`).
    pub code_action: bool,
    /// Add the action's command to the `executeCommandProvider.commands` of
    /// the server's `initialize` answer (default `true`): Neovim 0.10+ runs
    /// only commands the server lists, and Helix only when the server has
    /// an `executeCommandProvider`.
    pub advertise_command: bool,
}

impl Default for ObserverOptions {
    fn default() -> Self {
        Self {
            code_action: true,
            advertise_command: true,
        }
    }
}

/// One open document as this stream's server sees it.
#[derive(Clone, Debug)]
pub(super) struct MirrorDoc {
    pub(super) path: Option<Arc<Path>>,
    pub(super) language_id: String,
    pub(super) text: Rope,
    pub(super) version: i32,
}

/// What the server said of itself in its `initialize` answer.
#[derive(Clone, Debug, Default)]
pub(super) struct ServerCaps {
    pub(super) encoding: PositionEncoding,
    /// Whether the server gets `didSave` (advertised `save`, or registered).
    pub(super) saves: bool,
    pub(super) name: Option<String>,
    /// The capabilities of the live LSP tools' features it provides
    /// (`referencesProvider`, …), as it gave them or registered them.
    pub(super) providers: serde_json::Map<String, serde_json::Value>,
}

/// What the editor said it can do in its `initialize`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct EditorCaps {
    /// Whether it takes `CodeAction` literals (else `Command`s).
    pub(super) literal_actions: bool,
    /// The requests of the IDE's it handles.
    pub(super) can: crate::workspace::EditorCan,
}

/// An editor request awaiting the server's answer.
#[derive(Clone, Debug)]
pub(super) enum Tracked {
    Initialize,
    CodeAction { uri: String, range: Range },
    Diagnostic { uri: String, version: Option<i32> },
}

/// Observes one LSP stream; see the [module documentation](super).
#[derive(Debug)]
pub struct Observer {
    pub(super) ws: Arc<LspWorkspace>,
    pub(super) stream: StreamId,
    pub(super) options: ObserverOptions,
    pub(super) server: ServerCaps,
    pub(super) editor_caps: EditorCaps,
    pub(super) docs: HashMap<String, MirrorDoc>,
    pub(super) tracked: HashMap<Id, Tracked>,
    /// Tracking order, to forget the oldest first.
    pub(super) tracked_order: std::collections::VecDeque<Id>,
    pub(super) panicked: bool,
    /// What the server's diagnostics lost, logged once at warning level.
    pub(super) unread: UnreadLog,
    /// Claude's edits under review, as this stream shows them.
    pub(super) review: ReviewState,
    pub(super) interest: Arc<Interest>,
    /// The IDE's messages for this stream's server, until the host takes
    /// them ([`take_server_queue`](Self::take_server_queue)).
    pub(super) to_server: Option<mpsc::Receiver<Message>>,
}

impl Observer {
    /// An observer of a new stream of `ws`, and the queue of messages the
    /// proxy must write to the editor (requests it sends on its own, such as
    /// `window/showDocument`).
    pub fn new(ws: Arc<LspWorkspace>) -> (Self, mpsc::Receiver<Message>) {
        Self::with_options(ws, ObserverOptions::default())
    }

    /// [`new`](Self::new), with `options`.
    pub fn with_options(
        ws: Arc<LspWorkspace>,
        options: ObserverOptions,
    ) -> (Self, mpsc::Receiver<Message>) {
        let stream = ws.new_stream();
        let outgoing = ws.requests.register(stream);
        let to_server = Some(ws.servers.register(stream));
        let observer = Self {
            ws,
            stream,
            options,
            server: ServerCaps::default(),
            editor_caps: EditorCaps::default(),
            docs: HashMap::new(),
            tracked: HashMap::new(),
            tracked_order: std::collections::VecDeque::new(),
            panicked: false,
            unread: UnreadLog::default(),
            review: ReviewState::default(),
            interest: Arc::default(),
            to_server,
        };
        (observer, outgoing)
    }

    /// The queue of the IDE's messages for this stream's server (the live
    /// LSP tools' requests), for the host to send down its link to the
    /// proxy; `None` once taken.
    pub fn take_server_queue(&mut self) -> Option<mpsc::Receiver<Message>> {
        self.to_server.take()
    }

    /// The workspace this observer writes into.
    pub fn workspace(&self) -> &Arc<LspWorkspace> {
        &self.ws
    }

    /// This observer's stream.
    pub fn stream(&self) -> StreamId {
        self.stream
    }

    /// Which messages need this observer's verdict beyond the usual few
    /// (shared with the hand-off, which reads it on the forwarding path).
    pub fn interest(&self) -> Arc<Interest> {
        Arc::clone(&self.interest)
    }

    /// The position encoding the server chose (UTF-16 until it answers
    /// `initialize`).
    pub fn encoding(&self) -> PositionEncoding {
        self.server.encoding
    }

    /// Observes a message body from the editor. Never panics: a panic inside
    /// is caught, logged once, and the document it concerned is dropped.
    pub fn from_client(&mut self, body: &[u8]) -> ClientVerdict {
        match catch_unwind(AssertUnwindSafe(|| self.handle_client(body))) {
            Ok(verdict) => verdict,
            Err(panic) => {
                self.recover(body, &panic);
                ClientVerdict::Forward
            }
        }
    }

    /// Observes a message body from the server; never panics (see
    /// [`from_client`](Self::from_client)).
    pub fn from_server(&mut self, body: &[u8]) -> ServerVerdict {
        match catch_unwind(AssertUnwindSafe(|| self.handle_server(body))) {
            Ok(verdict) => verdict,
            Err(panic) => {
                self.recover(body, &panic);
                ServerVerdict::Forward
            }
        }
    }

    /// After a panic: forget the document the message named, log.
    pub(super) fn recover(&mut self, body: &[u8], panic: &(dyn std::any::Any + Send)) {
        let message = panic
            .downcast_ref::<&str>()
            .map(ToString::to_string)
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let uri = document_uri(body);
        if self.panicked {
            tracing::debug!(%message, ?uri, "observer panicked again; document state dropped");
        } else {
            self.panicked = true;
            tracing::error!(%message, ?uri, "observer panicked; forwarding goes on, the document's state is dropped");
        }
        if let Some(uri) = uri {
            self.forget_document(&uri);
        }
    }

    pub(super) fn forget_document(&mut self, uri: &str) {
        if let Some(doc) = self.docs.remove(uri)
            && let Some(path) = doc.path
        {
            self.ws.documents.close(self.stream, &path);
        }
    }

    pub(super) fn track(&mut self, id: Id, tracked: Tracked) {
        if self.tracked.len() >= MAX_TRACKED_REQUESTS {
            while let Some(old) = self.tracked_order.pop_front() {
                if self.tracked.remove(&old).is_some() {
                    break;
                }
            }
        }
        self.tracked_order.push_back(id.clone());
        self.tracked.insert(id, tracked);
    }

    pub(super) fn untrack(&mut self, id: &Id) -> Option<Tracked> {
        let tracked = self.tracked.remove(id)?;
        if self.tracked_order.len() > 2 * MAX_TRACKED_REQUESTS {
            self.tracked_order
                .retain(|id| self.tracked.contains_key(id));
        }
        Some(tracked)
    }
}

impl Drop for Observer {
    /// The stream is gone (its server exited): its documents close unless
    /// another stream has them open, and its diagnostics go.
    fn drop(&mut self) {
        for doc in self.docs.values() {
            if let Some(path) = &doc.path {
                self.ws.documents.close(self.stream, path);
            }
        }
        self.ws.diagnostics.forget_stream(self.stream);
        self.ws.requests.unregister(self.stream);
        self.ws.servers.unregister(self.stream);
    }
}

/// `params.textDocument.uri` or `params.uri` of a body, if any.
fn document_uri(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let params = value.get("params")?;
    params
        .pointer("/textDocument/uri")
        .or_else(|| params.get("uri"))?
        .as_str()
        .map(str::to_owned)
}

/// The file path of a document this observer knows by URI, or of the URI.
pub(super) fn path_of(docs: &HashMap<String, MirrorDoc>, uri: &str) -> Option<Arc<Path>> {
    match docs.get(uri) {
        Some(doc) => doc.path.clone(),
        None => encoded_uri_path(uri),
    }
}
