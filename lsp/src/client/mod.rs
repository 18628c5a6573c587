//! The host as an LSP client: [`LspDiagnostics`] starts a language server,
//! keeps it told of the files that change on disk, and serves what it
//! publishes as the tools' `DiagnosticsQuery` port (`ide-mcp serve --lsp`).
//!
//! - Start: `initialize` with the workspace folders and what the host really
//!   does (publishDiagnostics with `versionSupport`, work-done progress,
//!   `workspace/configuration` answered, UTF-16 positions), `initialized`,
//!   then `didOpen` for the files to open up front.
//! - Changes: each file changed on disk that the server diagnoses is opened
//!   (`didOpen`) or updated (`didChange` with the whole text, `didSave`);
//!   a query waits, within its bound, for the server's publish of that new
//!   version or for the end of its work-done progress.
//! - Liveness: while it runs, the server is asked `$/ide-mcp/ping`
//!   ([`PROBE_METHOD`]) every [`Probe::interval`]. No server knows that
//!   method, and LSP requires a `$/` request it does not know to be answered
//!   with `MethodNotFound` (-32601): any answer, result or error, proves it
//!   alive (pyright and clangd do, in milliseconds; pyright in a second or
//!   two while it indexes a large workspace). A probe unanswered past
//!   [`Probe::timeout`] declares the server hung, unless it sent something
//!   else meanwhile: a busy server is given another deadline,
//!   [`PROBE_BUSY_WINDOWS`] at most.
//! - Failure: a server that cannot start, exits, does not answer
//!   `initialize` or is declared hung is logged with the tail of its stderr
//!   (a hung one is killed first; the requests it left unanswered fail at
//!   once) and started again after a growing pause ([`MAX_RESTARTS`] in a
//!   row at most); its diagnostics are dropped meanwhile, never served
//!   stale, and queries stop waiting for its fresh ones.
//! - Exit: [`LspDiagnostics::shutdown`] sends `shutdown` and `exit`, each
//!   bounded, and kills a server that hangs; dropping the handle kills it.
//! - Questions: [`language_servers`] serves the live LSP tools from the
//!   running servers, on the disk's text (`questions`).

mod connection;
mod documents;
mod known;
mod liveness;
mod questions;
mod state;
mod supervisor;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ide_mcp_tools::{DiagnosticsQuery, FileDiagnostics, LanguageServers, SettleFuture};
use lsp_types::Diagnostic;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::JoinHandle;

pub use documents::language_id;
pub use known::ServerKind;
pub use questions::START_WAIT;

use crate::published::UnreadLog;
use connection::Context;
use questions::{Access, OwnServers};
use state::Store;
use supervisor::supervise;

/// How long `initialize` may take before the server counts as hung.
pub const INITIALIZE_TIMEOUT: Duration = Duration::from_mins(1);
/// How long `shutdown` and then the exit may each take before a kill.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);
/// The first pause before a restart; it doubles with each failure in a row.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest pause before a restart.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Failures in a row after which the server is given up.
pub const MAX_RESTARTS: u32 = 8;
/// A server that ran this long had no failure "in a row".
const STABLE: Duration = Duration::from_mins(1);
/// The liveness probe's request: a method no server knows, which LSP
/// requires to be answered with `MethodNotFound` (`$/` methods).
pub const PROBE_METHOD: &str = "$/ide-mcp/ping";
/// How often a running server is probed, by default.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(30);
/// How long the probe's answer may take, by default.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// How many deadlines in a row a server that keeps sending other messages
/// may leave the probe unanswered before it is declared hung all the same
/// (two minutes at the default timeout).
pub const PROBE_BUSY_WINDOWS: u32 = 12;

/// How a running server is checked for answers; see the
/// [module documentation](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The pause between one probe's answer and the next probe.
    pub interval: Duration,
    /// How long an answer may take before the server counts as hung.
    pub timeout: Duration,
}

impl Default for Probe {
    fn default() -> Self {
        Self {
            interval: PROBE_INTERVAL,
            timeout: PROBE_TIMEOUT,
        }
    }
}

/// How one language server is run.
#[derive(Clone, Debug)]
pub struct LspServerOptions {
    /// The program and its arguments, e.g. `["pyright-langserver", "--stdio"]`.
    pub command: Vec<String>,
    /// The workspace folders (absolute); the server runs in the first.
    pub folders: Vec<PathBuf>,
    /// Files to open at start (absolute); those the server does not
    /// diagnose are left out.
    pub open: Vec<PathBuf>,
    /// The bound of a query's wait for fresh diagnostics.
    pub wait: Duration,
    /// Whether the server starts only when diagnostics are first asked for.
    pub lazy: bool,
    /// The liveness probe; `None` never probes (a hung server then stays).
    pub probe: Option<Probe>,
}

impl LspServerOptions {
    /// Parses `SERVER [ARGS...]` (split at whitespace; quotes group words).
    pub fn parse_command(text: &str) -> Result<Vec<String>, String> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quote = None;
        let mut any = false;
        for c in text.chars() {
            match (quote, c) {
                (None, '\'' | '"') => {
                    quote = Some(c);
                    any = true;
                }
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() => {
                    if any {
                        words.push(std::mem::take(&mut word));
                        any = false;
                    }
                }
                (_, c) => {
                    word.push(c);
                    any = true;
                }
            }
        }
        if quote.is_some() {
            return Err(format!("unclosed quote in `{text}`"));
        }
        if any {
            words.push(word);
        }
        if words.is_empty() {
            return Err("expected `SERVER [ARGS...]`, got nothing".to_owned());
        }
        Ok(words)
    }
}

/// Hears about the server's work-done progress: `Some(line)` while it works,
/// `None` when it is done.
pub type ProgressCallback = Arc<dyn Fn(Option<String>) + Send + Sync>;

enum Command {
    Changed(Vec<Arc<Path>>),
    Shutdown(oneshot::Sender<()>),
}

/// One language server's diagnostics, kept fresh; see the
/// [module documentation](self).
pub struct LspDiagnostics {
    store: Arc<Store>,
    access: Arc<Access>,
    kind: ServerKind,
    commands: mpsc::UnboundedSender<Command>,
    start: Arc<Notify>,
    started: AtomicBool,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for LspDiagnostics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspDiagnostics")
            .field("server", &self.kind.name)
            .finish_non_exhaustive()
    }
}

impl LspDiagnostics {
    /// Starts the server (at once, unless `options.lazy`); must be called
    /// within a tokio runtime. `progress` hears about its long work.
    pub fn start(options: &LspServerOptions, progress: Option<ProgressCallback>) -> Self {
        let program = options.command.first().map_or("", String::as_str);
        let kind = ServerKind::of(program);
        let store = Arc::new(Store::new(&kind.name, options.wait));
        let (commands, queue) = mpsc::unbounded_channel();
        let start = Arc::new(Notify::new());
        if !options.lazy {
            store.starting(true);
            start.notify_one();
        }
        let access = Arc::new(Access::default());
        let cx = Arc::new(Context {
            store: Arc::clone(&store),
            kind: kind.clone(),
            folders: options.folders.clone(),
            unread: UnreadLog::default(),
            access: Arc::clone(&access),
        });
        let task = tokio::spawn(supervise(
            options.clone(),
            cx,
            queue,
            Arc::clone(&start),
            progress,
        ));
        Self {
            store,
            access,
            kind,
            commands,
            start,
            started: AtomicBool::new(!options.lazy),
            task,
        }
    }

    /// What the host knows of this server.
    pub fn kind(&self) -> &ServerKind {
        &self.kind
    }

    /// When the server's last diagnostics arrived: the start of the host's
    /// own share of a fresh answer (measured in `benches/`).
    pub fn last_publish(&self) -> Option<Instant> {
        self.store.last_publish()
    }

    /// Files changed on disk: those the server diagnoses are sent to it, and
    /// queries wait for their fresh diagnostics from this call on.
    pub fn files_changed(&self, paths: &[PathBuf]) {
        let handled: Vec<Arc<Path>> = paths
            .iter()
            .filter(|path| self.kind.handles(path))
            .map(|path| Arc::from(path.as_path()))
            .collect();
        if handled.is_empty() || !self.started.load(Ordering::SeqCst) {
            return;
        }
        for path in &handled {
            self.store.changed(path);
        }
        let _ = self.commands.send(Command::Changed(handled));
    }

    /// Shuts the server down: `shutdown` and `exit`, each bounded by
    /// [`SHUTDOWN_TIMEOUT`], then a kill.
    pub async fn shutdown(&self) {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(Command::Shutdown(tx)).is_ok() {
            let _ = tokio::time::timeout(SHUTDOWN_TIMEOUT * 3, rx).await;
        }
        self.task.abort();
    }

    fn start_if_lazy(&self) {
        if !self.started.swap(true, Ordering::SeqCst) {
            self.store.starting(true);
            self.start.notify_one();
        }
    }
}

impl Drop for LspDiagnostics {
    fn drop(&mut self) {
        // The connection's child is killed on drop.
        self.task.abort();
    }
}

impl DiagnosticsQuery for LspDiagnostics {
    fn all(&self) -> Vec<FileDiagnostics> {
        self.start_if_lazy();
        self.store.all()
    }

    fn for_file(&self, path: &Path) -> Option<Arc<[Diagnostic]>> {
        self.start_if_lazy();
        self.store.for_file(path)
    }

    fn generation(&self) -> u64 {
        self.store.generation()
    }

    fn settle(&self) -> Option<SettleFuture> {
        self.start_if_lazy();
        self.store.settle()
    }
}

/// The live LSP tools' port over `servers` (run by this host), on the
/// disk's text; `folders` are the workspace folders diffs are relative to.
pub fn language_servers(
    servers: &[Arc<LspDiagnostics>],
    folders: &[PathBuf],
) -> Arc<dyn LanguageServers> {
    let host = OwnServers::new(servers.to_vec(), folders.to_vec());
    Arc::new(crate::live::Live(Arc::new(host)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_at_whitespace_with_quotes() {
        let parse = LspServerOptions::parse_command;
        assert_eq!(
            parse("pyright-langserver  --stdio").unwrap(),
            ["pyright-langserver", "--stdio"]
        );
        assert_eq!(
            parse(r#"clangd "--query-driver=/usr/bin/*" ''"#).unwrap(),
            ["clangd", "--query-driver=/usr/bin/*", ""]
        );
        assert!(parse("  ").is_err());
        assert!(parse("a 'b").is_err());
    }
}
