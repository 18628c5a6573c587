use ide_mcp_runtime::mcp_tool;
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Range {
    start: u32,
    end: u32,
}

/// Measures a range in a file.
#[mcp_tool]
fn measure(#[args] range: Range, file_path: String) -> String {
    format!("{file_path}: {}", range.end - range.start)
}

fn main() {}
