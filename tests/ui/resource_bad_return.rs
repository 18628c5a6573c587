use ide_mcp_runtime::mcp_resource;

/// How many problems the workspace has.
#[mcp_resource(uri = "ide://problem-count")]
fn problem_count() -> u32 {
    0
}

fn main() {}
