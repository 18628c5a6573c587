//! The observer on the keystroke path: a one-character `didChange` in a
//! 50 MB document against the same in a 1 KB one (target ≤ 1.5×: O(edit),
//! not O(document)), and the cost of typical messages.
//!
//! `cargo bench -p ide-mcp-benches --bench lsp_mirror`

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ide_mcp_benches::lsp;
use ide_mcp_benches::synth::document;
use ide_mcp_lsp::{LspWorkspace, Observer};
use serde_json::json;

/// An initialized stream with `text` open as `file:///ws/a.c`.
fn stream(text: &str) -> (Arc<LspWorkspace>, Observer) {
    let ws = Arc::new(LspWorkspace::new());
    let (observer, _outgoing) = lsp::stream(&ws, text);
    (ws, observer)
}

/// The bodies of a keystroke in the middle of `lines` lines and its undo.
fn keystroke(line: u32, version: i32) -> [Vec<u8>; 2] {
    let change = |version: i32, end: u32, text: &str| {
        json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": "file:///ws/a.c", "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": end}}, "text": text}],
        }})
        .to_string()
        .into_bytes()
    };
    [change(version, 4, "x"), change(version + 1, 5, "")]
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("observer/didChange of one character");
    for (label, bytes) in [("1 KB", 1024), ("50 MB", 50 << 20)] {
        let text = document(bytes);
        let lines = text.lines().count() as u32;
        let (_ws, mut observer) = stream(&text);
        drop(text);
        // The version grows as the editor's would; the bodies are made once.
        let pairs: Vec<[Vec<u8>; 2]> = (0..64).map(|i| keystroke(lines / 2, 1 + 2 * i)).collect();
        let mut i = 0;
        group.bench_function(label, |b| {
            b.iter(|| {
                let [insert, delete] = &pairs[i % pairs.len()];
                i += 1;
                black_box(observer.from_client(insert));
                black_box(observer.from_client(delete));
            });
        });
    }
    group.finish();

    // A document opened: the observer's whole work on a `didOpen` (the
    // envelope, the params, the rope, the workspace's snapshot), against
    // a rope built from the text alone (JSON not even read: below what any
    // mirror can do) and the plain way, the JSON string read into a
    // `String`, then a rope built from it.
    let mut group = c.benchmark_group("observer/didOpen");
    group.sample_size(10);
    for (label, bytes) in [("1 MB", 1 << 20), ("50 MB", 50 << 20)] {
        let text = document(bytes);
        let body =
            json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": "file:///ws/big.c", "languageId": "c", "version": 0, "text": text}}})
            .to_string();
        let string = serde_json::to_string(&text).unwrap();
        group.throughput(Throughput::Bytes(body.len() as u64));
        let (_ws, mut observer) = stream("");
        group.bench_function(format!("{label}, observer"), |b| {
            b.iter(|| black_box(observer.from_client(body.as_bytes())));
        });
        group.bench_function(format!("{label}, JSON string then rope"), |b| {
            b.iter(|| {
                let text: String = serde_json::from_str(&string).unwrap();
                black_box(ropey::Rope::from_str(&text))
            });
        });
        group.bench_function(format!("{label}, rope from the text"), |b| {
            b.iter(|| black_box(ropey::Rope::from_str(&text)));
        });
    }
    group.finish();

    let (_ws, mut observer) = stream(&document(64 * 1024));
    let hover = br#"{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///ws/a.c"},"position":{"line":100,"character":8}}}"#;
    let diagnostics = json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///ws/a.c", "version": 0,
        "diagnostics": (0..10).map(|i| json!({"message": format!("problem {i}"), "severity": 1, "source": "clangd", "code": "E1",
            "range": {"start": {"line": i * 10, "character": 4}, "end": {"line": i * 10, "character": 9}}})).collect::<Vec<_>>()}})
    .to_string();
    let response = br#"{"jsonrpc":"2.0","id":42,"result":{"contents":{"kind":"markdown","value":"`int value`"}}}"#;
    let ask_action = br#"{"jsonrpc":"2.0","id":9,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///ws/a.c"},"range":{"start":{"line":3,"character":0},"end":{"line":5,"character":0}},"context":{"diagnostics":[]}}}"#;
    let actions = br#"{"jsonrpc":"2.0","id":9,"result":[{"title":"Fix","kind":"quickfix"}]}"#;
    let mut group = c.benchmark_group("observer/typical message");
    group.bench_function("hover request (cursor)", |b| {
        b.iter(|| black_box(observer.from_client(hover)));
    });
    group.bench_function("publishDiagnostics (10)", |b| {
        b.iter(|| black_box(observer.from_server(diagnostics.as_bytes())));
    });
    group.bench_function("response passed through", |b| {
        b.iter(|| black_box(observer.from_server(response)));
    });
    group.bench_function("codeAction request + merged answer", |b| {
        b.iter(|| {
            black_box(observer.from_client(ask_action));
            black_box(observer.from_server(actions))
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
