//! `ReadContext`: the ports the read tools take, given to the server as a state.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::cache::Caches;
use crate::ports::{
    BufferStore, DiagnosticsQuery, DiffReview, EditorAccess, FileOpener, LanguageServers,
};

/// What the read tools read: the editor's ports and the workspace folders.
///
/// Each port is optional; a tool whose port is missing answers with the empty
/// result of the protocol (`{"tabs": []}`, `[]`, …), never an error. Built once
/// with [`ReadContext::builder`] and handed to the server with
/// `Server::builder(..).state(read_context)`; the tools take it as `&ReadContext`.
/// Cloning is cheap and clones share the ports and the tools' caches.
#[derive(Clone, Default)]
pub struct ReadContext {
    editor: Option<Arc<dyn EditorAccess>>,
    buffers: Option<Arc<dyn BufferStore>>,
    diagnostics: Option<Arc<dyn DiagnosticsQuery>>,
    opener: Option<Arc<dyn FileOpener>>,
    review: Option<Arc<dyn DiffReview>>,
    servers: Option<Arc<dyn LanguageServers>>,
    workspace_folders: Arc<[PathBuf]>,
    /// Each tool's cache, by the tool's own type.
    pub(crate) caches: Arc<Caches>,
}

impl ReadContext {
    /// Starts building a context; every port starts out absent.
    pub fn builder() -> ReadContextBuilder {
        ReadContextBuilder::default()
    }

    /// A context with no ports and no folders: every tool gives its empty result.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The editor port, if any.
    pub fn editor(&self) -> Option<&dyn EditorAccess> {
        self.editor.as_deref()
    }

    /// The buffer store, if any.
    pub fn buffers(&self) -> Option<&dyn BufferStore> {
        self.buffers.as_deref()
    }

    /// The diagnostics port, if any.
    pub fn diagnostics(&self) -> Option<&dyn DiagnosticsQuery> {
        self.diagnostics.as_deref()
    }

    /// The file opener (`openFile`), if any.
    pub fn opener(&self) -> Option<&dyn FileOpener> {
        self.opener.as_deref()
    }

    /// The diff review (`openDiff`, `close_tab`, `closeAllDiffTabs`), if any.
    pub fn review(&self) -> Option<&dyn DiffReview> {
        self.review.as_deref()
    }

    /// The editor's language servers (the live LSP tools), if any.
    pub fn servers(&self) -> Option<&dyn LanguageServers> {
        self.servers.as_deref()
    }

    /// The workspace folders, first one the root.
    pub fn workspace_folders(&self) -> &[PathBuf] {
        &self.workspace_folders
    }

    pub(crate) fn workspace_folders_arc(&self) -> Arc<[PathBuf]> {
        Arc::clone(&self.workspace_folders)
    }
}

impl fmt::Debug for ReadContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadContext")
            .field("editor", &self.editor.is_some())
            .field("buffers", &self.buffers.is_some())
            .field("diagnostics", &self.diagnostics.is_some())
            .field("opener", &self.opener.is_some())
            .field("review", &self.review.is_some())
            .field("servers", &self.servers.is_some())
            .field("workspace_folders", &self.workspace_folders)
            .finish_non_exhaustive()
    }
}

/// Builds a [`ReadContext`].
///
/// ```
/// use std::sync::Arc;
/// use ide_mcp_tools::ReadContext;
/// use ide_mcp_tools::memory::MemoryDiagnostics;
///
/// let diagnostics = Arc::new(MemoryDiagnostics::new());
/// let cx = ReadContext::builder()
///     .diagnostics(diagnostics.clone())
///     .workspace_folder("/ws")
///     .build();
/// assert!(cx.editor().is_none());
/// assert_eq!(cx.workspace_folders().len(), 1);
/// ```
#[derive(Default)]
pub struct ReadContextBuilder {
    editor: Option<Arc<dyn EditorAccess>>,
    buffers: Option<Arc<dyn BufferStore>>,
    diagnostics: Option<Arc<dyn DiagnosticsQuery>>,
    opener: Option<Arc<dyn FileOpener>>,
    review: Option<Arc<dyn DiffReview>>,
    servers: Option<Arc<dyn LanguageServers>>,
    workspace_folders: Vec<PathBuf>,
}

impl fmt::Debug for ReadContextBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadContextBuilder")
            .field("editor", &self.editor.is_some())
            .field("buffers", &self.buffers.is_some())
            .field("diagnostics", &self.diagnostics.is_some())
            .field("opener", &self.opener.is_some())
            .field("review", &self.review.is_some())
            .field("servers", &self.servers.is_some())
            .field("workspace_folders", &self.workspace_folders)
            .finish()
    }
}

impl ReadContextBuilder {
    /// Sets the editor port (open buffers, active selection).
    pub fn editor(mut self, editor: Arc<dyn EditorAccess>) -> Self {
        self.editor = Some(editor);
        self
    }

    /// Sets the buffer store (document text, dirty flags).
    pub fn buffers(mut self, buffers: Arc<dyn BufferStore>) -> Self {
        self.buffers = Some(buffers);
        self
    }

    /// Sets the diagnostics port.
    pub fn diagnostics(mut self, diagnostics: Arc<dyn DiagnosticsQuery>) -> Self {
        self.diagnostics = Some(diagnostics);
        self
    }

    /// Sets the file opener (`openFile`); without one, `openFile` answers a
    /// failure result.
    pub fn opener(mut self, opener: Arc<dyn FileOpener>) -> Self {
        self.opener = Some(opener);
        self
    }

    /// Sets the diff review (`openDiff`); without one, `openDiff` answers a
    /// failure result, and `close_tab` and `closeAllDiffTabs` have nothing
    /// to close.
    pub fn review(mut self, review: Arc<dyn DiffReview>) -> Self {
        self.review = Some(review);
        self
    }

    /// Sets the editor's language servers (the live LSP tools); without
    /// them, those tools answer a failure result.
    pub fn servers(mut self, servers: Arc<dyn LanguageServers>) -> Self {
        self.servers = Some(servers);
        self
    }

    /// Adds a workspace folder (an absolute path); the first added is the root.
    pub fn workspace_folder(mut self, folder: impl Into<PathBuf>) -> Self {
        self.workspace_folders.push(folder.into());
        self
    }

    /// Adds workspace folders, in order.
    pub fn workspace_folders<P: Into<PathBuf>>(
        mut self,
        folders: impl IntoIterator<Item = P>,
    ) -> Self {
        self.workspace_folders
            .extend(folders.into_iter().map(Into::into));
        self
    }

    /// The context.
    pub fn build(self) -> ReadContext {
        ReadContext {
            editor: self.editor,
            buffers: self.buffers,
            diagnostics: self.diagnostics,
            opener: self.opener,
            review: self.review,
            servers: self.servers,
            workspace_folders: self.workspace_folders.into(),
            caches: Arc::default(),
        }
    }
}
