//! In-memory implementations of the three ports: the stores every host
//! keeps its editor state in (the LSP host's mirror of the editor, the
//! headless host's files), and those of embedding editors and tests.
//!
//! [`MemoryEditor`] ([`EditorAccess`](crate::EditorAccess)),
//! [`MemoryBuffers`] ([`BufferStore`](crate::BufferStore)) and
//! [`MemoryDiagnostics`] ([`DiagnosticsQuery`](crate::DiagnosticsQuery)) can
//! be used apart; [`MemoryWorkspace`] bundles them, with calls that keep the
//! editor and the buffer store in step.

mod buffers;
mod diagnostics;
mod editor;

use std::path::Path;
use std::sync::Arc;

use lsp_types::Position;

pub use buffers::MemoryBuffers;
pub use diagnostics::{CheckGuard, MemoryDiagnostics};
pub use editor::MemoryEditor;

use crate::EditorPorts;
use crate::context::EditorPortsBuilder;
use crate::ports::{BufferId, Document, DocumentHandle, OpenBuffer};

/// The three in-memory ports together.
///
/// ```
/// use ide_mcp_tools::BufferId;
/// use ide_mcp_tools::memory::MemoryWorkspace;
///
/// let ws = MemoryWorkspace::new();
/// ws.open(BufferId(1), Some("/ws/src/main.rs".as_ref()), "rust", "fn main() {}\n");
/// ws.buffers.set_text(BufferId(1), "fn main() { todo!() }\n");
/// let cx = ws.editor_ports().workspace_folder("/ws").build();
/// # let _ = cx;
/// ```
#[derive(Clone, Debug, Default)]
pub struct MemoryWorkspace {
    /// The open buffers, the active one and selections.
    pub editor: Arc<MemoryEditor>,
    /// The documents' text and dirty flags.
    pub buffers: Arc<MemoryBuffers>,
    /// The diagnostics.
    pub diagnostics: Arc<MemoryDiagnostics>,
}

impl MemoryWorkspace {
    /// Nothing open, no diagnostics.
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens buffer `id` in the editor and the buffer store (clean, version 0;
    /// untitled when `path` is `None`), and returns its document handle.
    pub fn open(
        &self,
        id: BufferId,
        path: Option<&Path>,
        language_id: &str,
        text: &str,
    ) -> DocumentHandle {
        let path: Option<Arc<Path>> = path.map(Arc::from);
        let buffer = match &path {
            Some(path) => OpenBuffer::new(id, Arc::clone(path), language_id),
            None => OpenBuffer::without_path(id, language_id),
        };
        self.editor.open(buffer);
        let untitled = path.is_none();
        self.buffers.open(
            id,
            Document {
                untitled,
                ..Document::new(text, path)
            },
        )
    }

    /// Closes buffer `id` in the editor and the buffer store.
    pub fn close(&self, id: BufferId) {
        self.editor.close(id);
        self.buffers.close(id);
    }

    /// Sets buffer `id`'s selection and makes it active.
    pub fn select(&self, id: BufferId, start: Position, end: Position) -> bool {
        self.editor.set_selection(id, start, end)
    }

    /// A [`EditorPorts`] builder with the three ports set; add the workspace
    /// folders and build.
    pub fn editor_ports(&self) -> EditorPortsBuilder {
        EditorPorts::builder()
            .editor(self.editor.clone())
            .buffers(self.buffers.clone())
            .diagnostics(self.diagnostics.clone())
    }
}
