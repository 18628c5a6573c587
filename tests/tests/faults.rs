//! Faults: tools and ports that panic, hang or block; clients that vanish,
//! stall or flood; the serving process killed or signalled. Each test
//! injects the fault through a real WebSocket and then proves that the
//! server still answers, within a bound.
//!
//! `runtime/tests/` covers hand-built panicking tools over the in-memory
//! transport, a slow reader, and SIGTERM with no request running; this suite
//! uses `#[mcp_tool]` tools and the real five tools over ports that fail.

mod support;
// `hang` and `slow`, shared with the child server.
#[path = "../src/slow_tools.rs"]
mod slow_tools;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use ide_mcp_runtime::{MAX_IN_FLIGHT, WsOptions, mcp_tool};
use ide_mcp_tools::memory::MemoryWorkspace;
use ide_mcp_tools::{
    BufferId, BufferStore, DiagnosticsQuery, DocumentHandle, EditorAccess, EditorPorts,
    FileDiagnostics, OpenBuffer, Selection,
};
use lsp_types::Diagnostic;
use support::{
    Client, WAIT, ask, assert_alive, call, cancel, close_code, connect_to, initialized,
    initialized_client, json, recv, send, serve, server_with, workspace,
};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// Panics.
#[mcp_tool]
fn panic_now() -> String {
    panic!("injected panic (inline)")
}

/// Panics after a moment.
#[mcp_tool]
async fn panic_later() -> String {
    tokio::time::sleep(Duration::from_millis(5)).await;
    panic!("injected panic (async)")
}

/// Panics on the blocking pool.
#[mcp_tool(blocking)]
fn panic_blocking() -> String {
    panic!("injected panic (blocking)")
}

/// Returns `mb` MiB of text.
#[mcp_tool]
fn big(mb: usize) -> String {
    "x".repeat(mb << 20)
}

/// A port that blocks its caller until it is opened.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

/// Waits (blocking its thread) until the gate opens.
#[mcp_tool(blocking)]
fn wait_at_gate(gate: &Gate) -> String {
    let mut open = gate.open.lock().unwrap();
    while !*open {
        open = gate.opened.wait(open).unwrap();
    }
    "passed the gate".to_owned()
}

/// Ports that panic inside the real tools while `armed`, and otherwise pass
/// through to the in-memory ones.
struct Armed<P> {
    inner: Arc<P>,
    armed: Arc<AtomicBool>,
}

impl<P> Armed<P> {
    fn check(&self, what: &str) {
        assert!(
            !self.armed.load(Ordering::SeqCst),
            "injected panic in the port ({what})"
        );
    }
}

impl<P: EditorAccess> EditorAccess for Armed<P> {
    fn open_buffers(&self) -> Vec<OpenBuffer> {
        self.check("open_buffers");
        self.inner.open_buffers()
    }
    fn active_selection(&self) -> Option<Selection> {
        self.check("active_selection");
        self.inner.active_selection()
    }
}

impl<P: BufferStore> BufferStore for Armed<P> {
    fn handle_for(&self, id: BufferId) -> Option<DocumentHandle> {
        self.check("handle_for");
        self.inner.handle_for(id)
    }
    fn handle_for_path(&self, path: &Path) -> Option<DocumentHandle> {
        self.check("handle_for_path");
        self.inner.handle_for_path(path)
    }
}

impl<P: DiagnosticsQuery> DiagnosticsQuery for Armed<P> {
    fn all(&self) -> Vec<FileDiagnostics> {
        self.check("all");
        self.inner.all()
    }
    fn for_file(&self, path: &Path) -> Option<Arc<[Diagnostic]>> {
        self.check("for_file");
        self.inner.for_file(path)
    }
    fn generation(&self) -> u64 {
        // Armed, the cache must not hide the panicking `all`.
        self.inner.generation() + u64::from(self.armed.load(Ordering::SeqCst))
    }
}

fn armed_context(ws: &MemoryWorkspace, armed: &Arc<AtomicBool>) -> EditorPorts {
    EditorPorts::builder()
        .editor(Arc::new(Armed {
            inner: ws.editor.clone(),
            armed: armed.clone(),
        }))
        .buffers(Arc::new(Armed {
            inner: ws.buffers.clone(),
            armed: armed.clone(),
        }))
        .diagnostics(Arc::new(Armed {
            inner: ws.diagnostics.clone(),
            armed: armed.clone(),
        }))
        .workspace_folder("/ws")
        .build()
}

const FAULT_TOOLS: [&str; 7] = [
    "panicNow",
    "panicLater",
    "panicBlocking",
    "hang",
    "slow",
    "big",
    "waitAtGate",
];

fn fault_server(cx: EditorPorts, gate: Arc<Gate>) -> ide_mcp_runtime::Server {
    server_with(cx, &FAULT_TOOLS)
        .state_arc(gate)
        .build()
        .unwrap()
}

/// The code and message of a JSON-RPC error answer.
fn error_of(answer: &str) -> (i64, String) {
    let value = json(answer);
    (
        value["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {answer}")),
        value["error"]["message"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_tools_and_ports_are_internal_errors_and_the_server_lives() {
    let ws = workspace();
    let armed = Arc::new(AtomicBool::new(true));
    let server = fault_server(armed_context(&ws, &armed), Arc::default());
    let (handle, _dir) = serve(&server, WsOptions::default()).await;
    let mut client = initialized(&handle).await;
    let mut id = 0;
    let mut next = || {
        id += 1;
        id
    };
    for (tool, message) in [
        ("panicNow", "injected panic (inline)"),
        ("panicLater", "injected panic (async)"),
        ("panicBlocking", "injected panic (blocking)"),
    ] {
        let (code, text) = error_of(&ask(&mut client, &call(next(), tool, "{}")).await);
        assert_eq!(code, -32603);
        assert_eq!(text, format!("tool `{tool}` panicked: {message}"));
        assert_alive(&mut client, next()).await;
    }
    // The real tools, each over a port that panics.
    let real = [
        ("getOpenEditors", "{}", "open_buffers"),
        ("getCurrentSelection", "{}", "active_selection"),
        (
            "checkDocumentDirty",
            r#"{"filePath":"/ws/src/module_0.rs"}"#,
            "handle_for_path",
        ),
        ("getDiagnostics", "{}", "all"),
        (
            "getDiagnostics",
            r#"{"uri":"/ws/src/module_0.rs"}"#,
            "for_file",
        ),
    ];
    for (tool, args, port) in real {
        let (code, text) = error_of(&ask(&mut client, &call(next(), tool, args)).await);
        assert_eq!(code, -32603, "{tool}");
        assert_eq!(
            text,
            format!("tool `{tool}` panicked: injected panic in the port ({port})")
        );
        assert_alive(&mut client, next()).await;
    }
    // A tool whose port does not panic is unaffected meanwhile.
    let answer = json(&ask(&mut client, &call(next(), "getWorkspaceFolders", "{}")).await);
    assert_eq!(answer["result"]["isError"], serde_json::Value::Null);
    // Disarmed, the same tools answer normally on the same connection and
    // on a new one: a panic poisoned nothing.
    armed.store(false, Ordering::SeqCst);
    let mut other = initialized(&handle).await;
    for c in [&mut client, &mut other] {
        for (tool, args, _) in real {
            let answer = json(&ask(c, &call(next(), tool, args)).await);
            assert!(
                answer["result"]["content"][0]["text"].is_string(),
                "{tool}: {answer}"
            );
            assert_eq!(
                answer["result"]["isError"],
                serde_json::Value::Null,
                "{tool}"
            );
        }
    }
}

/// Reads the next message if one comes within `wait`.
async fn maybe_recv(client: &mut Client, wait: Duration) -> Option<String> {
    tokio::time::timeout(wait, recv(client)).await.ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_that_never_finish_are_cancelled_refused_beyond_the_limit_and_answered_at_shutdown() {
    let server = fault_server(support::editor_ports(&workspace()), Arc::default());
    let (handle, _dir) = serve(&server, WsOptions::default()).await;
    let mut client = initialized(&handle).await;
    let limit = MAX_IN_FLIGHT as u64;
    for id in 1..=limit {
        send(&mut client, &call(id, "hang", "{}")).await;
    }
    // The connection is full, yet still reads: one more call of a hanging
    // tool is refused at once, a ping and an inline tool are answered.
    let refused = ask(&mut client, &call(1000, "hang", "{}")).await;
    assert_eq!(
        refused,
        r#"{"jsonrpc":"2.0","id":1000,"error":{"code":-32030,"message":"too many requests in flight on this connection (64); wait for answers or cancel some, then call `hang` again","data":{"reason":"tooManyRequestsInFlight","limit":64}}}"#
    );
    assert_alive(&mut client, 1001).await;
    let tabs = json(&ask(&mut client, &call(1002, "getOpenEditors", "{}")).await);
    assert!(tabs["result"]["content"][0]["text"].is_string());
    // Cancelling frees the slots: never answered, and as many new calls fit.
    for id in 1..=limit {
        send(&mut client, &cancel(id)).await;
    }
    for id in 2001..2001 + limit {
        send(&mut client, &call(id, "hang", "{}")).await;
    }
    assert_alive(&mut client, 1003).await;
    assert_eq!(
        maybe_recv(&mut client, Duration::from_millis(200)).await,
        None
    );

    // Shutdown answers every call still running (none would end by itself,
    // so an answer is the proof; `WAIT` bounds only a hang), then closes
    // (1001).
    let shutdown = tokio::spawn(handle.shutdown());
    let mut answered = Vec::new();
    for _ in 0..limit {
        let answer = recv(&mut client).await;
        let id = json(&answer)["id"].as_u64().unwrap();
        assert_eq!(
            answer,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32031,"message":"`hang` was cancelled: the server is shutting down","data":{{"reason":"shutdown"}}}}}}"#
            )
        );
        answered.push(id);
    }
    assert_eq!(close_code(&mut client).await, Some(CloseCode::Away));
    tokio::time::timeout(WAIT, shutdown).await.unwrap().unwrap();
    assert_eq!(answered.len(), MAX_IN_FLIGHT);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_still_running_when_stdio_input_ends_are_answered_within_a_bound() {
    let server = fault_server(support::editor_ports(&workspace()), Arc::default());
    let mut client = server.connect_memory();
    client.request(support::INIT).await;
    client.send(call(1, "hang", "{}")).await;
    client.send(call(2, "slow", r#"{"ms":50}"#)).await;
    // `hang` never ends by itself: its answer shows the bound was applied
    // (`WAIT` bounds only a hang).
    let rest = tokio::time::timeout(WAIT, client.close()).await.unwrap();
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!(json(&rest[0])["id"], 2);
    assert_eq!(
        rest[1],
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32031,"message":"`hang` was cancelled: the input ended and the call did not finish in time","data":{"reason":"inputEnded"}}}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_port_in_a_blocking_tool_does_not_stall_other_requests() {
    let gate = Arc::new(Gate::default());
    let server = fault_server(support::editor_ports(&workspace()), gate.clone());
    let (handle, _dir) = serve(&server, WsOptions::default()).await;
    let mut client = initialized(&handle).await;
    // Eight calls stuck in the port, on the blocking pool.
    for id in 1..=8 {
        send(&mut client, &call(id, "waitAtGate", "{}")).await;
    }
    // Meanwhile every other request on the same connection is answered
    // (each within `WAIT`, the bound of a hang).
    for round in 0..20u64 {
        for (i, tool) in support::READ_TOOLS.iter().enumerate() {
            let id = 100 + round * 10 + i as u64;
            let args = if *tool == "checkDocumentDirty" {
                r#"{"filePath":"/ws/src/module_0.rs"}"#
            } else {
                "{}"
            };
            let answer = json(&ask(&mut client, &call(id, tool, args)).await);
            assert_eq!(answer["id"], id, "{answer}");
        }
        assert_alive(&mut client, 900 + round).await;
    }
    // Opened, the stuck calls all complete.
    gate.open();
    let mut ids: Vec<u64> = Vec::new();
    for _ in 1..=8 {
        let answer = json(&recv(&mut client).await);
        assert_eq!(
            answer["result"]["content"][0]["text"], "\"passed the gate\"",
            "{answer}"
        );
        ids.push(answer["id"].as_u64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, (1..=8).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_vanishing_mid_response_free_their_connection() {
    let server = fault_server(support::editor_ports(&workspace()), Arc::default());
    let (handle, _dir) = serve(
        &server,
        WsOptions {
            max_connections: 4,
            ..WsOptions::default()
        },
    )
    .await;
    for round in 0..24u64 {
        let mut client = initialized(&handle).await;
        send(&mut client, &call(round, "big", r#"{"mb":8}"#)).await;
        if round % 2 == 0 {
            // Let the server start writing the 8 MiB, then vanish.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop(client);
    }
    // Every vanished client gave its slot back: four fit at once again.
    let mut clients = Vec::new();
    let deadline = Instant::now() + WAIT;
    while clients.len() < 4 {
        assert!(Instant::now() < deadline, "slots were not released");
        match tokio_tungstenite::connect_async(support::upgrade_request(
            handle.port(),
            handle.auth_token(),
        ))
        .await
        {
            Ok((client, _)) => clients.push(initialized_client(client).await),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    for (i, client) in clients.iter_mut().enumerate() {
        let answer = json(&ask(client, &call(i as u64, "big", r#"{"mb":1}"#)).await);
        assert_eq!(
            answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .len(),
            (1 << 20) + 2
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_connections_time_out_and_others_are_served_meanwhile() {
    let server = fault_server(support::editor_ports(&workspace()), Arc::default());
    let (handle, _dir) = serve(
        &server,
        WsOptions {
            handshake_timeout: Duration::from_millis(300),
            ..WsOptions::default()
        },
    )
    .await;
    let port = handle.port();
    // A server of the default timeout, reached first: a timeout of 300 ms
    // shows in the order of events (ours close while that one stays open),
    // not in a wall-clock bound a loaded machine could break.
    let (patient, _patient_dir) = serve(
        &server,
        WsOptions {
            handshake_timeout: Duration::from_hours(1),
            ..WsOptions::default()
        },
    )
    .await;
    let waiting = TcpStream::connect(("127.0.0.1", patient.port()))
        .await
        .unwrap();
    // Connect and say nothing; connect and send half a request.
    let mut silent = Vec::new();
    for i in 0..8 {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        if i % 2 == 1 {
            stream
                .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: webs")
                .await
                .unwrap();
        }
        silent.push(stream);
    }
    // Meanwhile a real client is served.
    let mut client = initialized(&handle).await;
    assert_alive(&mut client, 1).await;
    // Each half-open connection is closed by the server after the timeout
    // (`WAIT` bounds only a hang).
    for mut stream in silent {
        let mut buf = [0u8; 64];
        let read = tokio::time::timeout(WAIT, stream.read(&mut buf)).await;
        assert!(
            matches!(read, Ok(Ok(0) | Err(_))),
            "the server closes a half-open connection: {read:?}"
        );
    }
    let mut byte = [0u8; 1];
    assert!(
        matches!(waiting.try_read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the connection of an hour's timeout is still open"
    );

    // Upgraded, then silent: a client that never reads is not waited on.
    // Notifications to it are dropped once its queue is full, sending never
    // blocks, and a reading client keeps receiving them (a burst may drop
    // some for it too: notifications are hints); the last one, sent when the
    // burst is over, reaches it.
    let _silent_ws = initialized(&handle).await;
    assert_alive(&mut client, 2).await;
    let started = Instant::now();
    let count = 2000;
    let reader = tokio::spawn(async move {
        let mut received = 0;
        loop {
            let note = json(&recv(&mut client).await);
            received += 1;
            if note["params"]["n"] == count {
                return (client, received);
            }
        }
    });
    for n in 0..count {
        server.notifier().notify(
            "at_mentioned",
            &serde_json::json!({"filePath": "/ws/a.rs", "n": n}),
        );
        if n % 32 == 0 {
            tokio::task::yield_now().await;
        }
    }
    // Returning at all is the proof that sending never waits for the
    // silent client, which never reads; the time is for the log.
    let notify_time = started.elapsed();
    tokio::time::sleep(Duration::from_millis(200)).await;
    server.notifier().notify(
        "at_mentioned",
        &serde_json::json!({"filePath": "/ws/a.rs", "n": count}),
    );
    let (mut client, received) = tokio::time::timeout(WAIT, reader).await.unwrap().unwrap();
    eprintln!("2000 notifications sent in {notify_time:?}");
    assert!(received > 64, "the reader got {received} notifications");
    assert_alive(&mut client, 3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_flood_beyond_the_maximum_is_refused_cleanly() {
    let server = fault_server(support::editor_ports(&workspace()), Arc::default());
    let (handle, _dir) = serve(
        &server,
        WsOptions {
            max_connections: 8,
            ..WsOptions::default()
        },
    )
    .await;
    let port = handle.port();
    let mut clients = Vec::new();
    for _ in 0..8 {
        clients.push(initialized(&handle).await);
    }
    // Token holders beyond the maximum: each gets a complete 503.
    let request = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
         X-Claude-Code-Ide-Authorization: {}\r\n\r\n",
        handle.auth_token()
    );
    let flood: Vec<_> = (0..200)
        .map(|_| {
            let request = request.clone();
            tokio::spawn(async move {
                let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
                stream.write_all(request.as_bytes()).await.unwrap();
                let mut response = Vec::new();
                let _ = tokio::time::timeout(WAIT, stream.read_to_end(&mut response)).await;
                String::from_utf8_lossy(&response).into_owned()
            })
        })
        .collect();
    let mut refused = 0;
    for task in flood {
        let response = task.await.unwrap();
        assert!(
            response.starts_with("HTTP/1.1 503 Service Unavailable\r\n")
                && response
                    .ends_with("\r\n\r\ntoo many connections; try again when one has closed\n"),
            "{response:?}"
        );
        refused += 1;
    }
    assert_eq!(refused, 200);
    for (i, client) in clients.iter_mut().enumerate() {
        assert_alive(client, i as u64).await;
    }
    // Once the clients leave, new ones are accepted.
    for mut client in clients.drain(..) {
        client.close(None).await.unwrap();
    }
    let deadline = Instant::now() + WAIT;
    while clients.len() < 8 {
        assert!(Instant::now() < deadline, "slots were not released");
        if let Ok((c, _)) =
            tokio_tungstenite::connect_async(support::upgrade_request(port, handle.auth_token()))
                .await
        {
            clients.push(c);
        } else {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Starts `src/bin/signal_server.rs` (the five tools, `hang` and `slow`)
/// in a child process and waits for its lockfile.
async fn spawn_child(dir: &Path) -> (tokio::process::Child, PathBuf, u16, String) {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_signal_server"))
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let ide = dir.join("ide");
    let pid = child.id().unwrap();
    let found = tokio::time::timeout(WAIT, async {
        loop {
            for entry in std::fs::read_dir(&ide).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "lock")
                    && let Ok(bytes) = std::fs::read(&path)
                    && let Ok(content) =
                        serde_json::from_slice::<ide_mcp_runtime::lockfile::LockfileContent>(&bytes)
                    && content.pid == pid
                {
                    let port = path.file_stem().unwrap().to_str().unwrap().parse().unwrap();
                    return (path, port, content.auth_token);
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the child writes its lockfile");
    (child, found.0, found.1, found.2)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_sigkill_the_next_start_removes_the_stale_lockfile() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, lockfile, port, token) = spawn_child(dir.path()).await;
    let mut client = initialized_client(connect_to(port, &token).await).await;
    assert_alive(&mut client, 1).await;
    child.start_kill().unwrap(); // SIGKILL: no handler runs
    let status = tokio::time::timeout(WAIT, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(!status.success());
    assert!(lockfile.exists(), "a killed server leaves its lockfile");
    // The client sees the connection end.
    assert_eq!(close_code(&mut client).await, None);
    // The next server in the same directory removes it.
    let server = fault_server(support::editor_ports(&workspace()), Arc::default());
    let handle = server
        .serve_ws(WsOptions {
            config_dir: Some(dir.path().to_owned()),
            ..WsOptions::default()
        })
        .await
        .unwrap();
    assert!(!lockfile.exists(), "the stale lockfile is removed at start");
    assert!(handle.lockfile_path().unwrap().exists());
}

/// Sends `signal` to the child while it runs a call that never finishes and
/// one that finishes soon: both are answered, the connection closes (1001),
/// the child exits cleanly and its lockfile is gone, all within a bound.
async fn signal_with_calls_in_flight(signal: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, lockfile, port, token) = spawn_child(dir.path()).await;
    let mut client = initialized_client(connect_to(port, &token).await).await;
    send(&mut client, &call(1, "hang", "{}")).await;
    send(&mut client, &call(2, "slow", r#"{"ms":100}"#)).await;
    send(&mut client, &call(3, "slow", r#"{"ms":60000}"#)).await;
    assert_eq!(
        json(&recv(&mut client).await)["result"]["content"][0]["text"],
        "\"slept 100 ms\""
    );
    let pid = child.id().unwrap().to_string();
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let mut ids = Vec::new();
    for _ in 0..2 {
        let answer = recv(&mut client).await;
        let (code, text) = error_of(&answer);
        assert_eq!(code, -32031);
        assert!(text.contains("shutting down"), "{text}");
        assert_eq!(json(&answer)["error"]["data"]["reason"], "shutdown");
        ids.push(json(&answer)["id"].as_u64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, [1, 3]);
    assert_eq!(close_code(&mut client).await, Some(CloseCode::Away));
    let exit = tokio::time::timeout(WAIT, child.wait())
        .await
        .unwrap()
        .unwrap();
    // A minute-long call and a hanging one were answered: the signal did
    // not wait for them (`WAIT` bounds only a hang).
    assert!(exit.success(), "{signal}: {exit:?}");
    assert!(!lockfile.exists(), "{signal}: the lockfile is removed");
    // The next request to that port finds nothing.
    assert!(TcpStream::connect(("127.0.0.1", port)).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_answers_in_flight_calls_and_removes_the_lockfile() {
    signal_with_calls_in_flight("TERM").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_answers_in_flight_calls_and_removes_the_lockfile() {
    signal_with_calls_in_flight("INT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_nothing_running_exits_cleanly_and_removes_the_lockfile() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, lockfile, port, _token) = spawn_child(dir.path()).await;
    let content: ide_mcp_runtime::lockfile::LockfileContent =
        serde_json::from_slice(&std::fs::read(&lockfile).unwrap()).unwrap();
    assert_eq!(content.pid, child.id().unwrap());
    let status = std::process::Command::new("kill")
        .args(["-TERM", &content.pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = tokio::time::timeout(WAIT, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exit.success(), "{exit:?}");
    assert!(!lockfile.exists());
    assert!(TcpStream::connect(("127.0.0.1", port)).await.is_err());
}
