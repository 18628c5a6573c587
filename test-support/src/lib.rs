//! What the ide-mcp test suites share: the WebSocket MCP client (the
//! runtime's transport tests, the reliability suites and the CLI's
//! end-to-end tests connect, authenticate and exchange messages the same
//! way; feature `client`, on by default), and the reference LSP positions
//! the position helpers are checked against ([`position`]).
//!
//! ```no_run
//! # async fn demo(port: u16, token: &str) {
//! use ide_mcp_test_support::{McpClient, connect};
//!
//! let mut client = McpClient::new(connect(port, token).await);
//! client.initialize().await;
//! let list = client.request("tools/list", serde_json::json!({})).await;
//! assert!(list["tools"].is_array());
//! # }
//! ```

#[cfg(feature = "client")]
mod client;
pub mod position;

#[cfg(feature = "client")]
pub use client::*;
