use ide_mcp_runtime::mcp_resource;

/// The workspace's problems.
#[mcp_resource(uri = "ide://diagnostics", read_only)]
fn diagnostics() -> String {
    String::new()
}

fn main() {}
