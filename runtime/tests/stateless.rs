//! MCP 2026-07-28 beside the handshake era, through the in-memory transport:
//! `server/discover`, requests that carry their version in `_meta`, the
//! unsupported-version error, `resultType` and the cache hints.

mod common;

use common::{INIT, INIT_RESULT, INITIALIZED, server};
use serde_json::{Value, json};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

fn stateless(id: u64, method: &str, params: &str) -> String {
    let sep = if params.is_empty() { "" } else { "," };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}{sep}{META}}}}}"#)
}

const DISCOVERED: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"tools":{"listChanged":false}},"instructions":"Fixture tools.","ttlMs":86400000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fixture-host","version":"9.9.9"}}}}"#;

#[tokio::test]
async fn discover_answers_before_and_after_initialize() {
    let mut client = server().connect_memory();
    let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#;
    assert_eq!(client.request(discover).await, DISCOVERED);
    assert_eq!(
        client.request(stateless(1, "server/discover", "")).await,
        DISCOVERED
    );
    assert_eq!(
        client
            .request(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#)
            .await,
        DISCOVERED
    );
    // The handshake still works on the same connection, unchanged.
    assert_eq!(client.request(INIT).await, INIT_RESULT);
    client.send(INITIALIZED).await;
    assert_eq!(client.request(discover).await, DISCOVERED);
}

#[tokio::test]
async fn stateless_requests_need_no_initialize() {
    let mut client = server().connect_memory();
    assert_eq!(
        client.request(stateless(2, "ping", "")).await,
        r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete"}}"#
    );
    let list: Value =
        serde_json::from_str(&client.request(stateless(3, "tools/list", "")).await).unwrap();
    let result = &list["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 86_400_000);
    assert_eq!(result["cacheScope"], "public");
    // The same tools as the handshake era's list, from the same bytes.
    let legacy: Value = serde_json::from_slice(server().registry().list_result_bytes()).unwrap();
    assert_eq!(result["tools"], legacy["tools"]);
    assert_eq!(result.as_object().unwrap().len(), 4);

    // Inline, async and blocking tools: each result says it is complete.
    let call = |id: u64, tool: &str, args: &str| {
        stateless(
            id,
            "tools/call",
            &format!(r#""name":"{tool}","arguments":{args}"#),
        )
    };
    assert_eq!(
        client.request(call(4, "echo", r#"{"text":"hi"}"#)).await,
        r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"\"hi\""}],"resultType":"complete"}}"#
    );
    assert_eq!(
        client.request(call(5, "ready", "{}")).await,
        r#"{"jsonrpc":"2.0","id":5,"result":{"content":[],"resultType":"complete"}}"#
    );
    assert_eq!(
        client
            .request(call(6, "sleep", r#"{"ms":1,"tag":"s"}"#))
            .await,
        r#"{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"\"s\""}],"resultType":"complete"}}"#
    );
    assert_eq!(
        client
            .request(call(7, "block", r#"{"ms":1,"tag":"b"}"#))
            .await,
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"\"b\""}],"resultType":"complete"}}"#
    );
    // Errors are errors in both eras: no `resultType` on them.
    let unknown: Value =
        serde_json::from_str(&client.request(call(8, "nope", "{}")).await).unwrap();
    assert_eq!(unknown["error"]["code"], -32602);
    let panicked: Value =
        serde_json::from_str(&client.request(call(9, "boom", "{}")).await).unwrap();
    assert_eq!(panicked["error"]["code"], -32603);

    // Without a stateless version, the handshake is still required.
    let refused: Value = serde_json::from_str(
        &client
            .request(r#"{"jsonrpc":"2.0","id":10,"method":"tools/list"}"#)
            .await,
    )
    .unwrap();
    assert_eq!(refused["error"]["code"], -32600);
}

#[tokio::test]
async fn handshake_results_stay_as_they_were() {
    let mut client = server().connect_memory();
    assert_eq!(client.request(INIT).await, INIT_RESULT);
    client.send(INITIALIZED).await;
    assert_eq!(
        client
            .request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .await
            .as_bytes(),
        [
            br#"{"jsonrpc":"2.0","id":1,"result":"#.as_slice(),
            server().registry().list_result_bytes(),
            b"}"
        ]
        .concat()
    );
    assert_eq!(
        client
            .request(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":2}}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"\"x\""}]}}"#
    );
    // A stateless request on an initialized connection is served in its own era.
    assert_eq!(
        client.request(stateless(3, "ping", "")).await,
        r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete"}}"#
    );
}

#[tokio::test]
async fn unsupported_versions_are_refused_with_the_supported_ones() {
    let mut client = server().connect_memory();
    let answer: Value = serde_json::from_str(
        &client
            .request(r#"{"jsonrpc":"2.0","id":"u","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}"#)
            .await,
    )
    .unwrap();
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": "u", "error": {
            "code": -32022,
            "message": "unsupported protocol version `2099-01-01`: this server speaks 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05",
            "data": {"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"], "requested": "2099-01-01"}
        }})
    );
    let answer: Value = serde_json::from_str(
        &client
            .request(r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":null}}}"#)
            .await,
    )
    .unwrap();
    assert_eq!(answer["error"]["code"], -32602);
    assert_eq!(
        answer["error"]["message"],
        "`_meta.io.modelcontextprotocol/protocolVersion` must be a string such as \"2026-07-28\""
    );
}
