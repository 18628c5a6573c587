//! LSP on the wire for ide-mcp: framing that hands out each message's exact
//! bytes, a text mirror kept in the server's position encoding, and the
//! observer that turns an editor's LSP traffic into the IDE tools' ports.
//!
//! - [`framing`]: [`MessageReader`](framing::MessageReader) cuts a stream
//!   into messages (and bytes that are not one), never re-serializing.
//! - [`Observer`]: one per editor↔server stream; each message body goes
//!   through [`from_client`](Observer::from_client) or
//!   [`from_server`](Observer::from_server), whose verdict says whether to
//!   forward it unchanged.
//! - [`LspWorkspace`]: what the observers of one editor fill, shared; it is
//!   the tools' `EditorAccess`, `BufferStore`, `DiagnosticsQuery` and
//!   `FileOpener`, handed to the server as a `EditorPorts`.
//! - [`outgoing`]: the one table matching the requests we send (to a
//!   language server, an editor, an IDE) to their answers.
//!
//! ```
//! use std::sync::Arc;
//!
//! use ide_mcp_lsp::framing::{Frame, MessageReader};
//! use ide_mcp_lsp::{ClientVerdict, LspWorkspace, Observer};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! // What an editor writes to its language server.
//! let open = r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///ws/a%20b.c","languageId":"c","version":0,"text":"int x;\n"}}}"#;
//! let change = r#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///ws/a%20b.c","version":1},"contentChanges":[{"range":{"start":{"line":0,"character":4},"end":{"line":0,"character":5}},"text":"y"}]}}"#;
//! let wire = format!("Content-Length: {}\r\n\r\n{open}content-length: {}\r\n\r\n{change}", open.len(), change.len());
//!
//! let ws = Arc::new(LspWorkspace::new());
//! let (mut observer, _toward_editor) = Observer::new(Arc::clone(&ws));
//! let mut reader = MessageReader::new(wire.as_bytes());
//! let mut forwarded = Vec::new();
//! while let Some(frame) = reader.next().await? {
//!     if let Frame::Message(message) = &frame {
//!         assert_eq!(observer.from_client(message.body()), ClientVerdict::Forward);
//!     }
//!     forwarded.extend_from_slice(frame.as_bytes()); // byte for byte
//! }
//! assert_eq!(forwarded, wire.as_bytes());
//!
//! // The tools now see the document, edited and unsaved.
//! let cx = ws.editor_ports().build();
//! let dirty = ide_mcp_tools::check_document_dirty(&cx, "/ws/a b.c".into());
//! assert!(dirty.is_dirty);
//! let text = cx.buffers().unwrap().handle_for_path("/ws/a b.c".as_ref()).unwrap();
//! assert_eq!(text.snapshot().text.to_string(), "int y;\n");
//! # Ok(())
//! # }
//! ```
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::dbg_macro))]

#[cfg(unix)]
pub mod background;
pub mod client;
pub mod framing;
#[cfg(unix)]
pub mod host;
mod lenient_diagnostics;
mod live;
pub mod mirror;
pub mod observer;
pub mod outgoing;
#[cfg(unix)]
pub mod proxy;
#[cfg(unix)]
pub mod signals;
pub mod sync;
pub mod workspace;

pub use observer::{ClientVerdict, Observer, ObserverOptions, Replayed, ServerVerdict};
pub use workspace::{EditorInfo, LspWorkspace, StreamId, WorkspaceEvent};
