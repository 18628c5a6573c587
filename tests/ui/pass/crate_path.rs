//! `crate = path` reaches the runtime through a re-export.

mod reexport {
    pub use ide_mcp_runtime as runtime;
}

use ide_mcp_runtime::{Registry, mcp_tool};

/// Answers.
#[mcp_tool(crate = crate::reexport::runtime)]
fn answer() -> u8 {
    42
}

fn main() {
    assert!(Registry::global().unwrap().get("answer").is_some());
}
