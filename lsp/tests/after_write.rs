//! Writes to open files, as the host shows them: reloaded by content (the
//! second write like the first, whatever the editor's modified flag says),
//! never over unsaved work, with each changed hunk marked to keep or to
//! revert, the markers dismissed by typing, and none for a reviewed write;
//! and the edit the host makes for an agent that writes a proposal whole or
//! not at all (Copilot): the hunks its user accepted put into the buffer,
//! unsaved.

mod support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ide_mcp_lsp::host::reload::{self, Reloader};
use ide_mcp_lsp::host::review::Reviews;
use ide_mcp_lsp::observer::overlay::{Overlay, ViewKind};
use ide_mcp_lsp::{ClientVerdict, LspWorkspace};
use ide_mcp_tools::{DiffOutcome, DiffReview as _, OpenDiffRequest};
use serde_json::{Value, json};
use support::{Stream, neovim_initialize, range_json, tool};
use tokio::sync::watch;

/// A generous bound for what takes milliseconds: only a hang reaches it.
const BOUND: Duration = Duration::from_secs(30);

const BEFORE: &str = "int a;\nint b;\nint c;\n";

struct Host {
    _dir: tempfile::TempDir,
    path: PathBuf,
    uri: String,
    ws: Arc<LspWorkspace>,
    s: Stream,
    reviews: Reviews,
    reloader: Reloader,
    overlay: watch::Receiver<Arc<Overlay>>,
    version: i32,
}

impl Drop for Host {
    fn drop(&mut self) {
        self.reloader.abort();
    }
}

/// A host whose editor (named `editor`) has `a.c` open, clean, and seen by
/// the reloader.
async fn host(editor: &str) -> Host {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.c");
    std::fs::write(&path, BEFORE).unwrap();
    let uri = format!("file://{}", path.display());
    let ws = Arc::new(LspWorkspace::new());
    let mut s = Stream::new(&ws);
    let mut init = neovim_initialize(&dir.path().display().to_string());
    init["clientInfo"]["name"] = json!(editor);
    init["capabilities"]["workspace"]["workspaceEdit"] = json!({"documentChanges": true});
    s.request(1, "initialize", init);
    s.answer(
        1,
        json!({"capabilities": {"textDocumentSync": {"change": 2, "save": true}}}),
    );
    s.open(&uri, "c", 0, BEFORE);
    let reviews = Reviews::new(Arc::clone(&ws));
    reviews.spawn();
    let reloader = reload::spawn(Arc::clone(&ws), reviews.clone(), true);
    let overlay = reviews.overlay();
    let host = Host {
        _dir: dir,
        path,
        uri,
        ws,
        s,
        reviews,
        reloader,
        overlay,
        version: 0,
    };
    host.rounds(2).await;
    host
}

impl Host {
    /// Waits until the reloader has looked at the open files `n` more
    /// times.
    async fn rounds(&self, n: u64) {
        let mut rounds = self.reloader.rounds();
        let from = *rounds.borrow_and_update();
        tokio::time::timeout(BOUND, rounds.wait_for(|&r| r >= from + n))
            .await
            .expect("the reloader runs")
            .unwrap();
    }

    /// The next message toward the editor.
    async fn sent(&mut self) -> Value {
        let message = tokio::time::timeout(BOUND, self.s.outgoing.recv())
            .await
            .expect("a message toward the editor")
            .unwrap();
        serde_json::from_slice(message.body()).unwrap()
    }

    /// Claude writes `text`; the editor is asked to apply an edit, which it
    /// does: answered, then its `didChange` of the whole text.
    async fn write_and_apply(&mut self, text: &str) -> Value {
        std::fs::write(&self.path, text).unwrap();
        let request = self.sent().await;
        assert_eq!(request["method"], "workspace/applyEdit", "{request}");
        self.applied(&request, text);
        request
    }

    /// The editor applied `request` (making the buffer `text`).
    fn applied(&mut self, request: &Value, text: &str) {
        let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"applied": true}});
        assert_eq!(self.s.client(answer), ClientVerdict::Drop);
        self.replace(text);
    }

    /// The editor's `didChange` of the whole text.
    fn replace(&mut self, text: &str) {
        self.version += 1;
        self.s.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": self.uri, "version": self.version},
                   "contentChanges": [{"text": text}]}),
        );
    }

    /// Waits for the overlay to satisfy `f`, and returns it.
    async fn overlay_until(&mut self, f: impl Fn(&Overlay) -> bool) -> Arc<Overlay> {
        let Ok(overlay) = tokio::time::timeout(BOUND, self.overlay.wait_for(|o| f(o))).await else {
            panic!("the overlay stays {:?}", self.overlay.borrow());
        };
        let overlay = overlay.unwrap();
        Arc::clone(&overlay)
    }

    /// The markers of `path`'s write, once shown: (first line, lines,
    /// message).
    async fn markers(&mut self) -> (u64, Vec<(u32, u32, String)>) {
        let path = self.path.clone();
        let overlay = self
            .overlay_until(|o| {
                o.reviews
                    .iter()
                    .any(|r| r.path == path && r.kind == ViewKind::Written)
            })
            .await;
        let view = &overlay.reviews[0];
        let hunks = view
            .hunks
            .iter()
            .map(|h| (h.start_line, h.old_len, h.message.clone()))
            .collect();
        (view.diff, hunks)
    }

    async fn dirty(&self) -> bool {
        let cx = self.ws.editor_ports().build();
        let answer = tool(
            &cx,
            "checkDocumentDirty",
            json!({"filePath": self.path.display().to_string()}),
        )
        .await;
        answer["isDirty"].as_bool().unwrap()
    }

    fn text(&self) -> String {
        use ide_mcp_tools::BufferStore as _;
        self.ws
            .handle_for_path(&self.path)
            .unwrap()
            .snapshot()
            .text
            .to_string()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tenth_write_shows_like_the_first_and_each_is_marked() {
    let mut h = host("helix").await;
    let mut text = BEFORE.to_owned();
    for n in 1..=10 {
        let next = format!("{text}int n{n};\n");
        let request = h.write_and_apply(&next).await;
        // The edit is the new line alone, after the last line's text (not
        // on the empty line after it), on the buffer's version.
        let line = u32::try_from(text.lines().count()).unwrap();
        let end = u32::try_from(text.lines().last().unwrap().len()).unwrap();
        assert_eq!(
            request["params"]["edit"],
            json!({"documentChanges": [{
                "textDocument": {"uri": ide_mcp_tools::uri::encoded_file_uri(&h.path), "version": h.version - 1},
                "edits": [{"range": range_json(((line - 1, end), (line - 1, end))), "newText": format!("\nint n{n};")}]}]}),
            "write {n}"
        );
        assert_eq!(
            request["params"]["label"],
            json!("Claude Code: a.c changed on disk")
        );
        assert_eq!(
            h.markers().await.1,
            [(line, 1, "Claude inserted 1 line".to_owned())]
        );
        // Flagged modified by the editor, but the disk's text: clean.
        assert!(!h.dirty().await, "write {n}: isDirty");
        text = next;
    }
    assert_eq!(h.text(), text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsaved_work_is_never_reloaded_and_typing_dismisses_the_markers() {
    let mut h = host("helix").await;
    let first = "int a;\nint B;\nint c;\n";
    h.write_and_apply(first).await;
    let (diff, markers) = h.markers().await;
    assert_eq!(
        markers,
        [(
            1,
            1,
            "Claude replaced 1 line with 1 — was: int b;".to_owned()
        )]
    );
    // The user types: the markers go, and the buffer is dirty.
    h.replace("int a;\nint B;\nint c; // mine\n");
    h.overlay_until(|o| o.reviews.is_empty()).await;
    assert!(h.dirty().await);
    // A write now leaves the buffer alone, and marks nothing.
    std::fs::write(&h.path, "int z;\n").unwrap();
    h.rounds(3).await;
    assert!(
        h.s.outgoing.try_recv().is_err(),
        "no edit toward the editor"
    );
    assert!(h.overlay.borrow().reviews.is_empty());
    assert_eq!(h.text(), "int a;\nint B;\nint c; // mine\n");
    // Saved by the user (the disk's text is the buffer's), then written
    // again: reloaded, marked with a new id.
    std::fs::write(&h.path, "int a;\nint B;\nint c; // mine\n").unwrap();
    h.s.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": h.uri}}),
    );
    // A change is taken once it has stayed the same for a round.
    h.rounds(3).await;
    h.write_and_apply("int a;\nint B;\nint c; // mine\nint d;\n")
        .await;
    let (again, _) = h.markers().await;
    assert_ne!(again, diff);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_is_kept_or_reverted_in_the_buffer_only() {
    let mut h = host("helix").await;
    let written = "int a;\nint B;\nint c;\nint d;\n";
    h.write_and_apply(written).await;
    let (diff, markers) = h.markers().await;
    assert_eq!(markers.len(), 2);
    let overlay = h.overlay.borrow().as_ref().clone();
    h.s.observer.set_review(overlay);
    let published = h.sent().await;
    assert_eq!(
        published["params"]["diagnostics"][0],
        json!({"range": range_json(((1, 0), (1, 6))), "severity": 3, "source": "Claude Code",
               "code": "claude-written", "message": "Claude replaced 1 line with 1 — was: int b;",
               "data": {"ideMcpReview": [diff, 0, 0]}})
    );
    // The code actions on the first change: keep, revert, keep all, revert all.
    h.s.request(
        5,
        "textDocument/codeAction",
        json!({"textDocument": {"uri": h.uri}, "range": range_json(((1, 2), (1, 2))), "context": {"diagnostics": []}}),
    );
    let answer = h.s.answer(5, json!([]));
    let ide_mcp_lsp::ServerVerdict::Replace(answer) = answer else {
        panic!("{answer:?}")
    };
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    let titles: Vec<&str> = answer["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Claude: keep this change",
            "Claude: revert this change",
            "Claude: keep all",
            "Claude: revert all",
            "Send selection to Claude Code"
        ]
    );
    // Revert the first: one edit restoring its old line.
    let run = h.s.request(
        6,
        "workspace/executeCommand",
        json!({"command": "ide-mcp.written.revert", "arguments": [diff, 0, 0]}),
    );
    assert!(matches!(run, ClientVerdict::AnswerAll(_)), "{run:?}");
    let request = h.sent().await;
    assert_eq!(
        request["params"]["edit"]["documentChanges"][0]["textDocument"]["version"],
        json!(h.version)
    );
    assert_eq!(
        request["params"]["edit"]["documentChanges"][0]["edits"],
        json!([{"range": range_json(((1, 0), (2, 0))), "newText": "int b;\n"}])
    );
    h.applied(&request, "int a;\nint b;\nint c;\nint d;\n");
    // The other marker stays; the file on disk is untouched.
    let path = h.path.clone();
    h.overlay_until(|o| {
        o.reviews
            .iter()
            .any(|r| r.path == path && r.hunks.len() == 1 && r.hunks[0].start_line == 3)
    })
    .await;
    assert_eq!(std::fs::read_to_string(&h.path).unwrap(), written);
    assert!(h.dirty().await, "the buffer differs from the disk");
    // Keep the other: its marker goes, no edit.
    h.s.request(
        7,
        "workspace/executeCommand",
        json!({"command": "ide-mcp.written.keep", "arguments": [diff, 0, 1]}),
    );
    h.overlay_until(|o| o.reviews.is_empty()).await;
    assert!(
        h.s.outgoing.try_recv().is_err(),
        "no edit for a kept change"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewed_write_gets_no_markers() {
    let mut h = host("helix").await;
    let proposal = "int a;\nint B;\nint c;\nint D;\n";
    let review = h.reviews.open_diff(OpenDiffRequest {
        agent: ide_mcp_tools::Agent::Claude,
        path: h.path.clone(),
        new_contents: proposal.to_owned(),
        tab_name: "t".to_owned(),
    });
    let overlay = h
        .overlay_until(|o| o.reviews.iter().any(|r| r.kind == ViewKind::Review))
        .await;
    let diff = overlay.reviews[0].diff;
    h.s.observer.set_review(overlay.as_ref().clone());
    h.s.request(
        3,
        "workspace/executeCommand",
        json!({"command": "ide-mcp.review.accept", "arguments": [diff, 0, 0]}),
    );
    h.s.request(
        4,
        "workspace/executeCommand",
        json!({"command": "ide-mcp.review.reject", "arguments": [diff, 0, 1]}),
    );
    let composed = "int a;\nint B;\nint c;\n";
    assert_eq!(
        tokio::time::timeout(BOUND, review).await.unwrap(),
        Ok(DiffOutcome::Saved(composed.to_owned()))
    );
    // The CLI writes the composed text: shown, not marked.
    while h.s.outgoing.try_recv().is_ok() {}
    h.write_and_apply(composed).await;
    h.rounds(3).await;
    assert!(h.overlay.borrow().reviews.is_empty());
    // The next write, unreviewed, is marked.
    h.write_and_apply("int a;\nint B;\nint c;\nint e;\n").await;
    assert_eq!(h.markers().await.1.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_reloads_by_itself_gets_no_edit_and_the_markers_after() {
    for editor in ["Neovim", "kak-lsp", "emacs"] {
        let mut h = host(editor).await;
        std::fs::write(&h.path, "int a;\nint c;\n").unwrap();
        // The editor reloads (Neovim's autoread, Kakoune's autoreload,
        // Emacs's auto-revert), before or after the host sees the write.
        h.replace("int a;\nint c;\n");
        assert_eq!(
            h.markers().await.1,
            [(1, 0, "Claude deleted 1 line — was: int b;".to_owned())],
            "{editor}"
        );
        h.rounds(3).await;
        assert!(h.s.outgoing.try_recv().is_err(), "{editor}: no edit");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saving_or_closing_the_file_dismisses_the_markers() {
    let mut h = host("helix").await;
    h.write_and_apply("int a;\nint c;\n").await;
    h.markers().await;
    h.s.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": h.uri}}),
    );
    h.overlay_until(|o| o.reviews.is_empty()).await;
    h.write_and_apply("int a;\n").await;
    h.markers().await;
    h.s.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": h.uri}}),
    );
    h.overlay_until(|o| o.reviews.is_empty()).await;
    // Open again: nothing marked.
    h.s.open(&h.uri.clone(), "c", 9, "int a;\n");
    h.rounds(2).await;
    assert!(h.overlay.borrow().reviews.is_empty());
}

impl Host {
    /// Copilot proposes `proposal`; the user decides each hunk in turn
    /// (`true` accepts); the review's call.
    async fn copilot_review(
        &mut self,
        proposal: &str,
        decisions: &[bool],
    ) -> ide_mcp_tools::DiffFuture {
        let review = self.reviews.open_diff(OpenDiffRequest {
            agent: ide_mcp_tools::Agent::Copilot,
            path: self.path.clone(),
            new_contents: proposal.to_owned(),
            tab_name: "[Copilot CLI] - a.c (0a1b2c)".to_owned(),
        });
        let overlay = self
            .overlay_until(|o| o.reviews.iter().any(|r| r.kind == ViewKind::Review))
            .await;
        let diff = overlay.reviews[0].diff;
        assert_eq!(overlay.reviews[0].hunks.len(), decisions.len());
        self.s.observer.set_review(overlay.as_ref().clone());
        for (index, &accept) in decisions.iter().enumerate() {
            let command = if accept { "accept" } else { "reject" };
            self.s.request(
                10 + i64::try_from(index).unwrap(),
                "workspace/executeCommand",
                json!({"command": format!("ide-mcp.review.{command}"), "arguments": [diff, 0, index]}),
            );
        }
        review
    }

    /// The next `workspace/applyEdit` toward the editor (the review's
    /// prompt and markers go by).
    async fn apply_edit(&mut self) -> Value {
        loop {
            let sent = self.sent().await;
            if sent["method"] == "workspace/applyEdit" {
                return sent;
            }
        }
    }

    /// Whether any `workspace/applyEdit` is waiting toward the editor.
    fn no_apply_edit(&mut self) -> bool {
        std::iter::from_fn(|| self.s.outgoing.try_recv().ok())
            .map(|m| serde_json::from_slice::<Value>(m.body()).unwrap())
            .all(|m| m["method"] != "workspace/applyEdit")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_s_accepted_part_goes_into_the_buffer_unsaved() {
    let mut h = host("Neovim").await;
    let proposal = "int a;\nint B;\nint c;\nint D;\n";
    let review = h.copilot_review(proposal, &[true, false]).await;
    // The first hunk alone, by one versioned edit of the buffer.
    let request = h.apply_edit().await;
    assert_eq!(
        request["params"],
        json!({"label": "GitHub Copilot CLI: the accepted changes to a.c",
               "edit": {"documentChanges": [{
                   "textDocument": {"uri": ide_mcp_tools::uri::encoded_file_uri(&h.path), "version": h.version},
                   "edits": [{"range": range_json(((1, 0), (2, 0))), "newText": "int B;\n"}]}]}})
    );
    let chosen = "int a;\nint B;\nint c;\n";
    h.applied(&request, chosen);
    // Answered once the editor applied it: the CLI writes nothing.
    assert_eq!(
        tokio::time::timeout(BOUND, review).await.unwrap(),
        Ok(DiffOutcome::InBuffer)
    );
    assert_eq!(h.text(), chosen);
    assert_eq!(std::fs::read_to_string(&h.path).unwrap(), BEFORE);
    assert!(h.dirty().await, "unsaved");
    assert!(h.overlay.borrow().reviews.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_s_whole_proposal_or_nothing_leaves_the_buffer_alone() {
    let mut h = host("Neovim").await;
    let proposal = "int a;\nint B;\nint c;\nint D;\n";
    // All accepted: saved, for the CLI to write its proposal.
    let review = h.copilot_review(proposal, &[true, true]).await;
    assert_eq!(
        tokio::time::timeout(BOUND, review).await.unwrap(),
        Ok(DiffOutcome::Saved(proposal.to_owned()))
    );
    // All rejected: rejected.
    let review = h.copilot_review(proposal, &[false, false]).await;
    assert_eq!(
        tokio::time::timeout(BOUND, review).await.unwrap(),
        Ok(DiffOutcome::Rejected)
    );
    assert!(h.no_apply_edit(), "no edit of the buffer");
    assert_eq!(h.text(), BEFORE);
    assert!(!h.dirty().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_s_part_refused_by_the_editor_is_no_answer() {
    let mut h = host("Neovim").await;
    let review = h
        .copilot_review("int a;\nint B;\nint c;\nint D;\n", &[false, true])
        .await;
    let request = h.apply_edit().await;
    let refused = json!({"jsonrpc": "2.0", "id": request["id"],
                         "result": {"applied": false, "failureReason": "changed"}});
    assert_eq!(h.s.client(refused), ClientVerdict::Drop);
    let outcome = tokio::time::timeout(BOUND, review).await.unwrap();
    let message = outcome.unwrap_err();
    assert!(
        message.starts_with("the changes accepted in the editor could not be put into its buffer (the editor refused the edit: "),
        "{message}"
    );
    assert!(message.ends_with("); answer in the terminal"), "{message}");
    assert_eq!(h.text(), BEFORE);
}

/// The user saves, closes and opens the file again, and Claude writes it
/// before the reloader has looked at the save: the buffer is what the
/// editor saved, not unsaved work, so the write is taken (and marked once
/// the editor reloads).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_right_after_a_save_and_a_reopen_is_marked() {
    let mut h = host("emacs").await;
    let saved = "int a;\nint b;\nint c; // mine\n";
    h.replace(saved);
    std::fs::write(&h.path, saved).unwrap();
    h.s.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": h.uri}}),
    );
    h.s.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": h.uri}}),
    );
    h.s.open(&h.uri.clone(), "c", 0, saved);
    let written = "int a;\nint b;\nint c; // mine\nint d;\n";
    std::fs::write(&h.path, written).unwrap();
    // Emacs reverts the buffer by itself.
    h.replace(written);
    let (_, markers) = h.markers().await;
    assert_eq!(markers.len(), 1, "{markers:?}");
    assert_eq!(markers[0].0, 3, "{markers:?}");
}
