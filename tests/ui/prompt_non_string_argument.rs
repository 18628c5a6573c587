use ide_mcp_runtime::mcp_prompt;

/// Suggests names.
#[mcp_prompt]
fn names(thing: String, count: u32) -> String {
    format!("Suggest {count} names for {thing}.")
}

fn main() {}
