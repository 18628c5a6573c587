use ide_mcp_runtime::mcp_resource;

/// The workspace's problems.
#[mcp_resource(uri = "ide://diagnostics")]
fn diagnostics(severity: String) -> String {
    severity
}

fn main() {}
