//! The Claude Code IDE tools over editor ports — the five read tools
//! (`getDiagnostics`, `getCurrentSelection`, `getOpenEditors`,
//! `getWorkspaceFolders`, `checkDocumentDirty`), `getLatestSelection`, and
//! those that act on the editor (`openFile`, and the review of Claude's edits:
//! `openDiff`, `close_tab`, `closeAllDiffTabs`) — registered with
//! `#[mcp_tool]` and served by `ide-mcp-runtime`.
//!
//! An editor implements (or uses the [in-memory](memory) versions of) three
//! ports — [`EditorAccess`], [`BufferStore`], [`DiagnosticsQuery`] — puts them
//! in a [`EditorPorts`] and gives it to the server as a state. The tools are
//! registered by linking this crate; the selection reaches the `claude` CLI
//! through a [`SelectionPublisher`]. An editor that can show a person
//! Claude's proposed edits adds a [`DiffReview`] (the line hunks and the
//! composed answer are in [`review`]).
//!
//! ```
//! use std::path::Path;
//! use std::sync::Arc;
//!
//! use ide_mcp_runtime::Server;
//! use ide_mcp_tools::memory::MemoryWorkspace;
//! use ide_mcp_tools::{BufferId, EditorPorts, SelectionPublisher};
//! use lsp_types::{Diagnostic, DiagnosticSeverity, Position, Range};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // The editor's state, kept in step by the editor as the user works.
//! let ws = MemoryWorkspace::new();
//! let main_rs = BufferId(1);
//! ws.open(main_rs, Some(Path::new("/ws/src/main.rs")), "rust", "fn main() {\n    foo;\n}\n");
//! ws.select(main_rs, Position::new(1, 4), Position::new(1, 7));
//! ws.buffers.set_text(main_rs, "fn main() {\n    foo;\n}\n// edited\n"); // now dirty
//! ws.diagnostics.set(
//!     Path::new("/ws/src/main.rs"),
//!     vec![Diagnostic {
//!         severity: Some(DiagnosticSeverity::ERROR),
//!         source: Some("rustc".into()),
//!         ..Diagnostic::new_simple(
//!             Range::new(Position::new(1, 4), Position::new(1, 7)),
//!             "cannot find value `foo` in this scope".into(),
//!         )
//!     }],
//! );
//!
//! // The ports and folders the tools read; a missing port empties its tool.
//! let cx: EditorPorts = ws.editor_ports().workspace_folder("/ws").build();
//!
//! // The server: the five tools are registered by linking this crate.
//! let server = Server::builder("my-editor", "1.0").state(cx.clone()).build()?;
//!
//! // Selection changes reach connected clients, debounced.
//! let publisher = SelectionPublisher::spawn(server.notifier().clone(), cx.clone());
//! publisher.selection_changed();
//!
//! // The tools are plain functions too.
//! let selection = serde_json::to_value(ide_mcp_tools::get_current_selection(&cx))?;
//! assert_eq!(selection["text"], "foo");
//! let dirty = ide_mcp_tools::check_document_dirty(&cx, "/ws/src/main.rs".into());
//! assert!(dirty.is_dirty);
//! // Hand `server` to a transport (WebSocket with lockfile, or stdio) to serve it.
//! # let _ = server;
//! # Ok(())
//! # }
//! ```
//!
//! A tool of your own reads the same ports by taking `&EditorPorts` (this is
//! the README's example, compiled here):
//!
//! ```
//! use ide_mcp_runtime::mcp_tool;
//! use ide_mcp_tools::EditorPorts;
//!
//! /// Counts the lines of the document at `filePath` as the editor holds it
//! /// (unsaved changes included); `null` when the file is not open.
//! #[mcp_tool(read_only)]
//! pub fn count_lines(cx: &EditorPorts, file_path: String) -> Option<usize> {
//!     let handle = cx.buffers()?.handle_for_path(file_path.as_ref())?;
//!     Some(handle.snapshot().text.len_lines())
//! }
//!
//! let registry = ide_mcp_runtime::Registry::global().unwrap();
//! assert!(registry.get("countLines").is_some());
//! ```
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::dbg_macro))]

mod agent_file;
mod cache;
mod context;
#[cfg(unix)]
pub mod copilot;
pub mod current_selection;
pub mod deny;
pub mod diagnostics;
pub mod diff_tabs;
pub mod document_dirty;
pub mod documents;
pub mod fix_prompt;
pub mod gemini;
pub mod latest_selection;
pub mod live_lsp;
pub mod memory;
pub mod open_diff;
pub mod open_editors;
pub mod open_file;
pub mod ports;
pub mod position;
pub mod review;
pub mod selection;
pub mod uri;
pub mod workspace_folders;

/// The wire names of the IDE tools this crate registers, sorted as
/// `tools/list` lists them. The one list of them: tests, benchmarks and hosts
/// compare against it, and `tests/registry.rs` checks it against the registry.
pub const TOOL_NAMES: &[&str] = &[
    "callHierarchy",
    "checkDocumentDirty",
    "closeAllDiffTabs",
    "close_tab",
    "documentSymbols",
    "findReferences",
    "getCurrentSelection",
    "getDiagnostics",
    "getLatestSelection",
    "getOpenEditors",
    "getWorkspaceFolders",
    "goToDefinition",
    "goToImplementation",
    "hover",
    "openDiff",
    "openFile",
    "quickFixes",
    "renamePreview",
    "workspaceSymbols",
];

/// The live LSP tools among [`TOOL_NAMES`] ([`live_lsp`]): served only by a
/// host with the editor's language servers behind it.
pub const LSP_TOOL_NAMES: &[&str] = &[
    "callHierarchy",
    "documentSymbols",
    "findReferences",
    "goToDefinition",
    "goToImplementation",
    "hover",
    "quickFixes",
    "renamePreview",
    "workspaceSymbols",
];

/// The read tools among [`TOOL_NAMES`]: those that only read the editor's
/// state (`readOnlyHint`), each with an empty answer when its port is
/// missing; of the others, the [live LSP tools](LSP_TOOL_NAMES) are
/// read-only too, and the rest act on the editor.
pub const READ_TOOL_NAMES: &[&str] = &[
    "checkDocumentDirty",
    "getCurrentSelection",
    "getDiagnostics",
    "getLatestSelection",
    "getOpenEditors",
    "getWorkspaceFolders",
];

pub use context::{EditorPorts, EditorPortsBuilder};
pub use current_selection::{SelectionState, current_selection_result, get_current_selection};
pub use diagnostics::{
    DiagnosticsReply, all_diagnostics_result, file_diagnostics_result, get_diagnostics,
};
pub use diff_tabs::{close_all_diff_tabs, close_tab};
pub use document_dirty::{DocumentDirty, check_document_dirty, document_dirty_result};
pub use latest_selection::{LatestSelection, get_latest_selection};
pub use live_lsp::{
    call_hierarchy, document_symbols, find_references, go_to_definition, go_to_implementation,
    hover, quick_fixes, rename_preview, workspace_symbols,
};
pub use open_diff::{OpenDiffArgs, open_diff};
pub use open_editors::{OpenEditorsState, get_open_editors, open_editors_result};
pub use open_file::open_file;
pub use ports::{
    Agent, BufferId, BufferStore, CallDirection, CharPosition, DEFAULT_SETTLE_BOUND,
    DiagnosticsMap, DiagnosticsQuery, DiffFuture, DiffOutcome, DiffReview, Document,
    DocumentHandle, EditorAccess, FileDiagnostics, FileOpener, LanguageServers, LspFeature,
    LspFuture, LspQuery, OpenBuffer, OpenDiffRequest, OpenFileFuture, OpenFileRequest, Selection,
    SettleFuture,
};
pub use selection::{SELECTION_DEBOUNCE, SelectionPublisher};
pub use workspace_folders::{
    WorkspaceFoldersState, get_workspace_folders, workspace_folders_result,
};

#[cfg(test)]
mod concurrency_tests;
#[cfg(test)]
mod test_util;
