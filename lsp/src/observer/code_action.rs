//! "Send selection to Claude Code": the code action merged into the
//! server's answers, and its command, which the observer runs itself.
//!
//! The action carries the document's URI and the selected range (as the
//! editor sent them, in the session's position encoding). When the user
//! picks it, the editor sends `workspace/executeCommand`; the observer
//! answers `null` in the server's place and emits
//! [`WorkspaceEvent::AtMentioned`] with the selection's zero-based lines,
//! which the proxy pushes to Claude as `at_mentioned`.

use lsp_types::Range;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::envelope::{Envelope, append_to_array, response};
use super::overlay::Decision;
use super::stream::{ClientVerdict, Observer, path_of};
use crate::workspace::WorkspaceEvent;

/// The command of our code action.
pub const SEND_SELECTION_COMMAND: &str = "ide-mcp.sendSelection";

/// The title of our code action, as editors list it.
pub const SEND_SELECTION_TITLE: &str = "Send selection to Claude Code";

/// An LSP `Command`, members in a fixed order.
#[derive(Serialize)]
struct CommandJson<'a> {
    title: &'a str,
    command: &'a str,
    arguments: (&'a str, Range),
}

/// An LSP `CodeAction` that runs a command.
#[derive(Serialize)]
struct ActionJson<'a> {
    title: &'a str,
    command: CommandJson<'a>,
}

#[derive(Deserialize)]
struct ExecuteCommandParams {
    command: String,
    #[serde(default)]
    arguments: Vec<Value>,
}

impl Observer {
    /// Our action for a selection, serialized: a `CodeAction` literal when
    /// the editor takes them, else a bare `Command` (LSP before 3.8).
    fn send_selection_action(&self, uri: &str, range: Range) -> Option<Vec<u8>> {
        let command = CommandJson {
            title: SEND_SELECTION_TITLE,
            command: SEND_SELECTION_COMMAND,
            arguments: (uri, range),
        };
        let json = if self.editor_caps.literal_actions {
            serde_json::to_vec(&ActionJson {
                title: SEND_SELECTION_TITLE,
                command,
            })
        } else {
            serde_json::to_vec(&command)
        };
        json.ok()
    }

    /// The server's answer to a code action request, with our action
    /// appended; `None` (forward unchanged) for an error answer or a result
    /// that is not a list.
    pub(super) fn merge_code_actions(
        &self,
        envelope: &Envelope<'_>,
        uri: &str,
        range: Range,
    ) -> Option<Vec<u8>> {
        if envelope.error.is_some() {
            return None;
        }
        let id = envelope.id?;
        let mut result = match envelope.result.map(RawValue::get) {
            None | Some("null") => b"[]".to_vec(),
            Some(list) => list.as_bytes().to_vec(),
        };
        let ours = self.review_actions(uri, range);
        let ours = ours
            .into_iter()
            .chain(self.send_selection_action(uri, range));
        for action in ours {
            let list = std::str::from_utf8(&result).ok()?;
            result = append_to_array(list, &action)?;
        }
        Some(response(id, &result))
    }

    /// `workspace/executeCommand`: ours is answered here and never reaches
    /// the server.
    pub(super) fn execute_command(&mut self, envelope: &Envelope<'_>) -> ClientVerdict {
        let Some(params) = envelope.params::<ExecuteCommandParams>() else {
            return ClientVerdict::Forward;
        };
        if let Some(decision) = Decision::of_command(&params.command, &params.arguments) {
            let mut bodies = self.review_command(decision);
            bodies.extend(envelope.id.map(|id| response(id, b"null")));
            return match bodies.len() {
                0 => ClientVerdict::Drop,
                1 => ClientVerdict::Answer(bodies.remove(0)),
                _ => ClientVerdict::AnswerAll(bodies),
            };
        }
        if params.command != SEND_SELECTION_COMMAND {
            return ClientVerdict::Forward;
        }
        let uri = params.arguments.first().and_then(Value::as_str);
        let range = params
            .arguments
            .get(1)
            .and_then(|r| Range::deserialize(r).ok());
        if let (Some(uri), Some(range)) = (uri, range) {
            self.send_selection(uri, range);
        } else {
            tracing::warn!(
                arguments = ?params.arguments,
                "{SEND_SELECTION_COMMAND} without a URI and a range; ignored"
            );
        }
        match envelope.id {
            Some(id) => ClientVerdict::Answer(response(id, b"null")),
            // A notification (not valid LSP, but harmless): nothing to answer.
            None => ClientVerdict::Drop,
        }
    }

    fn send_selection(&mut self, uri: &str, range: Range) {
        let Some(path) = path_of(&self.docs, uri) else {
            tracing::warn!(
                uri,
                "{SEND_SELECTION_COMMAND} for a non-file document; ignored"
            );
            return;
        };
        self.select(uri, range, self.server.encoding);
        let (start, end) = if range.end < range.start {
            (range.end, range.start)
        } else {
            (range.start, range.end)
        };
        // A selection ending at the start of a line does not include it.
        let line_end = if end.character == 0 && end.line > start.line {
            end.line - 1
        } else {
            end.line
        };
        self.ws.emit(WorkspaceEvent::AtMentioned {
            path,
            line_start: start.line,
            line_end,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_appended_without_touching_the_others() {
        assert_eq!(append_to_array("[]", b"1").unwrap(), b"[1]");
        assert_eq!(append_to_array("[ ]", b"1").unwrap(), b"[ 1]");
        assert_eq!(
            append_to_array(r#"[{"title":"a"} ]"#, b"1").unwrap(),
            br#"[{"title":"a"} ,1]"#
        );
        assert_eq!(append_to_array(r#"{"a":1}"#, b"1"), None);
        assert_eq!(append_to_array("1", b"1"), None);
    }
}
