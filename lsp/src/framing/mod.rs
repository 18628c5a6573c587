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
mod message;
mod reader;

#[cfg(test)]
mod tests;

pub use message::{DEFAULT_MAX_CONTENT_LENGTH, Frame, MAX_HEADER_BYTES, Message, READ_CHUNK};
pub use reader::{MessageReader, PIECE, Pieces, Streamed, SyncMessageReader};
