//! [`CargoDiagnostics`]: `cargo check` at start and after every change under
//! the workspace, the last complete result always at hand, and a bounded wait
//! for the running check.
//!
//! Why wait at all: after the `claude` CLI edits a file it asks
//! `getDiagnostics {}` about 20 ms later and gives the answer 2 s; whatever is
//! new then is shown to the model as the edit's new problems (PROTOCOL.md).
//! The file watcher marks the engine busy on the first raw event, before the
//! debounce and long before cargo is done, so that query waits for the fresh
//! result — up to [`DIAGNOSTICS_WAIT`], then it gets the last complete set.

use ide_mcp_tools::DiagnosticsMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use lsp_types::Diagnostic;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use super::check::{CheckError, CheckOptions, run_check_reporting};
use super::convert::DiagnosticsByFile;
use super::manifest::manifest_diagnostics;
use super::progress::ProgressBoard;
use super::watch::TreeWatcher;

/// How long a query for all diagnostics waits for a running check before it
/// answers with the last complete set: the bound every host has.
pub const DIAGNOSTICS_WAIT: Duration = ide_mcp_tools::DEFAULT_SETTLE_BOUND;

/// Quiet time after a change before a check starts: a burst of saves (an
/// editor writing several files, a `git checkout`) becomes one check.
pub const DEBOUNCE: Duration = Duration::from_millis(200);

/// What [`CargoDiagnostics::start`] checks and how.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// The directory `cargo check` runs in, and the tree that is watched.
    pub workspace: PathBuf,
    /// How cargo is run.
    pub check: CheckOptions,
    /// The bound of the wait for a check in progress (`--diagnostics-wait`).
    pub wait: Duration,
    /// The quiet time before a re-check.
    pub debounce: Duration,
    /// Whether to re-check on file changes (else: one check at start).
    pub watch: bool,
    /// Whether the first check waits until the diagnostics are first asked
    /// for (a one-shot `ide-mcp call` of another tool runs no cargo).
    pub lazy: bool,
    /// Where long checks report their progress.
    pub progress: ProgressBoard,
}

impl EngineConfig {
    /// Checks `workspace` with the defaults: `cargo` from `PATH`, cargo's own
    /// target directory, [`DIAGNOSTICS_WAIT`], [`DEBOUNCE`], watching on,
    /// the first check at once.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            check: CheckOptions::default(),
            wait: DIAGNOSTICS_WAIT,
            debounce: DEBOUNCE,
            watch: true,
            lazy: false,
            progress: ProgressBoard::new(),
        }
    }
}

/// The diagnostics of the last complete check, shared: handing out a file's
/// list costs a reference count.
#[derive(Debug, Default)]
pub struct DiagnosticsSnapshot {
    generation: u64,
    files: DiagnosticsMap,
}

impl DiagnosticsSnapshot {
    fn new(generation: u64, files: DiagnosticsByFile) -> Self {
        Self {
            generation,
            files: files
                .into_iter()
                .map(|(path, list)| (Arc::from(path), Arc::from(list)))
                .collect(),
        }
    }

    /// Counts complete checks whose results differed from the previous
    /// one's; 0 until the first check finished. Equal generations mean equal
    /// diagnostics.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// All diagnostics, by absolute file path; files without any are absent.
    pub fn files(&self) -> &DiagnosticsMap {
        &self.files
    }

    /// The diagnostics of one file (empty when it has none).
    pub fn file(&self, path: &Path) -> &[Diagnostic] {
        self.files.get(path).map_or(&[], |list| list)
    }

    /// The number of diagnostics over all files.
    pub fn count(&self) -> usize {
        self.files.values().map(|list| list.len()).sum()
    }

    fn same_files(&self, other: &DiagnosticsByFile) -> bool {
        self.files.len() == other.len()
            && self
                .files
                .iter()
                .zip(other)
                .all(|((path, list), (other_path, other_list))| {
                    **path == **other_path && **list == **other_list
                })
    }
}

#[derive(Clone, Debug)]
struct Status {
    snapshot: Arc<DiagnosticsSnapshot>,
    /// A check is running, or a change is waiting for one.
    busy: bool,
}

/// Cargo diagnostics of one workspace, kept fresh in the background.
///
/// Dropping it stops the background task and kills a running cargo.
#[derive(Debug)]
pub struct CargoDiagnostics {
    signals: Arc<Signals>,
    wait: Duration,
    /// Whether the first check was asked for (always, unless lazy).
    started: AtomicBool,
    task: JoinHandle<()>,
}

impl CargoDiagnostics {
    /// Starts the first check at once and, when `config.watch` is set, a
    /// file watcher for re-checks. Must be called within a tokio runtime.
    ///
    /// A workspace that cannot be watched is logged and checked once.
    pub fn start(config: EngineConfig) -> Self {
        let mut config = config;
        if let Ok(canonical) = std::fs::canonicalize(&config.workspace) {
            config.workspace = canonical;
        }
        let signals = Arc::new(Signals {
            status: watch::Sender::new(Status {
                snapshot: Arc::new(DiagnosticsSnapshot::default()),
                busy: true,
            }),
            wake: Notify::new(),
            dirty: AtomicBool::new(false),
        });
        let watcher = if config.watch {
            let callback_signals = Arc::clone(&signals);
            match TreeWatcher::start(
                &config.workspace,
                config.check.target_dir.clone(),
                move |_| callback_signals.mark_dirty(),
            ) {
                Ok(watcher) => Some(watcher),
                Err(error) => {
                    tracing::warn!(workspace = %config.workspace.display(), %error,
                        "cannot watch the workspace; diagnostics are checked once");
                    None
                }
            }
        } else {
            None
        };
        let wait = config.wait;
        let started = AtomicBool::new(!config.lazy);
        let task = tokio::spawn(check_loop(Arc::clone(&signals), config, watcher));
        Self {
            signals,
            wait,
            started,
            task,
        }
    }

    /// Starts the first check of a lazy engine (no-op otherwise).
    pub(crate) fn start_if_lazy(&self) {
        if !self.started.swap(true, Ordering::SeqCst) {
            self.signals.wake.notify_one();
        }
    }

    /// The diagnostics of the last complete check.
    pub fn snapshot(&self) -> Arc<DiagnosticsSnapshot> {
        Arc::clone(&self.signals.status.borrow().snapshot)
    }

    /// The generation of the last complete check (see
    /// [`DiagnosticsSnapshot::generation`]).
    pub fn generation(&self) -> u64 {
        self.signals.status.borrow().snapshot.generation
    }

    /// Whether a check is running or a change is waiting for one.
    pub fn is_checking(&self) -> bool {
        self.signals.status.borrow().busy
    }

    /// `None` when the last complete set is current; else a future that
    /// resolves when the running (or pending) check has finished, or when
    /// the configured bound (counted from this call) has elapsed, whichever
    /// comes first. Also available as the `DiagnosticsQuery` port's `settle`.
    pub fn settle_future(&self) -> Option<impl Future<Output = ()> + Send + 'static> {
        if !self.is_checking() {
            return None;
        }
        let mut status = self.signals.status.subscribe();
        let wait = self.wait;
        let deadline = tokio::time::Instant::now() + wait;
        Some(async move {
            let settled = status.wait_for(|status| !status.busy);
            if tokio::time::timeout_at(deadline, settled).await.is_err() {
                tracing::debug!(
                    ?wait,
                    "cargo check still running; answering with the last complete diagnostics"
                );
            }
        })
    }

    /// Resolves once the first check has completed, however long it takes
    /// (at once after that); starts a lazy engine's first check.
    pub async fn first_check(&self) {
        self.start_if_lazy();
        let mut status = self.signals.status.subscribe();
        let _ = status
            .wait_for(|status| status.snapshot.generation >= 1)
            .await;
    }

    /// Marks the workspace changed, as the file watcher does: a check starts
    /// after the debounce (or after the running one).
    pub fn request_check(&self) {
        self.signals.mark_dirty();
    }
}

impl Drop for CargoDiagnostics {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the watcher callback, the check loop and the handle share. Owns no
/// watcher, so the callback holding it makes no cycle.
#[derive(Debug)]
struct Signals {
    status: watch::Sender<Status>,
    /// One stored permit = "check again": a change during a running check
    /// queues exactly one more run.
    wake: Notify,
    /// Set by every change, cleared when a check starts.
    dirty: AtomicBool,
}

impl Signals {
    fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::SeqCst);
        self.status
            .send_if_modified(|status| !std::mem::replace(&mut status.busy, true));
        self.wake.notify_one();
    }
}

async fn check_loop(signals: Arc<Signals>, config: EngineConfig, watcher: Option<TreeWatcher>) {
    let mut units = None;
    if config.lazy {
        signals.wake.notified().await;
    }
    run_once(&signals, &config, watcher.as_ref(), &mut units).await;
    loop {
        signals.wake.notified().await;
        // Quiet period: every further change restarts it.
        loop {
            tokio::select! {
                () = signals.wake.notified() => {}
                () = tokio::time::sleep(config.debounce) => break,
            }
        }
        run_once(&signals, &config, watcher.as_ref(), &mut units).await;
    }
}

/// One check, published. `units` carries the previous run's unit count to
/// the next, for its progress.
async fn run_once(
    signals: &Signals,
    config: &EngineConfig,
    watcher: Option<&TreeWatcher>,
    units: &mut Option<u64>,
) {
    signals.dirty.store(false, Ordering::SeqCst);
    signals
        .status
        .send_if_modified(|status| !std::mem::replace(&mut status.busy, true));

    let workspace = config.workspace.display();
    tracing::info!(%workspace, "cargo check started");
    let progress = config.progress.begin(format!("cargo check {workspace}"));
    let result = run_check_reporting(&config.workspace, &config.check, Some(&progress), *units);
    let files = match result.await {
        Ok(report) => {
            tracing::info!(
                diagnostics = report.count(),
                files = report.files.len(),
                units = report.units,
                duration_ms = report.duration.as_millis(),
                build_succeeded = report.build_succeeded,
                "cargo check finished"
            );
            if let Some(watcher) = watcher {
                watcher.add_output_dirs(report.output_dirs);
            }
            *units = Some(report.units);
            report.files
        }
        Err(CheckError::Failed { step, stderr, .. }) => {
            // A broken manifest: cargo's own words, on the manifest.
            tracing::warn!("`{step}` failed; its errors are served as diagnostics:\n{stderr}");
            manifest_diagnostics(&config.workspace, &stderr)
        }
        Err(error) => {
            tracing::warn!("cargo check could not run, so there are no diagnostics: {error}");
            DiagnosticsByFile::new()
        }
    };
    drop(progress);
    signals.status.send_modify(|status| {
        let snapshot = &status.snapshot;
        if snapshot.generation == 0 || !snapshot.same_files(&files) {
            status.snapshot = Arc::new(DiagnosticsSnapshot::new(snapshot.generation + 1, files));
        }
        // Read under the channel's lock: a change marked after this
        // keeps (or sets again) `busy`.
        status.busy = signals.dirty.load(Ordering::SeqCst);
    });
}
