//! The contract between the protocol core and a transport: a [`Wire`] moves
//! whole messages in and out, and [`Server::serve_wire`](crate::Server::serve_wire)
//! drives one MCP session over it.
//!
//! A transport of your own (a named pipe, an HTTP stream, a test harness)
//! implements [`Wire`] and hands it to
//! [`Server::serve_wire`](crate::Server::serve_wire); it gets the
//! same session, in-flight limits, cancellation, notifications and shutdown
//! behaviour as the built-in WebSocket and stdio transports.
//!
//! ```
//! use std::io;
//! use ide_mcp_runtime::transport::wire::{Limits, Outbox, Recv, Wire};
//!
//! /// Serves the messages of a list, collecting the answers.
//! struct Script {
//!     input: Vec<&'static str>,
//!     current: &'static str,
//!     answers: Vec<String>,
//! }
//!
//! impl Wire for Script {
//!     const TERMINATOR: Option<u8> = None;
//!     const DRAIN_ON_EOF: bool = true;
//!     async fn recv(&mut self) -> Recv {
//!         if self.input.is_empty() {
//!             return Recv::Closed;
//!         }
//!         self.current = self.input.remove(0);
//!         Recv::Message
//!     }
//!     fn message(&self) -> &[u8] {
//!         self.current.as_bytes()
//!     }
//!     async fn send(&mut self, out: &Outbox) -> io::Result<()> {
//!         for message in out.messages() {
//!             self.answers.push(String::from_utf8_lossy(message).into_owned());
//!         }
//!         Ok(())
//!     }
//!     async fn close(&mut self) {}
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = ide_mcp_runtime::Server::builder("editor", "1.0")
//!     .registry(std::sync::Arc::new(ide_mcp_runtime::Registry::from_tools([]).unwrap()))
//!     .build()
//!     .unwrap();
//! let mut wire = Script {
//!     input: vec![r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#],
//!     current: "",
//!     answers: Vec::new(),
//! };
//! server.serve_wire(&mut wire, Limits::default(), None).await.unwrap();
//! assert_eq!(wire.answers, [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]);
//! # }
//! ```

use std::future::Future;
use std::io;
use std::time::Duration;

use crate::peer::Peer;

/// The largest message accepted: a WebSocket message or frame, or a stdio line.
///
/// 16 MiB: requests are small (tool names and arguments such as a path or
/// URI), but a host's own tools may take whole file contents (an `openDiff`
/// carries the new text of a file), and generated files of several MiB exist.
/// The limit bounds what one client can make the server buffer; it is also
/// tungstenite's default frame limit. A larger WebSocket message is refused
/// with close code 1009 (message too big); a longer stdio line with -32600.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// What a transport's read produced.
#[derive(Debug)]
pub enum Recv {
    /// A message is ready in [`Wire::message`].
    Message,
    /// A message was refused by the transport (e.g. a line over the size
    /// limit); the session answers with this JSON-RPC error code and message
    /// (id `null`) and carries on.
    Refused(i32, String),
    /// Nothing for the session (a control frame, an empty line).
    Skip,
    /// The connection is over (EOF, close, or a fatal protocol error the
    /// transport already answered).
    Closed,
    /// Reading failed.
    Failed(io::Error),
}

/// A message transport: WebSocket, lines, in-memory, or one of yours.
///
/// The connection loop calls [`recv`](Self::recv) and
/// [`send`](Self::send) from one task, never both at once; `recv` may be
/// dropped before it completes (when an answer or a notification is ready
/// first) and must lose nothing then.
pub trait Wire: Send {
    /// Appended after each outgoing message, for line-delimited transports.
    const TERMINATOR: Option<u8>;
    /// Whether the end of input still lets running calls answer (a pipe whose
    /// writer closed may still be written to; a closed socket may not).
    const DRAIN_ON_EOF: bool;
    /// Waits for the next incoming message. Must be cancel-safe.
    fn recv(&mut self) -> impl Future<Output = Recv> + Send;
    /// The message the last [`Recv::Message`] announced.
    fn message(&self) -> &[u8];
    /// Writes every message of `out` and flushes once.
    fn send(&mut self, out: &Outbox) -> impl Future<Output = io::Result<()>> + Send;
    /// Closes the connection because the server shuts down.
    fn close(&mut self) -> impl Future<Output = ()> + Send;
    /// Where the calls of the message [`message`](Self::message) holds send
    /// their progress and notifications, when the transport answers each
    /// request on its own (a 2025-11-25 session over Streamable HTTP streams
    /// a call's progress on the call's POST). `None`, the default: to the
    /// connection, whose loop sends them like answers.
    fn peer(&self) -> Option<&Peer> {
        None
    }
}

impl<W: Wire> Wire for &mut W {
    const TERMINATOR: Option<u8> = W::TERMINATOR;
    const DRAIN_ON_EOF: bool = W::DRAIN_ON_EOF;
    fn recv(&mut self) -> impl Future<Output = Recv> + Send {
        (**self).recv()
    }
    fn message(&self) -> &[u8] {
        (**self).message()
    }
    fn send(&mut self, out: &Outbox) -> impl Future<Output = io::Result<()>> + Send {
        (**self).send(out)
    }
    fn close(&mut self) -> impl Future<Output = ()> + Send {
        (**self).close()
    }
    fn peer(&self) -> Option<&Peer> {
        (**self).peer()
    }
}

/// An output buffer grown beyond this is shrunk back once [`SHRINK_AFTER`]
/// flushes in a row used less than a quarter of it: one huge result must not
/// pin its memory for the connection's life, but a client that keeps asking
/// for large results (`getDiagnostics` over a big workspace) must not pay for
/// growing the buffer again, page faults and copies, on every answer.
const KEEP_BUFFER: usize = 1 << 20;

/// See [`KEEP_BUFFER`].
const SHRINK_AFTER: u32 = 32;

/// Outgoing messages, each a complete JSON-RPC message in UTF-8, waiting to
/// be sent by [`Wire::send`].
#[derive(Debug, Default)]
pub struct Outbox {
    pub(crate) buf: Vec<u8>,
    /// `(start, end)` of each message in `buf`.
    spans: Vec<(usize, usize)>,
    /// Appended after each message (the newline of line-delimited transports).
    terminator: Option<u8>,
    /// Flushes in a row that used less than a quarter of the buffer.
    small_flushes: u32,
}

impl Outbox {
    pub(crate) fn new(terminator: Option<u8>) -> Self {
        Self {
            terminator,
            ..Self::default()
        }
    }

    /// Runs `write` on the buffer and, when it wrote a message, records it.
    pub(crate) fn push(&mut self, write: impl FnOnce(&mut Vec<u8>) -> bool) {
        let start = self.buf.len();
        if write(&mut self.buf) {
            self.record(start);
        } else {
            self.buf.truncate(start);
        }
    }

    /// Records the message written to the buffer from `start` on.
    pub(crate) fn record(&mut self, start: usize) {
        self.spans.push((start, self.buf.len()));
        if let Some(t) = self.terminator {
            self.buf.push(t);
        }
    }

    /// Each message's bytes, without the terminator.
    pub fn messages(&self) -> impl ExactSizeIterator<Item = &[u8]> {
        self.spans.iter().map(|&(s, e)| &self.buf[s..e])
    }

    /// Every message, each followed by the terminator when the wire has one:
    /// what a line-delimited transport writes in one go.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Whether there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    pub(crate) fn clear(&mut self) {
        if self.buf.len() > self.buf.capacity() / 4 {
            self.small_flushes = 0;
        } else {
            self.small_flushes = self.small_flushes.saturating_add(1);
        }
        self.buf.clear();
        self.spans.clear();
        if self.buf.capacity() > KEEP_BUFFER && self.small_flushes >= SHRINK_AFTER {
            self.buf.shrink_to(KEEP_BUFFER / 16);
            self.small_flushes = 0;
        }
    }
}

/// Limits of one connection.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Limits {
    /// How long a write may wait on a client that does not read before the
    /// connection is dropped.
    pub write_timeout: Duration,
}

impl Limits {
    /// Limits with this write timeout.
    pub fn with_write_timeout(write_timeout: Duration) -> Self {
        Self { write_timeout }
    }
}

impl Default for Limits {
    /// A write timeout of 30 s.
    fn default() -> Self {
        Self::with_write_timeout(Duration::from_secs(30))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flush_of(out: &mut Outbox, bytes: usize) {
        out.push(|buf| {
            buf.resize(buf.len() + bytes, b' ');
            true
        });
        out.clear();
    }

    #[test]
    fn a_large_buffer_is_kept_while_large_answers_come_and_shrunk_after() {
        let mut out = Outbox::new(None);
        flush_of(&mut out, 3 << 20);
        let grown = out.buf.capacity();
        assert!(grown >= 3 << 20);
        // Large answers keep coming: the buffer is reused as it is.
        for _ in 0..100 {
            flush_of(&mut out, 2 << 20);
            assert_eq!(out.buf.capacity(), grown);
        }
        // Small ones only: kept for a while, then given back.
        for _ in 1..SHRINK_AFTER {
            flush_of(&mut out, 100);
            assert_eq!(out.buf.capacity(), grown);
        }
        flush_of(&mut out, 100);
        assert!(out.buf.capacity() <= KEEP_BUFFER, "{}", out.buf.capacity());
    }

    #[test]
    fn messages_and_bytes_with_a_terminator() {
        let mut out = Outbox::new(Some(b'\n'));
        out.push(|buf| {
            buf.extend_from_slice(b"{}");
            true
        });
        out.push(|buf| {
            buf.extend_from_slice(b"discarded");
            false
        });
        out.push(|buf| {
            buf.extend_from_slice(b"[]");
            true
        });
        assert_eq!(out.messages().collect::<Vec<_>>(), [b"{}", b"[]"]);
        assert_eq!(out.bytes(), b"{}\n[]\n");
        assert!(!out.is_empty());
    }
}
