//! The workspace's state: what the observers fill and the tools read.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use ide_mcp_tools::DEFAULT_SETTLE_BOUND;
use ide_mcp_tools::deny::DenyRules;
use ide_mcp_tools::{
    BufferId, BufferStore, DiagnosticsQuery, DocumentHandle, EditorAccess, EditorPorts,
    EditorPortsBuilder, FileDiagnostics, OpenBuffer, Selection, SettleFuture,
};
use lsp_types::Diagnostic;
use tokio::sync::{broadcast, watch};

use super::diagnostics::Diagnostics;
use super::documents::Documents;
use super::requests::{EditorRequest, EditorRequestError, EditorRequests, OwnReload};
use super::servers::ServerRequests;
use super::stream::StreamId;
use crate::live::Live;
use crate::observer::overlay::Decision;
use crate::sync::lock;

/// How many events a subscriber may fall behind before it lags
/// (`broadcast::error::RecvError::Lagged`: treat it as a selection change).
pub const EVENT_CAPACITY: usize = 64;

/// What the proxy pushes to connected MCP clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkspaceEvent {
    /// The selection or the active document changed: feed the tools'
    /// `SelectionPublisher::selection_changed`, which debounces.
    SelectionChanged,
    /// The user decided on Claude's proposed edit in the editor.
    Review(Decision),
    /// An open document's text changed (a pending review is computed
    /// again against it).
    Edited {
        /// The file's absolute path.
        path: Arc<Path>,
    },
    /// The editor saved an open document (`didSave`).
    Saved {
        /// The file's absolute path.
        path: Arc<Path>,
    },
    /// The user sent a selection to Claude (the code action): send
    /// `at_mentioned` with these zero-based lines.
    AtMentioned {
        /// The file's absolute path.
        path: Arc<Path>,
        /// The first line.
        line_start: u32,
        /// The last line.
        line_end: u32,
    },
}

/// What the editor told about itself in its `initialize` request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EditorInfo {
    /// `clientInfo.name` (e.g. `"Neovim"`).
    pub name: Option<String>,
    /// `processId`: the editor's pid.
    pub pid: Option<u32>,
    /// `workspaceFolders`, else `rootUri`, else `rootPath`, as paths.
    pub folders: Vec<PathBuf>,
    /// Whether it handles `window/showDocument`.
    pub show_document: bool,
}

/// The IDE state of one editor, shared by the observers of its LSP streams
/// (one per language server), and read by the tools through the three ports
/// it implements.
///
/// Open documents are united over the streams (one tab per file, in opening
/// order); diagnostics are merged per file (each server's, in stream order).
#[derive(Debug)]
pub struct LspWorkspace {
    pub(crate) documents: Documents,
    pub(crate) diagnostics: Arc<Diagnostics>,
    pub(crate) requests: Arc<EditorRequests>,
    pub(crate) servers: Arc<ServerRequests>,
    editor: watch::Sender<Option<EditorInfo>>,
    folders_override: Mutex<Option<Vec<PathBuf>>>,
    deny: ArcSwap<DenyRules>,
    events: broadcast::Sender<WorkspaceEvent>,
    next_stream: AtomicU64,
}

impl Default for LspWorkspace {
    fn default() -> Self {
        Self::new()
    }
}

impl LspWorkspace {
    /// An empty workspace; `getDiagnostics {}` waits at most
    /// [`DEFAULT_SETTLE_BOUND`] for an edited document's diagnostics.
    pub fn new() -> Self {
        Self::with_settle_bound(DEFAULT_SETTLE_BOUND)
    }

    /// An empty workspace whose `getDiagnostics {}` waits at most `bound`
    /// (the host's `--diagnostics-wait`).
    pub fn with_settle_bound(bound: Duration) -> Self {
        Self {
            documents: Documents::default(),
            diagnostics: Arc::new(Diagnostics::new(bound)),
            requests: Arc::default(),
            servers: Arc::default(),
            editor: watch::Sender::new(None),
            folders_override: Mutex::new(None),
            deny: ArcSwap::from_pointee(DenyRules::default()),
            events: broadcast::Sender::new(EVENT_CAPACITY),
            next_stream: AtomicU64::new(0),
        }
    }

    pub(crate) fn new_stream(&self) -> StreamId {
        StreamId(self.next_stream.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Uses `folders` as the workspace folders, whatever the editor says
    /// (`--workspace`).
    pub fn override_folders(&self, folders: Vec<PathBuf>) {
        *lock(&self.folders_override) = Some(folders);
    }

    /// Uses `rules` as the user's deny rules (a host's
    /// [`DenyRules::watch`] over its folders): what they hide leaves
    /// through no tool, resource, prompt or notification of a
    /// [`editor_ports`](Self::editor_ports). Set before the context is
    /// built; by default nothing is denied.
    pub fn set_deny_rules(&self, rules: Arc<DenyRules>) {
        self.deny.store(rules);
    }

    /// The user's deny rules ([`set_deny_rules`](Self::set_deny_rules)):
    /// `ws.deny_rules().hides(path)` before a file's content is read or
    /// sent anywhere. Wait-free.
    pub fn deny_rules(&self) -> Arc<DenyRules> {
        self.deny.load_full()
    }

    /// The workspace folders: the override, else the editor's.
    pub fn workspace_folders(&self) -> Vec<PathBuf> {
        let overridden = lock(&self.folders_override).clone();
        overridden.unwrap_or_else(|| {
            self.editor
                .borrow()
                .as_ref()
                .map(|e| e.folders.clone())
                .unwrap_or_default()
        })
    }

    /// What the editor said in its `initialize`, once an observer saw it.
    pub fn editor_info(&self) -> Option<EditorInfo> {
        self.editor.borrow().clone()
    }

    /// Waits until an observer has seen the editor's `initialize`.
    pub async fn editor_known(&self) -> EditorInfo {
        let mut rx = self.editor.subscribe();
        let info = rx.wait_for(Option::is_some).await;
        match info {
            Ok(info) => info.clone().unwrap_or_default(),
            // The sender lives in `self`: it cannot be gone while borrowed.
            Err(_) => EditorInfo::default(),
        }
    }

    /// The IDE name to show: the editor's `clientInfo.name`.
    pub fn ide_name(&self) -> Option<String> {
        self.editor.borrow().as_ref().and_then(|e| e.name.clone())
    }

    /// The editor's pid (`initialize.processId`).
    pub fn editor_pid(&self) -> Option<u32> {
        self.editor.borrow().as_ref().and_then(|e| e.pid)
    }

    pub(crate) fn set_editor(&self, info: EditorInfo) {
        self.editor.send_if_modified(|current| {
            // The first editor to introduce itself is the editor: every
            // stream of one workspace belongs to the same one.
            if current.is_some() {
                return false;
            }
            *current = Some(info);
            true
        });
    }

    /// Subscribes to the events to push to MCP clients.
    pub fn subscribe(&self) -> broadcast::Receiver<WorkspaceEvent> {
        self.events.subscribe()
    }

    pub(crate) fn emit(&self, event: WorkspaceEvent) {
        // No subscriber: nobody to tell.
        let _ = self.events.send(event);
    }

    /// A [`EditorPorts`] builder with the three ports, the file opener
    /// (`openFile` through `window/showDocument`) and the language servers
    /// (the live LSP tools, through the proxies) set to this workspace,
    /// the [workspace folders](Self::workspace_folders) added and the
    /// [deny rules](Self::deny_rules) set.
    pub fn editor_ports(self: &Arc<Self>) -> EditorPortsBuilder {
        EditorPorts::builder()
            .editor(self.clone())
            .buffers(self.clone())
            .diagnostics(self.clone())
            .opener(self.clone())
            .servers(Arc::new(Live(self.clone())))
            .workspace_folders(self.workspace_folders())
            .deny_rules(self.deny_rules())
    }

    /// Sends `window/showDocument` with `params` to an editor that
    /// advertised `window.showDocument.support`: one that has the document
    /// of `params.uri` open, else the one used last, else any; waits for
    /// its `result` (`{"success": bool}`).
    pub async fn show_document(
        &self,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, EditorRequestError> {
        let openers = params["uri"]
            .as_str()
            .and_then(ide_mcp_tools::uri::encoded_uri_path)
            .map(|path| self.documents.openers(&path))
            .unwrap_or_default();
        self.request(EditorRequest::ShowDocument, &openers, params)
            .await
    }

    /// Sends `request` with `params` to an editor that handles it: one of
    /// the streams `openers` first, else the one used last, else any; waits
    /// for its `result`.
    pub async fn request(
        &self,
        request: EditorRequest,
        openers: &[StreamId],
        params: serde_json::Value,
    ) -> Result<serde_json::Value, EditorRequestError> {
        let to = self
            .requests
            .destination(request, openers)
            .ok_or(EditorRequestError::Unsupported)?;
        self.requests.send(&to, params).await
    }

    /// The streams that have `path` open, in opening order.
    pub fn openers(&self, path: &Path) -> Vec<StreamId> {
        self.documents.openers(path)
    }

    /// The ids of the open documents, in no particular order.
    pub fn open_ids(&self) -> Vec<BufferId> {
        self.documents.buffers.ids()
    }
}

impl EditorAccess for LspWorkspace {
    fn open_buffers(&self) -> Vec<OpenBuffer> {
        self.documents.editor.open_buffers()
    }

    fn active_selection(&self) -> Option<Selection> {
        self.documents.editor.active_selection()
    }

    fn generation(&self) -> Option<u64> {
        EditorAccess::generation(&self.documents.editor)
    }
}

impl BufferStore for LspWorkspace {
    fn handle_for(&self, id: BufferId) -> Option<DocumentHandle> {
        self.documents.handle_for(id)
    }

    fn handle_for_path(&self, path: &Path) -> Option<DocumentHandle> {
        self.documents.handle_for_path(path)
    }

    fn dirty_flags(&self, ids: &[BufferId]) -> Vec<bool> {
        self.documents.dirty_flags(ids)
    }

    fn generation(&self) -> Option<u64> {
        BufferStore::generation(&self.documents)
    }
}

impl DiagnosticsQuery for LspWorkspace {
    fn all(&self) -> Vec<FileDiagnostics> {
        self.diagnostics.all()
    }

    fn for_file(&self, path: &Path) -> Option<Arc<[Diagnostic]>> {
        self.diagnostics.for_file(path)
    }

    fn generation(&self) -> u64 {
        DiagnosticsQuery::generation(&*self.diagnostics)
    }

    fn settle(&self) -> Option<SettleFuture> {
        self.diagnostics.settle()
    }
}

/// The name of process `pid`'s program (Linux: its `comm`), for an editor
/// that does not name itself (eglot sends no `clientInfo`).
pub(crate) fn process_name(pid: u32) -> Option<String> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    let name = comm.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// The editors the IDE knows, told by their `clientInfo.name` or their
/// process's name (`emacs`, `kakoune-lsp`, `helix`, `nvim`; eglot sends no
/// `clientInfo`): one reading of the name for what they are called, how
/// they reload a file, and how they read their pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EditorKind {
    Neovim,
    Emacs,
    Kakoune,
    Helix,
    /// An editor the IDE does not know.
    Other,
}

impl EditorKind {
    /// The kind of the editor named `name`.
    pub(crate) fn of(name: &str) -> Self {
        const KNOWN: [(&str, EditorKind); 6] = [
            ("emacs", EditorKind::Emacs),
            ("eglot", EditorKind::Emacs),
            ("kak", EditorKind::Kakoune),
            ("helix", EditorKind::Helix),
            ("nvim", EditorKind::Neovim),
            ("neovim", EditorKind::Neovim),
        ];
        let lower = name.to_ascii_lowercase();
        KNOWN
            .iter()
            .find(|(part, _)| lower.contains(part))
            .map_or(Self::Other, |(_, kind)| *kind)
    }

    /// What users call it; `None` for an editor the IDE does not know.
    fn shown(self) -> Option<&'static str> {
        match self {
            Self::Neovim => Some("Neovim"),
            Self::Emacs => Some("Emacs"),
            Self::Kakoune => Some("Kakoune"),
            Self::Helix => Some("Helix"),
            Self::Other => None,
        }
    }

    /// Whether it reloads a file written on disk by itself.
    pub(crate) fn own_reload(self) -> OwnReload {
        match self {
            Self::Neovim | Self::Emacs | Self::Kakoune => OwnReload::Always,
            Self::Helix | Self::Other => OwnReload::Never,
        }
    }

    /// Whether its requests need nudging: eglot on Emacs 28's jsonrpc,
    /// whose reading stops at the answer to the request it waits for (it
    /// throws out of its read loop to the waiting `jsonrpc-request`), so
    /// that a message read in the same chunk after that answer waits in its
    /// buffer until the next message arrives. A request of ours (a revert's
    /// `workspace/applyEdit` right after the answer to the `executeCommand`
    /// that asked for it) would then time out (`proxy::relay` nudges).
    pub(crate) fn needs_nudges(self) -> bool {
        self == Self::Emacs
    }
}

/// The name users know an editor by, from its `clientInfo.name` or its
/// process's name: what an agent shows ("Opened changes in Emacs",
/// `/ide`). A name we do not know is kept as it is.
pub(crate) fn editor_display_name(name: &str) -> String {
    EditorKind::of(name)
        .shown()
        .map_or_else(|| name.to_owned(), str::to_owned)
}

#[cfg(test)]
mod display_name_tests {
    use super::editor_display_name;

    #[test]
    fn editors_are_named_as_users_know_them() {
        for (sent, shown) in [
            ("emacs", "Emacs"),
            ("kakoune-lsp", "Kakoune"),
            ("kak-lsp", "Kakoune"),
            ("helix", "Helix"),
            ("Neovim", "Neovim"),
            ("nvim", "Neovim"),
            ("Sublime Text LSP", "Sublime Text LSP"),
        ] {
            assert_eq!(editor_display_name(sent), shown, "{sent}");
        }
    }
}
