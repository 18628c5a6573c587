//! The IDE WebSocket transport through a real socket and a tokio-tungstenite client.

mod common;

use std::time::Duration;

use common::{INIT, INIT_RESULT, INITIALIZED, call, server, text_result};
use futures_util::{SinkExt as _, StreamExt as _};
use ide_mcp_runtime::{Server, WsOptions, WsServerHandle};
use ide_mcp_test_support::{Client, ask, close_code, connect_with, recv, send, upgrade_request};
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::http::{HeaderValue, Request, StatusCode};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

async fn serve(options: WsOptions) -> (WsServerHandle, tempfile::TempDir) {
    serve_server(&server(), options).await
}

async fn serve_server(server: &Server, options: WsOptions) -> (WsServerHandle, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let handle = server
        .serve_ws(WsOptions {
            config_dir: Some(dir.path().to_owned()),
            workspace_folders: vec!["/abs/project".to_owned()],
            ide_name: "Fixture IDE".to_owned(),
            ..options
        })
        .await
        .unwrap();
    (handle, dir)
}

fn request(handle: &WsServerHandle) -> Request<()> {
    upgrade_request(handle.port(), handle.auth_token())
}

async fn connect(handle: &WsServerHandle) -> Client {
    connect_with(request(handle)).await
}

async fn refused(request: Request<()>) -> StatusCode {
    match tokio_tungstenite::connect_async(request).await {
        Err(WsError::Http(response)) => response.status(),
        other => panic!("expected an HTTP refusal, got {:?}", other.map(|(_, r)| r)),
    }
}

async fn initialized(handle: &WsServerHandle) -> Client {
    let mut client = connect(handle).await;
    assert_eq!(ask(&mut client, INIT).await, INIT_RESULT);
    send(&mut client, INITIALIZED).await;
    client
}

#[tokio::test]
async fn initialize_list_call_and_subprotocol() {
    let (handle, _dir) = serve(WsOptions::default()).await;
    assert_eq!(handle.local_addr().ip(), std::net::Ipv4Addr::LOCALHOST);
    let mut offer = request(&handle);
    offer.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        HeaderValue::from_static("other, mcp"),
    );
    let (mut client, response) = tokio_tungstenite::connect_async(offer).await.unwrap();
    assert_eq!(response.headers()["sec-websocket-protocol"], "mcp");
    assert_eq!(ask(&mut client, INIT).await, INIT_RESULT);
    send(&mut client, INITIALIZED).await;
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","method":"ide_connected","params":{"pid":1}}"#,
    )
    .await;
    let list = ask(
        &mut client,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    )
    .await;
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 6);
    assert_eq!(
        ask(&mut client, &call(2, "echo", r#"{"text":"hi"}"#)).await,
        text_result(2, r#""hi""#)
    );
    // Without the offer, no subprotocol is selected.
    let (_plain, response) = tokio_tungstenite::connect_async(request(&handle))
        .await
        .unwrap();
    assert!(response.headers().get("sec-websocket-protocol").is_none());
    handle.shutdown().await;
    assert_eq!(close_code(&mut client).await, Some(CloseCode::Away));
}

#[tokio::test]
async fn upgrades_without_the_right_token_or_from_browsers_are_refused() {
    let (handle, _dir) = serve(WsOptions::default()).await;
    let token = handle.auth_token().to_owned();
    let with_token = |value: &str| {
        let mut r = request(&handle);
        r.headers_mut().insert(
            "x-claude-code-ide-authorization",
            HeaderValue::from_str(value).unwrap(),
        );
        r
    };
    let mut missing = request(&handle);
    missing
        .headers_mut()
        .remove("x-claude-code-ide-authorization");
    assert_eq!(refused(missing).await, StatusCode::UNAUTHORIZED);
    assert_eq!(refused(with_token("wrong")).await, StatusCode::UNAUTHORIZED);
    assert_eq!(
        refused(with_token(&format!("{token}0"))).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        refused(with_token(&token.to_uppercase())).await,
        StatusCode::UNAUTHORIZED
    );
    let mut in_query = format!("ws://127.0.0.1:{}/?authToken={token}", handle.port())
        .into_client_request()
        .unwrap();
    in_query
        .headers_mut()
        .insert("authorization", HeaderValue::from_str(&token).unwrap());
    assert_eq!(refused(in_query).await, StatusCode::UNAUTHORIZED);

    for origin in [
        "http://evil.example",
        "null",
        &format!("http://127.0.0.1:{}", handle.port()),
    ] {
        let mut r = request(&handle);
        r.headers_mut()
            .insert("origin", HeaderValue::from_str(origin).unwrap());
        assert_eq!(refused(r).await, StatusCode::FORBIDDEN, "{origin}");
    }
    for host in [
        "evil.example",
        "evil.example:80",
        "127.0.0.1:1",
        "localhost.evil",
    ] {
        let mut r = request(&handle);
        r.headers_mut()
            .insert("host", HeaderValue::from_str(host).unwrap());
        assert_eq!(refused(r).await, StatusCode::FORBIDDEN, "{host}");
    }
    let mut r = request(&handle);
    r.headers_mut().insert(
        "host",
        HeaderValue::from_str(&format!("localhost:{}", handle.port())).unwrap(),
    );
    assert!(tokio_tungstenite::connect_async(r).await.is_ok());
    // The tokens of two servers differ.
    let (other, _other_dir) = serve(WsOptions::default()).await;
    assert_ne!(other.auth_token(), token);
    assert_eq!(token.len(), 36);
}

#[tokio::test]
async fn bad_input_is_answered_and_the_connection_lives() {
    let (handle, _dir) = serve(WsOptions::default()).await;
    let mut client = initialized(&handle).await;
    assert_eq!(
        ask(&mut client, "{oops").await,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"invalid JSON: key must be a string at line 1 column 2"}}"#
    );
    assert_eq!(
        ask(&mut client, r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#).await,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"unknown method `nope`"}}"#
    );
    assert_eq!(
        ask(&mut client, &call(2, "missing", "{}")).await,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"unknown tool `missing`"}}"#
    );
    assert_eq!(
        ask(&mut client, &call(3, "echo", r#"{"text":false}"#)).await,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"invalid arguments for tool `echo`: `text`: invalid type: boolean `false`, expected a string"}],"isError":true}}"#
    );
    assert_eq!(
        ask(&mut client, &call(4, "boom", "{}")).await,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"tool `boom` panicked: kaboom"}}"#
    );
    client.send(Message::Ping("p".into())).await.unwrap();
    match client.next().await.unwrap().unwrap() {
        Message::Pong(payload) => assert_eq!(&payload[..], b"p"),
        other => panic!("expected a pong, got {other:?}"),
    }
    assert_eq!(
        ask(&mut client, &call(5, "echo", r#"{"text":"still here"}"#)).await,
        text_result(5, r#""still here""#)
    );
}

#[tokio::test]
async fn async_calls_complete_out_of_order_and_cancel() {
    let (handle, _dir) = serve(WsOptions::default()).await;
    let mut client = initialized(&handle).await;
    send(&mut client, &call(1, "sleep", r#"{"ms":300,"tag":"slow"}"#)).await;
    send(&mut client, &call(2, "sleep", r#"{"ms":5,"tag":"fast"}"#)).await;
    send(
        &mut client,
        &call(3, "sleep", r#"{"ms":100,"tag":"cancelled"}"#),
    )
    .await;
    send(
        &mut client,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
    )
    .await;
    assert_eq!(recv(&mut client).await, text_result(2, r#""fast""#));
    assert_eq!(recv(&mut client).await, text_result(1, r#""slow""#));
    // Nothing came for 3: the next answer is the ping's.
    assert_eq!(
        ask(&mut client, r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#).await,
        r#"{"jsonrpc":"2.0","id":4,"result":{}}"#
    );
}

#[tokio::test]
async fn oversize_and_binary_frames_close_only_that_connection() {
    let (handle, _dir) = serve(WsOptions {
        max_message_bytes: 1024,
        ..WsOptions::default()
    })
    .await;
    let mut other = initialized(&handle).await;
    let mut big = initialized(&handle).await;
    send(
        &mut big,
        &call(1, "echo", &format!(r#"{{"text":"{}"}}"#, "x".repeat(2000))),
    )
    .await;
    assert_eq!(close_code(&mut big).await, Some(CloseCode::Size));
    let mut binary = initialized(&handle).await;
    binary.send(Message::binary(b"{}".to_vec())).await.unwrap();
    assert_eq!(close_code(&mut binary).await, Some(CloseCode::Unsupported));
    assert_eq!(
        ask(&mut other, &call(2, "echo", r#"{"text":"ok"}"#)).await,
        text_result(2, r#""ok""#)
    );
}

#[tokio::test]
async fn connections_beyond_the_limit_are_refused() {
    let (handle, _dir) = serve(WsOptions {
        max_connections: 1,
        ..WsOptions::default()
    })
    .await;
    let mut first = initialized(&handle).await;
    assert_eq!(
        refused(request(&handle)).await,
        StatusCode::SERVICE_UNAVAILABLE
    );
    assert_eq!(
        ask(&mut first, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
    );
    first.close(None).await.unwrap();
    drop(first);
    // Once the first has gone, a new connection is accepted.
    let mut accepted = false;
    for _ in 0..50 {
        if tokio_tungstenite::connect_async(request(&handle))
            .await
            .is_ok()
        {
            accepted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(accepted);
}

#[tokio::test]
async fn notifications_are_forwarded_to_initialized_clients() {
    let server = server();
    let (handle, _dir) = serve_server(&server, WsOptions::default()).await;
    let mut early = connect(&handle).await;
    assert_eq!(ask(&mut early, INIT).await, INIT_RESULT);
    let mut client = initialized(&handle).await;
    // The answer proves `notifications/initialized` was handled before it.
    ask(&mut client, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await;
    let params = serde_json::json!({"filePath": "/a.rs", "lineStart": 1, "lineEnd": 2});
    assert_eq!(server.notifier().notify("at_mentioned", &params), 1);
    assert_eq!(
        recv(&mut client).await,
        r#"{"jsonrpc":"2.0","method":"at_mentioned","params":{"filePath":"/a.rs","lineEnd":2,"lineStart":1}}"#
    );
}

#[tokio::test]
async fn a_client_that_never_reads_is_disconnected_and_others_are_served() {
    let (handle, _dir) = serve(WsOptions {
        write_timeout: Duration::from_millis(300),
        ..WsOptions::default()
    })
    .await;
    let client = initialized(&handle).await;
    let (mut sink, mut stream) = client.split();
    let big = format!(r#"{{"text":"{}"}}"#, "x".repeat(1 << 20));
    let sender = tokio::spawn(async move {
        for id in 1..=48 {
            if sink
                .send(Message::text(call(id, "echo", &big)))
                .await
                .is_err()
            {
                break;
            }
        }
    });
    // Never read for a while: the server gives up on this client after 300 ms.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut other = initialized(&handle).await;
    assert_eq!(
        ask(&mut other, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
    );
    let mut answered = 0;
    while let Ok(Some(Ok(message))) =
        tokio::time::timeout(Duration::from_mins(1), stream.next()).await
    {
        if message.is_text() {
            answered += 1;
        }
    }
    assert!(
        answered < 48,
        "the slow client got every answer ({answered})"
    );
    sender.abort();
}

/// Every text message `client` receives within `window`.
async fn messages_within(client: &mut Client, window: Duration) -> Vec<String> {
    let mut messages = Vec::new();
    let deadline = tokio::time::Instant::now() + window;
    while let Ok(Some(Ok(message))) = tokio::time::timeout_at(deadline, client.next()).await {
        if let Message::Text(text) = message {
            messages.push(text.as_str().to_owned());
        }
    }
    messages
}

#[tokio::test]
async fn the_latest_selection_reaches_a_client_that_listens_late() {
    let server = server();
    let (handle, _dir) = serve_server(&server, WsOptions::default()).await;
    let selection = serde_json::json!({"text": "x", "filePath": "/a.rs"});
    // Set before anyone connects; a plain notification is not replayed.
    assert_eq!(
        server
            .notifier()
            .notify_latest("selection_changed", &selection),
        0
    );
    server.notifier().notify("at_mentioned", &selection);
    let expected = r#"{"jsonrpc":"2.0","method":"selection_changed","params":{"filePath":"/a.rs","text":"x"}}"#;

    // As the CLI: initialize, initialized, ide_connected, then the copy
    // sent at once is not seen (its UI does not listen yet). The messages,
    // not a window of time, tell the copies apart: a loaded machine may
    // delay either.
    let mut cli = initialized(&handle).await;
    send(
        &mut cli,
        r#"{"jsonrpc":"2.0","method":"ide_connected","params":{"pid":1}}"#,
    )
    .await;
    assert_eq!(recv(&mut cli).await, expected, "sent at ide_connected");
    // Listening now: the selection arrives once more, and only once.
    assert_eq!(recv(&mut cli).await, expected);
    assert_eq!(
        messages_within(&mut cli, Duration::from_millis(1500))
            .await
            .len(),
        0
    );

    // A client that never says ide_connected gets it once, after the delay
    // (counted from its `initialized`, which the server sees after this).
    let started = tokio::time::Instant::now();
    let mut other = initialized(&handle).await;
    assert_eq!(recv(&mut other).await, expected);
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_eq!(
        messages_within(&mut other, Duration::from_millis(1500))
            .await
            .len(),
        0
    );

    // With the state forgotten, a new client gets nothing.
    server.notifier().forget_latest("selection_changed");
    let mut late = initialized(&handle).await;
    send(
        &mut late,
        r#"{"jsonrpc":"2.0","method":"ide_connected","params":{"pid":1}}"#,
    )
    .await;
    assert_eq!(
        messages_within(&mut late, Duration::from_millis(1500))
            .await
            .len(),
        0
    );
}
