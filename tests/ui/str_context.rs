use ide_mcp_runtime::mcp_tool;

/// Echoes the text.
#[mcp_tool]
fn echo(text: &str) -> String {
    text.to_owned()
}

fn main() {}
