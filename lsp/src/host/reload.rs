//! Writes to open files reach their buffers, by content: when a file that
//! is open changes on disk and the buffer's text is exactly the file's
//! previous disk text, the buffer is safe to reload, whatever the editor's
//! modified flag says (Neovim flags a buffer modified after an applied
//! `workspace/applyEdit`, and every editor answers one with a `didChange`
//! of its own). A buffer holding anything the user typed never is.
//!
//! How the new text reaches the buffer depends on the editor
//! ([`OwnReload`]): an editor that reloads by itself (Neovim's `autoread`,
//! Kakoune's `autoreload`, Emacs's `auto-revert-mode`) gets no second
//! mechanism; the others get the minimal edit (`workspace/applyEdit`, the same line diff
//! as the review's). Either way the write's changes are then marked in the
//! buffer ([`Reviews::wrote`]) once it shows them, to keep or to revert.
//!
//! The open files are polled (their size and modification time, every
//! [`POLL`]) rather than watched: they are few, a poll costs one `stat`
//! each, and it follows files replaced by a rename (how the CLI and most
//! editors write) without a watch per directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use ide_mcp_tools::EditorAccess as _;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::apply::{NotApplied, apply, buffer};
use super::review::Reviews;
use crate::workspace::{EditorRequest, LspWorkspace, OwnReload};

/// How often the open files are looked at.
pub const POLL: Duration = Duration::from_millis(250);

/// What a file was on disk when last seen.
#[derive(Debug)]
struct Seen {
    len: u64,
    modified: Option<SystemTime>,
    /// Its text (`None`: not text).
    text: Option<String>,
    /// How many saves the editor had made of it then.
    saves: u64,
    /// The round from which it has not been open (Emacs reverts a buffer
    /// by closing and opening it again: what it was is kept a while).
    closed_since: Option<u64>,
}

/// How many rounds what a closed file was on disk is kept.
const KEPT_CLOSED: u64 = 8;

/// The running reloader.
#[derive(Debug)]
pub struct Reloader {
    task: JoinHandle<()>,
    rounds: watch::Receiver<u64>,
}

impl Reloader {
    /// How many times the open files have been looked at, as it grows: a
    /// write made after the count grew past an open is seen as a write.
    pub fn rounds(&self) -> watch::Receiver<u64> {
        self.rounds.clone()
    }

    /// Stops it.
    pub fn abort(&self) {
        self.task.abort();
    }
}

/// Shows writes to open files in their clean buffers (`edit`: with edits
/// of ours where the editor does not reload by itself; else only where it
/// does), and has `reviews` mark their changes, until aborted.
pub fn spawn(ws: Arc<LspWorkspace>, reviews: Reviews, edit: bool) -> Reloader {
    let (counter, rounds) = watch::channel(0);
    let task = tokio::spawn(async move {
        let mut seen: HashMap<PathBuf, Seen> = HashMap::new();
        let mut settling: HashMap<PathBuf, (u64, Option<SystemTime>)> = HashMap::new();
        let mut tick = tokio::time::interval(POLL);
        let mut round = 0;
        loop {
            tick.tick().await;
            round += 1;
            counter.send_replace(round);
            let open: Vec<Arc<Path>> = ws
                .open_buffers()
                .into_iter()
                .filter_map(|buffer| buffer.path)
                .collect();
            for (path, s) in &mut seen {
                let is_open = open.iter().any(|p| **p == **path);
                s.closed_since = if is_open {
                    None
                } else {
                    s.closed_since.or(Some(round))
                };
            }
            seen.retain(|_, s| s.closed_since.is_none_or(|at| round - at < KEPT_CLOSED));
            settling.retain(|path, _| open.iter().any(|p| **p == **path));
            // The markers of files closed for a while go with them.
            let kept: Vec<&Path> = seen.keys().map(PathBuf::as_path).collect();
            reviews.forget_closed(&kept);
            // A file the user's deny rules hide is never read.
            let rules = ws.deny_rules();
            for path in open.into_iter().filter(|path| !rules.hides(path)) {
                let Ok(meta) = std::fs::metadata(&path) else {
                    continue;
                };
                let stat = (meta.len(), meta.modified().ok());
                let before = match seen.get(&*path) {
                    Some(s) if (s.len, s.modified) == stat => continue,
                    // Changed: taken once it has stayed the same for a
                    // round, so that a file being written (truncated, then
                    // filled) is read whole.
                    Some(_) if settling.insert(path.to_path_buf(), stat) != Some(stat) => continue,
                    Some(_) => seen.remove(&*path),
                    // First seen: what it is on disk now.
                    None => None,
                };
                settling.remove(&*path);
                if before.is_none() {
                    tracing::debug!(?path, "first look at an open file on disk");
                }
                let (len, modified) = stat;
                let now = Seen {
                    len,
                    modified,
                    text: std::fs::read_to_string(&path).ok(),
                    saves: ws.documents.saves_seen(&path),
                    closed_since: None,
                };
                if let (Some(before), Some(after)) = (before, &now.text) {
                    let write = Write {
                        path: &path,
                        before: before.text.clone(),
                        after: after.clone(),
                        saved: before.saves != now.saves,
                    };
                    if !changed(&ws, &reviews, write, edit) {
                        // Closed meanwhile (Emacs reverts a buffer by
                        // closing and opening it): looked at again.
                        seen.insert(path.to_path_buf(), before);
                        continue;
                    }
                }
                seen.insert(path.to_path_buf(), now);
            }
        }
    });
    Reloader { task, rounds }
}

/// A change of an open file on disk.
struct Write<'a> {
    path: &'a Path,
    /// The disk's text before (`None`: unknown, or not text).
    before: Option<String>,
    /// The disk's text now.
    after: String,
    /// Whether the editor saved the file since `before` was seen.
    saved: bool,
}

/// `write.path` changed on disk: shown in its buffer when the buffer held
/// the disk's previous text; `false` when the document is not open (any
/// more).
fn changed(ws: &Arc<LspWorkspace>, reviews: &Reviews, write: Write<'_>, edit: bool) -> bool {
    let path = write.path;
    let Some((rope, version)) = buffer(ws, path) else {
        return false;
    };
    let text = rope.to_string();
    let own = own_reload(ws, path);
    // When the editor saved since the disk was last seen, the file held
    // what it saved in between: that is what a write changed (a save, a
    // close and an open, then Claude's write, can all come between two
    // looks at the disk).
    let saved = write.saved.then(|| ws.documents.saved_text(path)).flatten();
    let before = saved.clone().or(write.before);
    if text == write.after {
        // The editor's own save, or its own reload of the write.
        let own_save = saved.as_deref() == Some(write.after.as_str());
        if let (false, Some(before), OwnReload::Always) = (own_save, before, own) {
            tracing::info!(?path, "changed on disk; the editor reloaded it by itself");
            ws.documents.compare_with_disk(path);
            reviews.wrote(path, before, write.after);
        }
        return true;
    }
    if before.as_deref() != Some(text.as_str()) {
        tracing::debug!(
            ?path,
            version,
            buffer = text.len(),
            before = before.as_ref().map(String::len),
            after = write.after.len(),
            "changed on disk, but the buffer holds unsaved work: left alone"
        );
        return true;
    }
    reviews.wrote(path, text, write.after.clone());
    match own {
        OwnReload::Always => {
            tracing::info!(?path, "changed on disk; the editor reloads it itself");
            ws.documents.compare_with_disk(path);
        }
        OwnReload::Never if edit => {
            let (ws, reviews, path) = (Arc::clone(ws), reviews.clone(), path.to_path_buf());
            tokio::spawn(async move {
                show(&ws, &reviews, &path, (&rope, version), &write.after).await;
            });
        }
        OwnReload::Never => {}
    }
    true
}

/// What the editor that would get the edit for `path` does by itself.
fn own_reload(ws: &LspWorkspace, path: &Path) -> OwnReload {
    ws.requests
        .destination(EditorRequest::ApplyEdit, &ws.openers(path))
        .map_or(OwnReload::Never, |to| to.can.own_reload)
}

/// Makes `path`'s buffer (`buffer`) show `disk`.
async fn show(
    ws: &LspWorkspace,
    reviews: &Reviews,
    path: &Path,
    buffer: (&ropey::Rope, i32),
    disk: &str,
) {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let label = format!("Claude Code: {name} changed on disk");
    match apply(ws, path, buffer, disk, &label).await {
        Ok(()) => tracing::info!(?path, "changed on disk; the editor's buffer shows it"),
        Err(NotApplied::NoEditor) => {
            tracing::debug!(
                ?path,
                "changed on disk; no editor that has it open applies edits"
            );
            reviews.forget_written(path);
        }
        Err(NotApplied::Refused(answer)) => {
            tracing::info!(?path, %answer, "changed on disk; the editor did not apply it");
            reviews.forget_written(path);
        }
    }
}
