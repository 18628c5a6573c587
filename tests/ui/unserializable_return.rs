use ide_mcp_runtime::mcp_tool;

struct Report {
    lines: u32,
}

/// Counts lines.
#[mcp_tool]
fn count(text: String) -> Report {
    Report {
        lines: text.lines().count() as u32,
    }
}

fn main() {}
