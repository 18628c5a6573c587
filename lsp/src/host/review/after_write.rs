//! The host's side of writes made without a review ([`written`](super::written)):
//! taking a write in, the user's keep and revert, and what dismisses the
//! markers (typing, saving, closing the file, a review of the same file).

use std::path::Path;
use std::sync::atomic::Ordering;

use super::written::{Seen, Written};
use super::{Reviews, lock};
use crate::host::apply::{apply, buffer};
use crate::observer::Decision;

impl Reviews {
    /// Whether writes made without a review are marked (on by default;
    /// `lsp-proxy --no-after-review` turns it off).
    pub fn set_marking(&self, on: bool) {
        self.inner.marking.store(on, Ordering::Relaxed);
    }

    /// `path` was written from `before` (the buffer's text, clean) to
    /// `after` (the disk's) outside a review: its changes are marked once
    /// the buffer shows `after`. No markers for a file under review (its
    /// hunks are never doubled), for the text a review was answered with,
    /// or with marking off.
    pub fn wrote(&self, path: &Path, before: String, after: String) {
        if !self.inner.marking.load(Ordering::Relaxed) {
            return;
        }
        let mut state = lock(&self.inner.state);
        if state.pending.iter().any(|p| p.path == path) {
            return;
        }
        if let Some(at) = state
            .reviewed
            .iter()
            .position(|(p, text)| p == path && *text == after)
        {
            state.reviewed.remove(at);
            tracing::debug!(?path, "the write of a reviewed edit: no markers");
            return;
        }
        tracing::debug!(?path, "a write without a review: marked");
        state.written.retain(|w| w.path != path);
        state.next += 1;
        let diff = state.next;
        let Some(mut written) = Written::new(diff, path.to_path_buf(), before, after) else {
            return;
        };
        written.seen(&self.current_text(path));
        state.written.push(written);
        self.publish(&state);
    }

    /// The markers of `path`'s write go (its edit was not applied).
    pub fn forget_written(&self, path: &Path) {
        self.saved(path);
    }

    /// The editor saved `path`: the markers of its writes go.
    pub(super) fn saved(&self, path: &Path) {
        let mut state = lock(&self.inner.state);
        let before = state.written.len();
        state.written.retain(|w| w.path != path);
        if state.written.len() != before {
            self.publish(&state);
        }
    }

    /// Only the markers of the files in `open` stay.
    pub fn forget_closed(&self, open: &[&Path]) {
        let mut state = lock(&self.inner.state);
        let before = state.written.len();
        state
            .written
            .retain(|w| open.iter().any(|p| **p == *w.path));
        if state.written.len() != before {
            self.publish(&state);
        }
    }

    /// The user kept or reverted changes of a write.
    pub(super) fn decide_written(&self, decision: Decision) {
        let (diff, index, keep) = match decision {
            Decision::One {
                diff,
                index,
                accept,
                ..
            } => (diff, Some(index), accept),
            Decision::All { diff, accept } => (diff, None, accept),
        };
        let mut state = lock(&self.inner.state);
        let Some(at) = state.written.iter().position(|w| w.diff == diff) else {
            tracing::debug!(diff, "a decision on changes no longer marked; ignored");
            return;
        };
        let written = &mut state.written[at];
        let path = written.path.clone();
        let target = if keep {
            written.keep(index);
            None
        } else {
            written.revert(index)
        };
        if state.written[at].is_empty() && target.is_none() {
            state.written.remove(at);
        }
        self.publish(&state);
        drop(state);
        if let Some(target) = target {
            self.revert_in_buffer(diff, &path, target);
        }
    }

    /// Makes `path`'s buffer show `target` (a revert); when the editor
    /// does not take it, the write's markers go (what the buffer shows is
    /// no longer known to be ours).
    fn revert_in_buffer(&self, diff: u64, path: &Path, target: String) {
        let this = self.clone();
        let path = path.to_path_buf();
        tokio::spawn(async move {
            let ws = &this.inner.ws;
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            let label = format!("Claude Code: revert a change to {name}");
            let applied = match buffer(ws, &path) {
                Some((rope, version)) => apply(ws, &path, (&rope, version), &target, &label).await,
                None => Err(crate::host::apply::NotApplied::NoEditor),
            };
            let mut state = lock(&this.inner.state);
            if let Err(why) = applied {
                tracing::info!(?path, ?why, "the revert was not applied; the markers go");
                state.written.retain(|w| w.diff != diff);
            } else {
                let text = this.current_text(&path);
                if let Some(at) = state.written.iter().position(|w| w.diff == diff)
                    && state.written[at].seen(&text) == Seen::Typed
                {
                    state.written.remove(at);
                }
                state.written.retain(|w| w.diff != diff || !w.is_empty());
            }
            this.publish(&state);
        });
    }
}
