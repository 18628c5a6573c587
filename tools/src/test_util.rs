//! Helpers shared by the unit tests.

use std::path::Path;

use ide_mcp_runtime::{IntoToolResult, Json};

use crate::memory::MemoryWorkspace;
use crate::ports::BufferId;

/// The `text` of a successful result's single content item.
pub(crate) fn text_of(result: impl IntoToolResult) -> String {
    let mut out = Vec::new();
    result.write_tool_result(&mut ide_mcp_runtime::ResultOut::new(&mut out));
    let value: serde_json::Value = serde_json::from_slice(&out).expect("a result is JSON");
    assert_eq!(value.get("isError"), None, "not an error: {value}");
    let content = value["content"].as_array().expect("content");
    assert_eq!(content.len(), 1);
    assert_eq!(content[0]["type"], "text");
    content[0]["text"].as_str().expect("text").to_owned()
}

/// The `text` of the result a tool returning `value` gives.
pub(crate) fn text_of_value(value: impl serde::Serialize) -> String {
    text_of(Json(value))
}

/// A workspace with `/ws/a.rs` (buffer 7) open: "hello world".
pub(crate) fn hello_world() -> MemoryWorkspace {
    let ws = MemoryWorkspace::new();
    ws.open(
        BufferId(7),
        Some(Path::new("/ws/a.rs")),
        "rust",
        "hello world",
    );
    ws
}
