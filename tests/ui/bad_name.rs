use ide_mcp_runtime::mcp_tool;

/// Reads nothing.
#[mcp_tool(name = "read nothing")]
fn nothing() {}

fn main() {}
