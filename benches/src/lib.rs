//! Shared pieces of the ide-mcp benchmarks: synthetic editor state, the
//! MCP client used by the load generator, and the generated projects and
//! scripted clients of the live LSP benchmark.

// Statistics turn counts into floats and back; the values are far below 2^52.
#![allow(clippy::cast_precision_loss, clippy::cast_sign_loss)]

pub mod baseline;
pub mod client;
pub mod http_client;
pub mod lsp;
pub mod projects;
pub mod scripted;
pub mod synth;
