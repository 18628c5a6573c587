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
//! [`WorkspaceEvent::Review`](crate::workspace::WorkspaceEvent::Review); the host's observer of the same stream sees
//! the same command and decides.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use ide_mcp_tools::Agent;

/// The `source` of Claude's hunk diagnostics (another agent's are its
/// [`Agent::source`]).
pub const REVIEW_SOURCE: &str = "Claude Code";
/// Accepts one hunk: arguments `[diff, rev, hunk]`.
pub const ACCEPT_COMMAND: &str = "ide-mcp.review.accept";
/// Rejects one hunk: arguments `[diff, rev, hunk]`.
pub const REJECT_COMMAND: &str = "ide-mcp.review.reject";
/// Accepts every hunk left: arguments `[diff]`.
pub const ACCEPT_ALL_COMMAND: &str = "ide-mcp.review.acceptAll";
/// Rejects every hunk left: arguments `[diff]`.
pub const REJECT_ALL_COMMAND: &str = "ide-mcp.review.rejectAll";
/// Keeps one change written without a review: arguments `[diff, rev, hunk]`.
pub const KEEP_COMMAND: &str = "ide-mcp.written.keep";
/// Reverts one change written without a review in the editor's buffer:
/// arguments `[diff, rev, hunk]`.
pub const REVERT_COMMAND: &str = "ide-mcp.written.revert";
/// Keeps every change of a write: arguments `[diff]`.
pub const KEEP_ALL_COMMAND: &str = "ide-mcp.written.keepAll";
/// Reverts every change of a write left: arguments `[diff]`.
pub const REVERT_ALL_COMMAND: &str = "ide-mcp.written.revertAll";
/// The commands of reviews and of changes written without one, as
/// advertised.
pub const REVIEW_COMMANDS: [&str; 8] = [
    ACCEPT_COMMAND,
    REJECT_COMMAND,
    ACCEPT_ALL_COMMAND,
    REJECT_ALL_COMMAND,
    KEEP_COMMAND,
    REVERT_COMMAND,
    KEEP_ALL_COMMAND,
    REVERT_ALL_COMMAND,
];

/// Every review pending, as the host sends it to its proxies.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overlay {
    /// One per file with a pending review.
    pub reviews: Vec<ReviewView>,
}

/// What a [`ReviewView`] shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ViewKind {
    /// A proposed edit waiting for the user's decisions (`openDiff`): the
    /// hunks are the lines the proposal would replace.
    #[default]
    Review,
    /// A write made without a review (auto mode), already in the buffer:
    /// the hunks are the new lines, to keep or to revert.
    Written,
}

/// One file's pending review, or the changes of a write made without one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewView {
    /// A review, or a write shown after the fact.
    #[serde(default)]
    pub kind: ViewKind,
    /// The agent whose edit it is.
    #[serde(default)]
    pub agent: Agent,
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

/// What the user decided in the editor: of a review, accept or reject; of
/// a write shown after the fact, keep (`accept`) or revert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// One hunk of a revision.
    One {
        /// The review, or the write.
        diff: u64,
        /// The revision the action was made for.
        rev: u64,
        /// The hunk.
        index: usize,
        /// Accepted (kept) or rejected (reverted).
        accept: bool,
    },
    /// Every hunk left.
    All {
        /// The review, or the write.
        diff: u64,
        /// Accepted (kept) or rejected (reverted).
        accept: bool,
    },
}

impl Decision {
    /// The decision a review command with `arguments` stands for; `None` for
    /// another command or arguments of the wrong shape.
    pub fn of_command(command: &str, arguments: &[Value]) -> Option<Self> {
        let number = |i: usize| arguments.get(i).and_then(Value::as_u64);
        match command {
            ACCEPT_COMMAND | REJECT_COMMAND | KEEP_COMMAND | REVERT_COMMAND => Some(Self::One {
                diff: number(0)?,
                rev: number(1)?,
                index: usize::try_from(number(2)?).ok()?,
                accept: command == ACCEPT_COMMAND || command == KEEP_COMMAND,
            }),
            ACCEPT_ALL_COMMAND | REJECT_ALL_COMMAND | KEEP_ALL_COMMAND | REVERT_ALL_COMMAND => {
                Some(Self::All {
                    diff: number(0)?,
                    accept: command == ACCEPT_ALL_COMMAND || command == KEEP_ALL_COMMAND,
                })
            }
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
    pub(super) overlay: Overlay,
    /// By URI: the version and the `diagnostics` array's JSON text.
    pub(super) server_last: std::collections::HashMap<String, (Option<i32>, String)>,
}

/// A `publishDiagnostics`'s params, the diagnostics left as text.
#[derive(Deserialize)]
pub(super) struct RawPublish<'a> {
    pub(super) uri: String,
    #[serde(default)]
    pub(super) version: Option<i32>,
    #[serde(borrow)]
    pub(super) diagnostics: &'a RawValue,
}

impl ReviewState {
    /// What `path` shows: its pending review, else the changes of a write
    /// shown after the fact (the host never sends both for one file).
    pub(super) fn review_of(&self, path: &Path) -> Option<&ReviewView> {
        self.overlay
            .reviews
            .iter()
            .find(|r| r.path == path && !r.hunks.is_empty())
    }
}
