//! Fixture tools built by hand (plain `ToolDef`s) and a server serving them.
// The shims have the `CallFn` signature, whatever they return.
#![allow(clippy::unnecessary_wraps)]
#![allow(dead_code, unreachable_pub, unused_imports)]

use std::sync::Arc;
use std::time::Duration;

use ide_mcp_runtime::__private0_1::argument;
use ide_mcp_runtime::result::Outcome;
use ide_mcp_runtime::schema::input_schema;
use ide_mcp_runtime::tool::Arguments;
use ide_mcp_runtime::tool::{CallFn, CallOutcome, ToolReply};
use ide_mcp_runtime::{
    Call, CallToolResult, Execution, IntoToolResult as _, Registry, ResultOut, Server,
    SourceLocation, ToolAnnotations, ToolDef,
};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    pub text: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct SleepArgs {
    pub ms: u64,
    pub tag: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub struct NoArgs {}

const fn def(
    name: &'static str,
    execution: Execution,
    call: CallFn,
    input_schema: fn() -> ide_mcp_runtime::schema::Schema,
) -> ToolDef {
    ToolDef {
        name,
        description: "A fixture tool.",
        annotations: ToolAnnotations::NONE,
        input_schema,
        output_schema: None,
        states: |_| {},
        execution,
        call,
        face: None,
        location: SourceLocation {
            crate_name: "fixture",
            file: file!(),
            line: line!(),
        },
    }
}

fn echo(_: &Call<'_>, args: Option<Arguments<'_>>, out: &mut ResultOut<'_>) -> CallOutcome {
    match argument::<EchoArgs>().decode_object("echo", args) {
        Ok(args) => {
            out.json_text(&args.text);
            Outcome::Written.into()
        }
        Err(invalid) => invalid.into(),
    }
}

fn sleep(_: &Call<'_>, args: Option<Arguments<'_>>, _: &mut ResultOut<'_>) -> CallOutcome {
    let args = match argument::<SleepArgs>().decode_object("sleep", args) {
        Ok(args) => args,
        Err(invalid) => return invalid.into(),
    };
    CallOutcome::Pending(Box::pin(async move {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        Box::new(move |out: &mut ResultOut<'_>| {
            out.json_text(&args.tag);
            Outcome::Written
        }) as ToolReply
    }))
}

fn ready(_: &Call<'_>, _: Option<Arguments<'_>>, _: &mut ResultOut<'_>) -> CallOutcome {
    CallOutcome::Pending(Box::pin(async {
        Box::new(|out: &mut ResultOut<'_>| {
            CallToolResult::default().write_tool_result(out);
            Outcome::Written
        }) as ToolReply
    }))
}

fn boom(_: &Call<'_>, _: Option<Arguments<'_>>, out: &mut ResultOut<'_>) -> CallOutcome {
    // Panics halfway through writing its result: what was written is dropped.
    out.json_text(&PanicsMidway);
    unreachable!("the serialization panicked");
}

fn boom_later(_: &Call<'_>, _: Option<Arguments<'_>>, _: &mut ResultOut<'_>) -> CallOutcome {
    CallOutcome::Pending(Box::pin(async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        panic!("later kaboom");
    }))
}

fn block(_: &Call<'_>, args: Option<Arguments<'_>>, out: &mut ResultOut<'_>) -> CallOutcome {
    let args = match argument::<SleepArgs>().decode_object("block", args) {
        Ok(args) => args,
        Err(invalid) => return invalid.into(),
    };
    std::thread::sleep(Duration::from_millis(args.ms));
    out.json_text(&args.tag);
    Outcome::Written.into()
}

pub static ECHO: ToolDef = def("echo", Execution::Inline, echo, input_schema::<EchoArgs>);
pub static SLEEP: ToolDef = def("sleep", Execution::Async, sleep, input_schema::<SleepArgs>);
pub static READY: ToolDef = def("ready", Execution::Async, ready, input_schema::<NoArgs>);
pub static BOOM: ToolDef = def("boom", Execution::Inline, boom, input_schema::<NoArgs>);
pub static BOOM_LATER: ToolDef = def(
    "boomLater",
    Execution::Async,
    boom_later,
    input_schema::<NoArgs>,
);
pub static BLOCK: ToolDef = def(
    "block",
    Execution::Blocking,
    block,
    input_schema::<SleepArgs>,
);

pub fn server() -> Server {
    let registry =
        Registry::from_tools([&ECHO, &SLEEP, &READY, &BOOM, &BOOM_LATER, &BLOCK]).unwrap();
    Server::builder("fixture-host", "9.9.9")
        .instructions("Fixture tools.")
        .registry(Arc::new(registry))
        .build()
        .unwrap()
}

pub use ide_mcp_test_support::{INIT, INITIALIZED};

pub const INIT_RESULT: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"fixture-host","version":"9.9.9"},"instructions":"Fixture tools."}}"#;

/// `tools/call` of `tool` with the given arguments JSON.
pub fn call(id: u64, tool: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args},"_meta":{{"progressToken":{id},"claudecode/toolUseId":"t"}}}}}}"#
    )
}

/// The response carrying `text` as JSON text content.
pub fn text_result(id: u64, json_text: &str) -> String {
    let escaped = serde_json::to_string(json_text).unwrap();
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":{escaped}}}]}}}}"#
    )
}

/// Serializes one field, then panics.
struct PanicsMidway;

impl serde::Serialize for PanicsMidway {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("partial", &1)?;
        panic!("kaboom");
    }
}
