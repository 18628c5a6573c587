//! `checkDocumentDirty`: whether an open document has unsaved changes.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::context::EditorPorts;
use crate::ports::Document;
use crate::uri::PathInput;

/// The `checkDocumentDirty` result: `{"success": true, "filePath": <echo>,
/// "isDirty", "isUntitled"}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentDirty<S> {
    /// The `filePath` argument, echoed.
    pub file_path: S,
    /// Whether the document has unsaved changes.
    pub is_dirty: bool,
    /// Whether the document has never been saved.
    pub is_untitled: bool,
}

impl<P: AsRef<str>> Serialize for DocumentDirty<P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("success", &true)?;
        map.serialize_entry("filePath", self.file_path.as_ref())?;
        map.serialize_entry("isDirty", &self.is_dirty)?;
        map.serialize_entry("isUntitled", &self.is_untitled)?;
        map.end()
    }
}

/// Builds the `checkDocumentDirty` result for `file_path` (echoed as given)
/// and the open document it names, if any: an unknown, closed or absent
/// document is not dirty (a normal result, not an error).
pub fn document_dirty_result<S>(file_path: S, document: Option<&Document>) -> DocumentDirty<S> {
    DocumentDirty {
        file_path,
        is_dirty: document.is_some_and(|d| d.dirty),
        is_untitled: document.is_some_and(|d| d.untitled),
    }
}

/// Reports whether the document at `filePath` (an absolute path or a
/// `file://` URI) has unsaved changes in the editor: `{"success": true,
/// "filePath", "isDirty", "isUntitled"}`. A file that is not open reports
/// `isDirty: false`.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub fn check_document_dirty(
    cx: &EditorPorts,
    #[arg(description = "The document's absolute path or `file://` URI")] file_path: String,
) -> DocumentDirty<String> {
    let document = cx.buffers().and_then(|store| {
        let input = PathInput::parse(&file_path)?;
        // A hidden file is answered as one that is not open.
        if cx.hides_input(&input) {
            return None;
        }
        input
            .candidates()
            .find_map(|path| store.handle_for_path(path))
            .map(|handle| handle.snapshot())
    });
    document_dirty_result(file_path, document.as_deref())
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::memory::MemoryWorkspace;
    use crate::ports::BufferId;
    use crate::test_util::text_of_value;

    fn json(file_path: &str, document: Option<&Document>) -> String {
        serde_json::to_string(&document_dirty_result(file_path, document)).unwrap()
    }

    #[test]
    fn dirty_clean_untitled_unknown() {
        let path = Some(Arc::from(Path::new("/abs/a.rs")));
        let dirty = Document {
            dirty: true,
            ..Document::new("x", path.clone())
        };
        let clean = Document::new("x", path);
        let untitled = Document {
            dirty: true,
            untitled: true,
            ..Document::new("x", None)
        };
        assert_eq!(
            json("/abs/a.rs", Some(&dirty)),
            r#"{"success":true,"filePath":"/abs/a.rs","isDirty":true,"isUntitled":false}"#
        );
        assert_eq!(
            json("/abs/a.rs", Some(&clean)),
            r#"{"success":true,"filePath":"/abs/a.rs","isDirty":false,"isUntitled":false}"#
        );
        assert_eq!(
            json("Untitled-1", Some(&untitled)),
            r#"{"success":true,"filePath":"Untitled-1","isDirty":true,"isUntitled":true}"#
        );
        assert_eq!(
            json("/abs/gone.rs", None),
            r#"{"success":true,"filePath":"/abs/gone.rs","isDirty":false,"isUntitled":false}"#
        );
    }

    #[test]
    fn the_tool_reads_the_document_as_it_is_now() {
        let ws = MemoryWorkspace::new();
        ws.open(BufferId(1), Some(Path::new("/ws/a.rs")), "rust", "a");
        let cx = ws.editor_ports().build();
        let clean = text_of_value(check_document_dirty(&cx, "/ws/a.rs".into()));
        assert_eq!(
            clean,
            r#"{"success":true,"filePath":"/ws/a.rs","isDirty":false,"isUntitled":false}"#
        );
        ws.buffers.set_text(BufferId(1), "b");
        assert_eq!(
            text_of_value(check_document_dirty(&cx, "file:///ws/a.rs".into())),
            r#"{"success":true,"filePath":"file:///ws/a.rs","isDirty":true,"isUntitled":false}"#
        );
    }

    #[test]
    fn the_tool_finds_documents_by_path_or_uri() {
        let ws = MemoryWorkspace::new();
        ws.open(BufferId(1), Some(Path::new("/ws/a b.rs")), "rust", "a");
        ws.buffers.set_text(BufferId(1), "a!");
        let cx = ws.editor_ports().build();
        for input in [
            "/ws/a b.rs",
            "file:///ws/a b.rs",
            "file:///ws/a%20b.rs",
            "/ws/./a b.rs",
        ] {
            assert_eq!(
                text_of_value(check_document_dirty(&cx, input.into())),
                format!(
                    r#"{{"success":true,"filePath":"{input}","isDirty":true,"isUntitled":false}}"#
                )
            );
        }
        for input in ["/ws/other.rs", "a b.rs", "", "file://host/ws/a b.rs"] {
            assert_eq!(
                text_of_value(check_document_dirty(&cx, input.into())),
                format!(
                    r#"{{"success":true,"filePath":"{input}","isDirty":false,"isUntitled":false}}"#
                )
            );
        }
        assert_eq!(
            text_of_value(check_document_dirty(
                &EditorPorts::empty(),
                "/ws/a b.rs".into()
            )),
            r#"{"success":true,"filePath":"/ws/a b.rs","isDirty":false,"isUntitled":false}"#
        );
    }
}
