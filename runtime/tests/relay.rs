//! A server whose tools a [`Relay`] serves, through the in-memory transport:
//! its list and calls in both eras, errors passed on, progress to the
//! caller, cancellation reaching the relayed call, the in-flight bound; the
//! resources and prompts methods forwarded, or not.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ide_mcp_runtime::relay::{Relay, RelayFuture, RelayReply};
use ide_mcp_runtime::{Call, MAX_IN_FLIGHT, MemoryClient, Server};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::oneshot;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const META: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}"#;
const LIST: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#;

/// A relay whose calls do what their tool's name says.
#[derive(Default)]
struct Fake {
    /// The params of every call, as the relay was handed them.
    params: Mutex<Vec<String>>,
    /// Calls of `wait` whose future was dropped before it answered.
    dropped: Arc<AtomicUsize>,
    /// How the pending `wait` calls are answered.
    waiting: Mutex<Vec<oneshot::Sender<()>>>,
}

struct DropGuard(Arc<AtomicUsize>, bool);

impl Drop for DropGuard {
    fn drop(&mut self) {
        if !self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).unwrap()
}

fn text_result(text: &str) -> Box<RawValue> {
    raw(&json!({"content": [{"type": "text", "text": text}]}).to_string())
}

impl Relay for Fake {
    fn list_result(&self) -> Arc<[u8]> {
        Arc::from(LIST.as_bytes())
    }

    fn call(&self, call: &Call<'_>, params: &str) -> RelayFuture {
        self.params.lock().unwrap().push(params.to_owned());
        let name = serde_json::from_str::<Value>(params).unwrap()["name"]
            .as_str()
            .unwrap()
            .to_owned();
        match &*name {
            "echo" => {
                let result = text_result(params);
                Box::pin(async move { RelayReply::Result(result) })
            }
            "fail" => Box::pin(async {
                RelayReply::Error(raw(
                    r#"{"code":-32602,"message":"unknown tool `fail`","data":{"x":1}}"#,
                ))
            }),
            "progress" => {
                let peer = call.peer().cloned().unwrap();
                let token = call.progress_token().unwrap().get().to_owned();
                Box::pin(async move {
                    let note = format!(
                        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":1}}}}"#
                    );
                    assert!(peer.send_bytes(note.into_bytes().into()));
                    RelayReply::Result(text_result("done"))
                })
            }
            "wait" => {
                let (tx, rx) = oneshot::channel();
                self.waiting.lock().unwrap().push(tx);
                let cancel = call.cancellation().unwrap().clone();
                let guard = DropGuard(Arc::clone(&self.dropped), false);
                Box::pin(async move {
                    let mut guard = guard;
                    let _ = rx.await;
                    guard.1 = true;
                    assert!(!cancel.is_cancelled());
                    RelayReply::Result(text_result("waited"))
                })
            }
            "panic" => Box::pin(async { panic!("relay bug") }),
            "array" => Box::pin(async { RelayReply::Result(raw("[1]")) }),
            other => panic!("no tool {other}"),
        }
    }
}

fn server(fake: &Arc<Fake>) -> Server {
    Server::builder("relay", "1.0")
        .relay(Arc::clone(fake) as Arc<dyn Relay>)
        .build()
        .unwrap()
}

async fn initialized(server: &Server) -> MemoryClient {
    let mut client = server.connect_memory();
    let init: Value = serde_json::from_str(&client.request(INIT).await).unwrap();
    assert_eq!(
        init["result"]["capabilities"],
        json!({"tools": {"listChanged": true}})
    );
    client.send(INITIALIZED).await;
    client
}

/// Waits until `count` futures were dropped (an aborted task drops its
/// future when the runtime next runs it).
async fn dropped(fake: &Fake, count: usize) {
    for _ in 0..1000 {
        if fake.dropped.load(Ordering::SeqCst) == count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(fake.dropped.load(Ordering::SeqCst), count);
}

async fn next(client: &mut MemoryClient) -> Value {
    let message = tokio::time::timeout(Duration::from_mins(1), client.recv())
        .await
        .expect("a message in time")
        .expect("the connection is open");
    serde_json::from_str(&message).unwrap()
}

#[tokio::test]
async fn the_relay_s_list_is_served_in_both_eras_and_never_cached() {
    let fake = Arc::new(Fake::default());
    let server = server(&fake);
    // Not the linked tools: none are linked here, and none would be served.
    assert!(server.registry().tools().is_empty());
    let mut client = initialized(&server).await;
    assert_eq!(
        client
            .request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .await,
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{LIST}}}"#)
    );
    let mut fresh = server.connect_memory();
    let list = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"_meta":{{{META}}}}}}}"#
    );
    assert_eq!(
        fresh.request(list).await,
        r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#
    );
    let discover: Value = serde_json::from_str(
        &fresh
            .request(r#"{"jsonrpc":"2.0","id":3,"method":"server/discover"}"#)
            .await,
    )
    .unwrap();
    assert_eq!(
        discover["result"]["capabilities"],
        json!({"tools": {"listChanged": true}})
    );
}

#[tokio::test]
async fn calls_are_handed_their_params_as_sent_and_answered_in_each_era() {
    let fake = Arc::new(Fake::default());
    let server = server(&fake);
    let mut client = initialized(&server).await;
    // Both readings of a call (one pass, and serde for an unusual shape)
    // hand the relay the params' exact text.
    let params = [
        r#"{"name":"echo","arguments":{"a":[1, 2]},"_meta":{"progressToken":"p","claudecode/toolUseId":"u"}}"#,
        r#"{"arguments":null,"name":"ech\u006f"}"#,
    ];
    for (id, params) in params.iter().enumerate() {
        let call =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#);
        let answer = client.request(call).await;
        let expected = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": params}]}});
        assert_eq!(serde_json::from_str::<Value>(&answer).unwrap(), expected);
    }
    assert_eq!(*fake.params.lock().unwrap(), params);

    let stateless = format!(
        r#"{{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{{"name":"echo","_meta":{{{META}}}}}}}"#
    );
    let answer: Value =
        serde_json::from_str(&server.connect_memory().request(stateless).await).unwrap();
    assert_eq!(answer["id"], "s");
    assert_eq!(answer["result"]["resultType"], "complete");
    assert_eq!(answer["result"].as_object().unwrap().len(), 2, "{answer}");
}

#[tokio::test]
async fn errors_and_panics_are_answered_with_the_client_s_id() {
    let fake = Arc::new(Fake::default());
    let server = server(&fake);
    let mut client = initialized(&server).await;
    let call = |id: &str, name: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}"}}}}"#
        )
    };
    assert_eq!(
        client.request(call("7", "fail")).await,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"unknown tool `fail`","data":{"x":1}}}"#
    );
    assert_eq!(
        client.request(call(r#""p""#, "panic")).await,
        r#"{"jsonrpc":"2.0","id":"p","error":{"code":-32603,"message":"tool `panic` panicked: relay bug"}}"#
    );
    assert_eq!(
        client.request(call("8", "array")).await,
        r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32603,"message":"tool `array` was relayed a result that is not a JSON object"}}"#
    );
    // Still a session that needs its handshake.
    let mut fresh = server.connect_memory();
    let refused: Value = serde_json::from_str(&fresh.request(call("1", "echo")).await).unwrap();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
}

#[tokio::test]
async fn progress_reaches_the_caller() {
    let fake = Arc::new(Fake::default());
    let server = server(&fake);
    let mut client = initialized(&server).await;
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"tok"}}}"#)
        .await;
    assert_eq!(
        next(&mut client).await,
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "tok", "progress": 1}})
    );
    assert_eq!(
        next(&mut client).await["result"]["content"][0]["text"],
        "done"
    );
}

#[tokio::test]
async fn a_cancelled_call_drops_its_future_and_is_not_answered() {
    let fake = Arc::new(Fake::default());
    let server = server(&fake);
    let mut client = initialized(&server).await;
    let wait = |id: u32| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"wait"}}}}"#)
    };
    client.send(wait(1)).await;
    client.send(wait(2)).await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#)
        .await;
    let ping = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    assert_eq!(
        client.request(ping).await,
        r#"{"jsonrpc":"2.0","id":3,"result":{}}"#
    );
    dropped(&fake, 1).await;
    // The other call is answered when its relay answers.
    for tx in fake.waiting.lock().unwrap().drain(..) {
        let _ = tx.send(());
    }
    let answer = next(&mut client).await;
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "waited");
    assert_eq!(client.try_recv(), None);
}

#[tokio::test]
async fn relayed_calls_count_against_the_in_flight_bound() {
    let fake = Arc::new(Fake::default());
    let server = server(&fake);
    let mut client = initialized(&server).await;
    for id in 0..=MAX_IN_FLIGHT {
        client
            .send(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"wait"}}}}"#
            ))
            .await;
    }
    let refused = next(&mut client).await;
    assert_eq!(refused["id"], MAX_IN_FLIGHT, "{refused}");
    assert_eq!(refused["error"]["code"], -32030);
    // Closing the input cancels what still runs: every future is dropped.
    let rest = client.close().await;
    assert_eq!(rest.len(), MAX_IN_FLIGHT, "each call is answered: {rest:?}");
    assert!(rest.iter().all(|m| m.contains("-32031")), "{rest:?}");
    dropped(&fake, MAX_IN_FLIGHT).await;
}

#[tokio::test]
async fn a_relay_that_forwards_nothing_else_answers_method_not_found() {
    let fake = Arc::new(Fake::default());
    let server = server(&fake);
    let mut client = initialized(&server).await;
    for (i, method) in ide_mcp_runtime::relay::FORWARDED_METHODS.iter().enumerate() {
        let request = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"{method}","params":{{}}}}"#);
        let answer: Value = serde_json::from_str(&client.request(request).await).unwrap();
        assert_eq!(
            answer,
            json!({"jsonrpc": "2.0", "id": i, "error": {"code": -32601,
                   "message": format!("unknown method `{method}`")}})
        );
    }
    assert!(fake.params.lock().unwrap().is_empty());
}

/// A relay of an other server with resources and prompts: answers each
/// forwarded request with its method and params.
struct Forwarding;

impl Relay for Forwarding {
    fn list_result(&self) -> Arc<[u8]> {
        Arc::from(LIST.as_bytes())
    }

    fn call(&self, _: &Call<'_>, _: &str) -> RelayFuture {
        unreachable!("no tool is called")
    }

    fn has_capability(&self, capability: &str) -> bool {
        matches!(capability, "resources" | "prompts")
    }

    fn forward(&self, call: &Call<'_>, method: &str, params: Option<&str>) -> Option<RelayFuture> {
        assert!(call.cancellation().is_some());
        if method == "prompts/get" {
            return Some(Box::pin(async {
                RelayReply::Error(raw(r#"{"code":-32602,"message":"unknown prompt `x`"}"#))
            }));
        }
        let echoed = json!({"method": method, "params": params}).to_string();
        Some(Box::pin(async move { RelayReply::Result(raw(&echoed)) }))
    }
}

#[tokio::test]
async fn resources_and_prompts_are_forwarded_and_advertised_as_the_relay_says() {
    let server = Server::builder("relay", "1.0")
        .relay(Arc::new(Forwarding))
        .build()
        .unwrap();
    let mut client = server.connect_memory();
    let init: Value = serde_json::from_str(&client.request(INIT).await).unwrap();
    assert_eq!(
        init["result"]["capabilities"],
        json!({"tools": {"listChanged": true}, "resources": {"listChanged": true},
               "prompts": {"listChanged": true}})
    );
    client.send(INITIALIZED).await;

    let read = r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a://b"}}"#;
    assert_eq!(
        client.request(read).await,
        r#"{"jsonrpc":"2.0","id":1,"result":{"method":"resources/read","params":"{\"uri\":\"a://b\"}"}}"#
    );
    let bare = r#"{"jsonrpc":"2.0","id":"s","method":"prompts/list"}"#;
    assert_eq!(
        client.request(bare).await,
        r#"{"jsonrpc":"2.0","id":"s","result":{"method":"prompts/list","params":null}}"#
    );
    let get = r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"x"}}"#;
    assert_eq!(
        client.request(get).await,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"unknown prompt `x`"}}"#
    );
    // A 2026-07-28 request: the result marked complete.
    let stateless = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"resources/templates/list","params":{{"_meta":{{{META}}}}}}}"#
    );
    let answer: Value = serde_json::from_str(&client.request(stateless).await).unwrap();
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(answer["result"]["method"], "resources/templates/list");
}
