//! `tools/list` is served from cached bytes: its cost with 5 and with 200
//! registered tools. The answer itself is ~40× larger with 200 tools, so the
//! benchmark reports both the time per call and the time per byte answered;
//! a `tools/call` lookup among 5 and 200 tools is measured beside it.
//!
//! `cargo bench -p ide-mcp-benches --bench tools_list`

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ide_mcp_benches::synth::{self, Size};
use ide_mcp_runtime::session::Session;
use ide_mcp_runtime::{Registry, Server, ToolDef};
use ide_mcp_tools::TOOL_NAMES;

/// The five read tools, plus `extra` copies of `getWorkspaceFolders` under other names.
fn registry(extra: usize) -> Arc<Registry> {
    let mut defs: Vec<&'static ToolDef> = ide_mcp_runtime::tools()
        .iter()
        .filter(|d| d.face.is_none() && TOOL_NAMES.contains(&d.name))
        .collect();
    let template = *defs
        .iter()
        .find(|d| d.name == "getWorkspaceFolders")
        .unwrap();
    for i in 0..extra {
        let name: &'static str = Box::leak(format!("fixtureTool{i:03}").into_boxed_str());
        defs.push(Box::leak(Box::new(ToolDef {
            name,
            description: template.description,
            annotations: template.annotations,
            input_schema: template.input_schema,
            output_schema: template.output_schema,
            states: template.states,
            execution: template.execution,
            call: template.call,
            face: None,
            location: template.location,
        })));
    }
    Arc::new(Registry::from_tools(defs).unwrap())
}

fn session(registry: Arc<Registry>) -> Session {
    let (_ws, cx) = synth::workspace(Size {
        editors: 10,
        diagnostics: 10,
        selection_bytes: 10,
    });
    let server = Server::builder("bench", "0")
        .state(cx)
        .registry(registry)
        .build()
        .unwrap();
    synth::initialized_session(server)
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let list = br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#;
    let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getWorkspaceFolders","arguments":{}}}"#;
    for tools in [5, 200] {
        let mut session = session(registry(tools - 5));
        let mut out = Vec::with_capacity(1 << 20);
        session.handle(list, &mut out);
        let bytes = out.len() as u64;
        let mut group = c.benchmark_group(format!("tools/list/{tools} tools"));
        group.bench_function("per call", |b| {
            b.iter(|| {
                out.clear();
                session.handle(black_box(list), &mut out);
                black_box(out.len())
            });
        });
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function("per byte", |b| {
            b.iter(|| {
                out.clear();
                session.handle(black_box(list), &mut out);
                black_box(out.len())
            });
        });
        group.finish();
        c.bench_function(&format!("tools/call lookup/{tools} tools"), |b| {
            b.iter(|| {
                out.clear();
                session.handle(black_box(call), &mut out);
                black_box(out.len())
            });
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
