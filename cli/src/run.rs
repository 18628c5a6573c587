//! The subcommands: `serve`, `tools`, `call`.

use std::error::Error;
use std::io::{IsTerminal as _, Write};
use std::sync::Arc;

use ide_mcp_lsp::outgoing::split_reply;
use ide_mcp_runtime::lint::lint_registry;
use ide_mcp_runtime::{
    HttpOptions, HttpServerHandle, Registry, Server, ServingThread, WsOptions, WsServerHandle,
};
use serde_json::{Value, json};

#[cfg(unix)]
use ide_mcp_tools::copilot::{CopilotFace, CopilotOptions};
use ide_mcp_tools::gemini::{GeminiFace, GeminiOptions};

use crate::args::{CallArgs, ServeArgs, ToolsArgs};
use crate::diagnostics::ProgressBoard;
use crate::headless::Headless;

/// A boxed error for the command line to print.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// The tools only an editor host serves, left out of the headless host's
/// registry: each needs a person at an editor. `openDiff` blocks until
/// someone accepts or rejects Claude's edit, and the CLI waits on it beside
/// its own prompt, so a host with no one to ask must not list it
/// (PROTOCOL.md, "Reviewing Claude's edits").
pub const EDITOR_ONLY_TOOLS: &[&str] = &["openDiff"];

/// Whether the headless host serves `tool`: not one of
/// [`EDITOR_ONLY_TOOLS`], and a live LSP tool
/// ([`LSP_TOOL_NAMES`](ide_mcp_tools::LSP_TOOL_NAMES)) only `with_servers`:
/// when it runs language servers of its own (`--lsp`), which the tools
/// then ask.
pub fn headless_serves(tool: &str, with_servers: bool) -> bool {
    !EDITOR_ONLY_TOOLS.contains(&tool)
        && (with_servers || !ide_mcp_tools::LSP_TOOL_NAMES.contains(&tool))
}

/// What the headless host serves: every linked tool it
/// [serves](headless_serves), the live LSP tools `with_servers`, and every
/// linked resource and prompt (the open documents, `ide://diagnostics`,
/// `fix_diagnostics`).
pub fn headless_registry(with_servers: bool) -> Result<Registry, BoxError> {
    let tools = ide_mcp_runtime::tools()
        .iter()
        .filter(|tool| tool.face.is_none() && headless_serves(tool.name, with_servers));
    Ok(Registry::from_items(
        tools,
        ide_mcp_runtime::resource::resources(),
        ide_mcp_runtime::prompt::prompts(),
    )?)
}

/// The MCP server over the headless state, serving [`headless_registry`]
/// (the live LSP tools when it runs a language server).
pub fn server(headless: &Headless) -> Result<Server, BoxError> {
    let with_servers = !headless.lsp.servers.is_empty();
    let server = Server::builder("ide-mcp", env!("CARGO_PKG_VERSION"))
        .registry(Arc::new(headless_registry(with_servers)?))
        .state(headless.context.clone())
        .build()?;
    Ok(server)
}

/// `ide-mcp serve`: until stdin ends (`--stdio`), or SIGINT/SIGTERM.
pub async fn serve(args: &ServeArgs) -> Result<(), BoxError> {
    // Installed first: a signal sent as soon as the lockfile appears must
    // shut down cleanly, not kill the process with its lockfile left behind.
    let stop = ide_mcp_runtime::shutdown_signal();
    let headless = Headless::new(&args.state.options())?;
    let server = server(&headless)?;
    // The CLI learns the selection only from `selection_changed`: with
    // `--select`, every client that connects receives it.
    let _selection = args
        .state
        .select
        .is_some()
        .then(|| announce_selection(&server, &headless));
    // Connections are served on a thread of their own with a current-thread
    // runtime: one thread reads, answers and writes each request, while the
    // diagnostics engines, the watcher and the language servers stay on this
    // runtime (see `ServingThread` for the trade-offs).
    let serving = ServingThread::start("ide-mcp-serve")?;
    if args.stdio {
        tracing::info!(folders = ?headless.folders, "serving MCP on stdio");
        let stdio = serving.run({
            let server = server.clone();
            async move { server.serve_stdio().await }
        });
        tokio::select! {
            result = stdio => result?,
            result = stop => result?,
        }
        return Ok(());
    }
    let http = match args.http {
        Some(port) => Some(serve_http(&serving, &server, port, args).await?),
        None => None,
    };
    if args.no_ide {
        stop.await?;
        if let Some(http) = http {
            http.shutdown().await;
        }
        headless.shutdown().await;
        return Ok(());
    }
    let gemini = if args.no_gemini {
        None
    } else {
        Some(serve_gemini(args, &headless).await?)
    };
    // Copilot CLI's IDE connection is a Unix socket.
    #[cfg(unix)]
    let copilot = if args.no_copilot {
        None
    } else {
        Some(serve_copilot(args, &headless).await?)
    };
    let handle = serving
        .run({
            let (server, options) = (server.clone(), ws_options(args, &headless));
            async move { server.serve_ws(options).await }
        })
        .await?;
    // Not a log line: what a person starting the server needs to read.
    eprintln!("{}", banner(&handle, &headless));
    handle.shutdown_after(stop).await?;
    if let Some(gemini) = gemini {
        gemini.shutdown().await;
    }
    #[cfg(unix)]
    if let Some(copilot) = copilot {
        copilot.shutdown().await;
    }
    if let Some(http) = http {
        http.shutdown().await;
    }
    headless.shutdown().await;
    Ok(())
}

/// The IDE's WebSocket for `serve`: the workspace folders, the flags' port,
/// name and connection bound.
fn ws_options(args: &ServeArgs, headless: &Headless) -> WsOptions {
    WsOptions {
        port: args.port,
        workspace_folders: headless
            .folders
            .iter()
            .map(|folder| folder.to_string_lossy().into_owned())
            .collect(),
        ide_name: args.ide_name.clone(),
        max_connections: args.max_connections,
        ..WsOptions::default()
    }
}

/// What `serve` tells the person who started it: where it serves, and how
/// `claude` connects.
fn banner(handle: &WsServerHandle, headless: &Headless) -> String {
    let port = handle.port();
    let folders: Vec<String> = headless
        .folders
        .iter()
        .map(|folder| folder.display().to_string())
        .collect();
    let lockfile = handle
        .lockfile_path()
        .map(|path| format!(" (lockfile {})", path.display()))
        .unwrap_or_default();
    format!(
        "ide-mcp: serving {} on ws://127.0.0.1:{port}{lockfile}\n\
         ide-mcp: connect with `CLAUDE_CODE_SSE_PORT={port} claude`, \
         or run `claude` in the workspace and type /ide",
        folders.join(", ")
    )
}

/// Serves Gemini CLI's IDE companion over the headless state (no
/// `openDiff`: no one to review an edit) and says where.
async fn serve_gemini(args: &ServeArgs, headless: &Headless) -> Result<GeminiFace, BoxError> {
    let options = GeminiOptions {
        folders: headless.folders.clone(),
        display_name: args.ide_name.clone(),
        ..GeminiOptions::default()
    };
    let face = GeminiFace::start(headless.context.clone(), options).await?;
    // Not a log line: what a person starting the server needs to read.
    eprintln!(
        "ide-mcp: serving Gemini CLI on http://127.0.0.1:{}/mcp ({}): start `gemini` in the workspace, then /ide enable",
        face.port(),
        face.discovery_path().display()
    );
    Ok(face)
}

/// Serves the Copilot CLI's IDE connection over the headless state (its
/// socket in a fresh private directory; `open_diff` answers that no one
/// can review) and says where.
#[cfg(unix)]
async fn serve_copilot(args: &ServeArgs, headless: &Headless) -> Result<CopilotFace, BoxError> {
    let dir = ide_mcp_tools::copilot::lockfile::default_dir().ok_or(
        "no home directory for the Copilot CLI's lockfile: set COPILOT_HOME or pass --no-copilot",
    )?;
    let options = CopilotOptions {
        folders: headless.folders.clone(),
        ide_name: args.ide_name.clone(),
        ..CopilotOptions::new(dir)
    };
    let face = CopilotFace::start(headless.context.clone(), options).await?;
    // Not a log line: what a person starting the server needs to read.
    eprintln!(
        "ide-mcp: serving Copilot CLI on {} ({}): start `copilot` in a workspace folder",
        face.socket_path().display(),
        face.lockfile_path().display()
    );
    Ok(face)
}

/// Starts Streamable HTTP and prints the `claude mcp add` line that uses it.
async fn serve_http(
    serving: &ServingThread,
    server: &Server,
    port: u16,
    args: &ServeArgs,
) -> Result<HttpServerHandle, BoxError> {
    let auth_token = match &args.http_token_file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|err| {
                    format!("cannot read the HTTP token file {}: {err}", path.display())
                })?
                .trim()
                .to_owned(),
        ),
        None => None,
    };
    let options = HttpOptions {
        port: (port != 0).then_some(port),
        auth_token,
        ..HttpOptions::default()
    };
    let handle = serving
        .run({
            let server = server.clone();
            async move { server.serve_http(options).await }
        })
        .await?;
    // Not a log line: what a person starting the server needs to read.
    eprintln!(
        "ide-mcp: serving MCP over HTTP on {}\n\
         ide-mcp: add it to Claude Code with:\n  {}",
        handle.url(),
        handle.claude_mcp_add("ide-mcp")
    );
    Ok(handle)
}

/// Publishes the selection given with `--select`: kept as the notifier's
/// latest `selection_changed`, which every client that connects receives
/// (see `SelectionPublisher`). The publisher lives as long as the server.
fn announce_selection(server: &Server, headless: &Headless) -> ide_mcp_tools::SelectionPublisher {
    let publisher = ide_mcp_tools::SelectionPublisher::spawn(
        server.notifier().clone(),
        headless.context.clone(),
    );
    publisher.selection_changed();
    publisher
}

/// Draws the sources' progress on one line of stderr (a terminal) until
/// dropped, instead of logging it.
fn progress_line(board: &ProgressBoard) -> ProgressLine {
    board.set_logging(false);
    let mut tasks = board.subscribe();
    let task = tokio::spawn(async move {
        let mut shown = false;
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
        loop {
            tokio::select! {
                changed = tasks.changed() => if changed.is_err() { break },
                _ = tick.tick() => {}
            }
            let line = ProgressBoard::line(&tasks.borrow_and_update());
            let mut stderr = std::io::stderr().lock();
            match line {
                Some(line) => {
                    let _ = write!(stderr, "\r\x1b[2K{line}");
                    shown = true;
                }
                None if shown => {
                    let _ = write!(stderr, "\r\x1b[2K");
                    shown = false;
                }
                None => {}
            }
            let _ = stderr.flush();
        }
    });
    ProgressLine(task)
}

/// The progress line's task; dropping it clears the line.
struct ProgressLine(tokio::task::JoinHandle<()>);

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.0.abort();
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
}

/// `ide-mcp tools`: prints the `tools/list` result `serve` answers
/// (without `--lsp`); with `--lint`, reports schema violations on stderr.
/// Returns whether all was well.
pub fn tools(args: &ToolsArgs, out: &mut impl Write) -> Result<bool, BoxError> {
    let registry = &headless_registry(false)?;
    serde_json::to_writer_pretty(&mut *out, &registry.list_result())?;
    writeln!(out)?;
    if !args.lint {
        return Ok(true);
    }
    let findings = lint_registry(registry);
    for finding in &findings {
        eprintln!("lint: {finding}");
    }
    eprintln!(
        "lint: {} tools, {} violation(s)",
        registry.tools().len(),
        findings.len()
    );
    Ok(findings.is_empty())
}

/// `ide-mcp call`: runs one tool through an in-memory MCP session and prints
/// the `tools/call` result. Returns `false` when the tool reported an error.
///
/// The state is one-shot: diagnostics sources start when a tool first asks
/// for them (so only a diagnostics tool runs a check) and are then waited
/// for in full, with a progress line on a terminal's stderr.
pub async fn call(args: &CallArgs, out: &mut impl Write) -> Result<bool, BoxError> {
    let arguments: Value = match &args.arguments {
        Some(text) => serde_json::from_str(text)
            .map_err(|error| format!("the arguments are not JSON: {error}"))?,
        None => json!({}),
    };
    if !arguments.is_object() {
        return Err("the arguments must be a JSON object".into());
    }
    let headless = Headless::new(&args.state.options().one_shot())?;
    let progress = std::io::stderr()
        .is_terminal()
        .then(|| progress_line(&headless.progress));
    let server = server(&headless)?;
    let mut client = server.connect_memory();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "ide-mcp call", "version": env!("CARGO_PKG_VERSION")},
    }});
    let reply: Value = serde_json::from_str(&client.request(initialize.to_string()).await)?;
    if let Some(error) = reply.get("error") {
        return Err(format!("initialize failed: {error}").into());
    }
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
        .await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": args.tool, "arguments": arguments}});
    client.send(call.to_string()).await;
    let reply = loop {
        let message = client
            .recv()
            .await
            .ok_or("the session ended without an answer")?;
        let message: Value = serde_json::from_str(&message)?;
        if message.get("id") == Some(&json!(1)) {
            break message;
        }
    };
    let result = split_reply(reply).map_err(|error| {
        error
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| error.to_string(), str::to_owned)
    })?;
    drop(progress); // clears the line before the result is printed
    headless.shutdown().await;
    serde_json::to_writer_pretty(&mut *out, &result)?;
    writeln!(out)?;
    Ok(result.get("isError") != Some(&Value::Bool(true)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::sources::{CargoMode, SourceOptions};
    use crate::headless::HeadlessOptions;

    fn listed(options: &HeadlessOptions) -> Vec<String> {
        let headless = Headless::new(options).unwrap();
        crate::test_util::tool_names(&server(&headless).unwrap().registry().list_result())
    }

    #[tokio::test]
    async fn the_live_tools_are_listed_only_with_a_language_server() {
        let dir = tempfile::tempdir().unwrap();
        let mut options = HeadlessOptions {
            workspaces: vec![dir.path().to_path_buf()],
            sources: SourceOptions {
                cargo: CargoMode::Off,
                lazy: true,
                watch: false,
                ..SourceOptions::default()
            },
            ..HeadlessOptions::default()
        };
        let without = listed(&options);
        let live = ide_mcp_tools::LSP_TOOL_NAMES;
        assert!(
            without.iter().all(|tool| !live.contains(&tool.as_str())),
            "{without:?}"
        );
        assert!(without.iter().any(|tool| tool == "getDiagnostics"));
        // Lazy: the server is never started.
        options.sources.lsp = vec![vec!["ide-mcp-no-such-server".to_owned()]];
        let with = listed(&options);
        let mut expected: Vec<&str> = ide_mcp_tools::TOOL_NAMES
            .iter()
            .copied()
            .filter(|tool| !EDITOR_ONLY_TOOLS.contains(tool))
            .collect();
        expected.sort_unstable();
        let mut with: Vec<&str> = with.iter().map(String::as_str).collect();
        with.sort_unstable();
        assert_eq!(with, expected);
        assert!(live.iter().all(|tool| with.contains(tool)));
    }
}
