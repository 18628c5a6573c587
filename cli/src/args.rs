//! The command line.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::diagnostics::DIAGNOSTICS_WAIT;
use crate::headless::{DiagnosticsSource, HeadlessOptions, SelectionSpec};

/// Serves a workspace, its open files and its live cargo diagnostics to
/// Claude Code and other MCP clients, with no editor.
#[derive(Debug, Parser)]
#[command(name = "ide-mcp", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the tools: the Claude Code IDE WebSocket (with a lockfile), or
    /// stdio.
    Serve(ServeArgs),
    /// Print the `tools/list` result as JSON.
    Tools(ToolsArgs),
    /// Run one tool in-process and print its result.
    Call(CallArgs),
}

/// `ide-mcp serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The headless state.
    #[command(flatten)]
    pub state: StateArgs,
    /// The port on 127.0.0.1 (default: an ephemeral one).
    #[arg(long, conflicts_with = "stdio")]
    pub port: Option<u16>,
    /// Serve MCP over stdin/stdout instead (no lockfile), for
    /// `claude mcp add ide-mcp -- ide-mcp serve --stdio` and other clients.
    #[arg(long)]
    pub stdio: bool,
    /// The IDE name in the lockfile, shown by the CLI's `/ide`.
    #[arg(long, default_value = "ide-mcp", value_name = "NAME")]
    pub ide_name: String,
    /// The most authenticated WebSocket connections served at once; a client
    /// with the token beyond it gets 503. Connections that have not shown the
    /// token wait apart (at most 1 024, the oldest dropped first) and never
    /// take one of these places.
    #[arg(long, default_value_t = ide_mcp_runtime::transport::ws::MAX_CONNECTIONS, value_name = "N")]
    pub max_connections: usize,
}

/// `ide-mcp tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// Also check every schema against the meta-schema and the Claude, Gemini
    /// and OpenAI-strict rules; exit non-zero on a violation.
    #[arg(long)]
    pub lint: bool,
}

/// `ide-mcp call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool, e.g. `getDiagnostics`.
    pub tool: String,
    /// Its arguments, a JSON object (default `{}`).
    pub arguments: Option<String>,
    /// The headless state.
    #[command(flatten)]
    pub state: StateArgs,
}

/// Where diagnostics come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiagnosticsArg {
    /// `cargo check` in each workspace folder.
    Cargo,
    /// No diagnostics: `getDiagnostics` answers `[]`.
    None,
}

/// The headless state shared by `serve` and `call`.
#[derive(Debug, Args)]
pub struct StateArgs {
    /// A workspace folder (repeatable; default: the current directory).
    #[arg(long = "workspace", value_name = "DIR")]
    pub workspaces: Vec<PathBuf>,
    /// Where diagnostics come from (default: `cargo` for folders with a
    /// `Cargo.toml`).
    #[arg(long, value_enum)]
    pub diagnostics: Option<DiagnosticsArg>,
    /// How long `getDiagnostics` without `uri` waits for a running check, in
    /// milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DIAGNOSTICS_WAIT.as_millis() as u64)]
    pub diagnostics_wait: u64,
    /// A file shown as an open editor (repeatable, in tab order).
    #[arg(long = "open", value_name = "FILE")]
    pub open: Vec<PathBuf>,
    /// The active editor's selection: `FILE:LINE:COL` (a cursor) or
    /// `FILE:LINE:COL-LINE:COL`, 1-based, columns in characters.
    #[arg(long, value_name = "FILE:LINE:COL[-LINE:COL]")]
    pub select: Option<SelectionSpec>,
}

impl StateArgs {
    /// The headless options these flags describe.
    pub fn options(&self) -> HeadlessOptions {
        HeadlessOptions {
            workspaces: self.workspaces.clone(),
            open: self.open.clone(),
            select: self.select.clone(),
            diagnostics: match self.diagnostics {
                None => DiagnosticsSource::Auto,
                Some(DiagnosticsArg::Cargo) => DiagnosticsSource::Cargo,
                Some(DiagnosticsArg::None) => DiagnosticsSource::None,
            },
            diagnostics_wait: Duration::from_millis(self.diagnostics_wait),
            ..HeadlessOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        <Cli as clap::CommandFactory>::command().debug_assert();
    }

    #[test]
    fn serve_flags_parse() {
        let cli = Cli::try_parse_from([
            "ide-mcp",
            "serve",
            "--workspace",
            "a",
            "--workspace",
            "b",
            "--port",
            "0",
            "--diagnostics",
            "none",
            "--diagnostics-wait",
            "300",
            "--open",
            "a/x.rs",
            "--select",
            "a/x.rs:2:3-4:5",
        ])
        .unwrap();
        let Command::Serve(serve) = cli.command else {
            panic!("not serve")
        };
        assert_eq!(serve.port, Some(0));
        let options = serve.state.options();
        assert_eq!(options.workspaces.len(), 2);
        assert_eq!(options.diagnostics, DiagnosticsSource::None);
        assert_eq!(options.diagnostics_wait, Duration::from_millis(300));
        assert_eq!(options.select.unwrap().end, (4, 5));
        assert!(Cli::try_parse_from(["ide-mcp", "serve", "--stdio", "--port", "1"]).is_err());
    }
}
