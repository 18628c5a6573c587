//! One language server's diagnostics, kept fresh: the tools'
//! `DiagnosticsQuery` port.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use ide_mcp_tools::{DiagnosticsQuery, FileDiagnostics, SettleFuture};
use lsp_types::Diagnostic;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::JoinHandle;

use super::access::Access;
use super::connection::Context;
use super::known::ServerKind;
use super::options::{LspServerOptions, ProgressCallback, SHUTDOWN_TIMEOUT};
use super::state::Store;
use super::supervisor::{Command, supervise};
use crate::lenient_diagnostics::UnreadLog;

/// One language server's diagnostics, kept fresh; see the
/// [module documentation](super).
pub struct LspDiagnostics {
    pub(super) store: Arc<Store>,
    pub(super) access: Arc<Access>,
    pub(super) kind: ServerKind,
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
        });
        let task = tokio::spawn(supervise(
            options.clone(),
            cx,
            Arc::clone(&access),
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

    pub(super) fn start_if_lazy(&self) {
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
