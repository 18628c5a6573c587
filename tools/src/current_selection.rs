//! `getCurrentSelection`, and the `selection_changed` params built the same way.

use std::path::Path;
use std::sync::Arc;

use lsp_types::Position;
use ropey::RopeSlice;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::context::EditorPorts;
use crate::ports::{Document, EditorAccess, Selection};
use crate::position::{RopeText, slice};
use crate::uri::{FileUri, LossyPath};

/// The message of the failure result, as the IDE extensions word it.
pub const NO_ACTIVE_EDITOR: &str = "No active editor found";

/// `{"start", "end", "isEmpty"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectionRange {
    /// The first selected position.
    pub start: Position,
    /// The position just past the selection.
    pub end: Position,
    /// Whether nothing is selected (a cursor).
    pub is_empty: bool,
}

/// The params of `selection_changed`, and getCurrentSelection's success
/// result without `success`: `{"text", "filePath", "fileUrl", "selection"}`.
#[derive(Clone, Copy, Debug)]
pub struct SelectionParams<'a> {
    /// The selected text, sliced from the document's rope.
    pub text: RopeSlice<'a>,
    /// The file's absolute path.
    pub file_path: &'a Path,
    /// The selection, ordered.
    pub selection: SelectionRange,
}

impl SelectionParams<'_> {
    fn write_entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry("text", &RopeText(self.text))?;
        map.serialize_entry("filePath", &LossyPath(self.file_path))?;
        map.serialize_entry("fileUrl", &FileUri(self.file_path))?;
        map.serialize_entry("selection", &self.selection)
    }
}

impl Serialize for SelectionParams<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(4))?;
        self.write_entries(&mut map)?;
        map.end()
    }
}

/// The selection params of `selection` in `document`; `None` when the
/// selection's buffer has no file path (nothing a client could use).
///
/// The text is `""` when `document` is `None` (no buffer store) and for a
/// cursor. Slicing is O(log n + selection).
pub fn selection_params<'a>(
    selection: &'a Selection,
    document: Option<&'a Document>,
) -> Option<SelectionParams<'a>> {
    let file_path = selection.path.as_deref()?;
    let (start, end) = selection.ordered();
    let is_empty = start == end;
    let text = match document {
        Some(document) if !is_empty => slice(&document.text, start, end),
        _ => RopeSlice::from(""),
    };
    Some(SelectionParams {
        text,
        file_path,
        selection: SelectionRange {
            start,
            end,
            is_empty,
        },
    })
}

/// The `getCurrentSelection` result.
#[derive(Clone, Copy, Debug)]
pub enum CurrentSelection<'a> {
    /// `{"success": true, "text", "filePath", "fileUrl", "selection"}`.
    Active(SelectionParams<'a>),
    /// `{"success": false, "message": "No active editor found"}`.
    NoActiveEditor,
}

impl Serialize for CurrentSelection<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Active(params) => {
                let mut map = serializer.serialize_map(Some(5))?;
                map.serialize_entry("success", &true)?;
                params.write_entries(&mut map)?;
                map.end()
            }
            Self::NoActiveEditor => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("success", &false)?;
                map.serialize_entry("message", NO_ACTIVE_EDITOR)?;
                map.end()
            }
        }
    }
}

/// Builds the `getCurrentSelection` result from the active selection (if
/// any) and its document (if a buffer store has it).
pub fn current_selection_result<'a>(
    selection: Option<&'a Selection>,
    document: Option<&'a Document>,
) -> CurrentSelection<'a> {
    selection
        .and_then(|s| selection_params(s, document))
        .map_or(CurrentSelection::NoActiveEditor, CurrentSelection::Active)
}

/// The active selection and a snapshot of its document, read from the ports:
/// what [`get_current_selection`] returns (it serializes through
/// [`current_selection_result`]) and what the selection publisher sends.
#[derive(Clone, Debug, Default)]
pub struct SelectionState {
    /// The active selection.
    pub selection: Option<Selection>,
    /// The snapshot of its document.
    pub document: Option<Arc<Document>>,
}

impl SelectionState {
    /// Reads the editor port, then the buffer store (a wait-free snapshot
    /// load). A selection in a file the deny rules hide is no selection.
    pub fn read(cx: &EditorPorts) -> Self {
        let selection = cx
            .editor()
            .and_then(EditorAccess::active_selection)
            .filter(|s| !s.path.as_deref().is_some_and(|path| cx.hides(path)));
        let document = selection
            .as_ref()
            .and_then(|s| cx.buffers()?.handle_for(s.buffer))
            .map(|handle| handle.snapshot());
        Self {
            selection,
            document,
        }
    }

    /// The `getCurrentSelection` result.
    pub fn result(&self) -> CurrentSelection<'_> {
        current_selection_result(self.selection.as_ref(), self.document.as_deref())
    }

    /// The `selection_changed` params; `None` without a file-backed active editor.
    pub fn params(&self) -> Option<SelectionParams<'_>> {
        selection_params(self.selection.as_ref()?, self.document.as_deref())
    }
}

impl Serialize for SelectionState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.result().serialize(serializer)
    }
}

/// Returns the text the user has selected in the active editor, with its
/// file path, `file://` URL and range: `{"success": true, "text", "filePath",
/// "fileUrl", "selection": {"start", "end", "isEmpty"}}` (zero-based lines,
/// UTF-16 characters; `text` is empty for a bare cursor). Without an active
/// editor: `{"success": false, "message": "No active editor found"}`.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub fn get_current_selection(cx: &EditorPorts) -> SelectionState {
    SelectionState::read(cx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::BufferId;
    use crate::test_util::{hello_world, text_of_value};

    fn selection(path: Option<&str>, start: (u32, u32), end: (u32, u32)) -> Selection {
        Selection {
            buffer: BufferId(1),
            path: path.map(|p| Arc::from(Path::new(p))),
            start: Position::new(start.0, start.1),
            end: Position::new(end.0, end.1),
        }
    }

    fn document() -> Document {
        Document::new("fn main() {\n    let 😀 = 1;\n}\n", None)
    }

    fn json(selection: Option<&Selection>, document: Option<&Document>) -> String {
        serde_json::to_string(&current_selection_result(selection, document)).unwrap()
    }

    const NO_EDITOR: &str = r#"{"success":false,"message":"No active editor found"}"#;

    #[test]
    fn a_selection_with_its_text() {
        let doc = document();
        // `character` counts UTF-16 units: the emoji is two.
        let sel = selection(Some("/abs/a.rs"), (1, 4), (1, 10));
        assert_eq!(
            json(Some(&sel), Some(&doc)),
            r#"{"success":true,"text":"let 😀","filePath":"/abs/a.rs","fileUrl":"file:///abs/a.rs","selection":{"start":{"line":1,"character":4},"end":{"line":1,"character":10},"isEmpty":false}}"#
        );
        // Backwards (the cursor at the start): ordered; across lines.
        let sel = selection(Some("/abs/a b.rs"), (2, 0), (0, 10));
        assert_eq!(
            json(Some(&sel), Some(&doc)),
            r#"{"success":true,"text":"{\n    let 😀 = 1;\n","filePath":"/abs/a b.rs","fileUrl":"file:///abs/a b.rs","selection":{"start":{"line":0,"character":10},"end":{"line":2,"character":0},"isEmpty":false}}"#
        );
    }

    #[test]
    fn a_cursor_and_a_missing_store_give_empty_text() {
        let doc = document();
        let cursor = selection(Some("/abs/a.rs"), (1, 6), (1, 6));
        assert_eq!(
            json(Some(&cursor), Some(&doc)),
            r#"{"success":true,"text":"","filePath":"/abs/a.rs","fileUrl":"file:///abs/a.rs","selection":{"start":{"line":1,"character":6},"end":{"line":1,"character":6},"isEmpty":true}}"#
        );
        let sel = selection(Some("/abs/a.rs"), (0, 0), (0, 2));
        assert_eq!(
            json(Some(&sel), None),
            r#"{"success":true,"text":"","filePath":"/abs/a.rs","fileUrl":"file:///abs/a.rs","selection":{"start":{"line":0,"character":0},"end":{"line":0,"character":2},"isEmpty":false}}"#
        );
    }

    #[test]
    fn a_selection_deep_in_a_large_document() {
        // 200 000 lines (about 5 MB) and one 1 MB line: the slice is found by
        // the rope's index, not by scanning.
        let mut text = "let 😀 = \"padding\";\n".repeat(200_000);
        text.push_str(&"x".repeat(1 << 20));
        text.push_str("needle");
        let doc = Document::new(text.as_str(), None);
        let sel = selection(Some("/abs/big.rs"), (150_000, 4), (150_000, 6));
        assert!(json(Some(&sel), Some(&doc)).contains(r#""text":"😀""#));
        let sel = selection(
            Some("/abs/big.rs"),
            (200_000, 1 << 20),
            (200_000, (1 << 20) + 6),
        );
        assert!(json(Some(&sel), Some(&doc)).contains(r#""text":"needle""#));
    }

    #[test]
    fn a_client_gets_the_selection_as_it_is_now() {
        let ws = hello_world();
        let cx = ws.editor_ports().build();
        ws.select(BufferId(7), Position::new(0, 6), Position::new(0, 11));
        let world = text_of_value(get_current_selection(&cx));
        assert!(world.contains(r#""text":"world""#), "{world}");
        // Another selection in the same snapshot.
        ws.select(BufferId(7), Position::new(0, 0), Position::new(0, 5));
        let hello = text_of_value(get_current_selection(&cx));
        assert!(hello.contains(r#""text":"hello""#), "{hello}");
        // The same selection in a new snapshot of the document.
        ws.buffers.set_text(BufferId(7), "HELLO world");
        let edited = text_of_value(get_current_selection(&cx));
        assert!(edited.contains(r#""text":"HELLO""#), "{edited}");
    }

    #[test]
    fn no_active_file_is_a_failure_result() {
        assert_eq!(json(None, None), NO_EDITOR);
        let untitled = selection(None, (0, 0), (0, 2));
        assert_eq!(json(Some(&untitled), Some(&document())), NO_EDITOR);
    }

    #[test]
    fn params_leave_out_success() {
        let doc = document();
        let sel = selection(Some("/abs/a.rs"), (0, 3), (0, 7));
        assert_eq!(
            serde_json::to_string(&selection_params(&sel, Some(&doc))).unwrap(),
            r#"{"text":"main","filePath":"/abs/a.rs","fileUrl":"file:///abs/a.rs","selection":{"start":{"line":0,"character":3},"end":{"line":0,"character":7},"isEmpty":false}}"#
        );
    }

    #[test]
    fn the_tool_reads_the_ports() {
        assert_eq!(
            text_of_value(get_current_selection(&EditorPorts::empty())),
            NO_EDITOR
        );
        let ws = hello_world();
        // Open but never focused: no active editor.
        let cx = ws.editor_ports().build();
        assert_eq!(text_of_value(get_current_selection(&cx)), NO_EDITOR);
        ws.select(BufferId(7), Position::new(0, 6), Position::new(0, 11));
        assert_eq!(
            text_of_value(get_current_selection(&cx)),
            r#"{"success":true,"text":"world","filePath":"/ws/a.rs","fileUrl":"file:///ws/a.rs","selection":{"start":{"line":0,"character":6},"end":{"line":0,"character":11},"isEmpty":false}}"#
        );
        // An editor port without a buffer store: no text.
        let cx = EditorPorts::builder().editor(ws.editor.clone()).build();
        assert!(
            text_of_value(get_current_selection(&cx)).starts_with(r#"{"success":true,"text":"","#)
        );
    }
}
