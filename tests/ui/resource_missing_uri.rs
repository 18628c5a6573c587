use ide_mcp_runtime::mcp_resource;

/// The workspace's problems.
#[mcp_resource(mime_type = "text/plain")]
fn diagnostics() -> String {
    String::new()
}

fn main() {}
