use ide_mcp_runtime::{mcp_prompt, mcp_resource};

/// An open file.
#[mcp_resource(uri = "file:///{path}")]
fn open_file<T: ToString>(path: T) -> String {
    path.to_string()
}

/// Reviews a file.
#[mcp_prompt]
fn review<T: ToString>(file: T) -> String {
    file.to_string()
}

fn main() {}
