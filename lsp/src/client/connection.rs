//! One running language server: the child process, its framed stdio, the
//! requests the host sends and the server's own requests and
//! notifications, answered or turned into the diagnostics [`Store`], and
//! the liveness probe that declares it hung.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize as _;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::Instrument as _;

use super::known::ServerKind;
use super::liveness::{self, Probed};
use super::options::{PROBE_METHOD, Probe};
use super::state::Store;
use crate::framing::{Frame, Message, MessageReader};
use crate::lenient_diagnostics::{Published, UnreadLog};
use crate::live::{SERVER_REQUEST_TIMEOUT, ServerRequestError};
use crate::outgoing::{Outgoing, split_reply};
use crate::sync::lock;
use ide_mcp_tools::uri::{encoded_file_uri, encoded_uri_path};

/// How many lines of a server's stderr are kept for the log of its death.
const STDERR_TAIL_LINES: usize = 20;

/// What a connection needs besides the process.
#[derive(Debug)]
pub(crate) struct Context {
    pub(crate) store: Arc<Store>,
    pub(crate) kind: ServerKind,
    pub(crate) folders: Vec<PathBuf>,
    /// What the server's diagnostics lost, logged once at warning level.
    pub(crate) unread: UnreadLog,
}

/// The requests waiting for the server's whole responses; closed when the
/// server is gone (exited, found hung, or its life ended).
type Responses = Arc<Outgoing<Value>>;

/// The host's side of the server's stdio: what sends requests, shared by
/// the connection, its liveness probe and the live tools' questions.
#[derive(Debug)]
struct ServerStdio {
    out: mpsc::UnboundedSender<Vec<u8>>,
    responses: Responses,
    /// Messages read from the server so far.
    heard: Arc<AtomicU64>,
    /// Why the server was declared hung, once it is.
    hung: watch::Sender<Option<String>>,
}

impl ServerStdio {
    /// Sends a request; resolves to the whole response, or `None` when the
    /// server exited or was declared hung first. Dropped, forgets the
    /// request, and with `cancel` tells the server (`$/cancelRequest`).
    async fn response(&self, method: &str, params: Value, cancel: bool) -> Option<Value> {
        let out = &self.out;
        let mut lease = self
            .responses
            .lease((), |id| {
                if cancel {
                    send(
                        out,
                        &json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}),
                    );
                }
            })
            .ok()?;
        send(
            out,
            &json!({"jsonrpc": "2.0", "id": lease.id(), "method": method, "params": params}),
        );
        lease.answer().await.ok()
    }

    /// The server stopped answering: says why, and every request waiting
    /// for it, now or later, fails at once.
    fn declare_hung(&self, why: String) {
        self.hung.send_replace(Some(why));
        self.responses.close();
    }
}

impl Probed for ServerStdio {
    async fn ping(&self) {
        if self
            .response(PROBE_METHOD, Value::Null, false)
            .await
            .is_none()
        {
            // Gone: its exit is the connection's to see, not the probe's.
            std::future::pending::<()>().await;
        }
    }

    fn heard(&self) -> u64 {
        self.heard.load(Ordering::Relaxed)
    }
}

/// The way to one running server for the live tools' questions, cheap to
/// clone: requests of their own (cancelled when dropped unanswered) and
/// notifications, on the connection's wire.
#[derive(Clone, Debug)]
pub(crate) struct ServerLink {
    wire: Arc<ServerStdio>,
}

impl ServerLink {
    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: &Value) {
        send(
            &self.wire.out,
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        );
    }

    /// Sends a request and waits, at most [`SERVER_REQUEST_TIMEOUT`], for
    /// its `result`; timed out or dropped, the server gets
    /// `$/cancelRequest`.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, ServerRequestError> {
        let answer = tokio::time::timeout(
            SERVER_REQUEST_TIMEOUT,
            self.wire.response(method, params, true),
        )
        .await;
        match answer {
            Ok(Some(response)) => {
                split_reply(response).map_err(|error| ServerRequestError::Failed(error.to_string()))
            }
            Ok(None) => Err(ServerRequestError::Gone),
            Err(_elapsed) => Err(ServerRequestError::TimedOut),
        }
    }

    /// The server's life ended: every request waiting on it, now or later,
    /// fails at once.
    pub(crate) fn fail_all(&self) {
        self.wire.responses.close();
    }

    /// A link to no process: what it sends arrives, framed, in the queue.
    #[cfg(test)]
    pub(crate) fn in_memory() -> (Self, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (out, queue) = mpsc::unbounded_channel();
        let wire = ServerStdio {
            out,
            responses: Responses::default(),
            heard: Arc::default(),
            hung: watch::Sender::new(None),
        };
        let link = Self {
            wire: Arc::new(wire),
        };
        (link, queue)
    }
}

/// A started language server.
#[derive(Debug)]
pub(crate) struct Connection {
    child: Child,
    wire: Arc<ServerStdio>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// Flips to `true` when the server's stdout ends.
    closed: watch::Receiver<bool>,
    tasks: Vec<JoinHandle<()>>,
    /// The liveness probe, once started.
    probe: Option<JoinHandle<()>>,
}

impl Connection {
    /// Starts `command` (program and arguments) in the first folder.
    pub(crate) fn spawn(command: &[String], cx: &Arc<Context>) -> std::io::Result<Self> {
        let (program, args) = command
            .split_first()
            .ok_or_else(|| std::io::Error::other("empty server command"))?;
        let mut child = Command::new(program);
        child
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(folder) = cx.folders.first() {
            child.current_dir(folder);
        }
        let mut child = child.spawn()?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (out, queue) = mpsc::unbounded_channel();
        let wire = Arc::new(ServerStdio {
            out,
            responses: Responses::default(),
            heard: Arc::default(),
            hung: watch::Sender::new(None),
        });
        let (closed_tx, closed) = watch::channel(false);
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr_tail);
        let name = cx.kind.name.clone();
        let tasks = vec![
            tokio::spawn(write_loop(stdin, queue)),
            tokio::spawn(read_loop(
                stdout,
                Arc::clone(cx),
                wire.out.clone(),
                Arc::clone(&wire.responses),
                Arc::clone(&wire.heard),
                closed_tx,
            )),
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::trace!(server = %name, "stderr: {line}");
                    let mut tail = lock(&tail);
                    if tail.len() == STDERR_TAIL_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            }),
        ];
        Ok(Self {
            child,
            wire,
            stderr_tail,
            closed,
            tasks,
            probe: None,
        })
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: &Value) {
        self.link().notify(method, params);
    }

    /// The way to the server for the live tools' questions.
    pub(crate) fn link(&self) -> ServerLink {
        ServerLink {
            wire: Arc::clone(&self.wire),
        }
    }

    /// Sends a request and waits, at most `timeout`, for its answer: the
    /// `result`, or the error as text.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        match tokio::time::timeout(timeout, self.wire.response(method, params, false)).await {
            Ok(Some(response)) => split_reply(response).map_err(|error| error.to_string()),
            Ok(None) => Err("the server exited or stopped answering".to_owned()),
            Err(_) => Err(format!("no answer within {timeout:?}")),
        }
    }

    /// Starts probing the server (after `initialize`: nothing may be asked
    /// before its answer); see [`hung`](Self::hung).
    pub(crate) fn start_probe(&mut self, probe: Probe, server: &str) {
        let wire = Arc::clone(&self.wire);
        self.stop_probe();
        let task = async move {
            let why = liveness::hung(&*wire, probe).await;
            wire.declare_hung(why);
        };
        self.probe = Some(tokio::spawn(
            task.instrument(tracing::debug_span!("probe", server)),
        ));
    }

    /// Stops the probe (before `shutdown`, after which nothing else may be
    /// asked).
    pub(crate) fn stop_probe(&mut self) {
        if let Some(probe) = self.probe.take() {
            probe.abort();
        }
    }

    /// Resolves, with the reason, when the probe declares the server hung.
    pub(crate) async fn hung(&self) -> String {
        let mut hung = self.wire.hung.subscribe();
        // The sender lives in `self.wire`: the wait cannot fail.
        let why = hung
            .wait_for(Option::is_some)
            .await
            .map(|why| why.clone().unwrap_or_default());
        why.unwrap_or_default()
    }

    /// Resolves when the server's output ends (it exited or closed it).
    pub(crate) async fn closed(&self) {
        let mut closed = self.closed.clone();
        let _ = closed.wait_for(|closed| *closed).await;
    }

    /// The last lines the server wrote to stderr.
    pub(crate) fn stderr_tail(&self) -> String {
        let tail = lock(&self.stderr_tail);
        tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Waits at most `timeout` for the process to exit; kills it if it does not.
    pub(crate) async fn reap(&mut self, timeout: Duration) -> Option<ExitStatus> {
        if let Ok(Ok(status)) = tokio::time::timeout(timeout, self.child.wait()).await {
            return Some(status);
        }
        let _ = self.child.kill().await;
        None
    }

    /// Kills the process at once and waits, at most `timeout`, for its end.
    pub(crate) async fn kill(&mut self, timeout: Duration) -> Option<ExitStatus> {
        self.stop_probe();
        if let Err(error) = self.child.start_kill() {
            tracing::debug!(%error, "cannot kill the server");
        }
        tokio::time::timeout(timeout, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok)
    }

    /// `shutdown`, then `exit`, each bounded; killed if it hangs.
    pub(crate) async fn shut_down(&mut self, timeout: Duration) {
        self.stop_probe();
        if let Err(error) = self.request("shutdown", Value::Null, timeout).await {
            tracing::debug!(%error, "the server did not answer `shutdown`");
        }
        self.notify("exit", &Value::Null);
        self.reap(timeout).await;
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.stop_probe();
        for task in &self.tasks {
            task.abort();
        }
    }
}

fn send(out: &mpsc::UnboundedSender<Vec<u8>>, message: &Value) {
    let body = serde_json::to_vec(message).expect("JSON values serialize");
    let _ = out.send(Message::from_body(body).into_bytes());
}

async fn write_loop(mut stdin: ChildStdin, mut queue: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(bytes) = queue.recv().await {
        if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
            break;
        }
    }
}

async fn read_loop(
    stdout: tokio::process::ChildStdout,
    cx: Arc<Context>,
    out: mpsc::UnboundedSender<Vec<u8>>,
    responses: Responses,
    heard: Arc<AtomicU64>,
    closed: watch::Sender<bool>,
) {
    let mut reader = MessageReader::new(stdout);
    loop {
        match reader.next().await {
            Ok(Some(Frame::Message(message))) => {
                heard.fetch_add(1, Ordering::Relaxed);
                match serde_json::from_slice::<Value>(message.body()) {
                    Ok(value) => handle(&cx, &out, &responses, value),
                    Err(error) => tracing::debug!(server = %cx.kind.name, %error, "not JSON"),
                }
            }
            Ok(Some(Frame::Unframed(bytes))) => {
                tracing::debug!(server = %cx.kind.name, "unframed output: {}", String::from_utf8_lossy(&bytes));
            }
            Ok(None) | Err(_) => break,
        }
    }
    responses.close();
    let _ = closed.send(true);
}

fn handle(cx: &Context, out: &mpsc::UnboundedSender<Vec<u8>>, responses: &Responses, value: Value) {
    let method = value.get("method").and_then(Value::as_str);
    let id = value.get("id").filter(|id| !id.is_null());
    match (method, id) {
        (Some(method), Some(id)) => {
            let answer = match answer(cx, method, value.get("params")) {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err((code, message)) => json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": code, "message": message}}),
            };
            send(out, &answer);
        }
        (Some(method), None) => notification(cx, method, value.get("params")),
        (None, Some(id)) => {
            if let Some(id) = id.as_u64() {
                responses.answer(id, value);
            }
        }
        (None, None) => {}
    }
}

/// The host's answer to a request from the server.
fn answer(cx: &Context, method: &str, params: Option<&Value>) -> Result<Value, (i64, String)> {
    Ok(match method {
        "workspace/configuration" => {
            let items = params
                .and_then(|p| p.get("items"))
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            Value::Array(
                items
                    .iter()
                    .map(|item| cx.kind.setting(item.get("section").and_then(Value::as_str)))
                    .collect(),
            )
        }
        "workspace/workspaceFolders" => Value::Array(
            cx.folders
                .iter()
                .map(|folder| json!({"uri": encoded_file_uri(folder), "name": folder_name(folder)}))
                .collect(),
        ),
        "window/showDocument" => json!({"success": false}),
        "workspace/applyEdit" => {
            json!({"applied": false, "failureReason": "a headless host edits nothing"})
        }
        "window/workDoneProgress/create"
        | "client/registerCapability"
        | "client/unregisterCapability"
        | "window/showMessageRequest"
        | "workspace/diagnostic/refresh"
        | "workspace/codeLens/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/inlineValue/refresh"
        | "workspace/foldingRange/refresh" => Value::Null,
        other => return Err((-32601, format!("`{other}` is not handled by ide-mcp"))),
    })
}

fn notification(cx: &Context, method: &str, params: Option<&Value>) {
    let Some(params) = params else { return };
    match method {
        "textDocument/publishDiagnostics" => {
            let Ok(published) = Published::deserialize(params).map_err(|error| {
                tracing::debug!(server = %cx.kind.name, %error, "unreadable publishDiagnostics");
            }) else {
                return;
            };
            let Published {
                uri,
                version,
                diagnostics,
            } = published;
            cx.unread
                .note(Some(&cx.kind.name), &uri, diagnostics.unread);
            if let Some(path) = encoded_uri_path(&uri) {
                cx.store.publish(path, version, diagnostics.kept);
            }
        }
        "$/progress" => {
            let token = match params.get("token") {
                Some(Value::String(token)) => token.clone(),
                Some(other) => other.to_string(),
                None => return,
            };
            let value = params.get("value").unwrap_or(&Value::Null);
            let text = |key: &str| value.get(key).and_then(Value::as_str);
            match text("kind") {
                Some("begin" | "report") => {
                    let mut line = text("title").unwrap_or_default().to_owned();
                    if let Some(message) = text("message") {
                        if !line.is_empty() {
                            line.push(' ');
                        }
                        line.push_str(message);
                    }
                    if let Some(percent) = value.get("percentage").and_then(Value::as_u64) {
                        let _ = write!(line, " {percent}%");
                    }
                    cx.store.progress(token, Some(line));
                }
                Some("end") => cx.store.progress(token, None),
                _ => {}
            }
        }
        "window/logMessage" | "window/showMessage" => {
            let message = params
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if params.get("type").and_then(Value::as_u64) == Some(1) {
                tracing::warn!(server = %cx.kind.name, "{message}");
            } else {
                tracing::debug!(server = %cx.kind.name, "{message}");
            }
        }
        _ => {}
    }
}

/// The folder's last component, for `workspaceFolders[].name`.
pub(crate) fn folder_name(folder: &std::path::Path) -> String {
    folder.file_name().map_or_else(
        || folder.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The next message sent, parsed.
    pub(crate) fn next_sent(queue: &mut mpsc::UnboundedReceiver<Vec<u8>>) -> Option<Value> {
        let bytes = queue.try_recv().ok()?;
        let at = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
        serde_json::from_slice(&bytes[at + 4..]).ok()
    }

    async fn sent(queue: &mut mpsc::UnboundedReceiver<Vec<u8>>) -> Value {
        for _ in 0..100 {
            if let Some(message) = next_sent(queue) {
                return message;
            }
            tokio::task::yield_now().await;
        }
        panic!("nothing was sent")
    }

    fn asking(link: &ServerLink) -> JoinHandle<Result<Value, ServerRequestError>> {
        let link = link.clone();
        tokio::spawn(async move { link.request("textDocument/hover", json!({"x": 1})).await })
    }

    #[tokio::test]
    async fn a_question_is_answered_cancelled_when_dropped_and_fails_when_the_server_is_gone() {
        let (link, mut queue) = ServerLink::in_memory();
        let question = asking(&link);
        let request = sent(&mut queue).await;
        assert_eq!(
            (&request["method"], &request["params"]),
            (&json!("textDocument/hover"), &json!({"x": 1}))
        );
        let id = request["id"].as_i64().unwrap();
        assert!(link.wire.responses.answer(
            id.try_into().unwrap(),
            json!({"jsonrpc": "2.0", "id": id, "result": {"contents": "x"}})
        ));
        assert_eq!(question.await.unwrap(), Ok(json!({"contents": "x"})));
        assert_eq!(next_sent(&mut queue), None, "an answer is not cancelled");

        let question = asking(&link);
        let id = sent(&mut queue).await["id"].clone();
        question.abort();
        let _ = question.await;
        assert_eq!(
            sent(&mut queue).await,
            json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}})
        );
        assert!(link.wire.responses.is_empty());

        let question = asking(&link);
        sent(&mut queue).await;
        link.fail_all();
        assert_eq!(question.await.unwrap(), Err(ServerRequestError::Gone));
        assert_eq!(
            link.request("textDocument/hover", json!({})).await,
            Err(ServerRequestError::Gone),
            "at once, unsent"
        );
        assert_eq!(next_sent(&mut queue), None);
    }
}
