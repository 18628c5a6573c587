use ide_mcp_runtime::mcp_resource;

/// An open file.
#[mcp_resource(uri = "file:///{path}")]
fn open_file(path: String, encoding: String) -> String {
    path + &encoding
}

fn main() {}
