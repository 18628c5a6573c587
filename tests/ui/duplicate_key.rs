use ide_mcp_runtime::mcp_tool;

/// Reads nothing.
#[mcp_tool(name = "first", name = "second")]
fn nothing() {}

fn main() {}
