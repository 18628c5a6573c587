use std::sync::Arc;

use ide_mcp_tools::EditorAccess;
use serde_json::json;

use super::*;

fn body(value: &serde_json::Value) -> Vec<u8> {
    value.to_string().into_bytes()
}

#[test]
fn a_panic_costs_the_document_not_the_stream() {
    let ws = Arc::new(LspWorkspace::new());
    let (mut observer, _outgoing) = Observer::new(Arc::clone(&ws));
    for uri in ["file:///ws/a.c", "file:///ws/b.c"] {
        let open = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "c", "version": 0, "text": "x"}}});
        assert_eq!(observer.from_client(&body(&open)), ClientVerdict::Forward);
    }
    let boom = json!({"jsonrpc": "2.0", "method": "$/ide-mcp/test/panic",
        "params": {"textDocument": {"uri": "file:///ws/a.c"}}});
    // Twice: logged once, forwarded both times.
    for _ in 0..2 {
        assert_eq!(observer.from_client(&body(&boom)), ClientVerdict::Forward);
    }
    assert!(observer.panicked);
    let open: Vec<_> = ws
        .open_buffers()
        .into_iter()
        .map(|b| b.path().unwrap().to_path_buf())
        .collect();
    assert_eq!(
        open,
        [std::path::PathBuf::from("/ws/b.c")],
        "a.c's state is dropped"
    );
    // The stream goes on.
    let change = json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": "file:///ws/b.c", "version": 1}, "contentChanges": [{"text": "y"}]}});
    assert_eq!(observer.from_client(&body(&change)), ClientVerdict::Forward);
    assert_eq!(observer.docs["file:///ws/b.c"].text.to_string(), "y");
}

#[test]
fn tracked_requests_are_bounded() {
    let ws = Arc::new(LspWorkspace::new());
    let (mut observer, _outgoing) = Observer::new(ws);
    let max = i64::try_from(MAX_TRACKED_REQUESTS).unwrap();
    for id in 0..max + 10 {
        let ask = json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/diagnostic",
            "params": {"textDocument": {"uri": "file:///ws/a.c"}}});
        observer.from_client(&body(&ask));
    }
    assert_eq!(observer.tracked.len(), MAX_TRACKED_REQUESTS);
    assert!(
        !observer.tracked.contains_key(&envelope::Id::Number(0)),
        "the oldest go first"
    );
    assert!(
        observer
            .tracked
            .contains_key(&envelope::Id::Number(max + 9))
    );
}
