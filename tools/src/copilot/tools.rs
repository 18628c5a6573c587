//! The tools `copilot` calls, in its names and shapes: `get_selection`,
//! `get_diagnostics`, `open_diff` and `close_diff`, each a thin entry point
//! over the builders the other faces use.

use std::path::PathBuf;

use ide_mcp_runtime::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::json;

use crate::context::ReadContext;
use crate::current_selection::SelectionState;
use crate::diagnostics::{
    Dialect, all_diagnostics_result, file_diagnostics_result, shown_diagnostics,
};
use crate::ports::{Agent, DiffOutcome, OpenDiffRequest};
use crate::uri::PathInput;

/// The active selection as `selection_changed` carries it, or `null`.
#[derive(Clone, Debug)]
pub struct CopilotSelection(pub SelectionState);

impl Serialize for CopilotSelection {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.params().serialize(serializer)
    }
}

/// Returns the text the user has selected in the active editor, with its
/// file path, `file://` URL and range: `{"text", "filePath", "fileUrl",
/// "selection": {"start", "end", "isEmpty"}}` (zero-based lines, UTF-16
/// characters), or `null` without an active editor.
#[ide_mcp_runtime::mcp_tool(name = "get_selection", face = "copilot", read_only)]
pub fn get_selection(cx: &ReadContext) -> CopilotSelection {
    CopilotSelection(SelectionState::read(cx))
}

/// Returns the language servers' errors and warnings, by file:
/// `[{"uri", "filePath", "diagnostics": [{"message", "severity":
/// "Error"|"Warning"|"Information"|"Hint", "range", "source"?, "code"?}]}]`.
/// Pass `uri` (a `file://` URI or an absolute path) for one file only.
#[ide_mcp_runtime::mcp_tool(name = "get_diagnostics", face = "copilot", read_only)]
pub async fn copilot_get_diagnostics(
    cx: &ReadContext,
    #[arg(description = "File URI or absolute path; omit to list all files")] uri: Option<String>,
) -> CallToolResult {
    let Some(port) = cx.diagnostics() else {
        let result = match &uri {
            Some(uri) => file_diagnostics_result(uri, &[]),
            None => all_diagnostics_result(&[]),
        };
        return json_text(&result.in_dialect(Dialect::Copilot));
    };
    if let Some(uri) = uri {
        // A hidden file's diagnostics are none, its `uri` echoed.
        let diagnostics = PathInput::parse(&uri)
            .filter(|input| !input.candidates().any(|path| cx.hides(path)))
            .and_then(|input| input.candidates().find_map(|path| port.for_file(path)));
        let result = file_diagnostics_result(&uri, diagnostics.as_deref().unwrap_or(&[]));
        return json_text(&result.in_dialect(Dialect::Copilot));
    }
    if let Some(settle) = port.settle() {
        settle.await;
    }
    let files = shown_diagnostics(cx, port.all());
    json_text(&all_diagnostics_result(&files).in_dialect(Dialect::Copilot))
}

fn json_text(value: &impl Serialize) -> CallToolResult {
    CallToolResult::text(serde_json::to_string(value).unwrap_or_else(|_| "[]".to_owned()))
}

/// `open_diff`'s arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct OpenDiffArgs {
    /// The file's absolute path.
    pub original_file_path: String,
    /// The whole file as proposed.
    pub new_file_contents: String,
    /// The review's name, by which `close_diff` withdraws it.
    pub tab_name: String,
}

/// `close_diff`'s arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct CloseDiffArgs {
    /// The review's name, as given to `open_diff`.
    pub tab_name: String,
}

/// The answer to `open_diff` for a review that ended with `outcome`: every
/// change accepted (or nothing to change) → `SAVED`, the CLI writes its
/// proposal; anything else → `REJECTED`, it writes nothing.
pub fn open_diff_answer(
    outcome: Result<DiffOutcome, String>,
    proposal: &str,
    tab_name: &str,
) -> serde_json::Value {
    let (saved, trigger, message) = match outcome {
        Ok(DiffOutcome::Saved(text)) if text == proposal => (
            true,
            "accepted_in_editor",
            "the user accepted every change".to_owned(),
        ),
        Ok(DiffOutcome::Unchanged) => {
            (true, "accepted_in_editor", "no change to review".to_owned())
        }
        // TODO(issue 35): put the accepted hunks into the editor's buffer
        // (`workspace/applyEdit`, unsaved) before answering REJECTED.
        Ok(DiffOutcome::Saved(_)) => (
            false,
            "rejected_in_editor",
            "the user accepted only some of the changes; none were written".to_owned(),
        ),
        Ok(DiffOutcome::Rejected) => (
            false,
            "rejected_in_editor",
            "the user rejected the changes".to_owned(),
        ),
        Err(message) => (false, "review_failed", message),
    };
    json!({
        "success": true,
        "result": if saved { "SAVED" } else { "REJECTED" },
        "trigger": trigger,
        "tab_name": tab_name,
        "message": message,
    })
}

/// Shows the proposed new contents of a file in the editor, change by
/// change, and waits until the user has decided: answers `{"success",
/// "result": "SAVED"|"REJECTED", "trigger", "tab_name", "message"}`;
/// `SAVED` when every change was accepted (the caller writes the file; the
/// editor does not). `close_diff` with the same `tab_name` withdraws it.
#[ide_mcp_runtime::mcp_tool(name = "open_diff", face = "copilot")]
pub async fn copilot_open_diff(cx: &ReadContext, #[args] args: OpenDiffArgs) -> CallToolResult {
    let Some(input) = PathInput::parse(&args.original_file_path) else {
        return CallToolResult::error(format!(
            "`original_file_path` is not an absolute path: {:?}",
            args.original_file_path
        ));
    };
    if let Some(rule) = cx.edit_denial_of(&input) {
        return CallToolResult::error(rule.refusal("open_diff refused", &args.original_file_path));
    }
    let Some(review) = cx.review() else {
        return CallToolResult::error(crate::open_diff::NO_REVIEW);
    };
    let path: PathBuf = crate::gemini::diff::editor_path(cx, input.path());
    let request = OpenDiffRequest {
        agent: Agent::Copilot,
        path,
        new_contents: args.new_file_contents.clone(),
        tab_name: args.tab_name.clone(),
    };
    // Dropping this future (the call cancelled) withdraws the review.
    let outcome = review.open_diff(request).await;
    CallToolResult::text(
        open_diff_answer(outcome, &args.new_file_contents, &args.tab_name).to_string(),
    )
}

/// Withdraws the review `open_diff` started under `tab_name` (its call
/// answers `REJECTED`): `{"success": true, "already_closed", "tab_name",
/// "message"}`, `already_closed` when no such review was pending.
#[ide_mcp_runtime::mcp_tool(name = "close_diff", face = "copilot", idempotent)]
pub fn copilot_close_diff(cx: &ReadContext, #[args] args: CloseDiffArgs) -> CallToolResult {
    let closed = cx
        .review()
        .is_some_and(|review| review.close_tab(&args.tab_name));
    let message = if closed {
        "the review was withdrawn"
    } else {
        "no review of that name was open"
    };
    CallToolResult::text(
        json!({
            "success": true,
            "already_closed": !closed,
            "tab_name": args.tab_name,
            "message": message,
        })
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_acceptance_is_saved() {
        let result = |outcome| open_diff_answer(outcome, "new\n", "t")["result"].clone();
        assert_eq!(result(Ok(DiffOutcome::Saved("new\n".into()))), "SAVED");
        assert_eq!(result(Ok(DiffOutcome::Unchanged)), "SAVED");
        assert_eq!(result(Ok(DiffOutcome::Saved("half\n".into()))), "REJECTED");
        assert_eq!(result(Ok(DiffOutcome::Rejected)), "REJECTED");
        assert_eq!(result(Err("gone".into())), "REJECTED");
        assert_eq!(
            open_diff_answer(Ok(DiffOutcome::Rejected), "new\n", "t"),
            json!({"success": true, "result": "REJECTED", "trigger": "rejected_in_editor",
                   "tab_name": "t", "message": "the user rejected the changes"})
        );
    }
}
