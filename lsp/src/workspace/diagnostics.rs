//! Diagnostics by file, merged over the streams, and the wait for an edited
//! document's next diagnostics ([`DiagnosticsQuery::settle`]).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ide_mcp_tools::{DiagnosticsQuery, FileDiagnostics, SettleFuture};
use lsp_types::Diagnostic;
use tokio::sync::watch;
use tokio::time::Instant;

use super::stream::StreamId;
use crate::sync::lock;

/// How long an edited document's diagnostics must stay unchanged before
/// they count as settled: pyright publishes `[]` and then the real set a
/// moment later while it re-checks.
pub const SETTLE_QUIET: Duration = Duration::from_millis(150);

/// Diagnostics of every stream, merged per file in stream order.
#[derive(Debug)]
pub(crate) struct Diagnostics {
    state: Arc<Mutex<State>>,
    generation: AtomicU64,
    /// Ticks on every arrival, so that settling waiters look again.
    arrivals: watch::Sender<u64>,
    settle_bound: Duration,
}

#[derive(Debug, Default)]
struct State {
    files: BTreeMap<Arc<Path>, FileEntry>,
    /// Edits waiting for their stream's next diagnostics, by stream and file.
    waiting: HashMap<(StreamId, Arc<Path>), Waiting>,
    /// Streams that have published or answered diagnostics at least once:
    /// only those are waited for.
    reporting: Vec<StreamId>,
}

#[derive(Debug, Default)]
struct FileEntry {
    by_stream: Vec<(StreamId, Arc<[Diagnostic]>)>,
    merged: Arc<[Diagnostic]>,
}

#[derive(Clone, Copy, Debug)]
struct Waiting {
    /// When the edit was made.
    since: Instant,
    /// The version the diagnostics must be for (or later).
    version: i32,
    /// When the last diagnostics for it arrived.
    arrived: Option<Instant>,
}

impl Diagnostics {
    pub(crate) fn new(settle_bound: Duration) -> Self {
        Self {
            state: Arc::default(),
            generation: AtomicU64::new(0),
            arrivals: watch::Sender::new(0),
            settle_bound,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Sets `stream`'s diagnostics of `path` (for document `version`, when
    /// known), merging them with the other streams'.
    pub(crate) fn set(
        &self,
        stream: StreamId,
        path: &Arc<Path>,
        version: Option<i32>,
        diagnostics: Arc<[Diagnostic]>,
    ) {
        let mut state = self.state();
        state.arrived(stream, path, version);
        let entry = state.files.entry(Arc::clone(path)).or_default();
        match entry.by_stream.iter_mut().find(|(s, _)| *s == stream) {
            Some(slot) => slot.1 = diagnostics,
            None => entry.by_stream.push((stream, diagnostics)),
        }
        entry.by_stream.retain(|(_, d)| !d.is_empty());
        entry.merge();
        if entry.by_stream.is_empty() {
            state.files.remove(path);
        }
        self.generation.fetch_add(1, Ordering::Release);
        drop(state);
        self.arrivals.send_modify(|n| *n += 1);
    }

    /// `stream`'s diagnostics of `path` were reported unchanged (a pull
    /// answer of kind `unchanged`): they stay, and count as arrived.
    pub(crate) fn unchanged(&self, stream: StreamId, path: &Arc<Path>, version: Option<i32>) {
        self.state().arrived(stream, path, version);
        self.arrivals.send_modify(|n| *n += 1);
    }

    /// `stream` edited `path` to `version`: `settle` waits for its next
    /// diagnostics, if it is a stream that reports any.
    pub(crate) fn edited(&self, stream: StreamId, path: &Arc<Path>, version: i32) {
        let mut state = self.state();
        if !state.reporting.contains(&stream) {
            return;
        }
        let waiting = Waiting {
            since: Instant::now(),
            version,
            arrived: None,
        };
        state.waiting.insert((stream, Arc::clone(path)), waiting);
    }

    /// `stream`'s diagnostics of `path`, as it last set them.
    pub(crate) fn of_stream(&self, stream: StreamId, path: &Path) -> Option<Arc<[Diagnostic]>> {
        let state = self.state();
        let entry = state.files.get(path)?;
        entry
            .by_stream
            .iter()
            .find(|(s, _)| *s == stream)
            .map(|(_, d)| Arc::clone(d))
    }

    /// The files `stream` has diagnostics for.
    pub(crate) fn files_of(&self, stream: StreamId) -> Vec<Arc<Path>> {
        let state = self.state();
        state
            .files
            .iter()
            .filter(|(_, e)| e.by_stream.iter().any(|(s, _)| *s == stream))
            .map(|(p, _)| Arc::clone(p))
            .collect()
    }

    /// Forgets everything `stream` reported (its server is gone).
    pub(crate) fn forget_stream(&self, stream: StreamId) {
        let mut state = self.state();
        for entry in state.files.values_mut() {
            entry.by_stream.retain(|(s, _)| *s != stream);
            entry.merge();
        }
        state.files.retain(|_, e| !e.by_stream.is_empty());
        state.waiting.retain(|(s, _), _| *s != stream);
        state.reporting.retain(|&s| s != stream);
        self.generation.fetch_add(1, Ordering::Release);
    }
}

/// When everything waited for has settled, `None`; else the instant to look
/// again (if no diagnostics arrive before). Waits that have settled, or that
/// are older than `bound`, are dropped.
fn next_check(state: &Mutex<State>, bound: Duration, now: Instant) -> Option<Instant> {
    let mut state = lock(state);
    state.waiting.retain(|_, w| {
        now.duration_since(w.since) < bound
            && w.arrived
                .is_none_or(|at| now.duration_since(at) < SETTLE_QUIET)
    });
    state
        .waiting
        .values()
        .map(|w| match w.arrived {
            Some(at) => at + SETTLE_QUIET,
            None => w.since + bound,
        })
        .min()
}

impl State {
    fn arrived(&mut self, stream: StreamId, path: &Arc<Path>, version: Option<i32>) {
        if !self.reporting.contains(&stream) {
            self.reporting.push(stream);
        }
        if let Some(w) = self.waiting.get_mut(&(stream, Arc::clone(path)))
            && version.is_none_or(|v| v >= w.version)
        {
            w.arrived = Some(Instant::now());
        }
    }
}

impl FileEntry {
    fn merge(&mut self) {
        self.merged = match &self.by_stream[..] {
            [] => Arc::from([]),
            [(_, only)] => Arc::clone(only),
            many => many.iter().flat_map(|(_, d)| d.iter().cloned()).collect(),
        };
    }
}

impl DiagnosticsQuery for Diagnostics {
    fn all(&self) -> Vec<FileDiagnostics> {
        self.state()
            .files
            .iter()
            .map(|(path, entry)| FileDiagnostics {
                path: Arc::clone(path),
                diagnostics: Arc::clone(&entry.merged),
            })
            .collect()
    }

    fn for_file(&self, path: &Path) -> Option<Arc<[Diagnostic]>> {
        self.state().files.get(path).map(|e| Arc::clone(&e.merged))
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn settle(&self) -> Option<SettleFuture> {
        let bound = self.settle_bound;
        next_check(&self.state, bound, Instant::now())?;
        let state = Arc::clone(&self.state);
        let mut arrivals = self.arrivals.subscribe();
        Some(Box::pin(async move {
            let deadline = Instant::now() + bound;
            while let Some(wake) = next_check(&state, bound, Instant::now()) {
                let wake = wake.min(deadline);
                if Instant::now() >= deadline {
                    return;
                }
                if let Ok(Err(_closed)) = tokio::time::timeout_at(wake, arrivals.changed()).await {
                    tokio::time::sleep_until(wake).await;
                }
            }
        }))
    }
}
