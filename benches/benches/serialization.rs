//! Serialization of large results: `getDiagnostics` over 10 000 and 100 000
//! diagnostics and `getOpenEditors` over 10 000 buffers, written by the tool
//! path straight into the escaped `text` of a response, against
//! `serde_json::to_writer` of the same plain structs into a `Vec<u8>`;
//! `getOpenEditors` with the tabs' names kept by the tool and derived as
//! written, with the ports read in each iteration (the whole cold path, also
//! after a change of the tab list) and answered from its cached bytes.
//!
//! `cargo bench -p ide-mcp-benches --bench serialization`

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use ide_mcp_benches::synth::{self, Size};
use ide_mcp_runtime::ResultOut;
use ide_mcp_tools::{BufferId, DiagnosticsQuery as _, all_diagnostics_result};
use lsp_types::{NumberOrString, Range};
use serde::Serialize;

#[derive(Serialize)]
struct PlainFile {
    uri: String,
    diagnostics: Vec<PlainDiagnostic>,
}

#[derive(Serialize)]
struct PlainDiagnostic {
    message: String,
    severity: &'static str,
    range: Range,
    source: Option<String>,
    code: Option<String>,
}

/// The baseline of every group: `plain` written by `serde_json::to_writer`.
fn bench_plain(
    group: &mut BenchmarkGroup<'_, WallTime>,
    out: &mut Vec<u8>,
    plain: &impl Serialize,
) {
    group.bench_function("serde_json::to_writer (plain structs)", |b| {
        b.iter(|| {
            out.clear();
            serde_json::to_writer(&mut *out, black_box(plain)).unwrap();
            black_box(out.len())
        });
    });
}

fn bench_diagnostics(c: &mut Criterion, count: usize) {
    let (ws, _cx) = synth::workspace(Size {
        editors: 1000,
        diagnostics: count,
        selection_bytes: 10,
    });
    let files = ws.diagnostics.all();
    let plain: Vec<PlainFile> = files
        .iter()
        .map(|f| PlainFile {
            uri: format!("file://{}", f.path.display()),
            diagnostics: f
                .diagnostics
                .iter()
                .map(|d| PlainDiagnostic {
                    message: d.message.clone(),
                    severity: ide_mcp_tools::diagnostics::severity_name(d.severity),
                    range: d.range,
                    source: d.source.clone(),
                    code: d.code.as_ref().map(|c| match c {
                        NumberOrString::Number(n) => n.to_string(),
                        NumberOrString::String(s) => s.clone(),
                    }),
                })
                .collect(),
        })
        .collect();
    let mut out = Vec::new();
    serde_json::to_writer(&mut out, &plain).unwrap();
    let plain_len = out.len();

    let mut group = c.benchmark_group(format!("getDiagnostics/{count}"));
    group.throughput(Throughput::Bytes(plain_len as u64));
    group.sample_size(20);
    group.bench_function("tool (JSON text of a result)", |b| {
        b.iter(|| {
            out.clear();
            ResultOut::new(&mut out).json_text(&all_diagnostics_result(black_box(&files)));
            black_box(out.len())
        });
    });
    bench_plain(&mut group, &mut out, &plain);
    group.finish();
}

fn bench_open_editors(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let (ws, cx) = synth::workspace(Size {
        editors: 10_000,
        diagnostics: 0,
        selection_bytes: 10,
    });
    let state = ide_mcp_tools::OpenEditorsState::read(&cx);
    let plain = ide_mcp_benches::baseline::plain_tabs(&state);
    let mut out = Vec::new();
    serde_json::to_writer(&mut out, &plain).unwrap();
    let plain_len = out.len();

    let server = synth::server(cx.clone()).unwrap();
    let mut session = synth::initialized_session(server);
    let request = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getOpenEditors","arguments":{}}}"#;

    let mut group = c.benchmark_group("getOpenEditors/10000");
    group.throughput(Throughput::Bytes(plain_len as u64));
    group.sample_size(20);
    group.bench_function("tools/call through the session (cached bytes)", |b| {
        b.iter(|| {
            out.clear();
            session.handle(black_box(request), &mut out);
            black_box(out.len())
        });
    });
    group.bench_function("tool (JSON text of a result, ports already read)", |b| {
        b.iter(|| {
            out.clear();
            ResultOut::new(&mut out).json_text(black_box(&state));
            black_box(out.len())
        });
    });
    let derived = state.clone().without_kept_names();
    group.bench_function("tool, ports already read, names derived as written", |b| {
        b.iter(|| {
            out.clear();
            ResultOut::new(&mut out).json_text(black_box(&derived));
            black_box(out.len())
        });
    });
    group.bench_function("tool, reading the ports too (no cached bytes)", |b| {
        b.iter(|| {
            out.clear();
            let state = ide_mcp_tools::OpenEditorsState::read(black_box(&cx));
            ResultOut::new(&mut out).json_text(&state);
            black_box(out.len())
        });
    });
    // Each iteration moves the active tab: a new generation, every name kept.
    let mut active = 0;
    group.bench_function(
        "tool, reading the ports after a change (no cached bytes)",
        |b| {
            b.iter(|| {
                active = (active + 1) % 10_000;
                ws.editor.set_active(Some(BufferId(active)));
                out.clear();
                let state = ide_mcp_tools::OpenEditorsState::read(black_box(&cx));
                ResultOut::new(&mut out).json_text(&state);
                black_box(out.len())
            });
        },
    );
    bench_plain(&mut group, &mut out, &plain);
    group.finish();
}

fn bench(c: &mut Criterion) {
    bench_diagnostics(c, 10_000);
    bench_diagnostics(c, 100_000);
    bench_open_editors(c);
}

criterion_group!(benches, bench);
criterion_main!(benches);
