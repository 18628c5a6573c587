use ide_mcp_runtime::mcp_prompt;

/// Reviews a file.
#[mcp_prompt]
fn review(file: String) -> u32 {
    file.len() as u32
}

fn main() {}
