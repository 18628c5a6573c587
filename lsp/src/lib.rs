//! LSP on the wire for ide-mcp: framing that hands out each message's exact
//! bytes, and (as the crate grows) the text mirror and the observer that turn
//! an editor's LSP traffic into the IDE tools' ports.
//!
//! ```
//! use ide_mcp_lsp::framing::{Frame, Message, MessageReader};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! // What an editor writes to its language server: two messages in one read.
//! let mut wire = Message::from_body(br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#).into_bytes();
//! wire.extend_from_slice(b"content-length: 33\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}");
//!
//! let mut reader = MessageReader::new(&wire[..]);
//! let mut forwarded = Vec::new();
//! while let Some(frame) = reader.next().await? {
//!     if let Frame::Message(message) = &frame {
//!         assert!(message.body().starts_with(b"{"));
//!     }
//!     forwarded.extend_from_slice(frame.as_bytes()); // byte for byte
//! }
//! assert_eq!(forwarded, wire);
//! # Ok(())
//! # }
//! ```
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::dbg_macro))]

pub mod client;
pub mod framing;
pub mod mirror;
pub mod observer;
pub mod proxy;
mod uri;
pub mod workspace;

pub use observer::{ClientVerdict, Observer, ObserverOptions, Replayed, ServerVerdict};
pub use workspace::{EditorInfo, LspWorkspace, StreamId, WorkspaceEvent};
