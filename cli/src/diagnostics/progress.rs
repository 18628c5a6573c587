//! [`ProgressBoard`]: what the diagnostics sources are busy with (a cargo
//! check's units, a language server's `$/progress`), for the log and for a
//! terminal's progress line.
//!
//! Work that ends within [`QUIET`] is never reported: a person only wants
//! to hear about the check that keeps them waiting.

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ide_mcp_lsp::sync::lock;
use tokio::sync::watch;

/// Work shorter than this is not reported; longer work is logged at info
/// level at most once per this interval.
pub const QUIET: Duration = Duration::from_secs(1);

/// One piece of work in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskState {
    /// What runs, e.g. `cargo check /ws` or `pyright`.
    pub title: String,
    /// Units done, when counted.
    pub done: Option<u64>,
    /// Units expected; `estimated` when it is a guess.
    pub total: Option<u64>,
    /// Whether `total` is a guess (the first cargo check of a workspace).
    pub estimated: bool,
    /// The latest detail (`checking foo`, `waiting for the build lock`).
    pub message: Option<String>,
    /// When the work started.
    pub started: Instant,
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.title)?;
        match (self.done, self.total) {
            (Some(done), Some(total)) => {
                let approx = if self.estimated { "~" } else { "" };
                write!(f, ": {done}/{approx}{}", total.max(done))?;
            }
            (Some(done), None) => write!(f, ": {done}")?,
            _ => {}
        }
        if let Some(message) = &self.message {
            write!(f, " ({message})")?;
        }
        Ok(())
    }
}

/// The work in progress of every source, shared; cheap to clone.
#[derive(Clone, Debug)]
pub struct ProgressBoard {
    tasks: Arc<watch::Sender<Vec<(u64, TaskState)>>>,
    next_id: Arc<AtomicU64>,
    log: Arc<std::sync::atomic::AtomicBool>,
}

impl Default for ProgressBoard {
    fn default() -> Self {
        Self {
            tasks: Arc::new(watch::Sender::new(Vec::new())),
            next_id: Arc::new(AtomicU64::new(0)),
            log: Arc::new(std::sync::atomic::AtomicBool::new(true)),
        }
    }
}

impl ProgressBoard {
    /// An empty board whose long tasks are logged.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a task; it leaves the board when the handle is dropped.
    pub fn begin(&self, title: impl Into<String>) -> ProgressTask {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        self.tasks.send_modify(|tasks| {
            tasks.push((
                id,
                TaskState {
                    title: title.into(),
                    done: None,
                    total: None,
                    estimated: false,
                    message: None,
                    started: now,
                },
            ));
        });
        ProgressTask {
            board: self.clone(),
            id,
            last_log: Mutex::new(now),
        }
    }

    /// Stops (or resumes) logging long tasks: a terminal that shows the
    /// progress line itself does not want the same news twice.
    pub fn set_logging(&self, on: bool) {
        self.log.store(on, Ordering::Relaxed);
    }

    /// Follows the board: the receiver sees every change.
    pub fn subscribe(&self) -> watch::Receiver<Vec<(u64, TaskState)>> {
        self.tasks.subscribe()
    }

    /// One line for a terminal: every task running longer than [`QUIET`],
    /// `None` when there is none.
    pub fn line(tasks: &[(u64, TaskState)]) -> Option<String> {
        let mut line = String::new();
        for (_, task) in tasks.iter().filter(|(_, t)| t.started.elapsed() >= QUIET) {
            if !line.is_empty() {
                line.push_str(" · ");
            }
            let _ = write!(line, "{task}");
        }
        (!line.is_empty()).then_some(line)
    }
}

/// A task on a [`ProgressBoard`]; dropping it ends the task.
#[derive(Debug)]
pub struct ProgressTask {
    board: ProgressBoard,
    id: u64,
    last_log: Mutex<Instant>,
}

impl ProgressTask {
    /// Updates the counts (`None` keeps the previous value).
    pub fn count(&self, done: Option<u64>, total: Option<u64>, estimated: bool) {
        self.update(|task| {
            task.done = done.or(task.done);
            if total.is_some() {
                task.total = total;
                task.estimated = estimated;
            }
        });
    }

    /// Updates the detail.
    pub fn message(&self, message: impl Into<String>) {
        let message = message.into();
        self.update(|task| task.message = Some(message));
    }

    fn update(&self, change: impl FnOnce(&mut TaskState)) {
        let mut snapshot = None;
        self.board.tasks.send_modify(|tasks| {
            if let Some((_, task)) = tasks.iter_mut().find(|(id, _)| *id == self.id) {
                change(task);
                snapshot = Some(task.clone());
            }
        });
        let Some(task) = snapshot else { return };
        if !self.board.log.load(Ordering::Relaxed) || task.started.elapsed() < QUIET {
            return;
        }
        let mut last = lock(&self.last_log);
        if last.elapsed() >= QUIET {
            *last = Instant::now();
            tracing::info!("{task}");
        }
    }
}

impl Drop for ProgressTask {
    fn drop(&mut self) {
        self.board
            .tasks
            .send_modify(|tasks| tasks.retain(|(id, _)| *id != self.id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_show_counts_and_leave_when_dropped() {
        let board = ProgressBoard::new();
        let cargo = board.begin("cargo check /ws");
        cargo.count(Some(3), Some(40), true);
        cargo.message("checking foo");
        let lsp = board.begin("pyright");
        lsp.count(Some(7), None, false);
        let tasks = board.subscribe().borrow().clone();
        assert_eq!(
            tasks[0].1.to_string(),
            "cargo check /ws: 3/~40 (checking foo)"
        );
        assert_eq!(tasks[1].1.to_string(), "pyright: 7");
        assert_eq!(
            ProgressBoard::line(&tasks),
            None,
            "both are younger than 1 s"
        );
        let mut old = tasks.clone();
        for (_, task) in &mut old {
            task.started -= QUIET;
        }
        assert_eq!(
            ProgressBoard::line(&old).unwrap(),
            "cargo check /ws: 3/~40 (checking foo) · pyright: 7"
        );
        // An exact total never shows below the count.
        cargo.count(Some(50), Some(40), false);
        assert_eq!(
            board.subscribe().borrow()[0].1.to_string(),
            "cargo check /ws: 50/50 (checking foo)"
        );
        drop(cargo);
        drop(lsp);
        assert!(board.subscribe().borrow().is_empty());
    }
}
