use ide_mcp_runtime::mcp_resource;

/// An open file.
#[mcp_resource(uri = "file:///{path}", list = open_paths)]
fn open_file(path: String) -> String {
    path
}

/// The paths, not the listed resources.
fn open_paths() -> Vec<String> {
    Vec::new()
}

fn main() {}
