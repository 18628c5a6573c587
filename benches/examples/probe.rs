//! Instruction-count probe, run under `valgrind --tool=callgrind`:
//! `probe <variant> <iterations>`, the difference between two iteration
//! counts being the cost of the variant.
use std::hint::black_box;

use ide_mcp_benches::synth::{self, Size};
use ide_mcp_runtime::{IntoToolResult as _, ResultOut};

fn main() {
    let variant = std::env::args().nth(1).expect("variant");
    let n: usize = std::env::args().nth(2).expect("n").parse().expect("n");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let _guard = runtime.enter();
    let editors = if matches!(variant.as_str(), "tool" | "tool-derived" | "plain") {
        10_000
    } else {
        50
    };
    let (_ws, cx) = synth::workspace(Size {
        editors,
        diagnostics: 200,
        selection_bytes: 100,
    });
    let state = ide_mcp_tools::OpenEditorsState::read(&cx);
    let plain = ide_mcp_benches::baseline::plain_tabs(&state);
    let derived = state.clone().without_kept_names();
    let server = synth::server(cx.clone()).expect("server");
    let mut session = synth::initialized_session(server);
    let mut out = Vec::new();
    let folders = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"getWorkspaceFolders","arguments":{},"_meta":{"progressToken":42}}}"#;
    // The async tool: a future ready at once, answered inline.
    let diagnostics = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"getDiagnostics","arguments":{},"_meta":{"progressToken":42}}}"#;
    let dirty = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"checkDocumentDirty","arguments":{"filePath":"/ws/src/file3.rs"},"_meta":{"progressToken":42}}}"#;
    // A 2026-07-28 client's call: its version, info and capabilities in
    // `_meta`, the same with every request (the loadgen's).
    let stateless = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"getWorkspaceFolders","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ide-mcp-loadgen","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    for _ in 0..n {
        out.clear();
        match variant.as_str() {
            "tool" => ResultOut::new(&mut out).json_text(black_box(&state)),
            "tool-derived" => ResultOut::new(&mut out).json_text(black_box(&derived)),
            "plain" => serde_json::to_writer(&mut out, black_box(&plain)).expect("plain"),
            "folders" => {
                session.handle(black_box(folders), &mut out);
            }
            "folders-stateless" => {
                session.handle(black_box(stateless), &mut out);
            }
            "folders-match" => {
                ide_mcp_benches::baseline::dispatch(&cx, black_box(folders), &mut out);
            }
            "dirty-match" => ide_mcp_benches::baseline::dispatch(&cx, black_box(dirty), &mut out),
            "selection-direct" => {
                ResultOut::new(&mut out).json_text(&ide_mcp_tools::get_current_selection(&cx));
            }
            "folders-direct" => {
                ide_mcp_tools::get_workspace_folders(&cx)
                    .write_tool_result(&mut ResultOut::new(&mut out));
            }
            "dirty" => {
                session.handle(black_box(dirty), &mut out);
            }
            "diagnostics" => {
                session.handle(black_box(diagnostics), &mut out);
            }
            "dirty-direct" => ResultOut::new(&mut out).json_text(
                &ide_mcp_tools::check_document_dirty(&cx, "/ws/src/file3.rs".to_owned()),
            ),
            _ => {}
        }
        black_box(out.len());
    }
}
