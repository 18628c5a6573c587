//! `openDiff` and `closeDiff` as `gemini` calls them: the edit it proposes
//! reviewed hunk by hunk in the editor (the host's
//! [`DiffReview`](crate::ports::DiffReview) port, as Claude's), the outcome
//! told by a notification.
//!
//! `openDiff {filePath, newContent}` answers at once with `content: []`;
//! when the user has decided, `ide/diffAccepted {filePath, content}` (the
//! old text with the accepted hunks: the CLI writes it, we never do) or
//! `ide/diffRejected {filePath}` follows, `filePath` exactly as the CLI
//! sent it. `closeDiff {filePath}` (the user answered in the terminal)
//! withdraws the review and answers `{"content": null}` (the CLI keeps its
//! own proposal); no notification follows it. An editor that goes away
//! before the user decided sends nothing: the terminal's prompt still
//! stands, and a rejection the user did not make would cut the edit from
//! the CLI's history.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ide_mcp_runtime::{CallToolResult, Notifier};
use rustc_hash::FxHashMap;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::task::AbortHandle;

use super::filter::PathFilter;
use crate::context::EditorPorts;
use crate::ports::{Agent, DiffOutcome, OpenDiffRequest};

/// The notification of an accepted (or partly accepted) edit.
pub const DIFF_ACCEPTED: &str = "ide/diffAccepted";

/// The notification of a rejected edit.
pub const DIFF_REJECTED: &str = "ide/diffRejected";

/// The reviews this face started, by `filePath` as the CLI sent it, and
/// where their outcomes go.
#[derive(Debug)]
pub struct GeminiDiffs {
    notifier: Notifier,
    shown: PathFilter,
    /// Each pending review's serial number and task.
    pending: Mutex<FxHashMap<String, (u64, AbortHandle)>>,
    serial: std::sync::atomic::AtomicU64,
}

impl GeminiDiffs {
    /// Reviews whose outcomes go to `notifier`'s clients; a file `shown`
    /// refuses is never reviewed.
    pub fn new(notifier: Notifier, shown: PathFilter) -> Self {
        Self {
            notifier,
            shown,
            pending: Mutex::default(),
            serial: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, FxHashMap<String, (u64, AbortHandle)>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Withdraws the review of `file_path`; whether one was pending.
    /// Aborting its task drops the review's future, which withdraws it
    /// from the editor, and sends nothing.
    fn withdraw(&self, file_path: &str) -> bool {
        self.pending()
            .remove(file_path)
            .inspect(|(_, task)| task.abort())
            .is_some()
    }

    /// Takes review `serial` of `file_path` off the pending ones; `false`
    /// when it was withdrawn or replaced meanwhile.
    fn finish(&self, file_path: &str, serial: u64) -> bool {
        let mut pending = self.pending();
        let current = pending.get(file_path).is_some_and(|(s, _)| *s == serial);
        if current {
            pending.remove(file_path);
        }
        current
    }
}

impl Drop for GeminiDiffs {
    fn drop(&mut self) {
        for (_, (_, task)) in self.pending().drain() {
            task.abort();
        }
    }
}

/// `openDiff`'s arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenDiffArgs {
    /// The file's absolute path.
    pub file_path: String,
    /// The whole file as proposed.
    pub new_content: String,
}

/// `closeDiff`'s arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloseDiffArgs {
    /// The file's absolute path, as given to `openDiff`.
    pub file_path: String,
    /// Sends no notification (the CLI sends `true`; none is sent either way).
    pub suppress_notification: Option<bool>,
}

/// The path of the editor's document for `file_path` (the CLI's realpath):
/// the same path, else an open buffer's whose realpath is the same, else
/// `file_path` itself.
pub fn editor_path(cx: &EditorPorts, file_path: &Path) -> PathBuf {
    let open = |path: &Path| {
        cx.buffers()
            .is_some_and(|buffers| buffers.handle_for_path(path).is_some())
    };
    if open(file_path) {
        return file_path.to_path_buf();
    }
    let real = std::fs::canonicalize(file_path).unwrap_or_else(|_| file_path.to_path_buf());
    cx.editor()
        .into_iter()
        .flat_map(crate::ports::EditorAccess::open_buffers)
        .filter_map(|buffer| buffer.path)
        .find(|path| std::fs::canonicalize(path).is_ok_and(|p| p == real))
        .map_or_else(|| file_path.to_path_buf(), |path| path.to_path_buf())
}

/// The notification a review's outcome sends, if any.
pub fn outcome_notification(
    outcome: Result<DiffOutcome, String>,
    file_path: &str,
    proposal: &str,
) -> Option<(&'static str, serde_json::Value)> {
    match outcome {
        Ok(DiffOutcome::Saved(content)) => Some((
            DIFF_ACCEPTED,
            json!({"filePath": file_path, "content": content}),
        )),
        // The proposal is the file already: accepted as it is.
        Ok(DiffOutcome::Unchanged) => Some((
            DIFF_ACCEPTED,
            json!({"filePath": file_path, "content": proposal}),
        )),
        // `InBuffer` is Copilot's alone; were it to come here, the CLI
        // writes nothing: rejected.
        Ok(DiffOutcome::Rejected | DiffOutcome::InBuffer) => {
            Some((DIFF_REJECTED, json!({"filePath": file_path})))
        }
        Err(message) => {
            tracing::info!(file_path, %message, "a review ended without the user's answer");
            None
        }
    }
}

/// Shows the proposed new content of a file in the editor, change by
/// change, for the user to accept or reject each. Answers at once with no
/// content; the outcome follows as the notification `ide/diffAccepted`
/// (`{filePath, content}`: the file with the accepted changes) or
/// `ide/diffRejected` (`{filePath}`). `closeDiff` withdraws the review.
#[ide_mcp_runtime::mcp_tool(name = "openDiff", face = "gemini")]
pub fn gemini_open_diff(
    cx: &EditorPorts,
    diffs: &Arc<GeminiDiffs>,
    #[args] args: OpenDiffArgs,
) -> CallToolResult {
    let Some(review) = cx.review() else {
        return CallToolResult::error(crate::open_diff::NO_REVIEW);
    };
    let file_path = Path::new(&args.file_path);
    if !file_path.is_absolute() {
        return CallToolResult::error(format!(
            "`filePath` is not an absolute path: {:?}",
            args.file_path
        ));
    }
    let path = editor_path(cx, file_path);
    if !(diffs.shown)(&path) {
        return CallToolResult::error(format!(
            "{} is not shown to agents (a deny rule)",
            args.file_path
        ));
    }
    // A second proposal for the file replaces the first (withdrawn, silent).
    diffs.withdraw(&args.file_path);
    let review = review.open_diff(OpenDiffRequest {
        agent: Agent::Gemini,
        path,
        new_contents: args.new_content.clone(),
        tab_name: format!("gemini: {}", args.file_path),
    });
    let notifier = diffs.notifier.clone();
    let this = Arc::clone(diffs);
    let key = args.file_path.clone();
    let serial = diffs
        .serial
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // Registered before it can finish: a quick outcome finds its entry.
    let mut pending = diffs.pending();
    let task = tokio::spawn(async move {
        let outcome = review.await;
        // Unregistered first: a `closeDiff` from now on finds nothing.
        if !this.finish(&key, serial) {
            return;
        }
        if let Some((method, params)) = outcome_notification(outcome, &key, &args.new_content) {
            notifier.notify(method, &params);
        }
    });
    if let Some((_, old)) = pending.insert(args.file_path, (serial, task.abort_handle())) {
        old.abort(); // a proposal that raced this one
    }
    drop(pending);
    CallToolResult::default()
}

/// Withdraws the review `openDiff` started for `filePath` (the user
/// answered in the terminal) and answers `{"content": null}`: the CLI then
/// keeps its own proposal. No notification follows.
#[ide_mcp_runtime::mcp_tool(name = "closeDiff", face = "gemini", idempotent)]
pub fn gemini_close_diff(diffs: &Arc<GeminiDiffs>, #[args] args: CloseDiffArgs) -> CallToolResult {
    let was_pending = diffs.withdraw(&args.file_path);
    tracing::debug!(file_path = %args.file_path, was_pending, "closeDiff");
    CallToolResult::text(r#"{"content":null}"#)
}
