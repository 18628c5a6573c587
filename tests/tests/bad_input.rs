//! Bad input: malformed frames over a real WebSocket, each answered with the
//! JSON-RPC error the spec prescribes, the connection still answering a
//! `ping` after it; frames the transport must refuse close only their own
//! connection; and abusive tool arguments against the five real tools.
//!
//! `runtime/tests/protocol.rs` pins the exact messages of the common errors
//! over the in-memory transport; this suite goes through the socket, adds
//! the cases below, and checks liveness after every single one.

mod support;

use futures_util::SinkExt as _;
use ide_mcp_runtime::WsOptions;
use serde_json::{Value, json};
use support::{
    Client, ask, assert_alive, call, close_code, initialized, json, read_server, send, serve,
};
use tokio_tungstenite::tungstenite::Bytes;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// What a malformed frame must be answered with: the error code and the id
/// (`None`: `null`, the id could not be read).
struct Case {
    name: &'static str,
    frame: String,
    code: i64,
    id: Option<Value>,
}

fn case(name: &'static str, frame: impl Into<String>, code: i64, id: Option<Value>) -> Case {
    Case {
        name,
        frame: frame.into(),
        code,
        id,
    }
}

#[allow(clippy::too_many_lines)] // one table of cases
fn corpus() -> Vec<Case> {
    let deep_array = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_object = format!("{}1{}", r#"{"a":"#.repeat(100_000), "}".repeat(100_000));
    vec![
        case("not JSON", "hello", PARSE_ERROR, None),
        case("empty frame", "", PARSE_ERROR, None),
        case("whitespace", " \t\r\n ", PARSE_ERROR, None),
        case("NUL bytes", "\0\0", PARSE_ERROR, None),
        case(
            "truncated in a string",
            r#"{"jsonrpc":"2.0","id":1,"method":"pi"#,
            PARSE_ERROR,
            None,
        ),
        case(
            "truncated before the brace",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
            PARSE_ERROR,
            None,
        ),
        case(
            "trailing garbage",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
            PARSE_ERROR,
            None,
        ),
        case(
            "two messages in one frame",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            PARSE_ERROR,
            None,
        ),
        case(
            "batch",
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            INVALID_REQUEST,
            None,
        ),
        case("empty batch", "[]", INVALID_REQUEST, None),
        case("truncated batch", "[1,", PARSE_ERROR, None),
        case("a number", "42", INVALID_REQUEST, None),
        case("a string", r#""ping""#, INVALID_REQUEST, None),
        case("null", "null", INVALID_REQUEST, None),
        case(
            "jsonrpc 1.0",
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            INVALID_REQUEST,
            Some(json!(1)),
        ),
        case(
            "jsonrpc missing",
            r#"{"id":2,"method":"ping"}"#,
            INVALID_REQUEST,
            Some(json!(2)),
        ),
        case(
            "jsonrpc a number",
            r#"{"jsonrpc":2.0,"id":3,"method":"ping"}"#,
            INVALID_REQUEST,
            Some(json!(3)),
        ),
        case(
            "id null",
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            INVALID_REQUEST,
            None,
        ),
        case(
            "id an object",
            r#"{"jsonrpc":"2.0","id":{"a":[1]},"method":"ping"}"#,
            INVALID_REQUEST,
            None,
        ),
        case(
            "id an array",
            r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
            INVALID_REQUEST,
            None,
        ),
        case(
            "id a boolean",
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            INVALID_REQUEST,
            None,
        ),
        case(
            "id nested deep",
            format!(
                r#"{{"jsonrpc":"2.0","id":{}1{},"method":"ping"}}"#,
                "[".repeat(50),
                "]".repeat(50)
            ),
            INVALID_REQUEST,
            None,
        ),
        case(
            "two ids",
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            INVALID_REQUEST,
            None,
        ),
        case(
            "method missing",
            r#"{"jsonrpc":"2.0","id":4}"#,
            INVALID_REQUEST,
            Some(json!(4)),
        ),
        case(
            "method a number",
            r#"{"jsonrpc":"2.0","id":5,"method":5}"#,
            INVALID_REQUEST,
            Some(json!(5)),
        ),
        case(
            "unknown method",
            r#"{"jsonrpc":"2.0","id":6,"method":"nothing/here"}"#,
            METHOD_NOT_FOUND,
            Some(json!(6)),
        ),
        case(
            "empty method",
            r#"{"jsonrpc":"2.0","id":7,"method":""}"#,
            METHOD_NOT_FOUND,
            Some(json!(7)),
        ),
        case(
            "method with a NUL",
            r#"{"jsonrpc":"2.0","id":8,"method":"ping\u0000"}"#,
            METHOD_NOT_FOUND,
            Some(json!(8)),
        ),
        case(
            "string id with escapes",
            r#"{"jsonrpc":"2.0","id":"a\"\u0000😀","method":"nope"}"#,
            METHOD_NOT_FOUND,
            Some(json!("a\"\u{0}😀")),
        ),
        case(
            "params a number",
            r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":3}"#,
            INVALID_REQUEST,
            Some(json!(9)),
        ),
        case(
            "params a string",
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":"getDiagnostics"}"#,
            INVALID_REQUEST,
            Some(json!(10)),
        ),
        case(
            "tools/call params an array",
            r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":["getDiagnostics"]}"#,
            INVALID_PARAMS,
            Some(json!(11)),
        ),
        case(
            "tools/call without params",
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call"}"#,
            INVALID_PARAMS,
            Some(json!(12)),
        ),
        case(
            "tools/call name a number",
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":3}}"#,
            INVALID_PARAMS,
            Some(json!(13)),
        ),
        case(
            "tools/call unknown tool",
            call(14, "openDiff", "{}"),
            INVALID_PARAMS,
            Some(json!(14)),
        ),
        case(
            "initialize again, bad params",
            r#"{"jsonrpc":"2.0","id":15,"method":"initialize","params":{"protocolVersion":7}}"#,
            INVALID_REQUEST,
            Some(json!(15)),
        ),
        case(
            "a 4 MiB method name",
            format!(
                r#"{{"jsonrpc":"2.0","id":16,"method":"{}"}}"#,
                "m".repeat(4 << 20)
            ),
            METHOD_NOT_FOUND,
            Some(json!(16)),
        ),
        case(
            "a 4 MiB tool name",
            call(17, &"t".repeat(4 << 20), "{}"),
            INVALID_PARAMS,
            Some(json!(17)),
        ),
        case("100 000 nested arrays", deep_array, INVALID_REQUEST, None),
        case("100 000 nested objects", deep_object, INVALID_REQUEST, None),
    ]
}

async fn check(client: &mut Client, c: &Case, alive_id: u64) {
    let answer = ask(client, &c.frame).await;
    let value = json(&answer);
    assert_eq!(value["jsonrpc"], "2.0", "{}: {answer}", c.name);
    assert_eq!(
        value["error"]["code"],
        c.code,
        "{}: {}",
        c.name,
        &answer[..answer.len().min(300)]
    );
    assert_eq!(
        value["id"],
        c.id.clone().unwrap_or(Value::Null),
        "{}",
        c.name
    );
    let message = value["error"]["message"].as_str().unwrap();
    assert!(
        !message.is_empty() && message.len() < 400,
        "{}: a short message, not an echo of the input ({} bytes)",
        c.name,
        message.len()
    );
    assert_alive(client, alive_id).await;
}

#[tokio::test]
async fn every_malformed_frame_gets_its_error_and_the_connection_answers_a_ping() {
    let server = read_server();
    let (handle, _dir) = serve(&server, WsOptions::default()).await;
    let mut client = initialized(&handle).await;
    let cases = corpus();
    for (i, c) in cases.iter().enumerate() {
        check(&mut client, c, 1000 + i as u64).await;
    }
    // What gets no answer at all: notifications, known or not, and
    // responses (this server sends no requests); the next ping is answered
    // first.
    for silent in [
        r#"{"jsonrpc":"2.0","method":"no/such/notification"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}"#,
    ] {
        send(&mut client, silent).await;
    }
    assert_alive(&mut client, 1).await;
    // Odd but valid ids are echoed as written.
    for id in ["1.5", "-0", "12345678901234567890123", "1e400", r#""""#] {
        let answer = ask(
            &mut client,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
        )
        .await;
        assert_eq!(
            answer,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
        );
    }
    // Enormous and deeply nested params of a valid request are fine.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"s":"{}","deep":{}{}}}}}"#,
        "x".repeat(4 << 20),
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert_eq!(
        ask(&mut client, &big).await,
        r#"{"jsonrpc":"2.0","id":2,"result":{}}"#
    );
    // Before `initialize`, tools are refused with -32600 and ping works.
    let mut fresh = support::connect(&handle).await;
    let answer = json(&ask(&mut fresh, &call(3, "getOpenEditors", "{}")).await);
    assert_eq!(answer["error"]["code"], INVALID_REQUEST);
    assert_alive(&mut fresh, 4).await;
}

/// Sends one raw data frame: `opcode` (text or continuation), `fin` when it
/// ends its message.
async fn send_frame(client: &mut Client, payload: &[u8], fin: bool, opcode: Data) {
    let frame = Frame::message(Bytes::copy_from_slice(payload), OpCode::Data(opcode), fin);
    client.send(Message::Frame(frame)).await.unwrap();
}

#[tokio::test]
async fn frames_the_transport_refuses_close_only_their_connection() {
    let server = read_server();
    let (handle, _dir) = serve(
        &server,
        WsOptions {
            max_message_bytes: 64 * 1024,
            ..WsOptions::default()
        },
    )
    .await;
    let mut bystander = initialized(&handle).await;

    // Invalid UTF-8 in a text frame: 1007.
    let mut client = initialized(&handle).await;
    send_frame(
        &mut client,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\xffng\"}",
        true,
        Data::Text,
    )
    .await;
    assert_eq!(close_code(&mut client).await, Some(CloseCode::Invalid));

    // Invalid UTF-8 in a binary frame: binary is refused as such, 1003.
    let mut client = initialized(&handle).await;
    client
        .send(Message::binary(b"\xc3\x28\xff".to_vec()))
        .await
        .unwrap();
    assert_eq!(close_code(&mut client).await, Some(CloseCode::Unsupported));

    // One frame over the limit: 1009.
    let mut client = initialized(&handle).await;
    send(&mut client, &"x".repeat(64 * 1024 + 1)).await;
    assert_eq!(close_code(&mut client).await, Some(CloseCode::Size));

    // A message over the limit in fragments each under it: 1009.
    let mut client = initialized(&handle).await;
    let piece = vec![b' '; 40 * 1024];
    send_frame(&mut client, &piece, false, Data::Text).await;
    send_frame(&mut client, &piece, true, Data::Continue).await;
    assert_eq!(close_code(&mut client).await, Some(CloseCode::Size));

    // A continuation with nothing to continue: a protocol error, 1002.
    let mut client = initialized(&handle).await;
    send_frame(&mut client, b"{}", true, Data::Continue).await;
    assert_eq!(close_code(&mut client).await, Some(CloseCode::Protocol));

    // A fragmented message under the limit is one message.
    let mut client = initialized(&handle).await;
    let (head, tail) = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#.split_at(10);
    send_frame(&mut client, head.as_bytes(), false, Data::Text).await;
    send_frame(&mut client, tail.as_bytes(), true, Data::Continue).await;
    assert_eq!(
        support::recv(&mut client).await,
        r#"{"jsonrpc":"2.0","id":5,"result":{}}"#
    );

    // The bystander saw none of it.
    assert_alive(&mut bystander, 9).await;
    let tabs = json(&ask(&mut bystander, &call(10, "getOpenEditors", "{}")).await);
    assert!(
        tabs["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("module_0.rs")
    );
}

/// The JSON inside a tool result's text, and whether it is an error result;
/// or the JSON-RPC error code.
fn tool_answer(answer: &str) -> Result<(bool, String), i64> {
    let value = json(answer);
    if let Some(code) = value["error"]["code"].as_i64() {
        return Err(code);
    }
    let result = &value["result"];
    let text = result["content"][0]["text"].as_str().unwrap().to_owned();
    Ok((result["isError"] == true, text))
}

/// The JSON inside a tool result's text, which must be no error: `input`
/// names the case otherwise.
fn answered(answer: &str, input: &str) -> String {
    let (is_error, text) =
        tool_answer(answer).unwrap_or_else(|code| panic!("{input:.60?}: JSON-RPC error {code}"));
    assert!(!is_error, "{input:.60?}: {text}");
    text
}

/// `filePath`/`uri` values a client might send by mistake or on purpose,
/// and whether each names the dirty open buffer `/ws/src/module_0.rs`.
fn path_inputs() -> Vec<(String, bool)> {
    let mut inputs: Vec<(String, bool)> = [
        ("", false),
        ("a.rs", false),
        ("./src/module_0.rs", false),
        ("src/module_0.rs", false),
        ("../../etc/passwd", false),
        ("/ws/../../../../etc/passwd", false),
        ("/ws/src/../src/./module_0.rs", true),
        ("/../../ws/src/module_0.rs", true),
        ("file:///ws/%2e%2e/%2e%2e/etc/passwd", false),
        ("file:///ws/src/%2e%2e/src/module_0.rs", true),
        ("/ws/src/module_0.rs\0", false),
        ("/ws/src/module_0\0.rs", false),
        ("file:///ws/src/module_0.rs%00", false),
        ("file:///%zz%", false),
        ("file:///ws/src/module_0.rs%", false),
        ("file:///ws/%C3%28.rs", false),
        ("file:///ws/%FF%FE", false),
        ("file://evil.example/ws/src/module_0.rs", false),
        ("file://localhost/ws/src/module_0.rs", true),
        ("FILE:/ws/src/module_0.rs", true),
        ("file:", false),
        ("file://", false),
        ("untitled:Untitled-1", false),
        ("\\\\server\\share\\a.rs", false),
        (" /ws/src/module_0.rs", false),
        ("😀", false),
        ("http://127.0.0.1/ws/src/module_0.rs", false),
    ]
    .into_iter()
    .map(|(s, hit)| (s.to_owned(), hit))
    .collect();
    inputs.push((format!("/{}", "a".repeat(100 * 1024)), false));
    inputs.push((
        format!("/ws/{}src/module_0.rs", "../".repeat(34 * 1024)),
        false,
    ));
    inputs.push((format!("file:///{}", "%".repeat(100 * 1024)), false));
    inputs.push((format!("file:///ws/{}", "%2F".repeat(34 * 1024)), false));
    inputs
}

#[tokio::test]
async fn abusive_paths_get_a_clear_result_never_an_error_or_a_panic() {
    let server = read_server();
    let mut client = server.connect_memory();
    client.request(support::INIT).await;
    let mut id = 0;
    for (input, hits) in path_inputs() {
        let echo = serde_json::to_string(&input).unwrap();
        id += 1;
        let answer = client
            .request(call(
                id,
                "checkDocumentDirty",
                &format!(r#"{{"filePath":{echo}}}"#),
            ))
            .await;
        let text = answered(&answer, &input);
        assert_eq!(
            json(&text),
            json!({"success": true, "filePath": input, "isDirty": hits, "isUntitled": false}),
            "{input:.60?}"
        );

        id += 1;
        let answer = client
            .request(call(id, "getDiagnostics", &format!(r#"{{"uri":{echo}}}"#)))
            .await;
        let text = answered(&answer, &input);
        let files = json(&text);
        assert_eq!(files[0]["uri"], input.as_str(), "the uri is echoed");
        let found = files[0]["diagnostics"].as_array().unwrap().len();
        assert_eq!(found, if hits { 5 } else { 0 }, "{input:.60?}");
    }
}

#[tokio::test]
async fn wrong_argument_types_are_tool_errors_naming_the_argument() {
    let server = read_server();
    let mut client = server.connect_memory();
    client.request(support::INIT).await;
    let mut id = 100;
    let mut ask_tool = async |tool: &str, args: &str| {
        id += 1;
        let answer = client.request(call(id, tool, args)).await;
        tool_answer(&answer)
    };
    // Each refused with a tool error naming the argument.
    let refused = [
        ("checkDocumentDirty", "filePath", r#"{"filePath":3}"#),
        ("checkDocumentDirty", "filePath", r#"{"filePath":true}"#),
        ("checkDocumentDirty", "filePath", r#"{"filePath":null}"#),
        ("checkDocumentDirty", "filePath", r#"{"filePath":[]}"#),
        ("checkDocumentDirty", "filePath", r#"{"filePath":{}}"#),
        ("checkDocumentDirty", "filePath", r#"{"filePath":1.5}"#),
        (
            "checkDocumentDirty",
            "filePath",
            r#"{"filePath":["/ws/a.rs"]}"#,
        ),
        ("checkDocumentDirty", "filePath", "{}"),
        (
            "checkDocumentDirty",
            "filePath",
            r#"{"filepath":"/ws/a.rs"}"#,
        ),
        (
            "checkDocumentDirty",
            "filePath",
            r#"{"file_path":"/ws/a.rs"}"#,
        ),
        ("getDiagnostics", "uri", r#"{"uri":3}"#),
        ("getDiagnostics", "uri", r#"{"uri":true}"#),
        ("getDiagnostics", "uri", r#"{"uri":[]}"#),
        ("getDiagnostics", "uri", r#"{"uri":{}}"#),
    ];
    for (tool, argument, args) in refused {
        let (is_error, text) = ask_tool(tool, args).await.unwrap();
        assert!(is_error && text.contains(argument), "{args}: {text}");
    }
    // `uri: null` is an absent `uri`: every file.
    let (is_error, text) = ask_tool("getDiagnostics", r#"{"uri":null}"#).await.unwrap();
    assert!(!is_error);
    assert_eq!(json(&text).as_array().unwrap().len(), 40);
    // Extra fields are ignored, for every tool.
    for &tool in support::READ_TOOLS {
        let args = r#"{"filePath":"/ws/src/module_0.rs","extra":{"deep":[1,2,3]},"uri":"/ws/x"}"#;
        let (is_error, text) = ask_tool(tool, args).await.unwrap();
        assert!(!is_error, "{tool}: {text}");
        json(&text);
    }
    // `arguments` that are not an object: a tool error or -32602, never a crash.
    for args in ["3", r#""str""#, "[]", "[1,2]", "true"] {
        for &tool in support::READ_TOOLS {
            match ask_tool(tool, args).await {
                Ok((true, text)) => assert!(text.contains("argument"), "{tool} {args}: {text}"),
                Ok((false, text)) => {
                    json(&text);
                }
                Err(code) => assert_eq!(code, INVALID_PARAMS, "{tool} {args}"),
            }
        }
    }
    // `arguments` absent or null: the tools without required arguments answer.
    for &tool in support::READ_TOOLS {
        for args in ["null"] {
            match ask_tool(tool, args).await {
                Ok((is_error, text)) => {
                    assert_eq!(is_error, tool == "checkDocumentDirty", "{tool}: {text}");
                }
                Err(code) => panic!("{tool} {args}: {code}"),
            }
        }
    }
}
