use ide_mcp_runtime::mcp_prompt;

/// Reviews a file.
#[mcp_prompt(read_only)]
fn review(file: String) -> String {
    format!("Review {file}.")
}

fn main() {}
