//! The editor ports: what the tools read, implemented by the editor (or by
//! [`memory`](crate::memory)); [`FileOpener`], through which `openFile`
//! shows a file; [`DiffReview`], through which `openDiff` asks a person;
//! and [`LanguageServers`], which the live LSP tools ask.
//!
//! All the traits are object-safe and `Send + Sync`; the tools hold them as
//! `Arc<dyn …>` in a [`EditorPorts`](crate::EditorPorts). They hand out owned,
//! cheap snapshots: a tool never holds a port's lock while it serializes.

mod servers;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use arc_swap::ArcSwap;
use lsp_types::{Diagnostic, Position};
use ropey::Rope;

pub use servers::{CallDirection, CharPosition, LanguageServers, LspFeature, LspFuture, LspQuery};

/// An editor's identifier for one open buffer; stable while the buffer is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BufferId(pub u64);

/// One open buffer, as [`EditorAccess::open_buffers`] lists it: plain data.
/// What `getOpenEditors` writes for it (the `file://` URI, the tab label) the
/// tool derives from [`path`](Self::path) as it writes.
///
/// Paths and language ids are shared (`Arc`), so copying the buffer list out
/// of an editor's cache costs reference counts, not allocations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenBuffer {
    /// The buffer's id.
    pub id: BufferId,
    /// The absolute path of the file behind the buffer; `None` for synthetic
    /// and never-saved buffers (which `getOpenEditors` skips).
    pub path: Option<Arc<Path>>,
    /// Whether this is the active (focused) buffer.
    pub is_active: bool,
    /// The LSP language identifier (`"rust"`, `"typescript"`, `"plaintext"`, …).
    pub language_id: Arc<str>,
}

impl OpenBuffer {
    /// A buffer backed by the file at `path` (absolute), not active.
    pub fn new(id: BufferId, path: impl Into<Arc<Path>>, language_id: impl Into<Arc<str>>) -> Self {
        Self {
            id,
            path: Some(path.into()),
            is_active: false,
            language_id: language_id.into(),
        }
    }

    /// A buffer with no file behind it (synthetic or never saved), not active.
    pub fn without_path(id: BufferId, language_id: impl Into<Arc<str>>) -> Self {
        Self {
            id,
            path: None,
            is_active: false,
            language_id: language_id.into(),
        }
    }

    /// The same buffer, marked active.
    pub fn active(mut self) -> Self {
        self.is_active = true;
        self
    }
}

/// The active editor's selection.
///
/// Represented as `start`/`end` LSP positions (zero-based line, UTF-16
/// character) with `start <= end`: the direction of the selection (which end
/// the cursor is at) is not part of the protocol. A builder given
/// `start > end` orders them. A cursor with nothing selected has `start == end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The buffer the selection is in.
    pub buffer: BufferId,
    /// The buffer's absolute path; `None` for a buffer not backed by a file
    /// (reported as "no active editor": a client cannot use a path-less selection).
    pub path: Option<Arc<Path>>,
    /// The first selected position.
    pub start: Position,
    /// The position just past the selection.
    pub end: Position,
}

impl Selection {
    /// `start` and `end`, ordered.
    pub fn ordered(&self) -> (Position, Position) {
        if self.end < self.start {
            (self.end, self.start)
        } else {
            (self.start, self.end)
        }
    }
}

/// The editor's open buffers and active selection.
///
/// Implementations keep both in a cache behind a brief `Mutex` (or similar)
/// that the editor updates as buffers open, close and get focus; readers copy
/// out and never hold the lock afterwards.
pub trait EditorAccess: Send + Sync {
    /// Every open buffer, in the editor's tab order.
    fn open_buffers(&self) -> Vec<OpenBuffer>;

    /// The active buffer's selection, or `None` when no buffer is active.
    fn active_selection(&self) -> Option<Selection>;

    /// A number that changes whenever [`open_buffers`](Self::open_buffers)
    /// would answer differently, changed *after* the change is visible; `None`
    /// (the default) when the port does not keep one. With it, and a
    /// [`BufferStore::generation`], `getOpenEditors` answers unchanged tabs
    /// from the bytes it serialized last time.
    fn generation(&self) -> Option<u64> {
        None
    }
}

/// An immutable snapshot of one document.
///
/// Writers build a new `Document` and publish it through a
/// [`DocumentHandle`]; readers hold an `Arc<Document>` that never changes.
/// Cloning a [`Rope`] is O(1), so a new snapshot shares the old one's text.
#[derive(Clone, Debug, Default)]
pub struct Document {
    /// The text.
    pub text: Rope,
    /// Increases with every change of the text (the LSP document version).
    pub version: i32,
    /// Whether the text has unsaved changes.
    pub dirty: bool,
    /// The file behind the document, when there is one.
    pub path: Option<Arc<Path>>,
    /// Whether the document has never been saved (an untitled buffer).
    pub untitled: bool,
}

impl Document {
    /// A clean document of version 0 with this text and path.
    pub fn new(text: impl Into<Rope>, path: Option<Arc<Path>>) -> Self {
        Self {
            text: text.into(),
            version: 0,
            dirty: false,
            path,
            untitled: false,
        }
    }
}

/// A shared, swappable reference to a document's current snapshot.
///
/// Cloning the handle is cheap and every clone sees the same document.
/// [`snapshot`](Self::snapshot) is a wait-free load: readers never block the
/// writer and never see a half-written document.
#[derive(Clone, Debug)]
pub struct DocumentHandle {
    current: Arc<ArcSwap<Document>>,
    /// The generation of the store the handle belongs to, bumped on publish.
    store_generation: Option<Arc<AtomicU64>>,
}

impl DocumentHandle {
    /// A handle whose first snapshot is `document`.
    pub fn new(document: Document) -> Self {
        Self {
            current: Arc::new(ArcSwap::from_pointee(document)),
            store_generation: None,
        }
    }

    /// A handle that bumps `generation` after each publish (the
    /// [`BufferStore::generation`] of the store that made it).
    pub fn with_generation(document: Document, generation: Arc<AtomicU64>) -> Self {
        Self {
            store_generation: Some(generation),
            ..Self::new(document)
        }
    }

    fn published(&self) {
        if let Some(generation) = &self.store_generation {
            generation.fetch_add(1, Ordering::Release);
        }
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Document> {
        self.current.load_full()
    }

    /// Whether the current snapshot has unsaved changes (a load without
    /// touching the reference count).
    pub fn is_dirty(&self) -> bool {
        self.current.load().dirty
    }

    /// Publishes a new snapshot; readers that loaded the old one keep it.
    pub fn publish(&self, document: Document) {
        self.current.store(Arc::new(document));
        self.published();
    }

    /// Publishes `change(current)`, retrying if another writer published in
    /// between (so concurrent updates are never lost).
    pub fn update(&self, mut change: impl FnMut(&Document) -> Document) {
        self.current.rcu(|current| change(current));
        self.published();
    }
}

/// The text of open documents, as wait-free snapshots.
pub trait BufferStore: Send + Sync {
    /// The handle of the open buffer `id`.
    fn handle_for(&self, id: BufferId) -> Option<DocumentHandle>;

    /// The handle of the open buffer whose file is `path` (absolute, as the
    /// editor names it).
    fn handle_for_path(&self, path: &Path) -> Option<DocumentHandle>;

    /// Whether each buffer of `ids` has unsaved changes (`false` when not
    /// open), in order. `getOpenEditors` asks for every tab at once; override
    /// it to answer under one lock.
    fn dirty_flags(&self, ids: &[BufferId]) -> Vec<bool> {
        ids.iter()
            .map(|&id| self.handle_for(id).is_some_and(|h| h.is_dirty()))
            .collect()
    }

    /// A number that changes whenever a document or the set of documents
    /// changes, changed *after* the change is visible; `None` (the default)
    /// when the store does not keep one. Handles made with
    /// [`DocumentHandle::with_generation`] bump it on every publish.
    fn generation(&self) -> Option<u64> {
        None
    }
}

/// One file's diagnostics, as [`DiagnosticsQuery::all`] lists them.
#[derive(Clone, Debug, PartialEq)]
pub struct FileDiagnostics {
    /// The file's absolute path.
    pub path: Arc<Path>,
    /// Its diagnostics, ranges in LSP positions.
    pub diagnostics: Arc<[Diagnostic]>,
}

/// Diagnostics by file, as the sources keep them (shared, so that a
/// snapshot costs reference counts).
pub type DiagnosticsMap = std::collections::BTreeMap<Arc<Path>, Arc<[Diagnostic]>>;

impl FileDiagnostics {
    /// Every file's entry of `map`, in path order: what
    /// [`DiagnosticsQuery::all`] answers for a source that keeps one.
    pub fn list(map: &DiagnosticsMap) -> Vec<Self> {
        map.iter()
            .map(|(path, diagnostics)| Self {
                path: Arc::clone(path),
                diagnostics: Arc::clone(diagnostics),
            })
            .collect()
    }
}

/// The future [`DiagnosticsQuery::settle`] returns.
pub type SettleFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How long `getDiagnostics {}` waits for a running check by default, in
/// every host (the headless checkers, the language servers of `serve --lsp`
/// and of the editor): the CLI gives the answer 2 s, and the rest of the
/// call needs some of them.
pub const DEFAULT_SETTLE_BOUND: Duration = Duration::from_millis(1500);

/// The diagnostics the editor (or a checker) knows, by file.
///
/// # Generation
///
/// [`generation`](Self::generation) identifies the data: it must change
/// whenever the data does, and become visible no earlier than the new data
/// (bump it after, or atomically with, the change). Then a reader that reads
/// the generation first and the data second never files new data under an
/// old generation, and a cache keyed by it is never stale.
pub trait DiagnosticsQuery: Send + Sync {
    /// Every file with diagnostics, sorted by path. Files with an empty list
    /// may be left out.
    fn all(&self) -> Vec<FileDiagnostics>;

    /// The diagnostics of the file at `path` (absolute); `None` when nothing is
    /// known about it. Must answer at once: never wait for a check here.
    fn for_file(&self, path: &Path) -> Option<Arc<[Diagnostic]>>;

    /// Identifies the current data; see the trait documentation.
    fn generation(&self) -> u64;

    /// While a check is running, a future that resolves when it finishes or
    /// when the host's own bound elapses (the CLI waits 2 s for the answer, so
    /// keep the bound around 1.5 s); `None` when nothing is running.
    ///
    /// `getDiagnostics` without `uri` awaits it before reading; with `uri` it
    /// answers at once.
    fn settle(&self) -> Option<SettleFuture> {
        None
    }
}

/// The agent whose edit is reviewed: it names the review in the editor
/// (its diagnostics' source, its actions' titles).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Agent {
    /// Claude Code (`claude`).
    #[default]
    Claude,
    /// Gemini CLI (`gemini`).
    Gemini,
    /// GitHub Copilot CLI (`copilot`).
    Copilot,
}

impl Agent {
    /// Its short name, which begins the review's action titles and
    /// messages (`Gemini: accept this change`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Claude => "Claude",
            Self::Gemini => "Gemini",
            Self::Copilot => "Copilot",
        }
    }

    /// The product's name: the `source` of its review's diagnostics.
    pub fn source(self) -> &'static str {
        match self {
            Self::Claude => "Claude Code",
            Self::Gemini => "Gemini CLI",
            Self::Copilot => "GitHub Copilot CLI",
        }
    }

    /// Whether its protocol carries part of a proposal back, for the CLI
    /// to write (Claude's `FILE_SAVED` text, Gemini's `ide/diffAccepted`
    /// content). Copilot's answers only saved (the CLI writes its own
    /// proposal, whole) or rejected: the part its user accepted goes into
    /// the editor's buffer instead ([`DiffOutcome::InBuffer`]).
    pub fn takes_part(self) -> bool {
        match self {
            Self::Claude | Self::Gemini => true,
            Self::Copilot => false,
        }
    }
}

/// What `openDiff` asks the editor to review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenDiffRequest {
    /// The agent that proposes the edit.
    pub agent: Agent,
    /// The absolute path of the file the proposal is for.
    pub path: PathBuf,
    /// The whole file as the agent proposes it.
    pub new_contents: String,
    /// The CLI's name for the review (`✻ [Claude Code] main.py (5f680c) ⧉`),
    /// by which `close_tab` withdraws it.
    pub tab_name: String,
}

/// How a review ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffOutcome {
    /// Some hunks accepted: the old text with them (`FILE_SAVED` + this text).
    Saved(String),
    /// Nothing accepted, or withdrawn by `close_tab` / `closeAllDiffTabs`
    /// (`DIFF_REJECTED` + tab name).
    Rejected,
    /// The proposal equals the current text: nothing to review (`TAB_CLOSED`).
    Unchanged,
    /// Some hunks accepted, for an agent that takes a proposal whole or not
    /// at all ([`Agent::takes_part`]): the old text with them is in the
    /// editor's buffer, unsaved; the agent writes nothing.
    InBuffer,
}

/// The future [`DiffReview::open_diff`] returns: `Err` carries a message for
/// the model (e.g. the editor went away).
pub type DiffFuture = Pin<Box<dyn Future<Output = Result<DiffOutcome, String>> + Send>>;

/// An editor that can show Claude's proposed edit for review (the LSP
/// proxy's host).
///
/// The review is a person's decision: hosts without one (headless) do not
/// implement this port and do not list `openDiff`. The host never writes
/// the file; the CLI writes what [`DiffOutcome::Saved`] carries. For an
/// agent that takes no part of a proposal ([`Agent::takes_part`]), a
/// review ends `Saved` only with the whole proposal accepted; a part goes
/// into the editor's buffer ([`DiffOutcome::InBuffer`]).
pub trait DiffReview: Send + Sync {
    /// Starts reviewing `request` (replacing a pending review of the same
    /// file); resolves when the user decided, or it was withdrawn. Dropping
    /// the future withdraws the review.
    fn open_diff(&self, request: OpenDiffRequest) -> DiffFuture;

    /// Withdraws the pending review named `tab_name` (its call answers
    /// Rejected); whether one was pending.
    ///
    /// `close_tab` and [`close_all`](Self::close_all) run inline on the
    /// connection's task: they must answer at once, never wait.
    fn close_tab(&self, tab_name: &str) -> bool;

    /// Withdraws every pending review; how many.
    fn close_all(&self) -> usize;
}

/// What `openFile` asks the editor to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenFileRequest {
    /// The file's absolute path.
    pub path: PathBuf,
    /// The range to select, in UTF-16 LSP positions, if any.
    pub selection: Option<(Position, Position)>,
    /// Whether the editor should focus the file (`makeFrontmost`).
    pub take_focus: bool,
    /// Whether a preview tab will do (`preview`); editors without preview
    /// tabs ignore it.
    pub preview: bool,
}

/// The future [`FileOpener::open_file`] returns: `Err` carries a message
/// for the model.
pub type OpenFileFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// An editor that can show a file on request (the LSP proxy, through
/// `window/showDocument`).
pub trait FileOpener: Send + Sync {
    /// Shows the file `request` names.
    fn open_file(&self, request: OpenFileRequest) -> OpenFileFuture;
}
