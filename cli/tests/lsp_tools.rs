//! The live LSP tools through the built proxy and its host, with the echo
//! server (`lsp-echo --answer`, of test-support) as the editor's language server:
//! exact answers, positions converted both ways, the server's refusals and
//! time-outs, files the editor has not opened, and an editor that never
//! sees the IDE's requests nor their answers.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::lsp::{Place, Proxy, exit, initialize, message};
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

/// A proxy in front of the echo server run with `args`, whose editor has
/// opened `a` (Python) with `text` unsaved; a client of its IDE that waits
/// 30 s for an answer.
async fn proxy_with(
    place: &Place,
    args: &[String],
    a: &Path,
    text: &str,
) -> (Proxy, common::ws::WsClient) {
    let mut server = Place::echo(&[]);
    server.extend(args.iter().map(String::as_str));
    let mut proxy = place.proxy(&[], &server);
    proxy.send(&initialize(FAKE_EDITOR, &place.workspace, "Test Editor"));
    proxy.send(&message(
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri(a), "languageId": "python", "version": 1, "text": text}}}),
    ));
    let lockfiles = place.wait_lockfiles(&proxy, |found| found.len() == 1);
    let mut client = common::ide::client_of(&lockfiles[0]).await;
    client.answer_within = common::ANSWER;
    (proxy, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_ask_the_editor_s_server_and_the_editor_sees_none_of_it() {
    let place = Place::new();
    let (a, b) = (place.workspace.join("a.py"), place.workspace.join("b.py"));
    std::fs::write(&a, "def f():\n    pass\nf()\n").unwrap();
    std::fs::write(&b, "x = f()\n").unwrap();
    let record = place.dir.path().join("server.record");
    let args = server_args(&place, &record);
    // The time-out below takes 10 s.
    let (mut proxy, mut client) = proxy_with(&place, &args, &a, EDITED).await;
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
    place.wait_all_gone(common::lsp::WAIT);
}

/// A feature the server does not provide, a file no server handles:
/// refused at once.
async fn refusals(client: &mut common::ws::WsClient, a: &Path) {
    for (tool, arguments, what) in [
        (
            "callHierarchy",
            json!({"filePath": a, "line": 1, "character": 5, "direction": "incoming"}),
            "a call hierarchy",
        ),
        (
            "renamePreview",
            json!({"filePath": a, "line": 1, "character": 5, "newName": "g"}),
            "renaming",
        ),
        (
            "quickFixes",
            json!({"filePath": a, "line": 1}),
            "code actions",
        ),
    ] {
        let refused = call(client, tool, arguments).await;
        assert_eq!(
            refused,
            json!({"content": [{"type": "text", "text": format!(
                "the language server for {} (echo) does not provide {what}",
                a.display()
            )}], "isError": true}),
            "{tool}"
        );
    }
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

/// The editor's text of the second test (line 7 not saved).
const EDITED_MORE: &str =
    "def f():\n    pass\nclass C:\n    def f(self):\n        f()\ng = 1\né = f() + g\n";

/// A multi-line range.
fn span(l1: u32, c1: u32, l2: u32, c2: u32) -> Value {
    json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
}

/// The echo server of the second test, in UTF-8: symbols (two of them
/// named `f` with different references, two named `g` with the same),
/// a call hierarchy, renaming with `prepareRename` (refused on the class),
/// quick fixes with resolve, and a diagnostic published on line 7.
fn more_server_args(place: &Place, record: &Path) -> Vec<String> {
    let (a, b, c) = (
        uri(&place.workspace.join("a.py")),
        uri(&place.workspace.join("b.py")),
        uri(&place.workspace.join("c.py")),
    );
    let initialize = json!({"capabilities": {
        "positionEncoding": "utf-8", "referencesProvider": true, "documentSymbolProvider": true,
        "callHierarchyProvider": true, "renameProvider": {"prepareProvider": true},
        "codeActionProvider": {"codeActionKinds": ["quickfix", "refactor"], "resolveProvider": true},
    }, "serverInfo": {"name": "echo"}});
    let symbols = json!([
        {"name": "f", "kind": 12, "range": span(0, 0, 1, 8), "selectionRange": range(0, 4, 5)},
        {"name": "C", "kind": 5, "range": span(2, 0, 4, 11), "selectionRange": range(2, 6, 7),
         "children": [{"name": "f", "kind": 6, "range": span(3, 4, 4, 11), "selectionRange": range(3, 8, 9)}]},
        {"name": "g", "kind": 13, "range": range(5, 0, 5), "selectionRange": range(5, 0, 1)},
        {"name": "g", "kind": 13, "range": range(6, 11, 12), "selectionRange": range(6, 11, 12)},
    ]);
    let item = json!({"name": "f", "kind": 12, "uri": a, "range": span(0, 0, 1, 8), "selectionRange": range(0, 4, 5)});
    let caller = json!({"name": "f", "kind": 6, "detail": "C", "uri": a, "range": span(3, 4, 4, 11), "selectionRange": range(3, 8, 9)});
    let rename = json!({"documentChanges": [
        {"textDocument": {"uri": a, "version": 1}, "edits": [
            {"range": range(0, 4, 5), "newText": "h"}, {"range": range(6, 5, 6), "newText": "h"},
            {"range": range(4, 8, 9), "newText": "h"}]},
        {"textDocument": {"uri": b, "version": null}, "edits": [
            {"range": range(0, 14, 15), "newText": "h"}, {"range": range(1, 0, 1), "newText": "h"}]},
        {"kind": "rename", "oldUri": b, "newUri": c},
    ]});
    let actions = json!([
        {"title": "Define f", "kind": "quickfix", "isPreferred": true,
         "edit": {"changes": {a.clone(): [{"range": range(5, 0, 0), "newText": "f = None\n"}]}}},
        {"title": "Run the fixer", "command": "echo.fix", "arguments": ["a"]},
        {"title": "Lazy fix", "kind": "quickfix", "data": {"id": 7}},
        {"title": "Extract", "kind": "refactor.extract", "edit": {"changes": {}}},
        {"title": "Send selection to Claude Code", "command": {
            "title": "Send selection to Claude Code", "command": "ide-mcp.sendSelection", "arguments": []}},
    ]);
    let resolved = json!({"title": "Lazy fix", "kind": "quickfix",
        "edit": {"changes": {a.clone(): [{"range": range(6, 5, 6), "newText": "F"}]}},
        "command": {"title": "after", "command": "echo.after"}});
    let published = json!([{"range": range(6, 5, 6), "severity": 1, "source": "echo-lint",
        "code": "E1", "message": "f is a function"}]);
    let mut args = vec![
        "--record".to_owned(),
        record.to_string_lossy().into_owned(),
        "--publish".to_owned(),
        published.to_string(),
    ];
    for (flag, method, answer) in [
        ("--answer", "initialize", initialize),
        ("--answer", "textDocument/documentSymbol", symbols),
        (
            "--answer",
            r#"textDocument/references|"line":0}"#,
            json!([{"uri": a, "range": range(0, 4, 5)}, {"uri": a, "range": range(4, 8, 9)},
                   {"uri": a, "range": range(6, 5, 6)}, {"uri": b, "range": range(1, 0, 1)}]),
        ),
        (
            "--answer",
            r#"textDocument/references|"line":3}"#,
            json!([{"uri": a, "range": range(3, 8, 9)}]),
        ),
        (
            "--answer",
            "textDocument/references",
            json!([{"uri": a, "range": range(6, 11, 12)}, {"uri": a, "range": range(5, 0, 1)}]),
        ),
        (
            "--answer",
            "textDocument/prepareCallHierarchy",
            json!([item]),
        ),
        (
            "--answer",
            "callHierarchy/incomingCalls",
            json!([{"from": caller, "fromRanges": [range(4, 8, 9)]}]),
        ),
        ("--answer", "callHierarchy/outgoingCalls", json!([])),
        (
            "--error",
            r#"textDocument/prepareRename|"line":2}"#,
            json!({"code": -32803, "message": "cannot rename a class here"}),
        ),
        (
            "--answer",
            "textDocument/prepareRename",
            json!({"range": range(0, 4, 5), "placeholder": "f"}),
        ),
        ("--answer", "textDocument/rename", rename),
        ("--answer", "textDocument/codeAction", actions),
        ("--answer", "codeAction/resolve", resolved),
    ] {
        args.push(flag.to_owned());
        args.push(format!("{method}={answer}"));
    }
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_calls_renames_and_fixes_from_the_editor_s_server() {
    let place = Place::new();
    let (a, b) = (place.workspace.join("a.py"), place.workspace.join("b.py"));
    let saved = EDITED_MORE.rsplit_once("é").unwrap().0;
    std::fs::write(&a, saved).unwrap();
    std::fs::write(&b, "from a import f\nf()\n").unwrap();
    let record = place.dir.path().join("server.record");
    let args = more_server_args(&place, &record);
    let (mut proxy, mut client) = proxy_with(&place, &args, &a, EDITED_MORE).await;
    // The published diagnostic has reached the IDE.
    common::ide::until(&mut client, "getDiagnostics", json!({"uri": a}), |found| {
        found[0]["diagnostics"]
            .as_array()
            .is_some_and(|d| d.len() == 1)
    })
    .await;

    references_by_name(&mut client, &a, &b).await;
    call_hierarchy(&mut client, &a, &record).await;
    rename_preview(&mut client, &a, &b).await;
    quick_fixes(&mut client, &a, &record).await;
    bad_arguments(&mut client, &a).await;

    proxy.send(&exit());
    assert_eq!(proxy.wait_exit(), Some(0));
    let output = String::from_utf8_lossy(&proxy.output()).into_owned();
    assert!(!output.contains("ide-mcp/s/"), "{output}");
    assert!(!output.contains("Lazy fix"), "{output}");
    place.wait_all_gone(common::lsp::WAIT);
}

/// The error result with `text`.
fn error(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

async fn references_by_name(client: &mut common::ws::WsClient, a: &Path, b: &Path) {
    let of = |symbol: &str| json!({"filePath": a, "symbol": symbol});
    let method = call(client, "findReferences", of("C.f")).await;
    assert_eq!(
        text(&method),
        json!([{"filePath": a, "line": 4, "character": 9, "endLine": 4, "endCharacter": 10,
                "lineText": "    def f(self):"}])
    );
    let function = call(client, "findReferences", of("f")).await;
    assert_eq!(
        function,
        error(&format!(
            "`f` names 2 symbols in {} with different references: `f` (Function, line 1), \
             `C.f` (Method, line 4); pass a qualified name (`Container.name`) or `line` and `character`",
            a.display()
        ))
    );
    // Two symbols with the same references: one list, in the server's order.
    let same = call(client, "findReferences", of("g")).await;
    assert_eq!(
        text(&same),
        json!([
            {"filePath": a, "line": 7, "character": 11, "endLine": 7, "endCharacter": 12, "lineText": "é = f() + g"},
            {"filePath": a, "line": 6, "character": 1, "endLine": 6, "endCharacter": 2, "lineText": "g = 1"},
        ])
    );
    let missing = call(client, "findReferences", of("nothing")).await;
    assert_eq!(
        missing,
        error(&format!(
            "no symbol named `nothing` in {}; its symbols: `f` (Function, line 1), `C` (Class, line 3), \
             `C.f` (Method, line 4), `g` (Variable, line 6), `g` (Variable, line 7)",
            a.display()
        ))
    );
    // A position still works, and reaches the other file.
    let at = call(
        client,
        "findReferences",
        json!({"filePath": a, "line": 1, "character": 5}),
    )
    .await;
    assert_eq!(text(&at).as_array().unwrap().len(), 4);
    assert_eq!(text(&at)[3]["filePath"], json!(b));
}

async fn call_hierarchy(client: &mut common::ws::WsClient, a: &Path, record: &Path) {
    let at =
        |direction: &str| json!({"filePath": a, "line": 1, "character": 5, "direction": direction});
    let function = json!({"name": "f", "kind": "Function", "filePath": a, "line": 1,
        "character": 5, "endLine": 2, "endCharacter": 9, "lineText": "def f():"});
    let mut incoming = function.clone();
    incoming["incoming"] = json!([{
        "name": "f", "kind": "Method", "detail": "C", "filePath": a, "line": 4, "character": 9,
        "endLine": 5, "endCharacter": 12, "lineText": "    def f(self):",
        "callSites": [{"filePath": a, "line": 5, "character": 9, "endLine": 5,
                       "endCharacter": 10, "lineText": "        f()"}],
    }]);
    let callers = call(client, "callHierarchy", at("incoming")).await;
    assert_eq!(text(&callers), json!([incoming]));
    let recorded = wait_recorded(record, "callHierarchy/incomingCalls");
    assert!(
        recorded.contains(
            r#""method":"callHierarchy/incomingCalls","params":{"item":{"kind":12,"name":"f""#
        ),
        "{recorded}"
    );
    let mut outgoing = function;
    outgoing["outgoing"] = json!([]);
    let called = call(client, "callHierarchy", at("outgoing")).await;
    assert_eq!(text(&called), json!([outgoing]));
}

async fn rename_preview(client: &mut common::ws::WsClient, a: &Path, b: &Path) {
    let renamed = call(
        client,
        "renamePreview",
        json!({"filePath": a, "line": 1, "character": 5, "newName": "h"}),
    )
    .await;
    let c = b.with_file_name("c.py");
    assert_eq!(
        text(&renamed),
        json!({"changes": [
            {"filePath": a, "diff": "--- a/a.py\n+++ b/a.py\n@@ -1,7 +1,7 @@\n-def f():\n+def h():\n     pass\n class C:\n     def f(self):\n-        f()\n+        h()\n g = 1\n-é = f() + g\n+é = h() + g\n"},
            {"filePath": b, "diff": "--- a/b.py\n+++ b/b.py\n@@ -1,2 +1,2 @@\n-from a import f\n-f()\n+from a import h\n+h()\n"},
            {"operation": "rename", "filePath": b, "newFilePath": c},
        ]})
    );
    // Nothing was applied.
    assert_eq!(
        std::fs::read_to_string(b).unwrap(),
        "from a import f\nf()\n"
    );
    assert!(!c.exists());
    let refused = call(
        client,
        "renamePreview",
        json!({"filePath": a, "line": 3, "character": 7, "newName": "D"}),
    )
    .await;
    assert_eq!(
        refused,
        error(&format!(
            "the language server will not rename the symbol at {}:3:7: cannot rename a class here",
            a.display()
        ))
    );
}

async fn quick_fixes(client: &mut common::ws::WsClient, a: &Path, record: &Path) {
    let fixes = call(client, "quickFixes", json!({"filePath": a, "line": 7})).await;
    assert_eq!(
        text(&fixes),
        json!({
            "diagnostics": [{"message": "f is a function", "severity": "Error", "source": "echo-lint",
                "code": "E1", "line": 7, "character": 5, "endLine": 7, "endCharacter": 6,
                "lineText": "é = f() + g"}],
            "fixes": [
                {"title": "Define f", "kind": "quickfix", "isPreferred": true, "changes": [
                    {"filePath": a, "diff": "--- a/a.py\n+++ b/a.py\n@@ -3,5 +3,6 @@\n class C:\n     def f(self):\n         f()\n+f = None\n g = 1\n é = f() + g\n"}]},
                {"title": "Run the fixer", "changes": [],
                 "command": {"command": "echo.fix", "arguments": ["a"]},
                 "note": "it runs the language server's command `echo.fix`: it cannot be previewed"},
                {"title": "Lazy fix", "kind": "quickfix", "changes": [
                    {"filePath": a, "diff": "--- a/a.py\n+++ b/a.py\n@@ -4,4 +4,4 @@\n     def f(self):\n         f()\n g = 1\n-é = f() + g\n+é = F() + g\n"}],
                 "command": {"command": "echo.after"},
                 "note": "after its edit, it runs the language server's command `echo.after`, which cannot be previewed"},
            ],
        })
    );
    // The server got its own diagnostic back, in its own count (UTF-8),
    // and was asked for quick fixes only; the lazy action was resolved.
    let recorded = wait_recorded(record, "codeAction/resolve");
    assert!(
        recorded.contains(
            r#""context":{"diagnostics":[{"code":"E1","message":"f is a function","range":{"end":{"character":6,"line":6},"start":{"character":5,"line":6}},"severity":1,"source":"echo-lint"}],"only":["quickfix"],"triggerKind":1}"#
        ),
        "{recorded}"
    );
    assert!(
        recorded.contains(r#""method":"codeAction/resolve","params":{"data":{"id":7},"kind":"quickfix","title":"Lazy fix"}"#),
        "{recorded}"
    );
    // A line without diagnostics is still asked about.
    let none = call(client, "quickFixes", json!({"filePath": a, "line": 2})).await;
    assert_eq!(text(&none)["diagnostics"], json!([]));
}

async fn bad_arguments(client: &mut common::ws::WsClient, a: &Path) {
    for (tool, arguments, message) in [
        (
            "findReferences",
            json!({"filePath": a}),
            "give `line` and `character`, or `symbol` (neither was given)".to_owned(),
        ),
        (
            "findReferences",
            json!({"filePath": a, "line": 1}),
            "`character` is missing (with `line`)".to_owned(),
        ),
        (
            "findReferences",
            json!({"filePath": a, "line": 1, "character": 5, "symbol": "f"}),
            "give either `symbol` or `line` and `character`, not both: `symbol` names the symbol without a position".to_owned(),
        ),
        (
            "callHierarchy",
            json!({"filePath": a, "line": 1, "character": 5, "direction": "up"}),
            "invalid arguments for tool `callHierarchy`: `direction`: unknown variant `up`, expected `incoming` or `outgoing`".to_owned(),
        ),
        (
            "callHierarchy",
            json!({"filePath": a, "line": 0, "character": 5, "direction": "incoming"}),
            "`line` is 1-based: the first line is 1".to_owned(),
        ),
        (
            "renamePreview",
            json!({"filePath": a, "line": 1, "character": 5}),
            "invalid arguments for tool `renamePreview`: missing field `newName`".to_owned(),
        ),
        (
            "renamePreview",
            json!({"filePath": a, "line": 1, "character": 5, "newName": " "}),
            "`newName` is empty: give the new name".to_owned(),
        ),
        (
            "quickFixes",
            json!({"filePath": a, "line": 99}),
            format!("line 99 is past the end of {}", a.display()),
        ),
        (
            "quickFixes",
            json!({"filePath": "a.py", "line": 1}),
            "`filePath` is not an absolute path or file URI: \"a.py\"".to_owned(),
        ),
    ] {
        assert_eq!(call(client, tool, arguments).await, error(&message), "{tool}");
    }
}
