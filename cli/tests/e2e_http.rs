//! End-to-end tests of `ide-mcp serve --http`: the printed `claude mcp add`
//! line, Streamable HTTP beside the IDE WebSocket in one process with the
//! same state, HTTP alone, and a token from a file.

mod common;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{DEADLINE, Running, Sandbox, wait_for_lockfile};
use serde_json::{Value, json};

/// The URL and token of the printed `claude mcp add --transport http` line.
fn printed_line(server: &mut Running) -> (String, String) {
    let start = Instant::now();
    loop {
        server.assert_running();
        let stderr = server.stderr();
        if let Some(line) = stderr.lines().find(|l| {
            l.trim_start()
                .starts_with("claude mcp add --transport http ide-mcp ")
        }) {
            let rest = line
                .trim()
                .strip_prefix("claude mcp add --transport http ide-mcp ")
                .unwrap();
            let (url, header) = rest.split_once(" --header ").unwrap();
            let token = header
                .strip_prefix("\"Authorization: Bearer ")
                .and_then(|t| t.strip_suffix('"'))
                .unwrap_or_else(|| panic!("the header of {line:?}"));
            return (url.to_owned(), token.to_owned());
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no `claude mcp add` line; stderr:\n{stderr}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One 2026-07-28 POST; the status and the parsed body.
fn post(url: &str, token: &str, id: u64, method: &str, params: &Value) -> (u16, Value) {
    let address = url
        .strip_prefix("http://")
        .unwrap()
        .strip_suffix("/mcp")
        .unwrap();
    let mut params = params.clone();
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let name = params["name"]
        .as_str()
        .map(|n| format!("Mcp-Name: {n}\r\n"))
        .unwrap_or_default();
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

fn tool_text(result: &Value) -> Value {
    serde_json::from_str(result["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_beside_the_websocket_serves_the_same_state() {
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
        "--http",
    ]);
    let (url, token) = printed_line(&mut server);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    assert!(token.len() >= 32);

    let (status, list) = post(&url, &token, 1, "tools/list", &json!({}));
    assert_eq!(status, 200);
    common::assert_headless_tools(&common::tool_names(&list["result"]));
    let over_http: Vec<Value> = [
        "getCurrentSelection",
        "getOpenEditors",
        "getWorkspaceFolders",
    ]
    .iter()
    .map(|tool| {
        tool_text(
            &post(
                &url,
                &token,
                2,
                "tools/call",
                &json!({"name": tool, "arguments": {}}),
            )
            .1,
        )
    })
    .collect();
    assert_eq!(over_http[0]["text"], "ünused");

    // The IDE WebSocket of the same process answers the same.
    let (_, lockfile) = wait_for_lockfile(&sandbox, &mut server);
    let port = common::lockfile_port(&sandbox.lockfiles()[0]);
    let mut client = common::ws::connect(port, lockfile["authToken"].as_str().unwrap()).await;
    for (i, tool) in [
        "getCurrentSelection",
        "getOpenEditors",
        "getWorkspaceFolders",
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(client.call(tool, json!({})).await, over_http[i], "{tool}");
    }
    let status = server.terminate(Duration::from_secs(20));
    assert!(status.success(), "{status}; stderr:\n{}", server.stderr());
}

/// `serve --http --no-ide` with the token in `token_file`.
fn serve_http_alone(sandbox: &Sandbox, token_file: &std::path::Path) -> Running {
    sandbox.serve(&[
        "--diagnostics",
        "none",
        "--http",
        "--no-ide",
        "--http-token-file",
        token_file.to_str().unwrap(),
    ])
}

#[test]
fn http_alone_with_a_token_from_a_file() {
    let sandbox = Sandbox::new();
    let token_file = sandbox.dir.path().join("token");
    let fixed = "0123456789abcdef0123456789abcdef-fixed";
    std::fs::write(&token_file, format!("{fixed}\n")).unwrap();
    let mut server = serve_http_alone(&sandbox, &token_file);
    let (url, token) = printed_line(&mut server);
    assert_eq!(token, fixed);
    let (status, discover) = post(&url, &token, 1, "server/discover", &json!({}));
    assert_eq!(status, 200);
    assert_eq!(discover["result"]["supportedVersions"][0], "2026-07-28");
    assert_eq!(
        post(
            &url,
            "0123456789abcdef0123456789abcdef-wrong",
            2,
            "ping",
            &json!({})
        )
        .0,
        401
    );
    // No IDE WebSocket: no lockfile.
    assert!(sandbox.lockfiles().is_empty());
    let status = server.terminate(Duration::from_secs(20));
    assert!(status.success(), "{status}; stderr:\n{}", server.stderr());

    std::fs::write(&token_file, "short").unwrap();
    let mut refused = serve_http_alone(&sandbox, &token_file);
    let status = refused.wait_timeout(Duration::from_secs(20));
    assert!(!status.success());
    assert!(
        refused.stderr().contains("at least 32"),
        "{}",
        refused.stderr()
    );
}
