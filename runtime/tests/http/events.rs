//! A session's own event stream (`GET /mcp` with `Mcp-Session-Id`): the
//! server's notifications and the session's late ones reach it, exactly;
//! one per session (a second GET replaces the first); it ends with the
//! session and at shutdown; every refusal of a GET.

use std::sync::Mutex;

use ide_mcp_runtime::{HttpOptions, HttpServerHandle, HttpStats, Peer, mcp_tool};
use serde_json::json;

use crate::client::{Events, Req, post};
use crate::common::INIT;
use crate::{IDLE, server, settles};

/// The peer of the last `keepPeer` call.
static KEPT: Mutex<Option<Peer>> = Mutex::new(None);

/// Keeps its peer, to notify its client after it answered.
#[mcp_tool]
fn keep_peer(peer: Peer) -> String {
    *KEPT.lock().unwrap() = Some(peer);
    "kept".to_owned()
}

const LIST_CHANGED: &str = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;

async fn session(handle: &HttpServerHandle) -> String {
    let answer = post(handle.auth_token(), INIT)
        .send(handle.local_addr())
        .await;
    assert_eq!(answer.status, 200);
    answer.header("mcp-session-id").unwrap().to_owned()
}

fn get(handle: &HttpServerHandle, session: &str) -> Req {
    Req::new("GET")
        .header("Authorization", &format!("Bearer {}", handle.auth_token()))
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", session)
}

/// Waits (bounded) until the notifier has `n` subscribers: the stream is
/// subscribed before its head is sent, so this is for the ended ones.
async fn subscribers(server: &ide_mcp_runtime::Server, n: usize) {
    for _ in 0..500 {
        if server.notifier().client_count() == n {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(server.notifier().client_count(), n);
}

#[tokio::test]
async fn a_session_s_stream_carries_the_server_s_notifications() {
    let server = server();
    server
        .notifier()
        .notify_latest("selection_changed", &json!({"text": "kept"}));
    let handle = server.serve_http(HttpOptions::default()).await.unwrap();
    let id = session(&handle).await;
    let mut events = Events::open(get(&handle, &id), handle.local_addr()).await;
    assert_eq!(events.status, 200);
    assert_eq!(
        events.headers.get("content-type").map(String::as_str),
        Some("text/event-stream")
    );
    assert_eq!(
        events.headers.get("cache-control").map(String::as_str),
        Some("no-cache")
    );
    // The latest state first, then what is sent while it is open.
    assert_eq!(
        events.next().await.unwrap(),
        r#"{"jsonrpc":"2.0","method":"selection_changed","params":{"text":"kept"}}"#
    );
    assert_eq!(
        server
            .notifier()
            .send_bytes(&std::sync::Arc::from(LIST_CHANGED.as_bytes())),
        1
    );
    assert_eq!(events.next().await.unwrap(), LIST_CHANGED);
    // The session is in use while its stream is open; DELETE ends both.
    settles(
        &handle,
        HttpStats {
            sessions: 1,
            connections: 1,
            ..IDLE
        },
    )
    .await;
    let ended = Req::new("DELETE")
        .header("Authorization", &format!("Bearer {}", handle.auth_token()))
        .header("Mcp-Session-Id", &id)
        .send(handle.local_addr())
        .await;
    assert_eq!(ended.status, 200);
    assert_eq!(
        events.next().await,
        None,
        "the stream ends with its session"
    );
    drop(events);
    subscribers(&server, 0).await;
    settles(&handle, IDLE).await;
}

#[tokio::test]
async fn what_a_call_reports_after_its_answer_goes_to_the_stream() {
    let handle = server().serve_http(HttpOptions::default()).await.unwrap();
    let id = session(&handle).await;
    let mut events = Events::open(get(&handle, &id), handle.local_addr()).await;
    assert_eq!(events.status, 200);
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"keepPeer","arguments":{}}}"#;
    let answer = post(handle.auth_token(), call)
        .header("Mcp-Session-Id", &id)
        .send(handle.local_addr())
        .await;
    assert_eq!(
        answer.body,
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"\"kept\""}]}}"#
    );
    let peer = KEPT.lock().unwrap().take().unwrap();
    assert!(peer.notify(
        "notifications/message",
        &json!({"level": "info", "data": "late"})
    ));
    assert_eq!(
        events.next().await.unwrap(),
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"late","level":"info"}}"#
    );
    drop(peer);
    handle.shutdown().await;
    assert_eq!(events.next().await, None, "closed cleanly at shutdown");
}

#[tokio::test]
async fn a_second_get_replaces_the_first_stream() {
    let server = server();
    let handle = server.serve_http(HttpOptions::default()).await.unwrap();
    let id = session(&handle).await;
    let mut first = Events::open(get(&handle, &id), handle.local_addr()).await;
    assert_eq!(first.status, 200);
    let mut second = Events::open(get(&handle, &id), handle.local_addr()).await;
    assert_eq!(second.status, 200);
    assert_eq!(first.next().await, None, "the first stream ended");
    subscribers(&server, 1).await;
    server
        .notifier()
        .send_bytes(&std::sync::Arc::from(LIST_CHANGED.as_bytes()));
    assert_eq!(second.next().await.unwrap(), LIST_CHANGED);
    // Another session's stream is a stream of its own.
    let other = session(&handle).await;
    let mut third = Events::open(get(&handle, &other), handle.local_addr()).await;
    assert_eq!(third.status, 200);
    subscribers(&server, 2).await;
    server
        .notifier()
        .send_bytes(&std::sync::Arc::from(LIST_CHANGED.as_bytes()));
    assert_eq!(second.next().await.unwrap(), LIST_CHANGED);
    assert_eq!(third.next().await.unwrap(), LIST_CHANGED);
    handle.shutdown().await;
    assert_eq!(second.next().await, None);
    assert_eq!(third.next().await, None);
}

#[tokio::test]
async fn gets_that_open_no_stream_are_refused() {
    let handle = server().serve_http(HttpOptions::default()).await.unwrap();
    let addr = handle.local_addr();
    let id = session(&handle).await;
    let body = |message: &str| json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": message}});
    let unknown = get(&handle, "0f6a").send(addr).await;
    assert_eq!(unknown.status, 404);
    assert_eq!(
        unknown.json(),
        body(
            "no such session: it ended (DELETE, or idle too long) or never was; send `initialize` again"
        )
    );
    let json_only = get(&handle, &id)
        .set("Accept", "application/json")
        .send(addr)
        .await;
    assert_eq!(json_only.status, 406);
    assert_eq!(
        json_only.json(),
        body("a GET opens an event stream: its Accept header must list `text/event-stream`")
    );
    let twice = get(&handle, &id)
        .header("Mcp-Session-Id", &id)
        .send(addr)
        .await;
    assert_eq!(twice.status, 400);
    assert_eq!(twice.json(), body("duplicate `Mcp-Session-Id` header"));
    let no_token = get(&handle, &id).without("Authorization").send(addr).await;
    assert_eq!(no_token.status, 401);
    let wrong = get(&handle, &id)
        .set("Authorization", "Bearer not-the-token")
        .send(addr)
        .await;
    assert_eq!(wrong.status, 401);
    let browser = get(&handle, &id)
        .header("Origin", "http://evil.example")
        .send(addr)
        .await;
    assert_eq!(browser.status, 403);
    let rebound = get(&handle, &id)
        .header("Host", "evil.example")
        .send(addr)
        .await;
    assert_eq!(rebound.status, 403);
    settles(
        &handle,
        HttpStats {
            sessions: 1,
            ..IDLE
        },
    )
    .await;
}
