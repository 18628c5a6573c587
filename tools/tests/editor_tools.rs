//! The tools that act on the editor — `openDiff`, `close_tab`,
//! `closeAllDiffTabs` and `openFile` — as the runtime serves them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ide_mcp_runtime::{Registry, Server, ToolContext};
use ide_mcp_tools::memory::MemoryWorkspace;
use ide_mcp_tools::review::{compose, hunks};
use ide_mcp_tools::{
    BufferId, DiffFuture, DiffOutcome, DiffReview, EditorPorts, FileOpener, OpenDiffRequest,
    OpenFileFuture, OpenFileRequest,
};
use lsp_types::Position;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// Calls tool `name` through its registered shim; the whole result.
async fn call(cx: &EditorPorts, name: &str, args: &str) -> Value {
    let tool = Registry::global().unwrap().get(name).unwrap();
    let tcx = ToolContext::new().with(cx.clone());
    let args = serde_json::value::RawValue::from_string(args.to_owned()).unwrap();
    serde_json::from_slice(&tool.call(&tcx, Some(&args)).await).unwrap()
}

/// An opener that records what it was asked and answers `answer`.
struct Recorder {
    asked: Mutex<Vec<OpenFileRequest>>,
    answer: Result<(), String>,
}

impl FileOpener for Recorder {
    fn open_file(&self, request: OpenFileRequest) -> OpenFileFuture {
        self.asked.lock().unwrap().push(request);
        let answer = self.answer.clone();
        Box::pin(async move { answer })
    }
}

fn with_opener(answer: Result<(), String>) -> (EditorPorts, Arc<Recorder>) {
    let recorder = Arc::new(Recorder {
        asked: Mutex::default(),
        answer,
    });
    let ws = MemoryWorkspace::new();
    ws.open(
        BufferId(1),
        Some(Path::new("/ws/a.rs")),
        "rust",
        "fn a() {}\nfn main() {\n    a();\n}\n",
    );
    let cx = ws.editor_ports().opener(recorder.clone()).build();
    (cx, recorder)
}

#[tokio::test]
async fn close_all_diff_tabs_has_none_to_close() {
    let result = call(&EditorPorts::empty(), "closeAllDiffTabs", "{}").await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "CLOSED_0_DIFF_TABS"}]})
    );
}

#[tokio::test]
async fn open_file_without_an_opener_fails_clearly() {
    let result = call(
        &EditorPorts::empty(),
        "openFile",
        r#"{"filePath": "/ws/a.rs"}"#,
    )
    .await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "openFile is not available: this host cannot show files in an editor"}], "isError": true})
    );
}

#[tokio::test]
async fn open_file_selects_by_text_in_the_open_document() {
    let (cx, recorder) = with_opener(Ok(()));
    let result = call(&cx, "openFile", r#"{"filePath": "file:///ws/a.rs", "startText": "fn main", "endText": "}", "makeFrontmost": false}"#).await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "Opened file: /ws/a.rs"}]})
    );
    assert_eq!(
        recorder.asked.lock().unwrap()[0],
        OpenFileRequest {
            path: PathBuf::from("/ws/a.rs"),
            selection: Some((Position::new(1, 0), Position::new(3, 1))),
            take_focus: false,
            preview: false,
        }
    );
    // No text to find: just the file, focused.
    call(
        &cx,
        "openFile",
        r#"{"filePath": "/ws/b.rs", "preview": true}"#,
    )
    .await;
    assert_eq!(
        recorder.asked.lock().unwrap()[1],
        OpenFileRequest {
            path: PathBuf::from("/ws/b.rs"),
            selection: None,
            take_focus: true,
            preview: true
        }
    );
}

#[tokio::test]
async fn open_file_failures_are_results() {
    let (cx, recorder) = with_opener(Err("the editor said no".into()));
    let result = call(
        &cx,
        "openFile",
        r#"{"filePath": "/ws/a.rs", "startText": "nowhere"}"#,
    )
    .await;
    assert_eq!(result["isError"], true);
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("`startText` not found")
    );
    assert!(
        recorder.asked.lock().unwrap().is_empty(),
        "nothing was asked of the editor"
    );
    let result = call(&cx, "openFile", r#"{"filePath": "relative.rs"}"#).await;
    assert_eq!(result["isError"], true);
    let result = call(&cx, "openFile", r#"{"filePath": "/ws/a.rs"}"#).await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "could not open /ws/a.rs: the editor said no"}], "isError": true})
    );
}

/// Where a review's decision goes: the flag of each hunk, accepted or not.
type Decision = oneshot::Sender<Vec<bool>>;

/// A review port as an editor host would be: each review waits for the
/// test's decision (the hunks to accept), and is withdrawn by `close_tab`,
/// `close_all` or dropping its future.
#[derive(Default)]
struct Reviews {
    /// The current text of each file under review.
    files: Mutex<HashMap<PathBuf, String>>,
    /// Pending reviews by tab name: the request and where the decision goes.
    pending: Mutex<HashMap<String, (OpenDiffRequest, Decision)>>,
    /// How many review futures were dropped before they resolved.
    dropped: AtomicUsize,
    /// The `Err` every review answers, when set.
    failure: Option<String>,
}

impl Reviews {
    fn with_file(path: &str, text: &str) -> Arc<Self> {
        let reviews = Self::default();
        reviews
            .files
            .lock()
            .unwrap()
            .insert(path.into(), text.into());
        Arc::new(reviews)
    }

    /// Decides the pending review `tab_name`: `accepted` per hunk.
    fn decide(&self, tab_name: &str, accepted: Vec<bool>) {
        let (_, decision) = self.pending.lock().unwrap().remove(tab_name).unwrap();
        decision.send(accepted).unwrap();
    }

    fn pending_requests(&self) -> Vec<OpenDiffRequest> {
        let pending = self.pending.lock().unwrap();
        pending
            .values()
            .map(|(request, _)| request.clone())
            .collect()
    }
}

/// Counts a review future dropped before it resolved.
struct DropGuard(Arc<Reviews>, bool);

impl Drop for DropGuard {
    fn drop(&mut self) {
        if !self.1 {
            self.0.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// The port over shared [`Reviews`] (the test keeps a handle to decide).
struct ReviewPort(Arc<Reviews>);

impl DiffReview for ReviewPort {
    fn open_diff(&self, request: OpenDiffRequest) -> DiffFuture {
        let reviews = Arc::clone(&self.0);
        if let Some(failure) = &self.0.failure {
            let failure = failure.clone();
            return Box::pin(async move { Err(failure) });
        }
        let old = self
            .0
            .files
            .lock()
            .unwrap()
            .get(&request.path)
            .cloned()
            .unwrap_or_default();
        let hunks = hunks(&old, &request.new_contents);
        if hunks.is_empty() {
            return Box::pin(async { Ok(DiffOutcome::Unchanged) });
        }
        let (tx, rx) = oneshot::channel();
        let replaced = self
            .0
            .pending
            .lock()
            .unwrap()
            .insert(request.tab_name.clone(), (request, tx));
        assert!(replaced.is_none());
        Box::pin(async move {
            let mut guard = DropGuard(reviews, false);
            let outcome = match rx.await {
                Ok(accepted) if accepted.contains(&true) => {
                    DiffOutcome::Saved(compose(&old, &hunks, &accepted))
                }
                // Nothing accepted, or withdrawn (the sender dropped).
                Ok(_) | Err(_) => DiffOutcome::Rejected,
            };
            guard.1 = true;
            Ok(outcome)
        })
    }

    fn close_tab(&self, tab_name: &str) -> bool {
        self.0.pending.lock().unwrap().remove(tab_name).is_some()
    }

    fn close_all(&self) -> usize {
        self.0.pending.lock().unwrap().drain().count()
    }
}

const OLD: &str = "fn a() {}\nfn b() {}\nfn c() {}\n";
const NEW: &str = "fn a() {}\nfn b2() {}\nfn c() {}\nfn d() {}\n";

fn with_reviews(reviews: &Arc<Reviews>) -> EditorPorts {
    EditorPorts::builder()
        .review(Arc::new(ReviewPort(Arc::clone(reviews))))
        .build()
}

fn open_diff_args(path: &str, contents: &str, tab: &str) -> String {
    json!({"old_file_path": path, "new_file_path": path, "new_file_contents": contents, "tab_name": tab})
        .to_string()
}

/// Waits (at most a minute: the bound of a hang) until `tab` is pending.
async fn pending(reviews: &Reviews, tab: &str) {
    let start = Instant::now();
    while !reviews.pending.lock().unwrap().contains_key(tab) {
        assert!(
            start.elapsed() < Duration::from_mins(1),
            "{tab} never pending"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn texts(items: &[&str]) -> Value {
    let content: Vec<Value> = items
        .iter()
        .map(|t| json!({"type": "text", "text": t}))
        .collect();
    json!({ "content": content })
}

#[tokio::test]
async fn open_diff_answers_the_users_choice() {
    let reviews = Reviews::with_file("/ws/a.rs", OLD);
    let cx = with_reviews(&reviews);
    let tab = "✻ [Claude Code] a.rs (5f680c) ⧉";
    for (accepted, answer) in [
        (vec![true, true], texts(&["FILE_SAVED", NEW])),
        (
            vec![false, true],
            texts(&["FILE_SAVED", "fn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\n"]),
        ),
        (vec![false, false], texts(&["DIFF_REJECTED", tab])),
    ] {
        let call = tokio::spawn({
            let cx = cx.clone();
            async move {
                call(
                    &cx,
                    "openDiff",
                    &open_diff_args("file:///ws/a.rs", NEW, tab),
                )
                .await
            }
        });
        pending(&reviews, tab).await;
        assert_eq!(
            reviews.pending_requests(),
            [OpenDiffRequest {
                agent: ide_mcp_tools::Agent::Claude,
                path: PathBuf::from("/ws/a.rs"),
                new_contents: NEW.into(),
                tab_name: tab.into(),
            }]
        );
        reviews.decide(tab, accepted);
        assert_eq!(call.await.unwrap(), answer);
    }
    // The proposal is the file as it is: nothing to review.
    assert_eq!(
        call(&cx, "openDiff", &open_diff_args("/ws/a.rs", OLD, tab)).await,
        texts(&["TAB_CLOSED"])
    );
    assert_eq!(reviews.dropped.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn close_tab_and_close_all_withdraw_reviews() {
    let reviews = Reviews::with_file("/ws/a.rs", OLD);
    let cx = with_reviews(&reviews);
    let open = |tab: &'static str| {
        let cx = cx.clone();
        tokio::spawn(
            async move { call(&cx, "openDiff", &open_diff_args("/ws/a.rs", NEW, tab)).await },
        )
    };
    let first = open("first");
    pending(&reviews, "first").await;
    let result = call(&cx, "close_tab", r#"{"tab_name": "first"}"#).await;
    assert_eq!(result, texts(&["TAB_CLOSED"]));
    assert_eq!(first.await.unwrap(), texts(&["DIFF_REJECTED", "first"]));
    // Nothing pending: the same answer.
    let result = call(&cx, "close_tab", r#"{"tab_name": "first"}"#).await;
    assert_eq!(result, texts(&["TAB_CLOSED"]));

    let (second, third) = (open("second"), open("third"));
    pending(&reviews, "second").await;
    pending(&reviews, "third").await;
    let result = call(&cx, "closeAllDiffTabs", "{}").await;
    assert_eq!(result, texts(&["CLOSED_2_DIFF_TABS"]));
    assert_eq!(second.await.unwrap(), texts(&["DIFF_REJECTED", "second"]));
    assert_eq!(third.await.unwrap(), texts(&["DIFF_REJECTED", "third"]));
    let result = call(&cx, "closeAllDiffTabs", "{}").await;
    assert_eq!(result, texts(&["CLOSED_0_DIFF_TABS"]));
}

#[tokio::test]
async fn open_diff_failures_are_results() {
    let result = call(
        &EditorPorts::empty(),
        "openDiff",
        &open_diff_args("/ws/a.rs", NEW, "t"),
    )
    .await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "openDiff is not available: this host cannot show edits to a person for review"}], "isError": true})
    );
    // Without a review port there is nothing to close.
    let cx = EditorPorts::empty();
    assert_eq!(
        call(&cx, "close_tab", r#"{"tab_name": "t"}"#).await,
        texts(&["TAB_CLOSED"])
    );

    let failing = Arc::new(Reviews {
        failure: Some("the editor went away".into()),
        ..Reviews::default()
    });
    let cx = with_reviews(&failing);
    let result = call(&cx, "openDiff", &open_diff_args("/ws/a.rs", NEW, "t")).await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "the editor went away"}], "isError": true})
    );
    let result = call(&cx, "openDiff", &open_diff_args("a.rs", NEW, "t")).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("`new_file_path`")
    );
    // All four arguments, and no other.
    for args in [
        r#"{"old_file_path": "/ws/a.rs", "new_file_path": "/ws/a.rs", "new_file_contents": ""}"#,
        r#"{"old_file_path": "/ws/a.rs", "new_file_path": "/ws/a.rs", "new_file_contents": "", "tab_name": "t", "extra": 1}"#,
        r#"{"oldFilePath": "/ws/a.rs", "new_file_path": "/ws/a.rs", "new_file_contents": "", "tab_name": "t"}"#,
    ] {
        let result = call(&cx, "openDiff", args).await;
        assert_eq!(result["isError"], true, "{args}: {result}");
    }
    assert!(failing.pending.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_cancelled_open_diff_drops_its_review() {
    let reviews = Reviews::with_file("/ws/a.rs", OLD);
    let server = Server::builder("t", "0")
        .state(with_reviews(&reviews))
        .build()
        .unwrap();
    let mut client = server.connect_memory();
    client.initialize().await;
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "openDiff", "arguments": serde_json::from_str::<Value>(&open_diff_args("/ws/a.rs", NEW, "t")).unwrap()}});
    client.send(call.to_string()).await;
    pending(&reviews, "t").await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#)
        .await;
    let start = Instant::now();
    while reviews.dropped.load(Ordering::SeqCst) == 0 {
        assert!(
            start.elapsed() < Duration::from_mins(1),
            "the review's future was never dropped"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // The cancelled call is not answered; the next request is.
    assert_eq!(
        client
            .request(r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":6,"result":{}}"#
    );
}
