//! Transports: the Claude Code IDE WebSocket server, MCP's Streamable HTTP,
//! newline-delimited stdio, and the in-memory twin used by tests and
//! benchmarks.
//!
//! Both listeners admit a request by the one [`gate`] below them: `Host`,
//! `Origin` and the token, decided alike over the raw header bytes.

pub mod gate;
mod handle;
pub mod http;
pub mod memory;
pub mod stdio;
pub mod wire;
pub mod ws;

pub use wire::MAX_MESSAGE_BYTES;
