//! What the real-editor tests ask of the IDE over its WebSocket: a tool
//! called until its answer is the expected one, a notification waited
//! for, and the parts of the answers they compare.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::ws::WsClient;

/// How long a language server may take to answer (pyright starts slowly on
/// a loaded machine).
pub(crate) const SERVER: Duration = Duration::from_secs(90);

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
