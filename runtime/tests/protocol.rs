//! The protocol core through the in-memory transport: exact JSON of every answer.

mod common;

use common::{INIT, INIT_RESULT, INITIALIZED, call, server, text_result};
use ide_mcp_runtime::MemoryClient;
use ide_mcp_test_support::json::{json, tool_names};

async fn initialized() -> MemoryClient {
    let mut client = server().connect_memory();
    assert_eq!(client.request(INIT).await, INIT_RESULT);
    client.send(INITIALIZED).await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"ide_connected","params":{"pid":42}}"#)
        .await;
    client
}

async fn assert_answers(client: &mut MemoryClient, request: &str, expected: &str) {
    assert_eq!(
        client.request(request).await,
        expected,
        "request: {request}"
    );
}

#[tokio::test]
async fn initialize_list_and_call() {
    let mut client = initialized().await;
    let list = client
        .request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    let list = json(&list);
    assert_eq!(
        tool_names(&list["result"]),
        ["block", "boom", "boomLater", "echo", "ready", "sleep"]
    );
    assert_eq!(list["id"], 1);
    assert_answers(
        &mut client,
        &call(2, "echo", r#"{"text":"hé \"x\""}"#),
        &text_result(2, r#""hé \"x\"""#),
    )
    .await;
    assert_answers(
        &mut client,
        r#"{"jsonrpc":"2.0","id":"s-1","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"s-1","result":{}}"#,
    )
    .await;
    assert_answers(
        &mut client,
        &call(3, "ready", "{}"),
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#,
    )
    .await;
    assert_answers(
        &mut client,
        &call(4, "block", r#"{"ms":1,"tag":"b"}"#),
        &text_result(4, r#""b""#),
    )
    .await;
}

#[tokio::test]
async fn version_negotiation() {
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let mut client = server().connect_memory();
        let answer = client
            .request(format!(r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{asked}"}}}}"#))
            .await;
        assert_eq!(answer, INIT_RESULT.replace("2025-11-25", answered));
    }
}

#[tokio::test]
async fn lifecycle_errors() {
    let mut client = server().connect_memory();
    assert_answers(
        &mut client,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"`tools/list` before `initialize`: the session is not initialized yet, send `initialize` first"}}"#,
    )
    .await;
    assert_answers(
        &mut client,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
    )
    .await;
    assert_eq!(client.request(INIT).await, INIT_RESULT);
    assert_answers(
        &mut client,
        INIT,
        r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"`initialize` was already called on this connection"}}"#,
    )
    .await;
}

#[tokio::test]
async fn protocol_errors_are_exact_and_the_session_lives() {
    let mut client = initialized().await;
    let cases = [
        (
            "{",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"invalid JSON: EOF while parsing an object at line 1 column 1"}}"#,
        ),
        (
            "not json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"invalid JSON: expected ident at line 1 column 2"}}"#,
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batches are not supported: send one JSON-RPC message at a time"}}"#,
        ),
        (
            "42",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"not a JSON-RPC message: invalid type: integer `42`, expected struct Envelope at line 1 column 2"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"`id` must be a string or a number, not `{\"a\":1}`"}}"#,
        ),
        (
            r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"`jsonrpc` must be \"2.0\""}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":6}"#,
            r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"a request needs a `method`"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"resources/list"}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"unknown method `resources/list`"}}"#,
        ),
        (
            &call(8, "nope", "{}"),
            r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"unknown tool `nope`"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"`tools/call` needs params with the tool's `name`"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":3}}"#,
            r#"{"jsonrpc":"2.0","id":10,"error":{"code":-32602,"message":"invalid `tools/call` params: invalid type: integer `3`, expected a string"}}"#,
        ),
        (
            &call(11, "echo", r#"{"text":3}"#),
            r#"{"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"invalid arguments for tool `echo`: `text`: invalid type: integer `3`, expected a string"}],"isError":true}}"#,
        ),
        (
            &call(12, "echo", "{}"),
            r#"{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"invalid arguments for tool `echo`: missing field `text`"}],"isError":true}}"#,
        ),
        (
            &call(13, "boom", "{}"),
            r#"{"jsonrpc":"2.0","id":13,"error":{"code":-32603,"message":"tool `boom` panicked: kaboom"}}"#,
        ),
        (
            &call(14, "boomLater", "{}"),
            r#"{"jsonrpc":"2.0","id":14,"error":{"code":-32603,"message":"tool `boomLater` panicked: later kaboom"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":12345678901234567890123,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":12345678901234567890123,"result":{}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
        ),
    ];
    for (request, expected) in cases {
        assert_answers(&mut client, request, expected).await;
    }
    // Notifications, known or not, are never answered; the next request is.
    client
        .send(r#"{"jsonrpc":"2.0","method":"no/such/notification"}"#)
        .await;
    client.send(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#).await;
    assert_answers(
        &mut client,
        r#"{"jsonrpc":"2.0","id":99,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
    )
    .await;
}

#[tokio::test]
async fn deeply_nested_input_is_an_error_not_a_crash() {
    let mut client = initialized().await;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","x":{}{}}}"#,
        "[".repeat(200_000),
        "]".repeat(200_000)
    );
    assert_answers(
        &mut client,
        &deep,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
    )
    .await;
    let args = format!(r#"{{"text":{}{}}}"#, "[".repeat(10_000), "]".repeat(10_000));
    let answer = client.request(call(2, "echo", &args)).await;
    assert!(answer.ends_with(r#""isError":true}}"#), "{answer}");
}

#[tokio::test]
async fn async_calls_complete_out_of_order() {
    let mut client = initialized().await;
    for message in [
        call(1, "sleep", r#"{"ms":300,"tag":"slow"}"#),
        call(2, "sleep", r#"{"ms":10,"tag":"fast"}"#),
    ] {
        client.send(message).await;
    }
    assert_eq!(client.recv().await.unwrap(), text_result(2, r#""fast""#));
    assert_eq!(client.recv().await.unwrap(), text_result(1, r#""slow""#));
}

#[tokio::test]
async fn cancelled_calls_are_never_answered() {
    let mut client = initialized().await;
    for message in [
        call(1, "sleep", r#"{"ms":200,"tag":"cancelled"}"#),
        call(2, "block", r#"{"ms":100,"tag":"cancelled too"}"#),
    ] {
        client.send(message).await;
    }
    client.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}"#).await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#)
        .await;
    client
        .send(call(3, "sleep", r#"{"ms":400,"tag":"kept"}"#))
        .await;
    assert_eq!(client.recv().await.unwrap(), text_result(3, r#""kept""#));
    assert_eq!(client.close().await, Vec::<String>::new());
}

#[tokio::test]
async fn notifications_reach_initialized_clients_only() {
    let server = server();
    let mut early = server.connect_memory();
    assert_eq!(early.request(INIT).await, INIT_RESULT);
    let mut client = server.connect_memory();
    assert_eq!(client.request(INIT).await, INIT_RESULT);
    client.send(INITIALIZED).await;
    // The ping's answer proves the `initialized` notification was handled.
    client
        .request(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    assert_eq!(
        server
            .notifier()
            .notify("selection_changed", &serde_json::json!({"text": "x"})),
        1
    );
    assert_eq!(
        client.recv().await.unwrap(),
        r#"{"jsonrpc":"2.0","method":"selection_changed","params":{"text":"x"}}"#
    );
    assert_eq!(early.close().await, Vec::<String>::new());
}

#[tokio::test]
async fn end_of_input_answers_running_calls() {
    let client = initialized().await;
    client
        .send(call(1, "sleep", r#"{"ms":50,"tag":"done"}"#))
        .await;
    assert_eq!(client.close().await, [text_result(1, r#""done""#)]);
}
