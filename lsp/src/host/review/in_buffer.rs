//! The end of a review for an agent that takes a proposal whole or not at
//! all (Copilot: its `open_diff` answers only saved, when the CLI writes
//! its own proposal, or rejected): when its user accepted part of it, the
//! old text with the accepted hunks goes into the editor's buffer, unsaved,
//! by the same `workspace/applyEdit` as a reload or a revert, and the
//! agent is told it was rejected (it writes nothing). The host never
//! writes the file.

use std::path::Path;

use ide_mcp_tools::DiffOutcome;

use super::{Pending, Reviews, State, rebase};
use crate::host::apply::{NotApplied, apply, buffer};

impl Reviews {
    /// Ends the review at `at` with `outcome`: answered at once, but for
    /// part of a proposal accepted for an agent that takes no part, which
    /// is answered once it is in the buffer.
    pub(super) fn end_review(&self, state: &mut State, at: usize, outcome: DiffOutcome) {
        match (&outcome, &state.pending[at].whole) {
            (DiffOutcome::Saved(text), Some(whole)) if text != whole => {
                let done = state.pending.remove(at);
                let accepted = text.clone();
                self.put_in_buffer(done, accepted);
            }
            _ => state.finish(at, outcome),
        }
    }

    /// Puts `accepted` (the reviewed text with the accepted hunks) into
    /// the buffer of `done`'s file, then answers [`DiffOutcome::InBuffer`];
    /// an error when no editor took it (the agent's user answers in the
    /// terminal then).
    fn put_in_buffer(&self, mut done: Pending, accepted: String) {
        let this = self.clone();
        tokio::spawn(async move {
            let outcome = this.apply_accepted(&done, &accepted).await;
            if let Err(message) = &outcome {
                tracing::info!(path = ?done.path, %message, "the accepted changes were not put in the buffer");
            }
            done.answer(outcome);
        });
    }

    async fn apply_accepted(&self, done: &Pending, accepted: &str) -> Result<DiffOutcome, String> {
        let ws = &self.inner.ws;
        let name = file_name(&done.path);
        let (rope, version) = buffer(ws, &done.path).ok_or_else(|| not_applied(&name, None))?;
        // What was typed since the last decision is kept: the accepted
        // hunks are carried over to it, never the other way round.
        let target = rebase(&done.base, &rope.to_string(), accepted);
        let label = format!("{}: the accepted changes to {name}", done.agent.source());
        apply(ws, &done.path, (&rope, version), &target, &label)
            .await
            .map_err(|why| not_applied(&name, Some(why)))?;
        Ok(DiffOutcome::InBuffer)
    }
}

/// The message of accepted changes that did not reach the buffer.
fn not_applied(name: &str, why: Option<NotApplied>) -> String {
    let why = match why {
        None | Some(NotApplied::NoEditor) => format!("no editor that takes edits has {name} open"),
        Some(NotApplied::Refused(answer)) => format!("the editor refused the edit: {answer}"),
    };
    format!(
        "the changes accepted in the editor could not be put into its buffer ({why}); answer in the terminal"
    )
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}
