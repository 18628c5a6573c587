//! The host's diagnostics sources, chosen from its options: a cargo engine
//! for each folder that has (or is told to have) one, and a language server
//! per `--lsp`; each is one `Arc<dyn DiagnosticsQuery>`, and
//! [`CombinedDiagnostics`] merges them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ide_mcp_lsp::client::{LspServerOptions, Probe};
use ide_mcp_tools::DiagnosticsQuery;

use super::engine::{CargoDiagnostics, EngineConfig};
use super::lsp::LspSources;
use super::merge::CombinedDiagnostics;
use super::progress::ProgressBoard;

/// Which folders get a cargo engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CargoMode {
    /// Each workspace folder that has a `Cargo.toml`.
    #[default]
    Auto,
    /// Every workspace folder.
    Always,
    /// None.
    Off,
}

/// How the sources run.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceOptions {
    /// Which folders get a cargo engine.
    pub cargo: CargoMode,
    /// `CARGO_TARGET_DIR` for the checks, relative to each folder when
    /// relative; `None` keeps cargo's own (shared with the user's builds).
    pub cargo_target_dir: Option<PathBuf>,
    /// The bound of a query's wait for running work.
    pub wait: Duration,
    /// Whether to follow file changes.
    pub watch: bool,
    /// Whether work starts only when diagnostics are first asked for.
    pub lazy: bool,
    /// The language servers (`--lsp`), each a program and its arguments.
    pub lsp: Vec<Vec<String>>,
    /// Files opened in the language servers at start (`--open`, and the
    /// matches of `--lsp-open`).
    pub lsp_open: Vec<PathBuf>,
    /// How the language servers are probed for answers; `None`: never.
    pub lsp_probe: Option<Probe>,
}

impl Default for SourceOptions {
    /// Cargo where there is a `Cargo.toml`, watching, no language servers.
    fn default() -> Self {
        Self {
            cargo: CargoMode::Auto,
            cargo_target_dir: None,
            wait: super::DIAGNOSTICS_WAIT,
            watch: true,
            lazy: false,
            lsp: Vec::new(),
            lsp_open: Vec::new(),
            lsp_probe: Some(Probe::default()),
        }
    }
}

/// Starts the sources for `folders` (absolute), reporting long work to
/// `progress`; logs each folder that gets none, and why. The language
/// servers are also returned on their own, to be shut down on exit.
pub fn start_sources(
    folders: &[PathBuf],
    options: &SourceOptions,
    progress: &ProgressBoard,
) -> (Vec<Arc<dyn DiagnosticsQuery>>, LspSources) {
    let mut sources: Vec<Arc<dyn DiagnosticsQuery>> = Vec::new();
    for folder in folders {
        let cargo = match options.cargo {
            CargoMode::Auto => folder.join("Cargo.toml").is_file(),
            CargoMode::Always => true,
            CargoMode::Off => false,
        };
        if cargo {
            sources.push(Arc::new(CargoDiagnostics::start(cargo_config(
                folder, options, progress,
            ))));
        } else if options.lsp.is_empty() {
            log_no_source(folder, options.cargo);
        }
    }
    let lsp = LspSources::start(
        &options.lsp,
        folders,
        &options.lsp_open,
        &LspServerOptions {
            command: Vec::new(),
            folders: Vec::new(),
            open: Vec::new(),
            wait: options.wait,
            lazy: options.lazy,
            probe: options.lsp_probe,
        },
        options.watch,
        progress,
    );
    for server in &lsp.servers {
        sources.push(Arc::clone(server) as Arc<dyn DiagnosticsQuery>);
    }
    (sources, lsp)
}

/// The port over `sources`: `None` when there is none.
pub fn combine(sources: Vec<Arc<dyn DiagnosticsQuery>>) -> Option<Arc<dyn DiagnosticsQuery>> {
    match sources.len() {
        0 => None,
        1 => sources.into_iter().next(),
        _ => Some(Arc::new(CombinedDiagnostics::new(sources))),
    }
}

fn cargo_config(folder: &Path, options: &SourceOptions, progress: &ProgressBoard) -> EngineConfig {
    let mut config = EngineConfig::new(folder);
    config.check.target_dir = options
        .cargo_target_dir
        .as_ref()
        .map(|dir| folder.join(dir));
    config.wait = options.wait;
    config.watch = options.watch;
    config.lazy = options.lazy;
    config.progress = progress.clone();
    config
}

fn log_no_source(folder: &Path, mode: CargoMode) {
    let why = match mode {
        CargoMode::Off => "`--diagnostics none`",
        _ => "it has no `Cargo.toml` and no `--lsp` server was given",
    };
    tracing::info!(folder = %folder.display(), "no diagnostics for this folder: {why}");
}
