use ide_mcp_runtime::mcp_tool;

/// Echoes any value.
#[mcp_tool]
fn echo<T: ToString>(value: T) -> String {
    value.to_string()
}

fn main() {}
