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

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lsp_types::Diagnostic;
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use super::check::{CheckOptions, run_check};
use super::convert::DiagnosticsByFile;

/// How long a query for all diagnostics waits for a running check before it
/// answers with the last complete set. The CLI waits 2 s for that answer.
pub const DIAGNOSTICS_WAIT: Duration = Duration::from_millis(1500);

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
    /// The bound of [`CargoDiagnostics::settle`].
    pub wait: Duration,
    /// The quiet time before a re-check.
    pub debounce: Duration,
    /// Whether to re-check on file changes (else: one check at start).
    pub watch: bool,
}

impl EngineConfig {
    /// Checks `workspace` with the defaults: `cargo` from `PATH`, cargo's own
    /// target directory, [`DIAGNOSTICS_WAIT`], [`DEBOUNCE`], watching on.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            check: CheckOptions::default(),
            wait: DIAGNOSTICS_WAIT,
            debounce: DEBOUNCE,
            watch: true,
        }
    }
}

/// The diagnostics of the last complete check, shared: handing out a file's
/// list costs a reference count.
#[derive(Debug, Default)]
pub struct DiagnosticsSnapshot {
    generation: u64,
    files: BTreeMap<Arc<Path>, Arc<[Diagnostic]>>,
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
    pub fn files(&self) -> &BTreeMap<Arc<Path>, Arc<[Diagnostic]>> {
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
        let mut ignored = vec![config.workspace.join("target")];
        ignored.extend(config.check.target_dir.clone());
        let signals = Arc::new(Signals {
            status: watch::Sender::new(Status {
                snapshot: Arc::new(DiagnosticsSnapshot::default()),
                busy: true,
            }),
            wake: Notify::new(),
            dirty: AtomicBool::new(false),
            root: config.workspace.clone(),
            ignored: Mutex::new(ignored),
            new_dirs: Mutex::new(Vec::new()),
        });
        let watcher = if config.watch {
            match watch_workspace(&signals) {
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
        let task = tokio::spawn(check_loop(Arc::clone(&signals), config, watcher));
        Self {
            signals,
            wait,
            task,
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
    /// (at once after that): for one-shot callers that want real results.
    pub async fn first_check(&self) {
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
    root: PathBuf,
    /// Directories whose changes are cargo's own output.
    ignored: Mutex<Vec<PathBuf>>,
    /// Directories created at the top level, to be watched.
    new_dirs: Mutex<Vec<PathBuf>>,
}

impl Signals {
    fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::SeqCst);
        self.status
            .send_if_modified(|status| !std::mem::replace(&mut status.busy, true));
        self.wake.notify_one();
    }

    fn on_event(&self, event: notify::Result<Event>) {
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                tracing::warn!(%error, "file watcher error");
                return;
            }
        };
        // Access events (cargo reading the sources) must not trigger checks.
        if !matches!(
            event.kind,
            EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any
        ) {
            return;
        }
        let ignored = self
            .ignored
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let changed: Vec<&PathBuf> = event
            .paths
            .iter()
            .filter(|path| !is_ignored(path, &ignored))
            .collect();
        if changed.is_empty() {
            return;
        }
        if matches!(event.kind, EventKind::Create(_)) {
            let mut new_dirs = self.new_dirs.lock().unwrap_or_else(PoisonError::into_inner);
            new_dirs.extend(
                changed
                    .iter()
                    .filter(|path| path.parent() == Some(self.root.as_path()) && path.is_dir())
                    .map(|path| (*path).clone()),
            );
        }
        tracing::debug!(paths = ?changed, "workspace changed");
        self.mark_dirty();
    }

    fn ignore(&self, dirs: impl IntoIterator<Item = PathBuf>) {
        let mut ignored = self.ignored.lock().unwrap_or_else(PoisonError::into_inner);
        for dir in dirs {
            if !ignored.contains(&dir) {
                ignored.push(dir);
            }
        }
    }
}

fn is_ignored(path: &Path, ignored: &[PathBuf]) -> bool {
    ignored.iter().any(|dir| path.starts_with(dir))
        || path.components().any(|part| part.as_os_str() == ".git")
}

/// Watches the workspace root itself and each top-level directory except
/// the ignored ones recursively, so that `target/`'s thousands of
/// directories never take inotify watches.
fn watch_workspace(signals: &Arc<Signals>) -> notify::Result<RecommendedWatcher> {
    let callback_signals = Arc::clone(signals);
    let mut watcher = notify::recommended_watcher(move |event| callback_signals.on_event(event))?;
    watcher.watch(&signals.root, RecursiveMode::NonRecursive)?;
    let ignored = signals
        .ignored
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    for entry in std::fs::read_dir(&signals.root)?.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) && !is_ignored(&path, &ignored) {
            watch_dir(&mut watcher, &path);
        }
    }
    Ok(watcher)
}

fn watch_dir(watcher: &mut RecommendedWatcher, dir: &Path) {
    if let Err(error) = watcher.watch(dir, RecursiveMode::Recursive) {
        tracing::warn!(dir = %dir.display(), %error, "cannot watch a directory");
    }
}

async fn check_loop(
    signals: Arc<Signals>,
    config: EngineConfig,
    watcher: Option<RecommendedWatcher>,
) {
    let mut watcher = watcher;
    let mut first = true;
    loop {
        if !first {
            signals.wake.notified().await;
            // Quiet period: every further change restarts it.
            loop {
                tokio::select! {
                    () = signals.wake.notified() => {}
                    () = tokio::time::sleep(config.debounce) => break,
                }
            }
        }
        first = false;
        if let Some(watcher) = &mut watcher {
            let new_dirs = std::mem::take(
                &mut *signals
                    .new_dirs
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            );
            for dir in new_dirs {
                watch_dir(watcher, &dir);
            }
        }
        signals.dirty.store(false, Ordering::SeqCst);
        signals
            .status
            .send_if_modified(|status| !std::mem::replace(&mut status.busy, true));

        tracing::info!(workspace = %config.workspace.display(), "cargo check started");
        let files = match run_check(&config.workspace, &config.check).await {
            Ok(report) => {
                tracing::info!(
                    diagnostics = report.count(),
                    files = report.files.len(),
                    duration_ms = report.duration.as_millis(),
                    build_succeeded = report.build_succeeded,
                    "cargo check finished"
                );
                signals.ignore(report.output_dirs);
                report.files
            }
            Err(error) => {
                tracing::warn!("cargo check could not run, so there are no diagnostics: {error}");
                DiagnosticsByFile::new()
            }
        };
        signals.status.send_modify(|status| {
            let snapshot = &status.snapshot;
            if snapshot.generation == 0 || !snapshot.same_files(&files) {
                status.snapshot =
                    Arc::new(DiagnosticsSnapshot::new(snapshot.generation + 1, files));
            }
            // Read under the channel's lock: a change marked after this
            // keeps (or sets again) `busy`.
            status.busy = signals.dirty.load(Ordering::SeqCst);
        });
    }
}
