use std::sync::Arc;

use ide_mcp_tools::EditorAccess;
use serde_json::json;

use super::*;
use crate::workspace::LspWorkspace;

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
        .map(|b| b.path.unwrap().to_path_buf())
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

/// A host attached between the editor's `initialize` and the server's
/// answer learns the server's providers from the copy of that answer; one
/// attached later, from the replay.
#[test]
fn the_server_s_providers_reach_a_host_attached_early_or_late() {
    use ide_mcp_tools::LspFeature;
    let ws = Arc::new(LspWorkspace::new());
    let (mut proxy, _outgoing) = Observer::new(Arc::clone(&ws));
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": 1, "capabilities": {}}});
    proxy.from_client(&body(&initialize));
    let host_ws = Arc::new(LspWorkspace::new());
    let (mut early, _outgoing) = Observer::new(Arc::clone(&host_ws));
    early.apply_replay(&proxy.replay());
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {
        "capabilities": {"referencesProvider": true}, "serverInfo": {"name": "clangd"}}});
    proxy.from_server(&body(&answer));
    early.from_server(&body(&answer));
    let path = std::path::Path::new("/w/a.c");
    let stream = early.stream();
    host_ws.servers.opened_as(stream, path, "c");
    let route = host_ws
        .servers
        .route_for(path, &[], LspFeature::References)
        .unwrap();
    assert_eq!(route.server.name.as_deref(), Some("clangd"));

    let late_ws = Arc::new(LspWorkspace::new());
    let (mut late, _outgoing) = Observer::new(Arc::clone(&late_ws));
    late.apply_replay(&proxy.replay());
    late_ws.servers.opened_as(late.stream(), path, "c");
    let route = late_ws
        .servers
        .route_for(path, &[], LspFeature::References)
        .unwrap();
    assert_eq!(route.server.name.as_deref(), Some("clangd"));
    assert!(
        late_ws
            .servers
            .route_for(path, &[], LspFeature::Hover)
            .is_err()
    );
}

/// The live LSP tools' `quickFixes` leaves out every action whose command
/// is under the IDE's own prefix: ours all are.
#[test]
fn our_code_actions_are_under_the_prefix_quick_fixes_leave_out() {
    use crate::workspace::OWN_COMMAND_PREFIX;
    for command in
        std::iter::once(super::SEND_SELECTION_COMMAND).chain(super::overlay::REVIEW_COMMANDS)
    {
        assert!(command.starts_with(OWN_COMMAND_PREFIX), "{command}");
    }
}
