//! 2025-11-25 sessions: opened by `initialize`, named by `Mcp-Session-Id`,
//! ended by DELETE or idleness, bounded in number; a call's progress and
//! notifications streamed on its POST.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ide_mcp_runtime::{
    CancellationToken, HttpOptions, HttpServerHandle, HttpStats, Peer, Progress, mcp_tool,
};
use serde_json::json;
use tokio::io::AsyncReadExt as _;
use tokio::net::TcpStream;

use crate::client::{Answer, Req, post};
use crate::common::{INIT, INIT_RESULT, INITIALIZED};
use crate::{IDLE, serve, settles};

/// Tells its client it started (a notification of its own), reports one
/// step of progress, and answers.
#[mcp_tool]
fn announce(peer: Peer, progress: Progress) -> String {
    peer.notify(
        "notifications/message",
        &json!({"level": "info", "data": "started"}),
    );
    progress.report(1.0, None, Some("half way"));
    "announced".to_owned()
}

/// The cancellation token of the last `reportThenHang` call.
static HANGING_TOKEN: Mutex<Option<CancellationToken>> = Mutex::new(None);
/// `reportThenHang` calls whose future is alive.
static REPORTING: AtomicUsize = AtomicUsize::new(0);

struct Reporting;

impl Drop for Reporting {
    fn drop(&mut self) {
        REPORTING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Reports one step of progress, then never answers.
#[mcp_tool]
async fn report_then_hang(progress: Progress, cancel: CancellationToken) -> u32 {
    REPORTING.fetch_add(1, Ordering::SeqCst);
    let _alive = Reporting;
    *HANGING_TOKEN.lock().unwrap() = Some(cancel);
    progress.report(1.0, Some(2.0), None);
    std::future::pending().await
}

async fn open(handle: &HttpServerHandle) -> String {
    let answer = post(handle.auth_token(), INIT)
        .send(handle.local_addr())
        .await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.body,
        INIT_RESULT
            .replace("Fixture tools.", "")
            .replace(r#","instructions":"""#, "")
    );
    answer
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned()
}

/// The DELETE that ends `session`.
fn end(handle: &HttpServerHandle, session: &str) -> Req {
    Req::new("DELETE")
        .header("Authorization", &format!("Bearer {}", handle.auth_token()))
        .header("Mcp-Session-Id", session)
}

fn in_session(handle: &HttpServerHandle, session: &str, body: &str) -> Req {
    post(handle.auth_token(), body)
        .header("Mcp-Session-Id", session)
        .header("MCP-Protocol-Version", "2025-11-25")
}

/// A `ping` with `id` in `session`, answered.
async fn ping_in(handle: &HttpServerHandle, session: &str, id: u64) -> Answer {
    let ping = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
    in_session(handle, session, &ping)
        .send(handle.local_addr())
        .await
}

#[tokio::test]
async fn a_session_lives_from_initialize_to_delete() {
    let handle = serve(HttpOptions::default()).await;
    let addr = handle.local_addr();
    let session = open(&handle).await;
    assert_eq!(session.len(), 36);
    assert_eq!(handle.stats().sessions, 1);

    let note = in_session(&handle, &session, INITIALIZED).send(addr).await;
    assert_eq!((note.status, note.body.as_str()), (202, ""));
    let list = in_session(
        &handle,
        &session,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    )
    .send(addr)
    .await;
    assert_eq!(list.status, 200);
    assert_eq!(
        list.json()["result"]["tools"].as_array().unwrap().len(),
        crate::server().registry().tools().len()
    );
    assert_eq!(list.json()["result"].get("resultType"), None);
    // Calls of one session run side by side, each answered on its own POST.
    let (slow, fast) = tokio::join!(
        in_session(&handle, &session, r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"sleep","arguments":{"ms":200,"tag":"slow"}}}"#).send(addr),
        async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            in_session(&handle, &session, r#"{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"text":"fast"}}}"#).send(addr).await
        }
    );
    assert_eq!(slow.json()["id"], "a");
    assert_eq!(fast.json()["id"], "b");
    assert_eq!(fast.json()["result"]["content"][0]["text"], "\"fast\"");
    // A second `initialize` in the session is refused by the session.
    let again = in_session(&handle, &session, INIT).send(addr).await;
    assert_eq!(again.json()["error"]["code"], -32600);

    let delete = end(&handle, &session).send(addr).await;
    assert_eq!((delete.status, delete.body.as_str()), (200, ""));
    let after = ping_in(&handle, &session, 2).await;
    assert_eq!(after.status, 404);
    assert_eq!(
        after.json(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "no such session: it ended (DELETE, or idle too long) or never was; send `initialize` again"}})
    );
    let deleted_again = end(&handle, &session).send(addr).await;
    assert_eq!(deleted_again.status, 404);
    let unknown = ping_in(&handle, "no-such-session", 3).await;
    assert_eq!(unknown.status, 404);
    settles(&handle, IDLE).await;
}

#[tokio::test]
async fn sessions_are_bounded_in_number_and_idle_time() {
    let handle = serve(HttpOptions {
        max_sessions: 1,
        session_idle: Duration::from_millis(150),
        ..HttpOptions::default()
    })
    .await;
    let addr = handle.local_addr();
    let first = open(&handle).await;
    let refused = post(handle.auth_token(), INIT).send(addr).await;
    assert_eq!(
        (refused.status, refused.header("retry-after")),
        (503, Some("1"))
    );
    assert_eq!(
        refused.json(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32030, "message": "too many open sessions (1); end one with DELETE, or send 2026-07-28 requests, which need none", "data": {"reason": "tooManySessions", "limit": 1}}})
    );
    // Stateless requests need no session slot.
    let discover = post(
        handle.auth_token(),
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#,
    )
    .send(addr)
    .await;
    assert_eq!(discover.status, 200);
    // Idle for longer than the bound: ended, and its slot is free again.
    settles(&handle, IDLE).await;
    let ping = ping_in(&handle, &first, 2).await;
    assert_eq!(ping.status, 404);
    let second = open(&handle).await;
    assert_ne!(first, second);
    assert_eq!(handle.stats().sessions, 1);
}

#[tokio::test]
async fn a_failed_initialize_opens_no_session() {
    let handle = serve(HttpOptions::default()).await;
    let answer = post(
        handle.auth_token(),
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":[1]}"#,
    )
    .send(handle.local_addr())
    .await;
    assert_eq!(answer.json()["error"]["code"], -32602);
    assert_eq!(answer.header("mcp-session-id"), None);
    settles(&handle, HttpStats { ..IDLE }).await;
}

/// One SSE event of a JSON-RPC message.
fn event(message: &str) -> String {
    format!("event: message\ndata: {message}\n\n")
}

#[tokio::test]
async fn a_call_that_reports_progress_is_answered_as_an_event_stream() {
    let handle = serve(HttpOptions::default()).await;
    let addr = handle.local_addr();
    let session = open(&handle).await;
    let note = in_session(&handle, &session, INITIALIZED).send(addr).await;
    assert_eq!(note.status, 202);

    // `send` reads to the end: the stream ends after the response.
    let streamed = in_session(
        &handle,
        &session,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"countUp","arguments":{"steps":3},"_meta":{"progressToken":"p3"}}}"#,
    )
    .send(addr)
    .await;
    assert_eq!(streamed.status, 200);
    assert_eq!(streamed.header("content-type"), Some("text/event-stream"));
    assert_eq!(streamed.header("cache-control"), Some("no-cache"));
    assert_eq!(
        streamed.body,
        [
            event(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p3","progress":1.0,"total":3.0}}"#),
            event(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p3","progress":2.0,"total":3.0}}"#),
            event(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p3","progress":3.0,"total":3.0}}"#),
            event(r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"3"}]}}"#),
        ]
        .concat()
    );
    // Without a progress token there is nothing to stream: plain JSON.
    let plain = in_session(
        &handle,
        &session,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"countUp","arguments":{"steps":3}}}"#,
    )
    .send(addr)
    .await;
    assert_eq!(
        (plain.status, plain.header("content-type")),
        (200, Some("application/json"))
    );
    assert_eq!(
        plain.body,
        r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"3"}]}}"#
    );
    // A tool's own notifications ride its call's stream, with or without
    // a progress token.
    let announced = in_session(
        &handle,
        &session,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"announce","arguments":{},"_meta":{"progressToken":5}}}"#,
    )
    .send(addr)
    .await;
    assert_eq!(announced.header("content-type"), Some("text/event-stream"));
    assert_eq!(
        announced.body,
        [
            event(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"started","level":"info"}}"#),
            event(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":1.0,"message":"half way"}}"#),
            event(r#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"\"announced\""}]}}"#),
        ]
        .concat()
    );
    let tokenless = in_session(
        &handle,
        &session,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"announce","arguments":{}}}"#,
    )
    .send(addr)
    .await;
    assert_eq!(
        tokenless.body,
        [
            event(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"started","level":"info"}}"#),
            event(r#"{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"\"announced\""}]}}"#),
        ]
        .concat()
    );
    settles(
        &handle,
        HttpStats {
            sessions: 1,
            session_calls: 0,
            ..IDLE
        },
    )
    .await;
}

/// Reads from `stream` until `text` arrived; returns what was read.
async fn read_until(stream: &mut TcpStream, text: &str) -> String {
    let mut read = Vec::new();
    let mut buf = [0; 4096];
    while !String::from_utf8_lossy(&read).contains(text) {
        let n = tokio::time::timeout(Duration::from_mins(1), stream.read(&mut buf))
            .await
            .expect("no answer within 10 s")
            .unwrap();
        assert_ne!(
            n,
            0,
            "closed before {text:?}: {:?}",
            String::from_utf8_lossy(&read)
        );
        read.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(read).unwrap()
}

async fn reporting(expected: usize) {
    for _ in 0..200 {
        if REPORTING.load(Ordering::SeqCst) == expected {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        REPORTING.load(Ordering::SeqCst),
        expected,
        "live `reportThenHang` calls"
    );
}

#[tokio::test]
async fn closing_a_call_stream_cancels_the_call() {
    let handle = serve(HttpOptions::default()).await;
    let addr = handle.local_addr();
    let session = open(&handle).await;
    let hang = |id: u32| {
        in_session(
            &handle,
            &session,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"reportThenHang","arguments":{{}},"_meta":{{"progressToken":{id}}}}}}}"#
            ),
        )
    };
    let mut call = hang(1).start(addr).await;
    let head = read_until(&mut call, "notifications/progress").await;
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert_eq!(REPORTING.load(Ordering::SeqCst), 1);
    let token = HANGING_TOKEN.lock().unwrap().take().unwrap();
    assert!(!token.is_cancelled());
    drop(call);
    reporting(0).await;
    assert!(token.is_cancelled(), "the call's cancellation token fired");
    // The session lives on.
    let ping = ping_in(&handle, &session, 2).await;
    assert_eq!(ping.body, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);

    // Ending the session mid-stream ends the stream with an error response.
    let mut call = hang(3).start(addr).await;
    let head = read_until(&mut call, "notifications/progress").await;
    let delete = end(&handle, &session).send(addr).await;
    assert_eq!(delete.status, 200);
    let rest = read_until(&mut call, "\r\n0\r\n\r\n").await;
    assert!(
        rest.contains(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"the session ended before answering (DELETE, or idle too long)"}}"#),
        "{head}{rest}"
    );
    drop(call);
    reporting(0).await;
    settles(&handle, IDLE).await;
}

#[tokio::test]
async fn notifications_cancelled_stops_a_call_of_the_session() {
    let handle = serve(HttpOptions::default()).await;
    let addr = handle.local_addr();
    let session = open(&handle).await;
    let mut call = in_session(
        &handle,
        &session,
        r#"{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"reportThenHang","arguments":{}}}"#,
    )
    .start(addr)
    .await;
    reporting(1).await;
    let token = HANGING_TOKEN.lock().unwrap().take().unwrap();
    assert_eq!(handle.stats().session_calls, 1);

    // Another id cancels nothing.
    let cancel = |id: &str| {
        in_session(
            &handle,
            &session,
            &format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"user"}}}}"#
            ),
        )
    };
    let other = cancel(r#""c2""#).send(addr).await;
    assert_eq!((other.status, other.body.as_str()), (202, ""));
    assert!(!token.is_cancelled());
    assert_eq!(handle.stats().session_calls, 1);

    let cancelled = cancel(r#""c1""#).send(addr).await;
    assert_eq!((cancelled.status, cancelled.body.as_str()), (202, ""));
    let answer = read_until(&mut call, "notifications/cancelled)\"}}").await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(
        answer.ends_with(r#"{"jsonrpc":"2.0","id":"c1","error":{"code":-32031,"message":"the client cancelled the request (notifications/cancelled)"}}"#),
        "{answer}"
    );
    drop(call);
    reporting(0).await;
    assert!(token.is_cancelled(), "the call's cancellation token fired");
    settles(
        &handle,
        HttpStats {
            sessions: 1,
            ..IDLE
        },
    )
    .await;

    // A notification for a session that is not open: 404.
    let delete = end(&handle, &session).send(addr).await;
    assert_eq!(delete.status, 200);
    assert_eq!(cancel(r#""c1""#).send(addr).await.status, 404);
    assert_eq!(
        in_session(&handle, &session, INITIALIZED)
            .send(addr)
            .await
            .status,
        404
    );
}
