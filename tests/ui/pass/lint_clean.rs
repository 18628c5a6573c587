//! The expansion triggers no lint in a strict user crate.
#![forbid(unsafe_code)]
#![deny(warnings, missing_docs, unused, unreachable_pub, unused_qualifications, nonstandard_style)]

use ide_mcp_runtime::mcp_tool;

/// A private state.
struct State;

/// A private tool nobody calls directly.
#[mcp_tool(structured)]
fn private_tool(_state: &State, count: Option<u32>, #[arg(default)] flag: bool) -> Result<Vec<u32>, String> {
    Ok(vec![count.unwrap_or_default(), u32::from(flag)])
}

/// An async tool.
#[mcp_tool]
async fn async_tool(_state: &State) {}

fn main() {}
