use ide_mcp_runtime::mcp_tool;
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Range {
    start: u32,
    end: u32,
}

/// Compares two ranges.
#[mcp_tool]
fn compare(#[args] left: Range, #[args] right: Range) -> bool {
    left.start == right.start && left.end == right.end
}

fn main() {}
