//! The review of Claude's edits on the LSP side. Targets (BENCHMARKS.md
//! § 11): the hunks of a 10-line change in a 50 000-line file computed and
//! published in ≤ 5 ms (from `openDiff` in the host to the proxy's
//! `publishDiagnostics` for the editor, the link's serialization included);
//! the re-merge of a server's `publishDiagnostics` into a document under
//! review ≤ 200 µs, beside the same message passed through with no review.
//!
//! `cargo bench -p ide-mcp-benches --bench lsp_review`

use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ide_mcp_benches::lsp::{URI, stream};
use ide_mcp_lsp::LspWorkspace;
use ide_mcp_lsp::host::review::Reviews;
use ide_mcp_lsp::observer::Overlay;
use ide_mcp_tools::{DiffReview as _, OpenDiffRequest};
use serde_json::json;

const LINES: usize = 50_000;

fn source() -> String {
    let mut text = String::new();
    for i in 0..LINES {
        match i % 10 {
            4 => text.push_str("    }\n"),
            9 => text.push('\n'),
            _ => {
                let _ = writeln!(
                    text,
                    "    let value_{i} = compute({i}, \"ünï\"); // step {i}"
                );
            }
        }
    }
    text
}

/// Ten lines changed in three places, as the tools' `review` bench does.
fn proposal(text: &str) -> String {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
    let at = |fraction: usize| LINES * fraction / 100 + 1;
    lines.drain(at(90)..at(90) + 3);
    for k in 0..3 {
        lines.insert(at(50), format!("    log(\"inserted {k}\");\n"));
    }
    for line in &mut lines[at(10)..at(10) + 4] {
        line.insert_str(4, "// ");
    }
    lines.concat()
}

fn publish(n: usize) -> Vec<u8> {
    let diagnostics: Vec<_> = (0..n)
        .map(|i| json!({"range": {"start": {"line": i * 100, "character": 4}, "end": {"line": i * 100, "character": 9}},
                        "severity": 2, "source": "clangd", "message": format!("unused variable 'value_{i}'")}))
        .collect();
    json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": URI, "version": 0, "diagnostics": diagnostics}})
        .to_string()
        .into_bytes()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let text = source();
    let proposed = proposal(&text);
    // The host's workspace (its observer of the proxy's stream) and the
    // proxy's own observer of the same stream.
    let host = Arc::new(LspWorkspace::new());
    let (_feed, _requests) = stream(&host, &text);
    let proxy = Arc::new(LspWorkspace::new());
    let (mut shown, mut to_editor) = stream(&proxy, &text);
    let reviews = Reviews::new(Arc::clone(&host));
    let mut overlay = reviews.overlay();

    c.bench_function(
        "review/openDiff to the editor's publishDiagnostics, 50 000 lines",
        |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    let start = Instant::now();
                    let call = reviews.open_diff(OpenDiffRequest {
                        agent: ide_mcp_tools::Agent::Claude,
                        path: "/ws/a.c".into(),
                        new_contents: proposed.clone(),
                        tab_name: "t".into(),
                    });
                    let sent = serde_json::to_vec(&**overlay.borrow_and_update()).unwrap();
                    let received: Overlay = serde_json::from_slice(&sent).unwrap();
                    shown.set_review(received);
                    let message = to_editor.try_recv().expect("published");
                    total += start.elapsed();
                    black_box(message);
                    drop(call);
                    shown.set_review(Overlay::default());
                    while to_editor.try_recv().is_ok() {}
                }
                total
            });
        },
    );

    // A review pending in the proxy for the rest.
    let call = reviews.open_diff(OpenDiffRequest {
        agent: ide_mcp_tools::Agent::Claude,
        path: "/ws/a.c".into(),
        new_contents: proposed.clone(),
        tab_name: "t".into(),
    });
    let pending: Overlay =
        serde_json::from_slice(&serde_json::to_vec(&**overlay.borrow_and_update()).unwrap())
            .unwrap();
    assert_eq!(pending.reviews[0].hunks.len(), 3);
    let mut group = c.benchmark_group("review/a server's publishDiagnostics of 10");
    let message = publish(10);
    let (mut plain, _out) = stream(&Arc::new(LspWorkspace::new()), &text);
    group.bench_function("no review: passed through", |b| {
        b.iter(|| black_box(plain.from_server(black_box(&message))));
    });
    shown.set_review(pending);
    while to_editor.try_recv().is_ok() {}
    group.bench_function("under review: the hunks merged in", |b| {
        b.iter(|| black_box(shown.from_server(black_box(&message))));
    });
    group.finish();
    drop(call);
}

criterion_group!(benches, bench);
criterion_main!(benches);
