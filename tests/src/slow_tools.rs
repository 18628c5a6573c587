//! `hang` and `slow`: the tools that keep calls in flight, shared by
//! `tests/faults.rs` and its child server `src/bin/signal_server.rs`, each of
//! which includes this file with `#[path]` (it is not a module of the
//! library, whose users would all get the tools registered).

use std::time::Duration;

use ide_mcp_runtime::mcp_tool;

/// Never finishes.
#[mcp_tool]
async fn hang() -> String {
    std::future::pending().await
}

/// Finishes after `ms` milliseconds.
#[mcp_tool]
async fn slow(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms} ms")
}
