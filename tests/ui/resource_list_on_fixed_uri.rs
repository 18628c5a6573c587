use ide_mcp_runtime::{ListedResource, mcp_resource};

/// The workspace's problems.
#[mcp_resource(uri = "ide://diagnostics", list = everything)]
fn diagnostics() -> String {
    String::new()
}

fn everything() -> Vec<ListedResource> {
    Vec::new()
}

fn main() {}
