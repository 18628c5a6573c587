//! LSP base-protocol framing that hands out each message's exact bytes.
//!
//! A message is a header section (`Name: value` lines, each ended by
//! `\r\n`, then an empty line) and a body of `Content-Length` bytes. The
//! readers here cut a byte stream into [`Frame`]s without re-serializing
//! anything: a [`Message`] holds the bytes exactly as they arrived, headers
//! included, so a proxy forwards `message.as_bytes()` and the other side sees
//! what the sender wrote.
//!
//! # What is accepted
//!
//! - Header names in any case (`content-length`), any other headers
//!   (`Content-Type`), lines ended by `\r\n` or a bare `\n`, spaces or tabs
//!   around a value.
//! - Reads split anywhere, and several messages in one read.
//!
//! # What cannot be framed, and resynchronization
//!
//! Bytes that do not form a message are handed out unchanged as
//! [`Frame::Unframed`], in order, so that a proxy forwards them too:
//!
//! - **A header section that is not one** (a line without `:`, a name that is
//!   not a token, no `Content-Length`, an unparsable or contradictory length,
//!   an empty line where headers should start, or more than
//!   [`MAX_HEADER_BYTES`] without an empty line): the bytes from there up to
//!   the next `Content-Length:` (matched case-insensitively, anywhere) are
//!   unframed, and framing resumes at that `Content-Length:`. While no such
//!   match is buffered, all but the last few bytes (which may be the start of
//!   one) are handed out; at end of stream, everything.
//! - **A `Content-Length` over the reader's limit**
//!   ([`DEFAULT_MAX_CONTENT_LENGTH`] unless set): the header section and then
//!   the declared number of body bytes are handed out as unframed chunks of
//!   at most [`READ_CHUNK`] bytes, never buffered whole, and framing resumes
//!   right after them.
//! - **End of stream inside a message**: the partial message is unframed.
//!
//! # Copies
//!
//! Small messages are copied once out of the read buffer. A message larger
//! than what is buffered when its header is parsed gets a buffer of its exact
//! size, and the rest of its body is read straight into it: a 50 MB `didOpen`
//! is never copied after the read. A caller that hands such a message back
//! with `recycle` once it is written out gets its buffer reused for the next
//! large message, whose pages are then already mapped.
//!
//! [`SyncMessageReader::next_frame_streaming`] does not gather a large
//! message at all: it reads it in [pieces](Pieces) of at most [`PIECE`]
//! bytes, each straight into a buffer its caller lends (and may get back to
//! lend again), so that a proxy forwards 50 MB through 1 MiB of memory that
//! stays mapped.

mod decoder;
mod reader;

#[cfg(test)]
mod tests;

pub use reader::{MessageReader, PIECE, Pieces, Streamed, SyncMessageReader};

/// The default limit of a message's `Content-Length`: larger bodies are
/// passed through as [`Frame::Unframed`] chunks, never buffered.
pub const DEFAULT_MAX_CONTENT_LENGTH: u64 = 512 * 1024 * 1024;

/// The longest header section accepted: LSP headers are two short lines.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

/// How many bytes a reader asks its source for at a time (outside bodies
/// whose length it knows), and the size of an over-limit body's chunks.
pub const READ_CHUNK: usize = 64 * 1024;

/// One LSP message: its exact bytes, headers and body.
#[derive(Clone, PartialEq, Eq)]
pub struct Message {
    bytes: Vec<u8>,
    body_start: usize,
}

impl Message {
    /// A message from its bytes and where its body starts; the readers make
    /// these after checking the header section.
    pub(crate) fn from_parts(bytes: Vec<u8>, body_start: usize) -> Self {
        debug_assert!(body_start <= bytes.len());
        Self { bytes, body_start }
    }

    /// A message with `body` and the one header LSP requires,
    /// `Content-Length: <len>\r\n\r\n`.
    pub fn from_body(body: impl AsRef<[u8]>) -> Self {
        let body = body.as_ref();
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        let mut bytes = Vec::with_capacity(header.len() + body.len());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(body);
        Self {
            bytes,
            body_start: header.len(),
        }
    }

    /// The whole message, exactly as read (or as built).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The header section, up to and including its empty line.
    pub fn headers(&self) -> &[u8] {
        &self.bytes[..self.body_start]
    }

    /// The body (the JSON-RPC content).
    pub fn body(&self) -> &[u8] {
        &self.bytes[self.body_start..]
    }

    /// The whole message's bytes, without a copy.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const SHOWN: usize = 200;
        let body = self.body();
        let shown = String::from_utf8_lossy(&body[..body.len().min(SHOWN)]);
        f.debug_struct("Message")
            .field("headers", &String::from_utf8_lossy(self.headers()))
            .field("body_len", &body.len())
            .field("body", &shown)
            .finish()
    }
}

/// What a reader hands out: a message, or bytes that are not one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete message.
    Message(Message),
    /// Bytes that cannot be framed, unchanged (see the
    /// [module documentation](self) for when and how the reader resumes).
    Unframed(Vec<u8>),
}

impl Frame {
    /// The frame's bytes, exactly as read.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Message(message) => message.as_bytes(),
            Self::Unframed(bytes) => bytes,
        }
    }
}
