//! Dispatch overhead: request bytes → response bytes in-process, for each of
//! the five tools on the same data, through the registry (`Session::handle`)
//! and through a hand-written `match` dispatcher doing the same serde work.
//!
//! `cargo bench -p ide-mcp-benches --bench dispatch`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ide_mcp_benches::synth::{self, Size};

/// The five calls, as the `claude` CLI or another client sends them.
pub const CALLS: [(&str, &str); 5] = [
    ("getCurrentSelection", "{}"),
    ("getOpenEditors", "{}"),
    ("getWorkspaceFolders", "{}"),
    ("getDiagnostics", "{}"),
    ("checkDocumentDirty", r#"{"filePath":"/ws/src/file3.rs"}"#),
];

fn request(tool: &str, args: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{{"name":"{tool}","arguments":{args},"_meta":{{"progressToken":42}}}}}}"#
    )
    .into_bytes()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let (_ws, cx) = synth::workspace(Size {
        editors: 50,
        diagnostics: 200,
        selection_bytes: 100,
    });
    let server = synth::server(cx.clone()).unwrap();
    let mut session = synth::initialized_session(server);
    let mut out = Vec::with_capacity(1 << 16);

    let mut group = c.benchmark_group("dispatch");
    for (tool, args) in CALLS {
        let message = request(tool, args);
        // Both paths must produce the same bytes, or the comparison means nothing.
        out.clear();
        assert!(session.handle(&message, &mut out));
        let ours = out.clone();
        out.clear();
        ide_mcp_benches::baseline::dispatch(&cx, &message, &mut out);
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&out),
            "{tool}"
        );

        group.bench_function(format!("{tool}/registry"), |b| {
            b.iter(|| {
                out.clear();
                session.handle(black_box(&message), &mut out);
                black_box(out.len())
            });
        });
        group.bench_function(format!("{tool}/match"), |b| {
            b.iter(|| {
                out.clear();
                ide_mcp_benches::baseline::dispatch(&cx, black_box(&message), &mut out);
                black_box(out.len())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
