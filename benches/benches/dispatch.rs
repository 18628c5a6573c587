//! Dispatch overhead: request bytes → response bytes in-process, for each of
//! the five tools on the same data, through the registry (`Session::handle`)
//! and through a hand-written `match` dispatcher doing the same serde work.
//!
//! `cargo bench -p ide-mcp-benches --bench dispatch`

use std::borrow::Cow;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::FutureExt as _;
use ide_mcp_benches::synth::{self, Size};
use ide_mcp_runtime::result::write_json_text;
use ide_mcp_runtime::session::Session;
use ide_mcp_runtime::{IntoToolResult, Server};
use ide_mcp_tools::ReadContext;
use serde::Deserialize;
use serde_json::value::RawValue;

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

/// The baseline: what a careful hand-written server does for the same calls.
fn baseline(cx: &ReadContext, message: &[u8], out: &mut Vec<u8>) {
    #[derive(Deserialize)]
    struct Request<'a> {
        #[serde(borrow)]
        id: &'a RawValue,
        #[serde(borrow)]
        method: Cow<'a, str>,
        #[serde(borrow)]
        params: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Call<'a> {
        #[serde(borrow)]
        name: Cow<'a, str>,
        #[serde(borrow)]
        arguments: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct UriArgs {
        uri: Option<String>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct PathArgs {
        file_path: String,
    }
    let request: Request = serde_json::from_slice(message).expect("valid request");
    assert_eq!(request.method, "tools/call");
    let call: Call =
        serde_json::from_str(request.params.expect("params").get()).expect("call params");
    let args = call.arguments.map_or("{}", RawValue::get);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(request.id.get().as_bytes());
    out.extend_from_slice(br#","result":"#);
    match &*call.name {
        "getCurrentSelection" => write_json_text(out, &ide_mcp_tools::get_current_selection(cx)),
        "getOpenEditors" => ide_mcp_tools::get_open_editors(cx).write_tool_result(out),
        "getWorkspaceFolders" => write_json_text(out, &ide_mcp_tools::get_workspace_folders(cx)),
        "getDiagnostics" => {
            let args: UriArgs = serde_json::from_str(args).expect("args");
            ide_mcp_tools::get_diagnostics(cx, args.uri)
                .now_or_never()
                .expect("no check running")
                .write_tool_result(out);
        }
        "checkDocumentDirty" => {
            let args: PathArgs = serde_json::from_str(args).expect("args");
            write_json_text(
                out,
                &ide_mcp_tools::check_document_dirty(cx, args.file_path),
            );
        }
        other => panic!("unknown tool {other}"),
    }
    out.push(b'}');
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
    let server = Server::builder("bench", "0")
        .state(cx.clone())
        .build()
        .unwrap();
    let mut session = Session::new(server);
    let mut out = Vec::with_capacity(1 << 16);
    session.handle(
        br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#,
        &mut out,
    );
    session.handle(
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        &mut out,
    );

    let mut group = c.benchmark_group("dispatch");
    for (tool, args) in CALLS {
        let message = request(tool, args);
        // Both paths must produce the same bytes, or the comparison means nothing.
        out.clear();
        assert!(session.handle(&message, &mut out));
        let ours = out.clone();
        out.clear();
        baseline(&cx, &message, &mut out);
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
                baseline(&cx, black_box(&message), &mut out);
                black_box(out.len())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
