//! One `#[args]` parameter is the whole arguments object; its serde
//! attributes are honoured, and context parameters may sit beside it.

use ide_mcp_runtime::{Call, Registry, ToolContext, mcp_tool};
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Range {
    /// First line.
    start_line: u32,
    #[serde(default)]
    end_line: Option<u32>,
}

struct Offset(u32);

/// Measures a range.
#[mcp_tool(read_only)]
fn measure(offset: &Offset, #[args] range: Range) -> u32 {
    range.end_line.unwrap_or(range.start_line) - range.start_line + offset.0
}

fn main() {
    let registry = Registry::global().unwrap();
    let tool = registry.get("measure").unwrap();
    assert_eq!(
        tool.input_schema,
        serde_json::json!({
            "type": "object",
            "properties": {
                "startLine": {"type": "integer", "minimum": 0, "description": "First line."},
                "endLine": {"type": "integer", "minimum": 0, "default": null},
            },
            "required": ["startLine"],
            "additionalProperties": false,
        })
    );
    let cx = ToolContext::new().with(Offset(1));
    let args = RawValue::from_string(r#"{"startLine": 3, "endLine": 7}"#.into()).unwrap();
    let mut out = Vec::new();
    let called = (tool.def.call)(&Call::new(&cx), Some((&*args).into()), &mut ide_mcp_runtime::ResultOut::new(&mut out));
    assert!(matches!(called, ide_mcp_runtime::tool::CallOutcome::Done(ide_mcp_runtime::result::Outcome::Written)));
    assert_eq!(out, br#"{"content":[{"type":"text","text":"5"}]}"#);

    // The direct call still works: the function is unchanged.
    assert_eq!(measure(&Offset(0), Range { start_line: 1, end_line: None }), 0);
}
