//! The editor's state as MCP resources: each open document (`file:///…`,
//! its current text, unsaved edits included), and `ide://diagnostics`.
//! Claude Code offers them as `@` mentions.

use ide_mcp_runtime::{ListedResource, ResourceContents, mcp_resource};

use crate::context::EditorPorts;
use crate::diagnostics::{all_diagnostics_result, shown_diagnostics};
use crate::ports::DiagnosticsQuery;
use crate::uri::{PathInput, encoded_file_uri};

/// An open document as the editor holds it now: its text with any unsaved
/// edits. Only documents open in the editor can be read.
#[mcp_resource(
    uri = "file:///{path}",
    name = "document",
    title = "Open document",
    mime_type = "text/plain",
    list = open_documents
)]
pub fn open_document(cx: &EditorPorts, path: String) -> Option<ResourceContents> {
    let store = cx.buffers()?;
    // The template's variable holds the path without its leading `/`.
    let path = format!("/{path}");
    let input = PathInput::parse(&path)?;
    // A hidden file is no resource: "not found", as for a closed one.
    if cx.hides_input(&input) {
        return None;
    }
    let handle = input
        .candidates()
        .find_map(|path| store.handle_for_path(path))?;
    let document = handle.snapshot();
    Some(ResourceContents::text(document.text.to_string()))
}

/// The open documents backed by a file, as `resources/list` shows them:
/// their `file://` URI, file name, language, and whether they have unsaved
/// changes (in the description).
pub fn open_documents(cx: &EditorPorts) -> Vec<ListedResource> {
    let Some(editor) = cx.editor() else {
        return Vec::new();
    };
    let buffers: Vec<_> = editor
        .open_buffers()
        .into_iter()
        .filter(|buffer| buffer.path.as_deref().is_some_and(|path| !cx.hides(path)))
        .collect();
    let ids: Vec<_> = buffers.iter().map(|buffer| buffer.id).collect();
    let dirty = cx
        .buffers()
        .map(|store| store.dirty_flags(&ids))
        .unwrap_or_default();
    buffers
        .iter()
        .enumerate()
        .filter_map(|(i, buffer)| {
            let path = buffer.path.as_deref()?;
            let name = path.file_name()?.to_string_lossy();
            let state = if dirty.get(i).copied().unwrap_or(false) {
                "with unsaved changes"
            } else {
                "saved"
            };
            let description = format!(
                "{} open in the editor ({}), {state}",
                path.display(),
                buffer.language_id
            );
            Some(ListedResource::new(encoded_file_uri(path), name).with_description(description))
        })
        .collect()
}

/// Every diagnostic the editor knows now, by file, as `getDiagnostics`
/// answers it: `[{"uri", "diagnostics": […]}, …]`.
#[mcp_resource(
    uri = "ide://diagnostics",
    title = "Diagnostics",
    mime_type = "application/json"
)]
pub fn diagnostics(cx: &EditorPorts) -> String {
    let files = shown_diagnostics(
        cx,
        cx.diagnostics()
            .map(DiagnosticsQuery::all)
            .unwrap_or_default(),
    );
    serde_json::to_string(&all_diagnostics_result(&files)).expect("diagnostics serialize")
}
