//! Replay: a fresh observer fed another's replay answers every tool alike.

mod support;

use std::sync::Arc;

use ide_mcp_lsp::{LspWorkspace, Replayed};
use serde_json::json;
use support::{Stream, answers, helix_initialize, neovim_initialize, range_json};

/// A workspace with two streams' worth of state: documents clean and dirty,
/// diagnostics, a selection, in a UTF-8 session and a UTF-16 one.
fn busy_workspace() -> (Arc<LspWorkspace>, Stream, Stream) {
    let ws = Arc::new(LspWorkspace::new());
    let mut helix = Stream::new(&ws);
    helix.request(1, "initialize", helix_initialize("/ws"));
    helix.answer(1, json!({"capabilities": {"positionEncoding": "utf-8", "textDocumentSync": {"change": 2, "save": true}}, "serverInfo": {"name": "rust-analyzer"}}));
    helix.open(
        "file:///ws/src/main.rs",
        "rust",
        3,
        "fn main() {\n    let s = \"😀\"; foo\n}\n",
    );
    helix.open("file:///ws/src/lib%20x.rs", "rust", 1, "pub fn f() {}\n");
    helix.change("file:///ws/src/main.rs", 4, ((1, 20), (1, 23)), "bar");
    helix.publish(
        "file:///ws/src/main.rs",
        Some(4),
        json!([{"message": "cannot find value `bar`", "severity": 1, "code": "E0425", "range": range_json(((1, 20), (1, 23)))}]),
    );
    helix.publish(
        "file:///ws/src/gone.rs",
        None,
        json!([{"message": "w", "severity": 2, "range": range_json(((0, 0), (0, 1)))}]),
    );
    helix.request(2, "textDocument/codeAction", json!({"textDocument": {"uri": "file:///ws/src/main.rs"}, "range": range_json(((1, 12), (1, 23))), "context": {}}));

    let mut clangd = Stream::new(&ws);
    clangd.request(1, "initialize", neovim_initialize("/ws"));
    clangd.answer(
        1,
        json!({"capabilities": {"textDocumentSync": 2}, "serverInfo": {"name": "clangd"}}),
    );
    clangd.open("file:///ws/c/a.c", "c", 0, "int x = \"s\";\n");
    clangd.publish(
        "file:///ws/c/a.c",
        Some(0),
        json!([{"message": "incompatible", "severity": 1, "range": range_json(((0, 8), (0, 11)))}]),
    );
    helix.request(3, "textDocument/codeAction", json!({"textDocument": {"uri": "file:///ws/src/main.rs"}, "range": range_json(((1, 12), (1, 23))), "context": {}}));
    (ws, helix, clangd)
}

#[tokio::test]
async fn replaying_into_a_fresh_workspace_gives_identical_answers() {
    let (ws, helix, clangd) = busy_workspace();
    let paths = ["/ws/src/main.rs", "/ws/src/lib x.rs", "/ws/c/a.c"];
    let before = answers(&ws.editor_ports().build(), &paths).await;
    assert_eq!(
        before["dirty"][0]["isDirty"], true,
        "the scenario has a dirty document"
    );
    assert_eq!(before["selection"]["text"], "\"😀\"; bar");

    let fresh = Arc::new(LspWorkspace::new());
    let (mut a, _out_a) = ide_mcp_lsp::Observer::new(Arc::clone(&fresh));
    let (mut b, _out_b) = ide_mcp_lsp::Observer::new(Arc::clone(&fresh));
    // Replayed in the order the documents were first opened, tabs keep their order.
    a.apply_replay(&helix.observer.replay());
    b.apply_replay(&clangd.observer.replay());
    let after = answers(&fresh.editor_ports().build(), &paths).await;
    assert_eq!(after["editors"], before["editors"]);
    assert_eq!(after["diagnostics"], before["diagnostics"]);
    assert_eq!(after["selection"], before["selection"]);
    assert_eq!(after["dirty"], before["dirty"]);
    assert_eq!(after["folders"], before["folders"]);
    assert_eq!(fresh.ide_name(), ws.ide_name());
    assert_eq!(fresh.editor_pid(), ws.editor_pid());
    assert_eq!(a.encoding(), helix.observer.encoding());
    // A replay of the replay is the same replay.
    assert_eq!(a.replay(), helix.observer.replay());
}

#[test]
fn the_replay_starts_with_the_initialize_exchange() {
    let (_ws, helix, _clangd) = busy_workspace();
    let replay = helix.observer.replay();
    let Replayed::FromClient(first) = &replay[0] else {
        panic!("{replay:?}")
    };
    let first: serde_json::Value = serde_json::from_slice(first).unwrap();
    assert_eq!(first["method"], "initialize");
    assert_eq!(first["params"]["clientInfo"]["name"], "helix");
    let Replayed::FromServer(second) = &replay[1] else {
        panic!()
    };
    let second: serde_json::Value = serde_json::from_slice(second).unwrap();
    assert_eq!(
        second["result"]["capabilities"]["positionEncoding"],
        "utf-8"
    );
}
