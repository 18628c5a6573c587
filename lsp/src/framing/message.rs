//! A message's exact bytes, the frames a reader hands out, and the limits.

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
    /// [module documentation](super) for when and how the reader resumes).
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
