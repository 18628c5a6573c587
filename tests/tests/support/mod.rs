//! Shared by the reliability suites (`attack`, `bad_input`, `faults`, `load`):
//! a workspace of realistic in-memory editor data, servers over the five read
//! tools (plus a test binary's own tools), and a small WebSocket client.
#![allow(dead_code, unreachable_pub)]

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use ide_mcp_runtime::{Registry, Server, ToolDef, WsOptions, WsServerHandle, tools};
use ide_mcp_tools::memory::MemoryWorkspace;
use ide_mcp_tools::{BufferId, ReadContext};
use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::http::{HeaderValue, Request};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A WebSocket client connection.
pub type Client = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long any single wait of these suites may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(10);

/// The five read tools, as registered by `ide-mcp-tools`.
pub const READ_TOOLS: [&str; 5] = [
    "checkDocumentDirty",
    "getCurrentSelection",
    "getDiagnostics",
    "getOpenEditors",
    "getWorkspaceFolders",
];

pub const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{}},"clientInfo":{"name":"claude-code","version":"2.1.0"}}}"#;
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

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

/// The read context of [`workspace`], root folder `/ws`.
pub fn read_context(ws: &MemoryWorkspace) -> ReadContext {
    ws.read_context().workspace_folder("/ws").build()
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
pub fn server_with(cx: ReadContext, extra: &[&str]) -> ide_mcp_runtime::ServerBuilder {
    Server::builder("reliability", "0.0.0")
        .registry(Arc::new(registry(extra)))
        .state(cx)
}

/// A server over the five tools and [`workspace`].
pub fn read_server() -> Server {
    server_with(read_context(&workspace()), &[])
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

/// The upgrade request the CLI makes to `port` with `token`.
pub fn upgrade_request(port: u16, token: &str) -> Request<()> {
    let mut request = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "X-Claude-Code-Ide-Authorization",
        HeaderValue::from_str(token).unwrap(),
    );
    request
}

/// Connects as the CLI does.
pub async fn connect(handle: &WsServerHandle) -> Client {
    connect_to(handle.port(), handle.auth_token()).await
}

/// Connects as the CLI does, to `port` with `token`.
pub async fn connect_to(port: u16, token: &str) -> Client {
    tokio::time::timeout(
        WAIT,
        tokio_tungstenite::connect_async(upgrade_request(port, token)),
    )
    .await
    .expect("the upgrade within the bound")
    .expect("the upgrade succeeds")
    .0
}

/// Connects, initializes, and sends `notifications/initialized`.
pub async fn initialized(handle: &WsServerHandle) -> Client {
    initialized_client(connect(handle).await).await
}

/// Initializes `client`.
pub async fn initialized_client(mut client: Client) -> Client {
    let answer = ask(&mut client, INIT).await;
    assert!(
        answer.contains(r#""protocolVersion":"2025-11-25""#),
        "{answer}"
    );
    send(&mut client, INITIALIZED).await;
    client
}

pub async fn send(client: &mut Client, text: &str) {
    client.send(Message::text(text)).await.unwrap();
}

/// The next text message; panics on a close, an error or a timeout.
pub async fn recv(client: &mut Client) -> String {
    loop {
        let message = tokio::time::timeout(WAIT, client.next())
            .await
            .expect("an answer within the bound")
            .expect("the connection is open")
            .expect("a message");
        match message {
            Message::Text(text) => return text.as_str().to_owned(),
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("unexpected message {other:?}"),
        }
    }
}

/// Sends `text` and returns the next text message.
pub async fn ask(client: &mut Client, text: &str) -> String {
    send(client, text).await;
    recv(client).await
}

/// Asserts that the connection still answers a `ping`.
pub async fn assert_alive(client: &mut Client, id: u64) {
    assert_eq!(
        ask(client, &ping(id)).await,
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
    );
}

/// The close code the server closes with; `None` for a close without a frame.
pub async fn close_code(client: &mut Client) -> Option<CloseCode> {
    loop {
        match tokio::time::timeout(WAIT, client.next())
            .await
            .expect("the close within the bound")
        {
            Some(Ok(Message::Close(frame))) => return frame.map(|f| f.code),
            Some(Ok(_)) => {}
            // Closed without a close frame: the peer process is gone.
            Some(Err(
                WsError::ConnectionClosed
                | WsError::AlreadyClosed
                | WsError::Io(_)
                | WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake),
            ))
            | None => return None,
            Some(Err(err)) => panic!("no close frame: {err}"),
        }
    }
}

/// Sends raw bytes to `port` and reads until the server closes: the exact
/// bytes a client gets back, and whether the server closed within the bound.
pub async fn raw_exchange(port: u16, request: &[u8]) -> (Vec<u8>, bool) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut response = Vec::new();
    let read = tokio::time::timeout(WAIT, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => response.extend_from_slice(&buf[..n]),
            }
        }
    });
    let closed = read.await.is_ok();
    (response, closed)
}

/// A parsed JSON-RPC answer.
pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The `VmRSS` of this process, in KiB.
pub fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status")
}
