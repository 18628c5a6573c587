//! `openDiff`: shows Claude's proposed edit to the user through the
//! [`DiffReview`](crate::ports::DiffReview) port and answers with the decision, in
//! the words the `claude` CLI reads (PROTOCOL.md, "Reviewing Claude's edits").
//!
//! The tool only asks: the CLI writes the file itself, from the text in a
//! `FILE_SAVED` answer. Only an editor host serves it; a headless host, with
//! no person to ask, leaves it out of its registry.

use std::path::Path;

use ide_mcp_runtime::{CallToolResult, Content};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::EditorPorts;
use crate::ports::{Agent, DiffOutcome, OpenDiffRequest};
use crate::uri::PathInput;

/// The message of the result when the host has no [`DiffReview`](crate::ports::DiffReview).
pub const NO_REVIEW: &str =
    "openDiff is not available: this host cannot show edits to a person for review";

/// `openDiff`'s arguments, as the CLI sends them: all four required, no other.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenDiffArgs {
    /// The file's absolute path or `file://` URI.
    pub old_file_path: String,
    /// The absolute path or `file://` URI of the file the proposal is for
    /// (the one reviewed, when it differs from `old_file_path`).
    pub new_file_path: String,
    /// The whole file as proposed.
    pub new_file_contents: String,
    /// The name of the review, by which `close_tab` withdraws it.
    pub tab_name: String,
}

/// The request for the editor: the file at `new_file_path` (the CLI sends
/// the same path twice; when they differ, the proposal is for the new one),
/// or `Err` naming a path that is not absolute.
///
/// Of a URI's two readings (raw, percent-decoded; see [`PathInput`]) the
/// first that `is_open` in the editor is taken, else the raw one.
pub fn open_diff_request(
    args: OpenDiffArgs,
    is_open: impl Fn(&Path) -> bool,
) -> Result<OpenDiffRequest, String> {
    let input = PathInput::parse(&args.new_file_path).ok_or_else(|| {
        format!(
            "`new_file_path` is not an absolute path or file URI: {:?}",
            args.new_file_path
        )
    })?;
    let path = input
        .candidates()
        .find(|path| is_open(path))
        .unwrap_or(input.path());
    Ok(OpenDiffRequest {
        agent: Agent::Claude,
        path: path.to_path_buf(),
        new_contents: args.new_file_contents,
        tab_name: args.tab_name,
    })
}

/// The answer to the CLI for the review of `tab_name` that ended with `outcome`.
pub fn open_diff_result(outcome: Result<DiffOutcome, String>, tab_name: &str) -> CallToolResult {
    let texts = |texts: Vec<String>| CallToolResult {
        content: texts.into_iter().map(Content::Text).collect(),
        ..CallToolResult::default()
    };
    match outcome {
        Ok(DiffOutcome::Saved(text)) => texts(vec!["FILE_SAVED".into(), text]),
        // `InBuffer` is Copilot's alone; were it to come here, the CLI
        // writes nothing: rejected.
        Ok(DiffOutcome::Rejected | DiffOutcome::InBuffer) => {
            texts(vec!["DIFF_REJECTED".into(), tab_name.into()])
        }
        Ok(DiffOutcome::Unchanged) => CallToolResult::text("TAB_CLOSED"),
        Err(message) => CallToolResult::error(message),
    }
}

/// Shows Claude's proposed new contents of a file to the user in the editor,
/// change by change, and waits until they accept or reject the changes. Answers
/// `FILE_SAVED` then the text with the accepted changes (the caller writes the
/// file; the editor does not), `DIFF_REJECTED` then `tab_name` when nothing was
/// accepted or the review was withdrawn, `TAB_CLOSED` when the proposal equals
/// the file. Paths are absolute or `file://` URIs; when `old_file_path` and
/// `new_file_path` differ, the file at `new_file_path` is reviewed.
/// `close_tab` with the same `tab_name` withdraws the review.
#[ide_mcp_runtime::mcp_tool]
pub async fn open_diff(cx: &EditorPorts, #[args] args: OpenDiffArgs) -> CallToolResult {
    if let Some(refusal) = denied(cx, &args) {
        return CallToolResult::error(refusal);
    }
    let Some(review) = cx.review() else {
        return CallToolResult::error(NO_REVIEW);
    };
    let is_open = |path: &Path| {
        cx.buffers()
            .is_some_and(|buffers| buffers.handle_for_path(path).is_some())
    };
    let request = match open_diff_request(args, is_open) {
        Ok(request) => request,
        Err(message) => return CallToolResult::error(message),
    };
    let tab_name = request.tab_name.clone();
    tracing::debug!(path = %request.path.display(), %tab_name, "openDiff");
    // Dropping this future (the call cancelled) withdraws the review.
    open_diff_result(review.open_diff(request).await, &tab_name)
}

/// The refusal of a review of a file the user's deny rules keep from
/// being edited (a `Read` or an `Edit` rule), for either path.
fn denied(cx: &EditorPorts, args: &OpenDiffArgs) -> Option<String> {
    [&args.new_file_path, &args.old_file_path]
        .into_iter()
        .find_map(|given| {
            let rule = cx.edit_denial_of(&PathInput::parse(given)?)?;
            Some(rule.refusal("openDiff refused", given))
        })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn args(old: &str, new: &str) -> OpenDiffArgs {
        OpenDiffArgs {
            old_file_path: old.into(),
            new_file_path: new.into(),
            new_file_contents: "fn main() {}\n".into(),
            tab_name: "✻ [Claude Code] main.rs (5f680c) ⧉".into(),
        }
    }

    #[test]
    fn the_request_names_the_new_path() {
        let none_open = |_: &Path| false;
        let request = open_diff_request(args("/ws/a.rs", "/ws/b.rs"), none_open).unwrap();
        assert_eq!(
            request,
            OpenDiffRequest {
                agent: Agent::Claude,
                path: PathBuf::from("/ws/b.rs"),
                new_contents: "fn main() {}\n".into(),
                tab_name: "✻ [Claude Code] main.rs (5f680c) ⧉".into(),
            }
        );
        // A URI's raw reading, unless its decoded one is open.
        let uri = args("/ws/a.rs", "file:///ws/b%20c.rs");
        let path =
            |is_open: &dyn Fn(&Path) -> bool| open_diff_request(uri.clone(), is_open).unwrap().path;
        assert_eq!(path(&none_open), PathBuf::from("/ws/b%20c.rs"));
        assert_eq!(
            path(&|p: &Path| p == Path::new("/ws/b c.rs")),
            PathBuf::from("/ws/b c.rs")
        );
        let err = open_diff_request(args("/ws/a.rs", "a.rs"), none_open).unwrap_err();
        assert_eq!(
            err,
            "`new_file_path` is not an absolute path or file URI: \"a.rs\""
        );
    }

    #[test]
    fn each_outcome_in_the_clis_words() {
        let text = |t: &str| Content::Text(t.into());
        let saved = open_diff_result(Ok(DiffOutcome::Saved("x\n".into())), "tab");
        assert_eq!(saved.content, [text("FILE_SAVED"), text("x\n")]);
        assert!(!saved.is_error);
        let rejected = open_diff_result(Ok(DiffOutcome::Rejected), "tab");
        assert_eq!(rejected.content, [text("DIFF_REJECTED"), text("tab")]);
        assert_eq!(
            open_diff_result(Ok(DiffOutcome::Unchanged), "tab"),
            CallToolResult::text("TAB_CLOSED")
        );
        assert_eq!(
            open_diff_result(Err("the editor went away".into()), "tab"),
            CallToolResult::error("the editor went away")
        );
    }
}
