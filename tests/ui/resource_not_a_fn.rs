use ide_mcp_runtime::{mcp_prompt, mcp_resource};

/// Not a function.
#[mcp_resource(uri = "ide://diagnostics")]
pub struct Diagnostics;

/// Not a function either.
#[mcp_prompt]
pub const REVIEW: &str = "Review the file.";

fn main() {}
