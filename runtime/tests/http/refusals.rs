//! Every refusal: its status, its headers, and its JSON-RPC error body.

use ide_mcp_runtime::HttpOptions;
use ide_mcp_test_support::{WAIT, read_until_closed};
use serde_json::json;

use crate::client::{Req, post, stateless};
use crate::{IDLE, serve, settles};

fn error(code: i32, message: &str) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}})
}

#[tokio::test]
async fn the_gate_refuses_strangers() {
    let handle = serve(HttpOptions::default()).await;
    let (addr, token) = (handle.local_addr(), handle.auth_token().to_owned());
    let port = addr.port();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

    let none = post(&token, ping).without("Authorization").send(addr).await;
    assert_eq!(
        (none.status, none.header("www-authenticate")),
        (401, Some(r#"Bearer realm="ide-mcp""#))
    );
    assert_eq!(none.header("content-type"), Some("application/json"));
    assert_eq!(
        none.json(),
        error(
            -32600,
            "no bearer token: send the one the server printed, as `Authorization: Bearer <token>`"
        )
    );

    let wrong = post(&token, ping)
        .set("Authorization", "Bearer 0123456789abcdef0123456789abcdef")
        .send(addr)
        .await;
    assert_eq!(
        (wrong.status, wrong.header("www-authenticate")),
        (
            401,
            Some(r#"Bearer realm="ide-mcp", error="invalid_token""#)
        )
    );
    assert_eq!(
        wrong.json(),
        error(
            -32600,
            "the bearer token is wrong: send the one the server printed, as `Authorization: Bearer <token>`"
        )
    );
    let basic = post(&token, ping)
        .set("Authorization", &format!("Basic {token}"))
        .send(addr)
        .await;
    assert_eq!(basic.status, 401);

    // DNS rebinding: a page of evil.example whose name now points at 127.0.0.1.
    let rebound = post(&token, ping)
        .header("Host", &format!("evil.example:{port}"))
        .send(addr)
        .await;
    assert_eq!(rebound.status, 403);
    assert_eq!(
        rebound.json(),
        error(
            -32600,
            &format!("the Host header must be 127.0.0.1:{port}, localhost:{port} or [::1]:{port}")
        )
    );
    let origin = post(&token, ping)
        .header("Origin", "https://evil.example")
        .send(addr)
        .await;
    assert_eq!(origin.status, 403);
    assert_eq!(
        origin.json(),
        error(
            -32600,
            "requests from the origin https://evil.example are refused: no web page may call this server"
        )
    );
    // The server's own origin too (it serves no page, so no page has it),
    // as the IDE WebSocket refuses it; and before the token.
    let own = post(&token, ping)
        .header("Origin", &format!("http://localhost:{port}"))
        .send(addr)
        .await;
    assert_eq!(own.status, 403);
    let origin_no_token = post(&token, ping)
        .without("Authorization")
        .header("Origin", "http://x.example")
        .send(addr)
        .await;
    assert_eq!(origin_no_token.status, 403);

    settles(&handle, IDLE).await;
}

#[tokio::test]
async fn a_configured_origin_is_admitted_exactly_as_written() {
    let handle = serve(HttpOptions {
        allowed_origins: vec!["https://inspector.example".to_owned()],
        ..HttpOptions::default()
    })
    .await;
    let (addr, token) = (handle.local_addr(), handle.auth_token().to_owned());
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let status = |origin: &'static str| {
        let token = token.clone();
        async move {
            post(&token, ping)
                .header("Origin", origin)
                .send(addr)
                .await
                .status
        }
    };
    assert_eq!(status("https://inspector.example").await, 200);
    assert_eq!(status("https://Inspector.example").await, 403);
    assert_eq!(status("https://inspector.example:443").await, 403);
    assert_eq!(status("http://127.0.0.1").await, 403);
    settles(&handle, IDLE).await;
}

#[tokio::test]
async fn only_posts_to_the_endpoint_are_served() {
    let handle = serve(HttpOptions::default()).await;
    let (addr, token) = (handle.local_addr(), handle.auth_token().to_owned());
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let get = Req::new("GET")
        .header("Authorization", &format!("Bearer {token}"))
        .send(addr)
        .await;
    assert_eq!(
        (get.status, get.header("allow")),
        (405, Some("POST, DELETE"))
    );
    assert_eq!(
        get.json(),
        error(
            -32600,
            "GET is not served: send each JSON-RPC message as a POST (DELETE ends a 2025-11-25 session given by `Mcp-Session-Id`)"
        )
    );
    let delete = Req::new("DELETE")
        .header("Authorization", &format!("Bearer {token}"))
        .send(addr)
        .await;
    assert_eq!(delete.status, 405);
    let elsewhere = post(&token, ping).path("/").send(addr).await;
    assert_eq!(elsewhere.status, 404);
    assert_eq!(
        elsewhere.json(),
        error(-32600, "nothing is served at /: the MCP endpoint is /mcp")
    );
    settles(&handle, IDLE).await;
}

#[tokio::test]
async fn bodies_that_cannot_be_served_are_refused() {
    let handle = serve(HttpOptions {
        max_body_bytes: 1024,
        ..HttpOptions::default()
    })
    .await;
    let (addr, token) = (handle.local_addr(), handle.auth_token().to_owned());
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

    let text = post(&token, ping)
        .set("Content-Type", "text/plain")
        .send(addr)
        .await;
    assert_eq!(text.status, 415);
    assert_eq!(
        text.json(),
        error(
            -32600,
            "the body must be one JSON-RPC message sent as `Content-Type: application/json`, not `text/plain`"
        )
    );
    let untyped = post(&token, ping).without("Content-Type").send(addr).await;
    assert_eq!(untyped.status, 415);
    let charset = post(&token, ping)
        .set("Content-Type", "application/json; charset=utf-8")
        .send(addr)
        .await;
    assert_eq!(charset.status, 200);

    let html = post(&token, ping)
        .set("Accept", "text/html")
        .send(addr)
        .await;
    assert_eq!(html.status, 406);
    assert_eq!(
        html.json(),
        error(
            -32600,
            "the Accept header must list both `application/json` and `text/event-stream`"
        )
    );
    let json_only = post(&token, ping)
        .set("Accept", "application/json")
        .send(addr)
        .await;
    assert_eq!(json_only.status, 406);
    let anything = post(&token, ping).set("Accept", "*/*").send(addr).await;
    assert_eq!(anything.status, 200);

    let malformed = post(&token, r#"{"jsonrpc":"2.0","id":1,"#).send(addr).await;
    assert_eq!(malformed.status, 400);
    assert_eq!(malformed.json()["error"]["code"], -32700);
    let batch = post(&token, format!("[{ping}]")).send(addr).await;
    assert_eq!(batch.status, 400);
    assert_eq!(
        batch.json(),
        error(
            -32600,
            "batches are not supported: send one JSON-RPC message at a time"
        )
    );

    let large = post(
        &token,
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
            "x".repeat(2000)
        ),
    )
    .send(addr)
    .await;
    assert_eq!(large.status, 413);
    assert_eq!(
        large.json(),
        error(-32600, "the body is larger than the limit of 1024 bytes")
    );
    settles(&handle, IDLE).await;
}

#[tokio::test]
async fn headers_must_agree_with_the_body() {
    let handle = serve(HttpOptions::default()).await;
    let (addr, token) = (handle.local_addr(), handle.auth_token().to_owned());
    let mismatch = |message: &str| json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32020, "message": message}});

    let call = stateless(
        &token,
        7,
        "tools/call",
        r#""name":"echo","arguments":{"text":"x"}"#,
    );
    let wrong_name = call.set("Mcp-Name", "sleep").send(addr).await;
    assert_eq!(wrong_name.status, 400);
    assert_eq!(
        wrong_name.json(),
        mismatch("the Mcp-Name header (sleep) does not match the tool the body calls (echo)")
    );

    let list = || stateless(&token, 7, "tools/list", "");
    let wrong_method = list().set("Mcp-Method", "tools/call").send(addr).await;
    assert_eq!(
        wrong_method.json(),
        mismatch(
            "the Mcp-Method header (tools/call) does not match the body's method (tools/list)"
        )
    );
    let no_method = list().without("Mcp-Method").send(addr).await;
    assert_eq!(
        (no_method.status, no_method.json()),
        (
            400,
            mismatch(
                "the Mcp-Method header (absent) does not match the body's method (tools/list)"
            )
        )
    );
    let wrong_version = list()
        .set("MCP-Protocol-Version", "2025-11-25")
        .send(addr)
        .await;
    assert_eq!(
        wrong_version.json(),
        mismatch(
            "the MCP-Protocol-Version header (2025-11-25) does not match the body's `_meta` protocol version (2026-07-28)"
        )
    );
    for name in ["MCP-Protocol-Version", "Mcp-Method"] {
        let same = if name == "Mcp-Method" {
            "tools/list"
        } else {
            "2026-07-28"
        };
        let twice = list().header(name, same).send(addr).await;
        assert_eq!(
            (twice.status, twice.json()),
            (400, mismatch(&format!("duplicate `{name}` header"))),
        );
    }
    let call = || stateless(&token, 7, "tools/call", r#""name":"echo","arguments":{}"#);
    let twice = call().header("Mcp-Name", "other").send(addr).await;
    assert_eq!(
        (twice.status, twice.json()),
        (400, mismatch("duplicate `Mcp-Name` header"))
    );
    let bare = post(&token, r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#)
        .header("MCP-Protocol-Version", "2026-07-28")
        .send(addr)
        .await;
    assert_eq!(
        bare.json(),
        mismatch(
            "the MCP-Protocol-Version header says 2026-07-28, but the body's `params._meta` names no protocol version"
        )
    );

    // Served, then refused by the protocol: the status follows the error code.
    let unknown = stateless(&token, 8, "nothing/here", "").send(addr).await;
    assert_eq!(
        (unknown.status, unknown.json()["error"]["code"].clone()),
        (404, json!(-32601))
    );
    let future = post(&token, r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}"#)
        .header("MCP-Protocol-Version", "2099-01-01")
        .header("Mcp-Method", "tools/list")
        .send(addr)
        .await;
    assert_eq!(future.status, 400);
    assert_eq!(future.json()["error"]["code"], -32022);
    assert_eq!(future.json()["error"]["data"]["requested"], "2099-01-01");
    let no_session = post(&token, r#"{"jsonrpc":"2.0","id":10,"method":"tools/list"}"#)
        .send(addr)
        .await;
    assert_eq!(
        (
            no_session.status,
            no_session.json()["error"]["code"].clone()
        ),
        (400, json!(-32600))
    );
    settles(&handle, IDLE).await;
}

#[tokio::test]
async fn requests_beyond_the_in_flight_bound_get_503() {
    let handle = serve(HttpOptions {
        max_in_flight: 1,
        ..HttpOptions::default()
    })
    .await;
    let (addr, token) = (handle.local_addr(), handle.auth_token().to_owned());
    let slow = stateless(
        &token,
        1,
        "tools/call",
        r#""name":"sleep","arguments":{"ms":400,"tag":"s"}"#,
    )
    .start(addr);
    let slow = slow.await;
    for _ in 0..100 {
        if handle.stats().exchanges == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let refused = stateless(&token, 2, "ping", "").send(addr).await;
    assert_eq!(
        (refused.status, refused.header("retry-after")),
        (503, Some("1"))
    );
    assert_eq!(
        refused.json(),
        json!({"jsonrpc": "2.0", "id": null, "error": {
            "code": -32030,
            "message": "too many requests in flight (1); retry when some are answered",
            "data": {"reason": "tooManyRequestsInFlight", "limit": 1}
        }})
    );
    drop(slow);
    settles(&handle, IDLE).await;
    assert_eq!(
        stateless(&token, 3, "ping", "").send(addr).await.status,
        200
    );
}

/// Reports progress once, then never answers: its answer is an event stream
/// that stays open.
#[ide_mcp_runtime::mcp_tool]
async fn stream_then_hang(progress: ide_mcp_runtime::Progress) -> u32 {
    progress.report(1.0, None, None);
    std::future::pending().await
}

#[tokio::test]
async fn an_open_event_stream_counts_as_in_flight() {
    use tokio::io::AsyncReadExt as _;

    let handle = serve(HttpOptions {
        max_in_flight: 1,
        ..HttpOptions::default()
    })
    .await;
    let (addr, token) = (handle.local_addr(), handle.auth_token().to_owned());
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"streamThenHang","arguments":{},"_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let mut open = post(&token, body)
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "streamThenHang")
        .start(addr)
        .await;
    // The stream is open once its first event (the progress) has come.
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("notifications/progress") {
        let mut chunk = [0; 4096];
        let n = open.read(&mut chunk).await.unwrap();
        assert!(
            n > 0,
            "the stream ended: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&chunk[..n]);
    }
    assert!(String::from_utf8_lossy(&seen).contains("text/event-stream"));
    let refused = stateless(&token, 2, "ping", "").send(addr).await;
    assert_eq!(refused.status, 503, "the stream still holds the only place");
    drop(open);
    settles(&handle, IDLE).await;
    assert_eq!(
        stateless(&token, 3, "ping", "").send(addr).await.status,
        200
    );
}

/// Reads until the server closes `stream` (bounded: [`WAIT`]); returns
/// what came.
async fn closed_by_server(stream: &mut tokio::net::TcpStream) -> Vec<u8> {
    let (read, closed) = read_until_closed(stream, WAIT).await;
    assert!(closed, "the server closed the connection within {WAIT:?}");
    read
}

#[tokio::test]
async fn a_client_slow_to_send_its_headers_is_disconnected() {
    use tokio::io::AsyncWriteExt as _;
    let handle = serve(HttpOptions {
        header_timeout: std::time::Duration::from_millis(200),
        ..HttpOptions::default()
    })
    .await;
    let addr = handle.local_addr();

    // Headers dribbled a byte every 50 ms, never finished (slowloris):
    // progress does not extend the bound.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").as_bytes())
        .await
        .unwrap();
    let dribble = async {
        for _ in 0..200 {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            if slow.write_all(b"a").await.is_err() {
                return;
            }
        }
        panic!("still connected after 10 s of dribbling");
    };
    dribble.await;

    // A connection left idle after its request is closed too.
    let mut idle = post(
        handle.auth_token(),
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#,
    )
    .start(addr)
    .await;
    let answer = String::from_utf8(closed_by_server(&mut idle).await).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");

    // Requests sent in time are served as ever.
    let served = post(
        handle.auth_token(),
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    )
    .send(addr)
    .await;
    assert_eq!(served.status, 200);
    settles(&handle, IDLE).await;
}
