//! End-to-end tests against the built `ide-mcp` binary: the IDE WebSocket
//! with its lockfile, stdio, `tools --lint` and `call`.
//!
//! Every server runs with `CLAUDE_CONFIG_DIR` and `CARGO_TARGET_DIR` in its
//! own temporary directory, on port 0, and is killed when its test ends.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::http::{HeaderValue, Request};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const TOOL_NAMES: [&str; 5] = [
    "checkDocumentDirty",
    "getCurrentSelection",
    "getDiagnostics",
    "getOpenEditors",
    "getWorkspaceFolders",
];

/// Generous: the fixture's first check runs on a machine shared with builds.
const DEADLINE: Duration = Duration::from_mins(3);

/// How long one answer may take.
const ANSWER: Duration = Duration::from_mins(1);

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ide-mcp")
}

/// A temporary directory holding `ws/` (a copy of the diagnostics fixture),
/// `config/` (Claude Code's) and `target/` (cargo's).
struct Sandbox {
    dir: tempfile::TempDir,
    ws: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap().join("ws");
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/diag-crate"),
            &ws,
        );
        Self { dir, ws }
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    fn file(&self, relative: &str) -> String {
        self.ws.join(relative).to_str().unwrap().to_owned()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(bin());
        command
            .args(args)
            .env("CLAUDE_CONFIG_DIR", self.config())
            .env("CARGO_TARGET_DIR", self.dir.path().join("target"))
            .current_dir(&self.ws);
        command
    }

    fn lockfiles(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.config().join("ide")) else {
            return Vec::new();
        };
        entries
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "lock"))
            .collect()
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(name));
        } else {
            std::fs::copy(entry.path(), to.join(name)).unwrap();
        }
    }
}

/// A child process, killed on drop; its stderr collected for failure messages.
struct Running {
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Running {
    fn spawn(mut command: Command) -> Self {
        let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buffer = [0; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buffer) {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        Self { child, stderr }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn wait_timeout(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < limit,
                "the process did not exit; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn assert_running(&mut self) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!("ide-mcp exited ({status}); stderr:\n{}", self.stderr());
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for the server's lockfile and reads it.
fn wait_for_lockfile(sandbox: &Sandbox, server: &mut Running) -> (PathBuf, Value) {
    let start = Instant::now();
    loop {
        server.assert_running();
        if let [path] = &sandbox.lockfiles()[..] {
            let content = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            return (path.clone(), content);
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no lockfile; stderr:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

fn ws_request(port: u16, token: &str) -> Request<()> {
    let mut request = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "X-Claude-Code-IDE-Authorization",
        HeaderValue::from_str(token).unwrap(),
    );
    request
}

/// A JSON-RPC client over the WebSocket that keeps the notifications it
/// reads past.
struct WsClient {
    ws: Ws,
    next_id: u64,
    notifications: Vec<Value>,
}

impl WsClient {
    async fn next_message(&mut self, limit: Duration) -> Option<Value> {
        loop {
            let message = tokio::time::timeout(limit, self.ws.next()).await.ok()??;
            if let Message::Text(text) = message.unwrap() {
                return Some(serde_json::from_str(&text).unwrap());
            }
        }
    }

    async fn notify(&mut self, method: &str) {
        let message = json!({"jsonrpc": "2.0", "method": method});
        self.ws
            .send(Message::text(message.to_string()))
            .await
            .unwrap();
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.ws
            .send(Message::text(message.to_string()))
            .await
            .unwrap();
        loop {
            let message = self
                .next_message(ANSWER)
                .await
                .unwrap_or_else(|| panic!("no answer to {method}"));
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
            self.notifications.push(message);
        }
    }

    /// Calls a tool and parses the JSON text of its result.
    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert_ne!(result["isError"], json!(true), "{result}");
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
    }
}

fn initialize_params() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {}, "elicitation": {}},
        "clientInfo": {"name": "claude-code", "version": "2.1.0"},
    })
}

fn diagnostics_of<'a>(reply: &'a Value, uri: &str) -> Option<&'a Vec<Value>> {
    reply
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["uri"] == uri)
        .map(|entry| entry["diagnostics"].as_array().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_serve_with_lockfile_tools_diagnostics_and_sigterm() {
    let sandbox = Sandbox::new();
    let broken = sandbox.file("broken/src/lib.rs");
    let warns = sandbox.file("warns/src/lib.rs");
    let select = format!("{warns}:5:9-5:15");
    let mut server = Running::spawn(sandbox.command(&[
        "serve",
        "--workspace",
        sandbox.ws.to_str().unwrap(),
        "--open",
        &broken,
        "--select",
        &select,
        "--ide-name",
        "e2e IDE",
        // Long enough that the query after the edit below must see its check.
        "--diagnostics-wait",
        "120000",
    ]));

    let (lockfile, port, token) = check_lockfile(&sandbox, &mut server);

    // A wrong token is refused before the upgrade.
    assert!(
        tokio_tungstenite::connect_async(ws_request(port, "wrong"))
            .await
            .is_err()
    );

    let (ws, _) = tokio_tungstenite::connect_async(ws_request(port, &token))
        .await
        .unwrap();
    let mut client = WsClient {
        ws,
        next_id: 0,
        notifications: Vec::new(),
    };
    let init = client.request("initialize", initialize_params()).await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    client.notify("notifications/initialized").await;

    // --select reaches the CLI as selection_changed, the only way it can.
    let start = Instant::now();
    let selection = loop {
        if let Some(found) = client
            .notifications
            .iter()
            .find(|n| n["method"] == "selection_changed")
        {
            break found.clone();
        }
        let left = Duration::from_secs(10).saturating_sub(start.elapsed());
        let message = client
            .next_message(left)
            .await
            .expect("selection_changed after initialize");
        client.notifications.push(message);
    };
    assert_eq!(selection["params"]["text"], "ünused");
    assert_eq!(selection["params"]["filePath"], warns.as_str());

    let list = client.request("tools/list", json!({})).await;
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, TOOL_NAMES);

    read_tools_answer(&mut client, &sandbox).await;
    diagnostics_follow_the_disk(&mut client, &sandbox).await;

    // SIGTERM: a clean exit, the lockfile removed.
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = server.wait_timeout(Duration::from_secs(20));
    assert!(status.success(), "{status}; stderr:\n{}", server.stderr());
    assert!(!lockfile.exists());
    assert!(
        server
            .stderr()
            .contains(&format!("CLAUDE_CODE_SSE_PORT={port} claude"))
    );
}

/// The lockfile: fields as the CLI reads them, private modes. Returns its
/// path, the port and the token.
fn check_lockfile(sandbox: &Sandbox, server: &mut Running) -> (PathBuf, u16, String) {
    let (lockfile, content) = wait_for_lockfile(sandbox, server);
    let port: u16 = lockfile
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_ne!(port, 0);
    assert_eq!(content["pid"], json!(server.child.id()));
    assert_eq!(
        content["workspaceFolders"],
        json!([sandbox.ws.to_str().unwrap()])
    );
    assert_eq!(content["ideName"], "e2e IDE");
    assert_eq!(content["transport"], "ws");
    assert_eq!(content["runningInWindows"], false);
    let token = content["authToken"].as_str().unwrap().to_owned();
    assert!(token.len() >= 32, "{token}");
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&lockfile), 0o600);
    assert_eq!(mode(lockfile.parent().unwrap()), 0o700);

    (lockfile, port, token)
}

/// The four tools that read the headless editor state.
async fn read_tools_answer(client: &mut WsClient, sandbox: &Sandbox) {
    let broken = sandbox.file("broken/src/lib.rs");
    let warns = sandbox.file("warns/src/lib.rs");
    let folders = client.call("getWorkspaceFolders", json!({})).await;
    assert_eq!(folders["folders"][0]["path"], sandbox.ws.to_str().unwrap());
    assert_eq!(folders["rootPath"], sandbox.ws.to_str().unwrap());

    let editors = client.call("getOpenEditors", json!({})).await;
    assert_eq!(
        editors["tabs"],
        json!([
            {"uri": format!("file://{broken}"), "isActive": false, "label": "lib.rs", "languageId": "rust", "isDirty": false},
            {"uri": format!("file://{warns}"), "isActive": true, "label": "lib.rs", "languageId": "rust", "isDirty": false},
        ])
    );

    let current = client.call("getCurrentSelection", json!({})).await;
    assert_eq!(current["success"], true);
    assert_eq!(current["text"], "ünused");
    assert_eq!(
        current["selection"],
        json!({"start": {"line": 4, "character": 8}, "end": {"line": 4, "character": 14}, "isEmpty": false})
    );

    let dirty = client
        .call("checkDocumentDirty", json!({"filePath": broken}))
        .await;
    assert_eq!(dirty["isDirty"], false);
}

/// Real cargo diagnostics in the CLI's shape, fresh after an edit on disk.
async fn diagnostics_follow_the_disk(client: &mut WsClient, sandbox: &Sandbox) {
    let broken = sandbox.file("broken/src/lib.rs");
    let warns = sandbox.file("warns/src/lib.rs");
    let broken_uri = format!("file://{broken}");
    let warns_uri = format!("file://{warns}");
    let all = client.call("getDiagnostics", json!({})).await;
    let errors = diagnostics_of(&all, &broken_uri).unwrap_or_else(|| panic!("{all}"));
    assert_eq!(errors.len(), 1, "{all}");
    assert_eq!(errors[0]["severity"], "Error");
    assert_eq!(errors[0]["code"], "E0425");
    assert_eq!(errors[0]["source"], "rustc");
    assert_eq!(
        errors[0]["range"],
        json!({"start": {"line": 5, "character": 28}, "end": {"line": 5, "character": 41}})
    );
    let warnings = diagnostics_of(&all, &warns_uri).unwrap_or_else(|| panic!("{all}"));
    assert_eq!(warnings.len(), 1, "{all}");
    assert_eq!(warnings[0]["severity"], "Warning");
    assert_eq!(warnings[0]["code"], "unused_variables");
    assert_eq!(
        warnings[0]["range"],
        json!({"start": {"line": 4, "character": 8}, "end": {"line": 4, "character": 14}})
    );

    // One file's diagnostics: the uri echoed, answered from what is known.
    let one = client
        .call("getDiagnostics", json!({"uri": broken_uri}))
        .await;
    assert_eq!(one[0]["uri"], broken_uri);
    assert_eq!(one[0]["diagnostics"].as_array().unwrap().len(), 1);

    // Fix the error on disk, then ask ~50 ms later, as the CLI does after an
    // edit: the answer waits for the re-check and no longer has the error.
    let text = std::fs::read_to_string(&broken).unwrap();
    std::fs::write(&broken, text.replace("missing_value + value", "value")).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let after = client.call("getDiagnostics", json!({})).await;
    assert!(diagnostics_of(&after, &broken_uri).is_none(), "{after}");
    assert_eq!(
        diagnostics_of(&after, &warns_uri).unwrap().len(),
        1,
        "{after}"
    );
}

#[test]
fn stdio_serve_lists_and_calls_tools_and_writes_no_lockfile() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.command(&[
        "serve",
        "--stdio",
        "--workspace",
        sandbox.ws.to_str().unwrap(),
        "--diagnostics",
        "none",
    ]);
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut server = Running::spawn(command);
    let mut stdin = server.child.stdin.take().unwrap();
    let stdout = server.child.stdout.take().unwrap();
    let (lines_tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines_tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let answer = |request: Value, stdin: &mut std::process::ChildStdin| -> Value {
        writeln!(stdin, "{request}").unwrap();
        let line = lines
            .recv_timeout(ANSWER)
            .unwrap_or_else(|_| panic!("no answer to {request}"));
        serde_json::from_str(&line).unwrap()
    };

    let init = answer(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params()}),
        &mut stdin,
    );
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let list = answer(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        &mut stdin,
    );
    assert_eq!(
        list["result"]["tools"].as_array().unwrap().len(),
        TOOL_NAMES.len()
    );
    let call = answer(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "getWorkspaceFolders", "arguments": {}}}),
        &mut stdin,
    );
    let folders: Value =
        serde_json::from_str(call["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(folders["folders"][0]["path"], sandbox.ws.to_str().unwrap());
    let diagnostics = answer(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
               "params": {"name": "getDiagnostics", "arguments": {}}}),
        &mut stdin,
    );
    assert_eq!(diagnostics["result"]["content"][0]["text"], "[]");

    assert!(sandbox.lockfiles().is_empty());
    drop(stdin);
    let status = server.wait_timeout(Duration::from_secs(20));
    assert!(status.success(), "{status}; stderr:\n{}", server.stderr());
}

fn run(sandbox: &Sandbox, args: &[&str]) -> Output {
    let output = sandbox.command(args).output().unwrap();
    assert!(
        output.status.success(),
        "ide-mcp {args:?} failed ({}); stderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn call_text(sandbox: &Sandbox, args: &[&str]) -> Value {
    let output = run(sandbox, args);
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn tools_lint_passes_and_lists_the_five_tools() {
    let sandbox = Sandbox::new();
    let output = run(&sandbox, &["tools", "--lint"]);
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, TOOL_NAMES);
    assert!(String::from_utf8_lossy(&output.stderr).contains("0 violation"));
}

#[test]
fn call_prints_each_tools_result() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws.to_str().unwrap();
    let broken = sandbox.file("broken/src/lib.rs");
    let warns = sandbox.file("warns/src/lib.rs");

    let folders = call_text(
        &sandbox,
        &["call", "getWorkspaceFolders", "--workspace", ws],
    );
    assert_eq!(folders["folders"][0]["path"], ws);

    let editors = call_text(&sandbox, &["call", "getOpenEditors", "--open", &broken]);
    assert_eq!(editors["tabs"][0]["uri"], format!("file://{broken}"));
    assert_eq!(editors["tabs"][0]["isActive"], true);

    // Columns are 1-based characters: `missing_value` starts at the 28th.
    let select = format!("{broken}:6:28-6:41");
    let selection = call_text(
        &sandbox,
        &["call", "getCurrentSelection", "--select", &select],
    );
    assert_eq!(selection["text"], "missing_value");
    assert_eq!(
        selection["selection"]["start"],
        json!({"line": 5, "character": 28})
    );

    let arguments = json!({"filePath": broken}).to_string();
    let dirty = call_text(&sandbox, &["call", "checkDocumentDirty", &arguments]);
    assert_eq!(dirty["isDirty"], false);

    // getDiagnostics waits for the first complete check.
    let diagnostics = call_text(&sandbox, &["call", "getDiagnostics", "--workspace", ws]);
    let errors = diagnostics_of(&diagnostics, &format!("file://{broken}")).unwrap();
    assert_eq!(errors[0]["code"], "E0425");
    let warnings = diagnostics_of(&diagnostics, &format!("file://{warns}")).unwrap();
    assert_eq!(warnings[0]["code"], "unused_variables");

    // A tool error is printed and fails the command; an unknown tool fails.
    let output = sandbox
        .command(&["call", "checkDocumentDirty", "{}"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["isError"], true);
    let output = sandbox.command(&["call", "noSuchTool"]).output().unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("noSuchTool"));
}

#[test]
fn a_missing_open_file_fails_before_serving() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .command(&[
            "serve",
            "--open",
            "no/such/file.rs",
            "--diagnostics",
            "none",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no/such/file.rs"), "{stderr}");
    assert!(sandbox.lockfiles().is_empty());
}

/// The pids of `pid`'s children (any of its threads may have spawned them).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|child| child.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Whether `pid` is gone or a zombie waiting to be reaped.
fn is_dead(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[test]
fn sigterm_during_a_check_kills_cargo_too() {
    let sandbox = Sandbox::new();
    // A package whose build script takes a while, so the check is running.
    let slow = sandbox.dir.path().join("slow");
    std::fs::create_dir_all(slow.join("src")).unwrap();
    std::fs::write(
        slow.join("Cargo.toml"),
        "[package]\nname = \"slow\"\nversion = \"0.1.0\"\nedition = \"2024\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        slow.join("build.rs"),
        // Up to 30 s, but gone within 0.1 s of cargo (its parent) dying.
        "fn main() {\n\
         let parent = std::os::unix::process::parent_id();\n\
         for _ in 0..300 {\n\
         std::thread::sleep(std::time::Duration::from_millis(100));\n\
         if std::os::unix::process::parent_id() != parent { return; }\n\
         }\n\
         }\n",
    )
    .unwrap();
    std::fs::write(slow.join("src/lib.rs"), "//! Slow to build.\n").unwrap();
    let mut server =
        Running::spawn(sandbox.command(&["serve", "--workspace", slow.to_str().unwrap()]));
    wait_for_lockfile(&sandbox, &mut server);

    let start = Instant::now();
    let cargo = loop {
        server.assert_running();
        // `cargo metadata` comes first; the check is the child that stays.
        if let [child] = children(server.child.id())[..]
            && std::fs::read_to_string(format!("/proc/{child}/cmdline"))
                .is_ok_and(|cmdline| cmdline.contains("check"))
        {
            break child;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no cargo check; stderr:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Wait for the build script: cargo is then silent for a while, so only
    // the server killing it (not a write to a closed pipe) ends it soon.
    while !children(cargo).iter().any(|&child| {
        std::fs::read_to_string(format!("/proc/{child}/cmdline"))
            .is_ok_and(|cmdline| cmdline.contains("build-script-build"))
    }) {
        server.assert_running();
        assert!(
            start.elapsed() < DEADLINE,
            "no build script; stderr:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = server.wait_timeout(Duration::from_secs(20));
    assert!(status.success(), "{status}; stderr:\n{}", server.stderr());
    let start = Instant::now();
    while !is_dead(cargo) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "cargo {cargo} outlived the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(sandbox.lockfiles().is_empty());
}
