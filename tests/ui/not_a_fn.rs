use ide_mcp_runtime::mcp_tool;

/// Not a function.
#[mcp_tool]
pub struct NotATool;

fn main() {}
