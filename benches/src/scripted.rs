//! Scripted clients of child processes for the live LSP benchmarks: an
//! LSP client that does what an editor does (answers the server's
//! requests, keeps its notifications) and an MCP client of a stdio server
//! (`ide-mcp bridge`). Each reads its child's output on a thread of its
//! own, so that the child never blocks on a full pipe; requests are one at
//! a time.

use std::collections::HashMap;
use std::io::{self, BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use ide_mcp_lsp::framing::{Frame, SyncMessageReader};
use ide_mcp_test_support::lsp::message as framed;
use serde_json::{Value, json};

type Waiting = Arc<Mutex<HashMap<i64, Sender<Value>>>>;

/// A language server (or a proxy in front of one) driven as an editor.
pub struct LspClient {
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    waiting: Waiting,
    notifications: Receiver<Value>,
    next_id: i64,
}

impl LspClient {
    /// Starts `command` with its stdin and stdout piped to the client.
    pub fn spawn(mut command: Command) -> io::Result<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = Arc::new(Mutex::new(child.stdin.take().expect("piped")));
        let stdout = child.stdout.take().expect("piped");
        let waiting: Waiting = Arc::default();
        let (notify, notifications) = mpsc::channel();
        let (to_server, answers) = (Arc::clone(&stdin), Arc::clone(&waiting));
        std::thread::spawn(move || {
            let mut reader = SyncMessageReader::new(stdout);
            while let Ok(Some(frame)) = reader.next_frame() {
                let Frame::Message(message) = frame else {
                    continue;
                };
                let Ok(value) = serde_json::from_slice::<Value>(message.body()) else {
                    continue;
                };
                reader.recycle(message);
                route(value, &to_server, &answers, &notify);
            }
        });
        Ok(Self {
            child,
            stdin,
            waiting,
            notifications,
            next_id: 0,
        })
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn write(&self, value: &Value) -> io::Result<()> {
        let mut stdin = self.stdin.lock().unwrap_or_else(PoisonError::into_inner);
        stdin.write_all(&framed(value))?;
        stdin.flush()
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: &Value) -> io::Result<()> {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Sends a request and waits for its response (the whole message), at
    /// most `limit`.
    pub fn request(&mut self, method: &str, params: &Value, limit: Duration) -> io::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let (tx, rx) = mpsc::channel();
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, tx);
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        rx.recv_timeout(limit)
            .map_err(|_| io::Error::other(format!("no answer to {method} in {limit:?}")))
    }

    /// Waits for a notification `done` holds of, at most `limit`; those
    /// before it are dropped.
    pub fn wait_notification(
        &self,
        limit: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> io::Result<Value> {
        let start = Instant::now();
        loop {
            let left = limit.saturating_sub(start.elapsed());
            match self.notifications.recv_timeout(left) {
                Ok(value) if done(&value) => return Ok(value),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    return Err(io::Error::other(format!(
                        "no such notification in {limit:?}"
                    )));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
            }
        }
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One message from the server: a response to its waiter, a request
/// answered as an editor would (`workspace/configuration`: no settings;
/// anything else: `null`), a notification kept.
fn route(value: Value, to_server: &Mutex<ChildStdin>, waiting: &Waiting, notify: &Sender<Value>) {
    match (value.get("id"), value.get("method")) {
        (Some(id), None) => {
            let waiter = id.as_i64().and_then(|id| {
                waiting
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id)
            });
            if let Some(waiter) = waiter {
                let _ = waiter.send(value);
            }
        }
        (Some(id), Some(method)) => {
            let result = if method == "workspace/configuration" {
                let items = value["params"]["items"].as_array().map_or(0, Vec::len);
                Value::Array(vec![Value::Null; items])
            } else {
                Value::Null
            };
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
            let mut stdin = to_server.lock().unwrap_or_else(PoisonError::into_inner);
            let _ = stdin
                .write_all(&framed(&answer))
                .and_then(|()| stdin.flush());
        }
        _ => {
            let _ = notify.send(value);
        }
    }
}

/// An MCP server on a child's stdio (newline-delimited JSON-RPC).
pub struct McpStdio {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    next_id: i64,
}

impl McpStdio {
    /// Starts `command` and runs the MCP handshake.
    pub fn start(mut command: Command) -> io::Result<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                if let Ok(value) = serde_json::from_str::<Value>(&line)
                    && tx.send(value).is_err()
                {
                    return;
                }
            }
        });
        let mut mcp = Self {
            child,
            stdin,
            messages,
            next_id: 0,
        };
        mcp.request(
            "initialize",
            &json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "live-lsp-bench", "version": "1"}}),
            Duration::from_secs(30),
        )?;
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(mcp)
    }

    fn send(&mut self, value: &Value) -> io::Result<()> {
        let mut line = value.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes())?;
        self.stdin.flush()
    }

    /// Sends a request and waits for its response's `result`, at most
    /// `limit`; a JSON-RPC error is an error.
    pub fn request(&mut self, method: &str, params: &Value, limit: Duration) -> io::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let start = Instant::now();
        loop {
            let left = limit.saturating_sub(start.elapsed());
            let message = self
                .messages
                .recv_timeout(left)
                .map_err(|_| io::Error::other(format!("no answer to {method} in {limit:?}")))?;
            if message["id"] == id {
                return match message.get("result") {
                    Some(result) => Ok(result.clone()),
                    None => Err(io::Error::other(format!("{method}: {message}"))),
                };
            }
        }
    }

    /// Calls `tool` and returns its result's first text, or the whole
    /// result as an error when it is an `isError` one.
    pub fn call(&mut self, tool: &str, arguments: &Value, limit: Duration) -> io::Result<String> {
        let result = self.request(
            "tools/call",
            &json!({"name": tool, "arguments": arguments}),
            limit,
        )?;
        if result["isError"] == true {
            return Err(io::Error::other(format!("{tool}: {result}")));
        }
        Ok(result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned())
    }
}

impl McpStdio {
    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for McpStdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
