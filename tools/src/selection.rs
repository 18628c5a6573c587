//! Pushing the selection to clients: `selection_changed` (debounced) and
//! `at_mentioned`; and, when the open documents change with it,
//! `notifications/resources/list_changed`.
//!
//! The `claude` CLI learns the user's selection only from these
//! notifications, never by calling `getCurrentSelection`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ide_mcp_runtime::Notifier;
use serde::Serialize;
use tokio::sync::mpsc;

use crate::context::EditorPorts;
use crate::current_selection::SelectionState;
use crate::deny::DenyRules;
use crate::uri::LossyPath;

/// The notification that carries the selection.
const SELECTION_CHANGED: &str = "selection_changed";

/// The MCP notification that the resources' list changed: the open
/// documents are resources (`crate::documents`), and the `claude` CLI
/// lists them again on it, so that a file opened after it connected can be
/// `@`-mentioned.
const RESOURCES_CHANGED: &str = "notifications/resources/list_changed";

/// How long the selection must stay still before `selection_changed` is sent.
///
/// Typing and dragging change the selection many times a second; one
/// notification per pause is what the CLI needs.
pub const SELECTION_DEBOUNCE: Duration = Duration::from_millis(100);

/// Sends `selection_changed` to every connected client when the host reports
/// that the selection or the active buffer changed.
///
/// The host calls [`selection_changed`](Self::selection_changed) on every
/// change (cheap, never blocks). When no change has been reported for the
/// debounce interval, a background task reads the active selection from the
/// [`EditorPorts`] and sends it, built by the same code as
/// `getCurrentSelection`: a burst coalesces into one notification carrying
/// the last state. Nothing is sent while no file-backed buffer is active.
///
/// The last state is kept as the notifier's latest `selection_changed`
/// ([`Notifier::notify_latest`]): every client that connects later receives
/// it, when it reports ready and once more a moment later, because the
/// `claude` CLI drops what arrives before its UI listens. A host reports the
/// initial selection once; it need not watch for new clients.
///
/// A change that opens or closes a file-backed document (hosts report
/// opening and closing as changes of the active buffer) also sends
/// `notifications/resources/list_changed`, once per debounced change.
///
/// Nothing of a file the context's deny rules hide is sent: a selection
/// in it is no selection (the last one is forgotten, not kept for later
/// clients), an `at_mentioned` of it is not sent, and its opening or
/// closing changes no resources. A change of the rules is a change too.
///
/// The task ends when the publisher is dropped (after sending a pending change).
#[derive(Debug)]
pub struct SelectionPublisher {
    changed: mpsc::Sender<()>,
    notifier: Notifier,
    deny: Arc<DenyRules>,
}

impl SelectionPublisher {
    /// Starts a publisher with the [`SELECTION_DEBOUNCE`] interval. Must be
    /// called within a Tokio runtime (`Handle::enter` from elsewhere).
    pub fn spawn(notifier: Notifier, cx: EditorPorts) -> Self {
        Self::spawn_with_debounce(notifier, cx, SELECTION_DEBOUNCE)
    }

    /// Starts a publisher that waits `interval` after the last change.
    pub fn spawn_with_debounce(notifier: Notifier, cx: EditorPorts, interval: Duration) -> Self {
        // One slot: a pending change is a flag, later ones add nothing.
        let (changed, rx) = mpsc::channel(1);
        let deny = cx.deny_rules_arc();
        tokio::spawn(run(rx, notifier.clone(), cx, interval));
        Self {
            changed,
            notifier,
            deny,
        }
    }

    /// Reports that the selection or the active buffer changed.
    pub fn selection_changed(&self) {
        // Full: a change is already pending, which covers this one.
        let _ = self.changed.try_send(());
    }

    /// Sends `at_mentioned` at once: asks the CLI to insert an `@file#Lx-y`
    /// mention of `file_path` (lines zero-based, optional) into its prompt.
    /// Returns how many clients it was queued for: none when the deny
    /// rules hide the file.
    pub fn at_mentioned(
        &self,
        file_path: &Path,
        line_start: Option<u32>,
        line_end: Option<u32>,
    ) -> usize {
        if self.deny.hides(file_path) {
            tracing::debug!("at_mentioned of a file the deny rules hide: not sent");
            return 0;
        }
        self.notifier.notify(
            "at_mentioned",
            &at_mentioned_params(file_path, line_start, line_end),
        )
    }
}

/// The params of `at_mentioned`: `{"filePath", "lineStart"?, "lineEnd"?}`.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AtMentioned<'a> {
    /// The file's absolute path.
    pub file_path: LossyPath<'a>,
    /// The first line, zero-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_start: Option<u32>,
    /// The last line, zero-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_end: Option<u32>,
}

/// Builds the `at_mentioned` params.
pub fn at_mentioned_params(
    file_path: &Path,
    line_start: Option<u32>,
    line_end: Option<u32>,
) -> AtMentioned<'_> {
    AtMentioned {
        file_path: LossyPath(file_path),
        line_start,
        line_end,
    }
}

async fn run(
    mut changed: mpsc::Receiver<()>,
    notifier: Notifier,
    cx: EditorPorts,
    interval: Duration,
) {
    let mut open = open_documents(&cx);
    let mut rules = cx.deny_rules().subscribe();
    let mut rules_live = true;
    loop {
        tokio::select! {
            change = changed.recv() => if change.is_none() { return },
            alive = rules.changed(), if rules_live => rules_live = alive.is_ok(),
        }
        // Wait until the selection has been still for `interval`.
        let last = loop {
            match tokio::time::timeout(interval, changed.recv()).await {
                Ok(Some(())) => {}
                Ok(None) => break true,
                Err(_elapsed) => break false,
            }
        };
        publish(&notifier, &cx);
        let now = open_documents(&cx);
        if now != open {
            notifier.notify(RESOURCES_CHANGED, &serde_json::json!({}));
            open = now;
        }
        if last {
            return;
        }
    }
}

/// The open file-backed documents' paths, sorted: what the resources list.
fn open_documents(cx: &EditorPorts) -> Vec<std::sync::Arc<Path>> {
    let mut paths: Vec<_> = cx
        .editor()
        .map(crate::ports::EditorAccess::open_buffers)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|buffer| buffer.path)
        .filter(|path| !cx.hides(path))
        .collect();
    paths.sort_unstable();
    paths
}

/// Sends the selection as the notifier's latest state of
/// `selection_changed`, so that clients connecting later get it too; with no
/// active file, sends nothing and forgets the last one.
fn publish(notifier: &Notifier, cx: &EditorPorts) {
    let state = SelectionState::read(cx);
    match state.params() {
        Some(params) => {
            notifier.notify_latest(SELECTION_CHANGED, &params);
        }
        None => notifier.forget_latest(SELECTION_CHANGED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryWorkspace;
    use crate::ports::BufferId;
    use lsp_types::Position;

    fn workspace() -> MemoryWorkspace {
        let ws = MemoryWorkspace::new();
        ws.open(
            BufferId(1),
            Some(Path::new("/ws/a.rs")),
            "rust",
            "fn main() {\n    let x = 1;\n}\n",
        );
        ws
    }

    fn text(bytes: &[u8]) -> String {
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_coalesces_into_its_last_state() {
        let ws = workspace();
        let notifier = Notifier::new();
        let mut client = notifier.subscribe();
        let publisher = SelectionPublisher::spawn(notifier, ws.editor_ports().build());

        // A drag: 20 changes 10 ms apart, each well within the interval.
        for i in 0..20 {
            ws.select(
                BufferId(1),
                Position::new(1, 4),
                Position::new(1, 4 + i % 10),
            );
            publisher.selection_changed();
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        ws.select(BufferId(1), Position::new(1, 8), Position::new(1, 13));
        publisher.selection_changed();
        assert!(
            client.try_recv().is_err(),
            "nothing is sent during the burst"
        );

        tokio::time::sleep(SELECTION_DEBOUNCE * 2).await;
        let sent = client.try_recv().expect("one notification after the burst");
        assert_eq!(
            text(&sent),
            r#"{"jsonrpc":"2.0","method":"selection_changed","params":{"text":"x = 1","filePath":"/ws/a.rs","fileUrl":"file:///ws/a.rs","selection":{"start":{"line":1,"character":8},"end":{"line":1,"character":13},"isEmpty":false}}}"#
        );
        assert!(client.try_recv().is_err(), "exactly one");

        // Switching to a buffer with a bare cursor: empty text, a second notification.
        ws.open(BufferId(2), Some(Path::new("/ws/b.rs")), "rust", "b");
        ws.editor.set_active(Some(BufferId(2)));
        publisher.selection_changed();
        tokio::time::sleep(SELECTION_DEBOUNCE * 2).await;
        let sent = client.try_recv().unwrap();
        assert!(
            text(&sent).contains(r#""text":"","filePath":"/ws/b.rs""#),
            "{}",
            text(&sent)
        );
        assert!(text(&sent).contains(r#""isEmpty":true"#));
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_is_sent_without_an_active_file() {
        let ws = workspace();
        let notifier = Notifier::new();
        let mut client = notifier.subscribe();
        let publisher = SelectionPublisher::spawn(notifier, ws.editor_ports().build());
        publisher.selection_changed();
        tokio::time::sleep(SELECTION_DEBOUNCE * 2).await;
        assert!(client.try_recv().is_err());

        // A pending change is still sent when the publisher is dropped.
        ws.select(BufferId(1), Position::new(0, 0), Position::new(0, 2));
        publisher.selection_changed();
        drop(publisher);
        tokio::time::sleep(SELECTION_DEBOUNCE * 2).await;
        assert!(text(&client.try_recv().unwrap()).contains(r#""text":"fn""#));
    }

    #[tokio::test(start_paused = true)]
    async fn the_last_selection_is_kept_for_later_clients_and_forgotten_without_a_file() {
        let ws = workspace();
        let notifier = Notifier::new();
        let publisher = SelectionPublisher::spawn(notifier.clone(), ws.editor_ports().build());
        ws.select(BufferId(1), Position::new(0, 0), Position::new(0, 2));
        publisher.selection_changed();
        tokio::time::sleep(SELECTION_DEBOUNCE * 2).await;
        // No client was connected; a server replays this to those that come.
        let latest = notifier.latest();
        assert_eq!(latest.len(), 1);
        assert!(text(&latest[0]).contains(r#""text":"fn""#));

        ws.editor.set_active(None);
        publisher.selection_changed();
        tokio::time::sleep(SELECTION_DEBOUNCE * 2).await;
        assert!(notifier.latest().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn opening_and_closing_a_file_says_the_resources_changed_once() {
        let ws = workspace();
        let notifier = Notifier::new();
        let mut client = notifier.subscribe();
        let publisher = SelectionPublisher::spawn(notifier, ws.editor_ports().build());
        let sent = |client: &mut mpsc::Receiver<_>| {
            std::iter::from_fn(|| client.try_recv().ok())
                .map(|bytes: ide_mcp_runtime::notify::NotificationBytes| {
                    let message: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                    message["method"].as_str().unwrap().to_owned()
                })
                .collect::<Vec<_>>()
        };
        // A selection that opens nothing: no resources change.
        ws.select(BufferId(1), Position::new(0, 0), Position::new(0, 2));
        publisher.selection_changed();
        tokio::time::sleep(SELECTION_DEBOUNCE * 2).await;
        assert_eq!(sent(&mut client), ["selection_changed"]);

        // Two files opened in one burst: one notification.
        ws.open(BufferId(2), Some(Path::new("/ws/b.rs")), "rust", "b");
        publisher.selection_changed();
        ws.open(BufferId(3), Some(Path::new("/ws/c.rs")), "rust", "c");
        publisher.selection_changed();
        tokio::time::sleep(SELECTION_DEBOUNCE * 2).await;
        assert_eq!(
            sent(&mut client),
            ["selection_changed", "notifications/resources/list_changed"]
        );

        ws.close(BufferId(3));
        publisher.selection_changed();
        tokio::time::sleep(SELECTION_DEBOUNCE * 2).await;
        assert!(sent(&mut client).contains(&"notifications/resources/list_changed".to_owned()));

        // A buffer without a file is no resource.
        ws.open(BufferId(4), None, "markdown", "scratch");
        publisher.selection_changed();
        tokio::time::sleep(SELECTION_DEBOUNCE * 2).await;
        assert!(!sent(&mut client).contains(&"notifications/resources/list_changed".to_owned()));
    }

    #[test]
    fn at_mentioned_sends_at_once() {
        let notifier = Notifier::new();
        let mut client = notifier.subscribe();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = rt.enter();
        let publisher = SelectionPublisher::spawn(notifier, EditorPorts::empty());
        assert_eq!(
            publisher.at_mentioned(Path::new("/ws/a.rs"), Some(1), Some(2)),
            1
        );
        assert_eq!(
            text(&client.try_recv().unwrap()),
            r#"{"jsonrpc":"2.0","method":"at_mentioned","params":{"filePath":"/ws/a.rs","lineStart":1,"lineEnd":2}}"#
        );
        publisher.at_mentioned(Path::new("/ws/a.rs"), None, None);
        assert!(
            text(&client.try_recv().unwrap()).ends_with(r#""params":{"filePath":"/ws/a.rs"}}"#)
        );
    }
}
