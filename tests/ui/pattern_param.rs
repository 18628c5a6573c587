use ide_mcp_runtime::mcp_tool;

/// Adds the two halves of a pair.
#[mcp_tool]
fn add((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}
