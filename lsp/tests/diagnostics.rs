//! Diagnostics pushed and pulled, by version, merged over servers, and the
//! wait for an edited document's next set.

mod support;

use std::sync::Arc;
use std::time::Duration;

use ide_mcp_lsp::LspWorkspace;
use ide_mcp_lsp::workspace::SETTLE_QUIET;
use ide_mcp_tools::DiagnosticsQuery;
use serde_json::{Value, json};
use support::{Stream, helix_initialize, neovim_initialize, range_json, tool};

const MAIN: &str = "file:///ws/main.py";

fn diag(message: &str, severity: u8, range: ((u32, u32), (u32, u32))) -> Value {
    json!({"message": message, "severity": severity, "range": range_json(range)})
}

fn session(ws: &Arc<LspWorkspace>, server: &str) -> Stream {
    let mut s = Stream::new(ws);
    s.request(1, "initialize", neovim_initialize("/ws"));
    s.answer(
        1,
        json!({"capabilities": {"textDocumentSync": 2}, "serverInfo": {"name": server}}),
    );
    s
}

#[tokio::test]
async fn pushed_diagnostics_by_version_and_merged_over_servers() {
    let ws = Arc::new(LspWorkspace::new());
    let mut pyright = session(&ws, "pyright");
    let mut ruff = session(&ws, "ruff");
    pyright.open(MAIN, "python", 0, "import os\nx: int = 'a'\n");
    ruff.open(MAIN, "python", 0, "import os\nx: int = 'a'\n");
    pyright.change(MAIN, 1, ((1, 9), (1, 12)), "'b'");
    ruff.change(MAIN, 1, ((1, 9), (1, 12)), "'b'");
    let cx = ws.editor_ports().build();

    // A set for version 0 arrives late: dropped.
    pyright.publish(MAIN, Some(0), json!([diag("stale", 1, ((0, 0), (0, 1)))]));
    assert_eq!(tool(&cx, "getDiagnostics", json!({})).await, json!([]));

    pyright.publish(
        MAIN,
        Some(1),
        json!([{"message": "\"str\" is not assignable to \"int\"", "severity": 1, "source": "Pyright", "code": "reportAssignmentType", "range": range_json(((1, 9), (1, 12)))}]),
    );
    ruff.publish(MAIN, None, json!([{"message": "`os` imported but unused", "severity": 2, "code": "F401", "range": range_json(((0, 7), (0, 9)))}]));
    let expected = json!([{"uri": "file:///ws/main.py", "diagnostics": [
        {"message": "\"str\" is not assignable to \"int\"", "severity": "Error", "range": range_json(((1, 9), (1, 12))), "source": "Pyright", "code": "reportAssignmentType"},
        {"message": "`os` imported but unused", "severity": "Warning", "range": range_json(((0, 7), (0, 9))), "source": "ruff", "code": "F401"},
    ]}]);
    assert_eq!(tool(&cx, "getDiagnostics", json!({})).await, expected);
    assert_eq!(
        tool(&cx, "getDiagnostics", json!({"uri": "file:///ws/main.py"})).await,
        expected
    );
    assert_eq!(
        tool(&cx, "getDiagnostics", json!({"uri": "file:///ws/other.py"})).await,
        json!([{"uri": "file:///ws/other.py", "diagnostics": []}])
    );

    // The fix: pyright's set empties, ruff's stays.
    let generation = ws.generation();
    pyright.publish(MAIN, Some(1), json!([]));
    assert!(
        ws.generation() > generation,
        "the generation moves with the data"
    );
    let after = tool(&cx, "getDiagnostics", json!({})).await;
    assert_eq!(after[0]["diagnostics"].as_array().unwrap().len(), 1);
    assert_eq!(after[0]["diagnostics"][0]["source"], "ruff");

    // A server that goes takes its diagnostics with it.
    drop(ruff);
    assert_eq!(tool(&cx, "getDiagnostics", json!({})).await, json!([]));
}

#[tokio::test]
async fn a_diagnostic_of_an_odd_shape_costs_only_itself() {
    let ws = Arc::new(LspWorkspace::new());
    let mut s = session(&ws, "eslint");
    s.open("file:///ws/a.ts", "typescript", 0, "let x = foo\n");
    // VS Code's `code` shape, as some servers forward it, beside a plain one.
    s.publish(
        "file:///ws/a.ts",
        Some(0),
        json!([
            {"message": "'x' is never used", "severity": 2, "source": "ts", "code": {"value": 7, "target": "https://example.com/rules/7"}, "range": range_json(((0, 4), (0, 5)))},
            {"message": "cannot find name 'foo'", "severity": 1, "code": "E2304", "range": range_json(((0, 8), (0, 11)))},
        ]),
    );
    let cx = ws.editor_ports().build();
    assert_eq!(
        tool(&cx, "getDiagnostics", json!({})).await,
        json!([{"uri": "file:///ws/a.ts", "diagnostics": [
            {"message": "'x' is never used", "severity": "Warning", "range": range_json(((0, 4), (0, 5))), "source": "ts", "code": "7"},
            {"message": "cannot find name 'foo'", "severity": "Error", "range": range_json(((0, 8), (0, 11))), "source": "eslint", "code": "E2304"},
        ]}])
    );

    // A pulled report is read the same way: one without a range is dropped
    // alone, a severity of the wrong type is dropped and its diagnostic kept.
    s.request(
        2,
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": "file:///ws/a.ts"}}),
    );
    s.answer(
        2,
        json!({"kind": "full", "items": [
            {"message": "first", "severity": "error", "range": range_json(((0, 0), (0, 3)))},
            {"message": "no range"},
            {"message": "second", "code": {"value": "no-undef", "target": "https://example.com/no-undef"}, "range": range_json(((0, 8), (0, 11)))},
        ]}),
    );
    assert_eq!(
        tool(&cx, "getDiagnostics", json!({})).await,
        json!([{"uri": "file:///ws/a.ts", "diagnostics": [
            {"message": "first", "severity": "Error", "range": range_json(((0, 0), (0, 3))), "source": "eslint"},
            {"message": "second", "severity": "Error", "range": range_json(((0, 8), (0, 11))), "source": "eslint", "code": "no-undef"},
        ]}])
    );
}

#[tokio::test]
async fn utf8_sessions_report_utf16_ranges() {
    let ws = Arc::new(LspWorkspace::new());
    let mut s = Stream::new(&ws);
    s.request(1, "initialize", helix_initialize("/ws"));
    s.answer(1, json!({"capabilities": {"positionEncoding": "utf-8"}}));
    s.open("file:///ws/a.rs", "rust", 0, "let s = \"😀\"; bad\n");
    // `bad` starts at byte 16, UTF-16 column 14.
    s.publish(
        "file:///ws/a.rs",
        Some(0),
        json!([diag("bad", 1, ((0, 16), (0, 19)))]),
    );
    let cx = ws.editor_ports().build();
    let all = tool(&cx, "getDiagnostics", json!({})).await;
    assert_eq!(
        all[0]["diagnostics"][0]["range"],
        range_json(((0, 14), (0, 17)))
    );
}

#[tokio::test]
async fn pulled_diagnostics_full_and_unchanged() {
    let ws = Arc::new(LspWorkspace::new());
    let mut s = Stream::new(&ws);
    s.request(1, "initialize", helix_initialize("/ws"));
    s.answer(1, json!({"capabilities": {"diagnosticProvider": {"interFileDependencies": true, "workspaceDiagnostics": false}}, "serverInfo": {"name": "rust-analyzer"}}));
    s.open("file:///ws/a.rs", "rust", 0, "fn main() { foo }\n");
    s.request(
        2,
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": "file:///ws/a.rs"}}),
    );
    s.answer(2, json!({"kind": "full", "resultId": "1", "items": [diag("cannot find value `foo`", 1, ((0, 12), (0, 15)))],
        "relatedDocuments": {"file:///ws/b.rs": {"kind": "full", "items": [diag("in b", 2, ((0, 0), (0, 1)))]}}}));
    let cx = ws.editor_ports().build();
    let all = tool(&cx, "getDiagnostics", json!({})).await;
    assert_eq!(
        all,
        json!([
            {"uri": "file:///ws/a.rs", "diagnostics": [{"message": "cannot find value `foo`", "severity": "Error", "range": range_json(((0, 12), (0, 15))), "source": "rust-analyzer"}]},
            {"uri": "file:///ws/b.rs", "diagnostics": [{"message": "in b", "severity": "Warning", "range": range_json(((0, 0), (0, 1))), "source": "rust-analyzer"}]},
        ])
    );
    // `unchanged` keeps the previous set; an answer to an unknown id is ignored.
    s.request(
        3,
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": "file:///ws/a.rs"}, "previousResultId": "1"}),
    );
    s.answer(3, json!({"kind": "unchanged", "resultId": "1"}));
    s.answer(99, json!({"kind": "full", "items": []}));
    assert_eq!(tool(&cx, "getDiagnostics", json!({})).await, all);
    // An answer for a version the document has moved past is dropped.
    s.request(
        4,
        "textDocument/diagnostic",
        json!({"textDocument": {"uri": "file:///ws/a.rs"}}),
    );
    s.change("file:///ws/a.rs", 1, ((0, 12), (0, 15)), "bar");
    s.answer(4, json!({"kind": "full", "items": []}));
    assert_eq!(tool(&cx, "getDiagnostics", json!({})).await, all);
}

#[tokio::test(start_paused = true)]
async fn settle_waits_for_the_edited_documents_next_quiet_set() {
    let ws = Arc::new(LspWorkspace::with_settle_bound(Duration::from_millis(1500)));
    let mut s = session(&ws, "pyright");
    s.open(MAIN, "python", 0, "x: int = 1\n");
    // Before the server has reported anything, nothing is waited for.
    s.change(MAIN, 1, ((0, 9), (0, 10)), "'a'");
    assert!(
        ws.settle().is_none(),
        "a server that never reports is not waited for"
    );
    s.publish(
        MAIN,
        Some(1),
        json!([diag("str is not int", 1, ((0, 9), (0, 12)))]),
    );
    tokio::time::sleep(SETTLE_QUIET * 2).await;
    assert!(ws.settle().is_none(), "nothing edited since");

    // The fix: pyright first clears, then (100 ms later) publishes the real set.
    s.change(MAIN, 2, ((0, 9), (0, 12)), "2");
    let settle = ws.settle().expect("an edit awaits its diagnostics");
    let start = tokio::time::Instant::now();
    let settling = tokio::spawn(async move {
        settle.await;
        start.elapsed()
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    s.publish(
        MAIN,
        Some(1),
        json!([diag("older version", 1, ((0, 0), (0, 1)))]),
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    s.publish(MAIN, Some(2), json!([]));
    tokio::time::sleep(Duration::from_millis(100)).await;
    s.publish(MAIN, Some(2), json!([diag("unused", 4, ((0, 0), (0, 1)))]));
    let waited = settling.await.unwrap();
    assert_eq!(
        waited,
        Duration::from_millis(200) + SETTLE_QUIET,
        "the last set, then a quiet period"
    );
    let cx = ws.editor_ports().build();
    let all = tool(&cx, "getDiagnostics", json!({})).await;
    assert_eq!(all[0]["diagnostics"][0]["message"], "unused");

    // A server that stays silent: the bound.
    s.change(MAIN, 3, ((0, 0), (0, 0)), " ");
    let start = tokio::time::Instant::now();
    ws.settle().expect("waiting").await;
    assert_eq!(start.elapsed(), Duration::from_millis(1500));
    assert!(ws.settle().is_none(), "given up after the bound");
}
