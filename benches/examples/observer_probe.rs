//! Instruction-count probe of the LSP observer, run under
//! `valgrind --tool=callgrind`: `observer_probe <iterations>` opens a 64 KB
//! document, then sends that many keystrokes (a one-character `didChange`
//! and a `hover`); the difference between two iteration counts is the cost
//! of that many keystrokes.
use std::hint::black_box;
use std::sync::Arc;

use ide_mcp_lsp::{LspWorkspace, Observer};
use serde_json::json;

fn main() {
    let n: usize = std::env::args().nth(1).expect("n").parse().expect("n");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let _guard = runtime.enter();
    let ws = Arc::new(LspWorkspace::new());
    let (mut observer, _outgoing) = Observer::new(Arc::clone(&ws));
    let send = |o: &mut Observer, v: &serde_json::Value| o.from_client(v.to_string().as_bytes());
    send(
        &mut observer,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": 1, "capabilities": {}}}),
    );
    observer.from_server(
        br#"{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"textDocumentSync":2}}}"#,
    );
    let text = "    let value = compute(42, \"x\"); // some text\n".repeat(1400);
    send(
        &mut observer,
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "file:///ws/a.c", "languageId": "c", "version": 0, "text": text}}}),
    );
    let bodies: Vec<[Vec<u8>; 2]> = (0..64)
        .map(|i| {
            let line = 100 + i;
            [
                json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": "file:///ws/a.c", "version": i + 1},
                    "contentChanges": [{"range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 4}}, "text": "x"}]}})
                .to_string()
                .into_bytes(),
                json!({"jsonrpc": "2.0", "id": 100 + i, "method": "textDocument/hover",
                    "params": {"textDocument": {"uri": "file:///ws/a.c"}, "position": {"line": line, "character": 5}}})
                .to_string()
                .into_bytes(),
            ]
        })
        .collect();
    for i in 0..n {
        let [change, hover] = &bodies[i % bodies.len()];
        black_box(observer.from_client(change));
        black_box(observer.from_client(hover));
    }
}
