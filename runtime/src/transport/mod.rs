//! Transports: the Claude Code IDE WebSocket server, MCP's Streamable HTTP,
//! newline-delimited stdio, and the in-memory twin used by tests and
//! benchmarks.

mod admission;
pub mod http;
mod http_check;
mod http_route;
mod http_session;
mod http_sse;
mod http_stateless;
mod http_timer;
pub mod memory;
pub mod stdio;
pub mod upgrade;
pub mod websocket;
pub mod wire;
pub mod ws;

/// The largest message accepted: a WebSocket message or frame, or a stdio line.
///
/// 16 MiB: requests are small (tool names and arguments such as a path or
/// URI), but a host's own tools may take whole file contents (an `openDiff`
/// carries the new text of a file), and generated files of several MiB exist.
/// The limit bounds what one client can make the server buffer; it is also
/// tungstenite's default frame limit. A larger WebSocket message is refused
/// with close code 1009 (message too big); a longer stdio line with -32600.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;
