//! Parameters taken from the call: the runtime's per-request extractors, a
//! downstream crate's own extractor, and `#[arg]` forcing an argument.

use ide_mcp_runtime::result::Outcome;
use ide_mcp_runtime::tool::CallOutcome;
use ide_mcp_runtime::jsonrpc::{self, Message};
use ide_mcp_runtime::{
    Call, CancellationToken, FromCall, Peer, Progress, Registry, Rejection, RequestId, Server,
    StateReq, ToolContext, mcp_tool,
};
use serde_json::value::RawValue;

/// A state the custom extractor reads.
struct Config {
    greeting: &'static str,
}

/// A downstream extractor: the greeting of the server's `Config`, by value.
struct Greeting(&'static str);

impl FromCall<'_> for Greeting {
    fn from_call(call: &Call<'_>) -> Result<Self, Rejection> {
        let config = call
            .state::<Config>()
            .ok_or_else(|| Rejection::new("no `Config` was configured"))?;
        Ok(Greeting(config.greeting))
    }

    fn required_states(states: &mut Vec<StateReq>) {
        states.push(StateReq::of::<Config>());
    }
}

/// An extractor that always refuses.
struct Refuse;

impl FromCall<'_> for Refuse {
    fn from_call(_: &Call<'_>) -> Result<Self, Rejection> {
        Err(Rejection::new("refused by the extractor"))
    }
}

/// Greets `name` with the configured greeting.
#[mcp_tool]
fn greet(greeting: Greeting, name: String) -> String {
    format!("{} {name}", greeting.0)
}

/// Reports what the call carries.
#[mcp_tool]
async fn inspect(
    id: RequestId<'_>,
    cancel: CancellationToken,
    progress: Progress,
    peer: Peer,
    n: u32,
) -> String {
    let sent = progress.report(f64::from(n), None, None);
    let _ = peer.notify("notifications/message", &serde_json::json!({"level": "info", "data": n}));
    format!("{} {} {}", id.as_json(), cancel.is_cancelled(), sent)
}

/// A type that is an extractor, taken as an argument because of `#[arg]`.
#[mcp_tool]
fn forced(#[arg] token: Option<String>, cancel: CancellationToken) -> Option<String> {
    drop(cancel);
    token
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    text: String,
}

/// Beside `#[args]`, every other parameter is taken from the call.
#[mcp_tool]
fn whole(#[args] args: Args, greeting: Greeting) -> String {
    format!("{} {}", greeting.0, args.text)
}

/// Never runs: its extractor refuses.
#[mcp_tool]
fn refused(_refuse: Refuse) {}

fn call(call: &Call<'_>, name: &str, args: &str) -> String {
    let tool = Registry::global().unwrap().get(name).unwrap();
    let args = RawValue::from_string(args.to_owned()).unwrap();
    let mut out = Vec::new();
    let outcome = match (tool.def.call)(call, Some((&*args).into()), &mut ide_mcp_runtime::ResultOut::new(&mut out)) {
        CallOutcome::Done(outcome) => outcome,
        CallOutcome::Pending(mut future) => {
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            match future.as_mut().poll(&mut cx) {
                std::task::Poll::Ready(reply) => reply(&mut ide_mcp_runtime::ResultOut::new(&mut out)),
                std::task::Poll::Pending => panic!("the future waited"),
            }
        }
    };
    // Refused input is an error result, as on the wire.
    if let Outcome::Invalid(message) = outcome {
        ide_mcp_runtime::ResultOut::new(&mut out).error_text(&message);
    }
    String::from_utf8(out).unwrap()
}

fn main() {
    let states = ToolContext::new().with(Config { greeting: "hello" });
    let cx = Call::new(&states);
    assert_eq!(call(&cx, "greet", r#"{"name": "you"}"#), r#"{"content":[{"type":"text","text":"\"hello you\""}]}"#);
    assert_eq!(call(&cx, "whole", r#"{"text": "all"}"#), r#"{"content":[{"type":"text","text":"\"hello all\""}]}"#);
    assert_eq!(
        call(&cx, "refused", "{}"),
        r#"{"content":[{"type":"text","text":"refused by the extractor"}],"isError":true}"#
    );
    assert_eq!(call(&cx, "forced", r#"{"token": "t"}"#), r#"{"content":[{"type":"text","text":"\"t\""}]}"#);

    // Per-request extractors read what the transport put in the call.
    let (peer, mut rx) = Peer::channel(4);
    let token = RawValue::from_string("\"p\"".into()).unwrap();
    let Ok(Message::Request { id, .. }) = jsonrpc::parse(br#"{"jsonrpc":"2.0","id":7,"method":"m"}"#) else {
        panic!("a request")
    };
    let empty = ToolContext::new();
    let cx = Call::new(&empty).with_id(id).with_peer(Some(&peer)).with_progress_token(Some(&token));
    assert_eq!(call(&cx, "inspect", r#"{"n": 3}"#), r#"{"content":[{"type":"text","text":"\"7 false true\""}]}"#);
    assert_eq!(
        &*rx.try_recv().unwrap(),
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":3.0}}"#
    );
    assert_eq!(
        &*rx.try_recv().unwrap(),
        br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":3,"level":"info"}}"#
    );

    // Extracted parameters are no part of the input schema; their states are required.
    let registry = Registry::global().unwrap();
    let properties = |name| {
        let schema = &registry.get(name).unwrap().input_schema;
        schema["properties"].as_object().unwrap().keys().cloned().collect::<Vec<_>>()
    };
    assert_eq!(properties("greet"), ["name"]);
    assert_eq!(properties("inspect"), ["n"]);
    assert_eq!(properties("forced"), ["token"]);
    assert_eq!(properties("whole"), ["text"]);
    let mut states = Vec::new();
    (registry.get("greet").unwrap().def.states)(&mut states);
    assert_eq!(states, [StateReq::of::<Config>()]);
    let err = Server::builder("t", "0").build().unwrap_err();
    assert!(err.to_string().contains("tool `greet` needs a state of type `"), "{err}");
}
