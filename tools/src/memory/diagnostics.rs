//! `MemoryDiagnostics`: a [`DiagnosticsQuery`] of per-file lists, with a
//! generation counter and an optional "check running" signal.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use lsp_types::Diagnostic;
use tokio::sync::watch;

use crate::ports::{
    DEFAULT_SETTLE_BOUND, DiagnosticsMap, DiagnosticsQuery, FileDiagnostics, SettleFuture,
};

/// Diagnostics by absolute path, as a checker or language server publishes them.
///
/// Every change bumps the [generation](DiagnosticsQuery::generation) (after the
/// data, under the same lock), so `getDiagnostics` serves unchanged data from
/// cached bytes. A checker marks its runs with [`begin_check`](Self::begin_check):
/// while a [`CheckGuard`] lives, `getDiagnostics {}` waits for it to drop, at
/// most the settle bound.
#[derive(Debug)]
pub struct MemoryDiagnostics {
    files: Mutex<DiagnosticsMap>,
    generation: AtomicU64,
    running: watch::Sender<usize>,
    settle_bound: Duration,
}

impl Default for MemoryDiagnostics {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryDiagnostics {
    /// No diagnostics, settle bound [`DEFAULT_SETTLE_BOUND`].
    pub fn new() -> Self {
        Self {
            files: Mutex::default(),
            generation: AtomicU64::new(0),
            running: watch::Sender::new(0),
            settle_bound: DEFAULT_SETTLE_BOUND,
        }
    }

    /// The same store, waiting at most `bound` for a running check.
    pub fn with_settle_bound(mut self, bound: Duration) -> Self {
        self.settle_bound = bound;
        self
    }

    fn files(&self) -> MutexGuard<'_, DiagnosticsMap> {
        self.files.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the data under the lock, then bumps the generation (still
    /// under the lock, so generations and data change in the same order).
    fn change(&self, f: impl FnOnce(&mut BTreeMap<Arc<Path>, Arc<[Diagnostic]>>)) {
        let mut files = self.files();
        f(&mut files);
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Sets the diagnostics of the file at `path` (absolute); an empty list
    /// forgets the file.
    pub fn set(&self, path: impl Into<Arc<Path>>, diagnostics: impl Into<Arc<[Diagnostic]>>) {
        let (path, diagnostics) = (path.into(), diagnostics.into());
        self.change(|files| {
            if diagnostics.is_empty() {
                files.remove(&path);
            } else {
                files.insert(path, diagnostics);
            }
        });
    }

    /// Replaces everything with `files` (a checker's complete run).
    pub fn replace_all<P, D>(&self, files: impl IntoIterator<Item = (P, D)>)
    where
        P: Into<Arc<Path>>,
        D: Into<Arc<[Diagnostic]>>,
    {
        let new: BTreeMap<Arc<Path>, Arc<[Diagnostic]>> = files
            .into_iter()
            .map(|(p, d)| (p.into(), d.into()))
            .filter(|(_, d)| !d.is_empty())
            .collect();
        self.change(|files| *files = new);
    }

    /// Forgets every diagnostic.
    pub fn clear(&self) {
        self.change(BTreeMap::clear);
    }

    /// Marks a check as running until the guard drops; meanwhile
    /// `getDiagnostics {}` waits for it (at most the settle bound).
    pub fn begin_check(self: &Arc<Self>) -> CheckGuard {
        self.running.send_modify(|n| *n += 1);
        CheckGuard {
            store: Arc::clone(self),
        }
    }
}

/// A running check (see [`MemoryDiagnostics::begin_check`]); dropping it ends it.
#[derive(Debug)]
#[must_use = "the check ends when the guard drops"]
pub struct CheckGuard {
    store: Arc<MemoryDiagnostics>,
}

impl Drop for CheckGuard {
    fn drop(&mut self) {
        self.store.running.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl DiagnosticsQuery for MemoryDiagnostics {
    fn all(&self) -> Vec<FileDiagnostics> {
        FileDiagnostics::list(&self.files())
    }

    fn for_file(&self, path: &Path) -> Option<Arc<[Diagnostic]>> {
        self.files().get(path).cloned()
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn settle(&self) -> Option<SettleFuture> {
        if *self.running.borrow() == 0 {
            return None;
        }
        let mut running = self.running.subscribe();
        let bound = self.settle_bound;
        Some(Box::pin(async move {
            let _ = tokio::time::timeout(bound, running.wait_for(|n| *n == 0)).await;
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::Range;

    fn diag(message: &str) -> Diagnostic {
        Diagnostic::new_simple(Range::default(), message.into())
    }

    #[test]
    fn set_replace_clear_bump_the_generation() {
        let store = MemoryDiagnostics::new();
        let g0 = store.generation();
        store.set(Path::new("/ws/b.rs"), vec![diag("b")]);
        store.set(Path::new("/ws/a.rs"), vec![diag("a")]);
        assert!(store.generation() > g0);
        let paths: Vec<_> = store.all().into_iter().map(|f| f.path).collect();
        assert_eq!(
            paths,
            [
                Arc::from(Path::new("/ws/a.rs")),
                Arc::from(Path::new("/ws/b.rs"))
            ]
        );
        store.set(Path::new("/ws/a.rs"), Vec::new());
        assert!(store.for_file(Path::new("/ws/a.rs")).is_none());
        let g1 = store.generation();
        store.replace_all([(Path::new("/ws/c.rs"), vec![diag("c")])]);
        assert!(store.generation() > g1);
        assert_eq!(store.all().len(), 1);
        store.clear();
        assert!(store.all().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn settle_waits_for_the_running_check_or_the_bound() {
        let store = Arc::new(MemoryDiagnostics::new().with_settle_bound(Duration::from_secs(1)));
        assert!(store.settle().is_none());

        let guard = store.begin_check();
        let settle = store.settle().expect("a check is running");
        let start = tokio::time::Instant::now();
        let ender = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            drop(guard);
        });
        settle.await;
        assert_eq!(start.elapsed(), Duration::from_millis(300));
        ender.await.unwrap();
        assert!(store.settle().is_none());

        let _stuck = store.begin_check();
        let start = tokio::time::Instant::now();
        store.settle().unwrap().await;
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }
}
