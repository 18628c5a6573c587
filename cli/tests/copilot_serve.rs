//! `ide-mcp serve` as the Copilot CLI's IDE: the lockfile (private, exact,
//! removed at exit), MCP Streamable HTTP over the Unix socket it names
//! (`Authorization: Nonce`, `Host: localhost`), the four tools and their
//! exact answers, `selection_changed` on the event stream, every refusal,
//! a session's end, and `--no-copilot`.

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use common::{DEADLINE, Running, Sandbox, wait_for_lockfile};
use ide_mcp_test_support::http::{Events, Req, post};
use serde_json::{Value, json};

/// What `copilot` sends once `server/discover` is refused.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"copilot-cli","version":"1.0.102"}}}"#;

/// Waits for the one lockfile in the sandbox's `$COPILOT_HOME/ide`.
fn lockfile(sandbox: &Sandbox, server: &mut Running) -> PathBuf {
    common::wait_for_one("Copilot lockfile", server, || sandbox.copilot_files())
}

/// A request as the CLI sends it: the lockfile's header.
fn with_nonce(req: Req, auth: &str) -> Req {
    req.set("Authorization", auth)
}

/// `initialize`, then `notifications/initialized`; the session's id.
async fn open_session(socket: &Path, auth: &str) -> String {
    let answer = with_nonce(post("", INITIALIZE), auth)
        .send_unix(socket)
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["result"]["serverInfo"]["name"], "ide-mcp");
    let session = answer.header("mcp-session-id").unwrap().to_owned();
    let initialized = with_nonce(
        post(
            "",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ),
        auth,
    )
    .header("Mcp-Session-Id", &session)
    .send_unix(socket)
    .await;
    assert_eq!(initialized.status, 202);
    session
}

/// The result of `method` with `params` in `session`.
async fn call(socket: &Path, auth: &str, session: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let answer = with_nonce(post("", body.to_string()), auth)
        .header("Mcp-Session-Id", session)
        .send_unix(socket)
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.json()["result"].clone()
}

/// A tool's answer: its one text, as JSON.
async fn tool(socket: &Path, auth: &str, session: &str, name: &str, arguments: Value) -> Value {
    let result = call(
        socket,
        auth,
        session,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
    .await;
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    serde_json::from_str(text).unwrap()
}

/// `get_diagnostics` of every file, then of `warns`: the one warning.
async fn diagnostics_are_exact(socket: &Path, auth: &str, session: &str, warns: &str) {
    let uri = format!("file://{warns}");
    // The whole list waits for the check; one file's answers at once.
    let all = tool(socket, auth, session, "get_diagnostics", json!({})).await;
    let one = tool(
        socket,
        auth,
        session,
        "get_diagnostics",
        json!({"uri": uri}),
    )
    .await;
    let warning = &all
        .as_array()
        .unwrap()
        .iter()
        .find(|file| file["uri"] == uri)
        .unwrap_or_else(|| panic!("{all}"))["diagnostics"][0];
    let expected = json!([{
        "uri": uri,
        "filePath": warns,
        "diagnostics": [{
            "message": warning["message"],
            "severity": "Warning",
            "range": {"start": {"line": 4, "character": 8}, "end": {"line": 4, "character": 14}},
            "source": "rustc",
            "code": "unused_variables",
        }],
    }]);
    assert!(
        warning["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("unused variable: `ünused`")),
        "{all}"
    );
    assert_eq!(
        json!([all
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["uri"] == uri)
            .unwrap()]),
        expected
    );
    assert_eq!(one, expected);
}

/// The one lockfile, private and exact: the credential and the socket.
fn exact_lockfile(sandbox: &Sandbox, server: &mut Running) -> (String, PathBuf) {
    let file = lockfile(sandbox, server);
    assert_eq!(file.extension().unwrap(), "lock");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&sandbox.copilot_dir()), 0o700);
    let content: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let auth = content["headers"]["Authorization"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        auth.strip_prefix("Nonce ").is_some_and(|n| n.len() >= 32),
        "{auth}"
    );
    let socket = PathBuf::from(content["socketPath"].as_str().unwrap());
    assert_eq!(
        mode(socket.parent().unwrap()),
        0o700,
        "the socket's directory is private"
    );
    assert_eq!(
        content,
        json!({
            "socketPath": socket,
            "scheme": "unix",
            "headers": {"Authorization": auth},
            "pid": server.child.id(),
            "timestamp": content["timestamp"],
            "ideName": "Headless",
            "workspaceFolders": [sandbox.ws],
            "ideMcp": content["ideMcp"],
        })
    );
    assert!(content["timestamp"].as_u64().is_some());
    assert!(
        content["ideMcp"].is_object(),
        "our mark, by which a stale file of ours is found"
    );
    (auth, socket)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_finds_and_reads_the_headless_host() {
    let sandbox = Sandbox::new();
    let warns = sandbox.file("warns/src/lib.rs");
    let select = format!("{warns}:5:9-5:15");
    let mut server = sandbox.serve(&[
        "--open",
        &warns,
        "--select",
        &select,
        "--diagnostics",
        "cargo",
        "--ide-name",
        "Headless",
    ]);
    let (auth, socket) = exact_lockfile(&sandbox, &mut server);

    // `server/discover` is refused: the CLI falls back to `initialize`.
    let discover = with_nonce(
        post(
            "",
            r#"{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}"#,
        ),
        &auth,
    )
    .header("MCP-Protocol-Version", "2026-07-28")
    .header("Mcp-Method", "server/discover")
    .send_unix(&socket)
    .await;
    assert_eq!(
        discover.json()["error"]["code"],
        -32601,
        "{}",
        discover.body
    );
    let session = open_session(&socket, &auth).await;
    let stream = with_nonce(Req::new("GET"), &auth)
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", &session);
    let mut events = Events::open_unix(stream, &socket).await;
    assert_eq!(events.status, 200);
    let selection = json!({
        "text": "ünused",
        "filePath": warns,
        "fileUrl": format!("file://{warns}"),
        "selection": {
            "start": {"line": 4, "character": 8},
            "end": {"line": 4, "character": 14},
            "isEmpty": false,
        },
    });
    assert_eq!(
        events.next_json().await,
        json!({"jsonrpc": "2.0", "method": "selection_changed", "params": selection})
    );

    let list = call(&socket, &auth, &session, "tools/list", json!({})).await;
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "close_diff",
            "get_diagnostics",
            "get_selection",
            "open_diff"
        ]
    );
    assert_eq!(
        tool(&socket, &auth, &session, "get_selection", json!({})).await,
        selection
    );

    diagnostics_are_exact(&socket, &auth, &session, &warns).await;
    let closed = tool(
        &socket,
        &auth,
        &session,
        "close_diff",
        json!({"tab_name": "t"}),
    )
    .await;
    assert_eq!(
        closed,
        json!({"success": true, "already_closed": true, "tab_name": "t", "message": "no review of that name was open"})
    );

    wait_for_lockfile(&sandbox, &mut server);
    server.terminate(DEADLINE);
    assert_eq!(events.next().await, None, "the stream ends with the host");
    assert!(
        sandbox.copilot_files().is_empty(),
        "the lockfile is removed"
    );
    assert!(!socket.exists(), "the socket is removed");
    assert!(!socket.parent().unwrap().exists(), "its directory too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_s_face_refuses_what_is_not_copilot() {
    let sandbox = Sandbox::new();
    let mut server = sandbox.serve(&["--diagnostics", "none"]);
    let file = lockfile(&sandbox, &mut server);
    let content: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let auth = content["headers"]["Authorization"]
        .as_str()
        .unwrap()
        .to_owned();
    let socket = PathBuf::from(content["socketPath"].as_str().unwrap());
    let initialize = || post("", INITIALIZE);
    let no_nonce = initialize()
        .without("Authorization")
        .send_unix(&socket)
        .await;
    assert_eq!(no_nonce.status, 401, "{}", no_nonce.body);
    let wrong = with_nonce(initialize(), &format!("{auth}x"))
        .send_unix(&socket)
        .await;
    assert_eq!(wrong.status, 401);
    let bearer = with_nonce(initialize(), &auth.replace("Nonce", "Bearer"))
        .send_unix(&socket)
        .await;
    assert_eq!(bearer.status, 401);
    let browser = with_nonce(initialize(), &auth)
        .header("Origin", "http://evil.example")
        .send_unix(&socket)
        .await;
    assert_eq!(browser.status, 403);
    let foreign = with_nonce(initialize(), &auth)
        .header("Host", "evil.example")
        .send_unix(&socket)
        .await;
    assert_eq!(foreign.status, 403);
    let session = open_session(&socket, &auth).await;
    let get = Req::new("GET")
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", &session)
        .send_unix(&socket)
        .await;
    assert_eq!(get.status, 401, "the event stream is guarded too");
    // The CLI ends its first session at start-up: 200, for its fetch over
    // the socket cannot build a 204.
    let ended = with_nonce(Req::new("DELETE"), &auth)
        .header("Mcp-Session-Id", &session)
        .send_unix(&socket)
        .await;
    assert_eq!((ended.status, ended.body.as_str()), (200, ""));
    server.terminate(DEADLINE);
    assert!(sandbox.copilot_files().is_empty());
    assert!(!socket.exists());
}

#[test]
fn no_copilot_writes_no_lockfile() {
    let sandbox = Sandbox::new();
    let mut server = sandbox.serve(&["--diagnostics", "none", "--no-copilot"]);
    wait_for_lockfile(&sandbox, &mut server);
    assert!(sandbox.copilot_files().is_empty());
    assert!(!sandbox.copilot_dir().exists());
    server.terminate(DEADLINE);
}
