//! `checkDocumentDirty`: whether an open document has unsaved changes.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::context::ReadContext;
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
pub fn check_document_dirty(cx: &ReadContext, file_path: String) -> DocumentDirty<String> {
    let document = cx.buffers().and_then(|store| {
        PathInput::parse(&file_path)?
            .candidates()
            .find_map(|path| store.handle_for_path(path))
            .map(|handle| handle.snapshot())
    });
    document_dirty_result(file_path, document.as_deref())
}
