//! One server's diagnostics as it published them, and what a query waits
//! for: the fresh publish of each document changed on disk, the end of the
//! server's work-done progress, or its start.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ide_mcp_tools::{DiagnosticsMap, DiagnosticsQuery, FileDiagnostics, SettleFuture};
use lsp_types::Diagnostic;
use tokio::sync::watch;

/// What a query waits for of one document changed on disk.
#[derive(Clone, Copy, Debug, Default)]
struct Awaited {
    /// The version sent to the server, until its diagnostics arrive.
    sent: Option<i32>,
    /// A change seen on disk that has not reached the server yet. Kept
    /// apart from `sent`: an editor's save is often two file events (the
    /// truncation, the write), and the second, finding the text already
    /// sent, must not end the wait for that text's diagnostics.
    unsent: bool,
}

/// A server that diagnoses the whole workspace publishes its first results
/// in a burst (pyright: every file at once, `[]` for the clean ones): its
/// first analysis counts as done once publishes pause this long...
pub(crate) const INITIAL_QUIET: Duration = Duration::from_millis(300);
/// ...or its work-done progress ends, or this long after it started (a
/// workspace with nothing to diagnose publishes nothing).
pub(crate) const INITIAL_LIMIT: Duration = Duration::from_secs(30);
/// How often a wait looks again during the first analysis.
const INITIAL_TICK: Duration = Duration::from_millis(50);

/// Where the first analysis of a whole-workspace server stands.
#[derive(Clone, Copy, Debug, Default)]
enum Initial {
    /// Over (or not wanted: the server diagnoses open documents only).
    #[default]
    Done,
    /// Nothing published yet since `since`.
    Waiting { since: Instant },
    /// Publishing; the last publish at `last`.
    Publishing { since: Instant, last: Instant },
}

#[derive(Clone, Debug, Default)]
pub(crate) struct State {
    /// Bumped after every change of `files`, atomically with it.
    generation: u64,
    files: Arc<DiagnosticsMap>,
    /// Documents changed on disk and what is awaited of each.
    pending: HashMap<Arc<Path>, Awaited>,
    /// Work-done progress running: token → its line.
    progress: BTreeMap<String, String>,
    /// The server is starting (not yet initialized).
    starting: bool,
    initial: Initial,
    /// When the last publish arrived.
    last_publish: Option<Instant>,
}

impl State {
    fn settled(&self) -> bool {
        self.pending.is_empty() && self.progress.is_empty() && !self.starting && self.initial_done()
    }

    fn initial_done(&self) -> bool {
        match self.initial {
            Initial::Done => true,
            Initial::Waiting { since } => since.elapsed() >= INITIAL_LIMIT,
            Initial::Publishing { since, last } => {
                last.elapsed() >= INITIAL_QUIET || since.elapsed() >= INITIAL_LIMIT
            }
        }
    }
}

/// The diagnostics store of one server, shared by its connection (writer)
/// and the port (readers).
#[derive(Debug)]
pub(crate) struct Store {
    state: watch::Sender<State>,
    /// The `source` of diagnostics that name none.
    name: String,
    wait: Duration,
}

impl Store {
    pub(crate) fn new(name: &str, wait: Duration) -> Self {
        Self {
            state: watch::Sender::new(State::default()),
            name: name.to_owned(),
            wait,
        }
    }

    /// The server is starting (`true`) or stopped starting.
    pub(crate) fn starting(&self, on: bool) {
        self.state
            .send_if_modified(|s| std::mem::replace(&mut s.starting, on) != on);
    }

    /// The server is initialized and analyzes the whole workspace on its
    /// own: queries wait for that first analysis too.
    pub(crate) fn first_analysis(&self) {
        self.state.send_modify(|s| {
            s.initial = Initial::Waiting {
                since: Instant::now(),
            };
        });
    }

    /// A change of `path` on disk was seen: queries wait for its fresh
    /// diagnostics from now on.
    pub(crate) fn changed(&self, path: &Arc<Path>) {
        self.state.send_modify(|s| {
            s.pending.entry(Arc::clone(path)).or_default().unsent = true;
        });
    }

    /// The change reached the server as `version`.
    pub(crate) fn sent(&self, path: &Arc<Path>, version: i32) {
        self.state.send_modify(|s| {
            s.pending.insert(
                Arc::clone(path),
                Awaited {
                    sent: Some(version),
                    unsent: false,
                },
            );
        });
    }

    /// A question opened `path` on the server as version 0: queries wait
    /// for its diagnostics too, unless a version of the host's is awaited.
    pub(crate) fn opened_for_question(&self, path: &Arc<Path>) {
        self.state.send_modify(|s| {
            s.pending
                .entry(Arc::clone(path))
                .or_default()
                .sent
                .get_or_insert(0);
        });
    }

    /// Nothing was sent for the change of `path` after all (its text is
    /// what was sent before, or it could not be read): stop waiting for it,
    /// though not for a version sent before.
    pub(crate) fn not_sent(&self, path: &Path) {
        self.state.send_if_modified(|s| {
            let Some(awaited) = s.pending.get_mut(path) else {
                return false;
            };
            awaited.unsent = false;
            if awaited.sent.is_none() {
                s.pending.remove(path);
            }
            true
        });
    }

    /// The version sent for `path` will get no diagnostics (its pull
    /// failed): stop waiting for it.
    pub(crate) fn unanswered(&self, path: &Path) {
        self.state.send_if_modified(|s| {
            let Some(awaited) = s.pending.get_mut(path) else {
                return false;
            };
            awaited.sent = None;
            if !awaited.unsent {
                s.pending.remove(path);
            }
            true
        });
    }

    /// The server published `diagnostics` for `path` (for document
    /// `version`, when it says).
    pub(crate) fn publish(
        &self,
        path: Arc<Path>,
        version: Option<i32>,
        diagnostics: Vec<Diagnostic>,
    ) {
        let diagnostics: Arc<[Diagnostic]> = diagnostics
            .into_iter()
            .map(|mut d| {
                if d.source.is_none() {
                    d.source = Some(self.name.clone());
                }
                d
            })
            .collect();
        let now = Instant::now();
        self.state.send_modify(|s| {
            s.last_publish = Some(now);
            // The first analysis is over once its burst has paused: later
            // publishes answer edits and must not restart the pause.
            s.initial = match s.initial {
                _ if s.initial_done() => Initial::Done,
                Initial::Waiting { since } | Initial::Publishing { since, .. } => {
                    Initial::Publishing { since, last: now }
                }
                Initial::Done => Initial::Done,
            };
            if let Some(awaited) = s.pending.get_mut(&path)
                && let Some(sent) = awaited.sent
                && version.is_none_or(|v| v >= sent)
            {
                awaited.sent = None;
                if !awaited.unsent {
                    s.pending.remove(&path);
                }
            }
            let old = s.files.get(&path);
            let same = match old {
                Some(old) => **old == *diagnostics,
                None => diagnostics.is_empty(),
            };
            if !same {
                let files = Arc::make_mut(&mut s.files);
                if diagnostics.is_empty() {
                    files.remove(&path);
                } else {
                    files.insert(path, diagnostics);
                }
                s.generation += 1;
            }
        });
    }

    /// Work-done progress `token` began or reported (`Some(line)`) or ended.
    /// When the last one ends, the changes the server was sent count as
    /// seen: it is done working.
    pub(crate) fn progress(&self, token: String, line: Option<String>) {
        self.state.send_modify(|s| {
            match line {
                Some(line) => {
                    s.progress.insert(token, line);
                }
                None => {
                    s.progress.remove(&token);
                }
            }
            if s.progress.is_empty() {
                s.pending.retain(|_, awaited| {
                    awaited.sent = None;
                    awaited.unsent
                });
                s.initial = Initial::Done;
            }
        });
    }

    /// The progress line: every running piece of work, `None` when idle.
    pub(crate) fn progress_line(&self) -> Option<String> {
        let state = self.state.borrow();
        (!state.progress.is_empty()).then(|| {
            let lines: Vec<&str> = state.progress.values().map(String::as_str).collect();
            format!("{}: {}", self.name, lines.join(", "))
        })
    }

    /// The server is gone: its diagnostics go with it (never served stale as
    /// fresh), and nothing is waited for until it is back.
    pub(crate) fn clear(&self) {
        self.state.send_modify(|s| {
            if !s.files.is_empty() {
                s.files = Arc::default();
                s.generation += 1;
            }
            s.pending.clear();
            s.progress.clear();
            s.starting = false;
            s.initial = Initial::Done;
        });
    }

    /// What `path` has now, as a list to publish again.
    pub(crate) fn for_path(&self, path: &Path) -> Vec<Diagnostic> {
        self.state
            .borrow()
            .files
            .get(path)
            .map(|list| list.to_vec())
            .unwrap_or_default()
    }

    /// When the server's last publish (or pull answer) arrived.
    pub(crate) fn last_publish(&self) -> Option<Instant> {
        self.state.borrow().last_publish
    }

    /// Follows the state.
    pub(crate) fn subscribe(&self) -> watch::Receiver<State> {
        self.state.subscribe()
    }
}

impl DiagnosticsQuery for Store {
    fn all(&self) -> Vec<FileDiagnostics> {
        let files = Arc::clone(&self.state.borrow().files);
        FileDiagnostics::list(&files)
    }

    fn for_file(&self, path: &Path) -> Option<Arc<[Diagnostic]>> {
        self.state.borrow().files.get(path).cloned()
    }

    fn generation(&self) -> u64 {
        self.state.borrow().generation
    }

    fn settle(&self) -> Option<SettleFuture> {
        if self.state.borrow().settled() {
            return None;
        }
        let mut state = self.state.subscribe();
        let deadline = tokio::time::Instant::now() + self.wait;
        let name = self.name.clone();
        Some(Box::pin(async move {
            loop {
                let (settled, timed) = {
                    let now = state.borrow_and_update();
                    (now.settled(), !now.initial_done())
                };
                if settled {
                    return;
                }
                // During the first analysis, time alone can settle it.
                let wake = if timed {
                    deadline.min(tokio::time::Instant::now() + INITIAL_TICK)
                } else {
                    deadline
                };
                let changed = tokio::time::timeout_at(wake, state.changed()).await;
                if matches!(changed, Ok(Err(_))) || tokio::time::Instant::now() >= deadline {
                    tracing::debug!(server = %name, "still working; answering with what it published");
                    return;
                }
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn diagnostic(message: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(0, 0), Position::new(0, 1)),
            message: message.to_owned(),
            ..Diagnostic::default()
        }
    }

    fn path(p: &str) -> Arc<Path> {
        Arc::from(Path::new(p))
    }

    #[tokio::test]
    async fn a_change_is_waited_for_until_its_version_is_published() {
        let store = Store::new("clangd", Duration::from_secs(5));
        assert!(store.settle().is_none());
        let a = path("/w/a.c");
        store.changed(&a);
        let settle = store.settle().expect("a change is pending");
        store.sent(&a, 3);
        store.publish(Arc::clone(&a), Some(2), vec![diagnostic("old")]);
        assert!(store.settle().is_some(), "version 2 is stale");
        let generation = store.generation();
        store.publish(Arc::clone(&a), Some(3), vec![diagnostic("new")]);
        tokio::time::timeout(Duration::from_secs(1), settle)
            .await
            .unwrap();
        assert!(store.settle().is_none());
        assert!(store.generation() > generation);
        let list = store.for_file(&a).unwrap();
        assert_eq!(list[0].message, "new");
        assert_eq!(list[0].source.as_deref(), Some("clangd"), "tagged");
        // An empty publish removes the file.
        store.publish(Arc::clone(&a), None, Vec::new());
        assert!(store.all().is_empty());
    }

    #[test]
    fn a_document_a_question_opened_is_waited_for_without_hiding_a_change() {
        let store = Store::new("clangd", Duration::from_secs(5));
        let a = path("/w/a.c");
        store.opened_for_question(&a);
        assert!(store.settle().is_some(), "its first publish is awaited");
        store.publish(Arc::clone(&a), Some(0), vec![diagnostic("e")]);
        assert!(store.settle().is_none());
        // Changed on disk, not sent yet: the change is still awaited.
        store.changed(&a);
        store.opened_for_question(&a);
        store.publish(Arc::clone(&a), Some(0), Vec::new());
        assert!(store.settle().is_some(), "the change is awaited");
        store.not_sent(&a);
        assert!(store.settle().is_none());
        // Closed before any publish: no longer awaited.
        store.opened_for_question(&a);
        store.unanswered(&a);
        assert!(store.settle().is_none());
    }

    #[test]
    fn a_second_event_for_the_text_already_sent_keeps_the_wait() {
        let store = Store::new("clangd", Duration::from_secs(5));
        let a = path("/w/a.c");
        // A save seen as two events: the first sends the new text...
        store.changed(&a);
        store.sent(&a, 2);
        // ...the second finds it sent already.
        store.changed(&a);
        store.not_sent(&a);
        assert!(store.settle().is_some(), "version 2 is still awaited");
        store.publish(Arc::clone(&a), Some(2), Vec::new());
        assert!(store.settle().is_none());

        // A newer change seen before an older version's publish: still
        // waited for after that publish.
        store.changed(&a);
        store.sent(&a, 3);
        store.changed(&a);
        store.publish(Arc::clone(&a), Some(3), Vec::new());
        assert!(store.settle().is_some(), "the newer change is not sent yet");
        store.sent(&a, 4);
        // A failed pull ends the wait for its version.
        store.unanswered(&a);
        assert!(store.settle().is_none());
    }

    #[tokio::test]
    async fn the_end_of_progress_settles_sent_changes_and_clear_drops_everything() {
        let store = Store::new("pyright", Duration::from_secs(5));
        let a = path("/w/a.py");
        store.publish(Arc::clone(&a), None, vec![diagnostic("x")]);
        store.changed(&a);
        store.sent(&a, 2);
        store.progress("t".into(), Some("Analyzing 3/10".into()));
        assert_eq!(store.progress_line().unwrap(), "pyright: Analyzing 3/10");
        store.progress("t".into(), None);
        assert!(store.settle().is_none(), "done working");
        store.clear();
        assert!(store.all().is_empty());
        assert!(store.settle().is_none());
    }

    #[tokio::test]
    async fn the_first_analysis_ends_when_publishes_pause() {
        let store = Store::new("pyright", Duration::from_secs(5));
        store.first_analysis();
        let settle = store.settle().expect("the first analysis runs");
        let start = std::time::Instant::now();
        store.publish(path("/w/a.py"), None, vec![diagnostic("e")]);
        store.publish(path("/w/b.py"), None, Vec::new());
        tokio::time::timeout(Duration::from_secs(2), settle)
            .await
            .unwrap();
        assert!(start.elapsed() >= INITIAL_QUIET);
        assert!(store.settle().is_none());
        // Over, it never comes back: an edit's publish settles at once.
        let a = path("/w/a.py");
        store.changed(&a);
        store.sent(&a, 2);
        store.publish(Arc::clone(&a), Some(2), Vec::new());
        assert!(store.settle().is_none(), "no new quiet period");
        // Or when its progress ends.
        store.first_analysis();
        store.progress("t".into(), Some(String::new()));
        store.progress("t".into(), None);
        assert!(store.settle().is_none());
    }

    #[tokio::test]
    async fn the_wait_is_bounded() {
        let store = Store::new("s", Duration::from_millis(100));
        store.starting(true);
        let start = std::time::Instant::now();
        store.settle().unwrap().await;
        assert!(start.elapsed() >= Duration::from_millis(90));
    }
}
