//! `EditorPorts`: the editor's ports the tools take, given to the server as
//! a state: those the tools read (editor, buffers, diagnostics, servers) and
//! the two through which an agent acts on the editor (opener, review).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::cache::Caches;
use crate::deny::DenyRules;
use crate::ports::{
    BufferStore, DiagnosticsQuery, DiffReview, EditorAccess, FileOpener, LanguageServers,
};

/// The ports, listed once: the struct that holds them, their `Debug`
/// fields, the context's getters and the builder's setters are made from
/// this list.
macro_rules! ports {
    ($(
        $name:ident: $port:ident {
            $(#[$get:meta])* get;
            $(#[$set:meta])* set;
        }
    )*) => {
        /// Each port, when there is one.
        #[derive(Clone, Default)]
        struct Ports {
            $($name: Option<Arc<dyn $port>>,)*
        }

        impl Ports {
            /// Whether each port is there, as `Debug` shows it.
            fn debug_fields(&self, f: &mut fmt::DebugStruct<'_, '_>) {
                $(f.field(stringify!($name), &self.$name.is_some());)*
            }
        }

        impl EditorPorts {
            $(
                $(#[$get])*
                pub fn $name(&self) -> Option<&dyn $port> {
                    self.ports.$name.as_deref()
                }
            )*
        }

        impl EditorPortsBuilder {
            $(
                $(#[$set])*
                pub fn $name(mut self, $name: Arc<dyn $port>) -> Self {
                    self.ports.$name = Some($name);
                    self
                }
            )*
        }
    };
}

ports! {
    editor: EditorAccess {
        /// The editor port, if any.
        get;
        /// Sets the editor port (open buffers, active selection).
        set;
    }
    buffers: BufferStore {
        /// The buffer store, if any.
        get;
        /// Sets the buffer store (document text, dirty flags).
        set;
    }
    diagnostics: DiagnosticsQuery {
        /// The diagnostics port, if any.
        get;
        /// Sets the diagnostics port.
        set;
    }
    opener: FileOpener {
        /// The file opener (`openFile`), if any.
        get;
        /// Sets the file opener (`openFile`); without one, `openFile` answers a
        /// failure result.
        set;
    }
    review: DiffReview {
        /// The diff review (`openDiff`, `close_tab`, `closeAllDiffTabs`), if any.
        get;
        /// Sets the diff review (`openDiff`); without one, `openDiff` answers a
        /// failure result, and `close_tab` and `closeAllDiffTabs` have nothing
        /// to close.
        set;
    }
    servers: LanguageServers {
        /// The editor's language servers (the live LSP tools), if any.
        get;
        /// Sets the editor's language servers (the live LSP tools); without
        /// them, those tools answer a failure result.
        set;
    }
}

/// The editor as the tools see it: its ports, the workspace folders and
/// the user's deny rules.
///
/// Read ports: [`editor`](Self::editor), [`buffers`](Self::buffers),
/// [`diagnostics`](Self::diagnostics), [`servers`](Self::servers) (the
/// live LSP tools ask, and change nothing). Ports that act on the editor:
/// [`opener`](Self::opener) (`openFile`) and [`review`](Self::review)
/// (`openDiff`).
///
/// Each port is optional; a tool whose port is missing answers with the empty
/// result of the protocol (`{"tabs": []}`, `[]`, …), never an error. Built once
/// with [`EditorPorts::builder`] and handed to the server with
/// `Server::builder(..).state(editor_ports)`; the tools take it as `&EditorPorts`.
/// Cloning is cheap and clones share the ports and the tools' caches.
#[derive(Clone, Default)]
pub struct EditorPorts {
    ports: Ports,
    workspace_folders: Arc<[PathBuf]>,
    /// The user's deny rules: what never leaves through the tools.
    deny: Arc<DenyRules>,
    /// Each tool's cache, by the tool's own type.
    pub(crate) caches: Arc<Caches>,
}

impl EditorPorts {
    /// Starts building a context; every port starts out absent.
    pub fn builder() -> EditorPortsBuilder {
        EditorPortsBuilder::default()
    }

    /// A context with no ports and no folders: every tool gives its empty result.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The workspace folders, first one the root.
    pub fn workspace_folders(&self) -> &[PathBuf] {
        &self.workspace_folders
    }

    pub(crate) fn workspace_folders_arc(&self) -> Arc<[PathBuf]> {
        Arc::clone(&self.workspace_folders)
    }

    /// The user's deny rules: a file they hide is left out of every
    /// answer, resource, prompt and notification (see [`crate::deny`]).
    pub fn deny_rules(&self) -> &DenyRules {
        &self.deny
    }

    /// Whether the deny rules hide `path` from agents now.
    pub fn hides(&self, path: &std::path::Path) -> bool {
        self.deny.hides(path)
    }

    /// Whether the deny rules hide any reading of a path the caller gave
    /// (each of a URI's readings: see [`PathInput`](crate::uri::PathInput)).
    pub(crate) fn hides_input(&self, input: &crate::uri::PathInput) -> bool {
        input.candidates().any(|path| self.deny.hides(path))
    }

    /// The `Read` rule hiding any reading of `input`, if one does.
    pub(crate) fn read_denial_of(
        &self,
        input: &crate::uri::PathInput,
    ) -> Option<crate::deny::DenyRule> {
        input
            .candidates()
            .find_map(|path| self.deny.read_denial(path))
    }

    /// The `Read` or `Edit` rule denying edits of any reading of `input`.
    pub(crate) fn edit_denial_of(
        &self,
        input: &crate::uri::PathInput,
    ) -> Option<crate::deny::DenyRule> {
        input
            .candidates()
            .find_map(|path| self.deny.edit_denial(path))
    }

    pub(crate) fn deny_rules_arc(&self) -> Arc<DenyRules> {
        Arc::clone(&self.deny)
    }
}

impl fmt::Debug for EditorPorts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("EditorPorts");
        self.ports.debug_fields(&mut f);
        f.field("workspace_folders", &self.workspace_folders)
            .field("deny", &self.deny.current().rules().count())
            .finish_non_exhaustive()
    }
}

/// Builds a [`EditorPorts`].
///
/// ```
/// use std::sync::Arc;
/// use ide_mcp_tools::EditorPorts;
/// use ide_mcp_tools::memory::MemoryDiagnostics;
///
/// let diagnostics = Arc::new(MemoryDiagnostics::new());
/// let cx = EditorPorts::builder()
///     .diagnostics(diagnostics.clone())
///     .workspace_folder("/ws")
///     .build();
/// assert!(cx.editor().is_none());
/// assert_eq!(cx.workspace_folders().len(), 1);
/// ```
#[derive(Default)]
pub struct EditorPortsBuilder {
    ports: Ports,
    workspace_folders: Vec<PathBuf>,
    deny: Option<Arc<DenyRules>>,
}

impl fmt::Debug for EditorPortsBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("EditorPortsBuilder");
        self.ports.debug_fields(&mut f);
        f.field("workspace_folders", &self.workspace_folders)
            .field("deny", &self.deny.is_some())
            .finish()
    }
}

impl EditorPortsBuilder {
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

    /// Sets the user's deny rules (a host's [`DenyRules::watch`]);
    /// without them, nothing is denied.
    pub fn deny_rules(mut self, rules: Arc<DenyRules>) -> Self {
        self.deny = Some(rules);
        self
    }

    /// The context.
    pub fn build(self) -> EditorPorts {
        EditorPorts {
            ports: self.ports,
            workspace_folders: self.workspace_folders.into(),
            deny: self.deny.unwrap_or_default(),
            caches: Arc::default(),
        }
    }
}
