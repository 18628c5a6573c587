use ide_mcp_runtime::mcp_tool;

#[mcp_tool(read_only)]
fn undocumented() {}

fn main() {}
