//! The command line.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use ide_mcp_lsp::client::{PROBE_INTERVAL, PROBE_TIMEOUT, Probe};

use crate::diagnostics::DIAGNOSTICS_WAIT;
use crate::diagnostics::sources::{CargoMode, SourceOptions};
use crate::headless::{HeadlessOptions, SelectionSpec};

/// Claude Code's IDE integration for any editor, and MCP tools for any
/// client: `lsp-proxy` in front of an editor's language servers serves
/// the editor's files, diagnostics and selection and reviews Claude's
/// edits; `serve` serves a workspace and its diagnostics with no editor.
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
    /// Sit between an editor and its language server (configure the editor
    /// to run `ide-mcp lsp-proxy -- SERVER ARGS...` instead of the server)
    /// and serve the editor's open files, dirty state, selection and
    /// diagnostics to Claude Code as an IDE (Unix).
    #[cfg(unix)]
    LspProxy(crate::proxy::LspProxyArgs),
    /// The IDE host of a workspace, which `lsp-proxy` starts and every
    /// proxy of that workspace attaches to: it serves the Claude Code IDE
    /// WebSocket and lockfile, and outlives the editors for `--linger`
    /// (Unix; not usually run by hand).
    #[cfg(unix)]
    Host(crate::proxy::HostArgs),
    /// Serve the tools of the IDE running for the current directory (an
    /// editor with `lsp-proxy`, `ide-mcp serve`, any Claude Code IDE) as a
    /// stdio MCP server, so that the model sees them: `claude mcp add
    /// --scope user ide-mcp -- ide-mcp bridge`.
    Bridge(BridgeArgs),
    /// Runs a command (`lsp-proxy`, or a server) and passes its LSP
    /// traffic unchanged while it logs each message: the recorder of the
    /// replay fixtures (Unix).
    #[cfg(unix)]
    #[command(hide = true)]
    LspRecord(crate::lsp_record::LspRecordArgs),
}

/// `ide-mcp serve`.
#[derive(Debug, Args)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "command-line flags, each a switch of its own"
)]
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
    /// Also serve MCP's Streamable HTTP transport on 127.0.0.1 at `/mcp`
    /// (default port: an ephemeral one), for `claude mcp add --transport
    /// http` and other MCP clients: the same tools and state as the IDE
    /// WebSocket. Prints the `claude mcp add` line to use.
    #[arg(long, value_name = "PORT", num_args = 0..=1, default_missing_value = "0", conflicts_with = "stdio")]
    pub http: Option<u16>,
    /// A file holding the HTTP bearer token (at least 32 printable characters;
    /// default: a fresh random token per run).
    #[arg(long, value_name = "FILE", requires = "http")]
    pub http_token_file: Option<PathBuf>,
    /// Serve HTTP only: no IDE WebSocket and no lockfile.
    #[arg(long, requires = "http")]
    pub no_ide: bool,
    /// Do not serve Gemini CLI's IDE companion (by default `gemini` finds
    /// this IDE through `$TMPDIR/gemini/ide/gemini-ide-server-<pid>-<port>.json`).
    #[arg(long, conflicts_with = "stdio")]
    pub no_gemini: bool,
    /// Do not serve the Copilot CLI's IDE connection (by default `copilot`
    /// finds this IDE through `$COPILOT_HOME/ide/<unique>.lock`, default
    /// `~/.copilot/ide`).
    #[arg(long, conflicts_with = "stdio")]
    pub no_copilot: bool,
}

/// `ide-mcp bridge`.
#[derive(Debug, Args)]
pub struct BridgeArgs {
    /// List every tool of the IDE, those the `claude` CLI already shows the
    /// model (`getDiagnostics`, `executeCode`) or calls itself (`openDiff`,
    /// `close_tab`, `closeAllDiffTabs`, `openFile`) too: for MCP clients
    /// other than the CLI.
    #[arg(long)]
    pub all: bool,
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
    /// The target directory of the diagnostics' `cargo check`, relative to
    /// each workspace folder when relative (e.g. `target/ide-mcp`). Default:
    /// cargo's own, as rust-analyzer does: no second build, but the check
    /// waits while your own `cargo build` holds the directory's lock (the
    /// log says so). A separate one never waits, at the cost of one full
    /// build of its own.
    #[arg(long, value_name = "DIR")]
    pub cargo_target_dir: Option<PathBuf>,
    /// A language server whose diagnostics to serve, started by the host
    /// over stdio: `'SERVER [ARGS...]'`, e.g. `'pyright-langserver --stdio'`
    /// or `clangd` (repeatable: one per language; alongside cargo's).
    #[arg(long = "lsp", value_name = "'SERVER [ARGS...]'", value_parser = parse_server)]
    pub lsp: Vec<Vec<String>>,
    /// Files to open in the language servers at start, as a glob relative to
    /// each workspace folder (repeatable; gitignored files are left out):
    /// servers such as clangd diagnose only open files.
    #[arg(long = "lsp-open", value_name = "GLOB")]
    pub lsp_open: Vec<String>,
    /// How often each language server is asked a request it must answer
    /// (`$/ide-mcp/ping`), in milliseconds; one that stops answering is
    /// killed and restarted. 0 turns the probe off.
    #[arg(long, value_name = "MS", default_value_t = PROBE_INTERVAL.as_millis() as u64)]
    pub lsp_probe_interval: u64,
    /// How long a language server may take to answer the probe, in
    /// milliseconds, before it counts as hung (it gets more time while it
    /// sends other messages, such as diagnostics while it indexes).
    #[arg(long, value_name = "MS", default_value_t = PROBE_TIMEOUT.as_millis() as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub lsp_probe_timeout: u64,
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
            lsp_open: self.lsp_open.clone(),
            sources: SourceOptions {
                cargo: match self.diagnostics {
                    None => CargoMode::Auto,
                    Some(DiagnosticsArg::Cargo) => CargoMode::Always,
                    Some(DiagnosticsArg::None) => CargoMode::Off,
                },
                cargo_target_dir: self.cargo_target_dir.clone(),
                lsp: self.lsp.clone(),
                wait: Duration::from_millis(self.diagnostics_wait),
                lsp_probe: (self.lsp_probe_interval > 0).then(|| Probe {
                    interval: Duration::from_millis(self.lsp_probe_interval),
                    timeout: Duration::from_millis(self.lsp_probe_timeout),
                }),
                ..SourceOptions::default()
            },
        }
    }
}

fn parse_server(text: &str) -> Result<Vec<String>, String> {
    ide_mcp_lsp::client::LspServerOptions::parse_command(text)
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
            "--lsp",
            "pyright-langserver --stdio",
            "--lsp",
            "clangd",
            "--lsp-open",
            "src/**/*.c",
        ])
        .unwrap();
        let Command::Serve(serve) = cli.command else {
            panic!("not serve")
        };
        assert_eq!(serve.port, Some(0));
        let options = serve.state.options();
        assert_eq!(options.workspaces.len(), 2);
        assert_eq!(options.sources.cargo, CargoMode::Off);
        assert_eq!(options.sources.wait, Duration::from_millis(300));
        assert_eq!(options.select.unwrap().end, (4, 5));
        assert_eq!(
            options.sources.lsp,
            [vec!["pyright-langserver", "--stdio"], vec!["clangd"]]
        );
        assert_eq!(options.lsp_open, ["src/**/*.c"]);
        assert_eq!(options.sources.lsp_probe, Some(Probe::default()));
        assert!(Cli::try_parse_from(["ide-mcp", "serve", "--stdio", "--port", "1"]).is_err());
    }

    #[test]
    fn lsp_probe_flags_parse() {
        let probe =
            |args: &[&str]| match Cli::try_parse_from([&["ide-mcp", "serve"], args].concat()) {
                Ok(Cli {
                    command: Command::Serve(serve),
                }) => Ok(serve.state.options().sources.lsp_probe),
                Ok(_) => panic!("not serve"),
                Err(err) => Err(err.kind()),
            };
        assert_eq!(
            probe(&["--lsp-probe-interval", "200", "--lsp-probe-timeout", "1500"]),
            Ok(Some(Probe {
                interval: Duration::from_millis(200),
                timeout: Duration::from_millis(1500),
            }))
        );
        assert_eq!(probe(&["--lsp-probe-interval", "0"]), Ok(None));
        assert!(probe(&["--lsp-probe-timeout", "0"]).is_err());
    }

    #[test]
    fn http_flags_parse() {
        let serve =
            |args: &[&str]| match Cli::try_parse_from([&["ide-mcp", "serve"], args].concat()) {
                Ok(Cli {
                    command: Command::Serve(serve),
                }) => Ok((serve.http, serve.no_ide, serve.http_token_file)),
                Ok(_) => panic!("not serve"),
                Err(err) => Err(err.kind()),
            };
        assert_eq!(serve(&[]), Ok((None, false, None)));
        assert_eq!(serve(&["--http"]), Ok((Some(0), false, None)));
        assert_eq!(
            serve(&["--http", "8123", "--no-ide"]),
            Ok((Some(8123), true, None))
        );
        assert_eq!(
            serve(&["--http", "--http-token-file", "t"]),
            Ok((Some(0), false, Some(PathBuf::from("t"))))
        );
        assert!(serve(&["--no-ide"]).is_err());
        assert!(serve(&["--http-token-file", "t"]).is_err());
        assert!(serve(&["--http", "--stdio"]).is_err());
    }

    #[test]
    fn bridge_flags_parse() {
        let all = |args: &[&str]| match Cli::try_parse_from([&["ide-mcp", "bridge"], args].concat())
        {
            Ok(Cli {
                command: Command::Bridge(bridge),
            }) => Ok(bridge.all),
            Ok(_) => panic!("not bridge"),
            Err(err) => Err(err.kind()),
        };
        assert_eq!(all(&[]), Ok(false));
        assert_eq!(all(&["--all"]), Ok(true));
        assert!(all(&["--port", "1"]).is_err());
    }

    #[test]
    #[cfg(unix)]
    fn lsp_proxy_takes_the_server_after_two_dashes() {
        let cli = Cli::try_parse_from([
            "ide-mcp",
            "lsp-proxy",
            "--ide-name",
            "Helix",
            "--workspace",
            "/w",
            "--",
            "clangd",
            "--log=verbose",
        ])
        .unwrap();
        let Command::LspProxy(proxy) = cli.command else {
            panic!("not lsp-proxy")
        };
        let options = proxy.options();
        assert_eq!(options.server, "clangd");
        assert_eq!(options.args, ["--log=verbose"]);
        assert_eq!(options.ide_name.as_deref(), Some("Helix"));
        assert_eq!(options.workspaces, [std::path::PathBuf::from("/w")]);
        assert!(Cli::try_parse_from(["ide-mcp", "lsp-proxy"]).is_err());
    }
}
