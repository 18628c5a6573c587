//! The reviews of Claude's proposed edits: the host's [`DiffReview`] port.
//!
//! `openDiff` computes the line hunks between the document as the editor
//! holds it (unsaved edits included; the file on disk when no editor has it
//! open) and the proposal, and publishes them to every proxy as an
//! [`Overlay`]; the proxies whose editors have the file open show them.
//! The user's decisions come back as the review's commands, which the
//! host's observers see as [`WorkspaceEvent::Review`]; when every hunk is
//! decided the call is answered with the old text plus the accepted hunks
//! (or rejected when none was accepted). The host never writes the file:
//! the CLI does, with the text the answer carries. An agent whose protocol
//! takes a proposal whole or not at all (Copilot) gets the whole one
//! saved; a part accepted goes into the editor's buffer (`in_buffer`).
//!
//! A document changing under a pending review has its hunks computed again
//! against the new text, keeping the decisions of the hunks that are still
//! the same change. `close_tab` and `closeAllDiffTabs` withdraw reviews
//! (their calls answer rejected); a call dropped (cancelled) withdraws its
//! review; editors going away answer an error, never a rejection the user
//! did not make.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ide_mcp_tools::review::{Hunk, compose, hunks};
use ide_mcp_tools::{
    Agent, BufferStore as _, DiffFuture, DiffOutcome, DiffReview, OpenDiffRequest,
};
use serde_json::json;
use tokio::sync::{broadcast, oneshot, watch};
use tokio::task::JoinHandle;

use crate::observer::Decision;
use crate::observer::overlay::{HunkView, Overlay, ReviewView, ViewKind};
use crate::sync::lock;
use crate::workspace::{EditorRequest, LspWorkspace, WorkspaceEvent};
use ide_mcp_tools::uri::encoded_file_uri;
use written::{Seen, Written};

mod after_write;
mod in_buffer;
mod written;

/// How long the typing pauses before a document's review is computed again.
pub const EDIT_QUIET: std::time::Duration = std::time::Duration::from_millis(100);

/// The message of a call whose editors went away before the user decided.
pub const EDITOR_GONE: &str = "the editor showing the proposed edit went away before it was reviewed; review it in the terminal";

/// The reviews pending in one host; cheap to clone.
#[derive(Clone, Debug)]
pub struct Reviews {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    ws: Arc<LspWorkspace>,
    state: Mutex<State>,
    overlay: watch::Sender<Arc<Overlay>>,
    /// Whether writes made without a review are marked.
    marking: std::sync::atomic::AtomicBool,
}

#[derive(Debug, Default)]
struct State {
    next: u64,
    pending: Vec<Pending>,
    /// Writes made without a review, marked in the buffers.
    written: Vec<Written>,
    /// The texts reviews were answered with, until the agent writes them:
    /// such a write gets no markers.
    reviewed: Vec<(PathBuf, String)>,
}

/// How many answered reviews' texts are remembered for their writes.
const REVIEWED_KEPT: usize = 16;

impl State {
    /// Ends the review at `at` with `outcome`; the text of a saved one is
    /// remembered for its write.
    fn finish(&mut self, at: usize, outcome: DiffOutcome) {
        let mut done = self.pending.remove(at);
        if let DiffOutcome::Saved(text) = &outcome {
            if self.reviewed.len() == REVIEWED_KEPT {
                self.reviewed.remove(0);
            }
            self.reviewed.push((done.path.clone(), text.clone()));
        }
        done.answer(Ok(outcome));
    }
}

#[derive(Debug)]
struct Pending {
    agent: Agent,
    diff: u64,
    rev: u64,
    path: PathBuf,
    tab_name: String,
    proposal: String,
    /// The proposal as it came, for an agent that takes it whole or not at
    /// all ([`Agent::takes_part`]): the one text it can write.
    whole: Option<String>,
    /// The text the hunks were computed against.
    base: String,
    hunks: Vec<Hunk>,
    decided: Vec<Option<bool>>,
    /// Whether an editor has had the document open since the review began.
    shown: bool,
    answer: Option<oneshot::Sender<Result<DiffOutcome, String>>>,
}

impl Pending {
    fn answer(&mut self, outcome: Result<DiffOutcome, String>) {
        if let Some(answer) = self.answer.take() {
            let _ = answer.send(outcome);
        }
    }

    /// The answer once every hunk is decided.
    fn outcome(&self) -> Option<DiffOutcome> {
        let decided: Option<Vec<bool>> = self.decided.iter().copied().collect();
        let accepted = decided?;
        Some(if accepted.iter().any(|&a| a) {
            DiffOutcome::Saved(compose(&self.base, &self.hunks, &accepted))
        } else {
            DiffOutcome::Rejected
        })
    }

    fn view(&self) -> ReviewView {
        ReviewView {
            kind: ViewKind::Review,
            agent: self.agent,
            path: self.path.clone(),
            diff: self.diff,
            rev: self.rev,
            hunks: self
                .hunks
                .iter()
                .enumerate()
                .filter(|(i, _)| self.decided[*i].is_none())
                .map(|(index, hunk)| HunkView {
                    index,
                    start_line: hunk.old_start,
                    old_len: hunk.old_len,
                    message: hunk.message_of(self.agent.name()),
                })
                .collect(),
        }
    }
}

impl Reviews {
    /// The reviews of `ws`'s documents; [`spawn`](Self::spawn) runs them.
    pub fn new(ws: Arc<LspWorkspace>) -> Self {
        Self {
            inner: Arc::new(Inner {
                ws,
                state: Mutex::default(),
                overlay: watch::Sender::new(Arc::default()),
                marking: std::sync::atomic::AtomicBool::new(true),
            }),
        }
    }

    /// What every proxy shows, as it changes.
    pub fn overlay(&self) -> watch::Receiver<Arc<Overlay>> {
        self.inner.overlay.subscribe()
    }

    /// Takes the user's decisions and the documents' edits from the
    /// workspace's events until the task is aborted.
    pub fn spawn(&self) -> JoinHandle<()> {
        let this = self.clone();
        let mut events = self.inner.ws.subscribe();
        tokio::spawn(async move {
            // Edits are taken once the typing pauses (EDIT_QUIET): a burst
            // of keystrokes costs one computation and one publication, not
            // one per keystroke on the keystroke's way.
            let mut edited: Vec<Arc<Path>> = Vec::new();
            let quiet = tokio::time::sleep(EDIT_QUIET);
            tokio::pin!(quiet);
            loop {
                tokio::select! {
                    event = events.recv() => match event {
                        Ok(WorkspaceEvent::Review(decision)) => {
                            // Decided on the text as it is now.
                            for path in edited.drain(..) {
                                this.edited(&path);
                            }
                            this.decide(decision);
                        }
                        Ok(WorkspaceEvent::Edited { path }) => {
                            if !edited.contains(&path) {
                                edited.push(path);
                            }
                            quiet.as_mut().reset(tokio::time::Instant::now() + EDIT_QUIET);
                        }
                        Ok(WorkspaceEvent::Saved { path }) => this.saved(&path),
                        Ok(_) => {}
                        // Missed edits: every review is computed again.
                        Err(broadcast::error::RecvError::Lagged(_)) => this.edited_all(),
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                    () = &mut quiet, if !edited.is_empty() => {
                        for path in edited.drain(..) {
                            this.edited(&path);
                        }
                    }
                }
            }
        })
    }

    /// The document's text as the editor holds it, else the file's, else
    /// none (a new file).
    fn current_text(&self, path: &Path) -> String {
        match self.inner.ws.handle_for_path(path) {
            Some(handle) => handle.snapshot().text.to_string(),
            None => std::fs::read_to_string(path).unwrap_or_default(),
        }
    }

    /// Tells the proxies, when what they show changed.
    fn publish(&self, state: &State) {
        let overlay = Overlay {
            reviews: state
                .pending
                .iter()
                .map(Pending::view)
                .chain(state.written.iter().filter_map(Written::view))
                .collect(),
        };
        self.inner.overlay.send_if_modified(|current| {
            let changed = **current != overlay;
            if changed {
                *current = Arc::new(overlay);
            }
            changed
        });
    }

    fn decide(&self, decision: Decision) {
        let mut state = lock(&self.inner.state);
        let (diff, chosen) = match decision {
            Decision::One {
                diff,
                rev,
                index,
                accept,
            } => (diff, Some((rev, index, accept))),
            Decision::All { diff, .. } => (diff, None),
        };
        let Some(at) = state.pending.iter().position(|p| p.diff == diff) else {
            drop(state);
            self.decide_written(decision);
            return;
        };
        let pending = &mut state.pending[at];
        match (chosen, decision) {
            (Some((rev, index, accept)), _) => {
                if rev != pending.rev || index >= pending.decided.len() {
                    tracing::debug!(
                        diff,
                        rev,
                        index,
                        "a decision on hunks since recomputed; ignored"
                    );
                    return;
                }
                pending.decided[index] = Some(accept);
            }
            (None, Decision::All { accept, .. }) => {
                for decided in pending.decided.iter_mut().filter(|d| d.is_none()) {
                    *decided = Some(accept);
                }
            }
            (None, Decision::One { .. }) => return,
        }
        if let Some(outcome) = pending.outcome() {
            self.end_review(&mut state, at, outcome);
        }
        self.publish(&state);
    }

    fn edited(&self, path: &Path) {
        let mut state = lock(&self.inner.state);
        let reviewing = state.pending.iter().any(|p| p.path == path);
        let written = state.written.iter().any(|w| w.path == path);
        if !reviewing && !written {
            return;
        }
        let text = self.current_text(path);
        if let Some(at) = state.written.iter().position(|w| w.path == path) {
            match state.written[at].seen(&text) {
                Seen::Landed | Seen::OnItsWay => {}
                Seen::Typed => {
                    tracing::debug!(?path, "typed in: the write's markers go");
                    state.written.remove(at);
                }
            }
        }
        if let Some(at) = state.pending.iter().position(|p| p.path == path) {
            let pending = &mut state.pending[at];
            pending.shown = true;
            if recompute(pending, text) {
                let outcome = pending.outcome().unwrap_or(DiffOutcome::Rejected);
                self.end_review(&mut state, at, outcome);
            }
        }
        self.publish(&state);
    }

    fn edited_all(&self) {
        let paths: Vec<PathBuf> = {
            let state = lock(&self.inner.state);
            let pending = state.pending.iter().map(|p| p.path.clone());
            pending
                .chain(state.written.iter().map(|w| w.path.clone()))
                .collect()
        };
        for path in paths {
            self.edited(&path);
        }
    }

    /// An editor detached: the reviews it was showing that no editor has
    /// open any more are answered with an error; with no editor left at
    /// all, every review is.
    pub fn editors_changed(&self, any_left: bool) {
        let mut state = lock(&self.inner.state);
        let ws = &self.inner.ws;
        let before = state.pending.len();
        state.pending.retain_mut(|pending| {
            let open = ws.handle_for_path(&pending.path).is_some();
            pending.shown |= open;
            let gone = !any_left || (pending.shown && !open);
            if gone {
                pending.answer(Err(EDITOR_GONE.to_owned()));
            }
            !gone
        });
        if state.pending.len() != before {
            self.publish(&state);
        }
    }

    /// Withdraws the reviews `which` picks: their calls answer rejected.
    fn withdraw(&self, which: impl Fn(&Pending) -> bool) -> usize {
        let mut state = lock(&self.inner.state);
        let mut n = 0;
        state.pending.retain_mut(|pending| {
            let withdrawn = which(pending);
            if withdrawn {
                pending.answer(Ok(DiffOutcome::Rejected));
                n += 1;
            }
            !withdrawn
        });
        if n > 0 {
            self.publish(&state);
        }
        n
    }

    /// Asks an editor to show the file when none has it open, and asks
    /// the user once, where the editor can, what to do with the proposal.
    fn present(&self, agent: Agent, diff: u64, path: &Path, n: usize) {
        let ws = Arc::clone(&self.inner.ws);
        let this = self.clone();
        let path = path.to_path_buf();
        tokio::spawn(async move {
            let uri = encoded_file_uri(&path);
            let openers = ws.openers(&path);
            if openers.is_empty() {
                let shown = ws
                    .request(
                        EditorRequest::ShowDocument,
                        &[],
                        json!({"uri": uri, "takeFocus": true}),
                    )
                    .await;
                tracing::debug!(?shown, "asked an editor to show the reviewed file");
            }
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |name| name.to_string_lossy().into_owned(),
            );
            let changes = if n == 1 {
                "1 change".to_owned()
            } else {
                format!("{n} changes")
            };
            let actions = [ACCEPT_ALL, REJECT_ALL, REVIEW];
            let params = json!({
                "type": 3,
                "message": format!("{} proposes {changes} to {name}", agent.source()),
                "actions": actions.map(|title| json!({"title": title})),
            });
            let answer = ws
                .request(EditorRequest::ShowMessage, &ws.openers(&path), params)
                .await;
            let accept = match answer.as_ref().ok().and_then(|a| a["title"].as_str()) {
                Some(ACCEPT_ALL) => true,
                Some(REJECT_ALL) => false,
                _ => return,
            };
            this.decide(Decision::All { diff, accept });
        });
    }
}

/// The prompt's actions.
const ACCEPT_ALL: &str = "Accept all";
const REJECT_ALL: &str = "Reject all";
const REVIEW: &str = "Review";

/// Computes `pending`'s hunks again against `text` (the user edited the
/// document), keeping the decision of every hunk that is still the same
/// change; returns whether the review is over (nothing left to review, or
/// everything decided).
fn recompute(pending: &mut Pending, text: String) -> bool {
    if text == pending.base {
        return false;
    }
    let proposal = rebase(&pending.base, &text, &pending.proposal);
    let fresh = hunks(&text, &proposal);
    if fresh == pending.hunks {
        // Typing elsewhere: the same hunks at the same lines, decisions
        // and revision kept (the editor's code actions stay valid).
        pending.base = text;
        pending.proposal = proposal;
        return false;
    }
    let decided = fresh
        .iter()
        .map(|hunk| {
            let lines = old_lines(&text, hunk);
            pending
                .hunks
                .iter()
                .zip(&pending.decided)
                .find(|(old, _)| {
                    old.new_text == hunk.new_text && old_lines(&pending.base, old) == lines
                })
                .and_then(|(_, decided)| *decided)
        })
        .collect();
    pending.base = text;
    pending.proposal = proposal;
    pending.hunks = fresh;
    pending.decided = decided;
    pending.rev += 1;
    pending.hunks.is_empty() || pending.decided.iter().all(Option::is_some)
}

/// The old lines `hunk` replaces in `base`.
fn old_lines(base: &str, hunk: &Hunk) -> String {
    base.split_inclusive('\n')
        .skip(hunk.old_start as usize)
        .take(hunk.old_len as usize)
        .collect()
}

/// Claude's proposal (made against `base`) carried over to `user` (what
/// the user made of `base` since): the user's changes where Claude changed
/// nothing, Claude's where the user changed nothing, and Claude's where
/// both changed the same lines (the hunk then shows Claude's version
/// against the user's, for the user to decide). So an edit of the user's
/// elsewhere is never offered back as a change to undo.
fn rebase(base: &str, user: &str, proposal: &str) -> String {
    let claude = hunks(base, proposal);
    let ours = hunks(base, user);
    let mut both: Vec<Hunk> = ours
        .into_iter()
        .filter(|u| !claude.iter().any(|c| overlaps(u, c)))
        .collect();
    both.extend(claude);
    both.sort_by_key(|h| (h.old_start, h.old_len));
    compose(base, &both, &vec![true; both.len()])
}

/// Whether two hunks of one base touch the same lines (two insertions at
/// one place, or an insertion inside a replaced range, count).
fn overlaps(a: &Hunk, b: &Hunk) -> bool {
    let (a0, a1) = (a.old_start, a.old_start + a.old_len);
    let (b0, b1) = (b.old_start, b.old_start + b.old_len);
    match (a.old_len, b.old_len) {
        (0, 0) => a0 == b0,
        (0, _) => b0 <= a0 && a0 < b1,
        (_, 0) => a0 <= b0 && b0 < a1,
        _ => a0 < b1 && b0 < a1,
    }
}

/// Withdraws its review when the call is dropped before an answer (the
/// MCP call was cancelled).
struct WithdrawOnDrop {
    reviews: Reviews,
    diff: u64,
    armed: bool,
}

impl Drop for WithdrawOnDrop {
    fn drop(&mut self) {
        if self.armed {
            let diff = self.diff;
            self.reviews.withdraw(|p| p.diff == diff);
        }
    }
}

impl DiffReview for Reviews {
    fn open_diff(&self, request: OpenDiffRequest) -> DiffFuture {
        let base = self.current_text(&request.path);
        let found = hunks(&base, &request.new_contents);
        if found.is_empty() {
            return Box::pin(std::future::ready(Ok(DiffOutcome::Unchanged)));
        }
        let (answer, answered) = oneshot::channel();
        let n = found.len();
        let diff = {
            let mut state = lock(&self.inner.state);
            state.next += 1;
            let diff = state.next;
            // One review per file: a second proposal replaces the first,
            // and the markers of a write before it go.
            if let Some(at) = state.pending.iter().position(|p| p.path == request.path) {
                let mut replaced = state.pending.remove(at);
                replaced.answer(Ok(DiffOutcome::Rejected));
            }
            state.written.retain(|w| w.path != request.path);
            let shown = self.inner.ws.handle_for_path(&request.path).is_some();
            state.pending.push(Pending {
                agent: request.agent,
                diff,
                rev: 0,
                path: request.path.clone(),
                tab_name: request.tab_name,
                whole: (!request.agent.takes_part()).then(|| request.new_contents.clone()),
                proposal: request.new_contents,
                base,
                decided: vec![None; n],
                hunks: found,
                shown,
                answer: Some(answer),
            });
            self.publish(&state);
            diff
        };
        self.present(request.agent, diff, &request.path, n);
        let guard = WithdrawOnDrop {
            reviews: self.clone(),
            diff,
            armed: true,
        };
        Box::pin(async move {
            // The whole guard lives in the future, not only its flag.
            let mut guard = guard;
            let outcome = answered.await;
            guard.armed = false;
            outcome.unwrap_or_else(|_| Err("the review ended without an answer".to_owned()))
        })
    }

    fn close_tab(&self, tab_name: &str) -> bool {
        self.withdraw(|p| p.tab_name == tab_name) > 0
    }

    fn close_all(&self) -> usize {
        self.withdraw(|_| true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_s_edits_elsewhere_are_kept_and_never_offered_back() {
        let base = "a\nb\nc\nd\n";
        let proposal = "a\nB\nc\nd\n";
        // The user changed line 4: kept, and only Claude's line 2 differs.
        let user = "a\nb\nc\nD\n";
        assert_eq!(rebase(base, user, proposal), "a\nB\nc\nD\n");
        // The user changed Claude's line too: Claude's version is proposed.
        assert_eq!(rebase(base, "a\nx\nc\nd\n", proposal), proposal);
        // An insertion of the user's where Claude inserted too: Claude's.
        let proposal = "a\nb\nnew\nc\nd\n";
        assert_eq!(rebase(base, "a\nb\nmine\nc\nd\n", proposal), proposal);
        // Nothing changed by the user: the proposal as it is.
        assert_eq!(rebase(base, base, proposal), proposal);
    }

    #[test]
    fn decisions_survive_an_edit_elsewhere() {
        let base = "1\n2\n3\n4\n5\n".to_owned();
        let proposal = "1\nTWO\n3\n4\nFIVE\n".to_owned();
        let found = hunks(&base, &proposal);
        let mut pending = Pending {
            agent: Agent::Claude,
            diff: 1,
            rev: 0,
            path: "/f".into(),
            tab_name: "t".into(),
            whole: None,
            decided: vec![Some(true), None],
            hunks: found,
            proposal,
            base,
            shown: true,
            answer: None,
        };
        // Typed elsewhere, the same hunks: nothing changes but the text.
        assert!(!recompute(&mut pending, "1\n2\n3\n4 \n5\n".to_owned()));
        assert_eq!(pending.rev, 0);
        assert!(!recompute(&mut pending, "1\n2\n3\n4\n5\n".to_owned()));
        // The first line changed: a hunk of the user's own is not offered,
        // but the lines moved in the diff's view; same hunks again.
        assert!(!recompute(&mut pending, "zero\n2\n3\n4\n5\n".to_owned()));
        assert_eq!(pending.rev, 0);
        // A line inserted above: the hunks move, a new revision, the
        // decision of the unchanged change kept.
        assert!(!recompute(
            &mut pending,
            "top\nzero\n2\n3\n4\n5\n".to_owned()
        ));
        assert_eq!(pending.rev, 1);
        assert_eq!(pending.hunks[0].old_start, 2);
        assert_eq!(pending.hunks.len(), 2);
        assert_eq!(
            pending.decided,
            [Some(true), None],
            "line 2's decision kept"
        );
        assert_eq!(pending.proposal, "top\nzero\nTWO\n3\n4\nFIVE\n");
        pending.decided[1] = Some(false);
        assert_eq!(
            pending.outcome(),
            Some(DiffOutcome::Saved("top\nzero\nTWO\n3\n4\n5\n".to_owned()))
        );
    }
}
