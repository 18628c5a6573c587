//! `openFile` through `window/showDocument`: the workspace as the tools'
//! [`FileOpener`].

use std::sync::Arc;

use ide_mcp_tools::{BufferStore, FileOpener, OpenFileFuture, OpenFileRequest};
use lsp_types::Range;
use ropey::Rope;
use serde_json::json;

use super::requests::EditorRequest;
use super::state::LspWorkspace;
use ide_mcp_tools::position::PositionEncoding;
use ide_mcp_tools::position::convert;
use ide_mcp_tools::uri::encoded_file_uri;

impl LspWorkspace {
    /// The `window/showDocument` params for `request`: the selection
    /// converted from UTF-16 to the stream's encoding (through the open
    /// document's text, else the file's).
    fn show_document_params(
        &self,
        request: &OpenFileRequest,
        encoding: PositionEncoding,
    ) -> serde_json::Value {
        let mut params = json!({
            "uri": encoded_file_uri(&request.path),
            "external": false,
            "takeFocus": request.take_focus,
        });
        if let Some((start, end)) = request.selection {
            let range = if encoding == PositionEncoding::Utf16 {
                Range::new(start, end)
            } else {
                let text = match self.handle_for_path(&request.path) {
                    Some(handle) => handle.snapshot().text.clone(),
                    None => std::fs::read_to_string(&request.path)
                        .map(Rope::from)
                        .unwrap_or_default(),
                };
                Range::new(
                    convert(&text, start, PositionEncoding::Utf16, encoding),
                    convert(&text, end, PositionEncoding::Utf16, encoding),
                )
            };
            params["selection"] = json!(range);
        }
        params
    }
}

/// `openFile` sends `window/showDocument` to the editor, when it supports it.
/// The request goes to an editor that has the file open, else to the one
/// used last.
impl FileOpener for LspWorkspace {
    fn open_file(&self, request: OpenFileRequest) -> OpenFileFuture {
        let requests = Arc::clone(&self.requests);
        let destination = requests
            .destination(
                EditorRequest::ShowDocument,
                &self.documents.openers(&request.path),
            )
            .map(|to| {
                let params = self.show_document_params(&request, to.encoding);
                (to, params)
            });
        Box::pin(async move {
            let Some((to, params)) = destination else {
                return Err("the editor does not support window/showDocument".to_owned());
            };
            match requests.send(&to, params).await {
                Ok(result) if result["success"] == true => Ok(()),
                Ok(_) => Err("the editor could not show the file".to_owned()),
                Err(error) => Err(error.to_string()),
            }
        })
    }
}
