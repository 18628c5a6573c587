use ide_mcp_runtime::{mcp_prompt, mcp_resource};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Path {
    path: String,
}

/// An open file.
#[mcp_resource(uri = "file:///{path}")]
fn open_file(#[args] path: Path) -> String {
    path.path
}

/// Reviews a file.
#[mcp_prompt]
fn review(#[args] file: Path) -> String {
    file.path
}

fn main() {}
