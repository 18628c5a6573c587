use ide_mcp_runtime::mcp_tool;

/// Reads nothing.
#[mcp_tool(readonly)]
fn nothing() {}

fn main() {}
