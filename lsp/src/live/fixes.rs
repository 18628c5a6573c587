//! `quickFixes`: `textDocument/codeAction` for one line, with the
//! diagnostics the server published for it and `only: ["quickfix"]`; each
//! action's edit as diffs ([`edit`](super::edit)), applied nowhere.
//!
//! The diagnostics are the server's own, as it published them (through
//! the LSP proxy, to the editor on that server's stream: not another
//! server's, nor Claude's review hunks), their ranges counted again in the server's encoding on
//! the current text; servers match the fixes they computed by range and
//! message. A `source` the server left out is its name, as
//! `getDiagnostics` reports it.
//!
//! No fallback to every kind when the server offers no quick fix: other
//! kinds are refactorings and source actions (extract, organize imports),
//! not fixes of the line's problems, and an answer that mixed them in
//! would read as fixes. A server that ignores `only` is held to it here:
//! actions of another kind are left out, those without a kind kept. An
//! action with no edit is resolved (`codeAction/resolve`) when the server
//! resolves actions; one that runs a command is listed with it, marked as
//! not previewable. Our own actions (the review's, "Send selection to
//! Claude Code", all under [`OWN_COMMAND_PREFIX`]) are never listed.

use futures_util::{StreamExt as _, stream};
use ide_mcp_tools::LspFeature;
use lsp_types::{Diagnostic, DiagnosticSeverity, Position, Range};
use serde_json::{Map, Value, json};

use super::answers::Texts;
use super::asking::Asking;
use super::host::ServerHost;
use ide_mcp_tools::position::PositionEncoding;
use ide_mcp_tools::position::{convert, line_length};

/// The prefix of the commands of the code actions the IDE adds to the
/// server's (the review's, "Send selection to Claude Code").
pub(crate) const OWN_COMMAND_PREFIX: &str = "ide-mcp.";

/// How many `codeAction/resolve` requests are out at once.
const RESOLVING_AT_ONCE: usize = 4;

/// The kind asked for.
const QUICKFIX: &str = "quickfix";

/// Whether `action` (a `Command` or a `CodeAction`) is one of ours.
fn is_ours(action: &Value) -> bool {
    let command = match &action["command"] {
        Value::String(command) => Some(command.as_str()),
        Value::Object(command) => command.get("command").and_then(Value::as_str),
        _ => None,
    };
    command.is_some_and(|c| c.starts_with(OWN_COMMAND_PREFIX))
}

/// Whether `action` is a quick fix: of kind `quickfix` (or below it), or
/// of no kind.
fn is_quick_fix(action: &Value) -> bool {
    match action["kind"].as_str() {
        None => true,
        Some(kind) => kind == QUICKFIX || kind.starts_with("quickfix."),
    }
}

/// Whether `action` is a `CodeAction` to resolve: no edit yet, not a bare
/// `Command`.
fn needs_resolve(action: &Value) -> bool {
    !action["command"].is_string() && action.get("edit").is_none_or(Value::is_null)
}

/// The name of an LSP severity, as `getDiagnostics` says it.
fn severity(severity: Option<DiagnosticSeverity>) -> Option<&'static str> {
    Some(match severity? {
        DiagnosticSeverity::ERROR => "Error",
        DiagnosticSeverity::WARNING => "Warning",
        DiagnosticSeverity::INFORMATION => "Info",
        DiagnosticSeverity::HINT => "Hint",
        _ => return None,
    })
}

/// A diagnostic (the server's, in its encoding) as the model reads it.
fn diagnostic_for_model(
    texts: &mut Texts<'_>,
    path: &std::path::Path,
    diagnostic: &Value,
    encoding: PositionEncoding,
) -> Value {
    let mut out = Map::new();
    out.insert("message".into(), diagnostic["message"].clone());
    let read: Option<Diagnostic> = serde_json::from_value(diagnostic.clone()).ok();
    if let Some(name) = severity(read.and_then(|d| d.severity)) {
        out.insert("severity".into(), name.into());
    }
    for member in ["source", "code"] {
        if !diagnostic[member].is_null() {
            out.insert(member.into(), diagnostic[member].clone());
        }
    }
    out.extend(texts.range(path, &diagnostic["range"], encoding));
    Value::Object(out)
}

/// One action as the model reads it: `{title, kind?, isPreferred?,
/// disabled?, changes, command?, note?}`; `changes` from `preview`.
fn action_for_model(
    action: &Value,
    preview: impl FnOnce(&Value) -> Result<Vec<Value>, String>,
) -> Value {
    let mut out = Map::new();
    out.insert("title".into(), action["title"].clone());
    if let Some(kind) = action["kind"].as_str() {
        out.insert("kind".into(), kind.into());
    }
    if action["isPreferred"] == true {
        out.insert("isPreferred".into(), true.into());
    }
    if let Some(reason) = action["disabled"]["reason"].as_str() {
        out.insert("disabled".into(), reason.into());
    }
    // A bare `Command` has its command's name as `command`.
    let command = match &action["command"] {
        Value::String(name) => Some(json!({"command": name, "arguments": action["arguments"]})),
        Value::Object(command) => Some(json!({
            "command": command.get("command").cloned().unwrap_or_default(),
            "arguments": command.get("arguments").cloned().unwrap_or_default(),
        })),
        _ => None,
    };
    let edit = action.get("edit").filter(|e| !e.is_null());
    let changes = match edit.map(preview) {
        Some(Ok(changes)) => changes,
        Some(Err(error)) => {
            out.insert("error".into(), error.into());
            Vec::new()
        }
        None => Vec::new(),
    };
    out.insert("changes".into(), Value::Array(changes));
    let note = match (&command, edit) {
        (Some(command), Some(_)) => Some(format!(
            "after its edit, it runs the language server's command `{}`, which cannot be previewed",
            command["command"].as_str().unwrap_or_default()
        )),
        (Some(command), None) => Some(format!(
            "it runs the language server's command `{}`: it cannot be previewed",
            command["command"].as_str().unwrap_or_default()
        )),
        (None, None) => Some("the language server gave no edit for it".to_owned()),
        (None, Some(_)) => None,
    };
    if let Some(mut command) = command {
        if command["arguments"].is_null() {
            command.as_object_mut().map(|c| c.remove("arguments"));
        }
        out.insert("command".into(), command);
    }
    if let Some(note) = note {
        out.insert("note".into(), note.into());
    }
    Value::Object(out)
}

impl<H: ServerHost> Asking<'_, H> {
    /// The server's diagnostics touching `line` (0-based), in its own
    /// encoding.
    async fn line_diagnostics(&self, line: u32) -> Vec<Value> {
        let stored = self
            .host
            .published(&self.route, &self.path)
            .await
            .unwrap_or_default();
        let encoding = self.encoding();
        stored
            .iter()
            .filter(|d| d.range.start.line <= line && line <= d.range.end.line)
            .filter_map(|d| {
                let mut d = d.clone();
                // Sent back as the server published them when it counts
                // in UTF-16, as stored.
                if encoding != PositionEncoding::Utf16 {
                    let to_server = |p| convert(&self.text, p, PositionEncoding::Utf16, encoding);
                    d.range = Range::new(to_server(d.range.start), to_server(d.range.end));
                }
                serde_json::to_value(d).ok()
            })
            .collect()
    }

    /// `{diagnostics, fixes}` of line `line` (1-based).
    pub(super) async fn quick_fixes(&self, line: u32) -> Result<Value, String> {
        let zero = line - 1;
        if zero as usize >= self.text.len_lines() {
            return Err(format!(
                "line {line} is past the end of {}",
                self.path.display()
            ));
        }
        let encoding = self.encoding();
        let end = line_length(&self.text, zero, encoding);
        let range = Range::new(Position::new(zero, 0), Position::new(zero, end));
        let diagnostics = self.line_diagnostics(zero).await;
        let params = json!({
            "textDocument": self.document(),
            "range": range,
            "context": {"diagnostics": diagnostics, "only": [QUICKFIX], "triggerKind": 1},
        });
        let answer = self.send(LspFeature::CodeActions.method(), &params).await?;
        let actions: Vec<&Value> = answer
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter(|a| !is_ours(a) && is_quick_fix(a))
            .collect();
        let server_resolves = self
            .facts()
            .provider_option(LspFeature::CodeActions, "resolveProvider");
        // A few at a time: the stream's queue toward the server is short.
        let resolved: Vec<Value> = stream::iter(actions.into_iter().cloned())
            .map(|action| async move {
                if !(server_resolves && needs_resolve(&action)) {
                    return action;
                }
                // Unresolved, the action is still listed, without its edit.
                match self.send("codeAction/resolve", &action).await {
                    Ok(resolved) => resolved,
                    Err(_) => action,
                }
            })
            .buffered(RESOLVING_AT_ONCE)
            .collect()
            .await;
        let mut texts = self.texts();
        let diagnostics: Vec<Value> = diagnostics
            .iter()
            .map(|d| diagnostic_for_model(&mut texts, &self.path, d, encoding))
            .collect();
        let fixes: Vec<Value> = resolved
            .iter()
            .filter(|a| !is_ours(a))
            .map(|action| action_for_model(action, |edit| self.preview(edit)))
            .collect();
        Ok(json!({"diagnostics": diagnostics, "fixes": fixes}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_actions_and_other_kinds_are_left_out() {
        let ours = json!({"title": "Send selection to Claude Code", "command": {"title": "x", "command": "ide-mcp.sendSelection"}});
        let review = json!({"title": "Accept", "command": "ide-mcp.review.accept"});
        let theirs = json!({"title": "Insert ';'", "kind": "quickfix", "edit": {}});
        assert!(is_ours(&ours) && is_ours(&review) && !is_ours(&theirs));
        assert!(is_quick_fix(&theirs));
        assert!(is_quick_fix(
            &json!({"title": "t", "kind": "quickfix.import"})
        ));
        assert!(is_quick_fix(&json!({"title": "t"})));
        assert!(!is_quick_fix(
            &json!({"title": "t", "kind": "refactor.extract"})
        ));
        assert!(needs_resolve(&json!({"title": "t", "data": 1})));
        assert!(!needs_resolve(&theirs));
        assert!(!needs_resolve(&json!({"title": "t", "command": "x"})));
    }

    #[test]
    fn commands_are_listed_as_not_previewable() {
        let no_preview = |_: &Value| -> Result<Vec<Value>, String> {
            Ok(vec![json!({"filePath": "/w/a.c", "diff": "d"})])
        };
        let bare = json!({"title": "Apply fix", "command": "clangd.applyFix", "arguments": [1]});
        assert_eq!(
            action_for_model(&bare, no_preview),
            json!({"title": "Apply fix", "changes": [], "command": {"command": "clangd.applyFix", "arguments": [1]},
                   "note": "it runs the language server's command `clangd.applyFix`: it cannot be previewed"})
        );
        let both = json!({"title": "Fix", "kind": "quickfix", "isPreferred": true, "edit": {"changes": {}},
                          "command": {"title": "t", "command": "after"}});
        assert_eq!(
            action_for_model(&both, no_preview),
            json!({"title": "Fix", "kind": "quickfix", "isPreferred": true,
                   "changes": [{"filePath": "/w/a.c", "diff": "d"}], "command": {"command": "after"},
                   "note": "after its edit, it runs the language server's command `after`, which cannot be previewed"})
        );
        let empty =
            json!({"title": "Nothing", "kind": "quickfix", "disabled": {"reason": "not here"}});
        assert_eq!(
            action_for_model(&empty, no_preview),
            json!({"title": "Nothing", "kind": "quickfix", "disabled": "not here", "changes": [],
                   "note": "the language server gave no edit for it"})
        );
        assert_eq!(severity(Some(DiagnosticSeverity::ERROR)), Some("Error"));
        assert_eq!(severity(None), None);
    }
}
