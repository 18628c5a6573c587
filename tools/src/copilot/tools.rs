//! The tools `copilot` calls, in its names and shapes: `get_selection`,
//! `get_diagnostics`, `open_diff` and `close_diff`, each a thin entry point
//! over the builders the other faces use.

use std::path::PathBuf;

use ide_mcp_runtime::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::json;

use crate::context::EditorPorts;
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
pub fn get_selection(cx: &EditorPorts) -> CopilotSelection {
    CopilotSelection(SelectionState::read(cx))
}

/// Returns the language servers' errors and warnings, by file:
/// `[{"uri", "filePath", "diagnostics": [{"message", "severity":
/// "Error"|"Warning"|"Information"|"Hint", "range", "source"?, "code"?}]}]`.
/// Pass `uri` (a `file://` URI or an absolute path) for one file only.
#[ide_mcp_runtime::mcp_tool(name = "get_diagnostics", face = "copilot", read_only)]
pub async fn copilot_get_diagnostics(
    cx: &EditorPorts,
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

/// The answer to `open_diff` for the review of `file` (named `tab_name`)
/// that ended with `outcome`: `SAVED` when the whole proposal was accepted
/// (or it changes nothing), and the CLI writes it; `REJECTED` otherwise,
/// and it writes nothing (part of it accepted is in the editor's buffer,
/// unsaved). The CLI 1.0.102 reads `result` alone, after checking that
/// `success` is a boolean and `trigger` and `message` are strings; the
/// triggers are those of the CLI's own IDE companion (VS Code's Copilot
/// Chat) where the case is the same. A review that ended without the
/// user's answer (the editor went away) is an error: the CLI reads no
/// answer in it and keeps asking in the terminal, where a `REJECTED` would
/// refuse the edit for the user.
pub fn open_diff_answer(
    outcome: Result<DiffOutcome, String>,
    proposal: &str,
    file: &str,
    tab_name: &str,
) -> CallToolResult {
    let (saved, trigger, message) = match outcome {
        Ok(DiffOutcome::Saved(text)) if text == proposal => (
            true,
            "accepted_via_button",
            format!("User accepted changes for {file}"),
        ),
        Ok(DiffOutcome::Unchanged) => (
            true,
            "unchanged",
            format!("No changes to review for {file}"),
        ),
        Ok(DiffOutcome::InBuffer) => (
            false,
            "partially_accepted",
            format!(
                "User accepted some of the changes for {file}: they are in the editor's buffer, \
                 unsaved; the others were rejected, and nothing was written"
            ),
        ),
        // A review that knows no buffer to put a part into.
        Ok(DiffOutcome::Saved(_)) => (
            false,
            "partially_accepted",
            format!("User accepted only some of the changes for {file}; nothing was written"),
        ),
        Ok(DiffOutcome::Rejected) => (
            false,
            "rejected_via_button",
            format!("User rejected changes for {file}"),
        ),
        Err(message) => return CallToolResult::error(message),
    };
    CallToolResult::text(
        json!({
            "success": true,
            "result": if saved { "SAVED" } else { "REJECTED" },
            "trigger": trigger,
            "tab_name": tab_name,
            "message": message,
        })
        .to_string(),
    )
}

/// Shows the proposed new contents of a file in the editor, change by
/// change, and waits until the user has decided: answers `{"success",
/// "result": "SAVED"|"REJECTED", "trigger", "tab_name", "message"}`;
/// `SAVED` when every change was accepted (the caller writes the file; the
/// editor does not); `REJECTED` otherwise, the changes accepted, if any,
/// put into the editor's buffer unsaved. `close_diff` with the same
/// `tab_name` withdraws it.
#[ide_mcp_runtime::mcp_tool(name = "open_diff", face = "copilot")]
pub async fn copilot_open_diff(cx: &EditorPorts, #[args] args: OpenDiffArgs) -> CallToolResult {
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
    open_diff_answer(
        outcome,
        &args.new_file_contents,
        &args.original_file_path,
        &args.tab_name,
    )
}

/// Withdraws the review `open_diff` started under `tab_name` (its call
/// answers `REJECTED`): `{"success": true, "already_closed", "tab_name",
/// "message"}`, `already_closed` when no such review was pending.
#[ide_mcp_runtime::mcp_tool(name = "close_diff", face = "copilot", idempotent)]
pub fn copilot_close_diff(cx: &EditorPorts, #[args] args: CloseDiffArgs) -> CallToolResult {
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

    fn answer(outcome: Result<DiffOutcome, String>) -> serde_json::Value {
        let result = open_diff_answer(outcome, "new\n", "/w/f.c", "t");
        assert!(!result.is_error, "{result:?}");
        let ide_mcp_runtime::Content::Text(text) = &result.content[0];
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn only_the_whole_proposal_is_saved() {
        let result = |outcome| answer(outcome)["result"].clone();
        assert_eq!(result(Ok(DiffOutcome::Saved("new\n".into()))), "SAVED");
        assert_eq!(result(Ok(DiffOutcome::Unchanged)), "SAVED");
        assert_eq!(result(Ok(DiffOutcome::Saved("half\n".into()))), "REJECTED");
        assert_eq!(result(Ok(DiffOutcome::InBuffer)), "REJECTED");
        assert_eq!(result(Ok(DiffOutcome::Rejected)), "REJECTED");
        assert_eq!(
            answer(Ok(DiffOutcome::Rejected)),
            json!({"success": true, "result": "REJECTED", "trigger": "rejected_via_button",
                   "tab_name": "t", "message": "User rejected changes for /w/f.c"})
        );
        assert_eq!(
            answer(Ok(DiffOutcome::InBuffer)),
            json!({"success": true, "result": "REJECTED", "trigger": "partially_accepted",
                   "tab_name": "t", "message": "User accepted some of the changes for /w/f.c: \
                   they are in the editor's buffer, unsaved; the others were rejected, and \
                   nothing was written"})
        );
    }

    #[test]
    fn a_review_without_the_user_s_answer_is_no_rejection() {
        let result = open_diff_answer(Err("gone".into()), "new\n", "/w/f.c", "t");
        assert!(result.is_error);
        assert_eq!(
            result.content,
            [ide_mcp_runtime::Content::Text("gone".into())]
        );
    }
}
