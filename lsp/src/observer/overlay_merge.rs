//! The review as one stream's editor sees it: the overlay's hunks merged
//! into the server's diagnostics and code actions, and the review's
//! commands answered in the server's place ([`overlay`](super::overlay)).

use lsp_types::Range;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::envelope::append_to_array;
use super::overlay::{
    ACCEPT_ALL_COMMAND, ACCEPT_COMMAND, Decision, HunkView, KEEP_ALL_COMMAND, KEEP_COMMAND,
    Overlay, REJECT_ALL_COMMAND, REJECT_COMMAND, REVERT_ALL_COMMAND, REVERT_COMMAND, RawPublish,
    ReviewView, ViewKind,
};
use super::stream::{MirrorDoc, Observer};
use crate::framing::Message;
use crate::workspace::WorkspaceEvent;
use ide_mcp_tools::position::PositionEncoding;
use ide_mcp_tools::position::line_length;

impl Observer {
    /// The review of the open document `uri`, if one is pending.
    fn review_of_uri(&self, uri: &str) -> Option<&ReviewView> {
        let path = self.docs.get(uri)?.path.as_deref()?;
        self.review.review_of(path)
    }

    /// Takes the host's new overlay: every open document whose hunks
    /// changed gets its diagnostics published again (the server's own, and
    /// the hunks left).
    pub fn set_review(&mut self, overlay: Overlay) {
        let old = std::mem::replace(&mut self.review.overlay, overlay);
        let changed: Vec<String> = self
            .docs
            .iter()
            .filter(|(_, doc)| {
                doc.path.as_deref().is_some_and(|path| {
                    // A review with nothing left to decide shows nothing.
                    let shown = |o: &Overlay| {
                        o.reviews
                            .iter()
                            .find(|r| r.path == path && !r.hunks.is_empty())
                            .cloned()
                    };
                    shown(&old) != shown(&self.review.overlay)
                })
            })
            .map(|(uri, _)| uri.clone())
            .collect();
        self.interest
            .set_reviewing(!self.review.overlay.reviews.is_empty());
        for uri in changed {
            self.republish(&uri);
        }
    }

    /// Sends the editor `uri`'s diagnostics: the server's last and the
    /// hunks pending.
    fn republish(&self, uri: &str) {
        if let Some(body) = self.publish_body(uri) {
            self.ws
                .requests
                .send_to_editor(self.stream, Message::from_body(body));
        }
    }

    /// A `publishDiagnostics` of `uri` for the editor: the server's last
    /// diagnostics and the hunks pending.
    fn publish_body(&self, uri: &str) -> Option<String> {
        let (version, server) = self
            .review
            .server_last
            .get(uri)
            .map_or((None, "[]"), |(v, d)| (*v, d.as_str()));
        let diagnostics = self.with_hunks(uri, server);
        let mut params = json!({"uri": uri});
        if let Some(version) = version {
            params["version"] = json!(version);
        }
        let params = serde_json::to_string(&params).ok()?;
        // `{"uri":…,"version":…}` with the diagnostics appended.
        let params = format!(
            "{},\"diagnostics\":{diagnostics}}}",
            &params[..params.len() - 1]
        );
        Some(format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{params}}}"#
        ))
    }

    /// `server` (a JSON array of diagnostics) with `uri`'s hunks appended.
    fn with_hunks(&self, uri: &str, server: &str) -> String {
        let (Some(review), Some(doc)) = (self.review_of_uri(uri), self.docs.get(uri)) else {
            return server.to_owned();
        };
        let mut list = server.to_owned();
        for hunk in &review.hunks {
            let item = hunk_diagnostic(review, hunk, doc, self.server.encoding);
            if let Some(longer) = append_to_array(&list, item.to_string().as_bytes()) {
                list = String::from_utf8(longer).unwrap_or(list);
            }
        }
        list
    }

    /// A server's `publishDiagnostics` (already read for the workspace):
    /// kept, and with the hunks merged when `uri` has a pending review.
    pub(super) fn review_publish(&mut self, params: &RawValue) -> Option<Vec<u8>> {
        let publish: RawPublish<'_> = serde_json::from_str(params.get()).ok()?;
        self.review.server_last.insert(
            publish.uri.clone(),
            (publish.version, publish.diagnostics.get().to_owned()),
        );
        self.review_of_uri(&publish.uri)?;
        let merged = self.with_hunks(&publish.uri, publish.diagnostics.get());
        let mut params: serde_json::Map<String, Value> = serde_json::from_str(params.get()).ok()?;
        params.insert("diagnostics".into(), serde_json::from_str(&merged).ok()?);
        let body = json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params});
        serde_json::to_vec(&body).ok()
    }

    /// A pull answer's `items` for `uri` with the hunks merged, when a
    /// review is pending; the server's items are kept for later
    /// re-publishing.
    pub(super) fn review_pulled(&mut self, uri: &str, result: &RawValue) -> Option<Vec<u8>> {
        let mut report: serde_json::Map<String, Value> = serde_json::from_str(result.get()).ok()?;
        let items = match report.get("kind").and_then(Value::as_str) {
            Some("full") => report.get("items").map(Value::to_string)?,
            // The editor keeps what it had: the server's last, and the
            // hunks must be added to them.
            Some("unchanged") => self.review.server_last.get(uri)?.1.clone(),
            _ => return None,
        };
        if report.get("kind").and_then(Value::as_str) == Some("full") {
            let version = self.docs.get(uri).map(|d| d.version);
            self.review
                .server_last
                .insert(uri.to_owned(), (version, items.clone()));
        }
        self.review_of_uri(uri)?;
        let merged = self.with_hunks(uri, &items);
        report.insert("kind".into(), json!("full"));
        report.remove("resultId");
        report.insert("items".into(), serde_json::from_str(&merged).ok()?);
        serde_json::to_vec(&report).ok()
    }

    /// A document opened with a pending review: its hunks are shown at once.
    pub(super) fn review_opened(&self, uri: &str) {
        if self.review_of_uri(uri).is_some() {
            self.republish(uri);
        }
    }

    /// A `codeAction` request's params without Claude's hunks in
    /// `context.diagnostics`; `None` when there are none (forward as is).
    pub(super) fn strip_hunks(params: &RawValue) -> Option<Value> {
        let mut params: Value = serde_json::from_str(params.get()).ok()?;
        let diagnostics = params.pointer_mut("/context/diagnostics")?.as_array_mut()?;
        let before = diagnostics.len();
        // Ours, of any agent, carry the review's marker in `data`.
        diagnostics.retain(|d| d.pointer("/data/ideMcpReview").is_none());
        (diagnostics.len() != before).then_some(params)
    }

    /// The review's actions for a code action request on `range` of `uri`:
    /// accept or reject each hunk the range touches, then accept or reject
    /// all (of a write shown after the fact: keep or revert).
    pub(super) fn review_actions(&self, uri: &str, range: Range) -> Vec<Vec<u8>> {
        let Some(review) = self.review_of_uri(uri) else {
            return Vec::new();
        };
        let (first, last) = if range.end < range.start {
            (range.end.line, range.start.line)
        } else {
            (range.start.line, range.end.line)
        };
        let titles = Titles::of(review);
        let mut actions = Vec::new();
        for hunk in &review.hunks {
            let end = hunk.start_line + hunk.old_len.max(1) - 1;
            if hunk.start_line <= last && first <= end {
                let arguments = json!([review.diff, review.rev, hunk.index]);
                actions.push(self.action(&titles.one.0, titles.one_commands.0, &arguments));
                actions.push(self.action(&titles.one.1, titles.one_commands.1, &arguments));
            }
        }
        let diff = json!([review.diff]);
        actions.push(self.action(&titles.all.0, titles.all_commands.0, &diff));
        actions.push(self.action(&titles.all.1, titles.all_commands.1, &diff));
        actions.into_iter().flatten().collect()
    }

    /// A code action running `command`: a `CodeAction` literal when the
    /// editor takes them, else a bare `Command`.
    fn action(&self, title: &str, command: &str, arguments: &Value) -> Option<Vec<u8>> {
        let command = json!({"title": title, "command": command, "arguments": arguments});
        let action = if self.editor_caps.literal_actions {
            json!({"title": title, "kind": "quickfix", "command": command})
        } else {
            command
        };
        serde_json::to_vec(&action).ok()
    }

    /// One of the review's commands: emitted for the host to decide, and
    /// shown decided at once: the hunks decided leave this stream's
    /// overlay, and the bodies returned (the documents' diagnostics
    /// without them) go to the editor before the command's answer. An
    /// editor that reads only up to the answer of a request it waits for
    /// (eglot on Emacs 28's jsonrpc) sees them then, not at the server's
    /// next message; the host's overlay that follows is the same and
    /// changes nothing.
    pub(super) fn review_command(&mut self, decision: Decision) -> Vec<Vec<u8>> {
        self.ws.emit(WorkspaceEvent::Review(decision));
        let (diff, decided) = match decision {
            Decision::One {
                diff, rev, index, ..
            } => (diff, Some((rev, index))),
            Decision::All { diff, .. } => (diff, None),
        };
        let Some(review) = self
            .review
            .overlay
            .reviews
            .iter_mut()
            .find(|r| r.diff == diff)
        else {
            return Vec::new();
        };
        match decided {
            Some((rev, index)) if rev == review.rev => review.hunks.retain(|h| h.index != index),
            Some(_) => return Vec::new(),
            None => review.hunks.clear(),
        }
        let path = review.path.clone();
        let uris: Vec<String> = self
            .docs
            .iter()
            .filter(|(_, doc)| doc.path.as_deref() == Some(path.as_path()))
            .map(|(uri, _)| uri.clone())
            .collect();
        uris.iter()
            .filter_map(|uri| self.publish_body(uri))
            .map(String::into_bytes)
            .collect()
    }
}

/// The titles and commands of a view's actions: (accept, reject) of one
/// hunk and of all, named after the agent whose edit it is.
struct Titles {
    one: (String, String),
    one_commands: (&'static str, &'static str),
    all: (String, String),
    all_commands: (&'static str, &'static str),
}

impl Titles {
    fn of(view: &ReviewView) -> Self {
        let agent = view.agent.name();
        match view.kind {
            ViewKind::Review => {
                let n = view.hunks.len();
                let all = if n == 1 {
                    format!("{agent}: accept the 1 change")
                } else {
                    format!("{agent}: accept all {n} changes")
                };
                Self {
                    one: (
                        format!("{agent}: accept this change"),
                        format!("{agent}: reject this change"),
                    ),
                    one_commands: (ACCEPT_COMMAND, REJECT_COMMAND),
                    all: (all, format!("{agent}: reject all")),
                    all_commands: (ACCEPT_ALL_COMMAND, REJECT_ALL_COMMAND),
                }
            }
            ViewKind::Written => Self {
                one: (
                    format!("{agent}: keep this change"),
                    format!("{agent}: revert this change"),
                ),
                one_commands: (KEEP_COMMAND, REVERT_COMMAND),
                all: (format!("{agent}: keep all"), format!("{agent}: revert all")),
                all_commands: (KEEP_ALL_COMMAND, REVERT_ALL_COMMAND),
            },
        }
    }
}

/// A hunk as a diagnostic of `doc`: its lines' range (a zero-width one at
/// the line for an insertion of a review, or a deletion written), line
/// ends excluded, in the stream's encoding.
fn hunk_diagnostic(
    review: &ReviewView,
    hunk: &HunkView,
    doc: &MirrorDoc,
    encoding: PositionEncoding,
) -> Value {
    let lines = doc.text.len_lines();
    let last = u32::try_from(lines.saturating_sub(1)).unwrap_or(u32::MAX);
    let start_line = hunk.start_line.min(last);
    let (end_line, end_character) = if hunk.old_len == 0 {
        (start_line, 0)
    } else {
        let end = (hunk.start_line + hunk.old_len - 1).min(last);
        (end, line_length(&doc.text, end, encoding))
    };
    json!({
        "range": {
            "start": {"line": start_line, "character": 0},
            "end": {"line": end_line, "character": end_character},
        },
        "severity": 3,
        "source": review.agent.source(),
        "code": match review.kind {
            ViewKind::Review => "claude-edit",
            ViewKind::Written => "claude-written",
        },
        "message": hunk.message,
        "data": {"ideMcpReview": [review.diff, review.rev, hunk.index]},
    })
}
