//! Claude's proposed edits under review, as one stream's editor sees them.
//!
//! The host decides what is pending ([`Overlay`]: for each file, the hunks
//! not decided yet, by whole lines) and sends it to every proxy; the
//! observer shows the hunks of the documents its stream has open:
//! - as diagnostics (severity Information, `source: "Claude Code"`) merged
//!   into the server's own `publishDiagnostics` and pull answers, and
//!   published again (the server's own plus the hunks) whenever the overlay
//!   changes, so that withdrawing hunks puts the server's diagnostics back,
//!   never an empty list over them;
//! - as code actions merged into the server's `codeAction` answers: accept
//!   or reject the hunk under the range, accept or reject all;
//! - with Claude's hunks stripped from a `codeAction` request's
//!   `context.diagnostics` before the server sees it.
//!
//! The actions' commands have fixed names, advertised in the server's
//! `executeCommandProvider`; the diff, its revision and the hunk go in the
//! arguments. The observer answers them in the server's place and emits
//! [`WorkspaceEvent::Review`]; the host's observer of the same stream sees
//! the same command and decides.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use lsp_types::Range;
use ropey::Rope;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::envelope::append_to_array;
use super::{MirrorDoc, Observer};
use crate::framing::Message;
use crate::mirror::PositionEncoding;
use crate::workspace::WorkspaceEvent;

/// The `source` of Claude's hunk diagnostics.
pub const REVIEW_SOURCE: &str = "Claude Code";
/// Accepts one hunk: arguments `[diff, rev, hunk]`.
pub const ACCEPT_COMMAND: &str = "ide-mcp.review.accept";
/// Rejects one hunk: arguments `[diff, rev, hunk]`.
pub const REJECT_COMMAND: &str = "ide-mcp.review.reject";
/// Accepts every hunk left: arguments `[diff]`.
pub const ACCEPT_ALL_COMMAND: &str = "ide-mcp.review.acceptAll";
/// Rejects every hunk left: arguments `[diff]`.
pub const REJECT_ALL_COMMAND: &str = "ide-mcp.review.rejectAll";
/// The review's commands, as advertised.
pub const REVIEW_COMMANDS: [&str; 4] = [
    ACCEPT_COMMAND,
    REJECT_COMMAND,
    ACCEPT_ALL_COMMAND,
    REJECT_ALL_COMMAND,
];

/// Every review pending, as the host sends it to its proxies.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overlay {
    /// One per file with a pending review.
    pub reviews: Vec<ReviewView>,
}

/// One file's pending review.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewView {
    /// The file.
    pub path: PathBuf,
    /// The review's id.
    pub diff: u64,
    /// Its revision: the hunks are recomputed when the document changes,
    /// and a command of an older revision is ignored.
    pub rev: u64,
    /// The hunks not decided yet.
    pub hunks: Vec<HunkView>,
}

/// One hunk, by whole lines of the document's current text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HunkView {
    /// Its index among the review's hunks of this revision.
    pub index: usize,
    /// The first line it replaces (zero-based).
    pub start_line: u32,
    /// How many lines it replaces (0: an insertion before `start_line`).
    pub old_len: u32,
    /// The diagnostic's message: the change and the proposed lines.
    pub message: String,
}

/// What the user decided in the editor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// One hunk of a revision.
    One {
        /// The review.
        diff: u64,
        /// The revision the action was made for.
        rev: u64,
        /// The hunk.
        index: usize,
        /// Accepted or rejected.
        accept: bool,
    },
    /// Every hunk left.
    All {
        /// The review.
        diff: u64,
        /// Accepted or rejected.
        accept: bool,
    },
}

impl Decision {
    /// The decision a review command with `arguments` stands for; `None` for
    /// another command or arguments of the wrong shape.
    pub fn of_command(command: &str, arguments: &[Value]) -> Option<Self> {
        let number = |i: usize| arguments.get(i).and_then(Value::as_u64);
        match command {
            ACCEPT_COMMAND | REJECT_COMMAND => Some(Self::One {
                diff: number(0)?,
                rev: number(1)?,
                index: usize::try_from(number(2)?).ok()?,
                accept: command == ACCEPT_COMMAND,
            }),
            ACCEPT_ALL_COMMAND | REJECT_ALL_COMMAND => Some(Self::All {
                diff: number(0)?,
                accept: command == ACCEPT_ALL_COMMAND,
            }),
            _ => None,
        }
    }
}

/// From this size on, the forwarding path does not parse an editor message
/// to know whether it may need a verdict ([`Interest::may_need_verdict`]).
pub const UNPARSED_FROM: usize = 64 * 1024;

/// Whether the observer's verdict matters beyond the few messages that
/// always need one; read by the hand-off on the forwarding path, so it is
/// a flag, not a lock.
#[derive(Debug, Default)]
pub struct Interest {
    reviewing: AtomicBool,
    /// When the IDE last sent the server a message of its own (a live LSP
    /// tool's request), in milliseconds since [`Interest::clock`]'s start
    /// (0: never).
    asked_at: std::sync::atomic::AtomicU64,
}

/// How long after the IDE's last message to the server its answers are
/// looked for among the server's messages (well past
/// [`SERVER_REQUEST_TIMEOUT`](crate::workspace::SERVER_REQUEST_TIMEOUT)).
pub const ANSWERS_AWAITED: std::time::Duration = std::time::Duration::from_mins(1);

impl Interest {
    /// Whether the verdict on an editor message with `method` (`None`: a
    /// response) may be other than forwarding it: a response (to the IDE's
    /// own requests), our commands, and code action requests while a
    /// review is pending (Claude's hunks are stripped from their context).
    pub fn editor_verdict(&self, method: Option<&str>) -> bool {
        match method {
            None | Some("workspace/executeCommand") => true,
            Some("textDocument/codeAction") => self.reviewing(),
            Some(_) => false,
        }
    }

    /// Whether an editor message read but not parsed (a large one) may need
    /// a verdict: our commands and responses (to the IDE's own requests,
    /// which carry no `"method"`) may; a large notification (a `didOpen`
    /// or `didChange` of a big document) never does, and is forwarded
    /// before it is observed. Small messages are always observed first:
    /// the check would cost more than it saves.
    pub fn may_need_verdict(body: &[u8]) -> bool {
        body.len() < UNPARSED_FROM
            || memchr::memmem::find(body, b"workspace/executeCommand").is_some()
            || memchr::memmem::find(body, b"\"method\"").is_none()
    }

    /// Whether the observer matches the answer to an editor request with
    /// `method` to it (and may change it): code actions, pulled
    /// diagnostics, `initialize`.
    pub fn answered_specially(method: &str) -> bool {
        matches!(
            method,
            "textDocument/codeAction" | "textDocument/diagnostic" | "initialize"
        )
    }

    /// Whether the verdict on a server notification or request with
    /// `method` may be other than forwarding it: pushed diagnostics while a
    /// review is pending (the hunks are merged in).
    pub fn server_verdict(&self, method: &str) -> bool {
        method == "textDocument/publishDiagnostics" && self.reviewing()
    }

    fn clock() -> u64 {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        let start = START.get_or_init(std::time::Instant::now);
        u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX) + 1
    }

    /// The IDE sent the server a request of its own: for a while, the
    /// server's answers need a verdict (the IDE's are not forwarded).
    pub fn asked_server(&self) {
        self.asked_at.store(Self::clock(), Ordering::Release);
    }

    /// Whether the server may be answering a request of the IDE's (one was
    /// sent within [`ANSWERS_AWAITED`]).
    pub fn awaiting_answers(&self) -> bool {
        let at = self.asked_at.load(Ordering::Acquire);
        let awaited = u64::try_from(ANSWERS_AWAITED.as_millis()).unwrap_or(u64::MAX);
        at != 0 && Self::clock().saturating_sub(at) < awaited
    }

    /// Whether a server's response with `id` (its JSON text) answers a
    /// request of the IDE's: such answers are never forwarded.
    pub fn answers_ours(id: &str) -> bool {
        serde_json::from_str::<std::borrow::Cow<'_, str>>(id)
            .is_ok_and(|id| crate::workspace::servers::our_request(&id).is_some())
    }

    /// Whether a review is pending: diagnostics and code action requests
    /// then need the observer's verdict.
    pub fn reviewing(&self) -> bool {
        self.reviewing.load(Ordering::Acquire)
    }

    /// Sets [`reviewing`](Self::reviewing).
    pub fn set_reviewing(&self, reviewing: bool) {
        self.reviewing.store(reviewing, Ordering::Release);
    }
}

/// What the observer keeps for the review: the overlay, and the server's
/// last diagnostics of each document (as it sent them), to publish them
/// again with or without the hunks.
#[derive(Debug, Default)]
pub(super) struct ReviewState {
    overlay: Overlay,
    /// By URI: the version and the `diagnostics` array's JSON text.
    server_last: std::collections::HashMap<String, (Option<i32>, String)>,
}

/// A `publishDiagnostics`'s params, the diagnostics left as text.
#[derive(Deserialize)]
struct RawPublish<'a> {
    uri: String,
    #[serde(default)]
    version: Option<i32>,
    #[serde(borrow)]
    diagnostics: &'a RawValue,
}

impl ReviewState {
    fn review_of(&self, path: &Path) -> Option<&ReviewView> {
        self.overlay
            .reviews
            .iter()
            .find(|r| r.path == path && !r.hunks.is_empty())
    }
}

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
        diagnostics.retain(|d| d["source"] != REVIEW_SOURCE);
        (diagnostics.len() != before).then_some(params)
    }

    /// The review's actions for a code action request on `range` of `uri`:
    /// accept or reject each hunk the range touches, then accept or reject
    /// all.
    pub(super) fn review_actions(&self, uri: &str, range: Range) -> Vec<Vec<u8>> {
        let Some(review) = self.review_of_uri(uri) else {
            return Vec::new();
        };
        let (first, last) = if range.end < range.start {
            (range.end.line, range.start.line)
        } else {
            (range.start.line, range.end.line)
        };
        let mut actions = Vec::new();
        for hunk in &review.hunks {
            let end = hunk.start_line + hunk.old_len.max(1) - 1;
            if hunk.start_line <= last && first <= end {
                let arguments = json!([review.diff, review.rev, hunk.index]);
                actions.push(self.action("Claude: accept this change", ACCEPT_COMMAND, &arguments));
                actions.push(self.action("Claude: reject this change", REJECT_COMMAND, &arguments));
            }
        }
        let n = review.hunks.len();
        let all = if n == 1 {
            "Claude: accept the 1 change".to_owned()
        } else {
            format!("Claude: accept all {n} changes")
        };
        let diff = json!([review.diff]);
        actions.push(self.action(&all, ACCEPT_ALL_COMMAND, &diff));
        actions.push(self.action("Claude: reject all", REJECT_ALL_COMMAND, &diff));
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

/// A hunk as a diagnostic of `doc`: its old lines' range (a zero-width one
/// at the line for an insertion), in the stream's encoding.
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
        "source": REVIEW_SOURCE,
        "code": "claude-edit",
        "message": hunk.message,
        "data": {"ideMcpReview": [review.diff, review.rev, hunk.index]},
    })
}

/// The length of line `line` of `text` without its terminator, in
/// `encoding`'s units.
pub(crate) fn line_length(text: &Rope, line: u32, encoding: PositionEncoding) -> u32 {
    let Some(slice) = text.get_line(line as usize) else {
        return 0;
    };
    let content: String = slice.chars().filter(|c| *c != '\n' && *c != '\r').collect();
    let len = match encoding {
        PositionEncoding::Utf8 => content.len(),
        PositionEncoding::Utf16 => content.encode_utf16().count(),
        PositionEncoding::Utf32 => content.chars().count(),
    };
    u32::try_from(len).unwrap_or(u32::MAX)
}
