//! Every signature shape the attribute accepts, called through the registry.

use ide_mcp_runtime::{Call, CallToolResult, Execution, Registry, ToolContext, mcp_tool};
use ide_mcp_runtime::result::Outcome;
use ide_mcp_runtime::tool::CallOutcome;
use serde_json::value::RawValue;

struct Prefix(String);
struct Suffix(&'static str);

/// Does nothing; returns `()`, sent as `null`.
#[mcp_tool(idempotent)]
fn nothing() {}

/// Uses two contexts around an argument with a raw identifier.
#[mcp_tool(blocking)]
fn wrap(prefix: &Prefix, mut r#type: String, suffix: &Suffix) -> String {
    r#type.insert_str(0, &prefix.0);
    r#type + suffix.0
}

/// Fails asynchronously.
#[mcp_tool(name = "async-fail", title = "Async failure", open_world)]
pub async fn async_fail(#[arg(rename = "why", description = "The reason")] reason: String) -> Result<u8, String> {
    Err(reason)
}

/// Structured result of a `Result`.
#[mcp_tool(structured)]
async fn stats(values: Vec<f64>) -> Result<std::collections::BTreeMap<String, f64>, std::fmt::Error> {
    Ok([("sum".to_owned(), values.iter().sum())].into())
}

/// Hand-made result.
///
/// With a second paragraph.
#[mcp_tool(destructive)]
fn manual(_ignored: Option<u8>) -> CallToolResult {
    CallToolResult::error("by hand")
}

/// A ready result inside a `Result`: `Ok` as it is, `Err` as an error.
#[mcp_tool]
fn ready(fail: bool) -> Result<CallToolResult, String> {
    if fail { Err("failed".into()) } else { Ok(CallToolResult::text("ready")) }
}

fn call(cx: &ToolContext, name: &str, args: &str) -> String {
    let tool = Registry::global().unwrap().get(name).unwrap();
    let args = RawValue::from_string(args.to_owned()).unwrap();
    let mut out = Vec::new();
    let outcome = match (tool.def.call)(&Call::new(cx), Some((&*args).into()), &mut ide_mcp_runtime::ResultOut::new(&mut out)) {
        CallOutcome::Done(outcome) => outcome,
        CallOutcome::Pending(future) => block_on(future, &mut out),
    };
    // Refused input is an error result, as on the wire.
    if let Outcome::Invalid(message) = outcome {
        ide_mcp_runtime::ResultOut::new(&mut out).error_text(&message);
    }
    String::from_utf8(out).unwrap()
}

/// The futures here never wait: poll once.
fn block_on(future: ide_mcp_runtime::tool::ToolFuture, out: &mut Vec<u8>) -> Outcome {
    let mut future = future;
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(reply) => reply(&mut ide_mcp_runtime::ResultOut::new(out)),
        std::task::Poll::Pending => panic!("the future waited"),
    }
}

fn main() {
    let cx = ToolContext::new().with(Prefix("<".into())).with(Suffix(">"));
    assert_eq!(call(&cx, "nothing", "{}"), r#"{"content":[{"type":"text","text":"null"}]}"#);
    assert_eq!(call(&cx, "wrap", r#"{"type": "t"}"#), r#"{"content":[{"type":"text","text":"\"<t>\""}]}"#);
    assert_eq!(
        call(&cx, "async-fail", r#"{"why": "no"}"#),
        r#"{"content":[{"type":"text","text":"no"}],"isError":true}"#
    );
    assert_eq!(
        call(&cx, "stats", r#"{"values": [1, 2]}"#),
        r#"{"content":[{"type":"text","text":"{\"sum\":3.0}"}],"structuredContent":{"sum":3.0}}"#
    );
    assert_eq!(call(&cx, "ready", r#"{"fail": false}"#), r#"{"content":[{"type":"text","text":"ready"}]}"#);
    assert_eq!(
        call(&cx, "ready", r#"{"fail": true}"#),
        r#"{"content":[{"type":"text","text":"failed"}],"isError":true}"#
    );
    assert_eq!(call(&cx, "manual", "{}"), r#"{"content":[{"type":"text","text":"by hand"}],"isError":true}"#);

    let registry = Registry::global().unwrap();
    let def = |name| registry.get(name).unwrap().def;
    assert_eq!(def("wrap").execution, Execution::Blocking);
    let mut states = Vec::new();
    (def("wrap").states)(&mut states);
    assert_eq!(states.len(), 2);
    assert_eq!(def("async-fail").execution, Execution::Async);
    assert_eq!(def("async-fail").annotations.title, Some("Async failure"));
    assert_eq!(def("manual").description, "Hand-made result.\n\nWith a second paragraph.");
    assert!(def("stats").output_schema.is_some());
    assert_eq!(
        registry.get("async-fail").unwrap().input_schema["properties"]["why"]["description"],
        "The reason"
    );

    // The functions stay ordinary functions.
    nothing();
    assert_eq!(wrap(&Prefix("(".into()), "x".into(), &Suffix(")")), "(x)");
}
