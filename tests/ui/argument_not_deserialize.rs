use ide_mcp_runtime::mcp_tool;

struct Position {
    line: u32,
}

/// Goes to a line.
#[mcp_tool]
fn go_to(file_path: String, position: Position) -> String {
    format!("{file_path}:{}", position.line)
}

fn main() {}
