//! 2025-11-25 sessions: opened by `initialize`, named by `Mcp-Session-Id`,
//! ended by DELETE or idleness, bounded in number.

use std::time::Duration;

use ide_mcp_runtime::{HttpOptions, HttpServerHandle, HttpStats};
use serde_json::json;

use crate::client::{Req, post};
use crate::common::{INIT, INIT_RESULT, INITIALIZED};
use crate::{IDLE, serve, settles};

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

fn in_session(handle: &HttpServerHandle, session: &str, body: &str) -> Req {
    post(handle.auth_token(), body)
        .header("Mcp-Session-Id", session)
        .header("MCP-Protocol-Version", "2025-11-25")
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
    assert_eq!(list.json()["result"]["tools"].as_array().unwrap().len(), 5);
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

    let delete = Req::new("DELETE")
        .header("Authorization", &format!("Bearer {}", handle.auth_token()))
        .header("Mcp-Session-Id", &session)
        .send(addr)
        .await;
    assert_eq!((delete.status, delete.body.as_str()), (204, ""));
    let after = in_session(
        &handle,
        &session,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    )
    .send(addr)
    .await;
    assert_eq!(after.status, 404);
    assert_eq!(
        after.json(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "no such session: it ended (DELETE, or idle too long) or never was; send `initialize` again"}})
    );
    let deleted_again = Req::new("DELETE")
        .header("Authorization", &format!("Bearer {}", handle.auth_token()))
        .header("Mcp-Session-Id", &session)
        .send(addr)
        .await;
    assert_eq!(deleted_again.status, 404);
    let unknown = in_session(
        &handle,
        "no-such-session",
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    )
    .send(addr)
    .await;
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
    let ping = in_session(
        &handle,
        &first,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    )
    .send(addr)
    .await;
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
