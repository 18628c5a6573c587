//! What the ide-mcp test suites share: the WebSocket MCP client (the
//! runtime's transport tests, the reliability suites and the CLI's
//! end-to-end tests connect, authenticate and exchange messages the same
//! way; feature `client`, on by default, with the raw HTTP/1.1 client of
//! [`http`], the JSON helpers of [`json`] and the LSP framing of [`lsp`]), the reference LSP positions
//! the position helpers are checked against ([`position`]), and the path
//! of the fake language server `lsp-echo` ([`lsp_echo()`]); [`on_path`]
//! says whether a program the tests drive is installed, and
//! [`write_script`] writes a script that can be run at once.
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
#[cfg(feature = "client")]
pub mod http;
#[cfg(feature = "client")]
pub mod json;
#[cfg(feature = "client")]
pub mod lsp;
mod lsp_echo;
pub mod position;
mod programs;
mod script;

pub use lsp_echo::lsp_echo;
pub use programs::on_path;
pub use script::write_script;

#[cfg(feature = "client")]
pub use client::*;
