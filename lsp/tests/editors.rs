//! Open editors, dirty state, workspace folders and the selection, from LSP
//! traffic in the shapes Neovim 0.7, Helix and kak-lsp send.

mod support;

use std::sync::Arc;

use ide_mcp_lsp::{ClientVerdict, LspWorkspace, WorkspaceEvent};
use serde_json::json;
use support::{Stream, drain, helix_initialize, neovim_initialize, range_json, tool};

const A: &str = "file:///ws/src/a.c";
const B: &str = "file:///ws/work%20space/b.c";

/// The mirror of `a.c` ([`A`]), as the tools read it.
fn a_c(cx: &ide_mcp_tools::EditorPorts) -> Arc<ide_mcp_tools::Document> {
    cx.buffers()
        .unwrap()
        .handle_for_path("/ws/src/a.c".as_ref())
        .unwrap()
        .snapshot()
}

/// How many tabs `getOpenEditors` lists.
async fn tab_count(cx: &ide_mcp_tools::EditorPorts) -> usize {
    tool(cx, "getOpenEditors", json!({})).await["tabs"]
        .as_array()
        .unwrap()
        .len()
}

/// `checkDocumentDirty`'s answer for `path`.
async fn dirty_of(cx: &ide_mcp_tools::EditorPorts, path: &str) -> serde_json::Value {
    tool(cx, "checkDocumentDirty", json!({"filePath": path})).await
}

#[tokio::test]
async fn a_neovim_session() {
    let ws = Arc::new(LspWorkspace::new());
    let mut events = ws.subscribe();
    let mut s = Stream::new(&ws);
    assert_eq!(
        s.request(1, "initialize", neovim_initialize("/ws")),
        ClientVerdict::Forward
    );
    s.answer(1, json!({"capabilities": {"textDocumentSync": {"openClose": true, "change": 2, "save": {"includeText": false}}}, "serverInfo": {"name": "clangd"}}));
    s.notify("initialized", json!({}));
    assert_eq!(ws.ide_name().as_deref(), Some("Neovim"));
    assert_eq!(ws.editor_pid(), Some(4242));

    s.open(A, "c", 0, "int main(void) {\n  return 0;\n}\n");
    s.open(B, "c", 0, "int b;\n");
    let cx = ws.editor_ports().build();
    assert_eq!(
        tool(&cx, "getWorkspaceFolders", json!({})).await,
        json!({"success": true, "folders": [{"name": "ws", "uri": "file:///ws", "path": "/ws"}], "rootPath": "/ws"})
    );
    assert_eq!(
        tool(&cx, "getOpenEditors", json!({})).await,
        json!({"tabs": [
            {"uri": "file:///ws/src/a.c", "isActive": false, "label": "a.c", "languageId": "c", "isDirty": false},
            {"uri": "file:///ws/work space/b.c", "isActive": true, "label": "b.c", "languageId": "c", "isDirty": false},
        ]})
    );

    // A hover in a.c: the cursor moves there.
    s.request(
        2,
        "textDocument/hover",
        json!({"textDocument": {"uri": A}, "position": {"line": 1, "character": 2}}),
    );
    assert_eq!(
        tool(&cx, "getCurrentSelection", json!({})).await,
        json!({"success": true, "text": "", "filePath": "/ws/src/a.c", "fileUrl": "file:///ws/src/a.c",
               "selection": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 2}, "isEmpty": true}})
    );

    // Typing in a.c: dirty, and the mirror follows.
    s.change(A, 1, ((1, 9), (1, 10)), "1");
    let dirty = dirty_of(&cx, "/ws/src/a.c").await;
    assert_eq!(
        dirty,
        json!({"success": true, "filePath": "/ws/src/a.c", "isDirty": true, "isUntitled": false})
    );
    let text = a_c(&ws.editor_ports().build());
    assert_eq!(text.text.to_string(), "int main(void) {\n  return 1;\n}\n");
    assert_eq!(text.version, 1);

    // `:w`: clean again.
    s.notify("textDocument/didSave", json!({"textDocument": {"uri": A}}));
    let dirty = dirty_of(&cx, "file:///ws/src/a.c").await;
    assert_eq!(dirty["isDirty"], false);

    // An unknown path is not dirty.
    let unknown = dirty_of(&cx, "/elsewhere.c").await;
    assert_eq!(
        unknown,
        json!({"success": true, "filePath": "/elsewhere.c", "isDirty": false, "isUntitled": false})
    );

    // Closing b.c: one tab left.
    s.notify("textDocument/didClose", json!({"textDocument": {"uri": B}}));
    let tabs = tool(&cx, "getOpenEditors", json!({})).await;
    assert_eq!(tabs["tabs"].as_array().unwrap().len(), 1);
    assert!(drain(&mut events).contains(&WorkspaceEvent::SelectionChanged));
}

#[tokio::test]
async fn a_range_code_action_is_the_selection_and_unclean_ranges_are_clamped() {
    let ws = Arc::new(LspWorkspace::new());
    let mut events = ws.subscribe();
    let mut s = Stream::new(&ws);
    s.request(1, "initialize", neovim_initialize("/ws"));
    s.answer(1, json!({"capabilities": {}}));
    s.open(A, "c", 0, "int main(void) {\n  return 0; // 😀!\n}\n");
    drain(&mut events);
    // Neovim 0.7's visual-line range ends one past the line's last character.
    s.request(
        2,
        "textDocument/codeAction",
        json!({"textDocument": {"uri": A}, "range": range_json(((1, 2), (1, 99))), "context": {"diagnostics": []}}),
    );
    let cx = ws.editor_ports().build();
    let selection = tool(&cx, "getCurrentSelection", json!({})).await;
    assert_eq!(selection["text"], "return 0; // 😀!");
    assert_eq!(
        selection["selection"]["end"],
        json!({"line": 1, "character": 18})
    );
    assert_eq!(drain(&mut events), [WorkspaceEvent::SelectionChanged]);

    // A range ending inside the emoji's surrogate pair stops before it.
    s.request(
        3,
        "textDocument/codeAction",
        json!({"textDocument": {"uri": A}, "range": range_json(((1, 2), (1, 16))), "context": {}}),
    );
    let selection = tool(&cx, "getCurrentSelection", json!({})).await;
    assert_eq!(selection["text"], "return 0; // ");
    assert_eq!(selection["selection"]["isEmpty"], false);

    // The same request again changes nothing: no event.
    drain(&mut events);
    s.request(
        4,
        "textDocument/codeAction",
        json!({"textDocument": {"uri": A}, "range": range_json(((1, 2), (1, 16))), "context": {}}),
    );
    assert!(drain(&mut events).is_empty());
}

#[tokio::test]
async fn helix_in_utf8_positions() {
    let ws = Arc::new(LspWorkspace::new());
    let mut s = Stream::new(&ws);
    s.request(1, "initialize", helix_initialize("/ws"));
    s.answer(
        1,
        json!({"capabilities": {"positionEncoding": "utf-8", "textDocumentSync": 2}}),
    );
    assert_eq!(ws.ide_name().as_deref(), Some("helix"));
    // "é😀x": é is 2 bytes, the emoji 4.
    s.open(A, "c", 0, "é😀x\n");
    s.change(A, 1, ((0, 6), (0, 7)), "y");
    let cx = ws.editor_ports().build();
    let text = a_c(&cx);
    assert_eq!(text.text.to_string(), "é😀y\n");
    // A cursor at byte 6 is UTF-16 column 3.
    s.request(
        2,
        "textDocument/documentHighlight",
        json!({"textDocument": {"uri": A}, "position": {"line": 0, "character": 6}}),
    );
    let selection = tool(&cx, "getCurrentSelection", json!({})).await;
    assert_eq!(
        selection["selection"]["start"],
        json!({"line": 0, "character": 3})
    );
}

/// kak-lsp's `initialize` (trimmed): utf-8 first, in LSP's way and in
/// clangd's own extension (`offsetEncoding`).
fn kak_lsp_initialize(root: &str) -> serde_json::Value {
    json!({
        "processId": 778,
        "clientInfo": {"name": "kakoune-lsp", "version": "22.0.0"},
        "rootUri": format!("file://{root}"),
        "workspaceFolders": [{"uri": format!("file://{root}"), "name": root}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-8", "utf-16"]},
            "offsetEncoding": ["utf-8", "utf-16"],
        },
    })
}

#[tokio::test]
async fn kak_lsp_and_clangd_14_count_bytes() {
    let ws = Arc::new(LspWorkspace::new());
    let mut s = Stream::new(&ws);
    s.request(1, "initialize", kak_lsp_initialize("/ws"));
    // clangd 14 answers its extension, not `capabilities.positionEncoding`.
    s.answer(
        1,
        json!({"capabilities": {"textDocumentSync": 2}, "offsetEncoding": "utf-8", "serverInfo": {"name": "clangd"}}),
    );
    assert_eq!(ws.ide_name().as_deref(), Some("kakoune-lsp"));
    // "é" is 2 bytes: `value` starts at byte 20, UTF-16 column 19.
    s.open(A, "c", 0, "char *s = \"é\"; int value;\n");
    s.request(
        2,
        "textDocument/codeAction",
        json!({"textDocument": {"uri": A}, "range": range_json(((0, 20), (0, 25))), "context": {"diagnostics": []}}),
    );
    let cx = ws.editor_ports().build();
    let selection = tool(&cx, "getCurrentSelection", json!({})).await;
    assert_eq!(selection["text"], "value", "{selection}");
    assert_eq!(
        selection["selection"],
        json!({"start": {"line": 0, "character": 19}, "end": {"line": 0, "character": 24}, "isEmpty": false})
    );
}

#[tokio::test]
async fn two_servers_of_one_editor_show_one_set_of_tabs() {
    let ws = Arc::new(LspWorkspace::new());
    let mut pyright = Stream::new(&ws);
    let mut ruff = Stream::new(&ws);
    for s in [&mut pyright, &mut ruff] {
        s.request(1, "initialize", neovim_initialize("/ws"));
        s.answer(1, json!({"capabilities": {"textDocumentSync": 2}}));
    }
    let py = "file:///ws/main.py";
    pyright.open(py, "python", 0, "x = 1\n");
    ruff.open(py, "python", 0, "x = 1\n");
    pyright.open("file:///ws/util.py", "python", 0, "");
    pyright.change(py, 1, ((0, 4), (0, 5)), "2");
    ruff.change(py, 1, ((0, 4), (0, 5)), "2");
    let cx = ws.editor_ports().build();
    let tabs = tool(&cx, "getOpenEditors", json!({})).await;
    let uris: Vec<_> = tabs["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["uri"].clone(),
                t["isActive"].clone(),
                t["isDirty"].clone(),
            )
        })
        .collect();
    assert_eq!(
        uris,
        [
            (json!("file:///ws/main.py"), json!(true), json!(true)),
            (json!("file:///ws/util.py"), json!(false), json!(false))
        ]
    );
    // One server closing it leaves it open; both closing it closes it.
    pyright.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": py}}),
    );
    assert_eq!(tab_count(&cx).await, 2);
    ruff.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": py}}),
    );
    assert_eq!(tab_count(&cx).await, 1);
    // A stream that ends takes its documents with it.
    drop(pyright);
    assert_eq!(
        tool(&cx, "getOpenEditors", json!({})).await,
        json!({"tabs": []})
    );
}

#[tokio::test]
async fn without_save_support_the_disk_tells_saved_from_dirty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.py");
    std::fs::write(&path, "x = 1\n").unwrap();
    let uri = format!("file://{}", path.display());
    let ws = Arc::new(LspWorkspace::new());
    let mut s = Stream::new(&ws);
    s.request(1, "initialize", neovim_initialize("/ws"));
    // `textDocumentSync: 2`: no `save`, so the editor never sends didSave.
    s.answer(1, json!({"capabilities": {"textDocumentSync": 2}}));
    s.open(&uri, "python", 0, "x = 1\n");
    s.change(&uri, 1, ((0, 4), (0, 5)), "2");
    let cx = ws.editor_ports().build();
    let file_path = path.to_str().unwrap();
    let dirty = |cx| async move {
        tool(cx, "checkDocumentDirty", json!({"filePath": file_path})).await["isDirty"].clone()
    };
    assert_eq!(dirty(&cx).await, true);
    // The editor writes the file: same content, so saved.
    std::fs::write(&path, "x = 2\n").unwrap();
    assert_eq!(dirty(&cx).await, false);
    let tabs = tool(&cx, "getOpenEditors", json!({})).await;
    assert_eq!(tabs["tabs"][0]["isDirty"], false);
    // Another edit: dirty again, though the file did not change.
    s.change(&uri, 2, ((0, 4), (0, 5)), "3");
    assert_eq!(dirty(&cx).await, true);
}

#[tokio::test]
async fn bad_input_is_forwarded_and_changes_nothing() {
    let ws = Arc::new(LspWorkspace::new());
    let mut s = Stream::new(&ws);
    let cx = ws.editor_ports().build();
    for body in [
        &b"{not json"[..],
        b"[]",
        b"null",
        b"",
        br#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":7}"#,
    ] {
        assert_eq!(s.observer.from_client(body), ClientVerdict::Forward);
        assert_eq!(
            s.observer.from_server(body),
            ide_mcp_lsp::ServerVerdict::Forward
        );
    }
    // Messages about documents that were never opened.
    s.change("file:///ws/ghost.c", 3, ((0, 0), (0, 1)), "x");
    s.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": "file:///ws/ghost.c"}}),
    );
    s.request(9, "textDocument/hover", json!({"textDocument": {"uri": "file:///ws/ghost.c"}, "position": {"line": 0, "character": 0}}));
    assert_eq!(
        tool(&cx, "getOpenEditors", json!({})).await,
        json!({"tabs": []})
    );
    assert_eq!(
        tool(&cx, "getCurrentSelection", json!({})).await["success"],
        false
    );
    // An edit far out of range is clamped to the end, as an editor would.
    s.open(A, "c", 0, "ab\n");
    s.change(A, 1, ((7, 3), (9, 9)), "!");
    let text = a_c(&cx);
    assert_eq!(text.text.to_string(), "ab\n!");
}
