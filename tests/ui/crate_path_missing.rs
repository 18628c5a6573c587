use ide_mcp_runtime::mcp_tool;

/// Reads nothing.
#[mcp_tool(crate = ::no_such_runtime)]
fn nothing() {}

fn main() {}
