//! Synthetic editor state for the benchmarks: `editors` open files
//! `/ws/src/file{i}.rs` (the first one active, with a selection of
//! `selection_bytes`), and `diagnostics` spread evenly over them.

use std::path::PathBuf;

use ide_mcp_runtime::session::Session;
use ide_mcp_runtime::{BuildError, Server};
use ide_mcp_tools::memory::MemoryWorkspace;
use ide_mcp_tools::{BufferId, EditorPorts};
use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range};

/// The workspace root of the synthetic state.
pub const ROOT: &str = "/ws";

/// How big the synthetic state is.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    /// Open files.
    pub editors: usize,
    /// Diagnostics, spread evenly over the files.
    pub diagnostics: usize,
    /// Bytes selected in the active file.
    pub selection_bytes: usize,
}

impl Default for Size {
    /// The end-to-end benchmark's size: 1 000 editors, 10 000 diagnostics, 100 selected bytes.
    fn default() -> Self {
        Self {
            editors: 1000,
            diagnostics: 10_000,
            selection_bytes: 100,
        }
    }
}

/// A document of at least `bytes` bytes, of the same non-ASCII line
/// repeated (the selection and keystroke benches' text).
pub fn document(bytes: usize) -> String {
    let line = "    let value = compute(42, \"ünï\"); // some text\n";
    let mut text = String::with_capacity(bytes + line.len());
    while text.len() < bytes {
        text.push_str(line);
    }
    text
}

/// The path of synthetic file `i`.
pub fn file_path(i: usize) -> PathBuf {
    PathBuf::from(format!("{ROOT}/src/file{i}.rs"))
}

/// A line of Rust-looking text, about 40 bytes.
fn line(i: usize) -> String {
    format!("    let value_{i} = compute({i}, \"ünï\");\n")
}

/// Builds the in-memory ports and the editor ports for `size`.
pub fn workspace(size: Size) -> (MemoryWorkspace, EditorPorts) {
    let ws = MemoryWorkspace::new();
    let editors = size.editors.max(1);
    for i in 0..editors {
        let mut text = String::from("fn main() {\n");
        let lines = if i == 0 {
            size.selection_bytes / 40 + 20
        } else {
            20
        };
        for l in 0..lines {
            text.push_str(&line(l));
        }
        text.push_str("}\n");
        ws.open(BufferId(i as u64), Some(&file_path(i)), "rust", &text);
        if i % 7 == 3 {
            ws.buffers.set_dirty(BufferId(i as u64), true);
        }
    }
    // Select `selection_bytes` from the start of line 1 of the active file.
    let first = line(0).len();
    let lines = size.selection_bytes / first;
    let rest = size.selection_bytes % first;
    ws.select(
        BufferId(0),
        Position::new(1, 0),
        Position::new(1 + lines as u32, rest as u32),
    );
    let per_file = size.diagnostics.div_ceil(editors);
    let mut left = size.diagnostics;
    let mut files = Vec::new();
    for i in 0..editors {
        let n = per_file.min(left);
        left -= n;
        if n == 0 {
            break;
        }
        files.push((
            file_path(i),
            (0..n).map(|j| diagnostic(i, j)).collect::<Vec<_>>(),
        ));
    }
    ws.diagnostics.replace_all(files);
    let cx = ws.editor_ports().workspace_folder(ROOT).build();
    (ws, cx)
}

/// Synthetic diagnostic `j` of file `i`.
pub fn diagnostic(i: usize, j: usize) -> Diagnostic {
    let line = (j % 20) as u32 + 1;
    let (severity, code, source, message) = match j % 4 {
        0 => (
            DiagnosticSeverity::ERROR,
            "E0425",
            "rustc",
            format!("cannot find value `value_{j}` in this scope"),
        ),
        1 => (
            DiagnosticSeverity::WARNING,
            "unused_variables",
            "rustc",
            format!(
                "unused variable: `value_{j}`\nhelp: if this is intentional, prefix it with an underscore: `_value_{j}`"
            ),
        ),
        2 => (
            DiagnosticSeverity::WARNING,
            "clippy::needless_return",
            "clippy",
            "unneeded `return` statement".to_owned(),
        ),
        _ => (
            DiagnosticSeverity::HINT,
            "E0308",
            "rustc",
            format!("expected `u32`, found `&str` in file {i}"),
        ),
    };
    Diagnostic {
        range: Range::new(Position::new(line, 8), Position::new(line, 16)),
        severity: Some(severity),
        code: Some(NumberOrString::String(code.to_owned())),
        source: Some(source.to_owned()),
        message,
        ..Diagnostic::default()
    }
}

/// The flags `bench-server` and `floor-server` share: transport and size.
#[derive(clap::Args, Debug, Clone)]
pub struct ServerArgs {
    /// Serve newline-delimited JSON-RPC on stdin/stdout.
    #[arg(long, conflicts_with = "ws")]
    pub stdio: bool,
    /// Serve the IDE WebSocket on 127.0.0.1:PORT (no lockfile).
    #[arg(long, requires = "token")]
    pub ws: Option<u16>,
    /// Serve Streamable HTTP on 127.0.0.1:PORT at `/mcp` (the token is the
    /// bearer token).
    #[arg(long, requires = "token", conflicts_with_all = ["ws", "stdio"])]
    pub http: Option<u16>,
    /// The auth token clients must send (at least 32 characters).
    #[arg(long)]
    pub token: Option<String>,
    /// Open files `/ws/src/file{i}.rs`, the first one active.
    #[arg(long, default_value_t = 1000)]
    pub editors: usize,
    /// Diagnostics, spread evenly over the files.
    #[arg(long, default_value_t = 10_000)]
    pub diagnostics: usize,
    /// Bytes selected in the active file.
    #[arg(long, default_value_t = 100)]
    pub selection_bytes: usize,
}

impl ServerArgs {
    /// The synthetic state's size.
    pub fn size(&self) -> Size {
        Size {
            editors: self.editors,
            diagnostics: self.diagnostics,
            selection_bytes: self.selection_bytes,
        }
    }
}

/// The server the benchmarks run over `cx`. `bench-server` and
/// `floor-server` both build this one, so their answers match byte for byte.
pub fn server(cx: EditorPorts) -> Result<Server, BuildError> {
    Server::builder("bench-server", env!("CARGO_PKG_VERSION"))
        .state(cx)
        .build()
}

/// A session of `server` past the MCP handshake (`initialize`, then
/// `notifications/initialized`), for in-process benchmarks. Needs a tokio
/// runtime entered.
pub fn initialized_session(server: Server) -> Session {
    let mut session = Session::new(server);
    let mut out = Vec::new();
    session.handle(
        br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#,
        &mut out,
    );
    session.handle(
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        &mut out,
    );
    session
}
