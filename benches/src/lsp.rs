//! What the LSP-side benchmarks share: an observer stream set up as an
//! editor would, with one C document open.

use std::sync::Arc;

use ide_mcp_lsp::framing::Message;
use ide_mcp_lsp::{LspWorkspace, Observer};
use serde_json::json;
use tokio::sync::mpsc::Receiver;

/// The URI of the document [`stream`] opens.
pub const URI: &str = "file:///ws/a.c";

/// An initialized stream of `ws` (a server with incremental sync) with
/// `text` open as [`URI`], and what the observer sends on.
pub fn stream(ws: &Arc<LspWorkspace>, text: &str) -> (Observer, Receiver<Message>) {
    let (mut observer, outgoing) = Observer::new(Arc::clone(ws));
    let send = |o: &mut Observer, v: serde_json::Value| o.from_client(v.to_string().as_bytes());
    send(
        &mut observer,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": 1, "capabilities": {}}}),
    );
    observer.from_server(
        br#"{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"textDocumentSync":2}}}"#,
    );
    send(
        &mut observer,
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": URI, "languageId": "c", "version": 0, "text": text}}}),
    );
    (observer, outgoing)
}
