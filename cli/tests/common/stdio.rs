//! An MCP session with a stdio server of ours (`ide-mcp serve --stdio`,
//! `ide-mcp bridge`): one JSON-RPC line out, one in; the notifications read
//! past while waiting for an answer are kept.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{ANSWER, Running, initialize_params};

/// A running `serve --stdio` (or `bridge`), initialized.
pub(crate) struct StdioSession {
    pub(crate) server: Running,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next_id: u64,
    /// The `initialize` response.
    pub(crate) init: Value,
    /// Every notification read past while waiting for an answer, oldest first.
    pub(crate) notifications: Vec<Value>,
}

impl StdioSession {
    /// Spawns `command` (a `serve --stdio`) and initializes the session.
    pub(crate) fn start(mut command: Command) -> Self {
        command.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut server = Running::spawn(command);
        let stdin = server.child.stdin.take();
        let stdout = server.child.stdout.take().unwrap();
        let (lines_tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut session = Self {
            server,
            stdin,
            lines,
            next_id: 0,
            init: Value::Null,
            notifications: Vec::new(),
        };
        let init = session.request("initialize", &initialize_params());
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        session.init = init;
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    /// Sends one message.
    pub(crate) fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("the session is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its response.
    pub(crate) fn request(&mut self, method: &str, params: &Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let start = Instant::now();
        loop {
            let left = ANSWER.saturating_sub(start.elapsed());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!("no answer to {method}; stderr:\n{}", self.server.stderr())
            });
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
            self.notifications.push(message);
        }
    }

    /// Sends `request` (a request's JSON text) and returns its response's
    /// text exactly as it came; the notifications read past are kept.
    pub(crate) fn ask_raw(&mut self, request: &str) -> String {
        let id = serde_json::from_str::<Value>(request).unwrap()["id"].clone();
        let stdin = self.stdin.as_mut().expect("the session is open");
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let start = Instant::now();
        loop {
            let left = ANSWER.saturating_sub(start.elapsed());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!("no answer to {request}; stderr:\n{}", self.server.stderr())
            });
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return line;
            }
            self.notifications.push(message);
        }
    }

    /// The next message within `limit`, if one comes.
    pub(crate) fn next_message(&mut self, limit: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(limit).ok()?;
        Some(serde_json::from_str(&line).unwrap())
    }

    /// `getDiagnostics {}`: the parsed list.
    pub(crate) fn diagnostics(&mut self) -> Value {
        let reply = self.request(
            "tools/call",
            &json!({"name": "getDiagnostics", "arguments": {}}),
        );
        let text = reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{reply}"));
        serde_json::from_str(text).unwrap()
    }

    /// Asks `getDiagnostics {}` until `done` holds for the list, at most
    /// `limit`; returns it.
    pub(crate) fn diagnostics_until(
        &mut self,
        what: &str,
        limit: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let start = Instant::now();
        loop {
            let list = self.diagnostics();
            if done(&list) {
                return list;
            }
            assert!(
                start.elapsed() < limit,
                "timed out waiting for {what}; last answer: {list:#}\nstderr:\n{}",
                self.server.stderr()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The pid of the host.
    pub(crate) fn pid(&self) -> u32 {
        self.server.child.id()
    }
}

/// The messages of every diagnostic in `list` whose `source` is `source`,
/// as `file name: message`.
pub(crate) fn messages_from(list: &Value, source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for file in list.as_array().unwrap() {
        let name = file["uri"].as_str().unwrap().rsplit('/').next().unwrap();
        for diagnostic in file["diagnostics"].as_array().unwrap() {
            if diagnostic["source"] == source {
                found.push(format!(
                    "{name}: {}",
                    diagnostic["message"].as_str().unwrap()
                ));
            }
        }
    }
    found
}
