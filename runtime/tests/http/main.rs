//! Streamable HTTP through real sockets and a raw HTTP/1.1 client: both eras,
//! every refusal with its status and body, sessions, limits, and a client
//! that goes away mid-call.

use ide_mcp_test_support::http as client;
#[path = "../common/mod.rs"]
mod common;
mod events;
mod refusals;
mod sessions;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use client::{post, stateless};
use ide_mcp_runtime::result::Outcome;
use ide_mcp_runtime::tool::Arguments;
use ide_mcp_runtime::tool::{CallOutcome, ToolReply};
use ide_mcp_runtime::{
    Call, Execution, HttpOptions, HttpServerHandle, HttpStats, Peer, Progress, Registry, ResultOut,
    Server, SourceLocation, ToolAnnotations, ToolDef, mcp_tool,
};
use serde_json::json;

/// Calls of `hang` whose future is alive.
static HANGING: AtomicUsize = AtomicUsize::new(0);

struct Alive;

impl Drop for Alive {
    fn drop(&mut self) {
        HANGING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Never answers; counts itself alive until aborted.
fn hang(_: &Call<'_>, _: Option<Arguments<'_>>, _: &mut ResultOut<'_>) -> CallOutcome {
    HANGING.fetch_add(1, Ordering::SeqCst);
    let alive = Alive;
    CallOutcome::Pending(Box::pin(async move {
        let _alive = alive;
        std::future::pending::<()>().await;
        Box::new(|_: &mut ResultOut<'_>| Outcome::Written) as ToolReply
    }))
}

static HANG: ToolDef = ToolDef {
    name: "hang",
    description: "Never answers.",
    annotations: ToolAnnotations::NONE,
    input_schema: ide_mcp_runtime::schema::input_schema::<common::NoArgs>,
    output_schema: None,
    states: |_| {},
    execution: Execution::Async,
    call: hang,
    face: None,
    location: SourceLocation {
        crate_name: "fixture",
        file: file!(),
        line: line!(),
    },
};

/// Counts up to `steps`, reporting each step as progress.
#[mcp_tool]
async fn count_up(progress: Progress, steps: u32) -> u32 {
    for step in 1..=steps {
        progress.report(f64::from(step), Some(f64::from(steps)), None);
        tokio::task::yield_now().await;
    }
    steps
}

/// Tells its client it was called, then answers: an inline tool whose only
/// note is its own notification (no progress token).
#[mcp_tool]
fn wave(peer: Peer) -> String {
    peer.notify(
        "notifications/message",
        &json!({"level": "info", "data": "waving"}),
    );
    "waved".to_owned()
}

pub(crate) fn server() -> Server {
    let defs = [&common::ECHO, &common::SLEEP, &common::BLOCK, &HANG];
    let registry = Registry::from_tools(defs.into_iter().chain(ide_mcp_runtime::tools()));
    Server::builder("fixture-host", "9.9.9")
        .registry(Arc::new(registry.unwrap()))
        .build()
        .unwrap()
}

pub(crate) async fn serve(options: HttpOptions) -> HttpServerHandle {
    server().serve_http(options).await.unwrap()
}

/// Waits (bounded) until the server's counts are `expected`.
pub(crate) async fn settles(handle: &HttpServerHandle, expected: HttpStats) {
    for _ in 0..200 {
        if handle.stats() == expected {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(handle.stats(), expected);
}

pub(crate) const IDLE: HttpStats = HttpStats {
    sessions: 0,
    session_calls: 0,
    exchanges: 0,
    connections: 0,
};

#[tokio::test]
async fn stateless_requests_are_answered_as_json() {
    let handle = serve(HttpOptions::default()).await;
    let (addr, token) = (handle.local_addr(), handle.auth_token().to_owned());
    assert_eq!(addr.ip().to_string(), "127.0.0.1");

    let discover = post(
        &token,
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#,
    )
    .send(addr)
    .await;
    assert_eq!(discover.status, 200);
    assert_eq!(discover.header("content-type"), Some("application/json"));
    assert_eq!(
        discover.json()["result"]["supportedVersions"],
        json!([
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert_eq!(discover.header("mcp-session-id"), None);

    let list = stateless(&token, 2, "tools/list", "").send(addr).await;
    assert_eq!(list.status, 200);
    let list = list.json();
    assert_eq!(list["result"]["resultType"], "complete");
    assert_eq!(list["result"]["cacheScope"], "public");
    assert_eq!(
        list["result"]["tools"].as_array().unwrap().len(),
        crate::server().registry().tools().len()
    );

    let echo = stateless(
        &token,
        3,
        "tools/call",
        r#""name":"echo","arguments":{"text":"hi"}"#,
    )
    .send(addr)
    .await;
    assert_eq!(
        (echo.status, echo.header("content-type")),
        (200, Some("application/json"))
    );
    assert_eq!(
        echo.body,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"hi\""}],"resultType":"complete"}}"#
    );
    let slept = stateless(
        &token,
        4,
        "tools/call",
        r#""name":"sleep","arguments":{"ms":5,"tag":"z"}"#,
    )
    .send(addr)
    .await;
    assert_eq!(
        slept.body,
        r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"\"z\""}],"resultType":"complete"}}"#
    );
    // A notification outside a session: accepted, nothing to answer.
    let note = post(
        &token,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .send(addr)
    .await;
    assert_eq!((note.status, note.body.as_str()), (202, ""));
    settles(&handle, IDLE).await;
}

#[tokio::test]
async fn progress_comes_as_events_before_the_result() {
    let handle = serve(HttpOptions::default()).await;
    let (addr, token) = (handle.local_addr(), handle.auth_token().to_owned());
    let call = |token_meta: &str| {
        stateless(
            &token,
            7,
            "tools/call",
            &format!(r#""name":"countUp","arguments":{{"steps":2}}{token_meta}"#),
        )
    };
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"countUp","arguments":{"steps":2},"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let streamed = call("").body(body).send(addr).await;
    assert_eq!(streamed.status, 200);
    assert_eq!(streamed.header("content-type"), Some("text/event-stream"));
    assert_eq!(streamed.header("cache-control"), Some("no-cache"));
    assert_eq!(
        streamed.body,
        concat!(
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1.0,\"total\":2.0}}\n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":2.0,\"total\":2.0}}\n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"2\"}],\"resultType\":\"complete\"}}\n\n",
        )
    );
    // Without a progress token there is nothing to stream: plain JSON.
    let plain = call("").send(addr).await;
    assert_eq!(plain.header("content-type"), Some("application/json"));
    assert_eq!(
        plain.body,
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"2"}],"resultType":"complete"}}"#
    );
    settles(&handle, IDLE).await;
}

#[tokio::test]
async fn an_inline_tools_own_notification_streams_before_its_result() {
    // The peer of a stateless call is made only when a tool takes it: this
    // one does, notifies before it returns, and the answer is a stream.
    let handle = serve(HttpOptions::default()).await;
    let (addr, token) = (handle.local_addr(), handle.auth_token().to_owned());
    let waved = stateless(&token, 3, "tools/call", r#""name":"wave""#)
        .send(addr)
        .await;
    assert_eq!(waved.status, 200);
    assert_eq!(waved.header("content-type"), Some("text/event-stream"));
    assert_eq!(
        waved.body,
        concat!(
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"waving\",\"level\":\"info\"}}\n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\\\"waved\\\"\"}],\"resultType\":\"complete\"}}\n\n",
        )
    );
    settles(&handle, IDLE).await;
}

#[tokio::test]
async fn one_connection_carries_many_requests() {
    use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
    let handle = serve(HttpOptions::default()).await;
    let mut stream = tokio::net::TcpStream::connect(handle.local_addr())
        .await
        .unwrap();
    let (read, mut write) = stream.split();
    let mut read = BufReader::new(read);
    for id in 0..20 {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            handle.local_addr(),
            handle.auth_token(),
            body.len()
        );
        write.write_all(request.as_bytes()).await.unwrap();
        let mut length = 0;
        loop {
            let mut line = String::new();
            read.read_line(&mut line).await.unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        read.read_exact(&mut body).await.unwrap();
        assert_eq!(
            String::from_utf8(body).unwrap(),
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
        );
    }
    assert_eq!(handle.stats().connections, 1);
}

#[tokio::test]
async fn a_client_gone_mid_call_leaves_nothing_running() {
    let handle = serve(HttpOptions::default()).await;
    let (addr, token) = (handle.local_addr(), handle.auth_token().to_owned());
    let before = HANGING.load(Ordering::SeqCst);
    let calls: Vec<_> = futures_util::future::join_all((0..3).map(|id| {
        stateless(&token, id, "tools/call", r#""name":"hang","arguments":{}"#).start(addr)
    }))
    .await;
    for _ in 0..200 {
        if handle.stats().exchanges == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(handle.stats().exchanges, 3);
    drop(calls);
    settles(&handle, IDLE).await;
    hanging(before).await;

    // In a 2025-11-25 session: the call is cancelled, the session lives on.
    let init = post(&token, common::INIT).send(addr).await;
    let session = init.header("mcp-session-id").unwrap().to_owned();
    let hang = |id: u64| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"hang","arguments":{{}}}}}}"#
        );
        post(&token, body)
            .header("Mcp-Session-Id", &session)
            .start(addr)
    };
    let call = hang(5).await;
    hanging(before + 1).await;
    drop(call);
    hanging(before).await;
    let ping = post(&token, r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#)
        .header("Mcp-Session-Id", &session)
        .send(addr)
        .await;
    assert_eq!(ping.body, r#"{"jsonrpc":"2.0","id":6,"result":{}}"#);
    // Ending the session with a call running aborts the call and the loop.
    let _call = hang(7).await;
    hanging(before + 1).await;
    handle.shutdown().await;
    hanging(before).await;
}

async fn hanging(expected: usize) {
    for _ in 0..200 {
        if HANGING.load(Ordering::SeqCst) == expected {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        HANGING.load(Ordering::SeqCst),
        expected,
        "live `hang` calls"
    );
}
