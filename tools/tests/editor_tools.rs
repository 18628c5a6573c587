//! `closeAllDiffTabs` and `openFile` as the runtime serves them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ide_mcp_runtime::{Call, Registry, ResultOut, ToolContext};
use ide_mcp_tools::memory::MemoryWorkspace;
use ide_mcp_tools::{BufferId, FileOpener, OpenFileFuture, OpenFileRequest, ReadContext};
use lsp_types::Position;
use serde_json::{Value, json};

/// Calls tool `name` through its registered shim; the whole result.
async fn call(cx: &ReadContext, name: &str, args: &str) -> Value {
    let tool = Registry::global().unwrap().get(name).unwrap();
    let tcx = ToolContext::new().with(cx.clone());
    let args = serde_json::value::RawValue::from_string(args.to_owned()).unwrap();
    let mut out = Vec::new();
    if let Some(future) = (tool.def.call)(
        &Call::new(&tcx),
        Some((&*args).into()),
        &mut ResultOut::new(&mut out),
    ) {
        future.await(&mut ResultOut::new(&mut out));
    }
    serde_json::from_slice(&out).unwrap()
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

fn with_opener(answer: Result<(), String>) -> (ReadContext, Arc<Recorder>) {
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
    let cx = ws.read_context().opener(recorder.clone()).build();
    (cx, recorder)
}

#[tokio::test]
async fn close_all_diff_tabs_has_none_to_close() {
    let result = call(&ReadContext::empty(), "closeAllDiffTabs", "{}").await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "CLOSED_0_DIFF_TABS"}]})
    );
}

#[tokio::test]
async fn open_file_without_an_opener_fails_clearly() {
    let result = call(
        &ReadContext::empty(),
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
