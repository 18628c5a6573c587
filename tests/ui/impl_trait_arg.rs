use ide_mcp_runtime::mcp_tool;

/// Says the text.
#[mcp_tool]
fn say(text: impl Into<String>) -> String {
    text.into()
}

fn main() {}
