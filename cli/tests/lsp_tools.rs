//! The live LSP tools through the built proxy and its host, with the echo
//! server (`ide-mcp lsp-echo --answer`) as the editor's language server:
//! exact answers, positions converted both ways, the server's refusals and
//! time-outs, files the editor has not opened, and an editor that never
//! sees the IDE's requests nor their answers.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::lsp::{Place, exit, initialize, message};
use serde_json::{Value, json};

/// A process id no editor has here.
const FAKE_EDITOR: u32 = 4_000_002;

/// What the editor has in its buffer (line 4 not saved).
const EDITED: &str = "def f():\n    pass\nf()\né = f()\n";

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn range(line: u32, start: u32, end: u32) -> Value {
    json!({"start": {"line": line, "character": start}, "end": {"line": line, "character": end}})
}

/// The echo server's arguments: a server named `echo` counting in UTF-8,
/// with references, document and workspace symbols and hover (never
/// answered), and no definitions.
fn server_args(place: &Place, record: &Path) -> Vec<String> {
    let (a, b) = (place.workspace.join("a.py"), place.workspace.join("b.py"));
    let initialize = json!({"capabilities": {
        "positionEncoding": "utf-8", "referencesProvider": true, "hoverProvider": true,
        "documentSymbolProvider": true, "workspaceSymbolProvider": {}, "definitionProvider": false,
    }, "serverInfo": {"name": "echo"}});
    let references = json!([
        {"uri": uri(&a), "range": range(3, 5, 6)},
        {"uri": uri(&b), "range": range(0, 4, 5)},
    ]);
    let symbols = json!([{"name": "g", "kind": 12, "range": range(0, 0, 9), "selectionRange": range(0, 4, 5)}]);
    let workspace =
        json!([{"name": "f", "kind": 12, "location": {"uri": uri(&a), "range": range(0, 4, 5)}}]);
    let mut args = vec![
        "--record".to_owned(),
        record.to_string_lossy().into_owned(),
        "--silent".to_owned(),
        "textDocument/hover".to_owned(),
    ];
    for (method, answer) in [
        ("initialize", initialize),
        ("textDocument/references", references),
        ("textDocument/documentSymbol", symbols),
        ("workspace/symbol", workspace),
    ] {
        args.push("--answer".to_owned());
        args.push(format!("{method}={answer}"));
    }
    args
}

/// The result of tool `name` with `arguments`, whole (`isError` and all).
async fn call(client: &mut common::ws::WsClient, name: &str, arguments: Value) -> Value {
    client
        .request("tools/call", json!({"name": name, "arguments": arguments}))
        .await
}

fn text(result: &Value) -> Value {
    assert_ne!(result["isError"], true, "{result}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

/// Waits until `recorded` (what the server received) holds `needle`.
fn wait_recorded(record: &Path, needle: &str) -> String {
    let start = Instant::now();
    loop {
        let recorded = std::fs::read_to_string(record).unwrap_or_default();
        if recorded.contains(needle) {
            return recorded;
        }
        assert!(
            start.elapsed() < common::lsp::WAIT,
            "{needle} not in\n{recorded}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_ask_the_editor_s_server_and_the_editor_sees_none_of_it() {
    let place = Place::new();
    let (a, b) = (place.workspace.join("a.py"), place.workspace.join("b.py"));
    std::fs::write(&a, "def f():\n    pass\nf()\n").unwrap();
    std::fs::write(&b, "x = f()\n").unwrap();
    let record = place.dir.path().join("server.record");
    let args = server_args(&place, &record);
    let mut server = Place::echo(&[]);
    server.extend(args.iter().map(String::as_str));
    let mut proxy = place.proxy(&[], &server);
    proxy.send(&initialize(FAKE_EDITOR, &place.workspace, "Test Editor"));
    proxy.send(&message(
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri(&a), "languageId": "python", "version": 1, "text": EDITED}}}),
    ));
    let lockfiles = place.wait_lockfiles(&proxy, |found| found.len() == 1);
    let mut client = common::ide::client_of(&lockfiles[0]).await;
    // The time-out below takes 10 s.
    client.answer_within = Duration::from_secs(30);
    common::ide::until(&mut client, "getOpenEditors", json!({}), |editors| {
        editors["tabs"]
            .as_array()
            .is_some_and(|tabs| tabs.len() == 1)
    })
    .await;

    // On the editor's text: `f` of line 4, after an `é` (two bytes).
    let found = call(
        &mut client,
        "findReferences",
        json!({"filePath": a, "line": 4, "character": 5}),
    )
    .await;
    assert_eq!(
        text(&found),
        json!([
            {"filePath": a, "line": 4, "character": 5, "endLine": 4, "endCharacter": 6, "lineText": "é = f()"},
            {"filePath": b, "line": 1, "character": 5, "endLine": 1, "endCharacter": 6, "lineText": "x = f()"},
        ])
    );
    let recorded = wait_recorded(&record, "textDocument/references");
    assert!(
        recorded.contains(r#""position":{"character":5,"line":3}"#),
        "{recorded}"
    );

    refusals(&mut client, &a).await;
    unopened(&mut client, &a, &b, &record).await;
    time_out(&mut client, &a, &record).await;

    // The editor saw its own answer to `initialize`, and nothing of ours.
    proxy.send(&exit());
    assert_eq!(proxy.wait_exit(), Some(0));
    let output = String::from_utf8_lossy(&proxy.output()).into_owned();
    assert!(
        output.contains(r#""serverInfo":{"name":"echo"}"#),
        "{output}"
    );
    assert!(!output.contains("ide-mcp/s/"), "{output}");
    assert!(!output.contains(r#""name":"g""#), "{output}");
    place.wait_all_gone(Duration::from_secs(20));
}

/// A feature the server does not provide, a file no server handles:
/// refused at once.
async fn refusals(client: &mut common::ws::WsClient, a: &Path) {
    // Not provided: refused at once.
    let refused = call(
        client,
        "goToDefinition",
        json!({"filePath": a, "line": 1, "character": 5}),
    )
    .await;
    assert_eq!(refused["isError"], true);
    assert_eq!(
        refused["content"][0]["text"],
        format!(
            "the language server for {} (echo) does not provide definitions",
            a.display()
        )
    );
    let nobody = call(
        client,
        "hover",
        json!({"filePath": "/elsewhere/x.rs", "line": 1, "character": 1}),
    )
    .await;
    assert_eq!(nobody["isError"], true);
    assert!(
        nobody["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("no language server of the editor's handles /elsewhere/x.rs"),
        "{nobody}"
    );
}

/// A file the editor has not opened, and the workspace's symbols.
async fn unopened(client: &mut common::ws::WsClient, a: &Path, b: &Path, record: &Path) {
    // A file the editor has not opened: opened on the server, then closed.
    let symbols = call(client, "documentSymbols", json!({"filePath": b})).await;
    assert_eq!(
        text(&symbols),
        json!([{"name": "g", "kind": "Function", "line": 1, "character": 5,
                "endLine": 1, "endCharacter": 8, "lineText": "x = f()"}])
    );
    let recorded = wait_recorded(record, "textDocument/didClose");
    let opened = recorded.find(r#""method":"textDocument/didOpen""#).unwrap();
    let b_opened = recorded[opened + 1..]
        .find(r#""method":"textDocument/didOpen""#)
        .map(|at| opened + 1 + at)
        .expect("b.py opened");
    let asked = recorded.find("textDocument/documentSymbol").unwrap();
    let closed = recorded.find("textDocument/didClose").unwrap();
    assert!(b_opened < asked && asked < closed, "{recorded}");
    assert!(recorded[b_opened..].contains(r#""text":"x = f()\n""#));

    let everywhere = call(client, "workspaceSymbols", json!({"query": "f"})).await;
    assert_eq!(
        text(&everywhere),
        json!([{"name": "f", "kind": "Function", "filePath": a, "line": 1, "character": 5,
                "endLine": 1, "endCharacter": 6, "lineText": "def f():"}])
    );
}

/// A server that does not answer.
async fn time_out(client: &mut common::ws::WsClient, a: &Path, record: &Path) {
    // A server that does not answer: a time-out, and `$/cancelRequest`.
    let started = Instant::now();
    let late = call(
        client,
        "hover",
        json!({"filePath": a, "line": 1, "character": 5}),
    )
    .await;
    assert!(started.elapsed() >= Duration::from_secs(9), "{late}");
    assert_eq!(late["isError"], true);
    assert_eq!(
        late["content"][0]["text"],
        "the language server did not answer within 10 s"
    );
    let recorded = wait_recorded(record, "$/cancelRequest");
    let hover_at = recorded.find("textDocument/hover").unwrap();
    let id_at = recorded[..hover_at].rfind("ide-mcp/s/").unwrap();
    let id: String = recorded[id_at..]
        .chars()
        .take_while(|c| *c != '"')
        .collect();
    assert!(
        recorded.contains(&format!(
            r#""method":"$/cancelRequest","params":{{"id":"{id}"}}"#
        )),
        "{recorded}"
    );
}
