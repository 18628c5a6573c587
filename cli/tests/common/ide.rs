//! What the real-editor tests ask of the IDE over its WebSocket: a tool
//! called until its answer is the expected one, a notification waited
//! for, Claude's proposal to review, and the parts of the answers they
//! compare.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::ws::WsClient;

/// How long a language server may take to answer (pyright starts slowly on
/// a loaded machine).
pub(crate) const SERVER: Duration = Duration::from_secs(90);

/// A file to review: clangd reports `missing_name`, which the proposal
/// keeps.
pub(crate) const REVIEWED_C: &str = "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b;\n}\n\nint main(void) {\n  int value = add(1, 2);\n  return missing_name;\n}\n";
/// Claude's proposal: three hunks (line 3 changed, a line inserted before
/// line 6, line 7 replaced by two).
pub(crate) const PROPOSED_C: &str = "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b; /* sum */\n}\n\n/* helper above */\nint main(void) {\n  int value = add(2, 3);\n  printf(\"%d\\n\", value);\n  return missing_name;\n}\n";
/// What the user chose: the first and third hunks, and an edit of their own
/// (line 1 made `// edited`) made while reviewing.
pub(crate) const CHOSEN_C: &str = "#include <stdio.h>\n// edited\nint add(int a, int b) {\n  return a + b; /* sum */\n}\n\nint main(void) {\n  int value = add(2, 3);\n  printf(\"%d\\n\", value);\n  return missing_name;\n}\n";

/// A connection to the IDE of `lockfile` (its path and content).
pub(crate) async fn client_of(lockfile: &(PathBuf, Value)) -> WsClient {
    let port = super::lockfile_port(&lockfile.0);
    super::ws::connect(port, lockfile.1["authToken"].as_str().unwrap()).await
}

/// Claude's `openDiff` of `path` as the CLI calls it (old and new path the
/// same), on a connection of its own: the call answers only once the
/// review is decided or withdrawn. Its answer.
pub(crate) fn open_diff(
    mut client: WsClient,
    path: &Path,
    contents: &str,
    tab_name: &str,
) -> JoinHandle<Value> {
    let args = json!({"old_file_path": path, "new_file_path": path,
        "new_file_contents": contents, "tab_name": tab_name});
    tokio::spawn(async move {
        client
            .request("tools/call", json!({"name": "openDiff", "arguments": args}))
            .await
    })
}

/// The texts of a tool's answer (`FILE_SAVED` and the text, ...).
pub(crate) fn texts(result: &Value) -> Vec<&str> {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["text"].as_str().unwrap())
        .collect()
}

/// Calls `tool` until `done` holds of its answer; returns that answer.
pub(crate) async fn until(
    client: &mut WsClient,
    tool: &str,
    args: Value,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let start = Instant::now();
    loop {
        let answer = client.call(tool, args.clone()).await;
        if done(&answer) {
            return answer;
        }
        assert!(start.elapsed() < SERVER, "{tool} {args}: still {answer}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits for a notification `method` whose params satisfy `matches`.
pub(crate) async fn notification(
    client: &mut WsClient,
    method: &str,
    matches: impl Fn(&Value) -> bool,
) -> Value {
    let found = |message: &Value| message["method"] == method && matches(&message["params"]);
    if let Some(index) = client.notifications.iter().position(found) {
        return client.notifications.remove(index);
    }
    let start = Instant::now();
    loop {
        let left = SERVER.saturating_sub(start.elapsed());
        let message = client
            .next_message(left)
            .await
            .unwrap_or_else(|| panic!("no {method} notification"));
        if found(&message) {
            return message;
        }
    }
}

/// The tabs of a `getOpenEditors` answer: label and whether it is active.
pub(crate) fn labels(editors: &Value) -> Vec<(String, bool)> {
    editors["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tab| {
            (
                tab["label"].as_str().unwrap().to_owned(),
                tab["isActive"] == true,
            )
        })
        .collect()
}

/// The diagnostics of `path` in a `getDiagnostics` answer.
pub(crate) fn diagnostics<'a>(answer: &'a Value, path: &Path) -> Vec<&'a Value> {
    let uri = format!("file://{}", path.display());
    answer
        .as_array()
        .unwrap()
        .iter()
        .filter(|file| file["uri"] == uri.as_str())
        .flat_map(|file| file["diagnostics"].as_array().unwrap())
        .collect()
}

/// Whether a `getDiagnostics` answer holds an error of `path` whose
/// message contains `text`.
pub(crate) fn has_error(answer: &Value, path: &Path, text: &str) -> bool {
    diagnostics(answer, path)
        .iter()
        .any(|d| d["severity"] == "Error" && d["message"].as_str().unwrap().contains(text))
}
