use ide_mcp_runtime::mcp_resource;

/// One line of an open file.
#[mcp_resource(uri = "file:///{path}#L{line}")]
fn line(path: String) -> String {
    path
}

fn main() {}
