//! End-to-end tests of `ide-mcp serve --http`: the printed `claude mcp add`
//! line, Streamable HTTP beside the IDE WebSocket in one process with the
//! same state, HTTP alone, and a token from a file.

mod common;

use std::time::{Duration, Instant};

use common::{DEADLINE, Running, Sandbox, wait_for_lockfile};
use ide_mcp_test_support::http::stateless;
use ide_mcp_test_support::json::{tool_names, tool_text};
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

/// One 2026-07-28 POST to the printed `url` (`params`: the text inside
/// the params object, see [`stateless`]); the status and the parsed body
/// (`null` when it is not JSON).
async fn post(url: &str, token: &str, id: u64, method: &str, params: &str) -> (u16, Value) {
    let address = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .and_then(|address| address.parse().ok())
        .unwrap_or_else(|| panic!("not http://ADDRESS/mcp: {url}"));
    let answer = stateless(token, id, method, params).send(address).await;
    let body = serde_json::from_str(&answer.body).unwrap_or(Value::Null);
    (answer.status, body)
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

    let (status, list) = post(&url, &token, 1, "tools/list", "").await;
    assert_eq!(status, 200);
    common::assert_headless_tools(&tool_names(&list["result"]));
    let mut over_http = Vec::new();
    for tool in [
        "getCurrentSelection",
        "getOpenEditors",
        "getWorkspaceFolders",
    ] {
        let params = format!(r#""name":"{tool}","arguments":{{}}"#);
        let (_, answer) = post(&url, &token, 2, "tools/call", &params).await;
        over_http.push(tool_text(&answer["result"]));
    }
    assert_eq!(over_http[0]["text"], "ünused");
    // The resources and prompts of the same registry: the open file and
    // `ide://diagnostics`, `fix_diagnostics`.
    let (status, resources) = post(&url, &token, 3, "resources/list", "").await;
    assert_eq!(status, 200, "{resources}");
    let uris: Vec<&Value> = resources["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{resources}"))
        .iter()
        .map(|resource| &resource["uri"])
        .collect();
    assert_eq!(
        uris,
        [
            &json!("ide://diagnostics"),
            &json!(format!("file://{warns}"))
        ]
    );
    let (status, prompts) = post(&url, &token, 4, "prompts/list", "").await;
    assert_eq!(status, 200, "{prompts}");
    assert_eq!(
        prompts["result"]["prompts"][0]["name"], "fix_diagnostics",
        "{prompts}"
    );

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
    let status = server.terminate(common::ANSWER);
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

#[tokio::test]
async fn http_alone_with_a_token_from_a_file() {
    let sandbox = Sandbox::new();
    let token_file = sandbox.dir.path().join("token");
    let fixed = "0123456789abcdef0123456789abcdef-fixed";
    std::fs::write(&token_file, format!("{fixed}\n")).unwrap();
    let mut server = serve_http_alone(&sandbox, &token_file);
    let (url, token) = printed_line(&mut server);
    assert_eq!(token, fixed);
    let (status, discover) = post(&url, &token, 1, "server/discover", "").await;
    assert_eq!(status, 200);
    assert_eq!(discover["result"]["supportedVersions"][0], "2026-07-28");
    assert_eq!(
        post(
            &url,
            "0123456789abcdef0123456789abcdef-wrong",
            2,
            "ping",
            ""
        )
        .await
        .0,
        401
    );
    // No IDE WebSocket: no lockfile.
    assert!(sandbox.lockfiles().is_empty());
    let status = server.terminate(common::ANSWER);
    assert!(status.success(), "{status}; stderr:\n{}", server.stderr());

    std::fs::write(&token_file, "short").unwrap();
    let mut refused = serve_http_alone(&sandbox, &token_file);
    let status = refused.wait_timeout(common::ANSWER);
    assert!(!status.success());
    assert!(
        refused.stderr().contains("at least 32"),
        "{}",
        refused.stderr()
    );
}
