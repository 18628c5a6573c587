//! `RegisteredTool::call`: a tool called through its shim without a
//! session gives the `CallToolResult` that `tools/call` would.

use ide_mcp_runtime::{Registry, ToolContext, mcp_tool, tools};
use serde_json::value::RawValue;

/// The greeting this binary's tools say.
struct Greeting(&'static str);

/// Greets `name`.
#[mcp_tool]
fn greet(greeting: &Greeting, name: String) -> String {
    format!("{}, {name}", greeting.0)
}

/// Greets `name` after a yield.
#[mcp_tool]
async fn greet_later(greeting: &Greeting, name: String) -> String {
    tokio::task::yield_now().await;
    format!("{}, {name}", greeting.0)
}

/// Answers zero, on the blocking pool when served.
#[mcp_tool(blocking)]
fn nothing() -> u32 {
    0
}

fn registry() -> Registry {
    let ours = tools()
        .iter()
        .filter(|tool| tool.location.file.ends_with("call_tool.rs"));
    Registry::from_tools(ours).expect("the tools are valid")
}

async fn call(context: &ToolContext, name: &str, args: Option<&str>) -> String {
    let args = args.map(|a| RawValue::from_string(a.to_owned()).expect("valid JSON"));
    let registry = registry();
    let tool = registry.get(name).expect("registered");
    String::from_utf8(tool.call(context, args.as_deref()).await).expect("UTF-8")
}

fn context() -> ToolContext {
    ToolContext::new().with(Greeting("Hello"))
}

#[tokio::test]
async fn sync_async_and_blocking_tools_answer_their_result() {
    let args = Some(r#"{"name": "Ada"}"#);
    let hello = r#"{"content":[{"type":"text","text":"\"Hello, Ada\""}]}"#;
    assert_eq!(call(&context(), "greet", args).await, hello);
    assert_eq!(call(&context(), "greetLater", args).await, hello);
    assert_eq!(
        call(&context(), "nothing", None).await,
        r#"{"content":[{"type":"text","text":"0"}]}"#
    );
}

#[tokio::test]
async fn bad_arguments_and_missing_states_are_error_results() {
    for name in ["greet", "greetLater"] {
        assert_eq!(
            call(&context(), name, None).await,
            format!(
                r#"{{"content":[{{"type":"text","text":"invalid arguments for tool `{name}`: missing field `name`"}}],"isError":true}}"#
            )
        );
        assert_eq!(
            call(&ToolContext::new(), name, Some(r#"{"name": "Ada"}"#)).await,
            r#"{"content":[{"type":"text","text":"the server has no state of type `call_tool::Greeting`"}],"isError":true}"#
        );
    }
}

#[test]
fn the_future_is_send_and_runs_on_any_executor() {
    fn assert_send<F: Future + Send>(future: F) -> F {
        future
    }
    let registry = registry();
    let tool = registry.get("greet").expect("registered");
    let context = context();
    let args = RawValue::from_string(r#"{"name": "Ada"}"#.to_owned()).expect("valid JSON");
    let result =
        futures_util::FutureExt::now_or_never(assert_send(tool.call(&context, Some(&args))))
            .expect("a sync tool's call is ready at once");
    assert_eq!(
        result,
        br#"{"content":[{"type":"text","text":"\"Hello, Ada\""}]}"#
    );
}
