//! "Send selection to Claude Code": merged into code action answers, its
//! command answered by the observer; and requests toward the editor.

mod support;

use std::path::Path;
use std::sync::Arc;

use ide_mcp_lsp::{ClientVerdict, LspWorkspace, ServerVerdict, WorkspaceEvent};
use serde_json::{Value, json};
use support::{Stream, drain, helix_initialize, neovim_initialize, range_json};

const A: &str = "file:///ws/a.c";
const B: &str = "file:///ws/b.c";

fn text(verdict: ServerVerdict) -> String {
    match verdict {
        ServerVerdict::Replace(body) => String::from_utf8(body).unwrap(),
        ServerVerdict::Forward | ServerVerdict::Drop => panic!("expected a replaced body"),
    }
}

fn neovim() -> (Arc<LspWorkspace>, Stream) {
    let ws = Arc::new(LspWorkspace::new());
    let mut s = Stream::new(&ws);
    s.request(1, "initialize", neovim_initialize("/ws"));
    (ws, s)
}

#[test]
fn the_initialize_answer_lists_our_command() {
    let (_ws, mut s) = neovim();
    let answer = s.answer(
        1,
        json!({"capabilities": {"executeCommandProvider": {"commands": ["clangd.applyFix"]}}}),
    );
    assert_eq!(
        text(answer),
        r#"{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["clangd.applyFix","ide-mcp.sendSelection","ide-mcp.review.accept","ide-mcp.review.reject","ide-mcp.review.acceptAll","ide-mcp.review.rejectAll","ide-mcp.written.keep","ide-mcp.written.revert","ide-mcp.written.keepAll","ide-mcp.written.revertAll"]}}}}"#
    );
    let (_ws, mut s) = neovim();
    let answer: Value =
        serde_json::from_str(&text(s.answer(1, json!({"capabilities": {}})))).unwrap();
    assert_eq!(
        answer["result"]["capabilities"]["executeCommandProvider"],
        json!({"commands": ["ide-mcp.sendSelection", "ide-mcp.review.accept", "ide-mcp.review.reject", "ide-mcp.review.acceptAll", "ide-mcp.review.rejectAll",
                           "ide-mcp.written.keep", "ide-mcp.written.revert", "ide-mcp.written.keepAll", "ide-mcp.written.revertAll"]})
    );
}

#[test]
fn our_action_is_merged_into_every_kind_of_answer() {
    let (_ws, mut s) = neovim();
    s.answer(1, json!({"capabilities": {}}));
    s.open(A, "c", 0, "int x;\nint y;\n");
    let ours = r#"{"title":"Send selection to Claude Code","command":{"title":"Send selection to Claude Code","command":"ide-mcp.sendSelection","arguments":["file:///ws/a.c",{"start":{"line":0,"character":0},"end":{"line":1,"character":6}}]}}"#;
    let ask = |s: &mut Stream, id| {
        s.request(id, "textDocument/codeAction", json!({"textDocument": {"uri": A}, "range": range_json(((0, 0), (1, 6))), "context": {"diagnostics": []}}))
    };

    ask(&mut s, 2);
    assert_eq!(
        text(s.answer(2, Value::Null)),
        format!(r#"{{"jsonrpc":"2.0","id":2,"result":[{ours}]}}"#)
    );
    ask(&mut s, 3);
    // The server's own actions keep their bytes, ours goes last.
    let body = br#"{"jsonrpc":"2.0","id":3,"result":[ {"title":"Fix it" , "kind":"quickfix"} ]}"#;
    assert_eq!(
        text(s.observer.from_server(body)),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"result":[ {{"title":"Fix it" , "kind":"quickfix"}} ,{ours}]}}"#
        )
    );
    ask(&mut s, 4);
    let error = json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "boom"}});
    assert_eq!(
        s.server(error),
        ServerVerdict::Forward,
        "an error answer is left alone"
    );
    // A request for some kinds only (organize imports on save) gets nothing of ours.
    s.request(5, "textDocument/codeAction", json!({"textDocument": {"uri": A}, "range": range_json(((0, 0), (0, 0))), "context": {"diagnostics": [], "only": ["source.organizeImports"]}}));
    assert_eq!(s.answer(5, json!([])), ServerVerdict::Forward);
}

#[test]
fn editors_without_literal_support_get_a_command() {
    let ws = Arc::new(LspWorkspace::new());
    let mut s = Stream::new(&ws);
    let mut init = neovim_initialize("/ws");
    init["capabilities"]["textDocument"]["codeAction"] = json!({});
    s.request(1, "initialize", init);
    s.answer(1, json!({"capabilities": {}}));
    s.open(A, "c", 0, "int x;\n");
    s.request(
        2,
        "textDocument/codeAction",
        json!({"textDocument": {"uri": A}, "range": range_json(((0, 0), (0, 3))), "context": {}}),
    );
    let answer: Value = serde_json::from_str(&text(s.answer(2, json!([])))).unwrap();
    assert_eq!(
        answer["result"],
        json!([{"title": "Send selection to Claude Code", "command": "ide-mcp.sendSelection", "arguments": [A, range_json(((0, 0), (0, 3)))]}])
    );
}

#[test]
fn executing_our_command_mentions_the_lines_and_never_reaches_the_server() {
    let (ws, mut s) = neovim();
    let mut events = ws.subscribe();
    s.answer(1, json!({"capabilities": {}}));
    s.open(A, "c", 0, "int x;\nint y;\nint z;\n");
    drain(&mut events);
    // Lines 0 to 1, the selection ending at the start of line 2.
    let verdict = s.request(
        7,
        "workspace/executeCommand",
        json!({"command": "ide-mcp.sendSelection", "arguments": [A, range_json(((0, 0), (2, 0)))]}),
    );
    assert_eq!(
        verdict,
        ClientVerdict::Answer(br#"{"jsonrpc":"2.0","id":7,"result":null}"#.to_vec())
    );
    assert_eq!(
        drain(&mut events),
        [
            WorkspaceEvent::SelectionChanged,
            WorkspaceEvent::AtMentioned {
                path: Arc::from(Path::new("/ws/a.c")),
                line_start: 0,
                line_end: 1
            },
        ]
    );
    // Other commands are the server's.
    let verdict = s.request(
        8,
        "workspace/executeCommand",
        json!({"command": "clangd.applyFix", "arguments": []}),
    );
    assert_eq!(verdict, ClientVerdict::Forward);
    // Ours with bad arguments: answered, nothing mentioned.
    let verdict = s.request(
        9,
        "workspace/executeCommand",
        json!({"command": "ide-mcp.sendSelection", "arguments": [1]}),
    );
    assert!(matches!(verdict, ClientVerdict::Answer(_)));
    assert!(drain(&mut events).is_empty());
}

/// The body of the next request sent toward `stream`'s editor, if any.
fn sent(stream: &mut Stream) -> Option<Value> {
    let message = stream.outgoing.try_recv().ok()?;
    Some(serde_json::from_slice(message.body()).unwrap())
}

#[tokio::test]
async fn show_document_goes_to_an_editor_with_the_file_open_else_the_one_used_last() {
    let ws = Arc::new(LspWorkspace::new());
    let (mut first, mut second) = (Stream::new(&ws), Stream::new(&ws));
    first.request(1, "initialize", helix_initialize("/ws"));
    second.request(1, "initialize", helix_initialize("/ws"));
    second.open(B, "c", 0, "int b;\n");
    // The first editor is the one used last; the second has B open.
    first.request(
        2,
        "textDocument/hover",
        json!({"textDocument": {"uri": A}, "position": {"line": 0, "character": 0}}),
    );
    let show = |uri: &'static str| {
        let ws = Arc::clone(&ws);
        tokio::spawn(async move { ws.show_document(json!({"uri": uri})).await })
    };
    let to_b = show(B);
    tokio::task::yield_now().await;
    let answer = |id: &Value| json!({"jsonrpc": "2.0", "id": id, "result": {"success": true}});
    let request = loop {
        if let Some(request) = sent(&mut second) {
            break request;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(request["params"]["uri"], B);
    assert!(
        sent(&mut first).is_none(),
        "only to the editor that has it open"
    );
    assert_eq!(second.client(answer(&request["id"])), ClientVerdict::Drop);
    assert_eq!(to_b.await.unwrap(), Ok(json!({"success": true})));

    // A file no editor has open: the one used last.
    let to_a = show(A);
    let request = loop {
        if let Some(request) = sent(&mut first) {
            break request;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(request["params"]["uri"], A);
    assert!(sent(&mut second).is_none());
    first.client(answer(&request["id"]));
    assert_eq!(to_a.await.unwrap(), Ok(json!({"success": true})));
}

#[tokio::test]
async fn show_document_goes_to_the_editor_and_its_answer_is_swallowed() {
    let ws = Arc::new(LspWorkspace::new());
    let mut neovim = Stream::new(&ws);
    neovim.request(1, "initialize", neovim_initialize("/ws"));
    // Neovim 0.7 here does not support showDocument: nothing can be sent.
    let refused = ws.show_document(json!({"uri": A})).await;
    assert_eq!(
        refused,
        Err(ide_mcp_lsp::workspace::EditorRequestError::Unsupported)
    );

    let mut helix = Stream::new(&ws);
    helix.request(1, "initialize", helix_initialize("/ws"));
    let ws2 = Arc::clone(&ws);
    let call = tokio::spawn(async move {
        ws2.show_document(json!({"uri": A, "takeFocus": true}))
            .await
    });
    let sent = helix
        .outgoing
        .recv()
        .await
        .expect("a request toward the editor");
    let body: Value = serde_json::from_slice(sent.body()).unwrap();
    assert_eq!(
        body,
        json!({"jsonrpc": "2.0", "id": "ide-mcp/1", "method": "window/showDocument", "params": {"uri": A, "takeFocus": true}})
    );
    assert!(
        neovim.outgoing.try_recv().is_err(),
        "only the stream whose editor supports it"
    );
    let verdict =
        helix.client(json!({"jsonrpc": "2.0", "id": "ide-mcp/1", "result": {"success": true}}));
    assert_eq!(verdict, ClientVerdict::Drop);
    assert_eq!(call.await.unwrap(), Ok(json!({"success": true})));
    // An answer to the server's own request passes.
    assert_eq!(
        helix.client(json!({"jsonrpc": "2.0", "id": 5, "result": null})),
        ClientVerdict::Forward
    );
    // A late answer to one of ours is still ours.
    assert_eq!(
        helix.client(json!({"jsonrpc": "2.0", "id": "ide-mcp/77", "result": null})),
        ClientVerdict::Drop
    );
}

#[tokio::test]
async fn open_file_shows_the_document_with_the_selection_in_the_sessions_encoding() {
    let ws = Arc::new(LspWorkspace::new());
    let mut helix = Stream::new(&ws);
    helix.request(1, "initialize", helix_initialize("/ws"));
    helix.answer(1, json!({"capabilities": {"positionEncoding": "utf-8"}}));
    helix.open("file:///ws/%C3%A9.rs", "rust", 0, "// 😀\nfn main() {}\n");
    let cx = ws.editor_ports().build();
    let call = tokio::spawn(async move {
        support::tool(
            &cx,
            "openFile",
            json!({"filePath": "/ws/é.rs", "startText": "😀", "selectToEndOfLine": true}),
        )
        .await
    });
    let sent = helix.outgoing.recv().await.expect("showDocument");
    let body: Value = serde_json::from_slice(sent.body()).unwrap();
    // The emoji is UTF-16 columns 3..5, UTF-8 bytes 3..7.
    assert_eq!(
        body["params"],
        json!({"uri": "file:///ws/%C3%A9.rs", "external": false, "takeFocus": true, "selection": range_json(((0, 3), (0, 7)))})
    );
    let id = body["id"].clone();
    assert_eq!(
        helix.client(json!({"jsonrpc": "2.0", "id": id, "result": {"success": true}})),
        ClientVerdict::Drop
    );
    assert_eq!(call.await.unwrap(), json!("Opened file: /ws/é.rs"));
}
