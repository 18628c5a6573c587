//! `ide-mcp serve` as Gemini CLI's IDE companion: the discovery file
//! (private, exact, removed at exit), the handshake `gemini` makes
//! (2025-06-18, `notifications/initialized` answered 202, then its event
//! stream), the first `ide/contextUpdate` on that stream, no diff tools
//! without an editor, every refusal, and `--no-gemini`.

mod common;

use std::net::SocketAddr;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::PathBuf;

use common::{DEADLINE, Running, Sandbox, wait_for_lockfile};
use ide_mcp_test_support::http::{Answer, Events, Req, post};
use serde_json::{Value, json};

/// What `gemini` 0.61.0 sends first.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"streamable-http-client","version":"0.61.0"}}}"#;

/// Waits for the one discovery file in the sandbox.
fn discovery_file(sandbox: &Sandbox, server: &mut Running) -> PathBuf {
    common::wait_for_one("discovery file", server, || sandbox.gemini_files())
}

/// The session `gemini` opens: `initialize`, then `notifications/initialized`.
async fn open_session(addr: SocketAddr, token: &str) -> String {
    let answer = post(token, INITIALIZE).send(addr).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let result = &answer.json()["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["serverInfo"]["name"], "ide-mcp");
    let session = answer.header("mcp-session-id").unwrap().to_owned();
    let initialized = post(
        token,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .header("Mcp-Session-Id", &session)
    .header("MCP-Protocol-Version", "2025-06-18")
    .send(addr)
    .await;
    assert_eq!(
        initialized.status, 202,
        "the CLI opens its stream only on 202"
    );
    session
}

fn stream(token: &str, session: &str) -> Req {
    Req::new("GET")
        .header("Authorization", &format!("Bearer {token}"))
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", session)
        .header("MCP-Protocol-Version", "2025-06-18")
}

fn refused(answer: &Answer) -> (u16, Value) {
    (answer.status, answer.json()["error"]["message"].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_finds_and_reads_the_headless_host() {
    let sandbox = Sandbox::new();
    let warns = sandbox.file("warns/src/lib.rs");
    let select = format!("{warns}:5:9-5:15");
    let mut server = sandbox.serve(&[
        "--open",
        &warns,
        "--select",
        &select,
        "--diagnostics",
        "none",
        "--ide-name",
        "Headless",
    ]);
    let file = discovery_file(&sandbox, &mut server);
    let name = file.file_name().unwrap().to_str().unwrap().to_owned();
    let pid = server.child.id();
    let port: u16 = name
        .strip_prefix(&format!("gemini-ide-server-{pid}-"))
        .and_then(|rest| rest.strip_suffix(".json"))
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("{name} names the host's pid and its port"));
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.uid(), std::fs::metadata(&sandbox.ws).unwrap().uid());
    let content: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let token = content["authToken"].as_str().unwrap().to_owned();
    assert!(token.len() >= 32);
    assert_eq!(
        content,
        json!({
            "port": port,
            "workspacePath": sandbox.ws.to_str().unwrap(),
            "authToken": token,
            "ideInfo": {"name": "ide-mcp", "displayName": "Headless"},
            // Our mark, by which a later host knows a file of ours whose
            // process is gone.
            "ideMcp": content["ideMcp"],
        })
    );
    assert!(content["ideMcp"].is_object(), "{content}");
    let addr = SocketAddr::from(([127, 0, 0, 1], port));

    let session = open_session(addr, &token).await;
    let mut events = Events::open(stream(&token, &session), addr).await;
    assert_eq!(events.status, 200);
    let update = events.next_json().await;
    // Milliseconds since the epoch, of when the host saw the file.
    let timestamp = &update["params"]["workspaceState"]["openFiles"][0]["timestamp"];
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    assert!(
        timestamp.as_u64().is_some_and(|t| {
            u128::from(t) <= since_epoch.as_millis()
                && u128::from(t) + DEADLINE.as_millis() * 2 >= since_epoch.as_millis()
        }),
        "{update}"
    );
    assert_eq!(
        update,
        json!({"jsonrpc": "2.0", "method": "ide/contextUpdate", "params": {"workspaceState": {"openFiles": [{
            "path": warns,
            "timestamp": timestamp,
            "isActive": true,
            "cursor": {"line": 5, "character": 15},
            "selectedText": "ünused",
        }]}}})
    );
    // No one to review an edit: no diff tools (the CLI then writes itself).
    let list = post(&token, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .header("Mcp-Session-Id", &session)
        .send(addr)
        .await;
    assert_eq!(list.json()["result"]["tools"], json!([]));

    // Claude's face serves beside it, with its lockfile.
    wait_for_lockfile(&sandbox, &mut server);
    server.terminate(DEADLINE);
    assert_eq!(events.next().await, None, "the stream ends with the host");
    assert!(
        sandbox.gemini_files().is_empty(),
        "the discovery file is removed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_s_face_refuses_what_is_not_gemini() {
    let sandbox = Sandbox::new();
    let mut server = sandbox.serve(&["--diagnostics", "none"]);
    let file = discovery_file(&sandbox, &mut server);
    let content: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let token = content["authToken"].as_str().unwrap().to_owned();
    let port = u16::try_from(content["port"].as_u64().unwrap()).unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let no_token = post(&token, INITIALIZE)
        .without("Authorization")
        .send(addr)
        .await;
    assert_eq!(
        refused(&no_token),
        (
            401,
            json!(
                "no bearer token: send the one the server printed, as `Authorization: Bearer <token>`"
            )
        )
    );
    let wrong = post(&token, INITIALIZE)
        .set("Authorization", &format!("Bearer {}x", &token[1..]))
        .send(addr)
        .await;
    assert_eq!(wrong.status, 401);
    // Any Origin, this server's own included: no browser is a client.
    for origin in [
        "http://evil.example",
        &format!("http://127.0.0.1:{port}"),
        "null",
    ] {
        let browser = post(&token, INITIALIZE)
            .header("Origin", origin)
            .send(addr)
            .await;
        assert_eq!(
            refused(&browser),
            (
                403,
                json!(format!(
                    "requests from the origin {origin} are refused: no web page may call this server"
                ))
            ),
            "{origin}"
        );
    }
    let rebound = post(&token, INITIALIZE)
        .header("Host", &format!("evil.example:{port}"))
        .send(addr)
        .await;
    assert_eq!(rebound.status, 403);
    // The event stream is guarded as every request is.
    let session = open_session(addr, &token).await;
    let get_no_token = stream(&token, &session)
        .without("Authorization")
        .send(addr)
        .await;
    assert_eq!(get_no_token.status, 401);
    let get_origin = stream(&token, &session)
        .header("Origin", "http://evil.example")
        .send(addr)
        .await;
    assert_eq!(get_origin.status, 403);
    server.terminate(DEADLINE);
    assert!(sandbox.gemini_files().is_empty());
}

#[test]
fn no_gemini_writes_no_discovery_file() {
    let sandbox = Sandbox::new();
    let mut server = sandbox.serve(&["--diagnostics", "none", "--no-gemini"]);
    wait_for_lockfile(&sandbox, &mut server);
    assert!(sandbox.gemini_files().is_empty());
    assert!(!sandbox.gemini_dir().exists());
    server.terminate(DEADLINE);
}
