use ide_mcp_runtime::mcp_tool;

/// Waits for nothing.
#[mcp_tool(blocking)]
async fn wait() {}

fn main() {}
