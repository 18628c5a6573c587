//! Shared by the reliability suites (`attack`, `bad_input`, `faults`, `load`):
//! a workspace of realistic in-memory editor data, servers over the five read
//! tools (plus a test binary's own tools), and the shared WebSocket client
//! of `ide-mcp-test-support`.
// Each suite uses a part of it, re-exports included.
#![allow(dead_code, unreachable_pub, unused_imports)]

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use ide_mcp_runtime::{Registry, Server, ToolDef, WsOptions, WsServerHandle, tools};
use ide_mcp_tools::memory::MemoryWorkspace;
use ide_mcp_tools::{BufferId, EditorPorts};
use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;

pub use ide_mcp_test_support::{
    Client, INIT, INITIALIZED, WAIT, ask, close_code, connect as connect_to, handshake,
    read_until_closed, recv, send, upgrade_request,
};

/// The read tools, as registered by `ide-mcp-tools`.
pub use ide_mcp_tools::READ_TOOL_NAMES as READ_TOOLS;

/// `tools/call` of `tool` with `args` (JSON text), as the CLI sends it.
pub fn call(id: u64, tool: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args},"_meta":{{"progressToken":{id}}}}}}}"#
    )
}

/// `ping` with this id.
pub fn ping(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)
}

/// `notifications/cancelled` for request `id`.
pub fn cancel(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"test"}}}}"#
    )
}

/// A workspace as an editor in the middle of work holds it: 24 open files
/// (Rust, TypeScript, Markdown; ASCII and not; CRLF and LF), two of them
/// dirty, one untitled buffer, a selection with an emoji in it, and
/// diagnostics for 40 files.
pub fn workspace() -> MemoryWorkspace {
    let ws = MemoryWorkspace::new();
    for i in 0..24u64 {
        let (name, lang) = match i % 3 {
            0 => (format!("/ws/src/module_{i}.rs"), "rust"),
            1 => (format!("/ws/web/ü component {i}.ts"), "typescript"),
            _ => (format!("/ws/docs/notes #{i}.md"), "markdown"),
        };
        let mut text = String::new();
        for line in 0..200 {
            if line % 7 == 0 {
                text.push_str("    let café = \"😀 naïve\"; // ünïcode\r\n");
            } else {
                let _ = writeln!(text, "    let value_{line} = compute({line}, {i});");
            }
        }
        ws.open(BufferId(i + 1), Some(Path::new(&name)), lang, &text);
    }
    ws.open(BufferId(100), None, "plaintext", "scratch");
    ws.buffers
        .set_text(BufferId(1), "fn main() {\n    let 😀 = foo;\n}\n");
    ws.buffers.set_dirty(BufferId(2), true);
    ws.select(BufferId(1), Position::new(1, 8), Position::new(1, 16));
    for f in 0..40u32 {
        let diagnostics: Vec<Diagnostic> = (0..5u32)
            .map(|d| Diagnostic {
                severity: Some(match d % 4 {
                    0 => DiagnosticSeverity::ERROR,
                    1 => DiagnosticSeverity::WARNING,
                    2 => DiagnosticSeverity::INFORMATION,
                    _ => DiagnosticSeverity::HINT,
                }),
                code: Some(NumberOrString::String(format!("E0{f}{d}"))),
                source: Some("rustc".into()),
                ..Diagnostic::new_simple(
                    Range::new(Position::new(d * 3, 4), Position::new(d * 3, 12)),
                    format!("cannot find value `x{d}` in this scope — «{f}»"),
                )
            })
            .collect();
        ws.diagnostics
            .set(Path::new(&format!("/ws/src/module_{f}.rs")), diagnostics);
    }
    ws
}

/// The editor ports of [`workspace`], root folder `/ws`.
pub fn editor_ports(ws: &MemoryWorkspace) -> EditorPorts {
    ws.editor_ports().workspace_folder("/ws").build()
}

/// The five read tools plus the tools of this test binary named in `extra`.
pub fn registry(extra: &[&str]) -> Registry {
    let defs: Vec<&'static ToolDef> = tools()
        .iter()
        .filter(|t| {
            (t.location.crate_name == "ide-mcp-tools" && READ_TOOLS.contains(&t.name))
                || (t.location.crate_name == "ide-mcp-tests" && extra.contains(&t.name))
        })
        .collect();
    assert_eq!(
        defs.len(),
        READ_TOOLS.len() + extra.len(),
        "every tool named is linked"
    );
    Registry::from_tools(defs).expect("a valid registry")
}

/// A server over [`registry`]`(extra)` with `cx` and the given extra state.
pub fn server_with(cx: EditorPorts, extra: &[&str]) -> ide_mcp_runtime::ServerBuilder {
    Server::builder("reliability", "0.0.0")
        .registry(Arc::new(registry(extra)))
        .state(cx)
}

/// A server over the five tools and [`workspace`].
pub fn read_server() -> Server {
    server_with(editor_ports(&workspace()), &[])
        .build()
        .unwrap()
}

/// Serves `server` on an ephemeral port, its lockfile in a fresh directory.
pub async fn serve(server: &Server, options: WsOptions) -> (WsServerHandle, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let handle = server
        .serve_ws(WsOptions {
            config_dir: Some(dir.path().to_owned()),
            workspace_folders: vec!["/ws".to_owned()],
            ..options
        })
        .await
        .unwrap();
    (handle, dir)
}

/// Connects as the CLI does.
pub async fn connect(handle: &WsServerHandle) -> Client {
    connect_to(handle.port(), handle.auth_token()).await
}

/// Connects, initializes, and sends `notifications/initialized`.
pub async fn initialized(handle: &WsServerHandle) -> Client {
    initialized_client(connect(handle).await).await
}

/// Initializes `client` (the shared [`handshake`]).
pub async fn initialized_client(mut client: Client) -> Client {
    handshake(&mut client).await;
    client
}

/// Asserts that the connection still answers a `ping`.
pub async fn assert_alive(client: &mut Client, id: u64) {
    assert_eq!(
        ask(client, &ping(id)).await,
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
    );
}

/// Sends raw bytes to `port` and reads until the server closes: the exact
/// bytes a client gets back, and whether the server closed within the bound.
pub async fn raw_exchange(port: u16, request: &[u8]) -> (Vec<u8>, bool) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(request).await.unwrap();
    read_until_closed(&mut stream, WAIT).await
}

/// A parsed JSON-RPC answer.
pub use ide_mcp_test_support::json::json;

/// The `VmRSS` of this process, in KiB.
pub fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status")
}
