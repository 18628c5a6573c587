use std::rc::Rc;

use ide_mcp_runtime::mcp_tool;

/// A state must be `Send + Sync + 'static` to be shared by every call.
#[mcp_tool]
fn count(counter: &Rc<u32>) -> u32 {
    **counter
}

fn main() {}
